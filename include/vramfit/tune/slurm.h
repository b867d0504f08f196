/* slurm.h - Slurm as the engine of a parallel sweep (a vf_tune_backend),
 * through its command-line clients (sbatch, squeue, scontrol, scancel; no
 * link dependency), and the parsers of what they print.
 *
 * One job array per round: task i runs trial i's config with the trainer
 * command in the trainer directory, its output to the trial's log, and
 * writes LOG.exit ("status seconds") when the trainer ends; --gres=gpu:N
 * with the run's GPU count, at most K tasks at once (--array=...%K). The
 * tasks are followed with squeue; a task that has left the queue gets its
 * final state from the job-completion record (jobcomp/filetxt, when the
 * cluster writes one), else from scontrol show job. TIMEOUT (Slurm's time
 * limit) reads as the trial's timeout; PREEMPTED, NODE_FAIL and BOOT_FAIL
 * are retried once in an array of their own; an interrupt cancels the
 * array with scancel and waits until squeue has none of it left. */
#ifndef VRAMFIT_SLURM_H
#define VRAMFIT_SLURM_H

#include <stdbool.h>
#include <stddef.h>

#include "vramfit/base/error.h"
#include "vramfit/tune/backend.h"

struct vf_slurm_opts {
	/* NULL = not passed: sbatch then applies its own defaults and the
	 * SBATCH_PARTITION / SBATCH_ACCOUNT / SBATCH_QOS / SBATCH_TIMELIMIT
	 * environment, exactly as it does for a person typing sbatch. */
	const char *partition;
	const char *account;
	const char *qos;
	const char *time_per_trial;     /* sbatch --time syntax: "10", "0:30:00", "1-0" */
	const char *const *sbatch_args; /* more sbatch arguments, NULL-terminated */
	double poll_s;                  /* between squeue calls; 0 = 1 s */
};

/* Caller owns; vf_tune_backend_free(). Strings are copied. */
struct vf_tune_backend *vf_tune_backend_slurm(int slots, const struct vf_slurm_opts *o);

/* One finished job as the job-completion record or scontrol tells it. */
struct vf_slurm_job {
	long job_id, array_job_id; /* -1 unknown */
	long array_task_id;        /* -1 none */
	char state[32];            /* "COMPLETED", "TIMEOUT", "CANCELLED", ... ("CANCELLED by 0" -> "CANCELLED") */
	char nodes[128];
	char exit_code[16];        /* "1:0" */
};

/* Parse a key=value line (a jobcomp/filetxt record, or one line of
 * scontrol -o show job). Returns false when it has no JobState. Values
 * longer than their field are cut. */
bool vf_slurm_parse_record(const char *line, size_t len, struct vf_slurm_job *job);

/* Run a Slurm client (argv[0] looked up in PATH) with the caller's
 * SLURM_* / SBATCH_* / SQUEUE_* / SINFO_* environment on top of vf_proc's
 * clean one; its standard output into out (at most 4 MiB), its standard
 * error (first line) into err when it fails. VF_OK when it exited 0. */
struct vf_buf;
vf_status vf_slurm_run(const char *const *argv, struct vf_buf *out, struct vf_error *err);

/* The last record of array task job_task in the jobcomp/filetxt file
 * path, into out; true only when it says the task ended
 * (vf_slurm_state_final). A requeue writes a record too (JobState=PENDING):
 * a task whose last record is that one has not ended, it waits to run
 * again. */
bool vf_slurm_jobcomp_final(const char *path, long job, long task, struct vf_slurm_job *out);

/* Whether a Slurm job state is final, and which states are retried. */
bool vf_slurm_state_final(const char *state);
bool vf_slurm_state_retry(const char *state);

#endif
