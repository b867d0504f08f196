/* vit.c - peak memory and step time of vision models (vision.h):
 * contrastive training of CLIP / SigLIP towers (or one ViT tower), and
 * LLaVA-style VLM fine-tuning (stage 2: the language model as the LLM
 * estimator sees it, over text + image tokens, plus the frozen vision
 * tower and the trained projector).
 *
 * Mechanisms, not measurements: nothing here is fitted on vision runs
 * (the ground truth has none); the step-time constants are the LLM
 * estimator's. */
#include "vramfit/estimate/estimate.h"

#include <string.h>

#include "estimate_internal.h"
#include "steptime.h"

/* Bytes autograd saves per token of one ViT layer under bf16 autocast with
 * fused (sdpa) attention: the fp32 LayerNorm inputs (2 x 4h), the bf16
 * q/k/v input (2h), q, k, v and the attention output (8h), the output
 * projection's input (shared with the attention output), the fc1 input
 * (2h), the GELU input and the fc2 input (2 x 2f; CLIP's quick-GELU in
 * Python adds its sigmoid, 2f). LoRA on q/k/v/o with frozen weights: the
 * frozen fc1/fc2 keep no inputs. */
static double vit_layer_bytes(double h, double f, bool lora, bool quick_gelu)
{
	double ln = 2 * 4 * h;
	double attn = 2 * h + 8 * h;
	double mlp = lora ? 2 * f : 2 * h + 2 * 2 * f;
	return ln + attn + mlp + (quick_gelu ? 2 * f : 0);
}

/* Linear (matrix) parameters of one tower: 4h^2 + 2hf per layer. */
static double tower_linear(const struct vf_vision_part *p)
{
	double h = (double)p->hidden, f = (double)p->ffn;
	return (double)p->layers * (4 * h * h + 2 * h * f);
}

static double tower_tokens(const struct vf_vision *v, const struct vf_vision_part *p, const struct vf_setup *su)
{
	if (strcmp(p->name, "vision_tower") == 0)
		return (double)vf_vision_tokens(v, su->video_width, su->video_height, 0);
	return (double)p->tokens; /* text: the context the tower is built for */
}

/* Step time: matmul FLOPs at the fitted utilisation, elementwise traffic,
 * the optimizer's memory-bound update, launch overheads (estimate.c). */
static void vit_time(const struct vf_vision *v, const struct vf_setup *su, const struct vf_gpu_spec *gpu,
		     double fwd, double tokens, double hmax, double A, double T, double gb,
		     struct vf_estimate *e)
{
	bool train = su->mode != VF_MODE_INFER, full = su->mode == VF_MODE_FULL;
	bool lora = su->mode == VF_MODE_LORA;
	double ngpu = su->gpus > 0 ? su->gpus : 1;
	/* forward x (3 trained, 2 frozen with adapters, 1 inference) */
	double model_flops = (full ? 3 : lora ? 2 : 1) * fwd * (double)su->grad_accum;
	double flops = model_flops + (train && su->grad_ckpt ? fwd * (double)su->grad_accum : 0);
	e->flops_per_step = flops;
	double rate = gpu ? (gpu->bf16_tflops > 0 ? gpu->bf16_tflops : gpu->fp16_tflops) : 989.5;
	if (!(rate > 0)) {
		e->assumed |= VF_ASSUME_GPU_RATE_UNKNOWN;
		e->step_seconds = e->tokens_per_second = e->mfu = e->utilisation = -1;
		e->optimizer_seconds = -1;
		return;
	}
	double u = U_MAX * (hmax / (hmax + U_HIDDEN)) * (tokens / (tokens + U_TOKENS));
	u *= vf__steptime_gemm_ratio(gpu); /* the generation's cuBLAS reach relative to hopper's */
	if (vf_estimate_constants_fallback())
		e->assumed |= VF_ASSUME_CONSTANTS_BUILTIN;
	double bw = gpu && gpu->bandwidth_gbs > 0 ? gpu->bandwidth_gbs * 1e9 : 4.8e12;
	double opt = T * gb * 11 / (0.8 * bw);
	double layers = 0;
	for (int i = 0; i < v->nparts; i++)
		layers += (double)v->parts[i].layers;
	double t = flops / (rate * 1e12 * u) + (double)su->grad_accum * ACT_PASSES * A / bw + opt + T_STEP +
		   layers * (T_LAYER + (su->grad_ckpt ? T_LAYER_CKPT : 0));
	e->utilisation = u;
	e->optimizer_seconds = opt;
	e->step_seconds = t;
	e->tokens_per_second = tokens * (double)su->grad_accum * ngpu / t;
	e->mfu = model_flops / (t * rate * 1e12);
}

void vf_estimate_vit(const struct vf_vision *v, const struct vf_setup *su, const struct vf_gpu_spec *gpu,
		     struct vf_estimate *e)
{
	memset(e, 0, sizeof *e);
	e->inference = su->mode == VF_MODE_INFER;
	double b = (double)(su->batch > 0 ? su->batch : 1), ngpu = su->gpus > 0 ? su->gpus : 1;
	bool train = su->mode != VF_MODE_INFER, full = su->mode == VF_MODE_FULL;
	bool lora = su->mode == VF_MODE_LORA;
	double pb = su->precision == VF_PREC_BF16 || su->precision == VF_PREC_FP16 || !train ? 2 : 4;
	bool quick = strcmp(v->family, "clip") == 0;
	e->context_bytes = su->context_bytes >= 0 ? su->context_bytes : vf_estimate_default_context(gpu);
	if (su->context_bytes < 0)
		e->assumed |= VF_ASSUME_CONTEXT_DEFAULT;
	if (!gpu)
		e->assumed |= VF_ASSUME_NO_GPU;
	double P = (double)v->params, linear = 0, lora_p = 0, A = 0, layer_max = 0, ckpt_in = 0;
	double fwd = 0, tokens = 0, hmax = 0;
	for (int i = 0; i < v->nparts; i++) {
		const struct vf_vision_part *p = &v->parts[i];
		double h = (double)p->hidden, f = (double)p->ffn, L = (double)p->layers;
		double n = b * tower_tokens(v, p, su);
		double lb = n * vit_layer_bytes(h, f, lora, quick);
		linear += tower_linear(p);
		lora_p += L * su->lora_rank * vf__estimate_popcount(su->lora_targets & VF_LORA_ALL) * 2 * h;
		A += su->grad_ckpt ? n * 4 * h * L : lb * L;          /* saved for backward */
		ckpt_in += su->grad_ckpt ? lb : 0;                    /* one layer recomputed */
		layer_max = lb > layer_max ? lb : layer_max;
		fwd += 2 * tower_linear(p) * n + 4 * L * n * n / b * h; /* matmuls + attention */
		tokens += n;
		hmax = h > hmax ? h : hmax;
	}
	double T = full ? P : lora ? lora_p : 0;
	e->params = vf__estimate_clamp64(P);
	e->trainable_params = vf__estimate_clamp64(T);
	e->tokens_per_step = vf__estimate_clamp64(tokens * (double)su->grad_accum * ngpu);
	double W = P * pb + (lora ? lora_p * 4 : 0);                          /* bytes */
	double gb = full ? pb : 4;
	double G = train ? T * gb : 0;                                        /* gradients */
	double S = train ? vf__estimate_state_bytes(su, hmax, 4 * hmax, linear, T, gb, lora) : 0;
	double AC = train && su->precision == VF_PREC_AMP ? 2 * linear : 0;   /* autocast bf16 copies */
	double gbatch = b * ngpu;
	double LG = v->nparts > 1 && train ? 4.0 * 4 * gbatch * gbatch : 0;   /* similarity logits, fp32 */
	if (ngpu > 1 && (su->shard == VF_SHARD_FSDP || su->shard == VF_SHARD_ZERO3)) {
		W /= ngpu;
		G /= ngpu;
		S /= ngpu;
	}
	struct live ph[VF_PHASE_COUNT];
	memset(ph, 0, sizeof ph);
	ph[VF_PHASE_FORWARD] = (struct live){.w = W, .o = S, .ac = AC, .act = (train ? A + ckpt_in : layer_max)};
	if (train) {
		ph[VF_PHASE_BACKWARD] = (struct live){.w = W, .o = S, .g = G, .ac = AC, .act = A + ckpt_in, .lg = LG};
		ph[VF_PHASE_OPTIMIZER] = (struct live){.w = W, .o = S, .g = G};
	}
	int bi = 0;
	double best = -1;
	for (int i = 0; i < VF_PHASE_COUNT; i++)
		if (vf__estimate_live_sum(&ph[i]) > best) {
			best = vf__estimate_live_sum(&ph[i]);
			bi = i;
		}
	e->weights_full = vf__estimate_clamp64(W);
	e->gradients_full = vf__estimate_clamp64(G);
	e->optimizer_full = vf__estimate_clamp64(S);
	e->autocast_cache_full = vf__estimate_clamp64(AC);
	e->activations_full = vf__estimate_clamp64(A);
	e->layer_activations = vf__estimate_clamp64(layer_max);
	vf__estimate_finish_terms(e, ph, best + FRAG_LAYER * layer_max, (enum vf_phase)bi);

	vit_time(v, su, gpu, fwd, tokens, hmax, A, T, gb, e);
}

/* A LLaVA-style VLM, stage 2: the language model over text + image tokens
 * (the LLM estimator), plus the frozen vision tower (weights only: it runs
 * without autograd) and the trained projector (weights, gradients, AdamW
 * states in the language model's dtypes). */
void vf_estimate_vlm(const struct vf_vision *v, const struct vf_setup *su, const struct vf_gpu_spec *gpu,
		     struct vf_estimate *e)
{
	struct vf_setup s = *su;
	s.seq = su->seq + vf_vision_tokens(v, su->video_width, su->video_height, 0);
	vf_estimate_run(&v->lm, &s, gpu, e);
	double pb = su->precision == VF_PREC_BF16 || su->precision == VF_PREC_FP16 ? 2 : 4;
	double pv = 0, pp = 0, fv = 0;
	for (int i = 0; i < v->nparts; i++) {
		if (strcmp(v->parts[i].name, "vision_tower") == 0) {
			pv = (double)v->parts[i].params;
			fv = 2 * tower_linear(&v->parts[i]) * (double)v->image_tokens;
		} else if (strcmp(v->parts[i].name, "projector") == 0) {
			pp = (double)v->parts[i].params;
		}
	}
	bool train = su->mode != VF_MODE_INFER;
	double add_w = pv * 2 + pp * pb;                             /* vision tower bf16, projector */
	double add_g = train ? pp * pb : 0;                          /* projector gradients */
	double add_o = train ? pp * 2 * 4 : 0;                       /* projector AdamW states, fp32 */
	int64_t add = vf__estimate_clamp64(add_w + add_g + add_o);
	e->params += vf__estimate_clamp64(pv + pp);
	if (train)
		e->trainable_params += vf__estimate_clamp64(pp);
	e->weights_bytes += vf__estimate_clamp64(add_w);
	e->gradients_bytes += vf__estimate_clamp64(add_g);
	e->optimizer_bytes += vf__estimate_clamp64(add_o);
	e->weights_full += vf__estimate_clamp64(add_w);
	e->peak_allocated_bytes += add;
	e->peak_reserved_bytes += add;
	e->peak_bytes += add;
	/* the vision tower's forward, once per image */
	if (e->step_seconds > 0 && e->flops_per_step > 0) {
		double extra = fv * (double)(su->batch > 0 ? su->batch : 1) * (double)su->grad_accum;
		e->step_seconds *= 1 + extra / e->flops_per_step;
		e->flops_per_step += extra;
		e->tokens_per_second = (double)e->tokens_per_step / e->step_seconds;
	}
}

static int64_t vit_peak(const void *v, const struct vf_setup *su, const struct vf_gpu_spec *gpu)
{
	struct vf_estimate e;
	const struct vf_vision *vis = v;
	if (strcmp(vis->kind, "vlm") == 0)
		vf_estimate_vlm(vis, su, gpu, &e);
	else
		vf_estimate_vit(vis, su, gpu, &e);
	return e.peak_bytes;
}

int64_t vf_estimate_vision_max_batch(const struct vf_vision *v, const struct vf_setup *setup,
				     const struct vf_gpu_spec *gpu, int64_t vram_bytes)
{
	return vf__estimate_max_batch_search(vit_peak, v, setup, gpu, vram_bytes, 1 << 16);
}
