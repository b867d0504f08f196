/* trial.h - read a trainer's output and say how a trial went.
 *
 * The formats come from the trainer profile's logs.json (TRAINER.md §6):
 * per-step lines (`Step N/T - Loss: …, Time/Step: …s`), progress-bar text,
 * the end-of-run statistics block (`Peak GPU memory`, `Training speed`),
 * and the generic JSON-lines protocol any trainer can print, one object per
 * line:  {"vramfit": {"step": 10, "total_steps": 50, "loss": 0.5,
 *                     "step_seconds": 0.4, "peak_bytes": 123456789}}
 * (every field optional). Rich's `[rank N] ` prefixes and right-hand
 * `file.py:NN` columns are stripped and wrapped continuation lines joined
 * before matching.
 *
 * The classifier maps (exit status, how the process ended, captured text)
 * to one outcome class with the line that proves it; the profile gives the
 * remedies for each class, cheapest first. */
#ifndef VRAMFIT_TRIAL_H
#define VRAMFIT_TRIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/buf.h"
#include "vramfit/base/error.h"
#include "vramfit/base/proc.h"

#define VF_TRIAL_EVIDENCE_MAX 512   /* evidence lines are cut to this */
#define VF_TRIAL_LINE_MAX (64u << 10) /* a logical (joined) line is cut to this */
#define VF_TRIAL_REPORTS_MAX 100000  /* step-time reports kept */

enum vf_outcome {
	VF_OUTCOME_OK = 0,
	VF_OUTCOME_OOM,
	VF_OUTCOME_NAN,
	VF_OUTCOME_CRASH,
	VF_OUTCOME_TIMEOUT,
	VF_OUTCOME_STALLED,
	VF_OUTCOME_INCOMPLETE,
	VF_OUTCOME_CONFIG_ERROR,
	VF_OUTCOME_SKIPPED,     /* not run: predicted to exceed the card */
	VF_OUTCOME_NOOP,        /* not run: its change was already in effect */
	VF_OUTCOME_INTERRUPTED, /* ended by the user (Ctrl-C); never recorded */
	VF_OUTCOME__COUNT
};

/* "ok", "oom", "nan", "crash", "timeout", "stalled", "incomplete",
 * "config-error", "skipped", "no-op", "interrupted". Static string. */
const char *vf_outcome_name(enum vf_outcome o);
/* Parse a name above; false when unknown. */
bool vf_outcome_parse(const char *name, enum vf_outcome *out);

/* The compiled patterns of a profile's logs.json. Opaque. */
struct vf_trial_patterns;

/* Compile logs.json (what names it in errors). Caller owns *out;
 * vf_trial_patterns_free(). */
vf_status vf_trial_patterns_from_json(const cJSON *logs, const char *what,
				      struct vf_trial_patterns **out, struct vf_error *err);
/* Load and compile data/profiles/<trainer>/logs.json. */
vf_status vf_trial_patterns_load(const char *trainer, struct vf_trial_patterns **out,
				 struct vf_error *err);
void vf_trial_patterns_free(struct vf_trial_patterns *p);
/* The remedies for an outcome, cheapest first, as a cJSON array of
 * strings; NULL when the profile lists none. A remedy is a string, or
 * {"text", "unless": [{"key", "in": [values], "at_most": N}], "key",
 *  "text_value"}: with a config (cfg, may be NULL) a remedy whose "unless"
 * holds (the config already has it; null for an absent key) is left out, and "text_value" is the text with {value} and
 * {half} as the config's integer at "key". Caller owns; cJSON_Delete(). */
struct vf_yamldoc;
cJSON *vf_trial_remedies(const struct vf_trial_patterns *p, enum vf_outcome o,
			 const struct vf_yamldoc *cfg);
/* The remedies of outcome o as the profile lists them, cheapest first
 * (strings, or the objects above, which may carry "apply": the change
 * itself, for vramfit run's recovery); NULL when none. Borrowed; valid
 * until vf_trial_patterns_free(). */
const cJSON *vf_trial_remedy_list(const struct vf_trial_patterns *p, enum vf_outcome o);
/* True when cfg already has remedy (one of its "unless" conditions holds);
 * false for a plain string. */
bool vf_trial_remedy_in_effect(const cJSON *remedy, const struct vf_yamldoc *cfg);

/* What was read from one trial's output. Feed lines as they come. */
struct vf_trial_log {
	const struct vf_trial_patterns *pat; /* Borrowed. */
	struct vf_buf pending;   /* the logical line being joined */

	int last_step;           /* highest step reported; 0 = none */
	int total_steps;         /* T of `Step N/T`; 0 = unknown */
	double last_loss;        /* NAN when none */
	bool nonfinite_loss;
	double *reports;         /* step-time reports, in order */
	size_t nreports, areports;
	double *losses;          /* loss reports, in order (NAN: not finite) ... */
	int *loss_steps;         /* ... and the step each was reported at */
	size_t nlosses, alosses;
	double peak_gb;          /* the trainer's `Peak GPU memory`; < 0 unknown */
	double steps_per_second; /* `Training speed`; < 0 unknown */
	int64_t peak_bytes;      /* largest JSON-lines peak_bytes; < 0 unknown */
	size_t nlines;           /* logical lines seen */
	size_t scan_limit;       /* internal: in a window of a long line, outcome
				    matches from this offset on are left to the
				    next window, which holds them whole (0 = none) */

	/* First evidence line per pattern class, cut to VF_TRIAL_EVIDENCE_MAX. */
	char oom_line[VF_TRIAL_EVIDENCE_MAX];
	char config_line[VF_TRIAL_EVIDENCE_MAX];
	char nan_line[VF_TRIAL_EVIDENCE_MAX];
	char crash_line[VF_TRIAL_EVIDENCE_MAX]; /* the last one, not the first */
	char last_line[VF_TRIAL_EVIDENCE_MAX];  /* the last non-empty line */
};

void vf_trial_log_init(struct vf_trial_log *log, const struct vf_trial_patterns *pat);
void vf_trial_log_release(struct vf_trial_log *log);
/* One physical line (no newline; need not be NUL-terminated). A line
 * longer than VF_TRIAL_LINE_MAX is classified whole: its first
 * VF_TRIAL_LINE_MAX bytes as a line, the rest in overlapping windows for
 * the outcome patterns (memory stays bounded). An outcome's evidence is the
 * line, or an excerpt around the match when the line is longer than
 * VF_TRIAL_EVIDENCE_MAX. */
void vf_trial_log_line(struct vf_trial_log *log, const char *line, size_t len);
/* A whole text: split on '\n' and '\r', each line to vf_trial_log_line. */
void vf_trial_log_text(struct vf_trial_log *log, const char *text, size_t len);
/* Stream a log file ("-" = standard input) through vf_trial_log_line in
 * 64 KiB chunks; memory stays bounded whatever the file's size or its
 * lines' length (a long line is read in windows, as vf_trial_log_line
 * reads one). Calls vf_trial_log_finish(). */
vf_status vf_trial_log_file(struct vf_trial_log *log, const char *path, struct vf_error *err);
/* Process the last pending line; call once after the last line. */
void vf_trial_log_finish(struct vf_trial_log *log);
/* Step time in seconds by the profile's rule (median after the first two
 * reports); < 0 when nothing was reported. */
double vf_trial_log_step_seconds(const struct vf_trial_log *log);

/* How a run ended, as the classifier needs it. */
struct vf_trial_exit {
	int status;            /* exit code or 128+signal; -1 unknown (triage without --exit) */
	enum vf_proc_end end;  /* timeout/stalled/interrupted win over the text */
	int expect_steps;      /* steps a complete run reaches; 0 = the log's T */
	int sample;            /* validation sample: 1 found, 0 missing, -1 unknown */
};

struct vf_trial_verdict {
	enum vf_outcome outcome;
	char evidence[VF_TRIAL_EVIDENCE_MAX]; /* the line that proves it */
};

/* Classify. Order: ended by vramfit (interrupted, timeout, stalled) → an
 * OOM pattern in a failed or unfinished run → a config error → a non-finite
 * loss → a non-zero exit (crash; 137 = SIGKILL) → exited 0 short of the last
 * step, without the sample or without any step reported (incomplete: the
 * sample alone does not make a run that never reported a step ok) → ok. */
void vf_trial_classify(const struct vf_trial_log *log, const struct vf_trial_exit *ex,
		       struct vf_trial_verdict *v);

/* One trial of a sweep, as tune runs it and store keeps it. */
struct vf_trial {
	int index;                 /* 1-based trial number */
	char change[128];          /* "baseline", "quantization off", … */
	char deltas[1024];         /* JSON object of dotted key -> value vs. the run's config */
	char config_hash[65];      /* vf_store_hash(): the config bytes + trainer command */
	enum vf_outcome outcome;
	char evidence[VF_TRIAL_EVIDENCE_MAX];
	int status;                /* exit code / 128+signal; -1 when not run */
	int steps_done;
	double step_seconds;       /* < 0 unknown */
	int64_t peak_bytes;        /* measured: the larger of the two below; < 0 unknown */
	int64_t peak_trainer_bytes; /* the trainer's own figure (Peak GPU memory, peak_bytes) */
	int64_t peak_polled_bytes; /* vramfit's polling of the process tree; < 0 unknown */
	char peak_source[16];      /* where peak_bytes came from: "trainer", "nvml-process"
				      (per-process NVML), "nvml-device" (device used minus the
				      idle baseline), "smi-device", "host-rss"; "" unknown */
	int64_t predicted_peak_bytes; /* the estimate's; < 0 none */
	double predicted_step_seconds; /* the estimate's; < 0 none */
	double wall_seconds;
};

void vf_trial_init(struct vf_trial *t);

#endif
