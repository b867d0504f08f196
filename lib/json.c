/* json.c - cJSON wrappers: bounded parsing with file-naming errors, typed
 * getters, printing. */
#include "vramfit/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/buf.h"

vf_status vf_json_parse(const char *text, size_t len, const char *what, cJSON **out,
			struct vf_error *err)
{
	*out = NULL;
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!root) {
		size_t off = end && end >= text ? (size_t)(end - text) : 0;
		if (off > len)
			off = len;
		return vf_error_set(err, VF_ERR, "%s: invalid JSON near byte %zu", what, off);
	}
	*out = root;
	return VF_OK;
}

vf_status vf_json_parse_file(const char *path, size_t cap, cJSON **out, struct vf_error *err)
{
	struct vf_buf b;
	vf_buf_init(&b, 0);
	vf_status st = vf_buf_read_file(&b, path, cap ? cap : VF_JSON_MAX_FILE, err);
	if (st == VF_OK)
		st = vf_json_parse(b.data, b.len, path, out, err);
	vf_buf_release(&b);
	return st;
}

bool vf_json_number_is_i64(const cJSON *n, int64_t *out)
{
	if (!cJSON_IsNumber(n))
		return false;
	double d = n->valuedouble;
	if (!isfinite(d) || d != floor(d) || d < -9.2e18 || d > 9.2e18)
		return false;
	if (out)
		*out = (int64_t)d;
	return true;
}

bool vf_json_get_i64(const cJSON *obj, const char *key, int64_t *out)
{
	return vf_json_number_is_i64(cJSON_GetObjectItemCaseSensitive(obj, key), out);
}

bool vf_json_get_double(const cJSON *obj, const char *key, double *out)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsNumber(n) || !isfinite(n->valuedouble))
		return false;
	if (out)
		*out = n->valuedouble;
	return true;
}

bool vf_json_get_bool(const cJSON *obj, const char *key, bool *out)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsBool(n))
		return false;
	if (out)
		*out = cJSON_IsTrue(n);
	return true;
}

const char *vf_json_get_str(const cJSON *obj, const char *key)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(n) ? n->valuestring : NULL;
}

char *vf_json_print(const cJSON *root)
{
	return cJSON_Print(root);
}

cJSON *vf_json_add_i64_or_null(cJSON *obj, const char *key, int64_t v, bool known)
{
	if (!known)
		return cJSON_AddNullToObject(obj, key);
	return cJSON_AddNumberToObject(obj, key, (double)v);
}
