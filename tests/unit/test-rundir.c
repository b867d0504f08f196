/* test-rundir.c - run files never through a link (lib/base/rundir.c) and
 * shell words that read back as written (lib/base/shquote.c). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/base/buf.h"
#include "vramfit/base/rundir.h"
#include "vramfit/base/shquote.h"

static char *slurp(const char *path)
{
	struct vf_buf b;
	vf_buf_init(&b, 1 << 16);
	if (vf_buf_read_file(&b, path, 1 << 16, NULL) != VF_OK) {
		vf_buf_release(&b);
		return NULL;
	}
	return vf_buf_detach(&b, NULL);
}

static void test_quote_round_trip(void)
{
	static const char *const words[] = {
		"plain/path-1.yaml", "", "a b", "it's", "$(touch x)", "`id`", "line\nbreak", "''", "\\", "a\"b", "#x", "%j",
	};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
		struct vf_buf q, back;
		vf_buf_init(&q, 0);
		vf_buf_init(&back, 0);
		CHECK(vf_shell_quote(&q, words[i], NULL) == VF_OK);
		size_t used = 0;
		CHECK(vf_shell_word(q.data, q.len, &back, &used));
		CHECK_INT(used, q.len);
		CHECK_STR(back.data, words[i]);
		vf_buf_release(&q);
		vf_buf_release(&back);
	}
	char small[8];
	CHECK(vf_shell_quote_to(small, sizeof small, "it's long") >= sizeof small);
	CHECK_STR(small, "'it'\\''");
	struct vf_buf v;
	vf_buf_init(&v, 0);
	CHECK(!vf_shell_word("'open", 5, &v, NULL));
	vf_buf_reset(&v);
	CHECK(!vf_shell_word("$(x)", 4, &v, NULL));
	vf_buf_reset(&v);
	CHECK(vf_shell_word("\"a\\$b\" rest", 11, &v, NULL));
	CHECK_STR(v.data, "a$b");
	vf_buf_release(&v);
}

static void test_links_refused(void)
{
	char dir[] = "/tmp/vf-test-rundir-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char run[300], outside[300], link[300], target[300];
	snprintf(run, sizeof run, "%s/run", dir);
	snprintf(outside, sizeof outside, "%s/outside", dir);
	CHECK(mkdir(outside, 0755) == 0);
	struct vf_rundir rd;
	struct vf_error err = {0};
	CHECK(vf_rundir_open(&rd, run, VF_RUNDIR_CREATE, &err) == VF_OK);
	CHECK(vf_rundir_write_atomic(&rd, "config.yaml", "a: 1\n", 5, 0644, &err) == VF_OK);
	CHECK(vf_rundir_write_atomic(&rd, "logs/x.log", "log\n", 4, 0644, &err) == VF_OK);
	/* a link in place of a file: refused, its target kept */
	snprintf(target, sizeof target, "%s/keep", outside);
	int fd = open(target, O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0 && write(fd, "keep", 4) == 4);
	close(fd);
	snprintf(link, sizeof link, "%s/plan.md", run);
	CHECK(symlink(target, link) == 0);
	CHECK(vf_rundir_write_atomic(&rd, "plan.md", "x", 1, 0644, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "plan.md: is a symbolic link to ");
	CHECK(vf_rundir_fopen(&rd, "plan.md", "a", &err) == NULL);
	CHECK_CONTAINS(err.msg, "is a symbolic link");
	char *kept = slurp(target);
	CHECK(kept && strcmp(kept, "keep") == 0);
	free(kept);
	/* a link in place of a folder */
	snprintf(link, sizeof link, "%s/overfit", run);
	CHECK(symlink(outside, link) == 0);
	CHECK(vf_rundir_mkdir(&rd, "overfit", &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "overfit: is a symbolic link");
	CHECK(vf_rundir_write_atomic(&rd, "overfit/t.yaml", "x", 1, 0644, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "overfit: is a symbolic link");
	CHECK(vf_rundir_write_atomic(&rd, "../escape", "x", 1, 0644, &err) == VF_EUSAGE);
	vf_rundir_close(&rd);
	/* the run directory itself a link */
	snprintf(link, sizeof link, "%s/linked", dir);
	CHECK(symlink(outside, link) == 0);
	CHECK(vf_rundir_open(&rd, link, 0, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "the run directory is a symbolic link");
	CHECK(vf_rundir_open(&rd, link, VF_RUNDIR_CREATE | VF_RUNDIR_EXIST_OK, &err) == VF_ERR);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "[ $(ls -A '%s' | wc -l) -eq 1 ]", outside);
	CHECK(system(cmd) == 0);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	RUN(test_quote_round_trip);
	RUN(test_links_refused);
	return vf_test_done();
}
