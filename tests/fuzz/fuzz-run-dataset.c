/* fuzz-run-dataset.c - libFuzzer target: any bytes as the dataset file
 * vramfit run preprocesses (lib/run/dataset.c), read as CSV, JSON and JSONL
 * (the first byte picks which, the rest is the text): the check either
 * passes with at least one row or fails with a message naming the file.
 * Media files are not looked up (base NULL). Corpus:
 * tests/fuzz/corpus/run-dataset/ (dataset files in the trainer's layout,
 * written for the run tests). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/run/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"d.csv", "d.json", "d.jsonl"};
	if (size < 1)
		return 0;
	const char *file = names[data[0] % 3];
	struct vf_error err = {0};
	int rows = -1;
	if (vf_run_dataset_check(file, (const char *)data + 1, size - 1, NULL, &rows, &err) == VF_OK) {
		if (rows < 1)
			abort();
	} else if (!strstr(err.msg, file)) {
		abort();
	}
	return 0;
}
