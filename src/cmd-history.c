/* cmd-history.c - `vramfit history`: every trial vramfit has run for this
 * user (from the SQLite history), with the estimate's predicted peak beside
 * the measured one, and the estimator's error over all of them; then each
 * recovery vramfit run applied (the history's recoveries table), per run. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "parse-options.h"
#include "vramfit/base/json.h"
#include "vramfit/tune/store.h"

/* Percent error of the prediction against the measurement (positive =
 * over-predicted); false when either figure is missing. */
static bool pct_error(const struct vf_trial *t, double *out)
{
	if (t->predicted_peak_bytes < 0 || t->peak_bytes <= 0)
		return false;
	*out = ((double)t->predicted_peak_bytes - (double)t->peak_bytes) / (double)t->peak_bytes * 100.0;
	return true;
}

/* The same for the step time (the estimate's, recorded since schema v2). */
static bool step_error(const struct vf_trial *t, double *out)
{
	if (!(t->predicted_step_seconds > 0) || !(t->step_seconds > 0))
		return false;
	*out = (t->predicted_step_seconds - t->step_seconds) / t->step_seconds * 100.0;
	return true;
}

/* The estimator's error over the trials that have both peaks, and over
 * those that have both step times. */
struct stats {
	size_t ne;
	double sum_abs, sum;
	size_t ns;
	double step_abs, step_sum;
};

/* The recoveries as JSON objects; settings parsed (dotted key -> YAML
 * text), kept as the stored text when it is not a JSON object. */
static cJSON *recoveries_json(const struct vf_store_recovery_row *rec, size_t nrec)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < nrec; i++) {
		const struct vf_store_recovery_row *r = &rec[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "run_dir", r->run_dir);
		cJSON_AddNumberToObject(o, "attempt", r->attempt);
		vf_json_add_i64_or_null(o, "step", r->step, r->step >= 0);
		cJSON_AddStringToObject(o, "cause", r->cause);
		cJSON_AddStringToObject(o, "change", r->change);
		cJSON_AddStringToObject(o, "evidence", r->evidence);
		cJSON *set = cJSON_Parse(r->settings);
		if (!cJSON_IsObject(set)) {
			cJSON_Delete(set);
			set = cJSON_CreateString(r->settings);
		}
		cJSON_AddItemToObject(o, "settings", set);
		vf_json_add_i64_or_null(o, "predicted_peak_bytes", r->predicted_peak_bytes,
					r->predicted_peak_bytes >= 0);
		cJSON_AddStringToObject(o, "recorded_at", r->recorded_at);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static void print_json_rows(const char *db, const struct vf_store_row *rows, size_t n,
			    const struct vf_store_recovery_row *rec, size_t nrec, const struct stats *st)
{
	size_t ne = st->ne;
	double sum_abs = st->sum_abs, sum = st->sum, e;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "db", db);
	cJSON *arr = cJSON_AddArrayToObject(o, "trials");
	for (size_t i = 0; i < n; i++) {
		const struct vf_store_row *r = &rows[i];
		cJSON *t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "run_dir", r->run_dir);
		cJSON_AddNumberToObject(t, "trial", r->t.index);
		cJSON_AddStringToObject(t, "change", r->t.change);
		cJSON_AddStringToObject(t, "outcome", vf_outcome_name(r->t.outcome));
		cJSON_AddStringToObject(t, "evidence", r->t.evidence);
		cJSON_AddStringToObject(t, "gpu", r->gpu);
		cJSON_AddStringToObject(t, "config_hash", r->t.config_hash);
		if (r->t.step_seconds >= 0)
			cJSON_AddNumberToObject(t, "step_seconds", r->t.step_seconds);
		else
			cJSON_AddNullToObject(t, "step_seconds");
		vf_json_add_i64_or_null(t, "peak_bytes", r->t.peak_bytes, r->t.peak_bytes > 0);
		vf_json_add_i64_or_null(t, "predicted_peak_bytes", r->t.predicted_peak_bytes,
					r->t.predicted_peak_bytes >= 0);
		if (r->t.predicted_step_seconds > 0)
			cJSON_AddNumberToObject(t, "predicted_step_seconds", r->t.predicted_step_seconds);
		else
			cJSON_AddNullToObject(t, "predicted_step_seconds");
		if (pct_error(&r->t, &e))
			cJSON_AddNumberToObject(t, "error_pct", e);
		else
			cJSON_AddNullToObject(t, "error_pct");
		if (step_error(&r->t, &e))
			cJSON_AddNumberToObject(t, "step_error_pct", e);
		else
			cJSON_AddNullToObject(t, "step_error_pct");
		cJSON_AddStringToObject(t, "recorded_at", r->recorded_at);
		cJSON_AddItemToArray(arr, t);
	}
	cJSON *est = cJSON_AddObjectToObject(o, "estimator");
	cJSON_AddNumberToObject(est, "trials_compared", (double)ne);
	if (ne) {
		cJSON_AddNumberToObject(est, "mean_abs_error_pct", sum_abs / (double)ne);
		cJSON_AddNumberToObject(est, "mean_error_pct", sum / (double)ne);
	} else {
		cJSON_AddNullToObject(est, "mean_abs_error_pct");
		cJSON_AddNullToObject(est, "mean_error_pct");
	}
	cJSON_AddNumberToObject(est, "step_trials_compared", (double)st->ns);
	if (st->ns) {
		cJSON_AddNumberToObject(est, "step_mean_abs_error_pct", st->step_abs / (double)st->ns);
		cJSON_AddNumberToObject(est, "step_mean_error_pct", st->step_sum / (double)st->ns);
	} else {
		cJSON_AddNullToObject(est, "step_mean_abs_error_pct");
		cJSON_AddNullToObject(est, "step_mean_error_pct");
	}
	cJSON_AddItemToObject(o, "recoveries", recoveries_json(rec, nrec));
	vf_cli_print_json(o);
	cJSON_Delete(o);
}

static void print_table(const struct vf_store_row *rows, size_t n, const struct stats *st)
{
	size_t ne = st->ne;
	double sum_abs = st->sum_abs, sum = st->sum, e;
	static const char *const h[] = {"recorded (UTC)", "run", "#", "change", "outcome",
					"step time", "peak", "predicted", "error", "step pred", "error"};
	struct vf_table tb;
	vf_table_init(&tb, 11, h);
	for (int c = 2; c < 11; c++)
		if (c != 3 && c != 4)
			vf_table_set_right(&tb, c, true);
	for (size_t i = 0; i < n; i++) {
		const struct vf_store_row *r = &rows[i];
		char idx[16], st[32], pk[32], pr[32], er[32], sp[32] = "-", se[32] = "-";
		const char *base = strrchr(r->run_dir, '/');
		snprintf(idx, sizeof idx, "%d", r->t.index);
		vf_fmt_seconds(st, sizeof st, r->t.step_seconds);
		if (r->t.peak_bytes > 0)
			vf_fmt_bytes(pk, sizeof pk, (double)r->t.peak_bytes);
		else
			snprintf(pk, sizeof pk, "-");
		if (r->t.predicted_peak_bytes >= 0)
			vf_fmt_bytes(pr, sizeof pr, (double)r->t.predicted_peak_bytes);
		else
			snprintf(pr, sizeof pr, "-");
		if (pct_error(&r->t, &e))
			snprintf(er, sizeof er, "%+.1f %%", e);
		else
			snprintf(er, sizeof er, "-");
		if (r->t.predicted_step_seconds > 0)
			vf_fmt_seconds(sp, sizeof sp, r->t.predicted_step_seconds);
		if (step_error(&r->t, &e))
			snprintf(se, sizeof se, "%+.1f %%", e);
		const char *cells[] = {r->recorded_at, base ? base + 1 : r->run_dir, idx, r->t.change,
				       vf_outcome_name(r->t.outcome), st, pk, pr, er, sp, se};
		vf_table_add(&tb, cells);
	}
	vf_table_print(&tb, stdout);
	vf_table_release(&tb);
	if (ne)
		printf("\nestimator error on your runs: %zu trial%s compared, mean |error| %.1f %%, "
		       "mean error %+.1f %% (positive = over-predicted)\n",
		       ne, ne == 1 ? "" : "s", sum_abs / (double)ne, sum / (double)ne);
	else
		printf("\nestimator error on your runs: no trial has both a prediction and a measured peak\n");
	if (st->ns)
		printf("step time: %zu trial%s compared, mean |error| %.1f %%, mean error %+.1f %% (positive = "
		       "over-predicted)\n", st->ns, st->ns == 1 ? "" : "s", st->step_abs / (double)st->ns,
		       st->step_sum / (double)st->ns);
}

/* Each recovery of vramfit run, per run (by run, then attempt). */
static void print_recoveries(const struct vf_store_recovery_row *rec, size_t nrec)
{
	static const char *const h[] = {"recorded (UTC)", "run", "attempt", "step", "cause", "change"};
	struct vf_table tb;
	vf_table_init(&tb, 6, h);
	vf_table_set_right(&tb, 2, true);
	vf_table_set_right(&tb, 3, true);
	for (size_t i = 0; i < nrec; i++) {
		const struct vf_store_recovery_row *r = &rec[i];
		char at[16], step[16] = "-";
		const char *base = strrchr(r->run_dir, '/');
		snprintf(at, sizeof at, "%d", r->attempt);
		if (r->step >= 0)
			snprintf(step, sizeof step, "%d", r->step);
		const char *cells[] = {r->recorded_at, base ? base + 1 : r->run_dir, at, step, r->cause, r->change};
		vf_table_add(&tb, cells);
	}
	printf("\nrecoveries (vramfit run: the change applied after a failed training launch, which then resumed):\n");
	vf_table_print(&tb, stdout);
	vf_table_release(&tb);
}

struct history_args {
	const char *run_dir, *db;
	bool json;
};

#define OPT_T struct history_args
static const struct vf_option options[] = {
	OPT_DIR("run", "DIR", run_dir, "only the trials of one run directory"),
	OPT_FILE("db", "PATH", db, "another history database"),
	OPT_BOOL("json", json,
		 "{\"db\", \"trials\": [{\"run_dir\", \"trial\", \"change\", \"outcome\",\n"
		 "\"step_seconds\", \"peak_bytes\", \"predicted_peak_bytes\", \"predicted_step_seconds\",\n"
		 "\"error_pct\", ...}], \"estimator\": {\"trials_compared\",\n"
		 "\"mean_abs_error_pct\", \"mean_error_pct\"}, \"recoveries\": [{\"run_dir\",\n"
		 "\"attempt\", \"step\", \"cause\", \"change\", \"evidence\", \"settings\",\n"
		 "\"predicted_peak_bytes\", \"recorded_at\"}]}"),
	OPT_END(),
};
#undef OPT_T

static int run(int argc, char **argv)
{
	struct history_args a = {0};
	int nargs, prc = vf_opt_parse("history", options, &a, argc, argv, 0, &nargs);
	if (prc >= 0)
		return prc;
	if (nargs)
		return vf_cli_usage("history", "unexpected argument '%s'", argv[0]);
	const char *run_dir = a.run_dir, *db = a.db;
	bool json = a.json;
	char abs_run[4096];
	if (run_dir) {
		if (!realpath(run_dir, abs_run))
			return vf_cli_fail("%s: no such run directory", run_dir);
		run_dir = abs_run;
	}
	/* a reader never creates the history nor writes to it (read-only): a
	 * --db or $VRAMFIT_HISTORY that names no file is a typo, not an empty
	 * history; a default location with none yet is one; another program's
	 * database is refused */
	char path[1024];
	if (!db && !(db = vf_store_default_path(path, sizeof path)))
		return vf_cli_fail("history: no location for history.db (set XDG_DATA_HOME or HOME)");
	struct vf_error err = {0};
	struct vf_store *s = NULL;
	vf_status ost = vf_store_open_existing(a.db, &s, &err);
	if (ost != VF_OK && ost != VF_ENOTFOUND)
		return vf_cli_fail_err(&err);
	struct vf_store_row *rows = NULL;
	struct vf_store_recovery_row *rec = NULL;
	size_t n = 0, nrec = 0;
	if (s && (vf_store_list(s, run_dir, &rows, &n, &err) ||
		  vf_store_list_recoveries(s, run_dir, &rec, &nrec, &err))) {
		free(rows);
		vf_store_close(s);
		return vf_cli_fail_err(&err);
	}
	size_t ne = 0;
	double sum_abs = 0, sum = 0, e;
	for (size_t i = 0; i < n; i++)
		if (pct_error(&rows[i].t, &e)) {
			ne++;
			sum += e;
			sum_abs += fabs(e);
		}

	struct stats st = {ne, sum_abs, sum, 0, 0, 0};
	for (size_t i = 0; i < n; i++)
		if (step_error(&rows[i].t, &e)) {
			st.ns++;
			st.step_sum += e;
			st.step_abs += fabs(e);
		}
	if (json)
		print_json_rows(db, rows, n, rec, nrec, &st);
	else if (n == 0 && run_dir)
		printf("no trials of %s recorded in %s (vramfit tune records them)\n", run_dir, db);
	else if (n == 0)
		printf("no trials recorded yet in %s (vramfit tune records them)\n", db);
	else
		print_table(rows, n, &st);
	if (!json && nrec)
		print_recoveries(rec, nrec);
	free(rows);
	free(rec);
	vf_store_close(s);
	return VF_EXIT_OK;
}

const struct vf_cli_command vf_cmd_history = {
	.name = "history",
	.summary = "the trials vramfit has run, predicted vs measured peak, estimator error",
	.usage = "usage: vramfit history [--run RUN_DIR] [--db PATH] [--json]\n"
		 "\n"
		 "List every trial vramfit tune has recorded for you (SQLite at\n"
		 "$XDG_DATA_HOME/vramfit/history.db, default ~/.local/share/vramfit/, or\n"
		 "$VRAMFIT_HISTORY), with the estimate's predicted peak beside the measured\n"
		 "peak, and the estimator's error over all of them; then each recovery vramfit\n"
		 "run applied after a failed training launch (cause, change, step, time), per run.\n"
		 "The database is opened read-only: nothing is written to it. One that holds\n"
		 "tables but no vramfit schema (another program's) is refused, left as it was.\n",
	.options = options,
	.tail = "Exit status: 0 ok, 1 the database cannot be read or is not a vramfit history, 2 usage error.\n",
	.run = run,
};
