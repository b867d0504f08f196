/* test-model.c - vf_model_load on every layout: catalog ids, config.json,
 * the fixture checkpoints (counts of ../shared/fixtures/models/EXPECTED.json),
 * inference without config.json, and the inspect JSON. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/buf.h"
#include "vramfit/json.h"
#include "vramfit/model.h"

static char fixtures[1024];

static const char *fx(const char *rel)
{
	static char buf[4][1200];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", fixtures, rel);
	return buf[k];
}

static void test_catalog_id(void)
{
	struct vf_model *m = NULL;
	struct vf_error err = {0};
	CHECK(vf_model_load("llama2-7b", &m, &err) == VF_OK);
	CHECK_STR(m ? m->format : NULL, "catalog");
	CHECK(m && m->params == 6738415616LL && m->has_arch && m->has_groups);
	CHECK(m && m->entry && m->arch.hidden == 4096);
	CHECK(m && m->files == -1);
	vf_model_free(m);
	m = NULL;
	CHECK(vf_model_load("no-such-model-xyz", &m, &err) == VF_ENOTFOUND);
	CHECK(m == NULL);
	CHECK_CONTAINS(err.msg, "no-such-model-xyz: no such file, directory or catalog model");
}

static void test_config_file(void)
{
	struct vf_model *m = NULL;
	struct vf_error err = {0};
	CHECK(vf_model_load(fx("tiny-llama-bf16/config.json"), &m, &err) == VF_OK);
	CHECK_STR(m ? m->format : NULL, "config");
	CHECK(m && m->params == 218944);
	CHECK_STR(m ? m->arch.source : NULL, "config.json");
	vf_model_free(m);
}

int main(void)
{
	snprintf(fixtures, sizeof fixtures, "%s/fixtures/models",
		 vf_test_env("VF_SHARED_DIR", "../shared"));
	setenv("XDG_CONFIG_HOME", "/nonexistent-vf-test", 1);
	RUN(test_catalog_id);
	RUN(test_config_file);
	vf_models_release();
	return vf_test_done();
}
