/* estimate-tier.h - `vramfit estimate` of the trainer's own model (issue 29
 * item 2): on each GPU the setup of that GPU's tier config, as plan picks
 * it (tier.c, the profile's starting configs: sweepfit.h), with the knobs
 * the flags set laid over it (estimate-tier.c). */
#ifndef VF_ESTIMATE_TIER_H
#define VF_ESTIMATE_TIER_H

#include <stdbool.h>
#include <stddef.h>

#include "vramfit/base/error.h"
#include "vramfit/estimate/setup.h"
#include "vramfit/gpu/gpu.h"

/* Whether catalog id names a model of the trainer profile (configs.json
 * model_ids). */
bool vf_est_tier_model(const char *id);

/* Whether the flags leave the setup to the tier: training (lora or full,
 * or no --mode) under the trainer's stack (no other --stack, no stack
 * mechanism flag). */
bool vf_est_tier_wanted(const struct vf_setup *user);

/* The setup of gpu x count under its tier's config, with the knobs the
 * user's flags set laid over it (--quant, --video, --optimizer, ...: the
 * tier's config changed in those alone) and the user's --mode full,
 * --gpus/--shard, --context-mib, --attention and --audio on top. *what:
 * "32GB tier: t2v_lora_low_vram.yaml (int8-quanto, adamw8bit, rank 16,
 * 576x576x49, ...)", then "; with your --quant" when flags set knobs;
 * *over: those knobs' VF_SETUP_G_* bits (vf_setup_flag names them). */
vf_status vf_est_tier_setup(const struct vf_setup *user, const struct vf_gpu_spec *gpu, int count,
			    struct vf_setup *out, char *what, size_t wl, unsigned *over,
			    struct vf_error *err);

#endif
