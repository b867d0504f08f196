/* cmd-tune.c - `vramfit tune RUN_DIR`: the sanity run and the autotune
 * sweep of the real trainer (lib/tune/tune.c does the work). This file parses
 * the options, finds the run's tier, installs the SIGINT/SIGTERM handler
 * that ends the running trial's process tree, draws the status line on
 * stderr and prints the summary. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "parse-options.h"
#include "tune-predict.h"
#include "vramfit/base/term.h"
#include <fnmatch.h>

#include "vramfit/base/rundir.h"
#include "vramfit/base/buf.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/base/json.h"
#include "vramfit/report/report.h"
#include "vramfit/trainer/sweepfit.h"
#include "vramfit/trainer/tier.h"
#include "vramfit/trainer/plan.h"
#include "vramfit/trainer/profile.h"
#include "vramfit/tune/trial.h"
#include "vramfit/tune/slurm.h"
#include "vramfit/tune/tune.h"

static struct vf_tune *g_tune; /* for the signal handler only */
static volatile sig_atomic_t g_interrupted; /* SIGINT/SIGTERM during the sweep */

static void on_signal(int sig)
{
	(void)sig;
	g_interrupted = 1;
	vf_tune_interrupt(g_tune);
}

bool vf_cli_tune_interrupted(void)
{
	return g_interrupted != 0;
}

struct ui {
	bool quiet;
	bool tty;
	double last_plain;
	bool line_open;
};

static void clear_line(struct ui *u)
{
	if (u->line_open) {
		fputs("\r\033[K", stderr);
		u->line_open = false;
	}
}

static void on_event(void *ctx, const struct vf_tune_event *ev)
{
	struct ui *u = ctx;
	if (u->quiet)
		return;
	const struct vf_trial *t = ev->trial;
	char a[32], b[32], m[32], e[32], eta[32], safe[4 * sizeof t->evidence];
	vf_fmt_seconds(a, sizeof a, ev->step_seconds);
	vf_fmt_seconds(b, sizeof b, ev->median_seconds);
	vf_fmt_seconds(e, sizeof e, ev->elapsed_s);
	vf_fmt_seconds(eta, sizeof eta, ev->sweep_eta_s);
	if (ev->mem_bytes >= 0)
		vf_fmt_bytes(m, sizeof m, (double)ev->mem_bytes);
	else
		snprintf(m, sizeof m, "-");
	switch (ev->kind) {
	case VF_TUNE_TRIAL_START:
		clear_line(u);
		fprintf(stderr, "vramfit: trial %d/%d (%s): starting\n", t->index, ev->max_trials, t->change);
		u->last_plain = 0;
		break;
	case VF_TUNE_PROGRESS:
		if (u->tty) {
			fprintf(stderr, "\r\033[Ktrial %d/%d %s | step %d/%d | %s/step (median %s) | mem %s | %s | sweep ETA %s",
				t->index, ev->max_trials, t->change, ev->step, ev->total_steps, a, b, m, e, eta);
			u->line_open = true;
		} else if (ev->elapsed_s - u->last_plain >= 10) {
			u->last_plain = ev->elapsed_s;
			fprintf(stderr, "vramfit: trial %d/%d (%s): step %d/%d, %s/step (median %s), mem %s, %s elapsed\n",
				t->index, ev->max_trials, t->change, ev->step, ev->total_steps, a, b, m, e);
		}
		break;
	case VF_TUNE_TRIAL_END:
		clear_line(u);
		fprintf(stderr, "vramfit: trial %d/%d (%s): %s%s, step time %s, %s\n", t->index, ev->max_trials,
			t->change, vf_outcome_name(t->outcome), ev->resumed ? " (from history)" : "", b,
			vf_term_safe(safe, sizeof safe, t->evidence)); /* quotes the trainer */
		break;
	}
	fflush(stderr);
}

/* Predicted against measured, per trial: the estimate of each trial's
 * config (RUN/<sweep.json trial_config dir>/<name>), beside what ran. */
struct pvm {
	bool host;                 /* no GPU visible: the measured peaks are host memory, not compared */
	bool have[VF_TUNE_MAX_TRIALS];
	bool fits[VF_TUNE_MAX_TRIALS];
	int64_t peak[VF_TUNE_MAX_TRIALS];
	double step[VF_TUNE_MAX_TRIALS];
};

static void pvm_make(const struct vf_tune_result *r, const char *run, const struct predict_ctx *pc, int64_t card,
		     const char *trainer, struct pvm *out)
{
	memset(out, 0, sizeof *out);
	cJSON *sw = NULL;
	if (vf_profile_part(trainer ? trainer : VF_PROFILE_DEFAULT, "sweep", &sw, NULL) != VF_OK)
		return;
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(sw, "trial_config");
	const char *dir = vf_json_get_str(tc, "dir"), *name = vf_json_get_str(tc, "name");
	const char *n = name ? strstr(name, "{n}") : NULL;
	for (int i = 0; dir && n && i < r->ntrials && i < VF_TUNE_MAX_TRIALS; i++) {
		char path[PATH_MAX + 256];
		snprintf(path, sizeof path, "%s/%s/%.*s%d%s", run, dir, (int)(n - name), name, r->trials[i].index, n + 3);
		struct vf_yamldoc *d = NULL;
		struct vf_estimate e;
		if (r->trials[i].outcome == VF_OUTCOME_NOOP || vf_yamldoc_load_file(path, &d, NULL) != VF_OK)
			continue;
		if (vf_cli_predict_estimate(pc, d, &e, NULL) == VF_OK) {
			out->have[i] = true;
			out->peak[i] = e.peak_bytes;
			out->step[i] = e.step_seconds;
			out->fits[i] = pc->spec ? vf_estimate_fits(&e, pc->spec, NULL)
				       : card <= 0 || e.peak_bytes <= card;
		}
		vf_yamldoc_free(d);
	}
	cJSON_Delete(sw);
}

static void pct(char *o, size_t n, double pred, double meas)
{
	if (pred > 0 && meas > 0)
		snprintf(o, n, "%+.0f%%", (pred - meas) / meas * 100);
	else
		snprintf(o, n, "-");
}

static void pvm_print(const struct vf_tune_result *r, const struct pvm *p)
{
	static const char *const h[] = {"#", "change", "predicted", "measured", "peak pred", "peak meas", "error",
					"step pred", "step meas", "error"};
	struct vf_table tb;
	vf_table_init(&tb, 10, h);
	for (int c = 4; c < 10; c++)
		vf_table_set_right(&tb, c, true);
	for (int i = 0; i < r->ntrials; i++) {
		const struct vf_trial *t = &r->trials[i];
		char idx[8], pp[32] = "-", pm[32] = "-", pe[16], sp[32] = "-", sm[32] = "-", se[16];
		snprintf(idx, sizeof idx, "%d", t->index);
		if (p->have[i])
			vf_fmt_bytes(pp, sizeof pp, (double)p->peak[i]);
		if (t->peak_bytes > 0 && !p->host)
			vf_fmt_bytes(pm, sizeof pm, (double)t->peak_bytes);
		pct(pe, sizeof pe, p->have[i] ? (double)p->peak[i] : -1, p->host ? -1 : (double)t->peak_bytes);
		if (p->have[i] && p->step[i] > 0)
			vf_fmt_seconds(sp, sizeof sp, p->step[i]);
		if (t->step_seconds > 0)
			vf_fmt_seconds(sm, sizeof sm, t->step_seconds);
		pct(se, sizeof se, p->have[i] ? p->step[i] : -1, t->step_seconds);
		const char *pred = !p->have[i] ? "-" : p->fits[i] ? "fits" : "out of memory";
		vf_table_addf(&tb, idx, t->change, pred, vf_outcome_name(t->outcome), pp, pm, pe, sp, sm, se);
	}
	printf("\npredicted against measured (vramfit's estimate of each trial config; - where it has none):\n");
	vf_table_print(&tb, stdout);
	vf_table_release(&tb);
	bool any = false;
	for (int i = 0; i < r->ntrials; i++)
		any = any || p->have[i];
	if (p->host && any)
		printf("no GPU visible: measured host memory, not compared with the GPU prediction\n");
}

static cJSON *pvm_json(const struct vf_tune_result *r, const struct pvm *p)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < r->ntrials; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "trial", r->trials[i].index);
		if (p->have[i]) {
			cJSON_AddBoolToObject(o, "fits", p->fits[i]);
			cJSON_AddNumberToObject(o, "peak_bytes", (double)p->peak[i]);
			int64_t m = p->host ? -1 : r->trials[i].peak_bytes; /* host memory: not compared */
			vf_json_add_i64_or_null(o, "measured_peak_bytes", m, m > 0);
			if (m > 0 && p->peak[i] > 0)
				cJSON_AddNumberToObject(o, "peak_error_pct", ((double)p->peak[i] - (double)m) / (double)m * 100);
			else
				cJSON_AddNullToObject(o, "peak_error_pct");
			if (p->step[i] > 0)
				cJSON_AddNumberToObject(o, "step_seconds", p->step[i]);
			else
				cJSON_AddNullToObject(o, "step_seconds");
		} else {
			cJSON_AddNullToObject(o, "fits");
			cJSON_AddNullToObject(o, "peak_bytes");
			cJSON_AddNullToObject(o, "measured_peak_bytes");
			cJSON_AddNullToObject(o, "peak_error_pct");
			cJSON_AddNullToObject(o, "step_seconds");
		}
		if (r->trials[i].step_seconds > 0)
			cJSON_AddNumberToObject(o, "measured_step_seconds", r->trials[i].step_seconds);
		else
			cJSON_AddNullToObject(o, "measured_step_seconds");
		cJSON_AddStringToObject(o, "measured_outcome", vf_outcome_name(r->trials[i].outcome));
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* The training size the run's plan estimated at (plan.json's
 * preprocess.resolution_buckets, its largest bucket) into dims, as vramfit
 * run reads it: tune's predictions are then the plan's predicted sweep.
 * Left as it is (0: the trial config's validation video_dims) when the run
 * has no readable plan.json. */
static void plan_buckets(const char *run, int dims[3])
{
	char path[PATH_MAX];
	cJSON *plan = NULL;
	if (snprintf(path, sizeof path, "%s/plan.json", run) >= (int)sizeof path ||
	    vf_json_parse_file(path, (size_t)4 << 20, &plan, NULL) != VF_OK)
		return;
	const char *b = vf_json_get_str(cJSON_GetObjectItemCaseSensitive(plan, "preprocess"),
					"resolution_buckets");
	int d[3] = {0, 0, 0};
	if (b && vf_plan_largest_bucket(b, d, NULL) == VF_OK)
		memcpy(dims, d, sizeof d);
	cJSON_Delete(plan);
}

/* The run's tier: --tier, else the first tier name of the profile that
 * plan.md mentions. NULL when unknown. */
static const char *find_tier(const char *run, const char *trainer, char *out, size_t n)
{
	cJSON *tiers = NULL;
	if (vf_profile_part(trainer, "tiers", &tiers, NULL))
		return NULL;
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/plan.md", run);
	struct vf_buf b;
	vf_buf_init(&b, 1 << 20);
	const char *found = NULL;
	if (vf_buf_read_file(&b, path, 1 << 20, NULL) == VF_OK) {
		const cJSON *it;
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(tiers, "tiers"))
		{
			const char *name = vf_json_get_str(it, "name");
			if (name && strstr(b.data, name)) {
				snprintf(out, n, "%s", name);
				found = out;
				break;
			}
		}
	}
	vf_buf_release(&b);
	cJSON_Delete(tiers);
	return found;
}

static cJSON *trial_json(const struct vf_trial *t, bool host)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "trial", t->index);
	cJSON_AddStringToObject(o, "change", t->change);
	cJSON_AddStringToObject(o, "outcome", vf_outcome_name(t->outcome));
	cJSON_AddStringToObject(o, "evidence", t->evidence);
	cJSON *d = cJSON_Parse(t->deltas);
	cJSON_AddItemToObject(o, "deltas", d ? d : cJSON_CreateObject());
	vf_json_add_i64_or_null(o, "exit", t->status, t->status >= 0);
	cJSON_AddNumberToObject(o, "steps_done", t->steps_done);
	if (t->step_seconds >= 0)
		cJSON_AddNumberToObject(o, "step_seconds", t->step_seconds);
	else
		cJSON_AddNullToObject(o, "step_seconds");
	vf_json_add_i64_or_null(o, "peak_bytes", t->peak_bytes, t->peak_bytes > 0);
	if (t->peak_source[0])
		cJSON_AddStringToObject(o, "peak_source", t->peak_source);
	else
		cJSON_AddNullToObject(o, "peak_source");
	vf_json_add_i64_or_null(o, "peak_trainer_bytes", t->peak_trainer_bytes,
				t->peak_trainer_bytes > 0);
	vf_json_add_i64_or_null(o, "peak_polled_bytes", t->peak_polled_bytes, t->peak_polled_bytes > 0);
	vf_json_add_i64_or_null(o, "predicted_peak_bytes", t->predicted_peak_bytes,
				t->predicted_peak_bytes >= 0);
	/* both figures are nvidia-smi's memory.used (CUDA context, PyTorch's
	 * reserve and any other allocation on the GPU): the trainer prints
	 * memory.used / 1024 sampled at start, end and every 200 steps, so it
	 * can miss the validation and loading peaks the prediction includes */
	cJSON_AddStringToObject(o, "predicted_peak_measure", "nvidia-smi memory.used");
	if (t->peak_trainer_bytes > 0 && t->predicted_peak_bytes > 0 && !host) /* no GPU visible: not compared */
		cJSON_AddNumberToObject(o, "trainer_peak_vs_predicted",
					(double)t->peak_trainer_bytes / (double)t->predicted_peak_bytes);
	else
		cJSON_AddNullToObject(o, "trainer_peak_vs_predicted");
	if (t->predicted_step_seconds > 0)
		cJSON_AddNumberToObject(o, "predicted_step_seconds", t->predicted_step_seconds);
	else
		cJSON_AddNullToObject(o, "predicted_step_seconds");
	cJSON_AddNumberToObject(o, "wall_seconds", t->wall_seconds);
	cJSON_AddStringToObject(o, "config_hash", t->config_hash);
	return o;
}

/* The summary as the --json object. */
static void print_results_json(const struct vf_tune_result *r, const char *run, const cJSON *rem,
			       const struct vf_trial *win, double save, const struct pvm *pv)
{
	const cJSON *it;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "run_dir", run);
	cJSON *arr = cJSON_AddArrayToObject(o, "trials");
	for (int i = 0; i < r->ntrials; i++)
		cJSON_AddItemToArray(arr, trial_json(&r->trials[i], pv->host));
	cJSON_AddBoolToObject(o, "host_memory", pv->host);
	cJSON_AddItemToObject(o, "predicted", pvm_json(r, pv));
	cJSON_AddBoolToObject(o, "baseline_failed", r->baseline_failed);
	if (win) {
		cJSON *w = cJSON_AddObjectToObject(o, "winner");
		cJSON_AddNumberToObject(w, "trial", win->index);
		cJSON_AddStringToObject(w, "change", win->change);
		cJSON *d = cJSON_Parse(r->winner_deltas);
		cJSON_AddItemToObject(w, "deltas", d ? d : cJSON_CreateObject());
		if (win->step_seconds >= 0)
			cJSON_AddNumberToObject(w, "step_seconds", win->step_seconds);
		else
			cJSON_AddNullToObject(w, "step_seconds");
		cJSON_AddNumberToObject(w, "saves_seconds_per_step", save);
		cJSON_AddNumberToObject(w, "planned_steps", (double)r->planned_steps);
		cJSON_AddNumberToObject(w, "saves_seconds_total", save * (double)r->planned_steps);
	} else {
		cJSON_AddNullToObject(o, "winner");
	}
	cJSON_AddBoolToObject(o, "patched", r->patched);
	cJSON_AddStringToObject(o, "deferred", r->deferred);
	cJSON_AddStringToObject(o, "note", r->note);
	cJSON *ra = cJSON_AddArrayToObject(o, "remedies");
	cJSON_ArrayForEach(it, rem)
		cJSON_AddItemToArray(ra, cJSON_CreateString(it->valuestring));
	vf_cli_print_json(o);
	cJSON_Delete(o);
}

/* One row per trial. */
static void print_trials(const struct vf_tune_result *r)
{
	static const char *const h[] = {"#", "change", "outcome", "step time", "peak mem", "predicted",
					"wall", "evidence"};
	struct vf_table tb;
	vf_table_init(&tb, 8, h);
	vf_table_set_right(&tb, 0, true);
	for (int c = 3; c < 7; c++)
		vf_table_set_right(&tb, c, true);
	for (int i = 0; i < r->ntrials; i++) {
		const struct vf_trial *t = &r->trials[i];
		char idx[16], st[32], pk[32], pr[32], wl[32], ev[72];
		snprintf(idx, sizeof idx, "%d%s", t->index, i == r->winner ? "*" : "");
		vf_fmt_seconds(st, sizeof st, t->step_seconds);
		if (t->peak_bytes > 0)
			vf_fmt_bytes(pk, sizeof pk, (double)t->peak_bytes);
		else
			snprintf(pk, sizeof pk, "-");
		if (t->predicted_peak_bytes >= 0)
			vf_fmt_bytes(pr, sizeof pr, (double)t->predicted_peak_bytes);
		else
			snprintf(pr, sizeof pr, "-");
		if (t->outcome == VF_OUTCOME_NOOP || t->outcome == VF_OUTCOME_SKIPPED)
			snprintf(wl, sizeof wl, "-");
		else
			vf_fmt_seconds(wl, sizeof wl, t->wall_seconds);
		snprintf(ev, sizeof ev, "%.60s%s", t->evidence, strlen(t->evidence) > 60 ? "..." : "");
		const char *cells[] = {idx, t->change, vf_outcome_name(t->outcome), st, pk, pr, wl, ev};
		vf_table_add(&tb, cells);
	}
	vf_table_print(&tb, stdout);
	vf_table_release(&tb);
}

static void print_results(const struct vf_tune_result *r, bool json, const char *run,
			  const cJSON *rem, const struct pvm *pv)
{
	const struct vf_trial *base = r->ntrials > 0 ? &r->trials[0] : NULL;
	const struct vf_trial *win = r->winner >= 0 ? &r->trials[r->winner] : NULL;
	double save = (win && base && base->step_seconds > 0 && win->step_seconds > 0)
			      ? base->step_seconds - win->step_seconds
			      : 0;
	const cJSON *it;
	if (json) {
		print_results_json(r, run, rem, win, save, pv);
		return;
	}
	print_trials(r);
	pvm_print(r, pv);
	if (r->deferred[0])
		printf("not tried: %s\n", r->deferred);
	if (r->baseline_failed && base) {
		char safe[4 * sizeof base->evidence];
		printf("\nThe baseline failed (%s): %s\nNothing was changed. Remedies, cheapest first:\n",
		       vf_outcome_name(base->outcome), vf_term_safe(safe, sizeof safe, base->evidence));
		int k = 1;
		cJSON_ArrayForEach(it, rem)
			printf("  %d. %s\n", k++, it->valuestring);
		return;
	}
	if (win) {
		char a[32], b[32], c[32];
		vf_fmt_seconds(a, sizeof a, win->step_seconds);
		vf_fmt_seconds(b, sizeof b, save);
		vf_fmt_seconds(c, sizeof c, save * (double)r->planned_steps);
		printf("\nwinner: trial %d (%s), %s per step", win->index, win->change, a);
		if (r->winner > 0)
			printf("; saves %s per step, %s over the planned %lld steps", b, c,
			       (long long)r->planned_steps);
		printf("\n");
		if (r->patched) {
			printf("config.yaml: patched:");
			cJSON *d = cJSON_Parse(r->winner_deltas);
			const cJSON *kv;
			cJSON_ArrayForEach(kv, d)
				if (cJSON_IsString(kv))
					printf("%s %s: %s", kv == d->child ? "" : ",", kv->string, kv->valuestring);
			cJSON_Delete(d);
			printf("\n");
		}
		else if (r->winner == 0)
			printf("config.yaml: unchanged (the baseline is the fastest stable config)\n");
	}
	if (r->note[0]) {
		char safe[4 * sizeof r->note];
		printf("note: %s\n", vf_term_safe(safe, sizeof safe, r->note));
	}
}

/* The summary, with the remedies the run's config.yaml (the baseline,
 * unchanged) does not already apply when the baseline failed. */
static void print_summary(const struct vf_tune_result *r, bool json, const char *run,
			  const struct vf_trial_patterns *pat, const struct pvm *pv)
{
	const struct vf_trial *base = r->ntrials > 0 ? &r->trials[0] : NULL;
	cJSON *rem = NULL;
	if (r->baseline_failed && base) {
		char path[4096];
		struct vf_error err = {0};
		struct vf_yamldoc *cfg = NULL;
		snprintf(path, sizeof path, "%s/config.yaml", run);
		if (vf_yamldoc_load_file(path, &cfg, &err) != VF_OK)
			cfg = NULL; /* unread: every remedy */
		rem = vf_trial_remedies(pat, base->outcome, cfg);
		vf_yamldoc_free(cfg);
	}
	print_results(r, json, run, rem, pv);
	cJSON_Delete(rem);
}

/* RUN_DIR/report.html at the end of a sweep (lib/report): every trial
 * recorded for the run, the winner as the sweep decided it. A failure only
 * costs the page (warned). */
static void write_report(const char *run, const char *store, const struct vf_tune_result *res)
{
	cJSON *d = NULL;
	struct vf_error err = {0};
	int winner = res->winner >= 0 && res->winner < res->ntrials ? res->trials[res->winner].index : -1;
	if (vf_report_run_data(run, store, winner, &d, &err) || vf_report_write_run(d, run, "report.html", &err))
		vf_cli_warn("report.html not written: %s", err.msg);
	cJSON_Delete(d);
}

/* --slurm and its options; unset ones are left to sbatch (SBATCH_*). */
struct slurm_cli {
	bool on;
	int max_parallel;
	struct vf_slurm_opts so;
	const char *extra[VF_OPT_LIST_MAX + 1];
	int nextra;
};

struct tune_args {
	struct vf_tune_opts o;
	bool json, quiet, no_check, slurm;
	const char *tier, *gpu, *buckets;
	int64_t steps, max_trials, parallel, max_parallel;
	double memory_mib;
	struct vf_slurm_opts so;
	struct vf_opt_list sbatch_arg;
};

#define OPT_T struct tune_args
static const struct vf_option options[] = {
	OPT_TEXT("trainer-cmd", "T", o.trainer_cmd,
		 "launch command; {config} is the trial config (default: the\n"
		 "profile's `uv run python scripts/train.py {config}\n"
		 "--disable-progress-bars`), split on blanks, no shell"),
	OPT_DIR("trainer-dir", "D", o.trainer_dir, "where the trainer runs (default $LTX_TRAINER_DIR, else .)"),
	OPT_TEXT("trainer", "NAME", o.trainer, "trainer profile (default ltx2: data/profiles/ltx2/)"),
	OPT_INT("steps", "N", steps, 1, 1e7, "steps per trial (default 50)"),
	OPT_INT("max-trials", "N", max_trials, 1, VF_TUNE_MAX_TRIALS, "trials in all, baseline included (default 5)"),
	OPT_DOUBLE("timeout", "S", o.timeout_s, 0.01, 1e7, "per-trial wall-clock limit in seconds"),
	OPT_DOUBLE("stall", "S", o.stall_s, 0.01, 1e7,
		   "end a trial that prints nothing for S seconds (default 600,\n"
		   "the profile's stall_seconds)"),
	OPT_DOUBLE("grace", "S", o.grace_s, 0.01, 1e7, "SIGTERM -> SIGKILL delay when ending a trial (default 5)"),
	OPT_DOUBLE("memory-limit", "M", memory_mib, 16, 1e9,
		   "limit each trainer's data memory to M MiB (RLIMIT_DATA):\n"
		   "a CPU trainer then hits a real out-of-memory"),
	OPT_BOOL("sweep-batch", o.sweep_batch,
		 "also try batch size 2 then 4 (accumulation scaled to keep\n"
		 "the effective batch); deferred by default"),
	OPT_BOOL("try-no-ckpt", o.try_no_ckpt, "also try gradient checkpointing off (80GB+ tier only)"),
	OPT_TEXT("resolution-buckets", "WxHxF[;...]", buckets,
		 "the training size of the predicted peaks (default: the\n"
		 "plan's, RUN_DIR/plan.json; without one the trial config's\n"
		 "validation video_dims)"),
	OPT_TEXT("tier", "NAME", tier,
		 "the run's tier (default: read from RUN_DIR/plan.md, else\n"
		 "decided from the GPUs)"),
	OPT_TEXT("gpus", "LIST", o.gpus, "CUDA_VISIBLE_DEVICES for the trainer"),
	OPT_TEXT("gpu", "SPEC", gpu,
		 "the GPU to predict for (e.g. h100-80gb, h200:2), instead of\n"
		 "probing: sets the card size of the predicted-OOM skip; with\n"
		 "no GPU visible the memory measured is the host's, not\n"
		 "compared with the prediction, recorded as cpu"),
	OPT_BOOL("no-skip", o.no_skip, "run trials predicted to run out of memory anyway"),
	OPT_INT("parallel", "K", parallel, 1, 16,
		"the parallel strategy on K local GPU sets (the GPUs, --gpus\n"
		"LIST or probed, split in K equal sets): round 1 runs the\n"
		"baseline and every single change at once, round 2 the\n"
		"combination of the changes that improved (estimator-checked)"),
	OPT_BOOL("slurm", slurm,
		 "the parallel strategy on Slurm: one job array per round, a\n"
		 "task per trial with --gres=gpu:N (N = the run's GPUs: --gpus,\n"
		 "--gpu SPEC or probed); followed with squeue, final states from\n"
		 "the job-completion record or scontrol; Ctrl-C runs scancel"),
	OPT_TEXT("partition", "P", so.partition, "passed to sbatch (default: sbatch's, e.g. $SBATCH_PARTITION)"),
	OPT_TEXT("account", "A", so.account, "passed to sbatch (default: sbatch's)"),
	OPT_TEXT("qos", "Q", so.qos, "passed to sbatch (default: sbatch's)"),
	OPT_TEXT("time-per-trial", "T", so.time_per_trial,
		 "sbatch --time of each task (default $SBATCH_TIMELIMIT or the\n"
		 "partition's); a task Slurm kills at its limit is a timeout"),
	OPT_INT("max-parallel", "K", max_parallel, 1, VF_TUNE_MAX_TRIALS, "Slurm tasks at once (default 2)"),
	OPT_LIST("sbatch-arg", "ARG", sbatch_arg,
		 "one more sbatch argument (repeatable), e.g. --sbatch-arg --mem=64G"),
	OPT_BOOL("no-check", no_check,
		 "skip the self-check of each trial config before launch\n"
		 "(paths exist, keys and values known: vramfit check), and\n"
		 "the trainer's own validation before trial 1 (check\n"
		 "--trainer-validate, when the checkout has its .venv)"),
	OPT_BOOL("fresh", o.fresh, "forget this run's recorded trials and run them all again"),
	OPT_TEXT("history", "PATH", o.store_path,
		 "the history database (default $VRAMFIT_HISTORY, else\n"
		 "$XDG_DATA_HOME/vramfit/history.db, else ~/.local/share/vramfit/)"),
	OPT_BOOL("json", json, "the summary as JSON: {\"trials\": [...], \"winner\", \"patched\", ...}"),
	OPT_BOOL("quiet", quiet, "no status line"),
	OPT_END(),
};
#undef OPT_T

/* The command line into ta, with the checks between options. Returns -1
 * or the exit code. */
static int parse(int argc, char **argv, struct tune_args *ta)
{
	memset(ta, 0, sizeof *ta);
	ta->o.trainer = VF_PROFILE_DEFAULT;
	int n, rc = vf_opt_parse("tune", options, ta, argc, argv, 0, &n);
	if (rc >= 0)
		return rc;
	if (n > 1)
		return vf_cli_usage("tune", "one RUN_DIR only (got '%s' and '%s')", argv[0], argv[1]);
	if (n == 0)
		return vf_cli_usage("tune", "missing RUN_DIR (the run workspace made by vramfit plan)");
	struct vf_tune_opts *o = &ta->o;
	o->run_dir = argv[0];
	o->steps = (int)ta->steps;
	o->max_trials = (int)ta->max_trials;
	o->mem_limit_bytes = (uint64_t)(ta->memory_mib * 1024 * 1024);
	if (o->gpus) {
		o->num_gpus = 1;
		for (const char *p = o->gpus; *p; p++)
			o->num_gpus += *p == ',';
	}
	if (ta->slurm && ta->parallel)
		return vf_cli_usage("tune", "--slurm and --parallel: choose one (--max-parallel sets Slurm's slots)");
	if (ta->slurm && (o->timeout_s > 0 || o->stall_s > 0 || o->mem_limit_bytes > 0))
		return vf_cli_usage("tune", "--timeout, --stall and --memory-limit are for local trials; on Slurm use "
				    "--time-per-trial and --sbatch-arg --mem=...");
	const struct vf_slurm_opts *so = &ta->so;
	if (!ta->slurm && (ta->max_parallel || ta->sbatch_arg.n || so->partition || so->account ||
			   so->qos || so->time_per_trial))
		return vf_cli_usage("tune", "--partition, --account, --qos, --time-per-trial, --max-parallel and "
				    "--sbatch-arg go with --slurm");
	return -1;
}

/* --parallel K: split the GPUs (--gpus LIST, else 0..count-1) into K equal
 * sets, one per slot; none when there are no GPUs. */
static int local_sets(struct vf_tune_opts *o, int k, size_t probed, char sets[][128], const char **ptrs)
{
	char all[64][16];
	int n = 0;
	if (o->gpus) {
		char copy[1024];
		snprintf(copy, sizeof copy, "%s", o->gpus);
		for (char *sv = NULL, *w = strtok_r(copy, ",", &sv); w && n < 64; w = strtok_r(NULL, ",", &sv))
			snprintf(all[n++], sizeof all[0], "%s", w);
	} else {
		for (size_t i = 0; i < probed && n < 64; i++)
			snprintf(all[n++], sizeof all[0], "%zu", i);
	}
	if (n == 0)
		return 0;
	if (n % k != 0)
		return vf_cli_usage("tune", "--parallel %d: %d GPU%s cannot be split into %d equal sets", k, n,
				    n > 1 ? "s" : "", k);
	int per = n / k;
	for (int i = 0; i < k; i++) {
		sets[i][0] = '\0';
		for (int j = 0; j < per; j++) {
			size_t l = strlen(sets[i]);
			snprintf(sets[i] + l, 128 - l, "%s%s", j ? "," : "", all[i * per + j]);
		}
		ptrs[i] = sets[i];
	}
	ptrs[k] = NULL;
	o->gpu_sets = ptrs;
	o->num_gpus = per;
	o->gpus = NULL;
	return 0;
}

/* Whether a GPU is visible here (NVML or nvidia-smi reads one): with
 * --gpu SPEC the trainer's memory can only be measured on one. */
static bool gpu_visible(void)
{
	struct vf_gpu_set vis;
	vf_gpu_set_init(&vis);
	bool seen = vf_gpu_probe(&vis, NULL) == VF_OK && vis.count > 0 &&
		    (vis.source == VF_GPU_NVML || vis.source == VF_GPU_SMI);
	vf_gpu_set_release(&vis);
	return seen;
}

/* The GPUs: --gpu SPEC (simulated), else probed. They give the card
 * size for the predicted-OOM skip, the label in the history and, when
 * plan.md does not say, the tier. With --gpu SPEC and no GPU visible the
 * memory measured is the host's: the history is told "cpu", not the SPEC's
 * GPU (o->host_memory). Returns -1 or the exit code. */
static int use_gpus(struct vf_tune_opts *o, struct predict_ctx *pc, const char *gpu_spec, char *label,
		    size_t nlabel, char *tierbuf, size_t ntier, size_t *probed)
{
	struct vf_error err = {0};
	struct vf_gpu_set gs;
	vf_gpu_set_init(&gs);
	if (gpu_spec ? vf_gpu_set_add_spec(&gs, gpu_spec, &err) : vf_gpu_probe(&gs, &err)) {
		vf_gpu_set_release(&gs);
		return gpu_spec ? vf_cli_usage("tune", "--gpu: %s", err.msg) : vf_cli_fail_err(&err);
	}
	pc->gpus = (int)gs.count;
	struct vf_tier tr;
	if (gs.count > 0) {
		const struct vf_gpu *small = &gs.gpus[0];
		for (size_t i = 1; i < gs.count; i++)
			if (gs.gpus[i].memory_total_mib < small->memory_total_mib)
				small = &gs.gpus[i];
		pc->spec = small->catalog_id[0] ? vf_gpu_catalog_find(small->catalog_id) : NULL;
		if (small->memory_total_mib > 0)
			o->card_bytes = small->memory_total_mib * 1024 * 1024;
		snprintf(label, nlabel, "%s x %zu", small->name, gs.count);
		o->poll_gpu = gpu_spec ? gpu_visible() : gs.source == VF_GPU_NVML || gs.source == VF_GPU_SMI;
		if (gpu_spec && !o->poll_gpu)
			snprintf(label, nlabel, "cpu (no GPU visible; --gpu %s)", gpu_spec);
		if (!o->tier && vf_tier_decide(&gs, o->trainer, NULL, &tr, NULL) == VF_OK && !tr.gated) {
			snprintf(tierbuf, ntier, "%s", tr.name);
			o->tier = tierbuf;
		}
	}
	o->host_memory = !o->poll_gpu;
	*probed = gs.count;
	vf_gpu_set_release(&gs);
	return -1;
}

/* --slurm: the backend that runs each round as a job array; one trial =
 * the run's GPUs (--gpus LIST, else the GPUs given or probed). */
static struct vf_tune_backend *slurm_backend(struct vf_tune_opts *o, struct slurm_cli *sc, size_t probed,
					     char *label, size_t nlabel)
{
	struct vf_tune_backend *slurm;
	/* one trial = the run's GPUs: --gpus LIST, else the GPUs given or probed */
	if (!o->gpus)
		o->num_gpus = probed > 0 ? (int)probed : 1;
	o->gpus = NULL;
	sc->extra[sc->nextra] = NULL;
	sc->so.sbatch_args = sc->extra;
	slurm = vf_tune_backend_slurm(sc->max_parallel > 0 ? sc->max_parallel : 2, &sc->so);
	if (!slurm)
		return NULL;
	o->backend = slurm;
	o->host_memory = false; /* the trials run on the cluster's GPUs: their peaks are the trainer's */
	snprintf(label + strlen(label), nlabel - strlen(label), " (slurm%s%s)",
		 sc->so.partition || getenv("SBATCH_PARTITION") ? ": " : "",
		 sc->so.partition ? sc->so.partition : getenv("SBATCH_PARTITION") ? getenv("SBATCH_PARTITION") : "");
	return slurm;
}

/* The sweep, Ctrl-C and SIGTERM ending the running trial; then the
 * summary and the report. Returns the exit code. */
static int sweep(struct vf_tune_opts *o, struct ui *u, struct vf_trial_patterns *pat, bool json,
		 const char *abs_run)
{
	struct vf_error err = {0};
	struct vf_tune *t = vf_tune_new();
	struct vf_tune_result *res = calloc(1, sizeof *res);
	if (!t || !res) {
		vf_tune_free(t);
		free(res);
		return vf_cli_fail("out of memory");
	}
	g_tune = t;
	g_interrupted = 0;
	struct sigaction sa, old_int, old_term, old_hup;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup); /* the terminal or ssh session gone: as SIGTERM */

	vf_status st = vf_tune_run(t, o, res, &err);

	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	g_tune = NULL;
	clear_line(u);
	int rc;
	if (st) {
		rc = vf_cli_fail_err(&err);
		if (res->interrupted && res->ntrials > 0 && !u->quiet)
			fprintf(stderr, "vramfit: note: %d trial%s done before the interruption\n",
				res->ntrials - 1, res->ntrials - 1 == 1 ? "" : "s");
	} else {
		struct pvm pv;
		pvm_make(res, abs_run, o->predict_ctx, o->card_bytes, o->trainer, &pv);
		pv.host = o->host_memory;
		print_summary(res, json, abs_run, pat, &pv);
		write_report(abs_run, o->store_path, res);
		rc = res->baseline_failed ? VF_EXIT_FAIL : VF_EXIT_OK;
	}
	vf_tune_free(t);
	free(res);
	return rc;
}

static int run(int argc, char **argv)
{
	struct tune_args ta;
	int rc0 = parse(argc, argv, &ta);
	if (rc0 >= 0)
		return rc0;
	struct vf_tune_opts o = ta.o;
	bool json = ta.json, quiet = ta.quiet, no_check = ta.no_check;
	const char *tier = ta.tier, *gpu_spec = ta.gpu;
	struct slurm_cli sc = {.on = ta.slurm, .max_parallel = (int)ta.max_parallel, .so = ta.so};
	for (int i = 0; i < ta.sbatch_arg.n; i++)
		sc.extra[i] = ta.sbatch_arg.v[i];
	sc.nextra = ta.sbatch_arg.n;
	int parallel = (int)ta.parallel;
	o.self_check = !no_check;
	char abs_run[PATH_MAX], tierbuf[64];
	struct vf_rundir rd;
	struct vf_error rerr = {0};
	vf_status rst = vf_rundir_open(&rd, o.run_dir, 0, &rerr); /* never a link: its files land where named */
	vf_rundir_close(&rd);
	if (rst == VF_ERR)
		return vf_cli_fail_err(&rerr);
	if (!realpath(o.run_dir, abs_run))
		return vf_cli_fail("%s: no such run directory", o.run_dir);
	if (vf_rundir_lock(abs_run, "vramfit tune", &rerr) != VF_OK) /* one command per run at a time */
		return vf_cli_fail_err(&rerr);
	o.run_dir = abs_run;
	o.tier = tier ? tier : find_tier(abs_run, o.trainer, tierbuf, sizeof tierbuf);

	struct predict_ctx pc = {0};
	char label[160] = "cpu";
	size_t probed = 0;
	if (ta.buckets) {
		struct vf_error berr = {0};
		if (vf_plan_largest_bucket(ta.buckets, pc.train_dims, &berr))
			return vf_cli_usage("tune", "%s", berr.msg);
	} else {
		plan_buckets(abs_run, pc.train_dims);
	}
	int grc = use_gpus(&o, &pc, gpu_spec, label, sizeof label, tierbuf, sizeof tierbuf, &probed);
	if (grc >= 0)
		return grc;
	o.gpu_label = label;
	char sets[16][128];
	const char *set_ptrs[17];
	if (parallel > 1) {
		if (local_sets(&o, parallel, gpu_spec ? 0 : probed, sets, set_ptrs))
			return 2;
		o.parallel = parallel;
	}
	struct vf_tune_backend *slurm = NULL;
	if (sc.on && !(slurm = slurm_backend(&o, &sc, probed, label, sizeof label)))
		return vf_cli_fail("out of memory");
	struct vf_error err = {0};
	if (vf_profile_part(o.trainer, "configs", &pc.configs, &err))
		return vf_cli_fail_err(&err);
	o.predict = vf_cli_predict_peak;
	o.predict_step = vf_cli_predict_step;
	o.predict_ctx = &pc;

	/* The status line redraws itself on a terminal (not colour: NO_COLOR
	 * does not matter); plain lines otherwise. */
	const char *term = getenv("TERM");
	struct ui u = {.quiet = quiet, .tty = isatty(2) && !(term && strcmp(term, "dumb") == 0)};
	o.on_event = on_event;
	o.event_ctx = &u;

	struct vf_trial_patterns *pat = NULL;
	if (vf_trial_patterns_load(o.trainer, &pat, &err)) {
		cJSON_Delete(pc.configs);
		vf_tune_backend_free(slurm);
		return vf_cli_fail_err(&err);
	}
	int rc = sweep(&o, &u, pat, json, abs_run);
	vf_trial_patterns_free(pat);
	cJSON_Delete(pc.configs);
	vf_tune_backend_free(slurm);
	return rc;
}

const struct vf_cli_command vf_cmd_tune = {
	.name = "tune",
	.summary = "sanity run + autotune sweep of the real trainer; patch the winner into config.yaml",
	.usage =
		"usage: vramfit tune RUN_DIR [options]\n"
		"\n"
		"Run the trainer for a few steps on one sample (the profile's trial data root,\n"
		"sweep.json trial_config.data_root; LTX-2: RUN_DIR/overfit/.precomputed),\n"
		"trial by trial: trial 1 is the run's config.yaml as planned, each later trial\n"
		"the current best plus one change, in the profile's order (sweep.json:\n"
		"quantization off, optimizer adamw, then the flag-gated ones). Each trial's\n"
		"config is RUN_DIR/overfit/trial-N.yaml, its output RUN_DIR/logs/trial-N.log;\n"
		"one line per trial goes to RUN_DIR/autotune.log and a record to the history\n"
		"database. The fastest stable trial's deltas are patched into config.yaml\n"
		"(atomically) at the end. A trial already recorded is not run again: after an\n"
		"interruption, run the same command to resume.\n",
	.options = options,
	.tail =
		"The trainer runs in its own process group with a clean environment (COLUMNS=200,\n"
		"PYTHONUNBUFFERED=1, CUDA_DEVICE_ORDER=PCI_BUS_ID; see README). Ctrl-C or SIGTERM\n"
		"ends the running trial's whole process tree, leaves config.yaml untouched and\n"
		"keeps the finished trials recorded.\n"
		"\n"
		"Exit status: 0 the sweep ran (see the table), 1 the baseline failed, the sweep\n"
		"could not start or was interrupted, 2 usage error.\n",
	.run = run,
};
