/* test-arch-families.c - the 33 real config.json files of
 * ../shared/realconfigs: each count exact, computed here from the
 * architecture the model's code builds (independently of arch.c), and
 * cross-checked against the published totals in the comments; or the
 * architecture flagged approximate with what was not understood named.
 * Then the key check on configs that carry keys no reader understands. */
#include <stdlib.h>

#include "vf_test.h"
#include "vramfit/base/json.h"
#include "vramfit/model/arch.h"

typedef int64_t I;

/* llama layout: q,k,v,o; gated MLP; 2 RMSNorms per layer + final norm. */
static I llama(I H, I L, I nh, I kv, I hd, I F, I V, bool tied)
{
	return V * H * (tied ? 1 : 2) + L * (2 * H * nh * hd + 2 * H * kv * hd + 3 * H * F + 2 * H) + H;
}

/* + q/k/v biases (qwen2) */
static I qkvb(I L, I nh, I kv, I hd)
{
	return L * (nh * hd + 2 * kv * hd);
}

/* routed experts (gated, width Fe) + router, in `moe` layers */
static I experts(I H, I moe, I E, I Fe)
{
	return moe * (E * 3 * H * Fe + H * E);
}

struct expect {
	const char *dir;
	I total;
	const char *published;
};

static const struct expect *table(size_t *n)
{
	static struct expect t[40];
	size_t k = 0;
#define E(d, v, p) t[k++] = (struct expect){d, v, p}
	/* BLOOM: word embeddings + their LayerNorm, per layer fused qkv,
	 * dense, 4h MLP all with biases, 2 LayerNorms; ln_f; tied head */
	I H = 14336, L = 70, V = 250880;
	E("bloom-176b", V * H + 2 * H + L * (12 * H * H + 9 * H + 4 * H) + 2 * H, "176,247,271,424");
	/* DeepSeek-V3: MLA (q_a 7168x1536, q_a norm, q_b 1536x128x192,
	 * kv_a 7168x576, kv_a norm 512, kv_b 512x128x256, o 16384x7168);
	 * 3 dense layers (18432), 58 MoE layers (256 experts of 2048, one
	 * shared of 2048, router + score correction bias); MTP not counted */
	H = 7168;
	I mla = H * 1536 + 1536 * 128 * 192 + H * 576 + 512 * 128 * 256 + 128 * 128 * H;
	I mla_norms = 1536 + 512;
	E("deepseek-v3",
	  2 * 129280 * H + H + 61 * (mla + mla_norms + 2 * H) + 3 * 3 * H * 18432 +
		  58 * (256 * 3 * H * 2048 + H * 256 + 256 + 3 * H * 2048),
	  "671B (+14B MTP = 685B in the checkpoint)");
	/* Falcon new decoder architecture: qkv (nh + 2 kv) x hd, dense, 4h
	 * MLP, no biases, ln_attn + ln_mlp (LayerNorm), ln_f; head tied */
	H = 14848;
	E("falcon-180b-chat",
	  65024 * H + 80 * (H * (232 + 16) * 64 + H * H + 8 * H * H + 4 * H) + 2 * H,
	  "179.5B in the checkpoint, which stores lm_head separately (+0.97B)");
	H = 8192;
	E("falcon-40b-rw-legacy",
	  65024 * H + 60 * (H * (128 + 16) * 64 + H * H + 8 * H * H + 4 * H) + 2 * H,
	  "41.8B in the checkpoint, which stores lm_head separately (+0.53B)");
	/* Falcon-7B: multi-query (one k, one v head), one LayerNorm */
	H = 4544;
	E("falcon-7b-instruct", 65024 * H + 32 * (H * (71 + 2) * 64 + H * H + 8 * H * H + 2 * H) + 2 * H,
	  "6.92B (7.22B in the checkpoint with its stored lm_head)");
	E("gemma-2b-it", llama(2048, 18, 8, 1, 256, 16384, 256000, true), "2.51B");
	/* gpt-oss-20b: attention with biases + 64 sinks; 32 experts
	 * (gate_up 2880x5760 + bias, down 2880x2880 + bias), router with bias */
	H = 2880;
	I attn = H * 4096 + 4096 + 2 * (H * 512 + 512) + 4096 * H + H + 64;
	I moe = 32 * (H * 5760 + 5760 + 2880 * H + H) + H * 32 + 32;
	E("gpt-oss-20b", 2 * 201088 * H + 24 * (attn + moe + 2 * H) + H, "20.9B");
	/* GPT-2: wte + wpe, per layer c_attn, c_proj, MLP 4h with biases, 2 LN */
	H = 768;
	E("gpt2", 50257 * H + 1024 * H + 12 * (12 * H * H + 9 * H + 4 * H) + 2 * H, "124M");
	/* Granite-3B-code (llama layout with attention and MLP biases, tied) */
	H = 2560;
	E("granite-3b-code-instruct-128k",
	  llama(H, 32, 32, 32, 80, 10240, 49152, true) + 32 * (4 * H + 2 * 10240 + H), "3.48B");
	E("llama-3.1-405b", llama(16384, 126, 128, 8, 128, 53248, 128256, false), "405.85B");
	E("llama-3.1-70b", llama(8192, 80, 64, 8, 128, 28672, 128256, false), "70.55B");
	E("llama-3.1-8b", llama(4096, 32, 32, 8, 128, 14336, 128256, false), "8.03B");
	E("llama-3.2-3b-instruct", llama(3072, 28, 24, 8, 128, 8192, 128256, true), "3.21B");
	E("llama-7b-v1-hf", llama(4096, 32, 32, 32, 128, 11008, 32000, false), "6.74B");
	E("mistral-7b-instruct-v0.2", llama(4096, 32, 32, 8, 128, 14336, 32000, false), "7.24B");
	E("mistral-7b-instruct-v0.3", llama(4096, 32, 32, 8, 128, 14336, 32768, false), "7.25B");
	/* Mixtral: 8 experts of the dense width per layer + router */
	E("mixtral-8x7b-v0.1",
	  llama(4096, 32, 32, 8, 128, 0, 32000, false) + experts(4096, 32, 8, 14336), "46.7B");
	E("wizardlm-2-8x22b",
	  llama(6144, 56, 48, 8, 128, 0, 32000, false) + experts(6144, 56, 8, 16384), "140.6B");
	/* Phi-2 (mixformer): wte; per layer one LayerNorm, Wqkv, out_proj,
	 * fc1, fc2 all with biases; final LayerNorm; lm_head with bias */
	H = 2560;
	E("phi-2-mixformer-legacy",
	  2 * 51200 * H + 51200 + 32 * (4 * (H * H + H) + 2 * H * 4 * H + 5 * H + 2 * H) + 2 * H,
	  "2,779,683,840");
	E("phi-3-mini-128k-instruct", llama(3072, 32, 32, 32, 96, 8192, 32064, false), "3.82B");
	E("qwen2.5-14b", llama(5120, 48, 40, 8, 128, 13824, 152064, false) + qkvb(48, 40, 8, 128),
	  "14.77B");
	E("qwen2.5-32b", llama(5120, 64, 40, 8, 128, 27648, 152064, false) + qkvb(64, 40, 8, 128),
	  "32.76B");
	E("qwen2.5-3b", llama(2048, 36, 16, 2, 128, 11008, 151936, true) + qkvb(36, 16, 2, 128),
	  "3.09B");
	E("qwen2.5-7b", llama(3584, 28, 28, 4, 128, 18944, 152064, false) + qkvb(28, 28, 4, 128),
	  "7.62B");
	/* Qwen3: + q/k RMSNorm of head_dim per layer */
	E("qwen3-0.6b", llama(1024, 28, 16, 8, 128, 3072, 151936, true) + 28 * 256, "0.6B (596M)");
	E("qwen3-32b", llama(5120, 64, 64, 8, 128, 25600, 151936, false) + 64 * 256, "32.8B");
	E("qwen3-8b", llama(4096, 36, 32, 8, 128, 12288, 151936, false) + 36 * 256, "8.2B");
	/* Qwen3-MoE: every layer 128 experts of moe_intermediate_size */
	E("qwen3-235b-a22b",
	  llama(4096, 94, 64, 4, 128, 0, 151936, false) + 94 * 256 + experts(4096, 94, 128, 1536),
	  "235B");
	E("qwen3-30b-a3b",
	  llama(2048, 48, 32, 4, 128, 0, 151936, false) + 48 * 256 + experts(2048, 48, 128, 768),
	  "30.5B");
	/* GPT-NeoX (RedPajama-INCITE-7B): fused qkv, dense, 4h MLP, all with
	 * biases, 2 LayerNorms, untied */
	H = 4096;
	E("redpajama-incite-7b-base", 2 * 50432 * H + 32 * (12 * H * H + 9 * H + 4 * H) + 2 * H,
	  "6.86B");
	/* StableLM (stable-code-3b): LayerNorms with biases, no q/k/v bias */
	H = 2560;
	E("stable-code-3b", llama(H, 32, 32, 32, 80, 6912, 50304, false) + 32 * 2 * H + H,
	  "2,795,443,200");
	/* T5-small: shared embedding (tied), encoder 6 x (qkvo + relu MLP),
	 * decoder 6 x (self + cross attention + MLP), relative bias tables,
	 * weight-only LayerNorms */
	H = 512;
	E("t5-small",
	  32128 * H + 6 * (4 * H * H + 2 * H * 2048) + 6 * (8 * H * H + 2 * H * 2048) + 2 * 32 * 8 +
		  6 * 2 * H + 6 * 3 * H + 2 * H,
	  "60.5M");
	E("tinyllama-1.1b-chat-v1.0", llama(2048, 22, 32, 4, 64, 5632, 32000, false), "1.10B");
#undef E
	*n = k;
	return t;
}

static void test_realconfigs(void)
{
	size_t n;
	const struct expect *t = table(&n);
	CHECK_INT((int64_t)n, 33);
	for (size_t i = 0; i < n; i++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/realconfigs/%s/config.json",
			 vf_test_env("VF_SHARED_DIR", "../shared"), t[i].dir);
		cJSON *j = NULL;
		struct vf_error err = {0};
		struct vf_arch a;
		struct vf_param_groups g;
		if (vf_json_parse_file(path, 0, &j, &err) != VF_OK) {
			CHECK(!"config readable");
			fprintf(stderr, "  %s\n", err.msg);
			continue;
		}
		bool ok = vf_arch_from_config(j, path, &a, &err) == VF_OK && vf_arch_param_groups(&a, &g);
		CHECK(ok);
		if (ok && g.total != t[i].total)
			fprintf(stderr, "  %s: counted %lld, expected %lld (published %s)\n", t[i].dir,
				(long long)g.total, (long long)t[i].total, t[i].published);
		CHECK(ok && g.total == t[i].total);
		/* exact: nothing left not understood */
		if (a.approximate)
			fprintf(stderr, "  %s: not understood: %s\n", t[i].dir, a.not_understood);
		CHECK(!a.approximate);
		cJSON_Delete(j);
	}
}

static struct vf_arch read_text(const char *text)
{
	cJSON *j = NULL;
	struct vf_error err = {0};
	struct vf_arch a;
	vf_arch_init(&a);
	CHECK(vf_json_parse(text, strlen(text), "t", &j, &err) == VF_OK);
	CHECK(vf_arch_from_config(j, "t.json", &a, &err) == VF_OK);
	cJSON_Delete(j);
	return a;
}

/* A size-bearing key no reader understands is named; keys that change no
 * size, and empty values, are not. */
static void test_not_understood(void)
{
	struct vf_arch a = read_text(
		"{\"model_type\":\"llama\",\"hidden_size\":64,\"num_hidden_layers\":2,"
		"\"num_attention_heads\":4,\"intermediate_size\":128,\"vocab_size\":100,"
		"\"kv_lora_rank\":16,\"n_routed_experts\":8,\"rms_norm_eps\":1e-5,"
		"\"mlp_only_layers\":[],\"attention_dropout\":0.1,\"rope_theta\":1e4}");
	CHECK(a.approximate);
	CHECK_STR(a.not_understood, "kv_lora_rank, n_routed_experts");
	/* an unknown model_type is named; its llama-like keys are not */
	a = read_text("{\"model_type\":\"brandnew\",\"hidden_size\":64,\"num_hidden_layers\":2,"
		      "\"num_attention_heads\":4,\"intermediate_size\":128,\"vocab_size\":100}");
	CHECK(a.approximate);
	CHECK_STR(a.not_understood, "model_type brandnew");
	/* a multimodal wrapper: the vision tower is named */
	a = read_text("{\"model_type\":\"gemma3\",\"text_config\":{\"model_type\":\"gemma3_text\","
		      "\"hidden_size\":64,\"num_hidden_layers\":2,\"num_attention_heads\":4,"
		      "\"num_key_value_heads\":2,\"intermediate_size\":128,\"head_dim\":16},"
		      "\"vision_config\":{\"hidden_size\":32}}");
	CHECK(a.approximate);
	CHECK_STR(a.not_understood, "vision_config");
	CHECK_INT(a.vocab, 262208);
	/* mixformer with a block layout not counted here */
	a = read_text("{\"model_type\":\"mixformer-sequential\",\"n_embd\":64,\"n_layer\":2,"
		      "\"n_head\":4,\"architecture\":{\"block_cls\":\"sequential\"}}");
	CHECK(a.approximate);
	CHECK_STR(a.not_understood, "architecture.block_cls");
}

/* Families not among the real configs, from their config classes:
 * qwen2-moe shared expert + gate, decoder_sparse_step and
 * mlp_only_layers; deepseek-v2-lite (no q_lora_rank); llama 4
 * interleaved MoE; olmo2; bert-large; the MTP convention. */
static void test_other_families(void)
{
	struct vf_param_groups g;
	struct vf_arch a = read_text(
		"{\"model_type\":\"qwen2_moe\",\"hidden_size\":64,\"num_hidden_layers\":4,"
		"\"num_attention_heads\":4,\"num_key_value_heads\":2,\"intermediate_size\":96,"
		"\"vocab_size\":100,\"num_experts\":6,\"num_experts_per_tok\":2,"
		"\"moe_intermediate_size\":16,\"shared_expert_intermediate_size\":32,"
		"\"decoder_sparse_step\":2,\"mlp_only_layers\":[3],\"tie_word_embeddings\":false}");
	CHECK(!a.approximate);
	CHECK_INT(a.moe_layers, 1); /* layer 1 only: (i+1) % 2 == 0 and not 3 */
	CHECK(vf_arch_param_groups(&a, &g));
	I H = 64, attn = 4 * (H * 64 + 64 + 2 * (H * 32 + 32) + 64 * H);
	I moe = 6 * 3 * H * 16 + H * 6 + 3 * H * 32 + H;
	CHECK_INT(g.total, 2 * 100 * H + attn + 3 * 3 * H * 96 + moe + 4 * 2 * H + H);
	/* DeepSeek-V2-Lite style: q_lora_rank null, first layer dense */
	a = read_text("{\"model_type\":\"deepseek_v2\",\"hidden_size\":64,\"num_hidden_layers\":3,"
		      "\"num_attention_heads\":4,\"intermediate_size\":96,\"vocab_size\":100,"
		      "\"q_lora_rank\":null,\"kv_lora_rank\":16,\"qk_nope_head_dim\":8,"
		      "\"qk_rope_head_dim\":4,\"v_head_dim\":8,\"n_routed_experts\":4,"
		      "\"num_experts_per_tok\":2,\"moe_intermediate_size\":16,\"n_shared_experts\":2,"
		      "\"first_k_dense_replace\":1,\"moe_layer_freq\":1,\"topk_method\":\"greedy\"}");
	CHECK(!a.approximate);
	CHECK(vf_arch_param_groups(&a, &g));
	I m = H * 4 * 12 + H * 20 + 16 * 4 * 16 + 4 * 8 * H + 16;
	I e = 4 * 3 * H * 16 + H * 4 + 3 * H * 32;
	CHECK_INT(g.total, 2 * 100 * H + 3 * (m + 2 * H) + 3 * H * 96 + 2 * e + H);
	/* Llama 4: MoE every 2nd layer, one shared expert, dense width
	 * intermediate_size_mlp */
	a = read_text("{\"model_type\":\"llama4\",\"text_config\":{\"model_type\":\"llama4_text\","
		      "\"hidden_size\":64,\"num_hidden_layers\":4,\"num_attention_heads\":4,"
		      "\"num_key_value_heads\":2,\"head_dim\":16,\"intermediate_size\":32,"
		      "\"intermediate_size_mlp\":128,\"vocab_size\":100,\"num_local_experts\":4,"
		      "\"num_experts_per_tok\":1,\"interleave_moe_layer_step\":2,"
		      "\"attention_chunk_size\":8192,\"use_qk_norm\":true}}");
	CHECK(!a.approximate);
	CHECK_INT(a.moe_layers, 2);
	CHECK(vf_arch_param_groups(&a, &g));
	attn = 2 * H * 64 + 2 * H * 32;
	CHECK_INT(g.total, 2 * 100 * H + 4 * (attn + 2 * H) + 2 * 3 * H * 128 +
				   2 * (4 * 3 * H * 32 + H * 4 + 3 * H * 32) + H);
	/* OLMo 2: q/k norms of full width, post norms */
	a = read_text("{\"model_type\":\"olmo2\",\"hidden_size\":64,\"num_hidden_layers\":2,"
		      "\"num_attention_heads\":4,\"num_key_value_heads\":2,\"intermediate_size\":96,"
		      "\"vocab_size\":100}");
	CHECK(vf_arch_param_groups(&a, &g));
	CHECK_INT(g.norm, 2 * (2 * H + 64 + 32) + H);
	/* bert-large-uncased: BertModel with its pooler, 335,141,888 */
	a = read_text("{\"model_type\":\"bert\",\"hidden_size\":1024,\"num_hidden_layers\":24,"
		      "\"num_attention_heads\":16,\"intermediate_size\":4096,\"vocab_size\":30522,"
		      "\"max_position_embeddings\":512,\"type_vocab_size\":2}");
	CHECK(vf_arch_param_groups(&a, &g));
	CHECK_INT(g.total, 335141888);
	/* roberta-large: 355,359,744 */
	a = read_text("{\"model_type\":\"roberta\",\"hidden_size\":1024,\"num_hidden_layers\":24,"
		      "\"num_attention_heads\":16,\"intermediate_size\":4096,\"vocab_size\":50265,"
		      "\"max_position_embeddings\":514,\"type_vocab_size\":1}");
	CHECK(vf_arch_param_groups(&a, &g));
	CHECK_INT(g.total, 355359744);
}

/* DeepSeek-V3's MTP convention: one module beyond the 671B count. */
static void test_mtp(void)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/realconfigs/deepseek-v3/config.json",
		 vf_test_env("VF_SHARED_DIR", "../shared"));
	cJSON *j = NULL;
	struct vf_error err = {0};
	struct vf_arch a;
	CHECK(vf_json_parse_file(path, 0, &j, &err) == VF_OK);
	CHECK(vf_arch_from_config(j, path, &a, &err) == VF_OK);
	CHECK_INT(a.mtp_layers, 1);
	I H = 7168;
	I mla = H * 1536 + 1536 * 128 * 192 + H * 576 + 512 * 128 * 256 + 128 * 128 * H + 2048;
	I layer = mla + 2 * H + 256 * 3 * H * 2048 + H * 256 + 256 + 3 * H * 2048;
	/* embed + head + enorm, hnorm, eh_proj, shared-head norm */
	CHECK_INT(vf_arch_mtp_params(&a), layer + 2 * 129280 * H + 3 * H + 2 * H * H);
	cJSON_Delete(j);
}

int main(void)
{
	RUN(test_realconfigs);
	RUN(test_not_understood);
	RUN(test_other_families);
	RUN(test_mtp);
	return vf_test_done();
}
