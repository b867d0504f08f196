/* cmd-models.c - `vramfit models [--json]`: the model catalog (every
 * data/models/<name>.json), with architectures and exact parameter counts. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "parse-options.h"
#include "vramfit/base/json.h"
#include "vramfit/model/models.h"

static cJSON *entry_json(const struct vf_model_entry *e)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "id", e->id);
	cJSON_AddStringToObject(o, "name", e->name);
	cJSON_AddStringToObject(o, "kind", e->kind);
	vf_json_add_i64_or_null(o, "params", e->params, e->params >= 0);
	if (e->has_arch)
		cJSON_AddItemToObject(o, "architecture", vf_arch_to_json(&e->arch));
	else
		cJSON_AddNullToObject(o, "architecture");
	cJSON_AddStringToObject(o, "file", e->file);
	const char *hf = vf_json_get_str(e->raw, "hf");
	if (hf)
		cJSON_AddStringToObject(o, "hf", hf);
	return o;
}

static const char *fmt_i(char *out, size_t n, int64_t v, bool known)
{
	if (known)
		snprintf(out, n, "%" PRId64, v);
	else
		snprintf(out, n, "-");
	return out;
}

struct models_args {
	bool json;
};

#define OPT_T struct models_args
static const struct vf_option options[] = {
	OPT_BOOL("json", json, "{\"models\": [{id, name, kind, params, architecture, file, hf}]}"),
	OPT_END(),
};
#undef OPT_T

static int run(int argc, char **argv)
{
	struct models_args a = {0};
	int nargs, rc = vf_opt_parse("models", options, &a, argc, argv, 0, &nargs);
	if (rc >= 0)
		return rc;
	if (nargs)
		return vf_cli_usage("models", "unknown argument '%s'", argv[0]);
	bool json = a.json;
	struct vf_error err = {0};
	if (vf_models_load_all(&err) != VF_OK) /* a listing validates every entry */
		return vf_cli_fail_err(&err);
	size_t n = 0;
	const struct vf_model_entry *list = vf_models_list(&n);
	if (json) {
		cJSON *root = cJSON_CreateObject();
		cJSON *arr = cJSON_AddArrayToObject(root, "models");
		for (size_t i = 0; i < n; i++)
			cJSON_AddItemToArray(arr, entry_json(&list[i]));
		vf_cli_print_json(root);
		cJSON_Delete(root);
		vf_models_release();
		return VF_EXIT_OK;
	}
	const char *hdr[] = {"id",  "kind", "family", "params", "exact", "hidden", "layers",
			     "heads", "kv", "ffn", "vocab", "experts"};
	struct vf_table t;
	vf_table_init(&t, 12, hdr);
	for (int c = 3; c < 12; c++)
		vf_table_set_right(&t, c, true);
	for (size_t i = 0; i < n; i++) {
		const struct vf_model_entry *e = &list[i];
		const struct vf_arch *a = &e->arch;
		char p[32], ex[32], h[32], l[32], hd[32], kv[32], f[32], v[32], x[32];
		snprintf(ex, sizeof ex, "%" PRId64, e->params);
		const char *cells[] = {
			e->id,
			e->kind,
			(a->known & VF_ARCH_F_FAMILY) ? a->family : "-",
			vf_fmt_params(p, sizeof p, e->params),
			e->params >= 0 ? ex : "-",
			fmt_i(h, sizeof h, a->hidden, a->known & VF_ARCH_F_HIDDEN),
			fmt_i(l, sizeof l, a->layers, a->known & VF_ARCH_F_LAYERS),
			fmt_i(hd, sizeof hd, a->heads, a->known & VF_ARCH_F_HEADS),
			fmt_i(kv, sizeof kv, a->kv_heads, a->known & VF_ARCH_F_KV_HEADS),
			fmt_i(f, sizeof f, a->ffn, a->known & VF_ARCH_F_FFN),
			fmt_i(v, sizeof v, a->vocab, a->known & VF_ARCH_F_VOCAB),
			a->experts > 0 ? fmt_i(x, sizeof x, a->experts, true) : "-",
		};
		vf_table_add(&t, cells);
	}
	vf_table_print(&t, stdout);
	vf_table_release(&t);
	printf("\n%zu models. Any command that takes a model takes one of these ids, a file or a "
	       "directory.\n",
	       n);
	vf_models_release();
	return VF_EXIT_OK;
}

const struct vf_cli_command vf_cmd_models = {
	.name = "models",
	.summary = "the model catalog: architectures and exact parameter counts",
	.usage = "usage: vramfit models [--json]\n"
		 "\n"
		 "List the model catalog (data/models/*.json, embedded; a file of the same\n"
		 "name under $VRAMFIT_DATA_DIR/models/ or ~/.config/vramfit/models/ replaces\n"
		 "or adds to it): id, kind, family, exact parameters (tied embeddings once)\n"
		 "and the architecture fields. Any command that takes a model takes an id\n"
		 "from this list, a file or a directory ('vramfit inspect ID' for details).\n",
	.options = options,
	.tail =	 "Exit status: 0 ok, 1 a catalog file is malformed, 2 usage error.\n",
	.run = run,
};
