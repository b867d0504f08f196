/* estimate.h - peak GPU memory and step time of a training or inference
 * run, from a model's architecture and a setup, before any GPU time is
 * spent.
 *
 * The memory model is mechanistic: each term (weights, gradients, optimizer
 * states and the optimizer step's temporaries, autocast's weight copies,
 * activations, logits and loss, KV cache) is computed from the architecture,
 * the peak is found by walking the phases of a steady-state step (forward,
 * loss, backward, optimizer step; the next forward with the optimizer states
 * held) and the PyTorch caching allocator's rounding and segments turn the
 * tensor peak into the reserved peak. The step time is FLOPs over the GPU's
 * dense bf16 rate times a utilisation fitted on measured steps, plus the
 * memory-bound optimizer step. lib/estimate/estimate.c documents every term.
 *
 * vf_estimate_run allocates once per thread (its context, at the thread's
 * first call) and takes about a microsecond; the fit search calls
 * vf_estimate_run_ctx millions of times, with a context that keeps what
 * its setups share. */
#ifndef VRAMFIT_ESTIMATE_H
#define VRAMFIT_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/model/arch.h"
#include "vramfit/model/ltx.h"
#include "vramfit/model/vision.h"
#include "vramfit/base/error.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/estimate/setup.h"

/* vf_estimate_simulate replays models of at most this many layers (the
 * analytic reserve stands beyond, with e->sim_skipped saying so). */
#define VF_ESTIMATE_SIM_MAX_LAYERS 512
#include "vramfit/estimate/alloc.h"

/* The phase of a step at which the allocated memory peaked. */
enum vf_phase {
	VF_PHASE_FORWARD,   /* forward pass (activations growing) */
	VF_PHASE_LOSS,      /* logits and the loss (fp32 upcast) */
	VF_PHASE_BACKWARD,  /* backward pass (gradients growing) */
	VF_PHASE_OPTIMIZER, /* optimizer step (temporaries) */
	VF_PHASE_VALIDATION,   /* video DiTs: sampling and VAE decoding of a clip */
	VF_PHASE_TEXT_ENCODER, /* video DiTs: the text encoder embedding prompts */
	VF_PHASE_LOAD,         /* video DiTs: loading the models, before the first step (rank 0's
				  transient under FSDP) */
	VF_PHASE_COUNT
};

/* The memory terms, in the order of the JSON contract. */
enum vf_term {
	VF_TERM_WEIGHTS,
	VF_TERM_GRADIENTS,
	VF_TERM_OPTIMIZER,
	VF_TERM_OPTIMIZER_TEMP,
	VF_TERM_AUTOCAST_CACHE,
	VF_TERM_ACTIVATIONS,
	VF_TERM_LOGITS,
	VF_TERM_KV_CACHE,
	VF_TERM_CONTEXT,
	VF_TERM_ALLOCATOR,
	VF_TERM_COUNT
};

/* Assumptions the estimate made (bitmask in vf_estimate.assumed). */
enum {
	VF_ASSUME_CONTEXT_DEFAULT = 1u << 0,  /* CUDA context from the GPU generation */
	VF_ASSUME_NO_GPU = 1u << 1,           /* no GPU given: no time, H200 context */
	VF_ASSUME_GENERIC_ARCH = 1u << 2,     /* --params alone: a llama-like shape */
	VF_ASSUME_GPU_RATE_UNKNOWN = 1u << 3, /* GPU without a bf16 rate: no time */
	VF_ASSUME_BF16_EMULATED = 1u << 4,    /* bf16 on a GPU without bf16 tensor cores */
	VF_ASSUME_CONSTANTS_BUILTIN = 1u << 5, /* step time from built-in constants:
	                                        * vf_estimate_constants_fallback() says why */
	VF_ASSUME_NO_TF32 = 1u << 6,          /* TF32 on, but the GPU has none (Volta, Turing):
	                                        * fp32 matmuls stay IEEE on the CUDA cores */
};

/* Why the step-time constants (data/estimate/steptime.json: kernel
 * efficiencies, links) are the built-in H200-fitted ones: the file or one
 * of its sections could not be read ("file: problem"); NULL when they came
 * from the file. Borrowed; valid for the process. */
const char *vf_estimate_constants_fallback(void);

struct vf_gpu_spec;
/* The host time per kernel launch, synchronisation and step of the GPU's
 * typical host against the H200 calibration server's (steptime.json
 * host_speed: 0.75 for a GeForce card's desktop CPU, 1.5 for a V100's
 * Broadwell server); 1 without a GPU. */
double vf_estimate_host_speed(const struct vf_gpu_spec *gpu);

/* Every byte figure is per GPU. The terms are what is live at the peak
 * (they add up to peak_allocated_bytes; context and allocator add up to
 * peak_bytes); the *_full fields are each term's full size whenever it is
 * live (e.g. gradients are freed before the forward that peaks). */
struct vf_estimate {
	bool inference;            /* --mode infer: no loss; its VF_PHASE_LOSS is the logits */
	int64_t params;            /* total parameters (tied embeddings once) */
	int64_t trainable_params;  /* what the optimizer updates */
	int64_t tokens_per_step;   /* batch x seq x grad_accum x gpus */

	/* Live at the peak (bytes). */
	int64_t weights_bytes;
	int64_t gradients_bytes;
	int64_t optimizer_bytes;
	int64_t optimizer_temp_bytes;
	int64_t autocast_cache_bytes;
	int64_t activations_bytes;
	int64_t logits_bytes;
	int64_t kv_cache_bytes;
	int64_t context_bytes;     /* CUDA context + framework */
	int64_t allocator_bytes;   /* reserved - allocated at the peak */
	int64_t peak_allocated_bytes; /* <-> torch.cuda.max_memory_allocated() */
	int64_t peak_reserved_bytes;  /* <-> torch.cuda.max_memory_reserved() */
	int64_t peak_bytes;        /* context + reserved: what nvidia-smi shows */

	/* Each term's full size (bytes). */
	int64_t weights_full;
	int64_t gradients_full;
	int64_t optimizer_full;
	int64_t optimizer_temp_full;
	int64_t autocast_cache_full;
	int64_t activations_full;
	int64_t logits_full;
	int64_t kv_cache_full;
	int64_t layer_activations; /* one layer's saved activations (recompute working set) */
	int64_t loss_transient;    /* logits in the compute dtype, freed before the loss backward */

	enum vf_phase peak_phase;  /* where the peak happened */
	enum vf_term dominant;     /* the largest term at the peak */

	/* Time. Negative when unknown (no GPU, or no rate for it). */
	double flops_per_step;     /* one optimizer step, per GPU, recompute included */
	double step_seconds;       /* one optimizer step */
	double tokens_per_second;  /* all GPUs */
	double mfu;                /* model FLOPs (no recompute) / (time x dense bf16 rate) */
	double utilisation;        /* the fitted matmul utilisation used */
	double optimizer_seconds;  /* memory-bound optimizer step share */
	/* The step as its parts (s per optimizer step; LLMs; zero otherwise):
	 * step_seconds = compute + exposed communication + interference. */
	struct vf_step_parts {
		double gemm;           /* GEMMs: linears, LoRA adapters, lm_head */
		double attention;      /* SDPA kernels, or eager's batched GEMMs */
		double memory_bound;   /* norms, activations, residuals, softmax, the loss */
		double launch;         /* host time beyond the device's (launch-bound passes) */
		double moe;            /* the eager expert loop (GEMMs, launches, syncs) */
		double dequant;        /* quantized base weights dequantized per pass */
		double optimizer;      /* the optimizer step (+ fp16 GradScaler) */
		double offload;        /* activation offload copies not hidden */
		double paging;         /* paged optimizer states migrated over PCIe */
		double cpu_offload;    /* CPU offload (--offload): PCIe copies not hidden */
		double host_optimizer; /* CPU offload: the optimizer step on the host */
		double fixed;          /* per-step host overhead */
		double compute;        /* the sum above: one GPU's step */
		double comm_total;     /* data-parallel communication, hidden or not */
		double comm_exposed;   /* the part not hidden behind compute */
		double comm_interference; /* compute lost to NCCL's SMs while hidden */
		double comm_bytes;     /* sent by each GPU per optimizer step */
		double ckpt_host;      /* not a part: checkpointing's hooks and regions on the
		                        * host, in the passes' host time (hidden behind the
		                        * GPU's kernels, or inside launch) */
		double cpu_offload_hidden; /* not a part: CPU offload's copies hidden behind the
		                        * passes, in the window the collectives would use (each
		                        * shard copied up before its all-gather) */
		char link[24];         /* the link class communication ran on ("" none) */
	} parts;

	unsigned assumed;          /* VF_ASSUME_* */

	/* Live memory at each phase of the step, by term (bytes): the tensors
	 * the phase holds, the CUDA context at every phase, and the allocator
	 * reserve at the peak phase only (the reserve is computed for the
	 * peak). Bit 1 << p of `phases` is set for each phase this run goes
	 * through (inference: forward and loss; video DiTs add validation and
	 * the text encoder). phase_bytes[peak_phase] adds up to peak_bytes. */
	int64_t phase_bytes[VF_PHASE_COUNT][VF_TERM_COUNT];
	unsigned phases;
	/* The allocator simulation (vf_estimate_simulate); zero otherwise. */
	bool simulated;            /* peak_reserved_bytes came from the simulation */
	bool sim_oom;              /* the device ran out even after releasing the cache */
	const char *sim_skipped;   /* why the simulation was not run (static text; the
	                            * analytic reserve stands), NULL otherwise */
	int64_t analytic_reserved_bytes; /* the fast path's reserved peak */
	int64_t sim_allocated_bytes;     /* the simulation's own allocated peak (blocks) */
	bool sim_short;            /* the simulation's reserved peak fell below the step's
	                            * analytic allocated peak (it misses tensors): that
	                            * analytic peak stands, with no reserve; approximate */
	int64_t sim_retries;       /* times the simulated allocator, a cudaMalloc over the
	                            * card's memory, released its cache and retried
	                            * (torch.cuda.memory_stats()["num_alloc_retries"]):
	                            * > 0, the device peak is the card's (a larger card
	                            * reads a higher one) */
	int64_t evictable_bytes;   /* paged optimizer states (unified memory): counted in the
	                            * peak, evicted to the host before an out-of-memory */
	/* Which peak each tool sees (lib/estimate/mechanisms.c). peak_allocated_bytes,
	 * peak_reserved_bytes and peak_bytes are the scope's; the step's and the
	 * run's are kept here. Paged optimizer states are CUDA managed memory:
	 * in nvidia-smi's figure (peak_bytes) while resident, never in
	 * torch.cuda.max_memory_allocated() / max_memory_reserved(). */
	enum vf_peak_scope peak_scope;
	enum vf_peak_tool peak_report; /* the figure the stack's own report prints */
	int64_t paged_bytes;       /* optimizer states outside PyTorch's allocator */
	int64_t load_peak_allocated_bytes; /* tensors live at the model load's peak (0: the weights) */
	int64_t step_peak_allocated_bytes, step_peak_reserved_bytes; /* step_peak_bytes: below */
	int64_t run_peak_allocated_bytes, run_peak_reserved_bytes, run_peak_bytes;
	bool peak_at_load;         /* scope run and the load's peak is the run's: the terms
	                            * are the load's (weights) */
	/* CPU offload (--offload): what the host holds, what crosses PCIe per
	 * optimizer step and how long that takes at the link's nominal rate
	 * (not in step_seconds: the copies overlap compute in part). */
	enum vf_offload offload;
	int64_t offload_host_bytes;
	int64_t offload_pcie_bytes;
	double offload_pcie_seconds;
	/* Video DiTs (vf_estimate_dit); zero otherwise. */
	int64_t connector_bytes;   /* the embedding connectors, in weights_bytes at every phase */
	int64_t step_peak_bytes;   /* context + the training step's phases alone (no loading,
	                            * validation or text encoder): what the LTX-2 trainer's
	                            * "Peak GPU memory" line, nvidia-smi memory.used sampled
	                            * between steps, can show; LLMs: nvidia-smi's figure for
	                            * the step (paged states included, mechanisms.c) */
	double validation_seconds; /* one validation sample's denoising, <= 0 unknown */
};

/* A video diffusion transformer (catalog kind "dit", e.g. LTX-2): the
 * fields the estimate needs, read from its catalog entry. */
struct vf_dit {
	int64_t params;              /* transformer parameters */
	int64_t layers;              /* blocks (each has a video and an audio stream) */
	int64_t video_hidden;
	int64_t video_heads;
	int64_t video_ffn;
	int64_t audio_hidden;        /* 0 = no audio stream */
	int64_t audio_heads;
	int64_t audio_ffn;
	int64_t text_tokens;         /* caption tokens attended by cross-attention */
	int64_t text_dim;            /* caption embedding width fed to the DiT */
	int64_t text_encoder_params; /* e.g. Gemma 3 12B */
	int64_t latent_channels;     /* video VAE latent channels */
	int spatial_compression;     /* video VAE: pixels per latent token side (32) */
	int temporal_compression;    /* frames per latent frame after the first (8) */
	double fps;                  /* frame rate for the audio length */
	double audio_tokens_per_second; /* audio latent tokens per second */
	int64_t vae_params;          /* video VAE decoder kept for validation */
	int64_t vae_decoder_channels; /* channels of the decoder's full-resolution stage */
	int64_t text_encoder_embedding; /* text encoder embedding parameters (kept bf16 in 8-bit) */
	int64_t audio_text_dim;      /* audio text cross-attention context width (0: text_dim) */
	int64_t audio_inner;         /* audio heads x head dim: the inner width of the
					audio<->video attentions (0: audio_hidden) */
	bool from_file;              /* the layout came from the model file, params from its header */
	int64_t connector_params;    /* video + audio embedding connectors: bf16 on the GPU for the
					whole run (0: none) */
	int64_t text_projection_params; /* the text projection loaded with them, then dropped */
	bool connectors_from_file;   /* their sizes from the checkpoint header, not the layout */
	int64_t connector_width_sum; /* video + audio connector widths (activations per token) */
	int64_t connector_layers;    /* blocks per connector */
	bool tiled_decode;           /* validation decodes in the LTX-2 trainer's tiles (else whole) */
	/* A UNet denoiser (nlevels > 0): its resolution levels (vision.h);
	 * each level's pixels are the full latent's / div. */
	int nlevels;
	struct vf_vision_level levels[VF_VISION_MAX_LEVELS];
	/* A pipeline's frozen parts kept on the GPU through the training
	 * step (pipeline.h): text encoders unless embeddings are
	 * precomputed, the VAE unless latents are; in the setup's weight
	 * precision (bf16 unless --precision fp32; --text-encoder int8
	 * quantizes the encoders' linears). */
	int64_t resident_te_params;      /* text (and image) encoders */
	int64_t resident_te_embedding;   /* of which embeddings (kept bf16 in int8) */
	int64_t resident_vae_params;     /* the whole VAE */
	int64_t vae_encoder_channels;    /* channels of the VAE encoder's full-resolution stage
					    (0: latents precomputed, nothing encoded in the step) */
};

const char *vf_phase_name(enum vf_phase p);
/* The name of phase p in this estimate: an inference has no loss, its
 * VF_PHASE_LOSS is the output head's "logits". */
const char *vf_estimate_phase_name(const struct vf_estimate *e, enum vf_phase p);
/* "weights", "gradients", ..., the JSON key without "_bytes". */
const char *vf_term_name(enum vf_term t);
/* The live-at-peak value of a term. */
int64_t vf_estimate_term(const struct vf_estimate *e, enum vf_term t);

/* Estimate one setup on one GPU (gpu may be NULL: memory only, H200
 * context). Fills *out completely. Never allocates: it keeps a context per
 * thread (as vf_estimate_ctx, in the thread's storage, with a smaller layer
 * memo), keyed by the model's and the GPU's bytes, so the answer is the one
 * computed afresh, bit for bit. */
void vf_estimate_run(const struct vf_arch *arch, const struct vf_setup *setup,
		     const struct vf_gpu_spec *gpu, struct vf_estimate *out);

/* A context for many estimates of one model on one GPU (the fit search):
 * it keeps the model's shape and the layers' step times of the setups
 * already met, so an estimate whose layer inputs (micro-batch, sequence,
 * dtypes, LoRA, quantization, attention, compile) were seen reuses them,
 * and the GPU's class, rates and NCCL link per GPU count. A different
 * model or GPU (by their
 * bytes) empties it. Not shared
 * between threads. Caller owns; vf_estimate_ctx_free(). NULL: out of
 * memory. */
struct vf_estimate_ctx;
struct vf_estimate_ctx *vf_estimate_ctx_new(void);
void vf_estimate_ctx_free(struct vf_estimate_ctx *ctx);

/* vf_estimate_run with the context's memos (ctx NULL: vf_estimate_run):
 * the same estimate, bit for bit. Allocates the memo (about 1 MiB) at its
 * first use; without memory it runs as vf_estimate_run. */
void vf_estimate_run_ctx(struct vf_estimate_ctx *ctx, const struct vf_arch *arch,
			 const struct vf_setup *setup, const struct vf_gpu_spec *gpu,
			 struct vf_estimate *out);

/* vf_estimate_run, then the step's tensors replayed through the caching
 * allocator simulation (alloc.h; cfg may be NULL: PyTorch's defaults; its
 * capacity defaults to the GPU's memory less the context): the simulated
 * reserved peak replaces the fast path's (kept in analytic_reserved_bytes)
 * and decides peak_bytes and the fit. *sim (may be NULL) receives the
 * simulation for its segments at the peak; caller owns, vf_alloc_free().
 * Allocates; fails only when the host runs out of memory. */
vf_status vf_estimate_simulate(const struct vf_arch *arch, const struct vf_setup *setup,
			       const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
			       struct vf_estimate *e, struct vf_alloc **sim, struct vf_error *err);

/* Allocator replays remembered for one run (a command's estimates and
 * advice, fit's confirmation): a replay of the same step with the same
 * configuration asked again of the same memo is answered from it, the same
 * answer byte for byte at no cost. Caller owns; vf_replay_memo_free().
 * NULL when out of memory (callers then pass NULL: every replay runs).
 * Thread-safe: threads may share one. */
struct vf_replay_memo;
struct vf_replay_memo *vf_replay_memo_new(void);
void vf_replay_memo_free(struct vf_replay_memo *memo);
/* How many replays ran through memo (asked for and not found); a replay
 * asked for by one thread while another runs it is waited for, not run
 * twice. */
int64_t vf_replay_memo_replays(struct vf_replay_memo *memo);
/* How many of those replays were forked: training steps that differ only
 * in their optimizer make the same allocator calls up to the first
 * optimizer step, so memo keeps a few such prefixes and finishes a step
 * from a copy of its prefix instead of replaying it from the start. */
int64_t vf_replay_memo_forks(struct vf_replay_memo *memo);

/* vf_estimate_simulate with the replays remembered in memo (may be NULL:
 * vf_estimate_simulate). A kept simulation (*sim) is always replayed. */
vf_status vf_estimate_simulate_memo(const struct vf_arch *arch, const struct vf_setup *setup,
				    const struct vf_gpu_spec *gpu,
				    const struct vf_alloc_config *cfg,
				    struct vf_replay_memo *memo, struct vf_estimate *e,
				    struct vf_alloc **sim, struct vf_error *err);

/* About how much work the allocator replay of vf_estimate_simulate(arch,
 * setup, gpu) is (its allocator calls, counted from the step's sizes
 * without replaying it), to hand the longest replays out first; no
 * answer depends on it. */
double vf_estimate_replay_weight(const struct vf_arch *arch, const struct vf_setup *setup,
				 const struct vf_gpu_spec *gpu);
/* vf_estimate_replay_weight, and the replay that
 * vf_estimate_simulate_memo(arch, su, gpu, cfg, memo) will run announced
 * to memo (may be NULL): replays that differ only in their optimizer
 * share the allocator calls before the first optimizer step, and when
 * several are announced that part is replayed once for them all
 * (vf_replay_memo_forks). The answers are the same either way. */
double vf_estimate_expect_replay(const struct vf_arch *arch, const struct vf_setup *su,
				 const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
				 struct vf_replay_memo *memo);

/* Warms memo with the replays vf_estimate_simulate_memo(arch, setup, gpu,
 * cfg, memo) asks for, so that the same call later is answered from it;
 * a replay another thread is running meanwhile is left to that thread,
 * not waited for (threads sharing one memo stay busy). Answers nothing:
 * every failure is left to the later call, which meets it again. */
void vf_estimate_prefetch_memo(const struct vf_arch *arch, const struct vf_setup *setup,
			       const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
			       struct vf_replay_memo *memo);

/* The line a row with vf_estimate.sim_retries > 0 carries in its text and
 * JSON: its device peak is shaped by the card's memory (the simulated
 * allocator released its cache and retried, as PyTorch's does when a
 * cudaMalloc fails); into b, NULL when retries is 0. */
const char *vf_estimate_retries_note(int64_t retries, char *b, size_t n);

/* The largest micro-batch whose peak_bytes fits vram_bytes (vram_bytes
 * <= 0: the GPU's memory). 0 when batch 1 does not fit. */
int64_t vf_estimate_max_batch(const struct vf_arch *arch, const struct vf_setup *setup,
			      const struct vf_gpu_spec *gpu, int64_t vram_bytes);

/* The same decided by the allocator simulation: the fast path's answer,
 * checked with vf_estimate_simulate, raised by up to 8 while it still
 * fits, or lowered (step down, then bisect) until it does. 0 when batch 1
 * does not fit; -1 when the host ran out of memory. memo (may be NULL):
 * the replays remembered (vf_estimate_simulate_memo). */
int64_t vf_estimate_max_batch_simulated(const struct vf_arch *arch, const struct vf_setup *setup,
					const struct vf_gpu_spec *gpu,
					const struct vf_alloc_config *cfg,
					struct vf_replay_memo *memo);
/* The same against limit_bytes (<= 0: the card's memory, as above): the
 * peak at most that, with no out of memory (fit's margin). Either checks
 * the batch below its answer (the simulated peak is not monotone in the
 * batch) and answers a batch whose predecessor fits too. */
int64_t vf_estimate_max_batch_limit_simulated(const struct vf_arch *arch, const struct vf_setup *setup,
					      const struct vf_gpu_spec *gpu,
					      const struct vf_alloc_config *cfg,
					      struct vf_replay_memo *memo, int64_t limit_bytes);

/* The GPU's usable bytes (memory_mib x MiB) and whether e fits it; *headroom
 * (may be NULL) = vram - peak_bytes, negative when it does not fit. */
int64_t vf_estimate_gpu_bytes(const struct vf_gpu_spec *gpu);
bool vf_estimate_fits(const struct vf_estimate *e, const struct vf_gpu_spec *gpu,
		      int64_t *headroom);

/* A paged optimizer's states migrated over PCIe each step on `gpu`: the
 * peak beyond the card, at most the states in managed memory (bytes; 0
 * without a paged optimizer or when the peak fits). The step time's
 * paging part moves these. */
double vf_estimate_paged_traffic_bytes(const struct vf_estimate *e, const struct vf_gpu_spec *gpu);

/* The CUDA context assumed for a GPU (NULL: the H200 measurement). */
int64_t vf_estimate_default_context(const struct vf_gpu_spec *gpu);

/* A generic decoder-only transformer of about `params` parameters
 * (llama-like shape; --params N alone; a vocabulary below 32000 for a
 * small model). Returns the shape's own parameter count: above `params`
 * when no transformer is that small (callers refuse rather than estimate
 * another size). */
int64_t vf_estimate_generic_arch(int64_t params, struct vf_arch *out);

/* Vision models (lib/estimate/vit.c): CLIP / SigLIP contrastive training
 * of both towers (or one ViT tower) over setup->video_width x height
 * images; LLaVA-style VLMs in stage 2 (the language model over setup->seq
 * text tokens + the image tokens, the frozen vision tower, the trained
 * projector). */
void vf_estimate_vit(const struct vf_vision *v, const struct vf_setup *setup,
		     const struct vf_gpu_spec *gpu, struct vf_estimate *out);
void vf_estimate_vlm(const struct vf_vision *v, const struct vf_setup *setup,
		     const struct vf_gpu_spec *gpu, struct vf_estimate *out);
int64_t vf_estimate_vision_max_batch(const struct vf_vision *v, const struct vf_setup *setup,
				     const struct vf_gpu_spec *gpu, int64_t vram_bytes);

/* Video DiTs. */
/* An LTX DiT from its layout (lib/model/ltx.h) and its exact parameter
 * count; what a transformer file does not say (VAE, text encoder, caption
 * tokens, frame rate, compression) comes from `defaults`, a catalog entry's
 * object (NULL: none), and each such value is then an assumption. */
vf_status vf_dit_from_ltx(const struct vf_ltx_arch *a, int64_t params, const cJSON *defaults,
			  struct vf_dit *d, struct vf_error *err);
/* A diffusers DiT (PixArt, Latte, Flux, LTX-Video, Wan) or UNet (kind
 * "unet": its levels; lib/model/vision.h)
 * with its exact parameter count; *about names the pipeline parts
 * assumed (text encoder, VAE). */
vf_status vf_dit_from_vision(const struct vf_vision *v, int64_t params, struct vf_dit *d,
			     const char **about, struct vf_error *err);
/* The same from an inspected checkpoint (has_ltx): the transformer,
 * connectors, text projection and VAE decoder sizes from its header's
 * parts when it holds them, else from the layout. */
struct vf_model;
vf_status vf_dit_from_ltx_model(const struct vf_model *m, const cJSON *defaults, struct vf_dit *d,
				struct vf_error *err);
vf_status vf_dit_from_json(const cJSON *entry, const char *what, struct vf_dit *d,
			   struct vf_error *err);
/* Latent tokens of one sample: video (W/32 x H/32 x (1 + (F-1)/8)) and
 * audio (F / fps x audio_tokens_per_second). */
int64_t vf_dit_video_tokens(const struct vf_dit *d, int width, int height, int frames);
int64_t vf_dit_audio_tokens(const struct vf_dit *d, int frames);
void vf_estimate_dit(const struct vf_dit *d, const struct vf_setup *setup,
		     const struct vf_gpu_spec *gpu, struct vf_estimate *out);
int64_t vf_estimate_dit_max_batch(const struct vf_dit *d, const struct vf_setup *setup,
				  const struct vf_gpu_spec *gpu, int64_t vram_bytes);

/* An LTX-2 trainer config, in the trainer's own keys (the plan command maps
 * a config.yaml onto this). Strings are borrowed. */
struct vf_ltx2_config {
	const char *training_mode;        /* model.training_mode: "lora" | "full" */
	int lora_rank;                    /* lora.rank */
	const char *optimizer_type;       /* optimization.optimizer_type: adamw | adamw8bit */
	int batch_size;                   /* optimization.batch_size */
	int grad_accum;                   /* optimization.gradient_accumulation_steps */
	bool grad_ckpt;                   /* optimization.enable_gradient_checkpointing */
	const char *mixed_precision_mode; /* acceleration.mixed_precision_mode: no|fp16|bf16 */
	const char *quantization;         /* acceleration.quantization: NULL | "int8-quanto" ... */
	bool load_text_encoder_in_8bit;   /* acceleration.load_text_encoder_in_8bit */
	int video_dims[3];                /* validation.video_dims: width, height, frames */
	bool offload_optimizer_during_validation; /* acceleration.offload_optimizer_during_validation */
	int gpus;                         /* processes (1 = single GPU) */
	/* the training sample: the dataset's resolution bucket (width, height,
	 * frames); 0 = unknown: the validation video_dims stand in (an
	 * assumption the caller states) */
	int train_dims[3];
	bool validation_disabled;         /* validation.interval: null */
	int inference_steps;              /* validation.inference_steps; 0 = 30 */
	int guidance_passes;              /* transformer passes per denoising step; 0 = 4 */
	bool no_audio;                    /* no audio stream in training (the flexible strategy
					     without an audio modality; with_audio: false) */
	bool no_validation_prompts;       /* validation.samples (or prompts) empty: the trainer
					     never loads the text encoder */
};

/* Map an LTX-2 trainer config onto a setup (LoRA targets
 * to_k,to_q,to_v,to_out.0). Fails naming the key with a bad value. */
vf_status vf_setup_from_ltx2(const struct vf_ltx2_config *c, struct vf_setup *s,
			     struct vf_error *err);
/* Estimate an LTX-2 trainer config for model_id ("ltx-2-19b",
 * "ltx-2.3-22b") on gpu (may be NULL). Reads the model catalog. */
/* The same from the checkpoint itself: its transformer config and header
 * (lib/model/ltx.h); VF_ENOTFOUND when the file is not an LTX transformer. */
vf_status vf_estimate_ltx2_file(const char *path, const struct vf_ltx2_config *c,
				const struct vf_gpu_spec *gpu, struct vf_estimate *out,
				struct vf_error *err);
vf_status vf_estimate_ltx2(const char *model_id, const struct vf_ltx2_config *c,
			   const struct vf_gpu_spec *gpu, struct vf_estimate *out,
			   struct vf_error *err);

/* The "memory" and "time" objects of the estimate --json contract.
 * Caller owns; cJSON_Delete(). */
cJSON *vf_estimate_memory_json(const struct vf_estimate *e);
cJSON *vf_estimate_time_json(const struct vf_estimate *e);
/* The step as its parts (e->parts, seconds) for --json; NULL when the
 * estimate has none (no step time, or not an LLM). Caller owns. */
cJSON *vf_estimate_parts_json(const struct vf_estimate *e);
/* The parts' names and values in display order (n entries, the last the
 * exposed communication); returns n. Names are static. */
int vf_estimate_parts_list(const struct vf_estimate *e, const char *names[16], double values[16]);

#endif
