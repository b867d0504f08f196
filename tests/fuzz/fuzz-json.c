/* fuzz-json.c - libFuzzer target: the fast JSON path (lib/base/jsonfast.c)
 * against cJSON. Where the fast path gives a tree, cJSON must give the same
 * tree (json-same.h); where cJSON fails, the fast path must decline; and
 * vf_json_parse answers as cJSON does. Corpus: tests/fuzz/corpus/json/
 * (small texts written for it) and, via tests/fuzz/seeds/json, the shipped
 * catalogs. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "json-same.h"
#include "vramfit/base/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	cJSON *fast = vf__json_parse_fast(text, size);
	cJSON *ref = cJSON_ParseWithLengthOpts(text, size, NULL, 0);
	if (fast && (!ref || !json_same(fast, ref)))
		abort();
	struct vf_error err = {0};
	cJSON *got = NULL;
	vf_status st = vf_json_parse(text, size, "fuzz.json", &got, &err);
	if ((st == VF_OK) != (ref != NULL) || (got && !json_same(got, ref)))
		abort();
	cJSON_Delete(got);
	cJSON_Delete(fast);
	cJSON_Delete(ref);
	return 0;
}
