/* vlm.c - towers.h: the dispatch, DINOv2 ViT backbones and Qwen2.5-VL
 * vision-language models, counted exactly from their config.json.
 *
 * Layouts counted (facts read from the public transformers modelling
 * code; no code copied):
 *  - DINOv2 (Dinov2Model): class token h, mask token h, positions
 *    ((image / patch)^2 + 1) h, patch conv c p^2 h + h; per layer two
 *    LayerNorms (2h each), q/k/v h x h (bias: qkv_bias), output h x h + h,
 *    two layer scales h each, an MLP fc1 h -> f + f, fc2 f -> h + h with
 *    f = h x mlp_ratio, or with use_swiglu_ffn a SwiGLU weights_in
 *    h -> 2 f' + 2 f', weights_out f' -> h + h, f' = (2 f / 3 rounded down,
 *    then up to a multiple of 8); a final LayerNorm 2h; no pooler.
 *  - Qwen2.5-VL vision tower (Qwen2-VL: see read_qwen_vl): patch conv3d c t p^2 -> d without bias; per
 *    block RMSNorms d before attention and MLP, qkv d -> 3d + 3d, proj
 *    d x d + d, a gated MLP gate/up d -> i + i each, down i -> d + d; the
 *    merger: RMSNorm d, m = d s^2 (s the spatial merge), m x m + m, then
 *    m -> out_hidden_size + out_hidden_size. The language model is Qwen2's
 *    (q/k/v biases) from the top-level keys or text_config.
 *  - SigLIP towers, Gemma-3 multimodal and LLaVA-OneVision: see
 *    siglip_tower, read_gemma3 and read_llava_onevision below. */
#include "vramfit/model/towers.h"

#include <stdio.h>
#include <string.h>

#include "vramfit/base/json.h"
#include "arch-internal.h"

void vf__towers_check_keys(const cJSON *cfg, const char *table, const char *prefix,
			   struct vf_vision *v)
{
	struct vf_arch scratch;
	vf_arch_init(&scratch);
	vf_arch_check_keys(cfg, table, prefix, &scratch);
	if (!scratch.not_understood[0])
		return;
	size_t n = strlen(v->unknown);
	snprintf(v->unknown + n, sizeof v->unknown - n, "%s%s", n ? ", " : "",
		 scratch.not_understood);
}

/* An integer field (1 .. its bound) with a default. */
static vf_status num(const cJSON *c, const char *key, int64_t dflt, int64_t *out,
		     const char *what, struct vf_error *err)
{
	bool f;
	*out = dflt;
	return vf__arch_get_int(c, key, 1, out, &f, what, err);
}

/* Products of widths stay under 2^62: every width read is <= 2^18 here. */
#define WMAX ((int64_t)1 << 18)

static vf_status width_check(int64_t x, const char *key, const char *what, struct vf_error *err)
{
	if (x > WMAX)
		return vf_error_set(err, VF_ERR, "%s: field %s: above %lld", what, key,
				    (long long)WMAX);
	return VF_OK;
}

/* ---- DINOv2 ------------------------------------------------------------------ */

static vf_status read_dinov2(const cJSON *c, const char *what, struct vf_vision *v,
			     struct vf_error *err)
{
	int64_t h, L, heads, img, p, ch;
	VF_TRY(num(c, "hidden_size", 768, &h, what, err));
	VF_TRY(num(c, "num_hidden_layers", 12, &L, what, err));
	VF_TRY(num(c, "num_attention_heads", 12, &heads, what, err));
	VF_TRY(num(c, "image_size", 224, &img, what, err));
	VF_TRY(num(c, "patch_size", 14, &p, what, err));
	VF_TRY(num(c, "num_channels", 3, &ch, what, err));
	VF_TRY(width_check(h, "hidden_size", what, err));
	VF_TRY(width_check(img, "image_size", what, err));
	if (p > 1024 || ch > 1024 || L > 4096)
		return vf_error_set(err, VF_ERR, "%s: patch_size, num_channels or layers too large", what);
	double ratio = 4;
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(c, "mlp_ratio");
	if (r && !cJSON_IsNull(r)) {
		if (!cJSON_IsNumber(r) || !(r->valuedouble > 0 && r->valuedouble <= 64))
			return vf_error_set(err, VF_ERR, "%s: field mlp_ratio: expected a number 0-64",
					    what);
		ratio = r->valuedouble;
	}
	bool qkv_bias = true, swiglu = false;
	VF_TRY(vf__arch_get_bool(c, "qkv_bias", &qkv_bias, what, err));
	VF_TRY(vf__arch_get_bool(c, "use_swiglu_ffn", &swiglu, what, err));
	const cJSON *ls = cJSON_GetObjectItemCaseSensitive(c, "layerscale_value");
	(void)ls; /* its value initialises the scales; they exist whatever it is */
	int64_t f = (int64_t)((double)h * ratio), grid = img / p, layer;
	int64_t mlp = swiglu ? 0 : h * f + f + f * h + h;
	if (swiglu) {
		int64_t fh = ((f * 2 / 3) + 7) / 8 * 8;
		mlp = h * 2 * fh + 2 * fh + fh * h + h;
		f = fh;
	}
	layer = 4 * h + 3 * h * h + (qkv_bias ? 3 * h : 0) + h * h + h + 2 * h + mlp;
	snprintf(v->kind, sizeof v->kind, "vit");
	snprintf(v->family, sizeof v->family, "dinov2");
	v->stages = 1;
	v->image_size = img;
	v->patch_size = p;
	v->image_tokens = grid * grid + 1;
	v->class_token = true;
	struct vf_vision_part *pt = &v->parts[v->nparts++];
	snprintf(pt->name, sizeof pt->name, "vision_model");
	int64_t reg = 0; /* dinov2_with_registers: register tokens */
	if (strcmp(vf_json_get_str(c, "model_type"), "dinov2_with_registers") == 0) {
		reg = 4;
		VF_TRY(vf__arch_get_int(c, "num_register_tokens", 0, &reg, &(bool){false}, what, err));
		if (reg > 4096)
			return vf_error_set(err, VF_ERR, "%s: field num_register_tokens: above 4096", what);
		v->image_tokens += reg;
	}
	pt->params = 2 * h + reg * h + (grid * grid + 1) * h + ch * p * p * h + h + L * layer + 2 * h;
	pt->layers = L;
	pt->hidden = h;
	pt->heads = heads;
	pt->ffn = f;
	pt->tokens = v->image_tokens;
	pt->trained[0] = true;
	vf__towers_check_keys(c, "dinov2", "", v);
	return VF_OK;
}

/* ---- ViT ---------------------------------------------------------------------------- */

/* ViT (google/vit-*): class token, positions (n + 1) x h, patch conv with
 * bias; per layer two LayerNorms, q/k/v (bias: qkv_bias) and the output
 * dense with bias, the MLP with biases; the final LayerNorm. ViTModel adds
 * the pooler (h x h + h); ViTForImageClassification drops it and adds
 * the classifier h -> labels + labels (labels: num_labels, or id2label's
 * size; 2 when neither). */
static vf_status read_vit(const cJSON *c, const char *what, struct vf_vision *v,
			  struct vf_error *err)
{
	int64_t h, L, heads, f, img, p, ch;
	VF_TRY(num(c, "hidden_size", 768, &h, what, err));
	VF_TRY(num(c, "num_hidden_layers", 12, &L, what, err));
	VF_TRY(num(c, "num_attention_heads", 12, &heads, what, err));
	VF_TRY(num(c, "intermediate_size", 3072, &f, what, err));
	VF_TRY(num(c, "image_size", 224, &img, what, err));
	VF_TRY(num(c, "patch_size", 16, &p, what, err));
	VF_TRY(num(c, "num_channels", 3, &ch, what, err));
	if (h > WMAX || f > WMAX || img > WMAX || p > 1024 || ch > 1024)
		return vf_error_set(err, VF_ERR, "%s: widths, image, patch or channel sizes too large", what);
	bool qkv_bias = true;
	VF_TRY(vf__arch_get_bool(c, "qkv_bias", &qkv_bias, what, err));
	const cJSON *arch = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "architectures"), 0);
	bool cls = cJSON_IsString(arch) && strstr(arch->valuestring, "ForImageClassification");
	int64_t labels = 2;
	const cJSON *ids = cJSON_GetObjectItemCaseSensitive(c, "id2label");
	if (cJSON_IsObject(ids))
		labels = cJSON_GetArraySize(ids);
	VF_TRY(num(c, "num_labels", labels, &labels, what, err));
	int64_t grid = img / p;
	snprintf(v->kind, sizeof v->kind, "vit");
	snprintf(v->family, sizeof v->family, "vit");
	v->stages = 1;
	v->image_size = img;
	v->patch_size = p;
	v->image_tokens = grid * grid + 1;
	v->class_token = true;
	struct vf_vision_part *pt = &v->parts[v->nparts++];
	snprintf(pt->name, sizeof pt->name, "vision_model");
	int64_t layer = 4 * h + 3 * h * h + (qkv_bias ? 3 * h : 0) + h * h + h + h * f + f + f * h + h;
	pt->params = h + (grid * grid + 1) * h + ch * p * p * h + h + L * layer + 2 * h +
		     (cls ? h * labels + labels : h * h + h);
	pt->layers = L;
	pt->hidden = h;
	pt->heads = heads;
	pt->ffn = f;
	pt->tokens = v->image_tokens;
	pt->trained[0] = true;
	vf__towers_check_keys(c, "vit", "", v);
	return VF_OK;
}

/* ---- Qwen2.5-VL ---------------------------------------------------------------- */

/* The language model: text_config, or the top-level keys without the
 * vision ones, read as Qwen2. */
static vf_status qwen_lm(const cJSON *cfg, const char *what, struct vf_vision *v,
			 struct vf_vision_part *p, struct vf_error *err)
{
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(cfg, "text_config");
	cJSON *t = cJSON_Duplicate(cJSON_IsObject(tc) ? tc : cfg, 1);
	if (!t)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	cJSON_DeleteItemFromObjectCaseSensitive(t, "vision_config");
	cJSON_DeleteItemFromObjectCaseSensitive(t, "text_config");
	cJSON_DeleteItemFromObjectCaseSensitive(t, "architectures");
	cJSON_DeleteItemFromObjectCaseSensitive(t, "rope_scaling"); /* mrope: no parameters */
	cJSON_DeleteItemFromObjectCaseSensitive(t, "model_type");
	cJSON_AddStringToObject(t, "model_type", "qwen2");
	char w[200];
	snprintf(w, sizeof w, "%s: %s", what, cJSON_IsObject(tc) ? "text_config" : "language model");
	vf_status st = vf_arch_from_config(t, w, &v->lm, err);
	cJSON_Delete(t);
	if (st)
		return st;
	struct vf_param_groups g;
	if (!vf_arch_param_groups(&v->lm, &g))
		return vf_error_set(err, VF_ERR, "%s: language model: sizes overflow", what);
	if (v->lm.approximate) {
		size_t n = strlen(v->unknown);
		snprintf(v->unknown + n, sizeof v->unknown - n, "%s%s", n ? ", " : "",
			 v->lm.not_understood);
	}
	snprintf(v->lm.family, sizeof v->lm.family, "qwen2");
	v->has_lm = true;
	snprintf(p->name, sizeof p->name, "language_model");
	p->params = g.total;
	p->layers = v->lm.layers;
	p->hidden = v->lm.hidden;
	p->heads = v->lm.heads;
	p->ffn = v->lm.ffn;
	return VF_OK;
}

/* The image assumed for tokens: 448 x 448 px (dynamic resolution). */
#define QWEN_IMAGE 448

/* The tokens of a Qwen-VL image (one per merged patch of patch x merge
 * px) through parts 0-2 (tower, merger, language model), and the
 * training stages (1: the merger; 2: merger and language model). */
static void qwen_tokens(struct vf_vision *v, int64_t p, int64_t merge)
{
	v->image_size = QWEN_IMAGE;
	v->patch_size = p * merge;
	int64_t grid = QWEN_IMAGE / (p * merge);
	v->image_tokens = grid * grid;
	v->parts[0].tokens = v->image_tokens * merge * merge;
	v->parts[1].tokens = v->parts[2].tokens = v->image_tokens;
	size_t n = strlen(v->assumed);
	snprintf(v->assumed + n, sizeof v->assumed - n,
		 "%simages of %d x %d px (dynamic resolution: %lld tokens each after the merger)",
		 n ? "; " : "", QWEN_IMAGE, QWEN_IMAGE, (long long)v->image_tokens);
	v->parts[1].trained[0] = v->parts[1].trained[1] = true;
	v->parts[2].trained[1] = true;
}

/* Qwen2-VL's MLP width: embed_dim x mlp_ratio (4 when absent). */
static vf_status mlp_ratio_width(const cJSON *vc, int64_t d, int64_t *inter, const char *w,
				 struct vf_error *err)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(vc, "mlp_ratio");
	double ratio = 4;
	if (r && !cJSON_IsNull(r)) {
		if (!cJSON_IsNumber(r) || !(r->valuedouble > 0 && r->valuedouble <= 64))
			return vf_error_set(err, VF_ERR, "%s: field mlp_ratio: expected a number 0-64", w);
		ratio = r->valuedouble;
	}
	*inter = (int64_t)((double)(d < WMAX ? d : WMAX) * ratio);
	return VF_OK;
}

/* Qwen2-VL (qwen2: true): the same tower with LayerNorms (weight and
 * bias) before attention and MLP, a plain GELU MLP of embed_dim x
 * mlp_ratio with biases, the merger's LayerNorm; its vision_config names
 * the tower width embed_dim and the merger's output hidden_size. */
static vf_status read_qwen_vl(const cJSON *cfg, bool qwen2, const char *what, struct vf_vision *v,
			      struct vf_error *err)
{
	const cJSON *vc = cJSON_GetObjectItemCaseSensitive(cfg, "vision_config");
	if (!cJSON_IsObject(vc))
		vc = NULL;
	cJSON *empty = NULL;
	if (!vc) {
		empty = cJSON_CreateObject();
		if (!empty)
			return vf_error_set(err, VF_ENOMEM, "out of memory");
		vc = empty;
	}
	char w[200];
	snprintf(w, sizeof w, "%s: vision_config", what);
	int64_t depth, d, inter, heads, ch, out, p, merge, tp;
	vf_status st = VF_OK;
	if (!st)
		st = num(vc, "depth", 32, &depth, w, err);
	if (!st)
		st = num(vc, qwen2 ? "embed_dim" : "hidden_size", qwen2 ? 1280 : 3584, &d, w, err);
	if (!st)
		st = qwen2 ? mlp_ratio_width(vc, d, &inter, w, err)
			   : num(vc, "intermediate_size", 3420, &inter, w, err);
	if (!st)
		st = num(vc, "num_heads", 16, &heads, w, err);
	ch = 3;
	if (!st)
		st = num(vc, cJSON_GetObjectItemCaseSensitive(vc, "in_chans") ? "in_chans" : "in_channels",
			 3, &ch, w, err);
	if (!st)
		st = num(vc, qwen2 ? "hidden_size" : "out_hidden_size", 3584, &out, w, err);
	if (!st)
		st = num(vc, "patch_size", 14, &p, w, err);
	if (!st)
		st = num(vc, "spatial_merge_size", 2, &merge, w, err);
	if (!st)
		st = num(vc, "temporal_patch_size", 2, &tp, w, err);
	if (!st && (d > WMAX || inter > WMAX || out > WMAX || p > 1024 || ch > 1024 || tp > 64 ||
		    merge > 16 || depth > 4096))
		st = vf_error_set(err, VF_ERR, "%s: widths above %lld or patch, channel, merge or depth "
					       "sizes too large",
				  w, (long long)WMAX);
	if (!st)
		vf__towers_check_keys(vc, qwen2 ? "qwen2_vl.vision" : "qwen2_5_vl.vision",
				      "vision_config.", v);
	cJSON_Delete(empty);
	if (st)
		return st;
	snprintf(v->kind, sizeof v->kind, "vlm");
	snprintf(v->family, sizeof v->family, qwen2 ? "qwen2_vl" : "qwen2_5_vl");
	v->stages = 2;
	struct vf_vision_part *pv = &v->parts[0], *pp = &v->parts[1], *pl = &v->parts[2];
	v->nparts = 3;
	snprintf(pv->name, sizeof pv->name, "vision_tower");
	int64_t block = 2 * d + 3 * d * d + 3 * d + d * d + d + 2 * (d * inter + inter) + inter * d + d;
	if (qwen2) /* two LayerNorms, fc1 / fc2 */
		block = 4 * d + 3 * d * d + 3 * d + d * d + d + d * inter + inter + inter * d + d;
	pv->params = ch * tp * p * p * d + depth * block;
	pv->layers = depth;
	pv->hidden = d;
	pv->heads = heads;
	pv->ffn = inter;
	int64_t m = d * merge * merge;
	snprintf(pp->name, sizeof pp->name, "projector");
	pp->params = (qwen2 ? 2 * d : d) + m * m + m + m * out + out;
	st = qwen_lm(cfg, what, v, pl, err);
	if (st)
		return st;
	if (pl->hidden != out) {
		size_t n = strlen(v->unknown);
		snprintf(v->unknown + n, sizeof v->unknown - n,
			 "%svision_config.out_hidden_size differs from the language model's hidden size",
			 n ? ", " : "");
	}
	qwen_tokens(v, p, merge);
	vf__towers_check_keys(cfg, qwen2 ? "qwen2_vl" : "qwen2_5_vl", "", v);
	return VF_OK;
}

/* ---- SigLIP towers (Gemma-3, LLaVA-OneVision) ---------------------------------- */

/* A SigLIP vision tower from its vision_config (SiglipVisionConfig
 * defaults): patch conv with bias, positions (image / patch)^2 x h,
 * layers of two LayerNorms, q/k/v/o with biases and a GELU MLP with
 * biases, the post-LayerNorm, and the attention-pooling head when
 * vision_use_head (probe h, in_proj 3h^2 + 3h, out_proj h^2 + h,
 * LayerNorm, MLP). */
static vf_status siglip_tower(const cJSON *vc, const char *what, struct vf_vision *v,
			      struct vf_vision_part *p, int64_t *tokens, struct vf_error *err)
{
	char w[200];
	snprintf(w, sizeof w, "%s: vision_config", what);
	int64_t h, f, L, heads, img, ps, ch;
	VF_TRY(num(vc, "hidden_size", 768, &h, w, err));
	VF_TRY(num(vc, "intermediate_size", 3072, &f, w, err));
	VF_TRY(num(vc, "num_hidden_layers", 12, &L, w, err));
	VF_TRY(num(vc, "num_attention_heads", 12, &heads, w, err));
	VF_TRY(num(vc, "image_size", 224, &img, w, err));
	VF_TRY(num(vc, "patch_size", 16, &ps, w, err));
	VF_TRY(num(vc, "num_channels", 3, &ch, w, err));
	VF_TRY(width_check(h, "hidden_size", w, err));
	VF_TRY(width_check(f, "intermediate_size", w, err));
	VF_TRY(width_check(img, "image_size", w, err));
	if (ps > 1024 || ch > 1024)
		return vf_error_set(err, VF_ERR, "%s: patch_size or num_channels too large", w);
	bool head = true;
	VF_TRY(vf__arch_get_bool(vc, "vision_use_head", &head, w, err));
	int64_t grid = img / ps, mlp = h * f + f + f * h + h;
	int64_t layer = 2 * 2 * h + 4 * (h * h + h) + mlp;
	snprintf(p->name, sizeof p->name, "vision_tower");
	p->params = ch * ps * ps * h + h + grid * grid * h + L * layer + 2 * h;
	if (head)
		p->params += h + 3 * h * h + 3 * h + h * h + h + 2 * h + mlp;
	p->layers = L;
	p->hidden = h;
	p->heads = heads;
	p->ffn = f;
	*tokens = grid * grid;
	v->image_size = img;
	v->patch_size = ps;
	vf__towers_check_keys(vc, "siglip_vision", "vision_config.", v);
	return VF_OK;
}

/* A language model from text_config read as `model_type` when it names
 * none. */
/* transformers' LlamaConfig / MistralConfig / Qwen2Config defaults for
 * the size keys a partial text_config leaves out (llava-hf configs list
 * only those that differ); each one used is named in v->assumed. */
static const struct {
	const char *model_type, *key;
	int64_t value;
} lm_defaults[] = {
	{"llama", "hidden_size", 4096},         {"llama", "intermediate_size", 11008},
	{"llama", "num_hidden_layers", 32},     {"llama", "num_attention_heads", 32},
	{"llama", "vocab_size", 32000},         {"mistral", "hidden_size", 4096},
	{"mistral", "intermediate_size", 14336}, {"mistral", "num_hidden_layers", 32},
	{"mistral", "num_attention_heads", 32}, {"mistral", "num_key_value_heads", 8},
	{"mistral", "vocab_size", 32000},       {"qwen2", "hidden_size", 4096},
	{"qwen2", "intermediate_size", 22016},  {"qwen2", "num_hidden_layers", 32},
	{"qwen2", "num_attention_heads", 32},   {"qwen2", "num_key_value_heads", 32},
	{"qwen2", "vocab_size", 151936},
};

static vf_status text_lm(const cJSON *cfg, const char *model_type, const char *what,
			 struct vf_vision *v, struct vf_vision_part *p, struct vf_error *err)
{
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(cfg, "text_config");
	cJSON *t = cJSON_IsObject(tc) ? cJSON_Duplicate(tc, 1) : cJSON_CreateObject();
	if (!t)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	if (!vf_json_get_str(t, "model_type")) { /* absent, or not a string: the wrapper's */
		if (cJSON_GetObjectItemCaseSensitive(t, "model_type")) {
			size_t n = strlen(v->assumed);
			snprintf(v->assumed + n, sizeof v->assumed - n, "%stext_config.model_type %s (not a string)",
				 n ? ", " : "", model_type);
		}
		cJSON_DeleteItemFromObjectCaseSensitive(t, "model_type");
		cJSON_AddStringToObject(t, "model_type", model_type);
	}
	const char *mt = vf_json_get_str(t, "model_type");
	for (size_t i = 0; mt && i < sizeof lm_defaults / sizeof lm_defaults[0]; i++)
		if (strcmp(mt, lm_defaults[i].model_type) == 0 &&
		    !cJSON_GetObjectItemCaseSensitive(t, lm_defaults[i].key)) {
			cJSON_AddNumberToObject(t, lm_defaults[i].key, (double)lm_defaults[i].value);
			size_t n = strlen(v->assumed);
			snprintf(v->assumed + n, sizeof v->assumed - n, "%stext_config.%s %lld",
				 n ? ", " : "", lm_defaults[i].key, (long long)lm_defaults[i].value);
		}
	/* the wrapper's tie_word_embeddings when text_config has none */
	const cJSON *tie = cJSON_GetObjectItemCaseSensitive(cfg, "tie_word_embeddings");
	if (cJSON_IsBool(tie) && !cJSON_GetObjectItemCaseSensitive(t, "tie_word_embeddings"))
		cJSON_AddBoolToObject(t, "tie_word_embeddings", cJSON_IsTrue(tie));
	char w[200];
	snprintf(w, sizeof w, "%s: text_config", what);
	vf_status st = vf_arch_from_config(t, w, &v->lm, err);
	cJSON_Delete(t);
	if (st)
		return st;
	struct vf_param_groups g;
	if (!vf_arch_param_groups(&v->lm, &g))
		return vf_error_set(err, VF_ERR, "%s: text_config: sizes not countable", what);
	if (v->lm.approximate) {
		size_t n = strlen(v->unknown);
		snprintf(v->unknown + n, sizeof v->unknown - n, "%s%s", n ? ", " : "",
			 v->lm.not_understood);
	}
	v->has_lm = true;
	snprintf(p->name, sizeof p->name, "language_model");
	p->params = g.total;
	p->layers = v->lm.layers;
	p->hidden = v->lm.hidden;
	p->heads = v->lm.heads;
	p->ffn = v->lm.ffn;
	return VF_OK;
}

/* Gemma-3 multimodal: a SigLIP tower without its head, the projector
 * (mm_input_projection_weight vision h x text h, mm_soft_emb_norm over
 * the vision width; the 4 x 4 average pool has no parameters), Gemma-3's
 * language model; mm_tokens_per_image tokens per image. */
static vf_status read_gemma3(const cJSON *cfg, const char *what, struct vf_vision *v,
			     struct vf_error *err)
{
	snprintf(v->kind, sizeof v->kind, "vlm");
	snprintf(v->family, sizeof v->family, "gemma3");
	v->stages = 2;
	v->nparts = 3;
	struct vf_vision_part *pv = &v->parts[0], *pp = &v->parts[1], *pl = &v->parts[2];
	int64_t patches, mm = 256;
	VF_TRY(siglip_tower(cJSON_GetObjectItemCaseSensitive(cfg, "vision_config"), what, v, pv,
			    &patches, err));
	VF_TRY(text_lm(cfg, "gemma3_text", what, v, pl, err));
	VF_TRY(num(cfg, "mm_tokens_per_image", 256, &mm, what, err));
	snprintf(pp->name, sizeof pp->name, "projector");
	pp->params = pv->hidden * pl->hidden + pv->hidden;
	v->image_tokens = mm;
	pv->tokens = patches;
	pp->tokens = pl->tokens = mm;
	pp->trained[0] = pp->trained[1] = true;
	pl->trained[1] = true;
	vf__towers_check_keys(cfg, "gemma3_mm", "", v);
	return VF_OK;
}

/* LLaVA-OneVision: a SigLIP tower, the projector linear_1 (vision h x
 * the feature layers taken -> text h) and linear_2 (text h -> text h),
 * with biases unless multimodal_projector_bias is false, the
 * image_newline vector (text h), the language model (Qwen2). */
static vf_status read_llava_onevision(const cJSON *cfg, const char *what, struct vf_vision *v,
				      struct vf_error *err)
{
	snprintf(v->kind, sizeof v->kind, "vlm");
	snprintf(v->family, sizeof v->family, "llava_onevision");
	v->stages = 2;
	v->nparts = 3;
	struct vf_vision_part *pv = &v->parts[0], *pp = &v->parts[1], *pl = &v->parts[2];
	int64_t patches;
	VF_TRY(siglip_tower(cJSON_GetObjectItemCaseSensitive(cfg, "vision_config"), what, v, pv,
			    &patches, err));
	VF_TRY(text_lm(cfg, "qwen2", what, v, pl, err));
	const cJSON *fl = cJSON_GetObjectItemCaseSensitive(cfg, "vision_feature_layer");
	int64_t nfl = cJSON_IsArray(fl) ? cJSON_GetArraySize(fl) : 1;
	if (nfl < 1)
		nfl = 1;
	if (nfl > 256)
		return vf_error_set(err, VF_ERR, "%s: field vision_feature_layer: more than 256 layers",
				    what);
	bool pbias = true;
	VF_TRY(vf__arch_get_bool(cfg, "multimodal_projector_bias", &pbias, what, err));
	int64_t vh = pv->hidden * nfl, th = pl->hidden;
	snprintf(pp->name, sizeof pp->name, "projector");
	pp->params = vh * th + th * th + (pbias ? 2 * th : 0) + th; /* + image_newline */
	v->image_tokens = patches;
	pv->tokens = pp->tokens = pl->tokens = patches;
	pp->trained[0] = pp->trained[1] = true;
	pl->trained[1] = true;
	snprintf(v->assumed, sizeof v->assumed,
		 "one %lld px crop per image (anyres adds crops: more tokens)",
		 (long long)v->image_size);
	vf__towers_check_keys(cfg, "llava_onevision", "", v);
	return VF_OK;
}

/* ---- Qwen3-VL ---------------------------------------------------------------------- */

/* Qwen3-VL (and its MoE): the vision tower (patch conv3d c t p^2 -> d
 * with bias; a learned position table num_position_embeddings x d; per
 * block two LayerNorms 2d, qkv d -> 3d + 3d, proj d x d + d, MLP d -> i + i
 * and i -> d + d); the merger (LayerNorm d, m = d s^2: m x m + m,
 * m -> out + out) and one DeepStack merger per deepstack_visual_indexes
 * entry (the same with its LayerNorm over m); the language model Qwen3's
 * (or Qwen3-MoE's) from text_config. */
static vf_status read_qwen3_vl(const cJSON *cfg, bool moe, const char *what, struct vf_vision *v,
			       struct vf_error *err)
{
	const cJSON *vc = cJSON_GetObjectItemCaseSensitive(cfg, "vision_config");
	cJSON *empty = cJSON_IsObject(vc) ? NULL : cJSON_CreateObject();
	if (!cJSON_IsObject(vc) && !empty)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	if (empty)
		vc = empty;
	char w[200];
	snprintf(w, sizeof w, "%s: vision_config", what);
	int64_t depth = 27, d = 1152, inter = 4304, heads = 16, ch = 3, p = 16, merge = 2, tp = 2;
	int64_t out = 3584, npos = 2304, deep = 3;
	vf_status st = VF_OK;
	struct {
		const char *key;
		int64_t *val;
	} k[] = {{"depth", &depth},         {"hidden_size", &d},
		 {"intermediate_size", &inter}, {"num_heads", &heads},
		 {"in_channels", &ch},      {"patch_size", &p},
		 {"spatial_merge_size", &merge}, {"temporal_patch_size", &tp},
		 {"out_hidden_size", &out}, {"num_position_embeddings", &npos}};
	for (size_t i = 0; i < sizeof k / sizeof k[0] && !st; i++)
		st = num(vc, k[i].key, *k[i].val, k[i].val, w, err);
	const cJSON *ds = cJSON_GetObjectItemCaseSensitive(vc, "deepstack_visual_indexes");
	if (cJSON_IsArray(ds))
		deep = cJSON_GetArraySize(ds);
	if (!st && (d > WMAX || inter > WMAX || out > WMAX || p > 1024 || ch > 1024 || tp > 64 ||
		    merge > 16 || depth > 4096 || npos > ((int64_t)1 << 24) || deep > 256))
		st = vf_error_set(err, VF_ERR, "%s: widths above %lld or patch, channel, merge, depth or "
					       "position sizes too large",
				  w, (long long)WMAX);
	if (!st)
		vf__towers_check_keys(vc, "qwen3_vl.vision", "vision_config.", v);
	cJSON_Delete(empty);
	if (st)
		return st;
	snprintf(v->kind, sizeof v->kind, "vlm");
	snprintf(v->family, sizeof v->family, moe ? "qwen3_vl_moe" : "qwen3_vl");
	v->stages = 2;
	v->nparts = 3;
	struct vf_vision_part *pv = &v->parts[0], *pp = &v->parts[1], *pl = &v->parts[2];
	snprintf(pv->name, sizeof pv->name, "vision_tower");
	int64_t block = 4 * d + 3 * d * d + 3 * d + d * d + d + d * inter + inter + inter * d + d;
	pv->params = ch * tp * p * p * d + d + npos * d + depth * block;
	pv->layers = depth;
	pv->hidden = d;
	pv->heads = heads;
	pv->ffn = inter;
	int64_t m = d * merge * merge, mlp = m * m + m + m * out + out;
	snprintf(pp->name, sizeof pp->name, "projector");
	pp->params = 2 * d + mlp + deep * (2 * m + mlp);
	/* text_config read as Qwen3 (MoE); the wrapper's tie_word_embeddings
	 * when text_config has none */
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(cfg, "text_config");
	cJSON *t = cJSON_IsObject(tc) ? cJSON_Duplicate(tc, 1) : cJSON_CreateObject();
	if (!t)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	cJSON_DeleteItemFromObjectCaseSensitive(t, "model_type");
	cJSON_DeleteItemFromObjectCaseSensitive(t, "rope_scaling"); /* mrope: no parameters */
	cJSON_AddStringToObject(t, "model_type", moe ? "qwen3_moe" : "qwen3");
	const cJSON *tie = cJSON_GetObjectItemCaseSensitive(cfg, "tie_word_embeddings");
	cJSON *wrap = cJSON_CreateObject();
	if (wrap && cJSON_IsBool(tie))
		cJSON_AddBoolToObject(wrap, "tie_word_embeddings", cJSON_IsTrue(tie));
	if (!wrap) {
		cJSON_Delete(t);
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	}
	cJSON_AddItemToObject(wrap, "text_config", t);
	st = text_lm(wrap, moe ? "qwen3_moe" : "qwen3", what, v, pl, err);
	cJSON_Delete(wrap);
	if (st)
		return st;
	qwen_tokens(v, p, merge);
	vf__towers_check_keys(cfg, "qwen3_vl", "", v);
	return VF_OK;
}

/* ---- Llama-4 --------------------------------------------------------------------- */

/* Llama-4 multimodal: the vision model (patch linear c p^2 -> d without
 * bias, class embedding d, positions ((image / patch)^2 + 1) x d, pre and
 * post LayerNorms; layers of two LayerNorms, q/k/v/o with biases and a
 * GELU MLP d -> i -> d with biases; the pixel-shuffle adapter fc1
 * i -> projector_input_dim and fc2 projector_output_dim^2, no biases),
 * the projector vision_output_dim -> text h without bias, and the
 * language model (Llama-4 text: interleaved MoE, shared expert). */
static vf_status read_llama4(const cJSON *cfg, const char *what, struct vf_vision *v,
			     struct vf_error *err)
{
	const cJSON *vc = cJSON_GetObjectItemCaseSensitive(cfg, "vision_config");
	char w[200];
	snprintf(w, sizeof w, "%s: vision_config", what);
	int64_t d, L, heads, inter, img, p, ch, pin, pout, vout;
	VF_TRY(num(vc, "hidden_size", 768, &d, w, err));
	VF_TRY(num(vc, "num_hidden_layers", 34, &L, w, err));
	VF_TRY(num(vc, "num_attention_heads", 16, &heads, w, err));
	VF_TRY(num(vc, "intermediate_size", 5632, &inter, w, err));
	VF_TRY(num(vc, "image_size", 448, &img, w, err));
	VF_TRY(num(vc, "patch_size", 14, &p, w, err));
	VF_TRY(num(vc, "num_channels", 3, &ch, w, err));
	VF_TRY(num(vc, "projector_input_dim", 4096, &pin, w, err));
	VF_TRY(num(vc, "projector_output_dim", 4096, &pout, w, err));
	VF_TRY(num(vc, "vision_output_dim", 7680, &vout, w, err));
	const char *keys[] = {"hidden_size", "intermediate_size", "image_size", "projector_input_dim",
			      "projector_output_dim", "vision_output_dim"};
	int64_t vals[] = {d, inter, img, pin, pout, vout};
	for (int i = 0; i < 6; i++)
		VF_TRY(width_check(vals[i], keys[i], w, err));
	if (p > 1024 || ch > 1024)
		return vf_error_set(err, VF_ERR, "%s: patch_size or num_channels too large", w);
	vf__towers_check_keys(vc, "llama4.vision", "vision_config.", v);
	snprintf(v->kind, sizeof v->kind, "vlm");
	snprintf(v->family, sizeof v->family, "llama4");
	v->stages = 2;
	v->nparts = 3;
	struct vf_vision_part *pv = &v->parts[0], *pp = &v->parts[1], *pl = &v->parts[2];
	int64_t grid = img / p;
	snprintf(pv->name, sizeof pv->name, "vision_tower");
	pv->params = ch * p * p * d + d + (grid * grid + 1) * d + 4 * d +
		     L * (4 * d + 4 * (d * d + d) + d * inter + inter + inter * d + d) + inter * pin +
		     pout * pout;
	pv->layers = L;
	pv->hidden = d;
	pv->heads = heads;
	pv->ffn = inter;
	VF_TRY(text_lm(cfg, "llama4_text", what, v, pl, err));
	snprintf(pp->name, sizeof pp->name, "projector");
	pp->params = vout * pl->hidden;
	/* the pixel shuffle (ratio 0.5) keeps a quarter of the patches */
	v->image_size = img;
	v->patch_size = p * 2;
	v->image_tokens = grid * grid / 4;
	pv->tokens = grid * grid + 1;
	pp->tokens = pl->tokens = v->image_tokens;
	pp->trained[0] = pp->trained[1] = true;
	pl->trained[1] = true;
	snprintf(v->assumed, sizeof v->assumed, "one %lld px tile per image (more tiles: more tokens)",
		 (long long)img);
	vf__towers_check_keys(cfg, "llama4_mm", "", v);
	return VF_OK;
}

/* ---- InternVL ------------------------------------------------------------------- */

/* An integer or a [h, w] list (image_size, patch_size): the product's two
 * sides in *a and *b. */
static vf_status num_pair(const cJSON *c, const char *key, int64_t dflt, int64_t *a, int64_t *b,
			  const char *what, struct vf_error *err)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(c, key);
	if (cJSON_IsArray(n)) {
		int64_t v[2];
		for (int i = 0; i < 2; i++) {
			const cJSON *e = cJSON_GetArrayItem(n, i);
			if (!e || !vf_json_number_is_i64(e, &v[i]) || v[i] < 1 || v[i] > WMAX)
				return vf_error_set(err, VF_ERR, "%s: field %s: expected [h, w] whole numbers",
						    what, key);
		}
		*a = v[0];
		*b = v[1];
		return VF_OK;
	}
	VF_TRY(num(c, key, dflt, a, what, err));
	*b = *a;
	return width_check(*a, key, what, err);
}

/* InternVL (transformers' internvl): the InternViT tower (class token,
 * an optional mask token, patch conv with bias, absolute positions; per
 * layer q/k/v (bias: attention_bias), the output projection with bias,
 * q/k RMSNorms with use_qk_norm, two norms (LayerNorm or RMSNorm by
 * norm_type), two layer scales, a GELU MLP with biases; a final LayerNorm
 * unless use_mean_pooling), the projector (LayerNorm over the shuffled
 * width d / r^2, linear_1 -> text h, linear_2 text h x text h, biases),
 * the language model (Qwen2 by default). */
static vf_status read_internvl(const cJSON *cfg, const char *what, struct vf_vision *v,
			       struct vf_error *err)
{
	const cJSON *vc = cJSON_GetObjectItemCaseSensitive(cfg, "vision_config");
	char w[200];
	snprintf(w, sizeof w, "%s: vision_config", what);
	int64_t d, L, heads, f, ih, iw, ph, pw, ch;
	VF_TRY(num(vc, "hidden_size", 1024, &d, w, err));
	VF_TRY(num(vc, "num_hidden_layers", 24, &L, w, err));
	VF_TRY(num(vc, "num_attention_heads", 16, &heads, w, err));
	VF_TRY(num(vc, "intermediate_size", 4096, &f, w, err));
	VF_TRY(num(vc, "num_channels", 3, &ch, w, err));
	VF_TRY(num_pair(vc, "image_size", 448, &ih, &iw, w, err));
	VF_TRY(num_pair(vc, "patch_size", 14, &ph, &pw, w, err));
	VF_TRY(width_check(d, "hidden_size", w, err));
	VF_TRY(width_check(f, "intermediate_size", w, err));
	if (ph > 1024 || pw > 1024 || ch > 1024)
		return vf_error_set(err, VF_ERR, "%s: patch_size or num_channels too large", w);
	bool attn_bias = false, qk_norm = false, mask = false, abs_pos = true, mean_pool = true;
	VF_TRY(vf__arch_get_bool(vc, "attention_bias", &attn_bias, w, err));
	VF_TRY(vf__arch_get_bool(vc, "use_qk_norm", &qk_norm, w, err));
	VF_TRY(vf__arch_get_bool(vc, "use_mask_token", &mask, w, err));
	VF_TRY(vf__arch_get_bool(vc, "use_absolute_position_embeddings", &abs_pos, w, err));
	VF_TRY(vf__arch_get_bool(vc, "use_mean_pooling", &mean_pool, w, err));
	const char *nt = vf_json_get_str(vc, "norm_type");
	int64_t aff = nt && strcmp(nt, "rms_norm") == 0 ? 1 : 2;
	if (nt && strcmp(nt, "rms_norm") != 0 && strcmp(nt, "layer_norm") != 0)
		vf__towers_check_keys(vc, "internvl.vision.norm", "vision_config.", v);
	double ratio = 0.5;
	const cJSON *dr = cJSON_GetObjectItemCaseSensitive(cfg, "downsample_ratio");
	if (cJSON_IsNumber(dr)) {
		if (!(dr->valuedouble >= 1.0 / 16 && dr->valuedouble <= 1))
			return vf_error_set(err, VF_ERR, "%s: field downsample_ratio: expected 1/16 to 1", what);
		ratio = dr->valuedouble;
	}
	int64_t r = (int64_t)(1 / ratio), np = (ih / ph) * (iw / pw);
	vf__towers_check_keys(vc, "internvl.vision", "vision_config.", v);
	snprintf(v->kind, sizeof v->kind, "vlm");
	snprintf(v->family, sizeof v->family, "internvl");
	v->stages = 2;
	v->nparts = 3;
	struct vf_vision_part *pv = &v->parts[0], *pp = &v->parts[1], *pl = &v->parts[2];
	int64_t layer = 3 * d * d + (attn_bias ? 3 * d : 0) + d * d + d + (qk_norm ? 2 * d : 0) +
			2 * aff * d + 2 * d + d * f + f + f * d + d;
	snprintf(pv->name, sizeof pv->name, "vision_tower");
	pv->params = d + (mask ? d : 0) + ch * ph * pw * d + d + (abs_pos ? (np + 1) * d : 0) +
		     L * layer + (mean_pool ? 0 : 2 * d);
	pv->layers = L;
	pv->hidden = d;
	pv->heads = heads;
	pv->ffn = f;
	VF_TRY(text_lm(cfg, "qwen2", what, v, pl, err));
	int64_t k = d * r * r, th = pl->hidden;
	snprintf(pp->name, sizeof pp->name, "projector");
	pp->params = 2 * k + k * th + th + th * th + th;
	v->image_size = ih;
	v->patch_size = ph * r;
	v->image_tokens = np / (r * r);
	pv->tokens = np + 1;
	pp->tokens = pl->tokens = v->image_tokens;
	pp->trained[0] = pp->trained[1] = true;
	pl->trained[1] = true;
	snprintf(v->assumed, sizeof v->assumed, "one %lld px tile per image (dynamic tiling: more)",
		 (long long)ih);
	vf__towers_check_keys(cfg, "internvl", "", v);
	return VF_OK;
}

/* InternVL's remote-code configs (model_type internvl_chat: llm_config,
 * an InternViT vision_config with qkv_bias / qk_normalization): the same
 * modules as transformers' internvl under other key names (InternViT has
 * no final norm: use_mean_pooling); read through read_internvl on a
 * renamed copy. */
static vf_status read_internvl_chat(const cJSON *cfg, const char *what, struct vf_vision *v,
				    struct vf_error *err)
{
	cJSON *c = cJSON_Duplicate(cfg, 1);
	if (!c)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	cJSON *llm = cJSON_DetachItemFromObjectCaseSensitive(c, "llm_config");
	if (llm) {
		cJSON_DeleteItemFromObjectCaseSensitive(c, "text_config");
		cJSON_AddItemToObject(c, "text_config", llm);
		/* the LM's own architectures list names InternLM2 / Qwen2 / Llama */
		cJSON_DeleteItemFromObjectCaseSensitive(llm, "architectures");
	}
	cJSON *vc = cJSON_GetObjectItemCaseSensitive(c, "vision_config");
	static const char *const ren[][2] = {{"qkv_bias", "attention_bias"},
					     {"qk_normalization", "use_qk_norm"}};
	if (cJSON_IsObject(vc)) {
		for (size_t i = 0; i < sizeof ren / sizeof ren[0]; i++) {
			cJSON *e = cJSON_DetachItemFromObjectCaseSensitive(vc, ren[i][0]);
			if (e)
				cJSON_AddItemToObject(vc, ren[i][1], e);
		}
		cJSON_DeleteItemFromObjectCaseSensitive(vc, "use_mean_pooling");
		cJSON_AddBoolToObject(vc, "use_mean_pooling", true);
		/* InternViT keys with no parameters */
		static const char *const drop[] = {"use_flash_attn", "drop_path_rate",
						   "qk_normalization", "architectures"};
		for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
			cJSON_DeleteItemFromObjectCaseSensitive(vc, drop[i]);
	}
	static const char *const top[] = {"template", "ps_version", "use_thumbnail", "select_layer",
					  "force_image_size", "dynamic_image_size", "max_dynamic_patch",
					  "min_dynamic_patch", "use_backbone_lora", "use_llm_lora",
					  "pad2square", "image_fold"};
	for (size_t i = 0; i < sizeof top / sizeof top[0]; i++)
		cJSON_DeleteItemFromObjectCaseSensitive(c, top[i]);
	vf_status st = read_internvl(c, what, v, err);
	cJSON_Delete(c);
	return st;
}

/* ---- SigLIP2 --------------------------------------------------------------------- */

/* SigLIP2 (NaFlex): the vision tower is SigLIP's with a linear patch
 * embedding (c p^2 -> d with bias) and num_patches learned positions
 * (resized to each image's grid); the text tower SigLIP's (tokens,
 * positions, layers, final LayerNorm, head h -> projection_size with
 * bias); logit_scale and logit_bias. model_type siglip2 (both towers)
 * or siglip2_vision_model / siglip2_text_model (one). */
static vf_status siglip2_vision(const cJSON *c, const char *w, struct vf_vision *v,
				struct vf_vision_part *p, struct vf_error *err)
{
	int64_t h, f, L, heads, np, ps, ch;
	VF_TRY(num(c, "hidden_size", 768, &h, w, err));
	VF_TRY(num(c, "intermediate_size", 3072, &f, w, err));
	VF_TRY(num(c, "num_hidden_layers", 12, &L, w, err));
	VF_TRY(num(c, "num_attention_heads", 12, &heads, w, err));
	VF_TRY(num(c, "num_patches", 256, &np, w, err));
	VF_TRY(num(c, "patch_size", 16, &ps, w, err));
	VF_TRY(num(c, "num_channels", 3, &ch, w, err));
	VF_TRY(width_check(h, "hidden_size", w, err));
	VF_TRY(width_check(f, "intermediate_size", w, err));
	VF_TRY(width_check(np, "num_patches", w, err));
	if (ps > 1024 || ch > 1024 || L > 4096)
		return vf_error_set(err, VF_ERR, "%s: patch_size, num_channels or layers too large", w);
	bool head = true;
	VF_TRY(vf__arch_get_bool(c, "vision_use_head", &head, w, err));
	int64_t mlp = h * f + f + f * h + h;
	snprintf(p->name, sizeof p->name, "vision_tower");
	p->params = ch * ps * ps * h + h + np * h + L * (4 * h + 4 * (h * h + h) + mlp) + 2 * h;
	if (head)
		p->params += h + 4 * (h * h + h) + 2 * h + mlp;
	p->layers = L;
	p->hidden = h;
	p->heads = heads;
	p->ffn = f;
	p->tokens = np;
	p->trained[0] = true;
	int64_t side = 1;
	while ((side + 1) * (side + 1) <= np)
		side++;
	v->image_size = side * ps;
	v->patch_size = ps;
	v->image_tokens = np;
	return VF_OK;
}

static vf_status siglip2_text(const cJSON *c, const char *w, struct vf_vision_part *p,
			      struct vf_error *err)
{
	int64_t V, h, f, L, heads, P, d;
	VF_TRY(num(c, "vocab_size", 32000, &V, w, err));
	VF_TRY(num(c, "hidden_size", 768, &h, w, err));
	VF_TRY(num(c, "intermediate_size", 3072, &f, w, err));
	VF_TRY(num(c, "num_hidden_layers", 12, &L, w, err));
	VF_TRY(num(c, "num_attention_heads", 12, &heads, w, err));
	VF_TRY(num(c, "max_position_embeddings", 64, &P, w, err));
	VF_TRY(num(c, "projection_size", h, &d, w, err));
	VF_TRY(width_check(h, "hidden_size", w, err));
	VF_TRY(width_check(f, "intermediate_size", w, err));
	VF_TRY(width_check(d, "projection_size", w, err));
	if (V > ((int64_t)1 << 24) || P > ((int64_t)1 << 24) || L > 4096)
		return vf_error_set(err, VF_ERR, "%s: vocab_size, positions or layers too large", w);
	snprintf(p->name, sizeof p->name, "text_tower");
	p->params = V * h + P * h + L * (4 * h + 4 * (h * h + h) + h * f + f + f * h + h) + 2 * h +
		    h * d + d;
	p->layers = L;
	p->hidden = h;
	p->heads = heads;
	p->ffn = f;
	p->tokens = P;
	p->trained[0] = true;
	return VF_OK;
}

static vf_status read_siglip2(const cJSON *cfg, const char *mt, const char *what,
			      struct vf_vision *v, struct vf_error *err)
{
	snprintf(v->family, sizeof v->family, "siglip2");
	v->stages = 1;
	char w[200];
	if (strcmp(mt, "siglip2") != 0) { /* one tower */
		snprintf(v->kind, sizeof v->kind, "vit");
		struct vf_vision_part *p = &v->parts[v->nparts++];
		bool vision = strstr(mt, "vision") != NULL;
		snprintf(w, sizeof w, "%s", what);
		VF_TRY(vision ? siglip2_vision(cfg, w, v, p, err) : siglip2_text(cfg, w, p, err));
		vf__towers_check_keys(cfg, vision ? "siglip2.vision" : "siglip2.text", "", v);
		return VF_OK;
	}
	snprintf(v->kind, sizeof v->kind, "clip");
	const cJSON *vc = cJSON_GetObjectItemCaseSensitive(cfg, "vision_config");
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(cfg, "text_config");
	snprintf(w, sizeof w, "%s: vision_config", what);
	VF_TRY(siglip2_vision(vc, w, v, &v->parts[0], err));
	snprintf(w, sizeof w, "%s: text_config", what);
	VF_TRY(siglip2_text(tc, w, &v->parts[1], err));
	v->nparts = 2;
	v->parts[1].params += 2; /* logit_scale, logit_bias */
	vf__towers_check_keys(vc, "siglip2.vision", "vision_config.", v);
	vf__towers_check_keys(tc, "siglip2.text", "text_config.", v);
	vf__towers_check_keys(cfg, "siglip2", "", v);
	return VF_OK;
}

/* ---- LLaVA-NeXT ------------------------------------------------------------------ */

/* A CLIP vision tower without its projection (CLIPVisionConfig defaults):
 * patch conv without bias, class token, positions (n + 1) x h, the
 * pre-LayerNorm, layers as SigLIP's, the post-LayerNorm. */
static vf_status clip_tower(const cJSON *vc, const char *what, struct vf_vision *v,
			    struct vf_vision_part *p, int64_t *patches, struct vf_error *err)
{
	char w[200];
	snprintf(w, sizeof w, "%s: vision_config", what);
	int64_t h, f, L, heads, img, ps, ch;
	VF_TRY(num(vc, "hidden_size", 768, &h, w, err));
	VF_TRY(num(vc, "intermediate_size", 3072, &f, w, err));
	VF_TRY(num(vc, "num_hidden_layers", 12, &L, w, err));
	VF_TRY(num(vc, "num_attention_heads", 12, &heads, w, err));
	VF_TRY(num(vc, "image_size", 224, &img, w, err));
	VF_TRY(num(vc, "patch_size", 32, &ps, w, err));
	VF_TRY(num(vc, "num_channels", 3, &ch, w, err));
	VF_TRY(width_check(h, "hidden_size", w, err));
	VF_TRY(width_check(f, "intermediate_size", w, err));
	VF_TRY(width_check(img, "image_size", w, err));
	if (ps > 1024 || ch > 1024 || L > 4096)
		return vf_error_set(err, VF_ERR, "%s: patch_size, num_channels or layers too large", w);
	int64_t n = (img / ps) * (img / ps);
	snprintf(p->name, sizeof p->name, "vision_tower");
	p->params = ch * ps * ps * h + h + (n + 1) * h + 2 * h +
		    L * (4 * h + 4 * (h * h + h) + h * f + f + f * h + h) + 2 * h;
	p->layers = L;
	p->hidden = h;
	p->heads = heads;
	p->ffn = f;
	*patches = n;
	v->image_size = img;
	v->patch_size = ps;
	vf__towers_check_keys(vc, "clip_vision", "vision_config.", v);
	return VF_OK;
}

/* LLaVA-NeXT: a CLIP (or SigLIP) tower, the projector linear_1 (vision h
 * x feature layers -> text h) and linear_2 with biases unless
 * multimodal_projector_bias is false, image_newline (text h), the
 * language model (Mistral, Llama, Vicuna, ...). */
static vf_status read_llava_next(const cJSON *cfg, const char *what, struct vf_vision *v,
				 struct vf_error *err)
{
	snprintf(v->kind, sizeof v->kind, "vlm");
	snprintf(v->family, sizeof v->family, "llava_next");
	v->stages = 2;
	v->nparts = 3;
	struct vf_vision_part *pv = &v->parts[0], *pp = &v->parts[1], *pl = &v->parts[2];
	const cJSON *vc = cJSON_GetObjectItemCaseSensitive(cfg, "vision_config");
	const char *vmt = vf_json_get_str(vc, "model_type");
	int64_t patches;
	if (vmt && strncmp(vmt, "siglip", 6) == 0)
		VF_TRY(siglip_tower(vc, what, v, pv, &patches, err));
	else
		VF_TRY(clip_tower(vc, what, v, pv, &patches, err));
	VF_TRY(text_lm(cfg, "llama", what, v, pl, err));
	const cJSON *fl = cJSON_GetObjectItemCaseSensitive(cfg, "vision_feature_layer");
	int64_t nfl = cJSON_IsArray(fl) ? cJSON_GetArraySize(fl) : 1;
	if (nfl < 1)
		nfl = 1;
	if (nfl > 256)
		return vf_error_set(err, VF_ERR, "%s: field vision_feature_layer: more than 256 layers",
				    what);
	bool pbias = true;
	VF_TRY(vf__arch_get_bool(cfg, "multimodal_projector_bias", &pbias, what, err));
	int64_t vh = pv->hidden * nfl, th = pl->hidden;
	snprintf(pp->name, sizeof pp->name, "projector");
	pp->params = vh * th + th * th + (pbias ? 2 * th : 0) + th; /* + image_newline */
	const char *sel = vf_json_get_str(cfg, "vision_feature_select_strategy");
	v->image_tokens = patches; /* "default" drops the class token; "full" keeps it */
	if (sel && strcmp(sel, "full") == 0)
		v->image_tokens = patches + 1;
	pv->tokens = patches + 1;
	pp->tokens = pl->tokens = v->image_tokens;
	pp->trained[0] = pp->trained[1] = true;
	pl->trained[1] = true;
	size_t n = strlen(v->assumed);
	snprintf(v->assumed + n, sizeof v->assumed - n,
		 "%sone %lld px view per image (anyres adds crops: more tokens)", n ? "; " : "",
		 (long long)v->image_size);
	vf__towers_check_keys(cfg, "llava_next", "", v);
	return VF_OK;
}

/* ---- dispatch ------------------------------------------------------------------ */

enum tkind {
	TK_NONE,
	TK_WHISPER,
	TK_W2V,
	TK_SPEECHT5,
	TK_DINOV2,
	TK_QWEN25VL,
	TK_GEMMA3,
	TK_LLAVA_OV,
	TK_QWEN3VL,
	TK_QWEN3VL_MOE,
	TK_LLAMA4,
	TK_INTERNVL,
	TK_SIGLIP2,
	TK_INTERNVL_CHAT,
	TK_QWEN2VL,
	TK_LLAVA_NEXT,
	TK_VIT
};

static enum tkind kind_of(const cJSON *cfg)
{
	const char *mt = vf_json_get_str(cfg, "model_type");
	if (!mt)
		return TK_NONE;
	if (strcmp(mt, "whisper") == 0)
		return TK_WHISPER;
	if (strcmp(mt, "wav2vec2") == 0 || strcmp(mt, "hubert") == 0 || strcmp(mt, "wavlm") == 0)
		return TK_W2V;
	/* SpeechT5 counted as text-to-speech only (its other heads: not understood) */
	const cJSON *a0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cfg, "architectures"), 0);
	if (strcmp(mt, "speecht5") == 0 && cJSON_IsString(a0) &&
	    strcmp(a0->valuestring, "SpeechT5ForTextToSpeech") == 0)
		return TK_SPEECHT5;
	if (strcmp(mt, "dinov2") == 0 || strcmp(mt, "dinov2_with_registers") == 0)
		return TK_DINOV2;
	if (strcmp(mt, "vit") == 0)
		return TK_VIT;
	if (strcmp(mt, "qwen2_5_vl") == 0)
		return TK_QWEN25VL;
	if (strcmp(mt, "qwen2_vl") == 0)
		return TK_QWEN2VL;
	if (strcmp(mt, "llava_onevision") == 0)
		return TK_LLAVA_OV;
	if (strcmp(mt, "llava_next") == 0)
		return TK_LLAVA_NEXT;
	if (strcmp(mt, "qwen3_vl") == 0)
		return TK_QWEN3VL;
	if (strcmp(mt, "internvl") == 0)
		return TK_INTERNVL;
	if (strcmp(mt, "internvl_chat") == 0)
		return TK_INTERNVL_CHAT;
	if (strcmp(mt, "siglip2") == 0 || strcmp(mt, "siglip2_vision_model") == 0 ||
	    strcmp(mt, "siglip2_text_model") == 0)
		return TK_SIGLIP2;
	if (strcmp(mt, "qwen3_vl_moe") == 0)
		return TK_QWEN3VL_MOE;
	if (strcmp(mt, "llama4") == 0 &&
	    cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(cfg, "vision_config")) &&
	    cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(cfg, "text_config")))
		return TK_LLAMA4;
	/* gemma3 with a vision tower (text-only checkpoints are gemma3_text
	 * or have no vision_config) */
	if (strcmp(mt, "gemma3") == 0 &&
	    cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(cfg, "vision_config")) &&
	    cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(cfg, "text_config")))
		return TK_GEMMA3;
	return TK_NONE;
}

bool vf_towers_config_is(const cJSON *cfg)
{
	return cJSON_IsObject(cfg) && kind_of(cfg) != TK_NONE;
}

vf_status vf_towers_from_config(const cJSON *cfg, const char *what, struct vf_vision *v,
				struct vf_error *err)
{
	memset(v, 0, sizeof *v);
	vf_status st;
	switch (cJSON_IsObject(cfg) ? kind_of(cfg) : TK_NONE) {
	case TK_WHISPER: st = vf__towers_read_whisper(cfg, what, v, err); break;
	case TK_W2V: st = vf__towers_read_wav2vec2(cfg, what, v, err); break;
	case TK_SPEECHT5: st = vf__towers_read_speecht5(cfg, what, v, err); break;
	case TK_DINOV2: st = read_dinov2(cfg, what, v, err); break;
	case TK_VIT: st = read_vit(cfg, what, v, err); break;
	case TK_QWEN25VL: st = read_qwen_vl(cfg, false, what, v, err); break;
	case TK_QWEN2VL: st = read_qwen_vl(cfg, true, what, v, err); break;
	case TK_GEMMA3: st = read_gemma3(cfg, what, v, err); break;
	case TK_LLAVA_OV: st = read_llava_onevision(cfg, what, v, err); break;
	case TK_LLAVA_NEXT: st = read_llava_next(cfg, what, v, err); break;
	case TK_QWEN3VL: st = read_qwen3_vl(cfg, false, what, v, err); break;
	case TK_QWEN3VL_MOE: st = read_qwen3_vl(cfg, true, what, v, err); break;
	case TK_LLAMA4: st = read_llama4(cfg, what, v, err); break;
	case TK_INTERNVL: st = read_internvl(cfg, what, v, err); break;
	case TK_INTERNVL_CHAT: st = read_internvl_chat(cfg, what, v, err); break;
	case TK_SIGLIP2: st = read_siglip2(cfg, vf_json_get_str(cfg, "model_type"), what, v, err); break;
	default:
		return vf_error_set(err, VF_ENOTFOUND, "%s: not a speech, ViT or VLM config", what);
	}
	if (st)
		return st;
	v->params = 0;
	for (int i = 0; i < v->nparts; i++)
		if (v->parts[i].params < 0 ||
		    __builtin_add_overflow(v->params, v->parts[i].params, &v->params))
			return vf_error_set(err, VF_ERR, "%s: sizes overflow a parameter count", what);
	return VF_OK;
}
