/* fuzz-json.c - libFuzzer target: the fast JSON path (lib/base/jsonfast.c)
 * against cJSON. Where the fast path gives a tree, cJSON must give the same
 * tree (json-same.h); where cJSON fails, the fast path must decline; and
 * vf_json_parse answers as cJSON does, less a NUL byte or data after the
 * top value (both refused); vf_json_doc_parse (the arena tree)
 * answers as vf_json_parse, tree and error message. Corpus: tests/fuzz/corpus/json/
 * (small texts written for it) and, via tests/fuzz/seeds/json, the shipped
 * catalogs. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json-same.h"
#include "vramfit/base/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	cJSON *fast = vf__json_parse_fast(text, size);
	const char *end = NULL;
	cJSON *ref = cJSON_ParseWithLengthOpts(text, size, &end, 0);
	if (fast && (!ref || !json_same(fast, ref)))
		abort();
	/* vf_json_parse is cJSON less a NUL byte anywhere and anything but
	 * white space after the top value */
	if (ref && (memchr(text, '\0', size) || !end)) {
		cJSON_Delete(ref);
		ref = NULL;
	}
	for (const char *p = end; ref && p < text + size; p++)
		if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
			cJSON_Delete(ref);
			ref = NULL;
		}
	struct vf_error err = {0};
	cJSON *got = NULL;
	vf_status st = vf_json_parse(text, size, "fuzz.json", &got, &err);
	if ((st == VF_OK) != (ref != NULL) || (got && !json_same(got, ref)))
		abort();
	struct vf_error derr = {0};
	struct vf_json_doc *doc = NULL;
	vf_status dst = vf_json_doc_parse(text, size, "fuzz.json", &doc, &derr);
	if (dst != st || strcmp(derr.msg, err.msg) != 0 || (doc != NULL) != (got != NULL) ||
	    (doc && !json_same(vf_json_doc_root(doc), got)))
		abort();
	vf_json_doc_free(doc);
	cJSON_Delete(got);
	cJSON_Delete(fast);
	cJSON_Delete(ref);
	return 0;
}
