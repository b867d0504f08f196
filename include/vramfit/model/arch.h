/* arch.h - a model's architecture: the fields the estimator needs, read from
 * a Hugging Face config.json (or a catalog entry written in the same keys),
 * or inferred from tensor names and shapes; and parameter counts by group
 * computed from the architecture.
 *
 * Unknown integer fields are -1. `known` and `inferred` are bitmasks of
 * VF_ARCH_F_* telling which fields have a value and which of those were
 * inferred from tensors rather than read from a config. */
#ifndef VRAMFIT_ARCH_H
#define VRAMFIT_ARCH_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"

enum {
	VF_ARCH_F_FAMILY = 1u << 0,
	VF_ARCH_F_HIDDEN = 1u << 1,
	VF_ARCH_F_LAYERS = 1u << 2,
	VF_ARCH_F_HEADS = 1u << 3,
	VF_ARCH_F_KV_HEADS = 1u << 4,
	VF_ARCH_F_HEAD_DIM = 1u << 5,
	VF_ARCH_F_FFN = 1u << 6,
	VF_ARCH_F_VOCAB = 1u << 7,
	VF_ARCH_F_TIED = 1u << 8,
	VF_ARCH_F_EXPERTS = 1u << 9,
	VF_ARCH_F_EXPERTS_PER_TOKEN = 1u << 10,
	VF_ARCH_F_MAX_POSITIONS = 1u << 11,
};

struct vf_arch {
	char family[32];          /* model_type: llama, mistral, mixtral, qwen2, qwen3, gemma,
				     gemma2, gemma3, phi3, gpt2, gpt_neox, t5, falcon, ltx-dit... */
	int64_t hidden;           /* d_model */
	int64_t layers;           /* decoder layers (T5: encoder layers) */
	int64_t decoder_layers;   /* T5: decoder layers; else 0 */
	int64_t heads;            /* attention (query) heads */
	int64_t kv_heads;         /* key/value heads (GQA/MQA); = heads for MHA */
	int64_t head_dim;         /* per-head dimension (may differ from hidden/heads) */
	int64_t ffn;              /* MLP intermediate size (per expert for MoE) */
	int64_t vocab;
	bool tied_embeddings;     /* lm_head shares the input embedding */
	int64_t experts;          /* MoE experts per layer; 0 = dense */
	int64_t experts_per_token;
	int64_t max_positions;
	bool gated_mlp;           /* SwiGLU/GeGLU: three MLP matrices (gate, up, down) */
	bool linear_bias;         /* linear layers carry biases (gpt2, neox, falcon) */
	bool layer_norm;          /* LayerNorm (weight+bias) rather than RMSNorm */
	bool learned_positions;   /* learned position embedding table (gpt2) */
	bool parallel_attn;       /* attention and MLP in parallel (neox, falcon, phi) */
	double rotary_pct;        /* fraction of head_dim rotated (neox); 1 by default */
	bool qkv_bias;            /* q/k/v projections carry biases, o does not (qwen2) */
	bool o_bias;              /* the attention output projection carries a bias */
	bool mlp_bias;            /* MLP matrices carry biases */
	bool qk_norm;             /* per-head RMSNorm of q and k (qwen3, gemma3) */
	int norms_per_layer;      /* norm modules per decoder layer (2; gemma2/3: 4) */
	int64_t rel_attn_buckets; /* T5 relative attention buckets; 0 = none */
	/* Mixture of experts (arch-moe.c). experts > 0: moe_layers of the
	 * layers hold `experts` routed expert MLPs of width moe_ffn, a router
	 * hidden -> experts, and shared experts of total width shared_ffn;
	 * the other layers hold a dense MLP of width ffn. */
	int64_t moe_ffn;          /* intermediate size of one routed expert */
	int64_t moe_layers;       /* layers with experts; -1 = all */
	int64_t shared_ffn;       /* always-on shared expert MLP width (0 = none) */
	bool shared_expert_gate;  /* qwen2_moe: sigmoid gate hidden -> 1 on the shared expert */
	bool router_bias;         /* router bias (gpt-oss) or score correction bias (deepseek v3) */
	bool expert_bias;         /* expert matrices carry biases (gpt-oss) */
	int64_t moe_in;           /* a routed expert's input width when not hidden (nemotron_h's
				     moe_latent_size); 0 = hidden */
	int64_t ffn_layers;       /* hybrids whose blocks hold a mixer or a feed-forward, not
				     both (nemotron_h): blocks with an MLP or experts; 0 = all */
	/* Multi-head latent attention (deepseek v2/v3); kv_lora_rank 0 = none */
	int64_t q_lora_rank;      /* 0: q projected directly */
	int64_t kv_lora_rank;     /* compressed k/v width (what an MLA cache holds) */
	int64_t qk_nope_dim, qk_rope_dim, v_head_dim;
	int64_t mtp_layers;       /* deepseek v3 multi-token-prediction modules the checkpoint
				     holds and transformers does not build (not in the count) */
	bool attn_sinks;          /* gpt-oss: one learned sink logit per head */
	bool qk_norm_full;        /* q/k norms of width heads*hd and kv_heads*hd (olmo2,
				     cohere, stablelm) rather than one head_dim each */
	int norm_affine;          /* elements per norm per width: -1 from layer_norm (2 / 1),
				     0 none (olmo), 1 weight only (cohere) */
	bool emb_norm;            /* bloom, bert: a LayerNorm right after the embedding */
	bool lm_head_bias;        /* phi: the lm_head carries a bias */
	bool encoder;             /* bert-like encoder (bert, roberta, deberta-v2) */
	int64_t type_vocab;       /* bert token types (0 = none) */
	int64_t rel_positions;    /* deberta-v2: relative position embeddings rows (0 = none) */
	int64_t sliding_window;   /* tokens; 0 = full attention everywhere */
	int64_t sliding_layers;   /* layers with the sliding window (of `layers`) */
	bool act_gelu_python;     /* hidden_act gelu_new: transformers' NewGELUActivation (phi) */
	bool eager_attention;     /* the modeling code has only explicit s x s attention
				     (bloom: ALiBi through baddbmm; deberta-v2) */
	/* State-space and hybrid models (lib/model/ssm.c). ssm_layers > 0:
	 * that many layers mix tokens with a Mamba block of ssm_inner
	 * channels (ssm_heads 0: Mamba-1, a state of ssm_state per channel;
	 * else Mamba-2 heads of ssm_inner / ssm_heads channels sharing
	 * ssm_state-wide B and C per group). */
	int64_t ssm_layers;
	int64_t ssm_inner;        /* expand x hidden: channels the scan runs over */
	int64_t ssm_state;        /* d_state */
	int64_t ssm_conv;         /* causal depthwise conv kernel */
	int64_t ssm_conv_dim;     /* conv channels (Mamba-1: inner; Mamba-2: inner + 2 groups x state) */
	int64_t ssm_heads;        /* Mamba-2 heads; 0: Mamba-1 */
	int64_t ssm_dt_rank;      /* Mamba-1: x_proj's low-rank dt width */
	int64_t ssm_chunk;        /* Mamba-2 chunked scan: states saved per chunk */
	int64_t attn_layers;      /* layers with attention (what a KV cache holds); -1: all */
	/* Families whose layout the common formula does not describe (ssm.c,
	 * speech and multimodal readers) count themselves: layout_counted and
	 * the groups embedding, attention (the token mixer: attention or the
	 * SSM projections), mlp, norm, experts, other. */
	bool layout_counted;
	int64_t layout[6];
	int64_t active_params;    /* MoE: parameters one token passes through (-1: not computed) */
	bool rel_bias_every_layer; /* umt5: a relative attention table in every self-attention */
	bool encoder_only;        /* T5EncoderModel / UMT5EncoderModel: the encoder stack alone */
	int64_t head_params;      /* a task head beyond the base encoder (ForMaskedLM,
				     ForSequenceClassification, ForTokenClassification, ...) */
	char task[40];            /* architectures[0] when it names a head or a stack, else "" */
	int64_t params_exact;     /* the safetensors header count when files were read; -1 */
	bool approximate;         /* some size-bearing config keys were not understood */
	char not_understood[256]; /* those keys, comma-separated ("kv_lora_rank, ...") */
	unsigned known;           /* VF_ARCH_F_* with a value */
	unsigned inferred;        /* VF_ARCH_F_* inferred from tensors */
	char source[32];          /* "config.json", "metadata", "tensors", "catalog" */
};

/* Parameter counts by group (elements, not bytes). */
struct vf_param_groups {
	int64_t embedding; /* token (+position) embeddings and an untied lm_head */
	int64_t attention; /* q, k, v, o projections (+ biases) */
	int64_t mlp;       /* dense MLP matrices (+ biases) */
	int64_t norm;      /* norm weights (+ biases) */
	int64_t experts;   /* MoE expert MLPs and routers */
	int64_t other;     /* anything not above */
	int64_t total;
};

/* Set every field unknown (-1 / false / empty). */
void vf_arch_init(struct vf_arch *a);

/* Read an architecture from a Hugging Face config object. `what` names the
 * source in errors (a path). Families not listed fall back to the common
 * keys (hidden_size, num_hidden_layers, ...). Fails with VF_ENOTFOUND when
 * the object is not a transformer config (no hidden size or layer count),
 * naming the missing field; with VF_ERR on a field of the wrong type. */
vf_status vf_arch_from_config(const cJSON *cfg, const char *what, struct vf_arch *a,
			      struct vf_error *err);

/* Parameters of a model with this architecture, by group. Exact for the
 * families above (matches the transformers implementation); returns false
 * when fields needed are unknown. */
bool vf_arch_param_groups(const struct vf_arch *a, struct vf_param_groups *g);

/* Mixture of experts: the parameters one token passes through (the
 * total less the routed experts it skips: experts - experts_per_token of
 * them in each MoE layer); the total for a dense model; -1 when the
 * architecture cannot be counted (lib/model/ssm.c). */
int64_t vf_arch_active_params(const struct vf_arch *a);

/* Parameters of the deepseek v3 MTP modules the checkpoint holds beyond the
 * count (each: two norms, the 2H -> H projection, one MoE decoder layer, its
 * own embedding, head and norm); 0 when none. */
int64_t vf_arch_mtp_params(const struct vf_arch *a);

/* The longest sequence the model's positions cover: max_positions (less
 * RoBERTa's padding offset of 2), or 0 when the config gives none. *hard:
 * a learned absolute position table, which has no row past it (the model
 * cannot run longer); else rotary, relative or ALiBi positions, which run
 * past it, beyond the trained context. *kind names them ("learned
 * absolute", "rotary", "relative", "" when not known). */
int64_t vf_arch_position_limit(const struct vf_arch *a, bool *hard, const char **kind);

/* Mark the architecture approximate, naming what was not understood
 * (appended to not_understood, comma-separated, truncated with "..."). */
void vf_arch_not_understood(struct vf_arch *a, const char *what);

/* Name in `a` every key of cfg that bears on size (arch-keys.c: patterns)
 * and that the family reader did not understand (its table). */
void vf_arch_check_keys(const cJSON *cfg, const char *family, const char *prefix,
			struct vf_arch *a);

/* Write the architecture as the JSON object of the inspect contract. */
cJSON *vf_arch_to_json(const struct vf_arch *a);

#endif
