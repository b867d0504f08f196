/* tier.h - the trainer's VRAM tiers: which tier a set of GPUs falls in and
 * which shipped config it starts from. The policy (thresholds, names,
 * configs, messages) is data: data/profiles/<trainer>/tiers.json. The
 * smallest GPU decides; below the gate the answer is "stop" unless the user
 * passes the profile's flag (the plan command enforces it). */
#ifndef VRAMFIT_TIER_H
#define VRAMFIT_TIER_H

#include <stdbool.h>

#include "vramfit/base/error.h"
#include "vramfit/gpu/gpu.h"

#define VF_TIER_MODE_MAX 48

struct vf_tier {
	char name[32];            /* "32GB tier", "40–60GB tier", "80GB+ tier", or the gate's "(gate)" */
	int per_gpu_gb;           /* nominal GB class of the smallest GPU */
	int gpu_count;
	bool gated;               /* below the trainer's minimum: stop by default */
	char config[128];         /* shipped config file name: "t2v_lora.yaml" */
	char config_path[192];    /* relative to the trainer package: "configs/t2v_lora.yaml" */
	char note[512];           /* the tier's note; with the gap note when between tiers */
	char gate_message[1024];  /* when gated: the message with options (a) and (b) */
	/* Added by the probe module. */
	char gate_flag[32];       /* the explicit flag that accepts option (b): "--try-anyway" */
	char mode[VF_TIER_MODE_MAX]; /* "t2v", "i2v", "video_outpainting" */
	char range[32];           /* the tier's VRAM range in words: "40–60 GB" */
	bool gap;                 /* the GPU is between two tiers and took the lower one */
	int smallest;             /* index in the set of the GPU that decided */
	char reason[768];         /* one sentence: the tier and why */
};

/* Decide the tier of gpus for trainer's profile (NULL = VF_PROFILE_DEFAULT)
 * and mode ("t2v", "i2v"; NULL = the profile's default_mode). A profile
 * whose "modes" is "from_checkout" accepts any plain name: the plan checks it
 * against the checkout's config families.
 * VF_ENOTFOUND with no GPUs; VF_EUSAGE for an unknown mode; VF_ERR when the
 * smallest GPU's memory is unknown or the profile is malformed (the message
 * names tiers.json and the field). */
/* Whether trainer's profile takes its modes from the trainer checkout (any
 * plain name passes vf_tier_decide, unchecked until the plan reads the
 * checkout's configs/). */
bool vf_tier_modes_from_checkout(const char *trainer);

vf_status vf_tier_decide(const struct vf_gpu_set *gpus, const char *trainer, const char *mode,
			 struct vf_tier *out, struct vf_error *err);

/* Check that trainer's profile (NULL = VF_PROFILE_DEFAULT) loads and knows
 * mode (NULL = its default), without any GPU: VF_EUSAGE for an unknown mode
 * or an invalid name, VF_ENOTFOUND for a missing profile, VF_ERR for a
 * malformed one. */
vf_status vf_tier_check(const char *trainer, const char *mode, struct vf_error *err);

#endif
