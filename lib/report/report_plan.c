/* report_plan.c - plan.html, written by `vramfit plan` beside plan.md: the
 * plan's decisions (tier, shipped config, every key it changed and why),
 * the estimate's memory at each phase against the GPU, the warnings and
 * assumptions. Reads a plan --json object plus "report": "plan",
 * "phases" (vf_report_phases_json of the plan's estimate; may be absent)
 * and "capacity": [{"name", "vram_bytes"}]. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "vramfit/report/report.h"

static void strings(struct vf_w *w, const char *id, const char *title, const cJSON *arr)
{
	if (cJSON_GetArraySize(arr) <= 0)
		return;
	vf_html_section_begin(w, id, title);
	vf_w_puts(w, "<ul class=\"plain\">");
	const cJSON *it;
	cJSON_ArrayForEach(it, arr) if (cJSON_IsString(it))
	{
		vf_w_puts(w, "<li>");
		vf_html_md_inline(w, it->valuestring);
		vf_w_puts(w, "</li>");
	}
	vf_w_puts(w, "</ul>");
	vf_html_section_end(w);
}

static void decisions(struct vf_w *w, const cJSON *d)
{
	const cJSON *tier = cJSON_GetObjectItemCaseSensitive(d, "tier");
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(d, "gpus");
	vf_html_section_begin(w, "decisions", "The plan's decisions");
	const char *h1[] = {"decision", "value"};
	vf_html_table_begin(w, NULL, 2, h1, true);
	const char *rows[][2] = {
		{"GPUs", vf__str(g, "summary", "?")},
		{"tier", vf__str(tier, "name", "?")},
		{"tier note", vf__str(tier, "note", "")},
		{"shipped config", vf__str(d, "shipped_config", "?")},
		{"run directory", vf__str(d, "run_dir", "?")},
		{"training mode", vf__str(d, "training_mode", "?")},
		{"launch", vf__str(cJSON_GetObjectItemCaseSensitive(d, "launch"), "command", "")},
		{"launch directory", vf__str(cJSON_GetObjectItemCaseSensitive(d, "launch"), "cwd", "")},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (rows[i][1][0])
			vf_html_row(w, 2, rows[i]);
	vf_html_table_end(w);
	const cJSON *pa = cJSON_GetObjectItemCaseSensitive(d, "patches"), *p;
	if (cJSON_GetArraySize(pa) > 0) {
		const char *h2[] = {"key", "before", "after", "why"};
		vf_html_table_begin(w, "Keys of the shipped config the plan changed", 4, h2, true);
		cJSON_ArrayForEach(p, pa)
		{
			const char *r[] = {vf__str(p, "key", ""), vf__str(p, "before", ""), vf__str(p, "after", ""),
					   vf__str(p, "reason", "")};
			vf_html_row(w, 4, r);
		}
		vf_html_table_end(w);
	}
	vf_html_section_end(w);
}

void vf__report_plan(struct vf_w *w, const cJSON *d)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(d, "estimate");
	const cJSON *cap = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(d, "capacity"), 0);
	char title[512], a[32], b[32], c[32];
	size_t o = (size_t)snprintf(title, sizeof title, "Plan for %s: %s on %s", vf__str(d, "run_name", "the run"),
				    vf__str(cJSON_GetObjectItemCaseSensitive(d, "tier"), "name", "?"),
				    vf__str(cJSON_GetObjectItemCaseSensitive(d, "gpus"), "summary", "?"));
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "available")) && o < sizeof title) {
		double pk = vf__num(e, "peak_bytes"), v = vf__num(cap, "vram_bytes");
		o += (size_t)snprintf(title + o, sizeof title - o, "; estimated peak %s", vf__gib(a, sizeof a, pk));
		if (isfinite(v) && o < sizeof title)
			o += (size_t)snprintf(title + o, sizeof title - o, " of %s (%s)", vf__gib(b, sizeof b, v),
					      pk <= v ? "fits" : "does not fit");
		if (isfinite(vf__num(e, "total_seconds")) && o < sizeof title)
			snprintf(title + o, sizeof title - o, ", about %s for %.0f steps", vf__secs(c, sizeof c, vf__num(e, "total_seconds")),
				 vf__num(d, "steps"));
	}
	vf_html_begin(w, "plan", title, "The plan of vramfit plan (plan.md beside this page says the same in text).");
	decisions(w, d);
	const cJSON *ph = cJSON_GetObjectItemCaseSensitive(d, "phases");
	if (cJSON_GetArraySize(ph) > 0) {
		char t[256];
		snprintf(t, sizeof t, "Estimated memory at each phase: peak %s at the %s phase",
			 vf__gib(a, sizeof a, vf__num(e, "peak_bytes")), vf__str(e, "peak_phase", "?"));
		vf__phase_figure(w, ph, cJSON_GetObjectItemCaseSensitive(d, "capacity"), t);
	} else {
		vf_html_p(w, "note", vf__str(e, "note", "No estimate for this plan."));
	}
	strings(w, "warnings", "Warnings", cJSON_GetObjectItemCaseSensitive(d, "warnings"));
	strings(w, "assumptions", "Assumptions", cJSON_GetObjectItemCaseSensitive(d, "assumptions"));
	vf_html_data(w, d);
	vf_html_end(w);
}
