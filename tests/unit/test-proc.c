/* test-proc.c - child supervision: exit codes, signals, line splitting,
 * a 10 MB line, hangs, stalls, a grandchild that ignores SIGTERM, the
 * clean environment, interrupts and the memory limit.
 * Every timeout, stall and interrupt is armed on a state the child has
 * reached (a line seen, processes listed), never on a guessed delay; the
 * upper bounds on wall time are only there to catch a hang. */
#include <time.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/base/buf.h"
#include "vramfit/base/proc.h"

struct cap {
	struct vf_buf out; /* lines joined with '\n', prefixed "1:" / "2:" */
	int nlines;
	int ntrunc;
	size_t longest;
	bool interrupt_on_line;  /* interrupt once the first line was seen */
	bool timeout_on_line;    /* arm a 0.3 s timeout once the first line was seen */
	const char *go_file;     /* created by a tick 1 s after the line "hi" arrived */
	double hi_at, again_at;  /* monotonic seconds when those lines arrived */
	struct vf_proc *p;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_line(void *ctx, enum vf_proc_stream s, const char *line, size_t len, bool trunc)
{
	struct cap *c = ctx;
	c->nlines++;
	if (trunc)
		c->ntrunc++;
	if (len > c->longest)
		c->longest = len;
	if (len < 1000)
		vf_buf_printf(&c->out, NULL, "%d:%s\n", (int)s, line);
	if (strcmp(line, "hi") == 0)
		c->hi_at = now_s();
	if (strcmp(line, "again") == 0)
		c->again_at = now_s();
}

static void on_tick(void *ctx, pid_t pgid, double elapsed)
{
	struct cap *c = ctx;
	(void)pgid;
	if (c->go_file && c->hi_at > 0 && now_s() - c->hi_at >= 1.0 && access(c->go_file, F_OK) != 0) {
		FILE *f = fopen(c->go_file, "w");
		if (f)
			fclose(f);
	}
	if (c->interrupt_on_line && c->nlines > 0)
		vf_proc_interrupt(c->p);
	if (c->timeout_on_line && c->nlines > 0 && c->p->timeout_s == 0)
		c->p->timeout_s = elapsed + 0.3; /* vf_proc reads it on every tick */
}

static int run_sh(struct vf_proc *p, struct cap *c, const char *script)
{
	static const char *argv[4];
	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = script;
	argv[3] = NULL;
	p->argv = argv;
	p->on_line = on_line;
	p->on_tick = on_tick;
	p->ctx = c;
	c->p = p;
	struct vf_error err = {0};
	vf_status st = vf_proc_run(p, &err);
	if (st)
		fprintf(stderr, "  proc error: %s\n", err.msg);
	return st;
}

static void cap_init(struct cap *c)
{
	memset(c, 0, sizeof *c);
	vf_buf_init(&c->out, 1 << 20);
}

static bool pid_alive(pid_t pid)
{
	return pid > 0 && kill(pid, 0) == 0;
}

static void test_exit_codes(void)
{
	struct vf_proc p;
	struct cap c;
	vf_proc_init(&p);
	cap_init(&c);
	CHECK(run_sh(&p, &c, "echo out; echo err >&2; exit 3") == VF_OK);
	CHECK_INT(p.status, 3);
	CHECK_INT(p.end, VF_PROC_EXITED);
	CHECK_CONTAINS(c.out.data, "1:out\n");
	CHECK_CONTAINS(c.out.data, "2:err\n");
	vf_buf_reset(&c.out);
	CHECK(run_sh(&p, &c, "exit 0") == VF_OK);
	CHECK_INT(p.status, 0);
	CHECK(!p.killed_group);
	vf_buf_release(&c.out);
}

static void test_signal_status(void)
{
	struct vf_proc p;
	struct cap c;
	vf_proc_init(&p);
	cap_init(&c);
	CHECK(run_sh(&p, &c, "echo alive; kill -KILL $$") == VF_OK);
	CHECK_INT(p.status, 137);
	CHECK_INT(p.end, VF_PROC_EXITED);
	CHECK(run_sh(&p, &c, "kill -SEGV $$") == VF_OK);
	CHECK_INT(p.status, 128 + SIGSEGV);
	vf_buf_release(&c.out);
}

static void test_line_splitting(void)
{
	struct vf_proc p;
	struct cap c;
	vf_proc_init(&p);
	cap_init(&c);
	CHECK(run_sh(&p, &c, "printf 'a\\nb\\r\\nc\\rd\\n\\nlast'") == VF_OK);
	CHECK_STR(c.out.data, "1:a\n1:b\n1:c\n1:d\n1:\n1:last\n");
	vf_buf_release(&c.out);
}

static void test_ten_megabyte_line(void)
{
	struct vf_proc p;
	struct cap c;
	vf_proc_init(&p);
	cap_init(&c);
	p.line_max = 4096;
	CHECK(run_sh(&p, &c, "head -c 10000000 /dev/zero | tr '\\0' x; echo; echo end") == VF_OK);
	CHECK_INT(p.status, 0);
	CHECK_INT(c.ntrunc, 1);
	CHECK_INT(c.longest, 4096);
	CHECK_INT(p.bytes_dropped, 10000000 - 4096);
	CHECK_CONTAINS(c.out.data, "1:end\n");
	vf_buf_release(&c.out);
}

static void test_timeout_hang(void)
{
	struct vf_proc p;
	struct cap c;
	vf_proc_init(&p);
	cap_init(&c);
	p.timeout_s = 0.5;
	p.grace_s = 0.5;
	CHECK(run_sh(&p, &c, "sleep 100") == VF_OK);
	CHECK_INT(p.end, VF_PROC_TIMEOUT);
	CHECK_INT(p.status, 128 + SIGTERM);
	CHECK(p.wall_s >= 0.5 && p.wall_s < 60.0);
	CHECK(p.killed_group);
	vf_buf_release(&c.out);
}

static void test_stall(void)
{
	struct vf_proc p;
	struct cap c;
	vf_proc_init(&p);
	cap_init(&c);
	char go[64], script[256];
	snprintf(go, sizeof go, "/tmp/vf-test-proc-go-%d", (int)getpid());
	unlink(go);
	c.go_file = go;
	/* "again" comes 1 s after "hi" (the test says when, through go):
	 * the stall clock restarts at "again", so the end comes stall_s after
	 * it, not after "hi" (that would be 1 s earlier); stall_s leaves the
	 * shell 5 s to notice go and print "again" on a loaded machine */
	snprintf(script, sizeof script, "echo hi; until [ -e %s ]; do sleep 0.02; done; echo again; sleep 100", go);
	p.stall_s = 6.0;
	p.grace_s = 0.5;
	CHECK(run_sh(&p, &c, script) == VF_OK);
	double end = now_s();
	CHECK_INT(p.end, VF_PROC_STALLED);
	CHECK_CONTAINS(c.out.data, "1:again\n");
	CHECK(c.again_at - c.hi_at >= 1.0);
	CHECK(c.again_at > 0 && end >= c.again_at + p.stall_s - 0.5);
	CHECK(p.wall_s < 60.0);
	unlink(go);
	vf_buf_release(&c.out);
}

/* The grandchild's pid is printed first; both ignore SIGTERM. */
static void test_grandchild_ignoring_term(void)
{
	struct vf_proc p;
	struct cap c;
	vf_proc_init(&p);
	cap_init(&c);
	c.timeout_on_line = true; /* the timeout runs out after the pid is printed */
	p.grace_s = 0.5;
	CHECK(run_sh(&p, &c, "trap '' TERM; sleep 1000 & echo $!; wait; sleep 1000") == VF_OK);
	CHECK_INT(p.end, VF_PROC_TIMEOUT);
	CHECK_INT(p.status, 137);
	pid_t g = (pid_t)atoi(c.out.data + 2);
	CHECK(g > 0);
	CHECK(!pid_alive(g));
	CHECK(p.wall_s < 60.0);
	vf_buf_release(&c.out);
}

/* The child exits at once and leaves a TERM-ignoring grandchild behind,
 * holding the pipes: it is ended too, and the exit code is the child's. */
static void test_leftover_grandchild(void)
{
	struct vf_proc p;
	struct cap c;
	vf_proc_init(&p);
	cap_init(&c);
	p.grace_s = 0.3;
	CHECK(run_sh(&p, &c, "trap '' TERM; sleep 1000 & echo $!; exit 4") == VF_OK);
	CHECK_INT(p.status, 4);
	CHECK_INT(p.end, VF_PROC_EXITED);
	pid_t g = (pid_t)atoi(c.out.data + 2);
	CHECK(g > 0 && !pid_alive(g));
	CHECK(p.killed_group);
	CHECK(p.wall_s < 60.0);
	vf_buf_release(&c.out);
}

/* The child exits 0 and leaves a grandchild that called setsid() (a new
 * session and process group: ending the child's group does not reach it),
 * ignores SIGTERM and has a child of its own; neither holds the pipes.
 * Both are ended (SIGKILL after the grace period) and reaped before
 * vf_proc_run returns. */
static void test_setsid_grandchild(void)
{
	char f[] = "/tmp/vf-proc-setsid.XXXXXX";
	int fd = mkstemp(f);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	char script[512];
	snprintf(script, sizeof script,
		 "setsid sh -c 'trap \"\" TERM; sleep 1000 & echo $$ $! > %s.tmp; mv %s.tmp %s; exec sleep 1000' "
		 "</dev/null >/dev/null 2>&1 & while [ ! -s %s ]; do :; done; cat %s; exit 0",
		 f, f, f, f, f);
	struct vf_proc p;
	struct cap c;
	vf_proc_init(&p);
	cap_init(&c);
	p.grace_s = 0.3;
	CHECK(run_sh(&p, &c, script) == VF_OK);
	CHECK_INT(p.status, 0);
	CHECK_INT(p.end, VF_PROC_EXITED);
	int a = 0, b = 0;
	CHECK(c.out.data && sscanf(c.out.data, "1:%d %d", &a, &b) == 2);
	CHECK(a > 0 && b > 0);
	CHECK(!pid_alive(a));
	CHECK(!pid_alive(b));
	CHECK(p.wall_s < 60.0);
	unlink(f);
	vf_buf_release(&c.out);
}

static void test_interrupt(void)
{
	struct vf_proc p;
	struct cap c;
	vf_proc_init(&p);
	cap_init(&c);
	c.interrupt_on_line = true;
	p.grace_s = 0.3;
	CHECK(run_sh(&p, &c, "sleep 1000 & echo $!; wait") == VF_OK);
	CHECK_INT(p.end, VF_PROC_INTERRUPTED);
	pid_t g = (pid_t)atoi(c.out.data + 2);
	CHECK(g > 0 && !pid_alive(g));
	CHECK(p.wall_s < 60.0);
	vf_buf_release(&c.out);
}

static void test_clean_environment(void)
{
	struct vf_proc p;
	struct cap c;
	vf_proc_init(&p);
	cap_init(&c);
	setenv("VF_TEST_SECRET", "leak", 1);
	setenv("HF_HOME", "/tmp/hf", 1);
	const char *extra[] = {"FOO=bar", "COLUMNS=300", NULL};
	p.env_extra = extra;
	p.gpus = "0,1";
	p.cwd = "/tmp";
	CHECK(run_sh(&p, &c,
		     "echo \"$COLUMNS|$PYTHONUNBUFFERED|$CUDA_DEVICE_ORDER|$CUDA_VISIBLE_DEVICES|"
		     "${VF_TEST_SECRET:-none}|$HF_HOME|$FOO|$(pwd)\"") == VF_OK);
	CHECK_STR(c.out.data, "1:300|1|PCI_BUS_ID|0,1|none|/tmp/hf|bar|/tmp\n");
	vf_buf_release(&c.out);

	/* The user's CUDA_VISIBLE_DEVICES passes through when the caller names
	 * no GPUs (the trainer must not see GPUs the user hid); named GPUs win. */
	setenv("CUDA_VISIBLE_DEVICES", "3", 1);
	vf_proc_init(&p);
	cap_init(&c);
	CHECK(run_sh(&p, &c, "echo \"${CUDA_VISIBLE_DEVICES-unset}\"") == VF_OK);
	CHECK_STR(c.out.data, "1:3\n");
	vf_buf_release(&c.out);
	vf_proc_init(&p);
	cap_init(&c);
	p.gpus = "0,1";
	CHECK(run_sh(&p, &c, "echo \"${CUDA_VISIBLE_DEVICES-unset}\"") == VF_OK);
	CHECK_STR(c.out.data, "1:0,1\n");
	vf_buf_release(&c.out);
	unsetenv("CUDA_VISIBLE_DEVICES");
	vf_proc_init(&p);
	cap_init(&c);
	CHECK(run_sh(&p, &c, "echo \"${CUDA_VISIBLE_DEVICES-unset}\"") == VF_OK);
	CHECK_STR(c.out.data, "1:unset\n");
	vf_buf_release(&c.out);
}

static void test_cannot_run(void)
{
	struct vf_proc p;
	vf_proc_init(&p);
	const char *argv[] = {"/nonexistent/trainer", NULL};
	p.argv = argv;
	struct vf_error err = {0};
	CHECK(vf_proc_run(&p, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "cannot run '/nonexistent/trainer'");
	CHECK_CONTAINS(err.msg, "No such file");
}

/* A real PyTorch CPU out-of-memory under the child's memory limit. */
static void test_memory_limit_torch(void)
{
	if (access("/usr/bin/python3", X_OK) != 0 ||
	    system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
		fprintf(stderr, "  skip: /usr/bin/python3 has no torch\n");
		return;
	}
	struct vf_proc p;
	struct cap c;
	vf_proc_init(&p);
	cap_init(&c);
	const char *argv[] = {"/usr/bin/python3", "-c",
			      "import torch; x = torch.empty(3 * 2**30, dtype=torch.uint8); x.fill_(1); "
			      "print('allocated')",
			      NULL};
	p.argv = argv;
	p.on_line = on_line;
	p.ctx = &c;
	p.mem_limit_bytes = 1536ull << 20;
	struct vf_error err = {0};
	CHECK(vf_proc_run(&p, &err) == VF_OK);
	CHECK_INT(p.status, 1);
	CHECK_CONTAINS(c.out.data, "DefaultCPUAllocator: can't allocate memory");
	CHECK(!strstr(c.out.data, "allocated\n"));
	vf_buf_release(&c.out);
}

/* vf_proc_pids from the tick: the shell, its background sleep (same group)
 * and a setsid'd sleep (own group and session, found through its parent).
 * Once the tick has seen all three, the setsid'd one out of the group (on a
 * busy machine a tick can come before its setsid()), it ends the two sleeps
 * itself. */
struct tree {
	size_t most;
	bool leader_first;
	int other_group;
};

static void tree_tick(void *ctx, pid_t pgid, double elapsed)
{
	struct tree *t = ctx;
	(void)elapsed;
	pid_t pids[16];
	size_t n = vf_proc_pids(pgid, pids, 16);
	int other = 0;
	for (size_t i = 0; i < n; i++)
		if (getpgid(pids[i]) != pgid)
			other++;
	if (n > t->most || (n == t->most && other > t->other_group)) {
		t->most = n;
		t->leader_first = n > 0 && pids[0] == pgid;
		t->other_group = other;
	}
	if (n == 3 && other == 1)
		for (size_t i = 1; i < n; i++)
			kill(pids[i], SIGKILL);
}

static void test_tree_pids(void)
{
	struct vf_proc p;
	vf_proc_init(&p);
	struct tree t = {0};
	static const char *argv[] = {"sh", "-c", "sleep 1000 & setsid sleep 1000 & wait", NULL};
	p.argv = argv;
	p.on_tick = tree_tick;
	p.ctx = &t;
	p.tick_ms = 50;
	p.timeout_s = 60; /* only if the tick never sees all three */
	struct vf_error err = {0};
	CHECK_INT(vf_proc_run(&p, &err), VF_OK);
	CHECK_INT(p.status, 0);
	CHECK_INT(t.most, 3);
	CHECK(t.leader_first);
	CHECK_INT(t.other_group, 1);
	/* Bounded by max; nothing for a group that does not exist. */
	pid_t one[1];
	CHECK_INT(vf_proc_pids(getpgid(0), one, 1), 1);
	CHECK_INT(vf_proc_pids(0, one, 1), 0);
	CHECK_INT(vf_proc_pids(getpgid(0), one, 0), 0);
}

int main(void)
{
	RUN(test_exit_codes);
	RUN(test_signal_status);
	RUN(test_line_splitting);
	RUN(test_ten_megabyte_line);
	RUN(test_timeout_hang);
	RUN(test_stall);
	RUN(test_grandchild_ignoring_term);
	RUN(test_leftover_grandchild);
	RUN(test_setsid_grandchild);
	RUN(test_interrupt);
	RUN(test_clean_environment);
	RUN(test_cannot_run);
	RUN(test_memory_limit_torch);
	RUN(test_tree_pids);
	return vf_test_done();
}
