/* cmd-plan.c - `vramfit plan`: probe (or simulate) the GPUs, decide the
 * tier, find the models, copy the trainer's shipped config into a new run
 * directory and patch it byte-exactly, self-check it, and write plan.md for
 * a person to approve (lib/trainer/plan.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "parse-options.h"
#include "vramfit/base/term.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/report/report.h"
#include "vramfit/trainer/plan.h"
#include "vramfit/trainer/sbatch.h"

static const char usage[] =
	"usage: vramfit plan [options]\n"
	"\n"
	"Plan an LTX-2 training run: probe the GPUs (or simulate them with --gpu),\n"
	"decide the VRAM tier, find the model checkpoint and the Gemma text encoder,\n"
	"copy the trainer's shipped config for the tier to RUN/config.yaml and patch\n"
	"only model.model_path, model.text_encoder_path, data.preprocessed_data_root\n"
	"(RUN/dataset/.precomputed) and output_dir (RUN/outputs) - plus what you ask\n"
	"for (--steps, --training-mode) and what the rules require (full fine-tune:\n"
	"offload_optimizer_during_validation true, quantization null) - byte-exactly;\n"
	"self-check it (as `vramfit check`) and write RUN/plan.md to approve.\n"
	"RUN = WORKSPACE/<mode>-<dataset>-<YYYYMMDD-HHMM>, with dataset/, outputs/,\n"
	"logs/, overfit/. Nothing is created outside RUN (and the workspace root).\n";

struct plan_args {
	struct vf_plan_opts o;
	struct vf_sbatch_opts so;
	int64_t gpus_per_node;
	bool json, dry, list_modes, slurm;
	struct vf_opt_list gpu;
};

#define OPT_T struct plan_args
static const struct vf_option options[] = {
	OPT_DIR("trainer-dir", "DIR", o.trainer_dir,
		"the packages/ltx-trainer checkout (default\n"
		"$LTX_TRAINER_DIR, ./packages/ltx-trainer, then . when\n"
		"it holds configs/)"),
	OPT_TEXT("mode", "MODE", o.mode,
		 "the config family of the checkout: every shipped\n"
		 "configs/<mode>_lora.yaml is a mode (t2v, i2v, v2v_ic,\n"
		 "...; default t2v); a tier whose <mode>_lora_low_vram.yaml\n"
		 "does not ship gets the trainer's own low-VRAM deltas\n"
		 "(t2v_lora.yaml vs t2v_lora_low_vram.yaml of the checkout)"),
	OPT_BOOL("list-modes", list_modes,
		 "list the checkout's modes (config, low-VRAM file, what\n"
		 "each trains, its training_strategy) and exit"),
	OPT_TEXT("dataset", "NAME", o.dataset, "dataset name for the run name (default \"dataset\")"),
	OPT_TEXT("resolution-buckets", "WxHxF[;...]", o.resolution_buckets,
		 "the preprocessing's resolution buckets: the training size of\n"
		 "the estimate (default the quick-start's 960x544x49, assumed)"),
	OPT_TEXT("run-name", "NAME", o.run_name, "the run directory's name"),
	OPT_TEXT("workspace", "DIR", o.workspace,
		 "workspace root (default: first writable of\n"
		 "$LTX_TRAININGS_DIR, /data/ltx-trainings,\n"
		 "/workspace/ltx-trainings, ./projects)"),
	OPT_TEXT("model", "PATH", o.model,
		 "LTX-2 .safetensors checkpoint (default: searched in\n"
		 "$LTX_MODELS_DIR, ~/models, /models for *ltx*2*); never a URL"),
	OPT_TEXT("text-encoder", "PATH", o.text_encoder,
		 "Gemma text encoder directory, or the packed text-encoder\n"
		 ".safetensors of a split pack (default: searched likewise)"),
	OPT_TEXT("video-vae", "PATH", o.video_vae,
		 "split pack: the video VAE file (default: the one beside\n"
		 "a transformer-only --model, found by its tensors)"),
	OPT_TEXT("audio-vae", "PATH", o.audio_vae, "split pack: the audio VAE file (default: likewise)"),
	OPT_TEXT("training-mode", "lora|full", o.training_mode, "LoRA or full fine-tuning (default: the shipped config's)"),
	OPT_INT("steps", "N", o.steps, 1, 1e8, "training steps (default: the shipped config's)"),
	OPT_TEXT("goal", "TEXT", o.goal, "what the run is for (## Goal)"),
	OPT_TEXT("trigger", "WORD", o.trigger, "the trigger word used in the captions"),
	OPT_TEXT("trainer", "NAME", o.trainer, "trainer profile (default ltx2)"),
	OPT_LIST("gpu", "SPEC", gpu,
		 "simulate GPUs instead of probing: h100-80gb,\n"
		 "h100-80gb:4, NAME=MiB (repeatable)"),
	OPT_BOOL("accept-risk", o.accept_risk,
		 "below 32 GB: proceed with the low-VRAM config at your\n"
		 "own risk; likewise write a plan whose estimate says the\n"
		 "training does not fit the GPUs"),
	OPT_BOOL("reuse", o.reuse,
		 "plan into an existing run directory (config.yaml and\n"
		 "plan.md are rewritten; checkpoints are kept)"),
	OPT_BOOL("slurm", slurm,
		 "also write RUN/launch.sbatch: --nodes and --gres=gpu:N\n"
		 "from the GPUs planned for, --time from the estimate\n"
		 "(steps x step time + 25 % + 20 min start-up: the\n"
		 "profile's launch.slurm), logs into RUN/logs/, one\n"
		 "accelerate launcher per node via srun (rank from\n"
		 "$SLURM_NODEID, main address from $SLURM_JOB_NODELIST);\n"
		 "$VRAMFIT_LAUNCH replaces the launcher at run time"),
	OPT_INT("gpus-per-node", "N", gpus_per_node, 1, 1024,
		"with --slurm: GPUs per node (default: the planned GPUs,\n"
		"at most 8)"),
	OPT_TEXT("partition", "P", so.partition, "with --slurm: written as an #SBATCH line"),
	OPT_TEXT("account", "A", so.account, "with --slurm: written as an #SBATCH line"),
	OPT_TEXT("qos", "Q", so.qos, "with --slurm: written as an #SBATCH line"),
	OPT_BOOL("dry-run", dry, "print what would be written; create nothing"),
	OPT_BOOL("json", json,
		 "the plan as JSON (status, tier, gpus, run_dir, config,\n"
		 "launch, patches, warnings, assumptions, check, estimate,\n"
		 "trainer_checkout, model_files, low_vram_deltas, data_dirs)"),
	OPT_END(),
};
#undef OPT_T

static const char tail[] =
	"Exit status: 0 planned, 1 stopped (status \"gated\": GPU below the trainer's\n"
	"minimum, or the estimate's peak over the GPUs' memory, without --accept-risk;\n"
	"run directory exists, model not found or invalid, URL given)\n"
	"or not go (the self-check of the written config fails: the failures are\n"
	"listed first, status \"check-failed\" in --json), 2 usage.\n";

/* --list-modes: the checkout's config families. */
static int print_modes(const struct vf_plan_opts *o, bool json)
{
	struct vf_trainer_modes m;
	struct vf_error err = {0};
	char dir[VF_PLAN_PATH];
	if (vf_plan_list_modes(o, &m, dir, sizeof dir, &err) != VF_OK)
		return vf_cli_fail_err(&err);
	if (json) {
		cJSON *a = cJSON_CreateArray();
		for (size_t i = 0; i < m.n; i++) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "mode", m.v[i].name);
			cJSON_AddStringToObject(e, "config", m.v[i].config);
			cJSON_AddStringToObject(e, "low_vram", m.v[i].low_vram);
			cJSON_AddStringToObject(e, "what", m.v[i].what);
			cJSON_AddStringToObject(e, "strategy", m.v[i].strategy);
			cJSON_AddItemToArray(a, e);
		}
		cJSON *o2 = cJSON_CreateObject();
		cJSON_AddStringToObject(o2, "trainer_dir", dir);
		cJSON_AddItemToObject(o2, "modes", a);
		vf_cli_print_json(o2);
		cJSON_Delete(o2);
	} else {
		printf("%zu modes in %s/configs:\n", m.n, dir);
		for (size_t i = 0; i < m.n; i++)
			printf("  %-18s %-26s %-28s %s [%s]\n", m.v[i].name, m.v[i].config[0] ? m.v[i].config : "-",
			       m.v[i].low_vram[0] ? m.v[i].low_vram : "(low-VRAM: trainer's deltas)", m.v[i].what,
			       m.v[i].strategy);
	}
	vf_modes_release(&m);
	return VF_EXIT_OK;
}

static void print_summary(const struct vf_plan *p, bool dry)
{
	char buf[256];
	printf("%s %s\n", dry ? "vramfit plan (dry run): would create" : "vramfit plan: created",
	       vf_cli_safe(p->run_dir));
	printf("  %-10s %s (%s x %d, %dGB%s)\n", "tier", p->tier.name, p->gpu_name, p->gpu_count,
	       p->gpu_gb, p->simulated ? ", simulated" : "");
	printf("  %-10s %s (from %s; %d key%s patched)\n", "config", vf_cli_safe(p->config_path),
	       vf_cli_safe(p->tier.config_path), p->npatches, p->npatches == 1 ? "" : "s");
	printf("  %-10s %s\n", "plan", vf_cli_safe(p->plan_path));
	printf("  %-10s %s (%s)\n", "model", vf_cli_safe(p->model), vf_cli_safe(p->model_from));
	printf("  %-10s %s (%s)\n", "encoder", vf_cli_safe(p->text_encoder),
	       vf_cli_safe(p->text_encoder_from));
	printf("  %-10s %s\n", "launch", vf_cli_safe(p->launch_line));
	printf("  %-10s %s (%zu failure%s, %zu pending, %zu not checked; %s)\n", "check",
	       p->check.failures ? "FAILED" : "ok", p->check.failures, p->check.failures == 1 ? "" : "s",
	       p->check.pending, p->check.unchecked,
	       p->check.python_checked ? "by the trainer's config class" : "statically");
	if (p->has_estimate) {
		const struct vf_estimate *e = &p->estimate;
		char pk[32], card[32] = "?", st[32] = "unknown";
		vf_fmt_bytes(pk, sizeof pk, (double)e->peak_bytes);
		if (p->gpu_spec)
			vf_fmt_bytes(card, sizeof card, (double)vf_estimate_gpu_bytes(p->gpu_spec));
		if (e->step_seconds > 0)
			vf_fmt_seconds(st, sizeof st, e->step_seconds);
		snprintf(buf, sizeof buf, "peak %s of %s per GPU, step %s", pk, card, st);
		printf("  %-10s %s (an estimate; the sanity check measures it)\n", "estimate", buf);
	} else {
		printf("  %-10s %s\n", "estimate", p->estimate_note);
	}
	for (int i = 0; i < p->nwarnings; i++)
		vf_cli_warn("%s", p->warnings[i]);
}

/* A failing self-check, first of all: the plan is not go. */
static void print_failures(const struct vf_plan *p)
{
	if (!p->check.failures)
		return;
	printf("self-check FAILED (%zu failure%s): this plan is not go\n", p->check.failures,
	       p->check.failures == 1 ? "" : "s");
	for (size_t i = 0; i < p->check.n; i++) {
		const struct vf_check_item *it = &p->check.items[i];
		if (it->level == VF_CHECK_FAIL)
			printf("  fails: %s: %s\n", vf_cli_safe(it->key), vf_cli_safe(it->rule));
	}
	printf("\n");
}

static void print_dry(const struct vf_plan *p)
{
	printf("\nwould create:\n");
	if (p->workspace_created)
		printf("  %s/\n", p->workspace);
	printf("  %s/\n", p->run_dir);
	for (int i = 0; i < p->ndirs; i++)
		printf("  %s/%s/\n", p->run_dir, p->dirs[i]);
	printf("  %s\n  %s\n", p->config_path, p->plan_path);
	printf("\nconfig.yaml = %s with:\n", p->shipped_config);
	for (int i = 0; i < p->npatches; i++)
		printf("  %s: %s -> %s (%s)\n", p->patches[i].key, p->patches[i].before, p->patches[i].after,
		       p->patches[i].reason);
	printf("\n--- plan.md ---\n");
	fwrite(p->plan_md, 1, p->plan_md_len, stdout);
}

/* plan.html beside plan.md (lib/report/report_plan.c): the plan --json
 * object, the estimate's memory at each phase and the GPU's capacity. A
 * failure only costs the page (warned). */
static void write_plan_html(const struct vf_plan *p)
{
	cJSON *d = vf_plan_to_json(p);
	if (!d)
		return;
	cJSON_AddStringToObject(d, "report", "plan");
	if (p->has_estimate) {
		cJSON_AddItemToObject(d, "phases", vf_report_phases_json(&p->estimate));
		cJSON *e = cJSON_GetObjectItemCaseSensitive(d, "estimate");
		if (e)
			cJSON_AddStringToObject(e, "peak_phase", vf_phase_name(p->estimate.peak_phase));
	}
	cJSON *cap = cJSON_AddArrayToObject(d, "capacity");
	if (p->gpu_spec) {
		cJSON *g = cJSON_CreateObject();
		cJSON_AddStringToObject(g, "name", p->gpu_spec->name);
		cJSON_AddNumberToObject(g, "vram_bytes", (double)vf_estimate_gpu_bytes(p->gpu_spec));
		cJSON_AddItemToArray(cap, g);
	}
	struct vf_error err = {0};
	if (vf_report_write_run(d, p->run_dir, "plan.html", &err))
		vf_cli_warn("plan.html not written: %s", err.msg);
	cJSON_Delete(d);
}

/* A plan that stopped: its JSON, or what the existing run holds; the
 * reason as the error. */
static int print_blocked(const struct vf_plan *p, bool json)
{
	int rc;
	if (json) {
		cJSON *j = vf_plan_to_json(p);
		vf_cli_print_json(j);
		cJSON_Delete(j);
	} else if (p->block == VF_PLAN_EXISTS) {
		vf_cli_note("%s holds:", p->run_dir);
		for (int i = 0; i < p->nexisting; i++)
			vf_cli_note("  %s", p->existing[i]);
		for (int i = 0; i < p->nresume; i++)
			vf_cli_note("resume candidate: %s", p->resume[i]);
	}
	rc = vf_cli_fail("%s", p->block_msg);
	return rc;
}

static void print_json_plan(const struct vf_plan *p, bool dry, bool slurm, const struct vf_sbatch_info *si)
{
	cJSON *j = vf_plan_to_json(p);
	cJSON_AddBoolToObject(j, "dry_run", dry);
	if (slurm) {
		cJSON *sj = cJSON_AddObjectToObject(j, "slurm");
		char sp[VF_PLAN_PATH + 32];
		snprintf(sp, sizeof sp, "%s/launch.sbatch", p->run_dir);
		cJSON_AddStringToObject(sj, "script", sp);
		cJSON_AddNumberToObject(sj, "nodes", si->nodes);
		cJSON_AddNumberToObject(sj, "gpus_per_node", si->gpus_per_node);
		if (si->time_s > 0)
			cJSON_AddNumberToObject(sj, "time_limit_s", si->time_s);
		else
			cJSON_AddNullToObject(sj, "time_limit_s");
		cJSON_AddStringToObject(sj, "time_note", si->time_note);
	}
	vf_cli_print_json(j);
	cJSON_Delete(j);
}

static void print_plan(const struct vf_plan *p, bool dry, bool slurm, const struct vf_sbatch_info *si,
		       const struct vf_buf *script)
{
	print_failures(p);
	print_summary(p, dry);
	if (dry)
		print_dry(p);
	if (slurm && dry)
		printf("\n--- %s/launch.sbatch ---\n%s", p->run_dir, script->data ? script->data : "");
	else if (slurm)
		printf("\nlaunch.sbatch: %s/launch.sbatch (%d node%s x %d GPU%s; %s)\n", p->run_dir, si->nodes,
		       si->nodes > 1 ? "s" : "", si->gpus_per_node, si->gpus_per_node > 1 ? "s" : "", si->time_note);
	if (!dry && !p->check.failures)
		printf("\nReview %s and approve it before anything heavy runs.\n", p->plan_path);
}

static int run(int argc, char **argv)
{
	struct plan_args pa;
	memset(&pa, 0, sizeof pa);
	int nargs, prc = vf_opt_parse("plan", options, &pa, argc, argv, 0, &nargs);
	if (prc >= 0)
		return prc;
	if (nargs)
		return vf_cli_usage("plan", "unknown option '%s'", argv[0]);
	struct vf_plan_opts o = pa.o;
	struct vf_sbatch_opts so = pa.so;
	so.gpus_per_node = (int)pa.gpus_per_node;
	bool json = pa.json, dry = pa.dry, list_modes = pa.list_modes, slurm = pa.slurm;
	const char *const *specs = pa.gpu.v;
	int nspecs = pa.gpu.n;

	if (list_modes)
		return print_modes(&o, json);
	if (!slurm && (so.gpus_per_node || so.partition || so.account || so.qos))
		return vf_cli_usage("plan", "--gpus-per-node, --partition, --account and --qos go with --slurm");
	struct vf_error err = {0};
	struct vf_gpu_set gpus;
	vf_gpu_set_init(&gpus);
	vf_status st = VF_OK;
	for (int i = 0; i < nspecs && st == VF_OK; i++)
		st = vf_gpu_set_add_spec(&gpus, specs[i], &err);
	if (st == VF_OK && nspecs == 0)
		st = vf_gpu_probe(&gpus, &err);
	o.simulated = nspecs > 0;
	if (st != VF_OK) {
		vf_gpu_set_release(&gpus);
		return err.code == VF_EUSAGE ? vf_cli_usage("plan", "%s", err.msg) : vf_cli_fail_err(&err);
	}

	struct vf_plan p;
	vf_plan_init(&p);
	st = vf_plan_make(&o, &gpus, &p, &err);
	vf_gpu_set_release(&gpus);
	if (st != VF_OK) {
		vf_plan_release(&p);
		return vf_cli_fail_err(&err);
	}
	int rc = VF_EXIT_OK;
	if (p.block != VF_PLAN_GO) {
		rc = print_blocked(&p, json);
		vf_plan_release(&p);
		return rc;
	}
	if (!dry && vf_plan_write(&p, &err) != VF_OK) {
		vf_plan_release(&p);
		return vf_cli_fail_err(&err);
	}
	struct vf_sbatch_info si = {0};
	struct vf_buf script;
	vf_buf_init(&script, VF_SBATCH_MAX_BYTES);
	if (slurm && (dry ? vf_sbatch_render(&p, &so, &script, &si, &err) : vf_sbatch_write(&p, &so, &si, &err))) {
		vf_buf_release(&script);
		vf_plan_release(&p);
		return vf_cli_fail_err(&err);
	}
	if (!dry)
		write_plan_html(&p);
	if (json)
		print_json_plan(&p, dry, slurm, &si);
	else
		print_plan(&p, dry, slurm, &si, &script);
	if (p.check.failures)
		rc = vf_cli_fail("the self-check of %s fails (%zu failure%s): the plan is not go; fix the "
				 "config (vramfit config set) and run vramfit check %s",
				 p.config_path, p.check.failures, p.check.failures == 1 ? "" : "s", p.run_dir);
	vf_buf_release(&script);
	vf_plan_release(&p);
	return rc;
}

const struct vf_cli_command vf_cmd_plan = {
	.name = "plan",
	.summary = "plan an LTX-2 training run: tier, config, workspace, plan.md",
	.usage = usage,
	.options = options,
	.tail = tail,
	.run = run,
};
