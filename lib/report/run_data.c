/* run_data.c - gather the data of a tune run's report (report.h,
 * vf_report_run_data): plan.md's decisions, every trial the history
 * database holds for the run directory (the latest record of each trial
 * number), each trial's step times read back from its log with the trainer
 * profile's patterns, its memory samples (trial-N.samples, thinned to at
 * most SAMPLES_SHOWN points, peaks kept), the winner and its saving over
 * the planned steps; and the training of vramfit run (RUN/run.json): each
 * attempt with its loss curve, step times and memory samples read back
 * from logs/train-N.*, the recoveries, the validation samples. */
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "vramfit/base/buf.h"
#include "vramfit/base/json.h"
#include "vramfit/base/yamldoc.h"
#include "vramfit/report/report.h"
#include "vramfit/run/run.h"
#include "vramfit/trainer/profile.h"
#include "vramfit/tune/store.h"
#include "vramfit/tune/trial.h"

#define SAMPLES_SHOWN 400
#define STEPS_SHOWN 400
#define PLAN_MAX_BYTES (1u << 20)
#define PLAN_LINES 40

/* plan.md: its text ("markdown") and its decisions: its bullet lines
 * ("- ..."), backticks dropped, the first PLAN_LINES of them. */
static cJSON *plan_json(const char *run)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/plan.md", run);
	struct vf_buf b;
	vf_buf_init(&b, PLAN_MAX_BYTES);
	if (vf_buf_read_file(&b, path, PLAN_MAX_BYTES, NULL) != VF_OK || !b.data) {
		vf_buf_release(&b);
		return cJSON_CreateNull();
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "file", "plan.md");
	/* the whole text, rendered as Markdown by the page (its valid UTF-8
	 * prefix: the page shows what it can show faithfully) */
	{
		size_t ok = vf_utf8_check((const unsigned char *)b.data, b.len);
		char *t = malloc(ok + 1);
		if (t) {
			memcpy(t, b.data, ok);
			t[ok] = '\0';
			cJSON_AddStringToObject(o, "markdown", t);
			free(t);
		}
	}
	cJSON *d = cJSON_AddArrayToObject(o, "decisions");
	int n = 0;
	for (char *l = b.data; l && *l && n < PLAN_LINES;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		if (strncmp(l, "- ", 2) == 0) {
			char clean[512];
			size_t k = 0;
			for (const char *p = l + 2; *p && k + 1 < sizeof clean; p++)
				if (*p != '`' && *p != '*')
					clean[k++] = *p;
			clean[k] = '\0';
			if (vf_utf8_check((const unsigned char *)clean, k) == k) {
				cJSON_AddItemToArray(d, cJSON_CreateString(clean));
				n++;
			}
		}
		l = nl ? nl + 1 : NULL;
	}
	vf_buf_release(&b);
	return o;
}

static cJSON *step_times(const char *log, const struct vf_trial_patterns *pat)
{
	cJSON *a = cJSON_CreateArray();
	if (!pat)
		return a;
	struct vf_trial_log tl;
	vf_trial_log_init(&tl, pat);
	if (vf_trial_log_file(&tl, log, NULL) == VF_OK) {
		size_t n = tl.nreports, k = n > STEPS_SHOWN ? STEPS_SHOWN : n;
		for (size_t i = 0; i < k; i++)
			cJSON_AddItemToArray(a, cJSON_CreateNumber(tl.reports[n * i / k]));
	}
	vf_trial_log_release(&tl);
	return a;
}

static cJSON *samples_json(const char *path)
{
	struct vf_samples s;
	vf_samples_init(&s);
	if (vf_samples_read(path, &s, NULL) != VF_OK) {
		vf_samples_release(&s);
		return cJSON_CreateNull();
	}
	double t[SAMPLES_SHOWN];
	int64_t b[SAMPLES_SHOWN];
	size_t n = vf_samples_thin(&s, SAMPLES_SHOWN, t, b);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "source", s.source);
	cJSON_AddNumberToObject(o, "count", (double)s.n);
	cJSON *ts = cJSON_AddArrayToObject(o, "t"), *bs = cJSON_AddArrayToObject(o, "bytes");
	for (size_t i = 0; i < n; i++) {
		cJSON_AddItemToArray(ts, cJSON_CreateNumber(round(t[i] * 1000) / 1000));
		cJSON_AddItemToArray(bs, cJSON_CreateNumber((double)b[i]));
	}
	vf_samples_release(&s);
	return o;
}

static void add_num_or_null(cJSON *o, const char *k, double v, bool known)
{
	if (known)
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

static cJSON *trial_json(const struct vf_store_row *r, const char *run, const struct vf_trial_patterns *pat)
{
	const struct vf_trial *t = &r->t;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "index", t->index);
	cJSON_AddStringToObject(o, "change", t->change);
	cJSON_AddStringToObject(o, "outcome", vf_outcome_name(t->outcome));
	cJSON_AddStringToObject(o, "evidence", t->evidence);
	cJSON_AddStringToObject(o, "deltas", t->deltas);
	cJSON_AddNumberToObject(o, "steps_done", t->steps_done);
	add_num_or_null(o, "step_seconds", t->step_seconds, t->step_seconds > 0);
	add_num_or_null(o, "peak_bytes", (double)t->peak_bytes, t->peak_bytes > 0);
	cJSON_AddStringToObject(o, "peak_source", t->peak_source);
	add_num_or_null(o, "predicted_peak_bytes", (double)t->predicted_peak_bytes, t->predicted_peak_bytes >= 0);
	add_num_or_null(o, "wall_seconds", t->wall_seconds, t->wall_seconds >= 0 && t->status != -1);
	cJSON_AddStringToObject(o, "gpu", r->gpu);
	cJSON_AddStringToObject(o, "recorded_at", r->recorded_at);
	char p[PATH_MAX + 64];
	snprintf(p, sizeof p, "%s/logs/trial-%d.log", run, t->index);
	cJSON_AddItemToObject(o, "step_times", step_times(p, pat));
	snprintf(p, sizeof p, "%s/logs/trial-%d.samples", run, t->index);
	cJSON_AddItemToObject(o, "samples", samples_json(p));
	return o;
}

static int cmp_index(const void *a, const void *b)
{
	const struct vf_store_row *x = a, *y = b;
	if (x->t.index != y->t.index)
		return (x->t.index > y->t.index) - (x->t.index < y->t.index);
	return strcmp(x->recorded_at, y->recorded_at);
}

/* Replay the sweep's adoption rule (sweep.json improvement.min_pct): the
 * baseline when it is ok, then each ok trial at least min_pct faster. */
static int replay_winner(const struct vf_store_row *rows, const int *keep, int n, const char *trainer)
{
	double min_pct = 2.0;
	cJSON *sw = NULL;
	if (vf_profile_part(trainer, "sweep", &sw, NULL) == VF_OK) {
		const cJSON *imp = cJSON_GetObjectItemCaseSensitive(sw, "improvement");
		double d;
		if (imp && vf_json_get_double(imp, "min_pct", &d))
			min_pct = d;
	}
	cJSON_Delete(sw);
	int best = -1;
	for (int i = 0; i < n; i++) {
		const struct vf_trial *t = &rows[keep[i]].t;
		if (t->outcome != VF_OUTCOME_OK || !(t->step_seconds > 0))
			continue;
		if (best < 0 ? i == 0 : t->step_seconds <= rows[keep[best]].t.step_seconds * (1 - min_pct / 100))
			best = i;
	}
	return best;
}

static void winner_json(cJSON *o, const cJSON *trials, int w, const char *run)
{
	int64_t planned = 0;
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/config.yaml", run);
	struct vf_yamldoc *doc = NULL;
	if (vf_yamldoc_load_file(path, &doc, NULL) == VF_OK)
		vf_yamldoc_get_int(doc, "optimization.steps", &planned, NULL);
	vf_yamldoc_free(doc);
	add_num_or_null(o, "planned_steps", (double)planned, planned > 0);
	const cJSON *wt = w >= 0 ? cJSON_GetArrayItem(trials, w) : NULL;
	if (!wt) {
		cJSON_AddNullToObject(o, "winner");
		return;
	}
	cJSON *x = cJSON_AddObjectToObject(o, "winner");
	const cJSON *base = cJSON_GetArrayItem(trials, 0);
	double ws = cJSON_GetObjectItemCaseSensitive(wt, "step_seconds")->valuedouble;
	const cJSON *bsj = cJSON_GetObjectItemCaseSensitive(base, "step_seconds");
	bool bok = cJSON_IsNumber(bsj) && strcmp(cJSON_GetObjectItemCaseSensitive(base, "outcome")->valuestring, "ok") == 0;
	cJSON_AddNumberToObject(x, "trial", cJSON_GetObjectItemCaseSensitive(wt, "index")->valuedouble);
	cJSON_AddStringToObject(x, "change", cJSON_GetObjectItemCaseSensitive(wt, "change")->valuestring);
	cJSON_AddStringToObject(x, "deltas", cJSON_GetObjectItemCaseSensitive(wt, "deltas")->valuestring);
	cJSON_AddNumberToObject(x, "step_seconds", ws);
	add_num_or_null(x, "baseline_step_seconds", bok ? bsj->valuedouble : 0, bok);
	add_num_or_null(x, "saving_seconds_per_step", bok ? bsj->valuedouble - ws : 0, bok);
	add_num_or_null(x, "saving_seconds", bok ? (bsj->valuedouble - ws) * (double)planned : 0, bok && planned > 0);
}

vf_status vf_report_run_data(const char *run_dir, const char *store_path, int winner_trial,
			     cJSON **out, struct vf_error *err)
{
	char run[PATH_MAX];
	if (!run_dir || !realpath(run_dir, run))
		return vf_error_set(err, VF_ERR, "%s: no such run directory", run_dir ? run_dir : "(none)");
	struct vf_store_row *rows = NULL;
	size_t n = 0;
	vf_status s = vf_store_list_at(store_path, run, &rows, &n, err);
	if (s)
		return s;
	if (n == 0) {
		free(rows);
		return vf_error_set(err, VF_ENOTFOUND, "%s: no trials recorded for this run (run vramfit tune first)", run);
	}
	qsort(rows, n, sizeof *rows, cmp_index);
	int *keep = calloc(n, sizeof *keep), nk = 0;
	if (!keep) {
		free(rows);
		return vf_error_set(err, VF_ENOMEM, "report: out of memory");
	}
	for (size_t i = 0; i < n; i++) /* the latest record of each trial number */
		if (i + 1 == n || rows[i + 1].t.index != rows[i].t.index)
			keep[nk++] = (int)i;
	const char *trainer = rows[keep[0]].trainer[0] ? rows[keep[0]].trainer : VF_PROFILE_DEFAULT;
	struct vf_trial_patterns *pat = NULL;
	vf_trial_patterns_load(trainer, &pat, NULL);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "report", "run");
	cJSON_AddStringToObject(o, "run_dir", run);
	cJSON_AddStringToObject(o, "trainer", trainer);
	cJSON_AddStringToObject(o, "gpu", rows[keep[0]].gpu);
	cJSON_AddItemToObject(o, "plan", plan_json(run));
	cJSON *ta = cJSON_AddArrayToObject(o, "trials");
	int w = -1;
	for (int i = 0; i < nk; i++) {
		cJSON_AddItemToArray(ta, trial_json(&rows[keep[i]], run, pat));
		if (rows[keep[i]].t.index == winner_trial)
			w = i;
	}
	if (winner_trial == 0)
		w = replay_winner(rows, keep, nk, trainer);
	cJSON_AddStringToObject(o, "winner_rule", winner_trial == 0 ? "replayed: improvement.min_pct of the profile"
								    : "as tune decided");
	winner_json(o, ta, w, run);
	cJSON *tr = vf__training_json(run, pat);
	if (tr)
		cJSON_AddItemToObject(o, "training", tr);
	vf_trial_patterns_free(pat);
	free(keep);
	free(rows);
	*out = o;
	return VF_OK;
}

static int cmp_name(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	return !x ? (y ? -1 : 0) : !y ? 1 : strcmp(x, y);
}

/* The loss curve of a train log: (step, loss) at each new step, at most
 * STEPS_SHOWN points spread over the run. */
static cJSON *losses_json(const char *log, const struct vf_trial_patterns *pat)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *sa = cJSON_AddArrayToObject(o, "step"), *la = cJSON_AddArrayToObject(o, "loss");
	struct vf_trial_log tl;
	vf_trial_log_init(&tl, pat);
	if (pat && vf_trial_log_file(&tl, log, NULL) == VF_OK) {
		size_t keep = 0; /* one point per step: the first report of it */
		for (size_t i = 0; i < tl.nlosses; i++)
			if (isfinite(tl.losses[i]) && (keep == 0 || tl.loss_steps[i] != tl.loss_steps[keep - 1])) {
				tl.losses[keep] = tl.losses[i];
				tl.loss_steps[keep++] = tl.loss_steps[i];
			}
		size_t k = keep > STEPS_SHOWN ? STEPS_SHOWN : keep;
		for (size_t i = 0; i < k; i++) {
			cJSON_AddItemToArray(sa, cJSON_CreateNumber(tl.loss_steps[keep * i / k]));
			cJSON_AddItemToArray(la, cJSON_CreateNumber(tl.losses[keep * i / k]));
		}
	}
	vf_trial_log_release(&tl);
	return o;
}

/* RUN/outputs/samples: the validation samples' names, sorted. */
static cJSON *validation_samples(const char *run)
{
	char dir[PATH_MAX + 32];
	snprintf(dir, sizeof dir, "%s/outputs/samples", run);
	cJSON *a = cJSON_CreateArray();
	DIR *d = opendir(dir);
	struct dirent *e;
	char *names[256];
	int n = 0;
	while (d && (e = readdir(d)) && n < 256)
		if (e->d_name[0] != '.')
			names[n++] = strdup(e->d_name);
	if (d)
		closedir(d);
	qsort(names, (size_t)n, sizeof names[0], cmp_name);
	for (int i = 0; i < n; i++) {
		if (names[i])
			cJSON_AddItemToArray(a, cJSON_CreateString(names[i]));
		free(names[i]);
	}
	return a;
}

cJSON *vf__training_json(const char *run, const struct vf_trial_patterns *pat)
{
	cJSON *st = NULL;
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/%s", run, VF_RUN_STATE_FILE);
	if (access(path, F_OK) != 0 || vf_run_state_load(run, &st, NULL) != VF_OK)
		return NULL;
	cJSON *o = cJSON_CreateObject();
	static const char *const keys[] = {"stage", "status", "note"};
	for (size_t i = 0; i < 3; i++)
		cJSON_AddStringToObject(o, keys[i], vf__str(st, keys[i], ""));
	cJSON *att = cJSON_AddArrayToObject(o, "attempts");
	const cJSON *a;
	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(st, "attempts"))
	{
		cJSON *x = cJSON_Duplicate(a, 1);
		const char *log = vf__str(a, "log", "");
		if (strncmp(log, "logs/", 5) == 0 && !strstr(log, "..") && strlen(log) > 4 &&
		    strcmp(log + strlen(log) - 4, ".log") == 0) {
			char lp[PATH_MAX + 64], sp[PATH_MAX + 64];
			snprintf(lp, sizeof lp, "%s/%s", run, log);
			snprintf(sp, sizeof sp, "%s/%.*s.samples", run, (int)strlen(log) - 4, log);
			cJSON_AddItemToObject(x, "losses", losses_json(lp, pat));
			cJSON_AddItemToObject(x, "step_times", step_times(lp, pat));
			cJSON_AddItemToObject(x, "samples", samples_json(sp));
		}
		cJSON_AddItemToArray(att, x);
	}
	cJSON_AddItemToObject(o, "recoveries",
			      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(st, "recoveries"), 1));
	cJSON_AddItemToObject(o, "validation_samples", validation_samples(run));
	cJSON_Delete(st);
	/* the plan's estimate (plan.json), for time against the plan */
	snprintf(path, sizeof path, "%s/%s", run, VF_RUN_PLAN_FILE);
	struct vf_buf b;
	vf_buf_init(&b, 8u << 20);
	cJSON *pj = vf_buf_read_file(&b, path, 8u << 20, NULL) == VF_OK && b.data ? cJSON_Parse(b.data) : NULL;
	vf_buf_release(&b);
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(pj, "estimate");
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "available")))
		cJSON_AddItemToObject(o, "plan_estimate", cJSON_Duplicate(e, 1));
	cJSON_Delete(pj);
	return o;
}
