/* published-row.h - reading one row of a published-figures fixture
 * (the JSON files of tests/fixtures/published/) in the judges test-published.c and
 * test-published-train.c: a string field or NULL, a number or -1. */
#ifndef VF_TEST_PUBLISHED_ROW_H
#define VF_TEST_PUBLISHED_ROW_H

#include "vramfit/base/json.h"

static inline const char *str(const cJSON *o, const char *k)
{
	return vf_json_get_str(o, k);
}

static inline double num(const cJSON *o, const char *k)
{
	double v = -1;
	return vf_json_get_double(o, k, &v) ? v : -1;
}

#endif
