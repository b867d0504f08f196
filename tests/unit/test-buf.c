/* test-buf.c - size-capped buffers, file reads, atomic writes, errors. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/base/buf.h"
#include "vramfit/base/data.h"
#include "vramfit/base/json.h"

static void test_append_and_cap(void)
{
	struct vf_buf b;
	struct vf_error err = {0};
	vf_buf_init(&b, 8);
	CHECK(vf_buf_puts(&b, "abcd", &err) == VF_OK);
	CHECK(vf_buf_printf(&b, &err, "%d", 12) == VF_OK);
	CHECK_STR(b.data, "abcd12");
	CHECK(vf_buf_puts(&b, "xyz", &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "limit of 8 bytes");
	CHECK_STR(b.data, "abcd12");
	vf_buf_release(&b);
}

static void test_read_file_limits(void)
{
	char dir[] = "/tmp/vf-test-buf-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[256];
	snprintf(path, sizeof path, "%s/f.txt", dir);
	struct vf_error err = {0};
	CHECK(vf_write_file_atomic(path, "hello world", 11, &err) == VF_OK);
	struct vf_buf b;
	vf_buf_init(&b, 0);
	CHECK(vf_buf_read_file(&b, path, 100, &err) == VF_OK);
	CHECK_STR(b.data, "hello world");
	vf_buf_reset(&b);
	CHECK(vf_buf_read_file(&b, path, 5, &err) == VF_ERR);
	{ /* an empty file reads as a NUL-terminated "" */
		char ep[256];
		snprintf(ep, sizeof ep, "%s/empty.txt", dir);
		CHECK(vf_write_file_atomic(ep, "", 0, &err) == VF_OK);
		struct vf_buf e;
		vf_buf_init(&e, 0);
		CHECK(vf_buf_read_file(&e, ep, 100, &err) == VF_OK);
		CHECK(e.data != NULL && e.len == 0 && e.data[0] == '\0');
		vf_buf_release(&e);
		unlink(ep);
	}
	CHECK_CONTAINS(err.msg, "f.txt");
	CHECK_CONTAINS(err.msg, "limit");
	vf_buf_reset(&b);
	char missing[300];
	snprintf(missing, sizeof missing, "%s/none", dir);
	CHECK(vf_buf_read_file(&b, missing, 5, &err) == VF_ENOTFOUND);
	CHECK_CONTAINS(err.msg, "No such file");
	vf_buf_release(&b);
	/* atomic write leaves no temp file behind */
	unlink(path);
	CHECK(rmdir(dir) == 0);
}

/* A file read whole is read in place into room fstat's size gives: a large
 * one comes back byte for byte after what the buffer held; a file whose
 * size fstat gives as 0 (/proc) is still read to its end. */
static void test_read_file_whole(void)
{
	char dir[] = "/tmp/vf-test-buf-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[256];
	snprintf(path, sizeof path, "%s/big.bin", dir);
	size_t n = 300001;
	char *text = malloc(n);
	CHECK(text != NULL);
	if (!text)
		return;
	for (size_t i = 0; i < n; i++)
		text[i] = (char)('a' + (i * 7919) % 26);
	struct vf_error err = {0};
	CHECK(vf_write_file_atomic(path, text, n, &err) == VF_OK);
	struct vf_buf b;
	vf_buf_init(&b, 0);
	CHECK(vf_buf_puts(&b, "ab", &err) == VF_OK);
	CHECK(vf_buf_read_file(&b, path, n + 2, &err) == VF_OK);
	CHECK_INT(b.len, n + 2);
	CHECK(b.len == n + 2 && memcmp(b.data, "ab", 2) == 0 && memcmp(b.data + 2, text, n) == 0 &&
	      b.data[n + 2] == '\0');
	vf_buf_reset(&b);
	CHECK(vf_buf_read_file(&b, path, n - 1, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "limit");
	vf_buf_reset(&b);
	CHECK(vf_buf_read_file(&b, "/proc/self/stat", 1 << 20, &err) == VF_OK);
	CHECK(b.len > 0 && strlen(b.data) == b.len);
	vf_buf_release(&b);
	free(text);
	unlink(path);
	CHECK(rmdir(dir) == 0);
}

/* A FIFO (or any non-regular file) is refused at once instead of blocking
 * in open() waiting for a writer; alarm() turns a hang into a failure. */
static void test_read_file_not_regular(void)
{
	char dir[] = "/tmp/vf-test-buf-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char fifo[256];
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	CHECK(mkfifo(fifo, 0600) == 0);
	struct vf_buf b;
	struct vf_error err = {0};
	vf_buf_init(&b, 0);
	alarm(10);
	CHECK(vf_buf_read_file(&b, fifo, 100, &err) == VF_ERR);
	alarm(0);
	CHECK_CONTAINS(err.msg, "fifo: not a regular file");
	CHECK(vf_buf_read_file(&b, "/dev/zero", 100, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "/dev/zero: not a regular file");
	vf_buf_release(&b);
	unlink(fifo);
	CHECK(rmdir(dir) == 0);
}

/* Through a symlink the target is replaced (the link stays), and the
 * file keeps its permission bits (a 0600 config stays private). */
static void test_write_atomic_link_and_mode(void)
{
	char dir[] = "/tmp/vf-test-buf-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char file[256], link[256];
	snprintf(file, sizeof file, "%s/real.yaml", dir);
	snprintf(link, sizeof link, "%s/link.yaml", dir);
	struct vf_error err = {0};
	CHECK(vf_write_file_atomic(file, "a: 1\n", 5, &err) == VF_OK);
	CHECK(chmod(file, 0600) == 0);
	CHECK(symlink("real.yaml", link) == 0);
	CHECK(vf_write_file_atomic(link, "a: 2\n", 5, &err) == VF_OK);
	struct stat st;
	CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(stat(file, &st) == 0 && (st.st_mode & 0777) == 0600);
	struct vf_buf b;
	vf_buf_init(&b, 0);
	CHECK(vf_buf_read_file(&b, file, 100, &err) == VF_OK);
	CHECK_STR(b.data, "a: 2\n");
	vf_buf_release(&b);
	unlink(link);
	CHECK(symlink("no-such-dir/x", link) == 0);
	CHECK(vf_write_file_atomic(link, "x", 1, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "link.yaml");
	unlink(link);
	unlink(file);
	CHECK(rmdir(dir) == 0);
}

static void test_json_errors(void)
{
	cJSON *j = NULL;
	struct vf_error err = {0};
	CHECK(vf_json_parse("{\"a\": 1", 7, "x.json", &j, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "x.json: invalid JSON");
	CHECK(vf_json_parse("{\"a\": 1.5, \"b\": 3, \"s\": \"t\"}", 28, "x.json", &j, &err) == VF_OK);
	int64_t v;
	CHECK(!vf_json_get_i64(j, "a", &v));
	CHECK(vf_json_get_i64(j, "b", &v) && v == 3);
	CHECK_STR(vf_json_get_str(j, "s"), "t");
	cJSON_Delete(j);
}

/* JSON output is valid UTF-8 even when a string is not (a file name). */
static void test_json_print_utf8(void)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "a", "x\xff\xfey\xc3\xa9\xe2\x82");
	char *s = vf_json_print(o);
	CHECK(s != NULL);
	if (s) {
		CHECK_CONTAINS(s, "x\xef\xbf\xbd\xef\xbf\xbdy\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd");
		CHECK(vf_utf8_check((const unsigned char *)s, strlen(s)) == strlen(s));
	}
	free(s);
	cJSON_Delete(o);
	CHECK(vf_utf8_check((const unsigned char *)"ok \xc3\xa9", 5) == 5);
	CHECK(vf_utf8_check((const unsigned char *)"ab\xc0\xaf", 4) == 2); /* overlong */
	CHECK(vf_utf8_check((const unsigned char *)"\xed\xa0\x80", 3) == 0); /* surrogate */
}

static void test_embedded_data(void)
{
	CHECK(vf_data_embedded_name(0) != NULL);
	size_t len = 0;
	CHECK(vf_data_embedded(vf_data_embedded_name(0), &len) != NULL);
	CHECK(len > 0);
	CHECK(vf_data_embedded("no/such/file", NULL) == NULL);
}

int main(void)
{
	RUN(test_append_and_cap);
	RUN(test_read_file_limits);
	RUN(test_read_file_whole);
	RUN(test_read_file_not_regular);
	RUN(test_write_atomic_link_and_mode);
	RUN(test_json_errors);
	RUN(test_json_print_utf8);
	RUN(test_embedded_data);
	return vf_test_done();
}
