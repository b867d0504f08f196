/* search.h - the knob-space search behind `vramfit fit`: every combination
 * of micro-batch x gradient accumulation (holding the effective batch),
 * checkpointing, optimizer, base quantization, LoRA rank, precision,
 * sharding strategy and GPU count that the user allows, each evaluated
 * with the estimator's full model (vf_estimate_run) plus data-parallel
 * communication (runcost.h); the best configurations that fit a GPU with a
 * safety margin, best first.
 *
 * Pruning is exact: the estimator's allocated peak plus the CUDA context is
 * a floor under its predicted peak and never decreases with the micro-batch
 * when every other knob is held (tests/unit/test-search.c checks both and
 * that a pruned search returns what an exhaustive one does), so once that
 * floor is over the limit at micro-batch b, larger ones are not evaluated. */
#ifndef VRAMFIT_SEARCH_H
#define VRAMFIT_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/model/arch.h"
#include "vramfit/base/error.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/estimate/runcost.h"
#include "vramfit/estimate/setup.h"

/* The knobs (bit i = 1u << VF_KNOB_x); --allow / --forbid names. */
enum vf_knob {
	VF_KNOB_BATCH,     /* "batch": micro-batch x grad-accum at the same effective batch */
	VF_KNOB_GRAD_CKPT, /* "grad-ckpt" */
	VF_KNOB_OPTIMIZER, /* "optimizer": adamw, adamw8bit, adafactor, lion */
	VF_KNOB_QUANT,     /* "quant": base weights none/int8/fp8/int4/nf4 (LoRA, inference) */
	VF_KNOB_LORA_RANK, /* "lora-rank": 8..128 (LoRA; off unless allowed) */
	VF_KNOB_PRECISION, /* "precision": amp or bf16 (off unless allowed) */
	VF_KNOB_SHARD,     /* "shard": ddp, zero1, zero2, zero3 (fsdp: the same in the model) */
	VF_KNOB_GPUS,      /* "gpus": 1, 2, 4, ... up to the GPUs given */
	VF_KNOB_SPLIT,     /* "split": one model over several GPUs (split.h): a layer split on
			      cards without NVLink, tp x pp (x dp) on NVLink cards */
	VF_KNOB_COUNT
};

#define VF_KNOB_BIT(k) (1u << (k))
/* Allowed unless --forbid: everything but LoRA rank and precision, which
 * change what is trained and how, not just how it runs. */
#define VF_KNOBS_DEFAULT                                                                   \
	(VF_KNOB_BIT(VF_KNOB_BATCH) | VF_KNOB_BIT(VF_KNOB_GRAD_CKPT) |                     \
	 VF_KNOB_BIT(VF_KNOB_OPTIMIZER) | VF_KNOB_BIT(VF_KNOB_QUANT) |                     \
	 VF_KNOB_BIT(VF_KNOB_SHARD) | VF_KNOB_BIT(VF_KNOB_GPUS) | VF_KNOB_BIT(VF_KNOB_SPLIT))

const char *vf_knob_name(enum vf_knob k);
/* Parse "batch,grad-ckpt,optimizer" into knob bits. Fails (VF_EUSAGE)
 * naming an unknown knob and listing the known ones. */
vf_status vf_knobs_parse(const char *list, unsigned *bits, struct vf_error *err);

enum vf_search_sort {
	VF_SORT_TIME,    /* shortest optimizer step (same work per step), within VF_SEARCH_TIE */
	VF_SORT_COST,    /* cheapest step: step time x GPUs x $/GPU-hour */
	VF_SORT_VRAM,    /* smallest peak */
	VF_SORT_CHANGES, /* least invasive changes from the start (sharding, checkpointing,
			    micro-batch split before optimizer, quantization, precision), then time */
};

struct vf_search_opts {
	unsigned knobs;          /* VF_KNOB_BIT()s allowed to change */
	double margin;           /* fraction of each GPU's memory kept free; 0.10 */
	int max_gpus;            /* GPU counts searched: 1, 2, 4, ... <= this; also the count
				    the start uses when it does not fit more */
	enum vf_search_sort sort;
	size_t top;              /* results kept, best first (>= 1) */
	bool exhaustive;         /* evaluate every combination (no pruning) */
	double price_usd_hour;   /* per GPU-hour; < 0: the GPU's catalog price */
	int threads;             /* threads the space is spread over: 1 (the default) this
				    one; 0 the CPUs online (at most 4); the same results */
	bool near;               /* keep near misses too (vf_search.results), for a caller
				    that confirms each result by the allocator simulation */
};

void vf_search_opts_defaults(struct vf_search_opts *o);

/* Sorting by time: step times within VF_SEARCH_TIE of each other rank as
 * equal, then the fewer and milder changes from the start come first, then
 * the exact time. vf_search_time_bucket() is that rank (a log-scale bucket). */
#define VF_SEARCH_TIE 0.005
double vf_search_time_bucket(double step_seconds);

struct vf_search_result {
	struct vf_setup setup;
	bool fits;               /* peak_bytes <= (1 - margin) x GPU memory */
	int64_t peak_bytes;      /* per GPU */
	int64_t floor_bytes;     /* context + peak allocated: <= peak_bytes, monotone in batch */
	int64_t limit_bytes;     /* (1 - margin) x GPU memory */
	int64_t gpu_bytes;       /* the GPU's memory */
	enum vf_term dominant;   /* largest term at the peak */
	double compute_seconds;  /* the estimator's optimizer step; < 0 unknown */
	double comm_seconds;     /* exposed data-parallel communication */
	double step_seconds;     /* compute + exposed communication; < 0 unknown */
	int64_t tokens_per_step; /* all GPUs */
	double tokens_per_second;
	double cost_per_step;    /* $; < 0 unknown */
	int changes;             /* knobs that differ from the start */
	double invasiveness;     /* VF_SORT_CHANGES key: numerics-changing knobs weigh 3 */
};

struct vf_search {
	struct vf_search_result *results; /* owned; best first; configurations that fit, and
					     with opts.near near misses (fits false): over the
					     limit by no more than their allocator reserve
					     (floor_bytes <= limit_bytes), which the simulation
					     may fit, since its peak is never below the floor */
	size_t count;
	uint64_t space;          /* combinations in the space */
	uint64_t evaluated;      /* vf_estimate_run calls */
	uint64_t fitting;        /* combinations that fit (pruned ones counted as not) */
	uint64_t near;           /* with opts.near: near misses seen (kept when in the top) */
	double seconds;          /* wall time of the search */
	bool have_smallest;
	struct vf_search_result smallest; /* the smallest peak seen: why nothing fits */
	struct vf_search_result start;    /* the starting setup, evaluated */
	int64_t effective_batch; /* samples per optimizer step held constant */
};

/* Search the space around `start` on `gpu` (catalog entry; its memory,
 * bf16 rate, interconnect and price). start must have passed
 * vf_setup_finish. Caller owns *out; vf_search_release(). */
vf_status vf_search_run(const struct vf_arch *arch, const struct vf_setup *start,
			const struct vf_gpu_spec *gpu, const struct vf_search_opts *opts,
			struct vf_search *out, struct vf_error *err);
void vf_search_release(struct vf_search *s);

/* Evaluate one setup exactly as the search does (estimate + communication). */
void vf_search_eval(const struct vf_arch *arch, const struct vf_setup *s,
		    const struct vf_gpu_spec *gpu, double margin, double price_usd_hour,
		    struct vf_search_result *out);

/* The changes from `from` to `to`, "grad-ckpt off -> on, optimizer adamw ->
 * adamw8bit", into out (n bytes); returns the number of knobs changed. */
int vf_search_diff(const struct vf_setup *from, const struct vf_setup *to, char *out, size_t n);
/* The same as a JSON array of {"knob", "from", "to"}. Caller owns. */
cJSON *vf_search_diff_json(const struct vf_setup *from, const struct vf_setup *to);

#endif
