/* fuzz-estimate.c - libFuzzer target for the work an estimate does on
 * what a config.json says: JSON text -> vf_arch_from_config -> the
 * analytic estimate and the caching allocator replay of a full
 * fine-tune (8 GPUs, DDP buckets, foreach optimizer) and of a LoRA run
 * with checkpointing on one GPU. The work must stay bounded whatever the
 * counts say (layers, experts, widths: run-fuzz.sh's -timeout=10 catches
 * a hang) and the figures never go negative. Corpus:
 * tests/fuzz/corpus/estimate/ (real and catalog configs, and the hostile
 * ones that once hung or exhausted memory). */
#include <stddef.h>
#include <stdint.h>

#include "vramfit/base/json.h"
#include "vramfit/estimate/alloc.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/arch.h"
#include "fuzz-input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const struct vf_arch *a, const struct vf_setup *s)
{
	const struct vf_gpu_spec *g = vf_gpu_catalog_find("h100-80gb");
	struct vf_estimate e;
	struct vf_error err = {0};
	vf_estimate_run(a, s, g, &e);
	if (e.peak_bytes < 0 || e.peak_allocated_bytes < 0)
		__builtin_trap();
	struct vf_alloc *sim = NULL;
	if (vf_estimate_simulate(a, s, g, NULL, &e, &sim, &err) == VF_OK) {
		if (e.peak_bytes < 0 || e.allocator_bytes < 0)
			__builtin_trap();
		if ((sim == NULL) != (e.sim_skipped != NULL))
			__builtin_trap(); /* replayed, or said why not */
	}
	if (sim) {
		int n = 0, total = 0;
		vf_alloc_peak_segments(sim, &n, &total);
		if (n < 0 || total < n)
			__builtin_trap();
	}
	vf_alloc_free(sim);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *cfg = fuzz_config_json(data, size);
	struct vf_error err = {0};
	if (!cfg)
		return 0;
	struct vf_arch a;
	if (vf_arch_from_config(cfg, "fuzz/config.json", &a, &err) == VF_OK) {
		struct vf_setup s;
		vf_setup_defaults(&s);
		s.mode = VF_MODE_FULL;
		s.gpus = 8;
		one(&a, &s);
		vf_setup_defaults(&s);
		s.mode = VF_MODE_LORA;
		s.grad_ckpt = 1;
		one(&a, &s);
	}
	cJSON_Delete(cfg);
	return 0;
}
