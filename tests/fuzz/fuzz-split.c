/* fuzz-split.c - libFuzzer target for the setup flags of one model across
 * GPUs and the split itself: the input is a command line (words split on
 * white space; "--name value", "--name=value", "--switch") -> vf_setup_set
 * by name / vf_setup_finish (--split,
 * --max-memory, --tp, --pp, --micro-batches, --sequence-parallel and the
 * other setup flags) -> vf_split_run on a generic 7B transformer and on a
 * GPT-NeoX-like one, memory only and on a catalog-less 24 GiB GPU. Corpus:
 * tests/fuzz/corpus/split/ (the command lines of README, the man page and
 * tests/cli/split.sh). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/setup.h"
#include "fuzz-input.h"
#include "setup-words.h"
#include "vramfit/estimate/split.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct vf_split sp;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vf_setup s;
	struct vf_error err = {0};
	if (!fuzz_setup_from_words(data, size, &s) || !vf_split_active(&s))
		return 0;
	if (s.seq > 65536 || s.batch > 64)
		return 0; /* sizes only: the same code at any scale */
	struct vf_arch a;
	vf_estimate_generic_arch(7000000000LL, &a);
	struct vf_gpu_spec g;
	fuzz_gpu_24gib(&g);
	vf_split_run(&a, &s, &g, &sp, &err);
	vf_split_run(&a, &s, NULL, &sp, &err);
	a.layer_norm = true;
	a.tied_embeddings = true;
	a.kv_heads = 1;
	vf_split_run(&a, &s, &g, &sp, &err);
	struct vf_setup out;
	vf_split_offer(&a, &s, &g, 0.1, 8, &out, &sp);
	return 0;
}
