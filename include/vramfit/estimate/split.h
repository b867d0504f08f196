/* split.h - one model across several GPUs: what each GPU holds, its memory
 * and the step time of the whole, for
 *
 *   --split layers  whole decoder layers placed on the GPUs in order, as
 *                   accelerate's device_map="auto" does (embeddings with
 *                   the first GPU, the head with the last, --max-memory as
 *                   its max_memory); one GPU works at a time (naive model
 *                   parallel, for inference and for training);
 *   --tp N          Megatron-style tensor parallelism: attention heads, KV
 *                   heads, the MLP width and the vocabulary split N ways,
 *                   norms replicated, an all-reduce after each attention
 *                   and MLP block (forward, and again in the backward);
 *                   --sequence-parallel splits what is replicated;
 *   --pp N          pipeline stages of whole layers, --micro-batches M per
 *                   step on the 1F1B schedule (stage i holds the
 *                   activations of up to N - i micro-batches) and its bubble;
 *
 * combinable with data parallelism and ZeRO/FSDP: --gpus = dp x tp x pp.
 * Built on the estimator (vf_estimate_run) of the part of the model each
 * GPU runs: a TP rank is a model with 1/N of the heads, MLP width and
 * vocabulary; a stage is a model with its layers, without the embedding or
 * the head it does not hold. lib/estimate/split.c documents each rule. */
#ifndef VRAMFIT_SPLIT_H
#define VRAMFIT_SPLIT_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/setup.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/arch.h"

/* GPUs of one model replica described one by one (tp x pp, or the layer
 * split's GPUs). */
#define VF_SPLIT_MAX_GPUS 64

/* One GPU of a model replica. */
struct vf_split_gpu {
	int index;               /* 0-based, stage-major: stage x tp + tp rank */
	int stage;               /* pipeline stage (layer split: = index) */
	int first_layer;         /* decoder layers held, first..last inclusive; */
	int last_layer;          /* last < first: none */
	bool embedding;          /* holds the token embedding */
	bool head;               /* holds the final norm and lm_head (logits) */
	int tp;                  /* holds 1/tp of each matrix */
	int in_flight;           /* micro-batches whose activations it holds (1F1B) */
	int64_t budget_bytes;    /* layer split: the weight budget it was filled under */
	int64_t send_bytes;      /* activations handed to the next GPU per micro-batch */
	double stage_seconds;    /* its compute per step (its estimate's step time) */
	struct vf_estimate est;  /* its memory by term (and its own time) */
	bool fits;
	int64_t headroom;        /* GPU memory - peak */
};

struct vf_split {
	enum vf_split_kind kind;
	int tp, pp, dp;
	int ngpus;               /* GPUs of one replica (tp x pp, or the layer split's) */
	int64_t micro_batches;   /* per step per replica (pipeline); else grad-accum */
	int limiting;            /* index of the GPU with the least headroom: the verdict */
	bool fits;               /* every GPU fits */
	int64_t weights_total;   /* sum of the GPUs' weights (one replica) */
	double compute_seconds;  /* stages (sum for a layer split; 1F1B for a pipeline) */
	double tp_comm_seconds;  /* tensor-parallel all-reduces (on the critical path) */
	double p2p_seconds;      /* activations handed between GPUs (and their gradients) */
	double bubble_seconds;   /* pipeline fill and drain: (pp - 1) x a micro-batch's stage */
	double step_seconds;     /* the whole step; < 0 unknown */
	double link_gbs;         /* one direction, GB/s, used between the GPUs */
	double network_gbs;      /* one direction, GB/s, between nodes (pipelines over 8 GPUs) */
	const char *link;        /* "NVLink 4", "PCIe 4.0 x16" (borrowed from the GPU spec) */
	struct vf_estimate total; /* the limiting GPU's memory with the whole step's time */
	struct vf_split_gpu gpu[VF_SPLIT_MAX_GPUS];
	/* A layer's weights, kept between calls for the same layer shape and
	 * numerics (the search varies the batch): zero it once before
	 * the first call (vf_split_new, static). */
	struct {
		int64_t key[12];
		double layer_weights;
	} cache;
};

/* Whether the setup splits the model (--split layers, --tp or --pp > 1). */
bool vf_split_active(const struct vf_setup *s);

/* A vf_split to pass to vf_split_run (free() it), its layer-weight cache
 * zeroed and nothing else: vf_split_run writes the rest, of the GPUs it
 * uses only. NULL without memory. (calloc zeroed all 64 GPUs' 76 KiB, 19
 * pages faulted in by each split search or estimate, issue 21.) */
struct vf_split *vf_split_new(void);

/* Split the model of `arch` as `s` says over GPUs of kind `gpu` (may be
 * NULL: no time, memory only): with --split layers over s->gpus GPUs,
 * else over s->tp x s->pp per replica (s->gpus / (tp x pp) replicas).
 * Fails (VF_EUSAGE) when heads do not divide by tp, there are fewer layers
 * than GPUs or stages, or more than VF_SPLIT_MAX_GPUS per replica. Never
 * allocates: the fit search calls it. */
vf_status vf_split_run(const struct vf_arch *arch, const struct vf_setup *s,
		       const struct vf_gpu_spec *gpu, struct vf_split *out, struct vf_error *err);

/* After vf_split_run: each GPU's allocator reserve from the caching
 * allocator replayed over what that GPU allocates (its slice of the
 * model, not the whole model), the verdict and the limiting GPU again.
 * memo (may be NULL): the replays remembered (vf_estimate_simulate_memo).
 * Allocates; fails only when the host runs out of memory. */
vf_status vf_split_simulate(const struct vf_arch *arch, const struct vf_setup *s,
			    const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
			    struct vf_replay_memo *memo, struct vf_split *sp,
			    struct vf_error *err);

/* The same without the whole model's FLOPs, MFU and parameter counts in
 * sp->total (one estimate less; the search and the fit offers use it). */
vf_status vf__split_run(const struct vf_arch *arch, const struct vf_setup *s,
			const struct vf_gpu_spec *gpu, bool whole, struct vf_split *sp,
			struct vf_error *err);

/* The largest micro-batch with which every GPU of the split peaks within
 * vram_bytes (<= 0: the GPU's memory); 0: none. */
int64_t vf_split_max_batch(const struct vf_arch *arch, const struct vf_setup *s,
			   const struct vf_gpu_spec *gpu, int64_t vram_bytes);

struct vf_search_result;
/* The split as one result of the fit search: the limiting GPU's peak
 * against (1 - margin) x its memory, the whole step's time, its cost
 * (price < 0: the catalog's). */
void vf_split_search_result(const struct vf_split *sp, const struct vf_setup *s,
			    const struct vf_gpu_spec *gpu, double margin, double price_usd_hour,
			    struct vf_search_result *out);

/* The cheapest split of the model on GPUs of kind `gpu` (fewest GPUs)
 * whose every GPU peaks at most (1 - margin) x its memory, the user's
 * other settings kept: a layer split for cards without NVLink (consumer
 * cards; --max-memory lowered on a GPU that passes the limit, as a user
 * would), tensor parallel 2, 4, 8 within an NVLink node, then pipeline
 * stages of TP=8 across nodes. At most max_gpus GPUs. Fills *out (the
 * setup) and *sp; false when nothing fits or the model does not split. */
bool vf_split_offer(const struct vf_arch *arch, const struct vf_setup *user,
		    const struct vf_gpu_spec *gpu, double margin, int max_gpus, struct vf_setup *out,
		    struct vf_split *sp);

/* "layer split over 2 GPUs, --max-memory 0=19.35", "tp 8 x pp 2": the
 * split settings in words. Returns out. */
const char *vf_split_setup_words(const struct vf_setup *s, char *out, size_t n);

/* What GPU g holds, in words: "layers 0-22, embeddings", "stage 2: layers
 * 40-59, 1/4 of each matrix". Returns out. */
const char *vf_split_describe(const struct vf_split *sp, const struct vf_split_gpu *g, char *out,
			      size_t n);

/* The "split" object of the estimate --json contract: kind, degrees,
 * limiting GPU, time parts and a per-GPU array. Caller owns. */
cJSON *vf_split_to_json(const struct vf_split *sp);

#endif
