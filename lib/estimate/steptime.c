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

static double attention_s(const struct hw *h, const struct vf__step_work *w,
			  const struct vf__layer_work *l, bool bwd, double *elem)
{
	double mult = bwd ? 2.5 : 1;
	if (w->attn == VF__ATTN_FLASH || w->attn == VF__ATTN_MEM_EFFICIENT)
		return mult * l->attn_flops / (h->rate * K.attn_eff);
	/* eager / math: QK^T and PV as batched GEMMs at the GEMM efficiency,
	 * softmax (+ position bias, dropout) reading and writing fp32 scores */
	*elem += (bwd ? 2 : 1) * l->score_elems * 4 * l->score_passes;
	return mult * l->attn_flops * h->inv_rate_eff;
}

/* One layer kind, forward and backward in one pass over its GEMMs:
 * device seconds of the dense part (*dev_f, *dev_b), the MoE expert part
 * (*moe_f, *moe_b) and the FLOPs of each direction. */
struct kind_t {
	double dev_f, dev_b, moe_f, moe_b, flops_f, flops_b, host_f, host_b, moe_host_f, moe_host_b;
};

static void kind_times(const struct hw *h, const struct vf__step_work *w,
		       const struct vf__layer_work *l, struct kind_t *k)
{
	memset(k, 0, sizeof *k);
	double gf = 0, gb = 0, mf = 0, mb = 0;
	for (int i = 0; i < l->ngemm; i++) {
		const struct vf__gemm *x = &l->gemm[i];
		double tf = gemm_s(h, x->m, x->k, x->n, &k->flops_f);
		double tb = 0;
		if (w->train) {
			if (x->input_grad)
				tb += gemm_s(h, x->m, x->n, x->k, &k->flops_b);  /* dX = dY W^T */
			if (x->weight_grad)
				tb += gemm_s(h, x->k, x->m, x->n, &k->flops_b);  /* dW = X^T dY */
		}
		if (l->experts > 0 && x->count >= l->experts) {
			mf += tf * x->count;
			mb += tb * x->count;
		} else {
			gf += tf * x->count;
			gb += tb * x->count;
		}
	}
	double ef = l->elem_bytes, eb = 2 * l->elem_bytes;
	double af = attention_s(h, w, l, false, &ef);
	double ab = w->train ? attention_s(h, w, l, true, &eb) : 0;
	k->dev_f = gf + af + ef * h->inv_bw;
	k->dev_b = gb + ab + eb * h->inv_bw;
	k->moe_f = mf;
	k->moe_b = mb;
	k->host_f = l->kernels * K.launch_s;
	k->host_b = l->kernels * K.bwd_kernels * K.launch_s;
	if (l->experts > 0) {
		k->moe_host_f = l->experts * (l->expert_kernels * K.launch_s + K.sync_s);
		k->moe_host_b = l->experts * (l->expert_kernels * K.bwd_kernels * K.launch_s + K.sync_s);
	}
}

/* A pass over all layers: max(device, host), the MoE loop's synchronised
 * part added. */
static double pass_s(const struct vf__step_work *w, const struct kind_t *k, bool bwd)
{
	double dev = 0, host = 0, moe = 0;
	for (int i = 0; i < w->nkinds; i++) {
		double c = w->kind[i].count;
		dev += c * (bwd ? k[i].dev_b : k[i].dev_f);
		host += c * (bwd ? k[i].host_b : k[i].host_f);
		moe += c * (bwd ? k[i].moe_b + k[i].moe_host_b : k[i].moe_f + k[i].moe_host_f);
	}
	return (dev > host ? dev : host) + moe;
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
	struct kind_t k[2];
	double flops = 0;
	for (int i = 0; i < w->nkinds && i < 2; i++) {
		kind_times(&h, w, &w->kind[i], &k[i]);
		/* FLOPs per layer of this kind (the counts of repeated GEMMs
		 * are in their times; MFU uses the model's own FLOPs) */
		flops += w->kind[i].count * (k[i].flops_f * (w->ckpt ? 2 : 1) + k[i].flops_b);
	}
	double fwd = pass_s(w, k, false);
	double t = fwd;
	double head = gemm_s(&h, w->head.m, w->head.k, w->head.n, &flops);
	if (w->train) {
		if (w->ckpt)
			t += fwd;                                          /* recompute */
		t += pass_s(w, k, true);                                   /* backward */
		head += gemm_s(&h, w->head.m, w->head.n, w->head.k, &flops);
		if (w->head.weight_grad)
			head += gemm_s(&h, w->head.k, w->head.m, w->head.n, &flops);
	}
	t += head + w->loss_bytes * h.inv_bw;
	t *= w->micro;
	flops *= w->micro;
	if (w->train) {
		double opt_dev = w->opt_bytes * h.inv_bw;
		double opt_host = w->opt_per_tensor ? w->opt_tensors * 12 * K.launch_s
						    : 12 * (1 + w->opt_tensors / 512) * K.launch_s;
		o->opt_s = opt_dev > opt_host ? opt_dev : opt_host;
		t += o->opt_s;
	}
	t += K.step_s;
	o->seconds = t;
	o->utilisation = t > 0 ? flops / (t * h.rate) : 0;
}
