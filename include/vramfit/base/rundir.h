/* rundir.h - a run directory opened once; every file vramfit creates or
 * changes in it is opened relative to that descriptor, never through a
 * symbolic link. The run directory itself must not be a link: a run's files
 * land where the user named it, nowhere else (README: nothing outside the
 * run directory is created, changed or deleted).
 *
 * Names below the run directory are relative ("config.yaml",
 * "logs/trial-1.log"): no leading '/', no "." or ".." component; each
 * folder on the way is opened with O_NOFOLLOW too. */
#ifndef VRAMFIT_RUNDIR_H
#define VRAMFIT_RUNDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "vramfit/base/error.h"

struct vf_rundir {
	int fd;          /* the directory, O_DIRECTORY; -1 when closed */
	char path[4096]; /* as named, for messages */
};

enum {
	VF_RUNDIR_CREATE = 1,   /* make the directory (mode 0755) */
	VF_RUNDIR_EXIST_OK = 2, /* with CREATE: one that is there already is fine */
};

/* Open the run directory path. Fails, naming path, when its last component
 * is a symbolic link, is not a directory, or (CREATE without EXIST_OK)
 * exists already. The folders above it are the user's and followed.
 * Release with vf_rundir_close(). */
vf_status vf_rundir_open(struct vf_rundir *rd, const char *path, int flags, struct vf_error *err);
void vf_rundir_close(struct vf_rundir *rd);

/* Make the folder name (a real directory there already is fine; a link or
 * a file is refused). */
vf_status vf_rundir_mkdir(const struct vf_rundir *rd, const char *name, struct vf_error *err);

/* open(2) of name with flags (O_NOFOLLOW and O_CLOEXEC added; mode for
 * O_CREAT): a descriptor, or -1 with err naming RUN/name ("is a symbolic
 * link" when it is one). Only regular files are opened. */
int vf_rundir_openat(const struct vf_rundir *rd, const char *name, int flags, mode_t mode, struct vf_error *err);

/* fopen-like: mode "r", "w" (create or truncate) or "a" (create or append).
 * Caller owns; fclose(). NULL with err set. */
FILE *vf_rundir_fopen(const struct vf_rundir *rd, const char *name, const char *mode, struct vf_error *err);

/* Replace name with data atomically: a temp file beside it (created
 * exclusively, never through a link), fsync, renameat. An existing name
 * that is a link or not a regular file is refused; an existing file keeps
 * its permission bits, a new one gets mode. */
vf_status vf_rundir_write_atomic(const struct vf_rundir *rd, const char *name, const void *data, size_t len,
				 mode_t mode, struct vf_error *err);

/* Whether vf_rundir_write_atomic(rd, name, ...) would be refused for what
 * is there now (name a link or not a regular file, a folder on the way a
 * link or a file): check every output first, so a refusal comes before
 * any of them is written. Creates nothing. */
vf_status vf_rundir_check_replace(const struct vf_rundir *rd, const char *name, struct vf_error *err);

/* Hold run_dir for this process (tune, run): an exclusive flock on
 * RUN/.vramfit.lock (opened without following a link), kept until the
 * process ends, with "PID WHO" written in it. Another process holding it:
 * fails naming its pid and command, so two commands never drive one run's
 * trainer, logs and state at once. Held already by this process (run calls
 * tune): VF_OK. */
vf_status vf_rundir_lock(const char *run_dir, const char *who, struct vf_error *err);

/* One-shot: open the run directory run_dir and fopen path in it (path is
 * run_dir/NAME, as the backends carry it; anything else is refused). */
FILE *vf_rundir_fopen_path(const char *run_dir, const char *path, const char *mode, struct vf_error *err);

/* One-shot: open the run directory path (no CREATE) and write name in it. */
vf_status vf_rundir_write_file(const char *run_dir, const char *name, const void *data, size_t len, mode_t mode,
			       struct vf_error *err);

#endif
