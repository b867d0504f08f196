/* report_infer.c - the estimate report's inference figures (--mode infer):
 * the KV cache of one sequence against the context length with each GPU's
 * KV memory as a line (where they cross, one sequence no longer fits), and
 * the users that fit against the context, per GPU, each with its numbers.
 *
 * Reads "inference_sweep" of the estimate page's data (src/cmd-estimate.c,
 * vf_infer_sweep_json):
 *   {"engine", "ctx", "gpus": [{"gpu", "name", "count", "contexts": [tokens],
 *     "kv_bytes_per_sequence": [bytes], "max_users": [n],
 *     "kv_budget_bytes": bytes | null}]}
 * Nothing is drawn without it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "vramfit/report/report.h"

#define MAXG 8  /* GPUs drawn */
#define MAXC 24 /* contexts */

static const int gpu_colors[MAXG] = {0, 5, 2, 3, 1, 4, 8, 9};

struct isweep {
	int ng, nc;
	const char *engine;
	double ctx;
	char name[MAXG][64];
	double c[MAXC];           /* the contexts (the first GPU's; all share them) */
	char label[MAXC][16];     /* "512", "8k", "6000" */
	double kv[MAXG][MAXC];    /* GiB of one sequence */
	double users[MAXG][MAXC];
	double budget[MAXG];      /* GiB; NAN: unknown */
};

static void ctx_label(double c, char *out, size_t n)
{
	if (c >= 1024 && fmod(c, 1024) == 0)
		snprintf(out, n, "%.0fk", c / 1024);
	else
		snprintf(out, n, "%.0f", c);
}

static bool read_isweep(const cJSON *d, struct isweep *s)
{
	const cJSON *sw = cJSON_GetObjectItemCaseSensitive(d, "inference_sweep");
	const cJSON *gs = cJSON_GetObjectItemCaseSensitive(sw, "gpus"), *g;
	s->engine = vf__str(sw, "engine", "?");
	s->ctx = vf__num(sw, "ctx");
	cJSON_ArrayForEach(g, gs)
	{
		if (s->ng >= MAXG)
			break;
		const cJSON *cs = cJSON_GetObjectItemCaseSensitive(g, "contexts");
		const cJSON *kv = cJSON_GetObjectItemCaseSensitive(g, "kv_bytes_per_sequence");
		const cJSON *us = cJSON_GetObjectItemCaseSensitive(g, "max_users");
		int n = cJSON_GetArraySize(cs);
		if (n < 2 || cJSON_GetArraySize(kv) != n || cJSON_GetArraySize(us) != n)
			continue;
		n = n > MAXC ? MAXC : n;
		if (s->ng == 0) {
			s->nc = n;
			for (int k = 0; k < n; k++) {
				s->c[k] = cJSON_GetArrayItem(cs, k)->valuedouble;
				ctx_label(s->c[k], s->label[k], sizeof s->label[k]);
			}
		} else if (n != s->nc) {
			continue; /* a GPU whose sweep stopped elsewhere: its table row only */
		}
		int i = s->ng++;
		const char *nm = vf__str(g, "name", vf__str(g, "gpu", "?"));
		char shortn[64];
		vf__gpu_short(nm, shortn, sizeof shortn);
		if (vf__num(g, "count") > 1)
			snprintf(s->name[i], sizeof s->name[i], "%s x%.0f", shortn, vf__num(g, "count"));
		else
			snprintf(s->name[i], sizeof s->name[i], "%s", shortn);
		for (int k = 0; k < n; k++) {
			s->kv[i][k] = cJSON_GetArrayItem(kv, k)->valuedouble / GIB;
			s->users[i][k] = cJSON_GetArrayItem(us, k)->valuedouble;
		}
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(g, "kv_budget_bytes");
		s->budget[i] = cJSON_IsNumber(b) ? b->valuedouble / GIB : NAN;
	}
	return s->ng > 0 && s->nc >= 2;
}

/* Line i lies on an earlier one at every point: drawn dashed, on top. */
static bool same_as_earlier(const struct isweep *s, const double ys[][MAXC], int i)
{
	for (int j = 0; j < i; j++) {
		bool same = true;
		for (int k = 0; k < s->nc && same; k++)
			same = fabs(ys[i][k] - ys[j][k]) <= 1e-9 * (1 + fabs(ys[j][k]));
		if (same)
			return true;
	}
	return false;
}

static void legend(struct vf_w *w, const char *id, int n, char names[][64], const int *colors, const bool *dashed,
		   const char *extra, int extra_color)
{
	const char *nm[MAXG + 1];
	int col[MAXG + 1];
	bool da[MAXG + 1];
	for (int i = 0; i < n; i++)
		nm[i] = names[i], col[i] = colors[i], da[i] = dashed[i];
	if (extra)
		nm[n] = extra, col[n] = extra_color, da[n] = false, n++;
	vf_plot_legend(w, id, n, nm, col, da);
}

/* The KV figure's heading: one sequence's cache at the context asked
 * for, and each GPU's memory for the cache. */
static void kv_title(const struct isweep *s, char *title, size_t n)
{
	char a[32];
	const char *en = strcmp(s->engine, "vllm") == 0 ? "vLLM" : strcmp(s->engine, "llamacpp") == 0 ? "llama.cpp" : s->engine;
	size_t o = (size_t)snprintf(title, n, "KV cache of one sequence vs context (%s)", en);
	int at = 0;
	for (int k = 0; k < s->nc; k++)
		if (s->c[k] == s->ctx)
			at = k;
	o += (size_t)snprintf(title + o, o < n ? n - o : 0, ": %s at %.0f tokens", vf__gib(a, sizeof a, s->kv[0][at] * GIB),
			      s->ctx);
	for (int i = 0; i < s->ng && o < n; i++)
		if (isfinite(s->budget[i]))
			o += (size_t)snprintf(title + o, n - o, "; %s holds %s of cache", s->name[i],
					      vf__gib(a, sizeof a, s->budget[i] * GIB));
}

/* The KV figure's numbers: one sequence's cache at each context. */
static void kv_table(struct vf_w *w, const struct isweep *s)
{
	const char *hdr[2] = {"context (tokens)", "KV per sequence (GiB)"};
	vf_html_table_begin(w, "KV cache of one sequence", 2, hdr, false);
	for (int k = 0; k < s->nc; k++) {
		char v[32];
		const char *row[2] = {s->label[k], v};
		snprintf(v, sizeof v, "%.3f", s->kv[0][k]);
		vf_html_row(w, 2, row);
	}
	vf_html_table_end(w);
}

static void kv_figure(struct vf_w *w, const struct isweep *s)
{
	double top = 0, xs[MAXC];
	for (int k = 0; k < s->nc; k++)
		xs[k] = k + 0.5;
	int nl = 0; /* lines: one per distinct per-sequence curve */
	int line_of[MAXG];
	bool dashed[MAXG] = {false};
	for (int i = 0; i < s->ng; i++) {
		line_of[i] = same_as_earlier(s, s->kv, i) ? -1 : nl++;
		for (int k = 0; k < s->nc; k++)
			top = s->kv[i][k] > top ? s->kv[i][k] : top;
		if (isfinite(s->budget[i]) && s->budget[i] > top)
			top = s->budget[i];
	}
	char title[512], a[32];
	kv_title(s, title, sizeof title);
	const char *bands[MAXC];
	for (int k = 0; k < s->nc; k++)
		bands[k] = s->label[k];
	struct vf_chart c;
	vf_chart_init(&c, "infer-kv", "KV cache of one sequence against the context length, with each GPU's KV memory",
		      "context per sequence (tokens)", "KV cache (GiB)");
	vf_chart_xbands(&c, s->nc, bands);
	vf_chart_ydomain(&c, 0, top * 1.05);
	vf_html_figure_begin(w, "infer-kv", title);
	vf_chart_begin(&c, w);
	char names[MAXG][64];
	int colors[MAXG];
	for (int i = 0, l = 0; i < s->ng; i++) {
		if (line_of[i] < 0)
			continue;
		char tips[MAXC][96];
		const char *tp[MAXC];
		for (int k = 0; k < s->nc; k++) {
			snprintf(tips[k], sizeof tips[k], "%s tokens: %s per sequence", s->label[k],
				 vf__gib(a, sizeof a, s->kv[i][k] * GIB));
			tp[k] = tips[k];
		}
		snprintf(names[l], sizeof names[l], nl > 1 ? "one sequence, %s" : "one sequence%.0s", s->name[i]);
		colors[l] = gpu_colors[l];
		vf_chart_line(&c, w, s->nc, xs, s->kv[i], colors[l], names[l], false, true, tp);
		l++;
	}
	const double *lxs[MAXG], *lys[MAXG];
	int ns[MAXG];
	for (int l = 0, i = 0; i < s->ng; i++)
		if (line_of[i] >= 0)
			lxs[l] = xs, lys[l] = s->kv[i], ns[l] = s->nc, l++;
	int nb = 0;
	for (int i = 0; i < s->ng; i++) {
		if (!isfinite(s->budget[i]))
			continue;
		char lab[96], bn[80];
		snprintf(bn, sizeof bn, "%s KV memory", s->name[i]);
		snprintf(lab, sizeof lab, "%s %s", s->name[i], vf__gib(a, sizeof a, s->budget[i] * GIB));
		vf_chart_hline_clear(&c, w, s->budget[i], 10, bn, lab, nl, lxs, lys, ns);
		nb++;
	}
	vf_chart_end(&c, w);
	legend(w, "infer-kv", nl, names, colors, dashed, NULL, 0);
	vf_html_figure_table(w);
	kv_table(w, s);
	if (nb == 0)
		vf_html_p(w, "note", "transformers generate(): no fixed KV memory; the users figure shows what fits.");
	vf_html_figure_end(w);
}

static void users_figure(struct vf_w *w, const struct isweep *s)
{
	double top = 1, xs[MAXC];
	for (int k = 0; k < s->nc; k++)
		xs[k] = k + 0.5;
	bool hidden[MAXG] = {false};
	int colors[MAXG];
	for (int i = 0; i < s->ng; i++) {
		hidden[i] = same_as_earlier(s, s->users, i);
		colors[i] = gpu_colors[i];
		for (int k = 0; k < s->nc; k++)
			top = s->users[i][k] > top ? s->users[i][k] : top;
	}
	int at = 0;
	for (int k = 0; k < s->nc; k++)
		if (s->c[k] == s->ctx)
			at = k;
	char title[512];
	size_t o = (size_t)snprintf(title, sizeof title, "Users that fit vs context: at %.0f tokens", s->ctx);
	for (int i = 0; i < s->ng && o < sizeof title; i++)
		o += (size_t)snprintf(title + o, sizeof title - o, "%s %s %.0f", i ? ";" : "", s->name[i],
				      s->users[i][at]);
	const char *bands[MAXC];
	for (int k = 0; k < s->nc; k++)
		bands[k] = s->label[k];
	struct vf_chart c;
	vf_chart_init(&c, "infer-users", "sequences that fit at once against the context length, per GPU",
		      "context per sequence (tokens)", "users (sequences at once)");
	vf_chart_xbands(&c, s->nc, bands);
	vf_chart_ydomain(&c, 0, top * 1.05);
	vf_html_figure_begin(w, "infer-users", title);
	vf_chart_begin(&c, w);
	for (int pass = 0; pass < 2 * s->ng; pass++) { /* the hidden ones last, on top */
		int i = pass % s->ng;
		if (hidden[i] != (pass >= s->ng))
			continue;
		char tips[MAXC][96];
		const char *tp[MAXC];
		for (int k = 0; k < s->nc; k++) {
			snprintf(tips[k], sizeof tips[k], "%s, %s tokens: %.0f user%s", s->name[i], s->label[k],
				 s->users[i][k], s->users[i][k] == 1 ? "" : "s");
			tp[k] = tips[k];
		}
		vf_chart_line(&c, w, s->nc, xs, s->users[i], colors[i], s->name[i], hidden[i], true, tp);
	}
	vf_chart_end(&c, w);
	char names[MAXG][64];
	for (int i = 0; i < s->ng; i++)
		snprintf(names[i], sizeof names[i], "%s", s->name[i]);
	legend(w, "infer-users", s->ng, names, colors, hidden, NULL, 0);
	vf_html_figure_table(w);
	const char *hdr[1 + MAXG];
	hdr[0] = "context (tokens)";
	for (int i = 0; i < s->ng; i++)
		hdr[1 + i] = s->name[i];
	vf_html_table_begin(w, "Users that fit", 1 + s->ng, hdr, false);
	for (int k = 0; k < s->nc; k++) {
		char cells[MAXG][24];
		const char *row[1 + MAXG];
		row[0] = s->label[k];
		for (int i = 0; i < s->ng; i++) {
			snprintf(cells[i], sizeof cells[i], "%.0f", s->users[i][k]);
			row[1 + i] = cells[i];
		}
		vf_html_row(w, 1 + s->ng, row);
	}
	vf_html_table_end(w);
	vf_html_figure_end(w);
}

void vf__infer_figures(struct vf_w *w, const cJSON *d)
{
	static struct isweep zero;
	struct isweep s = zero;
	if (!read_isweep(d, &s))
		return;
	kv_figure(w, &s);
	users_figure(w, &s);
}
