/* fuzz-groundtruth.c - libFuzzer target for the ground-truth reader
 * (vf_groundtruth_check_text): JSON lines -> architecture (vf_arch_from_config)
 * -> setup -> vf_estimate_run on whatever it accepted, so the estimator sees
 * hostile architectures too. Corpus: tests/fuzz/corpus/groundtruth/ (the real
 * ../shared/groundtruth/calibration.jsonl and a two-record excerpt). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-input.h"
#include "vramfit/estimate/groundtruth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vf_gt_report r;
	struct vf_error err = {0};
	if (vf_groundtruth_check_text((const char *)data, size, "fuzz.jsonl", &r, &err) == VF_OK) {
		for (size_t i = 0; i < r.n; i++)
			if (r.rows[i].pred_alloc < 0 || r.rows[i].pred_peak < r.rows[i].pred_alloc)
				abort(); /* the peak on the device includes the tensors */
		vf_gt_report_release(&r);
	} else {
		fuzz_check_refusal(&err);
	}
	return 0;
}
