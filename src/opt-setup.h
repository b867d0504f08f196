/* opt-setup.h - the setup flags (what runs: mode, precision, optimizer,
 * batch, LoRA, sharding, the model split, the training stack) as one option
 * table, included by every verb that takes them (estimate, fit). Each row
 * hands its value by name to vf_setup_set() (lib/estimate/setup.c). */
#ifndef VF_OPT_SETUP_H
#define VF_OPT_SETUP_H

#include "parse-options.h"

/* Rows relative to a struct vf_setup. */
extern const struct vf_option vf_setup_options[];

/* Callbacks shared by verbs: a positive count ("1e9", "22B", "500M") into
 * a double field; a whole count of steps into an int64_t field. */
vf_status vf_opt_count(const struct vf_option *o, const char *v, void *base, struct vf_error *err);
vf_status vf_opt_steps(const struct vf_option *o, const char *v, void *base, struct vf_error *err);

#endif
