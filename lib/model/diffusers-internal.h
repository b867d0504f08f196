/* diffusers-internal.h - the diffusers config readers of diffusers.c,
 * reached through vision.h's vf_vision_from_config. Not installed. */
#ifndef VRAMFIT_DIFFUSERS_INTERNAL_H
#define VRAMFIT_DIFFUSERS_INTERNAL_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "vramfit/model/vision.h"

/* A diffusers model config: it names its class (_class_name). */
bool vf__diffusers_config_is(const cJSON *cfg);

/* Count the classes diffusers.c knows; any other class is described as
 * kind "unknown" with the class named in v->unknown (no count). Errors
 * (VF_ERR) name `what`, the field and what was expected. */
vf_status vf__diffusers_from_config(const cJSON *cfg, const char *what, struct vf_vision *v,
				    struct vf_error *err);

#endif
