/* report_engine.c - the estimate page of a serving engine (estimate
 * --mode infer --engine vllm|llamacpp): the headline from the engine's
 * verdict (fits, what it holds on the device, the users at --ctx), the
 * memory as the engine lays it out (the rows of the text table), the
 * inference figures (KV cache and users against the context,
 * report_infer.c), each GPU's row (TTFT, prefill and decode tokens/s) and
 * the assumptions. No training-step phases and no micro-batch sweep: an
 * engine runs neither.
 *
 * Reads the estimate --json object of an engine:
 *   "memory": {"engine", "card_bytes", "terms": [{"term", "label", "bytes"}],
 *              "total_label", "total_bytes", "peak_bytes", "host_bytes"
 *              (llama.cpp), "not_counted" (string or null)}
 *   "gpus"[i]: {"name" | "id", "count", "vram_bytes", "fits",
 *               "headroom_bytes", "max_batch" (the users at --ctx),
 *               "peak_bytes", "ttft_seconds", "prefill_tokens_per_second",
 *               "decode_tokens_per_second", "inference": {"ctx", "refusal"}}
 *   "model": {"id", "params"}, "assumptions": [string]. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "vramfit/report/report.h"

static const char *engine_words(const char *engine)
{
	return strcmp(engine, "vllm") == 0 ? "vLLM" : strcmp(engine, "llamacpp") == 0 ? "llama.cpp" : engine;
}

static const char *row_name(const cJSON *g, char *out, size_t n)
{
	const char *name = vf__str(g, "name", NULL);
	char s[64];
	if (name)
		vf__gpu_short(name, s, sizeof s);
	else
		snprintf(s, sizeof s, "%s", vf__str(g, "id", "GPU"));
	if (vf__num(g, "count") > 1)
		snprintf(out, n, "%s x%.0f", s, vf__num(g, "count"));
	else
		snprintf(out, n, "%s", s);
	return out;
}

/* Each GPU's verdict as the engine gives it. */
static void headline(const cJSON *d, const char *engine, char *t, size_t n)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(d, "model");
	bool vllm = strcmp(engine, "vllm") == 0;
	size_t o = (size_t)snprintf(t, n, "%s served by %s:", vf__str(m, "id", "model"), engine_words(engine));
	const cJSON *g;
	int i = 0;
	char gn[80], a[32], b[32];
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(d, "gpus"))
	{
		if (o >= n)
			break;
		const cJSON *inf = cJSON_GetObjectItemCaseSensitive(g, "inference");
		const char *sep = i++ ? ";" : "";
		row_name(g, gn, sizeof gn);
		if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "fits"))) {
			o += (size_t)snprintf(t + o, n - o, "%s does not fit %s: %s", sep, gn,
					      vf__str(inf, "refusal", "the engine refuses it"));
			if (o < n && vf__num(inf, "max_ctx") > 0) /* NAN (null) is not */
				o += (size_t)snprintf(t + o, n - o, "; --ctx %.0f or less fits", vf__num(inf, "max_ctx"));
		}
		else if (vllm)
			o += (size_t)snprintf(t + o, n - o, "%s fits %s, holding %s (its budget), %.0f user%s at %.0f tokens",
					      sep, gn, vf__gib(a, sizeof a, vf__num(g, "peak_bytes")), vf__num(g, "max_batch"),
					      vf__num(g, "max_batch") == 1 ? "" : "s", vf__num(inf, "ctx"));
		else
			o += (size_t)snprintf(t + o, n - o, "%s fits %s with %s to spare (%s on the device), %.0f user%s at %.0f tokens",
					      sep, gn, vf__gib(a, sizeof a, vf__num(g, "headroom_bytes")),
					      vf__gib(b, sizeof b, vf__num(g, "peak_bytes")), vf__num(g, "max_batch"),
					      vf__num(g, "max_batch") == 1 ? "" : "s", vf__num(inf, "ctx"));
	}
}

/* The engine's layout on the first GPU: the text table's rows. */
static void memory_section(struct vf_w *w, const cJSON *d, const char *engine)
{
	const cJSON *mem = cJSON_GetObjectItemCaseSensitive(d, "memory");
	const cJSON *g0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(d, "gpus"), 0);
	double card = vf__num(mem, "card_bytes");
	char title[256], gn[80], a[32], b[32], dev[48] = "";
	if (vf__num(mem, "device") >= 0) /* a split: the fullest device's */
		snprintf(dev, sizeof dev, " (GPU %.0f, the fullest)", vf__num(mem, "device"));
	snprintf(title, sizeof title, "Memory as %s lays it out on %s%s: it holds %s of %s", engine_words(engine),
		 g0 ? row_name(g0, gn, sizeof gn) : "the GPU", dev, vf__gib(a, sizeof a, vf__num(mem, "peak_bytes")),
		 vf__gib(b, sizeof b, card));
	vf_html_section_begin(w, "memory", title);
	const char *hdr[] = {"term", "size", "% of card"};
	vf_html_table_begin(w, NULL, 3, hdr, false);
	const cJSON *t;
	char c[2][32];
	const char *row[3];
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(mem, "terms"))
	{
		row[0] = vf__str(t, "label", vf__str(t, "term", "?"));
		row[1] = vf__gib(c[0], sizeof c[0], vf__num(t, "bytes"));
		snprintf(c[1], sizeof c[1], "%.1f%%", 100 * vf__num(t, "bytes") / card);
		row[2] = c[1];
		vf_html_row(w, 3, row);
	}
	row[0] = vf__str(mem, "total_label", "total");
	row[1] = vf__gib(c[0], sizeof c[0], vf__num(mem, "total_bytes"));
	snprintf(c[1], sizeof c[1], "%.1f%%", 100 * vf__num(mem, "total_bytes") / card);
	row[2] = c[1];
	vf_html_row(w, 3, row);
	vf_html_table_end(w);
	char note[320];
	if (isfinite(vf__num(mem, "host_bytes"))) {
		snprintf(note, sizeof note, "In host memory: %s (the token embedding and the layers not on the GPU).",
			 vf__gib(a, sizeof a, vf__num(mem, "host_bytes")));
		vf_html_p(w, "note", note);
	}
	const char *nc = vf__str(mem, "not_counted", NULL);
	if (nc) {
		snprintf(note, sizeof note, "Not estimated: %s.", nc);
		vf_html_p(w, "note", note);
	}
	vf_html_section_end(w);
}

static void gpu_table(struct vf_w *w, const cJSON *d)
{
	const char *hdr[] = {"GPU", "memory", "fits", "headroom", "max users", "TTFT", "prefill tok/s", "decode tok/s"};
	vf_html_section_begin(w, "gpus", "Each GPU as the engine serves the model");
	vf_html_table_begin(w, NULL, 8, hdr, false);
	const cJSON *g;
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(d, "gpus"))
	{
		char c[8][64];
		row_name(g, c[0], sizeof c[0]);
		vf__gib(c[1], sizeof c[1], vf__num(g, "vram_bytes"));
		snprintf(c[2], sizeof c[2], "%s", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "fits")) ? "yes" : "no");
		vf__gib(c[3], sizeof c[3], vf__num(g, "headroom_bytes"));
		snprintf(c[4], sizeof c[4], "%.0f", vf__num(g, "max_batch"));
		vf__secs(c[5], sizeof c[5], vf__num(g, "ttft_seconds"));
		vf__count(c[6], sizeof c[6], vf__num(g, "prefill_tokens_per_second"));
		vf__count(c[7], sizeof c[7], vf__num(g, "decode_tokens_per_second"));
		const char *row[8] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]};
		vf_html_row(w, 8, row);
	}
	vf_html_table_end(w);
	vf_html_section_end(w);
}

void vf__report_estimate_engine(struct vf_w *w, const cJSON *d, const char *engine)
{
	char title[1024], sub[320], a[32];
	headline(d, engine, title, sizeof title);
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(d, "model");
	snprintf(sub, sizeof sub,
		 "Estimate before any GPU time: %s parameters served by %s at the context and users given; "
		 "memory as the engine lays it out, no training step.",
		 vf__count(a, sizeof a, vf__num(m, "params")), engine_words(engine));
	vf_html_begin(w, "estimate", title, sub);
	memory_section(w, d, engine);
	vf__infer_figures(w, d);
	gpu_table(w, d);
	vf_html_section_begin(w, "assumptions", "Assumptions");
	vf__string_list(w, cJSON_GetObjectItemCaseSensitive(d, "assumptions"));
	vf_html_section_end(w);
	vf_html_data(w, d);
	vf_html_end(w);
}
