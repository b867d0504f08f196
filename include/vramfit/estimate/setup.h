/* setup.h - a training or inference setup: every flag of `vramfit estimate`
 * (mode, precision, optimizer, batch, sequence, checkpointing, LoRA,
 * quantization, sharding, attention, CUDA context, video dimensions),
 * resolved to plain values; the name tables of each enum; and the flag
 * parser shared by the CLI commands (estimate, fit, plan).
 *
 * Flag names are a contract (README "vramfit estimate"):
 *   --mode full|lora|infer          --precision amp|bf16|fp16|fp32
 *   --optimizer adamw|adamw8bit|adafactor|sgd|lion
 *   --optimizer-impl foreach|fused|for
 *   --batch N --seq N --target-seq N --grad-accum N
 *   --grad-ckpt[=true|false|reentrant|selective:op|every:N] / --no-grad-ckpt
 *   --peak-scope step|run (stack.c)  --offload none|optimizer|params
 *   --lora-rank R --lora-alpha A --lora-targets q_proj,v_proj|all-linear|LIST
 *   --quant none|int8|int4|nf4|fp8  --gpus N
 *   --shard none|ddp|zero1|zero2|zero3|fsdp
 *   --attention sdpa|eager|flash    --context-mib N
 *   --video WxHxF  --audio / --no-audio  --text-encoder none|bf16|int8
 *   --offload-optimizer (states to CPU during validation)
 *   --validation off|WxHxF[:STEPS[:PASSES]] (the validation phase's sample)
 *   --split none|layers  --max-memory GPU=GiB[,GPU=GiB...]
 *   --tp N --pp N --micro-batches M --sequence-parallel (lib/estimate/split.c)
 * Each also accepts the --flag=value form. */
#ifndef VRAMFIT_SETUP_H
#define VRAMFIT_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"

enum vf_mode { VF_MODE_FULL, VF_MODE_LORA, VF_MODE_INFER, VF_MODE_COUNT };

/* amp: fp32 parameters under bf16 autocast; bf16: parameters stored in bf16
 * (under autocast); fp16: fp32 parameters under fp16 autocast with a
 * GradScaler (HF --fp16); fp32: no autocast. */
enum vf_precision { VF_PREC_AMP, VF_PREC_BF16, VF_PREC_FP16, VF_PREC_FP32, VF_PREC_COUNT };

/* VF_OPT_NONE only for --mode infer. */
enum vf_optimizer {
	VF_OPT_ADAMW,
	VF_OPT_ADAMW8BIT,
	VF_OPT_ADAFACTOR,
	VF_OPT_SGD,
	VF_OPT_LION,
	VF_OPT_NONE,
	VF_OPT_COUNT
};

/* PyTorch optimizer implementations: foreach (the default on CUDA),
 * fused=True, or the per-tensor for-loop (foreach=False). */
enum vf_optimizer_impl { VF_OPTIMPL_FOREACH, VF_OPTIMPL_FUSED, VF_OPTIMPL_FOR, VF_OPTIMPL_COUNT };
/* Gradient clipping by the global norm before the optimizer step
 * (torch.nn.utils.clip_grad_norm_): none, torch 2.x's grouped foreach
 * kernels, or torch 1.x's loop of one norm and one mul_ per tensor. */
enum vf_grad_clip { VF_CLIP_NONE, VF_CLIP_FOREACH, VF_CLIP_FOR, VF_CLIP_COUNT };

/* Quantization of the frozen base weights. */
enum vf_quant { VF_QUANT_NONE, VF_QUANT_INT8, VF_QUANT_INT4, VF_QUANT_NF4, VF_QUANT_FP8, VF_QUANT_COUNT };

enum vf_shard {
	VF_SHARD_NONE,
	VF_SHARD_DDP,
	VF_SHARD_ZERO1,
	VF_SHARD_ZERO2,
	VF_SHARD_ZERO3,
	VF_SHARD_FSDP,
	VF_SHARD_COUNT
};

enum vf_attention { VF_ATTN_SDPA, VF_ATTN_EAGER, VF_ATTN_FLASH, VF_ATTN_COUNT };

/* The loss: HF's (logits upcast to fp32 whole), chunked (torchtune's
 * CEWithChunkedOutputLoss: one chunk upcast at a time), or a fused
 * linear + cross-entropy (Liger-style: logits never materialised whole). */
enum vf_loss { VF_LOSS_FULL, VF_LOSS_CHUNKED, VF_LOSS_FUSED_LINEAR, VF_LOSS_COUNT };

/* Stack mechanisms set by a flag (the stack profile leaves them alone). */
enum {
	VF_STACK_G_ADAPTER = 1u << 0,
	VF_STACK_G_LOSS = 1u << 1,
	VF_STACK_G_COMPILE = 1u << 2,
	VF_STACK_G_OFFLOAD = 1u << 3,
	VF_STACK_G_OIB = 1u << 4,
	VF_STACK_G_PAGED = 1u << 5,
	VF_STACK_G_PEAK_SCOPE = 1u << 6,
	VF_STACK_G_FLOAT8 = 1u << 7,
	VF_STACK_G_TF32 = 1u << 8,
	VF_STACK_G_LORA_DROPOUT = 1u << 9,
	VF_STACK_G_AUTOCAST = 1u << 10,
};

/* Where the setup's TF32 setting came from (vf_setup.tf32_from). */
enum vf_tf32_from {
	VF_TF32_PYTORCH, /* PyTorch's default: off (allow_tf32 False since 1.12) */
	VF_TF32_OPTION,  /* --tf32 / --no-tf32 */
	VF_TF32_STACK,   /* the stack profile's mechanism "tf32" (the stack turns it on) */
};

/* Which peak a memory report reads (the stack's own report, or
 * --peak-scope): the steady-state step's (the peak statistics reset after
 * the model was built, as torchtune's get_memory_stats and torchtitan's
 * memory monitor do), or the whole run's never-reset peak, load and
 * initialisation transients included (litgpt's final
 * torch.cuda.max_memory_allocated()). */
enum vf_peak_scope { VF_PEAK_STEP, VF_PEAK_RUN, VF_PEAK_SCOPE_COUNT };

/* --offload: CPU offload of ZeRO/FSDP (DeepSpeed offload_optimizer; FSDP
 * CPUOffload(offload_params=True), torchtitan training.enable_cpu_offload:
 * parameters, gradients and states on the host, the step on the CPU). */
enum vf_offload { VF_OFFLOAD_NONE, VF_OFFLOAD_OPTIMIZER, VF_OFFLOAD_PARAMS, VF_OFFLOAD_COUNT };

/* How a 4-bit base is quantized while the model loads (the stack profile's
 * quantize_on_load; a transient of the largest linear in a run's peak):
 * bitsandbytes Params4bit (the bf16 weight moved to the GPU, packed by
 * quantize_4bit) or torchao's to_nf4 (the bf16 weight, its scaled copy,
 * one byte per element of indices, then packed). */
enum vf_quant_load { VF_QLOAD_BITSANDBYTES, VF_QLOAD_TORCHAO, VF_QLOAD_COUNT };

/* A pre-quantized 4-bit checkpoint's layers (--quant gptq|awq; int4 is
 * a generic int4 base): what their autograd keeps in training differs
 * (lib/estimate/estimate.c prequant_saved). */
enum vf_quant_format { VF_QFMT_GENERIC, VF_QFMT_GPTQ, VF_QFMT_AWQ };

/* The tool whose figure a stack's memory report prints. */
enum vf_peak_tool { VF_TOOL_UNKNOWN, VF_TOOL_ALLOCATED, VF_TOOL_RESERVED, VF_TOOL_SMI, VF_TOOL_COUNT };

/* Text encoder kept on the GPU (video DiTs: loaded for validation). */
enum vf_text_encoder { VF_TE_NONE, VF_TE_BF16, VF_TE_INT8, VF_TE_COUNT };

/* LoRA target roles (bitmask). Module names map onto roles:
 * q_proj/to_q/q/query -> Q, k_proj/to_k -> K, v_proj/to_v -> V,
 * o_proj/to_out.0/out_proj/dense -> O, gate_proj/w1 -> GATE,
 * up_proj/w3/fc1/c_fc -> UP, down_proj/w2/fc2 -> DOWN,
 * c_attn -> Q|K|V; all-linear -> every role. */
enum {
	VF_LORA_Q = 1u << 0,
	VF_LORA_K = 1u << 1,
	VF_LORA_V = 1u << 2,
	VF_LORA_O = 1u << 3,
	VF_LORA_GATE = 1u << 4,
	VF_LORA_UP = 1u << 5,
	VF_LORA_DOWN = 1u << 6,
	VF_LORA_ALL = (1u << 7) - 1,  /* all-linear: the layers' linears (peft leaves the head out) */
	VF_LORA_HEAD = 1u << 7,       /* lm_head / output (peft, torchtune apply_lora_to_output,
	                               * litgpt lora_head) */	/* A Mamba mixer's linears (transformers' MambaMixer / Mamba2Mixer):
	 * in_proj, x_proj and dt_proj (Mamba-1 only), out_proj; counted on
	 * the SSM layers of a state-space model or hybrid (loratargets.c). */
	VF_LORA_SSM_IN = 1u << 8,
	VF_LORA_SSM_X = 1u << 9,
	VF_LORA_SSM_DT = 1u << 10,
	VF_LORA_SSM_OUT = 1u << 11,
	VF_LORA_SSM_ALL = VF_LORA_SSM_IN | VF_LORA_SSM_X | VF_LORA_SSM_DT | VF_LORA_SSM_OUT,
	/* an MoE router that is an nn.Linear (hidden -> experts: mixtral's
	 * and qwen3_moe's `gate`), on the MoE layers */
	VF_LORA_ROUTER = 1u << 12,
	/* latent attention's projections (deepseek_v3's DeepseekV3Attention):
	 * q_a_proj hidden -> q rank, q_b_proj q rank -> heads x qk dim,
	 * kv_a_proj_with_mqa hidden -> kv rank + rope dim, kv_b_proj kv rank
	 * -> heads x (nope dim + v dim) */
	VF_LORA_MLA_QA = 1u << 13,
	VF_LORA_MLA_QB = 1u << 14,
	VF_LORA_MLA_KVA = 1u << 15,
	VF_LORA_MLA_KVB = 1u << 16,
	VF_LORA_MLA_ALL = VF_LORA_MLA_QA | VF_LORA_MLA_QB | VF_LORA_MLA_KVA | VF_LORA_MLA_KVB,
};

/* --modules-to-save: peft's ModulesToSaveWrapper, a trainable full copy of
 * the module beside the frozen original (bitmask). */
enum { VF_MTS_HEAD = 1u << 0, VF_MTS_EMBED = 1u << 1 };

/* One model across several GPUs (split.h): none, or whole decoder layers
 * placed on the GPUs in order as accelerate's device_map="auto" does. */
enum vf_split_kind { VF_SPLIT_NONE, VF_SPLIT_LAYERS, VF_SPLIT_COUNT };

/* --max-memory: GPU indexes 0..VF_SETUP_MAX_MEMORY-1, budgets in
 * hundredths of a GiB (0.01..655.35 GiB) to keep the setup small (the
 * search copies it per configuration). */
#define VF_SETUP_MAX_MEMORY 16

/* Which split fields the user gave (vf_setup.split_given). */
enum {
	VF_SPLIT_G_SPLIT = 1u << 0,
	VF_SPLIT_G_TP = 1u << 1,
	VF_SPLIT_G_PP = 1u << 2,
	VF_SPLIT_G_MICRO = 1u << 3,
	VF_SPLIT_G_SEQ_PAR = 1u << 4,
	VF_SPLIT_G_MAX_MEMORY = 1u << 5,
};

/* Which fields the user gave (the others are defaults, listed as
 * assumptions). */
enum {
	VF_SETUP_G_MODE = 1u << 0,
	VF_SETUP_G_PRECISION = 1u << 1,
	VF_SETUP_G_OPTIMIZER = 1u << 2,
	VF_SETUP_G_OPTIMIZER_IMPL = 1u << 3,
	VF_SETUP_G_BATCH = 1u << 4,
	VF_SETUP_G_SEQ = 1u << 5,
	VF_SETUP_G_TARGET_SEQ = 1u << 6,
	VF_SETUP_G_GRAD_ACCUM = 1u << 7,
	VF_SETUP_G_GRAD_CKPT = 1u << 8,
	VF_SETUP_G_LORA_RANK = 1u << 9,
	VF_SETUP_G_LORA_ALPHA = 1u << 10,
	VF_SETUP_G_LORA_TARGETS = 1u << 11,
	VF_SETUP_G_QUANT = 1u << 12,
	VF_SETUP_G_GPUS = 1u << 13,
	VF_SETUP_G_SHARD = 1u << 14,
	VF_SETUP_G_ATTENTION = 1u << 15,
	VF_SETUP_G_CONTEXT = 1u << 16,
	VF_SETUP_G_VIDEO = 1u << 17,
	VF_SETUP_G_AUDIO = 1u << 18,
	VF_SETUP_G_TEXT_ENCODER = 1u << 19,
	VF_SETUP_G_OFFLOAD = 1u << 20,
	VF_SETUP_G_VALIDATION = 1u << 21,
	VF_SETUP_G_GRAD_CLIP = 1u << 22,
	VF_SETUP_G_ZERO_GRAD = 1u << 23,
	VF_SETUP_G_STACK = 1u << 24,
};

struct vf_setup {
	enum vf_mode mode;                 /* default full */
	enum vf_precision precision;       /* default amp (full); bf16 for lora, infer, quant */
	enum vf_optimizer optimizer;       /* default adamw (none for infer) */
	enum vf_optimizer_impl optimizer_impl; /* default foreach */
	int64_t batch;                     /* micro-batch per GPU; default 1 */
	int64_t seq;                       /* tokens per sample; default 2048 */
	int64_t target_seq;                /* encoder-decoder: decoder length; 0 = seq */
	int64_t grad_accum;                /* default 1 */
	bool grad_ckpt;                    /* default false */
	int lora_rank;                     /* default 16 */
	double lora_alpha;                 /* default = rank */
	unsigned lora_targets;             /* VF_LORA_*; default Q|V */
	char lora_target_names[96];        /* --lora-targets as given ("" when not):
					      matched against the model's own modules
					      (vf_lora_targets_resolve, loratargets.h) */
	char lora_targets_stack[48];       /* the stack profile's lora_targets when
					      --lora-targets is not given: "peft"
					      (peft's mapping), "none" (no LoRA
					      recipe) or a list ("" = no profile key) */
	char lora_targets_source[512];     /* where the profile read it (its source, whole:
					      the setup's JSON) */
	char lora_targets_cite[128];       /* the same as its file and commit (the
					      profile's "file", "commit"), for the
					      assumption line; the source without them */
	char lora_targets_shown[96];       /* the targets under the model's own names
					      ("q,v" on t5; "" = the role names) */
	enum vf_quant quant;               /* default none */
	int gpus;                          /* default 1 */
	enum vf_shard shard;               /* default none (ddp when gpus > 1) */
	bool shard_none_ddp;               /* --shard none given over data-parallel GPUs: read as ddp */
	enum vf_attention attention;       /* default sdpa */
	int64_t context_bytes;             /* CUDA context; -1 = by GPU generation */
	/* Video DiTs (kind "dit"): latent tokens come from these. */
	int video_width;                   /* pixels; 0 = not a video setup */
	int video_height;
	int video_frames;
	bool audio;                        /* generate the audio stream; default true */
	enum vf_text_encoder text_encoder; /* default bf16 for video DiTs */
	bool offload_optimizer;            /* video DiTs: states to CPU during validation */
	/* Video DiTs: the validation sampling, a phase of its own at its own
	 * size (the LTX-2 trainer's validation.*). */
	bool validation_off;               /* no validation phase (validation.interval: null) */
	int val_width, val_height, val_frames; /* validation sample; 0 = the training size */
	int val_steps;                     /* denoising steps; 0 = 30 */
	int val_passes;                    /* transformer passes per step; 0 = 4 (conditional,
					      unconditional, STG, modality guidance) */
	unsigned given;                    /* VF_SETUP_G_* the user set */
	/* One model across several GPUs (lib/estimate/split.c). gpus is
	 * dp x tp x pp; with --split layers it is the GPUs the layers go on. */
	enum vf_split_kind split;          /* default none */
	int16_t tp;                        /* tensor-parallel degree; default 1 */
	int16_t pp;                        /* pipeline stages; default 1 */
	int32_t micro_batches;             /* pipeline micro-batches per step (its grad-accum) */
	bool sequence_parallel;            /* Megatron sequence parallelism with --tp */
	uint8_t split_given;               /* VF_SPLIT_G_* the user set */
	uint16_t max_memory_cgib[VF_SETUP_MAX_MEMORY]; /* --max-memory per GPU, GiB/100; 0 none */
	/* The training stack (data/stacks/<stack>.json) and its mechanisms;
	 * a flag overrides the profile (stack_given). */
	char stack[16];                    /* hf (default), torchtune, litgpt, ltx */
	bool adapter_bf16;                 /* LoRA adapters in bf16 (peft: fp32) */
	enum vf_loss loss;
	int loss_chunks;                   /* chunked:N */
	bool compile;                      /* torch.compile (inductor) */
	bool activation_offload;           /* saved activations to the CPU */
	bool optimizer_in_backward;        /* each parameter stepped as its gradient lands */
	bool paged_optimizer;              /* bitsandbytes paged states (unified memory) */
	bool kbit_fp32_rest;               /* quantized base: norms, embeddings, head upcast to fp32 */
	bool kbit_prep_unsharded;          /* ... only where the base is not sharded (FSDP, ZeRO-3) */
	bool nf4_double_quant;             /* NF4 absmax double-quantized */
	unsigned stack_given;              /* VF_STACK_G_* */
	/* Mechanisms of other stacks' recipes (lib/estimate/mechanisms.c). */
	enum vf_peak_scope peak_scope;     /* default step; litgpt run */
	enum vf_peak_tool peak_report;     /* what the stack's own memory report prints */
	bool load_full_per_rank;           /* FSDP load gathers the full state dict on every rank */
	bool kbit_saves_input;             /* bitsandbytes k-bit matmuls save their input */
	bool fsdp_mixed_precision;         /* FSDP2 MixedPrecisionPolicy: bf16 compute over fp32 shards */
	enum vf_quant_load quant_load;     /* a 4-bit base quantized on load: default bitsandbytes */
	enum vf_quant_format quant_format; /* --quant gptq|awq: the checkpoint's layers (int4) */
	int16_t ckpt_every;                /* --grad-ckpt every:N: 1 layer in N checkpointed (0: all) */
	bool ckpt_selective_op;            /* --grad-ckpt selective:op: op-level policy (torchtitan) */
	bool ckpt_reentrant;               /* --grad-ckpt reentrant: torch.utils.checkpoint's reentrant
	                                    * variant (torch 1.x, HF before use_reentrant=False): no
	                                    * saved-tensor hooks, the region's work only */
	enum vf_offload offload;           /* --offload params|optimizer; default none */
	enum vf_grad_clip grad_clip;       /* --grad-clip; default none */
	bool grads_zeroed;                 /* --zero-grad zeros: zero_grad() keeps the gradients
	                                    * (zeroed in place, torch 1.x's set_to_none=False)
	                                    * through the next forward; default none (freed) */
	bool float8;                       /* --float8: torchao float8 training of the layers' linears */
	bool tf32;                         /* fp32 matmuls on the TF32 tensor cores (allow_tf32 True,
	                                    * float32_matmul_precision high/medium); default off */
	uint8_t tf32_from;                 /* enum vf_tf32_from: who set tf32 */
	bool autocast;                     /* --precision bf16: the forward under torch.autocast
	                                    * (HF Trainer bf16=True, accelerate mixed_precision bf16;
	                                    * default on); off: pure bf16 (a bf16 model trained
	                                    * without autocast: torchtune, litgpt's bf16-true, an HF
	                                    * Trainer without the bf16 flag), every op in its inputs'
	                                    * dtype, peft's fp32 adapters' GEMMs in fp32 */
	bool gelu_native;                  /* the stack's model code runs a tanh GELU as one native
	                                    * kernel (litgpt) instead of transformers' Python gelu_new */
	bool kbit_head;                    /* the lm_head quantized with the layers, its weight
	                                    * dequantized to fp16 and cast to the compute dtype per
	                                    * call (litgpt: Lightning BitsandbytesPrecision) */
	bool lora_dropout;                 /* a dropout before each adapter (p > 0): its mask kept
	                                    * (litgpt's config_hub lora_dropout 0.05) */
	bool loss_in_compute_dtype;        /* the chunked loss runs on the compute-dtype logits, no
	                                    * fp32 upcast (litgpt's chunked_cross_entropy) */
	bool graph_held;                   /* the previous step's autograd graph held through the
	                                    * next forward (litgpt's fit loop keeps `logits`) */
	bool fsdp_no_sync;                 /* FSDP with gradient accumulation: the accumulating
	                                    * micro-batches run under no_sync, each unit's whole
	                                    * (unsharded) gradient kept to the synced one (litgpt:
	                                    * fabric.no_backward_sync) */
	bool fsdp_lora_flat;               /* FSDP1 use_orig_params=True wrapping whole layers: a
	                                    * layer's frozen weights and its adapters share one flat
	                                    * parameter, so under no_sync the layer's whole flat
	                                    * gradient is held (litgpt, the LTX-2 trainer); false:
	                                    * only the adapters' own gradients (peft's wrap policy,
	                                    * FSDP2's per-parameter gradients) */
	uint8_t modules_to_save;           /* VF_MTS_* (LoRA): full trainable copies */
	int32_t head_labels;               /* --head classify:N: a task head of N labels in place of
	                                    * the vocabulary head (0: the language-model head) */
};

/* GPU g's --max-memory in bytes; 0 when none. */
int64_t vf_setup_max_memory_bytes(const struct vf_setup *s, int g);

/* The defaults above. */
void vf_setup_defaults(struct vf_setup *s);

/* Name tables: the flag spelling of each value ("amp", "adamw8bit", ...).
 * Return "?" for out-of-range values. */
const char *vf_mode_name(enum vf_mode v);
const char *vf_precision_name(enum vf_precision v);
/* "pytorch-default", "option" or "stack" (JSON setup.tf32_source). */
const char *vf_tf32_from_name(unsigned v);
const char *vf_optimizer_name(enum vf_optimizer v);
const char *vf_optimizer_impl_name(enum vf_optimizer_impl v);
const char *vf_grad_clip_name(enum vf_grad_clip v);
bool vf_grad_clip_parse(const char *s, enum vf_grad_clip *out);
const char *vf_quant_name(enum vf_quant v);
const char *vf_shard_name(enum vf_shard v);
const char *vf_attention_name(enum vf_attention v);
const char *vf_text_encoder_name(enum vf_text_encoder v);
const char *vf_split_kind_name(enum vf_split_kind v);
const char *vf_loss_name(enum vf_loss v);

/* The stack prepares a k-bit base (peft's prepare_model_for_kbit_training:
 * its kbit_fp32_rest on a quantized base), unless the base is sharded over
 * FSDP or ZeRO-3 and the stack prepares only an unsharded one
 * (kbit_prep_unsharded: TRL's is_sharded_qlora). */
/* The flag that sets the VF_SETUP_G_* field bit ("--quant"); NULL for a
 * bit with none. */
const char *vf_setup_flag(unsigned bit);
/* The flags of the bits in `given`, ", " between, into out (n bytes);
 * "" when none. */
void vf_setup_flags_words(unsigned given, char *out, size_t n);
/* Whether an explicit --shard none is read as ddp: training over several
 * data-parallel replicas (gpus / (tp x pp) > 1, not a layer split), whose
 * gradients all-reduce in DDP's buckets, as fit reads it. */
bool vf_setup_none_means_ddp(const struct vf_setup *s);
bool vf_setup_kbit_prep(const struct vf_setup *s);

/* The forward runs under torch.autocast: amp and fp16 always, bf16 unless
 * the setup's autocast is off (pure bf16), fp32 never. */
bool vf_setup_autocast(const struct vf_setup *s);

/* peft's fp32 adapters in a pure bf16 step (LoRA, adapters fp32, autocast
 * off): their inputs cast to fp32 and their GEMMs run in fp32. */
bool vf_setup_fp32_adapter_gemms(const struct vf_setup *s);

/* Parse one value by name (case-sensitive flag spelling; a few aliases such
 * as "adamw-fused", "fp16amp", "bnb8bit", "int8-quanto" are accepted).
 * Return false when the name is unknown. */
bool vf_mode_parse(const char *s, enum vf_mode *out);
bool vf_precision_parse(const char *s, enum vf_precision *out);
bool vf_optimizer_parse(const char *s, enum vf_optimizer *out, enum vf_optimizer_impl *impl);
bool vf_optimizer_impl_parse(const char *s, enum vf_optimizer_impl *out);
bool vf_quant_parse(const char *s, enum vf_quant *out);
bool vf_shard_parse(const char *s, enum vf_shard *out);
bool vf_attention_parse(const char *s, enum vf_attention *out);
bool vf_text_encoder_parse(const char *s, enum vf_text_encoder *out);

/* Parse a LoRA target list ("q_proj,v_proj", "all-linear",
 * "to_k,to_q,to_v,to_out.0") into VF_LORA_* bits. Fails naming the
 * unknown module. */
vf_status vf_lora_targets_parse(const char *s, unsigned *out, struct vf_error *err);
/* Write the roles as module names ("q_proj,v_proj", "all-linear"). */
const char *vf_lora_targets_format(unsigned targets, char *out, size_t n);
/* The setup's targets as shown: under the model's own names where the
 * resolve found them (lora_targets_shown), else as vf_lora_targets_format. */
const char *vf_setup_lora_targets_text(const struct vf_setup *s, char *out, size_t n);

/* Set one field by flag name without the dashes ("batch", "lora-targets",
 * "grad-ckpt" with value NULL, "true" or "false"), marking it given. The
 * one way a setup flag reaches the library: src/ parses the command line
 * (its table: src/opt-setup.c) and hands each value here by name.
 * Fails with VF_EUSAGE naming the flag. */
vf_status vf_setup_set(struct vf_setup *s, const char *name, const char *value,
		       struct vf_error *err);

/* Resolve what depends on other fields (infer -> optimizer none and bf16
 * unless given, a quantized base -> bf16 unless given, gpus > 1 and shard
 * none -> ddp, alpha = rank when not given) and check ranges.
 * Fails with VF_EUSAGE naming the field. */
vf_status vf_setup_finish(struct vf_setup *s, struct vf_error *err);

/* The "setup" object of the estimate --json contract (every flag's
 * resolved value). Caller owns; cJSON_Delete(). */
cJSON *vf_setup_to_json(const struct vf_setup *s);


#endif
