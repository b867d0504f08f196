/* test-run.c - lib/run: the state file's checks, the plan's command split
 * into words, the progress of a preprocessing line, and the remedy a
 * recovery picks (the cheapest not set that the estimate says fits; one
 * predicted over the card passed over, with why). */
#include <string.h>

#include "vf_test.h"
#include "vramfit/run/run.h"

static struct vf_trial_patterns *pat;

static void test_state(void)
{
	cJSON *st = NULL;
	struct vf_error err = {0};
	const char *ok = "{\"version\": 1, \"stage\": \"train\", \"status\": \"stopped\", \"attempts\": [{}], "
			 "\"recoveries\": [], \"extra\": 5}";
	CHECK(vf_run_state_parse(ok, strlen(ok), "run.json", &st, &err) == VF_OK);
	CHECK(vf_run_state_stage(st) == VF_RUN_TRAIN);
	for (int i = 0; i < VF_RUN_MAX_ENTRIES + 5; i++)
		vf_run_state_append(st, "attempts", cJSON_CreateObject());
	CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(st, "attempts")), VF_RUN_MAX_ENTRIES);
	vf_run_state_set(st, VF_RUN_DONE, "done", NULL);
	CHECK(vf_run_state_stage(st) == VF_RUN_DONE);
	cJSON_Delete(st);
	static const char *const bad[][2] = {
		{"[1]", "run.json: expected a JSON object"},
		{"{\"version\": 2, \"stage\": \"train\", \"attempts\": [], \"recoveries\": []}", "field version"},
		{"{\"version\": 1, \"stage\": \"bake\", \"attempts\": [], \"recoveries\": []}", "field stage"},
		{"{\"version\": 1, \"stage\": \"tune\", \"attempts\": {}, \"recoveries\": []}", "field attempts"},
		{"{\"version\": 1, \"stage\": \"tune\", \"attempts\": [1], \"recoveries\": []}", "expected objects"},
		{"{\"version\": 1, \"stage\": \"tune\", \"attempts\": [], \"recoveries\": [], \"note\": 3}", "field note"},
		{"{\"version\": 1, \"stage\": \"tune\"", "not valid JSON"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		st = (cJSON *)1;
		CHECK(vf_run_state_parse(bad[i][0], strlen(bad[i][0]), "run.json", &st, &err) != VF_OK);
		CHECK(st == NULL);
		CHECK_CONTAINS(err.msg, bad[i][1]);
	}
}

static void test_split_and_progress(void)
{
	char *store = NULL;
	const char *argv[8];
	struct vf_error err = {0};
	CHECK(vf_run_split_command("uv run python 'a b/ds.json' --x \"c\"", &store, argv, 8, &err) == VF_OK);
	CHECK_STR(argv[3], "a b/ds.json");
	CHECK_STR(argv[5], "c");
	CHECK(argv[6] == NULL);
	free(store);
	CHECK(vf_run_split_command("uv $(rm -rf x)", &store, argv, 8, &err) != VF_OK);
	CHECK(vf_run_split_command("a b c d e f g h i", &store, argv, 8, &err) != VF_OK);
	CHECK(vf_run_split_command("   ", &store, argv, 8, &err) != VF_OK);
	int d = -1, t = -1;
	CHECK(vf_run_progress("Processing 3/10: c3.mp4 (1.2 files/s)", &d, &t) && d == 3 && t == 10);
	CHECK(!vf_run_progress("date 12/ and /5", &d, &t));
	CHECK(!vf_run_progress("11/10", &d, &t));
}

/* The stand-in estimate: 90 GB with adamw, 60 GB with adamw8bit (over an
 * 80 GB card, then under), unknown for anything else. */
static vf_status fake_predict(void *ctx, const struct vf_yamldoc *d, int64_t *bytes, struct vf_error *err)
{
	(void)ctx;
	(void)err;
	const char *opt = NULL, *q = NULL;
	vf_yamldoc_get_str(d, "optimization.optimizer_type", &opt, NULL);
	vf_yamldoc_get_str(d, "acceleration.quantization", &q, NULL);
	if (q && strcmp(q, "int8-quanto") == 0)
		*bytes = 50ll << 30;
	else
		*bytes = opt && strcmp(opt, "adamw8bit") == 0 ? 85ll << 30 : 90ll << 30;
	return VF_OK;
}

static void test_pick_remedy(void)
{
	const char *yaml = "optimization:\n  batch_size: 2\n  gradient_accumulation_steps: 2\n"
			   "  optimizer_type: \"adamw\"\n  enable_gradient_checkpointing: true\n"
			   "acceleration:\n  quantization: null\nlora:\n  rank: 32\n  alpha: 32\n";
	struct vf_yamldoc *d = NULL;
	struct vf_error err = {0};
	CHECK(vf_yamldoc_load_mem(yaml, strlen(yaml), "config.yaml", &d, &err) == VF_OK);
	struct vf_run_remedy rm;
	/* no estimate: the cheapest not set (checkpointing is on): batch 1, accumulation 4 */
	CHECK(vf_run_pick_remedy(pat, VF_OUTCOME_OOM, d, NULL, NULL, 80ll << 30, &rm, &err) == VF_OK);
	CHECK_STR(cJSON_GetObjectItemCaseSensitive(rm.set, "optimization.batch_size")->valuestring, "1");
	CHECK_STR(cJSON_GetObjectItemCaseSensitive(rm.set, "optimization.gradient_accumulation_steps")->valuestring, "4");
	CHECK(rm.predicted_peak_bytes == -1);
	cJSON_Delete(rm.set);
	vf_yamldoc_set(d, "optimization.batch_size", "1", NULL);
	/* with the estimate: adamw8bit predicted over the card is passed over, int8-quanto fits */
	CHECK(vf_run_pick_remedy(pat, VF_OUTCOME_OOM, d, fake_predict, NULL, 80ll << 30, &rm, &err) == VF_OK);
	CHECK_STR(cJSON_GetObjectItemCaseSensitive(rm.set, "acceleration.quantization")->valuestring, "\"int8-quanto\"");
	CHECK(rm.predicted_peak_bytes == 50ll << 30);
	CHECK_CONTAINS(rm.skipped, "optimization.optimizer_type: adamw8bit (predicted 85.0 GiB");
	cJSON_Delete(rm.set);
	/* a card too small for anything: none left, each named */
	CHECK(vf_run_pick_remedy(pat, VF_OUTCOME_OOM, d, fake_predict, NULL, 10ll << 30, &rm, &err) == VF_ENOTFOUND);
	CHECK_CONTAINS(err.msg, "no oom remedy left");
	CHECK_CONTAINS(err.msg, "lower the LoRA rank");
	/* a NaN has no remedy vramfit applies */
	CHECK(vf_run_pick_remedy(pat, VF_OUTCOME_NAN, d, NULL, NULL, 0, &rm, &err) == VF_ENOTFOUND);
	vf_yamldoc_free(d);
}

int main(void)
{
	struct vf_error err = {0};
	if (vf_trial_patterns_load("ltx2", &pat, &err) != VF_OK) {
		fprintf(stderr, "cannot load patterns: %s\n", err.msg);
		return 1;
	}
	RUN(test_state);
	RUN(test_split_and_progress);
	RUN(test_pick_remedy);
	vf_trial_patterns_free(pat);
	return vf_test_done();
}
