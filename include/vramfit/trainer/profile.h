/* profile.h - trainer profiles: policy as data (DESIGN.md convention 9).
 * A profile is a directory data/profiles/<trainer>/ of JSON parts, each read
 * by the module it concerns:
 *   tiers.json   VRAM tiers and the gate (tier.c)
 *   configs.json config families, patched keys, launch commands, where the
 *                schema is read in the checkout, the version written against
 *                (plan.c, check.c, checkout.c)
 *   sweep.json   autotune order, changes and stop rules (tune.c)
 *   logs.json    log patterns, outcome classes and remedies (trial.c)
 * A second trainer is a new directory, not new code. */
#ifndef VRAMFIT_PROFILE_H
#define VRAMFIT_PROFILE_H

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"

#define VF_PROFILE_DEFAULT "ltx2"

/* Load data/profiles/<trainer>/<part>.json (overridable like all data).
 * Caller owns *out; cJSON_Delete(). */
vf_status vf_profile_part(const char *trainer, const char *part, cJSON **out,
			  struct vf_error *err);

#endif
