/* fuzz-mechanisms.c - libFuzzer target for the flags of other stacks'
 * mechanisms (lib/estimate/mechanisms.c): the input is a command line
 * (words split on white space; "--name value", "--name=value",
 * "--switch") -> vf_setup_set by name (--stack, --peak-scope,
 * --grad-ckpt selective:op|every:N, --offload, --float8, --head,
 * --modules-to-save, --lora-targets ...,lm_head, --quant gptq, paged
 * optimizers and every other setup flag) -> vf_setup_finish -> the
 * estimate and the allocator replay of a small generic transformer, then
 * the memory JSON. The figures never go negative, the run's peak is never
 * below the step's, the paged states never exceed the states. Corpus:
 * tests/fuzz/corpus/mechanisms/ (the command lines of README and
 * tests/unit/test-mechanisms.c). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/setup.h"
#include "setup-words.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct vf_estimate *e)
{
	if (e->peak_bytes < 0 || e->peak_allocated_bytes < 0 || e->paged_bytes < 0 ||
	    e->run_peak_bytes < e->step_peak_bytes || e->paged_bytes > e->optimizer_full + 1 ||
	    e->offload_host_bytes < 0 || e->offload_pcie_bytes < 0)
		__builtin_trap();
	cJSON *j = vf_estimate_memory_json(e);
	cJSON_Delete(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vf_setup s;
	struct vf_error err = {0};
	if (!fuzz_setup_from_words(data, size, &s))
		return 0;
	if (s.seq > 8192 || s.batch > 16 || s.gpus > 64 || s.tp * s.pp > 16)
		return 0; /* sizes only: the same code at any scale */
	struct vf_arch a;
	vf_estimate_generic_arch(300000000LL, &a);
	struct vf_estimate e;
	vf_estimate_run(&a, &s, NULL, &e);
	check(&e);
	if (vf_estimate_simulate(&a, &s, NULL, NULL, &e, NULL, &err) == VF_OK)
		check(&e);
	return 0;
}
