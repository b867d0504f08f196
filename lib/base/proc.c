/* proc.c - supervise a child process tree (see proc.h).
 * fork + execvpe into a new process group; two pipes read with poll();
 * lines split with a bounded buffer; timers on CLOCK_MONOTONIC; the end is
 * always the same: SIGTERM to the group, SIGKILL after the grace period,
 * reap everything of the group (we are a child subreaper, so orphaned
 * grandchildren come back to us), then end and reap the orphans that had
 * left the group (setsid), then return. */
#include "vramfit/base/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define ENV_MAX 512

static const char *const pass_names[] = {
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "TZ", "TMPDIR",
	"LD_LIBRARY_PATH", "VIRTUAL_ENV", "CUDA_HOME", NULL,
};
static const char *const pass_prefixes[] = {
	"UV_", "HF_", "PYTORCH_", "NCCL_", "TORCH", "XDG_", "VRAMFIT_", "OMP_", "MKL_", "OPENBLAS_", NULL,
};

void vf_proc_init(struct vf_proc *p)
{
	memset(p, 0, sizeof *p);
}

void vf_proc_interrupt(struct vf_proc *p)
{
	if (p)
		p->interrupt = 1;
}

const char *vf_proc_end_name(enum vf_proc_end end)
{
	switch (end) {
	case VF_PROC_EXITED: return "exited";
	case VF_PROC_TIMEOUT: return "timeout";
	case VF_PROC_STALLED: return "stalled";
	case VF_PROC_INTERRUPTED: return "interrupted";
	}
	return "unknown";
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- the process tree ------------------------------------------------------ */

struct pinfo {
	pid_t pid, ppid, pgrp;
	char state; /* 'Z': a zombie */
	bool in;
};

/* pid, ppid and pgrp of /proc/<name>/stat; false when it is gone. */
static bool read_stat(const char *name, struct pinfo *pi)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%.20s/stat", name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "pid (comm) state ppid pgrp ...": comm may hold spaces and ')'. */
	char *rp = strrchr(buf, ')');
	char state;
	int pid, ppid, pgrp;
	if (!rp || sscanf(buf, "%d", &pid) != 1 || sscanf(rp + 1, " %c %d %d", &state, &ppid, &pgrp) != 3)
		return false;
	pi->pid = pid, pi->ppid = ppid, pi->pgrp = pgrp, pi->state = state, pi->in = false;
	return true;
}

/* Every process of the machine, from /proc (at most VF_PROC_SCAN_MAX).
 * Caller frees *out (NULL when /proc cannot be read); returns how many. */
static size_t scan_all(struct pinfo **out)
{
	*out = NULL;
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	size_t cap = 256, n = 0;
	struct pinfo *all = malloc(cap * sizeof *all);
	struct dirent *e;
	while (all && (e = readdir(d)) && n < VF_PROC_SCAN_MAX) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		if (n == cap) {
			struct pinfo *a = realloc(all, 2 * cap * sizeof *all);
			if (!a)
				break;
			all = a, cap *= 2;
		}
		if (read_stat(e->d_name, &all[n]))
			n++;
	}
	closedir(d);
	*out = all;
	return all ? n : 0;
}

/* Add to pids (out of max, *out used) every process of all whose parent
 * is already in pids, until nothing is added. */
static void add_descendants(struct pinfo *all, size_t n, pid_t *pids, size_t *out, size_t max)
{
	for (bool added = true; added && *out < max;) {
		added = false;
		for (size_t i = 0; i < n && *out < max; i++) {
			if (all[i].in)
				continue;
			for (size_t k = 0; k < *out; k++)
				if (pids[k] == all[i].ppid) {
					all[i].in = added = true;
					pids[(*out)++] = all[i].pid;
					break;
				}
		}
	}
}

size_t vf_proc_pids(pid_t pgid, pid_t *pids, size_t max)
{
	if (pgid <= 0 || max == 0)
		return 0;
	struct pinfo *all;
	size_t n = scan_all(&all);
	if (!all)
		return 0;
	/* The tree: the group, then descendants until nothing is added. It is
	 * small (a trainer and its workers), so the members are kept in pids
	 * and each process's parent is looked up there. */
	size_t out = 0;
	for (size_t i = 0; i < n && out < max; i++)
		if (all[i].pid == pgid)
			all[i].in = true, pids[out++] = all[i].pid;
	for (size_t i = 0; i < n && out < max; i++)
		if (all[i].pgrp == pgid && !all[i].in)
			all[i].in = true, pids[out++] = all[i].pid;
	add_descendants(all, n, pids, &out, max);
	free(all);
	return out;
}

/* --- orphans: what left the trainer's group and outlived it --------------- */

#define ORPHANS_MAX 256

static bool listed(const pid_t *v, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == pid)
			return true;
	return false;
}

/* This process's children (pids, at most max); before the trainer starts
 * they are someone else's business, never the trainer's orphans. */
static size_t own_children(pid_t *pids, size_t max)
{
	struct pinfo *all;
	size_t n = scan_all(&all), out = 0;
	pid_t self = getpid();
	for (size_t i = 0; i < n && out < max; i++)
		if (all[i].ppid == self)
			pids[out++] = all[i].pid;
	free(all);
	return out;
}

/* The trainer's orphans now: this process's children not in keep (as the
 * child subreaper it inherits whatever a setsid'd or double-forked
 * grandchild of the trainer leaves behind) and their descendants. Writes
 * *direct (true: a child of ours, to reap) beside each pid. */
static size_t orphan_tree(const pid_t *keep, size_t nkeep, pid_t *pids, bool *direct, size_t max)
{
	struct pinfo *all;
	size_t n = scan_all(&all), out = 0;
	pid_t self = getpid();
	for (size_t i = 0; i < n && out < max; i++)
		if (all[i].ppid == self && !listed(keep, nkeep, all[i].pid))
			all[i].in = true, pids[out++] = all[i].pid;
	size_t nchildren = out;
	add_descendants(all, n, pids, &out, max);
	for (size_t k = 0; k < out; k++)
		direct[k] = k < nchildren;
	free(all);
	return out;
}

/* After the trainer and its group are gone (or were ended): end what left
 * the group and outlived it - SIGTERM, SIGKILL once grace has passed -
 * reaping our children among them; again and again, as ending one can
 * orphan more (its children come to us). Bounded: grace + 10 s at most
 * (a process stuck in the kernel is left). */
static void end_orphans(const pid_t *keep, size_t nkeep, double grace)
{
	pid_t pids[ORPHANS_MAX], termed[ORPHANS_MAX];
	bool direct[ORPHANS_MAX];
	size_t ntermed = 0;
	double start = now_s();
	for (;;) {
		size_t n = orphan_tree(keep, nkeep, pids, direct, ORPHANS_MAX);
		double t = now_s();
		if (n == 0 || t - start > grace + 10)
			break;
		bool hard = t - start >= grace;
		for (size_t i = 0; i < n; i++) {
			if (hard)
				kill(pids[i], SIGKILL);
			else if (!listed(termed, ntermed, pids[i])) {
				kill(pids[i], SIGTERM);
				if (ntermed < ORPHANS_MAX)
					termed[ntermed++] = pids[i];
			}
		}
		for (size_t i = 0; i < n; i++)
			if (direct[i])
				while (waitpid(pids[i], NULL, WNOHANG) < 0 && errno == EINTR)
					;
		poll(NULL, 0, 10);
	}
}

/* --- environment ---------------------------------------------------------- */

struct envlist {
	char *v[ENV_MAX + 1];
	int n;
};

static size_t name_len(const char *kv)
{
	const char *eq = strchr(kv, '=');
	return eq ? (size_t)(eq - kv) : strlen(kv);
}

/* Add or replace NAME=value (the string is copied). */
static int env_put(struct envlist *e, const char *kv)
{
	size_t nl = name_len(kv);
	for (int i = 0; i < e->n; i++) {
		if (name_len(e->v[i]) == nl && strncmp(e->v[i], kv, nl) == 0) {
			char *c = strdup(kv);
			if (!c)
				return -1;
			free(e->v[i]);
			e->v[i] = c;
			return 0;
		}
	}
	if (e->n >= ENV_MAX)
		return -1;
	if (!(e->v[e->n] = strdup(kv)))
		return -1;
	e->n++;
	e->v[e->n] = NULL;
	return 0;
}

static void env_release(struct envlist *e)
{
	for (int i = 0; i < e->n; i++)
		free(e->v[i]);
	e->n = 0;
}

static bool env_passes(const char *kv)
{
	size_t nl = name_len(kv);
	for (int i = 0; pass_names[i]; i++)
		if (strlen(pass_names[i]) == nl && strncmp(kv, pass_names[i], nl) == 0)
			return true;
	for (int i = 0; pass_prefixes[i]; i++)
		if (strncmp(kv, pass_prefixes[i], strlen(pass_prefixes[i])) == 0)
			return true;
	return false;
}

static vf_status env_build(struct envlist *e, const struct vf_proc *p, struct vf_error *err)
{
	e->n = 0;
	e->v[0] = NULL;
	int rc = 0;
	for (char **ev = environ; ev && *ev; ev++)
		if (strchr(*ev, '=') && env_passes(*ev))
			rc |= env_put(e, *ev);
	rc |= env_put(e, "COLUMNS=200");
	rc |= env_put(e, "PYTHONUNBUFFERED=1");
	rc |= env_put(e, "CUDA_DEVICE_ORDER=PCI_BUS_ID");
	rc |= env_put(e, "TERM=dumb");
	if (p->gpus) {
		char kv[512];
		snprintf(kv, sizeof kv, "CUDA_VISIBLE_DEVICES=%s", p->gpus);
		rc |= env_put(e, kv);
	} else {
		/* no GPUs named: the user's own choice of visible GPUs stands
		 * (vramfit's probe honoured it too) */
		const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
		if (cvd) {
			char kv[512];
			snprintf(kv, sizeof kv, "CUDA_VISIBLE_DEVICES=%s", cvd);
			rc |= env_put(e, kv);
		}
	}
	for (const char *const *x = p->env_extra; x && *x; x++) {
		if (!strchr(*x, '=')) {
			env_release(e);
			return vf_error_set(err, VF_EUSAGE, "environment entry '%s': expected NAME=value", *x);
		}
		rc |= env_put(e, *x);
	}
	if (rc) {
		env_release(e);
		return vf_error_set(err, VF_ENOMEM, "child environment: more than %d entries or out of memory",
				    ENV_MAX);
	}
	return VF_OK;
}

/* --- line splitting ------------------------------------------------------- */

struct stream {
	int fd;
	enum vf_proc_stream id;
	char *buf;      /* line_max + 1 bytes */
	size_t len;
	bool dropping;  /* inside an over-long line, skipping to its newline */
	bool after_cr;  /* the last byte ended a line with '\r' */
};

static void emit(struct vf_proc *p, struct stream *s, bool truncated)
{
	s->buf[s->len] = '\0';
	if (p->on_line)
		p->on_line(p->ctx, s->id, s->buf, s->len, truncated);
	s->len = 0;
}

static void feed(struct vf_proc *p, struct stream *s, const char *data, size_t n, size_t line_max)
{
	for (size_t i = 0; i < n; i++) {
		char c = data[i];
		if (c == '\n' || c == '\r') {
			bool skip = (c == '\n' && s->after_cr && s->len == 0 && !s->dropping);
			if (s->dropping)
				s->dropping = false;
			else if (!skip)
				emit(p, s, false);
			s->after_cr = (c == '\r');
			continue;
		}
		s->after_cr = false;
		if (s->dropping) {
			p->bytes_dropped++;
			continue;
		}
		s->buf[s->len++] = c;
		if (s->len == line_max) {
			emit(p, s, true);
			s->dropping = true;
		}
	}
}

/* --- the child ------------------------------------------------------------ */

static void child_exec(const struct vf_proc *p, int out_w, int err_w, int exec_w, char **envp,
		       pid_t parent)
{
	/* Only async-signal-safe calls from here on. */
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	int devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0) {
		dup2(devnull, 0);
		if (devnull > 2)
			close(devnull);
	}
	dup2(out_w, 1);
	dup2(err_w, 2);
	if (out_w > 2)
		close(out_w);
	if (err_w > 2)
		close(err_w);
	int e;
	if (p->cwd && chdir(p->cwd) != 0)
		goto fail;
	if (p->mem_limit_bytes) {
		struct rlimit rl = {(rlim_t)p->mem_limit_bytes, (rlim_t)p->mem_limit_bytes};
		if (setrlimit(RLIMIT_DATA, &rl) != 0)
			goto fail;
	}
	execvpe(p->argv[0], (char *const *)p->argv, envp);
fail:
	e = errno;
	if (write(exec_w, &e, sizeof e) < 0) {
		/* nothing more to say */
	}
	_exit(127);
}

/* Reap every child in the group; record the main child's status. */
static void reap(struct vf_proc *p, bool *child_done)
{
	int st;
	pid_t w;
	while ((w = waitpid(-p->pid, &st, WNOHANG)) > 0) {
		if (w == p->pid) {
			*child_done = true;
			if (WIFEXITED(st))
				p->status = WEXITSTATUS(st);
			else if (WIFSIGNALED(st))
				p->status = 128 + WTERMSIG(st);
		}
	}
}

static bool group_alive(pid_t pgid)
{
	return kill(-pgid, 0) == 0 || errno == EPERM;
}

/* vf_proc_run's loop state. */
struct supervision {
	bool child_done, ending, killed;
	double start, last_output, term_at;
};

/* vf_proc_run at time t: end the group (SIGTERM) on an interrupt, the
 * timeout, a stall or leftovers of a finished child; SIGKILL after the
 * grace period. */
static void supervise_ending(struct vf_proc *p, pid_t pid, struct supervision *u, double t, double grace)
{
	if (!u->ending) {
		enum vf_proc_end why = VF_PROC_EXITED;
		bool stop = false;
		if (p->interrupt)
			why = VF_PROC_INTERRUPTED, stop = true;
		else if (p->timeout_s > 0 && t - u->start >= p->timeout_s)
			why = VF_PROC_TIMEOUT, stop = true;
		else if (p->stall_s > 0 && t - u->last_output >= p->stall_s && !u->child_done)
			why = VF_PROC_STALLED, stop = true;
		else if (u->child_done && group_alive(pid))
			stop = true; /* leftovers of a finished child */
		if (stop) {
			if (!u->child_done)
				p->end = why;
			u->ending = true;
			u->term_at = t;
			p->killed_group = true;
			kill(-pid, SIGTERM);
		}
	} else if (!u->killed && t - u->term_at >= grace) {
		u->killed = true;
		kill(-pid, SIGKILL);
	}
}

/* vf_proc_run: read what the ready streams hold (a bounded amount per
 * wake-up), feed it as lines, close a stream at its end. */
static void read_ready(struct vf_proc *p, struct stream *s, const struct pollfd *pf, int nf, const int *map,
		       char *chunk, size_t line_max, double *last_output)
{
	for (int k = 0; k < nf; k++) {
		if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		struct stream *sp = &s[map[k]];
		/* Read a bounded amount per wake-up so one chatty stream
		 * cannot starve the timers. */
		for (int rounds = 0; rounds < 16; rounds++) {
			ssize_t r = read(sp->fd, chunk, 64u << 10);
			if (r > 0) {
				*last_output = now_s();
				feed(p, sp, chunk, (size_t)r, line_max);
				continue;
			}
			if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
				if (sp->len > 0 && !sp->dropping)
					emit(p, sp, false);
				close(sp->fd);
				sp->fd = -1;
			}
			break;
		}
	}
}

/* vf_proc_run after the fork: whether the child's exec failed (its errno
 * through the close-on-exec pipe), the child then reaped. */
static vf_status exec_failed(const struct vf_proc *p, pid_t pid, int exec_fd, struct vf_error *err)
{
	int child_errno = 0;
	ssize_t r;
	do
		r = read(exec_fd, &child_errno, sizeof child_errno);
	while (r < 0 && errno == EINTR);
	if (r == (ssize_t)sizeof child_errno) {
		int ws;
		while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
			;
		return vf_error_set(err, VF_ERR, "cannot run '%s'%s%s: %s", p->argv[0], p->cwd ? " in " : "",
				    p->cwd ? p->cwd : "", strerror(child_errno));
	}
	return VF_OK;
}

/* vf_proc_run: supervise the child until it and its group are gone and
 * its pipes closed - end it on an interrupt, timeout or stall, read its
 * lines (the last one too), call on_tick. */
static void supervise(struct vf_proc *p, pid_t pid, struct stream *s, char *chunk, size_t line_max,
		      double grace, int tick, double start)
{
	struct supervision u = {.start = start, .last_output = start};
	double last_tick = start, orphan_pipes_since = 0;
	for (;;) {
		double t = now_s();
		supervise_ending(p, pid, &u, t, grace);
		reap(p, &u.child_done);
		bool pipes_open = s[0].fd >= 0 || s[1].fd >= 0;
		if (u.child_done && !group_alive(pid)) {
			if (!pipes_open)
				break;
			/* Someone outside the group (setsid) holds our pipes: give
			 * them one second to let go, then stop reading. */
			if (orphan_pipes_since == 0)
				orphan_pipes_since = t;
			else if (t - orphan_pipes_since > 1.0)
				break;
		}

		struct pollfd pf[2];
		int nf = 0, map[2];
		for (int i = 0; i < 2; i++)
			if (s[i].fd >= 0) {
				pf[nf].fd = s[i].fd;
				pf[nf].events = POLLIN;
				map[nf++] = i;
			}
		int wait_ms = tick;
		if (u.child_done && !pipes_open)
			wait_ms = 10;
		int pr = poll(pf, (nfds_t)nf, wait_ms);
		if (pr < 0 && errno != EINTR) {
			kill(-pid, SIGKILL);
			u.killed = u.ending = true;
		}
		if (pr > 0)
			read_ready(p, s, pf, nf, map, chunk, line_max, &u.last_output);
		t = now_s();
		if (p->on_tick && t - last_tick >= tick / 1000.0) {
			last_tick = t;
			p->on_tick(p->ctx, pid, t - start);
		}
	}
	for (int i = 0; i < 2; i++) /* a last line without its newline */
		if (s[i].len > 0 && !s[i].dropping)
			emit(p, &s[i], false);
}

vf_status vf_proc_run(struct vf_proc *p, struct vf_error *err)
{
	if (!p->argv || !p->argv[0])
		return vf_error_set(err, VF_EUSAGE, "proc: no command to run");
	size_t line_max = p->line_max ? p->line_max : VF_PROC_LINE_MAX_DEFAULT;
	double grace = p->grace_s > 0 ? p->grace_s : 5.0;
	int tick = p->tick_ms ? (int)p->tick_ms : 100;

	p->status = -1;
	p->end = VF_PROC_EXITED;
	p->wall_s = 0;
	p->bytes_dropped = 0;
	p->killed_group = false;

	struct envlist env;
	vf_status st = env_build(&env, p, err);
	if (st)
		return st;

	struct stream s[2] = {{.fd = -1, .id = VF_PROC_STDOUT}, {.fd = -1, .id = VF_PROC_STDERR}};
	int out_p[2] = {-1, -1}, err_p[2] = {-1, -1}, exec_p[2] = {-1, -1};
	s[0].buf = malloc(line_max + 1);
	s[1].buf = malloc(line_max + 1);
	char *chunk = malloc(64u << 10);
	if (!s[0].buf || !s[1].buf || !chunk) {
		st = vf_error_set(err, VF_ENOMEM, "proc: out of memory");
		goto out;
	}
	if (pipe2(out_p, O_CLOEXEC) || pipe2(err_p, O_CLOEXEC) || pipe2(exec_p, O_CLOEXEC)) {
		st = vf_error_set(err, VF_ERR, "proc: pipe: %s", strerror(errno));
		goto out;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid_t keep[ORPHANS_MAX];
	size_t nkeep = own_children(keep, ORPHANS_MAX);

	double start = now_s();
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		st = vf_error_set(err, VF_ERR, "proc: fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		child_exec(p, out_p[1], err_p[1], exec_p[1], env.v, parent);
	p->pid = pid;
	setpgid(pid, pid); /* also done in the child; whichever runs first */
	close(out_p[1]);
	close(err_p[1]);
	close(exec_p[1]);
	out_p[1] = err_p[1] = exec_p[1] = -1;

	if ((st = exec_failed(p, pid, exec_p[0], err)))
		goto out;
	s[0].fd = out_p[0];
	s[1].fd = err_p[0];
	out_p[0] = err_p[0] = -1;
	fcntl(s[0].fd, F_SETFL, O_NONBLOCK);
	fcntl(s[1].fd, F_SETFL, O_NONBLOCK);

	supervise(p, pid, s, chunk, line_max, grace, tick, start);
	p->wall_s = now_s() - start;
	end_orphans(keep, nkeep, grace);
	if (p->status < 0)
		p->status = 128 + SIGKILL;
	st = VF_OK;
out:
	for (int i = 0; i < 2; i++) {
		if (s[i].fd >= 0)
			close(s[i].fd);
		free(s[i].buf);
	}
	free(chunk);
	int fds[] = {out_p[0], out_p[1], err_p[0], err_p[1], exec_p[0], exec_p[1]};
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	env_release(&env);
	return st;
}
