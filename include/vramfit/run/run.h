/* run.h - `vramfit run`: the approved plan carried out, stage by stage
 * (preprocess, tune, train), with recovery from an out-of-memory. What is
 * here is the library side: the run's state file, the preprocessing child,
 * the sanity sample, the last checkpoint, the remedy picked for a failed
 * training and its change written into config.yaml and plan.md. The CLI
 * (src/cmd-run.c) strings them together; the sweep and the supervised
 * training are lib/tune's (vf_tune_run, vf_tune_run_one).
 *
 * The state file RUN/run.json (written temp + rename) is a JSON object:
 *   "version": 1,
 *   "stage": "preprocess" | "tune" | "train" | "done"   the stage to run next
 *   "status": "running" | "stopped" | "failed" | "done" how the last call ended
 *   "note": text                                        why (one line)
 *   "preprocess": {"done": bool, "files": N}            files in the data root
 *   "dataset_dir": path                                 --dataset-dir (absolute)
 *   "steps": N                                          training steps
 *   "attempts": [{"attempt", "log", "outcome", "evidence", "exit",
 *                 "steps_done", "total_steps", "step_seconds",
 *                 "peak_bytes", "predicted_peak_bytes", "resumed_from"}]
 *   "recoveries": [{"attempt", "step", "cause", "evidence", "change",
 *                   "set": {dotted key: YAML text}, "predicted_peak_bytes",
 *                   "estimate": "fits" | "no estimate", "resume_from"}]
 * Unknown fields are kept; a field of the wrong type is an error naming it. */
#ifndef VRAMFIT_RUN_H
#define VRAMFIT_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"
#include "vramfit/base/proc.h"
#include "vramfit/base/yamldoc.h"
#include "vramfit/tune/trial.h"
#include "vramfit/tune/tune.h"

#define VF_RUN_STATE_FILE "run.json"
#define VF_RUN_PLAN_FILE "plan.json"
#define VF_RUN_STATE_MAX_BYTES (1u << 20)
#define VF_RUN_MAX_ENTRIES 64 /* attempts and recoveries kept */

enum vf_run_stage { VF_RUN_PREPROCESS, VF_RUN_TUNE, VF_RUN_TRAIN, VF_RUN_DONE, VF_RUN__STAGES };

/* "preprocess", "tune", "train", "done". Static string. */
const char *vf_run_stage_name(enum vf_run_stage s);
bool vf_run_stage_parse(const char *name, enum vf_run_stage *out);

/* A new state: stage preprocess, status "not started". Caller owns. */
cJSON *vf_run_state_new(void);
/* Parse and check a state file's text (what names it in errors). Caller
 * owns *out. */
vf_status vf_run_state_parse(const char *text, size_t len, const char *what, cJSON **out, struct vf_error *err);
/* RUN/run.json, or a new state when there is none. */
vf_status vf_run_state_load(const char *run_dir, cJSON **out, struct vf_error *err);
/* Write RUN/run.json atomically (never through a link). */
vf_status vf_run_state_save(const char *run_dir, const cJSON *st, struct vf_error *err);
/* The state's stage (preprocess when unreadable). */
enum vf_run_stage vf_run_state_stage(const cJSON *st);
/* Set stage, status and note (note may be NULL: ""). */
void vf_run_state_set(cJSON *st, enum vf_run_stage stage, const char *status, const char *note);
/* Append obj (owned by the state after) to the array name, keeping the
 * last VF_RUN_MAX_ENTRIES. */
void vf_run_state_append(cJSON *st, const char *name, cJSON *obj);

/* Split a command that plan printed (shell words: plain, '...', "...")
 * into argv[0..max-1], NULL-terminated; the words are kept in *store
 * (caller frees). A word the shell would compute ($, `) is refused. */
vf_status vf_run_split_command(const char *cmd, char **store, const char **argv, size_t max,
			       struct vf_error *err);

/* The preprocessing child: the plan's command in the trainer directory,
 * supervised by vf_proc (process group, timeout, stall, interrupt), its
 * output to RUN/logs/preprocess.log. on_line gets every line (for the
 * progress: vf_run_progress). */
struct vf_run_preprocess {
	const char *run_dir;    /* absolute */
	const char *command;    /* plan.json preprocess.command */
	const char *cwd;        /* the trainer directory */
	double timeout_s, stall_s, grace_s;
	void (*on_line)(void *ctx, const char *line);
	void (*on_tick)(void *ctx, double elapsed_s);
	void *ctx;
	struct vf_proc *volatile current; /* while it runs: for vf_proc_interrupt */
	volatile sig_atomic_t interrupted;
	/* results */
	int status;
	enum vf_proc_end end;
	double wall_s;
	char last_line[256];
};
vf_status vf_run_preprocess(struct vf_run_preprocess *pp, struct vf_error *err);
/* Async-signal-safe. */
void vf_run_preprocess_interrupt(struct vf_run_preprocess *pp);

/* "N/T" in a progress line (the last such pair): true with done, total. */
bool vf_run_progress(const char *line, int *done, int *total);

/* Files below dir (one level of subdirectories), -1 when it is missing. */
int vf_run_count_files(const char *dir);

/* Where the sanity run's one sample goes, relative to the run directory:
 * the trainer profile's sweep.json trial_config.data_root (the data root
 * tune's trials read; LTX-2: "{run}/overfit/.precomputed", the trainer's
 * own .precomputed layout) without its "{run}/". VF_ERR naming the field
 * when it is not a folder below {run}/ (no "..", no other placeholder). */
vf_status vf_run_sample_dir(const cJSON *sweep, char *out, size_t n, struct vf_error *err);

/* The sanity check's sample (TRAINER.md section 5): the first sample of
 * the preprocessed data root data_root (the files of one name, in each of
 * its subdirectories) copied into RUN/sample_dir (vf_run_sample_dir; made
 * with the folders above it), subdirectories kept. *copied: files copied. */
vf_status vf_run_sanity_sample(const char *run_dir, const char *data_root, const char *sample_dir, int *copied,
			       struct vf_error *err);

/* The newest checkpoint the trainer wrote: RUN/<configs.json checkpoints
 * dir>, names matching its globs, the highest step (names sort by step).
 * false when there is none. */
bool vf_run_last_checkpoint(const char *run_dir, const cJSON *configs, char *out, size_t n);

/* How the trainer resumes (resume.c): the profile's configs.json
 * checkpoints.resume_key and resume_takes_dir (true: the key also takes a
 * directory, whose newest checkpoint the trainer loads). */
struct vf_run_resume {
	char key[128];
	bool takes_dir;
	char unchecked[512]; /* why the key was not checked against the checkout's schema; "" when it was */
};
/* Read them, and check the key against the schema of the trainer checkout
 * at trainer_dir (configs.json schema.file and schema.class). VF_ERR when
 * the profile names no key or the schema has no such field (the message
 * names the schema file, its class and the key); a schema that cannot be
 * read leaves the key unchecked, saying why. */
vf_status vf_run_resume_load(const char *trainer_dir, const cJSON *configs, struct vf_run_resume *out,
			     struct vf_error *err);
/* The key's value that resumes from the checkpoint file ckpt: ckpt, or its
 * directory when want_dir and the key takes one. */
void vf_run_resume_value(const struct vf_run_resume *rs, const char *ckpt, bool want_dir, char *out, size_t n);

/* Set each key of set (dotted key -> YAML text) in RUN/config.yaml and
 * write it back atomically, byte-exact elsewhere. */
vf_status vf_run_config_set(const char *run_dir, const cJSON *set, struct vf_error *err);

/* Append "- line" to plan.md's `## Run Log` section (made at the end when
 * missing), atomically; line is markdown-escaped. */
vf_status vf_run_plan_note(const char *run_dir, const char *line, struct vf_error *err);

/* The dataset (the trainer's layout: a .csv, .json list or .jsonl file of
 * rows with a caption column and a media_path or video column, media
 * paths relative to the file). */
#define VF_RUN_DATASET_MAX_BYTES (64u << 20)
/* The dataset file of directory dir: dir/preferred (the profile's name)
 * when it is there, else the one .json, .jsonl or .csv file of dir. */
vf_status vf_run_dataset_find(const char *dir, const char *preferred, char *out, size_t n, struct vf_error *err);
/* Check a dataset file's text (file names it, its extension the format):
 * every row has a caption and a media path, and, when base is not NULL,
 * the media file exists (relative paths from base). *rows: rows read. The
 * error names the file, the row and the field. */
vf_status vf_run_dataset_check(const char *file, const char *text, size_t len, const char *base, int *rows,
			       struct vf_error *err);
/* The same, reading file (base: its directory). */
vf_status vf_run_dataset_check_file(const char *file, int *rows, struct vf_error *err);
/* The plan's preprocessing command with its dataset word (plan_dataset)
 * replaced by dataset and, when output_flag is set, "OUTPUT_FLAG
 * output_dir" appended (the script's outputs where config.yaml reads
 * them); every word shell-quoted. Caller frees *out. */
vf_status vf_run_preprocess_command(const char *cmd, const char *plan_dataset, const char *dataset,
				    const char *output_flag, const char *output_dir, char **out, struct vf_error *err);

/* The remedy a recovery applies. */
struct vf_run_remedy {
	char text[512];        /* the profile's words */
	cJSON *set;            /* dotted key -> YAML text; caller owns (cJSON_Delete) */
	int64_t predicted_peak_bytes; /* of the config with it; -1 no estimate */
	char skipped[1024];    /* cheaper remedies passed over, and why */
};

/* The cheapest remedy of the profile for outcome o (logs.json remedies
 * with "apply") that cfg does not have already and that fits: predicted
 * (predict may be NULL) at most card_bytes (<= 0: no card to compare with),
 * or with no prediction. VF_ENOTFOUND when none is left (why in err). */
vf_status vf_run_pick_remedy(const struct vf_trial_patterns *pat, enum vf_outcome o, const struct vf_yamldoc *cfg,
			     vf_tune_predict_fn predict, void *pctx, int64_t card_bytes, struct vf_run_remedy *out,
			     struct vf_error *err);

#endif
