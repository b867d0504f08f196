/* fuzz-safetensors.c - libFuzzer target for the safetensors header reader:
 * the input is a whole file (its size is the file size); a header that
 * validates is then grouped by tensor names and its architecture inferred,
 * as inspect does. The same bytes, from byte 8 on, are also read as a
 * sharded checkpoint's index (the same scanner). Corpus:
 * tests/fuzz/corpus/safetensors/ (real files from ../shared/fixtures/models). */
#include <stddef.h>
#include <stdint.h>

#include "vramfit/model/model.h"
#include "vramfit/model/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vf_safetensors st;
	struct vf_error err = {0};
	if (vf_safetensors_parse(data, size, size, "fuzz.safetensors", &st, &err) == VF_OK) {
		struct vf_param_groups g = {0};
		for (size_t i = 0; i < st.ntensors; i++)
			vf_model_group_tensor(st.tensors[i].name, st.tensors[i].numel, &g);
		const struct vf_safetensors *list[1] = {&st};
		struct vf_arch a;
		vf_model_infer_arch(list, 1, &a);
		cJSON *j = vf_arch_to_json(&a);
		cJSON_Delete(j);
	}
	vf_safetensors_release(&st);
	if (size >= 8) {
		struct vf_safetensors_index ix;
		if (vf_safetensors_index_parse((const char *)data + 8, size - 8, "fuzz.index.json", &ix,
					       &err) == VF_OK)
			for (size_t i = 0; i < ix.n; i++)
				if (!ix.tensors[i] || !ix.files[i])
					__builtin_trap();
		vf_safetensors_index_release(&ix);
	}
	return 0;
}
