/* sbatch.h - RUN/launch.sbatch for a planned run on Slurm (`vramfit plan
 * --slurm`) and its check (`vramfit check RUN_DIR`).
 *
 * The script: nodes and GPUs per node from the plan (--nodes, --gres),
 * --time from the estimate with the profile's stated margin (configs.json
 * launch.slurm), logs into RUN/logs/, and one launcher per node through
 * srun (machine rank = $SLURM_NODEID, main process address = the first
 * host of $SLURM_JOB_NODELIST). The launcher and its arguments are profile
 * data; $VRAMFIT_LAUNCH replaces the launcher at run time. */
#ifndef VRAMFIT_SBATCH_H
#define VRAMFIT_SBATCH_H

#include "vramfit/base/buf.h"
#include "vramfit/base/error.h"
#include "vramfit/trainer/check.h"
#include "vramfit/trainer/plan.h"

#define VF_SBATCH_MAX_BYTES (1u << 20)

struct vf_sbatch_opts {
	int gpus_per_node;      /* 0 = min(the plan's GPUs, 8) */
	const char *partition;  /* NULL: not written (sbatch's default / $SBATCH_PARTITION) */
	const char *account;
	const char *qos;
};

struct vf_sbatch_info {
	int nodes, gpus_per_node;
	double time_s;          /* the --time written; 0 none (no estimate) */
	char time_note[256];    /* how it was made, or why there is none */
};

/* The script text into out. */
vf_status vf_sbatch_render(const struct vf_plan *p, const struct vf_sbatch_opts *o, struct vf_buf *out,
			   struct vf_sbatch_info *info, struct vf_error *err);

/* Render and write RUN/launch.sbatch atomically (mode 0755). */
vf_status vf_sbatch_write(const struct vf_plan *p, const struct vf_sbatch_opts *o, struct vf_sbatch_info *info,
			  struct vf_error *err);

/* Check the launch script text (NUL-terminated, len bytes) of a run: #SBATCH
 * --nodes, --gres=gpu:N, --time (pending when absent), --output into
 * RUN/logs/, the run directory and its config it names exist, one launcher
 * per node through srun with the machine rank and main address from
 * Slurm's variables. Items go to out with key "launch.sbatch" and the
 * script's line. */
void vf_sbatch_check_text(const char *text, size_t len, const char *run_dir, struct vf_check *out);

#endif
