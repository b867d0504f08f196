/* test-stack.c - training stacks as profiles (data/stacks/NAME.json): each
 * profile changes exactly the mechanisms it names relative to hf, flags
 * override profiles, bad profiles fail naming the file and field, and
 * each mechanism moves the estimate the way it should. */
#include <math.h>

#include "vf_test.h"
#include "vramfit/base/data.h"
#include "vramfit/base/json.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/stack.h"
#include "vramfit/model/models.h"

static bool setup_for(const char *stack, enum vf_mode mode, struct vf_setup *s)
{
	struct vf_error err = {0};
	vf_setup_defaults(s);
	s->mode = mode;
	if (vf_setup_set(s, "stack", stack, &err) != VF_OK)
		return false;
	return vf_setup_finish(s, &err) == VF_OK;
}

/* What a setup holds for a mechanism that a profile leaves out. */
static const char *const defaults_json =
	"{\"lora_precision\": \"amp\", \"full_precision\": \"amp\", \"adapter_dtype\": \"fp32\","
	" \"loss\": \"full\", \"compile\": false, \"optimizer_in_backward\": false,"
	" \"activation_offload\": false, \"kbit_fp32_rest\": false, \"nf4_double_quant\": false,"
	" \"kbit_prep_unsharded\": false,"
	" \"paged_optimizer\": false, \"peak_scope\": \"step\", \"peak_report\": null,"
	" \"load\": \"sharded\", \"kbit_saves_input\": false, \"fsdp_mixed_precision\": false,"
	" \"optimizer_impl\": \"foreach\", \"grad_ckpt_default\": \"none\", \"float8\": false,"
	" \"grad_ckpt_fsdp\": false, \"quantize_on_load\": \"bitsandbytes\", \"gelu_native\": false,"
	" \"kbit_head\": false, \"graph_held\": false, \"loss_in_compute_dtype\": false,"
	" \"lora_dropout\": false, \"fsdp_no_sync\": false, \"tf32\": false, \"autocast\": true,"
	" \"fsdp_lora_flat\": false}";

static const cJSON *value_of(const cJSON *p, const char *key, const cJSON *defaults)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "mechanisms"), key), "value");
	return v ? v : cJSON_GetObjectItemCaseSensitive(defaults, key);
}

/* The mechanisms of a profile whose value differs from hf's (a mechanism
 * a profile leaves out has the setup's default). */
static bool differs(const cJSON *a, const cJSON *b, const char *key)
{
	cJSON *d = cJSON_Parse(defaults_json);
	bool r = !cJSON_Compare(value_of(a, key, d), value_of(b, key, d), true);
	cJSON_Delete(d);
	return r;
}

static cJSON *profile(const char *name)
{
	char file[64], src[256];
	snprintf(file, sizeof file, "stacks/%s.json", name);
	cJSON *p = NULL;
	struct vf_error err = {0};
	if (vf_data_load_json(file, &p, src, sizeof src, &err) != VF_OK)
		return NULL;
	return p;
}

/* Each stack against hf: a setup field differs exactly when the profile's
 * mechanism for it differs. */
static void test_each_profile_changes_what_it_names(void)
{
	const char *stacks[] = {"torchtune", "litgpt", "ltx", "torchtitan"};
	cJSON *hf = profile("hf");
	CHECK(hf != NULL);
	for (size_t i = 0; i < 4; i++) {
		cJSON *p = profile(stacks[i]);
		CHECK(p != NULL);
		for (int m = 0; m < 2; m++) {
			enum vf_mode mode = m ? VF_MODE_LORA : VF_MODE_FULL;
			struct vf_setup a, b;
			CHECK(setup_for("hf", mode, &a));
			CHECK(setup_for(stacks[i], mode, &b));
			const char *pk = m ? "lora_precision" : "full_precision";
			CHECK((a.precision != b.precision) == differs(hf, p, pk));
			CHECK((a.adapter_bf16 != b.adapter_bf16) == differs(hf, p, "adapter_dtype"));
			CHECK((a.loss != b.loss || (a.loss == VF_LOSS_CHUNKED && a.loss_chunks != b.loss_chunks)) ==
			      differs(hf, p, "loss"));
			CHECK((a.compile != b.compile) == differs(hf, p, "compile"));
			CHECK((a.activation_offload != b.activation_offload) == differs(hf, p, "activation_offload"));
			CHECK((a.optimizer_in_backward != b.optimizer_in_backward) ==
			      differs(hf, p, "optimizer_in_backward"));
			CHECK((a.kbit_fp32_rest != b.kbit_fp32_rest) == differs(hf, p, "kbit_fp32_rest"));
			CHECK((a.kbit_prep_unsharded != b.kbit_prep_unsharded) ==
			      differs(hf, p, "kbit_prep_unsharded"));
			CHECK((a.paged_optimizer != b.paged_optimizer) == differs(hf, p, "paged_optimizer"));
			CHECK((a.peak_scope != b.peak_scope) == differs(hf, p, "peak_scope"));
			CHECK((a.peak_report != b.peak_report) == differs(hf, p, "peak_report"));
			CHECK((a.load_full_per_rank != b.load_full_per_rank) == differs(hf, p, "load"));
			CHECK((a.kbit_saves_input != b.kbit_saves_input) == differs(hf, p, "kbit_saves_input"));
			CHECK((a.fsdp_mixed_precision != b.fsdp_mixed_precision) ==
			      differs(hf, p, "fsdp_mixed_precision"));
			CHECK((a.optimizer_impl != b.optimizer_impl) == differs(hf, p, "optimizer_impl"));
			CHECK((a.float8 != b.float8) == differs(hf, p, "float8"));
			CHECK((a.gelu_native != b.gelu_native) == differs(hf, p, "gelu_native"));
			CHECK((a.kbit_head != b.kbit_head) == differs(hf, p, "kbit_head"));
			CHECK((a.graph_held != b.graph_held) == differs(hf, p, "graph_held"));
			CHECK((a.fsdp_no_sync != b.fsdp_no_sync) == differs(hf, p, "fsdp_no_sync"));
			CHECK((a.fsdp_lora_flat != b.fsdp_lora_flat) == differs(hf, p, "fsdp_lora_flat"));
			CHECK((a.loss_in_compute_dtype != b.loss_in_compute_dtype) ==
			      differs(hf, p, "loss_in_compute_dtype"));
			CHECK((a.lora_dropout != b.lora_dropout) == differs(hf, p, "lora_dropout"));
			CHECK((a.tf32 != b.tf32) == differs(hf, p, "tf32"));
			CHECK((a.autocast != b.autocast) == differs(hf, p, "autocast"));
			CHECK((a.quant_load != b.quant_load) == differs(hf, p, "quantize_on_load"));
			CHECK((a.grad_ckpt != b.grad_ckpt || a.ckpt_every != b.ckpt_every ||
			       a.ckpt_selective_op != b.ckpt_selective_op) == differs(hf, p, "grad_ckpt_default"));
			/* nothing outside the stack's mechanisms moves */
			CHECK(a.batch == b.batch && a.seq == b.seq && a.optimizer == b.optimizer &&
			      a.quant == b.quant && a.lora_rank == b.lora_rank);
		}
		cJSON_Delete(p);
	}
	cJSON_Delete(hf);
}

static void test_hf_defaults(void)
{
	struct vf_setup s;
	CHECK(setup_for("hf", VF_MODE_LORA, &s));
	CHECK(s.precision == VF_PREC_BF16 && !s.adapter_bf16 && s.loss == VF_LOSS_FULL);
	CHECK(setup_for("hf", VF_MODE_FULL, &s));
	CHECK(s.precision == VF_PREC_AMP);
	CHECK(setup_for("torchtune", VF_MODE_LORA, &s));
	CHECK(s.adapter_bf16 && s.loss == VF_LOSS_CHUNKED && s.loss_chunks == 8);
}

static void test_flags_override(void)
{
	struct vf_setup s;
	struct vf_error err = {0};
	vf_setup_defaults(&s);
	s.mode = VF_MODE_LORA;
	CHECK(vf_setup_set(&s, "stack", "torchtune", &err) == VF_OK);
	CHECK(vf_setup_set(&s, "loss", "full", &err) == VF_OK);
	CHECK(vf_setup_set(&s, "adapter-dtype", "fp32", &err) == VF_OK);
	CHECK(vf_setup_set(&s, "precision", "amp", &err) == VF_OK);
	CHECK(vf_setup_finish(&s, &err) == VF_OK);
	CHECK(s.loss == VF_LOSS_FULL && !s.adapter_bf16 && s.precision == VF_PREC_AMP);
	CHECK(vf_setup_set(&s, "loss", "chunked:0", &err) == VF_EUSAGE);
	CHECK(vf_setup_set(&s, "loss", "chunky", &err) == VF_EUSAGE);
	CHECK(vf_setup_set(&s, "optimizer", "paged-adamw8bit", &err) == VF_OK);
	CHECK(s.paged_optimizer && s.optimizer == VF_OPT_ADAMW8BIT);
	CHECK(vf_setup_set(&s, "optimizer", "paged-sgd", &err) == VF_EUSAGE);
	vf_setup_defaults(&s);
	CHECK(vf_setup_set(&s, "stack", "nosuch", &err) == VF_OK);
	CHECK(vf_setup_finish(&s, &err) == VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "--stack nosuch");
	vf_setup_defaults(&s);
	CHECK(vf_setup_set(&s, "optimizer-in-backward", NULL, &err) == VF_OK);
	CHECK(vf_setup_set(&s, "grad-accum", "4", &err) == VF_OK);
	CHECK(vf_setup_finish(&s, &err) == VF_EUSAGE);
}

/* TF32: litgpt's main() turns it on (the profile says so, the setup says
 * where it came from); the other stacks leave PyTorch's default (off); a
 * flag wins over the profile. */
/* Autocast: on by default (HF bf16=True), off in torchtune's profile, a
 * flag overrides either; a profile value that is not a boolean is named. */
static void test_autocast_defaults(void)
{
	struct vf_setup s;
	struct vf_error err = {0};
	vf_setup_defaults(&s);
	CHECK(s.autocast);
	CHECK(vf_stack_apply(&s, &err) == VF_OK);
	CHECK(s.autocast);
	vf_setup_defaults(&s);
	CHECK(vf_setup_set(&s, "stack", "torchtune", &err) == VF_OK);
	CHECK(vf_stack_apply(&s, &err) == VF_OK);
	CHECK(!s.autocast);
	vf_setup_defaults(&s);
	CHECK(vf_setup_set(&s, "stack", "torchtune", &err) == VF_OK);
	CHECK(vf_setup_set(&s, "autocast", NULL, &err) == VF_OK);
	CHECK(vf_stack_apply(&s, &err) == VF_OK);
	CHECK(s.autocast); /* the flag wins */
	const char *off[][2] = {{"no-autocast", NULL}, {"autocast", "false"}, {"autocast", "off"}};
	for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
		vf_setup_defaults(&s);
		CHECK(vf_setup_set(&s, off[i][0], off[i][1], &err) == VF_OK);
		CHECK(vf_stack_apply(&s, &err) == VF_OK);
		CHECK(!s.autocast && (s.stack_given & VF_STACK_G_AUTOCAST));
	}
	CHECK(vf_setup_set(&s, "autocast", "maybe", &err) == VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "--autocast");
	cJSON *p = cJSON_Parse("{\"mechanisms\": {\"autocast\": {\"value\": \"bf16\", \"source\": \"x\"}}}");
	vf_setup_defaults(&s);
	CHECK(vf_stack_apply_json(&s, p, "bad.json", &err) != VF_OK);
	CHECK_CONTAINS(err.msg, "mechanisms.autocast.value");
	cJSON_Delete(p);
}

static void test_tf32_defaults(void)
{
	struct vf_setup s;
	struct vf_error err = {0};
	const char *off[] = {"hf", "torchtune", "torchtitan", "ltx"};
	for (size_t i = 0; i < 4; i++) {
		CHECK(setup_for(off[i], VF_MODE_FULL, &s));
		CHECK(!s.tf32 && s.tf32_from == VF_TF32_PYTORCH);
	}
	CHECK(setup_for("litgpt", VF_MODE_FULL, &s));
	CHECK(s.tf32 && s.tf32_from == VF_TF32_STACK);
	CHECK_STR(vf_tf32_from_name(s.tf32_from), "stack");
	const char *flags[][2] = {{"no-tf32", NULL}, {"tf32", "false"}, {"tf32", "off"}};
	for (size_t i = 0; i < 3; i++) {
		vf_setup_defaults(&s);
		CHECK(vf_setup_set(&s, "stack", "litgpt", &err) == VF_OK);
		CHECK(vf_setup_set(&s, flags[i][0], flags[i][1], &err) == VF_OK);
		CHECK(vf_setup_finish(&s, &err) == VF_OK);
		CHECK(!s.tf32 && s.tf32_from == VF_TF32_OPTION);
	}
	vf_setup_defaults(&s);
	CHECK(vf_setup_set(&s, "tf32", NULL, &err) == VF_OK);
	CHECK(vf_setup_finish(&s, &err) == VF_OK);
	CHECK(s.tf32 && s.tf32_from == VF_TF32_OPTION);
	CHECK_STR(vf_tf32_from_name(s.tf32_from), "option");
	CHECK(vf_setup_set(&s, "tf32", "maybe", &err) == VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "--tf32");
	/* a profile whose tf32 is not a boolean is named */
	cJSON *p = cJSON_Parse("{\"mechanisms\": {\"tf32\": {\"value\": \"high\", \"source\": \"x\"}}}");
	CHECK(p != NULL);
	vf_setup_defaults(&s);
	CHECK(vf_stack_apply_json(&s, p, "bad.json", &err) != VF_OK);
	CHECK_CONTAINS(err.msg, "mechanisms.tf32.value");
	cJSON_Delete(p);
}

static void test_bad_profiles(void)
{
	struct vf_setup s;
	struct vf_error err = {0};
	const char *bad[] = {
		"{\"mechanisms\": {\"warp_drive\": {\"value\": true, \"source\": \"x\"}}}",
		"{\"mechanisms\": {\"compile\": {\"value\": true}}}",
		"{\"mechanisms\": {\"compile\": {\"value\": \"yes\", \"source\": \"x\"}}}",
		"{\"mechanisms\": {\"loss\": {\"value\": \"chunked:x\", \"source\": \"x\"}}}",
		"{\"mechanisms\": 3}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cJSON *p = cJSON_Parse(bad[i]);
		vf_setup_defaults(&s);
		CHECK(vf_stack_apply_json(&s, p, "stacks/bad.json", &err) != VF_OK);
		CHECK_CONTAINS(err.msg, "stacks/bad.json: mechanisms");
		cJSON_Delete(p);
	}
}

static void est(const char *model, const char *flags[], struct vf_estimate *e)
{
	struct vf_setup s;
	struct vf_error err = {0};
	vf_setup_defaults(&s);
	for (int i = 0; flags[i]; i += 2)
		vf_setup_set(&s, flags[i], flags[i + 1], &err);
	CHECK(vf_setup_finish(&s, &err) == VF_OK);
	const struct vf_model_entry *m = vf_models_find(model);
	CHECK(m && m->has_arch);
	if (m && m->has_arch)
		vf_estimate_run(&m->arch, &s, NULL, e);
}

/* Each mechanism moves the term it acts on. */
static void test_mechanisms_move_the_estimate(void)
{
	struct vf_estimate a, b;
	const char *lora[] = {"mode", "lora", "lora-targets", "all-linear", "lora-rank", "64", NULL};
	const char *lora_bf16[] = {"mode", "lora", "lora-targets", "all-linear", "lora-rank", "64",
				   "adapter-dtype", "bf16", NULL};
	est("llama2-7b", lora, &a);
	est("llama2-7b", lora_bf16, &b);
	CHECK(b.weights_full < a.weights_full && b.gradients_full * 2 == a.gradients_full);
	const char *full_loss[] = {"mode", "lora", "batch", "4", NULL};
	const char *chunked[] = {"mode", "lora", "batch", "4", "loss", "chunked:8", NULL};
	const char *fused[] = {"mode", "lora", "batch", "4", "loss", "fused-linear", NULL};
	struct vf_estimate c;
	est("llama3-8b", full_loss, &a);
	est("llama3-8b", chunked, &b);
	est("llama3-8b", fused, &c);
	CHECK(b.logits_full < a.logits_full && c.logits_full < b.logits_full);
	CHECK(b.peak_allocated_bytes < a.peak_allocated_bytes);
	const char *off[] = {"mode", "lora", "batch", "4", "activation-offload", "", NULL};
	est("llama3-8b", off, &b);
	CHECK(b.activations_full < a.activations_full / 4);
	const char *full[] = {"mode", "full", "batch", "1", "seq", "512", NULL};
	const char *oib[] = {"mode", "full", "batch", "1", "seq", "512", "optimizer-in-backward", "", NULL};
	const char *paged[] = {"mode", "full", "batch", "1", "seq", "512", "optimizer", "paged-adamw", NULL};
	est("llama2-7b", full, &a);
	est("llama2-7b", oib, &b);
	CHECK(b.peak_allocated_bytes < a.peak_allocated_bytes - a.gradients_full / 2);
	est("llama2-7b", paged, &c);
	/* paged states are CUDA managed memory: out of PyTorch's allocated
	 * peak, in nvidia-smi's figure, evicted before an out-of-memory */
	CHECK(c.evictable_bytes == c.paged_bytes && c.paged_bytes > 0 && a.evictable_bytes == 0);
	CHECK(c.optimizer_full == a.optimizer_full && c.optimizer_bytes < c.optimizer_full);
	const char *q[] = {"mode", "lora", "quant", "nf4", NULL};
	const char *qtt[] = {"mode", "lora", "quant", "nf4", "stack", "torchtune", NULL};
	est("llama2-7b", q, &a);
	est("llama2-7b", qtt, &b);
	/* hf: NF4 with an fp32 absmax per 64 (0.5625 B) and the rest in fp32;
	 * torchtune: double-quantized absmax and the rest in bf16 */
	CHECK(a.weights_full > b.weights_full);
	const char *comp[] = {"mode", "full", "batch", "1", "seq", "512", "compile", "", NULL};
	est("llama2-7b", comp, &b);
	CHECK(b.activations_full < a.activations_full);
}

/* FSDP gradient accumulation by stack, as each stack's loop does it: hf
 * (Trainer's accelerator.no_sync), the LTX-2 trainer (accelerator.accumulate)
 * and litgpt (fabric.no_backward_sync) accumulate under no_sync; torchtune's
 * and torchtitan's FSDP2 loops sync every micro-batch. hf's LoRA adapters are
 * units of their own (peft's wrap policy): only their whole gradients are
 * held; litgpt's and the LTX-2 trainer's share the layers' flat parameters. */
static void test_fsdp_no_sync_by_stack(void)
{
	const char *stacks[] = {"hf", "torchtune", "litgpt", "ltx", "torchtitan"};
	const bool no_sync[] = {true, false, true, true, false};
	const bool flat[] = {false, false, true, true, false};
	for (size_t i = 0; i < 5; i++) {
		struct vf_setup s;
		CHECK(setup_for(stacks[i], VF_MODE_LORA, &s));
		CHECK(s.fsdp_no_sync == no_sync[i]);
		CHECK(s.fsdp_lora_flat == flat[i]);
	}
	/* on 4 GPUs with accumulation 4, the gradients the forward holds: hf,
	 * full fine-tuning: every parameter's whole gradient (bf16 under amp:
	 * accelerate's FSDP MixedPrecision param_dtype, fsdp_mixed_precision);
	 * LoRA: the adapters' whole gradients (fp32); torchtune (bf16) and
	 * torchtitan (fp32 shards): the shards; the optimizer step the shards */
	struct vf_estimate e;
	const char *stack_of[] = {"hf", "hf", "torchtune", "torchtitan"};
	const char *mode_of[] = {"full", "lora", "full", "full"};
	const double per[] = {2, 4, 2.0 / 4, 4.0 / 4};
	for (int i = 0; i < 4; i++) {
		const char *f[] = {"stack", stack_of[i], "mode", mode_of[i], "gpus", "4", "shard", "fsdp",
				   "batch", "1", "seq", "512", "grad-accum", "4", NULL};
		est("llama2-7b", f, &e);
		double held = (double)e.trainable_params * per[i];
		double fw = (double)e.phase_bytes[VF_PHASE_FORWARD][VF_TERM_GRADIENTS];
		fprintf(stderr, "  %s %s: forward gradients %.0f, expected %.0f\n", stack_of[i], mode_of[i], fw, held);
		CHECK(fabs(fw - held) < 1e3);
	}
}

int main(void)
{
	RUN(test_hf_defaults);
	RUN(test_each_profile_changes_what_it_names);
	RUN(test_flags_override);
	RUN(test_tf32_defaults);
	RUN(test_autocast_defaults);
	RUN(test_bad_profiles);
	RUN(test_mechanisms_move_the_estimate);
	RUN(test_fsdp_no_sync_by_stack);
	return vf_test_done();
}
