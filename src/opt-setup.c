/* opt-setup.c - the setup flags' table (opt-setup.h): one row per flag, its
 * help line beside it; the value goes by name to vf_setup_set(). */
#include "opt-setup.h"

#include <math.h>

#include "vramfit/estimate/runcost.h"
#include "vramfit/estimate/setup.h"
#include "vramfit/model/arch.h"

#include <inttypes.h>
#include <stdio.h>

vf_status vf_opt_count(const struct vf_option *o, const char *v, void *base, struct vf_error *err)
{
	double x;
	if (!vf_runcost_parse_count(v, &x))
		return vf_error_set(err, VF_EUSAGE, "--%s %s: expected a positive count (1e9, 22B)",
				    o->name, v);
	*(double *)((char *)base + o->off) = x;
	return VF_OK;
}

vf_status vf_opt_steps(const struct vf_option *o, const char *v, void *base, struct vf_error *err)
{
	double x;
	if (!vf_runcost_parse_count(v, &x) || x != floor(x))
		return vf_error_set(err, VF_EUSAGE, "--%s %s: expected a whole number of steps", o->name, v);
	*(int64_t *)((char *)base + o->off) = (int64_t)x;
	return VF_OK;
}

static vf_status setup_cb(const struct vf_option *o, const char *v, void *base,
			  struct vf_error *err)
{
	return vf_setup_set(base, o->name, v, err);
}

/* A flag with a value; a switch (that also takes --name=true|false); a
 * switch without a value. */
#define SET(n, a, ch, h) \
	{.type = VF_OPT_CALLBACK, .name = (n), .argh = (a), .help = (h), .cb = setup_cb, .choices = (ch)}
#define SWITCH(n, h) \
	{.type = VF_OPT_CALLBACK, .name = (n), .help = (h), .cb = setup_cb, .flags = VF_OPTF_OPTARG}
#define NEGATE(n, h) {.type = VF_OPT_CALLBACK, .name = (n), .help = (h), .cb = setup_cb}

static const char *const modes[] = {"full", "lora", "infer", NULL};
static const char *const precisions[] = {"amp", "bf16", "fp16", "fp32", NULL};
static const char *const optimizers[] = {"adamw", "adamw8bit", "adafactor", "sgd", "lion",
					  "paged-adamw", "paged-adamw8bit", NULL};
static const char *const impls[] = {"foreach", "fused", "for", NULL};
static const char *const clips[] = {"none", "foreach", "for", NULL};
static const char *const zerograds[] = {"none", "zeros", NULL};
static const char *const quants[] = {"none", "int8", "int4", "nf4", "fp8", NULL};
static const char *const shards[] = {"none", "ddp", "zero1", "zero2", "zero3", "fsdp", NULL};
static const char *const attentions[] = {"sdpa", "eager", "flash", NULL};
static const char *const encoders[] = {"none", "bf16", "int8", NULL};
static const char *const splits[] = {"none", "layers", NULL};
static const char *const stacks[] = {"hf", "torchtune", "litgpt", "torchtitan", "ltx", NULL};
static const char *const scopes[] = {"step", "run", NULL};
static const char *const offloads[] = {"none", "optimizer", "params", NULL};
static const char *const losses[] = {"full", "chunked:8", "fused-linear", NULL};
static const char *const dtypes[] = {"fp32", "bf16", NULL};
static const char *const targets[] = {"q_proj,v_proj", "all-linear", NULL};

const struct vf_option vf_setup_options[] = {
	OPT_GROUP("Setup:"),
	SET("mode", "full|lora|infer", modes,
	    "what runs (default full); QLoRA is --mode lora\n"
	    "--quant nf4"),
	SET("precision", "amp|bf16|fp16|fp32", precisions,
	    "amp = fp32 weights under bf16 autocast (default of\n"
	    "full); bf16 = weights stored in bf16 (default of lora,\n"
	    "infer and a quantized base); fp16 = fp16 autocast"),
	SET("optimizer", "NAME", optimizers,
	    "adamw, adamw8bit, adafactor, sgd, lion (default adamw);\n"
	    "paged-adamw, paged-adamw8bit: bitsandbytes paged states"),
	SET("optimizer-impl", "foreach|fused|for", impls, "(default foreach, PyTorch on CUDA)"),
	SET("grad-clip", "none|foreach|for", clips,
	    "clip_grad_norm_ before each optimizer step (default\n"
	    "none; HF Trainer clips at max_grad_norm 1.0): foreach =\n"
	    "torch 2.x's grouped kernels, for = torch 1.x's loop"),
	SET("zero-grad", "none|zeros", zerograds,
	    "what zero_grad() leaves after each optimizer step:\n"
	    "none = gradients freed (default; torch >= 2.0, HF\n"
	    "Trainer since 2023); zeros = zeroed in place and held\n"
	    "through the next forward (torch 1.x's default)"),
	SET("batch", "N", NULL, "micro-batch per GPU (default 1)"),
	SET("seq", "N", NULL, "tokens per sample (default 2048; 4k = 4096)"),
	SET("target-seq", "N", NULL, "encoder-decoder: decoder length (default = seq)"),
	SET("grad-accum", "N", NULL, "micro-batches per optimizer step (default 1)"),
	SWITCH("grad-ckpt", "activation checkpointing (default off): every layer;\n"
			    "=selective:op keeps the matmul and attention outputs\n"
			    "of torchtitan's op policy; =every:N checkpoints one\n"
			    "layer in N; =reentrant: torch.utils.checkpoint's\n"
			    "reentrant variant (torch 1.x; default: non-reentrant)"),
	NEGATE("no-grad-ckpt", "no activation checkpointing"),
	SET("lora-rank", "R", NULL, "LoRA rank (default 16)"),
	SET("lora-alpha", "A", NULL, "LoRA alpha (default = rank)"),
	SET("lora-targets", "LIST", targets,
	    "q_proj,v_proj | all-linear | LIST, in the model's own\n"
	    "names (t5 q,v; gpt2 c_attn; ...) (default: the stack's\n"
	    "recipe, q,v under litgpt and torchtune; else peft's for\n"
	    "the model type, q_proj,v_proj for llama; none, so\n"
	    "required, where peft has none: phi3, qwen3_moe, Mamba,\n"
	    "ViT, Whisper); lm_head adds an adapter on the output\n"
	    "layer; Mamba mixers: in_proj,x_proj,dt_proj,out_proj"),
	SET("head", "lm|classify:N", NULL,
	    "the output head: the vocabulary (default) or a task\n"
	    "head of N labels (sequence/token classification)"),
	SET("modules-to-save", "LIST", NULL,
	    "LoRA: lm_head, embed_tokens trained as full copies\n"
	    "(peft modules_to_save)"),
	SET("quant", "none|int8|int4|nf4|fp8", quants,
	    "frozen base weights (default none); gptq, awq: int4\n"
	    "in groups of 128, trained as auto-gptq / AutoAWQ do"),
	SET("gpus", "N", NULL, "GPUs of the run (default 1)"),
	SET("shard", "none|ddp|zero1|zero2|zero3|fsdp", shards, "(default none; ddp when --gpus N > 1)"),
	SET("attention", "sdpa|eager|flash", attentions, "(default sdpa)"),
	SET("context-mib", "N", NULL,
	    "CUDA context (default by GPU generation;\n"
	    "527 MiB measured for PyTorch 2.11 on an H200)"),
	SET("video", "WxHxF", NULL, "video DiTs: resolution and frames (960x544x89)"),
	SWITCH("audio", "video DiTs: the audio stream (default on)"),
	NEGATE("no-audio", "video DiTs: no audio stream"),
	SET("text-encoder", "none|bf16|int8", encoders, "video DiTs: text encoder for the validation prompts"),
	SWITCH("offload-optimizer", "video DiTs: optimizer states on the CPU during validation"),
	NEGATE("no-offload-optimizer", "video DiTs: optimizer states kept on the GPU during validation"),
	SET("offload", "none|optimizer|params", offloads,
	    "CPU offload: optimizer = states and step on the host\n"
	    "(DeepSpeed offload_optimizer); params = parameters,\n"
	    "gradients and states on the host (FSDP CPUOffload);\n"
	    "PCIe copies and the host's step in the step time"),
	SET("validation", "off|WxHxF[:STEPS[:PASSES]]", NULL,
	    "video DiTs: the validation phase's sample (default: the training size, 30 steps, 4 passes)"),
	OPT_GROUP("One model across GPUs (--gpus = data parallel x tp x pp):"),
	SET("split", "none|layers", splits,
	    "layers: whole decoder layers on the GPUs in order\n"
	    "(accelerate device_map=\"auto\")"),
	SET("max-memory", "GPU=GiB[,...]", NULL, "layer split: budget per GPU (accelerate max_memory)"),
	SET("tp", "N", NULL, "tensor parallel: heads, MLP, vocabulary split N ways"),
	SWITCH("sequence-parallel", "with --tp: norms and dropout split over the sequence"),
	SET("pp", "N", NULL, "pipeline: N stages"),
	SET("micro-batches", "M", NULL, "pipeline: M micro-batches per step (1F1B)"),
	OPT_GROUP("Training stack (data/stacks/NAME.json sets the mechanisms; flags override):"),
	SET("stack", "hf|torchtune|litgpt|torchtitan|ltx", stacks,
	    "(default hf: transformers + peft + torch optimizers)"),
	SET("peak-scope", "step|run", scopes,
	    "the peak a memory report reads: a steady-state step\n"
	    "(peak statistics reset after the model load) or the\n"
	    "whole run, load transients included (default: the\n"
	    "stack's own report: litgpt run, the others step)"),
	SET("loss", "full|chunked:N|fused-linear", losses, "how the logits and the loss are computed"),
	SWITCH("compile", "torch.compile"),
	NEGATE("no-compile", "no torch.compile"),
	SWITCH("activation-offload", "saved activations on the CPU"),
	NEGATE("no-activation-offload", "saved activations on the GPU"),
	SWITCH("optimizer-in-backward", "the optimizer step inside the backward pass"),
	SWITCH("float8", "torchao float8 training of the layers' linears (compute\n"
		         "capability 8.9 or later: Ada, Hopper, Blackwell)"),
	NEGATE("no-float8", "no float8 linears"),
	SWITCH("tf32", "--precision fp32: matmuls on the TF32 tensor cores\n"
		       "(allow_tf32 = True, float32_matmul_precision high,\n"
		       "HF tf32=True; Ampere and later). Default: the stack's\n"
		       "(litgpt on), else PyTorch's (off: IEEE fp32)"),
	NEGATE("no-tf32", "--precision fp32: matmuls in IEEE fp32 (PyTorch's default)"),
	SWITCH("autocast", "--precision bf16: the forward under torch.autocast\n"
			   "(HF Trainer bf16=True, accelerate mixed_precision\n"
			   "bf16). Default: the stack's (torchtune and litgpt\n"
			   "off, else on)"),
	NEGATE("no-autocast", "--precision bf16: pure bf16, no autocast (a bf16 model\n"
			      "trained without the bf16 flag): every op in its\n"
			      "inputs' dtype, peft's fp32 adapters' GEMMs in fp32"),
	SET("adapter-dtype", "fp32|bf16", dtypes, "the LoRA adapter's dtype"),
	SWITCH("lora-dropout", "a dropout before each LoRA adapter (peft's LoraConfig\n"
			       "lora_dropout > 0): its mask, and its time. Default:\n"
			       "the stack's (litgpt on, the others off)"),
	NEGATE("no-lora-dropout", "no dropout before the adapters (lora_dropout 0)"),
	OPT_END(),
};

enum vf_pos_verdict vf_opt_position_check(const struct vf_arch *arch, const char *model, struct vf_setup *s,
					  int64_t ctx, char *note, size_t nn, char *what, size_t nw)
{
	note[0] = what[0] = '\0';
	bool hard;
	const char *kind;
	int64_t limit = vf_arch_position_limit(arch, &hard, &kind);
	bool by_ctx = s->mode == VF_MODE_INFER && ctx > s->seq;
	int64_t n = by_ctx ? ctx : s->seq;
	const char *flag = by_ctx ? "--ctx" : (s->given & VF_SETUP_G_SEQ) ? "--seq" : "--seq (default)";
	if (limit <= 0 || n <= limit)
		return VF_POS_OK;
	if (hard && !by_ctx && !(s->given & VF_SETUP_G_SEQ)) {
		/* the default length is no request: the longest the table holds */
		snprintf(note, nn, "--seq %" PRId64 ": the default %" PRId64 " shortened to the model's %" PRId64
			 " %s positions (max_positions)", limit, s->seq, limit, kind);
		s->seq = limit;
		return VF_POS_SHORTENED;
	}
	if (hard) {
		snprintf(note, nn, "%s %" PRId64 ": %s has %s positions for %" PRId64 " tokens (max_positions) "
			 "and cannot run longer; give %s %" PRId64 " or less",
			 flag, n, model, kind, limit, by_ctx ? "--ctx" : "--seq", limit);
		return VF_POS_REFUSED;
	}
	snprintf(what, nw, "%s %" PRId64 " beyond max_positions %" PRId64, flag, n, limit);
	snprintf(note, nn, "%s %" PRId64 " tokens beyond the %" PRId64 " positions the model was trained on "
		 "(max_positions; %s%s positions: it runs, but past its trained context): memory and time as "
		 "computed, the result approximate",
		 flag, n, limit, kind, kind[0] ? "" : "not learned");
	return VF_POS_BEYOND;
}

/* Each training-stack mechanism's flag (VF_STACK_G_* given). */
static const struct {
	unsigned bit;
	const char *flag;
} stack_flags[] = {
	{VF_STACK_G_LOSS, "--loss"},
	{VF_STACK_G_COMPILE, "--(no-)compile"},
	{VF_STACK_G_OFFLOAD, "--(no-)activation-offload"},
	{VF_STACK_G_OIB, "--optimizer-in-backward"},
	{VF_STACK_G_PAGED, "--optimizer paged-*"},
	{VF_STACK_G_FLOAT8, "--(no-)float8"},
	{VF_STACK_G_LORA_DROPOUT, "--(no-)lora-dropout"},
	{VF_STACK_G_ADAPTER, "--adapter-dtype"},
	{VF_STACK_G_TF32, "--(no-)tf32"},
	{VF_STACK_G_AUTOCAST, "--(no-)autocast"},
	{VF_STACK_G_PEAK_SCOPE, "--peak-scope"},
};

/* The rows of stack_flags above --tf32: mechanisms with memory or time of
 * their own (tf32, autocast and the peak's scope are said where ignored). */
#define MECHANISM_FLAGS 8

/* The first of the mechanisms in bits (VF_STACK_G_*) among the first `of`
 * rows of stack_flags, or NULL. */
static const char *stack_flag(unsigned bits, size_t of)
{
	for (size_t i = 0; i < of && i < sizeof stack_flags / sizeof stack_flags[0]; i++)
		if (bits & stack_flags[i].bit)
			return stack_flags[i].flag;
	return NULL;
}

const char *vf_opt_setup_flag_given(const struct vf_setup *s, unsigned allowed)
{
	for (unsigned bit = 1; bit; bit <<= 1)
		if ((s->given & bit & ~allowed) && vf_setup_flag(bit))
			return vf_setup_flag(bit);
	const char *f = stack_flag(s->stack_given, sizeof stack_flags / sizeof stack_flags[0]);
	if (f)
		return f;
	if (s->offload != VF_OFFLOAD_NONE)
		return "--offload";
	if (s->head_labels > 0)
		return "--head";
	if (s->modules_to_save)
		return "--modules-to-save";
	return NULL;
}

/* The flag of a language model's option or a training stack's mechanism
 * given in s that the estimators of other model kinds (dit.c, vit.c) do
 * not model: NULL when none; *lm_option when it is a language model's
 * option. lm: the tokens are the sample's (a DiT, a vision encoder), so
 * --seq and the vocabulary head's options are not theirs. */
static const char *unmodelled_flag(const struct vf_setup *s, bool lm, bool *lm_option)
{
	*lm_option = lm;
	if (lm && (s->given & VF_SETUP_G_SEQ))
		return "--seq";
	if (lm && (s->given & VF_SETUP_G_TARGET_SEQ))
		return "--target-seq";
	if (lm && s->head_labels > 0)
		return "--head";
	if (lm && s->modules_to_save)
		return "--modules-to-save";
	*lm_option = false;
	if (s->given & VF_SETUP_G_ATTENTION)
		return "--attention";
	const char *f = stack_flag(s->stack_given, MECHANISM_FLAGS);
	if (f)
		return f;
	if (s->offload != VF_OFFLOAD_NONE)
		return "--offload";
	if ((s->given & VF_SETUP_G_GRAD_CKPT) && (s->ckpt_every > 0 || s->ckpt_selective_op || s->ckpt_reentrant))
		return "--grad-ckpt";
	if ((s->given & VF_SETUP_G_GRAD_CLIP) && s->grad_clip != VF_CLIP_NONE)
		return "--grad-clip";
	if ((s->given & VF_SETUP_G_ZERO_GRAD) && s->grads_zeroed)
		return "--zero-grad";
	return NULL;
}

/* kind_models: false with msg naming the flag when s asks what the
 * estimator of `what` (plural: "DiTs") does not model. */
static bool kind_models(const struct vf_setup *s, const char *what, bool lm, char *msg, size_t n)
{
	bool lm_option;
	const char *flag = unmodelled_flag(s, lm, &lm_option);
	if (!flag)
		return true;
	if (lm_option)
		snprintf(msg, n, "%s: a language model's option, not modelled for %s: their tokens are the "
			 "sample's (its resolution and frames, or its audio) and they have no vocabulary head",
			 flag, what);
	else
		snprintf(msg, n, "%s: not modelled for %s: their estimate would be the same without it; leave "
			 "it out", flag, what);
	return false;
}

bool vf_opt_vision_setup_ok(const struct vf_setup *s, bool vlm, char *msg, size_t n)
{
	if (s->given & (VF_SETUP_G_AUDIO | VF_SETUP_G_TEXT_ENCODER | VF_SETUP_G_VALIDATION | VF_SETUP_G_OFFLOAD)) {
		snprintf(msg, n, "--audio, --text-encoder, --validation and --(no-)offload-optimizer apply to "
			 "video DiTs and other diffusion models, not to vision, speech or multimodal encoders");
		return false;
	}
	/* a VLM's language model runs the LLM estimator with every flag */
	if (vlm)
		return true;
	if (!kind_models(s, "vision and speech encoders", true, msg, n))
		return false;
	const char *flag = (s->given & VF_SETUP_G_QUANT) && s->quant != VF_QUANT_NONE ? "--quant"
			   : s->shard == VF_SHARD_ZERO1 || s->shard == VF_SHARD_ZERO2   ? "--shard"
										       : NULL;
	if (flag) {
		snprintf(msg, n, "%s: not modelled for vision and speech encoders (their estimate counts the weights in "
			 "the precision's dtype, and shards weights, gradients and states under fsdp or zero3 "
			 "only); leave it out", flag);
		return false;
	}
	return true;
}

bool vf_opt_dit_setup_ok(const struct vf_setup *s, char *msg, size_t n)
{
	const unsigned attn = VF_LORA_Q | VF_LORA_K | VF_LORA_V | VF_LORA_O;
	bool lora = s->mode == VF_MODE_LORA || !(s->given & VF_SETUP_G_MODE); /* fit's DiT default: LoRA */
	if (lora && (s->given & VF_SETUP_G_LORA_TARGETS) &&
	    (!(s->lora_targets & attn) || (s->lora_targets & ~attn))) {
		char t[96];
		snprintf(msg, n, "--lora-targets %s: the video DiT estimate models adapters on the attention "
			 "projections only (to_q, to_k, to_v, to_out.0: the LTX-2 trainer's target_modules); the "
			 "feed-forward and other linears are not modelled",
			 vf_lora_targets_format(s->lora_targets, t, sizeof t));
		return false;
	}
	if (!kind_models(s, "DiTs", true, msg, n))
		return false;
	if (s->shard == VF_SHARD_ZERO1 || s->shard == VF_SHARD_ZERO2) {
		/* the DiT estimate shards nothing under them: a usage error, not a
		 * figure that looks sharded */
		snprintf(msg, n, "--shard %s: not modelled for video DiTs (their optimizer states and gradients "
			 "would be counted whole); give --shard fsdp (the LTX-2 trainer's sharding), ddp or none",
			 vf_shard_name(s->shard));
		return false;
	}
	return true;
}
