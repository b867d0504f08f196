/* sweepfit.c - the trainer's autotune sweep predicted by the estimator
 * (sweepfit.h): the tier's starting config, each sweep.json change in its
 * order with lib/tune's rules, and the search over fit.json's knobs. The
 * rules mirrored from lib/tune/tune.c (sweep_sequential, seq_change,
 * change_eligible, batch_change) are the profile's: a change the flags or
 * the tier exclude is not tried; one needing an adopted change waits for
 * it; a trial is adopted when it fits and its step time is at least
 * improvement.min_pct below the best's; a failure or a trial without
 * improvement follows the change's on_failure / on_no_improvement. */
#include "vramfit/trainer/sweepfit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/base/json.h"
#include "vramfit/estimate/runcost.h"
#include "vramfit/trainer/plan.h"
#include "vramfit/trainer/profile.h"

const char *vf_sweepfit_outcome_name(enum vf_sweepfit_outcome o)
{
	switch (o) {
	case VF_SWEEPFIT_FITS:
		return "fits";
	case VF_SWEEPFIT_OOM:
		return "out of memory";
	case VF_SWEEPFIT_NOOP:
		return "no change";
	case VF_SWEEPFIT_SKIPPED:
		return "skipped";
	}
	return "?";
}

/* ---- documents ------------------------------------------------------------- */

static vf_status doc_copy(const struct vf_yamldoc *d, struct vf_yamldoc **out, struct vf_error *err)
{
	size_t len = 0;
	const char *t = vf_yamldoc_text(d, &len);
	return vf_yamldoc_load_mem(t, len, vf_yamldoc_name(d), out, err);
}

static bool doc_same(const struct vf_yamldoc *a, const struct vf_yamldoc *b)
{
	size_t la = 0, lb = 0;
	const char *ta = vf_yamldoc_text(a, &la), *tb = vf_yamldoc_text(b, &lb);
	return la == lb && memcmp(ta, tb, la) == 0;
}

/* Nested YAML text from a flat object of dotted keys -> YAML value text,
 * parents in order of first appearance. */
static void tree_add(cJSON *tree, const char *key, const char *value)
{
	const char *dot = strchr(key, '.');
	if (!dot) {
		cJSON_DeleteItemFromObjectCaseSensitive(tree, key);
		cJSON_AddStringToObject(tree, key, value);
		return;
	}
	char head[128];
	snprintf(head, sizeof head, "%.*s", (int)(dot - key), key);
	cJSON *sub = cJSON_GetObjectItemCaseSensitive(tree, head);
	if (!cJSON_IsObject(sub)) {
		cJSON_DeleteItemFromObjectCaseSensitive(tree, head);
		sub = cJSON_AddObjectToObject(tree, head);
	}
	tree_add(sub, dot + 1, value);
}

static void tree_emit(const cJSON *tree, int depth, char *out, size_t n, size_t *len)
{
	const cJSON *kv;
	cJSON_ArrayForEach(kv, tree)
	{
		if (*len >= n)
			return;
		if (cJSON_IsObject(kv)) {
			*len += (size_t)snprintf(out + *len, n - *len, "%*s%s:\n", 2 * depth, "", kv->string);
			tree_emit(kv, depth + 1, out, n, len);
		} else if (cJSON_IsString(kv)) {
			*len += (size_t)snprintf(out + *len, n - *len, "%*s%s: %s\n", 2 * depth, "", kv->string,
						 kv->valuestring);
		}
	}
}

/* The profile's values for a shipped file: the fit.json "configs" entry
 * whose name, with {mode} put in, is config_name. */
static const cJSON *profile_values(const cJSON *fit, const char *mode, const char *config_name)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(fit, "configs"))
	{
		const char *m = strstr(c->string, "{mode}");
		char name[192];
		if (m)
			snprintf(name, sizeof name, "%.*s%s%s", (int)(m - c->string), c->string, mode, m + 6);
		else
			snprintf(name, sizeof name, "%s", c->string);
		if (strcmp(name, config_name) == 0 && cJSON_IsObject(c))
			return c;
	}
	return NULL;
}

static vf_status start_from_profile(const cJSON *fit, const char *trainer, const char *mode,
				    const char *config_name, struct vf_yamldoc **out, struct vf_error *err)
{
	const cJSON *vals = profile_values(fit, mode, config_name);
	if (!vals)
		return vf_error_set(err, VF_ENOTFOUND,
				    "profile %s: fit.json: field configs: no values for %s (give --trainer-dir to "
				    "read the checkout's file)", trainer, config_name);
	cJSON *tree = cJSON_CreateObject();
	const cJSON *kv;
	cJSON_ArrayForEach(kv, vals)
	{
		if (!cJSON_IsString(kv) || strlen(kv->string) >= 120) {
			cJSON_Delete(tree);
			return vf_error_set(err, VF_ERR, "profile %s: fit.json: field configs.%s.%s: expected YAML "
					    "value text", trainer, config_name, kv->string);
		}
		tree_add(tree, kv->string, kv->valuestring);
	}
	char text[8192];
	size_t len = 0;
	text[0] = 0;
	tree_emit(tree, 0, text, sizeof text, &len);
	cJSON_Delete(tree);
	if (len >= sizeof text)
		return vf_error_set(err, VF_ERR, "profile %s: fit.json: field configs.%s: too long", trainer,
				    config_name);
	char name[256];
	snprintf(name, sizeof name, "profile %s fit.json: %s", trainer, config_name);
	return vf_yamldoc_load_mem(text, len, name, out, err);
}

vf_status vf_sweepfit_start(const char *trainer, const char *mode, const char *config_name,
			    const char *trainer_dir, const char *config_path, bool full,
			    struct vf_yamldoc **out, char *from, size_t from_len, struct vf_error *err)
{
	*out = NULL;
	trainer = trainer ? trainer : VF_PROFILE_DEFAULT;
	cJSON *fit = NULL, *configs = NULL;
	vf_status st = vf_profile_part(trainer, "fit", &fit, err);
	if (st == VF_OK)
		st = vf_profile_part(trainer, "configs", &configs, err);
	if (st == VF_OK && trainer_dir) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", trainer_dir, config_path ? config_path : config_name);
		st = vf_yamldoc_load_file(path, out, err);
		snprintf(from, from_len, "the checkout's %s", config_path ? config_path : config_name);
	} else if (st == VF_OK) {
		st = start_from_profile(fit, trainer, mode, config_name, out, err);
		snprintf(from, from_len, "the profile's values for %s (data/profiles/%s/fit.json)", config_name,
			 trainer);
	}
	if (st == VF_OK && full) {
		const cJSON *fs = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(fit, "full"), "set");
		const cJSON *cs = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(configs, "full_finetune"), "set");
		if ((st = vf_yamldoc_set_all(*out, fs, err)) == VF_OK &&
		    (st = vf_yamldoc_set_all(*out, cs, err)) == VF_OK) {
			size_t l = strlen(from);
			snprintf(from + l, from_len - l, ", with the full fine-tune's settings");
		}
	}
	if (st) {
		vf_yamldoc_free(*out);
		*out = NULL;
	}
	cJSON_Delete(fit);
	cJSON_Delete(configs);
	return st;
}

/* ---- the config as the estimator reads it ------------------------------------ */

static const char *key_of(const cJSON *configs, const char *name, const char *dflt)
{
	const char *k = vf_json_get_str(cJSON_GetObjectItemCaseSensitive(configs, "keys"), name);
	return k ? k : dflt;
}

vf_status vf_sweepfit_config(const cJSON *configs, const struct vf_yamldoc *d, int gpus,
			     struct vf_ltx2_config *lc, struct vf_error *err)
{
	memset(lc, 0, sizeof *lc);
	const char *s = NULL;
	int64_t v;
	bool b;
	(void)err;
#define K(name, dflt) key_of(configs, name, dflt)
	lc->training_mode = vf_yamldoc_get_str(d, K("training_mode", "model.training_mode"), &s, NULL) == VF_OK
				    ? s : "lora";
	lc->lora_rank = vf_yamldoc_get_int(d, K("lora_rank", "lora.rank"), &v, NULL) == VF_OK ? (int)v : 0;
	lc->optimizer_type = vf_yamldoc_get_str(d, K("optimizer_type", "optimization.optimizer_type"), &s, NULL) ==
					     VF_OK ? s : "adamw";
	lc->batch_size = vf_yamldoc_get_int(d, K("batch_size", "optimization.batch_size"), &v, NULL) == VF_OK
				 ? (int)v : 1;
	lc->grad_accum = vf_yamldoc_get_int(d, K("gradient_accumulation_steps",
						 "optimization.gradient_accumulation_steps"), &v, NULL) == VF_OK
				 ? (int)v : 1;
	lc->grad_ckpt = vf_yamldoc_get_bool(d, K("gradient_checkpointing",
						 "optimization.enable_gradient_checkpointing"), &b, NULL) == VF_OK
				? b : true;
	lc->mixed_precision_mode = vf_yamldoc_get_str(d, K("mixed_precision", "acceleration.mixed_precision_mode"),
						      &s, NULL) == VF_OK ? s : "bf16";
	lc->quantization = vf_yamldoc_get_str(d, K("quantization", "acceleration.quantization"), &s, NULL) == VF_OK
				   ? s : NULL;
	lc->load_text_encoder_in_8bit = vf_yamldoc_get_bool(d, K("text_encoder_8bit",
								 "acceleration.load_text_encoder_in_8bit"),
							    &b, NULL) == VF_OK && b;
	lc->offload_optimizer_during_validation =
		vf_yamldoc_get_bool(d, K("offload_optimizer", "acceleration.offload_optimizer_during_validation"),
				    &b, NULL) == VF_OK && b;
	const struct vf_yaml_node *vd = vf_yamldoc_find(d, K("video_dims", "validation.video_dims"));
	for (int i = 0; i < 3; i++)
		lc->video_dims[i] = vf_yaml_node_int(vf_yaml_node_child(vd, (size_t)i), &v) ? (int)v : 0;
#undef K
	/* validation.interval, inference_steps, guidance and STG passes */
	vf_plan_ltx2_validation(d, lc);
	lc->gpus = gpus > 0 ? gpus : 1;
	return VF_OK;
}

vf_status vf_sweepfit_dit_eval(void *ctx, const struct vf_yamldoc *config, struct vf_sweepfit_eval *out,
			       struct vf_error *err)
{
	const struct vf_sweepfit_dit *x = ctx;
	struct vf_ltx2_config lc;
	struct vf_setup s;
	vf_status st = vf_sweepfit_config(x->configs, config, x->gpus, &lc, err);
	if (st || (st = vf_setup_from_ltx2(&lc, &s, err)))
		return st;
	struct vf_estimate e;
	vf_estimate_dit(x->dit, &s, x->gpu, &e);
	memset(out, 0, sizeof *out);
	out->peak_bytes = e.peak_bytes;
	out->gpu_bytes = x->gpu ? vf_estimate_gpu_bytes(x->gpu) : -1;
	out->fits = x->gpu ? vf_estimate_fits(&e, x->gpu, NULL) : true;
	out->step_seconds = x->gpu ? vf_runcost_step_seconds(&e, &s, x->gpu, NULL) : e.step_seconds;
	out->tokens_per_step = (double)e.tokens_per_step;
	return VF_OK;
}

/* ---- the predicted sweep ----------------------------------------------------- */

static bool flag_given(const struct vf_sweepfit_opts *o, const char *flag)
{
	if (!flag || o->all_flags)
		return true;
	for (const char *const *f = o->flags; f && *f; f++)
		if (strcmp(*f, flag) == 0)
			return true;
	return false;
}

static bool tier_allowed(const cJSON *change, const char *tier)
{
	const cJSON *tiers = cJSON_GetObjectItemCaseSensitive(change, "tiers"), *it;
	if (!tiers)
		return true;
	cJSON_ArrayForEach(it, tiers)
		if (cJSON_IsString(it) && tier && strcmp(it->valuestring, tier) == 0)
			return true;
	return false;
}

static void append(char *buf, size_t n, const char *fmt, const char *a, const char *b)
{
	size_t l = strlen(buf);
	if (l + 1 >= n)
		return;
	snprintf(buf + l, n - l, "%s", l ? ", " : "");
	l = strlen(buf);
	snprintf(buf + l, n - l, fmt, a, b);
}

/* The batch ladder: batch -> to with the accumulation scaled to keep the
 * product; false with why when it cannot be kept. */
static bool batch_set(const cJSON *batch, const struct vf_yamldoc *doc, int64_t to, cJSON *set, char *why,
		      size_t wl)
{
	const char *bk = vf_json_get_str(batch, "key");
	const char *gk = vf_json_get_str(batch, "keep_product_with");
	int64_t bs = 1, ga = 1;
	if (!bk || !gk || to < 1) {
		snprintf(why, wl, "a batch change needs key, to and keep_product_with");
		return false;
	}
	vf_yamldoc_get_int(doc, bk, &bs, NULL);
	vf_yamldoc_get_int(doc, gk, &ga, NULL);
	int64_t eff = bs * ga;
	char v[32];
	snprintf(v, sizeof v, "%lld", (long long)to);
	cJSON_AddStringToObject(set, bk, v);
	if (to == bs)
		return true;
	if (eff % to != 0) {
		snprintf(why, wl, "the effective batch %lld (%s x %s) cannot be kept at batch size %lld",
			 (long long)eff, bk, gk, (long long)to);
		return false;
	}
	snprintf(v, sizeof v, "%lld", (long long)(eff / to));
	cJSON_AddStringToObject(set, gk, v);
	return true;
}

static bool change_set(const cJSON *c, const struct vf_yamldoc *best, cJSON *set, char *why, size_t wl)
{
	const cJSON *batch = cJSON_GetObjectItemCaseSensitive(c, "batch");
	if (batch) {
		int64_t to = 0;
		vf_json_get_i64(batch, "to", &to);
		return batch_set(batch, best, to, set, why, wl);
	}
	const cJSON *kv;
	cJSON_ArrayForEach(kv, cJSON_GetObjectItemCaseSensitive(c, "set"))
		if (cJSON_IsString(kv))
			cJSON_AddStringToObject(set, kv->string, kv->valuestring);
	return true;
}

/* State of the predicted sweep. */
struct pred {
	const struct vf_sweepfit_opts *o;
	vf_sweepfit_eval_fn eval;
	void *ctx;
	struct vf_sweepfit *out;
	struct vf_yamldoc *best;
	double best_time;
	double min_pct;
	cJSON *adopted;  /* change ids */
	cJSON *winner;   /* the adopted deltas, key -> text */
};

static void set_json(char *dst, size_t n, const cJSON *o)
{
	char *j = cJSON_PrintUnformatted(o);
	snprintf(dst, n, "%s", j ? j : "{}");
	free(j);
}

/* One change: best + change, judged; *go_on false when its rule stops. */
static vf_status pred_change(struct pred *p, const cJSON *c, bool *go_on, struct vf_error *err)
{
	struct vf_sweepfit *out = p->out;
	struct vf_sweepfit_trial *t = &out->trials[out->ntrials];
	memset(t, 0, sizeof *t);
	t->index = out->ntrials + 1;
	snprintf(t->id, sizeof t->id, "%s", vf_json_get_str(c, "id") ? vf_json_get_str(c, "id") : "?");
	snprintf(t->change, sizeof t->change, "%s", vf_json_get_str(c, "name") ? vf_json_get_str(c, "name") : t->id);
	const char *flag = vf_json_get_str(c, "requires_flag");
	snprintf(t->flag, sizeof t->flag, "%s", flag ? flag : "");
	t->eval.peak_bytes = -1;
	t->eval.step_seconds = -1;
	*go_on = true;
	cJSON *set = cJSON_CreateObject();
	struct vf_yamldoc *doc = NULL;
	vf_status st = VF_OK;
	if (!change_set(c, p->best, set, t->why, sizeof t->why)) {
		t->outcome = VF_SWEEPFIT_SKIPPED;
	} else if ((st = doc_copy(p->best, &doc, err)) == VF_OK &&
		   (st = vf_yamldoc_set_all(doc, set, err)) == VF_OK) {
		if (doc_same(doc, p->best)) {
			t->outcome = VF_SWEEPFIT_NOOP;
			snprintf(t->why, sizeof t->why, "the config already has it");
		} else if ((st = p->eval(p->ctx, doc, &t->eval, err)) == VF_OK) {
			t->outcome = t->eval.fits ? VF_SWEEPFIT_FITS : VF_SWEEPFIT_OOM;
		}
	}
	set_json(t->deltas, sizeof t->deltas, set);
	if (st) {
		cJSON_Delete(set);
		vf_yamldoc_free(doc);
		return st;
	}
	out->ntrials++;
	if (t->eval.step_seconds > 0 && p->best_time > 0)
		t->gain_pct = (p->best_time - t->eval.step_seconds) / p->best_time * 100;
	if (t->outcome == VF_SWEEPFIT_FITS && t->eval.step_seconds > 0 &&
	    t->eval.step_seconds <= p->best_time * (1 - p->min_pct / 100)) {
		t->adopted = true;
		vf_yamldoc_free(p->best);
		p->best = doc;
		p->best_time = t->eval.step_seconds;
		out->winner = out->ntrials - 1;
		cJSON_AddItemToArray(p->adopted, cJSON_CreateString(t->id));
		const cJSON *kv;
		cJSON_ArrayForEach(kv, set)
		{
			cJSON_DeleteItemFromObjectCaseSensitive(p->winner, kv->string);
			cJSON_AddStringToObject(p->winner, kv->string, kv->valuestring);
		}
		cJSON_Delete(set);
		return VF_OK;
	}
	cJSON_Delete(set);
	vf_yamldoc_free(doc);
	if (t->outcome == VF_SWEEPFIT_NOOP)
		return VF_OK;
	const char *rule = vf_json_get_str(c, t->outcome != VF_SWEEPFIT_FITS ? "on_failure" : "on_no_improvement");
	*go_on = rule && strcmp(rule, "continue") == 0;
	return VF_OK;
}

/* Whether a change is tried; the ones that are not are named in not_tried. */
static bool pred_eligible(struct pred *p, const cJSON *c)
{
	const char *name = vf_json_get_str(c, "name"), *flag = vf_json_get_str(c, "requires_flag");
	const char *need = vf_json_get_str(c, "requires_adopted");
	char *nt = p->out->not_tried;
	size_t ntl = sizeof p->out->not_tried;
	if (!tier_allowed(c, p->o->tier)) {
		const cJSON *t0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "tiers"), 0);
		append(nt, ntl, "%s (only on the %s)", name ? name : "?",
		       cJSON_IsString(t0) ? t0->valuestring : "other tiers");
		return false;
	}
	if (!flag_given(p->o, flag)) {
		append(nt, ntl, "%s (--%s)", name ? name : "?", flag);
		return false;
	}
	if (!need)
		return true;
	const cJSON *a;
	cJSON_ArrayForEach(a, p->adopted)
		if (strcmp(a->valuestring, need) == 0)
			return true;
	return false;
}

static vf_status pred_run(struct pred *p, const cJSON *sweep, int max_trials, struct vf_error *err)
{
	struct vf_sweepfit *out = p->out;
	struct vf_sweepfit_trial *t = &out->trials[0];
	snprintf(t->id, sizeof t->id, "baseline");
	snprintf(t->change, sizeof t->change, "baseline");
	t->index = 1;
	t->deltas[0] = '{', t->deltas[1] = '}', t->deltas[2] = 0;
	vf_status st = p->eval(p->ctx, p->best, &t->eval, err);
	if (st)
		return st;
	out->ntrials = 1;
	t->outcome = t->eval.fits ? VF_SWEEPFIT_FITS : VF_SWEEPFIT_OOM;
	if (!t->eval.fits) {
		snprintf(out->not_tried, sizeof out->not_tried, "every change (the baseline is predicted out of memory)");
		return VF_OK;
	}
	out->winner = 0;
	p->best_time = t->eval.step_seconds;
	const cJSON *c;
	bool stopped = false;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(sweep, "changes"))
	{
		if (stopped) { /* named: the tier's exclusion first, else the stop */
			if (!tier_allowed(c, p->o->tier))
				pred_eligible(p, c);
			else
				append(out->not_tried, sizeof out->not_tried, "%s (%s)",
				       vf_json_get_str(c, "name") ? vf_json_get_str(c, "name") : "?",
				       "the sweep stops before it");
			continue;
		}
		if (!pred_eligible(p, c))
			continue;
		if (out->ntrials >= max_trials) {
			append(out->not_tried, sizeof out->not_tried, "%s (%s)",
			       vf_json_get_str(c, "name") ? vf_json_get_str(c, "name") : "?", "max_trials reached");
			continue;
		}
		bool go_on;
		if ((st = pred_change(p, c, &go_on, err)))
			return st;
		stopped = !go_on;
	}
	return VF_OK;
}

vf_status vf_sweepfit_predict(const struct vf_sweepfit_opts *o, const struct vf_yamldoc *start,
			      vf_sweepfit_eval_fn eval, void *ctx, struct vf_sweepfit *out,
			      struct vf_error *err)
{
	memset(out, 0, sizeof *out);
	out->winner = -1;
	snprintf(out->winner_deltas, sizeof out->winner_deltas, "{}");
	const char *trainer = o->trainer ? o->trainer : VF_PROFILE_DEFAULT;
	cJSON *sweep = NULL;
	vf_status st = vf_profile_part(trainer, "sweep", &sweep, err);
	if (st)
		return st;
	int64_t v = 5;
	vf_json_get_i64(sweep, "max_trials", &v);
	int max_trials = o->max_trials > 0 ? o->max_trials : (int)v;
	if (max_trials < 1 || max_trials > VF_SWEEPFIT_MAX_TRIALS)
		max_trials = VF_SWEEPFIT_MAX_TRIALS;
	struct pred p = {.o = o, .eval = eval, .ctx = ctx, .out = out, .best_time = -1, .min_pct = 2.0,
			 .adopted = cJSON_CreateArray(), .winner = cJSON_CreateObject()};
	const cJSON *imp = cJSON_GetObjectItemCaseSensitive(sweep, "improvement");
	double d;
	if (imp && vf_json_get_double(imp, "min_pct", &d) && d >= 0 && d < 100)
		p.min_pct = d;
	st = doc_copy(start, &p.best, err);
	if (st == VF_OK)
		st = pred_run(&p, sweep, max_trials, err);
	set_json(out->winner_deltas, sizeof out->winner_deltas, p.winner);
	vf_yamldoc_free(p.best);
	cJSON_Delete(p.adopted);
	cJSON_Delete(p.winner);
	cJSON_Delete(sweep);
	return st;
}

/* ---- the search over the profile's knobs --------------------------------------- */

#define MAX_KNOBS 16
#define MAX_VALUES 8
#define MAX_COMBOS 100000

struct knob {
	const cJSON *def;
	const char *values[MAX_VALUES];
	int nvalues;
	bool batch, training;
};

static vf_status knobs_load(const cJSON *fit, const char *trainer, bool lora, struct knob *k, int *n,
			    struct vf_error *err)
{
	*n = 0;
	const cJSON *s;
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(fit, "search"))
	{
		bool b = false;
		if (!lora && vf_json_get_bool(s, "lora_only", &b) && b)
			continue;
		const char *key = vf_json_get_str(s, "key");
		const cJSON *vals = cJSON_GetObjectItemCaseSensitive(s, "values"), *v;
		if (!key || !cJSON_IsArray(vals) || *n >= MAX_KNOBS)
			return vf_error_set(err, VF_ERR, "profile %s: fit.json: field search: each knob needs key and "
					    "values (at most %d knobs)", trainer, MAX_KNOBS);
		struct knob *kn = &k[(*n)++];
		memset(kn, 0, sizeof *kn);
		kn->def = s;
		vf_json_get_bool(s, "batch", &kn->batch);
		vf_json_get_bool(s, "changes_training", &kn->training);
		cJSON_ArrayForEach(v, vals)
		{
			if (!cJSON_IsString(v) || kn->nvalues >= MAX_VALUES)
				return vf_error_set(err, VF_ERR, "profile %s: fit.json: field search.%s.values: "
						    "expected at most %d YAML value texts", trainer, key, MAX_VALUES);
			kn->values[kn->nvalues++] = v->valuestring;
		}
		if (!kn->nvalues)
			return vf_error_set(err, VF_ERR, "profile %s: fit.json: field search.%s.values: empty",
					    trainer, key);
	}
	return VF_OK;
}

/* The keys knob k sets for value i on top of start; false when it cannot
 * (the batch knob cannot keep the effective batch). */
static bool knob_set(const cJSON *fit, const struct knob *k, int i, const struct vf_yamldoc *start, cJSON *set)
{
	const char *key = vf_json_get_str(k->def, "key");
	if (k->batch) {
		char why[160];
		return batch_set(cJSON_GetObjectItemCaseSensitive(fit, "batch"), start, atoll(k->values[i]), set, why,
				 sizeof why);
	}
	cJSON_AddStringToObject(set, key, k->values[i]);
	const char *also = vf_json_get_str(k->def, "also");
	if (also && vf_yamldoc_find(start, also))
		cJSON_AddStringToObject(set, also, k->values[i]);
	return true;
}

static int found_cmp(const void *x, const void *y)
{
	const struct vf_sweepfit_found *a = x, *b = y;
	if (a->training_changes != b->training_changes)
		return a->training_changes < b->training_changes ? -1 : 1;
	double ta = a->eval.step_seconds > 0 ? a->eval.step_seconds : INFINITY;
	double tb = b->eval.step_seconds > 0 ? b->eval.step_seconds : INFINITY;
	if (ta != tb)
		return ta < tb ? -1 : 1;
	return strlen(a->changes) < strlen(b->changes) ? -1 : strlen(a->changes) > strlen(b->changes);
}

/* For each knob value: its set, whether it differs from start, or -1 when
 * it cannot be made. */
struct choice {
	cJSON *set;
	int state; /* 0 same as start, 1 a change, -1 impossible */
};

static vf_status choices_make(const cJSON *fit, const struct knob *k, int nk, const struct vf_yamldoc *start,
			      struct choice ch[][MAX_VALUES], struct vf_error *err)
{
	for (int i = 0; i < nk; i++)
		for (int j = 0; j < k[i].nvalues; j++) {
			ch[i][j].set = cJSON_CreateObject();
			if (!knob_set(fit, &k[i], j, start, ch[i][j].set)) {
				ch[i][j].state = -1;
				continue;
			}
			struct vf_yamldoc *d = NULL;
			vf_status st = doc_copy(start, &d, err);
			if (st == VF_OK)
				st = vf_yamldoc_set_all(d, ch[i][j].set, err);
			if (st) {
				vf_yamldoc_free(d);
				return st;
			}
			ch[i][j].state = doc_same(d, start) ? 0 : 1;
			vf_yamldoc_free(d);
		}
	return VF_OK;
}

/* Evaluate one combination (idx: a value per knob). */
static vf_status combo_eval(const struct vf_yamldoc *start, const struct knob *k, int nk,
			    struct choice ch[][MAX_VALUES], const int *idx, vf_sweepfit_eval_fn eval, void *ctx,
			    struct vf_sweepfit_found *f, bool *ok, struct vf_error *err)
{
	*ok = false;
	cJSON *changes = cJSON_CreateObject();
	memset(f, 0, sizeof *f);
	for (int i = 0; i < nk; i++) {
		const struct choice *c = &ch[i][idx[i]];
		if (c->state < 0) {
			cJSON_Delete(changes);
			return VF_OK;
		}
		if (c->state == 0)
			continue;
		f->training_changes += k[i].training;
		const cJSON *kv;
		cJSON_ArrayForEach(kv, c->set) cJSON_AddStringToObject(changes, kv->string, kv->valuestring);
	}
	struct vf_yamldoc *d = NULL;
	vf_status st = doc_copy(start, &d, err);
	if (st == VF_OK)
		st = vf_yamldoc_set_all(d, changes, err);
	if (st == VF_OK)
		st = eval(ctx, d, &f->eval, err);
	vf_yamldoc_free(d);
	set_json(f->changes, sizeof f->changes, changes);
	cJSON_Delete(changes);
	*ok = st == VF_OK && f->eval.fits;
	return st;
}

vf_status vf_sweepfit_search(const char *trainer, const struct vf_yamldoc *start, bool lora,
			     vf_sweepfit_eval_fn eval, void *ctx, struct vf_sweepfit_found *out, int max, int *n,
			     struct vf_error *err)
{
	*n = 0;
	trainer = trainer ? trainer : VF_PROFILE_DEFAULT;
	cJSON *fit = NULL;
	vf_status st = vf_profile_part(trainer, "fit", &fit, err);
	if (st)
		return st;
	struct knob k[MAX_KNOBS];
	int nk = 0;
	struct choice(*ch)[MAX_VALUES] = calloc(MAX_KNOBS, sizeof *ch);
	if (!ch) {
		cJSON_Delete(fit);
		return vf_error_set(err, VF_ERR, "out of memory");
	}
	if ((st = knobs_load(fit, trainer, lora, k, &nk, err)) == VF_OK) {
		double combos = 1;
		for (int i = 0; i < nk; i++)
			combos *= k[i].nvalues;
		if (combos > MAX_COMBOS)
			st = vf_error_set(err, VF_ERR, "profile %s: fit.json: field search: %.0f combinations, more "
					  "than %d", trainer, combos, MAX_COMBOS);
	}
	if (st == VF_OK)
		st = choices_make(fit, k, nk, start, ch, err);
	int idx[MAX_KNOBS] = {0};
	int kept = 0;
	while (st == VF_OK) {
		struct vf_sweepfit_found f;
		bool ok = false;
		if ((st = combo_eval(start, k, nk, ch, idx, eval, ctx, &f, &ok, err)))
			break;
		/* dedupe: combinations that set the same changes (values equal to the start's) */
		bool dup = false;
		for (int i = 0; ok && i < kept && !dup; i++)
			dup = strcmp(out[i].changes, f.changes) == 0;
		if (ok && !dup) {
			(*n)++;
			if (kept < max) {
				out[kept++] = f;
			} else if (max > 0 && found_cmp(&f, &out[max - 1]) < 0) {
				out[max - 1] = f;
			}
			qsort(out, (size_t)kept, sizeof *out, found_cmp);
		}
		int i = 0;
		for (; i < nk; i++) {
			if (++idx[i] < k[i].nvalues)
				break;
			idx[i] = 0;
		}
		if (i == nk)
			break;
	}
	for (int i = 0; i < nk; i++)
		for (int j = 0; j < k[i].nvalues; j++)
			cJSON_Delete(ch[i][j].set);
	free(ch);
	cJSON_Delete(fit);
	return st;
}
