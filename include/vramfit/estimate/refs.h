/* refs.h - published reference training runs (data/refs.json): what their
 * authors state, the model FLOPs the work takes, the MFU the claim implies
 * and whether that is believable, what vramfit predicts for the same work,
 * and the same work re-priced on other GPUs (`vramfit refs --what-if`).
 *
 * Unknown numbers are < 0. */
#ifndef VRAMFIT_REFS_H
#define VRAMFIT_REFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/estimate/runcost.h"

#define VF_REF_MAX_ASSUMPTIONS 6

struct vf_ref {
	char id[48];
	char title[160];
	char kind[24];              /* llm-pretrain, vlm-projector, contrastive, ... */
	char model_name[96];
	char catalog_id[48];        /* model catalog id, or empty */
	double params;              /* parameters the FLOPs count */
	double coeff;               /* FLOPs per parameter per token (6 train, 4 frozen) */
	int64_t layers, hidden, seq;/* for the attention FLOPs; -1 unknown */
	double extra_flops_per_sample; /* frozen encoders, forward only; 0 none */
	double flops_per_sample;    /* model FLOPs of one training sample, forward and
				       backward, where they are not coeff x params x
				       tokens (two-tower, convolutional); 0 none */
	double tokens;              /* training tokens (given, or samples x tokens/sample) */
	double samples;
	double tokens_per_sample;
	bool tokens_assumed;        /* tokens per sample is vramfit's assumption */
	char gpu[32];               /* GPU catalog id, or empty */
	int gpus;                   /* 0 unknown */
	bool gpu_assumed;           /* the exact variant (40/80 GB) is assumed */
	/* Published. */
	double hours, hours_lo, hours_hi;
	double gpu_hours;
	double cost_usd;
	double tokens_per_s_per_gpu;
	double mfu;
	/* The MFU the same stack publishes for itself. */
	double expected_lo, expected_hi;
	char expected_source[256];
	/* An alternative reading of the claim (e.g. the Chinchilla token count). */
	double alt_tokens;
	char alt_why[200];
	char source[400];
	char note[800];
	char assumptions[VF_REF_MAX_ASSUMPTIONS][240];
	int nassumptions;
};

struct vf_refs {
	struct vf_mfu_policy policy;
	struct vf_ref *refs; /* owned */
	size_t count;
	char source[256];    /* where the file was read from */
};

/* Read data/refs.json (embedded, or $VRAMFIT_DATA_DIR / ~/.config
 * override). Caller owns; vf_refs_release(). */
vf_status vf_refs_load(struct vf_refs *out, struct vf_error *err);
/* Parse an already-loaded document; `what` names it in errors. */
vf_status vf_refs_parse(const cJSON *root, const char *what, struct vf_refs *out,
			struct vf_error *err);
void vf_refs_release(struct vf_refs *r);
/* Borrowed; valid until vf_refs_release(). */
const struct vf_ref *vf_refs_find(const struct vf_refs *r, const char *id);

struct vf_ref_eval {
	/* The published claim, checked. */
	double tokens;           /* < 0 unknown */
	double flops_per_token;  /* < 0 unknown */
	double published_flops_per_token; /* the authors' count: published MFU x peak / their
					   * tokens/s per GPU; < 0 unknown */
	double flops;            /* the whole run's model FLOPs; < 0 unknown */
	double seconds;          /* published wall time; < 0 unknown */
	double implied_mfu;      /* < 0 unknown */
	enum vf_verdict verdict;
	bool plausible;          /* verdict is plausible or unknown */
	/* What would make an implausible claim consistent. */
	double tokens_at_lo, tokens_at_hi;   /* tokens in the published time at the reference MFU range */
	double mfu_lo, mfu_hi;               /* that range (the stack's, or the default) */
	double alt_mfu;                      /* MFU of the alternative token count on the published GPUs */
	double alt_gpus;                     /* GPUs the alternative needs in the published time at mfu_lo..hi midpoint */
	/* vramfit's prediction (on the target hardware). */
	char gpu[32];
	int gpus;
	double mfu_used;
	const char *mfu_basis;   /* "published", "stack", "default", "scaled" (static) */
	double predicted_hours;  /* < 0 unknown */
	double predicted_cost_usd; /* < 0 unknown */
	double price_usd_hour;   /* used; < 0 unknown */
	char note[1200];         /* the verdict in words */
	/* The estimator's own prediction (vf_ref_estimate), independent of
	 * any published MFU. */
	bool est_known;
	int64_t est_batch;       /* micro-batch: the largest that fits (<= 64) */
	bool est_grad_ckpt;      /* needed for batch 1 to fit */
	double est_tokens_per_second; /* all GPUs, communication included */
	double est_mfu;          /* model FLOPs of the ref / (GPUs x peak x predicted time) */
	double est_hours;
	double est_cost_usd;     /* < 0 unknown */
};

/* Evaluate r. published: the catalog entry of r->gpu (NULL when unknown).
 * target/target_gpus: other hardware for a what-if (NULL/0: the published
 * hardware). price_usd_hour >= 0 overrides the target's catalog price.
 * Fails only on a what-if whose target has no bf16 rate. */
vf_status vf_ref_evaluate(const struct vf_refs *set, const struct vf_ref *r,
			  const struct vf_gpu_spec *published, const struct vf_gpu_spec *target,
			  int target_gpus, double price_usd_hour, struct vf_ref_eval *out,
			  struct vf_error *err);

/* Fill the est_* fields of e: the model's catalog architecture
 * (r->catalog_id) through vf_estimate_run on e's target GPU and count at
 * r->seq (full training for coeff 6; a frozen bf16 base with a small
 * trainable adapter, as LoRA, for coeff 4), the largest micro-batch that
 * fits with 10% margin, DDP communication (runcost.h). Needs
 * vf_ref_evaluate first; leaves est_known false when the ref has no
 * catalog model, sequence or token count, or nothing fits. */
void vf_ref_estimate(const struct vf_ref *r, const struct vf_gpu_spec *gpu,
		     struct vf_ref_eval *e);

/* One ref and its evaluation as the object of the refs --json contract
 * ({"id", "published": {...}, "predicted": {...}, "implied_mfu",
 * "plausible", "note", ...}). Caller owns; cJSON_Delete(). */
cJSON *vf_ref_to_json(const struct vf_ref *r, const struct vf_ref_eval *e);

#endif
