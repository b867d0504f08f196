/* cmd-fit-dit.c - `vramfit fit` for a model the trainer trains (fit-dit.h):
 * one row per GPU kind and count with the trainer profile's tier (tier.c),
 * the tier's starting config (the checkout's shipped file with
 * --trainer-dir, else the profile's fit.json values), the predicted
 * autotune sweep (lib/trainer/sweepfit.c, the profile's sweep.json order
 * and rules) and the run's time and cost at the predicted winner's step
 * time; with --search, the profile's knobs searched on each GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "fit-dit.h"
#include "vramfit/base/json.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/runcost.h"
#include "vramfit/model/models.h"
#include "vramfit/trainer/profile.h"
#include "vramfit/trainer/sweepfit.h"
#include "vramfit/trainer/tier.h"

#define GIB (1024.0 * 1024 * 1024)
#define MAX_ROWS 256
#define MAX_FOUND 50

struct drow {
	const struct vf_gpu_spec *gpu;
	int gpus;
	struct vf_tier tier;
	char from[256];          /* where the starting config came from */
	struct vf_sweepfit sweep;
	bool fits;               /* the predicted winner runs */
	bool have_run;
	struct vf_run run;
	double step_seconds;     /* the winner's */
	struct vf_sweepfit_found *found; /* --search (owned) */
	int nfound, nfound_all;
	char error[256];         /* the starting config could not be made */
};

struct dctx {
	const struct vf_fit_dit_args *a;
	struct vf_dit dit;
	char what[512];          /* the model as estimated */
	cJSON *configs, *fit;
	bool full;
	struct drow rows[MAX_ROWS];
	int nrows;
	cJSON *not_proposed;     /* [{gpu, reason}] */
};

/* The DiT of the model: a catalog entry, an LTX transformer file, or a
 * pipeline's transformer component that is one (cmd-fit.c refuses other
 * diffusion transformers before this). */
static vf_status dit_of(const struct vf_model *m, struct dctx *c, struct vf_error *err)
{
	if (m->entry && strcmp(m->entry->kind, "dit") == 0) {
		char what[200];
		snprintf(what, sizeof what, "%s: model %s", m->entry->file, m->entry->id);
		snprintf(c->what, sizeof c->what, "the catalog's %s", m->entry->id);
		return vf_dit_from_json(m->entry->raw, what, &c->dit, err);
	}
	const struct vf_model *part = m;
	for (size_t i = 0; i < m->ncomponents; i++)
		if (strcmp(m->components[i]->name, "transformer") == 0 &&
		    (m->components[i]->has_vision || m->components[i]->has_ltx))
			part = m->components[i];
	if (part->has_ltx) {
		const struct vf_model_entry *def = NULL;
		vf_status st = vf_models_get("ltx-2-19b", &def, err);
		if (st)
			return st;
		snprintf(c->what, sizeof c->what, "the LTX transformer of %s (its own config and header; VAE, text "
			 "encoder and caption tokens from the catalog's ltx-2-19b)", vf_cli_safe(part->path));
		return vf_dit_from_ltx(&part->ltx, part->params, def ? def->raw : NULL, &c->dit, err);
	}
	if (part->has_vision) {
		const char *about = "";
		vf_status st = vf_dit_from_vision(&part->vision, part->params, &c->dit, &about, err);
		snprintf(c->what, sizeof c->what, "the %s diffusion transformer of %s%s%s",
			 part->vision.family, vf_cli_safe(part->path), about[0] ? "; " : "", about);
		return st;
	}
	return vf_error_set(err, VF_EUSAGE, "%s: not a diffusion transformer", m->path);
}

/* The starting config of a row, with the user's --video. */
static vf_status row_start(struct dctx *c, struct drow *r, struct vf_yamldoc **doc, struct vf_error *err)
{
	vf_status st = vf_sweepfit_start(NULL, r->tier.mode, r->tier.config, c->a->trainer_dir, r->tier.config_path,
					 c->full, doc, r->from, sizeof r->from, err);
	if (st)
		return st;
	const struct vf_setup *s = c->a->setup;
	if (s->given & VF_SETUP_G_VIDEO) {
		char v[96];
		snprintf(v, sizeof v, "[%d, %d, %d]", s->video_width, s->video_height, s->video_frames);
		const char *key = vf_json_get_str(cJSON_GetObjectItemCaseSensitive(c->configs, "keys"), "video_dims");
		if ((st = vf_yamldoc_set(*doc, key ? key : "validation.video_dims", v, err)))
			return st;
		size_t l = strlen(r->from);
		snprintf(r->from + l, sizeof r->from - l, ", video_dims %s (--video)", v);
	}
	return VF_OK;
}

static int64_t start_steps(const struct dctx *c, const struct vf_yamldoc *doc)
{
	if (c->a->steps > 0)
		return c->a->steps;
	const char *k = vf_json_get_str(c->fit, "steps_key");
	int64_t v = 0;
	if (k && vf_yamldoc_get_int(doc, k, &v, NULL) == VF_OK && v > 0)
		return v;
	return 0;
}

/* Predict one row: its sweep (or search) and the run at the winner. */
static vf_status row_predict(struct dctx *c, struct drow *r, struct vf_error *err)
{
	struct vf_yamldoc *doc = NULL;
	vf_status st = row_start(c, r, &doc, err);
	if (st)
		return st;
	struct vf_sweepfit_dit ev = {.dit = &c->dit, .configs = c->configs, .gpu = r->gpu, .gpus = r->gpus};
	struct vf_sweepfit_opts o = {.tier = r->tier.name, .all_flags = true};
	st = vf_sweepfit_predict(&o, doc, vf_sweepfit_dit_eval, &ev, &r->sweep, err);
	if (st == VF_OK && c->a->search) {
		int max = c->a->top > 0 && c->a->top < MAX_FOUND ? (int)c->a->top : MAX_FOUND;
		r->found = calloc((size_t)max, sizeof *r->found);
		if (!r->found)
			st = vf_error_set(err, VF_ERR, "out of memory");
		else
			st = vf_sweepfit_search(NULL, doc, !c->full, vf_sweepfit_dit_eval, &ev, r->found, max,
						&r->nfound_all, err);
		r->nfound = r->nfound_all < max ? r->nfound_all : max;
	}
	if (st == VF_OK && r->sweep.winner >= 0) {
		const struct vf_sweepfit_trial *w = &r->sweep.trials[r->sweep.winner];
		r->fits = true;
		r->step_seconds = w->eval.step_seconds;
		struct vf_run_in in = {.steps = start_steps(c, doc),
				       .tokens_per_step = (int64_t)w->eval.tokens_per_step,
				       .step_seconds = w->eval.step_seconds,
				       .gpus = r->gpus,
				       .price_usd_hour = c->a->price >= 0 ? c->a->price : r->gpu->price_usd_hour};
		struct vf_error e2 = {0};
		r->have_run = in.steps > 0 && in.step_seconds > 0 && vf_runcost_run(&in, &r->run, &e2) == VF_OK;
	}
	vf_yamldoc_free(doc);
	return st;
}

/* The GPU counts of a kind: the one given, else the profile's for the
 * training mode. */
static int counts_of(const struct dctx *c, int i, int *out, int max)
{
	if (c->a->counts && c->a->counts[i] > 0) {
		out[0] = c->a->counts[i];
		return 1;
	}
	if (c->a->setup->given & VF_SETUP_G_GPUS) {
		out[0] = c->a->setup->gpus;
		return 1;
	}
	const cJSON *mg = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c->fit, "multi_gpu"),
							   c->full ? "full" : "lora");
	const cJSON *x;
	int n = 0;
	cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(mg, "counts"))
		if (cJSON_IsNumber(x) && x->valueint > 0 && n < max)
			out[n++] = x->valueint;
	if (!n)
		out[n++] = c->full ? 2 : 1;
	return n;
}

/* Why a full fine-tune is not proposed on n of gpu (configs.json
 * full_finetune min_gpus, min_gpu_gb), or NULL. */
static const char *full_refused(const struct dctx *c, const struct vf_gpu_spec *g, int n, char *why, size_t wl)
{
	const cJSON *ff = cJSON_GetObjectItemCaseSensitive(c->configs, "full_finetune");
	int64_t min_gpus = 2, min_gb = 80;
	vf_json_get_i64(ff, "min_gpus", &min_gpus);
	vf_json_get_i64(ff, "min_gpu_gb", &min_gb);
	if (g->nominal_gb < min_gb)
		snprintf(why, wl, "a full fine-tune needs %lld GB-class GPUs or larger (FSDP); this card is %d GB",
			 (long long)min_gb, g->nominal_gb);
	else if (n < min_gpus)
		snprintf(why, wl, "a full fine-tune needs at least %lld GPUs under FSDP", (long long)min_gpus);
	else
		return NULL;
	return why;
}

static void not_proposed(struct dctx *c, const struct vf_gpu_spec *g, int n, const char *why)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "gpu", g->id);
	cJSON_AddNumberToObject(o, "gpus", n);
	cJSON_AddStringToObject(o, "reason", why);
	cJSON_AddItemToArray(c->not_proposed, o);
}

static vf_status rows_make(struct dctx *c, struct vf_error *err)
{
	for (int i = 0; i < c->a->ngpus; i++) {
		const struct vf_gpu_spec *g = c->a->gpus[i];
		int counts[8], nc = counts_of(c, i, counts, 8);
		for (int k = 0; k < nc && c->nrows < MAX_ROWS; k++) {
			char why[256];
			if (c->full && full_refused(c, g, counts[k], why, sizeof why)) {
				if (k == 0 || c->a->counts)
					not_proposed(c, g, counts[k], why);
				continue;
			}
			struct drow *r = &c->rows[c->nrows];
			memset(r, 0, sizeof *r);
			r->gpu = g;
			r->gpus = counts[k];
			struct vf_gpu_set gs;
			vf_gpu_set_init(&gs);
			char spec[48];
			snprintf(spec, sizeof spec, "%s:%d", g->id, counts[k]);
			vf_status st = vf_gpu_set_add_spec(&gs, spec, err);
			if (st == VF_OK)
				st = vf_tier_decide(&gs, NULL, NULL, &r->tier, err);
			vf_gpu_set_release(&gs);
			if (st)
				return st;
			c->nrows++;
			if (r->tier.gated && !c->a->accept_risk)
				continue;
			struct vf_error e2 = {0};
			if (row_predict(c, r, &e2) != VF_OK) {
				if (!c->a->trainer_dir)
					return vf_error_set(err, e2.code, "%s", e2.msg);
				snprintf(r->error, sizeof r->error, "%s", e2.msg); /* this checkout lacks the tier's file */
			}
		}
	}
	return VF_OK;
}

/* ---- order ------------------------------------------------------------------- */

static bool by_time;
static int rank_of(const struct drow *r)
{
	return r->fits ? 0 : r->tier.gated ? 2 : 1;
}

static int row_cmp(const void *x, const void *y)
{
	const struct drow *a = x, *b = y;
	if (rank_of(a) != rank_of(b))
		return rank_of(a) - rank_of(b);
	double ka = INFINITY, kb = INFINITY;
	if (a->have_run)
		ka = by_time ? a->run.hours : a->run.cost_usd >= 0 ? a->run.cost_usd : INFINITY;
	if (b->have_run)
		kb = by_time ? b->run.hours : b->run.cost_usd >= 0 ? b->run.cost_usd : INFINITY;
	if (ka != kb)
		return ka < kb ? -1 : 1;
	if (a->have_run && b->have_run && a->run.hours != b->run.hours)
		return a->run.hours < b->run.hours ? -1 : 1;
	return strcmp(a->gpu->id, b->gpu->id) != 0 ? strcmp(a->gpu->id, b->gpu->id) : a->gpus - b->gpus;
}

/* ---- JSON -------------------------------------------------------------------- */

static void add_num_or_null(cJSON *o, const char *k, double v, bool known)
{
	if (known)
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

static cJSON *trial_json(const struct vf_sweepfit_trial *t)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "trial", t->index);
	cJSON_AddStringToObject(o, "id", t->id);
	cJSON_AddStringToObject(o, "change", t->change);
	cJSON_AddStringToObject(o, "outcome", vf_sweepfit_outcome_name(t->outcome));
	bool judged = t->outcome == VF_SWEEPFIT_FITS || t->outcome == VF_SWEEPFIT_OOM;
	if (judged)
		cJSON_AddBoolToObject(o, "fits", t->outcome == VF_SWEEPFIT_FITS);
	else
		cJSON_AddNullToObject(o, "fits");
	add_num_or_null(o, "peak_bytes", (double)t->eval.peak_bytes, judged && t->eval.peak_bytes >= 0);
	add_num_or_null(o, "step_seconds", t->eval.step_seconds, judged && t->eval.step_seconds > 0);
	add_num_or_null(o, "gain_pct", t->gain_pct, judged && t->index > 1 && t->eval.step_seconds > 0);
	cJSON_AddBoolToObject(o, "adopted", t->adopted);
	if (t->flag[0]) {
		char f[40];
		snprintf(f, sizeof f, "--%s", t->flag);
		cJSON_AddStringToObject(o, "needs_flag", f);
	}
	cJSON *d = cJSON_Parse(t->deltas);
	cJSON_AddItemToObject(o, "deltas", d ? d : cJSON_CreateObject());
	if (t->why[0])
		cJSON_AddStringToObject(o, "why", t->why);
	return o;
}

static cJSON *row_json(const struct dctx *c, const struct drow *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "gpu", r->gpu->id);
	cJSON_AddNumberToObject(o, "gpus", r->gpus);
	cJSON_AddStringToObject(o, "strategy", r->gpus > 1 ? (c->full ? "FSDP" : "DDP") : "single GPU");
	cJSON_AddStringToObject(o, "tier", r->tier.name);
	cJSON_AddBoolToObject(o, "gated", r->tier.gated);
	cJSON_AddStringToObject(o, "config", r->tier.config);
	cJSON_AddStringToObject(o, "config_from", r->from);
	cJSON_AddNumberToObject(o, "vram_bytes", (double)vf_estimate_gpu_bytes(r->gpu));
	cJSON_AddBoolToObject(o, "fits", r->fits);
	if (r->error[0])
		cJSON_AddStringToObject(o, "error", r->error);
	if (r->tier.gated && !c->a->accept_risk)
		cJSON_AddStringToObject(o, "gate", r->tier.gate_message);
	cJSON *sw = cJSON_AddArrayToObject(o, "sweep");
	for (int i = 0; i < r->sweep.ntrials; i++)
		cJSON_AddItemToArray(sw, trial_json(&r->sweep.trials[i]));
	if (r->fits) {
		const struct vf_sweepfit_trial *w = &r->sweep.trials[r->sweep.winner];
		cJSON *wj = cJSON_AddObjectToObject(o, "winner");
		cJSON_AddNumberToObject(wj, "trial", w->index);
		cJSON_AddStringToObject(wj, "change", w->change);
		cJSON *d = cJSON_Parse(r->sweep.winner_deltas);
		cJSON_AddItemToObject(wj, "deltas", d ? d : cJSON_CreateObject());
		cJSON_AddNumberToObject(wj, "peak_bytes", (double)w->eval.peak_bytes);
		add_num_or_null(wj, "step_seconds", w->eval.step_seconds, w->eval.step_seconds > 0);
	} else {
		cJSON_AddNullToObject(o, "winner");
	}
	if (r->sweep.not_tried[0])
		cJSON_AddStringToObject(o, "not_tried", r->sweep.not_tried);
	if (r->have_run) {
		cJSON *rj = cJSON_AddObjectToObject(o, "run");
		cJSON_AddNumberToObject(rj, "steps", (double)r->run.steps);
		cJSON_AddNumberToObject(rj, "hours", r->run.hours);
		cJSON_AddNumberToObject(rj, "gpu_hours", r->run.gpu_hours);
		add_num_or_null(rj, "cost_usd", r->run.cost_usd, r->run.cost_usd >= 0);
	} else {
		cJSON_AddNullToObject(o, "run");
	}
	if (c->a->search) {
		cJSON *s = cJSON_AddArrayToObject(o, "search");
		for (int i = 0; i < r->nfound; i++) {
			cJSON *f = cJSON_CreateObject();
			cJSON *d = cJSON_Parse(r->found[i].changes);
			cJSON_AddItemToObject(f, "changes", d ? d : cJSON_CreateObject());
			cJSON_AddNumberToObject(f, "training_changes", r->found[i].training_changes);
			cJSON_AddNumberToObject(f, "peak_bytes", (double)r->found[i].eval.peak_bytes);
			add_num_or_null(f, "step_seconds", r->found[i].eval.step_seconds,
					r->found[i].eval.step_seconds > 0);
			cJSON_AddItemToArray(s, f);
		}
		cJSON_AddNumberToObject(o, "search_fitting", r->nfound_all);
	}
	return o;
}

static void assumptions(const struct dctx *c, cJSON *as)
{
	char b[768];
	snprintf(b, sizeof b, "model: %s", c->what);
	cJSON_AddItemToArray(as, cJSON_CreateString(b));
	cJSON_AddItemToArray(as, cJSON_CreateString(
		"tiers, starting configs and the sweep's order and stop rules are the trainer profile's "
		"(data/profiles/ltx2: tiers.json, fit.json or the checkout's configs, sweep.json); each trial "
		"is judged by the estimator at the config's validation video_dims as the training resolution"));
	cJSON_AddItemToArray(as, cJSON_CreateString(
		"fits = predicted peak (CUDA context included) within the GPU's memory; the sweep lists every "
		"change the profile has, the ones tune runs only with a flag marked with it"));
	if (!c->full)
		cJSON_AddItemToArray(as, cJSON_CreateString(
			"LoRA rows are one GPU unless --gpus or --gpu ID:N: under DDP each GPU adds a micro-batch, "
			"so N GPUs multiply the effective batch of the same steps"));
	else
		cJSON_AddItemToArray(as, cJSON_CreateString(
			"full fine-tune rows: FSDP on the GPUs (weights, gradients and optimizer states sharded), "
			"the trainer's rule of 2 or more 80 GB-class GPUs"));
	cJSON_AddItemToArray(as, cJSON_CreateString(
		"run time = steps x the predicted winner's step time (validation passes and model loading "
		"not counted); cost = run time x GPUs x the catalog's indicative $/GPU-hour unless --price"));
}

static cJSON *to_json(const struct dctx *c, int64_t steps)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "model", c->a->model);
	cJSON_AddStringToObject(root, "mode", c->full ? "full" : "lora");
	cJSON_AddStringToObject(root, "trainer", VF_PROFILE_DEFAULT);
	add_num_or_null(root, "steps", (double)steps, steps > 0);
	cJSON_AddStringToObject(root, "sort", by_time ? "time" : "cost");
	cJSON *rows = cJSON_AddArrayToObject(root, "rows");
	for (int i = 0; i < c->nrows; i++)
		cJSON_AddItemToArray(rows, row_json(c, &c->rows[i]));
	cJSON_AddItemToObject(root, "not_proposed", cJSON_Duplicate(c->not_proposed, 1));
	assumptions(c, cJSON_AddArrayToObject(root, "assumptions"));
	return root;
}

/* ---- text -------------------------------------------------------------------- */

static void print_rows(const struct dctx *c)
{
	const char *h[] = {"GPU", "GPUs", "tier", "config", "fits", "peak", "step", "time", "cost"};
	struct vf_table t;
	vf_table_init(&t, 9, h);
	for (int col = 4; col < 9; col++)
		vf_table_set_right(&t, col, col != 4);
	for (int i = 0; i < c->nrows; i++) {
		const struct drow *r = &c->rows[i];
		char n[16], pk[32] = "-", st[32] = "-", tm[32] = "-", co[32] = "-";
		snprintf(n, sizeof n, "%d", r->gpus);
		const char *fits = r->tier.gated && !c->a->accept_risk ? "gated" : r->error[0] ? "?" : r->fits ? "yes" : "no";
		const struct vf_sweepfit_trial *w = r->fits ? &r->sweep.trials[r->sweep.winner]
				   : r->sweep.ntrials ? &r->sweep.trials[0] : NULL;
		if (w && w->eval.peak_bytes >= 0)
			vf_fmt_bytes(pk, sizeof pk, (double)w->eval.peak_bytes);
		if (r->fits)
			vf_fmt_seconds(st, sizeof st, r->step_seconds);
		if (r->have_run) {
			vf_fmt_seconds(tm, sizeof tm, r->run.hours * 3600);
			vf_fmt_usd(co, sizeof co, r->run.cost_usd);
		}
		vf_table_addf(&t, r->gpu->id, n, r->tier.name, r->tier.config, fits, pk, st, tm, co);
	}
	vf_table_print(&t, stdout);
	vf_table_release(&t);
}

static void print_sweep(const struct dctx *c, const struct drow *r)
{
	printf("\n%s x %d (%s, %s from %s)\n", r->gpu->id, r->gpus, r->tier.name, r->tier.config, r->from);
	if (r->error[0]) {
		printf("  no prediction: %s\n", r->error);
		return;
	}
	for (int i = 0; i < r->sweep.ntrials; i++) {
		const struct vf_sweepfit_trial *t = &r->sweep.trials[i];
		char pk[32] = "-", st[32] = "-", fl[48] = "";
		bool judged = t->outcome == VF_SWEEPFIT_FITS || t->outcome == VF_SWEEPFIT_OOM;
		if (judged && t->eval.peak_bytes >= 0)
			vf_fmt_bytes(pk, sizeof pk, (double)t->eval.peak_bytes);
		if (judged && t->eval.step_seconds > 0)
			vf_fmt_seconds(st, sizeof st, t->eval.step_seconds);
		if (t->flag[0])
			snprintf(fl, sizeof fl, " (tune --%s)", t->flag);
		printf("  trial %d  %-28s %-14s peak %-10s step %-8s%s%s%s\n", t->index, t->change,
		       vf_sweepfit_outcome_name(t->outcome), pk, st, t->adopted ? " adopted" : "", fl,
		       t->why[0] && !judged ? "" : "");
		if (t->why[0] && !judged)
			printf("           %s\n", t->why);
	}
	if (r->fits)
		printf("  predicted winner: trial %d (%s)%s%s\n", r->sweep.trials[r->sweep.winner].index,
		       r->sweep.trials[r->sweep.winner].change, strcmp(r->sweep.winner_deltas, "{}") ? ", deltas " : "",
		       strcmp(r->sweep.winner_deltas, "{}") ? r->sweep.winner_deltas : "");
	else
		printf("  predicted: the baseline runs out of memory\n");
	if (r->sweep.not_tried[0])
		printf("  not tried: %s\n", r->sweep.not_tried);
	if (c->a->search) {
		printf("  --search: %d configuration%s fit; best %d (fewest changes to what is trained, then "
		       "fastest):\n", r->nfound_all, r->nfound_all == 1 ? "" : "s", r->nfound);
		for (int i = 0; i < r->nfound; i++) {
			char pk[32], st[32] = "-";
			vf_fmt_bytes(pk, sizeof pk, (double)r->found[i].eval.peak_bytes);
			if (r->found[i].eval.step_seconds > 0)
				vf_fmt_seconds(st, sizeof st, r->found[i].eval.step_seconds);
			printf("    %2d. step %-8s peak %-10s %s\n", i + 1, st, pk,
			       strcmp(r->found[i].changes, "{}") ? r->found[i].changes : "as the tier's config");
		}
	}
}

static void print_text(const struct dctx *c, int64_t steps)
{
	printf("%s, %s", c->a->model, c->full ? "full fine-tune" : "LoRA");
	if (steps > 0)
		printf(", %lld steps", (long long)steps);
	printf(", sorted by %s\n\n", by_time ? "time" : "cost");
	print_rows(c);
	bool gated = false;
	for (int i = 0; i < c->nrows; i++) {
		const struct drow *r = &c->rows[i];
		if (r->tier.gated && !c->a->accept_risk) {
			gated = true;
			continue;
		}
		print_sweep(c, r);
	}
	if (gated)
		printf("\nGated (below the trainer's 32 GB minimum): pass --accept-risk to predict them anyway "
		       "from the low-VRAM config.\n");
	const cJSON *x;
	bool first = true;
	cJSON_ArrayForEach(x, c->not_proposed)
	{
		if (first)
			printf("\nNot proposed:\n");
		first = false;
		printf("  %s x %d: %s\n", vf_json_get_str(x, "gpu"), (int)cJSON_GetNumberValue(
							      cJSON_GetObjectItem(x, "gpus")), vf_json_get_str(x, "reason"));
	}
	cJSON *as = cJSON_CreateArray();
	assumptions(c, as);
	printf("\nAssumptions:\n");
	cJSON_ArrayForEach(x, as) printf("  - %s\n", x->valuestring);
	cJSON_Delete(as);
}

/* Flags that set a knob the tier's config decides: the first given. */
static const char *fixed_flag(const struct vf_setup *s)
{
	const unsigned fixed = VF_SETUP_G_QUANT | VF_SETUP_G_OPTIMIZER | VF_SETUP_G_BATCH | VF_SETUP_G_GRAD_ACCUM |
			       VF_SETUP_G_GRAD_CKPT | VF_SETUP_G_LORA_RANK | VF_SETUP_G_TEXT_ENCODER |
			       VF_SETUP_G_OFFLOAD | VF_SETUP_G_PRECISION | VF_SETUP_G_SHARD;
	for (unsigned bit = 1; bit; bit <<= 1)
		if (s->given & fixed & bit)
			return vf_setup_flag(bit);
	return NULL;
}

int vf_fit_dit(const struct vf_fit_dit_args *a, const struct vf_model *m)
{
	const char *ff = fixed_flag(a->setup);
	if (ff)
		return vf_cli_usage("fit", "%s: fit of a model the trainer trains starts each GPU from its tier's "
					   "config and predicts the sweep; --search varies the trainer's knobs (vramfit "
					   "estimate checks one setup)", ff);
	if (a->setup->mode == VF_MODE_INFER && (a->setup->given & VF_SETUP_G_MODE))
		return vf_cli_usage("fit", "--mode infer: fit of a video DiT plans training (lora or full)");
	struct stat sb;
	char cdir[4096];
	snprintf(cdir, sizeof cdir, "%s/configs", a->trainer_dir ? a->trainer_dir : ".");
	if (a->trainer_dir && (stat(cdir, &sb) != 0 || !S_ISDIR(sb.st_mode)))
		return vf_cli_fail("%s: not a trainer checkout (no configs/ directory of shipped configs)",
				   vf_cli_safe(a->trainer_dir));
	struct dctx *c = calloc(1, sizeof *c);
	if (!c)
		return vf_cli_fail("out of memory");
	c->a = a;
	c->full = (a->setup->given & VF_SETUP_G_MODE) && a->setup->mode == VF_MODE_FULL;
	c->not_proposed = cJSON_CreateArray();
	by_time = a->sort && strcmp(a->sort, "time") == 0;
	struct vf_error err = {0};
	int rc = VF_EXIT_OK;
	vf_status st = dit_of(m, c, &err);
	if (st == VF_OK)
		st = vf_profile_part(VF_PROFILE_DEFAULT, "configs", &c->configs, &err);
	if (st == VF_OK)
		st = vf_profile_part(VF_PROFILE_DEFAULT, "fit", &c->fit, &err);
	if (st == VF_OK)
		st = rows_make(c, &err);
	if (st) {
		rc = vf_cli_fail_err(&err);
	} else {
		qsort(c->rows, (size_t)c->nrows, sizeof c->rows[0], row_cmp);
		int64_t steps = 0;
		for (int i = 0; i < c->nrows && !steps; i++)
			if (c->rows[i].have_run)
				steps = c->rows[i].run.steps;
		if (a->json) {
			cJSON *root = to_json(c, steps);
			vf_cli_print_json(root);
			cJSON_Delete(root);
		} else {
			print_text(c, steps);
		}
	}
	for (int i = 0; i < c->nrows; i++)
		free(c->rows[i].found);
	cJSON_Delete(c->configs);
	cJSON_Delete(c->fit);
	cJSON_Delete(c->not_proposed);
	free(c);
	return rc;
}
