/* ssm.c - the memory terms of Mamba mixers (ssm.h).
 *
 * What autograd keeps per token through a Mamba-1 mixer (transformers'
 * path with the mamba_ssm kernels, mamba_inner_fn): the normed input read
 * by in_proj, the fp32 RMSNorm input, the in_proj output x and z (2i),
 * the conv output (i), x_proj's output (r + 2n), delta (i), the gated scan
 * output read by out_proj (i); the selective scan keeps its running state
 * (i x n, fp32 complex pairs: 2 floats) once per 2048-token chunk.
 * Mamba-2 (mamba_split_conv1d_scan_combined): the in_proj output
 * (2i + 2gn + heads), the conv output (i + 2gn), dt in fp32 (heads), the
 * scan output before the gated norm (i), the norm's rstd (fp32, one per
 * token) and out_proj's input (i); the chunked scan keeps the states at
 * each chunk boundary (heads x head_dim x n fp32 = i x n x 4 bytes per
 * chunk of `chunk` tokens).
 * Inference: per sequence and SSM layer, the conv window (conv channels
 * x kernel) and the scan state (i x n), in the model's dtype. */
#include "vramfit/estimate/ssm.h"

#include <string.h>

void vf_ssm_terms(const struct vf_arch *a, struct vf_ssm_terms *t)
{
	memset(t, 0, sizeof *t);
	if (a->ssm_layers <= 0)
		return;
	t->L = a->layers > 0 ? (double)a->layers : 1;
	t->layers = (double)a->ssm_layers;
	t->attn_layers = a->attn_layers >= 0 ? (double)a->attn_layers : t->L - t->layers;
	t->inner = (double)a->ssm_inner;
	t->state = (double)a->ssm_state;
	t->conv = (double)a->ssm_conv;
	t->conv_dim = (double)(a->ssm_conv_dim > 0 ? a->ssm_conv_dim : a->ssm_inner);
	t->heads = (double)a->ssm_heads;
	t->dt_rank = (double)a->ssm_dt_rank;
	t->chunk = a->ssm_heads > 0 ? (double)(a->ssm_chunk > 0 ? a->ssm_chunk : 256) : 2048;
	t->mlp = a->ffn <= 0 ? 0 : a->ffn_layers > 0 ? (double)a->ffn_layers / t->L : 1;
}

double vf_ssm_saved_per_token(const struct vf_ssm_terms *t, double h, double C, double seq)
{
	double i = t->inner, n = t->state, bytes = 4 * h + C * h; /* norm: fp32 input, normed output */
	double chunks = seq > 0 ? (seq + t->chunk - 1) / t->chunk : 1;
	double per_chunk = t->heads > 0 ? 4 * i * n : 8 * i * n;
	if (t->heads > 0) {
		double gn = (t->conv_dim - i) / 2;
		bytes += C * (2 * i + 2 * gn + t->heads); /* in_proj output */
		bytes += C * t->conv_dim;                  /* conv output */
		bytes += 4 * t->heads + 4;                 /* dt (fp32), rstd */
		bytes += 2 * C * i;                        /* scan output, out_proj input */
	} else {
		bytes += C * 2 * i;                        /* in_proj output (x, z) */
		bytes += C * i;                            /* conv output */
		bytes += C * (t->dt_rank + 2 * n);         /* x_proj output */
		bytes += C * i;                            /* delta */
		bytes += C * i;                            /* gated output: out_proj input */
	}
	if (seq > 0)
		bytes += chunks * per_chunk / seq; /* the scan's chunk states, per token */
	return bytes;
}

double vf_ssm_state_bytes(const struct vf_ssm_terms *t, double b, double C)
{
	return b * t->layers * (t->conv_dim * t->conv + t->inner * t->state) * C;
}
