/* stages.c - the pieces of `vramfit run`'s stages (run.h): the plan's
 * command split into words, the preprocessing child under vf_proc, its
 * progress, the sanity sample copied from the preprocessed data, the last
 * checkpoint, config.yaml and plan.md changed in place (temp + rename). */
#include <dirent.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vramfit/base/buf.h"
#include "vramfit/base/json.h"
#include "vramfit/base/md.h"
#include "vramfit/base/rundir.h"
#include "vramfit/base/shquote.h"
#include "vramfit/run/run.h"

vf_status vf_run_split_command(const char *cmd, char **store, const char **argv, size_t max,
			       struct vf_error *err)
{
	*store = NULL;
	struct vf_buf b;
	size_t len = strlen(cmd), at = 0, n = 0, offs[256];
	vf_buf_init(&b, len + 256);
	while (at < len) {
		if (cmd[at] == ' ' || cmd[at] == '\t') {
			at++;
			continue;
		}
		size_t used = 0;
		if (n + 1 >= max || n >= 256) {
			vf_buf_release(&b);
			return vf_error_set(err, VF_ERR, "command: more than %zu words", max - 1);
		}
		offs[n++] = b.len;
		if (!vf_shell_word(cmd + at, len - at, &b, &used) || used == 0) {
			vf_buf_release(&b);
			return vf_error_set(err, VF_ERR, "command '%.200s': a word vramfit cannot read without a shell "
					    "(an open quote, $ or `)", cmd);
		}
		vf_buf_append(&b, "", 1, NULL); /* the word's NUL */
		at += used;
	}
	if (n == 0) {
		vf_buf_release(&b);
		return vf_error_set(err, VF_ERR, "command: empty");
	}
	size_t total;
	*store = vf_buf_detach(&b, &total);
	for (size_t i = 0; i < n; i++)
		argv[i] = *store + offs[i];
	argv[n] = NULL;
	return VF_OK;
}

struct pp_ctx {
	struct vf_run_preprocess *pp;
	FILE *log;
};

static void pp_line(void *ctx, enum vf_proc_stream s, const char *line, size_t len, bool truncated)
{
	struct pp_ctx *c = ctx;
	(void)s;
	(void)truncated;
	if (c->log) {
		fwrite(line, 1, len, c->log);
		fputc('\n', c->log);
	}
	if (len)
		snprintf(c->pp->last_line, sizeof c->pp->last_line, "%s", line);
	if (c->pp->on_line)
		c->pp->on_line(c->pp->ctx, line);
}

static void pp_tick(void *ctx, pid_t pgid, double elapsed)
{
	struct pp_ctx *c = ctx;
	(void)pgid;
	if (c->log)
		fflush(c->log);
	if (c->pp->on_tick)
		c->pp->on_tick(c->pp->ctx, elapsed);
}

vf_status vf_run_preprocess(struct vf_run_preprocess *pp, struct vf_error *err)
{
	char *store = NULL;
	const char *argv[128];
	vf_status st = vf_run_split_command(pp->command, &store, argv, 128, err);
	if (st)
		return st;
	struct vf_rundir rd;
	if ((st = vf_rundir_open(&rd, pp->run_dir, 0, err)) || (st = vf_rundir_mkdir(&rd, "logs", err))) {
		vf_rundir_close(&rd);
		free(store);
		return st;
	}
	struct pp_ctx c = {.pp = pp, .log = vf_rundir_fopen(&rd, "logs/preprocess.log", "w", err)};
	vf_rundir_close(&rd);
	if (!c.log) {
		free(store);
		return VF_ERR;
	}
	struct vf_proc p;
	vf_proc_init(&p);
	p.argv = argv;
	p.cwd = pp->cwd;
	p.timeout_s = pp->timeout_s;
	p.stall_s = pp->stall_s;
	p.grace_s = pp->grace_s;
	p.on_line = pp_line;
	p.on_tick = pp_tick;
	p.ctx = &c;
	pp->current = &p;
	if (pp->interrupted)
		p.interrupt = 1;
	st = vf_proc_run(&p, err);
	pp->current = NULL;
	pp->status = p.status;
	pp->end = pp->interrupted ? VF_PROC_INTERRUPTED : p.end;
	pp->wall_s = p.wall_s;
	if (st == VF_OK)
		fprintf(c.log, "[vramfit] preprocessing ended: %s, exit status %d, %.1f s\n", vf_proc_end_name(pp->end),
			p.status, p.wall_s);
	fclose(c.log);
	free(store);
	return st;
}

void vf_run_preprocess_interrupt(struct vf_run_preprocess *pp)
{
	pp->interrupted = 1;
	struct vf_proc *p = pp->current;
	if (p)
		vf_proc_interrupt(p);
}

bool vf_run_progress(const char *line, int *done, int *total)
{
	bool found = false;
	for (const char *s = line; *s; s++) {
		if (*s != '/' || s == line || s[-1] < '0' || s[-1] > '9' || s[1] < '0' || s[1] > '9')
			continue;
		const char *a = s;
		while (a > line && a[-1] >= '0' && a[-1] <= '9')
			a--;
		long d = strtol(a, NULL, 10), t = strtol(s + 1, NULL, 10);
		if (d >= 0 && t > 0 && d <= t && t < 1000000000L) {
			*done = (int)d;
			*total = (int)t;
			found = true;
		}
	}
	return found;
}

/* Regular files in dir, and in its subdirectories while depth > 0. */
static int count_in(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char p[PATH_MAX + 256];
		struct stat sb;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (lstat(p, &sb) != 0)
			continue;
		if (S_ISREG(sb.st_mode))
			n++;
		else if (S_ISDIR(sb.st_mode) && depth > 0) {
			int k = count_in(p, depth - 1);
			n += k > 0 ? k : 0;
		}
	}
	closedir(d);
	return n;
}

int vf_run_count_files(const char *dir)
{
	return count_in(dir, 1);
}
