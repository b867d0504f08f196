/* arch.c - model architectures from Hugging Face config.json objects, and
 * exact parameter counts by group computed from them.
 *
 * Each family reads the keys its transformers configuration class reads,
 * with that class's defaults, and counts parameters the way its modeling
 * file builds modules (checked against published totals and the
 * calibration records in ../shared/groundtruth/). */
#include "vramfit/model/arch.h"

#include <stdio.h>
#include <string.h>

#include "vramfit/base/json.h"
#include "arch-internal.h"

void vf_arch_init(struct vf_arch *a)
{
	memset(a, 0, sizeof *a);
	a->hidden = -1;
	a->layers = -1;
	a->decoder_layers = 0;
	a->heads = -1;
	a->kv_heads = -1;
	a->head_dim = -1;
	a->ffn = -1;
	a->vocab = -1;
	a->experts = -1;
	a->experts_per_token = -1;
	a->max_positions = -1;
	a->rotary_pct = 1.0;
	a->norms_per_layer = 2;
	a->moe_layers = -1;
	a->norm_affine = -1;
	a->params_exact = -1;
	a->attn_layers = -1;
	a->active_params = -1;
}

/* The bound of an integer field, by what it counts: loops run over
 * layers and experts, so those get bounds far above any real model
 * (DeepSeek-V3: 61 layers, 256 experts) but small enough that the work
 * they drive stays in milliseconds; widths only keep products in range. */
int64_t vf__arch_bound(const char *key)
{
	if (strstr(key, "layer") && !strstr(key, "norm") && !strstr(key, "eps") &&
	    !strstr(key, "scale"))
		return VF_ARCH_MAX_LAYERS;
	if (strstr(key, "experts"))
		return VF_ARCH_MAX_EXPERTS;
	return VF_ARCH_MAX_DIM;
}

/* Read an integer field that, when present, must be a whole number from
 * min to the field's bound (vf__arch_bound). */
vf_status vf__arch_get_int(const cJSON *cfg, const char *key, int64_t min, int64_t *out,
			   bool *found, const char *what, struct vf_error *err)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(cfg, key);
	*found = false;
	if (!n || cJSON_IsNull(n))
		return VF_OK;
	int64_t v, max = vf__arch_bound(key);
	if (!vf_json_number_is_i64(n, &v) || v < min || v > max)
		return vf_error_set(err, VF_ERR,
				    "%s: field %s: expected an integer from %lld to %lld", what, key,
				    (long long)min, (long long)max);
	*out = v;
	*found = true;
	return VF_OK;
}

/* First of keys[] present; *out untouched when none. */
vf_status vf__arch_get_int_any(const cJSON *cfg, const char *const *keys, int64_t min,
			       int64_t *out, bool *found, const char *what, struct vf_error *err)
{
	*found = false;
	for (size_t i = 0; keys[i]; i++) {
		vf_status st = vf__arch_get_int(cfg, keys[i], min, out, found, what, err);
		if (st != VF_OK || *found)
			return st;
	}
	return VF_OK;
}

vf_status vf__arch_get_bool(const cJSON *cfg, const char *key, bool *out, const char *what,
			    struct vf_error *err)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(cfg, key);
	if (!n || cJSON_IsNull(n))
		return VF_OK;
	if (!cJSON_IsBool(n))
		return vf_error_set(err, VF_ERR, "%s: field %s: expected true or false", what, key);
	*out = cJSON_IsTrue(n);
	return VF_OK;
}

#define TRY VF_TRY
#define KEYS VF_KEYS
#define READ VF_READ
#define get_int vf__arch_get_int
#define get_int_any vf__arch_get_int_any
#define get_bool vf__arch_get_bool

/* architectures[0], or "". */
static const char *first_class(const cJSON *cfg)
{
	const cJSON *archs = cJSON_GetObjectItemCaseSensitive(cfg, "architectures");
	const cJSON *first = cJSON_IsArray(archs) ? cJSON_GetArrayItem(archs, 0) : NULL;
	return cJSON_IsString(first) ? first->valuestring : "";
}

/* T5, mT5 and UMT5 (a relative attention table in every self-attention
 * rather than the first block's). T5EncoderModel / MT5EncoderModel /
 * UMT5EncoderModel build the shared embedding and the encoder stack only:
 * no decoder, no lm_head. */
static vf_status read_t5(const cJSON *cfg, const char *family, const char *what,
			 struct vf_arch *a,
			 struct vf_error *err)
{
	bool f;
	const char *cls = first_class(cfg);
	size_t cl = strlen(cls);
	a->encoder_only = cl >= 12 && strcmp(cls + cl - 12, "EncoderModel") == 0;
	a->rel_bias_every_layer = strcmp(family, "umt5") == 0;
	if (a->encoder_only)
		snprintf(a->task, sizeof a->task, "%s", cls);
	READ(KEYS("d_model"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("num_layers"), 0, layers, VF_ARCH_F_LAYERS);
	READ(KEYS("num_heads"), 1, heads, VF_ARCH_F_HEADS);
	READ(KEYS("d_kv"), 1, head_dim, VF_ARCH_F_HEAD_DIM);
	READ(KEYS("d_ff"), 1, ffn, VF_ARCH_F_FFN);
	READ(KEYS("vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	READ(KEYS("n_positions"), 1, max_positions, VF_ARCH_F_MAX_POSITIONS);
	a->decoder_layers = a->layers;
	TRY(get_int(cfg, "num_decoder_layers", 0, &a->decoder_layers, &f, what, err));
	if (a->encoder_only)
		a->decoder_layers = 0;
	/* T5Config defaults: relative_attention_num_buckets 32, tied, relu. */
	a->rel_attn_buckets = 32;
	TRY(get_int(cfg, "relative_attention_num_buckets", 1, &a->rel_attn_buckets, &f, what,
		    err));
	if (a->known & VF_ARCH_F_HEADS) {
		a->kv_heads = a->heads;
		a->known |= VF_ARCH_F_KV_HEADS;
	}
	/* T5Config ties by default; MT5Config and UMT5Config do not */
	a->tied_embeddings = strcmp(family, "t5") == 0;
	TRY(get_bool(cfg, "tie_word_embeddings", &a->tied_embeddings, what, err));
	if (a->encoder_only)
		a->tied_embeddings = true; /* no lm_head: the shared table alone */
	a->known |= VF_ARCH_F_TIED;
	const char *ffp = vf_json_get_str(cfg, "feed_forward_proj");
	a->gated_mlp = ffp && strncmp(ffp, "gated-", 6) == 0;
	a->norms_per_layer = 2; /* encoder: 2; decoder: 3 (counted in param_groups) */
	return VF_OK;
}

static vf_status read_gpt2(const cJSON *cfg, const char *family, const char *what,
			 struct vf_arch *a,
			   struct vf_error *err)
{
	(void)family;
	READ(KEYS("n_embd", "hidden_size"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("n_layer", "num_hidden_layers"), 0, layers, VF_ARCH_F_LAYERS);
	READ(KEYS("n_head", "num_attention_heads"), 1, heads, VF_ARCH_F_HEADS);
	READ(KEYS("n_positions", "max_position_embeddings"), 1, max_positions,
	     VF_ARCH_F_MAX_POSITIONS);
	READ(KEYS("n_inner"), 1, ffn, VF_ARCH_F_FFN);
	READ(KEYS("vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	/* GPT2Config defaults: vocab 50257, n_positions 1024, n_inner 4*n_embd. */
	if (!(a->known & VF_ARCH_F_VOCAB)) {
		a->vocab = 50257;
		a->known |= VF_ARCH_F_VOCAB;
	}
	if (!(a->known & VF_ARCH_F_MAX_POSITIONS)) {
		a->max_positions = 1024;
		a->known |= VF_ARCH_F_MAX_POSITIONS;
	}
	if (!(a->known & VF_ARCH_F_FFN) && (a->known & VF_ARCH_F_HIDDEN)) {
		a->ffn = 4 * a->hidden; /* hidden <= 2^40 */
		a->known |= VF_ARCH_F_FFN;
	}
	/* GPT2LMHeadModel ties lm_head to wte unless the config says not */
	a->tied_embeddings = true;
	TRY(get_bool(cfg, "tie_word_embeddings", &a->tied_embeddings, what, err));
	a->known |= VF_ARCH_F_TIED;
	a->learned_positions = true;
	a->linear_bias = a->qkv_bias = a->o_bias = a->mlp_bias = true;
	a->layer_norm = true;
	a->gated_mlp = false;
	return VF_OK;
}

static vf_status read_falcon(const cJSON *cfg, const char *family, const char *what,
			 struct vf_arch *a,
			     struct vf_error *err)
{
	bool f;
	READ(KEYS("hidden_size", "n_embd"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("num_hidden_layers", "n_layer"), 0, layers, VF_ARCH_F_LAYERS);
	READ(KEYS("num_attention_heads", "n_head"), 1, heads, VF_ARCH_F_HEADS);
	READ(KEYS("ffn_hidden_size"), 1, ffn, VF_ARCH_F_FFN);
	READ(KEYS("vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	READ(KEYS("max_position_embeddings"), 1, max_positions, VF_ARCH_F_MAX_POSITIONS);
	READ(KEYS("head_dim"), 1, head_dim, VF_ARCH_F_HEAD_DIM);
	bool new_arch = false, multi_query = true, parallel = true, bias = false;
	/* The legacy RW configs of the 40B generation (model_type RefinedWeb)
	 * carry n_head_kv: their code is the new decoder architecture
	 * (grouped k/v, ln_attn + ln_mlp); the 7B generation's (RefinedWebModel)
	 * is multi-query with one norm. */
	(void)family;
	if (cJSON_GetObjectItemCaseSensitive(cfg, "n_head_kv") &&
	    !cJSON_GetObjectItemCaseSensitive(cfg, "new_decoder_architecture"))
		new_arch = true;
	TRY(get_bool(cfg, "new_decoder_architecture", &new_arch, what, err));
	TRY(get_bool(cfg, "multi_query", &multi_query, what, err));
	TRY(get_bool(cfg, "parallel_attn", &parallel, what, err));
	TRY(get_bool(cfg, "bias", &bias, what, err));
	if (a->known & VF_ARCH_F_HEADS) {
		if (new_arch) {
			int64_t kv = a->heads;
			TRY(get_int_any(cfg, KEYS("num_kv_heads", "n_head_kv"), 1, &kv, &f, what,
					err));
			a->kv_heads = kv;
		} else {
			a->kv_heads = multi_query ? 1 : a->heads;
		}
		a->known |= VF_ARCH_F_KV_HEADS;
	}
	if (!(a->known & VF_ARCH_F_FFN) && (a->known & VF_ARCH_F_HIDDEN)) {
		a->ffn = 4 * a->hidden; /* hidden <= 2^40 */
		a->known |= VF_ARCH_F_FFN;
	}
	if (!(a->known & VF_ARCH_F_VOCAB)) {
		a->vocab = 65024; /* FalconConfig default */
		a->known |= VF_ARCH_F_VOCAB;
	}
	if (!(a->known & VF_ARCH_F_MAX_POSITIONS)) {
		a->max_positions = 2048;
		a->known |= VF_ARCH_F_MAX_POSITIONS;
	}
	a->tied_embeddings = true;
	TRY(get_bool(cfg, "tie_word_embeddings", &a->tied_embeddings, what, err));
	a->known |= VF_ARCH_F_TIED;
	a->parallel_attn = new_arch || parallel;
	a->linear_bias = a->qkv_bias = a->o_bias = a->mlp_bias = bias;
	a->layer_norm = true;
	a->gated_mlp = false;
	if (new_arch) {
		int64_t nln = 2;
		TRY(get_int(cfg, "num_ln_in_parallel_attn", 1, &nln, &f, what, err));
		a->norms_per_layer = nln == 1 ? 1 : 2;
	} else {
		a->norms_per_layer = a->parallel_attn ? 1 : 2;
	}
	return VF_OK;
}

static vf_status read_neox(const cJSON *cfg, const char *family, const char *what,
			 struct vf_arch *a,
			   struct vf_error *err)
{
	(void)family;
	READ(KEYS("hidden_size"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("num_hidden_layers"), 0, layers, VF_ARCH_F_LAYERS);
	READ(KEYS("num_attention_heads"), 1, heads, VF_ARCH_F_HEADS);
	READ(KEYS("intermediate_size"), 1, ffn, VF_ARCH_F_FFN);
	READ(KEYS("vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	READ(KEYS("max_position_embeddings"), 1, max_positions, VF_ARCH_F_MAX_POSITIONS);
	if (a->known & VF_ARCH_F_HEADS) {
		a->kv_heads = a->heads;
		a->known |= VF_ARCH_F_KV_HEADS;
	}
	/* GPTNeoXConfig defaults: rotary_pct 0.25, parallel residual, untied,
	 * attention_bias true, intermediate 4*hidden (older configs). */
	a->rotary_pct = 0.25;
	vf_json_get_double(cfg, "rotary_pct", &a->rotary_pct);
	vf_json_get_double(cfg, "partial_rotary_factor", &a->rotary_pct);
	a->parallel_attn = true;
	TRY(get_bool(cfg, "use_parallel_residual", &a->parallel_attn, what, err));
	a->tied_embeddings = false;
	TRY(get_bool(cfg, "tie_word_embeddings", &a->tied_embeddings, what, err));
	a->known |= VF_ARCH_F_TIED;
	bool attn_bias = true;
	TRY(get_bool(cfg, "attention_bias", &attn_bias, what, err));
	a->qkv_bias = a->o_bias = attn_bias;
	a->mlp_bias = true;
	a->linear_bias = attn_bias;
	a->layer_norm = true;
	a->gated_mlp = false;
	if (!(a->known & VF_ARCH_F_FFN) && (a->known & VF_ARCH_F_HIDDEN)) {
		a->ffn = 4 * a->hidden; /* hidden <= 2^40 */
		a->known |= VF_ARCH_F_FFN;
	}
	return VF_OK;
}

/* The llama-like families: RMSNorm, gated MLP, rotary; what differs is
 * data (each config class's defaults and the modules its decoder layer
 * builds). */
static const struct llama_like {
	const char *name;
	int64_t head_dim;   /* default head_dim; 0: hidden / heads */
	int64_t vocab;      /* default vocab_size; 0: none */
	bool tied;          /* default tie_word_embeddings */
	bool qkv_bias;      /* default attention bias on q, k, v (o: attention_bias o_bias) */
	bool qkv_forced;    /* q/k/v biases whatever attention_bias says, o without (qwen2) */
	bool o_bias;        /* o_proj bias follows attention_bias */
	int norms;          /* norm modules per decoder layer */
	int norm_affine;    /* 1 weight (RMSNorm), 0 no parameters (olmo) */
	int qk_norm;        /* 0 none, 1 one head_dim weight each, 2 full width (heads*hd) */
	bool parallel;      /* attention and MLP read the same normed input (cohere) */
	bool moe;           /* num_local_experts / num_experts_per_tok (mixtral) */
	const char *cls;    /* the transformers config class (NULL: none known) */
	int64_t ffn;        /* its default intermediate_size (0: none) */
} llama_likes[] = {
	/* name         hd   vocab   tied   qkvb   forced ob     n  aff qk par    moe     class              ffn */
	{"llama",       0,   32000,  false, false, false, true,  2, 1, 0, false, false, "LlamaConfig",      11008},
	{"mistral",     0,   32000,  false, false, false, true,  2, 1, 0, false, false, "MistralConfig",    14336},
	{"mixtral",     0,   32000,  false, false, false, true,  2, 1, 0, false, true, "MixtralConfig",    14336},
	{"qwen2",       0,   151936, false, true,  true,  false, 2, 1, 0, false, false, "Qwen2Config",      22016},
	{"qwen3",       128, 151936, false, false, false, true,  2, 1, 1, false, false, "Qwen3Config",      22016},
	{"gemma",       256, 256000, true,  false, false, true,  2, 1, 0, false, false, "GemmaConfig",      24576},
	{"gemma2",      256, 256000, true,  false, false, true,  4, 1, 0, false, false, "Gemma2Config",     9216},
	{"gemma3",      256, 262208, true,  false, false, true,  4, 1, 1, false, false, "Gemma3TextConfig", 9216},
	{"gemma3_text", 256, 262208, true,  false, false, true,  4, 1, 1, false, false, "Gemma3TextConfig", 9216},
	{"phi3",        0,   32064,  false, false, false, true,  2, 1, 0, false, false, "Phi3Config",       8192},
	{"granite",     0,   32000,  false, false, false, true,  2, 1, 0, false, false, "GraniteConfig",    11008},
	{"olmo",        0,   50304,  false, false, false, true,  2, 0, 0, false, false, "OlmoConfig",       11008},
	{"olmo2",       0,   50304,  false, false, false, true,  2, 1, 2, false, false, "Olmo2Config",      11008},
	{"cohere",      0,   256000, true,  false, false, true,  1, 1, 0, true,  false, "CohereConfig",     22528},
	{"glm",         128, 151552, false, true,  false, false, 2, 1, 0, false, false, "GlmConfig",        13696},
	{"glm4",        128, 151552, false, true,  false, false, 4, 1, 0, false, false, "Glm4Config",       13696},
	{"",            0,   0,      false, false, false, true,  2, 1, 0, false, false, NULL,               0},
};

static const struct llama_like *llama_like_of(const char *family)
{
	size_t n = sizeof llama_likes / sizeof llama_likes[0];
	for (size_t i = 0; i + 1 < n; i++)
		if (strcmp(llama_likes[i].name, family) == 0)
			return &llama_likes[i];
	return &llama_likes[n - 1];
}

/* The keys every llama-like config names its sizes with. */
static vf_status read_common_sizes(const cJSON *cfg, const char *what, struct vf_arch *a,
				   struct vf_error *err)
{
	bool f;
	READ(KEYS("hidden_size", "d_model", "n_embd", "dim"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("num_hidden_layers", "n_layer", "num_layers", "n_layers"), 0, layers,
	     VF_ARCH_F_LAYERS);
	READ(KEYS("num_attention_heads", "n_head", "num_heads", "n_heads"), 1, heads,
	     VF_ARCH_F_HEADS);
	READ(KEYS("num_key_value_heads", "n_kv_heads", "num_kv_heads"), 1, kv_heads,
	     VF_ARCH_F_KV_HEADS);
	READ(KEYS("head_dim"), 1, head_dim, VF_ARCH_F_HEAD_DIM);
	READ(KEYS("intermediate_size", "ffn_hidden_size", "n_inner", "hidden_dim"), 1, ffn,
	     VF_ARCH_F_FFN);
	READ(KEYS("vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	READ(KEYS("max_position_embeddings", "n_positions", "max_seq_len"), 1, max_positions,
	     VF_ARCH_F_MAX_POSITIONS);
	/* diffusers transformers (DiTs): heads x attention_head_dim */
	int64_t ahd = 0;
	TRY(get_int(cfg, "attention_head_dim", 1, &ahd, &f, what, err));
	if (f && !(a->known & VF_ARCH_F_HEAD_DIM)) {
		a->head_dim = ahd;
		a->known |= VF_ARCH_F_HEAD_DIM;
	}
	if (f && !(a->known & VF_ARCH_F_HIDDEN) && (a->known & VF_ARCH_F_HEADS) &&
	    !__builtin_mul_overflow(a->heads, ahd, &a->hidden))
		a->known |= VF_ARCH_F_HIDDEN;
	if ((a->known & VF_ARCH_F_HEADS) && !(a->known & VF_ARCH_F_KV_HEADS)) {
		a->kv_heads = a->heads;
		a->known |= VF_ARCH_F_KV_HEADS;
	}
	return VF_OK;
}

vf_status vf__arch_read_sliding(const cJSON *cfg, const char *what, struct vf_arch *a,
				struct vf_error *err)
{
	bool f, use = true;
	TRY(get_bool(cfg, "use_sliding_window", &use, what, err));
	TRY(get_int(cfg, "sliding_window", 0, &a->sliding_window, &f, what, err));
	if (!f || !use) {
		a->sliding_window = 0;
		return VF_OK;
	}
	const cJSON *types = cJSON_GetObjectItemCaseSensitive(cfg, "layer_types");
	const cJSON *t;
	a->sliding_layers = 0;
	if (cJSON_IsArray(types)) {
		cJSON_ArrayForEach(t, types)
		if (cJSON_IsString(t) && strcmp(t->valuestring, "sliding_attention") == 0)
			a->sliding_layers++;
	} else if (a->known & VF_ARCH_F_LAYERS) {
		a->sliding_layers = a->layers;
	}
	return VF_OK;
}

vf_status vf__arch_read_llama_like(const cJSON *cfg, const char *family, const char *what,
				   struct vf_arch *a, struct vf_error *err)
{
	const struct llama_like *ll = llama_like_of(family);
	bool f;
	TRY(read_common_sizes(cfg, what, a, err));
	if (!(a->known & VF_ARCH_F_FFN) && ll->ffn > 0) {
		/* No intermediate_size: transformers builds the class default
		 * whatever the hidden size, which a real checkpoint of this
		 * width seldom has; used, named and the count approximate. */
		char note[96];
		snprintf(note, sizeof note, "intermediate_size (absent: %s's default %lld assumed)",
			 ll->cls, (long long)ll->ffn);
		a->ffn = ll->ffn;
		a->known |= VF_ARCH_F_FFN;
		vf_arch_not_understood(a, note);
	}
	if (!(a->known & VF_ARCH_F_HEAD_DIM)) {
		if (ll->head_dim)
			a->head_dim = ll->head_dim;
		else if ((a->known & VF_ARCH_F_HIDDEN) && (a->known & VF_ARCH_F_HEADS))
			a->head_dim = a->hidden / a->heads;
		if (a->head_dim > 0)
			a->known |= VF_ARCH_F_HEAD_DIM;
	}
	if (ll->vocab)
		VF_DEFAULT(vocab, VF_ARCH_F_VOCAB, ll->vocab);
	a->gated_mlp = true;
	a->tied_embeddings = ll->tied;
	TRY(get_bool(cfg, "tie_word_embeddings", &a->tied_embeddings, what, err));
	a->known |= VF_ARCH_F_TIED;

	bool attn_bias = ll->qkv_bias;
	TRY(get_bool(cfg, "attention_bias", &attn_bias, what, err));
	a->qkv_bias = ll->qkv_forced || attn_bias;
	a->o_bias = ll->o_bias && attn_bias;
	TRY(get_bool(cfg, "mlp_bias", &a->mlp_bias, what, err));
	a->linear_bias = a->qkv_bias && a->o_bias && a->mlp_bias;
	a->norms_per_layer = ll->norms;
	a->norm_affine = ll->norm_affine;
	a->parallel_attn = ll->parallel;
	a->qk_norm = ll->qk_norm != 0;
	a->qk_norm_full = ll->qk_norm == 2;
	if (strcmp(family, "cohere") == 0) {
		TRY(get_bool(cfg, "use_qk_norm", &a->qk_norm, what, err));
		a->qk_norm_full = a->qk_norm;
	}
	vf_json_get_double(cfg, "partial_rotary_factor", &a->rotary_pct);
	TRY(vf__arch_read_sliding(cfg, what, a, err));

	a->experts = 0;
	a->experts_per_token = 0;
	if (ll->moe) {
		a->experts = 8;
		a->experts_per_token = 2;
		TRY(get_int(cfg, "num_local_experts", 1, &a->experts, &f, what, err));
		TRY(get_int(cfg, "num_experts_per_tok", 1, &a->experts_per_token, &f, what, err));
	} else if (!ll->name[0]) {
		/* an unknown family: MoE keys when present (named approximate by
		 * the key check) */
		TRY(get_int_any(cfg, KEYS("num_local_experts", "num_experts"), 0, &a->experts, &f,
				what, err));
		TRY(get_int(cfg, "num_experts_per_tok", 0, &a->experts_per_token, &f, what, err));
	}
	a->known |= VF_ARCH_F_EXPERTS | VF_ARCH_F_EXPERTS_PER_TOKEN;
	return VF_OK;
}

static vf_status read_llama_like(const cJSON *cfg, const char *family, const char *what,
				 struct vf_arch *a, struct vf_error *err)
{
	return vf__arch_read_llama_like(cfg, family, what, a, err);
}

/* Every family with a reader: model_type -> reader and reported family. */
static const struct {
	const char *model_type;
	const char *family; /* as reported (NULL: model_type) */
	vf__arch_reader read;
} families[] = {
	{"t5", NULL, read_t5},
	{"mt5", "t5", read_t5},
	{"umt5", "t5", read_t5},
	{"gpt2", NULL, read_gpt2},
	{"gpt_neox", NULL, read_neox},
	{"falcon", NULL, read_falcon},
	{"RefinedWeb", "falcon", read_falcon},
	{"RefinedWebModel", "falcon", read_falcon},
	{"llama", NULL, read_llama_like},
	{"mistral", NULL, read_llama_like},
	{"mixtral", NULL, read_llama_like},
	{"qwen2", NULL, read_llama_like},
	{"qwen3", NULL, read_llama_like},
	{"gemma", NULL, read_llama_like},
	{"gemma2", NULL, read_llama_like},
	{"gemma3", NULL, read_llama_like},
	{"gemma3_text", "gemma3", read_llama_like},
	{"phi3", NULL, read_llama_like},
	{"granite", NULL, read_llama_like},
	{"olmo", NULL, read_llama_like},
	{"olmo2", NULL, read_llama_like},
	{"cohere", NULL, read_llama_like},
	{"glm", NULL, read_llama_like},
	{"glm4", NULL, read_llama_like},
	{"qwen2_moe", NULL, vf__arch_read_qwen_moe},
	{"qwen3_moe", NULL, vf__arch_read_qwen_moe},
	{"deepseek_v2", NULL, vf__arch_read_deepseek},
	{"deepseek_v3", NULL, vf__arch_read_deepseek},
	{"gpt_oss", NULL, vf__arch_read_gpt_oss},
	{"llama4", "llama4", vf__arch_read_llama4},
	{"llama4_text", "llama4", vf__arch_read_llama4},
	{"granitemoe", NULL, vf__arch_read_granitemoe},
	{"granitemoeshared", NULL, vf__arch_read_granitemoe},
	{"phi", NULL, vf__arch_read_phi},
	{"phi-msft", "phi", vf__arch_read_phi},
	{"mixformer-sequential", "phi", vf__arch_read_phi},
	{"stablelm", NULL, vf__arch_read_stablelm},
	{"stablelm_epoch", "stablelm", vf__arch_read_stablelm},
	{"bloom", NULL, vf__arch_read_bloom},
	{"bert", NULL, vf__arch_read_bert},
	{"roberta", NULL, vf__arch_read_bert},
	{"xlm-roberta", NULL, vf__arch_read_bert},
	{"deberta-v2", NULL, vf__arch_read_bert},
	/* state-space, hybrid and other families counted by their own layout (ssm.c) */
	{"mamba", NULL, vf__arch_read_mamba},
	{"mamba2", NULL, vf__arch_read_mamba},
	{"jamba", NULL, vf__arch_read_jamba},
	{"granitemoehybrid", NULL, vf__arch_read_granite_hybrid},
	{"bamba", NULL, vf__arch_read_granite_hybrid},
	{"falcon_h1", NULL, vf__arch_read_falcon_h1},
	{"recurrent_gemma", NULL, vf__arch_read_recurrent_gemma},
	{"zamba2", NULL, vf__arch_read_zamba2},
	{"nemotron_h", NULL, vf__arch_read_nemotron_h},
	{"chatglm", NULL, vf__arch_read_chatglm},
	{"internlm2", NULL, vf__arch_read_internlm2},
};

static int family_index(const char *model_type)
{
	for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
		if (strcmp(families[i].model_type, model_type) == 0)
			return (int)i;
	return -1;
}

/* architectures[0] class-name prefixes, for configs without model_type. */
static const struct {
	const char *prefix;
	const char *family;
} arch_classes[] = {
	{"Llama4", "llama4"},     {"Llama", "llama"},       {"Mistral", "mistral"},
	{"Mixtral", "mixtral"},   {"Qwen2Moe", "qwen2_moe"}, {"Qwen3Moe", "qwen3_moe"},
	{"Qwen2", "qwen2"},       {"Qwen3", "qwen3"},       {"Gemma3", "gemma3"},
	{"Gemma2", "gemma2"},     {"Gemma", "gemma"},       {"Phi3", "phi3"},
	{"PhiForCausal", "phi"},  {"MixFormer", "mixformer-sequential"},
	{"GPT2", "gpt2"},         {"GPTNeoX", "gpt_neox"},  {"T5", "t5"},
	{"Falcon", "falcon"},     {"RWFor", "RefinedWeb"},  {"Bloom", "bloom"},
	{"DeepseekV3", "deepseek_v3"}, {"DeepseekV2", "deepseek_v2"},
	{"GptOss", "gpt_oss"},    {"StableLm", "stablelm"},  {"StableLMEpoch", "stablelm_epoch"},
	{"Bert", "bert"},         {"Roberta", "roberta"},   {"DebertaV2", "deberta-v2"},
};

static const char *family_from_classes(const cJSON *cfg)
{
	const cJSON *archs = cJSON_GetObjectItemCaseSensitive(cfg, "architectures");
	const cJSON *first = cJSON_IsArray(archs) ? cJSON_GetArrayItem(archs, 0) : NULL;
	if (!cJSON_IsString(first))
		return NULL;
	for (size_t i = 0; i < sizeof arch_classes / sizeof arch_classes[0]; i++)
		if (strncmp(first->valuestring, arch_classes[i].prefix,
			    strlen(arch_classes[i].prefix)) == 0)
			return arch_classes[i].family;
	return NULL;
}

/* The model_type, and the object holding the language model's sizes: a
 * multimodal wrapper (gemma3, llama4) nests it in text_config. */
static const char *model_type_of(const cJSON *cfg, const cJSON **src)
{
	const char *mt = vf_json_get_str(cfg, "model_type");
	if (!mt)
		mt = family_from_classes(cfg);
	if (!mt) /* diffusers configs name their class */
		mt = vf_json_get_str(cfg, "_class_name");
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(cfg, "text_config");
	*src = cfg;
	if (cJSON_IsObject(text) && !cJSON_GetObjectItemCaseSensitive(cfg, "hidden_size")) {
		*src = text;
		const char *tmt = vf_json_get_str(text, "model_type");
		if (tmt && family_index(tmt) >= 0)
			mt = tmt;
		else if (!mt)
			mt = tmt;
	}
	if (!mt) {
		/* No model_type: recognise the key sets of the families. */
		if (cJSON_GetObjectItemCaseSensitive(cfg, "n_embd"))
			mt = "gpt2";
		else if (cJSON_GetObjectItemCaseSensitive(cfg, "d_model") &&
			 cJSON_GetObjectItemCaseSensitive(cfg, "d_kv"))
			mt = "t5";
		else if (cJSON_GetObjectItemCaseSensitive(cfg, "rotary_pct"))
			mt = "gpt_neox";
	}
	return mt;
}

/* A decoder's bare backbone (LlamaModel, Qwen2Model, GemmaModel, ...: a
 * text encoder of a diffusion pipeline) builds no lm_head: counted as if
 * tied. The class is kept in a->task. */
static void backbone_only(const cJSON *cfg, struct vf_arch *a)
{
	const char *cls = first_class(cfg);
	size_t n = strlen(cls);
	if (a->encoder || strcmp(a->family, "t5") == 0 || n < 6 || strcmp(cls + n - 5, "Model") != 0 ||
	    strstr(cls, "For") || strstr(cls, "LMHead") || strstr(cls, "Encoder"))
		return;
	a->tied_embeddings = true;
	snprintf(a->task, sizeof a->task, "%s", cls);
}

/* What every family leaves to the common rules, and the checks. */
static vf_status settle(struct vf_arch *a, const char *what, struct vf_error *err)
{
	if ((a->known & VF_ARCH_F_HEADS) && !(a->known & VF_ARCH_F_KV_HEADS)) {
		a->kv_heads = a->heads;
		a->known |= VF_ARCH_F_KV_HEADS;
	}
	if ((a->known & VF_ARCH_F_HEADS) && (a->known & VF_ARCH_F_HIDDEN) &&
	    !(a->known & VF_ARCH_F_HEAD_DIM)) {
		a->head_dim = a->hidden / a->heads;
		a->known |= VF_ARCH_F_HEAD_DIM;
	}
	if (a->experts > 0 && a->moe_ffn <= 0 && (a->known & VF_ARCH_F_FFN))
		a->moe_ffn = a->ffn;
	if (a->experts > 0 && a->moe_layers < 0 && (a->known & VF_ARCH_F_LAYERS))
		a->moe_layers = a->layers;
	if (!(a->known & VF_ARCH_F_HIDDEN))
		return vf_error_set(err, VF_ENOTFOUND,
				    "%s: no hidden size (expected hidden_size, d_model or n_embd)",
				    what);
	if (!(a->known & VF_ARCH_F_LAYERS))
		return vf_error_set(err, VF_ENOTFOUND,
				    "%s: no layer count (expected num_hidden_layers, num_layers or "
				    "n_layer)",
				    what);
	if ((a->known & VF_ARCH_F_HEADS) && (a->known & VF_ARCH_F_KV_HEADS) &&
	    a->heads % a->kv_heads != 0)
		return vf_error_set(err, VF_ERR,
				    "%s: %lld attention heads are not a multiple of %lld key/value "
				    "heads",
				    what, (long long)a->heads, (long long)a->kv_heads);
	return VF_OK;
}

vf_status vf_arch_from_config(const cJSON *cfg, const char *what, struct vf_arch *a,
			      struct vf_error *err)
{
	vf_arch_init(a);
	snprintf(a->source, sizeof a->source, "config.json");
	if (!cJSON_IsObject(cfg))
		return vf_error_set(err, VF_ERR, "%s: expected a JSON object (a model config)", what);
	const cJSON *src = cfg;
	const char *mt = model_type_of(cfg, &src);
	int fi = mt ? family_index(mt) : -1;
	const char *family = fi >= 0 ? (families[fi].family ? families[fi].family : mt) : "";
	if (mt) {
		snprintf(a->family, sizeof a->family, "%s", fi >= 0 ? family : mt);
		a->known |= VF_ARCH_F_FAMILY;
	}
	vf_status st = fi >= 0 ? families[fi].read(src, mt, what, a, err)
			       : read_llama_like(src, "", what, a, err);
	if (st != VF_OK)
		return st;
	st = settle(a, what, err);
	if (st != VF_OK)
		return st;
	backbone_only(cfg, a);
	if (fi < 0) {
		char note[96];
		snprintf(note, sizeof note, "model_type %s", mt ? mt : "(none)");
		vf_arch_not_understood(a, note);
	}
	const char *table = fi >= 0 ? families[fi].model_type : "";
	if (src != cfg) {
		vf_arch_check_keys(cfg, table, "", a);
		vf_arch_check_keys(src, table, "text_config.", a);
	} else {
		vf_arch_check_keys(cfg, table, "", a);
	}
	return VF_OK;
}

/* Overflow-checked arithmetic on counts: a config with absurd sizes gives
 * false rather than undefined behaviour. */
static bool mul(int64_t *acc, int64_t x)
{
	return !__builtin_mul_overflow(*acc, x, acc);
}

static bool add(int64_t *acc, int64_t x)
{
	return !__builtin_add_overflow(*acc, x, acc);
}

/* *out = the product of the arguments, false on overflow (then *out holds
 * the product up to the factor that overflowed). Fixed arities: the
 * parameter count runs on every estimate, and a variadic loop cost it a
 * third of its time. */
static bool prod2(int64_t *out, int64_t x, int64_t y)
{
	int64_t p = 1;
	bool ok = mul(&p, x) && mul(&p, y);
	*out = p;
	return ok;
}

static bool prod3(int64_t *out, int64_t x, int64_t y, int64_t z)
{
	int64_t p = 1;
	bool ok = mul(&p, x) && mul(&p, y) && mul(&p, z);
	*out = p;
	return ok;
}

#define NEED(bits) (((a->known & (bits)) == (bits)))
#define P(out, n, ...)                                   \
	do {                                             \
		if (!prod##n(&(out), __VA_ARGS__))       \
			return false;                    \
	} while (0)
#define ADD(acc, x)                                      \
	do {                                             \
		if (!add(&(acc), (x)))                   \
			return false;                    \
	} while (0)

static bool groups_t5(const struct vf_arch *a, struct vf_param_groups *g)
{
	int64_t H = a->hidden, F = a->ffn, V = a->vocab, N = a->heads;
	int64_t inner, t;
	P(inner, 2, N, a->head_dim);
	int64_t le = a->layers, ld = a->decoder_layers > 0 ? a->decoder_layers : 0;
	/* shared embedding; an untied lm_head */
	P(g->embedding, 2, V, H);
	if (!a->tied_embeddings)
		ADD(g->embedding, g->embedding);
	/* encoder self-attention: q k v o (no biases) */
	int64_t attn1;
	P(attn1, 3, (int64_t)4, H, inner);
	P(t, 2, attn1, le);
	ADD(g->attention, t);
	/* decoder: self-attention + cross-attention */
	P(t, 3, attn1, (int64_t)2, ld);
	ADD(g->attention, t);
	/* relative attention bias: first block of encoder and of decoder
	 * (umt5: every encoder and decoder self-attention) */
	int64_t rel;
	P(rel, 2, a->rel_attn_buckets, N);
	if (a->rel_bias_every_layer) {
		P(t, 2, rel, le + ld - (le > 0) - (ld > 0));
		ADD(g->attention, t);
	}
	if (le > 0)
		ADD(g->attention, rel);
	if (ld > 0)
		ADD(g->attention, rel);
	/* MLP: wi (wi_0, wi_1 when gated) and wo */
	int64_t mlp1;
	P(mlp1, 3, (int64_t)(a->gated_mlp ? 3 : 2), H, F);
	P(t, 3, mlp1, (int64_t)1, le);
	ADD(g->mlp, t);
	P(t, 2, mlp1, ld);
	ADD(g->mlp, t);
	/* T5LayerNorm (weight only): 2 per encoder block, 3 per decoder block,
	 * and a final norm in each stack */
	P(t, 3, (int64_t)2, le, H);
	ADD(g->norm, t);
	P(t, 3, (int64_t)3, ld, H);
	ADD(g->norm, t);
	P(t, 2, (int64_t)((le > 0) + (ld > 0)), H);
	ADD(g->norm, t);
	return true;
}

/* Parameters of one attention block: standard (q, k, v, o with biases,
 * gpt-oss sinks) or multi-head latent attention. Norms inside the block
 * (MLA's q_a / kv_a norms) go to *norms. */
static bool attn_params(const struct vf_arch *a, int64_t *out, int64_t *norms)
{
	int64_t H = a->hidden, N = a->heads, q, kv, t, per;
	*norms = 0;
	if (a->kv_lora_rank > 0) {
		int64_t qk = a->qk_nope_dim + a->qk_rope_dim, qr = a->q_lora_rank;
		int64_t kvl = a->kv_lora_rank;
		if (qr > 0) { /* q_a_proj, q_a_layernorm, q_b_proj */
			P(per, 2, H, qr);
			P(t, 3, qr, N, qk);
			ADD(per, t);
			*norms = qr;
			if (a->o_bias)
				ADD(per, qr);
		} else { /* q_proj */
			P(per, 3, H, N, qk);
		}
		P(t, 2, H, kvl + a->qk_rope_dim); /* kv_a_proj_with_mqa */
		ADD(per, t);
		if (a->o_bias)
			ADD(per, kvl + a->qk_rope_dim);
		ADD(*norms, kvl); /* kv_a_layernorm */
		P(t, 3, kvl, N, a->qk_nope_dim + a->v_head_dim); /* kv_b_proj */
		ADD(per, t);
		P(t, 3, N, a->v_head_dim, H); /* o_proj */
		ADD(per, t);
		if (a->o_bias)
			ADD(per, H);
		*out = per;
		return true;
	}
	P(q, 2, N, a->head_dim);
	P(kv, 2, a->kv_heads, a->head_dim);
	P(per, 2, H, q);            /* q_proj */
	P(t, 3, (int64_t)2, H, kv); /* k_proj, v_proj */
	ADD(per, t);
	P(t, 2, q, H); /* o_proj */
	ADD(per, t);
	if (a->qkv_bias) {
		ADD(per, q);
		ADD(per, kv);
		ADD(per, kv);
	}
	if (a->o_bias)
		ADD(per, H);
	if (a->attn_sinks)
		ADD(per, N);
	*out = per;
	return true;
}

/* One MLP of width F: (gate,) up, down (+ biases). */
static bool mlp_params(const struct vf_arch *a, int64_t F, bool bias, int64_t *out)
{
	int64_t m;
	P(m, 3, (int64_t)(a->gated_mlp ? 3 : 2), a->hidden, F);
	if (bias) {
		ADD(m, F);
		if (a->gated_mlp)
			ADD(m, F);
		ADD(m, a->hidden);
	}
	*out = m;
	return true;
}

/* Dense MLPs into g->mlp; routed experts and routers into g->experts;
 * shared experts (always on) into g->mlp. */
static bool ffn_groups(const struct vf_arch *a, struct vf_param_groups *g)
{
	int64_t L = a->layers, dense_l = L, t, m;
	if (a->experts > 0) {
		int64_t ml = a->moe_layers >= 0 && a->moe_layers <= L ? a->moe_layers : L;
		int64_t ef = a->moe_ffn > 0 ? a->moe_ffn : a->ffn;
		dense_l = L - ml;
		if (!mlp_params(a, ef, a->expert_bias, &m))
			return false;
		int64_t per;
		P(per, 2, m, a->experts);
		P(t, 2, a->hidden, a->experts); /* router */
		ADD(per, t);
		if (a->router_bias)
			ADD(per, a->experts);
		P(t, 2, per, ml);
		ADD(g->experts, t);
		if (a->shared_ffn > 0) {
			if (!mlp_params(a, a->shared_ffn, false, &m))
				return false;
			if (a->shared_expert_gate)
				ADD(m, a->hidden);
			P(t, 2, m, ml);
			ADD(g->mlp, t);
		}
	}
	if (!mlp_params(a, a->ffn, a->mlp_bias, &m))
		return false;
	P(t, 2, m, dense_l);
	ADD(g->mlp, t);
	return true;
}

/* Norm weights: per layer, per-head q/k norms, the embedding and final
 * norms. */
static bool norm_groups(const struct vf_arch *a, int64_t attn_norms, struct vf_param_groups *g)
{
	int64_t H = a->hidden, L = a->layers, w, t;
	int64_t aff = a->norm_affine >= 0 ? a->norm_affine : (a->layer_norm ? 2 : 1);
	P(w, 2, aff, H);
	P(t, 3, (int64_t)a->norms_per_layer, w, L);
	ADD(g->norm, t);
	if (a->qk_norm && a->qk_norm_full) {
		P(t, 3, a->heads + a->kv_heads, a->head_dim, L);
		ADD(g->norm, t);
	} else if (a->qk_norm) {
		P(t, 3, (int64_t)2 * (a->layer_norm ? 2 : 1), a->head_dim, L);
		ADD(g->norm, t);
	}
	P(t, 2, attn_norms, L);
	ADD(g->norm, t);
	if (a->emb_norm)
		ADD(g->norm, 2 * H);
	ADD(g->norm, w); /* final norm */
	return true;
}

/* Encoders (bert, roberta, deberta-v2): the base model. Embeddings (word,
 * absolute positions, token types, LayerNorm; deberta's relative position
 * table and its LayerNorm), per layer q/k/v/o with biases, the attention
 * output LayerNorm, intermediate and output dense with biases and the
 * output LayerNorm; bert and roberta add the pooler (dense H -> H). */
static bool groups_encoder(const struct vf_arch *a, struct vf_param_groups *g)
{
	int64_t H = a->hidden, L = a->layers, F = a->ffn, t, per;
	P(g->embedding, 2, a->vocab, H);
	if (a->learned_positions) {
		P(t, 2, a->max_positions, H);
		ADD(g->embedding, t);
	}
	P(t, 2, a->type_vocab, H);
	ADD(g->embedding, t);
	P(t, 2, a->rel_positions, H);
	ADD(g->other, t);
	if (H > ((int64_t)1 << 31)) /* H*H + H must fit 64 bits */
		return false;
	P(per, 2, (int64_t)4, H * H + H);
	P(t, 2, per, L);
	ADD(g->attention, t);
	int64_t m;
	if (!mlp_params(a, F, true, &m))
		return false;
	P(t, 2, m, L);
	ADD(g->mlp, t);
	P(t, 3, (int64_t)4, H, L); /* two LayerNorms per layer */
	ADD(g->norm, t);
	ADD(g->norm, 2 * H); /* embedding LayerNorm */
	if (a->rel_positions > 0 && a->emb_norm)
		ADD(g->norm, 2 * H); /* deberta: LayerNorm of the relative table */
	if (a->linear_bias) { /* the pooler */
		ADD(g->other, H * H);
		ADD(g->other, H);
	}
	ADD(g->other, a->head_params); /* a task head */
	return true;
}

bool vf_arch_param_groups(const struct vf_arch *a, struct vf_param_groups *g)
{
	memset(g, 0, sizeof *g);
	if (a->layout_counted) { /* the family's own layout (ssm.c) */
		int64_t *parts[6] = {&g->embedding, &g->attention, &g->mlp, &g->norm, &g->experts,
				     &g->other};
		for (int i = 0; i < 6; i++) {
			*parts[i] = a->layout[i];
			ADD(g->total, a->layout[i]);
		}
		return true;
	}
	if (!NEED(VF_ARCH_F_HIDDEN | VF_ARCH_F_LAYERS | VF_ARCH_F_HEADS | VF_ARCH_F_KV_HEADS |
		  VF_ARCH_F_HEAD_DIM | VF_ARCH_F_FFN | VF_ARCH_F_VOCAB | VF_ARCH_F_TIED))
		return false;
	if (a->hidden <= 0 || a->heads <= 0 || a->kv_heads <= 0 || a->head_dim <= 0 ||
	    a->ffn < 0 || a->vocab < 0 || a->layers < 0)
		return false;
	if (strcmp(a->family, "t5") == 0) {
		if (!groups_t5(a, g))
			return false;
	} else if (a->encoder) {
		if (!groups_encoder(a, g))
			return false;
	} else {
		int64_t H = a->hidden, t, per, attn_norms;
		/* embedding: token table, a learned position table, an untied
		 * lm_head (with its bias: phi) */
		P(g->embedding, 2, a->vocab, H);
		if (!a->tied_embeddings)
			ADD(g->embedding, g->embedding);
		if (a->lm_head_bias)
			ADD(g->embedding, a->vocab);
		if (a->learned_positions) {
			if (a->max_positions < 0)
				return false;
			P(t, 2, a->max_positions, H);
			ADD(g->embedding, t);
		}
		if (!attn_params(a, &per, &attn_norms))
			return false;
		P(t, 2, per, a->layers);
		ADD(g->attention, t);
		if (!ffn_groups(a, g) || !norm_groups(a, attn_norms, g))
			return false;
	}
	g->total = 0;
	ADD(g->total, g->embedding);
	ADD(g->total, g->attention);
	ADD(g->total, g->mlp);
	ADD(g->total, g->norm);
	ADD(g->total, g->experts);
	ADD(g->total, g->other);
	return true;
}

int64_t vf_arch_mtp_params(const struct vf_arch *a)
{
	if (a->mtp_layers <= 0)
		return 0;
	struct vf_arch one = *a;
	struct vf_param_groups g;
	one.layers = 1;
	one.moe_layers = a->experts > 0 ? 1 : 0;
	one.tied_embeddings = false; /* its own embedding and shared head */
	if (!vf_arch_param_groups(&one, &g))
		return 0;
	int64_t per = g.total, H = a->hidden, t;
	/* + enorm, hnorm, eh_proj (2H -> H); the final norm counted above is
	 * the shared head's norm */
	if (!add(&per, 2 * H) || !prod3(&t, (int64_t)2, H, H) || !add(&per, t) ||
	    !mul(&per, a->mtp_layers))
		return 0;
	return per;
}

static const struct {
	unsigned bit;
	const char *name;
} field_names[] = {
	{VF_ARCH_F_FAMILY, "family"},
	{VF_ARCH_F_HIDDEN, "hidden"},
	{VF_ARCH_F_LAYERS, "layers"},
	{VF_ARCH_F_HEADS, "heads"},
	{VF_ARCH_F_KV_HEADS, "kv_heads"},
	{VF_ARCH_F_HEAD_DIM, "head_dim"},
	{VF_ARCH_F_FFN, "ffn"},
	{VF_ARCH_F_VOCAB, "vocab"},
	{VF_ARCH_F_TIED, "tied_embeddings"},
	{VF_ARCH_F_EXPERTS, "experts"},
	{VF_ARCH_F_EXPERTS_PER_TOKEN, "experts_per_token"},
	{VF_ARCH_F_MAX_POSITIONS, "max_positions"},
};

int64_t vf_arch_position_limit(const struct vf_arch *a, bool *hard, const char **kind)
{
	*hard = false;
	*kind = "";
	if (!(a->known & VF_ARCH_F_MAX_POSITIONS) || a->max_positions <= 0)
		return 0;
	int64_t n = a->max_positions;
	if (a->learned_positions) {
		*hard = true;
		*kind = "learned absolute";
		/* RobertaEmbeddings number positions from padding_idx + 1 = 2 */
		if ((strcmp(a->family, "roberta") == 0 || strcmp(a->family, "xlm-roberta") == 0) && n > 2)
			n -= 2;
	} else if (a->rel_attn_buckets > 0 || a->rel_positions > 0) {
		*kind = "relative";
	} else if (a->rotary_pct > 0) {
		*kind = "rotary";
	}
	return n;
}

void vf_arch_not_understood(struct vf_arch *a, const char *what)
{
	size_t n = strlen(a->not_understood), cap = sizeof a->not_understood;
	a->approximate = true;
	if (n + 2 + strlen(what) + 4 >= cap) {
		if (n + 4 < cap && (n < 3 || strcmp(a->not_understood + n - 3, "...") != 0))
			snprintf(a->not_understood + n, cap - n, "%s...", n ? ", " : "");
		return;
	}
	snprintf(a->not_understood + n, cap - n, "%s%s", n ? ", " : "", what);
}

/* The mixture-of-experts and latent-attention fields, when the model has
 * them. */
static void add_moe_mla_json(cJSON *o, const struct vf_arch *a)
{
	if (a->experts > 0) {
		cJSON *m = cJSON_AddObjectToObject(o, "moe");
		cJSON_AddNumberToObject(m, "expert_ffn", (double)(a->moe_ffn > 0 ? a->moe_ffn : a->ffn));
		cJSON_AddNumberToObject(m, "moe_layers", (double)(a->moe_layers >= 0 ? a->moe_layers : a->layers));
		cJSON_AddNumberToObject(m, "shared_ffn", (double)a->shared_ffn);
		cJSON_AddBoolToObject(m, "router_bias", a->router_bias);
		cJSON_AddBoolToObject(m, "expert_bias", a->expert_bias);
	}
	if (a->kv_lora_rank > 0) {
		cJSON *m = cJSON_AddObjectToObject(o, "mla");
		cJSON_AddNumberToObject(m, "q_lora_rank", (double)a->q_lora_rank);
		cJSON_AddNumberToObject(m, "kv_lora_rank", (double)a->kv_lora_rank);
		cJSON_AddNumberToObject(m, "qk_nope_head_dim", (double)a->qk_nope_dim);
		cJSON_AddNumberToObject(m, "qk_rope_head_dim", (double)a->qk_rope_dim);
		cJSON_AddNumberToObject(m, "v_head_dim", (double)a->v_head_dim);
	}
	if (a->mtp_layers > 0) {
		cJSON_AddNumberToObject(o, "mtp_layers", (double)a->mtp_layers);
		cJSON_AddNumberToObject(o, "mtp_params", (double)vf_arch_mtp_params(a));
	}
	if (a->sliding_window > 0) {
		cJSON_AddNumberToObject(o, "sliding_window", (double)a->sliding_window);
		cJSON_AddNumberToObject(o, "sliding_layers", (double)a->sliding_layers);
	}
	if (a->attn_sinks)
		cJSON_AddBoolToObject(o, "attention_sinks", true);
	if (a->encoder)
		cJSON_AddBoolToObject(o, "encoder", true);
	vf__arch_ssm_json(o, a);
}

cJSON *vf_arch_to_json(const struct vf_arch *a)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	if (a->known & VF_ARCH_F_FAMILY)
		cJSON_AddStringToObject(o, "family", a->family);
	else
		cJSON_AddNullToObject(o, "family");
	vf_json_add_i64_or_null(o, "hidden", a->hidden, a->known & VF_ARCH_F_HIDDEN);
	vf_json_add_i64_or_null(o, "layers", a->layers, a->known & VF_ARCH_F_LAYERS);
	if (a->decoder_layers > 0)
		cJSON_AddNumberToObject(o, "decoder_layers", (double)a->decoder_layers);
	vf_json_add_i64_or_null(o, "heads", a->heads, a->known & VF_ARCH_F_HEADS);
	vf_json_add_i64_or_null(o, "kv_heads", a->kv_heads, a->known & VF_ARCH_F_KV_HEADS);
	vf_json_add_i64_or_null(o, "head_dim", a->head_dim, a->known & VF_ARCH_F_HEAD_DIM);
	vf_json_add_i64_or_null(o, "ffn", a->ffn, a->known & VF_ARCH_F_FFN);
	vf_json_add_i64_or_null(o, "vocab", a->vocab, a->known & VF_ARCH_F_VOCAB);
	if (a->known & VF_ARCH_F_TIED)
		cJSON_AddBoolToObject(o, "tied_embeddings", a->tied_embeddings);
	else
		cJSON_AddNullToObject(o, "tied_embeddings");
	vf_json_add_i64_or_null(o, "experts", a->experts, a->known & VF_ARCH_F_EXPERTS);
	vf_json_add_i64_or_null(o, "experts_per_token", a->experts_per_token,
				a->known & VF_ARCH_F_EXPERTS_PER_TOKEN);
	vf_json_add_i64_or_null(o, "max_positions", a->max_positions,
				a->known & VF_ARCH_F_MAX_POSITIONS);
	cJSON_AddBoolToObject(o, "gated_mlp", a->gated_mlp);
	cJSON_AddBoolToObject(o, "linear_bias", a->linear_bias);
	cJSON_AddBoolToObject(o, "layer_norm", a->layer_norm);
	if (a->rotary_pct != 1.0)
		cJSON_AddNumberToObject(o, "rotary_pct", a->rotary_pct);
	add_moe_mla_json(o, a);
	cJSON_AddBoolToObject(o, "approximate", a->approximate);
	vf_json_add_list(o, "not_understood", a->not_understood);
	if (a->inferred) {
		cJSON *inf = cJSON_AddArrayToObject(o, "inferred");
		for (size_t i = 0; i < sizeof field_names / sizeof field_names[0]; i++)
			if (a->inferred & field_names[i].bit)
				cJSON_AddItemToArray(inf, cJSON_CreateString(field_names[i].name));
	}
	cJSON_AddStringToObject(o, "source", a->source[0] ? a->source : "unknown");
	return o;
}
