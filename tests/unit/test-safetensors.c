/* test-safetensors.c - the header reader: every file of
 * ../shared/fixtures/models/EXPECTED.json gives its counts, and every
 * malformed case (generated here in a temp dir) fails with one line naming
 * the file and the problem. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/base/json.h"
#include "vramfit/model/safetensors.h"

static char tmpdir[] = "/tmp/vf-test-st-XXXXXX";

/* Write a safetensors file: length (or len_override when != UINT64_MAX),
 * header text, then data_len zero bytes. Returns its path (static). */
static const char *write_st(const char *name, const char *header, uint64_t len_override,
			    size_t data_len)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return path;
	uint64_t n = len_override != UINT64_MAX ? len_override : strlen(header);
	unsigned char le[8];
	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)(n >> (8 * i));
	fwrite(le, 1, 8, f);
	fwrite(header, 1, strlen(header), f);
	for (size_t i = 0; i < data_len; i++)
		fputc(0, f);
	fclose(f);
	return path;
}

/* Expect failure: VF_ERR, message names the file and contains `what`, one line. */
static void expect_bad(const char *path, const char *what)
{
	struct vf_safetensors st;
	struct vf_error err = {0};
	vf_status rc = vf_safetensors_read(path, &st, &err);
	if (rc == VF_OK)
		fprintf(stderr, "  %s: accepted, expected '%s'\n", path, what);
	CHECK(rc == VF_ERR);
	CHECK_CONTAINS(err.msg, path);
	CHECK_CONTAINS(err.msg, what);
	CHECK(strchr(err.msg, '\n') == NULL);
	vf_safetensors_release(&st);
}

#define T1(extra) "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}" extra "}"

static void test_expected_json(void)
{
	char path[1024];
	const char *shared = vf_test_env("VF_SHARED_DIR", "../shared");
	snprintf(path, sizeof path, "%s/fixtures/models/EXPECTED.json", shared);
	cJSON *exp = NULL;
	struct vf_error err = {0};
	CHECK(vf_json_parse_file(path, 0, &exp, &err) == VF_OK);
	int files = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, exp)
	{
		snprintf(path, sizeof path, "%s/fixtures/models/%s", shared, e->string);
		struct vf_safetensors st;
		CHECK(vf_safetensors_read(path, &st, &err) == VF_OK);
		int64_t v;
		CHECK(vf_json_get_i64(e, "file_bytes", &v) && (int64_t)st.file_bytes == v);
		CHECK(vf_json_get_i64(e, "header_len", &v) && (int64_t)st.header_len == v);
		CHECK(vf_json_get_i64(e, "params", &v) && st.params == v);
		CHECK(vf_json_get_i64(e, "tensors", &v) && (int64_t)st.ntensors == v);
		const cJSON *by = cJSON_GetObjectItem(e, "params_by_dtype");
		int64_t sum = 0;
		const cJSON *d;
		cJSON_ArrayForEach(d, by)
		{
			enum vf_dtype dt;
			CHECK(vf_dtype_from_name(d->string, &dt));
			CHECK(vf_json_number_is_i64(d, &v) && st.dtype_params[dt] == v);
			sum += v;
		}
		CHECK(sum == st.params);
		vf_safetensors_release(&st);
		files++;
	}
	CHECK_INT(files, 10);
	cJSON_Delete(exp);

	/* dtypes.safetensors: F8, BOOL, a scalar, an empty tensor, metadata */
	snprintf(path, sizeof path, "%s/fixtures/models/dtypes.safetensors", shared);
	struct vf_safetensors st;
	CHECK(vf_safetensors_read(path, &st, &err) == VF_OK);
	const struct vf_tensor *t = vf_safetensors_find(&st, "scalar");
	CHECK(t && t->ndim == 0 && t->numel == 1);
	t = vf_safetensors_find(&st, "empty");
	CHECK(t && t->ndim == 2 && t->numel == 0 && t->begin == t->end);
	t = vf_safetensors_find(&st, "f8_e4m3");
	CHECK(t && t->dtype == VF_DT_F8_E4M3);
	CHECK_STR(vf_json_get_str(st.metadata, "note"), "fixture");
	CHECK_STR(vf_json_get_str(st.metadata, "format"), "pt");
	vf_safetensors_release(&st);
}

static void test_dtypes(void)
{
	static const char *names[] = {"F64",     "F32",     "F16",     "BF16", "F8_E4M3",
				      "F8_E5M2", "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4",
				      "C64",     "I64",     "I32",     "I16",  "I8",
				      "U64",     "U32",     "U16",     "U8",   "BOOL"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		enum vf_dtype d;
		CHECK(vf_dtype_from_name(names[i], &d));
		CHECK_STR(vf_dtype_name(d), names[i]);
	}
	enum vf_dtype d;
	CHECK(!vf_dtype_from_name("F12", &d));
	/* sub-byte dtypes: 4 x F4 = 2 bytes; 4 x F6 = 3 bytes; 3 x F4 misaligned */
	const char *p = write_st("f4.safetensors",
				 "{\"a\":{\"dtype\":\"F4\",\"shape\":[4],\"data_offsets\":[0,2]},"
				 "\"b\":{\"dtype\":\"F6_E2M3\",\"shape\":[2,2],\"data_offsets\":[2,5]}}",
				 UINT64_MAX, 5);
	struct vf_safetensors st;
	struct vf_error err = {0};
	CHECK(vf_safetensors_read(p, &st, &err) == VF_OK);
	CHECK_INT(st.params, 8);
	CHECK_INT(st.data_bytes, 5);
	vf_safetensors_release(&st);
	p = write_st("f4bad.safetensors",
		     "{\"a\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,2]}}", UINT64_MAX, 2);
	expect_bad(p, "not a whole number of bytes");
	/* padding spaces after the object are allowed (the writers align) */
	p = write_st("pad.safetensors", T1("") "      ", UINT64_MAX, 8);
	CHECK(vf_safetensors_read(p, &st, &err) == VF_OK);
	vf_safetensors_release(&st);
	/* an empty header object: no tensors, 8 + 2 bytes */
	p = write_st("empty.safetensors", "{}", UINT64_MAX, 0);
	CHECK(vf_safetensors_read(p, &st, &err) == VF_OK);
	CHECK_INT(st.ntensors, 0);
	vf_safetensors_release(&st);
}

static void test_malformed(void)
{
	const char *p;
	/* truncated: fewer than 8 bytes */
	char path[512];
	snprintf(path, sizeof path, "%s/short.safetensors", tmpdir);
	FILE *f = fopen(path, "wb");
	fwrite("\x10\x00\x00", 1, 3, f);
	fclose(f);
	expect_bad(path, "truncated");
	/* header length larger than the file */
	p = write_st("long.safetensors", T1(""), 4096, 8);
	expect_bad(p, "header length 4096 exceeds the file size");
	/* length 2^63 */
	p = write_st("huge.safetensors", T1(""), (uint64_t)1 << 63, 8);
	expect_bad(p, "header length 9223372036854775808 exceeds the limit of 100000000");
	/* 100 MB + 1 */
	p = write_st("limit.safetensors", T1(""), 100000001, 8);
	expect_bad(p, "exceeds the limit");
	/* not a safetensors file at all: its first 8 bytes read as a length
	 * beyond the limit or the file, and no '{' follows; the error says
	 * what the file starts with instead of quoting the length */
	snprintf(path, sizeof path, "%s/notes.safetensors", tmpdir);
	f = fopen(path, "wb");
	fputs("these are my training notes, not weights\n", f);
	fclose(f);
	expect_bad(path, "not a safetensors file: it starts with text \"these are my tra");
	snprintf(path, sizeof path, "%s/zip.safetensors", tmpdir);
	f = fopen(path, "wb");
	static const char zip[] = "PK\x03\x04\x14\x00\x00\x00\x08\x00 zip body of a torch.save file";
	fwrite(zip, 1, sizeof zip - 1, f);
	fclose(f);
	expect_bad(path, "not a safetensors file: it starts with bytes 50 4b 03 04 14 00 00 00 (a zip archive");
	snprintf(path, sizeof path, "%s/gguf.safetensors", tmpdir);
	f = fopen(path, "wb");
	static const char gguf[] = "GGUF\x03\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00 and the rest";
	fwrite(gguf, 1, sizeof gguf - 1, f);
	fclose(f);
	expect_bad(path, "not a safetensors file: it starts with bytes 47 47 55 46 03 00 00 00 (a GGUF file");
	/* header not JSON; JSON not an object; not UTF-8; junk after */
	p = write_st("notjson.safetensors", "{hello", UINT64_MAX, 0);
	expect_bad(p, "header is not valid JSON");
	p = write_st("array.safetensors", "[1, 2, 3]", UINT64_MAX, 0);
	expect_bad(p, "header is not a JSON object");
	p = write_st("string.safetensors", "\"abc\"", UINT64_MAX, 0);
	expect_bad(p, "header is not a JSON object");
	p = write_st("utf8.safetensors", "{\"\xff\":1}", UINT64_MAX, 0);
	expect_bad(p, "not UTF-8");
	p = write_st("junk.safetensors", T1("") "xx", UINT64_MAX, 8);
	expect_bad(p, "data after its JSON object");
	/* missing or wrong-typed fields */
	p = write_st("nodtype.safetensors", "{\"a\":{\"shape\":[2],\"data_offsets\":[0,8]}}",
		     UINT64_MAX, 8);
	expect_bad(p, "tensor 'a': missing field dtype");
	p = write_st("noshape.safetensors", "{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,8]}}",
		     UINT64_MAX, 8);
	expect_bad(p, "tensor 'a': missing field shape");
	p = write_st("nooffs.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}",
		     UINT64_MAX, 8);
	expect_bad(p, "tensor 'a': missing field data_offsets");
	p = write_st("dtypenum.safetensors",
		     "{\"a\":{\"dtype\":7,\"shape\":[2],\"data_offsets\":[0,8]}}", UINT64_MAX, 8);
	expect_bad(p, "field dtype: expected a string");
	p = write_st("shapestr.safetensors",
		     "{\"a\":{\"dtype\":\"F32\",\"shape\":\"2\",\"data_offsets\":[0,8]}}",
		     UINT64_MAX, 8);
	expect_bad(p, "field shape: expected an array");
	p = write_st("shapeneg.safetensors",
		     "{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}",
		     UINT64_MAX, 8);
	expect_bad(p, "field shape: expected integers >= 0");
	p = write_st("shapefrac.safetensors",
		     "{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,8]}}",
		     UINT64_MAX, 8);
	expect_bad(p, "field shape: expected integers >= 0");
	p = write_st("tensornum.safetensors", "{\"a\":5}", UINT64_MAX, 0);
	expect_bad(p, "tensor 'a': expected an object");
	p = write_st("offs3.safetensors",
		     "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4,8]}}",
		     UINT64_MAX, 8);
	expect_bad(p, "field data_offsets: expected [begin, end]");
	/* negative and reversed offsets */
	p = write_st("negoff.safetensors",
		     "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[-8,0]}}",
		     UINT64_MAX, 8);
	expect_bad(p, "expected two integers >= 0");
	p = write_st("reversed.safetensors",
		     "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}",
		     UINT64_MAX, 8);
	expect_bad(p, "data_offsets [8, 0] are reversed");
	/* overlapping and gapped offsets */
	p = write_st("overlap.safetensors",
		     "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
		     "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
		     UINT64_MAX, 12);
	expect_bad(p, "overlap");
	p = write_st("gap.safetensors",
		     "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
		     "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]}}",
		     UINT64_MAX, 20);
	expect_bad(p, "leave a gap after byte 8");
	p = write_st("startgap.safetensors",
		     "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", UINT64_MAX,
		     12);
	expect_bad(p, "leave a gap after byte 0");
	/* size mismatch with dtype x shape */
	p = write_st("size.safetensors",
		     "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", UINT64_MAX,
		     8);
	expect_bad(p, "hold 8 bytes, dtype F32 x shape needs 12");
	/* shape overflow */
	p = write_st("overflow.safetensors",
		     "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],"
		     "\"data_offsets\":[0,8]}}",
		     UINT64_MAX, 8);
	expect_bad(p, "shape product overflows");
	p = write_st("overflow2.safetensors",
		     "{\"a\":{\"dtype\":\"F64\",\"shape\":[4611686018427387904],"
		     "\"data_offsets\":[0,8]}}",
		     UINT64_MAX, 8);
	expect_bad(p, "shape product overflows");
	/* unknown dtype */
	p = write_st("dtype.safetensors",
		     "{\"a\":{\"dtype\":\"F12\",\"shape\":[2],\"data_offsets\":[0,8]}}", UINT64_MAX,
		     8);
	expect_bad(p, "unknown dtype 'F12'");
	/* duplicate tensor names */
	p = write_st("dup.safetensors",
		     "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
		     "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}",
		     UINT64_MAX, 16);
	expect_bad(p, "tensor 'a' appears twice");
	/* data section shorter / longer than the offsets say */
	p = write_st("shortdata.safetensors", T1(""), UINT64_MAX, 4);
	expect_bad(p, "header and data need exactly");
	p = write_st("longdata.safetensors", T1(""), UINT64_MAX, 9);
	expect_bad(p, "header and data need exactly");
	/* __metadata__ values must be strings */
	p = write_st("meta.safetensors", T1(",\"__metadata__\":{\"k\":1}"), UINT64_MAX, 8);
	expect_bad(p, "__metadata__: value of 'k' is not a string");
	p = write_st("meta2.safetensors", T1(",\"__metadata__\":[]"), UINT64_MAX, 8);
	expect_bad(p, "__metadata__: expected an object");
	/* not found, a directory, a symlink loop */
	struct vf_safetensors st;
	struct vf_error err = {0};
	snprintf(path, sizeof path, "%s/none.safetensors", tmpdir);
	CHECK(vf_safetensors_read(path, &st, &err) == VF_ENOTFOUND);
	CHECK_CONTAINS(err.msg, "none.safetensors");
	CHECK(vf_safetensors_read(tmpdir, &st, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "not a regular file");
	snprintf(path, sizeof path, "%s/loop.safetensors", tmpdir);
	CHECK(symlink("loop.safetensors", path) == 0);
	expect_bad(path, "symlink loop");
}

/* A header that must read: returns the parsed file (release it). */
static void expect_ok(const char *name, const char *header, size_t data_len,
		      struct vf_safetensors *st)
{
	const char *p = write_st(name, header, UINT64_MAX, data_len);
	struct vf_error err = {0};
	vf_status rc = vf_safetensors_read(p, st, &err);
	if (rc != VF_OK)
		fprintf(stderr, "  %s: %s\n", name, err.msg);
	CHECK(rc == VF_OK);
}

/* The scanner: escapes in names, whitespace, key order, fields it skips,
 * metadata anywhere. */
static void test_scanner_accepts(void)
{
	struct vf_safetensors st;
	/* escapes: quote, backslash, slash, \n, a 2-byte and a 3-byte code
	 * point, a surrogate pair (U+1F600), raw UTF-8 */
	expect_ok("esc.safetensors",
		  "{\"a\\\"b\\\\c\\/d\\ne\\u00e9\\u20AC\\ud83d\\ude00\xc3\xa9\":"
		  "{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
		  8, &st);
	CHECK_INT(st.ntensors, 1);
	CHECK_STR(st.tensors[0].name, "a\"b\\c/d\ne\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc3\xa9");
	CHECK(vf_safetensors_find(&st, "a\"b\\c/d\ne\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc3\xa9"));
	vf_safetensors_release(&st);
	/* escaped field names and dtype; whitespace everywhere; fields in any
	 * order; unknown fields (nested) skipped; metadata first, escaped */
	expect_ok("ws.safetensors",
		  " \r\n\t{ \"__metadata__\" : { \"k\\u0031\" : \"v\\t1\" , \"format\":\"pt\" } ,\n"
		  "  \"b\" : { \"data_offsets\" : [ 8 , 20 ] , \"extra\" : {\"x\":[1,{\"y\":null}],"
		  "\"z\":true} , \"sh\\u0061pe\" : [ 3 ] , \"dtype\" : \"F\\u00332\" } ,\n"
		  "  \"a\":{\"shape\":[2],\"dtype\":\"I32\",\"data_offsets\":[0,8]}\n} \n ",
		  20, &st);
	CHECK_INT(st.ntensors, 2);
	CHECK_STR(st.tensors[0].name, "b");
	CHECK(st.tensors[0].dtype == VF_DT_F32 && st.tensors[0].ndim == 1 &&
	      st.tensors[0].shape[0] == 3 && st.tensors[0].begin == 8);
	CHECK_STR(st.tensors[1].name, "a");
	CHECK(st.tensors[1].dtype == VF_DT_I32 && st.tensors[1].end == 8);
	CHECK_INT(st.data_bytes, 20);
	CHECK_STR(vf_json_get_str(st.metadata, "k1"), "v\t1");
	CHECK_STR(vf_json_get_str(st.metadata, "format"), "pt");
	CHECK_INT(cJSON_GetArraySize(st.metadata), 2);
	vf_safetensors_release(&st);
	/* metadata last, null metadata, an empty metadata object */
	expect_ok("metalast.safetensors", T1(",\"__metadata__\":{\"x\":\"\\u00fc\"}"), 8, &st);
	CHECK_STR(vf_json_get_str(st.metadata, "x"), "\xc3\xbc");
	vf_safetensors_release(&st);
	expect_ok("metanull.safetensors", T1(",\"__metadata__\":null"), 8, &st);
	CHECK(st.metadata == NULL);
	vf_safetensors_release(&st);
	expect_ok("metaempty.safetensors", T1(",\"__metadata__\":{}"), 8, &st);
	CHECK(st.metadata && cJSON_GetArraySize(st.metadata) == 0);
	vf_safetensors_release(&st);
	/* numbers written as whole doubles (8.0, 2e0) read as before; a
	 * scalar, a zero-sized dimension, dims in order across tensors */
	expect_ok("doubles.safetensors",
		  "{\"a\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8e0]},"
		  "\"s\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[8,9]},"
		  "\"z\":{\"dtype\":\"F16\",\"shape\":[0,7,3],\"data_offsets\":[9,9]},"
		  "\"m\":{\"dtype\":\"BF16\",\"shape\":[2,3],\"data_offsets\":[9,21]}}",
		  21, &st);
	CHECK_INT(st.ntensors, 4);
	CHECK(st.tensors[0].numel == 2 && st.tensors[0].shape[0] == 2);
	CHECK(st.tensors[1].ndim == 0 && st.tensors[1].shape == NULL && st.tensors[1].numel == 1);
	CHECK(st.tensors[2].ndim == 3 && st.tensors[2].shape[1] == 7 && st.tensors[2].numel == 0);
	CHECK(st.tensors[3].ndim == 2 && st.tensors[3].shape[0] == 2 && st.tensors[3].shape[1] == 3);
	CHECK_INT(st.params, 2 + 1 + 0 + 6);
	vf_safetensors_release(&st);
	/* tensors out of offset order are sorted for the layout check */
	expect_ok("unsorted.safetensors",
		  "{\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]},"
		  "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
		  16, &st);
	CHECK_INT(st.data_bytes, 16);
	vf_safetensors_release(&st);
}

/* A header longer than the first read (128 KiB): a second pread, same result. */
static void test_long_header(void)
{
	size_t n = 4000;
	char *h = malloc(n * 128 + 16);
	size_t len = 0;
	h[len++] = '{';
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(h + len,
				       "%s\"model.layers.%zu.weight\":{\"dtype\":\"U8\",\"shape\":[1],"
				       "\"data_offsets\":[%zu,%zu]}",
				       i ? "," : "", i, i, i + 1);
	h[len++] = '}';
	h[len] = 0;
	CHECK(len > (128u << 10));
	struct vf_safetensors st;
	expect_ok("long.safetensors", h, n, &st);
	CHECK_INT(st.ntensors, n);
	CHECK_INT(st.header_len, len);
	CHECK_STR(st.tensors[n - 1].name, "model.layers.3999.weight");
	CHECK_INT(st.params, n);
	vf_safetensors_release(&st);
	/* the same, cut short: the file ends inside the header */
	const char *p = write_st("longcut.safetensors", h, len + 10, 0);
	expect_bad(p, "header length");
	free(h);
}

/* Not JSON, however close: each names the problem and where. */
static void test_scanner_rejects(void)
{
	static const struct {
		const char *header, *what;
	} bad[] = {
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},}", "not valid JSON"},
		{"{\"a\" {\"dtype\":\"F32\"}}", "expected ':'"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}", "not valid JSON"},
		{"{\"a\":{\"dtype\":\"F32", "unterminated string"},
		{"{\"a\\", "unterminated string"},
		{"{\"a\\x\":1}", "bad escape"},
		{"{\"a\\u12G4\":1}", "bad \\u escape"},
		{"{\"a\\u12\"}", "bad \\u escape"},
		{"{\"a\\ud83d\":1}", "lone high surrogate"},
		{"{\"a\\ud83d\\u0041\":1}", "lone high surrogate"},
		{"{\"a\\ude00\":1}", "lone low surrogate"},
		{"{\"a\\u0000b\":1}", "\\u0000"},
		{"{\"a\tb\":1}", "control character"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[02],\"data_offsets\":[0,8]}}", "not valid JSON"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[2.],\"data_offsets\":[0,8]}}", "bad number"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[-],\"data_offsets\":[0,8]}}", "bad number"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[+2],\"data_offsets\":[0,8]}}", "bad number"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[1e],\"data_offsets\":[0,8]}}", "bad number"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":tru}}",
		 "expected a value"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":nul}}",
		 "expected a value"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}\x0c", "data after"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}} {}", "data after"},
		{"\x0c{}", "not a JSON object"},
		{"", "not a JSON object"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char name[64];
		snprintf(name, sizeof name, "syntax%zu.safetensors", i);
		expect_bad(write_st(name, bad[i].header, UINT64_MAX, 8), bad[i].what);
	}
	/* nesting: 128 levels is the limit (in a field the scanner skips) */
	char deep[1200];
	size_t k = (size_t)sprintf(deep, "{\"a\":{\"x\":");
	for (int i = 0; i < 200; i++)
		deep[k++] = '[';
	for (int i = 0; i < 200; i++)
		deep[k++] = ']';
	strcpy(deep + k, ",\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}");
	expect_bad(write_st("deep.safetensors", deep, UINT64_MAX, 8), "nested deeper than 128");
	k = (size_t)sprintf(deep, "{\"a\":{\"x\":");
	for (int i = 0; i < 120; i++)
		deep[k++] = '[';
	for (int i = 0; i < 120; i++)
		deep[k++] = ']';
	strcpy(deep + k, ",\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}");
	struct vf_safetensors st;
	expect_ok("deepok.safetensors", deep, 8, &st);
	vf_safetensors_release(&st);
	/* a syntax error after a tensor problem: the syntax error is named,
	 * as when the whole text was parsed before any tensor was looked at */
	expect_bad(write_st("order.safetensors",
			    "{\"a\":{\"shape\":[2],\"data_offsets\":[0,8]},\"b\":[1,]}", UINT64_MAX, 8),
		   "not valid JSON");
	/* a field given twice (the reference's reader refuses it too) */
	expect_bad(write_st("twice.safetensors",
			    "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],"
			    "\"dtype\":\"F16\"}}",
			    UINT64_MAX, 8),
		   "tensor 'a': field dtype appears twice");
	/* a second problem does not replace the first */
	expect_bad(write_st("first.safetensors",
			    "{\"a\":{\"dtype\":\"F99\",\"shape\":[2],\"data_offsets\":[0,8]},"
			    "\"b\":{\"shape\":[2],\"data_offsets\":[8,16]}}",
			    UINT64_MAX, 16),
		   "tensor 'a': unknown dtype 'F99'");
	/* an escaped name in an error comes out decoded */
	expect_bad(write_st("escname.safetensors",
			    "{\"\\u0041\\u00e9\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}",
			    UINT64_MAX, 8),
		   "tensor 'A\xc3\xa9': data_offsets [0, 8] hold 8 bytes");
	/* duplicates: the first in name order is named, whatever the header order */
	expect_bad(write_st("dup2.safetensors",
			    "{\"z\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
			    "\"z\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]},"
			    "\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[2,3]},"
			    "\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[3,4]}}",
			    UINT64_MAX, 4),
		   "tensor 'b' appears twice");
	/* offsets past 2^53 are refused, whole numbers past 2^64 in a shape overflow */
	expect_bad(write_st("bigoff.safetensors",
			    "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],"
			    "\"data_offsets\":[0,9007199254740993]}}",
			    UINT64_MAX, 1),
		   "expected two integers >= 0");
	expect_bad(write_st("bigdim.safetensors",
			    "{\"a\":{\"dtype\":\"U8\",\"shape\":[1,123456789012345678901234],"
			    "\"data_offsets\":[0,1]}}",
			    UINT64_MAX, 1),
		   "shape product overflows");
	expect_bad(write_st("negzero.safetensors",
			    "{\"a\":{\"dtype\":\"U8\",\"shape\":[-1],\"data_offsets\":[0,1]}}",
			    UINT64_MAX, 1),
		   "expected integers >= 0");
	/* metadata: a value that is not a string, twice, a problem inside it */
	expect_bad(write_st("metatwice.safetensors",
			    T1(",\"__metadata__\":{},\"__metadata__\":{}"), UINT64_MAX, 8),
		   "__metadata__ appears twice");
	expect_bad(write_st("metanest.safetensors",
			    T1(",\"__metadata__\":{\"a\":\"x\",\"b\":{\"c\":\"d\"}}"), UINT64_MAX, 8),
		   "__metadata__: value of 'b' is not a string");
}

/* parse from memory (the fuzz entry point) never reads past len */
static void test_parse_memory(void)
{
	const char hdr[] = T1("");
	unsigned char buf[8 + sizeof hdr - 1];
	uint64_t n = sizeof hdr - 1;
	for (int i = 0; i < 8; i++)
		buf[i] = (unsigned char)(n >> (8 * i));
	memcpy(buf + 8, hdr, n);
	struct vf_safetensors st;
	struct vf_error err = {0};
	CHECK(vf_safetensors_parse(buf, sizeof buf, sizeof buf + 8, "mem", &st, &err) == VF_OK);
	CHECK_INT(st.params, 2);
	vf_safetensors_release(&st);
	CHECK(vf_safetensors_parse(buf, 20, sizeof buf + 8, "mem", &st, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "mem: truncated header");
	vf_safetensors_release(&st);
}

/* Parse header text in memory (8 data bytes after it). */
static vf_status parse_text(const char *hdr, struct vf_safetensors *st, struct vf_error *err)
{
	size_t n = strlen(hdr);
	unsigned char *buf = malloc(8 + n);
	if (!buf)
		return VF_ENOMEM;
	for (int i = 0; i < 8; i++)
		buf[i] = (unsigned char)((uint64_t)n >> (8 * i));
	memcpy(buf + 8, hdr, n);
	vf_status rc = vf_safetensors_parse(buf, 8 + n, 8 + n + 8, "mem", st, err);
	free(buf);
	return rc;
}

/* A message with the numbers after "byte " blanked. */
static void blank_bytes(const char *msg, char *out, size_t cap)
{
	size_t o = 0;
	for (const char *p = msg; *p && o + 1 < cap; p++) {
		out[o++] = *p;
		if (p - msg >= 4 && strncmp(p - 4, "byte ", 5) == 0)
			while (p[1] >= '0' && p[1] <= '9')
				p++;
	}
	out[o] = 0;
}

/* A tensor object as writers lay it out is read by a shortcut; the same
 * object with one space after its '{' is read by the general scanner. Both
 * give the same tensors, or the same error (byte positions aside), for
 * canonical objects and for each way an object can leave the shape. */
static void test_canonical_shortcut(void)
{
	static const char *const objs[] = {
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}",
		"{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}",
		"{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[0,0]}",
		"{\"dtype\":\"F8_E4M3\",\"shape\":[8],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,1]}",
		"{\"dtype\":\"F32\",\"shape\":[02],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[00,8]}",
		"{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"shape\":[2e0],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"shape\":[2E+0],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"shape\":[-0],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"shape\":[18446744073709551616],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"shape\":[9999999999999999999],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"shape\":[1000000000000000000],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,9007199254740992]}",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,9007199254740993]}",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[9007199254740993,8]}",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8,16]}",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8]}",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[]}",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,12]}",
		"{\"dtype\":\"f32\",\"shape\":[2],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"\",\"shape\":[2],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F\\u0033\\u0032\",\"shape\":[2],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\",\"shape\":[2],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\",\"shape\":[2],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\",\"shape\":[2],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1}",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]]",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
		"{\"dtype\":\"F32\",\"shape\":[2,],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,]}",
		"{\"dtype\":\"F32\",\"shape\":[2] ,\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8] }",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8x]}",
		"{\"dtype\":\"F32\",\"shape\":[2x],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"shape\":[\"2\"],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"shape\":2,\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"shape\":[2],\"shape\":[2],\"data_offsets\":[0,8]}",
		"{\"dtype\":\"F32\",\"data_offsets\":[0,8],\"shape\":[2]}",
		"{\"dtype\":\"F32\",\"shape\":[2]}",
		"{\"dtype\":\"F32\"",
		"{\"dtype\":\"F32",
		"{\"dtype\":",
		"{\"dtype\":\"F32\",\"shape\":[2",
		"{\"dtype\":\"F32\",\"shape\":[",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8",
		"{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0",
	};
	/* what follows the object: nothing, a good tensor (from 8), a syntax error */
	static const char *const after[] = {
		"",
		",\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}",
		",\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]},",
	};
	char compact[512], spaced[512], m1[VF_ERROR_MAX], m2[VF_ERROR_MAX];
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++)
		for (size_t k = 0; k < sizeof after / sizeof after[0]; k++) {
			/* the same length: the compact one ends with a space */
			snprintf(compact, sizeof compact, "{\"a\":%s%s} ", objs[i], after[k]);
			snprintf(spaced, sizeof spaced, "{\"a\":{ %s%s}", objs[i] + 1, after[k]);
			struct vf_safetensors a, b;
			struct vf_error ea = {0}, eb = {0};
			vf_status ra = parse_text(compact, &a, &ea), rb = parse_text(spaced, &b, &eb);
			if (ra != rb)
				fprintf(stderr, "  %s: %d / %d\n", compact, ra, rb);
			CHECK_INT(ra, rb);
			if (ra == VF_OK && rb == VF_OK) {
				CHECK_INT(a.ntensors, b.ntensors);
				CHECK_INT(a.params, b.params);
				CHECK_INT(a.data_bytes, b.data_bytes);
				for (size_t t = 0; t < a.ntensors && t < b.ntensors; t++) {
					const struct vf_tensor *x = &a.tensors[t], *y = &b.tensors[t];
					CHECK_STR(x->name, y->name);
					CHECK_INT(x->dtype, y->dtype);
					CHECK_INT(x->ndim, y->ndim);
					CHECK_INT(x->numel, y->numel);
					CHECK_INT(x->begin, y->begin);
					CHECK_INT(x->end, y->end);
					for (int d = 0; d < x->ndim && d < y->ndim; d++)
						CHECK_INT(x->shape[d], y->shape[d]);
				}
			} else {
				blank_bytes(ea.msg, m1, sizeof m1);
				blank_bytes(eb.msg, m2, sizeof m2);
				CHECK_STR(m1, m2);
			}
			vf_safetensors_release(&a);
			vf_safetensors_release(&b);
		}
}

/* An index's file names: one repeated in a row is read once and shared;
 * a prefix of it, a longer name, an escaped spelling and a name after
 * another are each read on their own, all decoded right. */
static void test_index_file_names(void)
{
	const char *text = "{\"metadata\":{},\"weight_map\":{\"a\":\"x.st\",\"b\":\"x.st\",\"c\":\"x.s\","
			   "\"d\":\"x.s\",\"e\":\"x.stA\",\"f\":\"x.st\\u0041\",\"g\":\"x.stA\","
			   "\"h\":\"y\", \"i\" : \"y\" ,\"j\":\"x.st\"}}";
	struct vf_safetensors_index ix;
	struct vf_error err = {0};
	CHECK(vf_safetensors_index_parse(text, strlen(text), "index.json", &ix, &err) == VF_OK);
	static const char *const want[][2] = {{"a", "x.st"}, {"b", "x.st"},  {"c", "x.s"},
					      {"d", "x.s"},  {"e", "x.stA"}, {"f", "x.stA"},
					      {"g", "x.stA"}, {"h", "y"},    {"i", "y"},
					      {"j", "x.st"}};
	CHECK_INT(ix.n, 10);
	for (size_t i = 0; i < ix.n && i < 10; i++) {
		CHECK_STR(ix.tensors[i], want[i][0]);
		CHECK_STR(ix.files[i], want[i][1]);
	}
	if (ix.n == 10) {
		CHECK(ix.files[1] == ix.files[0]);
		CHECK(ix.files[3] == ix.files[2]);
		CHECK(ix.files[8] == ix.files[7]);
	}
	vf_safetensors_index_release(&ix);
	/* a repeat cut short by the end of the text is a syntax error still */
	const char *cut = "{\"weight_map\":{\"a\":\"x.st\",\"b\":\"x.st";
	CHECK(vf_safetensors_index_parse(cut, strlen(cut), "index.json", &ix, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "invalid JSON");
	vf_safetensors_index_release(&ix);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(test_expected_json);
	RUN(test_dtypes);
	RUN(test_malformed);
	RUN(test_parse_memory);
	RUN(test_scanner_accepts);
	RUN(test_long_header);
	RUN(test_scanner_rejects);
	RUN(test_canonical_shortcut);
	RUN(test_index_file_names);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return vf_test_done();
}
