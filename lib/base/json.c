/* json.c - cJSON wrappers: bounded parsing with file-naming errors, typed
 * getters, printing. */
#include "vramfit/base/json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/base/buf.h"

vf_status vf__json_check_nul(const char *text, size_t len, const char *what, struct vf_error *err)
{
	/* JSON has no raw NUL (a string writes \u0000), and cJSON would read one
	 * as white space: '{"a":1' NUL '}' would pass as '{"a":1}' */
	const char *nul = len ? memchr(text, '\0', len) : NULL;
	if (nul)
		return vf_error_set(err, VF_ERR, "%s: invalid JSON: a NUL byte at byte %zu", what,
				    (size_t)(nul - text));
	return VF_OK;
}

vf_status vf_json_parse(const char *text, size_t len, const char *what, cJSON **out,
			struct vf_error *err)
{
	*out = NULL;
	vf_status st = vf__json_check_nul(text, len, what, err);
	if (st != VF_OK)
		return st;
	*out = vf__json_parse_fast(text, len);
	if (*out)
		return VF_OK;
	return vf__json_parse_cjson(text, len, what, out, err);
}

vf_status vf__json_parse_cjson(const char *text, size_t len, const char *what, cJSON **out,
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
	/* one value: only white space after it (cJSON stops at its end) */
	size_t at = end && end >= text && (size_t)(end - text) <= len ? (size_t)(end - text) : len;
	while (at < len && (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r'))
		at++;
	if (at < len) {
		cJSON_Delete(root);
		return vf_error_set(err, VF_ERR, "%s: invalid JSON: data after the top value at byte %zu", what, at);
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

vf_status vf_json_doc_parse_file(const char *path, size_t cap, struct vf_json_doc **out,
				 struct vf_error *err)
{
	struct vf_buf b;
	vf_buf_init(&b, 0);
	*out = NULL;
	vf_status st = vf_buf_read_file(&b, path, cap ? cap : VF_JSON_MAX_FILE, err);
	if (st == VF_OK)
		st = vf_json_doc_parse(b.data, b.len, path, out, err);
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

/* Strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF),
 * as Rust's str::from_utf8. Returns the offset of the first bad byte or
 * len when valid. */
size_t vf_utf8_check(const unsigned char *s, size_t len)
{
	size_t i = 0;
	while (i < len) {
		/* ASCII runs 8 bytes at a time */
		while (len - i >= 8) {
			uint64_t w;
			memcpy(&w, s + i, 8);
			if (w & 0x8080808080808080ull)
				break;
			i += 8;
		}
		if (i >= len)
			break;
		unsigned c = s[i];
		size_t n;
		unsigned lo = 0x80, hi = 0xBF;
		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xC2 && c <= 0xDF) {
			n = 1;
		} else if (c >= 0xE0 && c <= 0xEF) {
			n = 2;
			if (c == 0xE0)
				lo = 0xA0;
			if (c == 0xED)
				hi = 0x9F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			n = 3;
			if (c == 0xF0)
				lo = 0x90;
			if (c == 0xF4)
				hi = 0x8F;
		} else {
			return i;
		}
		if (i + n >= len) /* needs bytes i+1 .. i+n */
			return i;
		if ((unsigned)s[i + 1] < lo || (unsigned)s[i + 1] > hi)
			return i;
		for (size_t k = 2; k <= n; k++)
			if ((s[i + k] & 0xC0) != 0x80)
				return i;
		i += n + 1;
	}
	return len;
}

char *vf_json_print(const cJSON *root)
{
	char *s = cJSON_Print(root);
	if (!s)
		return NULL;
	/* cJSON copies string bytes as they are: a name that is not UTF-8 (a
	 * file name, a --gpu NAME) would make the output invalid JSON. Each
	 * bad byte becomes U+FFFD. */
	size_t len = strlen(s), bad = vf_utf8_check((const unsigned char *)s, len);
	if (bad == len)
		return s;
	struct vf_buf b;
	vf_buf_init(&b, 0);
	size_t i = 0;
	while (i < len) {
		size_t ok = vf_utf8_check((const unsigned char *)s + i, len - i);
		if (vf_buf_append(&b, s + i, ok, NULL) ||
		    (i + ok < len && vf_buf_append(&b, "\xEF\xBF\xBD", 3, NULL))) {
			vf_buf_release(&b);
			free(s);
			return NULL;
		}
		i += ok + (i + ok < len);
	}
	free(s);
	return vf_buf_detach(&b, NULL);
}

cJSON *vf_json_add_list(cJSON *obj, const char *key, const char *list)
{
	cJSON *arr = cJSON_AddArrayToObject(obj, key);
	for (const char *p = list; arr && p && *p;) {
		const char *e = strstr(p, ", ");
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char item[256];
		snprintf(item, sizeof item, "%.*s", (int)len, p);
		cJSON_AddItemToArray(arr, cJSON_CreateString(item));
		p += len + (e ? 2 : 0);
	}
	return arr;
}

cJSON *vf_json_add_i64_or_null(cJSON *obj, const char *key, int64_t v, bool known)
{
	if (!known)
		return cJSON_AddNullToObject(obj, key);
	return cJSON_AddNumberToObject(obj, key, (double)v);
}
