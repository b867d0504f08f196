/* dit.c - peak GPU memory and step time of a video diffusion transformer
 * (LTX-2: a video and an audio stream of blocks), moved out of estimate.c;
 * the catalog entry reader and the LTX-2 trainer config -> setup mapping. */
#include "vramfit/estimate/estimate.h"

#include "vramfit/base/json.h"
#include "vramfit/model/model.h"
#include "vramfit/model/models.h"

#include "estimate_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- video diffusion transformers (LTX-2) --------------------------------- */

/* What a transformer's layout does not say, from a catalog entry's "dit"
 * and "text_encoder" objects (absent: the public defaults below). */
static vf_status dit_facts(const cJSON *entry, const char *what, struct vf_dit *d,
			   struct vf_error *err)
{
	const cJSON *dit = entry ? cJSON_GetObjectItemCaseSensitive(entry, "dit") : NULL;
	int64_t *opt[] = {&d->text_tokens, &d->vae_params, &d->vae_decoder_channels};
	const char *names[] = {"text_tokens", "vae_params", "vae_decoder_channels"};
	for (size_t i = 0; i < 3; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(dit, names[i]);
		if (v && (!vf_json_number_is_i64(v, opt[i]) || *opt[i] < 0 || *opt[i] > (1ll << 40)))
			return vf_error_set(err, VF_ERR, "%s: field dit.%s: expected a whole number >= 0",
					    what, names[i]);
	}
	int64_t sc = 32, tc = 8;
	vf_json_get_i64(dit, "spatial_compression", &sc);
	vf_json_get_i64(dit, "temporal_compression", &tc);
	if (sc < 1 || sc > 1024 || tc < 1 || tc > 1024)
		return vf_error_set(err, VF_ERR, "%s: field dit.spatial/temporal_compression: expected 1..1024",
				    what);
	d->spatial_compression = (int)sc;
	d->temporal_compression = (int)tc;
	d->fps = 24;
	d->audio_tokens_per_second = 25;
	vf_json_get_double(dit, "fps", &d->fps);
	vf_json_get_double(dit, "audio_tokens_per_second", &d->audio_tokens_per_second);
	if (!(d->fps > 0) || d->audio_tokens_per_second < 0)
		return vf_error_set(err, VF_ERR, "%s: field dit.fps: expected a positive number", what);
	if (!d->vae_decoder_channels)
		d->vae_decoder_channels = 128;
	const cJSON *te = entry ? cJSON_GetObjectItemCaseSensitive(entry, "text_encoder") : NULL;
	if (cJSON_IsObject(te)) {
		vf_json_get_i64(te, "params", &d->text_encoder_params);
		vf_json_get_i64(te, "embedding_params", &d->text_encoder_embedding);
		if (d->text_encoder_params < 0 || d->text_encoder_embedding < 0 ||
		    d->text_encoder_embedding > d->text_encoder_params)
			return vf_error_set(err, VF_ERR, "%s: field text_encoder: bad parameter counts", what);
	}
	return VF_OK;
}

vf_status vf_dit_from_ltx(const struct vf_ltx_arch *a, int64_t params, const cJSON *defaults,
			  struct vf_dit *d, struct vf_error *err)
{
	memset(d, 0, sizeof *d);
	if (a->layers < 1 || a->heads < 1 || a->head_dim < 1 || params <= 0 || vf_ltx_params(a) < 0)
		return vf_error_set(err, VF_ERR, "LTX transformer: no blocks, heads or parameters, or sizes out of range");
	d->params = params;
	d->layers = a->layers;
	d->video_heads = a->heads;
	d->video_hidden = a->heads * a->head_dim;
	d->video_ffn = 4 * d->video_hidden;                 /* FeedForward mult 4 */
	if (a->audio) {
		d->audio_heads = a->audio_heads;
		d->audio_hidden = a->audio_heads * a->audio_head_dim;
		d->audio_ffn = 4 * d->audio_hidden;
		d->audio_inner = d->audio_hidden;
		d->audio_text_dim = a->audio_cross_dim;
	}
	d->text_dim = a->cross_dim;
	d->latent_channels = a->in_channels;
	return dit_facts(defaults, "model catalog defaults", d, err);
}

/* What a diffusers DiT's transformer config does not say: its pipeline's
 * text encoder and VAE decoder (public model cards; sizes rounded where
 * marked "about"). */
static const struct {
	const char *family;
	int64_t te_params, te_embedding; /* T5-v1.1-XXL encoder: about 4.76B, embedding 32128 x 4096 */
	int64_t vae_params;              /* VAE decoder kept for validation */
	const char *about;
} dit_pipelines[] = {
	{"pixart", 4762310656LL, 131596288LL, 49490199LL,
	 "pipeline: T5-v1.1-XXL encoder (about 4.76B), SD VAE decoder (about 49M)"},
	{"latte", 4762310656LL, 131596288LL, 49490199LL,
	 "pipeline: T5-v1.1-XXL encoder (about 4.76B), SD VAE decoder (about 49M), frames decoded together"},
	{"flux", 4762310656LL + 123060480LL, 131596288LL + 37945344LL, 49842099LL,
	 "pipeline: T5-v1.1-XXL encoder and CLIP-L text (about 4.9B), Flux VAE decoder (about 50M); the 512 text tokens "
	 "also pass the blocks (joint attention), counted here as cross-attention context only"},
	{"ltx-video", 4762310656LL, 131596288LL, 500000000LL,
	 "pipeline: T5-v1.1-XXL encoder (about 4.76B), video VAE decoder assumed 0.5B"},
	/* UMT5-XXL encoder: 256384 x 4096 shared embedding, 24 layers (the
	 * count of lib/model/arch.c's umt5 reader); the Wan 2.1 VAE decoder
	 * (lib/model/diffusers.c's AutoencoderKLWan count) */
	{"wan", 5680910336LL, 1050148864LL, 73295603LL,
	 "pipeline: UMT5-XXL encoder (5.68B), Wan 2.1 VAE decoder (73M); give the pipeline folder "
	 "for its own components"},
	/* CLIP-L and OpenCLIP-bigG with projections (123,650,304 and
	 * 694,659,840), the T5-XXL encoder; the 16-channel VAE's decoder
	 * (lib/model/diffusers.c's AutoencoderKL count, no quant convs) */
	{"sd3", 123650304LL + 694659840LL + 4762310656LL, 37945344LL + 63242240LL + 131596288LL, 49545475LL,
	 "pipeline: CLIP-L, OpenCLIP-bigG and T5-XXL encoders (5.58B), the 16-channel VAE decoder (50M); give the "
	 "pipeline folder for its own components"},
	{"cogvideox", 4762310656LL, 131596288LL, 123368451LL,
	 "pipeline: T5-v1.1-XXL encoder (4.76B), the CogVideoX VAE decoder (123M); give the pipeline folder for its "
	 "own components"},
	{"hunyuan-video", 7505186816LL + 123060480LL, 525598720LL + 37945344LL, 146136339LL,
	 "pipeline: a LLaVA-Llama-3-8B text model without its head (7.51B) and CLIP-L (123M) as text "
	 "encoders, the HunyuanVideo VAE decoder (146M); give the pipeline folder for its own components"},
	{"sana", 2614341888LL, 589824000LL, 159000000LL,
	 "pipeline: a Gemma-2-2B text model without its head (about 2.61B) as text encoder, the DC-AE decoder "
	 "assumed 0.16B (its class is not counted yet); give the pipeline folder for its own components"},
	{"mochi", 4762310656LL, 131596288LL, 362526595LL,
	 "pipeline: T5-v1.1-XXL encoder (4.76B), the Mochi VAE decoder (363M); give the pipeline folder for its own "
	 "components"},
	/* CLIP-L text (123,060,480; token table 49408 x 768) */
	{"unet2d-768", 123060480LL, 37945344LL, 49490199LL,
	 "pipeline: CLIP-L text encoder (123M), SD VAE decoder (49M); give the pipeline folder for its own components"},
	/* + OpenCLIP bigG text with projection (694,659,840; 49408 x 1280) */
	{"unet2d-2048", 123060480LL + 694659840LL, 37945344LL + 63242240LL, 49490199LL,
	 "pipeline: CLIP-L and OpenCLIP-bigG text encoders (818M), SDXL VAE decoder (49M); give the pipeline "
	 "folder for its own components"},
};

vf_status vf_dit_from_vision(const struct vf_vision *v, int64_t params, struct vf_dit *d,
			     const char **about, struct vf_error *err)
{
	memset(d, 0, sizeof *d);
	*about = "";
	if ((strcmp(v->kind, "dit") != 0 && strcmp(v->kind, "unet") != 0) || v->nparts < 1 || params <= 0)
		return vf_error_set(err, VF_EUSAGE, "%s: not a diffusion transformer or UNet", v->family);
	d->nlevels = v->nlevels;
	memcpy(d->levels, v->levels, sizeof d->levels);
	const struct vf_vision_part *t = &v->parts[0];
	d->params = params;
	d->layers = v->dit_layers;
	d->video_hidden = t->hidden;
	d->video_heads = t->heads;
	d->video_ffn = t->ffn;
	d->text_dim = v->text_dim;
	d->text_tokens = v->text_tokens;
	d->latent_channels = v->in_channels;
	d->spatial_compression = v->spatial_compression;
	d->temporal_compression = v->temporal_compression;
	d->fps = 24;
	d->vae_decoder_channels = 128;
	d->from_file = true;
	const char *fam = v->family;
	if (strcmp(fam, "unet2d") == 0) /* its pipeline by the text width it reads */
		fam = v->text_dim == 768 ? "unet2d-768" : v->text_dim == 2048 ? "unet2d-2048" : "";
	for (size_t i = 0; i < sizeof dit_pipelines / sizeof dit_pipelines[0]; i++)
		if (strcmp(fam, dit_pipelines[i].family) == 0) {
			d->text_encoder_params = dit_pipelines[i].te_params;
			d->text_encoder_embedding = dit_pipelines[i].te_embedding;
			d->vae_params = dit_pipelines[i].vae_params;
			*about = dit_pipelines[i].about;
		}
	return VF_OK;
}

/* The arch fields of an entry without a "transformer" config. */
static vf_status dit_shape(const cJSON *dit, const char *what, struct vf_dit *d, struct vf_error *err)
{
	struct {
		const char *key;
		int64_t *out;
		bool required;
	} f[] = {
		{"layers", &d->layers, true},
		{"video_hidden", &d->video_hidden, true},
		{"video_heads", &d->video_heads, true},
		{"video_ffn", &d->video_ffn, true},
		{"audio_hidden", &d->audio_hidden, false},
		{"audio_heads", &d->audio_heads, false},
		{"audio_ffn", &d->audio_ffn, false},
		{"text_dim", &d->text_dim, false},
		{"audio_text_dim", &d->audio_text_dim, false},
		{"latent_channels", &d->latent_channels, false},
	};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(dit, f[i].key);
		if (!v) {
			if (f[i].required)
				return vf_error_set(err, VF_ERR, "%s: field dit.%s: required", what, f[i].key);
			continue;
		}
		if (!vf_json_number_is_i64(v, f[i].out) || *f[i].out < 0 || *f[i].out > (1ll << 40))
			return vf_error_set(err, VF_ERR, "%s: field dit.%s: expected a whole number >= 0",
					    what, f[i].key);
	}
	if (d->layers < 1 || d->video_hidden < 1 || d->video_heads < 1)
		return vf_error_set(err, VF_ERR, "%s: field dit: layers, video_hidden and video_heads must be >= 1",
				    what);
	if (!d->text_dim)
		d->text_dim = d->video_hidden;
	return VF_OK;
}

vf_status vf_dit_from_json(const cJSON *entry, const char *what, struct vf_dit *d,
			   struct vf_error *err)
{
	memset(d, 0, sizeof *d);
	const cJSON *dit = cJSON_GetObjectItemCaseSensitive(entry, "dit");
	if (!cJSON_IsObject(dit))
		return vf_error_set(err, VF_ERR, "%s: field dit: expected an object", what);
	int64_t p = -1;
	bool has_p = vf_json_get_i64(entry, "params", &p);
	if (has_p && p <= 0)
		return vf_error_set(err, VF_ERR, "%s: field params: expected the transformer's parameters", what);
	const cJSON *tr = cJSON_GetObjectItemCaseSensitive(entry, "transformer");
	vf_status st;
	if (tr) {
		/* the layout from a transformer config: the public code's defaults
		 * for every key it leaves out */
		struct vf_ltx_arch a;
		char w2[200];
		snprintf(w2, sizeof w2, "%s: field transformer", what);
		if ((st = vf_ltx_from_config(tr, w2, &a, err)))
			return st;
		if (a.unknown[0])
			return vf_error_set(err, VF_ERR, "%s: not understood: %s", w2, a.unknown);
		int64_t lp = vf_ltx_params(&a);
		if (has_p && p != lp)
			return vf_error_set(err, VF_ERR, "%s: field params: %lld, but the layout counts %lld",
					    what, (long long)p, (long long)lp);
		if ((st = vf_dit_from_ltx(&a, lp, entry, d, err)))
			return st;
		return VF_OK;
	}
	if (!has_p)
		return vf_error_set(err, VF_ERR, "%s: field params: expected the transformer's parameters", what);
	if ((st = dit_shape(dit, what, d, err)) || (st = dit_facts(entry, what, d, err)))
		return st;
	d->params = p;
	return VF_OK;
}

int64_t vf_dit_video_tokens(const struct vf_dit *d, int width, int height, int frames)
{
	if (width <= 0 || height <= 0 || frames <= 0)
		return 0;
	int64_t sc = d->spatial_compression > 0 ? d->spatial_compression : 32;
	int64_t tc = d->temporal_compression > 0 ? d->temporal_compression : 8;
	int64_t w = (width + sc - 1) / sc, h = (height + sc - 1) / sc;
	int64_t t = 1 + (frames - 1 + tc - 1) / tc; /* the first frame, then tc frames per latent */
	return w * h * t;
}

int64_t vf_dit_audio_tokens(const struct vf_dit *d, int frames)
{
	if (frames <= 0 || d->audio_hidden <= 0 || !(d->fps > 0))
		return 0;
	return (int64_t)ceil((double)frames / d->fps * d->audio_tokens_per_second);
}

/* LoRA parameters per rank: r x (in + out) of each targeted projection in
 * the six attentions of a block (video self, video<-text, audio self,
 * audio<-text, video<-audio, audio<-video), by query width q, context
 * width c and inner width i (the audio<->video attentions run at the audio
 * inner width: ltx-core transformer.py). */
static double proj_per_rank(double q, double c, double i, unsigned t)
{
	return (t & VF_LORA_Q ? q + i : 0) + (t & VF_LORA_K ? c + i : 0) + (t & VF_LORA_V ? c + i : 0) +
	       (t & VF_LORA_O ? i + q : 0);
}

static double dit_lora_per_rank(const struct vf_dit *d, unsigned t)
{
	if (d->nlevels > 0) {
		/* a UNet: each transformer block's self- and cross-attention at
		 * its level's width (diffusers' to_q/to_k/to_v/to_out.0) */
		double per = 0, td = (double)d->text_dim;
		for (int l = 0; l < d->nlevels; l++) {
			double w = (double)d->levels[l].width;
			per += (double)d->levels[l].attn_blocks * (proj_per_rank(w, w, w, t) + proj_per_rank(w, td, w, t));
		}
		return per;
	}
	double hv = (double)d->video_hidden, ha = (double)d->audio_hidden, td = (double)d->text_dim;
	double atd = d->audio_text_dim > 0 ? (double)d->audio_text_dim : td;
	double ai = d->audio_inner > 0 ? (double)d->audio_inner : ha;
	struct {
		double q, c, i;
	} attn[6] = {{hv, hv, hv}, {hv, td, hv}, {ha, ha, ha}, {ha, atd, ha}, {hv, ha, ai}, {ha, hv, ai}};
	double per = 0;
	for (int k = 0; k < 6; k++) {
		double q = attn[k].q, c = attn[k].c, i = attn[k].i;
		if (q <= 0 || i <= 0)
			continue;
		if (t & VF_LORA_Q)
			per += q + i;
		if (t & VF_LORA_K)
			per += c + i;
		if (t & VF_LORA_V)
			per += c + i;
		if (t & VF_LORA_O)
			per += i + q;
	}
	return per * (double)d->layers;
}

/* Saved bytes per token of one DiT block stream of width h (bf16, frozen
 * base, LoRA on the attention projections): per sub-layer (self
 * attention, text cross-attention, cross-stream attention, FFN) the
 * AdaLN norm's fp32 copy (4h) and modulated bf16 output (2h); per
 * self-attention q, k, v and output kept by the kernel (8h) and the fp32
 * copies of the q/k RMSNorm (8h); per cross-attention q and output (4h)
 * and the q norm copy (4h); each adapter's bf16 input (2h); the FFN's
 * GELU input (2 x ffn). */
static double dit_stream_bytes(double h, double ffn, double nlora)
{
	double norms = 4 * (4 + 2) * h;
	double self = 8 * h + 8 * h;
	double cross = 2 * (4 * h + 4 * h);
	double lora = nlora * 2 * h * 3; /* the adapters of the three attentions */
	return norms + self + cross + lora + 2 * ffn;
}

/* Saved bytes per latent pixel of one UNet residual block of width w
 * (bf16): the inputs of its two GroupNorms, two SiLUs and two convs. Not
 * measured: the mechanism's count. */
#define RESNET_BYTES_PER_CHANNEL 12.0

/* A UNet's step at N latent pixels (batch and frames included; seq: one
 * frame's): each level's pixels N / div run its residual blocks and its
 * transformer blocks (the DiT block mechanism at the level's width, a
 * GEGLU FFN of 8 w saved); checkpointing keeps each block's bf16 input;
 * spatial attention runs over one frame's pixels at the level. */
struct unet_step {
	double all, block, ckpt, units, lin_f, attn_f, width;
};

static struct unet_step unet_step(const struct vf_dit *dt, double N, double seq, double nl)
{
	struct unet_step u = {0};
	for (int l = 0; l < dt->nlevels; l++) {
		const struct vf_vision_level *lv = &dt->levels[l];
		double n = N / (double)(lv->div > 0 ? lv->div : 1), w = (double)lv->width;
		double tb = n * dit_stream_bytes(w, 8 * w, nl), rb = n * RESNET_BYTES_PER_CHANNEL * w;
		double blocks = (double)lv->attn_blocks, res = (double)lv->resnets;
		u.all += blocks * tb + res * rb;
		u.block = fmax(u.block, fmax(blocks > 0 ? tb : 0, rb));
		u.ckpt += (blocks + res) * n * w * 2;
		u.units += blocks + res;
		u.lin_f += 2 * n * (double)lv->params;          /* every weight once per pixel of its level */
		u.attn_f += 4 * blocks * n * (seq / (double)(lv->div > 0 ? lv->div : 1)) * w; /* attention over one
										    frame's pixels */
		u.width = fmax(u.width, w);
	}
	return u;
}

/* Bytes of the frozen parts kept through the step (pipeline.h). */
static double resident_bytes(const struct vf_dit *dt, const struct vf_setup *su)
{
	double fb = su->precision == VF_PREC_FP32 ? 4 : 2;
	double te = (double)dt->resident_te_params, emb = (double)dt->resident_te_embedding;
	double teb = su->text_encoder == VF_TE_INT8 ? (te - emb) * (1.0 + 4.0 / 4096) + emb * 2 : te * fb;
	return teb + (double)dt->resident_vae_params * fb;
}

void vf_estimate_dit(const struct vf_dit *dt, const struct vf_setup *su,
		     const struct vf_gpu_spec *gpu, struct vf_estimate *e)
{
	memset(e, 0, sizeof *e);
	double b = (double)(su->batch > 0 ? su->batch : 1);
	int vw = su->video_width > 0 ? su->video_width : 768;
	int vh = su->video_height > 0 ? su->video_height : 512;
	int vf = su->video_frames > 0 ? su->video_frames : 121;
	double Nv = b * (double)vf_dit_video_tokens(dt, vw, vh, vf);
	double Na = su->audio ? b * (double)vf_dit_audio_tokens(dt, vf) : 0;
	double hv = (double)dt->video_hidden, ha = (double)dt->audio_hidden;
	double L = (double)dt->layers;
	double P = (double)dt->params;
	bool train = su->mode != VF_MODE_INFER;
	bool full = su->mode == VF_MODE_FULL;
	double pb = su->precision == VF_PREC_BF16 || su->precision == VF_PREC_FP16 || !train ? 2 : 4;
	double ngpu = su->gpus > 0 ? su->gpus : 1;
	if (su->context_bytes < 0)
		e->assumed |= VF_ASSUME_CONTEXT_DEFAULT;
	if (!gpu)
		e->assumed |= VF_ASSUME_NO_GPU;
	e->context_bytes = su->context_bytes >= 0 ? su->context_bytes : vf_estimate_default_context(gpu);

	/* parameters: the linear matrices are all but ~2% (norms, AdaLN tables,
	 * patch embeddings, which quantizers leave in bf16) */
	double linear = 0.98 * P;
	double lora = su->mode == VF_MODE_LORA ? su->lora_rank * dit_lora_per_rank(dt, su->lora_targets) : 0;
	double T = full ? P : lora;
	e->params = vf__estimate_clamp64(P);
	e->trainable_params = vf__estimate_clamp64(T);
	e->tokens_per_step = vf__estimate_clamp64((Nv + Na) * (double)su->grad_accum * ngpu);

	double qb = vf__estimate_quant_bytes(su->quant, pb);
	double W = linear * qb + (P - linear) * pb + lora * 4;            /* bytes */
	double R = resident_bytes(dt, su);                                  /* frozen encoders, VAE */
	double gb = full ? pb : 4;
	double G = train ? T * gb : 0;                                      /* gradients */
	double S = 0, OT = 0;
	if (train) {
		S = vf__estimate_state_bytes(su, hv, (double)dt->video_ffn, linear, T, gb,
					     !full);                                /* optimizer states */
		if ((su->optimizer == VF_OPT_ADAMW || su->optimizer == VF_OPT_LION) &&
		    su->optimizer_impl == VF_OPTIMPL_FOREACH)
			OT = T * gb;                                        /* foreach temporary */
	}
	if (ngpu > 1 && (su->shard == VF_SHARD_FSDP || su->shard == VF_SHARD_ZERO3)) {
		W /= ngpu;
		G /= ngpu;
		S /= ngpu;
		OT /= ngpu;
		W += 2 * (linear / L) * pb;                                 /* gathered block */
	}
	/* quanto dequantizes one linear at a time to bf16 */
	double dequant = su->quant != VF_QUANT_NONE ? 2 * hv * (double)dt->video_ffn : 0;
	double AC = train ? 2 * lora : 0;                                   /* adapters' bf16 copies */

	/* activations */
	double nl = vf__estimate_popcount(su->lora_targets & (VF_LORA_Q | VF_LORA_K | VF_LORA_V | VF_LORA_O));
	if (full)
		nl = 4; /* every projection input saved */
	double A_block = Nv * dit_stream_bytes(hv, (double)dt->video_ffn, nl) +
			 Na * dit_stream_bytes(ha, (double)dt->audio_ffn, nl);
	double block_in = Nv * hv * 2 + Na * ha * 2;                        /* bf16 block inputs */
	double held = su->grad_ckpt ? L * block_in : L * A_block;
	double grad_stream = (Nv * hv + Na * ha) * 4;                        /* incoming gradient */
	struct unet_step us = {0};
	if (dt->nlevels > 0) {
		us = unet_step(dt, Nv, (double)vf_dit_video_tokens(dt, vw, vh, 1), nl);
		A_block = us.block;
		held = su->grad_ckpt ? us.ckpt : us.all;
		grad_stream = Nv * (double)dt->levels[0].width * 4;
		L = us.units;
	}
	/* the clip encoded to latents in the step (latents not precomputed):
	 * the VAE encoder's full-resolution stage, two bf16 tensors, before
	 * the denoiser runs */
	double vae_enc = train ? 2.0 * (double)dt->vae_encoder_channels * vf * (double)vw * vh * 2 * b : 0;

	struct live ph[VF_PHASE_COUNT];
	memset(ph, 0, sizeof ph);
	/* forward; the text encoder has its own phase: it is loaded alone to
	 * embed the validation prompts, then released before the transformer
	 * is loaded */
	struct live *fw = &ph[VF_PHASE_FORWARD];
	fw->w = W + R;
	fw->o = S;
	fw->ac = AC;
	fw->act = fmax(held + (su->grad_ckpt ? A_block : 0) + dequant, vae_enc);
	if (su->text_encoder != VF_TE_NONE && dt->text_encoder_params > 0) {
		double tp = (double)dt->text_encoder_params, emb = (double)dt->text_encoder_embedding;
		/* LLM.int8: linear weights 1 byte + row scales; embeddings bf16 */
		struct live *tx = &ph[VF_PHASE_TEXT_ENCODER];
		tx->w = su->text_encoder == VF_TE_INT8 ? (tp - emb) * (1.0 + 4.0 / 4096) + emb * 2
						       : tp * 2;
		tx->act = (double)dt->text_tokens * (double)dt->text_dim * 2 * 16;
	}
	/* backward: inputs, the recomputed block, gradients */
	struct live *bw = &ph[VF_PHASE_BACKWARD];
	bw->w = W + R;
	bw->o = S;
	bw->g = G;
	bw->ac = AC;
	bw->act = held + (su->grad_ckpt ? A_block : 0) + grad_stream + dequant;
	if (!train)
		memset(bw, 0, sizeof *bw);
	/* optimizer step */
	struct live *op = &ph[VF_PHASE_OPTIMIZER];
	op->w = W + R;
	op->g = G;
	op->o = S;
	op->ot = OT;
	/* validation: the VAE decoder's full-resolution stage, two bf16
	 * tensors of channels x F x H x W */
	struct live *va = &ph[VF_PHASE_VALIDATION];
	va->w = W + R + (dt->resident_vae_params > 0 ? 0 : (double)dt->vae_params * 2);
	va->o = su->offload_optimizer ? 0 : S;
	va->act = 2.0 * (double)dt->vae_decoder_channels * vf * (double)vw * vh * 2 * b;
	double best = -1;
	int bi = 0;
	for (int i = 0; i < VF_PHASE_COUNT; i++) {
		double v = vf__estimate_live_sum(&ph[i]);
		if (v > best) {
			best = v;
			bi = i;
		}
	}
	e->weights_full = vf__estimate_clamp64(W + R);
	e->gradients_full = vf__estimate_clamp64(G);
	e->optimizer_full = vf__estimate_clamp64(S);
	e->optimizer_temp_full = vf__estimate_clamp64(OT);
	e->autocast_cache_full = vf__estimate_clamp64(AC);
	e->activations_full = vf__estimate_clamp64(held);
	e->layer_activations = vf__estimate_clamp64(A_block);
	double frag = bi == VF_PHASE_VALIDATION ? 0.1 * va->act
		      : bi == VF_PHASE_TEXT_ENCODER ? 0 : FRAG_LAYER * A_block;
	vf__estimate_finish_terms(e, ph, best + frag, (enum vf_phase)bi);

	/* time: linear FLOPs per token of each stream (LTX-2: ~3/4 of the
	 * parameters serve video tokens) and full (non-causal) attention; a
	 * UNet's from its levels */
	/* (a DiT without an audio stream: every linear serves video tokens) */
	double per_v = (dt->audio_hidden > 0 ? 0.75 : 1.0) * linear, per_a = 0.25 * linear;
	double lin_f = 2 * (Nv * per_v + Na * per_a);
	double attn_f = 4 * L * (Nv * Nv * hv + Na * Na * ha + 2 * Nv * Na * (hv < ha ? hv : ha));
	if (dt->nlevels > 0) {
		lin_f = us.lin_f;
		attn_f = us.attn_f;
		hv = us.width;
	}
	double fwd = lin_f + attn_f;
	double model_flops = (train ? (full ? 3 : 2) * fwd : fwd) * (double)su->grad_accum;
	double flops = model_flops + (train && su->grad_ckpt ? fwd * (double)su->grad_accum : 0);
	e->flops_per_step = flops;
	double rate = gpu ? gpu->bf16_tflops : 989.5;
	if (gpu && !(rate > 0))
		rate = gpu->fp16_tflops;
	if (!(rate > 0)) {
		e->assumed |= VF_ASSUME_GPU_RATE_UNKNOWN;
		e->step_seconds = e->tokens_per_second = e->mfu = e->utilisation = -1;
		e->optimizer_seconds = -1;
		return;
	}
	double N = Nv + Na;
	double u = U_MAX * (hv / (hv + U_HIDDEN)) * (N / (N + U_TOKENS));
	if (su->quant != VF_QUANT_NONE)
		u *= 0.7; /* dequantizing kernels (quanto) */
	double bw_bytes = gpu && gpu->bandwidth_gbs > 0 ? gpu->bandwidth_gbs * 1e9 : 4.8e12;
	double t = flops / (rate * 1e12 * u) + (double)su->grad_accum * ACT_PASSES * L * A_block / bw_bytes +
		   T * gb * 11 / (0.8 * bw_bytes) + T_STEP + L * (T_LAYER + (su->grad_ckpt ? T_LAYER_CKPT : 0));
	e->utilisation = u;
	e->optimizer_seconds = T * gb * 11 / (0.8 * bw_bytes);
	e->step_seconds = t;
	e->tokens_per_second = (Nv + Na) * (double)su->grad_accum * ngpu / t;
	e->mfu = model_flops / (t * rate * 1e12);
}

static int64_t dit_peak(const void *dit, const struct vf_setup *su, const struct vf_gpu_spec *gpu)
{
	struct vf_estimate e;
	vf_estimate_dit(dit, su, gpu, &e);
	return e.peak_bytes;
}

int64_t vf_estimate_dit_max_batch(const struct vf_dit *d, const struct vf_setup *setup,
				  const struct vf_gpu_spec *gpu, int64_t vram_bytes)
{
	return vf__estimate_max_batch_search(dit_peak, d, setup, gpu, vram_bytes, 64);
}

vf_status vf_setup_from_ltx2(const struct vf_ltx2_config *c, struct vf_setup *s,
			     struct vf_error *err)
{
	vf_setup_defaults(s);
	vf_status st;
	const char *mode = c->training_mode ? c->training_mode : "lora";
	if (strcmp(mode, "lora") != 0 && strcmp(mode, "full") != 0)
		return vf_error_set(err, VF_EUSAGE, "model.training_mode: expected lora or full, got '%s'", mode);
	if ((st = vf_setup_set(s, "mode", mode, err)))
		return st;
	if (strcmp(mode, "lora") == 0) {
		if (c->lora_rank < 1 || c->lora_rank > 65536)
			return vf_error_set(err, VF_EUSAGE, "lora.rank: expected 1..65536, got %d", c->lora_rank);
		s->lora_rank = c->lora_rank;
		s->lora_alpha = c->lora_rank;
		s->lora_targets = VF_LORA_Q | VF_LORA_K | VF_LORA_V | VF_LORA_O;
		s->given |= VF_SETUP_G_LORA_RANK | VF_SETUP_G_LORA_TARGETS;
	}
	const char *opt = c->optimizer_type ? c->optimizer_type : "adamw";
	if (strcmp(opt, "adamw") != 0 && strcmp(opt, "adamw8bit") != 0)
		return vf_error_set(err, VF_EUSAGE,
				    "optimization.optimizer_type: expected adamw or adamw8bit, got '%s'", opt);
	if ((st = vf_setup_set(s, "optimizer", opt, err)))
		return st;
	if (c->batch_size < 1 || c->grad_accum < 1)
		return vf_error_set(err, VF_EUSAGE,
				    "optimization.batch_size / gradient_accumulation_steps: expected >= 1");
	s->batch = c->batch_size;
	s->grad_accum = c->grad_accum;
	s->grad_ckpt = c->grad_ckpt;
	s->given |= VF_SETUP_G_BATCH | VF_SETUP_G_GRAD_ACCUM | VF_SETUP_G_GRAD_CKPT;
	const char *mp = c->mixed_precision_mode ? c->mixed_precision_mode : "bf16";
	if (strcmp(mp, "bf16") == 0)
		s->precision = VF_PREC_BF16; /* the trainer loads the transformer in bf16 */
	else if (strcmp(mp, "fp16") == 0)
		s->precision = VF_PREC_FP16;
	else if (strcmp(mp, "no") == 0)
		s->precision = VF_PREC_FP32;
	else
		return vf_error_set(err, VF_EUSAGE,
				    "acceleration.mixed_precision_mode: expected no, fp16 or bf16, got '%s'", mp);
	s->given |= VF_SETUP_G_PRECISION;
	const char *q = c->quantization;
	if (q && strcmp(q, "int2-quanto") == 0)
		q = "int4-quanto"; /* no 2-bit term: counted as 4-bit (an over-estimate) */
	if (q && !vf_quant_parse(q, &s->quant))
		return vf_error_set(err, VF_EUSAGE,
				    "acceleration.quantization: expected null, int8-quanto, int4-quanto, "
				    "int2-quanto, fp8-quanto or fp8uz-quanto, got '%s'", q);
	s->given |= VF_SETUP_G_QUANT;
	s->text_encoder = c->load_text_encoder_in_8bit ? VF_TE_INT8 : VF_TE_BF16;
	s->offload_optimizer = c->offload_optimizer_during_validation;
	s->given |= VF_SETUP_G_TEXT_ENCODER | VF_SETUP_G_OFFLOAD;
	int w = c->video_dims[0], h = c->video_dims[1], f = c->video_dims[2];
	/* Only what the token count needs: the trainer's own rule (multiples of
	 * 32, frames % 8 == 1) is the profile's, checked by `vramfit check`. */
	if (w < 1 || h < 1 || f < 1)
		return vf_error_set(err, VF_EUSAGE,
				    "validation.video_dims: expected positive [width, height, frames], "
				    "got [%d, %d, %d]", w, h, f);
	s->video_width = w;
	s->video_height = h;
	s->video_frames = f;
	s->given |= VF_SETUP_G_VIDEO;
	s->gpus = c->gpus > 0 ? c->gpus : 1;
	if (s->gpus > 1) {
		s->shard = s->mode == VF_MODE_FULL ? VF_SHARD_FSDP : VF_SHARD_DDP;
		s->given |= VF_SETUP_G_GPUS | VF_SETUP_G_SHARD;
	}
	return vf_setup_finish(s, err);
}

vf_status vf_estimate_ltx2(const char *model_id, const struct vf_ltx2_config *c,
			   const struct vf_gpu_spec *gpu, struct vf_estimate *out,
			   struct vf_error *err)
{
	vf_status st = vf_models_load(err);
	if (st)
		return st;
	const struct vf_model_entry *m = vf_models_find(model_id ? model_id : "ltx-2-19b");
	if (!m)
		return vf_error_set(err, VF_ENOTFOUND, "model catalog: no model '%s'",
				    model_id ? model_id : "ltx-2-19b");
	if (strcmp(m->kind, "dit") != 0)
		return vf_error_set(err, VF_EUSAGE, "%s: not a video DiT (kind %s)", m->id, m->kind);
	struct vf_dit d;
	char what[128];
	snprintf(what, sizeof what, "%s: model %s", m->file, m->id);
	if ((st = vf_dit_from_json(m->raw, what, &d, err)))
		return st;
	struct vf_setup s;
	if ((st = vf_setup_from_ltx2(c, &s, err)))
		return st;
	vf_estimate_dit(&d, &s, gpu, out);
	return VF_OK;
}

vf_status vf_estimate_ltx2_file(const char *path, const struct vf_ltx2_config *c,
				const struct vf_gpu_spec *gpu, struct vf_estimate *out,
				struct vf_error *err)
{
	struct vf_model *m = NULL;
	vf_status st = vf_model_load(path, &m, err);
	if (st)
		return st;
	if (!m->has_ltx) {
		vf_model_free(m);
		return vf_error_set(err, VF_ENOTFOUND, "%s: not an LTX transformer checkpoint", path);
	}
	const struct vf_model_entry *def = NULL;
	if ((st = vf_models_load(err)) == VF_OK)
		def = vf_models_find("ltx-2-19b");
	struct vf_dit d;
	struct vf_setup s;
	if (st == VF_OK)
		st = vf_dit_from_ltx(&m->ltx, m->params, def ? def->raw : NULL, &d, err);
	vf_model_free(m);
	if (st == VF_OK)
		st = vf_setup_from_ltx2(c, &s, err);
	if (st == VF_OK)
		vf_estimate_dit(&d, &s, gpu, out);
	return st;
}
