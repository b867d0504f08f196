/* ssm.c - families the common decoder formula does not describe, read
 * from their config.json and counted from their own layout: the
 * state-space models Mamba and Mamba-2; the hybrids Jamba (Mamba and
 * attention layers, dense and MoE feed-forwards), Granite-4
 * (granitemoehybrid: Mamba-2 and attention layers, routed experts and a
 * shared MLP) and Bamba, Falcon-H1, RecurrentGemma and Zamba2; ChatGLM
 * (the remote-code GLM-2/3/4 configs: fused query_key_value) and
 * InternLM2. Also the MoE active-parameter count and the key table of
 * these families and of the towers (speech.c, vlm.c). *
 * Layouts counted (facts read from the public transformers modelling code
 * and configuration classes; no code copied):
 *  - Mamba-1 block: RMSNorm h; in_proj h -> 2i (bias: use_bias); depthwise
 *    conv1d of i channels, kernel k (bias: use_conv_bias); x_proj
 *    i -> r + 2n without bias; dt_proj r -> i with bias; A_log i x n; D i;
 *    out_proj i -> h (bias: use_bias). i = expand x h, r = time_step_rank
 *    ("auto": ceil(h / 16)). Model: embedding v h, final RMSNorm h, lm_head
 *    tied unless tie_word_embeddings is false (MambaConfig: tied).
 *  - Mamba-2 block: RMSNorm h; in_proj h -> 2i + 2 g n + heads (bias:
 *    use_bias); conv1d over i + 2 g n channels, kernel k (bias:
 *    use_conv_bias); dt_bias, A_log, D: one per head; gated RMSNorm i;
 *    out_proj i -> h (bias: use_bias). Mamba2Config: untied.
 *  - Jamba layer: RMSNorm h before the mixer and before the feed-forward;
 *    the mixer attention (q, k, v, o without bias, grouped k/v) on layers
 *    with (l % attn_layer_period) == attn_layer_offset, else a Mamba-1
 *    block whose dt, B and C carry RMSNorms (r, n, n) and whose in/out
 *    projections have mamba_proj_bias, conv mamba_conv_bias; the
 *    feed-forward a router h x experts (no bias) and `experts` gated MLPs
 *    on layers with (l % expert_layer_period) == expert_layer_offset, else
 *    one gated MLP. Model: embedding, final RMSNorm, untied lm_head.
 *  - Granite-4 hybrid layer: RMSNorm h, a Mamba-2 block (in/out
 *    projections with mamba_proj_bias; mamba_n_heads heads,
 *    mamba_n_groups groups) or, where layer_types says "attention",
 *    q, k, v, o (bias: attention_bias); RMSNorm h; routed experts
 *    (router h x experts without bias, each expert input h -> 2 f and
 *    output f -> h) when num_local_experts > 0, and always the shared MLP
 *    h -> 2 s, s -> h. GraniteMoeHybridConfig: untied unless
 *    tie_word_embeddings. Bamba: the same layer with one gated MLP of
 *    intermediate_size, attention on attn_layer_indices.
 *  - Falcon-H1 layer: RMSNorm h; attention (q, k, v, o with
 *    attention_bias; head_dim) and a Mamba-2 mixer side by side (in_proj
 *    with mamba_proj_bias, out_proj with projectors_bias, inner width
 *    mamba_d_ssm or mamba_expand x h, the gated RMSNorm only with
 *    mamba_rms_norm); RMSNorm h; gated MLP (bias: mlp_bias). Untied.
 *  - RecurrentGemma layer (block_types cycled over the layers): RMSNorm
 *    h; a local attention block (q, k, v without bias, o with bias) or a
 *    recurrent block (linear_y and linear_x h -> lru with bias, a
 *    depthwise conv1d over lru with bias, the RG-LRU: recurrent_param lru,
 *    input and recurrent gates heads x bw x bw + heads x bw each with
 *    bw = lru / heads, linear_out lru -> h with bias); RMSNorm h; a gated
 *    MLP of intermediate_size / 2 with biases. Embedding tied.
 *  - Zamba2: every layer an RMSNorm and a Mamba-2 block (conv bias
 *    always, in/out biases add_bias_linear, gated norm); on "hybrid"
 *    layers (layers_block_type) one of num_mem_blocks shared attention
 *    blocks (RMSNorm over attention_hidden_size = 2h, q/k/v from it, o to
 *    h, RMSNorm h, gate_up h -> 2 ffn, down) then a linear h x h; one
 *    adapter per hybrid layer on gate_up (h -> rank -> 2 ffn) and, with
 *    use_shared_attention_adapter, on q, k, v (2h -> rank -> 2h). Tied.
 *  - ChatGLM layer: RMSNorm (LayerNorm when rmsnorm is false) h;
 *    query_key_value h -> (heads + 2 groups) kv_channels (bias:
 *    add_qkv_bias or add_bias_linear); dense heads kv_channels -> h (bias:
 *    add_bias_linear); RMSNorm h; dense_h_to_4h h -> 2 ffn and
 *    dense_4h_to_h ffn -> h (bias: add_bias_linear). Model: embedding
 *    padded_vocab_size x h, a final norm when post_layer_norm, output_layer
 *    untied. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "vramfit/base/json.h"
#include "arch-internal.h"

#define TRY VF_TRY
#define KEYS VF_KEYS
#define READ VF_READ

/* Checked sums of products: any overflow leaves ok false. */
struct acc {
	int64_t v;
	bool ok;
};

static void acc_add(struct acc *s, int64_t x)
{
	if (s->ok && __builtin_add_overflow(s->v, x, &s->v))
		s->ok = false;
}

/* s += a * b * c */
static void acc_mul(struct acc *s, int64_t a, int64_t b, int64_t c)
{
	int64_t p;
	if (!s->ok || __builtin_mul_overflow(a, b, &p) || __builtin_mul_overflow(p, c, &p)) {
		s->ok = false;
		return;
	}
	acc_add(s, p);
}

enum { G_EMB, G_ATTN, G_MLP, G_NORM, G_EXPERTS, G_OTHER, G_N };

/* The group sums of one layout under construction. */
struct layout {
	struct acc g[G_N];
};

static void layout_init(struct layout *l)
{
	for (int i = 0; i < G_N; i++)
		l->g[i] = (struct acc){0, true};
}

/* Store the groups in a; false on overflow. */
static bool layout_store(const struct layout *l, struct vf_arch *a)
{
	for (int i = 0; i < G_N; i++)
		if (!l->g[i].ok)
			return false;
	for (int i = 0; i < G_N; i++)
		a->layout[i] = l->g[i].v;
	a->layout_counted = true;
	return true;
}

static vf_status overflow(const char *what, struct vf_error *err)
{
	return vf_error_set(err, VF_ERR, "%s: sizes overflow a parameter count", what);
}

/* A number field read as a real (expand: 2 or 1.5). */
static vf_status get_real(const cJSON *cfg, const char *key, double min, double max, double *out,
			  const char *what, struct vf_error *err)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(cfg, key);
	if (!n || cJSON_IsNull(n))
		return VF_OK;
	if (!cJSON_IsNumber(n) || !(n->valuedouble >= min && n->valuedouble <= max))
		return vf_error_set(err, VF_ERR, "%s: field %s: expected a number from %g to %g", what,
				    key, min, max);
	*out = n->valuedouble;
	return VF_OK;
}

/* time_step_rank / mamba_dt_rank: an integer or "auto" (ceil(h / 16)). */
static vf_status get_dt_rank(const cJSON *cfg, const char *key, int64_t h, int64_t *out,
			     const char *what, struct vf_error *err)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(cfg, key);
	*out = (h + 15) / 16;
	if (!n || cJSON_IsNull(n) || (cJSON_IsString(n) && strcmp(n->valuestring, "auto") == 0))
		return VF_OK;
	bool f;
	return vf__arch_get_int(cfg, key, 1, out, &f, what, err);
}

/* ---- Mamba-1 and Mamba-2 ------------------------------------------------- */

/* One Mamba-1 mixer: projections into ATTN, conv, A_log and D into OTHER,
 * dt/B/C norms (Jamba) into NORM; times `count` layers. */
static void mamba1_mixer(struct layout *l, const struct vf_arch *a, bool proj_bias,
			 bool conv_bias, bool dtbc_norms, int64_t count)
{
	int64_t h = a->hidden, i = a->ssm_inner, n = a->ssm_state, r = a->ssm_dt_rank;
	acc_mul(&l->g[G_ATTN], count, h, 2 * i);     /* in_proj */
	acc_mul(&l->g[G_ATTN], count, i, r + 2 * n); /* x_proj */
	acc_mul(&l->g[G_ATTN], count, r + 1, i);     /* dt_proj + bias */
	acc_mul(&l->g[G_ATTN], count, i, h);         /* out_proj */
	if (proj_bias) {
		acc_mul(&l->g[G_ATTN], count, 2 * i, 1);
		acc_mul(&l->g[G_ATTN], count, h, 1);
	}
	acc_mul(&l->g[G_OTHER], count, i, a->ssm_conv + (conv_bias ? 1 : 0)); /* conv1d */
	acc_mul(&l->g[G_OTHER], count, i, n + 1);                            /* A_log, D */
	if (dtbc_norms)
		acc_mul(&l->g[G_NORM], count, r + 2 * n, 1);
}

/* One Mamba-2 mixer, times `count`. */
static void mamba2_mixer_full(struct layout *l, const struct vf_arch *a, bool in_bias,
			      bool out_bias, bool conv_bias, bool gated_norm, int64_t count)
{
	int64_t h = a->hidden, i = a->ssm_inner, cd = a->ssm_conv_dim, nh = a->ssm_heads;
	int64_t proj = i + cd + nh;
	acc_mul(&l->g[G_ATTN], count, h, proj); /* in_proj */
	acc_mul(&l->g[G_ATTN], count, i, h);    /* out_proj */
	if (in_bias)
		acc_mul(&l->g[G_ATTN], count, proj, 1);
	if (out_bias)
		acc_mul(&l->g[G_ATTN], count, h, 1);
	acc_mul(&l->g[G_OTHER], count, cd, a->ssm_conv + (conv_bias ? 1 : 0)); /* conv1d */
	acc_mul(&l->g[G_OTHER], count, 3, nh);                                /* dt_bias, A_log, D */
	if (gated_norm)
		acc_mul(&l->g[G_NORM], count, i, 1); /* gated RMSNorm */
}

static void mamba2_mixer(struct layout *l, const struct vf_arch *a, bool proj_bias,
			 bool conv_bias, int64_t count)
{
	mamba2_mixer_full(l, a, proj_bias, proj_bias, conv_bias, true, count);
}

/* Token table, final norm (weights per element `aff`), untied head. */
static void embed_head(struct layout *l, const struct vf_arch *a, int64_t aff)
{
	acc_mul(&l->g[G_EMB], a->vocab, a->hidden, a->tied_embeddings ? 1 : 2);
	acc_mul(&l->g[G_NORM], aff, a->hidden, 1);
}

/* Attention projections of `count` layers: q and o (heads x head_dim),
 * k and v (kv_heads x head_dim), their biases as given. */
static void attn_proj(struct layout *l, const struct vf_arch *a, int64_t count, bool qkv_bias,
		      bool o_bias)
{
	int64_t q = a->heads * a->head_dim, kv = a->kv_heads * a->head_dim;
	acc_mul(&l->g[G_ATTN], count, a->hidden, 2 * q + 2 * kv);
	if (qkv_bias)
		acc_mul(&l->g[G_ATTN], count, q + 2 * kv, 1);
	if (o_bias)
		acc_mul(&l->g[G_ATTN], count, a->hidden, 1);
}

vf_status vf__arch_read_mamba(const cJSON *cfg, const char *family, const char *what,
			      struct vf_arch *a, struct vf_error *err)
{
	bool v2 = strcmp(family, "mamba2") == 0, f;
	READ(KEYS("hidden_size", "d_model"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("num_hidden_layers", "n_layer"), 0, layers, VF_ARCH_F_LAYERS);
	READ(KEYS("vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	/* MambaConfig / Mamba2Config defaults */
	VF_DEFAULT(hidden, VF_ARCH_F_HIDDEN, v2 ? 4096 : 768);
	VF_DEFAULT(layers, VF_ARCH_F_LAYERS, v2 ? 64 : 32);
	VF_DEFAULT(vocab, VF_ARCH_F_VOCAB, v2 ? 32768 : 50280);
	a->tied_embeddings = !v2;
	TRY(vf__arch_get_bool(cfg, "tie_word_embeddings", &a->tied_embeddings, what, err));
	a->known |= VF_ARCH_F_TIED;
	double expand = 2;
	TRY(get_real(cfg, "expand", 0.01, 64, &expand, what, err));
	a->ssm_inner = (int64_t)(expand * (double)a->hidden);
	TRY(vf__arch_get_int(cfg, "intermediate_size", 1, &a->ssm_inner, &f, what, err));
	a->ssm_state = v2 ? 128 : 16;
	TRY(vf__arch_get_int_any(cfg, KEYS("state_size", "d_state"), 1, &a->ssm_state, &f, what,
				 err));
	a->ssm_conv = 4;
	TRY(vf__arch_get_int_any(cfg, KEYS("conv_kernel", "d_conv"), 1, &a->ssm_conv, &f, what,
				 err));
	bool bias = false, conv_bias = true;
	TRY(vf__arch_get_bool(cfg, "use_bias", &bias, what, err));
	TRY(vf__arch_get_bool(cfg, "use_conv_bias", &conv_bias, what, err));
	if (a->ssm_inner < 1 || a->ssm_inner > VF_ARCH_MAX_DIM)
		return vf_error_set(err, VF_ERR, "%s: field expand: %g x hidden_size is no width", what,
				    expand);
	a->ssm_layers = a->layers;
	a->attn_layers = 0;
	a->gated_mlp = false;
	a->ffn = 0;
	a->known |= VF_ARCH_F_FFN;
	struct layout l;
	layout_init(&l);
	if (v2) {
		int64_t groups = 8, heads = 128, hd = 64;
		TRY(vf__arch_get_int(cfg, "n_groups", 1, &groups, &f, what, err));
		TRY(vf__arch_get_int(cfg, "num_heads", 1, &heads, &f, what, err));
		TRY(vf__arch_get_int(cfg, "head_dim", 1, &hd, &f, what, err));
		a->ssm_chunk = 256;
		TRY(vf__arch_get_int(cfg, "chunk_size", 1, &a->ssm_chunk, &f, what, err));
		if (heads * hd != a->ssm_inner)
			vf_arch_not_understood(a, "num_heads x head_dim != expand x hidden_size");
		a->ssm_heads = heads;
		a->ssm_conv_dim = a->ssm_inner + 2 * groups * a->ssm_state;
		mamba2_mixer(&l, a, bias, conv_bias, a->layers);
	} else {
		TRY(get_dt_rank(cfg, "time_step_rank", a->hidden, &a->ssm_dt_rank, what, err));
		a->ssm_conv_dim = a->ssm_inner;
		mamba1_mixer(&l, a, bias, conv_bias, false, a->layers);
	}
	acc_mul(&l.g[G_NORM], a->layers, a->hidden, 1); /* the block norms */
	embed_head(&l, a, 1);
	/* attention-free: heads stand for the scan's channels in what reads them */
	a->heads = a->kv_heads = 1;
	a->head_dim = a->hidden;
	a->known |= VF_ARCH_F_HEADS | VF_ARCH_F_KV_HEADS | VF_ARCH_F_HEAD_DIM;
	return layout_store(&l, a) ? VF_OK : overflow(what, err);
}

/* ---- Jamba ----------------------------------------------------------------- */

/* Layers l < L with l % period == offset. */
static int64_t every(int64_t L, int64_t period, int64_t offset)
{
	if (period <= 0 || offset >= L)
		return 0;
	return offset < period ? (L - 1 - offset) / period + 1 : 0;
}

vf_status vf__arch_read_jamba(const cJSON *cfg, const char *family, const char *what,
			      struct vf_arch *a, struct vf_error *err)
{
	(void)family;
	bool f;
	READ(KEYS("hidden_size"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("num_hidden_layers"), 0, layers, VF_ARCH_F_LAYERS);
	READ(KEYS("num_attention_heads"), 1, heads, VF_ARCH_F_HEADS);
	READ(KEYS("num_key_value_heads"), 1, kv_heads, VF_ARCH_F_KV_HEADS);
	READ(KEYS("intermediate_size"), 1, ffn, VF_ARCH_F_FFN);
	READ(KEYS("vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	READ(KEYS("num_experts"), 1, experts, VF_ARCH_F_EXPERTS);
	READ(KEYS("num_experts_per_tok"), 1, experts_per_token, VF_ARCH_F_EXPERTS_PER_TOKEN);
	READ(KEYS("max_position_embeddings"), 1, max_positions, VF_ARCH_F_MAX_POSITIONS);
	/* JambaConfig defaults */
	VF_DEFAULT(hidden, VF_ARCH_F_HIDDEN, 4096);
	VF_DEFAULT(layers, VF_ARCH_F_LAYERS, 32);
	VF_DEFAULT(heads, VF_ARCH_F_HEADS, 32);
	VF_DEFAULT(kv_heads, VF_ARCH_F_KV_HEADS, 8);
	VF_DEFAULT(ffn, VF_ARCH_F_FFN, 14336);
	VF_DEFAULT(vocab, VF_ARCH_F_VOCAB, 65536);
	VF_DEFAULT(experts, VF_ARCH_F_EXPERTS, 16);
	VF_DEFAULT(experts_per_token, VF_ARCH_F_EXPERTS_PER_TOKEN, 2);
	a->tied_embeddings = false;
	TRY(vf__arch_get_bool(cfg, "tie_word_embeddings", &a->tied_embeddings, what, err));
	a->known |= VF_ARCH_F_TIED;
	int64_t ap = 8, ao = 4, ep = 2, eo = 1, expand = 2;
	TRY(vf__arch_get_int(cfg, "attn_layer_period", 1, &ap, &f, what, err));
	TRY(vf__arch_get_int(cfg, "attn_layer_offset", 0, &ao, &f, what, err));
	TRY(vf__arch_get_int(cfg, "expert_layer_period", 1, &ep, &f, what, err));
	TRY(vf__arch_get_int(cfg, "expert_layer_offset", 0, &eo, &f, what, err));
	a->ssm_state = 16;
	a->ssm_conv = 4;
	TRY(vf__arch_get_int(cfg, "mamba_d_state", 1, &a->ssm_state, &f, what, err));
	TRY(vf__arch_get_int(cfg, "mamba_d_conv", 1, &a->ssm_conv, &f, what, err));
	TRY(vf__arch_get_int(cfg, "mamba_expand", 1, &expand, &f, what, err));
	TRY(get_dt_rank(cfg, "mamba_dt_rank", a->hidden, &a->ssm_dt_rank, what, err));
	bool conv_bias = true, proj_bias = false;
	TRY(vf__arch_get_bool(cfg, "mamba_conv_bias", &conv_bias, what, err));
	TRY(vf__arch_get_bool(cfg, "mamba_proj_bias", &proj_bias, what, err));
	if (a->heads % a->kv_heads != 0)
		return vf_error_set(err, VF_ERR, "%s: heads not a multiple of key/value heads", what);
	int64_t L = a->layers, H = a->hidden;
	a->head_dim = H / a->heads;
	a->known |= VF_ARCH_F_HEAD_DIM;
	a->ssm_inner = expand * H; /* H <= 2^40, expand checked below */
	if (expand > 64)
		return vf_error_set(err, VF_ERR, "%s: field mamba_expand: above 64", what);
	a->ssm_conv_dim = a->ssm_inner;
	a->attn_layers = every(L, ap, ao);
	a->ssm_layers = L - a->attn_layers;
	/* a layer of one expert is a plain MLP (no router) */
	a->moe_layers = a->experts > 1 ? every(L, ep, eo) : 0;
	if (a->experts <= 1)
		a->experts = 0;
	a->moe_ffn = a->ffn;
	a->gated_mlp = true;
	struct layout l;
	layout_init(&l);
	attn_proj(&l, a, a->attn_layers, false, false);
	mamba1_mixer(&l, a, proj_bias, conv_bias, true, a->ssm_layers);
	acc_mul(&l.g[G_MLP], L - a->moe_layers, 3 * H, a->ffn);
	acc_mul(&l.g[G_EXPERTS], a->moe_layers, a->experts, 3 * H * a->ffn + H); /* experts + router */
	acc_mul(&l.g[G_NORM], L, 2, H);
	embed_head(&l, a, 1);
	return layout_store(&l, a) ? VF_OK : overflow(what, err);
}

/* A per-layer type list (layer_types, layers_block_type, block_types):
 * each entry `a` or `b`; *nb = the layers of type b among L (the list
 * cycled over the layers when `cycle`, else one entry per layer: a
 * list of another length is named). Absent or null: *found false. */
static vf_status layer_kinds(const cJSON *cfg, const char *key, const char *ka, const char *kb,
			     bool cycle, int64_t L, int64_t *nb, bool *found, struct vf_arch *a,
			     const char *what, struct vf_error *err)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(cfg, key);
	*nb = 0;
	*found = lt && !cJSON_IsNull(lt);
	if (!*found)
		return VF_OK;
	int64_t n = cJSON_IsArray(lt) ? cJSON_GetArraySize(lt) : 0;
	if (n < 1)
		return vf_error_set(err, VF_ERR, "%s: field %s: expected a list", what, key);
	for (int64_t l = 0; l < (cycle ? L : n); l++) {
		const cJSON *e = cJSON_GetArrayItem(lt, (int)(l % n));
		if (!cJSON_IsString(e) ||
		    (strcmp(e->valuestring, ka) != 0 && strcmp(e->valuestring, kb) != 0))
			return vf_error_set(err, VF_ERR, "%s: field %s: expected \"%s\" or \"%s\" entries",
					    what, key, ka, kb);
		*nb += strcmp(e->valuestring, kb) == 0;
	}
	if (!cycle && n != L) {
		char note[96];
		snprintf(note, sizeof note, "%s (not one per layer)", key);
		vf_arch_not_understood(a, note);
	}
	if (*nb > L)
		*nb = L;
	return VF_OK;
}

/* Bamba's attn_layer_indices: *n attention layers (each index 0..L-1). */
static vf_status attn_indices(const cJSON *cfg, int64_t L, int64_t *n, const char *what,
			      struct vf_error *err)
{
	const cJSON *ai = cJSON_GetObjectItemCaseSensitive(cfg, "attn_layer_indices"), *e;
	*n = 0;
	if (!ai || cJSON_IsNull(ai))
		return VF_OK;
	if (!cJSON_IsArray(ai))
		return vf_error_set(err, VF_ERR, "%s: field attn_layer_indices: expected a list", what);
	cJSON_ArrayForEach(e, ai)
	{
		int64_t li;
		if (!vf_json_number_is_i64(e, &li) || li < 0 || li >= L)
			return vf_error_set(err, VF_ERR,
					    "%s: field attn_layer_indices: expected layer indices 0-%lld",
					    what, (long long)(L - 1));
		(*n)++;
	}
	if (*n > L)
		*n = L;
	return VF_OK;
}

/* The feed-forward: E routed experts of width `inter` (top-k) beside the
 * shared MLP, or the shared MLP alone (E = 0). */
static void granite_ffn(struct vf_arch *a, int64_t inter, int64_t shared, int64_t E, int64_t topk)
{
	a->experts = E > 0 ? E : 0;
	a->known |= VF_ARCH_F_EXPERTS | VF_ARCH_F_FFN;
	a->ffn = E > 0 ? inter : shared;
	if (E > 0) {
		a->experts_per_token = topk;
		a->known |= VF_ARCH_F_EXPERTS_PER_TOKEN;
		a->moe_layers = a->layers;
		a->moe_ffn = inter;
		a->shared_ffn = shared;
	}
}

/* The Granite-4 hybrid / Bamba groups from the fields the reader set. */
static bool granite_layout(struct vf_arch *a, int64_t shared, bool attn_bias, bool proj_bias,
			   bool conv_bias)
{
	int64_t L = a->layers, H = a->hidden, E = a->experts;
	struct layout l;
	layout_init(&l);
	attn_proj(&l, a, a->attn_layers, attn_bias, attn_bias);
	mamba2_mixer(&l, a, proj_bias, conv_bias, a->ssm_layers);
	acc_mul(&l.g[G_MLP], L, 3 * H, shared); /* shared_mlp: input_linear 2s, output_linear */
	if (E > 0)
		acc_mul(&l.g[G_EXPERTS], L, E, 3 * H * a->moe_ffn + H); /* experts + router */
	acc_mul(&l.g[G_NORM], L, 2, H);
	embed_head(&l, a, 1);
	return layout_store(&l, a);
}

/* ---- Granite-4 hybrids (granitemoehybrid) ----------------------------------- */

vf_status vf__arch_read_granite_hybrid(const cJSON *cfg, const char *family, const char *what,
				       struct vf_arch *a, struct vf_error *err)
{
	bool f, bamba = strcmp(family, "bamba") == 0;
	READ(KEYS("hidden_size"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("num_hidden_layers"), 0, layers, VF_ARCH_F_LAYERS);
	READ(KEYS("num_attention_heads"), 1, heads, VF_ARCH_F_HEADS);
	READ(KEYS("num_key_value_heads"), 1, kv_heads, VF_ARCH_F_KV_HEADS);
	READ(KEYS("vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	READ(KEYS("max_position_embeddings"), 1, max_positions, VF_ARCH_F_MAX_POSITIONS);
	/* GraniteMoeHybridConfig (BambaConfig) defaults */
	VF_DEFAULT(hidden, VF_ARCH_F_HIDDEN, 4096);
	VF_DEFAULT(layers, VF_ARCH_F_LAYERS, 32);
	VF_DEFAULT(heads, VF_ARCH_F_HEADS, 32);
	VF_DEFAULT(kv_heads, VF_ARCH_F_KV_HEADS, bamba ? 8 : a->heads);
	VF_DEFAULT(vocab, VF_ARCH_F_VOCAB, bamba ? 128000 : 32000);
	int64_t inter = bamba ? 14336 : 11008, shared = 1024, E = 8, topk = 2;
	TRY(vf__arch_get_int(cfg, "intermediate_size", 1, &inter, &f, what, err));
	TRY(vf__arch_get_int(cfg, "shared_intermediate_size", 0, &shared, &f, what, err));
	TRY(vf__arch_get_int(cfg, "num_local_experts", 0, &E, &f, what, err));
	TRY(vf__arch_get_int(cfg, "num_experts_per_tok", 1, &topk, &f, what, err));
	if (bamba) { /* Bamba: one gated MLP of intermediate_size, no experts */
		shared = inter;
		E = 0;
	}
	a->tied_embeddings = false;
	TRY(vf__arch_get_bool(cfg, "tie_word_embeddings", &a->tied_embeddings, what, err));
	a->known |= VF_ARCH_F_TIED;
	bool attn_bias = false, conv_bias = true, proj_bias = false;
	TRY(vf__arch_get_bool(cfg, "attention_bias", &attn_bias, what, err));
	TRY(vf__arch_get_bool(cfg, "mamba_conv_bias", &conv_bias, what, err));
	TRY(vf__arch_get_bool(cfg, "mamba_proj_bias", &proj_bias, what, err));
	int64_t nh = 128, groups = 1, expand = 2;
	a->ssm_state = 256;
	a->ssm_conv = 4;
	a->ssm_chunk = 256;
	TRY(vf__arch_get_int(cfg, "mamba_n_heads", 1, &nh, &f, what, err));
	TRY(vf__arch_get_int(cfg, "mamba_n_groups", 1, &groups, &f, what, err));
	TRY(vf__arch_get_int(cfg, "mamba_d_state", 1, &a->ssm_state, &f, what, err));
	TRY(vf__arch_get_int(cfg, "mamba_d_conv", 1, &a->ssm_conv, &f, what, err));
	TRY(vf__arch_get_int(cfg, "mamba_expand", 1, &expand, &f, what, err));
	TRY(vf__arch_get_int(cfg, "mamba_chunk_size", 1, &a->ssm_chunk, &f, what, err));
	if (expand > 64)
		return vf_error_set(err, VF_ERR, "%s: field mamba_expand: above 64", what);
	if (a->heads % a->kv_heads != 0)
		return vf_error_set(err, VF_ERR, "%s: heads not a multiple of key/value heads", what);
	int64_t L = a->layers, H = a->hidden;
	a->ssm_inner = expand * H;
	if (a->ssm_inner % nh != 0)
		vf_arch_not_understood(a, "mamba_n_heads does not divide mamba_expand x hidden_size");
	/* layer_types: "mamba" or "attention" per layer; absent: all Mamba
	 * (Bamba: attn_layer_indices lists the attention layers) */
	if (bamba)
		TRY(attn_indices(cfg, L, &a->attn_layers, what, err));
	else
		TRY(layer_kinds(cfg, "layer_types", "mamba", "attention", false, L, &a->attn_layers, &f,
				a, what, err));
	a->ssm_layers = L - a->attn_layers;
	a->ssm_heads = nh;
	a->ssm_conv_dim = a->ssm_inner + 2 * groups * a->ssm_state;
	a->head_dim = H / a->heads;
	a->known |= VF_ARCH_F_HEAD_DIM;
	a->gated_mlp = true;
	a->qkv_bias = a->o_bias = attn_bias;
	granite_ffn(a, inter, shared, E, topk);
	return granite_layout(a, shared, attn_bias, proj_bias, conv_bias) ? VF_OK : overflow(what, err);
}

/* ---- Falcon-H1 ------------------------------------------------------------------- */

vf_status vf__arch_read_falcon_h1(const cJSON *cfg, const char *family, const char *what,
				  struct vf_arch *a, struct vf_error *err)
{
	(void)family;
	bool f;
	READ(KEYS("hidden_size"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("num_hidden_layers"), 0, layers, VF_ARCH_F_LAYERS);
	READ(KEYS("num_attention_heads"), 1, heads, VF_ARCH_F_HEADS);
	READ(KEYS("num_key_value_heads"), 1, kv_heads, VF_ARCH_F_KV_HEADS);
	READ(KEYS("head_dim"), 1, head_dim, VF_ARCH_F_HEAD_DIM);
	READ(KEYS("intermediate_size"), 1, ffn, VF_ARCH_F_FFN);
	READ(KEYS("vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	READ(KEYS("max_position_embeddings"), 1, max_positions, VF_ARCH_F_MAX_POSITIONS);
	/* FalconH1Config defaults */
	VF_DEFAULT(hidden, VF_ARCH_F_HIDDEN, 4096);
	VF_DEFAULT(layers, VF_ARCH_F_LAYERS, 32);
	VF_DEFAULT(heads, VF_ARCH_F_HEADS, 32);
	VF_DEFAULT(kv_heads, VF_ARCH_F_KV_HEADS, 8);
	VF_DEFAULT(head_dim, VF_ARCH_F_HEAD_DIM, a->hidden / a->heads);
	VF_DEFAULT(ffn, VF_ARCH_F_FFN, 14336);
	VF_DEFAULT(vocab, VF_ARCH_F_VOCAB, 128000);
	VF_DEFAULT(max_positions, VF_ARCH_F_MAX_POSITIONS, 8192);
	a->tied_embeddings = false;
	TRY(vf__arch_get_bool(cfg, "tie_word_embeddings", &a->tied_embeddings, what, err));
	a->known |= VF_ARCH_F_TIED;
	bool attn_bias = false, mlp_bias = false, conv_bias = true, proj_bias = false;
	bool proj_out_bias = false, rms = false;
	TRY(vf__arch_get_bool(cfg, "attention_bias", &attn_bias, what, err));
	TRY(vf__arch_get_bool(cfg, "mlp_bias", &mlp_bias, what, err));
	TRY(vf__arch_get_bool(cfg, "mamba_conv_bias", &conv_bias, what, err));
	TRY(vf__arch_get_bool(cfg, "mamba_proj_bias", &proj_bias, what, err));
	TRY(vf__arch_get_bool(cfg, "projectors_bias", &proj_out_bias, what, err));
	TRY(vf__arch_get_bool(cfg, "mamba_rms_norm", &rms, what, err));
	int64_t nh = 128, groups = 1, expand = 2, dssm = 1024;
	a->ssm_state = 256;
	a->ssm_conv = 4;
	a->ssm_chunk = 256;
	TRY(vf__arch_get_int(cfg, "mamba_n_heads", 1, &nh, &f, what, err));
	TRY(vf__arch_get_int(cfg, "mamba_n_groups", 1, &groups, &f, what, err));
	TRY(vf__arch_get_int(cfg, "mamba_d_state", 1, &a->ssm_state, &f, what, err));
	TRY(vf__arch_get_int(cfg, "mamba_d_conv", 1, &a->ssm_conv, &f, what, err));
	TRY(vf__arch_get_int(cfg, "mamba_expand", 1, &expand, &f, what, err));
	TRY(vf__arch_get_int(cfg, "mamba_chunk_size", 1, &a->ssm_chunk, &f, what, err));
	/* mamba_d_ssm: the inner width; null: mamba_expand x hidden */
	const cJSON *ds = cJSON_GetObjectItemCaseSensitive(cfg, "mamba_d_ssm");
	if (ds && cJSON_IsNull(ds)) {
		if (expand > 64)
			return vf_error_set(err, VF_ERR, "%s: field mamba_expand: above 64", what);
		dssm = expand * a->hidden;
	} else {
		TRY(vf__arch_get_int(cfg, "mamba_d_ssm", 1, &dssm, &f, what, err));
	}
	if (a->heads % a->kv_heads != 0)
		return vf_error_set(err, VF_ERR, "%s: heads not a multiple of key/value heads", what);
	int64_t L = a->layers, H = a->hidden;
	a->ssm_inner = dssm;
	if (dssm % nh != 0)
		vf_arch_not_understood(a, "mamba_n_heads does not divide the Mamba width");
	a->ssm_heads = nh;
	a->ssm_conv_dim = dssm + 2 * groups * a->ssm_state;
	/* every layer runs attention and a Mamba-2 mixer side by side */
	a->ssm_layers = L;
	a->attn_layers = L;
	a->gated_mlp = true;
	a->qkv_bias = a->o_bias = attn_bias;
	a->mlp_bias = mlp_bias;
	struct layout l;
	layout_init(&l);
	attn_proj(&l, a, L, attn_bias, attn_bias);
	mamba2_mixer_full(&l, a, proj_bias, proj_out_bias, conv_bias, rms, L);
	acc_mul(&l.g[G_MLP], L, 3 * H, a->ffn);
	if (mlp_bias)
		acc_mul(&l.g[G_MLP], L, 2 * a->ffn + H, 1);
	acc_mul(&l.g[G_NORM], L, 2, H);
	embed_head(&l, a, 1);
	return layout_store(&l, a) ? VF_OK : overflow(what, err);
}

/* ---- RecurrentGemma (Griffin) --------------------------------------------------- */

vf_status vf__arch_read_recurrent_gemma(const cJSON *cfg, const char *family, const char *what,
					struct vf_arch *a, struct vf_error *err)
{
	(void)family;
	bool f;
	READ(KEYS("hidden_size"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("num_hidden_layers"), 0, layers, VF_ARCH_F_LAYERS);
	READ(KEYS("num_attention_heads"), 1, heads, VF_ARCH_F_HEADS);
	READ(KEYS("num_key_value_heads"), 1, kv_heads, VF_ARCH_F_KV_HEADS);
	READ(KEYS("head_dim"), 1, head_dim, VF_ARCH_F_HEAD_DIM);
	READ(KEYS("intermediate_size"), 1, ffn, VF_ARCH_F_FFN);
	READ(KEYS("vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	/* RecurrentGemmaConfig defaults */
	VF_DEFAULT(hidden, VF_ARCH_F_HIDDEN, 2560);
	VF_DEFAULT(layers, VF_ARCH_F_LAYERS, 26);
	VF_DEFAULT(heads, VF_ARCH_F_HEADS, 10);
	VF_DEFAULT(kv_heads, VF_ARCH_F_KV_HEADS, 1);
	VF_DEFAULT(head_dim, VF_ARCH_F_HEAD_DIM, a->hidden / a->heads);
	VF_DEFAULT(ffn, VF_ARCH_F_FFN, 3 * a->hidden * 2);
	VF_DEFAULT(vocab, VF_ARCH_F_VOCAB, 256000);
	a->tied_embeddings = true;
	a->known |= VF_ARCH_F_TIED;
	int64_t lru = a->hidden, conv = 4, window = 2048;
	TRY(vf__arch_get_int(cfg, "lru_width", 1, &lru, &f, what, err));
	TRY(vf__arch_get_int(cfg, "conv1d_width", 1, &conv, &f, what, err));
	TRY(vf__arch_get_int(cfg, "attention_window_size", 1, &window, &f, what, err));
	if (a->heads % a->kv_heads != 0 || lru % a->heads != 0)
		return vf_error_set(err, VF_ERR,
				    "%s: heads must divide lru_width and be a multiple of key/value heads",
				    what);
	/* block_types cycle over the layers (default recurrent, recurrent,
	 * attention) */
	int64_t L = a->layers, H = a->hidden, attn = 0;
	TRY(layer_kinds(cfg, "block_types", "recurrent", "attention", true, L, &attn, &f, a, what,
			err));
	if (!f)
		for (int64_t l = 0; l < L; l++)
			attn += l % 3 == 2;
	a->attn_layers = attn;
	a->ssm_layers = L - attn;
	a->ssm_inner = lru;
	a->ssm_state = 1; /* the RG-LRU: one state per channel */
	a->ssm_conv = conv;
	a->ssm_conv_dim = lru;
	a->sliding_window = window;
	a->sliding_layers = attn;
	a->gated_mlp = true;
	a->mlp_bias = true;
	int64_t F = a->ffn / 2; /* the MLP runs at half intermediate_size */
	int64_t bw = lru / a->heads;
	struct layout l;
	layout_init(&l);
	attn_proj(&l, a, attn, false, true); /* o_proj with bias */
	/* recurrent block: linear_y, linear_x (h -> lru + bias), linear_out
	 * (lru -> h + bias); conv1d with bias; the RG-LRU's recurrent_param,
	 * input and recurrent gates (heads x bw x bw + heads x bw each) */
	acc_mul(&l.g[G_ATTN], a->ssm_layers, 2 * (H + 1), lru);
	acc_mul(&l.g[G_ATTN], a->ssm_layers, lru + 1, H);
	acc_mul(&l.g[G_OTHER], a->ssm_layers, lru, conv + 1);
	acc_mul(&l.g[G_OTHER], a->ssm_layers, lru, 1 + 2 * bw + 2);
	acc_mul(&l.g[G_MLP], L, 3 * H, F);
	acc_mul(&l.g[G_MLP], L, 2 * F + H, 1);
	acc_mul(&l.g[G_NORM], L, 2, H);
	embed_head(&l, a, 1);
	a->ffn = F;
	return layout_store(&l, a) ? VF_OK : overflow(what, err);
}

/* ---- Zamba2 ------------------------------------------------------------------------ */

static bool zamba2_layout(struct vf_arch *a, int64_t A, int64_t blocks, int64_t rank,
			  int64_t hybrid, bool bias, bool attn_adapter);

vf_status vf__arch_read_zamba2(const cJSON *cfg, const char *family, const char *what,
			       struct vf_arch *a, struct vf_error *err)
{
	(void)family;
	bool f;
	READ(KEYS("hidden_size"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("num_hidden_layers"), 0, layers, VF_ARCH_F_LAYERS);
	READ(KEYS("num_attention_heads"), 1, heads, VF_ARCH_F_HEADS);
	READ(KEYS("num_key_value_heads"), 1, kv_heads, VF_ARCH_F_KV_HEADS);
	READ(KEYS("intermediate_size"), 1, ffn, VF_ARCH_F_FFN);
	READ(KEYS("vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	READ(KEYS("max_position_embeddings"), 1, max_positions, VF_ARCH_F_MAX_POSITIONS);
	/* Zamba2Config defaults */
	VF_DEFAULT(hidden, VF_ARCH_F_HIDDEN, 2560);
	VF_DEFAULT(layers, VF_ARCH_F_LAYERS, 54);
	VF_DEFAULT(heads, VF_ARCH_F_HEADS, 32);
	VF_DEFAULT(kv_heads, VF_ARCH_F_KV_HEADS, a->heads);
	VF_DEFAULT(ffn, VF_ARCH_F_FFN, 4 * a->hidden);
	VF_DEFAULT(vocab, VF_ARCH_F_VOCAB, 32000);
	a->tied_embeddings = true;
	TRY(vf__arch_get_bool(cfg, "tie_word_embeddings", &a->tied_embeddings, what, err));
	a->known |= VF_ARCH_F_TIED;
	int64_t L = a->layers, H = a->hidden, A = 2 * H, hd = 0, nh = 8, groups = 1, expand = 2;
	int64_t blocks = 1, rank = 128;
	TRY(vf__arch_get_int(cfg, "attention_hidden_size", 1, &A, &f, what, err));
	hd = A / a->heads;
	TRY(vf__arch_get_int(cfg, "attention_head_dim", 1, &hd, &f, what, err));
	TRY(vf__arch_get_int(cfg, "n_mamba_heads", 1, &nh, &f, what, err));
	TRY(vf__arch_get_int(cfg, "mamba_ngroups", 1, &groups, &f, what, err));
	TRY(vf__arch_get_int(cfg, "mamba_expand", 1, &expand, &f, what, err));
	TRY(vf__arch_get_int(cfg, "num_mem_blocks", 1, &blocks, &f, what, err));
	TRY(vf__arch_get_int(cfg, "adapter_rank", 1, &rank, &f, what, err));
	a->ssm_state = 64;
	a->ssm_conv = 4;
	a->ssm_chunk = 256;
	TRY(vf__arch_get_int(cfg, "mamba_d_state", 1, &a->ssm_state, &f, what, err));
	TRY(vf__arch_get_int(cfg, "mamba_d_conv", 1, &a->ssm_conv, &f, what, err));
	TRY(vf__arch_get_int(cfg, "chunk_size", 1, &a->ssm_chunk, &f, what, err));
	bool bias = false, attn_adapter = false;
	TRY(vf__arch_get_bool(cfg, "add_bias_linear", &bias, what, err));
	TRY(vf__arch_get_bool(cfg, "use_shared_attention_adapter", &attn_adapter, what, err));
	if (expand > 64 || blocks > L + 1 || rank > VF_ARCH_MAX_DIM)
		return vf_error_set(err, VF_ERR, "%s: mamba_expand, num_mem_blocks or adapter_rank too large",
				    what);
	/* layers_block_type: "mamba" or "hybrid" (a shared attention block, a
	 * linear H x H, then the layer's Mamba block) */
	int64_t hybrid = 0;
	TRY(layer_kinds(cfg, "layers_block_type", "mamba", "hybrid", false, L, &hybrid, &f, a, what,
			err));
	if (!f)
		vf_arch_not_understood(a, "layers_block_type (absent: where the shared blocks run)");
	a->ssm_inner = expand * H;
	a->ssm_heads = nh;
	a->ssm_conv_dim = a->ssm_inner + 2 * groups * a->ssm_state;
	a->ssm_layers = L;
	a->attn_layers = hybrid;
	a->head_dim = hd;
	a->known |= VF_ARCH_F_HEAD_DIM;
	a->gated_mlp = true;
	return zamba2_layout(a, A, blocks, rank, hybrid, bias, attn_adapter) ? VF_OK
									 : overflow(what, err);
}

/* The Zamba2 groups: A the shared blocks' input width (2h), `blocks`
 * shared blocks, adapters of `rank` on the `hybrid` layers. */
static bool zamba2_layout(struct vf_arch *a, int64_t A, int64_t blocks, int64_t rank,
			  int64_t hybrid, bool bias, bool attn_adapter)
{
	int64_t L = a->layers, H = a->hidden, hd = a->head_dim;
	struct layout l;
	layout_init(&l);
	/* every layer: RMSNorm and a Mamba-2 mixer (conv bias always) */
	mamba2_mixer_full(&l, a, bias, bias, true, true, L);
	acc_mul(&l.g[G_NORM], L, H, 1);
	acc_mul(&l.g[G_OTHER], hybrid, H, H); /* the hybrid layers' linear */
	/* num_mem_blocks shared blocks: norm over A, q/k/v from A, o to H,
	 * norm over H, gate_up H -> 2 ffn and down (biases: add_bias_linear) */
	int64_t q = a->heads * hd, kv = a->kv_heads * hd, F = a->ffn;
	acc_mul(&l.g[G_ATTN], blocks, A, q + 2 * kv);
	acc_mul(&l.g[G_ATTN], blocks, q, H);
	acc_mul(&l.g[G_MLP], blocks, 3 * H, F);
	if (bias)
		acc_mul(&l.g[G_MLP], blocks, 2 * F + H, 1);
	acc_mul(&l.g[G_NORM], blocks, A + H, 1);
	/* one adapter per hybrid layer: gate_up (H -> r -> 2 ffn), and with
	 * use_shared_attention_adapter q, k, v (A -> r -> A) */
	acc_mul(&l.g[G_MLP], hybrid, rank, H + 2 * F);
	if (attn_adapter)
		acc_mul(&l.g[G_ATTN], hybrid, 3 * rank, 2 * A);
	embed_head(&l, a, 1);
	return layout_store(&l, a);
}

/* ---- ChatGLM ---------------------------------------------------------------- */

vf_status vf__arch_read_chatglm(const cJSON *cfg, const char *family, const char *what,
				struct vf_arch *a, struct vf_error *err)
{
	(void)family;
	bool f;
	READ(KEYS("hidden_size"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("num_layers", "num_hidden_layers"), 0, layers, VF_ARCH_F_LAYERS);
	READ(KEYS("num_attention_heads"), 1, heads, VF_ARCH_F_HEADS);
	READ(KEYS("kv_channels"), 1, head_dim, VF_ARCH_F_HEAD_DIM);
	READ(KEYS("ffn_hidden_size"), 1, ffn, VF_ARCH_F_FFN);
	READ(KEYS("padded_vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	READ(KEYS("seq_length"), 1, max_positions, VF_ARCH_F_MAX_POSITIONS);
	if (cJSON_GetObjectItemCaseSensitive(cfg, "inner_hidden_size") ||
	    cJSON_GetObjectItemCaseSensitive(cfg, "position_encoding_2d"))
		vf_arch_not_understood(a, "ChatGLM-6B v1 layout (inner_hidden_size, "
					  "position_encoding_2d)");
	/* ChatGLMConfig defaults (GLM-2/3/4 remote code) */
	VF_DEFAULT(hidden, VF_ARCH_F_HIDDEN, 4096);
	VF_DEFAULT(layers, VF_ARCH_F_LAYERS, 28);
	VF_DEFAULT(heads, VF_ARCH_F_HEADS, 32);
	VF_DEFAULT(head_dim, VF_ARCH_F_HEAD_DIM, 128);
	VF_DEFAULT(ffn, VF_ARCH_F_FFN, 13696);
	VF_DEFAULT(vocab, VF_ARCH_F_VOCAB, 65024);
	VF_DEFAULT(max_positions, VF_ARCH_F_MAX_POSITIONS, 2048);
	bool mq = false, qkv_bias = false, bias = false, rms = true, post = true;
	int64_t groups = 1, pre_seq = 0;
	TRY(vf__arch_get_bool(cfg, "multi_query_attention", &mq, what, err));
	TRY(vf__arch_get_int(cfg, "multi_query_group_num", 1, &groups, &f, what, err));
	TRY(vf__arch_get_bool(cfg, "add_qkv_bias", &qkv_bias, what, err));
	TRY(vf__arch_get_bool(cfg, "add_bias_linear", &bias, what, err));
	TRY(vf__arch_get_bool(cfg, "rmsnorm", &rms, what, err));
	TRY(vf__arch_get_bool(cfg, "post_layer_norm", &post, what, err));
	TRY(vf__arch_get_int(cfg, "pre_seq_len", 1, &pre_seq, &f, what, err));
	a->kv_heads = mq ? groups : a->heads;
	a->known |= VF_ARCH_F_KV_HEADS;
	if (a->heads % a->kv_heads != 0)
		return vf_error_set(err, VF_ERR, "%s: heads not a multiple of multi_query_group_num",
				    what);
	a->tied_embeddings = false;
	TRY(vf__arch_get_bool(cfg, "tie_word_embeddings", &a->tied_embeddings, what, err));
	a->known |= VF_ARCH_F_TIED;
	a->gated_mlp = true;
	a->layer_norm = !rms;
	a->qkv_bias = qkv_bias || bias;
	a->o_bias = a->mlp_bias = a->linear_bias = bias;
	int64_t H = a->hidden, L = a->layers, q = a->heads * a->head_dim;
	int64_t kv = a->kv_heads * a->head_dim, F = a->ffn, aff = rms ? 1 : 2;
	struct layout l;
	layout_init(&l);
	acc_mul(&l.g[G_ATTN], L, H, q + 2 * kv); /* query_key_value */
	acc_mul(&l.g[G_ATTN], L, q, H);          /* dense */
	if (a->qkv_bias)
		acc_mul(&l.g[G_ATTN], L, q + 2 * kv, 1);
	if (bias)
		acc_mul(&l.g[G_ATTN], L, H, 1);
	acc_mul(&l.g[G_MLP], L, 3 * H, F);
	if (bias)
		acc_mul(&l.g[G_MLP], L, 2 * F + H, 1);
	acc_mul(&l.g[G_NORM], L, 2 * aff, H);
	acc_mul(&l.g[G_EMB], a->vocab, H, a->tied_embeddings ? 1 : 2);
	if (post)
		acc_mul(&l.g[G_NORM], aff, H, 1);
	if (pre_seq > 0) /* P-tuning v2 prefix encoder: an embedding of the k/v prefix */
		acc_mul(&l.g[G_OTHER], pre_seq, L, 2 * kv);
	return layout_store(&l, a) ? VF_OK : overflow(what, err);
}

/* ---- InternLM2 ---------------------------------------------------------------------- */

/* InternLM2 (remote code; the language model of InternVL2 and InternLM2):
 * tok_embeddings, per layer attention_norm, wqkv h -> (heads + 2 kv) hd
 * and wo (biases: `bias`, InternLM2Config default true), ffn_norm, w1 / w3
 * h -> ffn and w2 ffn -> h without bias; norm; output untied. */
vf_status vf__arch_read_internlm2(const cJSON *cfg, const char *family, const char *what,
				  struct vf_arch *a, struct vf_error *err)
{
	(void)family;
	READ(KEYS("hidden_size"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("num_hidden_layers"), 0, layers, VF_ARCH_F_LAYERS);
	READ(KEYS("num_attention_heads"), 1, heads, VF_ARCH_F_HEADS);
	READ(KEYS("num_key_value_heads"), 1, kv_heads, VF_ARCH_F_KV_HEADS);
	READ(KEYS("intermediate_size"), 1, ffn, VF_ARCH_F_FFN);
	READ(KEYS("vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	READ(KEYS("max_position_embeddings"), 1, max_positions, VF_ARCH_F_MAX_POSITIONS);
	VF_DEFAULT(hidden, VF_ARCH_F_HIDDEN, 4096);
	VF_DEFAULT(layers, VF_ARCH_F_LAYERS, 32);
	VF_DEFAULT(heads, VF_ARCH_F_HEADS, 32);
	VF_DEFAULT(kv_heads, VF_ARCH_F_KV_HEADS, a->heads);
	VF_DEFAULT(ffn, VF_ARCH_F_FFN, 11008);
	VF_DEFAULT(vocab, VF_ARCH_F_VOCAB, 103168);
	a->tied_embeddings = false;
	TRY(vf__arch_get_bool(cfg, "tie_word_embeddings", &a->tied_embeddings, what, err));
	a->known |= VF_ARCH_F_TIED;
	bool bias = true;
	TRY(vf__arch_get_bool(cfg, "bias", &bias, what, err));
	if (a->heads % a->kv_heads != 0)
		return vf_error_set(err, VF_ERR, "%s: heads not a multiple of key/value heads", what);
	int64_t H = a->hidden, L = a->layers;
	a->head_dim = H / a->heads;
	a->known |= VF_ARCH_F_HEAD_DIM;
	a->gated_mlp = true;
	a->qkv_bias = a->o_bias = bias;
	struct layout l;
	layout_init(&l);
	attn_proj(&l, a, L, bias, bias);
	acc_mul(&l.g[G_MLP], L, 3 * H, a->ffn);
	acc_mul(&l.g[G_NORM], L, 2, H);
	embed_head(&l, a, 1);
	return layout_store(&l, a) ? VF_OK : overflow(what, err);
}

/* ---- Nemotron-H --------------------------------------------------------------- */

enum { NH_MAMBA, NH_ATTN, NH_MLP, NH_MOE, NH_N };

/* One block type by its name in layers_block_type (the current names and
 * the legacy ones configs on the Hub carry) or its letter in
 * hybrid_override_pattern; -1 when neither. */
static int nh_kind(const char *s, bool letter)
{
	static const struct {
		const char *name;
		int kind;
	} names[] = {
		{"mamba", NH_MAMBA}, {"linear_attention", NH_MAMBA}, {"attention", NH_ATTN},
		{"full_attention", NH_ATTN}, {"mlp", NH_MLP}, {"moe", NH_MOE},
	};
	if (letter)
		return s[0] == 'M' ? NH_MAMBA : s[0] == '*' ? NH_ATTN : s[0] == '-' ? NH_MLP
		       : s[0] == 'E'				  ? NH_MOE
								  : -1;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(s, names[i].name) == 0)
			return names[i].kind;
	return -1;
}

/* The blocks of each kind from layers_block_type (alias layer_types) or,
 * else, hybrid_override_pattern; the layer count is the list's length
 * (num_hidden_layers is only checked against it). */
static vf_status nh_blocks(const cJSON *cfg, int64_t n[NH_N], bool *found, const char *what,
			   struct vf_error *err)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(cfg, "layers_block_type");
	if (!lt || cJSON_IsNull(lt))
		lt = cJSON_GetObjectItemCaseSensitive(cfg, "layer_types");
	const cJSON *pat = cJSON_GetObjectItemCaseSensitive(cfg, "hybrid_override_pattern");
	for (int k = 0; k < NH_N; k++)
		n[k] = 0;
	*found = true;
	if (lt && !cJSON_IsNull(lt)) {
		const cJSON *e;
		if (!cJSON_IsArray(lt) || cJSON_GetArraySize(lt) < 1 ||
		    cJSON_GetArraySize(lt) > VF_ARCH_MAX_LAYERS)
			return vf_error_set(err, VF_ERR, "%s: field layers_block_type: expected a list "
					    "of 1 to 4096 block types", what);
		cJSON_ArrayForEach(e, lt)
		{
			int k = cJSON_IsString(e) ? nh_kind(e->valuestring, false) : -1;
			if (k < 0)
				return vf_error_set(err, VF_ERR, "%s: field layers_block_type: expected "
						    "\"mamba\", \"attention\", \"mlp\" or \"moe\" entries",
						    what);
			n[k]++;
		}
		return VF_OK;
	}
	if (pat && !cJSON_IsNull(pat)) {
		size_t len = cJSON_IsString(pat) ? strlen(pat->valuestring) : 0;
		if (len < 1 || len > VF_ARCH_MAX_LAYERS)
			return vf_error_set(err, VF_ERR, "%s: field hybrid_override_pattern: expected "
					    "a string of 1 to 4096 of M, *, - and E", what);
		for (size_t i = 0; i < len; i++) {
			int k = nh_kind(pat->valuestring + i, true);
			if (k < 0)
				return vf_error_set(err, VF_ERR, "%s: field hybrid_override_pattern: "
						    "expected only M, *, - and E", what);
			n[k]++;
		}
		return VF_OK;
	}
	*found = false;
	return VF_OK;
}

/* The Mamba-2 mixer's keys (the current names and the legacy mamba_*
 * ones): a->ssm_* set; *bias for in/out_proj, *conv_bias for conv1d. */
static vf_status nh_mamba(const cJSON *cfg, struct vf_arch *a, bool *bias, bool *conv_bias,
			  const char *what, struct vf_error *err)
{
	bool f;
	int64_t nh = 128, hdm = 64, groups = 8;
	*bias = false;
	*conv_bias = true;
	TRY(vf__arch_get_bool(cfg, "use_bias", bias, what, err));
	TRY(vf__arch_get_bool(cfg, "use_conv_bias", conv_bias, what, err));
	TRY(vf__arch_get_bool(cfg, "mamba_conv_bias", conv_bias, what, err));
	a->ssm_state = 128;
	a->ssm_conv = 4;
	a->ssm_chunk = 128;
	TRY(vf__arch_get_int(cfg, "mamba_num_heads", 1, &nh, &f, what, err));
	TRY(vf__arch_get_int(cfg, "mamba_head_dim", 1, &hdm, &f, what, err));
	TRY(vf__arch_get_int_any(cfg, KEYS("n_groups", "mamba_n_groups"), 1, &groups, &f, what, err));
	TRY(vf__arch_get_int(cfg, "ssm_state_size", 1, &a->ssm_state, &f, what, err));
	TRY(vf__arch_get_int_any(cfg, KEYS("conv_kernel", "mamba_d_conv"), 1, &a->ssm_conv, &f, what,
				 err));
	TRY(vf__arch_get_int_any(cfg, KEYS("chunk_size", "mamba_chunk_size"), 1, &a->ssm_chunk, &f,
				 what, err));
	a->ssm_heads = nh;
	a->ssm_inner = nh * hdm; /* mamba_num_heads x mamba_head_dim, not expand x hidden */
	a->ssm_conv_dim = a->ssm_inner + 2 * groups * a->ssm_state;
	return VF_OK;
}

/* The MoE blocks' keys, when there are any (nmoe > 0). */
static vf_status nh_moe(const cJSON *cfg, struct vf_arch *a, int64_t nmoe, const char *what,
			struct vf_error *err)
{
	bool f;
	int64_t E = 8, topk = 2, mi = 7688, si = 7688, latent = 0;
	TRY(vf__arch_get_int(cfg, "n_routed_experts", 1, &E, &f, what, err));
	TRY(vf__arch_get_int(cfg, "num_experts_per_tok", 1, &topk, &f, what, err));
	TRY(vf__arch_get_int(cfg, "moe_intermediate_size", 1, &mi, &f, what, err));
	TRY(vf__arch_get_int(cfg, "moe_shared_expert_intermediate_size", 0, &si, &f, what, err));
	TRY(vf__arch_get_int(cfg, "moe_latent_size", 1, &latent, &f, what, err));
	if (!nmoe)
		return VF_OK;
	a->experts = E;
	a->experts_per_token = topk;
	a->known |= VF_ARCH_F_EXPERTS | VF_ARCH_F_EXPERTS_PER_TOKEN;
	a->moe_layers = nmoe;
	a->moe_ffn = mi;
	a->moe_in = latent;
	a->shared_ffn = si;
	a->router_bias = true;
	return VF_OK;
}

/* The groups of a Nemotron-H layout from the fields the reader set;
 * false on overflow. */
static bool nh_layout(struct vf_arch *a, const int64_t n[NH_N], bool bias, bool conv_bias)
{
	int64_t H = a->hidden, L = a->layers, E = a->experts, mi = a->moe_ffn, si = a->shared_ffn;
	int64_t lat = a->moe_in, in = lat > 0 ? lat : H;
	struct layout l;
	layout_init(&l);
	attn_proj(&l, a, n[NH_ATTN], a->qkv_bias, a->o_bias);
	mamba2_mixer(&l, a, bias, conv_bias, n[NH_MAMBA]);
	acc_mul(&l.g[G_MLP], n[NH_MLP], 2 * H, a->ffn); /* up, down */
	if (a->mlp_bias)
		acc_mul(&l.g[G_MLP], n[NH_MLP], a->ffn + H, 1);
	if (n[NH_MOE]) {
		acc_mul(&l.g[G_EXPERTS], n[NH_MOE], E, 2 * in * mi + H + 1); /* experts, router, its bias */
		acc_mul(&l.g[G_MLP], n[NH_MOE], 2 * H, si);                  /* shared expert */
		if (lat > 0)
			acc_mul(&l.g[G_EXPERTS], n[NH_MOE], 2 * H, lat); /* fc1/fc2_latent_proj */
		if (a->mlp_bias)
			acc_mul(&l.g[G_MLP], n[NH_MOE], si + H + (lat > 0 ? lat + H : 0), 1);
	}
	acc_mul(&l.g[G_NORM], L, H, 1);
	embed_head(&l, a, 1);
	return layout_store(&l, a);
}

/* NemotronHForCausalLM (transformers models/nemotron_h: configuration_
 * nemotron_h.py, modular_nemotron_h.py): every block is an RMSNorm and one
 * mixer - a Mamba-2 mixer of mamba_num_heads x mamba_head_dim channels
 * (in/out projections with use_bias, conv with use_conv_bias, the gated
 * RMSNorm), attention (q, k, v, o with attention_bias, head_dim), a
 * non-gated MLP (up, down with mlp_bias) or an MoE (a router
 * experts x hidden with its score correction bias, routed experts of two
 * matrices each from hidden or moe_latent_size, the latent projections
 * with mlp_bias, one shared MLP of moe_shared_expert_intermediate_size).
 * Model: embedding, final RMSNorm, lm_head untied unless tied. The MTP
 * blocks (num_nextn_predict_layers) are skipped on load: not counted. */
vf_status vf__arch_read_nemotron_h(const cJSON *cfg, const char *family, const char *what,
				   struct vf_arch *a, struct vf_error *err)
{
	(void)family;
	bool f;
	int64_t n[NH_N];
	TRY(nh_blocks(cfg, n, &f, what, err));
	READ(KEYS("hidden_size"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("num_attention_heads"), 1, heads, VF_ARCH_F_HEADS);
	READ(KEYS("num_key_value_heads"), 1, kv_heads, VF_ARCH_F_KV_HEADS);
	READ(KEYS("head_dim", "attention_head_dim"), 1, head_dim, VF_ARCH_F_HEAD_DIM);
	READ(KEYS("intermediate_size"), 1, ffn, VF_ARCH_F_FFN);
	READ(KEYS("vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	READ(KEYS("max_position_embeddings"), 1, max_positions, VF_ARCH_F_MAX_POSITIONS);
	int64_t cfg_layers = -1;
	TRY(vf__arch_get_int(cfg, "num_hidden_layers", 1, &cfg_layers, &f, what, err));
	if (!f && !(n[0] + n[1] + n[2] + n[3])) {
		/* no block list: NemotronHConfig's default of four blocks */
		n[NH_MAMBA] = n[NH_ATTN] = n[NH_MLP] = n[NH_MOE] = 1;
		vf_arch_not_understood(a, "no layers_block_type or hybrid_override_pattern");
	}
	int64_t L = n[NH_MAMBA] + n[NH_ATTN] + n[NH_MLP] + n[NH_MOE];
	if (cfg_layers > 0 && cfg_layers != L)
		vf_arch_not_understood(a, "num_hidden_layers (not the block list's length)");
	a->layers = L;
	a->known |= VF_ARCH_F_LAYERS;
	/* NemotronHConfig defaults */
	VF_DEFAULT(hidden, VF_ARCH_F_HIDDEN, 4096);
	VF_DEFAULT(heads, VF_ARCH_F_HEADS, 32);
	VF_DEFAULT(kv_heads, VF_ARCH_F_KV_HEADS, 8);
	VF_DEFAULT(head_dim, VF_ARCH_F_HEAD_DIM, 128);
	VF_DEFAULT(ffn, VF_ARCH_F_FFN, 21504);
	VF_DEFAULT(vocab, VF_ARCH_F_VOCAB, 131072);
	VF_DEFAULT(max_positions, VF_ARCH_F_MAX_POSITIONS, 4096);
	a->tied_embeddings = false;
	TRY(vf__arch_get_bool(cfg, "tie_word_embeddings", &a->tied_embeddings, what, err));
	a->known |= VF_ARCH_F_TIED;
	bool attn_bias = false, mlp_bias = false;
	TRY(vf__arch_get_bool(cfg, "attention_bias", &attn_bias, what, err));
	TRY(vf__arch_get_bool(cfg, "mlp_bias", &mlp_bias, what, err));
	if (a->heads % a->kv_heads != 0)
		return vf_error_set(err, VF_ERR, "%s: heads not a multiple of key/value heads", what);
	if (n[NH_MOE] && mlp_bias)
		vf_arch_not_understood(a, "mlp_bias with experts");
	a->ssm_layers = n[NH_MAMBA];
	a->attn_layers = n[NH_ATTN];
	a->gated_mlp = false;
	a->qkv_bias = a->o_bias = attn_bias;
	a->mlp_bias = mlp_bias;
	a->ffn_layers = n[NH_MLP] + n[NH_MOE];
	bool bias, conv_bias;
	TRY(nh_mamba(cfg, a, &bias, &conv_bias, what, err));
	TRY(nh_moe(cfg, a, n[NH_MOE], what, err));
	return nh_layout(a, n, bias, conv_bias) ? VF_OK : overflow(what, err);
}

/* ---- keys and JSON ------------------------------------------------------------ */

static const struct {
	const char *family;
	const char *keys;
} ssm_keys[] = {
	{"mamba", "hidden_size d_model num_hidden_layers n_layer vocab_size tie_word_embeddings "
		  "expand intermediate_size state_size d_state conv_kernel d_conv use_bias "
		  "use_conv_bias time_step_rank"},
	{"mamba2", "hidden_size d_model num_hidden_layers n_layer vocab_size tie_word_embeddings "
		   "expand intermediate_size state_size d_state conv_kernel d_conv use_bias "
		   "use_conv_bias time_step_rank n_groups num_heads head_dim chunk_size"},
	{"jamba", "hidden_size num_hidden_layers num_attention_heads num_key_value_heads "
		  "intermediate_size vocab_size num_experts num_experts_per_tok "
		  "max_position_embeddings tie_word_embeddings attn_layer_period attn_layer_offset "
		  "expert_layer_period expert_layer_offset mamba_d_state mamba_d_conv mamba_expand "
		  "mamba_dt_rank mamba_conv_bias mamba_proj_bias num_logits_to_keep"},
	{"granitemoehybrid", "hidden_size num_hidden_layers num_attention_heads num_key_value_heads "
			     "vocab_size max_position_embeddings intermediate_size "
			     "shared_intermediate_size num_local_experts num_experts_per_tok "
			     "tie_word_embeddings attention_bias mamba_conv_bias mamba_proj_bias "
			     "mamba_n_heads mamba_n_groups mamba_d_state mamba_d_conv mamba_expand "
			     "mamba_chunk_size mamba_d_head layer_types"},
	{"falcon_h1", "hidden_size num_hidden_layers num_attention_heads num_key_value_heads head_dim "
		      "intermediate_size vocab_size max_position_embeddings tie_word_embeddings "
		      "attention_bias mlp_bias mamba_conv_bias mamba_proj_bias projectors_bias "
		      "mamba_rms_norm mamba_n_heads mamba_n_groups mamba_d_state mamba_d_conv "
		      "mamba_expand mamba_chunk_size mamba_d_ssm mamba_d_head mamba_norm_before_gate "
		      "num_logits_to_keep mlp_multipliers ssm_multipliers ssm_in_multiplier "
		      "ssm_out_multiplier key_multiplier attention_in_multiplier "
		      "attention_out_multiplier lm_head_multiplier"},
	{"recurrent_gemma", "hidden_size num_hidden_layers num_attention_heads num_key_value_heads "
			    "head_dim intermediate_size vocab_size lru_width conv1d_width "
			    "attention_window_size block_types tie_word_embeddings "
			    "embeddings_scale_by_sqrt_dim partial_rotary_factor"},
	{"bamba", "hidden_size num_hidden_layers num_attention_heads num_key_value_heads "
		  "vocab_size max_position_embeddings intermediate_size tie_word_embeddings "
		  "attention_bias mamba_conv_bias mamba_proj_bias mamba_n_heads mamba_n_groups "
		  "mamba_d_state mamba_d_conv mamba_expand mamba_chunk_size mamba_d_head "
		  "attn_layer_indices num_logits_to_keep"},
	{"zamba2", "hidden_size num_hidden_layers num_attention_heads num_key_value_heads "
		   "intermediate_size vocab_size max_position_embeddings tie_word_embeddings "
		   "attention_hidden_size attention_head_dim n_mamba_heads mamba_ngroups "
		   "mamba_expand num_mem_blocks adapter_rank mamba_d_state mamba_d_conv chunk_size "
		   "add_bias_linear use_shared_attention_adapter layers_block_type hybrid_layer_ids "
		   "mamba_headdim use_conv_bias use_mem_rope use_long_context use_mem_eff_path "
		   "num_logits_to_keep"},
	{"nemotron_h", "hidden_size num_hidden_layers num_attention_heads num_key_value_heads "
		       "head_dim intermediate_size vocab_size max_position_embeddings "
		       "tie_word_embeddings attention_bias mlp_bias use_bias use_conv_bias "
		       "mamba_conv_bias mamba_proj_bias mamba_num_heads mamba_head_dim n_groups "
		       "mamba_n_groups ssm_state_size conv_kernel mamba_d_conv chunk_size "
		       "mamba_chunk_size expand mamba_expand n_routed_experts num_experts_per_tok "
		       "moe_intermediate_size moe_shared_expert_intermediate_size moe_latent_size "
		       "n_shared_experts layers_block_type layer_types hybrid_override_pattern "
		       "num_nextn_predict_layers mtp_layers_block_type mtp_hybrid_override_pattern "
		       "num_logits_to_keep rescale_prenorm_residual residual_in_fp32 attention_head_dim "
		       "sliding_window time_step_rank use_mamba_kernels mamba_hidden_act "
		       "mamba_ssm_cache_dtype moe_shared_expert_overlap"},
	{"internlm2", "hidden_size num_hidden_layers num_attention_heads num_key_value_heads "
		      "intermediate_size vocab_size max_position_embeddings tie_word_embeddings bias "
		      "attn_implementation"},
	{"chatglm", "hidden_size num_layers num_hidden_layers num_attention_heads kv_channels "
		    "ffn_hidden_size padded_vocab_size seq_length multi_query_attention "
		    "multi_query_group_num add_qkv_bias add_bias_linear rmsnorm post_layer_norm "
		    "pre_seq_len tie_word_embeddings vocab_size prefix_projection"},
	/* towers (speech.c, vlm.c) */
	{"whisper", "vocab_size num_mel_bins encoder_layers encoder_attention_heads decoder_layers "
		    "decoder_attention_heads decoder_ffn_dim encoder_ffn_dim d_model "
		    "max_source_positions max_target_positions tie_word_embeddings "
		    "num_hidden_layers classifier_proj_size use_weighted_layer_sum "
		    "median_filter_width"},
	{"wav2vec2", "hidden_size num_hidden_layers num_attention_heads intermediate_size "
		      "num_feat_extract_layers conv_dim conv_kernel conv_stride conv_bias "
		      "feat_extract_norm num_conv_pos_embeddings num_conv_pos_embedding_groups "
		      "do_stable_layer_norm vocab_size classifier_proj_size use_weighted_layer_sum "
		      "add_adapter output_hidden_size num_adapter_layers adapter_kernel_size "
		      "adapter_stride num_codevector_groups num_codevectors_per_group codevector_dim "
		      "proj_codevector_dim num_negatives tdnn_dim tdnn_kernel tdnn_dilation "
		      "xvector_output_dim feat_extract_activation feat_quantizer_dropout layerdrop "
		      "mask_time_min_masks mask_feature_min_masks mask_time_length mask_feature_length"},
	{"wavlm", "hidden_size num_hidden_layers num_attention_heads intermediate_size "
		      "num_feat_extract_layers conv_dim conv_kernel conv_stride conv_bias "
		      "feat_extract_norm num_conv_pos_embeddings num_conv_pos_embedding_groups "
		      "do_stable_layer_norm vocab_size classifier_proj_size use_weighted_layer_sum "
		      "add_adapter output_hidden_size num_adapter_layers adapter_kernel_size "
		      "adapter_stride num_codevector_groups num_codevectors_per_group codevector_dim "
		      "proj_codevector_dim num_negatives tdnn_dim tdnn_kernel tdnn_dilation "
		      "xvector_output_dim feat_extract_activation feat_quantizer_dropout layerdrop "
		      "mask_time_min_masks mask_feature_min_masks mask_time_length mask_feature_length" " num_buckets max_bucket_distance"},
	{"hubert", "hidden_size num_hidden_layers num_attention_heads intermediate_size "
		      "num_feat_extract_layers conv_dim conv_kernel conv_stride conv_bias "
		      "feat_extract_norm num_conv_pos_embeddings num_conv_pos_embedding_groups "
		      "do_stable_layer_norm vocab_size classifier_proj_size use_weighted_layer_sum "
		      "add_adapter output_hidden_size num_adapter_layers adapter_kernel_size "
		      "adapter_stride num_codevector_groups num_codevectors_per_group codevector_dim "
		      "proj_codevector_dim num_negatives tdnn_dim tdnn_kernel tdnn_dilation "
		      "xvector_output_dim feat_extract_activation feat_quantizer_dropout layerdrop "
		      "mask_time_min_masks mask_feature_min_masks mask_time_length mask_feature_length" " feat_proj_layer_norm conv_pos_batch_norm"},
	{"speecht5", "vocab_size hidden_size encoder_layers encoder_attention_heads encoder_ffn_dim "
		     "decoder_layers decoder_attention_heads decoder_ffn_dim num_mel_bins "
		     "speech_decoder_prenet_layers speech_decoder_prenet_units "
		     "speech_decoder_postnet_layers speech_decoder_postnet_units "
		     "speech_decoder_postnet_kernel speaker_embedding_dim reduction_factor "
		     "encoder_max_relative_position max_text_positions max_speech_positions "
		     "num_feat_extract_layers conv_dim conv_kernel conv_stride conv_bias "
		     "feat_extract_norm num_conv_pos_embeddings num_conv_pos_embedding_groups "
		     "use_guided_attention_loss guided_attention_loss_num_heads "
		     "guided_attention_loss_sigma guided_attention_loss_scale "
		     "speech_decoder_prenet_dropout speech_decoder_postnet_dropout "
		     "positional_dropout scale_embedding feat_extract_activation decoder_start_token_id "
		     "encoder_layerdrop decoder_layerdrop mask_time_min_masks mask_feature_min_masks "
		     "mask_time_length mask_feature_length"},
	{"dinov2", "hidden_size num_hidden_layers num_attention_heads mlp_ratio image_size "
		   "patch_size num_channels qkv_bias layerscale_value use_swiglu_ffn out_features "
		   "out_indices stage_names apply_layernorm reshape_hidden_states "
		   "num_register_tokens"},
	{"vit", "hidden_size num_hidden_layers num_attention_heads intermediate_size image_size "
		"patch_size num_channels qkv_bias num_labels encoder_stride"},
	{"qwen2_5_vl", "vision_config text_config rope_scaling max_window_layers sliding_window "
		       "use_sliding_window hidden_size num_hidden_layers num_attention_heads "
		       "num_key_value_heads intermediate_size vocab_size max_position_embeddings "
		       "tie_word_embeddings head_dim"},
	{"siglip_vision", "hidden_size intermediate_size num_hidden_layers num_attention_heads "
			  "image_size patch_size num_channels vision_use_head"},
	{"gemma3_mm", "text_config vision_config mm_tokens_per_image tie_word_embeddings"},
	{"llava_onevision", "text_config vision_config vision_feature_layer "
			    "multimodal_projector_bias image_grid_pinpoints "
			    "vision_aspect_ratio vision_feature_select_strategy tie_word_embeddings"},
	{"llama4_mm", "text_config vision_config tie_word_embeddings"},
	{"llama4.vision", "hidden_size num_hidden_layers num_attention_heads intermediate_size "
			  "image_size patch_size num_channels projector_input_dim projector_output_dim "
			  "vision_output_dim pixel_shuffle_ratio vision_feature_layer vision_feature_select_strategy "
			  "multi_modal_projector_bias"},
	{"internvl", "text_config vision_config downsample_ratio vision_feature_layer "
		     "vision_feature_select_strategy projector_hidden_act tie_word_embeddings"},
	{"internvl.vision", "hidden_size num_hidden_layers num_attention_heads intermediate_size "
			    "num_channels image_size patch_size attention_bias use_qk_norm "
			    "use_mask_token use_absolute_position_embeddings use_mean_pooling norm_type "
			    "layer_scale_init_value"},
	{"internvl.vision.norm", ""},
	{"siglip2", "text_config vision_config initializer_factor"},
	{"siglip2.vision", "hidden_size intermediate_size num_hidden_layers num_attention_heads "
			   "num_patches patch_size num_channels vision_use_head"},
	{"siglip2.text", "vocab_size hidden_size intermediate_size num_hidden_layers "
			 "num_attention_heads max_position_embeddings projection_size"},
	{"llava_next", "text_config vision_config vision_feature_layer multimodal_projector_bias "
		       "image_grid_pinpoints vision_feature_select_strategy tie_word_embeddings "
		       "projector_hidden_act image_seq_length use_image_newline_parameter"},
	{"clip_vision", "hidden_size intermediate_size num_hidden_layers num_attention_heads "
			"image_size patch_size num_channels projection_dim vocab_size"},
	{"qwen3_vl", "text_config vision_config tie_word_embeddings"},
	{"qwen3_vl.vision", "depth hidden_size intermediate_size num_heads in_channels patch_size "
			    "spatial_merge_size temporal_patch_size out_hidden_size "
			    "num_position_embeddings deepstack_visual_indexes"},
	{"qwen2_vl", "vision_config text_config rope_scaling max_window_layers sliding_window "
		     "use_sliding_window hidden_size num_hidden_layers num_attention_heads "
		     "num_key_value_heads intermediate_size vocab_size max_position_embeddings "
		     "tie_word_embeddings head_dim"},
	{"qwen2_vl.vision", "depth embed_dim hidden_size mlp_ratio num_heads in_chans in_channels "
			    "patch_size spatial_merge_size spatial_patch_size temporal_patch_size"},
	{"qwen2_5_vl.vision", "depth hidden_size intermediate_size num_heads in_chans in_channels "
			      "out_hidden_size patch_size spatial_merge_size spatial_patch_size "
			      "temporal_patch_size window_size fullatt_block_indexes "
			      "tokens_per_second"},
};

const char *vf__arch_ssm_keys(const char *family)
{
	for (size_t i = 0; i < sizeof ssm_keys / sizeof ssm_keys[0]; i++)
		if (strcmp(ssm_keys[i].family, family) == 0)
			return ssm_keys[i].keys;
	return NULL;
}

int64_t vf_arch_active_params(const struct vf_arch *a)
{
	struct vf_param_groups g;
	if (!vf_arch_param_groups(a, &g))
		return -1;
	if (a->experts <= 0 || a->experts_per_token <= 0 || a->experts_per_token >= a->experts)
		return g.total;
	int64_t H = a->hidden, F = a->moe_ffn > 0 ? a->moe_ffn : a->ffn;
	int64_t ml = a->moe_layers >= 0 && a->moe_layers <= a->layers ? a->moe_layers : a->layers;
	struct acc idle = {0, true};
	/* one routed expert: (gate,) up, down (+ biases), from hidden or a latent width */
	acc_mul(&idle, a->gated_mlp ? 3 : 2, a->moe_in > 0 ? a->moe_in : H, F);
	if (a->expert_bias)
		acc_add(&idle, (a->gated_mlp ? 2 : 1) * F + H);
	int64_t per = idle.v;
	idle = (struct acc){0, true};
	acc_mul(&idle, per, a->experts - a->experts_per_token, ml);
	return idle.ok ? g.total - idle.v : -1;
}

void vf__arch_ssm_json(cJSON *o, const struct vf_arch *a)
{
	if (a->experts > 0) {
		int64_t act = vf_arch_active_params(a);
		if (act >= 0)
			cJSON_AddNumberToObject(o, "active_params", (double)act);
	}
	if (a->ssm_layers <= 0)
		return;
	cJSON *s = cJSON_AddObjectToObject(o, "ssm");
	if (!s)
		return;
	cJSON_AddStringToObject(s, "kind", strcmp(a->family, "recurrent_gemma") == 0 ? "rg-lru"
					   : a->ssm_heads > 0			   ? "mamba2"
										   : "mamba");
	cJSON_AddNumberToObject(s, "layers", (double)a->ssm_layers);
	cJSON_AddNumberToObject(s, "attention_layers", (double)(a->attn_layers >= 0 ? a->attn_layers
										    : 0));
	cJSON_AddNumberToObject(s, "inner", (double)a->ssm_inner);
	cJSON_AddNumberToObject(s, "state", (double)a->ssm_state);
	cJSON_AddNumberToObject(s, "conv_kernel", (double)a->ssm_conv);
	cJSON_AddNumberToObject(s, "conv_channels", (double)a->ssm_conv_dim);
	if (a->ssm_heads > 0)
		cJSON_AddNumberToObject(s, "heads", (double)a->ssm_heads);
	/* the recurrent state one sequence holds in inference, elements:
	 * conv window and scan state per SSM layer */
	double per = (double)a->ssm_conv_dim * (double)a->ssm_conv +
		     (double)a->ssm_inner * (double)a->ssm_state;
	cJSON_AddNumberToObject(s, "state_elements_per_sequence", per * (double)a->ssm_layers);
}
