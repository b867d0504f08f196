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

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(test_expected_json);
	RUN(test_dtypes);
	RUN(test_malformed);
	RUN(test_parse_memory);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return vf_test_done();
}
