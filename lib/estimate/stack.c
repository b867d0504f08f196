/* stack.c - training stacks as profiles (stack.h): data/stacks/<name>.json
 * sets the mechanisms a stack turns on by default; flags override them. */
#include "vramfit/estimate/stack.h"

#include "vramfit/base/data.h"
#include "vramfit/base/json.h"

#include "mechanisms.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static vf_status bad(struct vf_error *err, const char *flag, const char *v, const char *want)
{
	return vf_error_set(err, VF_EUSAGE, "--%s: expected %s, got '%s'", flag, want, v ? v : "");
}

/* "full", "chunked" (8 chunks), "chunked:N", "fused-linear". */
static bool parse_loss(const char *v, enum vf_loss *loss, int *chunks)
{
	if (!v)
		return false;
	if (strcmp(v, "full") == 0) {
		*loss = VF_LOSS_FULL;
	} else if (strcmp(v, "fused-linear") == 0 || strcmp(v, "fused") == 0) {
		*loss = VF_LOSS_FUSED_LINEAR;
	} else if (strncmp(v, "chunked", 7) == 0) {
		int n = 8;
		if (v[7] == ':') {
			char *end = NULL;
			long x = strtol(v + 8, &end, 10);
			if (!end || *end || end == v + 8 || x < 1 || x > 65536)
				return false;
			n = (int)x;
		} else if (v[7]) {
			return false;
		}
		*loss = VF_LOSS_CHUNKED;
		*chunks = n;
	} else {
		return false;
	}
	return true;
}

/* A switch: --no-NAME off, --NAME on, --NAME=true|on|false|off; false
 * for any other value. */
static bool parse_switch(const char *name, const char *v, bool *out)
{
	if (name[0] == 'n')
		*out = false;
	else if (!v || strcmp(v, "true") == 0 || strcmp(v, "on") == 0)
		*out = true;
	else if (strcmp(v, "false") == 0 || strcmp(v, "off") == 0)
		*out = false;
	else
		return false;
	return true;
}

vf_status vf_stack_set(struct vf_setup *s, const char *name, const char *v, struct vf_error *err)
{
	if (strcmp(name, "stack") == 0) {
		if (!v || !*v || strlen(v) >= sizeof s->stack || strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(v))
			return bad(err, name, v, "hf, torchtune, litgpt, torchtitan or ltx");
		snprintf(s->stack, sizeof s->stack, "%s", v);
		s->given |= VF_SETUP_G_STACK;
	} else if (strcmp(name, "loss") == 0) {
		if (!parse_loss(v, &s->loss, &s->loss_chunks))
			return bad(err, name, v, "full, chunked:N or fused-linear");
		s->stack_given |= VF_STACK_G_LOSS;
	} else if (strcmp(name, "adapter-dtype") == 0) {
		if (!v || (strcmp(v, "fp32") != 0 && strcmp(v, "bf16") != 0))
			return bad(err, name, v, "fp32 or bf16");
		s->adapter_bf16 = v[0] == 'b';
		s->stack_given |= VF_STACK_G_ADAPTER;
	} else if (strcmp(name, "compile") == 0 || strcmp(name, "no-compile") == 0) {
		s->compile = name[0] == 'c';
		s->stack_given |= VF_STACK_G_COMPILE;
	} else if (strcmp(name, "lora-dropout") == 0 || strcmp(name, "no-lora-dropout") == 0) {
		s->lora_dropout = name[0] == 'l';
		s->stack_given |= VF_STACK_G_LORA_DROPOUT;
	} else if (strcmp(name, "activation-offload") == 0 ||
		   strcmp(name, "no-activation-offload") == 0) {
		s->activation_offload = name[0] == 'a';
		s->stack_given |= VF_STACK_G_OFFLOAD;
	} else if (strcmp(name, "optimizer-in-backward") == 0) {
		s->optimizer_in_backward = true;
		s->stack_given |= VF_STACK_G_OIB;
	} else if (strcmp(name, "float8") == 0 || strcmp(name, "no-float8") == 0) {
		s->float8 = name[0] == 'f';
		s->stack_given |= VF_STACK_G_FLOAT8;
	} else if (strcmp(name, "tf32") == 0 || strcmp(name, "no-tf32") == 0) {
		if (!parse_switch(name, v, &s->tf32))
			return bad(err, name, v, "true or false");
		s->tf32_from = VF_TF32_OPTION;
		s->stack_given |= VF_STACK_G_TF32;
	} else if (strcmp(name, "autocast") == 0 || strcmp(name, "no-autocast") == 0) {
		if (!parse_switch(name, v, &s->autocast))
			return bad(err, name, v, "true or false");
		s->stack_given |= VF_STACK_G_AUTOCAST;
	} else if (strcmp(name, "peak-scope") == 0) {
		if (!vf__mech_peak_scope_parse(v, &s->peak_scope))
			return bad(err, name, v, "step or run");
		s->stack_given |= VF_STACK_G_PEAK_SCOPE;
	} else {
		return vf_error_set(err, VF_EUSAGE, "unknown stack flag --%s", name);
	}
	return VF_OK;
}

/* The "value" of mechanism `key`, or NULL when the profile has none. */
static const cJSON *mech(const cJSON *profile, const char *key)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(profile, "mechanisms");
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, key), "value");
}

static vf_status get_bool(const cJSON *p, const char *key, const char *what, bool given, bool *out,
			  struct vf_error *err)
{
	const cJSON *v = mech(p, key);
	if (!v)
		return VF_OK;
	if (!cJSON_IsBool(v))
		return vf_error_set(err, VF_ERR, "%s: mechanisms.%s.value: expected true or false", what, key);
	if (!given)
		*out = cJSON_IsTrue(v);
	return VF_OK;
}

static const char *const known[] = {"lora_precision", "full_precision", "adapter_dtype", "loss",
				    "compile", "checkpointing", "optimizer_in_backward",
				    "activation_offload", "kbit_fp32_rest", "kbit_prep_unsharded", "nf4_double_quant",
				    "paged_optimizer", "empty_cache", "base_quant", "optimizer",
				    "peak_scope", "load", "kbit_saves_input", "fsdp_mixed_precision",
				    "peak_report", "grad_ckpt_default", "optimizer_impl", "float8",
				    "grad_ckpt_fsdp", "quantize_on_load", "gelu_native",
				    "kbit_head", "graph_held", "loss_in_compute_dtype",
				    "lora_dropout", "fsdp_no_sync", "tf32", "autocast", "fsdp_lora_flat",
				    "lora_targets"};

static vf_status check_keys(const cJSON *p, const char *what, struct vf_error *err)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(p, "mechanisms");
	if (!cJSON_IsObject(m))
		return vf_error_set(err, VF_ERR, "%s: mechanisms: expected an object", what);
	const cJSON *it;
	cJSON_ArrayForEach(it, m)
	{
		bool ok = false;
		for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
			ok = ok || strcmp(it->string, known[i]) == 0;
		if (!ok)
			return vf_error_set(err, VF_ERR, "%s: mechanisms.%s: unknown mechanism", what, it->string);
		if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(it, "source")))
			return vf_error_set(err, VF_ERR, "%s: mechanisms.%s.source: expected the source file it was read from",
					    what, it->string);
	}
	return VF_OK;
}

/* The mechanisms that are true or false (a flag the user gave wins). */
static vf_status apply_bools(struct vf_setup *s, const cJSON *p, const char *what, struct vf_error *err)
{
	vf_status st;
	if ((st = get_bool(p, "compile", what, s->stack_given & VF_STACK_G_COMPILE, &s->compile, err)) ||
	    (st = get_bool(p, "activation_offload", what, s->stack_given & VF_STACK_G_OFFLOAD,
			   &s->activation_offload, err)) ||
	    (st = get_bool(p, "optimizer_in_backward", what, s->stack_given & VF_STACK_G_OIB,
			   &s->optimizer_in_backward, err)) ||
	    (st = get_bool(p, "paged_optimizer", what, s->stack_given & VF_STACK_G_PAGED,
			   &s->paged_optimizer, err)) ||
	    (st = get_bool(p, "kbit_fp32_rest", what, false, &s->kbit_fp32_rest, err)) ||
	    (st = get_bool(p, "kbit_prep_unsharded", what, false, &s->kbit_prep_unsharded, err)) ||
	    (st = get_bool(p, "nf4_double_quant", what, false, &s->nf4_double_quant, err)) ||
	    (st = get_bool(p, "kbit_saves_input", what, false, &s->kbit_saves_input, err)) ||
	    (st = get_bool(p, "fsdp_mixed_precision", what, false, &s->fsdp_mixed_precision, err)) ||
	    (st = get_bool(p, "float8", what, s->stack_given & VF_STACK_G_FLOAT8, &s->float8, err)) ||
	    (st = get_bool(p, "gelu_native", what, false, &s->gelu_native, err)) ||
	    (st = get_bool(p, "kbit_head", what, false, &s->kbit_head, err)) ||
	    (st = get_bool(p, "graph_held", what, false, &s->graph_held, err)) ||
	    (st = get_bool(p, "loss_in_compute_dtype", what, false, &s->loss_in_compute_dtype, err)) ||
	    (st = get_bool(p, "lora_dropout", what, s->stack_given & VF_STACK_G_LORA_DROPOUT,
			   &s->lora_dropout, err)) ||
	    (st = get_bool(p, "fsdp_no_sync", what, false, &s->fsdp_no_sync, err)) ||
	    (st = get_bool(p, "fsdp_lora_flat", what, false, &s->fsdp_lora_flat, err)) ||
	    (st = get_bool(p, "autocast", what, s->stack_given & VF_STACK_G_AUTOCAST, &s->autocast, err)) ||
	    (st = get_bool(p, "tf32", what, s->stack_given & VF_STACK_G_TF32, &s->tf32, err)))
		return st;
	/* a stack that turns TF32 on says so; one that leaves it off leaves
	 * PyTorch's default */
	if (!(s->stack_given & VF_STACK_G_TF32))
		s->tf32_from = s->tf32 ? VF_TF32_STACK : VF_TF32_PYTORCH;
	return VF_OK;
}

/* mechanisms.lora_targets' "file" and "commit" (optional strings): the
 * short citation of its source, "FILE at commit COMMIT" (the source
 * whole without a file). */
static vf_status lora_targets_cite(struct vf_setup *s, const cJSON *m, const char *what,
				   struct vf_error *err)
{
	const cJSON *file = cJSON_GetObjectItemCaseSensitive(m, "file");
	const cJSON *commit = cJSON_GetObjectItemCaseSensitive(m, "commit");
	if ((file && !cJSON_IsString(file)) || (commit && !cJSON_IsString(commit)) || (commit && !file))
		return vf_error_set(err, VF_ERR, "%s: mechanisms.lora_targets: expected \"file\" (and "
						 "\"commit\") as strings, the source's file and commit", what);
	if (!file)
		snprintf(s->lora_targets_cite, sizeof s->lora_targets_cite, "%s", s->lora_targets_source);
	else if (!commit)
		snprintf(s->lora_targets_cite, sizeof s->lora_targets_cite, "%s", file->valuestring);
	else
		snprintf(s->lora_targets_cite, sizeof s->lora_targets_cite, "%.80s at commit %.40s",
			 file->valuestring, commit->valuestring);
	return VF_OK;
}

/* mechanisms.lora_targets: the recipe's own targets when --lora-targets
 * is not given: "peft" (peft's mapping for the model type, resolved with
 * the model), "none" (the stack has no LoRA recipe) or a module list. */
static vf_status apply_lora_targets(struct vf_setup *s, const cJSON *p, const char *what,
				    struct vf_error *err)
{
	const cJSON *v = mech(p, "lora_targets");
	if (!v)
		return VF_OK;
	const char *t = cJSON_GetStringValue(v);
	unsigned bits = 0;
	struct vf_error e2 = {0};
	if (!t || !*t || strlen(t) >= sizeof s->lora_targets_stack ||
	    (strcmp(t, "peft") != 0 && strcmp(t, "none") != 0 && vf_lora_targets_parse(t, &bits, &e2) != VF_OK))
		return vf_error_set(err, VF_ERR, "%s: mechanisms.lora_targets.value: expected peft, none or a "
						 "module list (q_proj,v_proj)", what);
	if (s->given & VF_SETUP_G_LORA_TARGETS)
		return VF_OK;
	snprintf(s->lora_targets_stack, sizeof s->lora_targets_stack, "%s", t);
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "mechanisms"),
							  "lora_targets");
	const char *src = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "source"));
	snprintf(s->lora_targets_source, sizeof s->lora_targets_source, "%s", src ? src : "");
	vf_status st = lora_targets_cite(s, m, what, err);
	if (st != VF_OK)
		return st;
	if (bits)
		s->lora_targets = bits;
	return VF_OK;
}

vf_status vf_stack_apply_json(struct vf_setup *s, const cJSON *p, const char *what,
			      struct vf_error *err)
{
	vf_status st = check_keys(p, what, err);
	if (st != VF_OK)
		return st;
	const char *pkey = s->mode == VF_MODE_FULL ? "full_precision" : "lora_precision";
	const cJSON *v = mech(p, pkey);
	if (v && s->mode != VF_MODE_INFER && !(s->given & VF_SETUP_G_PRECISION) &&
	    !vf_precision_parse(cJSON_GetStringValue(v), &s->precision))
		return vf_error_set(err, VF_ERR, "%s: mechanisms.%s.value: expected amp, bf16, fp16 or fp32", what, pkey);
	v = mech(p, "adapter_dtype");
	if (v && !(s->stack_given & VF_STACK_G_ADAPTER)) {
		const char *a = cJSON_GetStringValue(v);
		if (!a || (strcmp(a, "fp32") != 0 && strcmp(a, "bf16") != 0))
			return vf_error_set(err, VF_ERR, "%s: mechanisms.adapter_dtype.value: expected fp32 or bf16", what);
		s->adapter_bf16 = a[0] == 'b';
	}
	v = mech(p, "loss");
	if (v && !(s->stack_given & VF_STACK_G_LOSS) &&
	    !parse_loss(cJSON_GetStringValue(v), &s->loss, &s->loss_chunks))
		return vf_error_set(err, VF_ERR, "%s: mechanisms.loss.value: expected full, chunked:N or fused-linear", what);
	if ((st = apply_bools(s, p, what, err)) != VF_OK || (st = apply_lora_targets(s, p, what, err)) != VF_OK)
		return st;
	v = mech(p, "peak_scope");
	if (v && !(s->stack_given & VF_STACK_G_PEAK_SCOPE) &&
	    !vf__mech_peak_scope_parse(cJSON_GetStringValue(v), &s->peak_scope))
		return vf_error_set(err, VF_ERR, "%s: mechanisms.peak_scope.value: expected step or run", what);
	v = mech(p, "grad_ckpt_default");
	if (v && s->mode != VF_MODE_INFER && !(s->given & VF_SETUP_G_GRAD_CKPT)) {
		const char *c = cJSON_GetStringValue(v);
		struct vf_error e2 = {0};
		if (c && strcmp(c, "none") == 0)
			s->grad_ckpt = false;
		else if (c && strcmp(c, "layer") == 0)
			s->grad_ckpt = true;
		else if (!c || vf__mech_ckpt_parse(c, s, &e2) != VF_OK)
			return vf_error_set(err, VF_ERR, "%s: mechanisms.grad_ckpt_default.value: expected none, layer, selective:op or every:N", what);
	}
	v = mech(p, "grad_ckpt_fsdp"); /* checkpointing the stack turns on with FSDP over GPUs */
	if (v && !cJSON_IsBool(v))
		return vf_error_set(err, VF_ERR, "%s: mechanisms.grad_ckpt_fsdp.value: expected true or false", what);
	if (v && cJSON_IsTrue(v) && s->mode != VF_MODE_INFER && !(s->given & VF_SETUP_G_GRAD_CKPT) &&
	    s->gpus > 1 && (s->shard == VF_SHARD_FSDP || s->shard == VF_SHARD_ZERO3))
		s->grad_ckpt = true;
	v = mech(p, "optimizer_impl");
	if (v && !(s->given & VF_SETUP_G_OPTIMIZER_IMPL) &&
	    !vf_optimizer_impl_parse(cJSON_GetStringValue(v), &s->optimizer_impl))
		return vf_error_set(err, VF_ERR, "%s: mechanisms.optimizer_impl.value: expected foreach, fused or for", what);
	v = mech(p, "peak_report");
	if (v && !vf__mech_tool_parse(cJSON_GetStringValue(v), &s->peak_report))
		return vf_error_set(err, VF_ERR, "%s: mechanisms.peak_report.value: expected torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved() or nvidia-smi", what);
	v = mech(p, "load");
	if (v) {
		const char *l = cJSON_GetStringValue(v);
		if (!l || (strcmp(l, "sharded") != 0 && strcmp(l, "full-per-rank") != 0))
			return vf_error_set(err, VF_ERR, "%s: mechanisms.load.value: expected sharded or full-per-rank", what);
		s->load_full_per_rank = l[0] == 'f';
	}
	v = mech(p, "quantize_on_load");
	if (v) {
		const char *q = cJSON_GetStringValue(v);
		if (!q || (strcmp(q, "bitsandbytes") != 0 && strcmp(q, "torchao") != 0))
			return vf_error_set(err, VF_ERR, "%s: mechanisms.quantize_on_load.value: expected bitsandbytes or torchao", what);
		s->quant_load = q[0] == 't' ? VF_QLOAD_TORCHAO : VF_QLOAD_BITSANDBYTES;
	}
	if (s->optimizer_in_backward && s->grad_accum > 1)
		return vf_error_set(err, VF_EUSAGE,
				    "--optimizer-in-backward: steps each parameter in its backward, so --grad-accum must be 1");
	return VF_OK;
}

/* The profile of s->stack, loaded from the embedded data. */
static vf_status load_profile(const struct vf_setup *s, struct vf_json_doc **doc, char *src, size_t size,
			      struct vf_error *err)
{
	char name[64];
	snprintf(name, sizeof name, "stacks/%s.json", s->stack);
	vf_status st = vf_data_load_doc(name, doc, src, size, err);
	if (st == VF_ENOTFOUND)
		return vf_error_set(err, VF_EUSAGE, "--stack %s: no such stack (hf, torchtune, litgpt, torchtitan, ltx)",
				    s->stack);
	return st;
}

vf_status vf_stack_apply_lora_targets(struct vf_setup *s, struct vf_error *err)
{
	char src[256];
	struct vf_json_doc *doc = NULL;
	vf_status st = load_profile(s, &doc, src, sizeof src, err);
	if (st == VF_OK)
		st = apply_lora_targets(s, vf_json_doc_root(doc), src, err);
	vf_json_doc_free(doc);
	return st;
}

vf_status vf_stack_apply(struct vf_setup *s, struct vf_error *err)
{
	char name[64], src[256];
	snprintf(name, sizeof name, "stacks/%s.json", s->stack);
	struct vf_json_doc *doc = NULL; /* the embedded profile from its tree image */
	vf_status st = vf_data_load_doc(name, &doc, src, sizeof src, err);
	if (st != VF_OK) {
		if (st == VF_ENOTFOUND)
			return vf_error_set(err, VF_EUSAGE, "--stack %s: no such stack (hf, torchtune, litgpt, torchtitan, ltx)",
					    s->stack);
		return st;
	}
	st = vf_stack_apply_json(s, vf_json_doc_root(doc), src, err);
	vf_json_doc_free(doc);
	return st;
}

void vf_stack_to_json(const struct vf_setup *s, cJSON *o)
{
	cJSON_AddStringToObject(o, "stack", s->stack);
	cJSON_AddStringToObject(o, "adapter_dtype", s->adapter_bf16 ? "bf16" : "fp32");
	cJSON_AddStringToObject(o, "loss", vf_loss_name(s->loss));
	if (s->loss == VF_LOSS_CHUNKED)
		cJSON_AddNumberToObject(o, "loss_chunks", s->loss_chunks);
	cJSON_AddBoolToObject(o, "compile", s->compile);
	cJSON_AddBoolToObject(o, "activation_offload", s->activation_offload);
	cJSON_AddBoolToObject(o, "optimizer_in_backward", s->optimizer_in_backward);
	cJSON_AddBoolToObject(o, "paged_optimizer", s->paged_optimizer);
	cJSON_AddStringToObject(o, "peak_scope", vf__mech_peak_scope_name(s->peak_scope));
	cJSON_AddStringToObject(o, "load", s->load_full_per_rank ? "full-per-rank" : "sharded");
	cJSON_AddBoolToObject(o, "kbit_saves_input", s->kbit_saves_input);
	cJSON_AddBoolToObject(o, "kbit_prep_unsharded", s->kbit_prep_unsharded);
	cJSON_AddBoolToObject(o, "fsdp_mixed_precision", s->fsdp_mixed_precision);
	cJSON_AddBoolToObject(o, "float8", s->float8);
	cJSON_AddBoolToObject(o, "tf32", s->tf32);
	cJSON_AddStringToObject(o, "tf32_source", vf_tf32_from_name(s->tf32_from));
	cJSON_AddBoolToObject(o, "autocast", s->autocast);
	cJSON_AddBoolToObject(o, "gelu_native", s->gelu_native);
	cJSON_AddBoolToObject(o, "kbit_head", s->kbit_head);
	cJSON_AddBoolToObject(o, "graph_held", s->graph_held);
	cJSON_AddBoolToObject(o, "fsdp_no_sync", s->fsdp_no_sync);
	cJSON_AddBoolToObject(o, "fsdp_lora_flat", s->fsdp_lora_flat);
	cJSON_AddBoolToObject(o, "loss_in_compute_dtype", s->loss_in_compute_dtype);
	cJSON_AddBoolToObject(o, "lora_dropout", s->lora_dropout);
	cJSON_AddStringToObject(o, "quantize_on_load",
				s->quant_load == VF_QLOAD_TORCHAO ? "torchao" : "bitsandbytes");
}
