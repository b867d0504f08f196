/* llamacpp.h - a GGUF model's inference memory as llama.cpp lays it out:
 * the weights as stored (gguf.h), the layers -ngl puts on the GPU (the
 * last n of n_layer + 1 slots, the output layer the last slot; the token
 * embedding always in host memory), the KV cache of the offloaded layers
 * at --ctx (padded to 256 cells) in f16, and a compute buffer (the largest
 * intermediate tensors of a ubatch of 512 with flash attention: the
 * logits or the MLP's, whichever is larger - approximate, named so). */
#ifndef VRAMFIT_LLAMACPP_H
#define VRAMFIT_LLAMACPP_H

#include <stdbool.h>
#include <stdint.h>

#include "vramfit/base/error.h"
#include "vramfit/model/arch.h"
#include "vramfit/model/gguf.h"

#define VF_LLAMACPP_CTX_PAD 256
#define VF_LLAMACPP_UBATCH 512

struct vf_llamacpp_setup {
	int64_t ctx;          /* tokens of context (-c) */
	int64_t n_gpu_layers; /* -ngl; < 0 or > n_layer: everything but the input layer */
	double k_bytes, v_bytes; /* bytes per K and V element (--cache-type-k/v); 0: f16 */
};

struct vf_llamacpp_estimate {
	int64_t layers;         /* n_layer */
	int64_t gpu_layers;     /* repeating layers on the GPU */
	bool output_on_gpu;     /* the output layer (output.weight, output_norm) */
	int64_t kv_cells;       /* ctx padded */
	uint64_t weights_gpu;   /* bytes as stored */
	uint64_t weights_cpu;
	uint64_t kv_gpu;        /* K and V at their cache types */
	uint64_t kv_cpu;
	uint64_t compute_gpu;   /* approximate */
	uint64_t total_gpu;     /* weights + KV + compute (no CUDA context) */
	bool approximate;       /* always: the compute buffer; and what `notes` names */
	char notes[256];        /* what the architecture left unknown ("sliding window: ...") */
};

/* Estimate. Fails when the architecture lacks layers, heads or the hidden
 * size (VF_ERR naming the file). */
vf_status vf_llamacpp_estimate(const struct vf_gguf *g, const struct vf_arch *a,
			       const struct vf_llamacpp_setup *s, struct vf_llamacpp_estimate *e,
			       struct vf_error *err);

#endif
