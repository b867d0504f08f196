/* test-run.c - lib/run: the state file's checks, the plan's command split
 * into words, the progress of a preprocessing line, and the remedy a
 * recovery picks (the cheapest not set that the estimate says fits; one
 * predicted over the card passed over, with why), the dataset file's
 * checks, and the trainer's resume key (the profile's, checked against
 * the checkout's schema). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/run/run.h"
#include "vramfit/trainer/profile.h"

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
		/* found by fuzz-run-state: the readers took the first stage, a
		 * rewrite deleted it and left the second */
		{"{\"version\": 1, \"stage\": \"train\", \"attempts\": [], \"recoveries\": [], "
		 "\"stage\": \"done\"}",
		 "run.json: field stage appears twice"},
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

/* The dataset in the trainer's layout: CSV (quoted fields, "" for a
 * quote, CRLF), JSON list, JSONL; an error names the file, row, field. */
static void test_dataset(void)
{
	struct vf_error err = {0};
	int rows = -1;
	const char *csv = "id,caption,media_path\r\n1,\"a cat, \"\"grey\"\"\",clips/a.mp4\r\n2,\"two\nlines\",b.mp4\n";
	CHECK(vf_run_dataset_check("d.csv", csv, strlen(csv), NULL, &rows, &err) == VF_OK);
	CHECK_INT(rows, 2);
	const char *jsonl = "{\"caption\": \"a\", \"video\": \"a.mp4\"}\n\n{\"caption\": \"b\", \"video\": \"b.mp4\"}";
	CHECK(vf_run_dataset_check("d.jsonl", jsonl, strlen(jsonl), NULL, &rows, &err) == VF_OK);
	CHECK_INT(rows, 2);
	static const char *const bad[][3] = {
		{"d.csv", "caption,media_path\nx,\n", "d.csv: row 1: field media_path: expected the media file's path"},
		{"d.csv", "caption,media_path\n\"x,a\n", "d.csv: line 2: a quote is not closed"},
		{"d.csv", "text,video\nx,a.mp4\n", "d.csv: row 1: field caption"},
		{"d.json", "{\"caption\": \"a\"}", "d.json: expected a JSON list of objects"},
		{"d.json", "[{\"caption\": \"a\", \"video\": \"a\"}, {\"caption\": 3, \"video\": \"b\"}]",
		 "d.json: row 2: field caption"},
		{"d.json", "[]", "d.json: no rows"},
		{"d.jsonl", "{\"caption\": \"a\", \"media_path\": \"a\"}\n{oops\n", "d.jsonl: line 2: not valid JSON"},
		{"d.txt", "x", "d.txt: expected a .csv, .json or .jsonl file"},
		{"d.json", "[{\"caption\": \"a\", \"video\": \"a\"}] [1]",
		 "d.json: invalid JSON: data after the top value at byte 33"},
		{"d.jsonl", "{\"caption\": \"a\", \"media_path\": \"a\"} {\"x\": 1}\n",
		 "d.jsonl: line 1: not valid JSON (invalid JSON: data after the top value at byte 36)"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK(vf_run_dataset_check(bad[i][0], bad[i][1], strlen(bad[i][1]), NULL, &rows, &err) != VF_OK);
		CHECK_CONTAINS(err.msg, bad[i][2]);
	}
	/* the plan's command pointed at another dataset, outputs kept in the run */
	char *cmd = NULL;
	CHECK(vf_run_preprocess_command("uv run python p.py /r/dataset/dataset.json --model-path '/m x'",
					"/r/dataset/dataset.json", "/d/it's.csv", "--output-dir", "/r/dataset/.precomputed",
					&cmd, &err) == VF_OK);
	CHECK_STR(cmd, "uv run python p.py '/d/it'\\''s.csv' --model-path '/m x' --output-dir /r/dataset/.precomputed");
	free(cmd);
	CHECK(vf_run_preprocess_command("uv run python p.py other.json", "/r/dataset/dataset.json", "/d/a.csv", NULL,
					NULL, &cmd, &err) != VF_OK);
	CHECK_CONTAINS(err.msg, "does not name preprocess.dataset");
}

/* A trainer checkout in a temp dir whose config module defines
 * ModelConfig's resume field as field (the profile's schema.file). */
static void write_trainer(char *dir, size_t n, const char *field)
{
	snprintf(dir, n, "/tmp/vf-resume.XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	char p[1200];
	snprintf(p, sizeof p, "%s/src", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/src/ltx_trainer", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/src/ltx_trainer/config.py", dir);
	FILE *f = fopen(p, "w");
	CHECK(f != NULL);
	fprintf(f, "from pydantic import BaseModel\n\n\nclass ModelConfig(BaseModel):\n"
		   "    model_path: str\n    %s: str | None = None\n\n\n"
		   "class LtxTrainerConfig(BaseModel):\n    model: ModelConfig\n",
		field);
	fclose(f);
}

static void remove_trainer(const char *dir)
{
	char p[1200];
	snprintf(p, sizeof p, "%s/src/ltx_trainer/config.py", dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/src/ltx_trainer", dir);
	rmdir(p);
	snprintf(p, sizeof p, "%s/src", dir);
	rmdir(p);
	rmdir(dir);
}

static void test_resume(void)
{
	cJSON *configs = NULL;
	struct vf_error err = {0};
	CHECK(vf_profile_part("ltx2", "configs", &configs, &err) == VF_OK);
	struct vf_run_resume rs;
	char td[256], v[512];
	/* the profile's key, on a checkout whose schema has it: checked */
	write_trainer(td, sizeof td, "load_checkpoint");
	CHECK(vf_run_resume_load(td, configs, &rs, &err) == VF_OK);
	CHECK_STR(rs.key, "model.load_checkpoint");
	CHECK(rs.takes_dir);
	CHECK_STR(rs.unchecked, "");
	vf_run_resume_value(&rs, "/r/outputs/checkpoints/lora_weights_step_00060.safetensors", false, v, sizeof v);
	CHECK_STR(v, "/r/outputs/checkpoints/lora_weights_step_00060.safetensors");
	vf_run_resume_value(&rs, "/r/outputs/checkpoints/lora_weights_step_00060.safetensors", true, v, sizeof v);
	CHECK_STR(v, "/r/outputs/checkpoints");
	remove_trainer(td);
	/* a checkout whose schema has another name for it: named, not written */
	write_trainer(td, sizeof td, "resume_from");
	CHECK(vf_run_resume_load(td, configs, &rs, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "src/ltx_trainer/config.py: LtxTrainerConfig has no field model.load_checkpoint");
	CHECK_CONTAINS(err.msg, td);
	CHECK_CONTAINS(err.msg, "configs.json checkpoints.resume_key");
	remove_trainer(td);
	/* no schema to read (a configs-only checkout): used, and said unchecked */
	CHECK(vf_run_resume_load("/nonexistent-trainer", configs, &rs, &err) == VF_OK);
	CHECK_STR(rs.key, "model.load_checkpoint");
	CHECK(rs.unchecked[0] != '\0');
	/* a profile where the key takes no directory: always the file */
	cJSON *ck = cJSON_GetObjectItemCaseSensitive(configs, "checkpoints");
	cJSON_ReplaceItemInObjectCaseSensitive(ck, "resume_takes_dir", cJSON_CreateFalse());
	CHECK(vf_run_resume_load("/nonexistent-trainer", configs, &rs, &err) == VF_OK);
	vf_run_resume_value(&rs, "/r/c/x_step_00060.safetensors", true, v, sizeof v);
	CHECK_STR(v, "/r/c/x_step_00060.safetensors");
	/* a profile with no resume key: an error naming the field */
	cJSON_DeleteItemFromObjectCaseSensitive(ck, "resume_key");
	CHECK(vf_run_resume_load("/nonexistent-trainer", configs, &rs, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "configs.json: checkpoints.resume_key");
	cJSON_Delete(configs);
}

/* The sanity sample's folder: the profile's sweep.json trial_config.data_root
 * below {run}/, made with the folders above it. */
static void test_sample_dir(void)
{
	cJSON *sweep = NULL;
	struct vf_error err = {0};
	char rel[256];
	CHECK(vf_profile_part("ltx2", "sweep", &sweep, &err) == VF_OK);
	CHECK(vf_run_sample_dir(sweep, rel, sizeof rel, &err) == VF_OK);
	CHECK_STR(rel, "overfit/.precomputed");
	cJSON *tc = cJSON_GetObjectItemCaseSensitive(sweep, "trial_config");
	static const char *const bad[] = {"/abs/.precomputed", "{run}/../outside", "{run}/a/./b", "{run}/",
					  "{run}/a//b", "{run}/{n}/x", "{run}/a/", "{run}//a", "overfit/.precomputed"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cJSON_ReplaceItemInObjectCaseSensitive(tc, "data_root", cJSON_CreateString(bad[i]));
		CHECK(vf_run_sample_dir(sweep, rel, sizeof rel, &err) == VF_ERR);
		CHECK_CONTAINS(err.msg, "sweep.json: trial_config.data_root: expected a folder below {run}/");
		CHECK_CONTAINS(err.msg, bad[i]);
	}
	cJSON_DeleteItemFromObjectCaseSensitive(tc, "data_root");
	CHECK(vf_run_sample_dir(sweep, rel, sizeof rel, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "got none");
	cJSON_ReplaceItemInObjectCaseSensitive(sweep, "trial_config", cJSON_CreateObject());
	cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(sweep, "trial_config"), "data_root",
				"{run}/sanity/one-sample");
	CHECK(vf_run_sample_dir(sweep, rel, sizeof rel, &err) == VF_OK);
	CHECK_STR(rel, "sanity/one-sample");
	cJSON_Delete(sweep);
	/* the first sample of each subfolder copied there, folders made */
	char run[] = "/tmp/vf-sample.XXXXXX", p[512];
	CHECK(mkdtemp(run) != NULL);
	const char *const files[] = {"data", "data/latents", "data/latents/a.pt", "data/latents/b.pt",
				     "data/conditions", "data/conditions/a.pt", NULL};
	for (int i = 0; files[i]; i++) {
		snprintf(p, sizeof p, "%s/%s", run, files[i]);
		if (strchr(files[i], '.')) {
			FILE *f = fopen(p, "w");
			CHECK(f != NULL);
			fputs(files[i], f);
			fclose(f);
		} else {
			mkdir(p, 0755);
		}
	}
	snprintf(p, sizeof p, "%s/data", run);
	int copied = 0;
	CHECK(vf_run_sanity_sample(run, p, "sanity/one-sample", &copied, &err) == VF_OK);
	CHECK_INT(copied, 2);
	const char *const want[] = {"sanity/one-sample/latents/a.pt", "sanity/one-sample/conditions/a.pt", NULL};
	struct stat sb;
	for (int i = 0; want[i]; i++) {
		snprintf(p, sizeof p, "%s/%s", run, want[i]);
		CHECK(stat(p, &sb) == 0 && S_ISREG(sb.st_mode));
		unlink(p);
	}
	snprintf(p, sizeof p, "%s/sanity/one-sample/latents/b.pt", run);
	CHECK(stat(p, &sb) != 0);
	snprintf(p, sizeof p, "%s/overfit", run);
	CHECK(stat(p, &sb) != 0);
	const char *const dirs[] = {"sanity/one-sample/latents", "sanity/one-sample/conditions", "sanity/one-sample",
				    "sanity", "data/latents/a.pt", "data/latents/b.pt", "data/conditions/a.pt",
				    "data/latents", "data/conditions", "data", NULL};
	for (int i = 0; dirs[i]; i++) {
		snprintf(p, sizeof p, "%s/%s", run, dirs[i]);
		CHECK(remove(p) == 0);
	}
	CHECK(rmdir(run) == 0);
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
	RUN(test_dataset);
	RUN(test_resume);
	RUN(test_sample_dir);
	vf_trial_patterns_free(pat);
	return vf_test_done();
}
