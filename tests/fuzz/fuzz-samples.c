/* fuzz-samples.c - libFuzzer target: any bytes as a tune memory-samples
 * file (RUN/logs/trial-N.samples, lib/report/samples.c): the parser either
 * fails with a message or returns samples that are finite, non-negative and
 * in file order; thinning keeps the largest sample; the run report renders
 * a trial holding them. Corpus: tests/fuzz/corpus/samples/ (files written by
 * real CPU sweeps of the example trainer). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vf_samples s;
	struct vf_error err = {0};
	vf_samples_init(&s);
	if (vf_samples_parse((const char *)data, size, "fuzz.samples", &s, &err) != VF_OK) {
		if (!err.msg[0] || s.n != 0)
			abort();
		vf_samples_release(&s);
		return 0;
	}
	int64_t top = -1;
	for (size_t i = 0; i < s.n; i++) {
		if (!isfinite(s.t[i]) || s.t[i] < 0 || s.bytes[i] < 0)
			abort();
		if (s.bytes[i] > top)
			top = s.bytes[i];
	}
	double t[64];
	int64_t b[64];
	size_t n = vf_samples_thin(&s, 64, t, b), max = s.n < 64 ? s.n : 64;
	if (n != max)
		abort();
	int64_t ttop = -1;
	for (size_t i = 0; i < n; i++)
		ttop = b[i] > ttop ? b[i] : ttop;
	if (ttop != top)
		abort(); /* the peak survives the thinning */
	/* a run report holding these samples renders */
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "report", "run");
	cJSON *tr = cJSON_CreateObject();
	cJSON_AddNumberToObject(tr, "index", 1);
	cJSON_AddStringToObject(tr, "change", "baseline");
	cJSON_AddStringToObject(tr, "outcome", "oom");
	cJSON *so = cJSON_AddObjectToObject(tr, "samples");
	cJSON_AddStringToObject(so, "source", s.source);
	cJSON_AddNumberToObject(so, "count", (double)s.n);
	cJSON *ts = cJSON_AddArrayToObject(so, "t"), *bs = cJSON_AddArrayToObject(so, "bytes");
	for (size_t i = 0; i < n; i++) {
		cJSON_AddItemToArray(ts, cJSON_CreateNumber(t[i]));
		cJSON_AddItemToArray(bs, cJSON_CreateNumber((double)b[i]));
	}
	cJSON_AddItemToArray(cJSON_AddArrayToObject(d, "trials"), tr);
	struct vf_buf out;
	vf_buf_init(&out, 0);
	if (vf_report_render(d, &out, &err) != VF_OK)
		abort();
	vf_buf_release(&out);
	cJSON_Delete(d);
	vf_samples_release(&s);
	return 0;
}
