/* gpu_nvml.c - probe GPUs through NVML, loaded at run time with
 * dlopen("libnvidia-ml.so.1") (then "libnvidia-ml.so"), never linked.
 * $VRAMFIT_NVML_LIB names another library (tests use a fake) or "off".
 * Without it, the library is looked for only where a driver's kernel side
 * is there (vf__gpu_driver_present): a failed dlopen walks every default
 * library directory and its hardware-capability subdirectories, twice
 * (about 120 lookups, 0.6 ms on a 2-core VM: issue 21), for an answer
 * that is known without it, since NVML cannot work without the driver.
 *
 * Symbols: nvmlInit_v2 (else nvmlInit), nvmlDeviceGetCount_v2 (else
 * nvmlDeviceGetCount), nvmlDeviceGetHandleByIndex_v2 (else ..._ByIndex),
 * nvmlDeviceGetName and nvmlDeviceGetMemoryInfo_v2 (else nvmlDeviceGetMemoryInfo)
 * are required; nvmlDeviceGetUUID, nvmlDeviceGetCudaComputeCapability,
 * nvmlSystemGetDriverVersion, nvmlErrorString and nvmlShutdown are optional:
 * a missing one leaves its value unknown. Devices answering NO_PERMISSION are
 * skipped with a note.
 *
 * The sampler (vf_gpu_sampler_*, gpu.h) keeps the library loaded and reads
 * used memory and the running compute processes per device. Process-list
 * functions, each optional, newest first: nvmlDeviceGetComputeRunningProcesses_v3
 * and _v2 fill nvmlProcessInfo_v2_t {pid, usedGpuMemory, gpuInstanceId,
 * computeInstanceId} (24 bytes), the plain one nvmlProcessInfo_v1_t {pid,
 * usedGpuMemory} (16 bytes). usedGpuMemory == NVML_VALUE_NOT_AVAILABLE
 * (ULLONG_MAX) means NVML has no figure (e.g. no permission). */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu/gpu_probe.h"

const char *const vf__gpu_driver_markers[] = {"/proc/driver/nvidia", "/dev/nvidiactl", "/dev/dxg",
					      NULL};

bool vf__gpu_driver_present(const char *const *markers)
{
	for (; *markers; markers++)
		if (access(*markers, F_OK) == 0 || errno != ENOENT)
			return true; /* there, or not known to be absent */
	return false;
}

/* From nvml.h (stable ABI). */
typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;
enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
};
typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
	unsigned int version;
	unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
#define NVML_MEMORY_V2_VERSION ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2u << 24)))
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t layout");

typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_v2_t;
_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "nvmlProcessInfo_v1_t layout");
_Static_assert(sizeof(nvmlProcessInfo_v2_t) == 24, "nvmlProcessInfo_v2_t layout");
#define NVML_VALUE_NOT_AVAILABLE (~0ull)

#define NAME_LEN 96   /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define UUID_LEN 96   /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
#define DRIVER_LEN 80 /* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE */

struct nvml {
	void *lib;
	char path[256];
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	nvmlReturn_t (*count)(unsigned int *);
	nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*mem2)(nvmlDevice_t, nvmlMemory_v2_t *);
	nvmlReturn_t (*mem1)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*cc)(nvmlDevice_t, int *, int *);
	nvmlReturn_t (*driver)(char *, unsigned int);
	const char *(*errstr)(nvmlReturn_t);
	const char *init_name, *count_name, *handle_name;
};

/* dlsym into a function pointer without a data/function pointer cast warning. */
static void *sym(void *lib, const char *name)
{
	return dlsym(lib, name);
}
#define LOAD(dst, name) memcpy(&(dst), &(void *){sym(n->lib, name)}, sizeof(dst))

static const char *errname(const struct nvml *n, nvmlReturn_t r, char *buf, size_t len)
{
	const char *s = n->errstr ? n->errstr(r) : NULL;
	if (s && *s)
		snprintf(buf, len, "%.80s (NVML error %d)", s, r);
	else
		snprintf(buf, len, "NVML error %d", r);
	return buf;
}

/* Replace anything unprintable: names come from a library we do not trust. */
static void clean(char *s, size_t n)
{
	s[n - 1] = '\0';
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			*s = '?';
}

static vf_status open_lib(struct nvml *n, struct vf_error *err)
{
	const char *hook = getenv("VRAMFIT_NVML_LIB");
	if (hook && strcmp(hook, "off") == 0)
		return vf_error_set(err, VF_ENOTFOUND, "disabled by VRAMFIT_NVML_LIB=off");
	if (hook && *hook) {
		n->lib = dlopen(hook, RTLD_NOW | RTLD_LOCAL);
		if (!n->lib) {
			const char *e = dlerror();
			return vf_error_set(err, VF_ENOTFOUND, "cannot load %s (VRAMFIT_NVML_LIB): %.200s",
					    hook, e ? e : "dlopen failed");
		}
		snprintf(n->path, sizeof n->path, "%s", hook);
		return VF_OK;
	}
	if (!vf__gpu_driver_present(vf__gpu_driver_markers))
		return vf_error_set(err, VF_ENOTFOUND,
				    "no NVIDIA driver loaded (none of /proc/driver/nvidia, "
				    "/dev/nvidiactl, /dev/dxg)");
	static const char *const names[] = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
	for (size_t i = 0; i < 2 && !n->lib; i++) {
		n->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		snprintf(n->path, sizeof n->path, "%s", names[i]);
	}
	if (!n->lib)
		return vf_error_set(err, VF_ENOTFOUND,
				    "libnvidia-ml.so.1 not found (no NVIDIA driver installed)");
	return VF_OK;
}

static vf_status load_syms(struct nvml *n, struct vf_error *err)
{
	static const struct {
		const char *v2, *v1;
	} req[] = {{"nvmlInit_v2", "nvmlInit"},
		   {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"},
		   {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}};
	const char *chosen[3];
	for (int i = 0; i < 3; i++) {
		chosen[i] = sym(n->lib, req[i].v2) ? req[i].v2
			    : sym(n->lib, req[i].v1) ? req[i].v1
						    : NULL;
		if (!chosen[i])
			return vf_error_set(err, VF_ERR, "%s is not a usable NVML: it lacks %s", n->path,
					    req[i].v2);
	}
	n->init_name = chosen[0], n->count_name = chosen[1], n->handle_name = chosen[2];
	LOAD(n->init, chosen[0]);
	LOAD(n->count, chosen[1]);
	LOAD(n->handle, chosen[2]);
	LOAD(n->name, "nvmlDeviceGetName");
	LOAD(n->mem2, "nvmlDeviceGetMemoryInfo_v2");
	LOAD(n->mem1, "nvmlDeviceGetMemoryInfo");
	LOAD(n->uuid, "nvmlDeviceGetUUID");
	LOAD(n->cc, "nvmlDeviceGetCudaComputeCapability");
	LOAD(n->driver, "nvmlSystemGetDriverVersion");
	LOAD(n->errstr, "nvmlErrorString");
	LOAD(n->shutdown, "nvmlShutdown");
	if (!n->name)
		return vf_error_set(err, VF_ERR, "%s is not a usable NVML: it lacks nvmlDeviceGetName",
				    n->path);
	if (!n->mem2 && !n->mem1)
		return vf_error_set(err, VF_ERR,
				    "%s is not a usable NVML: it lacks nvmlDeviceGetMemoryInfo", n->path);
	return VF_OK;
}

/* Memory in bytes: v2 first (struct version set), then v1. */
static nvmlReturn_t memory(const struct nvml *n, nvmlDevice_t d, unsigned long long *total,
			   unsigned long long *used, unsigned long long *free_)
{
	nvmlReturn_t r = NVML_ERROR_FUNCTION_NOT_FOUND;
	if (n->mem2) {
		nvmlMemory_v2_t m2;
		memset(&m2, 0, sizeof m2);
		m2.version = NVML_MEMORY_V2_VERSION;
		r = n->mem2(d, &m2);
		if (r == NVML_SUCCESS) {
			*total = m2.total, *used = m2.used, *free_ = m2.free;
			return r;
		}
		if (r != NVML_ERROR_ARGUMENT_VERSION_MISMATCH && r != NVML_ERROR_NOT_SUPPORTED &&
		    r != NVML_ERROR_FUNCTION_NOT_FOUND)
			return r;
	}
	if (n->mem1) {
		nvmlMemory_t m1;
		memset(&m1, 0, sizeof m1);
		r = n->mem1(d, &m1);
		if (r == NVML_SUCCESS)
			*total = m1.total, *used = m1.used, *free_ = m1.free;
	}
	return r;
}

static int64_t to_mib(unsigned long long bytes)
{
	return (int64_t)(bytes / (1024ull * 1024ull));
}

static vf_status probe_devices(struct nvml *n, struct vf_gpu_set *s, struct vf_error *err)
{
	char eb[128];
	unsigned int count = 0;
	nvmlReturn_t r = n->count(&count);
	if (r != NVML_SUCCESS)
		return vf_error_set(err, VF_ERR, "%s failed: %s", n->count_name,
				    errname(n, r, eb, sizeof eb));
	s->source = VF_GPU_NVML;
	if (n->driver) {
		char dv[DRIVER_LEN];
		memset(dv, 0, sizeof dv);
		if (n->driver(dv, sizeof dv) == NVML_SUCCESS) {
			clean(dv, sizeof dv);
			snprintf(s->driver_version, sizeof s->driver_version, "%s", dv);
		}
	}
	if (count == 0) {
		vf_gpu_set_note(s, "NVML reports no NVIDIA GPU");
		return VF_OK;
	}
	if (count > VF_GPU_MAX_COUNT) {
		vf_gpu_set_note(s, "NVML reports %u GPUs; only the first %d are read", count,
				VF_GPU_MAX_COUNT);
		count = VF_GPU_MAX_COUNT;
	}
	for (unsigned int i = 0; i < count; i++) {
		nvmlDevice_t d = NULL;
		struct vf_gpu g;
		vf_gpu_init(&g);
		g.index = (int)i;
		r = n->handle(i, &d);
		if (r == NVML_SUCCESS) {
			char name[NAME_LEN];
			memset(name, 0, sizeof name);
			r = n->name(d, name, sizeof name);
			clean(name, sizeof name);
			snprintf(g.name, sizeof g.name, "%s", name);
		}
		unsigned long long total = 0, used = 0, free_ = 0;
		if (r == NVML_SUCCESS) {
			r = memory(n, d, &total, &used, &free_);
			if (r == NVML_SUCCESS) {
				g.memory_total_mib = to_mib(total);
				g.memory_used_mib = to_mib(used);
				g.memory_free_mib = to_mib(free_);
			} else if (r != NVML_ERROR_NO_PERMISSION) {
				vf_gpu_set_note(s, "GPU %u: memory unknown: %s", i,
						errname(n, r, eb, sizeof eb));
				r = NVML_SUCCESS;
			}
		}
		if (r == NVML_ERROR_NO_PERMISSION) {
			vf_gpu_set_note(s, "GPU %u: skipped, no permission to query it (NVML)", i);
			continue;
		}
		if (r != NVML_SUCCESS) {
			vf_gpu_set_note(s, "GPU %u: skipped: %s", i, errname(n, r, eb, sizeof eb));
			continue;
		}
		if (n->uuid) {
			char uuid[UUID_LEN];
			memset(uuid, 0, sizeof uuid);
			if (n->uuid(d, uuid, sizeof uuid) == NVML_SUCCESS) {
				clean(uuid, sizeof uuid);
				snprintf(g.uuid, sizeof g.uuid, "%s", uuid);
			}
		}
		int maj = -1, min = -1;
		if (n->cc && n->cc(d, &maj, &min) == NVML_SUCCESS && maj >= 0 && maj < 100 &&
		    min >= 0 && min < 100)
			snprintf(g.cc, sizeof g.cc, "%d.%d", maj, min);
		vf_status st = vf_gpu_set_add(s, &g, err);
		if (st)
			return st;
	}
	if (s->count == 0)
		vf_gpu_set_note(s, "NVML: none of the %u GPUs could be read", count);
	return VF_OK;
}

vf_status vf__gpu_nvml_probe(struct vf_gpu_set *s, struct vf_error *err)
{
	struct nvml n;
	memset(&n, 0, sizeof n);
	vf_status st = open_lib(&n, err);
	if (st)
		return st;
	if ((st = load_syms(&n, err)))
		goto out;
	char eb[128];
	nvmlReturn_t r = n.init();
	if (r == NVML_ERROR_DRIVER_NOT_LOADED) {
		st = vf_error_set(err, VF_ENOTFOUND, "the NVIDIA driver is not loaded (%s: %s)",
				  n.init_name, errname(&n, r, eb, sizeof eb));
		goto out;
	}
	if (r == NVML_ERROR_LIB_RM_VERSION_MISMATCH) {
		st = vf_error_set(err, VF_ERR,
				  "NVIDIA driver/library version mismatch: the loaded kernel module "
				  "and %s differ (usually after a driver upgrade); reboot or reload the "
				  "nvidia kernel module",
				  n.path);
		goto out;
	}
	if (r != NVML_SUCCESS) {
		st = vf_error_set(err, VF_ERR, "%s failed: %s", n.init_name,
				  errname(&n, r, eb, sizeof eb));
		goto out;
	}
	st = probe_devices(&n, s, err);
	if (n.shutdown)
		n.shutdown();
out:
	dlclose(n.lib);
	return st;
}

/* --- the sampler ---------------------------------------------------------- */

#define PROCS_START 64 /* entries first offered to the process-list call */
#define PROCS_TRIES 4  /* INSUFFICIENT_SIZE retries (the list may grow meanwhile) */

struct vf_gpu_sampler {
	struct nvml n;
	nvmlReturn_t (*procs)(nvmlDevice_t, unsigned int *, void *);
	const char *procs_name;
	size_t stride;          /* bytes per entry of procs: 24 (v2, v3) or 16 (v1) */
	unsigned int ndev;
	nvmlDevice_t dev[VF_GPU_SAMPLE_MAX];
	bool have[VF_GPU_SAMPLE_MAX]; /* handle read */
	unsigned char *buf;     /* cap entries of stride bytes */
	unsigned int cap;
};

vf_status vf_gpu_sampler_open(struct vf_gpu_sampler **out, struct vf_error *err)
{
	*out = NULL;
	struct vf_gpu_sampler *s = calloc(1, sizeof *s);
	if (!s)
		return vf_error_set(err, VF_ENOMEM, "NVML sampler: out of memory");
	struct nvml *n = &s->n;
	vf_status st = open_lib(n, err);
	if (st) {
		free(s);
		return st;
	}
	if ((st = load_syms(n, err))) {
		n->shutdown = NULL; /* not initialised: nothing to shut down */
		vf_gpu_sampler_close(s);
		return st;
	}
	static const struct {
		const char *name;
		size_t stride;
	} fns[] = {{"nvmlDeviceGetComputeRunningProcesses_v3", sizeof(nvmlProcessInfo_v2_t)},
		   {"nvmlDeviceGetComputeRunningProcesses_v2", sizeof(nvmlProcessInfo_v2_t)},
		   {"nvmlDeviceGetComputeRunningProcesses", sizeof(nvmlProcessInfo_v1_t)}};
	for (size_t i = 0; i < 3 && !s->procs; i++) {
		LOAD(s->procs, fns[i].name);
		s->procs_name = fns[i].name, s->stride = fns[i].stride;
	}
	if (!s->procs)
		s->procs_name = "", s->stride = 0;
	char eb[128];
	nvmlReturn_t r = n->init();
	if (r != NVML_SUCCESS) {
		st = vf_error_set(err, r == NVML_ERROR_DRIVER_NOT_LOADED ? VF_ENOTFOUND : VF_ERR,
				  "%s failed: %s", n->init_name, errname(n, r, eb, sizeof eb));
		n->shutdown = NULL; /* not initialised: nothing to shut down */
		vf_gpu_sampler_close(s);
		return st;
	}
	unsigned int count = 0;
	r = n->count(&count);
	if (r != NVML_SUCCESS) {
		st = vf_error_set(err, VF_ERR, "%s failed: %s", n->count_name, errname(n, r, eb, sizeof eb));
		vf_gpu_sampler_close(s);
		return st;
	}
	s->ndev = count < VF_GPU_SAMPLE_MAX ? count : VF_GPU_SAMPLE_MAX;
	for (unsigned int i = 0; i < s->ndev; i++)
		s->have[i] = n->handle(i, &s->dev[i]) == NVML_SUCCESS;
	*out = s;
	return VF_OK;
}

const char *vf_gpu_sampler_procs_api(const struct vf_gpu_sampler *s)
{
	return s && s->procs_name ? s->procs_name : "";
}

void vf_gpu_sampler_close(struct vf_gpu_sampler *s)
{
	if (!s)
		return;
	if (s->n.shutdown)
		s->n.shutdown();
	if (s->n.lib)
		dlclose(s->n.lib);
	free(s->buf);
	free(s);
}

static bool grow(struct vf_gpu_sampler *s, unsigned int want)
{
	if (want <= s->cap)
		return true;
	if (want > VF_GPU_SAMPLE_MAX_PROCS)
		return false;
	unsigned char *b = realloc(s->buf, (size_t)want * s->stride);
	if (!b)
		return false;
	s->buf = b;
	s->cap = want;
	return true;
}

/* The given processes' memory on device d: bytes, or -1 unknown. */
static int64_t procs_on(struct vf_gpu_sampler *s, nvmlDevice_t d, const pid_t *pids, size_t npids,
			int *found)
{
	*found = 0;
	if (!s->procs || !grow(s, PROCS_START))
		return -1;
	unsigned int n = 0;
	nvmlReturn_t r = NVML_ERROR_INSUFFICIENT_SIZE;
	for (int tries = 0; tries < PROCS_TRIES && r == NVML_ERROR_INSUFFICIENT_SIZE; tries++) {
		n = s->cap;
		memset(s->buf, 0, (size_t)s->cap * s->stride);
		r = s->procs(d, &n, s->buf);
		if (r == NVML_ERROR_INSUFFICIENT_SIZE) {
			/* n is the count needed now; leave room for a few more. */
			unsigned int want = n > s->cap ? n + n / 4 + 8 : s->cap * 2;
			if (want > VF_GPU_SAMPLE_MAX_PROCS)
				want = n > s->cap && n <= VF_GPU_SAMPLE_MAX_PROCS ? VF_GPU_SAMPLE_MAX_PROCS : 0;
			if (!want || !grow(s, want))
				return -1;
		}
	}
	if (r != NVML_SUCCESS || n > s->cap)
		return -1;
	int64_t total = 0;
	bool unknown = false;
	for (unsigned int i = 0; i < n; i++) {
		unsigned int pid;
		unsigned long long used;
		const unsigned char *e = s->buf + (size_t)i * s->stride;
		/* Both layouts start with pid then usedGpuMemory (offset 8). */
		memcpy(&pid, e + offsetof(nvmlProcessInfo_v1_t, pid), sizeof pid);
		memcpy(&used, e + offsetof(nvmlProcessInfo_v1_t, usedGpuMemory), sizeof used);
		bool ours = false;
		for (size_t k = 0; k < npids && !ours; k++)
			ours = pids[k] > 0 && (unsigned int)pids[k] == pid;
		if (!ours)
			continue;
		++*found;
		if (used == NVML_VALUE_NOT_AVAILABLE)
			unknown = true;
		else
			total += (int64_t)used;
	}
	return unknown ? -1 : total;
}

vf_status vf_gpu_sampler_sample(struct vf_gpu_sampler *s, const pid_t *pids, size_t npids,
				struct vf_gpu_sample *out, struct vf_error *err)
{
	memset(out, 0, sizeof *out);
	if (!s)
		return vf_error_set(err, VF_EUSAGE, "NVML sampler: not open");
	out->count = s->ndev;
	for (unsigned int i = 0; i < s->ndev; i++) {
		struct vf_gpu_sample_dev *o = &out->dev[i];
		o->used_bytes = o->procs_bytes = -1;
		if (!s->have[i])
			continue;
		unsigned long long total = 0, used = 0, free_ = 0;
		if (memory(&s->n, s->dev[i], &total, &used, &free_) == NVML_SUCCESS &&
		    used != NVML_VALUE_NOT_AVAILABLE && used <= (unsigned long long)INT64_MAX)
			o->used_bytes = (int64_t)used;
		o->procs_bytes = procs_on(s, s->dev[i], pids, npids, &o->nprocs);
	}
	return VF_OK;
}
