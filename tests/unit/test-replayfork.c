/* test-replayfork.c - forked allocator replays (steptrace.c's prefix and
 * finish, replaymemo.c's kept prefixes, vf_alloc_clone) give the peaks of
 * the whole replay, byte for byte. Training steps that differ only in
 * their optimizer make the same allocator calls up to the first optimizer
 * step; a memo told of them (vf_estimate_expect_replay) replays that part
 * once and finishes each from a copy. Checked: on random steps of their
 * own (with capacities that make the allocator release its cache and
 * retry, in the prefix and after it), on every setup of the calibration
 * and held-out files with each optimizer, on every model of the catalog,
 * and with threads warming one memo at once; the forks must happen
 * (vf_replay_memo_forks) for the comparisons to mean something. */
#include "vf_test.h"
#include "replay-check.h"


#include "estimate/steptrace.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/groundtruth.h"
#include "vramfit/estimate/split.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/models.h"

static int simulated; /* estimates whose allocator was replayed */

static bool same_peaks(const struct vf__replay_peaks *a, const struct vf__replay_peaks *b)
{
	return a->reserved == b->reserved && a->allocated == b->allocated &&
	       a->requested == b->requested && a->oom == b->oom;
}

/* ---- steps of our own ---- */

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	return xorshift64(&rng);
}

/* A size between 1 KiB and about 96 MiB, some of them repeating. */
static const double common_sizes[] = {4 << 20, 16 << 20, 22 << 20, 1 << 19, 64 << 20};

static double size(void)
{
	return replay_random_size(&rng, common_sizes, 5);
}

static void tensors(struct vf__tensors *t, int max)
{
	replay_random_tensors(&rng, t, max, common_sizes, 5);
}

/* A random training step: the fields before the optimizer's. */
static void random_step(struct vf__step *s)
{
	memset(s, 0, sizeof *s);
	s->train = true;
	s->full = next() % 2;
	s->ckpt = next() % 2;
	s->ac_cached = next() % 4 == 0;
	s->layers = 1 + (int)(next() % 6);
	s->micro = 1 + (int)(next() % 2);
	tensors(&s->layer_w, 6);
	tensors(&s->other_w, 3);
	tensors(&s->layer_train, 6);
	tensors(&s->other_train, 3);
	s->tied = next() % 3 == 0;
	tensors(&s->layer_ac, 4);
	s->head_ac = size();
	tensors(&s->layer_act, 6);
	tensors(&s->layer_tmp, 6);
	s->ckpt_in = size();
	s->emb_out = size();
	s->final_norm = size();
	s->lm_out = size(), s->lm_up = size(), s->lm_lsm = size(), s->lm_grad = size();
	s->lm_extra = next() % 4 == 0 ? size() : 0;
	s->offload = !s->ckpt && next() % 5 == 0;
	s->grad_hidden = size();
	s->workspace = size();
	s->dequant = next() % 3 == 0 ? size() : 0;
	s->bwd_transient = next() % 4 == 0 ? size() : 0;
	s->ddp_bucket = next() % 3 == 0 ? (double)(next() % (200u << 20)) : 0;
}

/* s's optimizer fields, at random (the prefix key ignores them). */
static void random_optimizer(struct vf__step *s)
{
	s->nstates = (int)(next() % 3);
	s->state_ratio = (double)(next() % 9) / 4;
	s->paged_min = next() % 4 == 0 ? size() : 0;
	s->ot = (enum vf__opt_temp)(next() % 3);
	s->ot_ratio = (double)(1 + next() % 8) / 4;
	s->ot_count = (int)(next() % 5);
	s->ot_cap = next() % 3 == 0 ? size() : 0;
	s->grads_kept = next() % 4 == 0;
}

/* A prefix of one step finished with another of the same key (and a
 * copy of it with a third) gives the whole replay's peaks; with a
 * capacity the cache is released and retried on the way. */
static void test_prefix_and_finish(void)
{
	int forked = 0, ooms = 0;
	for (int round = 0; round < 300; round++) {
		struct vf__step a, b, c;
		random_step(&a);
		random_optimizer(&a);
		b = a, c = a;
		random_optimizer(&b);
		random_optimizer(&c);
		struct vf__step ka, kb;
		vf__step_prefix_key(&a, &ka);
		vf__step_prefix_key(&b, &kb);
		CHECK(memcmp(&ka, &kb, sizeof ka) == 0);
		struct vf_alloc_config cfg = {0};
		struct vf__replay_peaks whole_b, whole_c;
		struct vf_error err = {0};
		CHECK(vf__step_simulate_peaks(&b, &cfg, &whole_b, &err) == VF_OK);
		int64_t gap = whole_b.reserved - whole_b.requested;
		if (round % 4 == 1) /* capacities around the step's peak */
			cfg.capacity_bytes = whole_b.reserved - whole_b.reserved / 8;
		else if (round % 4 == 2)
			cfg.capacity_bytes = whole_b.requested + gap / 2;
		else if (round % 4 == 3)
			cfg.expandable = next() % 2, cfg.max_split_bytes = (next() % 2) * (8 << 20);
		CHECK(vf__step_simulate_peaks(&b, &cfg, &whole_b, &err) == VF_OK);
		CHECK(vf__step_simulate_peaks(&c, &cfg, &whole_c, &err) == VF_OK);
		struct vf__replay_state *pre = NULL, *copy = NULL;
		CHECK(vf__step_prefix(&a, &cfg, &pre, &err) == VF_OK);
		if (!pre)
			continue;
		CHECK(vf__replay_state_clone(pre, &copy, &err) == VF_OK);
		struct vf__replay_peaks fb, fc;
		vf__step_finish(pre, &b, &fb);
		if (copy)
			vf__step_finish(copy, &c, &fc);
		CHECK(same_peaks(&fb, &whole_b));
		CHECK(copy && same_peaks(&fc, &whole_c));
		if (!same_peaks(&fb, &whole_b))
			fprintf(stderr, "  round %d: reserved %" PRId64 " forked, %" PRId64 " whole\n",
				round, fb.reserved, whole_b.reserved);
		forked++;
		ooms += whole_b.oom;
		vf__replay_state_free(pre);
		vf__replay_state_free(copy);
	}
	CHECK(forked == 300);
	CHECK(ooms > 10); /* the capacities bite */
}

/* A peaks-only replay (which skips the frees after its last allocation)
 * and a kept one (every call, segments recorded) give the same peaks, on
 * random steps with random optimizers and capacities. */
static void test_peaks_only(void)
{
	int compared = 0;
	for (int round = 0; round < 300; round++) {
		struct vf__step s;
		random_step(&s);
		random_optimizer(&s);
		s.oib = round % 7 == 0;
		struct vf_alloc_config cfg = {0};
		struct vf__replay_peaks whole, peaks;
		struct vf_error err = {0};
		struct vf_alloc *a = NULL;
		CHECK(vf__step_simulate(&s, &cfg, &a, &err) == VF_OK);
		if (!a)
			continue;
		vf__replay_peaks_of(a, &whole);
		if (round % 3 == 1) { /* a capacity below the peak: released and retried */
			vf_alloc_free(a);
			a = NULL;
			cfg.capacity_bytes = whole.requested + (whole.reserved - whole.requested) / 3;
			CHECK(vf__step_simulate(&s, &cfg, &a, &err) == VF_OK);
			if (!a)
				continue;
			vf__replay_peaks_of(a, &whole);
		}
		CHECK(vf__step_simulate_peaks(&s, &cfg, &peaks, &err) == VF_OK);
		CHECK(same_peaks(&whole, &peaks));
		compared++;
		vf_alloc_free(a);
	}
	CHECK(compared == 300);
}

/* The key keeps every field the prefix reads: steps that differ in one of
 * them have different keys. */
static void test_key_fields(void)
{
	struct vf__step a, b, ka, kb;
	random_step(&a);
	a.layer_act.n = 2, a.layer_act.bytes[1] = 1 << 20;
	random_optimizer(&a);
	for (int v = 0; v < 6; v++) {
		b = a;
		switch (v) {
		case 0: b.ckpt = !b.ckpt; break;
		case 1: b.micro = b.micro == 1 ? 2 : 1; break;
		case 2: b.layer_act.bytes[1] += 512; break;
		case 3: b.oib = !b.oib; break;
		case 4: b.layers++; break;
		case 5: b.workspace += 1; break;
		}
		vf__step_prefix_key(&b, &kb);
		vf__step_prefix_key(&a, &ka);
		CHECK(memcmp(&ka, &kb, sizeof ka) != 0);
	}
	/* the optimizer in the backward makes states inside it: not forked */
	a.oib = true;
	CHECK(!vf__step_forks(&a));
	a.oib = false;
	CHECK(vf__step_forks(&a));
	a.train = false;
	CHECK(!vf__step_forks(&a));
}

/* ---- setups: announced through a memo vs replayed whole ---- */

static const enum vf_optimizer optimizers[] = {VF_OPT_ADAMW, VF_OPT_ADAMW8BIT, VF_OPT_ADAFACTOR,
					       VF_OPT_SGD, VF_OPT_LION};
#define NOPT (sizeof optimizers / sizeof *optimizers)

/* su with each optimizer (and paged states, and grad_ckpt flipped: a key
 * of its own; two micro-batches with two optimizers), announced to one
 * memo and asked of it, against the memo-less estimate. Returns the
 * forks. */
static int64_t check_variants(const struct vf_arch *arch, const struct vf_setup *su,
			      const struct vf_gpu_spec *g, const struct vf_alloc_config *cfg,
			      int *checked)
{
	struct vf_setup v[2 * NOPT + 3];
	int n = 0;
	for (size_t k = 0; k < NOPT; k++) {
		v[n] = *su;
		v[n++].optimizer = optimizers[k];
	}
	for (size_t k = 0; k < NOPT; k++) {
		v[n] = *su;
		v[n].optimizer = optimizers[k];
		v[n++].paged_optimizer = optimizers[k] == VF_OPT_ADAMW8BIT;
	}
	v[n] = *su;
	v[n++].grad_ckpt = !su->grad_ckpt;
	for (size_t k = 0; k < 2; k++) { /* two micro-batches: keys of their own */
		v[n] = *su;
		v[n].grad_accum = 2;
		v[n++].optimizer = optimizers[k];
	}
	struct vf_replay_memo *memo = vf_replay_memo_new();
	CHECK(memo != NULL);
	for (int i = 0; i < n; i++)
		(void)vf_estimate_expect_replay(arch, &v[i], g, cfg, memo);
	for (int i = 0; i < n; i++) {
		struct vf_estimate forked, whole;
		struct vf_error err = {0}, err2 = {0};
		vf_status a = vf_estimate_simulate_memo(arch, &v[i], g, cfg, memo, &forked, NULL, &err);
		vf_status b = vf_estimate_simulate(arch, &v[i], g, cfg, &whole, NULL, &err2);
		CHECK_INT(a, b);
		if (a != VF_OK)
			continue;
		CHECK(same_estimate(&forked, &whole));
		if (!same_estimate(&forked, &whole))
			fprintf(stderr, "  differs: %s, optimizer %d, batch %" PRId64 ": %" PRId64
					" forked, %" PRId64 " whole\n",
				g ? g->id : "no GPU", (int)v[i].optimizer, v[i].batch,
				forked.peak_bytes, whole.peak_bytes);
		(*checked)++;
		simulated += whole.simulated;
	}
	int64_t forks = vf_replay_memo_forks(memo);
	vf_replay_memo_free(memo);
	return forks;
}

struct record_checks {
	int checked;
	int64_t forks;
};

/* A training record's setup with each optimizer, forked against whole,
 * without a GPU under three allocator configurations and on two GPUs. */
static void check_record(const struct vf_arch *arch, const struct vf_setup *su, void *ctx)
{
	struct record_checks *r = ctx;
	const char *gpus[] = {"a100-40gb", "rtx-4090"};
	struct vf_alloc_config cfgs[] = {{0}, {.expandable = true}, {.max_split_bytes = 128 << 20}};
	if (su->mode == VF_MODE_INFER)
		return;
	for (size_t c = 0; c < sizeof cfgs / sizeof *cfgs; c++)
		r->forks += check_variants(arch, su, NULL, &cfgs[c], &r->checked);
	for (size_t g = 0; g < sizeof gpus / sizeof *gpus; g++)
		r->forks += check_variants(arch, su, vf_gpu_catalog_find(gpus[g]), NULL, &r->checked);
}

static void test_calibration_and_held_out(void)
{
	struct record_checks r = {0};
	simulated = 0;
	if (!each_groundtruth_setup(check_record, &r))
		return;
	int checked = r.checked;
	int64_t forks = r.forks;
	CHECK(checked >= 20 * 5 * 13);
	CHECK(simulated >= checked * 3 / 4);
	CHECK(forks >= checked / 4); /* most optimizer variants finish from a prefix */
	fprintf(stderr, "  calibration and held-out: %d estimates (%d replayed), %" PRId64 " forked\n",
		checked, simulated, forks);
}

/* Every model of the catalog, full and LoRA, batch 4 x 2048, without a
 * GPU and on a100-80gb (its capacity: replayed again when the cache must
 * be released). */
static void test_catalog(void)
{
	size_t n = 0;
	const struct vf_model_entry *all = vf_models_list(&n);
	CHECK(n > 20);
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("a100-80gb");
	int checked = 0;
	int64_t forks = 0;
	simulated = 0;
	for (size_t i = 0; i < n; i++) {
		const struct vf_model_entry *m = &all[i];
		for (int mode = 0; mode < 2; mode++) {
			struct vf_setup su;
			vf_setup_defaults(&su);
			su.mode = mode ? VF_MODE_LORA : VF_MODE_FULL;
			if (mode)
				su.precision = VF_PREC_BF16;
			su.batch = 4;
			su.seq = 2048;
			forks += check_variants(&m->arch, &su, i % 2 ? g : NULL, NULL, &checked);
		}
	}
	CHECK(checked >= (int)n * 2 * 13 / 2);
	CHECK(simulated >= checked / 2);
	CHECK(forks >= checked / 4);
	fprintf(stderr, "  catalog: %zu models, %d estimates (%d replayed), %" PRId64 " forked\n", n,
		checked, simulated, forks);
}

/* ---- threads warming one memo at once ---- */

static void variant(struct vf_setup *s, int k)
{
	vf_setup_defaults(s);
	s->seq = 1024;
	s->batch = 2;
	s->precision = VF_PREC_BF16;
	s->optimizer = optimizers[k % NOPT];
	s->grad_ckpt = k >= (int)NOPT;
}

static void test_threads(void)
{
	const struct vf_model_entry *m = vf_models_find("llama2-7b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("h200");
	CHECK(m != NULL && g != NULL);
	if (!m || !g)
		return;
	int64_t forks = 0;
	for (int round = 0; round < 4; round++) {
		struct vf_replay_memo *memo = vf_replay_memo_new();
		CHECK(memo != NULL);
		for (int k = 0; k < 2 * (int)NOPT; k++) {
			struct vf_setup s;
			variant(&s, k);
			(void)vf_estimate_expect_replay(&m->arch, &s, g, NULL, memo);
		}
		warm_threads(&m->arch, g, memo, variant, 2 * (int)NOPT, round ? 3 : 0);
		for (int k = 0; k < 2 * (int)NOPT; k++) {
			struct vf_setup s;
			variant(&s, k);
			struct vf_estimate e, ref;
			struct vf_error err = {0};
			CHECK(vf_estimate_simulate_memo(&m->arch, &s, g, NULL, memo, &e, NULL, &err) == VF_OK);
			CHECK(vf_estimate_simulate(&m->arch, &s, g, NULL, &ref, NULL, &err) == VF_OK);
			CHECK(same_estimate(&e, &ref));
		}
		/* each distinct step replayed once: a warming thread that left one
		 * to the thread replaying its prefix did not count it */
		struct vf_replay_memo *alone = vf_replay_memo_new();
		for (int k = 0; k < 2 * (int)NOPT; k++) {
			struct vf_setup s;
			variant(&s, k);
			struct vf_estimate e;
			struct vf_error err = {0};
			CHECK(vf_estimate_simulate_memo(&m->arch, &s, g, NULL, alone, &e, NULL, &err) ==
			      VF_OK);
		}
		CHECK_INT(vf_replay_memo_replays(memo), vf_replay_memo_replays(alone));
		vf_replay_memo_free(alone);
		forks += vf_replay_memo_forks(memo);
		vf_replay_memo_free(memo);
	}
	CHECK(forks > 0);
}

/* Nothing announced: nothing kept, nothing forked, the same answers. */
static void test_unannounced(void)
{
	const struct vf_model_entry *m = vf_models_find("llama2-7b");
	CHECK(m != NULL);
	if (!m)
		return;
	struct vf_replay_memo *memo = vf_replay_memo_new();
	for (int k = 0; k < (int)NOPT; k++) {
		struct vf_setup s;
		variant(&s, k);
		struct vf_estimate e, ref;
		struct vf_error err = {0};
		CHECK(vf_estimate_simulate_memo(&m->arch, &s, NULL, NULL, memo, &e, NULL, &err) == VF_OK);
		CHECK(vf_estimate_simulate(&m->arch, &s, NULL, NULL, &ref, NULL, &err) == VF_OK);
		CHECK(same_estimate(&e, &ref));
	}
	CHECK_INT(vf_replay_memo_forks(memo), 0);
	CHECK_INT(vf_replay_memo_forks(NULL), 0);
	vf_replay_memo_free(memo);
}

int main(void)
{
	struct vf_error err = {0};
	if (vf_models_load(&err) != VF_OK) {
		fprintf(stderr, "models: %s\n", err.msg);
		return 1;
	}
	RUN(test_prefix_and_finish);
	RUN(test_peaks_only);
	RUN(test_key_fields);
	RUN(test_unannounced);
	RUN(test_threads);
	RUN(test_calibration_and_held_out);
	RUN(test_catalog);
	return vf_test_done();
}
