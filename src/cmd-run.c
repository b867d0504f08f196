/* cmd-run.c - `vramfit run RUN_DIR`: the approved plan carried out, stage
 * by stage, resumable: preprocess (the plan's own command, plan.json), the
 * sanity sample, tune (the tune verb itself), train (the winner's
 * config.yaml under lib/tune's supervision, vf_tune_run_one), recovery from
 * an out-of-memory (the cheapest remedy that fits, resumed from the last
 * checkpoint) and the report. The state lives in RUN_DIR/run.json
 * (lib/run); this file parses the options, draws the status line, installs
 * the Ctrl-C handler and prints. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "parse-options.h"
#include "tune-predict.h"
#include "vramfit/base/buf.h"
#include "vramfit/base/json.h"
#include "vramfit/base/rundir.h"
#include "vramfit/base/term.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/report/report.h"
#include "vramfit/run/run.h"
#include "vramfit/trainer/plan.h"
#include "vramfit/trainer/profile.h"
#include "vramfit/tune/slurm.h"
#include "vramfit/tune/store.h"
#include "vramfit/tune/trial.h"
#include "vramfit/tune/tune.h"

extern const struct vf_cli_command vf_cmd_tune;
extern const struct vf_cli_command vf_cmd_report;

struct run_args {
	const char *trainer_dir, *trainer_cmd, *trainer, *from, *gpu, *gpus, *history, *dataset_dir;
	int64_t steps, trial_steps, max_trials, max_recoveries;
	double timeout_s, stall_s, grace_s, memory_mib;
	bool status, json, slurm, quiet, no_check;
};

static const char *const stages[] = {"preprocess", "tune", "train", NULL};

#define OPT_T struct run_args
static const struct vf_option options[] = {
	OPT_DIR("trainer-dir", "D", trainer_dir, "where the trainer runs (default: the plan's, plan.json)"),
	OPT_TEXT("trainer-cmd", "T", trainer_cmd,
		 "the training launch command, {config} the config (default:\n"
		 "the profile's, as plan.md prints it); passed to tune too"),
	OPT_TEXT("trainer", "NAME", trainer, "trainer profile (default ltx2)"),
	OPT_DIR("dataset-dir", "D", dataset_dir,
		"preprocess the dataset of D (its dataset.json, or its one .json,\n"
		".jsonl or .csv file: caption and media_path or video columns,\n"
		"media paths relative to it) instead of RUN_DIR/dataset; kept in\n"
		"run.json, so a resume uses the same; the outputs still go to\n"
		"config.yaml's data root"),
	OPT_INT("steps", "N", steps, 1, 1e9,
		"training steps: optimization.steps of config.yaml, set before\n"
		"the first launch (default: config.yaml's)"),
	OPT_INT("trial-steps", "N", trial_steps, 1, 1e7, "steps per tune trial (tune --steps; default 50)"),
	OPT_INT("max-trials", "N", max_trials, 1, VF_TUNE_MAX_TRIALS, "tune --max-trials"),
	OPT_CHOICE("from", from, stages, "start at this stage (the ones before it are taken as done)"),
	OPT_INT("max-recoveries", "N", max_recoveries, 0, 100,
		"out-of-memory recoveries before giving up (default 2)"),
	OPT_BOOL("status", status, "print the run's status from RUN_DIR/run.json and its logs; run nothing"),
	OPT_BOOL("json", json,
		 "with --status: {\"run_dir\", \"state\" (run.json), \"progress\"\n"
		 "(step, total_steps, loss, step_seconds, peak_bytes, samples)}"),
	OPT_BOOL("slurm", slurm,
		 "train on Slurm: each launch one job of one node (--gres=gpu:N,\n"
		 "N the plan's GPUs) through tune --slurm's backend: sbatch,\n"
		 "squeue, the job-completion record; PREEMPTED or NODE_FAIL\n"
		 "retried once; Ctrl-C runs scancel (SBATCH_* as sbatch reads them);\n"
		 "the trainer's resume key names the checkpoints directory where\n"
		 "the profile says it takes one (LTX-2's model.load_checkpoint), so\n"
		 "a requeued job resumes from the newest checkpoint"),
	OPT_TEXT("gpu", "SPEC", gpu,
		 "the GPU the estimates are for (default: the plan's): the\n"
		 "card a remedy must fit, the predicted step time and peak"),
	OPT_TEXT("gpus", "LIST", gpus, "CUDA_VISIBLE_DEVICES for the trainer"),
	OPT_DOUBLE("timeout", "S", timeout_s, 0.01, 1e9, "wall-clock limit of each child (preprocess, trial, training)"),
	OPT_DOUBLE("stall", "S", stall_s, 0.01, 1e9, "end a child that prints nothing for S seconds"),
	OPT_DOUBLE("grace", "S", grace_s, 0.01, 1e7, "SIGTERM -> SIGKILL delay when ending a child (default 5)"),
	OPT_DOUBLE("memory-limit", "M", memory_mib, 16, 1e9, "limit the trainer's data memory to M MiB (RLIMIT_DATA)"),
	OPT_BOOL("no-check", no_check, "tune --no-check"),
	OPT_TEXT("history", "PATH", history, "the history database (as tune)"),
	OPT_BOOL("quiet", quiet, "no status line"),
	OPT_END(),
};
#undef OPT_T

/* What every stage needs. */
struct run {
	struct run_args a;
	char dir[PATH_MAX];
	char trainer_dir[PATH_MAX];
	cJSON *plan;    /* plan.json */
	cJSON *state;   /* run.json */
	cJSON *configs; /* the profile's configs.json */
	struct vf_trial_patterns *pat;
	struct predict_ctx pc;
	int64_t card_bytes;
	bool poll_gpu, tty;
	double pred_step_s;
	int64_t pred_peak, peak_seen;
	int samples;
	double last_plain, last_count;
};

static struct vf_run_preprocess *volatile g_pp;
static struct vf_tune *volatile g_tune;
static struct vf_tune_backend *volatile g_backend;

static void on_signal(int sig)
{
	(void)sig;
	if (g_pp)
		vf_run_preprocess_interrupt(g_pp);
	if (g_tune)
		vf_tune_interrupt(g_tune);
	if (g_backend)
		g_backend->interrupt(g_backend);
}

static void signals(bool on)
{
	static struct sigaction old_int, old_term, old_hup;
	if (on) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
		sigaction(SIGHUP, &sa, &old_hup); /* the terminal or ssh session gone: as SIGTERM */
	} else {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
	}
}

/* Save the state, naming what failed when it cannot. */
static int save(struct run *r)
{
	struct vf_error err = {0};
	if (vf_run_state_save(r->dir, r->state, &err))
		return vf_cli_fail_err(&err);
	return 0;
}

/* Stop at stage with status and a one-line reason: saved, printed, exit 1. */
static int stop(struct run *r, enum vf_run_stage stage, const char *status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int stop(struct run *r, enum vf_run_stage stage, const char *status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	vf_run_state_set(r->state, stage, status, msg);
	save(r);
	return vf_cli_fail("%s", vf_cli_safe(msg));
}

static void note(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct run *r, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	struct vf_error err = {0};
	if (vf_run_plan_note(r->dir, msg, &err))
		vf_cli_warn("plan.md: Run Log not written: %s", err.msg);
	if (!r->a.quiet)
		vf_cli_note("%s", vf_cli_safe(msg));
}

/* ---- the status line ---------------------------------------------------- */

static void line_end(struct run *r)
{
	if (r->tty && !r->a.quiet)
		fputs("\r\033[K", stderr);
}

/* One status line: on a terminal redrawn in place, else every 10 s. */
static void status_line(struct run *r, double elapsed, const char *text)
{
	if (r->a.quiet)
		return;
	if (r->tty) {
		fprintf(stderr, "\r\033[K%s", text);
	} else if (elapsed - r->last_plain >= 10) {
		r->last_plain = elapsed;
		fprintf(stderr, "vramfit: %s\n", text);
	}
	fflush(stderr);
}

struct pp_ui {
	struct run *r;
	int done, total;
	double elapsed;
};

static void pp_line(void *ctx, const char *line)
{
	struct pp_ui *u = ctx;
	vf_run_progress(line, &u->done, &u->total);
}

static void pp_tick(void *ctx, double elapsed)
{
	struct pp_ui *u = ctx;
	char text[256], eta[32] = "-";
	double rate = elapsed > 0 ? u->done / elapsed : 0;
	if (rate > 0 && u->total > u->done)
		vf_fmt_seconds(eta, sizeof eta, (u->total - u->done) / rate);
	snprintf(text, sizeof text, "preprocess | %d/%d files | %.2f files/s | ETA %s", u->done, u->total, rate, eta);
	status_line(u->r, elapsed, text);
}

/* Files in RUN/outputs/samples (the validation samples written so far). */
static int count_samples(const struct run *r)
{
	char p[PATH_MAX + 32];
	snprintf(p, sizeof p, "%s/outputs/samples", r->dir);
	int n = vf_run_count_files(p);
	return n > 0 ? n : 0;
}

static void train_event(void *ctx, const struct vf_tune_event *ev)
{
	struct run *r = ctx;
	if (ev->kind != VF_TUNE_PROGRESS)
		return;
	if (ev->mem_bytes > 0 && ev->mem_bytes > r->peak_seen) /* 0 or -1: no sample */
		r->peak_seen = ev->mem_bytes;
	if (ev->elapsed_s - r->last_count >= 1) {
		r->last_count = ev->elapsed_s;
		r->samples = count_samples(r);
	}
	char st[32], ps[32] = "-", eta[32] = "-", mem[32] = "-", pk[32] = "-", pp[32] = "-", loss[32] = "-";
	vf_fmt_seconds(st, sizeof st, ev->median_seconds);
	if (r->pred_step_s > 0)
		vf_fmt_seconds(ps, sizeof ps, r->pred_step_s);
	if (ev->median_seconds > 0 && ev->total_steps > ev->step)
		vf_fmt_seconds(eta, sizeof eta, (ev->total_steps - ev->step) * ev->median_seconds);
	if (ev->mem_bytes >= 0)
		vf_fmt_bytes(mem, sizeof mem, (double)ev->mem_bytes);
	if (r->peak_seen >= 0)
		vf_fmt_bytes(pk, sizeof pk, (double)r->peak_seen);
	if (r->pred_peak > 0)
		vf_fmt_bytes(pp, sizeof pp, (double)r->pred_peak);
	if (isfinite(ev->loss))
		snprintf(loss, sizeof loss, "%.4f", ev->loss);
	char text[512];
	snprintf(text, sizeof text,
		 "train | step %d/%d | loss %s | %s/step (pred %s) | ETA %s | mem %s, peak %s (pred %s) | samples %d",
		 ev->step, ev->total_steps, loss, st, ps, eta, mem, pk, pp, r->samples);
	status_line(r, ev->elapsed_s, text);
}

/* ---- preprocess ----------------------------------------------------------- */

/* data.preprocessed_data_root of config.yaml into out; false when unset. */
static bool data_root(const struct run *r, char *out, size_t n)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/config.yaml", r->dir);
	struct vf_yamldoc *d = NULL;
	const char *v = NULL;
	bool ok = vf_yamldoc_load_file(path, &d, NULL) == VF_OK &&
		  vf_yamldoc_get_str(d, "data.preprocessed_data_root", &v, NULL) == VF_OK && v && *v;
	if (ok)
		snprintf(out, n, "%s", v);
	vf_yamldoc_free(d);
	return ok;
}

/* The sanity sample from the preprocessed data; the stage done. */
static int preprocess_done(struct run *r, const char *root, int files)
{
	struct vf_error err = {0};
	int copied = 0;
	cJSON *sweep = NULL;
	char sample[PATH_MAX];
	vf_status st = vf_profile_part(r->a.trainer, "sweep", &sweep, &err);
	if (st == VF_OK)
		st = vf_run_sample_dir(sweep, sample, sizeof sample, &err);
	cJSON_Delete(sweep);
	if (st == VF_OK)
		st = vf_run_sanity_sample(r->dir, root, sample, &copied, &err);
	if (st)
		return stop(r, VF_RUN_PREPROCESS, "failed", "the sanity sample: %s", err.msg);
	cJSON *pp = cJSON_CreateObject();
	cJSON_AddBoolToObject(pp, "done", true);
	cJSON_AddNumberToObject(pp, "files", files);
	cJSON_DeleteItemFromObjectCaseSensitive(r->state, "preprocess");
	cJSON_AddItemToObject(r->state, "preprocess", pp);
	note(r, "preprocess: %d files in %s; the sanity sample (%d files) copied into %s", files, root, copied, sample);
	vf_run_state_set(r->state, VF_RUN_TUNE, "running", "");
	return save(r);
}

static int run_preprocess_child(struct run *r, const char *cmd)
{
	struct pp_ui ui = {.r = r};
	struct vf_run_preprocess pp = {.run_dir = r->dir, .command = cmd, .cwd = r->trainer_dir,
				       .timeout_s = r->a.timeout_s, .stall_s = r->a.stall_s, .grace_s = r->a.grace_s,
				       .on_line = pp_line, .on_tick = pp_tick, .ctx = &ui};
	struct vf_error err = {0};
	r->last_plain = 0;
	g_pp = &pp;
	signals(true);
	vf_status st = vf_run_preprocess(&pp, &err);
	signals(false);
	g_pp = NULL;
	line_end(r);
	if (st)
		return stop(r, VF_RUN_PREPROCESS, "failed", "preprocessing could not start: %s", err.msg);
	if (pp.end == VF_PROC_INTERRUPTED)
		return stop(r, VF_RUN_PREPROCESS, "stopped", "interrupted during preprocessing (no process left); run "
			    "again to continue");
	if (pp.end != VF_PROC_EXITED || pp.status != 0)
		return stop(r, VF_RUN_PREPROCESS, "failed", "preprocessing failed (%s, exit %d): %s; see "
			    "logs/preprocess.log", vf_proc_end_name(pp.end), pp.status, vf_cli_safe(pp.last_line));
	return 0;
}

/* The dataset to preprocess (run.json's dataset_dir, else the plan's
 * file), checked row by row; *cmd the plan's command, or one pointed at
 * that directory with the outputs in root (caller frees *owned). */
static int dataset_command(struct run *r, const char *root, const char **cmd, char **owned)
{
	const cJSON *ppj = cJSON_GetObjectItemCaseSensitive(r->plan, "preprocess");
	const cJSON *pcfg = cJSON_GetObjectItemCaseSensitive(r->configs, "preprocess");
	const char *plan_ds = vf_json_get_str(ppj, "dataset"), *dir = vf_json_get_str(r->state, "dataset_dir");
	const char *pref = vf_json_get_str(pcfg, "dataset");
	char file[PATH_MAX + 256];
	struct vf_error err = {0};
	*owned = NULL;
	if (dir && !plan_ds)
		return stop(r, VF_RUN_PREPROCESS, "failed", "--dataset-dir %s: plan.json names no preprocess.dataset to "
			    "replace (plan again)", dir);
	if (dir && (vf_run_dataset_find(dir, pref && strrchr(pref, '/') ? strrchr(pref, '/') + 1 : pref, file,
					sizeof file, &err) ||
		    vf_run_preprocess_command(*cmd, plan_ds, file, vf_json_get_str(pcfg, "output_flag"), root, owned,
					      &err)))
		return stop(r, VF_RUN_PREPROCESS, "failed", "%s", err.msg);
	if (*owned)
		*cmd = *owned;
	int rows = 0;
	if (dir || plan_ds) {
		if (vf_run_dataset_check_file(dir ? file : plan_ds, &rows, &err))
			return stop(r, VF_RUN_PREPROCESS, "failed", "%s", err.msg);
		if (!r->a.quiet)
			vf_cli_note("preprocess: %s: %d rows, each with its caption and media file", dir ? file : plan_ds,
				    rows);
	}
	return 0;
}

static int stage_preprocess(struct run *r)
{
	char root[PATH_MAX];
	if (!data_root(r, root, sizeof root))
		return stop(r, VF_RUN_PREPROCESS, "failed", "%s/config.yaml: data.preprocessed_data_root: not set",
			    r->dir);
	const cJSON *pp = cJSON_GetObjectItemCaseSensitive(r->state, "preprocess");
	int have = vf_run_count_files(root);
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(pp, "done")) && have > 0) {
		note(r, "preprocess: skipped, its outputs are complete (%d files in %s)", have, root);
		return preprocess_done(r, root, have);
	}
	const char *cmd = vf_json_get_str(cJSON_GetObjectItemCaseSensitive(r->plan, "preprocess"), "command");
	if (!cmd)
		return stop(r, VF_RUN_PREPROCESS, "failed", "the profile names no preprocessing command: preprocess "
			    "by hand into %s, then vramfit run --from tune %s", root, r->dir);
	char *owned = NULL;
	int rc = dataset_command(r, root, &cmd, &owned);
	if (rc == 0) {
		vf_run_state_set(r->state, VF_RUN_PREPROCESS, "running", "");
		rc = save(r);
	}
	if (rc == 0)
		rc = run_preprocess_child(r, cmd);
	free(owned);
	if (rc)
		return rc;
	int files = vf_run_count_files(root);
	if (files <= 0)
		return stop(r, VF_RUN_PREPROCESS, "failed", "preprocessing exited 0 but wrote nothing into %s", root);
	return preprocess_done(r, root, files);
}

/* ---- tune ------------------------------------------------------------------ */

static void add_arg(char **av, int *n, const char *a, const char *b)
{
	av[(*n)++] = (char *)a;
	if (b)
		av[(*n)++] = (char *)b;
}

/* The tune verb itself on the run, with the flags run passes on. */
static int stage_tune(struct run *r)
{
	char *av[40], num[4][32];
	int n = 0;
	add_arg(av, &n, "tune", r->dir);
	add_arg(av, &n, "--trainer-dir", r->trainer_dir);
	const struct run_args *a = &r->a;
	const char *const strs[][2] = {{"--trainer-cmd", a->trainer_cmd}, {"--trainer", a->trainer},
				       {"--gpu", a->gpu}, {"--gpus", a->gpus}, {"--history", a->history}};
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
		if (strs[i][1])
			add_arg(av, &n, strs[i][0], strs[i][1]);
	const double nums[] = {(double)a->trial_steps, (double)a->max_trials, a->timeout_s, a->stall_s};
	const char *const nnames[] = {"--steps", "--max-trials", "--timeout", "--stall"};
	for (int i = 0; i < 4; i++)
		if (nums[i] > 0) {
			snprintf(num[i], sizeof num[i], "%.17g", nums[i]);
			add_arg(av, &n, nnames[i], num[i]);
		}
	char mem[32];
	if (a->memory_mib > 0) {
		snprintf(mem, sizeof mem, "%.17g", a->memory_mib);
		add_arg(av, &n, "--memory-limit", mem);
	}
	if (a->no_check)
		add_arg(av, &n, "--no-check", NULL);
	if (a->slurm)
		add_arg(av, &n, "--slurm", NULL);
	if (a->quiet)
		add_arg(av, &n, "--quiet", NULL);
	av[n] = NULL;
	vf_run_state_set(r->state, VF_RUN_TUNE, "running", "");
	if (save(r))
		return 1;
	fflush(stdout);
	int rc = vf_cmd_tune.run(n, av);
	fflush(stdout);
	if (rc != 0 && vf_cli_tune_interrupted())
		return stop(r, VF_RUN_TUNE, "stopped", "interrupted during tune (no process left); run again to resume "
			    "the sweep");
	if (rc != 0)
		return stop(r, VF_RUN_TUNE, "failed", "tune did not finish (exit %d, above); run again to resume it", rc);
	note(r, "tune: done; config.yaml holds the winner (autotune.log)");
	vf_run_state_set(r->state, VF_RUN_TRAIN, "running", "");
	return save(r);
}

/* ---- train and recover ------------------------------------------------------ */

/* config.yaml: one key set to YAML text; the error printed. */
static int config_set1(struct run *r, const char *key, const char *yaml)
{
	cJSON *set = cJSON_CreateObject();
	cJSON_AddStringToObject(set, key, yaml);
	struct vf_error err = {0};
	vf_status st = vf_run_config_set(r->dir, set, &err);
	cJSON_Delete(set);
	return st ? vf_cli_fail_err(&err) : 0;
}

/* The config as it is now. Caller owns. */
static struct vf_yamldoc *config_doc(const struct run *r)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/config.yaml", r->dir);
	struct vf_yamldoc *d = NULL;
	return vf_yamldoc_load_file(path, &d, NULL) == VF_OK ? d : NULL;
}

/* --steps (once), the total steps, the prediction for this config. */
static int train_prepare(struct run *r, int *total)
{
	double was = 0;
	if (r->a.steps > 0 && vf_json_get_double(r->state, "steps", &was) && was != (double)r->a.steps)
		vf_cli_warn("--steps %lld not applied: optimization.steps was set to %.0f before the first launch "
			    "(change it with vramfit config set)", (long long)r->a.steps, was);
	if (r->a.steps > 0 && !cJSON_GetObjectItemCaseSensitive(r->state, "steps")) {
		char v[32];
		snprintf(v, sizeof v, "%lld", (long long)r->a.steps);
		if (config_set1(r, "optimization.steps", v))
			return 1;
		cJSON_AddNumberToObject(r->state, "steps", (double)r->a.steps);
		note(r, "train: optimization.steps set to %lld (--steps)", (long long)r->a.steps);
	}
	struct vf_yamldoc *d = config_doc(r);
	int64_t steps = 0;
	if (!d || vf_yamldoc_get_int(d, "optimization.steps", &steps, NULL) != VF_OK || steps < 1) {
		vf_yamldoc_free(d);
		return stop(r, VF_RUN_TRAIN, "failed", "%s/config.yaml: optimization.steps: expected a positive "
			    "integer", r->dir);
	}
	*total = (int)steps;
	struct vf_estimate e;
	r->pred_step_s = -1;
	r->pred_peak = -1;
	if (vf_cli_predict_estimate(&r->pc, d, &e, NULL) == VF_OK) {
		r->pred_peak = e.peak_bytes;
		r->pred_step_s = e.step_seconds;
	}
	vf_yamldoc_free(d);
	return 0;
}

/* The trainer's resume key (the profile's checkpoints.resume_key, checked
 * against the checkout's schema: vf_run_resume_load) to the newest
 * checkpoint when there is one; from gets its path or "". With --slurm,
 * where the profile says the key takes a directory (resume_takes_dir),
 * it names the checkpoints directory instead (the trainer then takes its
 * latest when it starts), so a job that Slurm requeues after a preemption
 * or a node failure, or that the backend submits again, resumes from the
 * newest checkpoint written meanwhile, not from this launch's. */
static int set_resume(struct run *r, char *from, size_t n)
{
	from[0] = '\0';
	if (!vf_run_last_checkpoint(r->dir, r->configs, from, n))
		return 0;
	struct vf_run_resume rs;
	struct vf_error err = {0};
	if (vf_run_resume_load(r->trainer_dir, r->configs, &rs, &err))
		return stop(r, VF_RUN_TRAIN, "failed", "cannot resume from %s: %s", from, err.msg);
	if (rs.unchecked[0])
		vf_cli_warn("%s not checked against the trainer's schema (%s)", rs.key, vf_cli_safe(rs.unchecked));
	char value[PATH_MAX + 256];
	vf_run_resume_value(&rs, from, r->a.slurm, value, sizeof value);
	cJSON *s = cJSON_CreateString(value);
	char *yaml = cJSON_PrintUnformatted(s); /* a JSON string is a YAML double-quoted one */
	int rc = yaml ? config_set1(r, rs.key, yaml) : vf_cli_fail("out of memory");
	cJSON_free(yaml);
	cJSON_Delete(s);
	return rc;
}

static void record_attempt(struct run *r, int attempt, const char *log, const struct vf_trial *t, int total,
			   const char *from)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "attempt", attempt);
	cJSON_AddStringToObject(o, "log", log);
	cJSON_AddStringToObject(o, "outcome", vf_outcome_name(t->outcome));
	cJSON_AddStringToObject(o, "evidence", t->evidence);
	cJSON_AddNumberToObject(o, "exit", t->status);
	cJSON_AddNumberToObject(o, "steps_done", t->steps_done);
	cJSON_AddNumberToObject(o, "total_steps", total);
	cJSON_AddNumberToObject(o, "step_seconds", t->step_seconds);
	cJSON_AddNumberToObject(o, "predicted_step_seconds", r->pred_step_s);
	vf_json_add_i64_or_null(o, "peak_bytes", t->peak_bytes, t->peak_bytes > 0); /* unknown: null, never 0 or -1 */
	cJSON_AddStringToObject(o, "peak_source", t->peak_bytes > 0 ? t->peak_source : "");
	vf_json_add_i64_or_null(o, "predicted_peak_bytes", r->pred_peak, r->pred_peak >= 0);
	cJSON_AddNumberToObject(o, "wall_seconds", t->wall_seconds);
	if (from[0])
		cJSON_AddStringToObject(o, "resumed_from", from);
	else
		cJSON_AddNullToObject(o, "resumed_from");
	vf_run_state_append(r->state, "attempts", o);
}

/* The launch template: --trainer-cmd, else the profile's for the plan's
 * GPUs (configs.json launch: one GPU; several by the trainer's rules:
 * DDP through accelerate launch for a LoRA, the checkout's FSDP config for
 * a full fine-tune; the plan set the accumulation for the GPU count). */
static const char *launch_template(const struct run *r, int *ngpus)
{
	double n = 1;
	vf_json_get_double(cJSON_GetObjectItemCaseSensitive(r->plan, "gpus"), "count", &n);
	*ngpus = n >= 1 && n < 1e4 ? (int)n : 1;
	if (r->a.trainer_cmd || *ngpus <= 1)
		return r->a.trainer_cmd; /* NULL: the profile's single_gpu */
	const cJSON *launch = cJSON_GetObjectItemCaseSensitive(r->configs, "launch");
	const char *mode = vf_json_get_str(r->plan, "training_mode");
	return vf_json_get_str(launch, mode && strcmp(mode, "full") == 0 ? "multi_gpu_full" : "multi_gpu_lora");
}

static void task_done(void *ctx, struct vf_tune_task *task)
{
	(void)ctx;
	(void)task;
}

/* --slurm: the launch as a one-task job of tune's Slurm backend; its log
 * classified with the same rules. */
static int train_once_slurm(struct run *r, int attempt, int total, const char *log, struct vf_trial *t)
{
	int ngpus;
	const char *tmpl = launch_template(r, &ngpus);
	if (!tmpl)
		tmpl = vf_json_get_str(cJSON_GetObjectItemCaseSensitive(r->configs, "launch"), "single_gpu");
	struct vf_error err = {0};
	struct vf_rundir rd; /* the job writes its log into RUN/logs: there before it starts */
	vf_status mk = vf_rundir_open(&rd, r->dir, 0, &err);
	if (mk == VF_OK)
		mk = vf_rundir_mkdir(&rd, "logs", &err);
	vf_rundir_close(&rd);
	if (mk)
		return stop(r, VF_RUN_TRAIN, "failed", "%s", err.msg);
	struct vf_slurm_opts so = {0};
	struct vf_tune_backend *be = tmpl ? vf_tune_backend_slurm(1, &so) : NULL;
	if (!be)
		return vf_cli_fail("%s", tmpl ? "out of memory" : "the profile names no launch command");
	char config[PATH_MAX + 32], logp[PATH_MAX + 64];
	snprintf(config, sizeof config, "%s/config.yaml", r->dir);
	snprintf(logp, sizeof logp, "%s/%s", r->dir, log);
	struct vf_tune_task task = {.index = attempt, .config = config, .log = logp, .status = -1};
	struct vf_tune_launch l = {.run_dir = r->dir, .cmd = tmpl, .trainer_dir = r->trainer_dir, .num_gpus = ngpus};
	g_backend = be;
	signals(true);
	vf_status st = be->run(be, &l, &task, 1, task_done, NULL, &err);
	signals(false);
	g_backend = NULL;
	struct vf_trial_log tl;
	vf_trial_log_init(&tl, r->pat);
	vf_trial_log_file(&tl, logp, NULL);
	struct vf_trial_exit ex = {.status = task.status, .end = be->interrupted ? VF_PROC_INTERRUPTED : task.end,
				   .expect_steps = total, .sample = -1};
	struct vf_trial_verdict v;
	vf_trial_classify(&tl, &ex, &v);
	t->outcome = v.outcome;
	snprintf(t->evidence, sizeof t->evidence, "%s%s%s", v.evidence, task.note[0] ? "; " : "", task.note);
	t->status = task.status;
	t->steps_done = tl.last_step;
	t->step_seconds = vf_trial_log_step_seconds(&tl);
	t->peak_bytes = t->peak_trainer_bytes = tl.peak_bytes > 0 ? tl.peak_bytes : -1;
	t->wall_seconds = task.wall_s;
	vf_trial_log_release(&tl);
	vf_tune_backend_free(be);
	if (st)
		return stop(r, VF_RUN_TRAIN, "failed", "the Slurm job could not run: %s", err.msg);
	return 0;
}

/* One launch of the training: config.yaml under lib/tune's supervision. */
static int train_once(struct run *r, int attempt, int total, const char *log, struct vf_trial *t)
{
	int ngpus;
	const char *tmpl = launch_template(r, &ngpus);
	struct vf_tune_opts o = {.run_dir = r->dir, .trainer = r->a.trainer, .trainer_dir = r->trainer_dir,
				 .trainer_cmd = tmpl, .num_gpus = ngpus, .timeout_s = r->a.timeout_s,
				 .stall_s = r->a.stall_s, .grace_s = r->a.grace_s,
				 .mem_limit_bytes = (uint64_t)(r->a.memory_mib * 1024 * 1024), .gpus = r->a.gpus,
				 .poll_gpu = r->poll_gpu, .on_event = train_event, .event_ctx = r};
	vf_trial_init(t);
	t->index = attempt;
	snprintf(t->change, sizeof t->change, "training");
	if (r->a.slurm)
		return train_once_slurm(r, attempt, total, log, t);
	char config[PATH_MAX + 32];
	snprintf(config, sizeof config, "%s/config.yaml", r->dir);
	struct vf_tune *tn = vf_tune_new();
	if (!tn)
		return vf_cli_fail("out of memory");
	struct vf_error err = {0};
	r->peak_seen = -1;
	r->last_plain = r->last_count = 0;
	g_tune = tn;
	signals(true);
	vf_status st = vf_tune_run_one(tn, &o, config, log, total, t, &err);
	signals(false);
	g_tune = NULL;
	vf_tune_free(tn);
	line_end(r);
	if (st)
		return stop(r, VF_RUN_TRAIN, "failed", "the training could not start: %s", err.msg);
	return 0;
}

/* The triage of a failed training, as vramfit triage prints it, to stderr. */
static void print_triage(const struct run *r, const struct vf_trial *t, const char *log)
{
	struct vf_yamldoc *d = config_doc(r);
	cJSON *rem = vf_trial_remedies(r->pat, t->outcome, d);
	fprintf(stderr, "vramfit: training: outcome %s at step %d, exit %d (log: %s)\n", vf_outcome_name(t->outcome),
		t->steps_done, t->status, log);
	fprintf(stderr, "vramfit:   evidence: %s\n", vf_cli_safe(t->evidence));
	const cJSON *it;
	cJSON_ArrayForEach(it, rem)
		if (cJSON_IsString(it))
			fprintf(stderr, "vramfit:   remedy: %s\n", vf_cli_safe(it->valuestring));
	cJSON_Delete(rem);
	vf_yamldoc_free(d);
}

/* "key: value, key: value" of a remedy's set. */
static void set_words(const cJSON *set, char *out, size_t n)
{
	out[0] = '\0';
	const cJSON *kv;
	cJSON_ArrayForEach(kv, set)
	{
		size_t l = strlen(out);
		snprintf(out + l, n - l, "%s%s: %s", l ? ", " : "", kv->string, kv->valuestring);
	}
}

/* The recovery in the trial history (its recoveries table); a history
 * that cannot be written costs a warning, not the run. */
static void store_recovery(const struct run *r, const struct vf_trial *t, const struct vf_run_remedy *rm)
{
	struct vf_store *db = NULL;
	struct vf_error err = {0};
	char *settings = cJSON_PrintUnformatted(rm->set);
	struct vf_store_recovery rec = {.run_dir = r->dir, .attempt = t->index, .step = t->steps_done,
					.cause = vf_outcome_name(t->outcome), .evidence = t->evidence,
					.change = rm->text, .settings = settings ? settings : "{}",
					.predicted_peak_bytes = rm->predicted_peak_bytes};
	if (vf_store_open(r->a.history, &db, &err) || vf_store_put_recovery(db, &rec, &err))
		vf_cli_warn("the recovery is not in the history: %s", err.msg);
	vf_store_close(db);
	cJSON_free(settings);
}

static void record_recovery(struct run *r, const struct vf_trial *t, const struct vf_run_remedy *rm, int nrec)
{
	store_recovery(r, t, rm);
	char words[512], pk[32] = "", card[32] = "";
	set_words(rm->set, words, sizeof words);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "attempt", t->index);
	cJSON_AddNumberToObject(o, "step", t->steps_done);
	cJSON_AddStringToObject(o, "cause", vf_outcome_name(t->outcome));
	cJSON_AddStringToObject(o, "evidence", t->evidence);
	cJSON_AddStringToObject(o, "change", rm->text);
	cJSON_AddItemToObject(o, "set", cJSON_Duplicate(rm->set, 1));
	cJSON_AddNumberToObject(o, "predicted_peak_bytes", (double)rm->predicted_peak_bytes);
	cJSON_AddStringToObject(o, "estimate", rm->predicted_peak_bytes >= 0 ? "fits" : "no estimate");
	cJSON_AddStringToObject(o, "passed_over", rm->skipped);
	vf_run_state_append(r->state, "recoveries", o);
	if (rm->predicted_peak_bytes >= 0)
		vf_fmt_bytes(pk, sizeof pk, (double)rm->predicted_peak_bytes);
	if (r->card_bytes > 0)
		vf_fmt_bytes(card, sizeof card, (double)r->card_bytes);
	note(r, "recovery %d: %s at step %d of attempt %d (%s); applied `%s` to config.yaml, the cheapest remedy "
	     "not already set that %s%s%s%s; training resumes from the last checkpoint", nrec,
	     vf_outcome_name(t->outcome), t->steps_done, t->index, t->evidence, words,
	     rm->predicted_peak_bytes >= 0 ? "the estimate says fits: " : "the estimator has no figure for (not checked)",
	     pk, card[0] && pk[0] ? " of " : "", card[0] && pk[0] ? card : "");
}

/* An out-of-memory within --max-recoveries: the remedy applied. 0 to go
 * on, else the exit code. */
static int recover(struct run *r, const struct vf_trial *t, const char *log)
{
	int nrec = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r->state, "recoveries"));
	int max = r->a.max_recoveries >= 0 ? (int)r->a.max_recoveries : 2;
	if (t->outcome != VF_OUTCOME_OOM || nrec >= max) {
		print_triage(r, t, log);
		return stop(r, VF_RUN_TRAIN, "failed", "training %s at step %d%s; no automatic change: fix it and run "
			    "again (it resumes from the last checkpoint)", vf_outcome_name(t->outcome), t->steps_done,
			    t->outcome == VF_OUTCOME_OOM ? " after --max-recoveries recoveries" : "");
	}
	struct vf_yamldoc *d = config_doc(r);
	struct vf_run_remedy rm;
	struct vf_error err = {0};
	vf_status st = d ? vf_run_pick_remedy(r->pat, t->outcome, d, vf_cli_predict_peak, &r->pc, r->card_bytes, &rm,
					      &err)
			 : vf_error_set(&err, VF_ERR, "%s/config.yaml: cannot be read", r->dir);
	vf_yamldoc_free(d);
	if (st) {
		print_triage(r, t, log);
		return stop(r, VF_RUN_TRAIN, "failed", "training out of memory at step %d: %s", t->steps_done, err.msg);
	}
	st = vf_run_config_set(r->dir, rm.set, &err);
	if (st == VF_OK)
		record_recovery(r, t, &rm, nrec + 1);
	cJSON_Delete(rm.set);
	if (st)
		return stop(r, VF_RUN_TRAIN, "failed", "recovery: %s", err.msg);
	return save(r);
}

/* One attempt: resume point, launch, record. *again: a recovery was applied. */
static int train_attempt(struct run *r, int total, bool *again)
{
	*again = false;
	int attempt = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r->state, "attempts")) + 1;
	char from[PATH_MAX + 256], log[64];
	snprintf(log, sizeof log, "logs/train-%d.log", attempt);
	int rc = set_resume(r, from, sizeof from);
	if (rc)
		return rc;
	note(r, "train: attempt %d%s%s; log %s", attempt, from[0] ? ", resuming from " : " from step 0",
	     from, log);
	cJSON_DeleteItemFromObjectCaseSensitive(r->state, "log");
	cJSON_AddStringToObject(r->state, "log", log);
	vf_run_state_set(r->state, VF_RUN_TRAIN, "running", "");
	if ((rc = save(r)))
		return rc;
	struct vf_trial t;
	if ((rc = train_once(r, attempt, total, log, &t)))
		return rc;
	record_attempt(r, attempt, log, &t, total, from);
	if (t.outcome == VF_OUTCOME_INTERRUPTED)
		return stop(r, VF_RUN_TRAIN, "stopped", "interrupted at step %d (no process left); run again to resume "
			    "from the last checkpoint", t.steps_done);
	if (t.outcome == VF_OUTCOME_OK) {
		note(r, "train: finished, %d steps (attempt %d)", total, attempt);
		vf_run_state_set(r->state, VF_RUN_DONE, "done", "");
		return save(r);
	}
	if ((rc = recover(r, &t, log)))
		return rc;
	*again = true;
	return 0;
}

static int stage_train(struct run *r)
{
	int total = 0, rc = train_prepare(r, &total);
	bool again = true;
	while (rc == 0 && again) {
		rc = train_attempt(r, total, &again);
		if (rc == 0 && again && (rc = train_prepare(r, &total)) != 0)
			break;
	}
	return rc;
}

/* ---- status --------------------------------------------------------------- */

/* The current attempt's progress as JSON (null when no log). */
static cJSON *progress_json(const struct run *r, const char *log)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", r->dir, log ? log : "");
	struct vf_trial_log tl;
	vf_trial_log_init(&tl, r->pat);
	cJSON *o = NULL;
	if (log && vf_trial_log_file(&tl, path, NULL) == VF_OK) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "log", log);
		cJSON_AddNumberToObject(o, "step", tl.last_step);
		cJSON_AddNumberToObject(o, "total_steps", tl.total_steps);
		double st = vf_trial_log_step_seconds(&tl);
		vf_json_add_i64_or_null(o, "peak_bytes", tl.peak_bytes, tl.peak_bytes >= 0);
		if (isfinite(tl.last_loss))
			cJSON_AddNumberToObject(o, "loss", tl.last_loss);
		else
			cJSON_AddNullToObject(o, "loss");
		if (st > 0)
			cJSON_AddNumberToObject(o, "step_seconds", st);
		else
			cJSON_AddNullToObject(o, "step_seconds");
		cJSON_AddNumberToObject(o, "samples", count_samples(r));
	}
	vf_trial_log_release(&tl);
	return o ? o : cJSON_CreateNull();
}

/* The current attempt's progress, read from its log. */
static void print_progress(const struct run *r, const char *log)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", r->dir, log);
	struct vf_trial_log tl;
	vf_trial_log_init(&tl, r->pat);
	if (vf_trial_log_file(&tl, path, NULL) == VF_OK) {
		char st[32], pk[32] = "-", loss[32] = "-";
		vf_fmt_seconds(st, sizeof st, vf_trial_log_step_seconds(&tl));
		if (tl.peak_bytes >= 0)
			vf_fmt_bytes(pk, sizeof pk, (double)tl.peak_bytes);
		if (isfinite(tl.last_loss))
			snprintf(loss, sizeof loss, "%.4f", tl.last_loss);
		printf("  %-11s step %d/%d | loss %s | %s/step | trainer's peak %s | samples %d (%s)\n", "training",
		       tl.last_step, tl.total_steps, loss, st, pk, count_samples(r), log);
	}
	vf_trial_log_release(&tl);
}

/* A log name of the state that is one of the run's logs. */
static const char *state_log(const cJSON *s)
{
	const char *log = vf_json_get_str(s, "log");
	return log && strncmp(log, "logs/", 5) == 0 && !strstr(log, "..") ? log : NULL;
}

static int print_status(const struct run *r)
{
	const cJSON *s = r->state, *it;
	if (r->a.json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "run_dir", r->dir);
		cJSON_AddItemToObject(o, "state", cJSON_Duplicate(s, 1));
		cJSON_AddItemToObject(o, "progress", progress_json(r, state_log(s)));
		vf_cli_print_json(o);
		cJSON_Delete(o);
		return 0;
	}
	printf("vramfit run %s\n", vf_cli_safe(r->dir));
	printf("  %-11s %s (%s)\n", "stage", vf_run_stage_name(vf_run_state_stage(s)),
	       vf_cli_safe(vf_json_get_str(s, "status") ? vf_json_get_str(s, "status") : "?"));
	const char *nt = vf_json_get_str(s, "note");
	if (nt && *nt)
		printf("  %-11s %s\n", "note", vf_cli_safe(nt));
	const cJSON *pp = cJSON_GetObjectItemCaseSensitive(s, "preprocess");
	double files;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(pp, "done")) && vf_json_get_double(pp, "files", &files))
		printf("  %-11s done, %.0f files\n", "preprocess", files);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(s, "attempts"))
	{
		double a = 0, step = 0, total = 0;
		vf_json_get_double(it, "attempt", &a);
		vf_json_get_double(it, "steps_done", &step);
		vf_json_get_double(it, "total_steps", &total);
		printf("  %-11s %.0f: %s at step %.0f/%.0f%s%s\n", "attempt", a, vf_cli_safe(vf_json_get_str(it, "outcome")),
		       step, total, vf_json_get_str(it, "resumed_from") ? ", resumed from " : "",
		       vf_cli_safe(vf_json_get_str(it, "resumed_from") ? vf_json_get_str(it, "resumed_from") : ""));
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(s, "recoveries"))
	{
		double step = 0;
		vf_json_get_double(it, "step", &step);
		char words[512];
		set_words(cJSON_GetObjectItemCaseSensitive(it, "set"), words, sizeof words);
		printf("  %-11s %s at step %.0f -> %s\n", "recovery", vf_cli_safe(vf_json_get_str(it, "cause")), step,
		       vf_cli_safe(words));
	}
	if (state_log(s))
		print_progress(r, state_log(s));
	return 0;
}

/* ---- setup ---------------------------------------------------------------- */

static int parse(int argc, char **argv, struct run_args *a, const char **dir)
{
	memset(a, 0, sizeof *a);
	a->max_recoveries = -1;
	int n, rc = vf_opt_parse("run", options, a, argc, argv, 0, &n);
	if (rc >= 0)
		return rc;
	if (!a->trainer)
		a->trainer = VF_PROFILE_DEFAULT;
	if (n > 1)
		return vf_cli_usage("run", "one RUN_DIR only (got '%s' and '%s')", argv[0], argv[1]);
	if (n == 0)
		return vf_cli_usage("run", "missing RUN_DIR (the run workspace made by vramfit plan)");
	*dir = argv[0];
	if (a->json && !a->status)
		return vf_cli_usage("run", "--json goes with --status (the run itself prints its progress on stderr)");
	return -1;
}

/* RUN_DIR, plan.json, run.json, the trainer directory. */
static int open_run(struct run *r, const char *dir)
{
	struct vf_rundir rd;
	struct vf_error err = {0};
	if (vf_rundir_open(&rd, dir, 0, &err))
		return vf_cli_fail_err(&err);
	vf_rundir_close(&rd);
	if (!realpath(dir, r->dir))
		return vf_cli_fail("%s: no such run directory", dir);
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/%s", r->dir, VF_RUN_PLAN_FILE);
	struct vf_buf b;
	vf_buf_init(&b, 8u << 20);
	struct stat sb;
	if (stat(path, &sb) != 0)
		return vf_cli_fail("%s: not a plan workspace: no %s (vramfit plan writes it with plan.md)", dir,
				   VF_RUN_PLAN_FILE);
	vf_status st = vf_buf_read_file(&b, path, 8u << 20, &err);
	r->plan = st == VF_OK ? cJSON_ParseWithLength(b.data ? b.data : "", b.len) : NULL;
	vf_buf_release(&b);
	if (st)
		return vf_cli_fail_err(&err);
	if (!cJSON_IsObject(r->plan))
		return vf_cli_fail("%s: not valid JSON (plan again to rewrite it)", path);
	if (vf_run_state_load(r->dir, &r->state, &err))
		return vf_cli_fail_err(&err);
	const char *td = r->a.trainer_dir ? r->a.trainer_dir : vf_json_get_str(r->plan, "trainer_dir");
	if (!td || !realpath(td, r->trainer_dir))
		return vf_cli_fail("%s: trainer directory: not found (--trainer-dir D)", td ? td : "(plan.json has none)");
	return -1;
}

/* The GPU the estimates are for: --gpu, else the plan's; and whether
 * this machine's GPUs can be polled. */
static int use_gpu(struct run *r)
{
	char spec[96];
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(r->plan, "gpus");
	const char *id = vf_json_get_str(g, "catalog_id");
	double count = 1;
	vf_json_get_double(g, "count", &count);
	snprintf(spec, sizeof spec, "%s:%.0f", id ? id : "", count);
	const char *want = r->a.gpu ? r->a.gpu : id ? spec : NULL;
	struct vf_gpu_set gs;
	struct vf_error err = {0};
	vf_gpu_set_init(&gs);
	if (want && vf_gpu_set_add_spec(&gs, want, &err) == VF_OK && gs.count > 0) {
		r->pc.spec = gs.gpus[0].catalog_id[0] ? vf_gpu_catalog_find(gs.gpus[0].catalog_id) : NULL;
		r->pc.gpus = (int)gs.count;
		r->card_bytes = gs.gpus[0].memory_total_mib * 1024 * 1024;
	} else if (r->a.gpu) {
		vf_gpu_set_release(&gs);
		return vf_cli_usage("run", "--gpu: %s", err.msg);
	}
	vf_gpu_set_release(&gs);
	vf_gpu_set_init(&gs);
	if (vf_gpu_probe(&gs, NULL) == VF_OK)
		r->poll_gpu = gs.count > 0 && (gs.source == VF_GPU_NVML || gs.source == VF_GPU_SMI);
	vf_gpu_set_release(&gs);
	const char *buckets = vf_json_get_str(cJSON_GetObjectItemCaseSensitive(r->plan, "preprocess"),
					      "resolution_buckets");
	if (buckets)
		vf_plan_largest_bucket(buckets, r->pc.train_dims, NULL);
	return -1;
}

/* The report page: vramfit report RUN_DIR (the training section from
 * run.json). A failure only costs the page. */
static void write_report(const struct run *r)
{
	char *av[] = {"report", (char *)r->dir, NULL};
	fflush(stdout);
	if (vf_cmd_report.run(2, av) != 0)
		vf_cli_warn("report.html not written (above)");
}

/* --dataset-dir into run.json (absolute), so a resume uses the same; a
 * different one once the dataset is preprocessed needs --from preprocess. */
static int dataset_arg(struct run *r)
{
	char abs[PATH_MAX];
	if (!r->a.dataset_dir)
		return -1;
	if (!realpath(r->a.dataset_dir, abs))
		return vf_cli_fail("%s: --dataset-dir: no such directory", r->a.dataset_dir);
	const char *was = vf_json_get_str(r->state, "dataset_dir");
	bool from_pp = r->a.from && strcmp(r->a.from, "preprocess") == 0;
	if (vf_run_state_stage(r->state) != VF_RUN_PREPROCESS && !from_pp && (!was || strcmp(was, abs) != 0))
		return vf_cli_fail("%s/run.json: the dataset was preprocessed from %s; to use --dataset-dir %s, run "
				   "again with --from preprocess", r->dir, was ? was : "RUN_DIR/dataset", abs);
	cJSON_DeleteItemFromObjectCaseSensitive(r->state, "dataset_dir");
	cJSON_AddStringToObject(r->state, "dataset_dir", abs);
	return -1;
}

/* --from: the stages before it are taken as done. */
static void start_from(struct run *r)
{
	enum vf_run_stage s;
	if (!r->a.from || !vf_run_stage_parse(r->a.from, &s))
		return;
	if (s == VF_RUN_PREPROCESS)
		cJSON_DeleteItemFromObjectCaseSensitive(r->state, "preprocess");
	vf_run_state_set(r->state, s, "stopped", "");
}

static int stages_run(struct run *r)
{
	int rc = 0;
	if (vf_run_state_stage(r->state) == VF_RUN_DONE &&
	    (r->a.steps > 0 || r->a.trial_steps > 0 || r->a.max_recoveries >= 0))
		/* the options of stages that will not run: said, not silently dropped */
		vf_cli_warn("--steps, --trial-steps and --max-recoveries not applied: the run is done (its "
			    "state in %s/run.json); plan a new run to train again", r->dir);
	for (enum vf_run_stage s; rc == 0 && (s = vf_run_state_stage(r->state)) != VF_RUN_DONE;) {
		if (!r->a.quiet)
			vf_cli_note("run: stage %s", vf_run_stage_name(s));
		rc = s == VF_RUN_PREPROCESS ? stage_preprocess(r) : s == VF_RUN_TUNE ? stage_tune(r) : stage_train(r);
	}
	if (rc == 0) {
		write_report(r);
		if (!r->a.quiet)
			vf_cli_note("run: done; trained weights in %s/outputs, report %s/report.html", r->dir, r->dir);
	}
	return rc;
}

static int run(int argc, char **argv)
{
	struct run *r = calloc(1, sizeof *r);
	if (!r)
		return vf_cli_fail("out of memory");
	const char *dir = NULL;
	struct vf_error err = {0};
	int rc = parse(argc, argv, &r->a, &dir);
	if (rc < 0)
		rc = open_run(r, dir);
	if (rc < 0 && (vf_profile_part(r->a.trainer, "configs", &r->configs, &err) ||
		       vf_trial_patterns_load(r->a.trainer, &r->pat, &err)))
		rc = vf_cli_fail_err(&err);
	r->pc.configs = r->configs;
	if (rc < 0 && r->a.status)
		rc = print_status(r);
	if (rc < 0 && vf_rundir_lock(r->dir, "vramfit run", &err) != VF_OK) /* one command per run at a time */
		rc = vf_cli_fail_err(&err);
	if (rc < 0)
		rc = use_gpu(r);
	if (rc < 0)
		rc = dataset_arg(r);
	/* a history tune and the recoveries could not write (another
	 * program's database): refused now, not after the preprocessing */
	if (rc < 0 && vf_run_state_stage(r->state) != VF_RUN_DONE && vf_store_check(r->a.history, &err))
		rc = vf_cli_fail_err(&err);
	if (rc < 0) {
		const char *term = getenv("TERM");
		r->tty = isatty(2) && !(term && strcmp(term, "dumb") == 0);
		start_from(r);
		rc = stages_run(r);
	}
	cJSON_Delete(r->plan);
	cJSON_Delete(r->state);
	cJSON_Delete(r->configs);
	vf_trial_patterns_free(r->pat);
	free(r);
	return rc;
}

const struct vf_cli_command vf_cmd_run = {
	.name = "run",
	.summary = "carry out the approved plan: preprocess, tune, train, recover from OOM, report",
	.usage =
		"usage: vramfit run RUN_DIR [options]\n"
		"\n"
		"Run the plan of RUN_DIR (made by vramfit plan) stage by stage: preprocess the\n"
		"dataset with the plan's own command (plan.json; its log logs/preprocess.log) and\n"
		"copy one sample where the profile's trials read it (LTX-2: overfit/.precomputed);\n"
		"tune (the sanity run and the sweep, as vramfit tune); train with config.yaml,\n"
		"supervised like a trial (its log logs/train-N.log, memory polled, one status\n"
		"line). When the training runs out of memory, the cheapest remedy of the profile\n"
		"that is not set yet and that the estimate says fits the plan's GPU is written\n"
		"into config.yaml (and plan.md's Run Log), and the training resumes from the\n"
		"last checkpoint the trainer wrote\n"
		"(the profile's resume key, LTX-2's model.load_checkpoint, checked against the\n"
		"checkout's schema), at most --max-recoveries times; NaN, a crash or any\n"
		"other failure stops with the triage and no change. The state is kept in\n"
		"RUN_DIR/run.json: run the same command again after any interruption and it\n"
		"continues where it stopped. At the end: RUN_DIR/report.html.\n",
	.options = options,
	.tail =
		"On several GPUs of one node the training is launched by the trainer's rules\n"
		"(accelerate launch: DDP for a LoRA, the checkout's FSDP config for a full\n"
		"fine-tune; the plan set the accumulation for the GPU count). With --slurm each\n"
		"launch is a one-node Slurm job followed as tune --slurm follows its trials\n"
		"(preprocessing still runs here; multi-node launch.sbatch is not used yet).\n"
		"\n"
		"Exit status: 0 the run finished, 1 a stage failed or was interrupted (run.json\n"
		"says where; run again to continue), 2 usage error.\n",
	.run = run,
};
