/* fuzz-trial-log.c - libFuzzer target: any bytes as a trainer's output,
 * through the line parser (as one text and as a stream of lines), the
 * step-time rule and the classifier under every exit status class; the
 * evidence never holds a terminal control.
 * Corpus: tests/fuzz/corpus/trial-log/ (the real failure outputs). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/tune/trial.h"

static struct vf_trial_patterns *pat;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!pat && vf_trial_patterns_load("ltx2", &pat, NULL) != VF_OK)
		abort();
	struct vf_trial_log log;
	vf_trial_log_init(&log, pat);
	vf_trial_log_text(&log, (const char *)data, size);
	vf_trial_log_finish(&log);
	(void)vf_trial_log_step_seconds(&log);
	const int statuses[] = {-1, 0, 1, 137};
	for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
		struct vf_trial_exit ex = {.status = statuses[i], .end = VF_PROC_EXITED,
					   .expect_steps = (int)(size % 7), .sample = (int)(size % 3) - 1};
		struct vf_trial_verdict v;
		vf_trial_classify(&log, &ex, &v);
		if (!vf_outcome_name(v.outcome) || strlen(v.evidence) >= VF_TRIAL_EVIDENCE_MAX)
			abort();
		/* The evidence went through the terminal filter: no ESC, no
		 * control but \t, no DEL (term.h). */
		for (const unsigned char *e = (const unsigned char *)v.evidence; *e; e++)
			if ((*e < 0x20 && *e != '\t') || *e == 0x7f)
				abort();
	}
	vf_trial_log_release(&log);

	/* The same bytes as single physical lines split at NUL. */
	vf_trial_log_init(&log, pat);
	size_t start = 0;
	for (size_t i = 0; i <= size; i++)
		if (i == size || data[i] == 0) {
			vf_trial_log_line(&log, (const char *)data + start, i - start);
			start = i + 1;
		}
	vf_trial_log_finish(&log);
	vf_trial_log_release(&log);
	return 0;
}
