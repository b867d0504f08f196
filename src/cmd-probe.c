/* cmd-probe.c - `vramfit probe`: the GPUs of this machine (NVML, then
 * nvidia-smi) or simulated ones (--gpu SPEC), and the trainer's VRAM tier
 * they fall in. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "parse-options.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/base/json.h"
#include "vramfit/trainer/profile.h"
#include "vramfit/trainer/tier.h"
#include "vramfit/gpu/slurm_inventory.h"
#include "vramfit/base/buf.h"
#include "vramfit/tune/slurm.h"

static const char usage[] =
	"usage: vramfit probe [--json] [--gpu SPEC]... [--slurm] [--mode MODE] [--trainer NAME]\n"
	"\n"
	"List the NVIDIA GPUs of this machine and place them in the trainer's VRAM\n"
	"tiers (LTX-2: 32GB tier, 40\xe2\x80\x93" "60GB tier, 80GB+ tier; below 32 GB is gated).\n"
	"The smallest GPU decides. GPUs are read through NVML (libnvidia-ml.so.1,\n"
	"loaded at run time), else nvidia-smi; CUDA_VISIBLE_DEVICES is honoured.\n";

struct probe_args {
	bool json, slurm;
	const char *mode, *trainer;
	struct vf_opt_list gpu;
};

#define OPT_T struct probe_args
static const struct vf_option options[] = {
	OPT_BOOL("json", json,
		 "machine-readable output (fields: source, gpus, driver_version,\n"
		 "tier, notes; unknown values are null)"),
	OPT_LIST("gpu", "SPEC", gpu,
		 "simulate GPUs instead of probing; repeatable. SPEC is a catalog\n"
		 "id (h100-80gb, h200, rtx-5090, ...; see `vramfit gpus`), with an\n"
		 "optional count (h100-80gb:8), or NAME=MiB for any card\n"
		 "(mycard=65536)"),
	OPT_BOOL("slurm", slurm,
		 "the GPUs of the Slurm cluster instead (scontrol -o show node):\n"
		 "per partition its nodes, GPUs per node, GPU type (the gres type,\n"
		 "gpu:TYPE:N; its memory from the catalog when TYPE names an\n"
		 "entry), node memory, and the tier; JSON fields: source \"slurm\",\n"
		 "partitions [{name, nodes, gpu_nodes, gpus_per_node, gpus_total,\n"
		 "gpu_type, gpu_types, gpu_memory_mib, node_memory_mib, tier}], notes"),
	OPT_STRING("mode", "MODE", mode, "the training mode whose config is named (t2v, i2v; default t2v)"),
	OPT_STRING("trainer", "NAME", trainer, "trainer profile (default " VF_PROFILE_DEFAULT ")"),
	OPT_END(),
};
#undef OPT_T

static const char tail[] =
	"No GPU is not an error: it says so and exits 0.\n"
	"Environment (tests): VRAMFIT_NVML_LIB=PATH|off, VRAMFIT_NVIDIA_SMI=PATH,\n"
	"VRAMFIT_SMI_TIMEOUT=SECONDS (default 10).\n"
	"Exit status: 0 success, 1 failure, 2 usage error.\n";

static cJSON *str_or_null(const char *s)
{
	return s && *s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static cJSON *gpu_json(const struct vf_gpu *g)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "index", g->index);
	cJSON_AddItemToObject(o, "uuid", str_or_null(g->uuid));
	cJSON_AddItemToObject(o, "name", str_or_null(g->name));
	cJSON_AddItemToObject(o, "catalog_id", str_or_null(g->catalog_id));
	vf_json_add_i64_or_null(o, "memory_total_mib", g->memory_total_mib, g->memory_total_mib >= 0);
	vf_json_add_i64_or_null(o, "memory_used_mib", g->memory_used_mib, g->memory_used_mib >= 0);
	vf_json_add_i64_or_null(o, "memory_free_mib", g->memory_free_mib, g->memory_free_mib >= 0);
	vf_json_add_i64_or_null(o, "nominal_gb", g->nominal_gb, g->nominal_gb > 0);
	cJSON_AddItemToObject(o, "compute_capability", str_or_null(g->cc));
	return o;
}

static cJSON *tier_json(const struct vf_tier *t)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", t->name);
	cJSON_AddNumberToObject(o, "per_gpu_gb", t->per_gpu_gb);
	cJSON_AddNumberToObject(o, "gpu_count", t->gpu_count);
	cJSON_AddBoolToObject(o, "gated", t->gated);
	cJSON_AddStringToObject(o, "config", t->config);
	cJSON_AddStringToObject(o, "note", t->note);
	cJSON_AddStringToObject(o, "config_path", t->config_path);
	cJSON_AddStringToObject(o, "mode", t->mode);
	cJSON_AddBoolToObject(o, "gap", t->gap);
	cJSON_AddItemToObject(o, "gate_message", t->gated ? cJSON_CreateString(t->gate_message)
							   : cJSON_CreateNull());
	cJSON_AddStringToObject(o, "gate_flag", t->gate_flag);
	cJSON_AddStringToObject(o, "reason", t->reason);
	return o;
}

static void print_json(const struct vf_gpu_set *s, const struct vf_tier *t, bool have_tier)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "source", vf_gpu_source_name(s->source));
	cJSON *arr = cJSON_AddArrayToObject(root, "gpus");
	for (size_t i = 0; i < s->count; i++)
		cJSON_AddItemToArray(arr, gpu_json(&s->gpus[i]));
	cJSON_AddItemToObject(root, "driver_version", str_or_null(s->driver_version));
	cJSON_AddItemToObject(root, "tier", have_tier ? tier_json(t) : cJSON_CreateNull());
	cJSON *notes = cJSON_AddArrayToObject(root, "notes");
	for (int i = 0; i < s->nnotes; i++)
		cJSON_AddItemToArray(notes, cJSON_CreateString(s->notes[i]));
	vf_cli_print_json(root);
	cJSON_Delete(root);
}

static void mib_cell(char *out, size_t n, int64_t mib)
{
	if (mib < 0)
		snprintf(out, n, "unknown");
	else
		snprintf(out, n, "%lld MiB", (long long)mib);
}

static void print_human(const struct vf_gpu_set *s, const struct vf_tier *t, bool have_tier)
{
	FILE *f = stdout;
	if (s->count == 0) {
		printf("No NVIDIA GPU found.\n");
	} else {
		static const char *const hdr[] = {"GPU", "NAME", "CATALOG", "MEMORY", "CLASS", "FREE",
						  "CC"};
		struct vf_table tb;
		vf_table_init(&tb, 7, hdr);
		vf_table_set_right(&tb, 3, true);
		vf_table_set_right(&tb, 4, true);
		vf_table_set_right(&tb, 5, true);
		for (size_t i = 0; i < s->count; i++) {
			const struct vf_gpu *g = &s->gpus[i];
			char idx[16], mem[32], cls[16], fr[32];
			snprintf(idx, sizeof idx, "%d", g->index);
			mib_cell(mem, sizeof mem, g->memory_total_mib);
			mib_cell(fr, sizeof fr, g->memory_free_mib);
			if (g->nominal_gb > 0)
				snprintf(cls, sizeof cls, "%d GB", g->nominal_gb);
			else
				snprintf(cls, sizeof cls, "unknown");
			vf_table_addf(&tb, idx, g->name, g->catalog_id[0] ? g->catalog_id : "-", mem,
				      cls, fr, g->cc[0] ? g->cc : "-");
		}
		vf_table_print(&tb, f);
		vf_table_release(&tb);
		printf("\nSource: %s", vf_gpu_source_name(s->source));
		if (s->driver_version[0])
			printf(", driver %s", s->driver_version);
		printf(".\n");
	}
	if (have_tier) {
		const char *col = vf_cli_sgr(f, t->gated ? "red" : "green");
		const char *bold = vf_cli_sgr(f, "bold"), *reset = vf_cli_sgr(f, "reset");
		printf("%s%s%s%s\n", bold, col, t->reason, reset);
		if (t->gated)
			printf("%s\n", t->gate_message);
		else
			printf("Note: %s.\n", t->note);
	}
	for (int i = 0; i < s->nnotes; i++)
		printf("Note: %s\n", s->notes[i]);
	if (s->count == 0)
		printf("Simulate GPUs with --gpu SPEC, e.g. `vramfit probe --gpu h100-80gb`"
		       " (`vramfit gpus` lists the ids).\n");
}

/* One partition's tier: its smallest GPU set, from the catalog by type. */
static void part_tier(const struct vf_slurm_partition *p, const char *trainer, const char *mode, cJSON *o,
		      char *tier, size_t tl, char *mem, size_t ml)
{
	snprintf(tier, tl, "unknown");
	snprintf(mem, ml, "unknown");
	cJSON_AddItemToObject(o, "tier", cJSON_CreateNull());
	if (p->gpus_per_node <= 0) {
		snprintf(tier, tl, "no GPUs");
		cJSON_AddNullToObject(o, "gpu_memory_mib");
		return;
	}
	char spec[64];
	snprintf(spec, sizeof spec, "%s:%d", p->gpu_type, p->gpus_per_node);
	struct vf_gpu_set set;
	vf_gpu_set_init(&set);
	struct vf_tier t;
	if (p->gpu_type[0] && vf_gpu_set_add_spec(&set, spec, NULL) == VF_OK && set.count > 0) {
		snprintf(mem, ml, "%.0f GiB", set.gpus[0].memory_total_mib / 1024.0);
		cJSON_AddNumberToObject(o, "gpu_memory_mib", (double)set.gpus[0].memory_total_mib);
		if (vf_tier_decide(&set, trainer, mode, &t, NULL) == VF_OK) {
			snprintf(tier, tl, "%s", t.name);
			cJSON_ReplaceItemInObject(o, "tier", cJSON_CreateString(t.name));
		}
	} else {
		cJSON_AddNullToObject(o, "gpu_memory_mib");
		snprintf(tier, tl, "unknown: %s", p->gpu_type[0] ? "GPU type not in the catalog" : "untyped gres");
	}
	vf_gpu_set_release(&set);
}

/* probe --slurm: the cluster's GPUs per partition. */
static int probe_slurm(bool json, const char *trainer, const char *mode)
{
	const char *argv[] = {"scontrol", "-o", "show", "node", NULL};
	struct vf_buf out;
	vf_buf_init(&out, 64u << 20);
	struct vf_error err = {0};
	struct vf_slurm_inventory inv;
	if (vf_slurm_run(argv, &out, &err) != VF_OK ||
	    vf_slurm_inventory_parse(out.data ? out.data : "", out.len, &inv, &err) != VF_OK) {
		vf_buf_release(&out);
		return vf_cli_fail_err(&err);
	}
	vf_buf_release(&out);
	cJSON *root = cJSON_CreateObject(), *parts = cJSON_AddArrayToObject(root, "partitions");
	cJSON *notes = cJSON_CreateArray();
	cJSON_AddStringToObject(root, "source", "slurm");
	if (!json)
		printf("%-16s %5s %9s %-10s %10s %11s  %s\n", "partition", "nodes", "GPUs/node", "GPU type",
		       "GPU memory", "node memory", "tier");
	for (size_t i = 0; i < inv.nparts; i++) {
		const struct vf_slurm_partition *p = &inv.parts[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", p->name);
		cJSON_AddNumberToObject(o, "nodes", p->nodes);
		cJSON_AddNumberToObject(o, "gpu_nodes", p->gpu_nodes);
		cJSON_AddNumberToObject(o, "gpus_per_node", p->gpus_per_node);
		cJSON_AddNumberToObject(o, "gpus_total", p->gpus_total);
		cJSON_AddItemToObject(o, "gpu_type", str_or_null(p->gpu_type));
		cJSON_AddStringToObject(o, "gpu_types", p->gpu_types);
		vf_json_add_i64_or_null(o, "node_memory_mib", p->node_memory_mib, p->node_memory_mib >= 0);
		char tier[96], mem[32], nm[32];
		part_tier(p, trainer, mode, o, tier, sizeof tier, mem, sizeof mem);
		cJSON_AddItemToArray(parts, o);
		if (p->gpus_per_node > 0 && !p->gpu_type[0]) {
			char n[160];
			snprintf(n, sizeof n, "partition %s: its gres names no GPU type (gpu:N), so GPU memory and tier "
				 "are unknown; pass --gpu SPEC to plan for a known card", p->name);
			cJSON_AddItemToArray(notes, cJSON_CreateString(n));
		}
		if (!json) {
			snprintf(nm, sizeof nm, p->node_memory_mib >= 0 ? "%.0f GiB" : "unknown", p->node_memory_mib / 1024.0);
			printf("%-16s %5d %9d %-10s %10s %11s  %s\n", p->name, p->nodes, p->gpus_per_node,
			       p->gpu_type[0] ? p->gpu_type : p->gpus_per_node ? "(untyped)" : "-", mem, nm, tier);
		}
	}
	cJSON_AddItemToObject(root, "notes", notes);
	if (json)
		vf_cli_print_json(root);
	else
		for (int i = 0; i < cJSON_GetArraySize(notes); i++)
			printf("note: %s\n", cJSON_GetArrayItem(notes, i)->valuestring);
	cJSON_Delete(root);
	vf_slurm_inventory_release(&inv);
	return VF_EXIT_OK;
}

static int run(int argc, char **argv)
{
	struct probe_args a = {0};
	int nargs, prc = vf_opt_parse("probe", options, &a, argc, argv, 0, &nargs);
	if (prc >= 0)
		return prc;
	if (nargs)
		return vf_cli_usage("probe", "unknown option '%s'", argv[0]);
	bool json = a.json, slurm = a.slurm;
	const char *mode = a.mode, *trainer = a.trainer;
	struct vf_gpu_set set;
	struct vf_error err = {0};
	vf_gpu_set_init(&set);
	int rc = VF_EXIT_OK;
	bool simulated = a.gpu.n > 0;
	for (int i = 0; i < a.gpu.n; i++)
		if (vf_gpu_set_add_spec(&set, a.gpu.v[i], &err) != VF_OK) {
			rc = vf_cli_fail_err(&err);
			goto out;
		}
	/* A bad --mode or --trainer is an error even when there is no GPU. */
	if (vf_tier_check(trainer, mode, &err) != VF_OK) {
		rc = vf_cli_fail_err(&err);
		goto out;
	}
	if (slurm) {
		rc = simulated ? vf_cli_usage("probe", "--slurm and --gpu: choose one") : probe_slurm(json, trainer, mode);
		goto out;
	}
	if (!simulated && vf_gpu_probe(&set, &err) != VF_OK) {
		rc = vf_cli_fail_err(&err);
		goto out;
	}
	struct vf_tier tier;
	bool have_tier = false;
	vf_status st = VF_OK;
	if (set.count > 0) {
		st = vf_tier_decide(&set, trainer, mode, &tier, &err);
		have_tier = st == VF_OK;
	}
	if (st == VF_EUSAGE || st == VF_ENOTFOUND) { /* bad --mode or --trainer: nothing to show */
		rc = vf_cli_fail_err(&err);
		goto out;
	}
	if (json)
		print_json(&set, &tier, have_tier);
	else
		print_human(&set, &tier, have_tier);
	if (st != VF_OK)
		rc = vf_cli_fail_err(&err);
out:
	vf_gpu_set_release(&set);
	return rc;
}

const struct vf_cli_command vf_cmd_probe = {
	.name = "probe",
	.summary = "list this machine's GPUs (or simulated ones) and their VRAM tier",
	.usage = usage,
	.options = options,
	.tail = tail,
	.run = run,
};
