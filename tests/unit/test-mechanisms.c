/* test-mechanisms.c - the mechanisms of other stacks' recipes
 * (lib/estimate/mechanisms.c): each moves exactly the term it acts on,
 * by the amount its source says, and the peaks are named by the tool that
 * prints them. */
#include <math.h>

#include "vf_test.h"
#include "catalog.h"
#include "estimate/mechanisms.h"
#include "estimate/steptrace.h"
#include "vramfit/base/json.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/split.h"
#include "vramfit/estimate/stack.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/models.h"

static const struct vf_arch *arch(const char *id)
{
	const struct vf_model_entry *m = vf_models_find(id);
	CHECK(m && m->has_arch);
	return m && m->has_arch ? &m->arch : NULL;
}

static void run(const char *model, const struct vf_setup *s, struct vf_estimate *e)
{
	const struct vf_arch *a = arch(model);
	memset(e, 0, sizeof *e);
	if (a)
		vf_estimate_run(a, s, NULL, e);
}

/* The terms other than `skip` have the same full size in a and b. */
static bool same_except(const struct vf_estimate *a, const struct vf_estimate *b, const char *skip)
{
	struct {
		const char *name;
		int64_t x, y;
	} t[] = {
		{"weights", a->weights_full, b->weights_full},
		{"gradients", a->gradients_full, b->gradients_full},
		{"optimizer", a->optimizer_full, b->optimizer_full},
		{"optimizer_temp", a->optimizer_temp_full, b->optimizer_temp_full},
		{"autocast_cache", a->autocast_cache_full, b->autocast_cache_full},
		{"activations", a->activations_full, b->activations_full},
		{"logits", a->logits_full, b->logits_full},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strcmp(t[i].name, skip) != 0 && t[i].x != t[i].y) {
			fprintf(stderr, "  %s moved: %lld -> %lld\n", t[i].name, (long long)t[i].x,
				(long long)t[i].y);
			return false;
		}
	return true;
}

/* bitsandbytes paged states (>= 1e5 elements) are CUDA managed memory:
 * out of PyTorch's allocated and reserved peaks, in nvidia-smi's. */
static void test_paged_outside_allocator(void)
{
	/* bitsandbytes' AdamW: one fused kernel per tensor, no temporaries */
	const char *plain[] = {"mode", "full", "seq", "512", "optimizer-impl", "fused", NULL};
	const char *paged[] = {"mode", "full", "seq", "512", "optimizer", "paged-adamw", NULL};
	struct vf_setup s0, s1;
	struct vf_estimate a, b;
	flags_setup(plain, &s0);
	flags_setup(paged, &s1);
	run("llama2-7b", &s0, &a);
	run("llama2-7b", &s1, &b);
	CHECK(same_except(&a, &b, ""));
	CHECK(b.paged_bytes > 0 && a.paged_bytes == 0);
	/* every llama2-7b tensor but the norms (4096 elements) is paged */
	double norms = 65.0 * 4096;
	double share = (double)b.paged_bytes / (double)b.optimizer_full;
	CHECK(fabs(share - (1 - norms / (double)b.trainable_params)) < 1e-6);
	CHECK(b.step_peak_allocated_bytes <= a.step_peak_allocated_bytes - b.paged_bytes + 1);
	CHECK(b.peak_bytes == b.context_bytes + b.peak_reserved_bytes + b.paged_bytes);
	CHECK(b.evictable_bytes == b.paged_bytes);
	/* a card that holds all but the paged states: fits, full (the driver
	 * evicts pages to the host), headroom 0, one verdict */
	struct vf_gpu_spec g = {0};
	snprintf(g.id, sizeof g.id, "tight");
	g.memory_mib = (b.peak_bytes - b.paged_bytes / 2) / 1048576;
	int64_t room = -1;
	CHECK(vf_estimate_fits(&b, &g, &room) && room == 0);
	g.memory_mib = (b.peak_bytes - b.paged_bytes - ((int64_t)1 << 30)) / 1048576;
	CHECK(!vf_estimate_fits(&b, &g, &room) && room < 0);
	/* LoRA rank 16 on q,v: A is 16 x 4096 < 1e5 elements: nothing paged;
	 * rank 64 all-linear: 64 x 4096 and more, all paged */
	const char *l16[] = {"mode", "lora", "optimizer", "paged-adamw8bit", NULL};
	const char *l64[] = {"mode", "lora", "optimizer", "paged-adamw8bit", "lora-rank", "64",
			     "lora-targets", "all-linear", NULL};
	flags_setup(l16, &s1);
	run("llama2-7b", &s1, &b);
	CHECK(b.paged_bytes == 0);
	flags_setup(l64, &s1);
	run("llama2-7b", &s1, &b);
	CHECK(b.paged_bytes == b.optimizer_full);
	/* the allocator replay makes none of the paged states */
	flags_setup(plain, &s0);
	flags_setup(paged, &s1);
	struct vf_error err = {0};
	const struct vf_arch *m = arch("llama2-7b");
	if (m) {
		CHECK(vf_estimate_simulate(m, &s0, NULL, NULL, &a, NULL, &err) == VF_OK);
		CHECK(vf_estimate_simulate(m, &s1, NULL, NULL, &b, NULL, &err) == VF_OK);
		CHECK(b.sim_allocated_bytes < a.sim_allocated_bytes - b.paged_bytes * 9 / 10);
		CHECK(b.peak_bytes == b.context_bytes + b.peak_reserved_bytes + b.paged_bytes);
	}
}

/* The never-reset peak of a load that gathers every weight on every rank
 * (load full-per-rank; no shipped profile: litgpt's Lightning load gathers
 * one FSDP unit at a time, so its profile says sharded); step scope reads
 * the steps. */
static void test_peak_scope_and_load(void)
{
	const char *lg[] = {"mode", "lora", "gpus", "4", "shard", "fsdp", "stack", "litgpt", NULL};
	const char *lg_step[] = {"mode", "lora", "gpus", "4", "shard", "fsdp", "stack", "litgpt",
				 "peak-scope", "step", NULL};
	struct vf_setup s0, s1;
	struct vf_estimate a, b;
	flags_setup(lg, &s1);
	flags_setup(lg_step, &s0);
	CHECK(s1.peak_scope == VF_PEAK_RUN && !s1.load_full_per_rank && s0.peak_scope == VF_PEAK_STEP);
	s1.load_full_per_rank = s0.load_full_per_rank = true;
	/* litgpt checkpoints every block under FSDP (its FSDPStrategy), not on one GPU */
	CHECK(s1.grad_ckpt && s0.grad_ckpt);
	run("llama3-8b", &s1, &b);
	run("llama3-8b", &s0, &a);
	CHECK(same_except(&a, &b, ""));
	/* the load: the bf16 weights (and bf16 adapters on q, v) whole beside
	 * their quarter */
	double whole = 2.0 * ((double)b.params + 32 * 16 * ((4096 + 4096) + (4096 + 1024)));
	CHECK_INT(b.load_peak_allocated_bytes, llround(whole + whole / 4));
	CHECK(b.peak_at_load && b.peak_allocated_bytes == b.load_peak_allocated_bytes);
	CHECK(b.weights_bytes == b.peak_allocated_bytes && b.activations_bytes == 0);
	CHECK(!a.peak_at_load && a.peak_allocated_bytes == a.step_peak_allocated_bytes);
	CHECK(a.run_peak_allocated_bytes == b.run_peak_allocated_bytes);
	CHECK(b.step_peak_allocated_bytes == a.step_peak_allocated_bytes);
	/* what does not fit at load does not fit, whatever the scope */
	struct vf_gpu_spec g = {0};
	snprintf(g.id, sizeof g.id, "small");
	g.memory_mib = (int64_t)(((double)a.step_peak_bytes + (double)b.run_peak_bytes) / 2 / 1048576);
	CHECK(!vf_estimate_fits(&a, &g, NULL));
	/* hf: no transient, run = step; one GPU: nothing to gather */
	const char *hf_run[] = {"mode", "lora", "gpus", "4", "shard", "fsdp", "peak-scope", "run", NULL};
	flags_setup(hf_run, &s1);
	run("llama3-8b", &s1, &b);
	CHECK(b.load_peak_allocated_bytes == 0 && b.run_peak_bytes == b.step_peak_bytes);
	const char *one[] = {"mode", "lora", "stack", "litgpt", NULL};
	flags_setup(one, &s1);
	run("llama3-8b", &s1, &b);
	CHECK(b.load_peak_allocated_bytes == 0 && !b.peak_at_load);
	CHECK(!s1.grad_ckpt);
	struct vf_error err = {0};
	vf_setup_defaults(&s1);
	CHECK(vf_setup_set(&s1, "peak-scope", "forever", &err) == VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "--peak-scope");
}

/* torchtune's compiled chunked loss: the compute-dtype logits and one
 * chunk's fp32 work, not every chunk's fp32 log-softmax. */
static void test_compiled_chunked_loss(void)
{
	const char *eager[] = {"mode", "lora", "batch", "2", "seq", "4096", "stack", "torchtune", NULL};
	const char *comp[] = {"mode", "lora", "batch", "2", "seq", "4096", "stack", "torchtune",
			      "compile", "", NULL};
	struct vf_setup s0, s1;
	struct vf_estimate a, b;
	flags_setup(eager, &s0);
	flags_setup(comp, &s1);
	run("llama3-8b", &s0, &a);
	run("llama3-8b", &s1, &b);
	double NV = 2.0 * 4096 * 128256;
	CHECK_INT(a.logits_full, llround(NV * (4 + 2) + 8 * NV / 8));
	CHECK_INT(b.logits_full, llround(NV * 2 + (4 + 2) * NV / 8));
	/* 2 x 4096 tokens, 128k vocabulary, 8 chunks: 2.69 GiB (was 6.85) */
	CHECK(b.logits_full < (int64_t)(2.7 * 1073741824.0));
}

/* bitsandbytes k-bit linears keep their inputs: the activations grow by
 * exactly those inputs, nothing else moves; torchtune's NF4 keeps none. */
static void test_kbit_saved_inputs(void)
{
	const char *q[] = {"mode", "lora", "quant", "nf4", "stack", "litgpt", NULL};
	struct vf_setup s0, s1;
	struct vf_estimate a, b;
	flags_setup(q, &s1);
	CHECK(s1.kbit_saves_input);
	s1.kbit_head = s1.graph_held = false; /* their terms: test_kbit_head, test_graph_held */
	s0 = s1;
	s0.kbit_saves_input = false;
	run("llama2-7b", &s0, &a);
	run("llama2-7b", &s1, &b);
	CHECK(same_except(&a, &b, "activations"));
	double N = 2048, per = 2 * (4096 + 4096 + 4096 + 11008.0);
	CHECK_INT(b.activations_full - a.activations_full, llround(32 * N * per));
	/* LLM.int8: the input and its int8 transposed copy, 3 bytes an element */
	const char *q8[] = {"mode", "lora", "quant", "int8", "stack", "litgpt", NULL};
	struct vf_estimate c, d;
	flags_setup(q8, &s1);
	s1.kbit_head = s1.graph_held = false;
	s0 = s1;
	s0.kbit_saves_input = false;
	run("llama2-7b", &s0, &c);
	run("llama2-7b", &s1, &d);
	CHECK_INT(d.activations_full - c.activations_full, llround(32 * N * per * 3 / 2));
	const char *tt[] = {"mode", "lora", "quant", "nf4", "stack", "torchtune", NULL};
	flags_setup(tt, &s1);
	CHECK(!s1.kbit_saves_input);
	/* litgpt QLoRA against litgpt LoRA: 21-36 % measured above the model
	 * without the saved inputs (issue 25); the inputs are that share of
	 * the step's peak at 2048 tokens */
	double share = (double)(b.activations_full - a.activations_full) / (double)a.peak_allocated_bytes;
	CHECK(share > 0.15 && share < 0.45);
}

/* Selective checkpointing: between checkpointing every layer and none. */
static void test_selective_checkpointing(void)
{
	const char *none[] = {"mode", "full", "batch", "2", "precision", "bf16", NULL};
	const char *all[] = {"mode", "full", "batch", "2", "precision", "bf16", "grad-ckpt", "true", NULL};
	const char *op[] = {"mode", "full", "batch", "2", "precision", "bf16", "grad-ckpt", "selective:op", NULL};
	const char *ev2[] = {"mode", "full", "batch", "2", "precision", "bf16", "grad-ckpt", "every:2", NULL};
	const char *ev1[] = {"mode", "full", "batch", "2", "precision", "bf16", "grad-ckpt", "every:1", NULL};
	struct vf_setup s;
	struct vf_estimate n, l, o, e2, e1;
	flags_setup(none, &s);
	run("llama3-8b", &s, &n);
	flags_setup(all, &s);
	run("llama3-8b", &s, &l);
	flags_setup(op, &s);
	CHECK(s.grad_ckpt && s.ckpt_selective_op);
	run("llama3-8b", &s, &o);
	flags_setup(ev2, &s);
	CHECK(s.grad_ckpt && s.ckpt_every == 2);
	run("llama3-8b", &s, &e2);
	flags_setup(ev1, &s);
	CHECK(s.grad_ckpt && s.ckpt_every == 0);
	run("llama3-8b", &s, &e1);
	CHECK(same_except(&l, &o, "activations") && same_except(&l, &e2, "activations"));
	CHECK(l.activations_full < o.activations_full && o.activations_full < n.activations_full);
	CHECK(l.activations_full < e2.activations_full && e2.activations_full < n.activations_full);
	CHECK(e1.activations_full == l.activations_full);
	/* the op policy keeps, per token per layer, q, v, w1, w2 outputs and the
	 * attention output with its logsumexp (bf16) */
	double tok = 2 * 2048.0, layers = 32;
	double op_tok = 2 * (4096 + 1024 + 14336 + 4096) + 2 * 4096 + 4 * 32 / 64.0;
	CHECK(llabs(o.activations_full - l.activations_full - llround(layers * tok * op_tok)) < 64);
	/* every:2 halfway (in the held activations) */
	double mid = (double)(n.activations_full + l.activations_full) / 2;
	CHECK(fabs((double)e2.activations_full - mid) < 0.01 * mid);
	struct vf_error err = {0};
	vf_setup_defaults(&s);
	CHECK(vf_setup_set(&s, "grad-ckpt", "every:0", &err) == VF_EUSAGE);
	CHECK(vf_setup_set(&s, "grad-ckpt", "every:x", &err) == VF_EUSAGE);
	CHECK(vf_setup_set(&s, "grad-ckpt", "selective:mm", &err) == VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "selective:op");
}

/* FSDP mixed precision (FSDP2 MixedPrecisionPolicy, FSDP1 MixedPrecision:
 * param_dtype bf16): no autocast copies, blocks gathered in bf16; fp32
 * shards, gradients and states as before. hf's accelerate sets it under
 * amp (data/stacks/hf.json); s0 turns it off. */
static void test_fsdp_mixed_precision(void)
{
	const char *f[] = {"mode", "full", "gpus", "8", "shard", "fsdp", "precision", "amp", NULL};
	struct vf_setup s0, s1;
	struct vf_estimate a, b;
	flags_setup(f, &s0);
	CHECK(s0.fsdp_mixed_precision);
	s0.fsdp_mixed_precision = false;
	s1 = s0;
	s1.fsdp_mixed_precision = true;
	run("llama3-8b", &s0, &a);
	run("llama3-8b", &s1, &b);
	CHECK(a.autocast_cache_full > 0 && b.autocast_cache_full == 0);
	CHECK(b.activations_full < a.activations_full); /* a bf16 residual stream */
	CHECK(b.weights_full < a.weights_full);
	CHECK(a.gradients_full == b.gradients_full && a.optimizer_full == b.optimizer_full);
	/* torchtitan sets it, with fused AdamW and every second block checkpointed */
	const char *tt[] = {"mode", "full", "gpus", "8", "shard", "fsdp", "stack", "torchtitan", NULL};
	flags_setup(tt, &s1);
	CHECK(s1.fsdp_mixed_precision && s1.precision == VF_PREC_AMP && s1.optimizer_impl == VF_OPTIMPL_FUSED);
	CHECK(s1.grad_ckpt && s1.ckpt_every == 2 && s1.peak_scope == VF_PEAK_STEP);
	CHECK(s1.peak_report == VF_TOOL_RESERVED);
	const char *tt_flags[] = {"mode", "full", "stack", "torchtitan", "no-grad-ckpt", "",
				  "optimizer-impl", "foreach", NULL};
	flags_setup(tt_flags, &s1);
	CHECK(!s1.grad_ckpt && s1.optimizer_impl == VF_OPTIMPL_FOREACH);
}

/* estimate --json: each peak under the name of the tool that prints it. */
static void test_peaks_named_by_tool(void)
{
	const char *p[] = {"mode", "full", "seq", "512", "optimizer", "paged-adamw", "stack", "litgpt", NULL};
	struct vf_setup s;
	struct vf_estimate e;
	flags_setup(p, &s);
	run("llama2-7b", &s, &e);
	cJSON *m = vf_estimate_memory_json(&e);
	CHECK(m != NULL);
	const cJSON *pk = cJSON_GetObjectItemCaseSensitive(m, "peaks");
	const cJSON *step = cJSON_GetObjectItemCaseSensitive(pk, "step");
	const cJSON *runp = cJSON_GetObjectItemCaseSensitive(pk, "run");
	CHECK(cJSON_IsObject(step) && cJSON_IsObject(runp));
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(pk, "scope")), "run");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(pk, "stack_report")),
		  "torch.cuda.max_memory_allocated()");
	double alloc = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(step, "torch.cuda.max_memory_allocated()"));
	double res = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(step, "torch.cuda.max_memory_reserved()"));
	double smi = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(step, "nvidia-smi"));
	CHECK(alloc == (double)e.step_peak_allocated_bytes && res >= alloc);
	/* nvidia-smi sees the context, the allocator's reserve and the paged states */
	CHECK(smi == (double)(e.context_bytes + e.step_peak_reserved_bytes + e.paged_bytes));
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(pk, "outside_allocator_bytes")) ==
	      (double)e.paged_bytes && e.paged_bytes > 0);
	cJSON_Delete(m);
}

/* LoRA on the lm_head: r x (h + V) more trainable parameters, the head's
 * input and the adapter's A output saved; modules_to_save: a full copy
 * of the head trained in the base dtype (weights, gradients, states). */
static void test_head_adapter_and_saved_modules(void)
{
	const char *l[] = {"mode", "lora", NULL};
	const char *lh[] = {"mode", "lora", "lora-targets", "q_proj,v_proj,lm_head", NULL};
	const char *ms[] = {"mode", "lora", "modules-to-save", "lm_head", NULL};
	struct vf_setup s;
	struct vf_estimate a, b, c;
	flags_setup(l, &s);
	run("llama2-7b", &s, &a);
	flags_setup(lh, &s);
	CHECK(s.lora_targets & VF_LORA_HEAD);
	char f[128];
	CHECK_STR(vf_lora_targets_format(s.lora_targets, f, sizeof f), "q_proj,v_proj,lm_head");
	run("llama2-7b", &s, &b);
	CHECK_INT(b.trainable_params - a.trainable_params, 16LL * (4096 + 32000));
	CHECK_INT(b.gradients_full - a.gradients_full, 4LL * 16 * (4096 + 32000)); /* peft: fp32 */
	flags_setup(ms, &s);
	CHECK(s.modules_to_save == VF_MTS_HEAD);
	run("llama2-7b", &s, &c);
	double head = 32000.0 * 4096;
	CHECK_INT(c.trainable_params - a.trainable_params, llround(head));
	CHECK_INT(c.weights_full - a.weights_full, llround(2 * head));        /* the bf16 copy */
	CHECK_INT(c.gradients_full - a.gradients_full, llround(2 * head));
	CHECK_INT(c.optimizer_full - a.optimizer_full, llround(2 * 2 * head)); /* AdamW m, v */
	struct vf_error err = {0};
	vf_setup_defaults(&s);
	CHECK(vf_setup_set(&s, "modules-to-save", "lm_head,pooler", &err) == VF_EUSAGE);
}

/* A task head: no vocabulary-wide logits and no lm_head; the head of N
 * labels instead (sequence classification, 2 labels). */
static void test_task_head(void)
{
	const char *lm[] = {"mode", "full", "precision", "bf16", "batch", "8", "seq", "512", NULL};
	const char *cls[] = {"mode", "full", "precision", "bf16", "batch", "8", "seq", "512", "head",
			     "classify:2", NULL};
	struct vf_setup s;
	struct vf_estimate a, b;
	flags_setup(lm, &s);
	run("llama2-7b", &s, &a);
	flags_setup(cls, &s);
	CHECK(s.head_labels == 2);
	run("llama2-7b", &s, &b);
	CHECK_INT(a.params - b.params, 4096LL * (32000 - 2));
	CHECK_INT(a.weights_full - b.weights_full, 2LL * 4096 * (32000 - 2));
	CHECK(b.logits_full * 1000 < a.logits_full);
	struct vf_error err = {0};
	vf_setup_defaults(&s);
	CHECK(vf_setup_set(&s, "head", "classify:0", &err) == VF_EUSAGE);
	CHECK(vf_setup_set(&s, "head", "regress", &err) == VF_EUSAGE);
	/* GPTQ and AWQ bases: 4-bit in groups of 128 */
	CHECK(vf_setup_set(&s, "quant", "gptq", &err) == VF_OK && s.quant == VF_QUANT_INT4);
	CHECK(vf_setup_set(&s, "quant", "awq", &err) == VF_OK && s.quant == VF_QUANT_INT4);
}

/* float8 linears: the layers' weights lose their autocast copies (the
 * lm_head keeps its); nothing else whole moves; the peak drops. */
static void test_float8_linears(void)
{
	const char *f[] = {"mode", "full", "batch", "2", NULL};
	const char *f8[] = {"mode", "full", "batch", "2", "float8", "", NULL};
	struct vf_setup s;
	struct vf_estimate a, b;
	flags_setup(f, &s);
	run("llama3-8b", &s, &a);
	flags_setup(f8, &s);
	CHECK(s.float8);
	run("llama3-8b", &s, &b);
	CHECK(same_except(&a, &b, "autocast_cache"));
	CHECK_INT(b.autocast_cache_full, 2LL * 128256 * 4096);
	/* the forward's live memory drops by the layers' copies, less one
	 * linear's float8 weight and input */
	int64_t fa = a.phase_bytes[VF_PHASE_FORWARD][VF_TERM_AUTOCAST_CACHE];
	int64_t fb = b.phase_bytes[VF_PHASE_FORWARD][VF_TERM_AUTOCAST_CACHE];
	CHECK(fa - fb == a.autocast_cache_full - b.autocast_cache_full);
	int64_t acta = a.phase_bytes[VF_PHASE_FORWARD][VF_TERM_ACTIVATIONS];
	int64_t actb = b.phase_bytes[VF_PHASE_FORWARD][VF_TERM_ACTIVATIONS];
	CHECK_INT(actb - acta, 4096LL * 14336 + 2LL * 2048 * 14336);
}

/* A 4-bit base quantized on load: in the run's never-reset peak the
 * weights and the largest linear's transient (llama2-7b: the MLP's
 * 4096 x 11008); torchtune's torchao to_nf4 path 5n + 2 x 32 MiB of
 * chunk temporaries, bitsandbytes' Params4bit the bf16 weight, 2n. The
 * step's figures do not move; an unquantized base has no such term. */
static void test_quant_load_transient(void)
{
	const char *tt[] = {"mode", "lora", "quant", "nf4", "stack", "torchtune", "peak-scope", "run",
			    "batch", "1", "seq", "256", NULL};
	struct vf_setup s;
	struct vf_estimate a, b, c;
	flags_setup(tt, &s);
	CHECK(s.quant_load == VF_QLOAD_TORCHAO);
	run("llama2-7b", &s, &a);
	s.quant_load = VF_QLOAD_BITSANDBYTES;
	run("llama2-7b", &s, &b);
	double n = 4096.0 * 11008;
	CHECK_INT(a.load_peak_allocated_bytes, llround((double)a.weights_full + 5 * n + 67108864.0));
	CHECK_INT(b.load_peak_allocated_bytes, llround((double)b.weights_full + 2 * n));
	CHECK(a.step_peak_allocated_bytes == b.step_peak_allocated_bytes &&
	      a.step_peak_reserved_bytes == b.step_peak_reserved_bytes);
	/* the never-reset peak is the larger of the load's and the step's
	 * (here the step's: its loss and dequantized weights exceed 0.3 GB) */
	int64_t la = a.load_peak_allocated_bytes, sa = a.step_peak_allocated_bytes;
	CHECK(a.run_peak_allocated_bytes == (la > sa ? la : sa));
	CHECK(a.peak_allocated_bytes == a.run_peak_allocated_bytes && a.peak_at_load == (la > sa));
	/* step scope (torchtune's own report resets after init): untouched */
	s.quant_load = VF_QLOAD_TORCHAO;
	s.peak_scope = VF_PEAK_STEP;
	run("llama2-7b", &s, &c);
	CHECK(!c.peak_at_load && c.peak_allocated_bytes == c.step_peak_allocated_bytes);
	CHECK(c.step_peak_allocated_bytes == a.step_peak_allocated_bytes);
	/* no quantized base, nothing quantized on load */
	s.quant = VF_QUANT_NONE;
	s.peak_scope = VF_PEAK_RUN;
	run("llama2-7b", &s, &c);
	CHECK(c.load_peak_allocated_bytes == 0);
	struct vf_error err = {0};
	cJSON *bad = cJSON_Parse("{\"mechanisms\": {\"quantize_on_load\": {\"value\": \"gguf\", \"source\": \"x\"}}}");
	vf_setup_defaults(&s);
	CHECK(vf_stack_apply_json(&s, bad, "t.json", &err) == VF_ERR && strstr(err.msg, "quantize_on_load"));
	cJSON_Delete(bad);
}

/* Pre-quantized 4-bit bases in training, against a generic int4 base of
 * the same weights: GPTQ (auto-gptq QuantLinear's torch path) keeps each
 * layer's dequantized fp16 weights, 2 bytes per linear element; AWQ
 * (WQLinearMMFunction) keeps each linear's input, and its backward holds
 * the dequantized weight repeated over the batch. */
static void test_prequantized_bases(void)
{
	const char *g4[] = {"mode", "lora", "quant", "int4", "batch", "2", "seq", "512", NULL};
	const char *gq[] = {"mode", "lora", "quant", "gptq", "batch", "2", "seq", "512", NULL};
	const char *aw[] = {"mode", "lora", "quant", "awq", "batch", "2", "seq", "512", NULL};
	struct vf_setup s;
	struct vf_estimate a, b, c;
	flags_setup(g4, &s);
	CHECK(s.quant == VF_QUANT_INT4 && s.quant_format == VF_QFMT_GENERIC);
	run("llama2-7b", &s, &a);
	flags_setup(gq, &s);
	CHECK(s.quant == VF_QUANT_INT4 && s.quant_format == VF_QFMT_GPTQ);
	run("llama2-7b", &s, &b);
	flags_setup(aw, &s);
	CHECK(s.quant_format == VF_QFMT_AWQ);
	run("llama2-7b", &s, &c);
	double layer_linear = 4 * 4096.0 * 4096 + 3 * 4096.0 * 11008;
	CHECK(b.weights_full == a.weights_full && c.weights_full == a.weights_full);
	CHECK_INT(b.layer_activations - a.layer_activations, llround(2 * layer_linear));
	CHECK_INT(b.activations_full - a.activations_full, llround(32 * 2 * layer_linear));
	/* AWQ: the inputs of q/k/v (one), o, gate/up (one), down, bf16 */
	double tokens = 2 * 512;
	CHECK_INT(c.layer_activations - a.layer_activations, llround(tokens * 2 * (3 * 4096.0 + 11008)));
	CHECK(c.peak_allocated_bytes > a.peak_allocated_bytes);
	/* its backward: the largest linear (4096 x 11008) dequantized and
	 * repeated over the 2 samples, beside the layer's saved tensors */
	int64_t bwa = a.phase_bytes[VF_PHASE_BACKWARD][VF_TERM_ACTIVATIONS];
	int64_t bwc = c.phase_bytes[VF_PHASE_BACKWARD][VF_TERM_ACTIVATIONS];
	CHECK_INT(bwc - bwa, llround(tokens * 2 * (3 * 4096.0 + 11008) + 2 * 4096.0 * 11008 * 3));
	/* under 128 tokens GPTQ's CUDA kernel runs: nothing kept */
	const char *gs[] = {"mode", "lora", "quant", "gptq", "batch", "1", "seq", "64", NULL};
	const char *g4s[] = {"mode", "lora", "quant", "int4", "batch", "1", "seq", "64", NULL};
	flags_setup(gs, &s);
	run("llama2-7b", &s, &b);
	flags_setup(g4s, &s);
	run("llama2-7b", &s, &a);
	CHECK(b.layer_activations == a.layer_activations);
	/* inference: nothing saved */
	const char *gi[] = {"mode", "infer", "quant", "gptq", NULL};
	const char *g4i[] = {"mode", "infer", "quant", "int4", NULL};
	flags_setup(gi, &s);
	run("llama2-7b", &s, &b);
	flags_setup(g4i, &s);
	run("llama2-7b", &s, &a);
	CHECK(b.peak_allocated_bytes == a.peak_allocated_bytes);
}

/* MoE full fine-tuning: in an expert layer's backward the zero-filled
 * gradient of the whole fused expert parameters (select_backward) lives
 * beside the one autograd accumulates: Mixtral 8x7B's 8 x 4096 x 14336 x
 * 3 elements in fp32 (amp); LoRA (frozen experts) has none. */
static void test_moe_expert_grad_transient(void)
{
	const char *full[] = {"mode", "full", "batch", "1", "seq", "256", NULL};
	const char *lora[] = {"mode", "lora", "batch", "1", "seq", "256", NULL};
	struct vf_setup s;
	struct vf_estimate a, b;
	flags_setup(full, &s);
	run("mixtral-8x7b", &s, &a);
	flags_setup(lora, &s);
	run("mixtral-8x7b", &s, &b);
	double all = 8 * 4096.0 * 14336 * 3 * 4;
	int64_t bwa = a.phase_bytes[VF_PHASE_BACKWARD][VF_TERM_ACTIVATIONS];
	int64_t bwb = b.phase_bytes[VF_PHASE_BACKWARD][VF_TERM_ACTIVATIONS];
	CHECK(bwa >= llround(all) && bwa < llround(all) + 2 * (int64_t)a.layer_activations + (1LL << 30));
	CHECK(bwb < llround(all) / 4);
}

/* CPU offload: optimizer moves exactly the states and the step's
 * temporaries to the host (with a gradient copy); params also the
 * weights' shards and the gradients; the link carries them each step. */
static void test_cpu_offload(void)
{
	const char *f[] = {"mode", "full", "gpus", "8", "shard", "fsdp", NULL};
	const char *fo[] = {"mode", "full", "gpus", "8", "shard", "fsdp", "offload", "optimizer", NULL};
	const char *fp[] = {"mode", "full", "gpus", "8", "shard", "fsdp", "offload", "params", NULL};
	struct vf_setup s;
	struct vf_estimate a, b, c;
	flags_setup(f, &s);
	run("llama3-8b", &s, &a);
	flags_setup(fo, &s);
	CHECK(s.offload == VF_OFFLOAD_OPTIMIZER);
	run("llama3-8b", &s, &b);
	flags_setup(fp, &s);
	run("llama3-8b", &s, &c);
	CHECK(a.offload_host_bytes == 0 && a.offload_pcie_bytes == 0);
	CHECK(b.optimizer_full == 0 && b.optimizer_temp_full == 0);
	CHECK(b.weights_full == a.weights_full && b.gradients_full == a.gradients_full &&
	      b.activations_full == a.activations_full && b.logits_full == a.logits_full);
	CHECK_INT(b.offload_host_bytes, a.optimizer_full + a.gradients_full);
	/* gradients down, fp32 parameters up (each GPU its eighth) */
	CHECK_INT(b.offload_pcie_bytes, a.gradients_full + llround((double)a.trainable_params * 4 / 8));
	/* at the achievable pinned-copy rate of the H200's PCIe 5.0 host link
	 * (steptime.json host_link.pcie_gbs x 2), not the nominal 63 GB/s */
	CHECK(fabs(b.offload_pcie_seconds - (double)b.offload_pcie_bytes / 50.0e9) < 1e-9);
	/* one block's whole gradients (a 32nd) before they are reduced and copied down */
	CHECK(c.weights_full < a.weights_full && c.gradients_full * 32 == a.gradients_full * 8);
	CHECK(c.optimizer_full == 0 && c.offload_host_bytes > b.offload_host_bytes);
	CHECK(c.peak_allocated_bytes < a.peak_allocated_bytes);
	struct vf_error err = {0};
	const struct vf_arch *m = arch("llama3-8b");
	flags_setup(fp, &s);
	if (m) { /* not replayed: the analytic reserve, said so */
		CHECK(vf_estimate_simulate(m, &s, NULL, NULL, &c, NULL, &err) == VF_OK);
		CHECK(!c.simulated && c.sim_skipped && strstr(c.sim_skipped, "offload"));
	}
	vf_setup_defaults(&s);
	CHECK(vf_setup_set(&s, "offload", "disk", &err) == VF_EUSAGE);
}

/* Tensor parallelism: the allocator replay runs over what one GPU
 * allocates (its 1/tp slice), not the whole model: a 70B FSDP x TP=8
 * step peaks near the split's per-GPU allocation, under the card. */
static void test_split_simulated_per_gpu(void)
{
	const char *f[] = {"mode", "full", "gpus", "64", "shard", "fsdp", "tp", "8", NULL};
	struct vf_setup s;
	flags_setup(f, &s);
	const struct vf_arch *a = arch("llama3-70b");
	if (!a)
		return;
	static struct vf_split sp;
	struct vf_error err = {0};
	CHECK(vf_split_run(a, &s, NULL, &sp, &err) == VF_OK);
	int64_t analytic = sp.total.peak_allocated_bytes;
	struct vf_estimate e;
	CHECK(vf_estimate_simulate(a, &s, NULL, NULL, &e, NULL, &err) == VF_OK);
	CHECK(e.simulated);
	CHECK(e.peak_allocated_bytes == analytic);
	CHECK(e.peak_bytes >= e.context_bytes + analytic && e.peak_bytes < analytic * 1.15);
	/* the whole model on each GPU (the replay before: no slicing) */
	struct vf_setup w = s;
	w.tp = 1;
	w.gpus = 64;
	struct vf_estimate we;
	CHECK(vf_estimate_simulate(a, &w, NULL, NULL, &we, NULL, &err) == VF_OK);
	CHECK(we.peak_bytes > e.peak_bytes * 3 / 2);
	/* each GPU of the split has the reserve of its own slice's replay */
	CHECK(vf_split_simulate(a, &s, NULL, NULL, NULL, &sp, &err) == VF_OK);
	CHECK(sp.gpu[0].est.simulated && sp.gpu[0].est.allocator_bytes == e.allocator_bytes);
}

/* A paged optimizer across pipeline stages: each stage's paged states are
 * its share of the states, as its other optimizer terms are (the stages
 * without the embedding had the whole model's paged share: found by
 * fuzz-mechanisms with --pp 8 --optimizer paged-adamw). */
static void test_paged_per_pipeline_stage(void)
{
	const char *f[] = {"pp", "8", "optimizer", "paged-adamw", NULL};
	struct vf_setup s;
	flags_setup(f, &s);
	const struct vf_arch *a = arch("llama2-7b");
	if (!a)
		return;
	static struct vf_split sp;
	struct vf_error err = {0};
	CHECK(vf_split_run(a, &s, NULL, &sp, &err) == VF_OK);
	for (int i = 0; i < sp.ngpus; i++) {
		const struct vf_estimate *g = &sp.gpu[i].est;
		CHECK(g->paged_bytes > 0 && g->paged_bytes <= g->optimizer_full + 1);
	}
	struct vf_estimate e;
	CHECK(vf_estimate_simulate(a, &s, NULL, NULL, &e, NULL, &err) == VF_OK);
	CHECK(e.paged_bytes > 0 && e.paged_bytes <= e.optimizer_full + 1);
}

/* Bad values of the new mechanisms name the file and the field. */
static void test_bad_mechanism_values(void)
{
	const char *bad[] = {
		"{\"mechanisms\": {\"peak_scope\": {\"value\": \"always\", \"source\": \"x\"}}}",
		"{\"mechanisms\": {\"load\": {\"value\": \"lazy\", \"source\": \"x\"}}}",
		"{\"mechanisms\": {\"peak_report\": {\"value\": \"htop\", \"source\": \"x\"}}}",
		"{\"mechanisms\": {\"grad_ckpt_default\": {\"value\": \"every:0\", \"source\": \"x\"}}}",
		"{\"mechanisms\": {\"optimizer_impl\": {\"value\": \"magic\", \"source\": \"x\"}}}",
		"{\"mechanisms\": {\"kbit_saves_input\": {\"value\": 1, \"source\": \"x\"}}}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct vf_setup s;
		struct vf_error err = {0};
		cJSON *p = cJSON_Parse(bad[i]);
		vf_setup_defaults(&s);
		CHECK(vf_stack_apply_json(&s, p, "stacks/bad.json", &err) != VF_OK);
		CHECK_CONTAINS(err.msg, "stacks/bad.json: mechanisms.");
		cJSON_Delete(p);
	}
}

/* The MLP's tanh GELU as the stack's model code runs it: litgpt calls
 * torch.nn.functional.gelu(x, approximate="tanh"), one native kernel that
 * saves only its input (stack profile gelu_native); transformers' gelu_new
 * (NewGELUActivation) runs in Python and saves pow's input, tanh's output
 * and the product's two factors (estimate.c: under autocast pow's fp32
 * input, tanh's fp32 output, the half-x and the fp32 1 + tanh, 14 bytes
 * an element; without it the four in bf16, 8 bytes). Phi-2 under litgpt
 * (pure bf16): only the activations move, by 8 - 2 = 6 bytes per MLP
 * element (f = 10240) of each of the 32 layers' 4 x 512 tokens. */
static void test_native_gelu(void)
{
	const char *lg[] = {"mode", "lora", "stack", "litgpt", "batch", "4", "seq", "512", NULL};
	const char *hf[] = {"mode", "lora", "batch", "4", "seq", "512", NULL};
	struct vf_setup s;
	struct vf_estimate a, b;
	flags_setup(hf, &s);
	CHECK(!s.gelu_native);
	flags_setup(lg, &s);
	CHECK(s.gelu_native);
	run("phi-2", &s, &a);
	s.gelu_native = false;
	run("phi-2", &s, &b);
	CHECK(same_except(&a, &b, "activations"));
	CHECK(!s.autocast);
	CHECK_INT(b.activations_full - a.activations_full, 6LL * 10240 * 4 * 512 * 32);
	/* a model whose activation is already native (SiLU) does not move */
	s.gelu_native = true;
	run("llama2-7b", &s, &a);
	s.gelu_native = false;
	run("llama2-7b", &s, &b);
	CHECK_INT(a.activations_full, b.activations_full);
	CHECK_INT(a.peak_allocated_bytes, b.peak_allocated_bytes);
}

/* Step time of every:N checkpointing: torchtitan's apply_ac wraps blocks
 * N, 2N, ... (torchtitan/models/llama3/infra/parallelize.py,
 * _apply_ac_to_transformer_block: ptd_checkpoint_wrapper._count % ac_freq
 * == 0), so the backward recomputes floor(L / N) of the L layers' forward,
 * not all of it. Llama 3 8B (32 layers): every:2 adds half the full
 * recompute's FLOPs, every:3 10/32 of them; every:1 is all. */
static void test_every_n_recompute_time(void)
{
	const struct vf_arch *a = arch("llama3-8b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("a100-80gb");
	REQUIRE(a && g);
	const char *ck[] = {"false", "every:2", "every:3", "every:1", "true"};
	struct vf_estimate e[5];
	for (int i = 0; i < 5; i++) {
		const char *f[] = {"mode", "full", "stack", "torchtitan", "batch", "1", "seq", "8192",
				   "grad-ckpt", ck[i], NULL};
		struct vf_setup s;
		flags_setup(f, &s);
		vf_estimate_run(a, &s, g, &e[i]);
		CHECK(e[i].flops_per_step > 0 && e[i].step_seconds > 0);
	}
	double full = e[4].flops_per_step - e[0].flops_per_step;
	CHECK(full > 0);
	CHECK(fabs((e[1].flops_per_step - e[0].flops_per_step) / full - 16.0 / 32) < 1e-9);
	CHECK(fabs((e[2].flops_per_step - e[0].flops_per_step) / full - 10.0 / 32) < 1e-9);
	CHECK(e[3].flops_per_step == e[4].flops_per_step && e[3].step_seconds == e[4].step_seconds);
	CHECK(e[0].step_seconds < e[2].step_seconds && e[2].step_seconds < e[1].step_seconds &&
	      e[1].step_seconds < e[4].step_seconds);
}

/* Step time of op-level selective checkpointing: torchtitan's
 * _custom_policy saves the outputs of the ops in its save list (mm,
 * SDPA, max, reduce-scatter) but every second mm of a block, so the
 * backward reruns wk, wo and w3 (Llama's order; mechanisms.c saves the
 * others), all the memory-bound ops and no attention. Llama 3 8B: the
 * recomputed FLOPs are that GEMM share of a full recompute's; a model
 * outside the Llama layout (GPT-2: fused qkv, plain MLP) keeps the whole
 * recompute. */
static void test_sac_op_recompute_time(void)
{
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("a100-80gb");
	const char *ck[] = {"false", "selective:op", "true"};
	struct vf_estimate e[3], gp[2];
	for (int i = 0; i < 3; i++) {
		const char *f[] = {"mode", "full", "stack", "torchtitan", "batch", "1", "seq", "8192",
				   "grad-ckpt", ck[i], NULL};
		struct vf_setup s;
		flags_setup(f, &s);
		const struct vf_arch *a = arch("llama3-8b");
		if (a && g)
			vf_estimate_run(a, &s, g, &e[i]);
		if (i > 0 && arch("gpt2") && g)
			vf_estimate_run(arch("gpt2"), &s, g, &gp[i - 1]);
	}
	if (!g)
		return;
	double h = 4096, hkv = 1024, f = 14336;
	double share = (h * hkv + h * h + h * f) / (2 * h * h + 2 * h * hkv + 3 * h * f);
	double full = e[2].flops_per_step - e[0].flops_per_step;
	CHECK(full > 0);
	CHECK(fabs((e[1].flops_per_step - e[0].flops_per_step) / full - share) < 1e-9);
	CHECK(e[0].step_seconds < e[1].step_seconds && e[1].step_seconds < e[2].step_seconds);
	CHECK(fabs(e[1].parts.attention - e[0].parts.attention) <= 1e-9 * e[0].parts.attention);
	CHECK(e[2].parts.attention > e[0].parts.attention);
	CHECK(fabs(e[1].parts.memory_bound - e[2].parts.memory_bound) <= 1e-9 * e[2].parts.memory_bound);
	CHECK(gp[0].step_seconds == gp[1].step_seconds && gp[0].flops_per_step == gp[1].flops_per_step);
}

/* litgpt QLoRA's lm_head (kbit_head): Lightning's BitsandbytesPrecision
 * packs it with the layers (its weight leaves the bf16 rest for NF4's
 * 0.5 + 4/64 bytes an element), MatMul4Bit keeps its input (the final
 * norm's output, Nout x h in bf16) and dequantizes it to fp16 and casts
 * it to bf16 at each call, 4 bytes an element, live at the loss (where
 * no layer runs, so no layer's dequantized linear is). Llama 3 8B (V 128256, h 4096), 2 x 512 tokens. Nothing else
 * moves; hf (peft over transformers' bitsandbytes integration, which
 * keeps lm_head unquantized) and a tied head do not move. */
static void test_kbit_head(void)
{
	const char *q[] = {"mode", "lora", "quant", "nf4", "stack", "litgpt", "batch", "2", "seq", "512", NULL};
	struct vf_setup s0, s1;
	struct vf_estimate a, b;
	flags_setup(q, &s1);
	CHECK(s1.kbit_head && s1.kbit_saves_input);
	s1.graph_held = false; /* its term: test_graph_held */
	s0 = s1;
	s0.kbit_head = false;
	run("llama3-8b", &s0, &a);
	run("llama3-8b", &s1, &b);
	double Vh = 128256.0 * 4096, N = 2 * 512;
	CHECK_INT(b.weights_full - a.weights_full, llround(-Vh * (2 - (0.5 + 4.0 / 64))));
	CHECK_INT(b.activations_full - a.activations_full, llround(N * 4096 * 2));
	CHECK_INT(b.gradients_full, a.gradients_full);
	CHECK_INT(b.optimizer_full, a.optimizer_full);
	CHECK_INT(b.logits_full, a.logits_full);
	CHECK_INT(b.optimizer_temp_full, a.optimizer_temp_full);
	/* the loss phase: the head's 4 bytes an element and its kept input */
	const int64_t *la = a.phase_bytes[VF_PHASE_LOSS], *lb = b.phase_bytes[VF_PHASE_LOSS];
	double dact = (double)(lb[VF_TERM_ACTIVATIONS] - la[VF_TERM_ACTIVATIONS]);
	CHECK(fabs(dact - (N * 4096 * 2 + 4 * Vh)) <= 2);
	CHECK_INT(lb[VF_TERM_LOGITS], la[VF_TERM_LOGITS]);
	/* fp16 compute: dequantize_4bit's fp16 output is used as it is */
	CHECK(vf__mech_kbit_dequant_bytes(10, 2, true) == 20 && vf__mech_kbit_dequant_bytes(10, 2, false) == 40);
	/* hf: the profile leaves the head out of the quantization */
	const char *hq[] = {"mode", "lora", "quant", "nf4", "batch", "2", "seq", "512", NULL};
	flags_setup(hq, &s0);
	CHECK(!s0.kbit_head && !s0.graph_held);
	/* a tied head is the embedding, which stays bf16 */
	flags_setup(q, &s1);
	s1.graph_held = false;
	s0 = s1;
	s0.kbit_head = false;
	run("qwen2.5-0.5b", &s0, &a);
	run("qwen2.5-0.5b", &s1, &b);
	CHECK_INT(b.weights_full, a.weights_full);
	CHECK_INT(b.peak_allocated_bytes, a.peak_allocated_bytes);
	/* a head kept as a trainable copy (modules_to_save) is not packed */
	const char *mq[] = {"mode", "lora", "quant", "nf4", "stack", "litgpt", "modules-to-save", "lm_head", NULL};
	flags_setup(mq, &s1);
	s1.graph_held = false;
	s0 = s1;
	s0.kbit_head = false;
	run("llama3-8b", &s0, &a);
	run("llama3-8b", &s1, &b);
	CHECK_INT(b.weights_full, a.weights_full);
	CHECK_INT(b.peak_allocated_bytes, a.peak_allocated_bytes);
}

/* litgpt's fit loop keeps `logits` until the next forward returns
 * (graph_held): at the forward's end the previous step's logits (Nout x V
 * bf16) and, through its graph, what MatMul4Bit keeps in ctx.tensors (the
 * layers' k-bit inputs) are live beside the new logits and the final
 * norm's saved tensors. Llama 2 7B QLoRA at 2 x 512 tokens (V 32000):
 * only the forward phase moves, by exactly that; the terms do not. */
static void test_graph_held(void)
{
	const char *q[] = {"mode", "lora", "quant", "nf4", "stack", "litgpt", "batch", "2", "seq", "512", NULL};
	struct vf_setup s0, s1;
	struct vf_estimate a, b;
	flags_setup(q, &s1);
	CHECK(s1.graph_held);
	s1.kbit_head = false; /* its term: test_kbit_head */
	s0 = s1;
	s0.graph_held = false;
	run("llama2-7b", &s0, &a);
	run("llama2-7b", &s1, &b);
	CHECK(same_except(&a, &b, ""));
	double N = 1024, NV = N * 32000 * 2, per = 2 * (4096 + 4096 + 4096 + 11008.0);
	const int64_t *fa = a.phase_bytes[VF_PHASE_FORWARD], *fb = b.phase_bytes[VF_PHASE_FORWARD];
	const int64_t *la = a.phase_bytes[VF_PHASE_LOSS], *lb = b.phase_bytes[VF_PHASE_LOSS];
	/* the forward holds a layer's dequantized linear (2/3 of its linear
	 * elements in bf16), the loss does not */
	double dequant = 2 * (4 * 4096.0 * 4096 + 3 * 4096.0 * 11008) / 3;
	double final_norm = (double)(la[VF_TERM_ACTIVATIONS] - fa[VF_TERM_ACTIVATIONS]) + dequant;
	CHECK(final_norm > 0);
	CHECK(fabs((double)(fb[VF_TERM_ACTIVATIONS] - fa[VF_TERM_ACTIVATIONS]) -
		   (final_norm + NV + 32 * N * per)) <= 2);
	CHECK(fabs((double)(fb[VF_TERM_LOGITS] - fa[VF_TERM_LOGITS]) - NV) <= 1);
	for (int t = VF_TERM_WEIGHTS; t <= VF_TERM_AUTOCAST_CACHE; t++)
		CHECK_INT(fb[t], fa[t]);
	for (int t = VF_TERM_WEIGHTS; t <= VF_TERM_KV_CACHE; t++)
		CHECK_INT(lb[t], la[t]);
	/* the held step decides this run's peak */
	CHECK(b.peak_phase == VF_PHASE_FORWARD && a.peak_phase != VF_PHASE_FORWARD);
	CHECK(b.peak_allocated_bytes > a.peak_allocated_bytes);
	/* with no k-bit linears only the logits are held */
	const char *l[] = {"mode", "lora", "stack", "litgpt", "batch", "2", "seq", "512", NULL};
	flags_setup(l, &s1);
	s0 = s1;
	s0.graph_held = false;
	run("llama2-7b", &s0, &a);
	run("llama2-7b", &s1, &b);
	fa = a.phase_bytes[VF_PHASE_FORWARD], fb = b.phase_bytes[VF_PHASE_FORWARD];
	la = a.phase_bytes[VF_PHASE_LOSS];
	final_norm = (double)(la[VF_TERM_ACTIVATIONS] - fa[VF_TERM_ACTIVATIONS]);
	CHECK(fabs((double)(fb[VF_TERM_ACTIVATIONS] - fa[VF_TERM_ACTIVATIONS]) - (final_norm + NV)) <= 2);
}

/* torchtune's AdamW is fused (105 of the 107 configs that name
 * torch.optim.AdamW at 1814feb17 set fused: True): torch's _fused_adamw
 * makes no temporary, where the foreach default's _multi_tensor_adamw
 * allocates torch._foreach_sqrt(exp_avg_sqs), one bf16 tensor per
 * parameter. The profile sets fused; --optimizer-impl foreach still wins;
 * only the optimizer temporaries move, by exactly the parameters' bytes. */
static void test_torchtune_fused_adamw(void)
{
	const char *f[] = {"mode", "full", "stack", "torchtune", "precision", "bf16", "batch", "2", "seq",
			   "4096", "grad-ckpt", "true", NULL};
	const char *fe[] = {"mode", "full", "stack", "torchtune", "precision", "bf16", "batch", "2", "seq",
			    "4096", "grad-ckpt", "true", "optimizer-impl", "foreach", NULL};
	struct vf_setup s0, s1;
	struct vf_estimate a, b;
	flags_setup(f, &s1);
	flags_setup(fe, &s0);
	CHECK(s1.optimizer_impl == VF_OPTIMPL_FUSED);
	CHECK(s0.optimizer_impl == VF_OPTIMPL_FOREACH);
	run("llama3-8b", &s0, &a);
	run("llama3-8b", &s1, &b);
	CHECK(same_except(&a, &b, "optimizer_temp"));
	CHECK_INT(b.optimizer_temp_full, 0);
	CHECK_INT(a.optimizer_temp_full, llround((double)a.params * 2));
	/* the foreach step was the peak; fused, the peak is W + G + m + v or less */
	CHECK(a.peak_phase == VF_PHASE_OPTIMIZER);
	CHECK(b.peak_allocated_bytes < a.peak_allocated_bytes);
	CHECK(b.peak_allocated_bytes >= a.weights_full * 4);
}

/* The allocator replay has neither litgpt's held previous step nor its
 * quantized head's copies: for litgpt QLoRA the simulation stands aside,
 * says why, and the analytic reserve (over the phases that hold them)
 * gives the device peak, above the allocated peak; without the two
 * mechanisms the replay runs as before. */
static void test_replay_names_litgpt_terms(void)
{
	const char *q[] = {"mode", "lora", "quant", "nf4", "stack", "litgpt", "batch", "2", "seq", "512", NULL};
	const struct vf_arch *a = arch("llama3-8b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("a10g");
	REQUIRE(a && g);
	struct vf_setup s;
	struct vf_estimate e;
	struct vf_error err = {0};
	flags_setup(q, &s);
	CHECK(vf_estimate_simulate(a, &s, g, NULL, &e, NULL, &err) == VF_OK);
	CHECK(e.sim_skipped && strstr(e.sim_skipped, "graph_held") && !e.simulated);
	CHECK(e.peak_reserved_bytes > e.peak_allocated_bytes);
	s.kbit_head = s.graph_held = false;
	CHECK(vf_estimate_simulate(a, &s, g, NULL, &e, NULL, &err) == VF_OK);
	CHECK(!e.sim_skipped && e.simulated);
}

/* litgpt's chunked_cross_entropy runs F.cross_entropy on each bf16 chunk
 * with no upcast (loss_in_compute_dtype): the logits and the kept
 * log_softmax outputs are C bytes each, and the backward makes a chunk's
 * two gradients in C bytes; transformers' and torchtune's losses upcast to
 * fp32. Llama 2 7B LoRA at 2 x 512 tokens, 16 chunks: only the logits
 * term moves, to exactly 2 x 2 NV + 2 x 2 NV / 16. */
static void test_loss_in_compute_dtype(void)
{
	const char *q[] = {"mode", "lora", "stack", "litgpt", "batch", "2", "seq", "512", NULL};
	struct vf_setup s0, s1;
	struct vf_estimate a, b;
	flags_setup(q, &s1);
	CHECK(s1.loss_in_compute_dtype && s1.loss == VF_LOSS_CHUNKED && s1.loss_chunks == 16);
	s0 = s1;
	s0.loss_in_compute_dtype = false;
	run("llama2-7b", &s0, &a);
	run("llama2-7b", &s1, &b);
	CHECK(same_except(&a, &b, "logits"));
	double NV = 1024.0 * 32000;
	CHECK_INT(b.logits_full, llround(NV * 4 + 4 * NV / 16));
	CHECK_INT(a.logits_full, llround(NV * 6 + 8 * NV / 16));
	const char *h[] = {"mode", "lora", "loss", "chunked:16", "batch", "2", "seq", "512", NULL};
	flags_setup(h, &s0);
	CHECK(!s0.loss_in_compute_dtype);
}

/* litgpt's LoRA dropout (lora_dropout): one bool mask per adapted linear,
 * 1 byte per input element, q/k/v sharing the fused qkv's. Llama 2 7B at
 * 2 x 512 tokens: q,v adds 32 x N x h bytes of activations (the dropped
 * copy takes the place of the input lora_A kept: litgpt runs pure bf16,
 * and its bf16 adapters share their input without a dropout); all-linear
 * adds the masks of qkv (h), o (hq), gate (h), up (h) and down (f), and
 * one more bf16 copy of the MLP's input (gate and up each keep their own
 * dropped copy of the input they shared); nothing else moves;
 * hf (peft's lora_dropout 0.0 by default) does not set it. */
static void test_lora_dropout(void)
{
	const char *q[] = {"mode", "lora", "stack", "litgpt", "batch", "2", "seq", "512", NULL};
	const char *all[] = {"mode", "lora", "stack", "litgpt", "batch", "2", "seq", "512",
			     "lora-targets", "all-linear", NULL};
	struct vf_setup s0, s1;
	struct vf_estimate a, b;
	double N = 1024;
	flags_setup(q, &s1);
	CHECK(s1.lora_dropout);
	s0 = s1;
	s0.lora_dropout = false;
	run("llama2-7b", &s0, &a);
	run("llama2-7b", &s1, &b);
	CHECK(same_except(&a, &b, "activations"));
	CHECK_INT(b.activations_full - a.activations_full, llround(32 * N * 4096));
	flags_setup(all, &s1);
	s0 = s1;
	s0.lora_dropout = false;
	run("llama2-7b", &s0, &a);
	run("llama2-7b", &s1, &b);
	CHECK(same_except(&a, &b, "activations"));
	CHECK_INT(b.activations_full - a.activations_full, llround(32 * N * (4096 * 4 + 11008.0 + 2 * 4096)));
	const char *h[] = {"mode", "lora", NULL};
	flags_setup(h, &s0);
	CHECK(!s0.lora_dropout);
}

/* hf prepares a k-bit base (fp32 rest, fp32 residual stream) only where
 * it is not sharded over FSDP or ZeRO-3 (kbit_prep_unsharded, TRL's
 * is_sharded_qlora); the preparation's checkpoints are fp32, so the
 * prepared sharded setup holds more activations than the unprepared. */
static void test_kbit_prep_unsharded(void)
{
	const char *one[] = {"mode", "lora", "quant", "nf4", NULL};
	const char *fsdp[] = {"mode", "lora", "quant", "nf4", "gpus", "2", "shard", "fsdp", NULL};
	const char *z3[] = {"mode", "lora", "quant", "nf4", "gpus", "2", "shard", "zero3", NULL};
	const char *z2[] = {"mode", "lora", "quant", "nf4", "gpus", "2", "shard", "zero2", NULL};
	const char *tt[] = {"mode", "lora", "quant", "nf4", "stack", "torchtune", NULL};
	struct vf_setup s;
	flags_setup(one, &s);
	CHECK(s.kbit_fp32_rest && s.kbit_prep_unsharded && vf_setup_kbit_prep(&s));
	flags_setup(z2, &s);
	CHECK(vf_setup_kbit_prep(&s));
	flags_setup(z3, &s);
	CHECK(!vf_setup_kbit_prep(&s));
	flags_setup(fsdp, &s);
	CHECK(!vf_setup_kbit_prep(&s));
	struct vf_setup p = s;
	p.kbit_prep_unsharded = false; /* a stack that prepares a sharded base too */
	CHECK(vf_setup_kbit_prep(&p));
	struct vf_estimate a, b;
	run("llama2-7b", &s, &a);
	run("llama2-7b", &p, &b);
	CHECK(b.activations_full > a.activations_full);
	flags_setup(tt, &s);
	CHECK(!s.kbit_fp32_rest && !vf_setup_kbit_prep(&s));
}

/* Pure bf16 (--no-autocast): peft's fp32 adapters take an fp32 copy of
 * their input each and run their GEMMs in fp32 (IEEE on the CUDA cores,
 * or TF32 with --tf32), so the step is slower than under autocast, and
 * TF32 no slower than IEEE; bf16 adapters have no fp32 GEMM and their step is
 * autocast's. GPT-2's LayerNorm and Python GELU, which autocast runs in
 * fp32, save bf16 tensors without it. */
static void test_no_autocast(void)
{
	const struct vf_arch *a = arch("mistral-7b");
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("a100-80gb");
	REQUIRE(a && g);
	/* flag/value pairs after the common ones */
	const char *extra[][5] = {{NULL},
				  {"autocast", "false", NULL},
				  {"autocast", "false", "tf32", "true", NULL},
				  {"adapter-dtype", "bf16", NULL},
				  {"adapter-dtype", "bf16", "autocast", "false", NULL}};
	struct vf_estimate e[5];
	for (int i = 0; i < 5; i++) {
		const char *f[18] = {"mode", "lora", "precision", "bf16", "batch", "4", "seq", "4096",
				     "grad-ckpt", "true", "lora-targets", "q_proj,k_proj,v_proj,o_proj"};
		int n = 12;
		for (int k = 0; k < 4 && extra[i][k]; k++)
			f[n++] = extra[i][k];
		f[n] = NULL;
		struct vf_setup s;
		flags_setup(f, &s);
		vf_estimate_run(a, &s, g, &e[i]);
		fprintf(stderr, "  %d: step %.4f s, activations %lld\n", i, e[i].step_seconds,
			(long long)e[i].activations_full);
	}
	/* rank-16 products at 4 bytes an operand are memory-bound: TF32 does
	 * not make them faster than IEEE fp32 here */
	CHECK(e[0].step_seconds > 0 && e[0].step_seconds < e[2].step_seconds &&
	      e[2].step_seconds <= e[1].step_seconds);
	CHECK(e[1].step_seconds < 1.2 * e[0].step_seconds); /* a few percent: adapters are rank 16 */
	CHECK(e[4].step_seconds == e[3].step_seconds);
	CHECK(e[1].activations_full >= e[0].activations_full);
	CHECK(e[4].activations_full <= e[3].activations_full);
	const struct vf_arch *g2 = arch("gpt2");
	REQUIRE(g2);
	const char *full[] = {"mode", "full", "precision", "bf16", "batch", "8", "seq", "1024", NULL};
	const char *pure[] = {"mode", "full", "precision", "bf16", "batch", "8", "seq", "1024", "autocast", "false", NULL};
	struct vf_setup s0, s1;
	struct vf_estimate f0, f1;
	flags_setup(full, &s0);
	flags_setup(pure, &s1);
	vf_estimate_run(g2, &s0, g, &f0);
	vf_estimate_run(g2, &s1, g, &f1);
	fprintf(stderr, "  gpt2: activations %lld -> %lld, step %.4f -> %.4f\n", (long long)f0.activations_full,
		(long long)f1.activations_full, f0.step_seconds, f1.step_seconds);
	CHECK(f1.activations_full < f0.activations_full && f1.step_seconds < f0.step_seconds);
	CHECK(f1.weights_full == f0.weights_full && f1.optimizer_full == f0.optimizer_full);
}

/* torch 1.x's zero_grad() defaulted to set_to_none=False until torch 2.0
 * (pytorch/pytorch#92731), and the HF Trainer called model.zero_grad()
 * without arguments until huggingface/transformers#22136 (March 2023):
 * the gradients are zeroed in place and held through the next forward.
 * --zero-grad zeros moves exactly the gradients of the forward and loss
 * phases, by the whole gradient; the backward and the optimizer step
 * hold them anyway; with gradient accumulation the forward held them
 * already. */
static void test_zero_grad_kept(void)
{
	const char *q[] = {"stack", "hf", "precision", "fp32", "batch", "4", "seq", "512",
			   "attention", "eager", "head", "classify:2", NULL};
	struct vf_setup s0, s1;
	struct vf_estimate a, b;
	struct vf_error err = {0};
	flags_setup(q, &s0);
	CHECK(!s0.grads_zeroed);
	s1 = s0;
	CHECK(vf_setup_set(&s1, "zero-grad", "zeros", &err) == VF_OK && s1.grads_zeroed);
	CHECK(vf_setup_set(&s1, "zero-grad", "sometimes", &err) != VF_OK && s1.grads_zeroed);
	run("bert-large", &s0, &a);
	run("bert-large", &s1, &b);
	CHECK(same_except(&a, &b, ""));
	CHECK(a.gradients_full > 0);
	for (int p = VF_PHASE_FORWARD; p <= VF_PHASE_OPTIMIZER; p++)
		for (int t = VF_TERM_WEIGHTS; t <= VF_TERM_KV_CACHE; t++) {
			bool held = t == VF_TERM_GRADIENTS && p <= VF_PHASE_LOSS;
			CHECK_INT(b.phase_bytes[p][t] - a.phase_bytes[p][t], held ? a.gradients_full : 0);
		}
	/* the loss phase, the peak of both, holds the gradients too */
	CHECK(a.peak_phase == VF_PHASE_LOSS && b.peak_phase == VF_PHASE_LOSS);
	CHECK_INT(b.peak_allocated_bytes - a.peak_allocated_bytes, a.gradients_full);
	CHECK(b.peak_reserved_bytes > a.peak_reserved_bytes && b.peak_bytes > a.peak_bytes);
	/* accumulating: the forward of the second micro-batch held them already */
	CHECK(vf_setup_set(&s0, "grad-accum", "2", &err) == VF_OK);
	s1 = s0;
	s1.grads_zeroed = true;
	run("bert-large", &s0, &a);
	run("bert-large", &s1, &b);
	for (int p = VF_PHASE_FORWARD; p <= VF_PHASE_OPTIMIZER; p++)
		for (int t = VF_TERM_WEIGHTS; t <= VF_TERM_KV_CACHE; t++)
			CHECK_INT(b.phase_bytes[p][t], a.phase_bytes[p][t]);
	CHECK_INT(b.peak_allocated_bytes, a.peak_allocated_bytes);
}

/* The replay of --zero-grad zeros: the first step's gradients are never
 * freed; the second step's are made, added into them and freed, as a
 * second micro-batch of gradient accumulation does. A step of two layers
 * (one 64 MiB weight, its gradient, two states, 256 MiB saved): the
 * allocated peak is that of accumulation's, above the freed gradients'. */
static void test_zero_grad_replay(void)
{
	const double MiB = 1 << 20;
	struct vf__step st;
	memset(&st, 0, sizeof st);
	st.train = st.full = true;
	st.layers = 2;
	st.micro = 1;
	st.layer_w.n = st.layer_train.n = st.layer_act.n = 1;
	st.layer_w.bytes[0] = st.layer_train.bytes[0] = 64 * MiB;
	st.layer_act.bytes[0] = 256 * MiB;
	st.nstates = 2;
	st.state_ratio = 1;
	st.ot = VF__OT_NONE;
	struct vf_alloc_config cfg = {0};
	struct vf__replay_peaks freed, kept, accum;
	struct vf_error err = {0};
	CHECK(vf__step_simulate_peaks(&st, &cfg, &freed, &err) == VF_OK);
	st.grads_kept = true;
	CHECK(vf__step_simulate_peaks(&st, &cfg, &kept, &err) == VF_OK);
	st.grads_kept = false;
	st.micro = 2;
	CHECK(vf__step_simulate_peaks(&st, &cfg, &accum, &err) == VF_OK);
	CHECK_INT(kept.allocated, accum.allocated);
	CHECK(kept.allocated > freed.allocated);
	CHECK(kept.reserved >= kept.allocated);
}

int main(void)
{
	RUN(test_paged_outside_allocator);
	RUN(test_peak_scope_and_load);
	RUN(test_compiled_chunked_loss);
	RUN(test_kbit_saved_inputs);
	RUN(test_selective_checkpointing);
	RUN(test_fsdp_mixed_precision);
	RUN(test_peaks_named_by_tool);
	RUN(test_head_adapter_and_saved_modules);
	RUN(test_task_head);
	RUN(test_float8_linears);
	RUN(test_quant_load_transient);
	RUN(test_prequantized_bases);
	RUN(test_moe_expert_grad_transient);
	RUN(test_cpu_offload);
	RUN(test_split_simulated_per_gpu);
	RUN(test_no_autocast);
	RUN(test_paged_per_pipeline_stage);
	RUN(test_bad_mechanism_values);
	RUN(test_native_gelu);
	RUN(test_every_n_recompute_time);
	RUN(test_sac_op_recompute_time);
	RUN(test_kbit_head);
	RUN(test_graph_held);
	RUN(test_torchtune_fused_adamw);
	RUN(test_replay_names_litgpt_terms);
	RUN(test_loss_in_compute_dtype);
	RUN(test_lora_dropout);
	RUN(test_kbit_prep_unsharded);
	RUN(test_zero_grad_kept);
	RUN(test_zero_grad_replay);
	return vf_test_done();
}
