/* test-alloc.c - the caching allocator simulation against traces whose
 * reserved bytes are derived by hand, one per pool rule of
 * CUDACachingAllocator.cpp (include/vramfit/estimate/alloc.h). */
#include "vf_test.h"
#include "vramfit/estimate/alloc.h"

#include "alloc-ref.h"
#include "replay-check.h"

#define KiB ((int64_t)1 << 10)
#define MiB ((int64_t)1 << 20)

static struct vf_alloc *mk(bool expandable, int64_t max_split, int64_t capacity)
{
	struct vf_alloc_config c = {.expandable = expandable, .max_split_bytes = max_split,
				    .capacity_bytes = capacity};
	struct vf_alloc *a = NULL;
	struct vf_error err = {0};
	if (vf_alloc_new(&c, &a, &err) != VF_OK)
		return NULL;
	return a;
}

/* 100 B -> 512 B in a 2 MiB small segment; 1 MiB still fits that segment
 * (2 MiB - 512 left); a second 1 MiB does not (1 MiB - 512 left): a new
 * 2 MiB segment. */
static void test_small_pool(void)
{
	struct vf_alloc *a = mk(false, 0, 0);
	CHECK(a != NULL);
	vf_alloc_malloc(a, 100);
	CHECK_INT(vf_alloc_allocated(a), 512);
	CHECK_INT(vf_alloc_reserved(a), 2 * MiB);
	vf_alloc_malloc(a, MiB);
	CHECK_INT(vf_alloc_reserved(a), 2 * MiB);
	vf_alloc_malloc(a, MiB);
	CHECK_INT(vf_alloc_reserved(a), 4 * MiB);
	CHECK_INT(vf_alloc_allocated(a), 512 + 2 * MiB);
	vf_alloc_free(a);
}

/* 1-10 MiB requests share 20 MiB segments: six 3 MiB blocks fill 18 MiB
 * (each split leaves > 1 MiB), the seventh needs a second segment. */
static void test_large_pool_shared_segments(void)
{
	struct vf_alloc *a = mk(false, 0, 0);
	for (int i = 0; i < 6; i++)
		vf_alloc_malloc(a, 3 * MiB);
	CHECK_INT(vf_alloc_reserved(a), 20 * MiB);
	vf_alloc_malloc(a, 3 * MiB);
	CHECK_INT(vf_alloc_reserved(a), 40 * MiB);
	CHECK_INT(vf_alloc_allocated(a), 21 * MiB);
	vf_alloc_free(a);
}

/* A split leaving <= 1 MiB in the large pool is not made: 9.5 MiB splits
 * a 20 MiB segment (10.5 MiB left); 9.75 MiB then takes the whole 10.5 MiB
 * block (0.75 MiB would remain) and counts as 10.5 MiB allocated. */
static void test_large_pool_no_small_split(void)
{
	struct vf_alloc *a = mk(false, 0, 0);
	vf_alloc_malloc(a, 9 * MiB + 512 * KiB);
	vf_alloc_malloc(a, 9 * MiB + 768 * KiB);
	CHECK_INT(vf_alloc_reserved(a), 20 * MiB);
	CHECK_INT(vf_alloc_allocated(a), 20 * MiB);
	vf_alloc_free(a);
}

/* >= 10 MiB: its own segment rounded up to 2 MiB (11 MiB + 1 B -> 12 MiB);
 * once freed it is split for a 5 MiB request (7 MiB left > 1 MiB) and
 * the 7 MiB rest serves a 6 MiB one: nothing new reserved. */
static void test_large_own_segment_and_reuse(void)
{
	struct vf_alloc *a = mk(false, 0, 0);
	int h = vf_alloc_malloc(a, 11 * MiB + 1);
	CHECK_INT(vf_alloc_reserved(a), 12 * MiB);
	CHECK_INT(vf_alloc_allocated(a), 12 * MiB); /* 1 MiB - 512 left: not split, counted whole */
	vf_alloc_release(a, h);
	vf_alloc_malloc(a, 5 * MiB);
	vf_alloc_malloc(a, 6 * MiB);
	CHECK_INT(vf_alloc_reserved(a), 12 * MiB);
	vf_alloc_malloc(a, 2 * MiB); /* the 7 MiB rest went whole to 6 MiB: a new 20 MiB one */
	CHECK_INT(vf_alloc_reserved(a), 32 * MiB);
	vf_alloc_free(a);
}

/* Best fit: 30 and 40 MiB cached; 25 MiB takes the 30 (not the first or
 * the largest), 35 MiB the 40; nothing new. A freed block merges with its
 * free neighbours: 25 + 5 rest back into 30, which then holds 30 MiB. */
static void test_best_fit_and_merge(void)
{
	struct vf_alloc *a = mk(false, 0, 0);
	int x = vf_alloc_malloc(a, 40 * MiB);
	int y = vf_alloc_malloc(a, 30 * MiB);
	vf_alloc_release(a, x);
	vf_alloc_release(a, y);
	int p = vf_alloc_malloc(a, 25 * MiB);
	int q = vf_alloc_malloc(a, 35 * MiB);
	CHECK_INT(vf_alloc_reserved(a), 70 * MiB);
	vf_alloc_release(a, p);
	vf_alloc_malloc(a, 30 * MiB);
	CHECK_INT(vf_alloc_reserved(a), 70 * MiB);
	vf_alloc_release(a, q);
	vf_alloc_malloc(a, 41 * MiB); /* no cached block holds it */
	CHECK_INT(vf_alloc_reserved(a), 112 * MiB);
	vf_alloc_free(a);
}

/* Best fit after a size enters below the one a request found before: 51
 * MiB takes a 60 MiB block (split; 51 MiB counted), so the first size
 * not below 51 MiB is 60 MiB; then a freed 52 MiB block (its own segment,
 * unsplit: 1 MiB over) enters the buckets below it, and the next 51 MiB
 * request must take it whole (52 MiB counted), not split a 60 MiB one
 * again (51 MiB): the pool's cache of request sizes sees the new size. */
static void test_best_fit_new_size_below(void)
{
	struct vf_alloc *a = mk(false, 0, 0);
	CHECK(a != NULL);
	int d = vf_alloc_malloc(a, 51 * MiB);
	int x = vf_alloc_malloc(a, 60 * MiB), y = vf_alloc_malloc(a, 60 * MiB);
	int z = vf_alloc_malloc(a, 60 * MiB);
	vf_alloc_release(a, x);
	vf_alloc_release(a, y);
	int e = vf_alloc_malloc(a, 51 * MiB);
	CHECK_INT(vf_alloc_allocated(a), 52 * MiB + 60 * MiB + 51 * MiB);
	vf_alloc_release(a, e);
	vf_alloc_release(a, d);
	vf_alloc_release(a, z); /* the 52 MiB block enters the buckets */
	CHECK_INT(vf_alloc_allocated(a), 0);
	vf_alloc_malloc(a, 51 * MiB);
	CHECK_INT(vf_alloc_allocated(a), 52 * MiB);
	CHECK_INT(vf_alloc_reserved(a), 52 * MiB + 3 * 60 * MiB);
	vf_alloc_free(a);
}

/* max_split_size_mb:32: a cached 40 MiB block is oversize: a 5 MiB request
 * may not split it (new 20 MiB segment), a 35 MiB one takes it whole
 * (35 >= 32 and 40 < 35 + 20) and counts 40 MiB allocated; 36 MiB may
 * not take a cached 60 MiB block (60 >= 36 + 20): its own 36 MiB. */
static void test_max_split_size(void)
{
	struct vf_alloc *a = mk(false, 32 * MiB, 0);
	int h = vf_alloc_malloc(a, 40 * MiB);
	vf_alloc_release(a, h);
	vf_alloc_malloc(a, 5 * MiB);
	CHECK_INT(vf_alloc_reserved(a), 60 * MiB);
	vf_alloc_malloc(a, 35 * MiB);
	CHECK_INT(vf_alloc_reserved(a), 60 * MiB);
	CHECK_INT(vf_alloc_allocated(a), 45 * MiB);
	int g = vf_alloc_malloc(a, 60 * MiB);
	vf_alloc_release(a, g);
	vf_alloc_malloc(a, 36 * MiB); /* 60 >= 36 + 20: not this block */
	CHECK_INT(vf_alloc_reserved(a), 156 * MiB);
	vf_alloc_free(a);
}

/* expandable_segments:True: 3 MiB maps a 20 MiB page of the large pool's
 * segment; 30 MiB extends the 17 MiB free tail by 13 -> 20 MiB: 40 MiB in
 * all (cudaMalloc segments: 20 + 30 = 50). */
static void test_expandable(void)
{
	struct vf_alloc *a = mk(true, 0, 0);
	vf_alloc_malloc(a, 3 * MiB);
	vf_alloc_malloc(a, 30 * MiB);
	CHECK_INT(vf_alloc_reserved(a), 40 * MiB);
	vf_alloc_free(a);
	a = mk(false, 0, 0);
	vf_alloc_malloc(a, 3 * MiB);
	vf_alloc_malloc(a, 30 * MiB);
	CHECK_INT(vf_alloc_reserved(a), 50 * MiB);
	vf_alloc_free(a);
}

/* Nothing is returned within a step; empty_cache returns unsplit free
 * segments (the peak stays); a full device releases the cache and
 * retries before failing. */
static void test_empty_cache_and_capacity(void)
{
	struct vf_alloc *a = mk(false, 0, 50 * MiB);
	int h = vf_alloc_malloc(a, 30 * MiB);
	vf_alloc_release(a, h);
	CHECK_INT(vf_alloc_reserved(a), 30 * MiB);
	vf_alloc_malloc(a, 40 * MiB); /* 70 > 50: the cached 30 is released first */
	CHECK_INT(vf_alloc_reserved(a), 40 * MiB);
	CHECK(!vf_alloc_oom(a));
	CHECK(vf_alloc_malloc(a, 20 * MiB) < 0);
	CHECK(vf_alloc_oom(a));
	CHECK_INT(vf_alloc_peak_reserved(a), 40 * MiB);
	vf_alloc_free(a);

	a = mk(false, 0, 0);
	h = vf_alloc_malloc(a, 30 * MiB);
	int k = vf_alloc_malloc(a, 100);
	vf_alloc_release(a, h);
	vf_alloc_empty_cache(a);
	CHECK_INT(vf_alloc_reserved(a), 2 * MiB);
	CHECK_INT(vf_alloc_peak_reserved(a), 32 * MiB);
	int n = 0, total = 0;
	const struct vf_alloc_segment *s = vf_alloc_peak_segments(a, &n, &total);
	CHECK_INT(total, 2);
	CHECK(n == 2 && s[0].size == 30 * MiB && s[0].used == 30 * MiB && !s[0].small);
	CHECK(n == 2 && s[1].size == 2 * MiB && s[1].used == 512 && s[1].small);
	vf_alloc_release(a, k);
	vf_alloc_free(a);
}


/* The ordered free blocks against the reference (alloc-ref.h: the linear
 * scans they replaced) on random traces of every pool rule: sizes from
 * 1 B to 300 MiB (small, shared large, own segment, oversize), frees of
 * random live handles, empty_cache, with and without expandable segments,
 * max_split_size and a capacity. After every call the counters agree;
 * at the end the segments at the peak agree, one by one. */
static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
	return xorshift64(&rnd_state);
}

static int64_t rnd_size(void)
{
	switch (rnd() % 6) {
	case 0: return 1 + (int64_t)(rnd() % 4096);             /* tiny */
	case 1: return (int64_t)(rnd() % MiB) + 1;              /* small pool */
	case 2: return MiB + (int64_t)(rnd() % (9 * MiB));      /* shared 20 MiB segments */
	case 3: return 10 * MiB + (int64_t)(rnd() % (90 * MiB)); /* own segment */
	case 4: return 25 * MiB;                                  /* repeated sizes: ties */
	default: return (int64_t)(rnd() % (300 * MiB)) + 1;
	}
}

static void differential_run(bool expandable, int64_t max_split, int64_t capacity, int ops,
			     bool peaks_only)
{
	struct vf_alloc_config c = {.expandable = expandable, .max_split_bytes = max_split,
				    .capacity_bytes = capacity};
	struct vf_alloc *a = NULL;
	struct ref_alloc *r = NULL;
	struct vf_error err = {0};
	CHECK(vf_alloc_new(&c, &a, &err) == VF_OK && ref_alloc_new(&c, &r, &err) == VF_OK);
	if (peaks_only)
		vf_alloc_peaks_only(a);
	enum { LIVE = 512 };
	int ha[LIVE], hr[LIVE], n = 0, bad = 0;
	for (int op = 0; op < ops && !bad; op++) {
		uint64_t k = rnd() % 100;
		if (k < 55 || n == 0) {
			int64_t b = rnd_size();
			int x = vf_alloc_malloc(a, b), y = ref_alloc_malloc(r, b);
			bad += (x < 0) != (y < 0);
			if (x >= 0 && y >= 0 && n < LIVE)
				ha[n] = x, hr[n] = y, n++;
		} else if (k < 97) {
			int i = (int)(rnd() % (uint64_t)n);
			vf_alloc_release(a, ha[i]);
			ref_alloc_release(r, hr[i]);
			ha[i] = ha[n - 1], hr[i] = hr[n - 1], n--;
		} else {
			vf_alloc_empty_cache(a);
			ref_alloc_empty_cache(r);
		}
		bad += vf_alloc_allocated(a) != ref_alloc_allocated(r);
		bad += vf_alloc_reserved(a) != ref_alloc_reserved(r);
		bad += vf_alloc_peak_reserved(a) != ref_alloc_peak_reserved(r);
		bad += vf_alloc_peak_allocated(a) != ref_alloc_peak_allocated(r);
		bad += vf_alloc_oom(a) != ref_alloc_oom(r);
	}
	CHECK_INT(bad, 0);
	int na = 0, ta = 0, nr = 0, tr = 0;
	const struct vf_alloc_segment *sa = vf_alloc_peak_segments(a, &na, &ta);
	const struct vf_alloc_segment *sr = ref_alloc_peak_segments(r, &nr, &tr);
	if (peaks_only) { /* the segments are not recorded: none, not stale ones */
		CHECK_INT(na, 0);
		CHECK_INT(ta, 0);
		vf_alloc_free(a);
		ref_alloc_free(r);
		return;
	}
	CHECK_INT(ta, tr);
	CHECK_INT(na, nr);
	for (int i = 0; i < na && i < nr; i++) /* same sizes in order; the rest of a tie may differ */
		bad += sa[i].size != sr[i].size || sa[i].small != sr[i].small;
	int64_t ua = 0, ur = 0, ba = 0, br = 0;
	for (int i = 0; i < na; i++)
		ua += sa[i].used, ba += sa[i].blocks;
	for (int i = 0; i < nr; i++)
		ur += sr[i].used, br += sr[i].blocks;
	CHECK_INT(ua, ur);
	CHECK_INT(ba, br);
	CHECK_INT(bad, 0);
	vf_alloc_free(a);
	ref_alloc_free(r);
}

/* Each trace twice from the same random state: with the segments at the
 * peak recorded, and with the peaks only (vf_alloc_peaks_only), whose
 * counters must agree with the reference just the same. */
static void differential(bool expandable, int64_t max_split, int64_t capacity, int ops)
{
	uint64_t seed = rnd_state;
	differential_run(expandable, max_split, capacity, ops, false);
	rnd_state = seed;
	differential_run(expandable, max_split, capacity, ops, true);
}

static void test_differential(void)
{
	for (int round = 0; round < 8; round++) {
		differential(false, 0, 0, 6000);
		differential(false, 128 * MiB, 0, 6000);
		differential(false, 64 * MiB, 0, 6000);
		differential(true, 0, 0, 6000);
		differential(false, 0, 2048 * MiB, 6000);
		differential(false, 80 * MiB, 1536 * MiB, 6000);
		differential(true, 0, 2048 * MiB, 6000);
	}
}

/* vf_alloc_malloc_free against vf_alloc_malloc and vf_alloc_release of
 * its handle, on two allocators fed the same random trace (a third of
 * its calls such pairs, the rest allocations, frees and empty_cache, in
 * every pool rule, with expandable segments, max_split_size and
 * capacities that make the cache be released and requests fail): after
 * every call the counters and peaks agree; at the end the segments at
 * the peak, byte for byte. */
static void malloc_free_run(bool expandable, int64_t max_split, int64_t capacity, bool peaks_only)
{
	struct vf_alloc *a = mk(expandable, max_split, capacity);
	struct vf_alloc *b = mk(expandable, max_split, capacity);
	CHECK(a != NULL && b != NULL);
	if (peaks_only) {
		vf_alloc_peaks_only(a);
		vf_alloc_peaks_only(b);
	}
	enum { LIVE = 512 };
	int ha[LIVE], hb[LIVE], n = 0, bad = 0, pairs = 0;
	for (int op = 0; op < 6000 && !bad; op++) {
		uint64_t k = rnd() % 100;
		if (k < 33) {
			int64_t sz = rnd_size();
			bool x = vf_alloc_malloc_free(a, sz);
			int h = vf_alloc_malloc(b, sz);
			vf_alloc_release(b, h);
			bad += x != (h >= 0);
			pairs++;
		} else if (k < 70 || n == 0) {
			int64_t sz = rnd_size();
			int x = vf_alloc_malloc(a, sz), y = vf_alloc_malloc(b, sz);
			bad += (x < 0) != (y < 0);
			if (x >= 0 && y >= 0 && n < LIVE)
				ha[n] = x, hb[n] = y, n++;
		} else if (k < 98) {
			int i = (int)(rnd() % (uint64_t)n);
			vf_alloc_release(a, ha[i]);
			vf_alloc_release(b, hb[i]);
			ha[i] = ha[n - 1], hb[i] = hb[n - 1], n--;
		} else {
			vf_alloc_empty_cache(a);
			vf_alloc_empty_cache(b);
		}
		bad += vf_alloc_allocated(a) != vf_alloc_allocated(b);
		bad += vf_alloc_reserved(a) != vf_alloc_reserved(b);
		bad += vf_alloc_peak_reserved(a) != vf_alloc_peak_reserved(b);
		bad += vf_alloc_peak_allocated(a) != vf_alloc_peak_allocated(b);
		bad += vf_alloc_peak_requested(a) != vf_alloc_peak_requested(b);
		bad += vf_alloc_oom(a) != vf_alloc_oom(b);
	}
	CHECK_INT(bad, 0);
	CHECK(pairs > 1000);
	int na = 0, ta = 0, nb = 0, tb = 0;
	const struct vf_alloc_segment *sa = vf_alloc_peak_segments(a, &na, &ta);
	const struct vf_alloc_segment *sb = vf_alloc_peak_segments(b, &nb, &tb);
	CHECK_INT(ta, tb);
	CHECK_INT(na, nb);
	for (int i = 0; i < na && i < nb; i++) /* field by field: the struct has padding */
		bad += sa[i].small != sb[i].small || sa[i].size != sb[i].size ||
		       sa[i].used != sb[i].used || sa[i].blocks != sb[i].blocks;
	CHECK_INT(bad, 0);
	CHECK(peaks_only ? ta == 0 : ta > 0);
	vf_alloc_free(a);
	vf_alloc_free(b);
}

static void test_malloc_free(void)
{
	for (int round = 0; round < 4; round++) {
		for (int po = 0; po < 2; po++) {
			malloc_free_run(false, 0, 0, po);
			malloc_free_run(false, 128 * MiB, 0, po);
			malloc_free_run(true, 0, 0, po);
			malloc_free_run(false, 0, 2048 * MiB, po);
			malloc_free_run(false, 80 * MiB, 1536 * MiB, po);
			malloc_free_run(true, 0, 2048 * MiB, po);
		}
	}
}

/* Many free blocks of a few sizes (the holes a model's layers leave):
 * the buckets grow past their first storage, blocks enter and leave them
 * between others (frees in random order, merges with either neighbour),
 * and emptied buckets are dropped and their slots reused; against the
 * reference after every call, then the segments at the peak. */
static void test_differential_ties(void)
{
	static const int64_t sizes[] = {3 * MiB, 3 * MiB + 512, 25 * MiB, 512 * KiB, 700 * KiB,
					2 * MiB + 512};
	for (int round = 0; round < 6; round++) {
		struct vf_alloc_config c = {.max_split_bytes = round % 3 == 2 ? 24 * MiB : 0,
					    .capacity_bytes = round % 2 ? 3000 * MiB : 0};
		struct vf_alloc *a = NULL;
		struct ref_alloc *r = NULL;
		struct vf_error err = {0};
		CHECK(vf_alloc_new(&c, &a, &err) == VF_OK && ref_alloc_new(&c, &r, &err) == VF_OK);
		enum { LIVE = 1024 };
		int ha[LIVE], hr[LIVE], n = 0, bad = 0;
		for (int op = 0; op < 20000 && !bad; op++) {
			/* phases: mostly allocating, then mostly freeing */
			bool fill = (op / 2500) % 2 == 0;
			if (n == 0 || (n < LIVE && rnd() % 100 < (fill ? 80u : 25u))) {
				int64_t b = sizes[rnd() % (sizeof sizes / sizeof *sizes)];
				int x = vf_alloc_malloc(a, b), y = ref_alloc_malloc(r, b);
				bad += (x < 0) != (y < 0);
				if (x >= 0 && y >= 0)
					ha[n] = x, hr[n] = y, n++;
			} else {
				int i = (int)(rnd() % (uint64_t)n);
				vf_alloc_release(a, ha[i]);
				ref_alloc_release(r, hr[i]);
				ha[i] = ha[n - 1], hr[i] = hr[n - 1], n--;
			}
			bad += vf_alloc_allocated(a) != ref_alloc_allocated(r);
			bad += vf_alloc_reserved(a) != ref_alloc_reserved(r);
			bad += vf_alloc_peak_reserved(a) != ref_alloc_peak_reserved(r);
			bad += vf_alloc_oom(a) != ref_alloc_oom(r);
		}
		CHECK_INT(bad, 0);
		int na = 0, ta = 0, nr = 0, tr = 0;
		const struct vf_alloc_segment *sa = vf_alloc_peak_segments(a, &na, &ta);
		const struct vf_alloc_segment *sr = ref_alloc_peak_segments(r, &nr, &tr);
		CHECK_INT(ta, tr);
		CHECK_INT(na, nr);
		for (int i = 0; i < na && i < nr; i++)
			bad += sa[i].size != sr[i].size || sa[i].small != sr[i].small;
		CHECK_INT(bad, 0);
		vf_alloc_free(a);
		ref_alloc_free(r);
	}
}

/* n identical allocations at once (the DDP buckets) = n calls, the
 * segments at the peak included; with a capacity, the ones that fit are
 * made at once and the next one releases the cache and fails as a call
 * would. */
static void test_repeat(void)
{
	for (int cap = 0; cap < 2; cap++) {
		struct vf_alloc *a = mk(false, 0, cap ? 1000 * MiB : 0);
		struct vf_alloc *b = mk(false, 0, cap ? 1000 * MiB : 0);
		int h1 = vf_alloc_malloc(a, 30 * MiB), h2 = vf_alloc_malloc(b, 30 * MiB);
		vf_alloc_release(a, h1);
		vf_alloc_release(b, h2);
		vf_alloc_malloc(a, 3 * MiB);
		vf_alloc_malloc(b, 3 * MiB);
		int64_t made = vf_alloc_malloc_repeat(a, 25 * MiB, 100);
		int64_t calls = 0;
		for (int i = 0; i < 100; i++)
			calls += vf_alloc_malloc(b, 25 * MiB) >= 0;
		CHECK_INT(made, calls);
		CHECK(cap ? made < 100 : made == 100); /* 1000 MiB hold fewer */
		CHECK_INT(vf_alloc_reserved(a), vf_alloc_reserved(b));
		CHECK_INT(vf_alloc_allocated(a), vf_alloc_allocated(b));
		CHECK_INT(vf_alloc_peak_reserved(a), vf_alloc_peak_reserved(b));
		CHECK(vf_alloc_oom(a) == vf_alloc_oom(b));
		int na, ta, nb, tb;
		const struct vf_alloc_segment *sa = vf_alloc_peak_segments(a, &na, &ta);
		const struct vf_alloc_segment *sb = vf_alloc_peak_segments(b, &nb, &tb);
		CHECK_INT(ta, tb);
		for (int i = 0; i < na && i < nb; i++)
			CHECK(sa[i].size == sb[i].size && sa[i].used == sb[i].used &&
			      sa[i].blocks == sb[i].blocks);
		vf_alloc_free(a);
		vf_alloc_free(b);
	}
}

static void test_config_parse(void)
{
	struct vf_alloc_config c = {0};
	struct vf_error err = {0};
	CHECK(vf_alloc_config_parse("expandable_segments:True,max_split_size_mb:128", &c, &err) ==
	      VF_OK);
	CHECK(c.expandable);
	CHECK_INT(c.max_split_bytes, 128 * MiB);
	CHECK(vf_alloc_config_parse("garbage_collection_threshold:0.6", &c, &err) == VF_OK);
	CHECK(vf_alloc_config_parse("expandable_segments:yes", &c, &err) == VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "expandable_segments");
	CHECK(vf_alloc_config_parse("max_split_size_mb:12x", &c, &err) == VF_EUSAGE);
	CHECK(vf_alloc_config_parse("", &c, &err) == VF_OK);
}

int main(void)
{
	RUN(test_small_pool);
	RUN(test_large_pool_shared_segments);
	RUN(test_large_pool_no_small_split);
	RUN(test_large_own_segment_and_reuse);
	RUN(test_best_fit_and_merge);
	RUN(test_best_fit_new_size_below);
	RUN(test_max_split_size);
	RUN(test_expandable);
	RUN(test_empty_cache_and_capacity);
	RUN(test_differential);
	RUN(test_differential_ties);
	RUN(test_repeat);
	RUN(test_malloc_free);
	RUN(test_config_parse);
	return vf_test_done();
}
