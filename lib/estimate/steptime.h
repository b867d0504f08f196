/* steptime.h - internal: the step time of an LLM step, kernel by kernel
 * (steptime.c). estimate.c describes the step's work (GEMM shapes per
 * layer, attention, elementwise traffic, kernel counts, optimizer); the
 * constants come from data/estimate/steptime.json (fitted on
 * ../shared/groundtruth/calibration.jsonl, each says which records). */
#ifndef VRAMFIT_STEPTIME_H
#define VRAMFIT_STEPTIME_H

#include <stdbool.h>

#include "vramfit/gpu/gpu.h"

#define VF__MAX_GEMMS 24

enum vf__attn_impl { VF__ATTN_FLASH, VF__ATTN_MEM_EFFICIENT, VF__ATTN_MATH, VF__ATTN_EAGER };

/* One matmul of a layer's forward: (m x k) @ (k x n), `count` of them. */
struct vf__gemm {
	double m, k, n, count;
	bool weight_grad;      /* backward also computes the weight's gradient */
	bool input_grad;       /* backward computes the input's gradient */
};

/* One kind of layer (decoder layer; T5 has encoder and decoder kinds). */
struct vf__layer_work {
	double count;          /* layers of this kind */
	int ngemm;
	struct vf__gemm gemm[VF__MAX_GEMMS];
	double attn_flops;     /* forward attention matmul FLOPs (causal halving applied) */
	double score_elems;    /* eager/math: batch x heads x q x k score elements */
	double score_passes;   /* fp32 passes over them: softmax 3, + position bias 2,
	                        * + dropout on the probabilities 2 */
	double elem_bytes;     /* forward bytes read + written by memory-bound kernels */
	double kernels;        /* forward kernel launches */
	/* MoE expert loop (transformers eager): experts visited per layer,
	 * each with its own small GEMMs (in gemm[], count = experts) and a
	 * host synchronisation (torch.where) */
	double experts;
	double expert_kernels; /* launches per expert */
};

struct vf__step_work {
	bool train, ckpt;
	double micro;          /* micro-batches per optimizer step */
	enum vf__attn_impl attn;
	int nkinds;
	struct vf__layer_work kind[2];
	struct vf__gemm head;  /* lm_head */
	double loss_bytes;     /* logits traffic of the loss (forward + backward) */
	double opt_bytes;      /* optimizer state traffic */
	double opt_tensors;    /* trainable tensors */
	bool opt_per_tensor;   /* for-loop / per-tensor optimizers (else foreach/fused) */
	double rate_tflops;    /* dense rate for the compute dtype */
};

struct vf__steptime_out {
	double seconds;        /* one optimizer step */
	double opt_s;          /* the optimizer step's share */
	double utilisation;    /* GEMM FLOPs executed / (seconds x dense rate) */
};

/* The constants of data/estimate/steptime.json (loaded once). */
struct vf__steptime_k {
	double gemm_eff[8];    /* by generation index (steptime.c) */
	double gemm_tile;      /* output elements (m x n) at which a GEMM reaches half its efficiency */
	double attn_eff;       /* flash / mem-efficient attention share of the dense rate */
	double bw_eff;         /* achieved share of the memory bandwidth */
	double launch_s;       /* host time per kernel launch (PyTorch eager dispatch) */
	double kernel_gpu_s;   /* device time per kernel beyond its work (launch latency, tail) */
	double step_s;         /* per step: Python, zero_grad, loss scalar, optimizer dispatch */
	double sync_s;         /* one host-device synchronisation */
	double bwd_kernels;    /* backward kernels per forward kernel */
	bool loaded;
};

/* Time the step. Fills *out; out->seconds < 0 when the GPU has no rate. */
void vf__steptime(const struct vf__step_work *w, const struct vf_gpu_spec *gpu,
		  struct vf__steptime_out *out);

#endif
