/* alloc.c - a simulation of PyTorch's CUDA caching allocator (alloc.h
 * states the rules and the PyTorch version they were read from).
 *
 * Segments and blocks live in two growable arrays; blocks of a segment
 * form a list in address order (prev/next), so a freed block merges with
 * its free neighbours. As in the allocator it models, the free blocks of
 * each pool are kept ordered by (size, address): here one bucket per size
 * (a replay's free blocks are many but of few sizes), each an array of
 * its blocks by address used from its middle; the sizes are a sorted array
 * (best fit: the request's own size, else its first size not below from a
 * cache of request sizes or a binary search, then past the empty buckets
 * to the first non-empty one; each bucket knows its position) and a hash
 * table (a block's own size: no search), a bucket that empties stays
 * until the empty ones number over 8 and outnumber the others. The last
 * block freed or split off in each pool waits outside the buckets
 * (pending: the next request often takes it,
 * or it merges, without entering them), and best fit compares it with
 * the buckets' first candidate; it enters the buckets when the next
 * one comes. A block is found in its bucket in O(log n) and
 * enters or leaves it with a move of at most half of it (none at its
 * ends, the usual case). Each segment knows its last block
 * (expandable segments grow there); segments that are one free block are
 * kept on a list (empty_cache releases exactly those; kept when a
 * capacity can make malloc release the cache, else made by the first
 * empty_cache from the segments and kept from then on), and segments
 * changed since the last reserved peak on another (the snapshot at a new
 * peak copies only them; not at all when the caller reads the peaks
 * only). Every call is O(log n) amortised, plus a move of the array of
 * sizes (tens of entries in every replay measured; the buckets of those
 * moved renumbered) when a new size appears and of part of a bucket (15 blocks on average, 189 at most, in
 * the replays of a whole-catalog estimate) when a block enters or leaves
 * it between others. vf_alloc_clone copies the used parts of every array
 * (a replay forked part-way: steptrace.c). vf_alloc_malloc_free, a
 * request freed at once, changes nothing when a cached block serves it:
 * a best-fit search and the allocated and requested peaks. */
#include "vramfit/estimate/alloc.h"

#include <stdlib.h>
#include <string.h>

#define MIN_BLOCK 512                         /* kMinBlockSize */
#define SMALL_SIZE ((int64_t)1 << 20)         /* kSmallSize: 1 MiB */
#define SMALL_BUFFER ((int64_t)2 << 20)       /* kSmallBuffer: 2 MiB */
#define LARGE_BUFFER ((int64_t)20 << 20)      /* kLargeBuffer: 20 MiB */
#define MIN_LARGE_ALLOC ((int64_t)10 << 20)   /* kMinLargeAlloc: 10 MiB */
#define ROUND_LARGE ((int64_t)2 << 20)        /* kRoundLarge: 2 MiB */

/* A helper of the hot paths (malloc, release): inline even where the
 * compiler would not. */
#define HOT inline __attribute__((always_inline))

struct blk {
	int64_t addr, size;
	int64_t req;             /* used: the request it serves (rounded to 512 B) */
	int seg, prev, next;
	int bslot;               /* free: its bucket's slot in its pool */
	bool used, live;
	bool small;              /* its segment's pool (a copy: pool_of reads no segment) */
};

/* A free block in its bucket: its address (the order) and index. */
struct entry {
	int64_t addr;
	int idx;
};

/* The free blocks of one size by increasing address: e[lo], ...,
 * e[lo + n - 1], with room on both sides (an array used from its middle:
 * the lowest block leaves, or a new one enters at either end, in O(1)). */
struct bucket {
	int64_t size;
	struct entry *e;
	int lo, n, cap;
	int pos;                 /* its size's position in the pool's sorted sizes */
};

/* Entries of a pool's cache of lower bounds: 1 << LBC_BITS (whole
 * catalog: 16 entries +1.2 % instructions, 256 +0.4 %, against 64). */
#define LBC_BITS 6
#define LBC_N (1 << LBC_BITS)

/* A size in a pool's sorted sizes and the slot of its bucket. */
struct sized {
	int64_t size;
	int slot;
};

/* One pool's free blocks: buckets in slots that never move (bk, nbk used;
 * fs: the slots out of the sizes, for reuse), the sizes in increasing
 * order with each one's slot (sz: n of them, empty buckets
 * included: nempty of them). */
struct pool {
	struct bucket *bk;
	int nbk, capbk;
	int *fs;
	int nfs, capfs;
	struct sized *sz;        /* sorted by size */
	int n, cap;
	int nempty;              /* positions whose bucket is empty */
	int *ht;                 /* size -> slot, open addressing (-1 free), of the n sizes */
	int htcap;               /* a power of two, at least twice n */
	unsigned epoch;          /* counts the compactions (lbc's entries of an older
				  * one are stale: slots were dropped) */
	struct lbc {             /* a request size and the slot of the first size in sz
				  * not below it when it was found (-1: none) */
		int64_t size;
		int slot;
		unsigned epoch;
	} lbc[LBC_N];
};

struct seg {
	int64_t addr, size, used;
	int64_t count;           /* > 1: this many identical segments, each one used
				  * block never freed (vf_alloc_malloc_repeat) */
	int nblocks;
	int last;                /* its block at the highest address */
	int empty_prev, empty_next; /* the list of segments that are one free block */
	bool small, live, empty, dirty;
};

struct snapent {
	struct vf_alloc_segment seg;
	int64_t count;
	bool live;
};

struct vf_alloc {
	struct vf_alloc_config cfg;
	int64_t msplit;          /* cfg.max_split_bytes, INT64_MAX when unlimited */
	bool any_fit;            /* best fit's smallest candidate always serves: expandable,
				  * or no max_split */
	struct blk *b;
	int nb, capb, free_slot; /* free_slot: a recycled block index chain via .next */
	struct seg *s;
	int ns, caps;
	struct pool pool[2];     /* free blocks of the large [0] and small [1] pool */
	int pend[2];             /* the last free block of each pool, outside its buckets
				  * (the next request often takes it): -1 when none */
	int empty_head;          /* first segment on the empty list, -1 when none */
	bool empty_kept;         /* the empty list is kept: a capacity (fresh_block releases
				  * the cache), or since the first vf_alloc_empty_cache */
	int *dirty;              /* segments changed since the last snapshot */
	int ndirty, capdirty;
	int64_t next_addr;
	int64_t allocated, reserved, peak_alloc, peak_reserved;
	int64_t requested, peak_requested; /* live requests (rounded), their peak */
	int expand_seg[2];       /* expandable: the segment of the large [0] and small [1] pool */
	bool oom;
	int64_t retries;         /* the cache released at the capacity (fresh_block) */
	bool peaks_only;         /* vf_alloc_peaks_only: no snapshot, no changes noted */
	bool peak_pending;       /* the reserved peak grew: snapshot after this malloc */
	struct snapent *snap;    /* per segment index, as at the last reserved peak */
	int nsnap, capsnap;      /* nsnap: segments that existed then */
	struct vf_alloc_segment *out;  /* vf_alloc_peak_segments' sorted copy */
	int capout;
};

static bool ht_rebuild(struct pool *p, int want);

static int64_t round_up(int64_t x, int64_t m)
{
	return (x + m - 1) / m * m;
}

vf_status vf_alloc_new(const struct vf_alloc_config *cfg, struct vf_alloc **out,
		       struct vf_error *err)
{
	struct vf_alloc *a = calloc(1, sizeof *a);
	if (!a)
		return vf_error_set(err, VF_ENOMEM, "allocator simulation: out of memory");
	if (cfg)
		a->cfg = *cfg;
	a->msplit = a->cfg.max_split_bytes > 0 ? a->cfg.max_split_bytes : INT64_MAX;
	a->any_fit = a->cfg.expandable || a->msplit == INT64_MAX;
	a->free_slot = -1;
	a->expand_seg[0] = a->expand_seg[1] = -1;
	a->empty_head = -1;
	a->pend[0] = a->pend[1] = -1;
	a->empty_kept = a->cfg.capacity_bytes > 0;
	a->next_addr = 1 << 21;
	if (!ht_rebuild(&a->pool[0], 0) || !ht_rebuild(&a->pool[1], 0)) {
		vf_alloc_free(a);
		return vf_error_set(err, VF_ENOMEM, "allocator simulation: out of memory");
	}
	*out = a;
	return VF_OK;
}

void vf_alloc_peaks_only(struct vf_alloc *a)
{
	a->peaks_only = true;
	a->nsnap = 0;
}

void vf_alloc_free(struct vf_alloc *a)
{
	if (!a)
		return;
	for (int p = 0; p < 2; p++) {
		struct pool *q = &a->pool[p];
		for (int i = 0; i < q->nbk; i++)
			free(q->bk[i].e);
		free(q->bk);
		free(q->fs);
		free(q->sz);
		free(q->ht);
	}
	free(a->b);
	free(a->s);
	free(a->dirty);
	free(a->snap);
	free(a->out);
	free(a);
}

/* *q: room for cap elements, the first n of them copied from p (NULL
 * when cap is 0); false when memory runs out. */
static bool dup_array(void **q, const void *p, int n, int cap, size_t elem)
{
	*q = NULL;
	if (cap <= 0 || !p)
		return true;
	*q = malloc((size_t)cap * elem);
	if (!*q)
		return false;
	if (n > 0)
		memcpy(*q, p, (size_t)n * elem);
	return true;
}

/* Bucket k's entries copied into c (a byte copy of k): its blocks only. */
static bool bucket_clone(struct bucket *c, const struct bucket *k)
{
	c->e = NULL;
	if (k->cap <= 0 || !k->e)
		return true;
	c->e = malloc((size_t)k->cap * sizeof *c->e);
	if (!c->e)
		return false;
	if (k->n > 0)
		memcpy(&c->e[k->lo], &k->e[k->lo], (size_t)k->n * sizeof *c->e);
	return true;
}

/* Pool p's arrays copied into q (q a byte copy of p: its pointers are
 * replaced; on failure the ones not copied are NULL, as vf_alloc_free
 * expects). */
static bool pool_clone(struct pool *q, const struct pool *p)
{
	q->bk = NULL, q->fs = NULL, q->sz = NULL, q->ht = NULL;
	if (!dup_array((void **)&q->bk, p->bk, p->nbk, p->capbk, sizeof *p->bk)) {
		q->nbk = 0;
		return false;
	}
	q->nbk = p->nbk;
	bool ok = true;
	for (int i = 0; i < p->nbk; i++) /* each bucket its own entries */
		if (!ok || !bucket_clone(&q->bk[i], &p->bk[i]))
			q->bk[i].e = NULL, ok = false;
	return ok && dup_array((void **)&q->fs, p->fs, p->nfs, p->capfs, sizeof *p->fs) &&
	       dup_array((void **)&q->sz, p->sz, p->n, p->cap, sizeof *p->sz) &&
	       dup_array((void **)&q->ht, p->ht, p->htcap, p->htcap, sizeof *p->ht);
}

vf_status vf_alloc_clone(const struct vf_alloc *a, struct vf_alloc **out, struct vf_error *err)
{
	struct vf_alloc *c = malloc(sizeof *c);
	if (!c)
		return vf_error_set(err, VF_ENOMEM, "allocator simulation: out of memory");
	*c = *a;
	c->b = NULL, c->s = NULL, c->dirty = NULL, c->snap = NULL, c->out = NULL, c->capout = 0;
	c->pool[0].bk = c->pool[1].bk = NULL, c->pool[0].nbk = c->pool[1].nbk = 0;
	c->pool[0].fs = c->pool[1].fs = NULL, c->pool[0].sz = c->pool[1].sz = NULL;
	c->pool[0].ht = c->pool[1].ht = NULL;
	/* the used parts: blocks [0, nb), segments [0, ns), the noted
	 * segments, the snapshot's first nsnap */
	bool ok = dup_array((void **)&c->b, a->b, a->nb, a->capb, sizeof *a->b) &&
		  dup_array((void **)&c->s, a->s, a->ns, a->caps, sizeof *a->s) &&
		  dup_array((void **)&c->dirty, a->dirty, a->ndirty, a->capdirty, sizeof *a->dirty) &&
		  dup_array((void **)&c->snap, a->snap, a->nsnap, a->capsnap, sizeof *a->snap) &&
		  pool_clone(&c->pool[0], &a->pool[0]) && pool_clone(&c->pool[1], &a->pool[1]);
	if (!ok) {
		vf_alloc_free(c);
		return vf_error_set(err, VF_ENOMEM, "allocator simulation: out of memory");
	}
	*out = c;
	return VF_OK;
}

/* Room for need elements in *p, doubling from first (or *cap). */
static bool grow_from(void **p, int *cap, int need, size_t elem, int first)
{
	if (need <= *cap)
		return true;
	int n = *cap ? *cap * 2 : first;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, (size_t)n * elem);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

/* The first room for blocks and segments: a training step's replay makes
 * thousands of blocks and hundreds of segments, and growing to them by
 * doubling from 256 copied the arrays over and over (measured, whole-catalog
 * estimate: -2.2 % instructions with 4096 and 1024; more gained nothing).
 * Pages not used are not touched. */
#define BLOCKS_FIRST 4096
#define SEGMENTS_FIRST 1024

static bool grow(void **p, int *cap, int need, size_t elem)
{
	return grow_from(p, cap, need, elem, 256);
}

/* ---- the free blocks of each pool, ordered by (size, address) ----
 *
 * A replay's free blocks are many (hundreds to thousands: the holes its
 * layers leave) but of few sizes (tens: the layers repeat), so each pool
 * keeps one bucket per size, and each bucket its blocks in increasing
 * address, in the middle of an array with room at both ends. The first
 * free block not before (size, 0) - the smallest that holds size, the
 * lowest address among equals, the order PyTorch's BlockComparator keeps
 * - is the first of the first non-empty bucket of at least that size:
 * the bucket of the size itself when it has one (found by the hash; an
 * empty one's position is kept in it), else the first size above from the
 * pool's cache of request sizes (struct lbc: the slot found, valid while
 * the size before that slot's position is still below the request, as
 * sizes only enter between compactions), else a binary search over the
 * sorted sizes; then a step past the empty buckets there (a few: see
 * below; a bitmap of the non-empty ones cost more to keep than it saved,
 * measured again with positions kept: +5.9 %). The lowest block leaves,
 * and a block above (a new one: segments are made at increasing
 * addresses) or below all the others enters, in O(1); one between others is found by a binary search
 * and the shorter side moves (a binary min-heap by address cost more:
 * a block freed and merged with its lower neighbour climbed it, and a
 * heap needs each block's place in it kept). Buckets sit in slots that
 * never move (a free block knows its slot: blk.bslot, so leaving needs no
 * search of its size), and a bucket that empties
 * stays, empty, in the sorted sizes: the layers of a replay empty and
 * refill the same sizes over and over (a split's remainder, merged back
 * when the block is freed), so a new size is rare after the first layers;
 * the empty buckets are dropped when over 8 outnumber the others. Arrays,
 * not a tree of pointers: a treap here cost 1.6 times the time. A block
 * enters them one free block late (vf_alloc.pend): a split's remainder
 * is most often the next request's block, and a freed block the next
 * one's neighbour, so most never enter them (whole-catalog estimate:
 * -5.4 % instructions; a size of their own made for each remainder was
 * most of the new sizes). A bitmap of the non-empty positions with each
 * bucket's position kept (no binary search for an emptied size of its
 * own) cost more than the scan (+7 %): positions move on every new size. */

/* Position of the first size >= size in pool p's sorted sizes (p->n when
 * none). */
static int pos_at(const struct pool *p, int64_t size)
{
	const struct sized *sz = p->sz;
	int lo = 0, n = p->n;
	while (n > 0) {
		int half = n >> 1;
		if (sz[lo + half].size < size) {
			lo += half + 1;
			n -= half + 1;
		} else {
			n = half;
		}
	}
	return lo;
}

/* The first position >= from whose bucket holds a block (p->n when none):
 * a scan over the empty buckets, which are few (compact). */
static inline int next_nonempty(const struct pool *p, int from)
{
	while (from < p->n && p->bk[p->sz[from].slot].n == 0)
		from++;
	return from;
}

static struct pool *pool_of(struct vf_alloc *a, int i)
{
	return &a->pool[a->b[i].small];
}

/* Room for an entry at both ends of bucket k: its entries moved to the
 * middle of its array, made 2n + 16 long when shorter. False when memory
 * runs out (the bucket as it was). */
static __attribute__((noinline)) bool bucket_room(struct bucket *k)
{
	int cap = k->cap < 2 * k->n + 16 ? 2 * k->n + 16 : k->cap;
	struct entry *e = k->e;
	if (cap != k->cap) {
		e = malloc((size_t)cap * sizeof *e);
		if (!e)
			return false;
	}
	int lo = (cap - k->n) / 2;
	if (k->n > 0)
		memmove(&e[lo], &k->e[k->lo], (size_t)k->n * sizeof *e);
	if (e != k->e) {
		free(k->e);
		k->e = e;
		k->cap = cap;
	}
	k->lo = lo;
	return true;
}

/* Position in bucket k of its first entry above addr (lo + n when none). */
static inline int bucket_after(const struct bucket *k, int64_t addr)
{
	int lo = k->lo, n = k->n;
	while (n > 0) {
		int half = n >> 1;
		if (k->e[lo + half].addr <= addr) {
			lo += half + 1;
			n -= half + 1;
		} else {
			n = half;
		}
	}
	return lo;
}

/* Block i at addr enters bucket k (room at both ends: bucket_room): the
 * usual new block lies above the others; one inside moves the shorter
 * side. */
static inline void bucket_insert(struct bucket *k, int64_t addr, int i)
{
	struct entry *e = k->e, v = {addr, i};
	int lo = k->lo, hi = lo + k->n;
	if (k->n == 0 || addr > e[hi - 1].addr) {
		e[hi] = v;
	} else if (addr < e[lo].addr) {
		e[--k->lo] = v;
	} else {
		int p = bucket_after(k, addr);
		if (p - lo < hi - p) {
			memmove(&e[lo - 1], &e[lo], (size_t)(p - lo) * sizeof *e);
			e[p - 1] = v;
			k->lo--;
		} else {
			memmove(&e[p + 1], &e[p], (size_t)(hi - p) * sizeof *e);
			e[p] = v;
		}
	}
	k->n++;
}

/* The block at addr leaves bucket k (the shorter side closes the gap). */
static inline void bucket_erase(struct bucket *k, int64_t addr)
{
	struct entry *e = k->e;
	int lo = k->lo, hi = lo + k->n;
	int p = e[lo].addr == addr ? lo : e[hi - 1].addr == addr ? hi - 1 : bucket_after(k, addr) - 1;
	if (p - lo < hi - 1 - p) {
		memmove(&e[lo + 1], &e[lo], (size_t)(p - lo) * sizeof *e);
		k->lo++;
	} else {
		memmove(&e[p], &e[p + 1], (size_t)(hi - 1 - p) * sizeof *e);
	}
	if (--k->n == 0)
		k->lo = k->cap / 2;
}

static unsigned ht_home(const struct pool *p, int64_t size)
{
	return (unsigned)(((uint64_t)size * 0x9E3779B97F4A7C15ull) >> 32) & (unsigned)(p->htcap - 1);
}

/* The slot of the bucket of exactly `size` (empty or not), -1 when none
 * (the table is there from vf_alloc_new on). */
static inline int find_slot(const struct pool *p, int64_t size)
{
	for (unsigned h = ht_home(p, size);; h = (h + 1) & (unsigned)(p->htcap - 1)) {
		int sl = p->ht[h];
		if (sl < 0 || p->bk[sl].size == size)
			return sl;
	}
}

static void ht_put(struct pool *p, int sl)
{
	unsigned h = ht_home(p, p->bk[sl].size);
	while (p->ht[h] >= 0)
		h = (h + 1) & (unsigned)(p->htcap - 1);
	p->ht[h] = sl;
}

/* The table rebuilt from the sizes, with room for `want` of them; false
 * when memory runs out (the old table stays). */
static bool ht_rebuild(struct pool *p, int want)
{
	int cap = p->htcap ? p->htcap : 64;
	while (cap < 2 * want)
		cap *= 2;
	if (cap != p->htcap) {
		int *t = malloc((size_t)cap * sizeof *t);
		if (!t)
			return false;
		free(p->ht);
		p->ht = t;
		p->htcap = cap;
	}
	memset(p->ht, 0xff, (size_t)p->htcap * sizeof *p->ht);
	for (int i = 0; i < p->n; i++)
		ht_put(p, p->sz[i].slot);
	return true;
}

/* Drop the empty buckets from the sorted sizes (their slots, storage
 * kept, are reused by the next new sizes). */
static void compact(struct pool *p)
{
	int k = 0;
	for (int i = 0; i < p->n; i++) {
		int sl = p->sz[i].slot;
		if (p->bk[sl].n > 0) {
			p->bk[sl].pos = k;
			p->sz[k++] = p->sz[i];
		} else {
			p->fs[p->nfs++] = sl; /* fs holds every slot: room is there */
		}
	}
	p->n = k;
	p->nempty = 0;
	if (++p->epoch == 0) /* wrapped: no entry may match an old epoch */
		memset(p->lbc, 0, sizeof p->lbc);
	ht_rebuild(p, p->n); /* no larger: cannot fail */
}

/* A new (empty) bucket of `size` in pool p: its slot, -1 when memory runs
 * out. Out of line: the common case (bucket_of) finds the size. */
static __attribute__((noinline)) int bucket_new_size(struct pool *p, int64_t size)
{
	if (p->nempty > 8 && p->nempty > p->n / 2)
		compact(p);
	if (2 * (p->n + 1) > p->htcap && !ht_rebuild(p, p->n + 1))
		return -1;
	int pos = pos_at(p, size);
	if (!grow((void **)&p->sz, &p->cap, p->n + 1, sizeof *p->sz))
		return -1;
	int sl;
	if (p->nfs > 0) {
		sl = p->fs[--p->nfs];
	} else {
		if (!grow((void **)&p->bk, &p->capbk, p->nbk + 1, sizeof *p->bk) ||
		    !grow((void **)&p->fs, &p->capfs, p->nbk + 1, sizeof *p->fs))
			return -1; /* fs has room for every slot (compact) */
		sl = p->nbk++;
		p->bk[sl] = (struct bucket){0};
	}
	p->bk[sl].size = size;
	p->bk[sl].n = 0; /* a slot reused: lo is cap / 2 already */
	for (int i = p->n; i > pos; i--) { /* the sizes above move up one */
		p->sz[i] = p->sz[i - 1];
		p->bk[p->sz[i].slot].pos = i;
	}
	p->sz[pos] = (struct sized){size, sl};
	p->bk[sl].pos = pos;
	p->n++;
	p->nempty++;
	ht_put(p, sl);
	return sl;
}

static inline int bucket_of(struct pool *p, int64_t size)
{
	int found = find_slot(p, size);
	return found >= 0 ? found : bucket_new_size(p, size);
}

/* Block i into its pool p's buckets. False when memory runs out (the block
 * is then not found by best fit: the caller reports out of memory, as for
 * its other arrays). */
static HOT bool bucket_add(struct vf_alloc *a, struct pool *p, int i)
{
	int sl = bucket_of(p, a->b[i].size);
	if (sl < 0)
		return false;
	struct bucket *k = &p->bk[sl];
	if ((k->lo == 0 || k->lo + k->n == k->cap) && !bucket_room(k))
		return false;
	if (k->n == 0)
		p->nempty--;
	a->b[i].bslot = sl;
	bucket_insert(k, a->b[i].addr, i);
	return true;
}

/* Block i became free (or changed size while free): the pool's pending
 * block, the one pending before it into the buckets. False as
 * bucket_add's. */
static HOT bool free_add(struct vf_alloc *a, int i)
{
	bool small = a->b[i].small;
	int old = a->pend[small];
	a->pend[small] = i;
	return old < 0 || bucket_add(a, &a->pool[small], old); /* the pool of both */
}

/* Free block i leaves its pool's free blocks (before it is used or
 * resized); an emptied bucket stays in the sizes, marked empty. */
static HOT void free_remove(struct vf_alloc *a, int i)
{
	if (a->pend[a->b[i].small] == i) {
		a->pend[a->b[i].small] = -1;
		return;
	}
	struct pool *p = pool_of(a, i);
	struct bucket *k = &p->bk[a->b[i].bslot];
	bucket_erase(k, a->b[i].addr);
	if (k->n == 0)
		p->nempty++;
}

/* Position of the first size >= size in pool p's sorted sizes, from the
 * cache when it holds size: its slot then is still the first unless a
 * size since inserted lies between (sizes only enter between compactions,
 * so the first can only move down, and the size before tells). */
static inline int lb_cached(struct pool *p, int64_t size)
{
	struct lbc *c = &p->lbc[((uint64_t)size * 0x9E3779B97F4A7C15ull) >> (64 - LBC_BITS)];
	if (c->size == size && c->epoch == p->epoch) {
		int pos = c->slot >= 0 ? p->bk[c->slot].pos : p->n;
		if (pos == 0 || p->sz[pos - 1].size < size)
			return pos;
	}
	int pos = pos_at(p, size);
	*c = (struct lbc){size, pos < p->n ? p->sz[pos].slot : -1, p->epoch};
	return pos;
}

/* The first free block of the pool not before (size, 0): the smallest
 * that holds size, the lowest address among equals; -1 when none. *at:
 * its bucket's slot (for free_take). */
static HOT int lower_bound(struct vf_alloc *a, bool small, int64_t size, int *at)
{
	struct pool *p = &a->pool[small];
	int sl = find_slot(p, size); /* an exact fit: no search */
	int pos;
	if (sl >= 0) {
		if (p->bk[sl].n > 0) {
			*at = sl;
			return p->bk[sl].e[p->bk[sl].lo].idx;
		}
		pos = p->bk[sl].pos + 1;
	} else {
		pos = lb_cached(p, size);
	}
	pos = next_nonempty(p, pos);
	if (pos >= p->n)
		return -1;
	*at = p->sz[pos].slot;
	return p->bk[*at].e[p->bk[*at].lo].idx;
}

/* The block best_fit found (in the bucket of slot at; at < 0: the
 * pending block) leaves the pool's free blocks. */
static void free_take(struct vf_alloc *a, bool small, int at)
{
	if (at < 0) {
		a->pend[small] = -1;
		return;
	}
	struct pool *p = &a->pool[small];
	struct bucket *k = &p->bk[at];
	k->lo++;
	if (--k->n == 0) {
		k->lo = k->cap / 2;
		p->nempty++;
	}
}

/* ---- segment bookkeeping: the empty list and the changes since the peak ---- */

static void empty_unlink(struct vf_alloc *a, int si)
{
	struct seg *g = &a->s[si];
	if (g->empty_prev >= 0)
		a->s[g->empty_prev].empty_next = g->empty_next;
	else
		a->empty_head = g->empty_next;
	if (g->empty_next >= 0)
		a->s[g->empty_next].empty_prev = g->empty_prev;
	g->empty = false;
}

/* Segment si goes on the empty list (it became one free block). */
static void empty_link(struct vf_alloc *a, int si)
{
	struct seg *g = &a->s[si];
	g->empty = true;
	g->empty_prev = -1;
	g->empty_next = a->empty_head;
	if (a->empty_head >= 0)
		a->s[a->empty_head].empty_prev = si;
	a->empty_head = si;
}

/* Segment si changed: noted for the next snapshot (not when peaks only). */
static inline void seg_note(struct vf_alloc *a, int si)
{
	struct seg *g = &a->s[si];
	if (!a->peaks_only && !g->dirty &&
	    grow((void **)&a->dirty, &a->capdirty, a->ndirty + 1, sizeof *a->dirty)) {
		g->dirty = true;
		a->dirty[a->ndirty++] = si;
	}
}

/* Segment si changed: note it for the next snapshot and keep the empty
 * list (live segments that are one free block) up to date. */
static void seg_touch_slow(struct vf_alloc *a, int si, bool empty)
{
	seg_note(a, si);
	struct seg *g = &a->s[si];
	if (empty == g->empty)
		return;
	if (!empty)
		empty_unlink(a, si);
	else
		empty_link(a, si);
}

/* Most touches find the segment noted already (or nothing to note:
 * peaks only) and its emptiness as it was. */
static inline void seg_touch(struct vf_alloc *a, int si)
{
	const struct seg *g = &a->s[si];
	bool empty = a->empty_kept && g->live && g->nblocks == 1 && g->used == 0;
	if (!(g->dirty | a->peaks_only) || empty != g->empty)
		seg_touch_slow(a, si, empty);
}

static inline int new_block(struct vf_alloc *a)
{
	if (a->free_slot >= 0) {
		int i = a->free_slot;
		a->free_slot = a->b[i].next;
		return i;
	}
	if (a->nb == a->capb &&
	    !grow_from((void **)&a->b, &a->capb, a->nb + 1, sizeof *a->b, BLOCKS_FIRST))
		return -1;
	return a->nb++;
}

static void drop_block(struct vf_alloc *a, int i)
{
	a->b[i].live = false;
	a->b[i].next = a->free_slot;
	a->free_slot = i;
}

/* The reserved peak grew: the snapshot takes the segments changed since
 * the last one (every segment is changed when it is made, so each of the
 * first ns entries has been written). */
static void snapshot(struct vf_alloc *a)
{
	if (a->peaks_only)
		return;
	if (!grow((void **)&a->snap, &a->capsnap, a->ns, sizeof *a->snap))
		return;
	for (int k = 0; k < a->ndirty; k++) {
		int si = a->dirty[k];
		const struct seg *g = &a->s[si];
		a->snap[si] = (struct snapent){
			.seg = {.small = g->small, .size = g->size, .used = g->used,
				.blocks = g->nblocks},
			.count = g->count, .live = g->live};
		a->s[si].dirty = false;
	}
	a->ndirty = 0;
	a->nsnap = a->ns;
}

static void reserve(struct vf_alloc *a, int64_t bytes)
{
	a->reserved += bytes;
	if (a->reserved > a->peak_reserved) {
		a->peak_reserved = a->reserved;
		a->peak_pending = true;
	}
}

/* A new segment of `size` bytes holding one free block, not yet in the
 * pool's buckets (the request it was made for takes it); -1 on failure. */
static int new_segment(struct vf_alloc *a, int64_t size, bool small)
{
	if (!grow_from((void **)&a->s, &a->caps, a->ns + 1, sizeof *a->s, SEGMENTS_FIRST))
		return -1;
	int bi = new_block(a);
	if (bi < 0)
		return -1;
	int si = a->ns++;
	a->s[si] = (struct seg){.addr = a->next_addr, .size = size, .count = 1, .nblocks = 1,
				.last = bi,
				.small = small, .live = true, .empty_prev = -1, .empty_next = -1};
	a->next_addr += size + (1 << 21);
	a->b[bi] = (struct blk){.addr = a->s[si].addr, .size = size, .seg = si, .prev = -1,
				.next = -1, .live = true, .small = small};
	seg_touch(a, si);
	reserve(a, size);
	return bi;
}

/* The empty list made from the segments and kept from now on. */
static void empty_list_start(struct vf_alloc *a)
{
	for (int si = 0; si < a->ns; si++) {
		const struct seg *g = &a->s[si];
		if (g->live && g->nblocks == 1 && g->used == 0)
			empty_link(a, si);
	}
	a->empty_kept = true;
}

/* Return every segment that is one free block (release_cached_blocks). */
void vf_alloc_empty_cache(struct vf_alloc *a)
{
	if (!a->empty_kept)
		empty_list_start(a);
	while (a->empty_head >= 0) {
		int si = a->empty_head;
		struct seg *g = &a->s[si];
		int bi = g->last;
		free_remove(a, bi);
		a->reserved -= g->size;
		g->live = false;
		seg_touch(a, si); /* off the empty list */
		if (a->expand_seg[0] == si)
			a->expand_seg[0] = -1;
		if (a->expand_seg[1] == si)
			a->expand_seg[1] = -1;
		drop_block(a, bi);
	}
}

/* Best fit in the pool: the smallest free block that may serve `size`
 * (still among the pool's free blocks); -1 when none. *at as
 * lower_bound's, -1 for the pending block. */
static HOT int best_fit(struct vf_alloc *a, int64_t size, bool small, int *at)
{
	int64_t msplit = a->msplit;
	int k = lower_bound(a, small, size, at);
	int q = a->pend[small]; /* the pending block, before k in (size, address)? */
	if (q >= 0 && a->b[q].size >= size &&
	    (k < 0 || a->b[q].size < a->b[k].size ||
	     (a->b[q].size == a->b[k].size && a->b[q].addr < a->b[k].addr))) {
		k = q;
		*at = -1;
	}
	if (k < 0 || a->any_fit)
		return k;
	/* oversize blocks (>= max_split) serve only large requests, and those
	 * only within kLargeBuffer of the request: the smallest candidate is
	 * the only one that can qualify */
	if (size < msplit && a->b[k].size >= msplit)
		return -1;
	if (size >= msplit && a->b[k].size >= size + LARGE_BUFFER)
		return -1;
	return k;
}

/* Expandable segments: map pages at the pool segment's end so that its
 * free tail (or a new block there) holds `size`. */
static int expand(struct vf_alloc *a, int64_t size, bool small)
{
	int64_t page = small ? SMALL_BUFFER : LARGE_BUFFER;
	int si = a->expand_seg[small];
	if (si < 0) {
		int64_t want = round_up(size, page);
		if (a->cfg.capacity_bytes > 0 && a->reserved + want > a->cfg.capacity_bytes)
			return -1;
		int bi = new_segment(a, want, small);
		if (bi >= 0)
			a->expand_seg[small] = a->b[bi].seg;
		return bi;
	}
	int last = a->s[si].last;
	bool tail_free = !a->b[last].used;
	int64_t want = round_up(size - (tail_free ? a->b[last].size : 0), page);
	if (a->cfg.capacity_bytes > 0 && a->reserved + want > a->cfg.capacity_bytes)
		return -1;
	struct seg *g = &a->s[si];
	g->size += want;
	reserve(a, want);
	if (tail_free) { /* leaves the buckets: the request takes it */
		free_remove(a, last);
		a->b[last].size += want;
		seg_touch(a, si);
		return last;
	}
	int bi = new_block(a);
	if (bi < 0)
		return -1;
	const struct blk *l = &a->b[last];
	a->b[bi] = (struct blk){.addr = l->addr + l->size, .size = want, .seg = si, .prev = last,
				.next = -1, .live = true, .small = small};
	a->b[last].next = bi;
	a->s[si].last = bi;
	a->s[si].nblocks++;
	seg_touch(a, si);
	return bi;
}

/* A new block for a request nothing cached holds (PyTorch's alloc_block,
 * with the release of the cache and a retry when the device is full);
 * free and outside the pool's buckets. */
static int fresh_block(struct vf_alloc *a, int64_t size, bool small)
{
	if (a->cfg.expandable)
		return expand(a, size, small);
	int64_t seg = small ? SMALL_BUFFER
		      : size < MIN_LARGE_ALLOC ? LARGE_BUFFER : round_up(size, ROUND_LARGE);
	if (a->cfg.capacity_bytes > 0 && a->reserved + seg > a->cfg.capacity_bytes) {
		/* c10/cuda/CUDACachingAllocator.cpp malloc(): the failed
		 * cudaMalloc releases the cached blocks and alloc_block retries,
		 * counted in stats.num_alloc_retries */
		a->retries++;
		vf_alloc_empty_cache(a);
		if (a->reserved + seg > a->cfg.capacity_bytes)
			return -1;
	}
	return new_segment(a, seg, small);
}

static bool should_split(const struct vf_alloc *a, const struct blk *k, int64_t size)
{
	int64_t rest = k->size - size;
	if (k->small || a->cfg.expandable)
		return rest >= MIN_BLOCK;
	int64_t msplit = a->msplit;
	return size < msplit && rest > SMALL_SIZE;
}

int vf_alloc_malloc(struct vf_alloc *a, int64_t bytes)
{
	if (bytes <= 0)
		bytes = 1;
	if (bytes > VF_ALLOC_MAX_REQUEST)
		bytes = VF_ALLOC_MAX_REQUEST;
	int64_t size = (bytes + MIN_BLOCK - 1) & ~(int64_t)(MIN_BLOCK - 1); /* round_up: bytes > 0 */
	bool small = size <= SMALL_SIZE;
	int at;
	int bi = best_fit(a, size, small, &at);
	if (bi >= 0)
		free_take(a, small, at);
	else
		bi = fresh_block(a, size, small);
	if (bi < 0) {
		a->oom = true;
		return -1;
	}
	if (should_split(a, &a->b[bi], size)) {
		int ri = new_block(a);
		if (ri < 0) {
			free_add(a, bi);
			a->oom = true; /* the host's memory: no answer for the device */
			return -1;
		}
		struct blk *k = &a->b[bi];
		a->b[ri] = (struct blk){.addr = k->addr + size, .size = k->size - size, .seg = k->seg,
					.prev = bi, .next = k->next, .live = true, .small = k->small};
		if (k->next >= 0)
			a->b[k->next].prev = ri;
		else
			a->s[k->seg].last = ri;
		k->next = ri;
		k->size = size;
		a->s[k->seg].nblocks++;
		if (!free_add(a, ri))
			a->oom = true; /* the host's memory, as new_block's */
	}
	struct blk *k = &a->b[bi];
	k->used = true;
	k->req = size;
	a->requested += size;
	if (a->requested > a->peak_requested)
		a->peak_requested = a->requested;
	struct seg *g = &a->s[k->seg];
	g->used += k->size;
	if (g->empty) /* it was one free block: now used */
		empty_unlink(a, k->seg);
	seg_note(a, k->seg);
	a->allocated += k->size; /* an unsplit block counts whole, as in PyTorch's stats */
	if (a->allocated > a->peak_alloc)
		a->peak_alloc = a->allocated;
	if (a->peak_pending) {
		snapshot(a);
		a->peak_pending = false;
	}
	return bi;
}

/* n requests of `bytes` that each take a new large segment of their own
 * with nothing split off (so the next one finds no free block either):
 * made at once as one segment record of count n. */
static int64_t repeat_segments(struct vf_alloc *a, int64_t size, int64_t n)
{
	int64_t seg = size < MIN_LARGE_ALLOC ? LARGE_BUFFER : round_up(size, ROUND_LARGE);
	int64_t msplit = a->msplit;
	if (a->cfg.expandable || size <= SMALL_SIZE || best_fit(a, size, false, &(int){0}) >= 0 ||
	    (size < msplit && seg - size > SMALL_SIZE))
		return 0;
	if (a->cfg.capacity_bytes > 0) { /* as many as fit without releasing the cache */
		int64_t room = a->cfg.capacity_bytes - a->reserved;
		if (room / seg < n)
			n = room > 0 ? room / seg : 0;
	}
	if (n < 2)
		return 0;
	int bi = new_segment(a, seg, false);
	if (bi < 0)
		return 0;
	int si = a->b[bi].seg;
	a->s[si].count = n;
	a->next_addr += (n - 1) * (seg + (1 << 21));
	reserve(a, (n - 1) * seg);
	a->b[bi].used = true;
	a->s[si].used = seg;
	seg_touch(a, si);
	a->allocated += n * seg;
	if (a->allocated > a->peak_alloc)
		a->peak_alloc = a->allocated;
	a->b[bi].req = size;
	a->requested += n * size;
	if (a->requested > a->peak_requested)
		a->peak_requested = a->requested;
	snapshot(a);
	a->peak_pending = false;
	return n;
}

int64_t vf_alloc_malloc_repeat(struct vf_alloc *a, int64_t bytes, int64_t n)
{
	if (bytes <= 0)
		bytes = 1;
	if (bytes > VF_ALLOC_MAX_REQUEST)
		bytes = VF_ALLOC_MAX_REQUEST;
	int64_t done = 0;
	while (done < n) {
		int64_t k = repeat_segments(a, round_up(bytes, MIN_BLOCK), n - done);
		if (k == 0) {
			if (vf_alloc_malloc(a, bytes) < 0)
				break;
			k = 1;
		}
		done += k;
	}
	return done;
}

/* A request served by a cached block and freed at once leaves the
 * allocator as it was: the block taken (the lowest of its size: first in
 * its bucket), its remainder split off, then freed, merges with that
 * remainder again (and with nothing else: a free block's neighbours are
 * used, or it would have merged with them) and re-enters its bucket
 * first; no segment is made, so the reserved peak stands. Only the
 * allocated and requested peaks move, by the block used (the request,
 * or the whole block when unsplit) and the request. What differs is
 * invisible to every later call: block indices recycled in another
 * order, the place of a segment on the list of empty ones (empty_cache
 * releases them all), the empty bucket a remainder's size left behind,
 * and a segment left unnoted for the snapshot (it did not change). */
bool vf_alloc_malloc_free(struct vf_alloc *a, int64_t bytes)
{
	if (bytes <= 0)
		bytes = 1;
	if (bytes > VF_ALLOC_MAX_REQUEST)
		bytes = VF_ALLOC_MAX_REQUEST;
	int64_t size = (bytes + MIN_BLOCK - 1) & ~(int64_t)(MIN_BLOCK - 1);
	bool small = size <= SMALL_SIZE;
	int at;
	int bi = best_fit(a, size, small, &at);
	if (bi < 0) { /* a new segment or an expansion: made and freed */
		int h = vf_alloc_malloc(a, bytes);
		vf_alloc_release(a, h);
		return h >= 0;
	}
	const struct blk *k = &a->b[bi];
	int64_t used = should_split(a, k, size) ? size : k->size;
	if (a->requested + size > a->peak_requested)
		a->peak_requested = a->requested + size;
	if (a->allocated + used > a->peak_alloc)
		a->peak_alloc = a->allocated + used;
	return true;
}

/* Merge block j (free, right after i, out of the buckets) into i. */
static inline void merge_next(struct vf_alloc *a, int i)
{
	int j = a->b[i].next;
	a->b[i].size += a->b[j].size;
	a->b[i].next = a->b[j].next;
	if (a->b[j].next >= 0)
		a->b[a->b[j].next].prev = i;
	else
		a->s[a->b[i].seg].last = i;
	a->s[a->b[i].seg].nblocks--;
	drop_block(a, j);
}

void vf_alloc_release(struct vf_alloc *a, int h)
{
	if (h < 0 || h >= a->nb || !a->b[h].live || !a->b[h].used)
		return;
	struct blk *k = &a->b[h];
	k->used = false;
	a->requested -= k->req;
	a->allocated -= k->size;
	a->s[k->seg].used -= k->size;
	int n = k->next, p = k->prev;
	if (n >= 0 && !a->b[n].used) {
		free_remove(a, n);
		merge_next(a, h);
	}
	if (p >= 0 && !a->b[p].used) {
		free_remove(a, p);
		merge_next(a, p);
		h = p;
	}
	if (!free_add(a, h))
		a->oom = true; /* the host's memory, as new_block's */
	int si = a->b[h].seg;
	const struct seg *g = &a->s[si];
	if (a->empty_kept && g->used == 0 && g->nblocks == 1) /* live: it held h; not empty
								  * before: h was used */
		empty_link(a, si);
	seg_note(a, si);
}

int64_t vf_alloc_allocated(const struct vf_alloc *a) { return a->allocated; }
int64_t vf_alloc_reserved(const struct vf_alloc *a) { return a->reserved; }
int64_t vf_alloc_peak_allocated(const struct vf_alloc *a) { return a->peak_alloc; }
int64_t vf_alloc_peak_reserved(const struct vf_alloc *a) { return a->peak_reserved; }
int64_t vf_alloc_peak_requested(const struct vf_alloc *a) { return a->peak_requested; }
bool vf_alloc_oom(const struct vf_alloc *a) { return a->oom; }
int64_t vf_alloc_retries(const struct vf_alloc *a) { return a->retries; }

static int seg_cmp(const void *x, const void *y)
{
	const struct vf_alloc_segment *p = x, *q = y;
	return p->size < q->size ? 1 : p->size > q->size ? -1 : 0;
}

const struct vf_alloc_segment *vf_alloc_peak_segments(const struct vf_alloc *a, int *n,
						      int *total)
{
	struct vf_alloc *m = (struct vf_alloc *)a; /* the sorted copy is a cache */
	int64_t live = 0;
	for (int i = 0; i < a->nsnap; i++)
		live += a->snap[i].live ? a->snap[i].count : 0;
	*n = *total = 0;
	if (live == 0 || live > INT32_MAX ||
	    !grow((void **)&m->out, &m->capout, (int)live, sizeof *m->out))
		return m->out;
	int k = 0;
	for (int i = 0; i < a->nsnap; i++)
		for (int64_t c = 0; a->snap[i].live && c < a->snap[i].count; c++)
			m->out[k++] = a->snap[i].seg;
	qsort(m->out, (size_t)k, sizeof *m->out, seg_cmp);
	*total = k;
	*n = k < VF_ALLOC_MAX_SNAPSHOT ? k : VF_ALLOC_MAX_SNAPSHOT;
	return m->out;
}

/* One "key:value" item of PYTORCH_CUDA_ALLOC_CONF. */
static vf_status conf_item(const char *k, size_t kn, const char *v, size_t vn,
			   struct vf_alloc_config *cfg, struct vf_error *err)
{
	if (kn == 19 && memcmp(k, "expandable_segments", kn) == 0) {
		if (vn == 4 && memcmp(v, "True", 4) == 0)
			cfg->expandable = true;
		else if (vn == 5 && memcmp(v, "False", 5) == 0)
			cfg->expandable = false;
		else
			return vf_error_set(err, VF_EUSAGE,
					    "PYTORCH_CUDA_ALLOC_CONF: expandable_segments: expected True or False, got '%.*s'",
					    (int)vn, v);
	} else if (kn == 17 && memcmp(k, "max_split_size_mb", kn) == 0) {
		int64_t mb = 0;
		for (size_t i = 0; i < vn; i++) {
			if (v[i] < '0' || v[i] > '9' || mb > 1000000000)
				return vf_error_set(err, VF_EUSAGE,
						    "PYTORCH_CUDA_ALLOC_CONF: max_split_size_mb: expected a number of MiB, got '%.*s'",
						    (int)vn, v);
			mb = mb * 10 + (v[i] - '0');
		}
		if (vn == 0)
			return vf_error_set(err, VF_EUSAGE,
					    "PYTORCH_CUDA_ALLOC_CONF: max_split_size_mb: empty value");
		cfg->max_split_bytes = mb * ((int64_t)1 << 20);
	}
	return VF_OK;
}

vf_status vf_alloc_config_parse(const char *conf, struct vf_alloc_config *cfg,
				struct vf_error *err)
{
	const char *p = conf ? conf : "";
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *colon = memchr(p, ':', len);
		if (len > 0 && colon) {
			vf_status st = conf_item(p, (size_t)(colon - p), colon + 1,
						 len - (size_t)(colon - p) - 1, cfg, err);
			if (st != VF_OK)
				return st;
		}
		p += len + (end ? 1 : 0);
	}
	return VF_OK;
}
