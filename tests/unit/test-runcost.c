/* test-runcost.c - whole-run time and cost, data-parallel communication,
 * implied MFU and the reference runs of data/refs.json. */
#include <math.h>
#include <string.h>

#include "vf_test.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/models.h"
#include "vramfit/estimate/refs.h"
#include "vramfit/estimate/runcost.h"

#define NEAR(a, b, rel) (fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)))

static void test_run_from_tokens_and_steps(void)
{
	struct vf_error err = {0};
	struct vf_run r;
	struct vf_run_in in = {.tokens = 1e9, .tokens_per_step = 4 * 2048 * 8,
			       .step_seconds = 2.0, .gpus = 8, .price_usd_hour = 1.5};
	CHECK(vf_runcost_run(&in, &r, &err) == VF_OK);
	CHECK_INT(r.steps, 15259); /* ceil(1e9 / 65536) */
	CHECK(NEAR(r.hours, 15259 * 2.0 / 3600, 1e-12));
	CHECK(NEAR(r.cost_usd, r.hours * 8 * 1.5, 1e-12));
	CHECK(r.tokens >= 1e9);
	in.steps = 100; /* steps win */
	CHECK(vf_runcost_run(&in, &r, &err) == VF_OK);
	CHECK_INT(r.steps, 100);
	CHECK(NEAR(r.tokens, 100.0 * 65536, 1e-12));
	in.price_usd_hour = -1;
	CHECK(vf_runcost_run(&in, &r, &err) == VF_OK);
	CHECK(r.cost_usd < 0);
	in.steps = 0;
	in.tokens = 0;
	CHECK(vf_runcost_run(&in, &r, &err) == VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "--tokens");
	in.tokens = 1e9;
	in.step_seconds = -1;
	CHECK(vf_runcost_run(&in, &r, &err) == VF_EUSAGE);
}

static void test_comm_ddp_ring_allreduce(void)
{
	/* 7B params of fp32 gradients over 8 GPUs at 600 GB/s NVLink. */
	struct vf_comm_in in = {.shard = VF_SHARD_DDP, .gpus = 8, .grad_accum = 1,
				.grad_bytes = 7e9 * 4, .param_bytes = 7e9 * 4, .link_gbs = 600,
				.compute_seconds = 1.0};
	struct vf_comm c;
	vf_runcost_comm(&in, &c);
	CHECK(c.known);
	CHECK(NEAR(c.bytes_per_gpu, 2.0 * 7.0 / 8.0 * 28e9, 1e-12));
	CHECK(NEAR(c.seconds, c.bytes_per_gpu / (600e9 * VF_RUNCOST_BUS_EFFICIENCY), 1e-12));
	/* Hidden at most 80% of the backward (2/3 of 1 s). */
	CHECK(c.hidden_seconds <= VF_RUNCOST_OVERLAP * 2.0 / 3.0 + 1e-12);
	CHECK(NEAR(c.exposed_seconds + c.hidden_seconds, c.seconds, 1e-12));
	CHECK(c.exposed_seconds > 0);
	/* PCIe (64 GB/s) exposes far more than NVLink. */
	struct vf_comm p;
	in.link_gbs = 64;
	vf_runcost_comm(&in, &p);
	CHECK(p.exposed_seconds > 5 * c.exposed_seconds);
	/* One GPU or no sharding: nothing. */
	in.gpus = 1;
	vf_runcost_comm(&in, &p);
	CHECK(p.seconds == 0 && p.exposed_seconds == 0);
	/* Unknown bandwidth is unknown, not free. */
	in.gpus = 4;
	in.link_gbs = -1;
	vf_runcost_comm(&in, &p);
	CHECK(!p.known);
}

static void test_comm_zero3_more_than_ddp(void)
{
	struct vf_comm_in in = {.shard = VF_SHARD_DDP, .gpus = 4, .grad_accum = 4,
				.grad_bytes = 2e9, .param_bytes = 2e9, .link_gbs = 64,
				.compute_seconds = 0.5};
	struct vf_comm ddp, z3, z2;
	vf_runcost_comm(&in, &ddp);
	in.shard = VF_SHARD_ZERO3;
	vf_runcost_comm(&in, &z3);
	in.shard = VF_SHARD_ZERO2;
	vf_runcost_comm(&in, &z2);
	/* ZeRO-3 moves 3x(N-1)/N per micro-step; DDP 2x(N-1)/N per step. */
	CHECK(NEAR(z3.bytes_per_gpu, 4 * 3 * 0.75 * 2e9, 1e-12));
	CHECK(NEAR(ddp.bytes_per_gpu, 2 * 0.75 * 2e9, 1e-12));
	CHECK(NEAR(z2.bytes_per_gpu, ddp.bytes_per_gpu, 1e-12));
	CHECK(z3.exposed_seconds > ddp.exposed_seconds);
}

static void test_elem_bytes(void)
{
	struct vf_setup s;
	vf_setup_defaults(&s);
	CHECK(vf_runcost_grad_elem_bytes(&s) == 4); /* amp: fp32 grads */
	s.precision = VF_PREC_BF16;
	CHECK(vf_runcost_grad_elem_bytes(&s) == 2);
	CHECK(vf_runcost_param_elem_bytes(&s) == 2);
	s.mode = VF_MODE_LORA;
	s.quant = VF_QUANT_NF4;
	CHECK(vf_runcost_grad_elem_bytes(&s) == 4);
	CHECK(vf_runcost_param_elem_bytes(&s) == 0.5);
}

static void test_parse_count_and_step(void)
{
	double v;
	CHECK(vf_runcost_parse_count("1e9", &v) && v == 1e9);
	CHECK(vf_runcost_parse_count("22B", &v) && v == 22e9);
	CHECK(vf_runcost_parse_count("500M", &v) && v == 500e6);
	CHECK(vf_runcost_parse_count("3T", &v) && v == 3e12);
	CHECK(!vf_runcost_parse_count("lots", &v));
	CHECK(!vf_runcost_parse_count("-5", &v));
	CHECK(!vf_runcost_parse_count("5BB", &v));
	CHECK(!vf_runcost_parse_count("1e30", &v));
	CHECK(!vf_runcost_parse_count(NULL, &v));
	/* Step time with communication: exposed time only adds. */
	struct vf_estimate e;
	memset(&e, 0, sizeof e);
	e.step_seconds = 1.0;
	e.params = 7000000000;
	e.trainable_params = 7000000000;
	struct vf_setup s;
	vf_setup_defaults(&s);
	struct vf_gpu_spec g;
	memset(&g, 0, sizeof g);
	g.interconnect_gbs = 64;
	struct vf_comm c;
	CHECK(vf_runcost_step_seconds(&e, &s, &g, &c) == 1.0); /* one GPU */
	s.gpus = 8;
	s.shard = VF_SHARD_DDP;
	double t = vf_runcost_step_seconds(&e, &s, &g, &c);
	CHECK(c.exposed_seconds > 0 && NEAR(t, 1.0 + c.exposed_seconds, 1e-12));
	e.step_seconds = -1;
	CHECK(vf_runcost_step_seconds(&e, &s, &g, NULL) < 0);
}

static void test_mfu_and_verdicts(void)
{
	/* 6 x 1e9 x 1e9 FLOPs on 1 GPU of 100 TFLOP/s in 1e5 s = 60%. */
	CHECK(NEAR(vf_runcost_mfu(6e18, 1, 100, 1e5), 0.6, 1e-12));
	CHECK(vf_runcost_mfu(6e18, 1, -1, 1e5) < 0);
	CHECK(NEAR(vf_runcost_seconds_at_mfu(6e18, 1, 100, 0.6), 1e5, 1e-12));
	CHECK(NEAR(vf_runcost_tokens_at_mfu(0.6, 1, 100, 1e5, 6e9), 1e9, 1e-12));
	/* Attention: 2 x 6 x L x d x s per token on top of 6N. */
	CHECK(NEAR(vf_runcost_flops_per_token(1e9, 6, 22, 2048, 2048),
		   6e9 + 12.0 * 22 * 2048 * 2048, 1e-12));
	CHECK(vf_runcost_flops_per_token(1e9, 6, -1, 2048, 2048) == 6e9);
	struct vf_mfu_policy p;
	vf_mfu_policy_defaults(&p);
	CHECK(vf_runcost_judge(0.5, -1, &p) == VF_VERDICT_PLAUSIBLE);
	CHECK(vf_runcost_judge(0.9, -1, &p) == VF_VERDICT_TOO_HIGH);
	CHECK(vf_runcost_judge(0.03, -1, &p) == VF_VERDICT_TOO_LOW);
	CHECK(vf_runcost_judge(0.12, 0.40, &p) == VF_VERDICT_BELOW_STACK);
	CHECK(vf_runcost_judge(0.12, -1, &p) == VF_VERDICT_PLAUSIBLE);
	CHECK(vf_runcost_judge(-1, -1, &p) == VF_VERDICT_UNKNOWN);
	CHECK_STR(vf_verdict_name(VF_VERDICT_BELOW_STACK), "below-stack");
	CHECK(vf_runcost_assumptions()[0] != NULL);
}

static void eval_ref(const struct vf_refs *set, const char *id, struct vf_ref_eval *e,
		     const struct vf_ref **out)
{
	struct vf_error err = {0};
	const struct vf_ref *r = vf_refs_find(set, id);
	CHECK(r != NULL);
	*out = r;
	if (!r)
		return;
	const struct vf_gpu_spec *g = vf_gpu_catalog_find(r->gpu);
	CHECK(vf_ref_evaluate(set, r, g, NULL, 0, -1, e, &err) == VF_OK);
}

/* Acceptance: TinyLlama's 32 h within 15% at the published MFU. */
static void test_refs_tinyllama(void)
{
	struct vf_refs set;
	struct vf_error err = {0};
	CHECK(vf_refs_load(&set, &err) == VF_OK);
	struct vf_ref_eval e;
	const struct vf_ref *r = NULL;
	eval_ref(&set, "tinyllama-1.1b", &e, &r);
	if (r) {
		CHECK(r->hours == 32);
		CHECK_STR(e.mfu_basis, "published");
		CHECK(NEAR(e.predicted_hours, 32, 0.15));
		CHECK(e.plausible);
		CHECK(e.implied_mfu > 0.5 && e.implied_mfu < 0.65);
		CHECK(e.predicted_cost_usd > 0);
		/* One count of FLOPs: the README's 56% MFU and 24k tokens/s/GPU
		 * (whence its 32 h) imply 0.56 x 312e12 / 24000 = 7.28 GFLOP per
		 * token, fewer than vramfit's 6 x 1.1B + 12 x 22 x 2048 x 2048 =
		 * 7.71. The prediction runs at the published throughput on
		 * vramfit's count (59%, the implied MFU to within a point), so
		 * it is the README's 22e9 / (8 x 24000) s = 31.8 h, and the note
		 * says why it is not 56%. */
		CHECK(NEAR(e.published_flops_per_token, 0.56 * 312e12 / 24000, 1e-9));
		CHECK(NEAR(e.mfu_used, 24000 * e.flops_per_token / 312e12, 1e-9));
		CHECK(fabs(e.mfu_used - e.implied_mfu) < 0.01);
		CHECK(NEAR(e.predicted_hours, 22e9 / (8 * 24000.0) / 3600, 1e-9));
		CHECK_CONTAINS(e.note, "the published 56% MFU at 24000 tokens/s per GPU counts 7.28 GFLOP "
				       "per token, vramfit 7.71: the prediction runs at that throughput, 59% MFU "
				       "on vramfit's count");
		/* The estimator's own prediction exists, at a sane MFU, and more
		 * GPUs make it faster. */
		vf_ref_estimate(r, vf_gpu_catalog_find(r->gpu), &e);
		CHECK(e.est_known);
		CHECK(e.est_batch >= 1 && e.est_batch <= 64);
		CHECK(e.est_mfu > 0.05 && e.est_mfu < 0.7);
		CHECK(fabs(e.est_hours * 3600 * e.est_tokens_per_second - 22e9) < 1e3);
		double h8 = e.est_hours;
		struct vf_ref_eval w;
		const struct vf_gpu_spec *a100 = vf_gpu_catalog_find("a100-40gb");
		CHECK(vf_ref_evaluate(&set, r, a100, a100, 16, -1, &w, &err) == VF_OK);
		vf_ref_estimate(r, a100, &w);
		CHECK(w.est_known && w.est_hours < h8);
	}
	/* No catalog model: nothing estimated. */
	const struct vf_ref *m = vf_refs_find(&set, "mosaic-1.3b-1b-tokens");
	if (m) {
		CHECK(vf_ref_evaluate(&set, m, vf_gpu_catalog_find(m->gpu), NULL, 0, -1, &e, &err) ==
		      VF_OK);
		vf_ref_estimate(m, vf_gpu_catalog_find(m->gpu), &e);
		CHECK(!e.est_known);
	}
	vf_refs_release(&set);
	vf_models_release();
}

/* Acceptance: the 1.3B-on-1B-tokens claim implies an implausibly low MFU;
 * the note says what makes it consistent (~26B tokens). */
static void test_refs_mosaic_flagged(void)
{
	struct vf_refs set;
	struct vf_error err = {0};
	CHECK(vf_refs_load(&set, &err) == VF_OK);
	struct vf_ref_eval e;
	const struct vf_ref *r = NULL;
	eval_ref(&set, "mosaic-1.3b-1b-tokens", &e, &r);
	if (r) {
		CHECK(!e.plausible);
		CHECK(e.verdict == VF_VERDICT_BELOW_STACK);
		CHECK(e.implied_mfu > 0.10 && e.implied_mfu < 0.16);
		CHECK_CONTAINS(e.note, "implausibly low MFU");
		CHECK_CONTAINS(e.note, "26B tokens");
		/* 26B tokens at the stack's MFU in 7.1 h needs ~64 A100s. */
		CHECK(e.alt_gpus > 50 && e.alt_gpus < 80);
		CHECK(e.tokens_at_lo > 2e9 && e.tokens_at_hi < 5e9);
		cJSON *j = vf_ref_to_json(r, &e);
		CHECK(j != NULL);
		CHECK(cJSON_IsFalse(cJSON_GetObjectItem(j, "plausible")));
		CHECK(cJSON_GetObjectItem(j, "consistent_with") != NULL);
		cJSON_Delete(j);
	}
	/* Every ref evaluates; plausible ones stay within the policy. */
	for (size_t i = 0; i < set.count; i++) {
		struct vf_ref_eval x;
		const struct vf_gpu_spec *g = vf_gpu_catalog_find(set.refs[i].gpu);
		CHECK(vf_ref_evaluate(&set, &set.refs[i], g, NULL, 0, -1, &x, &err) == VF_OK);
		CHECK(x.note[0] != '\0');
		if (x.implied_mfu > 0 && x.plausible)
			CHECK(x.implied_mfu <= set.policy.max_mfu);
	}
	CHECK(set.count >= 13);
	vf_refs_release(&set);
}

static void test_refs_what_if(void)
{
	struct vf_refs set;
	struct vf_error err = {0};
	CHECK(vf_refs_load(&set, &err) == VF_OK);
	const struct vf_ref *r = vf_refs_find(&set, "tinyllama-1.1b");
	const struct vf_gpu_spec *a100 = vf_gpu_catalog_find("a100-40gb");
	const struct vf_gpu_spec *h100 = vf_gpu_catalog_find("h100-80gb");
	CHECK(r && a100 && h100);
	if (r && a100 && h100) {
		struct vf_ref_eval base, w;
		CHECK(vf_ref_evaluate(&set, r, a100, NULL, 0, -1, &base, &err) == VF_OK);
		CHECK(vf_ref_evaluate(&set, r, a100, h100, 8, -1, &w, &err) == VF_OK);
		/* Same MFU, faster card: time scales with the bf16 peak. */
		CHECK(NEAR(w.predicted_hours, base.predicted_hours * a100->bf16_tflops /
						      h100->bf16_tflops, 1e-9));
		CHECK_STR(w.gpu, "h100-80gb");
		CHECK(vf_ref_evaluate(&set, r, a100, h100, 4, 2.0, &w, &err) == VF_OK);
		CHECK(NEAR(w.predicted_cost_usd, w.predicted_hours * 4 * 2.0, 1e-9));
	}
	/* A ref without a token count still re-prices by scaling the published time. */
	const struct vf_ref *m = vf_refs_find(&set, "moondream-run");
	const struct vf_gpu_spec *g4090 = vf_gpu_catalog_find("rtx-4090");
	CHECK(m && g4090);
	if (m && g4090 && h100) {
		struct vf_ref_eval w;
		CHECK(vf_ref_evaluate(&set, m, g4090, h100, 1, -1, &w, &err) == VF_OK);
		CHECK(NEAR(w.predicted_hours, 20.0 * 4 * g4090->bf16_tflops / h100->bf16_tflops, 1e-9));
		CHECK_STR(w.mfu_basis, "scaled");
	}
	vf_refs_release(&set);
}

static void test_refs_bad_input(void)
{
	struct vf_refs set;
	struct vf_error err = {0};
	cJSON *j = cJSON_Parse("{\"refs\": [{\"id\": \"x\", \"model\": {\"coeff\": 99}}]}");
	CHECK(vf_refs_parse(j, "refs.json", &set, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "refs.json: x.model.coeff");
	cJSON_Delete(j);
	j = cJSON_Parse("{\"refs\": [{\"id\": \"x\", \"model\": {}}, {\"id\": \"x\", \"model\": {}}]}");
	CHECK(vf_refs_parse(j, "refs.json", &set, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "duplicate id x");
	cJSON_Delete(j);
	/* Found by fuzz-refs: a huge layer count once overflowed a cast. */
	j = cJSON_Parse("{\"refs\": [{\"id\": \"x\", \"model\": {\"layers\": 5e78}}]}");
	CHECK(vf_refs_parse(j, "refs.json", &set, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "x.model: layers");
	cJSON_Delete(j);
	j = cJSON_Parse("{\"refs\": [{\"id\": \"x\", \"model\": {}, \"hardware\": {\"gpus\": 1e30}}]}");
	CHECK(vf_refs_parse(j, "refs.json", &set, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "x.hardware.gpus");
	cJSON_Delete(j);
	j = cJSON_Parse("{\"nope\": 1}");
	CHECK(vf_refs_parse(j, "r.json", &set, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "r.json: field refs");
	cJSON_Delete(j);
}

int main(void)
{
	RUN(test_run_from_tokens_and_steps);
	RUN(test_comm_ddp_ring_allreduce);
	RUN(test_comm_zero3_more_than_ddp);
	RUN(test_elem_bytes);
	RUN(test_parse_count_and_step);
	RUN(test_mfu_and_verdicts);
	RUN(test_refs_tinyllama);
	RUN(test_refs_mosaic_flagged);
	RUN(test_refs_what_if);
	RUN(test_refs_bad_input);
	return vf_test_done();
}
