/* gguf-arch.c - what a GGUF file's metadata says of its model: the
 * architecture (llama.cpp's <arch>.* keys read as the config.json keys of
 * the same family) and parameter groups by llama.cpp's tensor names. */
#include <stdio.h>
#include <string.h>

#include "vramfit/model/gguf.h"

/* llama.cpp's architecture names -> transformers' model_type */
static const struct {
	const char *gguf;
	const char *model_type;
} FAMILIES[] = {
	{"llama", "llama"},         {"qwen2", "qwen2"},       {"qwen3", "qwen3"},
	{"qwen2moe", "qwen2_moe"},  {"qwen3moe", "qwen3_moe"}, {"gemma", "gemma"},
	{"gemma2", "gemma2"},       {"gemma3", "gemma3_text"}, {"phi3", "phi3"},
	{"granite", "granite"},     {"olmo", "olmo"},         {"olmo2", "olmo2"},
	{"command-r", "cohere"},    {"gptneox", "gpt_neox"},  {"gpt2", "gpt2"},
	{"falcon", "falcon"},       {"stablelm", "stablelm"}, {"bloom", "bloom"},
	{"glm4", "glm4"},           {"phi2", "phi"},
};

/* The number at "<arch>.<suffix>" (an array: its largest element). */
static bool num(const struct vf_gguf *g, const char *suffix, double *v, bool *varies)
{
	char key[160];
	snprintf(key, sizeof key, "%s.%s", g->architecture, suffix);
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(g->metadata, key);
	if (cJSON_IsNumber(j)) {
		*v = j->valuedouble;
		return true;
	}
	if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) == 0)
		return false;
	double best = -1;
	const cJSON *e;
	cJSON_ArrayForEach(e, j)
	{
		if (!cJSON_IsNumber(e))
			return false;
		if (best >= 0 && e->valuedouble != best && varies)
			*varies = true;
		if (e->valuedouble > best)
			best = e->valuedouble;
	}
	*v = best;
	return true;
}

static bool has_tensor(const struct vf_gguf *g, const char *name)
{
	for (size_t i = 0; i < g->ntensors; i++)
		if (strcmp(g->tensors[i].name, name) == 0)
			return true;
	return false;
}

static const struct vf_gguf_tensor *tensor(const struct vf_gguf *g, const char *name)
{
	for (size_t i = 0; i < g->ntensors; i++)
		if (strcmp(g->tensors[i].name, name) == 0)
			return &g->tensors[i];
	return NULL;
}

bool vf_gguf_arch(const struct vf_gguf *g, struct vf_arch *a, struct vf_error *err)
{
	vf_arch_init(a);
	if (!g->architecture[0])
		return false;
	double expert = 0;
	bool varies = false;
	num(g, "expert_count", &expert, NULL);
	const char *mt = NULL;
	for (size_t i = 0; i < sizeof FAMILIES / sizeof FAMILIES[0] && !mt; i++)
		if (strcmp(FAMILIES[i].gguf, g->architecture) == 0)
			mt = FAMILIES[i].model_type;
	if (mt && strcmp(mt, "llama") == 0 && expert > 0)
		mt = "mixtral"; /* llama.cpp names Mixtral "llama" with experts */
	cJSON *cfg = cJSON_CreateObject();
	if (!cfg)
		return false;
	cJSON_AddStringToObject(cfg, "model_type", mt ? mt : g->architecture);
	static const struct {
		const char *gguf, *hf;
	} keys[] = {
		{"embedding_length", "hidden_size"},
		{"block_count", "num_hidden_layers"},
		{"feed_forward_length", "intermediate_size"},
		{"attention.head_count", "num_attention_heads"},
		{"attention.head_count_kv", "num_key_value_heads"},
		{"attention.key_length", "head_dim"},
		{"context_length", "max_position_embeddings"},
		{"attention.sliding_window", "sliding_window"},
		{"expert_count", "num_local_experts"},
		{"expert_used_count", "num_experts_per_tok"},
		{"expert_feed_forward_length", "moe_intermediate_size"},
	};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		double v;
		if (num(g, keys[i].gguf, &v, &varies) && v >= 0)
			cJSON_AddNumberToObject(cfg, keys[i].hf, v);
	}
	if (mt && strstr(mt, "_moe") && expert > 0) {
		cJSON_AddNumberToObject(cfg, "num_experts", expert);
		cJSON_DeleteItemFromObjectCaseSensitive(cfg, "num_local_experts");
	}
	/* the vocabulary: the tokenizer's, else the embedding's rows */
	const struct vf_gguf_tensor *emb = tensor(g, "token_embd.weight");
	if (g->vocab > 0)
		cJSON_AddNumberToObject(cfg, "vocab_size", (double)g->vocab);
	else if (emb && emb->ndim == 2)
		cJSON_AddNumberToObject(cfg, "vocab_size", (double)emb->dims[1]);
	cJSON_AddBoolToObject(cfg, "tie_word_embeddings", !has_tensor(g, "output.weight"));
	bool ok = vf_arch_from_config(cfg, g->path, a, err) == VF_OK;
	cJSON_Delete(cfg);
	if (!ok)
		return false;
	if (!mt)
		vf_arch_not_understood(a, "general.architecture");
	if (varies)
		vf_arch_not_understood(a, "per-layer sizes");
	snprintf(a->source, sizeof a->source, "gguf");
	a->params_exact = g->params;
	return true;
}

void vf_gguf_group_tensor(const char *name, int64_t numel, struct vf_param_groups *gr)
{
	int64_t *to = &gr->other;
	if (strstr(name, "norm"))
		to = &gr->norm;
	else if (strncmp(name, "token_embd", 10) == 0 || strncmp(name, "output.", 7) == 0 ||
		 strncmp(name, "position_embd", 13) == 0)
		to = &gr->embedding;
	else if (strstr(name, "_exps") || strstr(name, "ffn_gate_inp") || strstr(name, "_shexp"))
		to = &gr->experts;
	else if (strstr(name, ".attn_"))
		to = &gr->attention;
	else if (strstr(name, ".ffn_"))
		to = &gr->mlp;
	*to += numel;
	gr->total += numel;
}
