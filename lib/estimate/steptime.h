/* steptime.h - internal: the step time of an LLM step, kernel by kernel
 * (steptime.c). estimate.c describes the step's work (GEMM shapes per
 * layer, attention, elementwise traffic, kernel counts, optimizer); the
 * constants come from data/estimate/steptime.json (fitted on
 * ../shared/groundtruth/calibration.jsonl, each says which records). */
#ifndef VRAMFIT_STEPTIME_H
#define VRAMFIT_STEPTIME_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "vramfit/estimate/estimate.h"
#include "vramfit/gpu/gpu.h"

#define VF__MAX_GEMMS 24

enum vf__attn_impl { VF__ATTN_FLASH, VF__ATTN_MEM_EFFICIENT, VF__ATTN_MATH, VF__ATTN_EAGER };

/* How a quantized frozen base reaches its GEMMs. */
enum vf__dequant { VF__DQ_NONE, VF__DQ_NF4, VF__DQ_INT8, VF__DQ_FP8 };

/* One matmul of a layer's forward: (m x k) @ (k x n), `count` of them. */
struct vf__gemm {
	double m, k, n, count;
	bool weight_grad;      /* backward also computes the weight's gradient */
	bool input_grad;       /* backward computes the input's gradient */
	bool qbase;            /* a quantized frozen base weight (int8: LLM.int8 rate) */
	bool fp32;             /* an fp32 GEMM in a 16-bit step (peft's fp32 adapters without
				* autocast): the GPU's fp32 rate (struct vf__step_work.tf32_fp32) */
};

/* One kind of layer (decoder layer; T5 has encoder and decoder kinds). */
struct vf__layer_work {
	double count;          /* layers of this kind */
	int ngemm;
	struct vf__gemm gemm[VF__MAX_GEMMS];
	double attn_flops;     /* forward attention matmul FLOPs (causal halving applied) */
	/* what flash / mem-efficient attention's share depends on
	 * (steptime.json attention_efficiency by_length): the keys each query
	 * attends over, the head dimension and the causal mask (0: unknown,
	 * the generation's one share) */
	double attn_seq, attn_head_dim;
	bool attn_causal;
	double score_elems;    /* eager/math: batch x heads x q x k score elements */
	double score_passes;   /* fp32 passes over them: softmax 3, + position bias 2,
	                        * + dropout on the probabilities 2 */
	double elem_bytes;     /* forward bytes read + written by memory-bound kernels */
	double elem_bwd_bytes; /* the backward's (0: twice the forward's) */
	/* bytes of the streaming kernels counted op by op from the code that
	 * runs them (peft's adapter casts, scale and add; bitsandbytes' casts
	 * on the fp32 stream): each one read and one write, at the device-copy
	 * share of the bandwidth, not the share fitted over elem_bytes */
	double stream_bytes, stream_bwd_bytes;
	double kernels;        /* forward kernel launches */
	/* MoE expert loop (transformers eager): experts visited per layer,
	 * each with its own small GEMMs (in gemm[], count = experts) and a
	 * host synchronisation (torch.where) */
	double experts;
	double expert_kernels; /* launches per expert */
	double expert_bwd_bytes; /* backward bytes per expert beyond its GEMMs: indexing's
	                          * gradient is a zero-filled full-size tensor, then added up */
	double moe_share;      /* share of the layers of this kind that are MoE layers (the
	                        * loop's per-layer synchronisation: expert_hit's nonzero) */
	double expert_fp32;    /* 1 when the experts' weights are fp32 under autocast: each
	                        * expert's slices cast again (moe_loop's amp_casts_per_expert) */
	/* quantized base: bytes read (packed weight, scales) + written (bf16)
	 * by dequantizing the layer's linears once, and their kernels */
	double dequant_bytes;
	double dequant_kernels;
	/* tensors autograd saves for the backward per layer (each linear's
	 * input and weight, norms, activations, attention, dropout masks):
	 * under non-reentrant checkpointing each passes through the pack
	 * hook in the forward, the recompute's pack hook and the unpack hook */
	double saved_tensors;
};

struct vf__step_work {
	bool train, ckpt;
	double recompute;      /* with ckpt: share of the layers' forward run again in the
	                        * backward (every:N: floor(L / N) / L; 0 is read as all);
	                        * recompute_op: share of the layers' GEMM time instead */
	bool ckpt_reentrant;   /* the reentrant variant: no saved-tensor hooks, the region's work */
	bool recompute_op;     /* op-level selective checkpointing: attention kept, the
	                        * memory-bound ops all recomputed, GEMMs by `recompute` */
	double micro;          /* micro-batches per optimizer step */
	enum vf__attn_impl attn;
	int nkinds;
	struct vf__layer_work kind[2];
	struct vf__gemm head;  /* lm_head */
	double loss_bytes;     /* logits traffic of the loss (forward + backward) */
	double opt_bytes;      /* optimizer state traffic */
	double opt_tensors;    /* trainable tensors */
	double opt_vectors;    /* of those, the 1-D ones (norms): Adafactor does not factor them */
	double opt_elems;      /* elements of the tensors this rank steps (foreach chunks) */
	int opt;               /* enum vf_optimizer of the GPU's step (VF_OPT_NONE: on the host) */
	int opt_impl;          /* enum vf_optimizer_impl */
	double rate_tflops;    /* dense rate for the compute dtype */
	int cuda_core;         /* GEMMs on the CUDA cores: 1 fp32 without TF32, 2 emulated bf16 */
	bool tf32;             /* fp32 GEMMs on the TF32 tensor cores (--tf32): rate_tflops is the
				* TF32 rate; the attention stays 3xTF32 */
	bool tf32_fp32;        /* the fp32 GEMMs of a 16-bit step (vf__gemm.fp32) on the TF32
				* tensor cores (--tf32); else IEEE SGEMM on the CUDA cores */
	enum vf__dequant dequant; /* the base's quantisation (dequantized in forward and backward) */
	bool compile;          /* torch.compile: elementwise chains fused (factors in the data) */
	bool grad_scaler;      /* fp16 autocast: GradScaler unscale + inf check + sync */
	int grad_clip;         /* enum vf_grad_clip: clip_grad_norm_ before the step */
	double grad_bytes;     /* gradients of one optimizer step (the scaler's passes) */
	double offload_bytes;  /* activation offload: saved bytes copied out and back per micro-batch */
	double paged_bytes;    /* paged optimizer: state bytes beyond the card, migrated per step */
	/* CPU offload (--offload): bytes over PCIe beside the forward and
	 * beside the backward of each micro-batch (hidden behind up to
	 * cpu_offload_overlap of that pass), bytes copied after the host's
	 * optimizer step (exposed), and the host optimizer's memory traffic */
	double cpu_fwd_bytes, cpu_bwd_bytes, cpu_after_bytes, host_opt_bytes;
};

struct vf__steptime_out {
	double seconds;        /* one optimizer step */
	double opt_s;          /* the optimizer step's share */
	double utilisation;    /* GEMM FLOPs executed / (seconds x dense rate) */
	struct vf_step_parts parts; /* seconds as its parts (comm_* left 0) */
};

/* The object `section` ("constants", "communication") of
 * data/estimate/steptime.json, read once for the process (NULL when the
 * file or the section could not be read: vf_estimate_constants_fallback
 * says why). Borrowed; valid for the process. */
const cJSON *vf__steptime_data(const char *section);

/* Host <-> device copy bandwidth of the GPU's PCIe link, bytes/s (pinned
 * copies: PCIe 3.0 / 4.0 / 5.0 from the catalog's interconnect text, SXM
 * boards by generation). */
/* llama.cpp's one-token decode: the device seconds per decoder layer its
 * kernels take beyond their work (kernels per layer x the per-kernel time,
 * replayed as a CUDA graph or launched one by one). */
double vf__steptime_llamacpp_layer_s(bool quantized, bool cuda_graphs);

/* llama.cpp builds before graph reuse (PR #14482, July 2025): the host
 * seconds per token of rebuilding, splitting and allocating the ggml graph
 * of `layers` decoder layers before its first kernel runs (steptime.json
 * llamacpp_decode graph_build_per_layer_s x the GPU's host_speed). */
double vf__steptime_llamacpp_graph_build_s(const struct vf_gpu_spec *gpu, int64_t layers);

/* vLLM's one-step decode (CUDA graphs): the device seconds per decoder
 * layer its kernels take beyond their work. */
double vf__steptime_vllm_layer_s(void);

/* vLLM V1's host work of one decode step of `running` sequences
 * (scheduler, input preparation, graph launch, sampler, update_from_output;
 * steptime.json vllm_decode host_step_s + host_per_sequence_s), scaled
 * by the host's single-thread speed for the GPU's kind (host_speed). */
double vf__steptime_vllm_host_s(const struct vf_gpu_spec *gpu, int64_t running);

/* llama.cpp over several GPUs: one cross-device copy of a small tensor
 * and the wait on it (a layer split's hop, a row split's mat-vec). */
double vf__steptime_llamacpp_sync_s(void);

double vf__steptime_host_bps(const struct vf_gpu_spec *gpu);

/* Dense TF32 tensor rate / dense bf16 tensor rate (steptime.json
 * fp32_matmul.tf32_rate). */
double vf__steptime_tf32_rate(void);

/* The GEMM efficiency of the GPU's generation relative to hopper's (the
 * fitted one): estimators fitted on the H200 scale their utilisation by it. */
double vf__steptime_gemm_ratio(const struct vf_gpu_spec *gpu);

/* What a serving engine's decode step runs at: the datasheet bandwidth x
 * the generation's device-copy share (bandwidth_efficiency's "kernel":
 * fused GEMV kernels stream the weights like a copy), the dense bf16 rate
 * x the GEMM efficiency (-1: no rate) and the host time of one eager
 * kernel launch. */
void vf__steptime_decode_rates(const struct vf_gpu_spec *gpu, double *stream_bps,
			       double *gemm_flops, double *launch_s);

/* Flash attention's share at `seq` keys per query, head dimension
 * `head_dim` and the mask, from one attention_efficiency entry of
 * steptime.json (its by_length curves; `share` without them or without a
 * length), as the step time reads the shipped file's; why (size bytes)
 * says which curve was not used and why, else "". For the tests and the
 * fuzz target. */
double vf__steptime_attn_share(const cJSON *entry, double share, double seq, double head_dim,
			       bool causal, char *why, size_t size);

/* The GPU is a GeForce card (fp32-accumulate rates, no peer-to-peer). */
bool vf__steptime_geforce(const struct vf_gpu_spec *gpu);

/* Time the step. Fills *out; out->seconds < 0 when the GPU has no rate. */
void vf__steptime(const struct vf__step_work *w, const struct vf_gpu_spec *gpu,
		  struct vf__steptime_out *out);

/* One layer kind's device seconds per direction (forward, backward), by
 * part, and its GEMM FLOPs per direction. */
struct vf__kind_dir {
	double gemm, attn, elem, dq, moe, host, moe_host;
};
struct vf__kind_times {
	struct vf__kind_dir f, b;
	double flops_f, flops_b;
	/* host seconds per layer when it is checkpointed (non-reentrant,
	 * torch.utils.checkpoint; steptime.json "checkpoint"): the pack hooks
	 * of the forward, the recompute's pack hooks and the region's own work
	 * (frame, contexts, RNG state stash and restore, early stop), the
	 * unpack hooks of the backward; 0 under torch.compile (traced) */
	double ckpt_f, ckpt_r, ckpt_b;
};

/* vf__steptime for a caller that keeps the layer kinds' times (estimate.c's
 * search context): _kinds times the step as vf__steptime does and also
 * gives the layer kinds' times, which read w->kind[], w->train, w->attn,
 * w->compile, w->dequant, w->rate_tflops and the GPU only (all 0 when the
 * GPU has no rate); _with times a step from such kinds and the rest of w
 * (of w->kind[] only the counts). Each answers vf__steptime's doubles. */
struct vf__steptime_hw;
void vf__steptime_kinds(const struct vf__step_work *w, const struct vf_gpu_spec *gpu,
			const struct vf__steptime_hw *hw, struct vf__kind_times k[2],
			struct vf__steptime_out *out);
void vf__steptime_with(const struct vf__step_work *w, const struct vf_gpu_spec *gpu,
		       const struct vf__steptime_hw *hw, const struct vf__kind_times k[2],
		       struct vf__steptime_out *out);

/* The GPU's row of the per-generation tables: its generation and whether
 * it is a GeForce card (its generation and name texts alone). */
struct vf__gpu_class {
	int gen, gf;
};
void vf__steptime_class(const struct vf_gpu_spec *gpu, struct vf__gpu_class *c);

/* The GPU's rates at a step's compute rate (w->rate_tflops, the only
 * field of w read), as vf__steptime derives them on each call; a caller
 * that keeps them (estimate.c's search context: one GPU, a few rates)
 * passes them to _kinds and _with, which then neither classify the GPU
 * nor derive its rates again. Its contents are steptime.c's. */
struct vf__steptime_hw {
	double v[16];
};
void vf__steptime_hw(const struct vf__step_work *w, const struct vf_gpu_spec *gpu,
		     const struct vf__gpu_class *c, struct vf__steptime_hw *out);

/* The optimizer step's kernels (optstep.c), from the optimizers' code. */
struct vf__opt_kernels {
	double passes;         /* element passes (reads + writes) over the stepped tensors */
	double vector_passes;  /* the same for 1-D tensors where a per-tensor loop differs */
	int foreach[5];        /* foreach (multi_tensor_apply) ops, by depth (tensor lists) 1-5 */
	int step_adds;         /* foreach ops over the GPU's one-element step counters (fused) */
	double per_tensor;     /* kernels per 2-D tensor from a per-tensor Python loop */
	double per_vector;     /* kernels per 1-D tensor from that loop */
};
void vf__opt_kernels(int optimizer, int impl, struct vf__opt_kernels *k);
double vf__foreach_launches(int depth, double tensors, double elems);

#endif
