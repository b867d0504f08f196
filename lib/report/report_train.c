/* report_train.c - the training section of a run page (vramfit run): each
 * attempt with its outcome and where it resumed from, each recovery with
 * its cause and change, the loss curve, the step time against the
 * prediction, the memory over each attempt against the predicted peak, and
 * the validation samples' list. Reads the "training" object of
 * vf_report_run_data (run_data.c, vf__training_json). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

#define MAXP 400 /* points per line (the data holds at most that many) */
#define MAXA 16  /* attempts drawn */

static const int acolor[8] = {0, 3, 2, 5, 1, 4, 8, 9};

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static void attempts_table(struct vf_w *w, const cJSON *att)
{
	const char *hdr[] = {"attempt", "outcome", "steps", "resumed from", "step time (pred)", "peak (pred)", "evidence"};
	vf_html_table_begin(w, "Each launch of the training", 7, hdr, true);
	const cJSON *a;
	cJSON_ArrayForEach(a, att)
	{
		char c[6][160], s1[32], s2[32];
		snprintf(c[0], sizeof c[0], "%.0f", vf__num(a, "attempt"));
		snprintf(c[1], sizeof c[1], "%s", vf__str(a, "outcome", "?"));
		snprintf(c[2], sizeof c[2], "%.0f / %.0f", vf__num(a, "steps_done"), vf__num(a, "total_steps"));
		snprintf(c[3], sizeof c[3], "%s", cJSON_IsString(cJSON_GetObjectItemCaseSensitive(a, "resumed_from"))
							 ? base_name(vf__str(a, "resumed_from", ""))
							 : "step 0");
		double ps = vf__num(a, "predicted_step_seconds"), pp = vf__num(a, "predicted_peak_bytes");
		snprintf(c[4], sizeof c[4], "%s (%s)", vf__secs(s1, sizeof s1, vf__num(a, "step_seconds")),
			 ps > 0 ? vf__secs(s2, sizeof s2, ps) : "none");
		snprintf(c[5], sizeof c[5], "%s (%s)", vf__gib(s1, sizeof s1, vf__num(a, "peak_bytes")),
			 pp > 0 ? vf__gib(s2, sizeof s2, pp) : "none");
		const char *row[] = {c[0], c[1], c[2], c[3], c[4], c[5], vf__str(a, "evidence", "")};
		vf_html_row(w, 7, row);
	}
	vf_html_table_end(w);
}

static void recoveries_table(struct vf_w *w, const cJSON *rec)
{
	if (cJSON_GetArraySize(rec) == 0) {
		vf_html_p(w, "note", "No recovery: no attempt ran out of memory.");
		return;
	}
	const char *hdr[] = {"attempt", "at step", "cause", "change", "estimate", "evidence"};
	vf_html_table_begin(w, "Recoveries: the cheapest remedy not set yet that the estimate says fits", 6, hdr, true);
	const cJSON *r;
	cJSON_ArrayForEach(r, rec)
	{
		char c[3][32], est[96], a[32];
		snprintf(c[0], sizeof c[0], "%.0f", vf__num(r, "attempt"));
		snprintf(c[1], sizeof c[1], "%.0f", vf__num(r, "step"));
		snprintf(c[2], sizeof c[2], "%s", vf__str(r, "cause", "?"));
		double pk = vf__num(r, "predicted_peak_bytes");
		snprintf(est, sizeof est, "%s%s%s", vf__str(r, "estimate", "?"), pk > 0 ? ": " : "",
			 pk > 0 ? vf__gib(a, sizeof a, pk) : "");
		const char *row[] = {c[0], c[1], c[2], vf__str(r, "change", "?"), est, vf__str(r, "evidence", "")};
		vf_html_row(w, 6, row);
	}
	vf_html_table_end(w);
}

/* The numbers of arr (at most MAXP) into v; how many. */
static int nums(const cJSON *arr, double *v, double scale)
{
	int k = 0;
	const cJSON *x;
	cJSON_ArrayForEach(x, arr) if (cJSON_IsNumber(x) && k < MAXP) v[k++] = x->valuedouble / scale;
	return k;
}

/* One line per attempt: x from xkey (NULL: 1, 2, ... in order) and y from
 * ykey of each attempt's object obj; a dashed horizontal line at pred
 * (ykey's unit after yscale) when > 0. */
struct series_fig {
	const char *id, *title, *label, *xlabel, *ylabel, *obj, *xkey, *ykey;
	double yscale, pred;
};

static void series_figure(struct vf_w *w, const cJSON *att, const struct series_fig *f)
{
	static double xs[MAXP], ys[MAXP];
	double xmax = 1, ymax = f->pred > 0 ? f->pred : 0;
	int lines = 0;
	const cJSON *a;
	cJSON_ArrayForEach(a, att)
	{
		const cJSON *o = f->obj ? cJSON_GetObjectItemCaseSensitive(a, f->obj) : a;
		int ky = nums(cJSON_GetObjectItemCaseSensitive(o, f->ykey), ys, f->yscale);
		int kx = f->xkey ? nums(cJSON_GetObjectItemCaseSensitive(o, f->xkey), xs, 1) : ky;
		for (int i = 0; i < ky && i < kx; i++) {
			xmax = fmax(xmax, f->xkey ? xs[i] : i + 1);
			ymax = fmax(ymax, ys[i]);
		}
		lines += ky >= 2 && kx >= 2;
	}
	if (!lines)
		return;
	struct vf_chart c;
	vf_chart_init(&c, f->id, f->label, f->xlabel, f->ylabel);
	vf_chart_xdomain(&c, f->xkey ? 0 : 1, xmax);
	vf_chart_ydomain(&c, 0, ymax * 1.08 + 1e-12);
	vf_html_figure_begin(w, f->id, f->title);
	vf_chart_begin(&c, w);
	const char *names[MAXA];
	char nb[MAXA][48];
	int cols[MAXA], n = 0;
	cJSON_ArrayForEach(a, att)
	{
		const cJSON *o = f->obj ? cJSON_GetObjectItemCaseSensitive(a, f->obj) : a;
		int ky = nums(cJSON_GetObjectItemCaseSensitive(o, f->ykey), ys, f->yscale);
		int kx = f->xkey ? nums(cJSON_GetObjectItemCaseSensitive(o, f->xkey), xs, 1) : ky;
		for (int i = 0; !f->xkey && i < ky; i++)
			xs[i] = i + 1;
		int k = ky < kx ? ky : kx;
		if (k < 2 || n >= MAXA)
			continue;
		snprintf(nb[n], sizeof nb[n], "attempt %.0f (%s)", vf__num(a, "attempt"), vf__str(a, "outcome", "?"));
		vf_chart_line(&c, w, k, xs, ys, acolor[n % 8], nb[n], strcmp(vf__str(a, "outcome", ""), "ok") != 0, false,
			      NULL);
		names[n] = nb[n], cols[n] = acolor[n % 8], n++;
	}
	if (f->pred > 0)
		vf_chart_hline(&c, w, f->pred, 6, "predicted", "predicted");
	vf_chart_end(&c, w);
	vf_plot_legend(w, f->id, n, names, cols, NULL);
	vf_html_figure_end(w);
}

/* The largest of key over the attempts (> 0), else -1. */
static double largest(const cJSON *att, const char *key)
{
	double m = -1;
	const cJSON *a;
	cJSON_ArrayForEach(a, att) if (vf__num(a, key) > m) m = vf__num(a, key);
	return m > 0 ? m : -1;
}

/* The training's wall time over all launches against the plan's estimate
 * (plan.json: step time x steps on the planned GPU), and its cost: that
 * wall time x the plan's GPUs x the catalog's price per GPU-hour, against
 * the plan's cost (the figure plan.md prints). */
static void time_against_plan(struct vf_w *w, const cJSON *t, const cJSON *att)
{
	double wall = 0;
	const cJSON *a;
	cJSON_ArrayForEach(a, att) if (vf__num(a, "wall_seconds") > 0) wall += vf__num(a, "wall_seconds");
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(t, "plan_estimate");
	char m[32], p[32], line[512];
	double est = vf__num(e, "total_seconds");
	if (est > 0)
		snprintf(line, sizeof line, "Time: %s of training over all launches, against the plan's estimate of %s "
			 "(step time x steps on the planned GPU, an estimate).", vf__secs(m, sizeof m, wall),
			 vf__secs(p, sizeof p, est));
	else
		snprintf(line, sizeof line, "Time: %s of training over all launches; the plan has no time estimate.",
			 vf__secs(m, sizeof m, wall));
	vf_html_p(w, NULL, line);
	double price = vf__num(e, "price_usd_per_gpu_hour"), gpus = vf__num(e, "gpu_count");
	double cost = vf__num(e, "cost_usd");
	if (!(price > 0) || !(gpus >= 1)) {
		vf_html_p(w, NULL, "Cost: unknown (the plan's GPU has no price in the catalog).");
		return;
	}
	int o = snprintf(line, sizeof line, "Cost: $%.2f (%s x %.0f GPU%s x $%.2f/GPU-hour, the catalog's indicative "
			 "price)", wall / 3600.0 * gpus * price, vf__secs(m, sizeof m, wall), gpus, gpus == 1 ? "" : "s",
			 price);
	if (cost >= 0 && o > 0 && (size_t)o < sizeof line)
		snprintf(line + o, sizeof line - o, ", against the plan's estimate of $%.2f.", cost);
	else if (o > 0 && (size_t)o < sizeof line)
		snprintf(line + o, sizeof line - o, "; the plan has no cost estimate.");
	vf_html_p(w, NULL, line);
}

void vf__report_training(struct vf_w *w, const cJSON *t)
{
	if (!cJSON_IsObject(t))
		return;
	const cJSON *att = cJSON_GetObjectItemCaseSensitive(t, "attempts");
	const cJSON *rec = cJSON_GetObjectItemCaseSensitive(t, "recoveries");
	char head[1024];
	int na = cJSON_GetArraySize(att), nr = cJSON_GetArraySize(rec);
	snprintf(head, sizeof head, "vramfit run: stage %s (%s), %d launch%s, %d recover%s. %s", vf__str(t, "stage", "?"),
		 vf__str(t, "status", "?"), na, na == 1 ? "" : "es", nr, nr == 1 ? "y" : "ies", vf__str(t, "note", ""));
	vf_html_section_begin(w, "training", "Training (vramfit run)");
	vf_html_p(w, NULL, head);
	time_against_plan(w, t, att);
	attempts_table(w, att);
	recoveries_table(w, rec);
	vf_html_section_end(w);
	struct series_fig loss = {"train-loss", "Loss per step, each attempt (a resumed attempt starts at its checkpoint)",
				  "training loss per step", "step", "loss", "losses", "step", "loss", 1, -1};
	series_figure(w, att, &loss);
	struct series_fig steps = {"train-steps", "Step time per logged step against the prediction (dashed line)",
				   "training step time", "logged step (in order)", "step time (s)", NULL, NULL,
				   "step_times", 1, largest(att, "predicted_step_seconds")};
	series_figure(w, att, &steps);
	double pk = largest(att, "predicted_peak_bytes"), gib = 1024.0 * 1024 * 1024;
	struct series_fig mem = {"train-memory", "Memory over each attempt against the predicted peak (dashed line)",
				 "memory in use by the trainer", "time since the attempt started (s)", "memory (GiB)",
				 "samples", "t", "bytes", gib, pk > 0 ? pk / gib : -1};
	series_figure(w, att, &mem);
	const cJSON *vs = cJSON_GetObjectItemCaseSensitive(t, "validation_samples"), *x;
	const char *items[64];
	int n = 0;
	cJSON_ArrayForEach(x, vs) if (cJSON_IsString(x) && n < 64) items[n++] = x->valuestring;
	vf_html_section_begin(w, "validation-samples", "Validation samples (outputs/samples)");
	if (n)
		vf_html_list(w, n, items);
	else
		vf_html_p(w, "note", "No validation sample written.");
	vf_html_section_end(w);
}
