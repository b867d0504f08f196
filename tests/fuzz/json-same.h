/* json-same.h - whether two cJSON trees are the same tree, field by field:
 * types, keys, strings, the double's bits, valueint, and the links cJSON
 * keeps (next, prev, the first child's prev at the last one). Shared by
 * tests/fuzz/fuzz-json.c and tests/unit/test-json.c, which hold the fast
 * parse path (lib/base/jsonfast.c) to cJSON's own tree. */
#ifndef VF_JSON_SAME_H
#define VF_JSON_SAME_H

#include <string.h>

#include <cjson/cJSON.h>

static int json_same_str(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

static int json_same(const cJSON *a, const cJSON *b)
{
	if (a->type != b->type || a->valueint != b->valueint ||
	    memcmp(&a->valuedouble, &b->valuedouble, sizeof a->valuedouble) != 0 ||
	    !json_same_str(a->string, b->string) || !json_same_str(a->valuestring, b->valuestring))
		return 0;
	const cJSON *x = a->child, *y = b->child;
	const cJSON *px = NULL, *py = NULL;
	while (x && y) {
		if (!json_same(x, y))
			return 0;
		/* prev: the one before, or at the first child the last one */
		if (px && (x->prev != px || y->prev != py))
			return 0;
		px = x;
		py = y;
		x = x->next;
		y = y->next;
	}
	if (x || y)
		return 0;
	if (a->child && (a->child->prev != px || b->child->prev != py))
		return 0;
	return 1;
}

#endif
