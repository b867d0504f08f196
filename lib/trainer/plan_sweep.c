/* plan_sweep.c - plan's predicted autotune sweep (issue 29): the run's
 * config.yaml as trial 1, then the profile's sweep.json changes in order
 * with tune's rules (lib/trainer/sweepfit.c), each trial estimated the way
 * plan estimates the run (the checkpoint's own layout, else the catalog
 * model its name matches), on the run's GPU, at the plan's training size;
 * plan.md's table and the --json object. */
#include <stdio.h>
#include <string.h>

#include "plan_internal.h"
#include "vramfit/base/json.h"
#include "vramfit/base/md.h"
#include "vramfit/trainer/sweepfit.h"

struct plan_eval {
	const struct vf_plan *p;
	const cJSON *cfg;
};

static vf_status plan_eval(void *ctx, const struct vf_yamldoc *doc, struct vf_sweepfit_eval *out,
			   struct vf_error *err)
{
	const struct plan_eval *x = ctx;
	const struct vf_plan *p = x->p;
	struct vf_ltx2_config lc;
	vf_status st = vf_sweepfit_config(x->cfg, doc, p->gpu_count, &lc, err);
	if (st)
		return st;
	/* each trial trains at the plan's size (the resolution bucket), as
	 * the plan's estimate and tune's predictions do, not at the
	 * validation video_dims */
	for (int i = 0; i < 3; i++)
		lc.train_dims[i] = p->train_dims[i];
	struct vf_estimate e;
	struct vf_error e2 = {0};
	if (vf_estimate_ltx2_file(p->model, &lc, p->gpu_spec, &e, &e2) != VF_OK &&
	    (st = vf_estimate_ltx2(p->model_id, &lc, p->gpu_spec, &e, err)))
		return st;
	memset(out, 0, sizeof *out);
	out->peak_bytes = e.peak_bytes;
	out->gpu_bytes = p->gpu_spec ? vf_estimate_gpu_bytes(p->gpu_spec) : -1;
	out->fits = p->gpu_spec ? vf_estimate_fits(&e, p->gpu_spec, NULL) : true;
	out->step_seconds = e.step_seconds;
	out->tokens_per_step = (double)e.tokens_per_step;
	return VF_OK;
}

void vf__plan_predict_sweep(struct vf_plan *p, const cJSON *cfg)
{
	p->has_sweep = false;
	if (!p->has_estimate || !p->gpu_spec) {
		snprintf(p->sweep_note, sizeof p->sweep_note, "%s",
			 !p->has_estimate ? "no estimate of this model" : "the GPU is not in the catalog");
		return;
	}
	struct plan_eval x = {.p = p, .cfg = cfg};
	struct vf_sweepfit_opts o = {.trainer = p->trainer[0] ? p->trainer : NULL, .tier = p->tier.name,
				     .all_flags = true};
	struct vf_error err = {0};
	if (vf_sweepfit_predict(&o, p->config, plan_eval, &x, &p->sweep, &err) != VF_OK) {
		snprintf(p->sweep_note, sizeof p->sweep_note, "%s", err.msg);
		return;
	}
	p->has_sweep = true;
}

static void fmt_gib(char *o, size_t n, int64_t b)
{
	if (b < 0)
		snprintf(o, n, "-");
	else
		snprintf(o, n, "%.1f GiB", (double)b / (1024.0 * 1024 * 1024));
}

void vf__plan_md_sweep(struct vf_buf *b, const struct vf_plan *p)
{
	if (!p->has_sweep) {
		vf_md_printf(b, "**Predicted sweep:** none (%s).\n\n", p->sweep_note);
		return;
	}
	const struct vf_sweepfit *s = &p->sweep;
	vf_md_printf(b, "**Predicted sweep** (vramfit's estimate of each trial on the %s, not a measurement; "
			"`vramfit tune` measures them and prints both):\n\n", p->gpu_name);
	vf_md_printf(b, "| trial | change | predicted | peak | step time |\n|---|---|---|---|---|\n");
	for (int i = 0; i < s->ntrials; i++) {
		const struct vf_sweepfit_trial *t = &s->trials[i];
		bool judged = t->outcome == VF_SWEEPFIT_FITS || t->outcome == VF_SWEEPFIT_OOM;
		char pk[32], st[32] = "-", what[96];
		fmt_gib(pk, sizeof pk, judged ? t->eval.peak_bytes : -1);
		if (judged && t->eval.step_seconds > 0)
			snprintf(st, sizeof st, "%.2f s", t->eval.step_seconds);
		snprintf(what, sizeof what, "%s%s%s%s", vf_sweepfit_outcome_name(t->outcome),
			 t->adopted ? ", adopted" : "", t->flag[0] ? ", needs --" : "", t->flag);
		vf_md_printf(b, "| %d | %s | %s | %s | %s |\n", t->index, t->change, what, pk, st);
	}
	if (s->winner >= 0) {
		const struct vf_sweepfit_trial *w = &s->trials[s->winner];
		vf_md_printf(b, "\nExpected winner: trial %d (%s)", w->index, w->change);
		if (w->eval.step_seconds > 0 && p->steps > 0) {
			double total = w->eval.step_seconds * (double)p->steps;
			vf_md_printf(b, ", %.2f s per step: %.1f h for %lld steps", w->eval.step_seconds, total / 3600,
				     (long long)p->steps);
			if (p->gpu_spec && p->gpu_spec->price_usd_hour > 0)
				vf_md_printf(b, ", about $%.2f at $%.2f/GPU-hour x %d", total / 3600 *
					     p->gpu_spec->price_usd_hour * p->gpu_count, p->gpu_spec->price_usd_hour,
					     p->gpu_count);
		}
		vf_md_printf(b, ".\n");
	} else {
		vf_md_printf(b, "\nExpected: trial 1 (this config) runs out of memory; the OOM remedies apply.\n");
	}
	if (s->not_tried[0])
		vf_md_printf(b, "Not reached: %s.\n", s->not_tried);
	vf_md_printf(b, "\n");
}

cJSON *vf__plan_json_sweep(const struct vf_plan *p)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "available", p->has_sweep);
	if (!p->has_sweep) {
		cJSON_AddStringToObject(o, "note", p->sweep_note);
		return o;
	}
	cJSON *tr = cJSON_AddArrayToObject(o, "trials");
	for (int i = 0; i < p->sweep.ntrials; i++) {
		const struct vf_sweepfit_trial *t = &p->sweep.trials[i];
		bool judged = t->outcome == VF_SWEEPFIT_FITS || t->outcome == VF_SWEEPFIT_OOM;
		cJSON *x = cJSON_CreateObject();
		cJSON_AddNumberToObject(x, "trial", t->index);
		cJSON_AddStringToObject(x, "change", t->change);
		cJSON_AddStringToObject(x, "outcome", vf_sweepfit_outcome_name(t->outcome));
		if (judged) {
			cJSON_AddBoolToObject(x, "fits", t->outcome == VF_SWEEPFIT_FITS);
			cJSON_AddNumberToObject(x, "peak_bytes", (double)t->eval.peak_bytes);
		} else {
			cJSON_AddNullToObject(x, "fits");
			cJSON_AddNullToObject(x, "peak_bytes");
		}
		if (judged && t->eval.step_seconds > 0)
			cJSON_AddNumberToObject(x, "step_seconds", t->eval.step_seconds);
		else
			cJSON_AddNullToObject(x, "step_seconds");
		cJSON_AddBoolToObject(x, "adopted", t->adopted);
		cJSON_AddItemToArray(tr, x);
	}
	if (p->sweep.winner >= 0)
		cJSON_AddNumberToObject(o, "winner", p->sweep.trials[p->sweep.winner].index);
	else
		cJSON_AddNullToObject(o, "winner");
	return o;
}
