/* estimate.c - peak GPU memory and step time of a training or inference
 * step (estimate.h), by mechanism:
 *
 *  1. Parameters by group from the architecture (vf_arch_param_groups) and
 *     the shapes of the linear layers (LoRA adapters, autocast copies).
 *  2. Memory terms, one per line with its unit, for what PyTorch +
 *     transformers + peft really allocate (ground truth:
 *     ../shared/groundtruth/README.md, measured on an H200 with PyTorch 2.11,
 *     transformers 5.17, peft 0.21).
 *  3. Activations saved for backward, counted tensor by tensor per layer
 *     from the operations of the transformers implementation (dtype of each
 *     saved tensor under autocast; what autograd saves only when a weight
 *     needs a gradient).
 *  4. The peak, by walking the phases of a steady-state step: forward and
 *     loss (optimizer states held from the previous step), backward,
 *     optimizer step (with its temporaries).
 *  5. The caching allocator: reserved = allocated + what its rounding and
 *     segment reuse leave unused.
 *  6. Step time: FLOPs / (dense bf16 rate x fitted utilisation) + the
 *     memory-bound optimizer step + per-layer launch overhead.
 *
 * vf_estimate_run allocates once per thread: it runs through a context
 * of its thread's own (run_ctx, made at the thread's first estimate, its
 * layer memo small and emptied when full). The fit search calls it
 * millions of times through a vf_estimate_ctx, which allocates its memo
 * once and keeps what the search's setups share (the search context,
 * below). */
#include "vramfit/estimate/estimate.h"

#include "vramfit/base/json.h"
#include "vramfit/estimate/moe.h"
#include "vramfit/estimate/split.h"
#include "vramfit/estimate/ssm.h"
#include "vramfit/model/models.h"
#include "steptrace.h"
#include "nccl.h"
#include "steptime.h"

#include "estimate_internal.h"
#include "mechanisms.h"

#include <math.h>
#include <pthread.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MIB ((int64_t)1 << 20)
#define GIB ((int64_t)1 << 30)

/* CUDA context + PyTorch runtime, measured: 552402944 bytes (527 MiB) with
 * PyTorch 2.11 / CUDA 13.0 on an H200 (groundtruth env.context_used_bytes). */
#define CONTEXT_HOPPER_BYTES 552402944LL

/* cuBLAS and cuBLASLt workspaces, allocated through the caching allocator
 * at the first matmul and kept: the ground truth's alloc_after_steps exceeds
 * weights + optimizer states by 65-70 MiB in every training record. Counted
 * with the activations. */
#define WORKSPACE_BYTES (66.0 * 1048576.0)

/* ---- model shape ------------------------------------------------------- */

enum fam_class { FC_LLAMA, FC_GEMMA, FC_GPT2, FC_NEOX, FC_FALCON, FC_PHI3, FC_T5 };

/* The MLP activation, by what autograd saves per intermediate element. */
enum act_kind {
	ACT_NATIVE,  /* SiLU, GELU (exact or tanh) as one kernel: saves its input */
	ACT_GELU_PY, /* transformers' NewGELUActivation (gpt2, T5 v1.1): pow/tanh in Python */
	ACT_RELU,    /* saves its output */
};

struct shape {
	enum fam_class fc;
	enum act_kind act;
	double h, f, V;           /* hidden, MLP width, vocabulary */
	double hq, hkv;           /* heads*head_dim, kv_heads*head_dim */
	double heads;
	double L, Ld;             /* (encoder) layers, decoder layers (T5) */
	double experts, topk;     /* MoE; 0 = dense */
	bool gated, tied, layer_norm, fused_qkv, fused_gate_up, rotary, parallel, qk_norm;
	double softcap_logits;    /* gemma2: tanh soft-capping of the logits */
	double dropout;           /* hidden/attention dropout probability in training */
	int norms_per_layer;
	double layer_vectors;     /* 1-D parameter tensors per layer: norm weights (and
				   * LayerNorm biases), linear biases */
	/* parameters */
	double params;            /* total (tied once) */
	double emb;               /* embedding group (token + positions + untied head) */
	double linear;            /* attention + MLP + experts (matrices and biases) */
	double active_linear;     /* linear parameters one token passes through */
	double norm;
	double largest;           /* elements of the largest parameter tensor */
	double layer_linear;      /* linear parameters of one layer (for recompute) */
	struct vf_moe_terms mt;   /* experts, latent attention, sliding windows (moe.c) */
	struct vf_ssm_terms ssm;  /* Mamba layers of SSMs and hybrids (ssm.c) */
	bool eager_attn;          /* explicit s x s attention whatever the setup says */
	double rounding;          /* param_rounding: a parameter copy's share lost to segments */
};

static bool fam_is(const char *fam, const char *name)
{
	return strcmp(fam, name) == 0;
}

static double popcount(unsigned x)
{
	double n = 0;
	for (; x; x &= x - 1)
		n++;
	return n;
}

static double param_rounding(const struct shape *s);

/* The family class of a family name (llama-like unless named). */
static enum fam_class shape_family(const char *fam)
{
	switch (fam[0]) { /* first letter first: this runs millions of times */
	case 'g':
		if (fam_is(fam, "gpt2"))
			return FC_GPT2;
		if (fam_is(fam, "gpt_neox"))
			return FC_NEOX;
		if (strncmp(fam, "gemma", 5) == 0)
			return FC_GEMMA;
		break;
	case 'f':
		if (fam_is(fam, "falcon"))
			return FC_FALCON;
		break;
	case 't':
		if (fam_is(fam, "t5"))
			return FC_T5;
		break;
	case 'p':
		if (fam_is(fam, "phi3"))
			return FC_PHI3;
		break;
	default:
		break;
	}
	return FC_LLAMA;
}

/* Widths and counts of the architecture, with their defaults. */
static void shape_dims(const struct vf_arch *a, struct shape *s)
{
	s->h = (double)(a->hidden > 0 ? a->hidden : 1);
	s->heads = (double)(a->heads > 0 ? a->heads : 1);
	double hd = a->head_dim > 0 ? (double)a->head_dim : s->h / s->heads;
	s->hq = s->heads * hd;
	s->hkv = (a->kv_heads > 0 ? (double)a->kv_heads : s->heads) * hd;
	s->f = a->ffn > 0 ? (double)a->ffn : 4 * s->h;
	if (a->ssm_layers > 0 && a->ffn == 0 && (a->known & VF_ARCH_F_FFN))
		s->f = 0; /* a pure SSM (Mamba): no MLP block */
	s->V = a->vocab > 0 ? (double)a->vocab : 32000;
	s->L = a->layers > 0 ? (double)a->layers : 1;
	s->Ld = a->decoder_layers > 0 ? (double)a->decoder_layers : 0;
	s->experts = a->experts > 0 ? (double)a->experts : 0;
	s->topk = a->experts_per_token > 0 ? (double)a->experts_per_token : (s->experts ? 2 : 0);
}

/* What the family's transformers implementation does: norms, fused
 * projections, rotary, dropout, activation. */
static void shape_flags(const struct vf_arch *a, const char *fam, struct shape *s)
{
	s->gated = a->gated_mlp;
	s->tied = a->tied_embeddings;
	s->layer_norm = a->layer_norm || s->fc == FC_GPT2 || s->fc == FC_NEOX || s->fc == FC_FALCON;
	s->fused_qkv = s->fc == FC_GPT2 || s->fc == FC_NEOX || s->fc == FC_FALCON || s->fc == FC_PHI3 ||
		       fam_is(fam, "bloom"); /* query_key_value */
	s->rotary = !(s->fc == FC_GPT2 || s->fc == FC_T5) && a->rotary_pct > 0; /* ALiBi, bert: none */
	s->fused_gate_up = s->fc == FC_PHI3;
	s->qk_norm = a->qk_norm;
	s->eager_attn = a->eager_attention || s->fc == FC_T5; /* bloom, deberta; T5 */
	s->softcap_logits = fam_is(fam, "gemma2") ? 1 : 0;
	s->parallel = a->parallel_attn;
	s->norms_per_layer = a->norms_per_layer > 0 ? a->norms_per_layer : 2;
	double qkv = s->fused_qkv ? 1 : 3, mlp = s->gated && !s->fused_gate_up ? 3 : 2;
	s->layer_vectors = s->norms_per_layer * (s->layer_norm ? 2 : 1) +
			   (a->qkv_bias || a->linear_bias ? qkv : 0) + (a->o_bias || a->linear_bias ? 1 : 0) +
			   (a->mlp_bias || a->linear_bias ? mlp : 0);
	/* Configuration defaults of transformers: GPT2Config resid/embd/attn
	 * pdrop 0.1, T5Config dropout_rate 0.1; BertConfig (and RobertaConfig,
	 * XLMRobertaConfig, DebertaV2Config) hidden_dropout_prob and
	 * attention_probs_dropout_prob 0.1: on after model.train(), as the
	 * Trainer leaves it; the others 0. */
	bool enc_dropout = (fam[0] == 'b' || fam[0] == 'r' || fam[0] == 'x' || fam[0] == 'd') &&
			   (fam_is(fam, "bert") || fam_is(fam, "roberta") || fam_is(fam, "xlm-roberta") ||
			    fam_is(fam, "deberta-v2"));
	s->dropout = (s->fc == FC_GPT2 || s->fc == FC_T5 || enc_dropout) ? 0.1 : 0.0;
	if (s->fc == FC_GPT2)
		s->act = ACT_GELU_PY; /* activation_function gelu_new */
	else if (s->fc == FC_T5)
		s->act = s->gated ? ACT_GELU_PY : ACT_RELU; /* gated-gelu (v1.1) or relu */
	else if (a->act_gelu_python)
		s->act = ACT_GELU_PY; /* phi: gelu_new */
	else
		s->act = ACT_NATIVE;
}

/* Parameter counts by group, active and largest linear weights. */
static void shape_params(const struct vf_arch *a, struct shape *s)
{
	struct vf_param_groups g;
	double mlp1 = (s->gated ? 3 : 2) * s->h * s->f;
	double attn1 = 2 * s->h * s->hq + 2 * s->h * s->hkv;
	if (vf_arch_param_groups(a, &g)) {
		s->params = (double)g.total;
		s->emb = (double)g.embedding;
		s->linear = (double)(g.attention + g.mlp + g.experts);
		s->norm = (double)g.norm;
	} else {
		s->emb = s->V * s->h * (s->tied ? 1 : 2);
		s->linear = s->L * (attn1 + mlp1 * (s->experts ? s->experts : 1));
		s->norm = (2 * s->L + 1) * s->h;
		s->params = s->emb + s->linear + s->norm;
	}
	/* the safetensors header count, when files were read, is the count:
	 * what the architecture does not explain is taken as linear weights */
	if (a->params_exact > 0 && (double)a->params_exact != s->params) {
		s->linear += (double)a->params_exact - s->params;
		if (s->linear < 0)
			s->linear = 0;
		s->params = (double)a->params_exact;
	}
	vf_moe_terms(a, &s->mt);
	vf_ssm_terms(a, &s->ssm);
	s->mt.dense_ffn = s->f;
	if (!s->mt.mla)
		s->mt.kv_width = 2 * s->hkv;
	double layers = s->L + s->Ld;
	s->layer_linear = layers > 0 ? s->linear / layers : s->linear;
	s->active_linear = s->linear;
	if (s->experts > 0 && a->moe_ffn > 0)
		s->active_linear = s->linear - s->mt.idle_params; /* routed experts a token skips */
	else if (s->experts > 0)
		s->active_linear = s->linear - s->L * (s->experts - s->topk) * mlp1;
	if (s->active_linear < 0)
		s->active_linear = s->linear;
	double big = s->V * s->h;
	if (s->h * s->f > big)
		big = s->h * s->f;
	if (s->fused_qkv && s->h * 3 * s->hq > big)
		big = 3 * s->h * s->hq;
	s->largest = big;
}

static void shape_from_arch(const struct vf_arch *a, struct shape *s)
{
	memset(s, 0, sizeof *s);
	s->fc = shape_family(a->family);
	shape_dims(a, s);
	shape_flags(a, a->family, s);
	shape_params(a, s);
	s->rounding = param_rounding(s);
}

/* The shape of the architecture last seen by this thread. shape_from_arch
 * reads nothing but the architecture's bytes, so an architecture whose
 * bytes (padding included) equal the remembered one's has the remembered
 * shape; any other is computed afresh. A search evaluates one model
 * millions of times: this spares the parameter count, the MoE and SSM
 * terms and the segment rounding on each. Per thread: no lock, no sharing. */
static _Thread_local struct {
	bool valid;
	struct vf_arch arch;
	struct shape s;
} shape_memo;

/* Borrowed: valid until this thread's next shape_of. */
static const struct shape *shape_of(const struct vf_arch *a)
{
	if (shape_memo.valid && memcmp(&shape_memo.arch, a, sizeof *a) == 0)
		return &shape_memo.s;
	shape_from_arch(a, &shape_memo.s);
	memcpy(&shape_memo.arch, a, sizeof *a);
	shape_memo.valid = true;
	return &shape_memo.s;
}

/* What lora_mlp needs: the shape, the LoRA targets and the rank. */
struct lora_mlp_ctx {
	const struct shape *s;
	unsigned t;
	double r;
};

/* LoRA parameters on one MLP of width f (the targeted gate/up/down). */
static double lora_mlp(const void *ctx, double f)
{
	const struct lora_mlp_ctx *c = ctx;
	double h = c->s->h, r = c->r, mlp = 0;
	unsigned t = c->t;
	if (c->s->gated && c->s->fused_gate_up) {
		if (t & (VF_LORA_GATE | VF_LORA_UP))
			mlp += r * (h + 2 * f); /* phi3's gate_up_proj: one matrix h -> 2f */
	} else if (c->s->gated) {
		if (t & VF_LORA_GATE)
			mlp += r * (h + f);
		if (t & VF_LORA_UP)
			mlp += r * (h + f);
	} else if (t & (VF_LORA_UP | VF_LORA_GATE)) {
		mlp += r * (h + f);
	}
	if (t & VF_LORA_DOWN)
		mlp += r * (f + h);
	return mlp;
}

/* LoRA on the Mamba mixers of the SSM layers, r x (in + out) per targeted
 * linear (transformers' MambaMixer, Mamba2Mixer):
 *   Mamba-1  in_proj h -> 2i, x_proj i -> dt_rank + 2n, dt_proj dt_rank -> i
 *   Mamba-2  in_proj h -> i + conv channels + heads (x, z, B, C, dt)
 *   both     out_proj i -> h */
static double ssm_lora(const struct vf_ssm_terms *m, double h, unsigned t, double r)
{
	double i = m->inner, per = 0;
	if (t & VF_LORA_SSM_IN)
		per += r * (h + (m->heads > 0 ? i + m->conv_dim + m->heads : 2 * i));
	if ((t & VF_LORA_SSM_X) && m->heads <= 0)
		per += r * (i + m->dt_rank + 2 * m->state);
	if ((t & VF_LORA_SSM_DT) && m->heads <= 0)
		per += r * (m->dt_rank + i);
	if (t & VF_LORA_SSM_OUT)
		per += r * (i + h);
	return m->layers * per;
}

/* LoRA on one latent attention (deepseek_v3): no k_proj / v_proj; q_proj
 * only without a q rank, q_a_proj (h -> q rank) and q_b_proj (q rank ->
 * heads x qk dim) with one; kv_a_proj_with_mqa (h -> kv rank + rope dim),
 * kv_b_proj (kv rank -> heads x (nope dim + v dim)); o_proj reads heads x
 * v dim. */
static double mla_lora(const struct vf_moe_terms *m, double h, double hq, unsigned t, double r)
{
	double rope = m->latent_kv_width - m->kv_rank, per = 0;
	if ((t & VF_LORA_Q) && m->q_rank <= 0)
		per += r * (h + hq);
	if ((t & VF_LORA_MLA_QA) && m->q_rank > 0)
		per += r * (h + m->q_rank);
	if ((t & VF_LORA_MLA_QB) && m->q_rank > 0)
		per += r * (m->q_rank + m->heads * m->qk_dim);
	if (t & VF_LORA_MLA_KVA)
		per += r * (h + m->latent_kv_width);
	if (t & VF_LORA_MLA_KVB)
		per += r * (m->kv_rank + m->heads * (m->qk_dim - rope + m->v_dim));
	if (t & VF_LORA_O)
		per += r * (m->heads * m->v_dim + h);
	return per;
}

/* LoRA adapter parameters: r x (in + out) per targeted matrix. */
static double lora_params(const struct shape *s, unsigned t, double r)
{
	double per = 0; /* per layer of one attention */
	double h = s->h;
	if (s->fused_qkv) {
		/* c_attn / query_key_value / qkv_proj: one matrix h -> hq + 2 hkv */
		if (t & (VF_LORA_Q | VF_LORA_K | VF_LORA_V))
			per += r * (h + s->hq + 2 * s->hkv);
	} else {
		if (t & VF_LORA_Q)
			per += r * (h + s->hq);
		if (t & VF_LORA_K)
			per += r * (h + s->hkv);
		if (t & VF_LORA_V)
			per += r * (h + s->hkv);
	}
	if (t & VF_LORA_O)
		per += r * (s->hq + h);
	if (s->mt.mla)
		per = mla_lora(&s->mt, h, s->hq, t, r);
	struct lora_mlp_ctx c = {s, t, r};
	if (s->ssm.layers > 0) /* attention on the attention layers; the mixers' own (ssm_lora) */
		return s->ssm.attn_layers * per + ssm_lora(&s->ssm, h, t, r) +
		       vf_moe_lora_mlp(&s->mt, lora_mlp, &c);
	if (s->fc == FC_T5) {
		/* encoder: self-attention; decoder: self + cross attention */
		double attn = per, mlp = lora_mlp(&c, s->f);
		return s->L * (attn + mlp) + s->Ld * (2 * attn + mlp);
	}
	/* dense layers, each routed expert and the shared experts (moe.c);
	 * a router that is an nn.Linear, hidden -> experts, per MoE layer */
	double router = (t & VF_LORA_ROUTER) && s->mt.experts > 0 ? s->mt.moe_layers * r * (h + s->mt.experts) : 0;
	return s->L * per + vf_moe_lora_mlp(&s->mt, lora_mlp, &c) + router;
}

/* ---- the setup resolved to dtypes -------------------------------------- */

struct dt {
	bool train;       /* a training step (else inference) */
	bool full;        /* base weights trainable */
	bool autocast;    /* forward under autocast (amp, bf16, fp16) */
	double P;         /* bytes per base parameter as stored */
	double R;         /* bytes per element of the residual stream (embedding output) */
	double C;         /* bytes per element of matmul outputs (2 under autocast) */
	double nlora;     /* adapters per layer input point, see layer_bytes */
	unsigned lt;      /* LoRA targets (0 unless lora) */
	double rank;
	bool compile;     /* torch.compile: inductor recomputes cheap elementwise ops */
	bool qbase;       /* the frozen base linears are quantized */
	bool lora_fp32;   /* LoRA adapters kept in fp32 (peft), the input cast to them */
	bool lora_gemm32; /* ... and without autocast in a bf16 step: their GEMMs in fp32
			   * (vf_setup_fp32_adapter_gemms; vf__gemm.fp32, 4-byte operands) */
	bool lora_drop;   /* a dropout (p > 0) before each adapter */
};

/* Bytes saved for backward at one linear-layer input of n features per
 * token, consumed by `consumers` linears (of which `lora` carry an
 * adapter), the input being x_bytes wide. Under autocast each consumer
 * casts an fp32 input to bf16 itself (autocast caches only leaf tensors),
 * and autograd saves a linear's input only when its weight needs a
 * gradient; peft casts the input to the adapter's fp32 and autocast casts
 * it back, so each adapter saves its own bf16 copy. */
static double lin_in(const struct dt *d, double n, double x_bytes, double consumers, double lora)
{
	if (d->autocast) {
		double base = 0;
		if (d->full)
			base = x_bytes > 2 ? 2 * n * consumers : 2 * n;
		return base + 2 * n * lora;
	}
	/* without autocast a linear saves its input as it is; an adapter saves
	 * a copy of its own where peft casts the input to its fp32 weights or
	 * a dropout runs before it (the dropped copy) */
	double A = d->lora_fp32 ? 4 : x_bytes;
	if (lora > 0 && (A != x_bytes || d->lora_drop))
		return (d->full ? x_bytes * n : 0) + A * n * lora;
	return (d->full || lora > 0) ? x_bytes * n : 0;
}

/* Saved bytes of one norm per token: the fp32 input (or its fp32 copy)
 * kept by pow/mul for the backward, and the normalised tensor kept by the
 * weight multiply when the weight trains. Returns the output's width. */
static double norm_bytes(const struct shape *s, const struct dt *d, double *out_bytes)
{
	double h = s->h;
	if (s->layer_norm) {
		/* layer_norm runs in fp32 under autocast and saves its input */
		*out_bytes = d->autocast ? 4 : d->R;
		return (d->autocast ? 4 : d->R) * h;
	}
	/* RMSNorm: x.to(fp32) saved by pow and rsqrt-mul; weight * x saves x
	 * (llama: x cast back to the input dtype; gemma: kept in fp32) */
	*out_bytes = d->R;
	double saved = d->compile ? d->R * h : 4 * h; /* compiled: the fp32 copy is recomputed */
	if (d->full)
		saved += (s->fc == FC_GEMMA ? 4 : d->R) * h;
	return saved;
}

struct mlp_ctx {
	const struct shape *s;
	const struct dt *d;
	double xb, nl_in, nl_down; /* normed input bytes; LoRA adapters on gate/up, down */
};

/* Bytes one MLP of width f saves per token: gate/up (fc) inputs, the
 * activation, down input, dropout masks. */
static double mlp_bytes(const void *ctx, double f)
{
	const struct mlp_ctx *m = ctx;
	const struct shape *s = m->s;
	const struct dt *d = m->d;
	double h = s->h, C = d->C, xb = m->xb, nl_in = m->nl_in, nl_down = m->nl_down;
	double total = 0;
	total += lin_in(d, h, xb, s->gated && !s->fused_gate_up ? 2 : 1, nl_in); /* gate/up (fc) inputs */
	double ab = C;                                           /* act output width */
	switch (s->act) {
	case ACT_NATIVE:
		total += C * f;                                  /* act input */
		break;
	case ACT_RELU:
		total += C * f;                                  /* relu output */
		break;
	case ACT_GELU_PY:
		/* 0.5*x*(1+tanh(c*(x+0.044715*pow(x,3)))): pow runs in fp32 under
		 * autocast and saves its fp32 input; tanh saves its fp32 output;
		 * the final product saves 0.5*x and (1+tanh) */
		if (d->autocast)
			total += d->compile ? 2 * f : (4 + 4 + 2 + 4) * f; /* compiled: its input only */
		else
			total += 4 * C * f; /* the same four in the compute dtype */
		ab = d->autocast ? 4 : C;
		break;
	}
	if (s->gated)
		total += ab * f + C * f;                         /* act output and up, kept by the product */
	if (s->dropout > 0 && s->fc == FC_T5)
		total += f;                                      /* dropout inside the T5 FF */
	total += lin_in(d, f, s->gated ? (ab > C ? ab : C) : ab, 1, nl_down); /* down input */
	if (s->dropout > 0)
		total += h;                                      /* dropout mask */
	return total;
}

/* Activation bytes saved per token by one decoder layer (sdpa/flash
 * attention; the s^2 scores of eager attention are added by the caller). */
static double layer_bytes(const struct shape *s, const struct dt *d, bool eager, double *attn_part)
{
	double h = s->h, hq = s->hq, hkv = s->hkv, C = d->C;
	unsigned t = d->lt;
	double xb, total = 0;
	double nl_qkv = s->fused_qkv ? ((t & (VF_LORA_Q | VF_LORA_K | VF_LORA_V)) ? 1 : 0)
				     : popcount(t & (VF_LORA_Q | VF_LORA_K | VF_LORA_V));
	double nl_o = (t & VF_LORA_O) ? 1 : 0;
	double nl_in = s->gated && !s->fused_gate_up ? popcount(t & (VF_LORA_GATE | VF_LORA_UP))
						     : ((t & (VF_LORA_GATE | VF_LORA_UP)) ? 1 : 0);
	double nl_down = (t & VF_LORA_DOWN) ? 1 : 0;
	double mla_in = 0; /* latent attention: its adapters' inputs other than the layer's */
	if (s->mt.mla && (t & (VF_LORA_Q | VF_LORA_K | VF_LORA_V | VF_LORA_MLA_ALL))) {
		const struct vf_moe_terms *mt = &s->mt;
		nl_qkv = ((t & VF_LORA_Q) && mt->q_rank <= 0) + ((t & VF_LORA_MLA_QA) && mt->q_rank > 0) +
			 ((t & VF_LORA_MLA_KVA) ? 1 : 0); /* q_proj or q_a_proj, kv_a_proj_with_mqa */
		if ((t & VF_LORA_MLA_QB) && mt->q_rank > 0)
			mla_in += lin_in(d, mt->q_rank, C, 0, 1); /* q_b_proj reads the normed q latent */
		if (t & VF_LORA_MLA_KVB)
			mla_in += lin_in(d, mt->kv_rank, C, 0, 1); /* kv_b_proj the normed kv latent */
	}

	/* attention block */
	total += norm_bytes(s, d, &xb);                          /* input norm */
	/* without autocast, bf16 adapters' dropped copies: one for q, k and v,
	 * as lora_dropout_masks counts their masks (litgpt's fused qkv) */
	double nl_qkv_in = !d->autocast && !d->lora_fp32 && nl_qkv > 1 ? 1 : nl_qkv;
	total += lin_in(d, h, xb, s->fused_qkv ? 1 : 3, nl_qkv_in) + mla_in; /* q, k, v inputs */
	if (s->fused_qkv && !s->rotary)
		total += C * (hq + 2 * hkv);                     /* fused qkv output (viewed by sdpa) */
	else if (s->fused_qkv)
		total += C * (hq + 2 * hkv) + C * (hq + hkv);    /* qkv output (v view) + rotated q, k */
	else
		total += C * (hq + 2 * hkv);                     /* rotated q, k and v kept by sdpa */
	if (!eager)
		total += C * hq + 4 * s->heads / 64;             /* sdpa output and logsumexp (its backward) */
	if (s->qk_norm)
		total += 4 * (hq + hkv) + (d->full ? 2 * (hq + hkv) : 0); /* q/k RMSNorm fp32 copies */
	total += lin_in(d, hq, C, 1, nl_o);                      /* o_proj input (contiguous copy) */
	if (s->dropout > 0)
		total += h;                                      /* dropout mask, 1 byte */

	*attn_part = total;

	/* MLP block */
	if (!s->parallel)
		total += norm_bytes(s, d, &xb);                  /* post-attention norm */
	else
		total += s->layer_norm ? 4 * h * (d->R < 4 ? 1 : 0) : 0; /* 2nd LN of the same x */
	/* post-attention / post-FFN norms (gemma2/3: four per layer) */
	for (int k = 2; k < s->norms_per_layer; k++) {
		double ob;
		total += norm_bytes(s, d, &ob);
	}
	struct mlp_ctx mc = {s, d, xb, nl_in, nl_down};
	total += vf_moe_saved_per_token(&s->mt, mlp_bytes, &mc, h, C); /* MLP or experts */
	if ((t & VF_LORA_ROUTER) && s->mt.experts > 0) /* the router's lora_A input, MoE layers */
		total += lin_in(d, h, xb, 0, 1) * s->mt.moe_layers / s->mt.layers;
	total += vf_moe_mla_extra_saved(&s->mt, C);                      /* latent attention */
	return total;
}

/* Eager attention: saved bytes per score element (batch x heads x q x k):
 * softmax output in fp32, its cast to the compute dtype kept by the
 * probs @ v matmul; with dropout the mask (1 byte) and the dropped copy
 * instead of the cast (measured: g2-full-amp-b8s1024-eager, 7.0 B). */
static double score_bytes(const struct shape *s, const struct dt *d)
{
	if (s->dropout > 0)
		return 4 + 1 + d->C;
	return 4 + d->C;
}

/* ---- the step's tensors, for the allocator simulation (steptrace.c) ---- */

static void tl_add(struct vf__tensors *t, double bytes)
{
	if (bytes > 0 && t->n < VF__MAX_TENSORS)
		t->bytes[t->n++] = bytes;
}

/* One layer's linear weight tensors (elements), as transformers stores
 * them: separate q/k/v unless fused, gate/up unless fused; MoE experts as
 * transformers 5 stores them (one gate_up and one down tensor per layer)
 * plus the router. Scaled so that all layers add up to s->linear. */
static void layer_linear_elems(const struct shape *s, struct vf__tensors *t)
{
	double h = s->h, f = s->f;
	double fe = s->mt.expert_ffn > 0 ? s->mt.expert_ffn : f; /* a routed expert's width */
	t->n = 0;
	if (s->fused_qkv) {
		tl_add(t, h * (s->hq + 2 * s->hkv));
	} else {
		tl_add(t, h * s->hq);
		tl_add(t, h * s->hkv);
		tl_add(t, h * s->hkv);
	}
	tl_add(t, s->hq * h);
	if (s->experts > 0) {
		tl_add(t, s->experts * h * fe * (s->gated ? 2 : 1));
		tl_add(t, s->experts * fe * h);
		tl_add(t, s->experts * h);
	} else {
		if (s->gated && !s->fused_gate_up) {
			tl_add(t, h * f);
			tl_add(t, h * f);
		} else {
			tl_add(t, h * f * (s->gated ? 2 : 1));
		}
		tl_add(t, f * h);
	}
	double sum = 0;
	for (int i = 0; i < t->n; i++)
		sum += t->bytes[i];
	double layers = s->L + s->Ld;
	double want = s->linear / (layers > 0 ? layers : 1);
	for (int i = 0; sum > 0 && i < t->n; i++)
		t->bytes[i] *= want / sum;
}

/* LoRA adapter tensors of one layer (elements): A (r x in) and B
 * (out x r) per targeted matrix, scaled to lora / layers. */
static void layer_lora_elems(const struct shape *s, unsigned t, double r, double lora,
			     struct vf__tensors *o)
{
	o->n = 0;
	double h = s->h, f = s->f;
	double in[7] = {h, h, h, s->hq, h, h, f};
	double out[7] = {s->hq, s->hkv, s->hkv, h, f, f, h};
	for (int k = 0; k < 7; k++) {
		if (!(t & (1u << k)))
			continue;
		tl_add(o, r * in[k]);
		tl_add(o, r * out[k]);
	}
	double sum = 0;
	for (int i = 0; i < o->n; i++)
		sum += o->bytes[i];
	double layers = s->L + s->Ld;
	double want = lora / (layers > 0 ? layers : 1);
	for (int i = 0; sum > 0 && i < o->n; i++)
		o->bytes[i] *= want / sum;
}

/* One layer's saved activations as tensors: the eager score tensors, the
 * MLP's N x f tensors (activation input/output, up, down input; the
 * Python GELU's fp32 intermediates), the fp32 norm inputs, then the rest
 * (attention inputs and outputs, dropout masks) as one block. Replaying
 * the rest as separate N x h tensors lets the optimizer states created in
 * the first step settle in their blocks and displace the next step's
 * activations into the logits' blocks (q05-full-amp-b8s2048: +16 %
 * reserved, not measured), so they are kept together. */
static void layer_act_tensors(const struct shape *s, const struct dt *d, double N, double total,
			      double scores, struct vf__tensors *t)
{
	t->n = 0;
	double left = total;
	if (scores > 0) {
		tl_add(t, scores * 4 / (4 + d->C));
		tl_add(t, scores * d->C / (4 + d->C));
		left -= scores;
	}
	double mult = s->experts > 0 ? s->topk : 1;
	double nf = ((s->gated ? 3 : 1) + (d->full || (d->lt & VF_LORA_DOWN) ? 1 : 0)) * mult;
	double fb = N * s->f * d->C;
	if (s->act == ACT_GELU_PY && d->autocast) {
		for (int i = 0; i < 3 * (int)mult && left > N * s->f * 4 * 1.5; i++) {
			tl_add(t, N * s->f * 4); /* pow input, tanh output, 1 + tanh */
			left -= N * s->f * 4;
		}
	}
	for (int i = 0; i < (int)nf && left > fb * 1.5 && t->n < 16; i++) {
		tl_add(t, fb);
		left -= fb;
	}
	double nb = N * s->h * 4;
	for (int i = 0; i < s->norms_per_layer && left > nb * 1.5; i++) {
		tl_add(t, nb);
		left -= nb;
	}
	tl_add(t, left);
}

/* One layer's forward transients (made and freed within the layer; not
 * saved): the norm's fp32 square, rotary's rotate_half and products, the
 * attention output made contiguous, the o_proj and down_proj outputs and
 * the two residual sums. */
static void layer_tmp_tensors(const struct shape *s, const struct dt *d, double N,
			      struct vf__tensors *t)
{
	t->n = 0;
	tl_add(t, N * s->h * 4);
	if (s->rotary) {
		tl_add(t, N * s->hq * d->C);
		tl_add(t, N * s->hkv * d->C);
	}
	tl_add(t, N * s->hq * d->C);
	tl_add(t, N * s->h * d->C);
	tl_add(t, N * s->h * d->R);
	tl_add(t, N * s->h * 4);
	tl_add(t, N * s->h * d->C);
	tl_add(t, N * s->h * d->R);
}

/* The tensors the training phases of vf_estimate_run sized (its locals,
 * passed through). */
struct step_in {
	double W_other, qb, gb, T, lora, S, OT, AC, A_layer, scores, ckpt_in, emb_out,
		final_norm, Nout, dequant, bwd_transient, ddp, bias, shard_w, shard_o, layers;
	double fsdp_unit, fsdp_root, fsdp_grad; /* FSDP/ZeRO-3: one layer gathered, the root
	                                         * gathered, a layer's unsharded gradient */
	double fsdp_gb;     /* FSDP: bytes per unsharded gradient element (0: gb) */
	double fsdp_nosync; /* FSDP under no_sync: one layer unit's whole gradient kept */
	double rest;      /* bytes per base parameter outside the linears (0: d->P) */
	double head_copy; /* a frozen fp32 lm_head's bf16 copy saved for its backward */
};

static void fill_params(const struct shape *s, const struct vf_setup *su, const struct dt *d,
			const struct step_in *in, struct vf__step *st)
{
	struct vf__tensors lin;
	layer_linear_elems(s, &lin);
	double layers = in->layers > 0 ? in->layers : 1;
	double norms = s->norm > s->h ? (s->norm - s->h) / layers : 0;
	st->layer_w.n = st->layer_ac.n = st->layer_train.n = 0;
	for (int i = 0; i < lin.n; i++) {
		tl_add(&st->layer_w, lin.bytes[i] * in->qb / in->shard_w);
		if (in->AC > 0 && d->P == 4)
			tl_add(&st->layer_ac, lin.bytes[i] * 2 / in->shard_w);
		if (d->full)
			tl_add(&st->layer_train, lin.bytes[i] * in->gb / in->shard_w);
	}
	double rest = in->rest > 0 ? in->rest : d->P; /* peft's k-bit preparation: fp32 */
	for (int k = 0; k < s->norms_per_layer; k++) {
		tl_add(&st->layer_w, norms / s->norms_per_layer * rest / in->shard_w);
		if (d->full)
			tl_add(&st->layer_train, norms / s->norms_per_layer * in->gb / in->shard_w);
	}
	if (su->mode == VF_MODE_LORA) {
		struct vf__tensors ad;
		layer_lora_elems(s, d->lt, d->rank, in->lora, &ad);
		for (int i = 0; i < ad.n; i++) {
			tl_add(&st->layer_train, ad.bytes[i] * 4 / in->shard_w);
			if (d->autocast)
				tl_add(&st->layer_ac, ad.bytes[i] * 2);
		}
	}
	/* embedding (with what else is outside the layers), final norm, head */
	double head = s->tied ? 0 : s->V * s->h;
	double emb = s->params - s->linear - s->norm - head;
	st->other_w.n = st->other_train.n = 0;
	double el[3] = {emb, s->h, head};
	for (int i = 0; i < 3; i++) {
		tl_add(&st->other_w, el[i] * rest / in->shard_w);
		if (d->full)
			tl_add(&st->other_train, el[i] * in->gb / in->shard_w);
	}
	st->head_ac = in->AC > 0 && d->P == 4 ? s->V * s->h * 2 / in->shard_w : 0;
	st->tied = s->tied;
	st->nstates = su->optimizer == VF_OPT_ADAMW || su->optimizer == VF_OPT_ADAMW8BIT ? 2 : 1;
	/* S is the rank's share (shard_o); the tensors above are already
	 * their shard_w-th (ZeRO-3, FSDP) */
	st->state_ratio = in->T > 0 ? in->S * in->shard_w / (in->T * in->gb) / st->nstates : 0;
}

static void fill_step(const struct shape *s, const struct vf_setup *su, const struct dt *d,
		      const struct step_in *in, struct vf__step *st)
{
	double N = (double)su->batch * (double)su->seq;
	memset(st, 0, sizeof *st);
	st->train = d->train;
	st->full = d->full;
	st->ckpt = su->grad_ckpt && d->train;
	st->ac_cached = d->full;
	st->layers = (int)(in->layers > 0 ? in->layers : 1);
	st->micro = su->grad_accum > 1 ? 2 : 1;
	fill_params(s, su, d, in, st);
	st->ot = VF__OT_NONE;
	st->ot_ratio = 1;
	if (su->optimizer == VF_OPT_ADAMW && su->optimizer_impl == VF_OPTIMPL_FOREACH) {
		st->ot = VF__OT_FOREACH;
	} else if ((su->optimizer == VF_OPT_ADAMW && su->optimizer_impl == VF_OPTIMPL_FOR) ||
		   su->optimizer == VF_OPT_LION) {
		st->ot = VF__OT_PER_TENSOR;
		st->ot_count = 2;
	} else if (su->optimizer == VF_OPT_ADAFACTOR) {
		st->ot = VF__OT_PER_TENSOR;
		st->ot_count = 3;
		st->ot_ratio = 4 / in->gb;
	}
	if (in->shard_o > in->shard_w) /* ZeRO-1/2: whole tensors, their states' share */
		st->ot_ratio /= in->shard_o / in->shard_w;
	layer_act_tensors(s, d, N, in->A_layer, in->scores, &st->layer_act);
	layer_tmp_tensors(s, d, N, &st->layer_tmp);
	st->ckpt_in = in->ckpt_in;
	st->emb_out = in->emb_out;
	st->final_norm = in->final_norm;
	double NV = in->Nout * s->V;
	st->lm_out = NV * d->C;
	st->lm_up = d->C == 4 ? 0 : NV * 4;
	st->lm_lsm = NV * 4;
	st->lm_grad = NV * 4;
	if (su->loss == VF_LOSS_CHUNKED) { /* one chunk upcast at a time; log_softmax kept whole */
		double k = su->loss_chunks > 0 ? su->loss_chunks : 8;
		st->lm_up = NV * 4 / k;
		st->lm_grad = NV * 4 / k;
		if (su->compile) { /* the logits are what the compiled loss saves */
			st->lm_lsm = NV * d->C;
			st->lm_out = 0;
		}
	} else if (su->loss == VF_LOSS_FUSED_LINEAR) { /* one chunk of tokens at a time */
		double chunks = ceil(s->V / s->h);
		double c = NV / (chunks > 1 ? chunks : 1);
		st->lm_out = c * d->C;
		st->lm_up = st->lm_lsm = st->lm_grad = c * 4;
	}
	st->offload = su->activation_offload;
	st->oib = su->optimizer_in_backward;
	st->grads_kept = su->grads_zeroed && d->train && !su->optimizer_in_backward;
	st->paged_min = su->paged_optimizer && d->train ? VF_MECH_PAGED_MIN_ELEMENTS * in->gb : 0;
	st->lm_extra = s->softcap_logits > 0 ? NV * d->C * 2 : 0;
	st->grad_hidden = N * s->h * 4;
	st->workspace = WORKSPACE_BYTES;
	st->dequant = in->dequant;
	st->bwd_transient = in->bwd_transient;
	st->ddp_bucket = in->ddp;
	st->bias = in->bias;
	st->gather = in->fsdp_unit;
	st->gather_root = in->fsdp_root;
	st->unit_grad = in->fsdp_grad;
	/* the root's whole gradients in the gathered dtype (fsdp_units) */
	st->unshard = in->fsdp_root > 0 && d->full
			      ? in->shard_w * (in->fsdp_gb > 0 ? in->fsdp_gb / in->gb : 1)
			      : 0;
	st->nosync_layer = in->fsdp_nosync;
	st->head_ac_replayed = in->fsdp_unit > 0;
	st->head_copy = in->head_copy;
}

static void fill_infer(const struct shape *s, const struct vf_setup *su, const struct dt *d,
		       const struct step_in *in, double kv, struct vf__step *st)
{
	double b = (double)su->batch, sq = (double)su->seq, N = b * sq;
	fill_step(s, su, d, in, st);
	st->kv_layer = kv / (2 * (in->layers > 0 ? in->layers : 1));
	st->inf_h = N * s->h * d->C;
	st->inf_q = N * s->hq * d->C;
	st->inf_kv = N * s->hkv * d->C;
	st->inf_f = N * s->f * d->C;
	st->inf_scores = su->attention == VF_ATTN_EAGER ? b * s->heads * sq * sq * (4 + d->C) : 0;
	st->inf_logits = in->Nout * s->V * d->C;
	st->inf_head_in = in->Nout * s->h * d->C;
}

/* ---- allocator ----------------------------------------------------------- */

/* PyTorch's caching allocator rounds every block to 512 bytes; requests up to
 * 1 MiB come from 2 MiB segments, 1-10 MiB from 20 MiB segments, larger ones
 * get their own segment rounded up to 2 MiB. The unused tail of a segment
 * is reserved but not allocated. */
static double segment_waste(double bytes)
{
	if (bytes <= 0)
		return 0;
	if (bytes <= (double)MIB)
		return ceil(bytes / 512.0) * 512.0 - bytes; /* packed into shared 2 MiB segments */
	if (bytes < 10.0 * MIB) {
		/* k blocks per 20 MiB segment; the tail is shared among them */
		double k = floor(20.0 * MIB / bytes);
		return (20.0 * MIB - k * bytes) / k;
	}
	double seg = ceil(bytes / (2.0 * MIB)) * 2.0 * MIB;
	return seg - bytes;
}

/* Fraction of a parameter copy lost to segment rounding: each matrix
 * larger than 10 MiB gets a segment rounded up to 2 MiB (fp32 sizes). */
static double param_rounding(const struct shape *s)
{
	double h = s->h;
	double mats[5] = {h * s->hq, h * s->hkv, h * s->f, s->V * h, 0};
	double n[5] = {2, 2, s->gated ? 3 : 2, s->tied ? 1 : 2, 0};
	double waste = 0, size = 0;
	for (int i = 0; i < 4; i++) {
		double bytes = mats[i] * 4;
		double per = n[i] * (i == 3 ? 1 : s->L + s->Ld);
		waste += per * segment_waste(bytes);
		size += per * bytes;
	}
	return size > 0 ? waste / size : 0;
}


/* ---- the estimate -------------------------------------------------------- */

static inline int64_t clamp64(double x)
{
#ifdef __SSE2__
	/* the same without branches (it runs some 60 times an estimate):
	 * maxsd(x, 0) is 0 for NaN and x <= 0, minsd caps at 1e18, and
	 * 1e18 + 0.5 rounds to 1e18 */
	__m128d v = _mm_max_sd(_mm_set_sd(x), _mm_setzero_pd());
	v = _mm_min_sd(v, _mm_set_sd(1.0e18));
	return (int64_t)(_mm_cvtsd_f64(v) + 0.5);
#else
	if (!(x > 0))
		return 0;
	if (x > 1.0e18) /* an exabyte: terms can be summed without overflow */
		return (int64_t)1.0e18;
	return (int64_t)(x + 0.5);
#endif
}

int64_t vf_estimate_default_context(const struct vf_gpu_spec *gpu)
{
	/* Measured on an H200 (hopper); other generations are assumed the same
	 * order: the context holds the CUDA runtime, cuBLAS/cuDNN kernels and
	 * PyTorch's modules, dominated by kernel images. */
	if (!gpu)
		return CONTEXT_HOPPER_BYTES;
	switch (gpu->generation[0]) {
	case 'b': /* blackwell: larger kernel images */
		return 600 * MIB;
	case 'a': /* ada, ampere */
		return 480 * MIB;
	case 'v': /* volta */
	case 't': /* turing */
		return 420 * MIB;
	default: /* hopper (measured) and unknown */
		return CONTEXT_HOPPER_BYTES;
	}
}

int64_t vf_estimate_gpu_bytes(const struct vf_gpu_spec *gpu)
{
	if (!gpu || gpu->memory_mib <= 0)
		return -1;
	return gpu->memory_mib * MIB;
}

double vf_estimate_paged_traffic_bytes(const struct vf_estimate *e, const struct vf_gpu_spec *gpu)
{
	if (!e || !gpu || gpu->memory_mib <= 0 || e->paged_bytes <= 0)
		return 0;
	double over = (double)e->peak_bytes - (double)vf_estimate_gpu_bytes(gpu);
	double states = (double)e->paged_bytes; /* in managed memory (mechanisms.c) */
	return over > 0 ? (over < states ? over : states) : 0;
}

bool vf_estimate_fits(const struct vf_estimate *e, const struct vf_gpu_spec *gpu, int64_t *headroom)
{
	int64_t vram = vf_estimate_gpu_bytes(gpu);
	/* a load transient that does not fit fails the run whatever the
	 * scope a report reads */
	int64_t need = e->run_peak_bytes > e->peak_bytes ? e->run_peak_bytes : e->peak_bytes;
	int64_t room = vram - need;
	if (room < 0 && room + e->evictable_bytes >= 0)
		room = 0; /* paged states evicted to the host as needed: the card full, no failure */
	if (headroom)
		*headroom = room;
	return vram > 0 && room >= 0 && !e->sim_oom;
}

static const char *const phase_names[] = {"forward",   "loss",       "backward",
					   "optimizer", "validation", "text-encoder", "loading"};
static const char *const term_names[] = {"weights",        "gradients",   "optimizer",
					  "optimizer_temp", "autocast_cache", "activations",
					  "logits",         "kv_cache",    "context",
					  "allocator"};

const char *vf_phase_name(enum vf_phase p)
{
	return (unsigned)p < VF_PHASE_COUNT ? phase_names[p] : "?";
}

const char *vf_estimate_phase_name(const struct vf_estimate *e, enum vf_phase p)
{
	return e->inference && p == VF_PHASE_LOSS ? "logits" : vf_phase_name(p);
}

const char *vf_term_name(enum vf_term t)
{
	return (unsigned)t < VF_TERM_COUNT ? term_names[t] : "?";
}

int64_t vf_estimate_term(const struct vf_estimate *e, enum vf_term t)
{
	switch (t) {
	case VF_TERM_WEIGHTS: return e->weights_bytes;
	case VF_TERM_GRADIENTS: return e->gradients_bytes;
	case VF_TERM_OPTIMIZER: return e->optimizer_bytes;
	case VF_TERM_OPTIMIZER_TEMP: return e->optimizer_temp_bytes;
	case VF_TERM_AUTOCAST_CACHE: return e->autocast_cache_bytes;
	case VF_TERM_ACTIVATIONS: return e->activations_bytes;
	case VF_TERM_LOGITS: return e->logits_bytes;
	case VF_TERM_KV_CACHE: return e->kv_cache_bytes;
	case VF_TERM_CONTEXT: return e->context_bytes;
	case VF_TERM_ALLOCATOR: return e->allocator_bytes;
	default: return 0;
	}
}


static double live_sum(const struct live *l)
{
	return l->w + l->g + l->o + l->ot + l->ac + l->act + l->lg + l->kv;
}

/* The loss of a stack other than HF's full upcast (the caller set that):
 *  chunked:k (torchtune CEWithChunkedOutputLoss): the logits kept whole in
 *    the compute dtype, each chunk upcast alone, every chunk's log_softmax
 *    output saved; backward one chunk at a time into a compute-dtype
 *    gradient of the logits;
 *  fused-linear: lm_head and cross-entropy per chunk of tokens (about
 *    V/h chunks), gradients computed in the forward: one chunk's logits,
 *    its fp32 copy and gradient, the hidden-state gradient, and the
 *    lm_head's fp32 gradient accumulator when it trains. */
static void loss_bytes(const struct shape *s, const struct vf_setup *su, const struct dt *d,
		       double Nout, double *fwd, double *bwd)
{
	double NV = Nout * s->V;
	if (!d->train || su->loss == VF_LOSS_FULL)
		return;
	if (su->loss == VF_LOSS_CHUNKED && su->compile) {
		/* torchtune compiles compute_cross_entropy (upcast + cross-entropy
		 * fused by inductor): each chunk keeps its compute-dtype logits and
		 * a logsumexp, the fp32 chunk exists only inside the kernel; the
		 * backward makes each chunk's gradient in the compute dtype */
		double k = su->loss_chunks > 0 ? su->loss_chunks : 8;
		*fwd = NV * d->C + 4 * NV / k;
		*bwd = NV * d->C + (4 + d->C) * NV / k;
		return;
	}
	if (su->loss == VF_LOSS_CHUNKED && su->loss_in_compute_dtype) {
		/* litgpt's chunked_cross_entropy (litgpt/utils.py, commit
		 * 03ffc551): F.cross_entropy on each compute-dtype chunk, no
		 * .float(): the logits and each chunk's log_softmax output kept
		 * (C bytes); the backward makes a chunk's log_softmax gradient and
		 * its input gradient, C bytes each */
		double k = su->loss_chunks > 0 ? su->loss_chunks : 8;
		*fwd = NV * 2 * d->C;
		*bwd = NV * 2 * d->C + 2 * d->C * NV / k;
		return;
	}
	if (su->loss == VF_LOSS_CHUNKED) {
		double k = su->loss_chunks > 0 ? su->loss_chunks : 8;
		*fwd = NV * (d->C + 4) + 4 * NV / k;
		*bwd = NV * (4 + d->C) + 8 * NV / k;
		return;
	}
	double chunks = ceil(s->V / s->h);
	double chunk = NV / (chunks > 1 ? chunks : 1);
	*fwd = *bwd = chunk * (d->C + 8) + Nout * s->h * d->C + (d->full ? s->V * s->h * 4 : 0);
}

/* Quantized bytes per parameter of the frozen base linear weights
 * (block scales included): bitsandbytes LLM.int8 (1 + fp32 scale per row),
 * NF4 with double quantisation (4.127 bits), int4 with fp16 scales per 128,
 * fp8 with per-tensor scales. */
static double quant_bytes(enum vf_quant q, double P)
{
	switch (q) {
	case VF_QUANT_INT8: return 1.0 + 4.0 / 4096;
	case VF_QUANT_INT4: return 0.5 + 2.0 / 128; /* also --quant gptq, awq (group 128) */
	case VF_QUANT_NF4: return 0.5 + 0.127 / 8;
	case VF_QUANT_FP8: return 1.0;
	default: return P;
	}
}

/* Optimizer state bytes per trainable parameter of dtype width pb. */
static double state_bytes(const struct vf_setup *su, const struct shape *s, double T, double pb,
			  bool lora)
{
	switch (su->optimizer) {
	case VF_OPT_ADAMW:
		return 2 * pb * T;                 /* exp_avg + exp_avg_sq, param dtype */
	case VF_OPT_ADAMW8BIT:
		/* bitsandbytes: 2 x uint8 + fp32 absmax per 256-element block;
		 * tensors under 4096 elements keep 32-bit states (LoRA
		 * adapters at small ranks are above that) */
		return T * (2.0 + 2.0 * 4 / 256);
	case VF_OPT_ADAFACTOR: {
		/* transformers Adafactor, beta1 None: factored second moment,
		 * row + column vectors per matrix (n + m per n x m), full
		 * exp_avg_sq for vectors (norms, biases) */
		if (lora)
			return pb * T * 0.1; /* adapters are r x n: rows + cols ~ (r+n)/(r*n) */
		double mats = s->linear + s->emb;
		double vecs = T - mats;
		if (vecs < 0)
			vecs = 0;
		double h = s->h;
		/* n + m per matrix ~ (in + out) / (in * out) of its elements */
		double ratio = (1.0 / h + 1.0 / (s->f > h ? s->f : h));
		return pb * (mats * ratio + vecs);
	}
	case VF_OPT_SGD:
		return pb * T;                     /* momentum buffer */
	case VF_OPT_LION:
		return pb * T;                     /* exp_avg */
	default:
		return 0;
	}
}

/* Each phase's live terms (vf_estimate.phase_bytes); called by
 * finish_terms once the context and the peak's reserve are known. */
static void record_phases(struct vf_estimate *e, const struct live ph[VF_PHASE_COUNT],
			  const double *sums)
{
	e->phases = 0;
	for (int i = 0; i < VF_PHASE_COUNT; i++) {
		const struct live *l = &ph[i];
		int64_t *t = e->phase_bytes[i];
		if ((sums ? sums[i] : live_sum(l)) <= 0)
			continue;
		e->phases |= 1u << i;
		t[VF_TERM_WEIGHTS] = clamp64(l->w);
		t[VF_TERM_GRADIENTS] = clamp64(l->g);
		t[VF_TERM_OPTIMIZER] = clamp64(l->o);
		t[VF_TERM_OPTIMIZER_TEMP] = clamp64(l->ot);
		t[VF_TERM_AUTOCAST_CACHE] = clamp64(l->ac);
		t[VF_TERM_ACTIVATIONS] = clamp64(l->act);
		t[VF_TERM_LOGITS] = clamp64(l->lg);
		t[VF_TERM_KV_CACHE] = clamp64(l->kv);
		t[VF_TERM_CONTEXT] = e->context_bytes;
		t[VF_TERM_ALLOCATOR] = i == (int)e->peak_phase ? e->allocator_bytes : 0;
	}
}

/* sums: each phase's live_sum when the caller has them (NULL: computed) */
static void finish_terms_sums(struct vf_estimate *e, const struct live ph[VF_PHASE_COUNT],
			      const double *sums, double reserved, enum vf_phase bi, bool phases)
{
	const struct live *pk = &ph[bi];
	enum vf_phase ph_peak = bi;
	e->weights_bytes = clamp64(pk->w);
	e->gradients_bytes = clamp64(pk->g);
	e->optimizer_bytes = clamp64(pk->o);
	e->optimizer_temp_bytes = clamp64(pk->ot);
	e->autocast_cache_bytes = clamp64(pk->ac);
	e->activations_bytes = clamp64(pk->act);
	e->logits_bytes = clamp64(pk->lg);
	e->kv_cache_bytes = clamp64(pk->kv);
	e->peak_allocated_bytes = e->weights_bytes + e->gradients_bytes + e->optimizer_bytes +
				  e->optimizer_temp_bytes + e->autocast_cache_bytes +
				  e->activations_bytes + e->logits_bytes + e->kv_cache_bytes;
	e->peak_reserved_bytes = clamp64(reserved);
	if (e->peak_reserved_bytes < e->peak_allocated_bytes)
		e->peak_reserved_bytes = e->peak_allocated_bytes;
	e->allocator_bytes = e->peak_reserved_bytes - e->peak_allocated_bytes;
	e->peak_bytes = e->context_bytes + e->peak_reserved_bytes;
	e->peak_phase = ph_peak;
	if (phases) /* else left 0: a search reads no phase (vf__estimate_ctx_hold) */
		record_phases(e, ph, sums);
	/* the largest term, the first of equals (vf_estimate_term's values,
	 * read once: this runs on every evaluation of a search) */
	const int64_t v[VF_TERM_KV_CACHE + 1] = {
		[VF_TERM_WEIGHTS] = e->weights_bytes,
		[VF_TERM_GRADIENTS] = e->gradients_bytes,
		[VF_TERM_OPTIMIZER] = e->optimizer_bytes,
		[VF_TERM_OPTIMIZER_TEMP] = e->optimizer_temp_bytes,
		[VF_TERM_AUTOCAST_CACHE] = e->autocast_cache_bytes,
		[VF_TERM_ACTIVATIONS] = e->activations_bytes,
		[VF_TERM_LOGITS] = e->logits_bytes,
		[VF_TERM_KV_CACHE] = e->kv_cache_bytes};
	enum vf_term best = VF_TERM_WEIGHTS;
	for (int t = VF_TERM_WEIGHTS; t <= VF_TERM_KV_CACHE; t++)
		if (v[t] > v[best])
			best = (enum vf_term)t;
	e->dominant = best;
}

static void finish_terms(struct vf_estimate *e, const struct live ph[VF_PHASE_COUNT], double reserved,
			 enum vf_phase bi)
{
	finish_terms_sums(e, ph, NULL, reserved, bi, true);
}


/* ---- step time, kernel by kernel (steptime.c) -------------------------- */

static inline __attribute__((always_inline)) void gemm_add(struct vf__layer_work *l, double m, double k,
							  double n, double count, bool wgrad, bool igrad)
{
	if (l->ngemm < VF__MAX_GEMMS && m > 0 && k > 0 && n > 0 && count > 0)
		l->gemm[l->ngemm++] = (struct vf__gemm){m, k, n, count, wgrad, igrad, false, false};
}

/* The memory-bound bytes a LoRA adapter moves per element of its linear's
 * input and output besides its two rank-r products (gemm_add reads and
 * writes their operands at 2 bytes), as peft's lora.Linear.forward runs it
 * (peft src/peft/tuners/lora/layer.py: result = base_layer(x); x cast to
 * the adapter weight's dtype; result = result + lora_B(lora_A(dropout(x)))
 * * scaling; result cast back to the base output's dtype) and torchtune's
 * and litgpt's LoRA linears (bf16 adapters, no cast). Forward: x, X bytes
 * wide (the residual stream's dtype), is cast to the adapter's A bytes
 * (peft: fp32, a copy per adapter); a dropout reads and writes it and
 * keeps a one-byte mask; under autocast lora_A casts the fp32 copy to bf16
 * (read 4, write 2), without it the fp32 operand is read at 4 bytes (by
 * the fp32 GEMM itself in a bf16 step: dt.lora_gemm32).
 * lora_B's output, Bo bytes (bf16 under autocast, else the adapter's), is
 * scaled (read, write) and added to the base output (Y bytes: promoted to
 * the wider Z), cast back to Y. Backward, by autograd's formulas: each
 * cast's grad cast back, the dropout's grad times its mask, the scale's
 * grad, the promoted add's grad cast to each input, and the adapter's dx
 * added into the base path's (read 2, write 1). Under autocast with fp32
 * adapters and no dropout: forward 12 bytes per input and 10 per output
 * element, backward 18 and 4. */
struct lora_bytes {
	double in, out, in_bwd, out_bwd;
};

static inline struct lora_bytes lora_bytes(const struct dt *d)
{
	double X = d->R, A = d->lora_fp32 ? 4 : 2;
	double Y = d->C, Bo = d->autocast ? 2 : A;
	double Z = Bo > Y ? Bo : Y;
	double cast_in = X != A ? X + A : 0, drop = d->lora_drop ? 2 * A + 1 : 0;
	double ac = d->autocast && A > 2 ? 6 : 0; /* autocast's cast of the fp32 copy */
	struct lora_bytes b;
	b.in = cast_in + drop + (d->autocast || d->lora_gemm32 ? ac : A - 2);
	b.out = (Bo - 2) + 2 * Bo + (Y + Bo + Z) + (Z != Y ? Z + Y : 0);
	b.in_bwd = cast_in + ac + drop + 3 * X;
	b.out_bwd = 2 * Bo + (Z != Y ? Z + Y : 0) + (Z != Bo ? Z + Bo : 0);
	return b;
}

/* A linear of in -> out features over m tokens; a LoRA adapter on it adds
 * its two rank-r products, three small kernels (dropout, scale, add) and
 * their memory-bound bytes (lora_bytes). */
static inline __attribute__((always_inline)) void linear_add(struct vf__layer_work *l, const struct dt *d,
							    double m, double in, double out, double count,
							    bool lora)
{
	int base = l->ngemm;
	gemm_add(l, m, in, out, count, d->full, d->train);
	if (l->ngemm > base)
		l->gemm[base].qbase = d->qbase;
	l->kernels += count * (d->autocast && d->P == 4 ? 2 : 1); /* + the weight's cast */
	l->dequant_kernels += d->qbase ? count : 0; /* one dequant kernel per quantized linear */
	l->saved_tensors += count * (d->full ? 2 : 1); /* mm: input for dW, weight for dX */
	if (lora) {
		int first = l->ngemm;
		gemm_add(l, m, in, d->rank, count, true, true);
		gemm_add(l, m, d->rank, out, count, true, true);
		for (int i = first; i < l->ngemm && d->lora_gemm32; i++)
			l->gemm[i].fp32 = true;
		l->kernels += count * 5;
		l->saved_tensors += count * 4; /* lora_A's and lora_B's inputs and weights */
		struct lora_bytes lb = lora_bytes(d);
		l->stream_bytes += count * m * (in * lb.in + out * lb.out);
		l->stream_bwd_bytes += count * m * (in * lb.in_bwd + out * lb.out_bwd);
	}
}

/* The feed-forward GEMMs of an average layer over m tokens (moe.c's
 * terms): a dense MLP of width f; or, in transformers' eager expert loop,
 * the router, each routed expert on about m x topk / experts tokens, the
 * shared experts and the dense layers (first_k_dense...) at their own
 * widths, weighted by the share of layers of each kind. Returns the
 * activation width a token passes through (for the elementwise kernels). */
static double mlp_work(const struct shape *s, const struct dt *d, double m, struct vf__layer_work *l)
{
	unsigned t = d->lt;
	const struct vf_moe_terms *mt = &s->mt;
	double h = s->h;
	double layers = mt->layers > 0 ? mt->layers : s->L;
	double moe = s->experts > 0 ? (mt->moe_layers > 0 ? mt->moe_layers / layers : 1) : 0;
	double dense = s->experts > 0 ? (mt->moe_layers > 0 ? mt->dense_layers / layers : 0) : 1;
	double fe = mt->expert_ffn > 0 ? mt->expert_ffn : s->f;
	double fd = mt->dense_ffn > 0 ? mt->dense_ffn : s->f;
	double width = 0;
	struct { double rows, f, count; } part[3] = {
		{m, fd, dense},                                           /* dense MLP */
		{s->experts > 0 ? m * s->topk / s->experts : 0, fe, moe * s->experts}, /* routed */
		{m, mt->shared_ffn, moe},                                 /* shared experts */
	};
	if (moe > 0) { /* the expert loop: tokens routed to each expert */
		linear_add(l, d, m, h, s->experts, moe, t & VF_LORA_ROUTER); /* router */
		l->experts = s->experts * moe;
		l->moe_share = moe; /* the loop's per-layer sync on this share of the layers */
		l->expert_fp32 = d->autocast && d->P == 4 ? 1 : 0; /* slices autocast cannot cache */
		l->expert_kernels = 10; /* where, index, 3 GEMMs, act, mul, routing weight, index_add */
		/* hidden_states[token_idx]'s backward (IndexBackward: index_put_
		 * into zeros_like(hidden_states)) writes an m x h gradient per
		 * expert, which autograd then adds into the others (read 2, write 1) */
		l->expert_bwd_bytes = m * h * d->C * 4;
		/* full fine-tuning: each expert's weights are a slice of the
		 * layer's fused gate_up_proj / down_proj parameters (transformers
		 * 5's experts: self.gate_up_proj[expert_idx] in F.linear), and the
		 * slice's backward (PyTorch aten/src/ATen/native/TensorShape.cpp
		 * select_backward_symint: at::zeros of the input's sizes, the
		 * slice copied in; index_backward likewise) writes a
		 * zero-filled gradient of the whole parameter, which
		 * autograd's input buffer adds into the others (read 2, write 1):
		 * per layer E zero-fills and E - 1 adds of all experts' weights,
		 * in the parameter's dtype */
		if (d->full) {
			double all = s->experts * h * fe * (s->gated ? 3 : 2); /* elements */
			double E = s->experts;
			l->expert_bwd_bytes += all * d->P * (4 * E - 3) / E;
		}
		width += moe * s->topk * fe;
	}
	width += dense * fd + moe * mt->shared_ffn;
	for (int k = 0; k < 3; k++) {
		double fm = part[k].rows, f = part[k].f, n = part[k].count;
		if (!(fm > 0 && f > 0 && n > 0))
			continue;
		if (s->gated && !s->fused_gate_up) {
			linear_add(l, d, fm, h, f, n, t & VF_LORA_GATE);
			linear_add(l, d, fm, h, f, n, t & VF_LORA_UP);
		} else {
			linear_add(l, d, fm, h, f * (s->gated ? 2 : 1), n, t & (VF_LORA_UP | VF_LORA_GATE));
		}
		linear_add(l, d, fm, f, h, n, t & VF_LORA_DOWN);
	}
	return width;
}

/* The tensors autograd saves per layer beyond its linears' (linear_add)
 * and its attention's (step_layers), by PyTorch's derivative formulas:
 * native layer_norm its input, mean, rstd, weight and bias; a Python
 * RMSNorm pow's input, rsqrt's output, the normalising product's two
 * factors and the weight product's (one when the weight is frozen);
 * rotary's cos and sin for q and k; silu's input and the gate product's
 * two factors; a native GELU's or ReLU's one; the Python GELU's pow input,
 * tanh output and last product's two factors; a dropout's mask. */
static double layer_saved(const struct shape *s, const struct dt *d)
{
	double norm = s->layer_norm ? 5 : d->full ? 6 : 5;
	double n = s->norms_per_layer * norm + (s->qk_norm ? 2 * norm : 0);
	n += s->rotary ? 4 : 0;
	n += (s->act == ACT_GELU_PY ? 4 : 1) + (s->gated ? 2 : 0);
	if (s->dropout > 0 && d->train) /* the two residual dropouts, T5's FF dropout */
		n += 2 + (s->fc == FC_T5 ? 1 : 0);
	return n;
}

/* One decoder (or encoder) layer's forward work over m tokens. */
static void layer_work(const struct shape *s, const struct dt *d, double m,
		       struct vf__layer_work *l)
{
	unsigned t = d->lt;
	double h = s->h, C = d->C, R = d->R;
	memset(l, 0, offsetof(struct vf__layer_work, gemm)); /* gemm[] filled up to ngemm */
	l->experts = l->expert_kernels = l->attn_flops = l->score_elems = l->score_passes = 0;
	l->elem_bytes = l->elem_bwd_bytes = l->kernels = l->dequant_bytes = l->dequant_kernels = 0;
	l->stream_bytes = l->stream_bwd_bytes = 0;
	l->expert_bwd_bytes = 0;
	l->moe_share = l->expert_fp32 = l->saved_tensors = 0;
	l->attn_seq = l->attn_head_dim = 0;
	l->attn_causal = false;
	if (s->fused_qkv) {
		linear_add(l, d, m, h, s->hq + 2 * s->hkv, 1, t & (VF_LORA_Q | VF_LORA_K | VF_LORA_V));
	} else {
		linear_add(l, d, m, h, s->hq, 1, t & VF_LORA_Q);
		linear_add(l, d, m, h, s->hkv, 1, t & VF_LORA_K);
		linear_add(l, d, m, h, s->hkv, 1, t & VF_LORA_V);
	}
	linear_add(l, d, m, s->hq, h, 1, t & VF_LORA_O);
	double act_width = mlp_work(s, d, m, l); /* MLP, or router + experts (+ shared, dense) */
	/* bitsandbytes' Linear4bit / Linear8bitLt on peft's fp32 residual
	 * stream (kbit_fp32_rest): each casts its input to the compute dtype
	 * and its output back to the input's dtype (bitsandbytes
	 * bitsandbytes/nn/modules.py Linear4bit.forward: x.to(compute_dtype),
	 * out.to(inp_dtype)); fms-acceleration's bnb plugin drops the fp32
	 * upcast because "the activations will then be constantly downcasted,
	 * resulting in greatly reduced throughput". q, k, v, gate and up each
	 * cast the fp32 normed input and return fp32; the activation and its
	 * product run on fp32 tensors, the down projection casts them and
	 * returns fp32; rotary runs on fp32 q and k, cast back for attention;
	 * o_proj takes and returns the attention's compute dtype. */
	double Cq = C, kcast = 0;
	if (d->qbase && R > C) {
		double qkv = s->fused_qkv ? h + s->hq + 2 * s->hkv : 3 * h + s->hq + 2 * s->hkv;
		double mlp = s->gated ? 3 * h + 3 * act_width : 2 * h + 2 * act_width;
		Cq = R;
		kcast = (R + C) * (qkv + mlp + s->hq + 2 * s->hkv);
	}
	/* memory-bound kernels, bytes read + written per token */
	double norm = s->layer_norm ? (R + 4) * h * 2 : 24 * h;  /* LayerNorm fused; RMSNorm in Python */
	double e = s->norms_per_layer * norm;
	l->stream_bytes += m * kcast; /* casts: streaming kernels; a cast's backward casts its grad back */
	l->stream_bwd_bytes += m * kcast;
	e += 6 * h * R;                                           /* two residual adds */
	if (s->rotary)
		e += 8 * (s->hq + s->hkv) * Cq;                   /* rotate_half, cat, mul, add */
	e += 4 * s->hq * C;                                       /* transposes made contiguous */
	/* the activation: native kernels read and write the f-wide tensors
	 * once; transformers' Python GELU (gelu_new) runs nine kernels, under
	 * autocast in fp32 (cast, pow, two scales, add, tanh, add one, half x,
	 * product: ~70 bytes per element) and the down projection casts back */
	double act = s->act == ACT_GELU_PY ? (d->autocast ? 76 : 18 * C) * act_width : (s->gated ? 5 : 2) * act_width * Cq;
	e += act;
	e += (s->dropout > 0 && d->train) ? 2 * (2 * R + 1) * h : 0; /* residual dropouts (training) */
	l->elem_bytes += m * e; /* after the LoRA adapters' (linear_add) */
	/* the backward twice the forward, but the Python GELU's by autograd's
	 * formulas (derivatives.yaml), per element: the cast back's grad
	 * (6), the last product's two grads (12 + 6 cast to bf16, 10), the
	 * half's (4), tanh_backward (12), the scale's (8), the add's grad cast
	 * to bf16 (6), the 0.044715 scale's (8), pow_backward's pow, scale and
	 * product (28), the fp32 cast's grad cast back (6) and x's three
	 * grads summed (12): 118 bytes under autocast; in fp32 no casts:
	 * 12 + 12 + 8 + 12 + 8 + 8 + 28 + 24 = 112 */
	l->elem_bwd_bytes += s->act == ACT_GELU_PY ? m * (2 * (e - act) + (d->autocast ? 118 : 28 * C) * act_width)
						    : 2 * m * e;
	l->kernels += s->norms_per_layer * (s->layer_norm ? 2 : 8) + (s->rotary ? 10 : 0) + 4 + 2 +
		      (s->act == ACT_GELU_PY ? 10 : s->gated ? 2 : 1) + ((s->dropout > 0 && d->train) ? 4 : 0) +
		      (s->qk_norm ? 16 : 0);
	l->saved_tensors += layer_saved(s, d);
	/* torch.compile's fusion of these chains: steptime.c (w.compile) */
}

/* What a training step moves besides its kernels' work (train_time). */
struct step_extra {
	double grad_bytes;    /* gradients of one step (fp16 GradScaler passes) */
	double offload_bytes; /* activation offload: copied out and back per micro-batch */
	double paged_bytes;   /* paged optimizer: states beyond the card */
	double cpu_fwd_bytes, cpu_bwd_bytes, cpu_after_bytes; /* CPU offload over PCIe */
	double host_opt_bytes; /* CPU offload: the host optimizer step's memory traffic */
	double opt_elems;     /* elements the GPU's optimizer step updates (0: it steps none) */
};

/* The dense rate of the step's compute dtype on the GPU, TFLOP/s. */
static double step_rate(const struct vf_setup *su, const struct vf_gpu_spec *gpu,
			struct vf_estimate *e, int *cuda_core, bool *tf32)
{
	*tf32 = false;
	double rate = gpu ? gpu->bf16_tflops : 989.5; /* H200 datasheet when no GPU */
	*cuda_core = 0;
	if (gpu && !(rate > 0) && su->precision == VF_PREC_FP16 && gpu->fp16_tflops > 0)
		rate = gpu->fp16_tflops; /* fp16 autocast on fp16 tensor cores (V100, T4) */
	else if (gpu && !(rate > 0) && su->precision != VF_PREC_FP32 && gpu->fp32_tflops > 0 &&
		 gpu->fp16_tflops > 0) {
		/* bf16 without bf16 tensor cores (V100, T4): PyTorch emulates it,
		 * cuBLAS runs bf16 GEMMs on the CUDA cores */
		rate = gpu->fp32_tflops;
		*cuda_core = 2;
		e->assumed |= VF_ASSUME_BF16_EMULATED;
	}
	if (su->precision == VF_PREC_FP32 && su->tf32 && (!gpu || gpu->bf16_tflops > 0)) {
		/* TF32 on (--tf32, a stack that sets float32_matmul_precision
		 * "high"): cuBLAS runs fp32 GEMMs on the tensor cores at the
		 * TF32 rate, at the generation's tensor-core share; GPUs
		 * without bf16 tensor cores (Volta, Turing) have no TF32 */
		*tf32 = true;
		return rate * vf__steptime_tf32_rate();
	}
	if (su->precision == VF_PREC_FP32 && su->tf32 && gpu)
		e->assumed |= VF_ASSUME_NO_TF32; /* no bf16 tensor cores: no TF32 either */
	if (su->precision == VF_PREC_FP32) {
		/* IEEE fp32 GEMMs on the CUDA cores on every generation: PyTorch's
		 * default float32 matmul precision is "highest"
		 * (torch.backends.cuda.matmul.allow_tf32 False since 1.12), so
		 * cuBLAS runs SGEMM, not TF32 (steptime.json fp32_matmul) */
		rate = gpu && gpu->fp32_tflops > 0 ? gpu->fp32_tflops : 66.9; /* H200 datasheet */
		*cuda_core = 1;
	}
	return rate;
}

/* The step's layer kinds (w->kind[], w->nkinds): their GEMMs, attention,
 * elementwise traffic, kernels and dequantization, over b x sq tokens
 * (T5's decoder over b x tq). Reads the shape, the dtypes, su's attention
 * and quantization, and w->attn. */
static void step_layers(const struct shape *s, const struct vf_setup *su, const struct dt *d,
			double b, double sq, double tq, struct vf__step_work *w)
{
	double N = b * sq;
	bool eager = w->attn == VF__ATTN_EAGER;
	struct vf__layer_work *enc = &w->kind[0];
	layer_work(s, d, N, enc);
	enc->count = s->L;
	enc->attn_flops = 4 * b * sq * sq * s->hq * (eager || s->fc == FC_T5 ? 1.0 : 0.5);
	enc->score_elems = eager ? b * s->heads * sq * sq : 0;
	enc->attn_seq = sq; /* the flash share's length, head dim and mask (steptime.c) */
	enc->attn_head_dim = s->heads > 0 ? s->hq / s->heads : 0;
	enc->attn_causal = !(eager || s->fc == FC_T5);
	if (s->ssm.layers > 0) { /* scores on the attention layers only: the scan is linear */
		enc->attn_flops *= s->ssm.attn_layers / s->ssm.L;
		enc->score_elems *= s->ssm.attn_layers / s->ssm.L;
	}
	enc->score_passes = 3 + (s->fc == FC_T5 ? 2 : 0) + ((s->dropout > 0 && d->train) ? 2 : 0);
	enc->kernels += eager ? 3 + (s->fc == FC_T5 ? 1 : 0) + ((s->dropout > 0 && d->train) ? 2 : 0) : 0;
	/* saved by attention: eager QK^T's and PV's operands, softmax's output
	 * (+ the probabilities' dropout mask); SDPA q, k, v, its output, the
	 * logsumexp and the dropout's seed and offset */
	double attn_saved = eager ? 5 + ((s->dropout > 0 && d->train) ? 1 : 0) : 7;
	enc->saved_tensors += attn_saved;
	w->nkinds = 1;
	if (s->fc == FC_T5) {
		/* decoder: self-attention, cross-attention over the encoder
		 * tokens (q/o on the target, k/v on the source), FF */
		double Nt = b * tq;
		struct vf__layer_work *dec = &w->kind[1];
		layer_work(s, d, Nt, dec);
		linear_add(dec, d, Nt, s->h, s->hq, 1, d->lt & VF_LORA_Q);
		linear_add(dec, d, N, s->h, s->hkv, 2, d->lt & (VF_LORA_K | VF_LORA_V));
		linear_add(dec, d, Nt, s->hq, s->h, 1, d->lt & VF_LORA_O);
		dec->count = s->Ld;
		dec->attn_flops = 4 * b * tq * (tq + sq) * s->hq;
		dec->score_elems = b * s->heads * tq * (tq + sq);
		dec->attn_seq = tq; /* self- and cross-attention's FLOPs counted unmasked */
		dec->attn_head_dim = enc->attn_head_dim;
		dec->score_passes = enc->score_passes;
		dec->kernels += 2 * (3 + 1 + ((s->dropout > 0 && d->train) ? 2 : 0));
		/* self- and cross-attention, the cross block's norm and dropout */
		dec->saved_tensors += 2 * attn_saved + (s->layer_norm ? 5 : d->full ? 6 : 5) +
				      ((s->dropout > 0 && d->train) ? 1 : 0);
		dec->elem_bytes *= 1.5;
		dec->elem_bwd_bytes *= 1.5;
		dec->stream_bytes *= 1.5;
		dec->stream_bwd_bytes *= 1.5;
		dec->kernels *= 1.5;
		w->nkinds = 2;
	}
	for (int i = 0; i < w->nkinds; i++) /* packed weight + scales read, bf16 written */
		w->kind[i].dequant_bytes = d->qbase ? s->layer_linear * (quant_bytes(su->quant, 2) + 2) : 0;
}

/* ---- the LLM estimate, one term group at a time ------------------------- */

/* One estimate's setup and terms, filled group by group in the order of
 * estimate_llm, each group reading only the earlier ones (bytes unless
 * said). */
struct llm {
	const struct vf_setup *su;
	struct vf_estimate_ctx *cx; /* NULL, or the caller's context (step_time's memo) */
	const struct shape *s; /* the model's (shape_of), or a task head's copy of it */
	struct dt d;
	double b, sq, tq;     /* micro-batch, tokens per sample, decoder length (T5) */
	double N, Nout;       /* tokens per micro-batch, tokens with logits */
	double ngpu;
	double P, T, lora;    /* parameters (counts): all, trainable, LoRA adapters */
	double qb, ab;        /* bytes per base linear weight, per adapter weight */
	double W;             /* weights */
	double gb, G;         /* bytes per gradient element; gradients */
	double S, OT;         /* optimizer states, optimizer-step temporaries */
	double shard_w, shard_g, shard_o; /* ways the weights, gradients, states are split */
	double ddp_buckets;   /* DDP's flat gradient buckets */
	double AC;            /* autocast copies */
	double head_copy;     /* of which the fp32 lm_head's, live from its call to its
	                       * backward (kbit_head_copy), not per layer */
	double A_layer;       /* one layer, all its saved tensors */
	double A_all;         /* every layer's */
	double scores;        /* eager attention's s^2 tensors per layer */
	double ckpt_in;       /* a checkpointed layer's input */
	double emb_out, final_norm, dequant;
	double bwd_transient; /* a layer's backward transient, in place of dequant when larger
	                       * (AWQ's repeated weight, MoE experts' zero-filled gradient) */
	double layers;        /* layers with activations (T5: encoder + decoder) */
	double logits_fwd, logits_bwd;
	double head_dq;       /* the quantized lm_head dequantized for one call (kbit_head) */
	double held_prev;     /* the previous step's tensors held through the forward (graph_held) */
	double W_whole;       /* weights before sharding */
	double S_paged;       /* optimizer states in CUDA managed memory (mechanisms.h) */
	bool fsdp_mp;         /* FSDP2 mixed precision: bf16 gathered over fp32 shards */
	double fsdp_root;     /* FSDP: the root unit (embedding, final norm, head) gathered
	                       * from the forward's start to the backward's end (fsdp_units) */
	double fsdp_grad;     /* FSDP/ZeRO-3: one unit's unsharded gradient in the backward */
	double fsdp_unit;     /* FSDP/ZeRO-3: one layer gathered (W counts two) */
	double fsdp_head_grad, fsdp_root_grad; /* FSDP: the head's and the root's whole
	                                        * gradients (full fine-tuning) */
	double fsdp_unmade;   /* FSDP/ZeRO-3: shards of G not yet made at the first layer's
	                       * backward (its own and the root's) */
	double fsdp_nosync;   /* FSDP under no_sync accumulation: every trainable unit's
	                       * whole gradient, held in place of the shards (fsdp_no_sync) */
	double fsdp_nosync_layer; /* the part of it one layer unit holds */
	double host, pcie;    /* CPU offload: host bytes, bytes over PCIe per step */
	double pcie_fwd, pcie_bwd, pcie_after; /* of pcie: beside each micro-batch's forward,
	                                        * its backward, after the host's step */
	double mts;           /* modules_to_save: elements of the trainable copies */
	double tok_layer, tok_attn; /* one layer's saved bytes per token, of them its
	                             * attention block's (layer_tokens) */
	/* last: not zeroed, not kept by the context (read only where s points
	 * to it, and llm_setup fills it then) */
	struct shape s_own;   /* the model's with the stack's native GELU (llm_setup) */
};

/* ---- the search context (vf_estimate_ctx) ------------------------------ */

/* What the layer kinds' times read besides the model and the GPU (the
 * context's own): step_layers' and vf__steptime_kinds' inputs. Built
 * field by field on a zeroed key, so equal inputs are equal bytes. */
struct layer_key {
	double b, sq, tq, rate;
	double P, R, C, nlora, rank;
	unsigned lt;
	int attention, quant, attn, act;
	bool train, full, autocast, compile, qbase, lora_fp32, lora_drop, tf32_fp32, pad[4];
};

struct layer_entry {
	struct layer_key key;
	int nkinds;
	double count[2], attn_flops;
	struct vf__kind_times k[2];
};

/* A slot of the memo's index: entry `at` of the dense table, valid when
 * the context's generation. The entries themselves fill the table in the
 * order they come, so the pages an estimate touches are those of the
 * entries it makes, not of every slot its keys hash to (a table of the
 * entries, 448 bytes each, in hashed slots: calloc zeroed its pages and
 * each growth copied the entries across the new one's, 173 of a wide fit
 * search's 601 page faults, issue 21). */
struct memo_ix {
	unsigned gen;
	uint32_t at;
};

/* index slots: the index starts small (a default search meets a few dozen
 * keys) and grows by 4 up to the most (a wide search meets about 800); the
 * dense table has room for 3/4 of them (the most the index holds) */
#define LAYER_MEMO_MIN 64
#define LAYER_MEMO_MAX 4096

#define PREFIX_SLOTS 8 /* a power of 2 */
#define CTX_LINKS 65  /* GPU counts whose links a context keeps: 1 to 64 */

struct prefix_entry {
	unsigned gen; /* valid when the context's generation */
	struct vf_setup key;
	struct llm m;
	int64_t params, trainable;
};

struct vf_estimate_ctx {
	const struct vf_arch *held_arch; /* vf__estimate_ctx_hold: these two, unchanged, */
	const struct vf_gpu_spec *held_gpu; /* need no comparison of their bytes */
	bool held;
	bool fixed;           /* ix, tab are not the context's own (vf_estimate_run's, run_ctx):
	                       * never grown nor freed; emptied when full */
	bool no_phases;       /* held for a search: phase_bytes and phases left 0 */
	bool has_arch;
	struct vf_arch arch; /* the model the shape is of (its bytes) */
	struct shape s;
	bool has_gpu, gpu_null;
	struct vf_gpu_spec gpu; /* the GPU the layer memo is for (its bytes) */
	struct vf__gpu_class cls; /* that GPU's class (steptime.c) */
	unsigned hw_gen;      /* hw valid when the memo's generation */
	double hw_rate;       /* the compute rate hw is for, TFLOP/s */
	int hw_core;          /* and its GEMMs' cores (w->cuda_core: V100's fp32 and
	                       * emulated bf16 share a rate, not a share; + 4 with TF32) */
	struct vf__steptime_hw hw; /* the GPU's rates at hw_rate (steptime.c) */
	struct { /* the GPU's link for 1 to CTX_LINKS - 1 GPUs (nccl.c) */
		unsigned gen; /* valid when the memo's generation */
		struct vf__link l;
	} link[CTX_LINKS];
	unsigned gen;         /* the layer memo's generation: a new model or GPU empties it */
	size_t used, cap;        /* valid entries; index slots (a power of 2; 0: none yet) */
	struct memo_ix *ix;      /* the index, allocated at the first use */
	struct layer_entry *tab; /* the entries, dense: tab[0 .. used) */
	size_t pend;             /* the index slot of the entry memo_slot handed out */
	/* recent setups' terms that do not depend on the micro-batch,
	 * sequence, accumulation or checkpointing (estimate_llm's
	 * count_parameters to layer_tokens), compared by prefix_same;
	 * one slot per prefix_slot */
	struct prefix_entry pre[PREFIX_SLOTS];
};

/* The slot of a setup's prefix terms: a few of the knobs sweeps vary
 * between the prefixes, so that a sweep over them keeps each one's. */
static unsigned prefix_slot(const struct vf_setup *su)
{
	return ((unsigned)su->mode + 3u * (unsigned)su->optimizer + 7u * (unsigned)su->quant +
		11u * (unsigned)su->precision + 13u * (unsigned)su->shard + (unsigned)su->gpus) &
	       (PREFIX_SLOTS - 1);
}

/* The knobs the prefix terms do not read: batch to grad_ckpt, and
 * micro_batches (vf_setup holds no pointers: equal bytes, equal setups). */
#define PREFIX_SKIP0 offsetof(struct vf_setup, batch)
#define PREFIX_SKIP1 (offsetof(struct vf_setup, grad_ckpt) + sizeof(bool))
#define PREFIX_SKIP2 offsetof(struct vf_setup, micro_batches)
#define PREFIX_SKIP3 (PREFIX_SKIP2 + sizeof(int32_t))
_Static_assert(offsetof(struct vf_setup, seq) > PREFIX_SKIP0 &&
		       offsetof(struct vf_setup, target_seq) > PREFIX_SKIP0 &&
		       offsetof(struct vf_setup, grad_accum) > PREFIX_SKIP0 &&
		       offsetof(struct vf_setup, seq) < PREFIX_SKIP1 &&
		       offsetof(struct vf_setup, target_seq) < PREFIX_SKIP1 &&
		       offsetof(struct vf_setup, grad_accum) < PREFIX_SKIP1 && PREFIX_SKIP1 <= PREFIX_SKIP2,
	       "the knobs prefix_same skips lie in its two gaps");

/* Setups equal but for the knobs the prefix terms do not read (compared
 * in place: no key copied per estimate). */
static bool prefix_same(const struct vf_setup *a, const struct vf_setup *b)
{
	const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
	return memcmp(x, y, PREFIX_SKIP0) == 0 &&
	       memcmp(x + PREFIX_SKIP1, y + PREFIX_SKIP1, PREFIX_SKIP2 - PREFIX_SKIP1) == 0 &&
	       memcmp(x + PREFIX_SKIP3, y + PREFIX_SKIP3, sizeof *a - PREFIX_SKIP3) == 0;
}

struct vf_estimate_ctx *vf_estimate_ctx_new(void)
{
	struct vf_estimate_ctx *c = calloc(1, sizeof *c);
	if (c)
		c->gen = 1;
	return c;
}

void vf_estimate_ctx_free(struct vf_estimate_ctx *c)
{
	if (!c)
		return;
	free(c->ix);
	free(c->tab);
	free(c);
}

/* The context's shape of arch (computed again when its bytes differ from
 * the last ones), the layer memo emptied when the model or the GPU
 * changes. Borrowed: valid until the context's next use. */
static const struct shape *ctx_bind(struct vf_estimate_ctx *c, const struct vf_arch *a,
				    const struct vf_gpu_spec *gpu)
{
	if (c->held && a == c->held_arch && gpu == c->held_gpu)
		return &c->s;
	bool flush = false;
	if (!(c->has_arch && memcmp(&c->arch, a, sizeof *a) == 0)) {
		shape_from_arch(a, &c->s);
		memcpy(&c->arch, a, sizeof *a);
		c->has_arch = true;
		flush = true;
	}
	if (!c->has_gpu || c->gpu_null != !gpu || (gpu && memcmp(&c->gpu, gpu, sizeof *gpu) != 0)) {
		c->gpu_null = !gpu;
		if (gpu)
			memcpy(&c->gpu, gpu, sizeof *gpu);
		vf__steptime_class(gpu, &c->cls);
		c->has_gpu = true;
		flush = true;
	}
	if (flush) {
		c->used = 0;
		if (++c->gen == 0) { /* wrapped: no old entry may look current */
			c->gen = 1;
			c->hw_gen = 0;
			for (int i = 0; i < CTX_LINKS; i++)
				c->link[i].gen = 0;
			if (c->ix)
				memset(c->ix, 0, c->cap * sizeof *c->ix);
		}
	}
	return &c->s;
}

void vf__estimate_ctx_hold(struct vf_estimate_ctx *c, const struct vf_arch *arch,
			   const struct vf_gpu_spec *gpu, bool no_phases)
{
	if (!c)
		return;
	c->no_phases = no_phases;
	c->held = false;
	ctx_bind(c, arch, gpu);
	c->held_arch = arch;
	c->held_gpu = gpu;
	c->held = true;
}

static size_t key_hash(const struct layer_key *k)
{
	uint64_t w[sizeof *k / 8], h = 0x9e3779b97f4a7c15ull;
	memcpy(w, k, sizeof w);
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
		h ^= w[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (size_t)h;
}

/* An index 4 times larger (LAYER_MEMO_MIN at first) with the valid
 * entries in it, and the dense table grown to match; false without memory
 * (the old index stays). */
static bool memo_grow(struct vf_estimate_ctx *c)
{
	if (c->fixed)
		return false;
	size_t cap = c->cap ? c->cap * 4 : LAYER_MEMO_MIN;
	struct layer_entry *tab = realloc(c->tab, cap / 4 * 3 * sizeof *tab);
	if (!tab)
		return false;
	c->tab = tab;
	struct memo_ix *ix = calloc(cap, sizeof *ix);
	if (!ix)
		return false;
	for (size_t e = 0; e < c->used; e++) {
		size_t j = key_hash(&tab[e].key) & (cap - 1);
		while (ix[j].gen == c->gen)
			j = (j + 1) & (cap - 1);
		ix[j] = (struct memo_ix){c->gen, (uint32_t)e};
	}
	free(c->ix);
	c->ix = ix;
	c->cap = cap;
	return true;
}

/* The entry of key k: found (*hit), or the next free entry to fill (its
 * index slot kept in c->pend; memo_commit adds it; NULL when the memo is
 * full or cannot grow). Linear probing, at most 3/4 full. */
static struct layer_entry *memo_slot(struct vf_estimate_ctx *c, const struct layer_key *k,
				     bool *hit)
{
	*hit = false;
	if (!c->ix && !memo_grow(c))
		return NULL;
	size_t mask = c->cap - 1;
	for (size_t i = key_hash(k) & mask, n = 0; n < c->cap; i = (i + 1) & mask, n++) {
		const struct memo_ix *x = &c->ix[i];
		if (x->gen != c->gen) {
			c->pend = i;
			if (c->used + 1 <= c->cap / 4 * 3)
				return &c->tab[c->used];
			if (c->fixed) { /* full: emptied (slot i, zeroed, is free) */
				memset(c->ix, 0, c->cap * sizeof *c->ix);
				c->used = 0;
				return &c->tab[0];
			}
			if (c->cap >= LAYER_MEMO_MAX || !memo_grow(c))
				return NULL;
			return memo_slot(c, k, hit); /* in the larger index */
		}
		struct layer_entry *e = &c->tab[x->at];
		if (memcmp(&e->key, k, sizeof *k) == 0) {
			*hit = true;
			return e;
		}
	}
	return NULL;
}

/* The entry memo_slot handed out, filled: in the memo. */
static void memo_commit(struct vf_estimate_ctx *c)
{
	c->ix[c->pend] = (struct memo_ix){c->gen, (uint32_t)c->used};
	c->used++;
}

_Static_assert(sizeof(struct layer_key) % 8 == 0, "layer_key hashed as 64-bit words");

/* The context's GPU's rates at the step's compute rate: derived when the
 * rate differs from the last one's (of the same GPU). */
static const struct vf__steptime_hw *ctx_hw(struct vf_estimate_ctx *c, const struct vf__step_work *w,
					    const struct vf_gpu_spec *gpu)
{
	if (!(c->hw_gen == c->gen && memcmp(&c->hw_rate, &w->rate_tflops, sizeof c->hw_rate) == 0 &&
	      c->hw_core == w->cuda_core + (w->tf32 ? 4 : 0) + (w->tf32_fp32 ? 8 : 0))) {
		vf__steptime_hw(w, gpu, &c->cls, &c->hw);
		c->hw_rate = w->rate_tflops;
		c->hw_core = w->cuda_core + (w->tf32 ? 4 : 0) + (w->tf32_fp32 ? 8 : 0);
		c->hw_gen = c->gen;
	}
	return &c->hw;
}

/* The step timed (steptime.c): from the kinds' times in the context's
 * memo (hit), into its slot, or without a memo; with a context at its
 * GPU's kept rates. */
static void step_timed(struct vf_estimate_ctx *cx, struct layer_entry *slot, bool hit,
		       const struct vf__step_work *w, const struct vf_gpu_spec *gpu,
		       struct vf__steptime_out *o)
{
	if (!cx) {
		vf__steptime(w, gpu, o);
		return;
	}
	const struct vf__steptime_hw *hw = ctx_hw(cx, w, gpu);
	if (hit) {
		vf__steptime_with(w, gpu, hw, slot->k, o);
		return;
	}
	struct vf__kind_times own[2]; /* no slot: the memo full or without memory */
	vf__steptime_kinds(w, gpu, hw, slot ? slot->k : own, o);
	if (!slot)
		return;
	memo_commit(cx);
	slot->nkinds = w->nkinds;
	for (int i = 0; i < w->nkinds; i++)
		slot->count[i] = w->kind[i].count;
	slot->attn_flops = w->kind[0].attn_flops;
}

/* The step's checkpointing: which layers' forward runs again (every:N:
 * a share; op-level SAC: a share of the GEMMs) and which variant. */
static void step_recompute(const struct shape *s, const struct vf_setup *su, const struct dt *d,
			   struct vf__step_work *w)
{
	w->ckpt = su->grad_ckpt && d->train;
	w->ckpt_reentrant = su->ckpt_reentrant;
	if (w->ckpt && su->ckpt_every > 1 && s->L >= 1) { /* every:N: blocks N, 2N, ... (torchtitan apply_ac) */
		w->recompute = floor(s->L / su->ckpt_every) / s->L;
	} else if (w->ckpt && su->ckpt_selective_op && s->gated && !s->fused_qkv && !s->fused_gate_up &&
		   s->experts == 0) {
		/* op-level SAC (torchtitan _custom_policy): every second mm of a block
		 * recomputed, in Llama's order wk, wo, w3 (mechanisms.c saves the
		 * others); attention saved, the elementwise ops recomputed */
		double all = 2 * s->h * s->hq + 2 * s->h * s->hkv + 3 * s->h * s->f;
		w->recompute = (s->h * s->hkv + s->hq * s->h + s->h * s->f) / all;
		w->recompute_op = true;
	}
}

/* The layer kinds' work: from the context's memo (its slot, *hit), or
 * described by step_layers (and the memo's slot keyed for it). */
static struct layer_entry *step_kinds(struct vf_estimate_ctx *cx, const struct shape *s,
				      const struct vf_setup *su, const struct dt *d, double b, double sq,
				      double tq, struct vf__step_work *w, bool *hit)
{
	struct layer_entry *slot = NULL;
	*hit = false;
	if (cx) {
		struct layer_key k;
		memset(&k, 0, sizeof k);
		k.b = b, k.sq = sq, k.tq = tq, k.rate = w->rate_tflops;
		k.P = d->P, k.R = d->R, k.C = d->C, k.nlora = d->nlora, k.rank = d->rank;
		k.lt = d->lt;
		k.attention = (int)su->attention, k.quant = (int)su->quant, k.attn = (int)w->attn;
		k.train = d->train, k.full = d->full, k.autocast = d->autocast;
		k.compile = su->compile, k.qbase = d->qbase;
		k.lora_fp32 = d->lora_fp32, k.lora_drop = d->lora_drop, k.tf32_fp32 = w->tf32_fp32;
		k.act = (int)s->act;
		slot = memo_slot(cx, &k, hit);
		if (slot && !*hit)
			slot->key = k;
	}
	if (*hit) {
		w->nkinds = slot->nkinds;
		for (int i = 0; i < w->nkinds; i++)
			w->kind[i].count = slot->count[i];
		w->kind[0].attn_flops = slot->attn_flops;
	} else {
		step_layers(s, su, d, b, sq, tq, w);
	}
	return slot;
}

/* The work around the layers: the head and loss over Nout tokens, the
 * optimizer step's traffic and tensors, and the step's extra transfers. */
static void step_around(const struct shape *s, const struct vf_setup *su, const struct dt *d,
			double Nout, double opt_traffic, const struct step_extra *x,
			struct vf__step_work *w)
{
	w->head = (struct vf__gemm){Nout, s->h, s->V, 1, d->full, true, false, false};
	w->loss_bytes = d->train ? Nout * s->V * (3 * d->C + 36) : Nout * s->V * d->C;
	w->opt_bytes = opt_traffic;
	/* full: each layer's matrices and 1-D tensors (norms, biases), the
	 * embeddings, head and final norm (its bias under LayerNorm) */
	double matrices = (s->fused_qkv ? 2 : 4) + (s->gated && !s->fused_gate_up ? 3 : 2);
	double final_norm = s->layer_norm ? 2 : 1;
	w->opt_vectors = su->mode == VF_MODE_LORA ? 0 : s->layer_vectors * (s->L + s->Ld) + final_norm;
	w->opt_tensors = su->mode == VF_MODE_LORA ? 2 * popcount(d->lt) * (s->L + s->Ld)
						  : matrices * (s->L + s->Ld) + 2 + w->opt_vectors;
	w->opt = d->train && x && x->opt_elems > 0 ? (int)su->optimizer : VF_OPT_NONE;
	w->opt_impl = (int)su->optimizer_impl;
	w->grad_scaler = d->train && su->precision == VF_PREC_FP16;
	w->grad_clip = d->train ? (int)su->grad_clip : VF_CLIP_NONE;
	if (x) {
		w->grad_bytes = x->grad_bytes;
		w->offload_bytes = x->offload_bytes;
		w->paged_bytes = x->paged_bytes;
		w->cpu_fwd_bytes = x->cpu_fwd_bytes;
		w->cpu_bwd_bytes = x->cpu_bwd_bytes;
		w->cpu_after_bytes = x->cpu_after_bytes;
		w->host_opt_bytes = x->host_opt_bytes;
		w->opt_elems = x->opt_elems;
	}
}

/* Step time: the step's work described kernel by kernel (steptime.c);
 * data-parallel communication is added by train_time (runcost.c, nccl.c).
 * With a context (cx, may be NULL) the layer kinds' times of equal inputs
 * are computed once: the same doubles from the same operations. */
static void step_time(struct vf_estimate_ctx *cx, const struct shape *s, const struct vf_setup *su,
		      const struct dt *d, const struct vf_gpu_spec *gpu, double T,
		      double opt_traffic, const struct step_extra *x, struct vf_estimate *e)
{
	double b = (double)su->batch, sq = (double)su->seq;
	double tq = su->target_seq > 0 ? (double)su->target_seq : sq;
	double N = b * sq;
	struct vf__step_work w;
	memset(&w, 0, offsetof(struct vf__step_work, kind)); /* the layer kinds: step_layers */
	memset(&w.head, 0, sizeof w - offsetof(struct vf__step_work, head));
	w.train = d->train;
	step_recompute(s, su, d, &w);
	w.micro = (double)su->grad_accum;
	w.attn = su->attention == VF_ATTN_EAGER || s->eager_attn ? VF__ATTN_EAGER : VF__ATTN_FLASH;
	double rate = step_rate(su, gpu, e, &w.cuda_core, &w.tf32);
	w.rate_tflops = rate;
	w.tf32_fp32 = su->tf32; /* a 16-bit step's fp32 GEMMs (peft's adapters without autocast) */
	static const enum vf__dequant dq[VF_QUANT_COUNT] = {
		[VF_QUANT_NF4] = VF__DQ_NF4, [VF_QUANT_INT4] = VF__DQ_NF4,
		[VF_QUANT_INT8] = VF__DQ_INT8, [VF_QUANT_FP8] = VF__DQ_FP8};
	w.dequant = dq[su->quant];
	w.compile = su->compile;
	bool hit;
	struct layer_entry *slot = step_kinds(cx, s, su, d, b, sq, tq, &w, &hit);
	const struct vf__layer_work *enc = &w.kind[0];
	double Nout = s->fc == FC_T5 ? b * tq : N;
	step_around(s, su, d, Nout, opt_traffic, x, &w);
	struct vf__steptime_out o;
	step_timed(cx, slot, hit, &w, gpu, &o);
	e->parts = o.parts;
	if (vf_estimate_constants_fallback())
		e->assumed |= VF_ASSUME_CONSTANTS_BUILTIN;
	if (!(o.seconds > 0)) {
		e->assumed |= VF_ASSUME_GPU_RATE_UNKNOWN;
		e->step_seconds = e->tokens_per_second = e->mfu = e->utilisation = -1;
		e->optimizer_seconds = -1;
		return;
	}
	/* model FLOPs (no recompute): forward x (3 full | 2 frozen) + adapters */
	double fwd = 2 * N * s->active_linear + 2 * Nout * s->V * s->h + enc->attn_flops * s->L;
	double model_flops = (!d->train ? fwd : d->full ? 3 * fwd : 2 * fwd + 6 * N * T) * w.micro;
	e->flops_per_step = model_flops + (w.ckpt ? fwd * w.micro * (w.recompute > 0 ? w.recompute : 1) : 0);
	double t = o.seconds;
	e->utilisation = o.utilisation;
	e->optimizer_seconds = o.opt_s;
	e->step_seconds = t;
	e->tokens_per_second = b * sq * w.micro * su->gpus / t;
	e->mfu = model_flops / (t * rate * 1e12);
}

/* The context's GPU's link for n GPUs (nccl.c), looked up once per
 * GPU count; NULL beyond the kept counts (the caller looks it up). */
static const struct vf__link *ctx_link(struct vf_estimate_ctx *c, const struct vf_gpu_spec *gpu, int n)
{
	if (!gpu || n < 1 || n >= CTX_LINKS)
		return NULL;
	if (c->link[n].gen != c->gen) {
		vf__nccl_link(gpu, n, &c->link[n].l);
		c->link[n].gen = c->gen;
	}
	return &c->link[n].l;
}

/* Optimizer in backward (torchtune optimizer_in_bwd): each parameter is
 * stepped in its post-accumulate-grad hook and its gradient freed, so
 * gradients never pile up (one layer's at a time, or the largest
 * tensor's) and there is no optimizer phase with a foreach temporary. */
static void optimizer_in_backward(const struct shape *s, const struct vf_setup *su, double T,
				  double gb, struct live *ph)
{
	double layers = s->L + s->Ld > 0 ? s->L + s->Ld : 1;
	double one = su->mode == VF_MODE_LORA ? T / layers : s->largest;
	if (one > T)
		one = T;
	double g = one * gb;
	for (int i = VF_PHASE_FORWARD; i <= VF_PHASE_BACKWARD; i++)
		if (ph[i].g > g)
			ph[i].g = g;
	ph[VF_PHASE_BACKWARD].ot = su->optimizer == VF_OPT_ADAMW ? g : 0;
	memset(&ph[VF_PHASE_OPTIMIZER], 0, sizeof ph[VF_PHASE_OPTIMIZER]);
}

/* The setup's shape: the model's (the context's, or shape_of's), or with
 * the stack's native GELU a copy of it in m->s_own. */
static const struct shape *llm_shape(struct vf_estimate_ctx *cx, const struct vf_arch *arch,
				     const struct vf_setup *su, const struct vf_gpu_spec *gpu,
				     struct llm *m)
{
	const struct shape *s = cx ? ctx_bind(cx, arch, gpu) : shape_of(arch);
	if (su->gelu_native && s->act == ACT_GELU_PY) {
		/* the stack runs the tanh GELU as one kernel (stack.c) */
		m->s_own = *s;
		m->s_own.act = ACT_NATIVE;
		s = &m->s_own;
	}
	return s;
}

/* The micro-batch and token counts (m->su, m->s). */
static void llm_tokens(struct llm *m)
{
	const struct vf_setup *su = m->su;
	m->b = (double)su->batch;
	m->sq = (double)su->seq;
	m->tq = su->target_seq > 0 ? (double)su->target_seq : m->sq;
	m->N = m->b * m->sq;
	m->Nout = m->s->fc == FC_T5 ? m->b * m->tq : m->N;
}


/* The setup's dtypes, micro-batch and token counts, on shape s. */
static void llm_setup(struct vf_estimate_ctx *cx, const struct vf_setup *su, const struct shape *s,
		      struct llm *m)
{
	memset(m, 0, offsetof(struct llm, s_own));
	m->su = su;
	m->cx = cx;
	m->s = s;
	struct dt *d = &m->d;
	d->train = su->mode != VF_MODE_INFER;
	d->full = su->mode == VF_MODE_FULL;
	d->autocast = vf_setup_autocast(su); /* bf16 with or without; amp and fp16 with */
	d->P = su->precision == VF_PREC_BF16 ? 2 : 4; /* amp/fp16: fp32 weights under autocast */
	d->R = d->P;
	/* peft's prepare_model_for_kbit_training casts the embeddings to
	 * fp32 (kbit_rest_bytes): the residual stream they start is fp32 */
	if (vf_setup_kbit_prep(su) && d->train)
		d->R = 4;
	d->C = d->autocast ? 2 : d->P; /* matmul outputs: autocast's bf16, else the weights' dtype */
	d->lt = su->mode == VF_MODE_LORA ? su->lora_targets : 0;
	d->rank = su->lora_rank;
	d->compile = su->compile;
	d->qbase = su->quant != VF_QUANT_NONE;
	d->lora_fp32 = su->mode == VF_MODE_LORA && !su->adapter_bf16;
	d->lora_gemm32 = vf_setup_fp32_adapter_gemms(su);
	d->lora_drop = su->mode == VF_MODE_LORA && su->lora_dropout && d->train;
	llm_tokens(m);
	m->ngpu = su->gpus > 0 ? su->gpus : 1;
}

/* Parameters: all, trainable (all in full fine-tuning, the adapters in
 * LoRA, none in inference), and the tokens of one optimizer step. */
static void count_parameters(struct llm *m, struct vf_estimate *e)
{
	const struct vf_setup *su = m->su;
	m->P = m->s->params;
	m->T = 0;
	m->lora = 0;
	if (su->mode == VF_MODE_FULL)
		m->T = m->P;
	else if (su->mode == VF_MODE_LORA)
		m->T = m->lora = lora_params(m->s, su->lora_targets, su->lora_rank);
	e->params = clamp64(m->P);
	e->trainable_params = clamp64(m->T);
	e->tokens_per_step = clamp64(m->N * (double)su->grad_accum * m->ngpu);
}

/* Elements of an untied lm_head quantized with the layers (kbit_head,
 * mechanisms.c: Lightning's BitsandbytesPrecision swaps every nn.Linear
 * for bitsandbytes' 4-bit linear); 0 otherwise. */
static double quantized_head(const struct llm *m)
{
	const struct vf_setup *su = m->su;
	if (!su->kbit_head || su->quant != VF_QUANT_NF4 || m->s->tied || su->head_labels > 0 ||
	    (su->modules_to_save & VF_MTS_HEAD)) /* a trainable copy of the head is not packed */
		return 0;
	return m->s->V * m->s->h;
}

/* Bytes per base parameter outside the linears: fp32 under a k-bit base
 * where the stack prepares it (peft's prepare_model_for_kbit_training
 * casts the norms, embeddings and lm_head to fp32), else as stored. */
static double kbit_rest_bytes(const struct llm *m)
{
	const struct vf_setup *su = m->su;
	return vf_setup_kbit_prep(su) ? 4 : m->d.P;
}

/* Weights: the linear matrices (quantized when asked), embeddings and
 * norms in their stored dtype (peft's prepare_model_for_kbit_training:
 * fp32), the adapters in theirs (peft: fp32; torchtune, litgpt: bf16). */
static void weights_term(struct llm *m)
{
	const struct vf_setup *su = m->su;
	m->qb = su->quant == VF_QUANT_NF4 && !su->nf4_double_quant
			? 0.5 + 4.0 / 64 /* bitsandbytes NF4: blocks of 64, fp32 absmax each */
			: quant_bytes(su->quant, m->d.P);
	m->ab = su->adapter_bf16 ? 2 : 4;
	double rest = kbit_rest_bytes(m);
	double head = quantized_head(m); /* litgpt: the lm_head packed with the layers */
	m->W = (m->s->linear + head) * m->qb + (m->P - m->s->linear - head) * rest + m->lora * m->ab;
}

/* Gradients: in the trainable parameters' dtype. */
static void gradients_term(struct llm *m)
{
	m->gb = m->su->mode == VF_MODE_LORA ? m->ab : m->d.P;
	m->G = m->d.train ? m->T * m->gb : 0;
}

/* Optimizer states (state_bytes). */
static void states_term(struct llm *m)
{
	m->S = m->d.train ? state_bytes(m->su, m->s, m->T, m->gb, m->su->mode == VF_MODE_LORA) : 0;
}

/* A task head (--head classify:N; transformers *ForSequenceClassification
 * and *ForTokenClassification: a score / classifier linear of h x N on
 * the last hidden states) in place of the vocabulary head: the untied
 * lm_head's weights leave, the head's enter, and the logits are N wide.
 * The token embedding stays. */
static void task_head(struct llm *m, struct shape *headed)
{
	double n = m->su->head_labels;
	if (n <= 0)
		return;
	*headed = *m->s;
	struct shape *s = headed;
	m->s = headed;
	m->cx = NULL; /* the context's memo is of the model's own shape */
	double lm = s->tied ? 0 : s->V * s->h;
	double head = n * s->h;
	s->params += head - lm;
	s->emb += head - lm;
	s->V = n;
	s->tied = false;
	s->softcap_logits = 0;
	s->rounding = param_rounding(s); /* the vocabulary matrix is the head now */
}

/* LoRA on the lm_head (peft target "lm_head", torchtune
 * apply_lora_to_output, litgpt lora_head): an adapter of r x (h + V) with
 * the others; peft's all-linear leaves the head out. */
static void head_adapter(struct llm *m, struct vf_estimate *e)
{
	const struct vf_setup *su = m->su;
	if (su->mode != VF_MODE_LORA || !(su->lora_targets & VF_LORA_HEAD))
		return;
	double head = su->lora_rank * (m->s->h + m->s->V);
	m->lora += head;
	m->T += head;
	e->trainable_params = clamp64(m->T);
}

/* peft modules_to_save (ModulesToSaveWrapper): a trainable full copy of
 * the lm_head and/or the token embedding beside the frozen original, in
 * the base dtype: its weights, gradients, optimizer states and step
 * temporaries (the same optimizer, at that width). */
static void saved_modules(struct llm *m, struct vf_estimate *e)
{
	const struct vf_setup *su = m->su;
	const struct shape *s = m->s;
	m->mts = 0;
	if (su->mode != VF_MODE_LORA || !su->modules_to_save)
		return;
	if (su->modules_to_save & VF_MTS_HEAD)
		m->mts += s->V * s->h;
	if (su->modules_to_save & VF_MTS_EMBED)
		m->mts += s->V * s->h;
	double P = m->d.P;
	m->W += m->mts * P;
	m->G += m->mts * P;
	m->S += state_bytes(su, s, m->mts, P, false);
	if (su->optimizer == VF_OPT_ADAMW && su->optimizer_impl == VF_OPTIMPL_FOREACH)
		m->OT += m->mts * P;
	e->trainable_params = clamp64(m->T + m->mts);
}

/* Optimizer step temporaries. foreach AdamW: _foreach_sqrt(exp_avg_sq)
 * makes one temporary as large as the states of one kind (measured:
 * l7-full-amp-b1s2048-gc, 25.1 GiB for 25.1 GiB of fp32 parameters);
 * for-loop: the largest tensor twice (sqrt, then divide); Lion
 * (lion-pytorch, per tensor: clone and interpolation) the largest tensor
 * twice; fused and bitsandbytes 8-bit kernels: none; SGD momentum: in
 * place; Adafactor (per tensor): squared gradient, update and factored
 * estimate of the largest tensor. */
static void optimizer_temp_term(struct llm *m)
{
	const struct vf_setup *su = m->su;
	double T = m->T, gb = m->gb;
	m->OT = 0;
	if (!m->d.train)
		return;
	double largest = su->mode == VF_MODE_LORA ? T / (m->s->L > 0 ? m->s->L : 1) : m->s->largest;
	if (largest > T)
		largest = T;
	switch (su->optimizer) {
	case VF_OPT_LION:
		m->OT = 2 * largest * gb;
		break;
	case VF_OPT_ADAMW:
		if (su->optimizer_impl == VF_OPTIMPL_FOREACH)
			m->OT = T * gb;
		else if (su->optimizer_impl == VF_OPTIMPL_FOR)
			m->OT = 2 * largest * gb;
		break;
	case VF_OPT_ADAFACTOR:
		m->OT = 3 * largest * 4;
		break;
	default:
		break;
	}
}

/* Sharding: the per-GPU shares of weights, gradients and states
 * (ZeRO/FSDP), one layer gathered (and the next prefetched) when the
 * weights are sharded. DDP (gradient_as_bucket_view=False, the default of
 * PyTorch and accelerate): flat buckets as large as the gradients,
 * allocated once and kept, so they are live in every phase. */
static void sharding(struct llm *m)
{
	const struct vf_setup *su = m->su;
	double ngpu = m->ngpu;
	m->shard_w = m->shard_g = m->shard_o = 1;
	m->W_whole = m->W;
	if (ngpu > 1) {
		switch (su->shard) {
		case VF_SHARD_ZERO1: m->shard_o = ngpu; break;
		case VF_SHARD_ZERO2: m->shard_o = m->shard_g = ngpu; break;
		case VF_SHARD_ZERO3:
		case VF_SHARD_FSDP: m->shard_o = m->shard_g = m->shard_w = ngpu; break;
		default: break;
		}
	}
	m->W /= m->shard_w;
	m->G /= m->shard_g;
	m->S /= m->shard_o;
	m->OT /= m->shard_o;
	m->fsdp_mp = su->fsdp_mixed_precision && m->shard_w > 1 && m->d.P == 4 && m->d.autocast;
	if (m->fsdp_mp)
		m->d.R = 2; /* the blocks compute in bf16: the residual stream is bf16 */
	if (m->shard_w > 1)
		m->W += 2 * m->s->layer_linear * (m->fsdp_mp ? 2 : m->d.P); /* mixed precision: gathered in bf16 */
	m->ddp_buckets = (su->shard == VF_SHARD_DDP && ngpu > 1) ? m->G : 0;
}

/* The bf16 copy autocast makes of a frozen fp32 lm_head (kbit_rest_bytes,
 * or an fp32 base under LoRA) for F.linear, kept by autograd for the
 * input's gradient: made at the head's call, freed in its backward. */
static double kbit_head_copy(const struct llm *m)
{
	return 2 * m->s->V * m->s->h;
}

/* Autocast cache: fp32 weights under autocast, each linear weight cast to
 * bf16 once per forward (cached for leaf tensors that need a gradient;
 * saved for the backward otherwise), and the lm_head's (tied: the
 * embedding's). */
static void autocast_term(struct llm *m)
{
	const struct vf_setup *su = m->su;
	const struct dt *d = &m->d;
	const struct shape *s = m->s;
	m->AC = m->head_copy = 0;
	if (d->autocast && d->P == 4 && su->quant == VF_QUANT_NONE && !m->fsdp_mp)
		m->AC = 2 * (s->linear + s->V * s->h) / m->shard_w; /* also under no_grad: the params need grads */
	if (m->AC > 0 && !d->full && m->shard_w == 1) /* a frozen fp32 head: copy made per call */
		m->head_copy = kbit_head_copy(m);
	if (d->autocast && su->mode == VF_MODE_LORA && !su->adapter_bf16)
		m->AC += 2 * m->lora; /* adapters' bf16 copies */
	if (d->autocast && vf_setup_kbit_prep(su))
		m->AC += m->head_copy = kbit_head_copy(m); /* the fp32 lm_head's, saved for its backward */
}

/* One layer's saved bytes per token and its attention block's (training
 * only): they read the shape and the dtypes, not the token counts. */
static void layer_tokens(struct llm *m)
{
	const struct vf_setup *su = m->su;
	const struct shape *s = m->s;
	bool eager = su->attention == VF_ATTN_EAGER || s->eager_attn; /* T5, bloom: explicit scores */
	m->tok_attn = 0;
	m->tok_layer = m->d.train ? layer_bytes(s, &m->d, eager, &m->tok_attn) : 0;
}

/* Activations: one layer's saved tensors, every layer's (T5: encoder and
 * decoder stacks), a checkpointed layer's input, the embedding output and
 * the final norm; a quantized base adds the dequantized weight of one
 * linear at a time. */
static void activations_term(struct llm *m)
{
	const struct vf_setup *su = m->su;
	const struct dt *d = &m->d;
	const struct shape *s = m->s;
	double b = m->b, sq = m->sq, tq = m->tq, N = m->N;
	bool eager = su->attention == VF_ATTN_EAGER || s->eager_attn; /* T5, bloom: explicit scores */
	double attn_tok = m->tok_attn;
	double per_layer_tok = m->tok_layer;
	if (d->train && s->ssm.layers > 0) {
		/* SSMs and hybrids: the mean layer, attention on attn_layers of
		 * them, a Mamba mixer on ssm_layers (both on every layer of a
		 * parallel hybrid: Falcon-H1), the MLP where there is one */
		double mixer = s->ssm.attn_layers / s->ssm.L * attn_tok +
			       s->ssm.layers / s->ssm.L * vf_ssm_saved_per_token(&s->ssm, s->h, d->C, sq);
		per_layer_tok = mixer + s->ssm.mlp * (per_layer_tok - attn_tok);
	}
	m->scores = 0;
	if (eager) {
		m->scores = b * s->heads * sq * sq * score_bytes(s, d);
		if (d->train)
			m->scores += N * 2 * d->C * (s->hq - s->hkv); /* repeat_kv: k and v expanded to all heads */
	}
	m->A_layer = N * per_layer_tok + m->scores;
	m->ckpt_in = N * d->R * s->h;
	m->emb_out = N * s->h * d->R + (s->dropout > 0 ? N * s->h : 0);
	double xb;
	m->final_norm = d->train ? N * norm_bytes(s, d, &xb) : 0;
	if (d->train && d->full)
		m->final_norm += N * s->h * 2; /* lm_head input (bf16 cast) */
	m->layers = s->L;
	if (s->fc == FC_T5) {
		/* decoder layers: self-attention + cross-attention + FF over the
		 * target tokens; cross k/v projections over the encoder tokens */
		double Nt = b * tq;
		double dec_scores = b * s->heads * (tq * tq + tq * sq) * score_bytes(s, d);
		double cross_kv = N * (lin_in(d, s->h, d->R, 2, 0) + 2 * d->C * s->hkv);
		double A_dec = Nt * per_layer_tok * 1.5 + dec_scores + cross_kv;
		m->A_all = s->L * m->A_layer + s->Ld * A_dec;
		/* relative position bias + mask, fp32, computed once per stack */
		m->A_all += 4 * s->heads * (sq * sq + tq * tq + tq * sq);
		m->layers = s->L + s->Ld;
	} else {
		m->A_all = s->L * m->A_layer;
	}
	m->dequant = su->quant != VF_QUANT_NONE ? 2 * s->layer_linear / 3 : 0;
}

/* Logits and loss: the lm_head output in the compute dtype, upcast to fp32
 * by the HF loss, log_softmax output fp32; in the backward of the loss:
 * log_softmax output, the incoming gradient and the input gradient, all
 * fp32 (12 bytes per logit: gpt2 and gemma-2b records). Other losses:
 * loss_bytes. */
static void logits_term(struct llm *m)
{
	const struct shape *s = m->s;
	const struct dt *d = &m->d;
	double Nout = m->Nout;
	m->logits_fwd = Nout * s->V * (d->C + 4 + 4);
	if (d->C == 4)
		m->logits_fwd = Nout * s->V * 8;
	m->logits_bwd = Nout * s->V * 12;
	loss_bytes(s, m->su, d, Nout, &m->logits_fwd, &m->logits_bwd);
	if (s->softcap_logits > 0) {
		m->logits_fwd += Nout * s->V * d->C * 2; /* logits/cap and tanh output (kept) */
		m->logits_bwd += Nout * s->V * d->C;
	}
}

/* ---- other stacks' mechanisms (sources: mechanisms.c) ------------------- */

/* bitsandbytes k-bit matmuls keep their input for the backward even with
 * the quantized weight frozen: every quantized linear's input is saved
 * (peft and litgpt QLoRA; not torchao's NF4 linear, nor fp8). */
static void kbit_saved_inputs(struct llm *m)
{
	const struct vf_setup *su = m->su;
	if (!su->kbit_saves_input || !m->d.train || m->d.full ||
	    (su->quant != VF_QUANT_NF4 && su->quant != VF_QUANT_INT8)) /* bitsandbytes' formats */
		return;
	const struct shape *s = m->s;
	/* MatMul8bitLt also keeps the int8 transposed copy of its input (CAt) */
	double per = m->N * vf__mech_kbit_saved_inputs(s->h, s->hq, s->f,
						       m->d.C + (su->quant == VF_QUANT_INT8 ? 1 : 0));
	m->A_layer += per;
	m->A_all += m->layers * per;
}

/* litgpt QLoRA (mechanisms.c): the quantized lm_head's dequantized
 * weight at each of its calls (head_dq) and its input kept by MatMul4Bit
 * (with kbit_saves_input); the previous step's logits, and with k-bit
 * linears the inputs their ctx keeps, held through the forward
 * (held_prev). */
static void litgpt_head_and_graph(struct llm *m)
{
	const struct vf_setup *su = m->su;
	m->head_dq = m->held_prev = 0;
	if (!m->d.train)
		return;
	const struct shape *s = m->s;
	double head = quantized_head(m), kbit = 0;
	if (head > 0) {
		m->head_dq = vf__mech_kbit_dequant_bytes(head, m->d.C, su->precision == VF_PREC_FP16);
		if (su->kbit_saves_input && !m->d.full) {
			kbit = m->Nout * s->h * m->d.C; /* the chunks are views of the final norm's output */
			m->final_norm += kbit;
		}
	}
	if (!su->graph_held)
		return;
	if (su->kbit_saves_input && !m->d.full && su->quant == VF_QUANT_NF4 && !su->grad_ckpt)
		kbit += m->layers * m->N * vf__mech_kbit_saved_inputs(s->h, s->hq, s->f, m->d.C);
	m->held_prev = vf__mech_graph_held_bytes(m->Nout, s->V, m->d.C, kbit);
}

/* litgpt's LoRA dropout (lora_dropout; litgpt/lora.py at 03ffc551:
 * LoRALinear and LoRAQKVLinear run self.lora_dropout(x) before lora_A, the
 * config_hub yamls set lora_dropout 0.05): native_dropout keeps its bool
 * mask, 1 byte per input element, once per adapted linear (q, k and v
 * share the fused qkv's); peft's LoRA layers (fp32 adapters) each hold a
 * dropout module of their own (peft src/peft/tuners/lora/layer.py
 * update_layer: lora_dropout[adapter] = nn.Dropout(p) when p > 0, else
 * nn.Identity), so q, k and v keep a mask each (--lora-dropout turns it on
 * for any stack); the dropped copy takes the input's place among lora_A's
 * saved tensors (lin_in counts one per adapter). MoE experts' adapters
 * are not counted. */
static void lora_dropout_masks(struct llm *m)
{
	const struct vf_setup *su = m->su;
	if (!su->lora_dropout || su->mode != VF_MODE_LORA || !m->d.train)
		return;
	const struct shape *s = m->s;
	unsigned t = su->lora_targets;
	double per = 0;
	if (!su->adapter_bf16) /* peft: a dropout module per adapted linear */
		per += s->h * popcount(t & (VF_LORA_Q | VF_LORA_K | VF_LORA_V));
	else if (t & (VF_LORA_Q | VF_LORA_K | VF_LORA_V))
		per += s->h;
	if (t & VF_LORA_O)
		per += s->hq;
	if (!(s->experts > 0)) {
		bool one = !s->gated || s->fused_gate_up; /* one up-projection linear */
		per += s->h * ((t & VF_LORA_GATE) && !one ? 1 : 0);
		per += s->h * ((t & VF_LORA_UP) || (one && (t & VF_LORA_GATE)) ? 1 : 0);
		per += (t & VF_LORA_DOWN) ? s->f : 0;
	}
	m->A_layer += m->N * per;
	m->A_all += m->layers * m->N * per;
	if (t & VF_LORA_HEAD)
		m->final_norm += m->Nout * s->h;
}

/* A pre-quantized 4-bit base in training (peft LoRA over it):
 *   gptq  auto-gptq's QuantLinear (auto_gptq/nn_modules/qlinear/
 *         qlinear_cuda.py, commit 9f7d3707; peft and transformers train
 *         GPTQ with use_exllama=False, whose exllama kernels have no
 *         backward): from kernel_switch_threshold = 128 tokens on, the
 *         forward dequantizes the whole weight with torch ops and runs
 *         torch.matmul(x, weights): autograd keeps that fp16 weight for
 *         the input's gradient, 2 bytes per base element of every
 *         layer (the packed weight stays too); below 128 tokens its CUDA
 *         kernel, which autograd does not see;
 *   awq   AutoAWQ's WQLinearMMFunction (awq/modules/linear/gemm.py,
 *         commit 88e4c76b): save_for_backward(x, qweight, qzeros, scales,
 *         bias): each linear's input (q/k/v share one, gate/up one), as
 *         bitsandbytes' k-bit matmuls; its backward dequantizes the weight
 *         again and repeats it over the batch for a bmm: (1 + batch) x 2
 *         bytes per element of the largest linear, transient in each
 *         layer's backward.
 * A generic int4 base (quanto) keeps neither. */
static void prequant_saved(struct llm *m)
{
	const struct vf_setup *su = m->su;
	m->bwd_transient = 0;
	if (su->quant != VF_QUANT_INT4 || !m->d.train || m->d.full || su->quant_format == VF_QFMT_GENERIC)
		return;
	const struct shape *s = m->s;
	double per;
	if (su->quant_format == VF_QFMT_GPTQ) {
		/* under 128 tokens the CUDA kernel runs instead and saves nothing */
		per = m->N >= 128 ? 2 * s->layer_linear : 0; /* one layer's dequantized fp16 weights */
	} else {
		per = m->N * vf__mech_kbit_saved_inputs(s->h, s->hq, s->f, m->d.C); /* inputs */
		struct vf__tensors t;
		layer_linear_elems(s, &t);
		double n = 0;
		for (int i = 0; i < t.n; i++)
			n = t.bytes[i] > n ? t.bytes[i] : n;
		m->bwd_transient = 2 * n * (1 + m->b); /* weight + its batch-repeated copy */
	}
	m->A_layer += per;
	m->A_all += m->layers * per;
}

/* MoE full fine-tuning in transformers' expert loop: each expert's slice
 * of the layer's fused expert parameters gets a zero-filled gradient of
 * the whole parameter in the backward (PyTorch select_backward_symint),
 * added into the one autograd accumulates (mlp_work has its time): while
 * it is added, one more gradient of all the layer's experts is live. */
static void moe_expert_grad_transient(struct llm *m)
{
	const struct shape *s = m->s;
	if (!m->d.train || !m->d.full || !(s->experts > 0))
		return;
	double fe = s->mt.expert_ffn > 0 ? s->mt.expert_ffn : s->f;
	double all = s->experts * s->h * fe * (s->gated ? 3 : 2); /* elements */
	double t = all * m->gb;
	if (t > m->bwd_transient)
		m->bwd_transient = t;
}

/* Selective checkpointing: the op-level policy keeps, beside each layer's
 * input, the outputs of its saved ops (a layer's recompute rebuilds the
 * rest); every:N checkpoints one layer in N and keeps the others' saved
 * tensors whole: per layer on average (input + (N - 1) x layer) / N. */
static void selective_checkpointing(struct llm *m)
{
	const struct vf_setup *su = m->su;
	const struct shape *s = m->s;
	if (!su->grad_ckpt || !m->d.train)
		return;
	if (su->ckpt_selective_op) {
		m->ckpt_in += m->N * vf__mech_sac_op_saved(s->h, s->hq, s->hkv, s->f, s->heads, m->d.C,
							   s->gated);
	} else if (su->ckpt_every > 1) {
		double n = su->ckpt_every;
		double per = m->A_all / (m->layers > 0 ? m->layers : 1);
		m->ckpt_in = (m->ckpt_in + (n - 1) * per) / n;
	}
}

/* Paged optimizer states: the share of the trainable elements in tensors
 * of at least VF_MECH_PAGED_MIN_ELEMENTS as each GPU holds them (the
 * tensors the allocator replay makes: fill_params), whose states are CUDA
 * managed memory. Norms and small adapters stay in the allocator. */
static void paged_states(struct llm *m)
{
	const struct vf_setup *su = m->su;
	const struct shape *s = m->s;
	m->S_paged = 0;
	if (!su->paged_optimizer || !m->d.train || m->T <= 0 || m->S <= 0)
		return;
	double min = VF_MECH_PAGED_MIN_ELEMENTS * m->shard_w, paged = 0;
	double layers = s->L + s->Ld > 0 ? s->L + s->Ld : 1;
	struct vf__tensors t;
	if (su->mode == VF_MODE_LORA)
		layer_lora_elems(s, m->d.lt, m->d.rank, m->lora, &t);
	else
		layer_linear_elems(s, &t);
	for (int i = 0; i < t.n; i++)
		if (t.bytes[i] >= min)
			paged += t.bytes[i] * layers;
	if (su->mode == VF_MODE_FULL) {
		double head = s->tied ? 0 : s->V * s->h;
		double emb = s->params - s->linear - s->norm - head;
		paged += (emb >= min ? emb : 0) + (head >= min ? head : 0);
	}
	if (paged > m->T)
		paged = m->T;
	m->S_paged = m->S * paged / m->T;
}

/* CPU offload. optimizer (DeepSpeed offload_optimizer): the states and the
 * step on the host, each gradient copied down after the backward, the
 * updated parameters copied up; the GPU keeps its weights and gradients.
 * params (FSDP CPUOffload(offload_params=True)): parameters, gradients
 * and states live on the host; the GPU holds the gathered blocks (two:
 * the one computing and the prefetched one; embeddings and head as
 * sharding() counts them) and one block's gradients
 * before they are reduced and copied down; each rank's shard crosses
 * PCIe up for the forward and again for the backward. */
static void offload_terms(struct llm *m)
{
	const struct vf_setup *su = m->su;
	m->host = m->pcie = 0;
	if (su->offload == VF_OFFLOAD_NONE || !m->d.train)
		return;
	double gather = 2 * m->s->layer_linear * (m->fsdp_mp ? 2 : m->d.P);
	double shard_w = m->W_whole / m->shard_w;
	double micro = (double)su->grad_accum;
	m->host = m->S + m->G;
	m->pcie_fwd = 0;
	m->pcie_bwd = m->G;                          /* gradients down in the backward */
	m->pcie_after = m->T * m->d.P / m->shard_o;  /* updated parameters up after the step */
	if (su->offload == VF_OFFLOAD_PARAMS) {
		double layers = m->s->L + m->s->Ld > 0 ? m->s->L + m->s->Ld : 1;
		m->host += shard_w;
		m->pcie_fwd = shard_w;          /* each shard up before its forward all-gather */
		m->pcie_bwd = shard_w + m->G;   /* again before the backward's, gradients down */
		m->pcie_after = 0;              /* updated in place on the host */
		/* embeddings, head, final norm: their share, as sharding() counts them */
		double root = m->W_whole - m->s->linear * m->qb - m->lora * m->ab;
		m->W = gather + (root > 0 ? root : 0) / m->shard_w;
		m->G = m->d.full ? m->G * m->shard_g / layers : m->G;
	}
	m->pcie = micro * (m->pcie_fwd + m->pcie_bwd) + m->pcie_after;
	m->S = m->OT = 0;
}

/* FSDP gradient accumulation under no_sync (stack mechanism fsdp_no_sync:
 * litgpt's `with fabric.no_backward_sync(model, enabled=is_accumulating)`,
 * Lightning's FSDP backward-sync control entering FSDP.no_sync()): an
 * accumulating micro-batch's post-backward neither reduce-scatters nor
 * frees a unit's gradient, so each unit keeps its whole (unsharded)
 * gradient from the first micro-batch's backward to the synced one. The
 * gradient is the unit's flat parameter's: Lightning wraps with
 * use_orig_params=True, so frozen and trainable parameters share a flat
 * parameter and a unit with any trainable parameter (every layer, under
 * LoRA) has a whole gradient of the unit's size, in the flat parameter's
 * dtype; a unit with none (the root under LoRA) has none. Each backward
 * makes a unit's whole gradient before adding it to the held one
 * (fsdp_grad). Where the adapters are units of their own or FSDP keeps
 * gradients per parameter (fsdp_lora_flat false: peft's
 * fsdp_auto_wrap_policy under accelerate's FSDP1, whose use_orig_params
 * defaults to False; FSDP2's set_requires_gradient_sync(False)), only the
 * trainable parameters' whole gradients are held, in their dtype.
 * root: the root's parameters (fsdp_units). */
static void fsdp_no_sync_grads(struct llm *m, double root)
{
	const struct vf_setup *su = m->su;
	m->fsdp_nosync = 0;
	if (!su->fsdp_no_sync || su->grad_accum <= 1 || su->shard != VF_SHARD_FSDP || m->fsdp_unit <= 0)
		return;
	const struct shape *s = m->s;
	double root_elems = root > 0 ? root : 0;
	double layer_elems = s->params - root_elems + m->lora; /* the layer units, adapters in them */
	double layers = m->layers > 0 ? m->layers : 1;
	if (m->d.full) {
		double gb = m->fsdp_mp ? 2 : m->gb;
		m->fsdp_nosync = (layer_elems + root_elems) * gb;
		m->fsdp_nosync_layer = layer_elems / layers * gb;
		/* held already: nothing above at the backward's end, and the
		 * head's contribution of a later micro-batch is added into the
		 * held one and freed before the layers' backward */
		m->fsdp_root_grad = m->fsdp_head_grad = 0;
		return;
	}
	if (!su->fsdp_lora_flat) { /* the adapters' own whole gradients (fsdp_grad: one layer's) */
		m->fsdp_nosync = m->T * m->gb;
		m->fsdp_nosync_layer = m->fsdp_nosync / layers;
		return;
	}
	double pb = m->fsdp_mp ? 2 : m->d.P; /* the flat parameter's dtype */
	m->fsdp_nosync = layer_elems * pb;
	m->fsdp_grad = m->fsdp_nosync_layer = layer_elems / layers * pb;
}

/* FSDP and ZeRO-3 (the weights sharded over the GPUs), beside the two
 * gathered layers sharding() counts (the unit computing and the next one,
 * prefetched: FSDP1's limit_all_gathers lets two all-gathers be in flight,
 * FSDP2 prefetches one unit ahead in the forward and in the backward):
 *   the root unit: the parameters no layer owns (embedding, final norm,
 *   untied head), gathered at the forward's start and kept to the
 *   backward's end: FSDP does not reshard the root after the forward
 *   (fully_shard's reshard_after_forward=None is False for the root;
 *   FSDP1 keeps the root's flat parameter for FULL_SHARD). DeepSpeed's
 *   ZeRO-3 gathers the embedding and the head as any module, when used,
 *   and releases them after: no root held;
 *   one layer's unsharded gradient in the backward: its parameters'
 *   gradients made whole (FSDP2 mixed precision: in bf16) before the
 *   reduce-scatter leaves the rank its shard (the gradients' G);
 *   the root's gradients whole until its post-backward at the backward's
 *   end (full fine-tuning): the head's from the loss's backward on, the
 *   embedding's made last;
 *   no layer gathered at the loss (the last layer resharded after its
 *   forward, gathered again by its pre-backward) nor at the optimizer step.
 * Under CPU offload the GPU's blocks are offload_terms' own. */
static void fsdp_units(struct llm *m)
{
	const struct shape *s = m->s;
	m->fsdp_root = m->fsdp_grad = m->fsdp_unit = m->fsdp_head_grad = m->fsdp_root_grad = 0;
	m->fsdp_unmade = m->fsdp_nosync = m->fsdp_nosync_layer = 0;
	if (m->shard_w <= 1 || m->su->offload != VF_OFFLOAD_NONE || !m->d.train)
		return;
	double gathered = m->fsdp_mp ? 2 : m->d.P; /* bytes per gathered element */
	m->fsdp_unit = s->layer_linear * gathered;
	double root = s->params - s->linear - (s->norm - s->h); /* embedding, final norm, head */
	double gb = m->fsdp_mp ? 2 : m->gb; /* bytes per unsharded gradient element */
	if (m->su->shard == VF_SHARD_FSDP && root > 0) {
		m->fsdp_root = root * gathered; /* beside its shard (in W) */
		if (m->d.full) {
			m->fsdp_head_grad = s->V * s->h * gb; /* from the loss's backward on */
			m->fsdp_root_grad = root * gb;        /* at the backward's end */
		}
	}
	double layers = m->layers > 0 ? m->layers : 1;
	if (m->d.full) {
		m->fsdp_grad = s->layer_linear * gb;
		m->fsdp_unmade = (s->layer_linear + (m->fsdp_root_grad > 0 ? root : 0)) * m->gb / m->shard_g;
	} else {
		m->fsdp_grad = m->lora / layers * 4; /* the adapters' fp32 gradients */
		m->fsdp_unmade = m->fsdp_grad / m->shard_g;
	}
	if (m->su->grad_accum > 1 || m->su->grads_zeroed) /* the shards held from before */
		m->fsdp_unmade = 0;
	fsdp_no_sync_grads(m, root);
}

/* What the host holds and the link carries (vf_estimate.offload_*). */
static void offload_record(const struct llm *m, const struct vf_gpu_spec *gpu, struct vf_estimate *e)
{
	e->offload = m->su->offload;
	e->offload_host_bytes = clamp64(m->host);
	e->offload_pcie_bytes = clamp64(m->pcie);
	/* nothing over PCIe: the quotient is that zero itself (the rate is
	 * positive), without classifying the GPU's host link */
	e->offload_pcie_seconds = m->pcie != 0 ? m->pcie / vf__steptime_host_bps(gpu) : m->pcie;
}

/* The lm_head's input is saved when the head trains (a saved copy or a
 * LoRA on it); a LoRA on it also saves its A output (rank wide). */
static void head_inputs(struct llm *m)
{
	const struct vf_setup *su = m->su;
	if (su->mode != VF_MODE_LORA || !m->d.train)
		return;
	if (su->modules_to_save & VF_MTS_HEAD)
		m->final_norm += m->Nout * m->s->h * m->d.C;
	if (su->lora_targets & VF_LORA_HEAD)
		m->final_norm += m->Nout * (m->s->h + su->lora_rank) * m->d.C;
}

/* torchao float8 training (Float8Linear, torchao/float8/float8_linear.py,
 * commit 7ca1bfbe: matmul_with_hp_or_float8_args saves the high-precision
 * input and weight and casts both to float8 inside the forward): the
 * layers' linear weights get no autocast copy, and each linear makes its
 * float8 weight and input for its matmul (the largest of a layer, one at
 * a time); the lm_head stays a plain linear. */
static void float8_linears(struct llm *m)
{
	const struct shape *s = m->s;
	if (!m->su->float8 || !m->d.train || m->su->quant != VF_QUANT_NONE)
		return;
	if (m->d.autocast && m->d.P == 4 && !m->fsdp_mp && m->AC > 0)
		m->AC -= 2 * s->linear / m->shard_w; /* the bf16 copies of the layers' weights */
	if (m->AC < 0)
		m->AC = 0;
	double wmax = s->h * (s->f > s->hq ? s->f : s->hq);
	double xmax = m->N * (s->f > s->h ? s->f : s->h);
	m->dequant += 1 * wmax + 1 * xmax; /* float8 e4m3: one byte each */
}

/* The paged states leave every phase's allocator terms. */
static void paged_outside_allocator(const struct llm *m, struct live ph[VF_PHASE_COUNT])
{
	for (int i = 0; i < VF_PHASE_COUNT && m->S_paged > 0; i++) {
		ph[i].o -= m->S_paged;
		if (ph[i].o < 0)
			ph[i].o = 0;
	}
}

/* A 4-bit base quantized while the model loads, one weight at a time
 * (the last of them with all others already packed), for the largest
 * linear of n elements, bytes beyond the packed weights:
 *   bitsandbytes  Params4bit._quantize (bitsandbytes/nn/modules.py,
 *                 commit 95f9af30): the bf16 weight moved to the GPU, 2n,
 *                 while quantize_4bit packs it;
 *   torchao       NF4Tensor.from_tensor (torchao/quantization/quantize_/
 *                 workflows/nf4/nf4_tensor.py, commit 36027d82; torchtune's
 *                 LoRALinear(quantize_base=True) builds with to_nf4 and
 *                 load_state_dict copies into it through the same path,
 *                 copy_in.to(device) first): the bf16 weight 2n, its scaled
 *                 blocks 2n, the uint8 indices n, then the two packed
 *                 halves n/2 + n/2; or, while the indices are found,
 *                 CHUNK_SIZE = 2^20 elements against the 16 NF4 levels,
 *                 (value - nf4) and its abs in bf16, 2 x 32 MiB. */
static double quant_load_transient(const struct llm *m)
{
	const struct vf_setup *su = m->su;
	if (su->quant != VF_QUANT_NF4 || m->shard_w > 1)
		return 0;
	struct vf__tensors t;
	layer_linear_elems(m->s, &t);
	double n = 0;
	for (int i = 0; i < t.n; i++)
		n = t.bytes[i] > n ? t.bytes[i] : n; /* elements, as stored */
	if (su->quant_load == VF_QLOAD_BITSANDBYTES)
		return 2 * n;
	double chunk = 2 * 1048576.0 * 16 * 2;
	double loop = 5 * n + chunk, pack = 6 * n;
	return loop > pack ? loop : pack;
}

/* Tensor bytes live at the load's peak, for a never-reset peak
 * (--peak-scope run): with load_full_per_rank under sharding, the full
 * state dict beside the shards (Lightning's _load_raw_module_state); a
 * 4-bit base quantized on load, the weights and the largest linear's
 * transient (quant_load_transient); 0 otherwise (the load holds at most
 * the step's weights). */
static double load_peak(const struct llm *m)
{
	if (m->su->load_full_per_rank && m->shard_w > 1)
		return m->W_whole / m->shard_w + m->W_whole;
	double q = quant_load_transient(m);
	return q > 0 ? m->W + q : 0;
}

/* The CUDA context (and the defaults assumed) and each term whole,
 * whatever the phase (vf_estimate's *_full). */
static void record_whole_terms(const struct llm *m, const struct vf_gpu_spec *gpu,
			       struct vf_estimate *e)
{
	const struct vf_setup *su = m->su;
	e->context_bytes = su->context_bytes >= 0 ? su->context_bytes : vf_estimate_default_context(gpu);
	if (su->context_bytes < 0)
		e->assumed |= VF_ASSUME_CONTEXT_DEFAULT;
	if (!gpu)
		e->assumed |= VF_ASSUME_NO_GPU;
	e->weights_full = clamp64(m->W);
	e->gradients_full = clamp64(m->G);
	e->optimizer_full = clamp64(m->S);
	e->optimizer_temp_full = clamp64(m->OT);
	e->autocast_cache_full = clamp64(m->AC);
	e->logits_full = clamp64(m->logits_bwd);
	e->layer_activations = clamp64(m->A_layer);
	e->loss_transient = clamp64(m->Nout * m->s->V * m->d.C);
}

/* The phase with the most live memory, from the forward to `last`, after
 * adding the cuBLAS workspaces to each phase of the step; its live bytes
 * in *best, each phase's (forward to `last`) in sums. */
static int peak_phase(struct live *ph, int last, double *best, double sums[VF_PHASE_COUNT])
{
	double top = -1;
	int bi = VF_PHASE_FORWARD;
	for (int i = VF_PHASE_FORWARD; i <= last; i++) {
		if (i <= VF_PHASE_OPTIMIZER)
			ph[i].act += WORKSPACE_BYTES;
		double v = live_sum(&ph[i]);
		sums[i] = v;
		if (v > top) {
			top = v;
			bi = i;
		}
	}
	*best = top;
	return bi;
}

/* Inference: weights + KV cache + one layer's working set, at the MLP of
 * the last layer (residual, normed input, act, up and product (gated) or
 * input/output (plain)) or in its attention, then the logits. The layer
 * working set and the logits are freed and re-requested at other sizes as
 * the cache grows (the reserve's FRAG_INFER, fitted: README). */
static void infer_estimate(const struct llm *m, const struct vf_gpu_spec *gpu,
			   struct vf_estimate *e, struct vf__step *st, bool timed)
{
	const struct shape *s = m->s;
	const struct dt *d = &m->d;
	const struct vf_setup *su = m->su;
	double b = m->b, sq = m->sq, N = m->N, Nout = m->Nout, layers = m->layers;
	double kvb = d->C;
	double kv = vf_moe_kv_elements(&s->mt, b, sq) * kvb; /* MLA, sliding windows: moe.c */
	if (s->fc == FC_T5)
		kv = 2 * s->Ld * s->hkv * (b * m->tq + N) * kvb;
	if (s->ssm.layers > 0) { /* attention layers only; the SSM layers' recurrent state */
		struct vf_moe_terms at = s->mt;
		at.layers = s->ssm.attn_layers;
		if (at.window_layers > at.layers)
			at.window_layers = at.layers;
		kv = vf_moe_kv_elements(&at, b, sq) * kvb + vf_ssm_state_bytes(&s->ssm, b, d->C);
	}
	double work = N * (2 * s->h * d->C + (s->gated ? 3 : 2) * s->f * d->C);
	double attn_work = N * (3 * s->h + 3 * s->hq + 2 * s->hkv) * d->C;
	if (su->attention == VF_ATTN_EAGER)
		attn_work += b * s->heads * sq * sq * (4 + d->C);
	if (attn_work > work)
		work = attn_work;
	struct live ph[VF_PHASE_COUNT];
	memset(ph, 0, sizeof ph);
	struct live *f = &ph[VF_PHASE_FORWARD];
	f->w = m->W;
	f->ac = m->AC;
	f->kv = kv;
	f->act = work + m->dequant;
	struct live *l = &ph[VF_PHASE_LOSS];
	l->w = m->W;
	l->ac = m->AC;
	l->kv = kv;
	l->lg = Nout * s->V * d->C + Nout * s->h * d->C;
	double best;
	double sums[VF_PHASE_COUNT];
	int bi = peak_phase(ph, VF_PHASE_LOSS, &best, sums);
	e->kv_cache_full = clamp64(kv);
	e->activations_full = clamp64(work);
	if (st) {
		struct step_in in = {.qb = m->qb, .gb = m->gb, .T = m->T, .lora = m->lora, .AC = m->AC,
				     .Nout = Nout, .dequant = m->dequant, .shard_w = m->shard_w,
				     .shard_o = m->shard_o, .layers = layers};
		fill_infer(s, su, d, &in, kv, st);
	}
	double reserved = best + segment_waste(kv / (2 * layers)) * 2 * layers +
			  s->rounding * m->W + FRAG_INFER * (work + Nout * s->V * d->C);
	finish_terms(e, ph, reserved, (enum vf_phase)bi);
	vf__mech_finish_peaks(e, su, 0, load_peak(m));
	if (timed)
		step_time(m->cx, s, su, d, gpu, 0, 0, NULL, e);
}

/* Activations held through a training step's forward: every layer's, or
 * with checkpointing each layer's input. Activation offload (torchtune
 * OffloadActivations): saved tensors go to the CPU as they are made; the
 * GPU keeps the layer in flight and the one being copied (prefetched again
 * for the backward). */
static double held_activations(const struct llm *m)
{
	const struct vf_setup *su = m->su;
	double held_acts = su->grad_ckpt ? m->layers * m->ckpt_in : m->A_all;
	if (su->activation_offload && m->d.train) {
		double on_gpu = 2 * (su->grad_ckpt ? m->ckpt_in : m->A_layer);
		if (on_gpu < held_acts)
			held_acts = on_gpu;
	}
	return held_acts;
}

/* litgpt (litgpt_head_and_graph): the forward's end is the lm_head's
 * last chunk, with the logits made so far, the head's dequantized weight
 * in place of a layer's, and the previous step's held tensors; the
 * backward's start runs the head's backward beside the loss's tensors,
 * its dequantized weight again (the loss phase holds no layer's: a
 * layer's dequantized weight lives only while the layer runs). */
static void head_moments(const struct llm *m, double held_acts, struct live ph[VF_PHASE_COUNT])
{
	if (m->head_dq <= 0 && m->held_prev <= 0)
		return;
	double dq = m->head_dq > m->dequant ? m->head_dq : m->dequant;
	struct live *fw = &ph[VF_PHASE_FORWARD];
	fw->act = held_acts + m->emb_out + m->final_norm + dq + m->held_prev;
	fw->lg = m->Nout * m->s->V * m->d.C;
	if (m->head_dq > 0) /* the head's backward, at the loss */
		ph[VF_PHASE_LOSS].act += dq;
}

/* Training, forward and loss: optimizer states held from the previous
 * step; gradients None after zero_grad(set_to_none=True), except with
 * gradient accumulation, where from the second micro-batch on the forward
 * runs with the accumulated gradients held, and under --zero-grad zeros
 * (torch 1.x's zero_grad(set_to_none=False): zeroed in place, held). At the loss, everything saved
 * plus the loss tensors; with checkpointing the autocast cache (leaf
 * weights, full fine-tuning) lives until the forward leaves autocast,
 * before the backward, and frozen weights' copies are then made per layer
 * only, but for an fp32 lm_head's (head_copy), live from the head's call
 * to its backward whatever the checkpointing. The forward, checkpointed: one layer's activations live while it
 * runs. */
static void forward_phases(const struct llm *m, double held_acts, struct live ph[VF_PHASE_COUNT])
{
	const struct vf_setup *su = m->su;
	double layers = m->layers;
	double hc = m->head_copy; /* made at the head's call, freed in its backward */
	double AC_fwd = m->AC, AC_bwd = m->AC;
	if (su->grad_ckpt) {
		AC_bwd = hc;
		if (!m->d.full)
			AC_fwd = (m->AC - hc) / (layers > 0 ? layers : 1) + hc;
	}
	bool held = su->grad_accum > 1 || (su->grads_zeroed && !su->optimizer_in_backward);
	double G_held = m->fsdp_nosync > 0 ? m->fsdp_nosync : m->G; /* no_sync: the whole ones */
	double G_fwd = (held ? G_held : 0) + m->ddp_buckets;
	struct live *lf = &ph[VF_PHASE_LOSS];
	lf->w = m->W - 2 * m->fsdp_unit + m->fsdp_root;
	lf->o = m->S;
	lf->g = G_fwd;
	lf->act = held_acts + m->emb_out + m->final_norm; /* no layer runs: none dequantized */
	if (AC_fwd + m->logits_fwd > AC_bwd + m->logits_bwd) {
		lf->ac = AC_fwd;
		lf->lg = m->logits_fwd;
	} else {
		lf->ac = AC_bwd;
		lf->lg = m->logits_bwd;
	}
	struct live *fw = &ph[VF_PHASE_FORWARD];
	fw->w = m->W + m->fsdp_root;
	fw->o = m->S;
	fw->g = G_fwd;
	fw->ac = AC_fwd - hc;
	fw->act = held_acts + m->emb_out + (su->grad_ckpt ? m->A_layer : 0) + m->dequant;
	head_moments(m, held_acts, ph);
}

/* FSDP/ZeRO-3 (fsdp_units): the whole gradients above the shards in the
 * backward bw (which counts G whole and two gathered layers):
 *   at the start (start: the head's gradient already counted), the last
 *   layer's;
 *   through the layers, a layer's beside the head's; at the second layer
 *   (the last with one prefetched), the first layer's shard and the
 *   root's not yet made (the first micro-batch: fsdp_unmade);
 *   at the end, the root's, the layers' tensors and gathered weights gone
 *   by then (the hidden-state gradient and the embedding's output left). */
static double fsdp_backward_grads(const struct llm *m, const struct live *bw, bool start)
{
	if (start || m->fsdp_unit <= 0) /* not sharded: fsdp_grad is 0 */
		return m->fsdp_grad;
	double mid = m->fsdp_grad + m->fsdp_head_grad - m->fsdp_unmade;
	double end = m->fsdp_root_grad - (bw->act + bw->ac) + m->N * m->s->h * 4 + m->emb_out -
		     2 * m->fsdp_unit;
	return mid > end ? mid : end;
}

/* Training, backward: with checkpointing the last layer is recomputed (its
 * activations and, under autocast, its weights' bf16 copies) while
 * gradients accumulate (the lm_head weight gradient first, in full
 * fine-tuning); the autocast cache was dropped when the forward left
 * autocast. Without checkpointing activations are freed layer by layer as
 * weight gradients appear: the peak is at the start (the loss phase) or at
 * the end (all gradients, first layers' inputs). */
static void backward_phase(const struct llm *m, struct live *bw)
{
	const struct vf_setup *su = m->su;
	const struct shape *s = m->s;
	bool full = m->d.full;
	double layers = m->layers, AC = m->AC - m->head_copy, G = m->G, gb = m->gb;
	double A_layer = m->A_layer, ckpt_in = m->ckpt_in;
	bw->w = m->W + m->fsdp_root;
	bw->o = m->S;
	if (su->grad_ckpt) {
		double rec_ac = AC > 0 ? AC / (layers > 0 ? layers : 1) : 0;
		/* the gradient grows to G while the inputs shrink: the larger end */
		double start = layers * ckpt_in + (s->tied || !full ? 0 : s->V * s->h * gb) + A_layer +
			       rec_ac;
		double end = G + A_layer + rec_ac + ckpt_in;
		double dq = m->bwd_transient > m->dequant ? m->bwd_transient : m->dequant;
		if (start >= end) {
			bw->act = layers * ckpt_in + A_layer + dq;
			bw->ac = rec_ac;
			bw->g = full ? (s->tied ? 0 : s->V * s->h * gb) : 0;
		} else {
			bw->act = A_layer + ckpt_in + dq;
			bw->ac = rec_ac;
			bw->g = G;
		}
		bw->act += m->N * s->h * 4; /* the incoming hidden-state gradient */
	} else {
		bw->g = G;
		bw->act = A_layer + m->N * s->h * 4 + m->emb_out + m->bwd_transient;
		bw->ac = AC / (layers > 0 ? layers : 1);
	}
	if (su->grad_accum > 1 && bw->g < G)
		bw->g = G; /* accumulated from the earlier micro-batches */
	bool start = bw->g < G;
	if (m->fsdp_nosync > 0) /* no_sync: the whole ones in place of the shards */
		bw->g += m->fsdp_nosync - G;
	bw->g += m->ddp_buckets + fsdp_backward_grads(m, bw, start);
}

/* Training, optimizer step: weights, gradients, states and the step's
 * temporaries (none of them with the optimizer in the backward). */
static void optimizer_phase(const struct llm *m, struct live ph[VF_PHASE_COUNT])
{
	struct live *op = &ph[VF_PHASE_OPTIMIZER];
	op->w = m->W - 2 * m->fsdp_unit; /* no layer gathered (fsdp_units) */
	op->g = m->G + m->ddp_buckets;
	op->o = m->S;
	op->ot = m->OT;
	if (m->su->optimizer_in_backward)
		optimizer_in_backward(m->s, m->su, m->T, m->gb, ph);
}

/* The training step's tensors, for the allocator replay (fill_step). */
static void train_trace(const struct llm *m, struct vf__step *st)
{
	const struct shape *s = m->s;
	bool t5 = s->fc == FC_T5;
	double sq = m->sq, tq = m->tq, layers = m->layers;
	struct step_in in = {.qb = m->qb, .gb = m->gb, .T = m->T, .lora = m->lora, .S = m->S,
			     .OT = m->OT, .AC = m->AC, .A_layer = t5 ? m->A_all / layers : m->A_layer,
			     .scores = t5 ? 0 : m->scores, .ckpt_in = m->ckpt_in,
			     .emb_out = m->emb_out, .final_norm = m->final_norm, .Nout = m->Nout,
			     .dequant = m->dequant, .bwd_transient = m->bwd_transient, .ddp = m->ddp_buckets,
			     .bias = t5 ? 4 * s->heads * (sq * sq + tq * tq + tq * sq) : 0,
			     .shard_w = m->shard_w, .shard_o = m->shard_o, .layers = layers,
			     .fsdp_root = m->fsdp_root, .fsdp_grad = m->fsdp_grad,
			     .fsdp_unit = m->fsdp_unit, .rest = kbit_rest_bytes(m)};
	in.head_copy = m->head_copy;
	in.fsdp_gb = m->fsdp_mp ? 2 : m->gb;
	in.fsdp_nosync = m->fsdp_nosync_layer;
	if (t5)
		in.A_layer -= in.bias / layers;
	fill_step(s, m->su, &m->d, &in, st);
}

/* Allocator: reserved at the peak.
 * (1) segment rounding of the parameter-sized tensors (weights,
 * gradients, states, temporaries) live at the peak;
 * (2) blocks cached from earlier in the step that the peak's requests
 * cannot use: a layer's working set (its activations, and as much
 * again in activation gradients during its backward), the lm_head
 * output freed before the fp32 loss backward unless the step-1
 * gradients/states filled its block, and before an optimizer-step
 * peak the autocast copies (half the size of the fp32 requests).
 * Coefficients fitted on the 27 H200 records (README).
 * The caching allocator never returns memory within a step, so what it
 * holds at the end is the largest of the phases' reserved sizes, not
 * the reserve at the allocated peak: a phase with less live memory but
 * more fragmentation can decide it (and the result then never shrinks
 * as the batch grows). The optimizer step's new allocations (the foreach
 * temporaries) are fp32-sized and cannot reuse the bf16 autocast blocks
 * cached from the forward: the reserve grows by what does not fit, at
 * most the autocast copies, and not at all for optimizers that allocate
 * nothing large in their step (fused, 8-bit, SGD). */
static double train_reserve(const struct llm *m, const struct vf_estimate *e,
			    const struct live ph[VF_PHASE_COUNT], const double sums[VF_PHASE_COUNT])
{
	double lc = e->loss_transient;
	double spare = lc - (m->G + (m->S - m->S_paged) + m->OT);
	double rounding = m->s->rounding;
	double AC = m->AC, OT = m->OT;
	double reserved = 0;
	for (int i = 0; i < VF_PHASE_COUNT; i++) {
		const struct live *l = &ph[i];
		double frag = FRAG_LAYER * m->A_layer +
			      (i == VF_PHASE_OPTIMIZER ? FRAG_AUTOCAST * (AC < OT ? AC : OT)
						       : FRAG_LOGITS * (spare > 0 ? spare : 0));
		double r = sums[i] + rounding * (l->w + l->g + l->o + l->ot) + frag;
		if (r > reserved)
			reserved = r;
	}
	return reserved;
}

/* A training step's time (step_time), with the optimizer step's memory
 * traffic and the data-parallel communication. */
static void train_time(const struct llm *m, const struct vf_gpu_spec *gpu, struct vf_estimate *e)
{
	const struct vf_setup *su = m->su;
	double T = m->T, gb = m->gb;
	/* the step's element passes from the optimizer's code (optstep.c:
	 * foreach AdamW 20, fused 7, SGD with momentum 8, Lion 19, Adafactor
	 * 21 over its 2-D tensors, which hold nearly all the elements);
	 * bitsandbytes 8-bit: read param and grad, two 1-byte states, write
	 * param and the states */
	struct vf__opt_kernels k;
	vf__opt_kernels((int)su->optimizer, (int)su->optimizer_impl, &k);
	double opt_traffic = su->optimizer == VF_OPT_ADAMW8BIT ? T * (3 * gb + 4) : T * gb * k.passes;
	/* each rank clips and unscales the gradients it holds (ZeRO-2/3 and
	 * FSDP: its shard) */
	struct step_extra x = {.grad_bytes = T * gb / m->shard_g, .opt_elems = T / m->shard_o};
	if (su->offload != VF_OFFLOAD_NONE) {
		/* the step runs on the host over fp32 copies of the GPU's shard,
		 * the GPU steps nothing. optimizer (DeepSpeed ZeRO-Offload):
		 * DeepSpeedCPUAdam's fused loop (csrc/adam/cpu_adam_impl.cpp)
		 * reads parameter, gradient, m and v and writes parameter, m and
		 * v once; params (FSDP): torch.optim's foreach passes on CPU
		 * tensors, the GPU formula's with 4-byte elements */
		bool fused = su->optimizer == VF_OPT_ADAMW && su->offload == VF_OFFLOAD_OPTIMIZER;
		x.host_opt_bytes = (fused ? T * 7 * 4 : opt_traffic / (gb > 0 ? gb : 4) * 4) / m->shard_o;
		opt_traffic = 0;
		x.opt_elems = 0;
		x.cpu_fwd_bytes = m->pcie_fwd;
		x.cpu_bwd_bytes = m->pcie_bwd;
		x.cpu_after_bytes = m->pcie_after;
	}
	/* each rank steps only the states it holds: ZeRO-1/2/3 update their
	 * partition, FSDP's optimizer runs on the local shards of its DTensor
	 * parameters (the memory's S / shard_o) */
	opt_traffic /= m->shard_o;
	if (su->activation_offload) { /* saved tensors out in the forward, back in the backward */
		double kept = 2, layers = m->layers > kept ? m->layers - kept : 0;
		x.offload_bytes = 2 * layers * (su->grad_ckpt ? m->ckpt_in : m->A_layer);
	}
	if (su->paged_optimizer && gpu) /* states beyond the card live on the host */
		x.paged_bytes = vf_estimate_paged_traffic_bytes(e, gpu);
	step_time(m->cx, m->s, su, &m->d, gpu, T, opt_traffic, &x, e);
	/* only a multi-GPU step communicates (vf__estimate_add_comm) */
	const struct vf__link *link = m->cx && su->gpus > 1 ? ctx_link(m->cx, gpu, su->gpus) : NULL;
	vf__estimate_add_comm_link(su, gpu, link, m->layers, e);
}

/* Training: the phases of a steady-state step, the peak among them, the
 * allocator's reserve and the step time. */
static void train_estimate(const struct llm *m, const struct vf_gpu_spec *gpu,
			   struct vf_estimate *e, struct vf__step *st, bool timed)
{
	struct live ph[VF_PHASE_COUNT];
	memset(ph, 0, sizeof ph);
	double held_acts = held_activations(m);
	forward_phases(m, held_acts, ph);
	backward_phase(m, &ph[VF_PHASE_BACKWARD]);
	optimizer_phase(m, ph);
	paged_outside_allocator(m, ph);
	double best;
	double sums[VF_PHASE_COUNT]; /* every phase's live bytes, final from here on */
	int bi = peak_phase(ph, VF_PHASE_COUNT - 1, &best, sums);
	e->activations_full = clamp64(held_acts + m->emb_out + m->final_norm + WORKSPACE_BYTES);
	if (st)
		train_trace(m, st);
	finish_terms_sums(e, ph, sums, train_reserve(m, e, ph, sums), (enum vf_phase)bi,
			  !(m->cx && m->cx->no_phases));
	vf__mech_finish_peaks(e, m->su, m->S_paged, load_peak(m));
	offload_record(m, gpu, e);
	if (timed)
		train_time(m, gpu, e);
}

/* vf_estimate_run: the terms group by group, then the phases of an
 * inference or training step. st (may be NULL) receives the step's
 * tensors for the allocator simulation; timed: also the step time. */
static void estimate_llm(struct vf_estimate_ctx *cx, const struct vf_arch *arch,
			 const struct vf_setup *su, const struct vf_gpu_spec *gpu,
			 struct vf_estimate *e, struct vf__step *st, bool timed)
{
	struct llm m;
	struct shape headed; /* the model's shape with a task head (task_head) */
	memset(e, 0, sizeof *e);
	e->inference = su->mode == VF_MODE_INFER;
	const struct shape *s = llm_shape(cx, arch, su, gpu, &m);
	/* a context keeps the terms of the model's own shape: not with a
	 * task head (task_head) */
	struct prefix_entry *pre = cx && su->head_labels <= 0 ? &cx->pre[prefix_slot(su)] : NULL;
	if (pre && pre->gen == cx->gen && prefix_same(su, &pre->key)) {
		/* the same terms as that setup's: only the token counts differ;
		 * the shape is this call's (m.s_own is in this frame) */
		memcpy(&m, &pre->m, offsetof(struct llm, s_own));
		m.su = su;
		m.s = s;
		llm_tokens(&m);
		e->params = pre->params;
		e->trainable_params = pre->trainable;
		e->tokens_per_step = clamp64(m.N * (double)su->grad_accum * m.ngpu);
	} else {
		llm_setup(cx, su, s, &m);
		task_head(&m, &headed);
		count_parameters(&m, e);
		head_adapter(&m, e);
		weights_term(&m);
		gradients_term(&m);
		states_term(&m);
		optimizer_temp_term(&m);
		saved_modules(&m, e);
		sharding(&m);
		autocast_term(&m);
		layer_tokens(&m);
		if (pre) {
			pre->key = *su;
			memcpy(&pre->m, &m, offsetof(struct llm, s_own));
			pre->params = e->params;
			pre->trainable = e->trainable_params;
			pre->gen = cx->gen;
		}
	}
	activations_term(&m);
	head_inputs(&m);
	float8_linears(&m);
	kbit_saved_inputs(&m);
	if (su->kbit_head || su->graph_held || su->lora_dropout) { /* litgpt's (mechanisms.c) */
		litgpt_head_and_graph(&m);
		lora_dropout_masks(&m);
	}
	prequant_saved(&m);
	moe_expert_grad_transient(&m);
	selective_checkpointing(&m);
	offload_terms(&m);
	fsdp_units(&m);
	paged_states(&m);
	logits_term(&m);
	record_whole_terms(&m, gpu, e);
	if (m.d.train)
		train_estimate(&m, gpu, e, st, timed);
	else
		infer_estimate(&m, gpu, e, st, timed);
}

/* vf_estimate_run's context, one per thread, made at the thread's first
 * estimate (freed when the thread ends: run_key's destructor): its layer
 * memo is RUN_MEMO index slots (3/4 as many entries), emptied when full.
 * Keyed as any context: the model's and the GPU's bytes, the setup's
 * knobs (prefix_same, struct layer_key), so an estimate is the one
 * computed afresh, bit for bit (vf_estimate_run_ctx). Fresh zero pages
 * of its own mapping, faulted in only as the estimate touches them: in
 * the thread's storage (it was, 78 KiB of .tbss) the loader and
 * pthread_create zeroed all of it, 20 page faults in every process and
 * thread, --version included, and calloc zeroes memory the heap reuses
 * (13 faults of a one-GPU estimate; issue 21). run_busy: an estimate made while this thread's is under way
 * (none does today) runs without it, so the one under way keeps its shape
 * and slots. Without memory, an estimate runs without a context (the
 * same figures). */
#define RUN_MEMO 128 /* a power of 2 */
struct run_ctx {
	struct vf_estimate_ctx cx;
	struct memo_ix ix[RUN_MEMO];
	struct layer_entry tab[RUN_MEMO / 4 * 3];
};
static _Thread_local struct run_ctx *run_ctx;
static _Thread_local bool run_busy;
static pthread_key_t run_key;
static pthread_once_t run_once = PTHREAD_ONCE_INIT;
static bool run_key_ok;

static void run_ctx_unmap(void *r) /* at the thread's end, in that thread */
{
	run_ctx = NULL;
	munmap(r, sizeof(struct run_ctx));
}

static void run_key_make(void)
{
	run_key_ok = pthread_key_create(&run_key, run_ctx_unmap) == 0;
}

/* This thread's context, made at its first call; NULL without memory. */
static struct vf_estimate_ctx *run_ctx_get(void)
{
	if (run_ctx)
		return &run_ctx->cx;
	pthread_once(&run_once, run_key_make);
	if (!run_key_ok)
		return NULL;
	struct run_ctx *r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	if (pthread_setspecific(run_key, r) != 0) {
		munmap(r, sizeof *r);
		return NULL;
	}
	r->cx.gen = 1;
	r->cx.ix = r->ix;
	r->cx.tab = r->tab;
	r->cx.cap = RUN_MEMO;
	r->cx.fixed = true;
	run_ctx = r;
	return &r->cx;
}

void vf_estimate_run(const struct vf_arch *arch, const struct vf_setup *su,
		     const struct vf_gpu_spec *gpu, struct vf_estimate *e)
{
	struct vf_estimate_ctx *cx = run_busy ? NULL : run_ctx_get();
	if (!cx) {
		estimate_llm(NULL, arch, su, gpu, e, NULL, true);
		return;
	}
	run_busy = true;
	estimate_llm(cx, arch, su, gpu, e, NULL, true);
	run_busy = false;
}

void vf_estimate_run_ctx(struct vf_estimate_ctx *cx, const struct vf_arch *arch,
			 const struct vf_setup *su, const struct vf_gpu_spec *gpu,
			 struct vf_estimate *e)
{
	if (!cx) {
		vf_estimate_run(arch, su, gpu, e);
		return;
	}
	estimate_llm(cx, arch, su, gpu, e, NULL, true);
}

void vf__estimate_run_fresh(const struct vf_arch *arch, const struct vf_setup *su,
			    const struct vf_gpu_spec *gpu, struct vf_estimate *e)
{
	estimate_llm(NULL, arch, su, gpu, e, NULL, true);
}

/* A split setup (--tp, --pp, --split layers): the split of the model, each
 * GPU's slice replayed through the allocator (vf_split_simulate); the
 * limiting GPU's estimate with the whole step's time. No segments kept. */
static vf_status simulate_split(const struct vf_arch *arch, const struct vf_setup *su,
				const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
				struct vf_replay_memo *memo, struct vf_estimate *e,
				struct vf_alloc **sim, struct vf_error *err)
{
	if (sim)
		*sim = NULL;
	struct vf_split *sp = vf_split_new();
	if (!sp)
		return vf_error_set(err, VF_ENOMEM, "allocator simulation: out of memory");
	vf_status rc = vf_split_run(arch, su, gpu, sp, err);
	if (rc == VF_OK)
		rc = vf_split_simulate(arch, su, gpu, cfg, memo, sp, err);
	if (rc == VF_OK)
		*e = sp->total;
	free(sp);
	return rc;
}

/* One replay of st: kept in *keep when keep is given (its segments are
 * read), else its peaks only, from memo when it was replayed before. */
static vf_status replay(const struct vf__step *st, const struct vf_alloc_config *c,
			struct vf_replay_memo *memo, struct vf_alloc **keep,
			struct vf__replay_peaks *p, struct vf_error *err)
{
	if (!keep)
		return vf__step_peaks(st, c, memo, p, err);
	vf_status rc = vf__step_simulate(st, c, keep, err);
	if (rc == VF_OK)
		vf__replay_peaks_of(*keep, p);
	return rc;
}

/* Replayed without a capacity first. A capacity at or above that peak
 * never comes into play (the same replay); one below the peak of the live
 * requests runs out of memory whatever the cache holds; in between the
 * replay with the capacity decides (the cache released and retried). Out
 * of memory: the reserve the step would need is the one without a
 * capacity. *p: the peaks that stand; *a (when sim) their replay. */
static vf_status replay_with_capacity(const struct vf__step *st, struct vf_alloc_config c,
				      struct vf_replay_memo *memo, bool sim, struct vf_alloc **a,
				      struct vf__replay_peaks *p, bool *oom, struct vf_error *err)
{
	int64_t cap = c.capacity_bytes;
	c.capacity_bytes = 0;
	vf_status rc = replay(st, &c, memo, sim ? a : NULL, p, err);
	if (rc != VF_OK || cap <= 0 || p->reserved <= cap)
		return rc;
	if (p->requested > cap) {
		*oom = true;
		return VF_OK;
	}
	struct vf_alloc *b = NULL;
	struct vf__replay_peaks q;
	c.capacity_bytes = cap;
	rc = replay(st, &c, memo, sim ? &b : NULL, &q, err);
	if (rc == VF_OK && q.oom) {
		*oom = true;
		vf_alloc_free(b);
	} else if (rc == VF_OK) {
		vf_alloc_free(*a);
		*a = b;
		*p = q;
	}
	return rc;
}

/* The replay (steptrace.c) has neither litgpt's held previous step nor its
 * quantized head's dequantized copies (litgpt_head_and_graph): when the
 * analytic peak is the forward's end those set, or the head is quantized,
 * the replay would miss the peak. */
static bool replay_lacks_peak(const struct vf_setup *su, const struct vf_estimate *e)
{
	if (su->mode == VF_MODE_INFER)
		return false;
	return (su->kbit_head && su->quant == VF_QUANT_NF4) ||
	       (su->graph_held && e->peak_phase == VF_PHASE_FORWARD);
}

/* FSDP's whole gradients under no_sync accumulation (fsdp_no_sync_grads)
 * are replayed (steptrace.c layer_grads), but not with the optimizer
 * stepped in the backward, whose hooks under no_sync the replay does not
 * order. */
static bool replay_lacks_no_sync(const struct vf_setup *su)
{
	return su->fsdp_no_sync && su->grad_accum > 1 && su->shard == VF_SHARD_FSDP && su->gpus > 1 &&
	       su->mode != VF_MODE_INFER && su->offload == VF_OFFLOAD_NONE &&
	       su->optimizer_in_backward;
}

vf_status vf_estimate_simulate(const struct vf_arch *arch, const struct vf_setup *su,
			       const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
			       struct vf_estimate *e, struct vf_alloc **sim, struct vf_error *err)
{
	return vf_estimate_simulate_memo(arch, su, gpu, cfg, NULL, e, sim, err);
}

/* Why st (of setup su, estimated as e) is not replayed: the analytic
 * reserve stands and the output says so; NULL when it is replayed. */
static const char *replay_skipped(const struct vf__step *st, const struct vf_setup *su,
				  const struct vf_estimate *e)
{
	if (st->layers > VF_ESTIMATE_SIM_MAX_LAYERS)
		return "over 512 layers: the allocator is not replayed";
	if (e->peak_allocated_bytes > VF_ALLOC_MAX_REQUEST)
		return "over 1 PiB: the allocator is not replayed";
	if (su->offload != VF_OFFLOAD_NONE && su->mode != VF_MODE_INFER)
		return "CPU offload: the allocator is not replayed";
	if (replay_lacks_peak(su, e))
		return "the previous step held through the forward and the quantized lm_head "
		       "(stack mechanisms graph_held, kbit_head) are not in the replay: the "
		       "analytic reserve";
	if (replay_lacks_no_sync(su))
		return "FSDP's whole gradients kept under no_sync accumulation (stack mechanism "
		       "fsdp_no_sync) with the optimizer in the backward are not in the replay: "
		       "the analytic reserve";
	return NULL;
}

vf_status vf_estimate_simulate_memo(const struct vf_arch *arch, const struct vf_setup *su,
				    const struct vf_gpu_spec *gpu,
				    const struct vf_alloc_config *cfg,
				    struct vf_replay_memo *memo, struct vf_estimate *e,
				    struct vf_alloc **sim, struct vf_error *err)
{
	if (vf_split_active(su)) /* what each GPU of the split allocates */
		return simulate_split(arch, su, gpu, cfg, memo, e, sim, err);
	struct vf__step *st = calloc(1, sizeof *st);
	if (!st)
		return vf_error_set(err, VF_ENOMEM, "allocator simulation: out of memory");
	estimate_llm(NULL, arch, su, gpu, e, st, true);
	/* The replay's work grows with the layers (each is replayed); no public
	 * model has over 126, so past 512 (and past 1 PiB, which no device
	 * holds) the analytic reserve stands and the output says so. */
	e->sim_skipped = replay_skipped(st, su, e);
	if (e->sim_skipped) {
		free(st);
		return VF_OK;
	}
	struct vf_alloc_config c = cfg ? *cfg : (struct vf_alloc_config){0};
	int64_t vram = vf_estimate_gpu_bytes(gpu);
	if (c.capacity_bytes <= 0 && vram > 0)
		c.capacity_bytes = vram - e->context_bytes; /* full: the cache is released and retried */
	struct vf_alloc *a = NULL;
	struct vf__replay_peaks p;
	vf_status rc = replay_with_capacity(st, c, memo, sim != NULL, &a, &p, &e->sim_oom, err);
	free(st);
	if (rc != VF_OK)
		return rc;
	e->analytic_reserved_bytes = e->step_peak_reserved_bytes;
	int64_t reserved = p.reserved;
	e->sim_allocated_bytes = p.allocated;
	e->sim_retries = e->sim_oom ? 0 : p.retries; /* out of memory: the peaks without a capacity */
	e->sim_short = reserved < e->step_peak_allocated_bytes;
	if (e->sim_short)
		reserved = e->step_peak_allocated_bytes;
	e->peak_allocated_bytes = e->step_peak_allocated_bytes;
	e->peak_reserved_bytes = reserved;
	vf__mech_finish_peaks(e, su, (double)e->paged_bytes, (double)e->load_peak_allocated_bytes);
	if (e->phases & (1u << e->peak_phase)) /* the peak phase's reserve is the simulation's */
		e->phase_bytes[e->peak_phase][VF_TERM_ALLOCATOR] = e->allocator_bytes;
	e->simulated = true;
	if (sim)
		*sim = a;
	else
		vf_alloc_free(a);
	return VF_OK;
}

/* The step's allocator calls (a replay's weight); with a memo, the replay
 * announced to it as one a caller will ask for (its prefix kept). */
static double replay_calls(const struct vf_arch *arch, const struct vf_setup *su,
			   const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
			   struct vf_replay_memo *memo)
{
	if (vf_split_active(su))
		return 1;
	struct vf__step *st = calloc(1, sizeof *st);
	struct vf_estimate *e = malloc(sizeof *e);
	double w = 1;
	if (st && e) {
		estimate_llm(NULL, arch, su, gpu, e, st, true);
		w = vf__step_calls(st);
		if (memo) {
			struct vf_alloc_config c = cfg ? *cfg : (struct vf_alloc_config){0};
			c.capacity_bytes = 0; /* replayed without one first (replay_with_capacity) */
			if (!replay_skipped(st, su, e))
				vf__replay_memo_expect(memo, st, &c);
		}
	}
	free(st);
	free(e);
	return w;
}

double vf_estimate_replay_weight(const struct vf_arch *arch, const struct vf_setup *su,
				 const struct vf_gpu_spec *gpu)
{
	return replay_calls(arch, su, gpu, NULL, NULL);
}

double vf_estimate_expect_replay(const struct vf_arch *arch, const struct vf_setup *su,
				 const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
				 struct vf_replay_memo *memo)
{
	return replay_calls(arch, su, gpu, cfg, memo);
}

void vf_estimate_prefetch_memo(const struct vf_arch *arch, const struct vf_setup *su,
			       const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
			       struct vf_replay_memo *memo)
{
	if (!memo)
		return;
	struct vf_estimate *e = malloc(sizeof *e);
	if (!e)
		return; /* the later call replays, or says it is out of memory */
	struct vf_error err = {0};
	vf__replay_memo_nowait(true);
	(void)vf_estimate_simulate_memo(arch, su, gpu, cfg, memo, e, NULL, &err);
	vf__replay_memo_nowait(false);
	free(e);
}

/* The largest micro-batch whose predicted peak stays within vram_bytes:
 * grow by doubling until it no longer fits, then bisect (the peak never
 * shrinks as the batch grows: tests/unit/test-estimate.c). `peak` runs the
 * model for one batch size; capped at `cap`. */
static int64_t max_batch_search(int64_t (*peak)(const void *model, const struct vf_setup *,
						const struct vf_gpu_spec *),
				const void *model, const struct vf_setup *setup,
				const struct vf_gpu_spec *gpu, int64_t vram_bytes, int64_t cap)
{
	if (vram_bytes <= 0)
		vram_bytes = vf_estimate_gpu_bytes(gpu);
	if (vram_bytes <= 0)
		return 0;
	struct vf_setup su = *setup;
	int64_t lo = 0, hi = 1;
	for (;;) {
		su.batch = hi;
		if (peak(model, &su, gpu) > vram_bytes)
			break;
		lo = hi;
		if (hi >= cap)
			return lo;
		hi = hi * 2 > cap ? cap : hi * 2;
	}
	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;
		su.batch = mid;
		if (peak(model, &su, gpu) > vram_bytes)
			hi = mid;
		else
			lo = mid;
	}
	return lo;
}

static int64_t llm_peak(const void *arch, const struct vf_setup *su, const struct vf_gpu_spec *gpu)
{
	struct vf_estimate e;
	estimate_llm(NULL, arch, su, gpu, &e, NULL, false); /* memory only */
	return e.peak_bytes;
}

int64_t vf_estimate_max_batch(const struct vf_arch *arch, const struct vf_setup *setup,
			      const struct vf_gpu_spec *gpu, int64_t vram_bytes)
{
	return max_batch_search(llm_peak, arch, setup, gpu, vram_bytes, 1 << 20);
}

/* 1 fits, 0 does not, -1 simulation failed. limit: the bytes the peak
 * may reach (<= 0: the card's, vf_estimate_fits). */
static int sim_fits(const struct vf_arch *arch, const struct vf_setup *su, int64_t batch,
		    const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
		    struct vf_replay_memo *memo, int64_t limit)
{
	struct vf_setup s = *su;
	s.batch = batch;
	struct vf_estimate e;
	struct vf_error err = {0};
	/* Without a replay when the answer is no whatever it finds: the
	 * simulated peak is at least the context plus the allocated peak
	 * (vf_estimate_simulate never reserves less than is allocated), and a
	 * setup the simulation skips keeps this very estimate. */
	int64_t vram = limit > 0 ? limit : vf_estimate_gpu_bytes(gpu);
	if (!vf_split_active(&s)) { /* a split's: each GPU's slice, replayed below */
		estimate_llm(NULL, arch, &s, gpu, &e, NULL, false);
		if (vram > 0 && vram - (e.context_bytes + e.peak_allocated_bytes) + e.evictable_bytes < 0 &&
		    e.peak_bytes >= e.context_bytes + e.peak_allocated_bytes)
			return 0;
	}
	if (vf_estimate_simulate_memo(arch, &s, gpu, cfg, memo, &e, NULL, &err) != VF_OK)
		return -1;
	if (limit > 0)
		return !e.sim_oom && e.peak_bytes <= limit;
	return vf_estimate_fits(&e, gpu, NULL) ? 1 : 0;
}

/* The largest batch in [lo, hi) that fits, lo fitting and hi not (the
 * simulation's answer taken as monotone between them); -1 when a
 * simulation failed. */
static int64_t bisect_fits(const struct vf_arch *arch, const struct vf_setup *setup,
			   const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
			   struct vf_replay_memo *memo, int64_t limit, int64_t lo, int64_t hi)
{
	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;
		int g = sim_fits(arch, setup, mid, gpu, cfg, memo, limit);
		if (g < 0)
			return -1;
		if (g)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The largest batch below hi (which the simulation refuses) that fits:
 * step down from hi until one fits, then bisect; 0 when none, -1 when a
 * simulation failed. */
static int64_t fits_below(const struct vf_arch *arch, const struct vf_setup *setup,
			  const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
			  struct vf_replay_memo *memo, int64_t limit, int64_t hi)
{
	int64_t lo = hi, step = 1;
	for (;;) {
		lo = hi > step ? hi - step : 0;
		if (lo == 0)
			break;
		int g = sim_fits(arch, setup, lo, gpu, cfg, memo, limit);
		if (g < 0)
			return -1;
		if (g)
			break;
		hi = lo;
		step *= 2;
	}
	return bisect_fits(arch, setup, gpu, cfg, memo, limit, lo, hi);
}

/* The largest batch from lo (which the simulation fits) up whose next
 * does not fit: step up from lo, doubling, until one does not fit, then
 * bisect (stepping up a fixed 8 stopped short: t5-base LoRA at seq 256 on
 * an h100-80gb, 166 where batches to 169 fit); -1 when a simulation failed. */
static int64_t fits_above(const struct vf_arch *arch, const struct vf_setup *setup,
			  const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
			  struct vf_replay_memo *memo, int64_t limit, int64_t lo)
{
	int64_t hi = lo, step = 1;
	for (;;) {
		if (lo >= (1 << 20))
			return lo;
		hi = lo + step;
		int g = sim_fits(arch, setup, hi, gpu, cfg, memo, limit);
		if (g < 0)
			return -1;
		if (!g)
			break;
		lo = hi;
		step *= 2;
	}
	return bisect_fits(arch, setup, gpu, cfg, memo, limit, lo, hi);
}

/* The fast path's largest batch: the whole model's, or a split's (every
 * GPU of it under the limit: split.h). */
static int64_t analytic_max_batch(const struct vf_arch *arch, const struct vf_setup *setup,
				  const struct vf_gpu_spec *gpu, int64_t limit)
{
	if (vf_split_active(setup))
		return vf_split_max_batch(arch, setup, gpu, limit);
	return vf_estimate_max_batch(arch, setup, gpu, limit);
}

/* A split setup (--tp, --pp, --split layers) is searched by the rule its
 * verdict is given by: each GPU's slice replayed (vf_estimate_simulate_memo:
 * simulate_split), the fast path's answer only where the search starts. */
int64_t vf_estimate_max_batch_limit_simulated(const struct vf_arch *arch, const struct vf_setup *setup,
					      const struct vf_gpu_spec *gpu,
					      const struct vf_alloc_config *cfg,
					      struct vf_replay_memo *memo, int64_t limit)
{
	int64_t b = analytic_max_batch(arch, setup, gpu, limit);
	if (vf_estimate_gpu_bytes(gpu) <= 0)
		return b;
	int f = b > 0 ? sim_fits(arch, setup, b, gpu, cfg, memo, limit) : 1;
	if (f < 0)
		return -1;
	if (f) /* the simulation may allow more: as many as it does */
		b = fits_above(arch, setup, gpu, cfg, memo, limit, b);
	else
		b = fits_below(arch, setup, gpu, cfg, memo, limit, b);
	if (b < 0)
		return -1;
	/* The reserved peak is not monotone in the batch (the blocks cached
	 * before the optimizer step differ: PyTorch's best fit over them), so
	 * the search's premise is checked where it answers: the batch below
	 * its answer fits too, or the answer is searched again below it. */
	while (b > 1) {
		int g = sim_fits(arch, setup, b - 1, gpu, cfg, memo, limit);
		if (g < 0)
			return -1;
		if (g)
			break;
		b = fits_below(arch, setup, gpu, cfg, memo, limit, b - 1);
	}
	return b;
}

int64_t vf_estimate_max_batch_simulated(const struct vf_arch *arch, const struct vf_setup *setup,
					const struct vf_gpu_spec *gpu,
					const struct vf_alloc_config *cfg,
					struct vf_replay_memo *memo)
{
	return vf_estimate_max_batch_limit_simulated(arch, setup, gpu, cfg, memo, 0);
}

int64_t vf_estimate_generic_arch(int64_t params, struct vf_arch *a)
{
	/* A llama-like decoder: h chosen so that 12.6 h^2 L ~ params with
	 * L = h / 128 (the shape of 1B-70B llamas), vocab 32000. */
	vf_arch_init(a);
	double p = params > 0 ? (double)params : 1e9;
	double h = cbrt(p * 128.0 / 12.6);
	int64_t hh = (int64_t)(h / 128.0 + 0.5) * 128;
	if (hh < 256)
		hh = 256;
	int64_t L = (int64_t)((p - 2.0 * 32000 * (double)hh) / (12.6 * (double)hh * (double)hh) + 0.5);
	if (L < 1)
		L = 1;
	snprintf(a->family, sizeof a->family, "llama");
	a->hidden = hh;
	a->layers = L;
	a->decoder_layers = 0;
	a->heads = hh / 128 > 0 ? hh / 128 : 1;
	a->kv_heads = a->heads;
	a->head_dim = hh / a->heads;
	a->ffn = (int64_t)(2.6875 * (double)hh / 256 + 0.5) * 256;
	/* parameters: embeddings and head 2 V h, per layer attention 4 h^2,
	 * SwiGLU 3 h ffn and two norms, one final norm */
	double layer = 4.0 * (double)hh * (double)hh + 3.0 * (double)hh * (double)a->ffn + 2.0 * (double)hh;
	double body = (double)L * layer + (double)hh;
	double vocab = 32000;
	if (2 * vocab * (double)hh + body > p) /* a small model: a smaller vocabulary */
		vocab = (p - body) / (2.0 * (double)hh) < 256 ? 256 : floor((p - body) / (2.0 * (double)hh));
	a->vocab = (int64_t)vocab;
	a->tied_embeddings = false;
	a->experts = 0;
	a->experts_per_token = 0;
	a->max_positions = 4096;
	a->gated_mlp = true;
	a->layer_norm = false;
	a->rotary_pct = 1;
	a->norms_per_layer = 2;
	a->known = VF_ARCH_F_FAMILY | VF_ARCH_F_HIDDEN | VF_ARCH_F_LAYERS | VF_ARCH_F_HEADS |
		   VF_ARCH_F_KV_HEADS | VF_ARCH_F_HEAD_DIM | VF_ARCH_F_FFN | VF_ARCH_F_VOCAB |
		   VF_ARCH_F_TIED;
	snprintf(a->source, sizeof a->source, "params");
	return (int64_t)(2 * vocab * (double)hh + body);
}

cJSON *vf_estimate_memory_json(const struct vf_estimate *e)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "weights_bytes", (double)e->weights_bytes);
	cJSON_AddNumberToObject(o, "gradients_bytes", (double)e->gradients_bytes);
	cJSON_AddNumberToObject(o, "optimizer_bytes", (double)e->optimizer_bytes);
	cJSON_AddNumberToObject(o, "optimizer_temp_bytes", (double)e->optimizer_temp_bytes);
	cJSON_AddNumberToObject(o, "autocast_cache_bytes", (double)e->autocast_cache_bytes);
	cJSON_AddNumberToObject(o, "activations_bytes", (double)e->activations_bytes);
	cJSON_AddNumberToObject(o, "logits_bytes", (double)e->logits_bytes);
	cJSON_AddNumberToObject(o, "kv_cache_bytes", (double)e->kv_cache_bytes);
	cJSON_AddNumberToObject(o, "context_bytes", (double)e->context_bytes);
	cJSON_AddNumberToObject(o, "allocator_bytes", (double)e->allocator_bytes);
	cJSON_AddNumberToObject(o, "peak_allocated_bytes", (double)e->peak_allocated_bytes);
	cJSON_AddNumberToObject(o, "peak_bytes", (double)e->peak_bytes);
	cJSON_AddStringToObject(o, "peak_phase",
				e->peak_at_load ? "load" : vf_estimate_phase_name(e, e->peak_phase));
	cJSON_AddStringToObject(o, "dominant_term", vf_term_name(e->dominant));
	if (e->run_peak_bytes > 0) /* LLM estimates (mechanisms.c); DiTs have their own */
		cJSON_AddItemToObject(o, "peaks", vf__mech_peaks_json(e));
	if (e->offload != VF_OFFLOAD_NONE) {
		cJSON *of = cJSON_AddObjectToObject(o, "offload");
		cJSON_AddStringToObject(of, "kind", vf__mech_offload_name(e->offload));
		cJSON_AddNumberToObject(of, "host_bytes", (double)e->offload_host_bytes);
		cJSON_AddNumberToObject(of, "pcie_bytes_per_step", (double)e->offload_pcie_bytes);
		cJSON_AddNumberToObject(of, "pcie_seconds_per_step", e->offload_pcie_seconds);
	}
	if (e->sim_skipped) /* only then: every other estimate's JSON as it was */
		cJSON_AddStringToObject(o, "allocator_not_simulated", e->sim_skipped);
	if (e->simulated && e->sim_short) /* likewise: the replay fell short of the step */
		cJSON_AddNumberToObject(o, "allocator_replay_allocated_bytes", (double)e->sim_allocated_bytes);
	return o;
}

cJSON *vf_estimate_time_json(const struct vf_estimate *e)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "flops_per_step", e->flops_per_step);
	if (e->step_seconds > 0) {
		cJSON_AddNumberToObject(o, "step_seconds", e->step_seconds);
		cJSON_AddNumberToObject(o, "tokens_per_second", e->tokens_per_second);
		cJSON_AddNumberToObject(o, "mfu", e->mfu);
	} else {
		cJSON_AddNullToObject(o, "step_seconds");
		cJSON_AddNullToObject(o, "tokens_per_second");
		cJSON_AddNullToObject(o, "mfu");
	}
	cJSON *p = vf_estimate_parts_json(e);
	if (p)
		cJSON_AddItemToObject(o, "parts", p);
	return o;
}

int vf_estimate_parts_list(const struct vf_estimate *e, const char *names[16], double values[16])
{
	const struct vf_step_parts *p = &e->parts;
	const struct {
		const char *name;
		double v;
	} part[] = {{"gemm", p->gemm},
		    {"attention", p->attention},
		    {"memory_bound", p->memory_bound},
		    {"launch", p->launch},
		    {"moe", p->moe},
		    {"dequant", p->dequant},
		    {"optimizer", p->optimizer},
		    {"offload", p->offload},
		    {"paging", p->paging},
		    {"cpu_offload", p->cpu_offload},
		    {"host_optimizer", p->host_optimizer},
		    {"fixed", p->fixed},
		    {"comm_exposed", p->comm_exposed},
		    {"comm_interference", p->comm_interference}};
	int n = 0;
	for (size_t i = 0; i < sizeof part / sizeof part[0] && n < 16; i++, n++) {
		names[n] = part[i].name;
		values[n] = part[i].v;
	}
	return n;
}

cJSON *vf_estimate_parts_json(const struct vf_estimate *e)
{
	if (!(e->step_seconds > 0) || !(e->parts.compute > 0))
		return NULL;
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	const char *names[16];
	double v[16];
	int n = vf_estimate_parts_list(e, names, v);
	for (int i = 0; i < n; i++)
		cJSON_AddNumberToObject(o, names[i], v[i]);
	cJSON_AddNumberToObject(o, "compute", e->parts.compute);
	cJSON_AddNumberToObject(o, "comm_total", e->parts.comm_total);
	if (e->parts.link[0])
		cJSON_AddStringToObject(o, "link", e->parts.link);
	else
		cJSON_AddNullToObject(o, "link");
	return o;
}

/* ---- shared with dit.c (estimate_internal.h) ------------------------------ */

int64_t vf__estimate_clamp64(double x)
{
	return clamp64(x);
}

double vf__estimate_popcount(unsigned x)
{
	return popcount(x);
}

double vf__estimate_live_sum(const struct live *l)
{
	return live_sum(l);
}

double vf__estimate_quant_bytes(enum vf_quant q, double P)
{
	return quant_bytes(q, P);
}

double vf__estimate_state_bytes(const struct vf_setup *su, double h, double f, double linear,
				double T, double pb, bool lora)
{
	struct shape s;
	memset(&s, 0, sizeof s);
	s.h = h;
	s.f = f;
	s.linear = linear;
	return state_bytes(su, &s, T, pb, lora);
}

void vf__estimate_finish_terms(struct vf_estimate *e, const struct live ph[VF_PHASE_COUNT], double reserved,
			       enum vf_phase bi)
{
	finish_terms(e, ph, reserved, bi);
}

int64_t vf__estimate_max_batch_search(int64_t (*peak)(const void *model, const struct vf_setup *,
						      const struct vf_gpu_spec *),
				      const void *model, const struct vf_setup *setup,
				      const struct vf_gpu_spec *gpu, int64_t vram_bytes, int64_t cap)
{
	return max_batch_search(peak, model, setup, gpu, vram_bytes, cap);
}

const char *vf_estimate_retries_note(int64_t retries, char *b, size_t n)
{
	if (retries <= 0)
		return NULL;
	snprintf(b, n, "device peak with the allocator at the card's limit: cache freed and the "
		 "cudaMalloc retried %lld time%s (PyTorch's num_alloc_retries); a card with more "
		 "memory keeps more cached and reads a higher peak",
		 (long long)retries, retries == 1 ? "" : "s");
	return b;
}
