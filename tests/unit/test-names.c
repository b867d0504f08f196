/* test-names.c - forgiving names: compact forms, edit distance with
 * transpositions, the "did you mean" list; catalog models and GPUs by the
 * names people use; Hub ids parsed; header stubs read as their files. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/base/names.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/hub/hub.h"
#include "vramfit/model/models.h"
#include "vramfit/model/safetensors.h"

static void test_compact_and_distance(void)
{
	char c[64];
	CHECK_STR(vf_names_compact("RTX 4090", c, sizeof c), "rtx4090");
	CHECK_STR(vf_names_compact("Llama-3.1_8B", c, sizeof c), "llama3.18b");
	CHECK_STR(vf_names_compact("", c, sizeof c), "");
	CHECK_STR(vf_names_compact("abcdef", c, 4), "abc");
	CHECK_INT(vf_names_distance("rtx4009", "rtx4090"), 1); /* a transposition */
	CHECK_INT(vf_names_distance("rtx4009", "rtx4080"), 2);
	CHECK_INT(vf_names_distance("", "abc"), 3);
	CHECK_INT(vf_names_distance("kitten", "sitting"), 3);
	char a[100], b[100];
	memset(a, 'a', 99);
	a[99] = 0;
	memset(b, 'a', 99);
	b[99] = 0;
	b[98] = 'b';
	CHECK_INT(vf_names_distance(a, b), 72); /* past 63 bytes each byte of each counts */
}

static void test_suggest(void)
{
	struct vf_names_suggest s;
	char hint[200];
	vf_names_suggest_init(&s, "rtx-4009");
	vf_names_suggest_offer(&s, "rtx-4090", "rtx-4090");
	vf_names_suggest_offer(&s, "rtx-4080", "rtx-4080");
	vf_names_suggest_offer(&s, "h100-80gb", "h100-80gb");
	CHECK_STR(vf_names_suggest_hint(&s, hint, sizeof hint), "; did you mean rtx-4090?");
	vf_names_suggest_init(&s, "zzzzzzzz");
	vf_names_suggest_offer(&s, "rtx-4090", "rtx-4090");
	CHECK_STR(vf_names_suggest_hint(&s, hint, sizeof hint), "");
	/* the same display name keeps its best distance, once */
	vf_names_suggest_init(&s, "llama3.18b");
	vf_names_suggest_offer(&s, "llama3.1-8b", "llama3.1-70b");
	vf_names_suggest_offer(&s, "llama3.1-8b", "llama3.1-8c");
	CHECK_INT(s.n, 1);
	CHECK_INT(s.dist[0], 1);
}

static void test_models_loose(void)
{
	char hint[200];
	const struct vf_model_entry *e;
	const char *names[] = {"llama3.1-8b", "Llama-3.1-8B", "llama-3.1-8b", "LLAMA 3.1 8B",
			       "meta-llama/Llama-3.1-8B", "meta-llama/llama-3.1-8b"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		e = vf_models_find_loose(names[i], hint, sizeof hint);
		CHECK(e && strcmp(e->id, "llama3.1-8b") == 0);
	}
	/* a different org is a different repository */
	CHECK(vf_models_find_loose("someone/Llama-3.1-8B", hint, sizeof hint) == NULL);
	CHECK(vf_models_find_loose("lama-3.1-8b", hint, sizeof hint) == NULL);
	CHECK_STR(hint, "; did you mean llama3.1-8b?");
	CHECK(vf_models_find_loose("", hint, sizeof hint) == NULL);
}

static void test_gpus_loose(void)
{
	char hint[200];
	const struct vf_gpu_spec *g;
	const char *names[] = {"rtx4090", "RTX 4090", "NVIDIA GeForce RTX 4090", "rtx-4090"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		g = vf_gpu_catalog_find_loose(names[i], hint, sizeof hint);
		CHECK(g && strcmp(g->id, "rtx-4090") == 0);
	}
	g = vf_gpu_catalog_find_loose("H100 SXM", hint, sizeof hint);
	CHECK(g && strcmp(g->id, "h100-80gb") == 0);
	/* a family is not one card */
	CHECK(vf_gpu_catalog_find_loose("h100", hint, sizeof hint) == NULL);
	CHECK_STR(hint, "; did you mean h100-pcie, h100-80gb, h100-nvl?");
	CHECK(vf_gpu_catalog_find_loose("rtx-4009", hint, sizeof hint) == NULL);
	CHECK_STR(hint, "; did you mean rtx-4090?");
}

static void test_hub_ref(void)
{
	struct vf_hub_ref r;
	CHECK(vf_hub_ref_parse("meta-llama/Llama-3.1-8B", &r));
	CHECK_STR(r.repo, "meta-llama/Llama-3.1-8B");
	CHECK_STR(r.revision, "main");
	CHECK(!r.has_revision);
	CHECK(vf_hub_ref_parse("org/name@v1.0", &r));
	CHECK_STR(r.revision, "v1.0");
	CHECK(r.has_revision);
	CHECK(vf_hub_ref_parse("org/name@refs/pr/1", &r));
	CHECK_STR(r.revision, "refs/pr/1");
	CHECK(vf_hub_ref_parse("org/name-GGUF:Q4_K_M", &r));
	CHECK_STR(r.repo, "org/name-GGUF");
	CHECK_STR(r.tag, "Q4_K_M");
	CHECK_STR(r.revision, "main");
	CHECK(vf_hub_ref_parse("org/name@v2:q8_0", &r));
	CHECK_STR(r.revision, "v2");
	CHECK_STR(r.tag, "q8_0");
	char long_id[300];
	memset(long_id, 'a', sizeof long_id);
	long_id[90] = '/';
	long_id[181] = 0; /* each part under 96 bytes, the id over the 127 kept */
	CHECK(!vf_hub_ref_parse(long_id, &r));
	const char *bad[] = {"org/name:", "org/name:a b", "org/name:x/y", "name", "/abs/path", "./x", "../x", "a/b/c", "org/", "/name",
			     "org/na me", "org/name@", "org/name@../x", "org/name@/x", "-org/x",
			     "org/..", NULL};
	for (size_t i = 0; bad[i]; i++) {
		bool ok = vf_hub_ref_parse(bad[i], &r);
		if (ok)
			fprintf(stderr, "  '%s' parsed as a Hub id\n", bad[i]);
		CHECK(!ok);
	}
}

/* A header stub reads as the file it stands for; a damaged one is named. */
static void test_stub(void)
{
	char dir[] = "/tmp/vf-names.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[128];
	snprintf(path, sizeof path, "%s/model.safetensors", dir);
	const char *json = "{\"w\":{\"dtype\":\"BF16\",\"shape\":[4,8],\"data_offsets\":[0,64]}}";
	size_t n = strlen(json);
	unsigned char buf[256];
	memcpy(buf, VF_SAFETENSORS_STUB_MAGIC, 8);
	uint64_t real = 8 + n + 64;
	for (int i = 0; i < 8; i++) {
		buf[8 + i] = (unsigned char)(real >> (8 * i));
		buf[16 + i] = (unsigned char)((uint64_t)n >> (8 * i));
	}
	memcpy(buf + 24, json, n);
	FILE *f = fopen(path, "wb");
	fwrite(buf, 1, 24 + n, f);
	fclose(f);
	struct vf_safetensors st;
	struct vf_error err = {0};
	CHECK_INT(vf_safetensors_read(path, &st, &err), VF_OK);
	CHECK(st.stub);
	CHECK_INT(st.params, 32);
	CHECK_INT(st.file_bytes, real);
	vf_safetensors_release(&st);
	/* a recorded size that disagrees with the header */
	buf[8] ^= 1;
	f = fopen(path, "wb");
	fwrite(buf, 1, 24 + n, f);
	fclose(f);
	CHECK_INT(vf_safetensors_read(path, &st, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "model.safetensors");
	vf_safetensors_release(&st);
	/* a stub cut short */
	buf[8] ^= 1;
	f = fopen(path, "wb");
	fwrite(buf, 1, 24 + n - 3, f);
	fclose(f);
	CHECK_INT(vf_safetensors_read(path, &st, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "header stub");
	vf_safetensors_release(&st);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	RUN(test_compact_and_distance);
	RUN(test_suggest);
	RUN(test_models_loose);
	RUN(test_gpus_loose);
	RUN(test_hub_ref);
	RUN(test_stub);
	vf_models_release();
	return vf_test_done();
}
