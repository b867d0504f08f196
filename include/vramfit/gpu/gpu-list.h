/* gpu-list.h - one machine's set of GPUs given as one --gpu value:
 * "rtx-3090,rtx-4080" or "rtx-3090:2,rtx-4080=16376" (lib/gpu/gpu-list.c).
 *
 * A repeated --gpu compares kinds (a row each); a comma joins cards that
 * serve together, which may differ (llama.cpp splits its layers over
 * them by each card's free memory). */
#ifndef VRAMFIT_GPU_LIST_H
#define VRAMFIT_GPU_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "vramfit/base/error.h"
#include "vramfit/gpu/gpu.h"

#define VF_GPU_LIST_MAX_CHARS 400 /* the whole value */

/* True when spec names a set (holds a comma). */
bool vf_gpu_spec_is_list(const char *spec);

/* Each comma-separated element of list as vf_gpu_set_add_spec (ID, ID:N,
 * NAME=MiB) appended to s, in order. VF_EUSAGE naming the value and the
 * element on an empty element, a malformed one, or a value longer than
 * VF_GPU_LIST_MAX_CHARS; s keeps what was added before the bad element. */
vf_status vf_gpu_set_add_list(struct vf_gpu_set *s, const char *list, struct vf_error *err);

/* The set's short name into out (n bytes): its kinds in order, a run of
 * one kind as KIND or KINDxN, joined by '+' ("rtx-3090x2+rtx-4080"); a
 * GPU without a catalog entry by its name. Cut at n - 1 bytes. */
void vf_gpu_set_label(const struct vf_gpu_set *s, char *out, size_t n);

#endif
