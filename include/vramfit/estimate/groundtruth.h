/* groundtruth.h - check the estimator against measured runs: a JSON-lines
 * file like ../shared/groundtruth/calibration.jsonl (first line `env`, then
 * one record per measured step: arch_cfg, mode, precision, optimizer, batch,
 * seq, grad_ckpt, lora_r, lora_targets, attention, quant; peak_alloc,
 * peak_reserved, step_median_s). The unit test and
 * `vramfit estimate --check-groundtruth FILE` share this code. */
#ifndef VRAMFIT_GROUNDTRUTH_H
#define VRAMFIT_GROUNDTRUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/model/arch.h"
#include "vramfit/base/error.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/setup.h"

#define VF_GT_MAX_FILE (16u << 20)  /* 16 MiB */
#define VF_GT_MAX_RECORDS 10000

struct vf_gt_row {
	char id[64];
	char status[8];             /* "ok" | "oom" */
	bool scored;                /* status ok: counts in the summary */
	int64_t meas_alloc, pred_alloc;    /* peak_alloc vs peak_allocated_bytes */
	int64_t meas_peak, pred_peak;      /* context + peak_reserved vs peak_bytes (simulated) */
	int64_t pred_peak_fast;            /* the fast path's (search) peak_bytes */
	double meas_step, pred_step;       /* step_median_s vs step_seconds (< 0 unknown) */
	double err_alloc, err_peak, err_step; /* signed relative errors (pred/meas - 1) */
	enum vf_phase phase;
	enum vf_term dominant;
};

struct vf_gt_report {
	struct vf_gt_row *rows;     /* owned */
	size_t n;
	size_t scored;
	int64_t context_bytes;      /* env.context_used_bytes (default when absent) */
	double med_alloc, max_alloc; /* |error|, fractions */
	double med_peak, max_peak;
	double med_step, max_step;
	size_t n_step;              /* records with a measured and predicted step time */
	size_t n_oom;               /* records that ran out of memory */
	size_t n_oom_predicted;     /* ... whose predicted peak exceeds the H200 */
};

/* Accuracy bounds on the calibration file (issue 12): the peak on the
 * device (simulated caching allocator) median <= 2 %, max <= 6 %; peak
 * allocated no worse than before the simulation (median 0.86 %, max
 * 2.05 %); step time (per-kernel model) median <= 8 %, max <= 25 %. */
#define VF_GT_ALLOC_MEDIAN 0.0090
#define VF_GT_ALLOC_MAX 0.0210
#define VF_GT_PEAK_MEDIAN 0.02
#define VF_GT_PEAK_MAX 0.06
#define VF_GT_STEP_MEDIAN 0.08
#define VF_GT_STEP_MAX 0.25

/* Whether r is within the bounds above. */
bool vf_gt_within_bounds(const struct vf_gt_report *r);

/* Map one record onto an architecture and a setup (model_type from the
 * record's `arch` name when arch_cfg has none). what names the file in
 * errors. */
vf_status vf_groundtruth_record(const cJSON *rec, const char *what, struct vf_arch *arch,
				struct vf_setup *setup, struct vf_error *err);

/* Read FILE (at most VF_GT_MAX_FILE bytes), estimate every record on an
 * H200 with the file's CUDA context, compute errors and the summary.
 * Caller owns r; vf_gt_report_release(). */
vf_status vf_groundtruth_check(const char *path, struct vf_gt_report *r, struct vf_error *err);

/* The same over text already in memory (not NUL-terminated); path names
 * it in errors. */
vf_status vf_groundtruth_check_text(const char *text, size_t len, const char *path,
				    struct vf_gt_report *r, struct vf_error *err);

void vf_gt_report_release(struct vf_gt_report *r);

#endif
