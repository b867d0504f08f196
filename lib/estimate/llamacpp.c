/* llamacpp.c - llama.cpp inference memory of a GGUF model (llamacpp.h):
 * each tensor placed by its layer, the KV cache of the offloaded layers, a
 * compute buffer. One term per line, with its unit. */
#include "vramfit/estimate/llamacpp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The repeating layer a tensor name belongs to ("blk.12.attn_q.weight" ->
 * 12), -1 for the input (token_embd), -2 for the output layer. */
static int64_t layer_of(const char *name)
{
	if (strncmp(name, "blk.", 4) == 0) {
		char *end;
		long long l = strtoll(name + 4, &end, 10);
		return end != name + 4 && *end == '.' && l >= 0 ? (int64_t)l : -2;
	}
	if (strncmp(name, "token_embd", 10) == 0 || strncmp(name, "position_embd", 13) == 0 ||
	    strncmp(name, "token_types", 11) == 0)
		return -1;
	return -2; /* output, output_norm and anything else at the end */
}

vf_status vf_llamacpp_estimate(const struct vf_gguf *g, const struct vf_arch *a,
			       const struct vf_llamacpp_setup *s, struct vf_llamacpp_estimate *e,
			       struct vf_error *err)
{
	memset(e, 0, sizeof *e);
	if (!(a->known & VF_ARCH_F_LAYERS) || !(a->known & VF_ARCH_F_HEADS) ||
	    !(a->known & VF_ARCH_F_HIDDEN) || a->layers < 1 || a->heads < 1)
		return vf_error_set(err, VF_ERR,
				    "%s: the metadata lacks the layer count, heads or hidden size "
				    "(%s.block_count, .attention.head_count, .embedding_length)",
				    g->path, g->architecture[0] ? g->architecture : "<arch>");
	int64_t n = a->layers;
	int64_t ngl = s->n_gpu_layers < 0 || s->n_gpu_layers > n + 1 ? n + 1 : s->n_gpu_layers;
	int64_t first = n + 1 - ngl; /* slots first .. n on the GPU; slot n is the output */
	e->layers = n;
	e->gpu_layers = ngl > 0 ? ngl - 1 : 0; /* the output layer takes the last slot */
	e->output_on_gpu = ngl > 0;
	for (size_t i = 0; i < g->ntensors; i++) {
		int64_t l = layer_of(g->tensors[i].name);
		bool gpu = l == -2 ? e->output_on_gpu : l >= 0 && l >= first && l < n;
		if (gpu)
			e->weights_gpu += g->tensors[i].bytes;
		else
			e->weights_cpu += g->tensors[i].bytes;
	}
	int64_t hd = a->head_dim > 0 ? a->head_dim : a->hidden / a->heads;
	int64_t kv_heads = a->kv_heads > 0 ? a->kv_heads : a->heads;
	e->kv_cells = (s->ctx + VF_LLAMACPP_CTX_PAD - 1) / VF_LLAMACPP_CTX_PAD * VF_LLAMACPP_CTX_PAD;
	double kb = s->k_bytes > 0 ? s->k_bytes : 2, vb = s->v_bytes > 0 ? s->v_bytes : 2; /* f16 */
	uint64_t kv_layer = (uint64_t)((double)e->kv_cells * (double)(kv_heads * hd) /* cells x width */
				       * (kb + vb));
	e->kv_gpu = kv_layer * (uint64_t)e->gpu_layers;
	e->kv_cpu = kv_layer * (uint64_t)(n - e->gpu_layers);
	int64_t vocab = a->vocab > 0 ? a->vocab : 0;
	int64_t ffn = a->ffn > 0 ? a->ffn : 4 * a->hidden;
	uint64_t logits = (uint64_t)VF_LLAMACPP_UBATCH * (uint64_t)vocab * 4; /* f32 */
	uint64_t mlp = (uint64_t)VF_LLAMACPP_UBATCH * (uint64_t)ffn * 4 * 2;  /* gate, up f32 */
	uint64_t x = (uint64_t)VF_LLAMACPP_UBATCH * (uint64_t)a->hidden * 4 * 3; /* residual, norm, attn out */
	e->compute_gpu = ngl > 0 ? (logits > mlp ? logits : mlp) + x : 0;
	e->total_gpu = e->weights_gpu + e->kv_gpu + e->compute_gpu;
	e->approximate = true;
	if (a->sliding_window > 0)
		snprintf(e->notes, sizeof e->notes,
			 "sliding-window layers keep a smaller cache in llama.cpp; counted at the full "
			 "context");
	else if (a->kv_lora_rank > 0)
		snprintf(e->notes, sizeof e->notes, "latent attention (MLA) cache not modelled");
	else if (a->approximate)
		snprintf(e->notes, sizeof e->notes, "architecture not understood: %s",
			 a->not_understood);
	return VF_OK;
}
