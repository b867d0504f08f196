/* estimate-tier.c - the tier's starting config as the setup of `vramfit
 * estimate` for the trainer's own model (estimate-tier.h): the GPU's tier
 * (tier.c), the profile's values for that config (sweepfit.c; the same
 * ones fit starts from), mapped by the profile's key names onto a setup
 * (vf_setup_from_ltx2). */
#include "estimate-tier.h"

#include <stdio.h>
#include <string.h>

#include "vramfit/base/json.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/trainer/profile.h"
#include "vramfit/trainer/sweepfit.h"
#include "vramfit/trainer/tier.h"

bool vf_est_tier_model(const char *id)
{
	cJSON *cfg = NULL;
	if (!id || vf_profile_part(VF_PROFILE_DEFAULT, "configs", &cfg, NULL) != VF_OK)
		return false;
	bool found = false;
	const cJSON *m;
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(cfg, "model_ids"))
	{
		const char *mid = vf_json_get_str(m, "id");
		if (mid && strcmp(mid, id) == 0)
			found = true;
	}
	cJSON_Delete(cfg);
	return found;
}

bool vf_est_tier_wanted(const struct vf_setup *user)
{
	const unsigned knobs = VF_SETUP_G_PRECISION | VF_SETUP_G_OPTIMIZER | VF_SETUP_G_OPTIMIZER_IMPL |
			       VF_SETUP_G_BATCH | VF_SETUP_G_GRAD_ACCUM | VF_SETUP_G_GRAD_CKPT |
			       VF_SETUP_G_LORA_RANK | VF_SETUP_G_LORA_ALPHA | VF_SETUP_G_LORA_TARGETS |
			       VF_SETUP_G_QUANT | VF_SETUP_G_VIDEO | VF_SETUP_G_TEXT_ENCODER | VF_SETUP_G_OFFLOAD;
	/* another stack named, or one of its mechanisms set: the user's own
	 * setup (the tier's runs under the trainer's stack, data/stacks/ltx.json) */
	if ((user->given & knobs) || user->stack_given ||
	    ((user->given & VF_SETUP_G_STACK) && strcmp(user->stack, "ltx") != 0))
		return false;
	return !(user->given & VF_SETUP_G_MODE) || user->mode == VF_MODE_LORA || user->mode == VF_MODE_FULL;
}

vf_status vf_est_tier_setup(const struct vf_setup *user, const struct vf_gpu_spec *gpu, int count,
			    struct vf_setup *out, char *what, size_t wl, struct vf_error *err)
{
	struct vf_gpu_set gs;
	struct vf_tier tier;
	char spec[48];
	snprintf(spec, sizeof spec, "%s:%d", gpu->id, count > 0 ? count : 1);
	vf_gpu_set_init(&gs);
	vf_status st = vf_gpu_set_add_spec(&gs, spec, err);
	if (st == VF_OK)
		st = vf_tier_decide(&gs, NULL, NULL, &tier, err);
	vf_gpu_set_release(&gs);
	if (st)
		return st;
	bool full = (user->given & VF_SETUP_G_MODE) && user->mode == VF_MODE_FULL;
	struct vf_yamldoc *doc = NULL;
	char from[256];
	cJSON *cfg = NULL;
	if ((st = vf_sweepfit_start(NULL, tier.mode, tier.config, NULL, NULL, full, &doc, from, sizeof from, err)) ||
	    (st = vf_profile_part(VF_PROFILE_DEFAULT, "configs", &cfg, err))) {
		vf_yamldoc_free(doc);
		return st;
	}
	struct vf_ltx2_config lc;
	int gpus = (user->given & VF_SETUP_G_GPUS) ? user->gpus : count > 0 ? count : 1;
	if ((st = vf_sweepfit_config(cfg, doc, gpus, &lc, err)) == VF_OK)
		st = vf_setup_from_ltx2(&lc, out, err);
	if (st == VF_OK)
		snprintf(what, wl, "%s %s: %s%s (%s, %s, rank %d, %dx%dx%d, text encoder %s, optimizer %s during "
			 "validation)", gpu->id, tier.name, tier.config, full ? " with the full fine-tune's settings" : "",
			 lc.quantization ? lc.quantization : "no quantization", lc.optimizer_type, lc.lora_rank,
			 lc.video_dims[0], lc.video_dims[1], lc.video_dims[2],
			 lc.load_text_encoder_in_8bit ? "in 8-bit" : "in bf16",
			 lc.offload_optimizer_during_validation ? "offloaded" : "kept");
	vf_yamldoc_free(doc);
	cJSON_Delete(cfg);
	if (st)
		return st;
	if (user->given & VF_SETUP_G_SHARD) {
		out->shard = user->shard;
		out->given |= VF_SETUP_G_SHARD;
	}
	if (user->given & VF_SETUP_G_CONTEXT)
		out->context_bytes = user->context_bytes;
	if (user->given & VF_SETUP_G_ATTENTION)
		out->attention = user->attention;
	if (user->given & VF_SETUP_G_AUDIO)
		out->audio = user->audio;
	out->given |= user->given & (VF_SETUP_G_CONTEXT | VF_SETUP_G_ATTENTION | VF_SETUP_G_AUDIO);
	return VF_OK;
}
