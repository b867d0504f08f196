/* arch.c - model architectures from Hugging Face config.json objects, and
 * exact parameter counts by group computed from them.
 *
 * Each family reads the keys its transformers configuration class reads,
 * with that class's defaults, and counts parameters the way its modeling
 * file builds modules (checked against published totals and the
 * calibration records in ../shared/groundtruth/). */
#include "vramfit/model/arch.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vramfit/base/json.h"

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
}

/* The families we know how their modules are built. */
enum fam {
	FAM_GENERIC, /* llama-like layout on the common keys */
	FAM_LLAMA,
	FAM_MISTRAL,
	FAM_MIXTRAL,
	FAM_QWEN2,
	FAM_QWEN3,
	FAM_GEMMA,
	FAM_GEMMA2,
	FAM_GEMMA3,
	FAM_PHI3,
	FAM_GPT2,
	FAM_NEOX,
	FAM_T5,
	FAM_FALCON,
};

static const struct {
	const char *name;
	enum fam fam;
} families[] = {
	{"llama", FAM_LLAMA},    {"mistral", FAM_MISTRAL}, {"mixtral", FAM_MIXTRAL},
	{"qwen2", FAM_QWEN2},    {"qwen3", FAM_QWEN3},     {"gemma", FAM_GEMMA},
	{"gemma2", FAM_GEMMA2},  {"gemma3", FAM_GEMMA3},   {"gemma3_text", FAM_GEMMA3},
	{"phi3", FAM_PHI3},      {"gpt2", FAM_GPT2},       {"gpt_neox", FAM_NEOX},
	{"t5", FAM_T5},          {"falcon", FAM_FALCON},   {"RefinedWeb", FAM_FALCON},
	{"RefinedWebModel", FAM_FALCON},
};

/* architectures[0] class-name prefixes, for configs without model_type. */
static const struct {
	const char *prefix;
	const char *family;
} arch_classes[] = {
	{"Llama", "llama"},   {"Mistral", "mistral"}, {"Mixtral", "mixtral"},
	{"Qwen2", "qwen2"},   {"Qwen3", "qwen3"},     {"Gemma3", "gemma3"},
	{"Gemma2", "gemma2"}, {"Gemma", "gemma"},     {"Phi3", "phi3"},
	{"GPT2", "gpt2"},     {"GPTNeoX", "gpt_neox"}, {"T5", "t5"},
	{"Falcon", "falcon"},
};

static enum fam family_of(const char *name)
{
	for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
		if (strcmp(families[i].name, name) == 0)
			return families[i].fam;
	return FAM_GENERIC;
}

/* No dimension of a real model comes near this; bounding them keeps every
 * product below in checked 64-bit arithmetic. */
#define VF_ARCH_MAX_DIM ((int64_t)1 << 40)

/* Read an integer field that, when present, must be a whole number >= min. */
static vf_status get_int(const cJSON *cfg, const char *key, int64_t min, int64_t *out,
			 bool *found, const char *what, struct vf_error *err)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(cfg, key);
	*found = false;
	if (!n || cJSON_IsNull(n))
		return VF_OK;
	int64_t v;
	if (!vf_json_number_is_i64(n, &v) || v < min || v > VF_ARCH_MAX_DIM)
		return vf_error_set(err, VF_ERR,
				    "%s: field %s: expected an integer from %lld to %lld", what, key,
				    (long long)min, (long long)VF_ARCH_MAX_DIM);
	*out = v;
	*found = true;
	return VF_OK;
}

/* First of keys[] present; *out untouched when none. */
static vf_status get_int_any(const cJSON *cfg, const char *const *keys, int64_t min,
			     int64_t *out, bool *found, const char *what, struct vf_error *err)
{
	*found = false;
	for (size_t i = 0; keys[i]; i++) {
		vf_status st = get_int(cfg, keys[i], min, out, found, what, err);
		if (st != VF_OK || *found)
			return st;
	}
	return VF_OK;
}

static vf_status get_bool(const cJSON *cfg, const char *key, bool *out, const char *what,
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

#define TRY(x)                               \
	do {                                 \
		vf_status st_ = (x);         \
		if (st_ != VF_OK)            \
			return st_;          \
	} while (0)

#define KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Read one integer field into a->field, setting the known bit. */
#define READ(keys, min, field, bit)                                                  \
	do {                                                                         \
		bool f_;                                                             \
		TRY(get_int_any(cfg, keys, min, &a->field, &f_, what, err));         \
		if (f_)                                                              \
			a->known |= (bit);                                           \
	} while (0)

static vf_status read_t5(const cJSON *cfg, const char *what, struct vf_arch *a,
			 struct vf_error *err)
{
	bool f;
	READ(KEYS("d_model"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("num_layers"), 0, layers, VF_ARCH_F_LAYERS);
	READ(KEYS("num_heads"), 1, heads, VF_ARCH_F_HEADS);
	READ(KEYS("d_kv"), 1, head_dim, VF_ARCH_F_HEAD_DIM);
	READ(KEYS("d_ff"), 1, ffn, VF_ARCH_F_FFN);
	READ(KEYS("vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	READ(KEYS("n_positions"), 1, max_positions, VF_ARCH_F_MAX_POSITIONS);
	a->decoder_layers = a->layers;
	TRY(get_int(cfg, "num_decoder_layers", 0, &a->decoder_layers, &f, what, err));
	/* T5Config defaults: relative_attention_num_buckets 32, tied, relu. */
	a->rel_attn_buckets = 32;
	TRY(get_int(cfg, "relative_attention_num_buckets", 1, &a->rel_attn_buckets, &f, what,
		    err));
	if (a->known & VF_ARCH_F_HEADS) {
		a->kv_heads = a->heads;
		a->known |= VF_ARCH_F_KV_HEADS;
	}
	a->tied_embeddings = true;
	TRY(get_bool(cfg, "tie_word_embeddings", &a->tied_embeddings, what, err));
	a->known |= VF_ARCH_F_TIED;
	const char *ffp = vf_json_get_str(cfg, "feed_forward_proj");
	a->gated_mlp = ffp && strncmp(ffp, "gated-", 6) == 0;
	a->norms_per_layer = 2; /* encoder: 2; decoder: 3 (counted in param_groups) */
	return VF_OK;
}

static vf_status read_gpt2(const cJSON *cfg, const char *what, struct vf_arch *a,
			   struct vf_error *err)
{
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
	/* GPT2LMHeadModel always ties lm_head to wte. */
	a->tied_embeddings = true;
	a->known |= VF_ARCH_F_TIED;
	a->learned_positions = true;
	a->linear_bias = a->qkv_bias = a->o_bias = a->mlp_bias = true;
	a->layer_norm = true;
	a->gated_mlp = false;
	return VF_OK;
}

static vf_status read_falcon(const cJSON *cfg, const char *what, struct vf_arch *a,
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

static vf_status read_neox(const cJSON *cfg, const char *what, struct vf_arch *a,
			   struct vf_error *err)
{
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

/* llama and the families built like it: RMSNorm, gated MLP, rotary. */
static vf_status read_llama_like(const cJSON *cfg, enum fam fam, const char *what,
				 struct vf_arch *a, struct vf_error *err)
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
	/* Default head_dim: gemma* 256, qwen3 128 (their config classes);
	 * otherwise hidden / heads. */
	if (!(a->known & VF_ARCH_F_HEAD_DIM)) {
		if (fam == FAM_GEMMA || fam == FAM_GEMMA2 || fam == FAM_GEMMA3)
			a->head_dim = 256;
		else if (fam == FAM_QWEN3)
			a->head_dim = 128;
		else if ((a->known & VF_ARCH_F_HIDDEN) && (a->known & VF_ARCH_F_HEADS))
			a->head_dim = a->hidden / a->heads;
		if (a->head_dim > 0)
			a->known |= VF_ARCH_F_HEAD_DIM;
	}
	a->gated_mlp = true;
	a->tied_embeddings = fam == FAM_GEMMA || fam == FAM_GEMMA2 || fam == FAM_GEMMA3;
	TRY(get_bool(cfg, "tie_word_embeddings", &a->tied_embeddings, what, err));
	a->known |= VF_ARCH_F_TIED;

	bool attn_bias = false;
	TRY(get_bool(cfg, "attention_bias", &attn_bias, what, err));
	a->qkv_bias = a->o_bias = attn_bias;
	if (fam == FAM_QWEN2) { /* Qwen2Attention: q/k/v biases, o without */
		a->qkv_bias = true;
		a->o_bias = false;
	}
	TRY(get_bool(cfg, "mlp_bias", &a->mlp_bias, what, err));
	a->linear_bias = a->qkv_bias && a->o_bias && a->mlp_bias;
	a->qk_norm = fam == FAM_QWEN3 || fam == FAM_GEMMA3;
	a->norms_per_layer = (fam == FAM_GEMMA2 || fam == FAM_GEMMA3) ? 4 : 2;

	if (fam == FAM_MIXTRAL) {
		a->experts = 8;
		a->experts_per_token = 2;
		TRY(get_int(cfg, "num_local_experts", 1, &a->experts, &f, what, err));
		TRY(get_int(cfg, "num_experts_per_tok", 1, &a->experts_per_token, &f, what, err));
		a->known |= VF_ARCH_F_EXPERTS | VF_ARCH_F_EXPERTS_PER_TOKEN;
	} else if (fam != FAM_GENERIC) {
		a->experts = 0;
		a->experts_per_token = 0;
		a->known |= VF_ARCH_F_EXPERTS | VF_ARCH_F_EXPERTS_PER_TOKEN;
	} else {
		/* Generic: MoE keys when present. */
		bool fe = false, fk = false;
		TRY(get_int_any(cfg, KEYS("num_local_experts", "num_experts"), 0, &a->experts, &fe,
				what, err));
		TRY(get_int(cfg, "num_experts_per_tok", 0, &a->experts_per_token, &fk, what, err));
		if (!fe)
			a->experts = 0;
		if (!fk)
			a->experts_per_token = 0;
		a->known |= VF_ARCH_F_EXPERTS | VF_ARCH_F_EXPERTS_PER_TOKEN;
	}
	return VF_OK;
}

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

vf_status vf_arch_from_config(const cJSON *cfg, const char *what, struct vf_arch *a,
			      struct vf_error *err)
{
	vf_arch_init(a);
	snprintf(a->source, sizeof a->source, "config.json");
	if (!cJSON_IsObject(cfg))
		return vf_error_set(err, VF_ERR, "%s: expected a JSON object (a model config)", what);

	const char *mt = vf_json_get_str(cfg, "model_type");
	if (!mt)
		mt = family_from_classes(cfg);
	if (!mt) /* diffusers configs name their class */
		mt = vf_json_get_str(cfg, "_class_name");
	/* Multimodal wrappers (gemma3): the language model is text_config. */
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(cfg, "text_config");
	const cJSON *src = cfg;
	if (cJSON_IsObject(text) && !cJSON_GetObjectItemCaseSensitive(cfg, "hidden_size")) {
		src = text;
		const char *tmt = vf_json_get_str(text, "model_type");
		if (!mt && tmt)
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
	enum fam fam = mt ? family_of(mt) : FAM_GENERIC;
	if (mt) {
		snprintf(a->family, sizeof a->family, "%s",
			 strcmp(mt, "gemma3_text") == 0 ? "gemma3" : mt);
		if (fam == FAM_FALCON)
			snprintf(a->family, sizeof a->family, "falcon");
		a->known |= VF_ARCH_F_FAMILY;
	}

	vf_status st;
	switch (fam) {
	case FAM_T5:
		st = read_t5(src, what, a, err);
		break;
	case FAM_GPT2:
		st = read_gpt2(src, what, a, err);
		break;
	case FAM_NEOX:
		st = read_neox(src, what, a, err);
		break;
	case FAM_FALCON:
		st = read_falcon(src, what, a, err);
		break;
	default:
		st = read_llama_like(src, fam, what, a, err);
		break;
	}
	if (st != VF_OK)
		return st;
	/* The known families without experts are dense. */
	if (fam != FAM_GENERIC && !(a->known & VF_ARCH_F_EXPERTS)) {
		a->experts = 0;
		a->experts_per_token = 0;
		a->known |= VF_ARCH_F_EXPERTS | VF_ARCH_F_EXPERTS_PER_TOKEN;
	}
	/* Multi-head attention unless the family said otherwise. */
	if ((a->known & VF_ARCH_F_HEADS) && !(a->known & VF_ARCH_F_KV_HEADS)) {
		a->kv_heads = a->heads;
		a->known |= VF_ARCH_F_KV_HEADS;
	}
	if ((a->known & VF_ARCH_F_HEADS) && (a->known & VF_ARCH_F_HIDDEN) &&
	    !(a->known & VF_ARCH_F_HEAD_DIM)) {
		a->head_dim = a->hidden / a->heads;
		a->known |= VF_ARCH_F_HEAD_DIM;
	}
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

/* *out = product of n int64_t arguments, false on overflow. */
static bool prod(int64_t *out, int n, ...)
{
	va_list ap;
	va_start(ap, n);
	int64_t p = 1;
	bool ok = true;
	for (int i = 0; i < n && ok; i++)
		ok = mul(&p, va_arg(ap, int64_t));
	va_end(ap);
	*out = p;
	return ok;
}

#define NEED(bits) (((a->known & (bits)) == (bits)))
#define P(out, n, ...)                                   \
	do {                                             \
		if (!prod(&(out), n, __VA_ARGS__))       \
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
	/* relative attention bias: first block of encoder and of decoder */
	int64_t rel;
	P(rel, 2, a->rel_attn_buckets, N);
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

bool vf_arch_param_groups(const struct vf_arch *a, struct vf_param_groups *g)
{
	memset(g, 0, sizeof *g);
	if (!NEED(VF_ARCH_F_HIDDEN | VF_ARCH_F_LAYERS | VF_ARCH_F_HEADS | VF_ARCH_F_KV_HEADS |
		  VF_ARCH_F_HEAD_DIM | VF_ARCH_F_FFN | VF_ARCH_F_VOCAB | VF_ARCH_F_TIED))
		return false;
	if (a->hidden <= 0 || a->heads <= 0 || a->kv_heads <= 0 || a->head_dim <= 0 ||
	    a->ffn < 0 || a->vocab < 0 || a->layers < 0)
		return false;
	if (strcmp(a->family, "t5") == 0) {
		if (!groups_t5(a, g))
			return false;
		goto total;
	}
	int64_t H = a->hidden, L = a->layers, V = a->vocab, F = a->ffn;
	int64_t q, kv, t, per;

	/* embedding: token table, a learned position table, an untied lm_head */
	P(g->embedding, 2, V, H);
	if (!a->tied_embeddings)
		ADD(g->embedding, g->embedding);
	if (a->learned_positions) {
		if (a->max_positions < 0)
			return false;
		P(t, 2, a->max_positions, H);
		ADD(g->embedding, t);
	}

	/* attention per layer: q (heads*hd), k and v (kv_heads*hd), o */
	P(q, 2, a->heads, a->head_dim);
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
	P(t, 2, per, L);
	ADD(g->attention, t);

	/* MLP per layer (dense) or experts (MoE: each expert a gated MLP, plus
	 * the router hidden -> experts) */
	int64_t mlp1;
	P(mlp1, 3, (int64_t)(a->gated_mlp ? 3 : 2), H, F);
	if (a->mlp_bias) {
		ADD(mlp1, F);
		if (a->gated_mlp)
			ADD(mlp1, F);
		ADD(mlp1, H);
	}
	if (a->experts > 0) {
		P(t, 2, mlp1, a->experts);
		int64_t router;
		P(router, 2, H, a->experts);
		ADD(t, router);
		P(t, 2, t, L);
		ADD(g->experts, t);
	} else {
		P(t, 2, mlp1, L);
		ADD(g->mlp, t);
	}

	/* norms: per layer norms_per_layer of width H (LayerNorm has a bias),
	 * per-head q/k norms, and the final norm */
	int64_t w;
	P(w, 2, (int64_t)(a->layer_norm ? 2 : 1), H);
	P(t, 3, (int64_t)a->norms_per_layer, w, L);
	ADD(g->norm, t);
	if (a->qk_norm) {
		P(t, 3, (int64_t)2, a->head_dim, L);
		ADD(g->norm, t);
	}
	ADD(g->norm, w);

total:
	g->total = 0;
	ADD(g->total, g->embedding);
	ADD(g->total, g->attention);
	ADD(g->total, g->mlp);
	ADD(g->total, g->norm);
	ADD(g->total, g->experts);
	ADD(g->total, g->other);
	return true;
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
	if (a->inferred) {
		cJSON *inf = cJSON_AddArrayToObject(o, "inferred");
		for (size_t i = 0; i < sizeof field_names / sizeof field_names[0]; i++)
			if (a->inferred & field_names[i].bit)
				cJSON_AddItemToArray(inf, cJSON_CreateString(field_names[i].name));
	}
	cJSON_AddStringToObject(o, "source", a->source[0] ? a->source : "unknown");
	return o;
}
