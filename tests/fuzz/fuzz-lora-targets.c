/* fuzz-lora-targets.c - libFuzzer target for LoRA targets matched against a
 * model's own modules (lib/estimate/loratargets.c): the input is a command
 * line of setup flags (words split on white space, as fuzz-split's) ->
 * vf_setup_set by name / vf_setup_finish -> vf_lora_targets_resolve on a
 * Mamba-1, a Mamba-2, a Jamba-like hybrid, a gated t5 and a gpt2 (configs
 * generated here: the families with a table of their module names) and a
 * generic transformer -> the estimate where the targets are accepted. A
 * refusal carries a message; the trainable count is never negative and,
 * on an accepted list, only modules the model has. Corpus:
 * tests/fuzz/corpus/lora-targets/ (the command lines of
 * tests/cli/lora-targets.sh). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/loratargets.h"
#include "vramfit/estimate/setup.h"
#include "vramfit/model/arch.h"
#include "setup-words.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const configs[] = {
	"{\"model_type\":\"mamba\",\"hidden_size\":256,\"num_hidden_layers\":4,\"vocab_size\":1000,"
	"\"state_size\":16,\"expand\":2,\"conv_kernel\":4,\"time_step_rank\":\"auto\"}",
	"{\"model_type\":\"mamba2\",\"hidden_size\":256,\"num_hidden_layers\":4,\"vocab_size\":1000,"
	"\"state_size\":64,\"expand\":2,\"conv_kernel\":4,\"n_groups\":1,\"num_heads\":8,\"head_dim\":64}",
	"{\"model_type\":\"jamba\",\"hidden_size\":256,\"num_hidden_layers\":8,\"num_attention_heads\":4,"
	"\"num_key_value_heads\":2,\"intermediate_size\":512,\"vocab_size\":1000,\"num_experts\":4,"
	"\"num_experts_per_tok\":2,\"attn_layer_period\":4,\"attn_layer_offset\":2,\"expert_layer_period\":2,"
	"\"expert_layer_offset\":1,\"mamba_d_state\":16,\"mamba_d_conv\":4,\"mamba_expand\":2,\"mamba_dt_rank\":16}",
	"{\"model_type\":\"t5\",\"d_model\":256,\"d_kv\":32,\"d_ff\":512,\"num_layers\":2,\"num_heads\":8,"
	"\"vocab_size\":1000,\"feed_forward_proj\":\"gated-gelu\"}",
	"{\"model_type\":\"gpt2\",\"n_embd\":256,\"n_layer\":2,\"n_head\":4,\"vocab_size\":1000,\"n_positions\":512}",
};

static struct vf_arch archs[6];
static int narchs;

static void load_archs(void)
{
	for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
		cJSON *j = cJSON_Parse(configs[i]);
		struct vf_error err = {0};
		if (j && vf_arch_from_config(j, "fuzz.json", &archs[narchs], &err) == VF_OK)
			narchs++;
		cJSON_Delete(j);
	}
	vf_estimate_generic_arch(300000000LL, &archs[narchs++]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!narchs)
		load_archs();
	struct vf_setup s;
	if (!fuzz_setup_from_words(data, size, &s))
		return 0;
	if (s.seq > 8192 || s.batch > 16 || s.gpus > 64 || s.tp * s.pp > 16)
		return 0; /* sizes only: the same code at any scale */
	for (int i = 0; i < narchs; i++) {
		struct vf_setup r = s;
		struct vf_error err = {0};
		if (vf_lora_targets_resolve(&archs[i], &r, &err) != VF_OK) {
			if (!err.msg[0])
				__builtin_trap();
			continue;
		}
		if (archs[i].ssm_layers > 0 && r.mode == VF_MODE_LORA &&
		    archs[i].ssm_heads > 0 && (r.lora_targets & (VF_LORA_SSM_X | VF_LORA_SSM_DT)))
			__builtin_trap(); /* Mamba-2 has no x_proj or dt_proj */
		if (r.mode == VF_MODE_LORA && strlen(r.lora_targets_shown) >= sizeof r.lora_targets_shown)
			__builtin_trap();
		struct vf_estimate e;
		vf_estimate_run(&archs[i], &r, NULL, &e);
		if (e.trainable_params < 0 || e.peak_bytes < 0)
			__builtin_trap();
	}
	return 0;
}
