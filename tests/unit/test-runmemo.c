/* test-runmemo.c - vf_estimate_run's per-thread context (estimate.c's
 * run_ctx): every plain estimate equals the one computed afresh
 * (vf__estimate_run_fresh, no context at all), byte for byte, when the layer memo
 * overflows and is emptied, when the model or the GPU changes in place
 * (same pointer, other bytes), across models, GPUs and knobs interleaved,
 * and on several threads at once; and a context of its own
 * (vf_estimate_ctx_new) as its memo grows. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "vf_test.h"
#include "vramfit/estimate/estimate.h"
#include "estimate/estimate_internal.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/models.h"

/* a plain estimate against the fresh one; false (and a line) when not equal */
static bool same_as_fresh(const struct vf_arch *a, const struct vf_setup *s,
			  const struct vf_gpu_spec *g, struct vf_estimate *out)
{
	struct vf_estimate fresh;
	vf_estimate_run(a, s, g, out);
	vf__estimate_run_fresh(a, s, g, &fresh);
	if (memcmp(out, &fresh, sizeof fresh) == 0)
		return true;
	fprintf(stderr, "differs: batch %lld seq %lld mode %d: peak %lld / %lld, step %.9g / %.9g s\n",
		(long long)s->batch, (long long)s->seq, (int)s->mode, (long long)out->peak_bytes,
		(long long)fresh.peak_bytes, out->step_seconds, fresh.step_seconds);
	return false;
}

static const struct vf_model_entry *model(const char *name)
{
	struct vf_error err = {0};
	if (vf_models_load(&err) != VF_OK)
		return NULL;
	const struct vf_model_entry *m = vf_models_find(name);
	return m && m->has_arch ? m : NULL;
}

/* 40 micro-batches x 3 sequences x 2 modes: 240 layer keys, more than the
 * memo holds, twice over: it is emptied and filled again */
static void test_overflow(void)
{
	const struct vf_model_entry *m = model("llama2-7b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("h100-80gb");
	CHECK(m && g);
	if (!m || !g)
		return;
	long differ = 0, n = 0;
	for (int round = 0; round < 2; round++)
		for (int b = 1; b <= 40; b++)
			for (int64_t sq = 512; sq <= 2048; sq *= 2)
				for (int mode = 0; mode < 2; mode++) {
					struct vf_setup s;
					vf_setup_defaults(&s);
					s.batch = b;
					s.seq = sq;
					s.mode = mode ? VF_MODE_LORA : VF_MODE_FULL;
					s.optimizer = (enum vf_optimizer)((b + round) % 4);
					s.grad_ckpt = (b + mode) % 2;
					struct vf_estimate e;
					differ += !same_as_fresh(&m->arch, &s, g, &e);
					n++;
				}
	CHECK_INT(n, 480);
	CHECK_INT(differ, 0);
}

/* a context of its own (vf_estimate_ctx_new): its memo's index grows from
 * 64 slots to 256, 1,024 and 4,096 (900 layer keys: 150 micro-batches x 3
 * sequences x 2 modes), the dense entries put in each larger index
 * (memo_grow); every estimate, made and then hit again in the second
 * round, equals the fresh one */
static void test_ctx_grows(void)
{
	const struct vf_model_entry *m = model("llama2-7b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("h100-80gb");
	struct vf_estimate_ctx *cx = vf_estimate_ctx_new();
	CHECK(m && g && cx);
	if (!m || !g || !cx) {
		vf_estimate_ctx_free(cx);
		return;
	}
	long differ = 0, n = 0;
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 900; i++) {
			int k = round ? 899 - i : i; /* the second round backwards */
			struct vf_setup s;
			vf_setup_defaults(&s);
			s.batch = 1 + k / 6;
			s.seq = (int64_t)512 << (k / 2 % 3);
			s.mode = k % 2 ? VF_MODE_LORA : VF_MODE_FULL;
			struct vf_estimate e, fresh;
			vf_estimate_run_ctx(cx, &m->arch, &s, g, &e);
			vf__estimate_run_fresh(&m->arch, &s, g, &fresh);
			if (memcmp(&e, &fresh, sizeof e) != 0 && differ++ < 3)
				fprintf(stderr, "differs: batch %lld seq %lld mode %d: step %.9g / %.9g s\n",
					(long long)s.batch, (long long)s.seq, (int)s.mode,
					e.step_seconds, fresh.step_seconds);
			n++;
		}
	vf_estimate_ctx_free(cx);
	CHECK_INT(n, 1800);
	CHECK_INT(differ, 0);
}

/* the model and the GPU changed in place: the same pointers, other bytes;
 * the estimates follow them */
static void test_changed_in_place(void)
{
	const struct vf_model_entry *m = model("llama2-7b");
	const struct vf_gpu_spec *g0 = vf_gpu_catalog_find("a100-80gb");
	CHECK(m && g0);
	if (!m || !g0)
		return;
	struct vf_arch a = m->arch;
	struct vf_gpu_spec g = *g0;
	struct vf_setup s;
	vf_setup_defaults(&s);
	s.batch = 2;
	s.seq = 1024;
	struct vf_estimate e0, e1, e2;
	CHECK(same_as_fresh(&a, &s, &g, &e0));
	a.layers /= 2; /* a shallower model at the same address */
	CHECK(same_as_fresh(&a, &s, &g, &e1));
	CHECK(e1.peak_bytes < e0.peak_bytes);
	CHECK(e1.step_seconds < e0.step_seconds);
	g.bandwidth_gbs /= 4; /* slower memory at the same address, the same compute rate */
	CHECK(same_as_fresh(&a, &s, &g, &e2));
	CHECK(e2.step_seconds > e1.step_seconds);
	g.bf16_tflops /= 2; /* and a slower compute rate */
	g.fp16_tflops /= 2;
	struct vf_estimate e3;
	CHECK(same_as_fresh(&a, &s, &g, &e3));
	CHECK(e3.step_seconds > e2.step_seconds);
	a = m->arch; /* back: the first answer again */
	g = *g0;
	CHECK(same_as_fresh(&a, &s, &g, &e2));
	CHECK(memcmp(&e2, &e0, sizeof e0) == 0);
}

/* the models and GPUs (one none) interleaved, resolved before any thread
 * starts (the catalogs are read lazily) */
static const struct vf_model_entry *models[5];
static const struct vf_gpu_spec *gpus[4];

static bool resolve(void)
{
	static const char *const mn[] = {"llama2-7b", "t5-small", "mixtral-8x7b", "gpt2", "gemma2-2b"};
	static const char *const gn[] = {"h100-80gb", "rtx-4090", NULL, "v100-32gb"};
	bool ok = true;
	for (int i = 0; i < 5; i++)
		ok &= (models[i] = model(mn[i])) != NULL;
	for (int i = 0; i < 4; i++)
		ok &= !gn[i] || (gpus[i] = vf_gpu_catalog_find(gn[i])) != NULL;
	return ok;
}

/* models, GPUs and knobs interleaved, as a command's rows and advice call
 * vf_estimate_run: the estimates that differ from the fresh ones */
static long interleaved(int seed)
{
	long differ = 0;
	for (int v = 0; v < 400; v++) {
		const struct vf_model_entry *m = models[(v + seed) % 5];
		const struct vf_gpu_spec *g = gpus[(v / 5 + seed) % 4];
		struct vf_setup s;
		struct vf_error err = {0};
		vf_setup_defaults(&s);
		s.mode = (enum vf_mode)(v % 3);
		s.precision = (enum vf_precision)((v / 3) % 3);
		s.batch = 1 + v % 6;
		s.seq = 256 << (v % 3);
		s.grad_ckpt = (v / 2) % 2;
		s.optimizer = (enum vf_optimizer)((v / 7) % 5);
		s.gpus = 1 + (v % 2) * 3;
		s.shard = s.gpus > 1 ? VF_SHARD_ZERO3 : VF_SHARD_NONE;
		s.head_labels = v % 13 == 0 ? 4 : 0;
		s.target_seq = v % 17 == 0 ? 128 : 0;
		vf_setup_finish(&s, &err);
		s.gelu_native = v % 4 == 1;
		struct vf_estimate e;
		differ += !same_as_fresh(&m->arch, &s, g, &e);
	}
	return differ;
}

static void test_interleaved(void)
{
	CHECK(resolve());
	CHECK_INT(interleaved(0), 0);
	CHECK_INT(interleaved(3), 0);
}

#define THREADS 4

struct worker {
	int seed;
	long differ;
};

static void *work(void *p)
{
	struct worker *w = p;
	w->differ = interleaved(w->seed);
	return NULL;
}

/* each thread its own context: the same answers on 4 threads at once */
static void test_threads(void)
{
	CHECK(resolve());
	pthread_t t[THREADS];
	struct worker w[THREADS];
	int started = 0;
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){.seed = i, .differ = -2};
		if (pthread_create(&t[i], NULL, work, &w[i]) == 0)
			started++;
		else
			break;
	}
	CHECK_INT(started, THREADS);
	for (int i = 0; i < started; i++) {
		pthread_join(t[i], NULL);
		CHECK_INT(w[i].differ, 0);
	}
}

int main(void)
{
	RUN(test_overflow);
	RUN(test_ctx_grows);
	RUN(test_changed_in_place);
	RUN(test_interleaved);
	RUN(test_threads);
	vf_models_release();
	return vf_test_done();
}
