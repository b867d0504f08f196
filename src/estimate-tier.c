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
	/* another stack named, or one of its mechanisms set: the user's own
	 * setup (the tier's runs under the trainer's stack, data/stacks/ltx.json) */
	if (user->stack_given || ((user->given & VF_SETUP_G_STACK) && strcmp(user->stack, "ltx") != 0))
		return false;
	return !(user->given & VF_SETUP_G_MODE) || user->mode == VF_MODE_LORA || user->mode == VF_MODE_FULL;
}

/* The knobs a flag can set over the tier's config. */
#define OVER_KNOBS                                                                                        \
	(VF_SETUP_G_PRECISION | VF_SETUP_G_OPTIMIZER | VF_SETUP_G_OPTIMIZER_IMPL | VF_SETUP_G_BATCH |     \
	 VF_SETUP_G_GRAD_ACCUM | VF_SETUP_G_GRAD_CKPT | VF_SETUP_G_LORA_RANK | VF_SETUP_G_LORA_ALPHA |    \
	 VF_SETUP_G_LORA_TARGETS | VF_SETUP_G_QUANT | VF_SETUP_G_VIDEO | VF_SETUP_G_TEXT_ENCODER |        \
	 VF_SETUP_G_OFFLOAD | VF_SETUP_G_VALIDATION | VF_SETUP_G_GRAD_CLIP | VF_SETUP_G_ZERO_GRAD)

/* The knobs the user's flags set, laid over the tier's config in *out;
 * returns their VF_SETUP_G_* bits. */
static unsigned overlay(const struct vf_setup *u, struct vf_setup *out)
{
	unsigned g = u->given & OVER_KNOBS;
	if (g & VF_SETUP_G_PRECISION)
		out->precision = u->precision;
	if (g & VF_SETUP_G_OPTIMIZER)
		out->optimizer = u->optimizer;
	if (g & VF_SETUP_G_OPTIMIZER_IMPL)
		out->optimizer_impl = u->optimizer_impl;
	if (g & VF_SETUP_G_BATCH)
		out->batch = u->batch;
	if (g & VF_SETUP_G_GRAD_ACCUM)
		out->grad_accum = u->grad_accum;
	if (g & VF_SETUP_G_GRAD_CKPT) {
		out->grad_ckpt = u->grad_ckpt;
		out->ckpt_every = u->ckpt_every;
		out->ckpt_selective_op = u->ckpt_selective_op;
		out->ckpt_reentrant = u->ckpt_reentrant;
	}
	if (g & VF_SETUP_G_LORA_RANK)
		out->lora_rank = u->lora_rank;
	if (g & VF_SETUP_G_LORA_ALPHA)
		out->lora_alpha = u->lora_alpha;
	if (g & VF_SETUP_G_LORA_TARGETS) {
		out->lora_targets = u->lora_targets;
		memcpy(out->lora_target_names, u->lora_target_names, sizeof out->lora_target_names);
	}
	if (g & VF_SETUP_G_QUANT) {
		out->quant = u->quant;
		out->quant_format = u->quant_format;
	}
	if (g & VF_SETUP_G_VIDEO) {
		out->video_width = u->video_width;
		out->video_height = u->video_height;
		out->video_frames = u->video_frames;
		/* validation at the training size unless --validation says
		 * (estimate's default; fit sets validation.video_dims to --video) */
		out->val_width = out->val_height = out->val_frames = 0;
	}
	if (g & VF_SETUP_G_TEXT_ENCODER)
		out->text_encoder = u->text_encoder;
	if (g & VF_SETUP_G_OFFLOAD)
		out->offload_optimizer = u->offload_optimizer;
	if (g & VF_SETUP_G_VALIDATION) {
		out->validation_off = u->validation_off;
		out->val_width = u->val_width, out->val_height = u->val_height, out->val_frames = u->val_frames;
		out->val_steps = u->val_steps, out->val_passes = u->val_passes;
	}
	if (g & VF_SETUP_G_GRAD_CLIP)
		out->grad_clip = u->grad_clip;
	if (g & VF_SETUP_G_ZERO_GRAD)
		out->grads_zeroed = u->grads_zeroed;
	out->given |= g;
	return g;
}

vf_status vf_est_tier_setup(const struct vf_setup *user, const struct vf_gpu_spec *gpu, int count,
			    struct vf_setup *out, char *what, size_t wl, unsigned *over,
			    struct vf_error *err)
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
	*over = st == VF_OK ? overlay(user, out) : 0;
	char flags[200];
	vf_setup_flags_words(*over, flags, sizeof flags);
	if (st == VF_OK)
		snprintf(what, wl, "%s %s: %s%s (%s, %s, rank %d, %dx%dx%d, text encoder %s, optimizer %s during "
			 "validation)%s%s", gpu->id, tier.name, tier.config,
			 full ? " with the full fine-tune's settings" : "",
			 lc.quantization ? lc.quantization : "no quantization", lc.optimizer_type, lc.lora_rank,
			 lc.video_dims[0], lc.video_dims[1], lc.video_dims[2],
			 lc.load_text_encoder_in_8bit ? "in 8-bit" : "in bf16",
			 lc.offload_optimizer_during_validation ? "offloaded" : "kept",
			 flags[0] ? "; with your " : "", flags[0] ? flags : "");
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
