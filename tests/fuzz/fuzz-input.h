/* fuzz-input.h - the preambles the fuzz targets share: the input as a C
 * string cut to a buffer (the command-line and --gpu targets), the input
 * as a config.json's JSON (the config, estimate and vision-config
 * targets), and the catalog-less 24 GiB card the split and inference
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

/* The input as JSON read under the name a config.json's errors carry;
 * NULL when it is not JSON. Caller owns; cJSON_Delete(). */
static inline cJSON *fuzz_config_json(const uint8_t *data, size_t size)
{
	cJSON *cfg = NULL;
	struct vf_error err = {0};
	if (vf_json_parse((const char *)data, size, "fuzz/config.json", &cfg, &err) != VF_OK)
		return NULL;
	return cfg;
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
