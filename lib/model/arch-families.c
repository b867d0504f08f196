/* arch-families.c - config.json readers for the families built unlike
 * llama: mixture of experts (qwen2/3-moe, deepseek v2/v3, gpt-oss, llama 4,
 * granite-moe), multi-head latent attention (deepseek), the legacy and
 * LayerNorm decoders (phi and its mixformer configs, stablelm, bloom) and
 * the encoders (bert, roberta, deberta-v2). Each reads the keys its
 * transformers configuration class (or the remote code the config names)
 * reads, with that class's defaults; arch.c counts the parameters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch-internal.h"
#include "vramfit/base/json.h"

#define TRY VF_TRY
#define KEYS VF_KEYS
#define READ VF_READ

/* Entries of a JSON array of layer indices that are in [0, layers). */
static int64_t count_indices(const cJSON *list, int64_t layers)
{
	int64_t n = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, list)
	{
		int64_t v;
		if (vf_json_number_is_i64(it, &v) && v >= 0 && v < layers)
			n++;
	}
	return n;
}

/* Mark the entries of a JSON array of layer indices in [0, layers) in
 * mark[] (layers entries): one pass over the list, whatever its length. */
static void mark_indices(const cJSON *list, int64_t layers, bool *mark)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, list)
	{
		int64_t v;
		if (vf_json_number_is_i64(it, &v) && v >= 0 && v < layers)
			mark[v] = true;
	}
}

/* Qwen2-MoE / Qwen3-MoE: layer i is sparse when it is not in
 * mlp_only_layers and (i + 1) % decoder_sparse_step == 0; experts of width
 * moe_intermediate_size; qwen2_moe adds a shared expert of width
 * shared_expert_intermediate_size behind a sigmoid gate (hidden -> 1). */
vf_status vf__arch_read_qwen_moe(const cJSON *cfg, const char *family, const char *what,
				 struct vf_arch *a, struct vf_error *err)
{
	bool q2 = strcmp(family, "qwen2_moe") == 0, f;
	TRY(vf__arch_read_llama_like(cfg, q2 ? "qwen2" : "qwen3", what, a, err));
	a->experts = q2 ? 60 : 128;
	a->experts_per_token = q2 ? 4 : 8;
	a->moe_ffn = q2 ? 1408 : 768;
	int64_t step = 1;
	TRY(vf__arch_get_int(cfg, "num_experts", 0, &a->experts, &f, what, err));
	TRY(vf__arch_get_int(cfg, "num_experts_per_tok", 1, &a->experts_per_token, &f, what, err));
	TRY(vf__arch_get_int(cfg, "moe_intermediate_size", 1, &a->moe_ffn, &f, what, err));
	TRY(vf__arch_get_int(cfg, "decoder_sparse_step", 1, &step, &f, what, err));
	if (q2) {
		a->shared_ffn = 5632;
		TRY(vf__arch_get_int(cfg, "shared_expert_intermediate_size", 0, &a->shared_ffn, &f,
				     what, err));
		a->shared_expert_gate = a->shared_ffn > 0;
	}
	const cJSON *only = cJSON_GetObjectItemCaseSensitive(cfg, "mlp_only_layers");
	a->moe_layers = 0;
	if (a->experts <= 0 || a->layers <= 0)
		return VF_OK;
	bool *dense = calloc((size_t)a->layers, sizeof *dense); /* layers <= VF_ARCH_MAX_LAYERS */
	if (!dense)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	mark_indices(only, a->layers, dense);
	for (int64_t i = 0; i < a->layers; i++)
		if (!dense[i] && (i + 1) % step == 0)
			a->moe_layers++;
	free(dense);
	return VF_OK;
}

/* DeepSeek-V2/V3: multi-head latent attention (q through a rank
 * q_lora_rank bottleneck with its RMSNorm, or q_proj when q_lora_rank is
 * null; k/v through kv_a_proj_with_mqa to kv_lora_rank + the shared rope
 * key, an RMSNorm, kv_b_proj to the heads); layer i has experts when
 * i >= first_k_dense_replace and i % moe_layer_freq == 0, with
 * n_shared_experts shared experts of the expert width, and (v3, or v2 with
 * topk_method noaux_tc) the router's score correction bias.
 * num_nextn_predict_layers MTP modules are in the checkpoint but not built
 * by transformers: kept out of the count (vf_arch_mtp_params). */
vf_status vf__arch_read_deepseek(const cJSON *cfg, const char *family, const char *what,
				 struct vf_arch *a, struct vf_error *err)
{
	bool v3 = strcmp(family, "deepseek_v3") == 0, f;
	TRY(vf__arch_read_llama_like(cfg, "llama", what, a, err));
	VF_DEFAULT(vocab, VF_ARCH_F_VOCAB, v3 ? 129280 : 102400);
	a->q_lora_rank = 1536;
	a->kv_lora_rank = 512;
	a->qk_nope_dim = 128;
	a->qk_rope_dim = 64;
	a->v_head_dim = 128;
	TRY(vf__arch_get_int(cfg, "q_lora_rank", 0, &a->q_lora_rank, &f, what, err));
	const cJSON *qr = cJSON_GetObjectItemCaseSensitive(cfg, "q_lora_rank");
	if (qr && cJSON_IsNull(qr))
		a->q_lora_rank = 0;
	TRY(vf__arch_get_int(cfg, "kv_lora_rank", 1, &a->kv_lora_rank, &f, what, err));
	TRY(vf__arch_get_int(cfg, "qk_nope_head_dim", 0, &a->qk_nope_dim, &f, what, err));
	TRY(vf__arch_get_int(cfg, "qk_rope_head_dim", 0, &a->qk_rope_dim, &f, what, err));
	TRY(vf__arch_get_int(cfg, "v_head_dim", 1, &a->v_head_dim, &f, what, err));
	/* q and k heads are nope + rope wide, v heads v_head_dim; every head
	 * has its own k and v once decompressed */
	a->head_dim = a->qk_nope_dim + a->qk_rope_dim;
	a->kv_heads = a->heads;
	a->known |= VF_ARCH_F_HEAD_DIM | VF_ARCH_F_KV_HEADS;
	a->qkv_bias = false; /* only q_a / kv_a / o follow attention_bias (o_bias) */
	a->experts = 0;
	a->experts_per_token = v3 ? 8 : 6;
	a->moe_ffn = v3 ? 2048 : 1407;
	int64_t shared = v3 ? 1 : 2, first_dense = v3 ? 3 : 0, freq = 1;
	TRY(vf__arch_get_int(cfg, "n_routed_experts", 0, &a->experts, &f, what, err));
	TRY(vf__arch_get_int(cfg, "num_experts_per_tok", 1, &a->experts_per_token, &f, what, err));
	TRY(vf__arch_get_int(cfg, "moe_intermediate_size", 1, &a->moe_ffn, &f, what, err));
	TRY(vf__arch_get_int(cfg, "n_shared_experts", 0, &shared, &f, what, err));
	TRY(vf__arch_get_int(cfg, "first_k_dense_replace", 0, &first_dense, &f, what, err));
	TRY(vf__arch_get_int(cfg, "moe_layer_freq", 1, &freq, &f, what, err));
	TRY(vf__arch_get_int(cfg, "num_nextn_predict_layers", 0, &a->mtp_layers, &f, what, err));
	const char *method = vf_json_get_str(cfg, "topk_method");
	a->router_bias = v3 || (method && strcmp(method, "noaux_tc") == 0);
	a->shared_ffn = shared * a->moe_ffn; /* <= 2^80? bounded: both <= 2^40 */
	if (shared > 0 && a->shared_ffn / shared != a->moe_ffn)
		return vf_error_set(err, VF_ERR, "%s: field n_shared_experts: too large", what);
	a->moe_layers = 0;
	for (int64_t i = 0; a->experts > 0 && i < a->layers; i++)
		if (i >= first_dense && i % freq == 0)
			a->moe_layers++;
	a->known |= VF_ARCH_F_EXPERTS | VF_ARCH_F_EXPERTS_PER_TOKEN;
	return VF_OK;
}

/* gpt-oss: every layer a MoE of num_local_experts experts (gate_up and down
 * with biases), a router with a bias, attention with biases and one sink
 * logit per head, sliding attention on the layers layer_types names. */
vf_status vf__arch_read_gpt_oss(const cJSON *cfg, const char *family, const char *what,
				struct vf_arch *a, struct vf_error *err)
{
	(void)family;
	bool f, attn_bias = true;
	TRY(vf__arch_read_llama_like(cfg, "llama", what, a, err));
	if (!cJSON_GetObjectItemCaseSensitive(cfg, "head_dim"))
		a->head_dim = 64;
	VF_DEFAULT(vocab, VF_ARCH_F_VOCAB, 201088);
	TRY(vf__arch_get_bool(cfg, "attention_bias", &attn_bias, what, err));
	a->qkv_bias = a->o_bias = attn_bias;
	a->attn_sinks = true;
	a->experts = 128;
	a->experts_per_token = 4;
	TRY(vf__arch_get_int(cfg, "num_local_experts", 1, &a->experts, &f, what, err));
	TRY(vf__arch_get_int_any(cfg, KEYS("num_experts_per_tok", "experts_per_token"), 1,
				 &a->experts_per_token, &f, what, err));
	a->moe_ffn = a->ffn;
	a->moe_layers = a->layers;
	a->expert_bias = a->router_bias = true;
	return VF_OK;
}

/* Llama 4 (text model, or the text_config of the multimodal config): MoE
 * layers listed by moe_layers or every interleave_moe_layer_step-th layer,
 * each with experts and one shared expert of width intermediate_size; the
 * other layers a dense MLP of width intermediate_size_mlp. Its q/k norm is
 * an L2 norm without weights; chunked attention changes no size. */
vf_status vf__arch_read_llama4(const cJSON *cfg, const char *family, const char *what,
			       struct vf_arch *a, struct vf_error *err)
{
	(void)family;
	bool f;
	TRY(vf__arch_read_llama_like(cfg, "llama", what, a, err));
	if (!cJSON_GetObjectItemCaseSensitive(cfg, "head_dim"))
		a->head_dim = 128;
	VF_DEFAULT(vocab, VF_ARCH_F_VOCAB, 202048);
	a->experts = 16;
	a->experts_per_token = 1;
	TRY(vf__arch_get_int(cfg, "num_local_experts", 0, &a->experts, &f, what, err));
	TRY(vf__arch_get_int(cfg, "num_experts_per_tok", 1, &a->experts_per_token, &f, what, err));
	a->moe_ffn = a->ffn;
	a->shared_ffn = a->ffn;
	int64_t dense = 16384, step = 1;
	TRY(vf__arch_get_int(cfg, "intermediate_size_mlp", 1, &dense, &f, what, err));
	a->ffn = dense;
	TRY(vf__arch_get_int(cfg, "interleave_moe_layer_step", 1, &step, &f, what, err));
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(cfg, "moe_layers");
	if (cJSON_IsArray(list))
		a->moe_layers = count_indices(list, a->layers);
	else
		a->moe_layers = a->layers / step; /* range(step - 1, layers, step) */
	if (a->experts == 0)
		a->moe_layers = 0;
	return VF_OK;
}

/* Granite-MoE: every layer experts of width intermediate_size (input_linear
 * = gate and up, output_linear), a router without bias; granitemoeshared
 * adds a shared MLP of width shared_intermediate_size. */
vf_status vf__arch_read_granitemoe(const cJSON *cfg, const char *family, const char *what,
				   struct vf_arch *a, struct vf_error *err)
{
	bool f;
	TRY(vf__arch_read_llama_like(cfg, "granite", what, a, err));
	a->experts = 8;
	a->experts_per_token = 2;
	TRY(vf__arch_get_int(cfg, "num_local_experts", 0, &a->experts, &f, what, err));
	TRY(vf__arch_get_int(cfg, "num_experts_per_tok", 1, &a->experts_per_token, &f, what, err));
	a->moe_ffn = a->ffn;
	a->moe_layers = a->experts > 0 ? a->layers : 0;
	if (strcmp(family, "granitemoeshared") == 0)
		TRY(vf__arch_get_int(cfg, "shared_intermediate_size", 0, &a->shared_ffn, &f, what,
				     err));
	return VF_OK;
}

/* Phi-1/1.5/2: the HF `phi` config, and the legacy remote-code configs
 * (`phi-msft`, `mixformer-sequential`: n_embd, n_inner, rotary_dim). One
 * LayerNorm per layer feeding attention and MLP in parallel; q/k/v/dense,
 * fc1/fc2 and the lm_head all with biases; partial rotary. */
vf_status vf__arch_read_phi(const cJSON *cfg, const char *family, const char *what,
			    struct vf_arch *a, struct vf_error *err)
{
	bool f;
	READ(KEYS("hidden_size", "n_embd"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("num_hidden_layers", "n_layer"), 0, layers, VF_ARCH_F_LAYERS);
	READ(KEYS("num_attention_heads", "n_head"), 1, heads, VF_ARCH_F_HEADS);
	READ(KEYS("num_key_value_heads", "n_head_kv"), 1, kv_heads, VF_ARCH_F_KV_HEADS);
	READ(KEYS("intermediate_size", "n_inner"), 1, ffn, VF_ARCH_F_FFN);
	READ(KEYS("vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	READ(KEYS("max_position_embeddings", "n_positions"), 1, max_positions,
	     VF_ARCH_F_MAX_POSITIONS);
	VF_DEFAULT(vocab, VF_ARCH_F_VOCAB, 51200);
	VF_DEFAULT(max_positions, VF_ARCH_F_MAX_POSITIONS, 2048);
	if (a->known & VF_ARCH_F_HIDDEN)
		VF_DEFAULT(ffn, VF_ARCH_F_FFN, 4 * a->hidden); /* hidden <= 2^40 */
	if ((a->known & VF_ARCH_F_HIDDEN) && (a->known & VF_ARCH_F_HEADS)) {
		a->head_dim = a->hidden / a->heads;
		a->known |= VF_ARCH_F_HEAD_DIM;
	}
	a->rotary_pct = 0.5;
	vf_json_get_double(cfg, "partial_rotary_factor", &a->rotary_pct);
	int64_t rd = 0;
	TRY(vf__arch_get_int(cfg, "rotary_dim", 0, &rd, &f, what, err));
	if (f && a->head_dim > 0)
		a->rotary_pct = (double)rd / (double)a->head_dim;
	TRY(vf__arch_get_bool(cfg, "qk_layernorm", &a->qk_norm, what, err));
	a->tied_embeddings = false;
	TRY(vf__arch_get_bool(cfg, "tie_word_embeddings", &a->tied_embeddings, what, err));
	a->known |= VF_ARCH_F_TIED;
	a->layer_norm = true;
	a->norms_per_layer = 1;
	a->parallel_attn = true;
	a->linear_bias = a->qkv_bias = a->o_bias = a->mlp_bias = true;
	a->lm_head_bias = true;
	a->gated_mlp = false;
	const char *act = vf_json_get_str(cfg, "hidden_act");
	if (!act)
		act = vf_json_get_str(cfg, "activation_function");
	a->act_gelu_python = !act || strcmp(act, "gelu_new") == 0; /* PhiConfig default */
	if (strcmp(family, "mixformer-sequential") == 0) {
		/* the block layout named in "architecture": only the parallel
		 * block with a two-layer MLP is the layout counted here */
		const cJSON *arch = cJSON_GetObjectItemCaseSensitive(cfg, "architecture");
		const char *block = vf_json_get_str(arch, "block_cls");
		const char *mlp = vf_json_get_str(cJSON_GetObjectItemCaseSensitive(arch, "mlp"),
						  "mlp_cls");
		if (block && strcmp(block, "parallel") != 0)
			vf_arch_not_understood(a, "architecture.block_cls");
		if (mlp && strcmp(mlp, "mlp") != 0 && strcmp(mlp, "fused_mlp") != 0)
			vf_arch_not_understood(a, "architecture.mlp.mlp_cls");
	}
	return VF_OK;
}

/* StableLM (HF `stablelm`) and its remote-code `stablelm_epoch` configs:
 * LayerNorms with biases, gated MLP without biases, q/k/v biases when
 * use_qkv_bias, partial rotary (partial_rotary_factor / rope_pct), per-head
 * q/k LayerNorms (weights only) when qk_layernorm, one norm per layer when
 * use_parallel_residual. */
vf_status vf__arch_read_stablelm(const cJSON *cfg, const char *family, const char *what,
				 struct vf_arch *a, struct vf_error *err)
{
	(void)family;
	TRY(vf__arch_read_llama_like(cfg, "llama", what, a, err));
	VF_DEFAULT(vocab, VF_ARCH_F_VOCAB, 50304);
	a->layer_norm = true;
	a->norm_affine = 2;
	a->rotary_pct = 0.25;
	vf_json_get_double(cfg, "rope_pct", &a->rotary_pct);
	vf_json_get_double(cfg, "partial_rotary_factor", &a->rotary_pct);
	bool qkv_bias = false, qk_ln = false, parallel = false;
	TRY(vf__arch_get_bool(cfg, "use_qkv_bias", &qkv_bias, what, err));
	TRY(vf__arch_get_bool(cfg, "qk_layernorm", &qk_ln, what, err));
	TRY(vf__arch_get_bool(cfg, "use_parallel_residual", &parallel, what, err));
	a->qkv_bias = qkv_bias;
	a->o_bias = a->mlp_bias = a->linear_bias = false;
	a->qk_norm = a->qk_norm_full = qk_ln;
	a->parallel_attn = parallel;
	a->norms_per_layer = parallel ? 1 : 2;
	return VF_OK;
}

/* BLOOM: n_embed, a LayerNorm after the word embedding, fused
 * query_key_value and every linear with biases, 4x GELU MLP, ALiBi (no
 * position parameters), tied lm_head. */
vf_status vf__arch_read_bloom(const cJSON *cfg, const char *family, const char *what,
			      struct vf_arch *a, struct vf_error *err)
{
	(void)family;
	READ(KEYS("hidden_size", "n_embed"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("n_layer", "num_hidden_layers"), 0, layers, VF_ARCH_F_LAYERS);
	READ(KEYS("num_attention_heads", "n_head"), 1, heads, VF_ARCH_F_HEADS);
	READ(KEYS("vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	VF_DEFAULT(vocab, VF_ARCH_F_VOCAB, 250880);
	VF_DEFAULT(hidden, VF_ARCH_F_HIDDEN, 64);
	VF_DEFAULT(layers, VF_ARCH_F_LAYERS, 2);
	VF_DEFAULT(heads, VF_ARCH_F_HEADS, 8);
	a->ffn = 4 * a->hidden; /* hidden <= 2^40 */
	a->known |= VF_ARCH_F_FFN;
	a->tied_embeddings = true;
	TRY(vf__arch_get_bool(cfg, "tie_word_embeddings", &a->tied_embeddings, what, err));
	a->known |= VF_ARCH_F_TIED;
	a->layer_norm = true;
	a->emb_norm = true;
	a->linear_bias = a->qkv_bias = a->o_bias = a->mlp_bias = true;
	a->gated_mlp = false;
	a->rotary_pct = 0; /* ALiBi */
	a->eager_attention = true;
	return VF_OK;
}

/* The labels of a classification head: id2label's entries, else
 * num_labels, else 2 (PretrainedConfig's default). */
static vf_status num_labels(const cJSON *cfg, const char *what, int64_t *n, struct vf_error *err)
{
	const cJSON *ids = cJSON_GetObjectItemCaseSensitive(cfg, "id2label");
	bool f;
	*n = 2;
	if (cJSON_IsObject(ids) && cJSON_GetArraySize(ids) > 0) {
		*n = cJSON_GetArraySize(ids);
		return VF_OK;
	}
	return vf__arch_get_int(cfg, "num_labels", 1, n, &f, what, err);
}

/* The task head architectures[0] names, beyond the base model (facts of
 * transformers' Bert / Roberta / XLM-RoBERTa / DeBERTa-v2 classes):
 *  - ForMaskedLM: no pooler; transform dense H x H + H, LayerNorm 2H, the
 *    decoder tied to the word embeddings, its bias V.
 *  - ForSequenceClassification: bert keeps the pooler and adds H x n + n;
 *    roberta / xlm-roberta drop the pooler for dense H x H + H and
 *    out_proj H x n + n; deberta-v2 a context pooler H x H + H and H x n + n.
 *  - ForTokenClassification: no pooler; H x n + n.
 *  - ForQuestionAnswering: no pooler; H x 2 + 2.
 *  - ForMultipleChoice: bert and roberta keep the pooler, deberta-v2 a
 *    context pooler H x H + H; then H x 1 + 1.
 * Another For* class is named not understood. */
static vf_status encoder_head(const cJSON *cfg, const char *family, const char *what,
			      struct vf_arch *a, struct vf_error *err)
{
	const cJSON *archs = cJSON_GetObjectItemCaseSensitive(cfg, "architectures");
	const cJSON *first = cJSON_IsArray(archs) ? cJSON_GetArrayItem(archs, 0) : NULL;
	const char *cls = cJSON_IsString(first) ? first->valuestring : "";
	const char *task = strstr(cls, "For");
	if (!task)
		return VF_OK;
	snprintf(a->task, sizeof a->task, "%s", cls);
	bool bert = strcmp(family, "bert") == 0, deberta = strcmp(family, "deberta-v2") == 0;
	int64_t H = a->hidden, n = 2;
	if (H > ((int64_t)1 << 31))
		return vf_error_set(err, VF_ERR, "%s: hidden_size too large", what);
	if (strcmp(task, "ForMaskedLM") == 0) {
		a->linear_bias = false;
		a->head_params = H * H + H + 2 * H + a->vocab;
	} else if (strcmp(task, "ForSequenceClassification") == 0) {
		TRY(num_labels(cfg, what, &n, err));
		a->linear_bias = bert;
		a->head_params = (bert ? 0 : H * H + H) + H * n + n;
	} else if (strcmp(task, "ForTokenClassification") == 0) {
		TRY(num_labels(cfg, what, &n, err));
		a->linear_bias = false;
		a->head_params = H * n + n;
	} else if (strcmp(task, "ForQuestionAnswering") == 0) {
		a->linear_bias = false;
		a->head_params = H * 2 + 2;
	} else if (strcmp(task, "ForMultipleChoice") == 0) {
		a->linear_bias = !deberta;
		a->head_params = (deberta ? H * H + H : 0) + H + 1;
	} else {
		char note[80];
		snprintf(note, sizeof note, "architectures %.60s", cls);
		vf_arch_not_understood(a, note);
	}
	return VF_OK;
}

/* Encoders: bert, roberta (positions offset by the padding index: 514
 * rows), deberta-v2 (no token types by default, absolute positions only
 * when position_biased_input, a relative position table of
 * 2 x position_buckets or 2 x max_relative_positions rows with its
 * LayerNorm when norm_rel_ebd says layer_norm; no pooler). */
vf_status vf__arch_read_bert(const cJSON *cfg, const char *family, const char *what,
			     struct vf_arch *a, struct vf_error *err)
{
	bool deberta = strcmp(family, "deberta-v2") == 0, f;
	READ(KEYS("hidden_size"), 1, hidden, VF_ARCH_F_HIDDEN);
	READ(KEYS("num_hidden_layers"), 0, layers, VF_ARCH_F_LAYERS);
	READ(KEYS("num_attention_heads"), 1, heads, VF_ARCH_F_HEADS);
	READ(KEYS("intermediate_size"), 1, ffn, VF_ARCH_F_FFN);
	READ(KEYS("vocab_size"), 1, vocab, VF_ARCH_F_VOCAB);
	READ(KEYS("max_position_embeddings"), 1, max_positions, VF_ARCH_F_MAX_POSITIONS);
	VF_DEFAULT(vocab, VF_ARCH_F_VOCAB, deberta ? 128100 : 30522);
	VF_DEFAULT(max_positions, VF_ARCH_F_MAX_POSITIONS, 512);
	VF_DEFAULT(hidden, VF_ARCH_F_HIDDEN, deberta ? 1536 : 768);
	VF_DEFAULT(layers, VF_ARCH_F_LAYERS, deberta ? 24 : 12);
	VF_DEFAULT(heads, VF_ARCH_F_HEADS, deberta ? 24 : 12);
	VF_DEFAULT(ffn, VF_ARCH_F_FFN, deberta ? 6144 : 3072);
	a->type_vocab = deberta ? 0 : 2;
	TRY(vf__arch_get_int(cfg, "type_vocab_size", 0, &a->type_vocab, &f, what, err));
	a->encoder = true;
	a->tied_embeddings = true;
	a->known |= VF_ARCH_F_TIED | VF_ARCH_F_EXPERTS | VF_ARCH_F_EXPERTS_PER_TOKEN;
	a->experts = a->experts_per_token = 0;
	a->layer_norm = true;
	a->gated_mlp = false;
	a->qkv_bias = a->o_bias = a->mlp_bias = true;
	a->linear_bias = !deberta; /* here: the pooler of BertModel / RobertaModel */
	a->learned_positions = true;
	a->rotary_pct = 0;
	const char *pet = vf_json_get_str(cfg, "position_embedding_type");
	if (pet && strcmp(pet, "absolute") != 0)
		vf_arch_not_understood(a, "position_embedding_type");
	TRY(encoder_head(cfg, family, what, a, err));
	if (!deberta)
		return VF_OK;
	a->eager_attention = true; /* disentangled attention: explicit scores */
	TRY(vf__arch_get_bool(cfg, "position_biased_input", &a->learned_positions, what, err));
	bool rel = false, share = false;
	TRY(vf__arch_get_bool(cfg, "relative_attention", &rel, what, err));
	TRY(vf__arch_get_bool(cfg, "share_att_key", &share, what, err));
	int64_t buckets = -1, maxrel = -1, conv = 0, emb = a->hidden;
	TRY(vf__arch_get_int(cfg, "position_buckets", -1, &buckets, &f, what, err));
	TRY(vf__arch_get_int(cfg, "max_relative_positions", -1, &maxrel, &f, what, err));
	TRY(vf__arch_get_int(cfg, "conv_kernel_size", 0, &conv, &f, what, err));
	TRY(vf__arch_get_int(cfg, "embedding_size", 1, &emb, &f, what, err));
	if (maxrel < 1)
		maxrel = a->max_positions;
	if (rel)
		a->rel_positions = 2 * (buckets > 0 ? buckets : maxrel);
	const char *nre = vf_json_get_str(cfg, "norm_rel_ebd");
	a->emb_norm = rel && nre && strstr(nre, "layer_norm");
	if (rel && !share)
		vf_arch_not_understood(a, "share_att_key");
	if (conv > 0)
		vf_arch_not_understood(a, "conv_kernel_size");
	if (emb != a->hidden)
		vf_arch_not_understood(a, "embedding_size");
	return VF_OK;
}
