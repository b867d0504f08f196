/* advice.h - when a setup does not fit a GPU: the cheapest changes that
 * make it fit, found with the knob search (search.h, sorted by how
 * invasive the change is: micro-batch split, checkpointing, optimizer,
 * quantization, precision) and each confirmed by the allocator
 * simulation (vf_estimate_simulate), cheapest first. */
#ifndef VRAMFIT_ADVICE_H
#define VRAMFIT_ADVICE_H

#include <stdint.h>

#include "vramfit/base/error.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/setup.h"

#define VF_ADVICE_MAX 3

struct vf_advice_item {
	struct vf_setup setup;   /* the changed setup */
	char changes[256];       /* "grad-ckpt off -> on, batch 8 -> 4 x grad-accum 2" */
	int64_t peak_bytes;      /* simulated device peak */
	int64_t headroom_bytes;  /* GPU memory - peak */
};

struct vf_advice {
	int n;                   /* 0: no allowed change fits this GPU */
	struct vf_advice_item item[VF_ADVICE_MAX];
	uint64_t evaluated;      /* configurations the search evaluated */
};

/* The cheapest changes of `start` (one GPU count, as given) that fit gpu
 * with `margin` of its memory kept free (the rule of vramfit fit, whose
 * default is VF_ADVICE_MARGIN): the simulated peak is at most (1 - margin)
 * x the GPU's memory. memo (may be NULL): the replays remembered
 * (vf_estimate_simulate_memo). Allocates while it runs; fails only when
 * the host runs out of memory. */
#define VF_ADVICE_MARGIN 0.10
vf_status vf_advice_run(const struct vf_arch *arch, const struct vf_setup *start,
			const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
			struct vf_replay_memo *memo, double margin, struct vf_advice *out,
			struct vf_error *err);

/* vf_advice_run in two halves, for callers that run them apart (an
 * estimate's GPU rows on threads warm the memo with the candidates'
 * replays between them): the search, which the caller owns
 * (vf_search_release), and its candidates confirmed in order. Run one
 * after the other they are vf_advice_run, the same answers. */
struct vf_search;
vf_status vf_advice_search(const struct vf_arch *arch, const struct vf_setup *start,
			   const struct vf_gpu_spec *gpu, double margin, struct vf_search *s,
			   struct vf_error *err);
vf_status vf_advice_confirm(const struct vf_arch *arch, const struct vf_setup *start,
			    const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
			    struct vf_replay_memo *memo, const struct vf_search *s,
			    struct vf_advice *out, struct vf_error *err);

/* A video DiT (vf_estimate_dit): the cheapest changes of the knobs a DiT
 * trainer has (quantization int8 / fp8 / int4 of a LoRA's base, 8-bit
 * optimizer, 8-bit text encoder, optimizer offload during validation,
 * checkpointing, the micro-batch split into accumulation, a lower LoRA
 * rank, ranked after every other change) that fit gpu with `margin` kept
 * free; fewest changes first. out->n == 0: none of them fits (resolution,
 * frames and the GPU are what is left). */
void vf_advice_dit(const struct vf_dit *d, const struct vf_setup *start, const struct vf_gpu_spec *gpu,
		   double margin, struct vf_advice *out);

#endif
