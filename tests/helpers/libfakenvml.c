/* libfakenvml.c - a fake NVML for the probe tests (build/helpers/libfakenvml.so).
 * Driven by $VF_FAKE_NVML, a ';'-separated scenario:
 *   dev=NAME:MiB        a device (repeatable); default one NVIDIA H200 of 143771 MiB
 *   gpus=N              repeat the first device N times (0 = no devices)
 *   cc=M.m              compute capability of every device (default 9.0)
 *   driver=VERSION      driver version (default 580.159.04)
 *   fail=FUNC:CODE      FUNC returns CODE (repeatable)
 *   fail=FUNC@I:CODE    ... for device I only
 * e.g. VF_FAKE_NVML='gpus=8;dev=NVIDIA H100 80GB HBM3:81559;fail=nvmlDeviceGetName@3:4'
 * Built a second time with VF_FAKE_V1_ONLY (libfakenvmlv1.so): only the
 * v1 symbols (nvmlInit, nvmlDeviceGetCount, ..._ByIndex, nvmlDeviceGetMemoryInfo)
 * and no optional ones. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDEV 64
#define MAXFAIL 16

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
	m->used = 0;
	m->free = m->total;
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
	m->used = 1ull << 20;
	m->free = m->total - m->reserved - m->used;
	return 0;
}

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
