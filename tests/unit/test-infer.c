/* test-infer.c - inference as engines serve it (lib/estimate/infer.c):
 * KV bytes per token per layer, vLLM's block count and concurrency derived
 * by hand for llama3.1-8b on an RTX 4090 at 8k context (the acceptance of
 * issue 27), its refusal at the model's 131072 positions, fp8 and tensor
 * parallel, the bandwidth-bound decode derived by hand, and the
 * invariants: more users never faster per user, more context never more
 * users. */
#include <math.h>
#include <string.h>

#include "vf_test.h"
#include "catalog.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/infer.h"
#include "vramfit/estimate/setup.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/models.h"

static struct vf_setup infer_setup(void)
{
	struct vf_setup s;
	vf_setup_defaults(&s);
	s.mode = VF_MODE_INFER;
	s.given |= VF_SETUP_G_MODE;
	struct vf_error err = {0};
	if (vf_setup_finish(&s, &err) != VF_OK)
		fprintf(stderr, "  %s\n", err.msg);
	return s;
}

/* llama3.1-8b: 32 layers, 8 KV heads of 128: K and V in bf16 are
 * 2 x 8 x 128 x 2 = 4096 bytes per token per layer, 131072 per token. */
static void test_kv_bytes_per_token(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-8b");
	REQUIRE(a != NULL);
	CHECK_INT(a->kv_heads, 8);
	CHECK_INT(a->layers, 32);
	CHECK(vf_infer_kv_bytes_per_token_layer(a, 1, 2) == 4096.0);
	CHECK(vf_infer_kv_bytes_per_token_layer(a, 1, 1) == 2048.0); /* fp8 */
	CHECK(vf_infer_kv_bytes_per_token_layer(a, 2, 2) == 2048.0); /* 4 heads per GPU */
	/* 16 GPUs, 8 heads: vLLM replicates one head per GPU */
	CHECK(vf_infer_kv_bytes_per_token_layer(a, 16, 2) == 2 * 1 * 128 * 2);
}

/* vLLM on an RTX 4090 (24564 MiB) at --ctx 8192, by hand:
 *   total            24564 x 2^20                      = 25757220864
 *   budget           0.9 x total                       = 23181498777.6
 *   weights          8030261248 params x 2 (bf16)      = 16060522496
 *   profiled forward 2048 tokens (default max_num_batched_tokens below
 *                    70 GiB) x (2 x 4096 + 3 x 14336) x 2 = 209715200
 *   sampler          256 rows x 128256 x (2 + 4)       = 197001216
 *   CUDA context     480 MiB (ada)                     = 503316480
 *   available        23181498777.6 - the above         = 6210943385.6
 *   one block        16 tokens x 4096 x 32 layers      = 2097152
 *   blocks           floor(6210943385.6 / 2097152)     = 2961
 *   concurrency      2961 / cdiv(8192, 16) = 2961 / 512 = 5.783 -> 5 users */
static void test_vllm_blocks_rtx4090_8k(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-8b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("rtx-4090");
	REQUIRE(a && g);
	CHECK_INT(g->memory_mib, 24564);
	double avail = 0.9 * 24564.0 * 1048576.0 - 8030261248.0 * 2 - 2048.0 * (2 * 4096 + 3 * 14336) * 2 -
		       256.0 * 128256 * 6 - 480.0 * 1048576;
	CHECK(fabs(avail - 6210943385.6) < 1);
	CHECK_INT(vf_infer_vllm_blocks(avail, 4096, 32, 16), 2961);
	CHECK(fabs(vf_infer_vllm_concurrency(2961, 8192, 16) - 2961.0 / 512) < 1e-9);

	struct vf_setup s = infer_setup();
	struct vf_infer_opts o = {.engine = VF_ENGINE_VLLM, .ctx = 8192};
	struct vf_infer r;
	struct vf_error err = {0};
	CHECK(vf_infer_run(a, &s, g, &o, &r, &err) == VF_OK);
	CHECK_INT(r.weights_bytes, 16060522496LL);
	CHECK_INT(r.activation_bytes, 209715200LL + 197001216LL);
	CHECK_INT(r.non_torch_bytes, 503316480LL);
	CHECK_INT(r.max_num_batched_tokens, 2048);
	CHECK(r.kv_bytes_per_token == 131072.0);
	CHECK_INT(r.kv_blocks, 2961);
	CHECK_INT(r.max_users, 5);
	CHECK(fabs(r.max_concurrency - 5.783203125) < 1e-9);
	CHECK_INT(r.kv_cache_bytes, 2961LL * 16 * 131072);
	CHECK(r.fits);
	CHECK(r.ttft_seconds > 0);

	/* vLLM's default max_model_len is the model's 131072 positions:
	 * 2961 x 16 = 47376 tokens do not hold one sequence, it refuses */
	o.ctx = 0;
	CHECK(vf_infer_run(a, &s, g, &o, &r, &err) == VF_OK);
	CHECK_INT(r.ctx, 131072);
	CHECK(!r.fits);
	CHECK_INT(r.max_users, 0);
	CHECK_CONTAINS(r.why, "(131072) is larger than the maximum number of tokens");
	CHECK_CONTAINS(r.why, "(47376)");

	/* fp8 KV cache: 2048 bytes per token per layer, a block of 1048576:
	 * floor(6210943385.6 / 1048576) = 5923 blocks, 11 sequences of 8k */
	o.ctx = 8192;
	o.kv_fp8 = true;
	CHECK(vf_infer_run(a, &s, g, &o, &r, &err) == VF_OK);
	CHECK_INT(r.kv_blocks, 5923);
	CHECK_INT(r.max_users, 11);

	/* a lower gpu_memory_utilization, 0.7: 0.7 x total - the same terms
	 * = 18030054604.8 - 16970555392 = 1059499212.8 -> 505 blocks, 8080
	 * tokens: one 8192-token sequence does not fit, vLLM refuses */
	o.kv_fp8 = false;
	o.gpu_memory_utilization = 0.7;
	CHECK(vf_infer_run(a, &s, g, &o, &r, &err) == VF_OK);
	CHECK_INT(r.kv_blocks, 505);
	CHECK_INT(r.max_users, 0);
	CHECK(!r.fits);
	CHECK_CONTAINS(r.why, "(8192) is larger than the maximum number of tokens that can be stored in KV cache (8080)");
	o.ctx = 8000; /* 500 blocks: one sequence */
	CHECK(vf_infer_run(a, &s, g, &o, &r, &err) == VF_OK);
	CHECK(r.fits);
	CHECK_INT(r.max_users, 1);
	o.ctx = 8192;
	o.gpu_memory_utilization = 0.6; /* 0.6 x total < the weights and the rest: no blocks */
	CHECK(vf_infer_run(a, &s, g, &o, &r, &err) == VF_OK);
	CHECK_INT(r.kv_blocks, 0);
	CHECK(!r.fits);
	CHECK_CONTAINS(r.why, "no available memory for the cache blocks");
}

/* Tensor parallel 2: each GPU holds half the weights and half the KV heads. */
static void test_vllm_tensor_parallel(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-8b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("rtx-4090");
	REQUIRE(a && g);
	struct vf_setup s = infer_setup();
	s.tp = 2;
	struct vf_infer_opts o = {.engine = VF_ENGINE_VLLM, .ctx = 8192};
	struct vf_infer r;
	struct vf_error err = {0};
	CHECK(vf_infer_run(a, &s, g, &o, &r, &err) == VF_OK);
	CHECK_INT(r.weights_bytes, 16060522496LL / 2);
	CHECK(r.kv_bytes_per_token == 65536.0);
	/* avail = 0.9 x total - weights/2 - (209715200/2 + 256 x 128256 x (2/2 + 4)) - context */
	double avail = 0.9 * 24564.0 * 1048576.0 - 8030261248.0 - 104857600.0 - 256.0 * 128256 * 5 -
		       480.0 * 1048576;
	CHECK_INT(r.kv_blocks, (int64_t)floor(avail / (16.0 * 2048 * 32)));
	CHECK(r.max_users > 5 * 2); /* twice the blocks of half the size, plus the weights freed */
	/* decode: half the bytes per GPU (the 1-GPU figures of
	 * test_decode_bandwidth_bound, halved) plus two all-reduces per layer
	 * over PCIe: slower than the halved bytes alone */
	double half = (15009849344.0 + 671088640.0) / 2 / (1008e9 * 0.9);
	CHECK(r.decode_step_seconds > half);
	CHECK(r.decode_step_seconds < 2 * half);
}

/* Decode, bandwidth-bound, one user at 8k context from a 2048-token
 * prompt, by hand: the weights less the untied embedding table (read by
 * row): 16060522496 - 128256 x 4096 x 2 = 15009849344 bytes, the KV cache
 * at the mean context (2048 + 8192) / 2 = 5120 tokens: 131072 x 5120 =
 * 671088640 bytes; at the ada device-copy share 0.9 of 1008 GB/s:
 * 15680937984 / 907.2e9 = 17.285 ms, plus the kernels of vLLM's replayed
 * graph, 32 layers x 10 x 3 us = 0.96 ms: 18.245 ms, 54.8 tokens/s. */
static void test_decode_bandwidth_bound(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-8b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("rtx-4090");
	REQUIRE(a && g);
	CHECK(!a->tied_embeddings);
	struct vf_setup s = infer_setup();
	struct vf_infer_opts o = {.engine = VF_ENGINE_VLLM, .ctx = 8192, .users = 1};
	struct vf_infer r;
	struct vf_error err = {0};
	CHECK(vf_infer_run(a, &s, g, &o, &r, &err) == VF_OK);
	CHECK_INT(r.prompt, 2048);
	CHECK(r.decode_bandwidth_bound);
	/* and vLLM's replayed graph: 32 layers x 10 kernels x 3 us (steptime.json vllm_decode) */
	double want = (15009849344.0 + 671088640.0) / (1008e9 * 0.9) + 32 * 10 * 3e-6;
	CHECK(fabs(r.decode_step_seconds - want) < 1e-9);
	CHECK(fabs(r.decode_tokens_per_second_per_user - 1 / want) < 1e-6);
	CHECK(fabs(r.decode_tokens_per_second_total - 1 / want) < 1e-6);
	/* transformers eager: the kernel model's one-token forward (its one-row
	 * GEMMs) plus the cache: slower */
	o.engine = VF_ENGINE_TRANSFORMERS;
	struct vf_infer t;
	CHECK(vf_infer_run(a, &s, g, &o, &t, &err) == VF_OK);
	CHECK(t.decode_step_seconds > r.decode_step_seconds);
	CHECK_INT(t.kv_blocks, -1);
	/* exactly the kernel model's forward of one token (its one-row GEMMs
	 * take longer than the weights' bytes) plus the cache's bytes */
	struct vf_setup one = s;
	one.batch = 1;
	one.seq = 1;
	struct vf_estimate de;
	vf_estimate_run(a, &one, g, &de);
	CHECK(de.step_seconds > want);
	CHECK(fabs(t.decode_step_seconds - (de.step_seconds + 671088640.0 / (1008e9 * 0.9))) < 1e-9);
	CHECK(!t.decode_bandwidth_bound);
}

/* More users never faster per user (and never slower in aggregate while
 * they all fit); more context never more users. */
static void test_invariants(void)
{
	const char *models[] = {"llama3.1-8b", "qwen2.5-3b", "llama2-7b"};
	const char *gpus[] = {"rtx-4090", "h100-80gb", "a100-80gb"};
	for (int mi = 0; mi < 3; mi++)
		for (int gi = 0; gi < 3; gi++)
			for (int e = 0; e < 3; e++) {
				const struct vf_arch *a = catalog_arch(models[mi]);
				const struct vf_gpu_spec *g = vf_gpu_catalog_find(gpus[gi]);
				if (!a || !g) {
					CHECK(a && g);
					continue;
				}
				struct vf_setup s = infer_setup();
				struct vf_error err = {0};
				struct vf_infer r;
				double prev = INFINITY;
				int64_t cap = 0;
				for (int64_t u = 1; u <= 64; u *= 2) {
					struct vf_infer_opts o = {.engine = (enum vf_engine)e, .ctx = 4096,
								  .users = u};
					CHECK(vf_infer_run(a, &s, g, &o, &r, &err) == VF_OK);
					CHECK(r.decode_tokens_per_second_per_user <= prev * (1 + 1e-12));
					prev = r.decode_tokens_per_second_per_user;
					cap = r.max_users;
				}
				/* vLLM with synchronous scheduling: the host work grows
				 * with the users too */
				prev = INFINITY;
				for (int64_t u = 1; e == VF_ENGINE_VLLM && u <= 64; u *= 2) {
					struct vf_infer_opts o = {.engine = VF_ENGINE_VLLM, .ctx = 4096, .users = u,
								  .vllm_sync_scheduling = true};
					CHECK(vf_infer_run(a, &s, g, &o, &r, &err) == VF_OK);
					CHECK(r.decode_tokens_per_second_per_user <= prev * (1 + 1e-12));
					prev = r.decode_tokens_per_second_per_user;
				}
				(void)cap;
				int64_t users_prev = INT64_MAX;
				for (int64_t c = 2048; c <= 32768; c *= 2) {
					struct vf_infer_opts o = {.engine = (enum vf_engine)e, .ctx = c};
					CHECK(vf_infer_run(a, &s, g, &o, &r, &err) == VF_OK);
					CHECK(r.max_users <= users_prev);
					users_prev = r.max_users;
				}
			}
}

/* llama.cpp Q4_K_M of llama3.1-8b, by hand from ggml's blocks (Q4_K: 144
 * bytes per 256, Q6_K: 210 per 256) and llama-quantize's mixture:
 *   a layer: q 4096x4096 and o: 9437184 each; k 1024x4096: 2359296; v:
 *   Q6_K 3440640 where use_more_bits, else 2359296; gate + up 2 x 14336 x
 *   4096: 66060288; down: Q6_K 48168960 where use_more_bits, else
 *   33030144; two f32 norms 32768:
 *     layer 0 (more bits) = 138936320, layer 4 (not) = 122716160
 *   use_more_bits picks 16 of 32 layers (0-3, 28-31, 6, 9, ..., 27)
 *   embedding Q4_K 128256 x 4096: 295501824; output Q6_K: 430940160 + its
 *   norm 16384
 *   file: 16 x 138936320 + 16 x 122716160 + 295501824 + 430956544
 *       = 4912898048 bytes (4.58 GiB, 4.89 bits per weight: what
 *         llama.cpp prints for this file) */
static void test_llamacpp_q4_k_m(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-8b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("rtx-4090");
	REQUIRE(a && g);
	CHECK(vf_gguf_layer_bytes(a, VF_GGUF_Q4_K_M, 0) == 138936320.0);
	CHECK(vf_gguf_layer_bytes(a, VF_GGUF_Q4_K_M, 4) == 122716160.0);
	CHECK(vf_gguf_layer_bytes(a, VF_GGUF_Q4_K_M, 6) == 138936320.0);
	CHECK(vf_gguf_embedding_bytes(a, VF_GGUF_Q4_K_M) == 295501824.0);
	CHECK(vf_gguf_output_bytes(a, VF_GGUF_Q4_K_M) == 430956544.0);
	double file = vf_gguf_embedding_bytes(a, VF_GGUF_Q4_K_M) + vf_gguf_output_bytes(a, VF_GGUF_Q4_K_M);
	for (int i = 0; i < 32; i++)
		file += vf_gguf_layer_bytes(a, VF_GGUF_Q4_K_M, i);
	CHECK(file == 4912898048.0);
	/* q8_0: 34 bytes per 32 everywhere, the output too */
	CHECK(vf_gguf_output_bytes(a, VF_GGUF_Q8_0) == 525336576.0 * 34 / 32 + 16384);
	CHECK(vf_ggml_cache_bytes(VF_CACHE_Q8_0) == 34.0 / 32);
	CHECK(vf_ggml_cache_bytes(VF_CACHE_Q4_0) == 18.0 / 32);

	struct vf_setup s = infer_setup();
	struct vf_infer_opts o = {.engine = VF_ENGINE_LLAMACPP};
	struct vf_infer r;
	struct vf_error err = {0};
	CHECK(vf_infer_run(a, &s, g, &o, &r, &err) == VF_OK);
	CHECK_INT(r.ctx, 4096);
	CHECK_INT(r.gpu_layers, 32);
	CHECK(r.output_on_gpu);
	CHECK_INT(r.host_bytes, 295501824); /* the token embedding stays on the CPU */
	CHECK_INT(r.weights_bytes, 4912898048LL - 295501824);
	CHECK(fabs(r.bits_per_weight - 4.894) < 0.001);
	CHECK(r.fits);

	/* every layer on the CPU (-ngl 0): decode reads all but the embedding
	 * and one user's KV cache at the mean context (2048 + 4096) / 2 =
	 * 3072 tokens x 131072 bytes from host memory at 50 GB/s */
	o.n_gpu_layers = 0;
	o.ngl_given = true;
	CHECK(vf_infer_run(a, &s, g, &o, &r, &err) == VF_OK);
	CHECK_INT(r.gpu_layers, 0);
	double want = (4912898048.0 - 295501824 + 131072.0 * 3072) / 50e9;
	CHECK(fabs(r.decode_step_seconds - want) < 1e-9);
	/* q8_0 K and V cache: 1024 x 2 x 34 / 32 bytes per token per layer */
	o.n_gpu_layers = -1;
	o.cache_k = o.cache_v = VF_CACHE_Q8_0;
	CHECK(vf_infer_run(a, &s, g, &o, &r, &err) == VF_OK);
	CHECK(r.kv_bytes_per_token_layer == 1024.0 * 2 * 34 / 32);
	/* more layers on the GPU: never slower */
	double prev = INFINITY;
	o.cache_k = o.cache_v = VF_CACHE_F16;
	for (int64_t ngl = 0; ngl <= 33; ngl += 3) {
		o.n_gpu_layers = ngl;
		CHECK(vf_infer_run(a, &s, g, &o, &r, &err) == VF_OK);
		CHECK(r.decode_step_seconds <= prev);
		prev = r.decode_step_seconds;
	}
}

/* MoE: one user's token reads the experts it routes to, not all of them
 * (Mixtral 8x7B, 2 of 8: well under the time of reading every weight);
 * a setup vLLM refuses gets no speeds. */
static void test_moe_and_refused_speeds(void)
{
	const struct vf_arch *a = catalog_arch("mixtral-8x7b");
	const struct vf_gpu_spec *h = vf_gpu_catalog_find("h100-80gb");
	REQUIRE(a && h);
	struct vf_setup s = infer_setup();
	struct vf_infer_opts o = {.engine = VF_ENGINE_VLLM, .ctx = 4096};
	struct vf_infer r;
	struct vf_error err = {0};
	CHECK(vf_infer_run(a, &s, h, &o, &r, &err) == VF_OK);
	CHECK(!r.fits); /* 87 GiB of bf16 weights in a 71.7 GiB budget */
	CHECK(r.ttft_seconds < 0 && r.decode_step_seconds < 0);
	s.tp = 2;
	CHECK(vf_infer_run(a, &s, h, &o, &r, &err) == VF_OK);
	CHECK(r.fits);
	double all = (double)r.weights_bytes / (h->bandwidth_gbs * 1e9 * 0.88);
	CHECK(r.decode_step_seconds > 0 && r.decode_step_seconds < 0.6 * all);
	CHECK(r.approximate);
}

/* fit --mode infer: the ways that serve, each fitting its users, fastest
 * first; llama3.1-70b on two RTX 3090 at 4k: vLLM tensor parallel 2 with
 * int4 weights and an fp8 KV cache (bf16 KV holds 176 blocks = 2816
 * tokens < 4096; fp8 353 blocks = 5648), and llama.cpp offloads. */
static void test_candidates(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-70b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("rtx-3090");
	REQUIRE(a && g);
	struct vf_setup s = infer_setup();
	struct vf_infer_opts o = {.engine = VF_ENGINE_TRANSFORMERS, .ctx = 4096, .users = 1};
	struct vf_infer_candidate c[64];
	int n = vf_infer_candidates(a, &s, g, 2, &o, c, 64);
	CHECK(n >= 2);
	bool tp2 = false, offload = false;
	for (int i = 0; i < n; i++) {
		CHECK(c[i].r.fits && c[i].r.max_users >= 1);
		CHECK(c[i].gpus <= 2);
		if (i > 0)
			CHECK(c[i].r.decode_tokens_per_second_per_user <= c[i - 1].r.decode_tokens_per_second_per_user);
		if (c[i].engine == VF_ENGINE_VLLM && c[i].gpus == 2 && strstr(c[i].what, "int4") &&
		    strstr(c[i].what, "fp8 KV")) {
			tp2 = true;
			CHECK_INT(c[i].r.kv_blocks, 353);
		}
		if (c[i].engine == VF_ENGINE_LLAMACPP && c[i].r.gpu_layers < 80)
			offload = true;
	}
	CHECK(tp2);
	CHECK(offload);
	CHECK_STR(c[0].what, "vllm tp 2, int4 weights, fp8 KV");
	/* one GPU: no tensor parallel option */
	n = vf_infer_candidates(a, &s, g, 1, &o, c, 64);
	for (int i = 0; i < n; i++)
		CHECK(c[i].gpus == 1);
	/* more users than any option holds: none */
	o.users = 100000;
	CHECK_INT(vf_infer_candidates(a, &s, g, 2, &o, c, 64), 0);
}

/* fit --mode infer without --ctx: vLLM takes the model's max_model_len
 * (131072 for llama3.1-70b) and refuses it on two RTX 3090 (its KV cache
 * cannot hold one such sequence), so the fit offers vLLM at the longest
 * max_model_len that holds the users, as vLLM's own message suggests:
 * tp 2 int4 + fp8 KV has 353 blocks of 16 tokens -> 353 x 16 = 5648 tokens
 * for one user, floor(353 / 2) x 16 = 2816 for two; bf16 KV 176 blocks ->
 * 2816 for one. Each option's own run at that length fits and serves; a
 * given --ctx is the user's and is never shortened. */
static void test_candidates_max_model_len(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-70b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("rtx-3090");
	REQUIRE(a && g);
	struct vf_setup s = infer_setup();
	struct vf_infer_opts o = {.engine = VF_ENGINE_VLLM, .users = 1};
	struct vf_infer_candidate c[64];
	int n = vf_infer_candidates(a, &s, g, 2, &o, c, 64);
	CHECK(n == 2);
	bool fp8 = false, bf16kv = false;
	for (int i = 0; i < n; i++) {
		CHECK(c[i].r.fits && c[i].r.max_users >= 1 && c[i].r.decode_tokens_per_second_per_user > 0);
		CHECK(c[i].r.ctx == c[i].max_model_len);
		if (strstr(c[i].what, "fp8 KV")) {
			fp8 = true;
			CHECK_INT(c[i].r.kv_blocks, 353);
			CHECK_INT(c[i].max_model_len, 5648);
			CHECK_STR(c[i].what, "vllm tp 2, int4 weights, fp8 KV, max_model_len 5648");
			CHECK(strstr(c[i].gives_up, "context 5648 of 131072 tokens") != NULL);
		} else {
			bf16kv = true;
			CHECK_INT(c[i].r.kv_blocks, 176);
			CHECK_INT(c[i].max_model_len, 2816);
		}
	}
	CHECK(fp8 && bf16kv);
	/* vLLM's own check at that length: one more block's worth refuses */
	struct vf_setup t = s;
	t.tp = 2;
	t.quant = VF_QUANT_INT4;
	struct vf_infer_opts e = {.engine = VF_ENGINE_VLLM, .ctx = 5648 + 16, .kv_fp8 = true};
	struct vf_infer r;
	struct vf_error err = {0};
	CHECK(vf_infer_run(a, &t, g, &e, &r, &err) == VF_OK);
	CHECK(!r.fits);
	/* two users: half the blocks each */
	o.users = 2;
	n = vf_infer_candidates(a, &s, g, 2, &o, c, 64);
	for (int i = 0; i < n; i++)
		if (strstr(c[i].what, "fp8 KV")) {
			CHECK_INT(c[i].max_model_len, 2816);
			CHECK(c[i].r.max_users >= 2);
		}
	/* --ctx given: the user's length, no vLLM option at 8192 */
	o.users = 1;
	o.ctx = 8192;
	n = vf_infer_candidates(a, &s, g, 2, &o, c, 64);
	CHECK_INT(n, 0);
	/* where the default fits, nothing is shortened (llama3.1-8b on an H200) */
	const struct vf_arch *b = catalog_arch("llama3.1-8b");
	const struct vf_gpu_spec *h = vf_gpu_catalog_find("h200");
	o.ctx = 0;
	n = b && h ? vf_infer_candidates(b, &s, h, 1, &o, c, 64) : 0;
	CHECK(n > 0);
	for (int i = 0; i < n; i++)
		CHECK_INT(c[i].max_model_len, 0);
}

/* fit --engine transformers: generate()'s ways, nothing it does not do.
 * llama3.1-8b (16 GB of bf16) fits one RTX 4090: bf16, int8 and nf4 on one
 * card, no split, each the same figures as its own vf_infer_run.
 * llama3.1-70b: 70.55e9 x 2 = 141.1e9 bytes of bf16 weights over 24 GiB
 * (25.77e9 bytes) cards needs at least 6 of them; the option is the
 * fewest whose layer split serves (one fewer does not), and one card works
 * at a time, so a token reads all the weights at one card's 1008 GB/s:
 * under 1008e9 / 141.1e9 = 7.14 tok/s. No tensor or pipeline parallel. */
static void test_generate_candidates(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-8b"), *b = catalog_arch("llama3.1-70b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("rtx-4090");
	REQUIRE(a && b && g);
	struct vf_setup s = infer_setup();
	struct vf_infer_opts o = {.engine = VF_ENGINE_VLLM, .ctx = 4096, .users = 1}; /* engine ignored */
	struct vf_infer_candidate c[16];
	int n = vf_infer_generate_candidates(a, &s, g, 8, &o, c, 16);
	CHECK_INT(n, 3);
	for (int i = 0; i < n; i++) {
		CHECK(c[i].engine == VF_ENGINE_TRANSFORMERS && c[i].r.engine == VF_ENGINE_TRANSFORMERS);
		CHECK(c[i].gpus == 1 && c[i].r.tp == 1 && c[i].r.pp == 1);
		CHECK(c[i].r.fits && c[i].r.decode_tokens_per_second_per_user > 0 && c[i].r.ttft_seconds > 0);
		if (i > 0)
			CHECK(c[i].r.decode_tokens_per_second_per_user <= c[i - 1].r.decode_tokens_per_second_per_user);
	}
	CHECK_STR(c[0].what, "transformers bf16");
	struct vf_infer_opts to = {.engine = VF_ENGINE_TRANSFORMERS, .ctx = 4096, .users = 1};
	struct vf_infer r;
	struct vf_error err = {0};
	CHECK(vf_infer_run(a, &s, g, &to, &r, &err) == VF_OK);
	CHECK(r.decode_step_seconds == c[0].r.decode_step_seconds && r.max_users == c[0].r.max_users);

	n = vf_infer_generate_candidates(b, &s, g, 8, &o, c, 16);
	CHECK(n >= 1);
	bool bf16 = false;
	for (int i = 0; i < n; i++) {
		CHECK(c[i].r.tp == 1 && c[i].r.pp == 1);
		if (strncmp(c[i].what, "transformers bf16, layer split over ", 36) != 0)
			continue;
		bf16 = true;
		CHECK(c[i].gpus >= 6 && c[i].gpus <= 8);
		CHECK(c[i].r.decode_tokens_per_second_per_user < 1008e9 / 141.1e9);
		struct vf_setup f = s;
		f.gpus = c[i].gpus - 1;
		f.split = VF_SPLIT_LAYERS;
		f.shard = VF_SHARD_NONE;
		CHECK(vf_infer_run(b, &f, g, &to, &r, &err) == VF_OK);
		CHECK(!r.fits || r.max_users < 1);
	}
	CHECK(bf16);
	/* two cards at most: no bf16 option */
	n = vf_infer_generate_candidates(b, &s, g, 2, &o, c, 16);
	for (int i = 0; i < n; i++)
		CHECK(strncmp(c[i].what, "transformers bf16", 17) != 0 && c[i].gpus <= 2);
}

/* Only --mode infer. */
static void test_training_refused(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-8b");
	REQUIRE(a);
	struct vf_setup s;
	vf_setup_defaults(&s);
	struct vf_infer_opts o = {.engine = VF_ENGINE_VLLM};
	struct vf_infer r;
	struct vf_error err = {0};
	CHECK(vf_infer_run(a, &s, vf_gpu_catalog_find("h100-80gb"), &o, &r, &err) == VF_EUSAGE);
	enum vf_engine en;
	CHECK(vf_engine_parse("vllm", &en) && en == VF_ENGINE_VLLM);
	CHECK(!vf_engine_parse("tgi", &en));
	/* the project's own name is a spelling of llamacpp; near misses are not */
	CHECK(vf_engine_parse("llama.cpp", &en) && en == VF_ENGINE_LLAMACPP);
	CHECK(vf_engine_parse("llamacpp", &en) && en == VF_ENGINE_LLAMACPP);
	CHECK(!vf_engine_parse("llama", &en) && !vf_engine_parse("llama.cpp ", &en) && !vf_engine_parse(NULL, &en));
}

/* transformers' DynamicCache vs StaticCache, by hand for llama3.1-8b at
 * --ctx 8000, one user: one layer's K is 0.5 x 4096 x 8000 = 16384000
 * bytes, 8 blocks of 2 MiB = 16777216 once rounded: the torch.cat
 * transient 16777216 plus the rounding of the 64 K and V tensors, 64 x
 * 393216 = 25165824: 41943040 bytes. At 8192 tokens the tensor is exactly
 * 8 x 2 MiB: 16777216. A static cache adds nothing; the dynamic one never
 * holds more users, and at some context it holds fewer. */
static void test_dynamic_cache(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-8b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("a100-40gb");
	REQUIRE(a && g);
	struct vf_setup s = infer_setup();
	struct vf_infer_opts o = {.engine = VF_ENGINE_TRANSFORMERS, .ctx = 8000, .users = 1};
	struct vf_infer d, st;
	struct vf_error err = {0};
	CHECK(vf_infer_run(a, &s, g, &o, &d, &err) == VF_OK);
	CHECK_INT(d.kv_growth_bytes, 41943040);
	o.ctx = 8192;
	CHECK(vf_infer_run(a, &s, g, &o, &d, &err) == VF_OK);
	CHECK_INT(d.kv_growth_bytes, 16777216);
	o.static_cache = true;
	CHECK(vf_infer_run(a, &s, g, &o, &st, &err) == VF_OK);
	CHECK_INT(st.kv_growth_bytes, 0);
	/* the dynamic cache's users never exceed the static one's */
	for (int64_t ctx = 1024; ctx <= 16384; ctx += 1024) {
		o.ctx = ctx;
		o.static_cache = false;
		CHECK(vf_infer_run(a, &s, g, &o, &d, &err) == VF_OK);
		o.static_cache = true;
		CHECK(vf_infer_run(a, &s, g, &o, &st, &err) == VF_OK);
		CHECK(d.max_users <= st.max_users);
	}
	/* a card just big enough for the static cache's users at 8192 tokens
	 * (their peak plus half the growth): the dynamic cache holds one fewer */
	int64_t b;
	o.ctx = 8192;
	CHECK(vf_infer_run(a, &s, g, &o, &st, &err) == VF_OK);
	b = st.max_users;
	CHECK(b >= 2);
	struct vf_setup sb = s;
	sb.batch = b;
	sb.seq = 8192;
	struct vf_estimate e;
	vf_estimate_run(a, &sb, g, &e);
	struct vf_gpu_spec tight = *g;
	double growth = 0.5 * 4096 * 8192 * (double)b; /* exact multiples of 2 MiB */
	tight.memory_mib = (int64_t)(((double)e.peak_bytes + growth / 2) / (1 << 20));
	CHECK(vf_infer_run(a, &s, &tight, &o, &st, &err) == VF_OK);
	CHECK_INT(st.max_users, b);
	o.static_cache = false;
	CHECK(vf_infer_run(a, &s, &tight, &o, &d, &err) == VF_OK);
	CHECK_INT(d.max_users, b - 1);
	cJSON *j = vf_infer_to_json(&d);
	CHECK_STR(cJSON_GetObjectItem(j, "kv_cache")->valuestring, "dynamic");
	cJSON_Delete(j);
}

/* llama.cpp over several GPUs (src/llama-model.cpp load_tensors), by
 * hand for llama3.1-70b (80 layers; the output layer is "layer" 80):
 * every layer on 2 equal GPUs: act = 81, split points 0.5 and 1; layer il
 * goes to the first device whose point is above il / 81: layers 0-40
 * (40 / 81 = 0.494) on GPU 0, 41-79 and the output on GPU 1. --tensor-split
 * 3,1: points 0.75, 1: layers 0-60 on GPU 0. -ngl 40: i_gpu_start = 81 -
 * 40 = 41, act = 40: layers 41-60 on GPU 0, 61-79 and the output on GPU 1,
 * 0-40 on the CPU. One GPU, -ngl 80: layer 0 on the CPU, the output on
 * the GPU (llama.cpp counts the output as the last layer). */
static void test_llamacpp_split(void)
{
	CHECK_INT(vf_llamacpp_layer_device(40, 80, 81, NULL, 2), 0);
	CHECK_INT(vf_llamacpp_layer_device(41, 80, 81, NULL, 2), 1);
	CHECK_INT(vf_llamacpp_layer_device(80, 80, 81, NULL, 2), 1);
	double ts[VF_INFER_MAX_DEVICES] = {3, 1};
	CHECK_INT(vf_llamacpp_layer_device(60, 80, 81, ts, 2), 0);
	CHECK_INT(vf_llamacpp_layer_device(61, 80, 81, ts, 2), 1);
	CHECK_INT(vf_llamacpp_layer_device(40, 80, 40, NULL, 2), -1);
	CHECK_INT(vf_llamacpp_layer_device(41, 80, 40, NULL, 2), 0);
	CHECK_INT(vf_llamacpp_layer_device(60, 80, 40, NULL, 2), 0);
	CHECK_INT(vf_llamacpp_layer_device(61, 80, 40, NULL, 2), 1);
	CHECK_INT(vf_llamacpp_layer_device(80, 80, 40, NULL, 2), 1);
	CHECK_INT(vf_llamacpp_layer_device(0, 80, 80, NULL, 1), -1);
	CHECK_INT(vf_llamacpp_layer_device(1, 80, 80, NULL, 1), 0);
	CHECK_INT(vf_llamacpp_layer_device(80, 80, 80, NULL, 1), 0);
	CHECK_INT(vf_llamacpp_layer_device(5, 80, 0, NULL, 1), -1);

	/* the parser: ',' or '/', at most 16 ratios, not all 0 */
	double out[VF_INFER_MAX_DEVICES];
	int n;
	struct vf_error err = {0};
	CHECK(vf_llamacpp_tensor_split_parse("3,1", out, &n, &err) == VF_OK && n == 2 && out[0] == 3 && out[1] == 1);
	CHECK(vf_llamacpp_tensor_split_parse("0.6/0.4", out, &n, &err) == VF_OK && n == 2 && out[1] == 0.4);
	CHECK(vf_llamacpp_tensor_split_parse("3,", out, &n, &err) == VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "--tensor-split");
	CHECK(vf_llamacpp_tensor_split_parse("0,0", out, &n, &err) == VF_EUSAGE);
	CHECK(vf_llamacpp_tensor_split_parse("1;2", out, &n, &err) == VF_EUSAGE);
	CHECK(vf_llamacpp_tensor_split_parse("-1,2", out, &n, &err) == VF_EUSAGE);
	CHECK(vf_llamacpp_tensor_split_parse("nan", out, &n, &err) == VF_EUSAGE);
	CHECK(vf_llamacpp_tensor_split_parse("1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1", out, &n, &err) == VF_EUSAGE);
	CHECK(vf_llamacpp_tensor_split_parse("", out, &n, &err) == VF_EUSAGE);

	const struct vf_arch *a = catalog_arch("llama3.1-70b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("rtx-3090");
	REQUIRE(a && g);
	struct vf_setup s = infer_setup();
	struct vf_infer_opts o = {.engine = VF_ENGINE_LLAMACPP, .ctx = 4096, .users = 1};
	struct vf_infer one, two, row;
	CHECK(vf_infer_run(a, &s, g, &o, &one, &err) == VF_OK);
	CHECK(!one.fits); /* 39 GiB of Q4_K_M on one 24 GiB card */
	s.gpus = 2;
	CHECK(vf_infer_run(a, &s, g, &o, &two, &err) == VF_OK);
	CHECK(two.fits);
	CHECK_INT(two.devices, 2);
	CHECK_INT(two.device_layers[0], 41);
	CHECK_INT(two.device_first[1], 41);
	CHECK(two.device_output[1] && !two.device_output[0]);
	CHECK_INT(two.gpu_layers, 80);
	/* the weights on the two cards are the file less the token embedding */
	double file = vf_gguf_embedding_bytes(a, VF_GGUF_Q4_K_M) + vf_gguf_output_bytes(a, VF_GGUF_Q4_K_M);
	double g0 = 0;
	for (int i = 0; i < 80; i++) {
		file += vf_gguf_layer_bytes(a, VF_GGUF_Q4_K_M, i);
		g0 += i <= 40 ? vf_gguf_layer_bytes(a, VF_GGUF_Q4_K_M, i) : 0;
	}
	CHECK_INT(two.host_bytes, (int64_t)vf_gguf_embedding_bytes(a, VF_GGUF_Q4_K_M));
	CHECK_INT(two.fullest, 1);
	CHECK_INT(two.weights_bytes, (int64_t)(file - vf_gguf_embedding_bytes(a, VF_GGUF_Q4_K_M) - g0));
	/* a layer split runs the cards one after another: a card with both
	 * cards' memory and one card's bandwidth is faster by the one hop */
	struct vf_gpu_spec big = *g;
	big.memory_mib = 2 * g->memory_mib;
	s.gpus = 1;
	CHECK(vf_infer_run(a, &s, &big, &o, &one, &err) == VF_OK);
	CHECK(one.fits);
	CHECK(fabs(two.decode_step_seconds - one.decode_step_seconds - 2e-5) < 1e-9);
	/* a row split: both cards read their share at once */
	s.gpus = 2;
	o.split_mode = VF_LCPP_SPLIT_ROW;
	CHECK(vf_infer_run(a, &s, g, &o, &row, &err) == VF_OK);
	CHECK(row.fits);
	CHECK(row.decode_step_seconds < two.decode_step_seconds);
	CHECK(fabs((double)row.weights_bytes - (file - vf_gguf_embedding_bytes(a, VF_GGUF_Q4_K_M)) / 2) < 2e6);
	/* --split-mode none: one card, as without the second */
	o.split_mode = VF_LCPP_SPLIT_NONE;
	CHECK(vf_infer_run(a, &s, g, &o, &row, &err) == VF_OK);
	CHECK(!row.fits && row.devices == 1);
	/* --tensor-split 3,1: GPU 0 holds 61 layers and does not fit */
	o.split_mode = VF_LCPP_SPLIT_LAYER;
	o.tensor_split[0] = 3;
	o.tensor_split[1] = 1;
	CHECK(vf_infer_run(a, &s, g, &o, &row, &err) == VF_OK);
	CHECK_INT(row.device_layers[0], 61);
	CHECK(!row.fits && row.fullest == 0);
	CHECK_CONTAINS(row.why, "GPU 0 of 2");
}

/* vLLM runs at most max_num_seqs sequences (256 on an A100 80GB) however
 * many blocks there are: llama3.1-8b at 512 tokens has blocks for ~900. */
static void test_vllm_max_num_seqs(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-8b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("a100-80gb");
	REQUIRE(a && g);
	struct vf_setup s = infer_setup();
	s.seq = 256;
	struct vf_infer_opts o = {.engine = VF_ENGINE_VLLM, .ctx = 512, .users = 1};
	struct vf_infer r;
	struct vf_error err = {0};
	CHECK(vf_infer_run(a, &s, g, &o, &r, &err) == VF_OK);
	CHECK_INT(r.max_num_seqs, 256);
	CHECK(r.max_concurrency > 800);
	CHECK_INT(r.max_users, 256);
	cJSON *sw = vf_infer_sweep_json(a, &s, g, &o, 512, 4096);
	CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(sw, "contexts")), 4); /* 512, 1k, 2k, 4k */
	CHECK(cJSON_GetArrayItem(cJSON_GetObjectItem(sw, "max_users"), 0)->valuedouble == 256);
	CHECK(cJSON_GetArrayItem(cJSON_GetObjectItem(sw, "kv_bytes_per_sequence"), 1)->valuedouble == 131072.0 * 1024);
	CHECK(cJSON_IsNumber(cJSON_GetObjectItem(sw, "kv_budget_bytes")));
	cJSON_Delete(sw);
	/* a --ctx between the powers of two is a point of its own */
	sw = vf_infer_sweep_json(a, &s, g, &o, 3000, 4096);
	CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(sw, "contexts")), 5);
	CHECK(cJSON_GetArrayItem(cJSON_GetObjectItem(sw, "contexts"), 3)->valuedouble == 3000);
	/* vLLM's whole blocks: 3000 tokens take 188 blocks of 16 */
	CHECK(cJSON_GetArrayItem(cJSON_GetObjectItem(sw, "kv_bytes_per_sequence"), 3)->valuedouble == 131072.0 * 188 * 16);
	cJSON_Delete(sw);
}

/* Volta and Turing have no bf16 rate: decode takes the fp16 one (was no
 * speed at all: found by the published V100 row). */
static void test_decode_without_bf16(void)
{
	const struct vf_arch *a = catalog_arch("llama2-7b");
	const char *ids[] = {"v100-16gb", "t4"};
	for (int i = 0; a && i < 2; i++) {
		const struct vf_gpu_spec *g = vf_gpu_catalog_find(ids[i]);
		CHECK(g && !(g->bf16_tflops > 0) && g->fp16_tflops > 0);
		if (!g)
			continue;
		struct vf_setup s = infer_setup();
		s.seq = 16;
		struct vf_infer_opts o = {.engine = VF_ENGINE_LLAMACPP, .ctx = 512, .users = 1,
					  .gguf_type = VF_GGUF_Q4_0, .gguf_given = true};
		struct vf_infer r;
		struct vf_error err = {0};
		CHECK(vf_infer_run(a, &s, g, &o, &r, &err) == VF_OK);
		CHECK(r.fits && r.decode_tokens_per_second_per_user > 0);
	}
}

/* llama.cpp's default split over unequal cards (src/llama-model.cpp
 * load_tensors: no --tensor-split, so each device's free memory), by hand:
 * an RTX 3090 (24576 MiB) and an RTX 4080 (16376 MiB), each less its
 * 480 MiB CUDA context: free 24096 and 15896 MiB, ratios 24096 / 39992 =
 * 0.60252 and 0.39748. llama3.1-8b has 32 layers + the output = 33 to
 * place; layer il goes to the first device whose cumulative ratio
 * exceeds il / 33: GPU 0 while il / 33 < 0.60252, il <= 19 (20 layers),
 * GPU 1 layers 20-31 and the output. An equal split would be 17 and 15.
 * Free memory as a probe reports it decides instead (20 and 5 GiB:
 * il / 33 < 0.8, 27 layers on GPU 0); --tensor-split overrides both. */
static void test_llamacpp_free_memory_split(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-8b");
	const struct vf_gpu_spec *g0 = vf_gpu_catalog_find("rtx-3090"), *g1 = vf_gpu_catalog_find("rtx-4080");
	REQUIRE(a && g0 && g1);
	struct vf_setup s = infer_setup();
	s.gpus = 2;
	struct vf_error err = {0};
	struct vf_infer_opts o = {.engine = VF_ENGINE_LLAMACPP, .ctx = 4096, .users = 1,
				  .gguf_type = VF_GGUF_Q4_0, .gguf_given = true};
	o.device_gpu[0] = g0;
	o.device_gpu[1] = g1;
	struct vf_infer r, same, probe;
	CHECK(vf_infer_run(a, &s, g0, &o, &r, &err) == VF_OK);
	CHECK(r.fits && r.devices == 2);
	CHECK(fabs(r.device_split[0] - 24096.0 / 39992.0) < 1e-12);
	CHECK(fabs(r.device_split[1] - 15896.0 / 39992.0) < 1e-12);
	CHECK_INT(r.device_layers[0], 20);
	CHECK_INT(r.device_first[1], 20);
	CHECK_INT(r.device_layers[1], 12);
	CHECK(r.device_output[1] && !r.device_output[0]);
	CHECK(!strstr(r.not_modelled, "taken as equal"));
	/* two 3090s: equal free memory, 17 and 15 layers */
	o.device_gpu[1] = g0;
	CHECK(vf_infer_run(a, &s, g0, &o, &same, &err) == VF_OK);
	CHECK_INT(same.device_layers[0], 17);
	CHECK(fabs(same.device_split[0] - 0.5) < 1e-12);
	/* the same placement on two 3090s is faster than with the 4080's
	 * 717 GB/s for the second share */
	o.tensor_split[0] = 24096;
	o.tensor_split[1] = 15896;
	CHECK(vf_infer_run(a, &s, g0, &o, &same, &err) == VF_OK);
	CHECK_INT(same.device_layers[0], 20);
	CHECK(same.decode_step_seconds < r.decode_step_seconds);
	/* a probe's free memory decides the default */
	o.tensor_split[0] = o.tensor_split[1] = 0;
	o.device_gpu[1] = g1;
	o.device_free_bytes[0] = 20LL << 30;
	o.device_free_bytes[1] = 5LL << 30;
	CHECK(vf_infer_run(a, &s, g0, &o, &probe, &err) == VF_OK);
	CHECK_INT(probe.device_layers[0], 27);
	CHECK(fabs(probe.device_split[0] - 0.8) < 1e-12);
	/* --tensor-split wins over free memory */
	o.tensor_split[0] = 1;
	o.tensor_split[1] = 1;
	CHECK(vf_infer_run(a, &s, g0, &o, &probe, &err) == VF_OK);
	CHECK_INT(probe.device_layers[0], 17);
	/* the JSON names each device's share */
	cJSON *j = vf_infer_to_json(&r);
	const cJSON *dv = cJSON_GetObjectItemCaseSensitive(j, "devices");
	const cJSON *sp = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(dv, 0), "split");
	CHECK(cJSON_IsNumber(sp) && fabs(sp->valuedouble - 24096.0 / 39992.0) < 1e-12);
	cJSON_Delete(j);
}

/* A device that another process holds part of: llama.cpp splits by the
 * free memory it finds and can use no more than that. By hand: an RTX
 * 3090 with 1 GiB free after the CUDA context and an idle RTX 4080
 * (16376 - 480 = 15896 MiB): ratios 1024 / 16920 = 0.060520, GPU 0 while
 * il / 33 < 0.060520: il 0-1, 2 layers; GPU 0 may use 1024 + 480 MiB =
 * 1577058304 bytes, GPU 1 its whole card. Alone on that 3090 the 8B q4_0
 * model (~4.3 GiB) does not fit, though it fits the idle card. A probe
 * that reports more than the card counts the card. */
static void test_llamacpp_free_memory_cap(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-8b");
	const struct vf_gpu_spec *g0 = vf_gpu_catalog_find("rtx-3090"), *g1 = vf_gpu_catalog_find("rtx-4080");
	REQUIRE(a && g0 && g1);
	struct vf_setup s = infer_setup();
	s.gpus = 2;
	struct vf_error err = {0};
	struct vf_infer_opts o = {.engine = VF_ENGINE_LLAMACPP, .ctx = 4096, .users = 1,
				  .gguf_type = VF_GGUF_Q4_0, .gguf_given = true};
	o.device_gpu[0] = g0;
	o.device_gpu[1] = g1;
	o.device_free_bytes[0] = 1LL << 30;
	struct vf_infer r;
	CHECK(vf_infer_run(a, &s, g0, &o, &r, &err) == VF_OK);
	CHECK(fabs(r.device_split[0] - 1024.0 / 16920.0) < 1e-12);
	CHECK_INT(r.device_layers[0], 2);
	CHECK_INT(r.device_memory_bytes[0], 1577058304);
	CHECK_INT(r.device_memory_bytes[1], vf_estimate_gpu_bytes(g1));
	CHECK(r.device_bytes[0] <= r.device_memory_bytes[0] && r.fits);
	/* one card: the busy 3090 does not hold the model, the idle one does */
	s.gpus = 1;
	CHECK(vf_infer_run(a, &s, g0, &o, &r, &err) == VF_OK);
	CHECK(!r.fits && r.max_users == 0);
	o.device_free_bytes[0] = 0;
	CHECK(vf_infer_run(a, &s, g0, &o, &r, &err) == VF_OK);
	CHECK(r.fits);
	CHECK_INT(r.device_memory_bytes[0], vf_estimate_gpu_bytes(g0));
	o.device_free_bytes[0] = 30LL << 30;
	CHECK(vf_infer_run(a, &s, g0, &o, &r, &err) == VF_OK);
	CHECK_INT(r.device_memory_bytes[0], vf_estimate_gpu_bytes(g0));
}

/* vLLM's host work per decode step (steptime.json vllm_decode), by hand:
 * one sequence 1.4 ms (Llama 3.2 1B's host-bound TPOT less its device
 * step), each further running sequence 1.13 us (update_from_output's
 * micro-benchmark), times the host's speed (hopper 1.0, ada-geforce 0.75):
 *   8 users on an H200:    1.4e-3 + 7 x 1.13e-6 = 1.40791e-3 s
 *   8 users on an RTX 4090: 0.75 x that          = 1.05593e-3 s
 * Synchronous scheduling adds it to the device step; async scheduling
 * hides it behind a longer device step (llama3.1-8b's ~3.7 ms on an H200). */
static void test_vllm_host_step(void)
{
	const struct vf_arch *a = catalog_arch("llama3.1-8b");
	const struct vf_gpu_spec *h = vf_gpu_catalog_find("h200"), *g = vf_gpu_catalog_find("rtx-4090");
	REQUIRE(a && h && g);
	struct vf_setup s = infer_setup();
	struct vf_error err = {0};
	struct vf_infer_opts o = {.engine = VF_ENGINE_VLLM, .ctx = 4096, .users = 8,
				  .vllm_sync_scheduling = true};
	struct vf_infer sync, async;
	CHECK(vf_infer_run(a, &s, h, &o, &sync, &err) == VF_OK);
	CHECK(fabs(sync.decode_host_work_seconds - 1.40791e-3) < 1e-9);
	CHECK(!sync.async_scheduling);
	CHECK(fabs(sync.decode_host_seconds - sync.decode_host_work_seconds) < 1e-15);
	CHECK(fabs(sync.decode_step_seconds - sync.decode_device_seconds - 1.40791e-3) < 1e-9);
	o.vllm_sync_scheduling = false;
	CHECK(vf_infer_run(a, &s, h, &o, &async, &err) == VF_OK);
	CHECK(async.async_scheduling && async.decode_device_seconds > 1.40791e-3);
	CHECK(async.decode_host_seconds == 0);
	CHECK(fabs(async.decode_step_seconds - sync.decode_device_seconds) < 1e-15);
	CHECK(async.decode_tokens_per_second_per_user > sync.decode_tokens_per_second_per_user);
	o.vllm_sync_scheduling = true;
	CHECK(vf_infer_run(a, &s, g, &o, &sync, &err) == VF_OK);
	CHECK(fabs(sync.decode_host_work_seconds - 0.75 * 1.40791e-3) < 1e-9);
	/* the JSON carries the parts */
	cJSON *j = vf_infer_to_json(&sync);
	const cJSON *dh = cJSON_GetObjectItemCaseSensitive(j, "decode_host_seconds");
	const cJSON *sc = cJSON_GetObjectItemCaseSensitive(j, "scheduling");
	CHECK(cJSON_IsNumber(dh) && fabs(dh->valuedouble - sync.decode_host_seconds) < 1e-15);
	CHECK(cJSON_IsString(sc) && strcmp(sc->valuestring, "sync") == 0);
	cJSON_Delete(j);
}

int main(void)
{
	RUN(test_kv_bytes_per_token);
	RUN(test_vllm_blocks_rtx4090_8k);
	RUN(test_vllm_tensor_parallel);
	RUN(test_decode_bandwidth_bound);
	RUN(test_invariants);
	RUN(test_llamacpp_q4_k_m);
	RUN(test_moe_and_refused_speeds);
	RUN(test_candidates);
	RUN(test_training_refused);
	RUN(test_dynamic_cache);
	RUN(test_llamacpp_split);
	RUN(test_vllm_max_num_seqs);
	RUN(test_decode_without_bf16);
	RUN(test_vllm_host_step);
	RUN(test_llamacpp_free_memory_split);
	RUN(test_llamacpp_free_memory_cap);
	RUN(test_candidates_max_model_len);
	RUN(test_generate_candidates);
	return vf_test_done();
}
