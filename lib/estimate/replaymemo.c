/* replaymemo.c - the peaks of a step's allocator replay (steptrace.h),
 * remembered in a struct vf_replay_memo that the caller owns (one per
 * command run: DESIGN.md's no global state): the replay is a pure function
 * of the step's tensors and the allocator configuration, and one command
 * asks for the same replay many times (every GPU row of an estimate
 * replays the same step without a capacity; the advice, the largest
 * micro-batch and fit's confirmation replay the same candidate setups on
 * each row). A replay asked for again of the same memo is answered from
 * it; without a memo (NULL) every replay runs.
 *
 * The key is the whole struct vf__step, compared byte for byte (fill_step
 * zeroes it before filling, so equal steps are equal bytes; two steps
 * that differ in any byte, padding included, are two keys: a difference
 * can cost a replay, never give a wrong answer), and the configuration's
 * three fields. What a memo holds cannot change an answer, only its cost.
 * A fixed table of MEMO_SLOTS entries, replaced in turn; a mutex
 * serialises lookups and insertions (a replay itself runs outside the
 * lock), so threads may share one memo. */
#include "steptrace.h"

#include "vramfit/estimate/estimate.h"

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

struct vf_replay_memo {
	struct memo_ent ent[MEMO_SLOTS];
	int next;
	pthread_mutex_t lock;
};

struct vf_replay_memo *vf_replay_memo_new(void)
{
	struct vf_replay_memo *m = calloc(1, sizeof *m);
	if (m && pthread_mutex_init(&m->lock, NULL) != 0) {
		free(m);
		m = NULL;
	}
	return m;
}

void vf_replay_memo_free(struct vf_replay_memo *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->lock);
	free(m);
}

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

static bool memo_find(struct vf_replay_memo *m, uint64_t h, const struct vf__step *s,
		      const struct vf_alloc_config *c, struct vf__replay_peaks *out)
{
	bool found = false;
	pthread_mutex_lock(&m->lock);
	for (int i = 0; i < MEMO_SLOTS && !found; i++) {
		if (same(&m->ent[i], h, s, c)) {
			*out = m->ent[i].peaks;
			found = true;
		}
	}
	pthread_mutex_unlock(&m->lock);
	return found;
}

/* Remember a replay's peaks. */
static void memo_add(struct vf_replay_memo *m, uint64_t h, const struct vf__step *s,
		     const struct vf_alloc_config *c, const struct vf__replay_peaks *p)
{
	pthread_mutex_lock(&m->lock);
	struct memo_ent *e = &m->ent[m->next];
	m->next = (m->next + 1) % MEMO_SLOTS;
	e->used = true;
	e->hash = h;
	memcpy(&e->step, s, sizeof *s);
	e->expandable = c->expandable;
	e->max_split = c->max_split_bytes;
	e->capacity = c->capacity_bytes;
	e->peaks = *p;
	pthread_mutex_unlock(&m->lock);
}

void vf__replay_peaks_of(const struct vf_alloc *a, struct vf__replay_peaks *out)
{
	out->reserved = vf_alloc_peak_reserved(a);
	out->allocated = vf_alloc_peak_allocated(a);
	out->requested = vf_alloc_peak_requested(a);
	out->oom = vf_alloc_oom(a);
}

vf_status vf__step_peaks(const struct vf__step *s, const struct vf_alloc_config *cfg,
			 struct vf_replay_memo *memo, struct vf__replay_peaks *out,
			 struct vf_error *err)
{
	struct vf_alloc_config c = cfg ? *cfg : (struct vf_alloc_config){0};
	uint64_t h = memo ? step_hash(s, &c) : 0;
	if (memo && memo_find(memo, h, s, &c, out))
		return VF_OK;
	struct vf_alloc *a = NULL;
	vf_status st = vf__step_simulate(s, &c, &a, err);
	if (st != VF_OK)
		return st;
	vf__replay_peaks_of(a, out);
	vf_alloc_free(a);
	if (memo)
		memo_add(memo, h, s, &c, out);
	return VF_OK;
}
