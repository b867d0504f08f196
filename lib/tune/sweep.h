/* sweep.h - internal to lib/tune: the state of one sweep and the steps
 * shared by the sequential sweep (tune.c) and the parallel one
 * (parallel.c): building a trial, resolving it without running it (no-op,
 * history, self-check, predicted OOM), classifying a finished trial's log,
 * recording it. Not installed; include/vramfit/tune/tune.h is the API. */
#ifndef VRAMFIT_TUNE_SWEEP_H
#define VRAMFIT_TUNE_SWEEP_H

#include <limits.h>

#include "vramfit/base/json.h"
#include "vramfit/base/rundir.h"
#include "vramfit/tune/backend.h"
#include "vramfit/tune/store.h"
#include "vramfit/tune/tune.h"

struct vf_tune {
	volatile sig_atomic_t interrupted;
	struct vf_proc *volatile current;
	struct vf_tune_backend *volatile backend;
};

struct sweep {
	struct vf_tune *t;
	const struct vf_tune_opts *o;
	struct vf_tune_result *res;
	cJSON *sweep;     /* sweep.json */
	cJSON *configs;   /* configs.json (launch command, trainer dir) */
	struct vf_trial_patterns *pat;
	struct vf_store *store;
	struct vf_store_ctx sctx;
	char run[PATH_MAX];
	struct vf_rundir rd;             /* run: every file of the sweep opened in it */
	char config_path[PATH_MAX + 64]; /* RUN/config.yaml */
	char trainer_dir[PATH_MAX];
	char cmd[1024];
	char base_text_hash[17];
	char *base_text;  /* config.yaml as read at the start */
	size_t base_len;
	int steps;
	int max_trials;
	double min_pct;
	double avg_trial_s; /* for the ETA */
	int nrun;
	double started;     /* monotonic seconds at the start of the sweep */
	double gpu_s;       /* sum over trials run of wall seconds x GPUs */
	const char *log_name; /* vf_tune_run_one: the log's name in the run; NULL = the profile's */
};

/* A trial prepared for running: its config, log and sample paths. */
struct vf__trial_files {
	char config[PATH_MAX + 128];
	char log[PATH_MAX + 64];
	char sample_prefix[PATH_MAX + 256];
};

#define MAX_ARGS 64

double vf__now_s(void);
/* Split a trainer command template on blanks into argv (MAX_ARGS), with
 * {config} and {num_gpus} put in; *store: the words (caller frees). */
vf_status vf__build_argv(const char *tpl, const char *config, const char *gpus_s, char **store,
			 const char **argv, struct vf_error *err);
bool vf__flag_given(const struct vf_tune_opts *o, const char *flag);
bool vf__tier_allowed(const cJSON *change, const char *tier);
/* The keys change c sets on top of best_doc (batch ladder or "set"); false
 * with why when it cannot be made. */
bool vf__change_set(const cJSON *c, const struct vf_yamldoc *best_doc, cJSON *set, char *why, size_t wl);
/* Apply set on top of best: a new object (caller owns). */
cJSON *vf__candidate(const cJSON *best, const cJSON *set);

/* Build trial t (deltas on config.yaml), then settle it without running
 * when it can be: a no-op, a record in the history, a self-check failure,
 * a predicted OOM (each logged and, where the sequential sweep does,
 * recorded). *must_run: true when it still has to run; files are then
 * filled. *doc_out: the trial config (caller owns), NULL for a no-op. */
vf_status vf__trial_prepare(struct sweep *s, struct vf_trial *t, const cJSON *deltas,
			    const cJSON *change_set, const struct vf_yamldoc *best_doc,
			    struct vf__trial_files *files, bool *must_run, struct vf_yamldoc **doc_out,
			    struct vf_error *err);
/* A trial a backend ran: read its log, classify it with the same rules as
 * a local trial, fill t. */
void vf__trial_finish(struct sweep *s, struct vf_trial *t, const struct vf__trial_files *files,
		      const struct vf_tune_task *task);
/* Record a finished trial: history (one transaction) and autotune.log. */
vf_status vf__record(struct sweep *s, struct vf_trial *t, bool resumed, struct vf_error *err);
void vf__autotune_log(struct sweep *s, const struct vf_trial *t, bool resumed);
void vf__autotune_note(struct sweep *s, const char *line);
void vf__end_event(struct sweep *s, struct vf_trial *t, bool resumed);

/* The parallel strategy (parallel.c): round 1 = baseline + every single
 * change at once, round 2 = the combination of the improving changes.
 * *best: the winner's deltas (caller owns). */
vf_status vf__sweep_parallel(struct sweep *s, struct vf_tune_backend *be, cJSON **best,
			     struct vf_error *err);

#endif
