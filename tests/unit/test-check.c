/* test-check.c - unit tests for the run-config self-check: each rule fails
 * on a config that breaks it, with one item naming the key and the rule,
 * and passes on the test trainer's shipped configs with real paths. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/trainer/check.h"
#include "trainer/check_internal.h"

static char dir[64];
static char model[128], gemma[128], data[128];
static char trainer_dir[1024];

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/vf-check.XXXXXX");
	if (!mkdtemp(dir))
		abort();
	snprintf(model, sizeof model, "%s/ltx-2-19b-dev.safetensors", dir);
	snprintf(gemma, sizeof gemma, "%s/gemma", dir);
	snprintf(data, sizeof data, "%s/data", dir);
	FILE *f = fopen(model, "w");
	fputs("x", f);
	fclose(f);
	mkdir(gemma, 0755);
	mkdir(data, 0755);
	const char *sub[] = {"conditions", "latents", "audio_latents", NULL};
	for (int i = 0; sub[i]; i++) {
		char p[256];
		snprintf(p, sizeof p, "%s/%s", data, sub[i]);
		mkdir(p, 0755);
	}
	snprintf(trainer_dir, sizeof trainer_dir, "%s/tests/fixtures/ltx-trainer", vf_test_env("VF_SOURCE_DIR", "."));
}

static void teardown(void)
{
	unlink(model);
	rmdir(gemma);
	const char *sub[] = {"conditions", "latents", "audio_latents", NULL};
	for (int i = 0; sub[i]; i++) {
		char p[256];
		snprintf(p, sizeof p, "%s/%s", data, sub[i]);
		rmdir(p);
	}
	rmdir(data);
	rmdir(dir);
}

/* Load a fixture config, point its paths at the temp files, apply
 * extra KEY, VALUE pairs (NULL-terminated) and check it. */
static void run_check(const char *cfg, struct vf_check *c, const char *const *sets)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/tests/fixtures/ltx-trainer/configs/%s",
		 vf_test_env("VF_SOURCE_DIR", "."), cfg);
	struct vf_error err = {0};
	struct vf_yamldoc *d = NULL;
	vf_check_init(c);
	CHECK_INT(vf_yamldoc_load_file(path, &d, &err), VF_OK);
	if (!d)
		return;
	CHECK_INT(vf_yamldoc_set(d, "model.model_path", model, &err), VF_OK);
	CHECK_INT(vf_yamldoc_set(d, "model.text_encoder_path", gemma, &err), VF_OK);
	CHECK_INT(vf_yamldoc_set(d, "data.preprocessed_data_root", data, &err), VF_OK);
	for (size_t i = 0; sets && sets[i]; i += 2)
		if (vf_yamldoc_set(d, sets[i], sets[i + 1], &err) != VF_OK)
			fprintf(stderr, "  set %s: %s\n", sets[i], err.msg);
	CHECK_INT(vf_check_config(d, "ltx2", trainer_dir, c, &err), VF_OK);
	vf_yamldoc_free(d);
}

/* Exactly one failure, on key, whose rule contains needle. */
static void expect_one(const char *const *sets, const char *key, const char *needle)
{
	struct vf_check c;
	run_check("t2v_lora.yaml", &c, sets);
	CHECK_INT(c.failures, 1);
	bool found = false;
	for (size_t i = 0; i < c.n; i++) {
		if (c.items[i].level != VF_CHECK_FAIL)
			continue;
		if (strcmp(c.items[i].key, key) == 0 && strstr(c.items[i].rule, needle))
			found = true;
		else
			fprintf(stderr, "  item: %s: %s\n", c.items[i].key, c.items[i].rule);
	}
	if (!found)
		fprintf(stderr, "  expected %s: %s\n", key, needle);
	CHECK(found);
	vf_check_release(&c);
}

static void test_shipped_pass(void)
{
	const char *cfgs[] = {"t2v_lora.yaml", "t2v_lora_low_vram.yaml", "i2v_lora.yaml",
			      "i2v_lora_low_vram.yaml"};
	for (int i = 0; i < 4; i++) {
		struct vf_check c;
		run_check(cfgs[i], &c, NULL);
		CHECK_INT(c.failures, 0);
		CHECK_INT(c.pending, 0);
		for (size_t k = 0; k < c.n; k++)
			fprintf(stderr, "  %s: %s: %s\n", cfgs[i], c.items[k].key, c.items[k].rule);
		vf_check_release(&c);
	}
}

static void test_paths(void)
{
	const char *const s1[] = {"model.model_path", "/nonexistent/ltx.safetensors", NULL};
	expect_one(s1, "model.model_path", "does not exist");
	const char *const s2[] = {"model.model_path", "https://example.com/ltx-2.safetensors", NULL};
	expect_one(s2, "model.model_path", "URL");
	const char *const s3[] = {"model.text_encoder_path", "/etc/passwd", NULL};
	expect_one(s3, "model.text_encoder_path", "not a directory");
	/* the data root may be pending */
	struct vf_check c;
	const char *const s4[] = {"data.preprocessed_data_root", "/nonexistent/.precomputed", NULL};
	run_check("t2v_lora.yaml", &c, s4);
	CHECK_INT(c.failures, 0);
	CHECK_INT(c.pending, 4); /* the root, then conditions/, latents/, audio_latents/ under it */
	if (c.n)
		CHECK_CONTAINS(c.items[0].rule, "pending preprocessing");
	vf_check_release(&c);
}

static void test_dims(void)
{
	const char *const s1[] = {"validation.video_dims", "[961, 544, 89]", NULL};
	expect_one(s1, "validation.video_dims", "width 961");
	const char *const s2[] = {"validation.video_dims", "[960, 540, 89]", NULL};
	expect_one(s2, "validation.video_dims", "height 540");
	const char *const s3[] = {"validation.video_dims", "[960, 544, 88]", NULL};
	expect_one(s3, "validation.video_dims", "frames 88");
}

static void test_rules(void)
{
	const char *const s1[] = {"training_strategy.video.is_generated", "false",
				  "training_strategy.audio.is_generated", "false", NULL};
	expect_one(s1, "training_strategy.video.is_generated", "at least one");
	const char *const s2[] = {"lora", "null", NULL};
	expect_one(s2, "lora", "lora block");
	const char *const s3[] = {"model.training_mode", "full", "acceleration.quantization",
				  "int8-quanto", NULL};
	expect_one(s3, "acceleration.quantization", "not supported with full");
}

static void test_schema(void)
{
	const char *const s1[] = {"optimization.optimizer_type", "sgd", NULL};
	expect_one(s1, "optimization.optimizer_type", "'sgd' is not an allowed value");
	const char *const s2[] = {"acceleration.quantization", "int3-quanto", NULL};
	expect_one(s2, "acceleration.quantization", "not an allowed value (allowed: int8-quanto, int4-quanto, int2-quanto, fp8-quanto, fp8uz-quanto, null)");
	const char *const s3[] = {"acceleration.mixed_precision_mode", "fp8", NULL};
	expect_one(s3, "acceleration.mixed_precision_mode", "not an allowed value");
	const char *const s4[] = {"model.training_mode", "dora", NULL};
	expect_one(s4, "model.training_mode", "not an allowed value");
	const char *const s5[] = {"optimization.bogus_key", "1", NULL};
	expect_one(s5, "optimization.bogus_key", "unknown key");
	const char *const s6[] = {"lora.rank", "\"many\"", NULL};
	expect_one(s6, "lora.rank", "expected int, found the string 'many'");
	const char *const s7[] = {"optimization.steps", "0", NULL};
	expect_one(s7, "optimization.steps", "below the minimum");
	const char *const s8[] = {"extra_top", "{a: 1}", NULL};
	expect_one(s8, "extra_top", "unknown key");
}

static void test_run_dir(void)
{
	struct vf_check c;
	vf_check_init(&c);
	struct vf_error err = {0};
	CHECK_INT(vf_check_run(dir, "ltx2", trainer_dir, &c, &err), VF_ENOTFOUND);
	CHECK_CONTAINS(err.msg, "config.yaml");
	vf_check_release(&c);
}

/* pydantic's error locations mapped back to config keys (pycheck.c). */
static void test_map_loc(void)
{
	static const char y[] = "training_strategy:\n  name: flexible\n  video:\n    latents_dri: x\n"
				"data: {}\nmodel:\n  model_path: a\nlist:\n  - {a: 1}\n";
	struct vf_yamldoc *d = NULL;
	struct vf_error err = {0};
	CHECK_INT(vf_yamldoc_load_mem(y, sizeof y - 1, "m.yaml", &d, &err), VF_OK);
	if (!d)
		return;
	static const struct {
		const char *loc;
		bool missing;
		const char *key;
	} cases[] = {
		{"training_strategy.flexible.video.latents_dri", false, "training_strategy.video.latents_dri"},
		{"data.preprocessed_data_root", true, "data.preprocessed_data_root"},
		{"data.preprocessed_data_root", false, "data"},
		{"model.model_path", false, "model.model_path"},
		{"", false, "(config)"},
		{"seed", true, "seed"},
		{"validation.samples.0.prompt", true, "(config)"}, /* nothing of it is there: no invented key */
		{"training_strategy.flexible.video.is_generated", true, "training_strategy.video.is_generated"},
		{"training_strategy.flexible.name2", true, "training_strategy"}, /* after a union tag: the member */
		{"list.0.b", true, "list.0.b"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char key[256];
		vf__check_map_loc(d, cases[i].loc, cases[i].missing, key, sizeof key);
		if (strcmp(key, cases[i].key) != 0)
			fprintf(stderr, "  loc %s: got %s, expected %s\n", cases[i].loc, key, cases[i].key);
		CHECK(strcmp(key, cases[i].key) == 0);
	}
	vf_yamldoc_free(d);
}

int main(void)
{
	setup();
	RUN(test_shipped_pass);
	RUN(test_paths);
	RUN(test_dims);
	RUN(test_rules);
	RUN(test_schema);
	RUN(test_run_dir);
	RUN(test_map_loc);
	teardown();
	return vf_test_done();
}
