/* ssm.h - the memory terms of state-space (Mamba) layers in the LLM
 * estimator (lib/estimate/ssm.c): what a Mamba mixer saves for the
 * backward per token (its projections, conv output, dt and the chunked
 * scan's states) and the recurrent state a sequence holds in inference
 * (conv window and scan state per SSM layer) in place of a KV cache. */
#ifndef VRAMFIT_ESTIMATE_SSM_H
#define VRAMFIT_ESTIMATE_SSM_H

#include <stdbool.h>

#include "vramfit/model/arch.h"

struct vf_ssm_terms {
	double layers;      /* SSM layers; 0: none (the terms below unused) */
	double attn_layers; /* attention layers (the KV cache's) */
	double L;           /* all layers */
	double inner, state, conv, conv_dim, heads, dt_rank, chunk;
	double mlp;         /* the share of layers with an MLP / MoE block (hybrids: 1 when
			       every layer has one; Nemotron-H: its MLP and MoE blocks) */
};

void vf_ssm_terms(const struct vf_arch *a, struct vf_ssm_terms *t);

/* Bytes one SSM mixer saves for the backward per token (compute dtype C
 * bytes; the input norm's fp32 copy included), over sequences of `seq`
 * tokens (the scan keeps a state per chunk). */
double vf_ssm_saved_per_token(const struct vf_ssm_terms *t, double h, double C, double seq);

/* The recurrent state of b sequences in inference, bytes (states in the
 * model's dtype of C bytes, as transformers' Mamba caches hold them). */
double vf_ssm_state_bytes(const struct vf_ssm_terms *t, double b, double C);

#endif
