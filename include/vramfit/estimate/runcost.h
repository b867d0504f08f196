/* runcost.h - a whole run's time and cost from one step's estimate, and the
 * model-FLOPs utilisation (MFU) a published run implies.
 *
 *  - steps from --tokens or --steps and the global tokens per step; hours;
 *    dollars = $/GPU-hour x GPUs x hours;
 *  - data-parallel communication instead of perfect scaling: ring
 *    all-reduce of the gradients (DDP), reduce-scatter + all-gather
 *    (ZeRO-1/2), per-micro-step parameter all-gathers (ZeRO-3/FSDP), over
 *    the catalog's interconnect bandwidth (NVLink or PCIe), partly hidden
 *    behind the backward pass (the overlap assumption is stated in
 *    lib/estimate/runcost.c and in vf_runcost_assumptions());
 *  - MFU = model FLOPs / (GPUs x dense peak x seconds), and a verdict:
 *    above ~70% or below ~5% is not a real dense training run.
 *
 * Everything here is arithmetic: no allocation, no I/O. */
#ifndef VRAMFIT_RUNCOST_H
#define VRAMFIT_RUNCOST_H

#include <stdbool.h>
#include <stdint.h>

#include "vramfit/base/error.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/estimate/setup.h"

/* Fraction of the catalog interconnect figure that NCCL collectives reach
 * as bus bandwidth. nccl-tests all_reduce_perf on DGX A100 (600 GB/s
 * NVLink, the catalog figure) measures about 230 GB/s bus bandwidth
 * (0.38); DGX H100 (900 GB/s) about 450 GB/s (0.5). 0.4 is used for both
 * NVLink and PCIe. */
#define VF_RUNCOST_BUS_EFFICIENCY 0.4
/* Fraction of the overlap window (backward pass for DDP/ZeRO-1/2, the whole
 * micro-step for ZeRO-3/FSDP with prefetch) during which communication
 * runs hidden behind compute. PyTorch DDP buckets gradients (25 MiB) and
 * all-reduces each bucket as soon as it is ready; kernels still contend
 * for SMs and memory bandwidth, so not all of the window is usable. */
#define VF_RUNCOST_OVERLAP 0.8
/* DDP's default gradient bucket (bucket_cap_mb=25): the last bucket's
 * all-reduce starts after the backward pass and is never hidden. */
#define VF_RUNCOST_DDP_BUCKET_BYTES (25.0 * 1024 * 1024)

/* Data-parallel communication of one optimizer step. */
struct vf_comm_in {
	enum vf_shard shard;
	int gpus;
	int64_t grad_accum;     /* micro-steps per optimizer step */
	double grad_bytes;      /* gradients reduced: trainable params x grad dtype bytes */
	double param_bytes;     /* all parameters in their stored dtype (FSDP/ZeRO-3 gathers) */
	double updated_bytes;   /* ZeRO-1/2's all-gather after the step: the parameters the
				   optimizer updates (LoRA: the adapters alone, not the frozen
				   base); <= 0: param_bytes */
	double link_gbs;        /* per-GPU interconnect GB/s (catalog); <= 0 unknown */
	double compute_seconds; /* compute of one optimizer step (all micro-steps) */
	bool grad_ckpt;         /* backward includes a recompute forward */
	/* When set: collectives as NCCL runs them on this GPU's link class
	 * (lib/estimate/nccl.c: bus bandwidth and latency per link, per-layer
	 * gathers, DDP buckets); else link_gbs x VF_RUNCOST_BUS_EFFICIENCY. */
	const struct vf_gpu_spec *gpu;
	double layers;          /* FSDP/ZeRO-3: one all-gather per layer (>= 1) */
};

struct vf_comm {
	double bytes_per_gpu;   /* sent by each GPU per optimizer step */
	double seconds;         /* at VF_RUNCOST_BUS_EFFICIENCY x link_gbs */
	double hidden_seconds;  /* overlapped with compute */
	double exposed_seconds; /* added to the step time */
	/* compute lost to NCCL's kernels while hidden_seconds overlap it:
	 * hidden x channels / SMs (gpu given; lib/estimate/nccl.c), added to
	 * the step time too; 0 without a gpu or its SM count */
	double interference_seconds;
	bool known;             /* false when the bandwidth is unknown (then 0s) */
	char link[24];          /* the link class (gpu given), "" otherwise */
};

/* Communication of one optimizer step; zero for one GPU or --shard none. */
void vf_runcost_comm(const struct vf_comm_in *in, struct vf_comm *out);

/* Bytes per gradient element and per stored parameter element for a setup:
 * amp/fp16/fp32 keep fp32 parameters and gradients (4), bf16 keeps bf16
 * (2); LoRA adapters are fp32 (peft); quantized base weights store 1
 * (int8, fp8) or 0.5 (int4, nf4) bytes. */
double vf_runcost_grad_elem_bytes(const struct vf_setup *s);
double vf_runcost_param_elem_bytes(const struct vf_setup *s);

/* One optimizer step of an estimate on gpu with the setup's data-parallel
 * communication: e->step_seconds + the exposed communication + the compute
 * NCCL's kernels take while hidden (comm may be
 * NULL; filled when not). < 0 when the estimate has no step time. */
double vf_runcost_step_seconds(const struct vf_estimate *e, const struct vf_setup *s,
			       const struct vf_gpu_spec *gpu, struct vf_comm *comm);

/* Parse a token or step count: "1e9", "22B", "500M", "3T", "2.5k". False
 * when it is not a positive count below 1e18. */
bool vf_runcost_parse_count(const char *s, double *out);

/* A whole run. Give tokens or steps (steps wins when both are > 0). */
struct vf_run_in {
	double tokens;           /* total training tokens; <= 0 when steps given */
	int64_t steps;           /* optimizer steps; <= 0 when tokens given */
	int64_t tokens_per_step; /* all GPUs: batch x seq x grad_accum x data-parallel GPUs */
	double step_seconds;     /* one optimizer step, communication included */
	int gpus;
	double price_usd_hour;   /* per GPU-hour; < 0 unknown */
};

struct vf_run {
	int64_t steps;
	double tokens;
	double seconds;
	double hours;
	double gpu_hours;
	double cost_usd;         /* < 0 unknown (no price) */
};

/* Fails (VF_EUSAGE) when neither tokens nor steps is given, or a step
 * processes no tokens or takes no time. */
vf_status vf_runcost_run(const struct vf_run_in *in, struct vf_run *out, struct vf_error *err);

/* Model FLOPs of training on `tokens` tokens:
 *   coeff x params per token   (6: every weight trained; 4: frozen weights
 *                               that gradients flow through; 2: forward only)
 * + 2 x coeff x layers x hidden x seq per token (attention scores and
 *   values, full s^2 as llm-foundry and TinyLlama count it; skipped when
 *   layers, hidden or seq is <= 0). */
double vf_runcost_flops_per_token(double params, double coeff, int64_t layers, int64_t hidden,
				  int64_t seq);

/* flops / (gpus x peak_tflops x 1e12 x seconds); < 0 when any input is
 * unknown (<= 0). */
double vf_runcost_mfu(double flops, int gpus, double peak_tflops, double seconds);
/* Seconds for flops at a given MFU; < 0 when unknown. */
double vf_runcost_seconds_at_mfu(double flops, int gpus, double peak_tflops, double mfu);
/* Tokens processed in `seconds` at a given MFU; < 0 when unknown. */
double vf_runcost_tokens_at_mfu(double mfu, int gpus, double peak_tflops, double seconds,
				double flops_per_token);

/* When a claimed run is believable (data/refs.json "policy"). */
struct vf_mfu_policy {
	double max_mfu;              /* 0.70 */
	double min_mfu;              /* 0.05: dense models */
	double tuned_floor_fraction; /* 0.5: below half of the stack's own MFU */
	double default_mfu;          /* 0.40: assumed when none is published */
};

enum vf_verdict {
	VF_VERDICT_UNKNOWN,     /* no MFU can be implied */
	VF_VERDICT_PLAUSIBLE,
	VF_VERDICT_TOO_HIGH,    /* above max_mfu */
	VF_VERDICT_TOO_LOW,     /* below min_mfu */
	VF_VERDICT_BELOW_STACK, /* below tuned_floor_fraction x the stack's published MFU */
};

void vf_mfu_policy_defaults(struct vf_mfu_policy *p);
/* expected_lo <= 0: the stack publishes no MFU. mfu < 0: unknown. */
enum vf_verdict vf_runcost_judge(double mfu, double expected_lo, const struct vf_mfu_policy *p);
const char *vf_verdict_name(enum vf_verdict v); /* "plausible", "too-high", ... */

/* The assumptions behind vf_runcost_comm and vf_runcost_run, one sentence
 * each, for the commands' "assumptions" lists. NULL-terminated; static. */
const char *const *vf_runcost_assumptions(void);

#endif
