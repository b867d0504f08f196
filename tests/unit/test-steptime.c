/* test-steptime.c - the step time on every GPU and link (issue 31): the
 * per-generation constants and their sources, the step as its parts,
 * communication per link class (NVLink, PCIe with and without
 * peer-to-peer, between nodes) and its exposure per strategy, the time of
 * the mechanisms that have memory (dequantization, 8-bit optimizer,
 * compile, paging, activation offload, fp16's GradScaler). No timing of
 * this machine is asserted: only the model's arithmetic. */
#include <math.h>
#include <string.h>

#include "vf_test.h"
#include "catalog.h"
#include "estimate/nccl.h"
#include "estimate/steptime.h"
#include "vramfit/base/data.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/runcost.h"
#include "vramfit/estimate/setup.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/models.h"

static const struct vf_arch *arch(const char *id)
{
	const struct vf_model_entry *m = vf_models_find(id);
	return m && m->has_arch ? &m->arch : NULL;
}

static const struct vf_gpu_spec *gpu(const char *id)
{
	const struct vf_gpu_spec *g = vf_gpu_catalog_find(id);
	if (!g)
		fprintf(stderr, "  no catalog GPU %s\n", id);
	return g;
}

/* The parts add up: compute = its parts, step = compute + exposed comm
 * + the compute NCCL's SMs take from the hidden comm. */
static bool parts_add_up(const struct vf_estimate *e)
{
	const char *names[16];
	double v[16];
	int n = vf_estimate_parts_list(e, names, v);
	double sum = 0;
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], "comm_exposed") != 0 && strcmp(names[i], "comm_interference") != 0)
			sum += v[i];
	double step = e->parts.compute + e->parts.comm_exposed + e->parts.comm_interference;
	bool ok = fabs(sum - e->parts.compute) <= 1e-9 * e->parts.compute &&
		  fabs(step - e->step_seconds) <= 1e-9 * e->step_seconds;
	if (!ok)
		fprintf(stderr, "  parts %.6f compute %.6f comm %.6f step %.6f\n", sum, e->parts.compute,
			e->parts.comm_exposed, e->step_seconds);
	return ok;
}

/* Every generation's GEMM, attention and bandwidth efficiency says where
 * it came from (a kernel-level benchmark or the H200 fit); none is the
 * old "hopper's value assumed". */
static void test_constants_cite_sources(void)
{
	cJSON *root = NULL;
	char src[256];
	struct vf_error err = {0};
	CHECK(vf_data_load_json("estimate/steptime.json", &root, src, sizeof src, &err) == VF_OK);
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "constants");
	static const char *const tables[] = {"gemm_efficiency", "attention_efficiency",
					     "bandwidth_efficiency"};
	static const char *const gens[] = {"hopper", "blackwell", "ada", "ampere", "turing", "volta"};
	for (size_t t = 0; t < 3; t++)
		for (size_t g = 0; g < 6; g++) {
			const cJSON *e = cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItemCaseSensitive(c, tables[t]), gens[g]);
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "value");
			const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, "source");
			CHECK(cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble < 1);
			CHECK(cJSON_IsString(s) && strlen(s->valuestring) > 20);
			if (cJSON_IsString(s))
				CHECK(!strstr(s->valuestring, "hopper's value assumed"));
		}
	/* the host's speed per generation's machines: sourced, within reason */
	for (size_t g = 0; g < 6; g++) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(c, "host_speed"), gens[g]);
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "value");
		CHECK(cJSON_IsNumber(v) && v->valuedouble >= 0.5 && v->valuedouble <= 2);
		CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "source")));
	}
	/* hopper keeps the values fitted on the H200 */
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(c, "gemm_efficiency"), "hopper");
	CHECK(cJSON_GetObjectItemCaseSensitive(h, "value")->valuedouble == 0.648);
	cJSON_Delete(root);
}

/* One large training step per generation: the kernel-level ratios move
 * the predicted utilisation; an H200 and an H100 share hopper's. */
static void test_generations_differ(void)
{
	const struct vf_arch *a = arch("llama2-7b");
	REQUIRE(a != NULL);
	struct vf_setup s = train_setup(VF_MODE_LORA, VF_PREC_BF16, 4, 2048);
	s.grad_ckpt = true;
	struct vf_estimate h200, h100, a100, v100, r4090;
	vf_estimate_run(a, &s, gpu("h200"), &h200);
	vf_estimate_run(a, &s, gpu("h100-80gb"), &h100);
	vf_estimate_run(a, &s, gpu("a100-80gb"), &a100);
	vf_estimate_run(a, &s, gpu("rtx-4090"), &r4090);
	s.precision = VF_PREC_FP16; /* Volta: fp16 tensor cores, no bf16 */
	vf_estimate_run(a, &s, gpu("v100-32gb"), &v100);
	fprintf(stderr, "  MFU: h200 %.3f h100 %.3f a100 %.3f v100 %.3f rtx-4090 %.3f\n", h200.mfu,
		h100.mfu, a100.mfu, v100.mfu, r4090.mfu);
	CHECK(a100.mfu > h100.mfu * 1.05);  /* cuBLAS reaches 86.9 % on A100, 80.3 % on H100 */
	CHECK(r4090.mfu > h100.mfu * 1.05); /* Ada's GEMMs reach more of their (lower) rate */
	CHECK(v100.mfu < a100.mfu);         /* no flash attention on Volta */
	CHECK(parts_add_up(&h200) && parts_add_up(&a100) && parts_add_up(&v100));
	CHECK(h200.parts.gemm > h200.parts.memory_bound && h200.parts.attention > 0);
}

/* The time hopper's fit leaves beyond its kernel benchmarks (launch gaps,
 * tails, host bubbles) is time per FLOP and per byte that a slower or
 * faster GPU does not stretch: on an A100 with twice the tensor rate the
 * GEMMs take more than half the time, with twice the bandwidth the
 * memory-bound kernels more than half; hopper keeps its fitted shares,
 * so there they halve. */
static void test_fixed_time_per_generation(void)
{
	const struct vf_arch *a = arch("llama2-7b");
	const struct vf_gpu_spec *a100 = gpu("a100-80gb"), *h200 = gpu("h200");
	REQUIRE(a && a100 && h200);
	struct vf_setup s = train_setup(VF_MODE_FULL, VF_PREC_BF16, 4, 2048);
	struct vf_gpu_spec fast = *a100, wide = *a100, hfast = *h200;
	fast.bf16_tflops *= 2;
	fast.fp16_tflops *= 2;
	wide.bandwidth_gbs *= 2;
	hfast.bf16_tflops *= 2;
	hfast.fp16_tflops *= 2;
	struct vf_estimate e, ef, ew, h, hf;
	vf_estimate_run(a, &s, a100, &e);
	vf_estimate_run(a, &s, &fast, &ef);
	vf_estimate_run(a, &s, &wide, &ew);
	vf_estimate_run(a, &s, h200, &h);
	vf_estimate_run(a, &s, &hfast, &hf);
	double rg = ef.parts.gemm / e.parts.gemm, rb = ew.parts.memory_bound / e.parts.memory_bound;
	double rh = hf.parts.gemm / h.parts.gemm;
	fprintf(stderr, "  2x rate: a100 GEMMs x%.3f, h200 x%.3f; 2x bandwidth: a100 memory-bound x%.3f\n",
		rg, rh, rb);
	CHECK(rg > 0.52 && rg < 0.6); /* (1/(2R k) + c) / (1/(R k) + c) = 0.535 */
	CHECK(rb > 0.6 && rb < 0.7);  /* (1/(2B k) + c) / (1/(B k) + c) = 0.644 */
	CHECK(rh < 0.51);             /* hopper: its fitted share at any rate */
	CHECK(parts_add_up(&e) && parts_add_up(&ef) && parts_add_up(&ew));
}

/* A constant of steptime.json's "constants" (number, or {"value": n}),
 * or of its per-generation table entry `gen`. */
static double constant(const char *key, const char *gen)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(vf__steptime_data("constants"), key);
	if (gen)
		o = cJSON_GetObjectItemCaseSensitive(o, gen);
	if (cJSON_IsObject(o))
		o = cJSON_GetObjectItemCaseSensitive(o, "value");
	return cJSON_IsNumber(o) ? o->valuedouble : -1;
}

/* A step of one n x n x n GEMM, one micro-batch, flash attention and
 * nothing else: the single-kernel cases below set its rate and kind. */
static void one_gemm_work(struct vf__step_work *w, double n)
{
	memset(w, 0, sizeof *w);
	w->micro = 1;
	w->attn = VF__ATTN_FLASH;
	w->nkinds = 1;
	w->kind[0].count = 1;
	w->kind[0].ngemm = 1;
	w->kind[0].gemm[0] = (struct vf__gemm){.m = n, .k = n, .n = n, .count = 1};
}

/* One forward of one square GEMM and `elem` bytes of memory-bound
 * traffic on `g` (no launches: kernels 0), its parts. */
static void one_gemm_step(const struct vf_gpu_spec *g, double mnk, double elem, struct vf_step_parts *p)
{
	struct vf__step_work w;
	one_gemm_work(&w, mnk);
	w.kind[0].elem_bytes = elem;
	w.rate_tflops = g->bf16_tflops > 0 ? g->bf16_tflops : g->fp16_tflops;
	struct vf__steptime_out o;
	vf__steptime(&w, g, &o);
	*p = o.parts;
}

/* g's memory-bound kernel share recovered from one step's times: a
 * step of 1e10 bytes of elementwise traffic takes bytes / (raw x share)
 * plus the fixed time per byte at the host speed of entry host. */
static double memory_bound_share(const struct vf_gpu_spec *g, const char *host)
{
	double bfix = constant("bandwidth_fixed_s_per_byte", NULL);
	double hs = constant("host_speed", host);
	CHECK(bfix > 0 && hs > 0);
	struct vf_step_parts p;
	one_gemm_step(g, 1024, 1e10, &p);
	double raw = g->bandwidth_gbs * 1e9;
	double share = 1e10 / (raw * p.memory_bound);
	return 1 / (1 / share - raw * bfix * hs);
}

/* The entry's device-copy share (bandwidth_efficiency GEN kernel). */
static double copy_share(const char *gen)
{
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(vf__steptime_data("constants"), "bandwidth_efficiency");
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(b, gen), "kernel");
	return cJSON_IsNumber(k) ? k->valuedouble : -1;
}

/* Streaming kernels counted op by op (stream_bytes: peft's adapter casts,
 * scale and add; bitsandbytes' casts) run at the generation's
 * device-copy share: 1e10 bytes take 1e10 / (datasheet x kernel), with no
 * fixed time per byte, on an H200 and an A100 80GB alike; the same bytes
 * as elem_bytes take the fitted share's longer time. */
static void test_streaming_bytes_at_copy_share(void)
{
	const char *ids[] = {"h200", "a100-80gb"}, *gens[] = {"hopper", "ampere-hbm2e-80gb"};
	for (int i = 0; i < 2; i++) {
		const struct vf_gpu_spec *g = gpu(ids[i]);
		CHECK(g != NULL);
		struct vf__step_work w;
		one_gemm_work(&w, 1024);
		w.rate_tflops = g->bf16_tflops;
		w.kind[0].stream_bytes = 1e10;
		struct vf__steptime_out o;
		vf__steptime(&w, g, &o);
		double want = 1e10 / (g->bandwidth_gbs * 1e9 * copy_share(gens[i]));
		fprintf(stderr, "  %s: 1e10 streaming bytes %.3f ms (copy share %.3f: %.3f ms)\n", ids[i],
			1e3 * o.parts.memory_bound, copy_share(gens[i]), 1e3 * want);
		CHECK(copy_share(gens[i]) > 0.5 && fabs(o.parts.memory_bound - want) < 1e-9);
		struct vf_step_parts p;
		one_gemm_step(g, 1024, 1e10, &p);
		CHECK(p.memory_bound > 1.3 * o.parts.memory_bound);
	}
}

/* The kernel-level shares of Volta's GEMMs and Blackwell's memory-bound
 * kernels are the cited benchmarks': the share the step's GEMM (or
 * memory-bound) time implies, less the fixed time per FLOP (per byte)
 * hopper's fit leaves, is torch's fp16 matmul on a V100-SXM2 (97.36 of
 * 125 TFLOP/s) and cub's elementwise add on a B200 (6.72 of 8 TB/s) and
 * an RTX 5090 (1.52-1.57 of 1.792 TB/s). Was: 0.8 and 0.86 assumed. */
static void test_kernel_level_volta_blackwell(void)
{
	const struct vf_gpu_spec *v = gpu("v100-32gb"), *b = gpu("b200"), *r = gpu("rtx-5090");
	REQUIRE(v && b && r);
	double tile = constant("gemm_tile", NULL), kgpu = constant("kernel_gpu_s", NULL);
	double gfix = constant("gemm_fixed_s_per_flop", NULL), bfix = constant("bandwidth_fixed_s_per_byte", NULL);
	CHECK(tile > 0 && kgpu >= 0 && gfix > 0 && bfix > 0);
	const double n = 16384, elem = 1e10;
	struct vf_step_parts p;
	one_gemm_step(v, n, elem, &p);
	double rate = v->fp16_tflops * 1e12;
	/* the GEMM and the (empty) lm_head each add kernel_gpu_s */
	double eff = 2 * n * (n * n + tile) / (rate * (p.gemm - 2 * kgpu));
	double kv = 1 / (1 / eff - rate * gfix * constant("host_speed", "volta"));
	const struct { const struct vf_gpu_spec *g; const char *host; double lo, hi; } bw[] = {
		{b, "blackwell", 6.70 / 8.0, 6.73 / 8.0}, {r, "blackwell-geforce", 1.517 / 1.792, 1.566 / 1.792}};
	double kb[2];
	for (int i = 0; i < 2; i++) {
		one_gemm_step(bw[i].g, n, elem, &p);
		double raw = bw[i].g->bandwidth_gbs * 1e9;
		double share = elem / (raw * p.memory_bound);
		kb[i] = 1 / (1 / share - raw * bfix * constant("host_speed", bw[i].host));
		CHECK(kb[i] >= bw[i].lo - 1e-3 && kb[i] <= bw[i].hi + 1e-3);
	}
	fprintf(stderr, "  kernel shares: v100 GEMM %.4f (97.36/125 = 0.7789), b200 bandwidth %.4f, "
			"rtx-5090 %.4f\n", kv, kb[0], kb[1]);
	CHECK(fabs(kv - 97.36 / 125) < 1e-3);
}

/* One forward of `flops` of flash attention on `g`, the share of its
 * dense rate the step's attention time implies. */
static double attention_share(const struct vf_gpu_spec *g, double flops)
{
	struct vf__step_work w;
	memset(&w, 0, sizeof w);
	w.micro = 1;
	w.attn = VF__ATTN_FLASH;
	w.nkinds = 1;
	w.kind[0].count = 1;
	w.kind[0].attn_flops = flops;
	w.rate_tflops = g->bf16_tflops > 0 ? g->bf16_tflops : g->fp16_tflops;
	struct vf__steptime_out o;
	vf__steptime(&w, g, &o);
	return o.parts.attention > 0 ? flops / (w.rate_tflops * 1e12 * o.parts.attention) : -1;
}

/* The cited kernel-level figures bound the shares: Ampere's and Ada's
 * memory-bound kernels run at the device-copy share of A100 40GB/RTX 3090
 * copy tests (0.846-0.895; the A100 80GB has its own,
 * test_kernel_level_ampere_hbm2e_80gb) and RTX 4090 copy tests (0.888-0.92); flash
 * attention at FlashAttention-2's forward+backward share on an RTX A5000
 * (0.53-0.71), on an RTX 4090 at its FA2 forward share times the A5000's
 * forward+backward / forward (0.93-0.98) and, on a B200, between
 * FlashAttention-2 (0.15 at most) and FlashAttention-4 (0.625
 * non-causal). Recovered from one step's
 * times as in test_kernel_level_volta_blackwell. */
static void test_kernel_level_ampere_ada(void)
{
	const struct vf_gpu_spec *a = gpu("a100-80gb"), *a40 = gpu("a100-40gb"), *d = gpu("rtx-4090"),
				 *b = gpu("b200");
	REQUIRE(a && a40 && d && b);
	const struct { const struct vf_gpu_spec *g; const char *host; double lo, hi; } bw[] = {
		{a40, "ampere", 1225.3 / 1448.4, 837.6 / 936.0}, {d, "ada-geforce", 895.0 / 1008.0, 926.8 / 1008.0}};
	for (int i = 0; i < 2; i++) {
		double k = memory_bound_share(bw[i].g, bw[i].host);
		fprintf(stderr, "  %s memory-bound kernel share %.4f (cited %.3f-%.3f)\n", bw[i].g->id, k,
			bw[i].lo, bw[i].hi);
		CHECK(k >= bw[i].lo - 1e-3 && k <= bw[i].hi + 1e-3);
	}
	double sa = attention_share(a, 1e15), sb = attention_share(b, 1e15), sd = attention_share(d, 1e15);
	fprintf(stderr, "  flash attention share: a100 %.4f, b200 %.4f, rtx-4090 %.4f\n", sa, sb, sd);
	CHECK(sa >= 59.2 / 111.1 - 1e-3 && sa <= 78.6 / 111.1 + 1e-3);
	CHECK(sb >= 333.0 / 2250 && sb <= 1406.0 / 2250);
	/* the 4090's FA2 forward (171.8 / 172.8 of 165.2 at seq 2k / 4k) times
	 * the A5000's forward+backward / forward (72.95/81.31, 76.64/81.69).
	 * Was: 0.6 (ada's, the A100's share) */
	CHECK(sd >= 171.8 / 165.2 * 72.95 / 81.31 - 5e-3 && sd <= 172.8 / 165.2 * 76.64 / 81.69 + 1e-3);
}

/* Blackwell's sourced shares, recovered from one step's times as in
 * test_kernel_level_volta_blackwell: the RTX 5090's GEMMs at torch's bf16
 * 8192^2 matmul of three full-power cards (234.66-236.03 TFLOP/s of the
 * 209.5 fp32-accumulate datasheet; was: the L20's 0.92), and a B200's
 * flash attention at cuDNN's forward+backward at seq 8k (1171.3 forward,
 * 942.5 backward, backward at 2.5x the FLOPs; PyTorch's SDPA backend
 * there; was: 0.55), which sits between its seq-4k and seq-16k figures.
 * The RTX 5090 runs FlashAttention-2's kernels, not cuDNN's, so its
 * attention share is not the B200's. */
static void test_kernel_level_blackwell_sources(void)
{
	const struct vf_gpu_spec *r = gpu("rtx-5090"), *b = gpu("b200");
	CHECK(r && b);
	if (!r || !b)
		return;
	double tile = constant("gemm_tile", NULL), kgpu = constant("kernel_gpu_s", NULL);
	double gfix = constant("gemm_fixed_s_per_flop", NULL);
	const double n = 16384;
	struct vf_step_parts p;
	one_gemm_step(r, n, 0, &p);
	double rate = r->bf16_tflops * 1e12;
	CHECK(fabs(rate - 209.5e12) < 1e9); /* the catalog's fp32-accumulate rate */
	double eff = 2 * n * (n * n + tile) / (rate * (p.gemm - 2 * kgpu));
	double k = 1 / (1 / eff - rate * gfix * constant("host_speed", "blackwell-geforce"));
	double fb8 = 3.5 / (1 / 1171.278 + 2.5 / 942.509);
	double fb4 = 3.5 / (1 / 855.678 + 2.5 / 701.265), fb16 = 3.5 / (1 / 1332.415 + 2.5 / 1074.776);
	double sb = attention_share(b, 1e15), sr = attention_share(r, 1e15);
	fprintf(stderr, "  rtx-5090 GEMM kernel share %.4f (cited %.3f-%.3f), b200 attention %.4f "
			"(cuDNN seq 8k %.4f), rtx-5090 attention %.4f\n",
		k, 234.66 / 209.5, 236.03 / 209.5, sb, fb8 / 2250, sr);
	CHECK(k >= 234.66 / 209.5 - 1e-3 && k <= 236.03 / 209.5 + 1e-3);
	CHECK(fabs(sb - fb8 / 2250) < 1e-3);
	CHECK(sb > fb4 / 2250 && sb < fb16 / 2250);
	CHECK(fabs(sr - sb) > 0.05);
}

/* The flash attention share of one forward on `g` over `seq` keys per
 * query at head dimension `hd` (causal or not), as test_kernel_level_*
 * recover it from one step's times; seq 0: no length given. */
static double attention_share_at(const struct vf_gpu_spec *g, double seq, double hd, bool causal)
{
	struct vf__step_work w;
	memset(&w, 0, sizeof w);
	w.micro = 1;
	w.attn = VF__ATTN_FLASH;
	w.nkinds = 1;
	w.kind[0].count = 1;
	w.kind[0].attn_flops = 1e15;
	w.kind[0].attn_seq = seq;
	w.kind[0].attn_head_dim = hd;
	w.kind[0].attn_causal = causal;
	w.rate_tflops = g->bf16_tflops > 0 ? g->bf16_tflops : g->fp16_tflops;
	struct vf__steptime_out o;
	vf__steptime(&w, g, &o);
	return o.parts.attention > 0 ? 1e15 / (w.rate_tflops * 1e12 * o.parts.attention) : -1;
}

/* forward+backward TFLOP/s from a benchmark's forward and backward
 * TFLOP/s, the backward 2.5x the forward's FLOPs */
static double fwd_bwd(double fwd, double bwd)
{
	return 3.5 / (1 / fwd + 2.5 / bwd);
}

/* Flash attention's share depends on the sequence length (issue 31: one
 * share per generation for every length, where cuDNN on a B200 ranges
 * 0.18-0.53 from 2k to 32k): at each cited length the kernel benchmark's
 * forward+backward share, between two lengths between their shares
 * (log2 of the length), beyond the first and last the nearest point's;
 * by head dimension where the source has two (A100: 64 and 128, linear
 * between); the causal curve for causal layers; no length given: the
 * generation's one share, as before. */
static void test_attention_by_length(void)
{
	const struct vf_gpu_spec *h = gpu("h200"), *b = gpu("b200"), *a = gpu("a100-80gb"),
				 *r = gpu("rtx-3090"), *d = gpu("rtx-4090"), *v = gpu("v100-16gb");
	REQUIRE(h && b && a && r && d && v);
	CHECK(vf_estimate_constants_fallback() == NULL); /* every shipped curve read */
	/* H200, cuDNN (h200_919_only_cudnn llama3.1), causal head dim 128 */
	double h2 = fwd_bwd(484, 370) / 989.5, h4 = fwd_bwd(591, 474) / 989.5,
	       h8 = fwd_bwd(644, 541) / 989.5, h32 = fwd_bwd(688, 581) / 989.5;
	double s2 = attention_share_at(h, 2048, 128, true), s4 = attention_share_at(h, 4096, 128, true);
	double s3 = attention_share_at(h, 3072, 128, true), s8 = attention_share_at(h, 8192, 128, true);
	fprintf(stderr, "  h200 causal hd128: 2k %.4f (cited %.4f), 3k %.4f, 4k %.4f (%.4f), 8k %.4f (%.4f)\n",
		s2, h2, s3, s4, h4, s8, h8);
	CHECK(fabs(s2 - h2) < 1e-3 && fabs(s4 - h4) < 1e-3 && fabs(s8 - h8) < 1e-3);
	CHECK(s2 < s3 && s3 < s4 && s4 < s8);
	CHECK(fabs(s3 - (s2 + (log2(3072) - 11) * (s4 - s2))) < 1e-6); /* linear in log2(seq) */
	CHECK(fabs(attention_share_at(h, 512, 128, true) - s2) < 1e-9);     /* below 2k: the 2k point's */
	CHECK(fabs(attention_share_at(h, 131072, 128, true) - h32) < 1e-3); /* beyond 32k: 32k's */
	CHECK(fabs(attention_share_at(h, 2048, 128, false) - fwd_bwd(633, 504) / 989.5) < 1e-3);
	CHECK(fabs(attention_share_at(h, 2048, 64, true) - s2) < 1e-9); /* one head dim: its curve */
	CHECK(fabs(attention_share_at(h, 0, 0, false) - 0.6) < 1e-9);    /* no length: the one share */
	/* B200, cuDNN: 0.18 at 2k to 0.53 at 32k; the one share is the 8k point */
	double b2 = attention_share_at(b, 2048, 128, true), b32 = attention_share_at(b, 32768, 128, true);
	CHECK(fabs(b2 - fwd_bwd(478.921, 371.486) / 2250) < 1e-3);
	CHECK(fabs(b32 - fwd_bwd(1419.0, 1108.688) / 2250) < 1e-3);
	CHECK(fabs(attention_share_at(b, 8192, 128, true) - attention_share_at(b, 0, 0, true)) < 1e-3);
	/* A100, FlashAttention-2 (flash-attention README): causal 140 and 155
	 * TFLOP/s at 2k for head dims 64 and 128, the middle between them at
	 * 96; 99 at 512, head dim 128; no mask 187 at 2k, head dim 128 */
	double a64 = attention_share_at(a, 2048, 64, true), a128 = attention_share_at(a, 2048, 128, true);
	CHECK(fabs(a64 - 140.0 / 312) < 1e-3 && fabs(a128 - 155.0 / 312) < 1e-3);
	CHECK(fabs(attention_share_at(a, 2048, 96, true) - (a64 + a128) / 2) < 1e-9);
	CHECK(fabs(attention_share_at(a, 512, 128, true) - 99.0 / 312) < 1e-3);
	CHECK(fabs(attention_share_at(a, 2048, 128, false) - 187.0 / 312) < 1e-3);
	CHECK(fabs(attention_share_at(a, 0, 0, true) - 0.62) < 1e-9);
	/* GeForce RTX 30: a GA102 card's own curve (RTX A5000, no mask, head
	 * dim 64), not the A100's; the RTX 4090 from its forward times the
	 * A5000's forward+backward / forward */
	CHECK(fabs(attention_share_at(r, 1024, 64, false) - 66.90 / 111.1) < 1e-3);
	CHECK(fabs(attention_share_at(r, 1024, 64, true) - 66.90 / 111.1) < 1e-3); /* no causal curve */
	CHECK(fabs(attention_share_at(d, 512, 64, true) - 150.9 / 165.2 * 59.15 / 84.08) < 1e-3);
	/* no length data on Volta: the one share at every length */
	CHECK(fabs(attention_share_at(v, 512, 64, true) - attention_share_at(v, 16384, 128, true)) < 1e-12);
}

/* The estimate gives its layers' length, head dimension and mask to the
 * attention share: Llama 2 7B (32 layers, 32 heads of 128, causal) LoRA
 * without checkpointing on an H200 and an A100, attention's forward +
 * backward FLOPs (3.5 x 32 x 4 b s^2 x 4096 / 2) over its time are the
 * cited curves' shares at 1k, 4k and 8k. */
static void test_attention_by_length_estimate(void)
{
	const struct vf_arch *a = arch("llama2-7b");
	const struct vf_gpu_spec *g[2] = {gpu("h200"), gpu("a100-80gb")};
	REQUIRE(a && g[0] && g[1]);
	const double seq[3] = {1024, 4096, 8192};
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++) {
			struct vf_setup s = train_setup(VF_MODE_LORA, VF_PREC_BF16, 1, (int64_t)seq[j]);
			s.grad_ckpt = false;
			struct vf_estimate e;
			vf_estimate_run(a, &s, g[i], &e);
			double flops = 3.5 * 32 * 4 * seq[j] * seq[j] * 4096 * 0.5;
			double share = flops / (g[i]->bf16_tflops * 1e12 * e.parts.attention);
			double want = attention_share_at(g[i], seq[j], 128, true);
			fprintf(stderr, "  %s llama2-7b seq %.0f: attention share %.4f (curve %.4f)\n", g[i]->id,
				seq[j], share, want);
			CHECK(fabs(share - want) < 1e-6 * want);
		}
}

/* A by_length curve that is not one is named (entry, index, what) and
 * not used: the rest and the one share stand; the estimate is marked
 * (vf_estimate_constants_fallback) when the shipped file has one. */
static void test_attention_by_length_bad_curves(void)
{
	static const struct { const char *json, *why; } bad[] = {
		{"{\"head_dim\": 0, \"causal\": true, \"seq\": [1024], \"share\": [0.5]}", "head_dim"},
		{"{\"head_dim\": 64, \"causal\": 1, \"seq\": [1024], \"share\": [0.5]}", "causal"},
		{"{\"head_dim\": 64, \"causal\": true, \"seq\": [1024, 2048], \"share\": [0.5]}", "same length"},
		{"{\"head_dim\": 64, \"causal\": true, \"seq\": [0], \"share\": [0.5]}", "a seq"},
		{"{\"head_dim\": 64, \"causal\": true, \"seq\": [1024], \"share\": [3]}", "a share"},
		{"{\"head_dim\": 64, \"causal\": true, \"seq\": [2048, 1024], \"share\": [0.5, 0.6]}",
		 "not increasing"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char text[512], why[320];
		snprintf(text, sizeof text,
			 "{\"by_length\": [{\"head_dim\": 128, \"causal\": true, \"seq\": [1024, 4096], "
			 "\"share\": [0.2, 0.4]}, %s]}", bad[i].json);
		cJSON *e = cJSON_Parse(text);
		REQUIRE(e != NULL);
		double s = vf__steptime_attn_share(e, 0.6, 2048, 64, true, why, sizeof why);
		fprintf(stderr, "  %s\n", why);
		CHECK(strstr(why, "by_length[1]") && strstr(why, bad[i].why) && strstr(why, "not used"));
		CHECK(fabs(s - 0.3) < 1e-9); /* the good curve, halfway in log2 between 1k and 4k */
		CHECK(fabs(vf__steptime_attn_share(e, 0.6, 0, 0, true, NULL, 0) - 0.6) < 1e-12);
		cJSON_Delete(e);
	}
	char why[320];
	cJSON *e = cJSON_Parse("{\"by_length\": 3}");
	CHECK(fabs(vf__steptime_attn_share(e, 0.55, 2048, 64, true, why, sizeof why) - 0.55) < 1e-12 &&
	      !why[0]);
	cJSON_Delete(e);
}

/* Shares far apart (2 and 1e-17, both accepted) interpolated at a
 * curve's point: a + t (b - a) gave 2 + (1e-17 - 2) = 0 in doubles (a
 * fuzz-attn-curves finding); the share is the point's own, and never
 * outside its neighbours' range, in length and in head dimension. */
static void test_attention_by_length_extremes(void)
{
	cJSON *e = cJSON_Parse("{\"by_length\": [{\"head_dim\": 64, \"causal\": true, \"seq\": [512, 1024], "
			       "\"share\": [2, 1e-17]}, {\"head_dim\": 128, \"causal\": true, \"seq\": [512], "
			       "\"share\": [1e-17]}]}");
	REQUIRE(e != NULL);
	char why[320];
	double at = vf__steptime_attn_share(e, 0.6, 1024, 64, true, why, sizeof why);
	CHECK(!why[0]);
	CHECK(at > 0 && at <= 2e-17);
	double mid = vf__steptime_attn_share(e, 0.6, 724, 64, true, NULL, 0);
	CHECK(mid > 0 && mid <= 2);
	/* head dim 128's curve at 1e-17, 64's at 2 (seq 512): t = 1 at 128 */
	double hd = vf__steptime_attn_share(e, 0.6, 512, 128, true, NULL, 0);
	CHECK(hd > 0 && hd <= 2e-17);
	for (double h = 64; h <= 128; h += 0.5) {
		double s = vf__steptime_attn_share(e, 0.6, 512, h, true, NULL, 0);
		CHECK(s > 0 && s <= 2);
	}
	cJSON_Delete(e);
}

/* A T4's memory-bound kernels run at torch's copy_ share on a T4 (240 of
 * 320 GB/s, read + write over a 0.38 GB tensor); was: 0.84 assumed.
 * Recovered from one step's times as in test_kernel_level_ampere_ada. */
static void test_kernel_level_turing_bandwidth(void)
{
	const struct vf_gpu_spec *t4 = gpu("t4");
	CHECK(t4);
	if (!t4)
		return;
	CHECK(fabs(t4->bandwidth_gbs * 1e9 - 320e9) < 1e6);
	double k = memory_bound_share(t4, "turing");
	fprintf(stderr, "  t4 memory-bound kernel share %.4f (cited 240/320 = 0.75)\n", k);
	CHECK(fabs(k - 240.0 / 320) < 1e-3);
}

/* An Ampere part's memory-bound share is want, in the step (recovered
 * from one step's times at its host speed: GeForce parts' own) and in
 * serving decode's stream rate. */
static void check_ampere_share(const char *id, double want)
{
	const struct vf_gpu_spec *g = gpu(id);
	CHECK(g != NULL);
	if (!g)
		return;
	CHECK(strcmp(g->generation, "ampere") == 0);
	double k = memory_bound_share(g, vf__steptime_geforce(g) ? "ampere-geforce" : "ampere");
	fprintf(stderr, "  %s memory-bound kernel share %.4f (want %.4f)\n", g->id, k, want);
	CHECK(fabs(k - want) < 2e-3);
	double stream, flops, launch;
	vf__steptime_decode_rates(g, &stream, &flops, &launch);
	CHECK(fabs(stream / (g->bandwidth_gbs * 1e9) - want) < 2e-3);
}

/* The catalog ids a bandwidth_efficiency entry of steptime.json lists. */
static const cJSON *efficiency_gpus(const char *entry)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(vf__steptime_data("constants"), "bandwidth_efficiency"), entry);
	return cJSON_GetObjectItemCaseSensitive(e, "gpus");
}

/* Ampere's memory-bound share by memory type: the GDDR6 parts (A10, A10G,
 * A40, RTX A4000-A6000) at the A10's torch copy_ share, 469 of 600 GB/s
 * (chsasank/device-benchmarks), in the step and in serving decode; the
 * HBM2 A100 40GB and the GDDR6X RTX 3090 keep ampere's 0.88 (the A100
 * 80GB's own share: test_kernel_level_ampere_hbm2e_80gb). Recovered from
 * one step's times as in test_kernel_level_turing_bandwidth. Was: 0.88
 * on every Ampere part. */
static void test_kernel_level_ampere_gddr6(void)
{
	const char *const gddr6[] = {"a10", "a10g", "a40", "rtx-a4000", "rtx-a5000", "rtx-a6000"};
	const struct { const char *id; double want; } cases[] = {
		{"a10", 469.0 / 600}, {"a10g", 469.0 / 600}, {"rtx-a6000", 469.0 / 600},
		{"a100-80gb", 1490.0 / 2039}, {"a100-40gb", 0.88}, {"rtx-3090", 0.88}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_ampere_share(cases[i].id, cases[i].want);
	/* the list names Ampere catalog parts only, each a GDDR6 part */
	const cJSON *ids = efficiency_gpus("ampere-gddr6"), *id;
	CHECK(cJSON_GetArraySize(ids) == (int)(sizeof gddr6 / sizeof gddr6[0]));
	int n = 0;
	cJSON_ArrayForEach(id, ids)
	{
		const struct vf_gpu_spec *g = cJSON_IsString(id) ? gpu(id->valuestring) : NULL;
		CHECK(g && strcmp(g->generation, "ampere") == 0);
		for (size_t i = 0; i < sizeof gddr6 / sizeof gddr6[0]; i++)
			n += cJSON_IsString(id) && strcmp(id->valuestring, gddr6[i]) == 0;
	}
	CHECK(n == (int)(sizeof gddr6 / sizeof gddr6[0]));
}

/* The A100 80GB (SXM4 and PCIe) runs memory-bound kernels at its own
 * measured copy share, torch copy_ 1490 of 2039 GB/s on an A100 80GB
 * (chsasank/device-benchmarks; cub's babelstream mul on an A100-SXM4-80GB
 * agrees, NVIDIA/cccl#7019), in the step and in serving decode; the A100
 * 40GB (1555 GB/s HBM2, copies 0.846-0.871) and the A30 keep ampere's
 * 0.88. Recovered from one step's times as in
 * test_kernel_level_ampere_gddr6. Was: 0.88 on the 80GB parts. */
static void test_kernel_level_ampere_hbm2e_80gb(void)
{
	const struct { const char *id; double want; } cases[] = {
		{"a100-80gb", 1490.0 / 2039}, {"a100-pcie-80gb", 1490.0 / 2039},
		{"a100-40gb", 0.88}, {"a100-pcie-40gb", 0.88}, {"a30", 0.88}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_ampere_share(cases[i].id, cases[i].want);
	/* the entry names exactly the two 80GB parts */
	const cJSON *ids = efficiency_gpus("ampere-hbm2e-80gb");
	CHECK(cJSON_GetArraySize(ids) == 2);
	CHECK(cJSON_IsString(cJSON_GetArrayItem(ids, 0)) &&
	      strcmp(cJSON_GetArrayItem(ids, 0)->valuestring, "a100-80gb") == 0);
	CHECK(cJSON_IsString(cJSON_GetArrayItem(ids, 1)) &&
	      strcmp(cJSON_GetArrayItem(ids, 1)->valuestring, "a100-pcie-80gb") == 0);
}

/* Volta's CUDA-core GEMMs (fp32 without TF32, bf16 emulated) take the
 * shares torch measured on a V100-SXM2 (zzc0721/torch-performance-test-
 * data#140: fp32 14.4 and bf16 10.65 TFLOP/s of 15.7 at 8192^2), not the
 * fp16 tensor cores' 0.779: recovered from one GEMM's time as in
 * test_kernel_level_volta_blackwell. Was: 0.779 for all three. */
static void test_volta_cuda_core_gemms(void)
{
	const struct vf_gpu_spec *v = gpu("v100-16gb");
	REQUIRE(v != NULL);
	const cJSON *ge = cJSON_GetObjectItemCaseSensitive(vf__steptime_data("constants"), "gemm_efficiency");
	const cJSON *cc_tile = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ge, "volta"),
								"cuda_core_tile");
	REQUIRE(cJSON_IsNumber(cc_tile));
	double tile = cc_tile->valuedouble, kgpu = constant("kernel_gpu_s", NULL); /* V100 SGEMM tile */
	double gfix = constant("gemm_fixed_s_per_flop", NULL);
	const double n = 16384;
	const double want[2] = {14.4 / 15.7, 10.65 / 15.7};
	for (int cc = 1; cc <= 2; cc++) {
		struct vf__step_work w;
		one_gemm_work(&w, n);
		w.rate_tflops = v->fp32_tflops;
		w.cuda_core = cc;
		struct vf__steptime_out o;
		vf__steptime(&w, v, &o);
		double rate = v->fp32_tflops * 1e12;
		double eff = 2 * n * (n * n + tile) / (rate * (o.parts.gemm - 2 * kgpu));
		double k = 1 / (1 / eff - rate * gfix * constant("host_speed", "volta"));
		fprintf(stderr, "  v100 CUDA-core GEMM share (%s): %.4f (%.4f)\n", cc == 1 ? "fp32" : "bf16",
			k, want[cc - 1]);
		CHECK(fabs(k - want[cc - 1]) < 2e-3);
	}
}

/* fp32 training on PyTorch's defaults (allow_tf32 False): SGEMM on the
 * CUDA cores at the catalog fp32 rate on every generation. By hand, an
 * H200 (66.9 TFLOP/s fp32): share 1 / (1/0.774 + 66.9e12 x 2.7545e-16)
 * = 1 / (1.29199 + 0.01843) = 0.76312, tile 192k; one 16384^3 GEMM
 * = 2 x 16384 x (16384^2 + 192000) / (66.9e12 x 0.76312) + 3 us =
 * 172.418 ms, and the empty lm_head's 3 us. Attention (fp32 SDPA: memory-efficient, 3xTF32): 1e15
 * FLOPs at 989.5e12 x 0.5 / 3 x 0.6 = 98.95 TFLOP/s = 10.106 s forward.
 * The old model ran both at 2 x 66.9 x 0.648 / 0.6. */
static void test_fp32_sgemm_default(void)
{
	const struct vf_gpu_spec *h = gpu("h200");
	REQUIRE(h != NULL);
	const double n = 16384;
	struct vf__step_work w;
	one_gemm_work(&w, n);
	w.kind[0].attn_flops = 1e15;
	w.rate_tflops = h->fp32_tflops;
	w.cuda_core = 1;
	struct vf__steptime_out o;
	vf__steptime(&w, h, &o);
	double share = 1 / (1 / 0.774 + 66.9e12 * 2.7545e-16);
	double want = 2 * n * (n * n + 192000) / (66.9e12 * share) + 2 * 3e-6;
	fprintf(stderr, "  h200 fp32: share %.5f, GEMM %.4f ms (%.4f), attention %.4f s (%.4f)\n", share,
		o.parts.gemm * 1e3, want * 1e3, o.parts.attention, 1e15 / (989.5e12 * 0.5 / 3 * 0.6));
	CHECK(fabs(share - 0.76312) < 1e-4);
	CHECK(fabs(o.parts.gemm - want) < 1e-6 * want);
	CHECK(fabs(o.parts.attention - 1e15 / (989.5e12 * 0.5 / 3 * 0.6)) < 1e-3);
	/* through the estimate: the fp32 rate is the catalog's CUDA-core rate
	 * (A100 19.5 against 312 bf16: GEMMs about 13x amp's; the old 2x
	 * fp32 "TF32" rate gave 8x) */
	const struct vf_arch *a = arch("gpt2");
	const struct vf_gpu_spec *a100 = gpu("a100-80gb");
	REQUIRE(a && a100);
	struct vf_setup s = train_setup(VF_MODE_FULL, VF_PREC_AMP, 8, 1024);
	struct vf_estimate amp, fp32, fp32c, ampc;
	vf_estimate_run(a, &s, a100, &amp);
	s.precision = VF_PREC_FP32;
	vf_estimate_run(a, &s, a100, &fp32);
	double r = fp32.parts.gemm / amp.parts.gemm;
	fprintf(stderr, "  a100 gpt2 b8: fp32 GEMMs / amp GEMMs %.2f\n", r);
	CHECK(r > 11 && r < 15);
	CHECK(parts_add_up(&fp32));
	/* a search context: V100's fp32 and emulated bf16 share a rate (15.7),
	 * not a share; each is the same as without the context */
	const struct vf_gpu_spec *v = gpu("v100-16gb");
	struct vf_estimate_ctx *cx = vf_estimate_ctx_new();
	REQUIRE(v && cx);
	struct vf_estimate vamp, vfp32;
	s.precision = VF_PREC_AMP;
	vf_estimate_run(a, &s, v, &vamp);
	vf_estimate_run_ctx(cx, a, &s, v, &ampc);
	s.precision = VF_PREC_FP32;
	vf_estimate_run(a, &s, v, &vfp32);
	vf_estimate_run_ctx(cx, a, &s, v, &fp32c);
	CHECK(fabs(ampc.parts.gemm - vamp.parts.gemm) < 1e-9 && fabs(fp32c.parts.gemm - vfp32.parts.gemm) < 1e-9);
	vf_estimate_ctx_free(cx);
}

/* TF32 on (--tf32), by hand. One 16384^3 fp32 GEMM on an H200 runs on
 * the tensor cores at the TF32 rate, 989.5 x 0.5 = 494.75 TFLOP/s, at
 * hopper's tensor-core share 0.648 and tensor tile 619k:
 * 2 x 16384 x (16384^2 + 619000) / (494.75e12 x 0.648) + 2 launches =
 * 27.506 ms (IEEE SGEMM: 172.42 ms). fp32 attention stays 3xTF32
 * (989.5e12 x 0.5 / 3 x 0.6: 10.106 s for 1e15 FLOPs): the
 * memory-efficient kernel's MMA operator is fixed at compile time. A V100
 * has no TF32: nothing moves, and the estimate says so (and not that bf16
 * is emulated: the old code said that of every fp32 run on a V100). */
static void test_tf32_on(void)
{
	const struct vf_gpu_spec *h = gpu("h200");
	REQUIRE(h != NULL);
	const double n = 16384;
	struct vf__step_work w;
	one_gemm_work(&w, n);
	w.kind[0].attn_flops = 1e15;
	w.rate_tflops = 989.5 * 0.5;
	w.tf32 = true;
	struct vf__steptime_out o;
	vf__steptime(&w, h, &o);
	double want = 2 * n * (n * n + 619000) / (494.75e12 * 0.648) + 2 * 3e-6;
	fprintf(stderr, "  h200 fp32 TF32 on: GEMM %.4f ms (by hand %.4f), attention %.4f s (%.4f)\n",
		o.parts.gemm * 1e3, want * 1e3, o.parts.attention, 1e15 / (989.5e12 * 0.5 / 3 * 0.6));
	CHECK(fabs(want - 27.5058e-3) < 1e-7);
	CHECK(fabs(o.parts.gemm - want) < 1e-6 * want);
	CHECK(fabs(o.parts.attention - 1e15 / (989.5e12 * 0.5 / 3 * 0.6)) < 1e-3);
	/* through the estimate: gpt2 b8 s1024 fp32 */
	const struct vf_arch *a = arch("gpt2");
	const struct vf_gpu_spec *v = gpu("v100-16gb");
	REQUIRE(a && v);
	struct vf_setup s = train_setup(VF_MODE_FULL, VF_PREC_FP32, 8, 1024);
	struct vf_estimate off, on, voff, von;
	vf_estimate_run(a, &s, h, &off);
	vf_estimate_run(a, &s, v, &voff);
	s.tf32 = true;
	s.tf32_from = VF_TF32_OPTION;
	vf_estimate_run(a, &s, h, &on);
	vf_estimate_run(a, &s, v, &von);
	double r = off.parts.gemm / on.parts.gemm;
	fprintf(stderr, "  h200 gpt2 b8 fp32: GEMMs IEEE / TF32 %.2f (rates x shares: %.2f)\n", r,
		494.75 * 0.648 / (66.9 * 0.76312));
	CHECK(r > 5 && r < 6.3);
	CHECK(fabs(on.parts.attention - off.parts.attention) < 1e-12);
	CHECK(fabs(on.parts.memory_bound - off.parts.memory_bound) < 1e-12);
	CHECK(parts_add_up(&on));
	CHECK(!(off.assumed & VF_ASSUME_NO_TF32) && !(on.assumed & VF_ASSUME_NO_TF32));
	CHECK(fabs(von.parts.gemm - voff.parts.gemm) < 1e-12 && fabs(von.step_seconds - voff.step_seconds) < 1e-12);
	CHECK((von.assumed & VF_ASSUME_NO_TF32) && !(voff.assumed & VF_ASSUME_NO_TF32));
	CHECK(!(von.assumed & VF_ASSUME_BF16_EMULATED) && !(voff.assumed & VF_ASSUME_BF16_EMULATED));
	/* a search context gives the same as without one, TF32 on after off */
	struct vf_estimate_ctx *cx = vf_estimate_ctx_new();
	REQUIRE(cx != NULL);
	struct vf_estimate c1, c2;
	s.tf32 = false;
	vf_estimate_run_ctx(cx, a, &s, h, &c1);
	s.tf32 = true;
	vf_estimate_run_ctx(cx, a, &s, h, &c2);
	CHECK(fabs(c1.parts.gemm - off.parts.gemm) < 1e-12 && fabs(c2.parts.gemm - on.parts.gemm) < 1e-12);
	CHECK(fabs(c2.parts.attention - on.parts.attention) < 1e-12);
	vf_estimate_ctx_free(cx);
}

/* transformers' Python GELU (gelu_new) against one native kernel, by
 * hand: the native GELU reads and writes each of the f-wide elements
 * once in bf16 (4 B forward, 8 backward); the Python chain moves 76 B
 * forward under autocast and, by autograd's formulas, 118 B backward
 * (not twice the forward's 152). gpt2 b8 s1024 (N 8192, 12 layers,
 * f 3072) on an H200 at 4.8e12 x 0.462 B/s (hopper's fitted share):
 * 8192 x 12 x 3072 x (76 + 118 - 4 - 8) B = 54.96 GB = 24.78 ms more
 * memory-bound time (the old rule: 216 B). fp32: 72 + 112 - 8 - 16 = 160 B. */
static void test_python_gelu_backward(void)
{
	const struct vf_arch *a = arch("gpt2");
	const struct vf_gpu_spec *h = gpu("h200");
	REQUIRE(a && h);
	double bw = h->bandwidth_gbs * 1e9 * constant("bandwidth_efficiency", "hopper"), elems = 8192.0 * 12 * 3072;
	const enum vf_precision prec[2] = {VF_PREC_AMP, VF_PREC_FP32};
	const double bytes[2] = {76 + 118 - 4 - 8, 72 + 112 - 8 - 16};
	for (int i = 0; i < 2; i++) {
		struct vf_setup s = train_setup(VF_MODE_FULL, prec[i], 8, 1024);
		struct vf_estimate py, native;
		vf_estimate_run(a, &s, h, &py);
		s.gelu_native = true;
		vf_estimate_run(a, &s, h, &native);
		double d = py.parts.memory_bound - native.parts.memory_bound, want = elems * bytes[i] / bw;
		fprintf(stderr, "  gpt2 %s: Python GELU's memory-bound time beyond a native one %.3f ms "
				"(by hand %.3f)\n", i ? "fp32" : "amp", d * 1e3, want * 1e3);
		CHECK(fabs(d - want) < 1e-3 * want);
		CHECK(parts_add_up(&py) && parts_add_up(&native));
	}
}

static void check_link(const char *id, int n, const char *want)
{
	struct vf__link l;
	vf__nccl_link(gpu(id), n, &l);
	if (strcmp(l.name, want) != 0)
		fprintf(stderr, "  %s x %d: link %s, expected %s\n", id, n, l.name, want);
	CHECK(strcmp(l.name, want) == 0 && l.known && l.busbw > 0);
}

/* bf16 on a GPU without bf16 tensor cores runs emulated on the CUDA
 * cores, and says so; fp16 uses the fp16 tensor cores; fp32 on Volta has
 * no TF32. */
static void test_volta_precisions(void)
{
	const struct vf_arch *a = arch("gpt2-medium");
	const struct vf_gpu_spec *v = gpu("v100-32gb");
	if (!a || !v)
		return;
	struct vf_setup s = train_setup(VF_MODE_FULL, VF_PREC_AMP, 8, 1024);
	struct vf_estimate amp, fp16, fp32;
	vf_estimate_run(a, &s, v, &amp);
	s.precision = VF_PREC_FP16;
	vf_estimate_run(a, &s, v, &fp16);
	s.precision = VF_PREC_FP32;
	vf_estimate_run(a, &s, v, &fp32);
	CHECK(amp.assumed & VF_ASSUME_BF16_EMULATED);
	CHECK(!(fp16.assumed & VF_ASSUME_BF16_EMULATED));
	CHECK(amp.step_seconds > 2 * fp16.step_seconds);
	/* both on the CUDA cores; emulated bf16 the slower (10.65 against 14.4 TFLOP/s) */
	CHECK(amp.parts.gemm > 1.2 * fp32.parts.gemm);
	/* fp16: the GradScaler's unscale and inf check are in the optimizer part */
	CHECK(fp16.parts.optimizer > 0);
}

/* The link class of each catalog GPU, and the collectives' time. */
static void test_links_and_collectives(void)
{
	check_link("h100-80gb", 8, "nvlink4");
	check_link("h200", 8, "nvlink4");
	check_link("a100-80gb", 8, "nvlink3");
	check_link("v100-32gb", 8, "nvlink2");
	check_link("b200", 8, "nvlink5");
	check_link("a100-pcie-80gb", 4, "pcie4-p2p");
	check_link("rtx-4090", 4, "pcie4-shm");
	check_link("rtx-3090", 2, "pcie4-shm");
	check_link("rtx-5090", 2, "pcie5-shm");
	check_link("h100-nvl", 2, "nvlink-bridge");
	check_link("h100-nvl", 4, "pcie5-p2p");
	check_link("h100-80gb", 16, "infiniband");
	check_link("l40s", 16, "ethernet");
	struct vf__link nv, shm;
	vf__nccl_link(gpu("h100-80gb"), 8, &nv);
	vf__nccl_link(gpu("rtx-4090"), 4, &shm);
	/* large messages: bandwidth; NVLink 4 tens of times a host-staged PCIe ring */
	double big_nv = vf__nccl_seconds(&nv, VF__ALL_REDUCE, 8, 1e9, 1);
	double big_shm = vf__nccl_seconds(&shm, VF__ALL_REDUCE, 4, 1e9, 1);
	CHECK(big_shm > 30 * big_nv);
	/* an all-reduce moves twice an all-gather's bytes */
	double ag = vf__nccl_seconds(&nv, VF__ALL_GATHER, 8, 1e9, 1);
	CHECK(big_nv > 1.8 * ag && big_nv < 2.2 * ag);
	/* small messages: latency, not zero, growing with the ring */
	double small4 = vf__nccl_seconds(&nv, VF__ALL_REDUCE, 4, 8, 1);
	double small8 = vf__nccl_seconds(&nv, VF__ALL_REDUCE, 8, 8, 1);
	CHECK(small4 > 5e-6 && small8 > small4 && small8 < 1e-4);
	CHECK(vf__nccl_seconds(&nv, VF__ALL_REDUCE, 1, 1e9, 1) == 0);
	/* across 64 GPUs a small all-reduce takes the tree: 2 log2(64) = 12
	 * latency steps, not the ring's 126 */
	struct vf__link ib;
	vf__nccl_link(gpu("h100-80gb"), 64, &ib);
	double tiny = vf__nccl_seconds(&ib, VF__ALL_REDUCE, 64, 8, 1);
	CHECK(tiny <= ib.base_s + 12 * ib.step_s + 1e-9);
	CHECK(tiny < ib.base_s + 126 * ib.step_s);
}

/* Four RTX 4090s with FSDP over PCIe without peer-to-peer scale about
 * 2x one card, not 4x; eight H100s with DDP over NVLink nearly 8x. */
static void test_scaling_per_link(void)
{
	const struct vf_arch *a = arch("tinyllama-1.1b");
	REQUIRE(a != NULL);
	struct vf_setup s = train_setup(VF_MODE_FULL, VF_PREC_AMP, 4, 1024);
	s.grad_ckpt = true;
	struct vf_estimate one, four, two;
	vf_estimate_run(a, &s, gpu("rtx-4090"), &one);
	s.shard = VF_SHARD_FSDP;
	s.fsdp_mixed_precision = true; /* the default stack's (hf: accelerate gathers and reduces in bf16) */
	s.gpus = 4;
	vf_estimate_run(a, &s, gpu("rtx-4090"), &four);
	s.gpus = 2;
	vf_estimate_run(a, &s, gpu("rtx-4090"), &two);
	double x4 = four.tokens_per_second / one.tokens_per_second;
	double x2 = two.tokens_per_second / one.tokens_per_second;
	fprintf(stderr, "  4x RTX 4090 FSDP: %.2fx one card (2 cards %.2fx), exposed %.0f of %.0f ms\n", x4,
		x2, 1e3 * four.parts.comm_exposed, 1e3 * four.parts.comm_total);
	CHECK(x4 > 1.5 && x4 < 2.6);
	CHECK(x2 > 0.9 && x2 < 1.6);
	CHECK(strcmp(four.parts.link, "pcie4-shm") == 0);
	CHECK(four.parts.comm_exposed > 0 && four.parts.comm_exposed <= four.parts.comm_total);
	CHECK(parts_add_up(&four));
	/* the same step through runcost: the exposed communication is in
	 * the estimate's step once, not added again */
	struct vf_comm c;
	double t = vf_runcost_step_seconds(&four, &s, gpu("rtx-4090"), &c);
	s.gpus = 4;
	t = vf_runcost_step_seconds(&four, &s, gpu("rtx-4090"), &c);
	CHECK(t == four.step_seconds);
	CHECK(c.exposed_seconds == four.parts.comm_exposed && strcmp(c.link, "pcie4-shm") == 0);
	CHECK(c.interference_seconds == four.parts.comm_interference);

	const struct vf_arch *l7 = arch("llama2-7b");
	if (!l7)
		return;
	vf_setup_defaults(&s);
	s.mode = VF_MODE_LORA;
	s.precision = VF_PREC_BF16;
	s.batch = 4;
	s.grad_ckpt = true;
	struct vf_estimate h1, h8;
	vf_estimate_run(l7, &s, gpu("h100-80gb"), &h1);
	s.gpus = 8;
	s.shard = VF_SHARD_DDP;
	vf_estimate_run(l7, &s, gpu("h100-80gb"), &h8);
	double x8 = h8.tokens_per_second / h1.tokens_per_second;
	fprintf(stderr, "  8x H100 DDP LoRA: %.2fx\n", x8);
	CHECK(x8 > 7.5 && x8 <= 8.0);
	CHECK(strcmp(h8.parts.link, "nvlink4") == 0);
}

/* Each rank steps only the optimizer states it holds (ZeRO-1/2/3 their
 * partition, FSDP the local shards of its parameters) and clips only the
 * gradients it holds (ZeRO-2/3, FSDP): llama2-7b full fine-tuning with
 * foreach AdamW on H100s, whose optimizer step is device-bound (its
 * ~0.3 TB of state traffic against under a millisecond of launches), so
 * the step over 8 shards is exactly an eighth of one GPU's; ZeRO-1
 * shards the states alone, so with clipping its step keeps one GPU's
 * three passes over the gradients. */
static void test_sharded_optimizer_step(void)
{
	const struct vf_arch *a = arch("llama2-7b");
	if (!a)
		return;
	struct vf_setup s;
	vf_setup_defaults(&s);
	s.batch = 1;
	s.seq = 2048;
	s.grad_ckpt = true;
	struct vf_estimate one, fsdp, zero1, ddp, clip1, clipf, clipz;
	vf_estimate_run(a, &s, gpu("h100-80gb"), &one);
	s.gpus = 8;
	s.shard = VF_SHARD_FSDP;
	vf_estimate_run(a, &s, gpu("h100-80gb"), &fsdp);
	s.shard = VF_SHARD_ZERO1;
	vf_estimate_run(a, &s, gpu("h100-80gb"), &zero1);
	s.shard = VF_SHARD_DDP;
	vf_estimate_run(a, &s, gpu("h100-80gb"), &ddp);
	fprintf(stderr, "  llama2-7b AdamW step: 1 GPU %.1f ms, fsdp x8 %.2f, zero1 x8 %.2f, ddp x8 %.1f\n",
		1e3 * one.parts.optimizer, 1e3 * fsdp.parts.optimizer, 1e3 * zero1.parts.optimizer,
		1e3 * ddp.parts.optimizer);
	CHECK(fabs(one.parts.optimizer / fsdp.parts.optimizer - 8) < 1e-9);
	CHECK(fabs(one.parts.optimizer / zero1.parts.optimizer - 8) < 1e-9);
	CHECK(ddp.parts.optimizer == one.parts.optimizer);
	/* clipping: AdamW's 20 passes of 4-byte elements at the optimizer's
	 * share and clipping's 3 at the elementwise share on one GPU; FSDP
	 * both over 8; ZeRO-1 the step's over 8, clipping's whole */
	s.grad_clip = VF_CLIP_FOREACH;
	s.gpus = 1;
	s.shard = VF_SHARD_NONE;
	vf_estimate_run(a, &s, gpu("h100-80gb"), &clip1);
	s.gpus = 8;
	s.shard = VF_SHARD_FSDP;
	vf_estimate_run(a, &s, gpu("h100-80gb"), &clipf);
	s.shard = VF_SHARD_ZERO1;
	vf_estimate_run(a, &s, gpu("h100-80gb"), &clipz);
	CHECK(fabs(clip1.parts.optimizer / clipf.parts.optimizer - 8) < 1e-9);
	double step = 20 / constant("optimizer_bandwidth", "hopper");
	double clip = 3 / constant("bandwidth_efficiency", "hopper");
	CHECK(fabs(clipz.parts.optimizer / clip1.parts.optimizer - (step / 8 + clip) / (step + clip)) < 1e-9);
	CHECK(parts_add_up(&fsdp) && parts_add_up(&zero1));
}

/* Hidden communication is not free: NCCL runs each channel as one CTA
 * on its own SM, so the compute it overlaps runs on the other SMs. On 8
 * A100s (nvlink3: 24 channels; 108 SMs) a DDP all-reduce of four 25 MiB
 * buckets behind a 1 s step: each bucket's ring takes base 8 us + 14
 * steps x 1 us + 2 x 7/8 x 25 MiB / 230 GB/s (the tree, 8 + 6 x 1 us +
 * the same bytes at 0.9 of the bandwidth, is slower); the last bucket is
 * exposed, the other three hidden (0.8 x 2/3 s is far more than they
 * need), and those three cost 24/108 of their time in compute. */
static void test_nccl_sm_interference(void)
{
	const struct vf_gpu_spec *a100 = gpu("a100-80gb");
	REQUIRE(a100 != NULL);
	double bucket = 25.0 * 1024 * 1024;
	struct vf_comm_in in = {
		.shard = VF_SHARD_DDP,
		.gpus = 8,
		.grad_accum = 1,
		.grad_bytes = 4 * bucket,
		.param_bytes = 4 * bucket,
		.compute_seconds = 1.0,
		.gpu = a100,
		.layers = 1,
	};
	struct vf_comm c;
	vf_runcost_comm(&in, &c);
	double each = 8e-6 + 14 * 1e-6 + 2 * 7.0 / 8.0 * bucket / 230e9; /* s */
	CHECK(strcmp(c.link, "nvlink3") == 0);
	CHECK(fabs(c.exposed_seconds - each) <= 1e-12);
	CHECK(fabs(c.hidden_seconds - 3 * each) <= 1e-12);
	CHECK(fabs(c.interference_seconds - 3 * each * 24.0 / 108.0) <= 1e-12);
	fprintf(stderr, "  8x A100 DDP, 4 buckets: hidden %.1f us costs %.1f us of compute\n",
		1e6 * c.hidden_seconds, 1e6 * c.interference_seconds);

	/* in an estimate: its own part, in the step once, and nothing on one GPU */
	const struct vf_arch *a = arch("llama2-7b");
	REQUIRE(a != NULL);
	struct vf_setup s = train_setup(VF_MODE_LORA, VF_PREC_BF16, 2, 2048);
	s.grad_ckpt = true;
	struct vf_estimate one, eight;
	vf_estimate_run(a, &s, a100, &one);
	s.gpus = 8;
	s.shard = VF_SHARD_FSDP;
	vf_estimate_run(a, &s, a100, &eight);
	CHECK(one.parts.comm_interference == 0);
	double hidden = eight.parts.comm_total - eight.parts.comm_exposed;
	CHECK(hidden > 0);
	CHECK(fabs(eight.parts.comm_interference - hidden * 24.0 / 108.0) <= 1e-12 * eight.step_seconds);
	CHECK(parts_add_up(&eight));
	cJSON *t = vf_estimate_time_json(&eight);
	const cJSON *pi = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(t, "parts"),
							   "comm_interference");
	CHECK(cJSON_IsNumber(pi) && pi->valuedouble == eight.parts.comm_interference);
	cJSON_Delete(t);

	/* every catalog GPU has its SM count (else the term would be 0 unsaid) */
	size_t n = 0;
	struct vf_error err = {0};
	const struct vf_gpu_spec *all = vf_gpu_catalog(&n, &err);
	CHECK(all != NULL && n > 0);
	for (size_t i = 0; all && i < n; i++) {
		struct vf__link l;
		vf__nccl_link(&all[i], 2, &l);
		double share = vf__nccl_sm_share(&l, &all[i]); /* 0: no SM count */
		if (!(share > 0 && share < 0.5))
			fprintf(stderr, "  %s: no SM count (share %g)\n", all[i].id, share);
		CHECK(share > 0 && share < 0.5);
	}
}

/* The passes of one GPU's step: the window collectives hide behind. */
static double passes_s(const struct vf_estimate *e)
{
	const struct vf_step_parts *p = &e->parts;
	return p->gemm + p->attention + p->memory_bound + p->launch + p->moe + p->dequant + p->offload;
}

/* Communication hides behind the forward and backward passes only, never
 * behind the optimizer step: the last reduce-scatter (all-reduce) is
 * waited for before the step (FSDP2's root post-backward callback) and
 * the next step's first gather waits for the parameters the step writes.
 * By hand: tinyllama on two RTX 4090s (pcie4-shm), FSDP under amp with
 * checkpointing and 2 micro-batches; per micro-step each of the 22 layers
 * gathers its bf16 parameters for the forward and the backward and
 * reduce-scatters its bf16 gradients, each a ring of n - 1 = 1 step
 * moving (n-1)/n = 1/2 of the bytes; the forward's gathers hide behind
 * 0.8 x 0.25 (FSDP's overlap x the SHM link's scale) of the forward's
 * quarter of the passes (except the first), the backward's gathers and
 * reduce-scatters behind the same share of its three quarters. The
 * optimizer step is outside the window: a slower one (with the
 * gradients clipped tensor by tensor first) leaves the exposed
 * communication as it was, under FSDP and under DDP. */
static void test_overlap_window_passes_only(void)
{
	const struct vf_arch *a = arch("tinyllama-1.1b");
	const struct vf_gpu_spec *g = gpu("rtx-4090");
	REQUIRE(a != NULL && g != NULL);
	struct vf_setup s = train_setup(VF_MODE_FULL, VF_PREC_AMP, 4, 1024);
	s.grad_ckpt = true;
	s.gpus = 2;
	s.shard = VF_SHARD_FSDP;
	s.fsdp_mixed_precision = true; /* the default stack's (hf: accelerate gathers and reduces in bf16) */
	s.grad_accum = 2;
	struct vf_estimate e, slow;
	vf_estimate_run(a, &s, g, &e);
	struct vf__link l;
	vf__nccl_link(g, 2, &l);
	CHECK(strcmp(l.name, "pcie4-shm") == 0 && strcmp(e.parts.link, "pcie4-shm") == 0);
	double layers = (double)a->layers;                  /* 22 */
	double P = 2.0 * (double)e.params;                  /* bf16 parameters, bytes */
	double G = 2.0 * (double)e.trainable_params;        /* bf16 gradients, bytes */
	double ag = l.base_s + l.step_s + 0.5 * P / layers / l.busbw; /* one layer's gather, s */
	double rs = l.base_s + l.step_s + 0.5 * G / layers / l.busbw; /* one layer's reduce-scatter, s */
	double micro = passes_s(&e) / 2;                    /* s per micro-step */
	double ov = 0.8 * 0.25;
	double fwd = fmax(ag, layers * ag - ov * micro * 0.25);
	double bwd = fmax(0, layers * (ag + rs) - ov * micro * 0.75);
	double exposed = 2 * (fwd + bwd), total = 2 * layers * (2 * ag + rs); /* s */
	fprintf(stderr, "  tinyllama FSDP x2 4090, 2 micro-batches: exposed %.2f ms (by hand %.2f) of %.2f ms, optimizer %.2f ms\n",
		1e3 * e.parts.comm_exposed, 1e3 * exposed, 1e3 * e.parts.comm_total, 1e3 * e.parts.optimizer);
	CHECK(e.parts.optimizer > 0);
	CHECK(fabs(e.parts.comm_total - total) <= 1e-9 * total);
	CHECK(fabs(e.parts.comm_exposed - exposed) <= 1e-9 * exposed);
	CHECK(parts_add_up(&e));

	/* a slower optimizer step hides nothing more */
	s.grad_clip = VF_CLIP_FOR;
	vf_estimate_run(a, &s, g, &slow);
	CHECK(slow.parts.optimizer > e.parts.optimizer);
	CHECK(fabs(passes_s(&slow) - passes_s(&e)) <= 1e-12);
	CHECK(slow.parts.comm_exposed == e.parts.comm_exposed);
	s.shard = VF_SHARD_DDP;
	s.grad_clip = VF_CLIP_NONE;
	vf_estimate_run(a, &s, g, &e);
	s.grad_clip = VF_CLIP_FOR;
	vf_estimate_run(a, &s, g, &slow);
	CHECK(slow.parts.optimizer > e.parts.optimizer);
	CHECK(e.parts.comm_exposed > 0 && e.parts.comm_exposed < e.parts.comm_total);
	CHECK(slow.parts.comm_exposed == e.parts.comm_exposed);
}

/* The backward's last reduce-scatter is exposed: it starts after the
 * backward's last layer and the compute stream waits for it (FSDP2's
 * root post-backward callback; DeepSpeed ZeRO-3 synchronises its
 * reduction stream). By hand: llama2-7b full fine-tuning under amp on
 * eight H100s (nvlink4) with FSDP, batch 4 x 2048 with checkpointing,
 * 2 micro-batches: the 32 layers' gathers and reduce-scatters hide
 * behind the passes (checked below), so each micro-step exposes the
 * first gather and the last reduce-scatter, one layer's each. */
static void test_fsdp_last_reduce_scatter_exposed(void)
{
	const struct vf_arch *a = arch("llama2-7b");
	const struct vf_gpu_spec *g = gpu("h100-80gb");
	if (!a || !g)
		return;
	struct vf_setup s = train_setup(VF_MODE_FULL, VF_PREC_AMP, 4, 2048);
	s.grad_ckpt = true;
	s.gpus = 8;
	s.shard = VF_SHARD_FSDP;
	s.fsdp_mixed_precision = true; /* the default stack's (hf: accelerate gathers and reduces in bf16) */
	s.grad_accum = 2;
	struct vf_estimate e;
	vf_estimate_run(a, &s, g, &e);
	struct vf__link l;
	vf__nccl_link(g, 8, &l);
	CHECK(strcmp(e.parts.link, "nvlink4") == 0);
	double layers = (double)a->layers;           /* 32 */
	double P = 2.0 * (double)e.params;           /* bf16 parameters, bytes */
	double G = 2.0 * (double)e.trainable_params; /* bf16 gradients, bytes */
	double ag = l.base_s + 7 * l.step_s + 7.0 / 8.0 * P / layers / l.busbw; /* s */
	double rs = l.base_s + 7 * l.step_s + 7.0 / 8.0 * G / layers / l.busbw; /* s */
	double micro = passes_s(&e) / 2, ov = 0.8;   /* s; FSDP's overlap, NVLink's scale 1 */
	CHECK(layers * ag < ov * micro * 0.25);        /* the forward's gathers hide */
	CHECK(layers * (ag + rs) < ov * micro * 0.75); /* the backward's too */
	double exposed = 2 * (ag + rs);                /* s */
	fprintf(stderr, "  llama2-7b FSDP x8 H100, 2 micro-batches: exposed %.3f ms (by hand %.3f) of %.1f ms\n",
		1e3 * e.parts.comm_exposed, 1e3 * exposed, 1e3 * e.parts.comm_total);
	CHECK(fabs(e.parts.comm_exposed - exposed) <= 1e-9 * exposed);
	CHECK(parts_add_up(&e));
}

/* Mechanisms with memory now have time. */
static void test_mechanism_times(void)
{
	const struct vf_arch *a = arch("llama2-7b");
	const struct vf_arch *tl = arch("tinyllama-1.1b");
	REQUIRE(a && tl);
	struct vf_setup s = train_setup(VF_MODE_LORA, VF_PREC_BF16, 1, 2048);
	s.lora_targets = VF_LORA_ALL;
	s.grad_ckpt = true;
	s.batch = 1;
	s.seq = 1024;
	struct vf_estimate lora, qlora;
	vf_estimate_run(a, &s, gpu("a100-80gb"), &lora);
	s.quant = VF_QUANT_NF4;
	vf_estimate_run(a, &s, gpu("a100-80gb"), &qlora);
	double ratio = lora.step_seconds / qlora.step_seconds; /* QLoRA / LoRA throughput */
	fprintf(stderr, "  QLoRA/LoRA throughput on A100, b1 s1024: %.2f\n", ratio);
	CHECK(ratio > 0.65 && ratio < 0.9);
	CHECK(lora.parts.dequant == 0 && qlora.parts.dequant > 0);

	/* compile fuses the elementwise kernels and the loss */
	vf_setup_defaults(&s);
	s.batch = 4;
	s.seq = 1024;
	struct vf_estimate eager, compiled, ab8, sc16, fused;
	vf_estimate_run(tl, &s, gpu("rtx-4090"), &eager);
	s.compile = true;
	vf_estimate_run(tl, &s, gpu("rtx-4090"), &compiled);
	double speedup = eager.step_seconds / compiled.step_seconds;
	fprintf(stderr, "  compile on tinyllama b4 s1024: %.2fx\n", speedup);
	CHECK(speedup > 1.1 && speedup < 1.5);
	CHECK(compiled.parts.memory_bound < 0.6 * eager.parts.memory_bound);
	s.compile = false;
	/* bitsandbytes' 8-bit AdamW: a quarter of fused AdamW's bytes, no
	 * faster than it */
	s.optimizer_impl = VF_OPTIMPL_FUSED;
	vf_estimate_run(tl, &s, gpu("rtx-4090"), &fused);
	s.optimizer_impl = VF_OPTIMPL_FOREACH;
	s.optimizer = VF_OPT_ADAMW8BIT;
	vf_estimate_run(tl, &s, gpu("rtx-4090"), &ab8);
	CHECK(ab8.parts.optimizer >= fused.parts.optimizer);
	/* fp16 autocast: the GradScaler's passes and sync */
	s.optimizer = VF_OPT_ADAMW;
	s.precision = VF_PREC_FP16;
	vf_estimate_run(tl, &s, gpu("rtx-4090"), &sc16);
	CHECK(sc16.parts.optimizer > eager.parts.optimizer);

	/* paged states beyond the card cross PCIe every step; within it, not */
	const struct vf_arch *q3 = arch("qwen2.5-3b");
	if (q3) {
		vf_setup_defaults(&s);
		s.grad_ckpt = true;
		s.batch = 2;
		s.seq = 1024;
		s.paged_optimizer = true;
		struct vf_estimate over, within;
		vf_estimate_run(q3, &s, gpu("rtx-4090"), &over);
		vf_estimate_run(q3, &s, gpu("h200"), &within);
		CHECK(over.parts.paging > 0.5 * over.parts.compute / 2);
		CHECK(within.parts.paging == 0);
		CHECK(parts_add_up(&over));
	}
	/* activation offload copies over PCIe, partly hidden */
	vf_setup_defaults(&s);
	s.batch = 8;
	s.seq = 2048;
	struct vf_estimate keep, off;
	vf_estimate_run(tl, &s, gpu("rtx-4090"), &keep);
	s.activation_offload = true;
	vf_estimate_run(tl, &s, gpu("rtx-4090"), &off);
	CHECK(keep.parts.offload == 0 && off.step_seconds >= keep.step_seconds);
	CHECK(parts_add_up(&off));
}

/* CPU offload (--offload): the GPU steps nothing; the host's step takes
 * its traffic at host_memory_gbs (AdamW: 11 fp32 passes over the shard);
 * what crosses PCIe after it (optimizer: the updated parameters) is all
 * exposed, the copies beside the passes only beyond 0.7 of them; the
 * other parts do not move. One GPU: no communication to re-expose. */
static void test_cpu_offload_time(void)
{
	const struct vf_arch *a = arch("qwen2.5-0.5b");
	if (!a)
		return;
	struct vf_setup s = train_setup(VF_MODE_FULL, VF_PREC_AMP, 4, 1024);
	struct vf_estimate none, opt, par;
	const struct vf_gpu_spec *g = gpu("rtx-4090");
	vf_estimate_run(a, &s, g, &none);
	s.offload = VF_OFFLOAD_OPTIMIZER;
	vf_estimate_run(a, &s, g, &opt);
	s.offload = VF_OFFLOAD_PARAMS;
	vf_estimate_run(a, &s, g, &par);
	CHECK(none.parts.cpu_offload == 0 && none.parts.host_optimizer == 0);
	double T = (double)none.trainable_params;
	double host = vf__steptime_host_bps(g); /* PCIe 4.0: 25 GB/s */
	CHECK(fabs(host - 25e9) < 1);
	/* DeepSpeedCPUAdam's fused loop: 7 fp32 accesses per element; FSDP's
	 * torch.optim foreach on CPU tensors: the GPU formula's 20 passes */
	CHECK(fabs(opt.parts.host_optimizer - T * 28 / 40e9) <= 1e-9 * opt.parts.host_optimizer);
	CHECK(fabs(par.parts.host_optimizer - T * 80 / 40e9) <= 1e-9 * par.parts.host_optimizer);
	CHECK(opt.parts.optimizer < none.parts.optimizer);
	/* optimizer: the 4-byte parameters up after the step, exposed; the
	 * gradients down in the backward, hidden behind it at most */
	double after = T * 4 / host;
	CHECK(opt.parts.cpu_offload >= after - 1e-12 && opt.parts.cpu_offload <= opt.offload_pcie_seconds + 1e-12);
	CHECK(fabs(opt.offload_pcie_seconds - (double)opt.offload_pcie_bytes / host) < 1e-9);
	/* params: nothing after the step; the shards up for both passes */
	CHECK(par.parts.cpu_offload <= par.offload_pcie_seconds + 1e-12);
	CHECK(par.offload_pcie_bytes > opt.offload_pcie_bytes);
	/* the kernels' parts are those of the step without offload */
	CHECK(opt.parts.gemm == none.parts.gemm && opt.parts.attention == none.parts.attention &&
	      opt.parts.memory_bound == none.parts.memory_bound);
	CHECK(fabs(opt.step_seconds - (none.step_seconds - none.parts.optimizer + opt.parts.optimizer +
				       opt.parts.cpu_offload + opt.parts.host_optimizer)) <=
	      1e-9 * opt.step_seconds);
	CHECK(parts_add_up(&opt) && parts_add_up(&par));
	/* a step twice as long hides more of the backward's copies, never
	 * those after the step */
	s.offload = VF_OFFLOAD_OPTIMIZER;
	s.batch = 64;
	struct vf_estimate big;
	vf_estimate_run(a, &s, g, &big);
	CHECK(fabs(big.parts.cpu_offload - after) <= 1e-9 * after);
	/* FSDP over four RTX 4090s: the collectives hide behind the GPU's
	 * passes, not behind the host's optimizer step that follows them */
	const struct vf_arch *tl = arch("tinyllama-1.1b");
	if (!tl)
		return;
	vf_setup_defaults(&s);
	s.mode = VF_MODE_FULL;
	s.batch = 4;
	s.seq = 1024;
	s.gpus = 4;
	s.shard = VF_SHARD_FSDP;
	struct vf_estimate plain, off;
	vf_estimate_run(tl, &s, g, &plain);
	s.offload = VF_OFFLOAD_PARAMS;
	vf_estimate_run(tl, &s, g, &off);
	CHECK(off.parts.host_optimizer > 0 && plain.parts.comm_exposed > 0);
	/* the window is the passes' (the offloaded step has no GPU optimizer
	 * step to hide behind either): as exposed as without offload, or more */
	CHECK(off.parts.comm_exposed >= plain.parts.comm_exposed);
	CHECK(parts_add_up(&off));
}

/* MoE full fine-tuning in transformers' expert loop: each expert's slice
 * of the fused gate_up_proj / down_proj parameters gets, in the backward,
 * a zero-filled gradient of the whole parameter, summed by autograd: per
 * layer E zero-fills and E - 1 adds (read 2, write 1) of all experts'
 * weights in fp32 (amp). Mixtral 8x7B: 32 layers x 8 x 4096 x 14336 x 3
 * elements x 4 bytes x 29 passes; at least that at the datasheet
 * bandwidth beyond the LoRA step's expert loop (whose experts are
 * frozen: no weight gradient). */
static void test_moe_expert_weight_gradients(void)
{
	const struct vf_arch *a = arch("mixtral-8x7b");
	if (!a)
		return;
	struct vf_setup s = train_setup(VF_MODE_FULL, VF_PREC_AMP, 1, 2048);
	struct vf_estimate full, lora;
	vf_estimate_run(a, &s, gpu("h200"), &full);
	s.mode = VF_MODE_LORA;
	s.precision = VF_PREC_BF16;
	vf_estimate_run(a, &s, gpu("h200"), &lora);
	double bytes = 32 * 8 * 4096.0 * 14336 * 3 * 4 * (4 * 8 - 3);
	double at_datasheet = bytes / (4.8e12);
	fprintf(stderr, "  mixtral-8x7b expert loop: full %.0f ms, lora %.0f ms (term >= %.0f ms)\n",
		1e3 * full.parts.moe, 1e3 * lora.parts.moe, 1e3 * at_datasheet);
	CHECK(full.parts.moe - lora.parts.moe >= at_datasheet);
	CHECK(full.parts.moe - lora.parts.moe <= 4 * at_datasheet);
	CHECK(parts_add_up(&full));
}

/* transformers 5's eager expert loop synchronises five times per expert
 * in the forward (the index test's bool, three item()s of indexing by a
 * 0-d CUDA tensor, torch.where's nonzero) and once per MoE layer
 * (expert_hit's nonzero); the backward has none beyond its own. By hand,
 * for 2 MoE layers of 8 experts, 10 launches each, on an H200 (host 1):
 * forward 2 x (8 x (10 launch + 5 sync) + sync); checkpointing runs the
 * forward again; the backward adds 2 x 8 x (10 x 2 launches + sync).
 * fp32 experts under autocast launch 3 more kernels per expert. */
static void moe_loop_step(bool train, bool ckpt, double fp32, struct vf_step_parts *p)
{
	struct vf__step_work w;
	memset(&w, 0, sizeof w);
	w.micro = 1;
	w.train = train;
	w.ckpt = ckpt;
	w.attn = VF__ATTN_FLASH;
	w.nkinds = 1;
	w.kind[0].count = 2;
	w.kind[0].experts = 8;
	w.kind[0].expert_kernels = 10;
	w.kind[0].moe_share = 1;
	w.kind[0].expert_fp32 = fp32;
	w.rate_tflops = gpu("h200")->bf16_tflops;
	struct vf__steptime_out o;
	vf__steptime(&w, gpu("h200"), &o);
	*p = o.parts;
}

static void test_moe_loop_syncs(void)
{
	double launch = constant("launch_s", NULL), sync = constant("sync_s", NULL);
	const cJSON *ml = cJSON_GetObjectItemCaseSensitive(vf__steptime_data("constants"), "moe_loop");
	const cJSON *pe = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ml, "syncs_per_expert"), "value");
	const cJSON *pl = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ml, "syncs_per_layer"), "value");
	CHECK(cJSON_IsNumber(pe) && pe->valuedouble == 5);
	CHECK(cJSON_IsNumber(pl) && pl->valuedouble == 1);
	CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ml, "syncs_per_expert"), "source")));
	CHECK(launch > 0 && sync > 0);
	struct vf_step_parts fwd, tr, ck;
	moe_loop_step(false, false, 0, &fwd);
	moe_loop_step(true, false, 0, &tr);
	moe_loop_step(true, true, 0, &ck);
	double f = 2 * (8 * (10 * launch + 5 * sync) + sync);
	double b = 2 * 8 * (10 * 2 * launch + sync);
	fprintf(stderr, "  MoE loop: forward %.3f ms (by hand %.3f), training %.3f (%.3f), checkpointed %.3f (%.3f)\n",
		1e3 * fwd.moe, 1e3 * f, 1e3 * tr.moe, 1e3 * (f + b), 1e3 * ck.moe, 1e3 * (2 * f + b));
	CHECK(fabs(fwd.moe - f) < 1e-9);
	CHECK(fabs(tr.moe - (f + b)) < 1e-9);
	CHECK(fabs(ck.moe - (2 * f + b)) < 1e-9);
	/* fp32 experts under autocast: each expert's two weight slices cast
	 * again (views autocast does not cache) and its output cast back to
	 * the fp32 accumulator, 3 more launches forward, 6 backward */
	const cJSON *ac = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ml, "amp_casts_per_expert"), "value");
	CHECK(cJSON_IsNumber(ac) && ac->valuedouble == 3);
	struct vf_step_parts amp;
	moe_loop_step(true, false, 1, &amp);
	double fa = 2 * (8 * (13 * launch + 5 * sync) + sync), ba = 2 * 8 * (13 * 2 * launch + sync);
	fprintf(stderr, "  MoE loop, fp32 experts under autocast: training %.3f ms (by hand %.3f)\n", 1e3 * amp.moe,
		1e3 * (fa + ba));
	CHECK(fabs(amp.moe - (fa + ba)) < 1e-9);
}

/* --json carries the parts; a GPU without a rate has none. */
static void test_parts_json(void)
{
	const struct vf_arch *a = arch("tinyllama-1.1b");
	if (!a)
		return;
	struct vf_setup s;
	vf_setup_defaults(&s);
	struct vf_estimate e;
	vf_estimate_run(a, &s, gpu("h200"), &e);
	cJSON *t = vf_estimate_time_json(&e);
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(t, "parts");
	CHECK(cJSON_IsObject(p));
	CHECK(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(p, "gemm")));
	CHECK(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(p, "comm_exposed")));
	CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(p, "link")));
	cJSON_Delete(t);
	s.mode = VF_MODE_INFER; /* an unknown rate: no time, no parts */
	struct vf_gpu_spec norate = *gpu("h200");
	norate.bf16_tflops = norate.fp16_tflops = -1;
	vf_estimate_run(a, &s, &norate, &e);
	CHECK(!(e.step_seconds > 0) && vf_estimate_parts_json(&e) == NULL);
}

/* The optimizer part of a bare step on `g`: `tensors` per-tensor
 * parameters (a for-loop optimizer when `loop`, else foreach), `grad`
 * bytes of gradients, clipping `clip`. */
static double clip_step(const struct vf_gpu_spec *g, double tensors, double grad, int clip, bool loop)
{
	struct vf__step_work w;
	memset(&w, 0, sizeof w);
	w.micro = 1;
	w.attn = VF__ATTN_FLASH;
	w.nkinds = 1;
	w.rate_tflops = g->fp16_tflops;
	w.opt_tensors = tensors;
	w.opt_impl = loop ? VF_OPTIMPL_FOR : VF_OPTIMPL_FOREACH;
	w.grad_bytes = grad;
	w.grad_clip = clip;
	w.train = true;
	struct vf__steptime_out o;
	vf__steptime(&w, g, &o);
	return o.parts.optimizer;
}

/* --grad-clip: clip_grad_norm_ before the step. torch 1.x's loop costs
 * two launches per tensor plus five (stack, norm, add, div, clamp) on the
 * host; torch 2.x's grouped kernels three per 512 tensors plus the five;
 * on the device three passes over the gradients. Host-bound (small
 * gradients) the optimizer part grows by exactly the launches; device-
 * bound (no per-tensor host loop to hide behind) by at least the three
 * passes at the card's raw bandwidth. Was: no time at all. */
static void test_grad_clip_time(void)
{
	const struct vf_gpu_spec *v = gpu("v100-16gb");
	REQUIRE(v != NULL);
	double launch = constant("launch_s", NULL) * constant("host_speed", "volta");
	CHECK(launch > 0);
	const double n = 400, small = 1e3;
	double none = clip_step(v, n, small, VF_CLIP_NONE, true);
	double loop = clip_step(v, n, small, VF_CLIP_FOR, true);
	double grouped = clip_step(v, n, small, VF_CLIP_FOREACH, true);
	fprintf(stderr, "  clip on v100, 400 tensors: for %+.2f ms, foreach %+.3f ms\n",
		1e3 * (loop - none), 1e3 * (grouped - none));
	CHECK(fabs((loop - none) - (2 * n + 5) * launch) < 1e-9);
	CHECK(fabs((grouped - none) - (3 * (1 + n / 512) + 5) * launch) < 1e-9);
	/* device-bound: 100 GB of gradients under a foreach optimizer (its
	 * host time, AdamW's 8 foreach ops in 10 launches for 400 tensors,
	 * is all the step had) */
	const double big = 1e11;
	double dn = clip_step(v, n, big, VF_CLIP_NONE, false), df = clip_step(v, n, big, VF_CLIP_FOREACH, false);
	double passes = 3 * big / (v->bandwidth_gbs * 1e9);
	CHECK(df - dn >= passes - 10 * launch);
	CHECK(df - dn < 3 * big / (0.5 * v->bandwidth_gbs * 1e9));
	/* the setup reaches the step: off by default, on when asked */
	const struct vf_arch *a = arch("bert-large");
	REQUIRE(a != NULL);
	struct vf_setup s;
	vf_setup_defaults(&s);
	CHECK(s.grad_clip == VF_CLIP_NONE);
	s.precision = VF_PREC_FP16;
	s.batch = 4;
	s.seq = 512;
	struct vf_estimate e0, e1;
	vf_estimate_run(a, &s, v, &e0);
	struct vf_error err = {0};
	CHECK(vf_setup_set(&s, "grad-clip", "for", &err) == VF_OK && s.grad_clip == VF_CLIP_FOR);
	CHECK(vf_setup_set(&s, "grad-clip", "sometimes", &err) != VF_OK);
	vf_estimate_run(a, &s, v, &e1);
	CHECK(e1.parts.optimizer > e0.parts.optimizer);
	CHECK(fabs((e1.step_seconds - e0.step_seconds) - (e1.parts.optimizer - e0.parts.optimizer)) < 1e-12);
	CHECK(e1.parts.gemm == e0.parts.gemm && e1.parts.memory_bound == e0.parts.memory_bound);
}

/* BERT-family configs default hidden_dropout_prob and
 * attention_probs_dropout_prob to 0.1 and the Trainer trains with them
 * on: the masks and the dropped copies are kept for the backward and the
 * dropout kernels run. Was: no dropout for these families (like llama). */
static void test_encoder_dropout(void)
{
	const struct vf_arch *b = arch("bert-large");
	const struct vf_gpu_spec *v = gpu("v100-16gb");
	REQUIRE(b && v);
	struct vf_setup s;
	vf_setup_defaults(&s);
	s.precision = VF_PREC_FP16;
	s.attention = VF_ATTN_EAGER;
	s.batch = 4;
	s.seq = 512;
	/* the same model under a family name with no dropout default */
	struct vf_arch nd = *b;
	snprintf(nd.family, sizeof nd.family, "%s", "bert-nodrop");
	struct vf_estimate e, e0;
	vf_estimate_run(b, &s, v, &e);
	vf_estimate_run(&nd, &s, v, &e0);
	/* eager attention keeps, per layer, the mask (1 byte) beside the
	 * softmax output: 4 x 16 x 512 x 512 score elements, 16.8 MB */
	double probs = 4.0 * 16 * 512 * 512;
	fprintf(stderr, "  bert-large b4 s512 fp16: one layer %.1f MB saved (no dropout %.1f MB); "
			"memory-bound %.1f ms (%.1f ms)\n",
		(double)e.layer_activations / 1e6, (double)e0.layer_activations / 1e6, 1e3 * e.parts.memory_bound,
		1e3 * e0.parts.memory_bound);
	CHECK((double)(e.layer_activations - e0.layer_activations) >= probs);
	CHECK(e.parts.memory_bound > e0.parts.memory_bound);
	CHECK(e.parts.gemm == e0.parts.gemm);
	/* inference runs under model.eval(): dropout is the identity, no
	 * kernel, no mask (was: its kernels counted in gpt2's and T5's
	 * inference step too) */
	s.mode = VF_MODE_INFER;
	vf_estimate_run(b, &s, v, &e);
	vf_estimate_run(&nd, &s, v, &e0);
	CHECK(e.step_seconds == e0.step_seconds && e.parts.memory_bound == e0.parts.memory_bound);
}

/* A bare training step of 4 identical layers on an H200: `kernels`
 * launches and `saved` saved tensors per layer, `elem` memory-bound
 * bytes per layer (0: host-bound), checkpointed when `ckpt` (every layer,
 * or the share `rc` as every:N), compiled when `compile`. */
static void ckpt_work(bool ckpt, double rc, bool compile, double elem, struct vf__step_work *w)
{
	memset(w, 0, sizeof *w);
	w->micro = 1;
	w->train = true;
	w->ckpt = ckpt;
	w->recompute = rc;
	w->compile = compile;
	w->attn = VF__ATTN_FLASH;
	w->nkinds = 1;
	w->kind[0].count = 4;
	w->kind[0].kernels = 10;
	w->kind[0].saved_tensors = 20;
	w->kind[0].elem_bytes = elem;
	w->rate_tflops = gpu("h200")->bf16_tflops;
}

static void ckpt_step(bool ckpt, double rc, bool compile, double elem, struct vf_step_parts *p)
{
	struct vf__step_work w;
	ckpt_work(ckpt, rc, compile, elem, &w);
	struct vf__steptime_out o;
	vf__steptime(&w, gpu("h200"), &o);
	*p = o.parts;
}

static void ckpt_step_reentrant(struct vf_step_parts *p)
{
	struct vf__step_work w;
	ckpt_work(true, 0, false, 0, &w);
	w.ckpt_reentrant = true;
	struct vf__steptime_out o;
	vf__steptime(&w, gpu("h200"), &o);
	*p = o.parts;
}

static double ckpt_constant(const char *key)
{
	const cJSON *ck = cJSON_GetObjectItemCaseSensitive(vf__steptime_data("constants"), "checkpoint");
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(ck, key);
	CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "source")));
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "value");
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* Non-reentrant checkpointing's host work, by hand: per layer 20 saved
 * tensors x (pack + recompute's pack + unpack) and the block's region and
 * RNG stash/restore, added to the passes' host time. Host-bound, the step
 * grows by the recompute's launches and all of it; GPU-bound, the hooks
 * hide behind the kernels; compiled, there are none; every:2 pays half. */
static void test_checkpoint_host(void)
{
	double launch = constant("launch_s", NULL), host = constant("host_speed", "hopper");
	double pk = ckpt_constant("pack_hook_s"), rk = ckpt_constant("recompute_hook_s"),
	       uk = ckpt_constant("unpack_hook_s"), region = ckpt_constant("region_s"),
	       rng = ckpt_constant("rng_state_s");
	CHECK(launch > 0 && pk > 0 && rk > 0 && uk > 0 && region > 0 && rng > 0);
	if (!(host > 0))
		host = 1;
	double hooks = 4 * (20 * (pk + rk + uk) + region + rng) * host;
	struct vf_step_parts tr, ck, half, comp, comp0, dev, dev0;
	ckpt_step(false, 0, false, 0, &tr);
	ckpt_step(true, 0, false, 0, &ck);
	double by_hand = 4 * 10 * launch + hooks; /* the recompute's launches + the hooks */
	fprintf(stderr, "  checkpointed, host-bound: +%.3f ms (by hand %.3f), hooks %.3f ms (%.3f)\n",
		1e3 * (ck.compute - tr.compute), 1e3 * by_hand, 1e3 * ck.ckpt_host, 1e3 * hooks);
	CHECK(fabs(ck.compute - tr.compute - by_hand) < 1e-12);
	CHECK(fabs(ck.ckpt_host - hooks) < 1e-12);
	CHECK(fabs(ck.launch - tr.launch - by_hand) < 1e-12);
	CHECK(tr.ckpt_host == 0);
	/* the reentrant variant (--grad-ckpt=reentrant): no hooks, the RNG's
	 * stash and restore per block */
	struct vf_step_parts re;
	ckpt_step_reentrant(&re);
	CHECK(fabs(re.compute - tr.compute - (4 * 10 * launch + 4 * rng * host)) < 1e-12);
	CHECK(fabs(re.ckpt_host - 4 * rng * host) < 1e-12);
	ckpt_step(true, 0.5, false, 0, &half); /* every:2: half the layers */
	CHECK(fabs(half.compute - tr.compute - by_hand / 2) < 1e-12);
	CHECK(fabs(half.ckpt_host - hooks / 2) < 1e-12);
	ckpt_step(true, 0, true, 0, &comp); /* compiled: the checkpoint is traced */
	ckpt_step(false, 0, true, 0, &comp0);
	CHECK(comp.ckpt_host == 0);
	CHECK(fabs(comp.compute - comp0.compute - (comp.launch - comp0.launch)) < 1e-12);
	/* GPU-bound: 2 GB per layer (~0.9 ms forward at the H200's modelled
	 * bandwidth, over the recompute's 0.19 ms of launches + 0.38 ms of
	 * hooks and region per layer): the recompute costs one forward's
	 * device time, the hooks nothing */
	ckpt_step(false, 0, false, 2e9, &dev0);
	ckpt_step(true, 0, false, 2e9, &dev);
	CHECK(dev.launch == 0 && dev0.launch == 0);
	CHECK(fabs(dev.compute - dev0.compute - dev0.memory_bound / 3) < 1e-12);
	CHECK(fabs(dev.ckpt_host - hooks) < 1e-12);
}

/* The saved tensors per layer come from the layer's own structure:
 * tinyllama (llama: 7 linears, 2 Python RMSNorms, rotary, SiLU gate,
 * SDPA) full in amp saves 7 x 2 (inputs, weights) + 2 x 6 + 4 + 3 + 7 = 40
 * per layer; LoRA on q and v: 7 frozen weights + 2 x 4 adapter tensors,
 * 2 x 5 (frozen norm weights) + 4 + 3 + 7 = 39. 22 layers. */
static void test_checkpoint_saved_tensors(void)
{
	const struct vf_arch *a = arch("tinyllama-1.1b");
	if (!a)
		return;
	double pk = ckpt_constant("pack_hook_s"), rk = ckpt_constant("recompute_hook_s"),
	       uk = ckpt_constant("unpack_hook_s"), region = ckpt_constant("region_s"),
	       rng = ckpt_constant("rng_state_s"), host = constant("host_speed", "hopper");
	if (!(host > 0))
		host = 1;
	struct vf_setup s;
	vf_setup_defaults(&s);
	s.grad_ckpt = true;
	s.precision = VF_PREC_AMP;
	struct vf_estimate e;
	vf_estimate_run(a, &s, gpu("h200"), &e);
	double full = 22 * (40 * (pk + rk + uk) + region + rng) * host;
	fprintf(stderr, "  tinyllama full amp, checkpointed: hooks %.3f ms (by hand %.3f)\n", 1e3 * e.parts.ckpt_host,
		1e3 * full);
	CHECK(fabs(e.parts.ckpt_host - full) < 1e-9);
	CHECK(parts_add_up(&e));
	s.mode = VF_MODE_LORA;
	s.precision = VF_PREC_BF16;
	vf_estimate_run(a, &s, gpu("h200"), &e);
	double lora = 22 * (39 * (pk + rk + uk) + region + rng) * host;
	fprintf(stderr, "  tinyllama LoRA q,v, checkpointed: hooks %.3f ms (by hand %.3f)\n", 1e3 * e.parts.ckpt_host,
		1e3 * lora);
	CHECK(fabs(e.parts.ckpt_host - lora) < 1e-9);
	s.grad_ckpt = false;
	vf_estimate_run(a, &s, gpu("h200"), &e);
	CHECK(e.parts.ckpt_host == 0);
}

/* The optimizer step of GPT-2 large (774,030,080 fp32 parameters under
 * bf16 autocast, 436 tensors: per layer c_attn, attn c_proj, c_fc,
 * mlp c_proj weights and their 4 biases, ln_1 and ln_2 weight and bias;
 * wte, wpe, ln_f weight and bias) on an H200, by hand from the
 * optimizers' kernels (optstep.c) and the card's constants: 4.8 TB/s at
 * optimizer_bandwidth, optimizer_launch_s per kernel.
 *   AdamW foreach: 20 passes of 4 bytes; 8 foreach ops, each in 6
 *     launches (11,810.6 + 218 chunks over 2240 a launch): device-bound.
 *   AdamW fused: 7 passes; one depth-4 op in 6 launches, the step
 *     counters' add in 1: device-bound.
 *   SGD (momentum): 8 passes in 3 ops: device-bound.
 *   Adafactor: per tensor, 24 kernels for the 146 matrices, 16 for the
 *     290 vectors = 8144 launches on the host, beside 21 passes on the
 *     device: host-bound.
 * Was: 11, 11, 5 and 10 passes at the elementwise share, Adafactor 12
 * launches for each of 219 tensors (no biases) at launch_s. */
static void test_optimizer_step_kernels(void)
{
	const struct vf_arch *a = arch("gpt2-large");
	const struct vf_gpu_spec *h = gpu("h200");
	REQUIRE(a != NULL && h != NULL);
	double share = constant("optimizer_bandwidth", "hopper"), launch = constant("optimizer_launch_s", NULL);
	CHECK(share > 0.5 && share < 0.88);
	CHECK(launch > 0 && launch < constant("launch_s", NULL));
	double bw = h->bandwidth_gbs * 1e9 * share;
	struct vf_setup s;
	vf_setup_defaults(&s);
	s.precision = VF_PREC_AMP;
	s.batch = 4;
	s.seq = 1024;
	static const struct {
		enum vf_optimizer opt;
		enum vf_optimizer_impl impl;
		double passes, launches;
	} c[] = {
		{VF_OPT_ADAMW, VF_OPTIMPL_FOREACH, 20, 8 * 6},
		{VF_OPT_ADAMW, VF_OPTIMPL_FUSED, 7, 6 + 1},
		{VF_OPT_SGD, VF_OPTIMPL_FOREACH, 8, 3 * 6},
		{VF_OPT_ADAFACTOR, VF_OPTIMPL_FOREACH, 21, 146 * 24 + 290 * 16},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		s.optimizer = c[i].opt;
		s.optimizer_impl = c[i].impl;
		struct vf_estimate e;
		vf_estimate_run(a, &s, h, &e);
		CHECK(e.trainable_params == 774030080);
		double dev = 774030080.0 * 4 * c[i].passes / bw, host = c[i].launches * launch;
		double want = dev > host ? dev : host;
		fprintf(stderr, "  gpt2-large %s/%s on h200: optimizer %.2f ms (by hand %.2f: device %.2f, host %.2f)\n",
			vf_optimizer_name(c[i].opt), vf_optimizer_impl_name(c[i].impl), 1e3 * e.optimizer_seconds,
			1e3 * want, 1e3 * dev, 1e3 * host);
		CHECK(fabs(e.optimizer_seconds - want) <= 1e-9 * want);
	}
}

int main(void)
{
	RUN(test_streaming_bytes_at_copy_share);
	RUN(test_constants_cite_sources);
	RUN(test_generations_differ);
	RUN(test_fixed_time_per_generation);
	RUN(test_volta_precisions);
	RUN(test_kernel_level_volta_blackwell);
	RUN(test_kernel_level_ampere_ada);
	RUN(test_kernel_level_blackwell_sources);
	RUN(test_attention_by_length);
	RUN(test_attention_by_length_estimate);
	RUN(test_attention_by_length_bad_curves);
	RUN(test_attention_by_length_extremes);
	RUN(test_kernel_level_turing_bandwidth);
	RUN(test_kernel_level_ampere_gddr6);
	RUN(test_kernel_level_ampere_hbm2e_80gb);
	RUN(test_links_and_collectives);
	RUN(test_scaling_per_link);
	RUN(test_sharded_optimizer_step);
	RUN(test_mechanism_times);
	RUN(test_cpu_offload_time);
	RUN(test_moe_expert_weight_gradients);
	RUN(test_moe_loop_syncs);
	RUN(test_parts_json);
	RUN(test_nccl_sm_interference);
	RUN(test_overlap_window_passes_only);
	RUN(test_fsdp_last_reduce_scatter_exposed);
	RUN(test_grad_clip_time);
	RUN(test_optimizer_step_kernels);
	RUN(test_volta_cuda_core_gemms);
	RUN(test_fp32_sgemm_default);
	RUN(test_tf32_on);
	RUN(test_python_gelu_backward);
	RUN(test_encoder_dropout);
	RUN(test_checkpoint_host);
	RUN(test_checkpoint_saved_tensors);
	return vf_test_done();
}
