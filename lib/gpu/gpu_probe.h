/* gpu_probe.h - internal interface between gpu.c and the two probes
 * (gpu_nvml.c, gpu_smi.c). Not installed; tests and fuzzers include it.
 *
 * Probe results:
 *   VF_OK        the set is filled (source NVML or SMI; NVML may give 0 GPUs)
 *   VF_ENOTFOUND this probe has nothing to say on this machine (library or
 *                tool absent, disabled, driver not loaded, no devices);
 *                err->msg says why in one sentence
 *   VF_ERR       a GPU stack is there but broken or its output is unusable
 *                (version mismatch, timeout, garbage); err->msg says what */
#ifndef VF_GPU_PROBE_H
#define VF_GPU_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include "vramfit/gpu/gpu.h"

#define VF_SMI_TIMEOUT_MS 10000       /* nvidia-smi normally answers in < 1 s */
#define VF_SMI_MAX_OUTPUT (256u << 10) /* bytes read from nvidia-smi; more is hostile */
#define VF_SMI_MAX_LINE 1024          /* one CSV line per GPU is ~150 bytes */

vf_status vf__gpu_nvml_probe(struct vf_gpu_set *s, struct vf_error *err);

/* Whether the kernel side of an NVIDIA driver is there: any of `markers`
 * (NULL-terminated paths) exists, or cannot be shown absent (a lookup
 * failing otherwise than ENOENT). vf__gpu_driver_markers: the module's
 * /proc/driver/nvidia, the control device /dev/nvidiactl, and WSL2's
 * /dev/dxg (its NVML talks to the Windows driver through it). NVML is not
 * looked for without one of them. */
extern const char *const vf__gpu_driver_markers[];
bool vf__gpu_driver_present(const char *const *markers);
vf_status vf__gpu_smi_probe(struct vf_gpu_set *s, struct vf_error *err);

/* True only when execvp(prog) would fail with ENOENT without running
 * anything: prog (with a '/') or every PATH entry's prog (path: $PATH, NULL
 * for execvp's default) does not exist. False when a file of that name is
 * anywhere execvp looks, or a lookup fails otherwise (execvp decides). */
bool vf__gpu_smi_absent(const char *prog, const char *path);

/* Parse the output of
 *   nvidia-smi --query-gpu=index,uuid,name,memory.total,memory.used,
 *     memory.free,compute_cap,driver_version --format=csv,noheader,nounits
 * into s (source SMI). "[N/A]" / "[Not Supported]" fields are unknown.
 * Known failure texts give their clear message (VF_ENOTFOUND or VF_ERR). */
vf_status vf__gpu_smi_parse(const char *text, size_t len, struct vf_gpu_set *s,
			    struct vf_error *err);

/* Apply CUDA_VISIBLE_DEVICES (NULL = unset: all GPUs) the way CUDA reads it:
 * comma-separated indices (probe order: NVML / PCI bus, as with
 * CUDA_DEVICE_ORDER=PCI_BUS_ID), GPU-<uuid> or unique UUID prefixes, in the order
 * given; the first invalid (or repeated) entry hides itself and everything
 * after it; "" hides every GPU. Adds a note when GPUs are hidden. */
vf_status vf__gpu_apply_visible(struct vf_gpu_set *s, const char *cvd, struct vf_error *err);

#endif
