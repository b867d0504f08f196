/* parallel.c - the sweep made for parallel hardware (K slots, local or
 * Slurm). The sequential sweep tries best + one change at a time; here:
 *   round 1: the baseline and every single change at once (each change on
 *            top of the baseline), K at a time on the backend;
 *   round 2: the combination of the changes that improved on the baseline
 *            without running out of memory, checked against the estimator
 *            first (a predicted OOM is skipped as in the sequential sweep).
 * The same rules decide: a change is an improvement when it is ok and its
 * step time is min_pct below the baseline's; reading round 1 in sweep
 * order, a change whose on_failure / on_no_improvement rule says stop
 * ends the list of changes that may be adopted (later ones ran, and are
 * recorded, but are not adopted), as the sequential sweep would never
 * have reached them. The winner is the combination unless the best single
 * change is faster than it by the improvement margin. Changes that need an
 * adopted change first (requires_adopted) are sequential only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sweep.h"
#include "vramfit/base/buf.h"

/* A trial of a round, with what it is made of. */
struct pjob {
	struct vf_trial *t;
	struct vf__trial_files f;
	cJSON *deltas;              /* vs config.yaml (owned) */
	cJSON *set;                 /* the change's own keys (owned); NULL for the baseline */
	const cJSON *change;        /* its sweep.json entry; NULL for the baseline / combination */
	bool run;                   /* must run on the backend */
	bool interrupted;
};

struct round {
	struct sweep *s;
	struct pjob *jobs;
	size_t n;
	vf_status st;
	struct vf_error *err;
};

static void job_release(struct pjob *j)
{
	cJSON_Delete(j->deltas);
	cJSON_Delete(j->set);
	j->deltas = j->set = NULL;
}

static void start_event(struct sweep *s, struct vf_trial *t)
{
	if (!s->o->on_event)
		return;
	struct vf_tune_event ev = {.kind = VF_TUNE_TRIAL_START, .trial = t, .max_trials = s->max_trials,
				   .total_steps = s->steps, .step_seconds = -1, .median_seconds = -1,
				   .mem_bytes = -1, .sweep_eta_s = -1};
	s->o->on_event(s->o->event_ctx, &ev);
}

/* A task ended: classify and record it at once (or log it as interrupted:
 * not recorded, it runs again next time). */
static void on_done(void *ctx, struct vf_tune_task *task)
{
	struct round *r = ctx;
	for (size_t i = 0; i < r->n; i++) {
		struct pjob *j = &r->jobs[i];
		if (!j->run || j->t->index != task->index)
			continue;
		vf__trial_finish(r->s, j->t, &j->f, task);
		if (task->end == VF_PROC_INTERRUPTED) {
			j->interrupted = true;
			vf__autotune_log(r->s, j->t, false);
		} else if (r->st == VF_OK) {
			r->st = vf__record(r->s, j->t, false, r->err);
		}
	}
}

/* Run the jobs that must run, K at a time, on the backend. */
static vf_status run_round(struct sweep *s, struct vf_tune_backend *be, struct pjob *jobs, size_t n,
			   struct vf_error *err)
{
	struct vf_tune_task tasks[VF_TUNE_MAX_TRIALS];
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!jobs[i].run)
			continue;
		memset(&tasks[k], 0, sizeof tasks[k]);
		tasks[k].index = jobs[i].t->index;
		tasks[k].config = jobs[i].f.config;
		tasks[k].log = jobs[i].f.log;
		tasks[k].status = -1;
		start_event(s, jobs[i].t);
		k++;
	}
	if (k == 0)
		return VF_OK;
	struct vf_tune_launch l = {.run_dir = s->run, .cmd = s->cmd, .trainer_dir = s->trainer_dir,
				   .num_gpus = s->o->num_gpus > 0 ? s->o->num_gpus : 1,
				   .timeout_s = s->o->timeout_s, .stall_s = s->o->stall_s,
				   .grace_s = s->o->grace_s, .mem_limit_bytes = s->o->mem_limit_bytes};
	double d;
	if (l.stall_s <= 0 && vf_json_get_double(s->sweep, "stall_seconds", &d) && d > 0)
		l.stall_s = d;
	struct round r = {.s = s, .jobs = jobs, .n = n, .st = VF_OK, .err = err};
	vf_status st = be->run(be, &l, tasks, k, on_done, &r, err);
	if (st)
		return st;
	if (r.st)
		return r.st;
	char which[128] = "";
	for (size_t i = 0; i < n; i++) {
		size_t w = strlen(which);
		if (jobs[i].interrupted)
			snprintf(which + w, sizeof which - w, "%s%d", w ? ", " : "", jobs[i].t->index);
	}
	if (which[0] || be->interrupted || s->t->interrupted) {
		s->res->interrupted = true;
		return vf_error_set(err, VF_ERR, "interrupted during trial%s %s; config.yaml untouched; finished "
				    "trials are recorded and the next tune resumes",
				    strchr(which, ',') ? "s" : "", which[0] ? which : "(none running)");
	}
	return VF_OK;
}

/* Add trial number n (1-based) to the round: prepare it; it runs unless
 * it was settled without running. */
static vf_status add_job(struct sweep *s, struct pjob *j, int n, const char *change, cJSON *deltas,
			 cJSON *set, const struct vf_yamldoc *base_doc, struct vf_yamldoc **doc_out,
			 struct vf_error *err)
{
	struct vf_trial *t = &s->res->trials[n - 1];
	vf_trial_init(t);
	t->index = n;
	snprintf(t->change, sizeof t->change, "%s", change);
	j->t = t;
	j->deltas = deltas;
	j->set = set;
	struct vf_yamldoc *doc = NULL;
	vf_status st = vf__trial_prepare(s, t, deltas, set, base_doc, &j->f, &j->run, &doc, err);
	if (doc_out)
		*doc_out = doc;
	else
		vf_yamldoc_free(doc);
	if (st == VF_OK)
		s->res->ntrials = n;
	return st;
}

/* Round 1's trials after the baseline: each eligible change on top of the
 * baseline. Returns how many jobs there are in all. */
static vf_status round1_changes(struct sweep *s, struct pjob *jobs, size_t *n,
				const struct vf_yamldoc *base_doc, struct vf_error *err)
{
	cJSON *none = cJSON_CreateObject();
	const cJSON *c;
	vf_status st = VF_OK;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(s->sweep, "changes"))
	{
		const char *name = vf_json_get_str(c, "name");
		if (vf_json_get_str(c, "requires_adopted") || !vf__flag_given(s->o, vf_json_get_str(c, "requires_flag")) ||
		    !vf__tier_allowed(c, s->o->tier))
			continue;
		if ((int)*n >= s->max_trials)
			break;
		cJSON *set = cJSON_CreateObject();
		char why[256] = "";
		struct pjob *j = &jobs[*n];
		if (!vf__change_set(c, base_doc, set, why, sizeof why)) {
			struct vf_trial *t = &s->res->trials[*n];
			vf_trial_init(t);
			t->index = (int)*n + 1;
			snprintf(t->change, sizeof t->change, "%s", name ? name : "?");
			t->outcome = VF_OUTCOME_SKIPPED;
			snprintf(t->evidence, sizeof t->evidence, "%s", why);
			snprintf(t->deltas, sizeof t->deltas, "{}");
			j->t = t;
			j->set = set;
			j->change = c;
			vf__autotune_log(s, t, false);
			vf__end_event(s, t, false);
			s->res->ntrials = (int)++*n;
			continue;
		}
		j->change = c;
		if ((st = add_job(s, j, (int)*n + 1, name ? name : "?", vf__candidate(none, set), set, base_doc,
				  NULL, err)))
			break;
		++*n;
	}
	cJSON_Delete(none);
	return st;
}

static bool improves(const struct sweep *s, const struct vf_trial *t, double base)
{
	return t->outcome == VF_OUTCOME_OK && base > 0 && t->step_seconds > 0 &&
	       t->step_seconds <= base * (1 - s->min_pct / 100);
}

/* Read round 1 in sweep order with the stop rules: the adoptable changes
 * (indices into jobs) and the fastest of them. */
static size_t adoptable(struct sweep *s, struct pjob *jobs, size_t n, size_t *pick, int *fastest)
{
	double base = jobs[0].t->step_seconds;
	size_t k = 0;
	*fastest = -1;
	for (size_t i = 1; i < n; i++) {
		const struct vf_trial *t = jobs[i].t;
		if (t->outcome == VF_OUTCOME_NOOP)
			continue;
		if (improves(s, t, base)) {
			pick[k++] = i;
			if (*fastest < 0 || t->step_seconds < jobs[*fastest].t->step_seconds)
				*fastest = (int)i;
			continue;
		}
		const char *rule = vf_json_get_str(jobs[i].change, t->outcome != VF_OUTCOME_OK ? "on_failure"
											: "on_no_improvement");
		if (!rule || strcmp(rule, "continue") != 0) {
			char line[256];
			snprintf(line, sizeof line, "parallel: changes after trial %d (%s) are not adopted: its %s rule "
				 "is stop", t->index, t->change, t->outcome != VF_OUTCOME_OK ? "on_failure" : "on_no_improvement");
			vf__autotune_note(s, line);
			break;
		}
	}
	return k;
}

/* Round 2: the combination of the adoptable changes, then the winner. */
static vf_status round2(struct sweep *s, struct vf_tune_backend *be, struct pjob *jobs, size_t *n,
			const struct vf_yamldoc *base_doc, cJSON **best, struct vf_error *err)
{
	size_t pick[VF_TUNE_MAX_TRIALS];
	int fastest;
	size_t k = adoptable(s, jobs, *n, pick, &fastest);
	s->res->winner = fastest >= 0 ? fastest : 0;
	*best = cJSON_Duplicate(fastest >= 0 ? jobs[fastest].deltas : jobs[0].deltas, 1);
	if (k < 2 || (int)*n >= s->max_trials || s->t->interrupted)
		return VF_OK;
	cJSON *combo = cJSON_CreateObject();
	char name[128] = "combination:";
	for (size_t i = 0; i < k; i++) {
		cJSON *next = vf__candidate(combo, jobs[pick[i]].set);
		cJSON_Delete(combo);
		combo = next;
		size_t l = strlen(name);
		snprintf(name + l, sizeof name - l, "%s%s", i ? " + " : " ", jobs[pick[i]].t->change);
	}
	struct pjob *j = &jobs[*n];
	vf_status st = add_job(s, j, (int)*n + 1, name, combo, NULL, base_doc, NULL, err);
	if (st)
		return st;
	++*n;
	if ((st = run_round(s, be, j, 1, err)))
		return st;
	const struct vf_trial *t = j->t, *f = jobs[fastest].t;
	if (t->outcome == VF_OUTCOME_OK && t->step_seconds > 0 &&
	    !(f->step_seconds <= t->step_seconds * (1 - s->min_pct / 100))) {
		s->res->winner = (int)*n - 1;
		cJSON_Delete(*best);
		*best = cJSON_Duplicate(j->deltas, 1);
	}
	return VF_OK;
}

vf_status vf__sweep_parallel(struct sweep *s, struct vf_tune_backend *be, cJSON **best, struct vf_error *err)
{
	struct pjob jobs[VF_TUNE_MAX_TRIALS + 1];
	memset(jobs, 0, sizeof jobs);
	size_t n = 0;
	struct vf_yamldoc *base_doc = NULL;
	*best = NULL;
	vf_status st = add_job(s, &jobs[0], 1, "baseline", cJSON_CreateObject(), NULL, NULL, &base_doc, err);
	if (st)
		goto out;
	n = 1;
	if ((st = round1_changes(s, jobs, &n, base_doc, err)) || (st = run_round(s, be, jobs, n, err)))
		goto out;
	if (jobs[0].t->outcome != VF_OUTCOME_OK) {
		s->res->baseline_failed = true;
		goto out;
	}
	st = round2(s, be, jobs, &n, base_doc, best, err);
out:
	for (size_t i = 0; i <= VF_TUNE_MAX_TRIALS; i++)
		job_release(&jobs[i]);
	vf_yamldoc_free(base_doc);
	return st;
}
