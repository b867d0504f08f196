/* test-gpu.c - the GPU catalog (data/gpus.json), name matching, nominal GB
 * classes, GPU sets and simulation specs. */
#include <stdlib.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/gpu/gpu.h"

static void test_catalog_loads(void)
{
	struct vf_error err = {0};
	size_t n = 0;
	const struct vf_gpu_spec *s = vf_gpu_catalog(&n, &err);
	CHECK(s != NULL);
	CHECK(n >= 30);
	CHECK_CONTAINS(vf_gpu_catalog_origin(), "gpus.json");
	int common = 0;
	for (size_t i = 0; s && i < n; i++) {
		CHECK(s[i].memory_mib > 0);
		CHECK(s[i].nominal_gb > 0);
		CHECK(s[i].fp16_tflops > 0);
		CHECK(s[i].bandwidth_gbs > 0);
		CHECK(s[i].interconnect_gbs > 0);
		CHECK(s[i].cc[0] != '\0');
		CHECK(s[i].generation[0] != '\0');
		common += s[i].common;
	}
	CHECK(common >= 5 && common <= 10);
}

static void test_catalog_values_from_trainer_md(void)
{
	/* ../shared/ltx2/TRAINER.md section 1: what nvidia-smi reports. */
	static const struct { const char *id; int64_t mib; int gb; } want[] = {
		{"rtx-5090", 32607, 32}, {"h100-80gb", 81559, 80}, {"a100-80gb", 81920, 80},
		{"rtx-6000-ada", 49140, 48}, {"a40", 46068, 48}, {"l40s", 46068, 48},
		{"a100-40gb", 40960, 40}, {"v100-32gb", 32768, 32}, {"rtx-4090", 24564, 24},
		{"h200", 143771, 141},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const struct vf_gpu_spec *s = vf_gpu_catalog_find(want[i].id);
		CHECK(s != NULL);
		if (!s)
			continue;
		CHECK_INT(s->memory_mib, want[i].mib);
		CHECK_INT(s->nominal_gb, want[i].gb);
	}
	const struct vf_gpu_spec *h = vf_gpu_catalog_find("h100-80gb");
	CHECK(h && h->nvlink && h->bf16_tflops > 900 && h->common);
	CHECK(vf_gpu_catalog_find("no-such-gpu") == NULL);
	CHECK(vf_gpu_catalog_find(NULL) == NULL);
	const struct vf_gpu_spec *v = vf_gpu_catalog_find("v100-16gb");
	CHECK(v && v->bf16_tflops < 0); /* V100: no bf16 tensor cores -> unknown, not 0 */
}

static void test_normalize(void)
{
	char out[64];
	vf_gpu_name_normalize("NVIDIA A100-SXM4-80GB", out, sizeof out);
	CHECK_STR(out, "a100 sxm4 80gb");
	vf_gpu_name_normalize("  NVIDIA GeForce RTX 4090 ", out, sizeof out);
	CHECK_STR(out, "rtx 4090");
	vf_gpu_name_normalize("Tesla V100-SXM2-32GB", out, sizeof out);
	CHECK_STR(out, "v100 sxm2 32gb");
	vf_gpu_name_normalize("", out, sizeof out);
	CHECK_STR(out, "");
	vf_gpu_name_normalize(NULL, out, sizeof out);
	CHECK_STR(out, "");
	char tiny[4];
	vf_gpu_name_normalize("NVIDIA H100 80GB HBM3", tiny, sizeof tiny);
	CHECK_STR(tiny, "h10");
}

static const char *match_id(const char *name, int64_t mib)
{
	const struct vf_gpu_spec *s = vf_gpu_catalog_match(name, mib);
	return s ? s->id : "(none)";
}

static void test_match(void)
{
	CHECK_STR(match_id("NVIDIA H100 80GB HBM3", 81559), "h100-80gb");
	CHECK_STR(match_id("NVIDIA H100 80GB HBM3", -1), "h100-80gb");
	CHECK_STR(match_id("NVIDIA H100 PCIe", 81559), "h100-pcie");
	CHECK_STR(match_id("NVIDIA H100 NVL", 95830), "h100-nvl");
	CHECK_STR(match_id("NVIDIA H200", 143771), "h200");
	CHECK_STR(match_id("NVIDIA H200 NVL", 143771), "h200-nvl");
	CHECK_STR(match_id("NVIDIA H20", 97871), "h20");
	CHECK_STR(match_id("NVIDIA A100-SXM4-80GB", 81920), "a100-80gb");
	CHECK_STR(match_id("NVIDIA A100-SXM4-40GB", 40960), "a100-40gb");
	CHECK_STR(match_id("NVIDIA A100-PCIE-40GB", 40536), "a100-pcie-40gb");
	CHECK_STR(match_id("NVIDIA A100 80GB PCIe", 81920), "a100-pcie-80gb");
	CHECK_STR(match_id("NVIDIA A10", 23028), "a10");
	CHECK_STR(match_id("NVIDIA A10G", 23028), "a10g");
	CHECK_STR(match_id("NVIDIA L40", 46068), "l40");
	CHECK_STR(match_id("NVIDIA L40S", 46068), "l40s");
	CHECK_STR(match_id("NVIDIA RTX 6000 Ada Generation", 49140), "rtx-6000-ada");
	CHECK_STR(match_id("NVIDIA RTX A6000", 49140), "rtx-a6000");
	CHECK_STR(match_id("NVIDIA GeForce RTX 4090", 24564), "rtx-4090");
	CHECK_STR(match_id("GeForce RTX 3090", 24576), "rtx-3090");
	CHECK_STR(match_id("NVIDIA GeForce RTX 3090 Ti", 24564), "rtx-3090-ti");
	CHECK_STR(match_id("NVIDIA GeForce RTX 5090", 32607), "rtx-5090");
	CHECK_STR(match_id("Tesla V100-SXM2-32GB", 32510), "v100-32gb");
	CHECK_STR(match_id("Tesla T4", 15360), "t4");
	CHECK_STR(match_id("NVIDIA B200", 183359), "b200");
	CHECK_STR(match_id("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 97887),
		  "rtx-pro-6000");
	/* Memory disambiguates a bare name. */
	CHECK_STR(match_id("NVIDIA A100", 81920), "a100-80gb");
	CHECK_STR(match_id("NVIDIA A100", 40960), "a100-40gb");
	/* Same family, memory far off: another card, no match. */
	CHECK_STR(match_id("NVIDIA GH200 144G HBM3e", 146000), "(none)");
	CHECK_STR(match_id("NVIDIA GH200 480GB", 97871), "gh200");
	/* Not a card we know; words must match whole ("a1000" is not "a10"). */
	CHECK_STR(match_id("NVIDIA RTX A1000", 8192), "(none)");
	CHECK_STR(match_id("mycard", 65536), "(none)");
	CHECK_STR(match_id("", 65536), "(none)");
	CHECK(vf_gpu_catalog_match(NULL, 1) == NULL);
}

static void test_nominal(void)
{
	CHECK_INT(vf_gpu_nominal_gb(81559), 80);
	CHECK_INT(vf_gpu_nominal_gb(81920), 80);
	CHECK_INT(vf_gpu_nominal_gb(32607), 32);
	CHECK_INT(vf_gpu_nominal_gb(46068), 48);
	CHECK_INT(vf_gpu_nominal_gb(143771), 141);
	CHECK_INT(vf_gpu_nominal_gb(65536), 64);
	CHECK_INT(vf_gpu_nominal_gb(73728), 72);
	CHECK_INT(vf_gpu_nominal_gb(24564), 24);
	CHECK_INT(vf_gpu_nominal_gb(28000), 27); /* between classes: rounded GiB */
	CHECK_INT(vf_gpu_nominal_gb(0), -1);
	CHECK_INT(vf_gpu_nominal_gb(-1), -1);
}

static void test_spec(void)
{
	struct vf_gpu_set s;
	struct vf_error err = {0};
	vf_gpu_set_init(&s);
	CHECK_INT(vf_gpu_set_add_spec(&s, "h100-80gb", &err), VF_OK);
	CHECK_INT(s.count, 1);
	CHECK_INT(s.source, VF_GPU_SIMULATED);
	CHECK_STR(s.gpus[0].catalog_id, "h100-80gb");
	CHECK_INT(s.gpus[0].memory_total_mib, 81559);
	CHECK_INT(s.gpus[0].nominal_gb, 80);
	CHECK_STR(s.gpus[0].cc, "9.0");
	CHECK_INT(vf_gpu_set_add_spec(&s, "h100-80gb:8", &err), VF_OK);
	CHECK_INT(s.count, 9);
	CHECK_INT(s.gpus[8].index, 8);
	CHECK_INT(vf_gpu_set_add_spec(&s, "mycard=65536", &err), VF_OK);
	CHECK_INT(s.count, 10);
	CHECK_STR(s.gpus[9].name, "mycard");
	CHECK_STR(s.gpus[9].catalog_id, "");
	CHECK_INT(s.gpus[9].memory_total_mib, 65536);
	CHECK_INT(s.gpus[9].nominal_gb, 64);
	CHECK_STR(s.gpus[9].cc, "");
	CHECK_INT(vf_gpu_set_add_spec(&s, "NVIDIA H200=143771:2", &err), VF_OK);
	CHECK_INT(s.count, 12);
	CHECK_STR(s.gpus[11].catalog_id, "h200");
	CHECK_INT(s.gpus[11].nominal_gb, 141);
	vf_gpu_set_release(&s);
	CHECK_INT(s.count, 0);
	CHECK(s.gpus == NULL);

	static const char *const bad[] = {
		"", "nosuch", "h100-80gb:0", "h100-80gb:", "h100-80gb:x", "h100-80gb:-1",
		"h100-80gb:99999", "=100", "card=", "card=0", "card=12x", "card=-5",
		"card=99999999999", ":3", "h100-80gb:1025",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		vf_error_clear(&err);
		vf_gpu_set_init(&s);
		vf_status st = vf_gpu_set_add_spec(&s, bad[i], &err);
		if (st != VF_EUSAGE)
			fprintf(stderr, "  spec '%s' gave %d\n", bad[i], st);
		CHECK_INT(st, VF_EUSAGE);
		CHECK(err.msg[0] != '\0');
		CHECK_INT(s.count, 0);
		vf_gpu_set_release(&s);
	}
	vf_gpu_set_init(&s);
	CHECK_INT(vf_gpu_set_add_spec(&s, "h100", &err), VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "did you mean h100-");
	vf_gpu_set_release(&s);
	/* The total is capped. */
	vf_gpu_set_init(&s);
	CHECK_INT(vf_gpu_set_add_spec(&s, "h200:1024", &err), VF_OK);
	CHECK_INT(vf_gpu_set_add_spec(&s, "h200", &err), VF_EUSAGE);
	CHECK_INT(s.count, 1024);
	vf_gpu_set_release(&s);
}

static void test_notes(void)
{
	struct vf_gpu_set s;
	vf_gpu_set_init(&s);
	for (int i = 0; i < 20; i++)
		vf_gpu_set_note(&s, "note %d", i);
	CHECK_INT(s.nnotes, 8);
	CHECK_STR(s.notes[0], "note 0");
	CHECK_STR(s.notes[7], "(further notes dropped)");
	CHECK_STR(vf_gpu_source_name(VF_GPU_NVML), "nvml");
	CHECK_STR(vf_gpu_source_name(VF_GPU_SMI), "nvidia-smi");
	CHECK_STR(vf_gpu_source_name(VF_GPU_SIMULATED), "simulated");
	CHECK_STR(vf_gpu_source_name(VF_GPU_NONE), "none");
	vf_gpu_set_release(NULL);
}

/* A user override replaces the embedded catalog; a bad one names the file. */
static void test_override(void)
{
	char dir[] = "/tmp/vf-gpu-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[256];
	snprintf(path, sizeof path, "%s/gpus.json", dir);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("{\"gpus\": [{\"id\": \"my-gpu\", \"name\": \"My GPU\", \"match\": [\"my gpu\"],"
	      " \"memory_mib\": 65536, \"nominal_gb\": 64, \"fp16_tflops\": 100,"
	      " \"price_usd_hour\": 1.5}]}",
	      f);
	fclose(f);
	setenv("VRAMFIT_DATA_DIR", dir, 1);
	vf_gpu_catalog_reset();
	size_t n = 0;
	struct vf_error err = {0};
	const struct vf_gpu_spec *s = vf_gpu_catalog(&n, &err);
	CHECK(s != NULL);
	CHECK_INT(n, 1);
	CHECK_STR(vf_gpu_catalog_origin(), path);
	CHECK_STR(match_id("NVIDIA My GPU", 65536), "my-gpu");
	CHECK(s && s[0].price_usd_hour == 1.5 && s[0].bf16_tflops < 0);
	CHECK_INT(vf_gpu_nominal_gb(65536), 64);

	f = fopen(path, "w");
	fputs("{\"gpus\": [{\"id\": \"x\", \"name\": \"X\", \"memory_mib\": \"lots\", "
	      "\"nominal_gb\": 1}]}",
	      f);
	fclose(f);
	vf_gpu_catalog_reset();
	s = vf_gpu_catalog(&n, &err);
	CHECK(s == NULL);
	CHECK_CONTAINS(err.msg, path);
	CHECK_CONTAINS(err.msg, "memory_mib");

	f = fopen(path, "w");
	fputs("{\"gpus\": [{\"id\": \"x\", \"name\": \"X\", \"memory_mib\": 1, \"nominal_gb\": 1},"
	      " {\"id\": \"x\", \"name\": \"Y\", \"memory_mib\": 1, \"nominal_gb\": 1}]}",
	      f);
	fclose(f);
	vf_gpu_catalog_reset();
	CHECK(vf_gpu_catalog(&n, &err) == NULL);
	CHECK_CONTAINS(err.msg, "duplicate id 'x'");

	f = fopen(path, "w");
	fputs("{\"gpus\": [{\"id\": \"Bad Id\", \"name\": \"X\", \"memory_mib\": 1, "
	      "\"nominal_gb\": 1}]}",
	      f);
	fclose(f);
	vf_gpu_catalog_reset();
	CHECK(vf_gpu_catalog(&n, &err) == NULL);
	CHECK_CONTAINS(err.msg, "field id");

	f = fopen(path, "w");
	fputs("[1, 2", f);
	fclose(f);
	vf_gpu_catalog_reset();
	CHECK(vf_gpu_catalog(&n, &err) == NULL);
	CHECK_CONTAINS(err.msg, "invalid JSON");
	CHECK(vf_gpu_catalog_find("h100-80gb") == NULL);

	/* A broken override is reported, never silently replaced by the
	 * embedded catalog: a symlink loop, a dangling link. */
	unlink(path);
	char loop[300];
	snprintf(loop, sizeof loop, "%s/loop", dir);
	CHECK(symlink("gpus.json", loop) == 0);
	CHECK(symlink("loop", path) == 0);
	vf_gpu_catalog_reset();
	CHECK(vf_gpu_catalog(&n, &err) == NULL);
	CHECK_CONTAINS(err.msg, path);
	CHECK_CONTAINS(err.msg, "symbolic links");
	unlink(path);
	unlink(loop);
	CHECK(symlink("no-such-file", path) == 0);
	vf_gpu_catalog_reset();
	CHECK(vf_gpu_catalog(&n, &err) == NULL);
	CHECK_CONTAINS(err.msg, path);
	CHECK_CONTAINS(err.msg, "No such file");

	unlink(path);
	rmdir(dir);
	unsetenv("VRAMFIT_DATA_DIR");
	vf_gpu_catalog_reset();
	CHECK(vf_gpu_catalog_find("h100-80gb") != NULL);
}

/* Writes text as dir/gpus.json and loads it: the catalog, or NULL with
 * err set. */
static const struct vf_gpu_spec *load_text(const char *dir, const char *text, size_t *n,
					   struct vf_error *err)
{
	char path[256];
	snprintf(path, sizeof path, "%s/gpus.json", dir);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return NULL;
	fputs(text, f);
	fclose(f);
	vf_gpu_catalog_reset();
	memset(err, 0, sizeof *err);
	return vf_gpu_catalog(n, err);
}

#define E "\"id\": \"x\", \"name\": \"X\", \"memory_mib\": 1, \"nominal_gb\": 1"

/* Each entry error, to the byte (issue 21 reads an entry's fields in one
 * walk over its members: the first member of a name counts, as cJSON's
 * lookup finds it; members in any order, unknown ones ignored). */
static void test_entry_errors(void)
{
	char dir[] = "/tmp/vf-gpu-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{"{\"gpus\": [{\"name\": \"X\"}]}", "gpus[0]: field id: expected a string"},
		{"{\"gpus\": [{\"id\": 7}]}", "gpus[0]: field id: expected a string"},
		{"{\"gpus\": [{\"id\": \"A\"}]}",
		 "gpus[0]: field id: 'A' is not a lower-case id (a-z, 0-9, '-')"},
		{"{\"gpus\": [{" E "}, 5]}", "gpus[1]: expected an object"},
		{"{\"gpus\": [{\"id\": \"x\"}]}", "gpus[0] (x): field name: expected a string"},
		{"{\"gpus\": [{" E ", \"compute_capability\": 9}]}",
		 "gpus[0] (x): field compute_capability: expected a string"},
		{"{\"gpus\": [{" E ", \"price_source\": [], \"generation\": {}}]}",
		 "gpus[0] (x): field generation: expected a string"},
		{"{\"gpus\": [{" E ", \"interconnect\": \"" /* 50 characters: too long */
		 "01234567890123456789012345678901234567890123456789\"}]}",
		 "gpus[0] (x): field interconnect: longer than 47 characters"},
		{"{\"gpus\": [{\"id\": \"x\", \"name\": \"X\", \"memory_mib\": 1.5}]}",
		 "gpus[0] (x): field memory_mib: expected a positive integer"},
		{"{\"gpus\": [{\"id\": \"x\", \"name\": \"X\", \"memory_mib\": 1}]}",
		 "gpus[0] (x): field nominal_gb: expected a positive integer"},
		{"{\"gpus\": [{" E ", \"sms\": 0}]}",
		 "gpus[0] (x): field sms: expected a positive integer (streaming multiprocessors) "
		 "or null"},
		{"{\"gpus\": [{" E ", \"price_usd_hour\": -1, \"fp32_tflops\": \"a\"}]}",
		 "gpus[0] (x): field fp32_tflops: expected a number >= 0 or null"},
		{"{\"gpus\": [{" E ", \"nvlink\": 1, \"nvlink\": true}]}",
		 "gpus[0] (x): field nvlink: expected true or false"},
		{"{\"gpus\": [{" E ", \"common\": \"yes\"}]}",
		 "gpus[0] (x): field common: expected true or false"},
		{"{\"gpus\": [{" E ", \"match\": \"x\"}]}",
		 "gpus[0] (x): field match: expected an array of names"},
		{"{\"gpus\": [{" E ", \"match\": [\"a\", 1]}]}",
		 "gpus[0] (x): field match: expected strings"},
	};
	char path[256], want[512];
	snprintf(path, sizeof path, "%s/gpus.json", dir);
	setenv("VRAMFIT_DATA_DIR", dir, 1);
	size_t n = 0;
	struct vf_error err;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		CHECK(load_text(dir, cases[i].text, &n, &err) == NULL);
		snprintf(want, sizeof want, "%s: %s", path, cases[i].msg);
		CHECK_STR(err.msg, want);
	}
	/* the first of two members counts; members in any order; unknown ones
	 * and "note" ignored */
	const struct vf_gpu_spec *s = load_text(
		dir,
		"{\"gpus\": [{\"zz\": 1, \"common\": true, \"sms\": null, \"note\": 3, "
		"\"match\": [\"Big One\"], \"nvlink\": true, \"nvlink\": 5, \"price_usd_hour\": 2, "
		"\"nominal_gb\": 80, \"memory_mib\": 81559, \"name\": \"B\", \"name\": 1, "
		"\"bandwidth_gbs\": 3350, \"id\": \"b\", \"form_factor\": \"sxm\"}]}",
		&n, &err);
	CHECK(s != NULL);
	if (s) {
		CHECK_STR(s[0].id, "b");
		CHECK_STR(s[0].name, "B");
		CHECK_STR(s[0].form_factor, "sxm");
		CHECK_INT(s[0].memory_mib, 81559);
		CHECK_INT(s[0].nominal_gb, 80);
		CHECK(s[0].nvlink && s[0].common);
		CHECK_INT(s[0].sms, 0);
		CHECK(s[0].bandwidth_gbs == 3350 && s[0].price_usd_hour == 2 && s[0].fp16_tflops < 0);
		CHECK_INT(s[0].nmatch, 1);
		CHECK_STR(s[0].match[0], "big one");
	}
	unlink(path);
	rmdir(dir);
	unsetenv("VRAMFIT_DATA_DIR");
	vf_gpu_catalog_reset();
}

#undef E

int main(void)
{
	/* The embedded catalog, whatever is in the user's ~/.config. */
	setenv("XDG_CONFIG_HOME", "/nonexistent-vramfit-test", 1);
	unsetenv("VRAMFIT_DATA_DIR");
	RUN(test_catalog_loads);
	RUN(test_catalog_values_from_trainer_md);
	RUN(test_normalize);
	RUN(test_match);
	RUN(test_nominal);
	RUN(test_spec);
	RUN(test_notes);
	RUN(test_override);
	RUN(test_entry_errors);
	vf_gpu_catalog_reset();
	return vf_test_done();
}
