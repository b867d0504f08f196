/* alloc-ref.h - the reference for test-alloc's differential test: the
 * caching allocator simulation as it was before its free blocks were
 * ordered (best fit by a linear scan of every block, segments and the
 * empty cache found by scans): slow and plainly right. Every vf_alloc_*
 * answer is checked against it on random traces. Included once. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/estimate/alloc.h"

#define REF_MIN_BLOCK 512                         /* kMinBlockSize */
#define REF_SMALL_SIZE ((int64_t)1 << 20)         /* kSmallSize: 1 MiB */
#define REF_SMALL_BUFFER ((int64_t)2 << 20)       /* kSmallBuffer: 2 MiB */
#define REF_LARGE_BUFFER ((int64_t)20 << 20)      /* kLargeBuffer: 20 MiB */
#define REF_MIN_LARGE_ALLOC ((int64_t)10 << 20)   /* kMinLargeAlloc: 10 MiB */
#define REF_ROUND_LARGE ((int64_t)2 << 20)        /* kRoundLarge: 2 MiB */

struct blk {
	int64_t addr, size;
	int seg, prev, next;
	bool used, live;
};

struct seg {
	int64_t addr, size, used;
	int nblocks;
	bool small, live;
};

struct ref_alloc {
	struct vf_alloc_config cfg;
	struct blk *b;
	int nb, capb, free_slot; /* free_slot: a recycled block index chain via .next */
	struct seg *s;
	int ns, caps;
	int64_t next_addr;
	int64_t allocated, reserved, peak_alloc, peak_reserved;
	int expand_seg[2];       /* expandable: the segment of the large [0] and small [1] pool */
	bool oom;
	bool peak_pending;       /* the reserved peak grew: snapshot after this malloc */
	struct vf_alloc_segment *snap;
	int nsnap, capsnap;
};

static int64_t ref_round_up(int64_t x, int64_t m)
{
	return (x + m - 1) / m * m;
}

static vf_status ref_alloc_new(const struct vf_alloc_config *cfg, struct ref_alloc **out,
		       struct vf_error *err)
{
	struct ref_alloc *a = calloc(1, sizeof *a);
	if (!a)
		return vf_error_set(err, VF_ENOMEM, "allocator simulation: out of memory");
	if (cfg)
		a->cfg = *cfg;
	a->free_slot = -1;
	a->expand_seg[0] = a->expand_seg[1] = -1;
	a->next_addr = 1 << 21;
	*out = a;
	return VF_OK;
}

static void ref_alloc_free(struct ref_alloc *a)
{
	if (!a)
		return;
	free(a->b);
	free(a->s);
	free(a->snap);
	free(a);
}

static bool grow(void **p, int *cap, int need, size_t elem)
{
	if (need <= *cap)
		return true;
	int n = *cap ? *cap * 2 : 256;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, (size_t)n * elem);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

static int new_block(struct ref_alloc *a)
{
	if (a->free_slot >= 0) {
		int i = a->free_slot;
		a->free_slot = a->b[i].next;
		return i;
	}
	if (!grow((void **)&a->b, &a->capb, a->nb + 1, sizeof *a->b))
		return -1;
	return a->nb++;
}

static void drop_block(struct ref_alloc *a, int i)
{
	a->b[i].live = false;
	a->b[i].next = a->free_slot;
	a->free_slot = i;
}

static void snapshot(struct ref_alloc *a)
{
	int n = 0;
	for (int i = 0; i < a->ns; i++)
		n += a->s[i].live;
	if (!grow((void **)&a->snap, &a->capsnap, n, sizeof *a->snap)) {
		a->nsnap = 0;
		return;
	}
	a->nsnap = 0;
	for (int i = 0; i < a->ns; i++) {
		const struct seg *g = &a->s[i];
		if (!g->live)
			continue;
		struct vf_alloc_segment *o = &a->snap[a->nsnap++];
		o->small = g->small;
		o->size = g->size;
		o->used = g->used;
		o->blocks = g->nblocks;
	}
}

/* A new segment of `size` bytes holding one free block; -1 on failure. */
static int new_segment(struct ref_alloc *a, int64_t size, bool small)
{
	if (!grow((void **)&a->s, &a->caps, a->ns + 1, sizeof *a->s))
		return -1;
	int bi = new_block(a);
	if (bi < 0)
		return -1;
	int si = a->ns++;
	a->s[si] = (struct seg){.addr = a->next_addr, .size = size, .nblocks = 1, .small = small,
				.live = true};
	a->next_addr += size + (1 << 21);
	a->b[bi] = (struct blk){.addr = a->s[si].addr, .size = size, .seg = si, .prev = -1,
				.next = -1, .live = true};
	a->reserved += size;
	if (a->reserved > a->peak_reserved) {
		a->peak_reserved = a->reserved;
		a->peak_pending = true;
	}
	return bi;
}

/* Return every segment that is one free block (release_cached_blocks). */
static void ref_alloc_empty_cache(struct ref_alloc *a)
{
	for (int i = 0; i < a->nb; i++) {
		struct blk *k = &a->b[i];
		if (!k->live || k->used || k->prev >= 0 || k->next >= 0)
			continue;
		struct seg *g = &a->s[k->seg];
		a->reserved -= g->size;
		g->live = false;
		if (a->expand_seg[0] == k->seg)
			a->expand_seg[0] = -1;
		if (a->expand_seg[1] == k->seg)
			a->expand_seg[1] = -1;
		drop_block(a, i);
	}
}

/* Best fit in the pool: the smallest free block that may serve `size`. */
static int best_fit(const struct ref_alloc *a, int64_t size, bool small)
{
	int64_t msplit = a->cfg.max_split_bytes > 0 ? a->cfg.max_split_bytes : INT64_MAX;
	int best = -1;
	for (int i = 0; i < a->nb; i++) {
		const struct blk *k = &a->b[i];
		if (!k->live || k->used || k->size < size || a->s[k->seg].small != small)
			continue;
		if (!a->cfg.expandable) {
			if (size < msplit && k->size >= msplit)
				continue; /* oversize blocks serve only large requests */
			if (size >= msplit && k->size >= size + REF_LARGE_BUFFER)
				continue;
		}
		if (best < 0 || k->size < a->b[best].size ||
		    (k->size == a->b[best].size && k->addr < a->b[best].addr))
			best = i;
	}
	return best;
}

/* Expandable segments: map pages at the pool segment's end so that its
 * free tail (or a new block there) holds `size`. */
static int expand(struct ref_alloc *a, int64_t size, bool small)
{
	int64_t page = small ? REF_SMALL_BUFFER : REF_LARGE_BUFFER;
	int si = a->expand_seg[small];
	if (si < 0) {
		int64_t want = ref_round_up(size, page);
		if (a->cfg.capacity_bytes > 0 && a->reserved + want > a->cfg.capacity_bytes)
			return -1;
		int bi = new_segment(a, want, small);
		if (bi >= 0)
			a->expand_seg[small] = a->b[bi].seg;
		return bi;
	}
	int last = -1;
	for (int i = 0; i < a->nb; i++)
		if (a->b[i].live && a->b[i].seg == si && a->b[i].next < 0)
			last = i;
	bool tail_free = last >= 0 && !a->b[last].used;
	int64_t want = ref_round_up(size - (tail_free ? a->b[last].size : 0), page);
	if (a->cfg.capacity_bytes > 0 && a->reserved + want > a->cfg.capacity_bytes)
		return -1;
	struct seg *g = &a->s[si];
	a->reserved += want;
	g->size += want;
	if (a->reserved > a->peak_reserved) {
		a->peak_reserved = a->reserved;
		a->peak_pending = true;
	}
	if (tail_free) {
		a->b[last].size += want;
		return last;
	}
	int bi = new_block(a);
	if (bi < 0)
		return -1;
	const struct blk *l = &a->b[last];
	a->b[bi] = (struct blk){.addr = l->addr + l->size, .size = want, .seg = si, .prev = last,
				.next = -1, .live = true};
	a->b[last].next = bi;
	g->nblocks++;
	return bi;
}

/* A new block for a request nothing cached holds (PyTorch's alloc_block,
 * with the release of the cache and a retry when the device is full). */
static int fresh_block(struct ref_alloc *a, int64_t size, bool small)
{
	if (a->cfg.expandable) {
		int bi = expand(a, size, small);
		return bi;
	}
	int64_t seg = small ? REF_SMALL_BUFFER
		      : size < REF_MIN_LARGE_ALLOC ? REF_LARGE_BUFFER : ref_round_up(size, REF_ROUND_LARGE);
	if (a->cfg.capacity_bytes > 0 && a->reserved + seg > a->cfg.capacity_bytes) {
		ref_alloc_empty_cache(a);
		if (a->reserved + seg > a->cfg.capacity_bytes)
			return -1;
	}
	return new_segment(a, seg, small);
}

static bool should_split(const struct ref_alloc *a, const struct blk *k, int64_t size)
{
	int64_t rest = k->size - size;
	if (a->s[k->seg].small || a->cfg.expandable)
		return rest >= REF_MIN_BLOCK;
	int64_t msplit = a->cfg.max_split_bytes > 0 ? a->cfg.max_split_bytes : INT64_MAX;
	return size < msplit && rest > REF_SMALL_SIZE;
}

static int ref_alloc_malloc(struct ref_alloc *a, int64_t bytes)
{
	if (bytes <= 0)
		bytes = 1;
	int64_t size = ref_round_up(bytes, REF_MIN_BLOCK);
	bool small = size <= REF_SMALL_SIZE;
	int bi = best_fit(a, size, small);
	if (bi < 0)
		bi = fresh_block(a, size, small);
	if (bi < 0) {
		a->oom = true;
		return -1;
	}
	if (should_split(a, &a->b[bi], size)) {
		int ri = new_block(a);
		if (ri < 0) {
			a->oom = true;
			return -1;
		}
		struct blk *k = &a->b[bi];
		a->b[ri] = (struct blk){.addr = k->addr + size, .size = k->size - size, .seg = k->seg,
					.prev = bi, .next = k->next, .live = true};
		if (k->next >= 0)
			a->b[k->next].prev = ri;
		k->next = ri;
		k->size = size;
		a->s[k->seg].nblocks++;
	}
	struct blk *k = &a->b[bi];
	k->used = true;
	a->s[k->seg].used += k->size;
	a->allocated += k->size; /* an unsplit block counts whole, as in PyTorch's stats */
	if (a->allocated > a->peak_alloc)
		a->peak_alloc = a->allocated;
	if (a->peak_pending) {
		snapshot(a);
		a->peak_pending = false;
	}
	return bi;
}

/* Merge block j (free, right after i) into i. */
static void merge_next(struct ref_alloc *a, int i)
{
	int j = a->b[i].next;
	a->b[i].size += a->b[j].size;
	a->b[i].next = a->b[j].next;
	if (a->b[j].next >= 0)
		a->b[a->b[j].next].prev = i;
	a->s[a->b[i].seg].nblocks--;
	drop_block(a, j);
}

static void ref_alloc_release(struct ref_alloc *a, int h)
{
	if (h < 0 || h >= a->nb || !a->b[h].live || !a->b[h].used)
		return;
	struct blk *k = &a->b[h];
	k->used = false;
	a->allocated -= k->size;
	a->s[k->seg].used -= k->size;
	if (k->next >= 0 && !a->b[k->next].used)
		merge_next(a, h);
	if (a->b[h].prev >= 0 && !a->b[a->b[h].prev].used)
		merge_next(a, a->b[h].prev);
}

static int64_t ref_alloc_allocated(const struct ref_alloc *a) { return a->allocated; }
static int64_t ref_alloc_reserved(const struct ref_alloc *a) { return a->reserved; }
static int64_t ref_alloc_peak_allocated(const struct ref_alloc *a) { return a->peak_alloc; }
static int64_t ref_alloc_peak_reserved(const struct ref_alloc *a) { return a->peak_reserved; }
static bool ref_alloc_oom(const struct ref_alloc *a) { return a->oom; }

static int seg_cmp(const void *x, const void *y)
{
	const struct vf_alloc_segment *p = x, *q = y;
	return p->size < q->size ? 1 : p->size > q->size ? -1 : 0;
}

const struct vf_alloc_segment *ref_alloc_peak_segments(const struct ref_alloc *a, int *n,
						      int *total)
{
	qsort(a->snap, (size_t)a->nsnap, sizeof *a->snap, seg_cmp);
	*total = a->nsnap;
	*n = a->nsnap < VF_ALLOC_MAX_SNAPSHOT ? a->nsnap : VF_ALLOC_MAX_SNAPSHOT;
	return a->snap;
}

