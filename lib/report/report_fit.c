/* report_fit.c - the fit report: GPUs x GPU counts as a grid coloured by
 * whether the run fits and the largest micro-batch, with time and cost in
 * each cell; the cost-time Pareto front of the candidates with the chosen
 * settings (the top of fit's sorted list) labelled; the numbers as tables.
 *
 * Reads a fit --json object plus "report": "fit" and "mode": "table"
 * (candidates in "rows", one per GPU and count) or "search" (candidates in
 * "results", the grid then shows the search's best per GPU and count).
 * Each candidate: gpu, gpus, fits, max_batch, settings, step_seconds,
 * tokens_per_second, run {hours, cost_usd} or null, price_usd_hour. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "vramfit/report/report.h"

#define MAXC 256
#define MAXR 24 /* grid rows (GPUs) */
#define MAXK 8  /* grid columns (counts) */

struct cand {
	const cJSON *j;
	char gpu[32];
	int n;
	bool fits;
	bool tight; /* fits the cards but not under --margin: fit's "tight" */
	double time, cost; /* hours and $ of the run, or s and $ per million tokens */
	double max_batch;
	bool front, chosen;
};

struct fit {
	struct cand c[MAXC];
	int nc;
	bool whole; /* time/cost of the whole run (--tokens/--steps) */
	char gpus[MAXR][32];
	int ng, counts[MAXK], nk;
	int chosen;
};

static void candidate(struct fit *f, const cJSON *j)
{
	if (f->nc >= MAXC)
		return;
	struct cand *c = &f->c[f->nc++];
	memset(c, 0, sizeof *c);
	c->j = j;
	snprintf(c->gpu, sizeof c->gpu, "%s", vf__str(j, "gpu", "?"));
	c->n = (int)vf__num(j, "gpus");
	c->fits = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "fits"));
	c->max_batch = vf__num(j, "max_batch");
	const cJSON *run = cJSON_GetObjectItemCaseSensitive(j, "run");
	double tps = vf__num(j, "tokens_per_second"), price = vf__num(j, "price_usd_hour");
	c->time = c->cost = NAN;
	c->tight = !c->fits && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "fits_memory"));
	if (cJSON_IsObject(run))
		f->whole = true;
	if (c->tight) {
		/* fit's verdict: no run time or cost for a row the rule refuses */
	} else if (cJSON_IsObject(run)) {
		c->time = vf__num(run, "hours");
		c->cost = vf__num(run, "cost_usd");
	} else if (tps > 0) {
		c->time = 1e6 / tps;
		if (price >= 0)
			c->cost = c->n * price / 3600.0 * 1e6 / tps;
	}
}

static void read_fit(const cJSON *d, struct fit *f)
{
	memset(f, 0, sizeof *f);
	f->chosen = -1;
	const cJSON *j;
	const char *mode = vf__str(d, "mode", "table");
	bool search = strcmp(mode, "search") == 0;
	cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(d, search ? "results" : "rows"))
		candidate(f, j);
	/* --search: the GPU kinds where nothing fits, with fit's reason */
	if (search)
		cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(d, "not_fitting"))
			candidate(f, j);
	/* the run asked for (--tokens/--steps), even when no candidate has one */
	const cJSON *rq = cJSON_GetObjectItemCaseSensitive(d, "run");
	if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(rq, "tokens")) ||
	    cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(rq, "steps")))
		f->whole = true;
	for (int i = 0; i < f->nc; i++) {
		struct cand *c = &f->c[i];
		if (c->fits && f->chosen < 0)
			f->chosen = i, c->chosen = true;
		int g, k;
		for (g = 0; g < f->ng && strcmp(f->gpus[g], c->gpu); g++)
			;
		if (g == f->ng && f->ng < MAXR)
			snprintf(f->gpus[f->ng++], sizeof f->gpus[0], "%s", c->gpu);
		for (k = 0; k < f->nk && f->counts[k] != c->n; k++)
			;
		if (k == f->nk && f->nk < MAXK)
			f->counts[f->nk++] = c->n;
	}
	for (int a = 0; a < f->nk; a++) /* counts ascending */
		for (int b = a + 1; b < f->nk; b++)
			if (f->counts[b] < f->counts[a]) {
				int t = f->counts[a];
				f->counts[a] = f->counts[b], f->counts[b] = t;
			}
	/* the Pareto front: fitting candidates no other beats on both */
	for (int i = 0; i < f->nc; i++) {
		struct cand *c = &f->c[i];
		if (!c->fits || !isfinite(c->time) || !isfinite(c->cost))
			continue;
		c->front = true;
		for (int k = 0; k < f->nc && c->front; k++) {
			const struct cand *o = &f->c[k];
			if (k != i && o->fits && isfinite(o->time) && isfinite(o->cost) && o->time <= c->time &&
			    o->cost <= c->cost && (o->time < c->time || o->cost < c->cost))
				c->front = false;
		}
	}
}

/* The best candidate (first in fit's order) for a GPU and count. */
static const struct cand *cell(const struct fit *f, const char *gpu, int n)
{
	const struct cand *any = NULL;
	for (int i = 0; i < f->nc; i++)
		if (f->c[i].n == n && strcmp(f->c[i].gpu, gpu) == 0) {
			if (f->c[i].fits)
				return &f->c[i];
			if (!any)
				any = &f->c[i];
		}
	return any;
}

static void fmt_time(const struct fit *f, double v, char *o, size_t n)
{
	if (!isfinite(v))
		snprintf(o, n, "-");
	else if (f->whole)
		snprintf(o, n, v < 10 ? "%.2f h" : v < 100 ? "%.1f h" : "%.0f h", v);
	else
		snprintf(o, n, "%.3g s/Mtok", v);
}

static void fmt_cost(const struct fit *f, double v, char *o, size_t n)
{
	if (!isfinite(v))
		snprintf(o, n, "-");
	else
		/* as fit prints it (src/cli.c vf_fmt_usd): cents below $100, so
		 * the choices' costs stay distinct */
		snprintf(o, n, f->whole ? (v < 100 ? "$%.2f" : "$%.0f") : "$%.2f/Mtok", v);
}

static void grid_cell(struct vf_w *w, const struct fit *f, const struct cand *c, double x, double y,
		      double cw, double ch, double bmax)
{
	char t1[32], t2[32], tip[256];
	if (!c) {
		vf_w_printf(w, "<rect class=\"cell\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			       "fill=\"none\"/>", x, y, cw, ch);
		return;
	}
	double op = c->fits ? 0.25 + 0.75 * log2(1 + (c->max_batch > 0 ? c->max_batch : 1)) / log2(1 + bmax) : 1;
	fmt_time(f, c->time, t1, sizeof t1);
	fmt_cost(f, c->cost, t2, sizeof t2);
	if (c->fits)
		snprintf(tip, sizeof tip, "%s x%d fits: batch up to %.0f, %s, %s; settings: %s", c->gpu, c->n,
			 c->max_batch, t1, t2, vf__str(c->j, "settings", "as given"));
	else
		snprintf(tip, sizeof tip, "%s x%d %s: %s", c->gpu, c->n, c->tight ? "tight" : "does not fit",
			 vf__str(c->j, "reason", ""));
	vf_w_printf(w, "<g data-s=\"%s\"><rect class=\"cell %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		       "height=\"%.1f\" fill-opacity=\"%.2f\"><title>",
		    c->fits ? "fits" : c->tight ? "tight" : "does not fit", c->fits ? "f0" : c->tight ? "f1" : "f7", x, y,
		    cw, ch, c->fits ? op : c->tight ? 0.45 : 0.35);
	vf_w_esc(w, tip);
	vf_w_puts(w, "</title></rect>");
	double cx = x + cw / 2;
	if (c->fits) {
		const char *ct = op > 0.6 ? "ct inv" : "ct"; /* light text on the dark cells */
		vf_w_printf(w, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\" font-weight=\"700\">batch &#8804; %.0f%s</text>", ct,
			    cx, y + 16, c->max_batch, c->chosen ? " &#9733;" : "");
		vf_w_printf(w, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\">", ct, cx, y + 30);
		vf_w_esc(w, t1);
		vf_w_printf(w, "</text><text class=\"%s\" x=\"%.1f\" y=\"%.1f\">", ct, cx, y + 43);
		vf_w_esc(w, t2);
		vf_w_puts(w, "</text>");
	} else {
		vf_w_printf(w, "<text class=\"ct\" x=\"%.1f\" y=\"%.1f\">%s</text>", cx, y + ch / 2 + 4,
			    c->tight ? "tight" : "does not fit");
	}
	vf_w_puts(w, "</g>");
}

/* The grid as two SVGs side by side at one scale: the GPU names (sticky at
 * the left edge when a phone scrolls the grid sideways in its box) and the
 * cells with the count headers. */
static void grid(struct vf_w *w, const struct fit *f)
{
	double lw = 120, cw = 128, ch = 52, top = 26;
	double W = cw * f->nk + 8, H = top + ch * f->ng + 6, bmax = 1;
	for (int i = 0; i < f->nc; i++)
		if (f->c[i].fits && f->c[i].max_batch > bmax)
			bmax = f->c[i].max_batch;
	vf_w_printf(w, "<div class=\"gridpair\" style=\"max-width:%.0fpx\">", (lw + W) * 1.4);
	vf_w_printf(w, "<svg class=\"chart\" data-chart=\"grid-names\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		       "aria-label=\"the GPUs of the grid's rows\" xmlns=\"http://www.w3.org/2000/svg\" "
		       "style=\"flex:%.0f 1 0\"><rect class=\"bg\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\"/>",
		    lw, H, lw, lw, H);
	for (int g = 0; g < f->ng; g++) {
		vf_w_printf(w, "<text class=\"at\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", lw - 8,
			    top + ch * g + ch / 2 + 4);
		vf_w_esc(w, f->gpus[g]);
		vf_w_puts(w, "</text>");
	}
	vf_w_puts(w, "</svg>");
	vf_w_printf(w, "<svg class=\"chart\" data-chart=\"grid\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		       "aria-label=\"GPUs by GPU count: fits, largest micro-batch, time and cost\" "
		       "xmlns=\"http://www.w3.org/2000/svg\" style=\"flex:%.0f 1 0\">"
		       "<rect class=\"bg\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\"/>", W, H, W, W, H);
	for (int k = 0; k < f->nk; k++)
		vf_w_printf(w, "<text class=\"at\" x=\"%.1f\" y=\"17\" text-anchor=\"middle\">%d GPU%s</text>",
			    cw * k + cw / 2, f->counts[k], f->counts[k] > 1 ? "s" : "");
	for (int g = 0; g < f->ng; g++)
		for (int k = 0; k < f->nk; k++)
			grid_cell(w, f, cell(f, f->gpus[g], f->counts[k]), cw * k, top + ch * g, cw, ch, bmax);
	vf_w_puts(w, "</svg></div>");
}

/* The key to the grid's shading: a swatch per largest micro-batch shown,
 * at the opacity its cells have (grid_cell). */
static void shade_key(struct vf_w *w, const struct fit *f)
{
	double bs[MAXC], bmax = 1;
	int nb = 0;
	for (int i = 0; i < f->nc; i++)
		if (f->c[i].fits && f->c[i].max_batch > bmax)
			bmax = f->c[i].max_batch;
	for (int g = 0; g < f->ng; g++)
		for (int k = 0; k < f->nk; k++) {
			const struct cand *c = cell(f, f->gpus[g], f->counts[k]);
			if (!c || !c->fits)
				continue;
			double b = c->max_batch > 0 ? c->max_batch : 1;
			int j = 0;
			while (j < nb && bs[j] != b)
				j++;
			if (j == nb)
				bs[nb++] = b;
		}
	if (nb < 2)
		return; /* one shade: nothing to tell apart */
	for (int a = 0; a < nb; a++)
		for (int b = a + 1; b < nb; b++)
			if (bs[b] < bs[a]) {
				double t = bs[a];
				bs[a] = bs[b], bs[b] = t;
			}
	vf_w_puts(w, "<p class=\"note shade\">Shading, by the largest micro-batch that fits:");
	for (int i = 0; i < nb; i++)
		vf_w_printf(w, " <span class=\"nw\"><span class=\"sw f0\" style=\"opacity:%.2f\"></span> &#8804; %.0f</span>",
			    0.25 + 0.75 * log2(1 + bs[i]) / log2(1 + bmax), bs[i]);
	vf_w_puts(w, "</p>\n");
}

static int cmp_time(const void *a, const void *b)
{
	const struct cand *x = *(const struct cand *const *)a, *y = *(const struct cand *const *)b;
	return (x->time > y->time) - (x->time < y->time);
}

/* The front figure's legend: an entry for each series drawn. */
static void front_legend(struct vf_w *w, const struct fit *f, int nf)
{
	const char *ln[3] = {"configurations"};
	int lc[3] = {7}, nl = 1;
	if (nf > 1)
		ln[nl] = "Pareto front", lc[nl++] = 0;
	if (f->chosen >= 0 && isfinite(f->c[f->chosen].time) && isfinite(f->c[f->chosen].cost))
		ln[nl] = "chosen", lc[nl++] = 5;
	vf_plot_legend(w, "front", nl, ln, lc, NULL);
}

/* The front figure's numbers: the nf configurations on the front (fr). */
static void front_table(struct vf_w *w, const struct fit *f, const struct cand *const *fr, int nf)
{
	char t1[32], t2[32];
	const char *hdr[] = {"on the front", "settings", "time", "cost"};
	vf_html_table_begin(w, "Configurations no other beats on both time and cost", 4, hdr, false);
	for (int i = 0; i < nf; i++) {
		char g[64];
		snprintf(g, sizeof g, "%s x%d%s", fr[i]->gpu, fr[i]->n, fr[i]->chosen ? " (chosen)" : "");
		fmt_time(f, fr[i]->time, t1, sizeof t1);
		fmt_cost(f, fr[i]->cost, t2, sizeof t2);
		const char *row[] = {g, vf__str(fr[i]->j, "settings", "as given"), t1, t2};
		vf_html_row(w, 4, row);
	}
	vf_html_table_end(w);
}

static void front_figure(struct vf_w *w, const struct fit *f, const char *title)
{
	double xs[MAXC], ys[MAXC], fx[MAXC], fy[MAXC], xmax = 0, ymax = 0, xmin = INFINITY, ymin = INFINITY;
	char tips[MAXC][160], t1[32], t2[32];
	const char *tp[MAXC], *ftp[MAXC];
	const struct cand *fr[MAXC];
	int n = 0, nf = 0;
	for (int i = 0; i < f->nc; i++) {
		const struct cand *c = &f->c[i];
		if (!c->fits || !isfinite(c->time) || !isfinite(c->cost))
			continue;
		fmt_time(f, c->time, t1, sizeof t1);
		fmt_cost(f, c->cost, t2, sizeof t2);
		snprintf(tips[n], sizeof tips[n], "%s x%d (%s): %s, %s", c->gpu, c->n,
			 vf__str(c->j, "settings", "as given"), t1, t2);
		xs[n] = c->time, ys[n] = c->cost, tp[n] = tips[n];
		xmax = c->time > xmax ? c->time : xmax;
		ymax = c->cost > ymax ? c->cost : ymax;
		xmin = c->time < xmin ? c->time : xmin;
		ymin = c->cost < ymin ? c->cost : ymin;
		n++;
		if (c->front)
			fr[nf++] = c;
	}
	qsort(fr, (size_t)nf, sizeof fr[0], cmp_time);
	for (int i = 0; i < nf; i++) {
		fx[i] = fr[i]->time, fy[i] = fr[i]->cost;
		ftp[i] = NULL;
	}
	/* values over more than 1.5 decades on a log axis: on a linear one the
	 * fast or cheap configurations crowd at the origin */
	bool xl = vf_plot_wants_log(xmin, xmax) || (xmin > 0 && vf_plot_crowded(xs, n));
	bool yl = vf_plot_wants_log(ymin, ymax) || (ymin > 0 && vf_plot_crowded(ys, n));
	struct vf_chart c;
	vf_chart_init(&c, "front", "cost against time of every configuration that fits; the Pareto front joined",
		      f->whole ? (xl ? "time of the whole run (h, log scale)" : "time of the whole run (h)")
			       : (xl ? "time per million tokens (s, log scale)" : "time per million tokens (s)"),
		      f->whole ? (yl ? "cost of the whole run ($, log scale)" : "cost of the whole run ($)")
			       : (yl ? "cost per million tokens ($, log scale)" : "cost per million tokens ($)"));
	/* a linear axis starts at 0 unless the values all sit far from it */
	if (xl)
		vf_chart_xlog(&c, xmin, xmax);
	else
		vf_chart_xdomain(&c, xmin > 0.3 * xmax ? xmin - 0.05 * (xmax - xmin) : 0, xmax + 0.05 * (xmax - (xmin > 0.3 * xmax ? xmin : 0)));
	if (yl)
		vf_chart_ylog(&c, ymin, ymax);
	else
		vf_chart_ydomain(&c, ymin > 0.3 * ymax ? ymin - 0.08 * (ymax - ymin) : 0, ymax + 0.08 * (ymax - (ymin > 0.3 * ymax ? ymin : 0)));
	vf_html_figure_begin(w, "front", title);
	vf_chart_begin(&c, w);
	vf_chart_points(&c, w, n, xs, ys, 7, "configurations", tp);
	if (nf > 1) /* a front of one point is the chosen point: no line to draw */
		vf_chart_line(&c, w, nf, fx, fy, 0, "Pareto front", false, true, ftp);
	/* labels for the few points that matter: the chosen one first, then the
	 * front's from the fastest, each where no point, line or label lies
	 * (one with no such spot is left to the table) */
	struct vf_chart_taken taken = {0};
	if (f->chosen >= 0 && isfinite(f->c[f->chosen].time) && isfinite(f->c[f->chosen].cost)) {
		const struct cand *ch = &f->c[f->chosen];
		char lab[96];
		snprintf(lab, sizeof lab, "chosen: %s x%d", ch->gpu, ch->n);
		double cx = ch->time, cy = ch->cost;
		vf_chart_points(&c, w, 1, &cx, &cy, 5, "chosen", NULL);
		vf_chart_note_avoid(&c, w, cx, cy, lab, n, xs, ys, nf, fx, fy, &taken, true);
	}
	for (int i = 0; i < nf; i++) {
		if (fr[i]->chosen)
			continue;
		char lab[64];
		snprintf(lab, sizeof lab, "%s x%d", fr[i]->gpu, fr[i]->n);
		vf_chart_note_avoid(&c, w, fr[i]->time, fr[i]->cost, lab, n, xs, ys, nf, fx, fy, &taken, false);
	}
	vf_chart_end(&c, w);
	front_legend(w, f, nf);
	vf_html_figure_table(w);
	front_table(w, f, fr, nf);
	vf_html_figure_end(w);
}

static void candidates_table(struct vf_w *w, const struct fit *f)
{
	const char *hdr[] = {"GPU", "count", "fits", "settings needed", "max batch", "step", "time", "cost"};
	vf_html_section_begin(w, "rows", "Every GPU and count, in fit's order");
	vf_html_table_begin(w, NULL, 8, hdr, false);
	for (int i = 0; i < f->nc; i++) {
		const struct cand *c = &f->c[i];
		char n[16], mb[16], st[32], t1[32], t2[32];
		snprintf(n, sizeof n, "%d", c->n);
		snprintf(mb, sizeof mb, c->fits ? "%.0f" : "-", c->max_batch);
		vf__secs(st, sizeof st, vf__num(c->j, "step_seconds"));
		fmt_time(f, c->time, t1, sizeof t1);
		fmt_cost(f, c->cost, t2, sizeof t2);
		/* the CLI's words: yes / tight / no */
		const char *row[] = {c->gpu, n, c->fits ? "yes" : c->tight ? "tight" : "no",
				     c->fits ? vf__str(c->j, "settings", "as given") : vf__str(c->j, "reason", ""),
				     mb, st, t1, t2};
		vf_html_row(w, 8, row);
	}
	vf_html_table_end(w);
	vf_html_section_end(w);
}

static void assumptions(struct vf_w *w, const cJSON *d)
{
	vf_html_section_begin(w, "assumptions", "Assumptions");
	vf_w_puts(w, "<ul class=\"plain\">");
	const cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(d, "assumptions")) if (cJSON_IsString(it))
	{
		vf_w_puts(w, "<li>");
		vf_html_md_inline(w, it->valuestring);
		vf_w_puts(w, "</li>");
	}
	vf_w_puts(w, "</ul>");
	vf_html_section_end(w);
}

/* The page's title: fit's own count (--search: N shown of M that fit, K
 * over in the allocator simulation; else N of M GPU configurations) and
 * the chosen one. */
static void fit_title(const cJSON *d, const struct fit *f, const char *model, int nfit, char *title,
		      size_t tn)
{
	char t1[32], t2[32];
	char head[160];
	const cJSON *se = cJSON_GetObjectItemCaseSensitive(d, "search");
	if (se) { /* fit's own words: N shown of M that fit (K over in the simulation) */
		double rej = vf__num(se, "rejected_by_allocator_simulation");
		int l = snprintf(head, sizeof head, "%s: %d shown of %.0f configurations that fit", model, nfit,
				 vf__num(se, "fitting"));
		if (rej > 0)
			snprintf(head + l, sizeof head - (size_t)l, " (%.0f of them over in the allocator simulation)",
				 rej);
	} else {
		snprintf(head, sizeof head, "%s: %d of %d GPU configurations fit", model, nfit, f->nc);
	}
	if (f->chosen >= 0) {
		const struct cand *c = &f->c[f->chosen];
		fmt_time(f, c->time, t1, sizeof t1);
		fmt_cost(f, c->cost, t2, sizeof t2);
		snprintf(title, tn, "%s; chosen %s x%d (%s): %s, %s", head, c->gpu, c->n,
			 vf__str(c->j, "settings", "as given"), t1, t2);
	} else if (se) {
		snprintf(title, tn, "%s", head);
	} else {
		snprintf(title, tn, "%s: none of the %d GPU configurations fits", model, f->nc);
	}
	/* as the text: what was not understood makes every figure approximate */
	size_t l = strlen(title);
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "approximate")) && l < tn)
		snprintf(title + l, tn - l, " (approximate: see Assumptions)");
}

void vf__report_fit(struct vf_w *w, const cJSON *d)
{
	struct fit *f = calloc(1, sizeof *f);
	if (!f) {
		w->st = vf_error_set(w->err, VF_ENOMEM, "report: out of memory");
		return;
	}
	read_fit(d, f);
	const char *model = vf__str(cJSON_GetObjectItemCaseSensitive(d, "model"), "id", "model");
	char title[512];
	int nfit = 0, nfront = 0;
	for (int i = 0; i < f->nc; i++)
		nfit += f->c[i].fits, nfront += f->c[i].front;
	fit_title(d, f, model, nfit, title, sizeof title);
	vf_html_begin(w, "fit", title, f->whole ? "Time and cost of the whole run (--tokens/--steps)."
						: "Time and cost per million tokens (give --tokens or --steps for the whole run).");
	/* the grid's own count: its cells (GPU x count) that fit judged, not
	 * the candidates behind them (a cell may hold a split or tight row as
	 * well); a GPU x count fit did not evaluate is a blank cell, counted
	 * apart, never as one that does not fit */
	int ncell = 0, ncell_fit = 0, nblank = 0;
	for (int g = 0; g < f->ng; g++)
		for (int k = 0; k < f->nk; k++) {
			const struct cand *c = cell(f, f->gpus[g], f->counts[k]);
			ncell += c != NULL;
			nblank += c == NULL;
			ncell_fit += c && c->fits;
		}
	char gt[320], blank[96] = "";
	if (nblank)
		snprintf(blank, sizeof blank, "; %d blank: GPU x count not evaluated", nblank);
	snprintf(gt, sizeof gt, "Which GPUs fit, and how: %d of %d cells fit (darker = larger micro-batch; \xE2\x98\x85 = chosen%s)",
		 ncell_fit, ncell, blank);
	vf_html_section_begin(w, "grid", gt);
	vf_w_puts(w, "<div class=\"plot\">");
	grid(w, f);
	vf_w_puts(w, "</div>");
	/* an entry for each kind of cell the grid shows, no other */
	const char *ln[3];
	int lc[3], nl = 0, kinds[3] = {0, 0, 0};
	for (int g = 0; g < f->ng; g++)
		for (int k = 0; k < f->nk; k++) {
			const struct cand *c = cell(f, f->gpus[g], f->counts[k]);
			if (c)
				kinds[c->fits ? 0 : c->tight ? 2 : 1]++;
		}
	if (kinds[0])
		ln[nl] = "fits", lc[nl++] = 0;
	if (kinds[1])
		ln[nl] = "does not fit", lc[nl++] = 7;
	if (kinds[2])
		ln[nl] = "tight", lc[nl++] = 1;
	vf_plot_legend(w, "grid", nl, ln, lc, NULL);
	shade_key(w, f);
	vf_html_section_end(w);
	if (nfront) {
		snprintf(gt, sizeof gt, "Cost against time: %d configuration%s on the Pareto front, chosen labelled", nfront,
			 nfront > 1 ? "s" : "");
		front_figure(w, f, gt);
	} else {
		vf_html_p(w, "note", "No cost-time front: no configuration that fits has both a step time and a price.");
	}
	candidates_table(w, f);
	assumptions(w, d);
	vf_html_data(w, d);
	vf_html_end(w);
	free(f);
}
