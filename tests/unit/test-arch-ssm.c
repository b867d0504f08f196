/* test-arch-ssm.c - the families of lib/model/ssm.c, speech.c and vlm.c
 * (Mamba, Mamba-2, Jamba, Granite-4 hybrids, Falcon-H1, RecurrentGemma, Zamba2, Nemotron-H, ChatGLM, InternLM2, Whisper, ViT, DINOv2, Qwen2-VL, Qwen2.5-VL, Gemma-3
 * multimodal, LLaVA-OneVision, LLaVA-NeXT, Qwen3-VL, Llama-4, InternVL, SigLIP2) from
 * configs generated here, each count computed in this file from the
 * modules the model's code builds, term by term (not by calling the
 * library's helpers); MoE active parameters; keys not understood named;
 * the SSM terms of the estimator (recurrent state, no KV cache). */
#include <stdlib.h>

#include "vf_test.h"
#include "vramfit/base/json.h"
#include "vramfit/estimate/ssm.h"
#include "vramfit/model/arch.h"
#include "vramfit/model/towers.h"

typedef int64_t I;

static cJSON *parse(const char *s)
{
	cJSON *j = cJSON_Parse(s);
	if (!j) {
		fprintf(stderr, "bad test JSON: %s\n", s);
		exit(2);
	}
	return j;
}

static I count(const char *json, struct vf_arch *a)
{
	struct vf_error err = {0};
	cJSON *j = parse(json);
	struct vf_param_groups g;
	I total = -1;
	if (vf_arch_from_config(j, "gen.json", a, &err) == VF_OK && vf_arch_param_groups(a, &g))
		total = g.total;
	else
		fprintf(stderr, "  count failed: %s\n", err.msg);
	cJSON_Delete(j);
	return total;
}

/* Mamba-1 block: norm, in_proj, conv (+bias), x_proj, dt_proj (+bias),
 * A_log, D, out_proj. */
static I mamba1_block(I h, I i, I n, I k, I r, bool bias, bool conv_bias)
{
	I in_proj = h * 2 * i + (bias ? 2 * i : 0);
	I conv = i * k + (conv_bias ? i : 0);
	I x_proj = i * (r + 2 * n);
	I dt_proj = r * i + i;
	I out_proj = i * h + (bias ? h : 0);
	return h + in_proj + conv + x_proj + dt_proj + i * n + i + out_proj;
}

static void test_mamba(void)
{
	struct vf_arch a;
	/* 3 layers of 96, expand 2, state 8, kernel 3, rank auto = 6, tied */
	I h = 96, L = 3, V = 1000, i = 192, n = 8, k = 3, r = 6;
	CHECK_INT(count("{\"model_type\":\"mamba\",\"hidden_size\":96,\"num_hidden_layers\":3,"
			"\"vocab_size\":1000,\"state_size\":8,\"expand\":2,\"conv_kernel\":3,"
			"\"time_step_rank\":\"auto\"}",
			&a),
		  V * h + L * mamba1_block(h, i, n, k, r, false, true) + h);
	CHECK(!a.approximate);
	CHECK_INT(a.ssm_layers, 3);
	CHECK_INT(a.attn_layers, 0);
	/* explicit rank, biases, untied, no conv bias */
	CHECK_INT(count("{\"model_type\":\"mamba\",\"hidden_size\":96,\"num_hidden_layers\":3,"
			"\"vocab_size\":1000,\"state_size\":8,\"expand\":2,\"conv_kernel\":3,"
			"\"time_step_rank\":10,\"use_bias\":true,\"use_conv_bias\":false,"
			"\"tie_word_embeddings\":false}",
			&a),
		  2 * V * h + L * mamba1_block(h, i, n, k, 10, true, false) + h);
	/* MambaConfig defaults: 768 wide, 32 layers, vocabulary 50280 */
	CHECK_INT(count("{\"model_type\":\"mamba\"}", &a),
		  50280 * 768 + 32 * mamba1_block(768, 1536, 16, 4, 48, false, true) + 768);
	/* a size key no reader knows is named */
	count("{\"model_type\":\"mamba\",\"hidden_size\":64,\"num_hidden_layers\":2,"
	      "\"ssm_cfg\":{\"d_state\":64}}",
	      &a);
	CHECK(a.approximate);
	CHECK_CONTAINS(a.not_understood, "ssm_cfg");
}

static void test_mamba2(void)
{
	struct vf_arch a;
	/* 128 wide, expand 2 -> 256 = 8 heads x 32, 2 groups, state 16 */
	I h = 128, L = 4, V = 500, i = 256, g = 2, n = 16, nh = 8, k = 4;
	I conv_dim = i + 2 * g * n;
	I block = h                                 /* norm */
		  + h * (i + conv_dim + nh)         /* in_proj: z, xBC, dt */
		  + conv_dim * k + conv_dim         /* conv1d + bias */
		  + 3 * nh                          /* dt_bias, A_log, D */
		  + i                               /* gated norm */
		  + i * h;                          /* out_proj */
	CHECK_INT(count("{\"model_type\":\"mamba2\",\"hidden_size\":128,\"num_hidden_layers\":4,"
			"\"vocab_size\":500,\"state_size\":16,\"expand\":2,\"n_groups\":2,"
			"\"num_heads\":8,\"head_dim\":32,\"conv_kernel\":4,\"chunk_size\":64}",
			&a),
		  2 * V * h + L * block + h);
	CHECK(!a.approximate);
	CHECK_INT(a.ssm_heads, 8);
	CHECK_INT(a.ssm_conv_dim, conv_dim);
	/* heads that do not tile the inner width are named */
	count("{\"model_type\":\"mamba2\",\"hidden_size\":128,\"num_hidden_layers\":4,"
	      "\"num_heads\":3,\"head_dim\":32}",
	      &a);
	CHECK(a.approximate);
}

static void test_jamba(void)
{
	struct vf_arch a;
	/* 8 layers: attention on 1 and 5 (period 4, offset 1), experts on
	 * odd layers (period 2, offset 1): 4 MoE layers of 4 experts */
	I h = 64, L = 8, nh = 4, kv = 2, hd = 16, F = 96, V = 300, E = 4;
	I i = 128, n = 8, k = 4, r = 4;
	I attn = h * nh * hd * 2 + h * kv * hd * 2;
	I mamba = mamba1_block(h, i, n, k, r, false, true) - h /* its norm counted below */
		  + r + 2 * n;                                 /* dt, B, C norms */
	I mlp = 3 * h * F, moe = E * 3 * h * F + h * E;
	I total = 2 * V * h + 2 * attn + 6 * mamba + 4 * mlp + 4 * moe + L * 2 * h + h;
	CHECK_INT(count("{\"model_type\":\"jamba\",\"hidden_size\":64,\"num_hidden_layers\":8,"
			"\"num_attention_heads\":4,\"num_key_value_heads\":2,\"intermediate_size\":96,"
			"\"vocab_size\":300,\"num_experts\":4,\"num_experts_per_tok\":2,"
			"\"attn_layer_period\":4,\"attn_layer_offset\":1,\"expert_layer_period\":2,"
			"\"expert_layer_offset\":1,\"mamba_d_state\":8,\"mamba_d_conv\":4,"
			"\"mamba_expand\":2,\"mamba_dt_rank\":4}",
			&a),
		  total);
	CHECK(!a.approximate);
	CHECK_INT(a.attn_layers, 2);
	CHECK_INT(a.ssm_layers, 6);
	/* active: two of four experts in each of the 4 MoE layers */
	CHECK_INT(vf_arch_active_params(&a), total - 4 * 2 * 3 * h * F);
}

static void test_granite_hybrid(void)
{
	struct vf_arch a;
	/* 4 layers, attention on layer 2; Mamba-2 of 4 heads x 32 (expand 2 of
	 * 64), 1 group, state 16; 8 experts of 48 (2 per token) + shared 80 */
	I h = 64, L = 4, nh = 4, kv = 2, hd = 16, V = 300, E = 8, F = 48, S = 80;
	I i = 128, n = 16, k = 4, mh = 4, cd = i + 2 * n;
	I attn = 2 * h * nh * hd + 2 * h * kv * hd;
	I mamba = h * (i + cd + mh) + cd * k + cd + 3 * mh + i + i * h;
	I ffn = 3 * h * S + E * (h * 2 * F + F * h) + h * E;
	I total = V * h + attn + 3 * mamba + L * (ffn + 2 * h) + h;
	CHECK_INT(count("{\"model_type\":\"granitemoehybrid\",\"hidden_size\":64,"
			"\"num_hidden_layers\":4,\"num_attention_heads\":4,\"num_key_value_heads\":2,"
			"\"vocab_size\":300,\"intermediate_size\":48,\"shared_intermediate_size\":80,"
			"\"num_local_experts\":8,\"num_experts_per_tok\":2,\"tie_word_embeddings\":true,"
			"\"mamba_n_heads\":4,\"mamba_n_groups\":1,\"mamba_d_state\":16,"
			"\"mamba_d_head\":32,\"mamba_expand\":2,\"position_embedding_type\":\"nope\","
			"\"layer_types\":[\"mamba\",\"mamba\",\"attention\",\"mamba\"]}",
			&a),
		  total);
	CHECK(!a.approximate);
	CHECK_INT(a.attn_layers, 1);
	CHECK_INT(vf_arch_active_params(&a), total - L * 6 * 3 * h * F);
	/* Bamba: one gated MLP of intermediate_size, attention where
	 * attn_layer_indices says */
	CHECK_INT(count("{\"model_type\":\"bamba\",\"hidden_size\":64,\"num_hidden_layers\":4,"
			"\"num_attention_heads\":4,\"num_key_value_heads\":2,\"vocab_size\":300,"
			"\"intermediate_size\":80,\"attn_layer_indices\":[2],\"mamba_n_heads\":4,"
			"\"mamba_n_groups\":1,\"mamba_d_state\":16,\"mamba_expand\":2}",
			&a),
		  2 * V * h + attn + 3 * mamba + L * (3 * h * S + 2 * h) + h);
	CHECK_INT(a.experts, 0);
	/* dense (no experts): the shared MLP alone; no layer_types: all Mamba */
	CHECK_INT(count("{\"model_type\":\"granitemoehybrid\",\"hidden_size\":64,"
			"\"num_hidden_layers\":4,\"num_attention_heads\":4,\"vocab_size\":300,"
			"\"shared_intermediate_size\":80,\"num_local_experts\":0,"
			"\"mamba_n_heads\":4,\"mamba_d_state\":16}",
			&a),
		  2 * V * h + 4 * mamba + L * (3 * h * S + 2 * h) + h);
}

static void test_falcon_h1(void)
{
	struct vf_arch a;
	/* 3 layers, each attention (4 heads of 16, 2 k/v) beside a Mamba-2 of
	 * width 96 (3 heads, 1 group, state 8), no gated norm, out_proj with
	 * projectors_bias; gated MLP 80 */
	I h = 64, L = 3, V = 100, F = 80, i = 96, n = 8, mh = 3, k = 4, cd = i + 2 * n;
	I attn = 2 * h * 4 * 16 + 2 * h * 2 * 16;
	I mamba = h * (i + cd + mh) + cd * k + cd + 3 * mh + i * h + h;
	I total = 2 * V * h + L * (attn + mamba + 3 * h * F + 2 * h) + h;
	CHECK_INT(count("{\"model_type\":\"falcon_h1\",\"hidden_size\":64,\"num_hidden_layers\":3,"
			"\"num_attention_heads\":4,\"num_key_value_heads\":2,\"head_dim\":16,"
			"\"intermediate_size\":80,\"vocab_size\":100,\"mamba_d_ssm\":96,"
			"\"mamba_n_heads\":3,\"mamba_d_head\":32,\"mamba_n_groups\":1,"
			"\"mamba_d_state\":8,\"mamba_rms_norm\":false,\"projectors_bias\":true,"
			"\"ssm_multipliers\":[1,1,1,1,1],\"key_multiplier\":0.5}",
			&a),
		  total);
	CHECK(!a.approximate);
	CHECK_INT(a.ssm_layers, 3);
	CHECK_INT(a.attn_layers, 3);
	/* mamba_rms_norm adds the gated norm (the inner width per layer) */
	CHECK_INT(count("{\"model_type\":\"falcon_h1\",\"hidden_size\":64,\"num_hidden_layers\":3,"
			"\"num_attention_heads\":4,\"num_key_value_heads\":2,\"head_dim\":16,"
			"\"intermediate_size\":80,\"vocab_size\":100,\"mamba_d_ssm\":96,"
			"\"mamba_n_heads\":3,\"mamba_d_state\":8,\"mamba_rms_norm\":true,"
			"\"projectors_bias\":true}",
			&a),
		  total + L * i);
}

static void test_recurrent_gemma(void)
{
	struct vf_arch a;
	/* 5 layers cycling recurrent, attention: attention on 1 and 3; lru
	 * 96 over 4 heads (blocks of 24), conv 3; MLP at half of 160 */
	I h = 64, V = 100, lru = 96, bw = 24, nh = 4, hd = 16, F = 80;
	I attn = h * nh * hd * 2 + h * 1 * hd * 2 + h;
	I rec = 2 * (h * lru + lru) + (lru * h + h) + lru * 3 + lru + lru + 2 * (nh * bw * bw + nh * bw);
	I mlp = 2 * (h * F + F) + F * h + h;
	I total = V * h + 2 * attn + 3 * rec + 5 * (mlp + 2 * h) + h;
	CHECK_INT(count("{\"model_type\":\"recurrent_gemma\",\"hidden_size\":64,\"num_hidden_layers\":5,"
			"\"num_attention_heads\":4,\"num_key_value_heads\":1,\"intermediate_size\":160,"
			"\"vocab_size\":100,\"lru_width\":96,\"conv1d_width\":3,"
			"\"attention_window_size\":32,\"block_types\":[\"recurrent\",\"attention\"]}",
			&a),
		  total);
	CHECK(!a.approximate);
	CHECK_INT(a.attn_layers, 2);
	CHECK_INT(a.sliding_window, 32);
}

static void test_zamba2(void)
{
	struct vf_arch a;
	/* 4 layers, hybrid on 1 and 3, 2 shared blocks; h 32 (attention over
	 * 64: 4 heads of 16), ffn 48, Mamba-2 of 64 (2 heads, 1 group, state
	 * 8), adapters of rank 4 on gate_up and on q/k/v */
	I h = 32, A = 64, L = 4, V = 50, F = 48, i = 64, n = 8, mh = 2, k = 4, r = 4, cd = i + 2 * n;
	I mamba = h + h * (i + cd + mh) + cd * k + cd + 3 * mh + i + i * h;
	I block = A + A * 3 * 64 + 64 * h + h + 3 * h * F;
	I adapters = 2 * (r * (h + 2 * F) + 3 * r * 2 * A);
	I total = V * h + L * mamba + 2 * h * h + 2 * block + adapters + h;
	CHECK_INT(count("{\"model_type\":\"zamba2\",\"hidden_size\":32,\"num_hidden_layers\":4,"
			"\"num_attention_heads\":4,\"intermediate_size\":48,\"vocab_size\":50,"
			"\"n_mamba_heads\":2,\"mamba_d_state\":8,\"mamba_expand\":2,\"mamba_ngroups\":1,"
			"\"num_mem_blocks\":2,\"adapter_rank\":4,\"use_shared_attention_adapter\":true,"
			"\"layers_block_type\":[\"mamba\",\"hybrid\",\"mamba\",\"hybrid\"],"
			"\"hybrid_layer_ids\":[1,3]}",
			&a),
		  total);
	CHECK(!a.approximate);
	CHECK_INT(a.attn_layers, 2);
	/* without layers_block_type the shared blocks' places are unknown: named */
	count("{\"model_type\":\"zamba2\",\"hidden_size\":32,\"num_hidden_layers\":4,"
	      "\"num_attention_heads\":4}",
	      &a);
	CHECK(a.approximate);
	CHECK_CONTAINS(a.not_understood, "layers_block_type");
}

static void test_chatglm(void)
{
	struct vf_arch a;
	/* GLM-2/3 style: 2 k/v groups, q/k/v bias, no other biases, RMSNorm */
	I h = 256, L = 3, nh = 8, g = 2, hd = 32, F = 400, V = 1024;
	I qkv = h * (nh + 2 * g) * hd + (nh + 2 * g) * hd, dense = nh * hd * h;
	I layer = 2 * h + qkv + dense + h * 2 * F + F * h;
	CHECK_INT(count("{\"model_type\":\"chatglm\",\"hidden_size\":256,\"num_layers\":3,"
			"\"num_attention_heads\":8,\"multi_query_attention\":true,"
			"\"multi_query_group_num\":2,\"kv_channels\":32,\"ffn_hidden_size\":400,"
			"\"padded_vocab_size\":1024,\"add_qkv_bias\":true,\"add_bias_linear\":false,"
			"\"rmsnorm\":true,\"post_layer_norm\":true,\"seq_length\":4096}",
			&a),
		  2 * V * h + L * layer + h);
	CHECK(!a.approximate);
	CHECK_INT(a.kv_heads, 2);
	/* ChatGLM-6B v1 keys: flagged, not silently read as v2 */
	count("{\"model_type\":\"chatglm\",\"hidden_size\":256,\"num_layers\":3,"
	      "\"num_attention_heads\":8,\"inner_hidden_size\":1024,\"position_encoding_2d\":true}",
	      &a);
	CHECK(a.approximate);
	CHECK_CONTAINS(a.not_understood, "v1");
}

static void test_internlm2(void)
{
	struct vf_arch a;
	/* fused wqkv, wo (bias: `bias`), w1/w3/w2 without bias, untied */
	I h = 64, L = 2, nh = 4, kv = 2, hd = 16, F = 96, V = 100;
	I attn = h * (nh + 2 * kv) * hd + nh * hd * h;
	I total = 2 * V * h + L * (attn + 3 * h * F + 2 * h) + h;
	CHECK_INT(count("{\"model_type\":\"internlm2\",\"hidden_size\":64,\"num_hidden_layers\":2,"
			"\"num_attention_heads\":4,\"num_key_value_heads\":2,\"intermediate_size\":96,"
			"\"vocab_size\":100,\"bias\":false}",
			&a),
		  total);
	CHECK(!a.approximate);
	/* InternLM2Config's default bias: q/k/v and o biases */
	CHECK_INT(count("{\"model_type\":\"internlm2\",\"hidden_size\":64,\"num_hidden_layers\":2,"
			"\"num_attention_heads\":4,\"num_key_value_heads\":2,\"intermediate_size\":96,"
			"\"vocab_size\":100}",
			&a),
		  total + L * ((nh + 2 * kv) * hd + h));
}

static void test_active(void)
{
	struct vf_arch a;
	/* a mixtral-shaped MoE: 8 experts, 2 per token */
	I h = 64, L = 2, F = 128, V = 100;
	I total = count("{\"model_type\":\"mixtral\",\"hidden_size\":64,\"num_hidden_layers\":2,"
			"\"num_attention_heads\":4,\"num_key_value_heads\":4,\"intermediate_size\":128,"
			"\"vocab_size\":100,\"num_local_experts\":8,\"num_experts_per_tok\":2}",
			&a);
	CHECK_INT(total, 2 * V * h + L * (4 * h * h + 8 * 3 * h * F + h * 8 + 2 * h) + h);
	CHECK_INT(vf_arch_active_params(&a), total - L * 6 * 3 * h * F);
	/* dense: the total */
	I dense = count("{\"model_type\":\"llama\",\"hidden_size\":64,\"num_hidden_layers\":2,"
			"\"num_attention_heads\":4,\"intermediate_size\":128,\"vocab_size\":100}",
			&a);
	CHECK_INT(vf_arch_active_params(&a), dense);
}

static int towers(const char *json, struct vf_vision *v)
{
	struct vf_error err = {0};
	cJSON *j = parse(json);
	int ok = vf_towers_config_is(j) && vf_towers_from_config(j, "gen.json", v, &err) == VF_OK;
	if (!ok)
		fprintf(stderr, "  towers failed: %s\n", err.msg);
	cJSON_Delete(j);
	return ok;
}

static void test_whisper(void)
{
	struct vf_vision v;
	I d = 64, le = 2, ld = 3, fe = 256, fd = 128, V = 700, mel = 40, src = 100, tgt = 50;
	I attn = 4 * d * d + 3 * d; /* q, v, out biased; k not */
	I enc = mel * d * 3 + d + d * d * 3 + d + src * d + le * (attn + 2 * 2 * d + d * fe + fe + fe * d + d) +
		2 * d;
	I dec = V * d + tgt * d + ld * (2 * attn + 3 * 2 * d + d * fd + fd + fd * d + d) + 2 * d;
	CHECK(towers("{\"model_type\":\"whisper\",\"d_model\":64,\"encoder_layers\":2,"
		     "\"decoder_layers\":3,\"encoder_attention_heads\":4,\"decoder_attention_heads\":4,"
		     "\"encoder_ffn_dim\":256,\"decoder_ffn_dim\":128,\"vocab_size\":700,"
		     "\"num_mel_bins\":40,\"max_source_positions\":100,\"max_target_positions\":50}",
		     &v));
	CHECK_INT(v.params, enc + dec);
	CHECK_INT(v.parts[0].params, enc);
	CHECK_STR(v.kind, "speech");
	CHECK(!v.unknown[0]);
	/* an unknown size key is named */
	CHECK(towers("{\"model_type\":\"whisper\",\"d_model\":64,\"adapter_layers\":3}", &v));
	CHECK_CONTAINS(v.unknown, "adapter_layers");
}

static void test_dinov2(void)
{
	struct vf_vision v;
	I h = 48, L = 2, p = 14, grid = 56 / 14, f = 192;
	I emb = 2 * h + (grid * grid + 1) * h + 3 * p * p * h + h;
	I layer = 2 * 2 * h + 4 * (h * h + h) + 2 * h + (h * f + f + f * h + h);
	CHECK(towers("{\"model_type\":\"dinov2\",\"hidden_size\":48,\"num_hidden_layers\":2,"
		     "\"num_attention_heads\":4,\"mlp_ratio\":4,\"image_size\":56,\"patch_size\":14}",
		     &v));
	CHECK_INT(v.params, emb + L * layer + 2 * h);
	CHECK_INT(v.image_tokens, 17);
	/* SwiGLU FFN (the giant): hidden 2/3 of 4h rounded up to 8 */
	I fh = ((f * 2 / 3) + 7) / 8 * 8;
	I sw = 2 * 2 * h + 4 * (h * h + h) + 2 * h + (h * 2 * fh + 2 * fh + fh * h + h);
	CHECK(towers("{\"model_type\":\"dinov2\",\"hidden_size\":48,\"num_hidden_layers\":2,"
		     "\"num_attention_heads\":4,\"image_size\":56,\"patch_size\":14,"
		     "\"use_swiglu_ffn\":true}",
		     &v));
	CHECK_INT(v.params, emb + L * sw + 2 * h);
	/* with registers: num_register_tokens more rows and tokens */
	CHECK(towers("{\"model_type\":\"dinov2_with_registers\",\"hidden_size\":48,"
		     "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"image_size\":56,"
		     "\"patch_size\":14,\"num_register_tokens\":3}",
		     &v));
	CHECK_INT(v.params, emb + 3 * h + L * layer + 2 * h);
	CHECK_INT(v.image_tokens, 20);
}

static void test_vit(void)
{
	struct vf_vision v;
	/* 48 wide, 2 layers, MLP 80, 56 px / 14 (16 patches + class) */
	I h = 48, f = 80;
	I base = h + 17 * h + 3 * 14 * 14 * h + h + 2 * (4 * h + 4 * (h * h + h) + h * f + f + f * h + h) + 2 * h;
	/* ViTModel: the pooler */
	CHECK(towers("{\"architectures\":[\"ViTModel\"],\"model_type\":\"vit\",\"hidden_size\":48,"
		     "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"intermediate_size\":80,"
		     "\"image_size\":56,\"patch_size\":14}",
		     &v));
	CHECK_INT(v.params, base + h * h + h);
	/* for image classification: no pooler, a classifier over id2label's 3 labels */
	CHECK(towers("{\"architectures\":[\"ViTForImageClassification\"],\"model_type\":\"vit\","
		     "\"hidden_size\":48,\"num_hidden_layers\":2,\"num_attention_heads\":4,"
		     "\"intermediate_size\":80,\"image_size\":56,\"patch_size\":14,"
		     "\"id2label\":{\"0\":\"a\",\"1\":\"b\",\"2\":\"c\"}}",
		     &v));
	CHECK_INT(v.params, base + 3 * h + 3);
	CHECK(!v.unknown[0]);
}

static void test_qwen2_5_vl(void)
{
	struct vf_vision v;
	/* vision: depth 2 of 32, MLP 48, 4 heads, merge 2 -> 64 (the LM's width) */
	I d = 32, depth = 2, vi = 48, p = 14, t = 2, m = d * 4, out = 64;
	I tower = 3 * t * p * p * d + depth * (2 * d + 3 * d * d + 3 * d + d * d + d + 2 * (d * vi + vi) + vi * d + d);
	I merger = d + m * m + m + m * out + out;
	/* text: Qwen2 with q/k/v biases, untied */
	I h = 64, L = 2, nh = 4, kv = 2, hd = 16, F = 96, V = 200;
	I lm = 2 * V * h + L * (h * nh * hd * 2 + h * kv * hd * 2 + nh * hd + 2 * kv * hd + 3 * h * F + 2 * h) + h;
	const char *vc = "\"vision_config\":{\"depth\":2,\"hidden_size\":32,\"intermediate_size\":48,"
			 "\"num_heads\":4,\"in_chans\":3,\"out_hidden_size\":64,\"patch_size\":14,"
			 "\"spatial_merge_size\":2,\"temporal_patch_size\":2,\"window_size\":112,"
			 "\"fullatt_block_indexes\":[1]}";
	char buf[2048];
	/* the released layout: text keys at the top level */
	snprintf(buf, sizeof buf,
		 "{\"model_type\":\"qwen2_5_vl\",\"hidden_size\":64,\"num_hidden_layers\":2,"
		 "\"num_attention_heads\":4,\"num_key_value_heads\":2,\"intermediate_size\":96,"
		 "\"vocab_size\":200,\"tie_word_embeddings\":false,\"image_token_id\":7,"
		 "\"rope_scaling\":{\"type\":\"mrope\",\"mrope_section\":[2,3,3]},%s}",
		 vc);
	CHECK(towers(buf, &v));
	CHECK_INT(v.parts[0].params, tower);
	CHECK_INT(v.parts[1].params, merger);
	CHECK_INT(v.parts[2].params, lm);
	CHECK_INT(v.params, tower + merger + lm);
	CHECK(!v.unknown[0]);
	/* the text_config layout counts the same */
	snprintf(buf, sizeof buf,
		 "{\"model_type\":\"qwen2_5_vl\",\"text_config\":{\"hidden_size\":64,"
		 "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"num_key_value_heads\":2,"
		 "\"intermediate_size\":96,\"vocab_size\":200,\"tie_word_embeddings\":false},%s}",
		 vc);
	CHECK(towers(buf, &v));
	CHECK_INT(v.params, tower + merger + lm);
	/* Qwen2-VL: LayerNorms, a plain MLP of embed_dim x mlp_ratio, the
	 * merger's LayerNorm; embed_dim names the tower, hidden_size the
	 * merger's output */
	I q2tower = 3 * t * p * p * d + depth * (4 * d + 3 * d * d + 3 * d + d * d + d + d * 128 + 128 + 128 * d + d);
	snprintf(buf, sizeof buf,
		 "{\"model_type\":\"qwen2_vl\",\"hidden_size\":64,\"num_hidden_layers\":2,"
		 "\"num_attention_heads\":4,\"num_key_value_heads\":2,\"intermediate_size\":96,"
		 "\"vocab_size\":200,\"tie_word_embeddings\":false,"
		 "\"vision_config\":{\"depth\":2,\"embed_dim\":32,\"mlp_ratio\":4,\"num_heads\":4,"
		 "\"in_chans\":3,\"hidden_size\":64,\"patch_size\":14,\"spatial_merge_size\":2,"
		 "\"temporal_patch_size\":2}}");
	CHECK(towers(buf, &v));
	CHECK_INT(v.parts[0].params, q2tower);
	CHECK_INT(v.parts[1].params, 2 * d + m * m + m + m * out + out);
	CHECK_INT(v.parts[2].params, lm);
	CHECK(!v.unknown[0]);
}

/* SigLIP vision tower of width h, MLP f, L layers, grid g x g patches of
 * p px, 3 channels; the attention-pooling head when `head`. */
static I siglip(I h, I f, I L, I g, I p, bool head)
{
	I mlp = h * f + f + f * h + h;
	I t = 3 * p * p * h + h + g * g * h + L * (4 * h + 4 * h * h + 4 * h + mlp) + 2 * h;
	return head ? t + h + 4 * h * h + 4 * h + 2 * h + mlp : t;
}

static void test_gemma3_llava_ov(void)
{
	struct vf_vision v;
	/* Gemma-3: tower 48 wide, 2 layers, 112 px / 14; text 64 wide, 2
	 * layers, 4 heads of 32, 2 k/v heads, MLP 96, tied, q/k norms, 4
	 * norms per layer */
	I vh = 48, h = 64, L = 2, nh = 4, kv = 2, hd = 32, F = 96, V = 500;
	I tower = siglip(vh, 80, 2, 8, 14, false);
	I lm = V * h + L * (2 * h * nh * hd + 2 * h * kv * hd + 2 * hd + 3 * h * F + 4 * h) + h;
	CHECK(towers("{\"model_type\":\"gemma3\",\"mm_tokens_per_image\":16,"
		     "\"text_config\":{\"model_type\":\"gemma3_text\",\"hidden_size\":64,"
		     "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"num_key_value_heads\":2,"
		     "\"head_dim\":32,\"intermediate_size\":96,\"vocab_size\":500},"
		     "\"vision_config\":{\"model_type\":\"siglip_vision_model\",\"hidden_size\":48,"
		     "\"intermediate_size\":80,\"num_hidden_layers\":2,\"num_attention_heads\":4,"
		     "\"image_size\":112,\"patch_size\":14,\"vision_use_head\":false}}",
		     &v));
	CHECK_INT(v.parts[0].params, tower);
	CHECK_INT(v.parts[1].params, vh * h + vh);
	CHECK_INT(v.parts[2].params, lm);
	CHECK_INT(v.image_tokens, 16);
	CHECK(!v.unknown[0]);
	/* LLaVA-OneVision: tower with its head (SigLIP's default), projector
	 * with biases, image_newline; Qwen2 text with q/k/v biases, untied */
	I qlm = 2 * V * h + L * (2 * h * nh * hd + 2 * h * kv * hd + nh * hd + 2 * kv * hd + 3 * h * F + 2 * h) + h;
	CHECK(towers("{\"model_type\":\"llava_onevision\",\"vision_feature_layer\":-1,"
		     "\"text_config\":{\"model_type\":\"qwen2\",\"hidden_size\":64,"
		     "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"num_key_value_heads\":2,"
		     "\"head_dim\":32,\"intermediate_size\":96,\"vocab_size\":500},"
		     "\"vision_config\":{\"model_type\":\"siglip_vision_model\",\"hidden_size\":48,"
		     "\"intermediate_size\":80,\"num_hidden_layers\":2,\"num_attention_heads\":4,"
		     "\"image_size\":112,\"patch_size\":14}}",
		     &v));
	CHECK_INT(v.parts[0].params, siglip(vh, 80, 2, 8, 14, true));
	CHECK_INT(v.parts[1].params, vh * h + h + h * h + h + h);
	CHECK_INT(v.parts[2].params, qlm);
	/* the wrapper's tie_word_embeddings reaches a text_config without one */
	CHECK(towers("{\"model_type\":\"llava_onevision\",\"tie_word_embeddings\":true,"
		     "\"text_config\":{\"model_type\":\"qwen2\",\"hidden_size\":64,"
		     "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"num_key_value_heads\":2,"
		     "\"head_dim\":32,\"intermediate_size\":96,\"vocab_size\":500},"
		     "\"vision_config\":{\"hidden_size\":48,\"intermediate_size\":80,"
		     "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"image_size\":112,"
		     "\"patch_size\":14}}",
		     &v));
	CHECK_INT(v.parts[2].params, qlm - V * h);
}

static void test_llava_next(void)
{
	struct vf_vision v;
	/* CLIP tower 32 wide, 2 layers, MLP 40, 28 px / 14 (4 patches + class);
	 * a Mistral text_config that leaves hidden size, layers and heads to
	 * MistralConfig (4096, 32, 32): the defaults are used and named */
	I d = 32, vf = 40;
	I tower = 3 * 14 * 14 * d + d + 5 * d + 2 * d + 2 * (4 * d + 4 * (d * d + d) + d * vf + vf + vf * d + d) + 2 * d;
	I H = 4096, L = 32, F = 64, V = 100, kvw = 8 * 128;
	I lm = 2 * V * H + L * (2 * H * H + 2 * H * kvw + 3 * H * F + 2 * H) + H;
	CHECK(towers("{\"model_type\":\"llava_next\",\"vision_feature_layer\":-2,"
		     "\"vision_feature_select_strategy\":\"default\",\"text_config\":{"
		     "\"model_type\":\"mistral\",\"intermediate_size\":64,\"vocab_size\":100},"
		     "\"vision_config\":{\"model_type\":\"clip_vision_model\",\"hidden_size\":32,"
		     "\"intermediate_size\":40,\"num_hidden_layers\":2,\"num_attention_heads\":4,"
		     "\"image_size\":28,\"patch_size\":14,\"projection_dim\":16}}",
		     &v));
	CHECK_INT(v.parts[0].params, tower);
	CHECK_INT(v.parts[1].params, d * H + H * H + 2 * H + H);
	CHECK_INT(v.parts[2].params, lm);
	CHECK_INT(v.image_tokens, 4);
	CHECK_CONTAINS(v.assumed, "text_config.hidden_size 4096");
	CHECK(!v.unknown[0]);
}

static void test_qwen3_vl(void)
{
	struct vf_vision v;
	/* tower: depth 2 of 32, MLP 48, patch 16, merge 2 (m = 128), 64
	 * positions, two DeepStack mergers; text: Qwen3 (q/k norms), tied
	 * by the wrapper's key */
	I d = 32, vi = 48, m = 128, out = 64, npos = 64, h = 64, L = 2, nh = 4, kv = 2, hd = 16;
	I F = 96, V = 200;
	I tower = 3 * 2 * 16 * 16 * d + d + npos * d +
		  2 * (2 * 2 * d + 3 * d * d + 3 * d + d * d + d + d * vi + vi + vi * d + d);
	I mlp = m * m + m + m * out + out;
	I proj = 2 * d + mlp + 2 * (2 * m + mlp);
	I lm = V * h + L * (2 * h * nh * hd + 2 * h * kv * hd + 2 * hd + 3 * h * F + 2 * h) + h;
	CHECK(towers("{\"model_type\":\"qwen3_vl\",\"tie_word_embeddings\":true,"
		     "\"text_config\":{\"model_type\":\"qwen3_vl_text\",\"hidden_size\":64,"
		     "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"num_key_value_heads\":2,"
		     "\"head_dim\":16,\"intermediate_size\":96,\"vocab_size\":200,"
		     "\"rope_scaling\":{\"mrope_section\":[2,3,3]}},"
		     "\"vision_config\":{\"depth\":2,\"hidden_size\":32,\"intermediate_size\":48,"
		     "\"num_heads\":4,\"patch_size\":16,\"spatial_merge_size\":2,"
		     "\"temporal_patch_size\":2,\"out_hidden_size\":64,"
		     "\"num_position_embeddings\":64,\"deepstack_visual_indexes\":[0,1]}}",
		     &v));
	CHECK_INT(v.parts[0].params, tower);
	CHECK_INT(v.parts[1].params, proj);
	CHECK_INT(v.parts[2].params, lm);
	CHECK(!v.unknown[0]);
}

static void test_llama4(void)
{
	struct vf_vision v;
	/* vision: 32 wide, 2 layers, MLP 48, 56 px / 14 (16 patches + class),
	 * adapter 48 -> 40, 40 x 40; projector 40 -> 64. Text: 2 MoE layers
	 * (4 experts of 32, 1 per token, a shared expert), untied */
	I d = 32, vi = 48, h = 64, L = 2, nh = 4, kv = 2, hd = 16, E = 4, F = 32, V = 100;
	I tower = 3 * 14 * 14 * d + d + 17 * d + 4 * d +
		  2 * (4 * d + 4 * (d * d + d) + d * vi + vi + vi * d + d) + vi * 40 + 40 * 40;
	I moe = h * E + E * 3 * h * F + 3 * h * F;
	I lm = 2 * V * h + L * (2 * h * nh * hd + 2 * h * kv * hd + moe + 2 * h) + h;
	CHECK(towers("{\"model_type\":\"llama4\",\"text_config\":{\"model_type\":\"llama4_text\","
		     "\"hidden_size\":64,\"num_hidden_layers\":2,\"num_attention_heads\":4,"
		     "\"num_key_value_heads\":2,\"head_dim\":16,\"intermediate_size\":32,"
		     "\"intermediate_size_mlp\":96,\"vocab_size\":100,\"num_local_experts\":4,"
		     "\"num_experts_per_tok\":1,\"interleave_moe_layer_step\":1},"
		     "\"vision_config\":{\"hidden_size\":32,\"num_hidden_layers\":2,"
		     "\"num_attention_heads\":4,\"intermediate_size\":48,\"image_size\":56,"
		     "\"patch_size\":14,\"projector_input_dim\":40,\"projector_output_dim\":40,"
		     "\"vision_output_dim\":40}}",
		     &v));
	CHECK_INT(v.parts[0].params, tower);
	CHECK_INT(v.parts[1].params, 40 * h);
	CHECK_INT(v.parts[2].params, lm);
	/* one of four experts: three idle in each layer */
	CHECK_INT(vf_arch_active_params(&v.lm), lm - L * 3 * 3 * h * F);
	CHECK(!v.unknown[0]);
}

static void test_internvl(void)
{
	struct vf_vision v;
	/* InternViT: 32 wide, 2 layers, MLP 48, 56 px / 14 as lists, q/k/v
	 * biases, q/k norms, RMSNorm, a final LayerNorm (no mean pooling);
	 * pixel shuffle 0.5: projector over 128; Qwen2 text, untied */
	I d = 32, vi = 48, h = 64, L = 2, nh = 4, kv = 2, hd = 16, F = 96, V = 200, k = 128;
	I layer = 3 * d * d + 3 * d + d * d + d + 2 * d + 2 * d + 2 * d + d * vi + vi + vi * d + d;
	I tower = d + 3 * 14 * 14 * d + d + 17 * d + 2 * layer + 2 * d;
	I lm = 2 * V * h + L * (2 * h * nh * hd + 2 * h * kv * hd + nh * hd + 2 * kv * hd + 3 * h * F + 2 * h) + h;
	CHECK(towers("{\"model_type\":\"internvl\",\"downsample_ratio\":0.5,"
		     "\"text_config\":{\"model_type\":\"qwen2\",\"hidden_size\":64,"
		     "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"num_key_value_heads\":2,"
		     "\"intermediate_size\":96,\"vocab_size\":200},"
		     "\"vision_config\":{\"hidden_size\":32,\"num_hidden_layers\":2,"
		     "\"num_attention_heads\":4,\"intermediate_size\":48,\"image_size\":[56,56],"
		     "\"patch_size\":[14,14],\"attention_bias\":true,\"use_qk_norm\":true,"
		     "\"norm_type\":\"rms_norm\",\"use_mean_pooling\":false}}",
		     &v));
	CHECK_INT(v.parts[0].params, tower);
	CHECK_INT(v.parts[1].params, 2 * k + k * h + h + h * h + h);
	CHECK_INT(v.parts[2].params, lm);
	CHECK_INT(v.image_tokens, 4);
	CHECK(!v.unknown[0]);
	/* the remote-code layout (internvl_chat: llm_config, qkv_bias,
	 * qk_normalization; InternViT has no final norm) counts the same
	 * modules */
	CHECK(towers("{\"model_type\":\"internvl_chat\",\"downsample_ratio\":0.5,\"template\":\"x\","
		     "\"llm_config\":{\"architectures\":[\"Qwen2ForCausalLM\"],\"model_type\":\"qwen2\","
		     "\"hidden_size\":64,\"num_hidden_layers\":2,\"num_attention_heads\":4,"
		     "\"num_key_value_heads\":2,\"intermediate_size\":96,\"vocab_size\":200},"
		     "\"vision_config\":{\"model_type\":\"intern_vit_6b\",\"hidden_size\":32,"
		     "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"intermediate_size\":48,"
		     "\"image_size\":56,\"patch_size\":14,\"qkv_bias\":true,\"qk_normalization\":true,"
		     "\"norm_type\":\"rms_norm\",\"use_flash_attn\":true}}",
		     &v));
	CHECK_INT(v.parts[0].params, tower - 2 * d);
	CHECK_INT(v.parts[2].params, lm);
	CHECK(!v.unknown[0]);
}

static void test_siglip2(void)
{
	struct vf_vision v;
	/* vision: 48 wide, 2 layers, MLP 80, 64 patches of 14 (linear patch
	 * embedding: the same count as SigLIP's conv), the pooling head;
	 * text: 300 tokens, 16 positions, 32 wide, 1 layer, MLP 40, head to 24 */
	I th = 32, tf = 40, d = 24;
	I text = 300 * th + 16 * th + (4 * th + 4 * (th * th + th) + th * tf + tf + tf * th + th) + 2 * th +
		 th * d + d;
	CHECK(towers("{\"model_type\":\"siglip2\",\"vision_config\":{\"hidden_size\":48,"
		     "\"intermediate_size\":80,\"num_hidden_layers\":2,\"num_attention_heads\":4,"
		     "\"num_patches\":64,\"patch_size\":14},\"text_config\":{\"vocab_size\":300,"
		     "\"hidden_size\":32,\"intermediate_size\":40,\"num_hidden_layers\":1,"
		     "\"num_attention_heads\":4,\"max_position_embeddings\":16,"
		     "\"projection_size\":24}}",
		     &v));
	CHECK_INT(v.parts[0].params, siglip(48, 80, 2, 8, 14, true));
	CHECK_INT(v.parts[1].params, text + 2);
	CHECK_INT(v.image_tokens, 64);
	CHECK(!v.unknown[0]);
	/* the vision tower alone */
	CHECK(towers("{\"model_type\":\"siglip2_vision_model\",\"hidden_size\":48,"
		     "\"intermediate_size\":80,\"num_hidden_layers\":2,\"num_attention_heads\":4,"
		     "\"num_patches\":64,\"patch_size\":14,\"vision_use_head\":false}",
		     &v));
	CHECK_INT(v.params, siglip(48, 80, 2, 8, 14, false));
}

static void test_ssm_terms(void)
{
	struct vf_arch a;
	count("{\"model_type\":\"mamba\",\"hidden_size\":96,\"num_hidden_layers\":3,"
	      "\"vocab_size\":1000,\"state_size\":8,\"conv_kernel\":3}",
	      &a);
	struct vf_ssm_terms t;
	vf_ssm_terms(&a, &t);
	/* per sequence and layer: conv window 192 x 3, scan state 192 x 8 */
	CHECK(t.layers == 3 && t.attn_layers == 0);
	CHECK(vf_ssm_state_bytes(&t, 2, 2) == 2.0 * 3 * (192 * 3 + 192 * 8) * 2);
	/* the saved bytes grow with the inner width, not with the sequence
	 * beyond the scan's chunk states */
	double s1 = vf_ssm_saved_per_token(&t, 96, 2, 2048), s2 = vf_ssm_saved_per_token(&t, 96, 2, 8192);
	CHECK(s1 > 2 * 5 * 192 && s2 < s1 * 1.01);
	/* a dense model has none */
	count("{\"model_type\":\"llama\",\"hidden_size\":64,\"num_hidden_layers\":2,"
	      "\"num_attention_heads\":4,\"intermediate_size\":96}",
	      &a);
	vf_ssm_terms(&a, &t);
	CHECK(t.layers == 0);
}

/* Nemotron-H: one mixer or one feed-forward per block (here M - M * - M -):
 * the count term by term, and the estimator's MLP share is the blocks
 * with an MLP over all blocks (a Jamba layer holds both: 1; Mamba: 0). */
static void test_nemotron_h(void)
{
	struct vf_arch a;
	I H = 256, V = 500, nh = 8, hd = 32, g = 2, n = 16, k = 4, F = 640, heads = 4, kv = 2, dh = 64;
	I i = nh * hd, conv = i + 2 * g * n;
	I mamba = H * (i + conv + nh) + conv * (k + 1) + 3 * nh + i + i * H;
	I attn = H * heads * dh * 2 + H * kv * dh * 2;
	I mlp = 2 * H * F;
	I want = 3 * mamba + attn + 3 * mlp + 7 * H + H + 2 * V * H;
	CHECK_INT(count("{\"model_type\":\"nemotron_h\",\"hidden_size\":256,\"num_attention_heads\":4,"
			"\"num_key_value_heads\":2,\"head_dim\":64,\"intermediate_size\":640,"
			"\"vocab_size\":500,\"hybrid_override_pattern\":\"M-M*-M-\",\"mamba_num_heads\":8,"
			"\"mamba_head_dim\":32,\"n_groups\":2,\"ssm_state_size\":16,\"conv_kernel\":4}",
			&a),
		  want);
	CHECK(!a.approximate);
	struct vf_ssm_terms t;
	vf_ssm_terms(&a, &t);
	CHECK(t.layers == 3 && t.attn_layers == 1 && t.L == 7);
	CHECK(t.mlp > 3.0 / 7 - 1e-12 && t.mlp < 3.0 / 7 + 1e-12);
	/* a block list that is neither given: the default four, said */
	count("{\"model_type\":\"nemotron_h\",\"hidden_size\":64,\"num_attention_heads\":4,"
	      "\"num_key_value_heads\":2,\"head_dim\":16,\"mamba_num_heads\":4,\"mamba_head_dim\":16,"
	      "\"n_groups\":1,\"ssm_state_size\":8,\"n_routed_experts\":4,\"num_experts_per_tok\":2,"
	      "\"moe_intermediate_size\":32,\"moe_shared_expert_intermediate_size\":32,\"vocab_size\":100}",
	      &a);
	CHECK(a.approximate && a.layers == 4);
	count("{\"model_type\":\"jamba\",\"hidden_size\":64,\"num_hidden_layers\":4,\"num_attention_heads\":4,"
	      "\"num_key_value_heads\":2,\"intermediate_size\":96,\"vocab_size\":100,\"num_experts\":1}",
	      &a);
	vf_ssm_terms(&a, &t);
	CHECK(t.mlp == 1);
	count("{\"model_type\":\"mamba\",\"hidden_size\":64,\"num_hidden_layers\":2,\"vocab_size\":100}", &a);
	vf_ssm_terms(&a, &t);
	CHECK(t.mlp == 0);
}

int main(void)
{
	RUN(test_mamba);
	RUN(test_mamba2);
	RUN(test_jamba);
	RUN(test_granite_hybrid);
	RUN(test_falcon_h1);
	RUN(test_recurrent_gemma);
	RUN(test_zamba2);
	RUN(test_chatglm);
	RUN(test_internlm2);
	RUN(test_active);
	RUN(test_whisper);
	RUN(test_dinov2);
	RUN(test_vit);
	RUN(test_qwen2_5_vl);
	RUN(test_gemma3_llava_ov);
	RUN(test_llava_next);
	RUN(test_qwen3_vl);
	RUN(test_llama4);
	RUN(test_internvl);
	RUN(test_siglip2);
	RUN(test_ssm_terms);
	RUN(test_nemotron_h);
	return vf_test_done();
}
