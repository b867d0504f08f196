/* backend_local.c - the local backend of the parallel sweep: K slots on
 * this machine, slot i with its own GPU set (CUDA_VISIBLE_DEVICES). Each
 * trial runs in a forked child of vramfit that supervises the trainer with
 * vf_proc exactly as a sequential trial is (own process group, clean
 * environment, timeouts, line limit), writes its log, and sends the result
 * back on a pipe. Interrupting sends SIGTERM to the children, whose
 * handler interrupts their vf_proc (the trainer's tree ends with it). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vramfit/base/rundir.h"
#include "sweep.h"

#define LOCAL_MAX_SLOTS 16

struct local {
	struct vf_tune_backend be;
	char *gpu_sets[LOCAL_MAX_SLOTS];
};

struct result {
	int status;
	int end;
	double wall_s;
};

static struct vf_proc *volatile g_child_proc; /* in a trial's child only */

static void child_on_signal(int sig)
{
	(void)sig;
	if (g_child_proc)
		vf_proc_interrupt(g_child_proc);
}

static void child_line(void *ctx, enum vf_proc_stream s, const char *line, size_t len, bool trunc)
{
	FILE *f = ctx;
	(void)s;
	fwrite(line, 1, len, f);
	if (trunc)
		fputs(" [... line cut by vramfit: longer than the line limit]", f);
	fputc('\n', f);
}

/* In the forked child: run the trainer, write the log, report, exit. */
static void child_run(const struct vf_tune_launch *l, const struct vf_tune_task *task, const char *gpus, int fd)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = child_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	struct result res = {.status = -1, .end = VF_PROC_EXITED};
	FILE *f = vf_rundir_fopen_path(l->run_dir, task->log, "w", NULL); /* never through a link */
	char *store = NULL, ngpus[16];
	const char *argv[MAX_ARGS];
	snprintf(ngpus, sizeof ngpus, "%d", l->num_gpus);
	struct vf_error err = {0};
	struct vf_proc p;
	vf_proc_init(&p);
	if (f && vf__build_argv(l->cmd, task->config, ngpus, &store, argv, &err) == VF_OK) {
		p.argv = argv;
		p.cwd = l->trainer_dir;
		p.gpus = gpus;
		p.timeout_s = l->timeout_s;
		p.stall_s = l->stall_s;
		p.grace_s = l->grace_s;
		p.mem_limit_bytes = l->mem_limit_bytes;
		p.on_line = child_line;
		p.ctx = f;
		g_child_proc = &p;
		if (vf_proc_run(&p, &err) == VF_OK) {
			res.status = p.status;
			res.end = p.end;
			res.wall_s = p.wall_s;
			fprintf(f, "[vramfit] trainer ended: %s, exit status %d, %.1f s (local slot, GPUs %s)\n",
				vf_proc_end_name(p.end), p.status, p.wall_s, gpus ? gpus : "as set");
		}
		g_child_proc = NULL;
	}
	if (f && err.msg[0])
		fprintf(f, "[vramfit] %s\n", err.msg);
	if (f)
		fclose(f);
	free(store);
	ssize_t w = write(fd, &res, sizeof res);
	_exit(w == (ssize_t)sizeof res ? 0 : 1);
}

struct slot {
	pid_t pid;
	int fd;
	struct vf_tune_task *task;
};

static vf_status start(struct local *lb, const struct vf_tune_launch *l, struct slot *sl, int i,
		       struct vf_tune_task *task, struct vf_error *err)
{
	int pfd[2];
	if (pipe(pfd))
		return vf_error_set(err, VF_ERR, "local backend: pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return vf_error_set(err, VF_ERR, "local backend: fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(pfd[0]);
		child_run(l, task, lb->gpu_sets[i], pfd[1]);
	}
	close(pfd[1]);
	task->started = (double)time(NULL);
	snprintf(task->where, sizeof task->where, "local slot %d%s%s", i + 1, lb->gpu_sets[i] ? ", GPUs " : "",
		 lb->gpu_sets[i] ? lb->gpu_sets[i] : "");
	sl->pid = pid;
	sl->fd = pfd[0];
	sl->task = task;
	return VF_OK;
}

/* Reap slot sl's child when it has ended; true when it did. */
static bool reap(struct slot *sl)
{
	int ws;
	pid_t w = waitpid(sl->pid, &ws, WNOHANG);
	if (w == 0 || (w < 0 && errno == EINTR))
		return false;
	struct result res = {.status = -1, .end = VF_PROC_INTERRUPTED};
	if (read(sl->fd, &res, sizeof res) != (ssize_t)sizeof res)
		res.end = VF_PROC_INTERRUPTED; /* the child died before it could say */
	close(sl->fd);
	sl->task->status = res.status;
	sl->task->end = (enum vf_proc_end)res.end;
	sl->task->wall_s = res.wall_s;
	sl->pid = 0;
	return true;
}

static vf_status local_run(struct vf_tune_backend *be, const struct vf_tune_launch *l,
			   struct vf_tune_task *tasks, size_t n, vf_tune_task_done_fn done, void *ctx,
			   struct vf_error *err)
{
	struct local *lb = (struct local *)be;
	struct slot slots[LOCAL_MAX_SLOTS];
	memset(slots, 0, sizeof slots);
	size_t next = 0, running = 0;
	bool told = false;
	vf_status st = VF_OK;
	while (next < n || running > 0) {
		for (int i = 0; i < be->slots && next < n && !be->interrupted && st == VF_OK; i++)
			if (!slots[i].pid && (st = start(lb, l, &slots[i], i, &tasks[next], err)) == VF_OK)
				next++, running++;
		if (be->interrupted && !told) {
			told = true;
			for (int i = 0; i < be->slots; i++)
				if (slots[i].pid)
					kill(slots[i].pid, SIGTERM);
		}
		if ((be->interrupted || st) && running == 0)
			break;
		for (int i = 0; i < be->slots; i++)
			if (slots[i].pid && reap(&slots[i])) {
				running--;
				done(ctx, slots[i].task);
			}
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL); /* the children report on exit; 50 ms is the polling tick */
	}
	return st;
}

static void local_interrupt(struct vf_tune_backend *be)
{
	be->interrupted = 1;
}

static void local_free(struct vf_tune_backend *be)
{
	struct local *lb = (struct local *)be;
	for (int i = 0; i < LOCAL_MAX_SLOTS; i++)
		free(lb->gpu_sets[i]);
	free(lb);
}

struct vf_tune_backend *vf_tune_backend_local(int slots, const char *const *gpu_sets)
{
	struct local *lb = calloc(1, sizeof *lb);
	if (!lb)
		return NULL;
	if (slots < 1)
		slots = 1;
	if (slots > LOCAL_MAX_SLOTS)
		slots = LOCAL_MAX_SLOTS;
	lb->be.name = "local";
	lb->be.slots = slots;
	lb->be.run = local_run;
	lb->be.interrupt = local_interrupt;
	lb->be.free = local_free;
	for (int i = 0; gpu_sets && i < slots && gpu_sets[i]; i++)
		lb->gpu_sets[i] = strdup(gpu_sets[i]);
	return &lb->be;
}

void vf_tune_backend_free(struct vf_tune_backend *be)
{
	if (be && be->free)
		be->free(be);
}
