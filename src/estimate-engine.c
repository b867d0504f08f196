/* estimate-engine.c - an engine's estimate in one set of terms
 * (estimate-engine.h): its memory layout as rows, what it holds on the
 * device, its speeds and its setup in words, read alike by the text
 * tables, the --json object and the report page (src/cmd-estimate.c).
 *
 * What each engine holds on the device (the row's peak_bytes):
 *   llama.cpp  the weights of its layers, the KV cache of --ctx per user,
 *              the compute buffer and the CUDA context: the table's
 *              "on device" sum (the fullest device of a split);
 *   vLLM       its budget, gpu_memory_utilization x the card, which the
 *              KV blocks fill up to; the CUDA graphs it captures after
 *              lie outside the budget and are not estimated (named in
 *              "not_counted", the memory marked approximate). */
#include "estimate-engine.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "vramfit/base/json.h"

bool vf_est_engine_own(const struct vf_infer *f)
{
	return f && (f->engine == VF_ENGINE_VLLM || f->engine == VF_ENGINE_LLAMACPP);
}

static struct vf_est_engine_term *term(struct vf_est_engine_layout *l, const char *key, int64_t bytes)
{
	struct vf_est_engine_term *t = &l->t[l->n++];
	t->key = key;
	t->bytes = bytes;
	t->label[0] = '\0';
	return t;
}

/* vLLM: the budget's parts (weights, the profiling forward's peak, the
 * memory outside PyTorch, the whole KV blocks, what is left of the budget
 * below one block) and the card beyond the budget. */
static void vllm_layout(const struct vf_infer *f, int64_t card, struct vf_est_engine_layout *l)
{
	int64_t kv = f->kv_blocks > 0 ? f->kv_cache_bytes : 0;
	int64_t rest = f->budget_bytes - f->weights_bytes - f->activation_bytes - f->non_torch_bytes - kv;
	snprintf(term(l, "weights", f->weights_bytes)->label, sizeof l->t[0].label, "weights");
	snprintf(term(l, "activation", f->activation_bytes)->label, sizeof l->t[0].label,
		 "profiled forward (activations, sampler)");
	snprintf(term(l, "context", f->non_torch_bytes)->label, sizeof l->t[0].label, "CUDA context");
	snprintf(term(l, "kv_cache", kv)->label, sizeof l->t[0].label, "KV cache (%" PRId64 " blocks of %d tokens)",
		 f->kv_blocks > 0 ? f->kv_blocks : 0, f->block_size);
	snprintf(term(l, "budget_rest", rest > 0 ? rest : 0)->label, sizeof l->t[0].label, "budget less whole blocks");
	snprintf(term(l, "outside_budget", card - f->budget_bytes)->label, sizeof l->t[0].label,
		 "outside the budget (CUDA graphs, free)");
	l->total_label = "card";
	l->total_bytes = card;
	/* a refusal: what it needed before the KV cache (weights, profile, context) */
	int64_t before_kv = f->weights_bytes + f->activation_bytes + f->non_torch_bytes;
	l->peak_bytes = f->fits || before_kv <= f->budget_bytes ? f->budget_bytes : before_kv;
	/* vLLM's later workers profile the graphs before sizing the KV cache
	 * (gpu_worker.py's log: "CUDA graph memory profiling is enabled
	 * (default since v0.21.0)", VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS)
	 * from graphs captured on the device: no size to compute here, so
	 * named, with what it changes */
	l->not_counted = "the CUDA graphs vLLM captures after the KV cache, outside its budget (vLLM since "
			 "v0.21 profiles them first and takes them from the KV cache, "
			 "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: fewer blocks than shown)";
}

/* llama.cpp: the fullest device's weights, KV cache, compute buffer and
 * CUDA context; their sum is what it holds there. */
static void llamacpp_layout(const struct vf_infer *f, struct vf_est_engine_layout *l)
{
	struct vf_est_engine_term *w = term(l, "weights", f->weights_bytes);
	if (f->devices > 1)
		snprintf(w->label, sizeof w->label, "weights (%" PRId64 " layers%s%s)", f->device_layers[f->fullest],
			 f->device_output[f->fullest] ? " + output" : "",
			 f->split_mode == VF_LCPP_SPLIT_ROW ? "; matrices split by row" : "");
	else
		snprintf(w->label, sizeof w->label, "weights (%" PRId64 " layers%s)", f->gpu_layers,
			 f->output_on_gpu ? " + output" : "");
	snprintf(term(l, "kv_cache", f->kv_cache_bytes)->label, sizeof w->label, "KV cache");
	snprintf(term(l, "compute_buffer", f->compute_buffer_bytes)->label, sizeof w->label, "compute buffer");
	snprintf(term(l, "context", f->non_torch_bytes)->label, sizeof w->label, "CUDA context");
	int64_t sum = 0;
	for (int i = 0; i < l->n; i++)
		sum += l->t[i].bytes;
	l->total_label = "on device";
	l->total_bytes = l->peak_bytes = sum;
	l->not_counted = NULL;
}

void vf_est_engine_layout(const struct vf_infer *f, int64_t card_bytes, struct vf_est_engine_layout *out)
{
	memset(out, 0, sizeof *out);
	out->engine = f->engine;
	out->card_bytes = card_bytes;
	if (f->engine == VF_ENGINE_VLLM)
		vllm_layout(f, card_bytes, out);
	else if (f->engine == VF_ENGINE_LLAMACPP)
		llamacpp_layout(f, out);
}

cJSON *vf_est_engine_memory_json(const struct vf_est_engine_layout *l, const struct vf_infer *f)
{
	cJSON *m = cJSON_CreateObject();
	char key[64];
	cJSON_AddStringToObject(m, "engine", vf_engine_name(l->engine));
	cJSON_AddNumberToObject(m, "card_bytes", (double)l->card_bytes);
	for (int i = 0; i < l->n; i++) {
		snprintf(key, sizeof key, "%s_bytes", l->t[i].key);
		cJSON_AddNumberToObject(m, key, (double)l->t[i].bytes);
	}
	if (l->engine == VF_ENGINE_VLLM) {
		cJSON_AddNumberToObject(m, "budget_bytes", (double)f->budget_bytes);
		cJSON_AddNumberToObject(m, "kv_blocks", (double)(f->kv_blocks > 0 ? f->kv_blocks : 0));
		cJSON_AddNumberToObject(m, "block_size", f->block_size);
	} else {
		cJSON_AddNumberToObject(m, "host_bytes", (double)f->host_bytes);
		vf_json_add_i64_or_null(m, "device", f->fullest, f->devices > 1);
	}
	cJSON *ts = cJSON_AddArrayToObject(m, "terms");
	for (int i = 0; ts && i < l->n; i++) {
		cJSON *t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "term", l->t[i].key);
		cJSON_AddStringToObject(t, "label", l->t[i].label);
		cJSON_AddNumberToObject(t, "bytes", (double)l->t[i].bytes);
		cJSON_AddItemToArray(ts, t);
	}
	cJSON_AddStringToObject(m, "total_label", l->total_label);
	cJSON_AddNumberToObject(m, "total_bytes", (double)l->total_bytes);
	cJSON_AddNumberToObject(m, "peak_bytes", (double)l->peak_bytes);
	cJSON_AddBoolToObject(m, "approximate", f->approximate || l->not_counted);
	if (l->not_counted)
		cJSON_AddStringToObject(m, "not_counted", l->not_counted);
	else
		cJSON_AddNullToObject(m, "not_counted");
	return m;
}

double vf_est_engine_prefill_tps(const struct vf_infer *f)
{
	return f->ttft_seconds > 0 ? (double)f->prompt / f->ttft_seconds : -1;
}

static void num_or_null(cJSON *o, const char *key, double v)
{
	if (v > 0)
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

void vf_est_engine_row_json(cJSON *g, const struct vf_infer *f)
{
	cJSON_AddNullToObject(g, "step_seconds");
	cJSON_AddNullToObject(g, "tokens_per_second");
	num_or_null(g, "ttft_seconds", f->ttft_seconds);
	num_or_null(g, "prefill_tokens_per_second", vf_est_engine_prefill_tps(f));
	num_or_null(g, "decode_tokens_per_second", f->decode_step_seconds > 0 ? f->decode_tokens_per_second_total : -1);
}

cJSON *vf_est_engine_time_json(const struct vf_infer *f)
{
	cJSON *t = cJSON_CreateObject();
	bool dec = f->decode_step_seconds > 0;
	cJSON_AddStringToObject(t, "engine", vf_engine_name(f->engine));
	num_or_null(t, "ttft_seconds", f->ttft_seconds);
	num_or_null(t, "prefill_tokens_per_second", vf_est_engine_prefill_tps(f));
	num_or_null(t, "decode_step_seconds", dec ? f->decode_step_seconds : -1);
	num_or_null(t, "decode_tokens_per_second_per_user", dec ? f->decode_tokens_per_second_per_user : -1);
	num_or_null(t, "decode_tokens_per_second_total", dec ? f->decode_tokens_per_second_total : -1);
	return t;
}

void vf_est_engine_setup_words(const struct vf_infer *f, const struct vf_infer_opts *o, const struct vf_setup *s,
			       char *out, size_t n)
{
	size_t k = 0;
	if (f->engine == VF_ENGINE_VLLM) {
		k += (size_t)snprintf(out, n, "infer with vLLM: %s weights, KV cache %s",
				      s->quant != VF_QUANT_NONE ? vf_quant_name(s->quant) : vf_precision_name(s->precision),
				      o->kv_fp8 ? "fp8" : "in the weights' dtype");
		if (k < n && (f->tp > 1 || f->pp > 1))
			k += (size_t)snprintf(out + k, n - k, ", tensor parallel %d, pipeline parallel %d", f->tp, f->pp);
	} else {
		k += (size_t)snprintf(out, n, "infer with llama.cpp: %s GGUF, %" PRId64 " layers%s on the GPU%s",
				      vf_gguf_type_name(o->gguf_given ? o->gguf_type : VF_GGUF_Q4_K_M), f->gpu_layers,
				      f->output_on_gpu ? " and the output" : "", f->devices > 1 ? "s" : "");
		if (k < n && f->devices > 1)
			k += (size_t)snprintf(out + k, n - k, " (%s split over %d)", vf_llamacpp_split_name(f->split_mode),
					      f->devices);
		char hb[32];
		if (k < n)
			k += (size_t)snprintf(out + k, n - k, ", %s in host memory",
					      vf_fmt_bytes(hb, sizeof hb, (double)f->host_bytes));
	}
	if (k < n)
		snprintf(out + k, n - k, ", prompt %" PRId64 " tokens, context %" PRId64 ", %" PRId64 " user%s", f->prompt,
			 f->ctx, f->users, f->users == 1 ? "" : "s");
}
