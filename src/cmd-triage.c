/* cmd-triage.c - `vramfit triage LOG`: classify a run that already ended
 * (ok, oom, nan, crash, incomplete, config-error) from its captured output,
 * name the line that proves it, and list the profile's remedies, cheapest
 * first. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "parse-options.h"
#include "vramfit/base/json.h"
#include "vramfit/base/yamldoc.h"
#include "vramfit/base/term.h"
#include "vramfit/trainer/profile.h"
#include "vramfit/tune/trial.h"

/* The verdict as the --json object. */
static void print_json_verdict(const struct vf_trial_verdict *v, const cJSON *rem, int status,
			       const struct vf_trial_log *log, double secs)
{
	const cJSON *it;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "outcome", vf_outcome_name(v->outcome));
	cJSON_AddStringToObject(o, "evidence", v->evidence);
	cJSON *r = cJSON_AddArrayToObject(o, "remedies");
	cJSON_ArrayForEach(it, rem)
		cJSON_AddItemToArray(r, cJSON_CreateString(it->valuestring));
	if (status >= 0)
		cJSON_AddNumberToObject(o, "exit", status);
	else
		cJSON_AddNullToObject(o, "exit");
	cJSON_AddNumberToObject(o, "last_step", log->last_step);
	vf_json_add_i64_or_null(o, "total_steps", log->total_steps, log->total_steps > 0);
	if (secs >= 0)
		cJSON_AddNumberToObject(o, "step_seconds", secs);
	else
		cJSON_AddNullToObject(o, "step_seconds");
	if (log->peak_gb >= 0)
		cJSON_AddNumberToObject(o, "peak_gb", log->peak_gb);
	else
		cJSON_AddNullToObject(o, "peak_gb");
	vf_cli_print_json(o);
	cJSON_Delete(o);
}

/* Without --exit an early end is read from the text alone: the evidence
 * says the exit status is not known rather than imply it was 0. */
static void note_unknown_exit(struct vf_trial_verdict *v)
{
	static const char note[] = " (exit status not given: --exit N)";
	size_t room = sizeof v->evidence - sizeof note, n = strlen(v->evidence);
	if (n > room)
		n = room;
	memcpy(v->evidence + n, note, sizeof note);
}

/* The verdict for a person: outcome, evidence, progress, remedies. */
static void print_verdict(const struct vf_trial_verdict *v, const cJSON *rem,
			  const struct vf_trial_log *log, double secs)
{
	const cJSON *it;
	const char *col = v->outcome == VF_OUTCOME_OK ? "green" : "red";
	printf("outcome    %s%s%s\n", vf_cli_sgr(stdout, col), vf_outcome_name(v->outcome),
	       vf_cli_sgr(stdout, "reset"));
	char safe[4 * sizeof v->evidence]; /* the trainer's line, through the terminal filter */
	printf("evidence   %s\n", vf_term_safe(safe, sizeof safe, v->evidence));
	char b[32];
	if (log->last_step > 0) {
		if (log->total_steps > 0)
			printf("last step  %d of %d\n", log->last_step, log->total_steps);
		else
			printf("last step  %d\n", log->last_step);
	}
	if (secs >= 0)
		printf("step time  %s\n", vf_fmt_seconds(b, sizeof b, secs));
	if (log->peak_gb >= 0)
		printf("peak VRAM  %.2f GiB (the trainer's figure)\n", log->peak_gb);
	if (rem) {
		printf("remedies, cheapest first:\n");
		int k = 1;
		cJSON_ArrayForEach(it, rem)
			printf("  %d. %s\n", k++, it->valuestring);
	}
}

struct triage_args {
	const char *trainer, *config;
	int64_t exit, steps;
	bool json;
};

#define OPT_T struct triage_args
static const struct vf_option options[] = {
	OPT_INT("exit", "N", exit, 0, 255,
		"the run's exit status (137 = killed by SIGKILL); without it\n"
		"the class comes from the text alone"),
	OPT_INT("steps", "N", steps, 0, 1e8, "the steps a complete run reaches (default: T of `Step N/T`)"),
	OPT_STRING("trainer", "NAME", trainer, "trainer profile (default ltx2: data/profiles/ltx2/logs.json)"),
	OPT_FILE("config", "FILE", config,
		 "the run's config.yaml: remedies it already applies are left\n"
		 "out (checkpointing on, adamw8bit, quantization, a low rank)"),
	OPT_BOOL("json", json,
		 "{\"outcome\", \"evidence\", \"remedies\": [...], \"exit\",\n"
		 "\"last_step\", \"total_steps\", \"step_seconds\", \"peak_gb\"}"),
	OPT_END(),
};
#undef OPT_T

static int run(int argc, char **argv)
{
	struct triage_args a = {.trainer = VF_PROFILE_DEFAULT, .exit = -1};
	int nargs, prc = vf_opt_parse("triage", options, &a, argc, argv, 0, &nargs);
	if (prc >= 0)
		return prc;
	if (nargs > 1)
		return vf_cli_usage("triage", "one LOG only (got '%s' and '%s')", argv[0], argv[1]);
	if (nargs == 0)
		return vf_cli_usage("triage", "missing LOG (a file with the run's stdout and stderr, or -)");
	const char *path = argv[0], *trainer = a.trainer, *config = a.config;
	int status = (int)a.exit, steps = (int)a.steps;
	bool json = a.json;

	struct vf_error err = {0};
	struct vf_yamldoc *cfg = NULL;
	if (config && vf_yamldoc_load_file(config, &cfg, &err))
		return vf_cli_fail_err(&err);
	struct vf_trial_patterns *pat = NULL;
	if (vf_trial_patterns_load(trainer, &pat, &err)) {
		vf_yamldoc_free(cfg);
		return vf_cli_fail_err(&err);
	}
	struct vf_trial_log log;
	vf_trial_log_init(&log, pat);
	int rc = VF_EXIT_OK;
	if (vf_trial_log_file(&log, path, &err)) {
		rc = vf_cli_fail_err(&err);
		goto out;
	}
	struct vf_trial_exit ex = {.status = status, .end = VF_PROC_EXITED, .expect_steps = steps,
				   .sample = -1};
	struct vf_trial_verdict v;
	vf_trial_classify(&log, &ex, &v);
	if (status < 0 && v.outcome == VF_OUTCOME_INCOMPLETE)
		note_unknown_exit(&v);
	cJSON *rem = vf_trial_remedies(pat, v.outcome, cfg); /* less what cfg has */
	double secs = vf_trial_log_step_seconds(&log);
	if (json)
		print_json_verdict(&v, rem, status, &log, secs);
	else
		print_verdict(&v, rem, &log, secs);
	cJSON_Delete(rem);
out:
	vf_trial_log_release(&log);
	vf_trial_patterns_free(pat);
	vf_yamldoc_free(cfg);
	return rc;
}

const struct vf_cli_command vf_cmd_triage = {
	.name = "triage",
	.summary = "classify a finished run's log (oom, nan, crash, ...) and list remedies",
	.usage = "usage: vramfit triage LOG [--exit N] [--steps N] [--trainer NAME] [--config FILE]\n"
		 "                     [--json]\n"
		 "\n"
		 "Read a trainer's captured stdout+stderr (LOG, or - for standard input) and\n"
		 "say how the run ended: ok, oom, nan, crash, incomplete or config-error, with\n"
		 "the line that proves it and the trainer profile's remedies, cheapest first.\n",
	.options = options,
	.tail = "Exit status: 0 when the log was read (whatever its class), 1 when it could\n"
		 "not be read, 2 usage error.\n",
	.run = run,
};
