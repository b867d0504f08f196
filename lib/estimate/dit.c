/* dit.c - peak GPU memory and step time of a video diffusion transformer
 * (LTX-2: a video and an audio stream of blocks), moved out of estimate.c;
 * the catalog entry reader and the LTX-2 trainer config -> setup mapping. */
#include "vramfit/estimate/estimate.h"

#include "vramfit/base/json.h"
#include "vramfit/model/model.h"
#include "vramfit/model/models.h"

#include "estimate_internal.h"
#include "nccl.h"
#include "steptime.h"

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
	vf_status st = dit_facts(defaults, "model catalog defaults", d, err);
	if (st)
		return st;
	/* the connectors and text projection of that layout; the text
	 * encoder's width and depth from the catalog's text_encoder */
	d->tiled_decode = true; /* the LTX-2 trainer's validation runner */
	d->connector_params = vf_ltx_connector_params(a);
	d->connector_layers = a->conn_layers > a->audio_conn_layers ? a->conn_layers : a->audio_conn_layers;
	d->connector_width_sum = a->conn_heads * a->conn_head_dim +
				 (a->audio ? a->audio_conn_heads * a->audio_conn_head_dim : 0);
	const cJSON *te = defaults ? cJSON_GetObjectItemCaseSensitive(defaults, "text_encoder") : NULL;
	int64_t th = 0, tl = 0;
	if (vf_json_get_i64(te, "hidden_size", &th) && vf_json_get_i64(te, "num_layers", &tl)) {
		int64_t tp = vf_ltx_text_projection_params(a, th, tl);
		if (tp < 0)
			return vf_error_set(err, VF_ERR, "model catalog defaults: field text_encoder.hidden_size / "
					    "num_layers: out of range");
		d->text_projection_params = tp;
	}
	if (d->connector_params < 0)
		d->connector_params = 0;
	return VF_OK;
}

vf_status vf_dit_from_ltx_model(const struct vf_model *m, const cJSON *defaults, struct vf_dit *d,
				struct vf_error *err)
{
	const struct vf_ltx_parts *p = &m->ltx_parts;
	/* a unified checkpoint also holds connectors, VAEs and vocoder: the
	 * transformer is what its own prefix holds */
	int64_t tr = p->transformer > 0 ? p->transformer : m->params;
	vf_status st = vf_dit_from_ltx(&m->ltx, tr, defaults, d, err);
	if (st)
		return st;
	d->from_file = true;
	if (p->video_connector + p->audio_connector > 0) {
		d->connector_params = p->video_connector + p->audio_connector;
		d->connectors_from_file = true;
	}
	if (p->text_projection > 0)
		d->text_projection_params = p->text_projection;
	if (p->vae_decoder > 0)
		d->vae_params = p->vae_decoder;
	return VF_OK;
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
	{"wan-vace", 5680910336LL, 1050148864LL, 73295603LL,
	 "pipeline: UMT5-XXL encoder (5.68B), Wan 2.1 VAE decoder (73M), the control video encoded by "
	 "the same VAE; give the pipeline folder for its own components"},
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
	/* the DC-AE f32c32 decoder: lib/model/diffusers.c's AutoencoderDC
	 * count of SANA's VAE config (ResBlock / EfficientViT stages) */
	{"sana", 2614341888LL, 589824000LL, 159228556LL,
	 "pipeline: a Gemma-2-2B text model without its head (about 2.61B) as text encoder, the DC-AE f32c32 decoder "
	 "(159M); give the pipeline folder for its own components"},
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
		int64_t cp = -1;
		if (vf_json_get_i64(entry, "connector_params", &cp) && cp != d->connector_params)
			return vf_error_set(err, VF_ERR, "%s: field connector_params: %lld, but the layout counts %lld",
					    what, (long long)cp, (long long)d->connector_params);
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

/* The sizes one estimate shares among its phases (bytes unless named). */
struct ditm {
	const struct vf_dit *d;
	const struct vf_setup *su;
	double b, Nv, Na, hv, ha, L, P, pb, ngpu;
	bool train, full, fsdp;
	bool fsdp_mp;        /* FSDP MixedPrecision: units gathered, gradients computed in bf16 */
	double linear, lora, T, gb;
	double ub;           /* bytes per element of a gathered FSDP unit and its whole gradient */
	double W, G, S, OT, AC, C, TP, dequant;
	double G_nosync;     /* FSDP accumulation under no_sync: the whole gradients held (0: none) */
	double R;            /* a pipeline's frozen encoders and VAE kept through the step */
	double vae_enc;      /* the clip encoded to latents in the step (latents not precomputed) */
	struct unet_step us; /* a UNet's levels (nlevels > 0) */
	double CG, CA;       /* connector gradients, connector saved activations */
	double A_block, held, grad_stream;
	double vNv, vNa;     /* validation tokens (batch 1) */
	int vw, vh, vf;      /* validation sample */
	int steps, passes;   /* validation denoising steps, transformer passes per step */
};

/* Parameters, gradients, optimizer states: what every step phase holds. */
static void dit_states(struct ditm *m)
{
	const struct vf_setup *su = m->su;
	const struct vf_dit *dt = m->d;
	/* the linear matrices are all but ~2% (norms, AdaLN tables, patch
	 * embeddings, which quantizers leave in bf16) */
	m->linear = 0.98 * m->P;
	m->lora = su->mode == VF_MODE_LORA ? su->lora_rank * dit_lora_per_rank(dt, su->lora_targets) : 0;
	m->T = m->full ? m->P : m->lora;
	/* LoRA under FSDP with the adapters in the blocks' flat parameters
	 * (fsdp_lora_flat): FSDP1 wants one dtype per flat parameter, so the
	 * LTX-2 trainer casts the transformer to fp32 before
	 * accelerator.prepare and the shards are fp32 (dit_load_phase); a
	 * full fine-tune's are its precision's */
	bool sharded = m->train && m->ngpu > 1 && m->fsdp;
	double sb = sharded && !m->full && su->fsdp_lora_flat && su->quant == VF_QUANT_NONE ? 4 : m->pb;
	/* FSDP MixedPrecision (the stack mechanism fsdp_mixed_precision:
	 * accelerate's bf16 maps to FSDP1 param_dtype and reduce_dtype
	 * bf16): each unit gathered in bf16 from the fp32 shards, its
	 * gradient computed and reduce-scattered in bf16, and autocast has
	 * nothing left to cast */
	m->fsdp_mp = sharded && su->fsdp_mixed_precision && su->precision != VF_PREC_FP32 && sb == 4;
	m->ub = m->fsdp_mp ? 2 : sb;
	double qb = vf__estimate_quant_bytes(su->quant, sb);
	m->W = m->linear * qb + (m->P - m->linear) * sb + m->lora * 4;
	m->gb = m->full ? m->pb : 4;
	m->G = m->train ? m->T * m->gb : 0;                               /* gradients */
	if (m->train) {
		m->S = vf__estimate_state_bytes(su, m->hv, (double)dt->video_ffn, m->linear, m->T, m->gb,
						!m->full);                /* optimizer states */
		if ((su->optimizer == VF_OPT_ADAMW || su->optimizer == VF_OPT_LION) &&
		    su->optimizer_impl == VF_OPTIMPL_FOREACH)
			m->OT = m->T * m->gb;                             /* foreach temporary */
	}
	/* FSDP gradient accumulation under no_sync (fsdp_no_sync: the LTX-2
	 * trainer's and accelerate's accelerator.accumulate enter FSDP1's
	 * no_sync on all but the synced micro-batch, sync_each_batch False by
	 * default): every unit keeps its whole gradient from the first
	 * micro-batch's backward to the synced one. Full fine-tune: every
	 * parameter's; LoRA with the adapters in the blocks' flat parameters
	 * (fsdp_lora_flat, configs/accelerate/fsdp.yaml use_orig_params): the
	 * whole transformer's, in fp32 (cast to fp32 under FSDP, trainer.py);
	 * adapters as units of their own: theirs only (data/stacks/ltx.json) */
	m->G_nosync = 0;
	if (m->train && su->fsdp_no_sync && m->ngpu > 1 && su->shard == VF_SHARD_FSDP && su->grad_accum > 1)
		m->G_nosync = m->full ? m->T * m->ub : !su->fsdp_lora_flat ? m->G : (m->P + m->lora) * m->ub;
	if (m->ngpu > 1 && m->fsdp) {
		m->W /= m->ngpu;
		m->G /= m->ngpu;
		m->S /= m->ngpu;
		m->OT /= m->ngpu;
		m->W += 2 * (m->linear / m->L) * m->ub;                  /* gathered block, prefetched next */
	}
	/* the embedding connectors: loaded on the GPU in bf16 by the trainer's
	 * _load_models (trainer.py, load_embeddings_processor at
	 * init_device) and run on every step's cached text features, never
	 * quantized, never sharded; the text projection loaded with them is
	 * dropped at once (feature_extractor = None) - LTX-2 trainer commit
	 * 400fd31 */
	m->C = (double)dt->connector_params * 2;
	m->TP = (double)dt->text_projection_params * 2;
	/* nothing turns their requires_grad off (ltx-core's builder loads with
	 * load_state_dict(assign=True); the trainer freezes the transformer
	 * alone) and _training_step runs them outside no_grad: the backward
	 * gives them bf16 gradients, which no optimizer zeroes, held from the
	 * first step on; their saved activations at the caption tokens */
	if (m->train) {
		m->CG = m->C;
		m->CA = (double)dt->text_tokens * (double)dt->connector_width_sum * 2 * 16 *
			(double)dt->connector_layers * m->b;
	}
	/* quanto dequantizes one linear at a time to bf16 */
	m->dequant = su->quant != VF_QUANT_NONE ? 2 * m->hv * (double)dt->video_ffn : 0;
	/* adapters' bf16 copies (none when FSDP gathers them in bf16) */
	m->AC = m->train && !m->fsdp_mp ? 2 * m->lora : 0;
	m->R = resident_bytes(dt, su);                                    /* frozen encoders, VAE */
}

/* The training step's saved activations at the training size. */
static void dit_activations(struct ditm *m)
{
	const struct vf_setup *su = m->su;
	double nl = vf__estimate_popcount(su->lora_targets & (VF_LORA_Q | VF_LORA_K | VF_LORA_V | VF_LORA_O));
	if (m->full)
		nl = 4; /* every projection input saved */
	m->A_block = m->Nv * dit_stream_bytes(m->hv, (double)m->d->video_ffn, nl) +
		     m->Na * dit_stream_bytes(m->ha, (double)m->d->audio_ffn, nl);
	double block_in = m->Nv * m->hv * 2 + m->Na * m->ha * 2;          /* bf16 block inputs */
	m->held = su->grad_ckpt ? m->L * block_in : m->L * m->A_block;
	m->grad_stream = (m->Nv * m->hv + m->Na * m->ha) * 4;             /* incoming gradient */
	const struct vf_dit *dt = m->d;
	if (dt->nlevels > 0) {
		int vw = su->video_width > 0 ? su->video_width : 768;
		int vh = su->video_height > 0 ? su->video_height : 512;
		m->us = unet_step(dt, m->Nv, (double)vf_dit_video_tokens(dt, vw, vh, 1), nl);
		m->A_block = m->us.block;
		m->held = su->grad_ckpt ? m->us.ckpt : m->us.all;
		m->grad_stream = m->Nv * (double)dt->levels[0].width * 4;
		m->L = m->us.units;
	}
	/* inference (no_grad): nothing is saved for a backward; live are the
	 * residual stream and one block's tensors at a time (the training
	 * block's saved tensors bound them) */
	if (!m->train)
		m->held = m->A_block + (dt->nlevels > 0 ? m->Nv * (double)dt->levels[0].width * 2 : block_in);
	/* the clip encoded to latents in the step (latents not precomputed):
	 * the VAE encoder's full-resolution stage, two bf16 tensors, before
	 * the denoiser runs */
	if (m->train) {
		int vw = su->video_width > 0 ? su->video_width : 768;
		int vh = su->video_height > 0 ? su->video_height : 512;
		int vf = su->video_frames > 0 ? su->video_frames : 121;
		m->vae_enc = 2.0 * (double)dt->vae_encoder_channels * vf * (double)vw * vh * 2 * m->b;
	}
}

/* Loading, before the first step (trainer.py _load_models and
 * _prepare_models_for_training, commit 400fd31): the connectors and the
 * text projection are built on the GPU; the transformer is built on the
 * CPU (bf16 for LoRA, fp32 for full fine-tune; quantized there) and moved
 * at accelerator.prepare. Under FSDP the transformer is cast to fp32
 * first (LoRA too: uniform dtype) and rank 0 holds it whole while FSDP
 * wraps, flattens (one block copied) and shards it. */
static void dit_load_phase(const struct ditm *m, struct live *ld)
{
	ld->w = m->C + m->TP;
	if (m->ngpu > 1 && m->fsdp) {
		double fp32 = m->P * 4 + m->lora * 4;
		ld->w += fp32 + fp32 / m->L;                              /* whole + one flattened block */
	} else {
		ld->w += m->W;
	}
}

/* The text encoder's life: the ValidationRunner loads it (8-bit: linear
 * weights int8, embeddings bf16) with an embeddings processor of its own
 * (connectors and text projection) before the transformer is loaded,
 * embeds the validation prompts, caches them on the CPU and unloads both
 * (validation_runner.py _cache_prompt_embeddings, commit 400fd31). The
 * training embeddings are precomputed (process_dataset.py, a process of
 * its own). */
static void dit_text_encoder_phase(const struct ditm *m, struct live *tx)
{
	const struct vf_dit *dt = m->d;
	if (m->su->text_encoder == VF_TE_NONE || dt->text_encoder_params <= 0)
		return;
	double tp = (double)dt->text_encoder_params, emb = (double)dt->text_encoder_embedding;
	tx->w = m->su->text_encoder == VF_TE_INT8 ? (tp - emb) * (1.0 + 4.0 / 4096) + emb * 2 : tp * 2;
	tx->w += m->C + m->TP;
	tx->act = (double)dt->text_tokens * (double)dt->text_dim * 2 * 16;
}

/* Decoder tiles of the validation decode: 384 x 384 pixels, 48 frames
 * (validation_runner.py _DEFAULT_TILING, commit 400fd31). */
#define VAL_TILE_PX 384
#define VAL_TILE_FRAMES 48

/* Validation (trainer.py _run_validation, validation_runner.py): gradients
 * freed (zero_grad set_to_none), the optimizer states on the CPU when
 * offload_optimizer_during_validation (not under FSDP), then per sample
 * `steps` Euler steps of `passes` sequential no-grad transformer passes
 * at the validation size (one block's working set live), and the tiled
 * VAE decode with the decoder moved to the GPU for it. */
static void dit_validation_phase(const struct ditm *m, struct live *va)
{
	const struct vf_dit *dt = m->d;
	va->w = m->W + m->C + m->R;
	va->g = m->CG; /* zero_grad(set_to_none) frees the transformer's alone */
	va->o = m->su->offload_optimizer && !(m->ngpu > 1 && m->fsdp) ? 0 : m->S;
	/* one pass: block input and output, q/k/v/attention out, the FFN's
	 * two 4x tensors, bf16, per stream */
	double pass = (m->vNv * m->hv + m->vNa * m->ha) * 2 * (2 + 4 + 8) + m->dequant;
	double outs = (double)m->passes * (m->vNv + m->vNa) * (double)dt->latent_channels * 4;
	int tw = m->vw, th = m->vh, tf = m->vf;
	if (dt->tiled_decode) {
		tw = tw < VAL_TILE_PX ? tw : VAL_TILE_PX;
		th = th < VAL_TILE_PX ? th : VAL_TILE_PX;
		tf = tf < VAL_TILE_FRAMES + 1 ? tf : VAL_TILE_FRAMES + 1;
	}
	/* the decoder's full-resolution stage on one tile: two bf16 tensors
	 * of channels x frames x H x W; the decoded clip (bf16 chunks, their
	 * concatenation, the fp32 copy) */
	double tile = 2.0 * (double)dt->vae_decoder_channels * tf * (double)tw * th * 2;
	double clip = 3.0 * m->vf * (double)m->vw * m->vh * (2 + 2 + 4);
	double vae = dt->resident_vae_params > 0 ? 0 : (double)dt->vae_params * 2; /* kept already */
	if (pass + outs > vae + tile + clip) {
		va->act = pass + outs;
	} else {
		va->w += vae;
		va->act = tile + clip;
	}
}

/* One validation sample's sampling time: steps x passes no-grad forwards
 * at the validation size (bf16 rate x the same utilisation model); the
 * decode is not timed. */
static double dit_validation_seconds(const struct ditm *m, const struct vf_gpu_spec *gpu)
{
	double rate = gpu && gpu->bf16_tflops > 0 ? gpu->bf16_tflops : gpu ? gpu->fp16_tflops : 989.5;
	if (!(rate > 0))
		return -1;
	double Nv = m->vNv, Na = m->vNa, hv = m->hv, ha = m->ha;
	double fwd = 2 * (Nv * 0.75 * m->linear + Na * 0.25 * m->linear) +
		     4 * m->L * (Nv * Nv * hv + Na * Na * ha + 2 * Nv * Na * (hv < ha ? hv : ha));
	double N = Nv + Na;
	double u = U_MAX * (hv / (hv + U_HIDDEN)) * (N / (N + U_TOKENS));
	if (m->su->quant != VF_QUANT_NONE)
		u *= 0.7;
	return (double)m->steps * m->passes * (fwd / (rate * 1e12 * u) + m->L * T_LAYER);
}

/* The training size, the validation size (the training size when not
 * given) and the shared sizes. */
static void dit_sizes(const struct vf_dit *dt, const struct vf_setup *su, struct ditm *m)
{
	memset(m, 0, sizeof *m);
	m->d = dt;
	m->su = su;
	m->b = (double)(su->batch > 0 ? su->batch : 1);
	int vw = su->video_width > 0 ? su->video_width : 768;
	int vh = su->video_height > 0 ? su->video_height : 512;
	int vf = su->video_frames > 0 ? su->video_frames : 121;
	m->Nv = m->b * (double)vf_dit_video_tokens(dt, vw, vh, vf);
	m->Na = su->audio ? m->b * (double)vf_dit_audio_tokens(dt, vf) : 0;
	m->vw = su->val_width > 0 ? su->val_width : vw;
	m->vh = su->val_height > 0 ? su->val_height : vh;
	m->vf = su->val_frames > 0 ? su->val_frames : vf;
	m->steps = su->val_steps > 0 ? su->val_steps : 30;
	m->passes = su->val_passes > 0 ? su->val_passes : 4;
	m->vNv = (double)vf_dit_video_tokens(dt, m->vw, m->vh, m->vf);
	m->vNa = su->audio ? (double)vf_dit_audio_tokens(dt, m->vf) : 0;
	m->hv = (double)dt->video_hidden;
	m->ha = (double)dt->audio_hidden;
	m->L = (double)dt->layers;
	m->P = (double)dt->params;
	m->train = su->mode != VF_MODE_INFER;
	m->full = su->mode == VF_MODE_FULL;
	m->pb = su->precision == VF_PREC_BF16 || su->precision == VF_PREC_FP16 || !m->train ? 2 : 4;
	m->ngpu = su->gpus > 0 ? su->gpus : 1;
	m->fsdp = su->shard == VF_SHARD_FSDP || su->shard == VF_SHARD_ZERO3;
}

/* The steady step's phases: forward, backward, optimizer step. */
static void dit_step_phases(const struct ditm *m, struct live ph[VF_PHASE_COUNT])
{
	struct live *fw = &ph[VF_PHASE_FORWARD];
	fw->w = m->W + m->C + m->R;
	fw->g = m->CG + m->G_nosync; /* under no_sync: held from the previous micro-batches */
	fw->o = m->S;
	fw->ac = m->AC;
	fw->act = fmax(m->CA + m->held + (m->su->grad_ckpt ? m->A_block : 0) + m->dequant, m->vae_enc);
	if (!m->train)
		return;
	/* backward: inputs, the recomputed block, gradients */
	struct live *bw = &ph[VF_PHASE_BACKWARD];
	bw->w = m->W + m->C + m->R;
	bw->o = m->S;
	bw->g = (m->G_nosync > 0 ? m->G_nosync : m->G) + m->CG;
	/* FSDP: a unit's whole gradient, computed before its reduce-scatter
	 * (a flat unit's covers its frozen weights too) */
	if (m->ngpu > 1 && m->fsdp && m->G_nosync == 0 && (m->full || m->su->fsdp_lora_flat))
		bw->g += (m->linear + (m->full ? 0 : m->lora)) / m->L * m->ub;
	bw->ac = m->AC;
	bw->act = m->CA + m->held + (m->su->grad_ckpt ? m->A_block : 0) + m->grad_stream + m->dequant;
	struct live *op = &ph[VF_PHASE_OPTIMIZER];
	op->w = m->W + m->C + m->R;
	op->g = m->G + m->CG;
	op->o = m->S;
	op->ot = m->OT;
}

/* The allocator's reserve beyond the live tensors of phase i. */
static double dit_frag(const struct ditm *m, const struct live ph[VF_PHASE_COUNT], int i)
{
	if (i == VF_PHASE_VALIDATION)
		return 0.1 * ph[i].act;
	if (i == VF_PHASE_TEXT_ENCODER || i == VF_PHASE_LOAD)
		return 0;
	return FRAG_LAYER * m->A_block;
}

/* Step time: linear FLOPs per token of each stream (~3/4 of the
 * parameters serve video tokens) and full (non-causal) attention. */
static void dit_time(const struct ditm *m, const struct vf_gpu_spec *gpu, struct vf_estimate *e)
{
	const struct vf_setup *su = m->su;
	double Nv = m->Nv, Na = m->Na, hv = m->hv, ha = m->ha, L = m->L;
	/* (LTX-2: ~3/4 of the parameters serve video tokens; a DiT without an
	 * audio stream: every linear serves video tokens; a UNet: its levels) */
	double per_v = (m->d->audio_hidden > 0 ? 0.75 : 1.0) * m->linear, per_a = 0.25 * m->linear;
	double lin_f = 2 * (Nv * per_v + Na * per_a);
	/* each sample attends over its own tokens: b x (n_v^2 h_v + ...) with
	 * N = b x n, so the squares over N divide by b once */
	double attn_f = 4 * L * (Nv * Nv * hv + Na * Na * ha + 2 * Nv * Na * (hv < ha ? hv : ha)) / m->b;
	if (m->d->nlevels > 0) {
		lin_f = m->us.lin_f;
		attn_f = m->us.attn_f;
		hv = m->us.width;
	}
	double fwd = lin_f + attn_f;
	double model_flops = (m->train ? (m->full ? 3 : 2) * fwd : fwd) * (double)su->grad_accum;
	double flops = model_flops + (m->train && su->grad_ckpt ? fwd * (double)su->grad_accum : 0);
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
	u *= vf__steptime_gemm_ratio(gpu); /* the generation's cuBLAS reach relative to hopper's */
	if (vf_estimate_constants_fallback())
		e->assumed |= VF_ASSUME_CONSTANTS_BUILTIN;
	double bw_bytes = gpu && gpu->bandwidth_gbs > 0 ? gpu->bandwidth_gbs * 1e9 : 4.8e12;
	/* the optimizer steps the states this GPU holds (its shard under FSDP) */
	double T = m->ngpu > 1 && m->fsdp ? m->T / m->ngpu : m->T, gb = m->gb;
	/* the step as its parts (--explain): the GEMMs and attention share
	 * the fitted utilisation in proportion to their FLOPs */
	struct vf_step_parts *p = &e->parts;
	double dense = flops / (rate * 1e12 * u);
	p->gemm = fwd > 0 ? dense * (lin_f / fwd) : 0;
	p->attention = dense - p->gemm;
	p->memory_bound = (double)su->grad_accum * ACT_PASSES * L * m->A_block / bw_bytes;
	p->optimizer = m->train ? T * gb * 11 / (0.8 * bw_bytes) : 0;
	p->launch = L * (T_LAYER + (su->grad_ckpt ? T_LAYER_CKPT : 0));
	p->fixed = T_STEP;
	p->compute = p->gemm + p->attention + p->memory_bound + p->optimizer + p->launch + p->fixed;
	double t = p->compute;
	e->utilisation = u;
	e->optimizer_seconds = p->optimizer;
	e->step_seconds = t;
	e->tokens_per_second = (Nv + Na) * (double)su->grad_accum * m->ngpu / t;
	e->mfu = model_flops / (t * rate * 1e12);
	/* data-parallel communication on several GPUs, as the LLM step has
	 * it (nccl.c: the link, the collectives, the overlap of each
	 * strategy): FSDP gathers every block for the forward and again for
	 * the backward and reduce-scatters its gradient, in bf16 under
	 * fsdp_mixed_precision; DDP all-reduces the trainable gradients */
	if (m->train && m->ngpu > 1)
		vf__estimate_add_comm(su, gpu, L, e);
}

void vf_estimate_dit(const struct vf_dit *dt, const struct vf_setup *su,
		     const struct vf_gpu_spec *gpu, struct vf_estimate *e)
{
	memset(e, 0, sizeof *e);
	struct ditm m;
	dit_sizes(dt, su, &m);
	if (su->context_bytes < 0)
		e->assumed |= VF_ASSUME_CONTEXT_DEFAULT;
	if (!gpu)
		e->assumed |= VF_ASSUME_NO_GPU;
	e->context_bytes = su->context_bytes >= 0 ? su->context_bytes : vf_estimate_default_context(gpu);
	dit_states(&m);
	dit_activations(&m);
	e->params = vf__estimate_clamp64(m.P);
	e->trainable_params = vf__estimate_clamp64(m.T);
	e->tokens_per_step = vf__estimate_clamp64((m.Nv + m.Na) * (double)su->grad_accum * m.ngpu);

	struct live ph[VF_PHASE_COUNT];
	memset(ph, 0, sizeof ph);
	dit_step_phases(&m, ph);
	dit_text_encoder_phase(&m, &ph[VF_PHASE_TEXT_ENCODER]);
	if (m.train)
		dit_load_phase(&m, &ph[VF_PHASE_LOAD]);
	if (m.train && !su->validation_off)
		dit_validation_phase(&m, &ph[VF_PHASE_VALIDATION]);
	double best = -1, step_best = -1;
	int bi = 0;
	for (int i = 0; i < VF_PHASE_COUNT; i++) {
		double v = vf__estimate_live_sum(&ph[i]);
		if (v <= 0)
			continue;
		v += dit_frag(&m, ph, i);
		if (v > best) {
			best = v;
			bi = i;
		}
		if (i <= VF_PHASE_OPTIMIZER && v > step_best)
			step_best = v;
	}
	e->weights_full = vf__estimate_clamp64(m.W + m.C + m.R);
	e->gradients_full = vf__estimate_clamp64(m.G + m.CG);
	e->optimizer_full = vf__estimate_clamp64(m.S);
	e->optimizer_temp_full = vf__estimate_clamp64(m.OT);
	e->autocast_cache_full = vf__estimate_clamp64(m.AC);
	e->activations_full = vf__estimate_clamp64(m.held);
	e->layer_activations = vf__estimate_clamp64(m.A_block);
	e->connector_bytes = vf__estimate_clamp64(m.C);
	e->step_peak_bytes = e->context_bytes + vf__estimate_clamp64(step_best);
	vf__estimate_finish_terms(e, ph, best, (enum vf_phase)bi);
	dit_time(&m, gpu, e);
	if (m.train && !su->validation_off && e->step_seconds > 0)
		e->validation_seconds = dit_validation_seconds(&m, gpu);
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

/* vf_setup_from_ltx2: training mode, LoRA, optimizer, batch and
 * accumulation, checkpointing. */
static vf_status ltx2_training(const struct vf_ltx2_config *c, struct vf_setup *s, struct vf_error *err)
{
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
	return VF_OK;
}

/* vf_setup_from_ltx2: mixed precision and quantization. */
static vf_status ltx2_precision(const struct vf_ltx2_config *c, struct vf_setup *s, struct vf_error *err)
{
	const char *mp = c->mixed_precision_mode ? c->mixed_precision_mode : "bf16";
	if (strcmp(mp, "bf16") == 0)
		/* the trainer holds the transformer in bf16 for LoRA, in fp32 for
		 * a full fine-tune (autocast to bf16): trainer.py _load_models,
		 * commit 400fd31 */
		s->precision = s->mode == VF_MODE_FULL ? VF_PREC_AMP : VF_PREC_BF16;
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
	return VF_OK;
}

/* vf_setup_from_ltx2: the text encoder, validation and the video. */
static vf_status ltx2_media(const struct vf_ltx2_config *c, struct vf_setup *s, struct vf_error *err)
{
	/* the ValidationRunner loads the text encoder only to embed the
	 * validation prompts (validation_runner.py _cache_prompt_embeddings) */
	s->text_encoder = c->no_validation_prompts ? VF_TE_NONE
			  : c->load_text_encoder_in_8bit ? VF_TE_INT8 : VF_TE_BF16;
	s->offload_optimizer = c->offload_optimizer_during_validation;
	s->given |= VF_SETUP_G_TEXT_ENCODER | VF_SETUP_G_OFFLOAD;
	int w = c->video_dims[0], h = c->video_dims[1], f = c->video_dims[2];
	/* Only what the token count needs: the trainer's own rule (multiples of
	 * 32, frames % 8 == 1) is the profile's, checked by `vramfit check`. */
	if (w < 1 || h < 1 || f < 1)
		return vf_error_set(err, VF_EUSAGE,
				    "validation.video_dims: expected positive [width, height, frames], "
				    "got [%d, %d, %d]", w, h, f);
	/* validation samples at validation.video_dims; training at the
	 * dataset's bucket, which only the validation dims stand in for when
	 * the caller does not know it */
	s->val_width = w;
	s->val_height = h;
	s->val_frames = f;
	s->validation_off = c->validation_disabled;
	if (c->inference_steps < 0 || c->inference_steps > 10000 || c->guidance_passes < 0 ||
	    c->guidance_passes > 16)
		return vf_error_set(err, VF_EUSAGE, "validation.inference_steps: expected 1..10000");
	s->val_steps = c->inference_steps;
	s->val_passes = c->guidance_passes;
	s->given |= VF_SETUP_G_VALIDATION;
	const int *t = c->train_dims;
	if (t[0] || t[1] || t[2]) {
		if (t[0] < 1 || t[1] < 1 || t[2] < 1)
			return vf_error_set(err, VF_EUSAGE,
					    "training resolution bucket: expected positive [width, height, frames], "
					    "got [%d, %d, %d]", t[0], t[1], t[2]);
		w = t[0];
		h = t[1];
		f = t[2];
	}
	s->video_width = w;
	s->video_height = h;
	s->video_frames = f;
	s->given |= VF_SETUP_G_VIDEO;
	s->audio = !c->no_audio;
	s->given |= VF_SETUP_G_AUDIO;
	return VF_OK;
}

vf_status vf_setup_from_ltx2(const struct vf_ltx2_config *c, struct vf_setup *s,
			     struct vf_error *err)
{
	vf_setup_defaults(s);
	vf_status st = ltx2_training(c, s, err);
	if (st == VF_OK)
		st = ltx2_precision(c, s, err);
	if (st == VF_OK)
		st = ltx2_media(c, s, err);
	if (st)
		return st;
	s->gpus = c->gpus > 0 ? c->gpus : 1;
	if (s->gpus > 1) {
		s->shard = s->mode == VF_MODE_FULL ? VF_SHARD_FSDP : VF_SHARD_DDP;
		s->given |= VF_SETUP_G_GPUS | VF_SETUP_G_SHARD;
	}
	/* the trainer's own stack (data/stacks/ltx.json): accelerator.accumulate
	 * under FSDP1's no_sync, use_orig_params flat units, MixedPrecision
	 * bf16, adapters in fp32 */
	if ((st = vf_setup_set(s, "stack", "ltx", err)))
		return st;
	return vf_setup_finish(s, err);
}

vf_status vf_estimate_ltx2(const char *model_id, const struct vf_ltx2_config *c,
			   const struct vf_gpu_spec *gpu, struct vf_estimate *out,
			   struct vf_error *err)
{
	const struct vf_model_entry *m = NULL;
	vf_status st = vf_models_get(model_id ? model_id : "ltx-2-19b", &m, err);
	if (st)
		return st;
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
	st = vf_models_get("ltx-2-19b", &def, err);
	struct vf_dit d;
	struct vf_setup s;
	if (st == VF_OK)
		st = vf_dit_from_ltx_model(m, def ? def->raw : NULL, &d, err);
	vf_model_free(m);
	if (st == VF_OK)
		st = vf_setup_from_ltx2(c, &s, err);
	if (st == VF_OK)
		vf_estimate_dit(&d, &s, gpu, out);
	return st;
}
