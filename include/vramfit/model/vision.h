/* vision.h - vision and video models from one config.json: ViT encoders
 * (CLIP / OpenCLIP-in-transformers / SigLIP: both towers or one),
 * LLaVA-style VLMs (vision_config + text_config + projector) and diffusion
 * transformers from a diffusers transformer/config.json (PixArt, Latte,
 * Flux, LTX-Video). Parameters are counted exactly from the layout each
 * family's public modelling code builds (lib/model/vision.c documents each
 * term); the tokens an image or clip becomes follow each family's rule.
 *
 * Keys that bear on size and are not understood are named in `unknown`
 * (the count is then approximate), never silently ignored. */
#ifndef VRAMFIT_MODEL_VISION_H
#define VRAMFIT_MODEL_VISION_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"
#include "vramfit/model/arch.h"

#define VF_VISION_MAX_PARTS 4

/* One part of the model (a tower, the projector, the language model, the
 * transformer) and whether it is trained in each stage of the usual
 * recipe (VLMs: stage 1 = alignment pretraining, stage 2 = fine-tuning;
 * others: one stage). */
struct vf_vision_part {
	char name[24];
	int64_t params;
	int64_t layers, hidden, heads, ffn; /* 0 where not a transformer stack */
	int64_t tokens;                     /* tokens one input gives this part */
	bool trained[2];
};

/* One resolution level of a UNet (diffusers.c): its latent pixels are
 * the full-resolution latent's divided by `div` (1, 4, 16, ...), at
 * `width` channels; `resnets` residual blocks and `attn_blocks`
 * transformer blocks run there (down, mid and up passes together). */
struct vf_vision_level {
	int64_t div, width, resnets, attn_blocks, params;
};

#define VF_VISION_MAX_LEVELS 8

struct vf_vision {
	char kind[8];              /* "vit" | "clip" | "vlm" | "dit" | "unet" | "vae" | "unknown" */
	char family[24];           /* "clip", "siglip", "llava", "pixart", "latte", "flux", "ltx-video",
				      "wan", "unet2d", "autoencoder-kl"; the _class_name when
				      kind is "unknown" (not understood, params 0) */
	int64_t params;            /* all parts */
	struct vf_vision_part parts[VF_VISION_MAX_PARTS];
	int nparts;
	int stages;                /* 1 or 2 */
	/* images: size, patch, tokens per image (class token included) */
	int64_t image_size, patch_size, image_tokens;
	bool class_token;
	/* diffusion transformers: the latent grid */
	int64_t in_channels;
	int64_t text_dim, text_tokens;   /* caption context width and tokens */
	int64_t frames;                  /* default clip length (1 for images) */
	int spatial_compression;         /* pixels per token side: VAE x patch */
	int temporal_compression;        /* frames per latent frame after the first (1: each) */
	int64_t dit_layers;              /* blocks a token passes (both kinds for Latte/Flux) */
	struct vf_vision_level levels[VF_VISION_MAX_LEVELS]; /* a UNet's (kind "unet") */
	int nlevels;
	int64_t latent_channels;         /* a VAE's latent channels (kind "vae") */
	bool has_lm;
	struct vf_arch lm;               /* VLM: the language model (text_config) */
	char unknown[256];               /* size-bearing keys not understood, ", "-joined */
	char assumed[256];               /* defaults used for keys the file leaves out */
};

/* Whether a config.json is one of these (by model_type or _class_name). */
bool vf_vision_config_is(const cJSON *cfg);

/* Read and count. Errors (VF_ERR) name `what`, the field and the problem. */
vf_status vf_vision_from_config(const cJSON *cfg, const char *what, struct vf_vision *v,
				struct vf_error *err);

/* Tokens of one input: an image of w x h pixels (ViT: the config's size;
 * VLM: the vision tower's), or a clip of `frames` frames (DiT; 0 = the
 * model's default). */
int64_t vf_vision_tokens(const struct vf_vision *v, int w, int h, int frames);

/* The inspect --json "architecture" object. Caller owns. */
cJSON *vf_vision_to_json(const struct vf_vision *v);

#endif
