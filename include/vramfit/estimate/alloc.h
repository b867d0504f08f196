/* alloc.h - a simulation of PyTorch's CUDA caching allocator: feed it the
 * allocations and frees of a step, read back what it reserved from the
 * device (torch.cuda.max_memory_reserved) and its segments at that peak.
 *
 * Rules modelled (read from c10/cuda/CUDACachingAllocator.cpp, pytorch/pytorch
 * commit 001074d2, the allocator of PyTorch 2.9-2.11):
 *  - every request is rounded up to a multiple of 512 bytes;
 *  - requests <= 1 MiB come from the small pool, whose segments are 2 MiB;
 *    larger ones from the large pool: under 10 MiB a new segment is 20 MiB,
 *    from 10 MiB on the request rounded up to 2 MiB gets its own segment;
 *  - best fit: the smallest free block of the pool that holds the request
 *    (ties: the lowest address);
 *  - a block is split when what remains is >= 512 bytes (small pool) or
 *    > 1 MiB (large pool, and only for requests under max_split_size);
 *    blocks of max_split_size or more serve only requests at most 20 MiB
 *    smaller; freed blocks merge with free neighbours of the same segment;
 *  - nothing is returned to the device within a step (no empty_cache),
 *    except when a new segment does not fit the device: then every free,
 *    unsplit segment is released and the request retried, as PyTorch does
 *    before raising out-of-memory;
 *  - expandable_segments:True: one segment per pool that grows in pages
 *    (2 MiB small, 20 MiB large), blocks always split (remainder >= 512),
 *    a request that no free block holds extends the segment's free tail.
 * One stream, no CUDA graphs, no IPC. */
#ifndef VRAMFIT_ALLOC_H
#define VRAMFIT_ALLOC_H

#include <stdbool.h>
#include <stdint.h>

#include "vramfit/base/error.h"

struct vf_alloc_config {
	bool expandable;          /* expandable_segments:True */
	int64_t max_split_bytes;  /* max_split_size_mb x MiB; <= 0: unlimited */
	int64_t capacity_bytes;   /* device bytes the allocator may hold; <= 0: unlimited */
};

/* One segment at the reserved peak. */
struct vf_alloc_segment {
	bool small;               /* small pool (2 MiB segments) */
	int64_t size;             /* bytes reserved from the device */
	int64_t used;             /* bytes of allocated blocks in it */
	int blocks;               /* blocks in it (allocated or free) */
};

#define VF_ALLOC_MAX_SNAPSHOT 4096

/* A request above this (1 PiB) is simulated as this many bytes: no device
 * holds it, and the sums stay far inside 64 bits. */
#define VF_ALLOC_MAX_REQUEST ((int64_t)1 << 50)

struct vf_alloc;

/* Caller owns; vf_alloc_free(). Fails only on out-of-memory of the host. */
vf_status vf_alloc_new(const struct vf_alloc_config *cfg, struct vf_alloc **out,
		       struct vf_error *err);
void vf_alloc_free(struct vf_alloc *a);
/* A copy of a in its state now (every block, segment, free list, counter
 * and peak): the same calls on both give the same answers. Caller owns
 * *out (vf_alloc_free). Fails only on out-of-memory of the host. */
vf_status vf_alloc_clone(const struct vf_alloc *a, struct vf_alloc **out, struct vf_error *err);

/* Parse PYTORCH_CUDA_ALLOC_CONF ("expandable_segments:True,max_split_size_mb:128";
 * unknown keys ignored) into cfg (fields not named are left as they are).
 * Fails naming the bad value. */
vf_status vf_alloc_config_parse(const char *conf, struct vf_alloc_config *cfg,
				struct vf_error *err);

/* Allocate `bytes` (> 0); returns a handle >= 0, or -1 when the device is
 * full (capacity reached after releasing the cache: PyTorch's OOM). */
int vf_alloc_malloc(struct vf_alloc *a, int64_t bytes);
/* n allocations of `bytes` that are never freed, with the same effect as
 * n calls of vf_alloc_malloc: runs of requests that each take a segment of
 * their own are made at once (one record of count n), so the cost does not
 * grow with n. Returns how many were made (fewer than n: out of memory). */
int64_t vf_alloc_malloc_repeat(struct vf_alloc *a, int64_t bytes, int64_t n);
/* The caller reads the counters and peaks only, never the segments at
 * the peak: from now on they are not recorded (each new reserved peak
 * copied the segments changed since the last one), and
 * vf_alloc_peak_segments answers none. Every other answer is the same. */
void vf_alloc_peaks_only(struct vf_alloc *a);
/* vf_alloc_malloc(a, bytes) and at once vf_alloc_release of its handle,
 * with the same effect on every later answer; a request a cached block
 * serves costs a best-fit search and no change (alloc.c says why). False
 * when the device is full (vf_alloc_malloc's -1). */
bool vf_alloc_malloc_free(struct vf_alloc *a, int64_t bytes);
/* Free a handle from vf_alloc_malloc (negative handles are ignored). */
void vf_alloc_release(struct vf_alloc *a, int handle);
/* torch.cuda.empty_cache(): return every free, unsplit segment. */
void vf_alloc_empty_cache(struct vf_alloc *a);

int64_t vf_alloc_allocated(const struct vf_alloc *a);      /* memory_allocated */
int64_t vf_alloc_reserved(const struct vf_alloc *a);       /* memory_reserved */
int64_t vf_alloc_peak_allocated(const struct vf_alloc *a); /* max_memory_allocated */
int64_t vf_alloc_peak_reserved(const struct vf_alloc *a);  /* max_memory_reserved */
/* The peak of the live requests (each rounded to 512 B), whatever blocks
 * served them: a lower bound of any allocator's peak for the same trace,
 * so a capacity below it runs out of memory. */
int64_t vf_alloc_peak_requested(const struct vf_alloc *a);
bool vf_alloc_oom(const struct vf_alloc *a);               /* a malloc returned -1 */
/* Times a new segment over the capacity released the cache and retried
 * (PyTorch's num_alloc_retries). */
int64_t vf_alloc_retries(const struct vf_alloc *a);

/* The segments held when the reserved peak was last reached, largest
 * first (at most VF_ALLOC_MAX_SNAPSHOT; *total = how many there were).
 * Borrowed; valid until the next call on a. None (0 of 0) after
 * vf_alloc_peaks_only. */
const struct vf_alloc_segment *vf_alloc_peak_segments(const struct vf_alloc *a, int *n,
						      int *total);

#endif
