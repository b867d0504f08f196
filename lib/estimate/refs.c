/* refs.c - published reference runs (refs.h): read data/refs.json, compute
 * the model FLOPs and the MFU each claim implies, judge it, predict the same
 * work on the published or other hardware. */
#include "vramfit/estimate/refs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/base/data.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/base/json.h"
#include "vramfit/model/models.h"
#include "vramfit/estimate/search.h"

#define VF_REFS_MAX 256

static double num_or(const cJSON *o, const char *key, double dflt)
{
	double v;
	return o && vf_json_get_double(o, key, &v) ? v : dflt;
}

/* An optional whole number in [lo, hi]; *out = dflt when absent. */
static bool int_in(const cJSON *o, const char *key, int64_t lo, int64_t hi, int64_t dflt,
		   int64_t *out)
{
	const cJSON *n = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	*out = dflt;
	if (!n || cJSON_IsNull(n))
		return true;
	int64_t v;
	if (!cJSON_IsNumber(n) || !vf_json_number_is_i64(n, &v) || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

static void str_to(char *dst, size_t n, const cJSON *o, const char *key)
{
	const char *s = o ? vf_json_get_str(o, key) : NULL;
	snprintf(dst, n, "%s", s ? s : "");
}

/* A ref's "model": its size and shape, the FLOPs coefficient. */
static vf_status parse_ref_model(const cJSON *e, const char *what, struct vf_ref *r, struct vf_error *err)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "model");
	if (!cJSON_IsObject(m))
		return vf_error_set(err, VF_ERR, "%s: %s.model: expected an object", what, r->id);
	str_to(r->model_name, sizeof r->model_name, m, "name");
	str_to(r->catalog_id, sizeof r->catalog_id, m, "catalog_id");
	r->params = num_or(m, "params", -1);
	r->coeff = num_or(m, "coeff", 6);
	if (!int_in(m, "layers", 1, 100000, -1, &r->layers) ||
	    !int_in(m, "hidden", 1, 1000000, -1, &r->hidden) ||
	    !int_in(m, "seq", 1, 100000000, -1, &r->seq))
		return vf_error_set(err, VF_ERR,
				    "%s: %s.model: layers, hidden and seq must be whole numbers "
				    "(1-1e5, 1-1e6, 1-1e8)", what, r->id);
	r->extra_flops_per_sample = num_or(m, "extra_flops_per_sample", 0);
	r->flops_per_sample = num_or(m, "flops_per_sample", 0);
	if (!(r->flops_per_sample >= 0 && r->flops_per_sample < 1e18))
		return vf_error_set(err, VF_ERR, "%s: %s.model.flops_per_sample: expected 0-1e18",
				    what, r->id);
	if (!(r->coeff > 0 && r->coeff <= 8))
		return vf_error_set(err, VF_ERR, "%s: %s.model.coeff: expected 2, 4 or 6", what, r->id);
	return VF_OK;
}

/* A ref's "work" (tokens, or samples x tokens per sample) and "hardware". */
static vf_status parse_ref_work(const cJSON *e, const char *what, struct vf_ref *r, struct vf_error *err)
{
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(e, "work");
	r->tokens = num_or(w, "tokens", -1);
	r->samples = num_or(w, "samples", -1);
	r->tokens_per_sample = num_or(w, "tokens_per_sample", -1);
	bool ta = false;
	if (w && vf_json_get_bool(w, "tokens_per_sample_assumed", &ta))
		r->tokens_assumed = ta;
	if (r->tokens < 0 && r->samples > 0 && r->tokens_per_sample > 0)
		r->tokens = r->samples * r->tokens_per_sample;

	const cJSON *h = cJSON_GetObjectItemCaseSensitive(e, "hardware");
	str_to(r->gpu, sizeof r->gpu, h, "gpu");
	int64_t gpus;
	if (!int_in(h, "gpus", 0, 100000, 0, &gpus))
		return vf_error_set(err, VF_ERR, "%s: %s.hardware.gpus: expected a whole number 0-100000",
				    what, r->id);
	r->gpus = (int)gpus;
	bool ga = false;
	if (h && vf_json_get_bool(h, "gpu_assumed", &ga))
		r->gpu_assumed = ga;

	return VF_OK;
}

/* A ref's "published" claim: time, GPU-hours, cost, throughput, MFU. */
static vf_status parse_ref_published(const cJSON *e, const char *what, struct vf_ref *r, struct vf_error *err)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(e, "published");
	if (p && !cJSON_IsObject(p))
		return vf_error_set(err, VF_ERR, "%s: %s.published: expected an object", what, r->id);
	r->hours = num_or(p, "hours", -1);
	r->gpu_hours = num_or(p, "gpu_hours", -1);
	r->cost_usd = num_or(p, "cost_usd", -1);
	r->tokens_per_s_per_gpu = num_or(p, "tokens_per_s_per_gpu", -1);
	r->mfu = num_or(p, "mfu", -1);
	r->hours_lo = r->hours_hi = -1;
	const cJSON *hr = p ? cJSON_GetObjectItemCaseSensitive(p, "hours_range") : NULL;
	if (cJSON_IsArray(hr) && cJSON_GetArraySize(hr) == 2) {
		r->hours_lo = cJSON_GetArrayItem(hr, 0)->valuedouble;
		r->hours_hi = cJSON_GetArrayItem(hr, 1)->valuedouble;
	}
	if (r->hours < 0 && r->gpu_hours > 0 && r->gpus > 0)
		r->hours = r->gpu_hours / r->gpus;
	if (r->mfu > 1)
		return vf_error_set(err, VF_ERR, "%s: %s.published.mfu: expected a fraction (0-1)",
				    what, r->id);
	return VF_OK;
}

/* A ref's stack MFU range, alternative claim and assumptions. */
static vf_status parse_ref_expected(const cJSON *e, const char *what, struct vf_ref *r, struct vf_error *err)
{
	r->expected_lo = r->expected_hi = -1;
	const cJSON *ex = cJSON_GetObjectItemCaseSensitive(e, "expected_mfu");
	if (ex) {
		if (!cJSON_IsArray(ex) || cJSON_GetArraySize(ex) != 2 ||
		    !cJSON_IsNumber(cJSON_GetArrayItem(ex, 0)) ||
		    !cJSON_IsNumber(cJSON_GetArrayItem(ex, 1)))
			return vf_error_set(err, VF_ERR, "%s: %s.expected_mfu: expected [low, high]",
					    what, r->id);
		r->expected_lo = cJSON_GetArrayItem(ex, 0)->valuedouble;
		r->expected_hi = cJSON_GetArrayItem(ex, 1)->valuedouble;
	}
	const cJSON *alt = cJSON_GetObjectItemCaseSensitive(e, "alternative");
	r->alt_tokens = num_or(alt, "tokens", -1);
	str_to(r->alt_why, sizeof r->alt_why, alt, "why");

	const cJSON *as = cJSON_GetObjectItemCaseSensitive(e, "assumptions");
	const cJSON *a;
	cJSON_ArrayForEach(a, as)
	{
		if (r->nassumptions < VF_REF_MAX_ASSUMPTIONS && cJSON_IsString(a))
			snprintf(r->assumptions[r->nassumptions++], sizeof r->assumptions[0], "%s",
				 a->valuestring);
	}
	return VF_OK;
}

static vf_status parse_ref(const cJSON *e, const char *what, size_t idx, struct vf_ref *r,
			   struct vf_error *err)
{
	memset(r, 0, sizeof *r);
	if (!cJSON_IsObject(e))
		return vf_error_set(err, VF_ERR, "%s: refs[%zu]: expected an object", what, idx);
	const char *id = vf_json_get_str(e, "id");
	if (!id || !*id || strlen(id) >= sizeof r->id)
		return vf_error_set(err, VF_ERR, "%s: refs[%zu].id: expected a string of 1-%zu chars",
				    what, idx, sizeof r->id - 1);
	snprintf(r->id, sizeof r->id, "%s", id);
	str_to(r->title, sizeof r->title, e, "title");
	str_to(r->kind, sizeof r->kind, e, "kind");
	str_to(r->source, sizeof r->source, e, "source");
	str_to(r->note, sizeof r->note, e, "note");
	str_to(r->expected_source, sizeof r->expected_source, e, "expected_mfu_source");

	vf_status st = parse_ref_model(e, what, r, err);
	if (st == VF_OK)
		st = parse_ref_work(e, what, r, err);
	if (st == VF_OK)
		st = parse_ref_published(e, what, r, err);
	if (st == VF_OK)
		st = parse_ref_expected(e, what, r, err);
	return st;
}

vf_status vf_refs_parse(const cJSON *root, const char *what, struct vf_refs *out,
			struct vf_error *err)
{
	memset(out, 0, sizeof *out);
	vf_mfu_policy_defaults(&out->policy);
	snprintf(out->source, sizeof out->source, "%s", what);
	if (!cJSON_IsObject(root))
		return vf_error_set(err, VF_ERR, "%s: expected a JSON object", what);
	const cJSON *pol = cJSON_GetObjectItemCaseSensitive(root, "policy");
	out->policy.max_mfu = num_or(pol, "max_mfu", out->policy.max_mfu);
	out->policy.min_mfu = num_or(pol, "min_mfu", out->policy.min_mfu);
	out->policy.tuned_floor_fraction =
		num_or(pol, "tuned_floor_fraction", out->policy.tuned_floor_fraction);
	out->policy.default_mfu = num_or(pol, "default_mfu", out->policy.default_mfu);
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "refs");
	if (!cJSON_IsArray(arr))
		return vf_error_set(err, VF_ERR, "%s: field refs: expected an array", what);
	int n = cJSON_GetArraySize(arr);
	if (n > VF_REFS_MAX)
		return vf_error_set(err, VF_ERR, "%s: refs: %d entries exceed the limit of %d", what, n,
				    VF_REFS_MAX);
	out->refs = calloc(n > 0 ? (size_t)n : 1, sizeof *out->refs);
	if (!out->refs)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	for (int i = 0; i < n; i++) {
		vf_status st = parse_ref(cJSON_GetArrayItem(arr, i), what, (size_t)i,
					 &out->refs[out->count], err);
		if (st != VF_OK) {
			vf_refs_release(out);
			return st;
		}
		for (size_t k = 0; k < out->count; k++)
			if (strcmp(out->refs[k].id, out->refs[out->count].id) == 0) {
				vf_error_set(err, VF_ERR, "%s: refs[%d].id: duplicate id %s", what, i,
					     out->refs[k].id);
				vf_refs_release(out);
				return VF_ERR;
			}
		out->count++;
	}
	return VF_OK;
}

vf_status vf_refs_load(struct vf_refs *out, struct vf_error *err)
{
	cJSON *root = NULL;
	char src[256];
	memset(out, 0, sizeof *out);
	vf_status st = vf_data_load_json("refs.json", &root, src, sizeof src, err);
	if (st != VF_OK)
		return st;
	st = vf_refs_parse(root, src, out, err);
	cJSON_Delete(root);
	return st;
}

void vf_refs_release(struct vf_refs *r)
{
	if (!r)
		return;
	free(r->refs);
	r->refs = NULL;
	r->count = 0;
}

const struct vf_ref *vf_refs_find(const struct vf_refs *r, const char *id)
{
	for (size_t i = 0; r && id && i < r->count; i++)
		if (strcmp(r->refs[i].id, id) == 0)
			return &r->refs[i];
	return NULL;
}

/* "22B", "295B", "3.2B", "558K". */
static const char *fmt_count(char *o, size_t n, double v)
{
	if (v >= 1e12)
		snprintf(o, n, "%.3gT", v / 1e12);
	else if (v >= 1e9)
		snprintf(o, n, "%.3gB", v / 1e9);
	else if (v >= 1e6)
		snprintf(o, n, "%.3gM", v / 1e6);
	else
		snprintf(o, n, "%.0f", v);
	return o;
}

/* The dense half-precision peak: bf16, else fp16 (V100-class GPUs train
 * with fp16 autocast). */
static double peak_of(const struct vf_gpu_spec *g)
{
	if (!g)
		return -1;
	return g->bf16_tflops > 0 ? g->bf16_tflops : g->fp16_tflops;
}

/* The model FLOPs of the published work and the MFU its time implies. */
static void ref_flops(const struct vf_ref *r, double ppeak, struct vf_ref_eval *out)
{
	if (r->params > 0) {
		out->flops_per_token =
			vf_runcost_flops_per_token(r->params, r->coeff, r->layers, r->hidden, r->seq);
		if (r->tokens > 0) {
			out->flops = out->flops_per_token * r->tokens; /* FLOPs */
			if (r->samples > 0 && r->extra_flops_per_sample > 0)
				out->flops += r->samples * r->extra_flops_per_sample; /* frozen encoders */
		}
	}
	if (r->flops_per_sample > 0 && r->samples > 0)
		out->flops = r->samples * r->flops_per_sample; /* FLOPs */
	out->implied_mfu = vf_runcost_mfu(out->flops, r->gpus, ppeak, out->seconds);
	/* A published MFU with its throughput names the authors' count of
	 * FLOPs per token, which need not be vramfit's. */
	if (r->mfu > 0 && r->tokens_per_s_per_gpu > 0 && ppeak > 0)
		out->published_flops_per_token = r->mfu * ppeak * 1e12 / r->tokens_per_s_per_gpu;
}

/* The reference MFU range (the stack's own, else the default), the tokens
 * it gives in the published time, and the alternative claim's MFU. */
static void ref_range(const struct vf_ref *r, const struct vf_mfu_policy *pol, double ppeak,
		      struct vf_ref_eval *out)
{
	out->mfu_lo = r->expected_lo > 0 ? r->expected_lo : pol->default_mfu;
	out->mfu_hi = r->expected_hi > 0 ? r->expected_hi : pol->default_mfu;
	if (!(out->flops_per_token > 0 && out->seconds > 0))
		return;
	/* Frozen-encoder FLOPs are per sample; spread them per token. */
	double fpt = out->flops_per_token;
	if (r->tokens_per_sample > 0 && r->extra_flops_per_sample > 0)
		fpt += r->extra_flops_per_sample / r->tokens_per_sample;
	out->tokens_at_lo = vf_runcost_tokens_at_mfu(out->mfu_lo, r->gpus, ppeak, out->seconds, fpt);
	out->tokens_at_hi = vf_runcost_tokens_at_mfu(out->mfu_hi, r->gpus, ppeak, out->seconds, fpt);
	if (r->alt_tokens > 0) {
		double af = out->flops_per_token * r->alt_tokens;
		out->alt_mfu = vf_runcost_mfu(af, r->gpus, ppeak, out->seconds);
		double mid = 0.5 * (out->mfu_lo + out->mfu_hi);
		if (ppeak > 0)
			out->alt_gpus = af / (ppeak * 1e12 * mid * out->seconds);
	}
}

/* The MFU the prediction runs at, on vramfit's count of FLOPs: a
 * published throughput converted to it (a published MFU counted
 * otherwise would predict a time the authors' own figures contradict),
 * else the published MFU, the stack's, the default. */
static void ref_mfu_used(const struct vf_ref *r, const struct vf_mfu_policy *pol, double ppeak,
			 struct vf_ref_eval *out)
{
	if (r->mfu > 0 && r->tokens_per_s_per_gpu > 0 && out->flops_per_token > 0 && ppeak > 0) {
		out->mfu_used = r->tokens_per_s_per_gpu * out->flops_per_token / (ppeak * 1e12);
		out->mfu_basis = "published";
	} else if (r->mfu > 0) {
		out->mfu_used = r->mfu;
		out->mfu_basis = "published";
	} else if (r->expected_lo > 0) {
		out->mfu_used = 0.5 * (r->expected_lo + r->expected_hi);
		out->mfu_basis = "stack";
	} else {
		out->mfu_used = pol->default_mfu;
		out->mfu_basis = "default";
	}
}

/* The prediction: on the target (what-if) or the published hardware. */
static vf_status ref_predict(const struct vf_ref *r, const struct vf_mfu_policy *pol,
			     const struct vf_gpu_spec *published, const struct vf_gpu_spec *target,
			     int target_gpus, double price_usd_hour, struct vf_ref_eval *out,
			     struct vf_error *err)
{
	double ppeak = peak_of(published);
	const struct vf_gpu_spec *tg = target ? target : published;
	int tgpus = target ? (target_gpus > 0 ? target_gpus : (r->gpus > 0 ? r->gpus : 1)) : r->gpus;
	if (target && !(peak_of(target) > 0))
		return vf_error_set(err, VF_EUSAGE, "--gpu %s: the catalog has no bf16 rate for it",
				    target->id);
	snprintf(out->gpu, sizeof out->gpu, "%s", tg ? tg->id : r->gpu);
	out->gpus = tgpus;
	double tpeak = peak_of(tg);
	ref_mfu_used(r, pol, ppeak, out);
	double s = vf_runcost_seconds_at_mfu(out->flops, tgpus, tpeak, out->mfu_used);
	if (s < 0 && out->seconds > 0 && ppeak > 0 && tpeak > 0 && r->gpus > 0 && tgpus > 0) {
		/* No FLOPs: the published time, scaled by aggregate peak at equal MFU. */
		s = out->seconds * ((double)r->gpus * ppeak) / ((double)tgpus * tpeak);
		out->mfu_used = out->implied_mfu;
		out->mfu_basis = "scaled";
	}
	if (s > 0)
		out->predicted_hours = s / 3600.0;
	out->price_usd_hour = price_usd_hour >= 0 ? price_usd_hour : (tg ? tg->price_usd_hour : -1);
	if (out->predicted_hours > 0 && out->price_usd_hour >= 0)
		out->predicted_cost_usd = out->predicted_hours * tgpus * out->price_usd_hour;
	return VF_OK;
}

/* The verdict in words. */
static void ref_verdict_words(const struct vf_ref *r, const struct vf_mfu_policy *pol,
			      const struct vf_gpu_spec *published, double ppeak, struct vf_ref_eval *out)
{
	char a[32], b[32], c[32];
	int gp = r->gpus;
	switch (out->verdict) {
	case VF_VERDICT_PLAUSIBLE:
		snprintf(out->note, sizeof out->note,
			 "implied MFU %.0f%% on %dx%s is plausible for dense training",
			 100 * out->implied_mfu, gp, r->gpu);
		break;
	case VF_VERDICT_TOO_HIGH:
		snprintf(out->note, sizeof out->note,
			 "implausible: %s tokens in %.3g h on %dx%s would need %.0f%% MFU (above the ~%.0f%% "
			 "no dense run sustains); at %.0f-%.0f%% MFU that time processes %s-%s tokens, or the "
			 "work takes %.3g-%.3g h",
			 fmt_count(a, sizeof a, r->tokens), r->hours, gp, r->gpu, 100 * out->implied_mfu,
			 100 * pol->max_mfu, 100 * out->mfu_lo, 100 * out->mfu_hi,
			 fmt_count(b, sizeof b, out->tokens_at_lo), fmt_count(c, sizeof c, out->tokens_at_hi),
			 r->hours * out->implied_mfu / out->mfu_hi, r->hours * out->implied_mfu / out->mfu_lo);
		break;
	case VF_VERDICT_TOO_LOW:
	case VF_VERDICT_BELOW_STACK: {
		int k = snprintf(
			out->note, sizeof out->note,
			"implausibly low MFU: %s tokens in %.3g h on %dx%s is %.0f%% MFU (%s); at %.0f-%.0f%% "
			"MFU that time processes %s-%s tokens",
			fmt_count(a, sizeof a, r->tokens), r->hours, gp, r->gpu, 100 * out->implied_mfu,
			out->verdict == VF_VERDICT_TOO_LOW ? "below the ~5% floor of a dense run"
							   : "under half of what this software stack publishes",
			100 * out->mfu_lo, 100 * out->mfu_hi, fmt_count(b, sizeof b, out->tokens_at_lo),
			fmt_count(c, sizeof c, out->tokens_at_hi));
		if (r->alt_tokens > 0 && out->alt_gpus > 0 && k > 0 && (size_t)k < sizeof out->note)
			snprintf(out->note + k, sizeof out->note - (size_t)k,
				 "; the claim is consistent with ~%s tokens (%s) run on ~%.0f %s GPUs "
				 "(%.0f nodes of 8) in %.3g h; on %d GPUs it would need %.0f%% MFU",
				 fmt_count(a, sizeof a, r->alt_tokens), r->alt_why, out->alt_gpus, r->gpu,
				 ceil(out->alt_gpus / 8), r->hours, gp, 100 * out->alt_mfu);
		break;
	}
	default:
		if (out->tokens < 0 && r->hours > 0 && out->flops_per_token > 0 && ppeak > 0 && gp > 0)
			snprintf(out->note, sizeof out->note,
				 "no MFU implied (token count not published); at %.0f%% MFU, %.3g h on %dx%s "
				 "process about %s tokens",
				 100 * pol->default_mfu, r->hours, gp, r->gpu,
				 fmt_count(a, sizeof a, out->tokens_at_lo));
		else {
			char why[160] = "";
			size_t k = 0;
			const char *parts[4];
			int np = 0;
			if (r->params < 0)
				parts[np++] = "the model size";
			if (gp <= 0 || !published)
				parts[np++] = "the GPU";
			if (r->hours < 0)
				parts[np++] = "the time";
			if (out->tokens < 0 && r->samples < 0)
				parts[np++] = "the amount of work";
			for (int i = 0; i < np && k < sizeof why; i++)
				k += (size_t)snprintf(why + k, sizeof why - k, "%s%s",
						      i == 0 ? "" : i == np - 1 ? " and " : ", ", parts[i]);
			snprintf(out->note, sizeof out->note, "no MFU implied: %s %s not published",
				 np ? why : "the work", np > 1 ? "are" : "is");
		}
		break;
	}
}

/* When the published MFU counts other FLOPs than vramfit: both counts and
 * the MFU the prediction runs at, after the verdict. */
static void ref_count_words(const struct vf_ref *r, struct vf_ref_eval *out)
{
	if (!(out->published_flops_per_token > 0) || !(out->flops_per_token > 0) ||
	    fabs(out->mfu_used - r->mfu) < 0.005)
		return;
	size_t k = strlen(out->note);
	snprintf(out->note + k, sizeof out->note - k,
		 "; the published %.0f%% MFU at %.0f tokens/s per GPU counts %.2f GFLOP per token, "
		 "vramfit %.2f: the prediction runs at that throughput, %.0f%% MFU on vramfit's count",
		 100 * r->mfu, r->tokens_per_s_per_gpu, out->published_flops_per_token / 1e9,
		 out->flops_per_token / 1e9, 100 * out->mfu_used);
}

vf_status vf_ref_evaluate(const struct vf_refs *set, const struct vf_ref *r,
			  const struct vf_gpu_spec *published, const struct vf_gpu_spec *target,
			  int target_gpus, double price_usd_hour, struct vf_ref_eval *out,
			  struct vf_error *err)
{
	memset(out, 0, sizeof *out);
	const struct vf_mfu_policy *pol = &set->policy;
	out->tokens = r->tokens;
	out->flops_per_token = -1;
	out->published_flops_per_token = -1;
	out->flops = -1;
	out->seconds = r->hours > 0 ? r->hours * 3600.0 : -1;
	out->implied_mfu = -1;
	out->tokens_at_lo = out->tokens_at_hi = -1;
	out->alt_mfu = out->alt_gpus = -1;
	out->predicted_hours = out->predicted_cost_usd = -1;
	out->price_usd_hour = -1;
	out->mfu_used = -1;
	out->mfu_basis = "none";
	double ppeak = peak_of(published);
	ref_flops(r, ppeak, out);
	out->verdict = vf_runcost_judge(out->implied_mfu, r->expected_lo, pol);
	out->plausible = out->verdict == VF_VERDICT_PLAUSIBLE || out->verdict == VF_VERDICT_UNKNOWN;
	ref_range(r, pol, ppeak, out);
	vf_status st = ref_predict(r, pol, published, target, target_gpus, price_usd_hour, out, err);
	if (st)
		return st;
	ref_verdict_words(r, pol, published, ppeak, out);
	ref_count_words(r, out);
	return VF_OK;
}


void vf_ref_estimate(const struct vf_ref *r, const struct vf_gpu_spec *gpu,
		     struct vf_ref_eval *e)
{
	e->est_known = false;
	e->est_cost_usd = -1;
	if (!r->catalog_id[0] || r->seq <= 0 || !(e->tokens > 0) || !gpu || e->gpus <= 0)
		return;
	struct vf_error err = {0};
	if (vf_models_load(&err) != VF_OK)
		return;
	const struct vf_model_entry *m = vf_models_find(r->catalog_id);
	if (!m || !m->has_arch)
		return;
	struct vf_setup s;
	vf_setup_defaults(&s);
	s.mode = r->coeff >= 6 ? VF_MODE_FULL : VF_MODE_LORA;
	s.precision = r->coeff >= 6 ? VF_PREC_AMP : VF_PREC_BF16;
	s.seq = r->seq;
	s.gpus = e->gpus;
	if (vf_setup_finish(&s, &err) != VF_OK)
		return;
	int64_t limit = (int64_t)(0.9 * (double)vf_estimate_gpu_bytes(gpu)); /* 10% margin */
	int64_t b = vf_estimate_max_batch(&m->arch, &s, gpu, limit);
	if (b < 1) {
		s.grad_ckpt = true;
		b = vf_estimate_max_batch(&m->arch, &s, gpu, limit);
	}
	if (b < 1)
		return;
	s.batch = b > 64 ? 64 : b;
	struct vf_search_result res;
	vf_search_eval(&m->arch, &s, gpu, 0.10, e->price_usd_hour, &res);
	if (!(res.tokens_per_second > 0))
		return;
	e->est_known = true;
	e->est_batch = s.batch;
	e->est_grad_ckpt = s.grad_ckpt;
	e->est_tokens_per_second = res.tokens_per_second;                /* tokens/s, all GPUs */
	e->est_hours = e->tokens / res.tokens_per_second / 3600.0;       /* h */
	e->est_mfu = vf_runcost_mfu(e->flops, e->gpus, peak_of(gpu), e->est_hours * 3600.0);
	if (e->price_usd_hour >= 0)
		e->est_cost_usd = e->est_hours * e->gpus * e->price_usd_hour; /* $ */
}

static void add_num(cJSON *o, const char *k, double v)
{
	if (v >= 0)
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

cJSON *vf_ref_to_json(const struct vf_ref *r, const struct vf_ref_eval *e)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "id", r->id);
	cJSON_AddStringToObject(o, "title", r->title);
	cJSON_AddStringToObject(o, "kind", r->kind);
	cJSON *m = cJSON_AddObjectToObject(o, "model");
	cJSON_AddStringToObject(m, "name", r->model_name);
	add_num(m, "params", r->params);
	add_num(m, "flops_per_token", e->flops_per_token);
	cJSON *p = cJSON_AddObjectToObject(o, "published");
	add_num(p, "tokens", r->tokens_assumed ? -1 : r->tokens);
	add_num(p, "samples", r->samples);
	if (r->gpu[0])
		cJSON_AddStringToObject(p, "gpu", r->gpu);
	else
		cJSON_AddNullToObject(p, "gpu");
	add_num(p, "gpus", r->gpus > 0 ? r->gpus : -1);
	add_num(p, "hours", r->hours);
	add_num(p, "gpu_hours", r->gpu_hours > 0 ? r->gpu_hours
				: r->hours > 0 && r->gpus > 0 ? r->hours * r->gpus : -1);
	add_num(p, "cost_usd", r->cost_usd);
	add_num(p, "tokens_per_s_per_gpu", r->tokens_per_s_per_gpu);
	add_num(p, "mfu", r->mfu);
	cJSON_AddStringToObject(p, "source", r->source);
	add_num(o, "tokens", e->tokens);
	add_num(o, "flops", e->flops);
	add_num(o, "implied_mfu", e->implied_mfu);
	if (e->verdict == VF_VERDICT_UNKNOWN) /* nothing implied to judge: neither */
		cJSON_AddNullToObject(o, "plausible");
	else
		cJSON_AddBoolToObject(o, "plausible", e->plausible);
	cJSON_AddStringToObject(o, "verdict", vf_verdict_name(e->verdict));
	cJSON *pr = cJSON_AddObjectToObject(o, "predicted");
	cJSON_AddStringToObject(pr, "gpu", e->gpu);
	cJSON_AddNumberToObject(pr, "gpus", e->gpus);
	add_num(pr, "mfu", e->mfu_used);
	cJSON_AddStringToObject(pr, "mfu_basis", e->mfu_basis);
	add_num(pr, "hours", e->predicted_hours);
	add_num(pr, "price_usd_hour", e->price_usd_hour);
	add_num(pr, "cost_usd", e->predicted_cost_usd);
	if (e->est_known) {
		cJSON *x = cJSON_AddObjectToObject(o, "estimator");
		cJSON_AddNumberToObject(x, "batch", (double)e->est_batch);
		cJSON_AddBoolToObject(x, "grad_ckpt", e->est_grad_ckpt);
		cJSON_AddNumberToObject(x, "tokens_per_second", e->est_tokens_per_second);
		add_num(x, "mfu", e->est_mfu);
		cJSON_AddNumberToObject(x, "hours", e->est_hours);
		add_num(x, "cost_usd", e->est_cost_usd);
	} else {
		cJSON_AddNullToObject(o, "estimator");
	}
	if (e->verdict == VF_VERDICT_TOO_HIGH || e->verdict == VF_VERDICT_TOO_LOW ||
	    e->verdict == VF_VERDICT_BELOW_STACK) {
		cJSON *c = cJSON_AddObjectToObject(o, "consistent_with");
		add_num(c, "mfu_low", e->mfu_lo);
		add_num(c, "mfu_high", e->mfu_hi);
		add_num(c, "tokens_low", e->tokens_at_lo);
		add_num(c, "tokens_high", e->tokens_at_hi);
		if (r->alt_tokens > 0) {
			add_num(c, "alt_tokens", r->alt_tokens);
			add_num(c, "alt_gpus", e->alt_gpus);
			add_num(c, "alt_mfu_on_published_gpus", e->alt_mfu);
		}
	}
	char note[2048];
	snprintf(note, sizeof note, "%s%s%s", e->note, r->note[0] ? ". " : "", r->note);
	cJSON_AddStringToObject(o, "note", note);
	cJSON *as = cJSON_AddArrayToObject(o, "assumptions");
	for (int i = 0; i < r->nassumptions; i++)
		cJSON_AddItemToArray(as, cJSON_CreateString(r->assumptions[i]));
	if (r->gpu_assumed)
		cJSON_AddItemToArray(as, cJSON_CreateString("the GPU variant (memory size) is assumed; "
							    "the bf16 rate is the same"));
	return o;
}
