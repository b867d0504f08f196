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
 * lock), so threads may share one memo. A replay is claimed before it
 * runs (its entry pending): a thread asking for it meanwhile waits for
 * its peaks instead of running it too (an estimate's GPU rows on threads
 * ask for the same advice candidates at once); a pending entry is never
 * replaced. A thread that only warms the memo (vf__replay_memo_nowait)
 * leaves a pending replay to the thread running it instead of waiting.
 * Forks: callers announce the replays they will ask for
 * (vf__replay_memo_expect); a replay that shares its prefix
 * (vf__step_prefix_key: all but the optimizer's fields) with announced
 * ones not yet run keeps a copy of its allocator after the prefix
 * (PREFIX_SLOTS of them), and those finish from a copy of it (the last
 * from the kept one itself) instead of replaying from the start. Nothing
 * announced, nothing kept. A prefix being replayed is claimed (pending);
 * a warming thread asking for it leaves the replay to later, as above. */
#include "steptrace.h"

#include "vramfit/estimate/estimate.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MEMO_SLOTS 64
#define PREFIX_SLOTS 4
#define EXPECT_SLOTS 64

/* this thread warms the memo: a pending replay is not waited for */
static _Thread_local bool nowait;

void vf__replay_memo_nowait(bool on)
{
	nowait = on;
}

struct memo_ent {
	bool used;
	bool pending; /* claimed: its replay runs, peaks not yet there */
	uint64_t hash;
	struct vf__step step;
	bool expandable;
	int64_t max_split, capacity;
	struct vf__replay_peaks peaks;
};

/* A replay stopped before its first optimizer step (vf__step_prefix),
 * kept to be forked: key is its step's vf__step_prefix_key. */
struct prefix_ent {
	uint64_t hash;
	struct vf__step key;
	bool expandable;
	int64_t max_split, capacity;
	struct vf__replay_state *state; /* NULL: unused, or pending */
	bool pending; /* its prefix being replayed by a thread */
};

struct vf_replay_memo {
	struct memo_ent ent[MEMO_SLOTS];
	struct prefix_ent pre[PREFIX_SLOTS];
	int pre_next;
	int64_t forks; /* replays finished from a kept prefix */
	/* replays announced and not yet run (vf__replay_memo_expect): the
	 * hash of each one's step and of its prefix key */
	uint64_t exp_full[EXPECT_SLOTS], exp_pre[EXPECT_SLOTS];
	int nexp;
	int next;
	int hi; /* entries [0, hi) have been used: the others are not read (nor
		 * their pages touched) */
	int64_t replays;
	pthread_mutex_t lock;
	pthread_cond_t done; /* a pending entry filled or given up */
};

struct vf_replay_memo *vf_replay_memo_new(void)
{
	struct vf_replay_memo *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	if (pthread_mutex_init(&m->lock, NULL) != 0) {
		free(m);
		return NULL;
	}
	if (pthread_cond_init(&m->done, NULL) != 0) {
		pthread_mutex_destroy(&m->lock);
		free(m);
		return NULL;
	}
	return m;
}

void vf_replay_memo_free(struct vf_replay_memo *m)
{
	if (!m)
		return;
	for (int i = 0; i < PREFIX_SLOTS; i++)
		vf__replay_state_free(m->pre[i].state);
	pthread_cond_destroy(&m->done);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

int64_t vf_replay_memo_replays(struct vf_replay_memo *m)
{
	if (!m)
		return 0;
	pthread_mutex_lock(&m->lock);
	int64_t n = m->replays;
	pthread_mutex_unlock(&m->lock);
	return n;
}

int64_t vf_replay_memo_forks(struct vf_replay_memo *m)
{
	if (!m)
		return 0;
	pthread_mutex_lock(&m->lock);
	int64_t n = m->forks;
	pthread_mutex_unlock(&m->lock);
	return n;
}

/* FNV-1a over the step's bytes, eight at a time (then the rest one by
 * one), and the configuration. */
static uint64_t step_hash(const struct vf__step *s, const struct vf_alloc_config *c)
{
	const unsigned char *p = (const unsigned char *)s;
	uint64_t h = 1469598103934665603ull;
	size_t i = 0;
	for (; i + 8 <= sizeof *s; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 1099511628211ull;
	}
	for (; i < sizeof *s; i++)
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

/* Under the lock: 1 with *out when the replay is there; 0 with *slot the
 * entry claimed for the caller to run it (-1: every entry pending, run it
 * unremembered). Waits while another thread runs the same replay, or,
 * when this thread only warms the memo (nowait), returns 2. */
static int memo_claim(struct vf_replay_memo *m, uint64_t h, const struct vf__step *s,
		      const struct vf_alloc_config *c, struct vf__replay_peaks *out, int *slot)
{
	pthread_mutex_lock(&m->lock);
	for (;;) {
		int i = 0;
		while (i < m->hi && !same(&m->ent[i], h, s, c))
			i++;
		if (i == m->hi)
			break;
		if (!m->ent[i].pending || nowait) {
			int got = m->ent[i].pending ? 2 : 1;
			if (got == 1)
				*out = m->ent[i].peaks;
			pthread_mutex_unlock(&m->lock);
			return got;
		}
		pthread_cond_wait(&m->done, &m->lock);
	}
	*slot = -1;
	for (int k = 0; k < MEMO_SLOTS && *slot < 0; k++) {
		int i = (m->next + k) % MEMO_SLOTS;
		if (!m->ent[i].pending)
			*slot = i;
	}
	if (*slot >= 0) {
		struct memo_ent *e = &m->ent[*slot];
		m->next = (*slot + 1) % MEMO_SLOTS;
		if (*slot >= m->hi)
			m->hi = *slot + 1;
		e->used = true;
		e->pending = true;
		e->hash = h;
		memcpy(&e->step, s, sizeof *s);
		e->expandable = c->expandable;
		e->max_split = c->max_split_bytes;
		e->capacity = c->capacity_bytes;
	}
	m->replays++;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

/* The claimed entry's peaks (p), or, when its replay failed (p NULL), the
 * entry given up; the threads waiting on it look again. */
static void memo_fill(struct vf_replay_memo *m, int slot, const struct vf__replay_peaks *p)
{
	if (slot < 0)
		return;
	pthread_mutex_lock(&m->lock);
	struct memo_ent *e = &m->ent[slot];
	e->pending = false;
	if (p)
		e->peaks = *p;
	else
		e->used = false;
	pthread_cond_broadcast(&m->done);
	pthread_mutex_unlock(&m->lock);
}

void vf__replay_peaks_of(const struct vf_alloc *a, struct vf__replay_peaks *out)
{
	out->reserved = vf_alloc_peak_reserved(a);
	out->allocated = vf_alloc_peak_allocated(a);
	out->requested = vf_alloc_peak_requested(a);
	out->oom = vf_alloc_oom(a);
	out->retries = vf_alloc_retries(a);
}

static bool same_prefix(const struct prefix_ent *p, uint64_t h, const struct vf__step *key,
			const struct vf_alloc_config *c)
{
	return (p->state || p->pending) && p->hash == h && p->expandable == c->expandable &&
	       p->max_split == c->max_split_bytes && p->capacity == c->capacity_bytes &&
	       memcmp(&p->key, key, sizeof *key) == 0;
}

/* Under the lock: the kept prefix of key (cfg) in *out, NULL when none is
 * kept; a copy when `more` replays still want it, else the kept one itself
 * (its slot freed). */
static vf_status prefix_take(struct vf_replay_memo *m, uint64_t h, const struct vf__step *key,
			     const struct vf_alloc_config *c, bool more,
			     struct vf__replay_state **out, bool *deferred, struct vf_error *err)
{
	*out = NULL;
	for (int i = 0; i < PREFIX_SLOTS; i++) {
		if (!same_prefix(&m->pre[i], h, key, c))
			continue;
		if (m->pre[i].pending && nowait) { /* not there yet: a warming thread leaves it */
			*deferred = true;
			return vf_error_set(err, VF_ERR, "allocator replay: run by another thread");
		}
		if (m->pre[i].pending)
			return VF_OK;
		if (more)
			return vf__replay_state_clone(m->pre[i].state, out, err);
		*out = m->pre[i].state;
		m->pre[i].state = NULL;
		return VF_OK;
	}
	return VF_OK;
}

/* Under the lock: a slot claimed for the prefix of key (cfg) that this
 * thread replays, in place of the oldest one not pending (-1 when every
 * slot is pending, or the prefix is kept or claimed already). */
static int prefix_claim(struct vf_replay_memo *m, uint64_t h, const struct vf__step *key,
			const struct vf_alloc_config *c)
{
	for (int i = 0; i < PREFIX_SLOTS; i++)
		if (same_prefix(&m->pre[i], h, key, c))
			return -1;
	for (int k = 0; k < PREFIX_SLOTS; k++) {
		int i = (m->pre_next + k) % PREFIX_SLOTS;
		struct prefix_ent *p = &m->pre[i];
		if (p->pending)
			continue;
		m->pre_next = (i + 1) % PREFIX_SLOTS;
		vf__replay_state_free(p->state);
		*p = (struct prefix_ent){.hash = h, .expandable = c->expandable,
					 .max_split = c->max_split_bytes,
					 .capacity = c->capacity_bytes, .pending = true};
		memcpy(&p->key, key, sizeof *key);
		return i;
	}
	return -1;
}

/* Under the lock: the claimed slot gets its prefix st (NULL: given up). */
static void prefix_fill(struct vf_replay_memo *m, int slot, struct vf__replay_state *st)
{
	m->pre[slot].pending = false;
	m->pre[slot].state = st;
}

/* Under the lock: whether the replay of hash h is announced (its
 * position, -1 when not). */
static int expect_find(const struct vf_replay_memo *m, uint64_t h)
{
	for (int i = 0; i < m->nexp; i++)
		if (m->exp_full[i] == h)
			return i;
	return -1;
}

void vf__replay_memo_expect(struct vf_replay_memo *m, const struct vf__step *s,
			    const struct vf_alloc_config *cfg)
{
	if (!m || !vf__step_forks(s))
		return;
	struct vf_alloc_config c = cfg ? *cfg : (struct vf_alloc_config){0};
	struct vf__step key;
	vf__step_prefix_key(s, &key);
	uint64_t h = step_hash(s, &c), ph = step_hash(&key, &c);
	pthread_mutex_lock(&m->lock);
	bool known = expect_find(m, h) >= 0 || m->nexp == EXPECT_SLOTS;
	for (int i = 0; i < m->hi && !known; i++) /* replayed, or running */
		known = same(&m->ent[i], h, s, &c);
	if (!known) {
		m->exp_full[m->nexp] = h;
		m->exp_pre[m->nexp++] = ph;
	}
	pthread_mutex_unlock(&m->lock);
}

/* Under the lock: the replay of hash h runs (no longer announced); how
 * many announced replays share its prefix (hash ph). */
static int expect_run(struct vf_replay_memo *m, uint64_t h, uint64_t ph)
{
	int i = expect_find(m, h);
	if (i >= 0) {
		m->nexp--;
		m->exp_full[i] = m->exp_full[m->nexp];
		m->exp_pre[i] = m->exp_pre[m->nexp];
	}
	int n = 0;
	for (int k = 0; k < m->nexp; k++)
		n += m->exp_pre[k] == ph;
	return n;
}

/* The peaks of s (vf__step_forks): finished from the prefix m keeps for
 * its key when there is one, else replayed, and its prefix kept on the way
 * when replays announced (vf__replay_memo_expect) still want it. */
static vf_status fork_peaks(struct vf_replay_memo *m, const struct vf__step *s,
			    const struct vf_alloc_config *c, struct vf__replay_peaks *out,
			    bool *deferred, struct vf_error *err)
{
	struct vf__step key;
	vf__step_prefix_key(s, &key);
	uint64_t ph = step_hash(&key, c);
	struct vf__replay_state *st = NULL;
	int slot = -1;
	pthread_mutex_lock(&m->lock);
	int more = expect_run(m, step_hash(s, c), ph);
	vf_status rc = prefix_take(m, ph, &key, c, more > 0, &st, deferred, err);
	if (rc == VF_OK && st)
		m->forks++;
	if (*deferred) /* not run: not counted */
		m->replays--;
	else if (rc == VF_OK && more > 0)
		slot = prefix_claim(m, ph, &key, c);
	pthread_mutex_unlock(&m->lock);
	if (rc != VF_OK)
		return rc;
	if (!st) {
		rc = vf__step_prefix(s, c, &st, err);
		struct vf__replay_state *kept = NULL;
		struct vf_error ignored = {0}; /* not kept: a later replay runs whole */
		if (rc == VF_OK && slot >= 0 && vf__replay_state_clone(st, &kept, &ignored) != VF_OK)
			kept = NULL;
		if (slot >= 0) {
			pthread_mutex_lock(&m->lock);
			prefix_fill(m, slot, kept);
			pthread_mutex_unlock(&m->lock);
		}
		if (rc != VF_OK)
			return rc;
	}
	vf__step_finish(st, s, out);
	vf__replay_state_free(st);
	return VF_OK;
}

vf_status vf__step_peaks(const struct vf__step *s, const struct vf_alloc_config *cfg,
			 struct vf_replay_memo *memo, struct vf__replay_peaks *out,
			 struct vf_error *err)
{
	struct vf_alloc_config c = cfg ? *cfg : (struct vf_alloc_config){0};
	uint64_t h = memo ? step_hash(s, &c) : 0;
	int slot = -1;
	int got = memo ? memo_claim(memo, h, s, &c, out, &slot) : 0;
	if (got == 2) /* only a warming thread: the replay is another's */
		return vf_error_set(err, VF_ERR, "allocator replay: run by another thread");
	if (got == 1)
		return VF_OK;
	bool deferred = false; /* left to the thread replaying its prefix */
	vf_status st = memo && vf__step_forks(s) ? fork_peaks(memo, s, &c, out, &deferred, err)
						 : vf__step_simulate_peaks(s, &c, out, err);
	if (st != VF_OK) {
		if (memo)
			memo_fill(memo, slot, NULL);
		return st;
	}
	if (memo)
		memo_fill(memo, slot, out);
	return VF_OK;
}
