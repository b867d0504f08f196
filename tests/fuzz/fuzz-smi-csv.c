/* fuzz-smi-csv.c - libFuzzer target for the nvidia-smi CSV parser
 * (vf__gpu_smi_parse), then catalog matching and CUDA_VISIBLE_DEVICES on
 * whatever it accepted. Corpus: tests/fuzz/corpus/smi-csv/ (the real H200
 * outputs of ../shared/fixtures/nvidia-smi/ and their --query-gpu form). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-input.h"
#include "../../lib/gpu/gpu_probe.h" /* internal: fuzz targets see only include/ */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vf_gpu_set s;
	struct vf_error err = {0};
	vf_gpu_set_init(&s);
	if (vf__gpu_smi_parse((const char *)data, size, &s, &err) == VF_OK) {
		for (size_t i = 0; i < s.count; i++)
			vf_gpu_identify(&s.gpus[i]);
		vf__gpu_apply_visible(&s, "1,GPU-a7c7,0,x", &err);
	} else {
		fuzz_check_refusal(&err);
	}
	vf_gpu_set_release(&s);
	return 0;
}
