/* test-tier.c - VRAM tier decisions from data/profiles/ltx2/tiers.json
 * (../shared/ltx2/TRAINER.md section 1): the smallest GPU decides, the gate
 * below 32 GB, the en-dash tier name, the gap rule, configs per mode. */
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/trainer/tier.h"

/* Decide for a list of --gpu specs (NULL-terminated). */
static vf_status decide(const char *mode, struct vf_tier *t, struct vf_error *err, ...)
{
	struct vf_gpu_set s;
	vf_gpu_set_init(&s);
	va_list ap;
	va_start(ap, err);
	for (const char *spec; (spec = va_arg(ap, const char *)) != NULL;)
		if (vf_gpu_set_add_spec(&s, spec, err) != VF_OK)
			fprintf(stderr, "  bad spec %s: %s\n", spec, err->msg);
	va_end(ap);
	vf_status st = vf_tier_decide(&s, NULL, mode, t, err);
	vf_gpu_set_release(&s);
	return st;
}

static void test_tiers(void)
{
	struct vf_tier t;
	struct vf_error err = {0};
	CHECK_INT(decide(NULL, &t, &err, "h200", NULL), VF_OK);
	CHECK_STR(t.name, "80GB+ tier");
	CHECK_INT(t.per_gpu_gb, 141);
	CHECK_INT(t.gpu_count, 1);
	CHECK(!t.gated && !t.gap);
	CHECK_STR(t.config, "t2v_lora.yaml");
	CHECK_STR(t.config_path, "configs/t2v_lora.yaml");
	CHECK_STR(t.mode, "t2v");
	CHECK_CONTAINS(t.reason, "80GB+ tier");
	CHECK_CONTAINS(t.reason, "143771 MiB");
	CHECK_STR(t.gate_message, "");

	CHECK_INT(decide(NULL, &t, &err, "rtx-5090", NULL), VF_OK);
	CHECK_STR(t.name, "32GB tier");
	CHECK_INT(t.per_gpu_gb, 32);
	CHECK_STR(t.config, "t2v_lora_low_vram.yaml");
	CHECK(!t.gated && !t.gap);

	CHECK_INT(decide(NULL, &t, &err, "v100-32gb", NULL), VF_OK);
	CHECK_STR(t.name, "32GB tier");
	CHECK_INT(decide(NULL, &t, &err, "V100 32GB=32510", NULL), VF_OK);
	CHECK_STR(t.name, "32GB tier");

	CHECK_INT(decide(NULL, &t, &err, "h100-80gb", "rtx-6000-ada", NULL), VF_OK);
	CHECK_STR(t.name, "40\xe2\x80\x93" "60GB tier"); /* en dash, U+2013 */
	CHECK_INT(t.per_gpu_gb, 48);
	CHECK_INT(t.gpu_count, 2);
	CHECK_INT(t.smallest, 1);
	CHECK_STR(t.config, "t2v_lora_low_vram.yaml");
	CHECK_CONTAINS(t.note, "autotune relaxes it");
	CHECK(!t.gap);

	static const char *const fourty[] = {"a40", "l40s", "rtx-a6000", "a100-40gb", "l40"};
	for (size_t i = 0; i < sizeof fourty / sizeof fourty[0]; i++) {
		CHECK_INT(decide(NULL, &t, &err, fourty[i], NULL), VF_OK);
		CHECK_STR(t.name, "40\xe2\x80\x93" "60GB tier");
	}
	static const char *const eighty[] = {"a100-80gb", "h100-pcie", "h100-nvl", "b200", "gh200"};
	for (size_t i = 0; i < sizeof eighty / sizeof eighty[0]; i++) {
		CHECK_INT(decide(NULL, &t, &err, eighty[i], NULL), VF_OK);
		CHECK_STR(t.name, "80GB+ tier");
	}

	CHECK_INT(decide(NULL, &t, &err, "h100-80gb:8", NULL), VF_OK);
	CHECK_STR(t.name, "80GB+ tier");
	CHECK_INT(t.gpu_count, 8);
	CHECK_CONTAINS(t.reason, "smallest of the 8 GPUs");
}

static void test_gap(void)
{
	struct vf_tier t;
	struct vf_error err = {0};
	CHECK_INT(decide(NULL, &t, &err, "mycard=65536", NULL), VF_OK);
	CHECK_STR(t.name, "40\xe2\x80\x93" "60GB tier");
	CHECK_INT(t.per_gpu_gb, 64);
	CHECK(t.gap);
	CHECK_CONTAINS(t.note, "64 GB lies between the 40\xe2\x80\x93" "60GB tier");
	CHECK_CONTAINS(t.note, "autotune decides the rest");
	CHECK_CONTAINS(t.reason, "between tiers");
	CHECK_INT(decide(NULL, &t, &err, "card72=73728", NULL), VF_OK);
	CHECK_STR(t.name, "40\xe2\x80\x93" "60GB tier");
	CHECK_INT(t.per_gpu_gb, 72);
	CHECK(t.gap);
	/* 33-39 GB: the 32GB tier, with the note. */
	CHECK_INT(decide(NULL, &t, &err, "card34=35000", NULL), VF_OK);
	CHECK_STR(t.name, "32GB tier");
	CHECK(t.gap);
	CHECK_CONTAINS(t.note, "lies between the 32GB tier");
	/* Tolerance: a little under the nominal size is still that class. */
	CHECK_INT(decide(NULL, &t, &err, "card=30000", NULL), VF_OK);
	CHECK_STR(t.name, "32GB tier");
	CHECK_INT(t.per_gpu_gb, 32);
	CHECK(!t.gap);
	CHECK_INT(decide(NULL, &t, &err, "card=76000", NULL), VF_OK);
	CHECK_STR(t.name, "80GB+ tier");
}

static void test_gate(void)
{
	struct vf_tier t;
	struct vf_error err = {0};
	CHECK_INT(decide(NULL, &t, &err, "rtx-4090", NULL), VF_OK);
	CHECK(t.gated);
	CHECK_INT(t.per_gpu_gb, 24);
	CHECK_STR(t.config, "t2v_lora_low_vram.yaml");
	CHECK_CONTAINS(t.gate_message, "This GPU has 24 GB");
	CHECK_CONTAINS(t.gate_message, "minimum of 32 GB");
	CHECK_CONTAINS(t.gate_message, "packages/ltx-trainer/docs/quick-start.md");
	CHECK_CONTAINS(t.gate_message, "(a) abort");
	CHECK_CONTAINS(t.gate_message, "(b) try anyway with the low-VRAM config");
	CHECK_CONTAINS(t.gate_message, t.gate_flag);
	CHECK_STR(t.gate_flag, "--accept-risk");
	CHECK(strstr(t.name, "tier") == NULL); /* never a tier below 32 GB */
	/* One small card gates a set of big ones. */
	CHECK_INT(decide(NULL, &t, &err, "h200:7", "t4", NULL), VF_OK);
	CHECK(t.gated);
	CHECK_INT(t.smallest, 7);
	CHECK_CONTAINS(t.gate_message, "16 GB");
	CHECK_INT(decide(NULL, &t, &err, "card=28000", NULL), VF_OK);
	CHECK(t.gated);
}

static void test_modes_and_errors(void)
{
	struct vf_tier t;
	struct vf_error err = {0};
	CHECK_INT(decide("i2v", &t, &err, "h100-80gb", NULL), VF_OK);
	CHECK_STR(t.config, "i2v_lora.yaml");
	CHECK_STR(t.mode, "i2v");
	CHECK_INT(decide("i2v", &t, &err, "rtx-5090", NULL), VF_OK);
	CHECK_STR(t.config, "i2v_lora_low_vram.yaml");
	/* Modes come from the checkout: any plain name is a candidate here. */
	CHECK_INT(decide("v2v_ic", &t, &err, "rtx-5090", NULL), VF_OK);
	CHECK_STR(t.config, "v2v_ic_lora_low_vram.yaml");
	CHECK_INT(decide("v2v/../x", &t, &err, "rtx-5090", NULL), VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "invalid mode name 'v2v/../x'");

	struct vf_gpu_set s;
	vf_gpu_set_init(&s);
	CHECK_INT(vf_tier_decide(&s, NULL, NULL, &t, &err), VF_ENOTFOUND);
	CHECK_INT(vf_tier_decide(NULL, NULL, NULL, &t, &err), VF_ENOTFOUND);
	/* Unknown memory: no tier, a clear reason. */
	struct vf_gpu g;
	vf_gpu_init(&g);
	g.index = 0;
	snprintf(g.name, sizeof g.name, "Mystery GPU");
	CHECK_INT(vf_gpu_set_add(&s, &g, &err), VF_OK);
	CHECK_INT(vf_tier_decide(&s, NULL, NULL, &t, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "memory size unknown");
	CHECK_INT(vf_tier_decide(&s, "no-such-trainer", NULL, &t, &err), VF_ENOTFOUND);
	CHECK_INT(vf_tier_decide(&s, "../etc", NULL, &t, &err), VF_EUSAGE);
	/* The same checks without any GPU. */
	CHECK_INT(vf_tier_check(NULL, NULL, &err), VF_OK);
	CHECK_INT(vf_tier_check(NULL, "i2v", &err), VF_OK);
	CHECK_INT(vf_tier_check(NULL, "a b", &err), VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "invalid mode name");
	CHECK_INT(vf_tier_check("no-such-trainer", NULL, &err), VF_ENOTFOUND);
	CHECK_CONTAINS(err.msg, "no-such-trainer");
	CHECK_INT(vf_tier_check("../etc", NULL, &err), VF_EUSAGE);
	vf_gpu_set_release(&s);
}

/* Policy is data: a changed tiers.json changes the decision; a broken one
 * gives a message naming the file and the field. */
static void write_tiers(const char *dir, const char *json)
{
	char path[512];
	snprintf(path, sizeof path, "%s/profiles/ltx2/tiers.json", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	fputs(json, f);
	fclose(f);
}

static void test_policy_is_data(void)
{
	char dir[] = "/tmp/vf-tier-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char sub[600];
	snprintf(sub, sizeof sub, "%s/profiles", dir);
	mkdir(sub, 0755);
	snprintf(sub, sizeof sub, "%s/profiles/ltx2", dir);
	mkdir(sub, 0755);
	setenv("VRAMFIT_DATA_DIR", dir, 1);
	const char *base =
		"{\"default_mode\": \"t2v\", \"modes\": [\"t2v\"], \"config_dir\": \"cfg\","
		" \"gap_note\": \"gap {gb}\","
		" \"tiers\": [{\"name\": \"small\", \"min_gb\": 16, \"max_gb\": 24, \"range\": \"16-24\","
		"   \"config\": \"{mode}_s.yaml\", \"note\": \"n1\"},"
		"  {\"name\": \"big\", \"min_gb\": 40, \"max_gb\": null, \"range\": \"40+\","
		"   \"config\": \"{mode}_b.yaml\", \"note\": \"n2\"}],"
		" \"gate\": {\"below_gb\": 16, \"name\": \"stop\", \"range\": \"<16\", \"config\": \"x.yaml\","
		"   \"flag\": \"--go\", \"note\": \"g\", \"message\": \"has {gb} GB, use {flag}\"}}";
	write_tiers(dir, base);
	struct vf_tier t;
	struct vf_error err = {0};
	CHECK_INT(decide(NULL, &t, &err, "rtx-4090", NULL), VF_OK);
	CHECK_STR(t.name, "small");
	CHECK_STR(t.config_path, "cfg/t2v_s.yaml");
	CHECK_INT(decide(NULL, &t, &err, "rtx-5090", NULL), VF_OK);
	CHECK_STR(t.name, "small");
	CHECK(t.gap);
	CHECK_CONTAINS(t.note, "gap 32");
	CHECK_INT(decide(NULL, &t, &err, "a10=10000", NULL), VF_OK);
	CHECK(t.gated);
	CHECK_STR(t.gate_message, "has 10 GB, use --go");

	write_tiers(dir, "{\"default_mode\": \"t2v\"}");
	CHECK_INT(decide(NULL, &t, &err, "h200", NULL), VF_ERR);
	CHECK_CONTAINS(err.msg, "profiles/ltx2/tiers.json: field ");
	write_tiers(dir, "{\"default_mode\": ");
	CHECK_INT(decide(NULL, &t, &err, "h200", NULL), VF_ERR);
	CHECK_CONTAINS(err.msg, "tiers.json");
	/* A bad placeholder is named. */
	char bad[4096];
	snprintf(bad, sizeof bad, "%s", base);
	char *m = strstr(bad, "use {flag}");
	memcpy(m, "use {flug}", 10);
	write_tiers(dir, bad);
	CHECK_INT(decide(NULL, &t, &err, "small=10000", NULL), VF_ERR);
	CHECK_CONTAINS(err.msg, "unknown placeholder {flug}");
	/* Overlapping tiers are refused. */
	snprintf(bad, sizeof bad, "%s", base);
	m = strstr(bad, "\"min_gb\": 40");
	memcpy(m, "\"min_gb\": 20", 12);
	write_tiers(dir, bad);
	CHECK_INT(decide(NULL, &t, &err, "h200", NULL), VF_ERR);
	CHECK_CONTAINS(err.msg, "tiers[1].min_gb");

	char path[700];
	snprintf(path, sizeof path, "%s/profiles/ltx2/tiers.json", dir);
	unlink(path);
	rmdir(sub);
	snprintf(sub, sizeof sub, "%s/profiles", dir);
	rmdir(sub);
	rmdir(dir);
	unsetenv("VRAMFIT_DATA_DIR");
}

int main(void)
{
	setenv("XDG_CONFIG_HOME", "/nonexistent-vramfit-test", 1);
	unsetenv("VRAMFIT_DATA_DIR");
	RUN(test_tiers);
	RUN(test_gap);
	RUN(test_gate);
	RUN(test_modes_and_errors);
	RUN(test_policy_is_data);
	vf_gpu_catalog_reset();
	return vf_test_done();
}
