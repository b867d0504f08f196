/* fuzz-yamldoc.c - libFuzzer target for the YAML document module: load any
 * bytes, look up and convert the keys the planner reads, and patch a few
 * (a replaced value, an inserted key, a new parent), checking that a
 * successful set reads back. Corpus: the test trainer's configs. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "vramfit/base/yamldoc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vf_yamldoc *d = NULL;
	struct vf_error err = {0};
	if (vf_yamldoc_load_mem((const char *)data, size, "fuzz.yaml", &d, &err) != VF_OK)
		return 0;
	static const char *const paths[] = {"model.model_path", "validation.video_dims",
					    "validation.video_dims.1", "lora", "", "a.b.c"};
	for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
		const struct vf_yaml_node *n = vf_yamldoc_find(d, paths[i]);
		cJSON_Delete(vf_yaml_node_to_json(n));
		for (size_t k = 0; k < vf_yaml_node_count(n) && k < 64; k++) {
			(void)vf_yaml_node_key(n, k);
			(void)vf_yaml_node_child(n, k);
		}
	}
	static const char *const sets[][2] = {
		{"model.model_path", "/r/m.safetensors"},
		{"output_dir", "\"/r/outputs\""},
		{"validation.video_dims", "[576, 576, 49]"},
		{"validation.video_dims.0", "512"},
		{"acceleration.quantization", "null"},
		{"new.parent.key", "x,y"},
	};
	for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) {
		if (vf_yamldoc_set(d, sets[i][0], sets[i][1], &err) == VF_OK &&
		    !vf_yamldoc_find(d, sets[i][0]))
			abort(); /* a successful set must read back */
	}
	vf_yamldoc_free(d);
	return 0;
}
