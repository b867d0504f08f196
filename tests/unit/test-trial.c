/* test-trial.c - log parsing and the outcome classifier, on the real failure
 * outputs in ../shared/fixtures/failures/ and on Rich-style trainer logs. */
#include <math.h>
#include <stdlib.h>

#include "vf_test.h"
#include "vramfit/base/buf.h"
#include "vramfit/tune/trial.h"

static struct vf_trial_patterns *pat;

/* Read fixtures/failures/<name>.out and .err (either may be missing),
 * take the "exit=N" line out as the status, feed the rest. */
static void feed_fixture(struct vf_trial_log *log, const char *name, int *status)
{
	const char *shared = vf_test_env("VF_SHARED_DIR", "../shared");
	const char *ext[] = {".out", ".err"};
	*status = -1;
	for (int i = 0; i < 2; i++) {
		char path[512];
		snprintf(path, sizeof path, "%s/fixtures/failures/%s%s", shared, name, ext[i]);
		struct vf_buf b;
		vf_buf_init(&b, 1 << 20);
		struct vf_error err = {0};
		if (vf_buf_read_file(&b, path, 1 << 20, &err) == VF_OK) {
			char *line = b.data, *nl;
			for (; line && *line; line = nl ? nl + 1 : NULL) {
				nl = strchr(line, '\n');
				size_t n = nl ? (size_t)(nl - line) : strlen(line);
				if (n > 5 && strncmp(line, "exit=", 5) == 0)
					*status = atoi(line + 5);
				else
					vf_trial_log_line(log, line, n);
			}
		}
		vf_buf_release(&b);
	}
	vf_trial_log_finish(log);
}

static enum vf_outcome classify_fixture(const char *name, char *evidence, int *status_out)
{
	struct vf_trial_log log;
	vf_trial_log_init(&log, pat);
	int status;
	feed_fixture(&log, name, &status);
	struct vf_trial_exit ex = {.status = status, .end = VF_PROC_EXITED, .sample = -1};
	struct vf_trial_verdict v;
	vf_trial_classify(&log, &ex, &v);
	snprintf(evidence, VF_TRIAL_EVIDENCE_MAX, "%s", v.evidence);
	if (status_out)
		*status_out = status;
	vf_trial_log_release(&log);
	return v.outcome;
}

static void test_fixture_python_oom(void)
{
	char ev[VF_TRIAL_EVIDENCE_MAX];
	int st;
	CHECK_STR(vf_outcome_name(classify_fixture("oom-python", ev, &st)), "oom");
	CHECK_INT(st, 1);
	CHECK_CONTAINS(ev, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 200.00 GiB");
}

static void test_fixture_launcher_oom(void)
{
	char ev[VF_TRIAL_EVIDENCE_MAX];
	CHECK_STR(vf_outcome_name(classify_fixture("oom-torchrun", ev, NULL)), "oom");
	CHECK_CONTAINS(ev, "CUDA out of memory");
	CHECK_STR(vf_outcome_name(classify_fixture("oom-accelerate", ev, NULL)), "oom");
	CHECK_CONTAINS(ev, "CUDA out of memory");
}

static void test_fixture_caught_oom(void)
{
	char ev[VF_TRIAL_EVIDENCE_MAX];
	int st;
	CHECK_STR(vf_outcome_name(classify_fixture("oom-caught", ev, &st)), "oom");
	CHECK_INT(st, 3);
	CHECK_CONTAINS(ev, "caught: CUDA out of memory");
}

static void test_fixture_nan(void)
{
	char ev[VF_TRIAL_EVIDENCE_MAX];
	int st;
	CHECK_STR(vf_outcome_name(classify_fixture("nan-python", ev, &st)), "nan");
	CHECK_INT(st, 0);
	CHECK_CONTAINS(ev, "Step 3/3 - Loss: nan");
}

static void test_fixture_sigkill(void)
{
	char ev[VF_TRIAL_EVIDENCE_MAX];
	int st;
	CHECK_STR(vf_outcome_name(classify_fixture("sigkill", ev, &st)), "crash");
	CHECK_INT(st, 137);
	CHECK_CONTAINS(ev, "exit 137");
	CHECK_CONTAINS(ev, "Killed");
}

static const char rich_log[] =
	"[11/29/26 21:00:01] INFO     Loading model...                              trainer.py:101\n"
	"[rank 0] [11/29/26 21:00:09] INFO     Step 20/50 - Loss: 0.5123, LR: 1.00e-04,      trainer.py:412\n"
	"                             Time/Step: 0.90s, Total Time: calculating...\n"
	"                    INFO     Step 40/50 - Loss: 0.4100, LR: 1.00e-04, Time/Step: 0.70s, Total Time: 0h 1m  trainer.py:412\n"
	"{\"vramfit\": {\"step\": 50, \"total_steps\": 50, \"loss\": 0.4, \"step_seconds\": 0.5, \"peak_bytes\": 123456789}}\n"
	"{\"vramfit\": {\"step_seconds\": 0.6}}\n"
	"📊 Training Statistics:\n"
	" - Total time: 1.2 minutes\n"
	" - Training speed: 1.25 steps/second\n"
	" - Samples/second: 1.25\n"
	" - Peak GPU memory: 31.50 GB\n";

static void test_rich_log_and_json_lines(void)
{
	struct vf_trial_log log;
	vf_trial_log_init(&log, pat);
	vf_trial_log_text(&log, rich_log, sizeof rich_log - 1);
	vf_trial_log_finish(&log);
	CHECK_INT(log.last_step, 50);
	CHECK_INT(log.total_steps, 50);
	CHECK_INT(log.nreports, 4);
	CHECK(log.nreports == 4 && fabs(log.reports[0] - 0.90) < 1e-9);
	/* median of the reports after the first two: 0.5 and 0.6 */
	CHECK(fabs(vf_trial_log_step_seconds(&log) - 0.55) < 1e-9);
	CHECK(fabs(log.peak_gb - 31.5) < 1e-9);
	CHECK(fabs(log.steps_per_second - 1.25) < 1e-9);
	CHECK_INT(log.peak_bytes, 123456789);
	CHECK(!log.nonfinite_loss);
	struct vf_trial_exit ex = {.status = 0, .end = VF_PROC_EXITED, .expect_steps = 50, .sample = 1};
	struct vf_trial_verdict v;
	vf_trial_classify(&log, &ex, &v);
	CHECK_STR(vf_outcome_name(v.outcome), "ok");
	ex.sample = 0;
	vf_trial_classify(&log, &ex, &v);
	CHECK_STR(vf_outcome_name(v.outcome), "incomplete");
	CHECK_CONTAINS(v.evidence, "validation sample");
	vf_trial_log_release(&log);
}

static void test_step_time_few_reports(void)
{
	struct vf_trial_log log;
	vf_trial_log_init(&log, pat);
	const char *t = "Step 20/50 - Loss: 1.0, LR: 1e-4, Time/Step: 2.00s, Total Time: x\n"
			"Step 40/50 - Loss: 1.0, LR: 1e-4, Time/Step: 1.50s, Total Time: x\n";
	CHECK(vf_trial_log_step_seconds(&log) < 0);
	vf_trial_log_text(&log, t, strlen(t));
	vf_trial_log_finish(&log);
	CHECK(fabs(vf_trial_log_step_seconds(&log) - 1.5) < 1e-9);
	/* exit 0, step 40 of 50, sample unknown: incomplete */
	struct vf_trial_exit ex = {.status = 0, .end = VF_PROC_EXITED, .expect_steps = 50, .sample = -1};
	struct vf_trial_verdict v;
	vf_trial_classify(&log, &ex, &v);
	CHECK_STR(vf_outcome_name(v.outcome), "incomplete");
	CHECK_CONTAINS(v.evidence, "step 40 of 50");
	/* the step-50 sample proves the end was reached */
	ex.sample = 1;
	vf_trial_classify(&log, &ex, &v);
	CHECK_STR(vf_outcome_name(v.outcome), "ok");
	vf_trial_log_release(&log);
}

/* exit 0 and the sample written, but no step reported at all: a sample
 * alone does not prove a step was trained */
static void test_no_step_with_sample(void)
{
	struct vf_trial_log log;
	vf_trial_log_init(&log, pat);
	const char *t = "loading the model\ndone\n";
	vf_trial_log_text(&log, t, strlen(t));
	vf_trial_log_finish(&log);
	struct vf_trial_exit ex = {.status = 0, .end = VF_PROC_EXITED, .expect_steps = 10, .sample = 1};
	struct vf_trial_verdict v;
	vf_trial_classify(&log, &ex, &v);
	CHECK_STR(vf_outcome_name(v.outcome), "incomplete");
	CHECK_CONTAINS(v.evidence, "no training step was reported");
	CHECK_CONTAINS(v.evidence, "last line: done");
	vf_trial_log_release(&log);
}

static void test_classes(void)
{
	struct {
		const char *text;
		int status;
		enum vf_proc_end end;
		const char *want;
		const char *evidence;
	} cases[] = {
		{"Error: Invalid configuration data: 1 validation error for LtxTrainerConfig\nfoo\n", 1,
		 VF_PROC_EXITED, "config-error", "Invalid configuration data"},
		{"RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't "
		 "allocate memory: you tried to allocate 3000000000 bytes.\n",
		 1, VF_PROC_EXITED, "oom", "DefaultCPUAllocator"},
		{"RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate\n", 1,
		 VF_PROC_EXITED, "oom", "CUBLAS_STATUS_ALLOC_FAILED"},
		{"jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory\n", 1, VF_PROC_EXITED,
		 "oom", "RESOURCE_EXHAUSTED"},
		{"misc/strong_hash.cc:1 NCCL WARN Cuda failure 'out of memory'\n", 1, VF_PROC_EXITED, "oom",
		 "NCCL"},
		{"Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: bad\n", 1,
		 VF_PROC_EXITED, "crash", "ValueError: bad"},
		{"Step 1/50 - Loss: 1.0, LR: 1e-4, Time/Step: 1.00s, Total Time: x\n", 0, VF_PROC_TIMEOUT,
		 "timeout", "timeout"},
		{"hello\n", 0, VF_PROC_STALLED, "stalled", "hello"},
		{"Step 5/50 - Loss: inf, LR: 1e-4, Time/Step: 1.00s, Total Time: x\n", 1, VF_PROC_EXITED, "nan",
		 "Loss: inf"},
		{"{\"vramfit\": {\"step\": 3, \"loss\": \"nan\"}}\n", 0, VF_PROC_EXITED, "nan", "vramfit"},
		{"nothing\n", 0, VF_PROC_EXITED, "incomplete", "no training step"},
		{"", 139, VF_PROC_EXITED, "crash", "signal 11"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct vf_trial_log log;
		vf_trial_log_init(&log, pat);
		vf_trial_log_text(&log, cases[i].text, strlen(cases[i].text));
		vf_trial_log_finish(&log);
		struct vf_trial_exit ex = {.status = cases[i].status, .end = cases[i].end, .expect_steps = 50,
					   .sample = -1};
		struct vf_trial_verdict v;
		vf_trial_classify(&log, &ex, &v);
		CHECK_STR(vf_outcome_name(v.outcome), cases[i].want);
		CHECK_CONTAINS(v.evidence, cases[i].evidence);
		vf_trial_log_release(&log);
	}
}

static void test_remedies_and_names(void)
{
	cJSON *r = vf_trial_remedies(pat, VF_OUTCOME_OOM, NULL);
	CHECK(cJSON_GetArraySize(r) >= 5);
	CHECK_CONTAINS(cJSON_GetArrayItem(r, 0)->valuestring, "gradient checkpointing");
	cJSON_Delete(r);
	r = vf_trial_remedies(pat, VF_OUTCOME_NAN, NULL);
	CHECK_CONTAINS(cJSON_GetArrayItem(r, 0)->valuestring, "bf16");
	cJSON_Delete(r);
	CHECK(vf_trial_remedies(pat, VF_OUTCOME_OK, NULL) == NULL);
	for (int i = 0; i < VF_OUTCOME__COUNT; i++) {
		enum vf_outcome o;
		CHECK(vf_outcome_parse(vf_outcome_name((enum vf_outcome)i), &o) && (int)o == i);
	}
	CHECK(!vf_outcome_parse("bogus", &(enum vf_outcome){0}));
}

static void test_bad_patterns(void)
{
	struct vf_error err = {0};
	struct vf_trial_patterns *p = NULL;
	cJSON *j = cJSON_Parse("{\"step\": {\"pattern\": \"([\", \"groups\": {}}, \"outcomes\": []}");
	CHECK(vf_trial_patterns_from_json(j, "logs.json", &p, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "logs.json: field step.pattern: invalid regular expression");
	CHECK(p == NULL);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"step\": {\"pattern\": \"x\", \"groups\": {\"step\":1,\"total\":2,\"loss\":3,"
			"\"step_seconds\":4}}, \"outcomes\": [{\"class\": \"weird\", \"patterns\": []}]}");
	CHECK(vf_trial_patterns_from_json(j, "logs.json", &p, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "'weird'");
	cJSON_Delete(j);
}

/* A 1 MB line and lines of control bytes do not break the parser. */
static void test_hostile_lines(void)
{
	struct vf_trial_log log;
	vf_trial_log_init(&log, pat);
	size_t n = 1 << 20;
	char *big = malloc(n);
	memset(big, ' ', n);
	memcpy(big + n - 20, "CUDA out of memory", 18);
	vf_trial_log_line(&log, "x", 1);
	vf_trial_log_line(&log, big, n);
	vf_trial_log_line(&log, "\x1b[31m\x01\x02", 7);
	vf_trial_log_finish(&log);
	CHECK(strlen(log.last_line) < VF_TRIAL_EVIDENCE_MAX);
	free(big);
	vf_trial_log_release(&log);
}

int main(void)
{
	struct vf_error err = {0};
	if (vf_trial_patterns_load("ltx2", &pat, &err) != VF_OK) {
		fprintf(stderr, "cannot load patterns: %s\n", err.msg);
		return 1;
	}
	RUN(test_fixture_python_oom);
	RUN(test_fixture_launcher_oom);
	RUN(test_fixture_caught_oom);
	RUN(test_fixture_nan);
	RUN(test_fixture_sigkill);
	RUN(test_rich_log_and_json_lines);
	RUN(test_step_time_few_reports);
	RUN(test_no_step_with_sample);
	RUN(test_classes);
	RUN(test_remedies_and_names);
	RUN(test_bad_patterns);
	RUN(test_hostile_lines);
	vf_trial_patterns_free(pat);
	return vf_test_done();
}
