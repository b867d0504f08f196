/* report_run.c - the report of a tune run (RUN_DIR/report.html): the
 * winner and its saving as the headline, the plan's decisions, every trial
 * with its change and outcome (ok / oom / nan / crash / timeout / skipped
 * as predicted to run out of memory ...), step time per logged step, the
 * polled memory over time with the predicted peak, predicted against
 * measured peak. Reads the object of vf_report_run_data (run_data.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "vramfit/report/report.h"

#define MAXT 16
#define MAXS 400

static const int tcolor[10] = {0, 5, 2, 3, 1, 4, 8, 9, 6, 7};

static const char *outcome_label(const char *o)
{
	if (strcmp(o, "skipped") == 0)
		return "skipped (predicted OOM)";
	if (strcmp(o, "oom") == 0)
		return "out of memory";
	return o;
}

static void trial_name(const cJSON *t, char *out, size_t n)
{
	snprintf(out, n, "trial %.0f: %s", vf__num(t, "index"), vf__str(t, "change", "?"));
}

static void headline(const cJSON *d, char *t, size_t n)
{
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(d, "winner");
	const cJSON *trials = cJSON_GetObjectItemCaseSensitive(d, "trials");
	int nt = cJSON_GetArraySize(trials), nok = 0;
	const cJSON *x;
	cJSON_ArrayForEach(x, trials) nok += strcmp(vf__str(x, "outcome", ""), "ok") == 0;
	char a[32], b[32], c[32];
	if (!cJSON_IsObject(w)) {
		snprintf(t, n, "No trial succeeded: %d trial%s, the baseline %s", nt, nt == 1 ? "" : "s",
			 outcome_label(vf__str(cJSON_GetArrayItem(trials, 0), "outcome", "?")));
		return;
	}
	double ws = vf__num(w, "step_seconds"), bs = vf__num(w, "baseline_step_seconds");
	double save = vf__num(w, "saving_seconds"), steps = vf__num(d, "planned_steps");
	if (vf__num(w, "trial") == 1) {
		snprintf(t, n, "The planned config is the fastest stable one: %s per step; %d of %d trials ok",
			 vf__secs(a, sizeof a, ws), nok, nt);
		return;
	}
	size_t o = (size_t)snprintf(t, n, "Trial %.0f (%s) wins: %s per step vs %s planned", vf__num(w, "trial"),
				    vf__str(w, "change", "?"), vf__secs(a, sizeof a, ws), vf__secs(b, sizeof b, bs));
	if (o < n && isfinite(save))
		o += (size_t)snprintf(t + o, n - o, ", saving %s over %.0f steps",
				      save >= 3600 ? (snprintf(c, sizeof c, "%.1f h", save / 3600), c)
				      : save >= 60 ? (snprintf(c, sizeof c, "%.1f min", save / 60), c)
						   : vf__secs(c, sizeof c, save), steps);
	if (o < n)
		snprintf(t + o, n - o, "; %d of %d trials ok", nok, nt);
}

static void trials_table(struct vf_w *w, const cJSON *d)
{
	const char *hdr[] = {"trial", "change", "outcome", "step time", "measured peak", "predicted peak",
			     "wall time", "evidence"};
	vf_html_section_begin(w, "trials", "Every trial: its change and how it ended");
	vf_w_puts(w, "<div class=\"tbl\">");
	vf_html_table_begin(w, NULL, 8, hdr, true);
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(d, "trials"))
	{
		char c[8][96];
		snprintf(c[0], sizeof c[0], "%.0f", vf__num(t, "index"));
		snprintf(c[1], sizeof c[1], "%s", vf__str(t, "change", ""));
		snprintf(c[2], sizeof c[2], "%s", outcome_label(vf__str(t, "outcome", "?")));
		vf__secs(c[3], sizeof c[3], vf__num(t, "step_seconds"));
		vf__gib(c[4], sizeof c[4], vf__num(t, "peak_bytes"));
		if (*vf__str(t, "peak_source", "") && isfinite(vf__num(t, "peak_bytes"))) {
			size_t l = strlen(c[4]);
			snprintf(c[4] + l, sizeof c[4] - l, " (%s)", vf__str(t, "peak_source", ""));
		}
		vf__gib(c[5], sizeof c[5], vf__num(t, "predicted_peak_bytes"));
		vf__secs(c[6], sizeof c[6], vf__num(t, "wall_seconds"));
		const char *row[] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6], vf__str(t, "evidence", "")};
		vf_html_row(w, 8, row);
	}
	vf_html_table_end(w);
	vf_w_puts(w, "</div>");
	vf_html_section_end(w);
}

/* Step time per logged step, one line per trial that logged any. */
static void steps_figure(struct vf_w *w, const cJSON *trials)
{
	double xs[MAXS], ys[MAXS], top = 0, xmax = 2;
	const cJSON *t;
	int nl = 0;
	cJSON_ArrayForEach(t, trials)
	{
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(t, "step_times"), *v;
		int k = 0;
		cJSON_ArrayForEach(v, st) if (cJSON_IsNumber(v) && k < MAXS)
		{
			top = v->valuedouble > top ? v->valuedouble : top;
			k++;
		}
		xmax = k > xmax ? k : xmax;
		nl += k > 0;
	}
	if (!nl)
		return;
	struct vf_chart c;
	vf_chart_init(&c, "steps", "step time of each logged step, per trial", "logged step (in order)", "step time (s)");
	c.xint = true;
	vf_chart_xdomain(&c, 1, xmax);
	vf_chart_ydomain(&c, 0, top * 1.08);
	vf_html_figure_begin(w, "steps", "Step time per logged step (the first steps include warm-up)");
	vf_chart_begin(&c, w);
	const char *names[MAXT];
	char nbuf[MAXT][128];
	int cols[MAXT], n = 0, i = 0;
	cJSON_ArrayForEach(t, trials)
	{
		int k = 0;
		const cJSON *v;
		char tips[MAXS][64];
		const char *tp[MAXS];
		trial_name(t, nbuf[n < MAXT ? n : MAXT - 1], sizeof nbuf[0]);
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(t, "step_times")) if (cJSON_IsNumber(v) && k < MAXS)
		{
			xs[k] = k + 1, ys[k] = v->valuedouble;
			snprintf(tips[k], sizeof tips[k], "trial %.0f, step %d: %.3g s", vf__num(t, "index"), k + 1, ys[k]);
			tp[k] = tips[k];
			k++;
		}
		if (k && n < MAXT) {
			vf_chart_line(&c, w, k, xs, ys, tcolor[i % 10], nbuf[n], false, k <= 60, tp);
			names[n] = nbuf[n], cols[n++] = tcolor[i % 10];
		}
		i++;
	}
	vf_chart_end(&c, w);
	vf_plot_legend(w, "steps", n, names, cols, NULL);
	vf_html_figure_table(w);
	const char *hdr[] = {"trial", "logged steps", "median step", "last step"};
	vf_html_table_begin(w, "Step times as logged", 4, hdr, false);
	cJSON_ArrayForEach(t, trials)
	{
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(t, "step_times");
		int k = cJSON_GetArraySize(st);
		char a[128], b[16], m[32], l[32];
		trial_name(t, a, sizeof a);
		snprintf(b, sizeof b, "%d", k);
		vf__secs(m, sizeof m, vf__num(t, "step_seconds"));
		vf__secs(l, sizeof l, k ? cJSON_GetArrayItem(st, k - 1)->valuedouble : NAN);
		const char *row[] = {a, b, m, l};
		vf_html_row(w, 4, row);
	}
	vf_html_table_end(w);
	vf_html_figure_end(w);
}

/* The unit for a byte range: GiB, or MiB below 2 GiB. */
static double unit_of(double max_bytes, const char **name)
{
	if (max_bytes < 2 * GIB) {
		*name = "MiB";
		return 1024.0 * 1024.0;
	}
	*name = "GiB";
	return GIB;
}

/* The memory samples a trial's "samples" object holds (pairs of t and bytes). */
static int samples_of(const cJSON *s)
{
	int a = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s, "t"));
	int b = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s, "bytes"));
	return a < b ? a : b;
}

/* The memory figure's heading: the first trial that ran out of memory,
 * else the polled peak (bmax bytes), with where the samples came from. */
static void memory_title(const cJSON *trials, double bmax, char *title, size_t n)
{
	char a[32];
	const cJSON *t;
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(trials, 0), "samples");
	snprintf(title, n, "Memory over each trial (polled: %s); peak %s", vf__str(src, "source", "?"),
		 vf__gib(a, sizeof a, bmax));
	cJSON_ArrayForEach(t, trials) if (strcmp(vf__str(t, "outcome", ""), "oom") == 0)
	{
		snprintf(title, n, "Memory over each trial: trial %.0f (%s) ran out of memory at %s (polled: %s)",
			 vf__num(t, "index"), vf__str(t, "change", "?"), vf__gib(a, sizeof a, vf__num(t, "peak_bytes")),
			 vf__str(src, "source", "?"));
		break;
	}
}

/* The memory figure's numbers: each trial's samples, polled peak and duration. */
static void memory_table(struct vf_w *w, const cJSON *trials)
{
	const cJSON *t;
	const char *hdr[] = {"trial", "samples", "polled peak", "duration"};
	vf_html_table_begin(w, "Memory samples (dashed lines: trials that did not end ok)", 4, hdr, false);
	cJSON_ArrayForEach(t, trials)
	{
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(t, "samples"), *v;
		char a1[128], b1[16], p1[32], d1[32];
		double pk = NAN, dur = NAN;
		trial_name(t, a1, sizeof a1);
		snprintf(b1, sizeof b1, "%.0f", cJSON_IsObject(s) ? vf__num(s, "count") : 0);
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(s, "bytes")) pk = !(v->valuedouble <= pk) ? v->valuedouble : pk;
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(s, "t")) dur = v->valuedouble;
		vf__gib(p1, sizeof p1, pk);
		vf__secs(d1, sizeof d1, dur);
		const char *row[] = {a1, b1, p1, d1};
		vf_html_row(w, 4, row);
	}
	vf_html_table_end(w);
}

static void memory_figure(struct vf_w *w, const cJSON *trials)
{
	double tmax = 1, bmax = 0;
	const cJSON *t;
	int ns = 0, nempty = 0;
	char empty[512] = "";
	cJSON_ArrayForEach(t, trials)
	{
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(t, "samples"), *v;
		if (!cJSON_IsObject(s))
			continue;
		if (samples_of(s) < 2) { /* no line to draw: said in a sentence */
			size_t l = strlen(empty);
			snprintf(empty + l, sizeof empty - l, "%s%s: %s", nempty++ ? "; " : "",
				 vf__str(t, "change", "?"),
				 samples_of(s) ? "one memory sample, no line to draw"
					       : "no memory samples: the trainer exited before the first poll");
			continue;
		}
		ns++;
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(s, "t")) tmax = v->valuedouble > tmax ? v->valuedouble : tmax;
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(s, "bytes")) bmax = v->valuedouble > bmax ? v->valuedouble : bmax;
	}
	if (!ns) {
		if (nempty) {
			vf_html_section_begin(w, "memory", "Memory over each trial");
			vf_html_p(w, "note", empty);
			vf_html_section_end(w);
		}
		return;
	}
	const char *un;
	double u = unit_of(bmax, &un);
	char ylabel[64], title[384];
	snprintf(ylabel, sizeof ylabel, "memory in use (%s)", un);
	memory_title(trials, bmax, title, sizeof title);
	struct vf_chart c;
	vf_chart_init(&c, "memory", "memory in use by the trainer over time, per trial", "time since the trial started (s)", ylabel);
	vf_chart_xdomain(&c, 0, tmax);
	vf_chart_ydomain(&c, 0, bmax / u * 1.08);
	vf_html_figure_begin(w, "memory", title);
	vf_chart_begin(&c, w);
	double xs[MAXS], ys[MAXS];
	const char *names[MAXT];
	char nbuf[MAXT][128];
	int cols[MAXT], n = 0, i = 0;
	cJSON_ArrayForEach(t, trials)
	{
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(t, "samples");
		int k = 0;
		if (cJSON_IsObject(s) && samples_of(s) >= 2 && n < MAXT) {
			const cJSON *tv = cJSON_GetObjectItemCaseSensitive(s, "t")->child;
			const cJSON *bv = cJSON_GetObjectItemCaseSensitive(s, "bytes")->child;
			for (; tv && bv && k < MAXS; tv = tv->next, bv = bv->next, k++)
				xs[k] = tv->valuedouble, ys[k] = bv->valuedouble / u;
			trial_name(t, nbuf[n], sizeof nbuf[n]);
			size_t l = strlen(nbuf[n]);
			snprintf(nbuf[n] + l, sizeof nbuf[n] - l, " (%s)", outcome_label(vf__str(t, "outcome", "?")));
			vf_chart_line(&c, w, k, xs, ys, tcolor[i % 10], nbuf[n], strcmp(vf__str(t, "outcome", ""), "ok") != 0,
				      false, NULL);
			names[n] = nbuf[n], cols[n++] = tcolor[i % 10];
		}
		i++;
	}
	vf_chart_end(&c, w);
	vf_plot_legend(w, "memory", n, names, cols, NULL);
	vf_html_figure_table(w);
	memory_table(w, trials);
	if (nempty)
		vf_html_p(w, "note", empty);
	vf_html_figure_end(w);
}

static void predicted_figure(struct vf_w *w, const cJSON *trials)
{
	double px[MAXT], my[MAXT], top = 0;
	char tips[MAXT][160], a[32], b[32];
	const char *tp[MAXT];
	int n = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, trials)
	{
		double p = vf__num(t, "predicted_peak_bytes"), m = vf__num(t, "peak_bytes");
		if (!isfinite(p) || !isfinite(m) || n >= MAXT)
			continue;
		px[n] = p / GIB, my[n] = m / GIB;
		top = fmax(top, fmax(px[n], my[n]));
		snprintf(tips[n], sizeof tips[n], "trial %.0f (%s): predicted %s, measured %s", vf__num(t, "index"),
			 vf__str(t, "change", "?"), vf__gib(a, sizeof a, p), vf__gib(b, sizeof b, m));
		tp[n] = tips[n];
		n++;
	}
	if (!n) {
		vf_html_p(w, "note", "No trial has both a predicted and a measured peak (the estimate needs a GPU model; "
				     "CPU trials have none).");
		return;
	}
	struct vf_chart c;
	vf_chart_init(&c, "predicted", "measured against predicted peak per trial, with the identity line",
		      "predicted peak (GiB)", "measured peak (GiB)");
	vf_chart_xdomain(&c, 0, top * 1.1);
	vf_chart_ydomain(&c, 0, top * 1.1);
	vf_html_figure_begin(w, "predicted", "Predicted against measured peak (on the dashed line = exact)");
	vf_chart_begin(&c, w);
	double id[2] = {0, c.x.d1};
	vf_chart_line(&c, w, 2, id, id, 7, "identity", true, false, NULL);
	vf_chart_points(&c, w, n, px, my, 0, "trials", tp);
	vf_chart_end(&c, w);
	vf_html_figure_table(w);
	const char *hdr[] = {"trial", "predicted", "measured", "error"};
	vf_html_table_begin(w, NULL, 4, hdr, false);
	for (int i = 0; i < n; i++) {
		char e[32], k[32];
		snprintf(k, sizeof k, "%.*s", (int)(strchr(tips[i], ' ') ? strchr(tips[i] + 6, ' ') - tips[i] : 8), tips[i]);
		snprintf(e, sizeof e, "%+.1f%%", 100 * (px[i] - my[i]) / my[i]);
		const char *row[] = {k, vf__gib(a, sizeof a, px[i] * GIB), vf__gib(b, sizeof b, my[i] * GIB), e};
		vf_html_row(w, 4, row);
	}
	vf_html_table_end(w);
	vf_html_figure_end(w);
}

void vf__report_run(struct vf_w *w, const cJSON *d)
{
	char title[512], sub[1200];
	headline(d, title, sizeof title);
	snprintf(sub, sizeof sub, "Autotune sweep of %s (trainer profile %s, %s). Winner %s.", vf__str(d, "run_dir", "?"),
		 vf__str(d, "trainer", "?"), vf__str(d, "gpu", "?"), vf__str(d, "winner_rule", ""));
	vf_html_begin(w, "run", title, sub);
	const cJSON *trials = cJSON_GetObjectItemCaseSensitive(d, "trials");
	const cJSON *plan = cJSON_GetObjectItemCaseSensitive(d, "plan");
	if (cJSON_IsObject(plan)) {
		const cJSON *mdj = cJSON_GetObjectItemCaseSensitive(plan, "markdown");
		if (cJSON_IsString(mdj)) { /* the plan as its reader wrote it: Markdown rendered */
			vf_html_section_begin(w, "plan", "The plan (plan.md)");
			vf_w_puts(w, "<details open><summary>plan.md</summary>");
			vf_html_md(w, mdj->valuestring, strlen(mdj->valuestring));
			vf_w_puts(w, "</details>");
		} else {
			vf_html_section_begin(w, "plan", "The plan's decisions (plan.md)");
			const cJSON *it;
			vf_w_puts(w, "<ul class=\"plain\">");
			cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(plan, "decisions")) if (cJSON_IsString(it))
			{
				vf_w_puts(w, "<li>");
				vf_html_md_inline(w, it->valuestring);
				vf_w_puts(w, "</li>");
			}
			vf_w_puts(w, "</ul>");
		}
		vf_html_section_end(w);
	}
	trials_table(w, d);
	memory_figure(w, trials);
	steps_figure(w, trials);
	predicted_figure(w, trials);
	vf__report_training(w, cJSON_GetObjectItemCaseSensitive(d, "training"));
	vf_html_data(w, d);
	vf_html_end(w);
}
