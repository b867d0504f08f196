/* plan.h - from "I want to train" to a run workspace a person approves
 * (TRAINER.md sections 1-4 and 7): the tier of the GPUs, the trainer's
 * shipped config copied and patched byte-exactly (only the four paths plus
 * what was asked or what the rules require), the launch command, the
 * self-check, an estimate, and plan.md.
 *
 * vf_plan_make decides everything and renders plan.md in memory; it creates,
 * changes and deletes nothing. vf_plan_write creates the run directory (and
 * the workspace root when missing) and writes into it only. Policy (workspace
 * roots, run layout, patched keys, model discovery, launch commands, full
 * fine-tune rules) comes from the trainer profile's configs.json; tiers from
 * tiers.json. */
#ifndef VRAMFIT_PLAN_H
#define VRAMFIT_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "vramfit/trainer/check.h"
#include "vramfit/trainer/checkout.h"
#include "vramfit/base/error.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/trainer/sweepfit.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/trainer/tier.h"
#include "vramfit/base/yamldoc.h"

#define VF_PLAN_PATH 1024
#define VF_PLAN_MAXLIST 32

struct vf_plan_opts {
	const char *trainer;       /* profile; NULL = VF_PROFILE_DEFAULT */
	const char *trainer_dir;   /* NULL: $LTX_TRAINER_DIR, ./packages/ltx-trainer, . */
	const char *mode;          /* a config family of the checkout (t2v, i2v, v2v_ic, ...);
				    * NULL = the profile's default */
	const char *dataset;       /* for the run name; NULL = the profile's default */
	const char *run_name;      /* NULL: <mode>-<dataset>-<YYYYMMDD-HHMM> */
	const char *workspace;     /* NULL: the first writable profile root */
	const char *model;         /* NULL: discovered */
	const char *text_encoder;  /* NULL: discovered; a directory or a packed .safetensors */
	const char *video_vae;     /* split pack; NULL: the video VAE file beside the transformer */
	const char *audio_vae;     /* split pack; NULL: the audio VAE file beside the transformer */
	const char *training_mode; /* lora | full; NULL = the shipped config's */
	int64_t steps;             /* 0 = the shipped config's */
	const char *goal;          /* free text for ## Goal; NULL = none given */
	const char *trigger;       /* trigger word; NULL = none */
	bool accept_risk;          /* proceed below the gate with the low-VRAM config, and
				    * when the estimate says the training does not fit */
	bool reuse;                /* write into an existing run directory */
	bool simulated;            /* the GPUs came from --gpu, not a probe */
	time_t now;                /* for the run name; 0 = time(NULL) */
	const char *resolution_buckets; /* the preprocessing's --resolution-buckets
					 * ("WxHxF;WxHxF"): the training size; NULL = the
					 * quick-start's 960x544x49, assumed and said */
};

enum vf_plan_block {
	VF_PLAN_GO,       /* nothing stops the plan */
	VF_PLAN_GATED,    /* below the trainer's minimum VRAM, or the plan's own estimate
			   * says the training does not fit the GPUs (memory_gate), and
			   * no --accept-risk */
	VF_PLAN_EXISTS,   /* the run directory exists and no --reuse */
};

/* One patched key of the run config. */
struct vf_plan_patch {
	char key[128];
	char before[256];   /* source text of the old value, "(absent)" when added */
	char after[VF_PLAN_PATH];
	char reason[128];   /* "path", "asked: --steps", "rule: full fine-tune" ... */
};

struct vf_plan {
	enum vf_plan_block block;
	char block_msg[1024];

	char trainer[32];
	char mode[VF_TIER_MODE_MAX];
	char dataset[64];
	char run_name[128];
	char workspace[VF_PLAN_PATH];      /* absolute root */
	char workspace_from[128];          /* "--workspace", "$LTX_TRAININGS_DIR", ... */
	bool workspace_created;            /* vf_plan_write creates the root */
	char run_dir[VF_PLAN_PATH];
	char sample_dir[256];             /* the sanity sample, below run_dir (vf_run_sample_dir) */
	char trainer_dir[VF_PLAN_PATH];
	char trainer_dir_from[64];
	char shipped_config[VF_PLAN_PATH]; /* absolute */
	char config_path[VF_PLAN_PATH];    /* run_dir/config.yaml */
	char plan_path[VF_PLAN_PATH];      /* run_dir/plan.md */

	/* GPUs and tier. */
	struct vf_tier tier;
	char gpu_name[96];
	int gpu_count;
	int gpu_gb;
	char gpu_catalog_id[32];
	bool simulated;

	/* Models. */
	char model[VF_PLAN_PATH];
	char text_encoder[VF_PLAN_PATH];
	char model_from[64];               /* "--model" or the directory searched */
	char text_encoder_from[64];
	int64_t model_params;              /* from the safetensors header */
	int64_t model_bytes;
	char model_id[32];                 /* catalog id for the estimate */
	char model_version[128];           /* "LTX-2.3 2.3.0" */
	char model_version_from[160];      /* "__metadata__ model_version", or why not */
	bool split_pack;                   /* transformer-only file: VAE files patched in */
	char video_vae[VF_PLAN_PATH];
	char audio_vae[VF_PLAN_PATH];

	/* The trainer checkout, as read this time. */
	char trainer_version[160];         /* "git 400fd31 (branch main)", "pyproject 1.2.0" */
	char mode_what[256];               /* the mode config's header comment */
	char mode_strategy[256];           /* its training_strategy in words */
	struct vf_delta deltas[VF_PLAN_MAXLIST]; /* the trainer's low-VRAM choices, when used */
	bool delta_applied[VF_PLAN_MAXLIST];     /* false: the key is not in this mode's config */
	int ndeltas;
	char deltas_from[256];             /* "t2v_lora.yaml -> t2v_lora_low_vram.yaml" */
	struct vf_found_value data_dirs[16]; /* under the data root (node pointers cleared) */
	int ndata_dirs;

	/* The run config. */
	struct vf_yamldoc *config;         /* patched copy (owned) */
	struct vf_plan_patch patches[VF_PLAN_MAXLIST];
	int npatches;
	char training_mode[16];
	int64_t steps;
	int64_t batch_size, grad_accum, effective_batch;
	char launch[VF_PLAN_PATH * 6];      /* the command, each path in it shell-quoted */
	char launch_cwd[VF_PLAN_PATH];
	char launch_line[VF_PLAN_PATH * 12]; /* cd 'launch_cwd' && launch: pastes as it is */
	char preprocess[VF_PLAN_PATH * 16]; /* the trainer's preprocessing command, paths quoted;
					     * "" when the profile names none */
	char preprocess_line[VF_PLAN_PATH * 18]; /* cd 'trainer_dir' && preprocess */
	char preprocess_dataset[VF_PLAN_PATH];   /* the dataset metadata file it reads */
	char preprocess_buckets[256];            /* its --resolution-buckets */

	/* The existing run directory, when there is one. */
	bool exists;
	char existing[VF_PLAN_MAXLIST][256]; /* what is there */
	int nexisting;
	char resume[VF_PLAN_MAXLIST][VF_PLAN_PATH]; /* checkpoints to resume from, newest last */
	int nresume;

	struct vf_check check;             /* the self-check of the patched config */

	bool has_estimate;
	struct vf_estimate estimate;
	int train_dims[3];                 /* the training sample the estimate used (largest bucket) */
	bool train_dims_assumed;           /* no --resolution-buckets: the quick-start's */
	int val_dims[3];                   /* validation.video_dims; 0 = validation off */
	char estimate_note[256];           /* why there is none, or its caveat */
	const struct vf_gpu_spec *gpu_spec; /* Borrowed (catalog); may be NULL */
	bool memory_gate;                  /* the estimate (available, for a catalog GPU, on
					    * the model's own shape) says the peak does not
					    * fit the GPUs: gated unless --accept-risk */
	bool has_sweep;                    /* the autotune sweep predicted (sweepfit.h) */
	struct vf_sweepfit sweep;
	char sweep_note[256];              /* why there is none */

	char warnings[VF_PLAN_MAXLIST][512];
	int nwarnings;
	char assumptions[VF_PLAN_MAXLIST][512];
	int nassumptions;
	char dirs[8][64];                  /* run layout: dataset, outputs, ... */
	int ndirs;

	char *plan_md;                     /* owned */
	size_t plan_md_len;
};

/* The LTX-2 estimate's view of a run config beyond the training keys:
 * validation.interval (null: no validation phase), inference_steps,
 * video_dims and the guidance scales as transformer passes per step
 * (conditional; unconditional when a CFG scale is not 1; STG when an STG
 * scale is not 0; modality guidance when audio and video are both
 * generated and a modality scale is not 1: validation_runner.py
 * _run_denoising, trainer commit 400fd31); no_audio when the training
 * strategy has no audio modality; no_validation_prompts when
 * validation.samples (or the older prompts) is empty or absent. */
void vf_plan_ltx2_validation(const struct vf_yamldoc *config, struct vf_ltx2_config *lc);

/* The largest of the resolution buckets "WxHxF;WxHxF" (by latent volume)
 * into dims. Fails naming the bucket that is not WIDTHxHEIGHTxFRAMES. */
vf_status vf_plan_largest_bucket(const char *buckets, int dims[3], struct vf_error *err);

void vf_plan_init(struct vf_plan *p);
void vf_plan_release(struct vf_plan *p);

/* Decide the plan for gpus (probed or simulated). Errors (nothing found,
 * a URL, an invalid checkpoint, a missing shipped config...) are one line
 * naming the file or flag. A gate or an existing run directory is not an
 * error: p->block says so and p->block_msg why. Creates nothing. */
vf_status vf_plan_make(const struct vf_plan_opts *o, const struct vf_gpu_set *gpus,
		       struct vf_plan *p, struct vf_error *err);

/* Create the run directory and its layout, write config.yaml, plan.md and
 * plan.json (the plan --json object, which vramfit run reads; atomically). Refuses when p->block != VF_PLAN_GO. */
vf_status vf_plan_write(const struct vf_plan *p, struct vf_error *err);

/* The plan --json object. Caller owns; cJSON_Delete(). */
cJSON *vf_plan_to_json(const struct vf_plan *p);

/* The config families of the trainer checkout o->trainer_dir (or found as
 * plan finds it); *dir gets the directory read. Caller owns *out;
 * vf_modes_release(). */
vf_status vf_plan_list_modes(const struct vf_plan_opts *o, struct vf_trainer_modes *out, char *dir, size_t n,
			     struct vf_error *err);

/* True when s looks like a URL (scheme://...). */
bool vf_plan_is_url(const char *s);

#endif
