/* gpu_nvml.c - probe GPUs through NVML, loaded at run time with
 * dlopen("libnvidia-ml.so.1") (then "libnvidia-ml.so"), never linked.
 * $VRAMFIT_NVML_LIB names another library (tests use a fake) or "off".
 *
 * Symbols: nvmlInit_v2 (else nvmlInit), nvmlDeviceGetCount_v2 (else
 * nvmlDeviceGetCount), nvmlDeviceGetHandleByIndex_v2 (else ..._ByIndex),
 * nvmlDeviceGetName and nvmlDeviceGetMemoryInfo_v2 (else nvmlDeviceGetMemoryInfo)
 * are required; nvmlDeviceGetUUID, nvmlDeviceGetCudaComputeCapability,
 * nvmlSystemGetDriverVersion, nvmlErrorString and nvmlShutdown are optional:
 * a missing one leaves its value unknown. Devices answering NO_PERMISSION are
 * skipped with a note. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_probe.h"

/* From nvml.h (stable ABI). */
typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;
enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
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
