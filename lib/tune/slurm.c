/* slurm.c - the Slurm backend of the parallel sweep (see slurm.h): writes
 * one batch script per round (a job array, one task per trial), submits it
 * with sbatch, follows it with squeue, reads final states from the
 * job-completion record or scontrol, cancels with scancel. */
#include "vramfit/tune/slurm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sweep.h"
#include "vramfit/base/buf.h"
#include "vramfit/base/rundir.h"

#define SLURM_OUT_MAX (4u << 20)
#define SLURM_MAX_TASKS VF_TUNE_MAX_TRIALS

extern char **environ;

struct slurm {
	struct vf_tune_backend be;
	char *partition, *account, *qos, *time_limit;
	char **extra;
	double poll_s;
	int round;
	char jobcomp[4096]; /* the jobcomp/filetxt file, "" when none */
	bool jobcomp_known;
};

/* --- running the clients --------------------------------------------------- */

struct capture {
	struct vf_buf *out;
	char err[256];
};

static void cap_line(void *ctx, enum vf_proc_stream s, const char *line, size_t len, bool trunc)
{
	struct capture *c = ctx;
	(void)trunc;
	if (s == VF_PROC_STDOUT) {
		vf_buf_append(c->out, line, len, NULL);
		vf_buf_append(c->out, "\n", 1, NULL);
	} else if (!c->err[0] && len) {
		snprintf(c->err, sizeof c->err, "%.*s", (int)(len < 255 ? len : 255), line);
	}
}

static bool slurm_env(const char *e)
{
	static const char *const pre[] = {"SLURM_", "SBATCH_", "SQUEUE_", "SINFO_", "SCONTROL_", NULL};
	for (int i = 0; pre[i]; i++)
		if (strncmp(e, pre[i], strlen(pre[i])) == 0)
			return true;
	return false;
}

vf_status vf_slurm_run(const char *const *argv, struct vf_buf *out, struct vf_error *err)
{
	const char *env[256];
	size_t n = 0;
	for (char **e = environ; e && *e && n < 255; e++)
		if (slurm_env(*e))
			env[n++] = *e;
	env[n] = NULL;
	struct capture c = {.out = out};
	vf_buf_reset(out);
	struct vf_proc p;
	vf_proc_init(&p);
	p.argv = argv;
	p.env_extra = env;
	p.timeout_s = 120; /* a client that hangs on a dead controller */
	p.grace_s = 1;
	p.on_line = cap_line;
	p.ctx = &c;
	vf_status st = vf_proc_run(&p, err);
	if (st)
		return st;
	if (p.status != 0 || p.end != VF_PROC_EXITED)
		return vf_error_set(err, VF_ERR, "%s: %s", argv[0],
				    c.err[0] ? c.err : p.end == VF_PROC_TIMEOUT ? "no answer in 120 s" : "failed");
	return VF_OK;
}

/* --- parsing --------------------------------------------------------------- */

/* The value of key in a blank-separated key=value line, into v (cut). */
static bool kv(const char *line, size_t len, const char *key, char *v, size_t vl)
{
	size_t kl = strlen(key);
	for (size_t i = 0; i + kl < len; i++) {
		if ((i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t') && strncmp(line + i, key, kl) == 0 &&
		    line[i + kl] == '=') {
			size_t j = i + kl + 1, k = 0;
			while (j < len && line[j] != ' ' && line[j] != '\t' && line[j] != '\n' && k + 1 < vl)
				v[k++] = line[j++];
			v[k] = '\0';
			return true;
		}
	}
	return false;
}

static long kv_long(const char *line, size_t len, const char *key)
{
	char v[32];
	if (!kv(line, len, key, v, sizeof v) || !v[0])
		return -1;
	char *end;
	long x = strtol(v, &end, 10);
	return *end || x < 0 ? -1 : x;
}

bool vf_slurm_parse_record(const char *line, size_t len, struct vf_slurm_job *job)
{
	memset(job, 0, sizeof *job);
	if (!kv(line, len, "JobState", job->state, sizeof job->state) || !job->state[0])
		return false;
	job->job_id = kv_long(line, len, "JobId");
	job->array_job_id = kv_long(line, len, "ArrayJobId");
	job->array_task_id = kv_long(line, len, "ArrayTaskId");
	kv(line, len, "NodeList", job->nodes, sizeof job->nodes);
	kv(line, len, "ExitCode", job->exit_code, sizeof job->exit_code);
	return true;
}

bool vf_slurm_jobcomp_final(const char *path, long job, long task, struct vf_slurm_job *out)
{
	FILE *fp = fopen(path, "r");
	bool found = false;
	char line[4096];
	while (fp && fgets(line, sizeof line, fp)) {
		struct vf_slurm_job r;
		if (vf_slurm_parse_record(line, strlen(line), &r) && r.array_job_id == job && r.array_task_id == task)
			*out = r, found = true; /* the last record wins (a requeued task has several) */
	}
	if (fp)
		fclose(fp);
	return found && vf_slurm_state_final(out->state);
}

bool vf_slurm_state_final(const char *st)
{
	static const char *const fin[] = {"COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "NODE_FAIL",
					  "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", NULL};
	for (int i = 0; fin[i]; i++)
		if (strcmp(st, fin[i]) == 0)
			return true;
	return false;
}

bool vf_slurm_state_retry(const char *st)
{
	return strcmp(st, "PREEMPTED") == 0 || strcmp(st, "NODE_FAIL") == 0 || strcmp(st, "BOOT_FAIL") == 0;
}

/* --- the batch script ------------------------------------------------------ */

/* s in single quotes for bash. */
static void shq(struct vf_buf *b, const char *s)
{
	vf_buf_puts(b, "'", NULL);
	for (; *s; s++)
		vf_buf_puts(b, *s == '\'' ? "'\\''" : (char[]){*s, 0}, NULL);
	vf_buf_puts(b, "'", NULL);
}

/* RUN/overfit/slurm-round-R.sbatch: task i = tasks[i]. */
static vf_status write_script(struct slurm *sl, const struct vf_tune_launch *l, struct vf_tune_task *tasks,
			      size_t n, char *path, size_t pl, struct vf_error *err)
{
	struct vf_buf b;
	vf_buf_init(&b, 1 << 20);
	vf_buf_puts(&b, "#!/bin/bash\n# written by vramfit tune --slurm: one array task per trial of this round\n"
			"case \"$SLURM_ARRAY_TASK_ID\" in\n", NULL);
	for (size_t i = 0; i < n; i++) {
		vf_buf_printf(&b, NULL, "%zu) cfg=", i);
		shq(&b, tasks[i].config);
		vf_buf_puts(&b, "; log=", NULL);
		shq(&b, tasks[i].log);
		vf_buf_puts(&b, " ;;\n", NULL);
	}
	vf_buf_puts(&b, "*) echo \"vramfit: no trial for array task $SLURM_ARRAY_TASK_ID\" >&2; exit 97 ;;\nesac\ncd ", NULL);
	shq(&b, l->trainer_dir);
	vf_buf_puts(&b, " || exit 96\nexport PYTHONUNBUFFERED=1 COLUMNS=200 CUDA_DEVICE_ORDER=PCI_BUS_ID TERM=dumb\n"
			"rm -f \"$log.exit\"\nt0=$(date +%s%N)\n", NULL);
	char *copy = strdup(l->cmd);
	for (char *save = NULL, *w = copy ? strtok_r(copy, " \t", &save) : NULL; w; w = strtok_r(NULL, " \t", &save)) {
		if (strcmp(w, "{config}") == 0)
			vf_buf_puts(&b, "\"$cfg\"", NULL);
		else if (strcmp(w, "{num_gpus}") == 0)
			vf_buf_printf(&b, NULL, "%d", l->num_gpus);
		else
			shq(&b, w);
		vf_buf_puts(&b, " ", NULL);
	}
	free(copy);
	vf_buf_puts(&b, "</dev/null >\"$log\" 2>&1\nrc=$?\nt1=$(date +%s%N)\n"
			"echo \"$rc $(( (t1 - t0) / 1000000 ))\" > \"$log.exit.tmp\" && mv \"$log.exit.tmp\" \"$log.exit\"\n"
			"exit $rc\n", NULL);
	snprintf(path, pl, "%s/overfit/slurm-round-%d.sbatch", l->run_dir, ++sl->round);
	vf_status st = b.data ? vf_rundir_write_file(l->run_dir, path + strlen(l->run_dir) + 1, b.data, b.len, 0644, err)
			      : vf_error_set(err, VF_ENOMEM, "out of memory");
	vf_buf_release(&b);
	return st;
}

/* sbatch it; *job: the array's job id. */
static vf_status submit(struct slurm *sl, const struct vf_tune_launch *l, const char *script, size_t n,
			long *job, struct vf_error *err)
{
	char array[64], gres[32], out[4200], opt[4][300];
	snprintf(array, sizeof array, "--array=0-%zu%%%d", n - 1, sl->be.slots);
	snprintf(gres, sizeof gres, "--gres=gpu:%d", l->num_gpus);
	snprintf(out, sizeof out, "--output=%s/logs/slurm-%%A_%%a.out", l->run_dir);
	const char *argv[80] = {"sbatch", "--parsable", "--job-name=vramfit-tune", array, gres, out};
	int a = 6, k = 0;
	const char *names[] = {"--partition=", "--account=", "--qos=", "--time="};
	const char *vals[] = {sl->partition, sl->account, sl->qos, sl->time_limit};
	for (int i = 0; i < 4; i++)
		if (vals[i]) {
			snprintf(opt[k], sizeof opt[k], "%s%s", names[i], vals[i]);
			argv[a++] = opt[k++];
		}
	for (char **e = sl->extra; e && *e && a < 77; e++)
		argv[a++] = *e;
	argv[a++] = script;
	argv[a] = NULL;
	struct vf_buf o;
	vf_buf_init(&o, SLURM_OUT_MAX);
	vf_status st = vf_slurm_run(argv, &o, err);
	*job = -1;
	if (st == VF_OK) {
		char *end;
		*job = o.data ? strtol(o.data, &end, 10) : -1; /* "ID" or "ID;cluster" */
		if (*job <= 0)
			st = vf_error_set(err, VF_ERR, "sbatch: no job id in its answer '%.80s'", o.data ? o.data : "");
	}
	vf_buf_release(&o);
	return st;
}

/* --- following the array ---------------------------------------------------- */

enum tstate { T_PENDING, T_RUNNING, T_DONE, T_RETRY };

struct follow {
	struct slurm *sl;
	long job;
	struct vf_tune_task **tasks; /* tasks[i] = array task i */
	size_t n;
	enum tstate st[SLURM_MAX_TASKS];
	double seen_running[SLURM_MAX_TASKS]; /* monotonic */
	int unknown_polls[SLURM_MAX_TASKS];
	char final[SLURM_MAX_TASKS][32];
	char nodes[SLURM_MAX_TASKS][128];
};

/* JobCompType=jobcomp/filetxt: where it writes (scontrol show config). */
static void find_jobcomp(struct slurm *sl)
{
	if (sl->jobcomp_known)
		return;
	sl->jobcomp_known = true;
	const char *argv[] = {"scontrol", "show", "config", NULL};
	struct vf_buf o;
	vf_buf_init(&o, SLURM_OUT_MAX);
	if (vf_slurm_run(argv, &o, NULL) == VF_OK && o.data && strstr(o.data, "jobcomp/filetxt")) {
		const char *p = strstr(o.data, "\nJobCompLoc");
		if (p && (p = strchr(p, '=')) != NULL) {
			p++;
			while (*p == ' ')
				p++;
			size_t k = strcspn(p, "\n");
			snprintf(sl->jobcomp, sizeof sl->jobcomp, "%.*s", (int)k, p);
		}
	}
	vf_buf_release(&o);
}

/* Task i's final state: its last job-completion record when that says it
 * ended and the controller does not still hold the task as queued or
 * running (a requeue's kill writes a final record, FAILED, while the task
 * waits to run again: seen on a loaded machine), else scontrol's. */
static bool final_state(struct follow *f, size_t i, struct vf_slurm_job *j)
{
	struct vf_slurm_job rec;
	bool recorded = f->sl->jobcomp[0] && vf_slurm_jobcomp_final(f->sl->jobcomp, f->job, (long)i, &rec);
	bool found = false, live = false;
	char id[64];
	snprintf(id, sizeof id, "%ld_%zu", f->job, i);
	const char *argv[] = {"scontrol", "-o", "show", "job", id, NULL};
	struct vf_buf o;
	vf_buf_init(&o, SLURM_OUT_MAX);
	if (vf_slurm_run(argv, &o, NULL) == VF_OK && o.data && vf_slurm_parse_record(o.data, o.len, j)) {
		found = vf_slurm_state_final(j->state);
		live = !found;
	}
	vf_buf_release(&o);
	if (recorded && !live)
		*j = rec;
	return recorded ? !live : found;
}

/* Task i ended in state j: its exit file, the log's closing line, done(). */
static void task_end(struct follow *f, size_t i, const struct vf_slurm_job *j, bool cancelled)
{
	struct vf_tune_task *t = f->tasks[i];
	char path[4200];
	snprintf(path, sizeof path, "%s.exit", t->log);
	FILE *fp = fopen(path, "r");
	long ms = -1;
	if (!fp || fscanf(fp, "%d %ld", &t->status, &ms) < 1)
		t->status = -1;
	if (fp)
		fclose(fp);
	t->wall_s = ms >= 0 ? ms / 1000.0 : f->seen_running[i] > 0 ? vf__now_s() - f->seen_running[i] : 0;
	if (strcmp(j->state, "TIMEOUT") == 0 || strcmp(j->state, "DEADLINE") == 0)
		t->end = VF_PROC_TIMEOUT;
	else if (strcmp(j->state, "CANCELLED") == 0 && cancelled)
		t->end = VF_PROC_INTERRUPTED;
	else
		t->end = VF_PROC_EXITED;
	if (t->status < 0 && strcmp(j->state, "CANCELLED") == 0 && !cancelled)
		t->status = 128 + 15; /* cancelled by someone else: as SIGTERM */
	snprintf(t->where, sizeof t->where, "slurm job %ld_%zu on %s", f->job, i, j->nodes[0] ? j->nodes : "?");
	if (strcmp(j->state, "OUT_OF_MEMORY") == 0)
		snprintf(t->note, sizeof t->note, "Slurm: OUT_OF_MEMORY (the job's host memory limit)");
	else if (t->status < 0 && strcmp(j->state, "FAILED") == 0 && !t->note[0])
		snprintf(t->note, sizeof t->note,
			 "Slurm: the job script left no exit status (it did not run to its end); Slurm's own "
			 "output: logs/slurm-%ld_%zu.out in the run directory",
			 f->job, i);
	fp = fopen(t->log, "a");
	if (fp) {
		fprintf(fp, "[vramfit] slurm: job %ld_%zu on %s: %s, exit status %d%s%s\n", f->job, i,
			j->nodes[0] ? j->nodes : "?", j->state, t->status, t->note[0] ? "; " : "", t->note);
		fclose(fp);
	}
	f->st[i] = T_DONE;
}

/* One squeue: which tasks are still queued or running. */
static vf_status poll_queue(struct follow *f, bool *queued, size_t nq, bool *any, struct vf_error *err)
{
	char id[32];
	snprintf(id, sizeof id, "%ld", f->job);
	const char *argv[] = {"squeue", "-h", "-r", "-j", id, "-o", "%K %T", NULL};
	struct vf_buf o;
	vf_buf_init(&o, SLURM_OUT_MAX);
	vf_status st = vf_slurm_run(argv, &o, err);
	memset(queued, 0, nq * sizeof *queued);
	*any = false;
	for (char *line = o.data, *nl; st == VF_OK && line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		char state[32] = "";
		long k = -1;
		if (sscanf(line, "%ld %31s", &k, state) != 2 || k < 0 || (size_t)k >= f->n)
			continue; /* "N_[0-3]" of a pending range: not expanded yet */
		queued[k] = *any = true;
		if (strcmp(state, "RUNNING") == 0 && f->st[k] == T_PENDING) {
			f->st[k] = T_RUNNING;
			f->seen_running[k] = vf__now_s();
		}
	}
	if (st == VF_OK && o.data && strchr(o.data, '['))
		*any = true; /* a pending range still stands for tasks */
	vf_buf_release(&o);
	return st;
}

/* Sleep poll_s in small steps, awake to an interrupt. */
static void nap(struct slurm *sl)
{
	double until = vf__now_s() + (sl->poll_s > 0 ? sl->poll_s : 1.0);
	while (!sl->be.interrupted && vf__now_s() < until) {
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

/* Cancel the array and wait (bounded) until squeue lists none of it. */
static void cancel(struct follow *f)
{
	char id[32];
	snprintf(id, sizeof id, "%ld", f->job);
	const char *argv[] = {"scancel", id, NULL};
	struct vf_buf o;
	vf_buf_init(&o, SLURM_OUT_MAX);
	vf_slurm_run(argv, &o, NULL);
	vf_buf_release(&o);
	bool queued[SLURM_MAX_TASKS], any = true;
	double until = vf__now_s() + 300;
	while (vf__now_s() < until) {
		if (poll_queue(f, queued, SLURM_MAX_TASKS, &any, NULL) == VF_OK && !any)
			break;
		struct timespec ts = {0, 200 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

/* Follow the array until every task ended (or it was interrupted). */
static vf_status follow(struct follow *f, vf_tune_task_done_fn done, void *ctx, struct vf_error *err)
{
	bool queued[SLURM_MAX_TASKS], any;
	for (;;) {
		if (f->sl->be.interrupted) {
			poll_queue(f, queued, f->n, &any, NULL); /* which ones run now */
			cancel(f);
			for (size_t i = 0; i < f->n; i++) {
				struct vf_slurm_job j;
				if (f->st[i] == T_DONE || f->st[i] == T_RETRY)
					continue;
				if (final_state(f, i, &j) && strcmp(j.state, "CANCELLED") != 0) {
					task_end(f, i, &j, false); /* it ended before the cancel */
					done(ctx, f->tasks[i]);
				} else if (f->st[i] == T_RUNNING || access(f->tasks[i]->log, F_OK) == 0) {
					/* it ran (its script made the log) and was cancelled */
					snprintf(j.state, sizeof j.state, "CANCELLED");
					task_end(f, i, &j, true);
					done(ctx, f->tasks[i]);
				}
			}
			return VF_OK;
		}
		vf_status st = poll_queue(f, queued, f->n, &any, err);
		if (st)
			return st;
		for (size_t i = 0; i < f->n; i++) {
			if (f->st[i] != T_DONE && f->st[i] != T_RETRY && !queued[i]) {
				struct vf_slurm_job j;
				if (!final_state(f, i, &j)) {
					/* not in the queue nor recorded yet: ask again, for a while */
					if (++f->unknown_polls[i] < 120)
						continue;
					snprintf(j.state, sizeof j.state, "UNKNOWN");
					snprintf(j.nodes, sizeof j.nodes, "?");
				}
				snprintf(f->final[i], sizeof f->final[i], "%s", j.state);
				if (vf_slurm_state_retry(j.state) && !f->tasks[i]->note[0]) {
					f->st[i] = T_RETRY;
					snprintf(f->tasks[i]->note, sizeof f->tasks[i]->note, "retried after %s", j.state);
					continue;
				}
				task_end(f, i, &j, false);
				done(ctx, f->tasks[i]);
			}
		}
		bool left = false;
		for (size_t i = 0; i < f->n; i++)
			left |= f->st[i] == T_PENDING || f->st[i] == T_RUNNING;
		if (!left)
			return VF_OK;
		nap(f->sl);
	}
}

/* One array for tasks, then one more for those to retry. */
static vf_status slurm_run(struct vf_tune_backend *be, const struct vf_tune_launch *l, struct vf_tune_task *tasks,
			   size_t n, vf_tune_task_done_fn done, void *ctx, struct vf_error *err)
{
	struct slurm *sl = (struct slurm *)be;
	struct vf_tune_task *batch[SLURM_MAX_TASKS];
	size_t nb = 0;
	for (size_t i = 0; i < n && i < SLURM_MAX_TASKS; i++)
		batch[nb++] = &tasks[i];
	find_jobcomp(sl);
	for (int attempt = 0; attempt < 2 && nb > 0 && !be->interrupted; attempt++) {
		struct vf_tune_task tmp[SLURM_MAX_TASKS];
		for (size_t i = 0; i < nb; i++)
			tmp[i] = *batch[i];
		char script[4200];
		struct follow f = {.sl = sl, .tasks = batch, .n = nb};
		/* a lower bound of each task's start: its validation sample must
		 * be newer (an older one is a previous run's) */
		for (size_t i = 0; i < nb; i++)
			batch[i]->started = (double)time(NULL);
		vf_status st = write_script(sl, l, tmp, nb, script, sizeof script, err);
		if (st || (st = submit(sl, l, script, nb, &f.job, err)))
			return st;
		if ((st = follow(&f, done, ctx, err)))
			return st;
		size_t k = 0;
		for (size_t i = 0; i < nb; i++)
			if (f.st[i] == T_RETRY)
				batch[k++] = batch[i];
		nb = k;
	}
	return VF_OK;
}

static void slurm_interrupt(struct vf_tune_backend *be)
{
	be->interrupted = 1;
}

static void slurm_free(struct vf_tune_backend *be)
{
	struct slurm *sl = (struct slurm *)be;
	free(sl->partition);
	free(sl->account);
	free(sl->qos);
	free(sl->time_limit);
	for (char **e = sl->extra; e && *e; e++)
		free(*e);
	free(sl->extra);
	free(sl);
}

static char *dup_or_null(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

struct vf_tune_backend *vf_tune_backend_slurm(int slots, const struct vf_slurm_opts *o)
{
	struct slurm *sl = calloc(1, sizeof *sl);
	if (!sl)
		return NULL;
	sl->be.name = "slurm";
	sl->be.slots = slots < 1 ? 1 : slots;
	sl->be.run = slurm_run;
	sl->be.interrupt = slurm_interrupt;
	sl->be.free = slurm_free;
	sl->partition = dup_or_null(o->partition);
	sl->account = dup_or_null(o->account);
	sl->qos = dup_or_null(o->qos);
	sl->time_limit = dup_or_null(o->time_per_trial);
	sl->poll_s = o->poll_s;
	size_t n = 0;
	while (o->sbatch_args && o->sbatch_args[n])
		n++;
	sl->extra = calloc(n + 1, sizeof *sl->extra);
	for (size_t i = 0; sl->extra && i < n; i++)
		sl->extra[i] = strdup(o->sbatch_args[i]);
	return &sl->be;
}
