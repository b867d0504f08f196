/* plan_estimate.c - what the LTX-2 estimate reads from a run config besides
 * the training keys: the validation phase (validation.interval,
 * inference_steps, video_dims, the guidance scales as passes per step), the
 * strategy's audio stream, and
 * the training size from the preprocessing's resolution buckets (plan.h). */
#include "vramfit/trainer/plan.h"

#include <stdio.h>
#include <string.h>

#include "vramfit/estimate/setup.h"

/* A number under validation.<key>, or def when absent or not a number. */
static double val_num(const struct vf_yamldoc *d, const char *key, double def)
{
	char path[96];
	snprintf(path, sizeof path, "validation.%s", key);
	double v;
	return vf_yaml_node_double(vf_yamldoc_find(d, path), &v) ? v : def;
}

static bool val_bool(const struct vf_yamldoc *d, const char *key, bool def)
{
	char path[96];
	snprintf(path, sizeof path, "validation.%s", key);
	bool v;
	return vf_yaml_node_bool(vf_yamldoc_find(d, path), &v) ? v : def;
}

void vf_plan_ltx2_validation(const struct vf_yamldoc *d, struct vf_ltx2_config *lc)
{
	const struct vf_yaml_node *iv = vf_yamldoc_find(d, "validation.interval");
	/* the trainer's default is 100; null disables validation */
	lc->validation_disabled = iv && vf_yaml_node_kind(iv) == VF_YAML_NULL;
	int64_t steps = 0;
	if (vf_yaml_node_int(vf_yamldoc_find(d, "validation.inference_steps"), &steps) && steps >= 1 &&
	    steps <= 10000)
		lc->inference_steps = (int)steps;
	/* ValidationConfig's defaults: CFG 3 (video) / 7 (audio), STG 1 / 1,
	 * modality 3 / 3, both modalities generated */
	bool video = val_bool(d, "generate_video", true), audio = val_bool(d, "generate_audio", true);
	/* older trainers: one guidance_scale and one stg_scale for both */
	double cfg = val_num(d, "guidance_scale", -1), stgs = val_num(d, "stg_scale", -1);
	bool uncond = (video && val_num(d, "video_cfg_scale", cfg >= 0 ? cfg : 3.0) != 1.0) ||
		      (audio && val_num(d, "audio_cfg_scale", cfg >= 0 ? cfg : 7.0) != 1.0);
	bool stg = (video && val_num(d, "video_stg_scale", stgs >= 0 ? stgs : 1.0) != 0.0) ||
		   (audio && val_num(d, "audio_stg_scale", stgs >= 0 ? stgs : 1.0) != 0.0);
	const struct vf_yaml_node *sb = vf_yamldoc_find(d, "validation.stg_blocks");
	if (sb && vf_yaml_node_kind(sb) == VF_YAML_SEQ && vf_yaml_node_count(sb) == 0)
		stg = false; /* no block perturbed */
	bool modality = video && audio &&
			(val_num(d, "video_modality_guidance_scale", 3.0) != 1.0 ||
			 val_num(d, "audio_modality_guidance_scale", 3.0) != 1.0);
	lc->guidance_passes = 1 + uncond + stg + modality;
	/* no prompt to embed: the text encoder is never loaded */
	const struct vf_yaml_node *sm = vf_yamldoc_find(d, "validation.samples");
	if (!sm)
		sm = vf_yamldoc_find(d, "validation.prompts"); /* older trainers */
	lc->no_validation_prompts = !sm || vf_yaml_node_count(sm) == 0;
	/* the training strategy's audio stream: the flexible strategy has one
	 * only with an `audio` modality (generated or conditioning: its tokens
	 * pass the blocks either way; FlexibleStrategyConfig.audio defaults to
	 * None); the older strategies unless with_audio: false */
	bool b;
	const char *name = vf_yaml_node_str(vf_yamldoc_find(d, "training_strategy.name"));
	if (name && strcmp(name, "flexible") == 0)
		lc->no_audio = !vf_yamldoc_find(d, "training_strategy.audio");
	else if (vf_yaml_node_bool(vf_yamldoc_find(d, "training_strategy.with_audio"), &b) && !b)
		lc->no_audio = true;
}

vf_status vf_plan_largest_bucket(const char *buckets, int dims[3], struct vf_error *err)
{
	dims[0] = dims[1] = dims[2] = 0;
	if (!buckets || !buckets[0])
		return vf_error_set(err, VF_EUSAGE, "--resolution-buckets: expected WxHxF[;WxHxF...], got ''");
	double best = -1;
	const char *p = buckets;
	while (*p) {
		const char *end = strchr(p, ';');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char one[64];
		if (n == 0 || n >= sizeof one)
			return vf_error_set(err, VF_EUSAGE, "--resolution-buckets: expected WxHxF[;WxHxF...], got '%s'",
					    buckets);
		memcpy(one, p, n);
		one[n] = 0;
		/* the setup's own WxHxF reader (bounds and trailing text) */
		struct vf_setup s;
		vf_setup_defaults(&s);
		if (vf_setup_set(&s, "video", one, err) != VF_OK)
			return vf_error_set(err, VF_EUSAGE, "--resolution-buckets: bucket '%s': expected "
					    "WIDTHxHEIGHTxFRAMES (e.g. 960x544x49)", one);
		double vol = (double)s.video_width * s.video_height * (1 + (s.video_frames - 1) / 8);
		if (vol > best) {
			best = vol;
			dims[0] = s.video_width;
			dims[1] = s.video_height;
			dims[2] = s.video_frames;
		}
		p += n + (end ? 1 : 0);
	}
	return VF_OK;
}
