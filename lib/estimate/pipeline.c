/* pipeline.c - a diffusers pipeline folder as one training run
 * (pipeline.h): which component trains, which are loaded frozen, and the
 * vf_dit the estimator runs on. */
#include "vramfit/estimate/pipeline.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void say(struct vf_pipeline *p, const char *fmt, ...)
{
	size_t len = strlen(p->about);
	if (len + 3 >= sizeof p->about)
		return;
	if (len)
		len += (size_t)snprintf(p->about + len, sizeof p->about - len, "\n");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->about + len, sizeof p->about - len, fmt, ap);
	va_end(ap);
}

static bool is_denoiser(const struct vf_model *c)
{
	if (c->has_ltx)
		return true;
	return c->has_vision && (strcmp(c->vision.kind, "dit") == 0 || strcmp(c->vision.kind, "unet") == 0);
}

/* A component named like a denoiser (its class may not be understood). */
static bool named_denoiser(const char *n)
{
	return strncmp(n, "transformer", 11) == 0 || strncmp(n, "unet", 4) == 0;
}

static const struct vf_model *find(const struct vf_model *m, const char *name)
{
	for (size_t i = 0; i < m->ncomponents; i++)
		if (strcmp(m->components[i]->name, name) == 0)
			return m->components[i];
	return NULL;
}

static const struct vf_model *default_denoiser(const struct vf_model *m)
{
	const char *names[] = {"transformer", "unet"};
	for (size_t i = 0; i < 2; i++)
		if (find(m, names[i]))
			return find(m, names[i]);
	for (size_t i = 0; i < m->ncomponents; i++)
		if (is_denoiser(m->components[i]) || named_denoiser(m->components[i]->name))
			return m->components[i];
	return NULL;
}

bool vf_pipeline_is(const struct vf_model *m)
{
	const struct vf_model *d = m->ncomponents ? default_denoiser(m) : NULL;
	return d && !d->has_ltx; /* an LTX-2 folder keeps its own path (ltx.h) */
}

const char *vf_pipeline_role_name(enum vf_pipeline_role r)
{
	switch (r) {
	case VF_ROLE_TRAINED: return "trained";
	case VF_ROLE_ENCODER: return "encoder (frozen)";
	case VF_ROLE_VAE: return "vae (frozen)";
	default: return "not loaded";
	}
}

static enum vf_pipeline_role role_of(const struct vf_model *c, const struct vf_model *den)
{
	if (c == den)
		return VF_ROLE_TRAINED;
	if (strncmp(c->name, "text_encoder", 12) == 0 || strcmp(c->name, "image_encoder") == 0)
		return VF_ROLE_ENCODER;
	if (strcmp(c->name, "vae") == 0)
		return VF_ROLE_VAE;
	return VF_ROLE_NOT_LOADED;
}

static const char *class_of(const struct vf_model *c)
{
	if (c->has_vision)
		return c->vision.family;
	if (c->has_arch && c->arch.task[0])
		return c->arch.task;
	return c->has_arch ? c->arch.family : "?";
}

/* The encoders: their total and embedding tables, frozen. */
static void plan_encoders(struct vf_pipeline *p, const struct vf_pipeline_opts *o, struct vf_dit *d)
{
	int64_t te = 0, emb = 0;
	int n = 0;
	for (size_t i = 0; i < p->nparts; i++) {
		const struct vf_model *c = p->parts[i].m;
		if (p->parts[i].role != VF_ROLE_ENCODER)
			continue;
		if (c->params <= 0) {
			say(p, "%s (%s) not counted: its class is not understood", c->name, class_of(c));
			continue;
		}
		te += c->params;
		if (c->has_arch && c->has_groups)
			emb += c->groups.embedding;
		p->parts[i].resident = !o->precomputed_embeddings;
		n++;
	}
	d->text_encoder_params = te;
	d->text_encoder_embedding = emb;
	d->resident_te_params = o->precomputed_embeddings ? 0 : te;
	d->resident_te_embedding = o->precomputed_embeddings ? 0 : emb;
	if (n)
		say(p, o->precomputed_embeddings
			       ? "%d encoder(s), %.2fB: embeddings precomputed, not loaded in the step (loaded alone "
				 "for the validation prompts)"
			       : "%d encoder(s), %.2fB: frozen, kept on the GPU through the step in the weight "
				 "precision (bf16 unless --precision fp32; --text-encoder int8 quantizes them); "
				 "--precomputed-embeddings to drop them",
		    n, (double)te / 1e9);
}

/* The VAE: its size, decoder and encoder widths, compression. */
static void plan_vae(struct vf_pipeline *p, const struct vf_pipeline_opts *o, struct vf_dit *d,
		     const struct vf_vision *den)
{
	const struct vf_model *vae = NULL;
	size_t vi = 0;
	for (size_t i = 0; i < p->nparts; i++)
		if (p->parts[i].role == VF_ROLE_VAE) {
			vae = p->parts[i].m;
			vi = i;
		}
	if (!vae)
		return;
	if (vae->params <= 0) {
		say(p, "vae (%s) not counted: its class is not understood and it has no weights here", class_of(vae));
		return;
	}
	bool known = vae->has_vision && strcmp(vae->vision.kind, "vae") == 0;
	const struct vf_vision *v = &vae->vision;
	int64_t patch = known && v->patch_size > 1 ? v->patch_size : 1;
	d->vae_params = known ? v->parts[1].params : vae->params;
	d->vae_decoder_channels = known ? v->parts[1].hidden / (patch * patch) : 128;
	d->resident_vae_params = o->precomputed_latents ? 0 : vae->params;
	d->vae_encoder_channels = o->precomputed_latents ? 0 : known ? v->parts[0].hidden / (patch * patch) : 128;
	p->parts[vi].resident = !o->precomputed_latents;
	if (known && (strcmp(den->family, "wan") == 0 || strcmp(den->family, "wan-vace") == 0)) {
		int64_t pd = den->patch_size > 0 ? den->patch_size : 2;
		d->spatial_compression = (int)(v->spatial_compression * pd);
		d->temporal_compression = v->temporal_compression;
	} else if (known && strcmp(den->kind, "unet") == 0) {
		d->spatial_compression = v->spatial_compression;
	}
	say(p, "vae %s, %.1fM: %s; a latent token per %d px (its %dx compression, the denoiser's patch)%s",
	    known ? v->family : class_of(vae),
	    (double)vae->params / 1e6,
	    o->precomputed_latents ? "latents precomputed, only the decoder loaded for validation"
				   : "frozen, kept on the GPU, encodes each sample in the step (--precomputed-latents "
				     "to drop it)",
	    d->spatial_compression, known ? v->spatial_compression : d->spatial_compression,
	    known ? "" : " (not understood: decoder size and width assumed)");
}

vf_status vf_pipeline_plan(const struct vf_model *m, const struct vf_pipeline_opts *o,
			   struct vf_pipeline *p, struct vf_dit *d, struct vf_error *err)
{
	memset(p, 0, sizeof *p);
	const struct vf_model *den = o->train ? find(m, o->train) : default_denoiser(m);
	if (!den) {
		char names[512] = "";
		for (size_t i = 0; i < m->ncomponents; i++) {
			size_t len = strlen(names);
			snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", m->components[i]->name);
		}
		return vf_error_set(err, VF_EUSAGE, "%s: no component '%s' to train (components: %s)", m->path,
				    o->train ? o->train : "transformer or unet", names);
	}
	if (!den->has_vision || !is_denoiser(den))
		return vf_error_set(err, VF_ERR, "%s: the %s component (%s) is not understood as a denoiser: no "
					 "estimate (inspect names what is not understood)",
				    m->path, den->name, class_of(den));
	p->denoiser = den;
	for (size_t i = 0; i < m->ncomponents && p->nparts < VF_PIPELINE_MAX; i++) {
		p->parts[p->nparts].m = m->components[i];
		p->parts[p->nparts].role = role_of(m->components[i], den);
		p->parts[p->nparts].resident = m->components[i] == den;
		p->nparts++;
	}
	const char *about0;
	vf_status st = vf_dit_from_vision(&den->vision, den->params, d, &about0, err);
	if (st)
		return st;
	/* the pipeline's own encoders and VAE replace the family's defaults
	 * (kept, and said, when the folder has none) */
	bool has_te = false, has_vae = false;
	for (size_t i = 0; i < p->nparts; i++) {
		has_te = has_te || p->parts[i].role == VF_ROLE_ENCODER;
		has_vae = has_vae || p->parts[i].role == VF_ROLE_VAE;
	}
	if (has_te)
		d->text_encoder_params = d->text_encoder_embedding = 0;
	if (has_vae)
		d->vae_params = 0;
	say(p, "trains the %s component (%s, %.2fB)", den->name, den->vision.family, (double)den->params / 1e9);
	if ((!has_te || !has_vae) && about0[0])
		say(p, "no %s component: %s", !has_te ? "text encoder" : "vae", about0);
	plan_encoders(p, o, d);
	plan_vae(p, o, d, &den->vision);
	for (size_t i = 0; i < p->nparts; i++)
		if (p->parts[i].role == VF_ROLE_NOT_LOADED)
			say(p, "%s not loaded%s", p->parts[i].m->name,
			    named_denoiser(p->parts[i].m->name)
				    ? " (another denoiser: a run trains one; --train NAME for it)"
				    : "");
	return VF_OK;
}
