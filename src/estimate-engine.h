/* estimate-engine.h - `vramfit estimate --mode infer --engine vllm|llamacpp`
 * in one set of terms (estimate-engine.c): the engine's memory layout as
 * rows (the text table, the --json `memory` object and the report page's
 * memory section all read these rows), what the engine holds on the
 * device (the row's peak), the GPU row's speeds as what they are (the
 * prompt's forward: TTFT and prefill tokens/s; the engine's decode) and
 * the setup in the engine's words. transformers generate() is not an
 * engine here: it keeps the estimate's own replay of the forward. */
#ifndef VF_ESTIMATE_ENGINE_H
#define VF_ESTIMATE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/estimate/infer.h"
#include "vramfit/estimate/setup.h"

#define VF_EST_ENGINE_TERMS 8

/* One row of the layout: its --json key, its words in the table, bytes. */
struct vf_est_engine_term {
	const char *key;
	char label[112];
	int64_t bytes;
};

struct vf_est_engine_layout {
	enum vf_engine engine;
	int n;
	struct vf_est_engine_term t[VF_EST_ENGINE_TERMS];
	int64_t card_bytes;      /* the device the table describes: what the engine may use there */
	int64_t peak_bytes;      /* what the engine holds on that device */
	const char *total_label; /* the table's last row: "on device" (llama.cpp), "card" (vLLM) */
	int64_t total_bytes;     /* that row's bytes */
	const char *not_counted; /* what the peak leaves out (NULL: nothing) */
};

/* vLLM and llama.cpp: an engine with a layout of its own (not transformers). */
bool vf_est_engine_own(const struct vf_infer *f);

/* The layout of f on a device of card_bytes (llama.cpp over several GPUs:
 * the fullest device's, card_bytes what that device may use). */
void vf_est_engine_layout(const struct vf_infer *f, int64_t card_bytes, struct vf_est_engine_layout *out);

/* The --json `memory` object of an engine estimate (README: "engine",
 * each term's bytes under its key, "terms" in the table's order,
 * "card_bytes", "peak_bytes"). Caller owns; cJSON_Delete(). */
cJSON *vf_est_engine_memory_json(const struct vf_est_engine_layout *l, const struct vf_infer *f);

/* Prefill tokens per second: the prompt over the time to its first token
 * (< 0 unknown). */
double vf_est_engine_prefill_tps(const struct vf_infer *f);

/* A GPU row's speeds (gpus[i]): step_seconds and tokens_per_second null
 * (no training step), ttft_seconds, prefill_tokens_per_second and
 * decode_tokens_per_second (all users), null when unknown. */
void vf_est_engine_row_json(cJSON *g, const struct vf_infer *f);

/* The top-level `time` object of an engine estimate (the first GPU's). */
cJSON *vf_est_engine_time_json(const struct vf_infer *f);

/* "infer with llama.cpp: q4_k_m GGUF, 32 of 32 layers and the output on the
 * GPU, prompt 2048 tokens, context 8192, 1 user" into out (n bytes). */
void vf_est_engine_setup_words(const struct vf_infer *f, const struct vf_infer_opts *o, const struct vf_setup *s,
			       char *out, size_t n);

#endif
