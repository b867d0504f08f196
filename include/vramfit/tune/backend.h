/* backend.h - where the trials of a parallel sweep run: a small interface
 * used by tune, like gpu_nvml/gpu_smi behind gpu. Two backends:
 *   local  (backend_local.c): K slots on this machine, one GPU set each,
 *          every trial under vf_proc in a child of its own
 *   slurm  (slurm.c): one Slurm job array per round, at most K tasks at a
 *          time, --gres=gpu:N each; followed with squeue, finished states
 *          from the job-completion record (or scontrol), cancelled with
 *          scancel.
 * A backend runs a batch of tasks and reports each as it ends; the sweep
 * classifies the task's log (lib/tune/trial.c) and records it at once. */
#ifndef VRAMFIT_TUNE_BACKEND_H
#define VRAMFIT_TUNE_BACKEND_H

#include <signal.h>
#include <stdbool.h>

#include "vramfit/base/error.h"
#include "vramfit/base/proc.h"

/* One trial to run. The backend writes the trainer's output to log. */
struct vf_tune_task {
	int index;                /* the trial number (trial-N) */
	const char *config;       /* its config file (absolute) */
	const char *log;          /* where its output goes (absolute) */
	/* --- results, set by the backend before done() --- */
	int status;               /* exit code or 128+signal; -1 unknown */
	enum vf_proc_end end;     /* exited, timeout (a time limit), interrupted */
	double wall_s;            /* seconds the trainer ran */
	double started;           /* wall-clock time (time(NULL)) it started; 0 unknown */
	char where[128];          /* "local GPUs 0,1", "slurm job 12_3 on node1" */
	char note[256];           /* e.g. "retried after NODE_FAIL"; "" none */
};

typedef void (*vf_tune_task_done_fn)(void *ctx, struct vf_tune_task *task);

/* What both backends are given to run a trial: the trainer command
 * template ({config}, {num_gpus}) and its directory. */
struct vf_tune_launch {
	const char *run_dir;      /* the run workspace (absolute): scripts under overfit/, logs/ */
	const char *cmd;          /* template, blank-separated words */
	const char *trainer_dir;
	int num_gpus;             /* GPUs per trial */
	double timeout_s, stall_s, grace_s;
	uint64_t mem_limit_bytes;
};

struct vf_tune_backend {
	const char *name;         /* "local", "slurm" */
	int slots;                /* trials at once */
	/* Run tasks[0..n), at most slots at once; call done as each ends (in
	 * this thread). VF_OK when every task ended or the batch was
	 * interrupted (unfinished tasks then have end = INTERRUPTED). */
	vf_status (*run)(struct vf_tune_backend *be, const struct vf_tune_launch *l,
			 struct vf_tune_task *tasks, size_t n, vf_tune_task_done_fn done, void *ctx,
			 struct vf_error *err);
	/* Async-signal-safe: end every running task, cancel the rest. */
	void (*interrupt)(struct vf_tune_backend *be);
	void (*free)(struct vf_tune_backend *be);
	volatile sig_atomic_t interrupted;
};

/* K local slots; gpu_sets[i] is slot i's CUDA_VISIBLE_DEVICES (NULL or
 * fewer entries: the slot leaves it as it is). Caller owns; be->free(). */
struct vf_tune_backend *vf_tune_backend_local(int slots, const char *const *gpu_sets);

void vf_tune_backend_free(struct vf_tune_backend *be);

#endif
