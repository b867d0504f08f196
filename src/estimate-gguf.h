/* estimate-gguf.h - `vramfit estimate MODEL.gguf`: inference as llama.cpp
 * runs it (estimate/llamacpp.h), per GPU: fits or not. */
#ifndef VRAMFIT_ESTIMATE_GGUF_H
#define VRAMFIT_ESTIMATE_GGUF_H

#include <stdbool.h>
#include <stdint.h>

#include "vramfit/estimate/setup.h"
#include "vramfit/model/model.h"

struct gguf_args {
	const char *const *gpus; /* --gpu specs */
	int ngpus;
	int64_t ctx;             /* --ctx; 0: 4096 */
	int64_t n_gpu_layers;    /* --n-gpu-layers; -1 all */
	const char *cache_k, *cache_v; /* --cache-type-k/v (f16, q8_0, q4_0); NULL: f16 */
	bool json;
};

/* Estimate and print; s is the setup as given (only --mode and
 * --context-mib apply; the caller refuses the options that do not).
 * Returns the exit code. */
int vf_cli_estimate_gguf(const struct vf_model *m, const struct vf_setup *s,
			 const struct gguf_args *a);

#endif
