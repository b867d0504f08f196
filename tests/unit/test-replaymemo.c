/* test-replaymemo.c - the remembered allocator replays (replaymemo.c: a
 * struct vf_replay_memo the caller owns) answer exactly as a fresh replay
 * does: on every setup of the calibration file (and any other .jsonl
 * beside it: held-out records), on GPUs whose capacity falls above, inside
 * and below the replay's peaks, with each allocator configuration, the
 * estimate through the memo (first asked: replayed and remembered; asked
 * again: from the memo) and the one without a memo equal the one whose
 * replay is kept (*sim, which never reads the memo), field by field. The
 * kept replay records the segments at each reserved peak; the others are
 * peaks-only replays (vf_alloc_peaks_only), so this also shows that not
 * recording them changes no answer.
 * Threads sharing one memo run each distinct replay once and all get its
 * answer. A memo warmed ahead (vf_estimate_prefetch_memo, by threads that
 * leave a replay another runs to it) answers the later calls without a
 * replay, the same answers; the advice in two halves (search, confirm) is
 * vf_advice_run; the replay weight grows with the replay's work. */
#include "vf_test.h"
#include "catalog.h"
#include "replay-check.h"

#include <pthread.h>

#include "estimate/steptrace.h"
#include "vramfit/estimate/advice.h"
#include "vramfit/estimate/search.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/groundtruth.h"
#include "vramfit/estimate/split.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/models.h"


/* One setup on one GPU and configuration: kept replay vs memo (twice). */
static void check_setup(const struct vf_arch *arch, const struct vf_setup *su,
			const struct vf_gpu_spec *g, const struct vf_alloc_config *cfg,
			struct vf_replay_memo *memo, int *checked)
{
	struct vf_error err = {0};
	struct vf_estimate ref, miss, hit, none;
	struct vf_alloc *a = NULL;
	CHECK(vf_estimate_simulate_memo(arch, su, g, cfg, memo, &ref, &a, &err) == VF_OK);
	vf_alloc_free(a);
	CHECK(vf_estimate_simulate_memo(arch, su, g, cfg, memo, &miss, NULL, &err) == VF_OK);
	CHECK(vf_estimate_simulate_memo(arch, su, g, cfg, memo, &hit, NULL, &err) == VF_OK);
	CHECK(vf_estimate_simulate(arch, su, g, cfg, &none, NULL, &err) == VF_OK);
	CHECK(same_estimate(&ref, &miss));
	CHECK(same_estimate(&ref, &hit));
	CHECK(same_estimate(&ref, &none));
	if (!same_estimate(&ref, &miss) || !same_estimate(&ref, &hit))
		fprintf(stderr, "  differs: %s, batch %" PRId64 ", seq %" PRId64 ": %" PRId64
				" kept, %" PRId64 " first, %" PRId64 " remembered\n",
			g ? g->id : "no GPU", su->batch, su->seq, ref.peak_bytes, miss.peak_bytes,
			hit.peak_bytes);
	(*checked)++;
}

/* One record's setup through one memo on three GPUs under three
 * allocator configurations, and without a GPU. */
static void check_record(const struct vf_arch *arch, const struct vf_setup *su, void *ctx)
{
	int *checked = ctx;
	const char *gpus[] = {"h200", "a100-40gb", "rtx-4090"};
	struct vf_alloc_config cfgs[] = {{0}, {.expandable = true}, {.max_split_bytes = 128 << 20}};
	struct vf_replay_memo *memo = vf_replay_memo_new();
	CHECK(memo != NULL);
	for (size_t g = 0; g < sizeof gpus / sizeof *gpus; g++)
		for (size_t c = 0; c < sizeof cfgs / sizeof *cfgs; c++)
			check_setup(arch, su, vf_gpu_catalog_find(gpus[g]), &cfgs[c], memo, checked);
	check_setup(arch, su, NULL, NULL, memo, checked);
	vf_replay_memo_free(memo);
}

static void test_calibration_and_held_out(void)
{
	int checked = 0;
	int files = each_groundtruth_setup(check_record, &checked);
	CHECK(files >= 1);
	CHECK(checked >= 20 * 10); /* the calibration file alone has 27 records */
}

/* Answers do not depend on what the memo held before: the batches asked
 * in one order, then in another after a full table's worth of others. */
static void test_order_independent(void)
{
	const struct vf_model_entry *m = vf_models_find("llama2-7b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("a100-80gb");
	REQUIRE(m != NULL && g != NULL);
	struct vf_setup s;
	vf_setup_defaults(&s);
	s.seq = 512;
	int64_t first[6];
	struct vf_estimate e;
	struct vf_error err = {0};
	struct vf_replay_memo *memo = vf_replay_memo_new(), *other = vf_replay_memo_new();
	CHECK(memo != NULL && other != NULL);
	for (int b = 1; b <= 6; b++) {
		s.batch = b;
		CHECK(vf_estimate_simulate_memo(&m->arch, &s, g, NULL, memo, &e, NULL, &err) == VF_OK);
		first[b - 1] = e.peak_bytes;
	}
	for (int i = 0; i < 70; i++) { /* more than the table holds: the first ones go */
		s.batch = 1;
		s.seq = 64 + 64 * i;
		CHECK(vf_estimate_simulate_memo(&m->arch, &s, g, NULL, memo, &e, NULL, &err) == VF_OK);
	}
	s.seq = 512;
	for (int b = 6; b >= 1; b--) {
		s.batch = b;
		CHECK(vf_estimate_simulate_memo(&m->arch, &s, g, NULL, memo, &e, NULL, &err) == VF_OK);
		CHECK_INT(e.peak_bytes, first[b - 1]);
		/* a second memo of its own (another run) answers the same */
		CHECK(vf_estimate_simulate_memo(&m->arch, &s, g, NULL, other, &e, NULL, &err) == VF_OK);
		CHECK_INT(e.peak_bytes, first[b - 1]);
	}
	CHECK(first[5] > first[0]); /* the batches are distinct keys */
	vf_replay_memo_free(memo);
	vf_replay_memo_free(other);
	vf_replay_memo_free(NULL); /* accepts NULL, as every _free */
}

/* Threads sharing one memo, asking for the same steps at once (as an
 * estimate's GPU rows on threads ask for the same advice candidates): each
 * distinct replay runs once, the others wait for it, and every answer is
 * the one without a memo. */
#define SHARED_THREADS 4
#define SHARED_STEPS 6
struct shared_run {
	const struct vf_arch *arch;
	const struct vf_gpu_spec *g;
	struct vf_replay_memo *memo;
	pthread_barrier_t *start;
	int first; /* each thread starts at another step */
	int64_t peak[SHARED_STEPS];
	vf_status st;
};

static void *shared_worker(void *arg)
{
	struct shared_run *r = arg;
	struct vf_setup s;
	vf_setup_defaults(&s);
	s.seq = 1024;
	struct vf_error err = {0};
	pthread_barrier_wait(r->start);
	r->st = VF_OK;
	for (int k = 0; k < SHARED_STEPS; k++) {
		int b = (r->first + k) % SHARED_STEPS;
		s.batch = b + 1;
		struct vf_estimate e;
		if (vf_estimate_simulate_memo(r->arch, &s, r->g, NULL, r->memo, &e, NULL, &err) != VF_OK)
			r->st = VF_ERR;
		r->peak[b] = e.peak_bytes;
	}
	return NULL;
}

static void test_threads_share_a_memo(void)
{
	const struct vf_model_entry *m = vf_models_find("llama2-7b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("a100-80gb");
	REQUIRE(m != NULL && g != NULL);
	struct vf_setup s;
	vf_setup_defaults(&s);
	s.seq = 1024;
	int64_t want[SHARED_STEPS];
	for (int b = 0; b < SHARED_STEPS; b++) {
		struct vf_estimate e;
		struct vf_error err = {0};
		s.batch = b + 1;
		CHECK(vf_estimate_simulate(&m->arch, &s, g, NULL, &e, NULL, &err) == VF_OK);
		want[b] = e.peak_bytes;
	}
	for (int round = 0; round < 3; round++) {
		struct vf_replay_memo *memo = vf_replay_memo_new();
		pthread_barrier_t start;
		pthread_barrier_init(&start, NULL, SHARED_THREADS);
		struct shared_run run[SHARED_THREADS];
		pthread_t th[SHARED_THREADS];
		for (int t = 0; t < SHARED_THREADS; t++) {
			run[t] = (struct shared_run){&m->arch, g, memo, &start, round ? t : 0, {0}, VF_ERR};
			CHECK(pthread_create(&th[t], NULL, shared_worker, &run[t]) == 0);
		}
		for (int t = 0; t < SHARED_THREADS; t++)
			pthread_join(th[t], NULL);
		for (int t = 0; t < SHARED_THREADS; t++) {
			CHECK(run[t].st == VF_OK);
			for (int b = 0; b < SHARED_STEPS; b++)
				CHECK_INT(run[t].peak[b], want[b]);
		}
		/* one replay a step (the load's and the step's, the same for every
		 * batch here, counted per distinct step asked for) */
		int64_t once = vf_replay_memo_replays(memo);
		struct vf_replay_memo *alone = vf_replay_memo_new();
		for (int b = 0; b < SHARED_STEPS; b++) {
			struct vf_estimate e;
			struct vf_error err = {0};
			s.batch = b + 1;
			CHECK(vf_estimate_simulate_memo(&m->arch, &s, g, NULL, alone, &e, NULL, &err) == VF_OK);
		}
		CHECK_INT(once, vf_replay_memo_replays(alone));
		CHECK(once >= SHARED_STEPS);
		vf_replay_memo_free(alone);
		pthread_barrier_destroy(&start);
		vf_replay_memo_free(memo);
	}
}

/* Warming: threads prefetch the same steps at once (none waits for
 * another's replay); then every step asked through the memo is answered
 * from it (no replay more) with the memo-less answer. */
#define WARM_STEPS 5

static void warm_setup(struct vf_setup *s, int k)
{
	vf_setup_defaults(s);
	s->seq = 1024;
	s->batch = 1 + k % 3;
	s->grad_accum = k >= 3 ? 2 : 1;
}

static void test_prefetch_warms(void)
{
	const struct vf_model_entry *m = vf_models_find("llama2-7b");
	const char *gpus[] = {"a100-80gb", "rtx-4090"}; /* rtx-4090: replayed again at its capacity */
	REQUIRE(m != NULL);
	for (size_t gi = 0; gi < sizeof gpus / sizeof *gpus; gi++) {
		const struct vf_gpu_spec *g = vf_gpu_catalog_find(gpus[gi]);
		CHECK(g != NULL);
		if (!g)
			continue;
		struct vf_replay_memo *memo = vf_replay_memo_new(), *alone = vf_replay_memo_new();
		CHECK(memo != NULL && alone != NULL);
		warm_threads(&m->arch, g, memo, warm_setup, WARM_STEPS, 1);
		int64_t warmed = vf_replay_memo_replays(memo);
		CHECK(warmed >= WARM_STEPS);
		for (int k = 0; k < WARM_STEPS; k++) {
			struct vf_setup s;
			warm_setup(&s, k);
			struct vf_estimate e, ref, one;
			struct vf_error err = {0};
			CHECK(vf_estimate_simulate_memo(&m->arch, &s, g, NULL, memo, &e, NULL, &err) == VF_OK);
			CHECK(vf_estimate_simulate(&m->arch, &s, g, NULL, &ref, NULL, &err) == VF_OK);
			CHECK(vf_estimate_simulate_memo(&m->arch, &s, g, NULL, alone, &one, NULL, &err) ==
			      VF_OK);
			CHECK(same_estimate(&e, &ref));
		}
		/* nothing replayed after the warming, and each step once */
		CHECK_INT(vf_replay_memo_replays(memo), warmed);
		CHECK_INT(warmed, vf_replay_memo_replays(alone));
		/* without a memo there is nothing to warm */
		struct vf_setup s;
		warm_setup(&s, 0);
		vf_estimate_prefetch_memo(&m->arch, &s, g, NULL, NULL);
		vf_replay_memo_free(memo);
		vf_replay_memo_free(alone);
	}
}

/* vf_advice_search then vf_advice_confirm: vf_advice_run's answer. */
static void test_advice_halves(void)
{
	const char *models[] = {"llama3-8b", "llama2-7b"};
	const char *gpus[] = {"a100-80gb", "l40s", "h200", "rtx-4090"};
	int advised = 0;
	for (size_t mi = 0; mi < sizeof models / sizeof *models; mi++) {
		const struct vf_model_entry *m = vf_models_find(models[mi]);
		CHECK(m != NULL);
		if (!m)
			continue;
		for (size_t gi = 0; gi < sizeof gpus / sizeof *gpus; gi++) {
			const struct vf_gpu_spec *g = vf_gpu_catalog_find(gpus[gi]);
			CHECK(g != NULL);
			if (!g)
				continue;
			struct vf_setup s = train_setup(VF_MODE_FULL, VF_PREC_AMP, 4, 2048);
			struct vf_advice whole, halves;
			struct vf_search srch;
			struct vf_error err = {0};
			struct vf_replay_memo *memo = vf_replay_memo_new();
			CHECK(vf_advice_run(&m->arch, &s, g, NULL, NULL, VF_ADVICE_MARGIN, &whole, &err) == VF_OK);
			CHECK(vf_advice_search(&m->arch, &s, g, VF_ADVICE_MARGIN, &srch, &err) == VF_OK);
			CHECK(vf_advice_confirm(&m->arch, &s, g, NULL, memo, &srch, &halves, &err) == VF_OK);
			vf_search_release(&srch);
			CHECK_INT(halves.n, whole.n);
			CHECK(halves.evaluated == whole.evaluated);
			for (int i = 0; i < whole.n && i < halves.n; i++) {
				CHECK_INT(halves.item[i].peak_bytes, whole.item[i].peak_bytes);
				CHECK_INT(halves.item[i].headroom_bytes, whole.item[i].headroom_bytes);
				CHECK_STR(halves.item[i].changes, whole.item[i].changes);
			}
			advised += whole.n;
			vf_replay_memo_free(memo);
		}
	}
	CHECK(advised >= 6); /* a100-80gb, l40s and h200 each have changes that fit */
}

/* The replay weight grows with what the replay does: layers, a second
 * micro-batch, checkpointing's recompute, per-tensor optimizer temporaries;
 * a plain step's weight is its allocator calls' order of magnitude. */
static void test_replay_weight(void)
{
	const struct vf_model_entry *m = vf_models_find("llama3-8b");
	const struct vf_model_entry *small = vf_models_find("qwen2.5-0.5b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("h200");
	REQUIRE(m != NULL && small != NULL && g != NULL);
	struct vf_setup s = train_setup(VF_MODE_FULL, VF_PREC_AMP, 4, 2048);
	double base = vf_estimate_replay_weight(&m->arch, &s, g);
	CHECK(base > 1000 && base < 100000);
	CHECK(vf_estimate_replay_weight(&small->arch, &s, g) <
	      base * (double)small->arch.layers / (double)m->arch.layers * 1.5);
	struct vf_setup t = s;
	t.grad_accum = 2;
	t.batch = 2;
	CHECK(vf_estimate_replay_weight(&m->arch, &t, g) > base * 1.3);
	t = s;
	t.grad_ckpt = true;
	CHECK(vf_estimate_replay_weight(&m->arch, &t, g) > base);
	t = s;
	t.mode = VF_MODE_INFER;
	CHECK(vf_estimate_replay_weight(&m->arch, &t, g) < base);
}

/* The largest micro-batch the simulation allows (some of its candidates
 * answered without a replay: the context plus the allocated peak already
 * over the GPU) fits by the simulation, and one more does not, unless the
 * search stopped at its limit of 8 above the fast path's answer. */
static void test_max_batch_simulated(void)
{
	const char *models[] = {"llama2-7b", "llama3-8b", "qwen2.5-0.5b"};
	const char *gpus[] = {"rtx-4090", "a100-40gb", "h100-80gb"};
	int checked = 0;
	for (size_t mi = 0; mi < sizeof models / sizeof *models; mi++) {
		const struct vf_model_entry *m = vf_models_find(models[mi]);
		if (!m)
			continue;
		for (int mode = 0; mode < 2; mode++)
			for (size_t gi = 0; gi < sizeof gpus / sizeof *gpus; gi++) {
				const struct vf_gpu_spec *g = vf_gpu_catalog_find(gpus[gi]);
				CHECK(g != NULL);
				if (!g)
					continue;
				struct vf_setup s = train_setup(mode ? VF_MODE_LORA : VF_MODE_FULL, VF_PREC_AMP, 1, 1024);
				int64_t fast = vf_estimate_max_batch(&m->arch, &s, g, 0);
				struct vf_replay_memo *memo = vf_replay_memo_new();
				int64_t b = vf_estimate_max_batch_simulated(&m->arch, &s, g, NULL, memo);
				CHECK_INT(vf_estimate_max_batch_simulated(&m->arch, &s, g, NULL, NULL), b);
				vf_replay_memo_free(memo);
				struct vf_estimate e;
				struct vf_error err = {0};
				if (b > 0) {
					s.batch = b;
					CHECK(vf_estimate_simulate(&m->arch, &s, g, NULL, &e, NULL, &err) == VF_OK);
					CHECK(vf_estimate_fits(&e, g, NULL));
				}
				if (b < fast + 8) {
					s.batch = b + 1;
					CHECK(vf_estimate_simulate(&m->arch, &s, g, NULL, &e, NULL, &err) == VF_OK);
					CHECK(!vf_estimate_fits(&e, g, NULL));
				}
				checked++;
			}
	}
	CHECK(checked >= 12);
}

int main(void)
{
	struct vf_error err = {0};
	if (vf_models_load(&err) != VF_OK) {
		fprintf(stderr, "models: %s\n", err.msg);
		return 1;
	}
	RUN(test_calibration_and_held_out);
	RUN(test_order_independent);
	RUN(test_threads_share_a_memo);
	RUN(test_max_batch_simulated);
	RUN(test_prefetch_warms);
	RUN(test_advice_halves);
	RUN(test_replay_weight);
	return vf_test_done();
}
