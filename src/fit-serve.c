/* fit-serve.c - fit --mode infer --engine: each GPU kind's ways to serve
 * the model (lib/estimate/infer.c vf_infer_candidates), what each gives
 * up, its users at --ctx and its speeds. */
#include "fit-serve.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vramfit/estimate/estimate.h"

#define MAX_CAND 64

static cJSON *cand_json(const struct vf_infer_candidate *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "option", c->what);
	cJSON_AddStringToObject(o, "gives_up", c->gives_up);
	cJSON_AddNumberToObject(o, "gpus", c->gpus);
	/* settings the option needs beyond the engine's defaults: vLLM's
	 * --max-model-len where the model's own leaves no room (vramfit --ctx) */
	cJSON *set = cJSON_AddObjectToObject(o, "settings_needed");
	if (c->max_model_len > 0)
		cJSON_AddNumberToObject(set, "max_model_len", (double)c->max_model_len);
	cJSON_AddItemToObject(o, "inference", vf_infer_to_json(&c->r));
	return o;
}

static void cand_row(struct vf_table *t, const char *gpu, const struct vf_serve_gpus *g,
		     const struct vf_infer_candidate *c)
{
	char b[6][64], what[160];
	const struct vf_infer *r = &c->r;
	/* one card of a set: llama.cpp's main GPU, device 0 */
	snprintf(what, sizeof what, "%s%s%s%s", c->what, g->ndev && c->gpus == 1 ? " (the set's GPU 0, " : "",
		 g->ndev && c->gpus == 1 ? g->dev[0]->id : "", g->ndev && c->gpus == 1 ? ")" : "");
	snprintf(b[5], sizeof b[5], "%d", c->gpus);
	vf_fmt_bytes(b[0], sizeof b[0], (double)r->kv_cache_bytes);
	snprintf(b[1], sizeof b[1], "%" PRId64, r->max_users);
	if (r->ttft_seconds > 0)
		vf_fmt_seconds(b[2], sizeof b[2], r->ttft_seconds);
	else
		snprintf(b[2], sizeof b[2], "-");
	snprintf(b[3], sizeof b[3], "%.1f", r->decode_tokens_per_second_per_user);
	snprintf(b[4], sizeof b[4], "%.0f", r->decode_tokens_per_second_total);
	vf_table_addf(t, gpu, what, b[5], c->gives_up[0] ? c->gives_up : "-", b[1], b[0], b[2], b[3], b[4]);
}

/* A row's options: a kind's by every engine asked for; a set's by
 * llama.cpp over its own cards (vLLM's equal shards keep every card to
 * the blocks of the card with the fewest: not offered). */
static int row_candidates(const struct vf_arch *arch, const struct vf_setup *setup, const struct vf_serve_gpus *g,
			  const struct vf_infer_opts *o, bool generate, struct vf_infer_candidate *cand)
{
	if (generate)
		return vf_infer_generate_candidates(arch, setup, g->spec, g->count, o, cand, MAX_CAND);
	if (!g->ndev)
		return vf_infer_candidates(arch, setup, g->spec, g->count, o, cand, MAX_CAND);
	struct vf_infer_opts so = *o;
	so.engine = VF_ENGINE_LLAMACPP;
	for (int d = 0; d < g->ndev && d < VF_INFER_MAX_DEVICES; d++)
		so.device_gpu[d] = g->dev[d];
	return vf_infer_candidates(arch, setup, g->dev[0], g->ndev, &so, cand, MAX_CAND);
}

/* A row's JSON head: the kind, or the set's name and its cards. */
static cJSON *row_json(const struct vf_serve_gpus *g)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "id", g->ndev ? g->label : g->spec->id);
	cJSON_AddNumberToObject(o, "count", g->ndev ? g->ndev : g->count > 0 ? g->count : 1);
	if (g->ndev) {
		cJSON *set = cJSON_AddArrayToObject(o, "set");
		for (int d = 0; d < g->ndev; d++)
			cJSON_AddItemToArray(set, cJSON_CreateString(g->dev[d]->id));
		cJSON_AddStringToObject(o, "engines", "llamacpp");
	}
	return o;
}

/* What the shown options do not model, per engine (each option's
 * inference.not_modelled, its "; "-separated items once each). */
struct not_modelled {
	char text[3][1024]; /* transformers, vLLM, llama.cpp */
	bool any;
};

static void note_not_modelled(struct not_modelled *nm, const struct vf_infer *r)
{
	if (!r->approximate)
		return;
	nm->any = true;
	char *dst = nm->text[r->engine == VF_ENGINE_VLLM ? 1 : r->engine == VF_ENGINE_LLAMACPP ? 2 : 0];
	const char *p = r->not_modelled;
	while (*p) {
		const char *e = strstr(p, "; ");
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char item[512];
		snprintf(item, sizeof item, "%.*s", (int)n, p);
		size_t len = strlen(dst);
		if (n && !strstr(dst, item) && len < 1024)
			snprintf(dst + len, 1024 - len, "%s%s", len ? "; " : "", item);
		if (!e)
			break;
		p = e + 2;
	}
}

/* The JSON's not_modelled: one "ENGINE: a; b" per engine. */
static void not_modelled_json(const struct not_modelled *nm, cJSON *root)
{
	static const char *const name[] = {"transformers", "vLLM", "llama.cpp"};
	cJSON *arr = cJSON_AddArrayToObject(root, "not_modelled");
	for (int i = 0; i < 3; i++) {
		if (!nm->text[i][0])
			continue;
		char one[1100];
		snprintf(one, sizeof one, "%s: %s", name[i], nm->text[i]);
		cJSON_AddItemToArray(arr, cJSON_CreateString(one));
	}
}

/* The table's footer: what each engine's options assume. */
static void print_footer(FILE *f, const struct vf_arch *arch, const struct vf_infer_opts *o, bool generate,
			 int64_t shorter, bool sets)
{
	if (generate) {
		fprintf(f, "\ntransformers generate(): eager PyTorch with the DynamicCache growing to the context "
			   "(--ctx, default the prompt --seq); bf16, or weights quantized on load by bitsandbytes "
			   "(int8, nf4); on one card, or where one card does not hold it accelerate's "
			   "device_map=\"auto\" layer split over the fewest of the kind's GPUs that do (up to 8 "
			   "without --gpu ID:N), whole layers in order, one GPU working at a time (its decode as one GPU's over all layers); generate() does no tensor "
			   "parallel and no ZeRO/FSDP sharding; speeds are estimates (vramfit estimate --engine "
			   "transformers shows one in full)\n");
		return;
	}
	fprintf(f, "\nvLLM: gpu_memory_utilization 0.9, blocks of 16 tokens, tensor parallel over "
		   "the kind's GPUs, %s; llama.cpp: one GPU, or whole layers split over the kind's GPUs "
		   "(--split-mode layer), host layers read at 50 GB/s; speeds are "
		   "estimates (vramfit estimate --engine ... shows one in full)\n",
		o->vllm_sync_scheduling ? "synchronous scheduling (--no-async-scheduling): each step's "
					  "host work adds to the GPU's"
					: "async scheduling (its default): the step's host work hides "
					  "behind the GPU's");
	if (shorter > 0)
		fprintf(f, "Settings needed: vLLM refuses the model's max_model_len of %" PRId64 " tokens on "
			   "these cards (its KV cache cannot hold one such sequence; vLLM says to raise "
			   "gpu_memory_utilization or lower max_model_len): the options marked max_model_len N "
			   "start with vllm serve --max-model-len N (vramfit estimate --ctx N), the longest "
			   "whose blocks hold %" PRId64 " user%s (the longest here: vllm serve --max-model-len "
			   "%" PRId64 ", vramfit estimate --ctx %" PRId64 "); --ctx asks for a length\n",
			arch->max_positions, o->users > 0 ? o->users : 1, o->users > 1 ? "s" : "", shorter,
			shorter);
	if (sets)
		fprintf(f, "A set of unequal cards (--gpu A,B): llama.cpp alone, its layers split by each "
			   "card's free memory (one GPU: the set's first, llama.cpp's main GPU); vLLM would cut "
			   "equal tensor-parallel shards and keep every card to the KV blocks of the card with "
			   "the fewest (not offered)\n");
}

/* The text: the header, the table, the footer and the notes (root: the
 * JSON, whose approximate and not_modelled the notes say). */
static void print_text(FILE *f, const char *model_id, const struct vf_arch *arch, const struct vf_setup *setup,
		       const struct vf_infer_opts *o, bool generate, int64_t shorter, bool sets, const cJSON *root,
		       struct vf_table *t)
{
	bool approximate = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "approximate"));
	char cw[160];
	if (o->ctx > 0)
		snprintf(cw, sizeof cw, "%" PRId64, o->ctx);
	else if (generate)
		snprintf(cw, sizeof cw, "%" PRId64 " (the prompt, --seq)", setup->seq);
	else if (arch->max_positions > 0)
		snprintf(cw, sizeof cw, "each engine's default (vLLM the model's %" PRId64 "%s, llama.cpp 4096)",
			 arch->max_positions, shorter > 0 ? " or the max_model_len marked" : "");
	else
		snprintf(cw, sizeof cw, "each engine's default (vLLM the model's max_model_len, not in its "
			 "config; llama.cpp 4096)");
	fprintf(f, "%sServing %s%s (--mode infer: %" PRId64 " user%s at %s tokens of context; "
		   "fastest decode first)%s\n",
		vf_cli_sgr(f, "1"), model_id, vf_cli_sgr(f, "0"), o->users > 0 ? o->users : 1,
		o->users > 1 ? "s" : "", cw, approximate ? " (approximate: see the note below)" : "");
	vf_table_print(t, f);
	print_footer(f, arch, o, generate, shorter, sets);
	if (arch->approximate)
		fprintf(f, "Not understood: %s; every option's figures are approximate (vramfit inspect "
			   "names them)\n", arch->not_understood);
	const cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(root, "not_modelled"))
		fprintf(f, "Approximate: not modelled: %s\n", it->valuestring);
}

int vf_fit_serve(const char *model_id, const struct vf_arch *arch, const struct vf_setup *setup,
		 const struct vf_serve_gpus *gpus, int n, const struct vf_infer_opts *o, bool generate, int top,
		 bool json)
{
	struct vf_infer_candidate *cand = calloc(MAX_CAND, sizeof *cand);
	if (!cand)
		return vf_cli_fail("out of memory");
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "model", model_id);
	cJSON_AddStringToObject(root, "mode", "infer");
	cJSON_AddStringToObject(root, "engine", generate ? "transformers"
						: o->engine == VF_ENGINE_VLLM     ? "vllm"
						: o->engine == VF_ENGINE_LLAMACPP ? "llamacpp"
										  : "any");
	cJSON_AddNumberToObject(root, "users", (double)(o->users > 0 ? o->users : 1));
	cJSON_AddBoolToObject(root, "approximate", arch->approximate);
	if (arch->approximate)
		cJSON_AddStringToObject(root, "not_understood", arch->not_understood);
	struct not_modelled nmv = {0}, *nm = &nmv;
	if (o->engine != VF_ENGINE_LLAMACPP && !generate)
		cJSON_AddStringToObject(root, "scheduling", o->vllm_sync_scheduling ? "sync" : "async");
	cJSON *arr = cJSON_AddArrayToObject(root, "gpus");
	const char *hdr[] = {"GPU", "option", "GPUs", "gives up", "max users", "KV cache", "TTFT",
			     "tok/s per user", "tok/s total"};
	struct vf_table t;
	vf_table_init(&t, 9, hdr);
	vf_table_set_right(&t, 2, true);
	for (int c = 4; c < 9; c++)
		vf_table_set_right(&t, c, true);
	bool sets = false;
	int64_t shorter = 0; /* the longest max_model_len an option needed */
	for (int i = 0; i < n; i++) {
		int k = row_candidates(arch, setup, &gpus[i], o, generate, cand);
		char id[64];
		if (gpus[i].ndev)
			snprintf(id, sizeof id, "%s", gpus[i].label);
		else
			snprintf(id, sizeof id, gpus[i].count > 1 ? "%s x%d" : "%s", gpus[i].spec->id, gpus[i].count);
		sets |= gpus[i].ndev > 0;
		cJSON *g = row_json(&gpus[i]);
		cJSON *opts = cJSON_AddArrayToObject(g, "options");
		for (int j = 0; j < k && j < top; j++) {
			cJSON_AddItemToArray(opts, cand_json(&cand[j]));
			note_not_modelled(nm, &cand[j].r);
			shorter = cand[j].max_model_len > shorter ? cand[j].max_model_len : shorter;
			cand_row(&t, j == 0 ? id : "", &gpus[i], &cand[j]);
		}
		if (k == 0)
			vf_table_addf(&t, id, "nothing serves it", "-", "-", "0", "-", "-", "-", "-");
		cJSON_AddItemToArray(arr, g);
	}
	/* one verdict: the options' own approximate (inference.not_modelled)
	 * marks the whole answer, in the JSON and the text alike */
	if (nm->any) {
		cJSON_ReplaceItemInObjectCaseSensitive(root, "approximate", cJSON_CreateTrue());
		not_modelled_json(nm, root);
	}
	if (json)
		vf_cli_print_json(root);
	else
		print_text(stdout, model_id, arch, setup, o, generate, shorter, sets, root, &t);
	vf_table_release(&t);
	cJSON_Delete(root);
	free(cand);
	return VF_EXIT_OK;
}
