/* fuzz-input.h - the preambles the fuzz targets share: the input as a C
 * string cut to a buffer (the command-line and --gpu targets), the input
 * as JSON (the config, estimate, vision-config and data-file targets), a
 * refusal's one-line message, and the catalog-less 24 GiB card the split and inference
 * targets run on. */
#ifndef VF_FUZZ_INPUT_H
#define VF_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vramfit/base/json.h"
#include "vramfit/gpu/gpu.h"

/* The input's first n - 1 bytes, terminated, in buf (n bytes). */
static inline char *fuzz_text(const uint8_t *data, size_t size, char *buf, size_t n)
{
	if (size >= n)
		size = n - 1;
	memcpy(buf, data, size);
	buf[size] = 0;
	return buf;
}

/* The input as JSON read under name (what its errors carry); NULL when
 * it is not JSON. Caller owns; cJSON_Delete(). */
static inline cJSON *fuzz_json(const uint8_t *data, size_t size, const char *name)
{
	cJSON *root = NULL;
	struct vf_error err = {0};
	if (vf_json_parse((const char *)data, size, name, &root, &err) != VF_OK)
		return NULL;
	return root;
}

/* The input as a config.json's JSON (fuzz_json). */
static inline cJSON *fuzz_config_json(const uint8_t *data, size_t size)
{
	return fuzz_json(data, size, "fuzz/config.json");
}

/* A refusal's message is one line, never empty: traps otherwise. */
static inline void fuzz_check_refusal(const struct vf_error *err)
{
	if (!err->msg[0] || strchr(err->msg, '\n'))
		__builtin_trap();
}

/* A 24 GiB card with no catalog entry (an RTX 4090's rates, PCIe). */
static inline void fuzz_gpu_24gib(struct vf_gpu_spec *g)
{
	memset(g, 0, sizeof *g);
	g->memory_mib = 24576;
	g->bf16_tflops = 71;
	g->bandwidth_gbs = 936;
	g->interconnect_gbs = 64;
}

#endif
