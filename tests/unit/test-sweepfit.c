/* test-sweepfit.c - the predicted autotune sweep (lib/trainer/sweepfit.c):
 * the profile's order and stop rules (sweep.json) with a fake estimator
 * whose peak and step time follow the config's keys, so each rule is
 * exercised on known numbers; the starting configs from the profile's
 * fit.json; the config -> estimator mapping; the knob search. */
#include <stdlib.h>
#include <string.h>

#include "vf_test.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/trainer/profile.h"
#include "vramfit/trainer/sweepfit.h"

#define GIB (1024.0 * 1024 * 1024)

/* The fake estimator: a base of 20 GiB and 3 s; quantization off +20 GiB,
 * -0.8 s; adamw +1 GiB, -0.1 s; checkpointing off +60 GiB, -0.5 s; batch b
 * x b GiB of activations and b x 0.9 s per micro-step over accumulation a.
 * Fits when the peak is within cap. */
struct fake {
	double cap_gib;
	int calls;
};

static vf_status fake_eval(void *ctx, const struct vf_yamldoc *d, struct vf_sweepfit_eval *out,
			   struct vf_error *err)
{
	(void)err;
	struct fake *f = ctx;
	f->calls++;
	const char *q = NULL, *opt = NULL;
	bool ckpt = true;
	int64_t b = 1, a = 1;
	vf_yamldoc_get_str(d, "acceleration.quantization", &q, NULL);
	vf_yamldoc_get_str(d, "optimization.optimizer_type", &opt, NULL);
	vf_yamldoc_get_bool(d, "optimization.enable_gradient_checkpointing", &ckpt, NULL);
	vf_yamldoc_get_int(d, "optimization.batch_size", &b, NULL);
	vf_yamldoc_get_int(d, "optimization.gradient_accumulation_steps", &a, NULL);
	double gib = 20 + (q ? 0 : 20) + (opt && strcmp(opt, "adamw") == 0 ? 1 : 0) + (ckpt ? 0 : 60) + (double)b;
	double s = 3 - (q ? 0 : 0.8) - (opt && strcmp(opt, "adamw") == 0 ? 0.1 : 0) - (ckpt ? 0 : 0.5);
	s = s * (double)a * (0.9 * (double)b) / 0.9 - (double)(b - 1) * 0.3 * (double)a;
	memset(out, 0, sizeof *out);
	out->peak_bytes = (int64_t)(gib * GIB);
	out->gpu_bytes = (int64_t)(f->cap_gib * GIB);
	out->fits = gib <= f->cap_gib;
	out->step_seconds = s;
	out->tokens_per_step = 1000;
	return VF_OK;
}

static struct vf_yamldoc *start(const char *file, bool full)
{
	struct vf_yamldoc *d = NULL;
	struct vf_error err = {0};
	char from[256];
	vf_status st = vf_sweepfit_start(NULL, "t2v", file, NULL, NULL, full, &d, from, sizeof from, &err);
	if (st)
		fprintf(stderr, "  start %s: %s\n", file, err.msg);
	CHECK_CONTAINS(from, "fit.json");
	return d;
}

static vf_status predict(const char *tier, bool all_flags, const char *const *flags, const struct vf_yamldoc *d,
			 double cap, struct vf_sweepfit *sw)
{
	struct fake f = {.cap_gib = cap};
	struct vf_sweepfit_opts o = {.tier = tier, .all_flags = all_flags, .flags = flags};
	struct vf_error err = {0};
	vf_status st = vf_sweepfit_predict(&o, d, fake_eval, &f, sw, &err);
	if (st)
		fprintf(stderr, "  predict: %s\n", err.msg);
	return st;
}

/* 32 GB: the baseline fits, quantization off runs out of memory and the
 * change's on_failure (stop) ends the sweep. */
static void test_oom_stops(void)
{
	struct vf_yamldoc *d = start("t2v_lora_low_vram.yaml", false);
	struct vf_sweepfit sw;
	CHECK_INT(predict("32GB tier", true, NULL, d, 30, &sw), VF_OK);
	CHECK_INT(sw.ntrials, 2);
	CHECK_INT(sw.winner, 0);
	CHECK_STR(sw.trials[0].id, "baseline");
	CHECK(sw.trials[0].outcome == VF_SWEEPFIT_FITS);
	CHECK_STR(sw.trials[1].id, "quantization-off");
	CHECK(sw.trials[1].outcome == VF_SWEEPFIT_OOM);
	CHECK(!sw.trials[1].adopted);
	CHECK_INT((int)(sw.trials[1].eval.peak_bytes / GIB + 0.5), 41);
	CHECK(sw.trials[1].gain_pct > 0); /* faster, but it does not fit */
	CHECK_STR(sw.trials[1].deltas, "{\"acceleration.quantization\":\"null\"}");
	CHECK_STR(sw.winner_deltas, "{}");
	CHECK_CONTAINS(sw.not_tried, "optimizer adamw (the sweep stops before it)");
	vf_yamldoc_free(d);
}

/* 48 GB: quantization off and adamw are adopted (each at least 2% faster);
 * checkpointing off is for the 80GB+ tier only; batch 2 cannot keep the
 * effective batch 1 and its on_failure stops the sweep. */
static void test_relaxations(void)
{
	struct vf_yamldoc *d = start("t2v_lora_low_vram.yaml", false);
	struct vf_sweepfit sw;
	CHECK_INT(predict("40–60GB tier", true, NULL, d, 48, &sw), VF_OK);
	CHECK_INT(sw.ntrials, 4);
	CHECK(sw.trials[1].adopted && sw.trials[2].adopted);
	CHECK_STR(sw.trials[2].id, "optimizer-adamw");
	CHECK_INT(sw.winner, 2);
	CHECK(sw.trials[2].gain_pct > 2 && sw.trials[2].gain_pct < 5);
	CHECK_STR(sw.trials[3].id, "batch-2");
	CHECK(sw.trials[3].outcome == VF_SWEEPFIT_SKIPPED);
	CHECK_CONTAINS(sw.trials[3].why, "cannot be kept");
	CHECK_STR(sw.trials[3].flag, "sweep-batch");
	CHECK_CONTAINS(sw.not_tried, "gradient checkpointing off (only on the 80GB+ tier)");
	CHECK_CONTAINS(sw.not_tried, "batch size 4 (the sweep stops before it)");
	CHECK_CONTAINS(sw.winner_deltas, "\"acceleration.quantization\":\"null\"");
	CHECK_CONTAINS(sw.winner_deltas, "\"optimization.optimizer_type\":\"\\\"adamw\\\"\"");
	vf_yamldoc_free(d);
}

/* Without the flags, the changes behind them are not tried and say which
 * flag; 80GB+: the standard config already has quantization off and adamw
 * (no-op trials), checkpointing off runs out of memory and continues. */
static void test_flags_and_noop(void)
{
	struct vf_yamldoc *d = start("t2v_lora.yaml", false);
	struct vf_sweepfit sw;
	CHECK_INT(predict("80GB+ tier", false, NULL, d, 80, &sw), VF_OK);
	CHECK_INT(sw.ntrials, 3);
	CHECK(sw.trials[1].outcome == VF_SWEEPFIT_NOOP && sw.trials[2].outcome == VF_SWEEPFIT_NOOP);
	CHECK_CONTAINS(sw.not_tried, "gradient checkpointing off (--try-no-ckpt)");
	CHECK_CONTAINS(sw.not_tried, "batch size 2 (--sweep-batch)");
	const char *const flags[] = {"try-no-ckpt", NULL};
	CHECK_INT(predict("80GB+ tier", false, flags, d, 80, &sw), VF_OK);
	CHECK_INT(sw.ntrials, 4);
	CHECK_STR(sw.trials[3].id, "grad-ckpt-off");
	CHECK(sw.trials[3].outcome == VF_SWEEPFIT_OOM);
	CHECK_INT(sw.winner, 0);
	/* on_failure continue: the sweep goes on to the batch change (deferred) */
	CHECK_CONTAINS(sw.not_tried, "batch size 2 (--sweep-batch)");
	/* a big card: checkpointing off fits and is adopted */
	CHECK_INT(predict("80GB+ tier", false, flags, d, 141, &sw), VF_OK);
	CHECK(sw.trials[3].adopted);
	CHECK_INT(sw.winner, 3);
	vf_yamldoc_free(d);
}

/* The batch ladder keeps batch x accumulation; batch 4 needs batch 2
 * adopted; max_trials bounds the sweep. */
static void test_batch_ladder(void)
{
	struct vf_yamldoc *d = start("t2v_lora.yaml", false);
	struct vf_error err = {0};
	CHECK_INT(vf_yamldoc_set(d, "optimization.gradient_accumulation_steps", "4", &err), VF_OK);
	struct vf_sweepfit sw;
	const char *const flags[] = {"sweep-batch", NULL};
	CHECK_INT(predict("80GB+ tier", false, flags, d, 80, &sw), VF_OK);
	CHECK_INT(sw.ntrials, 5);
	CHECK_STR(sw.trials[3].id, "batch-2");
	CHECK_STR(sw.trials[3].deltas,
		  "{\"optimization.batch_size\":\"2\",\"optimization.gradient_accumulation_steps\":\"2\"}");
	CHECK(sw.trials[3].adopted);
	CHECK_STR(sw.trials[4].id, "batch-4");
	CHECK_STR(sw.trials[4].deltas,
		  "{\"optimization.batch_size\":\"4\",\"optimization.gradient_accumulation_steps\":\"1\"}");
	/* max_trials 3: the batch changes are named, not tried */
	struct fake f = {.cap_gib = 80};
	struct vf_sweepfit_opts o = {.tier = "80GB+ tier", .flags = flags, .max_trials = 3};
	CHECK_INT(vf_sweepfit_predict(&o, d, fake_eval, &f, &sw, &err), VF_OK);
	CHECK_INT(sw.ntrials, 3);
	CHECK_CONTAINS(sw.not_tried, "batch size 2 (max_trials reached)");
	vf_yamldoc_free(d);
}

static void test_baseline_oom(void)
{
	struct vf_yamldoc *d = start("t2v_lora.yaml", false);
	struct vf_sweepfit sw;
	CHECK_INT(predict("32GB tier", true, NULL, d, 32, &sw), VF_OK);
	CHECK_INT(sw.ntrials, 1);
	CHECK_INT(sw.winner, -1);
	CHECK(sw.trials[0].outcome == VF_SWEEPFIT_OOM);
	CHECK_CONTAINS(sw.not_tried, "baseline is predicted out of memory");
	vf_yamldoc_free(d);
}

/* The profile's starting configs, the full fine-tune's changes, the
 * mapping onto the estimator's trainer config. */
static void test_start_and_config(void)
{
	struct vf_yamldoc *d = start("t2v_lora_low_vram.yaml", false);
	cJSON *configs = NULL;
	struct vf_error err = {0};
	CHECK_INT(vf_profile_part(VF_PROFILE_DEFAULT, "configs", &configs, &err), VF_OK);
	struct vf_ltx2_config lc;
	CHECK_INT(vf_sweepfit_config(configs, d, 1, &lc, &err), VF_OK);
	CHECK_STR(lc.training_mode, "lora");
	CHECK_INT(lc.lora_rank, 16);
	CHECK_STR(lc.optimizer_type, "adamw8bit");
	CHECK_STR(lc.quantization, "int8-quanto");
	CHECK(lc.load_text_encoder_in_8bit && lc.offload_optimizer_during_validation && lc.grad_ckpt);
	CHECK_INT(lc.video_dims[0], 576);
	CHECK_INT(lc.video_dims[2], 49);
	vf_yamldoc_free(d);
	d = start("t2v_lora.yaml", true);
	CHECK_INT(vf_sweepfit_config(configs, d, 4, &lc, &err), VF_OK);
	CHECK_STR(lc.training_mode, "full");
	CHECK(lc.quantization == NULL);
	CHECK(lc.offload_optimizer_during_validation);
	CHECK_INT(lc.video_dims[0], 960);
	CHECK_INT(lc.gpus, 4);
	vf_yamldoc_free(d);
	char from[128];
	CHECK_INT(vf_sweepfit_start(NULL, "t2v", "t2v_nothing.yaml", NULL, NULL, false, &d, from, sizeof from, &err),
		  VF_ENOTFOUND);
	CHECK_CONTAINS(err.msg, "t2v_nothing.yaml");
	CHECK(d == NULL);
	cJSON_Delete(configs);
}

/* The search: fits only, fewest training changes first, then fastest. */
static void test_search(void)
{
	struct vf_yamldoc *d = start("t2v_lora_low_vram.yaml", false);
	struct fake f = {.cap_gib = 48};
	struct vf_sweepfit_found found[10];
	int n = 0;
	struct vf_error err = {0};
	CHECK_INT(vf_sweepfit_search(NULL, d, true, fake_eval, &f, found, 10, &n, &err), VF_OK);
	CHECK(n > 10);
	CHECK(f.calls > 100);
	for (int i = 0; i < 10; i++) {
		CHECK(found[i].eval.fits);
		if (i)
			CHECK(found[i].training_changes > found[i - 1].training_changes ||
			      (found[i].training_changes == found[i - 1].training_changes &&
			       found[i].eval.step_seconds >= found[i - 1].eval.step_seconds));
	}
	CHECK_INT(found[0].training_changes, 0);
	CHECK_CONTAINS(found[0].changes, "\"acceleration.quantization\":\"null\"");
	vf_yamldoc_free(d);
}

int main(void)
{
	setenv("XDG_CONFIG_HOME", "/nonexistent-vramfit-test", 1);
	unsetenv("VRAMFIT_DATA_DIR");
	RUN(test_oom_stops);
	RUN(test_relaxations);
	RUN(test_flags_and_noop);
	RUN(test_batch_ladder);
	RUN(test_baseline_oom);
	RUN(test_start_and_config);
	RUN(test_search);
	vf_gpu_catalog_reset();
	return vf_test_done();
}
