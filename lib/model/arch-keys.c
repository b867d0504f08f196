/* arch-keys.c - no silent wrong count: every key of a config.json that
 * bears on a model's size is either understood by its family's reader or
 * named, and the architecture marked approximate.
 *
 * Data, not code: `size_patterns` says which key names bear on size
 * (experts, ranks, head dims, rotary fractions, biases, layer patterns,
 * windows, sub-configs, ...); `not_size` lists the names matching a
 * pattern that change no parameter count nor memory term (epsilons,
 * dropouts, token ids, routing policy); `understood` is, per family, the
 * size-bearing keys its reader reads. A key of a new release (or of a
 * family read as llama-like) that matches a pattern and is in neither
 * list is named; so is a key that matches no pattern and is not on the
 * `generic` list of keys known to change nothing counted, and a value of
 * the activation, the rope type or the dtype that is not a known one. */
#include <stdio.h>
#include <string.h>

#include "arch-internal.h"

static const char *const size_patterns[] = {
	"expert", "lora", "rank", "head", "dim", "rotary", "rope_pct", "partial", "bias",
	"layer", "window", "_config", "shared", "moe", "sparse", "dense", "nextn", "interleave",
	"chunk", "intermediate", "ffn", "hidden_size", "embd", "embed", "vocab", "d_model",
	"d_ff", "d_kv", "kv", "tie_", "parallel", "router", "proj", "sink", "inner", "position",
	"gate", "block", "alibi", "qkv", "qk_", "norm", "architecture", "n_", "num_", "_size",
	"mlp", "attn", "attention", "group", "width", "bucket", "conv", "relative", "pooler",
	"multi_query", "decoder", "encoder", "mtp", "mamba", "ssm", "state", "adapter", "mm_",
	"vision", "image", "patch", "audio",
};

/* Names (exact) or suffixes (leading '*') that match a pattern and change
 * no size. */
static const char *const not_size[] = {
	"*_eps", "*_epsilon", "*dropout", "*_pdrop", "*_prob", "*_coef", "*_range", "*_theta",
	"*_token_id", "*_token_ids", "*_multiplier", "*softcapping", "*_scalar", "*_act",
	"*_fn", "*_func", "*_method", "*_type", "*_version", "*_map", "architectures",
	"rope_scaling", "routed_scaling_factor", "rotary_scaling_factor", "rotary_emb_base",
	"n_group", "topk_group", "ep_size", "pretraining_tp", "output_router_logits",
	"router_jitter_noise", "initializer_range", "hidden_act", "hidden_activation",
	"activation_function", "attention_softmax_in_fp32", "apply_residual_connection_post_layernorm",
	"slow_but_exact", "masked_softmax_fusion", "is_encoder_decoder", "is_decoder",
	"n_ctx", "task_specific_params", "reorder_and_upcast_attn", "scale_attn_weights",
	"scale_attn_by_inverse_layer_idx", "summary_first_dropout", "summary_proj_to_labels",
	"summary_use_proj", "summary_activation", "relative_attention_max_distance",
	"is_gated_act", "original_max_position_embeddings", "initial_context_length",
	"flash_rotary", "fused_dense", "attention_chunk_size", "attn_temperature_tuning",
	"floor_scale", "attn_scale", "no_rope_layers", "norm_topk_prob", "use_qk_norm_in_l2",
	"max_window_layers", "use_sliding_window", "attention_dropout", "clip_qkv",
	"logits_scaling", "layer_norm_eps", "rms_norm_eps", "norm_eps", "layer_norm_epsilon",
	"quantization_config", "use_cache", "torch_dtype", "dtype", "gradient_checkpointing",
	"num_labels", "id2label", "label2id", "decoder_start_token_id", "attention_multiplier",
	"embedding_multiplier", "residual_multiplier", "use_mrope", "pos_att_type",
	"swiglu_limit", "attention_window_size", "use_bidirectional_attention",
	"final_logit_softcapping", "attn_logit_softcapping", "query_pre_attn_scalar",
	"boi_token_index", "eoi_token_index", "image_token_index", "mm_tokens_per_image",
	"output_hidden_states", "output_attentions", "position_embedding_type",
	"scale_decoder_outputs",
};

/* Keys that match no size pattern and are known to change nothing the
 * estimate counts: PretrainedConfig's own attributes and generation
 * defaults, the config file's bookkeeping, and the families' numerics
 * (rope bases and scalings, initialisers, routing scores). A key that
 * matches no pattern and is not here is named: not understood. */
static const char *const generic[] = {
	"model_type", "transformers_version", "_name_or_path", "auto_map", "initializer_range",
	"initializer_factor", "init_std", "use_cache", "torch_dtype", "dtype", "rope_theta",
	"rope_scaling", "rope_parameters", "pretraining_tp", "use_mrope", "task_specific_params",
	"masked_softmax_fusion", "slow_but_exact", "max_sequence_length", "output_past",
	"routed_scaling_factor", "scoring_func", "topk_method", "initial_context_length",
	"swiglu_limit", "return_dict", "output_hidden_states", "output_attentions", "torchscript",
	"use_bfloat16", "tf_legacy_loss", "is_encoder_decoder", "is_decoder", "add_cross_attention",
	"tie_encoder_decoder", "max_length", "min_length", "do_sample", "early_stopping",
	"num_beams", "temperature", "top_k", "top_p", "typical_p", "repetition_penalty",
	"length_penalty", "no_repeat_ngram_size", "bad_words_ids", "output_scores",
	"return_dict_in_generate", "remove_invalid_values", "suppress_tokens", "finetuning_task",
	"tokenizer_class", "prefix", "problem_type", "_attn_implementation",
	"attn_implementation", "use_return_dict", "keys_to_ignore_at_inference", "bf16", "fp16",
	"use_flash_attn", "flash_attn", "use_flash_attention_2", "fp32_residual_connection",
	"z_loss_coef", "aux_loss_coef", "router_aux_loss_coef", "logit_scale", "rope_interleaved",
	"rotary_emb_interleaved", "emb_pdrop", "license", "model_name", "seq_length", "dropout_rate",
	"classifier_dropout", "time_step_min", "time_step_max", "time_step_floor", "time_step_limit",
	"logits_soft_cap", "w_init_variance_scale", "final_w_init_variance_scale", "ignore_index",
	"ctc_loss_reduction", "ctc_zero_infinity", "apply_spec_augment", "contrastive_logits_temperature",
	"diversity_loss_weight",
};

/* Values of the keys the estimate reads that it knows (transformers'
 * ACT2FN, ROPE_INIT_FUNCTIONS' rope types, torch dtypes); another value
 * is named: transformers would refuse it or the estimate not count it. */
static const char *const known_acts =
	"gelu gelu_new gelu_fast gelu_pytorch_tanh gelu_python gelu_accurate gelu_10 quick_gelu "
	"relu relu2 relu6 leaky_relu silu swish mish tanh sigmoid linear laplace prelu xielu "
	"geglu swiglu gelu_python_tanh";
static const char *const known_ropes = "default linear dynamic yarn longrope llama3 su mrope "
				       "proportional";
static const char *const known_dtypes = "float32 float16 bfloat16 float64 auto float bfloat half "
					"float8_e4m3fn";

/* Per family: the size-bearing keys its reader reads. */
#define LL "hidden_size num_hidden_layers num_attention_heads num_key_value_heads head_dim " \
	   "intermediate_size vocab_size max_position_embeddings tie_word_embeddings "       \
	   "attention_bias mlp_bias sliding_window layer_types partial_rotary_factor "        \
	   "attention_head_dim text_config "
static const struct {
	const char *family;
	const char *keys; /* space-separated */
} understood[] = {
	{"llama", LL},
	{"mistral", LL},
	{"mixtral", LL "num_local_experts num_experts_per_tok"},
	{"qwen2", LL},
	{"qwen3", LL},
	{"gemma", LL},
	{"gemma2", LL},
	{"gemma3", LL "text_config"},
	{"gemma3_text", LL},
	{"phi3", LL},
	{"granite", LL},
	{"olmo", LL},
	{"olmo2", LL},
	{"cohere", LL "use_qk_norm"},
	{"glm", LL},
	{"glm4", LL},
	{"qwen2_moe", LL "num_experts num_experts_per_tok moe_intermediate_size "
		      "decoder_sparse_step mlp_only_layers shared_expert_intermediate_size"},
	{"qwen3_moe", LL "num_experts num_experts_per_tok moe_intermediate_size "
		      "decoder_sparse_step mlp_only_layers"},
	{"deepseek_v2", LL "q_lora_rank kv_lora_rank qk_nope_head_dim qk_rope_head_dim "
			"v_head_dim n_routed_experts num_experts_per_tok moe_intermediate_size "
			"n_shared_experts first_k_dense_replace moe_layer_freq topk_method "
			"num_nextn_predict_layers"},
	{"deepseek_v3", LL "q_lora_rank kv_lora_rank qk_nope_head_dim qk_rope_head_dim "
			"v_head_dim n_routed_experts num_experts_per_tok moe_intermediate_size "
			"n_shared_experts first_k_dense_replace moe_layer_freq topk_method "
			"num_nextn_predict_layers"},
	{"gpt_oss", LL "num_local_experts num_experts_per_tok experts_per_token"},
	{"llama4", LL "text_config num_local_experts num_experts_per_tok intermediate_size_mlp "
		   "interleave_moe_layer_step moe_layers use_qk_norm"},
	{"llama4_text", LL "num_local_experts num_experts_per_tok intermediate_size_mlp "
			"interleave_moe_layer_step moe_layers use_qk_norm"},
	{"granitemoe", LL "num_local_experts num_experts_per_tok"},
	{"granitemoeshared", LL "num_local_experts num_experts_per_tok shared_intermediate_size"},
	{"phi", "hidden_size num_hidden_layers num_attention_heads num_key_value_heads "
		"intermediate_size vocab_size max_position_embeddings partial_rotary_factor "
		"qk_layernorm tie_word_embeddings"},
	{"phi-msft", "n_embd n_layer n_head n_head_kv n_inner vocab_size n_positions rotary_dim "
		     "tie_word_embeddings"},
	{"mixformer-sequential", "n_embd n_layer n_head n_head_kv n_inner vocab_size n_positions "
				 "rotary_dim tie_word_embeddings architecture"},
	{"stablelm", LL "use_qkv_bias qk_layernorm use_parallel_residual"},
	{"stablelm_epoch", LL "num_heads rope_pct use_qkv_bias qk_layernorm "
			   "use_parallel_residual"},
	{"bloom", "hidden_size n_embed n_layer num_hidden_layers num_attention_heads n_head "
		  "vocab_size tie_word_embeddings"},
	{"falcon", "hidden_size num_hidden_layers num_attention_heads num_kv_heads n_head_kv "
		   "ffn_hidden_size vocab_size max_position_embeddings head_dim "
		   "new_decoder_architecture multi_query parallel_attn bias tie_word_embeddings "
		   "num_ln_in_parallel_attn alibi n_layer n_head"},
	{"RefinedWeb", "hidden_size n_layer n_head n_head_kv vocab_size multi_query "
		       "parallel_attn bias alibi tie_word_embeddings new_decoder_architecture"},
	{"RefinedWebModel", "hidden_size n_layer n_head n_head_kv vocab_size multi_query "
			    "parallel_attn bias alibi tie_word_embeddings"},
	{"gpt2", "n_embd n_layer n_head n_positions n_inner vocab_size hidden_size "
		 "num_hidden_layers num_attention_heads max_position_embeddings "
		 "tie_word_embeddings"},
	{"gpt_neox", "hidden_size num_hidden_layers num_attention_heads intermediate_size "
		     "vocab_size max_position_embeddings rotary_pct partial_rotary_factor "
		     "use_parallel_residual tie_word_embeddings attention_bias"},
	{"t5", "d_model num_layers num_heads d_kv d_ff vocab_size n_positions "
	       "num_decoder_layers relative_attention_num_buckets tie_word_embeddings "
	       "feed_forward_proj"},
	{"mt5", "d_model num_layers num_heads d_kv d_ff vocab_size n_positions "
		"num_decoder_layers relative_attention_num_buckets tie_word_embeddings "
		"feed_forward_proj"},
	{"umt5", "d_model num_layers num_heads d_kv d_ff vocab_size n_positions "
		 "num_decoder_layers relative_attention_num_buckets tie_word_embeddings "
		 "feed_forward_proj"},
	{"bert", "hidden_size num_hidden_layers num_attention_heads intermediate_size vocab_size "
		 "max_position_embeddings type_vocab_size"},
	{"roberta", "hidden_size num_hidden_layers num_attention_heads intermediate_size "
		    "vocab_size max_position_embeddings type_vocab_size"},
	{"xlm-roberta", "hidden_size num_hidden_layers num_attention_heads intermediate_size "
			"vocab_size max_position_embeddings type_vocab_size"},
	{"deberta-v2", "hidden_size num_hidden_layers num_attention_heads intermediate_size "
		       "vocab_size max_position_embeddings type_vocab_size position_biased_input "
		       "relative_attention share_att_key position_buckets max_relative_positions "
		       "norm_rel_ebd conv_kernel_size embedding_size"},
};

static bool word_in(const char *list, const char *word)
{
	size_t n = strlen(word);
	if (n == 0) /* strstr finds "" everywhere: no progress */
		return false;
	for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
			return true;
	return false;
}

/* What a key is to the estimate: one that may bear on a size, one known
 * to change nothing it counts, or one it does not know. */
enum key_kind { KEY_SIZE, KEY_HARMLESS, KEY_UNKNOWN };

static bool in_list(const char *const *l, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(l[i], key) == 0)
			return true;
	return false;
}

static bool not_size_key(const char *key);

static enum key_kind key_kind(const char *key)
{
	bool match = false;
	for (size_t i = 0; i < sizeof size_patterns / sizeof size_patterns[0] && !match; i++)
		match = strstr(key, size_patterns[i]) != NULL;
	if (!match)
		return in_list(generic, sizeof generic / sizeof generic[0], key) || not_size_key(key)
			       ? KEY_HARMLESS
			       : KEY_UNKNOWN;
	return not_size_key(key) ? KEY_HARMLESS : KEY_SIZE;
}

/* The not_size list: exact names and suffixes ('*'). */
static bool not_size_key(const char *key)
{
	size_t n = strlen(key);
	for (size_t i = 0; i < sizeof not_size / sizeof not_size[0]; i++) {
		const char *e = not_size[i];
		if (e[0] == '*') {
			size_t k = strlen(e + 1);
			if (n >= k && strcmp(key + n - k, e + 1) == 0)
				return true;
		} else if (strcmp(key, e) == 0) {
			return true;
		}
	}
	return false;
}

/* A value of a key the estimate reads (the activation, the rope type,
 * the dtype) that it does not know: named as "key value". */
static void check_value(const cJSON *cfg, const char *key, const char *known, const char *prefix,
			struct vf_arch *a)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, key);
	const char *val = cJSON_IsString(v) ? v->valuestring : NULL;
	char path[160];
	if (!val && cJSON_IsObject(v) && strcmp(key, "rope_scaling") == 0) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(v, "rope_type");
		if (!cJSON_IsString(t))
			t = cJSON_GetObjectItemCaseSensitive(v, "type");
		val = cJSON_IsString(t) ? t->valuestring : NULL;
		snprintf(path, sizeof path, "%s%s.rope_type", prefix, key);
	} else {
		snprintf(path, sizeof path, "%s%s", prefix, key);
	}
	if (!val || !val[0] || strlen(val) > 40 || word_in(known, val) ||
	    (strncmp(val, "torch.", 6) == 0 && word_in(known, val + 6)))
		return;
	char name[224];
	snprintf(name, sizeof name, "%s %s", path, val);
	vf_arch_not_understood(a, name);
}

/* null, false, 0, "", [] and {} add nothing whatever the key means. */
static bool is_empty(const cJSON *v)
{
	if (cJSON_IsNull(v) || cJSON_IsFalse(v))
		return true;
	if (cJSON_IsNumber(v))
		return v->valuedouble == 0;
	if (cJSON_IsString(v))
		return v->valuestring[0] == 0;
	if (cJSON_IsArray(v) || cJSON_IsObject(v))
		return v->child == NULL;
	return false;
}

void vf_arch_check_keys(const cJSON *cfg, const char *family, const char *prefix,
			struct vf_arch *a)
{
	const char *keys = vf__arch_ssm_keys(family); /* ssm.c's families */
	if (!keys)
		keys = LL; /* an unknown family is read as llama-like */
	for (size_t i = 0; i < sizeof understood / sizeof understood[0]; i++)
		if (strcmp(understood[i].family, family) == 0)
			keys = understood[i].keys;
	const cJSON *v;
	cJSON_ArrayForEach(v, cfg)
	{
		if (!v->string || is_empty(v) || key_kind(v->string) == KEY_HARMLESS ||
		    word_in(keys, v->string))
			continue;
		char name[128];
		snprintf(name, sizeof name, "%s%s", prefix, v->string[0] ? v->string : "\"\"");
		vf_arch_not_understood(a, name);
	}
	check_value(cfg, "hidden_act", known_acts, prefix, a);
	check_value(cfg, "hidden_activation", known_acts, prefix, a);
	check_value(cfg, "activation_function", known_acts, prefix, a);
	check_value(cfg, "rope_scaling", known_ropes, prefix, a);
	check_value(cfg, "torch_dtype", known_dtypes, prefix, a);
	check_value(cfg, "dtype", known_dtypes, prefix, a);
}
