/* store.h - the trial history: one SQLite database per user at
 * $XDG_DATA_HOME/vramfit/history.db (default ~/.local/share/vramfit/),
 * or $VRAMFIT_HISTORY when set. Schema versioned (PRAGMA user_version),
 * WAL journal, one transaction per trial, so an interrupted sweep loses
 * nothing. Trials are keyed by the hash of their config (and trainer
 * command): a re-run finds the result it already has and resumes.
 * The estimate's predicted peak and the measured peak are stored side by
 * side; vramfit history reports the estimator's error from them. Readers
 * open it read-only and write nothing; another program's database (tables
 * but no vramfit schema) is refused by readers and writers alike, never
 * written to. */
#ifndef VRAMFIT_STORE_H
#define VRAMFIT_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "vramfit/base/error.h"
#include "vramfit/tune/trial.h"

#define VF_STORE_SCHEMA_VERSION 3 /* 2: predicted_step_seconds; 3: recoveries */

struct vf_store; /* opaque */

/* The default path: $VRAMFIT_HISTORY, else $XDG_DATA_HOME/vramfit/history.db,
 * else $HOME/.local/share/vramfit/history.db. Returns out, or NULL when no
 * location is known (no HOME). */
const char *vf_store_default_path(char *out, size_t n);

/* Open for a writer (creating the directory, the file and the schema when
 * missing; an older schema migrated in place). path NULL = the default.
 * Fails on a database whose schema is newer than this build, and, before
 * writing a byte, on one that is not a vramfit history: tables but no
 * vramfit schema ("PATH: not a vramfit history (it has tables a, b and no
 * vramfit tables); name another history database"); an empty file is a
 * new history. Caller owns *out; vf_store_close(). */
vf_status vf_store_open(const char *path, struct vf_store **out, struct vf_error *err);
void vf_store_close(struct vf_store *s);

/* Open for a reader: read-only (SQLITE_OPEN_READONLY), never creates a
 * file or a directory nor writes to one: an older schema is read as it is
 * (no predicted step time before 2, no recoveries before 3), an empty file
 * as no trials; refused as vf_store_open refuses. path NULL = the
 * default. VF_ENOTFOUND (*out NULL) when neither path nor $VRAMFIT_HISTORY
 * is given and the default location holds no database yet (no trials
 * recorded); VF_ERR "PATH: no such history database (vramfit tune writes
 * it)" when path or $VRAMFIT_HISTORY names no file (a typo, not an empty
 * history). Caller owns *out; vf_store_close(). */
vf_status vf_store_open_existing(const char *path, struct vf_store **out, struct vf_error *err);

/* Whether a writer may use path (NULL = the default), found out before a
 * long command starts and writing nothing: VF_OK when it names no file
 * yet, an empty one or a vramfit history this build opens; else
 * vf_store_open's refusal. */
vf_status vf_store_check(const char *path, struct vf_error *err);

/* The hash that keys a trial: FNV-1a 64 over the config's bytes, a NUL and
 * the trainer command; 16 hex digits. out >= 17 bytes. */
void vf_store_hash(const void *config, size_t len, const char *trainer_cmd, char *out);

/* What a trial was run for (recorded with it). All borrowed. */
struct vf_store_ctx {
	const char *run_dir;
	const char *trainer; /* profile name */
	const char *gpu;     /* "NVIDIA H200 x 1" or "cpu" */
	const char *tier;    /* tier label or NULL */
};

/* Record one trial (insert or replace by config hash) in one transaction. */
vf_status vf_store_put(struct vf_store *s, const struct vf_store_ctx *ctx, const struct vf_trial *t,
		       struct vf_error *err);
/* Look a trial up by config hash; *found false when absent. */
vf_status vf_store_find(struct vf_store *s, const char *config_hash, struct vf_trial *out,
			bool *found, struct vf_error *err);
/* Forget every trial of a run (tune --fresh). */
vf_status vf_store_forget_run(struct vf_store *s, const char *run_dir, struct vf_error *err);

/* One stored trial with its context. */
struct vf_store_row {
	struct vf_trial t;
	char run_dir[1024];
	char trainer[64];
	char gpu[128];
	char tier[64];
	char recorded_at[32]; /* UTC, ISO 8601 */
};

/* Every stored trial, oldest first; run_dir NULL = all runs. Caller owns
 * *rows; free(). */
vf_status vf_store_list(struct vf_store *s, const char *run_dir, struct vf_store_row **rows,
			size_t *n, struct vf_error *err);

/* The same from the database at path (NULL = the default): opened as a
 * reader (vf_store_open_existing: nothing created; no rows when the default
 * holds none yet), listed, closed. Caller owns *rows; free(). */
vf_status vf_store_list_at(const char *path, const char *run_dir, struct vf_store_row **rows, size_t *n,
			   struct vf_error *err);

/* A recovery of vramfit run (its own table: a training launch is not a
 * trial). Borrowed strings; step and predicted_peak_bytes -1 unknown. */
struct vf_store_recovery {
	const char *run_dir;
	int attempt, step;
	const char *cause, *evidence, *change;
	const char *settings; /* JSON: dotted key -> YAML text */
	int64_t predicted_peak_bytes;
};
/* Record one (insert or replace by run and attempt). */
vf_status vf_store_put_recovery(struct vf_store *s, const struct vf_store_recovery *r, struct vf_error *err);
struct vf_store_recovery_row {
	char run_dir[1024];
	int attempt, step;
	char cause[32], evidence[512], change[512], settings[1024];
	int64_t predicted_peak_bytes;
	char recorded_at[32];
};
/* The recoveries of run_dir, by attempt; run_dir NULL = every run's, by
 * run and attempt. Caller owns *rows; free(). */
vf_status vf_store_list_recoveries(struct vf_store *s, const char *run_dir, struct vf_store_recovery_row **rows,
				   size_t *n, struct vf_error *err);

#endif
