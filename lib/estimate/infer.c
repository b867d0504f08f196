/* infer.c - inference as an engine serves it (infer.h).
 *
 * vLLM, from its source (vllm-project/vllm; facts, no code):
 *  - vllm/v1/worker/gpu_worker.py, determine_available_memory (commit
 *    0012cf691b7e69423244d2b1405f4b6832156e19): the memory for the KV cache
 *    is total_gpu_memory x gpu_memory_utilization less the peak the
 *    caching allocator reached in a profiling forward (weights + the
 *    forward's activations) less what was allocated outside PyTorch (the
 *    CUDA context, NCCL). CUDA graphs are captured afterwards
 *    (compile_or_warm_up_model), from the memory the utilisation leaves.
 *  - the profiling forward runs max_num_batched_tokens tokens, then the
 *    sampler over max_num_seqs rows of fp32 logits; defaults in
 *    vllm/engine/arg_utils.py: 2048 tokens and 256 sequences for the
 *    OpenAI server on cards below 70 GiB or an A100, 8192 and 1024 above.
 *  - vllm/v1/core/kv_cache_utils.py (commit
 *    001cabc1be16a59a70d720ed61a13b678c060a18): one page holds block_size
 *    (16) tokens of one layer's K and V; num_blocks = available //
 *    (page x layers); the maximum concurrency is num_blocks / cdiv(
 *    max_model_len, block_size); check_enough_kv_cache_memory refuses to
 *    start when one max_model_len sequence does not fit ("The model's max
 *    seq len (N) is larger than the maximum number of tokens that can be
 *    stored in KV cache (M)").
 *  - tensor parallel splits the KV heads over the GPUs (a head replicated
 *    when there are fewer heads than GPUs) and the weights; pipeline
 *    parallel splits the layers.
 *
 * transformers generate(): the existing estimate (estimate.c) of a
 * forward over the whole context with the cache, its largest batch the
 * number of users.
 *
 * Decode: one step per generated token reads every weight once (the
 * embedding table only by row) and every user's KV cache, at the
 * device-copy share of the bandwidth (steptime.c's "kernel" efficiency),
 * or takes the FLOPs' time at the GEMM rate when that is longer; eager
 * transformers adds the kernel launches of a one-token forward from the
 * kernel model and takes that forward's own time when longer; vLLM
 * replays CUDA graphs: its kernels per layer at the graph's per-kernel
 * time (steptime.json vllm_decode; the engine's host work is not
 * modelled, an upper bound); llama.cpp likewise (llamacpp_decode), one
 * GPU after another over a layer split. Tensor parallel adds two
 * all-reduces of the hidden states per layer (nccl.c); pipeline parallel
 * passes each token through its stages in turn. Published speeds judge
 * these: tests/fixtures/published/decode.json, tests/unit/test-published.c. */
#include "vramfit/estimate/infer.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/split.h"
#include "nccl.h"
#include "steptime.h"

#define MIB ((double)(1 << 20))
#define GIB (1024.0 * MIB)

const char *vf_engine_name(enum vf_engine e)
{
	return e == VF_ENGINE_VLLM ? "vllm" : e == VF_ENGINE_LLAMACPP ? "llamacpp" : "transformers";
}

bool vf_engine_parse(const char *s, enum vf_engine *out)
{
	if (s && strcmp(s, "vllm") == 0)
		*out = VF_ENGINE_VLLM;
	else if (s && (strcmp(s, "llamacpp") == 0 || strcmp(s, "llama.cpp") == 0)) /* the project's name */
		*out = VF_ENGINE_LLAMACPP;
	else if (s && strcmp(s, "transformers") == 0)
		*out = VF_ENGINE_TRANSFORMERS;
	else
		return false;
	return true;
}

static int64_t head_dim(const struct vf_arch *a)
{
	if (a->head_dim > 0)
		return a->head_dim;
	return a->heads > 0 ? a->hidden / a->heads : 0;
}

double vf_infer_kv_bytes_per_token_layer(const struct vf_arch *a, int tp, double elem_bytes)
{
	if (tp < 1)
		tp = 1;
	if (a->kv_lora_rank > 0) /* MLA: the compressed latent and the rope key, not split by tp */
		return (double)(a->kv_lora_rank + a->qk_rope_dim) * elem_bytes;
	int64_t kvh = a->kv_heads > 0 ? a->kv_heads : a->heads;
	double per_gpu = kvh >= tp ? (double)kvh / tp : 1; /* replicated below one head per GPU */
	return 2.0 * per_gpu * (double)head_dim(a) * elem_bytes;
}

int64_t vf_infer_vllm_blocks(double kv_avail_bytes, double kv_bytes_per_token_layer,
			     int64_t attn_layers, int block_size)
{
	double per_block = kv_bytes_per_token_layer * block_size * (double)attn_layers;
	if (!(kv_avail_bytes > 0) || !(per_block > 0))
		return 0;
	return (int64_t)floor(kv_avail_bytes / per_block);
}

double vf_infer_vllm_concurrency(int64_t blocks, int64_t ctx, int block_size)
{
	if (ctx <= 0 || block_size <= 0)
		return 0;
	int64_t per_seq = (ctx + block_size - 1) / block_size;
	return (double)blocks / (double)per_seq;
}

double vf_infer_decode_step(const struct vf_gpu_spec *gpu, double weights_bytes,
			    double kv_bytes_per_token, double flops_per_token_ctx0,
			    double attn_flops_per_token_per_ctx, int64_t users, double context,
			    double host_seconds, bool *bandwidth_bound)
{
	double bps, flops_rate, launch;
	vf__steptime_decode_rates(gpu, &bps, &flops_rate, &launch);
	if (bandwidth_bound)
		*bandwidth_bound = true;
	if (!(bps > 0) || !(flops_rate > 0) || users < 1)
		return -1;
	double u = (double)users;
	double bytes = weights_bytes + u * kv_bytes_per_token * context;
	double flops = u * (flops_per_token_ctx0 + attn_flops_per_token_per_ctx * context);
	double tb = bytes / bps, tf = flops / flops_rate;
	if (bandwidth_bound)
		*bandwidth_bound = tb >= tf;
	return (tb > tf ? tb : tf) + host_seconds;
}

/* A setup of --mode infer over n tokens of batch b, one GPU. */
static struct vf_setup one_gpu(const struct vf_setup *s, int64_t b, int64_t n)
{
	struct vf_setup r = *s;
	r.batch = b;
	r.seq = n;
	r.target_seq = 0;
	r.gpus = 1;
	r.tp = 1;
	r.pp = 1;
	r.split = VF_SPLIT_NONE;
	r.shard = VF_SHARD_NONE;
	r.grad_accum = 1;
	return r;
}

static void not_modelled(struct vf_infer *r, const char *what)
{
	size_t n = strlen(r->not_modelled);
	snprintf(r->not_modelled + n, sizeof r->not_modelled - n, "%s%s", n ? "; " : "", what);
	r->approximate = true;
}

/* transformers' DynamicCache (src/transformers/cache_utils.py,
 * DynamicLayer.update): each step concatenates the new token's keys and
 * values onto the layer's cache (torch.cat), so the old tensor and the new
 * one, a token longer, are live together for one layer's K (then V): one
 * layer's K or V for every user at ctx on top of the cache. Each of those
 * tensors is above 1 MiB, so the caching allocator rounds it up to a
 * multiple of 2 MiB (c10/cuda/CUDACachingAllocator.cpp, kRoundLarge); the
 * block the previous layer freed is reused by the next layer's larger
 * tensor only within that rounding. StaticCache (StaticLayer) allocates
 * max_cache_len up front (torch.zeros) and writes in place (index_copy_):
 * the estimate at seq = ctx, nothing more. Bytes beyond the static cache. */
static double dynamic_growth(double kv_token_layer, int64_t layers, int64_t ctx, int64_t users)
{
	double one = 0.5 * kv_token_layer * (double)ctx * (double)users; /* K (or V) of one layer */
	double round = 2.0 * MIB;
	double padded = ceil(one / round) * round;
	return padded + 2.0 * (double)layers * (padded - one); /* the transient, the rounding */
}

/* The device peak of s on gpu: by the allocator's replay when o asks
 * (the row's own estimate replays it: its reserve, not the analytic
 * one), else the analytic estimate's. */
static int64_t seq_peak(const struct vf_arch *a, const struct vf_setup *s, const struct vf_gpu_spec *gpu,
			const struct vf_infer_opts *o)
{
	struct vf_estimate e;
	struct vf_error err = {0};
	if (o->replay && vf_estimate_simulate_memo(a, s, gpu, o->alloc, o->memo, &e, NULL, &err) == VF_OK)
		return e.peak_bytes;
	vf_estimate_run(a, s, gpu, &e);
	return e.peak_bytes;
}

/* The largest batch of cs whose peak fits gpu, judged as seq_peak. */
static int64_t seq_max_batch(const struct vf_arch *a, const struct vf_setup *cs, const struct vf_gpu_spec *gpu,
			     const struct vf_infer_opts *o)
{
	int64_t b = o->replay ? vf_estimate_max_batch_simulated(a, cs, gpu, o->alloc, o->memo) : -1;
	return b >= 0 ? b : vf_estimate_max_batch(a, cs, gpu, 0);
}

/* The users whose estimate at ctx plus the DynamicCache's growth fits. */
static int64_t dynamic_cache_users(const struct vf_arch *a, const struct vf_setup *cs,
				   const struct vf_gpu_spec *gpu, const struct vf_infer_opts *o,
				   const struct vf_infer *r)
{
	int64_t b = seq_max_batch(a, cs, gpu, o);
	double vram = (double)vf_estimate_gpu_bytes(gpu);
	for (; b >= 1; b--) {
		struct vf_setup s = *cs;
		s.batch = b;
		if ((double)seq_peak(a, &s, gpu, o) + dynamic_growth(r->kv_bytes_per_token_layer, r->attn_layers,
								       r->ctx, b) <= vram)
			break;
	}
	return b;
}

/* vLLM: the budget, the profiled forward, the blocks and the refusal. */
static void vllm_memory(const struct vf_arch *a, const struct vf_setup *s,
			const struct vf_gpu_spec *gpu, const struct vf_infer_opts *o,
			const struct vf_estimate *prof, struct vf_infer *r)
{
	double total = (double)vf_estimate_gpu_bytes(gpu);
	double util = o->gpu_memory_utilization > 0 ? o->gpu_memory_utilization
						    : VF_VLLM_GPU_MEMORY_UTILIZATION;
	double C = s->precision == VF_PREC_FP32 ? 4 : 2;
	double rows = (double)(r->max_num_seqs < r->max_num_batched_tokens ? r->max_num_seqs
									    : r->max_num_batched_tokens);
	/* the forward's working set splits over tp with the MLP and heads;
	 * the sampler's logits: the model dtype, then fp32 */
	double act = (double)prof->activations_full / r->tp +
		     rows * (double)a->vocab / r->tp * C + rows * (double)a->vocab * 4;
	r->activation_bytes = (int64_t)act;
	r->non_torch_bytes = s->context_bytes >= 0 ? s->context_bytes : vf_estimate_default_context(gpu);
	r->budget_bytes = (int64_t)(total * util);
	double avail = total * util - (double)r->weights_bytes - act - (double)r->non_torch_bytes;
	r->kv_room_bytes = (int64_t)avail;
	r->block_size = VF_VLLM_BLOCK_SIZE;
	r->kv_blocks = vf_infer_vllm_blocks(avail, r->kv_bytes_per_token_layer, r->attn_layers,
					    r->block_size);
	r->kv_cache_bytes = (int64_t)((double)r->kv_blocks * r->block_size * r->kv_bytes_per_token);
	r->max_concurrency = vf_infer_vllm_concurrency(r->kv_blocks, r->ctx, r->block_size);
	/* the blocks' concurrency, but never more than max_num_seqs running */
	r->max_users = (int64_t)floor(r->max_concurrency);
	if (r->max_users > r->max_num_seqs)
		r->max_users = r->max_num_seqs;
	int64_t tokens = r->kv_blocks * r->block_size;
	r->max_ctx = tokens;
	if (r->kv_blocks <= 0) {
		r->fits = false;
		snprintf(r->why, sizeof r->why,
			 "no available memory for the cache blocks: weights, the profiled forward "
			 "and the context take %.2f GiB of the %.2f GiB budget",
			 ((double)r->weights_bytes + act + (double)r->non_torch_bytes) / GIB,
			 total * util / GIB);
	} else if (tokens < r->ctx) {
		r->fits = false;
		snprintf(r->why, sizeof r->why,
			 "the model's max seq len (%lld) is larger than the maximum number of tokens "
			 "that can be stored in KV cache (%lld)",
			 (long long)r->ctx, (long long)tokens);
	} else {
		r->fits = true;
	}
}

/* ---- llama.cpp --------------------------------------------------------
 * ggml's block layouts (ggml/src/ggml-common.h: block_q4_0 = an fp16 scale
 * + 32 nibbles = 18 bytes per 32, block_q8_0 = 34 per 32, block_q4_K =
 * 144 per 256, block_q5_K = 176, block_q6_K = 210) and llama-quantize's
 * mixtures (src/llama-quant.cpp, llama_tensor_get_type_impl, ggml-org/
 * llama.cpp commit 007dbbf3fd17eefe9b47fee45f48f7ba5e62b714): Q4_K_M and
 * Q5_K_M put attn_v and ffn_down in Q6_K in the layers use_more_bits picks
 * (the first and last eighth, and every third between); the output layer
 * (and a tied embedding) goes to Q6_K unless the file is Q8_0; a tensor
 * whose rows do not divide into the type's blocks falls back (Q4_K to
 * Q5_0, Q5_K to Q5_1, Q6_K to Q8_0); norms stay f32. */

enum ggml_t { T_F32, T_F16, T_Q8_0, T_Q6_K, T_Q5_K, T_Q4_K, T_Q4_0, T_Q5_0, T_Q5_1 };

static const struct {
	int block;
	int bytes;
} ggml_types[] = {
	[T_F32] = {1, 4},	[T_F16] = {1, 2},     [T_Q8_0] = {32, 34},
	[T_Q6_K] = {256, 210}, [T_Q5_K] = {256, 176}, [T_Q4_K] = {256, 144},
	[T_Q4_0] = {32, 18},	[T_Q5_0] = {32, 22},  [T_Q5_1] = {32, 24},
};

static const char *const gguf_names[VF_GGUF_COUNT] = {"f16",  "bf16",   "q8_0", "q6_k",
						      "q5_k_m", "q4_k_m", "q4_0"};

const char *vf_gguf_type_name(enum vf_gguf_type t)
{
	return (unsigned)t < VF_GGUF_COUNT ? gguf_names[t] : "?";
}

bool vf_gguf_type_parse(const char *s, enum vf_gguf_type *out)
{
	for (int i = 0; s && i < VF_GGUF_COUNT; i++)
		if (strcmp(s, gguf_names[i]) == 0) {
			*out = (enum vf_gguf_type)i;
			return true;
		}
	return false;
}

bool vf_ggml_cache_parse(const char *s, enum vf_ggml_cache *out)
{
	if (s && strcmp(s, "f16") == 0)
		*out = VF_CACHE_F16;
	else if (s && strcmp(s, "q8_0") == 0)
		*out = VF_CACHE_Q8_0;
	else if (s && strcmp(s, "q4_0") == 0)
		*out = VF_CACHE_Q4_0;
	else
		return false;
	return true;
}

double vf_ggml_cache_bytes(enum vf_ggml_cache c)
{
	enum ggml_t t = c == VF_CACHE_Q8_0 ? T_Q8_0 : c == VF_CACHE_Q4_0 ? T_Q4_0 : T_F16;
	return (double)ggml_types[t].bytes / ggml_types[t].block;
}

static enum ggml_t default_type(enum vf_gguf_type t)
{
	switch (t) {
	case VF_GGUF_Q8_0: return T_Q8_0;
	case VF_GGUF_Q6_K: return T_Q6_K;
	case VF_GGUF_Q5_K_M: return T_Q5_K;
	case VF_GGUF_Q4_K_M: return T_Q4_K;
	case VF_GGUF_Q4_0: return T_Q4_0;
	default: return T_F16; /* f16, bf16: not quantized */
	}
}

static bool use_more_bits(int64_t i, int64_t n)
{
	return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

/* Bytes of a rows x cols tensor in type t, after the shape fallback. */
static double tensor_bytes(enum ggml_t t, double rows, int64_t cols)
{
	if (ggml_types[t].block > 1 && cols % ggml_types[t].block != 0)
		t = t == T_Q4_K ? T_Q5_0 : t == T_Q5_K ? T_Q5_1 : t == T_Q6_K ? T_Q8_0 : t;
	if (ggml_types[t].block > 1 && cols % ggml_types[t].block != 0)
		t = T_F16;
	return rows * (double)cols * ggml_types[t].bytes / ggml_types[t].block;
}

double vf_gguf_layer_bytes(const struct vf_arch *a, enum vf_gguf_type t, int64_t i)
{
	int64_t h = a->hidden, hd = head_dim(a);
	int64_t hq = a->heads * hd, hkv = (a->kv_heads > 0 ? a->kv_heads : a->heads) * hd;
	double f = (double)a->ffn * (a->experts > 1 ? (double)a->experts : 1);
	enum ggml_t d = default_type(t);
	bool mixed = t == VF_GGUF_Q4_K_M || t == VF_GGUF_Q5_K_M;
	enum ggml_t more = mixed && use_more_bits(i, a->layers) ? T_Q6_K : d;
	double b = tensor_bytes(d, (double)hq, h) + tensor_bytes(d, (double)hkv, h) +
		   tensor_bytes(more, (double)hkv, h) + tensor_bytes(d, (double)h, hq);
	b += tensor_bytes(d, f * (a->gated_mlp ? 2 : 1), h) + tensor_bytes(more, (double)h * f / a->ffn, a->ffn);
	return b + 2.0 * (double)h * 4; /* the two norms, f32 */
}

static enum ggml_t output_type(enum vf_gguf_type t)
{
	enum ggml_t d = default_type(t);
	return d == T_F16 || d == T_Q8_0 ? d : T_Q6_K;
}

double vf_gguf_embedding_bytes(const struct vf_arch *a, enum vf_gguf_type t)
{
	enum ggml_t e = a->tied_embeddings ? output_type(t) : default_type(t);
	return tensor_bytes(e, (double)a->vocab, a->hidden);
}

double vf_gguf_output_bytes(const struct vf_arch *a, enum vf_gguf_type t)
{
	double norm = (double)a->hidden * 4;
	return norm + (a->tied_embeddings ? 0 : tensor_bytes(output_type(t), (double)a->vocab, a->hidden));
}

static const char *const split_names[] = {"layer", "row", "none"};

bool vf_llamacpp_split_parse(const char *s, enum vf_llamacpp_split *out)
{
	for (int i = 0; s && i < 3; i++)
		if (strcmp(s, split_names[i]) == 0) {
			*out = (enum vf_llamacpp_split)i;
			return true;
		}
	return false;
}

const char *vf_llamacpp_split_name(enum vf_llamacpp_split m)
{
	return (unsigned)m < 3 ? split_names[m] : "?";
}

/* llama.cpp's --tensor-split (common/arg.cpp): ratios separated by ',' or
 * '/', one per device; at most VF_INFER_MAX_DEVICES, each a finite number
 * from 0 to 1e6, not all 0. */
vf_status vf_llamacpp_tensor_split_parse(const char *s, double *out, int *n, struct vf_error *err)
{
	*n = 0;
	for (int i = 0; i < VF_INFER_MAX_DEVICES; i++)
		out[i] = 0;
	if (!s || !*s || strlen(s) > 256)
		return vf_error_set(err, VF_EUSAGE, "--tensor-split: expected ratios such as 3,1 (at most 256 "
						    "characters)");
	const char *p = s;
	double sum = 0;
	while (*p) {
		char *end;
		double v = strtod(p, &end);
		if (end == p || !isfinite(v) || v < 0 || v > 1e6)
			return vf_error_set(err, VF_EUSAGE, "--tensor-split: '%s': ratio %d is not a number "
							    "from 0 to 1e6", s, *n + 1);
		if (*n >= VF_INFER_MAX_DEVICES)
			return vf_error_set(err, VF_EUSAGE, "--tensor-split: '%s': more than %d ratios", s,
					    VF_INFER_MAX_DEVICES);
		out[(*n)++] = v;
		sum += v;
		p = end;
		if (*p == ',' || *p == '/') {
			p++;
			if (!*p)
				return vf_error_set(err, VF_EUSAGE, "--tensor-split: '%s' ends with a separator", s);
		} else if (*p) {
			return vf_error_set(err, VF_EUSAGE, "--tensor-split: '%s': expected ',' or '/' after "
							    "ratio %d", s, *n);
		}
	}
	if (!(sum > 0))
		return vf_error_set(err, VF_EUSAGE, "--tensor-split: '%s': every ratio is 0", s);
	return VF_OK;
}

/* src/llama-model.cpp, load_tensors (ggml-org/llama.cpp; facts, no code):
 * the split points are the cumulative --tensor-split ratios (default each
 * device's free memory), normalised; i_gpu_start = max(n_layer + 1 - ngl,
 * 0), act = min(ngl, n_layer + 1); layer il (n_layer: the output layer) is
 * on the CPU below i_gpu_start, else on the first device whose split point
 * is above (il - i_gpu_start) / act (std::upper_bound). The token
 * embedding always stays on the CPU. */
int vf_llamacpp_layer_device(int64_t il, int64_t n, int64_t ngl, const double *split, int ndev)
{
	if (ndev < 1 || ngl <= 0)
		return -1;
	if (ndev > VF_INFER_MAX_DEVICES)
		ndev = VF_INFER_MAX_DEVICES;
	int64_t start = n + 1 - ngl > 0 ? n + 1 - ngl : 0;
	int64_t act = ngl < n + 1 ? ngl : n + 1;
	if (il < start || il - start >= act)
		return -1;
	bool given = false;
	for (int i = 0; split && i < ndev; i++)
		given |= split[i] > 0;
	double cum[VF_INFER_MAX_DEVICES], sum = 0;
	for (int i = 0; i < ndev; i++) {
		sum += given ? (split[i] > 0 ? split[i] : 0) : 1;
		cum[i] = sum;
	}
	double x = (double)(il - start) / (double)act;
	for (int i = 0; i < ndev; i++)
		if (cum[i] / sum > x)
			return i;
	return ndev - 1;
}

/* The devices' share of the weights. Row split (ggml-cuda's split buffer
 * type): every matrix's rows over all devices by the ratios, the norms on
 * the layer's device; otherwise the whole layer on its device. */
static void place_weights(const struct vf_arch *a, const struct vf_infer_opts *o, const double *split,
			  int ndev, int d, double lb, double *dev_w)
{
	double norms = 2.0 * (double)a->hidden * 4;
	if (o->split_mode != VF_LCPP_SPLIT_ROW || ndev < 2 || lb <= norms) {
		dev_w[d] += lb;
		return;
	}
	for (int i = 0; i < ndev; i++) /* split: normalised ratios */
		dev_w[i] += (lb - norms) * split[i];
	dev_w[d] += norms;
}

/* Device d's card: its own where the devices differ, else the row's. */
static const struct vf_gpu_spec *device_card(const struct vf_infer_opts *o, const struct vf_gpu_spec *gpu,
					     int d)
{
	return o->device_gpu[d] ? o->device_gpu[d] : gpu;
}

/* The CUDA context on device d (the setup's --context, else the card's). */
static double device_context(const struct vf_setup *s, const struct vf_gpu_spec *card)
{
	return (double)(s->context_bytes >= 0 ? s->context_bytes : vf_estimate_default_context(card));
}

/* Device d's memory for llama.cpp (also into r->device_memory_bytes[d]):
 * the card's, or, when the probe found less free (another process holds
 * some), that free memory and the context it was measured after. */
static double device_memory(const struct vf_setup *s, const struct vf_infer_opts *o,
			    const struct vf_gpu_spec *card, int d, struct vf_infer *r)
{
	double vram = (double)vf_estimate_gpu_bytes(card);
	double room = (double)o->device_free_bytes[d] + device_context(s, card);
	if (o->device_free_bytes[d] > 0 && room < vram)
		vram = room;
	r->device_memory_bytes[d] = (int64_t)vram;
	return vram;
}

/* llama.cpp's split ratios (src/llama-model.cpp load_tensors): the
 * --tensor-split ratios when any is given, else each device's free
 * memory as ggml_backend_dev_memory reports it once the CUDA context
 * exists (the probe's figure when known, else the card less the
 * context); normalised to sum 1 into split[]. */
static void split_ratios(const struct vf_setup *s, const struct vf_gpu_spec *gpu,
			 const struct vf_infer_opts *o, int ndev, double *split)
{
	bool given = false;
	for (int i = 0; i < ndev; i++)
		given |= o->tensor_split[i] > 0;
	double sum = 0;
	for (int d = 0; d < ndev; d++) {
		const struct vf_gpu_spec *card = device_card(o, gpu, d);
		double free_b = o->device_free_bytes[d] > 0
					? (double)o->device_free_bytes[d]
					: (double)vf_estimate_gpu_bytes(card) - device_context(s, card);
		split[d] = given ? (o->tensor_split[d] > 0 ? o->tensor_split[d] : 0) : (free_b > 0 ? free_b : 0);
		sum += split[d];
	}
	for (int d = 0; d < ndev; d++)
		split[d] = sum > 0 ? split[d] / sum : 1.0 / ndev;
}

/* llama.cpp's layers (il == layers: the output) onto the devices or the
 * host: their weights into dev_w[], *host_w and *all, counts into r. */
static void llamacpp_place_layers(const struct vf_arch *a, const struct vf_infer_opts *o, enum vf_gguf_type t,
				  int64_t ngl, int ndev, double *dev_w, double *host_w, double *all,
				  struct vf_infer *r)
{
	int64_t n = a->layers;
	for (int64_t il = 0; il <= n; il++) {
		double lb = il < n ? vf_gguf_layer_bytes(a, t, il) : vf_gguf_output_bytes(a, t);
		*all += lb;
		int d = vf_llamacpp_layer_device(il, n, ngl, r->device_split, ndev);
		if (d < 0) {
			*host_w += lb;
			continue;
		}
		if (il < n) {
			r->device_layers[d]++;
			r->gpu_layers++;
			if (r->device_first[d] < 0)
				r->device_first[d] = il;
		} else {
			r->device_output[d] = r->output_on_gpu = true;
		}
		place_weights(a, o, r->device_split, ndev, d, lb, dev_w);
	}
}

/* Why llama.cpp's layers do not fit on the fullest device, into r->why. */
static void llamacpp_why(int ndev, const double *dev_w, struct vf_infer *r)
{
	int f = r->fullest;
	char where[48] = "";
	if (ndev > 1)
		snprintf(where, sizeof where, " on GPU %d of %d", f, ndev);
	snprintf(r->why, sizeof r->why,
		 "%lld layers%s (%.2f GiB)%s, the compute buffer and one %lld-token KV cache exceed "
		 "the card: lower --n-gpu-layers%s",
		 (long long)r->device_layers[f], r->device_output[f] ? " and the output" : "",
		 dev_w[f] / GIB, where, (long long)r->ctx, ndev > 1 ? " or give more GPUs" : "");
}

/* llama.cpp's memory on each device: its layers (and the output), their
 * KV cache, a compute buffer (the logits where the output layer runs),
 * the CUDA context; the users and context that fit the fullest. */
static void llamacpp_memory(const struct vf_arch *a, const struct vf_setup *s, const struct vf_gpu_spec *gpu,
			    const struct vf_infer_opts *o, enum vf_gguf_type t, int64_t ngl, int ndev,
			    double *dev_w, double *host_w, double *all, struct vf_infer *r)
{
	int64_t n = a->layers;
	*host_w = *all = vf_gguf_embedding_bytes(a, t);
	split_ratios(s, gpu, o, ndev, r->device_split);
	for (int d = 0; d < ndev; d++)
		r->device_first[d] = -1;
	llamacpp_place_layers(a, o, t, ngl, ndev, dev_w, host_w, all, r);
	/* compute buffer: one ubatch's layer activations on each device, its
	 * f32 logits where the output runs (else on the last device) */
	int64_t ub = o->n_ubatch > 0 ? o->n_ubatch : 512;
	double act = (double)ub * ((double)a->hidden * 16 + (double)a->ffn * 8);
	double logits = (double)ub * (double)a->vocab * 4;
	int logits_dev = ndev - 1;
	for (int d = 0; d < ndev; d++)
		if (r->device_output[d])
			logits_dev = d;
	r->non_torch_bytes = (int64_t)device_context(s, gpu);
	double worst = -1;
	r->max_users = -1;
	r->max_ctx = -1;
	for (int d = 0; d < ndev; d++) {
		const struct vf_gpu_spec *card = device_card(o, gpu, d);
		double vram = device_memory(s, o, card, d, r);
		double comp = act + (d == logits_dev ? logits : 0);
		double fixed = dev_w[d] + comp + device_context(s, card);
		double kv_tok = r->kv_bytes_per_token_layer * (double)r->device_layers[d];
		double kv_seq = kv_tok * (double)r->ctx;
		int64_t users = kv_seq > 0 ? (vram > fixed ? (int64_t)floor((vram - fixed) / kv_seq) : 0)
					   : (vram > fixed ? r->users : 0); /* no cache here */
		if (r->max_users < 0 || users < r->max_users)
			r->max_users = users;
		if (kv_tok > 0) {
			int64_t c = vram > fixed ? (int64_t)floor((vram - fixed) / kv_tok) : 0;
			if (r->max_ctx < 0 || c < r->max_ctx)
				r->max_ctx = c;
		}
		double used = fixed + kv_seq * (double)r->users;
		r->device_bytes[d] = (int64_t)used;
		double share = vram > 0 ? used / vram : used;
		if (share > worst) { /* the fullest: the largest share of its card */
			worst = share;
			r->fullest = d;
			r->weights_bytes = (int64_t)dev_w[d];
			r->compute_buffer_bytes = (int64_t)comp;
			r->kv_cache_bytes = (int64_t)(kv_seq * (double)r->users);
		}
	}
	r->fits = r->max_users >= 1;
	double kv_host = r->kv_bytes_per_token_layer * (double)(n - r->gpu_layers) * (double)r->ctx;
	r->host_bytes = (int64_t)(*host_w + kv_host * (double)r->users);
	if (!r->fits)
		llamacpp_why(ndev, dev_w, r);
}

/* llama.cpp's speeds: the prompt's forward on the GPU (ggml copies the
 * host layers' weights over PCIe for a batch); decode: each device's
 * bytes at its bandwidth plus its kernels' time. A layer split runs the
 * devices one after another with a copy of the hidden state between them;
 * a row split runs every matrix on all devices at once (the fullest
 * device's share decides) and synchronises them after each split mat-vec
 * (7 per layer and the output); then the host's bytes at the host's
 * bandwidth. */
static void llamacpp_speed(const struct vf_arch *a, const struct vf_gpu_spec *gpu,
			   const struct vf_infer_opts *o, const struct vf_estimate *te, enum vf_gguf_type t,
			   int ndev, const double *dev_w, double host_w, double nparams, struct vf_infer *r)
{
	int64_t n = a->layers;
	double host_bw = (o->host_bandwidth_gbs > 0 ? o->host_bandwidth_gbs : 50) * 1e9;
	double emb = vf_gguf_embedding_bytes(a, t);
	if (te->step_seconds > 0)
		r->ttft_seconds = te->step_seconds + (r->prompt >= 32 ? (host_w - emb) / vf__steptime_host_bps(gpu) : 0);
	double context = 0.5 * (double)(r->prompt + r->ctx);
	r->running = r->max_users >= 1 && r->users > r->max_users ? r->max_users : r->users;
	double active = a->active_params > 0 ? (double)a->active_params : nparams;
	double attn = 4.0 * (double)a->heads * (double)head_dim(a);
	double layer_s = vf__steptime_llamacpp_layer_s(default_type(t) != T_F16, !o->no_cuda_graphs);
	double sync_s = vf__steptime_llamacpp_sync_s();
	bool bw = true, b = true;
	double tg = 0;
	if (o->split_mode == VF_LCPP_SPLIT_ROW && ndev > 1) {
		/* every device its share at once: the slowest decides */
		double syncs = (7.0 * (double)r->gpu_layers + (r->output_on_gpu ? 1 : 0)) * sync_s;
		for (int d = 0; d < ndev && tg >= 0; d++) {
			double td = vf_infer_decode_step(device_card(o, gpu, d), dev_w[d],
							 r->kv_bytes_per_token_layer * (double)r->gpu_layers,
							 2.0 * active * r->gpu_layers / n * r->device_split[d],
							 attn * (double)r->gpu_layers, r->running, context,
							 (double)r->gpu_layers * layer_s + syncs, &b);
			if (td < 0 || td > tg) {
				tg = td;
				bw = b;
			}
		}
	} else {
		int used = 0;
		for (int d = 0; d < ndev && tg >= 0; d++) {
			if (r->device_layers[d] == 0 && !r->device_output[d])
				continue;
			double ld = (double)r->device_layers[d];
			double td = vf_infer_decode_step(device_card(o, gpu, d), dev_w[d],
							 r->kv_bytes_per_token_layer * ld,
							 2.0 * active * ld / n, attn * ld, r->running, context,
							 ld * layer_s, &b);
			tg = td >= 0 ? tg + td : -1;
			bw = bw && b;
			used++;
		}
		if (tg >= 0 && used > 1)
			tg += (double)(used - 1) * sync_s;
	}
	double th = (host_w - emb + (double)r->running * r->kv_bytes_per_token_layer *
					    (double)(n - r->gpu_layers) * context) / host_bw;
	r->decode_bandwidth_bound = bw;
	r->decode_device_seconds = tg >= 0 ? tg + th : -1;
	/* a build that rebuilds the graph each token: that host work runs
	 * before the token's first kernel, on the step's critical path */
	r->decode_host_work_seconds = o->graph_rebuild ? vf__steptime_llamacpp_graph_build_s(gpu, n) : 0;
	r->decode_host_seconds = r->decode_host_work_seconds;
	r->decode_step_seconds = tg >= 0 ? r->decode_device_seconds + r->decode_host_seconds : -1;
}

/* llama.cpp: the devices' layers, the host's, the KV cache, the speeds. */
static void llamacpp_run(const struct vf_arch *a, const struct vf_setup *s,
			 const struct vf_gpu_spec *gpu, const struct vf_infer_opts *o,
			 const struct vf_estimate *te, struct vf_infer *r)
{
	enum vf_gguf_type t = o->gguf_given ? o->gguf_type : VF_GGUF_Q4_K_M;
	int64_t n = a->layers;
	int64_t ngl = o->ngl_given && o->n_gpu_layers >= 0 ? o->n_gpu_layers : n + 1;
	int ndev = o->split_mode == VF_LCPP_SPLIT_NONE || s->gpus < 2 ? 1 : s->gpus;
	if (ndev > VF_INFER_MAX_DEVICES)
		ndev = VF_INFER_MAX_DEVICES;
	r->devices = ndev;
	r->split_mode = o->split_mode;
	int64_t hkv = (a->kv_heads > 0 ? a->kv_heads : a->heads) * head_dim(a);
	r->kv_bytes_per_token_layer = (double)hkv * (vf_ggml_cache_bytes(o->cache_k) + vf_ggml_cache_bytes(o->cache_v));
	r->kv_bytes_per_token = r->kv_bytes_per_token_layer * (double)n;
	double dev_w[VF_INFER_MAX_DEVICES] = {0}, host_w, all;
	llamacpp_memory(a, s, gpu, o, t, ngl, ndev, dev_w, &host_w, &all, r);
	if (r->gpu_layers < n)
		not_modelled(r, "host memory for the offloaded layers and their KV cache not checked");
	double nparams = 0;
	{
		int64_t h = a->hidden, hd = head_dim(a);
		double per = (double)h * (double)(a->heads * hd) * 2 + (double)h * (double)hkv * 2 +
			     (double)h * (double)a->ffn * (a->gated_mlp ? 3 : 2) * (a->experts > 1 ? a->experts : 1);
		nparams = per * (double)n + (double)a->vocab * (double)h * (a->tied_embeddings ? 1 : 2);
	}
	r->bits_per_weight = nparams > 0 ? 8 * all / nparams : 0;
	if (a->experts > 1)
		not_modelled(r, "llama.cpp MoE: every expert read per token (upper bound)");
	if (a->kv_lora_rank > 0)
		not_modelled(r, "llama.cpp MLA cache: counted as full K and V");
	not_modelled(r, "llama.cpp's CUDA context taken as PyTorch's; compute buffer from the ubatch's logits "
			"and activations; its mat-vec kernels taken at the device-copy bandwidth");
	for (int i = ndev; i < VF_INFER_MAX_DEVICES; i++)
		if (o->tensor_split[i] > 0 && o->split_mode != VF_LCPP_SPLIT_NONE) {
			not_modelled(r, "--tensor-split ratios beyond the GPUs given are ignored (as llama.cpp does)");
			break;
		}
	if (ndev > 1)
		not_modelled(r, "llama.cpp over several GPUs: row split's row rounding and pipeline-parallel "
				"compute buffer copies not modelled");
	llamacpp_speed(a, gpu, o, te, t, ndev, dev_w, host_w, nparams, r);
}

/* The bytes one decode step reads of the weights on one GPU (the
 * embedding table by row; MoE: the experts the step's tokens route to)
 * and its FLOPs per token. */
static void decode_weights(const struct vf_arch *arch, const struct vf_estimate *prof, double C,
			   struct vf_infer *r, double *wread, double *flops0)
{
	/* decode: the weights read each step (the embedding table by row) */
	double per_param = prof->params > 0 ? (double)prof->weights_full / (double)prof->params : C;
	double emb = arch->tied_embeddings ? 0 : (double)arch->vocab * (double)arch->hidden * per_param;
	double active = arch->active_params > 0 ? (double)arch->active_params : (double)prof->params;
	double wparams = (double)prof->params;
	if (arch->experts > 1 && arch->experts_per_token > 0 && arch->experts_per_token < arch->experts) {
		/* MoE: the experts the step's tokens route to, each read once;
		 * uniform routing: a share 1 - (1 - k/E)^users of them */
		double E = (double)arch->experts, k = (double)arch->experts_per_token;
		double eff = (double)(arch->moe_ffn > 0 ? arch->moe_ffn : arch->ffn);
		double ml = (double)(arch->moe_layers >= 0 ? arch->moe_layers : arch->layers);
		double expert = ml * E * (arch->gated_mlp ? 3 : 2) * (double)arch->hidden * eff;
		if (expert > wparams)
			expert = wparams;
		if (arch->active_params <= 0)
			active = wparams - expert * (1 - k / E);
		double u = (double)(r->max_users >= 1 && r->users > r->max_users ? r->max_users : r->users);
		wparams = wparams - expert + expert * (1 - pow(1 - k / E, u));
		not_modelled(r, "MoE routing taken as uniform over the experts");
	}
	*wread = (wparams * per_param - emb) / ((double)r->tp * r->pp);
	*flops0 = 2.0 * active / ((double)r->tp * r->pp);
}

/* vLLM V1's host work of a decode step (steptime.json vllm_decode:
 * EngineCore.step's scheduler, the model runner's input preparation and
 * graph launch, the sampler's token ids back on the host,
 * update_from_output): with synchronous scheduling it adds to the
 * device's step; with async scheduling (the default since early 2026)
 * step N+1 is scheduled and prepared while step N runs, so only the part
 * longer than the device step shows. */
static void vllm_host(const struct vf_gpu_spec *gpu, const struct vf_infer_opts *o, struct vf_infer *r)
{
	double work = vf__steptime_vllm_host_s(gpu, r->running);
	double device = r->decode_device_seconds;
	r->async_scheduling = !o->vllm_sync_scheduling;
	r->decode_host_work_seconds = work;
	r->decode_host_seconds = r->async_scheduling ? (work > device ? work - device : 0) : work;
	r->decode_step_seconds = device + r->decode_host_seconds;
	if (r->tp > 1)
		not_modelled(r, "vLLM's broadcast of each step's scheduler output to the tensor-parallel "
				"workers (shared-memory message queue)");
}

/* vLLM's and transformers' decode step: the bytes and FLOPs of one step
 * at `running` users, tensor parallel's all-reduces, vLLM's replayed
 * graph's kernels, eager transformers' launches and its kernel-model
 * floor. */
static void torch_decode(const struct vf_arch *arch, const struct vf_setup *setup,
			 const struct vf_gpu_spec *gpu, const struct vf_infer_opts *o,
			 const struct vf_estimate *prof, const struct vf__link *link, double C,
			 struct vf_infer *r)
{
	double wread, flops0, hb = (double)arch->hidden * C, lstage = (double)r->attn_layers;
	decode_weights(arch, prof, C, r, &wread, &flops0);
	double attn = 4.0 * (double)arch->heads * (double)head_dim(arch) * (double)r->attn_layers / r->tp;
	double host = 0, eager_step = 0;
	if (o->engine == VF_ENGINE_TRANSFORMERS) {
		/* eager: the host time of a one-token forward, by the kernel
		 * model; and that forward's own time there (its one-row GEMMs at
		 * the kernel model's small-GEMM efficiency), a floor */
		struct vf_setup ds = one_gpu(setup, r->max_users >= 1 && r->users > r->max_users
							    ? r->max_users : r->users, 1);
		struct vf_estimate de;
		vf_estimate_run(arch, &ds, gpu, &de);
		host = de.parts.launch + de.parts.fixed;
		eager_step = de.step_seconds > 0 ? de.step_seconds / ((double)r->tp * r->pp) : 0;
	}
	double context = 0.5 * (double)(r->prompt + r->ctx); /* the mean over the generation */
	/* more users than the cache holds at ctx: the engine queues the rest */
	r->running = r->max_users >= 1 && r->users > r->max_users ? r->max_users : r->users;
	if (r->tp > 1)
		host += vf__nccl_seconds(link, VF__ALL_REDUCE, r->tp, (double)r->running * hb, 2 * lstage);
	if (o->engine == VF_ENGINE_VLLM) /* the replayed graph's kernels (steptime.json vllm_decode) */
		host += lstage * vf__steptime_vllm_layer_s();
	r->decode_step_seconds = vf_infer_decode_step(gpu, wread, r->kv_bytes_per_token, flops0, attn,
						      r->running, context, host, &r->decode_bandwidth_bound);
	if (eager_step > 0 && r->decode_step_seconds > 0) {
		/* the kernel model's forward of one token per user, plus reading
		 * their caches at the device-copy bandwidth, when that is longer */
		double bps, rate, launch;
		vf__steptime_decode_rates(gpu, &bps, &rate, &launch);
		double kv = (double)r->running * r->kv_bytes_per_token * context / bps;
		if (eager_step + kv > r->decode_step_seconds) {
			r->decode_step_seconds = eager_step + kv;
			r->decode_bandwidth_bound = false;
		}
	}
	r->decode_device_seconds = r->decode_step_seconds;
	if (o->engine == VF_ENGINE_VLLM && r->decode_step_seconds > 0)
		vllm_host(gpu, o, r);
}

/* The model spread over the GPUs without tp or pp: accelerate's layer
 * split (--split layers, one card at a time) or ZeRO-3/FSDP sharding;
 * NULL when neither. */
static const char *spread(const struct vf_setup *s)
{
	if (s->gpus <= 1 || s->tp > 1 || s->pp > 1)
		return NULL;
	if (s->split == VF_SPLIT_LAYERS)
		return "a layer split";
	if (s->shard == VF_SHARD_ZERO3 || s->shard == VF_SHARD_FSDP)
		return "zero3/fsdp sharding";
	return NULL;
}

/* Users at --ctx over a spread model. When one card holds the model, its
 * figure stands (each card of the spread holds less: a lower bound, with
 * the dynamic cache's growth); else the spread setup's largest batch of
 * one --ctx forward with its KV cache. */
static int64_t spread_users(const struct vf_arch *arch, const struct vf_setup *setup,
			    const struct vf_gpu_spec *gpu, struct vf_infer *r, int64_t one_card)
{
	struct vf_setup ss = *setup;
	ss.batch = 1;
	ss.seq = r->ctx;
	ss.target_seq = 0;
	char what[400];
	snprintf(what, sizeof what,
		 "%s: max users one card's when it holds the model (a lower bound), else the spread setup's "
		 "largest batch at --ctx (the dynamic cache's growth not counted); TTFT and decode as one GPU's "
		 "kernels over all layers (no parameter gathers)", spread(setup));
	not_modelled(r, what);
	if (one_card >= 1)
		return one_card;
	return setup->split == VF_SPLIT_LAYERS ? vf_split_max_batch(arch, &ss, gpu, 0)
					       : vf_estimate_max_batch(arch, &ss, gpu, 0);
}

/* Users at --ctx over a tp x pp split: the split's largest batch of one
 * --ctx forward with its KV cache, each GPU holding its shard (the row's
 * verdict is the split's); one card's figure said 0 where the split fits
 * (llama2-13b --tp 2 on two rtx-4090). */
static int64_t split_users(const struct vf_arch *arch, const struct vf_setup *setup,
			   const struct vf_gpu_spec *gpu, int64_t ctx)
{
	struct vf_setup ss = *setup;
	ss.batch = 1;
	ss.seq = ctx;
	ss.target_seq = 0;
	return vf_split_max_batch(arch, &ss, gpu, 0);
}

/* The request as the engine resolves it: the context (vLLM the model's
 * max positions, llama.cpp's n_ctx 4096, transformers the prompt), the
 * prompt within it, vLLM's batch limits; and the KV cache per token. */
static void resolve_request(const struct vf_arch *arch, const struct vf_setup *setup,
			    const struct vf_gpu_spec *gpu, const struct vf_infer_opts *o, struct vf_infer *r)
{
	if (o->engine == VF_ENGINE_VLLM)
		r->ctx = o->ctx > 0 ? o->ctx : arch->max_positions > 0 ? arch->max_positions : setup->seq;
	else if (o->engine == VF_ENGINE_LLAMACPP) /* llama.cpp's default n_ctx */
		r->ctx = o->ctx > 0 ? o->ctx : 4096;
	else
		r->ctx = o->ctx > 0 ? o->ctx : setup->seq;
	r->prompt = setup->seq < r->ctx ? setup->seq : r->ctx;
	bool big = gpu && gpu->memory_mib >= 70 * 1024 && !strstr(gpu->id, "a100");
	r->max_num_batched_tokens = o->max_num_batched_tokens > 0 ? o->max_num_batched_tokens
				    : big ? 8192 : 2048;
	r->max_num_seqs = o->max_num_seqs > 0 ? o->max_num_seqs : big ? 1024 : 256;

	/* the KV cache per token */
	double C = setup->precision == VF_PREC_FP32 ? 4 : 2;
	double kv_elem = o->engine == VF_ENGINE_VLLM && o->kv_fp8 ? 1 : C;
	int64_t layers = arch->attn_layers >= 0 && arch->ssm_layers > 0 ? arch->attn_layers : arch->layers;
	r->attn_layers = (layers + r->pp - 1) / r->pp;
	r->kv_bytes_per_token_layer = vf_infer_kv_bytes_per_token_layer(arch, r->tp, kv_elem);
	r->kv_bytes_per_token = r->kv_bytes_per_token_layer * (double)r->attn_layers;
	if (arch->ssm_layers > 0)
		not_modelled(r, "the SSM layers' recurrent state (not paged)");
	if (arch->sliding_window > 0)
		not_modelled(r, "sliding-window layers counted as full attention");
	if (arch->decoder_layers > 0 || arch->encoder)
		not_modelled(r, "encoder(-decoder) models: the decoder's cache alone");
	if (o->engine != VF_ENGINE_VLLM && (r->tp > 1 || r->pp > 1))
		not_modelled(r, "transformers or llama.cpp over several GPUs: one GPU's share by the split");
}

/* transformers (and llama.cpp before its own placement): the users whose
 * --ctx forward with its KV cache fits, on one card or the spread. */
static void torch_memory(const struct vf_arch *arch, const struct vf_setup *setup,
			 const struct vf_gpu_spec *gpu, const struct vf_infer_opts *o, struct vf_infer *r)
{
	struct vf_setup cs = one_gpu(setup, 1, r->ctx);
	r->max_users = gpu ? seq_max_batch(arch, &cs, gpu, o) : 0;
	if (o->engine == VF_ENGINE_TRANSFORMERS && !o->static_cache && gpu)
		r->max_users = dynamic_cache_users(arch, &cs, gpu, o, r);
	if (gpu && spread(setup))
		r->max_users = spread_users(arch, setup, gpu, r, r->max_users);
	else if (gpu && (setup->tp > 1 || setup->pp > 1))
		r->max_users = split_users(arch, setup, gpu, r->ctx);
	if (o->engine == VF_ENGINE_TRANSFORMERS && !o->static_cache)
		r->kv_growth_bytes = (int64_t)dynamic_growth(r->kv_bytes_per_token_layer, r->attn_layers,
							     r->ctx, r->users);
	r->fits = r->max_users >= 1;
	r->kv_cache_bytes = (int64_t)(r->kv_bytes_per_token * (double)r->ctx * (double)r->users);
	if ((!r->fits || r->ctx > r->prompt) && gpu && !spread(setup) && setup->tp <= 1 && setup->pp <= 1) {
		/* one sequence on one card (the row's verdict and headroom when it
		 * does not fit or is longer than the prompt's forward the memory
		 * table shows); tp/pp: not modelled */
		r->one_peak_bytes = seq_peak(arch, &cs, gpu, o);
		if (o->engine == VF_ENGINE_TRANSFORMERS && !o->static_cache)
			r->one_peak_bytes += (int64_t)dynamic_growth(r->kv_bytes_per_token_layer, r->attn_layers,
								     r->ctx, 1);
	}
	if (!r->fits)
		snprintf(r->why, sizeof r->why,
			 "one sequence of %lld tokens does not fit: weights, its KV cache and the "
			 "forward's working set exceed the card",
			 (long long)r->ctx);
	if (o->engine == VF_ENGINE_TRANSFORMERS && r->fits && r->users > 1 && gpu && !spread(setup) &&
	    setup->tp <= 1 && setup->pp <= 1) {
		/* generate() decodes its batch together: the users' sequences
		 * of ctx at once, each with its KV cache (no engine queues them);
		 * more than max_users do not fit */
		struct vf_setup us = one_gpu(setup, r->users, r->ctx);
		r->users_peak_bytes = seq_peak(arch, &us, gpu, o);
		if (!o->static_cache)
			r->users_peak_bytes += (int64_t)dynamic_growth(r->kv_bytes_per_token_layer, r->attn_layers,
								       r->ctx, r->users);
		if (r->users > r->max_users)
			snprintf(r->why, sizeof r->why,
			 "%lld sequences of %lld tokens at once do not fit: weights, their KV cache and the "
			 "forward's working set exceed the card (generate() decodes its batch together); "
			 "at most %lld do",
			 (long long)r->users, (long long)r->ctx, (long long)r->max_users);
	}
}

/* The speeds once the step is known: none when nothing runs. */
static void finish_speeds(struct vf_infer *r)
{
	if (!r->fits) /* nothing runs: no speeds */
		r->ttft_seconds = r->decode_step_seconds = -1;
	if (r->decode_step_seconds > 0) {
		r->decode_tokens_per_second_per_user = 1.0 / r->decode_step_seconds;
		r->decode_tokens_per_second_total = (double)r->running / r->decode_step_seconds;
	}
}

/* vLLM's and transformers' speeds: TTFT (the prompt's forward split tp
 * ways, tensor parallel's all-reduces of the hidden states after the
 * attention and the MLP of every layer over the link) and the decode step
 * (a token passes the pipeline's stages one after another; the engine's
 * host work once a step). */
static void torch_speeds(const struct vf_arch *arch, const struct vf_setup *setup,
			 const struct vf_gpu_spec *gpu, const struct vf_infer_opts *o,
			 const struct vf_estimate *prof, const struct vf_estimate *te, struct vf_infer *r)
{
	double C = setup->precision == VF_PREC_FP32 ? 4 : 2;
	struct vf__link link;
	if (r->tp > 1)
		vf__nccl_link(gpu, r->tp, &link);
	double hb = (double)arch->hidden * C, lstage = (double)r->attn_layers;
	if (te->step_seconds > 0)
		r->ttft_seconds = te->step_seconds / r->tp +
				  (r->tp > 1 ? vf__nccl_seconds(&link, VF__ALL_REDUCE, r->tp,
								(double)r->prompt * hb, 2 * lstage * r->pp)
					     : 0);
	torch_decode(arch, setup, gpu, o, prof, &link, C, r);
	if (r->decode_step_seconds > 0) {
		r->decode_device_seconds *= r->pp;
		r->decode_step_seconds = r->decode_device_seconds + r->decode_host_seconds;
	}
}

vf_status vf_infer_run(const struct vf_arch *arch, const struct vf_setup *setup,
		       const struct vf_gpu_spec *gpu, const struct vf_infer_opts *o,
		       struct vf_infer *r, struct vf_error *err)
{
	memset(r, 0, sizeof *r);
	r->engine = o->engine;
	r->tp = setup->tp > 1 ? setup->tp : 1;
	r->pp = setup->pp > 1 ? setup->pp : 1;
	r->kv_blocks = -1;
	r->max_ctx = -1;
	r->ttft_seconds = r->decode_step_seconds = -1;
	r->users = o->users > 0 ? o->users : 1;
	if (setup->mode != VF_MODE_INFER)
		return vf_error_set(err, VF_EUSAGE, "--engine, --ctx and --users apply to --mode infer");
	if (arch->layers <= 0 || arch->hidden <= 0 || arch->heads <= 0 || arch->ffn <= 0)
		return vf_error_set(err, VF_ERR, "inference: the model has no layers, hidden size or heads");
	resolve_request(arch, setup, gpu, o, r);

	/* the weights (and the profiling forward) from the estimate */
	struct vf_setup ps = one_gpu(setup, 1, o->engine == VF_ENGINE_VLLM ? r->max_num_batched_tokens
									 : r->prompt);
	struct vf_estimate prof;
	vf_estimate_run(arch, &ps, gpu, &prof);
	r->weights_bytes = (int64_t)((double)prof.weights_full / ((double)r->tp * r->pp));
	if (o->engine == VF_ENGINE_VLLM) {
		vllm_memory(arch, setup, gpu, o, &prof, r);
		not_modelled(r, "vLLM's host work per step from one host-bound measurement (Llama 3.2 1B, "
				"steptime.json vllm_decode), its per-sequence part from update_from_output alone; "
				"small-batch GEMM efficiency taken as the device-copy share");
	} else {
		torch_memory(arch, setup, gpu, o, r);
	}

	/* TTFT: the prompt's forward by the kernel model */
	struct vf_setup ts = one_gpu(setup, 1, r->prompt);
	struct vf_estimate te;
	vf_estimate_run(arch, &ts, gpu, &te);
	if (o->engine == VF_ENGINE_LLAMACPP)
		llamacpp_run(arch, setup, gpu, o, &te, r);
	else
		torch_speeds(arch, setup, gpu, o, &prof, &te, r);
	finish_speeds(r);
	return VF_OK;
}

/* ---- the ways to serve (fit --mode infer) ------------------------------- */

static bool serves(const struct vf_infer *r, const struct vf_infer_opts *o)
{
	return r->fits && r->max_users >= (o->users > 0 ? o->users : 1) && r->decode_step_seconds > 0;
}

/* Fastest decode per user first; on a tie, fewer GPUs. */
static int cand_cmp(const void *x, const void *y)
{
	const struct vf_infer_candidate *a = x, *b = y;
	double ta = a->r.decode_tokens_per_second_per_user, tb = b->r.decode_tokens_per_second_per_user;
	if (ta != tb)
		return ta > tb ? -1 : 1;
	return a->gpus < b->gpus ? -1 : a->gpus > b->gpus ? 1 : 0;
}

/* One vLLM option: at o->ctx; without it, where the model's own
 * max_model_len does not fit one sequence (vLLM refuses: "Try increasing
 * `gpu_memory_utilization` or decreasing `max_model_len`", with its
 * estimated maximum model length, vllm/v1/core/kv_cache_utils.py), at the
 * longest max_model_len whose blocks hold o->users sequences: whole
 * blocks, floor(blocks / users) x block_size tokens. */
static bool vllm_option(const struct vf_arch *a, const struct vf_setup *s, const struct vf_gpu_spec *gpu,
			struct vf_infer_opts *vo, const struct vf_infer_opts *o, struct vf_infer_candidate *c)
{
	struct vf_error err = {0};
	c->max_model_len = 0;
	if (vf_infer_run(a, s, gpu, vo, &c->r, &err) != VF_OK)
		return false;
	if (serves(&c->r, o))
		return true;
	int64_t users = o->users > 0 ? o->users : 1;
	if (o->ctx > 0 || c->r.kv_blocks <= 0 || c->r.fits || users > c->r.max_num_seqs)
		return false; /* the user's --ctx, or no room for any sequence */
	int64_t len = c->r.kv_blocks / users * c->r.block_size;
	if (len < c->r.block_size || len >= c->r.ctx)
		return false;
	vo->ctx = len;
	if (vf_infer_run(a, s, gpu, vo, &c->r, &err) != VF_OK || !serves(&c->r, o))
		return false;
	c->max_model_len = len;
	return true;
}

static int vllm_candidates(const struct vf_arch *a, const struct vf_setup *base,
			   const struct vf_gpu_spec *gpu, int gpus, const struct vf_infer_opts *o,
			   struct vf_infer_candidate *out, int max)
{
	static const enum vf_quant quants[] = {VF_QUANT_NONE, VF_QUANT_FP8, VF_QUANT_INT4};
	static const char *const qwords[] = {"bf16", "fp8", "int4"};
	int n = 0;
	int64_t kvh = a->kv_heads > 0 ? a->kv_heads : a->heads;
	for (int tp = 1; tp <= 8 && tp <= gpus; tp *= 2) {
		if (a->heads % tp != 0 || (kvh >= tp && kvh % tp != 0))
			continue; /* vLLM splits whole heads */
		for (int q = 0; q < 3; q++)
			for (int kv = 0; kv < 2 && n < max; kv++) {
				struct vf_setup s = *base;
				s.tp = (int16_t)tp;
				s.pp = 1;
				s.quant = quants[q];
				struct vf_infer_opts vo = *o;
				vo.engine = VF_ENGINE_VLLM;
				vo.kv_fp8 = kv == 1;
				struct vf_infer_candidate *c = &out[n];
				if (!vllm_option(a, &s, gpu, &vo, o, c))
					continue;
				c->engine = VF_ENGINE_VLLM;
				c->gpus = tp;
				char len[48] = "";
				if (c->max_model_len > 0)
					snprintf(len, sizeof len, ", max_model_len %" PRId64, c->max_model_len);
				snprintf(c->what, sizeof c->what, "vllm%s%.0d, %s weights%s%s", tp > 1 ? " tp " : "",
					 tp > 1 ? tp : 0, qwords[q], kv ? ", fp8 KV" : "", len);
				snprintf(c->gives_up, sizeof c->gives_up, "%s%s%s", q == 2 ? "4-bit weights" : q == 1 ? "8-bit weights" : "",
					 q && kv ? "; " : "", kv ? "fp8 KV cache" : "");
				if (c->max_model_len > 0)
					snprintf(c->gives_up + strlen(c->gives_up), sizeof c->gives_up - strlen(c->gives_up),
						 "%scontext %" PRId64 " of %" PRId64 " tokens", c->gives_up[0] ? "; " : "",
						 c->max_model_len, a->max_positions);
				n++;
			}
	}
	return n;
}

/* One llama.cpp option over `ndev` GPUs (a layer split when more than
 * one): every layer and the output on the GPUs, else the most layers that
 * fit with at least one on a GPU. False when none serves. */
static bool llamacpp_option(const struct vf_arch *a, const struct vf_setup *base,
			    const struct vf_gpu_spec *gpu, const struct vf_infer_opts *o,
			    enum vf_gguf_type type, int ndev, struct vf_infer_candidate *c)
{
	struct vf_infer_opts lo = *o;
	lo.engine = VF_ENGINE_LLAMACPP;
	lo.gguf_type = type;
	lo.gguf_given = true;
	lo.ngl_given = true;
	lo.split_mode = VF_LCPP_SPLIT_LAYER;
	struct vf_setup s = *base;
	s.gpus = (int16_t)ndev;
	struct vf_error err = {0};
	int64_t ngl = a->layers + 1;
	for (; ngl >= 1; ngl--) {
		lo.n_gpu_layers = ngl;
		if (vf_infer_run(a, &s, gpu, &lo, &c->r, &err) == VF_OK && c->r.gpu_layers >= 1 &&
		    serves(&c->r, o))
			break;
	}
	if (ngl < 1)
		return false;
	int64_t L = a->layers;
	bool offload = c->r.gpu_layers < L;
	c->engine = VF_ENGINE_LLAMACPP;
	c->gpus = ndev;
	char split[48] = "";
	if (ndev > 1)
		snprintf(split, sizeof split, ", layer split over %d GPUs", ndev);
	if (!offload)
		snprintf(c->what, sizeof c->what, "llamacpp %s%s", vf_gguf_type_name(type), split);
	else
		snprintf(c->what, sizeof c->what, "llamacpp %s, %lld of %lld layers on the GPU%s%s",
			 vf_gguf_type_name(type), (long long)c->r.gpu_layers, (long long)L, ndev > 1 ? "s" : "",
			 split);
	snprintf(c->gives_up, sizeof c->gives_up, "%s%s%s", type == VF_GGUF_F16 ? "" : "quantized weights",
		 type != VF_GGUF_F16 && offload ? "; " : "", offload ? "layers in host memory (slow)" : "");
	return true;
}

/* llama.cpp with each GGUF type on one GPU, and split over all `gpus`
 * (--split-mode layer, llama.cpp's default) where one GPU would offload. */
static int llamacpp_candidates(const struct vf_arch *a, const struct vf_setup *base,
			       const struct vf_gpu_spec *gpu, int gpus, const struct vf_infer_opts *o,
			       struct vf_infer_candidate *out, int max)
{
	static const enum vf_gguf_type types[] = {VF_GGUF_F16, VF_GGUF_Q8_0, VF_GGUF_Q6_K,
						  VF_GGUF_Q5_K_M, VF_GGUF_Q4_K_M, VF_GGUF_Q4_0};
	int n = 0;
	for (int i = 0; i < 6 && n < max; i++) {
		bool one = llamacpp_option(a, base, gpu, o, types[i], 1, &out[n]);
		bool whole = one && out[n].r.gpu_layers >= a->layers && out[n].r.output_on_gpu;
		n += one;
		if (gpus > 1 && !whole && n < max)
			n += llamacpp_option(a, base, gpu, o, types[i], gpus, &out[n]);
	}
	return n;
}

int vf_infer_candidates(const struct vf_arch *arch, const struct vf_setup *setup,
			const struct vf_gpu_spec *gpu, int gpus, const struct vf_infer_opts *o,
			struct vf_infer_candidate *out, int max)
{
	int n = 0;
	if (gpus < 1)
		gpus = 1;
	struct vf_setup base = *setup;
	base.mode = VF_MODE_INFER;
	base.split = VF_SPLIT_NONE;
	base.gpus = 1;
	if (o->engine != VF_ENGINE_LLAMACPP)
		n += vllm_candidates(arch, &base, gpu, gpus, o, out + n, max - n);
	if (o->engine != VF_ENGINE_VLLM && n < max)
		n += llamacpp_candidates(arch, &base, gpu, gpus, o, out + n, max - n);
	qsort(out, (size_t)n, sizeof *out, cand_cmp);
	return n;
}

/* One transformers generate() option: `quant` weights on one card, or
 * over `ndev` cards as accelerate's device_map layer split (whole layers
 * in order, one card working at a time). False when it does not serve. */
static bool generate_option(const struct vf_arch *a, const struct vf_setup *base, const struct vf_gpu_spec *gpu,
			    const struct vf_infer_opts *o, enum vf_quant quant, int ndev,
			    struct vf_infer_candidate *c)
{
	static const char *const qwords[VF_QUANT_COUNT] = {"bf16", "int8 (bitsandbytes)", "int4", "nf4 (bitsandbytes)",
							  "fp8"};
	struct vf_setup s = *base;
	s.quant = quant;
	if (ndev > 1) {
		s.gpus = ndev;
		s.split = VF_SPLIT_LAYERS;
		s.shard = VF_SHARD_NONE;
	}
	struct vf_infer_opts go = *o;
	go.engine = VF_ENGINE_TRANSFORMERS;
	struct vf_error err = {0};
	c->max_model_len = 0;
	if (vf_infer_run(a, &s, gpu, &go, &c->r, &err) != VF_OK || !serves(&c->r, o))
		return false;
	c->engine = VF_ENGINE_TRANSFORMERS;
	c->gpus = ndev;
	char split[64] = "";
	if (ndev > 1)
		snprintf(split, sizeof split, ", layer split over %d GPUs", ndev);
	snprintf(c->what, sizeof c->what, "transformers %s%s", qwords[quant], split);
	snprintf(c->gives_up, sizeof c->gives_up, "%s%s%s",
		 quant == VF_QUANT_INT8 ? "8-bit weights" : quant == VF_QUANT_NF4 ? "4-bit weights" : "",
		 quant != VF_QUANT_NONE && ndev > 1 ? "; " : "", ndev > 1 ? "one GPU works at a time" : "");
	return true;
}

int vf_infer_generate_candidates(const struct vf_arch *arch, const struct vf_setup *setup,
				 const struct vf_gpu_spec *gpu, int gpus, const struct vf_infer_opts *o,
				 struct vf_infer_candidate *out, int max)
{
	static const enum vf_quant quants[] = {VF_QUANT_NONE, VF_QUANT_INT8, VF_QUANT_NF4};
	struct vf_setup base = *setup;
	base.mode = VF_MODE_INFER;
	base.split = VF_SPLIT_NONE;
	base.tp = base.pp = 1;
	base.gpus = 1;
	base.shard = VF_SHARD_NONE;
	int n = 0, most = gpus > 1 ? gpus : 8; /* a kind without a count: up to a node's 8 */
	for (int q = 0; q < 3 && n < max; q++) {
		bool one = generate_option(arch, &base, gpu, o, quants[q], 1, &out[n]);
		/* else the fewest cards whose layer split serves */
		for (int k = 2; !one && k <= most && n < max; k++)
			one = generate_option(arch, &base, gpu, o, quants[q], k, &out[n]);
		n += one;
	}
	qsort(out, (size_t)n, sizeof *out, cand_cmp);
	return n;
}

/* One point of the sweep at context c. */
static void sweep_point(const struct vf_arch *a, const struct vf_setup *setup, const struct vf_gpu_spec *gpu,
			const struct vf_infer_opts *o, int64_t c, cJSON *ctxs, cJSON *seq, cJSON *users,
			double *budget)
{
	struct vf_infer_opts p = *o;
	p.ctx = c;
	struct vf_setup s = *setup;
	if (s.seq > c)
		s.seq = c; /* the prompt within the context */
	struct vf_infer r;
	struct vf_error err = {0};
	if (vf_infer_run(a, &s, gpu, &p, &r, &err) != VF_OK)
		return;
	double per = r.kv_bytes_per_token * (double)c;
	if (r.engine == VF_ENGINE_VLLM) {
		per = r.kv_bytes_per_token * (double)r.block_size * ceil((double)c / r.block_size);
		*budget = (double)r.kv_blocks * r.block_size * r.kv_bytes_per_token;
	} else if (r.engine == VF_ENGINE_LLAMACPP && r.max_ctx >= 0) {
		*budget = (double)r.max_ctx * r.kv_bytes_per_token_layer * (double)r.gpu_layers;
	}
	cJSON_AddItemToArray(ctxs, cJSON_CreateNumber((double)c));
	cJSON_AddItemToArray(seq, cJSON_CreateNumber(per));
	cJSON_AddItemToArray(users, cJSON_CreateNumber((double)(r.max_users > 0 ? r.max_users : 0)));
}

cJSON *vf_infer_sweep_json(const struct vf_arch *arch, const struct vf_setup *setup,
			   const struct vf_gpu_spec *gpu, const struct vf_infer_opts *o, int64_t ctx,
			   int64_t limit)
{
	cJSON *out = cJSON_CreateObject();
	cJSON *ctxs = cJSON_AddArrayToObject(out, "contexts");
	cJSON *seq = cJSON_AddArrayToObject(out, "kv_bytes_per_sequence");
	cJSON *users = cJSON_AddArrayToObject(out, "max_users");
	double budget = -1;
	bool done = ctx <= 0;
	for (int64_t c = 512; c <= limit && c <= (1 << 24); c *= 2) {
		if (!done && ctx < c) {
			sweep_point(arch, setup, gpu, o, ctx, ctxs, seq, users, &budget);
			done = true;
		}
		sweep_point(arch, setup, gpu, o, c, ctxs, seq, users, &budget);
		done = done || ctx == c;
	}
	if (!done)
		sweep_point(arch, setup, gpu, o, ctx, ctxs, seq, users, &budget);
	if (budget >= 0)
		cJSON_AddNumberToObject(out, "kv_budget_bytes", budget);
	else
		cJSON_AddNullToObject(out, "kv_budget_bytes");
	return out;
}

/* llama.cpp's offload and its devices, into o. */
static void infer_llamacpp_json(cJSON *o, const struct vf_infer *r)
{
	cJSON_AddNumberToObject(o, "gpu_layers", (double)r->gpu_layers);
	cJSON_AddBoolToObject(o, "output_on_gpu", r->output_on_gpu);
	cJSON_AddNumberToObject(o, "host_bytes", (double)r->host_bytes);
	cJSON_AddNumberToObject(o, "compute_buffer_bytes", (double)r->compute_buffer_bytes);
	cJSON_AddNumberToObject(o, "bits_per_weight", r->bits_per_weight);
	cJSON_AddStringToObject(o, "split_mode", vf_llamacpp_split_name(r->devices > 1 ? r->split_mode
										  : VF_LCPP_SPLIT_NONE));
	cJSON *dv = cJSON_AddArrayToObject(o, "devices");
	for (int d = 0; d < r->devices; d++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "layers", (double)r->device_layers[d]);
		if (r->device_first[d] >= 0)
			cJSON_AddNumberToObject(e, "first_layer", (double)r->device_first[d]);
		else
			cJSON_AddNullToObject(e, "first_layer");
		cJSON_AddBoolToObject(e, "output", r->device_output[d]);
		cJSON_AddNumberToObject(e, "bytes", (double)r->device_bytes[d]);
		cJSON_AddNumberToObject(e, "split", r->device_split[d]);
		cJSON_AddItemToArray(dv, e);
	}
}

/* Time to first token and decode speeds (null when not estimated). */
static void infer_speed_json(cJSON *o, const struct vf_infer *r)
{
	if (r->ttft_seconds > 0)
		cJSON_AddNumberToObject(o, "ttft_seconds", r->ttft_seconds);
	else
		cJSON_AddNullToObject(o, "ttft_seconds");
	if (r->decode_step_seconds > 0) {
		cJSON_AddNumberToObject(o, "decode_tokens_per_second_per_user",
					r->decode_tokens_per_second_per_user);
		cJSON_AddNumberToObject(o, "decode_tokens_per_second_total",
					r->decode_tokens_per_second_total);
		cJSON_AddStringToObject(o, "decode_bound", r->decode_bandwidth_bound ? "bandwidth" : "compute");
		/* the decode step as its parts: the GPU's time and the engine's
		 * exposed host time (vLLM), and the host work behind the latter */
		cJSON_AddNumberToObject(o, "decode_step_seconds", r->decode_step_seconds);
		cJSON_AddNumberToObject(o, "decode_device_seconds", r->decode_device_seconds);
		cJSON_AddNumberToObject(o, "decode_host_seconds", r->decode_host_seconds);
		if (r->engine == VF_ENGINE_VLLM) {
			cJSON_AddNumberToObject(o, "decode_host_work_seconds", r->decode_host_work_seconds);
			cJSON_AddStringToObject(o, "scheduling", r->async_scheduling ? "async" : "sync");
		}
	} else {
		cJSON_AddNullToObject(o, "decode_tokens_per_second_per_user");
		cJSON_AddNullToObject(o, "decode_tokens_per_second_total");
	}
}

cJSON *vf_infer_to_json(const struct vf_infer *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "engine", vf_engine_name(r->engine));
	cJSON_AddNumberToObject(o, "ctx", (double)r->ctx);
	cJSON_AddNumberToObject(o, "prompt_tokens", (double)r->prompt);
	cJSON_AddNumberToObject(o, "users", (double)r->users);
	cJSON_AddNumberToObject(o, "running_users", (double)r->running);
	cJSON_AddNumberToObject(o, "tensor_parallel", r->tp);
	cJSON_AddNumberToObject(o, "pipeline_parallel", r->pp);
	cJSON_AddNumberToObject(o, "kv_bytes_per_token", r->kv_bytes_per_token);
	cJSON_AddNumberToObject(o, "kv_bytes_per_token_layer", r->kv_bytes_per_token_layer);
	cJSON_AddNumberToObject(o, "kv_cache_bytes", (double)r->kv_cache_bytes);
	if (r->engine == VF_ENGINE_VLLM) {
		cJSON_AddNumberToObject(o, "kv_blocks", (double)r->kv_blocks);
		cJSON_AddNumberToObject(o, "block_size", r->block_size);
		cJSON_AddNumberToObject(o, "max_concurrency", r->max_concurrency);
		cJSON_AddNumberToObject(o, "budget_bytes", (double)r->budget_bytes);
		cJSON_AddNumberToObject(o, "kv_room_bytes", (double)r->kv_room_bytes);
		cJSON_AddNumberToObject(o, "profile_activation_bytes", (double)r->activation_bytes);
		cJSON_AddNumberToObject(o, "non_torch_bytes", (double)r->non_torch_bytes);
		cJSON_AddNumberToObject(o, "max_num_batched_tokens", (double)r->max_num_batched_tokens);
		cJSON_AddNumberToObject(o, "max_num_seqs", (double)r->max_num_seqs);
	} else {
		cJSON_AddNullToObject(o, "kv_blocks");
	}
	if (r->engine == VF_ENGINE_TRANSFORMERS) {
		cJSON_AddStringToObject(o, "kv_cache", r->kv_growth_bytes > 0 ? "dynamic" : "static");
		cJSON_AddNumberToObject(o, "kv_growth_bytes", (double)r->kv_growth_bytes);
	}
	if (r->engine == VF_ENGINE_LLAMACPP)
		infer_llamacpp_json(o, r);
	cJSON_AddNumberToObject(o, "weights_bytes", (double)r->weights_bytes);
	cJSON_AddNumberToObject(o, "max_users", (double)r->max_users);
	if (r->max_ctx >= 0)
		cJSON_AddNumberToObject(o, "max_ctx", (double)r->max_ctx);
	else
		cJSON_AddNullToObject(o, "max_ctx");
	cJSON_AddBoolToObject(o, "fits", r->fits);
	if (r->users_peak_bytes > 0) /* --users sequences of ctx at once (transformers, one GPU) */
		cJSON_AddNumberToObject(o, "users_peak_bytes", (double)r->users_peak_bytes);
	if (!r->fits || (r->users_peak_bytes > 0 && r->users > r->max_users))
		cJSON_AddStringToObject(o, "refusal", r->why);
	infer_speed_json(o, r);
	cJSON_AddBoolToObject(o, "approximate", r->approximate);
	if (r->approximate)
		cJSON_AddStringToObject(o, "not_modelled", r->not_modelled);
	return o;
}
