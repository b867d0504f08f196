/* recover.c - the remedy a recovery applies (run.h): the profile's
 * remedies for the outcome, cheapest first (logs.json), each with the
 * change it makes ("apply"); the first that the config does not have yet
 * and that the estimate says fits the card is the one. */
#include <stdio.h>
#include <string.h>

#include "vramfit/base/json.h"
#include "vramfit/run/run.h"

/* The keys "apply" sets on top of cfg; false with why when it cannot. */
static bool apply_set(const cJSON *apply, const struct vf_yamldoc *cfg, cJSON *set, char *why, size_t wl)
{
	const cJSON *kv, *batch = cJSON_GetObjectItemCaseSensitive(apply, "batch");
	cJSON_ArrayForEach(kv, cJSON_GetObjectItemCaseSensitive(apply, "set"))
		if (cJSON_IsString(kv))
			cJSON_AddStringToObject(set, kv->string, kv->valuestring);
	cJSON_ArrayForEach(kv, cJSON_GetObjectItemCaseSensitive(apply, "halve"))
	{
		int64_t v;
		if (!cJSON_IsString(kv) || vf_yamldoc_get_int(cfg, kv->valuestring, &v, NULL) != VF_OK || v < 2) {
			snprintf(why, wl, "%s is not an integer above 1", cJSON_IsString(kv) ? kv->valuestring : "?");
			return false;
		}
		char t[32];
		snprintf(t, sizeof t, "%lld", (long long)(v / 2));
		cJSON_AddStringToObject(set, kv->valuestring, t);
	}
	if (!batch)
		return cJSON_GetArraySize(set) > 0 || (snprintf(why, wl, "no change"), false);
	const char *bk = vf_json_get_str(batch, "key"), *gk = vf_json_get_str(batch, "keep_product_with");
	int64_t to, bs = 1, ga = 1;
	if (!bk || !gk || !vf_json_get_i64(batch, "to", &to) || to < 1) {
		snprintf(why, wl, "logs.json: a batch remedy needs key, to, keep_product_with");
		return false;
	}
	vf_yamldoc_get_int(cfg, bk, &bs, NULL);
	vf_yamldoc_get_int(cfg, gk, &ga, NULL);
	if ((bs * ga) % to != 0) {
		snprintf(why, wl, "the effective batch %lld cannot be kept at %s %lld", (long long)(bs * ga), bk,
			 (long long)to);
		return false;
	}
	char t[32];
	snprintf(t, sizeof t, "%lld", (long long)to);
	cJSON_AddStringToObject(set, bk, t);
	snprintf(t, sizeof t, "%lld", (long long)(bs * ga / to));
	cJSON_AddStringToObject(set, gk, t);
	return true;
}

/* The peak predicted for cfg with set on top: VF_OK and *bytes, or
 * VF_ENOTFOUND when the estimator has none. */
static vf_status predict_with(const struct vf_yamldoc *cfg, const cJSON *set, vf_tune_predict_fn predict,
			      void *pctx, int64_t *bytes)
{
	if (!predict)
		return VF_ENOTFOUND;
	size_t len;
	const char *text = vf_yamldoc_text(cfg, &len);
	struct vf_yamldoc *d = NULL;
	if (vf_yamldoc_load_mem(text, len, vf_yamldoc_name(cfg), &d, NULL) != VF_OK)
		return VF_ENOTFOUND;
	vf_status st = vf_yamldoc_set_all(d, set, NULL);
	if (st == VF_OK)
		st = predict(pctx, d, bytes, NULL);
	vf_yamldoc_free(d);
	return st == VF_OK ? VF_OK : VF_ENOTFOUND;
}

static void add_skip(struct vf_run_remedy *out, const char *text, const char *why)
{
	size_t l = strlen(out->skipped);
	snprintf(out->skipped + l, sizeof out->skipped - l, "%s%s (%s)", l ? "; " : "", text, why);
}

vf_status vf_run_pick_remedy(const struct vf_trial_patterns *pat, enum vf_outcome o, const struct vf_yamldoc *cfg,
			     vf_tune_predict_fn predict, void *pctx, int64_t card_bytes, struct vf_run_remedy *out,
			     struct vf_error *err)
{
	memset(out, 0, sizeof *out);
	out->predicted_peak_bytes = -1;
	const cJSON *r;
	cJSON_ArrayForEach(r, vf_trial_remedy_list(pat, o))
	{
		const char *text = vf_json_get_str(r, "text");
		const cJSON *apply = cJSON_GetObjectItemCaseSensitive(r, "apply");
		if (!text || !apply || vf_trial_remedy_in_effect(r, cfg))
			continue;
		char why[256] = "";
		cJSON *set = cJSON_CreateObject();
		int64_t bytes = -1;
		if (!apply_set(apply, cfg, set, why, sizeof why)) {
			add_skip(out, text, why);
		} else if (predict_with(cfg, set, predict, pctx, &bytes) == VF_OK && card_bytes > 0 &&
			   bytes > card_bytes) {
			snprintf(why, sizeof why, "predicted %.1f GiB, more than the card's %.1f GiB",
				 (double)bytes / (1u << 30), (double)card_bytes / (1u << 30));
			add_skip(out, text, why);
		} else {
			snprintf(out->text, sizeof out->text, "%s", text);
			out->set = set;
			out->predicted_peak_bytes = bytes;
			return VF_OK;
		}
		cJSON_Delete(set);
	}
	return vf_error_set(err, VF_ENOTFOUND, "no %s remedy left that vramfit can apply and that is predicted to fit%s%s",
			    vf_outcome_name(o), out->skipped[0] ? ": " : "", out->skipped);
}
