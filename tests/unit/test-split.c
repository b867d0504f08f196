/* test-split.c - one model across several GPUs (split.h) against numbers
 * derived by hand from the architectures (the arithmetic is in the
 * comments): the GPT-NeoX-20B layer split on two RTX 3090s, Llama-3.1-70B
 * with --tp 4 for inference and FSDP x TP=8 for training, 70B over eight
 * 24 GB cards, a 4-stage pipeline holding 4 micro-batches on its first
 * stage; the invariants (per-GPU weights add up to the model, nothing
 * grows with N but replicated norms); the flags. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vf_test.h"
#include "catalog.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/groundtruth.h"
#include "vramfit/estimate/search.h"
#include "vramfit/estimate/setup.h"
#include "vramfit/estimate/split.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/models.h"

#define GIB 1073741824.0

static struct vf_split sp; /* large: static */

static bool near(double a, double b, double tol)
{
	return fabs(a - b) <= tol;
}

static vf_status setup_of(struct vf_setup *s, const char *const *flags)
{
	struct vf_error err = {0};
	vf_setup_defaults(s);
	int argc = 0;
	while (flags[argc])
		argc++;
	/* "--name value", "--name=value" or a switch "--name": by name to
	 * vf_setup_set(), as src/ hands them over */
	for (int i = 0; i < argc; i++) {
		char name[64];
		const char *f = flags[i] + 2, *eq = strchr(f, '='), *v = NULL;
		snprintf(name, sizeof name, "%.*s", (int)(eq ? eq - f : (long)strlen(f)), f);
		if (eq)
			v = eq + 1;
		else if (i + 1 < argc && strncmp(flags[i + 1], "--", 2) != 0)
			v = flags[++i];
		vf_status st = vf_setup_set(s, name, v, &err);
		if (st) {
			fprintf(stderr, "  flag --%s: %s\n", name, err.msg);
			return st;
		}
	}
	vf_status st = vf_setup_finish(s, &err);
	if (st)
		fprintf(stderr, "  finish: %s\n", err.msg);
	return st;
}

/* GPT-NeoX-20B (h 6144, 44 layers, ffn 24576, vocab 50432, untied,
 * LayerNorm and biases) in bf16 on 2 x RTX 3090 (24576 MiB):
 *   layer  = qkv 6144x18432 + 18432, dense 6144^2 + 6144, MLP 2 x 6144 x 24576
 *            + 24576 + 6144, 2 LayerNorms 4 x 6144 = 453,064,704 params
 *            = 906,129,408 B;
 *   embedding = head = 50432 x 6144 = 309,854,208 params = 619,708,416 B;
 *   final LayerNorm 24,576 B; model 41,109,135,360 B.
 * accelerate's balanced budget for GPU 0: 41,109,135,360 / 2 + 1.25 x
 * 906,129,408 = 21,687,229,440 B; the embedding and 23 layers take
 * 21,460,684,800 B (a 24th would pass it): layers 0-22 and 23-43.
 * KV cache (bf16, 2048 tokens): 2 x 6144 x 2048 x 2 = 50,331,648 B a layer. */
static void test_neox_layer_split(void)
{
	const struct vf_arch *a = catalog_arch("gpt-neox-20b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("rtx-3090");
	REQUIRE(a && g);
	struct vf_setup s;
	const char *f[] = {"--mode", "infer", "--precision", "bf16", "--split", "layers", "--gpus", "2", NULL};
	CHECK(setup_of(&s, f) == VF_OK);
	struct vf_error err = {0};
	CHECK(vf_split_run(a, &s, g, &sp, &err) == VF_OK);
	CHECK(sp.fits);
	CHECK_INT(sp.ngpus, 2);
	CHECK_INT(sp.gpu[0].first_layer, 0);
	CHECK_INT(sp.gpu[0].last_layer, 22);
	CHECK_INT(sp.gpu[1].first_layer, 23);
	CHECK_INT(sp.gpu[1].last_layer, 43);
	CHECK(sp.gpu[0].embedding && !sp.gpu[0].head);
	CHECK(!sp.gpu[1].embedding && sp.gpu[1].head);
	CHECK_INT(sp.gpu[0].budget_bytes, 21687229440LL);
	/* a slice without the head still carries the final norm and one
	 * vocabulary row (36,864 B): 64 KiB of tolerance */
	CHECK(near((double)sp.gpu[0].est.weights_full, 21460684800.0, 65536));
	CHECK(near((double)sp.gpu[1].est.weights_full, 21.0 * 906129408 + 619708416 + 24576, 65536));
	CHECK(near((double)sp.weights_total, 41109135360.0, 65536));
	for (int i = 0; i < 2; i++) {
		double share = (double)sp.gpu[i].est.weights_full / 41109135360.0;
		CHECK(share > 0.45 && share < 0.55); /* about half on each card */
	}
	CHECK_INT(sp.gpu[0].est.kv_cache_full, 23LL * 50331648);
	CHECK_INT(sp.gpu[1].est.kv_cache_full, 21LL * 50331648);
	/* hand-over: the hidden state, 2048 x 6144 x 2 B, once (inference) */
	CHECK_INT(sp.gpu[0].send_bytes, 2048LL * 6144 * 2);
	CHECK(sp.step_seconds > sp.compute_seconds);
	CHECK(near(sp.p2p_seconds, 2048.0 * 6144 * 2 / 32e9, 1e-9)); /* PCIe 4.0: 64/2 GB/s */
	/* one card alone does not hold it */
	struct vf_estimate one;
	struct vf_setup s1 = s;
	s1.split = VF_SPLIT_NONE;
	s1.gpus = 1;
	vf_estimate_run(a, &s1, g, &one);
	CHECK(!vf_estimate_fits(&one, g, NULL));
	/* --max-memory 0=12: GPU 0 takes fewer layers (12 GiB: embedding +
	 * 13 layers = 12,399,390,720 B <= 12,884,901,888 B < + a 14th) */
	const char *f2[] = {"--mode", "infer", "--precision", "bf16", "--split", "layers", "--gpus", "3",
			    "--max-memory", "0=12", NULL};
	CHECK(setup_of(&s, f2) == VF_OK);
	CHECK(vf_split_run(a, &s, g, &sp, &err) == VF_OK);
	CHECK_INT(sp.gpu[0].last_layer, 12);
	CHECK(sp.gpu[2].head);
}

/* Llama-3.1-70B (h 8192, 80 layers, 64 heads, 8 KV heads of 128, ffn
 * 28672, vocab 128256, untied): a layer has 855,638,016 linear parameters
 * and 16,384 norm weights; with --tp 4 each GPU holds 213,909,504 + 16,384
 * per layer, 32,064 x 8192 rows of the embedding and of the head, the
 * final norm: 17,639,415,808 params = 35,278,831,616 B in bf16 (the
 * model's 141,107,412,992 B / 4 plus 3/4 of the replicated norms,
 * 1,978,368 B). KV: 2 KV heads per GPU: 2 x 80 x 256 x 2048 x 2 B. */
static void test_llama70b_tp4_infer(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-70b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("h100-80gb");
	REQUIRE(a && g);
	struct vf_setup s;
	const char *f[] = {"--mode", "infer", "--tp", "4", NULL};
	CHECK(setup_of(&s, f) == VF_OK);
	CHECK_INT(s.gpus, 4);
	struct vf_error err = {0};
	CHECK(vf_split_run(a, &s, g, &sp, &err) == VF_OK);
	CHECK(sp.fits);
	CHECK_INT(sp.ngpus, 4);
	for (int i = 0; i < 4; i++) {
		CHECK_INT(sp.gpu[i].est.weights_full, 35278831616LL);
		CHECK_INT(sp.gpu[i].est.kv_cache_full, 2LL * 80 * 256 * 2048 * 2);
		CHECK_INT(sp.gpu[i].tp, 4);
	}
	CHECK_INT(sp.weights_total, 141107412992LL + 3 * 1318912LL * 2);
	/* all-reduces as NCCL runs them on NVLink 4 (data/estimate/steptime.json:
	 * 450 GB/s bus bandwidth, 8 us + 0.8 us per ring step): 2 per layer of
	 * 2048 x 8192 x 2 B, ring 2 x 3/4 of the bytes, 2 x 3 steps */
	CHECK(near(sp.tp_comm_seconds, 80.0 * 2 * (1.5 * 2048 * 8192 * 2 / 450e9 + 8e-6 + 6 * 0.8e-6), 1e-9));
	/* one 80 GB card does not hold 141 GB */
	struct vf_estimate one;
	struct vf_setup s1 = s;
	s1.tp = 1;
	s1.gpus = 1;
	vf_estimate_run(a, &s1, g, &one);
	CHECK(!vf_estimate_fits(&one, g, NULL));
}

/* FSDP x TP=8 on 64 H100s, full fine-tuning (amp: fp32 weights), seq 8192,
 * checkpointing: a TP rank has 106,954,752 linear + 16,384 norm params a
 * layer, 2 x 16,032 x 8192 embedding/head rows and the final norm:
 * 8,820,367,360 params; FSDP over the 8 data-parallel ranks: x 4 B / 8 =
 * 4,410,183,680 B, plus one layer gathered and the next prefetched in
 * bf16 (FSDP mixed precision, param_dtype bf16: the default stack hf's
 * accelerate policy, torchtitan's too; 2 x 106,954,752 x 2 B):
 * 4,838,002,688 B of weights. The published
 * torchtitan-style runs measure ~72 GiB; before the split the same run
 * over 64 data-parallel ranks was predicted far beyond the card. */
static void test_llama70b_fsdp_tp8_train(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-70b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("h100-80gb");
	if (!a || !g) {
		CHECK(0);
		return;
	}
	struct vf_setup s;
	const char *f[] = {"--mode", "full", "--tp", "8", "--gpus", "64", "--shard", "fsdp",
			   "--seq", "8192", "--grad-ckpt", NULL};
	CHECK(setup_of(&s, f) == VF_OK);
	struct vf_error err = {0};
	CHECK(vf_split_run(a, &s, g, &sp, &err) == VF_OK);
	CHECK_INT(sp.dp, 8);
	CHECK_INT(sp.gpu[0].est.weights_full, 4838002688LL);
	CHECK(sp.fits);
	CHECK(sp.gpu[0].est.peak_bytes > 20 * GIB && sp.gpu[0].est.peak_bytes < 80 * GIB);
	CHECK(sp.step_seconds > 0 && sp.tp_comm_seconds > 0);
}

/* Llama-3.1-70B over eight 24 GB cards, layer split, bf16 inference:
 * 141.1 GB of weights, 17.6 GB a card; budgets 141,107,412,992 / 8 +
 * 1.25 x 1,711,308,800 B (a layer with its norms: 855,654,400 x 2 B). */
static void test_llama70b_layers_8x24(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-70b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("rtx-4090");
	if (!a || !g) {
		CHECK(0);
		return;
	}
	struct vf_setup s;
	const char *f[] = {"--mode", "infer", "--split", "layers", "--gpus", "8", NULL};
	CHECK(setup_of(&s, f) == VF_OK);
	struct vf_error err = {0};
	CHECK(vf_split_run(a, &s, g, &sp, &err) == VF_OK);
	CHECK(sp.fits);
	CHECK(sp.gpu[7].head);
	double budget = 141107412992.0 / 8 + 1.25 * 1711308800.0;
	for (int i = 0; i < 7; i++) {
		CHECK(near((double)sp.gpu[i].budget_bytes, budget, 2));
		CHECK((double)sp.gpu[i].est.weights_full <= budget + 65536);
		CHECK_INT(sp.gpu[i + 1].first_layer, sp.gpu[i].last_layer + 1);
	}
	CHECK_INT(sp.gpu[7].last_layer, 79);
	CHECK(near((double)sp.weights_total, 141107412992.0, 8 * 65536));
}

/* A 4-stage pipeline of llama2-7b (32 layers: 8 a stage), 4 micro-batches,
 * full fine-tuning with checkpointing under amp (fp32 hidden state): a
 * micro-batch in flight holds its 8 layers' inputs and the stage's input,
 * 9 x 2048 x 4096 x 4 B = 301,989,888 B. Stage 0 holds 4, stage 1 3,
 * stage 2 2, stage 3 1. 1F1B bubble: 3 micro-batch slots against 4 of
 * work. */
static void test_pipeline_4_stages(void)
{
	const struct vf_arch *a = catalog_arch("llama2-7b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("a100-80gb");
	if (!a || !g) {
		CHECK(0);
		return;
	}
	struct vf_setup s;
	const char *f[] = {"--mode", "full", "--pp", "4", "--micro-batches", "4", "--grad-ckpt", NULL};
	CHECK(setup_of(&s, f) == VF_OK);
	CHECK_INT(s.grad_accum, 4);
	struct vf_error err = {0};
	CHECK(vf_split_run(a, &s, g, &sp, &err) == VF_OK);
	int want[4] = {4, 3, 2, 1};
	for (int i = 0; i < 4; i++) {
		CHECK_INT(sp.gpu[i].in_flight, want[i]);
		CHECK_INT(sp.gpu[i].last_layer - sp.gpu[i].first_layer + 1, 8);
	}
	double d01 = (double)sp.gpu[0].est.activations_full - (double)sp.gpu[1].est.activations_full;
	double d12 = (double)sp.gpu[1].est.activations_full - (double)sp.gpu[2].est.activations_full;
	CHECK(near(d01, 301989888.0, 1024));
	CHECK(near(d12, 301989888.0, 1024));
	double work = sp.compute_seconds - sp.gpu[0].est.optimizer_seconds;
	CHECK(sp.bubble_seconds > 0);
	double ratio = sp.bubble_seconds / (work + sp.p2p_seconds);
	fprintf(stderr, "  bubble %.4f s, compute %.4f s (optimizer %.4f s), p2p %.4f s: ratio %.3f\n",
		sp.bubble_seconds, sp.compute_seconds, sp.gpu[0].est.optimizer_seconds, sp.p2p_seconds, ratio);
	CHECK(ratio > 0.70 && ratio <= 0.75 + 1e-9); /* 3 slots against 4 of work (the optimizer step is not in the bubble) */
	CHECK(near(sp.step_seconds, sp.compute_seconds + sp.p2p_seconds + sp.bubble_seconds +
					    sp.tp_comm_seconds, 1e-12));
}

/* Invariants: per-GPU weights add up to the model (layer split, pipeline);
 * with TP, N x per-GPU = model + (N-1) x replicated norms; no term grows
 * as N grows. */
static void test_invariants(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-70b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("h100-80gb");
	if (!a || !g) {
		CHECK(0);
		return;
	}
	struct vf_error err = {0};
	struct vf_setup s;
	struct vf_estimate prev;
	memset(&prev, 0, sizeof prev);
	double norms = (80.0 * 16384 + 8192) * 4; /* fp32 under amp */
	for (int tp = 1; tp <= 8; tp *= 2) { /* 8 data-parallel ranks, N = tp grows */
		char t[8], n[8];
		snprintf(t, sizeof t, "%d", tp);
		snprintf(n, sizeof n, "%d", 8 * tp);
		const char *f[] = {"--mode", "full", "--tp", t, "--gpus", n, "--shard", "fsdp", "--grad-ckpt", NULL};
		CHECK(setup_of(&s, f) == VF_OK);
		if (tp == 1) { /* --tp 1 is no split: the estimator itself */
			s.split = VF_SPLIT_NONE;
			vf_estimate_run(a, &s, g, &prev);
			continue;
		}
		CHECK(vf_split_run(a, &s, g, &sp, &err) == VF_OK);
		const struct vf_estimate *e = &sp.gpu[0].est;
		CHECK(e->weights_full <= prev.weights_full);
		CHECK(e->gradients_full <= prev.gradients_full);
		CHECK(e->optimizer_full <= prev.optimizer_full);
		CHECK(e->activations_full <= prev.activations_full);
		CHECK(e->peak_bytes <= prev.peak_bytes);
		prev = *e;
	}
	/* inference TP sum: the model plus the norms on every extra rank */
	for (int tp = 2; tp <= 8; tp *= 2) {
		char t[8];
		snprintf(t, sizeof t, "%d", tp);
		const char *f[] = {"--mode", "infer", "--precision", "amp", "--tp", t, NULL};
		CHECK(setup_of(&s, f) == VF_OK);
		CHECK(vf_split_run(a, &s, g, &sp, &err) == VF_OK);
		CHECK(near((double)sp.weights_total, 70553706496.0 * 4 + (tp - 1) * norms * 1.0, 4096));
	}
	/* layer split and pipeline: the sum is the model */
	for (int n = 2; n <= 8; n++) {
		char t[8];
		snprintf(t, sizeof t, "%d", n);
		const char *f[] = {"--mode", "infer", "--split", "layers", "--gpus", t, NULL};
		CHECK(setup_of(&s, f) == VF_OK);
		CHECK(vf_split_run(a, &s, g, &sp, &err) == VF_OK);
		CHECK(near((double)sp.weights_total, 141107412992.0, n * 65536.0));
		const char *f2[] = {"--mode", "infer", "--pp", t, NULL};
		CHECK(setup_of(&s, f2) == VF_OK);
		CHECK(vf_split_run(a, &s, g, &sp, &err) == VF_OK);
		CHECK(near((double)sp.weights_total, 141107412992.0, n * 65536.0));
	}
}

static void test_flags(void)
{
	struct vf_setup s;
	const char *bad1[] = {"--split", "layers", "--tp", "2", NULL};
	CHECK(setup_of(&s, bad1) == VF_EUSAGE);
	const char *bad2[] = {"--tp", "4", "--gpus", "6", NULL};
	CHECK(setup_of(&s, bad2) == VF_EUSAGE);
	const char *bad3[] = {"--micro-batches", "4", NULL};
	CHECK(setup_of(&s, bad3) == VF_EUSAGE);
	const char *bad4[] = {"--split", "layers", "--max-memory", "0=x", NULL};
	CHECK(setup_of(&s, bad4) == VF_EUSAGE);
	const char *bad5[] = {"--sequence-parallel", NULL};
	CHECK(setup_of(&s, bad5) == VF_EUSAGE);
	const char *ok[] = {"--split=layers", "--max-memory", "0=20GiB,1=22.5", "--max-memory", "3=8", NULL};
	CHECK(setup_of(&s, ok) == VF_OK);
	CHECK_INT(s.max_memory_cgib[0], 2000);
	CHECK_INT(s.max_memory_cgib[1], 2250);
	CHECK_INT(s.max_memory_cgib[2], 0);
	CHECK_INT(s.max_memory_cgib[3], 800);
	CHECK_INT(vf_setup_max_memory_bytes(&s, 1), 22.5 * GIB);
	/* fuzz finding (fuzz-split, ASan): a G or Gi suffix at the end of the
	 * value skipped past its terminator */
	const char *suffixes[] = {"--split=layers", "--max-memory", "0=20G", "--max-memory", "1=8Gi",
				  "--max-memory", "2=4gb", NULL};
	CHECK(setup_of(&s, suffixes) == VF_OK);
	CHECK_INT(s.max_memory_cgib[0], 2000);
	CHECK_INT(s.max_memory_cgib[1], 800);
	CHECK_INT(s.max_memory_cgib[2], 400);
	const char *badsuffix[] = {"--split=layers", "--max-memory", "0=20GiX", NULL};
	CHECK(setup_of(&s, badsuffix) == VF_EUSAGE);
	const char *pp[] = {"--pp", "4", "--tp", "2", "--gpus", "16", NULL};
	CHECK(setup_of(&s, pp) == VF_OK);
	CHECK_INT(s.micro_batches, 4); /* one per stage by default */
	CHECK_INT(s.grad_accum, 4);
	CHECK(s.shard == VF_SHARD_DDP); /* dp 2 */
	/* --tp 3 does not divide 64 heads */
	const struct vf_arch *a = catalog_arch("llama3.1-70b");
	const char *tp3[] = {"--mode", "infer", "--tp", "3", NULL};
	CHECK(setup_of(&s, tp3) == VF_OK);
	struct vf_error err = {0};
	CHECK(a && vf_split_run(a, &s, NULL, &sp, &err) == VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "64 attention heads");
}

/* fit --search: 70B bf16 inference on 8 H100s without quantization fits
 * no single card (141 GB of weights); the split knob finds tp/pp layouts,
 * and pruning returns what the exhaustive search does. */
static void test_search_split_knob(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-70b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("h100-80gb");
	if (!a || !g) {
		CHECK(0);
		return;
	}
	struct vf_setup s;
	const char *f[] = {"--mode", "infer", "--gpus", "8", NULL};
	CHECK(setup_of(&s, f) == VF_OK);
	struct vf_search_opts o;
	vf_search_opts_defaults(&o);
	o.knobs = VF_KNOB_BIT(VF_KNOB_BATCH) | VF_KNOB_BIT(VF_KNOB_GPUS) | VF_KNOB_BIT(VF_KNOB_SPLIT);
	o.max_gpus = 8;
	o.top = 50;
	o.sort = VF_SORT_VRAM;
	struct vf_search p, x;
	struct vf_error err = {0};
	CHECK(vf_search_run(a, &s, g, &o, &p, &err) == VF_OK);
	o.exhaustive = true;
	CHECK(vf_search_run(a, &s, g, &o, &x, &err) == VF_OK);
	CHECK(p.count > 0);
	CHECK_INT(p.count, x.count);
	CHECK_INT(p.space, x.space);
	CHECK(p.evaluated <= x.evaluated);
	bool tp8 = false;
	for (size_t i = 0; i < p.count; i++) {
		CHECK(vf_split_active(&p.results[i].setup)); /* nothing fits unsplit */
		CHECK(p.results[i].peak_bytes == x.results[i].peak_bytes);
		tp8 |= p.results[i].setup.tp == 8;
	}
	CHECK(tp8);
	char d[256];
	CHECK(vf_search_diff(&s, &p.results[0].setup, d, sizeof d) >= 1);
	CHECK(strstr(d, "tp ") || strstr(d, "pp "));
	vf_search_release(&p);
	vf_search_release(&x);
	/* without the knob: nothing fits */
	o.knobs &= ~VF_KNOB_BIT(VF_KNOB_SPLIT);
	o.exhaustive = false;
	CHECK(vf_search_run(a, &s, g, &o, &p, &err) == VF_OK);
	CHECK_INT(p.count, 0);
	vf_search_release(&p);
}

/* A measured record with tp/gpus/shard is checked against the GPU of the
 * split that limits (--check-groundtruth; published multi-GPU runs). */
static void test_groundtruth_record_split(void)
{
	static const char text[] =
		"{\"env\": {\"context_used_bytes\": 552402944}}\n"
		"{\"id\": \"tp8\", \"status\": \"ok\", \"arch\": \"llama3-70b\", \"arch_cfg\": "
		"{\"hidden_size\": 8192, \"intermediate_size\": 28672, \"num_hidden_layers\": 80, "
		"\"num_attention_heads\": 64, \"num_key_value_heads\": 8, \"vocab_size\": 128256}, "
		"\"mode\": \"full\", \"precision\": \"amp\", \"optimizer\": \"adamw\", \"batch\": 1, "
		"\"seq\": 8192, \"grad_ckpt\": true, \"gpus\": 64, \"shard\": \"fsdp\", \"tp\": 8, "
		"\"peak_alloc\": 60000000000, \"peak_reserved\": 70000000000}\n";
	struct vf_gt_report r;
	struct vf_error err = {0};
	CHECK(vf_groundtruth_check_text(text, sizeof text - 1, "t.jsonl", &r, &err) == VF_OK);
	if (err.msg[0]) {
		fprintf(stderr, "  %s\n", err.msg);
		return;
	}
	CHECK_INT(r.n, 1);
	const struct vf_arch *a = catalog_arch("llama3.1-70b");
	struct vf_setup s;
	const char *f[] = {"--mode", "full", "--tp", "8", "--gpus", "64", "--shard", "fsdp", "--seq", "8192",
			   "--grad-ckpt", "--context-mib", "0", NULL};
	CHECK(setup_of(&s, f) == VF_OK);
	s.context_bytes = 552402944;
	CHECK(a && vf_split_run(a, &s, vf_gpu_catalog_find("h200"), &sp, &err) == VF_OK);
	/* the same model (llama3-70b's config) split the same way */
	CHECK_INT(r.rows[0].pred_peak, sp.total.peak_bytes);
	CHECK(r.rows[0].pred_peak < 80 * GIB);
	vf_gt_report_release(&r);
}

/* Training with a layer split (naive model parallel): llama2-7b, full
 * fine-tuning in bf16 with AdamW over 4 GPUs. Each GPU holds the gradients
 * of its parameters (bf16: as large as its weights) and AdamW's two states
 * (bf16: twice its weights); over the GPUs they add up to the model's
 * 6,738,415,616 params x 2 B and x 4 B. */
static void test_layer_split_training(void)
{
	const struct vf_arch *a = catalog_arch("llama2-7b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("rtx-4090");
	if (!a || !g) {
		CHECK(0);
		return;
	}
	struct vf_setup s;
	const char *f[] = {"--mode", "full", "--precision", "bf16", "--split", "layers", "--gpus", "4", NULL};
	CHECK(setup_of(&s, f) == VF_OK);
	struct vf_error err = {0};
	CHECK(vf_split_run(a, &s, g, &sp, &err) == VF_OK);
	double w = 0, gr = 0, st = 0;
	for (int i = 0; i < sp.ngpus; i++) {
		const struct vf_estimate *e = &sp.gpu[i].est;
		CHECK(near((double)e->gradients_full, (double)e->weights_full, 65536));
		CHECK(near((double)e->optimizer_full, 2.0 * (double)e->weights_full, 131072));
		w += (double)e->weights_full;
		gr += (double)e->gradients_full;
		st += (double)e->optimizer_full;
	}
	CHECK(near(w, 6738415616.0 * 2, 4 * 65536.0));
	CHECK(near(gr, 6738415616.0 * 2, 4 * 65536.0));
	CHECK(near(st, 6738415616.0 * 4, 4 * 131072.0));
	CHECK(sp.fits);
	/* one GPU at a time: the step is the sum of the GPUs' steps + hand-overs */
	double sum = 0;
	for (int i = 0; i < sp.ngpus; i++)
		sum += sp.gpu[i].est.step_seconds;
	CHECK(near(sp.step_seconds, sum + sp.p2p_seconds, 1e-9));
	/* hand-overs: 3 boundaries x (activation + its gradient), 2048 x 4096 x 2 B each
	 * way, over PCIe 4.0 x16 (32 GB/s each way) */
	CHECK(near(sp.p2p_seconds, 3 * 2 * 2048.0 * 4096 * 2 / 32e9, 1e-9));
}

/* Sequence parallelism: every activation of a TP rank is 1/N of the
 * unsplit model's (Megatron: sbh(34/t + 5as/(ht)) with SP against
 * sbh(10 + 24/t + ...) without), so never more than without it. */
static void test_sequence_parallel(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-70b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("h100-80gb");
	if (!a || !g) {
		CHECK(0);
		return;
	}
	struct vf_setup s;
	struct vf_error err = {0};
	const char *f[] = {"--mode", "full", "--tp", "8", "--gpus", "64", "--shard", "fsdp", "--seq", "8192", NULL};
	CHECK(setup_of(&s, f) == VF_OK);
	CHECK(vf_split_run(a, &s, g, &sp, &err) == VF_OK);
	int64_t no_sp = sp.gpu[0].est.activations_full;
	const char *f2[] = {"--mode", "full", "--tp", "8", "--gpus", "64", "--shard", "fsdp", "--seq", "8192",
			    "--sequence-parallel", NULL};
	CHECK(setup_of(&s, f2) == VF_OK);
	CHECK(vf_split_run(a, &s, g, &sp, &err) == VF_OK);
	int64_t with_sp = sp.gpu[0].est.activations_full;
	CHECK(with_sp < no_sp);
	/* the unsplit model's activations on the same data-parallel ranks, / 8 */
	struct vf_setup u = s;
	u.tp = 1;
	u.gpus = 8;
	u.sequence_parallel = false;
	struct vf_estimate e;
	vf_estimate_run(a, &u, g, &e);
	CHECK(near((double)with_sp, (double)e.activations_full / 8, 8));
}

int main(void)
{
	struct vf_error err = {0};
	if (vf_models_load(&err) != VF_OK)
		fprintf(stderr, "catalog: %s\n", err.msg);
	size_t n;
	if (!vf_gpu_catalog(&n, &err))
		fprintf(stderr, "gpus: %s\n", err.msg);
	RUN(test_neox_layer_split);
	RUN(test_llama70b_tp4_infer);
	RUN(test_llama70b_fsdp_tp8_train);
	RUN(test_llama70b_layers_8x24);
	RUN(test_pipeline_4_stages);
	RUN(test_invariants);
	RUN(test_flags);
	RUN(test_search_split_knob);
	RUN(test_groundtruth_record_split);
	RUN(test_layer_split_training);
	RUN(test_sequence_parallel);
	vf_models_release();
	return vf_test_done();
}
