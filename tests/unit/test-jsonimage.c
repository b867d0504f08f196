/* test-jsonimage.c - the tree images of the embedded JSON files
 * (cmake/json-image.c, vf__json_doc_from_image): each one is the tree
 * vf_json_doc_parse builds from its text, field by field; vf_data_load_doc
 * reads an embedded catalog from its image and an override file from its
 * text, errors naming the file as before; a damaged image is an error
 * naming it, never a crash or a read outside it (run under ASan too). */
#include "vf_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "../fuzz/json-same.h"
#include "vramfit/base/data.h"
#include "vramfit/base/json.h"

static int ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);
	return a >= b && strcmp(s + a - b, tail) == 0;
}

static void test_every_image_is_the_text_tree(void)
{
	size_t images = 0;
	for (size_t i = 0; vf_data_embedded_name(i); i++) {
		const char *name = vf_data_embedded_name(i);
		size_t len = 0, ilen = 0;
		const unsigned char *text = vf_data_embedded(name, &len);
		const unsigned char *img = vf__data_embedded_image(name, &ilen);
		if (!ends_with(name, ".json")) {
			CHECK(img == NULL);
			continue;
		}
		CHECK(img != NULL);
		if (!img)
			continue;
		struct vf_error e1 = {0}, e2 = {0};
		struct vf_json_doc *a = NULL, *b = NULL;
		CHECK_INT(vf_json_doc_parse((const char *)text, len, name, &a, &e1), VF_OK);
		CHECK_INT(vf__json_doc_from_image(img, ilen, name, &b, &e2), VF_OK);
		if (a && b && !json_same(vf_json_doc_root(a), vf_json_doc_root(b))) {
			fprintf(stderr, "  %s: the image's tree differs from the text's\n", name);
			CHECK(0);
		}
		vf_json_doc_free(a);
		vf_json_doc_free(b);
		images++;
	}
	CHECK(images >= 4);
}

/* a tree's strings lie inside [lo, hi) */
static int strings_within(const cJSON *c, const unsigned char *lo, const unsigned char *hi)
{
	for (; c; c = c->next) {
		const unsigned char *s = (const unsigned char *)c->string;
		const unsigned char *v = (const unsigned char *)c->valuestring;
		if ((s && (s < lo || s >= hi)) || (v && (v < lo || v >= hi)))
			return 0;
		if (!strings_within(c->child, lo, hi))
			return 0;
	}
	return 1;
}

static void test_load_doc_reads_the_image(void)
{
	char dir[] = "/tmp/vf-jsonimage-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	setenv("VRAMFIT_DATA_DIR", dir, 1);
	setenv("XDG_CONFIG_HOME", "/nonexistent-vramfit-test", 1);
	const char *names[] = {"gpus.json", "models/llm.json", "estimate/steptime.json"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		size_t ilen = 0;
		const unsigned char *img = vf__data_embedded_image(names[i], &ilen);
		struct vf_json_doc *d = NULL;
		struct vf_error err = {0};
		char source[256] = "";
		CHECK_INT(vf_data_load_doc(names[i], &d, source, sizeof source, &err), VF_OK);
		CHECK_CONTAINS(source, "embedded data/");
		const cJSON *root = vf_json_doc_root(d);
		CHECK(img && root && root->child && strings_within(root->child, img, img + ilen));
		vf_json_doc_free(d);
	}

	/* an override is the file's text, parsed and checked as before */
	char path[512];
	snprintf(path, sizeof path, "%s/gpus.json", dir);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("{\"gpus\": [{\"id\": \"x\",}]}", f);
		fclose(f);
	}
	struct vf_json_doc *d = NULL;
	struct vf_error err = {0};
	CHECK(vf_data_load_doc("gpus.json", &d, NULL, 0, &err) != VF_OK);
	CHECK(d == NULL);
	CHECK_CONTAINS(err.msg, path);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("{\"gpus\": []}", f);
		fclose(f);
	}
	CHECK_INT(vf_data_load_doc("gpus.json", &d, NULL, 0, &err), VF_OK);
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(vf_json_doc_root(d), "gpus");
	CHECK(cJSON_IsArray(g) && cJSON_GetArraySize(g) == 0);
	vf_json_doc_free(d);
	unlink(path);
	rmdir(dir);
	unsetenv("VRAMFIT_DATA_DIR");
}

static size_t count_nodes(const cJSON *c)
{
	size_t n = 0;
	for (; c; c = c->next)
		n += 1 + count_nodes(c->child);
	return n;
}

/* 1 when the image is refused with an error naming it, 0 when it gives a
 * tree (walked through), -1 when it answers neither way */
static int try_image(const unsigned char *img, size_t len)
{
	struct vf_json_doc *d = NULL;
	struct vf_error err = {0};
	vf_status st = vf__json_doc_from_image(img, len, "damaged.json", &d, &err);
	int r = -1;
	if (st == VF_OK && d && vf_json_doc_root(d))
		r = count_nodes(vf_json_doc_root(d)) > 0 ? 0 : -1;
	else if (st == VF_ERR && !d && strstr(err.msg, "damaged.json"))
		r = 1;
	vf_json_doc_free(d);
	return r;
}

static void test_damaged_images(void)
{
	size_t len = 0;
	const unsigned char *img = vf__data_embedded_image("models/ltx2.json", &len);
	CHECK(img != NULL && len > 64);
	if (!img)
		return;
	unsigned char *copy = malloc(len);
	CHECK(copy != NULL);
	if (!copy)
		return;
	size_t refused = 0, taken = 0;
	/* every truncation: a shorter image is the wrong size */
	for (size_t n = 0; n < len; n++) {
		memcpy(copy, img, n);
		int r = try_image(copy, n);
		CHECK(r == 1);
	}
	/* every byte of the header and the records flipped, and set to 0xff */
	uint32_t nodes;
	memcpy(&nodes, img + 4, 4);
	size_t rec_end = 12 + (size_t)nodes * 24;
	for (size_t k = 0; k < rec_end; k++) {
		for (int v = 0; v < 2; v++) {
			memcpy(copy, img, len);
			copy[k] = v ? 0xff : (unsigned char)(copy[k] ^ 0x01);
			int r = try_image(copy, len);
			CHECK(r >= 0);
			refused += r == 1;
			taken += r == 0;
		}
	}
	/* the pool's last NUL */
	memcpy(copy, img, len);
	copy[len - 1] = 'x';
	CHECK_INT(try_image(copy, len), 1);
	/* a wrong magic */
	memcpy(copy, img, len);
	copy[0] ^= 0x20;
	CHECK_INT(try_image(copy, len), 1);
	CHECK(refused > 0 && taken > 0);
	free(copy);
}

int main(void)
{
	RUN(test_every_image_is_the_text_tree);
	RUN(test_load_doc_reads_the_image);
	RUN(test_damaged_images);
	return vf_test_done();
}
