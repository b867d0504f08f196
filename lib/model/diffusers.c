/* diffusers.c - diffusers model configs (a component folder's config.json
 * with a "_class_name") that vision.c does not read itself: the Wan video
 * transformer (and its VACE variant), UNet2DConditionModel in all its
 * config forms (integers or lists per block), AutoencoderKL and the video
 * VAEs (Wan, HunyuanVideo, CogVideoX, Mochi, LTX-Video, LTX-2 video and
 * audio), SANA's AutoencoderDC; any other _class_name is reported as not
 * understood, naming the class (kind "unknown", no count), never refused.
 * The LTX, LTX-2, DC-AE and VACE layouts are documented above their
 * readers (facts read from diffusers' autoencoder_kl_ltx.py,
 * autoencoder_kl_ltx2.py, autoencoder_kl_ltx2_audio.py, autoencoder_dc.py,
 * transformer_wan_vace.py; no code copied).
 *
 * Layouts counted (facts read from the public diffusers modelling code; no
 * code copied):
 *  - Wan (WanTransformer3DModel): a 3-D patch conv; time embedding
 *    (freq -> D -> D), its projection D -> 6D, the text projection
 *    (text -> D -> D, GELU-tanh), an optional image embedder (LayerNorm,
 *    GELU MLP image -> image -> D, LayerNorm, optional positions); per
 *    block self- and cross-attention with q/k/v/out biases and q/k
 *    RMSNorm across heads (D each), the cross-attention's optional image
 *    k/v (added_kv_proj_dim) with its k norm, an affine LayerNorm before
 *    the cross-attention (cross_attn_norm), GELU-tanh FFN D -> F -> D, a
 *    6 x D table; the output projection and a 2 x D table.
 *  - UNet2DConditionModel: conv_in, the time embedding (C0 -> T -> T,
 *    T = time_embedding_dim or 4 C0), class / addition / encoder
 *    projections by type, down blocks (residual blocks, Transformer2D
 *    stacks when cross-attention, a strided conv), the mid block, up
 *    blocks (one residual block more, skip channels concatenated, a conv
 *    after upsampling), GroupNorm and conv_out. A residual block: two
 *    GroupNorms, two 3x3 convs, the time projection (doubled for
 *    scale_shift), a 1x1 shortcut when the widths differ. A Transformer2D:
 *    GroupNorm, proj_in and proj_out (linear or 1x1, same count), blocks of
 *    three LayerNorms, self-attention (q/k/v without bias, out with bias),
 *    cross-attention from the text width, GEGLU FFN D -> 8D, 4D -> D. The
 *    heads (attention_head_dim, which diffusers reads as the head count)
 *    set the inner width (C / heads) x heads.
 *  - AutoencoderKL: encoder (conv_in, residual blocks without time input,
 *    strided convs, a mid block of residual - attention (GroupNorm,
 *    q/k/v/out with biases) - residual, GroupNorm, conv_out to twice the
 *    latent channels), quant_conv and post_quant_conv (1x1), decoder
 *    (conv_in, mid block, up blocks of layers_per_block + 1 residual
 *    blocks and a conv after upsampling, GroupNorm, conv_out). */
#include "diffusers-internal.h"

#include <stdio.h>
#include <string.h>

#include "vramfit/base/json.h"

#define MAX_BLOCKS VF_VISION_MAX_LEVELS
/* Bounds that keep every count below 2^62 (the largest public models are
 * far inside them): transformer widths 2^18, conv widths 2^16, repeats
 * (layers per block, transformer layers, residual blocks) 1024. */
#define DIM_MAX (1LL << 18)
#define CONV_MAX (1LL << 16)
#define REPEAT_MAX 1024

struct dr {
	const char *what;
	struct vf_error *err;
	vf_status st;
	struct vf_vision *v;
};

static void note(char *list, size_t n, const char *name)
{
	size_t len = strlen(list);
	if (len + 2 >= n)
		return;
	snprintf(list + len, n - len, "%s%s", len ? ", " : "", name);
}

static void fail(struct dr *x, const char *key, const char *expected)
{
	if (!x->st)
		x->st = vf_error_set(x->err, VF_ERR, "%s: field %s: expected %s", x->what, key, expected);
}

/* A whole number min..max from a JSON number, or dflt when absent / null. */
static int64_t num(struct dr *x, const cJSON *n, const char *key, int64_t dflt, int64_t min, int64_t max)
{
	if (!n || cJSON_IsNull(n))
		return dflt;
	int64_t v;
	if (!vf_json_number_is_i64(n, &v) || v < min || v > max) {
		char e[64];
		snprintf(e, sizeof e, "a whole number %lld-%lld", (long long)min, (long long)max);
		fail(x, key, e);
		return dflt;
	}
	return v;
}

static int64_t gint(struct dr *x, const cJSON *c, const char *key, int64_t dflt)
{
	return num(x, cJSON_GetObjectItemCaseSensitive(c, key), key, dflt, 1, DIM_MAX);
}

/* An integer or a list of n integers (one per block); returns false when
 * the key is a list of another length (an error). */
static int64_t gint_max(struct dr *x, const cJSON *c, const char *key, int64_t dflt, int64_t max)
{
	return num(x, cJSON_GetObjectItemCaseSensitive(c, key), key, dflt, 1, max);
}

static void glist(struct dr *x, const cJSON *c, const char *key, int n, int64_t *out, int64_t dflt,
		  int64_t min, int64_t max)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(c, key);
	for (int i = 0; i < n; i++)
		out[i] = dflt;
	if (!j || cJSON_IsNull(j))
		return;
	if (cJSON_IsNumber(j)) {
		int64_t v = num(x, j, key, dflt, min, max);
		for (int i = 0; i < n; i++)
			out[i] = v;
		return;
	}
	if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != n) {
		char e[80];
		snprintf(e, sizeof e, "a whole number or a list of %d (one per block)", n);
		fail(x, key, e);
		return;
	}
	for (int i = 0; i < n; i++)
		out[i] = num(x, cJSON_GetArrayItem(j, i), key, dflt, min, max);
}

static bool gbool(struct dr *x, const cJSON *c, const char *key, bool dflt)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(c, key);
	if (!j || cJSON_IsNull(j))
		return dflt;
	if (!cJSON_IsBool(j)) {
		fail(x, key, "true or false");
		return dflt;
	}
	return cJSON_IsTrue(j);
}

/* A string key whose value must be one of ok[] (NULL-terminated; "" stands
 * for null / absent): another value is named not understood. */
static const char *gstr(struct dr *x, const cJSON *c, const char *key, const char *const *ok)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(c, key);
	const char *s = cJSON_IsString(j) ? j->valuestring : "";
	if (j && !cJSON_IsNull(j) && !cJSON_IsString(j)) {
		fail(x, key, "a string");
		return "";
	}
	for (; *ok; ok++)
		if (strcmp(s, *ok) == 0)
			return s;
	note(x->v->unknown, sizeof x->v->unknown, key);
	return s;
}

/* Name every key of c that is not in keys[] (the class's constructor
 * arguments this reader judged) and not private ("_class_name", ...). */
static void check_keys(struct dr *x, const cJSON *c, const char *const *keys)
{
	const cJSON *k;
	cJSON_ArrayForEach(k, c)
	{
		if (k->string[0] == '_')
			continue;
		bool known = false;
		for (const char *const *p = keys; *p && !known; p++)
			known = strcmp(*p, k->string) == 0;
		if (!known)
			note(x->v->unknown, sizeof x->v->unknown, k->string);
	}
}

/* ---- Wan ------------------------------------------------------------------ */

static void dit_model(struct vf_vision *v, const char *family, int64_t P, int64_t L, int64_t D,
		      int64_t heads, int64_t ffn);

static const char *const wan_keys[] = {
	"patch_size", "num_attention_heads", "attention_head_dim", "in_channels", "out_channels",
	"text_dim", "freq_dim", "ffn_dim", "num_layers", "cross_attn_norm", "qk_norm", "eps",
	"image_dim", "added_kv_proj_dim", "rope_max_seq_len", "pos_embed_seq_len", NULL,
};

/* A linear layer with bias. */
static int64_t lin(int64_t in, int64_t out)
{
	return in * out + out;
}

/* The Wan transformer's shape and counts, shared by WanTransformer3DModel
 * and WanVACETransformer3DModel. */
struct wan_shape {
	int64_t p[3], heads, D, F, L, in, block, P;
};

static bool wan_common(struct dr *x, const cJSON *c, struct wan_shape *w)
{
	w->p[0] = 1;
	w->p[1] = w->p[2] = 2;
	const cJSON *pj = cJSON_GetObjectItemCaseSensitive(c, "patch_size");
	if (pj && (!cJSON_IsArray(pj) || cJSON_GetArraySize(pj) != 3))
		fail(x, "patch_size", "a list of 3 (frames, height, width)");
	else if (pj)
		for (int i = 0; i < 3; i++)
			w->p[i] = num(x, cJSON_GetArrayItem(pj, i), "patch_size", w->p[i], 1, 64);
	w->heads = gint(x, c, "num_attention_heads", 40);
	int64_t hd = gint(x, c, "attention_head_dim", 128);
	w->in = gint(x, c, "in_channels", 16);
	int64_t out = gint(x, c, "out_channels", w->in);
	int64_t text = gint(x, c, "text_dim", 4096), freq = gint(x, c, "freq_dim", 256);
	w->F = gint(x, c, "ffn_dim", 13824);
	w->L = num(x, cJSON_GetObjectItemCaseSensitive(c, "num_layers"), "num_layers", 40, 1, 1 << 14);
	bool cnorm = gbool(x, c, "cross_attn_norm", true);
	int64_t img = gint(x, c, "image_dim", 0), added = gint(x, c, "added_kv_proj_dim", 0);
	int64_t pos = num(x, cJSON_GetObjectItemCaseSensitive(c, "pos_embed_seq_len"), "pos_embed_seq_len",
			  0, 1, 1 << 24);
	static const char *const qk[] = {"rms_norm_across_heads", "", NULL};
	gstr(x, c, "qk_norm", qk);
	int64_t D = w->D = w->heads * hd, F = w->F;
	if (D > DIM_MAX)
		fail(x, "num_attention_heads", "heads x head dim at most 262144");
	if (x->st)
		return false;
	int64_t pp = w->p[0] * w->p[1] * w->p[2];
	int64_t attn = 4 * lin(D, D) + 2 * D;                  /* q, k, v, out; norm_q, norm_k */
	int64_t cross = attn + (added ? 2 * lin(added, D) + D : 0); /* + image k/v, norm_added_k */
	w->block = attn + cross + (cnorm ? 2 * D : 0)          /* norm2 */
		   + lin(D, F) + lin(F, D)                     /* ffn */
		   + 6 * D;                                    /* scale_shift_table */
	w->P = w->in * pp * D + D                              /* patch_embedding (Conv3d) */
	       + lin(freq, D) + lin(D, D)                      /* time_embedder */
	       + lin(D, 6 * D)                                 /* time_proj */
	       + lin(text, D) + lin(D, D)                      /* text_embedder */
	       + w->L * w->block + lin(D, out * pp) + 2 * D;   /* blocks, proj_out, scale_shift_table */
	if (img)                                               /* image_embedder */
		w->P += 2 * img + lin(img, img) + lin(img, D) + 2 * D + pos * img;
	return true;
}

/* The latent grid and defaults of a Wan pipeline. */
static void wan_grid(struct vf_vision *v, const struct wan_shape *w)
{
	v->in_channels = w->in;
	v->patch_size = w->p[1];
	v->text_dim = w->D; /* the caption is projected to D before the blocks */
	v->text_tokens = 512;
	/* Wan 2.1 VAE: 8x spatial, 4x temporal, 16 channels; Wan 2.2's
	 * TI2V VAE: 16x spatial, 48 channels */
	int vae = w->in == 48 ? 16 : 8;
	v->spatial_compression = (int)(vae * w->p[1]);
	v->temporal_compression = (int)(4 * w->p[0]);
	v->frames = 81;
	v->image_size = 832;
	note(v->assumed, sizeof v->assumed,
	     w->in == 48 ? "512 UMT5 tokens, VAE 16x spatial and 4x temporal (Wan 2.2 TI2V)"
			 : "512 UMT5 tokens, VAE 8x spatial and 4x temporal (Wan 2.1)");
}

static void read_wan(struct dr *x, const cJSON *c)
{
	struct wan_shape w;
	if (!wan_common(x, c, &w))
		return;
	dit_model(x->v, "wan", w.P, w.L, w.D, w.heads, w.F);
	wan_grid(x->v, &w);
	check_keys(x, c, wan_keys);
}

static const char *const wan_vace_keys[] = {
	"patch_size", "num_attention_heads", "attention_head_dim", "in_channels", "out_channels",
	"text_dim", "freq_dim", "ffn_dim", "num_layers", "cross_attn_norm", "qk_norm", "eps",
	"image_dim", "added_kv_proj_dim", "rope_max_seq_len", "pos_embed_seq_len", "vace_layers",
	"vace_in_channels", NULL,
};

/* WanVACETransformer3DModel (diffusers transformer_wan_vace.py): the Wan
 * transformer plus a control patch conv (vace_in_channels -> D) and one
 * VACE block per vace_layers entry: a Wan block with an output projection
 * D -> D, the first also with an input projection D -> D. The control
 * tokens run the VACE blocks beside the main stream (as many tokens). */
static void read_wan_vace(struct dr *x, const cJSON *c)
{
	struct wan_shape w;
	if (!wan_common(x, c, &w))
		return;
	int64_t vin = gint_max(x, c, "vace_in_channels", 96, CONV_MAX), nv = 8;
	const cJSON *vl = cJSON_GetObjectItemCaseSensitive(c, "vace_layers");
	if (vl && !cJSON_IsNull(vl)) {
		if (!cJSON_IsArray(vl) || cJSON_GetArraySize(vl) < 1 || cJSON_GetArraySize(vl) > w.L)
			fail(x, "vace_layers", "a list of 1 to num_layers layer indices");
		else
			nv = cJSON_GetArraySize(vl);
		bool zero = false;
		for (int i = 0; !x->st && i < nv; i++) {
			int64_t li = num(x, cJSON_GetArrayItem(vl, i), "vace_layers", 0, 0, w.L - 1);
			zero = zero || li == 0;
		}
		if (!x->st && !zero)
			fail(x, "vace_layers", "a list that includes layer 0");
	} else if (w.L <= 35) {
		fail(x, "vace_layers", "a list of layer indices below num_layers (the default reaches 35)");
	}
	if (x->st)
		return;
	int64_t pp = w.p[0] * w.p[1] * w.p[2];
	int64_t vace = vin * pp * w.D + w.D                        /* vace_patch_embedding */
		       + nv * (w.block + lin(w.D, w.D))            /* blocks and their proj_out */
		       + lin(w.D, w.D);                            /* the first block's proj_in */
	dit_model(x->v, "wan-vace", w.P + vace, w.L, w.D, w.heads, w.F);
	x->v->dit_layers = w.L + nv; /* the control tokens pass the VACE blocks too */
	wan_grid(x->v, &w);
	char n[96];
	snprintf(n, sizeof n, "%lld VACE blocks over as many control tokens", (long long)nv);
	note(x->v->assumed, sizeof x->v->assumed, n);
	check_keys(x, c, wan_vace_keys);
}

/* ---- SD3 / SD3.5 MMDiT ---------------------------------------------------- */

static const char *const sd3_keys[] = {
	"sample_size", "patch_size", "in_channels", "num_layers", "attention_head_dim",
	"num_attention_heads", "joint_attention_dim", "caption_projection_dim",
	"pooled_projection_dim", "out_channels", "pos_embed_max_size", "dual_attention_layers",
	"qk_norm", NULL,
};

/* The model's one trained part, named part (P parameters, L blocks of
 * width D, heads, an FFN of ffn), trained in its one stage: what a DiT
 * and a UNet (kind) set alike. */
static void trained_part(struct vf_vision *v, const char *family, const char *kind, const char *part, int64_t P,
			 int64_t L, int64_t D, int64_t heads, int64_t ffn)
{
	snprintf(v->family, sizeof v->family, "%s", family);
	snprintf(v->kind, sizeof v->kind, "%s", kind);
	struct vf_vision_part *t = &v->parts[v->nparts++];
	snprintf(t->name, sizeof t->name, "%s", part);
	t->params = P;
	t->layers = L;
	t->hidden = D;
	t->heads = heads;
	t->ffn = ffn;
	t->trained[0] = true;
	v->stages = 1;
	v->dit_layers = L;
}

/* A DiT block of the common shape a diffusers config reads: adds it as
 * the model's one part. */
static void dit_model(struct vf_vision *v, const char *family, int64_t P, int64_t L, int64_t D,
		      int64_t heads, int64_t ffn)
{
	trained_part(v, family, "dit", "transformer", P, L, D, heads, ffn);
}

/* SD3Transformer2DModel: a patch conv with the persistent position table
 * (pos_embed_max_size^2 x D, a buffer the checkpoint holds); time (256 ->
 * D -> D) and pooled-text (pooled -> D -> D) embedders; the caption
 * projection joint -> caption_projection_dim; joint blocks of AdaLN-Zero
 * 6D (SD3.5's dual-attention blocks 9D), the text stream's AdaLN-Zero (the
 * last block: continuous 2D, no text FFN or output), q/k/v and text
 * q/k/v with biases, outputs, q/k RMSNorms per head (qk_norm), a second
 * self-attention in the dual blocks, GELU-tanh FFNs 4x; AdaLN continuous
 * 2D and the output projection. */
static void read_sd3(struct dr *x, const cJSON *c)
{
	struct vf_vision *v = x->v;
	int64_t heads = gint(x, c, "num_attention_heads", 18), hd = gint(x, c, "attention_head_dim", 64);
	int64_t in = gint(x, c, "in_channels", 16), out = gint(x, c, "out_channels", in);
	int64_t p = gint_max(x, c, "patch_size", 2, 64);
	int64_t L = gint_max(x, c, "num_layers", 18, 1 << 14);
	int64_t joint = gint(x, c, "joint_attention_dim", 4096), cap = gint(x, c, "caption_projection_dim", 1152);
	int64_t pooled = gint(x, c, "pooled_projection_dim", 2048);
	int64_t pos = gint_max(x, c, "pos_embed_max_size", 96, 1 << 12);
	static const char *const qkn[] = {"", "rms_norm", NULL};
	bool qk = strcmp(gstr(x, c, "qk_norm", qkn), "rms_norm") == 0;
	const cJSON *dl = cJSON_GetObjectItemCaseSensitive(c, "dual_attention_layers");
	if (dl && !cJSON_IsNull(dl) && !cJSON_IsArray(dl))
		fail(x, "dual_attention_layers", "a list of block indices");
	int64_t D = heads * hd;
	if (D > DIM_MAX)
		fail(x, "num_attention_heads", "heads x head dim at most 262144");
	if (x->st)
		return;
	int64_t ndual = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, dl)
	{
		int64_t i;
		if (vf_json_number_is_i64(e, &i) && i >= 0 && i < L)
			ndual++;
	}
	int64_t ff = lin(D, 4 * D) + lin(4 * D, D);
	int64_t qkn_w = qk ? 2 * hd : 0;
	/* every block: image AdaLN-Zero, q k v out, text k v q, image FFN */
	int64_t common = lin(D, 6 * D) + 4 * lin(D, D) + 3 * lin(D, D) + qkn_w + (qk ? 2 * hd : 0) + ff;
	int64_t full = lin(D, 6 * D) + lin(D, D) + ff;      /* text AdaLN-Zero, to_add_out, text FFN */
	int64_t last = lin(D, 2 * D);                       /* the last block's text AdaLN continuous */
	int64_t dual = lin(D, 3 * D) + 4 * lin(D, D) + qkn_w; /* 9D instead of 6D; the second attention */
	int64_t P = lin(in * p * p, D) + pos * pos * D        /* pos_embed: conv, table */
		    + lin(256, D) + lin(D, D)                /* timestep_embedder */
		    + lin(pooled, D) + lin(D, D)             /* text_embedder */
		    + lin(joint, cap)                        /* context_embedder */
		    + L * common + (L - 1) * full + last + ndual * dual
		    + lin(D, 2 * D) + lin(D, p * p * out);   /* norm_out, proj_out */
	dit_model(v, "sd3", P, L, D, heads, 4 * D);
	v->in_channels = in;
	v->text_dim = cap;
	v->text_tokens = 333;
	v->spatial_compression = (int)(8 * p);
	v->temporal_compression = 1;
	v->frames = 1;
	v->patch_size = p;
	v->image_size = 1024;
	note(v->assumed, sizeof v->assumed,
	     "333 text tokens (77 CLIP + 256 T5) joined to the image tokens, counted as cross-attention "
	     "context; VAE 8x; the position table (a buffer the checkpoint holds) counted");
	check_keys(x, c, sd3_keys);
}

/* ---- CogVideoX ----------------------------------------------------------- */

static const char *const cogvideox_keys[] = {
	"num_attention_heads", "attention_head_dim", "in_channels", "out_channels", "flip_sin_to_cos",
	"freq_shift", "time_embed_dim", "ofs_embed_dim", "text_embed_dim", "num_layers", "dropout",
	"attention_bias", "sample_width", "sample_height", "sample_frames", "patch_size",
	"patch_size_t", "temporal_compression_ratio", "max_text_seq_length", "activation_fn",
	"timestep_activation_fn", "norm_elementwise_affine", "norm_eps", "spatial_interpolation_scale",
	"temporal_interpolation_scale", "use_rotary_positional_embeddings",
	"use_learned_positional_embeddings", "patch_bias", NULL,
};

/* CogVideoXTransformer3DModel: the patch embedding (a conv, or a linear
 * over p x p x pt patches in 1.5), the text projection, a learned joint
 * position table when use_learned_positional_embeddings (a persistent
 * buffer of (text + patches) x D); the time embedding D -> T -> T (and
 * the ofs embedding of 1.5); per block two LayerNorm-Zero modulations
 * (T -> 6D and an affine LayerNorm), self-attention over text and video
 * (q/k/v with attention_bias, out with bias, per-head LayerNorms of q and
 * k), a GELU-tanh FFN 4x with biases; the final LayerNorm, AdaLN T -> 2D
 * with its LayerNorm, the output projection. */
static void read_cogvideox(struct dr *x, const cJSON *c)
{
	struct vf_vision *v = x->v;
	int64_t heads = gint(x, c, "num_attention_heads", 30), hd = gint(x, c, "attention_head_dim", 64);
	int64_t in = gint(x, c, "in_channels", 16), out = gint(x, c, "out_channels", 16);
	int64_t T = gint(x, c, "time_embed_dim", 512), ofs = gint(x, c, "ofs_embed_dim", 0);
	int64_t text = gint(x, c, "text_embed_dim", 4096);
	int64_t L = gint_max(x, c, "num_layers", 30, 1 << 14);
	int64_t p = gint_max(x, c, "patch_size", 2, 64), pt = gint_max(x, c, "patch_size_t", 0, 64);
	int64_t sw = gint_max(x, c, "sample_width", 90, 1 << 12), sh = gint_max(x, c, "sample_height", 60, 1 << 12);
	int64_t sf = gint_max(x, c, "sample_frames", 49, 1 << 12);
	int64_t tcr = gint_max(x, c, "temporal_compression_ratio", 4, 64);
	int64_t mtl = gint_max(x, c, "max_text_seq_length", 226, 1 << 16);
	bool qb = gbool(x, c, "attention_bias", true), affine = gbool(x, c, "norm_elementwise_affine", true);
	bool pb = gbool(x, c, "patch_bias", true);
	bool rope = gbool(x, c, "use_rotary_positional_embeddings", false);
	bool learned = gbool(x, c, "use_learned_positional_embeddings", false);
	static const char *const act[] = {"gelu-approximate", "", NULL};
	gstr(x, c, "activation_fn", act);
	int64_t D = heads * hd;
	if (D > DIM_MAX)
		fail(x, "num_attention_heads", "heads x head dim at most 262144");
	if (x->st)
		return;
	int64_t ln = affine ? 2 * D : 0;
	int64_t patches = (sh / p) * (sw / p) * ((sf - 1) / tcr + 1);
	int64_t block = 2 * (lin(T, 6 * D) + ln)                   /* norm1, norm2 */
			+ 3 * (D * D + (qb ? D : 0)) + lin(D, D)   /* q, k, v, out */
			+ 2 * 2 * hd                               /* norm_q, norm_k (LayerNorm) */
			+ lin(D, 4 * D) + lin(4 * D, D);           /* ff */
	int64_t P = (pt ? lin(in * p * p * pt, D) : in * p * p * D + (pb ? D : 0)) /* patch_embed.proj */
		    + lin(text, D)                                            /* patch_embed.text_proj */
		    + (learned && !rope ? (mtl + patches) * D : 0)            /* learned joint positions */
		    + lin(D, T) + lin(T, T)                                   /* time_embedding */
		    + (ofs ? 2 * lin(ofs, ofs) : 0)                           /* ofs_embedding */
		    + L * block + ln                                          /* blocks, norm_final */
		    + lin(T, 2 * D) + ln                                      /* norm_out */
		    + lin(D, p * p * (pt ? pt : 1) * out);                    /* proj_out */
	dit_model(v, "cogvideox", P, L, D, heads, 4 * D);
	v->in_channels = in;
	v->text_dim = D;
	v->text_tokens = mtl;
	v->spatial_compression = (int)(8 * p);
	v->temporal_compression = (int)(tcr * (pt ? pt : 1));
	v->frames = sf;
	v->patch_size = p;
	v->image_size = sw * 8;
	note(v->assumed, sizeof v->assumed,
	     "the T5 caption tokens join the video tokens (joint attention), counted as cross-attention "
	     "context; VAE 8x spatial and 4x temporal");
	check_keys(x, c, cogvideox_keys);
}

/* ---- HunyuanVideo --------------------------------------------------------- */

static const char *const hunyuan_keys[] = {
	"in_channels", "out_channels", "num_attention_heads", "attention_head_dim", "num_layers",
	"num_single_layers", "num_refiner_layers", "mlp_ratio", "patch_size", "patch_size_t",
	"qk_norm", "guidance_embeds", "text_embed_dim", "pooled_projection_dim", "rope_theta",
	"rope_axes_dim", "image_condition_type", NULL,
};

/* HunyuanVideoTransformer3DModel: a 3-D patch conv; the token refiner
 * (time and mean-text embedders, text -> D, refiner blocks of affine
 * LayerNorms, self-attention with biases, a SiLU MLP, a gate table D ->
 * 2D); time, pooled-text and guidance embedders; double-stream blocks
 * (AdaLN-Zero 6D for video and text, q/k/v and text q/k/v with biases,
 * outputs, per-head q/k RMSNorms for both streams, GELU-tanh FFNs for
 * both) and single-stream blocks (AdaLN 3D, q/k/v, per-head norms, the
 * MLP and one output projection from D + mlp); AdaLN continuous 2D and
 * the output projection. */
static void read_hunyuan_video(struct dr *x, const cJSON *c)
{
	struct vf_vision *v = x->v;
	int64_t heads = gint(x, c, "num_attention_heads", 24), hd = gint(x, c, "attention_head_dim", 128);
	int64_t in = gint(x, c, "in_channels", 16), out = gint(x, c, "out_channels", in);
	int64_t L2 = gint_max(x, c, "num_layers", 20, 1 << 14), L1 = gint_max(x, c, "num_single_layers", 40, 1 << 14);
	int64_t Lr = gint_max(x, c, "num_refiner_layers", 2, 1 << 14);
	int64_t p = gint_max(x, c, "patch_size", 2, 64), pt = gint_max(x, c, "patch_size_t", 1, 64);
	int64_t text = gint(x, c, "text_embed_dim", 4096), pooled = gint(x, c, "pooled_projection_dim", 768);
	bool guidance = gbool(x, c, "guidance_embeds", true);
	static const char *const qkn[] = {"rms_norm", NULL}, *const ict[] = {"", "latent_concat", NULL};
	gstr(x, c, "qk_norm", qkn);
	gstr(x, c, "image_condition_type", ict);
	double ratio = 4.0;
	const cJSON *mr = cJSON_GetObjectItemCaseSensitive(c, "mlp_ratio");
	if (mr && !cJSON_IsNull(mr) && (!cJSON_IsNumber(mr) || !(mr->valuedouble > 0) || mr->valuedouble > 64))
		fail(x, "mlp_ratio", "a number above 0, at most 64");
	else if (mr && cJSON_IsNumber(mr))
		ratio = mr->valuedouble;
	int64_t D = heads * hd;
	if (D > DIM_MAX)
		fail(x, "num_attention_heads", "heads x head dim at most 262144");
	if (x->st)
		return;
	int64_t M = (int64_t)((double)D * ratio); /* int(hidden * mlp_ratio) */
	int64_t refiner = 2 * 2 * D + 4 * lin(D, D) + lin(D, M) + lin(M, D) + lin(D, 2 * D);
	int64_t temb = lin(256, D) + lin(D, D);
	int64_t dbl = 2 * lin(D, 6 * D) + 6 * lin(D, D) + 2 * lin(D, D) + 4 * hd + 2 * (lin(D, M) + lin(M, D));
	int64_t sgl = lin(D, 3 * D) + 3 * lin(D, D) + 2 * hd + lin(D, M) + lin(D + M, D);
	int64_t P = in * pt * p * p * D + D                           /* x_embedder */
		    + temb + lin(text, D) + lin(D, D) + lin(text, D)  /* refiner's embedders, proj_in */
		    + Lr * refiner
		    + temb + lin(pooled, D) + lin(D, D)               /* time and pooled-text embedders */
		    + (guidance ? temb : 0)
		    + L2 * dbl + L1 * sgl
		    + lin(D, 2 * D) + lin(D, pt * p * p * out);       /* norm_out, proj_out */
	dit_model(v, "hunyuan-video", P, L2 + L1, D, heads, M);
	v->in_channels = in;
	v->text_dim = D;
	v->text_tokens = 256;
	v->spatial_compression = (int)(8 * p);
	v->temporal_compression = (int)(4 * pt);
	v->frames = 129;
	v->patch_size = p;
	v->image_size = 720;
	note(v->assumed, sizeof v->assumed,
	     "256 LLM text tokens joined to the video tokens (joint attention), counted as cross-attention "
	     "context; VAE 8x spatial and 4x temporal");
	check_keys(x, c, hunyuan_keys);
}

/* ---- SANA --------------------------------------------------------------------- */

static const char *const sana_keys[] = {
	"in_channels", "out_channels", "num_attention_heads", "attention_head_dim", "num_layers",
	"num_cross_attention_heads", "cross_attention_head_dim", "cross_attention_dim",
	"caption_channels", "mlp_ratio", "dropout", "attention_bias", "sample_size", "patch_size",
	"norm_elementwise_affine", "norm_eps", "interpolation_scale", "guidance_embeds",
	"guidance_embeds_scale", "qk_norm", "timestep_scale", NULL,
};

/* q/k norm weights of one attention (inner widths q and kv, head dim hd). */
static int64_t qk_weights(const char *qk, int64_t q, int64_t kv, int64_t hd)
{
	if (strcmp(qk, "rms_norm_across_heads") == 0)
		return q + kv;
	return strcmp(qk, "rms_norm") == 0 ? 2 * hd : 0;
}

/* SanaTransformer2DModel: a patch conv (its sin-cos table is not stored);
 * AdaLN-single (time 256 -> D -> D and D -> 6D; with guidance_embeds a
 * guidance embedder too); the caption projection and its RMSNorm; per
 * block linear self-attention (q/k/v with attention_bias, out with bias),
 * the optional affine LayerNorm, cross-attention from the caption width
 * (its own heads, biases), the GLU-MBConv FFN (1x1 D -> 2h, depthwise 3x3
 * over 2h, 1x1 h -> D without bias, h = mlp_ratio x D), a 6 x D table;
 * the final 2 x D table and the output projection. */
static void read_sana(struct dr *x, const cJSON *c)
{
	struct vf_vision *v = x->v;
	int64_t heads = gint(x, c, "num_attention_heads", 70), hd = gint(x, c, "attention_head_dim", 32);
	int64_t ch = gint(x, c, "num_cross_attention_heads", 20), chd = gint(x, c, "cross_attention_head_dim", 112);
	int64_t cross = gint(x, c, "cross_attention_dim", 2240), cap = gint(x, c, "caption_channels", 2304);
	int64_t in = gint(x, c, "in_channels", 32), out = gint(x, c, "out_channels", in);
	int64_t L = gint_max(x, c, "num_layers", 20, 1 << 14), p = gint_max(x, c, "patch_size", 1, 64);
	bool qb = gbool(x, c, "attention_bias", false), affine = gbool(x, c, "norm_elementwise_affine", false);
	bool guidance = gbool(x, c, "guidance_embeds", false);
	static const char *const qkn[] = {"", "rms_norm", "rms_norm_across_heads", NULL};
	const char *qk = gstr(x, c, "qk_norm", qkn);
	double ratio = 2.5;
	const cJSON *mr = cJSON_GetObjectItemCaseSensitive(c, "mlp_ratio");
	if (mr && !cJSON_IsNull(mr) && (!cJSON_IsNumber(mr) || !(mr->valuedouble > 0) || mr->valuedouble > 64))
		fail(x, "mlp_ratio", "a number above 0, at most 64");
	else if (mr && cJSON_IsNumber(mr))
		ratio = mr->valuedouble;
	int64_t D = heads * hd, I2 = ch * chd;
	if (D > DIM_MAX || I2 > DIM_MAX)
		fail(x, "num_attention_heads", "heads x head dim at most 262144");
	if (x->st)
		return;
	int64_t h = (int64_t)(ratio * (double)D);
	int64_t self = 3 * (D * D + (qb ? D : 0)) + lin(D, D) + qk_weights(qk, D, D, hd);
	int64_t xatt = lin(D, I2) + 2 * lin(cross, I2) + lin(I2, D) + qk_weights(qk, I2, I2, chd);
	int64_t ff = lin(D, 2 * h) + 2 * h * 9 + 2 * h + h * D;
	int64_t block = self + (affine ? 2 * D : 0) + xatt + ff + 6 * D;
	int64_t P = lin(in * p * p, D)                                     /* patch_embed.proj */
		    + lin(256, D) + lin(D, D) + (guidance ? lin(256, D) + lin(D, D) : 0) + lin(D, 6 * D)
		    + lin(cap, D) + lin(D, D) + D                           /* caption projection, norm */
		    + L * block + 2 * D + lin(D, p * p * out);
	dit_model(v, "sana", P, L, D, heads, h);
	v->in_channels = in;
	v->text_dim = cross;
	v->text_tokens = 300;
	v->spatial_compression = (int)(32 * p);
	v->temporal_compression = 1;
	v->frames = 1;
	v->patch_size = p;
	v->image_size = 1024;
	note(v->assumed, sizeof v->assumed, "300 Gemma caption tokens, DC-AE 32x");
	check_keys(x, c, sana_keys);
}

/* ---- AuraFlow ----------------------------------------------------------------- */

static const char *const auraflow_keys[] = {
	"sample_size", "patch_size", "in_channels", "num_mmdit_layers", "num_single_dit_layers",
	"attention_head_dim", "num_attention_heads", "joint_attention_dim", "caption_projection_dim",
	"out_channels", "pos_embed_max_size", NULL,
};

/* AuraFlowTransformer2DModel: a linear patch embedding with a learned
 * position table (pos_embed_max_size x D), the caption projection (no
 * bias), the time embedding; joint blocks (AdaLN-Zero 6D without bias for
 * both streams, q/k/v and text q/k/v and both outputs without bias, q/k
 * norms without weights, SwiGLU FFNs of width 2/3 x 4D rounded up to 256
 * for both streams) and single blocks; AdaLN D -> 2D, the output
 * projection and 8 register tokens, none with biases. */
static void read_auraflow(struct dr *x, const cJSON *c)
{
	struct vf_vision *v = x->v;
	int64_t heads = gint(x, c, "num_attention_heads", 12), hd = gint(x, c, "attention_head_dim", 256);
	int64_t in = gint(x, c, "in_channels", 4), out = gint(x, c, "out_channels", 4);
	int64_t p = gint_max(x, c, "patch_size", 2, 64);
	int64_t L2 = gint_max(x, c, "num_mmdit_layers", 4, 1 << 14);
	int64_t L1 = gint_max(x, c, "num_single_dit_layers", 32, 1 << 14);
	int64_t joint = gint(x, c, "joint_attention_dim", 2048), cap = gint(x, c, "caption_projection_dim", 3072);
	int64_t pos = gint_max(x, c, "pos_embed_max_size", 1024, 1 << 20);
	int64_t D = heads * hd;
	if (D > DIM_MAX)
		fail(x, "num_attention_heads", "heads x head dim at most 262144");
	if (x->st)
		return;
	int64_t f = 2 * 4 * D / 3;
	if (f % 256)
		f += 256 - f % 256;
	int64_t ff = 3 * D * f;
	int64_t joint_blk = 2 * D * 6 * D + 8 * D * D + 2 * ff;
	int64_t single_blk = D * 6 * D + 4 * D * D + ff;
	int64_t P = lin(p * p * in, D) + pos * D + joint * cap + lin(256, D) + lin(D, D) + L2 * joint_blk +
		    L1 * single_blk + D * 2 * D + D * p * p * out + 8 * D;
	dit_model(v, "auraflow", P, L2 + L1, D, heads, f);
	v->in_channels = in;
	v->text_dim = cap;
	v->text_tokens = 256;
	v->spatial_compression = (int)(8 * p);
	v->temporal_compression = 1;
	v->frames = 1;
	v->patch_size = p;
	v->image_size = 1024;
	note(v->assumed, sizeof v->assumed,
	     "256 text tokens joined to the image tokens (joint attention), counted as cross-attention context; "
	     "VAE 8x");
	check_keys(x, c, auraflow_keys);
}

/* ---- Mochi ------------------------------------------------------------------ */

static const char *const mochi_keys[] = {
	"patch_size", "num_attention_heads", "attention_head_dim", "num_layers",
	"pooled_projection_dim", "in_channels", "out_channels", "qk_norm", "text_embed_dim",
	"time_embed_dim", "activation_fn", "max_sequence_length", NULL,
};

/* MochiTransformer3DModel: a patch conv; the time embedding (256 -> D ->
 * D), the caption's attention pool (kv text -> 2 text, q, out text -> D,
 * with biases) and projection text -> P; learned RoPE frequencies (3 x
 * heads x hd/2); asymmetric blocks (video at D, text at P): RMSNorm-Zero
 * modulations D -> 4D and D -> 4P (the last block: D -> P), q/k/v without
 * bias, text k/v/q P -> D without bias, outputs with bias (no text output
 * in the last block), four per-head RMSNorm weights, SwiGLU FFNs without
 * bias of (8D)//3 and (8P)//3; AdaLN continuous 2D, the output projection. */
static void read_mochi(struct dr *x, const cJSON *c)
{
	struct vf_vision *v = x->v;
	int64_t heads = gint(x, c, "num_attention_heads", 24), hd = gint(x, c, "attention_head_dim", 128);
	int64_t in = gint(x, c, "in_channels", 12), out = gint(x, c, "out_channels", in);
	int64_t L = gint_max(x, c, "num_layers", 48, 1 << 14), p = gint_max(x, c, "patch_size", 2, 64);
	int64_t Pd = gint(x, c, "pooled_projection_dim", 1536), text = gint(x, c, "text_embed_dim", 4096);
	int64_t te = gint(x, c, "time_embed_dim", 256);
	int64_t msl = gint_max(x, c, "max_sequence_length", 256, 1 << 16);
	static const char *const qkn[] = {"rms_norm", NULL}, *const act[] = {"swiglu", NULL};
	gstr(x, c, "qk_norm", qkn);
	gstr(x, c, "activation_fn", act);
	int64_t D = heads * hd;
	if (D > DIM_MAX)
		fail(x, "num_attention_heads", "heads x head dim at most 262144");
	if (x->st)
		return;
	int64_t F = 8 * D / 3, Fc = 8 * Pd / 3;
	int64_t common = lin(D, 4 * D) + 4 * hd + 3 * D * D + 3 * Pd * D + lin(D, D) + 3 * D * F;
	int64_t full = lin(D, 4 * Pd) + lin(D, Pd) + 3 * Pd * Fc; /* text modulation, output, FFN */
	int64_t last = lin(D, Pd);
	int64_t P = in * p * p * D + D + lin(te, D) + lin(D, D)                  /* patch, time */
		    + lin(text, 2 * text) + lin(text, text) + lin(text, D)      /* caption pool */
		    + lin(text, Pd)                                             /* caption_proj */
		    + 3 * heads * (hd / 2)                                      /* pos_frequencies */
		    + L * common + (L - 1) * full + last + lin(D, 2 * D) + lin(D, p * p * out);
	dit_model(v, "mochi", P, L, D, heads, F);
	v->in_channels = in;
	v->text_dim = Pd;
	v->text_tokens = msl;
	v->spatial_compression = (int)(8 * p);
	v->temporal_compression = 6;
	v->frames = 163;
	v->patch_size = p;
	v->image_size = 848;
	note(v->assumed, sizeof v->assumed,
	     "T5 caption tokens joined to the video tokens (joint attention), counted as cross-attention context; "
	     "VAE 8x spatial and 6x temporal");
	check_keys(x, c, mochi_keys);
}

/* ---- UNet2DConditionModel ------------------------------------------------- */

static const char *const unet_keys[] = {
	"sample_size", "in_channels", "out_channels", "center_input_sample", "flip_sin_to_cos",
	"freq_shift", "down_block_types", "mid_block_type", "up_block_types", "only_cross_attention",
	"block_out_channels", "layers_per_block", "downsample_padding", "mid_block_scale_factor",
	"dropout", "act_fn", "norm_num_groups", "norm_eps", "cross_attention_dim",
	"transformer_layers_per_block", "reverse_transformer_layers_per_block", "encoder_hid_dim",
	"encoder_hid_dim_type", "attention_head_dim", "num_attention_heads", "dual_cross_attention",
	"use_linear_projection", "class_embed_type", "addition_embed_type", "addition_time_embed_dim",
	"num_class_embeds", "upcast_attention", "resnet_time_scale_shift", "resnet_skip_time_act",
	"resnet_out_scale_factor", "time_embedding_type", "time_embedding_dim",
	"time_embedding_act_fn", "timestep_post_act", "time_cond_proj_dim", "conv_in_kernel",
	"conv_out_kernel", "projection_class_embeddings_input_dim", "attention_type",
	"class_embeddings_concat", "mid_block_only_cross_attention", "cross_attention_norm",
	"addition_embed_type_num_heads", NULL,
};

/* A residual block in -> out; temb 0: no time input; tproj 1 or 2 (scale_shift). */
static int64_t resnet(int64_t in, int64_t out, int64_t temb, int64_t tproj)
{
	return 2 * in + in * out * 9 + out           /* norm1, conv1 */
	       + (temb ? lin(temb, tproj * out) : 0) /* time_emb_proj */
	       + 2 * out + out * out * 9 + out       /* norm2, conv2 */
	       + (in != out ? lin(in, out) : 0);     /* conv_shortcut (1x1) */
}

/* A Transformer2DModel over C channels: `layers` blocks at the inner width
 * (C / heads) x heads, cross-attention from `cross`; only_cross: the first
 * attention also reads the text. */
static int64_t transformer2d(int64_t C, int64_t layers, int64_t cross, int64_t heads, bool only_cross)
{
	int64_t D = (C / heads) * heads;
	int64_t kv1 = only_cross ? cross : D;
	int64_t block = 2 * D + D * D + 2 * kv1 * D + lin(D, D) /* norm1, attn1 */
			+ 2 * D + D * D + 2 * cross * D + lin(D, D) /* norm2, attn2 */
			+ 2 * D + lin(D, 8 * D) + lin(4 * D, D);    /* norm3, GEGLU ff */
	return 2 * C + lin(C, D) + layers * block + lin(D, C);
}

struct unet_cfg {
	int n;
	int64_t C[MAX_BLOCKS], lpb[MAX_BLOCKS], cross[MAX_BLOCKS], heads[MAX_BLOCKS];
	int64_t tl[MAX_BLOCKS][2][16]; /* [block][down 0 / up 1][layer] transformer layers */
	int64_t only[MAX_BLOCKS];
	bool down_cross[MAX_BLOCKS], up_cross[MAX_BLOCKS];
	int64_t temb, tproj;
};

/* transformer_layers_per_block (or its reverse): an integer, a list of
 * integers (one per block) or of lists (one per layer of the block). */
static void read_tl(struct dr *x, const cJSON *c, const char *key, struct unet_cfg *u, int side,
		    bool reversed)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(c, key);
	for (int i = 0; i < u->n; i++)
		for (int k = 0; k < 16; k++)
			u->tl[i][side][k] = 1;
	if (!j || cJSON_IsNull(j))
		return;
	if (cJSON_IsNumber(j)) {
		int64_t v = num(x, j, key, 1, 1, REPEAT_MAX);
		for (int i = 0; i < u->n; i++)
			for (int k = 0; k < 16; k++)
				u->tl[i][side][k] = v;
		return;
	}
	if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != u->n) {
		fail(x, key, "a whole number or a list with one entry per block");
		return;
	}
	for (int i = 0; i < u->n; i++) {
		const cJSON *e = cJSON_GetArrayItem(j, reversed ? u->n - 1 - i : i);
		for (int k = 0; k < 16; k++) {
			const cJSON *ek = cJSON_IsArray(e) ? cJSON_GetArrayItem(e, k) : e;
			if (cJSON_IsArray(e) && !ek)
				ek = cJSON_GetArrayItem(e, cJSON_GetArraySize(e) - 1);
			u->tl[i][side][k] = num(x, ek, key, 1, 1, REPEAT_MAX);
		}
	}
}

/* Block type lists: each must be a known type; returns the count. */
static int block_types(struct dr *x, const cJSON *c, const char *key, const char *cross_t,
		       const char *plain_t, bool *is_cross, const char *const *dflt)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(c, key);
	int n = 0;
	if (!j || cJSON_IsNull(j)) {
		for (; dflt[n]; n++)
			is_cross[n] = strcmp(dflt[n], cross_t) == 0;
		return n;
	}
	if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) < 1 || cJSON_GetArraySize(j) > MAX_BLOCKS) {
		fail(x, key, "a list of 1 to 8 block types");
		return 0;
	}
	const cJSON *e;
	cJSON_ArrayForEach(e, j)
	{
		const char *s = cJSON_IsString(e) ? e->valuestring : "";
		is_cross[n] = strcmp(s, cross_t) == 0;
		if (!is_cross[n] && strcmp(s, plain_t) != 0) {
			char name[96];
			snprintf(name, sizeof name, "%s (%s)", key, s);
			note(x->v->unknown, sizeof x->v->unknown, name);
		}
		n++;
	}
	return n;
}

static void level_add(struct vf_vision *v, int lv, int64_t width, int64_t res, int64_t attn, int64_t params)
{
	struct vf_vision_level *l = &v->levels[lv];
	l->div = (int64_t)1 << (2 * lv);
	l->width = width;
	l->resnets += res;
	l->attn_blocks += attn;
	l->params += params;
	if (lv + 1 > v->nlevels)
		v->nlevels = lv + 1;
}

/* The embeddings before the blocks: time, class, addition, encoder_hid. */
static int64_t unet_embeddings(struct dr *x, const cJSON *c, int64_t C0, int64_t cross0, int64_t *temb)
{
	static const char *const tet[] = {"positional", "", NULL};
	gstr(x, c, "time_embedding_type", tet);
	int64_t T = gint_max(x, c, "time_embedding_dim", 4 * C0, 4 * CONV_MAX);
	int64_t cond = gint_max(x, c, "time_cond_proj_dim", 0, CONV_MAX);
	int64_t P = lin(C0, T) + lin(T, T) + cond * C0; /* time_embedding (+ cond_proj, no bias) */
	int64_t pin = gint_max(x, c, "projection_class_embeddings_input_dim", 0, CONV_MAX);
	static const char *const cls[] = {"", "timestep", "identity", "projection", "simple_projection", NULL};
	const char *ct = gstr(x, c, "class_embed_type", cls);
	int64_t ncls = gint_max(x, c, "num_class_embeds", 0, 1 << 24);
	if (!*ct && ncls)
		P += ncls * T;
	else if (strcmp(ct, "timestep") == 0)
		P += lin(C0, T) + lin(T, T);
	else if (strcmp(ct, "projection") == 0)
		P += lin(pin, T) + lin(T, T);
	else if (strcmp(ct, "simple_projection") == 0)
		P += lin(pin, T);
	static const char *const add[] = {"", "text_time", NULL};
	if (strcmp(gstr(x, c, "addition_embed_type", add), "text_time") == 0)
		P += lin(pin, T) + lin(T, T); /* add_embedding */
	int64_t ehd = gint_max(x, c, "encoder_hid_dim", 0, CONV_MAX);
	static const char *const eht[] = {"", "text_proj", NULL};
	const char *et = gstr(x, c, "encoder_hid_dim_type", eht);
	if (ehd && (!*et || strcmp(et, "text_proj") == 0))
		P += lin(ehd, cross0);
	*temb = gbool(x, c, "class_embeddings_concat", false) ? 2 * T : T;
	return P;
}

static int64_t unet_down(struct vf_vision *v, const struct unet_cfg *u, bool linear)
{
	(void)linear;
	int64_t P = 0, out = u->C[0];
	for (int i = 0; i < u->n; i++) {
		int64_t in = out, b = 0, nt = 0;
		out = u->C[i];
		for (int j = 0; j < u->lpb[i]; j++) {
			b += resnet(j == 0 ? in : out, out, u->temb, u->tproj);
			if (u->down_cross[i]) {
				b += transformer2d(out, u->tl[i][0][j < 16 ? j : 15], u->cross[i], u->heads[i],
						   u->only[i]);
				nt += u->tl[i][0][j < 16 ? j : 15];
			}
		}
		if (i < u->n - 1)
			b += lin(out * 9, out); /* downsampler conv */
		level_add(v, i, out, u->lpb[i], nt, b);
		P += b;
	}
	return P;
}

static int64_t unet_up(struct vf_vision *v, const struct unet_cfg *u)
{
	int n = u->n;
	int64_t P = 0, out = u->C[n - 1];
	for (int i = 0; i < n; i++) {
		int r = n - 1 - i; /* the down block this one mirrors */
		int64_t prev = out, in = u->C[i + 1 < n ? n - 2 - i : 0], b = 0, nt = 0;
		out = u->C[r];
		int64_t nl = u->lpb[r] + 1;
		for (int j = 0; j < nl; j++) {
			int64_t skip = j == nl - 1 ? in : out, rin = j == 0 ? prev : out;
			b += resnet(rin + skip, out, u->temb, u->tproj);
			if (u->up_cross[i]) {
				int64_t t = u->tl[i][1][j < 16 ? j : 15];
				b += transformer2d(out, t, u->cross[r], u->heads[r], u->only[r]);
				nt += t;
			}
		}
		if (i < n - 1)
			b += lin(out * 9, out); /* upsampler conv */
		level_add(v, r, out, nl, nt, b);
		P += b;
	}
	return P;
}

/* The block type names of a 2-D or a 3-D UNet and their default lists. */
struct unet_names {
	const char *down_cross, *down, *up_cross, *up;
	const char *const *down_default, *const *up_default;
};

static const char *const unet2d_down[] = {"CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D",
					  "DownBlock2D", NULL};
static const char *const unet2d_up[] = {"UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D",
					"CrossAttnUpBlock2D", NULL};
static const struct unet_names unet2d_names = {"CrossAttnDownBlock2D", "DownBlock2D", "CrossAttnUpBlock2D",
					       "UpBlock2D", unet2d_down, unet2d_up};
static const char *const unet3d_down[] = {"CrossAttnDownBlock3D", "CrossAttnDownBlock3D", "CrossAttnDownBlock3D",
					  "DownBlock3D", NULL};
static const char *const unet3d_up[] = {"UpBlock3D", "CrossAttnUpBlock3D", "CrossAttnUpBlock3D",
					"CrossAttnUpBlock3D", NULL};
static const struct unet_names unet3d_names = {"CrossAttnDownBlock3D", "DownBlock3D", "CrossAttnUpBlock3D",
					       "UpBlock3D", unet3d_down, unet3d_up};

/* The down and up block types and block_out_channels of a UNet into u;
 * widths_listed: block_out_channels must be a list (2-D), not one width. */
static void unet_blocks(struct dr *x, const cJSON *c, const struct unet_names *nm, bool widths_listed,
			struct unet_cfg *u)
{
	u->n = block_types(x, c, "down_block_types", nm->down_cross, nm->down, u->down_cross, nm->down_default);
	int nu = block_types(x, c, "up_block_types", nm->up_cross, nm->up, u->up_cross, nm->up_default);
	if (!x->st && nu != u->n)
		fail(x, "up_block_types", "as many up blocks as down blocks");
	const cJSON *bo = cJSON_GetObjectItemCaseSensitive(c, "block_out_channels");
	if (bo && !cJSON_IsNull(bo)) {
		glist(x, c, "block_out_channels", u->n, u->C, 320, 1, CONV_MAX);
		if (widths_listed && !cJSON_IsArray(bo))
			fail(x, "block_out_channels", "a list with one width per block");
	} else {
		int64_t d[4] = {320, 640, 1280, 1280};
		for (int i = 0; i < u->n; i++)
			u->C[i] = d[i < 4 ? i : 3];
	}
}

/* num_attention_heads: a name diffusers' UNets misuse; not modelled. */
static void unet_heads_note(struct vf_vision *v, const cJSON *c)
{
	const cJSON *nh = cJSON_GetObjectItemCaseSensitive(c, "num_attention_heads");
	if (nh && !cJSON_IsNull(nh))
		note(v->unknown, sizeof v->unknown, "num_attention_heads");
}

/* A UNet's input and output channels and conv kernels. */
struct unet_io {
	int64_t in, out, kin, kout;
};

static void unet_io_read(struct dr *x, const cJSON *c, struct unet_io *io)
{
	io->in = gint_max(x, c, "in_channels", 4, CONV_MAX);
	io->out = gint_max(x, c, "out_channels", 4, CONV_MAX);
	io->kin = gint_max(x, c, "conv_in_kernel", 3, 15);
	io->kout = gint_max(x, c, "conv_out_kernel", 3, 15);
}

/* The one trained part of a UNet (P parameters, Cl the deepest width)
 * and the vision fields both kinds share. */
static void unet_part(struct vf_vision *v, const char *family, int64_t P, int64_t Cl, int64_t heads, int64_t in,
		      int64_t text_dim, int64_t frames)
{
	int64_t blocks = 0;
	for (int i = 0; i < v->nlevels; i++)
		blocks += v->levels[i].attn_blocks;
	trained_part(v, family, "unet", "unet", P, blocks, Cl, heads, 4 * Cl);
	v->in_channels = in;
	v->text_dim = text_dim;
	v->text_tokens = 77;
	v->spatial_compression = 8;
	v->temporal_compression = 1;
	v->frames = frames;
}

static void read_unet2d(struct dr *x, const cJSON *c)
{
	struct vf_vision *v = x->v;
	struct unet_cfg u;
	memset(&u, 0, sizeof u);
	unet_blocks(x, c, &unet2d_names, true, &u);
	const int64_t *C = u.C;
	glist(x, c, "layers_per_block", u.n, u.lpb, 2, 1, REPEAT_MAX);
	glist(x, c, "cross_attention_dim", u.n, u.cross, 1280, 1, CONV_MAX);
	glist(x, c, "attention_head_dim", u.n, u.heads, 8, 1, CONV_MAX);
	unet_heads_note(v, c);
	const cJSON *oc = cJSON_GetObjectItemCaseSensitive(c, "only_cross_attention");
	for (int i = 0; i < u.n; i++)
		u.only[i] = cJSON_IsTrue(oc) || (cJSON_IsArray(oc) && cJSON_IsTrue(cJSON_GetArrayItem(oc, i)));
	read_tl(x, c, "transformer_layers_per_block", &u, 0, false);
	const cJSON *rev = cJSON_GetObjectItemCaseSensitive(c, "reverse_transformer_layers_per_block");
	if (rev && !cJSON_IsNull(rev))
		read_tl(x, c, "reverse_transformer_layers_per_block", &u, 1, false);
	else
		read_tl(x, c, "transformer_layers_per_block", &u, 1, true);
	static const char *const tss[] = {"default", "", "scale_shift", NULL};
	u.tproj = strcmp(gstr(x, c, "resnet_time_scale_shift", tss), "scale_shift") == 0 ? 2 : 1;
	if (gbool(x, c, "dual_cross_attention", false))
		note(v->unknown, sizeof v->unknown, "dual_cross_attention");
	static const char *const att[] = {"default", "", NULL}, *const can[] = {"", NULL};
	gstr(x, c, "attention_type", att);
	gstr(x, c, "cross_attention_norm", can);
	const cJSON *ng = cJSON_GetObjectItemCaseSensitive(c, "norm_num_groups");
	if (ng && cJSON_IsNull(ng))
		note(v->unknown, sizeof v->unknown, "norm_num_groups");
	struct unet_io io;
	unet_io_read(x, c, &io);
	if (x->st)
		return;
	int64_t emb = unet_embeddings(x, c, C[0], u.cross[0], &u.temb);
	const cJSON *mj = cJSON_GetObjectItemCaseSensitive(c, "mid_block_type");
	const char *mid = cJSON_IsString(mj) ? mj->valuestring : mj && cJSON_IsNull(mj) ? "" : "UNetMidBlock2DCrossAttn";
	int64_t Cl = C[u.n - 1], midp = 0, midt = 0;
	const cJSON *mo = cJSON_GetObjectItemCaseSensitive(c, "mid_block_only_cross_attention");
	bool monly = mo && !cJSON_IsNull(mo) ? cJSON_IsTrue(mo) : cJSON_IsTrue(oc);
	if (strcmp(mid, "UNetMidBlock2DCrossAttn") == 0) {
		midt = u.tl[u.n - 1][0][0];
		midp = 2 * resnet(Cl, Cl, u.temb, u.tproj) +
		       transformer2d(Cl, midt, u.cross[u.n - 1], u.heads[u.n - 1], monly);
	} else if (*mid) {
		note(v->unknown, sizeof v->unknown, "mid_block_type");
	}
	int64_t P = lin(io.in * io.kin * io.kin, C[0]) + emb + unet_down(v, &u, false);
	P += midp;
	if (*mid)
		level_add(v, u.n - 1, Cl, 2, midt, midp);
	P += unet_up(v, &u) + 2 * C[0] + lin(C[0] * io.kout * io.kout, io.out); /* conv_norm_out, conv_out */
	unet_part(v, "unet2d", P, Cl, u.heads[u.n - 1], io.in, u.cross[0], 1);
	/* sample_size: an integer or [height, width]; only the default sample */
	const cJSON *sj = cJSON_GetObjectItemCaseSensitive(c, "sample_size");
	int64_t ss = 64;
	if (cJSON_IsArray(sj))
		sj = cJSON_GetArrayItem(sj, 0);
	if (!vf_json_number_is_i64(sj, &ss) || ss < 1 || ss > CONV_MAX)
		ss = 64;
	v->image_size = 8 * ss;
	note(v->assumed, sizeof v->assumed, "77 CLIP tokens, VAE 8x");
	check_keys(x, c, unet_keys);
}

/* ---- UNet3DConditionModel (ModelScope / Zeroscope) --------------------------- */

static const char *const unet3d_keys[] = {
	"sample_size", "in_channels", "out_channels", "down_block_types", "up_block_types",
	"block_out_channels", "layers_per_block", "downsample_padding", "mid_block_scale_factor",
	"act_fn", "norm_num_groups", "norm_eps", "cross_attention_dim", "attention_head_dim",
	"num_attention_heads", "time_cond_proj_dim", "conv_in_kernel", "conv_out_kernel", NULL,
};

/* A BasicTransformerBlock of a temporal transformer: two self-attentions
 * (double_self_attention), three LayerNorms, the GEGLU FFN. */
static int64_t temporal_block(int64_t D)
{
	return 3 * 2 * D + 2 * (3 * D * D + lin(D, D)) + lin(D, 8 * D) + lin(4 * D, D);
}

/* TransformerTemporalModel over C channels at inner width D: GroupNorm,
 * linear proj_in and proj_out, one block. */
static int64_t temporal_tr(int64_t C, int64_t D)
{
	return 2 * C + lin(C, D) + temporal_block(D) + lin(D, C);
}

/* TemporalConvLayer: four GroupNorm + (3,1,1) conv pairs at C. */
static int64_t temp_conv(int64_t C)
{
	return 4 * (2 * C + C * C * 3 + C);
}

/* UNet3DConditionModel: the 2-D UNet's blocks with, after each residual
 * block, a temporal conv layer and, after each spatial transformer (one
 * layer), a temporal transformer; a temporal transformer on conv_in's
 * output (8 heads of attention_head_dim); the time embedding 4 x C0. */
static void read_unet3d(struct dr *x, const cJSON *c)
{
	struct vf_vision *v = x->v;
	struct unet_cfg u;
	memset(&u, 0, sizeof u);
	unet_blocks(x, c, &unet3d_names, false, &u);
	int64_t lpb = gint_max(x, c, "layers_per_block", 2, REPEAT_MAX);
	int64_t cross = gint_max(x, c, "cross_attention_dim", 1024, CONV_MAX);
	glist(x, c, "attention_head_dim", u.n, u.heads, 64, 1, CONV_MAX);
	const cJSON *ah = cJSON_GetObjectItemCaseSensitive(c, "attention_head_dim");
	if (cJSON_IsArray(ah))
		note(v->unknown, sizeof v->unknown, "attention_head_dim"); /* transformer_in takes one */
	unet_heads_note(v, c);
	struct unet_io io;
	unet_io_read(x, c, &io);
	int64_t cond = gint_max(x, c, "time_cond_proj_dim", 0, CONV_MAX);
	if (x->st)
		return;
	int n = u.n;
	int64_t C0 = u.C[0], T = 4 * C0, Cl = u.C[n - 1];
	int64_t P = lin(io.in * io.kin * io.kin, C0) + lin(C0, T) + lin(T, T) + cond * C0 + temporal_tr(C0, 8 * u.heads[0]);
	level_add(v, 0, C0, 0, 1, temporal_tr(C0, 8 * u.heads[0]));
	int64_t o = C0;
	for (int i = 0; i < n; i++) {
		int64_t ci = o, b = 0, nt = 0;
		o = u.C[i];
		int64_t D = (o / u.heads[i]) * u.heads[i];
		for (int j = 0; j < lpb; j++) {
			b += resnet(j == 0 ? ci : o, o, T, 1) + temp_conv(o);
			if (u.down_cross[i]) {
				b += transformer2d(o, 1, cross, u.heads[i], false) + temporal_tr(o, D);
				nt += 2;
			}
		}
		if (i < n - 1)
			b += lin(o * 9, o);
		level_add(v, i, o, 2 * lpb, nt, b);
		P += b;
	}
	int64_t Dl = (Cl / u.heads[n - 1]) * u.heads[n - 1];
	int64_t mid = 2 * (resnet(Cl, Cl, T, 1) + temp_conv(Cl)) + transformer2d(Cl, 1, cross, u.heads[n - 1], false) +
		      temporal_tr(Cl, Dl);
	level_add(v, n - 1, Cl, 4, 2, mid);
	P += mid;
	o = Cl;
	for (int i = 0; i < n; i++) {
		int r = n - 1 - i;
		int64_t prev = o, inc = u.C[i + 1 < n ? n - 2 - i : 0], b = 0, nt = 0;
		o = u.C[r];
		int64_t D = (o / u.heads[r]) * u.heads[r];
		for (int j = 0; j < lpb + 1; j++) {
			int64_t skip = j == lpb ? inc : o, rin = j == 0 ? prev : o;
			b += resnet(rin + skip, o, T, 1) + temp_conv(o);
			if (u.up_cross[i]) {
				b += transformer2d(o, 1, cross, u.heads[r], false) + temporal_tr(o, D);
				nt += 2;
			}
		}
		if (i < n - 1)
			b += lin(o * 9, o);
		level_add(v, r, o, 2 * (lpb + 1), nt, b);
		P += b;
	}
	P += 2 * C0 + lin(C0 * io.kout * io.kout, io.out);
	unet_part(v, "unet3d", P, Cl, u.heads[n - 1], io.in, cross, 16);
	v->image_size = 256;
	note(v->assumed, sizeof v->assumed, "77 CLIP tokens, VAE 8x, every frame a latent frame");
	check_keys(x, c, unet3d_keys);
}

/* ---- AutoencoderKL -------------------------------------------------------- */

static const char *const vae_keys[] = {
	"in_channels", "out_channels", "down_block_types", "up_block_types", "block_out_channels",
	"layers_per_block", "act_fn", "latent_channels", "norm_num_groups", "sample_size",
	"scaling_factor", "shift_factor", "latents_mean", "latents_std", "force_upcast",
	"use_quant_conv", "use_post_quant_conv", "mid_block_add_attention", NULL,
};

/* A VAE's two parts (the encoder and the decoder, each with the width of
 * its full-resolution stage) and its kind, family and stages. */
static void vae_model(struct vf_vision *v, const char *family, int64_t enc, int64_t enc_hidden, int64_t dec,
		      int64_t dec_hidden)
{
	snprintf(v->family, sizeof v->family, "%s", family);
	snprintf(v->kind, sizeof v->kind, "vae");
	struct vf_vision_part *pe = &v->parts[v->nparts++], *pd = &v->parts[v->nparts++];
	snprintf(pe->name, sizeof pe->name, "encoder");
	pe->params = enc;
	pe->hidden = enc_hidden;
	snprintf(pd->name, sizeof pd->name, "decoder");
	pd->params = dec;
	pd->hidden = dec_hidden;
	v->stages = 1;
}

/* A residual block without time input, k the kernel volume (9: 2-D, 27:
 * the causal 3-D convs of the video VAEs). */
static int64_t vres(int64_t in, int64_t out, int64_t k)
{
	return 2 * in + in * out * k + out + 2 * out + out * out * k + out + (in != out ? lin(in, out) : 0);
}

/* The AutoencoderKL layout with a conv kernel volume k and, per block, a
 * sampler or none (down[i], up[i]); the quant convs when given. */
struct kl_shape {
	int n;
	int64_t C[MAX_BLOCKS], lpb, L, in, out, k;
	bool down[MAX_BLOCKS], up[MAX_BLOCKS], qc, pqc, mattn;
};

static void vae_kl_count(struct vf_vision *v, const struct kl_shape *s, const char *family)
{
	int n = s->n;
	int64_t k = s->k, Cl = s->C[n - 1];
	int64_t mid = 2 * vres(Cl, Cl, k) + (s->mattn ? 2 * Cl + 4 * lin(Cl, Cl) : 0);
	int64_t enc = lin(s->in * k, s->C[0]), o = s->C[0];
	for (int i = 0; i < n; i++) {
		int64_t ci = o;
		o = s->C[i];
		for (int j = 0; j < s->lpb; j++)
			enc += vres(j == 0 ? ci : o, o, k);
		if (s->down[i])
			enc += lin(o * k, o); /* downsampler conv */
	}
	enc += mid + 2 * Cl + lin(Cl * k, 2 * s->L); /* mid, GroupNorm, conv_out to 2 x latent */
	int64_t dec = lin(s->L * k, Cl) + mid;
	o = Cl;
	for (int i = 0; i < n; i++) {
		int64_t prev = o;
		o = s->C[n - 1 - i];
		for (int j = 0; j < s->lpb + 1; j++)
			dec += vres(j == 0 ? prev : o, o, k);
		if (s->up[i])
			dec += lin(o * k, o); /* upsampler conv */
	}
	dec += 2 * s->C[0] + lin(s->C[0] * k, s->out);
	/* quant convs with their sides; widths: the full-resolution stage's */
	vae_model(v, family, enc + (s->qc ? lin(2 * s->L, 2 * s->L) : 0), s->C[0],
		  dec + (s->pqc ? lin(s->L, s->L) : 0), s->C[0]);
	v->in_channels = s->in;
	v->latent_channels = s->L;
}

/* The keys both KL layouts read; false on an error. */
static bool kl_common(struct dr *x, const cJSON *c, struct kl_shape *s, const char *down_t, const char *up_t,
		      int64_t dlatent)
{
	bool dcross[MAX_BLOCKS], ucross[MAX_BLOCKS];
	const char *const dd[] = {down_t, NULL}, *const ud[] = {up_t, NULL};
	s->n = block_types(x, c, "down_block_types", "-", down_t, dcross, dd);
	int nu = block_types(x, c, "up_block_types", "-", up_t, ucross, ud);
	if (!x->st && nu != s->n)
		fail(x, "up_block_types", "as many up blocks as down blocks");
	glist(x, c, "block_out_channels", s->n, s->C, 64, 1, CONV_MAX);
	s->lpb = gint_max(x, c, "layers_per_block", 1, REPEAT_MAX);
	s->L = gint_max(x, c, "latent_channels", dlatent, CONV_MAX);
	s->in = gint_max(x, c, "in_channels", 3, CONV_MAX);
	s->out = gint_max(x, c, "out_channels", 3, CONV_MAX);
	s->mattn = gbool(x, c, "mid_block_add_attention", true);
	return !x->st && s->n > 0;
}

static void read_vae_kl(struct dr *x, const cJSON *c)
{
	struct kl_shape s;
	memset(&s, 0, sizeof s);
	if (!kl_common(x, c, &s, "DownEncoderBlock2D", "UpDecoderBlock2D", 4))
		return;
	s.k = 9;
	s.qc = gbool(x, c, "use_quant_conv", true);
	s.pqc = gbool(x, c, "use_post_quant_conv", true);
	for (int i = 0; i < s.n - 1; i++)
		s.down[i] = s.up[i] = true;
	if (x->st)
		return;
	vae_kl_count(x->v, &s, "autoencoder-kl");
	x->v->spatial_compression = 1 << (s.n - 1);
	x->v->temporal_compression = 1;
	check_keys(x, c, vae_keys);
}

/* ---- AutoencoderKLHunyuanVideo -------------------------------------------- */

static const char *const hunyuan_vae_keys[] = {
	"in_channels", "out_channels", "latent_channels", "down_block_types", "up_block_types",
	"block_out_channels", "layers_per_block", "act_fn", "norm_num_groups", "scaling_factor",
	"spatial_compression_ratio", "temporal_compression_ratio", "mid_block_add_attention", NULL,
};

/* The AutoencoderKL layout in causal 3-D convs (3x3x3); a block samples
 * when it halves space (the first log2(spatial) blocks) or time (with
 * temporal 4: the log2(4) blocks before the last; 8: the first three);
 * quant convs 1x1x1. */
static void read_vae_hunyuan(struct dr *x, const cJSON *c)
{
	struct kl_shape s;
	memset(&s, 0, sizeof s);
	if (!kl_common(x, c, &s, "HunyuanVideoDownBlock3D", "HunyuanVideoUpBlock3D", 16))
		return;
	int64_t sc = gint_max(x, c, "spatial_compression_ratio", 8, 1024);
	int64_t tc = gint_max(x, c, "temporal_compression_ratio", 4, 1024);
	if (!x->st && tc != 4 && tc != 8)
		fail(x, "temporal_compression_ratio", "4 or 8");
	if (!x->st && tc == 8)
		note(x->v->unknown, sizeof x->v->unknown, "temporal_compression_ratio"); /* its decoder refuses 8 */
	if (x->st)
		return;
	int ls = 0, lt = tc == 8 ? 3 : 2;
	while ((1LL << (ls + 1)) <= sc)
		ls++;
	for (int i = 0; i < s.n; i++) {
		bool fin = i == s.n - 1;
		bool t = tc == 4 ? (i >= s.n - 1 - lt && !fin) : i < lt;
		s.down[i] = i < ls || t;
		s.up[i] = i < ls || (i >= s.n - 1 - lt && !fin);
	}
	s.k = 27;
	s.qc = s.pqc = true;
	vae_kl_count(x->v, &s, "autoencoder-kl-hunyuan");
	x->v->spatial_compression = (int)sc;
	x->v->temporal_compression = (int)tc;
	check_keys(x, c, hunyuan_vae_keys);
}

/* ---- AutoencoderKLCogVideoX ------------------------------------------------ */

static const char *const cog_vae_keys[] = {
	"in_channels", "out_channels", "down_block_types", "up_block_types", "block_out_channels",
	"latent_channels", "layers_per_block", "act_fn", "norm_eps", "norm_num_groups",
	"temporal_compression_ratio", "sample_height", "sample_width", "scaling_factor",
	"shift_factor", "latents_mean", "latents_std", "force_upcast", "use_quant_conv",
	"use_post_quant_conv", "invert_scale_latents", NULL,
};

/* A CogVideoX residual block: GroupNorms (the decoder's spatial norms add
 * two 1x1x1 convs from the latent, zq > 0), two causal 3x3x3 convs, a
 * 1x1x1 shortcut when the widths differ. */
static int64_t cog_res(int64_t in, int64_t out, int64_t zq)
{
	int64_t sn = zq ? 2 * (zq * in + in) : 0, so = zq ? 2 * (zq * out + out) : 0;
	return 2 * in + sn + in * out * 27 + out + 2 * out + so + out * out * 27 + out + (in != out ? lin(in, out) : 0);
}

/* AutoencoderKLCogVideoX: encoder (causal conv_in, blocks of residual
 * blocks and a strided 2-D conv, a mid block of two residual blocks,
 * GroupNorm, conv_out to 2 x latent), decoder (conv_in, the mid block and
 * up blocks with spatial norms from the latent, a 2-D conv after
 * upsampling, a spatial norm and conv_out); the quant convs when asked
 * (built over 2 x out_channels and out_channels, as the class does). */
static void read_vae_cogvideox(struct dr *x, const cJSON *c)
{
	struct vf_vision *v = x->v;
	bool dc[MAX_BLOCKS], uc[MAX_BLOCKS];
	static const char *const dd[] = {"CogVideoXDownBlock3D", "CogVideoXDownBlock3D", "CogVideoXDownBlock3D",
					 "CogVideoXDownBlock3D", NULL};
	static const char *const ud[] = {"CogVideoXUpBlock3D", "CogVideoXUpBlock3D", "CogVideoXUpBlock3D",
					 "CogVideoXUpBlock3D", NULL};
	int n = block_types(x, c, "down_block_types", "-", "CogVideoXDownBlock3D", dc, dd);
	int nu = block_types(x, c, "up_block_types", "-", "CogVideoXUpBlock3D", uc, ud);
	if (!x->st && nu != n)
		fail(x, "up_block_types", "as many up blocks as down blocks");
	int64_t C[MAX_BLOCKS];
	const cJSON *bo = cJSON_GetObjectItemCaseSensitive(c, "block_out_channels");
	if (bo && !cJSON_IsNull(bo)) {
		glist(x, c, "block_out_channels", n, C, 128, 1, CONV_MAX);
	} else {
		int64_t d[4] = {128, 256, 256, 512};
		for (int i = 0; i < n; i++)
			C[i] = d[i < 4 ? i : 3];
	}
	int64_t lpb = gint_max(x, c, "layers_per_block", 3, REPEAT_MAX);
	int64_t L = gint_max(x, c, "latent_channels", 16, CONV_MAX);
	int64_t in = gint_max(x, c, "in_channels", 3, CONV_MAX), out = gint_max(x, c, "out_channels", 3, CONV_MAX);
	bool qc = gbool(x, c, "use_quant_conv", false), pqc = gbool(x, c, "use_post_quant_conv", false);
	int64_t tc = 4;
	const cJSON *tj = cJSON_GetObjectItemCaseSensitive(c, "temporal_compression_ratio");
	if (tj && !cJSON_IsNull(tj) && (!cJSON_IsNumber(tj) || tj->valuedouble < 1 || tj->valuedouble > 64))
		fail(x, "temporal_compression_ratio", "a number 1-64");
	else if (tj && cJSON_IsNumber(tj))
		tc = (int64_t)tj->valuedouble;
	if (x->st || n < 1)
		return;
	int64_t Cl = C[n - 1];
	int64_t enc = lin(in * 27, C[0]), o = C[0];
	for (int i = 0; i < n; i++) {
		int64_t ci = o;
		o = C[i];
		for (int j = 0; j < lpb; j++)
			enc += cog_res(j == 0 ? ci : o, o, 0);
		if (i < n - 1)
			enc += lin(o * 9, o); /* downsampler: a strided 2-D conv */
	}
	enc += 2 * cog_res(Cl, Cl, 0) + 2 * Cl + lin(Cl * 27, 2 * L);
	int64_t dec = lin(L * 27, Cl) + 2 * cog_res(Cl, Cl, L);
	o = Cl;
	for (int i = 0; i < n; i++) {
		int64_t prev = o;
		o = C[n - 1 - i];
		for (int j = 0; j < lpb + 1; j++)
			dec += cog_res(j == 0 ? prev : o, o, L);
		if (i < n - 1)
			dec += lin(o * 9, o); /* upsampler: a 2-D conv */
	}
	dec += 2 * C[0] + 2 * (L * C[0] + C[0]) + lin(C[0] * 27, out);
	vae_model(v, "autoencoder-kl-cogvideox", enc + (qc ? lin(2 * out, 2 * out) : 0), C[0],
		  dec + (pqc ? lin(out, out) : 0), C[0]);
	v->in_channels = in;
	v->latent_channels = L;
	v->spatial_compression = 1 << (n - 1);
	v->temporal_compression = (int)tc;
	check_keys(x, c, cog_vae_keys);
}

/* ---- AutoencoderKLMochi --------------------------------------------------- */

static const char *const mochi_vae_keys[] = {
	"in_channels", "out_channels", "encoder_block_out_channels", "decoder_block_out_channels",
	"latent_channels", "layers_per_block", "act_fn", "temporal_expansions", "spatial_expansions",
	"add_attention_block", "latents_mean", "latents_std", "scaling_factor", NULL,
};

/* A list key of exactly n whole numbers (or its defaults when absent). */
static void glist_range(struct dr *x, const cJSON *c, const char *key, int n, int64_t *out,
			const int64_t *dflt, int64_t min, int64_t max)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(c, key);
	for (int i = 0; i < n; i++)
		out[i] = dflt[i];
	if (!j || cJSON_IsNull(j))
		return;
	if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != n) {
		char e[64];
		snprintf(e, sizeof e, "a list of %d", n);
		fail(x, key, e);
		return;
	}
	for (int i = 0; i < n; i++)
		out[i] = num(x, cJSON_GetArrayItem(j, i), key, dflt[i], min, max);
}

/* A list of n widths (1 .. CONV_MAX), dflt when absent. */
static void glist_n(struct dr *x, const cJSON *c, const char *key, int n, int64_t *out, const int64_t *dflt)
{
	glist_range(x, c, key, n, out, dflt, 1, CONV_MAX);
}

/* Mochi's residual block at C (chunked GroupNorms, causal 3x3x3 convs)
 * and its attention (GroupNorm; q/k/v without bias, out with bias; l2
 * q/k norms without weights). */
static int64_t mochi_res(int64_t C)
{
	return 2 * (2 * C + C * C * 27 + C);
}

static int64_t mochi_attn(int64_t C)
{
	return 2 * C + 3 * C * C + lin(C, C);
}

/* AutoencoderKLMochi: encoder (Fourier features, proj_in, a block of
 * residual blocks (and attentions), down blocks of a strided causal conv
 * (te x se x se) then residual blocks and attentions, the last block,
 * GroupNorm, proj_out to 2 x latent without bias); decoder (a 1x1x1 conv
 * in, residual blocks, up blocks of residual blocks and a linear
 * depth-to-space projection, residual blocks, proj_out). */
static void read_vae_mochi(struct dr *x, const cJSON *c)
{
	struct vf_vision *v = x->v;
	int64_t ec[4], dc[4], lpb[5], te[3], se[3];
	static const int64_t dec_c[4] = {64, 128, 256, 384}, ddc[4] = {128, 256, 512, 768};
	static const int64_t dl[5] = {3, 3, 4, 6, 3}, dte[3] = {1, 2, 3}, dse[3] = {2, 2, 2};
	glist_n(x, c, "encoder_block_out_channels", 4, ec, dec_c);
	glist_n(x, c, "decoder_block_out_channels", 4, dc, ddc);
	glist_n(x, c, "layers_per_block", 5, lpb, dl);
	glist_n(x, c, "temporal_expansions", 3, te, dte);
	glist_n(x, c, "spatial_expansions", 3, se, dse);
	for (int i = 0; i < 5; i++)
		if (lpb[i] > REPEAT_MAX)
			fail(x, "layers_per_block", "at most 1024 per block");
	for (int i = 0; i < 3; i++)
		if (te[i] > 64 || se[i] > 64)
			fail(x, "temporal_expansions", "expansions of at most 64");
	bool attn[5] = {false, true, true, true, true};
	const cJSON *aj = cJSON_GetObjectItemCaseSensitive(c, "add_attention_block");
	if (aj && !cJSON_IsNull(aj) && (!cJSON_IsArray(aj) || cJSON_GetArraySize(aj) != 5))
		fail(x, "add_attention_block", "a list of 5");
	else if (aj && cJSON_IsArray(aj))
		for (int i = 0; i < 5; i++)
			attn[i] = cJSON_IsTrue(cJSON_GetArrayItem(aj, i));
	int64_t in = gint_max(x, c, "in_channels", 15, CONV_MAX), out = gint_max(x, c, "out_channels", 3, CONV_MAX);
	int64_t L = gint_max(x, c, "latent_channels", 12, CONV_MAX);
	if (x->st)
		return;
	int64_t enc = lin(in, ec[0]) + lpb[0] * (mochi_res(ec[0]) + (attn[0] ? mochi_attn(ec[0]) : 0));
	for (int i = 0; i < 3; i++)
		enc += ec[i] * ec[i + 1] * te[i] * se[i] * se[i] + ec[i + 1] +
		       lpb[i + 1] * (mochi_res(ec[i + 1]) + (attn[i + 1] ? mochi_attn(ec[i + 1]) : 0));
	enc += lpb[4] * (mochi_res(ec[3]) + (attn[4] ? mochi_attn(ec[3]) : 0)) + 2 * ec[3] + ec[3] * 2 * L;
	int64_t dec = lin(L, dc[3]) + lpb[4] * mochi_res(dc[3]);
	for (int i = 0; i < 3; i++) {
		int64_t ci = dc[3 - i], co = dc[2 - i];
		dec += lpb[3 - i] * mochi_res(ci) + lin(ci, co * te[2 - i] * se[2 - i] * se[2 - i]);
	}
	dec += lpb[0] * mochi_res(dc[0]) + lin(dc[0], out);
	vae_model(v, "autoencoder-kl-mochi", enc, ec[0], dec, dc[0]);
	v->in_channels = in;
	v->latent_channels = L;
	v->spatial_compression = (int)(se[0] * se[1] * se[2]);
	v->temporal_compression = (int)(te[0] * te[1] * te[2]);
	check_keys(x, c, mochi_vae_keys);
}

/* ---- AutoencoderKLWan (Wan 2.1 and 2.2 video VAEs) -------------------------- */

static const char *const wan_vae_keys[] = {
	"base_dim", "decoder_base_dim", "z_dim", "dim_mult", "num_res_blocks", "attn_scales",
	"temperal_downsample", "dropout", "latents_mean", "latents_std", "is_residual",
	"in_channels", "out_channels", "patch_size", "scale_factor_temporal",
	"scale_factor_spatial", "clip_output", NULL,
};

/* A causal 3-D conv in -> out with a k x k x k kernel, with bias. */
static int64_t conv3(int64_t in, int64_t out, int64_t k)
{
	return in * out * k * k * k + out;
}

/* WanResidualBlock: RMS norms (gamma only), two 3x3x3 causal convs, a
 * 1x1x1 shortcut when the widths differ. */
static int64_t wan_res(int64_t in, int64_t out)
{
	return in + conv3(in, out, 3) + out + conv3(out, out, 3) + (in != out ? conv3(in, out, 1) : 0);
}

/* WanAttentionBlock: RMS norm, to_qkv and proj (1x1 convs). */
static int64_t wan_attn(int64_t d)
{
	return d + lin(d, 3 * d) + lin(d, d);
}

/* WanResample: a 2-D 3x3 conv (up: to `uo` channels), and a (3,1,1) time
 * conv when temporal (down: d -> d, up: d -> 2d). */
static int64_t wan_resample(int64_t d, bool up, bool temporal, int64_t uo)
{
	int64_t o = up ? uo : d;
	return lin(d * 9, o) + (temporal ? lin(d * 3, up ? 2 * d : d) : 0);
}

static void read_vae_wan(struct dr *x, const cJSON *c)
{
	struct vf_vision *v = x->v;
	int64_t base = gint_max(x, c, "base_dim", 96, 1 << 12);
	int64_t dbase = gint_max(x, c, "decoder_base_dim", base, 1 << 12);
	int64_t z = gint_max(x, c, "z_dim", 16, CONV_MAX), nrb = gint_max(x, c, "num_res_blocks", 2, REPEAT_MAX);
	int64_t in = gint_max(x, c, "in_channels", 3, CONV_MAX), out = gint_max(x, c, "out_channels", 3, CONV_MAX);
	int64_t patch = gint_max(x, c, "patch_size", 1, 64);
	int64_t sfs = gint_max(x, c, "scale_factor_spatial", 8, 1024);
	int64_t sft = gint_max(x, c, "scale_factor_temporal", 4, 1024);
	bool res = gbool(x, c, "is_residual", false);
	const cJSON *dm = cJSON_GetObjectItemCaseSensitive(c, "dim_mult");
	int n = cJSON_IsArray(dm) ? cJSON_GetArraySize(dm) : 4;
	if (dm && (!cJSON_IsArray(dm) || n < 1 || n > MAX_BLOCKS)) {
		fail(x, "dim_mult", "a list of 1 to 8 multipliers");
		return;
	}
	int64_t mult[MAX_BLOCKS] = {1, 2, 4, 4};
	if (dm)
		for (int i = 0; i < n; i++)
			mult[i] = num(x, cJSON_GetArrayItem(dm, i), "dim_mult", 1, 1, 64);
	bool td[MAX_BLOCKS] = {false, true, true};
	const cJSON *tj = cJSON_GetObjectItemCaseSensitive(c, "temperal_downsample");
	if (cJSON_IsArray(tj))
		for (int i = 0; i < n - 1 && i < cJSON_GetArraySize(tj); i++)
			td[i] = cJSON_IsTrue(cJSON_GetArrayItem(tj, i));
	const cJSON *as = cJSON_GetObjectItemCaseSensitive(c, "attn_scales");
	if (cJSON_IsArray(as) && cJSON_GetArraySize(as) > 0)
		note(v->unknown, sizeof v->unknown, "attn_scales");
	if (x->st)
		return;
	/* encoder: widths base x [1, mult...] */
	int64_t enc = conv3(in, base * 1, 3), a, b = base;
	for (int i = 0; i < n; i++) {
		a = i == 0 ? base : base * mult[i - 1];
		b = base * mult[i];
		for (int j = 0; j < nrb; j++)
			enc += wan_res(j == 0 ? a : b, b);
		if (i != n - 1)
			enc += wan_resample(b, false, td[i], 0);
	}
	enc += 2 * wan_res(b, b) + wan_attn(b) + b + conv3(b, 2 * z, 3); /* mid, norm_out, conv_out */
	enc += conv3(2 * z, 2 * z, 1);                                   /* quant_conv */
	/* decoder: widths dbase x [mult[-1], reversed mult...] */
	int64_t d0 = dbase * mult[n - 1];
	int64_t dec = conv3(z, z, 1) + conv3(z, d0, 3) + 2 * wan_res(d0, d0) + wan_attn(d0);
	b = d0;
	for (int i = 0; i < n; i++) {
		a = i == 0 ? d0 : dbase * mult[n - i];
		b = dbase * mult[n - 1 - i];
		if (i > 0 && !res)
			a /= 2; /* the previous upsampler halved the width */
		for (int j = 0; j < nrb + 1; j++)
			dec += wan_res(j == 0 ? a : b, b);
		bool up = i != n - 1, temporal = up && td[n - 2 - i];
		if (up)
			dec += wan_resample(b, true, temporal, res ? b : b / 2);
	}
	dec += b + conv3(b, out, 3); /* norm_out, conv_out */
	vae_model(v, "autoencoder-kl-wan", enc, base, dec, b);
	v->in_channels = in;
	v->patch_size = patch;
	v->latent_channels = z;
	v->spatial_compression = (int)sfs;
	v->temporal_compression = (int)sft;
	check_keys(x, c, wan_vae_keys);
}

/* ---- AutoencoderKLLTXVideo ---------------------------------------------------- */

static const char *const ltx_vae_keys[] = {
	"in_channels", "out_channels", "latent_channels", "block_out_channels", "down_block_types",
	"decoder_block_out_channels", "layers_per_block", "decoder_layers_per_block",
	"spatio_temporal_scaling", "decoder_spatio_temporal_scaling", "decoder_inject_noise",
	"downsample_type", "upsample_residual", "upsample_factor", "timestep_conditioning",
	"patch_size", "patch_size_t", "resnet_norm_eps", "scaling_factor", "encoder_causal",
	"decoder_causal", "spatial_compression_ratio", "temporal_compression_ratio", NULL,
};

/* A list of n booleans (or, with `scalar`, one boolean for all), or dflt
 * when absent. */
static void gbools(struct dr *x, const cJSON *c, const char *key, int n, bool *out, bool dflt,
		   bool scalar)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(c, key);
	for (int i = 0; i < n; i++)
		out[i] = dflt;
	if (!j || cJSON_IsNull(j))
		return;
	if (scalar && cJSON_IsBool(j)) { /* LTX-2: one value for every block */
		for (int i = 0; i < n; i++)
			out[i] = cJSON_IsTrue(j);
		return;
	}
	if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != n) {
		char e[64];
		snprintf(e, sizeof e, "a list of %d true / false", n);
		fail(x, key, e);
		return;
	}
	for (int i = 0; i < n; i++) {
		const cJSON *e = cJSON_GetArrayItem(j, i);
		if (!cJSON_IsBool(e))
			fail(x, key, "true / false entries");
		out[i] = cJSON_IsTrue(e);
	}
}

/* The length of a list key (lo..hi entries), or dflt when absent. */
static int glen(struct dr *x, const cJSON *c, const char *key, int dflt, int lo, int hi)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(c, key);
	if (!j || cJSON_IsNull(j))
		return dflt;
	int n = cJSON_IsArray(j) ? cJSON_GetArraySize(j) : -1;
	if (n < lo || n > hi) {
		char e[64];
		snprintf(e, sizeof e, "a list of %d to %d entries", lo, hi);
		fail(x, key, e);
		return dflt;
	}
	return n;
}

/* The timestep embedder the LTX decoder uses (256 -> E -> E, biases). */
static int64_t ltx_temb(int64_t E)
{
	return lin(256, E) + lin(E, E);
}

/* LTXVideoResnetBlock3d: RMSNorms without weights, two 3x3x3 convs, a
 * LayerNorm (weight and bias) and a 1x1x1 conv when the widths differ,
 * the noise scales (2 in) and the 4 x in scale-shift table when asked. */
static int64_t ltx_res(int64_t in, int64_t out, bool noise, bool ts)
{
	return conv3(in, out, 3) + conv3(out, out, 3) + (in != out ? 2 * in + conv3(in, out, 1) : 0) +
	       (noise ? 2 * in : 0) + (ts ? 4 * in : 0);
}

/* The elements a space-to-channel sampler folds per output element:
 * "spatial" 1x2x2, "temporal" 2x1x1, "spatiotemporal" 2x2x2 (another
 * type is named). */
static int64_t ltx_stride(struct dr *x, const char *t, const char *key)
{
	if (strcmp(t, "spatial") == 0)
		return 4;
	if (strcmp(t, "temporal") == 0)
		return 2;
	if (strcmp(t, "spatiotemporal") != 0)
		note(x->v->unknown, sizeof x->v->unknown, key);
	return 8;
}

/* A scaled block's factors on space (*sf, per side) and time (*tf). */
static void ltx_factors(const char *t, int64_t *sf, int64_t *tf)
{
	if (strcmp(t, "temporal") != 0 && *sf < (1 << 12))
		*sf *= 2;
	if (strcmp(t, "spatial") != 0 && *tf < (1 << 12))
		*tf *= 2;
}

/* The encoder: conv_in from in x p^2, the down blocks (0.9.0 layout: the
 * residual blocks at the input width, a stride-2 conv, a residual block to
 * the next width; 0.9.5: the residual blocks, then a conv or a
 * space-to-channel downsampler to the next width), the mid block, conv_out
 * to latent + 1 channels. */
static int64_t ltx_encoder(struct dr *x, const cJSON *c, int64_t in, int64_t p, int64_t lat, int64_t *sf,
			   int64_t *tf)
{
	int64_t boc[MAX_BLOCKS], lpb[MAX_BLOCKS + 1];
	static const int64_t dboc[] = {128, 256, 512, 512, 512, 512, 512, 512};
	static const int64_t dlpb[] = {4, 3, 3, 3, 4, 4, 4, 4, 4};
	int n = glen(x, c, "block_out_channels", 4, 1, MAX_BLOCKS);
	glist_n(x, c, "block_out_channels", n, boc, dboc);
	bool v095 = false, is095[MAX_BLOCKS], sts[MAX_BLOCKS];
	const char *const dd[] = {"LTXVideoDownBlock3D", "LTXVideoDownBlock3D", "LTXVideoDownBlock3D",
				  "LTXVideoDownBlock3D", NULL};
	int nd = block_types(x, c, "down_block_types", "LTXVideo095DownBlock3D", "LTXVideoDownBlock3D", is095, dd);
	if (x->st)
		return 0;
	v095 = nd > 0 && is095[nd - 1];
	int nb = n - (v095 ? 1 : 0);
	if (nd != nb || nb < 1) {
		fail(x, "down_block_types", "one per block (block_out_channels less one in the 0.9.5 layout)");
		return 0;
	}
	glist_range(x, c, "layers_per_block", nb + 1, lpb, dlpb, 0, REPEAT_MAX);
	gbools(x, c, "spatio_temporal_scaling", nb, sts, true, false);
	const cJSON *dsj = cJSON_GetObjectItemCaseSensitive(c, "downsample_type");
	if (dsj && !cJSON_IsNull(dsj) && (!cJSON_IsArray(dsj) || cJSON_GetArraySize(dsj) != nb))
		fail(x, "downsample_type", "a list of one type per down block");
	if (x->st)
		return 0;
	if (!cJSON_GetObjectItemCaseSensitive(c, "spatio_temporal_scaling")) {
		sts[nb - 1] = false; /* the default (true, true, true, false) */
		if (nb != 4)
			note(x->v->unknown, sizeof x->v->unknown, "spatio_temporal_scaling (absent)");
	}
	*sf = *tf = 1; /* the space and time factors of the scaled blocks */
	int64_t P = conv3(in * p * p, boc[0], 3), o = boc[0];
	for (int i = 0; i < nb; i++) {
		int64_t ci = o;
		o = v095 || i + 1 < nb ? boc[i + 1] : boc[i];
		P += lpb[i] * ltx_res(ci, ci, false, false);
		const char *dt = "conv";
		const cJSON *e = cJSON_GetArrayItem(dsj, i);
		if (cJSON_IsString(e))
			dt = e->valuestring;
		if (!is095[i])
			dt = "conv";
		if (sts[i])
			ltx_factors(dt, sf, tf);
		if (!is095[i]) {
			P += (sts[i] ? conv3(ci, ci, 3) : 0) + (ci != o ? ltx_res(ci, o, false, false) : 0);
		} else if (sts[i] && strcmp(dt, "conv") == 0) {
			P += conv3(ci, ci, 3);
		} else if (sts[i]) {
			int64_t st = ltx_stride(x, dt, "downsample_type");
			P += conv3(ci, o / st, 3);
		}
	}
	P += lpb[nb] * ltx_res(o, o, false, false) + conv3(o, lat + 1, 3); /* mid, conv_out */
	x->v->parts[0].hidden = boc[0];
	return P;
}

/* The decoder, from the reversed lists: conv_in from the latent, the mid
 * block, up blocks (a residual block to the new width, the upsampler's
 * conv to 8 x width / factor, the residual blocks; noise scales, the
 * time embedders and tables with timestep_conditioning), conv_out to
 * out x p^2, and the decoder's own time embedder and table. */
static int64_t ltx_decoder(struct dr *x, const cJSON *c, int64_t out, int64_t p, int64_t lat, bool ts,
			   bool v2)
{
	int64_t boc[MAX_BLOCKS], lpb[MAX_BLOCKS + 1], uf[MAX_BLOCKS], stride[MAX_BLOCKS];
	bool sts[MAX_BLOCKS], noise[MAX_BLOCKS + 1], resid[MAX_BLOCKS];
	static const int64_t dboc1[] = {128, 256, 512, 512, 512, 512, 512, 512};
	static const int64_t dboc2[] = {256, 512, 1024, 1024, 1024, 1024, 1024, 1024};
	static const int64_t dlpb1[] = {4, 3, 3, 3, 4, 4, 4, 4, 4}, dlpb2[] = {5, 5, 5, 5, 5, 5, 5, 5, 5};
	static const int64_t duf1[] = {1, 1, 1, 1, 1, 1, 1, 1}, duf2[] = {2, 2, 2, 2, 2, 2, 2, 2};
	int n = glen(x, c, "decoder_block_out_channels", v2 ? 3 : 4, 1, MAX_BLOCKS);
	glist_n(x, c, "decoder_block_out_channels", n, boc, v2 ? dboc2 : dboc1);
	glist_range(x, c, "decoder_layers_per_block", n + 1, lpb, v2 ? dlpb2 : dlpb1, 0, REPEAT_MAX);
	glist_n(x, c, "upsample_factor", n, uf, v2 ? duf2 : duf1);
	gbools(x, c, "decoder_spatio_temporal_scaling", n, sts, true, v2);
	if (!v2 && !cJSON_GetObjectItemCaseSensitive(c, "decoder_spatio_temporal_scaling")) {
		sts[n - 1] = false; /* the default (true, true, true, false) */
		if (n != 4)
			note(x->v->unknown, sizeof x->v->unknown, "decoder_spatio_temporal_scaling (absent)");
	}
	gbools(x, c, "decoder_inject_noise", n + 1, noise, false, v2);
	gbools(x, c, "upsample_residual", n, resid, v2, v2);
	/* LTX-2: each upsampler's stride by upsample_type (spatial: 1x2x2,
	 * temporal: 2x1x1, spatiotemporal: 2x2x2); LTX-Video: 2x2x2 */
	const cJSON *ut = v2 ? cJSON_GetObjectItemCaseSensitive(c, "upsample_type") : NULL;
	if (ut && !cJSON_IsNull(ut) && (!cJSON_IsArray(ut) || cJSON_GetArraySize(ut) != n))
		fail(x, "upsample_type", "a list of one type per decoder block");
	for (int i = 0; i < n; i++) {
		const cJSON *e = cJSON_GetArrayItem(ut, i);
		stride[i] = ltx_stride(x, cJSON_IsString(e) ? e->valuestring : "spatiotemporal", "upsample_type");
	}
	if (x->st)
		return 0;
	/* reversed: the deepest block first */
	int64_t o = boc[n - 1];
	int64_t P = conv3(lat, o, 3) + (ts ? ltx_temb(4 * o) : 0) + lpb[n] * ltx_res(o, o, noise[n], ts);
	for (int i = 0; i < n; i++) {
		int r = n - 1 - i;
		int64_t ci = o / uf[r];
		o = boc[r] / uf[r];
		if (ts)
			P += ltx_temb(4 * ci);
		if (ci != o)
			P += ltx_res(ci, o, noise[r], ts);
		if (sts[r])
			P += conv3(o * uf[r], (o * uf[r] * stride[r]) / uf[r], 3);
		P += lpb[r] * ltx_res(o, o, noise[r], ts);
	}
	P += conv3(o, out * p * p, 3);
	if (ts)
		P += 1 + ltx_temb(2 * o) + 2 * o; /* timestep_scale_multiplier, embedder, table */
	x->v->parts[1].hidden = o;
	return P;
}

/* ---- AutoencoderDC (SANA's DC-AE) --------------------------------------------- */

static const char *const dc_keys[] = {
	"in_channels", "latent_channels", "attention_head_dim", "encoder_block_types",
	"decoder_block_types", "encoder_block_out_channels", "decoder_block_out_channels",
	"encoder_layers_per_block", "decoder_layers_per_block", "encoder_qkv_multiscales",
	"decoder_qkv_multiscales", "upsample_block_type", "downsample_block_type",
	"decoder_norm_types", "decoder_act_fns", "encoder_out_shortcut", "decoder_in_shortcut",
	"decoder_conv_act_fn", "scaling_factor", NULL,
};

/* One stage's blocks: their type (EfficientViT or residual), norm
 * (BatchNorm or RMSNorm) and the multiscale kernels' sum of k^2 and count. */
struct dc_stage {
	bool vit, batch_norm;
	int64_t k2, nk;
};

/* A key that is a string for all stages or a list of one string per
 * stage; `a` is the value that sets the flag. */
static void dc_strs(struct dr *x, const cJSON *c, const char *key, int n, const char *a, const char *b,
		    struct dc_stage *st, bool vit)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(c, key);
	if (!j || cJSON_IsNull(j))
		return;
	if (!cJSON_IsString(j) && (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != n)) {
		char e[80];
		snprintf(e, sizeof e, "a string or a list of %d (one per block)", n);
		fail(x, key, e);
		return;
	}
	for (int i = 0; i < n; i++) {
		const cJSON *e = cJSON_IsString(j) ? j : cJSON_GetArrayItem(j, i);
		const char *v = cJSON_IsString(e) ? e->valuestring : "";
		if (strcmp(v, a) != 0 && strcmp(v, b) != 0) {
			char name[96];
			snprintf(name, sizeof name, "%s (%s)", key, v);
			note(x->v->unknown, sizeof x->v->unknown, name);
		}
		if (vit)
			st[i].vit = strcmp(v, a) == 0;
		else
			st[i].batch_norm = strcmp(v, a) == 0;
	}
}

/* The multiscale kernels per stage: a list of n lists of odd kernels. */
static void dc_scales(struct dr *x, const cJSON *c, const char *key, int n, struct dc_stage *st)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(c, key);
	for (int i = 0; i < n; i++) { /* default ((), (), (), (5,), (5,), (5,)) */
		st[i].nk = i >= 3 ? 1 : 0;
		st[i].k2 = i >= 3 ? 25 : 0;
	}
	if (!j || cJSON_IsNull(j))
		return;
	if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != n) {
		char e[64];
		snprintf(e, sizeof e, "a list of %d lists of kernel sizes", n);
		fail(x, key, e);
		return;
	}
	for (int i = 0; i < n; i++) {
		const cJSON *l = cJSON_GetArrayItem(j, i), *k;
		if (!cJSON_IsArray(l) || cJSON_GetArraySize(l) > 8) {
			fail(x, key, "lists of at most 8 kernel sizes");
			return;
		}
		st[i].nk = st[i].k2 = 0;
		cJSON_ArrayForEach(k, l)
		{
			int64_t kk = num(x, k, key, 1, 1, 63);
			st[i].nk++;
			st[i].k2 += kk * kk;
		}
	}
}

/* A 2-D conv in -> out with a k x k kernel, with or without bias. */
static int64_t conv2(int64_t in, int64_t out, int64_t k, bool bias)
{
	return in * out * k * k + (bias ? out : 0);
}

/* A norm of C channels: RMSNorm weight and bias, or BatchNorm's weight,
 * bias, running mean and variance and its batch counter (the checkpoint
 * holds them all). */
static int64_t dc_norm(int64_t C, bool batch_norm)
{
	return batch_norm ? 4 * C + 1 : 2 * C;
}

/* One block at C channels: a residual block (3x3 conv with bias, 3x3
 * without, a norm) or an EfficientViT block (multiscale linear attention:
 * q, k, v C -> inner without bias, per kernel a depthwise conv over 3
 * inner and a grouped 1x1 (3 heads groups), to_out, a norm; GLUMBConv
 * C -> 8C with bias, a 3x3 depthwise conv over 8C with bias, 4C -> C
 * without bias, an RMSNorm with bias). */
static int64_t dc_block(int64_t C, int64_t hd, const struct dc_stage *st)
{
	if (!st->vit)
		return conv2(C, C, 3, true) + conv2(C, C, 3, false) + dc_norm(C, st->batch_norm);
	int64_t heads = C / hd, inner = heads * hd;
	int64_t attn = 3 * C * inner + st->nk * 3 * inner * hd + 3 * inner * st->k2 +
		       inner * (1 + st->nk) * C + dc_norm(C, st->batch_norm);
	return attn + conv2(C, 8 * C, 1, true) + 8 * C * 9 + 8 * C + conv2(4 * C, C, 1, false) + 2 * C;
}

/* AutoencoderDC (diffusers autoencoder_dc.py): the encoder (conv_in, or a
 * downsampling conv when the first stage has no blocks; per stage its
 * blocks and a 3x3 downsampling conv to the next width - to a quarter of
 * it with pixel_unshuffle; conv_out to the latent) and the decoder (conv_in
 * from the latent, per stage an upsampling conv - to 4x the width with
 * pixel_shuffle - and the blocks, an RMSNorm with bias, conv_out or an
 * upsampling conv to the image). */
static void read_vae_dc(struct dr *x, const cJSON *c)
{
	struct vf_vision *v = x->v;
	int64_t in = gint_max(x, c, "in_channels", 3, CONV_MAX), lat = gint_max(x, c, "latent_channels", 32, CONV_MAX);
	int64_t hd = gint_max(x, c, "attention_head_dim", 32, CONV_MAX);
	static const int64_t dboc[] = {128, 256, 512, 512, 1024, 1024, 1024, 1024};
	static const int64_t delpb[] = {2, 2, 2, 3, 3, 3, 3, 3}, ddlpb[] = {3, 3, 3, 3, 3, 3, 3, 3};
	int ne = glen(x, c, "encoder_block_out_channels", 6, 1, MAX_BLOCKS);
	int nd = glen(x, c, "decoder_block_out_channels", 6, 1, MAX_BLOCKS);
	int64_t eb[MAX_BLOCKS], db[MAX_BLOCKS], el[MAX_BLOCKS], dl[MAX_BLOCKS];
	glist_n(x, c, "encoder_block_out_channels", ne, eb, dboc);
	glist_n(x, c, "decoder_block_out_channels", nd, db, dboc);
	glist_range(x, c, "encoder_layers_per_block", ne, el, delpb, 0, REPEAT_MAX);
	glist_range(x, c, "decoder_layers_per_block", nd, dl, ddlpb, 0, REPEAT_MAX);
	struct dc_stage es[MAX_BLOCKS], ds[MAX_BLOCKS];
	memset(es, 0, sizeof es);
	memset(ds, 0, sizeof ds);
	dc_strs(x, c, "encoder_block_types", ne, "EfficientViTBlock", "ResBlock", es, true);
	dc_strs(x, c, "decoder_block_types", nd, "EfficientViTBlock", "ResBlock", ds, true);
	dc_strs(x, c, "decoder_norm_types", nd, "batch_norm", "rms_norm", ds, false);
	dc_scales(x, c, "encoder_qkv_multiscales", ne, es);
	dc_scales(x, c, "decoder_qkv_multiscales", nd, ds);
	static const char *const up_t[] = {"pixel_shuffle", "interpolate", "", NULL};
	static const char *const down_t[] = {"pixel_unshuffle", "Conv", "conv", "", NULL};
	bool shuffle = strcmp(gstr(x, c, "upsample_block_type", up_t), "interpolate") != 0;
	const char *dt = gstr(x, c, "downsample_block_type", down_t);
	bool unshuffle = strcmp(dt, "pixel_unshuffle") == 0 || dt[0] == '\0';
	for (int i = 0; !x->st && i < (ne > nd ? ne : nd); i++)
		if ((i < ne && (eb[i] % hd || (unshuffle && eb[i] % 4))) || (i < nd && db[i] % hd))
			fail(x, "encoder_block_out_channels", "widths that are multiples of attention_head_dim (and of 4 "
							      "with pixel_unshuffle)");
	if (x->st)
		return;
	/* a stage with no blocks samples in the conv_in / conv_out instead */
	int64_t enc = el[0] > 0 ? conv2(in, eb[0], 3, true)
				: conv2(in, ne > 1 ? (unshuffle ? eb[1] / 4 : eb[1]) : eb[0], 3, true);
	for (int i = 0; i < ne; i++) {
		enc += el[i] * dc_block(eb[i], hd, &es[i]);
		if (i < ne - 1 && el[i] > 0)
			enc += conv2(eb[i], unshuffle ? eb[i + 1] / 4 : eb[i + 1], 3, true);
	}
	enc += conv2(eb[ne - 1], lat, 3, true);
	int64_t dec = conv2(lat, db[nd - 1], 3, true);
	for (int i = nd - 1; i >= 0; i--) {
		if (i < nd - 1 && dl[i] > 0)
			dec += conv2(db[i + 1], shuffle ? db[i] * 4 : db[i], 3, true);
		dec += dl[i] * dc_block(db[i], hd, &ds[i]);
	}
	int64_t ch = dl[0] > 0 || nd < 2 ? db[0] : db[1];
	dec += 2 * ch + (dl[0] > 0 ? conv2(ch, in, 3, true) : conv2(ch, shuffle ? in * 4 : in, 3, true));
	vae_model(v, "autoencoder-dc", enc, eb[0], dec, ch);
	v->in_channels = in;
	v->latent_channels = lat;
	v->spatial_compression = 1 << (ne - 1);
	v->temporal_compression = 1;
	check_keys(x, c, dc_keys);
}

/* ---- AutoencoderKLLTX2Video ------------------------------------------------------ */

static const char *const ltx2_vae_keys[] = {
	"in_channels", "out_channels", "latent_channels", "block_out_channels", "down_block_types",
	"decoder_block_out_channels", "layers_per_block", "decoder_layers_per_block",
	"spatio_temporal_scaling", "decoder_spatio_temporal_scaling", "decoder_inject_noise",
	"downsample_type", "upsample_type", "upsample_residual", "upsample_factor",
	"timestep_conditioning", "patch_size", "patch_size_t", "resnet_norm_eps", "scaling_factor",
	"encoder_causal", "decoder_causal", "encoder_spatial_padding_mode",
	"decoder_spatial_padding_mode", "spatial_compression_ratio", "temporal_compression_ratio", NULL,
};

/* The LTX-2 encoder: conv_in from in x p^2 to the latent width, per block
 * its residual blocks at the input width then a stride-2 conv or a
 * space-to-channel downsampler to the block's width, the mid block,
 * conv_out to latent + 1. */
static int64_t ltx2_encoder(struct dr *x, const cJSON *c, int64_t in, int64_t p, int64_t lat, int64_t *sf,
			    int64_t *tf)
{
	int64_t boc[MAX_BLOCKS], lpb[MAX_BLOCKS + 1];
	static const int64_t dboc[] = {256, 512, 1024, 2048, 2048, 2048, 2048, 2048};
	static const int64_t dlpb[] = {4, 6, 6, 2, 2, 2, 2, 2, 2};
	static const char *const dds[] = {"spatial", "temporal", "spatiotemporal", "spatiotemporal"};
	int n = glen(x, c, "block_out_channels", 4, 1, MAX_BLOCKS);
	glist_n(x, c, "block_out_channels", n, boc, dboc);
	glist_range(x, c, "layers_per_block", n + 1, lpb, dlpb, 0, REPEAT_MAX);
	bool sts[MAX_BLOCKS], plain[MAX_BLOCKS];
	gbools(x, c, "spatio_temporal_scaling", n, sts, true, true);
	const char *const dd[] = {"LTX2VideoDownBlock3D", NULL};
	int nd = block_types(x, c, "down_block_types", "-", "LTX2VideoDownBlock3D", plain, dd);
	const cJSON *dj = cJSON_GetObjectItemCaseSensitive(c, "down_block_types");
	if (!x->st && dj && !cJSON_IsNull(dj) && nd != n)
		fail(x, "down_block_types", "one per entry of block_out_channels");
	const cJSON *dsj = cJSON_GetObjectItemCaseSensitive(c, "downsample_type");
	if (dsj && !cJSON_IsNull(dsj) && (!cJSON_IsArray(dsj) || cJSON_GetArraySize(dsj) != n))
		fail(x, "downsample_type", "a list of one type per down block");
	if (x->st)
		return 0;
	int64_t P = conv3(in * p * p, lat, 3), o = lat;
	*sf = *tf = 1;
	for (int i = 0; i < n; i++) {
		int64_t ci = o;
		o = boc[i];
		P += lpb[i] * ltx_res(ci, ci, false, false);
		const cJSON *e = cJSON_GetArrayItem(dsj, i);
		const char *dt = cJSON_IsString(e) ? e->valuestring : !dsj && i < 4 ? dds[i] : "spatiotemporal";
		if (!sts[i])
			continue;
		ltx_factors(dt, sf, tf);
		P += strcmp(dt, "conv") == 0 ? conv3(ci, ci, 3) : conv3(ci, o / ltx_stride(x, dt, "downsample_type"), 3);
	}
	P += lpb[n] * ltx_res(o, o, false, false) + conv3(o, lat + 1, 3); /* mid, conv_out */
	x->v->parts[0].hidden = lat;
	return P;
}

/* AutoencoderKLLTXVideo (diffusers autoencoder_kl_ltx.py, LTX-Video 0.9.0
 * to 0.9.8) and AutoencoderKLLTX2Video (autoencoder_kl_ltx2.py, LTX-2's
 * video VAE, v2): the same decoder and layout, each its own encoder; the
 * latents' mean and std (latent each) are buffers the checkpoint holds,
 * counted with the encoder. A config's own compression ratios win. */
static void read_vae_ltx_any(struct dr *x, const cJSON *c, bool v2)
{
	struct vf_vision *v = x->v;
	int64_t in = gint_max(x, c, "in_channels", 3, CONV_MAX), out = gint_max(x, c, "out_channels", 3, CONV_MAX);
	int64_t lat = gint_max(x, c, "latent_channels", 128, CONV_MAX);
	int64_t p = gint_max(x, c, "patch_size", 4, 64), pt = gint_max(x, c, "patch_size_t", 1, 64);
	bool ts = gbool(x, c, "timestep_conditioning", false);
	if (x->st)
		return;
	snprintf(v->family, sizeof v->family, v2 ? "autoencoder-kl-ltx2" : "autoencoder-kl-ltx");
	snprintf(v->kind, sizeof v->kind, "vae");
	v->nparts = 2;
	snprintf(v->parts[0].name, sizeof v->parts[0].name, "encoder");
	snprintf(v->parts[1].name, sizeof v->parts[1].name, "decoder");
	int64_t sf = 1, tf = 1;
	int64_t enc = v2 ? ltx2_encoder(x, c, in, p, lat, &sf, &tf) : ltx_encoder(x, c, in, p, lat, &sf, &tf);
	int64_t dec = x->st ? 0 : ltx_decoder(x, c, out, p, lat, ts, v2);
	if (x->st)
		return;
	v->parts[0].params = enc + 2 * lat;
	v->parts[1].params = dec;
	v->stages = 1;
	v->in_channels = in;
	v->latent_channels = lat;
	v->patch_size = p;
	v->spatial_compression = (int)gint_max(x, c, "spatial_compression_ratio", p * sf, 1 << 24);
	v->temporal_compression = (int)gint_max(x, c, "temporal_compression_ratio", pt * tf, 1 << 24);
	check_keys(x, c, v2 ? ltx2_vae_keys : ltx_vae_keys);
}

static void read_vae_ltx(struct dr *x, const cJSON *c)
{
	read_vae_ltx_any(x, c, false);
}

static void read_vae_ltx2(struct dr *x, const cJSON *c)
{
	read_vae_ltx_any(x, c, true);
}

/* ---- AutoencoderKLLTX2Audio ------------------------------------------------------ */

static const char *const ltx2_audio_keys[] = {
	"base_channels", "output_channels", "ch_mult", "num_res_blocks", "attn_resolutions",
	"in_channels", "resolution", "latent_channels", "norm_type", "causality_axis", "dropout",
	"mid_block_add_attention", "sample_rate", "mel_hop_length", "is_causal", "mel_bins",
	"double_z", NULL,
};

/* The audio VAE's residual block: two norms (GroupNorm weight and bias,
 * or a pixel norm without), two 3x3 convs with bias, a 1x1 shortcut
 * when the widths differ. */
static int64_t ltx2a_res(int64_t in, int64_t out, bool group)
{
	return (group ? 2 * in + 2 * out : 0) + conv2(in, out, 3, true) + conv2(out, out, 3, true) +
	       (in != out ? conv2(in, out, 1, true) : 0);
}

/* Its attention block: a norm, q, k, v and proj_out 1x1 convs with bias. */
static int64_t ltx2a_attn(int64_t C, bool group)
{
	return (group ? 2 * C : 0) + 4 * conv2(C, C, 1, true);
}

/* Whether resolution r is one of attn_resolutions. */
static bool ltx2a_at(const cJSON *ar, int64_t r)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, ar)
	{
		int64_t v;
		if (vf_json_number_is_i64(e, &v) && v == r)
			return true;
	}
	return false;
}

/* AutoencoderKLLTX2Audio (diffusers autoencoder_kl_ltx2_audio.py): a 2-D
 * KL autoencoder over mel spectrograms - the encoder (conv_in, per level
 * num_res_blocks residual blocks to base x ch_mult with attention at
 * attn_resolutions, a stride-2 conv between levels, the mid block, a norm,
 * conv_out to 2 x latent with double_z), the decoder (conv_in, the mid
 * block, per level num_res_blocks + 1 blocks and a conv after upsampling,
 * a norm, conv_out), and the latents' mean and std buffers (base_channels
 * each) the checkpoint holds. */
static void read_vae_ltx2_audio(struct dr *x, const cJSON *c)
{
	struct vf_vision *v = x->v;
	int64_t base = gint_max(x, c, "base_channels", 128, CONV_MAX);
	int64_t outc = gint_max(x, c, "output_channels", 2, CONV_MAX), in = gint_max(x, c, "in_channels", 2, CONV_MAX);
	int64_t lat = gint_max(x, c, "latent_channels", 8, CONV_MAX);
	int64_t nrb = num(x, cJSON_GetObjectItemCaseSensitive(c, "num_res_blocks"), "num_res_blocks", 2, 0, REPEAT_MAX);
	int64_t res = gint_max(x, c, "resolution", 256, 1 << 20);
	bool midattn = gbool(x, c, "mid_block_add_attention", false), dz = gbool(x, c, "double_z", true);
	static const char *const norms[] = {"pixel", "group", "", NULL};
	bool group = strcmp(gstr(x, c, "norm_type", norms), "group") == 0;
	static const int64_t dmult[] = {1, 2, 4, 4, 4, 4, 4, 4};
	int n = glen(x, c, "ch_mult", 3, 1, MAX_BLOCKS);
	int64_t mult[MAX_BLOCKS];
	glist_range(x, c, "ch_mult", n, mult, dmult, 1, 1024);
	const cJSON *ar = cJSON_GetObjectItemCaseSensitive(c, "attn_resolutions");
	if (ar && !cJSON_IsNull(ar) && !cJSON_IsArray(ar))
		fail(x, "attn_resolutions", "a list of resolutions or null");
	for (int l = 0; !x->st && l < n; l++)
		if (base * mult[l] > CONV_MAX)
			fail(x, "ch_mult", "multipliers that keep base_channels x ch_mult at most 65536");
	if (x->st)
		return;
	int64_t C = base, r = res;
	int64_t enc = conv2(in, base, 3, true);
	for (int l = 0; l < n; l++) {
		int64_t o = base * mult[l];
		for (int64_t b = 0; b < nrb; b++) {
			enc += ltx2a_res(C, o, group);
			C = o;
			if (ltx2a_at(ar, r))
				enc += ltx2a_attn(C, group);
		}
		if (l != n - 1) {
			enc += conv2(C, C, 3, true);
			r /= 2;
		}
	}
	int64_t mid = 2 * ltx2a_res(C, C, group) + (midattn ? ltx2a_attn(C, group) : 0);
	enc += mid + (group ? 2 * C : 0) + conv2(C, dz ? 2 * lat : lat, 3, true);
	C = base * mult[n - 1];
	r = res >> (n - 1);
	int64_t dec = conv2(lat, C, 3, true) + mid;
	for (int l = n - 1; l >= 0; l--) {
		int64_t o = base * mult[l];
		for (int64_t b = 0; b < nrb + 1; b++) {
			dec += ltx2a_res(C, o, group);
			C = o;
			if (ltx2a_at(ar, r))
				dec += ltx2a_attn(C, group);
		}
		if (l != 0) {
			dec += conv2(C, C, 3, true);
			r *= 2;
		}
	}
	dec += (group ? 2 * C : 0) + conv2(C, outc, 3, true);
	vae_model(v, "autoencoder-ltx2-audio", enc + 2 * base, base, dec, C);
	v->in_channels = in;
	v->latent_channels = lat;
	v->spatial_compression = 4; /* mel bins per latent row (diffusers' fixed factor) */
	v->temporal_compression = 4;
	check_keys(x, c, ltx2_audio_keys);
}

/* ---- dispatch --------------------------------------------------------------- */

static const struct {
	const char *cls;
	void (*read)(struct dr *, const cJSON *);
} readers[] = {
	{"WanTransformer3DModel", read_wan},
	{"WanVACETransformer3DModel", read_wan_vace},
	{"SD3Transformer2DModel", read_sd3},
	{"CogVideoXTransformer3DModel", read_cogvideox},
	{"HunyuanVideoTransformer3DModel", read_hunyuan_video},
	{"SanaTransformer2DModel", read_sana},
	{"AuraFlowTransformer2DModel", read_auraflow},
	{"MochiTransformer3DModel", read_mochi},
	{"UNet2DConditionModel", read_unet2d},
	{"UNet3DConditionModel", read_unet3d},
	{"AutoencoderKL", read_vae_kl},
	{"AutoencoderKLWan", read_vae_wan},
	{"AutoencoderKLHunyuanVideo", read_vae_hunyuan},
	{"AutoencoderKLCogVideoX", read_vae_cogvideox},
	{"AutoencoderKLMochi", read_vae_mochi},
	{"AutoencoderKLLTXVideo", read_vae_ltx},
	{"AutoencoderKLLTX2Video", read_vae_ltx2},
	{"AutoencoderKLLTX2Audio", read_vae_ltx2_audio},
	{"AutoencoderDC", read_vae_dc},
};

bool vf__diffusers_config_is(const cJSON *cfg)
{
	return cJSON_IsObject(cfg) && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(cfg, "_class_name"));
}

vf_status vf__diffusers_from_config(const cJSON *cfg, const char *what, struct vf_vision *v,
				    struct vf_error *err)
{
	struct dr x = {.what = what, .err = err, .v = v};
	const char *cls = vf_json_get_str(cfg, "_class_name");
	for (size_t i = 0; i < sizeof readers / sizeof readers[0]; i++)
		if (strcmp(cls, readers[i].cls) == 0) {
			readers[i].read(&x, cfg);
			if (x.st)
				return x.st;
			for (int k = 0; k < v->nparts; k++)
				v->params += v->parts[k].params;
			return VF_OK;
		}
	/* a class not read here: named, not counted */
	snprintf(v->kind, sizeof v->kind, "unknown");
	snprintf(v->family, sizeof v->family, "%.23s", cls);
	snprintf(v->unknown, sizeof v->unknown, "_class_name %.200s", cls);
	v->stages = 1;
	return VF_OK;
}
