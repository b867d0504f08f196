/* pipeline.h - a diffusers pipeline folder (model_index.json and its
 * component folders, model.h) as one training run: the denoiser it trains
 * (a transformer or a UNet, LoRA or full) with the text encoders and the
 * VAE as trainers load them - frozen, in the run's weight precision, kept
 * on the GPU through the step unless the embeddings or latents are
 * precomputed (the LTX-2 trainer's way) - and the tokens of a sample
 * through the pipeline's own VAE compression and the denoiser's patch. */
#ifndef VRAMFIT_PIPELINE_H
#define VRAMFIT_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "vramfit/base/error.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/model/model.h"

struct vf_pipeline_opts {
	const char *train;           /* the component trained; NULL: "transformer", else "unet" */
	bool precomputed_embeddings; /* text and image encoders not loaded in the step */
	bool precomputed_latents;    /* the VAE not loaded in the step (its decoder still validates) */
};

/* One component's role in the run. */
enum vf_pipeline_role {
	VF_ROLE_TRAINED,      /* the denoiser trained */
	VF_ROLE_ENCODER,      /* a text or image encoder, frozen */
	VF_ROLE_VAE,          /* the VAE, frozen */
	VF_ROLE_NOT_LOADED,   /* another denoiser (Wan 2.2's second expert), or anything else */
};

#define VF_PIPELINE_MAX 32

struct vf_pipeline {
	const struct vf_model *denoiser; /* borrowed from the model */
	struct {
		const struct vf_model *m;  /* borrowed */
		enum vf_pipeline_role role;
		bool resident;             /* kept on the GPU through the training step */
	} parts[VF_PIPELINE_MAX];
	size_t nparts;
	char about[1024];                /* what was assumed, one sentence a line */
};

/* Whether m is a pipeline folder (components) with a denoiser to train. */
bool vf_pipeline_is(const struct vf_model *m);

/* Pick the denoiser and the role of every component; fill d (the
 * denoiser's layout, the encoders and VAE as loaded). Fails (VF_EUSAGE)
 * naming the components when --train names none, or when the denoiser's
 * class is not understood (VF_ERR, naming it). */
vf_status vf_pipeline_plan(const struct vf_model *m, const struct vf_pipeline_opts *o,
			   struct vf_pipeline *p, struct vf_dit *d, struct vf_error *err);

/* "trained", "encoder (frozen)", ... */
const char *vf_pipeline_role_name(enum vf_pipeline_role r);

#endif
