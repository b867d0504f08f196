/* report_estimate.c - the estimate report: the memory at each phase of a
 * step stacked by term with each GPU's capacity as a line, the peak against
 * the micro-batch per GPU, step time and tokens/s against the micro-batch,
 * the GPU table and every assumption. A serving engine's estimate (its
 * "memory" names an "engine") is report_engine.c's page.
 *
 * Reads an estimate --json object plus:
 *   "phases":      [{"phase", "peak", "terms": {term: bytes}, "total_bytes"}]
 *   "batch_sweep": [{"gpu", "name", "vram_bytes", "max_batch",
 *                    "points": [{"batch", "peak_bytes", "step_seconds",
 *                                "tokens_per_second"}]}]
 *   "gpus"[i].name, "title" (optional headline override). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "vramfit/report/report.h"

#define MAXG 8   /* GPUs drawn (the tables list them all) */
#define MAXP 128 /* batch points */

static const int gpu_colors[MAXG] = {0, 5, 2, 3, 1, 4, 8, 9};
#define NEUTRAL 10 /* the text colour: capacity lines over the term colours */

/* A GPU's display name: short catalog name, else its id. */
static const char *gname(const cJSON *g, char *out, size_t n)
{
	const char *name = vf__str(g, "name", NULL);
	if (name)
		return vf__gpu_short(name, out, n);
	snprintf(out, n, "%s", vf__str(g, "id", vf__str(g, "gpu", "GPU")));
	return out;
}

/* Capacity lines: GPUs whose lines would lie within 4 units of each other
 * on the chart are one line (at the smallest capacity) with one label
 * naming each, and one legend entry: two lines drawn over each other would
 * hide one, and their labels would collide. */
struct capline {
	double y;          /* GiB */
	int first;         /* the group's first GPU (its colour) */
	char label[192];   /* "RTX 4090, RTX 3090 24.0 GiB" */
	char series[160];  /* "RTX 4090, RTX 3090" (+ suffix) */
};

static int cap_lines(const struct vf_chart *c, int n, const char *const *names, const double *gib, const char *suffix,
		     struct capline *out)
{
	int ord[MAXG], nl = 0;
	bool used[MAXG] = {false};
	n = n > MAXG ? MAXG : n;
	for (int i = 0; i < n; i++)
		ord[i] = i;
	for (int a = 0; a < n; a++) /* by capacity, stable */
		for (int b = a + 1; b < n; b++)
			if (gib[ord[b]] < gib[ord[a]]) {
				int t = ord[a];
				ord[a] = ord[b], ord[b] = t;
			}
	for (int a = 0; a < n; a++) {
		int i = ord[a];
		if (used[i])
			continue;
		struct capline *l = &out[nl++];
		int mem[MAXG], nm = 0;
		for (int b = a; b < n; b++)
			if (!used[ord[b]] && fabs(vf_chart_py(c, gib[ord[b]]) - vf_chart_py(c, gib[i])) < 4)
				used[ord[b]] = true, mem[nm++] = ord[b];
		for (int x = 0; x < nm; x++) /* in the page's GPU order */
			for (int y = x + 1; y < nm; y++)
				if (mem[y] < mem[x]) {
					int t = mem[x];
					mem[x] = mem[y], mem[y] = t;
				}
		l->y = gib[i];
		l->first = mem[0];
		char v[MAXG][32];
		bool same = true;
		for (int k = 0; k < nm; k++) {
			vf__gib(v[k], sizeof v[k], gib[mem[k]] * GIB);
			same = same && strcmp(v[k], v[0]) == 0;
		}
		size_t o = 0, q = 0;
		l->label[0] = l->series[0] = '\0';
		for (int k = 0; k < nm; k++) {
			if (o < sizeof l->label)
				o += (size_t)snprintf(l->label + o, sizeof l->label - o, "%s%s%s%s", k ? ", " : "", names[mem[k]],
						      same ? "" : " ", same ? "" : v[k]);
			if (q < sizeof l->series)
				q += (size_t)snprintf(l->series + q, sizeof l->series - q, "%s%s", k ? ", " : "", names[mem[k]]);
		}
		if (same && o < sizeof l->label)
			snprintf(l->label + o, sizeof l->label - o, " %s", v[0]);
		if (suffix && q < sizeof l->series)
			snprintf(l->series + q, sizeof l->series - q, "%s", suffix);
	}
	return nl;
}

/* Draw the capacity lines, each label clear of the series (nser lines,
 * may be 0), of the labels placed before (taken) and of the other
 * capacity lines. color < 0: each line in its first GPU's colour. */
static void cap_draw(const struct vf_chart *c, struct vf_w *w, const struct capline *cl, int ncl, int color, int nser,
		     const double *const *xs, const double *const *ys, const int *ns, struct vf_chart_taken *taken)
{
	for (int i = 0; i < ncl; i++) {
		struct vf_chart_taken t = *taken;
		for (int j = 0; j < ncl && t.n < VF_CHART_MAX_TAKEN; j++)
			if (j != i) {
				double py = vf_chart_py(c, cl[j].y);
				t.x0[t.n] = c->ml, t.x1[t.n] = c->w - c->mr, t.y0[t.n] = py - 1, t.y1[t.n] = py + 1;
				t.n++;
			}
		vf_chart_hline_avoid(c, w, cl[i].y, color >= 0 ? color : gpu_colors[cl[i].first], cl[i].series,
				     cl[i].label, nser, xs, ys, ns, &t);
		if (taken->n < VF_CHART_MAX_TAKEN && t.n > 0) { /* the label just placed: the last box */
			taken->x0[taken->n] = t.x0[t.n - 1], taken->x1[taken->n] = t.x1[t.n - 1];
			taken->y0[taken->n] = t.y0[t.n - 1], taken->y1[taken->n] = t.y1[t.n - 1];
			taken->n++;
		}
	}
}

/* The terms that appear at any phase (legend entries and table rows). */
static int phase_terms(const cJSON *phases, int np, const char **keys)
{
	int nk = 0;
	for (int k = 0; k < VF_TERM_COUNT; k++) {
		const char *key = vf_term_name((enum vf_term)k);
		for (int p = 0; p < np; p++)
			if (vf__num(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(phases, p), "terms"), key) > 0) {
				keys[nk++] = key;
				break;
			}
	}
	return nk;
}

static void phase_bars(const struct vf_chart *c, struct vf_w *w, const cJSON *phases, int np, const char **keys,
		       int nk, const char *const *labels)
{
	for (int p = 0; p < np; p++) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(phases, p), "terms");
		double v[VF_TERM_COUNT];
		int col[VF_TERM_COUNT];
		const char *names[VF_TERM_COUNT], *tp[VF_TERM_COUNT];
		char tips[VF_TERM_COUNT][96], gb[32];
		for (int k = 0; k < nk; k++) {
			v[k] = vf__num(t, keys[k]) / GIB;
			col[k] = vf__term_color(keys[k]);
			names[k] = vf__term_label(keys[k]);
			snprintf(tips[k], sizeof tips[k], "%s, %s: %s", labels[p], names[k], vf__gib(gb, sizeof gb, v[k] * GIB));
			tp[k] = tips[k];
		}
		vf_chart_stack(c, w, p, nk, v, col, names, tp);
	}
}

static void phase_legend(struct vf_w *w, const char **keys, int nk, const bool *drawn, const struct capline *cl, int ncl)
{
	const char *ln[VF_TERM_COUNT + MAXG];
	int lc[VF_TERM_COUNT + MAXG];
	bool dash[VF_TERM_COUNT + MAXG];
	int nl = 0;
	for (int k = 0; k < nk; k++)
		if (drawn[k])
			ln[nl] = vf__term_label(keys[k]), lc[nl] = vf__term_color(keys[k]), dash[nl++] = false;
	for (int i = 0; i < ncl; i++)
		ln[nl] = cl[i].series, lc[nl] = NEUTRAL, dash[nl++] = true;
	vf_plot_legend(w, "phases", nl, ln, lc, dash);
}

static void phase_table(struct vf_w *w, const cJSON *phases, int np, const char **keys, int nk,
			const char *const *labels)
{
	const char *hdr[1 + VF_PHASE_COUNT];
	hdr[0] = "term (GiB)";
	for (int p = 0; p < np; p++)
		hdr[1 + p] = labels[p];
	vf_html_table_begin(w, "Live memory at each phase, per GPU", 1 + np, hdr, false);
	char cells[1 + VF_PHASE_COUNT][32];
	const char *row[1 + VF_PHASE_COUNT];
	for (int k = 0; k <= nk; k++) {
		row[0] = k < nk ? vf__term_label(keys[k]) : "total";
		for (int p = 0; p < np; p++) {
			const cJSON *ph = cJSON_GetArrayItem(phases, p);
			double v = k < nk ? vf__num(cJSON_GetObjectItemCaseSensitive(ph, "terms"), keys[k])
					  : vf__num(ph, "total_bytes");
			snprintf(cells[p], sizeof cells[p], "%.2f", v / GIB);
			row[1 + p] = cells[p];
		}
		vf_html_row(w, 1 + np, row);
	}
	vf_html_table_end(w);
}

void vf__phase_figure(struct vf_w *w, const cJSON *phases, const cJSON *gpus, const char *title)
{
	int np = cJSON_GetArraySize(phases);
	if (np <= 0)
		return;
	np = np > VF_PHASE_COUNT ? VF_PHASE_COUNT : np;
	const char *labels[VF_PHASE_COUNT], *keys[VF_TERM_COUNT];
	double top = 0;
	int peak = 0;
	for (int p = 0; p < np; p++) {
		const cJSON *ph = cJSON_GetArrayItem(phases, p);
		labels[p] = vf__str(ph, "phase", "?");
		double t = vf__num(ph, "total_bytes") / GIB;
		if (t > top)
			top = t, peak = p;
	}
	int nk = phase_terms(phases, np, keys);
	const cJSON *g;
	cJSON_ArrayForEach(g, gpus) if (vf__num(g, "vram_bytes") / GIB > top) top = vf__num(g, "vram_bytes") / GIB;
	struct vf_chart c;
	vf_chart_init(&c, "phases", "memory at each phase of a step, stacked by term, with each GPU's capacity",
		      "phase of the training step", "memory per GPU (GiB)");
	vf_chart_xbands(&c, np, labels);
	vf_chart_ydomain(&c, 0, top * 1.04);
	vf_html_figure_begin(w, "phases", title);
	vf_chart_begin(&c, w);
	phase_bars(&c, w, phases, np, keys, nk, labels);
	int ng = 0;
	char gn[MAXG][64];
	const char *gnp[MAXG];
	double cap[MAXG];
	cJSON_ArrayForEach(g, gpus)
	{
		if (ng >= MAXG)
			break;
		gnp[ng] = gname(g, gn[ng], sizeof gn[ng]);
		cap[ng++] = vf__num(g, "vram_bytes") / GIB;
	}
	struct capline cl[MAXG];
	int ncl = cap_lines(&c, ng, gnp, cap, NULL, cl);
	/* the "peak" note's box first (vf_chart_note: 7 units right of and
	 * above its point), then each capacity label clear of it and of the others */
	struct vf_chart_taken taken = {0};
	double ptop = vf__num(cJSON_GetArrayItem(phases, peak), "total_bytes") / GIB;
	taken.x0[0] = vf_chart_px(&c, peak + 0.05) + 7, taken.x1[0] = taken.x0[0] + 7.2 * 4 + 4;
	taken.y1[0] = vf_chart_py(&c, ptop) - 4, taken.y0[0] = taken.y1[0] - 14, taken.n = 1;
	cap_draw(&c, w, cl, ncl, NEUTRAL, 0, NULL, NULL, NULL, &taken);
	vf_chart_note(&c, w, peak + 0.05, ptop, "peak");
	vf_chart_end(&c, w);
	/* a term too thin to see at this scale (under a unit of height at every
	 * phase) is named under the legend, not given an entry of its own */
	bool drawn[VF_TERM_COUNT];
	char thin[512] = "";
	size_t to = 0;
	for (int k = 0; k < nk; k++) {
		double most = 0;
		for (int p = 0; p < np; p++)
			most = fmax(most, vf__num(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(phases, p), "terms"), keys[k]) / GIB);
		drawn[k] = vf_chart_py(&c, 0) - vf_chart_py(&c, most) >= 1;
		if (!drawn[k] && to < sizeof thin) {
			char gb[32];
			to += (size_t)snprintf(thin + to, sizeof thin - to, "%s%s (%s)", to ? ", " : "", vf__term_label(keys[k]),
					       vf__gib(gb, sizeof gb, most * GIB));
		}
	}
	phase_legend(w, keys, nk, drawn, cl, ncl);
	if (to) {
		char note[600];
		snprintf(note, sizeof note, "Too thin to draw at this scale: %s; in the table.", thin);
		vf_html_p(w, "note", note);
	}
	vf_html_figure_table(w);
	phase_table(w, phases, np, keys, nk, labels);
	vf_html_p(w, "note", "The allocator reserve is computed at the peak phase only; the CUDA context "
			     "is held at every phase.");
	vf_html_figure_end(w);
}

/* ---- the batch sweep --------------------------------------------------------- */

struct sweep {
	int ng;
	char name[MAXG][64];
	double vram[MAXG];
	int maxb[MAXG];
	int np[MAXG];
	double b[MAXG][MAXP], peak[MAXG][MAXP], step[MAXG][MAXP], tps[MAXG][MAXP];
	double bmax, ymax;
	bool timed;
};

static void read_sweep(const cJSON *d, struct sweep *s)
{
	memset(s, 0, sizeof *s);
	const cJSON *g;
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(d, "batch_sweep"))
	{
		if (s->ng >= MAXG)
			break;
		int i = s->ng++;
		gname(g, s->name[i], sizeof s->name[i]);
		s->vram[i] = vf__num(g, "vram_bytes") / GIB;
		s->maxb[i] = (int)vf__num(g, "max_batch");
		if (s->vram[i] > s->ymax)
			s->ymax = s->vram[i];
		const cJSON *p;
		cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(g, "points"))
		{
			if (s->np[i] >= MAXP)
				break;
			int k = s->np[i]++;
			s->b[i][k] = vf__num(p, "batch");
			s->peak[i][k] = vf__num(p, "peak_bytes") / GIB;
			s->step[i][k] = vf__num(p, "step_seconds");
			s->tps[i][k] = vf__num(p, "tokens_per_second");
			if (isfinite(s->step[i][k]))
				s->timed = true;
			if (s->b[i][k] > s->bmax)
				s->bmax = s->b[i][k];
			if (s->peak[i][k] > s->ymax)
				s->ymax = s->peak[i][k];
		}
	}
}

/* The peak at batch b on sweep GPU i; NAN when not swept. */
static double sweep_peak(const struct sweep *s, int i, double b)
{
	for (int k = 0; i < s->ng && k < s->np[i]; k++)
		if (s->b[i][k] == b)
			return s->peak[i][k];
	return NAN;
}

/* The sweep GPU with the most points (its batches are the table's rows). */
static int longest(const struct sweep *s)
{
	int L = 0;
	for (int i = 1; i < s->ng; i++)
		if (s->np[i] > s->np[L])
			L = i;
	return L;
}

/* Does every point of series i lie on series j (same batch, within 0.5%
 * of the axis)? */
static bool lies_on(const struct sweep *s, int i, int j, const double ys[][MAXP], double top)
{
	int shown = 0;
	for (int k = 0; k < s->np[i]; k++) {
		if (!isfinite(ys[i][k]))
			continue;
		shown++;
		bool on = false;
		for (int m = 0; m < s->np[j] && !on; m++)
			on = s->b[j][m] == s->b[i][k] && isfinite(ys[j][m]) && fabs(ys[j][m] - ys[i][k]) <= 0.005 * top;
		if (!on)
			return false;
	}
	return shown > 0;
}

/* The lines that lie on each other (every point of one on the other, over
 * their common batches): series i's share k of m in its group (the
 * connected sets of such pairs, in the page's GPU order), m = 1 alone. */
static void shares(const struct sweep *s, const double ys[][MAXP], double top, int *k, int *m)
{
	int grp[MAXG];
	for (int i = 0; i < s->ng; i++)
		grp[i] = i;
	for (int i = 0; i < s->ng; i++)
		for (int j = 0; j < s->ng; j++)
			if (i != j && (lies_on(s, i, j, ys, top) || lies_on(s, j, i, ys, top))) {
				int a = grp[i], b = grp[j], lo = a < b ? a : b;
				for (int x = 0; x < s->ng; x++)
					if (grp[x] == a || grp[x] == b)
						grp[x] = lo;
			}
	for (int i = 0; i < s->ng; i++) { /* the longest line first: its circles at every point */
		k[i] = m[i] = 0;
		for (int j = 0; j < s->ng; j++)
			if (grp[j] == grp[i]) {
				m[i]++;
				k[i] += s->np[j] > s->np[i] || (s->np[j] == s->np[i] && j < i);
			}
	}
}

/* A line's markers by its share k of m: alone a circle; on each other
 * nested shapes (a large circle, a square, a dot), none past the third. */
static enum vf_marker share_marker(int k, int m)
{
	if (m <= 1)
		return VF_MARK_CIRCLE;
	return k == 0 ? VF_MARK_LARGE : k == 1 ? VF_MARK_SQUARE : k == 2 ? VF_MARK_DOT : VF_MARK_NONE;
}

/* One entry per drawn series (shown[i]; dashed[i] when drawn dashed on
 * top of another) and per capacity line (cl, may be none). */
static void sweep_legend(struct vf_w *w, const char *id, const struct sweep *s, const bool *shown, const bool *dashed,
			 const struct capline *cl, int ncl)
{
	const char *n[2 * MAXG];
	int col[2 * MAXG];
	bool da[2 * MAXG];
	int k = 0;
	for (int i = 0; i < s->ng; i++)
		if (shown[i])
			n[k] = s->name[i], col[k] = gpu_colors[i], da[k++] = dashed && dashed[i];
	for (int i = 0; i < ncl; i++)
		n[k] = cl[i].series, col[k] = gpu_colors[cl[i].first], da[k++] = true;
	vf_plot_legend(w, id, k, n, col, da);
}

/* The batch figure's heading: the largest micro-batch each GPU fits. */
static void batch_title(const struct sweep *s, char *title, size_t n)
{
	size_t o = (size_t)snprintf(title, n, "Peak memory vs micro-batch:");
	for (int i = 0; i < s->ng && o < n; i++) {
		if (s->maxb[i] > 0)
			o += (size_t)snprintf(title + o, n - o, "%s %s fits up to batch %d", i ? ";" : "", s->name[i],
					      s->maxb[i]);
		else
			o += (size_t)snprintf(title + o, n - o, "%s %s does not fit batch 1", i ? ";" : "", s->name[i]);
	}
}

/* The batch figure's numbers: each GPU's peak at each micro-batch. */
static void batch_table(struct vf_w *w, const struct sweep *s)
{
	const char *hdr[1 + MAXG];
	hdr[0] = "batch";
	char hn[MAXG][80];
	for (int i = 0; i < s->ng; i++) {
		snprintf(hn[i], sizeof hn[i], "%s peak (GiB)", s->name[i]);
		hdr[1 + i] = hn[i];
	}
	vf_html_table_begin(w, "Predicted peak per GPU; * = over the GPU's memory", 1 + s->ng, hdr, false);
	int L = longest(s);
	for (int k = 0; k < s->np[L]; k++) {
		char cells[1 + MAXG][32];
		const char *row[1 + MAXG];
		snprintf(cells[0], sizeof cells[0], "%.0f", s->b[L][k]);
		row[0] = cells[0];
		for (int i = 0; i < s->ng; i++) {
			double v = sweep_peak(s, i, s->b[L][k]);
			if (isfinite(v))
				snprintf(cells[1 + i], sizeof cells[1 + i], "%.2f%s", v, v > s->vram[i] ? " *" : "");
			else
				snprintf(cells[1 + i], sizeof cells[1 + i], "-");
			row[1 + i] = cells[1 + i];
		}
		vf_html_row(w, 1 + s->ng, row);
	}
	vf_html_table_end(w);
}

static void batch_figure(struct vf_w *w, const struct sweep *s)
{
	char title[512], gb[32];
	batch_title(s, title, sizeof title);
	struct vf_chart c;
	vf_chart_init(&c, "batch", "predicted peak memory per GPU against the micro-batch, with each GPU's capacity",
		      "micro-batch (samples per GPU)", "peak memory per GPU (GiB)");
	c.xint = true;
	vf_chart_xdomain(&c, 1, s->bmax > 1 ? s->bmax : 2);
	vf_chart_ydomain(&c, 0, s->ymax * 1.04);
	vf_html_figure_begin(w, "batch", title);
	int sk[MAXG], sm[MAXG];
	bool dashed[MAXG];
	vf_chart_begin(&c, w);
	shares(s, s->peak, s->ymax, sk, sm);
	for (int i = 0; i < s->ng; i++) {
		dashed[i] = sm[i] > 1;
		/* lines on each other: interleaved dashes, nested markers */
		vf_chart_line_marked(&c, w, s->np[i], s->b[i], s->peak[i], gpu_colors[i], s->name[i], false,
				     VF_MARK_NONE, sk[i], sm[i], NULL);
	}
	for (int k = 0; k < s->ng; k++) /* the markers over every line, the larger shapes first */
		for (int i = 0; i < s->ng; i++) {
			if (sk[i] != k)
				continue;
			char tips[MAXP][96];
			const char *tp[MAXP];
			for (int q = 0; q < s->np[i]; q++) {
				snprintf(tips[q], sizeof tips[q], "%s, batch %.0f: %s%s", s->name[i], s->b[i][q],
					 vf__gib(gb, sizeof gb, s->peak[i][q] * GIB),
					 s->peak[i][q] > s->vram[i] ? " (does not fit)" : "");
				tp[q] = tips[q];
			}
			vf_chart_markers(&c, w, s->np[i], s->b[i], s->peak[i], gpu_colors[i], s->name[i],
					 share_marker(sk[i], sm[i]), tp);
		}
	/* the capacities after the lines: each label where no line or other
	 * label crosses it; capacities on one line share it */
	const double *lxs[MAXG], *lys[MAXG];
	const char *names[MAXG];
	bool shown[MAXG] = {false};
	for (int i = 0; i < s->ng; i++)
		lxs[i] = s->b[i], lys[i] = s->peak[i], names[i] = s->name[i], shown[i] = s->np[i] > 0;
	struct capline cl[MAXG];
	int ncl = cap_lines(&c, s->ng, names, s->vram, " capacity", cl);
	struct vf_chart_taken taken = {0};
	cap_draw(&c, w, cl, ncl, -1, s->ng, lxs, lys, s->np, &taken);
	vf_chart_end(&c, w);
	sweep_legend(w, "batch", s, shown, dashed, cl, ncl);
	vf_html_figure_table(w);
	batch_table(w, s);
	vf_html_figure_end(w);
}

/* The numbers of a time figure: ys[i][k] per sweep GPU and point. */
static void time_table(struct vf_w *w, const struct sweep *s, double ys[][MAXP], int which)
{
	const char *hdr[1 + MAXG];
	char hn[MAXG][80];
	hdr[0] = "batch";
	for (int i = 0; i < s->ng; i++) {
		snprintf(hn[i], sizeof hn[i], "%s %s", s->name[i], which ? "tokens/s" : "step (s)");
		hdr[1 + i] = hn[i];
	}
	vf_html_table_begin(w, which ? "Predicted throughput; - = does not fit" : "Predicted step time; - = does not fit",
			    1 + s->ng, hdr, false);
	int L = longest(s);
	for (int k = 0; k < s->np[L]; k++) {
		char cells[1 + MAXG][32];
		const char *row[1 + MAXG];
		snprintf(cells[0], sizeof cells[0], "%.0f", s->b[L][k]);
		row[0] = cells[0];
		for (int i = 0; i < s->ng; i++) {
			double v = NAN;
			for (int j = 0; j < s->np[i]; j++)
				if (s->b[i][j] == s->b[L][k])
					v = ys[i][j];
			if (which)
				vf__count(cells[1 + i], sizeof cells[1 + i], v);
			else if (isfinite(v))
				snprintf(cells[1 + i], sizeof cells[1 + i], "%.3g", v);
			else
				snprintf(cells[1 + i], sizeof cells[1 + i], "-");
			row[1 + i] = cells[1 + i];
		}
		vf_html_row(w, 1 + s->ng, row);
	}
	vf_html_table_end(w);
}

/* A time figure's values (ys: the fitting points, NaN elsewhere), their
 * top and largest batch, and its heading (title, n bytes); returns the
 * most fitting points of one GPU. */
static int time_values(const struct sweep *s, int which, double ys[][MAXP], double *top, double *bmax, char *title,
		       size_t n)
{
	int npts = 0;
	char v1[32], v2[32];
	size_t o = (size_t)snprintf(title, n, "%s", which ? "Throughput vs micro-batch:" : "Step time vs micro-batch:");
	for (int i = 0, shown = 0; i < s->ng; i++) {
		int last = -1;
		for (int k = 0; k < s->np[i]; k++) {
			bool fits = s->peak[i][k] <= s->vram[i];
			double v = which ? s->tps[i][k] : s->step[i][k];
			ys[i][k] = fits && isfinite(v) && v > 0 ? v : NAN;
			if (isfinite(ys[i][k])) {
				last = k;
				*top = ys[i][k] > *top ? ys[i][k] : *top;
				*bmax = s->b[i][k] > *bmax ? s->b[i][k] : *bmax;
			}
		}
		npts = last + 1 > npts ? last + 1 : npts;
		if (last >= 0 && o < n) {
			if (which)
				o += (size_t)snprintf(title + o, n - o, "%s %s %s tokens/s at batch %.0f", shown++ ? ";" : "",
						      s->name[i], vf__count(v1, sizeof v1, ys[i][last]), s->b[i][last]);
			else if (last == 0) /* one batch: one figure, said once */
				o += (size_t)snprintf(title + o, n - o, "%s %s %s per step at batch %.0f",
						      shown++ ? ";" : "", s->name[i], vf__secs(v1, sizeof v1, ys[i][0]),
						      s->b[i][0]);
			else
				o += (size_t)snprintf(title + o, n - o, "%s %s %s per step at batch 1, %s at batch %.0f",
						      shown++ ? ";" : "", s->name[i], vf__secs(v1, sizeof v1, ys[i][0]),
						      vf__secs(v2, sizeof v2, ys[i][last]), s->b[i][last]);
		}
	}
	return npts;
}

/* A time figure's legend: an entry for each GPU drawn; the ones with no
 * batch that fits named in a note. */
static void time_legend(struct vf_w *w, const char *id, const struct sweep *s, double ys[][MAXP],
			const bool *dashed)
{
	bool shown[MAXG] = {false};
	char none[400] = "";
	size_t no = 0;
	for (int i = 0; i < s->ng; i++) {
		shown[i] = false;
		for (int k = 0; k < s->np[i]; k++)
			shown[i] = shown[i] || isfinite(ys[i][k]);
		if (!shown[i] && no < sizeof none)
			no += (size_t)snprintf(none + no, sizeof none - no, "%s%s", no ? ", " : "", s->name[i]);
	}
	sweep_legend(w, id, s, shown, dashed, NULL, 0);
	if (no) {
		char note[480];
		snprintf(note, sizeof note, "Not drawn: %s (no micro-batch fits).", none);
		vf_html_p(w, "note", note);
	}
}

/* Step time (which == 0) or tokens/s (1) against the batch, fitting points only. */
static void time_figure(struct vf_w *w, const struct sweep *s, int which)
{
	double ys[MAXG][MAXP], top = 0, bmax = 1;
	char title[512], v1[32];
	int npts = time_values(s, which, ys, &top, &bmax, title, sizeof title); /* the most fitting points of one GPU */
	const char *id = which ? "throughput" : "steptime";
	if (npts < 2) {
		/* one value per GPU (or none): a figure in the text, not a plot */
		const char *pre = which ? "Throughput vs micro-batch:" : "Step time vs micro-batch:";
		char t2[560];
		snprintf(t2, sizeof t2, "%s%s", which ? "Throughput:" : "Step time:", title + strlen(pre));
		vf_html_section_begin(w, id, t2);
		vf_html_p(w, "note", npts ? "Only one micro-batch fits, so there is no curve to draw: the figure is in the heading "
					    "and the table."
					  : "No micro-batch fits any of the GPUs: no time to show.");
		if (npts)
			time_table(w, s, ys, which);
		vf_html_section_end(w);
		return;
	}
	struct vf_chart c;
	vf_chart_init(&c, id, which ? "predicted tokens per second against the micro-batch, per GPU"
				    : "predicted step time against the micro-batch, per GPU",
		      "micro-batch (samples per GPU)", which ? "throughput (tokens/s, all GPUs)" : "step time (s)");
	c.xint = true;
	c.ml = 72;
	vf_chart_xdomain(&c, 1, bmax > 1 ? bmax : 2);
	vf_chart_ydomain(&c, 0, top * 1.05);
	int sk[MAXG], sm[MAXG];
	bool dashed[MAXG];
	vf_html_figure_begin(w, id, title);
	vf_chart_begin(&c, w);
	shares(s, (const double(*)[MAXP])ys, top, sk, sm);
	for (int i = 0; i < s->ng; i++) {
		dashed[i] = sm[i] > 1;
		vf_chart_line_marked(&c, w, s->np[i], s->b[i], ys[i], gpu_colors[i], s->name[i], false,
				     VF_MARK_NONE, sk[i], sm[i], NULL);
	}
	for (int k = 0; k < s->ng; k++) /* the markers over every line, the larger shapes first */
		for (int i = 0; i < s->ng; i++) {
			if (sk[i] != k)
				continue;
			char tips[MAXP][96];
			const char *tp[MAXP];
			for (int q = 0; q < s->np[i]; q++) {
				if (which)
					snprintf(tips[q], sizeof tips[q], "%s, batch %.0f: %s tokens/s", s->name[i], s->b[i][q],
						 vf__count(v1, sizeof v1, ys[i][q]));
				else
					snprintf(tips[q], sizeof tips[q], "%s, batch %.0f: %s per step", s->name[i], s->b[i][q],
						 vf__secs(v1, sizeof v1, ys[i][q]));
				tp[q] = tips[q];
			}
			vf_chart_markers(&c, w, s->np[i], s->b[i], ys[i], gpu_colors[i], s->name[i], share_marker(sk[i], sm[i]), tp);
		}
	vf_chart_end(&c, w);
	time_legend(w, id, s, ys, dashed);
	vf_html_figure_table(w);
	time_table(w, s, ys, which);
	vf_html_figure_end(w);
}

/* ---- headline, GPU table, page ---------------------------------------------- */

static void headline(const cJSON *d, const struct sweep *s, char *t, size_t n)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(d, "model");
	const cJSON *su = cJSON_GetObjectItemCaseSensitive(d, "setup");
	double batch = vf__num(su, "batch");
	size_t o = (size_t)snprintf(t, n, "%s %s:", vf__str(m, "id", "model"), vf__str(su, "mode", ""));
	const cJSON *g;
	int i = 0;
	char gn[64], a[32], b[32];
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(d, "gpus"))
	{
		if (o >= n)
			break;
		gname(g, gn, sizeof gn);
		double mb = vf__num(g, "max_batch");
		const char *sep = i++ ? ";" : "";
		if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "fits"))) {
			o += (size_t)snprintf(t + o, n - o, "%s does not fit %s: needs %s of %s", sep, gn,
					      vf__gib(a, sizeof a, vf__num(g, "peak_bytes")),
					      vf__gib(b, sizeof b, vf__num(g, "vram_bytes")));
			continue;
		}
		const cJSON *inf = cJSON_GetObjectItemCaseSensitive(g, "inference");
		if (cJSON_IsObject(inf)) {
			/* inference: the row is its users at --ctx, not the prompt
			 * forward's batches the sweep holds */
			double users = vf__num(inf, "users");
			o += (size_t)snprintf(t + o, n - o, "%s fits %s with %s to spare, %.0f user%s at %.0f tokens of "
					      "context (up to %.0f)", sep, gn,
					      vf__gib(a, sizeof a, vf__num(g, "headroom_bytes")), users,
					      users == 1 ? "" : "s", vf__num(inf, "ctx"), mb);
			continue;
		}
		o += (size_t)snprintf(t + o, n - o, "%s fits %s with %s to spare at batch %.0f", sep, gn,
				      vf__gib(a, sizeof a, vf__num(g, "headroom_bytes")), batch);
		double next = sweep_peak(s, i - 1, mb + 1) * GIB;
		if (o < n && mb > batch)
			o += (size_t)snprintf(t + o, n - o, ", up to batch %.0f", mb);
		if (o < n && isfinite(next))
			o += (size_t)snprintf(t + o, n - o, mb > batch ? " (batch %.0f needs %s)" : "; batch %.0f needs %s",
					      mb + 1, vf__gib(b, sizeof b, next));
	}
	if (i == 0 && o < n)
		o += (size_t)snprintf(t + o, n - o, " peak %s",
				      vf__gib(a, sizeof a, vf__num(cJSON_GetObjectItemCaseSensitive(d, "memory"), "peak_bytes")));
	/* as the text's Model line: what was not understood makes every figure approximate */
	if (o < n && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "approximate")))
		snprintf(t + o, n - o, " (approximate: see Assumptions)");
}

static void gpu_table(struct vf_w *w, const cJSON *d)
{
	const char *hdr[] = {"GPU", "memory", "fits", "headroom", "max batch", "step", "tokens/s"};
	vf_html_section_begin(w, "gpus", "Each GPU at the given setup");
	vf_html_table_begin(w, NULL, 7, hdr, false);
	const cJSON *g;
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(d, "gpus"))
	{
		char c[7][64];
		gname(g, c[0], sizeof c[0]);
		if (vf__num(g, "count") > 1) {
			size_t l = strlen(c[0]);
			snprintf(c[0] + l, sizeof c[0] - l, " x%.0f", vf__num(g, "count"));
		}
		vf__gib(c[1], sizeof c[1], vf__num(g, "vram_bytes"));
		snprintf(c[2], sizeof c[2], "%s", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "fits")) ? "yes" : "no");
		vf__gib(c[3], sizeof c[3], vf__num(g, "headroom_bytes"));
		snprintf(c[4], sizeof c[4], "%.0f", vf__num(g, "max_batch"));
		vf__secs(c[5], sizeof c[5], vf__num(g, "step_seconds"));
		vf__count(c[6], sizeof c[6], vf__num(g, "tokens_per_second"));
		const char *row[7] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6]};
		vf_html_row(w, 7, row);
	}
	vf_html_table_end(w);
	vf_html_section_end(w);
}

/* The list of strings d[key] as an escaped bulleted list. */
void vf__string_list(struct vf_w *w, const cJSON *arr)
{
	vf_w_puts(w, "<ul class=\"plain\">");
	const cJSON *it;
	cJSON_ArrayForEach(it, arr) if (cJSON_IsString(it))
	{
		vf_w_puts(w, "<li>");
		vf_html_md_inline(w, it->valuestring);
		vf_w_puts(w, "</li>");
	}
	vf_w_puts(w, "</ul>\n");
}

void vf__report_estimate(struct vf_w *w, const cJSON *d)
{
	const char *engine = vf__str(cJSON_GetObjectItemCaseSensitive(d, "memory"), "engine", NULL);
	if (engine) { /* a serving engine's layout: no phases, no batch sweep */
		vf__report_estimate_engine(w, d, engine);
		return;
	}
	struct sweep *s = calloc(1, sizeof *s);
	if (!s) {
		w->st = vf_error_set(w->err, VF_ENOMEM, "report: out of memory");
		return;
	}
	read_sweep(d, s);
	char title[1024], sub[512], a[32], b[32], c[32];
	headline(d, s, title, sizeof title);
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(d, "model");
	const cJSON *mem = cJSON_GetObjectItemCaseSensitive(d, "memory");
	snprintf(sub, sizeof sub, "Estimate before any GPU time: %s parameters, %s trainable; peak %s at the %s phase.",
		 vf__count(a, sizeof a, vf__num(m, "params")), vf__count(b, sizeof b, vf__num(m, "trainable_params")),
		 vf__gib(c, sizeof c, vf__num(mem, "peak_bytes")), vf__str(mem, "peak_phase", "?"));
	vf_html_begin(w, "estimate", title, sub);
	char pt[256], gn[64];
	const cJSON *g0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(d, "gpus"), 0);
	snprintf(pt, sizeof pt, "Memory at each phase%s%s: the peak is the %s phase at %s, %s the largest term",
		 g0 ? " on " : "", g0 ? gname(g0, gn, sizeof gn) : "", vf__str(mem, "peak_phase", "?"),
		 vf__gib(a, sizeof a, vf__num(mem, "peak_bytes")), vf__term_label(vf__str(mem, "dominant_term", "?")));
	vf__phase_figure(w, cJSON_GetObjectItemCaseSensitive(d, "phases"), cJSON_GetObjectItemCaseSensitive(d, "gpus"), pt);
	if (s->ng) {
		batch_figure(w, s);
		if (s->timed) {
			time_figure(w, s, 0);
			time_figure(w, s, 1);
		} else {
			vf_html_p(w, "note", "No step time: no GPU with a known dense bf16 rate was given.");
		}
	}
	vf__infer_figures(w, d);
	gpu_table(w, d);
	vf_html_section_begin(w, "assumptions", "Assumptions");
	vf__string_list(w, cJSON_GetObjectItemCaseSensitive(d, "assumptions"));
	vf_html_section_end(w);
	vf_html_data(w, d);
	vf_html_end(w);
	free(s);
}
