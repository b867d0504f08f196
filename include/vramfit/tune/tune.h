/* tune.h - the sanity run and the autotune sweep (TRAINER.md §5): run the
 * real trainer for a few steps on one sample, trial by trial, each trial =
 * the current best config + one change, keep the fastest stable one and
 * patch its deltas into the run's config.yaml.
 *
 * Everything that is policy comes from the trainer profile's sweep.json:
 * the keys a trial config overrides (data root, steps, validation and
 * checkpoint intervals, output dir), the changes in order, which flag or
 * tier each needs, the batch-size ladder, and what a failure or a trial
 * without a step-time improvement does next (stop or continue).
 *
 * Each trial: config written to RUN/overfit/trial-N.yaml (byte-exact
 * patches of config.yaml), its output captured to RUN/logs/trial-N.log,
 * run under vf_proc (own process group, clean environment, timeouts,
 * memory limit), parsed and classified by vf_trial, one line appended to
 * RUN/autotune.log and one record written to the history database (one
 * transaction). A trial whose config hash already has a record is not run
 * again (resume) unless fresh. The run's config.yaml is only written at the
 * end of a sweep that was not interrupted, atomically, with the winner's
 * deltas. */
#ifndef VRAMFIT_TUNE_H
#define VRAMFIT_TUNE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "vramfit/base/error.h"
#include "vramfit/base/proc.h"
#include "vramfit/base/yamldoc.h"
#include "vramfit/tune/backend.h"
#include "vramfit/tune/trial.h"

#define VF_TUNE_MAX_TRIALS 16

/* Predict a trial's peak memory per GPU from its config. Return VF_OK and
 * set *bytes, or VF_ENOTFOUND when there is no prediction for it. */
typedef vf_status (*vf_tune_predict_fn)(void *ctx, const struct vf_yamldoc *trial_config,
					int64_t *bytes, struct vf_error *err);

/* Predict a trial's step time (seconds) from its config; VF_ENOTFOUND when
 * there is none. With it (and predict), the sequential sweep orders the
 * changes: those predicted out of memory first, in the profile's order
 * (skipped at no GPU cost, their stop rules as the profile has them), then
 * the rest by predicted gain over the baseline, a change that needs another
 * never before it; autotune.log says so. Without a prediction for every
 * change, the profile's order. */
typedef vf_status (*vf_tune_predict_step_fn)(void *ctx, const struct vf_yamldoc *trial_config,
					     double *seconds, struct vf_error *err);

/* What the sweep is doing, for a status line. */
enum vf_tune_event_kind {
	VF_TUNE_TRIAL_START, /* a trial is about to run */
	VF_TUNE_PROGRESS,    /* about every 100 ms while it runs */
	VF_TUNE_TRIAL_END,   /* a trial has a result (run, resumed, no-op or skipped) */
};
struct vf_tune_event {
	enum vf_tune_event_kind kind;
	const struct vf_trial *trial; /* Borrowed; the trial concerned */
	int max_trials;
	int step, total_steps;        /* last step reported; total of the trial */
	double step_seconds;          /* last reported; < 0 unknown */
	double median_seconds;        /* by the profile's rule; < 0 unknown */
	double loss;                  /* last reported; NAN unknown */
	int64_t mem_bytes;            /* live memory of the trainer's process tree; < 0 unknown */
	double elapsed_s;             /* of this trial */
	double sweep_eta_s;           /* rest of the sweep, rough; < 0 unknown */
	bool resumed;                 /* TRIAL_END: taken from the history */
};
typedef void (*vf_tune_event_fn)(void *ctx, const struct vf_tune_event *ev);

struct vf_tune_opts {
	const char *run_dir;      /* the run workspace (made absolute by vf_tune_run) */
	const char *trainer;      /* profile; NULL = VF_PROFILE_DEFAULT */
	const char *trainer_dir;  /* the trainer's cwd; NULL = $LTX_TRAINER_DIR or "." */
	const char *trainer_cmd;  /* template with {config}; NULL = the profile's launch command */
	int steps;                /* 0 = the profile's (50) */
	int max_trials;           /* 0 = the profile's (5) */
	double timeout_s;         /* per trial; 0 = none */
	double stall_s;           /* no output for this long = stalled; 0 = the profile's
				     stall_seconds (sweep.json), none when it has none */
	double grace_s;           /* TERM -> KILL; 0 = 5 s */
	uint64_t mem_limit_bytes; /* RLIMIT_DATA of the trainer; 0 = none */
	bool sweep_batch;         /* the flags a change may require (sweep.json requires_flag) */
	bool try_no_ckpt;
	bool no_skip;             /* run trials predicted to OOM anyway */
	bool fresh;               /* forget this run's recorded trials first */
	bool self_check;          /* check each trial config (vf_check_config: paths exist,
				     keys and values known to the profile) before launching
				     it; a failure is a config-error trial, not run and not
				     recorded in the history (fix it and run again) */
	const char *gpus;         /* CUDA_VISIBLE_DEVICES for the trainer, or NULL */
	int num_gpus;             /* for {num_gpus}; 0 = 1 */
	const char *tier;         /* the run's tier label, or NULL when unknown */
	const char *gpu_label;    /* recorded with each trial ("NVIDIA H200 x 1", "cpu") */
	int64_t card_bytes;       /* per-GPU memory for the predicted-OOM skip; <= 0 none */
	bool poll_gpu;            /* measure GPU memory instead of the host memory of the
				     trainer's process tree: with NVML, every tick (~100 ms)
				     the tree's per-process memory (largest GPU), else the
				     device used minus the idle baseline before the trial;
				     with nvidia-smi only, the latter about once a second */
	bool host_memory;         /* no GPU visible (no NVML or nvidia-smi reading): the
				     measured peaks are host memory, not a GPU's, and are never
				     compared with the GPU prediction; a trial that ran is
				     recorded in the history without its predicted peak
				     (a skipped one keeps it: nothing was measured) */
	const char *store_path;   /* NULL = the default history database */
	/* The parallel strategy (round 1: baseline + every single change at
	 * once; round 2: the combination of the changes that improved), on
	 * backend when given (e.g. vf_tune_backend_slurm), else on parallel
	 * local slots when parallel > 1 (gpu_sets[i]: slot i's GPUs). */
	struct vf_tune_backend *backend; /* Borrowed */
	int parallel;
	const char *const *gpu_sets;
	vf_tune_predict_fn predict;
	vf_tune_predict_step_fn predict_step; /* optional; same ctx */
	void *predict_ctx;
	vf_tune_event_fn on_event;
	void *event_ctx;
};

struct vf_tune_result {
	struct vf_trial trials[VF_TUNE_MAX_TRIALS];
	int ntrials;
	int winner;                /* index in trials of the best ok trial (0 = baseline); -1 none */
	char winner_deltas[1024];  /* JSON object: dotted key -> YAML value text */
	bool patched;              /* config.yaml was rewritten with the deltas */
	bool baseline_failed;
	bool interrupted;
	int64_t planned_steps;     /* optimization.steps of config.yaml; 0 unknown */
	char deferred[256];        /* changes not tried for a missing flag: "batch size 2 (--sweep-batch)" */
	char note[512];            /* e.g. why the winner was not patched */
};

/* The sweep itself (opaque); vf_tune_interrupt may be called on it from a
 * signal handler while vf_tune_run runs. */
struct vf_tune;

/* Caller owns; vf_tune_free(). */
struct vf_tune *vf_tune_new(void);
void vf_tune_free(struct vf_tune *t);
/* Async-signal-safe: end the running trial's process tree and stop the
 * sweep; config.yaml is left untouched, finished trials stay recorded. */
void vf_tune_interrupt(struct vf_tune *t);

/* Run the sweep. VF_OK when it ran to its end (whatever the outcomes: see
 * res); VF_ERR when it could not start (missing config.yaml or one-sample
 * dataset, bad profile, database) or was interrupted (res->interrupted);
 * VF_EUSAGE for options the profile refuses (--try-no-ckpt off its tier). */
vf_status vf_tune_run(struct vf_tune *t, const struct vf_tune_opts *opts, struct vf_tune_result *res,
		      struct vf_error *err);

/* One supervised run of the trainer outside a sweep (vramfit run's
 * training): the same launch (o->trainer_cmd or the profile's, in
 * o->trainer_dir), supervision (vf_proc: process group, clean environment,
 * o->timeout_s, stall, grace, memory limit; vf_tune_interrupt ends it),
 * memory polling, log and samples file (RUN/log_name and the .samples
 * beside it) and classification as a trial, on config_path (absolute, in
 * the run directory). expect_steps: the step a complete run reaches; no
 * validation sample is required. trial (initialised by the caller, its
 * index and change set) gets the outcome, steps, step time and peaks; o's
 * on_event gets its events. Nothing is recorded in the history. VF_OK
 * when the trainer ran (whatever its outcome). */
vf_status vf_tune_run_one(struct vf_tune *t, const struct vf_tune_opts *o, const char *config_path,
			  const char *log_name, int expect_steps, struct vf_trial *trial, struct vf_error *err);

#endif
