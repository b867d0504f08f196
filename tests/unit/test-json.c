/* test-json.c - vf_json_parse's fast path (lib/base/jsonfast.c) builds the
 * tree cJSON builds, takes every shipped catalog, declines what it does not
 * read (and cJSON then answers, errors included); vf_json_doc_parse's arena
 * tree is the same tree, with the same errors, on every text here. */
#include "vf_test.h"

#include <stdint.h>

#include "../fuzz/json-same.h"
#include "vramfit/base/data.h"
#include "vramfit/base/json.h"

/* 1 when vf_json_doc_parse answers as vf_json_parse: the same tree, or the
 * same error */
static int doc_as_parse(const char *text, size_t len)
{
	struct vf_error e1 = {0}, e2 = {0};
	cJSON *j = NULL;
	struct vf_json_doc *d = NULL;
	vf_status s1 = vf_json_parse(text, len, "t.json", &j, &e1);
	vf_status s2 = vf_json_doc_parse(text, len, "t.json", &d, &e2);
	int same = s1 == s2 && strcmp(e1.msg, e2.msg) == 0 && (d != NULL) == (j != NULL) &&
		   (!j || json_same(vf_json_doc_root(d), j));
	cJSON_Delete(j);
	vf_json_doc_free(d);
	return same;
}

/* 1 when the fast path took text and its tree is cJSON's; 0 when it
 * declined; -1 when it took text and the trees differ, or the doc answered
 * otherwise than vf_json_parse */
static int fast_vs_cjson(const char *text, size_t len)
{
	cJSON *fast = vf__json_parse_fast(text, len);
	cJSON *ref = cJSON_ParseWithLengthOpts(text, len, NULL, 0);
	int r = fast ? (ref && json_same(fast, ref) ? 1 : -1) : 0;
	if (!doc_as_parse(text, len))
		r = -1;
	cJSON_Delete(fast);
	cJSON_Delete(ref);
	return r;
}

static int fast_s(const char *text)
{
	return fast_vs_cjson(text, strlen(text));
}

static void test_catalogs_take_the_fast_path(void)
{
	int n = 0;
	for (size_t i = 0; vf_data_embedded_name(i); i++) {
		const char *name = vf_data_embedded_name(i);
		size_t len = strlen(name);
		if (len < 5 || strcmp(name + len - 5, ".json") != 0)
			continue;
		size_t dlen;
		const unsigned char *d = vf_data_embedded(name, &dlen);
		int r = fast_vs_cjson((const char *)d, dlen);
		if (r != 1)
			fprintf(stderr, "  %s: %d\n", name, r);
		CHECK_INT(r, 1);
		n++;
	}
	CHECK(n >= 5);
}

static void test_same_tree(void)
{
	const char *ok[] = {
		"{}", "[]", " \n\t[ ]\r\n", "0", "-0", "1", "-1", "0.5", "-0.125",
		"2147483647", "2147483648", "-2147483648", "-2147483649", "4294967296.5",
		"9007199254740992", "0.1", "0.3", "12345678.98765432", "0.000000000000000001", "1e3", "1E-2", "-2.5e+22",
		"4e-05", "3e-6", "1.25e1", "0e0", "9007199254740992e-22",
		"true", "false", "null", "\"\"", "\"a b\"", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
		"\"caf\xc3\xa9\"", "{\"a\":1,\"a\":2}", "[[[[]]],{}]",
		"{\"k\": [1, {\"x\": null}, \"s\"], \"e\": {}}", "[1,2,3,4,5,6,7,8]",
		"\x01[1]", "[1] \t\r\n",
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		size_t len = strlen(ok[i]);
		int r = fast_vs_cjson(ok[i], len);
		if (r != 1)
			fprintf(stderr, "  ok[%zu] %s: %d\n", i, ok[i], r);
		CHECK_INT(r, 1);
	}
}

static void test_declines(void)
{
	/* outside the subset: cJSON's answer stands (a tree or an error) */
	const char *no[] = {
		"0123", "1e23", "1e-23", "1e", "1e+", "1e1000", "1e5e", "123456789.987654321",
		"0.0000000000000000000001", "-", "1.", ".5", "+1", "00", "1.2.3",
		"9007199254740993", "12345678901234567890", "0.12345678901234567890123",
		"1.00000000000000000000001", "\"\\u00e9\"", "\"a\tb\"", "\"\\x\"", "\"open",
		"[1,]", "{\"a\":1,}", "{\"a\" 1}", "{1:2}", "[1 2]", "tru", "nul", "fals",
		"[1] x", "\xef\xbb\xbf[1]", "", "   ", "[", "{",
		"[1]\x1f", /* after the value JSON's white space only (vf_json_parse refuses it) */
	};
	for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
		int r = fast_s(no[i]);
		if (r != 0)
			fprintf(stderr, "  no[%zu] %s: %d\n", i, no[i], r);
		CHECK_INT(r, 0);
	}
	/* nesting past the fast path's depth: declined, cJSON reads it */
	char deep[2 * VF__JSON_FAST_DEPTH + 8];
	size_t k = 0;
	for (int i = 0; i <= VF__JSON_FAST_DEPTH; i++)
		deep[k++] = '[';
	for (int i = 0; i <= VF__JSON_FAST_DEPTH; i++)
		deep[k++] = ']';
	CHECK_INT(fast_vs_cjson(deep, k), 0);
	CHECK_INT(fast_vs_cjson(deep + 1, k - 2), 1);
}

/* decimals of every length and exponent the fast path takes: the double
 * is strtod's */
static void test_numbers_round_as_strtod(void)
{
	uint64_t x = 0x9E3779B97F4A7C15ull;
	int bad = 0, taken = 0;
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		char s[64];
		int digits = 1 + (int)(x % 16), dec = (int)((x >> 8) % (unsigned)(digits + 1));
		uint64_t m = (x >> 16) % 10000000000000000ull;
		char d[32];
		snprintf(d, sizeof d, "%0*llu", digits, (unsigned long long)(m % 10000000000000000ull));
		d[digits] = '\0';
		if (digits - dec > 1 && d[0] == '0')
			d[0] = '7';
		if (dec)
			snprintf(s, sizeof s, "%s%.*s.%s", (x >> 60) & 1 ? "-" : "", digits - dec, d,
				 d + digits - dec);
		else
			snprintf(s, sizeof s, "%s%s", (x >> 60) & 1 ? "-" : "", d);
		if (dec == digits) /* ".123": write "0.123" */
			snprintf(s, sizeof s, "%s0.%s", (x >> 60) & 1 ? "-" : "", d);
		if ((x >> 40) & 1) /* an exponent, some past the fast path's +-22 */
			snprintf(s + strlen(s), sizeof s - strlen(s), "e%d", (int)((x >> 41) % 61) - 30);
		int r = fast_s(s);
		if (r < 0 && bad++ < 5)
			fprintf(stderr, "  %s differs from cJSON\n", s);
		taken += r == 1;
	}
	CHECK_INT(bad, 0);
	CHECK(taken > 10000);
}

/* vf_json_parse: the tree or cJSON's error, fast path or not */
static void test_parse_errors_unchanged(void)
{
	struct vf_error err = {0};
	cJSON *j = NULL;
	CHECK(vf_json_parse("{\"a\": [1, 2,]}", 14, "x.json", &j, &err) == VF_ERR);
	CHECK_STR(err.msg, "x.json: invalid JSON near byte 12");
	CHECK(j == NULL);
	CHECK(vf_json_parse("[1e2, 3]", 8, "x.json", &j, &err) == VF_OK);
	CHECK(cJSON_GetArrayItem(j, 0)->valuedouble == 100);
	cJSON_Delete(j);
	CHECK(vf_json_parse("{\"a\": 0.25}", 11, "x.json", &j, &err) == VF_OK);
	CHECK(cJSON_GetObjectItemCaseSensitive(j, "a")->valuedouble == 0.25);
	/* the tree is one cJSON can extend */
	cJSON_AddNumberToObject(j, "b", 2);
	char *s = cJSON_PrintUnformatted(j);
	CHECK_STR(s, "{\"a\":0.25,\"b\":2}");
	cJSON_free(s);
	cJSON_Delete(j);
	/* a NUL byte (cJSON reads it as white space) and data after the top
	 * value are refused by both readers, naming the offset */
	static const struct {
		const char *text;
		size_t len;
		const char *msg;
	} strict[] = {
		{"{\"model_type\":\"llama\"\0}", 23, "c.json: invalid JSON: a NUL byte at byte 21"},
		{"{\"a\":\"x\0y\"}", 11, "c.json: invalid JSON: a NUL byte at byte 7"},
		{"{\"model_type\":\"llama\"} {\"x\":1}", 30, "c.json: invalid JSON: data after the top value at byte 23"},
		{"[1]\x01", 4, "c.json: invalid JSON: data after the top value at byte 3"},
		{"1 2", 3, "c.json: invalid JSON: data after the top value at byte 2"},
	};
	for (size_t i = 0; i < sizeof strict / sizeof strict[0]; i++) {
		j = NULL;
		CHECK(vf_json_parse(strict[i].text, strict[i].len, "c.json", &j, &err) == VF_ERR);
		CHECK_STR(err.msg, strict[i].msg);
		CHECK(j == NULL);
		struct vf_json_doc *d = NULL;
		CHECK(vf_json_doc_parse(strict[i].text, strict[i].len, "c.json", &d, &err) == VF_ERR);
		CHECK_STR(err.msg, strict[i].msg);
		CHECK(d == NULL);
	}
	CHECK(vf_json_parse("{\"a\":1} \t\r\n", 11, "c.json", &j, &err) == VF_OK);
	cJSON_Delete(j);
}

/* strings scanned 8 bytes at a time: a special byte (quote, backslash,
 * control) or a plain one at every position around the 8-byte steps, in
 * closed and unclosed strings */
static void test_string_chunks(void)
{
	static const char *const mid[] = {"\x01", "\x1f", " ", "!", "#", "[", "\x7f", "\x80",
					  "\xff", "\\n", "\\\"", "\\\\", "\\u0041"};
	/* 1: the fast path takes it; 0: declined (a control byte, \u) */
	static const int want[] = {0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0};
	char t[64];
	for (size_t m = 0; m < sizeof mid / sizeof *mid; m++)
		for (int len = 0; len <= 20; len++)
			for (int pos = 0; pos <= len; pos++) {
				int k = 0;
				t[k++] = '"';
				for (int i = 0; i <= len; i++) {
					if (i == pos)
						for (const char *c = mid[m]; *c; c++)
							t[k++] = *c;
					if (i < len)
						t[k++] = 'a';
				}
				t[k++] = '"';
				int r = fast_vs_cjson(t, (size_t)k);
				if (r != want[m])
					fprintf(stderr, "  mid %zu len %d pos %d: %d\n", m, len, pos, r);
				CHECK_INT(r, want[m]);
				/* unclosed: declined, cJSON's error */
				CHECK_INT(fast_vs_cjson(t, (size_t)k - 1), 0);
			}
}

/* the arena grows past its first block (2 bytes of text per 64-byte node,
 * long strings): the same tree; errors as vf_json_parse's; NULL frees */
static void test_doc_arena(void)
{
	enum { N = 40000 };
	char *t = malloc(3 * N + 8);
	CHECK(t != NULL);
	size_t k = 0;
	t[k++] = '[';
	for (int i = 0; i < N; i++) {
		t[k++] = i % 3 == 0 ? '{' : '7';
		if (i % 3 == 0)
			t[k++] = '}';
		t[k++] = ',';
	}
	t[k - 1] = ']';
	CHECK_INT(fast_vs_cjson(t, k), 1);
	free(t);
	size_t big = 300000;
	char *s = malloc(big + 8);
	CHECK(s != NULL);
	s[0] = '"';
	memset(s + 1, 'x', big);
	s[big + 1] = '"';
	CHECK_INT(fast_vs_cjson(s, big + 2), 1);
	free(s);
	struct vf_error err = {0};
	struct vf_json_doc *d = (struct vf_json_doc *)1;
	CHECK(vf_json_doc_parse("[1, 2", 5, "y.json", &d, &err) == VF_ERR);
	CHECK_STR(err.msg, "y.json: invalid JSON near byte 4"); /* vf_json_parse's */
	CHECK(doc_as_parse("[1, 2", 5));
	CHECK(d == NULL);
	/* declined by the fast path: cJSON's tree, owned by the doc */
	CHECK(vf_json_doc_parse("{\"a\": \"\\u00e9\"}", 15, "y.json", &d, &err) == VF_OK);
	CHECK_STR(cJSON_GetObjectItemCaseSensitive(vf_json_doc_root(d), "a")->valuestring,
		  "\xc3\xa9");
	vf_json_doc_free(d);
	vf_json_doc_free(NULL);
	CHECK(vf_json_doc_root(NULL) == NULL);
}

int main(void)
{
	RUN(test_catalogs_take_the_fast_path);
	RUN(test_same_tree);
	RUN(test_declines);
	RUN(test_numbers_round_as_strtod);
	RUN(test_parse_errors_unchanged);
	RUN(test_doc_arena);
	RUN(test_string_chunks);
	return vf_test_done();
}
