/* report_history.c - `vramfit report history`: the estimator against the
 * user's own runs, from the history database. Predicted against measured
 * peak for every trial that has both (scatter with the identity line), the
 * signed error by run and by setup change, and the measured step time of
 * every trial. The history stores the predicted peak but no predicted step
 * time and no model id, so step times are shown as measured and the
 * grouping "by model" is by run directory (one model per run workspace). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "vramfit/base/json.h"
#include "vramfit/report/report.h"
#include "vramfit/tune/store.h"

#define MAXH 500 /* trials drawn (the newest) */
#define MAXG 24   /* groups shown */

static double pct_err(const struct vf_trial *t)
{
	if (t->predicted_peak_bytes < 0 || t->peak_bytes <= 0)
		return NAN;
	return ((double)t->predicted_peak_bytes - (double)t->peak_bytes) / (double)t->peak_bytes * 100.0;
}

vf_status vf_report_history_data(const char *store_path, cJSON **out, struct vf_error *err)
{
	struct vf_store_row *rows = NULL;
	size_t n = 0;
	vf_status s = vf_store_list_at(store_path, NULL, &rows, &n, err);
	if (s)
		return s;
	cJSON *o = cJSON_CreateObject();
	char db[PATH_MAX];
	cJSON_AddStringToObject(o, "report", "history");
	cJSON_AddStringToObject(o, "database", store_path ? store_path : vf_store_default_path(db, sizeof db) ? db : "");
	cJSON_AddNumberToObject(o, "records", (double)n);
	cJSON *a = cJSON_AddArrayToObject(o, "trials");
	for (size_t i = n > MAXH ? n - MAXH : 0; i < n; i++) {
		const struct vf_trial *t = &rows[i].t;
		cJSON *x = cJSON_CreateObject();
		const char *base = strrchr(rows[i].run_dir, '/');
		cJSON_AddStringToObject(x, "run_dir", rows[i].run_dir);
		cJSON_AddStringToObject(x, "run", base && base[1] ? base + 1 : rows[i].run_dir);
		cJSON_AddStringToObject(x, "gpu", rows[i].gpu);
		cJSON_AddNumberToObject(x, "index", t->index);
		cJSON_AddStringToObject(x, "change", t->change);
		cJSON_AddStringToObject(x, "outcome", vf_outcome_name(t->outcome));
		if (t->step_seconds > 0)
			cJSON_AddNumberToObject(x, "step_seconds", t->step_seconds);
		else
			cJSON_AddNullToObject(x, "step_seconds");
		vf_json_add_i64_or_null(x, "peak_bytes", t->peak_bytes, t->peak_bytes > 0);
		vf_json_add_i64_or_null(x, "predicted_peak_bytes", t->predicted_peak_bytes, t->predicted_peak_bytes >= 0);
		double e = pct_err(t);
		if (isfinite(e))
			cJSON_AddNumberToObject(x, "peak_error_pct", e);
		else
			cJSON_AddNullToObject(x, "peak_error_pct");
		cJSON_AddStringToObject(x, "recorded_at", rows[i].recorded_at);
		cJSON_AddItemToArray(a, x);
	}
	free(rows);
	*out = o;
	return VF_OK;
}

/* ---- rendering ------------------------------------------------------------------ */

struct group {
	char name[128];
	double err[MAXH / 8];
	int n;
};

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_abs(const double *v, int n)
{
	double t[MAXH / 8];
	for (int i = 0; i < n; i++)
		t[i] = fabs(v[i]);
	qsort(t, (size_t)n, sizeof t[0], cmp_d);
	return n ? (n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2) : NAN;
}

static int group_of(struct group *g, int *ng, const char *name)
{
	for (int i = 0; i < *ng; i++)
		if (strcmp(g[i].name, name) == 0)
			return i;
	if (*ng >= MAXG)
		return -1;
	snprintf(g[*ng].name, sizeof g[0].name, "%s", name);
	g[*ng].n = 0;
	return (*ng)++;
}

/* Signed error by group (key "run" or "change"): a dot per trial. */
static void error_figure(struct vf_w *w, const cJSON *trials, const char *key, const char *id, const char *what)
{
	struct group *g = calloc(MAXG, sizeof *g);
	if (!g)
		return;
	int ng = 0;
	double lo = 0, hi = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, trials)
	{
		double e = vf__num(t, "peak_error_pct");
		int k = isfinite(e) ? group_of(g, &ng, vf__str(t, key, "?")) : -1;
		if (k < 0 || g[k].n >= MAXH / 8)
			continue;
		g[k].err[g[k].n++] = e;
		lo = fmin(lo, e), hi = fmax(hi, e);
	}
	if (ng) {
		const char *labels[MAXG];
		for (int i = 0; i < ng; i++)
			labels[i] = g[i].name;
		struct vf_chart c;
		char title[256], xl[64];
		snprintf(title, sizeof title, "Peak error by %s: positive = predicted more than measured", what);
		snprintf(xl, sizeof xl, "%s", what);
		vf_chart_init(&c, id, "signed error of the predicted peak, per trial, grouped", xl, "peak error (%)");
		vf_chart_xbands(&c, ng, labels);
		vf_chart_ydomain(&c, lo - 2, hi + 2);
		vf_html_figure_begin(w, id, title);
		vf_chart_begin(&c, w);
		double zx[2] = {0, ng}, zy[2] = {0, 0};
		vf_chart_line(&c, w, 2, zx, zy, 7, "zero", true, false, NULL);
		for (int i = 0; i < ng; i++) {
			double xs[MAXH / 8];
			char tips[MAXH / 8][96];
			const char *tp[MAXH / 8];
			for (int k = 0; k < g[i].n; k++) {
				xs[k] = i + 0.5;
				snprintf(tips[k], sizeof tips[k], "%s: %+.1f%%", g[i].name, g[i].err[k]);
				tp[k] = tips[k];
			}
			vf_chart_points(&c, w, g[i].n, xs, g[i].err, 0, "trials", tp);
		}
		vf_chart_end(&c, w);
		vf_html_figure_table(w);
		const char *hdr[] = {what, "trials", "median |error|", "range"};
		vf_html_table_begin(w, NULL, 4, hdr, false);
		for (int i = 0; i < ng; i++) {
			char n[16], m[32], r[48];
			double mn = g[i].err[0], mx = g[i].err[0];
			for (int k = 1; k < g[i].n; k++)
				mn = fmin(mn, g[i].err[k]), mx = fmax(mx, g[i].err[k]);
			snprintf(n, sizeof n, "%d", g[i].n);
			snprintf(m, sizeof m, "%.1f%%", median_abs(g[i].err, g[i].n));
			snprintf(r, sizeof r, "%+.1f%% .. %+.1f%%", mn, mx);
			const char *row[] = {g[i].name, n, m, r};
			vf_html_row(w, 4, row);
		}
		vf_html_table_end(w);
		vf_html_figure_end(w);
	}
	free(g);
}

static void scatter_figure(struct vf_w *w, const cJSON *trials, int n_both, double med)
{
	double px[MAXH], my[MAXH];
	char tips[MAXH][160];
	const char *tp[MAXH];
	int n = 0;
	double top = 0;
	const cJSON *t;
	char a[32], b[32];
	cJSON_ArrayForEach(t, trials)
	{
		double p = vf__num(t, "predicted_peak_bytes"), m = vf__num(t, "peak_bytes");
		if (!isfinite(p) || !isfinite(m) || n >= MAXH)
			continue;
		px[n] = p / GIB, my[n] = m / GIB;
		top = fmax(top, fmax(px[n], my[n]));
		snprintf(tips[n], sizeof tips[n], "%s trial %.0f (%s, %s): predicted %s, measured %s", vf__str(t, "run", "?"),
			 vf__num(t, "index"), vf__str(t, "change", "?"), vf__str(t, "outcome", "?"), vf__gib(a, sizeof a, p),
			 vf__gib(b, sizeof b, m));
		tp[n] = tips[n];
		n++;
	}
	char title[256];
	snprintf(title, sizeof title, "Predicted against measured peak: %d trials, median |error| %.1f%%", n_both, med);
	struct vf_chart c;
	vf_chart_init(&c, "peaks", "measured against predicted peak of every recorded trial, with the identity line",
		      "predicted peak (GiB)", "measured peak (GiB)");
	vf_chart_xdomain(&c, 0, top * 1.1);
	vf_chart_ydomain(&c, 0, top * 1.1);
	vf_html_figure_begin(w, "peaks", title);
	vf_chart_begin(&c, w);
	double id[2] = {0, c.x.d1};
	vf_chart_line(&c, w, 2, id, id, 7, "identity", true, false, NULL);
	vf_chart_points(&c, w, n, px, my, 0, "trials", tp);
	vf_chart_end(&c, w);
	const char *ln[] = {"trials", "identity"};
	int lc[] = {0, 7};
	bool da[] = {false, true};
	vf_plot_legend(w, "peaks", 2, ln, lc, da);
	vf_html_figure_table(w);
	const char *hdr[] = {"trial", "predicted", "measured", "error"};
	vf_html_table_begin(w, NULL, 4, hdr, false);
	int shown = 0;
	cJSON_ArrayForEach(t, trials)
	{
		double p = vf__num(t, "predicted_peak_bytes"), m = vf__num(t, "peak_bytes");
		if (!isfinite(p) || !isfinite(m) || shown++ >= 200)
			continue;
		char k[160], e[32];
		snprintf(k, sizeof k, "%s #%.0f %s", vf__str(t, "run", "?"), vf__num(t, "index"), vf__str(t, "change", ""));
		snprintf(e, sizeof e, "%+.1f%%", vf__num(t, "peak_error_pct"));
		const char *row[] = {k, vf__gib(a, sizeof a, p), vf__gib(b, sizeof b, m), e};
		vf_html_row(w, 4, row);
	}
	vf_html_table_end(w);
	vf_html_figure_end(w);
}

static void steptime_figure(struct vf_w *w, const cJSON *trials)
{
	double xs[MAXH], ys[MAXH];
	char tips[MAXH][160];
	const char *tp[MAXH];
	int n = 0, k = 0;
	double top = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, trials)
	{
		k++;
		double s = vf__num(t, "step_seconds");
		if (!isfinite(s) || n >= MAXH)
			continue;
		xs[n] = k, ys[n] = s, top = fmax(top, s);
		snprintf(tips[n], sizeof tips[n], "%s trial %.0f (%s): %.3g s per step, %s", vf__str(t, "run", "?"),
			 vf__num(t, "index"), vf__str(t, "change", "?"), s, vf__str(t, "recorded_at", ""));
		tp[n] = tips[n];
		n++;
	}
	if (!n)
		return;
	struct vf_chart c;
	vf_chart_init(&c, "steps", "measured step time of every recorded trial, oldest first", "trial record (oldest first)",
		      "measured step time (s)");
	c.xint = true;
	vf_chart_xdomain(&c, 1, k > 1 ? k : 2);
	vf_chart_ydomain(&c, 0, top * 1.08);
	char title[160];
	snprintf(title, sizeof title, "Measured step time of %d trials (the history stores no predicted step time)", n);
	vf_html_figure_begin(w, "steps", title);
	vf_chart_begin(&c, w);
	vf_chart_points(&c, w, n, xs, ys, 2, "step time", tp);
	vf_chart_end(&c, w);
	vf_html_figure_table(w);
	const char *hdr[] = {"trial", "step time", "outcome"};
	vf_html_table_begin(w, NULL, 3, hdr, false);
	int shown = 0;
	cJSON_ArrayForEach(t, trials)
	{
		if (!isfinite(vf__num(t, "step_seconds")) || shown++ >= 200)
			continue;
		char a[160], s[32];
		snprintf(a, sizeof a, "%s #%.0f %s", vf__str(t, "run", "?"), vf__num(t, "index"), vf__str(t, "change", ""));
		const char *row[] = {a, vf__secs(s, sizeof s, vf__num(t, "step_seconds")), vf__str(t, "outcome", "?")};
		vf_html_row(w, 3, row);
	}
	vf_html_table_end(w);
	vf_html_figure_end(w);
}

void vf__report_history(struct vf_w *w, const cJSON *d)
{
	const cJSON *trials = cJSON_GetObjectItemCaseSensitive(d, "trials"), *t;
	double errs[MAXH];
	int n = 0, over = 0;
	double mx = 0;
	cJSON_ArrayForEach(t, trials)
	{
		double e = vf__num(t, "peak_error_pct");
		if (!isfinite(e) || n >= MAXH)
			continue;
		errs[n++] = e;
		over += e > 0;
		mx = fmax(mx, fabs(e));
	}
	double med = NAN;
	if (n) {
		double abs_e[MAXH];
		for (int i = 0; i < n; i++)
			abs_e[i] = fabs(errs[i]);
		qsort(abs_e, (size_t)n, sizeof abs_e[0], cmp_d);
		med = n % 2 ? abs_e[n / 2] : (abs_e[n / 2 - 1] + abs_e[n / 2]) / 2;
	}
	char title[384], sub[PATH_MAX + 128];
	if (n)
		snprintf(title, sizeof title,
			 "Over %d trials with both figures the peak estimate was off by %.1f%% (median), %.1f%% at most; "
			 "it over-predicted %d of %d",
			 n, med, mx, over, n);
	else
		snprintf(title, sizeof title, "%d trials recorded, none with both a predicted and a measured peak",
			 cJSON_GetArraySize(trials));
	snprintf(sub, sizeof sub, "History database %s: %.0f trial records.", vf__str(d, "database", "?"), vf__num(d, "records"));
	vf_html_begin(w, "history", title, sub);
	if (n) {
		scatter_figure(w, trials, n, med);
		error_figure(w, trials, "run", "byrun", "run (model)");
		error_figure(w, trials, "change", "bychange", "setup change");
	} else {
		vf_html_p(w, "note", "Predictions come from tune runs given a GPU model (--gpu or a probed GPU); CPU sweeps "
				     "have measured peaks only.");
	}
	steptime_figure(w, trials);
	vf_html_data(w, d);
	vf_html_end(w);
}
