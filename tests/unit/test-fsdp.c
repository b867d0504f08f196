/* test-fsdp.c - the memory of FSDP and ZeRO-3 steps (estimate.c
 * fsdp_units, steptrace.c gather): each layer gathered with the next one
 * prefetched, FSDP's root unit (embedding, final norm, head) gathered from
 * the forward to the backward's end, a layer's unsharded gradient before
 * its reduce-scatter; the analytic terms by hand on a small model, and the
 * allocator replay covering the analytic step (no fallback). */
#include <math.h>

#include "vf_test.h"
#include "catalog.h"
#include "estimate/steptrace.h"
#include "vramfit/base/json.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/arch.h"
#include "vramfit/model/models.h"

/* A llama of 4 layers, h 256, f 512, 4 heads, vocabulary 1000, untied:
 * a layer's linears 4 h^2 + 3 h f = 655,360 elements, the root (embedding,
 * final norm, head) 1000 h + h + 1000 h = 512,256. */
static bool small_llama(struct vf_arch *a)
{
	static const char text[] =
		"{\"model_type\":\"llama\",\"hidden_size\":256,\"intermediate_size\":512,"
		"\"num_hidden_layers\":4,\"num_attention_heads\":4,\"num_key_value_heads\":4,"
		"\"vocab_size\":1000,\"tie_word_embeddings\":false,\"max_position_embeddings\":2048}";
	cJSON *j = NULL;
	struct vf_error err = {0};
	bool ok = vf_json_parse(text, strlen(text), "t", &j, &err) == VF_OK &&
		  vf_arch_from_config(j, "t.json", a, &err) == VF_OK;
	cJSON_Delete(j);
	CHECK(ok);
	return ok;
}

#define UNIT 655360.0  /* one layer's linear elements */
#define ROOT 512256.0  /* embedding, final norm, head */

static double ph(const struct vf_estimate *e, enum vf_phase p, enum vf_term t)
{
	return (double)e->phase_bytes[p][t];
}

/* bf16 weights and gradients (P = 2) over 4 GPUs, no checkpointing: the
 * forward holds the shards, two gathered layers and the root; the loss
 * the shards and the root; the optimizer step the shards alone; the
 * backward's gradients one layer's whole gradient above the shards.
 * ZeRO-3 has no root held; neither has the same setup on one GPU any of
 * it. Each by hand from the sizes above. */
static void test_terms_by_hand(void)
{
	struct vf_arch a;
	if (!small_llama(&a))
		return;
	const char *fsdp[] = {"mode", "full", "precision", "bf16", "gpus", "4", "shard", "fsdp",
			      "batch", "1", "seq", "128", NULL};
	const char *zero3[] = {"mode", "full", "precision", "bf16", "gpus", "4", "shard", "zero3",
			       "batch", "1", "seq", "128", NULL};
	struct vf_setup s;
	struct vf_estimate f, z;
	flags_setup(fsdp, &s);
	vf_estimate_run(&a, &s, NULL, &f);
	flags_setup(zero3, &s);
	vf_estimate_run(&a, &s, NULL, &z);
	CHECK(f.params == (int64_t)(4 * (UNIT + 2 * 256) + ROOT));
	double shards = (double)f.params * 2 / 4;
	CHECK(fabs(ph(&f, VF_PHASE_OPTIMIZER, VF_TERM_WEIGHTS) - shards) < 2);
	CHECK(fabs(ph(&f, VF_PHASE_FORWARD, VF_TERM_WEIGHTS) - (shards + 2 * UNIT * 2 + ROOT * 2)) < 2);
	CHECK(fabs(ph(&f, VF_PHASE_LOSS, VF_TERM_WEIGHTS) - (shards + ROOT * 2)) < 2);
	CHECK(fabs(ph(&f, VF_PHASE_BACKWARD, VF_TERM_WEIGHTS) - (shards + 2 * UNIT * 2 + ROOT * 2)) < 2);
	CHECK(fabs(ph(&z, VF_PHASE_FORWARD, VF_TERM_WEIGHTS) - (shards + 2 * UNIT * 2)) < 2);
	CHECK(fabs(ph(&z, VF_PHASE_LOSS, VF_TERM_WEIGHTS) - shards) < 2);
	/* the backward, at the second layer: the gradients' shards (bf16)
	 * but the first layer's and (FSDP) the root's, not made yet; one
	 * layer's gradient whole; FSDP also the head's whole (1000 h), held to
	 * the root's post-backward (more here than the root's whole at the
	 * end, when the layers are resharded) */
	CHECK(fabs(ph(&f, VF_PHASE_BACKWARD, VF_TERM_GRADIENTS) -
		   (shards - (UNIT + ROOT) * 2 / 4 + (UNIT + 256000) * 2)) < 2);
	CHECK(fabs(ph(&z, VF_PHASE_BACKWARD, VF_TERM_GRADIENTS) - (shards - UNIT * 2 / 4 + UNIT * 2)) < 2);
}

/* Replays s on a and g: the replay runs (nothing skipped, not cut
 * short), holds a reserve of its own and covers the analytic step, within
 * max_over times it when max_over > 0. i names the case in a failure. */
static void check_replay_covers(const struct vf_arch *a, const struct vf_gpu_spec *g, const struct vf_setup *s,
				size_t i, double max_over)
{
	struct vf_setup run = *s;
	struct vf_estimate e;
	struct vf_error err = {0};
	CHECK(vf_estimate_simulate(a, &run, g, NULL, &e, NULL, &err) == VF_OK);
	CHECK(e.sim_skipped == NULL);
	CHECK(e.simulated && !e.sim_short);
	CHECK(e.peak_reserved_bytes > e.peak_allocated_bytes);
	double step = (double)e.step_peak_allocated_bytes;
	bool covers = (double)e.sim_allocated_bytes >= step &&
		      (max_over <= 0 || (double)e.sim_allocated_bytes < max_over * step);
	CHECK(covers);
	if (!covers || e.sim_skipped)
		fprintf(stderr, "  case %zu: replay %lld analytic %lld (%s) %s\n", i, (long long)e.sim_allocated_bytes,
			(long long)e.step_peak_allocated_bytes, vf_phase_name(e.peak_phase),
			e.sim_skipped ? e.sim_skipped : "");
}

/* The allocator replay of FSDP and ZeRO-3 steps allocates at least the
 * step's analytic allocated peak: it runs the gathers, the root and the
 * unsharded gradients the analytic terms count (before, it missed them
 * and the estimate fell back to the analytic peak with no reserve). */
static void test_replay_covers_step(void)
{
	static const char *const cases[][16] = {
		{"mode", "full", "gpus", "8", "shard", "fsdp", NULL},
		{"mode", "full", "gpus", "8", "shard", "zero3", NULL},
		{"mode", "full", "gpus", "8", "shard", "fsdp", "grad-ckpt", "true", NULL},
		{"mode", "full", "gpus", "8", "shard", "fsdp", "grad-accum", "4", NULL},
		{"mode", "full", "gpus", "8", "shard", "fsdp", "precision", "bf16", "batch", "4", NULL},
		{"mode", "lora", "gpus", "4", "shard", "fsdp", NULL},
		{"mode", "lora", "gpus", "4", "shard", "zero3", "grad-ckpt", "true", NULL},
	};
	const struct vf_arch *a = catalog_arch("llama3-8b");
	const struct vf_gpu_spec *g = catalog_gpu("h100-80gb");
	REQUIRE(a && g);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct vf_setup s;
		flags_setup((const char **)cases[i], &s);
		/* a loop that syncs every micro-batch (torchtune, torchtitan); no_sync
		 * (the default stack, hf): test_no_sync_replayed */
		s.fsdp_no_sync = false;
		check_replay_covers(a, g, &s, i, 0);
	}
}

/* llama2-7b full, FSDP over 4 A100-40GB: the step's allocated and reserved
 * peaks grow with the micro-batch, the reserve the replay's own. */
static void test_peak_grows_with_batch(void)
{
	const struct vf_arch *a = catalog_arch("llama2-7b");
	const struct vf_gpu_spec *g = catalog_gpu("a100-40gb");
	REQUIRE(a && g);
	int64_t last_alloc = 0, last_res = 0;
	for (int b = 1; b <= 4; b *= 2) {
		char batch[8];
		snprintf(batch, sizeof batch, "%d", b);
		const char *f[] = {"mode", "full", "gpus", "4", "shard", "fsdp", "precision", "bf16",
				   "batch", batch, NULL};
		struct vf_setup s;
		struct vf_estimate e;
		struct vf_error err = {0};
		flags_setup(f, &s);
		CHECK(vf_estimate_simulate(a, &s, g, NULL, &e, NULL, &err) == VF_OK);
		CHECK(e.simulated && !e.sim_short);
		CHECK(e.step_peak_allocated_bytes > last_alloc);
		CHECK(e.step_peak_reserved_bytes > last_res);
		CHECK(e.step_peak_reserved_bytes > e.step_peak_allocated_bytes);
		last_alloc = e.step_peak_allocated_bytes;
		last_res = e.step_peak_reserved_bytes;
	}
}

/* FSDP gradient accumulation under no_sync (stack mechanism fsdp_no_sync,
 * litgpt's fabric.no_backward_sync): every unit's whole gradient is held
 * through the accumulating micro-batches, in place of the shards, and a
 * unit's whole gradient is made in the backward before it is added.
 * bf16 over 4 GPUs, accumulation 4. Full fine-tuning: every parameter's
 * gradient whole (bf16). LoRA (rank 8 on q, v; bf16 base): the layers'
 * flat parameters (use_orig_params: the frozen weights and the adapters
 * share one), not the root, which has nothing trainable; the adapters
 * are 4 layers x 8 x (256 + 256) x 2 = 32,768 elements; with the adapters
 * as units of their own only those are held. The weights, the
 * optimizer step, ZeRO-3 and a run without accumulation do not move. */
static void test_no_sync_by_hand(void)
{
	struct vf_arch a;
	if (!small_llama(&a))
		return;
	const char *full[] = {"mode", "full", "precision", "bf16", "gpus", "4", "shard", "fsdp",
			      "batch", "1", "seq", "128", "grad-accum", "4", NULL};
	const char *lora[] = {"mode", "lora", "precision", "bf16", "gpus", "4", "shard", "fsdp",
			      "batch", "1", "seq", "128", "grad-accum", "4", "lora-rank", "8",
			      "lora-targets", "q_proj,v_proj", NULL};
	struct vf_setup s;
	struct vf_estimate off, on;
	double params = 4 * (UNIT + 2 * 256) + ROOT;
	flags_setup(full, &s);
	s.fsdp_no_sync = false; /* the default stack's (hf) is on */
	vf_estimate_run(&a, &s, NULL, &off);
	s.fsdp_no_sync = true;
	vf_estimate_run(&a, &s, NULL, &on);
	CHECK(fabs(ph(&off, VF_PHASE_FORWARD, VF_TERM_GRADIENTS) - params * 2 / 4) < 2);
	CHECK(fabs(ph(&on, VF_PHASE_FORWARD, VF_TERM_GRADIENTS) - params * 2) < 2);
	CHECK(fabs(ph(&on, VF_PHASE_LOSS, VF_TERM_GRADIENTS) - params * 2) < 2);
	/* the backward: all whole and a layer's new whole gradient beside
	 * them (a later micro-batch's head contribution, added into the held
	 * whole one and freed before the layers' backward, is not) */
	CHECK(fabs(ph(&on, VF_PHASE_BACKWARD, VF_TERM_GRADIENTS) - (params + UNIT) * 2) < 2);
	for (int p = 0; p < VF_PHASE_COUNT; p++)
		CHECK(ph(&on, p, VF_TERM_WEIGHTS) == ph(&off, p, VF_TERM_WEIGHTS));
	CHECK(ph(&on, VF_PHASE_OPTIMIZER, VF_TERM_GRADIENTS) == ph(&off, VF_PHASE_OPTIMIZER, VF_TERM_GRADIENTS));
	CHECK(on.peak_allocated_bytes > off.peak_allocated_bytes);

	flags_setup(lora, &s);
	s.fsdp_no_sync = false;
	vf_estimate_run(&a, &s, NULL, &off);
	s.fsdp_no_sync = s.fsdp_lora_flat = true;
	vf_estimate_run(&a, &s, NULL, &on);
	double layer_units = 4 * (UNIT + 2 * 256) + 32768;
	CHECK(fabs(ph(&on, VF_PHASE_FORWARD, VF_TERM_GRADIENTS) - layer_units * 2) < 2);
	CHECK(fabs(ph(&on, VF_PHASE_BACKWARD, VF_TERM_GRADIENTS) - (layer_units + layer_units / 4) * 2) < 2);
	for (int p = 0; p < VF_PHASE_COUNT; p++)
		CHECK(ph(&on, p, VF_TERM_WEIGHTS) == ph(&off, p, VF_TERM_WEIGHTS));
	CHECK(ph(&on, VF_PHASE_OPTIMIZER, VF_TERM_GRADIENTS) == ph(&off, VF_PHASE_OPTIMIZER, VF_TERM_GRADIENTS));

	/* adapters as units of their own (fsdp_lora_flat false: peft's wrap
	 * policy under FSDP1, FSDP2's per-parameter gradients): only the
	 * adapters' whole gradients (fp32) are held, the frozen layers have none */
	flags_setup(lora, &s);
	s.fsdp_no_sync = true;
	vf_estimate_run(&a, &s, NULL, &on);
	CHECK(fabs(ph(&off, VF_PHASE_FORWARD, VF_TERM_GRADIENTS) - 32768.0 * 4 / 4) < 2);
	CHECK(fabs(ph(&on, VF_PHASE_FORWARD, VF_TERM_GRADIENTS) - 32768.0 * 4) < 2);
	CHECK(ph(&on, VF_PHASE_OPTIMIZER, VF_TERM_GRADIENTS) == ph(&off, VF_PHASE_OPTIMIZER, VF_TERM_GRADIENTS));

	/* nothing held without accumulation, nor under ZeRO-3 */
	const char *once[] = {"mode", "full", "precision", "bf16", "gpus", "4", "shard", "fsdp",
			      "batch", "1", "seq", "128", NULL};
	const char *zero3[] = {"mode", "full", "precision", "bf16", "gpus", "4", "shard", "zero3",
			       "batch", "1", "seq", "128", "grad-accum", "4", NULL};
	const char *const *cases[] = {once, zero3};
	for (int i = 0; i < 2; i++) {
		flags_setup((const char **)cases[i], &s);
		s.fsdp_no_sync = false;
		vf_estimate_run(&a, &s, NULL, &off);
		s.fsdp_no_sync = true;
		vf_estimate_run(&a, &s, NULL, &on);
		CHECK(on.peak_allocated_bytes == off.peak_allocated_bytes);
		for (int p = 0; p < VF_PHASE_COUNT; p++)
			CHECK(ph(&on, p, VF_TERM_GRADIENTS) == ph(&off, p, VF_TERM_GRADIENTS));
	}
}

/* The gathered dtype under mixed precision (amp: fp32 parameters, bf16
 * compute). hf's FSDP runs through accelerate, whose plugin maps bf16 to
 * MixedPrecision(param_dtype=bf16, reduce_dtype=bf16): the shards fp32,
 * each unit gathered in bf16 and its gradients reduced in bf16, no
 * autocast copies (stack mechanism fsdp_mixed_precision, true for hf).
 * The communication counts the same elements in the same dtype: per
 * micro-step the forward's and the backward's all-gathers and the
 * reduce-scatter, (n-1)/n of the bytes each. Without the mechanism the
 * units are gathered in fp32 and so are the collectives. Small llama,
 * full, 4 GPUs, accumulation 1. */
static void test_mixed_precision_dtype(void)
{
	struct vf_arch a;
	if (!small_llama(&a))
		return;
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("h100-80gb");
	CHECK(g != NULL);
	if (!g)
		return;
	const char *amp[] = {"mode", "full", "gpus", "4", "shard", "fsdp", "batch", "1", "seq", "128",
			     NULL};
	struct vf_setup s;
	struct vf_estimate mp, fp;
	flags_setup(amp, &s);
	CHECK(s.fsdp_mixed_precision && s.precision == VF_PREC_AMP);
	vf_estimate_run(&a, &s, g, &mp);
	s.fsdp_mixed_precision = false;
	vf_estimate_run(&a, &s, g, &fp);
	double params = 4 * (UNIT + 2 * 256) + ROOT, shards = params * 4 / 4, r = 3.0 / 4;
	CHECK(fabs(ph(&mp, VF_PHASE_FORWARD, VF_TERM_WEIGHTS) - (shards + 2 * UNIT * 2 + ROOT * 2)) < 2);
	CHECK(fabs(ph(&fp, VF_PHASE_FORWARD, VF_TERM_WEIGHTS) - (shards + 2 * UNIT * 4 + ROOT * 4)) < 2);
	CHECK(mp.autocast_cache_bytes == 0 && fp.autocast_cache_bytes > 0);
	CHECK(fabs(mp.parts.comm_bytes - 3 * r * params * 2) < 8);
	CHECK(fabs(fp.parts.comm_bytes - 3 * r * params * 4) < 8);
	/* one GPU's replay of the step: bf16 gathers, no fp32 ones */
	struct vf_error err = {0};
	s.fsdp_mixed_precision = true;
	CHECK(vf_estimate_simulate(&a, &s, g, NULL, &mp, NULL, &err) == VF_OK);
	CHECK(mp.simulated && mp.sim_allocated_bytes >= mp.step_peak_allocated_bytes);
}

/* The allocator replay of no_sync accumulation (steptrace.c layer_grads):
 * the replay runs (no "allocator_not_simulated", the peak not the
 * analytic fallback) and covers the analytic step for full fine-tuning
 * and LoRA under the stacks that accumulate under no_sync: hf (accelerate,
 * the adapters units of their own), litgpt and ltx (use_orig_params: one
 * flat parameter a block). Before, each fell back to the analytic peak. */
static void test_no_sync_replayed(void)
{
	static const char *const cases[][20] = {
		{"mode", "full", "gpus", "4", "shard", "fsdp", "grad-accum", "4", NULL},
		{"mode", "full", "gpus", "4", "shard", "fsdp", "grad-accum", "4", "grad-ckpt", "true", NULL},
		{"mode", "full", "gpus", "8", "shard", "fsdp", "grad-accum", "2", "stack", "litgpt", NULL},
		{"mode", "lora", "gpus", "4", "shard", "fsdp", "grad-accum", "4", NULL},
		{"mode", "lora", "gpus", "4", "shard", "fsdp", "grad-accum", "4", "stack", "litgpt", NULL},
		{"mode", "lora", "gpus", "2", "shard", "fsdp", "grad-accum", "8", "stack", "ltx",
		 "grad-ckpt", "true", NULL},
		{"mode", "full", "gpus", "4", "shard", "fsdp", "grad-accum", "4", "stack", "ltx", NULL},
	};
	const struct vf_arch *a = catalog_arch("llama3-8b");
	const struct vf_gpu_spec *g = catalog_gpu("h100-80gb");
	REQUIRE(a && g);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct vf_setup s;
		flags_setup((const char **)cases[i], &s);
		CHECK(s.fsdp_no_sync);
		/* litgpt's previous step held through the forward (graph_held) is
		 * not replayed, a separate approximation: off, to replay no_sync;
		 * the replay's order, not a different model: within 3 % */
		s.graph_held = false;
		check_replay_covers(a, g, &s, i, 1.03);
	}
}

/* The replay of the small llama (bf16, full, 4 GPUs, sequence 128), by
 * hand. Without accumulation the peak is the last layer's backward as
 * its shards are made beside its whole gradient, the head's whole
 * gradient held (1000 h x 2 = 512,000 bytes). Under no_sync (hf's loop)
 * the second micro-batch's last layer adds its new whole gradient into
 * the held ones: every layer's whole gradient (4 (UNIT + 512) x 2 =
 * 5,246,976) and the root's (ROOT x 2 = 1,024,512) beside it, in place
 * of the head's and of that layer's shards (UNIT x 2 / 4 and its two
 * norms' 128 bytes, each rounded to 512): 5,430,784 bytes more, the
 * same for 2 or 4 micro-batches (the replay runs two: the held ones are
 * the same in each accumulating micro-batch). Synced every micro-batch
 * the peak moves by less (the shards held). LoRA under hf (adapters
 * units of their own): above it by no more than the adapters' fp32
 * whole gradients, 4 x 8 x (256 + 256) x 2 x 4 = 131,072 bytes. */
static void test_no_sync_replay_by_hand(void)
{
	struct vf_arch a;
	if (!small_llama(&a))
		return;
	static const char *const accums[] = {"1", "2", "4"};
	int64_t on[3], off[3], lon[3];
	for (int k = 0; k < 3; k++) {
		const char *full[] = {"mode", "full", "precision", "bf16", "gpus", "4", "shard", "fsdp",
				      "batch", "1", "seq", "128", "grad-accum", accums[k], NULL};
		const char *lora[] = {"mode", "lora", "precision", "bf16", "gpus", "4", "shard", "fsdp",
				      "batch", "1", "seq", "128", "grad-accum", accums[k],
				      "lora-rank", "8", "lora-targets", "q_proj,v_proj", NULL};
		struct vf_setup s;
		struct vf_estimate e;
		struct vf_error err = {0};
		flags_setup(full, &s);
		CHECK(vf_estimate_simulate(&a, &s, NULL, NULL, &e, NULL, &err) == VF_OK);
		CHECK(e.simulated && e.sim_skipped == NULL);
		on[k] = e.sim_allocated_bytes;
		s.fsdp_no_sync = false;
		CHECK(vf_estimate_simulate(&a, &s, NULL, NULL, &e, NULL, &err) == VF_OK);
		off[k] = e.sim_allocated_bytes;
		flags_setup(lora, &s);
		CHECK(!s.fsdp_lora_flat);
		CHECK(vf_estimate_simulate(&a, &s, NULL, NULL, &e, NULL, &err) == VF_OK);
		CHECK(e.simulated && e.sim_skipped == NULL);
		lon[k] = e.sim_allocated_bytes;
	}
	CHECK(on[0] == off[0]); /* no accumulation: nothing held */
	CHECK(on[1] == on[2] && off[1] == off[2] && lon[1] == lon[2]);
	double held = 4 * (UNIT + 512) * 2 + ROOT * 2 - 256000 * 2 - (UNIT * 2 / 4 + 2 * 512);
	CHECK((double)(on[2] - on[0]) == held);
	CHECK(off[2] - off[0] > 0 && off[2] - off[0] < on[2] - on[0]);
	CHECK(lon[2] - lon[0] > 0 && lon[2] - lon[0] <= 131072);
	if ((double)(on[2] - on[0]) != held)
		fprintf(stderr, "  full: on %lld %lld %lld (held %.0f)\n", (long long)on[0],
			(long long)on[1], (long long)on[2], held);
}

int main(void)
{
	RUN(test_terms_by_hand);
	RUN(test_replay_covers_step);
	RUN(test_peak_grows_with_batch);
	RUN(test_no_sync_by_hand);
	RUN(test_mixed_precision_dtype);
	RUN(test_no_sync_replayed);
	RUN(test_no_sync_replay_by_hand);
	return vf_test_done();
}
