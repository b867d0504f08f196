/* ltx.c - the LTX-2 audio-video diffusion transformer from its own file
 * (ltx.h): its transformer config (from __metadata__) or its tensor names
 * and shapes, and the exact parameter count of the layout the public
 * ltx-core model code builds. */
#include "vramfit/model/ltx.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/base/json.h"

static bool ltx_sane(const struct vf_ltx_arch *a);

static void ltx_defaults(struct vf_ltx_arch *a)
{
	memset(a, 0, sizeof *a);
	a->layers = 48;
	a->heads = 32;
	a->head_dim = 128;
	a->in_channels = a->out_channels = 128;
	a->cross_dim = 4096;
	a->caption_channels = 3840;
	a->audio = true;
	a->audio_heads = 32;
	a->audio_head_dim = 64;
	a->audio_in_channels = a->audio_out_channels = 128;
	a->audio_cross_dim = 2048;
	a->prompt_adaln = true;
	a->ff_bias = a->audio_ff_bias = true;
	a->caption_projection = true;
	a->conn_layers = 2;              /* Embeddings1DConnector defaults */
	a->conn_heads = 30;
	a->conn_head_dim = 128;
	a->conn_registers = 128;
	a->conn_ff_bias = true;
}

/* The audio connector takes the video connector's value of each key the
 * config leaves out (AudioEmbeddings1DConnectorConfigurator). */
static void conn_fallback(struct vf_ltx_arch *a)
{
	if (!a->audio_conn_layers)
		a->audio_conn_layers = a->conn_layers;
	if (!a->audio_conn_heads)
		a->audio_conn_heads = a->conn_heads;
	if (!a->audio_conn_head_dim)
		a->audio_conn_head_dim = a->conn_head_dim;
}

static void add_name(char *list, size_t n, const char *name)
{
	size_t len = strlen(list);
	if (len + 2 >= n)
		return;
	snprintf(list + len, n - len, "%s%s", len ? ", " : "", name);
}

/* Keys that change nothing counted here (numerics, positions, schedule). */
static const char *const ltx_no_size[] = {
	"_class_name", "_diffusers_version", "_name_or_path", "dropout", "norm_eps",
	"positional_embedding_theta", "positional_embedding_max_pos",
	"audio_positional_embedding_max_pos", "rope_type", "frequencies_precision",
	"timestep_scale_multiplier", "av_ca_timestep_scale_multiplier", "use_middle_indices_grid",
	"upcast_attention", "use_linear_projection", "cross_attention_norm",
	"num_embeds_ada_norm", "positional_embedding_type", "standardization_norm",
	"use_tpu_flash_attention", "causal_temporal_positioning",
	/* the connectors' and text projection's numerics and switches */
	"use_embeddings_connector", "connector_positional_embedding_max_pos", "connector_norm_output",
	"connector_learnable_registers_std",
	"connector_num_learnable_registers" /* the code builds 128 whatever it says */, "text_encoder_norm_type", "attention_type", "norm_num_groups",
};

/* Keys whose value the model code requires (check_config_value): any other
 * value builds a layout not counted here. */
static const struct {
	const char *key;
	const char *str; /* expected string, or NULL for a bool */
	bool b;
} ltx_fixed[] = {
	{"attention_bias", NULL, true},          {"activation_fn", "gelu-approximate", false},
	{"norm_elementwise_affine", NULL, false}, {"qk_norm", "rms_norm", false},
	{"share_ff", NULL, false},               {"av_cross_ada_norm", NULL, true},
	{"use_audio_video_cross_attention", NULL, true}, {"double_self_attention", NULL, false},
	{"only_cross_attention", NULL, false},
	/* the feature extractor's V2 layout requires exactly these */
	{"caption_projection_first_linear", NULL, false}, {"caption_projection_second_linear", NULL, false},
	{"caption_proj_input_norm", NULL, false},
};

static bool ltx_int_key(const cJSON *v, struct vf_ltx_arch *a, int *res)
{
	static const struct {
		const char *key;
		size_t off;
	} f[] = {
		{"num_layers", offsetof(struct vf_ltx_arch, layers)},
		{"num_attention_heads", offsetof(struct vf_ltx_arch, heads)},
		{"attention_head_dim", offsetof(struct vf_ltx_arch, head_dim)},
		{"in_channels", offsetof(struct vf_ltx_arch, in_channels)},
		{"out_channels", offsetof(struct vf_ltx_arch, out_channels)},
		{"cross_attention_dim", offsetof(struct vf_ltx_arch, cross_dim)},
		{"caption_channels", offsetof(struct vf_ltx_arch, caption_channels)},
		{"audio_num_attention_heads", offsetof(struct vf_ltx_arch, audio_heads)},
		{"audio_attention_head_dim", offsetof(struct vf_ltx_arch, audio_head_dim)},
		{"audio_in_channels", offsetof(struct vf_ltx_arch, audio_in_channels)},
		{"audio_out_channels", offsetof(struct vf_ltx_arch, audio_out_channels)},
		{"audio_cross_attention_dim", offsetof(struct vf_ltx_arch, audio_cross_dim)},
		{"connector_num_layers", offsetof(struct vf_ltx_arch, conn_layers)},
		{"connector_num_attention_heads", offsetof(struct vf_ltx_arch, conn_heads)},
		{"connector_attention_head_dim", offsetof(struct vf_ltx_arch, conn_head_dim)},
		{"audio_connector_num_layers", offsetof(struct vf_ltx_arch, audio_conn_layers)},
		{"audio_connector_num_attention_heads", offsetof(struct vf_ltx_arch, audio_conn_heads)},
		{"audio_connector_attention_head_dim", offsetof(struct vf_ltx_arch, audio_conn_head_dim)},
	};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		if (strcmp(v->string, f[i].key) != 0)
			continue;
		int64_t x;
		*res = vf_json_number_is_i64(v, &x) && x >= 1 && x <= (1 << 20) ? 1 : -1;
		if (*res > 0)
			*(int64_t *)(void *)((char *)a + f[i].off) = x;
		return true;
	}
	return false;
}

static bool ltx_bool_key(const cJSON *v, struct vf_ltx_arch *a, int *res)
{
	static const struct {
		const char *key;
		size_t off;
		bool invert;
	} f[] = {
		{"apply_gated_attention", offsetof(struct vf_ltx_arch, gated_attention), false},
		{"cross_attention_adaln", offsetof(struct vf_ltx_arch, cross_attention_adaln), false},
		{"use_prompt_adaln_single", offsetof(struct vf_ltx_arch, prompt_adaln), false},
		{"ff_bias", offsetof(struct vf_ltx_arch, ff_bias), false},
		{"audio_ff_bias", offsetof(struct vf_ltx_arch, audio_ff_bias), false},
		{"caption_proj_before_connector", offsetof(struct vf_ltx_arch, caption_projection), true},
		{"use_keyframes_abs_pos_embedding", offsetof(struct vf_ltx_arch, keyframes_embedding), false},
		{"connector_apply_gated_attention", offsetof(struct vf_ltx_arch, conn_gated), false},
		{"connector_ff_bias", offsetof(struct vf_ltx_arch, conn_ff_bias), false},
	};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		if (strcmp(v->string, f[i].key) != 0)
			continue;
		*res = cJSON_IsBool(v) ? 1 : -1;
		if (*res > 0)
			*(bool *)(void *)((char *)a + f[i].off) = cJSON_IsTrue(v) != f[i].invert;
		return true;
	}
	return false;
}

/* A key the code checks for one value: true when v is that key; *ok
 * whether it has the value counted here. */
static bool ltx_fixed_key(const cJSON *v, bool *ok)
{
	for (size_t i = 0; i < sizeof ltx_fixed / sizeof ltx_fixed[0]; i++) {
		if (strcmp(v->string, ltx_fixed[i].key) != 0)
			continue;
		if (ltx_fixed[i].str)
			*ok = cJSON_IsString(v) && strcmp(v->valuestring, ltx_fixed[i].str) == 0;
		else
			*ok = cJSON_IsBool(v) && (cJSON_IsTrue(v) != 0) == ltx_fixed[i].b;
		return true;
	}
	if (strcmp(v->string, "num_vector_embeds") == 0) {
		*ok = cJSON_IsNull(v);
		return true;
	}
	return false;
}

bool vf_ltx_config_is(const cJSON *t)
{
	if (!cJSON_IsObject(t))
		return false;
	const char *cls = vf_json_get_str(t, "_class_name");
	if (cls && (strcmp(cls, "AVTransformer3DModel") == 0 || strcmp(cls, "LTXModel") == 0))
		return true;
	return cJSON_GetObjectItemCaseSensitive(t, "audio_cross_attention_dim") ||
	       cJSON_GetObjectItemCaseSensitive(t, "av_ca_timestep_scale_multiplier") ||
	       cJSON_GetObjectItemCaseSensitive(t, "caption_proj_before_connector");
}

vf_status vf_ltx_from_config(const cJSON *t, const char *what, struct vf_ltx_arch *a,
			     struct vf_error *err)
{
	ltx_defaults(a);
	snprintf(a->source, sizeof a->source, "metadata");
	if (!cJSON_IsObject(t))
		return vf_error_set(err, VF_ERR, "%s: transformer config: expected an object", what);
	if (!cJSON_GetObjectItemCaseSensitive(t, "caption_channels"))
		add_name(a->assumed, sizeof a->assumed, "caption_channels 3840");
	const cJSON *v;
	cJSON_ArrayForEach(v, t)
	{
		int res = 0;
		bool ok = true;
		if (ltx_int_key(v, a, &res) || ltx_bool_key(v, a, &res)) {
			if (res < 0)
				return vf_error_set(err, VF_ERR, "%s: transformer config: field %s: bad value",
						    what, v->string);
			continue;
		}
		if (ltx_fixed_key(v, &ok)) {
			if (!ok)
				add_name(a->unknown, sizeof a->unknown, v->string);
			continue;
		}
		bool known = false;
		for (size_t i = 0; i < sizeof ltx_no_size / sizeof ltx_no_size[0] && !known; i++)
			known = strcmp(v->string, ltx_no_size[i]) == 0;
		if (!known)
			add_name(a->unknown, sizeof a->unknown, v->string);
	}
	conn_fallback(a);
	if (!ltx_sane(a))
		return vf_error_set(err, VF_ERR, "%s: transformer config: widths above 262144 or more than "
				    "16384 layers", what);
	return VF_OK;
}

bool vf_ltx_from_metadata(const cJSON *meta, struct vf_ltx_arch *a)
{
	const cJSON *v;
	cJSON_ArrayForEach(v, meta)
	{
		if (!cJSON_IsString(v) || v->valuestring[0] != '{')
			continue;
		cJSON *j = cJSON_Parse(v->valuestring);
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "transformer");
		bool ok = vf_ltx_config_is(t) && vf_ltx_from_config(t, "metadata", a, NULL) == VF_OK;
		cJSON_Delete(j);
		if (ok)
			return true;
	}
	return false;
}

/* ---- from tensor names --------------------------------------------------- */

/* The tensor whose name is `key` or ends with "." key, or NULL. */
static const struct vf_tensor *ltx_find(const struct vf_safetensors *const *files, size_t n,
					const char *key)
{
	size_t kl = strlen(key);
	for (size_t f = 0; f < n; f++)
		for (size_t i = 0; i < files[f]->ntensors; i++) {
			const char *nm = files[f]->tensors[i].name;
			size_t nl = strlen(nm);
			if (nl == kl ? strcmp(nm, key) == 0
				     : nl > kl && nm[nl - kl - 1] == '.' && strcmp(nm + nl - kl, key) == 0)
				return &files[f]->tensors[i];
		}
	return NULL;
}

static int64_t dim_of(const struct vf_tensor *t, int i)
{
	return t && t->ndim > i ? t->shape[i] : 0;
}

bool vf_ltx_tensors_are(const struct vf_safetensors *const *files, size_t n)
{
	return ltx_find(files, n, "patchify_proj.weight") &&
	       ltx_find(files, n, "transformer_blocks.0.attn1.to_q.weight") &&
	       ltx_find(files, n, "adaln_single.linear.weight");
}

static int64_t ltx_layers(const struct vf_safetensors *const *files, size_t n)
{
	int64_t most = -1;
	for (size_t f = 0; f < n; f++)
		for (size_t i = 0; i < files[f]->ntensors; i++) {
			const char *p = strstr(files[f]->tensors[i].name, "transformer_blocks.");
			if (!p)
				continue;
			char *end;
			long k = strtol(p + 19, &end, 10);
			if (end != p + 19 && *end == '.' && k > most && k < (1 << 20))
				most = k;
		}
	return most + 1;
}

/* Blocks of a connector: the highest N of "<conn>.transformer_1d_blocks.N." + 1. */
static int64_t conn_layers(const struct vf_safetensors *const *files, size_t n, const char *conn)
{
	int64_t most = -1;
	char key[96];
	snprintf(key, sizeof key, "%s.transformer_1d_blocks.", conn);
	size_t kl = strlen(key);
	for (size_t f = 0; f < n; f++)
		for (size_t i = 0; i < files[f]->ntensors; i++) {
			const char *p = strstr(files[f]->tensors[i].name, key);
			if (!p)
				continue;
			char *end;
			long k = strtol(p + kl, &end, 10);
			if (end != p + kl && *end == '.' && k > most && k < (1 << 20))
				most = k;
		}
	return most + 1;
}

/* One connector's shape from its tensors: width from the registers (or
 * to_q), heads from the gate when gated, else the default head dim 128. */
static void conn_from_tensors(const struct vf_safetensors *const *files, size_t n, const char *conn,
			      int64_t *layers, int64_t *heads, int64_t *head_dim, bool *gated, bool *ff_bias)
{
	char key[128];
	*layers = conn_layers(files, n, conn);
	if (*layers <= 0)
		return;
	snprintf(key, sizeof key, "%s.transformer_1d_blocks.0.attn1.to_q.weight", conn);
	int64_t dim = dim_of(ltx_find(files, n, key), 0);
	snprintf(key, sizeof key, "%s.transformer_1d_blocks.0.attn1.to_gate_logits.weight", conn);
	const struct vf_tensor *g = ltx_find(files, n, key);
	*gated = g != NULL;
	*heads = g ? dim_of(g, 0) : (dim >= 128 ? dim / 128 : 1);
	*head_dim = *heads > 0 ? dim / *heads : 0;
	snprintf(key, sizeof key, "%s.transformer_1d_blocks.0.ff.net.0.proj.bias", conn);
	*ff_bias = ltx_find(files, n, key) != NULL;
}

static void ltx_connectors_from_tensors(const struct vf_safetensors *const *files, size_t n,
					struct vf_ltx_arch *a)
{
	int64_t l = 0, h = 0, d = 0;
	bool g = false, b = true;
	conn_from_tensors(files, n, "video_embeddings_connector", &l, &h, &d, &g, &b);
	if (l <= 0)
		conn_from_tensors(files, n, "embeddings_connector", &l, &h, &d, &g, &b);
	if (l > 0) {
		a->conn_layers = l;
		a->conn_heads = h;
		a->conn_head_dim = d;
		a->conn_gated = g;
		a->conn_ff_bias = b;
	}
	l = 0;
	conn_from_tensors(files, n, "audio_embeddings_connector", &l, &h, &d, &g, &b);
	if (l > 0) {
		a->audio_conn_layers = l;
		a->audio_conn_heads = h;
		a->audio_conn_head_dim = d;
	}
	conn_fallback(a);
}

void vf_ltx_from_tensors(const struct vf_safetensors *const *files, size_t n,
			 struct vf_ltx_arch *a)
{
	ltx_defaults(a);
	snprintf(a->source, sizeof a->source, "tensors");
	const struct vf_tensor *t;
	a->layers = ltx_layers(files, n);
	int64_t dv = dim_of(ltx_find(files, n, "patchify_proj.weight"), 0);
	a->in_channels = dim_of(ltx_find(files, n, "patchify_proj.weight"), 1);
	a->out_channels = dim_of(ltx_find(files, n, "proj_out.weight"), 0);
	a->cross_dim = dim_of(ltx_find(files, n, "transformer_blocks.0.attn2.to_k.weight"), 1);
	t = ltx_find(files, n, "caption_projection.linear_1.weight");
	a->caption_projection = t != NULL;
	if (t)
		a->caption_channels = dim_of(t, 1);
	t = ltx_find(files, n, "transformer_blocks.0.attn1.to_gate_logits.weight");
	a->gated_attention = t != NULL;
	a->heads = t ? dim_of(t, 0) : (dv >= 128 ? dv / 128 : 1);
	a->head_dim = a->heads > 0 ? dv / a->heads : 0;
	a->cross_attention_adaln = ltx_find(files, n, "transformer_blocks.0.prompt_scale_shift_table") ||
				   ltx_find(files, n, "transformer_blocks.0.audio_prompt_scale_shift_table");
	a->prompt_adaln = ltx_find(files, n, "prompt_adaln_single.linear.weight") ||
			  ltx_find(files, n, "audio_prompt_adaln_single.linear.weight");
	a->ff_bias = ltx_find(files, n, "transformer_blocks.0.ff.net.0.proj.bias") != NULL;
	a->keyframes_embedding = ltx_find(files, n, "keyframes_abs_pos_embedding") != NULL;
	t = ltx_find(files, n, "audio_patchify_proj.weight");
	a->audio = t != NULL;
	if (a->audio) {
		int64_t da = dim_of(t, 0);
		a->audio_in_channels = dim_of(t, 1);
		a->audio_out_channels = dim_of(ltx_find(files, n, "audio_proj_out.weight"), 0);
		a->audio_cross_dim =
			dim_of(ltx_find(files, n, "transformer_blocks.0.audio_attn2.to_k.weight"), 1);
		a->audio_ff_bias = ltx_find(files, n, "transformer_blocks.0.audio_ff.net.0.proj.bias") != NULL;
		t = ltx_find(files, n, "transformer_blocks.0.audio_attn1.to_gate_logits.weight");
		a->audio_heads = t ? dim_of(t, 0) : (da >= 64 ? da / 64 : 1);
		a->audio_head_dim = a->audio_heads > 0 ? da / a->audio_heads : 0;
		if (!t)
			add_name(a->assumed, sizeof a->assumed, "audio head dim 64");
	}
	if (!a->gated_attention)
		add_name(a->assumed, sizeof a->assumed, "video head dim 128");
	ltx_connectors_from_tensors(files, n, a);
}

/* ---- the count ----------------------------------------------------------- */

/* One attention: query width q, context width c, h heads of d. */
static int64_t attn_params(int64_t q, int64_t c, int64_t h, int64_t d, bool gated)
{
	int64_t i = h * d;
	return 2 * i                          /* q_norm, k_norm (RMSNorm over h x d) */
	       + q * i + i                    /* to_q */
	       + 2 * (c * i + i)              /* to_k, to_v */
	       + i * q + q                    /* to_out.0 */
	       + (gated ? q * h + h : 0);     /* to_gate_logits */
}

/* GELU-tanh feed-forward, 4x wide. */
static int64_t ff_params(int64_t d, bool bias)
{
	return d * 4 * d + (bias ? 4 * d : 0) + 4 * d * d + (bias ? d : 0);
}

/* AdaLN-single: timestep embedder (256 -> D -> D), then D -> k x D. */
static int64_t adaln_params(int64_t d, int64_t k)
{
	return 256 * d + d + d * d + d + d * k * d + k * d;
}

/* Caption projection: caption_channels -> D -> D, with biases. */
static int64_t caption_params(int64_t c, int64_t d)
{
	return c * d + d + d * d + d;
}

/* One stream outside the blocks: patchify, caption projection, AdaLN,
 * prompt AdaLN, output table, proj_out. */
static int64_t stream_params(const struct vf_ltx_arch *a, int64_t d, int64_t in, int64_t out)
{
	int64_t k = a->cross_attention_adaln ? 9 : 6;
	return in * d + d + (a->caption_projection ? caption_params(a->caption_channels, d) : 0) +
	       adaln_params(d, k) + (a->cross_attention_adaln && a->prompt_adaln ? adaln_params(d, 2) : 0) +
	       2 * d + d * out + out;
}

/* Whether every product below stays far inside int64: widths <= 2^18,
 * layers <= 2^14. */
static bool ltx_sane(const struct vf_ltx_arch *a)
{
	const int64_t W = 1 << 18;
	int64_t dv = a->heads * a->head_dim, da = a->audio_heads * a->audio_head_dim;
	return a->layers >= 0 && a->layers <= (1 << 14) && a->heads > 0 && a->heads <= W &&
	       a->head_dim > 0 && a->head_dim <= W && dv <= W && a->audio_heads >= 0 &&
	       a->audio_heads <= W && a->audio_head_dim >= 0 && a->audio_head_dim <= W && da <= W &&
	       a->in_channels >= 0 && a->in_channels <= W && a->out_channels >= 0 && a->out_channels <= W &&
	       a->audio_in_channels >= 0 && a->audio_in_channels <= W && a->audio_out_channels >= 0 &&
	       a->audio_out_channels <= W && a->cross_dim >= 0 && a->cross_dim <= W &&
	       a->audio_cross_dim >= 0 && a->audio_cross_dim <= W && a->caption_channels >= 0 &&
	       a->caption_channels <= W && a->conn_layers >= 0 && a->conn_layers <= (1 << 14) &&
	       a->conn_heads >= 0 && a->conn_heads <= W && a->conn_head_dim >= 0 && a->conn_head_dim <= W &&
	       a->conn_heads * a->conn_head_dim <= W && a->audio_conn_layers >= 0 &&
	       a->audio_conn_layers <= (1 << 14) && a->audio_conn_heads >= 0 && a->audio_conn_heads <= W &&
	       a->audio_conn_head_dim >= 0 && a->audio_conn_head_dim <= W &&
	       a->audio_conn_heads * a->audio_conn_head_dim <= W && a->conn_registers >= 0 &&
	       a->conn_registers <= W;
}

/* One embedding connector: blocks of self-attention and FFN 4x over
 * heads x head dim, and the learnable registers. */
static int64_t connector_params(int64_t layers, int64_t heads, int64_t head_dim, bool gated, bool ff_bias,
				int64_t registers)
{
	int64_t d = heads * head_dim;
	if (layers <= 0 || d <= 0)
		return 0;
	return layers * (attn_params(d, d, heads, head_dim, gated) + ff_params(d, ff_bias)) + registers * d;
}

int64_t vf_ltx_connector_params(const struct vf_ltx_arch *a)
{
	if (!ltx_sane(a))
		return -1;
	int64_t v = connector_params(a->conn_layers, a->conn_heads, a->conn_head_dim, a->conn_gated,
				     a->conn_ff_bias, a->conn_registers);
	if (a->audio)
		v += connector_params(a->audio_conn_layers, a->audio_conn_heads, a->audio_conn_head_dim,
				      a->conn_gated, a->conn_ff_bias, a->conn_registers);
	return v;
}

int64_t vf_ltx_text_projection_params(const struct vf_ltx_arch *a, int64_t hidden, int64_t layers)
{
	if (!ltx_sane(a) || hidden <= 0 || layers <= 0 || hidden > (1 << 18) || layers > (1 << 12))
		return -1;
	int64_t flat = hidden * (layers + 1);
	if (a->caption_projection) /* V1: the projection to caption channels, no bias */
		return flat * hidden;
	int64_t dv = a->heads * a->head_dim, da = a->audio ? a->audio_heads * a->audio_head_dim : 0;
	return flat * dv + dv + (da ? flat * da + da : 0); /* V2: one per stream, with bias */
}

int64_t vf_ltx_params(const struct vf_ltx_arch *a)
{
	if (!ltx_sane(a))
		return -1;
	int64_t dv = a->heads * a->head_dim, da = a->audio ? a->audio_heads * a->audio_head_dim : 0;
	int64_t k = a->cross_attention_adaln ? 9 : 6;
	bool g = a->gated_attention;
	int64_t block = attn_params(dv, dv, a->heads, a->head_dim, g) +
			attn_params(dv, a->cross_dim, a->heads, a->head_dim, g) + ff_params(dv, a->ff_bias) +
			k * dv + (a->cross_attention_adaln ? 2 * dv : 0);
	int64_t top = stream_params(a, dv, a->in_channels, a->out_channels) +
		      (a->keyframes_embedding ? dv : 0);
	if (a->audio) {
		int64_t ah = a->audio_heads, ad = a->audio_head_dim;
		block += attn_params(da, da, ah, ad, g) + attn_params(da, a->audio_cross_dim, ah, ad, g) +
			 ff_params(da, a->audio_ff_bias) + k * da + (a->cross_attention_adaln ? 2 * da : 0);
		block += attn_params(dv, da, ah, ad, g)  /* audio_to_video_attn */
			 + attn_params(da, dv, ah, ad, g) /* video_to_audio_attn */
			 + 5 * dv + 5 * da;               /* a2v/v2a AdaLN tables */
		top += stream_params(a, da, a->audio_in_channels, a->audio_out_channels);
		top += adaln_params(dv, 4) + adaln_params(da, 4) + adaln_params(dv, 1) + adaln_params(da, 1);
	}
	return a->layers * block + top;
}

/* ---- the parts of a checkpoint ---------------------------------------- */

static bool starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static int64_t *part_of(const char *name, struct vf_ltx_parts *p)
{
	static const char dm[] = "model.diffusion_model.";
	if (starts(name, "text_embedding_projection."))
		return &p->text_projection;
	if (starts(name, "vae.encoder."))
		return &p->vae_encoder;
	if (starts(name, "vae."))
		return &p->vae_decoder; /* decoder and the per-channel statistics it uses */
	if (starts(name, "audio_vae."))
		return &p->audio_vae;
	if (starts(name, "vocoder."))
		return &p->vocoder;
	const char *rest = starts(name, dm) ? name + sizeof dm - 1 : name;
	if (starts(rest, "video_embeddings_connector.") || starts(rest, "embeddings_connector."))
		return &p->video_connector;
	if (starts(rest, "audio_embeddings_connector."))
		return &p->audio_connector;
	if (rest != name)
		return &p->transformer;
	/* no prefix: a transformer written bare (a split pack's file) */
	static const char *const bare[] = {"transformer_blocks.", "patchify_proj.", "audio_patchify_proj.",
					   "adaln_single.", "audio_adaln_single.", "prompt_adaln_single.",
					   "audio_prompt_adaln_single.", "caption_projection.",
					   "audio_caption_projection.", "proj_out.", "audio_proj_out.",
					   "scale_shift_table", "audio_scale_shift_table", "av_ca_",
					   "keyframes_abs_pos_embedding"};
	for (size_t i = 0; i < sizeof bare / sizeof bare[0]; i++)
		if (starts(name, bare[i]))
			return &p->transformer;
	return &p->other;
}

void vf_ltx_parts_from_tensors(const struct vf_safetensors *const *files, size_t n, struct vf_ltx_parts *parts)
{
	memset(parts, 0, sizeof *parts);
	for (size_t f = 0; f < n; f++)
		for (size_t i = 0; i < files[f]->ntensors; i++)
			*part_of(files[f]->tensors[i].name, parts) += files[f]->tensors[i].numel;
}

cJSON *vf_ltx_parts_to_json(const struct vf_ltx_parts *p)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	const struct {
		const char *k;
		int64_t v;
	} f[] = {{"transformer", p->transformer},         {"video_connector", p->video_connector},
		 {"audio_connector", p->audio_connector}, {"text_projection", p->text_projection},
		 {"vae_decoder", p->vae_decoder},         {"vae_encoder", p->vae_encoder},
		 {"audio_vae", p->audio_vae},             {"vocoder", p->vocoder},
		 {"other", p->other}};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		cJSON_AddNumberToObject(o, f[i].k, (double)f[i].v);
	return o;
}

cJSON *vf_ltx_to_json(const struct vf_ltx_arch *a)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "family", a->audio ? "ltx-av-dit" : "ltx-video-dit");
	cJSON_AddStringToObject(o, "source", a->source);
	cJSON_AddNumberToObject(o, "layers", (double)a->layers);
	cJSON_AddNumberToObject(o, "video_hidden", (double)(a->heads * a->head_dim));
	cJSON_AddNumberToObject(o, "video_heads", (double)a->heads);
	cJSON_AddNumberToObject(o, "video_ffn", (double)(4 * a->heads * a->head_dim));
	cJSON_AddNumberToObject(o, "cross_attention_dim", (double)a->cross_dim);
	if (a->audio) {
		cJSON_AddNumberToObject(o, "audio_hidden", (double)(a->audio_heads * a->audio_head_dim));
		cJSON_AddNumberToObject(o, "audio_heads", (double)a->audio_heads);
		cJSON_AddNumberToObject(o, "audio_ffn", (double)(4 * a->audio_heads * a->audio_head_dim));
		cJSON_AddNumberToObject(o, "audio_cross_attention_dim", (double)a->audio_cross_dim);
	}
	cJSON_AddNumberToObject(o, "latent_channels", (double)a->in_channels);
	cJSON_AddBoolToObject(o, "gated_attention", a->gated_attention);
	cJSON_AddBoolToObject(o, "cross_attention_adaln", a->cross_attention_adaln);
	cJSON_AddBoolToObject(o, "caption_projection", a->caption_projection);
	cJSON_AddBoolToObject(o, "ff_bias", a->ff_bias);
	cJSON_AddNumberToObject(o, "params_from_layout", (double)vf_ltx_params(a));
	cJSON *c = cJSON_AddObjectToObject(o, "connectors");
	if (c) {
		cJSON_AddNumberToObject(c, "layers", (double)a->conn_layers);
		cJSON_AddNumberToObject(c, "heads", (double)a->conn_heads);
		cJSON_AddNumberToObject(c, "head_dim", (double)a->conn_head_dim);
		if (a->audio) {
			cJSON_AddNumberToObject(c, "audio_layers", (double)a->audio_conn_layers);
			cJSON_AddNumberToObject(c, "audio_heads", (double)a->audio_conn_heads);
			cJSON_AddNumberToObject(c, "audio_head_dim", (double)a->audio_conn_head_dim);
		}
		cJSON_AddBoolToObject(c, "gated_attention", a->conn_gated);
		cJSON_AddNumberToObject(c, "params_from_layout", (double)vf_ltx_connector_params(a));
	}
	vf_json_add_list(o, "not_understood", a->unknown);
	cJSON_AddStringToObject(o, "assumed", a->assumed);
	return o;
}
