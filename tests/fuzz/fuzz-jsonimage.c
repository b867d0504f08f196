/* fuzz-jsonimage.c - libFuzzer target: vf__json_doc_from_image
 * (lib/base/jsonfast.c) on any bytes. It must refuse with an error naming
 * the image, or give a well-formed cJSON tree: objects' members keyed,
 * array items not, the links cJSON keeps (json-same.h compares the tree
 * with cJSON's own copy of it), strings inside the image. Corpus:
 * tests/fuzz/corpus/jsonimage/ (images cmake/json-image.c wrote for small
 * texts written for it and for two shipped catalogs). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json-same.h"
#include "vramfit/base/json.h"

static int well_formed(const cJSON *c, int in_object, const uint8_t *lo, const uint8_t *hi)
{
	for (; c; c = c->next) {
		const uint8_t *k = (const uint8_t *)c->string, *v = (const uint8_t *)c->valuestring;
		if ((k != NULL) != in_object || (k && (k < lo || k + strlen(c->string) >= hi)) ||
		    (v && (v < lo || v + strlen(c->valuestring) >= hi)))
			return 0;
		if (!well_formed(c->child, cJSON_IsObject(c), lo, hi))
			return 0;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vf_error err = {0};
	struct vf_json_doc *doc = NULL;
	vf_status st = vf__json_doc_from_image(data, size, "fuzz.img", &doc, &err);
	if (st != VF_OK) {
		if (doc || !strstr(err.msg, "fuzz.img"))
			abort();
		return 0;
	}
	const cJSON *root = vf_json_doc_root(doc);
	if (!root || root->next || !well_formed(root, 0, data, data + size))
		abort();
	cJSON *copy = cJSON_Duplicate(root, 1);
	if (!copy || !json_same(root, copy))
		abort();
	cJSON_Delete(copy);
	vf_json_doc_free(doc);
	return 0;
}
