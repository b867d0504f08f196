/* tune.c - the sanity run and autotune sweep (see tune.h).
 * The loop: baseline, then each change of sweep.json in order; a trial is
 * built from config.yaml + the current best deltas + the change + the
 * trial overrides, run (or found in the history), classified, recorded, and
 * adopted when it is ok and faster by the profile's margin. The stop and
 * continue rules are the change's on_failure / on_no_improvement. */
#include "vramfit/tune/tune.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vramfit/base/buf.h"
#include "vramfit/trainer/check.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/base/json.h"
#include "vramfit/base/term.h"
#include "vramfit/trainer/profile.h"
#include "vramfit/tune/store.h"
#include "sweep.h"


struct vf_tune *vf_tune_new(void)
{
	return calloc(1, sizeof(struct vf_tune));
}

void vf_tune_free(struct vf_tune *t)
{
	free(t);
}

void vf_tune_interrupt(struct vf_tune *t)
{
	if (!t)
		return;
	t->interrupted = 1;
	struct vf_proc *p = t->current;
	if (p)
		vf_proc_interrupt(p);
	struct vf_tune_backend *be = t->backend;
	if (be && be->interrupt)
		be->interrupt(be);
}

double vf__now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- templates ------------------------------------------------------------ */

/* Replace every {name} of vars (name, value pairs, NULL-terminated) in tpl. */
static vf_status expand(const char *tpl, const char *const *vars, struct vf_buf *out,
			struct vf_error *err)
{
	vf_buf_reset(out);
	for (const char *p = tpl; *p;) {
		if (*p == '{') {
			bool done = false;
			for (int i = 0; vars[i]; i += 2) {
				size_t n = strlen(vars[i]);
				if (strncmp(p + 1, vars[i], n) == 0 && p[1 + n] == '}') {
					if (vf_buf_puts(out, vars[i + 1], err))
						return VF_ERR;
					p += n + 2;
					done = true;
					break;
				}
			}
			if (done)
				continue;
		}
		if (vf_buf_append(out, p, 1, err))
			return VF_ERR;
		p++;
	}
	return VF_OK;
}

/* --- the change set of a trial -------------------------------------------- */

/* The YAML text of a value as JSON, for comparing "null" with "~" etc. */
static cJSON *value_json(const char *yaml_text)
{
	char buf[1100];
	snprintf(buf, sizeof buf, "v: %s\n", yaml_text);
	struct vf_yamldoc *d = NULL;
	if (vf_yamldoc_load_mem(buf, strlen(buf), "value", &d, NULL))
		return NULL;
	cJSON *j = vf_yaml_node_to_json(vf_yamldoc_find(d, "v"));
	vf_yamldoc_free(d);
	return j;
}

/* True when every key of set already has that value in doc. */
static bool already_in_effect(const struct vf_yamldoc *doc, const cJSON *set)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, set)
	{
		const struct vf_yaml_node *n = vf_yamldoc_find(doc, it->string);
		cJSON *want = value_json(it->valuestring);
		cJSON *have = n ? vf_yaml_node_to_json(n) : NULL;
		bool same;
		if (!n)
			same = want && cJSON_IsNull(want); /* absent reads as null */
		else
			same = want && have && cJSON_Compare(want, have, true);
		cJSON_Delete(want);
		cJSON_Delete(have);
		if (!same)
			return false;
	}
	return true;
}

/* --- a running trial ------------------------------------------------------ */

struct running {
	struct vf_trial_log log;
	FILE *logf;
	FILE *samplesf; /* RUN/logs/trial-N.samples: "SECONDS BYTES" per poll (report.h) */
	const struct vf_tune_opts *opts;
	struct vf_trial *trial;
	int max_trials;
	double start;
	double last_event;
	int64_t mem_now;
	double eta_rest; /* seconds of the sweep after this trial, rough */
	/* Measuring memory (poll_start, on_tick, poll_finish): the NVML sampler
	 * when there is one, else nvidia-smi probes, else /proc. */
	struct vf_gpu_sampler *sampler;
	int64_t base[VF_GPU_SAMPLE_MAX]; /* device used bytes before the trial; -1 unknown */
	int64_t peak_proc;   /* largest per-process figure (bytes); -1 none yet */
	int64_t peak_dev;    /* largest device-minus-baseline figure; -1 none yet */
	int64_t peak_host;   /* largest resident memory of the tree (no GPU polling) */
	int64_t gpu_base[64]; /* nvidia-smi path: used MiB per GPU before the trial */
	int ticks;
};

/* GPU memory used now above the idle baseline, the largest over the GPUs
 * (bytes); -1 when unknown. Without NVML (nvidia-smi) a probe costs tens of
 * ms, so this path runs about once a second. */
static int64_t gpu_delta(const struct running *r, bool baseline, int64_t *base)
{
	struct vf_gpu_set gs;
	vf_gpu_set_init(&gs);
	int64_t best = -1;
	if (vf_gpu_probe(&gs, NULL) == VF_OK) {
		for (size_t i = 0; i < gs.count && i < 64; i++) {
			int64_t used = gs.gpus[i].memory_used_mib;
			if (baseline) {
				base[i] = used;
				continue;
			}
			if (used < 0 || r->gpu_base[i] < 0)
				continue;
			int64_t d = (used - r->gpu_base[i]) * 1024 * 1024;
			if (d > best)
				best = d;
		}
	}
	vf_gpu_set_release(&gs);
	return best;
}

#define TREE_MAX 256 /* processes of a trainer's tree asked about */

/* One NVML sample of the trainer's tree (every tick, ~100 ms). The figure
 * per GPU is the sum of the tree's processes there, and the sample's is the
 * largest GPU (memory is per GPU, like the trainer's own figure). It counts
 * when NVML lists at least one of the tree's processes and every GPU's
 * figure is known; otherwise (no process list, a figure not available, the
 * tree's PIDs absent as in another PID namespace) the GPU's used memory
 * minus the baseline taken before the trial, largest GPU, stands in. The
 * trial's polled peak is the largest per-process sample when there was
 * one, else the largest fallback sample (poll_finish). */
static int64_t sample_nvml(struct running *r, pid_t pgid)
{
	pid_t pids[TREE_MAX];
	size_t n = vf_proc_pids(pgid, pids, TREE_MAX);
	struct vf_gpu_sample g;
	if (vf_gpu_sampler_sample(r->sampler, pids, n, &g, NULL) != VF_OK)
		return -1;
	int64_t proc = -1, dev = -1;
	int found = 0;
	bool unknown = false;
	for (size_t i = 0; i < g.count; i++) {
		const struct vf_gpu_sample_dev *d = &g.dev[i];
		if (d->procs_bytes < 0)
			unknown = true;
		else if (d->procs_bytes > proc)
			proc = d->procs_bytes;
		found += d->nprocs;
		if (d->used_bytes >= 0 && r->base[i] >= 0) {
			int64_t delta = d->used_bytes - r->base[i];
			if (delta < 0)
				delta = 0; /* someone else freed memory */
			if (delta > dev)
				dev = delta;
		}
	}
	if (dev > r->peak_dev)
		r->peak_dev = dev;
	if (found > 0 && !unknown && proc >= 0) {
		if (proc > r->peak_proc)
			r->peak_proc = proc;
		return proc;
	}
	return dev;
}

static void on_line(void *ctx, enum vf_proc_stream stream, const char *line, size_t len,
		    bool truncated)
{
	struct running *r = ctx;
	(void)stream;
	if (r->logf) {
		fwrite(line, 1, len, r->logf);
		if (truncated)
			fputs(" [... line cut by vramfit: longer than the line limit]", r->logf);
		fputc('\n', r->logf);
	}
	vf_trial_log_line(&r->log, line, len);
}

/* Resident memory of every live process in group pgid (bytes), from
 * /proc; -1 when none is left (all gone or zombies: no sample, not 0). */
static int64_t group_rss(pid_t pgid)
{
	DIR *d = opendir("/proc");
	if (!d)
		return -1;
	int64_t total = 0;
	long page = sysconf(_SC_PAGESIZE);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		char path[300], buf[1024];
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* pid (comm) state ppid pgrp ... field 24 = rss in pages */
		char *rp = strrchr(buf, ')');
		if (!rp)
			continue;
		long long f[24] = {0};
		int k = 0;
		for (char *tok = strtok(rp + 2, " "); tok && k < 24; tok = strtok(NULL, " "))
			f[k++] = atoll(tok);
		/* after ") ": [0]=state [1]=ppid [2]=pgrp ... [21]=rss */
		if (k >= 22 && f[2] == pgid && rp[2] != 'Z' && f[21] > 0)
			total += (int64_t)f[21] * page;
	}
	closedir(d);
	return total > 0 ? total : -1;
}

static void emit(const struct running *r, enum vf_tune_event_kind kind, bool resumed)
{
	const struct vf_tune_opts *o = r->opts;
	if (!o->on_event)
		return;
	struct vf_tune_event ev = {
		.kind = kind,
		.trial = r->trial,
		.max_trials = r->max_trials,
		.step = r->log.last_step,
		.total_steps = r->log.total_steps,
		.step_seconds = r->log.nreports ? r->log.reports[r->log.nreports - 1] : -1,
		.median_seconds = vf_trial_log_step_seconds(&r->log),
		.loss = r->log.last_loss,
		.mem_bytes = r->mem_now,
		.elapsed_s = vf__now_s() - r->start,
		.sweep_eta_s = -1,
		.resumed = resumed,
	};
	if (ev.median_seconds > 0 && ev.total_steps > 0) {
		double rest = (ev.total_steps - ev.step) * ev.median_seconds;
		ev.sweep_eta_s = rest + r->eta_rest;
	}
	o->on_event(o->event_ctx, &ev);
}

static void on_tick(void *ctx, pid_t pgid, double elapsed)
{
	struct running *r = ctx;
	(void)elapsed;
	bool fresh = true;
	if (r->logf) /* the log as it grows, for vramfit run --status and anyone tailing it */
		fflush(r->logf);
	if (r->sampler) {
		r->mem_now = sample_nvml(r, pgid);
	} else if (r->opts->poll_gpu) {
		fresh = r->ticks++ % 10 == 0;
		if (fresh) {
			r->mem_now = gpu_delta(r, false, NULL);
			if (r->mem_now > r->peak_dev)
				r->peak_dev = r->mem_now;
		}
	} else {
		r->mem_now = group_rss(pgid);
		if (r->mem_now > r->peak_host)
			r->peak_host = r->mem_now;
	}
	if (fresh && r->samplesf && r->mem_now > 0) /* 0 or -1: no sample (the tree is exiting) */
		fprintf(r->samplesf, "%.3f %lld\n", vf__now_s() - r->start, (long long)r->mem_now);
	emit(r, VF_TUNE_PROGRESS, false);
}

/* Before the trial: open the NVML sampler and take the idle baseline
 * (device used memory), or the nvidia-smi baseline without NVML. */
static void poll_start(struct running *r)
{
	for (int i = 0; i < VF_GPU_SAMPLE_MAX; i++)
		r->base[i] = -1;
	for (int i = 0; i < 64; i++)
		r->gpu_base[i] = -1;
	r->peak_proc = r->peak_dev = r->peak_host = -1;
	if (!r->opts->poll_gpu)
		return;
	struct vf_gpu_sample g;
	if (vf_gpu_sampler_open(&r->sampler, NULL) == VF_OK &&
	    vf_gpu_sampler_sample(r->sampler, NULL, 0, &g, NULL) == VF_OK) {
		for (size_t i = 0; i < g.count; i++)
			r->base[i] = g.dev[i].used_bytes;
		return;
	}
	vf_gpu_sampler_close(r->sampler);
	r->sampler = NULL;
	gpu_delta(r, true, r->gpu_base);
}

/* "12.345 GiB", or "unknown". */
static void gib(char out[32], int64_t bytes)
{
	if (bytes < 0)
		snprintf(out, 32, "unknown");
	else
		snprintf(out, 32, "%.3f GiB", (double)bytes / (1u << 30));
}

/* The trainer's own peak figure (its `Peak GPU memory` line or JSON-lines
 * peak_bytes, the larger); -1 when it gave none or said 0 (no measurement). */
static int64_t trainer_peak(const struct vf_trial_log *log)
{
	int64_t trainer = log->peak_bytes;
	if (log->peak_gb >= 0 && (int64_t)(log->peak_gb * (1u << 30)) > trainer)
		trainer = (int64_t)(log->peak_gb * (1u << 30));
	return trainer > 0 ? trainer : -1;
}

/* The trial's peak: the larger of the trainer's own figure and the polled
 * one, and which it was. No sample (a trainer that ended within the first
 * poll interval) leaves it unknown (-1), never 0. */
static void poll_finish(struct running *r, struct vf_trial *t)
{
	int64_t trainer = trainer_peak(&r->log);
	int64_t polled = -1;
	const char *src = "";
	if (r->peak_proc > 0)
		polled = r->peak_proc, src = "nvml-process";
	else if (r->peak_dev > 0)
		polled = r->peak_dev, src = r->sampler ? "nvml-device" : "smi-device";
	else if (r->peak_host > 0)
		polled = r->peak_host, src = "host-rss";
	t->peak_trainer_bytes = trainer;
	t->peak_polled_bytes = polled;
	t->peak_bytes = polled > trainer ? polled : trainer;
	snprintf(t->peak_source, sizeof t->peak_source, "%s",
		 t->peak_bytes < 0 ? "" : polled > trainer ? src : "trainer");
	vf_gpu_sampler_close(r->sampler);
	r->sampler = NULL;
}

/* A file in dir whose name starts with prefix, modified at or after since. */
static bool sample_exists(const char *path_prefix, time_t since)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", path_prefix);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return false;
	*slash = '\0';
	const char *base = slash + 1;
	size_t bl = strlen(base);
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool found = false;
	struct dirent *e;
	while (!found && (e = readdir(d))) {
		if (strncmp(e->d_name, base, bl) != 0 || (e->d_name[bl] != '\0' && e->d_name[bl] != '.'))
			continue;
		char p[PATH_MAX + 300];
		struct stat st;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime >= since)
			found = true;
	}
	closedir(d);
	return found;
}

/* Split a command template on blanks, then put the config path in. */
vf_status vf__build_argv(const char *tpl, const char *config, const char *gpus_s, char **store,
			    const char **argv, struct vf_error *err)
{
	char *copy = strdup(tpl);
	if (!copy)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	*store = copy;
	int n = 0;
	for (char *save = NULL, *tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (n >= MAX_ARGS - 1)
			return vf_error_set(err, VF_EUSAGE, "trainer command: more than %d words", MAX_ARGS - 1);
		if (strcmp(tok, "{config}") == 0)
			argv[n++] = config;
		else if (strcmp(tok, "{num_gpus}") == 0)
			argv[n++] = gpus_s;
		else
			argv[n++] = tok;
	}
	argv[n] = NULL;
	if (n == 0)
		return vf_error_set(err, VF_EUSAGE, "trainer command: empty");
	bool has_config = false;
	for (int i = 0; i < n; i++)
		has_config |= argv[i] == config;
	if (!has_config)
		return vf_error_set(err, VF_EUSAGE, "trainer command '%s': no {config} word", tpl);
	return VF_OK;
}

/* --- the sweep ------------------------------------------------------------ */

static vf_status sweep_load(struct sweep *s, struct vf_error *err)
{
	const char *trainer = s->o->trainer ? s->o->trainer : VF_PROFILE_DEFAULT;
	vf_status st;
	if ((st = vf_profile_part(trainer, "sweep", &s->sweep, err)) ||
	    (st = vf_profile_part(trainer, "configs", &s->configs, err)) ||
	    (st = vf_trial_patterns_load(trainer, &s->pat, err)))
		return st;
	int64_t v;
	s->steps = s->o->steps > 0 ? s->o->steps : (vf_json_get_i64(s->sweep, "steps", &v) ? (int)v : 50);
	s->max_trials = s->o->max_trials > 0 ? s->o->max_trials
					       : (vf_json_get_i64(s->sweep, "max_trials", &v) ? (int)v : 5);
	if (s->max_trials > VF_TUNE_MAX_TRIALS)
		s->max_trials = VF_TUNE_MAX_TRIALS;
	const cJSON *imp = cJSON_GetObjectItemCaseSensitive(s->sweep, "improvement");
	double d;
	s->min_pct = imp && vf_json_get_double(imp, "min_pct", &d) ? d : 2.0;
	if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(s->sweep, "changes")) ||
	    !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(s->sweep, "trial_config")))
		return vf_error_set(err, VF_ERR, "profiles/%s/sweep.json: expected \"changes\" (array) and "
				    "\"trial_config\" (object)", trainer);
	const char *cmd = s->o->trainer_cmd;
	if (!cmd) {
		const cJSON *launch = cJSON_GetObjectItemCaseSensitive(s->configs, "launch");
		cmd = vf_json_get_str(launch, s->o->num_gpus > 1 ? "multi_gpu_lora" : "single_gpu");
		if (!cmd)
			return vf_error_set(err, VF_ERR, "profiles/%s/configs.json: field launch.single_gpu: "
					    "expected the trainer's launch command", trainer);
	}
	snprintf(s->cmd, sizeof s->cmd, "%s", cmd);
	const char *td = s->o->trainer_dir;
	if (!td) {
		const cJSON *tdj = cJSON_GetObjectItemCaseSensitive(s->configs, "trainer_dir");
		const char *envname = vf_json_get_str(tdj, "env");
		td = envname ? getenv(envname) : NULL;
		if (!td || !*td)
			td = ".";
	}
	if (!realpath(td, s->trainer_dir))
		return vf_error_set(err, VF_ERR, "%s: trainer directory: %s", td, strerror(errno));
	return VF_OK;
}

/* RUN/autotune.log (the profile may rename it). */
static void autotune_path(const struct sweep *s, char *path, size_t n)
{
	const char *name = vf_json_get_str(s->sweep, "autotune_log");
	snprintf(path, n, "%s/%s", s->run, name ? name : "autotune.log");
}

/* path's name inside the run directory ("logs/trial-1.log"); NULL when
 * path is not below it. */
static const char *in_run(const struct sweep *s, const char *path)
{
	size_t n = strlen(s->run);
	return strncmp(path, s->run, n) == 0 && path[n] == '/' ? path + n + 1 : NULL;
}

/* fopen of a file of the run, never through a link (lib/base/rundir.c). */
static FILE *run_fopen(const struct sweep *s, const char *path, const char *mode, struct vf_error *err)
{
	const char *name = in_run(s, path);
	if (!name) {
		vf_error_set(err, VF_ERR, "%s: not inside the run directory %s", path, s->run);
		return NULL;
	}
	return vf_rundir_fopen(&s->rd, name, mode, err);
}

/* Save doc as a file of the run, atomically and never through a link. */
static vf_status run_save(const struct sweep *s, const struct vf_yamldoc *doc, const char *path, struct vf_error *err)
{
	const char *name = in_run(s, path);
	size_t len;
	const char *text = vf_yamldoc_text(doc, &len);
	if (!name)
		return vf_error_set(err, VF_ERR, "%s: not inside the run directory %s", path, s->run);
	return vf_rundir_write_atomic(&s->rd, name, text, len, 0644, err);
}

/* Append one line to autotune.log through the terminal filter (term.h):
 * evidence quotes the trainer's output, keys and paths come from files;
 * never through a link (run_fopen). */
static void autotune_append(struct sweep *s, const char *line)
{
	char path[PATH_MAX + 64];
	autotune_path(s, path, sizeof path);
	struct vf_buf clean;
	vf_buf_init(&clean, 0);
	if (vf_term_sanitize_buf(&clean, line, strlen(line), NULL) == VF_OK) {
		for (char *nl = strchr(clean.data, '\n'); nl; nl = strchr(nl, '\n'))
			*nl = ' '; /* one record a line */
		FILE *f = run_fopen(s, path, "a", NULL);
		if (f) {
			fprintf(f, "%s\n", clean.data);
			fclose(f);
		}
	}
	vf_buf_release(&clean);
}

/* Append a line of its own (the strategy summary) to autotune.log. */
void vf__autotune_note(struct sweep *s, const char *line)
{
	autotune_append(s, line);
}

/* Append one line to RUN/autotune.log. */
void vf__autotune_log(struct sweep *s, const struct vf_trial *t, bool resumed)
{
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	char step[32], peak[64], pred[32];
	if (t->step_seconds >= 0)
		snprintf(step, sizeof step, "%.3f s", t->step_seconds);
	else
		snprintf(step, sizeof step, "-");
	if (t->peak_bytes > 0 && t->peak_source[0])
		snprintf(peak, sizeof peak, "%.2f GiB (%s)", (double)t->peak_bytes / (1u << 30), t->peak_source);
	else if (t->peak_bytes > 0)
		snprintf(peak, sizeof peak, "%.2f GiB", (double)t->peak_bytes / (1u << 30));
	else
		snprintf(peak, sizeof peak, "-");
	if (t->predicted_peak_bytes >= 0)
		snprintf(pred, sizeof pred, "%.2f GiB", (double)t->predicted_peak_bytes / (1u << 30));
	else
		snprintf(pred, sizeof pred, "-");
	struct vf_buf line;
	vf_buf_init(&line, 0);
	if (vf_buf_printf(&line, NULL,
			  "%s  trial %d  change: %s  outcome: %s  step time: %s  peak: %s  predicted: %s  "
			  "wall: %.1f s%s  deltas: %s  evidence: %s",
			  when, t->index, t->change, vf_outcome_name(t->outcome), step, peak, pred,
			  t->wall_seconds, resumed ? " (resumed from history)" : "", t->deltas,
			  t->evidence) == VF_OK)
		autotune_append(s, line.data);
	vf_buf_release(&line);
}

/* Build trial n's config from the base text + deltas + overrides; write it
 * to overfit/; fill trial->config_hash. *doc_out: the trial config. */
static vf_status build_trial(struct sweep *s, int n, const cJSON *deltas, struct vf_trial *trial,
			     char *config_path, size_t cp_len, char *sample_prefix, size_t sp_len,
			     struct vf_yamldoc **doc_out, struct vf_error *err)
{
	*doc_out = NULL;
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(s->sweep, "trial_config");
	char nbuf[16], steps_s[16], steps6[16];
	snprintf(nbuf, sizeof nbuf, "%d", n);
	snprintf(steps_s, sizeof steps_s, "%d", s->steps);
	snprintf(steps6, sizeof steps6, "%06d", s->steps);
	const char *vars[] = {"run", s->run, "steps", steps_s, "n", nbuf, "steps:06d", steps6, NULL};
	struct vf_buf b;
	vf_buf_init(&b, 8192);
	struct vf_yamldoc *doc = NULL;
	vf_status st = vf_yamldoc_load_mem(s->base_text, s->base_len, "config.yaml", &doc, err);
	if (st)
		goto out;
	if ((st = vf_yamldoc_set_all(doc, deltas, err)))
		goto out;
	const cJSON *set = cJSON_GetObjectItemCaseSensitive(tc, "set"), *it;
	cJSON_ArrayForEach(it, set)
	{
		if (!cJSON_IsString(it))
			continue;
		if ((st = expand(it->valuestring, vars, &b, err)) ||
		    (st = vf_yamldoc_set(doc, it->string, b.data, err)))
			goto out;
	}
	const char *dir = vf_json_get_str(tc, "dir");
	const char *name = vf_json_get_str(tc, "name");
	if ((st = expand(name ? name : "trial-{n}.yaml", vars, &b, err)))
		goto out;
	snprintf(config_path, cp_len, "%s/%s/%s", s->run, dir ? dir : "overfit", b.data);
	if ((st = run_save(s, doc, config_path, err)))
		goto out;
	size_t len;
	const char *text = vf_yamldoc_text(doc, &len);
	char hashin[2048];
	snprintf(hashin, sizeof hashin, "%s\n%s\n%llu", s->cmd, s->trainer_dir,
		 (unsigned long long)s->o->mem_limit_bytes);
	vf_store_hash(text, len, hashin, trial->config_hash);
	/* where the validation sample must appear */
	const char *out_dir = NULL;
	vf_yamldoc_get_str(doc, "output_dir", &out_dir, NULL);
	const char *sample = vf_json_get_str(tc, "sample");
	const char *svars[] = {"output_dir", out_dir ? out_dir : "", "steps:06d", steps6, "steps", steps_s,
			       "run", s->run, "n", nbuf, NULL};
	if ((st = expand(sample ? sample : "{output_dir}/samples/step_{steps:06d}_0", svars, &b, err)))
		goto out;
	if (b.data[0] != '/')
		snprintf(sample_prefix, sp_len, "%s/%s", s->trainer_dir, b.data);
	else
		snprintf(sample_prefix, sp_len, "%s", b.data);
	*doc_out = doc;
	doc = NULL;
out:
	vf_yamldoc_free(doc);
	vf_buf_release(&b);
	return st;
}

/* The memory samples beside the trial's log (trial-N.log -> trial-N.samples),
 * for the run report's peak-memory timeline. A file that cannot be opened
 * only loses the timeline. */
static FILE *open_samples(const struct sweep *s, const char *logpath, const struct running *r)
{
	char path[PATH_MAX + 80];
	size_t n = strlen(logpath);
	if (n > 4 && strcmp(logpath + n - 4, ".log") == 0)
		n -= 4;
	snprintf(path, sizeof path, "%.*s.samples", (int)n, logpath);
	FILE *f = run_fopen(s, path, "w", NULL);
	if (!f)
		return NULL;
	const char *src = r->sampler ? "nvml" : r->opts->poll_gpu ? "smi-device" : "host-rss";
	fprintf(f, "# vramfit memory samples v1 source=%s\n", src);
	return f;
}

static void close_samples(struct running *r)
{
	if (r->samplesf)
		fclose(r->samplesf);
	r->samplesf = NULL;
}

/* RUN/logs/trial-N.log (the profile's "log" template). */
static void trial_log_path(const struct sweep *s, int n, char *path, size_t len)
{
	if (s->log_name) { /* vf_tune_run_one: the caller's name */
		snprintf(path, len, "%s/%s", s->run, s->log_name);
		return;
	}
	const char *logt = vf_json_get_str(s->sweep, "log");
	char nbuf[16];
	snprintf(nbuf, sizeof nbuf, "%d", n);
	const char *vars[] = {"n", nbuf, NULL};
	struct vf_buf b;
	vf_buf_init(&b, 4096);
	expand(logt ? logt : "logs/trial-{n}.log", vars, &b, NULL);
	snprintf(path, len, "%s/%s", s->run, b.data ? b.data : "trial.log");
	vf_buf_release(&b);
}

/* run_trial: the trainer's process - its command, GPUs, limits and
 * the callbacks that read its lines. */
static void trial_proc(struct sweep *s, const char **argv, struct running *r, struct vf_proc *p)
{
	p->argv = argv;
	p->cwd = s->trainer_dir;
	p->gpus = s->o->gpus;
	p->timeout_s = s->o->timeout_s;
	p->stall_s = s->o->stall_s;
	double d;
	if (p->stall_s <= 0 && vf_json_get_double(s->sweep, "stall_seconds", &d) && d > 0)
		p->stall_s = d; /* the profile's default */
	p->grace_s = s->o->grace_s;
	p->mem_limit_bytes = s->o->mem_limit_bytes;
	p->on_line = on_line;
	p->on_tick = on_tick;
	p->ctx = r;
}

/* run_trial, after the trainer ended: its end and peak memory in the
 * log, the trial classified and recorded, the sweep's averages. */
static void trial_record(struct sweep *s, struct vf_trial *trial, struct running *r, const struct vf_proc *p,
			 const char *sample_prefix, time_t started)
{
	fprintf(r->logf, "[vramfit] trainer ended: %s, exit status %d, %.1f s%s\n", vf_proc_end_name(p->end),
		p->status, p->wall_s, p->bytes_dropped ? " (over-long lines were cut)" : "");
	char gb[3][32];
	gib(gb[0], trial->peak_bytes);
	gib(gb[1], trial->peak_trainer_bytes);
	gib(gb[2], trial->peak_polled_bytes);
	fprintf(r->logf, "[vramfit] peak memory: %s from %s (trainer's own: %s, polled: %s)\n", gb[0],
		trial->peak_source[0] ? trial->peak_source : "nowhere", gb[1], gb[2]);
	fclose(r->logf);

	struct vf_trial_exit ex = {
		.status = p->status,
		.end = s->t->interrupted ? VF_PROC_INTERRUPTED : p->end,
		.expect_steps = s->steps,
		.sample = !sample_prefix ? -1 : sample_exists(sample_prefix, started - 1) ? 1 : 0,
	};
	struct vf_trial_verdict v;
	vf_trial_classify(&r->log, &ex, &v);
	trial->outcome = v.outcome;
	snprintf(trial->evidence, sizeof trial->evidence, "%s", v.evidence);
	trial->status = p->status;
	trial->steps_done = r->log.last_step;
	trial->step_seconds = vf_trial_log_step_seconds(&r->log);
	trial->wall_seconds = p->wall_s;
	vf_trial_log_release(&r->log);
	s->nrun++;
	s->avg_trial_s += (p->wall_s - s->avg_trial_s) / s->nrun;
	s->gpu_s += p->wall_s * (s->o->num_gpus > 0 ? s->o->num_gpus : 1);
}

static vf_status run_trial(struct sweep *s, struct vf_trial *trial, const char *config_path,
			   const char *sample_prefix, int remaining, struct vf_error *err)
{
	char logpath[PATH_MAX + 64];
	trial_log_path(s, trial->index, logpath, sizeof logpath);

	struct running r;
	memset(&r, 0, sizeof r);
	vf_trial_log_init(&r.log, s->pat);
	r.opts = s->o;
	r.trial = trial;
	r.max_trials = s->max_trials;
	r.start = vf__now_s();
	r.mem_now = -1;
	r.eta_rest = s->avg_trial_s > 0 ? s->avg_trial_s * remaining : 0;
	r.logf = run_fopen(s, logpath, "w", err);
	if (!r.logf) {
		vf_trial_log_release(&r.log);
		return err ? err->code : VF_ERR;
	}
	emit(&r, VF_TUNE_TRIAL_START, false);
	poll_start(&r);
	r.samplesf = open_samples(s, logpath, &r);

	char *argstore = NULL, gpus_s[16];
	const char *argv[MAX_ARGS];
	snprintf(gpus_s, sizeof gpus_s, "%d", s->o->num_gpus > 0 ? s->o->num_gpus : 1);
	vf_status st = vf__build_argv(s->cmd, config_path, gpus_s, &argstore, argv, err);
	if (st) {
		free(argstore);
		fclose(r.logf);
		close_samples(&r);
		poll_finish(&r, trial);
		vf_trial_log_release(&r.log);
		return st;
	}
	struct vf_proc p;
	vf_proc_init(&p);
	trial_proc(s, argv, &r, &p);
	time_t started = time(NULL);
	s->t->current = &p;
	if (s->t->interrupted)
		p.interrupt = 1;
	st = vf_proc_run(&p, err);
	s->t->current = NULL;
	free(argstore);
	vf_trial_log_finish(&r.log);
	close_samples(&r);
	poll_finish(&r, trial);
	if (st) {
		fclose(r.logf);
		vf_trial_log_release(&r.log);
		return st;
	}
	trial_record(s, trial, &r, &p, sample_prefix, started);
	return VF_OK;
}

void vf__end_event(struct sweep *s, struct vf_trial *t, bool resumed)
{
	if (!s->o->on_event)
		return;
	struct vf_tune_event ev = {.kind = VF_TUNE_TRIAL_END, .trial = t, .max_trials = s->max_trials,
				   .step = t->steps_done, .total_steps = s->steps,
				   .step_seconds = t->step_seconds, .median_seconds = t->step_seconds,
				   .mem_bytes = t->peak_bytes, .elapsed_s = t->wall_seconds,
				   .sweep_eta_s = -1, .resumed = resumed};
	s->o->on_event(s->o->event_ctx, &ev);
}

vf_status vf__record(struct sweep *s, struct vf_trial *t, bool resumed, struct vf_error *err)
{
	if (!resumed) {
		struct vf_trial rec = *t;
		if (s->o->host_memory && rec.outcome != VF_OUTCOME_SKIPPED)
			rec.predicted_peak_bytes = -1; /* a GPU's prediction, a host measurement */
		vf_status st = vf_store_put(s->store, &s->sctx, &rec, err);
		if (st)
			return st;
	}
	vf__autotune_log(s, t, resumed);
	vf__end_event(s, t, resumed);
	return VF_OK;
}

/* The self-check before launch: a failing config is a config-error trial
 * (logged, not recorded: re-checked next time). */
static vf_status self_check(struct sweep *s, struct vf_trial *t, const struct vf_yamldoc *doc,
			    const char *config_path, struct vf_error *err)
{
	struct vf_check chk;
	vf_check_init(&chk);
	const char *prof = s->o->trainer ? s->o->trainer : VF_PROFILE_DEFAULT;
	vf_status st = vf_check_config(doc, prof, s->trainer_dir, &chk, err);
	if (st == VF_OK && t->index == 1) /* the trainer's own validation, once, before trial 1 */
		st = vf_check_trainer_validate(config_path, doc, prof, s->trainer_dir, &chk, err);
	for (size_t i = 0; st == VF_OK && i < chk.n; i++) {
		const struct vf_check_item *it = &chk.items[i];
		if (it->level != VF_CHECK_FAIL)
			continue;
		t->outcome = VF_OUTCOME_CONFIG_ERROR;
		snprintf(t->evidence, sizeof t->evidence, "self-check before launch: %s: %s%s", it->key, it->rule,
			 chk.failures > 1 ? " (and more: vramfit check --config overfit/trial-N.yaml)" : "");
		break;
	}
	vf_check_release(&chk);
	if (st == VF_OK && t->outcome == VF_OUTCOME_CONFIG_ERROR) {
		vf__autotune_log(s, t, false);
		vf__end_event(s, t, false);
	}
	return st;
}

/* The estimator's prediction; true when it says the trial cannot fit. */
static bool predicted_oom(struct sweep *s, struct vf_trial *t, const struct vf_yamldoc *doc)
{
	if (s->o->predict) {
		int64_t bytes = -1;
		struct vf_error perr = {0};
		if (s->o->predict(s->o->predict_ctx, doc, &bytes, &perr) == VF_OK && bytes >= 0)
			t->predicted_peak_bytes = bytes;
		double sec = -1;
		if (s->o->predict_step && s->o->predict_step(s->o->predict_ctx, doc, &sec, &perr) == VF_OK && sec > 0)
			t->predicted_step_seconds = sec;
	}
	double margin = 5.0, d;
	if (vf_json_get_double(s->sweep, "skip_margin_pct", &d))
		margin = d;
	if (s->o->no_skip || t->predicted_peak_bytes < 0 || s->o->card_bytes <= 0 ||
	    (double)t->predicted_peak_bytes <= (double)s->o->card_bytes * (1 + margin / 100))
		return false;
	t->outcome = VF_OUTCOME_SKIPPED;
	snprintf(t->evidence, sizeof t->evidence, "predicted OOM: %.1f GiB > %.1f GiB",
		 (double)t->predicted_peak_bytes / (1u << 30), (double)s->o->card_bytes / (1u << 30));
	return true;
}

/* The history's record of this config, taken over as trial t. */
static vf_status from_history(struct sweep *s, struct vf_trial *t, bool *found, struct vf_error *err)
{
	struct vf_trial old;
	vf_status st = vf_store_find(s->store, t->config_hash, &old, found, err);
	if (st || !*found)
		return st;
	if (old.outcome == VF_OUTCOME_SKIPPED && s->o->no_skip) {
		*found = false; /* skipped on a prediction; --no-skip now asks to run it */
		return VF_OK;
	}
	int idx = t->index;
	char change[sizeof t->change];
	snprintf(change, sizeof change, "%s", t->change);
	*t = old;
	t->index = idx;
	snprintf(t->change, sizeof t->change, "%s", change);
	return vf__record(s, t, true, err);
}

vf_status vf__trial_prepare(struct sweep *s, struct vf_trial *t, const cJSON *deltas,
			    const cJSON *change_set, const struct vf_yamldoc *best_doc,
			    struct vf__trial_files *files, bool *must_run, struct vf_yamldoc **doc_out,
			    struct vf_error *err)
{
	struct vf_yamldoc *doc = NULL;
	*doc_out = NULL;
	*must_run = false;
	char *dj = cJSON_PrintUnformatted(deltas);
	snprintf(t->deltas, sizeof t->deltas, "%s", dj ? dj : "{}");
	free(dj);
	if (change_set && best_doc && already_in_effect(best_doc, change_set)) {
		t->outcome = VF_OUTCOME_NOOP;
		snprintf(t->evidence, sizeof t->evidence, "already in effect in the current best config");
		snprintf(t->config_hash, sizeof t->config_hash, "noop-%d", t->index);
		vf__autotune_log(s, t, false);
		vf__end_event(s, t, false);
		return VF_OK;
	}
	vf_status st = build_trial(s, t->index, deltas, t, files->config, sizeof files->config,
				   files->sample_prefix, sizeof files->sample_prefix, &doc, err);
	if (st)
		return st;
	trial_log_path(s, t->index, files->log, sizeof files->log);
	bool found = false;
	if ((st = from_history(s, t, &found, err)) || found)
		goto out;
	if (s->o->self_check && ((st = self_check(s, t, doc, files->config, err)) || t->outcome == VF_OUTCOME_CONFIG_ERROR))
		goto out;
	if (predicted_oom(s, t, doc)) {
		st = vf__record(s, t, false, err);
		goto out;
	}
	*must_run = true;
out:
	if (st == VF_OK)
		*doc_out = doc;
	else
		vf_yamldoc_free(doc);
	return st;
}

void vf__trial_finish(struct sweep *s, struct vf_trial *t, const struct vf__trial_files *files,
		      const struct vf_tune_task *task)
{
	struct vf_trial_log log;
	vf_trial_log_init(&log, s->pat);
	vf_trial_log_file(&log, files->log, NULL); /* a missing log reads as empty */
	struct vf_trial_exit ex = {
		.status = task->status,
		.end = task->end,
		.expect_steps = s->steps,
		.sample = sample_exists(files->sample_prefix, task->started > 0 ? (time_t)task->started - 1 : 0),
	};
	struct vf_trial_verdict v;
	vf_trial_classify(&log, &ex, &v);
	t->outcome = v.outcome;
	snprintf(t->evidence, sizeof t->evidence, "%s%s%s", v.evidence, task->note[0] ? "; " : "", task->note);
	t->status = task->status;
	t->steps_done = log.last_step;
	t->step_seconds = vf_trial_log_step_seconds(&log);
	t->wall_seconds = task->wall_s;
	int64_t trainer = trainer_peak(&log);
	t->peak_trainer_bytes = t->peak_bytes = trainer;
	snprintf(t->peak_source, sizeof t->peak_source, "%s", trainer >= 0 ? "trainer" : "");
	vf_trial_log_release(&log);
	if (task->end != VF_PROC_INTERRUPTED) {
		s->nrun++;
		s->gpu_s += task->wall_s * (s->o->num_gpus > 0 ? s->o->num_gpus : 1);
	}
}

/* Evaluate one trial here and now: no-op / resumed / skipped / run. */
static vf_status do_trial(struct sweep *s, struct vf_trial *t, const cJSON *deltas,
			  const cJSON *change_set, const struct vf_yamldoc *best_doc, int remaining,
			  struct vf_yamldoc **doc_out, struct vf_error *err)
{
	struct vf__trial_files f;
	bool must_run;
	vf_status st = vf__trial_prepare(s, t, deltas, change_set, best_doc, &f, &must_run, doc_out, err);
	if (st || !must_run)
		return st;
	if ((st = run_trial(s, t, f.config, f.sample_prefix, remaining, err)))
		goto fail;
	if (t->outcome == VF_OUTCOME_INTERRUPTED) {
		vf__autotune_log(s, t, false);
		return VF_OK;
	}
	if ((st = vf__record(s, t, false, err)) == VF_OK)
		return VF_OK;
fail:
	vf_yamldoc_free(*doc_out);
	*doc_out = NULL;
	return st;
}

bool vf__flag_given(const struct vf_tune_opts *o, const char *flag)
{
	if (!flag)
		return true;
	if (strcmp(flag, "sweep-batch") == 0)
		return o->sweep_batch;
	if (strcmp(flag, "try-no-ckpt") == 0)
		return o->try_no_ckpt;
	return false;
}

bool vf__tier_allowed(const cJSON *change, const char *tier)
{
	const cJSON *tiers = cJSON_GetObjectItemCaseSensitive(change, "tiers"), *it;
	if (!tiers)
		return true;
	cJSON_ArrayForEach(it, tiers)
		if (cJSON_IsString(it) && tier && strcmp(it->valuestring, tier) == 0)
			return true;
	return false;
}

/* The batch ladder: batch_size -> to, accumulation scaled to keep the
 * product. Fills set (key -> text) or explains why it cannot. */
static bool batch_change(const cJSON *batch, const struct vf_yamldoc *doc, cJSON *set, char *why,
			 size_t wl)
{
	const char *bk = vf_json_get_str(batch, "key");
	const char *gk = vf_json_get_str(batch, "keep_product_with");
	int64_t to, bs = 1, ga = 1;
	if (!bk || !gk || !vf_json_get_i64(batch, "to", &to) || to < 1) {
		snprintf(why, wl, "sweep.json: batch change needs key, to, keep_product_with");
		return false;
	}
	vf_yamldoc_get_int(doc, bk, &bs, NULL);
	vf_yamldoc_get_int(doc, gk, &ga, NULL);
	int64_t eff = bs * ga;
	char v[32];
	snprintf(v, sizeof v, "%lld", (long long)to);
	if (to == bs) {
		cJSON_AddStringToObject(set, bk, v);
		return true;
	}
	if (eff % to != 0) {
		snprintf(why, wl, "the effective batch %lld (%s %lld x %s %lld) cannot be kept at batch size %lld",
			 (long long)eff, bk, (long long)bs, gk, (long long)ga, (long long)to);
		return false;
	}
	cJSON_AddStringToObject(set, bk, v);
	snprintf(v, sizeof v, "%lld", (long long)(eff / to));
	cJSON_AddStringToObject(set, gk, v);
	return true;
}

bool vf__change_set(const cJSON *c, const struct vf_yamldoc *best_doc, cJSON *set, char *why, size_t wl)
{
	const cJSON *batch = cJSON_GetObjectItemCaseSensitive(c, "batch");
	if (batch)
		return batch_change(batch, best_doc, set, why, wl);
	const cJSON *cs = cJSON_GetObjectItemCaseSensitive(c, "set"), *kv;
	cJSON_ArrayForEach(kv, cs)
		if (cJSON_IsString(kv))
			cJSON_AddStringToObject(set, kv->string, kv->valuestring);
	return true;
}

cJSON *vf__candidate(const cJSON *best, const cJSON *set)
{
	cJSON *cand = cJSON_Duplicate(best, 1);
	const cJSON *kv;
	cJSON_ArrayForEach(kv, set)
	{
		cJSON_DeleteItemFromObjectCaseSensitive(cand, kv->string);
		cJSON_AddStringToObject(cand, kv->string, kv->valuestring);
	}
	return cand;
}

static void sweep_release(struct sweep *s)
{
	cJSON_Delete(s->sweep);
	cJSON_Delete(s->configs);
	vf_trial_patterns_free(s->pat);
	vf_store_close(s->store);
	free(s->base_text);
	vf_rundir_close(&s->rd);
}

/* --- the phases of vf_tune_run -------------------------------------------- */

/* Refuse flags the profile does not allow on this tier. */
static vf_status check_flags(struct sweep *s, struct vf_error *err)
{
	const cJSON *changes = cJSON_GetObjectItemCaseSensitive(s->sweep, "changes"), *c;
	cJSON_ArrayForEach(c, changes)
	{
		const char *flag = vf_json_get_str(c, "requires_flag");
		if (flag && vf__flag_given(s->o, flag) && !vf__tier_allowed(c, s->o->tier))
			return vf_error_set(err, VF_EUSAGE, "--%s is only allowed on the %s (this run: %s)", flag,
					    cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "tiers"), 0)->valuestring,
					    s->o->tier ? s->o->tier : "tier unknown; pass --tier");
	}
	return VF_OK;
}

/* config.yaml as it is now: its text, hash and planned steps. */
static vf_status read_base(struct sweep *s, struct vf_error *err)
{
	snprintf(s->config_path, sizeof s->config_path, "%s/config.yaml", s->run);
	struct vf_buf b;
	vf_buf_init(&b, VF_YAMLDOC_MAX_BYTES);
	vf_status st = vf_buf_read_file(&b, s->config_path, VF_YAMLDOC_MAX_BYTES, err);
	if (st) {
		vf_buf_release(&b);
		return st;
	}
	s->base_text = vf_buf_detach(&b, &s->base_len);
	vf_store_hash(s->base_text, s->base_len, "", s->base_text_hash);
	struct vf_yamldoc *d = NULL;
	if ((st = vf_yamldoc_load_mem(s->base_text, s->base_len, s->config_path, &d, err)))
		return st;
	int64_t ps = 0;
	if (vf_yamldoc_get_int(d, "optimization.steps", &ps, NULL) == VF_OK)
		s->res->planned_steps = ps;
	vf_yamldoc_free(d);
	return VF_OK;
}

/* The one-sample dataset and the directories trials write to. */
static vf_status prepare_dirs(struct sweep *s, struct vf_error *err)
{
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(s->sweep, "trial_config");
	const char *dr = vf_json_get_str(tc, "data_root");
	if (dr) {
		struct vf_buf e;
		vf_buf_init(&e, PATH_MAX);
		const char *vars[] = {"run", s->run, NULL};
		expand(dr, vars, &e, NULL);
		struct stat sb;
		bool ok = e.data && stat(e.data, &sb) == 0 && S_ISDIR(sb.st_mode);
		vf_status st = VF_OK;
		if (!ok)
			st = vf_error_set(err, VF_ERR,
					  "%s: missing: the sanity run trains on one preprocessed sample there "
					  "(TRAINER.md section 5); preprocess one sample into it first",
					  e.data ? e.data : dr);
		vf_buf_release(&e);
		if (st)
			return st;
	}
	const char *od = vf_json_get_str(tc, "dir");
	vf_status st = vf_rundir_mkdir(&s->rd, "logs", err);
	return st ? st : vf_rundir_mkdir(&s->rd, od ? od : "overfit", err);
}

/* Everything before the first trial. */
static vf_status sweep_open(struct sweep *s, struct vf_error *err)
{
	const struct vf_tune_opts *o = s->o;
	/* RUN as named must be a real directory, not a link; then its
	 * absolute path, and every file in it opened relative to it */
	vf_status st = o->run_dir ? vf_rundir_open(&s->rd, o->run_dir, 0, err)
				  : vf_error_set(err, VF_ERR, "(none): no such run directory");
	if (st)
		return st;
	vf_rundir_close(&s->rd);
	if (!realpath(o->run_dir, s->run))
		return vf_error_set(err, VF_ERR, "%s: no such run directory", o->run_dir);
	if ((st = vf_rundir_open(&s->rd, s->run, 0, err)))
		return st;
	/* the history before the run's directories: one that is refused (not
	 * a vramfit history) leaves the run as it was */
	if ((st = sweep_load(s, err)) || (st = check_flags(s, err)) || (st = read_base(s, err)) ||
	    (st = vf_store_open(o->store_path, &s->store, err)) || (st = prepare_dirs(s, err)))
		return st;
	s->sctx.run_dir = s->run;
	s->sctx.trainer = o->trainer ? o->trainer : VF_PROFILE_DEFAULT;
	s->sctx.gpu = o->gpu_label ? o->gpu_label : "unknown";
	s->sctx.tier = o->tier;
	if (o->fresh && (st = vf_store_forget_run(s->store, s->run, err)))
		return st;
	return VF_OK;
}

/* Which later changes a change needs (requires_adopted) and flags; false
 * when c is not tried in this sweep (deferred ones are listed). */
static bool change_eligible(struct sweep *s, const cJSON *c, const cJSON *adopted)
{
	const char *name = vf_json_get_str(c, "name");
	const char *flag = vf_json_get_str(c, "requires_flag");
	const char *need = vf_json_get_str(c, "requires_adopted");
	struct vf_tune_result *res = s->res;
	if (!vf__flag_given(s->o, flag)) {
		size_t l = strlen(res->deferred);
		snprintf(res->deferred + l, sizeof res->deferred - l, "%s%s (--%s)", l ? ", " : "",
			 name ? name : "?", flag);
		return false;
	}
	if (!vf__tier_allowed(c, s->o->tier))
		return false;
	if (!need)
		return true;
	const cJSON *a;
	cJSON_ArrayForEach(a, adopted)
		if (strcmp(a->valuestring, need) == 0)
			return true;
	return false;
}

/* The sequential sweep's state: the best config so far. */
struct seq {
	cJSON *best;
	struct vf_yamldoc *best_doc;
	double best_time;
	cJSON *adopted;
	int n;
};

/* One change of the sequential sweep: run best + change, adopt it when
 * faster. *go_on: false when the change's rule says stop. */
static vf_status seq_change(struct sweep *s, struct seq *q, const cJSON *c, bool *go_on, struct vf_error *err)
{
	struct vf_tune_result *res = s->res;
	const char *name = vf_json_get_str(c, "name"), *id = vf_json_get_str(c, "id");
	struct vf_trial *tr = &res->trials[q->n];
	vf_trial_init(tr);
	tr->index = q->n + 1;
	snprintf(tr->change, sizeof tr->change, "%s", name ? name : "?");
	cJSON *set = cJSON_CreateObject();
	char why[256] = "";
	bool possible = vf__change_set(c, q->best_doc, set, why, sizeof why);
	cJSON *cand = vf__candidate(q->best, set);
	struct vf_yamldoc *doc = NULL;
	vf_status st = VF_OK;
	if (!possible) {
		tr->outcome = VF_OUTCOME_SKIPPED;
		snprintf(tr->evidence, sizeof tr->evidence, "%s", why);
		char *dj = cJSON_PrintUnformatted(cand);
		snprintf(tr->deltas, sizeof tr->deltas, "%s", dj ? dj : "{}");
		free(dj);
		vf__autotune_log(s, tr, false);
		vf__end_event(s, tr, false);
	} else {
		st = do_trial(s, tr, cand, set, q->best_doc, s->max_trials - q->n - 1, &doc, err);
	}
	cJSON_Delete(set);
	*go_on = true;
	if (st == VF_OK)
		res->ntrials = ++q->n;
	bool better = st == VF_OK && tr->outcome == VF_OUTCOME_OK && q->best_time > 0 && tr->step_seconds > 0 &&
		      tr->step_seconds <= q->best_time * (1 - s->min_pct / 100);
	if (better) {
		cJSON_Delete(q->best);
		q->best = cand;
		vf_yamldoc_free(q->best_doc);
		q->best_doc = doc;
		q->best_time = tr->step_seconds;
		res->winner = q->n - 1;
		if (id)
			cJSON_AddItemToArray(q->adopted, cJSON_CreateString(id));
		return VF_OK;
	}
	cJSON_Delete(cand);
	vf_yamldoc_free(doc);
	if (st || tr->outcome == VF_OUTCOME_NOOP)
		return st;
	if (tr->outcome == VF_OUTCOME_INTERRUPTED) {
		res->interrupted = true;
		return vf_error_set(err, VF_ERR, "interrupted during trial %d; config.yaml untouched; "
				    "finished trials are recorded and the next tune resumes", tr->index);
	}
	const char *rule = vf_json_get_str(c, tr->outcome != VF_OUTCOME_OK ? "on_failure" : "on_no_improvement");
	*go_on = rule && strcmp(rule, "continue") == 0;
	return VF_OK;
}

/* ---- the order of the changes: predicted gain (issue 29) ---------------- */

struct ranked {
	const cJSON *c;
	double gain;   /* predicted step-time gain over the baseline, fraction */
	bool oom;      /* predicted out of memory by the skip margin */
};

/* The prediction of best + c; false when there is none. */
static bool predict_change(struct sweep *s, const struct vf_yamldoc *best, const cJSON *c, double base,
			   struct ranked *r)
{
	cJSON *set = cJSON_CreateObject();
	char why[256];
	struct vf_yamldoc *d = NULL;
	size_t len = 0;
	const char *text = vf_yamldoc_text(best, &len);
	r->c = c;
	r->gain = 0;
	r->oom = false;
	if (!vf__change_set(c, best, set, why, sizeof why)) {
		cJSON_Delete(set);
		return true; /* cannot be made: the sweep says so in its place */
	}
	bool ok = vf_yamldoc_load_mem(text, len, "trial", &d, NULL) == VF_OK && vf_yamldoc_set_all(d, set, NULL) == VF_OK;
	double step = -1;
	int64_t bytes = -1;
	ok = ok && s->o->predict_step(s->o->predict_ctx, d, &step, NULL) == VF_OK && step > 0 &&
	     s->o->predict(s->o->predict_ctx, d, &bytes, NULL) == VF_OK;
	double margin = 5.0, m;
	if (vf_json_get_double(s->sweep, "skip_margin_pct", &m))
		margin = m;
	r->gain = ok ? (base - step) / base : 0;
	r->oom = ok && s->o->card_bytes > 0 && (double)bytes > (double)s->o->card_bytes * (1 + margin / 100);
	vf_yamldoc_free(d);
	cJSON_Delete(set);
	return ok;
}

/* The changes in the order tried: by predicted gain when every one has a
 * prediction, else the profile's. Caller owns (references). */
static cJSON *changes_order(struct sweep *s, const struct vf_yamldoc *best)
{
	const cJSON *all = cJSON_GetObjectItemCaseSensitive(s->sweep, "changes"), *c;
	cJSON *out = cJSON_CreateArray();
	struct ranked r[VF_TUNE_MAX_TRIALS * 2];
	int n = 0;
	double base = -1;
	bool pred = s->o->predict && s->o->predict_step && best &&
		    s->o->predict_step(s->o->predict_ctx, best, &base, NULL) == VF_OK && base > 0;
	cJSON_ArrayForEach(c, all)
	{
		if (n >= (int)(sizeof r / sizeof r[0])) {
			pred = false; /* more changes than ranked: the profile's order for all */
			break;
		}
		r[n] = (struct ranked){.c = c};
		if (pred && !vf_json_get_str(c, "requires_adopted") && !predict_change(s, best, c, base, &r[n]))
			pred = false;
		n++;
	}
	if (!pred) { /* every change, in the profile's order */
		cJSON_ArrayForEach(c, all) cJSON_AddItemToArray(out, cJSON_CreateObjectReference(c->child));
		return out;
	}
	/* stable: those predicted out of memory first, in the profile's order
	 * (skipped without GPU time, their stop rules as the profile has them),
	 * then the rest, larger predicted gain first */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0; j--) {
			struct ranked *a = &r[j - 1], *b = &r[j];
			bool swap = (!a->oom && b->oom) || (!a->oom && !b->oom && b->gain > a->gain);
			if (!swap || vf_json_get_str(b->c, "requires_adopted") || vf_json_get_str(a->c, "requires_adopted"))
				break;
			struct ranked t = *a;
			*a = *b;
			*b = t;
		}
	char line[512] = "";
	for (int i = 0; i < n; i++) {
		cJSON_AddItemToArray(out, cJSON_CreateObjectReference(r[i].c->child));
		size_t l = strlen(line);
		if (l < sizeof line - 1)
			snprintf(line + l, sizeof line - l, "%s%s", l ? ", " : "order by predicted gain: ",
				 vf_json_get_str(r[i].c, "name") ? vf_json_get_str(r[i].c, "name") : "?");
	}
	vf__autotune_note(s, line);
	return out;
}

/* The sequential sweep: the baseline, then best + one change at a time. */
static vf_status sweep_sequential(struct sweep *s, cJSON **best_out, struct vf_error *err)
{
	struct vf_tune_result *res = s->res;
	struct seq q = {.best = cJSON_CreateObject(), .best_time = -1, .adopted = cJSON_CreateArray()};
	struct vf_trial *tr = &res->trials[0];
	vf_trial_init(tr);
	tr->index = 1;
	snprintf(tr->change, sizeof tr->change, "baseline");
	vf_status st = do_trial(s, tr, q.best, NULL, NULL, s->max_trials - 1, &q.best_doc, err);
	if (st)
		goto out;
	res->ntrials = q.n = 1;
	if (tr->outcome == VF_OUTCOME_INTERRUPTED) {
		res->interrupted = true;
		st = vf_error_set(err, VF_ERR, "interrupted during trial 1; config.yaml untouched");
		goto out;
	}
	if (tr->outcome != VF_OUTCOME_OK) {
		res->baseline_failed = true;
		goto out;
	}
	res->winner = 0;
	q.best_time = tr->step_seconds;
	const cJSON *c;
	cJSON *order = changes_order(s, q.best_doc);
	cJSON_ArrayForEach(c, order)
	{
		if (!change_eligible(s, c, q.adopted))
			continue;
		if (q.n >= s->max_trials || s->t->interrupted)
			break;
		bool go_on;
		if ((st = seq_change(s, &q, c, &go_on, err)) || !go_on)
			break;
	}
	cJSON_Delete(order);
out:
	*best_out = q.best;
	cJSON_Delete(q.adopted);
	vf_yamldoc_free(q.best_doc);
	return st;
}

/* Patch the winner's deltas into config.yaml, if it is unchanged. */
static vf_status patch_winner(struct sweep *s, const cJSON *best, struct vf_error *err)
{
	struct vf_tune_result *res = s->res;
	char *dj = cJSON_PrintUnformatted(best);
	snprintf(res->winner_deltas, sizeof res->winner_deltas, "%s", dj ? dj : "{}");
	free(dj);
	if (cJSON_GetArraySize(best) == 0)
		return VF_OK;
	struct vf_buf now;
	vf_buf_init(&now, VF_YAMLDOC_MAX_BYTES);
	char h[17] = "";
	if (vf_buf_read_file(&now, s->config_path, VF_YAMLDOC_MAX_BYTES, NULL) == VF_OK)
		vf_store_hash(now.data, now.len, "", h);
	vf_buf_release(&now);
	if (strcmp(h, s->base_text_hash) != 0) {
		snprintf(res->note, sizeof res->note,
			 "config.yaml changed during the sweep: the winner's deltas were not applied: %s",
			 res->winner_deltas);
		return VF_OK;
	}
	struct vf_yamldoc *d = NULL;
	vf_status st;
	if ((st = vf_yamldoc_load_mem(s->base_text, s->base_len, s->config_path, &d, err)) == VF_OK &&
	    (st = vf_yamldoc_set_all(d, best, err)) == VF_OK && (st = run_save(s, d, s->config_path, err)) == VF_OK)
		res->patched = true;
	vf_yamldoc_free(d);
	return st;
}

/* The strategy's cost, last line of the sweep in autotune.log. */
static void strategy_note(struct sweep *s, const struct vf_tune_backend *be)
{
	char line[512], when[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	int gpus = s->o->num_gpus > 0 ? s->o->num_gpus : 1;
	if (be)
		snprintf(line, sizeof line, "%s  strategy: parallel (%s, %d slots, %d GPU%s per trial)", when,
			 be->name, be->slots, gpus, gpus > 1 ? "s" : "");
	else
		snprintf(line, sizeof line, "%s  strategy: sequential (local, %d GPU%s per trial)", when, gpus,
			 gpus > 1 ? "s" : "");
	size_t l = strlen(line);
	snprintf(line + l, sizeof line - l, "  trials run: %d  wall: %.1f s  GPU time: %.1f GPU-s%s", s->nrun,
		 vf__now_s() - s->started, s->gpu_s, s->res->interrupted ? "  (interrupted)" : "");
	vf__autotune_note(s, line);
}

vf_status vf_tune_run(struct vf_tune *t, const struct vf_tune_opts *o, struct vf_tune_result *res,
		      struct vf_error *err)
{
	memset(res, 0, sizeof *res);
	res->winner = -1;
	snprintf(res->winner_deltas, sizeof res->winner_deltas, "{}");
	struct sweep s;
	memset(&s, 0, sizeof s);
	s.rd.fd = -1;
	s.t = t;
	s.o = o;
	s.res = res;
	s.started = vf__now_s();
	cJSON *best = NULL;
	struct vf_tune_backend *be = o->backend;
	if (!be && o->parallel > 1)
		be = vf_tune_backend_local(o->parallel, o->gpu_sets);
	vf_status st = sweep_open(&s, err);
	if (st == VF_OK) {
		t->backend = be;
		st = be ? vf__sweep_parallel(&s, be, &best, err) : sweep_sequential(&s, &best, err);
		t->backend = NULL;
		if (st == VF_OK && t->interrupted) { /* between trials: same as during one */
			res->interrupted = true;
			st = vf_error_set(err, VF_ERR, "interrupted after trial %d; config.yaml untouched; "
					  "finished trials are recorded and the next tune resumes", res->ntrials);
		}
		if (s.nrun > 0 || res->interrupted)
			strategy_note(&s, be);
	}
	if (st == VF_OK && !res->baseline_failed && best)
		st = patch_winner(&s, best, err);
	cJSON_Delete(best);
	if (be != o->backend)
		vf_tune_backend_free(be);
	sweep_release(&s);
	return st;
}

/* One supervised run of the trainer outside a sweep (see tune.h): the
 * sweep's own trial runner on a sweep that has only its profile, run
 * directory and trainer command loaded. */
vf_status vf_tune_run_one(struct vf_tune *t, const struct vf_tune_opts *o, const char *config_path,
			  const char *log_name, int expect_steps, struct vf_trial *trial, struct vf_error *err)
{
	struct vf_tune_result *res = calloc(1, sizeof *res);
	if (!res)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	struct sweep s;
	memset(&s, 0, sizeof s);
	s.rd.fd = -1;
	s.t = t;
	s.o = o;
	s.res = res;
	s.log_name = log_name;
	s.started = vf__now_s();
	vf_status st = o->run_dir ? vf_rundir_open(&s.rd, o->run_dir, 0, err)
				  : vf_error_set(err, VF_ERR, "(none): no such run directory");
	vf_rundir_close(&s.rd);
	if (st == VF_OK && !realpath(o->run_dir, s.run))
		st = vf_error_set(err, VF_ERR, "%s: no such run directory", o->run_dir);
	if (st == VF_OK && !(st = vf_rundir_open(&s.rd, s.run, 0, err)) && !(st = sweep_load(&s, err)) &&
	    !(st = vf_rundir_mkdir(&s.rd, "logs", err))) {
		s.steps = expect_steps;
		s.max_trials = 1;
		st = run_trial(&s, trial, config_path, NULL, 0, err);
	}
	sweep_release(&s);
	free(res);
	return st;
}
