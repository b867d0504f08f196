/* cmd-refs.c - `vramfit refs`: published reference training runs, the MFU
 * each claim implies and whether it is believable, what vramfit predicts for
 * the same work, and `--what-if RUN --gpu SPEC` re-pricing on other GPUs. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "parse-options.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/models.h"
#include "vramfit/estimate/refs.h"

static const char usage[] =
	"usage: vramfit refs [--json] [--what-if RUN --gpu SPEC] [--price USD]\n"
	"\n"
	"The reference training runs of data/refs.json: what their authors published\n"
	"(model, tokens, GPUs, hours, cost, throughput, MFU), the model FLOPs of the\n"
	"work, the MFU the claim implies (FLOPs / (GPUs x dense bf16 peak x seconds))\n"
	"and whether it is plausible (above ~70% or below ~5% is not a real dense run;\n"
	"below half of the MFU the same software stack publishes is flagged too), with\n"
	"what would make an implausible claim consistent. 'predicted' is the time for\n"
	"the same work at the published throughput (else MFU, else the stack's, else\n"
	"40%) and its cost at the catalog $/GPU-hour.\n";

struct refs_args {
	const char *what_if, *gpu;
	double price;
	bool json;
};

#define OPT_T struct refs_args
static const struct vf_option options[] = {
	OPT_STRING("what-if", "RUN", what_if, "re-price one run on other hardware (needs --gpu)"),
	OPT_STRING("gpu", "SPEC", gpu, "catalog id with an optional count: h100-80gb:8"),
	OPT_DOUBLE_X("price", "USD", price, 0, 1e6, "dollars per GPU-hour", "$/GPU-hour instead of the catalog's"),
	OPT_BOOL("json", json,
		 "{\"refs\": [{\"id\", \"published\": {...}, \"predicted\": {...},\n"
		 "\"implied_mfu\", \"plausible\" (null when the verdict is unknown),\n"
		 "\"verdict\", \"note\", ...}]}"),
	OPT_END(),
};
#undef OPT_T

static const char tail[] =
	"Exit status: 0 success, 1 failure, 2 usage error.\n";

static const char *fmt_pct(char *o, size_t n, double v)
{
	if (v < 0)
		snprintf(o, n, "-");
	else
		snprintf(o, n, "%.0f%%", 100 * v);
	return o;
}

/* --gpu SPEC of --what-if: a catalog GPU and its count. Returns -1 or the
 * exit code. */
static int find_target(const char *gpu_spec, const struct vf_gpu_spec **target, int *target_n)
{
	struct vf_error err = {0};
	struct vf_gpu_set gs;
	vf_gpu_set_init(&gs);
	if (vf_gpu_set_add_spec(&gs, gpu_spec, &err) != VF_OK) {
		vf_gpu_set_release(&gs);
		return vf_cli_fail_err(&err);
	}
	*target = gs.count ? vf_gpu_catalog_find(gs.gpus[0].catalog_id) : NULL;
	*target_n = (int)gs.count;
	vf_gpu_set_release(&gs);
	if (!*target)
		return vf_cli_usage("refs", "--gpu %s: not a catalog GPU (see vramfit gpus)", gpu_spec);
	return -1;
}

/* One run's row: GPUs, published time, implied MFU, verdict, prediction. */
static void table_row(struct vf_table *tb, const struct vf_ref *r, const struct vf_ref_eval *e,
		      const struct vf_gpu_spec *target)
{
	char g[64], ph[32], mfu[16], pr[32], cost[32], est[48];
	if (r->gpus > 0)
		snprintf(g, sizeof g, "%dx %s", r->gpus, r->gpu[0] ? r->gpu : "?");
	else
		snprintf(g, sizeof g, "-");
	if (r->hours > 0)
		vf_fmt_seconds(ph, sizeof ph, r->hours * 3600);
	else if (r->gpu_hours > 0)
		snprintf(ph, sizeof ph, "%.0f GPU-h", r->gpu_hours);
	else
		snprintf(ph, sizeof ph, "-");
	vf_fmt_seconds(pr, sizeof pr, e->predicted_hours < 0 ? -1 : e->predicted_hours * 3600);
	if (target) {
		char tmp[32];
		snprintf(tmp, sizeof tmp, "%s", pr);
		snprintf(pr, sizeof pr, "%s on %dx %s", tmp, e->gpus, e->gpu);
	}
	if (e->est_known) {
		char eh[32], em[16];
		snprintf(est, sizeof est, "%s (%s MFU)", vf_fmt_seconds(eh, sizeof eh, e->est_hours * 3600),
			 fmt_pct(em, sizeof em, e->est_mfu));
	} else {
		snprintf(est, sizeof est, "-");
	}
	vf_table_addf(tb, r->id, g, ph, fmt_pct(mfu, sizeof mfu, e->implied_mfu),
		      vf_verdict_name(e->verdict), pr,
		      vf_fmt_usd(cost, sizeof cost, e->predicted_cost_usd), est);
}

/* The table, each run's note, and how the figures are made. */
static void print_notes(const struct vf_table *t, const struct vf_refs *set_, const struct vf_ref_eval *evs,
			const struct vf_ref *only, double price)
{
	const struct vf_refs set = *set_;
	vf_table_print(t, stdout);
	printf("\n");
	for (size_t i = 0; i < set.count; i++) {
		const struct vf_ref *r = &set.refs[i];
		if (only && r != only)
			continue;
		const char *mark = evs[i].plausible ? "" : vf_cli_sgr(stdout, "red");
		printf("%s%s%s: %s%s%s\n", mark, r->id, vf_cli_sgr(stdout, "reset"), evs[i].note,
		       r->note[0] ? ". " : "", r->note);
	}
	printf("\nMFU = model FLOPs / (GPUs x dense bf16 peak x seconds); FLOPs = 6 (4 for a "
	       "frozen model\nunder a trained adapter) x params x tokens + attention. "
	       "Predicted: the same work at the\npublished throughput (else its MFU, the stack's or "
	       "%.0f%%); cost at the catalog $/GPU-hour%s.\nEstimator: vramfit's own step-time "
	       "model for the catalog architecture at the largest\nmicro-batch that fits, "
	       "with data-parallel communication (no published MFU used).\n",
	       100 * set.policy.default_mfu, price >= 0 ? " (--price)" : "");
}

/* --what-if RUN: the run, or NULL after the usage error naming the runs. */
static const struct vf_ref *find_run(const struct vf_refs *set, const char *what_if)
{
	const struct vf_ref *only = vf_refs_find(set, what_if);
	if (only)
		return only;
	char ids[2048] = "";
	size_t k = 0;
	for (size_t i = 0; i < set->count && k + 50 < sizeof ids; i++)
		k += (size_t)snprintf(ids + k, sizeof ids - k, "%s%s", i ? ", " : "", set->refs[i].id);
	vf_cli_usage("refs", "--what-if %s: no such run (runs: %s)", what_if, ids);
	return NULL;
}

static int run(int argc, char **argv)
{
	struct refs_args a = {.price = -1};
	int nargs, prc = vf_opt_parse("refs", options, &a, argc, argv, 0, &nargs);
	if (prc >= 0)
		return prc;
	if (nargs)
		return vf_cli_usage("refs", "unexpected argument '%s'", argv[0]);
	bool json = a.json;
	const char *what_if = a.what_if, *gpu_spec = a.gpu;
	double price = a.price;
	if (gpu_spec && !what_if)
		return vf_cli_usage("refs", "--gpu needs --what-if RUN");
	if (what_if && !gpu_spec)
		return vf_cli_usage("refs", "--what-if needs --gpu SPEC");

	struct vf_error err = {0};
	struct vf_refs set;
	if (vf_refs_load(&set, &err) != VF_OK)
		return vf_cli_fail_err(&err);
	int rc = VF_EXIT_OK;
	const struct vf_gpu_spec *target = NULL;
	int target_n = 0;
	if (gpu_spec && (rc = find_target(gpu_spec, &target, &target_n)) >= 0) {
		vf_refs_release(&set);
		return rc;
	}
	rc = VF_EXIT_OK;
	const struct vf_ref *only = NULL;
	if (what_if && !(only = find_run(&set, what_if))) {
		vf_refs_release(&set);
		return VF_EXIT_USAGE;
	}

	cJSON *root = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(root, "refs");
	struct vf_table t;
	static const char *const hdr[] = {"run", "GPUs", "published", "implied MFU", "verdict",
					  "predicted", "cost", "estimator"};
	vf_table_init(&t, 8, hdr);
	for (int c = 2; c < 8; c++)
		vf_table_set_right(&t, c, c != 4);
	struct vf_ref_eval *evs = calloc(set.count ? set.count : 1, sizeof *evs);
	if (!evs) {
		rc = vf_cli_fail("out of memory");
		goto out;
	}
	for (size_t i = 0; i < set.count; i++) {
		const struct vf_ref *r = &set.refs[i];
		if (only && r != only)
			continue;
		const struct vf_gpu_spec *pub = r->gpu[0] ? vf_gpu_catalog_find(r->gpu) : NULL;
		struct vf_ref_eval *e = &evs[i];
		if (vf_ref_evaluate(&set, r, pub, target, target_n, price, e, &err) != VF_OK) {
			rc = vf_cli_fail_err(&err);
			goto out;
		}
		vf_ref_estimate(r, target ? target : pub, e);
		cJSON_AddItemToArray(arr, vf_ref_to_json(r, e));
		table_row(&t, r, e, target);
	}
	if (json) {
		cJSON *p = cJSON_AddObjectToObject(root, "policy");
		cJSON_AddNumberToObject(p, "max_mfu", set.policy.max_mfu);
		cJSON_AddNumberToObject(p, "min_mfu", set.policy.min_mfu);
		cJSON_AddNumberToObject(p, "tuned_floor_fraction", set.policy.tuned_floor_fraction);
		cJSON_AddNumberToObject(p, "default_mfu", set.policy.default_mfu);
		cJSON_AddStringToObject(root, "source", set.source);
		vf_cli_print_json(root);
	} else {
		print_notes(&t, &set, evs, only, price);
	}
out:
	free(evs);
	vf_table_release(&t);
	cJSON_Delete(root);
	vf_refs_release(&set);
	vf_models_release();
	return rc;
}

const struct vf_cli_command vf_cmd_refs = {
	.name = "refs",
	.summary = "published training runs: implied MFU, plausibility, re-pricing",
	.usage = usage,
	.options = options,
	.tail = tail,
	.run = run,
};
