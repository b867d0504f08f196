/* moe.h - the memory and time mechanisms of mixture-of-experts layers,
 * multi-head latent attention and sliding-window attention, as the
 * estimator (estimate.c) needs them, from the architecture (arch.h).
 *
 * MoE in transformers' eager loop (Mixtral, Qwen-MoE, DeepSeek, gpt-oss,
 * Granite-MoE): per layer the router (hidden -> experts) gives logits, a
 * softmax in fp32 and the top-k experts of each token; then for each expert
 * hit, its tokens are gathered (index), run through that expert's MLP as
 * GEMMs of about tokens x top-k / experts rows, scaled by their routing
 * weight and added back (index_add). Saved for backward per token: the
 * top-k gathered inputs and the expert MLP's activations top-k times, the
 * scaled outputs, the fp32 routing probabilities and the top-k indices;
 * shared experts and dense layers as a dense MLP.
 *
 * MLA (DeepSeek-V2/V3) in transformers: q through its low-rank bottleneck,
 * k/v compressed to kv_lora_rank + a shared rope key, decompressed per head
 * by kv_b_proj; the KV cache holds the decompressed k (nope + rope) and v
 * per head (inference engines that cache the latent hold kv_lora_rank +
 * rope instead: vf_moe_terms.latent_kv_width). */
#ifndef VRAMFIT_MOE_H
#define VRAMFIT_MOE_H

#include "vramfit/model/arch.h"

struct vf_moe_terms {
	/* mixture of experts: 0 experts = dense */
	double experts, topk;     /* routed experts per MoE layer; per token */
	double moe_layers;        /* layers with experts */
	double dense_layers;      /* layers with a dense MLP */
	double expert_ffn;        /* width of one routed expert */
	double shared_ffn;        /* width of the shared experts (0 none) */
	double dense_ffn;         /* width of a dense layer's MLP */
	double expert_params;     /* parameters of one routed expert */
	double idle_params;       /* routed-expert parameters a token skips, all layers */
	double routed_active;     /* routed-expert parameters a token passes through, all layers */
	/* attention */
	bool mla;
	double q_rank, kv_rank, qk_dim, v_dim, heads;
	double kv_width;          /* K + V elements cached per token per layer (transformers) */
	double latent_kv_width;   /* MLA: what a latent cache holds per token per layer */
	double window;            /* sliding window (tokens); 0 none */
	double window_layers;     /* layers with it */
	double layers;
};

/* The terms of an architecture (all 0 for a dense model without MLA or
 * sliding windows, kv_width 2 x kv_heads x head_dim). */
void vf_moe_terms(const struct vf_arch *a, struct vf_moe_terms *t);

/* Bytes saved per token for backward by the feed-forward part of an
 * average layer, given mlp_at(f) = bytes one dense MLP of width f saves per
 * token (as the caller's layer model counts it), the hidden size h and the
 * compute dtype's bytes C. Dense models: mlp_at(dense_ffn). */
double vf_moe_saved_per_token(const struct vf_moe_terms *t, double (*mlp_at)(const void *, double),
			      const void *ctx, double h, double C);

/* Bytes saved per token per layer beyond what a standard attention of
 * heads x qk_dim queries, keys and values saves (MLA: the latent inputs of
 * q_b / kv_b and their norms, v and the attention output narrower than
 * qk). 0 without MLA. */
double vf_moe_mla_extra_saved(const struct vf_moe_terms *t, double C);

/* K/V cache elements for b sequences of `tokens` tokens, all layers:
 * sliding-window layers keep at most `window` tokens. */
double vf_moe_kv_elements(const struct vf_moe_terms *t, double b, double tokens);

/* Adapter parameters over every MLP module of the model, given per_mlp(f)
 * = a LoRA's parameters on one MLP of width f: dense layers, each routed
 * expert (peft wraps each expert's nn.Linear the target names match) and
 * the shared experts. */
double vf_moe_lora_mlp(const struct vf_moe_terms *t, double (*per_mlp)(const void *, double),
		       const void *ctx);

#endif
