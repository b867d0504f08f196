/* steptrace.h - internal: the tensors of one training or inference step
 * as estimate.c sizes them, and the allocation sequence that replays them
 * through the caching allocator simulation (alloc.h): model load, then
 * two steady-state steps (forward, loss, backward, optimizer step,
 * zero_grad), the first creating the optimizer states. */
#ifndef VRAMFIT_STEPTRACE_H
#define VRAMFIT_STEPTRACE_H

#include <stdbool.h>

#include "vramfit/estimate/alloc.h"

#define VF__MAX_TENSORS 32

/* A list of tensor sizes (bytes). */
struct vf__tensors {
	int n;
	double bytes[VF__MAX_TENSORS];
};

enum vf__opt_temp {
	VF__OT_NONE,       /* fused, 8-bit, SGD: nothing large */
	VF__OT_FOREACH,    /* one temporary per trainable tensor, all live at once */
	VF__OT_PER_TENSOR, /* for-loop kernels: a few temporaries per tensor, freed at once */
};

struct vf__step {
	bool train;
	bool full;             /* the base weights train (their own gradients) */
	bool ckpt;             /* activation checkpointing */
	bool ac_cached;        /* autocast copies kept for the whole forward (leaf weights) */
	int layers;            /* transformer layers (encoder + decoder) */
	int micro;             /* micro-batches replayed per step (1, or 2 with accumulation) */
	struct vf__tensors layer_w;     /* one layer's parameters as stored */
	struct vf__tensors other_w;     /* embedding, final norm, untied lm_head */
	struct vf__tensors layer_train; /* one layer's trainable tensors (gradient bytes) */
	struct vf__tensors other_train; /* the other trainable tensors */
	bool tied;             /* the lm_head is the embedding: two gradient contributions */
	int nstates;           /* optimizer state tensors per trainable tensor */
	double state_ratio;    /* bytes of one state tensor per gradient byte */
	double paged_min;      /* paged optimizer: states of tensors of at least this many
	                        * gradient bytes are outside the allocator; 0 none */
	enum vf__opt_temp ot;
	double ot_ratio;       /* temporary bytes per gradient byte */
	int ot_count;          /* per-tensor temporaries (VF__OT_PER_TENSOR) */
	double ot_cap;         /* per-tensor temporaries: at most this many bytes each */
	struct vf__tensors layer_ac;    /* autocast bf16 copies of one layer's weights */
	double head_ac;        /* the lm_head's copy */
	struct vf__tensors layer_act;   /* one layer's tensors saved for backward */
	struct vf__tensors layer_tmp;   /* one layer's forward transients, in order */
	double ckpt_in;        /* a checkpointed layer's input */
	double emb_out;        /* embedding output (and its dropout mask) */
	double final_norm;     /* final norm's saved tensors and the lm_head input */
	double lm_out, lm_up, lm_lsm;   /* logits, fp32 upcast, log_softmax output */
	double lm_grad;        /* the loss backward's fp32 gradients (a chunk's when chunked) */
	double lm_extra;       /* soft-capping: tensors kept for its backward */
	bool offload;          /* activation offload: saved tensors of earlier layers on the CPU */
	bool oib;              /* optimizer in backward: step and free each gradient at once */
	bool grads_kept;       /* zero_grad(set_to_none=False): gradients zeroed, never freed */
	double grad_hidden;    /* the hidden-state gradient flowing back */
	double workspace;      /* cuBLAS workspaces */
	double dequant;        /* quantized base: one layer's dequantized weights */
	double bwd_transient;  /* in each layer's backward instead, when larger (AWQ, MoE) */
	double ddp_bucket;     /* DDP gradient buckets, in all */
	double bias;           /* T5: position bias and mask (per stack) */
	double gather;         /* FSDP/ZeRO-3: one layer's parameters gathered (0: not sharded) */
	double gather_root;    /* FSDP: the root unit gathered, forward to backward's end */
	double unit_grad;      /* FSDP/ZeRO-3: one layer's unsharded gradient */
	double unshard;        /* FSDP: the root's gradients are whole (this many times their
	                        * shards) until its post-backward reduce-scatter; 0 otherwise */
	double nosync_layer;   /* FSDP under no_sync accumulation: one layer unit's whole
	                        * gradient, kept from the first micro-batch's backward to the
	                        * synced one's reduce-scatter (0: synced every micro-batch) */
	bool head_ac_replayed; /* the lm_head's autocast copy (head_ac) is replayed: under
	                        * FSDP/ZeRO-3 only (one GPU's replay never had it) */
	double head_copy;      /* a frozen fp32 lm_head (peft's k-bit preparation, an fp32
	                        * base under LoRA): its bf16 autocast copy, made at the
	                        * head's call and freed in its backward */
	/* inference */
	double kv_layer;       /* K (and V) cache of one layer, each */
	double inf_h, inf_q, inf_kv, inf_f, inf_scores; /* working tensors (bytes) */
	double inf_logits;     /* the logits of the last forward */
	double inf_head_in;    /* final norm output */
};

/* Replay s through a new allocator configured by cfg. Caller owns *out
 * (vf_alloc_free); it holds the peaks and the segments at the peak. */
vf_status vf__step_simulate(const struct vf__step *s, const struct vf_alloc_config *cfg,
			    struct vf_alloc **out, struct vf_error *err);

/* The peaks of a replay: what vf_estimate_simulate reads from it. */
struct vf__replay_peaks {
	int64_t reserved, allocated, requested;
	int64_t retries; /* vf_alloc_retries */
	bool oom;
};

void vf__replay_peaks_of(const struct vf_alloc *a, struct vf__replay_peaks *out);

/* The peaks of vf__step_simulate(s, cfg), the same answers, from a replay
 * that records no segments (vf_alloc_peaks_only). */
vf_status vf__step_simulate_peaks(const struct vf__step *s, const struct vf_alloc_config *cfg,
				  struct vf__replay_peaks *out, struct vf_error *err);

/* A replay stopped part-way (its allocator and handles), to be forked:
 * the training steps that differ only in their optimizer (its states,
 * temporaries, and zero_grad) replay the same calls up to the first
 * optimizer step, so one replay of that prefix serves each of them. */
struct vf__replay_state;

/* Whether s's replay may be forked after its first micro-batches:
 * training, without the optimizer in the backward (whose hooks make the
 * states and temporaries inside the backward). */
bool vf__step_forks(const struct vf__step *s);
/* The part of s that its replay reads before the first optimizer step:
 * s with the optimizer's fields (nstates, state_ratio, paged_min, ot,
 * ot_ratio, ot_count, ot_cap, grads_kept) zeroed. Two forkable steps with
 * equal keys (byte for byte) make the same calls up to there. */
void vf__step_prefix_key(const struct vf__step *s, struct vf__step *key);
/* A peaks-only replay of s (vf__step_forks) through a new allocator
 * configured by cfg, up to its first optimizer step. Caller owns *out
 * (vf__replay_state_free). */
vf_status vf__step_prefix(const struct vf__step *s, const struct vf_alloc_config *cfg,
			  struct vf__replay_state **out, struct vf_error *err);
/* A copy of st that goes on as st would. Caller owns *out. */
vf_status vf__replay_state_clone(const struct vf__replay_state *st,
				 struct vf__replay_state **out, struct vf_error *err);
/* The rest of the replay of s from st, a prefix of a step whose key
 * equals s's: the peaks, as vf__step_simulate_peaks(s) gives them. st is
 * used up (free it after). */
void vf__step_finish(struct vf__replay_state *st, const struct vf__step *s,
		     struct vf__replay_peaks *out);
void vf__replay_state_free(struct vf__replay_state *st);

struct vf_replay_memo;

/* The peaks of vf__step_simulate(s, cfg), remembered in memo (replaymemo.c;
 * may be NULL: replayed each time): the same step and configuration asked
 * again of the same memo is answered without a replay. */
vf_status vf__step_peaks(const struct vf__step *s, const struct vf_alloc_config *cfg,
			 struct vf_replay_memo *memo, struct vf__replay_peaks *out,
			 struct vf_error *err);

/* The replay of s with cfg will be asked of memo (m may be NULL): when
 * others announced share its prefix (vf__step_prefix_key), the first of
 * them to run keeps a copy of the prefix and the others finish from it.
 * Costs nothing when wrong: an announced replay never asked leaves at
 * most a copy kept until the memo is freed; one not announced is
 * replayed whole. */
void vf__replay_memo_expect(struct vf_replay_memo *m, const struct vf__step *s,
			    const struct vf_alloc_config *cfg);

/* About how many allocator calls a replay of s makes (what its cost
 * grows with), from its sizes, without replaying it: for ordering work,
 * never for an answer. */
double vf__step_calls(const struct vf__step *s);

/* This thread's replays make each tensor that is freed before any other
 * call as two allocator calls (vf_alloc_malloc, vf_alloc_release: on)
 * or as one (vf_alloc_malloc_free, the default: off). The answers are the
 * same; the two calls are the reference tests compare with. Per thread. */
void vf__replay_pairs_split(bool on);

/* This thread only warms memos from now on (on) or no longer (off): a
 * replay another thread is running is left to it, and vf__step_peaks
 * fails at once (VF_ERR) instead of waiting for its peaks
 * (vf_estimate_prefetch_memo). Per thread. */
void vf__replay_memo_nowait(bool on);

#endif
