/* libfakenvml.c - a fake NVML for the probe tests (build/helpers/libfakenvml.so).
 * Driven by $VF_FAKE_NVML, a ';'-separated scenario:
 *   dev=NAME:MiB        a device (repeatable); default one NVIDIA H200 of 143771 MiB
 *   gpus=N              repeat the first device N times (0 = no devices)
 *   cc=M.m              compute capability of every device (default 9.0)
 *   driver=VERSION      driver version (default 580.159.04)
 *   fail=FUNC:CODE      FUNC returns CODE (repeatable)
 *   fail=FUNC@I:CODE    ... for device I only
 *   used=MiB            device used memory besides the processes (default 1 MiB
 *                       from ..._v2, 0 from the v1 call)
 *   proc=I:PID:MiB      a compute process on device I (repeatable); MiB "na"
 *                       = NVML_VALUE_NOT_AVAILABLE
 *   fill=I:N:MiB        N more processes on device I, pids 3000000.. (growth tests)
 *   procfile=PATH       more processes, re-read on every call: lines "I PID MiB|na"
 *                       (a stand-in trainer registers its own pids there); every
 *                       read that finds a line appends one to PATH.seen, so the
 *                       stand-in can wait until it has been polled
 * A device's used memory is the base plus its processes' known MiB.
 * Process lists: nvmlDeviceGetComputeRunningProcesses_v3 and _v2
 * (nvmlProcessInfo_v2_t, 24 bytes) and the plain one (v1 layout, 16 bytes);
 * too small a buffer gets INSUFFICIENT_SIZE (7) and the count needed.
 * $VF_FAKE_NVML_CALLS, when set, names a file that gets one line per
 * process-list call ("FUNC N") so tests can see which was used.
 * e.g. VF_FAKE_NVML='gpus=8;dev=NVIDIA H100 80GB HBM3:81559;fail=nvmlDeviceGetName@3:4'
 * Built a second time with VF_FAKE_V1_ONLY (libfakenvmlv1.so): only the
 * v1 symbols (nvmlInit, nvmlDeviceGetCount, ..._ByIndex, nvmlDeviceGetMemoryInfo,
 * nvmlDeviceGetComputeRunningProcesses) and no optional ones; and with
 * VF_FAKE_NO_V3 (libfakenvmlv2.so): everything but ..._v3. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDEV 64
#define MAXFAIL 16
#define MAXPROC 64
#define NA (~0ull)

struct dev {
	char name[96];
	unsigned long long mib;
};
static struct dev devs[MAXDEV];
static int ndev = -1; /* -1: not parsed yet */
static int cc_major = 9, cc_minor = 0;
static char driver[80] = "580.159.04";
static struct {
	char func[64];
	int index; /* -1: every device */
	int code;
} fails[MAXFAIL];
static int nfail;
static int initialized;
static long long used_base = -1; /* MiB; -1 = the defaults */
struct fproc {
	int dev;
	unsigned int pid;
	unsigned long long mib; /* NA = not available */
};
static struct fproc procs[MAXPROC];
static int nproc;
static int fill_dev = -1, fill_n;
static unsigned long long fill_mib;
static char procfile[1024];

static unsigned long long parse_mib(const char *v)
{
	return strncmp(v, "na", 2) == 0 ? NA : strtoull(v, NULL, 10);
}

static void parse(void)
{
	if (ndev >= 0)
		return;
	ndev = 0;
	int repeat = -1;
	const char *env = getenv("VF_FAKE_NVML");
	char buf[4096];
	snprintf(buf, sizeof buf, "%s", env ? env : "");
	for (char *save = NULL, *tok = strtok_r(buf, ";", &save); tok;
	     tok = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq)
			continue;
		*eq = '\0';
		const char *k = tok, *v = eq + 1;
		if (strcmp(k, "dev") == 0 && ndev < MAXDEV) {
			const char *colon = strrchr(v, ':');
			if (!colon)
				continue;
			snprintf(devs[ndev].name, sizeof devs[ndev].name, "%.*s", (int)(colon - v), v);
			devs[ndev].mib = strtoull(colon + 1, NULL, 10);
			ndev++;
		} else if (strcmp(k, "gpus") == 0) {
			repeat = atoi(v);
		} else if (strcmp(k, "cc") == 0) {
			sscanf(v, "%d.%d", &cc_major, &cc_minor);
		} else if (strcmp(k, "driver") == 0) {
			snprintf(driver, sizeof driver, "%s", v);
		} else if (strcmp(k, "used") == 0) {
			used_base = atoll(v);
		} else if (strcmp(k, "proc") == 0 && nproc < MAXPROC) {
			char *e1, *e2;
			procs[nproc].dev = (int)strtol(v, &e1, 10);
			if (*e1 != ':')
				continue;
			procs[nproc].pid = (unsigned int)strtoul(e1 + 1, &e2, 10);
			if (*e2 != ':')
				continue;
			procs[nproc].mib = parse_mib(e2 + 1);
			nproc++;
		} else if (strcmp(k, "fill") == 0) {
			sscanf(v, "%d:%d:%llu", &fill_dev, &fill_n, &fill_mib);
		} else if (strcmp(k, "procfile") == 0) {
			snprintf(procfile, sizeof procfile, "%s", v);
		} else if (strcmp(k, "fail") == 0 && nfail < MAXFAIL) {
			const char *colon = strrchr(v, ':');
			if (!colon)
				continue;
			const char *at = memchr(v, '@', (size_t)(colon - v));
			const char *end = at ? at : colon;
			snprintf(fails[nfail].func, sizeof fails[nfail].func, "%.*s", (int)(end - v), v);
			fails[nfail].index = at ? atoi(at + 1) : -1;
			fails[nfail].code = atoi(colon + 1);
			nfail++;
		}
	}
	if (ndev == 0) {
		snprintf(devs[0].name, sizeof devs[0].name, "NVIDIA H200");
		devs[0].mib = 143771;
		ndev = 1;
	}
	if (repeat >= 0) {
		if (repeat > MAXDEV)
			repeat = MAXDEV;
		for (int i = 1; i < repeat; i++)
			devs[i] = devs[0];
		ndev = repeat;
	}
}

static int fail(const char *func, int index)
{
	parse();
	for (int i = 0; i < nfail; i++)
		if (strcmp(fails[i].func, func) == 0 && (fails[i].index < 0 || fails[i].index == index))
			return fails[i].code;
	return 0;
}

/* Devices are handles 1..ndev (never NULL). */
static int dev_index(void *h)
{
	long i = (long)(intptr_t)h - 1;
	return i >= 0 && i < ndev ? (int)i : -1;
}

/* One line in procfile.seen: the procfile was read while it listed someone. */
static void mark_seen(void)
{
	char seen[1100];
	snprintf(seen, sizeof seen, "%s.seen", procfile);
	FILE *f = fopen(seen, "a");
	if (f) {
		fputs("read\n", f);
		fclose(f);
	}
}

/* The processes on device i now: static ones, the fill, then procfile. */
static int list_procs(int i, struct fproc *out, int max)
{
	int n = 0;
	for (int k = 0; k < nproc; k++)
		if (procs[k].dev == i && n < max)
			out[n++] = procs[k];
	for (int k = 0; i == fill_dev && k < fill_n && n < max; k++)
		out[n++] = (struct fproc){i, 3000000u + (unsigned int)k, fill_mib};
	if (procfile[0]) {
		FILE *f = fopen(procfile, "r");
		char line[256];
		int lines = 0;
		while (f && fgets(line, sizeof line, f) && n < max) {
			int d;
			unsigned int pid;
			char mib[32];
			lines++;
			if (sscanf(line, "%d %u %31s", &d, &pid, mib) == 3 && d == i)
				out[n++] = (struct fproc){d, pid, parse_mib(mib)};
		}
		if (f)
			fclose(f);
		if (lines)
			mark_seen();
	}
	return n;
}

static unsigned long long used_bytes(int i, unsigned long long dflt_mib)
{
	static struct fproc l[8192];
	int n = list_procs(i, l, 8192);
	unsigned long long mib = used_base >= 0 ? (unsigned long long)used_base : dflt_mib;
	for (int k = 0; k < n; k++)
		if (l[k].mib != NA)
			mib += l[k].mib;
	return mib << 20;
}

typedef struct {
	unsigned int pid;
	unsigned long long used;
} pinfo1_t;
typedef struct {
	unsigned int pid;
	unsigned long long used;
	unsigned int gi, ci;
} pinfo2_t;

static int running(const char *fn, void *h, unsigned int *count, void *infos, int v2)
{
	int i = dev_index(h), r = fail(fn, i);
	const char *calls = getenv("VF_FAKE_NVML_CALLS");
	if (calls) {
		FILE *f = fopen(calls, "a");
		if (f) {
			fprintf(f, "%s %u\n", fn, count ? *count : 0);
			fclose(f);
		}
	}
	if (r)
		return r;
	if (i < 0 || !count)
		return 2;
	static struct fproc l[8192];
	int n = list_procs(i, l, 8192);
	if (*count < (unsigned int)n) {
		*count = (unsigned int)n;
		return 7; /* INSUFFICIENT_SIZE */
	}
	for (int k = 0; k < n; k++) {
		if (v2) {
			pinfo2_t *p = (pinfo2_t *)infos + k;
			p->pid = l[k].pid, p->used = l[k].mib == NA ? NA : l[k].mib << 20;
			p->gi = p->ci = 0xFFFFFFFFu;
		} else {
			pinfo1_t *p = (pinfo1_t *)infos + k;
			p->pid = l[k].pid, p->used = l[k].mib == NA ? NA : l[k].mib << 20;
		}
	}
	*count = (unsigned int)n;
	return 0;
}

int nvmlDeviceGetComputeRunningProcesses(void *h, unsigned int *count, void *infos)
{
	return running("nvmlDeviceGetComputeRunningProcesses", h, count, infos, 0);
}

typedef struct {
	unsigned long long total, free, used;
} mem1_t;
typedef struct {
	unsigned int version;
	unsigned long long total, reserved, free, used;
} mem2_t;

#define INIT(fn)                                   \
	int fn(void)                               \
	{                                          \
		int r = fail(#fn, -1);             \
		if (r)                             \
			return r;                  \
		initialized = 1;                   \
		return 0;                          \
	}
#define COUNT(fn)                                  \
	int fn(unsigned int *n)                    \
	{                                          \
		int r = fail(#fn, -1);             \
		if (r)                             \
			return r;                  \
		if (!initialized)                  \
			return 1; /* UNINITIALIZED */ \
		*n = (unsigned int)ndev;           \
		return 0;                          \
	}
#define HANDLE(fn)                                          \
	int fn(unsigned int i, void **h)                    \
	{                                                   \
		int r = fail(#fn, (int)i);                  \
		if (r)                                      \
			return r;                           \
		if (i >= (unsigned int)ndev)                \
			return 2; /* INVALID_ARGUMENT */    \
		*h = (void *)(intptr_t)(i + 1);             \
		return 0;                                   \
	}

INIT(nvmlInit)
COUNT(nvmlDeviceGetCount)
HANDLE(nvmlDeviceGetHandleByIndex)

int nvmlDeviceGetName(void *h, char *name, unsigned int len)
{
	int i = dev_index(h), r = fail("nvmlDeviceGetName", i);
	if (r)
		return r;
	if (i < 0)
		return 2;
	snprintf(name, len, "%s", devs[i].name);
	return 0;
}

int nvmlDeviceGetMemoryInfo(void *h, mem1_t *m)
{
	int i = dev_index(h), r = fail("nvmlDeviceGetMemoryInfo", i);
	if (r)
		return r;
	if (i < 0)
		return 2;
	m->total = devs[i].mib << 20;
	m->used = used_bytes(i, 0);
	m->free = m->total - m->used;
	return 0;
}

int nvmlShutdown(void)
{
	initialized = 0;
	return 0;
}

#ifndef VF_FAKE_V1_ONLY
INIT(nvmlInit_v2)
COUNT(nvmlDeviceGetCount_v2)
HANDLE(nvmlDeviceGetHandleByIndex_v2)

int nvmlDeviceGetMemoryInfo_v2(void *h, mem2_t *m)
{
	int i = dev_index(h), r = fail("nvmlDeviceGetMemoryInfo_v2", i);
	if (r)
		return r;
	if (i < 0)
		return 2;
	if (m->version != (unsigned int)(sizeof(mem2_t) | (2u << 24)))
		return 25; /* ARGUMENT_VERSION_MISMATCH */
	m->total = devs[i].mib << 20;
	m->reserved = 616ull << 20;
	m->used = used_bytes(i, 1);
	m->free = m->total - m->reserved - m->used;
	return 0;
}

int nvmlDeviceGetComputeRunningProcesses_v2(void *h, unsigned int *count, void *infos)
{
	return running("nvmlDeviceGetComputeRunningProcesses_v2", h, count, infos, 1);
}

#ifndef VF_FAKE_NO_V3
int nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned int *count, void *infos)
{
	return running("nvmlDeviceGetComputeRunningProcesses_v3", h, count, infos, 1);
}
#endif

int nvmlDeviceGetUUID(void *h, char *uuid, unsigned int len)
{
	int i = dev_index(h), r = fail("nvmlDeviceGetUUID", i);
	if (r)
		return r;
	snprintf(uuid, len, "GPU-%08d-551d-aa3d-7f71-5c1970c087af", i);
	return 0;
}

int nvmlDeviceGetCudaComputeCapability(void *h, int *major, int *minor)
{
	int r = fail("nvmlDeviceGetCudaComputeCapability", dev_index(h));
	if (r)
		return r;
	*major = cc_major;
	*minor = cc_minor;
	return 0;
}

int nvmlSystemGetDriverVersion(char *v, unsigned int len)
{
	int r = fail("nvmlSystemGetDriverVersion", -1);
	if (r)
		return r;
	snprintf(v, len, "%s", driver);
	return 0;
}

const char *nvmlErrorString(int r)
{
	switch (r) {
	case 4:
		return "Insufficient Permissions";
	case 9:
		return "Driver Not Loaded";
	case 18:
		return "Driver/library version mismatch";
	case 999:
		return "Unknown Error";
	}
	return "Error";
}
#endif
