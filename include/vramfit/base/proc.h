/* proc.h - run a child process the way git's run-command does, and keep it
 * on a leash: its own process group, a clean documented environment, stdout
 * and stderr read line by line with a bounded line length, a wall-clock
 * timeout, a stall timeout (no output for N s), a memory limit applied to
 * the child, and an ending that takes the whole process tree with it
 * (SIGTERM to the group, SIGKILL after a grace period; then the same for
 * what left the group and was orphaned to us, the child subreaper).
 *
 * The environment the child sees is built from scratch:
 *   passed through when set: PATH HOME USER LOGNAME SHELL LANG LC_ALL TZ
 *     TMPDIR LD_LIBRARY_PATH VIRTUAL_ENV CUDA_HOME, and every variable whose
 *     name starts with one of UV_ HF_ PYTORCH_ NCCL_ TORCH XDG_ VRAMFIT_
 *     OMP_ MKL_ OPENBLAS_
 *   always set: COLUMNS=200 (Rich does not wrap), PYTHONUNBUFFERED=1,
 *     CUDA_DEVICE_ORDER=PCI_BUS_ID, TERM=dumb
 *   set when the caller names GPUs: CUDA_VISIBLE_DEVICES=<gpus>; otherwise
 *   the user's CUDA_VISIBLE_DEVICES, when set, passes through
 *   then the caller's own "NAME=value" entries (env_extra), which win.
 *
 * The result is the exit code, or 128 + the signal number when the child
 * was killed by a signal (so SIGKILL reads 137, as shells report it). */
#ifndef VRAMFIT_PROC_H
#define VRAMFIT_PROC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vramfit/base/error.h"

#define VF_PROC_LINE_MAX_DEFAULT (64u << 10) /* 64 KiB: longer lines are truncated */

enum vf_proc_stream { VF_PROC_STDOUT = 1, VF_PROC_STDERR = 2 };

/* Why the child ended. */
enum vf_proc_end {
	VF_PROC_EXITED = 0,   /* it exited (or died of a signal) on its own */
	VF_PROC_TIMEOUT,      /* ran past timeout_s; vramfit ended it */
	VF_PROC_STALLED,      /* no output for stall_s; vramfit ended it */
	VF_PROC_INTERRUPTED,  /* vf_proc_interrupt() was called; vramfit ended it */
};

/* One line of output (without its newline). line is NUL-terminated and
 * borrowed for the duration of the call; truncated is true when the line was
 * longer than line_max and only its first line_max bytes are given (the rest
 * up to the next newline is dropped and counted in bytes_dropped). */
typedef void (*vf_proc_line_fn)(void *ctx, enum vf_proc_stream stream, const char *line,
				size_t len, bool truncated);
/* Called about every tick_ms while the child runs (status line, polling). */
typedef void (*vf_proc_tick_fn)(void *ctx, pid_t pgid, double elapsed_s);

struct vf_proc {
	/* --- what to run (all borrowed; set before vf_proc_run) --- */
	const char *const *argv;      /* argv[0] is looked up in the child's PATH */
	const char *cwd;              /* NULL = the current directory */
	const char *const *env_extra; /* NULL-terminated "NAME=value" list, or NULL */
	const char *gpus;             /* CUDA_VISIBLE_DEVICES value, or NULL */
	double timeout_s;             /* 0 = none */
	double stall_s;               /* 0 = none */
	double grace_s;               /* SIGTERM -> SIGKILL delay; 0 = 5 s */
	size_t line_max;              /* 0 = VF_PROC_LINE_MAX_DEFAULT */
	uint64_t mem_limit_bytes;     /* RLIMIT_DATA of the child; 0 = none */
	unsigned tick_ms;             /* 0 = 100 */
	vf_proc_line_fn on_line;
	vf_proc_tick_fn on_tick;
	void *ctx;

	/* --- set by vf_proc_interrupt(), e.g. from a signal handler --- */
	volatile sig_atomic_t interrupt;

	/* --- results --- */
	pid_t pid;                /* the child (also its process group id) */
	int status;               /* exit code, or 128 + signal */
	enum vf_proc_end end;
	double wall_s;            /* seconds from start to the end of the tree */
	uint64_t bytes_dropped;   /* bytes of over-long lines not passed on */
	bool killed_group;        /* vramfit had to signal the process group */
};

void vf_proc_init(struct vf_proc *p);

/* Start the child and supervise it until it and every process left in its
 * group are gone. Returns VF_OK when the child ran (whatever its status;
 * see p->status and p->end) and VF_ERR when it could not be started
 * ("cannot run 'uv': No such file or directory"). Makes the calling process
 * a child subreaper (PR_SET_CHILD_SUBREAPER) so orphaned grandchildren are
 * reparented to it and reaped here. Never leaves a process of the child's
 * group running on return, nor one that left it (setsid, a new group) and
 * was orphaned to this process: once the child is gone, this process's
 * children that were not there before the start, and their descendants,
 * get SIGTERM, SIGKILL after the grace period, and are reaped. */
vf_status vf_proc_run(struct vf_proc *p, struct vf_error *err);

/* Ask the running vf_proc_run() to end the child tree (TERM, then KILL after
 * the grace period). Async-signal-safe: meant for SIGINT/SIGTERM handlers. */
void vf_proc_interrupt(struct vf_proc *p);

/* The processes of a child's tree, from /proc: every process whose process
 * group is pgid, and every descendant of those (a grandchild that moved to
 * its own group or session is still found through its parent). Writes at
 * most max pids, the group leader first when alive; returns how many were
 * written (0 when /proc cannot be read). At most VF_PROC_SCAN_MAX processes
 * of the machine are looked at. */
#define VF_PROC_SCAN_MAX 32768
size_t vf_proc_pids(pid_t pgid, pid_t *pids, size_t max);

/* "exited", "timeout", "stalled", "interrupted". Static string. */
const char *vf_proc_end_name(enum vf_proc_end end);

#endif
