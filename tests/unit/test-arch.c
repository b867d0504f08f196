/* test-arch.c - architectures from config.json and exact parameter counts:
 * the fixture configs (../shared/fixtures/models), the calibration records'
 * n_params (../shared/groundtruth/calibration.jsonl), published totals. */
#include <stdlib.h>

#include "vf_test.h"
#include "vramfit/model/arch.h"
#include "vramfit/base/buf.h"
#include "vramfit/base/json.h"

static const char *shared(void)
{
	return vf_test_env("VF_SHARED_DIR", "../shared");
}

static cJSON *parse(const char *text)
{
	cJSON *j = NULL;
	struct vf_error err = {0};
	if (vf_json_parse(text, strlen(text), "test", &j, &err) != VF_OK)
		fprintf(stderr, "  %s\n", err.msg);
	return j;
}

/* Total parameters of a config given as JSON text; -1 on failure. */
static int64_t total_of(const char *text)
{
	cJSON *j = parse(text);
	struct vf_arch a;
	struct vf_param_groups g;
	struct vf_error err = {0};
	int64_t r = -1;
	if (j && vf_arch_from_config(j, "test", &a, &err) == VF_OK && vf_arch_param_groups(&a, &g))
		r = g.total;
	else
		fprintf(stderr, "  config failed: %s\n", err.msg);
	cJSON_Delete(j);
	return r;
}

static bool load_fixture_arch(const char *dir, struct vf_arch *a, struct vf_param_groups *g)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/fixtures/models/%s/config.json", shared(), dir);
	cJSON *j = NULL;
	struct vf_error err = {0};
	if (vf_json_parse_file(path, 0, &j, &err) != VF_OK) {
		fprintf(stderr, "  %s\n", err.msg);
		return false;
	}
	bool ok = vf_arch_from_config(j, path, a, &err) == VF_OK && vf_arch_param_groups(a, g);
	if (!ok)
		fprintf(stderr, "  %s\n", err.msg);
	cJSON_Delete(j);
	return ok;
}

static void test_fixture_configs(void)
{
	struct vf_arch a;
	struct vf_param_groups g;
	/* tiny-llama-bf16: EXPECTED.json 218944 */
	CHECK(load_fixture_arch("tiny-llama-bf16", &a, &g));
	CHECK_STR(a.family, "llama");
	CHECK_INT(a.hidden, 64);
	CHECK_INT(a.layers, 2);
	CHECK_INT(a.heads, 4);
	CHECK_INT(a.kv_heads, 2);
	CHECK_INT(a.head_dim, 16);
	CHECK_INT(a.ffn, 172);
	CHECK_INT(a.vocab, 1000);
	CHECK(!a.tied_embeddings);
	CHECK_INT(a.max_positions, 256);
	CHECK_INT(a.experts, 0);
	CHECK_INT(g.total, 218944);
	CHECK_INT(g.embedding, 2 * 1000 * 64);
	CHECK_INT(g.attention, 2 * (64 * 64 * 2 + 2 * 64 * 32));
	CHECK_INT(g.mlp, 2 * 3 * 64 * 172);
	CHECK_INT(g.norm, 2 * 2 * 64 + 64);
	/* the sharded one: 1840256 over its 4 files */
	CHECK(load_fixture_arch("small-llama-bf16-sharded", &a, &g));
	CHECK_INT(a.hidden, 128);
	CHECK_INT(a.layers, 4);
	CHECK_INT(a.ffn, 344);
	CHECK_INT(a.vocab, 4096);
	CHECK_INT(g.total, 1840256);
	/* tiny-gpt2-fp32: tied, learned positions, biases: 172288 */
	CHECK(load_fixture_arch("tiny-gpt2-fp32", &a, &g));
	CHECK_STR(a.family, "gpt2");
	CHECK_INT(a.hidden, 64);
	CHECK_INT(a.layers, 2);
	CHECK_INT(a.heads, 4);
	CHECK_INT(a.ffn, 256); /* n_inner null -> 4 * n_embd */
	CHECK_INT(a.max_positions, 128);
	CHECK(a.tied_embeddings);
	CHECK_INT(g.total, 172288);
	CHECK_INT(g.embedding, 1000 * 64 + 128 * 64);
	/* tiny-t5-fp32: tied, relu, relative attention bias: 196864 */
	CHECK(load_fixture_arch("tiny-t5-fp32", &a, &g));
	CHECK_STR(a.family, "t5");
	CHECK_INT(a.hidden, 64);
	CHECK_INT(a.layers, 2);
	CHECK_INT(a.decoder_layers, 2);
	CHECK_INT(a.heads, 4);
	CHECK_INT(a.head_dim, 16);
	CHECK_INT(a.ffn, 128);
	CHECK_INT(a.vocab, 500);
	CHECK(a.tied_embeddings);
	CHECK(!a.gated_mlp);
	CHECK_INT(g.total, 196864);
}

/* Every distinct arch_cfg of the calibration records, with the family its
 * record was built as (the records carry no model_type): n_params exact. */
static void test_calibration_records(void)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/groundtruth/calibration.jsonl", shared());
	struct vf_buf b;
	struct vf_error err = {0};
	vf_buf_init(&b, 0);
	CHECK(vf_buf_read_file(&b, path, 16u << 20, &err) == VF_OK);
	static const struct {
		const char *arch, *model_type;
	} types[] = {
		{"llama2-7b", "llama"},   {"tinyllama-1.1b", "llama"}, {"gpt2", "gpt2"},
		{"gpt2-medium", "gpt2"},  {"gpt2-large", "gpt2"},      {"gpt-neox-20b", "gpt_neox"},
		{"stories15M", "llama"},  {"stories42M", "llama"},     {"gemma-2b", "gemma"},
		/* built as a llama config with tied embeddings: no q/k/v biases
		 * (the real qwen2 count is checked in test_published_totals) */
		{"qwen2.5-0.5b-like", "llama"},
	};
	bool seen[sizeof types / sizeof types[0]] = {0};
	int records = 0;
	char *save = NULL;
	for (char *line = strtok_r(b.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *r = parse(line);
		const char *arch = vf_json_get_str(r, "arch");
		cJSON *cfg = cJSON_GetObjectItemCaseSensitive(r, "arch_cfg");
		int64_t n_params;
		if (!arch || !cfg || !vf_json_get_i64(r, "n_params", &n_params)) {
			cJSON_Delete(r);
			continue;
		}
		size_t k = 0;
		while (k < sizeof types / sizeof types[0] && strcmp(types[k].arch, arch) != 0)
			k++;
		CHECK(k < sizeof types / sizeof types[0]);
		if (k < sizeof types / sizeof types[0]) {
			seen[k] = true;
			cJSON *c = cJSON_Duplicate(cfg, 1);
			cJSON_AddStringToObject(c, "model_type", types[k].model_type);
			struct vf_arch a;
			struct vf_param_groups g = {0};
			CHECK(vf_arch_from_config(c, arch, &a, &err) == VF_OK);
			CHECK(vf_arch_param_groups(&a, &g));
			if (g.total != n_params)
				fprintf(stderr, "  %s: %lld, expected %lld\n", arch, (long long)g.total,
					(long long)n_params);
			CHECK_INT(g.total, n_params);
			cJSON_Delete(c);
			records++;
		}
		cJSON_Delete(r);
	}
	for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
		if (!seen[k])
			fprintf(stderr, "  no calibration record for %s\n", types[k].arch);
		CHECK(seen[k]);
	}
	CHECK(records > 10);
	vf_buf_release(&b);
}

/* Published parameter totals (model cards / safetensors index totals). */
static void test_published_totals(void)
{
	CHECK_INT(total_of("{\"model_type\":\"llama\",\"hidden_size\":4096,\"intermediate_size\":"
			   "11008,\"num_hidden_layers\":32,\"num_attention_heads\":32,"
			   "\"vocab_size\":32000}"),
		  6738415616LL);
	/* Qwen2.5-0.5B: q/k/v biases, tied */
	CHECK_INT(total_of("{\"model_type\":\"qwen2\",\"hidden_size\":896,\"intermediate_size\":"
			   "4864,\"num_hidden_layers\":24,\"num_attention_heads\":14,"
			   "\"num_key_value_heads\":2,\"vocab_size\":151936,"
			   "\"tie_word_embeddings\":true}"),
		  494032768LL);
	/* Mixtral-8x7B */
	CHECK_INT(total_of("{\"model_type\":\"mixtral\",\"hidden_size\":4096,\"intermediate_size\":"
			   "14336,\"num_hidden_layers\":32,\"num_attention_heads\":32,"
			   "\"num_key_value_heads\":8,\"vocab_size\":32000,"
			   "\"num_local_experts\":8,\"num_experts_per_tok\":2}"),
		  46702792704LL);
	/* Falcon-7B: multi-query, parallel attention, one LayerNorm, tied */
	CHECK_INT(total_of("{\"model_type\":\"falcon\",\"hidden_size\":4544,"
			   "\"num_hidden_layers\":32,\"num_attention_heads\":71,"
			   "\"vocab_size\":65024,\"multi_query\":true,\"parallel_attn\":true,"
			   "\"bias\":false,\"new_decoder_architecture\":false}"),
		  6921720704LL);
	/* T5-small: relu, tied */
	CHECK_INT(total_of("{\"model_type\":\"t5\",\"d_model\":512,\"d_ff\":2048,\"d_kv\":64,"
			   "\"num_layers\":6,\"num_heads\":8,\"vocab_size\":32128,"
			   "\"feed_forward_proj\":\"relu\"}"),
		  60506624LL);
	/* Qwen3-8B: q/k norms, explicit head_dim, untied */
	CHECK_INT(total_of("{\"model_type\":\"qwen3\",\"hidden_size\":4096,\"intermediate_size\":"
			   "12288,\"num_hidden_layers\":36,\"num_attention_heads\":32,"
			   "\"num_key_value_heads\":8,\"head_dim\":128,\"vocab_size\":151936,"
			   "\"tie_word_embeddings\":false}"),
		  8190735360LL);
	/* Gemma 7B: head_dim 256 > hidden / heads, tied by default */
	CHECK_INT(total_of("{\"model_type\":\"gemma\",\"hidden_size\":3072,\"intermediate_size\":"
			   "24576,\"num_hidden_layers\":28,\"num_attention_heads\":16,"
			   "\"num_key_value_heads\":16,\"head_dim\":256,\"vocab_size\":256000}"),
		  8537680896LL);
	/* GPT-2 XL */
	CHECK_INT(total_of("{\"model_type\":\"gpt2\",\"n_embd\":1600,\"n_layer\":48,\"n_head\":25,"
			   "\"vocab_size\":50257}"),
		  1557611200LL);
}

static void test_gemma3_nested_and_errors(void)
{
	cJSON *j = parse("{\"model_type\":\"gemma3\",\"text_config\":{\"model_type\":"
			 "\"gemma3_text\",\"hidden_size\":256,\"num_hidden_layers\":2,"
			 "\"num_attention_heads\":4,\"num_key_value_heads\":1,\"head_dim\":64,"
			 "\"intermediate_size\":512,\"vocab_size\":1000}}");
	struct vf_arch a;
	struct vf_param_groups g;
	struct vf_error err = {0};
	CHECK(vf_arch_from_config(j, "g3.json", &a, &err) == VF_OK);
	CHECK_STR(a.family, "gemma3");
	CHECK_INT(a.hidden, 256);
	CHECK_INT(a.head_dim, 64);
	CHECK(a.tied_embeddings);
	CHECK(vf_arch_param_groups(&a, &g));
	/* 4 norms per layer + q/k norms + final */
	CHECK_INT(g.norm, 2 * 4 * 256 + 2 * 2 * 64 + 256);
	CHECK_INT(g.embedding, 1000 * 256);
	cJSON_Delete(j);

	j = parse("{\"model_type\":\"llama\",\"hidden_size\":\"big\",\"num_hidden_layers\":2}");
	CHECK(vf_arch_from_config(j, "bad.json", &a, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "bad.json: field hidden_size: expected an integer");
	cJSON_Delete(j);
	j = parse("{\"model_type\":\"llama\",\"num_hidden_layers\":2}");
	CHECK(vf_arch_from_config(j, "nohidden.json", &a, &err) == VF_ENOTFOUND);
	CHECK_CONTAINS(err.msg, "nohidden.json: no hidden size");
	cJSON_Delete(j);
	j = parse("[1,2]");
	CHECK(vf_arch_from_config(j, "arr.json", &a, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "arr.json: expected a JSON object");
	cJSON_Delete(j);
	/* unknown family: generic fallback, heads unknown -> no param count */
	j = parse("{\"model_type\":\"newthing\",\"hidden_size\":64,\"num_hidden_layers\":3}");
	CHECK(vf_arch_from_config(j, "new.json", &a, &err) == VF_OK);
	CHECK_STR(a.family, "newthing");
	CHECK_INT(a.heads, -1);
	CHECK(!(a.known & VF_ARCH_F_HEADS));
	CHECK(!vf_arch_param_groups(&a, &g));
	cJSON_Delete(j);
	/* absurd sizes: no overflow, just no count */
	j = parse("{\"model_type\":\"llama\",\"hidden_size\":1099511627776,\"num_hidden_layers\":"
		  "4096,\"num_attention_heads\":1,\"intermediate_size\":1099511627776,"
		  "\"vocab_size\":1099511627776}");
	CHECK(vf_arch_from_config(j, "huge.json", &a, &err) == VF_OK);
	CHECK(!vf_arch_param_groups(&a, &g));
	cJSON_Delete(j);
	static const char *const fams[] = {"t5", "gpt2", "gpt_neox", "falcon", "qwen2", "gemma3"};
	for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++) {
		char text[512];
		snprintf(text, sizeof text,
			 "{\"model_type\":\"%s\",\"hidden_size\":1099511627776,\"d_model\":"
			 "1099511627776,\"n_embd\":1099511627776,\"num_hidden_layers\":4096,"
			 "\"num_layers\":4096,\"n_layer\":4096,\"d_kv\":"
			 "1099511627776,\"num_heads\":1,\"n_head\":1,\"num_attention_heads\":1}",
			 fams[i]);
		j = parse(text);
		CHECK(vf_arch_from_config(j, "huge.json", &a, &err) == VF_OK);
		CHECK(!vf_arch_param_groups(&a, &g));
		cJSON_Delete(j);
	}
	/* counts that loops run over are bounded before any loop, the field
	 * named (fuzz finding: a Qwen2-MoE config with n_layer 666660128023
	 * spun for minutes counting its sparse layers) */
	j = parse("{\"architectures\":[\"Qwen2MoeForCausalLM\"],\"n_layer\":666660128023}");
	CHECK(vf_arch_from_config(j, "moe.json", &a, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "moe.json: field n_layer: expected an integer from 0 to 4096");
	cJSON_Delete(j);
	j = parse("{\"model_type\":\"llama\",\"hidden_size\":64,\"num_hidden_layers\":4097}");
	CHECK(vf_arch_from_config(j, "deep.json", &a, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "deep.json: field num_hidden_layers: expected an integer from 0 to 4096");
	cJSON_Delete(j);
	j = parse("{\"model_type\":\"deepseek_v3\",\"hidden_size\":64,\"num_hidden_layers\":4,"
		  "\"n_routed_experts\":1000000}");
	CHECK(vf_arch_from_config(j, "wide.json", &a, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "wide.json: field n_routed_experts: expected an integer from 0 to 65536");
	cJSON_Delete(j);
	/* fuzz finding: a default ffn of 4 x a huge hidden size overflowed */
	j = parse("{\"model_type\":\"gpt_neox\",\"hidden_size\":4099276460824143536,"
		  "\"num_hidden_layers\":44}");
	CHECK(vf_arch_from_config(j, "neox.json", &a, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "neox.json: field hidden_size: expected an integer from 1 to");
	cJSON_Delete(j);
}

static void test_to_json(void)
{
	struct vf_arch a;
	struct vf_param_groups g;
	CHECK(load_fixture_arch("tiny-llama-bf16", &a, &g));
	cJSON *o = vf_arch_to_json(&a);
	CHECK_STR(vf_json_get_str(o, "family"), "llama");
	int64_t v;
	CHECK(vf_json_get_i64(o, "kv_heads", &v) && v == 2);
	CHECK_STR(vf_json_get_str(o, "source"), "config.json");
	bool t = true;
	CHECK(vf_json_get_bool(o, "tied_embeddings", &t) && !t);
	CHECK(cJSON_GetObjectItem(o, "inferred") == NULL);
	cJSON_Delete(o);
	vf_arch_init(&a);
	a.hidden = 8;
	a.known = VF_ARCH_F_HIDDEN;
	a.inferred = VF_ARCH_F_HIDDEN;
	o = vf_arch_to_json(&a);
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(o, "layers")));
	CHECK(cJSON_IsArray(cJSON_GetObjectItem(o, "inferred")));
	cJSON_Delete(o);
}

int main(void)
{
	RUN(test_fixture_configs);
	RUN(test_calibration_records);
	RUN(test_published_totals);
	RUN(test_gemma3_nested_and_errors);
	RUN(test_to_json);
	return vf_test_done();
}
