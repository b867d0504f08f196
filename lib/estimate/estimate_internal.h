/* estimate_internal.h - what estimate.c shares with dit.c (not public):
 * the allocator and step-time constants, a phase's live memory, and the
 * helpers both estimators use (vf__estimate_*, defined in estimate.c). */
#ifndef VRAMFIT_ESTIMATE_INTERNAL_H
#define VRAMFIT_ESTIMATE_INTERNAL_H

#include "vramfit/estimate/estimate.h"

/* Allocator fragmentation coefficients, fitted on the ground truth (README:
 * "How the allocator reserve was fitted"). */
#define FRAG_LAYER 2.0    /* x one layer's activations */
#define FRAG_LOGITS 0.8   /* x lm_head output not refilled by states */
#define FRAG_AUTOCAST 0.8 /* x autocast copies, optimizer-step peaks */
#define FRAG_INFER 1.75   /* x inference working set + logits */

/* Step-time constants, fitted on the 27 H200 step times of the ground truth
 * (README "vramfit estimate": coordinate search minimising median + 0.2 x
 * max relative error). */
#define U_MAX 0.61          /* matmul share of the dense bf16 rate, large GEMMs */
#define U_HIDDEN 500.0      /* hidden size at which GEMMs reach half of U_MAX's shape */
#define U_TOKENS 400.0      /* tokens per micro-batch at which they do */
#define ACT_PASSES 9.0      /* activation bytes read/written by elementwise kernels */
#define T_STEP 0.005        /* s per step: Python, loss, zero_grad, launch latency */
#define T_LAYER 0.001       /* s per layer per training step (kernel launches) */
#define T_LAYER_CKPT 0.002  /* s per checkpointed layer (recompute hooks) */
#define T_TENSOR_LOOP 1e-4  /* s per parameter tensor of a for-loop optimizer */

/* One phase's live memory (bytes), by term. */
struct live {
	double w, g, o, ot, ac, act, lg, kv;
	double frag; /* allocator: reserved but not allocated, at this phase */
};

/* The search's promise (search.c): arch and gpu, at these addresses, keep
 * their bytes while ctx is used with them, so binding them needs no
 * comparison of their bytes (vf_estimate_ctx compares them otherwise).
 * no_phases: the caller reads no phase of its training estimates
 * (vf_estimate.phases and phase_bytes are then left 0; every other field
 * is vf_estimate_run's). */
/* vf_estimate_run computed afresh, without any context (not the thread's
 * either): what the tests compare the memos with. */
void vf__estimate_run_fresh(const struct vf_arch *arch, const struct vf_setup *setup,
			    const struct vf_gpu_spec *gpu, struct vf_estimate *out);

void vf__estimate_ctx_hold(struct vf_estimate_ctx *ctx, const struct vf_arch *arch,
			   const struct vf_gpu_spec *gpu, bool no_phases);

int64_t vf__estimate_clamp64(double x);
double vf__estimate_popcount(unsigned x);
double vf__estimate_live_sum(const struct live *l);
double vf__estimate_quant_bytes(enum vf_quant q, double P);
/* Optimizer state bytes of T trainable parameters of width pb, for a model
 * of hidden size h, widest matrix dimension f and `linear` matrix elements. */
double vf__estimate_state_bytes(const struct vf_setup *su, double h, double f, double linear,
				double T, double pb, bool lora);
/* The peak phase bi's terms, every phase's breakdown (phase_bytes). */
void vf__estimate_finish_terms(struct vf_estimate *e, const struct live ph[VF_PHASE_COUNT], double reserved,
			       enum vf_phase bi);
int64_t vf__estimate_max_batch_search(int64_t (*peak)(const void *model, const struct vf_setup *,
						      const struct vf_gpu_spec *),
				      const void *model, const struct vf_setup *setup,
				      const struct vf_gpu_spec *gpu, int64_t vram_bytes, int64_t cap);

#endif
