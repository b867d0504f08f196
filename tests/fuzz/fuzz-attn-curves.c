/* fuzz-attn-curves.c - libFuzzer target for one attention_efficiency
 * entry of data/estimate/steptime.json (lib/estimate/steptime.c's
 * by_length curves: head dimension, mask, shares by sequence length),
 * read from the input as JSON and evaluated at lengths, head dimensions
 * and masks around and beyond its points. The share is never NaN, never
 * 0 or negative, never above the largest the reader accepts (2), and the
 * reason a curve is not used is a terminated text. Corpus:
 * tests/fuzz/corpus/attn-curves/ (the shipped entries with curves). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-input.h"
#include "vramfit/base/json.h"
#include "../../lib/estimate/steptime.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *e = fuzz_json(data, size, "steptime.json");
	if (!e)
		return 0;
	static const double seq[] = {0, 1, 300, 512, 3000, 8192, 1e5, 1e9};
	static const double hd[] = {0, 32, 64, 80, 96, 128, 256, 2048};
	for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++)
		for (size_t j = 0; j < sizeof hd / sizeof hd[0]; j++)
			for (int causal = 0; causal < 2; causal++) {
				char why[320];
				double s = vf__steptime_attn_share(e, 0.6, seq[i], hd[j], causal, why,
								   sizeof why);
				if (!(s > 0) || !(s <= 2) || !memchr(why, 0, sizeof why))
					abort();
			}
	cJSON_Delete(e);
	return 0;
}
