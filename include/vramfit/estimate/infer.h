/* infer.h - inference as people serve it (lib/estimate/infer.c): the KV
 * cache, how many sequences of a context length run at once, time to
 * first token and decode tokens/s, for the engine that serves the model:
 *
 *   transformers  generate(): the KV cache of every user grows to --ctx on
 *                 top of the weights; the largest batch that fits is the
 *                 number of users (vf_estimate_max_batch at seq = ctx).
 *   vllm          gpu_memory_utilization of the card less the weights, the
 *                 profiled forward of max_num_batched_tokens and the
 *                 memory outside PyTorch is the paged KV cache, cut into
 *                 blocks of 16 tokens; it refuses to start when one
 *                 sequence of max_model_len (--ctx) does not fit.
 *   llamacpp      GGUF weights as llama-quantize lays them out (a file type:
 *                 each tensor's ggml type and its block bytes), the last
 *                 --n-gpu-layers layers (the output layer counted as the
 *                 last) on the GPUs, split over --gpu ID:N by layer or by
 *                 row as llama.cpp's load_tensors places them, the rest in
 *                 host memory read at the host's bandwidth; the KV cache
 *                 of --ctx per user in --cache-type-k/v on each layer's
 *                 GPU, and a compute buffer per GPU.
 *
 * Speeds: prefill (TTFT) by the kernel model of steptime.c over the
 * prompt; decode bandwidth-bound: each step reads the weights once and
 * every user's KV cache, at the device-copy share of the bandwidth, plus
 * the engine's kernels' device time, or compute-bound when the batch is
 * large. Allocates nothing. */
#ifndef VRAMFIT_INFER_H
#define VRAMFIT_INFER_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/arch.h"
#include "vramfit/estimate/setup.h"

struct vf_alloc_config;
struct vf_replay_memo;

enum vf_engine { VF_ENGINE_TRANSFORMERS, VF_ENGINE_VLLM, VF_ENGINE_LLAMACPP };

/* llama.cpp's GGUF file types (llama-quantize's names) and KV cache types. */
enum vf_gguf_type {
	VF_GGUF_F16, VF_GGUF_BF16, VF_GGUF_Q8_0, VF_GGUF_Q6_K, VF_GGUF_Q5_K_M, VF_GGUF_Q4_K_M,
	VF_GGUF_Q4_0, VF_GGUF_COUNT
};
enum vf_ggml_cache { VF_CACHE_F16, VF_CACHE_Q8_0, VF_CACHE_Q4_0 };
/* llama.cpp's --split-mode over several GPUs. */
enum vf_llamacpp_split { VF_LCPP_SPLIT_LAYER, VF_LCPP_SPLIT_ROW, VF_LCPP_SPLIT_NONE };
#define VF_INFER_MAX_DEVICES 16

/* vLLM's defaults (vllm/config/cache.py, vllm/engine/arg_utils.py). */
#define VF_VLLM_BLOCK_SIZE 16
#define VF_VLLM_GPU_MEMORY_UTILIZATION 0.9

/* What the engine is asked to serve. Zero fields take the defaults. */
struct vf_infer_opts {
	enum vf_engine engine;
	int64_t ctx;                 /* max_model_len; 0: vLLM the model's max_position_embeddings,
					transformers the prompt (--seq) */
	int64_t users;               /* concurrent sequences decoding; 0: 1 */
	double gpu_memory_utilization; /* vLLM; 0: 0.9 */
	int64_t max_num_batched_tokens; /* vLLM; 0: 2048 below 70 GiB or on an A100, else 8192 */
	int64_t max_num_seqs;        /* vLLM; 0: 256 below 70 GiB or on an A100, else 1024 */
	bool kv_fp8;                 /* --kv-cache-dtype fp8: one byte per element */
	/* llama.cpp */
	enum vf_gguf_type gguf_type; /* default q4_k_m (VF_GGUF_COUNT: unset) */
	bool gguf_given;
	int64_t n_gpu_layers;        /* -1 (or 0 unset): every layer and the output */
	bool ngl_given;
	double host_bandwidth_gbs;   /* CPU memory bandwidth, GB/s; 0: 50 */
	enum vf_ggml_cache cache_k, cache_v; /* default f16 */
	int64_t n_ubatch;            /* physical batch; 0: 512 */
	bool static_cache;           /* transformers: StaticCache (max_cache_len allocated up front);
					else DynamicCache, grown by torch.cat */
	/* transformers: the users at ctx judged by the caching allocator's
	 * replay (vf_estimate_simulate_memo with alloc, NULL the default
	 * allocator, and memo, may be NULL), as the row's own estimate is;
	 * false: the analytic peak */
	bool replay;
	const struct vf_alloc_config *alloc;
	struct vf_replay_memo *memo;
	enum vf_llamacpp_split split_mode; /* over the setup's GPUs (default layer) */
	double tensor_split[VF_INFER_MAX_DEVICES]; /* --tensor-split ratios; all 0: llama.cpp's
						      default, each device's free memory */
	/* llama.cpp over several GPUs: each device's card where they differ
	 * (NULL: the GPU vf_infer_run is given), and its free memory as the
	 * probe reports it (0: unknown, taken as the card's memory less the
	 * CUDA context); the default split is in proportion to the latter,
	 * and a device holds no more than that free memory and its context */
	const struct vf_gpu_spec *device_gpu[VF_INFER_MAX_DEVICES];
	int64_t device_free_bytes[VF_INFER_MAX_DEVICES];
	bool vllm_sync_scheduling;   /* vLLM without async scheduling (--no-async-scheduling, or a
					release before it was the default, early 2026): the step's host
					work adds to the device's; else it hides behind it */
	bool no_cuda_graphs;         /* each kernel launched from the host (GGML_CUDA_DISABLE_GRAPHS=1,
					or a build before CUDA graphs, May 2024) */
	bool graph_rebuild;          /* llama.cpp: a build that rebuilds the ggml graph for every token
					(before graph reuse, llama.cpp PR #14482, July 2025): its host
					time adds to each decode step */
};

struct vf_infer {
	enum vf_engine engine;
	int64_t ctx, users, prompt;  /* as resolved */
	int64_t running;             /* users decoding at once: users, at most max_users (>= 1) */
	int tp, pp;
	double kv_bytes_per_token_layer; /* one attention layer, one GPU (K and V) */
	double kv_bytes_per_token;   /* every attention layer, one GPU */
	int64_t attn_layers;         /* layers holding a KV cache on one GPU */
	int64_t kv_cache_bytes;      /* vLLM: the blocks' bytes; transformers: users x ctx */
	int64_t weights_bytes;       /* per GPU */
	int64_t activation_bytes;    /* vLLM: the profiled forward's peak (+ sampler logits) */
	int64_t non_torch_bytes;     /* vLLM: CUDA context outside the caching allocator */
	int64_t budget_bytes;        /* vLLM: gpu_memory_utilization x the card */
	int64_t kv_room_bytes;       /* vLLM: the budget less the weights, the profiled forward
					and the context (negative: over it; kv_cache_bytes is
					then 0) */
	int64_t kv_blocks;           /* vLLM: blocks of block_size tokens; -1 otherwise */
	int64_t kv_growth_bytes;     /* transformers DynamicCache: the torch.cat transient (one
					layer's K or V, old and new live at once) and the caching
					allocator's 2 MiB rounding of each layer's K and V */
	int block_size;
	int64_t max_num_batched_tokens, max_num_seqs;
	double max_concurrency;      /* vLLM's "Maximum concurrency for ctx tokens per request" */
	int64_t max_users;           /* sequences of ctx tokens at once (0: none) */
	int64_t max_ctx;             /* the longest context one sequence can have (vLLM: blocks x
					block_size, its estimate_max_model_len); -1 unknown */
	bool fits;                   /* one sequence of ctx fits (vLLM starts) */
	int64_t one_peak_bytes;      /* transformers on one GPU: one sequence of ctx, the forward's
					peak and the DynamicCache's growth, when it does not fit or
					ctx is longer than the prompt; 0 not computed */
	int64_t users_peak_bytes;    /* transformers on one GPU, users > 1: the users' sequences
					of ctx at once (generate() decodes its batch together,
					nothing queues them), as one_peak_bytes; over the card when
					users > max_users; 0 not computed */
	char why[200];               /* when not: the engine's refusal in words */
	double ttft_seconds;         /* prefill of the prompt; < 0 unknown */
	double decode_step_seconds;  /* one decode step of `users` sequences; < 0 unknown */
	double decode_tokens_per_second_per_user;
	double decode_tokens_per_second_total;
	bool decode_bandwidth_bound; /* the step is the bytes' time, not the FLOPs' */
	/* vLLM: decode_step_seconds = decode_device_seconds + decode_host_seconds
	 * (before pipeline parallel's stages); the engine's host work of a step
	 * (decode_host_work_seconds) is exposed in full with synchronous
	 * scheduling, with async scheduling only where it exceeds the device
	 * step. Other engines: host 0, device = the step. */
	double decode_device_seconds;
	double decode_host_seconds;
	double decode_host_work_seconds;
	bool async_scheduling;
	/* llama.cpp */
	int64_t gpu_layers;          /* layers on the GPU */
	bool output_on_gpu;
	int64_t host_bytes;          /* weights (and KV of CPU layers at ctx) in host memory */
	int64_t compute_buffer_bytes;
	double bits_per_weight;      /* the GGUF file's mean over its tensors */
	/* llama.cpp over several GPUs: weights_bytes, kv_cache_bytes and
	 * compute_buffer_bytes above are the fullest device's (the one that
	 * decides), gpu_layers all devices' */
	int devices;                 /* GPUs holding layers (1: one card) */
	enum vf_llamacpp_split split_mode;
	int fullest;                 /* index of the fullest device */
	int64_t device_layers[VF_INFER_MAX_DEVICES];  /* repeating layers per device */
	int64_t device_first[VF_INFER_MAX_DEVICES];   /* its first layer (-1: none) */
	bool device_output[VF_INFER_MAX_DEVICES];     /* holds the output layer */
	int64_t device_bytes[VF_INFER_MAX_DEVICES];   /* weights + KV + compute + context */
	int64_t device_memory_bytes[VF_INFER_MAX_DEVICES]; /* what it may use: the card, or the
							      probe's free + the context when less */
	double device_split[VF_INFER_MAX_DEVICES];    /* the split ratios used, normalised
							 (--tensor-split, else free memory) */
	bool approximate;            /* something the model does not cover: see `not_modelled` */
	char not_modelled[800];
};

const char *vf_engine_name(enum vf_engine e);
const char *vf_gguf_type_name(enum vf_gguf_type t);
bool vf_gguf_type_parse(const char *s, enum vf_gguf_type *out);
bool vf_ggml_cache_parse(const char *s, enum vf_ggml_cache *out);

/* ggml block sizes: bytes per element of a ggml type's blocks (q8_0: 34
 * bytes per 32, q4_K: 144 per 256, q6_K: 210 per 256, ...). */
double vf_ggml_cache_bytes(enum vf_ggml_cache c);

/* Bytes of the GGUF file's tensors llama-quantize writes for `ftype`:
 * per decoder layer i of n (the mixtures give attn_v and ffn_down more
 * bits in some layers), the token embedding and the output layer. */
double vf_gguf_layer_bytes(const struct vf_arch *a, enum vf_gguf_type t, int64_t i);
double vf_gguf_embedding_bytes(const struct vf_arch *a, enum vf_gguf_type t);
double vf_gguf_output_bytes(const struct vf_arch *a, enum vf_gguf_type t);

/* llama.cpp's placement of layer il of n (il = n: the output layer) with
 * --n-gpu-layers ngl over ndev devices whose --tensor-split ratios are
 * `split` (NULL or all 0: equal): the device index, or -1 on the host. */
int vf_llamacpp_layer_device(int64_t il, int64_t n, int64_t ngl, const double *split, int ndev);
bool vf_llamacpp_split_parse(const char *s, enum vf_llamacpp_split *out);
/* --tensor-split "3,1" (or "3/1"): the ratios into out[VF_INFER_MAX_DEVICES]
 * (the rest 0), their count in *n. VF_EUSAGE naming the flag and the
 * problem on a malformed list. */
vf_status vf_llamacpp_tensor_split_parse(const char *s, double *out, int *n, struct vf_error *err);
const char *vf_llamacpp_split_name(enum vf_llamacpp_split m);
/* "transformers" | "vllm" | "llamacpp" (or "llama.cpp") -> *out; false when unknown. */
bool vf_engine_parse(const char *s, enum vf_engine *out);

/* KV-cache bytes one token takes in one attention layer on one of tp
 * GPUs: K and V, kv_heads x head_dim each (heads split tp ways, at least
 * one per GPU), elem_bytes each; MLA caches kv_lora_rank + rope dims once. */
double vf_infer_kv_bytes_per_token_layer(const struct vf_arch *a, int tp, double elem_bytes);

/* vLLM's block count from the memory left for the KV cache, and the
 * sequences of ctx tokens it holds at once (blocks / ceil(ctx / block)). */
int64_t vf_infer_vllm_blocks(double kv_avail_bytes, double kv_bytes_per_token_layer,
			     int64_t attn_layers, int block_size);
double vf_infer_vllm_concurrency(int64_t blocks, int64_t ctx, int block_size);

/* One decode step of `users` sequences each holding `context` tokens:
 * max(bytes read / stream bandwidth, FLOPs / GEMM rate) + per-step host
 * time. weights_bytes and kv_bytes_per_token per GPU. */
double vf_infer_decode_step(const struct vf_gpu_spec *gpu, double weights_bytes,
			    double kv_bytes_per_token, double flops_per_token_ctx0,
			    double attn_flops_per_token_per_ctx, int64_t users, double context,
			    double host_seconds, bool *bandwidth_bound);

/* The whole answer for one GPU kind (setup: --mode infer, its precision,
 * quantization, tp, pp, seq = the prompt). Fails only on bad options. */
vf_status vf_infer_run(const struct vf_arch *arch, const struct vf_setup *setup,
		       const struct vf_gpu_spec *gpu, const struct vf_infer_opts *o,
		       struct vf_infer *out, struct vf_error *err);

/* One way to serve the model on up to `gpus` GPUs of a kind (fit --mode
 * infer): the engine and its settings, in words, what it gives up, and
 * the answer. */
struct vf_infer_candidate {
	enum vf_engine engine;
	int gpus;
	char what[96];      /* "vllm tp 2, int4 weights, fp8 KV" */
	char gives_up[96];  /* "4-bit weights; fp8 KV cache" ("" nothing) */
	int64_t max_model_len; /* vLLM: > 0 when the option needs --max-model-len (vramfit's --ctx)
				  set to this: o->ctx was not given and the model's own
				  max_model_len leaves no room for one sequence (vLLM refuses it,
				  "decreasing max_model_len"); the longest that holds o->users
				  sequences. 0: none needed */
	struct vf_infer r;
};

/* The ways that serve `o->users` users at `o->ctx` on up to `gpus` GPUs
 * (0: one): vLLM at tensor-parallel 1, 2, 4, 8 (heads divisible) with
 * bf16, fp8 or int4 weights and an auto or fp8 KV cache; llama.cpp on
 * one GPU with each GGUF type, every layer on the GPU or as many as fit
 * (the rest offloaded to the host). Without o->ctx, a vLLM option whose
 * KV blocks cannot hold one sequence of the model's max_model_len is
 * offered at the longest max_model_len that holds o->users sequences
 * (max_model_len set). Fastest decode per user first (on a
 * tie, fewer GPUs); engine = VF_ENGINE_TRANSFORMERS in o means both
 * engines. Returns how many were written to out (at most max). */
int vf_infer_candidates(const struct vf_arch *arch, const struct vf_setup *setup,
			const struct vf_gpu_spec *gpu, int gpus, const struct vf_infer_opts *o,
			struct vf_infer_candidate *out, int max);

/* The ways transformers generate() serves `o->users` users at `o->ctx`
 * (0: the prompt, --seq) on up to `gpus` GPUs of one kind: bf16, int8 or
 * nf4 (bitsandbytes) weights on one card, and where one card does not
 * serve, accelerate's device_map layer split over the fewest cards that
 * serve, at most `gpus` (0 or 1: at most 8): whole layers in order, one
 * card working at a time. No tensor parallel or ZeRO/FSDP
 * sharding: generate() does neither. Fastest decode per user first. */
int vf_infer_generate_candidates(const struct vf_arch *arch, const struct vf_setup *setup,
				 const struct vf_gpu_spec *gpu, int gpus, const struct vf_infer_opts *o,
				 struct vf_infer_candidate *out, int max);

/* The report page's sweep for one GPU kind (lib/report/report_infer.c):
 * contexts from 512 tokens doubling up to `limit` (the resolved --ctx
 * among them), at each the KV cache of one sequence (kv_bytes_per_sequence,
 * vLLM: whole blocks), the users that fit (max_users) and the engine's KV
 * memory ("kv_budget_bytes": vLLM's blocks, llama.cpp's room for cache
 * tokens on the fullest GPU; null for transformers). Caller owns. */
cJSON *vf_infer_sweep_json(const struct vf_arch *arch, const struct vf_setup *setup,
			   const struct vf_gpu_spec *gpu, const struct vf_infer_opts *o, int64_t ctx,
			   int64_t limit);

/* The "inference" object of estimate --json. Caller owns. */
cJSON *vf_infer_to_json(const struct vf_infer *r);

#endif
