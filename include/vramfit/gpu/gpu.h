/* gpu.h - the GPUs of this machine (NVML, nvidia-smi) or simulated ones, and
 * the GPU catalog they are matched against.
 *
 * Unknown values: integers -1, strings empty. Nothing unknown is 0. */
#ifndef VRAMFIT_GPU_H
#define VRAMFIT_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vramfit/base/error.h"

#define VF_GPU_MAX_MATCH 6
#define VF_GPU_MAX_COUNT 1024 /* GPUs in one set (probed or simulated) */

/* One catalog entry (data/gpus.json). */
struct vf_gpu_spec {
	char id[32];             /* stable lower-case id: "h100-80gb" */
	char name[64];           /* marketing name: "NVIDIA H100 80GB HBM3" */
	int64_t memory_mib;      /* what nvidia-smi reports as memory.total */
	int nominal_gb;          /* the marketing size class */
	double bf16_tflops;      /* dense tensor-core bf16, TFLOP/s (-1 unknown) */
	double fp16_tflops;      /* dense tensor-core fp16, TFLOP/s */
	double fp32_tflops;      /* non-tensor fp32, TFLOP/s */
	double bandwidth_gbs;    /* memory bandwidth, GB/s */
	double interconnect_gbs; /* per-GPU NVLink bandwidth GB/s, or PCIe when no NVLink */
	bool nvlink;
	double price_usd_hour;   /* indicative on-demand $/GPU-hour; -1 unknown */
	char cc[8];              /* compute capability "9.0" */
	char generation[24];     /* "volta", "ampere", "hopper", "ada", "blackwell"... */
	int sms;                 /* streaming multiprocessors (catalog sms); 0 unknown */
	bool common;             /* listed by estimate when no GPU is given */
	/* Added by the probe module (catalog details). */
	char match[VF_GPU_MAX_MATCH][48]; /* normalised name patterns ("h100 80gb hbm3") */
	int nmatch;
	char interconnect[48];   /* "NVLink 4", "PCIe 5.0 x16" */
	char form_factor[16];    /* "SXM5", "PCIe" */
	char price_source[32];   /* key into the catalog's price_sources; empty unknown */
};

enum vf_gpu_source { VF_GPU_NONE, VF_GPU_NVML, VF_GPU_SMI, VF_GPU_SIMULATED };

struct vf_gpu {
	int index;
	char uuid[96];
	char name[96];
	char catalog_id[32];     /* empty when no entry matched */
	int64_t memory_total_mib;
	int64_t memory_used_mib;
	int64_t memory_free_mib;
	int nominal_gb;          /* -1 unknown */
	char cc[8];              /* empty unknown */
};

struct vf_gpu_set {
	enum vf_gpu_source source;
	struct vf_gpu *gpus;     /* owned */
	size_t count;
	size_t alloc;            /* allocated entries of gpus */
	char driver_version[32];
	char notes[8][256];      /* e.g. a device skipped for lack of permission */
	int nnotes;
};

/* The GPU catalog: embedded data/gpus.json, or the user's override.
 * Borrowed; valid for the life of the process. */
const struct vf_gpu_spec *vf_gpu_catalog(size_t *count, struct vf_error *err);
const struct vf_gpu_spec *vf_gpu_catalog_find(const char *id);
/* The entry a person means: an id (vf_gpu_catalog_find), or the compact
 * form (names.h, without a leading "nvidia", "geforce" or "tesla") of an
 * id, the marketing name or one of its match patterns ("rtx4090", "RTX
 * 4090", "H100 SXM") when one entry alone has it. NULL when none or several
 * do; then hint (n bytes) holds "; did you mean a, b?" or "". Borrowed. */
const struct vf_gpu_spec *vf_gpu_catalog_find_loose(const char *name, char *hint, size_t n);
/* Match a probed name ("NVIDIA H100 80GB HBM3") and MiB to an entry. */
const struct vf_gpu_spec *vf_gpu_catalog_match(const char *name, int64_t memory_mib);
/* Where the loaded catalog came from: a path or "embedded data/gpus.json".
 * Borrowed; empty before the first successful load. */
const char *vf_gpu_catalog_origin(void);
/* Drop the loaded catalog so the next call reloads it (tests, overrides). */
void vf_gpu_catalog_reset(void);
/* The nominal (marketing) GB class of a card reporting memory_mib MiB, using
 * the catalog's nominal_classes_gb and nominal_tolerance: 81559 -> 80,
 * 65536 -> 64, 46068 -> 48. -1 when memory_mib <= 0 or no catalog. */
int vf_gpu_nominal_gb(int64_t memory_mib);
/* Normalise a GPU name for matching: lower case, punctuation to single
 * spaces, vendor words (nvidia, geforce, tesla) dropped:
 * "NVIDIA A100-SXM4-80GB" -> "a100 sxm4 80gb". */
void vf_gpu_name_normalize(const char *name, char *out, size_t n);

void vf_gpu_set_init(struct vf_gpu_set *s);
void vf_gpu_set_release(struct vf_gpu_set *s);
/* Append a copy of g (at most VF_GPU_MAX_COUNT GPUs). */
vf_status vf_gpu_set_add(struct vf_gpu_set *s, const struct vf_gpu *g, struct vf_error *err);
/* Add a note (at most 8 kept; later ones are dropped, the last says so). */
void vf_gpu_set_note(struct vf_gpu_set *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* An unknown GPU: every value unknown (-1 / empty). */
void vf_gpu_init(struct vf_gpu *g);
/* Fill catalog_id and nominal_gb from the catalog (by name and memory). */
void vf_gpu_identify(struct vf_gpu *g);

/* Add simulated GPUs from a SPEC: "h100-80gb", "h100-80gb:8", "NAME=MiB". */
vf_status vf_gpu_set_add_spec(struct vf_gpu_set *s, const char *spec, struct vf_error *err);

/* Probe: NVML first, then nvidia-smi; CUDA_VISIBLE_DEVICES honoured.
 * No GPU is not an error (source VF_GPU_NONE, count 0). */
vf_status vf_gpu_probe(struct vf_gpu_set *s, struct vf_error *err);

const char *vf_gpu_source_name(enum vf_gpu_source src);

/* --- sampling GPU memory while a trainer runs (NVML only) ---------------
 * A sampler keeps NVML loaded (dlopen once, VRAMFIT_NVML_LIB honoured,
 * "off" included) so one sample costs a few NVML calls, not a probe.
 * Per device it reads the used memory (nvmlDeviceGetMemoryInfo_v2, else v1)
 * and the running compute processes (nvmlDeviceGetComputeRunningProcesses_v3,
 * else _v2, else the plain one; each optional) and sums the memory of the
 * processes asked about. Unknown is -1, never 0. */
#define VF_GPU_SAMPLE_MAX 64        /* devices in one sample */
#define VF_GPU_SAMPLE_MAX_PROCS 4096 /* processes read per device; more = unknown */

struct vf_gpu_sample_dev {
	int64_t used_bytes;  /* the device's used memory; -1 unknown */
	int64_t procs_bytes; /* memory of the given processes on it; 0 when none of them
				runs there; -1 unknown (no process list, or NVML has no
				figure for one of them) */
	int nprocs;          /* of the given processes found on it */
};

struct vf_gpu_sample {
	size_t count;        /* devices sampled (NVML order, at most VF_GPU_SAMPLE_MAX) */
	struct vf_gpu_sample_dev dev[VF_GPU_SAMPLE_MAX];
};

struct vf_gpu_sampler;

/* Load NVML and read the device handles. VF_ENOTFOUND when there is no
 * NVML (or VRAMFIT_NVML_LIB=off), VF_ERR when it is broken.
 * Caller owns; vf_gpu_sampler_close(). */
vf_status vf_gpu_sampler_open(struct vf_gpu_sampler **out, struct vf_error *err);
/* Fill out for every device, with the memory of the npids processes in pids
 * (npids 0: procs_bytes of each device is 0 when the list is readable).
 * VF_ERR only when NVML cannot be asked at all. */
vf_status vf_gpu_sampler_sample(struct vf_gpu_sampler *s, const pid_t *pids, size_t npids,
				struct vf_gpu_sample *out, struct vf_error *err);
/* The process-list function in use ("nvmlDeviceGetComputeRunningProcesses_v3",
 * ...), or "" when the library has none. Borrowed; static. */
const char *vf_gpu_sampler_procs_api(const struct vf_gpu_sampler *s);
void vf_gpu_sampler_close(struct vf_gpu_sampler *s);

#endif
