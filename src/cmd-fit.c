/* cmd-fit.c - `vramfit fit`: which GPUs run this training, with which
 * settings, how fast and at what cost (one row per catalog GPU and GPU
 * count); with --search, the fastest configurations that fit the given GPUs
 * over the whole knob space (lib/estimate/search.c), each with its predicted peak,
 * step time and the diff against the starting setup. */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fit-dit.h"
#include "opt-setup.h"
#include "fit-serve.h"
#include "vramfit/gpu/gpu-list.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/model.h"
#include "vramfit/estimate/runcost.h"
#include "vramfit/estimate/search.h"
#include "vramfit/estimate/loratargets.h"
#include "vramfit/estimate/setup.h"
#include "vramfit/estimate/split.h"
#include "vramfit/report/report.h"

static const char usage[] =
	"usage: vramfit fit MODEL [setup flags] [--tokens T | --steps S] [--gpu SPEC]...\n"
	"                   [--trainer-dir D] [--accept-risk]\n"
	"                   [--search] [--sort time|cost|vram] [--price USD] [--margin F]\n"
	"                   [--allow K,..] [--forbid K,..] [--top N] [--exhaustive]\n"
	"                   [--all-gpus] [--json] [--html FILE]\n"
	"\n"
	"Which GPUs run this training, with which settings, how fast, at what cost.\n"
	"MODEL is a catalog id (llama2-7b), a config.json or a model directory.\n"
	"\n"
	"Without --search: one row per GPU (the catalog's common cards, every card with\n"
	"--all-gpus, or the --gpu cards) and GPU count (1, 2, 4, 8 unless --gpus or a\n"
	"--gpu count fixes it): whether it fits, the settings it needs (the fewest\n"
	"changes to your setup among the allowed knobs: checkpointing, 8-bit optimizer,\n"
	"quantization, sharding, micro-batch x accumulation), the largest micro-batch,\n"
	"step time, tokens/s, time and cost of the whole run. Rows with N GPUs keep the\n"
	"micro-batch and accumulation per GPU (data parallel). Sorted by cost; cards that\n"
	"fit at no setting come last with the reason. A GPU kind one card of which\n"
	"does not hold the model also gets the cheapest split that fits (a layer split\n"
	"on cards without NVLink, tp in a node, tp x pp across nodes), and one on fewer\n"
	"GPUs marked tight when it fits only inside the margin. --allow/--forbid hold\n"
	"here too: --forbid split leaves out the split rows, --forbid gpus keeps the\n"
	"GPU count given.\n"
	"\n"
	"With --search: for the --gpu GPUs (else the probed ones), every combination of\n"
	"the allowed knobs at the same effective batch (micro-batch x accumulation x\n"
	"GPUs), evaluated with the estimator's full model plus data-parallel\n"
	"communication; the configurations that fit, fastest first.\n"
	"\n"
	"A video DiT the trainer trains (ltx-2-19b, an LTX-2 checkpoint or a pipeline\n"
	"whose transformer is one; --mode lora by default, or full; other diffusion\n"
	"transformers are refused: vramfit estimate): one row per GPU kind with the trainer\n"
	"profile's tier, its starting config (the checkout's shipped file with\n"
	"--trainer-dir, else the profile's values for it), the predicted autotune sweep\n"
	"(each trial of the profile's sweep in order: fits or out of memory, peak, step\n"
	"time; the predicted winner) and the run's time and cost for --steps (default:\n"
	"the config's steps). LoRA runs on one GPU unless --gpus N or --gpu ID:N (DDP);\n"
	"a full fine-tune only on 2, 4 or 8 80 GB-class GPUs (FSDP). Cards below the\n"
	"trainer's 32 GB minimum are gated unless --accept-risk. --search: the trainer's\n"
	"knobs searched on each GPU (quantization, optimizer, 8-bit text encoder,\n"
	"optimizer offload, checkpointing, batch, LoRA rank, resolution), the\n"
	"configurations that change what is trained (rank, resolution) last.\n";

struct fit_args {
	const char *model;
	struct vf_setup setup;
	double tokens;
	int64_t steps;
	bool search, json, all_gpus, exhaustive;
	struct vf_opt_list gpu;
	const char *sort;
	const char *html;
	double price;
	double margin;
	unsigned knobs;
	int64_t top;
	const char *trainer_dir;
	bool accept_risk;
	const char *engine;         /* --mode infer --engine: the ways to serve (fit-serve.c) */
	bool generate;              /* --engine transformers: generate()'s ways to serve */
	struct vf_infer_opts inf;
	struct vf_replay_memo *memo; /* this run's allocator replays remembered (owned by run) */
	struct vf_cli_float8 float8; /* --float8: the common cards left out */
	char seq_note[384];         /* the sequence against the model's positions (position_check) */
	bool seq_approx;            /* ... beyond the trained context: every figure approximate */
};

/* --allow K,.. and --forbid K,..: knobs that may change, in order given. */
static vf_status allow_cb(const struct vf_option *o, const char *v, void *base, struct vf_error *err)
{
	unsigned bits;
	struct vf_error e = {0};
	if (vf_knobs_parse(v, &bits, &e) != VF_OK)
		return vf_error_set(err, VF_EUSAGE, "--%s: %s", o->name, e.msg);
	*(unsigned *)((char *)base + o->off) |= bits;
	return VF_OK;
}

static vf_status forbid_cb(const struct vf_option *o, const char *v, void *base, struct vf_error *err)
{
	unsigned bits;
	struct vf_error e = {0};
	if (vf_knobs_parse(v, &bits, &e) != VF_OK)
		return vf_error_set(err, VF_EUSAGE, "--%s: %s", o->name, e.msg);
	*(unsigned *)((char *)base + o->off) &= ~bits;
	return VF_OK;
}

#define OPT_T struct fit_args
static const char *const sorts[] = {"time", "cost", "vram", NULL};
static const char *const serve_engines[] = {"vllm", "llamacpp", "llama.cpp", "any", "transformers", NULL};
static const struct vf_option options[] = {
	OPT_CALLBACK_F("tokens", "T", tokens, vf_opt_count, "train T tokens (1e9, 22B, 500M)"),
	OPT_CALLBACK_F("steps", "S", steps, vf_opt_steps, "or S optimizer steps"),
	OPT_LIST("gpu", "SPEC", gpu,
		 "catalog id with an optional count: rtx-4090:4 (repeatable,\n"
		 "a row each: each kind once);\n"
		 "--mode infer: A,B one machine's unequal cards (llama.cpp)"),
	OPT_BOOL("search", search, "search the knob space on the given GPUs"),
	OPT_CHOICE("sort", sort, sorts, "(default: cost; time with --search)"),
	OPT_DOUBLE_X("price", "USD", price, 0, 1e6, "dollars per GPU-hour", "$/GPU-hour instead of the catalog's"),
	OPT_DOUBLE_X("margin", "F", margin, 0, 0.99, "a fraction from 0 to 0.99", "fraction of each GPU's memory kept free (default 0.10)"),
	OPT_CALLBACK_F("allow", "K,..", knobs, allow_cb,
		       "knobs that may change (default: batch,grad-ckpt,optimizer,\n"
		       "quant,shard,gpus,split; also lora-rank, precision)"),
	OPT_CALLBACK_F("forbid", "K,..", knobs, forbid_cb, "knobs that must stay as given"),
	OPT_INT("top", "N", top, 1, 1000, "results kept with --search (default 10)"),
	OPT_BOOL("exhaustive", exhaustive, "--search without pruning (same results, more evaluations)"),
	OPT_BOOL("all-gpus", all_gpus, "every catalog GPU, not only the common ones"),
	OPT_DIR("trainer-dir", "D", trainer_dir,
		"a model the trainer trains (ltx-2-19b): the tiers' starting\n"
		"configs from this checkout's shipped files (default: the\n"
		"trainer profile's values for them)"),
	OPT_BOOL("accept-risk", accept_risk,
		 "a model the trainer trains: predict cards below its 32 GB\n"
		 "minimum too, from the low-VRAM config (else gated)"),
	OPT_BOOL("json", json, "machine-readable output (README: vramfit fit)"),
	OPT_FILE("html", "FILE", html,
		 "also write the HTML report (vramfit report fit): the GPU x\n"
		 "count grid and the cost-time Pareto front"),
	OPT_CHOICE("engine", engine, serve_engines,
		   "--mode infer: the ways to serve the model with vLLM,\nllama.cpp or any (default), per GPU kind; transformers:\ngenerate() on one card, bitsandbytes int8/nf4, or\naccelerate's layer split where one card is short"),
	OPT_INT("ctx", "N", inf.ctx, 1, 1 << 24, "--mode infer: context per user (default: each engine's)"),
	OPT_INT("users", "N", inf.users, 1, 1 << 20, "--mode infer: users served at once (default 1, or --batch N)"),
	OPT_BOOL("no-async-scheduling", inf.vllm_sync_scheduling,
		 "--mode infer, vllm or any: synchronous scheduling (vLLM\n"
		 "before early 2026): each step's host work adds to the GPU's"),
	OPT_INCLUDE(vf_setup_options, setup),
	OPT_END(),
};
#undef OPT_T

/* The options of the training grid that the ways to serve (fit-serve.c)
 * have no use for: refused, never ignored. */
static const char *serve_unused(const struct fit_args *a)
{
	return a->tokens > 0 ? "--tokens" : a->steps > 0 ? "--steps" : a->sort ? "--sort"
	       : a->price >= 0 ? "--price" : a->margin != 0.10 ? "--margin"
	       : a->knobs != VF_KNOBS_DEFAULT ? "--allow/--forbid" : a->exhaustive ? "--exhaustive"
	       : a->trainer_dir ? "--trainer-dir" : a->accept_risk ? "--accept-risk"
	       : a->html ? "--html" : NULL;
}

static int parse_args(int argc, char **argv, struct fit_args *a)
{
	memset(a, 0, sizeof *a);
	vf_setup_defaults(&a->setup);
	a->price = -1;
	a->margin = 0.10;
	a->knobs = VF_KNOBS_DEFAULT;
	a->top = 10;
	int n, rc = vf_opt_parse("fit", options, a, argc, argv, 0, &n);
	if (rc >= 0)
		return rc;
	if (n > 1)
		return vf_cli_usage("fit", "one MODEL only (got '%s' and '%s')", argv[0], argv[1]);
	if (n == 0)
		return vf_cli_usage("fit", "missing MODEL");
	a->model = argv[0];
	if (a->tokens > 0 && a->steps > 0)
		return vf_cli_usage("fit", "give --tokens or --steps, not both");
	if ((a->engine || a->inf.ctx || a->inf.users || a->inf.vllm_sync_scheduling) &&
	    (a->setup.mode != VF_MODE_INFER || a->search))
		return vf_cli_usage("fit", "--engine, --ctx, --users and --no-async-scheduling: with --mode infer "
					   "and without --search");
	/* the prompt is part of the context (as vramfit estimate) */
	if (a->inf.ctx && a->setup.seq > a->inf.ctx)
		return vf_cli_usage("fit", "--seq %" PRId64 " (the prompt%s) is longer than --ctx %" PRId64
				    ": give --seq %" PRId64 " or less, or a longer --ctx",
				    a->setup.seq, (a->setup.given & VF_SETUP_G_SEQ) ? "" : ", by default",
				    a->inf.ctx, a->inf.ctx);
	if (a->setup.mode == VF_MODE_INFER && !a->search && !a->engine)
		a->engine = "any"; /* the question --mode infer asks: the ways to serve it */
	if (a->inf.vllm_sync_scheduling && a->engine && strcmp(a->engine, "vllm") != 0 && strcmp(a->engine, "any") != 0)
		return vf_cli_usage("fit", "--no-async-scheduling applies to vLLM: --engine vllm or any");
	/* transformers generate(): its own ways to serve (one card, bitsandbytes
	 * loads, accelerate's layer split), never the training grid */
	a->generate = a->engine && strcmp(a->engine, "transformers") == 0;
	if (a->engine) { /* the ways to serve: --batch is the users at once */
		int rc = vf_cli_infer_users("fit", &a->setup, &a->inf.users);
		if (rc >= 0)
			return rc;
		/* each way sets its engine's precision, quantization and kernels */
		const char *f = vf_opt_setup_flag_given(&a->setup, VF_SETUP_G_MODE | VF_SETUP_G_SEQ | VF_SETUP_G_BATCH |
									   VF_SETUP_G_GPUS | VF_SETUP_G_CONTEXT);
		if (f)
			return vf_cli_usage("fit", "%s: not for the ways to serve (--mode infer): each sets its engine's "
						   "precision, quantization and kernels; they take --seq (the prompt), "
						   "--ctx, --users, --gpu and --context-mib (vramfit estimate --mode infer "
						   "takes the setup flags)", f);
	}
	const char *unused = a->engine ? serve_unused(a) : NULL;
	if (unused)
		return vf_cli_usage("fit", "%s: not for the ways to serve (--mode infer)%s; use --search for "
					   "the training-style grid of an inference step",
				    unused, strcmp(unused, "--html") ? "" : ", so report fit has no page for them");
	if (a->engine)
		a->inf.engine = a->engine[0] == 'v' ? VF_ENGINE_VLLM
				: a->engine[0] == 'l' ? VF_ENGINE_LLAMACPP : VF_ENGINE_TRANSFORMERS;
	return -1; /* parsed */
}

static struct vf_setup start_on(const struct vf_setup *user, int n)
{
	struct vf_setup st = *user;
	st.gpus = n;
	if (n == 1)
		st.shard = VF_SHARD_NONE;
	else if (st.shard == VF_SHARD_NONE)
		st.shard = VF_SHARD_DDP;
	return st;
}

/* One GPU type and how many of it; or one machine's unequal cards
 * (--gpu A,B: ndev > 0, spec = dev[0]; the ways to serve only). */
struct gpu_group {
	const struct vf_gpu_spec *spec;
	int count;
	bool counted; /* the --gpu value gave the count (ID:N): fit's table shows N only */
	int ndev;
	const struct vf_gpu_spec *dev[VF_INFER_MAX_DEVICES];
	char label[32];
};

/* --gpu A,B as one group: every card a catalog GPU; a set of one kind is
 * that kind's group (ID:N). Returns -1 or the exit code. */
static int gpu_group_set(const char *spec, struct gpu_group *g)
{
	struct vf_error err = {0};
	struct vf_gpu_set gs;
	vf_gpu_set_init(&gs);
	int rc = -1;
	if (vf_gpu_set_add_list(&gs, spec, &err) != VF_OK)
		rc = vf_cli_usage("fit", "%s", err.msg);
	else if (gs.count > VF_INFER_MAX_DEVICES)
		rc = vf_cli_usage("fit", "--gpu %s: a set of %zu GPUs; at most %d serve together", spec, gs.count,
				  VF_INFER_MAX_DEVICES);
	memset(g, 0, sizeof *g);
	for (size_t d = 0; rc < 0 && d < gs.count; d++) {
		g->dev[d] = vf_gpu_catalog_find(gs.gpus[d].catalog_id);
		if (!g->dev[d])
			rc = vf_cli_usage("fit", "--gpu %s: %s is not a catalog GPU (fit needs its rate; see vramfit gpus)",
					  spec, vf_cli_safe(gs.gpus[d].name));
		else if (g->dev[d] != g->dev[0])
			g->ndev = (int)gs.count;
	}
	if (rc < 0) {
		g->spec = g->dev[0];
		g->count = (int)gs.count;
		vf_gpu_set_label(&gs, g->label, sizeof g->label);
	}
	vf_gpu_set_release(&gs);
	return rc;
}

/* Group g (a --gpu value, spec) as a row of out: a kind given before is
 * refused (each --gpu is a row to compare, never a sum of counts). */
static int gpu_group_add(const struct gpu_group *g, const char *spec, struct gpu_group *out, const char **from,
			 int max, int *n)
{
	for (int k = 0; !g->ndev && k < *n; k++) {
		if (!out[k].ndev && out[k].spec == g->spec) {
			char msg[512];
			vf_cli_gpu_twice(msg, sizeof msg, from[k], spec);
			return vf_cli_usage("fit", "%s", msg);
		}
	}
	if (*n < max) {
		from[*n] = spec;
		out[(*n)++] = *g;
	}
	return -1;
}

static int gpu_groups_from_specs(const struct fit_args *a, struct gpu_group *out, int max,
				 int *n)
{
	struct vf_error err = {0};
	const char *from[64]; /* the --gpu value of each row */
	*n = 0;
	if (max > 64)
		max = 64;
	for (int i = 0; i < a->gpu.n; i++) {
		struct gpu_group g;
		if (vf_gpu_spec_is_list(a->gpu.v[i])) {
			int rc = gpu_group_set(a->gpu.v[i], &g);
			if (rc < 0) /* unequal: a row of its own; A,A is A:2 */
				rc = gpu_group_add(&g, a->gpu.v[i], out, from, max, n);
			if (rc >= 0)
				return rc;
			continue;
		}
		struct vf_gpu_set gs;
		vf_gpu_set_init(&gs);
		if (vf_gpu_set_add_spec(&gs, a->gpu.v[i], &err) != VF_OK) {
			vf_gpu_set_release(&gs);
			return err.code == VF_EUSAGE ? vf_cli_usage("fit", "%s", err.msg) : vf_cli_fail_err(&err);
		}
		const struct vf_gpu_spec *sp =
			gs.count ? vf_gpu_catalog_find(gs.gpus[0].catalog_id) : NULL;
		int cnt = (int)gs.count;
		vf_gpu_set_release(&gs);
		if (!sp)
			return vf_cli_usage("fit", "--gpu %s: not a catalog GPU (fit needs its rate "
						   "and price; see vramfit gpus)",
					    a->gpu.v[i]);
		memset(&g, 0, sizeof g);
		g.spec = sp;
		g.count = cnt;
		g.counted = strchr(a->gpu.v[i], ':') != NULL;
		int rc = gpu_group_add(&g, a->gpu.v[i], out, from, max, n);
		if (rc >= 0)
			return rc;
	}
	return -1;
}

static int gpu_groups_probed(struct gpu_group *out, int max, int *n)
{
	struct vf_error err = {0};
	struct vf_gpu_set gs;
	vf_gpu_set_init(&gs);
	*n = 0;
	if (vf_gpu_probe(&gs, &err) != VF_OK) {
		vf_gpu_set_release(&gs);
		return vf_cli_fail_err(&err);
	}
	for (size_t i = 0; i < gs.count; i++) {
		const struct vf_gpu_spec *sp = vf_gpu_catalog_find(gs.gpus[i].catalog_id);
		if (!sp)
			continue;
		int k;
		for (k = 0; k < *n; k++)
			if (out[k].spec == sp)
				break;
		if (k < *n)
			out[k].count++;
		else if (*n < max)
			out[(*n)++] = (struct gpu_group){.spec = sp, .count = 1};
	}
	vf_gpu_set_release(&gs);
	return -1;
}

static const char *fmt_rate(char *o, size_t n, double tps)
{
	if (tps < 0)
		snprintf(o, n, "-");
	else if (tps >= 1e6)
		snprintf(o, n, "%.2fM", tps / 1e6);
	else if (tps >= 1e3)
		snprintf(o, n, "%.1fk", tps / 1e3);
	else
		snprintf(o, n, "%.0f", tps);
	return o;
}

/* The whole run for one configuration; false when no run was asked or the
 * step time is unknown. */
static bool whole_run(const struct fit_args *a, const struct vf_search_result *r,
		      const struct vf_gpu_spec *g, struct vf_run *run)
{
	if (!(a->tokens > 0 || a->steps > 0) || !(r->step_seconds > 0))
		return false;
	struct vf_run_in in = {
		.tokens = a->tokens,
		.steps = a->steps,
		.tokens_per_step = r->tokens_per_step,
		.step_seconds = r->step_seconds,
		.gpus = r->setup.gpus,
		.price_usd_hour = a->price >= 0 ? a->price : g->price_usd_hour,
	};
	struct vf_error err = {0};
	return vf_runcost_run(&in, run, &err) == VF_OK;
}

static cJSON *run_json(const struct fit_args *a, const struct vf_search_result *r,
		       const struct vf_gpu_spec *g)
{
	struct vf_run run;
	if (!whole_run(a, r, g, &run))
		return cJSON_CreateNull();
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "steps", (double)run.steps);
	cJSON_AddNumberToObject(o, "tokens", run.tokens);
	cJSON_AddNumberToObject(o, "hours", run.hours);
	cJSON_AddNumberToObject(o, "gpu_hours", run.gpu_hours);
	if (run.cost_usd >= 0)
		cJSON_AddNumberToObject(o, "cost_usd", run.cost_usd);
	else
		cJSON_AddNullToObject(o, "cost_usd");
	return o;
}

static void result_fields(cJSON *o, const struct fit_args *a, const struct vf_search_result *r,
			  const struct vf_gpu_spec *g, const struct vf_setup *start)
{
	cJSON_AddItemToObject(o, "setup", vf_setup_to_json(&r->setup));
	cJSON_AddStringToObject(o, "gpu", g->id);
	cJSON_AddNumberToObject(o, "gpus", r->setup.gpus);
	cJSON_AddBoolToObject(o, "fits", r->fits);
	cJSON_AddNumberToObject(o, "peak_bytes", (double)r->peak_bytes);
	cJSON_AddNumberToObject(o, "limit_bytes", (double)r->limit_bytes);
	cJSON_AddNumberToObject(o, "vram_bytes", (double)r->gpu_bytes);
	cJSON_AddStringToObject(o, "dominant", vf_term_name(r->dominant));
	if (r->step_seconds > 0) {
		cJSON_AddNumberToObject(o, "step_seconds", r->step_seconds);
		cJSON_AddNumberToObject(o, "comm_seconds", r->comm_seconds);
		cJSON_AddNumberToObject(o, "tokens_per_second", r->tokens_per_second);
	} else {
		cJSON_AddNullToObject(o, "step_seconds");
		cJSON_AddNullToObject(o, "comm_seconds");
		cJSON_AddNullToObject(o, "tokens_per_second");
	}
	char d[512];
	vf_search_diff(start, &r->setup, d, sizeof d);
	cJSON_AddStringToObject(o, "settings", d[0] ? d : "as given");
	cJSON_AddItemToObject(o, "changes", vf_search_diff_json(start, &r->setup));
	cJSON_AddItemToObject(o, "run", run_json(a, r, g));
}

/* Where LoRA targets not given came from: the stack's recipe (its
 * profile's lora_targets) or peft's mapping for the model type. */
static void lora_assumption(cJSON *as, const struct vf_setup *s, const char *family)
{
	char b[512], t[128];
	if (s->mode != VF_MODE_LORA || (s->given & VF_SETUP_G_LORA_TARGETS))
		return;
	if (vf_lora_targets_stack_list(s))
		snprintf(b, sizeof b, "LoRA targets %s: stack %s's default, from %s (--lora-targets)",
			 vf_setup_lora_targets_text(s, t, sizeof t), s->stack, s->lora_targets_cite);
	else
		snprintf(b, sizeof b, "LoRA targets %s: peft's default for model type %s (--lora-targets)",
			 vf_setup_lora_targets_text(s, t, sizeof t), family);
	cJSON_AddItemToArray(as, cJSON_CreateString(b));
}

/* multi: a row or result shown runs on several GPUs; the collectives'
 * lines (NCCL, DDP, ZeRO, overlap) only then. */
static void add_assumptions(cJSON *root, const struct fit_args *a, const struct vf_arch *arch,
			    bool search, bool multi)
{
	/* what the model's config says that vramfit does not understand:
	 * named, and every figure marked approximate (as estimate does) */
	cJSON_AddBoolToObject(root, "approximate", arch->approximate || a->seq_approx);
	if (arch->approximate)
		cJSON_AddStringToObject(root, "not_understood", arch->not_understood);
	/* and where estimate's JSON has them: model.approximate, model.not_understood (a list) */
	cJSON *mo = cJSON_GetObjectItemCaseSensitive(root, "model");
	if (cJSON_IsObject(mo)) {
		cJSON_AddBoolToObject(mo, "approximate", arch->approximate || a->seq_approx);
		vf_json_add_list(mo, "not_understood", arch->approximate ? arch->not_understood : "");
	}
	cJSON *as = cJSON_AddArrayToObject(root, "assumptions");
	char b[512];
	if (a->float8.dropped[0])
		cJSON_AddItemToArray(as, cJSON_CreateString(vf_cli_float8_words(&a->float8, b, sizeof b)));
	if (a->setup.mode != VF_MODE_INFER) /* as estimate names it */
		cJSON_AddItemToArray(as, cJSON_CreateString(vf_cli_stack_words(&a->setup, b, sizeof b)));
	if (arch->approximate) {
		snprintf(b, sizeof b, "not understood: %s; every row's figures are approximate "
			 "(vramfit inspect names them)", arch->not_understood);
		cJSON_AddItemToArray(as, cJSON_CreateString(b));
	}
	if (a->seq_note[0])
		cJSON_AddItemToArray(as, cJSON_CreateString(a->seq_note));
	snprintf(b, sizeof b, "fits = predicted peak (CUDA context + allocator reserve) <= %.0f%% of "
		 "the GPU's memory (--margin %.2f)", 100 * (1 - a->margin), a->margin);
	cJSON_AddItemToArray(as, cJSON_CreateString(b));
	if (!search)
		cJSON_AddItemToArray(as, cJSON_CreateString(
			"rows with N GPUs keep the micro-batch and accumulation per GPU (global batch x N); "
			"the settings are the fewest changes to the given setup that fit"));
	else
		cJSON_AddItemToArray(as, cJSON_CreateString(
			"the effective batch (micro-batch x accumulation x GPUs) is held; micro-batch "
			"and accumulation vary over its divisors"));
	if (a->price >= 0) {
		snprintf(b, sizeof b, "prices: $%.2f/GPU-hour for every GPU (--price)", a->price);
		cJSON_AddItemToArray(as, cJSON_CreateString(b));
	} else {
		cJSON_AddItemToArray(as, cJSON_CreateString(
			"prices: the catalog's indicative on-demand $/GPU-hour unless --price"));
	}
	lora_assumption(as, &a->setup, arch->family);
	/* --mode infer: a forward per step, none of training's collectives */
	bool infer = a->setup.mode == VF_MODE_INFER;
	if (infer) {
		snprintf(b, sizeof b, "--mode infer: each step one forward of the batch (the prompt, no KV "
			 "cache reuse); no gradients, optimizer states or their collectives, so ddp, zero1 and "
			 "zero2 hold the same memory and time%s; zero3's per-layer parameter gathers are not "
			 "counted (its step time is approximate)", search ? " (searched as ddp alone)" : "");
		cJSON_AddItemToArray(as, cJSON_CreateString(b));
	}
	for (const char *const *p = vf_runcost_assumptions(); *p; p++) {
		bool collective = strncmp(*p, "multi-GPU:", 10) == 0 || strncmp(*p, "DDP:", 4) == 0 ||
				  strncmp(*p, "ZeRO-1/2:", 9) == 0 || strncmp(*p, "overlapped collectives", 22) == 0;
		bool training_only = collective && strncmp(*p, "multi-GPU:", 10) != 0;
		if ((!collective || multi) && !(infer && training_only))
			cJSON_AddItemToArray(as, cJSON_CreateString(*p));
	}
}

static void print_assumptions(const cJSON *root)
{
	const cJSON *as = cJSON_GetObjectItem(root, "assumptions"), *x;
	printf("\nAssumptions:\n");
	cJSON_ArrayForEach(x, as) printf("  - %s\n", x->valuestring);
}

/* --- fit: one row per GPU and count ---------------------------------------- */

struct row {
	const struct vf_gpu_spec *gpu;
	int gpus;
	bool fits;
	struct vf_search_result best;     /* when fits */
	struct vf_search_result smallest; /* when not */
	int sim_rejected;                 /* settings the fast path fits, the simulation not */
	bool sim_oom;                     /* smallest's simulation ran out within its limit */
	int64_t retries;                  /* best's simulated allocator at the card's limit:
					     vf_estimate.sim_retries */
	int64_t max_batch;
	double cost_key;                  /* $ per token; inf unknown */
	double time_key;                  /* s per token */
	bool split;                       /* one model split over the GPUs (split.h) */
};

static int row_cmp_sort;
static int row_cmp(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	if (a->fits != b->fits)
		return a->fits ? -1 : 1;
	double ka, kb;
	if (!a->fits) {
		ka = (double)a->smallest.peak_bytes / a->smallest.gpu_bytes;
		kb = (double)b->smallest.peak_bytes / b->smallest.gpu_bytes;
	} else if (row_cmp_sort == VF_SORT_TIME) {
		ka = a->time_key;
		kb = b->time_key;
	} else if (row_cmp_sort == VF_SORT_VRAM) {
		ka = (double)a->best.peak_bytes / a->best.gpu_bytes;
		kb = (double)b->best.peak_bytes / b->best.gpu_bytes;
	} else {
		ka = a->cost_key;
		kb = b->cost_key;
		if (ka == kb) {
			ka = a->time_key;
			kb = b->time_key;
		}
	}
	if (ka != kb)
		return ka < kb ? -1 : 1;
	if (a->gpus != b->gpus)
		return a->gpus < b->gpus ? -1 : 1;
	return strcmp(a->gpu->id, b->gpu->id);
}

/* The HTML report of a fit (lib/report/report_fit.c): the --json object
 * with its kind and mode. 0 when written (or not asked for). */
static int write_html(const struct fit_args *a, cJSON *root, const char *mode)
{
	if (!a->html)
		return 0;
	cJSON_AddStringToObject(root, "report", "fit");
	cJSON_AddStringToObject(root, "mode", mode);
	struct vf_error err = {0};
	if (vf_report_write(root, a->html, &err))
		return vf_cli_fail_err(&err);
	return 0;
}

/* The row's time and cost keys for --sort: the whole run (steps rounded
 * up) when --tokens/--steps say how long, else per token on n GPUs. */
static void sort_keys(const struct fit_args *a, const struct vf_gpu_spec *g, int n, struct row *r)
{
	struct vf_run run;
	if (whole_run(a, &r->best, g, &run)) {
		r->time_key = run.seconds;
		if (run.cost_usd >= 0)
			r->cost_key = run.cost_usd;
	} else if (r->best.tokens_per_second > 0) {
		r->time_key = 1.0 / r->best.tokens_per_second;
		double price = a->price >= 0 ? a->price : g->price_usd_hour;
		if (price >= 0)
			r->cost_key = n * price / 3600.0 / r->best.tokens_per_second;
	}
}

/* The row of a split (split.h) of the model over GPUs of grp's kind: its
 * figures as vramfit estimate gives them for the same setup, each GPU's
 * slice replayed through the allocator (the offer is the fast path's);
 * the largest batch by the same rule. */
static void split_fill(const struct fit_args *a, const struct vf_arch *arch, const struct vf_gpu_spec *g,
		       struct vf_split *sp, const struct vf_setup *s, struct row *r)
{
	memset(r, 0, sizeof *r);
	r->gpu = g;
	r->split = true;
	struct vf_error err = {0};
	vf_split_simulate(arch, s, g, NULL, a->memo, sp, &err); /* failing, the fast path's stand */
	vf_split_search_result(sp, s, g, a->margin, a->price, &r->best);
	r->fits = r->best.fits;
	r->smallest = r->best;
	r->gpus = r->best.setup.gpus;
	r->max_batch = vf_estimate_max_batch_limit_simulated(arch, s, g, NULL, a->memo, r->best.limit_bytes);
	if (r->max_batch < 0)
		r->max_batch = 0;
	r->cost_key = r->time_key = INFINITY;
	sort_keys(a, g, r->gpus, r);
}

/* A kind of GPU that one card does not hold with the given setup (and
 * split not forbidden: the caller's test): the
 * cheapest split of the model over several that fits under the margin
 * (split.h), as a row of its own; and when fewer GPUs hold it only inside
 * the margin, that split too, marked "tight" (not fitting by the rule).
 * Returns the rows added (0-2). */
static int split_rows(const struct fit_args *a, const struct vf_arch *arch,
		      const struct gpu_group *grp, struct row *r)
{
	static struct vf_split sp; /* large */
	const struct vf_gpu_spec *g = grp->spec;
	struct vf_setup one = start_on(&a->setup, 1);
	struct vf_search_result x;
	vf_search_eval(arch, &one, g, a->margin, a->price, &x);
	if (x.fits)
		return 0;
	/* a count given (--gpu ID:N or --gpus N) bounds the split */
	int max = grp->count > 0 && (grp->counted || grp->ndev) ? grp->count
		  : a->setup.given & VF_SETUP_G_GPUS ? a->setup.gpus
		  : g->nvlink                        ? VF_SPLIT_MAX_GPUS : 8;
	/* --forbid gpus: no more GPUs than the setup's count (as --search) */
	if (!(a->knobs & VF_KNOB_BIT(VF_KNOB_GPUS)) && !(grp->count > 0 && (grp->counted || grp->ndev)))
		max = a->setup.gpus;
	if (max < 2)
		return 0;
	struct vf_setup s;
	int n = 0;
	if (vf_split_offer(arch, &a->setup, g, a->margin, max, &s, &sp)) {
		split_fill(a, arch, g, &sp, &s, &r[n++]);
		max = r[0].gpus - 1;
	}
	if (a->margin > 0 && vf_split_offer(arch, &a->setup, g, 0, max, &s, &sp))
		split_fill(a, arch, g, &sp, &s, &r[n++]);
	return n;
}

/* The row of n GPUs of kind g: the fewest changes that fit, checked by the
 * allocator simulation. Returns -1 or the exit code. */
/* Nothing the fast path ranks fits: the configuration with its smallest
 * peak may still fit by the allocator simulation, which decides (mixtral
 * QLoRA on two RTX 4090s, ZeRO-3 and checkpointing: 21.90 GiB on the fast
 * path, 21.06 GiB simulated, as vramfit estimate says, under 21.59 GiB
 * usable; the row said no). Its peak becomes the simulated one either
 * way (the row's "smallest peak" is estimate's figure for that setup).
 * 1 when it fits, 0 when not, -1 on error. */
static int smallest_fits(const struct fit_args *a, const struct vf_arch *arch, const struct vf_gpu_spec *g,
			 struct vf_search *s, int64_t *retries, struct vf_error *err)
{
	if (!s->have_smallest)
		return 0;
	struct vf_estimate e;
	if (vf_estimate_simulate_memo(arch, &s->smallest.setup, g, NULL, a->memo, &e, NULL, err))
		return -1;
	s->smallest.peak_bytes = e.peak_bytes; /* the simulated peak, as vramfit estimate gives it */
	if (e.sim_oom || e.peak_bytes > s->smallest.limit_bytes)
		return 0;
	s->smallest.fits = true;
	*retries = e.sim_retries;
	return 1;
}

static int search_row(const struct fit_args *a, const struct vf_arch *arch, const struct vf_gpu_spec *g,
		      int n, struct row *r)
{
	struct vf_error err = {0};
	struct vf_setup st = start_on(&a->setup, n);
	struct vf_search_opts o;
	vf_search_opts_defaults(&o);
	/* the split has a row of its own (split_rows) */
	o.knobs = a->knobs & ~(VF_KNOB_BIT(VF_KNOB_GPUS) | VF_KNOB_BIT(VF_KNOB_SPLIT));
	o.margin = a->margin;
	o.max_gpus = n;
	o.sort = VF_SORT_CHANGES;
	o.top = 32; /* fallbacks for when the simulation rejects the first */
	o.price_usd_hour = a->price;
	o.near = true; /* the simulation decides the near misses too (search.h) */
	struct vf_search s;
	if (vf_search_run(arch, &st, g, &o, &s, &err) != VF_OK)
		return vf_cli_fail_err(&err);
	r->gpu = g;
	r->gpus = n;
	r->smallest = s.have_smallest ? s.smallest : s.start;
	r->cost_key = r->time_key = INFINITY;
	/* the search ranks on the fast path; the allocator simulation
	 * decides: the best result whose simulated peak fits */
	size_t pick = s.count, low = s.count;
	for (size_t k = 0; k < s.count && pick == s.count; k++) {
		struct vf_estimate e;
		if (vf_estimate_simulate_memo(arch, &s.results[k].setup, g, NULL, a->memo, &e, NULL, &err)) {
			vf_search_release(&s);
			return vf_cli_fail_err(&err);
		}
		bool over = e.peak_bytes > s.results[k].limit_bytes;
		if (!over && !e.sim_oom)
			pick = k, r->retries = e.sim_retries;
		else if ((s.results[k].fits || !e.sim_oom) && /* a near miss: its peak, not an oom */
			 (low == s.count || e.peak_bytes < s.results[low].peak_bytes))
			low = k, r->sim_oom = !over;
		s.results[k].peak_bytes = e.peak_bytes;
		r->sim_rejected += pick == s.count && s.results[k].fits;
	}
	r->fits = pick < s.count;
	if (r->fits) /* a near miss's verdict is the simulation's too */
		s.results[pick].fits = true;
	/* rejected by the simulation: its smallest peak is the reason, not
	 * the fast path's (which fits) */
	if (!r->fits && low < s.count)
		r->smallest = s.results[low];
	int small = r->fits ? 0 : smallest_fits(a, arch, g, &s, &r->retries, &err);
	if (small < 0) {
		vf_search_release(&s);
		return vf_cli_fail_err(&err);
	}
	if (!r->fits && low == s.count && s.have_smallest) /* its simulated peak, as estimate's */
		r->smallest = s.smallest;
	r->fits = r->fits || small;
	if (r->fits) {
		r->best = small ? s.smallest : s.results[pick];
		/* decided as the row is, by the simulation against its limit
		 * (the fast path's said 1 where batches up to 5 fit: llama3-8b
		 * FSDP x 2 on h100-80gb, --margin 0); -1: the host's memory */
		r->max_batch = vf_estimate_max_batch_limit_simulated(arch, &r->best.setup, g, NULL, a->memo,
								     r->best.limit_bytes);
		if (r->max_batch < 0) {
			vf_search_release(&s);
			return vf_cli_fail("allocator simulation: out of memory");
		}
		sort_keys(a, g, n, r);
	}
	vf_search_release(&s);
	return -1;
}

/* A row's device_peak_note and allocator_retries (vf_estimate_retries_note),
 * when its simulated allocator met the card's limit. */
static void retries_json(cJSON *o, int64_t retries)
{
	char note[320];
	if (!vf_estimate_retries_note(retries, note, sizeof note))
		return;
	cJSON_AddNumberToObject(o, "allocator_retries", (double)retries);
	cJSON_AddStringToObject(o, "device_peak_note", note);
}

/* The notes retries_json put in arr's rows, one line each (numbered: by
 * the row's number, as --search's table numbers its results). */
static void print_retries_notes(const cJSON *arr, bool numbered)
{
	const cJSON *x;
	int i = 0;
	cJSON_ArrayForEach(x, arr) {
		const cJSON *note = cJSON_GetObjectItem(x, "device_peak_note");
		i++;
		if (!cJSON_IsString(note))
			continue;
		if (numbered)
			printf("%d: ", i);
		printf("%s x%d: %s\n", cJSON_GetObjectItem(x, "gpu")->valuestring,
		       cJSON_GetObjectItem(x, "gpus")->valueint, note->valuestring);
	}
}

/* A row that fits: the settings it needs, speed, time and cost. */
static void fits_row(struct vf_table *t, cJSON *o, const struct fit_args *a, const struct row *r,
		     const struct vf_setup *st_, bool have_run)
{
	char n[16], mb[24], pk[32], stp[32], tps[32], c8[48], c9[48], set[512];
	const struct vf_setup st = *st_;
	double price = a->price >= 0 ? a->price : r->gpu->price_usd_hour;
	snprintf(n, sizeof n, "%d", r->gpus);
	result_fields(o, a, &r->best, r->gpu, &st);
	cJSON_AddNumberToObject(o, "max_batch", (double)r->max_batch);
	cJSON_AddNullToObject(o, "reason");
	retries_json(o, r->retries); /* the text's line under the table (print_fit_table) */
	vf_search_diff(&st, &r->best.setup, set, sizeof set);
	snprintf(mb, sizeof mb, "%lld", (long long)r->max_batch);
	vf_fmt_bytes(pk, sizeof pk, (double)r->best.peak_bytes);
	vf_fmt_seconds(stp, sizeof stp, r->best.step_seconds);
	fmt_rate(tps, sizeof tps, r->best.tokens_per_second);
	struct vf_run run;
	if (have_run && whole_run(a, &r->best, r->gpu, &run)) {
		vf_fmt_seconds(c8, sizeof c8, run.seconds);
		vf_fmt_usd(c9, sizeof c9, run.cost_usd);
	} else if (have_run) {
		snprintf(c8, sizeof c8, "-");
		snprintf(c9, sizeof c9, "-");
	} else {
		vf_fmt_usd(c8, sizeof c8, isfinite(r->cost_key) ? r->cost_key * 1e6 : -1); /* $/Mtok */
		vf_fmt_usd(c9, sizeof c9, price >= 0 ? price * r->gpus : -1);
	}
	if (r->split) {
		vf_split_setup_words(&r->best.setup, set, sizeof set);
		cJSON_AddStringToObject(o, "split", set);
		cJSON_ReplaceItemInObjectCaseSensitive(o, "settings", cJSON_CreateString(set));
	}
	vf_table_addf(t, r->gpu->id, n, "yes", set[0] ? set : "as given", mb, pk, stp, tps,
		      c8, c9);
}

/* A split that holds the model, but inside the margin. */
static void tight_row(struct vf_table *t, cJSON *o, const struct fit_args *a, const struct row *r,
		      const struct vf_setup *st_)
{
	char n[16], mb[24], pk[32], stp[32], tps[32], set[512];
	const struct vf_setup st = *st_;
	snprintf(n, sizeof n, "%d", r->gpus);
	/* the largest micro-batch whose split stays under the margin (the
	 * row's own is over it): the text's column as the JSON's max_batch */
	snprintf(mb, sizeof mb, "%lld", (long long)r->max_batch);
	char why[256], lim[32];
	result_fields(o, a, &r->best, r->gpu, &st);
	vf_split_setup_words(&r->best.setup, set, sizeof set);
	cJSON_AddStringToObject(o, "split", set);
	/* as a split row that fits says it, and as the text: the rule refuses
	 * the row, so no run time or cost (run null, the table's "-") */
	cJSON_ReplaceItemInObjectCaseSensitive(o, "settings", cJSON_CreateString(set));
	cJSON_ReplaceItemInObjectCaseSensitive(o, "run", cJSON_CreateNull());
	vf_fmt_bytes(pk, sizeof pk, (double)r->best.peak_bytes);
	vf_fmt_bytes(lim, sizeof lim, (double)r->best.limit_bytes);
	/* the split's peak as estimate replays it: over the card, it does not
	 * hold the model (no tight row over a failure) */
	int64_t card = vf_estimate_gpu_bytes(r->gpu);
	bool holds = card <= 0 || r->best.peak_bytes <= card;
	if (holds) {
		snprintf(why, sizeof why, "%s: peak %s fits the cards, not %s usable (--margin)", set, pk, lim);
	} else {
		char cb[32];
		snprintf(why, sizeof why, "%s: peak %s > %s per card (the allocator simulation)", set, pk,
			 vf_fmt_bytes(cb, sizeof cb, (double)card));
		snprintf(mb, sizeof mb, "-");
		cJSON_ReplaceItemInObjectCaseSensitive(o, "fits", cJSON_CreateFalse());
	}
	cJSON_AddNumberToObject(o, "max_batch", holds ? (double)r->max_batch : 0);
	cJSON_AddStringToObject(o, "reason", why);
	cJSON_AddBoolToObject(o, "fits_memory", holds);
	vf_fmt_seconds(stp, sizeof stp, r->best.step_seconds);
	fmt_rate(tps, sizeof tps, r->best.tokens_per_second);
	vf_table_addf(t, r->gpu->id, n, holds ? "tight" : "no", why, mb, pk, stp, tps, "-", "-");
}

/* A row that fits at no setting: why; knobs: those searched (the
 * precision knob is off by default, while estimate's advice tries amp and
 * bf16: a row refused without it says so, so the two never disagree
 * unsaid). */
static void nofit_row(struct vf_table *t, cJSON *o, const struct row *r, unsigned knobs)
{
	char n[16], pk[32];
	snprintf(n, sizeof n, "%d", r->gpus);
	char why[256], lim[32];
	vf_fmt_bytes(pk, sizeof pk, (double)r->smallest.peak_bytes);
	vf_fmt_bytes(lim, sizeof lim, (double)r->smallest.limit_bytes);
	if (r->sim_oom)
		snprintf(why, sizeof why, "smallest peak %s of %s usable, but out of memory in the "
			 "allocator simulation (fragmentation) in all %d settings the fast estimate fits",
			 pk, lim, r->sim_rejected);
	else if (r->sim_rejected)
		snprintf(why, sizeof why, "smallest peak %s > %s usable in the allocator simulation "
			 "of the %d settings the fast estimate fits (largest term: %s)", pk, lim,
			 r->sim_rejected, vf_term_name(r->smallest.dominant));
	else
		snprintf(why, sizeof why, "smallest peak %s > %s usable (largest term: %s)", pk, lim,
			 vf_term_name(r->smallest.dominant));
	cJSON_AddStringToObject(o, "gpu", r->gpu->id);
	cJSON_AddNumberToObject(o, "gpus", r->gpus);
	cJSON_AddBoolToObject(o, "fits", false);
	cJSON_AddNumberToObject(o, "peak_bytes", (double)r->smallest.peak_bytes);
	cJSON_AddNumberToObject(o, "limit_bytes", (double)r->smallest.limit_bytes);
	cJSON_AddNumberToObject(o, "vram_bytes", (double)r->smallest.gpu_bytes);
	cJSON_AddStringToObject(o, "dominant", vf_term_name(r->smallest.dominant));
	cJSON_AddItemToObject(o, "smallest_setup", vf_setup_to_json(&r->smallest.setup));
	if (r->sim_rejected)
		cJSON_AddNumberToObject(o, "rejected_by_allocator_simulation", r->sim_rejected);
	const struct vf_setup *ss = &r->smallest.setup;
	bool prec = !(knobs & VF_KNOB_BIT(VF_KNOB_PRECISION)) && ss->mode != VF_MODE_INFER &&
		    (ss->precision == VF_PREC_AMP || ss->precision == VF_PREC_FP32);
	size_t k = strlen(why);
	if (prec && k < sizeof why)
		snprintf(why + k, sizeof why - k, "; precision not tried (--allow precision)");
	cJSON *nt = cJSON_AddArrayToObject(o, "not_tried");
	if (prec)
		cJSON_AddItemToArray(nt, cJSON_CreateString("precision"));
	cJSON_AddStringToObject(o, "reason", why);
	vf_table_addf(t, r->gpu->id, n, "no", why, "-", "-", "-", "-", "-", "-");
}

/* The run asked for: "run": {tokens, steps}, null where not given. */
static void run_request(cJSON *root, const struct fit_args *a)
{
	cJSON *rq = cJSON_AddObjectToObject(root, "run");
	if (a->tokens > 0)
		cJSON_AddNumberToObject(rq, "tokens", a->tokens);
	else
		cJSON_AddNullToObject(rq, "tokens");
	if (a->steps > 0)
		cJSON_AddNumberToObject(rq, "steps", (double)a->steps);
	else
		cJSON_AddNullToObject(rq, "steps");
}

/* The --json object's head: model, setup, run, sort, margin. */
static cJSON *table_root(const struct fit_args *a, const struct vf_arch *arch)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *mo = cJSON_AddObjectToObject(root, "model");
	cJSON_AddStringToObject(mo, "id", a->model);
	{
		struct vf_estimate e;
		vf_estimate_run(arch, &a->setup, NULL, &e);
		cJSON_AddNumberToObject(mo, "params", (double)e.params);
		cJSON_AddNumberToObject(mo, "trainable_params", (double)e.trainable_params);
	}
	cJSON_AddItemToObject(root, "setup", vf_setup_to_json(&a->setup));
	run_request(root, a);
	cJSON_AddStringToObject(root, "sort", a->sort ? a->sort : "cost");
	cJSON_AddNumberToObject(root, "margin", a->margin);
	return root;
}

/* Split rows hold one model over their GPUs: not the data-parallel
 * "global batch x N" of the other rows (split.h). */
static void split_assumption(cJSON *root, const struct row *rows, int nrows)
{
	int k = 0;
	while (k < nrows && !rows[k].split)
		k++;
	if (k == nrows)
		return;
	cJSON_AddItemToArray(cJSON_GetObjectItem(root, "assumptions"), cJSON_CreateString(
		"split rows (layer split, tp, tp x pp) hold one copy of the model over their N GPUs: "
		"the global batch is the micro-batch x accumulation (x the pipeline's micro-batches), "
		"not x N; a layer split runs one GPU at a time, tp all-reduces after each attention and "
		"MLP block, pp runs the 1F1B schedule with its bubble"));
}

/* --json, or the table under a line saying what was fitted. */
static void print_fit_table(const struct fit_args *a, const cJSON *root, const struct vf_table *t)
{
	if (a->json) {
		vf_cli_print_json(root);
	} else {
		char su[96] = "";
		if (a->tokens > 0)
			snprintf(su, sizeof su, ", %.3g tokens", a->tokens);
		else if (a->steps > 0)
			snprintf(su, sizeof su, ", %lld steps", (long long)a->steps);
		/* the base's quantization and the sharding given (--shard) are
		 * part of what was fitted (the rows' settings are changes from it) */
		char qs[128] = "";
		int n = 0;
		if (a->setup.quant != VF_QUANT_NONE)
			n = snprintf(qs, sizeof qs, ", %s base", vf_quant_name(a->setup.quant));
		if ((a->setup.given & VF_SETUP_G_SHARD) && n >= 0 && (size_t)n < sizeof qs)
			n += snprintf(qs + n, sizeof qs - (size_t)n, ", %s", vf_shard_name(a->setup.shard));
		/* as estimate's Setup line: TF32 named, and a stack other than hf's */
		char pw[32];
		if (strcmp(a->setup.stack, "hf") != 0 && n >= 0 && (size_t)n < sizeof qs)
			n += snprintf(qs + n, sizeof qs - (size_t)n, ", stack %s", a->setup.stack);
		printf("%s, %s %s%s, micro-batch %lld x %lld tokens, accumulation %lld%s%s\n\n", a->model,
		       vf_mode_name(a->setup.mode), vf_cli_precision_words(&a->setup, pw, sizeof pw), qs,
		       (long long)a->setup.batch, (long long)a->setup.seq,
		       (long long)a->setup.grad_accum, su,
		       cJSON_IsTrue(cJSON_GetObjectItem(root, "approximate"))
			       ? " (approximate: see Assumptions)" : "");
		vf_table_print(t, stdout);
		print_retries_notes(cJSON_GetObjectItem(root, "rows"), false);
		print_assumptions(root);
	}
}

/* The GPU counts of a group's rows: --gpu ID without a count gets the 1,
 * 2, 4, 8 rows, as without --gpu (the help's promise); ID:N or --gpus N
 * that count only; --forbid gpus the setup's count (1 unless --gpus).
 * Returns how many. */
static int group_counts(const struct fit_args *a, const struct gpu_group *grp, int counts[4])
{
	static const int counts_default[] = {1, 2, 4, 8};
	bool gpus_fixed = !(a->knobs & VF_KNOB_BIT(VF_KNOB_GPUS)); /* --forbid gpus */
	if (grp->count > 0 && (grp->counted || grp->ndev || (a->setup.given & VF_SETUP_G_GPUS))) {
		counts[0] = grp->count;
		return 1;
	}
	if ((a->setup.given & VF_SETUP_G_GPUS) || gpus_fixed) {
		counts[0] = a->setup.gpus;
		return 1;
	}
	memcpy(counts, counts_default, sizeof counts_default);
	return 4;
}

static int fit_table(const struct fit_args *a, const struct vf_model *m,
		     const struct gpu_group *groups, int ngroups)
{
	const struct vf_arch *arch = &m->arch;
	struct row *rows = calloc((size_t)(ngroups > 0 ? ngroups : 1) * 6, sizeof *rows);
	if (!rows)
		return vf_cli_fail("out of memory");
	int nrows = 0;
	for (int gi = 0; gi < ngroups; gi++) {
		const struct vf_gpu_spec *g = groups[gi].spec;
		int counts[4], nc = group_counts(a, &groups[gi], counts);
		for (int ci = 0; ci < nc; ci++) {
			int rc = search_row(a, arch, g, counts[ci], &rows[nrows++]);
			if (rc >= 0) {
				free(rows);
				return rc;
			}
		}
		if (a->knobs & VF_KNOB_BIT(VF_KNOB_SPLIT)) /* not under --forbid split */
			nrows += split_rows(a, arch, &groups[gi], &rows[nrows]);
	}
	row_cmp_sort = !a->sort || strcmp(a->sort, "cost") == 0 ? VF_SORT_COST
		       : strcmp(a->sort, "time") == 0            ? VF_SORT_TIME
								 : VF_SORT_VRAM;
	qsort(rows, (size_t)nrows, sizeof *rows, row_cmp);

	cJSON *root = table_root(a, arch);
	cJSON *arr = cJSON_AddArrayToObject(root, "rows");

	bool have_run = a->tokens > 0 || a->steps > 0;
	const char *const hdr[] = {"GPU", "n", "fits", "settings needed", "max batch", "peak",
					  "step", "tokens/s", have_run ? "run time" : "$/Mtok",
					  have_run ? "cost" : "$/h"};
	struct vf_table tt, *t = &tt;
	vf_table_init(t, 10, hdr);
	for (int c = 4; c < 10; c++)
		vf_table_set_right(t, c, true);
	vf_table_set_right(t, 1, true);
	for (int i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		cJSON *o = cJSON_CreateObject();
		struct vf_setup st = start_on(&a->setup, r->gpus);
		double price = a->price >= 0 ? a->price : r->gpu->price_usd_hour;
		if (r->fits)
			fits_row(t, o, a, r, &st, have_run);
		else if (r->split)
			tight_row(t, o, a, r, &st);
		else
			nofit_row(t, o, r, a->knobs);
		if (price >= 0)
			cJSON_AddNumberToObject(o, "price_usd_hour", price);
		else
			cJSON_AddNullToObject(o, "price_usd_hour");
		cJSON_AddItemToArray(arr, o);
	}
	bool multi = false;
	for (int i = 0; i < nrows; i++)
		multi |= rows[i].gpus > 1;
	add_assumptions(root, a, arch, false, multi);
	split_assumption(root, rows, nrows);
	int hrc = write_html(a, root, "table");
	if (hrc) {
		vf_table_release(t);
		cJSON_Delete(root);
		free(rows);
		return hrc;
	}
	print_fit_table(a, root, t);
	vf_table_release(t);
	cJSON_Delete(root);
	free(rows);
	return VF_EXIT_OK;
}

/* --- fit --search ------------------------------------------------------------ */

struct hit {
	struct vf_search_result r;
	const struct vf_gpu_spec *gpu;
	struct vf_setup start; /* the setup it is compared with */
	int64_t retries;       /* its simulation's vf_estimate.sim_retries */
};

static enum vf_search_sort sort_of(const char *s)
{
	if (!s || strcmp(s, "time") == 0)
		return VF_SORT_TIME;
	return strcmp(s, "cost") == 0 ? VF_SORT_COST : VF_SORT_VRAM;
}

static int hit_sort;
static int hit_cmp(const void *x, const void *y)
{
	const struct hit *a = x, *b = y;
	double ka, kb;
	if (hit_sort == VF_SORT_COST) {
		ka = a->r.cost_per_step >= 0 ? a->r.cost_per_step : INFINITY;
		kb = b->r.cost_per_step >= 0 ? b->r.cost_per_step : INFINITY;
	} else if (hit_sort == VF_SORT_VRAM) {
		ka = (double)a->r.peak_bytes;
		kb = (double)b->r.peak_bytes;
	} else {
		ka = vf_search_time_bucket(a->r.step_seconds);
		kb = vf_search_time_bucket(b->r.step_seconds);
	}
	if (ka != kb)
		return ka < kb ? -1 : 1;
	if (a->r.invasiveness != b->r.invasiveness)
		return a->r.invasiveness < b->r.invasiveness ? -1 : 1;
	return a->r.peak_bytes < b->r.peak_bytes ? -1 : a->r.peak_bytes > b->r.peak_bytes;
}

static const char *setup_brief(char *o, size_t n, const struct vf_setup *s)
{
	int k = snprintf(o, n, "%dx %s, b%lldx%lld, ckpt %s, %s%s%s", s->gpus, vf_shard_name(s->shard),
			 (long long)s->batch, (long long)s->grad_accum, s->grad_ckpt ? "on" : "off",
			 vf_optimizer_name(s->optimizer), s->quant ? ", " : "",
			 s->quant ? vf_quant_name(s->quant) : "");
	if (vf_split_active(s) && k > 0 && (size_t)k + 2 < n) {
		o[k] = ',';
		o[k + 1] = ' ';
		vf_split_setup_words(s, o + k + 2, n - (size_t)k - 2);
	}
	return o;
}

/* Every setting the fast path fits on grp, rejected by the allocator
 * simulation: why nothing is shown for it (r: the smallest simulated). */
static void nofit_simulated(cJSON *nofit, const struct gpu_group *grp,
			    const struct vf_search_result *r, int64_t peak, size_t n)
{
	char pk[32], lim[32], why[320];
	vf_fmt_bytes(pk, sizeof pk, (double)peak);
	vf_fmt_bytes(lim, sizeof lim, (double)r->limit_bytes);
	if (peak <= r->limit_bytes)
		snprintf(why, sizeof why, "nothing fits %dx %s: out of memory in the allocator "
			 "simulation (fragmentation) in all %zu settings the fast estimate fits "
			 "(smallest peak %s of %s usable)", grp->count, grp->spec->id, n, pk, lim);
	else
		snprintf(why, sizeof why, "nothing fits %dx %s: smallest peak %s > %s usable in the "
			 "allocator simulation of the %zu settings the fast estimate fits (largest "
			 "term: %s)", grp->count, grp->spec->id, pk, lim, n, vf_term_name(r->dominant));
	cJSON *x = cJSON_CreateObject();
	cJSON_AddStringToObject(x, "gpu", grp->spec->id);
	cJSON_AddNumberToObject(x, "gpus", grp->count);
	cJSON_AddStringToObject(x, "reason", why);
	cJSON_AddItemToArray(nofit, x);
}

/* What the searches of all GPU kinds looked at. */
struct tally {
	uint64_t space, evaluated, fitting;
	uint64_t rejected; /* fit on the fast path, not in the allocator simulation */
	uint64_t near_fit; /* over on the fast path, within its reserve, fit in the simulation */
	double seconds;
};

/* The replays that confirm a search's results announced to memo, then
 * run on two threads into it (longest first), so that the loop confirming
 * them in order finds each there: the same answers, sooner. */
struct confirm_job {
	const struct vf_arch *arch;
	const struct vf_search *s;
	const struct vf_gpu_spec *g;
	struct vf_replay_memo *memo;
	size_t order[64], n;
	atomic_size_t next;
};

static void *confirm_worker(void *arg)
{
	struct confirm_job *j = arg;
	for (size_t t; (t = atomic_fetch_add(&j->next, 1)) < j->n;)
		vf_estimate_prefetch_memo(j->arch, &j->s->results[j->order[t]].setup, j->g, NULL, j->memo);
	return NULL;
}

/* The results the confirming loop reads when the simulation fits every
 * one the fast path fits: up to the top-th of those (the near misses
 * before it among them). */
static size_t confirm_span(const struct vf_search *s, size_t top)
{
	size_t i = 0, fits = 0;
	while (i < s->count && fits < top)
		fits += s->results[i++].fits;
	return i;
}

/* The first n of a search's results replayed ahead (confirm_job). */
static void confirm_warm(const struct vf_arch *arch, const struct vf_search *s, const struct vf_gpu_spec *g,
			 struct vf_replay_memo *memo, size_t n)
{
	struct confirm_job j = {arch, s, g, memo, {0}, 0, 0};
	double w[64];
	for (size_t i = 0; i < s->count && i < n; i++) {
		double wi = vf_estimate_expect_replay(arch, &s->results[i].setup, g, NULL, memo);
		if (i >= 64)
			continue;
		size_t k = j.n++;
		for (; k > 0 && w[k - 1] < wi; k--) { /* by weight, descending */
			w[k] = w[k - 1];
			j.order[k] = j.order[k - 1];
		}
		w[k] = wi;
		j.order[k] = i;
	}
	pthread_t th;
	if (!memo || j.n < 2 || sysconf(_SC_NPROCESSORS_ONLN) < 2 ||
	    pthread_create(&th, NULL, confirm_worker, &j) != 0)
		return; /* the loop replays them */
	confirm_worker(&j);
	pthread_join(th, NULL);
}

/* The start's peak and verdict as vramfit estimate gives them: the
 * allocator simulation's, not the fast path's the search ranks on (the
 * start line said 192.16 GiB where estimate said 195.85 GiB for the same
 * setup). */
static int start_simulated(const struct fit_args *a, const struct vf_model *m, const struct vf_gpu_spec *g,
			   struct vf_search_result *r, struct vf_error *err)
{
	struct vf_estimate e;
	if (vf_estimate_simulate_memo(&m->arch, &r->setup, g, NULL, a->memo, &e, NULL, err))
		return -1;
	r->peak_bytes = e.peak_bytes;
	r->fits = !e.sim_oom && e.peak_bytes <= r->limit_bytes;
	return 0;
}

/* A search's results confirmed by the allocator simulation (the search
 * ranks on the fast path), in order, until a->top fit (of the first a->top
 * the fast path fits and the near misses among them): those into hits.
 * When none fits, why into nofit (of the *nfast the fast path fits; none:
 * the caller says why). -1 on error. */
static int confirm_hits(const struct fit_args *a, const struct vf_model *m, const struct gpu_group *grp,
			const struct vf_setup *st, struct vf_search *s, struct hit *hits, size_t *nh,
			struct tally *ty, cJSON *nofit, size_t *nfast, struct vf_error *err)
{
	const struct vf_gpu_spec *g = grp->spec;
	size_t kept = 0, low = s->count;
	int64_t low_peak = 0;
	*nfast = 0;
	size_t span = confirm_span(s, (size_t)a->top); /* the old list's fits, and near misses */
	for (size_t i = 0; i < span && kept < (size_t)a->top; i++) {
		struct vf_estimate e;
		if (vf_estimate_simulate_memo(&m->arch, &s->results[i].setup, g, NULL, a->memo,
					      &e, NULL, err))
			return -1;
		*nfast += s->results[i].fits;
		if (e.sim_oom || e.peak_bytes > s->results[i].limit_bytes) {
			if (s->results[i].fits && (low == s->count || e.peak_bytes < low_peak))
				low = i, low_peak = e.peak_bytes;
			ty->rejected += s->results[i].fits;
			continue;
		}
		ty->near_fit += !s->results[i].fits; /* over on the fast path only */
		s->results[i].fits = true; /* the simulation's verdict, with its peak */
		s->results[i].peak_bytes = e.peak_bytes;
		hits[(*nh)++] = (struct hit){s->results[i], g, *st, e.sim_retries};
		kept++;
	}
	if (kept)
		*nfast = kept; /* something fits: no reason to give */
	else if (*nfast)
		nofit_simulated(nofit, grp, &s->results[low], low_peak, *nfast);
	return 0;
}

/* One GPU kind: its start, the configurations that fit (confirmed by the
 * allocator simulation) into hits, or why nothing does into nofit.
 * Returns -1 or the exit code. */
static int search_group(const struct fit_args *a, const struct vf_model *m, const struct gpu_group *grp,
			enum vf_search_sort sort, struct hit *hits, size_t *nh, struct tally *ty,
			cJSON *starts, cJSON *nofit)
{
	struct vf_error err = {0};
	const struct vf_gpu_spec *g = grp->spec;
	struct vf_setup st = start_on(&a->setup, a->setup.given & VF_SETUP_G_GPUS
							 ? a->setup.gpus
							 : grp->count);
	if (st.gpus > grp->count)
		return vf_cli_usage("fit", "--gpus %d: only %d %s given", st.gpus,
				    grp->count, g->id);
	struct vf_search_opts o;
	vf_search_opts_defaults(&o);
	o.knobs = a->knobs;
	o.margin = a->margin;
	o.max_gpus = grp->count;
	o.sort = sort;
	o.top = 2 * (size_t)a->top; /* room for the near misses, which the simulation decides */
	o.near = true;
	o.exhaustive = a->exhaustive;
	o.price_usd_hour = a->price;
	o.threads = 0; /* the CPUs online: the same results */
	struct vf_search s;
	if (vf_search_run(&m->arch, &st, g, &o, &s, &err) != VF_OK)
		return vf_cli_fail_err(&err);
	ty->space += s.space;
	ty->evaluated += s.evaluated;
	ty->fitting += s.fitting;
	ty->seconds += s.seconds;
	confirm_warm(&m->arch, &s, g, a->memo, confirm_span(&s, (size_t)a->top)); /* replayed below */
	size_t nfast = 0;
	if (confirm_hits(a, m, grp, &st, &s, hits, nh, ty, nofit, &nfast, &err)) {
		vf_search_release(&s);
		return vf_cli_fail_err(&err);
	}
	if (start_simulated(a, m, g, &s.start, &err)) {
		vf_search_release(&s);
		return vf_cli_fail_err(&err);
	}
	cJSON *so = cJSON_CreateObject();
	result_fields(so, a, &s.start, g, &st);
	cJSON_AddNumberToObject(so, "effective_batch", (double)s.effective_batch);
	cJSON_AddItemToArray(starts, so);
	if (!nfast && s.have_smallest) { /* no near miss fit either (confirm_hits) */
		cJSON *x = cJSON_CreateObject();
		char pk[32], lim[32], why[256];
		vf_fmt_bytes(pk, sizeof pk, (double)s.smallest.peak_bytes);
		vf_fmt_bytes(lim, sizeof lim, (double)s.smallest.limit_bytes);
		snprintf(why, sizeof why,
			 "nothing fits %dx %s: smallest peak %s > %s usable (largest term: %s)",
			 grp->count, g->id, pk, lim, vf_term_name(s.smallest.dominant));
		cJSON_AddStringToObject(x, "gpu", g->id);
		cJSON_AddNumberToObject(x, "gpus", grp->count);
		cJSON_AddStringToObject(x, "reason", why);
		cJSON_AddItemToArray(nofit, x);
	}
	vf_search_release(&s);
	return -1;
}

/* The "search" object: what was searched, how. */
static void search_json(cJSON *root, const struct fit_args *a, enum vf_search_sort sort,
			const struct tally *ty, int ngroups)
{
	cJSON *so = cJSON_AddObjectToObject(root, "search");
	cJSON_AddNumberToObject(so, "evaluated", (double)ty->evaluated);
	cJSON_AddNumberToObject(so, "seconds", ty->seconds);
	cJSON_AddNumberToObject(so, "space", (double)ty->space);
	cJSON_AddNumberToObject(so, "fitting", (double)(ty->fitting + ty->near_fit));
	cJSON_AddNumberToObject(so, "rejected_by_allocator_simulation", (double)ty->rejected);
	cJSON_AddNumberToObject(so, "near_misses_fit_by_allocator_simulation", (double)ty->near_fit);
	cJSON_AddNumberToObject(so, "pruned", (double)(ty->space + (uint64_t)ngroups - ty->evaluated));
	cJSON_AddNumberToObject(so, "margin", a->margin);
	cJSON_AddStringToObject(so, "sort", sort == VF_SORT_TIME ? "time"
					    : sort == VF_SORT_COST ? "cost" : "vram");
	cJSON *kn = cJSON_AddArrayToObject(so, "knobs");
	for (int k = 0; k < VF_KNOB_COUNT; k++)
		if (a->knobs & VF_KNOB_BIT(k))
			cJSON_AddItemToArray(kn, cJSON_CreateString(vf_knob_name((enum vf_knob)k)));
}

/* Result i: its JSON and its table row. */
static void hit_row(struct vf_table *t, cJSON *arr, const struct fit_args *a, const struct vf_model *m,
		    const struct hit *h, size_t i)
{
	const struct vf_search_result *r = &h->r;
	const struct vf_gpu_spec *g = h->gpu;
	cJSON *o = cJSON_CreateObject();
	const struct vf_setup *st = &h->start;
	result_fields(o, a, r, g, st);
	retries_json(o, h->retries); /* the text's line under the table (print_search) */
	if (a->html) {
		double price = a->price >= 0 ? a->price : g->price_usd_hour;
		if (price >= 0)
			cJSON_AddNumberToObject(o, "price_usd_hour", price);
		/* as fit's rows: the simulation's against the limit (-1: the host's memory) */
		cJSON_AddNumberToObject(o, "max_batch", (double)vf_estimate_max_batch_limit_simulated(
							&m->arch, &r->setup, g, NULL, a->memo, r->limit_bytes));
	}
	cJSON_AddItemToArray(arr, o);
	char idx[8], su[160], pk[32], stp[32], tps[32], rt[32], cost[32], d[512];
	snprintf(idx, sizeof idx, "%zu", i + 1);
	char brief[192];
	snprintf(su, sizeof su, "%s %s", g->id, setup_brief(brief, sizeof brief, &r->setup));
	vf_fmt_bytes(pk, sizeof pk, (double)r->peak_bytes);
	vf_fmt_seconds(stp, sizeof stp, r->step_seconds);
	fmt_rate(tps, sizeof tps, r->tokens_per_second);
	struct vf_run run;
	if (whole_run(a, r, g, &run)) {
		vf_fmt_seconds(rt, sizeof rt, run.seconds);
		vf_fmt_usd(cost, sizeof cost, run.cost_usd);
	} else {
		snprintf(rt, sizeof rt, "-");
		snprintf(cost, sizeof cost, "-");
	}
	vf_search_diff(st, &r->setup, d, sizeof d);
	vf_table_addf(t, idx, su, pk, stp, tps, rt, cost, d[0] ? d : "as given");
}

/* --json, or each start, what was searched, the table and why nothing fits. */
static void print_search(const struct fit_args *a, const cJSON *root, const struct vf_table *t,
			 const struct gpu_group *groups, int ngroups, const cJSON *starts,
			 const cJSON *nofit, const struct tally *ty, size_t nh)
{
	if (a->json) {
		vf_cli_print_json(root);
	} else {
		if (cJSON_IsTrue(cJSON_GetObjectItem(root, "approximate")))
			printf("%s (approximate: see Assumptions)\n", a->model);
		for (int gi = 0; gi < ngroups; gi++) {
			const cJSON *sx = cJSON_GetArrayItem(starts, gi);
			char pk[32], lim[32];
			vf_fmt_bytes(pk, sizeof pk, cJSON_GetObjectItem(sx, "peak_bytes")->valuedouble);
			vf_fmt_bytes(lim, sizeof lim, cJSON_GetObjectItem(sx, "limit_bytes")->valuedouble);
			printf("start on %dx %s: peak %s of %s usable: %s\n", groups[gi].count,
			       groups[gi].spec->id, pk, lim,
			       cJSON_IsTrue(cJSON_GetObjectItem(sx, "fits")) ? "fits" : "does not fit");
		}
		printf("searched %llu configurations in %.2f ms (%llu pruned exactly, %llu estimates "
		       "with the start); %zu shown of %llu that fit",
		       (unsigned long long)ty->space, ty->seconds * 1e3,
		       (unsigned long long)(ty->space + (uint64_t)ngroups - ty->evaluated),
		       (unsigned long long)ty->evaluated, nh,
		       (unsigned long long)(ty->fitting + ty->near_fit));
		if (ty->near_fit)
			printf(" (%llu of them over on the fast estimate by less than its allocator "
			       "reserve, under in the allocator simulation)", (unsigned long long)ty->near_fit);
		if (ty->rejected)
			printf(" (%llu of them over in the allocator simulation)",
			       (unsigned long long)ty->rejected);
		printf("\n\n");
		if (nh)
			vf_table_print(t, stdout);
		print_retries_notes(cJSON_GetObjectItem(root, "results"), true);
		const cJSON *x;
		cJSON_ArrayForEach(x, nofit) printf("%s\n", cJSON_GetObjectItem(x, "reason")->valuestring);
		print_assumptions(root);
	}
}

static int fit_search(const struct fit_args *a, const struct vf_model *m,
		      const struct gpu_group *groups, int ngroups)
{
	enum vf_search_sort sort = sort_of(a->sort);
	struct hit *hits = calloc((size_t)ngroups * a->top + 1, sizeof *hits);
	if (!hits)
		return vf_cli_fail("out of memory");
	size_t nh = 0;
	struct tally ty = {0};
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(cJSON_AddObjectToObject(root, "model"), "id", a->model);
	run_request(root, a);
	cJSON *starts = cJSON_AddArrayToObject(root, "start");
	cJSON *nofit = cJSON_CreateArray();
	for (int gi = 0; gi < ngroups; gi++) {
		int rc = search_group(a, m, &groups[gi], sort, hits, &nh, &ty, starts, nofit);
		if (rc >= 0) {
			cJSON_Delete(nofit);
			cJSON_Delete(root);
			free(hits);
			return rc;
		}
	}
	hit_sort = (int)sort;
	qsort(hits, nh, sizeof *hits, hit_cmp);
	if (nh > (size_t)a->top)
		nh = (size_t)a->top;
	search_json(root, a, sort, &ty, ngroups);
	cJSON *arr = cJSON_AddArrayToObject(root, "results");
	cJSON_AddItemToObject(root, "not_fitting", nofit);

	static const char *const hdr[] = {"#", "setup", "peak", "step", "tokens/s", "run time", "cost",
					  "changes"};
	struct vf_table tt, *t = &tt;
	vf_table_init(t, 8, hdr);
	for (int c = 2; c < 7; c++)
		vf_table_set_right(t, c, true);
	for (size_t i = 0; i < nh; i++) {
		hit_row(t, arr, a, m, &hits[i], i);
	}
	bool multi = false;
	for (size_t i = 0; i < nh; i++)
		multi |= hits[i].r.setup.gpus > 1;
	add_assumptions(root, a, &m->arch, true, multi);
	int hrc = write_html(a, root, "search");
	if (hrc) {
		vf_table_release(t);
		cJSON_Delete(root);
		free(hits);
		return hrc;
	}
	print_search(a, root, t, groups, ngroups, starts, nofit, &ty, nh);
	vf_table_release(t);
	cJSON_Delete(root);
	free(hits);
	return VF_EXIT_OK;
}

/* A model that is not trained as bf16 weights: a GGUF file (llama.cpp,
 * inference) and a quantized checkpoint without --quant are named, not
 * searched as if they were. Returns -1 or the exit code. */
static int stored_as(const struct vf_model *m, const struct vf_setup *s, const char *model)
{
	if (m->gguf)
		return vf_cli_fail("%s: a GGUF file runs in llama.cpp, for inference: vramfit estimate %s "
				   "[--ctx N] [--n-gpu-layers N] gives its memory per GPU",
				   model, model);
	if (m->has_quant && m->quant.understood && m->quant.base_quant[0] &&
	    !(s->given & VF_SETUP_G_QUANT))
		return vf_cli_usage("fit", "%s: a %s %d-bit %s: give --quant %s and --mode lora "
					   "or infer to fit it as stored",
				    model, m->quant.method, m->quant.bits,
				    m->files < 0 ? "model (its config's quantization_config)" : "checkpoint",
				    m->quant.base_quant);
	return -1;
}

/* The model to search, or the exit code of why not (stored_as). */
static int load_model(const char *path, const struct vf_setup *s, struct vf_model **out)
{
	struct vf_error err = {0};
	if (vf_model_load(path, out, &err) != VF_OK)
		return vf_cli_fail_err(&err);
	if (vf_model_need_whole(*out, &err) != VF_OK) {
		vf_model_free(*out);
		*out = NULL;
		return vf_cli_fail_err(&err);
	}
	int rc = stored_as(*out, s, path);
	if (rc >= 0) {
		vf_model_free(*out);
		*out = NULL;
	}
	return rc;
}

/* A video DiT the trainer profile trains: a catalog DiT, an LTX
 * transformer file or a pipeline whose transformer is one. */
static bool is_dit(const struct vf_model *m)
{
	if (m->entry && strcmp(m->entry->kind, "dit") == 0)
		return true;
	if (m->has_ltx)
		return true;
	for (size_t i = 0; i < m->ncomponents; i++)
		if (strcmp(m->components[i]->name, "transformer") == 0 && is_dit(m->components[i]))
			return true;
	return false;
}

/* Another diffusion transformer (Flux, PixArt, Latte, Wan, LTX-Video 0.9
 * from its diffusers config), or a pipeline whose transformer is one:
 * the trainer's tiers, configs and video size do not apply to it. */
static const struct vf_vision *other_dit(const struct vf_model *m)
{
	if (m->has_vision && strcmp(m->vision.kind, "dit") == 0)
		return &m->vision;
	for (size_t i = 0; i < m->ncomponents; i++)
		if (strcmp(m->components[i]->name, "transformer") == 0 && other_dit(m->components[i]))
			return other_dit(m->components[i]);
	return NULL;
}

static int fit_dit(const struct fit_args *a, const struct vf_model *m, const struct gpu_group *groups, int ng)
{
	const struct vf_gpu_spec *specs[64];
	int counts[64], n = 0;
	size_t ncat = 0;
	struct vf_error err = {0};
	const struct vf_gpu_spec *cat = vf_gpu_catalog(&ncat, &err);
	if (!cat)
		return vf_cli_fail_err(&err);
	if (a->gpu.n) {
		for (int i = 0; i < ng; i++) {
			specs[n] = groups[i].spec;
			counts[n++] = groups[i].count;
		}
	} else {
		for (size_t i = 0; i < ncat && n < 64; i++)
			if ((a->all_gpus || cat[i].common) && cat[i].bf16_tflops > 0) {
				specs[n] = &cat[i];
				counts[n++] = 0;
			}
	}
	struct vf_fit_dit_args d = {
		.model = a->model, .setup = &a->setup, .steps = a->steps, .search = a->search, .json = a->json,
		.accept_risk = a->accept_risk, .sort = a->sort, .trainer_dir = a->trainer_dir, .price = a->price,
		.gpus = specs, .counts = a->gpu.n ? counts : NULL, .ngpus = n, .top = a->top,
	};
	if (a->tokens > 0)
		return vf_cli_usage("fit", "--tokens: a video DiT's run is counted in --steps");
	/* what the LLM table has and the trainer's sweep does not: refused, never ignored */
	const char *unused = a->html ? "--html" : a->exhaustive ? "--exhaustive"
			     : a->sort && strcmp(a->sort, "vram") == 0 ? "--sort vram"
			     : a->knobs != VF_KNOBS_DEFAULT ? "--allow/--forbid"
			     : a->margin != 0.10 ? "--margin" : NULL;
	if (unused)
		return vf_cli_usage("fit", "%s: not used for a video DiT the trainer trains (its tiers, sweep and "
					   "--search knobs come from the trainer profile%s); --json gives every figure",
				    unused, strcmp(unused, "--html") ? "" : "; report fit has no page for it");
	return vf_fit_dit(&d, m);
}

/* A model that is not a transformer LLM: the trainer's DiTs get their own
 * fit; the rest are refused. -1: an LLM, go on. */
static int by_kind(const struct fit_args *a, const struct vf_model *m, const struct gpu_group *groups, int ng)
{
	char msg[384];
	if (!m->has_arch && is_dit(m) && !vf_opt_dit_setup_ok(&a->setup, msg, sizeof msg))
		return vf_cli_usage("fit", "%s", msg);
	if (!m->has_arch && is_dit(m))
		return fit_dit(a, m, groups, ng);
	const struct vf_vision *od = m->has_arch ? NULL : other_dit(m);
	if (od)
		return vf_cli_fail("%s: a %s diffusion transformer; fit plans the LTX-2 trainer's models "
				   "(ltx-2-19b, ltx-2.3-22b, an LTX-2 checkpoint), whose tiers, configs and "
				   "video size do not apply to it (vramfit estimate %s gives its memory and "
				   "step time)", a->model, od->family, a->model);
	if (!m->has_arch && m->has_vision)
		return vf_cli_fail("%s: a vision model; fit searches transformer LLMs and the video DiTs the "
				   "trainer trains (vramfit estimate %s gives its memory and step time)", a->model,
				   a->model);
	if (a->setup.video_width > 0 || a->trainer_dir || a->accept_risk)
		return vf_cli_usage("fit", "%s: for a video DiT the trainer trains (ltx-2-19b, an LTX-2 checkpoint "
					   "or a pipeline whose transformer is one)", a->setup.video_width > 0 ? "--video"
					   : a->trainer_dir ? "--trainer-dir" : "--accept-risk");
	if (!m->has_arch && m->has_adapter) /* as estimate says it */
		return vf_cli_fail("%s: a LoRA adapter without its base model's config: fit the base model "
				   "(a catalog id or its config.json) with --mode lora --lora-rank R "
				   "--lora-targets LIST", a->model);
	if (!m->has_arch)
		return vf_cli_fail("%s: no architecture to estimate from (need a config.json or a "
				   "catalog LLM)", a->model);
	return -1;
}

/* --mode infer --engine: the ways to serve on each kind (fit-serve.c). */
static int fit_serve(const struct fit_args *a, const struct vf_model *m, const struct gpu_group *groups,
		     int ng)
{
	/* as estimate: the engines' models are for attention KV caches */
	if (m->arch.ssm_layers > 0 || m->arch.heads <= 0)
		return vf_cli_usage("fit", "--mode infer: the ways to serve model attention KV caches; a "
					   "state-space model's inference is vramfit estimate %s --mode infer "
					   "(its recurrent state)", a->model);
	struct vf_serve_gpus g[64];
	for (int i = 0; i < ng && i < 64; i++) {
		memset(&g[i], 0, sizeof g[i]);
		g[i].spec = groups[i].spec;
		g[i].count = groups[i].count;
		g[i].ndev = groups[i].ndev;
		memcpy(g[i].dev, groups[i].dev, sizeof g[i].dev);
		snprintf(g[i].label, sizeof g[i].label, "%s", groups[i].label);
	}
	struct vf_infer_opts io = a->inf;
	io.replay = true; /* transformers' users at --ctx judged by the allocator's replay, as estimate */
	io.memo = a->memo;
	return vf_fit_serve(m->entry ? m->entry->id : a->model, &m->arch, &a->setup, g, ng, &io, a->generate,
			    (int)a->top, a->json);
}

/* Unequal cards (--gpu A,B) are one machine's set that llama.cpp serves:
 * not a training grid's GPU kind, not vLLM's (equal tensor-parallel
 * shards, every card kept to the KV blocks of the card with the fewest:
 * vllm/v1/core/kv_cache_utils.py get_kv_cache_configs). */
static int check_sets(const struct fit_args *a, const struct gpu_group *groups, int ng)
{
	for (int i = 0; i < ng; i++) {
		if (!groups[i].ndev)
			continue;
		if (!a->engine)
			return vf_cli_usage("fit", "--gpu %s: a set of unequal cards is for --mode infer --engine "
						   "llamacpp or any (the ways to serve); give each kind as --gpu ID:N",
					    groups[i].label);
		if (a->generate)
			return vf_cli_usage("fit", "--gpu %s: transformers over unequal cards (device_map by each "
						   "card's memory) is not modelled; give each kind as --gpu ID:N",
					    groups[i].label);
		if (a->inf.engine == VF_ENGINE_VLLM)
			return vf_cli_usage("fit", "--gpu %s: vLLM over unequal cards cuts the model into equal "
						   "tensor-parallel shards and keeps every card to the KV blocks of the card "
						   "with the fewest (vllm/v1/core/kv_cache_utils.py get_kv_cache_configs): "
						   "give the smaller card as --gpu ID:%d, or --engine llamacpp or any",
					    groups[i].label, groups[i].ndev);
	}
	return -1;
}

/* --float8 on cards below compute capability 8.9, as estimate decides
 * (vf_cli_float8_keep): a card given or probed is refused, the common
 * cards shown by default lose those rows, named in the assumptions.
 * Returns -1 or the exit code. */
static int float8_groups(struct fit_args *a, struct gpu_group *groups, int *ng, bool common)
{
	a->float8 = (struct vf_cli_float8){.cmd = "fit", .common = common, .rc = -1};
	int k = 0;
	for (int i = 0; i < *ng && a->float8.rc < 0; i++)
		if (vf_cli_float8_keep(&a->float8, &a->setup, groups[i].spec))
			groups[k++] = groups[i];
	int rc = vf_cli_float8_done(&a->float8, k, *ng);
	if (rc >= 0)
		return rc;
	*ng = k;
	return -1;
}

/* The GPUs without --gpu: the probed ones for --search, else the common
 * (or every) catalog card; then --float8's check. Returns -1 or the exit
 * code. */
static int other_groups(struct fit_args *a, const struct vf_gpu_spec *cat, size_t ncat,
			struct gpu_group *groups, int *ng)
{
	if (a->gpu.n) {
		/* the groups are made by run */
	} else if (a->search) {
		int rc = gpu_groups_probed(groups, 64, ng);
		if (rc >= 0)
			return rc;
		if (!*ng)
			return vf_cli_usage("fit", "--search: no GPU found on this machine; give --gpu "
						   "SPEC (e.g. --gpu rtx-4090:4)");
	} else {
		for (size_t i = 0; i < ncat && *ng < 64; i++)
			if ((a->all_gpus || cat[i].common) && cat[i].bf16_tflops > 0)
				groups[(*ng)++] = (struct gpu_group){.spec = &cat[i], .count = 0};
	}
	return float8_groups(a, groups, ng, !a->gpu.n && !a->search);
}

/* The sequence against the model's positions (vf_opt_position_check, as
 * vramfit estimate): shortened and said, refused, or past the trained
 * context, said and every figure approximate. Returns -1 or the exit code. */
static int position_check(struct fit_args *a, struct vf_model *m)
{
	if (!m->has_arch || is_dit(m))
		return -1;
	char what[160];
	switch (vf_opt_position_check(&m->arch, a->model, &a->setup, a->inf.ctx, a->seq_note, sizeof a->seq_note,
				      what, sizeof what)) {
	case VF_POS_REFUSED: return vf_cli_usage("fit", "%s", a->seq_note);
	case VF_POS_BEYOND:
		a->seq_approx = true;
		if (a->engine) /* the ways to serve say the model's not-understood line */
			vf_arch_not_understood(&m->arch, what);
		break;
	case VF_POS_SHORTENED:
	case VF_POS_OK: break;
	}
	return -1;
}

static int run(int argc, char **argv)
{
	struct fit_args a;
	int rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	struct vf_error err = {0};
	struct gpu_group groups[64];
	int ng = 0;
	if (a.gpu.n) { /* --gpu ID:N is --gpu ID --gpus N */
		rc = gpu_groups_from_specs(&a, groups, 64, &ng);
		if (rc >= 0)
			return rc;
		const char *ids[64];
		int counts[64];
		for (int i = 0; i < ng; i++) {
			ids[i] = groups[i].spec->id;
			counts[i] = groups[i].count;
		}
		rc = vf_cli_gpu_counts("fit", ids, counts, ng, &a.setup);
		if (rc >= 0)
			return rc;
		for (int i = 0; i < ng; i++)
			groups[i].count = counts[i];
	}
	rc = check_sets(&a, groups, ng);
	if (rc >= 0)
		return rc;
	if (vf_setup_finish(&a.setup, &err) != VF_OK)
		return vf_cli_usage("fit", "%s", err.msg);
	if (vf_split_active(&a.setup))
		return vf_cli_usage("fit", "--split/--tp/--pp: fit offers the split itself (a row per GPU "
					   "kind that one card does not hold); use vramfit estimate to check one");
	struct vf_model *m = NULL;
	if ((rc = load_model(a.model, &a.setup, &m)) >= 0)
		return rc;
	if ((rc = position_check(&a, m)) >= 0) {
		vf_model_free(m);
		return rc;
	}
	if (m->has_arch && (m->arch.known & VF_ARCH_F_LAYERS) &&
	    vf_lora_targets_resolve(&m->arch, &a.setup, &err)) { /* the model's own modules */
		vf_model_free(m);
		return err.code == VF_EUSAGE ? vf_cli_usage("fit", "%s", err.msg) : vf_cli_fail_err(&err);
	}
	if ((rc = by_kind(&a, m, groups, ng)) >= 0) {
		vf_model_free(m);
		return rc;
	}
	size_t ncat = 0;
	const struct vf_gpu_spec *cat = vf_gpu_catalog(&ncat, &err);
	if (!cat) {
		vf_model_free(m);
		return vf_cli_fail_err(&err);
	}
	if ((rc = other_groups(&a, cat, ncat, groups, &ng)) >= 0) {
		vf_model_free(m);
		return rc;
	}
	a.memo = vf_replay_memo_new(); /* NULL: every replay runs */
	if (a.engine)
		rc = fit_serve(&a, m, groups, ng);
	else if (a.search)
		rc = fit_search(&a, m, groups, ng);
	else
		rc = fit_table(&a, m, groups, ng);
	vf_replay_memo_free(a.memo);
	vf_model_free(m);
	return rc;
}

const struct vf_cli_command vf_cmd_fit = {
	.name = "fit",
	.summary = "which GPUs and settings fit a training run, how long, at what cost",
	.usage = usage,
	.options = options,
	.tail = "Exit status: 0 success (also when nothing fits), 1 failure, 2 usage error.\n",
	.run = run,
};
