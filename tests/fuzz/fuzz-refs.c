/* fuzz-refs.c - libFuzzer target: a refs.json override (user data) through
 * the parser, the evaluation on a fixed GPU and a what-if, and the JSON
 * writer. Corpus: tests/fuzz/corpus/refs/ (the shipped data/refs.json). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz-input.h"
#include "vramfit/base/json.h"
#include "vramfit/estimate/refs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *root = fuzz_json(data, size, "refs.json");
	if (!root)
		return 0;
	struct vf_error err = {0};
	struct vf_refs set;
	if (vf_refs_parse(root, "refs.json", &set, &err) == VF_OK) {
		struct vf_gpu_spec g;
		memset(&g, 0, sizeof g);
		strcpy(g.id, "a100-40gb");
		g.bf16_tflops = 312;
		g.price_usd_hour = 1.5;
		g.memory_mib = 40960;
		struct vf_gpu_spec h = g;
		strcpy(h.id, "h100-80gb");
		h.bf16_tflops = 989.5;
		for (size_t i = 0; i < set.count; i++) {
			struct vf_ref_eval e;
			if (vf_ref_evaluate(&set, &set.refs[i], &g, NULL, 0, -1, &e, &err) == VF_OK) {
				cJSON *j = vf_ref_to_json(&set.refs[i], &e);
				char *s = vf_json_print(j);
				cJSON_free(s);
				cJSON_Delete(j);
			}
			vf_ref_evaluate(&set, &set.refs[i], &g, &h, 3, 2.0, &e, &err);
		}
		vf_refs_release(&set);
	}
	cJSON_Delete(root);
	return 0;
}
