/* vision.c - vision and video models from one config.json (vision.h):
 * read each family's size keys with its modelling code's defaults, count
 * its parameters exactly, and name any size key not understood.
 *
 * Layouts counted (facts read from the public transformers / diffusers
 * modelling code; no code copied):
 *  - ViT layer (CLIP, SigLIP): LayerNorm (2h) before attention and MLP,
 *    q/k/v/out h x h with bias, MLP h -> f -> h with bias.
 *  - CLIP vision: patch conv (C p^2 h, no bias), class token h, positions
 *    (n + 1) h, pre-LayerNorm 2h, layers, post-LayerNorm 2h; text: tokens
 *    V h, positions P h, layers, final LayerNorm 2h; projections h x d
 *    without bias; logit_scale 1.
 *  - SigLIP vision: patch conv with bias, positions n h (no class token),
 *    layers, post-LayerNorm, attention-pooling head (probe h, multi-head
 *    attention 4 h^2 + 4h, LayerNorm 2h, MLP); text: as CLIP with a
 *    h x d + d head; logit_scale and logit_bias 1 each.
 *  - LLaVA: the vision model without projection, a 2-layer GELU projector
 *    (vision h -> text h -> text h, with bias), the language model.
 *  - Diffusers DiTs: see the functions below. */
#include "vramfit/model/vision.h"

#include <stdio.h>
#include <string.h>

#include "vramfit/base/json.h"

#include "diffusers-internal.h"

#define MAX_SEEN 48

/* A reading context: keys read (so that the rest can be judged), the first
 * error, and where to name unknown keys. */
struct rd {
	const char *what;
	struct vf_error *err;
	vf_status st;
	const char *seen[MAX_SEEN];
	int nseen;
	struct vf_vision *v;
	const char *prefix; /* "vision_config." ... */
};

static void add_name(char *list, size_t n, const char *prefix, const char *name)
{
	size_t len = strlen(list);
	if (len + 2 >= n)
		return;
	snprintf(list + len, n - len, "%s%s%s", len ? ", " : "", prefix, name);
}

static void seen(struct rd *x, const char *key)
{
	if (x->nseen < MAX_SEEN)
		x->seen[x->nseen++] = key;
}

/* Limits that keep every product of the counts inside int64: widths,
 * channels and image sizes <= 2^18, vocabularies and positions <= 2^24,
 * patches <= 1024, layers <= 2^14 (checked again on the derived widths). */
#define W_MAX (1LL << 18)

static int64_t gi_max(struct rd *x, const cJSON *c, const char *key, int64_t dflt, int64_t max);

static int64_t gi(struct rd *x, const cJSON *c, const char *key, int64_t dflt)
{
	int64_t max = W_MAX;
	if (strstr(key, "vocab") || strstr(key, "position") || strstr(key, "caption") ||
	    strstr(key, "joint") || strstr(key, "pooled"))
		max = 1LL << 24;
	else if (strstr(key, "patch"))
		max = 1024;
	else if (strstr(key, "layers") || strcmp(key, "video_length") == 0)
		max = 1LL << 14;
	return gi_max(x, c, key, dflt, max);
}

/* The product of two widths, which must stay a width. */
static int64_t width(struct rd *x, int64_t a, int64_t b, const char *what)
{
	if (a * b <= W_MAX)
		return a * b;
	if (!x->st)
		x->st = vf_error_set(x->err, VF_ERR, "%s: %s%s above %lld", x->what, x->prefix, what,
				     (long long)W_MAX);
	return 1;
}

/* A whole number 1..max, or dflt when absent or null. */
static int64_t gi_max(struct rd *x, const cJSON *c, const char *key, int64_t dflt, int64_t max)
{
	seen(x, key);
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(c, key);
	if (!n || cJSON_IsNull(n))
		return dflt;
	int64_t v;
	if (!vf_json_number_is_i64(n, &v) || v < 1 || v > max) {
		if (!x->st)
			x->st = vf_error_set(x->err, VF_ERR, "%s: field %s%s: expected a whole number 1-%lld",
					     x->what, x->prefix, key, (long long)max);
		return dflt;
	}
	return v;
}

static bool gb(struct rd *x, const cJSON *c, const char *key, bool dflt)
{
	seen(x, key);
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(c, key);
	if (!n || cJSON_IsNull(n))
		return dflt;
	if (!cJSON_IsBool(n)) {
		if (!x->st)
			x->st = vf_error_set(x->err, VF_ERR, "%s: field %s%s: expected true or false", x->what,
					     x->prefix, key);
		return dflt;
	}
	return cJSON_IsTrue(n);
}

/* A string key that must have one of the values counted here. */
static void gs_fixed(struct rd *x, const cJSON *c, const char *key, const char *const *ok)
{
	seen(x, key);
	const char *s = vf_json_get_str(c, key);
	if (!s)
		return;
	for (; *ok; ok++)
		if (strcmp(s, *ok) == 0)
			return;
	add_name(x->v->unknown, sizeof x->v->unknown, x->prefix, key);
}

/* Keys that look like sizes but change nothing counted. */
static const char *const no_size[] = {
	"sample_size", "num_embeds_ada_norm", "norm_num_groups", "axes_dims_rope",
	"interpolation_scale", "patch_size_t_unused", "image_seq_length", "model_type",
	NULL,
};

static bool looks_size(const char *k)
{
	static const char *const words[] = {"dim",   "size", "layers", "heads",  "num_", "expert",
					    "rank",  "bias", "channels", "patch", "mult", "ratio",
					    "vocab", "intermediate", "proj", NULL};
	for (const char *const *w = words; *w; w++)
		if (strstr(k, *w))
			return true;
	return false;
}

/* Name every size-looking key of c that was not read. */
static void check_unknown(struct rd *x, const cJSON *c)
{
	const cJSON *k;
	cJSON_ArrayForEach(k, c)
	{
		if (cJSON_IsNull(k) || cJSON_IsObject(k) || !looks_size(k->string))
			continue;
		bool known = false;
		for (int i = 0; i < x->nseen && !known; i++)
			known = strcmp(x->seen[i], k->string) == 0;
		for (const char *const *n = no_size; *n && !known; n++)
			known = strcmp(*n, k->string) == 0;
		if (!known)
			add_name(x->v->unknown, sizeof x->v->unknown, x->prefix, k->string);
	}
}

/* ---- ViT towers ------------------------------------------------------------ */

static int64_t vit_layer(int64_t h, int64_t f)
{
	return 2 * 2 * h                     /* layer_norm1, layer_norm2 */
	       + 4 * (h * h + h)             /* q, k, v, out with bias */
	       + h * f + f + f * h + h;      /* fc1, fc2 */
}

/* A vision tower; siglip: conv bias, no class token, no pre-norm, pooling head. */
static void vit_vision(struct rd *x, const cJSON *c, bool siglip, struct vf_vision_part *p)
{
	int64_t h = gi(x, c, "hidden_size", 768), f = gi(x, c, "intermediate_size", 3072);
	int64_t L = gi(x, c, "num_hidden_layers", 12), heads = gi(x, c, "num_attention_heads", 12);
	int64_t img = gi(x, c, "image_size", 224), patch = gi(x, c, "patch_size", siglip ? 16 : 32);
	int64_t ch = gi(x, c, "num_channels", 3);
	bool head = siglip && gb(x, c, "vision_use_head", true);
	int64_t n = (img / patch) * (img / patch);
	if (patch > img)
		x->st = x->st ? x->st : vf_error_set(x->err, VF_ERR, "%s: %spatch_size above image_size",
						     x->what, x->prefix);
	int64_t cls = siglip ? 0 : 1;
	snprintf(p->name, sizeof p->name, "vision_tower");
	p->params = ch * patch * patch * h + (siglip ? h : 0) /* patch embedding */
		    + cls * h + (n + cls) * h                 /* class token, positions */
		    + (siglip ? 0 : 2 * h)                    /* pre_layrnorm */
		    + L * vit_layer(h, f) + 2 * h;            /* layers, post_layernorm */
	if (head) /* attention pooling: probe, attention, LayerNorm, MLP */
		p->params += h + 4 * (h * h + h) + 2 * h + h * f + f + f * h + h;
	p->layers = L;
	p->hidden = h;
	p->heads = heads;
	p->ffn = f;
	p->tokens = n + cls;
	x->v->image_size = img;
	x->v->patch_size = patch;
	x->v->image_tokens = n + cls;
	x->v->class_token = cls;
}

static void vit_text(struct rd *x, const cJSON *c, bool siglip, struct vf_vision_part *p)
{
	int64_t V = gi(x, c, "vocab_size", siglip ? 32000 : 49408);
	int64_t h = gi(x, c, "hidden_size", siglip ? 768 : 512);
	int64_t f = gi(x, c, "intermediate_size", siglip ? 3072 : 2048);
	int64_t L = gi(x, c, "num_hidden_layers", 12);
	int64_t heads = gi(x, c, "num_attention_heads", siglip ? 12 : 8);
	int64_t P = gi(x, c, "max_position_embeddings", siglip ? 64 : 77);
	snprintf(p->name, sizeof p->name, "text_tower");
	p->params = V * h + P * h + L * vit_layer(h, f) + 2 * h;
	if (siglip) {
		int64_t d = gi(x, c, "projection_size", h);
		p->params += h * d + d; /* head */
	}
	p->layers = L;
	p->hidden = h;
	p->heads = heads;
	p->ffn = f;
	p->tokens = P;
}

/* CLIP / SigLIP: both towers (model_type clip, siglip) or one
 * (clip_vision_model, clip_text_model, siglip_vision_model). */
static void read_clip(struct rd *x, const cJSON *cfg, const char *mt)
{
	struct vf_vision *v = x->v;
	bool siglip = strncmp(mt, "siglip", 6) == 0;
	snprintf(v->family, sizeof v->family, "%s", siglip ? "siglip" : "clip");
	bool vision_only = strstr(mt, "vision_model") != NULL, text_only = strstr(mt, "text_model") != NULL;
	snprintf(v->kind, sizeof v->kind, vision_only || text_only ? "vit" : "clip");
	v->stages = 1;
	if (vision_only || text_only) {
		struct vf_vision_part *p = &v->parts[v->nparts++];
		if (vision_only)
			vit_vision(x, cfg, siglip, p);
		else
			vit_text(x, cfg, siglip, p);
		/* CLIPTextModelWithProjection / CLIPVisionModelWithProjection:
		 * the tower's projection h x projection_dim, no bias */
		const cJSON *ar = cJSON_GetObjectItemCaseSensitive(cfg, "architectures");
		const cJSON *a0 = cJSON_IsArray(ar) ? cJSON_GetArrayItem(ar, 0) : NULL;
		int64_t d = gi(x, cfg, "projection_dim", 512);
		if (!siglip && cJSON_IsString(a0) && strstr(a0->valuestring, "WithProjection"))
			p->params += p->hidden * d;
		p->trained[0] = true;
		check_unknown(x, cfg);
		return;
	}
	const cJSON *vc = cJSON_GetObjectItemCaseSensitive(cfg, "vision_config");
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(cfg, "text_config");
	struct rd xv = *x, xt = *x;
	xv.nseen = xt.nseen = 0;
	xv.prefix = "vision_config.";
	xt.prefix = "text_config.";
	struct vf_vision_part *pv = &v->parts[v->nparts++], *pt = &v->parts[v->nparts++];
	vit_vision(&xv, vc, siglip, pv);
	vit_text(&xt, tc, siglip, pt);
	pv->trained[0] = pt->trained[0] = true;
	check_unknown(&xv, vc);
	check_unknown(&xt, tc);
	x->st = xv.st ? xv.st : xt.st;
	if (!siglip) {
		int64_t d = gi(x, cfg, "projection_dim", 512);
		pv->params += pv->hidden * d; /* visual_projection, no bias */
		pt->params += pt->hidden * d; /* text_projection */
	}
	pt->params += siglip ? 2 : 1; /* logit_scale (and logit_bias) */
	check_unknown(x, cfg);
}

/* ---- LLaVA-style VLMs ------------------------------------------------------ */

/* transformers' LlamaConfig / MistralConfig defaults for the size keys a
 * partial text_config leaves out (llava-hf configs list only a few). */
static const struct {
	const char *model_type, *key;
	int64_t value;
} lm_defaults[] = {
	{"llama", "vocab_size", 32000},         {"llama", "hidden_size", 4096},
	{"llama", "intermediate_size", 11008},  {"llama", "num_hidden_layers", 32},
	{"llama", "num_attention_heads", 32},   {"llama", "max_position_embeddings", 2048},
	{"mistral", "vocab_size", 32000},       {"mistral", "hidden_size", 4096},
	{"mistral", "intermediate_size", 14336}, {"mistral", "num_hidden_layers", 32},
	{"mistral", "num_attention_heads", 32}, {"mistral", "num_key_value_heads", 8},
	{"mistral", "max_position_embeddings", 32768},
};

/* The language model of a VLM: text_config with its model type's defaults. */
static vf_status vlm_lm(struct rd *x, const cJSON *tc, struct vf_vision_part *p)
{
	cJSON *t = cJSON_IsObject(tc) ? cJSON_Duplicate(tc, 1) : cJSON_CreateObject();
	if (!t)
		return vf_error_set(x->err, VF_ENOMEM, "out of memory");
	const char *mt = vf_json_get_str(t, "model_type");
	if (!mt) {
		cJSON_AddStringToObject(t, "model_type", "llama");
		mt = "llama";
	}
	for (size_t i = 0; i < sizeof lm_defaults / sizeof lm_defaults[0]; i++)
		if (strcmp(mt, lm_defaults[i].model_type) == 0 &&
		    !cJSON_GetObjectItemCaseSensitive(t, lm_defaults[i].key)) {
			cJSON_AddNumberToObject(t, lm_defaults[i].key, (double)lm_defaults[i].value);
			add_name(x->v->assumed, sizeof x->v->assumed, "text_config.", lm_defaults[i].key);
		}
	char w[200];
	snprintf(w, sizeof w, "%s: text_config", x->what);
	vf_status st = vf_arch_from_config(t, w, &x->v->lm, x->err);
	cJSON_Delete(t);
	if (st)
		return st;
	struct vf_param_groups g;
	if (!vf_arch_param_groups(&x->v->lm, &g))
		return vf_error_set(x->err, VF_ERR, "%s: text_config: sizes overflow", x->what);
	x->v->has_lm = true;
	snprintf(p->name, sizeof p->name, "language_model");
	p->params = g.embedding + g.attention + g.mlp + g.norm + g.experts + g.other;
	p->layers = x->v->lm.layers;
	p->hidden = x->v->lm.hidden;
	p->heads = x->v->lm.heads;
	p->ffn = x->v->lm.ffn;
	return VF_OK;
}

static void read_llava(struct rd *x, const cJSON *cfg)
{
	struct vf_vision *v = x->v;
	snprintf(v->kind, sizeof v->kind, "vlm");
	snprintf(v->family, sizeof v->family, "llava");
	v->stages = 2;
	const cJSON *vc = cJSON_GetObjectItemCaseSensitive(cfg, "vision_config");
	const char *vmt = vf_json_get_str(vc, "model_type");
	bool siglip = vmt && strncmp(vmt, "siglip", 6) == 0;
	struct rd xv = *x;
	xv.nseen = 0;
	xv.prefix = "vision_config.";
	struct vf_vision_part *pv = &v->parts[v->nparts++];
	vit_vision(&xv, vc, siglip, pv);
	seen(&xv, "projection_dim"); /* the CLIP projection is not part of a LLaVA tower */
	seen(&xv, "vocab_size");
	check_unknown(&xv, vc);
	x->st = xv.st;
	const char *sel = vf_json_get_str(cfg, "vision_feature_select_strategy");
	seen(x, "vision_feature_select_strategy");
	if (sel && strcmp(sel, "full") != 0 && strcmp(sel, "default") != 0)
		add_name(v->unknown, sizeof v->unknown, "", "vision_feature_select_strategy");
	if (v->class_token && (!sel || strcmp(sel, "default") == 0))
	{
		v->image_tokens -= 1; /* "default" drops the class token */
		v->class_token = false;
	}
	const char *const gelu[] = {"gelu", NULL};
	gs_fixed(x, cfg, "projector_hidden_act", gelu);
	bool pbias = gb(x, cfg, "multimodal_projector_bias", true);
	struct vf_vision_part *pl = &v->parts[v->nparts + 1];
	if (!x->st)
		x->st = vlm_lm(x, cJSON_GetObjectItemCaseSensitive(cfg, "text_config"), pl);
	struct vf_vision_part *pp = &v->parts[v->nparts];
	v->nparts += 2;
	int64_t vh = pv->hidden, th = pl->hidden;
	if (!x->st && (th < 1 || th > W_MAX))
		x->st = vf_error_set(x->err, VF_ERR, "%s: text_config: hidden size above %lld", x->what,
				     (long long)W_MAX);
	snprintf(pp->name, sizeof pp->name, "projector");
	pp->params = vh * th + th * th + (pbias ? 2 * th : 0); /* linear_1, linear_2 */
	pp->tokens = pv->tokens = pl->tokens = v->image_tokens;
	/* stage 1 (alignment): the projector; stage 2 (fine-tuning): projector
	 * and language model; the vision tower stays frozen */
	pp->trained[0] = pp->trained[1] = true;
	pl->trained[1] = true;
	seen(x, "vision_feature_layer");
	seen(x, "image_token_index");
	seen(x, "vocab_size"); /* the text_config's is the model's */
	check_unknown(x, cfg);
}

/* ---- diffusion transformers (diffusers) ------------------------------------ */

/* diffusers BasicTransformerBlock with ada_norm_single (PixArt, Latte): no
 * norm weights, self-attention, cross-attention when cross > 0 (q from D,
 * k/v from cross), GELU-tanh FFN 4x with bias, a 6 x D modulation table.
 * qb: q/k/v bias (attention_bias); to_out always has a bias. */
static int64_t basic_block(int64_t D, int64_t cross, bool qb)
{
	int64_t b = qb ? D : 0;
	int64_t attn1 = 3 * (D * D + b) + D * D + D;
	int64_t attn2 = cross ? (D * D + b) + 2 * (cross * D + b) + D * D + D : 0;
	return attn1 + attn2 + D * 4 * D + 4 * D + 4 * D * D + D + 6 * D;
}

/* A diffusers TimestepEmbedding: in -> d -> d, with biases. */
static int64_t temb(int64_t in, int64_t d)
{
	return in * d + d + d * d + d;
}

/* PixArtAlphaTextProjection: c -> D -> D, with biases. */
static int64_t caption(int64_t c, int64_t D)
{
	return c * D + D + D * D + D;
}

static void dit_part(struct vf_vision *v, int64_t params, int64_t layers, int64_t D, int64_t heads)
{
	struct vf_vision_part *p = &v->parts[v->nparts++];
	snprintf(p->name, sizeof p->name, "transformer");
	p->params = params;
	p->layers = layers;
	p->hidden = D;
	p->heads = heads;
	p->ffn = 4 * D;
	p->trained[0] = true;
	snprintf(v->kind, sizeof v->kind, "dit");
	v->stages = 1;
	v->dit_layers = layers;
}

/* PixArt-alpha/sigma (PixArtTransformer2DModel, or Transformer2DModel with
 * norm_type ada_norm_single) and Latte (LatteTransformer3DModel: a
 * temporal block without cross-attention after each spatial one). */
static void read_pixart(struct rd *x, const cJSON *c, bool latte)
{
	struct vf_vision *v = x->v;
	int64_t heads = gi(x, c, "num_attention_heads", 16), hd = gi(x, c, "attention_head_dim", 88);
	int64_t D = width(x, heads, hd, "heads x head dim");
	int64_t in = gi(x, c, "in_channels", 4), out = gi(x, c, "out_channels", in);
	int64_t L = gi(x, c, "num_layers", 28), p = gi(x, c, "patch_size", 2);
	int64_t cross = gi(x, c, "cross_attention_dim", D), cc = gi(x, c, "caption_channels", 4096);
	int64_t sample = gi(x, c, "sample_size", 64);
	bool qb = gb(x, c, "attention_bias", true);
	bool extra = !latte && gb(x, c, "use_additional_conditions", sample == 128);
	if (gb(x, c, "norm_elementwise_affine", false))
		add_name(v->unknown, sizeof v->unknown, x->prefix, "norm_elementwise_affine");
	const char *const act[] = {"gelu-approximate", NULL}, *const norm[] = {"ada_norm_single", NULL};
	gs_fixed(x, c, "activation_fn", act);
	gs_fixed(x, c, "norm_type", norm);
	int64_t d3 = D / 3;
	int64_t P = in * p * p * D + D                            /* pos_embed.proj (conv) */
		    + L * basic_block(D, cross, qb)               /* spatial blocks */
		    + (latte ? L * basic_block(D, 0, qb) : 0)     /* temporal blocks */
		    + temb(256, D) + 6 * D * D + 6 * D            /* adaln_single */
		    + (extra ? 2 * temb(256, d3) : 0)             /* resolution, aspect ratio */
		    + caption(cc, D) + 2 * D                      /* caption_projection, scale_shift_table */
		    + D * p * p * out + p * p * out;              /* proj_out */
	snprintf(v->family, sizeof v->family, "%s", latte ? "latte" : "pixart");
	dit_part(v, P, latte ? 2 * L : L, D, heads);
	v->in_channels = in;
	v->text_dim = cross;
	v->text_tokens = 120; /* T5 tokens of PixArt-alpha and Latte's pipelines */
	v->spatial_compression = (int)(8 * p);
	v->temporal_compression = 1;
	v->frames = latte ? gi(x, c, "video_length", 16) : 1;
	v->image_size = sample * 8;
	add_name(v->assumed, sizeof v->assumed, "", "120 caption tokens, VAE 8x");
}

/* Flux (FluxTransformer2DModel): double-stream blocks (image and text
 * each with AdaLN-Zero 6D, q/k/v/out, q/k RMSNorm per head, GELU FFN 4x)
 * then single-stream blocks (AdaLN 3D, q/k/v, parallel MLP 4x, one
 * output projection from 5D). */
static void read_flux(struct rd *x, const cJSON *c)
{
	struct vf_vision *v = x->v;
	int64_t heads = gi(x, c, "num_attention_heads", 24), hd = gi(x, c, "attention_head_dim", 128);
	int64_t D = width(x, heads, hd, "heads x head dim");
	int64_t in = gi(x, c, "in_channels", 64), out = gi(x, c, "out_channels", in);
	int64_t p = gi(x, c, "patch_size", 1);
	int64_t L2 = gi(x, c, "num_layers", 19), L1 = gi(x, c, "num_single_layers", 38);
	int64_t ctx = gi(x, c, "joint_attention_dim", 4096), pooled = gi(x, c, "pooled_projection_dim", 768);
	bool guidance = gb(x, c, "guidance_embeds", false);
	int64_t dbl = 2 * (D * 6 * D + 6 * D)              /* norm1, norm1_context */
		      + 6 * (D * D + D)                    /* to_q/k/v, add_q/k/v_proj */
		      + 2 * (D * D + D)                    /* to_out.0, to_add_out */
		      + 4 * hd                             /* norm_q/k, norm_added_q/k */
		      + 2 * (D * 4 * D + 4 * D + 4 * D * D + D); /* ff, ff_context */
	int64_t sgl = D * 3 * D + 3 * D                    /* norm.linear */
		      + D * 4 * D + 4 * D                  /* proj_mlp */
		      + 5 * D * D + D                      /* proj_out */
		      + 3 * (D * D + D) + 2 * hd;          /* to_q/k/v, norm_q/k */
	int64_t P = L2 * dbl + L1 * sgl + in * D + D       /* x_embedder */
		    + ctx * D + D                          /* context_embedder */
		    + temb(256, D) * (guidance ? 2 : 1)    /* timestep (and guidance) embedder */
		    + temb(pooled, D)                      /* text_embedder (pooled -> D -> D) */
		    + 2 * D * D + 2 * D                    /* norm_out (AdaLN continuous) */
		    + D * p * p * out + p * p * out;       /* proj_out */
	snprintf(v->family, sizeof v->family, "flux");
	dit_part(v, P, L2 + L1, D, heads);
	v->in_channels = in;
	v->text_dim = ctx;
	v->text_tokens = 512; /* T5 tokens joined to the image tokens */
	v->spatial_compression = (int)(16 * p); /* VAE 8x, latents packed 2x2 */
	v->temporal_compression = 1;
	v->frames = 1;
	v->image_size = 1024;
	add_name(v->assumed, sizeof v->assumed, "", "512 text tokens, VAE 8x with 2x2 packing");
}

/* LTX-Video (LTXVideoTransformer3DModel): per block RMSNorm without weight,
 * self- and cross-attention with q/k RMSNorm across heads (weights D),
 * GELU-tanh FFN 4x, a 6 x D table; AdaLN-single, caption projection. */
static void read_ltx_video(struct rd *x, const cJSON *c)
{
	struct vf_vision *v = x->v;
	int64_t heads = gi(x, c, "num_attention_heads", 32), hd = gi(x, c, "attention_head_dim", 64);
	int64_t D = width(x, heads, hd, "heads x head dim");
	int64_t in = gi(x, c, "in_channels", 128), out = gi(x, c, "out_channels", 128);
	int64_t L = gi(x, c, "num_layers", 28), cross = gi(x, c, "cross_attention_dim", 2048);
	int64_t cc = gi(x, c, "caption_channels", 4096);
	int64_t p = gi(x, c, "patch_size", 1), pt = gi(x, c, "patch_size_t", 1);
	bool qb = gb(x, c, "attention_bias", true), ob = gb(x, c, "attention_out_bias", true);
	const char *const qk[] = {"rms_norm_across_heads", NULL}, *const act[] = {"gelu-approximate", NULL};
	gs_fixed(x, c, "qk_norm", qk);
	gs_fixed(x, c, "activation_fn", act);
	if (gb(x, c, "norm_elementwise_affine", false))
		add_name(v->unknown, sizeof v->unknown, x->prefix, "norm_elementwise_affine");
	int64_t b = qb ? D : 0, o = ob ? D : 0;
	int64_t self = 3 * (D * D + b) + D * D + o + 2 * D;
	int64_t xatt = (D * D + b) + 2 * (cross * D + b) + D * D + o + 2 * D;
	int64_t block = self + xatt + D * 4 * D + 4 * D + 4 * D * D + D + 6 * D;
	int64_t P = in * D + D + L * block + 2 * D + temb(256, D) + 6 * D * D + 6 * D +
		    caption(cc, D) + D * out + out;
	snprintf(v->family, sizeof v->family, "ltx-video");
	dit_part(v, P, L, D, heads);
	v->in_channels = in;
	v->text_dim = cross;
	v->text_tokens = 128;
	v->spatial_compression = (int)(32 * p);
	v->temporal_compression = (int)(8 * pt);
	v->frames = 121;
	v->image_size = 512;
	add_name(v->assumed, sizeof v->assumed, "", "128 caption tokens, VAE 32x spatial and 8x temporal");
}

/* ---- dispatch -------------------------------------------------------------- */

enum vkind { VK_NONE, VK_CLIP, VK_LLAVA, VK_PIXART, VK_LATTE, VK_FLUX, VK_LTXV, VK_DIFFUSERS };

static enum vkind kind_of(const cJSON *cfg, const char **mt)
{
	*mt = vf_json_get_str(cfg, "model_type");
	const char *cls = vf_json_get_str(cfg, "_class_name");
	static const char *const clip[] = {"clip", "clip_vision_model", "clip_text_model", "siglip",
					   "siglip_vision_model", "siglip_text_model", NULL};
	for (const char *const *c = clip; *mt && *c; c++)
		if (strcmp(*mt, *c) == 0)
			return VK_CLIP;
	if (*mt && strcmp(*mt, "llava") == 0)
		return VK_LLAVA;
	if (!cls)
		return VK_NONE;
	const char *norm = vf_json_get_str(cfg, "norm_type");
	if (strcmp(cls, "PixArtTransformer2DModel") == 0 ||
	    (strcmp(cls, "Transformer2DModel") == 0 && norm && strcmp(norm, "ada_norm_single") == 0))
		return VK_PIXART;
	if (strcmp(cls, "LatteTransformer3DModel") == 0)
		return VK_LATTE;
	if (strcmp(cls, "FluxTransformer2DModel") == 0)
		return VK_FLUX;
	if (strcmp(cls, "LTXVideoTransformer3DModel") == 0)
		return VK_LTXV;
	return vf__diffusers_config_is(cfg) ? VK_DIFFUSERS : VK_NONE;
}

bool vf_vision_config_is(const cJSON *cfg)
{
	const char *mt;
	return cJSON_IsObject(cfg) && kind_of(cfg, &mt) != VK_NONE;
}

vf_status vf_vision_from_config(const cJSON *cfg, const char *what, struct vf_vision *v,
				struct vf_error *err)
{
	memset(v, 0, sizeof *v);
	const char *mt;
	enum vkind k = cJSON_IsObject(cfg) ? kind_of(cfg, &mt) : VK_NONE;
	if (k == VK_NONE)
		return vf_error_set(err, VF_ENOTFOUND, "%s: not a vision or diffusion transformer config",
				    what);
	if (k == VK_DIFFUSERS) /* the other diffusers classes (diffusers.c) */
		return vf__diffusers_from_config(cfg, what, v, err);
	struct rd x = {.what = what, .err = err, .v = v, .prefix = ""};
	seen(&x, "_class_name");
	switch (k) {
	case VK_CLIP: read_clip(&x, cfg, mt); break;
	case VK_LLAVA: read_llava(&x, cfg); break;
	case VK_PIXART: read_pixart(&x, cfg, false); break;
	case VK_LATTE: read_pixart(&x, cfg, true); break;
	case VK_FLUX: read_flux(&x, cfg); break;
	default: read_ltx_video(&x, cfg); break;
	}
	if (x.st)
		return x.st;
	if (k >= VK_PIXART)
		check_unknown(&x, cfg);
	for (int i = 0; i < v->nparts; i++)
		v->params += v->parts[i].params;
	return VF_OK;
}

int64_t vf_vision_tokens(const struct vf_vision *v, int w, int h, int frames)
{
	bool latent = strcmp(v->kind, "dit") == 0 || strcmp(v->kind, "unet") == 0;
	if (!latent) {
		if (w <= 0 || h <= 0 || v->patch_size <= 0)
			return v->image_tokens;
		/* a ViT at another resolution: its patches (positions
		 * interpolated), plus the class token when kept */
		int64_t grid = v->image_size / v->patch_size;
		int64_t kept = v->image_tokens - grid * grid;
		return (w / v->patch_size) * (h / v->patch_size) + kept;
	}
	int64_t sc = v->spatial_compression > 0 ? v->spatial_compression : 16;
	int64_t tc = v->temporal_compression > 0 ? v->temporal_compression : 1;
	if (w <= 0 || h <= 0)
		w = h = (int)v->image_size;
	if (frames <= 0)
		frames = (int)(v->frames > 0 ? v->frames : 1);
	int64_t t = tc > 1 ? 1 + (frames - 1 + tc - 1) / tc : frames;
	return ((w + sc - 1) / sc) * ((h + sc - 1) / sc) * t;
}

cJSON *vf_vision_to_json(const struct vf_vision *v)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "family", v->family);
	cJSON_AddStringToObject(o, "kind", v->kind);
	cJSON_AddStringToObject(o, "source", "config.json");
	cJSON_AddNumberToObject(o, "params_from_layout", (double)v->params);
	if (strcmp(v->kind, "dit") == 0 || strcmp(v->kind, "unet") == 0) {
		cJSON_AddNumberToObject(o, "tokens_per_sample", (double)vf_vision_tokens(v, 0, 0, 0));
		cJSON_AddNumberToObject(o, "default_resolution", (double)v->image_size);
		cJSON_AddNumberToObject(o, "default_frames", (double)v->frames);
		cJSON_AddNumberToObject(o, "pixels_per_token", v->spatial_compression);
		cJSON_AddNumberToObject(o, "frames_per_latent", v->temporal_compression);
	} else if (v->image_size > 0) {
		cJSON_AddNumberToObject(o, "image_size", (double)v->image_size);
		cJSON_AddNumberToObject(o, "patch_size", (double)v->patch_size);
		cJSON_AddNumberToObject(o, "image_tokens", (double)v->image_tokens);
	}
	if (strcmp(v->kind, "vae") == 0) {
		cJSON_AddNumberToObject(o, "latent_channels", (double)v->latent_channels);
		cJSON_AddNumberToObject(o, "pixels_per_latent", v->spatial_compression);
	}
	if (v->nlevels) {
		cJSON *lv = cJSON_AddArrayToObject(o, "levels");
		for (int i = 0; i < v->nlevels; i++) {
			cJSON *j = cJSON_CreateObject();
			cJSON_AddNumberToObject(j, "pixel_divisor", (double)v->levels[i].div);
			cJSON_AddNumberToObject(j, "width", (double)v->levels[i].width);
			cJSON_AddNumberToObject(j, "resnets", (double)v->levels[i].resnets);
			cJSON_AddNumberToObject(j, "transformer_blocks", (double)v->levels[i].attn_blocks);
			cJSON_AddNumberToObject(j, "params", (double)v->levels[i].params);
			cJSON_AddItemToArray(lv, j);
		}
	}
	cJSON *parts = cJSON_AddArrayToObject(o, "parts");
	for (int i = 0; i < v->nparts; i++) {
		const struct vf_vision_part *p = &v->parts[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", p->name);
		cJSON_AddNumberToObject(j, "params", (double)p->params);
		cJSON_AddNumberToObject(j, "layers", (double)p->layers);
		cJSON_AddNumberToObject(j, "hidden", (double)p->hidden);
		cJSON *st = cJSON_AddArrayToObject(j, "trained_in_stage");
		for (int s = 0; s < v->stages; s++)
			cJSON_AddItemToArray(st, cJSON_CreateBool(p->trained[s]));
		cJSON_AddItemToArray(parts, j);
	}
	vf_json_add_list(o, "not_understood", v->unknown);
	cJSON_AddBoolToObject(o, "approximate", v->unknown[0] != 0);
	cJSON_AddStringToObject(o, "assumed", v->assumed);
	return o;
}
