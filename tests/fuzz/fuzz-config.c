/* fuzz-config.c - libFuzzer target for the config reader: JSON text ->
 * vf_arch_from_config -> parameter groups -> JSON, as for a config.json, a
 * catalog entry's "config", or a safetensors __metadata__ config. Corpus:
 * tests/fuzz/corpus/config/ (the fixtures' config.json files, the
 * catalog's configs, and the 33 public configs of ../shared/realconfigs as
 * real-*.json: MoE, MLA, legacy and multimodal formats) and
 * tests/fuzz/seeds/config (T5 / UMT5 encoder stacks, encoder task heads). */
#include <stddef.h>
#include <stdint.h>

#include "vramfit/model/arch.h"
#include "vramfit/base/json.h"
#include "fuzz-input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *cfg = fuzz_config_json(data, size);
	struct vf_error err = {0};
	if (!cfg)
		return 0;
	struct vf_arch a;
	if (vf_arch_from_config(cfg, "fuzz/config.json", &a, &err) == VF_OK) {
		struct vf_param_groups g;
		if (vf_arch_param_groups(&a, &g) && g.total < 0)
			__builtin_trap(); /* counts never go negative */
		if (vf_arch_mtp_params(&a) < 0)
			__builtin_trap();
		if (vf_arch_active_params(&a) < -1)
			__builtin_trap(); /* the active count, or -1 when not countable */
		if (a.approximate != (a.not_understood[0] != 0))
			__builtin_trap(); /* approximate exactly when something is named */
		cJSON *j = vf_arch_to_json(&a);
		cJSON_Delete(j);
	}
	cJSON_Delete(cfg);
	return 0;
}
