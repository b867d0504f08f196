/* test-estimate.c - the estimator against the H200 ground truth (accuracy
 * bounds of the issue), the seed's figures, the mechanisms one by one
 * (phases, optimizer temporaries, LoRA counts, eager attention,
 * checkpointing), max-batch search, setup flag parsing and LTX-2. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vf_test.h"
#include "catalog.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/estimate/groundtruth.h"
#include "vramfit/base/json.h"
#include "vramfit/model/arch.h"
#include "vramfit/model/models.h"
#include "vramfit/estimate/setup.h"

#define GB 1e9
#define GIB 1073741824.0

static char gt_path[4096];

static void test_groundtruth_bounds(void)
{
	struct vf_gt_report r;
	struct vf_error err = {0};
	CHECK(vf_groundtruth_check(gt_path, &r, &err) == VF_OK);
	if (err.msg[0]) {
		fprintf(stderr, "  %s\n", err.msg);
		return;
	}
	CHECK_INT(r.scored, 27);
	CHECK_INT(r.context_bytes, 552402944);
	fprintf(stderr,
		"  peak_allocated: median %.1f%% max %.1f%%; peak: median %.1f%% max %.1f%%; "
		"step: median %.1f%% max %.1f%% (%zu records)\n",
		100 * r.med_alloc, 100 * r.max_alloc, 100 * r.med_peak, 100 * r.max_peak,
		100 * r.med_step, 100 * r.max_step, r.scored);
	CHECK(r.med_alloc <= VF_GT_ALLOC_MEDIAN);
	CHECK(r.max_alloc <= VF_GT_ALLOC_MAX);
	CHECK(r.med_peak <= VF_GT_PEAK_MEDIAN);
	CHECK(r.max_peak <= VF_GT_PEAK_MAX);
	CHECK(r.med_step <= VF_GT_STEP_MEDIAN);
	CHECK(r.max_step <= VF_GT_STEP_MAX);
	/* tighter than the 25 %: 18.4 % since fp32's SGEMM and the
	 * Python GELU's backward bytes (gpt2fit31); 17.5 % since the LoRA
	 * adapters' own bytes (estimate.c lora_bytes) run at the device-copy
	 * share and the elementwise share was refitted (0.4508 -> 0.462): the
	 * worst, g2l-full-amp-b4s1024-gc, under by 17.5 %; a little room kept */
	CHECK(r.max_step <= 0.19);
	CHECK(r.med_step <= 0.04);
	CHECK(vf_gt_within_bounds(&r));
	CHECK_INT(r.n_step, 27);
	for (size_t i = 0; i < r.n; i++)
		if (fabs(r.rows[i].err_alloc) > VF_GT_ALLOC_MAX || fabs(r.rows[i].err_peak) > VF_GT_PEAK_MAX)
			fprintf(stderr, "  outside bounds: %s alloc %+.1f%% peak %+.1f%%\n", r.rows[i].id,
				100 * r.rows[i].err_alloc, 100 * r.rows[i].err_peak);
	vf_gt_report_release(&r);
}

static void test_groundtruth_bad_file(void)
{
	struct vf_gt_report r;
	struct vf_error err = {0};
	CHECK(vf_groundtruth_check("/nonexistent/calibration.jsonl", &r, &err) != VF_OK);
	CHECK_CONTAINS(err.msg, "/nonexistent/calibration.jsonl");
	CHECK(r.rows == NULL);
}

/* A record of the ground truth, parsed from a literal. */
static bool record(const char *json, struct vf_arch *a, struct vf_setup *s)
{
	cJSON *rec = cJSON_Parse(json);
	struct vf_error err = {0};
	bool ok = rec && vf_groundtruth_record(rec, "literal", a, s, &err) == VF_OK;
	if (!ok)
		fprintf(stderr, "  %s\n", err.msg);
	cJSON_Delete(rec);
	return ok;
}

#define L7_CFG                                                                              \
	"\"arch\": \"llama2-7b\", \"arch_cfg\": {\"hidden_size\": 4096, \"intermediate_size\": " \
	"11008, \"num_hidden_layers\": 32, \"num_attention_heads\": 32, "                     \
	"\"num_key_value_heads\": 32, \"vocab_size\": 32000, \"max_position_embeddings\": 4096}"

static void test_foreach_temporary_and_phases(void)
{
	/* l7-full-amp-b1s2048-gc: weights 25.1 + grads 25.1 + states 50.2 +
	 * 25.1 foreach temporary = 125.6 GiB at the optimizer step */
	struct vf_arch a;
	struct vf_setup s;
	CHECK(record("{\"id\": \"x\", " L7_CFG ", \"mode\": \"full\", \"precision\": \"amp\", "
		     "\"optimizer\": \"adamw\", \"batch\": 1, \"seq\": 2048, \"grad_ckpt\": true}",
		     &a, &s));
	struct vf_estimate e;
	vf_estimate_run(&a, &s, vf_gpu_catalog_find("h200"), &e);
	CHECK_INT(e.params, 6738415616LL);
	CHECK_INT(e.trainable_params, 6738415616LL);
	CHECK(e.peak_phase == VF_PHASE_OPTIMIZER);
	CHECK_INT(e.weights_bytes, 4 * 6738415616LL);
	CHECK_INT(e.gradients_bytes, 4 * 6738415616LL);
	CHECK_INT(e.optimizer_bytes, 8 * 6738415616LL);
	CHECK_INT(e.optimizer_temp_bytes, 4 * 6738415616LL);
	CHECK(fabs(e.peak_allocated_bytes / GIB - 125.58) < 0.5);
	/* fused: no temporary, the peak moves out of the optimizer step */
	s.optimizer_impl = VF_OPTIMPL_FUSED;
	struct vf_estimate f;
	vf_estimate_run(&a, &s, NULL, &f);
	CHECK_INT(f.optimizer_temp_full, 0);
	CHECK(f.peak_allocated_bytes < e.peak_allocated_bytes);
	/* the terms add up to the peak; context + reserved to the device peak */
	CHECK_INT(e.weights_bytes + e.gradients_bytes + e.optimizer_bytes + e.optimizer_temp_bytes +
			  e.autocast_cache_bytes + e.activations_bytes + e.logits_bytes +
			  e.kv_cache_bytes,
		  e.peak_allocated_bytes);
	CHECK_INT(e.context_bytes + e.peak_allocated_bytes + e.allocator_bytes, e.peak_bytes);
	CHECK(e.dominant == VF_TERM_OPTIMIZER);
	/* per phase: the peak phase's terms add up to the device peak; the
	 * forward holds no gradients (set_to_none) and no temporaries; a
	 * training step has the four phases and no video ones */
	int64_t sum = 0;
	for (int t = 0; t < VF_TERM_COUNT; t++)
		sum += e.phase_bytes[VF_PHASE_OPTIMIZER][t];
	CHECK_INT(sum, e.peak_bytes);
	CHECK_INT(e.phases, 0xF);
	CHECK_INT(e.phase_bytes[VF_PHASE_FORWARD][VF_TERM_GRADIENTS], 0);
	CHECK_INT(e.phase_bytes[VF_PHASE_FORWARD][VF_TERM_OPTIMIZER_TEMP], 0);
	CHECK_INT(e.phase_bytes[VF_PHASE_BACKWARD][VF_TERM_OPTIMIZER], e.optimizer_bytes);
	CHECK_INT(e.phase_bytes[VF_PHASE_FORWARD][VF_TERM_ALLOCATOR], 0);
	CHECK_INT(e.phase_bytes[VF_PHASE_FORWARD][VF_TERM_CONTEXT], e.context_bytes);
	for (int p = 0; p < VF_PHASE_COUNT; p++)
		for (int t = 0; t < VF_TERM_COUNT; t++)
			CHECK(e.phase_bytes[p][t] >= 0);
}

static void test_record_quant(void)
{
	/* a QLoRA record of bench/groundtruth/measure.py: "quant": "nf4" is the
	 * base's storage; without the field the base is not quantized */
	struct vf_arch a;
	struct vf_setup s;
	CHECK(record("{\"id\": \"q\", " L7_CFG ", \"mode\": \"lora\", \"precision\": \"bf16\", "
		     "\"optimizer\": \"adamw\", \"batch\": 4, \"seq\": 2048, \"grad_ckpt\": true, "
		     "\"lora_r\": 16, \"lora_targets\": [\"q_proj\", \"v_proj\"], \"quant\": \"nf4\"}",
		     &a, &s));
	CHECK(s.quant == VF_QUANT_NF4);
	struct vf_estimate q, b;
	vf_estimate_run(&a, &s, vf_gpu_catalog_find("h200"), &q);
	CHECK(record("{\"id\": \"b\", " L7_CFG ", \"mode\": \"lora\", \"precision\": \"bf16\", "
		     "\"optimizer\": \"adamw\", \"batch\": 4, \"seq\": 2048, \"grad_ckpt\": true, "
		     "\"lora_r\": 16, \"lora_targets\": [\"q_proj\", \"v_proj\"]}",
		     &a, &s));
	CHECK(s.quant == VF_QUANT_NONE);
	vf_estimate_run(&a, &s, vf_gpu_catalog_find("h200"), &b);
	CHECK(q.weights_bytes < b.weights_bytes / 2);
	CHECK(!record("{\"id\": \"x\", " L7_CFG ", \"mode\": \"lora\", \"batch\": 1, \"seq\": 8, "
		      "\"quant\": \"int3\"}",
		      &a, &s));
}

static void test_lora_counts(void)
{
	/* peft's trainable counts of the ground truth */
	struct vf_arch a;
	struct vf_setup s;
	CHECK(record("{\"id\": \"x\", " L7_CFG ", \"mode\": \"lora\", \"precision\": \"bf16\", "
		     "\"optimizer\": \"adamw\", \"batch\": 4, \"seq\": 2048, \"grad_ckpt\": true, "
		     "\"lora_r\": 16, \"lora_targets\": [\"q_proj\", \"v_proj\"]}",
		     &a, &s));
	struct vf_estimate e;
	vf_estimate_run(&a, &s, NULL, &e);
	CHECK_INT(e.trainable_params, 8388608);
	/* bf16 base + fp32 adapters */
	CHECK_INT(e.weights_full, 2 * (6738415616LL) + 4 * 8388608LL);
	s.lora_rank = 64;
	s.lora_targets = VF_LORA_ALL;
	vf_estimate_run(&a, &s, NULL, &e);
	CHECK_INT(e.trainable_params, 159907840);
}

static void test_mechanisms(void)
{
	const struct vf_arch *a = catalog_arch("gpt2");
	REQUIRE(a != NULL);
	struct vf_setup s = train_setup(VF_MODE_FULL, VF_PREC_AMP, 8, 1024);
	struct vf_estimate sdpa, eager, ckpt;
	vf_estimate_run(a, &s, NULL, &sdpa);
	s.attention = VF_ATTN_EAGER;
	vf_estimate_run(a, &s, NULL, &eager);
	/* eager keeps the s x s scores: 7 bytes each (fp32 softmax, dropout
	 * mask, bf16 probabilities) x 12 layers x 8 x 12 heads x 1024^2 */
	double scores = 7.0 * 12 * 8 * 12 * 1024.0 * 1024.0;
	CHECK(fabs((eager.activations_full - sdpa.activations_full) - scores) < 0.02 * scores);
	s.attention = VF_ATTN_SDPA;
	s.grad_ckpt = true;
	vf_estimate_run(a, &s, NULL, &ckpt);
	CHECK(ckpt.activations_full < sdpa.activations_full / 5);
	CHECK(ckpt.flops_per_step > sdpa.flops_per_step);
	/* logits: 12 bytes per logit at the loss backward (fp32 log_softmax
	 * output, its gradient and the input gradient) */
	CHECK_INT(sdpa.logits_full, (int64_t)(12.0 * 8 * 1024 * 50257));
	/* memory grows with the batch; the time too */
	struct vf_estimate b16;
	s.grad_ckpt = false;
	s.batch = 16;
	vf_estimate_run(a, &s, vf_gpu_catalog_find("h200"), &b16);
	CHECK(b16.peak_bytes > sdpa.peak_bytes);
	CHECK(b16.step_seconds > 0);
}

static bool arch_of(const char *text, struct vf_arch *a)
{
	cJSON *j = NULL;
	struct vf_error err = {0};
	bool ok = vf_json_parse(text, strlen(text), "t", &j, &err) == VF_OK &&
		  vf_arch_from_config(j, "t.json", a, &err) == VF_OK;
	cJSON_Delete(j);
	return ok;
}

/* MoE and MLA: LoRA on every expert at the expert width; active
 * parameters (FLOPs) skip the idle experts; the MLA cache holds the
 * decompressed k and v per head. */
static void test_moe_mla(void)
{
	struct vf_arch a;
	CHECK(arch_of("{\"model_type\":\"qwen3_moe\",\"hidden_size\":256,\"num_hidden_layers\":4,"
		      "\"num_attention_heads\":4,\"num_key_value_heads\":2,\"head_dim\":64,"
		      "\"intermediate_size\":1024,\"moe_intermediate_size\":128,\"num_experts\":8,"
		      "\"num_experts_per_tok\":2,\"mlp_only_layers\":[0],\"vocab_size\":1000}",
		      &a));
	struct vf_setup s;
	vf_setup_defaults(&s);
	s.mode = VF_MODE_LORA;
	s.lora_rank = 8;
	s.lora_targets = VF_LORA_ALL;
	s.batch = 2;
	s.seq = 512;
	struct vf_estimate e;
	vf_estimate_run(&a, &s, NULL, &e);
	double h = 256, r = 8;
	double attn = r * (h + 256) + 2 * r * (h + 128) + r * (256 + h);
	double mlp_dense = 3 * r * (h + 1024), mlp_exp = 3 * r * (h + 128);
	CHECK_INT(e.trainable_params, (int64_t)(4 * attn + mlp_dense + 3 * 8 * mlp_exp));
	/* FLOPs: 2 of 8 experts per token; the expert loop only adds work */
	struct vf_arch dense = a;
	dense.experts = dense.experts_per_token = 0;
	s.mode = VF_MODE_INFER;
	struct vf_estimate moe_inf;
	vf_estimate_run(&a, &s, vf_gpu_catalog_find("h200"), &moe_inf);
	CHECK(moe_inf.flops_per_step > 0);
	double active = e.params - 3 * 6 * 3 * h * 128; /* idle experts in 3 MoE layers */
	double lin_min = 2.0 * 1024 * (active - 2 * 1000 * h); /* 2 N x active linear, at least */
	CHECK(moe_inf.flops_per_step > lin_min * 0.5);
	CHECK(moe_inf.flops_per_step < 2.0 * 1024 * e.params * 2);
	/* MLA: the cache holds heads x (nope + rope + v) per token per layer */
	CHECK(arch_of("{\"model_type\":\"deepseek_v3\",\"hidden_size\":256,\"num_hidden_layers\":2,"
		      "\"num_attention_heads\":4,\"intermediate_size\":512,\"vocab_size\":1000,"
		      "\"q_lora_rank\":64,\"kv_lora_rank\":32,\"qk_nope_head_dim\":32,"
		      "\"qk_rope_head_dim\":16,\"v_head_dim\":32,\"n_routed_experts\":4,"
		      "\"num_experts_per_tok\":2,\"moe_intermediate_size\":64,\"n_shared_experts\":1,"
		      "\"first_k_dense_replace\":1}",
		      &a));
	s.precision = VF_PREC_BF16;
	vf_estimate_run(&a, &s, NULL, &e);
	CHECK_INT(e.kv_cache_bytes, (int64_t)(2.0 * 512 * 2 * 4 * (48 + 32) * 2));
	/* LoRA on q, v, o of MLA: q_proj and v_proj do not exist (q_a/q_b,
	 * kv_a/kv_b), o_proj reads 4 x 32; the MLP targets match nothing here */
	s.mode = VF_MODE_LORA;
	s.lora_rank = 4;
	s.lora_targets = VF_LORA_Q | VF_LORA_V | VF_LORA_O;
	vf_estimate_run(&a, &s, NULL, &e);
	CHECK_INT(e.trainable_params, 2 * 4 * (4 * 32 + 256));
	/* BLOOM's attention is explicit (ALiBi through baddbmm) whatever
	 * --attention says: its s x s scores are saved as eager's are */
	CHECK(arch_of("{\"model_type\":\"bloom\",\"n_embed\":256,\"n_layer\":2,"
		      "\"num_attention_heads\":4,\"vocab_size\":1000}", &a));
	vf_setup_defaults(&s);
	s.batch = 2;
	s.seq = 512;
	struct vf_estimate sdpa_like, bloom;
	vf_estimate_run(&a, &s, NULL, &bloom);
	struct vf_arch b = a;
	b.eager_attention = false;
	vf_estimate_run(&b, &s, NULL, &sdpa_like);
	CHECK(bloom.activations_full > sdpa_like.activations_full + 2.0 * 4 * 512 * 512 * 2);
	/* phi's gelu_new runs in Python and saves more than a fused GELU */
	CHECK(arch_of("{\"model_type\":\"phi\",\"hidden_size\":256,\"num_hidden_layers\":2,"
		      "\"num_attention_heads\":4,\"intermediate_size\":1024,\"vocab_size\":1000}",
		      &a));
	CHECK(a.act_gelu_python);
	b = a;
	b.act_gelu_python = false;
	vf_estimate_run(&a, &s, NULL, &bloom);
	vf_estimate_run(&b, &s, NULL, &sdpa_like);
	CHECK(bloom.activations_full > sdpa_like.activations_full);
}

static void test_seed_figures(void)
{
	/* a 3B model: AdamW states 8 bytes/param (24 GB), 8-bit AdamW 2
	 * bytes/param (6 GB), Adafactor with fp32 weights slightly over
	 * 4 bytes/param in all */
	const struct vf_arch *a = catalog_arch("qwen2.5-3b");
	REQUIRE(a != NULL);
	struct vf_setup s;
	vf_setup_defaults(&s);
	struct vf_estimate e;
	vf_estimate_run(a, &s, NULL, &e);
	double P = (double)e.params;
	CHECK(P > 2.9e9 && P < 3.2e9);
	CHECK(fabs(e.optimizer_full / P - 8.0) < 1e-6);
	CHECK(fabs(e.optimizer_full * 3e9 / P - 24 * GB) < 0.01 * GB);
	s.optimizer = VF_OPT_ADAMW8BIT;
	vf_estimate_run(a, &s, NULL, &e);
	CHECK(e.optimizer_full / P >= 2.0 && e.optimizer_full / P < 2.1);
	CHECK(fabs(e.optimizer_full * 3e9 / P - 6 * GB) < 0.25 * GB);
	s.optimizer = VF_OPT_ADAFACTOR;
	s.precision = VF_PREC_FP32;
	vf_estimate_run(a, &s, NULL, &e);
	double per = (e.weights_full + e.optimizer_full) / P;
	CHECK(per > 4.0 && per < 4.1);

	/* GPT-NeoX-20B: bf16 weights about 40 GB, inference about 45 GB
	 * (ground truth 40.7 GiB allocated at batch 1 x 2048) */
	a = catalog_arch("gpt-neox-20b");
	REQUIRE(a != NULL);
	vf_setup_defaults(&s);
	s.mode = VF_MODE_INFER;
	s.precision = VF_PREC_BF16;
	s.seq = 2048;
	struct vf_error err = {0};
	CHECK(vf_setup_finish(&s, &err) == VF_OK);
	vf_estimate_run(a, &s, vf_gpu_catalog_find("h200"), &e);
	CHECK(e.weights_full > 39 * GB && e.weights_full < 42 * GB);
	CHECK(e.peak_bytes > 43 * GB && e.peak_bytes < 47 * GB);
	CHECK(fabs(e.peak_allocated_bytes / GIB - 40.7) < 0.05 * 40.7);
	CHECK(e.kv_cache_bytes > 0);
}

static void test_acceptance_fits(void)
{
	/* llama2-7b LoRA r16 q,v, b4 x 2048, checkpointing, bf16: fits an RTX
	 * 4090 and an A100 80GB */
	const struct vf_arch *a = catalog_arch("llama2-7b");
	REQUIRE(a != NULL);
	struct vf_setup s;
	vf_setup_defaults(&s);
	s.mode = VF_MODE_LORA;
	s.lora_rank = 16;
	s.lora_targets = VF_LORA_Q | VF_LORA_V;
	s.batch = 4;
	s.seq = 2048;
	s.grad_ckpt = true;
	s.precision = VF_PREC_BF16;
	struct vf_error err = {0};
	CHECK(vf_setup_finish(&s, &err) == VF_OK);
	const struct vf_gpu_spec *g4090 = vf_gpu_catalog_find("rtx-4090");
	const struct vf_gpu_spec *a100 = vf_gpu_catalog_find("a100-80gb");
	CHECK(g4090 && a100);
	struct vf_estimate e;
	int64_t room;
	vf_estimate_run(a, &s, g4090, &e);
	CHECK(vf_estimate_fits(&e, g4090, &room));
	CHECK(room > 0);
	vf_estimate_run(a, &s, a100, &e);
	CHECK(vf_estimate_fits(&e, a100, NULL));
	int64_t mb = vf_estimate_max_batch(a, &s, a100, 0);
	CHECK(mb >= 4);
	/* max batch: mb fits, mb + 1 does not */
	s.batch = mb;
	vf_estimate_run(a, &s, a100, &e);
	CHECK(vf_estimate_fits(&e, a100, NULL));
	s.batch = mb + 1;
	vf_estimate_run(a, &s, a100, &e);
	CHECK(!vf_estimate_fits(&e, a100, NULL));

	/* 7B full fine-tune, AdamW, amp, b4 x 2048, no checkpointing, one H200:
	 * does not fit; activations dominate */
	vf_setup_defaults(&s);
	s.batch = 4;
	s.seq = 2048;
	CHECK(vf_setup_finish(&s, &err) == VF_OK);
	const struct vf_gpu_spec *h200 = vf_gpu_catalog_find("h200");
	vf_estimate_run(a, &s, h200, &e);
	CHECK(!vf_estimate_fits(&e, h200, &room));
	CHECK(room < 0);
	CHECK(e.dominant == VF_TERM_ACTIVATIONS);
	mb = vf_estimate_max_batch(a, &s, h200, 0);
	CHECK(mb >= 0 && mb < 4);
}

static void test_setup_flags(void)
{
	struct vf_setup s;
	vf_setup_defaults(&s);
	/* the values src/ hands over by name (src/opt-setup.c) */
	static const char *const set[][2] = {
		{"mode", "lora"}, {"lora-targets", "q_proj,v_proj"}, {"grad-ckpt", NULL},
		{"batch", "4"},   {"precision", "bf16"},             {"optimizer", "adamw-fused"},
		{"seq", "4k"},    {"gpus", "2"},
	};
	struct vf_error err = {0};
	for (size_t k = 0; k < sizeof set / sizeof set[0]; k++)
		CHECK(vf_setup_set(&s, set[k][0], set[k][1], &err) == VF_OK);
	CHECK(vf_setup_finish(&s, &err) == VF_OK);
	CHECK(s.mode == VF_MODE_LORA);
	CHECK(s.lora_targets == (VF_LORA_Q | VF_LORA_V));
	CHECK(s.grad_ckpt);
	CHECK_INT(s.batch, 4);
	CHECK_INT(s.seq, 4096);
	CHECK(s.precision == VF_PREC_BF16);
	CHECK(s.optimizer == VF_OPT_ADAMW && s.optimizer_impl == VF_OPTIMPL_FUSED);
	CHECK(s.shard == VF_SHARD_DDP);
	CHECK(s.lora_alpha == 16);
	CHECK(s.given & VF_SETUP_G_BATCH);
	CHECK(!(s.given & VF_SETUP_G_QUANT));

	/* errors name the flag */
	CHECK(vf_setup_set(&s, "batch", "zero", &err) == VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "--batch");
	CHECK(vf_setup_set(&s, "optimizer", NULL, &err) == VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "--optimizer");
	CHECK(vf_setup_set(&s, "lora-targets", "q_proj,nonsense", &err) == VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "nonsense");
	CHECK(vf_setup_set(&s, "grad-ckpt", "maybe", &err) == VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "--grad-ckpt");
	vf_setup_defaults(&s);
	s.quant = VF_QUANT_NF4;
	CHECK(vf_setup_finish(&s, &err) == VF_EUSAGE); /* quantized base needs lora/infer */

	char buf[128];
	CHECK_STR(vf_lora_targets_format(VF_LORA_ALL, buf, sizeof buf), "all-linear");
	CHECK_STR(vf_lora_targets_format(VF_LORA_Q | VF_LORA_O, buf, sizeof buf), "q_proj,o_proj");
	unsigned t;
	CHECK(vf_lora_targets_parse("to_k,to_q,to_v,to_out.0", &t, &err) == VF_OK);
	CHECK(t == (VF_LORA_Q | VF_LORA_K | VF_LORA_V | VF_LORA_O));
	cJSON *j = vf_setup_to_json(&s);
	CHECK(j != NULL);
	CHECK_STR(vf_json_get_str(j, "precision"), "amp");
	CHECK_STR(vf_json_get_str(j, "optimizer_impl"), "foreach");
	cJSON_Delete(j);
}

static void test_generic_and_quant(void)
{
	struct vf_arch a;
	vf_estimate_generic_arch(7000000000LL, &a);
	struct vf_setup s = train_setup(VF_MODE_LORA, VF_PREC_BF16, 1, 2048);
	struct vf_estimate bf, q4;
	vf_estimate_run(&a, &s, NULL, &bf);
	CHECK(bf.params > 6.0e9 && bf.params < 8.0e9);
	s.quant = VF_QUANT_NF4;
	vf_estimate_run(&a, &s, NULL, &q4);
	CHECK(q4.weights_full < bf.weights_full / 3);
	/* ZeRO-3 over 8 GPUs shards weights, gradients and states */
	vf_setup_defaults(&s);
	struct vf_estimate one, z3;
	vf_estimate_run(&a, &s, NULL, &one);
	s.gpus = 8;
	s.shard = VF_SHARD_ZERO3;
	vf_estimate_run(&a, &s, NULL, &z3);
	CHECK(z3.optimizer_full * 7 < one.optimizer_full);
	CHECK(z3.weights_full < one.weights_full / 4);
	/* DDP keeps gradient buckets as large as the gradients in every phase;
	 * the all-reduce costs time */
	vf_setup_defaults(&s);
	s.grad_ckpt = true;
	struct vf_estimate ddp;
	const struct vf_gpu_spec *h100 = vf_gpu_catalog_find("h100-80gb");
	vf_estimate_run(&a, &s, h100, &one);
	s.gpus = 8;
	s.shard = VF_SHARD_DDP;
	vf_estimate_run(&a, &s, h100, &ddp);
	CHECK(ddp.peak_allocated_bytes > one.peak_allocated_bytes + one.gradients_full / 2);
	CHECK(ddp.step_seconds > one.step_seconds);
	/* gradient accumulation: later micro-batches run their forward with
	 * the gradients held */
	vf_setup_defaults(&s);
	s.batch = 8;
	s.seq = 4096;
	struct vf_estimate ga1, ga4;
	vf_estimate_run(&a, &s, h100, &ga1);
	s.grad_accum = 4;
	vf_estimate_run(&a, &s, h100, &ga4);
	CHECK(ga4.peak_allocated_bytes > ga1.peak_allocated_bytes);
	CHECK(fabs(ga4.flops_per_step / ga1.flops_per_step - 4) < 1e-9);
}


static void ltx2_configs(struct vf_ltx2_config *std, struct vf_ltx2_config *low)
{
	/* ../shared/ltx2/TRAINER.md section 2 */
	*std = (struct vf_ltx2_config){.training_mode = "lora",
				       .lora_rank = 32,
				       .optimizer_type = "adamw",
				       .batch_size = 1,
				       .grad_accum = 1,
				       .grad_ckpt = true,
				       .mixed_precision_mode = "bf16",
				       .quantization = NULL,
				       .load_text_encoder_in_8bit = false,
				       .video_dims = {960, 544, 89},
				       .offload_optimizer_during_validation = false,
				       .gpus = 1};
	*low = *std;
	low->lora_rank = 16;
	low->optimizer_type = "adamw8bit";
	low->quantization = "int8-quanto";
	low->load_text_encoder_in_8bit = true;
	low->video_dims[0] = 576;
	low->video_dims[1] = 576;
	low->video_dims[2] = 49;
	low->offload_optimizer_during_validation = true;
}

static void test_ltx2(void)
{
	struct vf_ltx2_config std, low;
	ltx2_configs(&std, &low);
	const struct vf_gpu_spec *r5090 = vf_gpu_catalog_find("rtx-5090");
	const struct vf_gpu_spec *a6000 = vf_gpu_catalog_find("rtx-6000-ada");
	const struct vf_gpu_spec *a100 = vf_gpu_catalog_find("a100-80gb");
	const struct vf_gpu_spec *h100 = vf_gpu_catalog_find("h100-80gb");
	REQUIRE(r5090 && a6000 && a100 && h100);
	struct vf_estimate e;
	struct vf_error err = {0};
	/* the low-VRAM config fits a 32 GB card */
	CHECK(vf_estimate_ltx2("ltx-2-19b", &low, r5090, &e, &err) == VF_OK);
	fprintf(stderr, "  ltx-2-19b low-VRAM: peak %.2f GiB (%s), %.2f s/step on rtx-5090\n",
		e.peak_bytes / GIB, vf_phase_name(e.peak_phase), e.step_seconds);
	CHECK(vf_estimate_fits(&e, r5090, NULL));
	CHECK(e.step_seconds > 0);
	/* the standard config needs the 80 GB class */
	CHECK(vf_estimate_ltx2("ltx-2-19b", &std, a100, &e, &err) == VF_OK);
	fprintf(stderr, "  ltx-2-19b standard: peak %.2f GiB (%s), %.2f s/step on a100-80gb\n",
		e.peak_bytes / GIB, vf_phase_name(e.peak_phase), e.step_seconds);
	CHECK(vf_estimate_fits(&e, a100, NULL));
	CHECK(vf_estimate_ltx2("ltx-2-19b", &std, h100, &e, &err) == VF_OK);
	CHECK(vf_estimate_fits(&e, h100, NULL));
	CHECK(vf_estimate_ltx2("ltx-2-19b", &std, a6000, &e, &err) == VF_OK);
	CHECK(!vf_estimate_fits(&e, a6000, NULL));
	CHECK(vf_estimate_ltx2("ltx-2-19b", &std, r5090, &e, &err) == VF_OK);
	CHECK(!vf_estimate_fits(&e, r5090, NULL));
	/* LoRA r32 on to_q/k/v/out.0 of the six attentions of 48 blocks */
	CHECK(e.trainable_params > 150000000 && e.trainable_params < 300000000);
	/* the 22B model needs more than the 19B */
	struct vf_estimate e22;
	CHECK(vf_estimate_ltx2("ltx-2.3-22b", &std, a100, &e22, &err) == VF_OK);
	CHECK(e22.peak_bytes > e.peak_bytes);
	/* tokens: 960/32 x 544/32 x (1 + 88/8) */
	const struct vf_model_entry *m = vf_models_find("ltx-2-19b");
	CHECK(m != NULL);
	if (m) {
		struct vf_dit d;
		CHECK(vf_dit_from_json(m->raw, "ltx2", &d, &err) == VF_OK);
		CHECK_INT(vf_dit_video_tokens(&d, 960, 544, 89), 30 * 17 * 12);
		CHECK_INT(vf_dit_video_tokens(&d, 576, 576, 49), 18 * 18 * 7);
		CHECK(vf_dit_audio_tokens(&d, 89) > 0);
	}
	/* bad trainer values are named */
	low.video_dims[2] = 0;
	CHECK(vf_estimate_ltx2("ltx-2-19b", &low, r5090, &e, &err) == VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "validation.video_dims");
	/* the trainer's divisibility rule is check's (configs.json), not the
	 * estimator's: 50 frames still estimate */
	low.video_dims[2] = 50;
	CHECK(vf_estimate_ltx2("ltx-2-19b", &low, r5090, &e, &err) == VF_OK);
	low.video_dims[2] = 49;
	low.quantization = "int3";
	CHECK(vf_estimate_ltx2("ltx-2-19b", &low, r5090, &e, &err) == VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "acceleration.quantization");
	CHECK(vf_estimate_ltx2("no-such-model", &std, r5090, &e, &err) == VF_ENOTFOUND);
}

/* Issue 30: the LTX-2 trainer's load-and-keep rules, each against numbers
 * derived here by hand from the layout (attention = q/k norms 2d + four
 * (d^2 + d) projections; FFN = 8 d^2 + 5 d; connector = layers x both +
 * 128 registers of width d) and the config. */
static int64_t conn_by_hand(int64_t d, int64_t layers)
{
	return layers * (2 * d + 4 * (d * d + d) + 8 * d * d + 5 * d) + 128 * d;
}

static int64_t phase_sum(const struct vf_estimate *e, enum vf_phase p)
{
	int64_t s = 0;
	for (int k = 0; k < VF_TERM_COUNT; k++)
		s += e->phase_bytes[p][k];
	return s;
}

static void test_ltx2_trainer_rules(void)
{
	struct vf_error err = {0};
	const struct vf_gpu_spec *r5090 = vf_gpu_catalog_find("rtx-5090");
	const struct vf_gpu_spec *h100 = vf_gpu_catalog_find("h100-80gb");
	const struct vf_model_entry *m = vf_models_find("ltx-2-19b");
	REQUIRE(r5090 && h100 && m);
	struct vf_dit d;
	CHECK(vf_dit_from_json(m->raw, "ltx2", &d, &err) == VF_OK);
	/* LTX-2: two connectors of 2 blocks of 30 x 128, no gate; the text
	 * projection from Gemma's 49 stacked 3840-wide states to 3840 */
	int64_t C = 2 * conn_by_hand(3840, 2);
	CHECK_INT(C, 708940800);
	CHECK_INT(d.connector_params, C);
	CHECK_INT(d.text_projection_params, 3840LL * 49 * 3840);

	struct vf_ltx2_config std, low;
	ltx2_configs(&std, &low);
	low.train_dims[0] = 960; /* the quick-start's bucket */
	low.train_dims[1] = 544;
	low.train_dims[2] = 49;
	struct vf_setup s;
	CHECK(vf_setup_from_ltx2(&low, &s, &err) == VF_OK);
	/* training at the bucket, validation at validation.video_dims */
	CHECK_INT(s.video_width, 960);
	CHECK_INT(s.video_frames, 49);
	CHECK_INT(s.val_width, 576);
	CHECK_INT(s.val_frames, 49);
	struct vf_estimate e, e0;
	vf_estimate_dit(&d, &s, r5090, &e);
	struct vf_dit d0 = d;
	d0.connector_params = 0;
	vf_estimate_dit(&d0, &s, r5090, &e0);
	/* the connectors: bf16 weights in every phase of the run, and their
	 * never-zeroed bf16 gradients from the first backward on */
	CHECK_INT(e.connector_bytes, 2 * C);
	static const enum vf_phase held[] = {VF_PHASE_FORWARD, VF_PHASE_BACKWARD, VF_PHASE_OPTIMIZER,
					     VF_PHASE_VALIDATION};
	for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) {
		enum vf_phase p = held[i];
		CHECK_INT(e.phase_bytes[p][VF_TERM_WEIGHTS] - e0.phase_bytes[p][VF_TERM_WEIGHTS], 2 * C);
		CHECK_INT(e.phase_bytes[p][VF_TERM_GRADIENTS] - e0.phase_bytes[p][VF_TERM_GRADIENTS], 2 * C);
	}
	/* the quick-start's 960x544x49 fits a 5090 with the low-VRAM config
	 * (docs/quick-start.md); before issue 30 vramfit said 33.5 GiB */
	fprintf(stderr, "  ltx-2-19b low-VRAM 960x544x49: %.2f GiB (%s), step %.2f GiB on rtx-5090\n",
		e.peak_bytes / GIB, vf_phase_name(e.peak_phase), e.step_peak_bytes / GIB);
	CHECK(vf_estimate_fits(&e, r5090, NULL));
	/* the optimizer states offloaded during validation; held without */
	CHECK_INT(e.phase_bytes[VF_PHASE_VALIDATION][VF_TERM_OPTIMIZER], 0);
	s.offload_optimizer = false;
	vf_estimate_dit(&d, &s, r5090, &e0);
	CHECK_INT(e0.phase_bytes[VF_PHASE_VALIDATION][VF_TERM_OPTIMIZER],
		  e0.phase_bytes[VF_PHASE_OPTIMIZER][VF_TERM_OPTIMIZER]);
	s.offload_optimizer = true;
	/* the validation size moves the validation phase alone */
	s.val_width = s.val_height = 1024;
	s.val_frames = 121;
	vf_estimate_dit(&d, &s, r5090, &e0);
	CHECK(phase_sum(&e0, VF_PHASE_VALIDATION) > phase_sum(&e, VF_PHASE_VALIDATION));
	CHECK_INT(phase_sum(&e0, VF_PHASE_BACKWARD) - e0.phase_bytes[VF_PHASE_BACKWARD][VF_TERM_ALLOCATOR],
		  phase_sum(&e, VF_PHASE_BACKWARD) - e.phase_bytes[VF_PHASE_BACKWARD][VF_TERM_ALLOCATOR]);
	/* validation.interval: null: no validation phase */
	low.validation_disabled = true;
	CHECK(vf_setup_from_ltx2(&low, &s, &err) == VF_OK);
	vf_estimate_dit(&d, &s, r5090, &e0);
	CHECK(!(e0.phases & (1u << VF_PHASE_VALIDATION)));
	CHECK(e.phases & (1u << VF_PHASE_VALIDATION));
	/* the text encoder: 8-bit linears (row scales), bf16 embeddings, with
	 * the validation runner's own connectors and text projection */
	double tp = (double)d.text_encoder_params, emb = (double)d.text_encoder_embedding;
	double te = (tp - emb) * (1.0 + 4.0 / 4096) + emb * 2 + 2.0 * C + 2.0 * (double)d.text_projection_params;
	CHECK(fabs((double)e.phase_bytes[VF_PHASE_TEXT_ENCODER][VF_TERM_WEIGHTS] - te) < 2);
	/* no validation prompt: the text encoder is never loaded */
	low.no_validation_prompts = true;
	CHECK(vf_setup_from_ltx2(&low, &s, &err) == VF_OK);
	vf_estimate_dit(&d, &s, r5090, &e0);
	CHECK(!(e0.phases & (1u << VF_PHASE_TEXT_ENCODER)));

	/* a full fine-tune on 2 x H100 under FSDP: fp32 transformer; rank 0
	 * holds it whole while loading, plus one flattened block, the
	 * connectors and the text projection */
	std.training_mode = "full";
	std.gpus = 2;
	std.offload_optimizer_during_validation = true;
	CHECK(vf_setup_from_ltx2(&std, &s, &err) == VF_OK);
	CHECK_INT(s.shard, VF_SHARD_FSDP);
	CHECK_INT(s.precision, VF_PREC_AMP);
	vf_estimate_dit(&d, &s, h100, &e);
	double P = (double)d.params;
	double load = P * 4 + P * 4 / 48 + 2.0 * C + 2.0 * (double)d.text_projection_params;
	CHECK(fabs((double)e.phase_bytes[VF_PHASE_LOAD][VF_TERM_WEIGHTS] - load) < 2);
	CHECK(!vf_estimate_fits(&e, h100, NULL));
	std.gpus = 4;
	CHECK(vf_setup_from_ltx2(&std, &s, &err) == VF_OK);
	vf_estimate_dit(&d, &s, h100, &e);
	fprintf(stderr, "  ltx-2-19b full FT 4 x h100: %.2f GiB (%s), loading %.2f GiB\n", e.peak_bytes / GIB,
		vf_phase_name(e.peak_phase), phase_sum(&e, VF_PHASE_LOAD) / GIB);
	CHECK(!vf_estimate_fits(&e, h100, NULL));
	/* FSDP MixedPrecision (accelerate's bf16): the fp32 shards, two
	 * blocks gathered in bf16 (the current and the prefetched), and in the
	 * backward one block's whole bf16 gradient before its reduce-scatter */
	CHECK(s.fsdp_mixed_precision);
	double blk = 0.98 * P / 48;
	CHECK(fabs((double)e.phase_bytes[VF_PHASE_FORWARD][VF_TERM_WEIGHTS] -
		   (P * 4 / 4 + 2 * blk * 2 + 2.0 * C)) < 4);
	CHECK(fabs((double)(e.phase_bytes[VF_PHASE_BACKWARD][VF_TERM_GRADIENTS] -
			    e.phase_bytes[VF_PHASE_OPTIMIZER][VF_TERM_GRADIENTS]) - blk * 2) < 4);
	/* the step as its parts, communication over NVLink: a block gathered
	 * for the forward and again for the backward, its gradient
	 * reduce-scattered, each moving (n-1)/n of its bf16 bytes */
	CHECK(e.parts.compute > 0 && e.parts.gemm > 0 && e.parts.attention > 0 && e.parts.optimizer > 0);
	CHECK(strcmp(e.parts.link, "nvlink4") == 0);
	CHECK(fabs(e.parts.comm_bytes - 0.75 * (2 * P * 2 + P * 2)) < 1e3);
	CHECK(e.parts.comm_exposed >= 0 && e.parts.comm_exposed <= e.parts.comm_total);
	CHECK(fabs(e.step_seconds - (e.parts.compute + e.parts.comm_exposed + e.parts.comm_interference)) <
	      1e-9 * e.step_seconds);
	fprintf(stderr, "  ltx-2-19b full FT 4 x h100 step %.0f ms: communication %.0f ms, %.1f exposed, "
		"%.1f lost to NCCL's SMs\n", 1e3 * e.step_seconds, 1e3 * e.parts.comm_total,
		1e3 * e.parts.comm_exposed, 1e3 * e.parts.comm_interference);
	/* without MixedPrecision: fp32 gathers, twice the bytes */
	struct vf_setup fp = s;
	fp.fsdp_mixed_precision = false;
	struct vf_estimate e32;
	vf_estimate_dit(&d, &fp, h100, &e32);
	CHECK(fabs((double)(e32.phase_bytes[VF_PHASE_FORWARD][VF_TERM_WEIGHTS] -
			    e.phase_bytes[VF_PHASE_FORWARD][VF_TERM_WEIGHTS]) - 2 * blk * 2) < 4);
	CHECK(fabs(e32.parts.comm_bytes - 2 * e.parts.comm_bytes) < 1e3);
	/* each GPU steps the states it holds: half of 2 GPUs' optimizer step */
	struct vf_setup two = s;
	two.gpus = 2;
	struct vf_estimate e2;
	vf_estimate_dit(&d, &two, h100, &e2);
	CHECK(fabs(e2.parts.optimizer - 2 * e.parts.optimizer) < 1e-9);
	/* twice the GPUs: near twice the tokens/s (prefetch hides most of the
	 * gathers; the shards' optimizer step halves) */
	CHECK(e.tokens_per_second > 1.8 * e2.tokens_per_second && e.tokens_per_second < 2.2 * e2.tokens_per_second);
	CHECK(e.parts.comm_interference > 0);
	/* with gradient accumulation the trainer's accelerator.accumulate runs
	 * the accumulating micro-batches under FSDP's no_sync: every unit's
	 * whole gradient (bf16 under MixedPrecision) is held in the forward
	 * and backward, not the shard; the optimizer step holds the fp32
	 * shards */
	struct vf_estimate ga;
	std.grad_accum = 4;
	CHECK(vf_setup_from_ltx2(&std, &s, &err) == VF_OK);
	vf_estimate_dit(&d, &s, h100, &ga);
	CHECK(fabs((double)(ga.phase_bytes[VF_PHASE_BACKWARD][VF_TERM_GRADIENTS] -
			    e.phase_bytes[VF_PHASE_BACKWARD][VF_TERM_GRADIENTS]) - (P * 2 - P * 4 / 4 - blk * 2)) < 4);
	CHECK(fabs((double)(ga.phase_bytes[VF_PHASE_FORWARD][VF_TERM_GRADIENTS] -
			    e.phase_bytes[VF_PHASE_FORWARD][VF_TERM_GRADIENTS]) - P * 2) < 4);
	CHECK(ga.phase_bytes[VF_PHASE_OPTIMIZER][VF_TERM_GRADIENTS] ==
	      e.phase_bytes[VF_PHASE_OPTIMIZER][VF_TERM_GRADIENTS]);
	CHECK(ga.peak_bytes > e.peak_bytes);
	std.grad_accum = 1;

	/* LTX-2.3, low-VRAM at rank 32, images only, no audio, no validation
	 * on a 5090: reported at 31 GB "almost OOMing" (issue 30); vramfit
	 * said 22.6 GiB before the connectors */
	struct vf_ltx2_config l23;
	ltx2_configs(&std, &l23);
	l23.lora_rank = 32;
	l23.validation_disabled = true;
	l23.no_audio = true;
	l23.train_dims[0] = 960;
	l23.train_dims[1] = 544;
	l23.train_dims[2] = 1;
	const struct vf_model_entry *m23 = vf_models_find("ltx-2.3-22b");
	REQUIRE(m23 != NULL);
	struct vf_dit d23;
	CHECK(vf_dit_from_json(m23->raw, "ltx2", &d23, &err) == VF_OK);
	/* 8 gated blocks of 32 x 128 and of 32 x 64 (a gate: d x 32 + 32) */
	CHECK_INT(d23.connector_params,
		  conn_by_hand(4096, 8) + 8 * (4096 * 32 + 32) + conn_by_hand(2048, 8) + 8 * (2048 * 32 + 32));
	CHECK(vf_setup_from_ltx2(&l23, &s, &err) == VF_OK);
	CHECK(!s.audio);
	vf_estimate_dit(&d23, &s, r5090, &e);
	fprintf(stderr, "  ltx-2.3 low-VRAM r32 images: %.2f GiB (%s) on rtx-5090\n", e.peak_bytes / GIB,
		vf_phase_name(e.peak_phase));
	CHECK(vf_estimate_fits(&e, r5090, NULL));
	CHECK(fabs(e.peak_bytes / GIB - 31.0) / 31.0 < 0.10);
	/* a bucket that is not one is named */
	l23.train_dims[2] = 0;
	CHECK(vf_setup_from_ltx2(&l23, &s, &err) == VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "resolution bucket");
}

/* The caching allocator never gives memory back within a step: a larger
 * micro-batch can never need less device memory. Checked over models,
 * modes, precisions, optimizers and checkpointing, batch 1..64. */
static void test_peak_monotone_in_batch(void)
{
	static const char *const models[] = {"llama2-7b", "gpt2", "tinyllama-1.1b", "gemma2-2b",
					     "qwen2.5-0.5b", "t5-base", "gpt-neox-20b"};
	static const char *const modes[] = {"full", "lora", "infer"};
	static const char *const precs[] = {"amp", "bf16"};
	static const char *const opts[] = {"adamw", "adamw8bit", "adafactor", "sgd"};
	const struct vf_gpu_spec *gpu = vf_gpu_catalog_find("h200");
	CHECK(gpu != NULL);
	int bad = 0, checked = 0;
	for (size_t m = 0; m < sizeof models / sizeof *models; m++) {
		const struct vf_arch *a = catalog_arch(models[m]);
		CHECK(a != NULL);
		if (!a)
			continue;
		for (size_t mo = 0; mo < 3; mo++)
			for (size_t p = 0; p < 2; p++)
				for (size_t o = 0; o < 4; o++)
					for (int ck = 0; ck < 2; ck++) {
						double prev_peak = 0, prev_alloc = 0;
						for (int b = 1; b <= 64; b++) {
							struct vf_setup s;
							struct vf_error err = {0};
							char bs[16];
							snprintf(bs, sizeof bs, "%d", b);
							vf_setup_defaults(&s);
							vf_setup_set(&s, "mode", modes[mo], &err);
							vf_setup_set(&s, "precision", precs[p], &err);
							if (mo != 2)
								vf_setup_set(&s, "optimizer", opts[o], &err);
							vf_setup_set(&s, "grad-ckpt", ck ? "true" : "false", &err);
							vf_setup_set(&s, "batch", bs, &err);
							vf_setup_set(&s, "seq", "512", &err);
							if (vf_setup_finish(&s, &err) != VF_OK)
								break;
							struct vf_estimate e;
							vf_estimate_run(a, &s, gpu, &e);
							checked++;
							if ((double)e.peak_bytes < prev_peak ||
							    (double)e.peak_allocated_bytes < prev_alloc) {
								if (bad++ < 5)
									fprintf(stderr,
										"  %s %s %s %s ckpt=%d: batch %d peak %.3f GiB < %.3f GiB\n",
										models[m], modes[mo], precs[p], opts[o], ck, b,
										(double)e.peak_bytes / GIB, prev_peak / GIB);
							}
							prev_peak = (double)e.peak_bytes;
							prev_alloc = (double)e.peak_allocated_bytes;
						}
					}
	}
	CHECK(checked > 10000);
	CHECK_INT(bad, 0);
}


/* The allocator simulation decides the verdict: the simulated max batch
 * fits and one more does not; reserved >= allocated; expandable segments
 * reserve no more than cudaMalloc segments here; a card too small is
 * out of memory even after the cache is released. */
static void test_simulated_verdict(void)
{
	const struct vf_arch *a = catalog_arch("llama2-7b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("rtx-4090");
	REQUIRE(a && g);
	struct vf_setup s;
	struct vf_error err = {0};
	vf_setup_defaults(&s);
	s.mode = VF_MODE_LORA;
	s.grad_ckpt = true;
	s.given |= VF_SETUP_G_MODE | VF_SETUP_G_GRAD_CKPT;
	CHECK(vf_setup_finish(&s, &err) == VF_OK);
	int64_t b = vf_estimate_max_batch_simulated(a, &s, g, NULL, NULL);
	CHECK(b >= 1);
	struct vf_estimate e;
	s.batch = b;
	CHECK(vf_estimate_simulate(a, &s, g, NULL, &e, NULL, &err) == VF_OK);
	CHECK(vf_estimate_fits(&e, g, NULL) && e.simulated);
	CHECK(e.peak_reserved_bytes >= e.peak_allocated_bytes);
	s.batch = b + 1;
	CHECK(vf_estimate_simulate(a, &s, g, NULL, &e, NULL, &err) == VF_OK);
	CHECK(!vf_estimate_fits(&e, g, NULL));
	s.batch = 2;
	struct vf_estimate d, x;
	struct vf_alloc_config ex = {.expandable = true};
	CHECK(vf_estimate_simulate(a, &s, NULL, NULL, &d, NULL, &err) == VF_OK);
	CHECK(vf_estimate_simulate(a, &s, NULL, &ex, &x, NULL, &err) == VF_OK);
	CHECK(x.peak_reserved_bytes <= d.peak_reserved_bytes);
	CHECK(x.peak_reserved_bytes >= x.peak_allocated_bytes);
	s.batch = 64;
	CHECK(vf_estimate_simulate(a, &s, g, NULL, &e, NULL, &err) == VF_OK);
	CHECK(e.sim_oom && !vf_estimate_fits(&e, g, NULL));
}

/* The estimator remembers the last architecture's shape and the last GPU's
 * classes and link (per thread, by their bytes): an architecture or GPU
 * changed in place must be estimated as a fresh copy of it is, whatever was
 * remembered before. */
static void same_as_fresh(const struct vf_arch *a, const struct vf_setup *s,
			  const struct vf_gpu_spec *g, const struct vf_estimate *got)
{
	struct vf_arch *a2 = malloc(sizeof *a2);
	struct vf_gpu_spec *g2 = malloc(sizeof *g2);
	struct vf_estimate *e = calloc(2, sizeof *e);
	CHECK(a2 && g2 && e);
	if (a2 && g2 && e) {
		/* something else remembered, then copies at other addresses */
		vf_estimate_run(catalog_arch("gpt2"), s, vf_gpu_catalog_find("h100-80gb"), &e[1]);
		*a2 = *a;
		*g2 = *g;
		vf_estimate_run(a2, s, g2, &e[0]);
		CHECK(memcmp(&e[0], got, sizeof e[0]) == 0);
	}
	free(a2);
	free(g2);
	free(e);
}

static void test_memo_follows_contents(void)
{
	const struct vf_arch *base = catalog_arch("llama2-7b");
	const struct vf_gpu_spec *l40s = vf_gpu_catalog_find("l40s");
	REQUIRE(base && l40s && catalog_arch("gpt2"));
	struct vf_arch *a = malloc(sizeof *a);
	struct vf_gpu_spec *g = malloc(sizeof *g);
	struct vf_estimate *e = calloc(4, sizeof *e);
	CHECK(a && g && e);
	if (!a || !g || !e)
		goto out;
	*a = *base;
	*g = *l40s;
	struct vf_setup s = train_setup(VF_MODE_LORA, VF_PREC_AMP, 4, 2048);
	s.gpus = 4;
	s.shard = VF_SHARD_DDP; /* data-parallel: the link class is used */
	vf_estimate_run(a, &s, g, &e[0]);
	same_as_fresh(a, &s, g, &e[0]);
	/* the name alone changed in place: the same generation, a GeForce
	 * card (the GeForce column, an SHM link) */
	vf_estimate_run(a, &s, g, &e[0]);
	snprintf(g->name, sizeof g->name, "%s", "NVIDIA GeForce RTX 4090");
	vf_estimate_run(a, &s, g, &e[1]);
	same_as_fresh(a, &s, g, &e[1]);
	CHECK(e[1].step_seconds != e[0].step_seconds);
	CHECK(strcmp(e[1].parts.link, e[0].parts.link) != 0);
	/* the generation alone (each change right after an estimate of the
	 * same objects, so that what is remembered is theirs) */
	vf_estimate_run(a, &s, g, &e[1]);
	snprintf(g->generation, sizeof g->generation, "%s", "ampere");
	vf_estimate_run(a, &s, g, &e[2]);
	same_as_fresh(a, &s, g, &e[2]);
	CHECK(e[2].step_seconds != e[1].step_seconds);
	/* the architecture changed in place */
	vf_estimate_run(a, &s, g, &e[2]);
	a->layers += 8;
	vf_estimate_run(a, &s, g, &e[3]);
	same_as_fresh(a, &s, g, &e[3]);
	CHECK(e[3].peak_bytes != e[2].peak_bytes);
	/* a task head on a remembered shape (the segment rounding of the
	 * parameters follows the head) */
	vf_estimate_run(a, &s, g, &e[3]);
	s.mode = VF_MODE_FULL;
	s.head_labels = 3;
	vf_estimate_run(a, &s, g, &e[0]);
	same_as_fresh(a, &s, g, &e[0]);
out:
	free(a);
	free(g);
	free(e);
}

int main(void)
{
	snprintf(gt_path, sizeof gt_path, "%s/groundtruth/calibration.jsonl",
		 vf_test_env("VF_SHARED_DIR", "../shared"));
	struct vf_error err = {0};
	if (vf_models_load(&err) != VF_OK)
		fprintf(stderr, "catalog: %s\n", err.msg);
	RUN(test_groundtruth_bounds);
	RUN(test_simulated_verdict);
	RUN(test_groundtruth_bad_file);
	RUN(test_foreach_temporary_and_phases);
	RUN(test_record_quant);
	RUN(test_lora_counts);
	RUN(test_mechanisms);
	RUN(test_moe_mla);
	RUN(test_seed_figures);
	RUN(test_acceptance_fits);
	RUN(test_setup_flags);
	RUN(test_generic_and_quant);
	RUN(test_ltx2);
	RUN(test_ltx2_trainer_rules);
	RUN(test_peak_monotone_in_batch);
	RUN(test_memo_follows_contents);
	vf_models_release();
	return vf_test_done();
}
