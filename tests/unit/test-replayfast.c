/* test-replayfast.c - the allocator replay's shortcuts give the answers
 * of the replay made call by call, byte for byte: each tensor a replay
 * frees before its next call (steptrace.c: a transient no saved tensor
 * follows, a gradient added into the held one, a per-tensor optimizer
 * temporary, an inference layer's dequantized weights) is one call,
 * vf_alloc_malloc_free; vf__replay_pairs_split(true) makes it the two
 * calls again. Compared: the peaks (reserved, allocated, requested, out
 * of memory) and the segments at the reserved peak, one by one; on random
 * steps of every kind (optimizer in the backward, per-tensor temporaries,
 * accumulation, inference, capacities that make the cache be released),
 * on every setup of the calibration file, and on a list of setups of the
 * catalog (MoE, T5, LoRA, QLoRA, FSDP, ZeRO, accumulation, checkpointing,
 * inference), each without a GPU and on GPUs whose capacity the replay
 * reaches, with the allocator's three configurations. */
#include "replay-check.h"
#include "vf_test.h"

#include "estimate/steptrace.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/groundtruth.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/models.h"

#define MiB ((int64_t)1 << 20)

static int compared, with_segments;

/* The segments at the peak of a and b, field by field (the struct has
 * padding); 0 when equal. */
static int segments_differ(const struct vf_alloc *a, const struct vf_alloc *b)
{
	int na = 0, ta = 0, nb = 0, tb = 0;
	const struct vf_alloc_segment *sa = vf_alloc_peak_segments(a, &na, &ta);
	const struct vf_alloc_segment *sb = vf_alloc_peak_segments(b, &nb, &tb);
	int bad = na != nb || ta != tb;
	for (int i = 0; i < na && i < nb; i++)
		bad += sa[i].small != sb[i].small || sa[i].size != sb[i].size ||
		       sa[i].used != sb[i].used || sa[i].blocks != sb[i].blocks;
	with_segments += ta > 0;
	return bad;
}

static int peaks_differ(const struct vf__replay_peaks *a, const struct vf__replay_peaks *b)
{
	return a->reserved != b->reserved || a->allocated != b->allocated ||
	       a->requested != b->requested || a->oom != b->oom;
}

/* ---- random steps ---- */

static uint64_t rng = 2463534242ull;

static uint64_t next(void)
{
	return xorshift64(&rng);
}

/* 1 KiB to about 96 MiB, a third of them of a few sizes that repeat. */
static const double common_sizes[] = {4 << 20, 16 << 20, 22 << 20, 1 << 19, 64 << 20, 3 << 20};

static double size(void)
{
	return replay_random_size(&rng, common_sizes, 6);
}

static void tensors(struct vf__tensors *t, int max)
{
	replay_random_tensors(&rng, t, max, common_sizes, 6);
}

static void random_step(struct vf__step *s)
{
	memset(s, 0, sizeof *s);
	s->train = next() % 5 != 0;
	s->full = next() % 2;
	s->ckpt = next() % 2;
	s->ac_cached = next() % 4 == 0;
	s->layers = 1 + (int)(next() % 6);
	s->micro = 1 + (int)(next() % 3);
	tensors(&s->layer_w, 6);
	tensors(&s->other_w, 3);
	tensors(&s->layer_train, 6);
	tensors(&s->other_train, 3);
	s->tied = next() % 3 == 0;
	tensors(&s->layer_ac, 4);
	tensors(&s->layer_act, 6);
	tensors(&s->layer_tmp, 8); /* often more transients than saved tensors */
	s->ckpt_in = size(), s->emb_out = size(), s->final_norm = size();
	s->lm_out = size(), s->lm_up = size(), s->lm_lsm = size(), s->lm_grad = size();
	s->lm_extra = next() % 4 == 0 ? size() : 0;
	s->offload = !s->ckpt && next() % 5 == 0;
	s->oib = next() % 4 == 0;
	s->grad_hidden = size();
	s->workspace = size();
	s->dequant = next() % 2 == 0 ? size() : 0;
	s->bwd_transient = next() % 4 == 0 ? size() : 0;
	s->nstates = (int)(next() % 3);
	s->state_ratio = (double)(next() % 9) / 4;
	s->paged_min = next() % 4 == 0 ? size() : 0;
	s->ot = (enum vf__opt_temp)(next() % 3);
	s->ot_ratio = (double)(1 + next() % 8) / 4;
	s->ot_count = (int)(next() % 5);
	s->ot_cap = next() % 3 == 0 ? size() : 0;
	s->grads_kept = next() % 4 == 0;
	s->kv_layer = size(), s->inf_h = size(), s->inf_q = size(), s->inf_kv = size();
	s->inf_f = size(), s->inf_scores = size(), s->inf_logits = size(), s->inf_head_in = size();
}

/* s through cfg: the kept replay (segments) and the peaks-only one, each
 * made with single calls and with split pairs; the differences. */
static int step_differs(const struct vf__step *s, const struct vf_alloc_config *cfg)
{
	struct vf_alloc *fast = NULL, *ref = NULL;
	struct vf__replay_peaks pf, pr, qf, qr;
	struct vf_error err = {0};
	vf__replay_pairs_split(false);
	CHECK(vf__step_simulate(s, cfg, &fast, &err) == VF_OK);
	CHECK(vf__step_simulate_peaks(s, cfg, &qf, &err) == VF_OK);
	vf__replay_pairs_split(true);
	CHECK(vf__step_simulate(s, cfg, &ref, &err) == VF_OK);
	CHECK(vf__step_simulate_peaks(s, cfg, &qr, &err) == VF_OK);
	vf__replay_pairs_split(false);
	int bad = 0;
	if (fast && ref) {
		vf__replay_peaks_of(fast, &pf);
		vf__replay_peaks_of(ref, &pr);
		bad += peaks_differ(&pf, &pr) + segments_differ(fast, ref);
	}
	bad += peaks_differ(&qf, &qr);
	vf_alloc_free(fast);
	vf_alloc_free(ref);
	compared++;
	return bad;
}

/* 600 random steps, a quarter with a capacity under their peak (the
 * cache released and retried, requests refused), some with expandable
 * segments or max_split_size. */
static void test_random_steps(void)
{
	int bad = 0;
	compared = with_segments = 0;
	for (int i = 0; i < 600; i++) {
		struct vf__step s;
		random_step(&s);
		struct vf_alloc_config c = {.expandable = i % 7 == 3,
					    .max_split_bytes = i % 5 == 2 ? 24 * MiB : 0};
		bad += step_differs(&s, &c);
		if (i % 4 == 1) {
			struct vf__replay_peaks p;
			struct vf_error err = {0};
			CHECK(vf__step_simulate_peaks(&s, &c, &p, &err) == VF_OK);
			c.capacity_bytes = p.reserved * 3 / 4; /* the cache released, then out of memory */
			bad += step_differs(&s, &c);
		}
	}
	CHECK_INT(bad, 0);
	CHECK(with_segments > compared / 2);
	fprintf(stderr, "  random steps: %d replays compared\n", compared);
}

/* ---- setups: estimates with split pairs and with single calls ---- */

static int simulated;

/* su on g with cfg: the kept simulation (its segments) and the peaks-only
 * one, with split pairs and with single calls; the differences. */
static int setup_differs(const struct vf_arch *arch, const struct vf_setup *su,
			 const struct vf_gpu_spec *g, const struct vf_alloc_config *cfg)
{
	struct vf_estimate ef, er, pf, pr;
	struct vf_alloc *sf = NULL, *sr = NULL;
	struct vf_error e1 = {0}, e2 = {0}, e3 = {0}, e4 = {0};
	vf__replay_pairs_split(false);
	vf_status a = vf_estimate_simulate(arch, su, g, cfg, &ef, &sf, &e1);
	vf_status b = vf_estimate_simulate(arch, su, g, cfg, &pf, NULL, &e2);
	vf__replay_pairs_split(true);
	vf_status c = vf_estimate_simulate(arch, su, g, cfg, &er, &sr, &e3);
	vf_status d = vf_estimate_simulate(arch, su, g, cfg, &pr, NULL, &e4);
	vf__replay_pairs_split(false);
	int bad = (a != c) + (b != d);
	if (a == VF_OK && c == VF_OK) {
		bad += !same_estimate(&ef, &er);
		if (sf && sr) { /* the replay's own peaks too (the estimate keeps some) */
			struct vf__replay_peaks a1, a2;
			vf__replay_peaks_of(sf, &a1);
			vf__replay_peaks_of(sr, &a2);
			bad += peaks_differ(&a1, &a2) + segments_differ(sf, sr);
		}
		else
			bad += (sf != NULL) != (sr != NULL);
		simulated += ef.simulated;
	}
	if (b == VF_OK && d == VF_OK)
		bad += !same_estimate(&pf, &pr);
	if (bad)
		fprintf(stderr, "  differs: %" PRId64 " layers, mode %d, batch %" PRId64 ", %s\n", arch->layers,
			(int)su->mode, su->batch, g ? g->id : "no GPU");
	vf_alloc_free(sf);
	vf_alloc_free(sr);
	compared++;
	return bad;
}

static const struct vf_alloc_config cfgs[] = {{0}, {.expandable = true},
					      {.max_split_bytes = 128 << 20}};
static const char *const gpus[] = {"a100-40gb", "rtx-4090", "h100-80gb"};

/* su as it is, with two micro-batches, checkpointing flipped, the
 * optimizer in the backward and a per-tensor Adafactor; without a GPU
 * (each allocator configuration) and on each GPU. */
static int variants_differ(const struct vf_arch *arch, const struct vf_setup *su)
{
	struct vf_setup v[5];
	int n = 0;
	v[n++] = *su;
	if (su->mode != VF_MODE_INFER) {
		v[n] = *su, v[n++].grad_accum = 2;
		v[n] = *su, v[n].grad_ckpt = !su->grad_ckpt, n++;
		v[n] = *su, v[n++].optimizer_in_backward = true;
		v[n] = *su, v[n].optimizer = VF_OPT_ADAFACTOR,
		v[n++].optimizer_impl = VF_OPTIMPL_FOR;
	}
	int bad = 0;
	for (int i = 0; i < n; i++) {
		for (size_t c = 0; c < sizeof cfgs / sizeof *cfgs; c++)
			bad += setup_differs(arch, &v[i], NULL, &cfgs[c]);
		for (size_t g = 0; g < sizeof gpus / sizeof *gpus; g++)
			bad += setup_differs(arch, &v[i], vf_gpu_catalog_find(gpus[g]), NULL);
	}
	return bad;
}

/* One calibration record's setup: its variants compared (calib_seen). */
struct calib_seen {
	int records, bad;
};

static void calib_record(const struct vf_arch *arch, const struct vf_setup *su, void *ctx)
{
	struct calib_seen *c = ctx;
	c->records++;
	c->bad += variants_differ(arch, su);
}

static void test_calibration(void)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/groundtruth/calibration.jsonl",
		 vf_test_env("VF_SHARED_DIR", "../shared"));
	compared = simulated = with_segments = 0;
	struct calib_seen c = {0};
	each_record_setup(path, calib_record, &c);
	int records = c.records, bad = c.bad;
	CHECK_INT(bad, 0);
	CHECK(records >= 20);
	CHECK(simulated >= compared / 2);
	CHECK(with_segments >= simulated / 2);
	fprintf(stderr, "  calibration: %d records, %d setups compared (%d replayed)\n", records,
		compared, simulated);
}

/* Setups of the catalog's models of each kind: dense full and LoRA,
 * QLoRA (nf4), MoE, T5, FSDP and ZeRO over 4 GPUs, accumulation,
 * checkpointing, inference. */
static void test_catalog_setups(void)
{
	static const struct {
		const char *model;
		enum vf_mode mode;
		enum vf_quant quant;
		enum vf_shard shard;
		int gpus;
		bool ckpt;
	} list[] = {
		{"llama3-8b", VF_MODE_FULL, VF_QUANT_NONE, VF_SHARD_NONE, 1, false},
		{"llama3-8b", VF_MODE_LORA, VF_QUANT_NONE, VF_SHARD_NONE, 1, true},
		{"llama2-7b", VF_MODE_LORA, VF_QUANT_NF4, VF_SHARD_NONE, 1, false},
		{"mixtral-8x7b", VF_MODE_LORA, VF_QUANT_NF4, VF_SHARD_NONE, 1, true},
		{"qwen3-30b-a3b", VF_MODE_FULL, VF_QUANT_NONE, VF_SHARD_FSDP, 4, true},
		{"t5-base", VF_MODE_FULL, VF_QUANT_NONE, VF_SHARD_NONE, 1, false},
		{"t5-large", VF_MODE_LORA, VF_QUANT_NONE, VF_SHARD_NONE, 1, true},
		{"qwen2.5-7b", VF_MODE_FULL, VF_QUANT_NONE, VF_SHARD_ZERO3, 4, true},
		{"mistral-7b", VF_MODE_FULL, VF_QUANT_NONE, VF_SHARD_ZERO2, 4, false},
		{"gemma2-2b", VF_MODE_FULL, VF_QUANT_NONE, VF_SHARD_NONE, 1, false},
		{"tinyllama-1.1b", VF_MODE_FULL, VF_QUANT_NONE, VF_SHARD_DDP, 2, false},
		{"llama3-8b", VF_MODE_INFER, VF_QUANT_NONE, VF_SHARD_NONE, 1, false},
		{"llama2-7b", VF_MODE_INFER, VF_QUANT_INT4, VF_SHARD_NONE, 1, false},
	};
	compared = simulated = with_segments = 0;
	int bad = 0;
	for (size_t i = 0; i < sizeof list / sizeof *list; i++) {
		const struct vf_model_entry *m = vf_models_find(list[i].model);
		CHECK(m != NULL);
		if (!m)
			continue;
		struct vf_setup su;
		vf_setup_defaults(&su);
		su.mode = list[i].mode;
		if (su.mode != VF_MODE_FULL)
			su.precision = VF_PREC_BF16;
		su.quant = list[i].quant;
		su.shard = list[i].shard;
		su.gpus = list[i].gpus;
		su.grad_ckpt = list[i].ckpt;
		su.batch = 4;
		su.seq = 1024;
		bad += variants_differ(&m->arch, &su);
	}
	CHECK_INT(bad, 0);
	CHECK(simulated >= compared / 2);
	fprintf(stderr, "  catalog setups: %d compared (%d replayed)\n", compared, simulated);
}

int main(void)
{
	struct vf_error err = {0};
	if (vf_models_load(&err) != VF_OK) {
		fprintf(stderr, "models: %s\n", err.msg);
		return 1;
	}
	RUN(test_random_steps);
	RUN(test_calibration);
	RUN(test_catalog_setups);
	return vf_test_done();
}
