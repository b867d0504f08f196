/* fuzz-gguf.c - libFuzzer target for the GGUF header reader: the input is
 * a whole file (its size the file size), read again as the start of a file
 * twice as long (the "need more" path); a header that validates has its
 * architecture read and its tensors grouped, as inspect does. Corpus:
 * tests/fuzz/corpus/gguf/ (written by tests/helpers/mk-gguf.py). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vramfit/model/gguf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vf_gguf g;
	struct vf_error err = {0};
	if (vf_gguf_parse(data, size, size, "fuzz.gguf", &g, &err) == VF_OK) {
		struct vf_param_groups gr;
		memset(&gr, 0, sizeof gr);
		uint64_t bytes = 0;
		for (size_t i = 0; i < g.ntensors; i++) {
			vf_gguf_group_tensor(g.tensors[i].name, g.tensors[i].numel, &gr);
			bytes += g.tensors[i].bytes;
		}
		if (gr.total != g.params || bytes != g.data_bytes || g.header_bytes > size)
			__builtin_trap();
		struct vf_arch a;
		if (vf_gguf_arch(&g, &a, &err))
			cJSON_Delete(vf_arch_to_json(&a));
	}
	vf_gguf_release(&g);
	vf_status st = vf_gguf_parse(data, size, (uint64_t)size * 2 + 1, "fuzz.gguf", &g, &err);
	if (st != VF_OK && !err.msg[0])
		__builtin_trap();
	vf_gguf_release(&g);
	return 0;
}
