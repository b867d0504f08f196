/* fuzz-peft-targets.c - libFuzzer target for the reader of peft's default
 * LoRA targets (data/estimate/lora-targets.json, lib/estimate/
 * loratargets.c): JSON text -> vf_lora_targets_peft_read. A refusal
 * carries a one-line message; an accepted table has at most
 * VF_LORA_PEFT_MAX entries, each a terminated type with roles. Corpus:
 * tests/fuzz/corpus/peft-targets/ (the shipped file). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz-input.h"
#include "vramfit/base/json.h"
#include "vramfit/estimate/loratargets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *root = fuzz_json(data, size, "fuzz/lora-targets.json");
	if (!root)
		return 0;
	struct vf_error err = {0};
	static struct vf_lora_peft t;
	if (vf_lora_targets_peft_read(root, "fuzz/lora-targets.json", &t, &err) != VF_OK) {
		fuzz_check_refusal(&err);
	} else {
		if (t.n < 1 || t.n > VF_LORA_PEFT_MAX)
			__builtin_trap();
		for (int i = 0; i < t.n; i++)
			if (!t.e[i].bits || strlen(t.e[i].type) >= sizeof t.e[i].type)
				__builtin_trap();
	}
	cJSON_Delete(root);
	return 0;
}
