/* fuzz-run-state.c - libFuzzer target: any bytes as vramfit run's state file
 * (RUN/run.json, lib/run/state.c): the parser either fails with a message
 * or returns a state whose stage is one of the four, whose attempts and
 * recoveries are arrays of objects, and which prints and parses back to the
 * same stage; appending past the limit keeps VF_RUN_MAX_ENTRIES. Corpus:
 * tests/fuzz/corpus/run-state/ (state files written by tests/cli/run.sh's
 * CPU runs: finished after a recovery, interrupted, failed). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/run/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *st = NULL;
	struct vf_error err = {0};
	if (vf_run_state_parse((const char *)data, size, "fuzz.json", &st, &err) != VF_OK) {
		if (!err.msg[0] || st)
			abort();
		return 0;
	}
	enum vf_run_stage s = vf_run_state_stage(st);
	if (s >= VF_RUN__STAGES)
		abort();
	if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(st, "attempts")) ||
	    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(st, "recoveries")))
		abort();
	char *text = cJSON_Print(st);
	cJSON *back = NULL;
	if (!text || vf_run_state_parse(text, strlen(text), "fuzz.json", &back, &err) != VF_OK ||
	    vf_run_state_stage(back) != s)
		abort();
	for (int i = 0; i < VF_RUN_MAX_ENTRIES + 2; i++)
		vf_run_state_append(back, "recoveries", cJSON_CreateObject());
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(back, "recoveries")) != VF_RUN_MAX_ENTRIES)
		abort();
	vf_run_state_set(back, VF_RUN_TRAIN, "stopped", "fuzz");
	if (vf_run_state_stage(back) != VF_RUN_TRAIN)
		abort();
	cJSON_free(text);
	cJSON_Delete(back);
	cJSON_Delete(st);
	return 0;
}
