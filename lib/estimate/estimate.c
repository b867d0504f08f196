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
 * No allocation anywhere: vf_estimate_run is called millions of times by
 * the fit search. */
#include "vramfit/estimate/estimate.h"

#include "vramfit/base/json.h"
#include "vramfit/model/models.h"

#include "estimate_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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
	/* parameters */
	double params;            /* total (tied once) */
	double emb;               /* embedding group (token + positions + untied head) */
	double linear;            /* attention + MLP + experts (matrices and biases) */
	double active_linear;     /* linear parameters one token passes through */
	double norm;
	double largest;           /* elements of the largest parameter tensor */
	double layer_linear;      /* linear parameters of one layer (for recompute) */
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

static void shape_from_arch(const struct vf_arch *a, struct shape *s)
{
	memset(s, 0, sizeof *s);
	const char *fam = a->family;
	s->fc = FC_LLAMA;
	switch (fam[0]) { /* first letter first: this runs millions of times */
	case 'g':
		if (fam_is(fam, "gpt2"))
			s->fc = FC_GPT2;
		else if (fam_is(fam, "gpt_neox"))
			s->fc = FC_NEOX;
		else if (strncmp(fam, "gemma", 5) == 0)
			s->fc = FC_GEMMA;
		break;
	case 'f':
		if (fam_is(fam, "falcon"))
			s->fc = FC_FALCON;
		break;
	case 't':
		if (fam_is(fam, "t5"))
			s->fc = FC_T5;
		break;
	case 'p':
		if (fam_is(fam, "phi3"))
			s->fc = FC_PHI3;
		break;
	default:
		break;
	}

	s->h = (double)(a->hidden > 0 ? a->hidden : 1);
	s->heads = (double)(a->heads > 0 ? a->heads : 1);
	double hd = a->head_dim > 0 ? (double)a->head_dim : s->h / s->heads;
	s->hq = s->heads * hd;
	s->hkv = (a->kv_heads > 0 ? (double)a->kv_heads : s->heads) * hd;
	s->f = a->ffn > 0 ? (double)a->ffn : 4 * s->h;
	s->V = a->vocab > 0 ? (double)a->vocab : 32000;
	s->L = a->layers > 0 ? (double)a->layers : 1;
	s->Ld = a->decoder_layers > 0 ? (double)a->decoder_layers : 0;
	s->experts = a->experts > 0 ? (double)a->experts : 0;
	s->topk = a->experts_per_token > 0 ? (double)a->experts_per_token : (s->experts ? 2 : 0);
	s->gated = a->gated_mlp;
	s->tied = a->tied_embeddings;
	s->layer_norm = a->layer_norm || s->fc == FC_GPT2 || s->fc == FC_NEOX || s->fc == FC_FALCON;
	s->fused_qkv = s->fc == FC_GPT2 || s->fc == FC_NEOX || s->fc == FC_FALCON || s->fc == FC_PHI3;
	s->rotary = !(s->fc == FC_GPT2 || s->fc == FC_T5);
	s->fused_gate_up = s->fc == FC_PHI3;
	s->qk_norm = a->qk_norm;
	s->softcap_logits = fam_is(fam, "gemma2") ? 1 : 0;
	s->parallel = a->parallel_attn;
	s->norms_per_layer = a->norms_per_layer > 0 ? a->norms_per_layer : 2;
	/* Configuration defaults of transformers: GPT2Config resid/embd/attn
	 * pdrop 0.1, T5Config dropout_rate 0.1; the others 0. */
	s->dropout = (s->fc == FC_GPT2 || s->fc == FC_T5) ? 0.1 : 0.0;
	if (s->fc == FC_GPT2)
		s->act = ACT_GELU_PY; /* activation_function gelu_new */
	else if (s->fc == FC_T5)
		s->act = s->gated ? ACT_GELU_PY : ACT_RELU; /* gated-gelu (v1.1) or relu */
	else
		s->act = ACT_NATIVE;

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
	double layers = s->L + s->Ld;
	s->layer_linear = layers > 0 ? s->linear / layers : s->linear;
	if (s->experts > 0) {
		double dense_part = s->linear - s->L * s->experts * mlp1;
		s->active_linear = dense_part + s->L * s->topk * mlp1;
		if (s->active_linear < 0)
			s->active_linear = s->linear;
	} else {
		s->active_linear = s->linear;
	}
	double big = s->V * s->h;
	if (s->h * s->f > big)
		big = s->h * s->f;
	if (s->fused_qkv && s->h * 3 * s->hq > big)
		big = 3 * s->h * s->hq;
	s->largest = big;
}

/* LoRA adapter parameters: r x (in + out) per targeted matrix. */
static double lora_params(const struct shape *s, unsigned t, double r)
{
	double per = 0; /* per layer of one attention + one MLP */
	double h = s->h, f = s->f;
	double mlp_mult = s->experts > 0 ? s->experts : 1;
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
	double mlp = 0;
	if (s->gated) {
		if (t & VF_LORA_GATE)
			mlp += r * (h + f);
		if (t & VF_LORA_UP)
			mlp += r * (h + f);
	} else if (t & (VF_LORA_UP | VF_LORA_GATE)) {
		mlp += r * (h + f);
	}
	if (t & VF_LORA_DOWN)
		mlp += r * (f + h);
	if (s->fc == FC_T5) {
		/* encoder: self-attention; decoder: self + cross attention */
		double attn = per;
		return s->L * (attn + mlp) + s->Ld * (2 * attn + mlp);
	}
	return s->L * (per + mlp * mlp_mult);
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
		return 4 * h;
	}
	/* RMSNorm: x.to(fp32) saved by pow and rsqrt-mul; weight * x saves x
	 * (llama: x cast back to the input dtype; gemma: kept in fp32) */
	*out_bytes = d->R;
	double saved = 4 * h;
	if (d->full)
		saved += (s->fc == FC_GEMMA ? 4 : d->R) * h;
	return saved;
}

/* Activation bytes saved per token by one decoder layer (sdpa/flash
 * attention; the s^2 scores of eager attention are added by the caller). */
static double layer_bytes(const struct shape *s, const struct dt *d, bool eager)
{
	double h = s->h, f = s->f, hq = s->hq, hkv = s->hkv, C = d->C;
	unsigned t = d->lt;
	double xb, total = 0;
	double nl_qkv = s->fused_qkv ? ((t & (VF_LORA_Q | VF_LORA_K | VF_LORA_V)) ? 1 : 0)
				     : popcount(t & (VF_LORA_Q | VF_LORA_K | VF_LORA_V));
	double nl_o = (t & VF_LORA_O) ? 1 : 0;
	double nl_in = s->gated ? popcount(t & (VF_LORA_GATE | VF_LORA_UP))
				: ((t & (VF_LORA_GATE | VF_LORA_UP)) ? 1 : 0);
	double nl_down = (t & VF_LORA_DOWN) ? 1 : 0;

	/* attention block */
	total += norm_bytes(s, d, &xb);                          /* input norm */
	total += lin_in(d, h, xb, s->fused_qkv ? 1 : 3, nl_qkv); /* q, k, v inputs */
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
	double mlp_total = total;
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
			total += (4 + 4 + 2 + 4) * f;
		else
			total += 16 * f;
		ab = 4;
		break;
	}
	if (s->gated)
		total += ab * f + C * f;                         /* act output and up, kept by the product */
	if (s->dropout > 0 && s->fc == FC_T5)
		total += f;                                      /* dropout inside the T5 FF */
	total += lin_in(d, f, s->gated ? (ab > C ? ab : C) : ab, 1, nl_down); /* down input */
	if (s->dropout > 0)
		total += h;                                      /* dropout mask */
	if (s->experts > 0) {
		/* MoE: each token runs through topk experts; the router's
		 * logits and softmax (fp32) are small */
		double mlp = total - mlp_total;
		total = mlp_total + mlp * s->topk + 8 * s->experts;
	}
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

static int64_t clamp64(double x)
{
	if (!(x > 0))
		return 0;
	if (x > 1.0e18) /* an exabyte: terms can be summed without overflow */
		return (int64_t)1.0e18;
	return (int64_t)(x + 0.5);
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

bool vf_estimate_fits(const struct vf_estimate *e, const struct vf_gpu_spec *gpu, int64_t *headroom)
{
	int64_t vram = vf_estimate_gpu_bytes(gpu);
	int64_t room = vram - e->peak_bytes;
	if (headroom)
		*headroom = room;
	return vram > 0 && room >= 0;
}

static const char *const phase_names[] = {"forward",   "loss",       "backward",
					   "optimizer", "validation", "text-encoder"};
static const char *const term_names[] = {"weights",        "gradients",   "optimizer",
					  "optimizer_temp", "autocast_cache", "activations",
					  "logits",         "kv_cache",    "context",
					  "allocator"};

const char *vf_phase_name(enum vf_phase p)
{
	return (unsigned)p < VF_PHASE_COUNT ? phase_names[p] : "?";
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

/* Quantized bytes per parameter of the frozen base linear weights
 * (block scales included): bitsandbytes LLM.int8 (1 + fp32 scale per row),
 * NF4 with double quantisation (4.127 bits), int4 with fp16 scales per 128,
 * fp8 with per-tensor scales. */
static double quant_bytes(enum vf_quant q, double P)
{
	switch (q) {
	case VF_QUANT_INT8: return 1.0 + 4.0 / 4096;
	case VF_QUANT_INT4: return 0.5 + 2.0 / 128;
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

static void finish_terms(struct vf_estimate *e, const struct live *pk, double reserved,
			 enum vf_phase ph)
{
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
	e->peak_phase = ph;
	enum vf_term best = VF_TERM_WEIGHTS;
	for (int t = VF_TERM_WEIGHTS; t <= VF_TERM_KV_CACHE; t++)
		if (vf_estimate_term(e, (enum vf_term)t) > vf_estimate_term(e, best))
			best = (enum vf_term)t;
	e->dominant = best;
}


/* Step time. Matmul FLOPs (2 per multiply-add) of the forward: every
 * linear a token passes through, the lm_head, and attention (QK^T and PV;
 * causal kernels skip half). Backward = 2x forward for trainable weights,
 * 1x (input gradients only) for frozen ones; checkpointing adds a forward.
 *   time = FLOPs / (rate x u)                       matmuls
 *        + ACT_PASSES x activation bytes / bandwidth   elementwise kernels
 *        + optimizer state traffic / bandwidth        memory-bound update
 *        + T_STEP + T_LAYER x layers (+ checkpoint, for-loop overheads)
 *   u    = U_MAX x h/(h + U_HIDDEN) x N/(N + U_TOKENS)
 * with N the tokens per micro-batch and h the hidden size. */
static void step_time(const struct shape *s, const struct vf_setup *su, const struct dt *d,
		      const struct vf_gpu_spec *gpu, double T, double opt_traffic,
		      double act_traffic, double comm_bytes, struct vf_estimate *e)
{
	double b = (double)su->batch, sq = (double)su->seq;
	double tq = su->target_seq > 0 ? (double)su->target_seq : sq;
	double N = b * sq;
	double lin_f, attn_f, head_f;
	if (s->fc == FC_T5) {
		/* encoder tokens through encoder layers, decoder tokens through
		 * the decoder (self + cross attention: 1.5x an encoder layer) */
		double per_enc = s->layer_linear;
		lin_f = 2 * (N * per_enc * s->L + b * tq * per_enc * 1.5 * s->Ld);
		attn_f = 4 * s->hq * (b * sq * sq * s->L + b * tq * (tq + sq) * s->Ld);
		head_f = 2 * b * tq * s->V * s->h;
	} else {
		lin_f = 2 * N * s->active_linear;
		double causal = su->attention == VF_ATTN_EAGER ? 1.0 : 0.5;
		attn_f = 4 * N * sq * s->hq * s->L * causal;
		head_f = 2 * N * s->V * s->h;
	}
	double fwd = lin_f + attn_f + head_f;
	double flops, model_flops; /* executed (with recompute) and model FLOPs */
	if (!d->train) {
		flops = fwd;
	} else if (d->full) {
		flops = 3 * fwd;
	} else {
		/* frozen base: input gradients only; adapters are small */
		flops = 2 * fwd + 6 * N * (T > 0 ? T : 0);
	}
	model_flops = flops * (double)su->grad_accum;
	if (d->train && su->grad_ckpt)
		flops += lin_f + attn_f; /* the recomputed forward */
	flops *= (double)su->grad_accum;
	e->flops_per_step = flops;
	double rate = gpu ? gpu->bf16_tflops : 989.5; /* H200 datasheet when no GPU */
	if (gpu && !(rate > 0) && gpu->fp16_tflops > 0)
		rate = gpu->fp16_tflops; /* no bf16 tensor cores (V100, T4): fp16 */
	if (su->precision == VF_PREC_FP32)
		rate = gpu && gpu->fp32_tflops > 0 ? 2 * gpu->fp32_tflops : 134;
	if (!(rate > 0)) {
		e->assumed |= VF_ASSUME_GPU_RATE_UNKNOWN;
		e->step_seconds = e->tokens_per_second = e->mfu = e->utilisation = -1;
		e->optimizer_seconds = -1;
		return;
	}
	double u = U_MAX * (s->h / (s->h + U_HIDDEN)) * (N / (N + U_TOKENS));
	double bw = gpu && gpu->bandwidth_gbs > 0 ? gpu->bandwidth_gbs * 1e9 : 4.8e12;
	double t_opt = opt_traffic / (0.8 * bw);
	double layers = s->L + s->Ld;
	double ga = (double)su->grad_accum;
	double t_over = T_STEP + ga * layers * (d->train ? T_LAYER : T_LAYER / 3);
	if (su->grad_ckpt && d->train)
		t_over += ga * layers * T_LAYER_CKPT;
	if (d->train && (su->optimizer == VF_OPT_ADAFACTOR || su->optimizer_impl == VF_OPTIMPL_FOR))
		t_over += T_TENSOR_LOOP * layers * (s->fused_qkv ? 12 : 9);
	double t_act = ga * ACT_PASSES * act_traffic / bw;
	double t_mm = flops / (rate * 1e12 * u);
	/* multi-GPU: ring all-reduce / reduce-scatter + all-gather traffic per
	 * GPU over the interconnect (catalog figure is bidirectional), half of
	 * it hidden behind the backward (assumed) */
	double t_comm = 0;
	if (comm_bytes > 0) {
		double link = gpu && gpu->interconnect_gbs > 0 ? gpu->interconnect_gbs * 1e9 / 2 : 25e9;
		t_comm = 0.5 * comm_bytes / link;
	}
	double t = t_mm + t_act + t_opt + t_over + t_comm;
	e->utilisation = u;
	e->optimizer_seconds = t_opt;
	e->step_seconds = t;
	e->tokens_per_second = b * sq * ga * su->gpus / t;
	e->mfu = model_flops / (t * rate * 1e12); /* recompute is not model work */
}

void vf_estimate_run(const struct vf_arch *arch, const struct vf_setup *su,
		     const struct vf_gpu_spec *gpu, struct vf_estimate *e)
{
	memset(e, 0, sizeof *e);
	struct shape s;
	shape_from_arch(arch, &s);

	struct dt d;
	memset(&d, 0, sizeof d);
	d.train = su->mode != VF_MODE_INFER;
	d.full = su->mode == VF_MODE_FULL;
	d.autocast = su->precision != VF_PREC_FP32;
	d.P = su->precision == VF_PREC_BF16 ? 2 : 4; /* amp/fp16: fp32 weights under autocast */
	d.R = d.P;
	d.C = d.autocast ? 2 : 4;
	d.lt = su->mode == VF_MODE_LORA ? su->lora_targets : 0;
	d.rank = su->lora_rank;

	double b = (double)su->batch, sq = (double)su->seq;
	double tq = su->target_seq > 0 ? (double)su->target_seq : sq;
	double N = b * sq;                       /* tokens per micro-batch */
	double Nout = s.fc == FC_T5 ? b * tq : N; /* tokens with logits */
	double ngpu = su->gpus > 0 ? su->gpus : 1;

	/* ---- parameters ---- */
	double P = s.params;
	double T = 0;                            /* trainable parameters */
	double lora = 0;
	if (su->mode == VF_MODE_FULL)
		T = P;
	else if (su->mode == VF_MODE_LORA)
		T = lora = lora_params(&s, su->lora_targets, su->lora_rank);
	e->params = clamp64(P);
	e->trainable_params = clamp64(T);
	e->tokens_per_step = clamp64(N * (double)su->grad_accum * ngpu);

	/* ---- weights (bytes) ---- */
	double qb = quant_bytes(su->quant, d.P);
	double W = (s.linear) * qb                   /* linear matrices (quantized when asked) */
		   + (P - s.linear) * d.P            /* embeddings, norms: stored dtype */
		   + lora * 4;                       /* peft keeps adapters in fp32 */
	/* ---- gradients (bytes): in the parameter's dtype ---- */
	double gb = su->mode == VF_MODE_LORA ? 4 : d.P;
	double G = d.train ? T * gb : 0;
	/* ---- optimizer states ---- */
	double S = d.train ? state_bytes(su, &s, T, gb, su->mode == VF_MODE_LORA) : 0;
	/* ---- optimizer step temporaries ----
	 * foreach AdamW: _foreach_sqrt(exp_avg_sq) makes one temporary as
	 * large as the states of one kind (measured: l7-full-amp-b1s2048-gc,
	 * 25.1 GiB for 25.1 GiB of fp32 parameters); for-loop: the largest
	 * tensor twice (sqrt, then divide); Lion (lion-pytorch, per tensor:
	 * clone and interpolation) the largest tensor twice; fused
	 * and bitsandbytes 8-bit kernels: none; SGD momentum: in place;
	 * Adafactor (per tensor): squared gradient, update and factored
	 * estimate of the largest tensor. */
	double OT = 0;
	if (d.train) {
		double largest = su->mode == VF_MODE_LORA ? T / (s.L > 0 ? s.L : 1) : s.largest;
		if (largest > T)
			largest = T;
		switch (su->optimizer) {
		case VF_OPT_LION:
			OT = 2 * largest * gb;
			break;
		case VF_OPT_ADAMW:
			if (su->optimizer_impl == VF_OPTIMPL_FOREACH)
				OT = T * gb;
			else if (su->optimizer_impl == VF_OPTIMPL_FOR)
				OT = 2 * largest * gb;
			break;
		case VF_OPT_ADAFACTOR:
			OT = 3 * largest * 4;
			break;
		default:
			break;
		}
	}
	/* ---- sharding: per-GPU shares (ZeRO/FSDP) ---- */
	double shard_w = 1, shard_g = 1, shard_o = 1;
	if (ngpu > 1) {
		switch (su->shard) {
		case VF_SHARD_ZERO1: shard_o = ngpu; break;
		case VF_SHARD_ZERO2: shard_o = shard_g = ngpu; break;
		case VF_SHARD_ZERO3:
		case VF_SHARD_FSDP: shard_o = shard_g = shard_w = ngpu; break;
		default: break;
		}
	}
	W /= shard_w;
	G /= shard_g;
	S /= shard_o;
	OT /= shard_o;
	if (shard_w > 1)
		W += 2 * s.layer_linear * d.P; /* one layer gathered (and the next prefetched) */
	/* DDP (gradient_as_bucket_view=False, the default of PyTorch and
	 * accelerate): flat buckets as large as the gradients, allocated once
	 * and kept, so they are live in every phase */
	double ddp_buckets = (su->shard == VF_SHARD_DDP && ngpu > 1) ? G : 0;

	/* ---- autocast cache ----
	 * fp32 weights under autocast: each linear weight is cast to bf16 once
	 * per forward (cached for leaf tensors that need a gradient; saved
	 * for the backward otherwise), and the lm_head's (tied: the
	 * embedding's). */
	double AC = 0;
	if (d.autocast && d.P == 4 && su->quant == VF_QUANT_NONE)
		AC = 2 * (s.linear + s.V * s.h) / shard_w; /* also under no_grad: the params need grads */
	if (d.autocast && su->mode == VF_MODE_LORA)
		AC += 2 * lora; /* adapters' bf16 copies */

	/* ---- activations ---- */
	bool eager = su->attention == VF_ATTN_EAGER || s.fc == FC_T5; /* T5: always explicit scores */
	double per_layer_tok = d.train ? layer_bytes(&s, &d, eager) : 0;
	double scores = 0; /* eager attention's s^2 tensors per layer */
	if (eager) {
		scores = b * s.heads * sq * sq * score_bytes(&s, &d);
		if (d.train)
			scores += N * 2 * d.C * (s.hq - s.hkv); /* repeat_kv: k and v expanded to all heads */
	}
	double A_layer = N * per_layer_tok + scores;     /* one layer, all its saved tensors */
	double ckpt_in = N * d.R * s.h;                   /* a checkpointed layer's input */
	double emb_out = N * s.h * d.R + (s.dropout > 0 ? N * s.h : 0);
	double final_norm = 0;
	{
		double xb;
		final_norm = d.train ? N * norm_bytes(&s, &d, &xb) : 0;
		if (d.train && d.full)
			final_norm += N * s.h * 2; /* lm_head input (bf16 cast) */
	}
	double layers = s.L;
	double A_all, A_dec = 0;
	if (s.fc == FC_T5) {
		/* decoder layers: self-attention + cross-attention + FF over the
		 * target tokens; cross k/v projections over the encoder tokens */
		double Nt = b * tq;
		double dec_scores = b * s.heads * (tq * tq + tq * sq) * score_bytes(&s, &d);
		double cross_kv = N * (lin_in(&d, s.h, d.R, 2, 0) + 2 * d.C * s.hkv);
		A_dec = Nt * per_layer_tok * 1.5 + dec_scores + cross_kv;
		A_all = s.L * A_layer + s.Ld * A_dec;
		/* relative position bias + mask, fp32, computed once per stack */
		A_all += 4 * s.heads * (sq * sq + tq * tq + tq * sq);
		layers = s.L + s.Ld;
	} else {
		A_all = s.L * A_layer;
	}
	/* quantized base: the dequantized weight of one linear at a time */
	double dequant = su->quant != VF_QUANT_NONE ? 2 * s.layer_linear / 3 : 0;

	/* ---- logits and loss ----
	 * lm_head output in the compute dtype, upcast to fp32 by the HF loss,
	 * log_softmax output fp32; in the backward of the loss: log_softmax
	 * output, the incoming gradient and the input gradient, all fp32
	 * (12 bytes per logit: gpt2 and gemma-2b records). */
	double logits_fwd = Nout * s.V * (d.C + 4 + 4);
	if (d.C == 4)
		logits_fwd = Nout * s.V * 8;
	double logits_bwd = Nout * s.V * 12;
	if (s.softcap_logits > 0) {
		logits_fwd += Nout * s.V * d.C * 2; /* logits/cap and tanh output (kept) */
		logits_bwd += Nout * s.V * d.C;
	}

	struct live ph[VF_PHASE_COUNT];
	memset(ph, 0, sizeof ph);
	double best = -1;
	int bi = VF_PHASE_FORWARD;
	e->context_bytes = su->context_bytes >= 0 ? su->context_bytes : vf_estimate_default_context(gpu);
	if (su->context_bytes < 0)
		e->assumed |= VF_ASSUME_CONTEXT_DEFAULT;
	if (!gpu)
		e->assumed |= VF_ASSUME_NO_GPU;

	e->weights_full = clamp64(W);
	e->gradients_full = clamp64(G);
	e->optimizer_full = clamp64(S);
	e->optimizer_temp_full = clamp64(OT);
	e->autocast_cache_full = clamp64(AC);
	e->logits_full = clamp64(logits_bwd);
	e->layer_activations = clamp64(A_layer);
	e->loss_transient = clamp64(Nout * s.V * d.C);

	if (!d.train) {
		/* ---- inference: weights + KV cache + one layer's working set ---- */
		double kvb = d.C;
		double kv = 2 * layers * s.hkv * N * kvb;
		if (s.fc == FC_T5)
			kv = 2 * s.Ld * s.hkv * (b * tq + N) * kvb;
		/* working set at the MLP of the last layer: residual, normed
		 * input, act, up and product (gated) or input/output (plain) */
		double work = N * (2 * s.h * d.C + (s.gated ? 3 : 2) * s.f * d.C);
		double attn_work = N * (3 * s.h + 3 * s.hq + 2 * s.hkv) * d.C;
		if (su->attention == VF_ATTN_EAGER)
			attn_work += b * s.heads * sq * sq * (4 + d.C);
		if (attn_work > work)
			work = attn_work;
		double lg = Nout * s.V * d.C + Nout * s.h * d.C;
		struct live *f = &ph[VF_PHASE_FORWARD];
		f->w = W;
		f->ac = AC;
		f->kv = kv;
		f->act = work + dequant;
		struct live *l = &ph[VF_PHASE_LOSS];
		l->w = W;
		l->ac = AC;
		l->kv = kv;
		l->lg = lg;
		for (int i = VF_PHASE_FORWARD; i <= VF_PHASE_LOSS; i++) {
			ph[i].act += WORKSPACE_BYTES;
			double v = live_sum(&ph[i]);
			if (v > best) {
				best = v;
				bi = i;
			}
		}
		e->kv_cache_full = clamp64(kv);
		e->activations_full = clamp64(work);
		/* the layer working set and the logits are freed and re-requested
		 * at other sizes as the cache grows (fitted, README) */
		double reserved = best + segment_waste(kv / (2 * layers)) * 2 * layers +
				  param_rounding(&s) * W + FRAG_INFER * (work + Nout * s.V * d.C);
		finish_terms(e, &ph[bi], reserved, (enum vf_phase)bi);
		step_time(&s, su, &d, gpu, 0, 0, 0, 0, e);
		return;
	}

	/* ---- training: the phases of a steady-state step ----
	 * Optimizer states S are held from the previous step; gradients are
	 * None after zero_grad(set_to_none=True) until the backward. */
	double held_acts = su->grad_ckpt ? layers * ckpt_in : A_all;
	/* forward end / loss forward: everything saved plus the loss tensors */
	/* with checkpointing the autocast cache (leaf weights, full
	 * fine-tuning) lives until the forward leaves autocast, before the
	 * backward; frozen weights' copies are then made per layer only */
	double AC_fwd = AC, AC_bwd = AC;
	if (su->grad_ckpt) {
		AC_bwd = 0;
		if (!d.full)
			AC_fwd = AC / (layers > 0 ? layers : 1);
	}
	/* gradient accumulation: from the second micro-batch on, the forward
	 * runs with the accumulated gradients held */
	double G_fwd = (su->grad_accum > 1 ? G : 0) + ddp_buckets;
	struct live *lf = &ph[VF_PHASE_LOSS];
	lf->w = W;
	lf->o = S;
	lf->g = G_fwd;
	lf->act = held_acts + emb_out + final_norm + dequant;
	if (AC_fwd + logits_fwd > AC_bwd + logits_bwd) {
		lf->ac = AC_fwd;
		lf->lg = logits_fwd;
	} else {
		lf->ac = AC_bwd;
		lf->lg = logits_bwd;
	}
	/* the lm_head weight gradient appears as the logits' gradient is
	 * consumed (full fine-tuning) */
	/* forward, checkpointed: one layer's activations live while it runs */
	struct live *fw = &ph[VF_PHASE_FORWARD];
	fw->w = W;
	fw->o = S;
	fw->g = G_fwd;
	fw->ac = AC_fwd;
	fw->act = held_acts + emb_out + (su->grad_ckpt ? A_layer : 0) + dequant;
	/* backward: with checkpointing the last layer is recomputed (its
	 * activations and, under autocast, its weights' bf16 copies) while
	 * gradients accumulate; the autocast cache was dropped when the
	 * forward left autocast. Without checkpointing activations are freed
	 * layer by layer as weight gradients appear: the peak is at the start
	 * (the loss phase) or at the end (all gradients, first layers' inputs). */
	struct live *bw = &ph[VF_PHASE_BACKWARD];
	bw->w = W;
	bw->o = S;
	if (su->grad_ckpt) {
		double rec_ac = AC > 0 ? AC / (layers > 0 ? layers : 1) : 0;
		/* the gradient grows to G while the inputs shrink: the larger end */
		double start = layers * ckpt_in + (s.tied || !d.full ? 0 : s.V * s.h * gb) + A_layer +
			       rec_ac;
		double end = G + A_layer + rec_ac + ckpt_in;
		if (start >= end) {
			bw->act = layers * ckpt_in + A_layer + dequant;
			bw->ac = rec_ac;
			bw->g = d.full ? (s.tied ? 0 : s.V * s.h * gb) : 0;
		} else {
			bw->act = A_layer + ckpt_in + dequant;
			bw->ac = rec_ac;
			bw->g = G;
		}
		bw->act += N * s.h * 4; /* the incoming hidden-state gradient */
	} else {
		bw->g = G;
		bw->act = A_layer + N * s.h * 4 + emb_out;
		bw->ac = AC / (layers > 0 ? layers : 1);
	}
	if (su->grad_accum > 1 && bw->g < G)
		bw->g = G; /* accumulated from the earlier micro-batches */
	bw->g += ddp_buckets;
	/* optimizer step */
	struct live *op = &ph[VF_PHASE_OPTIMIZER];
	op->w = W;
	op->g = G + ddp_buckets;
	op->o = S;
	op->ot = OT;

	for (int i = 0; i < VF_PHASE_COUNT; i++) {
		if (i <= VF_PHASE_OPTIMIZER)
			ph[i].act += WORKSPACE_BYTES;
		double v = live_sum(&ph[i]);
		if (v > best) {
			best = v;
			bi = i;
		}
	}
	e->activations_full = clamp64(held_acts + emb_out + final_norm + WORKSPACE_BYTES);

	/* ---- allocator: reserved at the peak ----
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
	 * as the batch grows). */
	double lc = e->loss_transient;
	double spare = lc - (G + S + OT);
	double rounding = param_rounding(&s);
	double reserved = 0;
	for (int i = 0; i < VF_PHASE_COUNT; i++) {
		const struct live *l = &ph[i];
		/* the optimizer step's new allocations (the foreach temporaries)
		 * are fp32-sized and cannot reuse the bf16 autocast blocks cached
		 * from the forward: the reserve grows by what does not fit, at
		 * most the autocast copies, and not at all for optimizers that
		 * allocate nothing large in their step (fused, 8-bit, SGD). */
		double frag = FRAG_LAYER * A_layer +
			      (i == VF_PHASE_OPTIMIZER ? FRAG_AUTOCAST * (AC < OT ? AC : OT)
						       : FRAG_LOGITS * (spare > 0 ? spare : 0));
		double r = live_sum(l) + rounding * (l->w + l->g + l->o + l->ot) + frag;
		if (r > reserved)
			reserved = r;
	}
	finish_terms(e, &ph[bi], reserved, (enum vf_phase)bi);

	double opt_traffic = 0;
	switch (su->optimizer) {
	case VF_OPT_ADAMW:
		/* read param, grad, m, v; write param, m, v; the foreach
		 * temporary written and read twice */
		opt_traffic = T * gb * 11;
		break;
	case VF_OPT_ADAMW8BIT: opt_traffic = T * (3 * gb + 4); break;
	case VF_OPT_SGD: opt_traffic = T * gb * 5; break;
	case VF_OPT_LION: opt_traffic = T * gb * 6; break;
	case VF_OPT_ADAFACTOR: opt_traffic = T * gb * 10; break;
	default: break;
	}
	double comm = 0;
	if (ngpu > 1 && su->shard != VF_SHARD_NONE) {
		double ring = 2 * (ngpu - 1) / ngpu;
		comm = ring * T * gb;                      /* gradients: all-reduce */
		if (su->shard == VF_SHARD_ZERO3 || su->shard == VF_SHARD_FSDP)
			comm += 2 * (ngpu - 1) / ngpu * P * d.P; /* weights gathered for forward and backward */
	}
	step_time(&s, su, &d, gpu, T, opt_traffic, layers * A_layer + logits_bwd, comm, e);
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
	vf_estimate_run(arch, su, gpu, &e);
	return e.peak_bytes;
}

int64_t vf_estimate_max_batch(const struct vf_arch *arch, const struct vf_setup *setup,
			      const struct vf_gpu_spec *gpu, int64_t vram_bytes)
{
	return max_batch_search(llm_peak, arch, setup, gpu, vram_bytes, 1 << 20);
}

void vf_estimate_generic_arch(int64_t params, struct vf_arch *a)
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
	a->vocab = 32000;
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
	cJSON_AddStringToObject(o, "peak_phase", vf_phase_name(e->peak_phase));
	cJSON_AddStringToObject(o, "dominant_term", vf_term_name(e->dominant));
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

void vf__estimate_finish_terms(struct vf_estimate *e, const struct live *pk, double reserved,
			       enum vf_phase ph)
{
	finish_terms(e, pk, reserved, ph);
}

int64_t vf__estimate_max_batch_search(int64_t (*peak)(const void *model, const struct vf_setup *,
						      const struct vf_gpu_spec *),
				      const void *model, const struct vf_setup *setup,
				      const struct vf_gpu_spec *gpu, int64_t vram_bytes, int64_t cap)
{
	return max_batch_search(peak, model, setup, gpu, vram_bytes, cap);
}
