/* cmd-probe.c - `vramfit probe`: the GPUs of this machine (NVML, then
 * nvidia-smi) or simulated ones (--gpu SPEC), and the trainer's VRAM tier
 * they fall in. */
#include <stdarg.h>
#include <stdio.h>
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
	"usage: vramfit probe [--json] [--gpu SPEC]... [--slurm [--gres-map TYPE=GPU_ID]... [--exact]]\n"
	"                     [--mode MODE] [--trainer NAME]\n"
	"\n"
	"List the NVIDIA GPUs of this machine and place them in the trainer's VRAM\n"
	"tiers (LTX-2: 32GB tier, 40\xe2\x80\x93" "60GB tier, 80GB+ tier; below 32 GB is gated).\n"
	"The smallest GPU decides. GPUs are read through NVML (libnvidia-ml.so.1,\n"
	"loaded at run time), else nvidia-smi; CUDA_VISIBLE_DEVICES is honoured.\n";

struct probe_args {
	bool json, slurm, exact;
	const char *mode, *trainer;
	struct vf_opt_list gpu, gres_map;
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
		 "gpu:TYPE:N), node memory, and the tier. TYPE is the site's name:\n"
		 "it is placed in the GPU catalog by its ids and match names with\n"
		 "case, _ and - ignored (h100, a100_80gb, RTX3090), else by\n"
		 "--gres-map; a type that names no entry, or several, gets a note.\n"
		 "JSON fields: source \"slurm\", partitions [{name, nodes,\n"
		 "gpu_nodes, gpus_per_node, gpus_total, gpu_type, gpu_types,\n"
		 "gpu_catalog_id, gpu_type_source, gpu_memory_mib, node_memory_mib,\n"
		 "tier}], notes"),
	OPT_LIST("gres-map", "TYPE=GPU_ID", gres_map,
		 "with --slurm: the catalog entry of a gres type the catalog does\n"
		 "not name (--gres-map gpu80=h100-80gb); repeatable"),
	OPT_BOOL("exact", exact,
		 "with --slurm: ask one node of each GPU partition for its GPU\n"
		 "(srun -p P --gres=gpu:1 nvidia-smi --query-gpu=name,memory.total\n"
		 "--format=csv,noheader, 120 s at most) and use its name and memory;\n"
		 "a partition that does not answer keeps the catalog's figure, noted"),
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

static const char *how_name(enum vf_gres_how h)
{
	switch (h) {
	case VF_GRES_MAPPED: return "gres-map";
	case VF_GRES_ID: return "catalog id";
	case VF_GRES_NAME: return "catalog name";
	case VF_GRES_AMBIGUOUS: return "catalog name, ambiguous";
	case VF_GRES_WORDS: return "catalog name words";
	case VF_GRES_UNKNOWN: break;
	}
	return NULL;
}

static void note_add(cJSON *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note_add(cJSON *notes, const char *fmt, ...)
{
	char n[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(n, sizeof n, fmt, ap);
	va_end(ap);
	cJSON_AddItemToArray(notes, cJSON_CreateString(n));
}

/* --exact: the name and memory of one GPU of partition p, from the node. */
static bool ask_node(const struct vf_slurm_partition *p, char *name, size_t nl, int64_t *mib, cJSON *notes)
{
	char part[80];
	snprintf(part, sizeof part, "--partition=%s", p->name);
	const char *argv[] = {"srun", part, "--nodes=1", "--ntasks=1", "--gres=gpu:1", "--immediate=60",
			      "nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader", NULL};
	struct vf_buf out;
	vf_buf_init(&out, 1u << 20);
	struct vf_error err = {0};
	bool ok = vf_slurm_run(argv, &out, &err) == VF_OK;
	if (ok && !vf_slurm_smi_first(out.data ? out.data : "", out.len, name, nl, mib)) {
		ok = false;
		snprintf(err.msg, sizeof err.msg, "srun nvidia-smi: no 'NAME, N MiB' line in its answer");
	}
	if (!ok)
		note_add(notes, "partition %s: --exact: %s; its GPU is the catalog's guess", p->name, err.msg);
	vf_buf_release(&out);
	return ok;
}

/* The partition's smallest GPU by the catalog: every gres type of its
 * nodes placed (the first unknown one, or an untyped gres, makes it
 * unknown); type is the one that decides (or is unknown). */
static void smallest_type(const struct vf_slurm_partition *p, const struct probe_args *a, struct vf_gres_type *gt,
			  char *type, size_t tl)
{
	memset(gt, 0, sizeof *gt);
	snprintf(type, tl, "%s", p->gpu_type);
	char copy[sizeof p->gpu_types];
	snprintf(copy, sizeof copy, "%s", p->gpu_types[0] ? p->gpu_types : p->gpu_type);
	for (char *sv = NULL, *t = strtok_r(copy, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
		struct vf_gres_type one = {0};
		if (strcmp(t, "(untyped)") != 0)
			vf_slurm_gres_type_resolve(t, a->gres_map.v, a->gres_map.n, &one);
		if (!one.spec) {
			memset(gt, 0, sizeof *gt);
			snprintf(type, tl, "%s", strcmp(t, "(untyped)") == 0 ? "" : t);
			return;
		}
		if (!gt->spec || one.spec->memory_mib < gt->spec->memory_mib) {
			*gt = one;
			snprintf(type, tl, "%s", t);
		}
	}
}

/* The note on how a partition's gres type was read, when it is not plain. */
static void note_reading(cJSON *notes, const struct vf_slurm_partition *p, const struct vf_gres_type *gt,
			 const char *type)
{
	if (gt->spec && gt->how == VF_GRES_AMBIGUOUS)
		note_add(notes, "partition %s: gres type '%s' names several catalog GPUs (%s, %s); assumed "
			 "the smallest, %s: pass --gres-map %s=GPU_ID or --exact to be sure", p->name,
			 type, gt->spec->id, gt->others, gt->spec->id, type);
	else if (gt->spec && gt->how == VF_GRES_WORDS)
		note_add(notes, "partition %s: gres type '%s' read as %s by a name among its words "
			 "(approximate): pass --gres-map %s=GPU_ID or --exact to be sure", p->name,
			 type, gt->spec->id, type);
	else if (!gt->spec && type[0])
		note_add(notes, "partition %s: gres type '%s' names no GPU of the catalog, so GPU memory and tier "
			 "are unknown; pass --gres-map %s=GPU_ID (ids: `vramfit gpus`) or --exact", p->name,
			 type, type);
	else if (!gt->spec)
		note_add(notes, "partition %s: its gres names no GPU type (gpu:N), so GPU memory and tier "
			 "are unknown; pass --exact, or --gpu SPEC to plan for a known card", p->name);
}

/* One partition's GPUs and tier: the gres type placed in the catalog
 * (maps, ids, match names), or what one node says (--exact). */
static void part_tier(const struct vf_slurm_partition *p, const struct probe_args *a, cJSON *o, cJSON *notes,
		      char *tier, size_t tl, char *mem, size_t ml, char *shown, size_t sl)
{
	snprintf(shown, sl, "%s", p->gpu_type);
	snprintf(tier, tl, "unknown");
	snprintf(mem, ml, "unknown");
	if (p->gpus_per_node <= 0) {
		snprintf(tier, tl, "no GPUs");
		cJSON_AddNullToObject(o, "gpu_catalog_id");
		cJSON_AddNullToObject(o, "gpu_type_source");
		cJSON_AddNullToObject(o, "gpu_memory_mib");
		cJSON_AddNullToObject(o, "tier");
		return;
	}
	struct vf_gres_type gt;
	char type[32];
	smallest_type(p, a, &gt, type, sizeof type);
	struct vf_gpu g;
	vf_gpu_init(&g);
	const char *source = how_name(gt.how);
	char name[96];
	int64_t mib;
	bool asked = a->exact && ask_node(p, name, sizeof name, &mib, notes);
	bool mixed = strchr(p->gpu_types, ',') != NULL;
	if (asked && mixed && gt.spec && gt.spec->memory_mib < mib) {
		note_add(notes, "partition %s: --exact: the node srun reached has %s (%lld MiB), but its gres type "
			 "%s is a smaller GPU: that one decides", p->name, name, (long long)mib, type);
		asked = false;
	}
	snprintf(shown, sl, "%s", type);
	if (asked) {
		snprintf(g.name, sizeof g.name, "%s", name);
		g.memory_total_mib = mib;
		vf_gpu_identify(&g);
		source = "srun nvidia-smi";
	} else if (gt.spec) {
		snprintf(g.name, sizeof g.name, "%s", gt.spec->name);
		snprintf(g.catalog_id, sizeof g.catalog_id, "%s", gt.spec->id);
		g.memory_total_mib = gt.spec->memory_mib;
		g.nominal_gb = gt.spec->nominal_gb;
	}
	if (!asked)
		note_reading(notes, p, &gt, type);
	if (mixed)
		note_add(notes, "partition %s: its nodes have several GPU types (%s); %s", p->name, p->gpu_types,
			 source && strcmp(source, "srun nvidia-smi") == 0
				 ? "--exact asked one node, whose GPU may not be the smallest"
				 : "the tier is that of the smallest GPU among them");
	cJSON_AddItemToObject(o, "gpu_catalog_id", str_or_null(g.catalog_id));
	cJSON_AddItemToObject(o, "gpu_type_source", str_or_null(source));
	if (g.memory_total_mib <= 0) {
		cJSON_AddNullToObject(o, "gpu_memory_mib");
		cJSON_AddNullToObject(o, "tier");
		snprintf(tier, tl, "unknown: %s", type[0] ? "GPU type not in the catalog" : "untyped gres");
		return;
	}
	snprintf(mem, ml, "%.0f GiB", g.memory_total_mib / 1024.0);
	cJSON_AddNumberToObject(o, "gpu_memory_mib", (double)g.memory_total_mib);
	struct vf_gpu_set set;
	vf_gpu_set_init(&set);
	set.source = VF_GPU_SIMULATED;
	bool added = true;
	for (int i = 0; i < p->gpus_per_node && added; i++) {
		g.index = i;
		added = vf_gpu_set_add(&set, &g, NULL) == VF_OK;
	}
	struct vf_tier t;
	if (added && vf_tier_decide(&set, a->trainer, a->mode, &t, NULL) == VF_OK) {
		snprintf(tier, tl, "%s", t.name);
		cJSON_AddStringToObject(o, "tier", t.name);
	} else {
		cJSON_AddNullToObject(o, "tier");
	}
	vf_gpu_set_release(&set);
}

/* probe --slurm: the cluster's GPUs per partition. */
static int probe_slurm(const struct probe_args *a)
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
	bool json = a->json;
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
		char tier[96], mem[32], nm[32], shown[32];
		part_tier(p, a, o, notes, tier, sizeof tier, mem, sizeof mem, shown, sizeof shown);
		cJSON_AddItemToArray(parts, o);
		if (!json) {
			snprintf(nm, sizeof nm, p->node_memory_mib >= 0 ? "%.0f GiB" : "unknown", p->node_memory_mib / 1024.0);
			printf("%-16s %5d %9d %-10s %10s %11s  %s\n", p->name, p->nodes, p->gpus_per_node,
			       shown[0] ? shown : p->gpus_per_node ? "(untyped)" : "-", mem, nm, tier);
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
	if (!slurm && (a.gres_map.n || a.exact)) {
		rc = vf_cli_usage("probe", "%s: only with --slurm", a.exact ? "--exact" : "--gres-map");
		goto out;
	}
	for (int i = 0; i < a.gres_map.n; i++)
		if (vf_slurm_gres_map_check(a.gres_map.v[i], &err) != VF_OK) {
			rc = vf_cli_fail_err(&err);
			goto out;
		}
	if (slurm) {
		rc = simulated ? vf_cli_usage("probe", "--slurm and --gpu: choose one") : probe_slurm(&a);
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
	if (have_tier && mode && vf_tier_modes_from_checkout(trainer)) { /* named, not checked */
		size_t l = strlen(tier.note);
		snprintf(tier.note + l, sizeof tier.note - l,
			 "; mode %s not checked here: the trainer checkout's configs/ decide "
			 "(vramfit plan --list-modes)", tier.mode);
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
