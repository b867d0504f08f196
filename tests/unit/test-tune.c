/* test-tune.c - the sweep's rules with a stand-in trainer
 * (tests/unit/fake-trainer.sh): adopt faster trials and patch config.yaml
 * with exactly their keys; OOM in trial 2 stops, in trial 3 continues; no
 * improvement stops; no-op trials; the batch ladder; predicted-OOM skips;
 * a failed baseline; an interrupted sweep leaves config.yaml untouched and
 * the next run resumes from the history. */
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/base/buf.h"
#include "vramfit/tune/store.h"
#include "vramfit/tune/tune.h"

static const char config_text[] =
	"# a run config (test)\n"
	"optimization:\n"
	"  steps: 2000\n"
	"  batch_size: 1\n"
	"  gradient_accumulation_steps: GA\n"
	"  optimizer_type: \"adamw8bit\" # adamw | adamw8bit\n"
	"  enable_gradient_checkpointing: true\n"
	"acceleration:\n"
	"  quantization: QUANT\n"
	"data:\n"
	"  preprocessed_data_root: '/somewhere'\n"
	"validation:\n"
	"  interval: 100\n"
	"checkpoints:\n"
	"  interval: 250\n"
	"output_dir: \"outputs\"\n";

static char root[64];
static char fake[1024];
static int nrun;

static void sh(const char *cmd)
{
	if (system(cmd) != 0)
		fprintf(stderr, "  command failed: %s\n", cmd);
}

/* A fresh run dir with config.yaml (GA and QUANT filled in). */
static void make_run(char *run, size_t n, const char *ga, const char *quant, bool dataset)
{
	snprintf(run, n, "%s/run%d", root, ++nrun);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "mkdir -p %s%s", run, dataset ? "/overfit/.precomputed" : "");
	sh(cmd);
	struct vf_buf b;
	vf_buf_init(&b, 0);
	for (const char *p = config_text; *p; p++) {
		if (strncmp(p, "GA", 2) == 0) {
			vf_buf_puts(&b, ga, NULL);
			p++;
		} else if (strncmp(p, "QUANT", 5) == 0) {
			vf_buf_puts(&b, quant, NULL);
			p += 4;
		} else {
			vf_buf_append(&b, p, 1, NULL);
		}
	}
	char path[256];
	snprintf(path, sizeof path, "%s/config.yaml", run);
	vf_write_file_atomic(path, b.data, b.len, NULL);
	vf_buf_release(&b);
}

static char *read_text(const char *run, const char *name)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", run, name);
	struct vf_buf b;
	vf_buf_init(&b, 0);
	if (vf_buf_read_file(&b, path, 1 << 20, NULL) != VF_OK) {
		vf_buf_release(&b);
		return strdup("");
	}
	return vf_buf_detach(&b, NULL);
}

static int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

struct ev_ctx {
	struct vf_tune *t;
	int interrupt_trial;
	const char *ready_file; /* interrupt only once this file holds a pid */
};

/* The state the interrupt needs: the trainer has started its child and
 * written its pid (not a time: on a busy machine that can take long). */
static bool holds_pid(const char *path)
{
	FILE *f = path ? fopen(path, "r") : NULL;
	int pid = 0;
	if (f) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	return pid > 0;
}

/* Poll (bounded: 60 s) until kill(pid, 0) fails. */
static struct vf_tune *g_interrupt_tune;
static void on_usr1(int sig)
{
	(void)sig;
	vf_tune_interrupt(g_interrupt_tune);
}

static bool gone_within(pid_t pid)
{
	for (int i = 0; i < 6000; i++) {
		if (kill(pid, 0) != 0)
			return true;
		usleep(10000);
	}
	return false;
}

static void on_event(void *ctx, const struct vf_tune_event *ev)
{
	struct ev_ctx *c = ctx;
	if (c && c->interrupt_trial > 0 && ev->kind == VF_TUNE_PROGRESS && ev->trial->index == c->interrupt_trial &&
	    (!c->ready_file || holds_pid(c->ready_file)))
		vf_tune_interrupt(c->t);
	/* a negative trial number: interrupt between trials, after that one */
	if (c && c->interrupt_trial < 0 && ev->kind == VF_TUNE_TRIAL_END && ev->trial->index == -c->interrupt_trial)
		vf_tune_interrupt(c->t);
}

static vf_status sweep(const char *run, struct vf_tune_opts *o, struct vf_tune_result *r,
		       struct vf_error *err, struct ev_ctx *ec)
{
	char hist[256];
	snprintf(hist, sizeof hist, "%s/history.db", root);
	o->run_dir = run;
	o->trainer_dir = root;
	o->trainer_cmd = fake;
	o->steps = 50;
	o->store_path = hist;
	o->grace_s = 0.3;
	o->gpu_label = "test";
	struct vf_tune *t = vf_tune_new();
	if (ec) {
		ec->t = t;
		o->on_event = on_event;
		o->event_ctx = ec;
	}
	vf_status st = vf_tune_run(t, o, r, err);
	vf_tune_free(t);
	return st;
}

static void test_full_sweep_patches_winner(void)
{
	char run[128];
	make_run(run, sizeof run, "1", "\"int8-quanto\"", true);
	struct vf_tune_opts o = {0};
	struct vf_tune_result r;
	struct vf_error err = {0};
	CHECK(sweep(run, &o, &r, &err, NULL) == VF_OK);
	CHECK_INT(r.ntrials, 3);
	CHECK_STR(vf_outcome_name(r.trials[0].outcome), "ok");
	CHECK(r.trials[0].step_seconds == 1.0);
	CHECK(r.trials[1].step_seconds == 0.8);
	CHECK_INT(r.winner, 2);
	CHECK(r.patched);
	CHECK_CONTAINS(r.deferred, "batch size 2 (--sweep-batch)");
	char *cfg = read_text(run, "config.yaml");
	/* exactly the two winning keys changed, comments kept */
	CHECK_CONTAINS(cfg, "  optimizer_type: \"adamw\" # adamw | adamw8bit\n");
	CHECK_CONTAINS(cfg, "  quantization: null\n");
	CHECK_CONTAINS(cfg, "  steps: 2000\n");
	CHECK_CONTAINS(cfg, "preprocessed_data_root: '/somewhere'");
	CHECK_INT(strlen(cfg), strlen(config_text) - strlen("GA") + 1 - strlen("QUANT") + strlen("null") -
				       strlen("adamw8bit") + strlen("adamw"));
	free(cfg);
	char *log = read_text(run, "autotune.log");
	CHECK_INT(count_lines(log), 4); /* three trials and the strategy's cost */
	CHECK_CONTAINS(log, "trial 3  change: optimizer adamw  outcome: ok");
	CHECK_CONTAINS(log, "strategy: sequential (local, 1 GPU per trial)  trials run: 3  wall: ");
	free(log);
	/* the trial config: the overrides of TRAINER.md section 5 */
	char *t1 = read_text(run, "overfit/trial-1.yaml");
	CHECK_CONTAINS(t1, "  steps: 50\n");
	CHECK_CONTAINS(t1, "/overfit/.precomputed'");
	CHECK_CONTAINS(t1, "checkpoints:\n  interval: null\n");
	CHECK_CONTAINS(t1, "validation:\n  interval: 50\n");
	free(t1);
	/* the history holds every trial */
	struct vf_store *s;
	char hist[256];
	snprintf(hist, sizeof hist, "%s/history.db", root);
	CHECK(vf_store_open(hist, &s, &err) == VF_OK);
	struct vf_store_row *rows;
	size_t n;
	char abs[4096];
	CHECK(realpath(run, abs) != NULL);
	CHECK(vf_store_list(s, abs, &rows, &n, &err) == VF_OK);
	CHECK_INT(n, 3);
	free(rows);
	vf_store_close(s);
}

static void test_oom_trial2_stops(void)
{
	char run[128];
	make_run(run, sizeof run, "1", "\"int8-quanto\"", true);
	setenv("VRAMFIT_FAKE_OOM", "quant", 1);
	struct vf_tune_opts o = {0};
	struct vf_tune_result r;
	struct vf_error err = {0};
	CHECK(sweep(run, &o, &r, &err, NULL) == VF_OK);
	unsetenv("VRAMFIT_FAKE_OOM");
	CHECK_INT(r.ntrials, 2);
	CHECK_STR(vf_outcome_name(r.trials[1].outcome), "oom");
	CHECK_CONTAINS(r.trials[1].evidence, "CUDA out of memory");
	CHECK_INT(r.winner, 0);
	CHECK(!r.patched);
	char *cfg = read_text(run, "config.yaml");
	CHECK_CONTAINS(cfg, "quantization: \"int8-quanto\"");
	free(cfg);
}

static void test_oom_trial3_continues_to_batch(void)
{
	char run[128];
	make_run(run, sizeof run, "4", "\"int8-quanto\"", true);
	setenv("VRAMFIT_FAKE_OOM", "optimizer", 1);
	struct vf_tune_opts o = {.sweep_batch = true};
	struct vf_tune_result r;
	struct vf_error err = {0};
	CHECK(sweep(run, &o, &r, &err, NULL) == VF_OK);
	unsetenv("VRAMFIT_FAKE_OOM");
	CHECK_INT(r.ntrials, 5);
	CHECK_STR(vf_outcome_name(r.trials[2].outcome), "oom");
	CHECK_STR(r.trials[3].change, "batch size 2");
	CHECK_STR(vf_outcome_name(r.trials[3].outcome), "ok");
	CHECK_CONTAINS(r.trials[3].deltas, "\"optimization.gradient_accumulation_steps\":\"2\"");
	CHECK_CONTAINS(r.trials[3].deltas, "\"acceleration.quantization\":\"null\"");
	CHECK(!strstr(r.trials[3].deltas, "optimizer_type"));
	/* batch 4 runs after batch 2 was adopted, but is no faster: stop */
	CHECK_STR(r.trials[4].change, "batch size 4");
	CHECK_INT(r.winner, 3);
	char *cfg = read_text(run, "config.yaml");
	CHECK_CONTAINS(cfg, "  batch_size: 2\n");
	CHECK_CONTAINS(cfg, "  gradient_accumulation_steps: 2\n");
	CHECK_CONTAINS(cfg, "  optimizer_type: \"adamw8bit\"");
	free(cfg);
}

static void test_batch_cannot_keep_effective_batch(void)
{
	char run[128];
	make_run(run, sizeof run, "1", "null", true);
	struct vf_tune_opts o = {.sweep_batch = true, .max_trials = 5};
	struct vf_tune_result r;
	struct vf_error err = {0};
	CHECK(sweep(run, &o, &r, &err, NULL) == VF_OK);
	/* quantization is already null: trial 2 is a no-op, not run */
	CHECK_STR(vf_outcome_name(r.trials[1].outcome), "no-op");
	CHECK_INT(r.trials[1].status, -1);
	CHECK_STR(vf_outcome_name(r.trials[2].outcome), "ok");
	CHECK_STR(vf_outcome_name(r.trials[3].outcome), "skipped");
	CHECK_CONTAINS(r.trials[3].evidence, "effective batch 1");
}

static void test_no_improvement_stops(void)
{
	char run[128];
	make_run(run, sizeof run, "1", "\"int8-quanto\"", true);
	setenv("VRAMFIT_FAKE_SAME", "1", 1);
	struct vf_tune_opts o = {0};
	struct vf_tune_result r;
	struct vf_error err = {0};
	CHECK(sweep(run, &o, &r, &err, NULL) == VF_OK);
	unsetenv("VRAMFIT_FAKE_SAME");
	CHECK_INT(r.ntrials, 2);
	CHECK_INT(r.winner, 0);
	CHECK(!r.patched);
}

static vf_status predict(void *ctx, const struct vf_yamldoc *doc, int64_t *bytes, struct vf_error *err)
{
	(void)ctx;
	(void)err;
	const struct vf_yaml_node *q = vf_yamldoc_find(doc, "acceleration.quantization");
	*bytes = (q && vf_yaml_node_kind(q) == VF_YAML_NULL) ? (100ll << 30) : (30ll << 30);
	return VF_OK;
}

static void test_predicted_oom_skipped(void)
{
	char run[128];
	make_run(run, sizeof run, "1", "\"int8-quanto\"", true);
	struct vf_tune_opts o = {.predict = predict, .card_bytes = 80ll << 30};
	struct vf_tune_result r;
	struct vf_error err = {0};
	CHECK(sweep(run, &o, &r, &err, NULL) == VF_OK);
	CHECK_INT(r.ntrials, 2);
	CHECK_INT(r.trials[0].predicted_peak_bytes, 30ll << 30);
	CHECK_STR(vf_outcome_name(r.trials[1].outcome), "skipped");
	CHECK_STR(r.trials[1].evidence, "predicted OOM: 100.0 GiB > 80.0 GiB");
	/* --no-skip runs it, even though the history has it as skipped */
	o.no_skip = true;
	CHECK(sweep(run, &o, &r, &err, NULL) == VF_OK);
	CHECK_STR(vf_outcome_name(r.trials[1].outcome), "ok");
}

static void test_baseline_failure_and_usage(void)
{
	char run[128];
	make_run(run, sizeof run, "1", "\"int8-quanto\"", true);
	setenv("VRAMFIT_FAKE_OOM", "base", 1);
	struct vf_tune_opts o = {0};
	struct vf_tune_result r;
	struct vf_error err = {0};
	CHECK(sweep(run, &o, &r, &err, NULL) == VF_OK);
	unsetenv("VRAMFIT_FAKE_OOM");
	CHECK(r.baseline_failed);
	CHECK_INT(r.ntrials, 1);
	CHECK(!r.patched);
	/* --try-no-ckpt is refused off the 80GB+ tier */
	struct vf_tune_opts o2 = {.try_no_ckpt = true, .tier = "32GB tier"};
	CHECK(sweep(run, &o2, &r, &err, NULL) == VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "--try-no-ckpt is only allowed on the 80GB+ tier (this run: 32GB tier)");
	/* the self-check: this config has no model paths, so trial 1 is a
	 * config-error, not run and not in the history */
	make_run(run, sizeof run, "1", "null", true);
	struct vf_tune_opts o4 = {.self_check = true};
	CHECK(sweep(run, &o4, &r, &err, NULL) == VF_OK);
	CHECK(r.baseline_failed);
	CHECK_STR(vf_outcome_name(r.trials[0].outcome), "config-error");
	CHECK_CONTAINS(r.trials[0].evidence, "self-check before launch: model.model_path");
	CHECK_INT(r.trials[0].status, -1);
	/* no one-sample dataset */
	make_run(run, sizeof run, "1", "null", false);
	struct vf_tune_opts o3 = {0};
	CHECK(sweep(run, &o3, &r, &err, NULL) == VF_ERR);
	CHECK_CONTAINS(err.msg, "overfit/.precomputed: missing");
}

static void test_interrupt_then_resume(void)
{
	char run[128], count[256], pidfile[300];
	make_run(run, sizeof run, "1", "\"int8-quanto\"", true);
	snprintf(count, sizeof count, "%s/count", run);
	snprintf(pidfile, sizeof pidfile, "%s.pid", count);
	setenv("VRAMFIT_FAKE_COUNT", count, 1);
	setenv("VRAMFIT_FAKE_HANG", "optimizer", 1);
	char *before = read_text(run, "config.yaml");
	struct vf_tune_opts o = {0};
	struct vf_tune_result r;
	struct vf_error err = {0};
	struct ev_ctx ec = {.interrupt_trial = 3, .ready_file = pidfile};
	CHECK(sweep(run, &o, &r, &err, &ec) == VF_ERR);
	CHECK(r.interrupted);
	CHECK_CONTAINS(err.msg, "interrupted during trial 3");
	char *after = read_text(run, "config.yaml");
	CHECK_STR(after, before);
	free(after);
	unsetenv("VRAMFIT_FAKE_HANG");
	/* the hung trainer's child is gone (vf_proc_run reaps the tree before
	 * it returns; the bound only covers a slow kernel) */
	char *pid = read_text(run, "count.pid");
	CHECK(atoi(pid) > 0);
	CHECK(atoi(pid) > 0 && gone_within(atoi(pid)));
	free(pid);
	struct vf_tune_opts o2 = {0};
	CHECK(sweep(run, &o2, &r, &err, NULL) == VF_OK);
	CHECK_INT(r.ntrials, 3);
	CHECK(r.patched);
	char *runs = read_text(run, "count");
	CHECK_INT(count_lines(runs), 4); /* 1, 2, 3 (interrupted), 3 again */
	free(runs);
	char *log = read_text(run, "autotune.log");
	CHECK_CONTAINS(log, "(resumed from history)");
	free(log);
	unsetenv("VRAMFIT_FAKE_COUNT");
	free(before);
}

static void test_interrupt_between_trials(void)
{
	char run[128];
	make_run(run, sizeof run, "1", "\"int8-quanto\"", true);
	char *before = read_text(run, "config.yaml");
	struct vf_tune_opts o = {0};
	struct vf_tune_result r;
	struct vf_error err = {0};
	struct ev_ctx ec = {.interrupt_trial = -3};
	CHECK(sweep(run, &o, &r, &err, &ec) == VF_ERR);
	CHECK(r.interrupted);
	CHECK(!r.patched);
	CHECK_CONTAINS(err.msg, "interrupted after trial 3");
	char *after = read_text(run, "config.yaml");
	CHECK_STR(after, before);
	free(after);
	free(before);
}

/* The parallel strategy on 2 local slots: round 1 = baseline, quantization
 * off, optimizer adamw at once; round 2 = both (the fake trainer: 0.6 s);
 * the same winner and patch as the sequential sweep. */
static void test_parallel_same_winner(void)
{
	char run[128];
	make_run(run, sizeof run, "1", "\"int8-quanto\"", true);
	const char *sets[] = {"0", "1", NULL};
	struct vf_tune_opts o = {.parallel = 2, .gpu_sets = sets};
	struct vf_tune_result r;
	struct vf_error err = {0};
	CHECK(sweep(run, &o, &r, &err, NULL) == VF_OK);
	CHECK_INT(r.ntrials, 4);
	CHECK_STR(r.trials[1].change, "quantization off");
	CHECK_STR(r.trials[2].change, "optimizer adamw");
	CHECK_CONTAINS(r.trials[2].deltas, "optimizer_type");
	CHECK(!strstr(r.trials[2].deltas, "quantization"));
	CHECK_STR(r.trials[3].change, "combination: quantization off + optimizer adamw");
	CHECK_INT(r.winner, 3);
	CHECK(r.patched);
	char *cfg = read_text(run, "config.yaml");
	CHECK_CONTAINS(cfg, "  optimizer_type: \"adamw\" # adamw | adamw8bit\n");
	CHECK_CONTAINS(cfg, "  quantization: null\n");
	free(cfg);
	char *log = read_text(run, "autotune.log");
	CHECK_CONTAINS(log, "strategy: parallel (local, 2 slots, 1 GPU per trial)  trials run: 4");
	free(log);
	/* each slot had its own GPU set */
	char *l2 = read_text(run, "logs/trial-2.log");
	CHECK_CONTAINS(l2, "[vramfit] trainer ended: exited, exit status 0");
	free(l2);
	/* a re-run starts from the patched config: both changes are no-ops */
	CHECK(sweep(run, &o, &r, &err, NULL) == VF_OK);
	CHECK_INT(r.ntrials, 3);
	CHECK_STR(vf_outcome_name(r.trials[1].outcome), "no-op");
	CHECK_STR(vf_outcome_name(r.trials[2].outcome), "no-op");
}

/* Parallel with an OOM in round 1: quantization off fails, its on_failure
 * rule is stop, so optimizer adamw (run at the same time) is not adopted. */
static void test_parallel_stop_rule(void)
{
	char run[128];
	make_run(run, sizeof run, "1", "\"int8-quanto\"", true);
	setenv("VRAMFIT_FAKE_OOM", "quant", 1);
	struct vf_tune_opts o = {.parallel = 3};
	struct vf_tune_result r;
	struct vf_error err = {0};
	CHECK(sweep(run, &o, &r, &err, NULL) == VF_OK);
	unsetenv("VRAMFIT_FAKE_OOM");
	CHECK_INT(r.ntrials, 3);
	CHECK_STR(vf_outcome_name(r.trials[1].outcome), "oom");
	CHECK_STR(vf_outcome_name(r.trials[2].outcome), "ok");
	CHECK_INT(r.winner, 0);
	CHECK(!r.patched);
	char *log = read_text(run, "autotune.log");
	CHECK_CONTAINS(log, "changes after trial 2 (quantization off) are not adopted");
	free(log);
}

/* Interrupting a parallel round: both running trainers end, nothing of
 * theirs is recorded, config.yaml untouched; the next run resumes. */
static void test_parallel_interrupt(void)
{
	char run[128], count[256], pidfile[300];
	make_run(run, sizeof run, "1", "\"int8-quanto\"", true);
	snprintf(count, sizeof count, "%s/count", run);
	snprintf(pidfile, sizeof pidfile, "%s.pid", count);
	setenv("VRAMFIT_FAKE_COUNT", count, 1);
	setenv("VRAMFIT_FAKE_HANG", "optimizer", 1);
	struct vf_tune_opts o = {.parallel = 3};
	struct vf_tune_result r;
	struct vf_error err = {0};
	struct vf_tune *t = vf_tune_new();
	char hist[256];
	snprintf(hist, sizeof hist, "%s/history.db", root);
	o.run_dir = run, o.trainer_dir = root, o.trainer_cmd = fake, o.steps = 50, o.store_path = hist;
	o.grace_s = 0.3, o.gpu_label = "test";
	/* interrupt from another process once the hanging trial wrote its pid */
	pid_t killer = fork();
	if (killer == 0) {
		for (int i = 0; i < 6000 && !holds_pid(pidfile); i++)
			usleep(10000);
		kill(getppid(), SIGUSR1);
		_exit(0);
	}
	g_interrupt_tune = t;
	signal(SIGUSR1, on_usr1);
	CHECK(vf_tune_run(t, &o, &r, &err) == VF_ERR);
	signal(SIGUSR1, SIG_DFL);
	waitpid(killer, NULL, 0);
	vf_tune_free(t);
	CHECK(r.interrupted);
	/* trial 3 hangs; 1 and 2 may still have been running alongside */
	CHECK_CONTAINS(err.msg, "interrupted during trial");
	CHECK_CONTAINS(err.msg, "3; config.yaml untouched");
	char *pid = read_text(run, "count.pid");
	CHECK(atoi(pid) > 0 && gone_within(atoi(pid)));
	free(pid);
	unsetenv("VRAMFIT_FAKE_HANG");
	CHECK(sweep(run, &o, &r, &err, NULL) == VF_OK);
	CHECK_INT(r.ntrials, 4);
	CHECK(r.patched);
	unsetenv("VRAMFIT_FAKE_COUNT");
}

/* GPU memory polling with the fake NVML: the stand-in trainer's worker
 * (a grandchild) is listed with 3072 MiB while another process takes
 * 1000 MiB; the trainer itself says 1.00 GB. */
static void gpu_trial(const char *scenario, const char *mib, struct vf_tune_result *r)
{
	char run[128], procs[256], env[512], lib[1024];
	make_run(run, sizeof run, "1", "\"int8-quanto\"", true);
	snprintf(procs, sizeof procs, "%s/procs-%d", root, nrun);
	snprintf(env, sizeof env, "procfile=%s;%s", procs, scenario);
	snprintf(lib, sizeof lib, "%s/helpers/libfakenvml.so", vf_test_env("VF_BUILD_DIR", "build"));
	char fg[300];
	snprintf(fg, sizeof fg, "%s %s", procs, mib);
	setenv("VRAMFIT_NVML_LIB", lib, 1);
	setenv("VF_FAKE_NVML", env, 1);
	setenv("VRAMFIT_FAKE_GPU", fg, 1);
	setenv("VRAMFIT_FAKE_PEAK_GB", "1.00", 1);
	struct vf_tune_opts o = {.poll_gpu = true, .max_trials = 1};
	struct vf_error err = {0};
	CHECK(sweep(run, &o, r, &err, NULL) == VF_OK);
	unsetenv("VRAMFIT_NVML_LIB");
	unsetenv("VF_FAKE_NVML");
	unsetenv("VRAMFIT_FAKE_GPU");
	unsetenv("VRAMFIT_FAKE_PEAK_GB");
	CHECK_INT(r->ntrials, 1);
	CHECK_STR(vf_outcome_name(r->trials[0].outcome), "ok");
	CHECK_INT(r->trials[0].peak_trainer_bytes, 1ll << 30);
	char *log = read_text(run, "logs/trial-1.log");
	char want[128];
	snprintf(want, sizeof want, "[vramfit] peak memory: %.3f GiB from %s", (double)r->trials[0].peak_bytes / (1u << 30),
		 r->trials[0].peak_source);
	CHECK_CONTAINS(log, want);
	free(log);
	log = read_text(run, "autotune.log");
	snprintf(want, sizeof want, "(%s)", r->trials[0].peak_source);
	CHECK_CONTAINS(log, want);
	free(log);
}

static void test_gpu_polling(void)
{
	struct vf_tune_result r;
	/* Per-process NVML: the worker's own 3072 MiB, not the device's 4072. */
	gpu_trial("", "3072", &r);
	CHECK_INT(r.trials[0].peak_bytes, 3072ll << 20);
	CHECK_INT(r.trials[0].peak_polled_bytes, 3072ll << 20);
	CHECK_STR(r.trials[0].peak_source, "nvml-process");
	/* No process list: the device's used memory minus the idle baseline. */
	gpu_trial("fail=nvmlDeviceGetComputeRunningProcesses_v3:3;"
		  "fail=nvmlDeviceGetComputeRunningProcesses_v2:3;"
		  "fail=nvmlDeviceGetComputeRunningProcesses:3",
		  "3072", &r);
	CHECK_INT(r.trials[0].peak_bytes, 4072ll << 20);
	CHECK_STR(r.trials[0].peak_source, "nvml-device");
	/* The worker listed under another PID (a container's namespace): the
	 * per-process figure finds nobody, the device fallback stands in. */
	gpu_trial("", "3072 foreign", &r);
	CHECK_INT(r.trials[0].peak_bytes, 4072ll << 20);
	CHECK_STR(r.trials[0].peak_source, "nvml-device");
	/* NVML has no figure for the worker: the device fallback sees only the
	 * other 1000 MiB, below the trainer's own 1 GiB, which wins. */
	gpu_trial("", "na", &r);
	CHECK_INT(r.trials[0].peak_polled_bytes, 1000ll << 20);
	CHECK_INT(r.trials[0].peak_bytes, 1ll << 30);
	CHECK_STR(r.trials[0].peak_source, "trainer");
}

int main(void)
{
	snprintf(root, sizeof root, "/tmp/vf-test-tune-XXXXXX");
	if (!mkdtemp(root))
		return 1;
	snprintf(fake, sizeof fake, "sh %s/tests/unit/fake-trainer.sh {config}",
		 vf_test_env("VF_SOURCE_DIR", "."));
	RUN(test_full_sweep_patches_winner);
	RUN(test_oom_trial2_stops);
	RUN(test_oom_trial3_continues_to_batch);
	RUN(test_batch_cannot_keep_effective_batch);
	RUN(test_no_improvement_stops);
	RUN(test_predicted_oom_skipped);
	RUN(test_baseline_failure_and_usage);
	RUN(test_interrupt_then_resume);
	RUN(test_interrupt_between_trials);
	RUN(test_gpu_polling);
	RUN(test_parallel_same_winner);
	RUN(test_parallel_stop_rule);
	RUN(test_parallel_interrupt);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	sh(cmd);
	return vf_test_done();
}
