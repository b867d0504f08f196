/* cmd-gpus.c - `vramfit gpus`: list the GPU catalog (data/gpus.json or the
 * user's ~/.config/vramfit/gpus.json). */
#include <string.h>

#include "cli.h"
#include "parse-options.h"
#include "vramfit/gpu/gpu.h"

static const char usage[] =
	"usage: vramfit gpus [--json] [--common]\n"
	"\n"
	"List the GPU catalog: the memory nvidia-smi reports (MiB) and its nominal size,\n"
	"dense bf16/fp16 tensor and fp32 TFLOP/s, memory bandwidth, interconnect,\n"
	"compute capability and an indicative on-demand cloud price per GPU-hour.\n"
	"The ids are what `vramfit probe --gpu ID` accepts.\n";

struct gpus_args {
	bool json, common;
};

#define OPT_T struct gpus_args
static const struct vf_option options[] = {
	OPT_BOOL("json", json, "machine-readable output (unknown values are null)"),
	OPT_BOOL("common", common, "only the cards estimates list by default"),
	OPT_END(),
};
#undef OPT_T

static const char tail[] =
	"The catalog is embedded; ~/.config/vramfit/gpus.json ($XDG_CONFIG_HOME/vramfit/)\n"
	"or $VRAMFIT_DATA_DIR/gpus.json replaces it (same format: data/gpus.json).\n"
	"Exit status: 0 success, 1 failure, 2 usage error.\n";

static cJSON *num_or_null(double v)
{
	return v >= 0 ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static cJSON *str_or_null(const char *s)
{
	return s && *s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static cJSON *spec_json(const struct vf_gpu_spec *g)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "id", g->id);
	cJSON_AddStringToObject(o, "name", g->name);
	cJSON_AddNumberToObject(o, "memory_mib", (double)g->memory_mib);
	cJSON_AddNumberToObject(o, "nominal_gb", g->nominal_gb);
	cJSON_AddItemToObject(o, "bf16_tflops", num_or_null(g->bf16_tflops));
	cJSON_AddItemToObject(o, "fp16_tflops", num_or_null(g->fp16_tflops));
	cJSON_AddItemToObject(o, "fp32_tflops", num_or_null(g->fp32_tflops));
	cJSON_AddItemToObject(o, "bandwidth_gbs", num_or_null(g->bandwidth_gbs));
	cJSON_AddItemToObject(o, "interconnect", str_or_null(g->interconnect));
	cJSON_AddItemToObject(o, "interconnect_gbs", num_or_null(g->interconnect_gbs));
	cJSON_AddBoolToObject(o, "nvlink", g->nvlink);
	cJSON_AddItemToObject(o, "compute_capability", str_or_null(g->cc));
	cJSON_AddItemToObject(o, "generation", str_or_null(g->generation));
	cJSON_AddItemToObject(o, "form_factor", str_or_null(g->form_factor));
	cJSON_AddItemToObject(o, "price_usd_hour", num_or_null(g->price_usd_hour));
	cJSON_AddItemToObject(o, "price_source", str_or_null(g->price_source));
	cJSON_AddBoolToObject(o, "common", g->common);
	cJSON *m = cJSON_AddArrayToObject(o, "match");
	for (int i = 0; i < g->nmatch; i++)
		cJSON_AddItemToArray(m, cJSON_CreateString(g->match[i]));
	return o;
}

static void num_cell(char *out, size_t n, double v, const char *fmt)
{
	if (v < 0)
		snprintf(out, n, "-");
	else
		snprintf(out, n, fmt, v);
}

static int run(int argc, char **argv)
{
	struct gpus_args a = {0};
	int nargs, rc = vf_opt_parse("gpus", options, &a, argc, argv, 0, &nargs);
	if (rc >= 0)
		return rc;
	if (nargs)
		return vf_cli_usage("gpus", "unexpected argument '%s'", argv[0]);
	bool json = a.json, common = a.common;
	struct vf_error err = {0};
	size_t n = 0;
	const struct vf_gpu_spec *s = vf_gpu_catalog(&n, &err);
	if (!s)
		return vf_cli_fail_err(&err);
	if (json) {
		cJSON *root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "source", vf_gpu_catalog_origin());
		cJSON *arr = cJSON_AddArrayToObject(root, "gpus");
		for (size_t i = 0; i < n; i++)
			if (!common || s[i].common)
				cJSON_AddItemToArray(arr, spec_json(&s[i]));
		vf_cli_print_json(root);
		cJSON_Delete(root);
		return VF_EXIT_OK;
	}
	static const char *const hdr[] = {"ID",           "NAME",         "MEMORY",
					  "CLASS",        "BF16 TFLOP/s", "FP16 TFLOP/s",
					  "FP32 TFLOP/s", "MEM GB/s",     "LINK GB/s",
					  "CC",           "$/GPU-HOUR"};
	struct vf_table t;
	vf_table_init(&t, 11, hdr);
	for (int c = 2; c <= 8; c++)
		vf_table_set_right(&t, c, true);
	vf_table_set_right(&t, 10, true);
	for (size_t i = 0; i < n; i++) {
		const struct vf_gpu_spec *g = &s[i];
		if (common && !g->common)
			continue;
		char mem[32], cls[16], bf[24], fp[24], f32[24], bw[24], link[64], price[24];
		snprintf(mem, sizeof mem, "%lld MiB", (long long)g->memory_mib);
		snprintf(cls, sizeof cls, "%d GB", g->nominal_gb);
		num_cell(bf, sizeof bf, g->bf16_tflops, "%.0f");
		num_cell(fp, sizeof fp, g->fp16_tflops, "%.0f");
		num_cell(f32, sizeof f32, g->fp32_tflops, "%.1f");
		num_cell(bw, sizeof bw, g->bandwidth_gbs, "%.0f");
		if (g->interconnect_gbs >= 0)
			snprintf(link, sizeof link, "%.0f %s", g->interconnect_gbs,
				 g->nvlink ? "NVLink" : "PCIe  ");
		else
			snprintf(link, sizeof link, "-");
		num_cell(price, sizeof price, g->price_usd_hour, "$%.2f");
		char id[40];
		snprintf(id, sizeof id, "%s%s", g->id, g->common ? " *" : "");
		vf_table_addf(&t, id, g->name, mem, cls, bf, fp, f32, bw, link, g->cc, price);
	}
	vf_table_print(&t, stdout);
	vf_table_release(&t);
	printf("\n* listed by default in estimates. TFLOP/s are dense (no sparsity), tensor cores\n"
	       "for bf16/fp16; '-' is unknown or unsupported. Prices are indicative on-demand\n"
	       "$ per GPU-hour (sources and dates: the catalog's \"source\" and \"price_sources\").\n"
	       "Catalog: %s.\n",
	       vf_gpu_catalog_origin());
	return VF_EXIT_OK;
}

const struct vf_cli_command vf_cmd_gpus = {
	.name = "gpus",
	.summary = "list the GPU catalog (memory, TFLOP/s, bandwidth, price)",
	.usage = usage,
	.options = options,
	.tail = tail,
	.run = run,
};
