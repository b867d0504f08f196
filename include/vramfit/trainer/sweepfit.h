/* sweepfit.h - the trainer's autotune sweep predicted instead of run: the
 * tier's starting config (the checkout's shipped file, or the profile's
 * fit.json values for it), then each change of the profile's sweep.json in
 * its order with the same rules as lib/tune (stop/continue, requires_adopted,
 * tiers, the batch ladder that keeps the effective batch, the improvement
 * threshold), each trial judged by an estimator callback: fits or out of
 * memory, peak, step time. Also the search over the profile's knobs
 * (fit.json "search") and the mapping of a trainer config onto the
 * estimator's trainer-config struct by the profile's key names
 * (configs.json "keys"). Nothing here is specific to one trainer: the
 * profile names the keys, the order and the values. */
#ifndef VRAMFIT_SWEEPFIT_H
#define VRAMFIT_SWEEPFIT_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"
#include "vramfit/base/yamldoc.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/gpu/gpu.h"

#define VF_SWEEPFIT_MAX_TRIALS 16

/* One configuration judged by the estimator. */
struct vf_sweepfit_eval {
	bool fits;           /* peak within the GPU's memory */
	int64_t peak_bytes;  /* per GPU; < 0 unknown */
	int64_t gpu_bytes;   /* the GPU's usable bytes; <= 0 unknown */
	double step_seconds; /* one optimizer step; < 0 unknown */
	double tokens_per_step;
};

/* Judge one trainer config. VF_OK and *out filled, or an error (the
 * config cannot be mapped onto the estimator). */
typedef vf_status (*vf_sweepfit_eval_fn)(void *ctx, const struct vf_yamldoc *config,
					 struct vf_sweepfit_eval *out, struct vf_error *err);

enum vf_sweepfit_outcome {
	VF_SWEEPFIT_FITS,    /* predicted to run */
	VF_SWEEPFIT_OOM,     /* predicted out of memory */
	VF_SWEEPFIT_NOOP,    /* the change leaves the config as it is */
	VF_SWEEPFIT_SKIPPED, /* the change cannot be made (why says) */
};

struct vf_sweepfit_trial {
	int index;               /* 1 = baseline */
	char id[32];             /* sweep.json change id; "baseline" */
	char change[64];         /* its name */
	char flag[32];           /* the tune flag it needs ("sweep-batch"), or "" */
	char deltas[512];        /* JSON object: key -> YAML text, on top of the best so far */
	enum vf_sweepfit_outcome outcome;
	struct vf_sweepfit_eval eval;
	double gain_pct;         /* predicted step-time gain over the best so far (+ faster) */
	bool adopted;            /* predicted to become the new best */
	char why[192];           /* SKIPPED: why; NOOP: which value */
};

struct vf_sweepfit {
	struct vf_sweepfit_trial trials[VF_SWEEPFIT_MAX_TRIALS];
	int ntrials;
	int winner;              /* index into trials; -1 when the baseline does not fit */
	char winner_deltas[1024];/* JSON object of the winner's changes to the start */
	char not_tried[256];     /* changes the sweep never reaches, with why */
};

struct vf_sweepfit_opts {
	const char *trainer;     /* profile; NULL = VF_PROFILE_DEFAULT */
	const char *tier;        /* tier name (a change's "tiers" filter) */
	bool all_flags;          /* predict the changes behind flags too (each names its flag) */
	const char *const *flags;/* else the flags given ("sweep-batch"), NULL-terminated; may be NULL */
	int max_trials;          /* 0 = sweep.json's */
};

/* Predict the sweep from `start` (borrowed). */
vf_status vf_sweepfit_predict(const struct vf_sweepfit_opts *o, const struct vf_yamldoc *start,
			      vf_sweepfit_eval_fn eval, void *ctx, struct vf_sweepfit *out,
			      struct vf_error *err);

/* The starting config of a shipped file name ("t2v_lora_low_vram.yaml"):
 * read from trainer_dir/<config_path> when trainer_dir is given, else made
 * from the profile's fit.json values for that file (config_name with the
 * mode put back as {mode}). full: the profile's full fine-tune changes
 * applied (fit.json full.set, configs.json full_finetune.set). *from says
 * which ("the checkout's configs/t2v_lora.yaml", "the profile's values for
 * t2v_lora.yaml"). Caller owns *out; vf_yamldoc_free(). */
vf_status vf_sweepfit_start(const char *trainer, const char *mode, const char *config_name,
			    const char *trainer_dir, const char *config_path, bool full,
			    struct vf_yamldoc **out, char *from, size_t from_len, struct vf_error *err);

/* Map a trainer config onto the estimator's trainer-config struct by the
 * profile's key names (configs.json "keys"); strings borrowed from doc.
 * gpus: processes. */
vf_status vf_sweepfit_config(const cJSON *configs, const struct vf_yamldoc *doc, int gpus,
			     struct vf_ltx2_config *out, struct vf_error *err);

/* The estimator for a DiT the trainer trains: the config mapped onto a
 * setup (vf_setup_from_ltx2), vf_estimate_dit on gpu, the step time with
 * the data-parallel communication of gpus processes. */
struct vf_sweepfit_dit {
	const struct vf_dit *dit;         /* Borrowed */
	const cJSON *configs;             /* Borrowed; configs.json */
	const struct vf_gpu_spec *gpu;    /* Borrowed; may be NULL */
	int gpus;
};
vf_status vf_sweepfit_dit_eval(void *ctx, const struct vf_yamldoc *config, struct vf_sweepfit_eval *out,
			       struct vf_error *err);

/* One configuration found by vf_sweepfit_search. */
struct vf_sweepfit_found {
	char changes[512];       /* JSON object: key -> YAML text, against the start */
	int training_changes;    /* changes to knobs marked changes_training */
	struct vf_sweepfit_eval eval;
};

/* Every combination of the profile's fit.json "search" knobs on top of
 * start (the batch knob keeps the effective batch; lora_only knobs only
 * for LoRA), judged by eval; those that fit, the ones that change fewest
 * knobs marked changes_training first, then fastest. Up to max in out;
 * *n found in all (may exceed max). */
vf_status vf_sweepfit_search(const char *trainer, const struct vf_yamldoc *start, bool lora,
			     vf_sweepfit_eval_fn eval, void *ctx, struct vf_sweepfit_found *out,
			     int max, int *n, struct vf_error *err);

const char *vf_sweepfit_outcome_name(enum vf_sweepfit_outcome o);

#endif
