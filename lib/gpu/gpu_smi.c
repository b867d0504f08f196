/* gpu_smi.c - the nvidia-smi fallback probe and CUDA_VISIBLE_DEVICES.
 *
 * Runs (or $VRAMFIT_NVIDIA_SMI instead of nvidia-smi)
 *   nvidia-smi --query-gpu=index,uuid,name,memory.total,memory.used,
 *     memory.free,compute_cap,driver_version --format=csv,noheader,nounits
 * in its own process group with a timeout ($VRAMFIT_SMI_TIMEOUT seconds,
 * default 10) and reads at most VF_SMI_MAX_OUTPUT bytes of its output; on
 * timeout or overflow the whole group is killed. The subprocess is kept
 * simple on purpose: one pipe, poll, kill; lib/base/proc.c is the general one.
 * When no file of that name exists where execvp would look for it (the
 * common case on a machine without the driver), nothing is forked: the
 * answer is execvp's ENOENT, found with a stat per PATH entry instead of a
 * process (about half a millisecond, a tenth of a whole-catalog estimate). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu/gpu_probe.h"
#include "vramfit/base/buf.h"

#define QUERY "index,uuid,name,memory.total,memory.used,memory.free,compute_cap,driver_version"
#define NFIELDS 8

/* --- parsing ------------------------------------------------------------- */

/* Known failure texts of nvidia-smi and what they mean. */
static const struct {
	const char *text;
	vf_status code;
	const char *msg;
} failures[] = {
	{"couldn't communicate with the NVIDIA driver", VF_ENOTFOUND,
	 "nvidia-smi could not communicate with the NVIDIA driver: the driver is not loaded "
	 "(or no NVIDIA GPU is attached)"},
	{"No devices were found", VF_ENOTFOUND, "nvidia-smi found no NVIDIA GPU"},
	{"Driver/library version mismatch", VF_ERR,
	 "nvidia-smi: NVIDIA driver/library version mismatch: the loaded kernel module and the "
	 "user-space driver differ (usually after a driver upgrade); reboot or reload the nvidia "
	 "kernel module"},
	{"Insufficient Permissions", VF_ERR,
	 "nvidia-smi: insufficient permissions to query the GPUs (check access to /dev/nvidia*)"},
};

/* Copy at most max printable bytes of the first non-empty line of text. */
static void first_line(const char *text, size_t len, char *out, size_t n)
{
	size_t i = 0, o = 0;
	while (i < len && (text[i] == '\n' || text[i] == '\r' || text[i] == ' '))
		i++;
	for (; i < len && text[i] != '\n' && o + 1 < n && o < 160; i++)
		out[o++] = (text[i] >= 0x20 && text[i] < 0x7f) ? text[i] : '?';
	out[o] = '\0';
}

static bool unknown_field(const char *f)
{
	/* "[N/A]", "[Not Supported]", "[Unknown Error]", "[Insufficient Permissions]", "N/A" */
	return f[0] == '[' || strcmp(f, "N/A") == 0;
}

static bool printable(const char *f)
{
	for (; *f; f++)
		if ((unsigned char)*f < 0x20 || (unsigned char)*f >= 0x7f)
			return false;
	return true;
}

/* A whole number of MiB; unknown markers give -1. */
static bool parse_mib(const char *f, int64_t *out)
{
	if (unknown_field(f)) {
		*out = -1;
		return true;
	}
	if (!*f || strlen(f) > 10)
		return false;
	int64_t v = 0;
	for (const char *p = f; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return false;
		v = v * 10 + (*p - '0');
	}
	*out = v;
	return true;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t l = strlen(s);
	while (l && (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\r'))
		s[--l] = '\0';
	return s;
}

static vf_status parse_line(char *line, int lineno, struct vf_gpu_set *s, struct vf_error *err)
{
	static const char *const names[NFIELDS] = {"index", "uuid", "name", "memory.total",
						   "memory.used", "memory.free", "compute_cap",
						   "driver_version"};
	char *f[NFIELDS];
	int n = 0;
	for (char *p = line;; n++) {
		char *comma = strchr(p, ',');
		if (n < NFIELDS)
			f[n] = p;
		if (!comma) {
			n++;
			break;
		}
		*comma = '\0';
		p = comma + 1;
	}
	if (n != NFIELDS)
		return vf_error_set(err, VF_ERR,
				    "nvidia-smi output line %d: expected %d comma-separated fields "
				    "(" QUERY "), found %d",
				    lineno, NFIELDS, n);
	for (int i = 0; i < NFIELDS; i++) {
		f[i] = trim(f[i]);
		if (!printable(f[i]))
			return vf_error_set(err, VF_ERR,
					    "nvidia-smi output line %d: field %s has control or "
					    "non-ASCII bytes",
					    lineno, names[i]);
	}
	struct vf_gpu g;
	vf_gpu_init(&g);
	int64_t idx;
	if (!parse_mib(f[0], &idx) || idx < 0 || idx >= VF_GPU_MAX_COUNT)
		return vf_error_set(err, VF_ERR,
				    "nvidia-smi output line %d: field index: expected a GPU number, "
				    "found '%.40s'",
				    lineno, f[0]);
	g.index = (int)idx;
	for (size_t i = 0; i < s->count; i++)
		if (s->gpus[i].index == g.index)
			return vf_error_set(err, VF_ERR,
					    "nvidia-smi output line %d: GPU index %d appears twice",
					    lineno, g.index);
	if (!unknown_field(f[1])) {
		if (strlen(f[1]) >= sizeof g.uuid)
			return vf_error_set(err, VF_ERR, "nvidia-smi output line %d: field uuid: "
							 "longer than %zu characters",
					    lineno, sizeof g.uuid - 1);
		snprintf(g.uuid, sizeof g.uuid, "%s", f[1]);
	}
	if (!*f[2] || unknown_field(f[2]) || strlen(f[2]) >= sizeof g.name)
		return vf_error_set(err, VF_ERR,
				    "nvidia-smi output line %d: field name: expected a GPU name of "
				    "1 to %zu characters",
				    lineno, sizeof g.name - 1);
	snprintf(g.name, sizeof g.name, "%s", f[2]);
	int64_t *mem[3] = {&g.memory_total_mib, &g.memory_used_mib, &g.memory_free_mib};
	for (int i = 0; i < 3; i++)
		if (!parse_mib(f[3 + i], mem[i]))
			return vf_error_set(err, VF_ERR,
					    "nvidia-smi output line %d: field %s: expected MiB, found "
					    "'%.40s'",
					    lineno, names[3 + i], f[3 + i]);
	if (!unknown_field(f[6])) {
		int maj, min, used = 0;
		if (strlen(f[6]) >= sizeof g.cc || sscanf(f[6], "%d.%d%n", &maj, &min, &used) != 2 ||
		    f[6][used] != '\0' || maj < 0 || min < 0)
			return vf_error_set(err, VF_ERR,
					    "nvidia-smi output line %d: field compute_cap: expected "
					    "MAJOR.MINOR, found '%.40s'",
					    lineno, f[6]);
		snprintf(g.cc, sizeof g.cc, "%d.%d", maj, min);
	}
	if (!unknown_field(f[7]) && !s->driver_version[0])
		snprintf(s->driver_version, sizeof s->driver_version, "%s", f[7]);
	return vf_gpu_set_add(s, &g, err);
}

/* VF_OK when text has none of the known failure texts. */
static vf_status known_failure(const char *text, size_t len, struct vf_error *err)
{
	for (size_t i = 0; i < sizeof failures / sizeof failures[0]; i++)
		if (memmem(text, len, failures[i].text, strlen(failures[i].text)))
			return vf_error_set(err, failures[i].code, "%s", failures[i].msg);
	const char *p = memmem(text, len, "Failed to initialize NVML", 25);
	if (p) {
		char line[200];
		first_line(p, len - (size_t)(p - text), line, sizeof line);
		return vf_error_set(err, VF_ERR, "nvidia-smi: %s", line);
	}
	return VF_OK;
}

vf_status vf__gpu_smi_parse(const char *text, size_t len, struct vf_gpu_set *s,
			    struct vf_error *err)
{
	vf_status st = known_failure(text, len, err);
	if (st)
		return st;
	s->source = VF_GPU_SMI;
	char line[VF_SMI_MAX_LINE + 1];
	int lineno = 0;
	size_t i = 0;
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t ll = nl ? (size_t)(nl - (text + i)) : len - i;
		lineno++;
		if (ll > VF_SMI_MAX_LINE)
			return vf_error_set(err, VF_ERR,
					    "nvidia-smi output line %d is %zu bytes long (over %d): "
					    "not the CSV of --query-gpu",
					    lineno, ll, VF_SMI_MAX_LINE);
		if (memchr(text + i, '\0', ll))
			return vf_error_set(err, VF_ERR, "nvidia-smi output line %d has a NUL byte",
					    lineno);
		memcpy(line, text + i, ll);
		line[ll] = '\0';
		i += ll + (nl ? 1 : 0);
		char *t = trim(line);
		if (!*t)
			continue;
		if ((st = parse_line(t, lineno, s, err)))
			return st;
	}
	if (s->count == 0)
		return vf_error_set(err, VF_ERR, "nvidia-smi printed no GPU lines (%s)",
				    len ? "only blank lines" : "empty output");
	return VF_OK;
}

/* --- running nvidia-smi --------------------------------------------------- */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* VRAMFIT_SMI_TIMEOUT (seconds, > 0 and <= 3600), else the default.
 * A value that is set but not such a number is an error, not ignored. */
static vf_status timeout_ms(int64_t *ms, struct vf_error *err)
{
	const char *e = getenv("VRAMFIT_SMI_TIMEOUT");
	*ms = VF_SMI_TIMEOUT_MS;
	if (!e || !*e)
		return VF_OK;
	char *end;
	double v = strtod(e, &end);
	if (*end != '\0' || !(v > 0 && v <= 3600))
		return vf_error_set(err, VF_EUSAGE,
				    "VRAMFIT_SMI_TIMEOUT=%.40s: expected seconds, more than 0 and at "
				    "most 3600",
				    e);
	*ms = (int64_t)(v * 1000);
	return VF_OK;
}

/* Kill the group and reap the child. */
static void kill_reap(pid_t pid)
{
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

struct run_result {
	int status;   /* waitpid status */
	bool timeout;
	bool toobig;
	int exec_errno;
};

bool vf__gpu_smi_absent(const char *prog, const char *path)
{
	struct stat sb;
	size_t plen = strlen(prog);
	if (plen == 0)
		return false; /* execvp's own answer (ENOENT) is left to it */
	if (strchr(prog, '/'))
		return stat(prog, &sb) != 0 && errno == ENOENT;
	if (!path)
		path = "/bin:/usr/bin"; /* glibc's execvp without PATH */
	char full[4096];
	for (const char *p = path;;) {
		const char *end = strchr(p, ':');
		size_t dlen = end ? (size_t)(end - p) : strlen(p);
		/* an empty entry is the current directory, as execvp reads it */
		if (dlen + plen + 2 > sizeof full)
			return false;
		if (dlen) {
			memcpy(full, p, dlen);
			full[dlen] = '/';
			memcpy(full + dlen + 1, prog, plen + 1);
		} else {
			memcpy(full, prog, plen + 1);
		}
		if (stat(full, &sb) == 0 || errno != ENOENT)
			return false; /* there (or unknowable): execvp decides */
		if (!end)
			return true;
		p = end + 1;
	}
}

/* run, in the child: its own process group, stdin from /dev/null,
 * stdout and stderr into the pipe; an exec failure's errno to efd. */
static __attribute__((noreturn)) void exec_child(const char *prog, int out_fd, int err_fd)
{
	setpgid(0, 0);
	int devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0)
		dup2(devnull, 0);
	dup2(out_fd, 1);
	dup2(out_fd, 2);
	signal(SIGPIPE, SIG_DFL);
	char *argv[] = {(char *)prog, "--query-gpu=" QUERY,
			"--format=csv,noheader,nounits", NULL};
	execvp(prog, argv);
	int e = errno;
	ssize_t w = write(err_fd, &e, sizeof e);
	(void)w;
	_exit(127);
}

/* run: the child's output into out until it closes, the deadline
 * passes (r->timeout) or it is too big (r->toobig). */
static vf_status read_output(int fd, int64_t deadline, struct vf_buf *out, struct run_result *r,
			     struct vf_error *err)
{
	char chunk[4096];
	vf_status st = VF_OK;
	for (;;) {
		int64_t left = deadline - now_ms();
		if (left <= 0) {
			r->timeout = true;
			break;
		}
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int pr = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			st = vf_error_set(err, VF_ERR, "nvidia-smi: poll: %s", strerror(errno));
			break;
		}
		if (pr == 0)
			continue;
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			st = vf_error_set(err, VF_ERR, "nvidia-smi: read: %s", strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if (out->len + (size_t)n > VF_SMI_MAX_OUTPUT) {
			r->toobig = true;
			break;
		}
		if ((st = vf_buf_append(out, chunk, (size_t)n, err)))
			break;
	}
	return st;
}

/* run: the child's exit status once its output closed, within the
 * deadline (else it is killed: r->timeout). */
static void wait_exit(pid_t pid, int64_t deadline, struct run_result *r)
{
	for (;;) {
		pid_t w = waitpid(pid, &r->status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			r->status = 0;
			break;
		}
		if (now_ms() >= deadline) {
			r->timeout = true;
			kill_reap(pid);
			return;
		}
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	kill(-pid, SIGKILL); /* anything it left behind in its group */
}

static vf_status run(const char *prog, int64_t limit_ms, struct vf_buf *out,
		     struct run_result *r, struct vf_error *err)
{
	int pfd[2], efd[2];
	memset(r, 0, sizeof *r);
	if (vf__gpu_smi_absent(prog, getenv("PATH"))) {
		r->exec_errno = ENOENT; /* what the forked execvp would report */
		return VF_OK;
	}
	if (pipe2(pfd, O_CLOEXEC) != 0)
		return vf_error_set(err, VF_ERR, "nvidia-smi: pipe: %s", strerror(errno));
	if (pipe2(efd, O_CLOEXEC) != 0) {
		close(pfd[0]);
		close(pfd[1]);
		return vf_error_set(err, VF_ERR, "nvidia-smi: pipe: %s", strerror(errno));
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(pfd[0]), close(pfd[1]), close(efd[0]), close(efd[1]);
		return vf_error_set(err, VF_ERR, "nvidia-smi: fork: %s", strerror(e));
	}
	if (pid == 0)
		exec_child(prog, pfd[1], efd[1]); /* does not return */
	setpgid(pid, pid); /* also in the parent: no race with the kill below */
	close(pfd[1]);
	close(efd[1]);
	int e = 0;
	ssize_t got;
	while ((got = read(efd[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	close(efd[0]);
	if (got == (ssize_t)sizeof e) {
		close(pfd[0]);
		while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
			;
		r->exec_errno = e;
		return VF_OK;
	}
	int64_t deadline = now_ms() + limit_ms;
	vf_status st = read_output(pfd[0], deadline, out, r, err);
	close(pfd[0]);
	if (st || r->timeout || r->toobig) {
		kill_reap(pid);
		return st;
	}
	wait_exit(pid, deadline, r);
	return VF_OK;
}

vf_status vf__gpu_smi_probe(struct vf_gpu_set *s, struct vf_error *err)
{
	const char *hook = getenv("VRAMFIT_NVIDIA_SMI");
	const char *prog = hook && *hook ? hook : "nvidia-smi";
	struct vf_buf out;
	vf_buf_init(&out, VF_SMI_MAX_OUTPUT);
	struct run_result r;
	int64_t limit_ms;
	vf_status st = timeout_ms(&limit_ms, err);
	if (st)
		goto done;
	st = run(prog, limit_ms, &out, &r, err);
	if (st)
		goto done;
	if (r.exec_errno) {
		if (r.exec_errno == ENOENT)
			st = vf_error_set(err, VF_ENOTFOUND, "%s not found%s", prog,
					  hook && *hook ? " (VRAMFIT_NVIDIA_SMI)"
							: " (no NVIDIA driver installed)");
		else
			st = vf_error_set(err, VF_ERR, "cannot run %s: %s", prog,
					  strerror(r.exec_errno));
		goto done;
	}
	if (r.timeout) {
		st = vf_error_set(err, VF_ERR,
				  "%s did not finish within %.0f s and was killed (a hung driver or "
				  "GPU?)",
				  prog, (double)limit_ms / 1000.0);
		goto done;
	}
	if (r.toobig) {
		st = vf_error_set(err, VF_ERR,
				  "%s printed more than %u bytes and was stopped: not the output of "
				  "--query-gpu",
				  prog, VF_SMI_MAX_OUTPUT);
		goto done;
	}
	const char *text = out.data ? out.data : "";
	if (WIFSIGNALED(r.status)) {
		st = vf_error_set(err, VF_ERR, "%s was killed by signal %d", prog,
				  WTERMSIG(r.status));
		goto done;
	}
	int code = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : 0;
	if ((st = known_failure(text, out.len, err)))
		goto done;
	if (code != 0) {
		/* Failed without a known message: say so with its first line. */
		char line[200];
		first_line(text, out.len, line, sizeof line);
		st = vf_error_set(err, VF_ERR, "%s exited with status %d%s%s", prog, code,
				  line[0] ? ": " : " and printed nothing", line);
		goto done;
	}
	st = vf__gpu_smi_parse(text, out.len, s, err);
done:
	vf_buf_release(&out);
	return st;
}

/* --- CUDA_VISIBLE_DEVICES -------------------------------------------------- */

static const char *uuid_body(const char *u)
{
	return strncasecmp(u, "GPU-", 4) == 0 ? u + 4 : u;
}

vf_status vf__gpu_apply_visible(struct vf_gpu_set *s, const char *cvd, struct vf_error *err)
{
	if (!cvd)
		return VF_OK;
	size_t total = s->count;
	struct vf_gpu *vis = calloc(total ? total : 1, sizeof *vis);
	bool *used = calloc(total ? total : 1, sizeof *used);
	if (!vis || !used) {
		free(vis);
		free(used);
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	}
	size_t nvis = 0;
	bool stopped = false;
	char bad[64] = "";
	const char *p = cvd;
	while (*cvd) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char tok[128];
		if (len >= sizeof tok)
			len = sizeof tok - 1;
		memcpy(tok, p, len);
		tok[len] = '\0';
		char *t = trim(tok);
		int found = -1;
		bool digits = *t != '\0';
		for (const char *q = t; *q; q++)
			digits &= isdigit((unsigned char)*q) != 0;
		if (digits) {
			long v = strlen(t) <= 6 ? strtol(t, NULL, 10) : -1;
			if (v >= 0 && (size_t)v < total)
				found = (int)v;
		} else if (*t && strncasecmp(t, "MIG-", 4) != 0) {
			/* GPU-<uuid> or a unique prefix of one. */
			const char *want = uuid_body(t);
			size_t wl = strlen(want);
			int hits = 0;
			for (size_t i = 0; wl && i < total; i++) {
				if (s->gpus[i].uuid[0] &&
				    strncasecmp(uuid_body(s->gpus[i].uuid), want, wl) == 0) {
					hits++;
					found = (int)i;
				}
			}
			if (hits != 1)
				found = -1;
		}
		if (found < 0 || used[found]) {
			snprintf(bad, sizeof bad, "%s", t);
			stopped = true;
			break;
		}
		used[found] = true;
		vis[nvis++] = s->gpus[found];
		if (!comma)
			break;
		p = comma + 1;
	}
	free(used);
	free(s->gpus);
	s->gpus = vis;
	s->count = nvis;
	s->alloc = total ? total : 1;
	if (!*cvd)
		vf_gpu_set_note(s, "CUDA_VISIBLE_DEVICES is empty: no GPU is visible");
	else if (stopped || nvis < total)
		vf_gpu_set_note(s, "CUDA_VISIBLE_DEVICES=%.60s shows %zu of %zu GPUs%s%s%s", cvd, nvis,
				total, stopped ? " (entry '" : "", bad,
				stopped ? "' matches no GPU or repeats one: it and every entry after "
					  "it are ignored, as CUDA does)"
					: "");
	return VF_OK;
}
