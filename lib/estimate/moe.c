/* moe.c - mixture-of-experts, latent-attention and sliding-window terms of
 * the estimate (moe.h): the mechanisms of transformers' eager MoE loop and
 * of its MLA attention, computed from the architecture. */
#include "vramfit/estimate/moe.h"

#include <string.h>

static double mlp_params(const struct vf_arch *a, double f, bool bias)
{
	double h = (double)a->hidden;
	double m = (a->gated_mlp ? 3 : 2) * h * f;
	if (bias)
		m += (a->gated_mlp ? 2 : 1) * f + h;
	return m;
}

void vf_moe_terms(const struct vf_arch *a, struct vf_moe_terms *t)
{
	memset(t, 0, sizeof *t);
	double L = a->layers > 0 ? (double)a->layers : 1;
	double hd = a->head_dim > 0 ? (double)a->head_dim : 0;
	double kvh = a->kv_heads > 0 ? (double)a->kv_heads : (a->heads > 0 ? (double)a->heads : 1);
	t->layers = L;
	t->heads = a->heads > 0 ? (double)a->heads : 1;
	t->dense_layers = L;
	t->dense_ffn = a->ffn > 0 ? (double)a->ffn : 0;
	t->kv_width = 2 * kvh * hd;
	if (a->experts > 0) {
		t->experts = (double)a->experts;
		t->topk = a->experts_per_token > 0 ? (double)a->experts_per_token : 2;
		if (t->topk > t->experts)
			t->topk = t->experts;
		t->moe_layers = a->moe_layers >= 0 && a->moe_layers <= a->layers ? (double)a->moe_layers : L;
		t->dense_layers = L - t->moe_layers;
		t->expert_ffn = a->moe_ffn > 0 ? (double)a->moe_ffn : t->dense_ffn;
		t->shared_ffn = (double)a->shared_ffn;
		t->expert_params = mlp_params(a, t->expert_ffn, a->expert_bias);
		t->idle_params = t->moe_layers * (t->experts - t->topk) * t->expert_params;
		t->routed_active = t->moe_layers * t->topk * t->expert_params;
	}
	if (a->kv_lora_rank > 0) {
		t->mla = true;
		t->q_rank = (double)a->q_lora_rank;
		t->kv_rank = (double)a->kv_lora_rank;
		t->qk_dim = (double)(a->qk_nope_dim + a->qk_rope_dim);
		t->v_dim = (double)a->v_head_dim;
		t->kv_width = t->heads * (t->qk_dim + t->v_dim); /* decompressed k and v */
		t->latent_kv_width = t->kv_rank + (double)a->qk_rope_dim;
	}
	if (a->sliding_window > 0) {
		t->window = (double)a->sliding_window;
		t->window_layers = (double)a->sliding_layers;
	}
}

double vf_moe_saved_per_token(const struct vf_moe_terms *t, double (*mlp_at)(const void *, double),
			      const void *ctx, double h, double C)
{
	double dense = t->dense_layers > 0 ? t->dense_layers * mlp_at(ctx, t->dense_ffn) : 0;
	if (t->experts <= 0)
		return dense / t->layers;
	double moe = t->topk * mlp_at(ctx, t->expert_ffn) /* gathered inputs and activations, top-k times */
		     + t->topk * C * h                    /* expert output kept by the routing-weight multiply */
		     + 4 * t->experts                     /* routing probabilities, fp32 softmax output */
		     + 4 * t->experts                     /* router logits (upcast copy) */
		     + 8 * t->topk;                       /* top-k indices, int64 */
	if (t->shared_ffn > 0)
		moe += mlp_at(ctx, t->shared_ffn);         /* shared experts: a dense MLP on every token */
	return (dense + t->moe_layers * moe) / t->layers;
}

double vf_moe_mla_extra_saved(const struct vf_moe_terms *t, double C)
{
	if (!t->mla)
		return 0;
	double extra = 0;
	if (t->q_rank > 0)
		extra += 4 * t->q_rank + C * t->q_rank; /* q_a output: fp32 norm input, q_b input */
	extra += 4 * t->kv_rank + C * t->kv_rank;       /* compressed kv: fp32 norm input, kv_b input */
	/* the caller counts v, the attention output and the o_proj input as
	 * heads x qk_dim wide; MLA's are heads x v_head_dim */
	extra -= 3 * C * t->heads * (t->qk_dim - t->v_dim);
	return extra;
}

double vf_moe_kv_elements(const struct vf_moe_terms *t, double b, double tokens)
{
	double full_layers = t->layers - t->window_layers;
	double kept = t->window > 0 && t->window < tokens ? t->window : tokens;
	return b * t->kv_width * (full_layers * tokens + t->window_layers * kept);
}

double vf_moe_lora_mlp(const struct vf_moe_terms *t, double (*per_mlp)(const void *, double),
		       const void *ctx)
{
	double total = t->dense_layers * per_mlp(ctx, t->dense_ffn);
	if (t->experts > 0) {
		double layer = t->experts * per_mlp(ctx, t->expert_ffn);
		if (t->shared_ffn > 0)
			layer += per_mlp(ctx, t->shared_ffn);
		total += t->moe_layers * layer;
	}
	return total;
}
