/* ckpt.h - what an LTX checkpoint file holds, read from its safetensors
 * header, never from its name: which components (transformer, video VAE,
 * audio VAE, text encoder) by tensor-name prefixes and the `config` JSON of
 * `__metadata__` (its sections), and which model version (`model_version`,
 * the transformer's `_class_name` / version fields) mapped to a catalog id.
 * A unified checkpoint holds everything; a split pack is a transformer file
 * with its VAE files beside it. The prefixes, sections and version rules are
 * profile data (configs.json "checkpoint"). */
#ifndef VRAMFIT_CKPT_H
#define VRAMFIT_CKPT_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"

enum vf_ckpt_part { VF_CKPT_TRANSFORMER, VF_CKPT_VIDEO_VAE, VF_CKPT_AUDIO_VAE, VF_CKPT_TEXT_ENCODER, VF_CKPT_NPARTS };

struct vf_ckpt {
	bool has[VF_CKPT_NPARTS];
	int64_t params;            /* every tensor */
	int64_t data_bytes;
	char version[64];          /* "2.3.0", "" when the file does not say */
	char version_from[128];    /* "__metadata__ model_version", "config.transformer._class_name" */
	char model_id[32];         /* catalog id from the version rules, "" when none matched */
	char model_name[64];       /* "LTX-2.3" */
};

/* "transformer", "video VAE", ... Borrowed, static. */
const char *vf_ckpt_part_name(enum vf_ckpt_part p);

/* True when the file holds only VAE parts (no transformer). */
bool vf_ckpt_is_vae_only(const struct vf_ckpt *c);

/* Read path's header and classify it with rules (configs.json "checkpoint").
 * Errors: not a valid safetensors file (the message names it). */
vf_status vf_ckpt_read(const char *path, const cJSON *rules, struct vf_ckpt *out, struct vf_error *err);

#endif
