/* replaymemo.c - the peaks of a step's allocator replay (steptrace.h),
 * remembered: the replay is a pure function of the step's tensors and the
 * allocator configuration, and one command asks for the same replay many
 * times (every GPU row of an estimate replays the same step without a
 * capacity; the advice, the largest micro-batch and fit's confirmation
 * replay the same candidate setups on each row). A replay asked for again
 * is answered from here.
 *
 * The key is the whole struct vf__step, compared byte for byte (fill_step
 * zeroes it before filling, so equal steps are equal bytes; two steps
 * that differ in any byte, padding included, are two keys: a difference
 * can cost a replay, never give a wrong answer), and the configuration's
 * three fields. The memo is process-wide state of a pure function: what
 * it holds cannot change an answer, only its cost. A fixed table of
 * MEMO_SLOTS entries, replaced in turn; a mutex serialises lookups and
 * insertions (a replay itself runs outside the lock). */
#include "steptrace.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MEMO_SLOTS 64

struct memo_ent {
	bool used;
	uint64_t hash;
	struct vf__step step;
	bool expandable;
	int64_t max_split, capacity;
	struct vf__replay_peaks peaks;
};

static struct memo_ent *memo;
static int memo_next;
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;

/* FNV-1a over the step's bytes and the configuration. */
static uint64_t step_hash(const struct vf__step *s, const struct vf_alloc_config *c)
{
	const unsigned char *p = (const unsigned char *)s;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < sizeof *s; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	h = (h ^ (uint64_t)c->expandable) * 1099511628211ull;
	h = (h ^ (uint64_t)c->max_split_bytes) * 1099511628211ull;
	h = (h ^ (uint64_t)c->capacity_bytes) * 1099511628211ull;
	return h;
}

static bool same(const struct memo_ent *m, uint64_t h, const struct vf__step *s,
		 const struct vf_alloc_config *c)
{
	return m->used && m->hash == h && m->expandable == c->expandable &&
	       m->max_split == c->max_split_bytes && m->capacity == c->capacity_bytes &&
	       memcmp(&m->step, s, sizeof *s) == 0;
}

static bool memo_find(uint64_t h, const struct vf__step *s, const struct vf_alloc_config *c,
		      struct vf__replay_peaks *out)
{
	bool found = false;
	pthread_mutex_lock(&memo_lock);
	for (int i = 0; memo && i < MEMO_SLOTS && !found; i++) {
		if (same(&memo[i], h, s, c)) {
			*out = memo[i].peaks;
			found = true;
		}
	}
	pthread_mutex_unlock(&memo_lock);
	return found;
}

/* Remember a replay's peaks (nothing when the table cannot be made). */
static void memo_add(uint64_t h, const struct vf__step *s, const struct vf_alloc_config *c,
		     const struct vf__replay_peaks *p)
{
	pthread_mutex_lock(&memo_lock);
	if (!memo)
		memo = calloc(MEMO_SLOTS, sizeof *memo);
	if (memo) {
		struct memo_ent *m = &memo[memo_next];
		memo_next = (memo_next + 1) % MEMO_SLOTS;
		m->used = true;
		m->hash = h;
		memcpy(&m->step, s, sizeof *s);
		m->expandable = c->expandable;
		m->max_split = c->max_split_bytes;
		m->capacity = c->capacity_bytes;
		m->peaks = *p;
	}
	pthread_mutex_unlock(&memo_lock);
}

void vf__replay_peaks_of(const struct vf_alloc *a, struct vf__replay_peaks *out)
{
	out->reserved = vf_alloc_peak_reserved(a);
	out->allocated = vf_alloc_peak_allocated(a);
	out->requested = vf_alloc_peak_requested(a);
	out->oom = vf_alloc_oom(a);
}

vf_status vf__step_peaks(const struct vf__step *s, const struct vf_alloc_config *cfg,
			 struct vf__replay_peaks *out, struct vf_error *err)
{
	struct vf_alloc_config c = cfg ? *cfg : (struct vf_alloc_config){0};
	uint64_t h = step_hash(s, &c);
	if (memo_find(h, s, &c, out))
		return VF_OK;
	struct vf_alloc *a = NULL;
	vf_status st = vf__step_simulate(s, &c, &a, err);
	if (st != VF_OK)
		return st;
	vf__replay_peaks_of(a, out);
	vf_alloc_free(a);
	memo_add(h, s, &c, out);
	return VF_OK;
}

void vf__replay_memo_clear(void)
{
	pthread_mutex_lock(&memo_lock);
	free(memo);
	memo = NULL;
	memo_next = 0;
	pthread_mutex_unlock(&memo_lock);
}
