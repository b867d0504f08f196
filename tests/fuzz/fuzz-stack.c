/* fuzz-stack.c - libFuzzer target for the training-stack profile reader:
 * JSON text -> vf_stack_apply_json on a default setup (full and LoRA),
 * then the setup's JSON. Corpus: tests/fuzz/corpus/stack/ (the shipped
 * data/stacks/ files). */
#include <stddef.h>
#include <stdint.h>

#include "fuzz-input.h"
#include "vramfit/base/json.h"
#include "vramfit/estimate/stack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *p = fuzz_json(data, size, "fuzz/stack.json");
	if (!p)
		return 0;
	struct vf_error err = {0};
	for (int mode = 0; mode < 2; mode++) {
		struct vf_setup s;
		vf_setup_defaults(&s);
		s.mode = mode ? VF_MODE_LORA : VF_MODE_FULL;
		if (vf_stack_apply_json(&s, p, "fuzz/stack.json", &err) == VF_OK) {
			if (s.loss_chunks < 1 || (unsigned)s.loss >= VF_LOSS_COUNT)
				__builtin_trap();
			cJSON *j = vf_setup_to_json(&s);
			cJSON_Delete(j);
		}
	}
	cJSON_Delete(p);
	return 0;
}
