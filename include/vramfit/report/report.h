/* report.h - the HTML reports of `vramfit report` (and estimate --html,
 * fit --html, tune's RUN_DIR/report.html, plan's plan.html): one
 * self-contained page per report, rendered from ONE JSON data object that
 * the page also embeds (#vramfit-data), so what the charts show is what a
 * program can read back.
 *
 * The data object names its kind in "report": "estimate" (an estimate
 * --json object plus "phases" and "batch_sweep"), "fit" (a fit --json
 * object plus "grid" and "front"), "run" (vf_report_run_data) and
 * "history" (vf_report_history_data); "plan" is a plan --json object plus
 * the estimate's "phases". Fields each renderer reads are documented at
 * its file (lib/report/report_<kind>.c). */
#ifndef VRAMFIT_REPORT_H
#define VRAMFIT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/buf.h"
#include "vramfit/base/error.h"
#include "vramfit/estimate/estimate.h"

#define VF_REPORT_MAX_BYTES (2u << 20) /* a page stays under 2 MB */

/* Render the page for data (its "report" kind). Appends to out. */
vf_status vf_report_render(const cJSON *data, struct vf_buf *out, struct vf_error *err);
/* Render and write to path atomically (temp file + rename). */
vf_status vf_report_write(const cJSON *data, const char *path, struct vf_error *err);
/* The same as RUN/name of a run directory: opened relative to it, never
 * through a link (lib/base/rundir.h). */
vf_status vf_report_write_run(const cJSON *data, const char *run_dir, const char *name, struct vf_error *err);

/* The "phases" array of an estimate: each phase the step goes through with
 * its live bytes by term (vf_estimate.phase_bytes). Caller owns. */
cJSON *vf_report_phases_json(const struct vf_estimate *e);

/* The "run" data of a tune run directory: its plan.md decisions, every
 * trial recorded for it in the history database (store_path NULL: the
 * default), each with its step times (RUN/logs/trial-N.log, read with the
 * trainer profile's patterns) and its memory samples (RUN/logs/
 * trial-N.samples); the winner (winner_trial: its trial number as tune
 * decided it, 0: replay the profile's adoption rule, -1: none) and its
 * saving over the planned steps (config.yaml optimization.steps). Caller
 * owns *out. */
vf_status vf_report_run_data(const char *run_dir, const char *store_path, int winner_trial,
			     cJSON **out, struct vf_error *err);

/* The "history" data: every trial in the history database with a
 * prediction and a measurement, grouped by run. Caller owns *out. */
vf_status vf_report_history_data(const char *store_path, cJSON **out, struct vf_error *err);

/* ---- memory samples (tune's RUN/logs/trial-N.samples) ----
 * Text, one sample per line: "T BYTES" (seconds since the trial started,
 * bytes of memory in use by the trainer; decimal), after one header line
 * "# vramfit memory samples v1 source=SOURCE". At most
 * VF_SAMPLES_MAX_LINES lines of at most 128 bytes are read. */
#define VF_SAMPLES_MAX_LINES 1000000
#define VF_SAMPLES_MAX_BYTES (32u << 20)
struct vf_samples {
	double *t;
	int64_t *bytes;
	size_t n;
	char source[32];
};
void vf_samples_init(struct vf_samples *s);
void vf_samples_release(struct vf_samples *s);
/* Parse a samples file's text; what names it in errors. A bad line is an
 * error naming its number. */
vf_status vf_samples_parse(const char *text, size_t len, const char *what, struct vf_samples *s,
			   struct vf_error *err);
vf_status vf_samples_read(const char *path, struct vf_samples *s, struct vf_error *err);
/* At most max points keeping each bucket's largest sample (peaks survive
 * the thinning). Returns the count written to t/bytes. */
size_t vf_samples_thin(const struct vf_samples *s, size_t max, double *t, int64_t *bytes);

#endif
