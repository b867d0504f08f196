/* test-plan.c - unit tests for the planner (lib/trainer/plan.c) under the
 * sanitizers: a plan on the test trainer with simulated GPUs, the gate,
 * an existing run directory, full fine-tune rules, model discovery and the
 * JSON contract. The end-to-end acceptance is tests/cli/plan.sh. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/trainer/plan.h"

static char tmp[64], model[160], gemma[160], ws[160], trainer[1024];

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	fwrite(data, 1, len, f);
	fclose(f);
}

static void setup(void)
{
	snprintf(tmp, sizeof tmp, "/tmp/vf-plan.XXXXXX");
	if (!mkdtemp(tmp))
		abort();
	/* a header-only safetensors file: u64 length, JSON, 8 data bytes */
	const char *h = "{\"w\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[0,8]}}";
	size_t hl = strlen(h);
	unsigned char buf[256] = {0};
	for (int i = 0; i < 8; i++)
		buf[i] = (unsigned char)((uint64_t)hl >> (8 * i));
	memcpy(buf + 8, h, hl);
	snprintf(model, sizeof model, "%s/ltx-2-19b-dev.safetensors", tmp);
	write_file(model, buf, 8 + hl + 8);
	snprintf(gemma, sizeof gemma, "%s/gemma-3-12b", tmp);
	mkdir(gemma, 0755);
	char cj[200];
	snprintf(cj, sizeof cj, "%s/config.json", gemma);
	write_file(cj, "{}", 2);
	snprintf(ws, sizeof ws, "%s/ws", tmp);
	snprintf(trainer, sizeof trainer, "%s/tests/fixtures/ltx-trainer", vf_test_env("VF_SOURCE_DIR", "."));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "  could not remove %s\n", tmp);
}

static void opts(struct vf_plan_opts *o, const char *run)
{
	memset(o, 0, sizeof *o);
	o->trainer_dir = trainer;
	o->workspace = ws;
	o->model = model;
	o->text_encoder = gemma;
	o->run_name = run;
	o->dataset = "cats";
	o->simulated = true;
}

static vf_status make(const struct vf_plan_opts *o, const char *spec, struct vf_plan *p,
		      struct vf_error *err)
{
	struct vf_gpu_set g;
	vf_gpu_set_init(&g);
	vf_status st = vf_gpu_set_add_spec(&g, spec, err);
	vf_plan_init(p);
	if (st == VF_OK)
		st = vf_plan_make(o, &g, p, err);
	vf_gpu_set_release(&g);
	return st;
}

static void test_standard(void)
{
	struct vf_plan_opts o;
	opts(&o, NULL);
	o.now = 1764412345; /* fixed clock for the run name */
	struct vf_plan p;
	struct vf_error err = {0};
	CHECK_INT(make(&o, "h100-80gb", &p, &err), VF_OK);
	CHECK_INT(p.block, VF_PLAN_GO);
	CHECK_STR(p.tier.name, "80GB+ tier");
	CHECK(strncmp(p.run_name, "t2v-cats-2025", 13) == 0 && strlen(p.run_name) == 22);
	CHECK_INT(p.npatches, 4);
	CHECK_INT(p.check.failures, 0);
	CHECK_INT(p.check.pending, 4); /* the data root, and conditions/, latents/, audio_latents/ under it */
	CHECK_CONTAINS(p.launch, "uv run python scripts/train.py ");
	CHECK_CONTAINS(p.plan_md, "## Cost / Time Estimate");
	CHECK_CONTAINS(p.plan_md, "x 1, 80GB");
	CHECK(p.has_estimate);
	CHECK(p.estimate.peak_bytes > 0 && p.estimate.step_seconds > 0);
	CHECK_CONTAINS(p.plan_md, "**Estimate** from vramfit's model");
	/* nothing was written by make */
	CHECK(access(ws, F_OK) != 0);
	CHECK_INT(vf_plan_write(&p, &err), VF_OK);
	CHECK(access(p.config_path, F_OK) == 0 && access(p.plan_path, F_OK) == 0);
	cJSON *j = vf_plan_to_json(&p);
	CHECK_STR(cJSON_GetObjectItem(j, "status")->valuestring, "go");
	CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(j, "patches")), 4);
	cJSON_Delete(j);
	vf_plan_release(&p);

	/* the same run again: exists, listed, not overwritten */
	CHECK_INT(make(&o, "h100-80gb", &p, &err), VF_OK);
	CHECK_INT(p.block, VF_PLAN_EXISTS);
	CHECK_CONTAINS(p.block_msg, "never overwritten");
	CHECK(p.nexisting >= 6);
	CHECK_INT(vf_plan_write(&p, &err), VF_ERR);
	vf_plan_release(&p);
}

static void test_gate_and_full(void)
{
	struct vf_plan_opts o;
	opts(&o, "gate");
	struct vf_plan p;
	struct vf_error err = {0};
	CHECK_INT(make(&o, "rtx-4090", &p, &err), VF_OK);
	CHECK_INT(p.block, VF_PLAN_GATED);
	CHECK_CONTAINS(p.block_msg, "32 GB");
	CHECK(!p.memory_gate);
	cJSON *j = vf_plan_to_json(&p);
	CHECK_STR(cJSON_GetObjectItem(j, "status")->valuestring, "gated");
	CHECK_STR(cJSON_GetObjectItem(j, "gate")->valuestring, "tier");
	cJSON_Delete(j);
	vf_plan_release(&p);
	o.accept_risk = true;
	CHECK_INT(make(&o, "rtx-4090", &p, &err), VF_OK);
	CHECK_INT(p.block, VF_PLAN_GO);
	CHECK_CONTAINS(p.plan_md, "--accept-risk");
	CHECK_CONTAINS(p.shipped_config, "t2v_lora_low_vram.yaml");
	vf_plan_release(&p);

	opts(&o, "full");
	o.training_mode = "full";
	/* issue 30: fp32 transformer for a full fine-tune: does not fit 4 x 80 GB
	 * (field reports), and the plan's own estimate says so: gated */
	CHECK_INT(make(&o, "h100-80gb:4", &p, &err), VF_OK);
	CHECK_INT(p.block, VF_PLAN_GATED);
	CHECK(p.memory_gate);
	CHECK_CONTAINS(p.block_msg, "the estimate puts the full training's peak at");
	CHECK_CONTAINS(p.block_msg, "GiB per GPU against the 79.6 GiB of each NVIDIA H100");
	CHECK_CONTAINS(p.block_msg, "where the largest term, ");
	CHECK_CONTAINS(p.block_msg, "it runs out first in the");
	CHECK_CONTAINS(p.block_msg, "--training-mode lora");
	CHECK_CONTAINS(p.block_msg, "more or larger GPUs");
	CHECK_CONTAINS(p.block_msg, "--accept-risk");
	CHECK(p.plan_md == NULL);
	j = vf_plan_to_json(&p);
	CHECK_STR(cJSON_GetObjectItem(j, "status")->valuestring, "gated");
	CHECK_STR(cJSON_GetObjectItem(j, "gate")->valuestring, "memory");
	CHECK_STR(cJSON_GetObjectItem(j, "message")->valuestring, p.block_msg);
	cJSON *je = cJSON_GetObjectItem(j, "estimate");
	CHECK(je && cJSON_IsFalse(cJSON_GetObjectItem(je, "fits")));
	CHECK(cJSON_GetObjectItem(j, "config") == NULL);
	cJSON_Delete(j);
	CHECK_INT(vf_plan_write(&p, &err), VF_ERR);
	vf_error_clear(&err);
	vf_plan_release(&p);
	/* --accept-risk: written, the warning kept, and the Assumptions say so */
	o.accept_risk = true;
	CHECK_INT(make(&o, "h100-80gb:4", &p, &err), VF_OK);
	CHECK_INT(p.block, VF_PLAN_GO);
	CHECK_CONTAINS(p.launch, "--config_file configs/accelerate/fsdp.yaml --num_processes 4");
	bool b = false;
	CHECK_INT(vf_yamldoc_get_bool(p.config, "acceleration.offload_optimizer_during_validation", &b, &err),
		  VF_OK);
	CHECK(b);
	CHECK_INT(vf_yaml_node_kind(vf_yamldoc_find(p.config, "acceleration.quantization")), VF_YAML_NULL);
	CHECK_INT(p.nwarnings, 1);
	CHECK_CONTAINS(p.warnings[0], "would first run out in the");
	CHECK_CONTAINS(p.plan_md, "The estimate says the training does not fit");
	CHECK_CONTAINS(p.plan_md, "at your own risk (--accept-risk)");
	j = vf_plan_to_json(&p);
	CHECK_STR(cJSON_GetObjectItem(j, "status")->valuestring, "go");
	CHECK(cJSON_GetObjectItem(j, "gate") == NULL);
	cJSON_Delete(j);
	vf_plan_release(&p);
	/* a full fine-tune the estimate fits stays go */
	o.accept_risk = false;
	CHECK_INT(make(&o, "h200:4", &p, &err), VF_OK);
	CHECK_INT(p.block, VF_PLAN_GO);
	CHECK(!p.memory_gate && p.has_estimate);
	CHECK(vf_estimate_fits(&p.estimate, p.gpu_spec, NULL));
	vf_plan_release(&p);
	CHECK_INT(make(&o, "rtx-a6000", &p, &err), VF_OK);
	CHECK_INT(p.block, VF_PLAN_GATED);
	CHECK(p.memory_gate);
	vf_plan_release(&p);
	o.accept_risk = true;
	CHECK_INT(make(&o, "rtx-a6000", &p, &err), VF_OK);
	CHECK(p.nwarnings >= 2); /* + the estimate's "does not fit" */
	CHECK_CONTAINS(p.warnings[0], "unlikely to fit");
	CHECK_CONTAINS(p.warnings[1], "LoRA alternative");
	CHECK_INT(vf_yaml_node_kind(vf_yamldoc_find(p.config, "acceleration.quantization")), VF_YAML_NULL);
	vf_plan_release(&p);
}

static void test_errors(void)
{
	struct vf_plan_opts o;
	opts(&o, "err");
	struct vf_plan p;
	struct vf_error err = {0};
	o.model = "https://example.com/ltx-2.safetensors";
	CHECK_INT(make(&o, "h100-80gb", &p, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "URLs are refused");
	vf_plan_release(&p);
	o.model = gemma; /* a directory, not a checkpoint */
	CHECK_INT(make(&o, "h100-80gb", &p, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "gemma-3-12b");
	vf_plan_release(&p);
	opts(&o, "../up");
	CHECK_INT(make(&o, "h100-80gb", &p, &err), VF_EUSAGE);
	vf_plan_release(&p);
	vf_plan_init(&p);
	opts(&o, "none");
	CHECK_INT(vf_plan_make(&o, NULL, &p, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "--gpu");
	vf_plan_release(&p);
	CHECK(vf_plan_is_url("s3://bucket/x"));
	CHECK(vf_plan_is_url("http://x"));
	CHECK(!vf_plan_is_url("/models/a://b"));
	CHECK(!vf_plan_is_url("models/ltx-2.safetensors"));
}

static void test_discovery(void)
{
	struct vf_plan_opts o;
	opts(&o, "disc");
	o.model = NULL;
	o.text_encoder = NULL;
	setenv("LTX_MODELS_DIR", tmp, 1);
	setenv("HOME", tmp, 1);
	struct vf_plan p;
	struct vf_error err = {0};
	CHECK_INT(make(&o, "h100-80gb", &p, &err), VF_OK);
	CHECK_STR(p.model, model);
	CHECK_STR(p.text_encoder, gemma);
	CHECK_STR(p.model_id, "ltx-2-19b");
	vf_plan_release(&p);
	char vae[200];
	snprintf(vae, sizeof vae, "%s/ltx-2-19b-vae.safetensors", tmp);
	write_file(vae, "x", 1); /* excluded by name: never read */
	CHECK_INT(make(&o, "h100-80gb", &p, &err), VF_OK);
	vf_plan_release(&p);
	char second[200];
	snprintf(second, sizeof second, "%s/LTX-2.3-22b.safetensors", tmp);
	write_file(second, "x", 1);
	CHECK_INT(make(&o, "h100-80gb", &p, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "several");
	CHECK_CONTAINS(err.msg, "LTX-2.3-22b.safetensors");
	vf_plan_release(&p);
	unlink(second);
	unlink(vae);
	unsetenv("LTX_MODELS_DIR");
}

int main(void)
{
	setup();
	RUN(test_standard);
	RUN(test_gate_and_full);
	RUN(test_errors);
	RUN(test_discovery);
	teardown();
	return vf_test_done();
}
