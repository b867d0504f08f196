/* plan_internal.h - what plan.c shares with plan_checkout.c (not public). */
#ifndef VRAMFIT_PLAN_INTERNAL_H
#define VRAMFIT_PLAN_INTERNAL_H

#include <cjson/cJSON.h>

#include "vramfit/base/buf.h"
#include "vramfit/trainer/plan.h"

/* Pick the mode's config file in the checkout for p->tier: the tier's own
 * file when it ships, else the mode's standard file plus the trainer's
 * low-VRAM deltas (p->deltas). Sets p->shipped_config, p->mode_what,
 * p->mode_strategy, p->trainer_version. VF_EUSAGE for a mode the checkout
 * does not ship (the message lists the modes). */
vf_status vf__plan_choose_config(struct vf_plan *p, const cJSON *cfg, struct vf_error *err);

/* Know the trainer, or say no: the checkout's schema (configs.json
 * "schema") must have every key the profile writes or relies on
 * ("identity.required_keys", e.g. model.model_path, training_strategy).
 * VF_ERR, one line naming the missing keys and the trainer found
 * (vf_checkout_describe), when it lacks any, when its schema file names no
 * such class, or when the profile's schema file is absent but another
 * trainer's is there ("identity.other_schemas", e.g. src/ltxv_trainer/
 * config.py). A checkout with no Python source at all (configs only), or a
 * schema Python cannot parse (check reports it), is not refused here. */
vf_status vf__plan_know_trainer(const struct vf_plan *p, const cJSON *cfg, struct vf_error *err);

/* plan.md lines about the trainer checkout, the low-VRAM deltas and the
 * mode's data directories. */
void vf__plan_md_trainer(struct vf_buf *b, const struct vf_plan *p);
void vf__plan_md_data(struct vf_buf *b, const struct vf_plan *p, const cJSON *cfg);

/* The trainer's preprocessing command for the plan (plan_commands.c):
 * the profile's configs.json "preprocess" templates filled with the run's
 * dataset file, the resolution buckets (buckets, else p->train_dims), the
 * model paths (the VAE files too for a split pack), the trigger word when
 * given, and the GPU count; every value shell-quoted. Sets p->preprocess*
 * ("" when the profile has no "preprocess"); VF_ERR when it does not fit. */
vf_status vf__plan_preprocess(struct vf_plan *p, const cJSON *cfg, const char *buckets, const char *trigger,
			      struct vf_error *err);

/* plan.md's "### Run by Hand" (the end of "## Approve to Proceed": TRAINER.md
 * section 7 fixes the ## sections): the preprocessing, tune and launch
 * commands, in order, to paste into a shell. */
void vf__plan_md_commands(struct vf_buf *b, const struct vf_plan *p, const cJSON *cfg);

/* The --json parts about the checkout. */
void vf__plan_json_trainer(cJSON *o, const struct vf_plan *p);

/* The predicted autotune sweep of the run's config on its GPU
 * (plan_sweep.c): p->sweep, or p->sweep_note saying why there is none;
 * plan.md's table and the --json object. */
void vf__plan_predict_sweep(struct vf_plan *p, const cJSON *cfg);
void vf__plan_md_sweep(struct vf_buf *b, const struct vf_plan *p);
cJSON *vf__plan_json_sweep(const struct vf_plan *p);

#endif
