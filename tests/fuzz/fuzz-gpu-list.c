/* fuzz-gpu-list.c - libFuzzer target for a --gpu value naming one
 * machine's set of cards (lib/gpu/gpu-list.c): the input, cut at 512
 * bytes, to vf_gpu_set_add_list, then the set's short name into buffers
 * of every size up to 64 bytes (always terminated, never past the end).
 * Corpus: tests/fuzz/corpus/gpu-list/ (tests/cli/infer-sets.sh's values). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/gpu/gpu-list.h"
#include "fuzz-input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[513];
	fuzz_text(data, size, buf, sizeof buf);
	struct vf_gpu_set s;
	struct vf_error err = {0};
	vf_gpu_set_init(&s);
	vf_status st = vf_gpu_set_add_list(&s, buf, &err);
	if (st != VF_OK && (st != VF_EUSAGE || !err.msg[0]))
		abort(); /* a bad value is a usage error that says why */
	for (size_t n = 1; n <= 64; n++) {
		char label[80];
		memset(label, 'x', sizeof label);
		vf_gpu_set_label(&s, label, n);
		if (memchr(label, 0, n) == NULL || label[n] != 'x')
			abort(); /* unterminated, or written past n */
	}
	vf_gpu_set_release(&s);
	return 0;
}
