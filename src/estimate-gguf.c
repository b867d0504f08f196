/* estimate-gguf.c - `vramfit estimate MODEL.gguf`: a GGUF model runs in
 * llama.cpp, for inference only: its weights as stored, the layers
 * --n-gpu-layers offloads, the KV cache at --ctx, a compute buffer and the
 * CUDA context, against each GPU. */
#include "estimate-gguf.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/infer.h"
#include "vramfit/estimate/llamacpp.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/gpu/gpu-list.h"

#define DEFAULT_CTX 4096

static int load_gpus(const struct gguf_args *a, struct vf_gpu_set *gs)
{
	struct vf_error err = {0};
	vf_gpu_set_init(gs);
	for (int i = 0; i < a->ngpus; i++)
		if (vf_gpu_spec_is_list(a->gpus[i]))
			return vf_cli_usage("estimate", "--gpu %s: a GGUF file is estimated against each card "
							"alone; give the cards as --gpu A --gpu B (a model from the "
							"catalog with --engine llamacpp splits over a set)",
					    a->gpus[i]);
		else if (vf_gpu_set_add_spec(gs, a->gpus[i], &err) != VF_OK)
			return err.code == VF_EUSAGE ? vf_cli_usage("estimate", "%s", err.msg)
						     : vf_cli_fail_err(&err);
	if (a->ngpus)
		return -1;
	size_t n;
	const struct vf_gpu_spec *all = vf_gpu_catalog(&n, &err);
	if (!all)
		return vf_cli_fail_err(&err);
	for (size_t i = 0; i < n; i++)
		if (all[i].common && vf_gpu_set_add_spec(gs, all[i].id, &err) != VF_OK)
			return vf_cli_fail_err(&err);
	return -1;
}

static int64_t context_of(const struct vf_gpu *g, const struct vf_setup *s)
{
	if (s->context_bytes >= 0)
		return s->context_bytes;
	const struct vf_gpu_spec *spec = g->catalog_id[0] ? vf_gpu_catalog_find(g->catalog_id) : NULL;
	return vf_estimate_default_context(spec);
}

static cJSON *to_json(const struct vf_model *m, const struct vf_llamacpp_estimate *e,
		      const struct vf_gpu_set *gs, const struct vf_setup *s, int64_t ctx,
		      const struct gguf_args *a)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "model", m->path);
	cJSON_AddStringToObject(o, "runtime", "llama.cpp");
	cJSON_AddStringToObject(o, "mode", "infer");
	cJSON_AddNumberToObject(o, "params", (double)m->params);
	cJSON_AddNumberToObject(o, "ctx", (double)ctx);
	cJSON_AddNumberToObject(o, "kv_cells", (double)e->kv_cells);
	cJSON_AddStringToObject(o, "cache_type_k", a->cache_k ? a->cache_k : "f16");
	cJSON_AddStringToObject(o, "cache_type_v", a->cache_v ? a->cache_v : "f16");
	cJSON_AddNumberToObject(o, "layers", (double)e->layers);
	cJSON_AddNumberToObject(o, "gpu_layers", (double)e->gpu_layers);
	cJSON_AddBoolToObject(o, "output_on_gpu", e->output_on_gpu);
	cJSON *t = cJSON_AddObjectToObject(o, "gpu_bytes");
	cJSON_AddNumberToObject(t, "weights", (double)e->weights_gpu);
	cJSON_AddNumberToObject(t, "kv_cache", (double)e->kv_gpu);
	cJSON_AddNumberToObject(t, "compute", (double)e->compute_gpu);
	cJSON *c = cJSON_AddObjectToObject(o, "cpu_bytes");
	cJSON_AddNumberToObject(c, "weights", (double)e->weights_cpu);
	cJSON_AddNumberToObject(c, "kv_cache", (double)e->kv_cpu);
	cJSON_AddBoolToObject(o, "approximate", e->approximate);
	if (e->notes[0])
		cJSON_AddStringToObject(o, "not_understood", e->notes);
	cJSON *g = cJSON_AddArrayToObject(o, "gpus");
	for (size_t i = 0; i < gs->count; i++) {
		const struct vf_gpu *d = &gs->gpus[i];
		int64_t need = (int64_t)e->total_gpu + context_of(d, s);
		int64_t have = d->memory_total_mib * 1048576;
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "id", d->catalog_id[0] ? d->catalog_id : d->name);
		cJSON_AddNumberToObject(r, "memory_bytes", (double)have);
		cJSON_AddNumberToObject(r, "context_bytes", (double)context_of(d, s));
		cJSON_AddNumberToObject(r, "peak_bytes", (double)need);
		cJSON_AddBoolToObject(r, "fits", need <= have);
		cJSON_AddNumberToObject(r, "headroom_bytes", (double)(have - need));
		cJSON_AddItemToArray(g, r);
	}
	return o;
}

/* "f16", or "K q8_0, V f16" where the two differ. */
static const char *kv_types(const struct gguf_args *a, char *o, size_t n)
{
	const char *k = a->cache_k ? a->cache_k : "f16", *v = a->cache_v ? a->cache_v : "f16";
	if (strcmp(k, v) == 0)
		snprintf(o, n, "%s", k);
	else
		snprintf(o, n, "K %s, V %s", k, v);
	return o;
}

static void print_text(const struct vf_model *m, const struct vf_llamacpp_estimate *e,
		       const struct vf_gpu_set *gs, const struct vf_setup *s, int64_t ctx,
		       const struct gguf_args *a)
{
	char b1[32], b2[32], b3[32];
	printf("Model  %s: %s parameters, %s as stored (GGUF, %s)\n", vf_cli_safe(m->path),
	       vf_fmt_params(b1, sizeof b1, m->params), vf_fmt_bytes(b2, sizeof b2, (double)m->bytes),
	       m->gguf->architecture[0] ? vf_cli_safe(m->gguf->architecture) : "?");
	printf("Setup  llama.cpp inference, context %" PRId64 " tokens, %" PRId64 " of %" PRId64
	       " layers%s on the GPU\n\n",
	       ctx, e->gpu_layers, e->layers, e->output_on_gpu ? " and the output layer" : "");
	struct vf_table t;
	const char *hdr[] = {"on the GPU", "size"};
	vf_table_init(&t, 2, hdr);
	vf_table_set_right(&t, 1, true);
	vf_table_addf(&t, "weights (as stored)", vf_fmt_bytes(b1, sizeof b1, (double)e->weights_gpu));
	char kv[48];
	snprintf(kv, sizeof kv, "KV cache (%s)", kv_types(a, b3, sizeof b3));
	vf_table_addf(&t, kv, vf_fmt_bytes(b1, sizeof b1, (double)e->kv_gpu));
	vf_table_addf(&t, "compute buffer (approx.)", vf_fmt_bytes(b1, sizeof b1, (double)e->compute_gpu));
	vf_table_addf(&t, "total without the CUDA context", vf_fmt_bytes(b1, sizeof b1, (double)e->total_gpu));
	vf_table_print(&t, stdout);
	vf_table_release(&t);
	printf("In host memory: weights %s (the token embedding%s), KV cache %s\n\n",
	       vf_fmt_bytes(b1, sizeof b1, (double)e->weights_cpu),
	       e->gpu_layers < e->layers ? " and the layers not offloaded" : "",
	       vf_fmt_bytes(b2, sizeof b2, (double)e->kv_cpu));
	const char *gh[] = {"GPU", "VRAM", "fits", "headroom"};
	vf_table_init(&t, 4, gh);
	vf_table_set_right(&t, 1, true);
	vf_table_set_right(&t, 3, true);
	for (size_t i = 0; i < gs->count; i++) {
		const struct vf_gpu *d = &gs->gpus[i];
		int64_t need = (int64_t)e->total_gpu + context_of(d, s);
		int64_t have = d->memory_total_mib * 1048576;
		vf_table_addf(&t, d->catalog_id[0] ? d->catalog_id : vf_cli_safe(d->name),
			      vf_fmt_bytes(b1, sizeof b1, (double)have), need <= have ? "yes" : "no",
			      vf_fmt_bytes(b3, sizeof b3, (double)(have - need)));
	}
	vf_table_print(&t, stdout);
	vf_table_release(&t);
	printf("\nAssumptions\n");
	printf("  - llama.cpp: weights as stored; the token embedding stays in host memory\n");
	printf("  - --n-gpu-layers %s: the last layers and then the output layer on the GPU\n",
	       a->n_gpu_layers < 0 ? "all (default)" : "as given");
	printf("  - KV cache %s for %" PRId64 " cells (--ctx %" PRId64 "%s, padded to %d; "
	       "--cache-type-k/v)\n",
	       kv_types(a, b3, sizeof b3), e->kv_cells, ctx, a->ctx ? "" : ", the default",
	       VF_LLAMACPP_CTX_PAD);
	printf("  - compute buffer: logits or MLP of a %d-token ubatch with flash attention "
	       "(approximate)\n",
	       VF_LLAMACPP_UBATCH);
	printf("  - CUDA context %s (--context-mib)\n",
	       s->context_bytes >= 0 ? "as given" : "as PyTorch's default for the GPU");
	if (e->notes[0])
		printf("  - approximate: %s\n", e->notes);
}

int vf_cli_estimate_gguf(const struct vf_model *m, const struct vf_setup *s,
			 const struct gguf_args *a)
{
	if ((s->given & VF_SETUP_G_MODE) && s->mode != VF_MODE_INFER)
		return vf_cli_usage("estimate", "%s: a GGUF file runs in llama.cpp, for inference: "
						"--mode infer (or leave --mode out)",
				    m->path);
	if (!m->has_arch)
		return vf_cli_fail("%s: no architecture in the GGUF metadata (general.architecture "
				   "and its keys)",
				   m->path);
	enum vf_ggml_cache ck = VF_CACHE_F16, cv = VF_CACHE_F16;
	if ((a->cache_k && !vf_ggml_cache_parse(a->cache_k, &ck)) ||
	    (a->cache_v && !vf_ggml_cache_parse(a->cache_v, &cv)))
		return vf_cli_usage("estimate", "--cache-type-k/v: expected f16, q8_0 or q4_0");
	struct vf_llamacpp_setup ls = {.ctx = a->ctx ? a->ctx : DEFAULT_CTX,
				       .n_gpu_layers = a->n_gpu_layers,
				       .k_bytes = vf_ggml_cache_bytes(ck),
				       .v_bytes = vf_ggml_cache_bytes(cv)};
	struct vf_llamacpp_estimate e;
	struct vf_error err = {0};
	if (vf_llamacpp_estimate(m->gguf, &m->arch, &ls, &e, &err) != VF_OK)
		return vf_cli_fail_err(&err);
	struct vf_gpu_set gs;
	int rc = load_gpus(a, &gs);
	if (rc >= 0) {
		vf_gpu_set_release(&gs);
		return rc;
	}
	if (a->json) {
		cJSON *o = to_json(m, &e, &gs, s, ls.ctx, a);
		vf_cli_print_json(o);
		cJSON_Delete(o);
	} else {
		print_text(m, &e, &gs, s, ls.ctx, a);
	}
	vf_gpu_set_release(&gs);
	return 0;
}
