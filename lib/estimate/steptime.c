/* steptime.c - the step time of an LLM step, kernel by kernel (steptime.h):
 *
 *   GEMM       max(FLOPs / (rate x eff_gen x mn/(mn + tile)),
 *                  bytes / (bandwidth x bw_eff)) + kernel_gpu_s
 *              (a roofline; small outputs fill few tiles: LoRA's rank-r
 *              products, MoE experts on a few tokens);
 *   attention  flash / mem-efficient SDPA: FLOPs / (rate x attn_eff),
 *              backward 2.5x; eager and math: two batched GEMMs and the
 *              softmax (+ mask, dropout) over the scores at bandwidth;
 *   elementwise  norms, activations, rotary, residuals, casts: their bytes
 *              at bandwidth, backward twice the forward;
 *   launches   each phase takes max(device time, kernels x launch_s): a
 *              small model waits on the host, a large one on the GPU;
 *   MoE        transformers' eager loop over experts: per expert its
 *              GEMMs on the tokens routed to it and a torch.where that
 *              synchronises, so host and device time add up;
 *   recompute  checkpointing runs each layer's forward again in backward;
 *   optimizer  state traffic at bandwidth; per-tensor loops pay launches;
 *   fixed      step_s per optimizer step.
 * Steady state, no dataloader. */
#include "steptime.h"

#include "vramfit/base/data.h"
#include "vramfit/base/json.h"

#include <string.h>

static const char *const generations[8] = {"hopper", "blackwell", "ada",    "ampere",
					   "turing", "volta",     "pascal", NULL};

static struct vf__steptime_k K; /* loaded once from the embedded data */

static void load_constants(void)
{
	if (K.loaded)
		return;
	/* safe fallbacks: the fitted H200 values (data file unreadable) */
	for (int i = 0; i < 8; i++)
		K.gemm_eff[i] = 0.7;
	K.gemm_tile = 1.0e6;
	K.attn_eff = 0.5;
	K.bw_eff = 0.8;
	K.launch_s = 10e-6;
	K.kernel_gpu_s = 3e-6;
	K.step_s = 0.004;
	K.sync_s = 20e-6;
	K.bwd_kernels = 2;
	cJSON *root = NULL;
	char src[256];
	struct vf_error err = {0};
	if (vf_data_load_json("estimate/steptime.json", &root, src, sizeof src, &err) == VF_OK) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "constants");
		const cJSON *g = cJSON_GetObjectItemCaseSensitive(c, "gemm_efficiency");
		for (int i = 0; generations[i]; i++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItemCaseSensitive(g, generations[i]), "value");
			if (cJSON_IsNumber(v) && v->valuedouble > 0)
				K.gemm_eff[i] = v->valuedouble;
		}
		struct {
			const char *key;
			double *dst;
		} f[] = {{"gemm_tile", &K.gemm_tile},       {"attention_efficiency", &K.attn_eff},
			 {"bandwidth_efficiency", &K.bw_eff}, {"launch_s", &K.launch_s},
			 {"kernel_gpu_s", &K.kernel_gpu_s},   {"step_s", &K.step_s},
			 {"sync_s", &K.sync_s},               {"backward_kernels", &K.bwd_kernels}};
		for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItemCaseSensitive(c, f[i].key), "value");
			if (cJSON_IsNumber(v) && v->valuedouble > 0)
				*f[i].dst = v->valuedouble;
		}
	}
	cJSON_Delete(root);
	K.loaded = true;
}

static double gen_eff(const struct vf_gpu_spec *gpu)
{
	if (gpu)
		for (int i = 0; generations[i]; i++)
			if (strcmp(gpu->generation, generations[i]) == 0)
				return K.gemm_eff[i];
	return K.gemm_eff[0];
}

struct hw {
	double rate, bw, eff;
	double inv_rate_eff, inv_bw; /* 1 / (rate x eff), 1 / bandwidth */
};

/* One GEMM of m x k by k x n (2-byte operands), device seconds. */
static double gemm_s(const struct hw *h, double m, double k, double n, double *flops)
{
	double mn = m * n;
	double f = 2 * mn * k;
	double t_c = 2 * k * (mn + K.gemm_tile) * h->inv_rate_eff; /* f / (rate eff mn/(mn+tile)) */
	double t_m = 2 * (m * k + k * n + mn) * h->inv_bw;
	*flops += f;
	return (t_c > t_m ? t_c : t_m) + K.kernel_gpu_s;
}

/* Forward (bwd = false) or backward of one layer: device seconds of its
 * GEMMs (into *g) and attention (into *a); its elementwise traffic. */
static void layer_gemms(const struct hw *h, const struct vf__layer_work *l, bool bwd,
			double *g, double *moe, double *flops)
{
	for (int i = 0; i < l->ngemm; i++) {
		const struct vf__gemm *x = &l->gemm[i];
		double t = 0;
		if (!bwd) {
			t = gemm_s(h, x->m, x->k, x->n, flops);
		} else {
			if (x->input_grad)
				t += gemm_s(h, x->m, x->n, x->k, flops);  /* dX = dY W^T */
			if (x->weight_grad)
				t += gemm_s(h, x->k, x->m, x->n, flops);  /* dW = X^T dY */
		}
		if (l->experts > 0 && x->count >= l->experts)
			*moe += t * x->count;
		else
			*g += t * x->count;
	}
}

static double attention_s(const struct hw *h, const struct vf__step_work *w,
			  const struct vf__layer_work *l, bool bwd, double *elem)
{
	double mult = bwd ? 2.5 : 1;
	if (w->attn == VF__ATTN_FLASH || w->attn == VF__ATTN_MEM_EFFICIENT)
		return mult * l->attn_flops / (h->rate * K.attn_eff);
	/* eager / math: QK^T and PV as batched GEMMs at the GEMM efficiency,
	 * softmax (+ mask, dropout) reading and writing fp32 scores */
	*elem += (bwd ? 2 : 1) * l->score_elems * 4 * l->score_passes;
	return mult * l->attn_flops / (h->rate * h->eff);
}

/* One pass (forward, or backward with recompute) over all layers:
 * max(device, host) with the MoE loop's synchronised part added. */
static double layers_pass(const struct hw *h, const struct vf__step_work *w, bool bwd,
			  struct vf__steptime_out *o, double *flops)
{
	double dev = 0, host = 0, moe_dev = 0, moe_host = 0, elem = 0;
	for (int i = 0; i < w->nkinds; i++) {
		const struct vf__layer_work *l = &w->kind[i];
		double g = 0, moe = 0, e = bwd ? 2 * l->elem_bytes : l->elem_bytes;
		layer_gemms(h, l, bwd, &g, &moe, flops);
		double a = attention_s(h, w, l, bwd, &e);
		double kern = l->kernels * (bwd ? K.bwd_kernels : 1);
		dev += l->count * (g + a + e / h->bw);
		o->gemm_s += l->count * g;
		o->attn_s += l->count * a;
		o->elem_s += l->count * e / h->bw;
		elem += l->count * e;
		host += l->count * kern * K.launch_s;
		if (l->experts > 0) {
			double ek = l->expert_kernels * (bwd ? K.bwd_kernels : 1);
			moe_dev += l->count * moe;
			moe_host += l->count * l->experts * (ek * K.launch_s + K.sync_s);
		}
	}
	(void)elem;
	o->launch_s += host > dev ? host - dev : 0;
	o->moe_s += moe_dev + moe_host;
	return (dev > host ? dev : host) + moe_dev + moe_host;
}

void vf__steptime(const struct vf__step_work *w, const struct vf_gpu_spec *gpu,
		  struct vf__steptime_out *o)
{
	load_constants();
	memset(o, 0, sizeof *o);
	struct hw h = {.rate = w->rate_tflops * 1e12,
		       .bw = (gpu && gpu->bandwidth_gbs > 0 ? gpu->bandwidth_gbs * 1e9 : 4.8e12) * K.bw_eff,
		       .eff = gen_eff(gpu)};
	if (!(h.rate > 0)) {
		o->seconds = -1;
		return;
	}
	h.inv_rate_eff = 1 / (h.rate * h.eff);
	h.inv_bw = 1 / h.bw;
	double flops = 0, t = 0;
	struct vf__steptime_out f0 = *o;
	double fwd = layers_pass(&h, w, false, o, &flops);        /* forward */
	t += fwd;
	double head = gemm_s(&h, w->head.m, w->head.k, w->head.n, &flops);
	if (w->train) {
		if (w->ckpt) { /* recompute: the forward again */
			t += fwd;
			o->gemm_s += o->gemm_s - f0.gemm_s;
			o->attn_s += o->attn_s - f0.attn_s;
			o->elem_s += o->elem_s - f0.elem_s;
			o->launch_s += o->launch_s - f0.launch_s;
			o->moe_s += o->moe_s - f0.moe_s;
			flops *= 2;
		}
		t += layers_pass(&h, w, true, o, &flops);              /* backward */
		double fl2 = 0;
		head += gemm_s(&h, w->head.m, w->head.n, w->head.k, &fl2);
		if (w->head.weight_grad)
			head += gemm_s(&h, w->head.k, w->head.m, w->head.n, &fl2);
		flops += fl2;
	}
	double loss = w->loss_bytes / h.bw;
	o->gemm_s += head;
	o->elem_s += loss;
	t += head + loss;
	t *= w->micro;
	o->gemm_s *= w->micro;
	o->attn_s *= w->micro;
	o->elem_s *= w->micro;
	o->launch_s *= w->micro;
	o->moe_s *= w->micro;
	flops *= w->micro;
	if (w->train) {
		double opt_dev = w->opt_bytes / h.bw;
		double opt_host = w->opt_per_tensor ? w->opt_tensors * 12 * K.launch_s
						    : 12 * (1 + w->opt_tensors / 512) * K.launch_s;
		o->opt_s = opt_dev > opt_host ? opt_dev : opt_host;
		t += o->opt_s;
	}
	o->fixed_s = K.step_s;
	t += K.step_s;
	o->seconds = t;
	o->utilisation = t > 0 ? flops / (t * h.rate) : 0;
}
