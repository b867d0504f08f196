/* cmd-estimate.c - `vramfit estimate MODEL [setup flags] [--gpu SPEC]...
 * [--json]`: peak memory (breakdown by term, peak allocated, peak on
 * device), whether it fits each GPU, headroom, the largest micro-batch and
 * the step time; every assumption listed. Also `--check-groundtruth FILE`:
 * the estimator against measured runs (lib/estimate/groundtruth.c, the code the
 * unit test uses). */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "estimate-engine.h"
#include "estimate-gguf.h"
#include "opt-setup.h"
#include "vramfit/estimate/advice.h"
#include "estimate-tier.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/gpu/gpu-list.h"
#include "vramfit/estimate/groundtruth.h"
#include "vramfit/estimate/infer.h"
#include "vramfit/estimate/pipeline.h"
#include "vramfit/base/json.h"
#include "vramfit/model/model.h"
#include "vramfit/model/models.h"
#include "vramfit/report/report.h"
#include "vramfit/estimate/runcost.h"
#include "vramfit/estimate/search.h"
#include "vramfit/estimate/loratargets.h"
#include "vramfit/estimate/setup.h"
#include "vramfit/estimate/split.h"

#define MAX_GPUS 64
#define MAX_ASSUME 40

static const char usage[] =
	"usage: vramfit estimate MODEL [setup flags] [--gpu SPEC]... [--tokens T | --steps S]\n"
	"                        [--price USD] [--margin F] [--json] [--html FILE]\n"
	"       vramfit estimate --params N [setup flags] [--gpu SPEC]... [--json]\n"
	"       vramfit estimate --check-groundtruth FILE [--json]\n"
	"\n"
	"Peak GPU memory and step time of a training or inference run, before any\n"
	"GPU time is spent: a breakdown by term (weights, gradients, optimizer states\n"
	"and temporaries, autocast copies, activations, logits, KV cache, CUDA context,\n"
	"allocator reserve), the peak allocated and the peak on the device (what\n"
	"nvidia-smi would show), then per GPU: fits or not, headroom, the largest\n"
	"micro-batch that fits, step time. Every default used is listed.\n"
	"\n"
	"MODEL is a catalog id (llama2-7b, ltx-2-19b, ...), a config.json, a model or\n"
	"adapter directory or a .safetensors file, a Hub id (org/name[@revision]);\n"
	"--params N alone estimates a generic llama-like transformer of N parameters.\n"
	"A quantized checkpoint, or a config.json with a quantization_config, loads\n"
	"its base as stored (--quant from it; LoRA unless --mode). A .gguf file (or\n"
	"org/name:TAG) is estimated as llama.cpp runs it: weights as stored, KV cache\n"
	"at --ctx, --n-gpu-layers offload.\n"
	"\n"
	"GPUs: --gpu ID | ID:N | NAME=MiB (repeatable; `vramfit gpus` lists the ids);\n"
	"--gpu A,B (e.g. rtx-3090,rtx-4080): one machine's cards serving together\n"
	"(--engine llamacpp splits the layers by each card's free memory);\n"
	"without --gpu the GPUs of this machine (for llamacpp all of them as one set,\n"
	"with the free memory they report), and with none the catalog's common cards.\n";


struct assume {
	char items[MAX_ASSUME][480];
	int n;
};

static void assume(struct assume *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void assume(struct assume *a, const char *fmt, ...)
{
	if (a->n >= MAX_ASSUME)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->items[a->n++], sizeof a->items[0], fmt, ap);
	va_end(ap);
}

/* One GPU row: a catalog spec (or one made from NAME=MiB) and a count. */
struct gpu_row {
	struct vf_gpu_spec spec;
	int count;
	struct vf_setup setup;   /* the setup run on it (ID:N: data parallel over N) */
	struct vf_advice advice; /* when it does not fit: the cheapest changes that do */
	struct vf_estimate est;
	bool fits;
	int64_t headroom;
	int64_t max_batch;
	struct vf_split *split;  /* --split/--tp/--pp: what each GPU holds (owned) */
	char split_hint[192];    /* inference too big for one: the split that fits */
	char tier_what[512];     /* the trainer's model: the tier config it runs (estimate-tier.h) */
	unsigned tier_over;      /* the knobs flags laid over it (VF_SETUP_G_*; vf_setup_flag) */
	char users_hint[200];    /* transformers: no advice holds --users at --ctx: what does */
	struct vf_infer inf;     /* --mode infer of a language model: as the engine serves it */
	bool has_inf;
	bool ctx_refused;        /* transformers: the --seq forward fits, one sequence of --ctx not */
	bool users_refused;      /* transformers: one sequence of --ctx fits, --users of them at once
				  * not (inf.users_peak_bytes) */
	bool users_verdict;      /* transformers: fits and headroom are --users sequences of --ctx
				  * at once (inf.users_peak_bytes) */
	bool ctx_verdict;        /* transformers: fits and headroom are one sequence of --ctx's
				  * (inf.one_peak_bytes), longer than the --seq forward the memory
				  * table shows */
	/* one machine's cards serving together (--gpu A,B, or the probed
	 * devices for llama.cpp): spec is device 0's with the set's name */
	bool set;
	bool unequal;            /* the set's cards differ */
	int ndev;
	struct vf_gpu_spec dev[VF_INFER_MAX_DEVICES];
	int64_t dev_free_mib[VF_INFER_MAX_DEVICES]; /* the probe's free memory; 0 unknown */
};

/* The flag that named the sequences decoding at once (vf_cli_infer_users):
 * a hint to change their number names the flag the user gave. */
static const char *users_flag(const struct vf_setup *s)
{
	return s->mode == VF_MODE_INFER && (s->given & VF_SETUP_G_BATCH) ? "--batch" : "--users";
}

static void set_devices(const struct gpu_row *g, struct vf_infer_opts *o);

/* "a, b or c": the remedy's parts joined into o (n bytes). */
static void join_parts(char *o, size_t n, const char *const *part, int np)
{
	size_t k = 0;
	o[0] = '\0';
	for (int i = 0; i < np && k < n; i++)
		k += (size_t)snprintf(o + k, n - k, "%s%s", i == 0 ? "" : i == np - 1 ? ", or " : ", ",
				      part[i]);
}

/* What to try when no allowed change fits: for the dominant term, only
 * what the setup does not already have and the advice search did not try
 * on its own, then the split that fits
 * (split_hint, tried by split_fits), then a smaller model. */
static const char *remedy(char *o, size_t n, enum vf_term t, const struct vf_setup *s,
			  const char *split_hint)
{
	const char *part[8];
	int np = 0;
	bool sharded = s->shard == VF_SHARD_ZERO3 || s->shard == VF_SHARD_FSDP;
	bool infer = s->mode == VF_MODE_INFER;
	switch (t) {
	case VF_TERM_ACTIVATIONS:
		/* the advice search tried checkpointing on already: only with a
		 * smaller batch or sequence (which it does not change) is it new */
		part[np++] = !s->grad_ckpt && !infer ? "a smaller --batch or --seq together with --grad-ckpt"
						     : "a smaller --batch or --seq";
		break;
	case VF_TERM_OPTIMIZER:
		if (s->optimizer != VF_OPT_ADAMW8BIT && s->optimizer != VF_OPT_SGD)
			part[np++] = "--optimizer adamw8bit";
		if (s->shard == VF_SHARD_NONE || s->shard == VF_SHARD_DDP)
			part[np++] = "--shard zero1/zero2 over several GPUs";
		if (s->mode == VF_MODE_FULL)
			part[np++] = "--mode lora";
		break;
	case VF_TERM_OPTIMIZER_TEMP:
		if (s->optimizer_impl != VF_OPTIMPL_FUSED)
			part[np++] = "--optimizer-impl fused (no foreach temporary)";
		break;
	case VF_TERM_WEIGHTS:
		if (s->mode == VF_MODE_FULL) {
			part[np++] = "--mode lora with --quant int8/nf4";
			if (!sharded)
				part[np++] = "--shard fsdp";
		} else if (s->quant == VF_QUANT_NONE) {
			part[np++] = "--quant int8 or nf4";
		} else if (s->quant == VF_QUANT_INT8 || s->quant == VF_QUANT_FP8) {
			part[np++] = "--quant nf4";
		}
		break;
	case VF_TERM_GRADIENTS:
		if (s->mode == VF_MODE_FULL)
			part[np++] = "--mode lora";
		if (s->shard != VF_SHARD_ZERO2 && !sharded)
			part[np++] = "--shard zero2/fsdp over several GPUs";
		break;
	case VF_TERM_AUTOCAST_CACHE:
		if (s->precision != VF_PREC_BF16)
			part[np++] = "--precision bf16 (no fp32 master weights to cast)";
		break;
	case VF_TERM_LOGITS:
		part[np++] = "a smaller --batch or --seq (the loss holds fp32 logits)";
		break;
	case VF_TERM_KV_CACHE:
		part[np++] = "a smaller --batch or --seq";
		break;
	default:
		break;
	}
	if (split_hint && split_hint[0])
		part[np++] = split_hint;
	part[np++] = "a smaller model";
	join_parts(o, n, part, np);
	return o;
}

/* An inference that one GPU does not hold: the fewest GPUs of this kind
 * (2, 4, 8) over which a layer split or tensor parallelism fits, each
 * checked by running the split's estimate. "" when none fits. */
static void split_fits(const struct vf_arch *arch, const struct vf_setup *s,
		       const struct vf_gpu_spec *gpu, char *o, size_t n)
{
	o[0] = '\0';
	if (s->mode != VF_MODE_INFER || vf_split_active(s))
		return;
	struct vf_split *sp = calloc(1, sizeof *sp);
	if (!sp)
		return;
	for (int g = 2; g <= 8 && !o[0]; g *= 2) {
		const char *part[2];
		char buf[2][96];
		int np = 0;
		for (int k = 0; k < 2; k++) {
			struct vf_setup t = *s;
			struct vf_error err = {0};
			t.gpus = g;
			t.given |= VF_SETUP_G_GPUS;
			t.shard = VF_SHARD_NONE;
			if (k == 0)
				t.split = VF_SPLIT_LAYERS;
			else
				t.tp = g;
			if (vf__split_run(arch, &t, gpu, false, sp, &err) == VF_OK && sp->fits) {
				if (k == 0)
					snprintf(buf[np], sizeof buf[np], "--gpu %s:%d --split layers", gpu->id, g);
				else
					snprintf(buf[np], sizeof buf[np], "--gpu %s:%d --tp %d", gpu->id, g, g);
				part[np] = buf[np];
				np++;
			}
		}
		if (np == 2)
			snprintf(o, n, "%s or %s (both fit)", part[0], part[1]);
		else if (np == 1)
			snprintf(o, n, "%s (fits)", part[0]);
	}
	free(sp);
}

/* Flags the setup's mode makes meaningless are named, never dropped
 * silently: LoRA's outside --mode lora, checkpointing under inference,
 * --tf32 where no matmul runs in fp32 (torch.backends.cuda.matmul.allow_tf32
 * reaches fp32 matmuls only; autocast and 16-bit weights run them in bf16 or
 * fp16), --target-seq on a model without T5's decoder (t5: the estimate
 * reads it for FC_T5 only). */
/* The training flags given to an inference estimate, which it has no use
 * for (its forward takes none of them), as "--loss, --float8" into o. */
static void infer_ignored(const struct vf_setup *s, char *o, size_t n)
{
	const char *f[8];
	int k = 0;
	if (s->given & VF_SETUP_G_OPTIMIZER_IMPL)
		f[k++] = "--optimizer-impl";
	if ((s->given & VF_SETUP_G_GRAD_CLIP) && s->grad_clip != VF_CLIP_NONE)
		f[k++] = "--grad-clip";
	if ((s->given & VF_SETUP_G_ZERO_GRAD) && s->grads_zeroed)
		f[k++] = "--zero-grad";
	if (s->stack_given & VF_STACK_G_LOSS)
		f[k++] = "--loss";
	if ((s->stack_given & VF_STACK_G_LORA_DROPOUT) && s->lora_dropout)
		f[k++] = "--lora-dropout";
	if (s->offload != VF_OFFLOAD_NONE)
		f[k++] = "--offload";
	if ((s->stack_given & VF_STACK_G_OFFLOAD) && s->activation_offload)
		f[k++] = "--activation-offload";
	if ((s->stack_given & VF_STACK_G_OIB) && s->optimizer_in_backward)
		f[k++] = "--optimizer-in-backward";
	o[0] = 0;
	for (int i = 0; i < k; i++)
		snprintf(o + strlen(o), n - strlen(o), "%s%s", i ? ", " : "", f[i]);
	if (s->modules_to_save)
		snprintf(o + strlen(o), n - strlen(o), "%s--modules-to-save", o[0] ? ", " : "");
	if ((s->stack_given & VF_STACK_G_FLOAT8) && s->float8)
		snprintf(o + strlen(o), n - strlen(o), "%s--float8", o[0] ? ", " : "");
}

static void ignored_flags(const struct vf_setup *s, bool t5, struct assume *a)
{
	static const struct {
		unsigned bit;
		bool stack;
		const char *flag;
	} lora[] = {{VF_SETUP_G_LORA_RANK, false, "--lora-rank"},
		    {VF_SETUP_G_LORA_ALPHA, false, "--lora-alpha"},
		    {VF_SETUP_G_LORA_TARGETS, false, "--lora-targets"},
		    {VF_STACK_G_ADAPTER, true, "--adapter-dtype"}};
	char names[80] = "";
	if (s->mode != VF_MODE_LORA)
		for (size_t i = 0; i < sizeof lora / sizeof lora[0]; i++)
			if ((lora[i].stack ? s->stack_given : s->given) & lora[i].bit)
				snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
					 names[0] ? ", " : "", lora[i].flag);
	if (names[0])
		assume(a, "%s ignored: mode %s trains no adapters (--mode lora)", names, vf_mode_name(s->mode));
	if (s->mode == VF_MODE_INFER && (s->given & VF_SETUP_G_GRAD_CKPT))
		assume(a, "--grad-ckpt ignored: inference has no backward pass to checkpoint");
	if (s->mode == VF_MODE_INFER) {
		char tr[160];
		infer_ignored(s, tr, sizeof tr);
		if (tr[0])
			assume(a, "%s ignored: inference runs no loss, backward, optimizer step or adapters' "
				  "dropout", tr);
	}
	if (s->tf32_from == VF_TF32_OPTION && s->precision != VF_PREC_FP32 && !vf_setup_fp32_adapter_gemms(s))
		assume(a, "%s ignored: TF32 applies to fp32 matmuls, and --precision %s runs them in %s",
		       s->tf32 ? "--tf32" : "--no-tf32", vf_precision_name((enum vf_precision)s->precision),
		       s->precision == VF_PREC_FP16 ? "fp16" : "bf16");
	if (!t5 && (s->given & VF_SETUP_G_TARGET_SEQ))
		assume(a, "--target-seq ignored: only an encoder-decoder model (t5) has a decoder length of "
			  "its own; --seq is this model's");
}

/* The training loop's steps around the optimizer that the LLM step models
 * (the DiT path does not): clip_grad_norm_ and what zero_grad() leaves. */
static void train_loop_assumptions(const struct vf_setup *s, struct assume *a)
{
	if (!(s->given & VF_SETUP_G_GRAD_CLIP))
		assume(a, "gradient clipping %s: no clip_grad_norm_ before the optimizer step (the HF "
			  "Trainer's max_grad_norm 1.0 is --grad-clip foreach)",
		       vf_grad_clip_name(s->grad_clip));
	if (!(s->given & VF_SETUP_G_ZERO_GRAD))
		assume(a, "zero_grad %s: gradients freed after each optimizer step, PyTorch 2.x's default "
			  "(--zero-grad)",
		       s->grads_zeroed ? "zeros" : "none");
}

/* The estimate runs the model's attention eager whatever --attention says
 * (estimate.c's eager_attn: T5, and arch families with only explicit
 * scores); VF_ATTN_EAGER itself needs no such line. */
static bool eager_family(const struct vf_setup *s, const struct vf_arch *arch)
{
	if (s->attention == VF_ATTN_EAGER)
		return false;
	return arch->eager_attention || strcmp(arch->family, "t5") == 0;
}

/* Where the LoRA rank and targets came from: --lora-targets, the stack's
 * own default (its profile's lora_targets) or peft's mapping. */
static void lora_assumptions(const struct vf_setup *s, bool dit, const char *family, struct assume *a)
{
	char t[128];
	unsigned g = s->given;
	if (!(g & VF_SETUP_G_LORA_RANK))
		assume(a, "LoRA rank %d (--lora-rank)", s->lora_rank);
	if (vf_lora_targets_stack_list(s) && !dit)
		assume(a, "LoRA targets %s: stack %s's default, from %s (--lora-targets)",
		       vf_setup_lora_targets_text(s, t, sizeof t), s->stack, s->lora_targets_cite);
	else if (!(g & VF_SETUP_G_LORA_TARGETS) && !dit && family && family[0])
		assume(a, "LoRA targets: peft's default for model type %s, the roles %s under its "
			  "module names (--lora-targets)",
		       family, vf_setup_lora_targets_text(s, t, sizeof t));
	else if (!(g & VF_SETUP_G_LORA_TARGETS))
		assume(a, "LoRA targets %s (--lora-targets)", vf_setup_lora_targets_text(s, t, sizeof t));
	if (s->adapter_bf16)
		assume(a, "LoRA adapters in bf16 (%s)", (s->stack_given & VF_STACK_G_ADAPTER)
								 ? "--adapter-dtype"
								 : "the stack's default, --adapter-dtype");
	else
		assume(a, "LoRA adapters kept in fp32 (%s)", (s->stack_given & VF_STACK_G_ADAPTER)
								     ? "--adapter-dtype"
								     : "peft's default, --adapter-dtype");
}

/* fp32 matmuls: TF32 on or off, and who said so (--tf32, the stack's
 * profile, PyTorch's default). */
static void tf32_assumption(const struct vf_setup *s, struct assume *a)
{
	if (!s->tf32) {
		assume(a, "fp32 matmuls in IEEE fp32 on the CUDA cores: TF32 off, %s (allow_tf32 False, "
			  "float32_matmul_precision \"highest\"); --tf32 for a run that turns it on "
			  "(torch.backends.cuda.matmul.allow_tf32 = True, set_float32_matmul_precision "
			  "\"high\", HF tf32=True)",
		       s->tf32_from == VF_TF32_OPTION ? "--no-tf32" : "PyTorch's default");
		return;
	}
	char from[64];
	if (s->tf32_from == VF_TF32_STACK)
		snprintf(from, sizeof from, "the %s stack's default, data/stacks/%s.json", s->stack, s->stack);
	else
		snprintf(from, sizeof from, "--tf32");
	assume(a, "fp32 matmuls on the tensor cores at the TF32 rate on Ampere and later: TF32 on (%s; "
		  "--no-tf32 for IEEE fp32); fp32 attention stays 3xTF32 (the memory-efficient kernel "
		  "ignores allow_tf32)", from);
}

/* Autocast off (--no-autocast, a stack's profile): pure bf16, what it
 * changes, or why it changes nothing. */
static void autocast_assumption(const struct vf_setup *s, bool dense_only, struct assume *a)
{
	char from[64];
	if (s->stack_given & VF_STACK_G_AUTOCAST)
		snprintf(from, sizeof from, "--no-autocast");
	else
		snprintf(from, sizeof from, "the %s stack's default, data/stacks/%s.json", s->stack, s->stack);
	if (s->precision != VF_PREC_BF16)
		assume(a, "no autocast (%s) ignored: --precision %s keeps fp32 weights under autocast; "
			  "fp32 weights without it are --precision fp32, bf16 ones --precision bf16",
		       from, vf_precision_name((enum vf_precision)s->precision));
	else if (dense_only)
		assume(a, "no autocast (%s) not modelled for video DiTs and vision models: their memory "
			  "and step time are estimated as under autocast; approximate", from);
	else if (vf_setup_fp32_adapter_gemms(s))
		assume(a, "pure bf16, no autocast (%s): every op in its inputs' dtype; peft casts each "
			  "adapter's input to its fp32 weights (a copy per adapter, saved for the backward) "
			  "and runs the adapters' GEMMs in fp32 (%s)",
		       from, s->tf32 ? "TF32 on the tensor cores" : "IEEE on the CUDA cores, TF32 off; --tf32");
	else
		assume(a, "pure bf16, no autocast (%s): every op in its inputs' dtype, norms and "
			  "activations in bf16 unless the model's code upcasts them", from);
}

/* The precision and, for fp32, how its matmuls run (dense_only: a video
 * DiT or vision model, whose step time is the dense bf16 rate). */
static void precision_assumptions(const struct vf_setup *s, bool dense_only, struct assume *a)
{
	if (!(s->given & VF_SETUP_G_PRECISION))
		assume(a, "precision %s%s (--precision)", vf_precision_name(s->precision),
		       s->precision == VF_PREC_AMP ? ": fp32 weights under bf16 autocast" : "");
	if (s->precision == VF_PREC_FP32 && dense_only)
		assume(a, "--precision fp32%s: the step time of video DiTs and vision models is the dense "
			  "bf16 rate x fitted utilisation, fp32 and TF32 matmuls are not modelled there; "
			  "approximate", s->tf32 ? " with TF32 on" : "");
	else if (s->precision == VF_PREC_FP32)
		tf32_assumption(s, a);
	if (!s->autocast)
		autocast_assumption(s, dense_only, a);
}

/* eager: a family the estimate always runs with explicit scores (T5,
 * bloom, deberta: arch eager_attention), named by `family`. */
static void setup_assumptions(const struct vf_setup *s, bool dit, bool images, bool t5, bool multi,
			      bool eager, const char *family, struct assume *a)
{
	unsigned g = s->given;
	ignored_flags(s, t5, a);
	if (!(g & VF_SETUP_G_MODE))
		assume(a, "mode %s (--mode)", vf_mode_name(s->mode));
	precision_assumptions(s, dit || images, a);
	if (s->mode != VF_MODE_INFER) {
		if (!(g & VF_SETUP_G_OPTIMIZER))
			assume(a, "optimizer %s (--optimizer)", vf_optimizer_name(s->optimizer));
		if (!(g & VF_SETUP_G_OPTIMIZER_IMPL) &&
		    (s->optimizer == VF_OPT_ADAMW || s->optimizer == VF_OPT_LION))
			assume(a, "optimizer implementation %s, PyTorch's default on CUDA (--optimizer-impl)",
			       vf_optimizer_impl_name(s->optimizer_impl));
		if (!(g & VF_SETUP_G_GRAD_CKPT))
			assume(a, "gradient checkpointing %s (--grad-ckpt)%s", s->grad_ckpt ? "on" : "off",
			       !s->grad_ckpt && vf_setup_kbit_prep(s)
				       ? ": peft's prepare_model_for_kbit_training, whose fp32 rest is counted, turns "
					 "it on unless use_gradient_checkpointing=False (such a run: --grad-ckpt)"
				       : "");
		if (!(g & VF_SETUP_G_GRAD_ACCUM))
			assume(a, "gradient accumulation %" PRId64 " (--grad-accum)", s->grad_accum);
		if (!dit)
			train_loop_assumptions(s, a);
	}
	if (!(g & VF_SETUP_G_BATCH))
		assume(a, "micro-batch %" PRId64 " per GPU (--batch)", s->batch);
	if (!dit && !images && !(g & VF_SETUP_G_SEQ))
		assume(a, "%" PRId64 " tokens per sample (--seq)", s->seq);
	if (t5 && !(g & VF_SETUP_G_TARGET_SEQ))
		assume(a, "decoder length %" PRId64 " (--target-seq)", s->target_seq ? s->target_seq : s->seq);
	if (s->mode == VF_MODE_LORA)
		lora_assumptions(s, dit, family, a);
	if (!(g & VF_SETUP_G_QUANT) && s->mode != VF_MODE_FULL && s->quant == VF_QUANT_NONE)
		assume(a, "base weights not quantized (--quant)");
	if (!dit && eager) /* the estimate runs these families' explicit scores whatever --attention says */
		assume(a, "attention eager: %s's modeling code computes the s x s score matrices explicitly "
			  "(--attention %s not applied to this family)",
		       family, vf_attention_name(s->attention));
	else if (!dit && !(g & VF_SETUP_G_ATTENTION))
		assume(a, "attention %s: no s x s score matrices (--attention)", vf_attention_name(s->attention));
	if (!(g & VF_SETUP_G_GPUS) && !multi)
		assume(a, "%d GPU per run (--gpus N --shard ...)", s->gpus);
	if (s->shard_none_ddp || ((g & VF_SETUP_G_SHARD) && multi && s->shard == VF_SHARD_NONE &&
				  s->mode != VF_MODE_INFER && s->split != VF_SPLIT_LAYERS))
		assume(a, "--shard none over several GPUs: data-parallel replicas all-reduce their gradients "
			  "in DDP's buckets, so it is estimated as ddp (as fit reads it)");
	if ((g & VF_SETUP_G_SHARD) && s->shard >= VF_SHARD_ZERO1 && !multi && s->gpus <= 1)
		assume(a, "--shard %s on one GPU shards nothing: every figure is one GPU's whole model "
			  "(--gpus N or --gpu ID:N to shard)", vf_shard_name(s->shard));
	if (s->mode == VF_MODE_INFER && dit)
		assume(a, "inference: one denoising forward under no_grad, one block's tensors live at a time "
			  "(bounded by the training block's saved tensors); the sampling loop's guidance batch "
			  "and the VAE decode not counted: approximate");
	else if (s->mode == VF_MODE_INFER)
		assume(a, "inference: one forward over the whole sequence with the KV cache (use_cache=True)");
	if (dit) {
		if (!(g & VF_SETUP_G_VIDEO))
			assume(a, "video %dx%dx%d (--video WxHxF)", s->video_width, s->video_height,
			       s->video_frames);
		if (!(g & VF_SETUP_G_AUDIO))
			assume(a, "audio stream %s (--no-audio)", s->audio ? "generated" : "off");
		if (!(g & VF_SETUP_G_TEXT_ENCODER))
			assume(a, "text encoder loaded in %s for the validation prompts (--text-encoder)",
			       vf_text_encoder_name(s->text_encoder));
		if (s->mode != VF_MODE_INFER && !s->validation_off)
			assume(a, "validation %dx%dx%d%s, %d steps of %d transformer passes, tiled VAE decode "
				  "(--validation off|WxHxF[:STEPS[:PASSES]])",
			       s->val_width > 0 ? s->val_width : s->video_width,
			       s->val_height > 0 ? s->val_height : s->video_height,
			       s->val_frames > 0 ? s->val_frames : s->video_frames,
			       s->val_width > 0 ? "" : " (the training size)", s->val_steps > 0 ? s->val_steps : 30,
			       s->val_passes > 0 ? s->val_passes : 4);
	}
}

/* The mechanisms of other stacks' recipes the setup turns on
 * (lib/estimate/mechanisms.c), each as the estimate models it. */
static void mechanism_assumptions(const struct vf_estimate *e, const struct vf_setup *s,
				  struct assume *a)
{
	if (s->paged_optimizer)
		assume(a, "paged optimizer (bitsandbytes): states of tensors of 100k elements or more in "
			  "CUDA managed memory: in nvidia-smi's peak, not in torch.cuda.max_memory_allocated() "
			  "or max_memory_reserved(); evicted to the host before an out-of-memory, so they do "
			  "not decide the fit");
	if (s->peak_scope == VF_PEAK_RUN)
		assume(a, "peak scope run (--peak-scope): the never-reset peak of the whole run, the model "
			  "load included%s",
		       s->load_full_per_rank && s->gpus > 1 &&
				       (s->shard == VF_SHARD_FSDP || s->shard == VF_SHARD_ZERO3)
			       ? " (FSDP load: every rank gathers the full state dict)"
			   : s->quant == VF_QUANT_NF4
			       ? (s->quant_load == VF_QLOAD_TORCHAO
					  ? " (the NF4 base quantized on load by torchao's to_nf4: the largest "
					    "linear's bf16 weight, scaled copy and indices beside the packed weights)"
					  : " (the NF4 base quantized on load by bitsandbytes: the largest linear's "
					    "bf16 weight beside the packed weights)")
			       : "");
	if (s->quant == VF_QUANT_INT4 && s->quant_format == VF_QFMT_GPTQ && s->mode == VF_MODE_LORA)
		assume(a, "GPTQ base (auto-gptq QuantLinear, use_exllama=False for training): from 128 "
			  "tokens on each linear's dequantized fp16 weight is kept for the backward");
	if (s->quant == VF_QUANT_INT4 && s->quant_format == VF_QFMT_AWQ && s->mode == VF_MODE_LORA)
		assume(a, "AWQ base (AutoAWQ WQLinear_GEMM): each linear keeps its input for the "
			  "backward, which repeats the dequantized weight over the batch");
	if (s->kbit_saves_input && (s->quant == VF_QUANT_NF4 || s->quant == VF_QUANT_INT8))
		assume(a, "bitsandbytes k-bit linears keep their inputs for the backward");
	if (s->kbit_head && s->quant == VF_QUANT_NF4 && s->mode != VF_MODE_INFER)
		assume(a, "the lm_head quantized with the layers (Lightning's BitsandbytesPrecision): "
			  "dequantized to fp16 and cast at each call");
	if (s->lora_dropout && s->mode == VF_MODE_LORA)
		assume(a, "a dropout before each adapter keeps its mask (1 byte an input element)");
	if (s->loss_in_compute_dtype && s->loss == VF_LOSS_CHUNKED && s->mode != VF_MODE_INFER)
		assume(a, "the chunked loss on the compute-dtype logits, no fp32 upcast");
	if (s->fsdp_no_sync && s->grad_accum > 1 && s->shard == VF_SHARD_FSDP && s->gpus > 1 &&
	    s->mode != VF_MODE_INFER)
		assume(a, "FSDP gradient accumulation under no_sync (the stack's loop): every %s whole "
			  "gradient kept from the first micro-batch's backward to the synced one",
		       s->mode == VF_MODE_LORA && !s->fsdp_lora_flat ? "adapter's" : "unit's");
	if (s->graph_held && s->mode != VF_MODE_INFER)
		assume(a, "the previous step's logits%s held through the next forward (the stack's "
			  "loop keeps them)",
		       s->kbit_saves_input && s->quant == VF_QUANT_NF4 && !s->grad_ckpt
			       ? " and bitsandbytes' kept inputs"
			       : "");
	if (s->fsdp_mixed_precision && s->gpus > 1 && s->mode != VF_MODE_INFER &&
	    (s->precision == VF_PREC_AMP || s->precision == VF_PREC_FP16) &&
	    (s->shard == VF_SHARD_FSDP || s->shard == VF_SHARD_ZERO3))
		assume(a, "FSDP mixed precision (param_dtype 16-bit): blocks gathered in 16 bits from "
			  "fp32 shards, no autocast copies");
	if (s->float8)
		assume(a, "--float8: torchao Float8Linear on the layers' linears (no autocast copies; "
			  "float8 weight and input made per matmul), the lm_head in bf16 (not measured)");
	if (e->offload != VF_OFFLOAD_NONE) {
		char hb[32], pb[32];
		assume(a, "CPU offload (--offload %s): the host holds %s per GPU; %s cross PCIe per "
			  "step, %.0f ms at the link's achievable rate (in the step time what compute "
			  "does not hide, with the optimizer step on the host: --explain)",
		       e->offload == VF_OFFLOAD_PARAMS ? "params" : "optimizer",
		       vf_fmt_bytes(hb, sizeof hb, (double)e->offload_host_bytes),
		       vf_fmt_bytes(pb, sizeof pb, (double)e->offload_pcie_bytes),
		       1000 * e->offload_pcie_seconds);
	}
	if (s->grad_ckpt && (s->ckpt_selective_op || s->ckpt_every > 1))
		assume(a, "selective checkpointing %s (not measured)",
		       s->ckpt_selective_op ? "selective:op: the op policy's saved outputs per layer"
					    : "every:N: one layer in N checkpointed");
}

/* Where the device peak comes from: the allocator's replay, the step's
 * analytic allocated peak where the replay falls short of it, or the
 * analytic reserve. */
static void device_peak_assumption(const struct vf_estimate *e, struct assume *a)
{
	if (e->simulated && e->sim_short)
		assume(a, "device peak: the step's analytic allocated peak (%s) with no allocator reserve: "
			  "PyTorch's caching allocator replayed over the model load and two steps allocates "
			  "at most %s, so the replay misses tensors of this setup; the peak is approximate",
		       vf_fmt_bytes((char[32]){0}, 32, (double)e->peak_allocated_bytes),
		       vf_fmt_bytes((char[32]){0}, 32, (double)e->sim_allocated_bytes));
	else if (e->simulated)
		assume(a, "device peak: PyTorch's caching allocator (2.9-2.11 rules) simulated over the model "
			  "load and two steps (optimizer states created in the first); --allocator, "
			  "PYTORCH_CUDA_ALLOC_CONF");
	else if (e->sim_skipped)
		assume(a, "device peak: analytic allocator reserve (%s); the peak is approximate",
		       e->sim_skipped);
	else
		assume(a, "PyTorch caching allocator without expandable segments; peak = steady-state step "
			  "(optimizer states held from the previous step)");
}

/* The CUDA context and what the GPU's rates rest on. */
static void rate_assumptions(const struct vf_estimate *e, const struct vf_gpu_spec *gpu, struct assume *a)
{
	if (e->assumed & VF_ASSUME_CONTEXT_DEFAULT) {
		char b[32];
		assume(a, "CUDA context %s for %s (527 MiB measured with PyTorch 2.11 on an H200; --context-mib)",
		       vf_fmt_bytes(b, sizeof b, (double)e->context_bytes),
		       gpu && gpu->generation[0] ? gpu->generation : "this GPU");
	}
	if (e->assumed & VF_ASSUME_GPU_RATE_UNKNOWN)
		assume(a, "no dense tensor rate known for %s: no step time", gpu ? gpu->id : "the GPU");
	if (e->assumed & VF_ASSUME_CONSTANTS_BUILTIN)
		assume(a, "step-time constants: %s; approximate", vf_estimate_constants_fallback());
	if (e->assumed & VF_ASSUME_NO_TF32)
		assume(a, "%s has no TF32 tensor cores: TF32 on changes nothing there, fp32 matmuls run "
			  "IEEE fp32 on the CUDA cores (%.1f TFLOP/s)",
		       gpu ? gpu->id : "the GPU", gpu ? gpu->fp32_tflops : 0.0);
	if (e->assumed & VF_ASSUME_BF16_EMULATED)
		assume(a, "%s has no bf16 tensor cores: bf16 matmuls run emulated on the CUDA cores "
			  "(%.1f TFLOP/s); --precision fp16 uses its fp16 tensor cores",
		       gpu ? gpu->id : "the GPU", gpu ? gpu->fp32_tflops : 0.0);
}

/* A GPU of a generation the step time was not fitted on: what `what`
 * (the step time, the prompt's forward) rests on there. */
static void generation_assumption(const struct vf_estimate *e, const struct vf_gpu_spec *gpu, const char *what,
				  struct assume *a)
{
	if (gpu && e->parts.compute > 0 && strcmp(gpu->generation, "hopper") != 0)
		assume(a, "%s on %s (%s): kernel-level benchmarks of the generation (cuBLAS GEMM, "
			  "flash-attention, bandwidth; sources in data/estimate/steptime.json) plus the "
			  "time per FLOP and per byte the H200 fit leaves beyond hopper's (host time: not "
			  "scaled by the GPU), not fitted on measured steps; host time (launches, "
			  "synchronisations) at %.2fx the H200 server's, the typical host of such a card "
			  "(steptime.json host_speed); approximate",
		       what, gpu->id, gpu->generation[0] ? gpu->generation : "unknown generation",
		       vf_estimate_host_speed(gpu));
}

static void estimate_assumptions(const struct vf_estimate *e, const struct vf_setup *s,
				 const struct vf_gpu_spec *gpu, struct assume *a)
{
	rate_assumptions(e, gpu, a);
	if (s->quant != VF_QUANT_NONE)
		assume(a, "quantized base: linear weights at %s with block scales, embeddings and norms in "
			  "%s; one linear dequantized at a time",
		       vf_quant_name(s->quant),
		       vf_setup_kbit_prep(s) ? "fp32 (peft's prepare_model_for_kbit_training: the residual "
					      "stream fp32, each k-bit linear casting its input and output)"
		       : s->kbit_fp32_rest ? "their load dtype (the stack does not prepare a base sharded "
					    "over FSDP/ZeRO-3: kbit_prep_unsharded)"
					  : "their load dtype");
	if (s->mode != VF_MODE_INFER) {
		char st[256];
		assume(a, "%s", vf_cli_stack_words(s, st, sizeof st));
		if (s->compile)
			assume(a, "--compile: elementwise traffic, launches and the loss's logits passes "
				  "fused (shares in data/estimate/steptime.json), cheap fp32 intermediates "
				  "recomputed (not measured)");
		if (s->activation_offload)
			assume(a, "--activation-offload: two layers' saved tensors on the GPU, the copies "
				  "over PCIe hidden behind up to 70%% of the compute (not measured)");
		mechanism_assumptions(e, s, a);
	}
	device_peak_assumption(e, a);
	assume(a, "step time (an estimate): LLMs kernel by kernel, constants fitted on H200 measurements "
		  "(data/estimate/steptime.json); video DiTs and vision models dense bf16 rate x fitted "
		  "utilisation x the generation's GEMM efficiency relative to hopper's");
	generation_assumption(e, gpu, "step time", a);
	if (strcmp(e->parts.link, "unknown") == 0)
		assume(a, "no link bandwidth known for %s: data-parallel communication not counted, the "
			  "step time is approximate",
		       gpu ? gpu->id : "the GPU");
	else if (strcmp(e->parts.link, "catalog") == 0)
		assume(a, "%s's link is none of the classes of data/estimate/steptime.json: communication "
			  "at 40%% of the catalog interconnect figure, %.0f ms per step, %.0f ms of it "
			  "exposed; approximate",
		       gpu ? gpu->id : "the GPU", 1e3 * e->parts.comm_total, 1e3 * e->parts.comm_exposed);
	else if (e->parts.link[0])
		assume(a, "communication as NCCL runs it over %s (bus bandwidth and latency per link class, "
			  "per-layer gathers, DDP buckets; data/estimate/steptime.json): %.0f ms per step, "
			  "%.0f ms of it exposed, %.0f ms of compute lost to the SMs its kernels hold while "
			  "hidden (--explain)%s",
		       e->parts.link, 1e3 * e->parts.comm_total, 1e3 * e->parts.comm_exposed,
		       1e3 * e->parts.comm_interference,
		       gpu && gpu->sms < 1 ? "; no SM count for this GPU in the catalog (gpus.json sms): "
					     "that loss is not counted, approximate" : "");
}

/* --mode infer --engine vllm|llamacpp: only what holds for the engine
 * (its own line, from infer_rows, says the KV cache and, for llama.cpp,
 * the GGUF's quantization): the flags ignored, the prompt, vLLM's
 * weights, the CUDA context and the time model of the prompt's forward
 * (TTFT). No training step, batch, replay or data-parallel line. */
static void engine_assumptions(const struct vf_estimate *e, const struct vf_setup *s, const struct vf_gpu_spec *gpu,
			       const struct vf_infer_opts *o, struct assume *a)
{
	ignored_flags(s, false, a);
	if (!(s->given & VF_SETUP_G_SEQ))
		assume(a, "a prompt of %" PRId64 " tokens (--seq): the forward whose time is the TTFT", s->seq);
	if (o->engine == VF_ENGINE_VLLM)
		assume(a, "vllm: weights in %s%s%s (--precision, --quant), KV cache %s (--kv-cache-dtype)",
		       vf_precision_name(s->precision), s->quant != VF_QUANT_NONE ? ", quantized " : ", not quantized",
		       s->quant != VF_QUANT_NONE ? vf_quant_name(s->quant) : "",
		       o->kv_fp8 ? "in fp8" : "in the weights' dtype");
	rate_assumptions(e, gpu, a);
	assume(a, "TTFT (an estimate): the prompt's forward kernel by kernel, constants fitted on H200 measurements "
		  "(data/estimate/steptime.json)");
	generation_assumption(e, gpu, "TTFT", a);
}

static cJSON *gt_json(const struct vf_gt_report *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *rows = cJSON_AddArrayToObject(o, "records");
	for (size_t i = 0; i < r->n; i++) {
		const struct vf_gt_row *w = &r->rows[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "id", w->id);
		cJSON_AddStringToObject(j, "status", w->status);
		cJSON_AddNumberToObject(j, "peak_alloc", (double)w->meas_alloc);
		cJSON_AddNumberToObject(j, "peak_allocated_bytes", (double)w->pred_alloc);
		cJSON_AddNumberToObject(j, "peak_alloc_error", w->err_alloc);
		cJSON_AddNumberToObject(j, "peak_measured", (double)w->meas_peak);
		cJSON_AddNumberToObject(j, "peak_bytes", (double)w->pred_peak);
		cJSON_AddNumberToObject(j, "peak_error", w->err_peak);
		if (w->meas_step > 0)
			cJSON_AddNumberToObject(j, "step_median_s", w->meas_step);
		else
			cJSON_AddNullToObject(j, "step_median_s");
		if (!isnan(w->err_step)) {
			cJSON_AddNumberToObject(j, "step_seconds", w->pred_step);
			cJSON_AddNumberToObject(j, "step_error", w->err_step);
		} else {
			cJSON_AddNullToObject(j, "step_seconds");
			cJSON_AddNullToObject(j, "step_error");
		}
		cJSON_AddStringToObject(j, "peak_phase", vf_phase_name(w->phase));
		cJSON_AddStringToObject(j, "dominant_term", vf_term_name(w->dominant));
		cJSON_AddItemToArray(rows, j);
	}
	cJSON *s = cJSON_AddObjectToObject(o, "summary");
	cJSON_AddNumberToObject(s, "records", (double)r->scored);
	cJSON_AddNumberToObject(s, "context_bytes", (double)r->context_bytes);
	cJSON_AddNumberToObject(s, "peak_alloc_median_abs_error", r->med_alloc);
	cJSON_AddNumberToObject(s, "peak_alloc_max_abs_error", r->max_alloc);
	cJSON_AddNumberToObject(s, "peak_median_abs_error", r->med_peak);
	cJSON_AddNumberToObject(s, "peak_max_abs_error", r->max_peak);
	cJSON_AddNumberToObject(s, "step_median_abs_error", r->med_step);
	cJSON_AddNumberToObject(s, "step_max_abs_error", r->max_step);
	cJSON_AddNumberToObject(s, "oom_records", (double)r->n_oom);
	cJSON_AddNumberToObject(s, "oom_predicted", (double)r->n_oom_predicted);
	cJSON_AddBoolToObject(s, "within_bounds", vf_gt_within_bounds(r));
	return o;
}

static int check_groundtruth(const char *path, bool json)
{
	struct vf_gt_report r;
	struct vf_error err = {0};
	if (vf_groundtruth_check(path, &r, &err))
		return vf_cli_fail_err(&err);
	if (json) {
		cJSON *o = gt_json(&r);
		vf_cli_print_json(o);
		cJSON_Delete(o);
		vf_gt_report_release(&r);
		return VF_EXIT_OK;
	}
	const char *hdr[] = {"record",  "peak alloc", "measured", "error", "peak (device)",
			     "measured", "error",      "step",     "measured", "error", "phase"};
	struct vf_table t;
	vf_table_init(&t, 11, hdr);
	for (int c = 1; c < 10; c++)
		vf_table_set_right(&t, c, true);
	for (size_t i = 0; i < r.n; i++) {
		const struct vf_gt_row *w = &r.rows[i];
		char c[10][40];
		vf_fmt_bytes(c[0], sizeof c[0], (double)w->pred_alloc);
		vf_fmt_bytes(c[1], sizeof c[1], (double)w->meas_alloc);
		snprintf(c[2], sizeof c[2], "%+.1f%%", 100 * w->err_alloc);
		vf_fmt_bytes(c[3], sizeof c[3], (double)w->pred_peak);
		vf_fmt_bytes(c[4], sizeof c[4], (double)w->meas_peak);
		snprintf(c[5], sizeof c[5], "%+.1f%%", 100 * w->err_peak);
		vf_fmt_seconds(c[6], sizeof c[6], w->pred_step);
		vf_fmt_seconds(c[7], sizeof c[7], w->meas_step);
		if (isnan(w->err_step))
			snprintf(c[8], sizeof c[8], "-");
		else
			snprintf(c[8], sizeof c[8], "%+.1f%%", 100 * w->err_step);
		snprintf(c[9], sizeof c[9], "%s%s", vf_phase_name(w->phase), w->scored ? "" : " (oom)");
		vf_table_addf(&t, w->id, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9]);
	}
	vf_table_print(&t, stdout);
	vf_table_release(&t);
	bool ok = vf_gt_within_bounds(&r);
	printf("\n%zu records on an H200 (CUDA context %.0f MiB)\n", r.scored,
	       (double)r.context_bytes / (1 << 20));
	printf("peak allocated  |error| median %5.1f%%  max %5.1f%%   (bounds %.1f%% / %.1f%%)\n",
	       100 * r.med_alloc, 100 * r.max_alloc, 100 * VF_GT_ALLOC_MEDIAN, 100 * VF_GT_ALLOC_MAX);
	printf("peak on device  |error| median %5.1f%%  max %5.1f%%   (bounds %.0f%% / %.0f%%, "
	       "caching allocator simulated)\n",
	       100 * r.med_peak, 100 * r.max_peak, 100 * VF_GT_PEAK_MEDIAN, 100 * VF_GT_PEAK_MAX);
	printf("step time       |error| median %5.1f%%  max %5.1f%%   (bounds %.0f%% / %.0f%%)\n",
	       100 * r.med_step, 100 * r.max_step, 100 * VF_GT_STEP_MEDIAN, 100 * VF_GT_STEP_MAX);
	if (r.n_oom)
		printf("out-of-memory records: %zu, predicted not to fit: %zu\n", r.n_oom, r.n_oom_predicted);
	printf("%s\n", ok ? "within the accuracy bounds" : "OUTSIDE the accuracy bounds");
	vf_gt_report_release(&r);
	return VF_EXIT_OK;
}

/* A GPU's card: its catalog entry (with the memory it reports), else
 * one made from its name and memory, rates unknown. */
static void gpu_spec_of(const struct vf_gpu *g, struct vf_gpu_spec *spec)
{
	const struct vf_gpu_spec *c = g->catalog_id[0] ? vf_gpu_catalog_find(g->catalog_id) : NULL;
	if (c) {
		*spec = *c;
		if (g->memory_total_mib > 0)
			spec->memory_mib = g->memory_total_mib;
		return;
	}
	memset(spec, 0, sizeof *spec);
	snprintf(spec->id, sizeof spec->id, "%.31s", g->name);
	snprintf(spec->name, sizeof spec->name, "%s", g->name);
	spec->memory_mib = g->memory_total_mib;
	spec->bf16_tflops = spec->fp16_tflops = spec->fp32_tflops = -1;
	spec->bandwidth_gbs = -1;
	spec->price_usd_hour = -1;
}

/* One machine's set as one row: each device's card (and, probed, its
 * free memory); the row's card is device 0's under the set's name
 * ("rtx-3090+rtx-4080"). A set of one kind given as A,A is ID:N. */
static vf_status set_row(const struct vf_gpu_set *set, bool probed, struct gpu_row *row,
			 struct vf_error *err)
{
	if (set->count > VF_INFER_MAX_DEVICES)
		return vf_error_set(err, VF_EUSAGE, "--gpu: a set of %zu GPUs; at most %d serve together",
				    set->count, VF_INFER_MAX_DEVICES);
	memset(row, 0, sizeof *row);
	row->ndev = (int)set->count;
	row->count = row->ndev;
	for (int d = 0; d < row->ndev; d++) {
		gpu_spec_of(&set->gpus[d], &row->dev[d]);
		row->dev_free_mib[d] = probed && set->gpus[d].memory_free_mib > 0 ? set->gpus[d].memory_free_mib : 0;
		row->unequal |= strcmp(row->dev[d].id, row->dev[0].id) != 0 ||
				row->dev[d].memory_mib != row->dev[0].memory_mib;
	}
	row->spec = row->dev[0];
	row->set = probed || row->unequal;
	if (row->unequal) {
		vf_gpu_set_label(set, row->spec.id, sizeof row->spec.id);
		vf_gpu_set_label(set, row->spec.name, sizeof row->spec.name);
	}
	return VF_OK;
}

/* The --gpu values that name a set (A,B): a row each. */
/* GPUs from..count of set as rows: identical GPUs are one row (ID:N). */
static void merge_gpus(const struct vf_gpu_set *set, size_t from, struct gpu_row *rows, int *nrows)
{
	for (size_t i = from; i < set->count && *nrows < MAX_GPUS; i++) {
		struct vf_gpu_spec spec;
		gpu_spec_of(&set->gpus[i], &spec);
		int k;
		for (k = 0; k < *nrows; k++)
			if (!rows[k].ndev && strcmp(rows[k].spec.id, spec.id) == 0 &&
			    rows[k].spec.memory_mib == spec.memory_mib)
				break;
		if (k < *nrows) {
			rows[k].count++;
			continue;
		}
		memset(&rows[*nrows], 0, sizeof rows[0]);
		rows[*nrows].spec = spec;
		rows[*nrows].count = 1;
		(*nrows)++;
	}
}

/* The row of one kind (not a set) that holds GPU i of set, or -1. */
static int kind_row(const struct vf_gpu_set *set, size_t i, const struct gpu_row *rows, int nrows)
{
	if (i >= set->count)
		return -1;
	struct vf_gpu_spec spec;
	gpu_spec_of(&set->gpus[i], &spec);
	for (int k = 0; k < nrows; k++)
		if (!rows[k].ndev && strcmp(rows[k].spec.id, spec.id) == 0 && rows[k].spec.memory_mib == spec.memory_mib)
			return k;
	return -1;
}

/* The --gpu values in order: a set (A,B) is a row of its own, the other
 * GPUs a row per value (ID:N: N of a kind); a kind given twice is refused
 * (each value is a row to compare, never a sum). All of them count
 * against one set's limit. */
static vf_status given_gpus(char **specs, int nspecs, struct vf_gpu_set *set, struct gpu_row *rows,
			    int *nrows, struct vf_error *err)
{
	const char *row_spec[MAX_GPUS]; /* the --gpu value each row of a kind came from */
	for (int i = 0; i < nspecs; i++) {
		size_t from = set->count;
		vf_status st = vf_gpu_spec_is_list(specs[i]) ? vf_gpu_set_add_list(set, specs[i], err)
							     : vf_gpu_set_add_spec(set, specs[i], err);
		if (st)
			return st;
		if (!vf_gpu_spec_is_list(specs[i])) {
			int k = kind_row(set, from, rows, *nrows);
			if (k >= 0) {
				char msg[512];
				vf_cli_gpu_twice(msg, sizeof msg, row_spec[k], specs[i]);
				return vf_error_set(err, VF_EUSAGE, "%s", msg);
			}
			int before = *nrows;
			merge_gpus(set, from, rows, nrows);
			for (int r = before; r < *nrows; r++)
				row_spec[r] = specs[i];
			continue;
		}
		if (*nrows >= MAX_GPUS)
			return vf_error_set(err, VF_EUSAGE, "--gpu: more than %d rows", MAX_GPUS);
		struct vf_gpu_set one = {.gpus = set->gpus + from, .count = set->count - from};
		if ((st = set_row(&one, false, &rows[*nrows], err)))
			return st;
		(*nrows)++;
	}
	return VF_OK;
}

/* The GPUs to report: --gpu specs (a set A,B is one row), else probed
 * (all of them one set when `probed_set`: llama.cpp serves on every
 * visible device), else the common cards. */
static vf_status collect_gpus(char **specs, int nspecs, bool probed_set, struct gpu_row *rows, int *nrows,
			      const char **source, struct vf_error *err)
{
	*nrows = 0;
	struct vf_gpu_set set;
	vf_gpu_set_init(&set);
	vf_status st = VF_OK;
	if (nspecs) {
		st = given_gpus(specs, nspecs, &set, rows, nrows, err);
		*source = "given";
	} else {
		struct vf_error perr = {0};
		if (vf_gpu_probe(&set, &perr) != VF_OK)
			set.count = 0; /* probing failed: fall back to the catalog */
		*source = "probed";
		if (probed_set && set.count > 1) {
			st = set_row(&set, true, &rows[0], err);
			*nrows = st ? 0 : 1;
		} else {
			merge_gpus(&set, 0, rows, nrows);
		}
	}
	if (st) {
		vf_gpu_set_release(&set);
		return st;
	}
	vf_gpu_set_release(&set);
	if (*nrows == 0) {
		size_t n = 0;
		const struct vf_gpu_spec *cat = vf_gpu_catalog(&n, err);
		if (!cat)
			return err->code ? err->code : VF_ERR;
		for (size_t i = 0; i < n && *nrows < MAX_GPUS; i++)
			if (cat[i].common) {
				memset(&rows[*nrows], 0, sizeof rows[0]);
				rows[*nrows].spec = cat[i];
				rows[*nrows].count = 1;
				(*nrows)++;
			}
		*source = "common";
	}
	return VF_OK;
}

struct target {
	bool dit;
	bool pipeline;          /* a diffusers pipeline folder (pipeline.h) */
	char family[24];        /* a pipeline's denoiser family */
	char unknown[256];      /* ... and what of it was not understood */
	struct {
		char name[64];
		int64_t params;
		enum vf_pipeline_role role;
		bool resident;
	} pipe[VF_PIPELINE_MAX];
	int npipe;
	bool vision;            /* a CLIP / ViT / VLM config (vit.c) */
	struct vf_vision vis;
	int image_size, frames; /* a diffusers DiT's default sample; 0 = LTX-2's */
	struct vf_arch arch;
	struct vf_dit d;
	char id[128];
	struct vf_alloc_config alloc; /* PYTORCH_CUDA_ALLOC_CONF, --allocator */
	struct vf_replay_memo *memo; /* this run's allocator replays remembered (owned by run) */
	bool trainer_model;     /* a model the trainer profile trains: each GPU under its tier's config */
};

/* Fill what a partial architecture (inferred from tensors, or a config of
 * a family without a config class default) lacks with llama-like rules,
 * each listed as an assumption and named in not_understood: the count and
 * the estimate are approximate. */
static void complete_arch(struct vf_arch *a, struct assume *as)
{
	if (!(a->known & VF_ARCH_F_HEADS) || a->heads <= 0) {
		a->heads = a->hidden >= 128 ? a->hidden / 128 : 1;
		a->known |= VF_ARCH_F_HEADS;
		assume(as, "%" PRId64 " attention heads (not in the model files: hidden / 128 assumed)",
		       a->heads);
		vf_arch_not_understood(a, "attention heads (absent: hidden / 128 assumed)");
	}
	if (!(a->known & VF_ARCH_F_KV_HEADS) || a->kv_heads <= 0) {
		a->kv_heads = a->heads;
		a->known |= VF_ARCH_F_KV_HEADS;
	}
	if (!(a->known & VF_ARCH_F_HEAD_DIM) || a->head_dim <= 0) {
		a->head_dim = a->hidden / a->heads > 0 ? a->hidden / a->heads : 1;
		a->known |= VF_ARCH_F_HEAD_DIM;
	}
	if (!(a->known & VF_ARCH_F_FFN) || a->ffn < 0) {
		a->ffn = a->gated_mlp ? (a->hidden * 8 / 3) : 4 * a->hidden;
		a->known |= VF_ARCH_F_FFN;
		assume(as, "MLP width %" PRId64 " (intermediate_size not in the model files and no "
			   "config class default known: %s x hidden assumed)",
		       a->ffn, a->gated_mlp ? "8/3" : "4");
		vf_arch_not_understood(a, a->gated_mlp
					  ? "intermediate_size (absent: 8/3 x hidden assumed)"
					  : "intermediate_size (absent: 4 x hidden assumed)");
	}
	if (!(a->known & VF_ARCH_F_VOCAB) || a->vocab < 0) {
		a->vocab = 32000;
		a->known |= VF_ARCH_F_VOCAB;
		assume(as, "vocabulary 32000 (vocab_size not in the model files: Llama 2's assumed)");
		vf_arch_not_understood(a, "vocab_size (absent: 32000 assumed)");
	}
	if (!(a->known & VF_ARCH_F_TIED)) {
		a->tied_embeddings = false;
		a->known |= VF_ARCH_F_TIED;
	}
}

/* An LTX DiT file: its layout from its own config (or tensors), its
 * parameters from the header; what the transformer file cannot say from
 * the catalog's ltx-2-19b entry, each listed as an assumption. */
static vf_status ltx_target(const struct vf_model *m, struct target *tg, struct assume *as,
			    struct vf_error *err)
{
	const struct vf_model_entry *def = NULL;
	vf_status st = vf_models_get("ltx-2-19b", &def, err);
	if (st)
		return st;
	if ((st = vf_dit_from_ltx_model(m, def ? def->raw : NULL, &tg->d, err)))
		return st;
	tg->dit = true;
	tg->d.from_file = true;
	tg->trainer_model = true;
	const struct vf_ltx_parts *pt = &m->ltx_parts;
	int64_t tr = pt->transformer > 0 ? pt->transformer : m->params;
	assume(as, "LTX video DiT from the file's %s; parameters from its header%s",
	       strcmp(m->ltx.source, "metadata") == 0 ? "transformer config (__metadata__)"
						      : "tensor names and shapes",
	       tr != m->params ? " (the transformer's prefix; connectors, VAEs and vocoder apart)" : "");
	assume(as, "embedding connectors: %.2f B parameters in bf16 on the GPU for the whole run (%s)",
	       (double)tg->d.connector_params / 1e9,
	       tg->d.connectors_from_file ? "from the header" : "from the layout: not in this file");
	if (m->ltx.assumed[0])
		assume(as, "not in the file: %s", m->ltx.assumed);
	if (m->ltx.unknown[0]) {
		assume(as, "not understood: %s; the layout (activations, LoRA) is approximate", m->ltx.unknown);
		snprintf(tg->unknown, sizeof tg->unknown, "%s", m->ltx.unknown);
	}
	if (vf_ltx_params(&m->ltx) != tr) {
		assume(as, "the layout counts %" PRId64 " parameters, the header %" PRId64
			   ": activations and LoRA are approximate", vf_ltx_params(&m->ltx), tr);
		size_t k = strlen(tg->unknown); /* named in the JSON's not_understood too */
		snprintf(tg->unknown + k, sizeof tg->unknown - k, "%sthe layout's parameter count (%" PRId64
			 " against the header's %" PRId64 ")", k ? ", " : "", vf_ltx_params(&m->ltx), tr);
	}
	const cJSON *list = def ? cJSON_GetObjectItemCaseSensitive(def->raw, "assumptions") : NULL;
	const cJSON *it;
	int i = 0;
	cJSON_ArrayForEach(it, list)
	if (cJSON_IsString(it) && i++ > 0) /* the first is the catalog's own layout */
		assume(as, "%s (catalog defaults)", it->valuestring);
	return VF_OK;
}

/* A diffusers pipeline: its "transformer" component when that is a DiT
 * (the part that trains); else the model itself. */
static const struct vf_model *dit_part(const struct vf_model *m)
{
	for (size_t i = 0; i < m->ncomponents; i++)
		if (strcmp(m->components[i]->name, "transformer") == 0 &&
		    (m->components[i]->has_vision || m->components[i]->has_ltx))
			return m->components[i];
	return m;
}

/* A vision or video model's config.json (or its files): diffusion
 * transformers are estimated as DiTs; the others are counted by inspect
 * but their training is not modelled here. */
static vf_status vision_target(const struct vf_model *m, struct target *tg, struct assume *as,
			       struct vf_error *err)
{
	const struct vf_vision *v = &m->vision;
	if (v->unknown[0])
		assume(as, "not understood: %s; the count is approximate", v->unknown);
	if (v->assumed[0])
		assume(as, "not in the config: %s", v->assumed);
	if (strcmp(v->kind, "dit") != 0 && strcmp(v->kind, "unet") != 0) {
		tg->vision = true;
		tg->vis = *v;
		tg->vis.params = m->params;
		tg->image_size = (int)v->image_size;
		if (strcmp(v->kind, "vlm") == 0)
			assume(as, "%s VLM, stage 2 (fine-tuning): the language model trained as --mode says over "
				   "text + %" PRId64 " image tokens, the vision tower frozen (bf16, no autograd), the "
				   "projector trained; stage 1 (projector only) needs less (frozen language model)",
			       v->family, v->image_tokens);
		else if (strcmp(v->kind, "speech") == 0 && v->nparts == 1)
			assume(as, "%s encoder trained as --mode says over %" PRId64 " audio frames per sample, "
				   "as a ViT-like stack (activations by mechanism, not measured on speech runs); "
				   "the convolutional feature encoder's activations over the raw waveform are not "
				   "counted: approximate",
			       v->family, v->parts[0].tokens);
		else if (strcmp(v->kind, "speech") == 0 && strcmp(v->family, "speecht5-tts") == 0)
			assume(as, "%s trained as --mode says: the text encoder over %" PRId64 " tokens, the speech "
				   "decoder over %" PRId64 " mel steps, both as ViT-like stacks (activations by "
				   "mechanism, not measured on speech runs); the prenets' and postnet's activations "
				   "are not counted: approximate",
			       v->family, v->parts[0].tokens, v->parts[1].tokens);
		else if (strcmp(v->kind, "speech") == 0)
			assume(as, "%s encoder-decoder trained as --mode says: the encoder over %" PRId64
				   " audio positions, the decoder over %" PRId64 " tokens, both as ViT-like "
				   "stacks (activations by mechanism, not measured on speech runs)",
			       v->family, v->parts[0].tokens, v->nparts > 1 ? v->parts[1].tokens : 0);
		else
			assume(as, "%s contrastive training of %s; images of %" PRId64 " px in the config (%" PRId64
				   " tokens; --video WxHx1 for another size)%s; activations by mechanism (not measured "
				   "on vision runs)",
			       v->family, v->nparts > 1 ? "both towers" : "one tower", v->image_size, v->image_tokens,
			       v->nparts > 1 ? " and full-length captions; batch-squared similarity logits" : "");
		return VF_OK;
	}
	const char *about;
	vf_status st = vf_dit_from_vision(v, m->params, &tg->d, &about, err);
	if (st)
		return st;
	tg->dit = true;
	tg->image_size = (int)v->image_size;
	tg->frames = (int)v->frames;
	assume(as, "%s %s from its config.json: %" PRId64 " %sblocks of %" PRId64
		   ", parameters counted from the layout%s",
	       v->family, v->nlevels ? "UNet" : "diffusion transformer", v->dit_layers,
	       v->nlevels ? "transformer " : "", v->parts[0].hidden, m->files > 0 ? " (the header's count used)" : "");
	if (about[0])
		assume(as, "%s", about);
	else
		assume(as, "the text encoder and VAE of the %s pipeline are not counted (no figures for this family): "
			   "give the pipeline folder for its own components", v->family);
	assume(as, "%s", v->nlevels ? "UNet activations per level: residual blocks (12 bytes per channel per latent "
				      "pixel) and transformer blocks (the DiT block mechanism, GEGLU FFN) at each "
				      "level's width and pixels; not measured on UNet runs"
				    : "activations per token: the DiT block mechanism of LTX-2 without its audio stream "
				      "(self-attention, text cross-attention, GELU FFN)");
	return VF_OK;
}

/* LLMs: the step replayed through the caching allocator simulation
 * decides the device peak (*sim, may be NULL, keeps it for --explain);
 * vision models and DiTs: their analytic estimators. */
static vf_status run_one(const struct target *tg, const struct vf_setup *s,
			 const struct vf_gpu_spec *g, struct vf_estimate *e, struct vf_alloc **sim,
			 struct vf_error *err)
{
	if (tg->vision && strcmp(tg->vis.kind, "vlm") == 0) {
		vf_estimate_vlm(&tg->vis, s, g, e);
		return VF_OK;
	}
	if (tg->vision) {
		vf_estimate_vit(&tg->vis, s, g, e);
		return VF_OK;
	}
	if (tg->dit) {
		vf_estimate_dit(&tg->d, s, g, e);
		return VF_OK;
	}
	return vf_estimate_simulate_memo(&tg->arch, s, g, &tg->alloc, tg->memo, e, sim, err);
}

static int64_t max_batch(const struct target *tg, const struct vf_setup *s, const struct vf_gpu_spec *g)
{
	if (tg->vision)
		return vf_estimate_vision_max_batch(&tg->vis, s, g, 0);
	return tg->dit ? vf_estimate_dit_max_batch(&tg->d, s, g, 0)
		       : vf_estimate_max_batch_simulated(&tg->arch, s, g, &tg->alloc, tg->memo);
}

/* --explain: the caching allocator's segments at the reserved peak. */
static void print_segments(const struct vf_alloc *a, const struct vf_estimate *e,
			   const struct vf_alloc_config *cfg)
{
	int n = 0, total = 0;
	const struct vf_alloc_segment *sg = vf_alloc_peak_segments(a, &n, &total);
	char b1[32], b2[32], b3[32];
	int64_t small = 0, small_used = 0, large = 0, large_used = 0;
	int nsmall = 0;
	for (int i = 0; i < n; i++) {
		if (sg[i].small) {
			small += sg[i].size, small_used += sg[i].used, nsmall++;
		} else {
			large += sg[i].size, large_used += sg[i].used;
		}
	}
	printf("\nCaching allocator at the reserved peak (%s%s; simulated over load + 2 steps):\n",
	       cfg->expandable ? "expandable_segments:True" : "cudaMalloc segments",
	       cfg->max_split_bytes > 0 ? ", max_split_size_mb set" : "");
	printf("  reserved %s = allocated %s + unused %s; fast path %s\n",
	       vf_fmt_bytes(b1, sizeof b1, (double)vf_alloc_peak_reserved(a)),
	       vf_fmt_bytes(b2, sizeof b2, (double)(small_used + large_used)),
	       vf_fmt_bytes(b3, sizeof b3, (double)(small + large - small_used - large_used)),
	       vf_fmt_bytes((char[32]){0}, 32, (double)e->analytic_reserved_bytes));
	if (e->sim_short)
		printf("  below the step's analytic allocated peak (%s), which the estimate keeps: the "
		       "replay misses tensors of this setup\n",
		       vf_fmt_bytes(b1, sizeof b1, (double)e->peak_allocated_bytes));
	printf("  small pool: %d segments of 2 MiB, %s used of %s\n", nsmall,
	       vf_fmt_bytes(b1, sizeof b1, (double)small_used), vf_fmt_bytes(b2, sizeof b2, (double)small));
	printf("  large pool: %d segments, %s used of %s; the largest:\n", total - nsmall,
	       vf_fmt_bytes(b1, sizeof b1, (double)large_used), vf_fmt_bytes(b2, sizeof b2, (double)large));
	printf("    %12s %12s %12s %7s\n", "segment", "allocated", "unused", "blocks");
	for (int i = 0, shown = 0; i < n && shown < 12; i++) {
		if (sg[i].small)
			continue;
		printf("    %12s %12s %12s %7d\n", vf_fmt_bytes(b1, sizeof b1, (double)sg[i].size),
		       vf_fmt_bytes(b2, sizeof b2, (double)sg[i].used),
		       vf_fmt_bytes(b3, sizeof b3, (double)(sg[i].size - sg[i].used)), sg[i].blocks);
		shown++;
	}
}

/* --explain, under the parts: what the mechanisms folded into them do to
 * the step (torch.compile's fusion, against the same step run eager;
 * bitsandbytes' 8-bit kernels inside the optimizer step). */
static void print_step_mechanisms(const struct target *tg, const struct gpu_row *r)
{
	const struct vf_estimate *e = &r->est;
	if (r->setup.compile && !tg->dit && !tg->vision) {
		struct vf_setup s = r->setup;
		s.compile = false;
		struct vf_estimate eager;
		struct vf_error err = {0};
		if (run_one(tg, &s, &r->spec, &eager, NULL, &err) == VF_OK && eager.step_seconds > 0)
			printf("  %-30s %9.1f ms less than eager (%.0f ms): memory-bound kernels fused, "
			       "fewer launches, the loss's logits passes\n",
			       "torch.compile", 1e3 * (eager.step_seconds - e->step_seconds),
			       1e3 * eager.step_seconds);
	}
	if (r->setup.optimizer == VF_OPT_ADAMW8BIT && e->parts.optimizer > 0 && !tg->dit && !tg->vision) {
		struct vf_setup s = r->setup;
		s.optimizer = VF_OPT_ADAMW;
		struct vf_estimate adamw;
		struct vf_error err = {0};
		if (run_one(tg, &s, &r->spec, &adamw, NULL, &err) == VF_OK && adamw.parts.optimizer > 0)
			printf("  %-30s %9.1f ms in the optimizer step against %.1f ms for torch's AdamW: "
			       "bitsandbytes' blockwise kernels, one per tensor from a Python loop\n",
			       "8-bit optimizer", 1e3 * e->parts.optimizer, 1e3 * adamw.parts.optimizer);
	}
}

/* --explain, under the parts: the bytes behind the traffic parts (what
 * each GPU sends per optimizer step; the paged states migrated). */
static void print_step_traffic(const struct gpu_row *r)
{
	const struct vf_estimate *e = &r->est;
	char b[32];
	if (e->parts.comm_total > 0)
		printf("  %-30s %9.1f ms (%.1f ms hidden behind compute; %s sent by each GPU per step)\n",
		       "communication in all", 1e3 * e->parts.comm_total,
		       1e3 * (e->parts.comm_total - e->parts.comm_exposed),
		       vf_fmt_bytes(b, sizeof b, e->parts.comm_bytes));
	double paged = vf_estimate_paged_traffic_bytes(e, &r->spec);
	if (e->parts.paging > 0 && paged > 0)
		printf("  %-30s %s of optimizer states beyond the card's memory migrated over PCIe each "
		       "step\n",
		       "paged states", vf_fmt_bytes(b, sizeof b, paged));
}

/* Checkpointing's Python on the host (not a part of its own: it is in
 * the passes' host time, hidden behind the GPU's kernels or inside the
 * launches above). */
static void print_ckpt_host(const struct vf_estimate *e)
{
	if (!(e->parts.ckpt_host >= 5e-5))
		return;
	printf("  %-30s %9.1f ms (%s)\n", "checkpoint hooks (host)", 1e3 * e->parts.ckpt_host,
	       e->parts.launch >= 5e-5 ? "pack/unpack per saved tensor, RNG and autocast per block: "
					 "in the launches above"
				       : "pack/unpack per saved tensor, RNG and autocast per block: "
					 "hidden behind the GPU's kernels");
}

/* --explain: each GPU's step time as its parts (lib/estimate/steptime.c,
 * nccl.c), so a slow card or link shows where its time goes. Returns how
 * many GPUs' steps it showed. */
static int print_step_parts(const struct target *tg, const struct gpu_row *rows, int nrows)
{
	int shown = 0;
	static const char *const label[] = {
		"GEMMs", "attention", "memory-bound kernels", "launches (host-bound)", "MoE expert loop",
		"base dequantization", "optimizer step", "activation offload (exposed)",
		"paged optimizer (PCIe)", "CPU offload copies (exposed)", "optimizer step on the host",
		"per-step overhead", "communication (exposed)", "compute slowed by NCCL's SMs"};
	for (int i = 0; i < nrows; i++) {
		const struct gpu_row *r = &rows[i];
		const struct vf_estimate *e = &r->est;
		if (r->split && r->split->step_seconds > 0) { /* the split's own step */
			const struct vf_split *sp = r->split;
			printf("\nStep time on %s, one replica over %d GPUs (tp %d x pp %d): %.0f ms\n",
			       r->spec.name, sp->ngpus, sp->tp, sp->pp, 1e3 * sp->step_seconds);
			printf("  %-30s %9.1f ms\n", "stages' compute", 1e3 * sp->compute_seconds);
			if (sp->tp_comm_seconds > 0)
				printf("  %-30s %9.1f ms (on the critical path)\n", "tensor-parallel all-reduces",
				       1e3 * sp->tp_comm_seconds);
			if (sp->p2p_seconds > 0)
				printf("  %-30s %9.1f ms\n", "hand-overs between GPUs", 1e3 * sp->p2p_seconds);
			if (sp->bubble_seconds > 0)
				printf("  %-30s %9.1f ms\n", "pipeline bubble", 1e3 * sp->bubble_seconds);
			shown++;
			continue;
		}
		if (!(e->step_seconds > 0) || !(e->parts.compute > 0) || r->split)
			continue;
		shown++;
		const char *names[16];
		double v[16];
		int n = vf_estimate_parts_list(e, names, v);
		printf("\nStep time on %s%s: %.0f ms", r->spec.name, r->setup.gpus > 1 ? " (each GPU)" : "",
		       1e3 * e->step_seconds);
		if (r->setup.gpus > 1)
			printf(", %d GPUs %s over %s", r->setup.gpus, vf_shard_name(r->setup.shard),
			       e->parts.link[0] ? e->parts.link : "an unknown link");
		printf("\n");
		for (int k = 0; k < n && k < (int)(sizeof label / sizeof label[0]); k++) {
			if (k == 3 && !(v[k] >= 5e-5) && !tg->dit && !tg->vision) {
				/* the host's launches, even when the GPU's kernels hide them */
				printf("  %-30s %9.1f ms (the host keeps ahead of the GPU's kernels)\n", label[k],
				       1e3 * v[k]);
				continue;
			}
			if (!(v[k] >= 5e-5)) /* under 0.05 ms */
				continue;
			printf("  %-30s %9.1f ms %5.1f%%\n", label[k], 1e3 * v[k], 100 * v[k] / e->step_seconds);
		}
		print_ckpt_host(e);
		print_step_traffic(r);
		print_step_mechanisms(tg, r);
	}
	return shown;
}

/* --explain without an allocator simulation: what it covers, and what
 * this model's figures are (parts_shown: the step's parts were shown). */
static void print_explain_none(const struct target *tg, bool parts_shown)
{
	const char *kind = tg->vision ? tg->vis.kind : tg->d.nlevels > 0 ? "unet" : tg->dit ? "dit" : "llm";
	static const struct {
		const char *kind, *words;
	} words[] = {{"dit", "DiT"}, {"unet", "UNet"}, {"vit", "vision encoder"}, {"clip", "vision encoder"}};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strcmp(kind, words[i].kind) == 0) {
			if (parts_shown) /* a DiT's step in parts (dit.c) */
				printf("\n--explain: the allocator's segments are worked out for language models; "
				       "for this %s its peak is the memory terms above with an estimated allocator "
				       "reserve (not simulated), its step time the parts above\n",
				       words[i].words);
			else
				printf("\n--explain: the allocator's segments and the step's parts are worked out "
				       "for language models; for this %s its peak is the memory terms above with "
				       "an estimated allocator reserve (not simulated), its step time one figure "
				       "without parts\n",
				       words[i].words);
			return;
		}
	if (!parts_shown)
		printf("\n--explain: nothing to break down: no allocator simulation ran and no GPU's step time "
		       "is known\n");
}

/* --- one model across GPUs (--split layers, --tp, --pp; split.h) ---------- */

static void split_setup_words(const struct vf_setup *s, const struct vf_split *sp, char *o, size_t n)
{
	if (s->split == VF_SPLIT_LAYERS) {
		snprintf(o, n, ", layer split over %d GPUs", sp ? sp->ngpus : s->gpus);
		return;
	}
	int dp = sp ? sp->dp : s->gpus / (s->tp * s->pp);
	size_t k = (size_t)snprintf(o, n, ", %d GPUs: tp %d x pp %d x dp %d", dp * s->tp * s->pp, s->tp,
				    s->pp, dp);
	if (k < n && s->sequence_parallel)
		k += (size_t)snprintf(o + k, n - k, ", sequence parallel");
	if (k < n && s->pp > 1)
		k += (size_t)snprintf(o + k, n - k, ", %d micro-batches (1F1B)", (int)s->micro_batches);
	if (k < n && dp > 1)
		snprintf(o + k, n - k, ", %s", vf_shard_name(s->shard));
}

/* Run the split for a row; VF_EUSAGE when the model does not split so. */
static vf_status split_row(const struct target *tg, const struct vf_setup *rs, struct gpu_row *r,
			   struct vf_error *err)
{
	if (tg->dit)
		return vf_error_set(err, VF_EUSAGE, "--split/--tp/--pp: video DiTs are not split (LLMs only)");
	r->split = calloc(1, sizeof *r->split);
	if (!r->split)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	vf_status st = vf_split_run(&tg->arch, rs, &r->spec, r->split, err);
	if (st == VF_OK) /* each GPU's reserve from the allocator replayed over its slice */
		st = vf_split_simulate(&tg->arch, rs, &r->spec, &tg->alloc, tg->memo, r->split, err);
	if (st)
		return st;
	r->est = r->split->total;
	r->fits = r->split->fits;
	r->headroom = r->split->gpu[r->split->limiting].headroom;
	/* the largest batch the same rule says fits: each GPU's slice replayed */
	r->max_batch = vf_estimate_max_batch_simulated(&tg->arch, rs, &r->spec, &tg->alloc, tg->memo);
	if (r->max_batch < 0)
		r->max_batch = 0;
	return VF_OK;
}

static void split_assumptions(const struct vf_setup *s, const struct vf_arch *arch, struct assume *a)
{
	/* ZeRO/FSDP shard over the data-parallel ranks: a split that is one
	 * replica has none (the rows' figures are unsharded) */
	bool layers = s->split == VF_SPLIT_LAYERS;
	if ((s->given & VF_SETUP_G_SHARD) && s->shard >= VF_SHARD_ZERO1 && (layers || s->gpus <= s->tp * s->pp))
		assume(a, "--shard %s over one replica shards nothing: the %s holds one copy of the model over its "
			  "GPUs, no data-parallel rank to shard it with; every figure is unsharded%s",
		       vf_shard_name(s->shard), layers ? "layer split" : "tp x pp split",
		       layers ? "" : " (--gpus a multiple of tp x pp to shard over the replicas)");
	if (layers) {
		assume(a, "layer split as accelerate's device_map=\"auto\" places modules: embeddings first, "
			  "whole layers in order, each GPU but the last filled by weights up to the model's size "
			  "over the GPUs plus 1.25 layers (get_balanced_memory), at most its memory less the CUDA "
			  "context (--max-memory GPU=GiB); KV cache and activations stay with their layers");
		assume(a, "one GPU works at a time: step = sum of the GPUs' steps + hidden states handed "
			  "over the link (half the catalog's bidirectional interconnect)");
		return;
	}
	if (s->tp > 1)
		assume(a, "tensor parallel (Megatron): heads, KV heads, MLP width and vocabulary 1/%d per GPU, "
			  "norms and the residual stream replicated%s; ring all-reduce of the hidden state after "
			  "attention and MLP (x2 in training), not overlapped",
		       s->tp, s->sequence_parallel ? " but split over the sequence (--sequence-parallel)" : "");
	if (s->pp > 1)
		assume(a, "pipeline 1F1B: stage i holds the activations of min(%d - i, %d) micro-batches; "
			  "bubble = (stages - 1) micro-batch slots; stages of 8 GPUs per node, 50 GB/s "
			  "between nodes",
		       s->pp, (int)s->micro_batches);
	if (s->pp > 1 && arch->tied_embeddings && arch->vocab > 0 && arch->hidden > 0)
		assume(a, "tied embeddings held twice: the last stage keeps a copy of the %lld x %lld token table "
			  "as its head (Megatron; its gradient all-reduced with stage 0's), so the stages' weights "
			  "sum to the model's plus that table",
		       (long long)arch->vocab, (long long)arch->hidden);
}

static void print_split(FILE *o, const struct gpu_row *r)
{
	const struct vf_split *sp = r->split;
	char b1[32], b2[32], b3[32], b4[32], b5[32], d[160];
	fprintf(o, "\n%s%s x%d%s: %s\n", vf_cli_sgr(o, "1"), r->spec.id, sp->ngpus, vf_cli_sgr(o, "0"),
		sp->kind == VF_SPLIT_LAYERS ? "layer split (accelerate device_map=\"auto\"), one GPU at a time"
					    : "tensor x pipeline parallel replica (Megatron-style)");
	/* inference holds no gradients nor optimizer states: no column for them */
	bool train = r->setup.mode != VF_MODE_INFER;
	const char *hdr[] = {"GPU", "holds", "weights", "grads + states", "KV cache", "activations",
			     "peak", "fits"};
	const char *hdr_inf[] = {"GPU", "holds", "weights", "KV cache", "activations", "peak", "fits"};
	struct vf_table t;
	int nc = train ? 8 : 7;
	vf_table_init(&t, nc, train ? hdr : hdr_inf);
	for (int c = 2; c < nc; c++)
		vf_table_set_right(&t, c, true);
	for (int i = 0; i < sp->ngpus; i++) {
		const struct vf_split_gpu *g = &sp->gpu[i];
		char id[16], st[32] = "-";
		snprintf(id, sizeof id, "%d%s", i, i == sp->limiting ? " *" : "");
		if (g->est.gradients_full + g->est.optimizer_full > 0)
			vf_fmt_bytes(st, sizeof st, (double)(g->est.gradients_full + g->est.optimizer_full));
		vf_fmt_bytes(b1, sizeof b1, (double)g->est.weights_full);
		vf_fmt_bytes(b2, sizeof b2, (double)g->est.kv_cache_full);
		vf_fmt_bytes(b3, sizeof b3, (double)g->est.activations_bytes);
		vf_fmt_bytes(b4, sizeof b4, (double)g->est.peak_bytes);
		vf_split_describe(sp, g, d, sizeof d);
		if (train)
			vf_table_addf(&t, id, d, b1, st, b2, b3, b4, g->fits ? "yes" : "no");
		else
			vf_table_addf(&t, id, d, b1, b2, b3, b4, g->fits ? "yes" : "no");
	}
	vf_table_print(&t, o);
	vf_table_release(&t);
	fprintf(o, "* GPU %d decides the verdict (least headroom: %s)\n", sp->limiting,
		vf_fmt_bytes(b1, sizeof b1, (double)sp->gpu[sp->limiting].headroom));
	if (sp->step_seconds > 0)
		fprintf(o, "step %s = compute %s + tensor-parallel all-reduces %s + hand-overs %s + "
			   "pipeline bubble %s (link %s, %.0f GB/s each way%s)\n",
			vf_fmt_seconds(b1, sizeof b1, sp->step_seconds),
			vf_fmt_seconds(b2, sizeof b2, sp->compute_seconds),
			vf_fmt_seconds(b3, sizeof b3, sp->tp_comm_seconds),
			vf_fmt_seconds(b4, sizeof b4, sp->p2p_seconds),
			vf_fmt_seconds(b5, sizeof b5, sp->bubble_seconds), sp->link && *sp->link ? sp->link : "?",
			sp->link_gbs, sp->network_gbs > 0 ? "; 50 GB/s between nodes" : "");
}

/* The setup in words: "lora r16 alpha 16 on q_proj,v_proj, bf16, ...". */
static void setup_words(const struct target *tg, const struct vf_setup *s, const struct gpu_row *rows,
			int nrows, char *setup, size_t size)
{
	char b3[64];
	size_t n = 0;
	bool tiered = nrows > 0 && rows[0].tier_what[0];
	if (tiered) {
		s = &rows[0].setup;
		char fl[200];
		vf_setup_flags_words(rows[0].tier_over, fl, sizeof fl);
		n += (size_t)snprintf(setup + n, size - n, "each GPU under its tier's config%s%s (Assumptions); %s: ",
				      fl[0] ? " with your " : "", fl, rows[0].spec.id);
	}
	n += (size_t)snprintf(setup + n, size - n, "%s", vf_mode_name(s->mode));
	if (s->mode == VF_MODE_LORA && tg->dit) {
		static const struct { unsigned bit; const char *name; } dt[] = {
			{VF_LORA_Q, "to_q"}, {VF_LORA_K, "to_k"}, {VF_LORA_V, "to_v"}, {VF_LORA_O, "to_out.0"}};
		n += (size_t)snprintf(setup + n, size - n, " r%d alpha %g on", s->lora_rank, s->lora_alpha);
		for (size_t i = 0; i < sizeof dt / sizeof dt[0] && n < size; i++)
			if (s->lora_targets & dt[i].bit)
				n += (size_t)snprintf(setup + n, size - n, " %s", dt[i].name);
	} else if (s->mode == VF_MODE_LORA)
		n += (size_t)snprintf(setup + n, size - n, " r%d alpha %g on %s", s->lora_rank,
				      s->lora_alpha, vf_setup_lora_targets_text(s, b3, sizeof b3));
	char pw[32];
	n += (size_t)snprintf(setup + n, size - n, ", %s", vf_cli_precision_words(s, pw, sizeof pw));
	if (s->quant != VF_QUANT_NONE)
		n += (size_t)snprintf(setup + n, size - n, ", %s base", vf_quant_name(s->quant));
	if (s->mode != VF_MODE_INFER)
		n += (size_t)snprintf(setup + n, size - n, ", %s (%s)", vf_optimizer_name(s->optimizer),
				      vf_optimizer_impl_name(s->optimizer_impl));
	if (tg->dit)
		n += (size_t)snprintf(setup + n, size - n,
				      ", batch %" PRId64 " x %dx%dx%d video (%" PRId64 " video + %" PRId64
				      " audio tokens)",
				      s->batch, s->video_width, s->video_height, s->video_frames,
				      vf_dit_video_tokens(&tg->d, s->video_width, s->video_height, s->video_frames),
				      s->audio ? vf_dit_audio_tokens(&tg->d, s->video_frames) : 0);
	else if (tg->vision && strcmp(tg->vis.kind, "vlm") == 0)
		n += (size_t)snprintf(setup + n, size - n,
				      ", batch %" PRId64 " x (%" PRId64 " text + %" PRId64 " image tokens)", s->batch,
				      s->seq, vf_vision_tokens(&tg->vis, s->video_width, s->video_height, 0));
	else if (tg->vision && strcmp(tg->vis.kind, "speech") == 0)
		n += (size_t)snprintf(setup + n, size - n, ", batch %" PRId64 " x %" PRId64 " %s", s->batch,
				      tg->vis.parts[0].tokens,
				      strcmp(tg->vis.family, "speecht5-tts") == 0 ? "text tokens + speech"
				      : tg->vis.nparts > 1			 ? "audio positions + transcript"
										 : "audio positions");
	else if (tg->vision)
		n += (size_t)snprintf(setup + n, size - n,
				      ", batch %" PRId64 " x %dx%d images (%" PRId64 " tokens each)", s->batch,
				      s->video_width, s->video_height,
				      vf_vision_tokens(&tg->vis, s->video_width, s->video_height, 0));
	else
		n += (size_t)snprintf(setup + n, size - n, ", batch %" PRId64 " x %" PRId64 " tokens",
				      s->batch, s->seq);
	if (s->grad_accum > 1)
		n += (size_t)snprintf(setup + n, size - n, ", accumulation %" PRId64, s->grad_accum);
	if (s->mode != VF_MODE_INFER)
		n += (size_t)snprintf(setup + n, size - n, ", checkpointing %s", s->grad_ckpt ? "on" : "off");
	if (vf_split_active(s) && n < size)
		split_setup_words(s, nrows ? rows[0].split : NULL, setup + n, size - n);
	else if (s->gpus > 1 && n < size)
		snprintf(setup + n, size - n, ", %d GPUs %s", s->gpus, vf_shard_name(s->shard));
}

/* Where a report could read another peak (paged states outside PyTorch's
 * allocator, a load transient, the run's scope): each peak under the name
 * of the tool that prints it, for the step and for the run. */
static void print_peaks_by_tool(FILE *o, const struct vf_estimate *e)
{
	if (e->run_peak_bytes <= 0 || /* not an LLM estimate */
	    (e->paged_bytes <= 0 && e->load_peak_allocated_bytes <= 0 && e->peak_scope != VF_PEAK_RUN))
		return;
	char a[32], r[32], s[32];
	fprintf(o, "peaks by tool (this estimate reads the %s):\n",
		e->peak_scope == VF_PEAK_RUN ? "run, load included (--peak-scope)" : "steady-state step (--peak-scope)");
	fprintf(o, "  step  torch.cuda.max_memory_allocated() %s, max_memory_reserved() %s, nvidia-smi %s\n",
		vf_fmt_bytes(a, sizeof a, (double)e->step_peak_allocated_bytes),
		vf_fmt_bytes(r, sizeof r, (double)e->step_peak_reserved_bytes),
		vf_fmt_bytes(s, sizeof s, (double)e->step_peak_bytes));
	fprintf(o, "  run   torch.cuda.max_memory_allocated() %s, max_memory_reserved() %s, nvidia-smi %s\n",
		vf_fmt_bytes(a, sizeof a, (double)e->run_peak_allocated_bytes),
		vf_fmt_bytes(r, sizeof r, (double)e->run_peak_reserved_bytes),
		vf_fmt_bytes(s, sizeof s, (double)e->run_peak_bytes));
}

/* The memory terms at the peak, as a table. */
static void print_terms(FILE *o, const struct vf_estimate *e0, const struct gpu_row *rows, int nrows)
{
	char b1[64], b2[64];
	const char *bold = vf_cli_sgr(o, "1"), *off = vf_cli_sgr(o, "0");
	if (nrows && rows[0].split)
		fprintf(o, "%sMemory at the peak%s (%s phase, on %s GPU %d of the split: the one that limits)\n",
			bold, off, e0->peak_at_load ? "load" : vf_estimate_phase_name(e0, e0->peak_phase),
			rows[0].spec.id, rows[0].split->limiting);
	else
		fprintf(o, "%sMemory at the peak%s (%s phase%s%s)\n", bold, off,
			e0->peak_at_load ? "load" : vf_estimate_phase_name(e0, e0->peak_phase),
			nrows ? ", on " : "", nrows ? rows[0].spec.id : "");
	const char *hdr[] = {"term", "size", "% of peak"};
	struct vf_table t;
	vf_table_init(&t, 3, hdr);
	vf_table_set_right(&t, 1, true);
	vf_table_set_right(&t, 2, true);
	static const char *const label[VF_TERM_COUNT] = {
		"weights",      "gradients",   "optimizer states", "optimizer temporaries",
		"autocast copies", "activations", "logits and loss",  "KV cache",
		"CUDA context", "allocator reserve"};
	double peak = (double)e0->peak_bytes;
	for (int i = 0; i < VF_TERM_COUNT; i++) {
		int64_t v = vf_estimate_term(e0, (enum vf_term)i);
		if (v <= 0 && i != VF_TERM_WEIGHTS)
			continue;
		if (i == VF_TERM_CONTEXT) {
			vf_table_addf(&t, "peak allocated", vf_fmt_bytes(b1, sizeof b1, (double)e0->peak_allocated_bytes),
				      (snprintf(b2, sizeof b2, "%.1f%%", 100.0 * e0->peak_allocated_bytes / peak), b2));
		}
		vf_table_addf(&t, label[i], vf_fmt_bytes(b1, sizeof b1, (double)v),
			      (snprintf(b2, sizeof b2, "%.1f%%", 100.0 * v / peak), b2));
	}
	if (e0->paged_bytes > 0) /* CUDA managed memory: nvidia-smi sees it, PyTorch does not */
		vf_table_addf(&t, "paged states", vf_fmt_bytes(b1, sizeof b1, (double)e0->paged_bytes),
			      (snprintf(b2, sizeof b2, "%.1f%%", 100.0 * (double)e0->paged_bytes / peak), b2));
	vf_table_addf(&t, "peak on device", vf_fmt_bytes(b1, sizeof b1, peak), "100.0%");
	vf_table_print(&t, o);
	vf_table_release(&t);
	if (e0->optimizer_full > e0->optimizer_bytes || e0->gradients_full > e0->gradients_bytes)
		fprintf(o, "(held outside the peak phase: gradients %s, optimizer temporaries %s)\n",
			vf_fmt_bytes(b1, sizeof b1, (double)e0->gradients_full),
			vf_fmt_bytes(b2, sizeof b2, (double)e0->optimizer_temp_full));
	print_peaks_by_tool(o, e0);

}

/* A pipeline: each phase's memory, then each component's role. */
static void print_pipeline(FILE *o, const struct target *tg, const struct vf_estimate *e)
{
	char b[4][64];
	const char *bold = vf_cli_sgr(o, "1"), *off = vf_cli_sgr(o, "0");
	fprintf(o, "\n%sMemory by phase%s (allocated; the reserve counted at the peak only)\n", bold, off);
	const char *hdr[] = {"phase", "weights", "activations", "other", "total"};
	struct vf_table t;
	vf_table_init(&t, 5, hdr);
	for (int c = 1; c < 5; c++)
		vf_table_set_right(&t, c, true);
	for (int p = 0; p < VF_PHASE_COUNT; p++) {
		if (!(e->phases & (1u << p)))
			continue;
		double all = 0, w = (double)e->phase_bytes[p][VF_TERM_WEIGHTS],
		       act = (double)e->phase_bytes[p][VF_TERM_ACTIVATIONS];
		for (int k = 0; k < VF_TERM_COUNT; k++)
			all += (double)e->phase_bytes[p][k];
		char name[48];
		snprintf(name, sizeof name, "%s%s", vf_estimate_phase_name(e, (enum vf_phase)p),
			 p == (int)e->peak_phase ? " (peak)" : "");
		vf_table_addf(&t, name, vf_fmt_bytes(b[0], sizeof b[0], w), vf_fmt_bytes(b[1], sizeof b[1], act),
			      vf_fmt_bytes(b[2], sizeof b[2], all - w - act), vf_fmt_bytes(b[3], sizeof b[3], all));
	}
	vf_table_print(&t, o);
	vf_table_release(&t);
	fprintf(o, "\n%sComponents%s\n", bold, off);
	const char *h2[] = {"component", "params", "role", "on the GPU in the step"};
	vf_table_init(&t, 4, h2);
	vf_table_set_right(&t, 1, true);
	for (int i = 0; i < tg->npipe; i++)
		vf_table_addf(&t, tg->pipe[i].name,
			      tg->pipe[i].params >= 0 ? vf_fmt_params(b[0], sizeof b[0], tg->pipe[i].params)
						      : "not understood",
			      vf_pipeline_role_name(tg->pipe[i].role), tg->pipe[i].resident ? "yes" : "no");
	vf_table_print(&t, o);
	vf_table_release(&t);
}

/* One row per GPU kind: fits, headroom, largest micro-batch, speed. */
/* A row's VRAM in words: the card's, or a set of unequal cards' each
 * ("24.00 GiB + 16.00 GiB"). */
static void set_vram(const struct gpu_row *r, char *o, size_t n)
{
	vf_fmt_bytes(o, n, (double)vf_estimate_gpu_bytes(&r->spec));
	for (int d = 1; r->unequal && d < r->ndev; d++) {
		char b[32];
		size_t k = strlen(o);
		snprintf(o + k, n - k, " + %s", vf_fmt_bytes(b, sizeof b, (double)vf_estimate_gpu_bytes(&r->dev[d])));
	}
}

/* An engine row's TTFT, prefill tokens/s and decode tokens/s (all users), "-" unknown. */
static void engine_speeds(const struct vf_infer *f, char *ttft, size_t n1, char *pre, size_t n2, char *dec, size_t n3)
{
	snprintf(ttft, n1, "-");
	snprintf(pre, n2, "-");
	snprintf(dec, n3, "-");
	if (f->ttft_seconds > 0) {
		vf_fmt_seconds(ttft, n1, f->ttft_seconds);
		snprintf(pre, n2, "%.0f", vf_est_engine_prefill_tps(f));
	}
	if (f->decode_step_seconds > 0)
		snprintf(dec, n3, "%.0f", f->decode_tokens_per_second_total);
}

static void print_gpus(FILE *o, const struct gpu_row *rows, int nrows, const char *gsource)
{
	char b1[64], b2[64], b3[64];
	const char *bold = vf_cli_sgr(o, "1"), *red = vf_cli_sgr(o, "31"), *green = vf_cli_sgr(o, "32"),
		   *off = vf_cli_sgr(o, "0");
	struct vf_table t;
	fprintf(o, "\n%sGPUs%s (%s)\n", bold, off,
		strcmp(gsource, "given") == 0 ? "as given" : strcmp(gsource, "probed") == 0 ? "this machine" : "common cards: none given or found");
	/* an engine's row: the prompt's forward (TTFT, prefill) and its decode,
	 * not a training step */
	bool engine = nrows && rows[0].has_inf && vf_est_engine_own(&rows[0].inf);
	const char *gh[] = {"GPU", "VRAM", "fits", "headroom", nrows && rows[0].has_inf ? "max users" : "max batch",
			    engine ? "TTFT" : "step", engine ? "prefill tok/s" : "tokens/s", engine ? "decode tok/s" : "MFU"};
	vf_table_init(&t, 8, gh);
	for (int c = 1; c < 8; c++)
		vf_table_set_right(&t, c, true);
	for (int i = 0; i < nrows; i++) {
		const struct gpu_row *r = &rows[i];
		char id[64], mb[32], tps[32], mfu[32];
		if (r->count > 1 && !r->unequal)
			snprintf(id, sizeof id, "%s x%d", r->spec.id, r->count);
		else
			snprintf(id, sizeof id, "%s", r->spec.id);
		set_vram(r, b1, sizeof b1);
		snprintf(mb, sizeof mb, "%" PRId64, r->max_batch);
		char fits[32];
		snprintf(fits, sizeof fits, "%s%s%s", r->fits ? green : red, r->fits ? "yes" : "no", off);
		if (engine) {
			engine_speeds(&r->inf, b3, sizeof b3, tps, sizeof tps, mfu, sizeof mfu);
			vf_table_addf(&t, id, b1, fits, vf_fmt_bytes(b2, sizeof b2, (double)r->headroom), mb, b3, tps,
				      mfu);
			continue;
		}
		if (r->est.step_seconds > 0) {
			snprintf(tps, sizeof tps, "%.0f", r->est.tokens_per_second);
			snprintf(mfu, sizeof mfu, "%.0f%%", 100 * r->est.mfu);
		} else {
			snprintf(tps, sizeof tps, "-");
			snprintf(mfu, sizeof mfu, "-");
		}
		vf_table_addf(&t, id, b1, fits,
			      vf_fmt_bytes(b2, sizeof b2, (double)r->headroom), mb,
			      vf_fmt_seconds(b3, sizeof b3, r->est.step_seconds), tps, mfu);
	}
	vf_table_print(&t, o);
	vf_table_release(&t);
}

/* Each row's vf_estimate_retries_note. */
static void print_capacity_notes(FILE *o, const struct gpu_row *rows, int nrows)
{
	char b[320];
	for (int i = 0; i < nrows; i++)
		if (!(rows[i].has_inf && vf_est_engine_own(&rows[i].inf)) &&
		    vf_estimate_retries_note(rows[i].est.sim_retries, b, sizeof b))
			fprintf(o, "%s: %s\n", rows[i].spec.id, b);
}

/* Each GPU it does not fit: why, and the cheapest changes that fit. */
static void print_advice(FILE *o, const struct gpu_row *rows, int nrows, double margin, bool dit)
{
	char b1[64], b2[64], b4[64], margin_note[64], rem[512];
	snprintf(margin_note, sizeof margin_note, "; %.0f%% of the GPU kept free, --margin", 100 * margin);
	for (int i = 0; i < nrows; i++) {
		const struct gpu_row *r = &rows[i];
		if (r->fits)
			continue;
		if (r->has_inf && r->inf.engine == VF_ENGINE_LLAMACPP) {
			fprintf(o, "%s: llama.cpp does not fit: %s", r->spec.id, r->inf.why);
			if (r->inf.max_ctx > 0)
				fprintf(o, " or --ctx %" PRId64 " or less", r->inf.max_ctx);
			fprintf(o, "\n");
			continue;
		}
		if (r->has_inf && r->inf.engine == VF_ENGINE_VLLM) {
			char ctx[64] = "a smaller --ctx";
			if (r->inf.max_ctx > 0)
				snprintf(ctx, sizeof ctx, "--ctx %" PRId64 " or less", r->inf.max_ctx);
			fprintf(o, "%s: vLLM refuses to start: %s; try %s, --kv-cache-dtype fp8, --quant or --tp N\n",
				r->spec.id, r->inf.why, ctx);
			continue;
		}
		if (r->users_refused) {
			fprintf(o, "%s: generate() does not fit: %s (needs %s of %s); try %s %" PRId64
				   " and the rest in turns, a smaller --ctx, --quant, or a serving engine that "
				   "queues them (--engine vllm)\n",
				r->spec.id, r->inf.why, vf_fmt_bytes(b1, sizeof b1, (double)r->inf.users_peak_bytes),
				vf_fmt_bytes(b2, sizeof b2, (double)vf_estimate_gpu_bytes(&r->spec)),
				users_flag(&r->setup), r->inf.max_users);
			continue;
		}
		if (r->ctx_refused) {
			fprintf(o, "%s: generate() does not fit: %s (needs %s of %s; the memory table is the "
				   "%" PRId64 "-token prompt's forward); try a smaller --ctx, --quant or a GPU with "
				   "more memory\n",
				r->spec.id, r->inf.why, vf_fmt_bytes(b1, sizeof b1, (double)r->inf.one_peak_bytes),
				vf_fmt_bytes(b2, sizeof b2, (double)vf_estimate_gpu_bytes(&r->spec)), r->inf.prompt);
			continue;
		}
		int64_t term = vf_estimate_term(&r->est, r->est.dominant);
		fprintf(o, "%s: does not fit: needs %s of %s; %s (%s, %.0f%% of the peak, %s phase) dominates\n",
			r->spec.id, vf_fmt_bytes(b1, sizeof b1, (double)r->est.peak_bytes),
			vf_fmt_bytes(b2, sizeof b2, (double)vf_estimate_gpu_bytes(&r->spec)),
			vf_term_name(r->est.dominant), vf_fmt_bytes(b4, sizeof b4, (double)term),
			100.0 * term / (double)r->est.peak_bytes, vf_estimate_phase_name(&r->est, r->est.peak_phase));
		if (r->advice.n == 0 && dit)
			fprintf(o, "  no change of quantization (int8, fp8, int4), optimizer, text encoder, optimizer "
				   "offload, checkpointing, batch split or LoRA rank fits it: a lower resolution or fewer "
				   "frames (--video), or a GPU with more memory\n");
		else if (r->advice.n == 0 && r->users_hint[0])
			fprintf(o, "  %s\n", r->users_hint);
		else if (r->advice.n == 0)
			fprintf(o, "  no change of batch split, checkpointing, optimizer, quantization or "
				   "precision fits it: try %s\n",
				remedy(rem, sizeof rem, r->est.dominant, &r->setup, r->split_hint));
		for (int k = 0; k < r->advice.n; k++)
			fprintf(o, "  %s cheapest change that fits: %s (peak %s, %s to spare%s)\n",
				k == 0 ? "the" : "next", r->advice.item[k].changes,
				vf_fmt_bytes(b1, sizeof b1, (double)r->advice.item[k].peak_bytes),
				vf_fmt_bytes(b2, sizeof b2, (double)r->advice.item[k].headroom_bytes),
				k == 0 ? margin_note : "");
	}
}

static void print_dit_phases(FILE *o, const struct vf_estimate *e);

/* The device an engine row's layout describes: the card, or a set's
 * fullest device (what it may use: the probe's free memory when another
 * process holds some of the card). */
static int64_t engine_card(const struct gpu_row *r)
{
	const struct vf_infer *f = &r->inf;
	if (f->engine == VF_ENGINE_LLAMACPP && r->set && f->fullest < r->ndev)
		return f->device_memory_bytes[f->fullest];
	return vf_estimate_gpu_bytes(&r->spec);
}

/* An engine row's layout (estimate-engine.h): the table, --json and the page read it. */
static void engine_layout(const struct gpu_row *r, struct vf_est_engine_layout *l)
{
	vf_est_engine_layout(&r->inf, engine_card(r), l);
}

/* The layout's rows and its total as a table of size and share of the card. */
static void print_engine_terms(FILE *o, const struct vf_est_engine_layout *l)
{
	char b1[64], b2[64];
	double card = (double)l->card_bytes;
	const char *hdr[] = {"term", "size", "% of card"};
	struct vf_table t;
	vf_table_init(&t, 3, hdr);
	vf_table_set_right(&t, 1, true);
	vf_table_set_right(&t, 2, true);
	for (int i = 0; i <= l->n; i++) {
		double v = (double)(i < l->n ? l->t[i].bytes : l->total_bytes);
		vf_table_addf(&t, i < l->n ? l->t[i].label : l->total_label, vf_fmt_bytes(b1, sizeof b1, v),
			      (snprintf(b2, sizeof b2, "%.1f%%", 100.0 * v / card), b2));
	}
	vf_table_print(&t, o);
	vf_table_release(&t);
}

/* vLLM's memory on the first GPU: what its budget holds, and the rest. */
static void print_vllm_memory(FILE *o, const struct gpu_row *r)
{
	const struct vf_infer *f = &r->inf;
	struct vf_est_engine_layout l;
	engine_layout(r, &l);
	char b1[64];
	fprintf(o, "%sMemory as vLLM lays it out%s (on %s%s: %.0f%% of the card is its budget)\n",
		vf_cli_sgr(o, "1"), vf_cli_sgr(o, "0"), r->spec.id, f->tp * f->pp > 1 ? ", one GPU of the split" : "",
		100.0 * (double)f->budget_bytes / (double)l.card_bytes);
	print_engine_terms(o, &l);
	if (l.peak_bytes > f->budget_bytes)
		fprintf(o, "vLLM needs %s before any KV cache (the weights, the profiled forward and the CUDA "
			   "context): more than its budget, %s\n",
			vf_fmt_bytes(b1, sizeof b1, (double)l.peak_bytes),
			vf_fmt_bytes((char[32]){0}, 32, (double)f->budget_bytes));
	else
		fprintf(o, "vLLM holds %s on the device (its budget); not estimated: %s\n",
			vf_fmt_bytes(b1, sizeof b1, (double)l.peak_bytes), l.not_counted);
}

/* llama.cpp's memory on the first GPU and in host memory. */
static void print_llamacpp_memory(FILE *o, const struct gpu_row *r)
{
	const struct vf_infer *f = &r->inf;
	bool set = r->set && f->fullest < r->ndev;
	struct vf_est_engine_layout l;
	engine_layout(r, &l);
	char b1[64];
	char which[96] = "", dev[48] = "";
	if (set)
		snprintf(dev, sizeof dev, " (%s)", r->dev[f->fullest].id);
	if (f->devices > 1)
		snprintf(which, sizeof which, ", GPU %d%s, the fullest of %d (%s split)", f->fullest, dev, f->devices,
			 vf_llamacpp_split_name(f->split_mode));
	fprintf(o, "%sMemory as llama.cpp lays it out%s (on %s%s; %s in host memory)\n", vf_cli_sgr(o, "1"),
		vf_cli_sgr(o, "0"), r->spec.id, which, vf_fmt_bytes(b1, sizeof b1, (double)f->host_bytes));
	print_engine_terms(o, &l);
	for (int d = 0; f->devices > 1 && d < f->devices; d++) {
		dev[0] = '\0';
		if (r->set && d < r->ndev)
			snprintf(dev, sizeof dev, " (%s)", r->dev[d].id);
		if (f->device_layers[d] > 0)
			fprintf(o, "  GPU %d%s: layers %" PRId64 "-%" PRId64 "%s, %s\n", d, dev, f->device_first[d],
				f->device_first[d] + f->device_layers[d] - 1, f->device_output[d] ? " + output" : "",
				vf_fmt_bytes(b1, sizeof b1, (double)f->device_bytes[d]));
		else
			fprintf(o, "  GPU %d%s: %s, %s\n", d, dev, f->device_output[d] ? "the output layer" : "no layers",
				vf_fmt_bytes(b1, sizeof b1, (double)f->device_bytes[d]));
	}
}

/* --mode infer: each GPU as the engine serves the model (lib/estimate/infer.c). */
static void print_inference(FILE *o, const struct gpu_row *rows, int nrows)
{
	if (!nrows || !rows[0].has_inf)
		return;
	const struct vf_infer *f = &rows[0].inf;
	char b[8][64];
	fprintf(o, "\n%sInference%s (%s: context %" PRId64 " tokens, prompt %" PRId64 ", %" PRId64
		   " user%s decoding)\n",
		vf_cli_sgr(o, "1"), vf_cli_sgr(o, "0"), vf_engine_name(f->engine), f->ctx, f->prompt,
		f->users, f->users == 1 ? "" : "s");
	const char *hdr[] = {"GPU", "KV/token", "KV cache", "KV blocks", "max users", "TTFT",
			     "tok/s per user", "tok/s total"};
	struct vf_table t;
	vf_table_init(&t, 8, hdr);
	for (int c = 1; c < 8; c++)
		vf_table_set_right(&t, c, true);
	for (int i = 0; i < nrows; i++) {
		const struct vf_infer *r = &rows[i].inf;
		if (!rows[i].has_inf)
			continue;
		snprintf(b[0], sizeof b[0], "%.0f KiB", r->kv_bytes_per_token / 1024);
		vf_fmt_bytes(b[1], sizeof b[1], (double)r->kv_cache_bytes);
		if (r->kv_blocks >= 0)
			snprintf(b[2], sizeof b[2], "%" PRId64, r->kv_blocks);
		else
			snprintf(b[2], sizeof b[2], "-");
		if (r->engine == VF_ENGINE_VLLM)
			snprintf(b[3], sizeof b[3], "%" PRId64 " (%.2fx)", r->max_users, r->max_concurrency);
		else
			snprintf(b[3], sizeof b[3], "%" PRId64, r->max_users);
		if (r->ttft_seconds > 0)
			vf_fmt_seconds(b[4], sizeof b[4], r->ttft_seconds);
		else
			snprintf(b[4], sizeof b[4], "-");
		if (r->decode_step_seconds > 0) {
			snprintf(b[5], sizeof b[5], "%.1f", r->decode_tokens_per_second_per_user);
			snprintf(b[6], sizeof b[6], "%.0f", r->decode_tokens_per_second_total);
		} else {
			snprintf(b[5], sizeof b[5], "-");
			snprintf(b[6], sizeof b[6], "-");
		}
		vf_table_addf(&t, rows[i].spec.id, b[0], b[1], b[2], b[3], b[4], b[5], b[6]);
	}
	vf_table_print(&t, o);
	vf_table_release(&t);
	for (int i = 0; i < nrows; i++)
		if (rows[i].users_verdict)
			fprintf(o, "(%s: fits and headroom are %" PRId64 " sequences of %" PRId64 " tokens at once "
				   "(%s, --ctx), peak %s with their KV cache; the memory table is the %" PRId64
				   "-token prompt's forward)\n",
				rows[i].spec.id, rows[i].inf.users, rows[i].inf.ctx, users_flag(&rows[i].setup),
				vf_fmt_bytes(b[7], sizeof b[7], (double)rows[i].inf.users_peak_bytes), rows[i].inf.prompt);
	for (int i = 0; i < nrows; i++)
		if (rows[i].ctx_verdict && rows[i].fits)
			fprintf(o, "(%s: fits and headroom are one sequence of %" PRId64 " tokens (--ctx), peak %s "
				   "with its KV cache; the memory table is the %" PRId64 "-token prompt's forward)\n",
				rows[i].spec.id, rows[i].inf.ctx,
				vf_fmt_bytes(b[7], sizeof b[7], (double)rows[i].inf.one_peak_bytes), rows[i].inf.prompt);
	if (f->users > f->max_users && f->max_users > 0 && f->engine == VF_ENGINE_TRANSFORMERS)
		fprintf(o, "(%" PRId64 " users do not all fit at %" PRId64 " tokens of context: generate() "
			   "decodes its batch together, so the speeds are of %" PRId64 " at once, the rest in turns)\n",
			f->users, f->ctx, f->running);
	else if (f->users > f->max_users && f->max_users > 0)
		fprintf(o, "(%" PRId64 " users do not all fit at %" PRId64 " tokens of context: %" PRId64
			   " decode at once, the engine queues the rest)\n", f->users, f->ctx, f->running);
	if (f->engine == VF_ENGINE_VLLM && f->decode_step_seconds > 0)
		fprintf(o, "(decode step %.2f ms = GPU %.2f ms + vLLM's host %.2f ms: %.2f ms of scheduling, "
			   "input preparation, sampling and output per step, %s)\n",
			1e3 * f->decode_step_seconds, 1e3 * f->decode_device_seconds, 1e3 * f->decode_host_seconds,
			1e3 * f->decode_host_work_seconds,
			f->async_scheduling ? "async scheduling hides what the GPU step covers"
					    : "synchronous scheduling: all of it exposed");
}

/* What of the target was not understood (comma-separated; "" none): a
 * vision model's, a pipeline's or a DiT file's own list, else the
 * language model's architecture's. */
static const char *target_unknown(const struct target *tg)
{
	return tg->vision ? tg->vis.unknown : tg->pipeline || tg->dit ? tg->unknown : tg->arch.not_understood;
}

/* Whether the result is approximate: one rule for the text's Model line
 * and the JSON's model.approximate. */
static bool target_approximate(const struct target *tg)
{
	return target_unknown(tg)[0] || (!tg->vision && !tg->dit && tg->arch.approximate);
}

/* --explain, --mode infer: each GPU's decode step as its parts. Returns
 * whether it showed them. */
static bool print_inference_parts(const struct gpu_row *rows, int nrows)
{
	if (!nrows || !rows[0].has_inf)
		return false;
	printf("\nDecode step (--explain): GPU time + the engine's exposed host time\n");
	for (int i = 0; i < nrows; i++) {
		const struct vf_infer *r = &rows[i].inf;
		if (!rows[i].has_inf || r->decode_step_seconds <= 0)
			continue;
		printf("  %-12s %8.3f ms = GPU %.3f ms + host %.3f ms", rows[i].spec.id, 1e3 * r->decode_step_seconds,
		       1e3 * r->decode_device_seconds, 1e3 * r->decode_host_seconds);
		if (r->engine == VF_ENGINE_VLLM)
			printf(" (host work %.3f ms, %s scheduling)", 1e3 * r->decode_host_work_seconds,
			       r->async_scheduling ? "async" : "sync");
		printf("\n");
	}
	return true;
}

static void print_human(const struct target *tg, const struct vf_setup *s, const struct gpu_row *rows,
			int nrows, const char *gsource, const struct vf_estimate *e0,
			const struct assume *a, double margin, const struct vf_infer_opts *inf)
{
	char b1[64], b2[64], setup[512];
	FILE *o = stdout;
	const char *bold = vf_cli_sgr(o, "1"), *off = vf_cli_sgr(o, "0");
	char act[96] = "";
	const struct vf_arch *ma = tg->vision ? (tg->vis.has_lm ? &tg->vis.lm : NULL) : tg->dit ? NULL : &tg->arch;
	if (ma && ma->experts > 0 && vf_arch_active_params(ma) > 0) { /* MoE: beside the total */
		char b3[64];
		snprintf(act, sizeof act, ", %s active per token%s",
			 vf_fmt_params(b3, sizeof b3, vf_arch_active_params(ma)),
			 tg->vision ? " (language model)" : "");
	}
	fprintf(o, "%sModel%s  %s: %s parameters%s, %s trainable%s\n", bold, off, tg->id,
		vf_fmt_params(b1, sizeof b1, e0->params), act,
		vf_fmt_params(b2, sizeof b2, e0->trainable_params),
		target_approximate(tg) ? " (approximate: see Assumptions)" : "");
	if (nrows && rows[0].has_inf && vf_est_engine_own(&rows[0].inf)) /* the engine's words, not a training step's */
		vf_est_engine_setup_words(&rows[0].inf, inf, s, setup, sizeof setup);
	else
		setup_words(tg, s, rows, nrows, setup, sizeof setup);
	fprintf(o, "%sSetup%s  %s\n\n", bold, off, setup);
	if (nrows && rows[0].has_inf && rows[0].inf.engine == VF_ENGINE_VLLM)
		print_vllm_memory(o, &rows[0]);
	else if (nrows && rows[0].has_inf && rows[0].inf.engine == VF_ENGINE_LLAMACPP)
		print_llamacpp_memory(o, &rows[0]);
	else
		print_terms(o, e0, rows, nrows);
	if (tg->dit)
		print_dit_phases(o, e0);
	if (tg->pipeline)
		print_pipeline(o, tg, e0);
	print_gpus(o, rows, nrows, gsource);
	print_capacity_notes(o, rows, nrows);
	print_inference(o, rows, nrows);
	print_advice(o, rows, nrows, margin, tg->dit);
	for (int i = 0; i < nrows; i++) /* an engine's split: its own table's (one GPU of it) */
		if (rows[i].split && !(rows[i].has_inf && vf_est_engine_own(&rows[i].inf)))
			print_split(o, &rows[i]);
	fprintf(o, "\n%sAssumptions%s\n", bold, off);
	for (int i = 0; i < a->n; i++)
		fprintf(o, "  - %s\n", a->items[i]);
}

/* A video DiT's memory object: the peak as PyTorch and as nvidia-smi
 * count it, the step's own peak (what the LTX-2 trainer's "Peak GPU
 * memory" line samples), the connectors and every phase. */
static void dit_memory_json(cJSON *mem, const struct vf_estimate *e)
{
	cJSON_AddNumberToObject(mem, "peak_pytorch_bytes", (double)e->peak_reserved_bytes);
	cJSON_AddNumberToObject(mem, "peak_nvidia_smi_bytes", (double)e->peak_bytes);
	cJSON_AddNumberToObject(mem, "step_peak_nvidia_smi_bytes", (double)e->step_peak_bytes);
	cJSON_AddNumberToObject(mem, "connector_bytes", (double)e->connector_bytes);
	if (e->validation_seconds > 0)
		cJSON_AddNumberToObject(mem, "validation_sample_seconds", e->validation_seconds);
	cJSON *ph = cJSON_AddArrayToObject(mem, "phases");
	for (int p = 0; p < VF_PHASE_COUNT && ph; p++) {
		if (!(e->phases & (1u << p)))
			continue;
		cJSON *o = cJSON_CreateObject();
		int64_t sum = 0;
		for (int k = 0; k < VF_TERM_COUNT; k++)
			sum += e->phase_bytes[p][k];
		cJSON_AddStringToObject(o, "phase", vf_estimate_phase_name(e, (enum vf_phase)p));
		cJSON_AddNumberToObject(o, "bytes", (double)sum);
		cJSON_AddBoolToObject(o, "peak", p == (int)e->peak_phase);
		cJSON_AddItemToArray(ph, o);
	}
}

/* A video DiT's phases, each with what is live (context included; the
 * allocator reserve at the peak phase only). */
static void print_dit_phases(FILE *o, const struct vf_estimate *e)
{
	char b1[64], b2[64];
	const char *bold = vf_cli_sgr(o, "1"), *off = vf_cli_sgr(o, "0");
	fprintf(o, "\n%sPhases%s (each on its own; the trainer's \"Peak GPU memory\" line samples the step "
		   "between steps: %s)\n",
		bold, off, vf_fmt_bytes(b1, sizeof b1, (double)e->step_peak_bytes));
	const char *hdr[] = {"phase", "on device", "weights"};
	struct vf_table t;
	vf_table_init(&t, 3, hdr);
	vf_table_set_right(&t, 1, true);
	vf_table_set_right(&t, 2, true);
	for (int p = 0; p < VF_PHASE_COUNT; p++) {
		if (!(e->phases & (1u << p)))
			continue;
		int64_t sum = 0;
		for (int k = 0; k < VF_TERM_COUNT; k++)
			sum += e->phase_bytes[p][k];
		char name[48];
		snprintf(name, sizeof name, "%s%s", vf_estimate_phase_name(e, (enum vf_phase)p),
			 p == (int)e->peak_phase ? " (peak)" : "");
		vf_table_addf(&t, name, vf_fmt_bytes(b1, sizeof b1, (double)sum),
			      vf_fmt_bytes(b2, sizeof b2, (double)e->phase_bytes[p][VF_TERM_WEIGHTS]));
	}
	vf_table_print(&t, o);
	vf_table_release(&t);
}

/* A setup's JSON with the CUDA context the estimate used and, for a DiT,
 * the diffusers module names of its attention projections. */
static cJSON *setup_json(const struct target *tg, const struct vf_setup *ts, int64_t context_bytes)
{
	cJSON *sj = vf_setup_to_json(ts);
	cJSON_ReplaceItemInObjectCaseSensitive(sj, "context_mib", cJSON_CreateNumber((double)((context_bytes + (1 << 19)) >> 20)));
	if (tg->dit && ts->mode == VF_MODE_LORA) {
		char t[64] = "";
		static const char *const names[] = {"to_q", "to_k", "to_v", "to_out.0"};
		static const unsigned bits[] = {VF_LORA_Q, VF_LORA_K, VF_LORA_V, VF_LORA_O};
		for (int i = 0; i < 4; i++)
			if (ts->lora_targets & bits[i]) {
				size_t n = strlen(t);
				snprintf(t + n, sizeof t - n, "%s%s", n ? "," : "", names[i]);
			}
		cJSON_ReplaceItemInObjectCaseSensitive(sj, "lora_targets", cJSON_CreateString(t));
	}
	return sj;
}

/* A set's devices: each card, its memory and the probe's free memory
 * (null when not probed). */
static cJSON *set_json(const struct gpu_row *r)
{
	cJSON *a = cJSON_CreateArray();
	for (int d = 0; d < r->ndev; d++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "id", r->dev[d].id);
		cJSON_AddNumberToObject(o, "vram_bytes", (double)vf_estimate_gpu_bytes(&r->dev[d]));
		if (r->dev_free_mib[d] > 0)
			cJSON_AddNumberToObject(o, "probed_free_bytes", (double)r->dev_free_mib[d] * 1048576.0);
		else
			cJSON_AddNullToObject(o, "probed_free_bytes");
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* One GPU row of the --json contract. */
static cJSON *row_json(const struct target *tg, const struct vf_setup *s, const struct gpu_row *r)
{
	cJSON *g = cJSON_CreateObject();
	cJSON_AddStringToObject(g, "id", r->spec.id);
	cJSON_AddNumberToObject(g, "count", r->count);
	cJSON_AddNumberToObject(g, "vram_bytes", (double)vf_estimate_gpu_bytes(&r->spec));
	if (r->set)
		cJSON_AddItemToObject(g, "set", set_json(r));
	cJSON_AddBoolToObject(g, "fits", r->fits);
	cJSON_AddNumberToObject(g, "headroom_bytes", (double)r->headroom);
	cJSON_AddNumberToObject(g, "max_batch", (double)r->max_batch);
	if (r->tier_what[0]) {
		cJSON_AddStringToObject(g, "tier_config", r->tier_what);
		/* the flags laid over the tier's config, one item each */
		cJSON *fl = cJSON_AddArrayToObject(g, "tier_flags");
		for (unsigned bit = 1; fl && bit && bit <= r->tier_over; bit <<= 1)
			if ((r->tier_over & bit) && vf_setup_flag(bit))
				cJSON_AddItemToArray(fl, cJSON_CreateString(vf_setup_flag(bit)));
		cJSON_AddItemToObject(g, "setup", setup_json(tg, &r->setup, r->est.context_bytes));
	}
	if (!r->fits && r->users_hint[0]) /* transformers: no change holds --users at --ctx */
		cJSON_AddStringToObject(g, "advice_note", r->users_hint);
	if (!r->fits) {
		cJSON *adv = cJSON_AddArrayToObject(g, "advice");
		for (int k = 0; adv && k < r->advice.n; k++) {
			cJSON *it = cJSON_CreateObject();
			cJSON_AddItemToObject(it, "changes",
					      vf_search_diff_json(tg->dit ? &r->setup : s, &r->advice.item[k].setup));
			if (tg->dit) /* the same changes in the text's words */
				cJSON_AddStringToObject(it, "settings", r->advice.item[k].changes);
			cJSON_AddNumberToObject(it, "peak_bytes", (double)r->advice.item[k].peak_bytes);
			cJSON_AddNumberToObject(it, "headroom_bytes",
						(double)r->advice.item[k].headroom_bytes);
			cJSON_AddItemToArray(adv, it);
		}
	}
	if (r->has_inf && vf_est_engine_own(&r->inf)) { /* what the engine holds, its speeds */
		struct vf_est_engine_layout l;
		engine_layout(r, &l);
		cJSON_AddNumberToObject(g, "peak_bytes", (double)l.peak_bytes);
		cJSON_AddItemToObject(g, "inference", vf_infer_to_json(&r->inf));
		vf_est_engine_row_json(g, &r->inf);
		return g;
	}
	cJSON_AddNumberToObject(g, "peak_bytes", (double)r->est.peak_bytes);
	if (r->ctx_verdict) /* what fits and headroom judge: one sequence of --ctx, not peak_bytes */
		cJSON_AddNumberToObject(g, "ctx_peak_bytes", (double)r->inf.one_peak_bytes);
	if (r->users_refused || r->users_verdict) /* what fits and headroom judge: --users sequences of --ctx */
		cJSON_AddNumberToObject(g, "users_peak_bytes", (double)r->inf.users_peak_bytes);
	char cap[320];
	if (vf_estimate_retries_note(r->est.sim_retries, cap, sizeof cap)) { /* as the text's line for the row */
		cJSON_AddNumberToObject(g, "allocator_retries", (double)r->est.sim_retries);
		cJSON_AddStringToObject(g, "device_peak_note", cap);
	}
	if (!r->fits)
		cJSON_AddStringToObject(g, "breaking_term", vf_term_name(r->est.dominant));
	if (r->split)
		cJSON_AddItemToObject(g, "split", vf_split_to_json(r->split));
	if (r->has_inf)
		cJSON_AddItemToObject(g, "inference", vf_infer_to_json(&r->inf));
	if (r->est.step_seconds > 0) {
		cJSON_AddNumberToObject(g, "step_seconds", r->est.step_seconds);
		cJSON_AddNumberToObject(g, "tokens_per_second", r->est.tokens_per_second);
		cJSON *parts = vf_estimate_parts_json(&r->est);
		if (parts)
			cJSON_AddItemToObject(g, "step_parts", parts);
		if (parts && r->est.parts.ckpt_host > 0) /* not a part: in the passes' host time */
			cJSON_AddNumberToObject(g, "checkpoint_host_seconds", r->est.parts.ckpt_host);
	} else {
		cJSON_AddNullToObject(g, "step_seconds");
		cJSON_AddNullToObject(g, "tokens_per_second");
	}
	return g;
}

/* The memory object: an engine's own layout (the first GPU's, as the text
 * table); transformers and training: the replay of the step. */
static cJSON *memory_json(const struct target *tg, const struct gpu_row *rows, int nrows, const struct vf_estimate *e0)
{
	if (nrows && rows[0].has_inf && vf_est_engine_own(&rows[0].inf)) {
		struct vf_est_engine_layout l;
		engine_layout(&rows[0], &l);
		return vf_est_engine_memory_json(&l, &rows[0].inf);
	}
	cJSON *mem = vf_estimate_memory_json(e0);
	if (tg->dit)
		dit_memory_json(mem, e0);
	return mem;
}

static cJSON *to_json(const struct target *tg, const struct vf_setup *s, const struct gpu_row *rows,
		      int nrows, const struct vf_estimate *e0, const struct assume *a)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *m = cJSON_AddObjectToObject(o, "model");
	cJSON_AddStringToObject(m, "id", tg->id);
	cJSON_AddStringToObject(m, "kind", tg->vision ? tg->vis.kind : tg->d.nlevels > 0 ? "unet" : tg->dit ? "dit" : "llm");
	if (tg->vision) {
		cJSON_AddStringToObject(m, "family", tg->vis.family);
		cJSON_AddNumberToObject(m, "image_tokens",
					(double)vf_vision_tokens(&tg->vis, s->video_width, s->video_height, 0));
	}
	cJSON_AddNumberToObject(m, "params", (double)e0->params);
	cJSON_AddNumberToObject(m, "trainable_params", (double)e0->trainable_params);
	const struct vf_arch *ma = tg->vision ? (tg->vis.has_lm ? &tg->vis.lm : NULL) : tg->dit ? NULL : &tg->arch;
	if (ma && ma->experts > 0 && vf_arch_active_params(ma) > 0) /* MoE: per token (the LM's for a VLM) */
		cJSON_AddNumberToObject(m, "active_params", (double)vf_arch_active_params(ma));
	cJSON_AddBoolToObject(m, "approximate", target_approximate(tg));
	vf_json_add_list(m, "not_understood", target_unknown(tg));
	if (tg->dit) {
		/* per sample: latent tokens of the video and audio streams */
		cJSON_AddStringToObject(m, "source", tg->d.from_file ? "file" : "catalog");
		cJSON_AddNumberToObject(m, "layers", (double)tg->d.layers);
		cJSON_AddNumberToObject(m, "video_hidden", (double)tg->d.video_hidden);
		cJSON_AddNumberToObject(m, "audio_hidden", (double)tg->d.audio_hidden);
		cJSON_AddNumberToObject(m, "video_tokens", (double)vf_dit_video_tokens(&tg->d, s->video_width,
										      s->video_height, s->video_frames));
		cJSON_AddNumberToObject(m, "audio_tokens",
					s->audio ? (double)vf_dit_audio_tokens(&tg->d, s->video_frames) : 0);
	}
	if (tg->pipeline) {
		cJSON_AddStringToObject(m, "family", tg->family);
		cJSON_AddItemToObject(m, "phases", vf_report_phases_json(e0));
		cJSON *pc = cJSON_AddArrayToObject(m, "components");
		for (int i = 0; i < tg->npipe; i++) {
			cJSON *c = cJSON_CreateObject();
			cJSON_AddStringToObject(c, "name", tg->pipe[i].name);
			vf_json_add_i64_or_null(c, "params", tg->pipe[i].params, tg->pipe[i].params >= 0);
			cJSON_AddStringToObject(c, "role", vf_pipeline_role_name(tg->pipe[i].role));
			cJSON_AddBoolToObject(c, "resident", tg->pipe[i].resident);
			cJSON_AddItemToArray(pc, c);
		}
	}
	/* the trainer's model: the setup the figures beside it are of (the first
	 * row's tier config), not the flags' defaults */
	const struct vf_setup *ts = nrows && rows[0].tier_what[0] ? &rows[0].setup : s;
	cJSON_AddItemToObject(o, "setup", setup_json(tg, ts, e0->context_bytes));
	bool engine = nrows && rows[0].has_inf && vf_est_engine_own(&rows[0].inf);
	cJSON_AddItemToObject(o, "memory", memory_json(tg, rows, nrows, e0));
	cJSON *gs = cJSON_AddArrayToObject(o, "gpus");
	for (int i = 0; i < nrows; i++)
		cJSON_AddItemToArray(gs, row_json(tg, s, &rows[i]));
	cJSON_AddItemToObject(o, "time", engine ? vf_est_engine_time_json(&rows[0].inf) : vf_estimate_time_json(e0));
	if (nrows && rows[0].has_inf) /* the first GPU's; each row has its own */
		cJSON_AddItemToObject(o, "inference", vf_infer_to_json(&rows[0].inf));
	cJSON *as = cJSON_AddArrayToObject(o, "assumptions");
	for (int i = 0; i < a->n; i++)
		cJSON_AddItemToArray(as, cJSON_CreateString(a->items[i]));
	return o;
}

/* --- whole run (--tokens / --steps / --price; lib/estimate/runcost.c) --------------- */

struct whole {
	double tokens;
	int64_t steps;
	double price; /* < 0: catalog */
};

/* A row's whole run on the setup it ran (r->setup: its GPUs, its shard). */
static bool whole_run(const struct whole *w, const struct gpu_row *r, struct vf_run *run,
		      struct vf_comm *comm)
{
	double step = vf_runcost_step_seconds(&r->est, &r->setup, &r->spec, comm);
	if (r->split) { /* the split's own step: stages, all-reduces, hand-overs, bubble */
		memset(comm, 0, sizeof *comm);
		comm->known = true;
		step = r->split->step_seconds;
		comm->exposed_seconds = step > 0 ? r->split->tp_comm_seconds + r->split->p2p_seconds : 0;
	}
	struct vf_run_in in = {
		.tokens = w->tokens,
		.steps = w->steps,
		.tokens_per_step = r->est.tokens_per_step,
		.step_seconds = step,
		.gpus = r->split ? r->split->ngpus * r->split->dp : r->setup.gpus,
		.price_usd_hour = w->price >= 0 ? w->price : r->spec.price_usd_hour,
	};
	struct vf_error err = {0};
	return r->fits && vf_runcost_run(&in, run, &err) == VF_OK;
}

static void whole_run_json(cJSON *o, const struct whole *w, const struct gpu_row *rows, int nrows)
{
	cJSON *rq = cJSON_AddObjectToObject(o, "run");
	if (w->tokens > 0)
		cJSON_AddNumberToObject(rq, "tokens", w->tokens);
	else
		cJSON_AddNullToObject(rq, "tokens");
	if (w->steps > 0)
		cJSON_AddNumberToObject(rq, "steps", (double)w->steps);
	else
		cJSON_AddNullToObject(rq, "steps");
	cJSON *gs = cJSON_GetObjectItemCaseSensitive(o, "gpus");
	for (int i = 0; i < nrows; i++) {
		cJSON *g = cJSON_GetArrayItem(gs, i);
		struct vf_run run;
		struct vf_comm comm;
		if (!g)
			break;
		if (!whole_run(w, &rows[i], &run, &comm)) {
			cJSON_AddNullToObject(g, "run");
			continue;
		}
		cJSON *x = cJSON_AddObjectToObject(g, "run");
		cJSON_AddNumberToObject(x, "steps", (double)run.steps);
		cJSON_AddNumberToObject(x, "tokens", run.tokens);
		cJSON_AddNumberToObject(x, "step_seconds", run.seconds / (double)run.steps);
		cJSON_AddNumberToObject(x, "comm_seconds", comm.exposed_seconds);
		cJSON_AddNumberToObject(x, "hours", run.hours);
		cJSON_AddNumberToObject(x, "gpu_hours", run.gpu_hours);
		if (run.cost_usd >= 0)
			cJSON_AddNumberToObject(x, "cost_usd", run.cost_usd);
		else
			cJSON_AddNullToObject(x, "cost_usd");
	}
	cJSON *as = cJSON_GetObjectItemCaseSensitive(o, "assumptions");
	for (const char *const *p = vf_runcost_assumptions(); *p && as; p++)
		cJSON_AddItemToArray(as, cJSON_CreateString(*p));
}

/* The GPUs of the whole run's heading: the rows' own count and shard when
 * they share one, else "the GPUs of each row". */
static void whole_run_gpus(char *o, size_t n, const struct gpu_row *rows, int nrows)
{
	int g = nrows ? rows[0].setup.gpus : 1;
	enum vf_shard sh = nrows ? rows[0].setup.shard : VF_SHARD_NONE;
	for (int i = 1; i < nrows; i++)
		if (rows[i].setup.gpus != g || rows[i].setup.shard != sh)
			g = 0;
	if (g == 0)
		snprintf(o, n, "the GPUs of each row");
	else if (g == 1)
		snprintf(o, n, "1 GPU");
	else
		snprintf(o, n, "%d GPUs %s", g, vf_shard_name(sh));
}

static void whole_run_print(const struct whole *w, const struct gpu_row *rows, int nrows)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], gp[64];
	whole_run_gpus(gp, sizeof gp, rows, nrows);
	if (w->tokens > 0)
		printf("\nWhole run (%.3g tokens, %s)\n", w->tokens, gp);
	else
		printf("\nWhole run (%lld steps, %s)\n", (long long)w->steps, gp);
	const char *hdr[] = {"GPU", "steps", "step + comm", "time", "GPU-hours", "cost"};
	struct vf_table t;
	vf_table_init(&t, 6, hdr);
	for (int c = 1; c < 6; c++)
		vf_table_set_right(&t, c, true);
	for (int i = 0; i < nrows; i++) {
		struct vf_run run;
		struct vf_comm comm;
		if (!whole_run(w, &rows[i], &run, &comm)) {
			vf_table_addf(&t, rows[i].spec.id, "-", rows[i].fits ? "-" : "does not fit", "-", "-",
				      "-");
			continue;
		}
		char st[32];
		snprintf(st, sizeof st, "%lld", (long long)run.steps);
		char sc[64];
		snprintf(sc, sizeof sc, "%s + %s", vf_fmt_seconds(b1, sizeof b1, run.seconds / run.steps - comm.exposed_seconds),
			 vf_fmt_seconds(b2, sizeof b2, comm.exposed_seconds));
		snprintf(b4, sizeof b4, "%.1f", run.gpu_hours);
		if (run.cost_usd >= 0)
			snprintf(b5, sizeof b5, "$%.2f", run.cost_usd);
		else
			snprintf(b5, sizeof b5, "-");
		vf_table_addf(&t, rows[i].spec.id, st, sc, vf_fmt_seconds(b3, sizeof b3, run.seconds), b4,
			      b5);
	}
	vf_table_print(&t, stdout);
	vf_table_release(&t);
	printf("(cost = $/GPU-hour x GPUs x hours, %s; communication as in `vramfit help fit`)\n",
	       w->price >= 0 ? "--price" : "catalog prices");
}

/* --- the HTML report (lib/report): the --json object plus each phase's
 * terms and the batch sweep ------------------------------------------------ */

#define SWEEP_POINTS 48

/* The setup a GPU row runs: ID:N without --gpus runs on all N. */
static struct vf_setup row_setup(const struct vf_setup *s, const struct gpu_row *r)
{
	struct vf_setup rs = *s;
	if (r->count > 1 && !(s->given & VF_SETUP_G_GPUS)) {
		rs.gpus = r->count;
		if (!(s->given & VF_SETUP_G_SHARD) || vf_setup_none_means_ddp(&rs))
			rs.shard = VF_SHARD_DDP;
	}
	return rs;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Batches 1 .. the largest that fits + 1 over the GPUs: all of them up to
 * SWEEP_POINTS, else a geometric ladder plus each GPU's limit and the
 * batch after it. Returns the count (sorted, unique). */
static int sweep_batches(const struct gpu_row *rows, int nrows, int64_t *out, int max)
{
	int64_t top = 1;
	for (int i = 0; i < nrows; i++)
		if (rows[i].max_batch + 1 > top)
			top = rows[i].max_batch + 1;
	if (top < 2)
		top = 2; /* a line, even where batch 1 does not fit */
	if (top > 1 << 16)
		top = 1 << 16;
	int n = 0;
	if (top <= SWEEP_POINTS) {
		for (int64_t b = 1; b <= top; b++)
			out[n++] = b;
		return n;
	}
	for (int k = 0; k < SWEEP_POINTS; k++)
		out[n++] = (int64_t)llround(exp(log((double)top) * k / (SWEEP_POINTS - 1)));
	for (int i = 0; i < nrows && n + 2 <= max; i++)
		if (rows[i].max_batch > 0) {
			out[n++] = rows[i].max_batch;
			out[n++] = rows[i].max_batch + 1;
		}
	qsort(out, (size_t)n, sizeof *out, cmp_i64);
	int u = 0;
	for (int i = 0; i < n; i++)
		if (u == 0 || out[i] != out[u - 1])
			out[u++] = out[i];
	return u;
}

static cJSON *batch_sweep(const struct target *tg, const struct vf_setup *s, const struct gpu_row *rows,
			  int nrows)
{
	int64_t bs[SWEEP_POINTS + 2 * MAX_GPUS];
	int nb = sweep_batches(rows, nrows, bs, (int)(sizeof bs / sizeof bs[0]));
	cJSON *arr = cJSON_CreateArray();
	for (int i = 0; i < nrows && arr; i++) {
		const struct gpu_row *r = &rows[i];
		struct vf_setup rs = row_setup(s, r);
		cJSON *g = cJSON_CreateObject();
		cJSON_AddStringToObject(g, "gpu", r->spec.id);
		cJSON_AddStringToObject(g, "name", r->spec.name[0] ? r->spec.name : r->spec.id);
		cJSON_AddNumberToObject(g, "vram_bytes", (double)vf_estimate_gpu_bytes(&r->spec));
		cJSON_AddNumberToObject(g, "max_batch", (double)r->max_batch);
		cJSON *pts = cJSON_AddArrayToObject(g, "points");
		for (int k = 0; k < nb && bs[k] <= (r->max_batch > 0 ? r->max_batch + 1 : 2); k++) {
			struct vf_estimate e;
			struct vf_error perr = {0};
			rs.batch = bs[k];
			cJSON *p = cJSON_CreateObject();
			cJSON_AddNumberToObject(p, "batch", (double)bs[k]);
			if (run_one(tg, &rs, &r->spec, &e, NULL, &perr)) { /* named, not drawn */
				cJSON_AddStringToObject(p, "error", perr.msg);
				cJSON_AddItemToArray(pts, p);
				continue;
			}
			cJSON_AddNumberToObject(p, "peak_bytes", (double)e.peak_bytes);
			cJSON_AddBoolToObject(p, "fits", vf_estimate_fits(&e, &r->spec, NULL));
			if (e.step_seconds > 0) {
				cJSON_AddNumberToObject(p, "step_seconds", e.step_seconds);
				cJSON_AddNumberToObject(p, "tokens_per_second", e.tokens_per_second);
			} else {
				cJSON_AddNullToObject(p, "step_seconds");
				cJSON_AddNullToObject(p, "tokens_per_second");
			}
			cJSON_AddItemToArray(pts, p);
		}
		cJSON_AddItemToArray(arr, g);
	}
	return arr;
}

/* --mode infer: each GPU kind's KV cache and users against the context
 * (lib/report/report_infer.c draws them): up to four times --ctx, at
 * least 32k, within the model's positions. */
static cJSON *inference_sweep(const struct target *tg, const struct gpu_row *rows, int nrows,
			      const struct vf_infer_opts *inf)
{
	cJSON *o = cJSON_CreateObject();
	const struct vf_infer *f = &rows[0].inf;
	cJSON_AddStringToObject(o, "engine", vf_engine_name(f->engine));
	cJSON_AddNumberToObject(o, "ctx", (double)f->ctx);
	int64_t limit = 4 * f->ctx > 32768 ? 4 * f->ctx : 32768;
	if (tg->arch.max_positions > 0 && limit > tg->arch.max_positions)
		limit = tg->arch.max_positions > f->ctx ? tg->arch.max_positions : f->ctx;
	cJSON *gs = cJSON_AddArrayToObject(o, "gpus");
	for (int i = 0; i < nrows; i++) {
		if (!rows[i].has_inf)
			continue;
		struct vf_infer_opts ro = *inf;
		set_devices(&rows[i], &ro); /* a set: its own cards and free memory */
		/* users at each context by the allocator's replay, as the row's
		 * max users (infer_rows): the analytic reserve's said 2 at 2048
		 * tokens beside a row's 6 */
		ro.replay = true;
		ro.alloc = &tg->alloc;
		ro.memo = tg->memo;
		cJSON *g = vf_infer_sweep_json(&tg->arch, &rows[i].setup, &rows[i].spec, &ro, rows[i].inf.ctx, limit);
		cJSON_AddStringToObject(g, "gpu", rows[i].spec.id);
		cJSON_AddStringToObject(g, "name", rows[i].spec.name[0] ? rows[i].spec.name : rows[i].spec.id);
		cJSON_AddNumberToObject(g, "count", rows[i].count);
		cJSON_AddItemToArray(gs, g);
	}
	return o;
}

static int write_html(const char *path, cJSON *o, const struct target *tg, const struct vf_setup *s,
		      const struct gpu_row *rows, int nrows, const struct vf_estimate *e0,
		      const struct vf_infer_opts *inf)
{
	cJSON_AddStringToObject(o, "report", "estimate");
	cJSON *gs = cJSON_GetObjectItemCaseSensitive(o, "gpus");
	for (int i = 0; i < nrows; i++)
		cJSON_AddStringToObject(cJSON_GetArrayItem(gs, i), "name",
					rows[i].spec.name[0] ? rows[i].spec.name : rows[i].spec.id);
	/* an engine's page: its layout (the memory object) and the inference
	 * sweep, no training-step phases nor transformers batch sweep */
	if (!(nrows > 0 && rows[0].has_inf && vf_est_engine_own(&rows[0].inf))) {
		cJSON_AddItemToObject(o, "phases", vf_report_phases_json(e0));
		cJSON_AddItemToObject(o, "batch_sweep", batch_sweep(tg, s, rows, nrows));
	}
	if (nrows > 0 && rows[0].has_inf)
		cJSON_AddItemToObject(o, "inference_sweep", inference_sweep(tg, rows, nrows, inf));
	struct vf_error err = {0};
	if (vf_report_write(o, path, &err))
		return vf_cli_fail_err(&err);
	return VF_EXIT_OK;
}

/* The setup defaults of a DiT (LoRA on the attention projections, bf16,
 * checkpointing, the model's own sample or the LTX-2 trainer's video) and
 * of a vision model (its image size; a VLM's text length). */
static void dit_vision_defaults(const struct target *tg, struct vf_setup *s, struct assume *as)
{
	if (tg->dit) {
		if (tg->d.audio_hidden <= 0 && !(s->given & VF_SETUP_G_AUDIO)) {
			s->audio = false; /* no audio stream to generate */
			s->given |= VF_SETUP_G_AUDIO;
		}
		if (!(s->given & VF_SETUP_G_MODE))
			s->mode = VF_MODE_LORA;
		if (!(s->given & VF_SETUP_G_PRECISION))
			s->precision = VF_PREC_BF16;
		if (!(s->given & VF_SETUP_G_LORA_TARGETS))
			s->lora_targets = VF_LORA_Q | VF_LORA_K | VF_LORA_V | VF_LORA_O;
		if (!(s->given & VF_SETUP_G_GRAD_CKPT))
			s->grad_ckpt = true;
		if (!(s->given & VF_SETUP_G_VIDEO) && tg->image_size > 0) {
			s->video_width = s->video_height = tg->image_size;
			s->video_frames = tg->frames > 0 ? tg->frames : 1;
		} else if (!(s->given & VF_SETUP_G_VIDEO)) {
			s->video_width = 960;
			s->video_height = 544;
			s->video_frames = 89;
		}
		/* --resolution without --frames, or --frames alone */
		if (s->video_width <= 0 || s->video_height <= 0) {
			s->video_width = s->video_height = tg->image_size > 0 ? tg->image_size : 512;
			assume(as, "%dx%d px samples: the model's default (--resolution WxH)", s->video_width,
			       s->video_height);
		}
		if (s->video_frames <= 0) {
			s->video_frames = tg->frames > 0 ? tg->frames : 1;
			if (s->video_frames > 1)
				assume(as, "%d frames per sample: the model's default (--frames F)", s->video_frames);
		}
	} else if (tg->vision) {
		if (!(s->given & VF_SETUP_G_VIDEO)) {
			s->video_width = s->video_height = tg->image_size;
			s->video_frames = 1;
		}
		if (strcmp(tg->vis.kind, "vlm") == 0 && !(s->given & VF_SETUP_G_SEQ)) {
			int64_t img = vf_vision_tokens(&tg->vis, s->video_width, s->video_height, 0);
			s->seq = img < 2048 - 64 ? 2048 - img : 64;
			assume(as, "%" PRId64 " text tokens per sample: a 2048-token context with the image (--seq)",
			       s->seq);
		}
	}
}

/* --- the command line (parse-options.h) ------------------------------------- */

struct est_args {
	struct vf_setup setup;
	bool json, explain;
	const char *model, *html, *gt, *params, *allocator;
	struct vf_pipeline_opts pipe;  /* a diffusers pipeline folder (pipeline.h) */
	const char *resolution;        /* --resolution WxH */
	int64_t frames;                /* --frames F (0: the model's default) */
	struct vf_opt_list gpu;
	struct whole w;
	double margin;
	const char *engine, *kv_dtype, *gguf, *cache_k, *cache_v, *kv_cache, *split_mode, *tensor_split;
	bool infer_given;
	char infer_err[192]; /* a flag misplaced for a model that is not a GGUF file */
	struct vf_infer_opts inf;
	struct vf_opt_seen seen; /* the options given (a GGUF file takes few of them) */
};

#define OPT_T struct est_args
static const char *const allocators[] = {"default", "expandable", NULL};
static const char *const engines[] = {"transformers", "vllm", "llamacpp", "llama.cpp", NULL};
static const char *const kv_dtypes[] = {"auto", "fp8", NULL};
static const char *const kv_caches[] = {"dynamic", "static", NULL};
static const char *const split_modes[] = {"layer", "row", "none", NULL};
static const char *const gguf_types[] = {"f16", "bf16", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "q4_0", NULL};
static const char *const cache_types[] = {"f16", "q8_0", "q4_0", NULL};
static const struct vf_option options[] = {
	OPT_INCLUDE(vf_setup_options, setup),
	OPT_GROUP("Other:"),
	OPT_LIST("gpu", "SPEC", gpu,
		 "ID | ID:N | NAME=MiB (repeatable, a row each: each kind once,\n"
		 "ID:N for N of it; `vramfit gpus` lists the ids);\n"
		 "A,B: one machine's cards serving together (--engine llamacpp)"),
	OPT_STRING("params", "N", params, "a generic llama-like transformer of N parameters (7e9, 7B)"),
	OPT_BOOL("json", json, "the JSON contract (README: vramfit estimate)"),
	OPT_FILE("html", "FILE", html,
		 "also write the HTML report (vramfit report estimate):\n"
		 "memory by phase, peak, step time and tokens/s vs batch"),
	OPT_FILE("check-groundtruth", "FILE", gt, "compare with measured runs (calibration.jsonl format)"),
	OPT_CALLBACK_F("tokens", "T", w.tokens, vf_opt_count,
		       "whole run per GPU: steps, hours and cost (1e9, 22B),\n"
		       "with data-parallel communication for --gpus N"),
	OPT_CALLBACK_F("steps", "S", w.steps, vf_opt_steps, "whole run of S optimizer steps (or --tokens)"),
	OPT_DOUBLE_X("price", "USD", w.price, 0, 1e6, "dollars per GPU-hour", "$/GPU-hour instead of the catalog's"),
	OPT_DOUBLE_X("margin", "F", margin, 0, 0.99, "a fraction from 0 to 0.99",
		   "fraction of each GPU's memory the advice keeps free\n(default 0.10, as vramfit fit)"),
	OPT_CHOICE("allocator", allocator, allocators,
		   "PyTorch's caching allocator mode (default: from\n"
		   "PYTORCH_CUDA_ALLOC_CONF, else cudaMalloc segments)"),
	OPT_BOOL("explain", explain, "the allocator's segments at the peak and each GPU's step as its parts"),
	OPT_GROUP("Inference (--mode infer, and GGUF files; lib/estimate/infer.c):"),
	OPT_CHOICE("engine", engine, engines,
		   "what serves the model (default transformers generate();\n"
		   "vllm: paged KV blocks in gpu_memory_utilization)"),
	OPT_INT("ctx", "N", inf.ctx, 1, 1 << 24,
		"context per sequence, prompt + output (vLLM max_model_len;\n"
		"default: vllm the model's max positions, else --seq)"),
	OPT_INT("users", "N", inf.users, 1, 1 << 20, "sequences decoding at once (default 1, or --batch N;\ntransformers: one batch, the row fits when all of them do)"),
	OPT_DOUBLE_X("gpu-memory-utilization", "F", inf.gpu_memory_utilization, 0.01, 1,
		     "a fraction from 0.01 to 1", "vllm: fraction of the card it may use (default 0.9)"),
	OPT_INT("max-num-batched-tokens", "N", inf.max_num_batched_tokens, 1, 1 << 24,
		"vllm: tokens of the profiled forward (default 2048,\n8192 on cards of 70 GiB or more but the A100)"),
	OPT_CHOICE("kv-cache-dtype", kv_dtype, kv_dtypes, "vllm: KV cache elements (default auto = the model's dtype)"),
	OPT_BOOL("no-async-scheduling", inf.vllm_sync_scheduling,
		 "vllm: synchronous scheduling (vLLM before early 2026):\n"
		 "each step's host work adds to the GPU's"),
	OPT_CHOICE("kv-cache", kv_cache, kv_caches,
		   "transformers: DynamicCache grown by torch.cat (default)\n"
		   "or StaticCache allocated for --ctx up front"),
	OPT_CHOICE("gguf-type", gguf, gguf_types, "llamacpp: the GGUF file type (llama-quantize; default q4_k_m)"),
	OPT_INT("n-gpu-layers", "N", inf.n_gpu_layers, -1, 1 << 20,
		"llamacpp: the last N layers on the GPU (default -1: all\nand the output layer)"),
	OPT_DOUBLE_X("host-bandwidth", "GB/s", inf.host_bandwidth_gbs, 1, 1e5, "GB/s from 1",
		     "llamacpp: CPU memory bandwidth for the host's layers (default 50)"),
	OPT_CHOICE("cache-type-k", cache_k, cache_types, "llamacpp: K cache type (default f16)"),
	OPT_CHOICE("cache-type-v", cache_v, cache_types, "llamacpp: V cache type (default f16)"),
	OPT_CHOICE("split-mode", split_mode, split_modes,
		   "llamacpp over --gpu ID:N: layer (default: whole layers\n"
		   "per GPU, run one after another), row (every matrix's\n"
		   "rows over all GPUs) or none (one GPU)"),
	OPT_STRING("tensor-split", "RATIOS", tensor_split,
		   "llamacpp: each GPU's share, e.g. 3,1 (default: each\ncard's free memory, as llama.cpp)"),
	OPT_GROUP("Diffusion (a DiT, a UNet or a diffusers pipeline folder):"),
	OPT_STRING("resolution", "WxH", resolution, "sample size in pixels (as --video WxHxF with --frames)"),
	OPT_INT("frames", "F", frames, 1, 100000, "frames per clip (default: the model's; 1 for images)"),
	OPT_STRING("train", "NAME", pipe.train,
		   "a pipeline folder: the component trained (default\n"
		   "transformer, else unet; transformer_2 for Wan 2.2's\n"
		   "second expert)"),
	OPT_BOOL("precomputed-embeddings", pipe.precomputed_embeddings,
		 "a pipeline: text encoders not loaded in the step"),
	OPT_BOOL("precomputed-latents", pipe.precomputed_latents,
		 "a pipeline: the VAE not loaded in the step (its\ndecoder still validates)"),
	OPT_END(),
};
#undef OPT_T

/* The inference flags: only with --mode infer; vLLM's only with --engine vllm. */
static int infer_args(struct est_args *a)
{
	bool vllm_only = a->kv_dtype || a->inf.gpu_memory_utilization > 0 || a->inf.max_num_batched_tokens > 0 ||
			 a->inf.vllm_sync_scheduling;
	a->inf.ngl_given = a->inf.n_gpu_layers != -2;
	bool cpp_only = a->gguf || a->cache_k || a->cache_v || a->inf.ngl_given || a->inf.host_bandwidth_gbs > 0 ||
			a->split_mode || a->tensor_split;
	bool any = a->engine || a->inf.ctx || a->inf.users || vllm_only || cpp_only;
	a->infer_given = any;
	int rc = vf_cli_infer_users("estimate", &a->setup, &a->inf.users);
	if (rc >= 0)
		return rc;
	/* a GGUF file is llama.cpp inference whatever the flags: --ctx and
	 * --n-gpu-layers are its own; for other models the check waits for the
	 * model (infer_err) */
	if (any && a->setup.mode != VF_MODE_INFER)
		snprintf(a->infer_err, sizeof a->infer_err,
			 "--engine, --ctx, --users and the vllm flags apply to --mode infer (or a GGUF file)");
	if (a->engine)
		vf_engine_parse(a->engine, &a->inf.engine);
	if (vllm_only && a->inf.engine != VF_ENGINE_VLLM)
		return vf_cli_usage("estimate", "--kv-cache-dtype, --gpu-memory-utilization, "
						"--max-num-batched-tokens and --no-async-scheduling apply to --engine vllm");
	a->inf.kv_fp8 = a->kv_dtype && strcmp(a->kv_dtype, "fp8") == 0;
	if (a->kv_cache && a->inf.engine != VF_ENGINE_TRANSFORMERS)
		return vf_cli_usage("estimate", "--kv-cache applies to --engine transformers");
	if (a->kv_cache && a->setup.mode != VF_MODE_INFER && !a->infer_err[0])
		snprintf(a->infer_err, sizeof a->infer_err, "--kv-cache applies to --mode infer");
	a->inf.static_cache = a->kv_cache && strcmp(a->kv_cache, "static") == 0;
	if (cpp_only && a->inf.engine != VF_ENGINE_LLAMACPP && !a->infer_err[0])
		snprintf(a->infer_err, sizeof a->infer_err, "--gguf-type, --n-gpu-layers, --host-bandwidth, "
			 "--cache-type-k/v, --split-mode and --tensor-split apply to --engine llamacpp (a GGUF "
			 "file takes --n-gpu-layers and --cache-type-k/v)");
	if (a->inf.engine == VF_ENGINE_LLAMACPP && (a->setup.given & VF_SETUP_G_QUANT))
		return vf_cli_usage("estimate", "--engine llamacpp: give the GGUF type as --gguf-type (q4_k_m, q8_0, ...), "
						"not --quant");
	a->inf.gguf_given = a->gguf && vf_gguf_type_parse(a->gguf, &a->inf.gguf_type);
	if (a->split_mode)
		vf_llamacpp_split_parse(a->split_mode, &a->inf.split_mode);
	if (a->tensor_split) {
		struct vf_error err = {0};
		int nsplit;
		if (vf_llamacpp_tensor_split_parse(a->tensor_split, a->inf.tensor_split, &nsplit, &err) != VF_OK)
			return vf_cli_usage("estimate", "%s", err.msg);
	}
	if (a->cache_k)
		vf_ggml_cache_parse(a->cache_k, &a->inf.cache_k);
	if (a->cache_v)
		vf_ggml_cache_parse(a->cache_v, &a->inf.cache_v);
	/* the prompt is part of the context, given or defaulted: a shorter
	 * --ctx would have the inference table shorten the prompt while the
	 * Setup line and the step kept the --seq one */
	if (a->inf.ctx && a->setup.seq > a->inf.ctx)
		return vf_cli_usage("estimate", "--seq %" PRId64 " (the prompt%s) is longer than --ctx %" PRId64
				    ": give --seq %" PRId64 " or less, or a longer --ctx",
				    a->setup.seq, (a->setup.given & VF_SETUP_G_SEQ) ? "" : ", by default",
				    a->inf.ctx, a->inf.ctx);
	return -1;
}

/* --resolution WxH and --frames F: the sample as --video WxHxF (frames
 * left to the model's default when not given). Returns -1 or the exit code. */
static int diffusion_flags(struct est_args *a)
{
	if (!a->resolution && !a->frames)
		return -1;
	if (a->setup.given & VF_SETUP_G_VIDEO)
		return vf_cli_usage("estimate", "give --video WxHxF or --resolution WxH --frames F, not both");
	int w = 0, h = 0, used = 0;
	if (a->resolution && (sscanf(a->resolution, "%dx%d%n", &w, &h, &used) != 2 ||
			      a->resolution[used] || w < 1 || h < 1 || w > 65536 || h > 65536))
		return vf_cli_usage("estimate", "--resolution %s: expected WxH in pixels (832x480)", a->resolution);
	a->setup.video_width = w;
	a->setup.video_height = h;
	a->setup.video_frames = (int)a->frames;
	a->setup.given |= VF_SETUP_G_VIDEO; /* what is left 0 takes the model's default */
	return -1;
}

/* Reads the command line into a and the allocator's mode into tg. Returns -1
 * or the exit code. */
static int parse(int argc, char **argv, struct est_args *a, struct target *tg)
{
	memset(a, 0, sizeof *a);
	memset(tg, 0, sizeof *tg);
	vf_setup_defaults(&a->setup);
	a->inf.n_gpu_layers = -2; /* unset */
	a->w.price = -1;
	a->margin = VF_ADVICE_MARGIN;
	struct vf_error err = {0};
	const char *conf = getenv("PYTORCH_CUDA_ALLOC_CONF");
	if (conf && vf_alloc_config_parse(conf, &tg->alloc, &err))
		return vf_cli_usage("estimate", "%s", err.msg);
	int n, rc = vf_opt_parse_seen("estimate", options, a, argc, argv, 0, &n, &a->seen);
	if (rc >= 0)
		return rc;
	if (n > 1)
		return vf_cli_usage("estimate", "one MODEL only (got '%s' and '%s')", argv[0], argv[1]);
	a->model = n ? argv[0] : NULL;
	if (a->allocator)
		tg->alloc.expandable = a->allocator[0] == 'e';
	if (a->gt)
		return -1;
	if (!a->model && !a->params)
		return vf_cli_usage("estimate", "expected a MODEL or --params N");
	if (a->model && a->params)
		return vf_cli_usage("estimate", "give a MODEL or --params N, not both");
	if (a->w.tokens > 0 && a->w.steps > 0)
		return vf_cli_usage("estimate", "give --tokens or --steps, not both");
	rc = diffusion_flags(a);
	if (rc >= 0)
		return rc;
	return infer_args(a);
}

/* --params N: a generic llama-like transformer. */
static int params_target(const char *params, struct target *tg, struct assume *as)
{
	double p;
	if (!vf_runcost_parse_count(params, &p) || p < 1e5 || p > 1e14)
		return vf_cli_usage("estimate", "--params: expected a parameter count (7e9, 7B, 350M), got '%s'",
				    params);
	int64_t got = vf_estimate_generic_arch((int64_t)p, &tg->arch);
	if ((double)got > 1.5 * p)
		return vf_cli_usage("estimate", "--params %s: smaller than the smallest generic transformer "
						"(%" PRId64 " parameters)", params, got);
	snprintf(tg->id, sizeof tg->id, "generic-%s", params);
	assume(as, "a generic llama-like transformer: hidden %" PRId64 ", %" PRId64
		   " layers, SwiGLU MLP %" PRId64 ", vocabulary %" PRId64,
	       tg->arch.hidden, tg->arch.layers, tg->arch.ffn, tg->arch.vocab);
	return -1;
}

/* A catalog DiT (ltx-2-19b, ...): its figures and listed assumptions. */
static int catalog_dit_target(const struct vf_model *m, struct target *tg, struct assume *as)
{
	struct vf_error err = {0};
	char what[200];
	snprintf(what, sizeof what, "%s: model %s", m->entry->file, m->entry->id);
	if (vf_dit_from_json(m->entry->raw, what, &tg->d, &err))
		return vf_cli_fail_err(&err);
	tg->dit = true;
	tg->trainer_model = vf_est_tier_model(m->entry->id);
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(m->entry->raw, "assumptions");
	const cJSON *it;
	cJSON_ArrayForEach(it, list)
	if (cJSON_IsString(it))
		assume(as, "%s (catalog)", it->valuestring);
	return -1;
}

/* A language model's architecture (config.json or tensors); an adapter's
 * rank sets --mode lora unless given. */
static void arch_target(const struct vf_model *m, struct vf_setup *s, struct target *tg,
			struct assume *as, bool *t5)
{
	tg->arch = m->arch;
	complete_arch(&tg->arch, as);
	if (m->arch.encoder)
		assume(as, "an encoder (%s): estimated with the decoder's per-layer "
			   "mechanisms and a vocabulary-wide head; attention is "
			   "bidirectional, the task head smaller",
		       m->arch.family);
	if (m->arch.approximate)
		assume(as, "not understood: %s; %s", m->arch.not_understood,
		       m->files >= 0	? "parameters from the files, memory terms approximate"
		       : m->count_exact ? "the count is the config's, the weights' bytes as stored "
					  "unknown: memory terms approximate"
					: "count is approximate");
	if (m->arch.ssm_layers > 0)
		assume(as, "%s: %" PRId64 " %s layers of %" PRId64 " (%" PRId64 " with attention): "
			   "training saves each mixer's projections, conv output, dt and the scan's "
			   "state per chunk; inference holds a recurrent state (conv window + scan "
			   "state per SSM layer, in the kv_cache term) instead of a KV cache on those "
			   "layers; step time: attention scores on the attention layers only, the scan "
			   "itself not timed",
		       m->arch.family, m->arch.ssm_layers,
		       strcmp(m->arch.family, "recurrent_gemma") == 0 ? "recurrent (RG-LRU)"
		       : m->arch.ssm_heads > 0			      ? "Mamba-2"
								      : "Mamba",
		       m->arch.layers, m->arch.attn_layers > 0 ? m->arch.attn_layers : 0);
	if (m->arch.ffn_layers > 0)
		assume(as, "%s: each block holds one mixer or one feed-forward (%" PRId64 " of %" PRId64
			   " blocks an MLP or experts): activations are the mean block's, approximate "
			   "(not measured on %s runs)",
		       m->arch.family, m->arch.ffn_layers, m->arch.layers, m->arch.family);
	*t5 = strcmp(m->arch.family, "t5") == 0;
	if (!(m->arch.known & VF_ARCH_F_FAMILY))
		assume(as, "architecture family unknown: llama-like layers");
	if (m->has_adapter && !(s->given & VF_SETUP_G_MODE)) {
		s->mode = VF_MODE_LORA;
		s->given |= VF_SETUP_G_MODE;
		assume(as, "a PEFT adapter: --mode lora with its rank and targets");
		if (m->adapter.rank > 0 && !(s->given & VF_SETUP_G_LORA_RANK)) {
			s->lora_rank = (int)m->adapter.rank;
			s->given |= VF_SETUP_G_LORA_RANK;
		}
	}
}

/* Only a parameter count: a generic transformer of that size. */
static int count_target(const struct vf_model *m, const char *model, struct target *tg,
			struct assume *as)
{
	int64_t got = vf_estimate_generic_arch(m->params, &tg->arch), have = m->params;
	if ((double)got > 1.5 * (double)have)
		return vf_cli_fail("%s: %" PRId64 " parameters and no architecture: smaller than the "
				   "smallest generic transformer (%" PRId64 " parameters); nothing to "
				   "estimate (give its config.json)",
				   model, have, got);
	assume(as, "no architecture found: a generic llama-like transformer of %" PRId64
		   " parameters (hidden %" PRId64 ", %" PRId64 " layers, vocabulary %" PRId64 ")",
	       m->params, tg->arch.hidden, tg->arch.layers, tg->arch.vocab);
	return -1;
}

/* A diffusers pipeline folder: its denoiser trained, its encoders and VAE
 * as loaded (pipeline.h), each role listed as an assumption. */
static int pipeline_target(const struct vf_model *m, const struct vf_pipeline_opts *po, struct target *tg,
			   struct assume *as)
{
	struct vf_error err = {0};
	struct vf_pipeline p;
	if (vf_pipeline_plan(m, po, &p, &tg->d, &err))
		return err.code == VF_EUSAGE ? vf_cli_usage("estimate", "%s", err.msg) : vf_cli_fail_err(&err);
	const struct vf_vision *v = &p.denoiser->vision;
	tg->dit = true;
	tg->pipeline = true;
	tg->image_size = (int)v->image_size;
	tg->frames = (int)v->frames;
	snprintf(tg->family, sizeof tg->family, "%s", v->family);
	snprintf(tg->unknown, sizeof tg->unknown, "%s", v->unknown);
	tg->npipe = 0;
	for (size_t i = 0; i < p.nparts && tg->npipe < VF_PIPELINE_MAX; i++, tg->npipe++) {
		snprintf(tg->pipe[i].name, sizeof tg->pipe[i].name, "%s", p.parts[i].m->name);
		tg->pipe[i].params = p.parts[i].m->params;
		tg->pipe[i].role = p.parts[i].role;
		tg->pipe[i].resident = p.parts[i].resident;
	}
	/* the plan's sentences, one assumption each */
	char *save = NULL;
	for (char *t = strtok_r(p.about, "\n", &save); t; t = strtok_r(NULL, "\n", &save))
		assume(as, "pipeline: %s", t);
	if (v->unknown[0])
		assume(as, "not understood in %s: %s; the count is approximate", p.denoiser->name, v->unknown);
	if (v->assumed[0])
		assume(as, "not in the config: %s", v->assumed);
	assume(as, "%s", strcmp(v->kind, "unet") == 0
			     ? "UNet activations per level: residual blocks (GroupNorm, SiLU and conv inputs, 12 bytes "
			       "per channel per latent pixel) and transformer blocks (the DiT block mechanism, GEGLU FFN) "
			       "at each level's width and pixels; not measured on UNet runs"
			     : "activations per token: the DiT block mechanism of LTX-2 without its audio stream "
			       "(self-attention, text cross-attention, GELU FFN); not measured on this family");
	return -1;
}

/* A loaded model as what the estimator runs on. Returns -1 or an exit code. */
static int model_kind_target(const struct vf_model *m, const char *model, const struct vf_pipeline_opts *po,
			     struct vf_setup *s, struct target *tg, struct assume *as, bool *t5)
{
	struct vf_error err = {0};
	bool lm = m->has_arch && (m->arch.known & VF_ARCH_F_HIDDEN);
	if (m->entry && strcmp(m->entry->kind, "dit") == 0)
		return catalog_dit_target(m, tg, as);
	if (vf_pipeline_is(m))
		return pipeline_target(m, po, tg, as);
	if (po->train || po->precomputed_embeddings || po->precomputed_latents)
		return vf_cli_usage("estimate", "--train and --precomputed-* apply to a diffusers pipeline folder "
						"(model_index.json and its components)");
	if (m->has_vision && strcmp(m->vision.kind, "unknown") == 0)
		return vf_cli_fail("%s: %s is not understood (a diffusers class vramfit does not count): no estimate",
				   model, m->vision.family);
	if (m->has_vision && strcmp(m->vision.kind, "vae") == 0)
		return vf_cli_fail("%s: a VAE (%s, %" PRId64 " parameters): estimate the pipeline folder that "
				   "trains its denoiser",
				   model, m->vision.family, m->params);
	const struct vf_vision *tv = &dit_part(m)->vision;
	if (dit_part(m)->has_vision && (strcmp(tv->kind, "vit") == 0 || strcmp(tv->kind, "clip") == 0 ||
					 strcmp(tv->kind, "speech") == 0) &&
	    vf_lora_targets_resolve_tower(tv->family, s, &err)) /* the tower's own modules */
		return err.code == VF_EUSAGE ? vf_cli_usage("estimate", "%s", err.msg) : vf_cli_fail_err(&err);
	if (dit_part(m)->has_vision || dit_part(m)->has_ltx) {
		if (dit_part(m) != m)
			assume(as, "the pipeline's transformer component (%s)", dit_part(m)->path);
		vf_status st = dit_part(m)->has_vision ? vision_target(dit_part(m), tg, as, &err)
						       : ltx_target(dit_part(m), tg, as, &err);
		return st ? vf_cli_fail_err(&err) : -1;
	}
	if (m->has_adapter && !(lm && (m->arch.known & VF_ARCH_F_VOCAB)))
		return vf_cli_fail("%s: a LoRA adapter without its base model's config: estimate the "
				   "base model (a catalog id or its config.json) with --mode lora "
				   "--lora-rank R --lora-targets LIST",
				   model);
	if (lm && (m->arch.known & VF_ARCH_F_LAYERS)) {
		if (vf_lora_targets_resolve(&m->arch, s, &err)) { /* the model's own modules */
			bool q = m->has_quant && s->mode == VF_MODE_LORA && !(s->given & VF_SETUP_G_MODE);
			if (err.code != VF_EUSAGE)
				return vf_cli_fail_err(&err);
			return vf_cli_usage("estimate", "%s%s%s%s", err.msg,
					    q ? " (LoRA because its quantization_config stores the base as " : "",
					    q ? m->quant.base_quant : "", q ? ": --mode full or infer otherwise)" : "");
		}
		arch_target(m, s, tg, as, t5);
		return -1;
	}
	if (m->params > 0)
		return count_target(m, model, tg, as);
	if (m->has_arch && m->arch.approximate)
		return vf_cli_fail("%s: not understood: %s; no parameter count to estimate from", model,
				   m->arch.not_understood);
	return vf_cli_fail("%s: no architecture or parameter count to estimate from", model);
}

/* A quantized checkpoint (quantization_config) loads its base as stored:
 * --quant from it unless given, and it trains adapters (QLoRA) unless
 * --mode says otherwise. */
static void quantized_defaults(const struct vf_model *m, struct vf_setup *s, struct assume *as)
{
	const struct vf_qconfig *q = &m->quant;
	if (!m->has_quant || !q->understood || !q->base_quant[0])
		return;
	bool set = !(s->given & VF_SETUP_G_QUANT) && vf_quant_parse(q->base_quant, &s->quant);
	if (set && q->params < 0) /* a config without weights: nothing counted */
		assume(as, "quant %s: the config's quantization_config (%s %d-bit) (--quant)",
		       q->base_quant, q->method, q->bits);
	else if (set)
		assume(as, "quant %s: the checkpoint's quantization_config (%s %d-bit, %.3f bytes a "
			   "weight as stored) (--quant)",
		       q->base_quant, q->method, q->bits, q->bytes_per_weight);
	if (!(s->given & VF_SETUP_G_MODE) && s->mode == VF_MODE_FULL) {
		s->mode = VF_MODE_LORA;
		assume(as, "a quantized checkpoint trains adapters on its frozen base (QLoRA)");
	}
}

/* A GGUF file is estimated as llama.cpp loads it (estimate-gguf.c): an
 * option it takes no account of is refused, never ignored. Returns -1 or
 * the exit code. */
static int gguf_flags(const struct est_args *a, const char *path)
{
	static const char *const takes[] = {"gpu", "ctx", "n-gpu-layers", "cache-type-k", "cache-type-v",
					    "context-mib", "mode", "engine", "json", NULL};
	const char *other = vf_opt_seen_other(&a->seen, takes);
	if (other)
		return vf_cli_usage("estimate", "--%s: not for a GGUF file (%s): llama.cpp's memory of the file "
						"as stored takes --gpu, --ctx, --n-gpu-layers, --cache-type-k/v, --context-mib "
						"and --json",
				    other, vf_cli_safe(path));
	if (a->engine && a->inf.engine != VF_ENGINE_LLAMACPP)
		return vf_cli_usage("estimate", "--engine %s: a GGUF file (%s) runs in llama.cpp", a->engine,
				    vf_cli_safe(path));
	return -1;
}

/* MODEL or --params N as what the estimator runs on, with the video and
 * encoder-decoder defaults. Returns -1 or an exit code. */
static int load_target(const struct est_args *a, struct vf_setup *s, struct target *tg,
		       struct assume *as, bool *t5)
{
	int rc;
	*t5 = false;
	if (a->params && a->infer_err[0])
		return vf_cli_usage("estimate", "%s", a->infer_err);
	if (a->params) {
		rc = params_target(a->params, tg, as);
	} else {
		struct vf_model *m = NULL;
		struct vf_error err = {0};
		if (vf_model_load(a->model, &m, &err))
			return vf_cli_fail_err(&err);
		if (vf_model_need_whole(m, &err) != VF_OK) {
			vf_model_free(m);
			return vf_cli_fail_err(&err);
		}
		if (m->gguf) { /* llama.cpp: its own estimate, printed here */
			rc = gguf_flags(a, m->path);
			if (rc >= 0) {
				vf_model_free(m);
				return rc;
			}
			struct gguf_args ga = {.gpus = a->gpu.v,
					       .ngpus = (int)a->gpu.n, .ctx = a->inf.ctx,
					       .n_gpu_layers = a->inf.ngl_given ? a->inf.n_gpu_layers : -1,
					       .cache_k = a->cache_k, .cache_v = a->cache_v,
					       .json = a->json};
			rc = vf_cli_estimate_gguf(m, s, &ga);
			vf_model_free(m);
			return rc;
		}
		if (a->infer_err[0]) {
			vf_model_free(m);
			return vf_cli_usage("estimate", "%s", a->infer_err);
		}
		quantized_defaults(m, s, as);
		snprintf(tg->id, sizeof tg->id, "%s", m->entry ? m->entry->id : a->model);
		rc = model_kind_target(m, a->model, &a->pipe, s, tg, as, t5);
		vf_model_free(m);
	}
	if (rc >= 0)
		return rc;
	if (tg->dit || tg->vision)
		dit_vision_defaults(tg, s, as);
	else if (s->given & (VF_SETUP_G_VIDEO | VF_SETUP_G_TEXT_ENCODER | VF_SETUP_G_VALIDATION |
			     VF_SETUP_G_AUDIO | VF_SETUP_G_OFFLOAD))
		return vf_cli_usage("estimate", "--video, --resolution, --frames, --audio, --no-audio, --text-encoder, "
						"--(no-)offload-optimizer and --validation apply to video DiTs and other "
						"diffusion models (ltx-2-19b, a DiT or UNet config, a pipeline folder)");
	if (*t5 && !s->target_seq)
		s->target_seq = s->seq;
	return -1;
}

/* The first n rows are the ones filled (the rest of the calloc'ed array
 * is never touched: no page of it faulted in to read a NULL). */
static void free_rows(struct gpu_row *rows, int n)
{
	if (!rows)
		return;
	for (int i = 0; i < n && i < MAX_GPUS; i++)
		free(rows[i].split);
	free(rows);
}

/* A model split needs a replica's GPUs in every listed kind. */
static int check_replica(const struct vf_setup *s, const struct gpu_row *rows, int nrows)
{
	if (!vf_split_active(s))
		return -1;
	int64_t need = s->split == VF_SPLIT_LAYERS && (s->given & VF_SETUP_G_GPUS)
			       ? s->gpus
			       : (int64_t)(s->tp > 1 ? s->tp : 1) * (s->pp > 1 ? s->pp : 1);
	for (int i = 0; i < nrows; i++)
		if (rows[i].count > 1 && rows[i].count < need)
			return vf_cli_usage("estimate", "one replica needs %" PRId64 " GPUs, %s:%d gives %d",
					    need, rows[i].spec.id, rows[i].count, rows[i].count);
	return -1;
}

/* A set of unequal cards (--gpu A,B) is llama.cpp's to serve: its layer
 * split follows each card's free memory. vLLM cuts the model into equal
 * tensor-parallel shards and keeps on every card the KV blocks of the
 * card with the fewest; transformers' device_map over unequal cards is
 * not modelled; training rows are per kind. Returns -1 or the exit code. */
static int check_sets(const struct est_args *a, const struct vf_setup *s, const struct gpu_row *rows,
		      int nrows)
{
	for (int i = 0; i < nrows; i++) {
		const struct gpu_row *r = &rows[i];
		if (!r->unequal)
			continue;
		if (s->mode != VF_MODE_INFER)
			return vf_cli_usage("estimate", "--gpu %s: a set of unequal cards serves --mode infer "
							"--engine llamacpp; to train, give each kind as --gpu ID:N (a row each)",
					    r->spec.id);
		if (a->inf.engine == VF_ENGINE_VLLM)
			return vf_cli_usage("estimate", "--gpu %s: vLLM over unequal cards cuts the model into equal "
							"tensor-parallel shards, one per card, and keeps on every card only the KV "
							"blocks of the card with the fewest (vllm/v1/core/kv_cache_utils.py "
							"get_kv_cache_configs), each step at the slowest card's pace: estimate the "
							"smaller card as --gpu ID:%d",
					    r->spec.id, r->ndev);
		if (a->inf.engine != VF_ENGINE_LLAMACPP)
			return vf_cli_usage("estimate", "--gpu %s: transformers over unequal cards (device_map "
							"with max_memory) is not modelled; give --engine llamacpp, or one kind "
							"as --gpu ID:N",
					    r->spec.id);
		if (vf_split_active(s))
			return vf_cli_usage("estimate", "--gpu %s: llama.cpp splits a set by itself (--split-mode, "
							"--tensor-split), not by --split/--tp/--pp",
					    r->spec.id);
	}
	return -1;
}

/* The GPU rows (--gpu, probed or common) and the finished setup. Returns -1
 * or an exit code. */
static int make_rows(const struct est_args *a, struct vf_setup *s, struct gpu_row *rows,
		     int *nrows, const char **gsource)
{
	struct vf_error err = {0};
	bool llamacpp = s->mode == VF_MODE_INFER && a->inf.engine == VF_ENGINE_LLAMACPP;
	if (collect_gpus((char **)a->gpu.v, a->gpu.n, llamacpp, rows, nrows, gsource, &err))
		return err.code == VF_EUSAGE ? vf_cli_usage("estimate", "%s", err.msg) : vf_cli_fail_err(&err);
	int rc = check_sets(a, s, rows, *nrows);
	if (rc >= 0)
		return rc;
	rc = check_replica(s, rows, *nrows);
	if (rc >= 0)
		return rc;
	if (a->gpu.n) { /* --gpu ID:N is --gpu ID --gpus N */
		const char *ids[MAX_GPUS];
		int counts[MAX_GPUS];
		for (int i = 0; i < *nrows; i++) {
			ids[i] = rows[i].spec.id;
			counts[i] = rows[i].count;
		}
		int urc = vf_cli_gpu_counts("estimate", ids, counts, *nrows, s);
		if (urc >= 0)
			return urc;
		for (int i = 0; i < *nrows; i++)
			rows[i].count = counts[i];
	}
	bool gpus_given = s->given & VF_SETUP_G_GPUS;
	if (vf_setup_finish(s, &err))
		return vf_cli_usage("estimate", "%s", err.msg);
	/* --tp/--pp without --gpus run one replica on tp x pp GPUs: a kind given
	 * without a count (or shown by default) is that many of it, as --gpus N
	 * makes it, so the row's count, its label and its GPU-hours agree */
	if (!gpus_given && (int64_t)s->tp * s->pp > 1)
		for (int i = 0; i < *nrows; i++)
			if (rows[i].count == 1 && !rows[i].set)
				rows[i].count = s->gpus;
	return -1;
}

/* One row with a model split: several GPUs of a kind and no --gpus run
 * them all (data parallel over the replicas unless --shard says otherwise). */
static int split_one(const struct target *tg, const struct vf_setup *s, struct gpu_row *r)
{
	struct vf_error err = {0};
	struct vf_setup rs = *s;
	int mp = s->tp * s->pp;
	if (r->count > 1 && !(s->given & VF_SETUP_G_GPUS) &&
	    (s->split == VF_SPLIT_LAYERS || r->count % mp == 0)) {
		rs.gpus = r->count;
		if ((s->split != VF_SPLIT_LAYERS && rs.gpus > mp && !(s->given & VF_SETUP_G_SHARD)) ||
		    vf_setup_none_means_ddp(&rs))
			rs.shard = VF_SHARD_DDP;
	}
	r->setup = rs;
	if (split_row(tg, &rs, r, &err))
		return err.code == VF_EUSAGE ? vf_cli_usage("estimate", "%s", err.msg) : vf_cli_fail_err(&err);
	return -1;
}

/* One row's estimate under its setup rs: fits, headroom, advice, largest
 * micro-batch. Reads only tg and writes only *r (the replay memo is shared
 * and locked), so rows may run on threads of their own. */
static vf_status row_estimate(const struct target *tg, const struct vf_setup *rs, struct gpu_row *r,
			      double margin, bool early_advice, const struct vf_search *pre,
			      struct vf_error *err)
{
	/* early_advice (rows on threads): when the analytic model already
	 * says the setup does not fit, the advice runs before the row's own
	 * replay, so that a thread whose row waits for that replay (another
	 * thread runs it: every row replays the same step) replays its
	 * advice meanwhile. Only the order changes: the advice is a function
	 * of the setup and the GPU, kept only when the row does not fit, and
	 * the row's own error comes first, as in the plain order. pre: that
	 * advice's search, already run (the analytic model said no fit). */
	vf_status adv = VF_OK;
	struct vf_error aerr = {0};
	bool advised = false;
	if (pre) {
		adv = vf_advice_confirm(&tg->arch, rs, &r->spec, &tg->alloc, tg->memo, pre, &r->advice,
					&aerr);
		advised = true;
	} else if (early_advice && !tg->dit && !tg->vision) {
		struct vf_estimate a;
		vf_estimate_run(&tg->arch, rs, &r->spec, &a);
		if (!vf_estimate_fits(&a, &r->spec, NULL)) {
			adv = vf_advice_run(&tg->arch, rs, &r->spec, &tg->alloc, tg->memo, margin, &r->advice,
					    &aerr);
			advised = true;
		}
	}
	if (run_one(tg, rs, &r->spec, &r->est, NULL, err))
		return VF_ERR;
	r->fits = vf_estimate_fits(&r->est, &r->spec, &r->headroom);
	r->setup = *rs;
	if (advised && r->fits) {
		memset(&r->advice, 0, sizeof r->advice); /* as if never asked */
	} else if (advised && !r->fits && adv != VF_OK) {
		*err = aerr;
		return VF_ERR;
	}
	if (!r->fits && !tg->dit && !advised &&
	    vf_advice_run(&tg->arch, rs, &r->spec, &tg->alloc, tg->memo, margin, &r->advice, err))
		return VF_ERR;
	if (!r->fits && tg->dit && !tg->vision)
		vf_advice_dit(&tg->d, rs, &r->spec, margin, &r->advice);
	r->max_batch = max_batch(tg, rs, &r->spec);
	if (!r->fits && !tg->dit)
		split_fits(&tg->arch, rs, &r->spec, r->split_hint, sizeof r->split_hint);
	return VF_OK;
}

/* The rows of a plain LLM estimate (no split, no trainer tier) on the cores
 * this process may use: the catalog's rows that do not fit each replay
 * their advice, the bulk of a whole-catalog estimate (issue 21). Every row
 * is computed as alone (the memo answers as a replay would: test-replaymemo),
 * and the first failing row in order is the one reported, so the output is
 * the sequential one, byte for byte. */
struct rows_job {
	const struct target *tg;
	struct gpu_row *rows;
	int nrows;
	double margin;
	atomic_int next_search, next_warm, next_row;
	int searched; /* rows searched (phase 1), under lock */
	pthread_mutex_t lock;
	pthread_cond_t all_searched;
	struct vf_search *srch; /* per row: its advice's search, when has_srch */
	bool *has_srch;
	struct vf_setup *setup; /* per row: its setup, read by every phase (a row's
				 * own setup is rewritten by phase 3 meanwhile) */
	double *weight; /* per phase-2 task: its replay's work (0: none) */
	int *order;     /* phase 2's tasks, the heaviest first */
	int nwarm;      /* phase 2's tasks handed out: order[0, nwarm) */
	vf_status *st;
	struct vf_error *errs;
};

/* Phase 1, row i: the analytic model's verdict and, when it says no fit,
 * the advice's search (kept for phase 3; a failed one is left to it). */
static void rows_search(struct rows_job *j, int i)
{
	const struct target *tg = j->tg;
	const struct gpu_row *r = &j->rows[i];
	const struct vf_setup *rs = &j->setup[i];
	struct vf_estimate a;
	j->weight[i] = vf_estimate_replay_weight(&tg->arch, rs, &r->spec);
	vf_estimate_run(&tg->arch, rs, &r->spec, &a);
	if (vf_estimate_fits(&a, &r->spec, NULL))
		return;
	struct vf_error err = {0};
	j->has_srch[i] = vf_advice_search(&tg->arch, rs, &r->spec, j->margin, &j->srch[i], &err) == VF_OK;
	for (size_t k = 0; j->has_srch[i] && k < VF_ADVICE_MAX && k < j->srch[i].count; k++)
		j->weight[(k + 1) * (size_t)j->nrows + (size_t)i] =
			vf_estimate_expect_replay(&tg->arch, &j->srch[i].results[k].setup, &r->spec,
						  &tg->alloc, tg->memo);
}

/* At most this many replays warmed ahead: half the memo's table
 * (replaymemo.c keeps 64), so that what is warmed is still there when
 * phase 3 asks (the rows' largest micro-batch replays enter it too); the
 * others, the lightest, are left to phase 3. */
#define ROWS_WARM_MAX 32

/* Phase 2's order: the longest replays first, so that the threads end
 * together (the last replays handed out are the shortest); equal weights
 * in task order. An insertion sort: a few tasks per GPU row. */
static void rows_order(struct rows_job *j)
{
	int n = j->nrows * (1 + VF_ADVICE_MAX);
	j->nwarm = 0;
	for (int t = 0; t < n; t++) {
		int k = t;
		while (k > 0 && j->weight[j->order[k - 1]] < j->weight[t]) {
			j->order[k] = j->order[k - 1];
			k--;
		}
		j->order[k] = t;
		if (j->weight[t] > 0)
			j->nwarm++;
	}
	if (j->nwarm > ROWS_WARM_MAX)
		j->nwarm = ROWS_WARM_MAX;
}

/* Phase 2, task t: warm the memo with one replay phase 3 asks for (each
 * row's own step, then each searched row's first VF_ADVICE_MAX candidates,
 * which the advice always confirms), one replay per task: the threads
 * share the replays one by one instead of a row's in turn, and none
 * waits for another's (vf_estimate_prefetch_memo). */
static void rows_warm(struct rows_job *j, int t)
{
	const struct target *tg = j->tg;
	int i = t % j->nrows, k = t / j->nrows - 1; /* k -1: the row's own step */
	const struct gpu_row *r = &j->rows[i];
	if (j->weight[t] <= 0)
		return;
	if (k < 0) {
		vf_estimate_prefetch_memo(&tg->arch, &j->setup[i], &r->spec, &tg->alloc, tg->memo);
		return;
	}
	if (j->has_srch[i] && (size_t)k < j->srch[i].count)
		vf_estimate_prefetch_memo(&tg->arch, &j->srch[i].results[k].setup, &r->spec, &tg->alloc,
					  tg->memo);
}

static void *rows_worker(void *arg)
{
	struct rows_job *j = arg;
	int done = 0;
	for (int i; (i = atomic_fetch_add(&j->next_search, 1)) < j->nrows; done++)
		rows_search(j, i);
	pthread_mutex_lock(&j->lock);
	j->searched += done;
	if (done > 0 && j->searched == j->nrows) { /* this thread searched the last row */
		rows_order(j);
		pthread_cond_broadcast(&j->all_searched);
	}
	while (j->searched < j->nrows)
		pthread_cond_wait(&j->all_searched, &j->lock);
	pthread_mutex_unlock(&j->lock);
	for (int t; (t = atomic_fetch_add(&j->next_warm, 1)) < j->nwarm;)
		rows_warm(j, j->order[t]);
	for (int i; (i = atomic_fetch_add(&j->next_row, 1)) < j->nrows;) {
		struct vf_setup rs = j->setup[i];
		j->st[i] = row_estimate(j->tg, &rs, &j->rows[i], j->margin, true,
					j->has_srch[i] ? &j->srch[i] : NULL, &j->errs[i]);
	}
	return NULL;
}

#define ROW_THREADS_MAX 8

static int rows_threads(int nrows)
{
	cpu_set_t set;
	int ncpu = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
	int n = ncpu < nrows ? ncpu : nrows;
	return n > ROW_THREADS_MAX ? ROW_THREADS_MAX : n;
}

/* -1 when every row is estimated, or the exit code of the first failure */
static int estimate_rows_parallel(const struct target *tg, struct gpu_row *rows, int nrows,
				  double margin, int nthreads)
{
	struct rows_job j = {.tg = tg, .rows = rows, .nrows = nrows, .margin = margin};
	atomic_init(&j.next_search, 0);
	atomic_init(&j.next_warm, 0);
	atomic_init(&j.next_row, 0);
	j.st = calloc((size_t)nrows, sizeof *j.st);
	j.errs = calloc((size_t)nrows, sizeof *j.errs);
	j.srch = calloc((size_t)nrows, sizeof *j.srch);
	j.has_srch = calloc((size_t)nrows, sizeof *j.has_srch);
	j.setup = malloc((size_t)nrows * sizeof *j.setup);
	for (int i = 0; j.setup && i < nrows; i++)
		j.setup[i] = rows[i].setup;
	j.weight = calloc((size_t)nrows * (1 + VF_ADVICE_MAX), sizeof *j.weight);
	j.order = calloc((size_t)nrows * (1 + VF_ADVICE_MAX), sizeof *j.order);
	bool sync = pthread_mutex_init(&j.lock, NULL) == 0;
	if (sync && pthread_cond_init(&j.all_searched, NULL) != 0) {
		pthread_mutex_destroy(&j.lock);
		sync = false;
	}
	if (!j.st || !j.errs || !j.srch || !j.has_srch || !j.setup || !j.weight || !j.order || !sync) {
		if (sync) {
			pthread_cond_destroy(&j.all_searched);
			pthread_mutex_destroy(&j.lock);
		}
		free(j.st);
		free(j.errs);
		free(j.srch);
		free(j.has_srch);
		free(j.setup);
		free(j.weight);
		free(j.order);
		return vf_cli_fail("estimate: out of memory");
	}
	pthread_t th[ROW_THREADS_MAX];
	int started = 0;
	for (int i = 1; i < nthreads; i++) /* this thread is the last worker */
		if (pthread_create(&th[started], NULL, rows_worker, &j) == 0)
			started++;
	rows_worker(&j);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	int rc = -1;
	for (int i = 0; i < nrows && rc < 0; i++)
		if (j.st[i] != VF_OK)
			rc = vf_cli_fail_err(&j.errs[i]);
	for (int i = 0; i < nrows; i++)
		if (j.has_srch[i])
			vf_search_release(&j.srch[i]);
	pthread_cond_destroy(&j.all_searched);
	pthread_mutex_destroy(&j.lock);
	free(j.st);
	free(j.errs);
	free(j.srch);
	free(j.has_srch);
	free(j.setup);
	free(j.weight);
	free(j.order);
	return rc;
}

/* Estimate each row: fits, headroom, advice, largest micro-batch. *multi:
 * a kind given as ID:N ran data parallel over N. */
static int estimate_rows(const struct target *tg, const struct vf_setup *s, struct gpu_row *rows,
			 int nrows, double margin, bool *multi)
{
	struct vf_error err = {0};
	*multi = false;
	int nthreads = vf_split_active(s) || tg->trainer_model || tg->dit || tg->vision
			       ? 1
			       : rows_threads(nrows);
	if (nthreads > 1) {
		for (int i = 0; i < nrows; i++) {
			rows[i].setup = row_setup(s, &rows[i]);
			if (rows[i].count > 1 && !(s->given & VF_SETUP_G_GPUS))
				*multi = true;
		}
		return estimate_rows_parallel(tg, rows, nrows, margin, nthreads);
	}
	for (int i = 0; i < nrows; i++) {
		struct gpu_row *r = &rows[i];
		if (vf_split_active(s)) {
			int rc = split_one(tg, s, r);
			if (rc >= 0)
				return rc;
			continue;
		}
		struct vf_setup rs = row_setup(s, r);
		if (tg->trainer_model && vf_est_tier_wanted(s) &&
		    vf_est_tier_setup(s, &r->spec, r->count, &rs, r->tier_what, sizeof r->tier_what, &r->tier_over,
				      &err))
			return vf_cli_fail_err(&err);
		if (r->count > 1 && !(s->given & VF_SETUP_G_GPUS))
			*multi = true;
		if (row_estimate(tg, &rs, r, margin, false, NULL, &err))
			return vf_cli_fail_err(&err);
	}
	return -1;
}

/* The estimate the breakdown shows: the first row's, or (--explain, or no
 * GPU) one run with the allocator simulation kept in *sim. */
static int first_estimate(const struct est_args *a, const struct target *tg, const struct vf_setup *s,
			  const struct gpu_row *rows, int nrows, struct vf_estimate *e0,
			  struct vf_alloc **sim)
{
	struct vf_error err = {0};
	bool explain = a->explain && !a->json;
	if (nrows && (vf_split_active(s) || !(explain && !tg->dit))) {
		*e0 = rows[0].est;
		return -1;
	}
	if (vf_split_active(s))
		return vf_cli_usage("estimate", "--split/--tp/--pp: give the GPUs (--gpu ID:N)");
	struct vf_setup s0 = nrows ? row_setup(s, &rows[0]) : *s;
	if (run_one(tg, &s0, nrows ? &rows[0].spec : NULL, e0, explain ? sim : NULL, &err))
		return vf_cli_fail_err(&err);
	return -1;
}

struct result {
	struct target tg;
	struct vf_setup s;
	struct gpu_row *rows;
	int nrows;
	const char *gsource;
	struct vf_estimate e0;
	struct vf_alloc *sim;
	struct assume as;
};

/* --html, --json or the tables. Returns the exit code. */
static int output(const struct est_args *a, struct result *r)
{
	bool whole = a->w.tokens > 0 || a->w.steps > 0;
	/* an engine estimate has no training step nor allocator replay to explain,
	 * and its page draws its own table (one GPU of a split), not the split */
	bool engine = r->nrows && r->rows[0].has_inf && vf_est_engine_own(&r->rows[0].inf);
	if (a->html && vf_split_active(&r->s) && !engine)
		return vf_cli_usage("estimate", "--html does not draw a model split over GPUs yet (--split/--tp/--pp); use --json");
	if (a->html) {
		cJSON *o = to_json(&r->tg, &r->s, r->rows, r->nrows, &r->e0, &r->as);
		if (whole)
			whole_run_json(o, &a->w, r->rows, r->nrows);
		int rc = write_html(a->html, o, &r->tg, &r->s, r->rows, r->nrows, &r->e0, &a->inf);
		cJSON_Delete(o);
		if (rc)
			return rc;
	}
	if (a->json) {
		cJSON *o = to_json(&r->tg, &r->s, r->rows, r->nrows, &r->e0, &r->as);
		if (whole)
			whole_run_json(o, &a->w, r->rows, r->nrows);
		vf_cli_print_json(o);
		cJSON_Delete(o);
		return VF_EXIT_OK;
	}
	print_human(&r->tg, &r->s, r->rows, r->nrows, r->gsource, &r->e0, &r->as, a->margin, &a->inf);
	if (whole)
		whole_run_print(&a->w, r->rows, r->nrows);
	if (r->sim && !engine)
		print_segments(r->sim, &r->e0, &r->tg.alloc);
	if (a->explain) {
		int shown = engine ? 0 : print_step_parts(&r->tg, r->rows, r->nrows);
		if (print_inference_parts(r->rows, r->nrows))
			shown++;
		if (!r->sim)
			print_explain_none(&r->tg, shown > 0);
	}
	return VF_EXIT_OK;
}

/* The trainer's model: which tier config each GPU ran. */
static void tier_assumptions(const struct gpu_row *rows, int nrows, struct assume *as)
{
	if (nrows < 1 || !rows[0].tier_what[0])
		return;
	assume(as, "the trainer's model: each GPU under its tier's starting config, as vramfit plan picks it "
		   "(data/profiles/ltx2 tiers.json and fit.json), not the flags' defaults; a knob flag "
		   "(--quant, --optimizer, --video, --lora-rank, ...) changes that knob of the config alone; "
		   "--stack other than ltx, or a stack mechanism flag, estimates your own setup instead");
	for (int i = 0; i < nrows; i++)
		if (rows[i].tier_what[0])
			assume(as, "%s", rows[i].tier_what);
}

/* A set's devices for llama.cpp: each one's card and free memory (the
 * probe's less the CUDA context llama.cpp's own process creates first,
 * as ggml_backend_dev_memory reports it after). */
static void set_devices(const struct gpu_row *g, struct vf_infer_opts *o)
{
	if (!g->set)
		return;
	for (int d = 0; d < g->ndev && d < VF_INFER_MAX_DEVICES; d++) {
		o->device_gpu[d] = &g->dev[d];
		int64_t ctx = g->setup.context_bytes >= 0 ? g->setup.context_bytes
							  : vf_estimate_default_context(&g->dev[d]);
		int64_t free_b = g->dev_free_mib[d] * (INT64_C(1) << 20) - ctx;
		o->device_free_bytes[d] = g->dev_free_mib[d] > 0 ? (free_b > 0 ? free_b : 1) : 0;
	}
}

/* Each set's split in words: the cards and where the ratios came from. */
static void set_assumptions(const struct gpu_row *rows, int nrows, bool given, struct assume *as)
{
	for (int i = 0; i < nrows; i++) {
		const struct gpu_row *g = &rows[i];
		if (!g->set || !g->has_inf || g->inf.engine != VF_ENGINE_LLAMACPP)
			continue;
		char ratios[128] = "";
		size_t k = 0;
		for (int d = 0; d < g->inf.devices && d < VF_INFER_MAX_DEVICES && k < sizeof ratios; d++)
			k += (size_t)snprintf(ratios + k, sizeof ratios - k, "%s%.2f", d ? "/" : "",
					      g->inf.device_split[d]);
		assume(as, "%s: %d cards serving together (%s); llama.cpp's layer shares %s, from %s", g->spec.id,
		       g->ndev, g->dev_free_mib[0] > 0 ? "the probed devices" : "--gpu A,B", ratios,
		       g->inf.devices < 2 ? "one card (--split-mode none)"
		       : given		      ? "--tensor-split"
		       : g->dev_free_mib[0] > 0 ? "each card's free memory as probed less the CUDA context"
						: "each card's memory less the CUDA context (its free memory when idle)");
	}
}

/* transformers: the advice of a row that does not fit judged as the row
 * is, --users sequences of --ctx at once (one when --users is 1 and --ctx
 * longer than the prompt): a change whose prompt forward fits but whose
 * users do not is dropped, and each kept one shows the users' peak. */
static void infer_advice(const struct vf_arch *arch, struct gpu_row *g, const struct vf_infer_opts *o,
			 double margin)
{
	const struct vf_infer *f = &g->inf;
	if (g->fits || f->engine != VF_ENGINE_TRANSFORMERS || g->advice.n == 0 ||
	    (f->users <= 1 && f->ctx <= f->prompt))
		return;
	int64_t vram = vf_estimate_gpu_bytes(&g->spec);
	int kept = 0, most = -1;
	int64_t most_users = 0;
	for (int k = 0; k < g->advice.n; k++) {
		struct vf_advice_item *it = &g->advice.item[k];
		struct vf_infer t;
		struct vf_error err = {0};
		if (vf_infer_run(arch, &it->setup, &g->spec, o, &t, &err))
			continue;
		int64_t peak = t.users_peak_bytes > 0 ? t.users_peak_bytes
			       : t.one_peak_bytes > 0 ? t.one_peak_bytes : it->peak_bytes;
		if (!t.fits || t.max_users < t.users || (double)peak > (1 - margin) * (double)vram) {
			if (t.fits && t.max_users > most_users)
				most = k, most_users = t.max_users;
			continue;
		}
		if (peak > it->peak_bytes) {
			it->peak_bytes = peak;
			it->headroom_bytes = vram - peak;
		}
		g->advice.item[kept++] = *it;
	}
	if (kept == 0 && most >= 0)
		snprintf(g->users_hint, sizeof g->users_hint,
			 "no change fits %" PRId64 " sequences of %" PRId64 " tokens at once: with %s at most %" PRId64
			 " do (%s %" PRId64 ", the rest in turns); or a serving engine that queues them "
			 "(--engine vllm)", f->users, f->ctx, g->advice.item[most].changes, most_users,
			 users_flag(&g->setup), most_users);
	else if (kept == 0)
		snprintf(g->users_hint, sizeof g->users_hint,
			 "no change fits %" PRId64 " sequences of %" PRId64 " tokens at once: a smaller --ctx, a smaller "
			 "%s, or a serving engine that queues them (--engine vllm)", f->users, f->ctx,
			 users_flag(&g->setup));
	g->advice.n = kept;
}

/* --mode infer of a language model: each row as the engine serves it;
 * vLLM's verdict is whether it starts (one --ctx sequence in the blocks). */
/* A row's verdict from its engine: vLLM's and llama.cpp's own; transformers
 * keeps the --seq forward's unless one sequence of --ctx does not fit. */
static void engine_verdict(enum vf_engine engine, struct gpu_row *g)
{
	/* the row's batch is the engine's: sequences of --ctx tokens at
	 * once, the inference table's max users (not a --seq forward's) */
	g->max_batch = g->inf.max_users;
	if (engine == VF_ENGINE_VLLM) {
		/* the cache's room beyond one sequence of --ctx: the blocks',
		 * or, where none fit, the budget's shortfall (was the blocks'
		 * 0, so minus one sequence on every card) */
		g->fits = g->inf.fits;
		g->headroom = (g->inf.kv_blocks > 0 ? g->inf.kv_cache_bytes : g->inf.kv_room_bytes) -
			      (int64_t)(g->inf.kv_bytes_per_token * (double)g->inf.ctx);
		g->advice.n = 0;
	} else if (engine == VF_ENGINE_LLAMACPP) {
		const struct vf_infer *f = &g->inf;
		g->fits = f->fits;
		struct vf_est_engine_layout l; /* the card less what the table sums on it */
		engine_layout(g, &l);
		g->headroom = l.card_bytes - l.peak_bytes;
		g->advice.n = 0;
	} else if (g->fits && !g->inf.fits && g->inf.one_peak_bytes > 0) {
		/* transformers: the verdict is the run asked, one sequence of
		 * --ctx tokens, not the --seq forward's the memory table shows
		 * (a forward that does not fit keeps its own advice; a row over
		 * several GPUs by tp/pp, a layer split or sharding has no one-card
		 * figure: infer.c does not model it, its table says so) */
		g->fits = false;
		g->ctx_refused = g->ctx_verdict = true;
		g->headroom = vf_estimate_gpu_bytes(&g->spec) - g->inf.one_peak_bytes;
	} else if (g->fits && g->inf.users_peak_bytes > 0) {
		/* transformers: the verdict is --users sequences of --ctx at once
		 * (generate() decodes its batch together; nothing queues them) */
		g->headroom = vf_estimate_gpu_bytes(&g->spec) - g->inf.users_peak_bytes;
		if (g->inf.users > g->inf.max_users) {
			g->fits = false;
			g->users_refused = true;
		} else {
			g->users_verdict = true;
		}
	} else if (g->fits && g->inf.one_peak_bytes > 0 && g->inf.ctx > g->inf.prompt) {
		/* it fits: the margin is the longer run's, one sequence of --ctx */
		g->ctx_verdict = true;
		g->headroom = vf_estimate_gpu_bytes(&g->spec) - g->inf.one_peak_bytes;
	}
}

static int infer_rows(const struct est_args *a, struct result *r)
{
	if ((r->tg.dit || r->tg.vision) && a->infer_given)
		return vf_cli_usage("estimate", "--engine and the inference flags apply to language models");
	if (r->s.mode != VF_MODE_INFER || r->tg.dit || r->tg.vision)
		return -1;
	if (r->tg.arch.ssm_layers > 0 || r->tg.arch.heads <= 0) {
		/* state-space and attention-free layers: the serving engines'
		 * models are for attention KV caches; the estimate's own
		 * inference term (the recurrent state) answers, and says so */
		if (a->infer_given)
			return vf_cli_usage("estimate", "--engine and the inference flags model attention KV caches; "
							"a state-space model's inference is the estimate without them");
		return -1;
	}
	for (int i = 0; i < r->nrows; i++) {
		struct gpu_row *g = &r->rows[i];
		struct vf_error err = {0};
		struct vf_infer_opts o = a->inf;
		set_devices(g, &o);
		o.replay = true; /* users at --ctx judged as the row's own estimate is */
		o.alloc = &r->tg.alloc;
		o.memo = r->tg.memo;
		if (vf_infer_run(&r->tg.arch, &g->setup, &g->spec, &o, &g->inf, &err))
			return err.code == VF_EUSAGE ? vf_cli_usage("estimate", "%s", err.msg)
						     : vf_cli_fail_err(&err);
		g->has_inf = true;
		engine_verdict(a->inf.engine, g);
		infer_advice(&r->tg.arch, g, &o, a->margin);
	}
	const struct vf_infer *f = r->nrows ? &r->rows[0].inf : NULL;
	if (!f)
		return -1;
	if (f->engine == VF_ENGINE_VLLM)
		assume(&r->as, "vllm: KV cache = %.2f x the card less the weights, a profiled forward of %" PRId64
			       " tokens (+ %" PRId64 " rows of fp32 logits) and the CUDA context, in blocks of %d "
			       "tokens; CUDA graphs captured afterwards from the rest (vllm/v1/worker/gpu_worker.py, "
			       "vllm/v1/core/kv_cache_utils.py); context %" PRId64 " = max_model_len%s",
		       a->inf.gpu_memory_utilization > 0 ? a->inf.gpu_memory_utilization : VF_VLLM_GPU_MEMORY_UTILIZATION,
		       f->max_num_batched_tokens, f->max_num_seqs < f->max_num_batched_tokens ? f->max_num_seqs : f->max_num_batched_tokens,
		       f->block_size, f->ctx, a->inf.ctx ? " (--ctx)" : " (the model's max positions, vLLM's default; --ctx)");
	else if (f->engine == VF_ENGINE_LLAMACPP)
		assume(&r->as, "llamacpp: %s GGUF (%.2f bits per weight, llama-quantize's mixture), %" PRId64
			       " of %" PRId64 " layers on the GPU%s (--n-gpu-layers), the rest read at %.0f GB/s "
			       "(--host-bandwidth); KV cache %s/%s (--cache-type-k/v) of %" PRId64 " tokens per user "
			       "(--ctx, default 4096)",
		       vf_gguf_type_name(a->inf.gguf_given ? a->inf.gguf_type : VF_GGUF_Q4_K_M), f->bits_per_weight,
		       f->gpu_layers, r->tg.arch.layers, f->output_on_gpu ? " with the output layer" : "",
		       a->inf.host_bandwidth_gbs > 0 ? a->inf.host_bandwidth_gbs : 50.0,
		       a->cache_k ? a->cache_k : "f16", a->cache_v ? a->cache_v : "f16", f->ctx);
	else
		assume(&r->as, "transformers generate(): max users = the largest batch whose forward over %" PRId64
			       " tokens with the KV cache fits (--ctx, default --seq), its device peak by the "
			       "caching allocator's replay, as the memory table's%s; --users N of them decode "
			       "together (nothing queues them): the row fits when all N do", f->ctx,
		       a->inf.static_cache ? "; StaticCache: the cache allocated for --ctx up front (--kv-cache)"
					   : "; DynamicCache: torch.cat's copy of one layer's K or V and the "
					     "allocator's 2 MiB rounding on top (--kv-cache static: none)");
	assume(&r->as, "decode (an estimate): each step reads the weights once and every user's KV cache at the "
		       "mean context (prompt + ctx) / 2, at the device-copy bandwidth (data/estimate/steptime.json "
		       "\"kernel\"), or the FLOPs' time if longer%s; TTFT: the prompt's (--seq) forward by the kernel model",
	       f->engine == VF_ENGINE_TRANSFORMERS
		       ? ", + eager kernel launches, or the kernel model's one-token forward if longer"
		       : f->engine == VF_ENGINE_VLLM
			 ? ", + the replayed CUDA graph's kernels (10 per layer, data/estimate/steptime.json vllm_decode) + vLLM's host work per step (vllm_decode host_step_s), exposed past the GPU step (async scheduling)"
			 : ", + its kernels per layer (data/estimate/steptime.json llamacpp_decode)");
	set_assumptions(r->rows, r->nrows, a->tensor_split != NULL, &r->as);
	if (f->approximate)
		assume(&r->as, "inference approximate: not modelled: %s", f->not_modelled);
	return -1;
}

/* --float8 on cards below compute capability 8.9 (vf_cli_float8_keep):
 * a card given or probed is an error, the common cards shown by default
 * lose those rows, named. Returns -1 or the exit code. */
static int float8_rows(const struct vf_setup *s, struct gpu_row *rows, int *nrows, const char *gsource,
		       struct assume *as)
{
	struct vf_cli_float8 f = {.cmd = "estimate", .common = strcmp(gsource, "common") == 0, .rc = -1};
	int k = 0;
	for (int i = 0; i < *nrows && f.rc < 0; i++)
		if (vf_cli_float8_keep(&f, s, &rows[i].spec)) {
			if (k != i)
				rows[k] = rows[i];
			k++;
		}
	int rc = vf_cli_float8_done(&f, k, *nrows);
	if (rc >= 0)
		return rc;
	*nrows = k;
	char b[512];
	if (f.dropped[0])
		assume(as, "%s", vf_cli_float8_words(&f, b, sizeof b));
	return -1;
}

/* vLLM and llama.cpp run their own kernels: of the setup flags they take
 * the prompt (--seq), the users (--batch), the GPUs and the CUDA context,
 * and vLLM the weights' dtype (--precision, --quant); another, or a price
 * for a run they have none of, is refused, never ignored. Returns -1 or
 * the exit code. */
static int engine_flags(const struct est_args *a)
{
	unsigned takes = VF_SETUP_G_MODE | VF_SETUP_G_SEQ | VF_SETUP_G_BATCH | VF_SETUP_G_GPUS | VF_SETUP_G_CONTEXT;
	if (a->inf.engine == VF_ENGINE_VLLM)
		takes |= VF_SETUP_G_PRECISION | VF_SETUP_G_QUANT;
	const char *f = vf_opt_setup_flag_given(&a->setup, takes);
	if (!f && a->w.price >= 0)
		f = "--price";
	if (f)
		return vf_cli_usage("estimate", "%s: not for --engine %s, which runs its own kernels (it takes --seq, "
						"the prompt, --batch or --users, --ctx, --gpu, --context-mib%s)",
				    f, vf_engine_name(a->inf.engine),
				    a->inf.engine == VF_ENGINE_VLLM ? ", --precision and --quant" : " and --gguf-type");
	return -1;
}

/* The target's estimate on every row, then the output. */
static int estimate(const struct est_args *a, struct result *r, bool t5)
{
	bool multi;
	int rc = make_rows(a, &r->s, r->rows, &r->nrows, &r->gsource);
	if (rc < 0)
		rc = float8_rows(&r->s, r->rows, &r->nrows, r->gsource, &r->as);
	if (rc < 0)
		rc = estimate_rows(&r->tg, &r->s, r->rows, r->nrows, a->margin, &multi);
	if (rc >= 0)
		return rc;
	bool engine = r->s.mode == VF_MODE_INFER && a->inf.engine != VF_ENGINE_TRANSFORMERS && !r->tg.dit &&
		      !r->tg.vision;
	if (engine && (a->w.tokens > 0 || a->w.steps > 0)) /* the whole run is of training steps */
		return vf_cli_usage("estimate", "--tokens/--steps: the whole run of a training step; --engine %s has "
						"none (its decode tokens/s per user and in total are in the inference table)",
				    vf_engine_name(a->inf.engine));
	/* generate() too: its steps would be prompt forwards priced as the
	 * tokens generated (llama2-7b, 1e9 tokens on an H100: 9.5 h at the
	 * prompt's 29k tokens/s, where decode gives 40 tokens/s), as fit refuses */
	if (r->s.mode == VF_MODE_INFER && !r->tg.dit && !r->tg.vision && (a->w.tokens > 0 || a->w.steps > 0))
		return vf_cli_usage("estimate", "--tokens/--steps: the whole run of a training step; --mode infer has "
						"none (its step is one prompt forward; decode tokens/s per user and in "
						"total are in the inference table)");
	if (engine) {
		rc = engine_flags(a);
		if (rc >= 0)
			return rc;
	}
	if (multi && !engine)
		assume(&r->as, "GPUs of one kind given as ID:N run one data-parallel job over all N (--gpus, --shard)");
	tier_assumptions(r->rows, r->nrows, &r->as);
	rc = infer_rows(a, r);
	if (rc >= 0)
		return rc;
	rc = first_estimate(a, &r->tg, &r->s, r->rows, r->nrows, &r->e0, &r->sim);
	if (rc >= 0)
		return rc;
	if (engine && r->nrows && r->rows[0].has_inf) { /* the engine's own terms (estimate-engine.h) */
		engine_assumptions(&r->e0, &r->s, &r->rows[0].spec, &a->inf, &r->as);
		return output(a, r);
	}
	bool split = vf_split_active(&r->s);
	/* The trainer's model runs each GPU under its tier's config: the
	 * flags' defaults (mode, optimizer, quantization, video, ...) are not
	 * what it estimates, and the tier lines above say what is. */
	bool tiered = r->nrows > 0 && r->rows[0].tier_what[0];
	if (!tiered)
		setup_assumptions(&r->s, r->tg.dit, r->tg.vision && strcmp(r->tg.vis.kind, "vlm") != 0, t5,
				  multi || split,
				  !r->tg.dit && !r->tg.vision && eager_family(&r->s, &r->tg.arch),
				  r->tg.arch.family, &r->as);
	if (split)
		split_assumptions(&r->s, &r->tg.arch, &r->as);
	/* the tier's setup (its stack: the trainer's, data/stacks/ltx.json) */
	estimate_assumptions(&r->e0, tiered ? &r->rows[0].setup : &r->s, r->nrows ? &r->rows[0].spec : NULL,
			     &r->as);
	return output(a, r);
}

/* What the setup asks that the model cannot run or the estimate cannot
 * model: a DiT's or a vision encoder's flags beyond its estimator
 * (vf_opt_dit_setup_ok, vf_opt_vision_setup_ok), the sequence against the model's positions
 * (vf_opt_position_check: shortened and said, refused, or past the trained
 * context, said and the result approximate). Returns -1 or the exit code. */
static int setup_check(const struct est_args *a, struct vf_setup *s, struct target *tg, struct assume *as)
{
	char msg[384], what[160];
	if (tg->dit && !vf_opt_dit_setup_ok(s, msg, sizeof msg))
		return vf_cli_usage("estimate", "%s", msg);
	if (tg->dit && s->audio && tg->d.audio_hidden <= 0)
		return vf_cli_usage("estimate", "--audio: %s has no audio stream", tg->id);
	if (tg->vision && !vf_opt_vision_setup_ok(s, strcmp(tg->vis.kind, "vlm") == 0, msg, sizeof msg))
		return vf_cli_usage("estimate", "%s", msg);
	if (a->params || tg->dit || tg->vision || tg->pipeline)
		return -1;
	switch (vf_opt_position_check(&tg->arch, tg->id, s, a->inf.ctx, msg, sizeof msg, what, sizeof what)) {
	case VF_POS_REFUSED: return vf_cli_usage("estimate", "%s", msg);
	case VF_POS_BEYOND: vf_arch_not_understood(&tg->arch, what); /* fall through */
	case VF_POS_SHORTENED: assume(as, "%s", msg); /* fall through */
	case VF_POS_OK: break;
	}
	return -1;
}

static int run(int argc, char **argv)
{
	struct est_args a;
	struct result *r = calloc(1, sizeof *r);
	if (!r)
		return vf_cli_fail("out of memory");
	int rc = parse(argc, argv, &a, &r->tg);
	if (rc < 0 && a.gt)
		rc = check_groundtruth(a.gt, a.json);
	bool t5;
	r->s = a.setup;
	if (rc < 0)
		rc = load_target(&a, &r->s, &r->tg, &r->as, &t5);
	if (rc < 0)
		rc = setup_check(&a, &r->s, &r->tg, &r->as);
	if (rc < 0 && !(r->rows = calloc(MAX_GPUS, sizeof *r->rows)))
		rc = vf_cli_fail("out of memory");
	if (rc < 0)
		r->tg.memo = vf_replay_memo_new(); /* NULL: every replay runs */
	if (rc < 0)
		rc = estimate(&a, r, t5);
	free_rows(r->rows, r->nrows);
	vf_alloc_free(r->sim);
	vf_replay_memo_free(r->tg.memo);
	free(r);
	return rc;
}

const struct vf_cli_command vf_cmd_estimate = {
	.name = "estimate",
	.summary = "peak memory and step time of a run; whether it fits each GPU",
	.usage = usage,
	.options = options,
	.tail = "Exit status: 0 estimated (whether or not it fits), 1 failure, 2 usage error.\n",
	.run = run,
};
