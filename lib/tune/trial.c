/* trial.c - parse a trainer's output and classify a trial (see trial.h).
 * Patterns are POSIX EREs from the profile's logs.json, compiled once.
 * Physical lines are cleaned (the terminal filter of term.h: escape
 * sequences and control bytes; `[rank N] `, the right-hand
 * `file.py:NN` column), Rich's wrapped continuation lines are joined into
 * one logical line, and each logical line is matched against the step,
 * progress, statistics and outcome patterns. */
#include "vramfit/tune/trial.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/base/json.h"
#include "vramfit/base/yamldoc.h"
#include "vramfit/base/term.h"
#include "vramfit/trainer/profile.h"

#define MAX_STATS 8
#define MAX_OUTCOME_PATS 64

enum stat_field { STAT_PEAK_GB, STAT_STEPS_PER_SECOND };

struct re {
	regex_t re;
	bool ok;
};

struct vf_trial_patterns {
	cJSON *root; /* a copy of logs.json, for the remedies */
	struct re rank, location, cont_not, step, progress;
	int min_indent;
	int g_step, g_total, g_loss, g_secs;
	int p_loss, p_secs;
	struct re stats[MAX_STATS];
	enum stat_field stat_field[MAX_STATS];
	int nstats;
	struct {
		struct re re;
		enum vf_outcome cls;
	} out[MAX_OUTCOME_PATS];
	int nout;
	char json_key[64];
	int skip_reports;
};

static const char *const outcome_names[VF_OUTCOME__COUNT] = {
	[VF_OUTCOME_OK] = "ok",
	[VF_OUTCOME_OOM] = "oom",
	[VF_OUTCOME_NAN] = "nan",
	[VF_OUTCOME_CRASH] = "crash",
	[VF_OUTCOME_TIMEOUT] = "timeout",
	[VF_OUTCOME_STALLED] = "stalled",
	[VF_OUTCOME_INCOMPLETE] = "incomplete",
	[VF_OUTCOME_CONFIG_ERROR] = "config-error",
	[VF_OUTCOME_SKIPPED] = "skipped",
	[VF_OUTCOME_NOOP] = "no-op",
	[VF_OUTCOME_INTERRUPTED] = "interrupted",
};

const char *vf_outcome_name(enum vf_outcome o)
{
	return (unsigned)o < VF_OUTCOME__COUNT ? outcome_names[o] : "unknown";
}

bool vf_outcome_parse(const char *name, enum vf_outcome *out)
{
	for (int i = 0; name && i < VF_OUTCOME__COUNT; i++)
		if (strcmp(name, outcome_names[i]) == 0) {
			*out = (enum vf_outcome)i;
			return true;
		}
	return false;
}

void vf_trial_init(struct vf_trial *t)
{
	memset(t, 0, sizeof *t);
	t->status = -1;
	t->step_seconds = -1;
	t->peak_bytes = -1;
	t->peak_trainer_bytes = -1;
	t->peak_polled_bytes = -1;
	t->predicted_peak_bytes = -1;
	t->predicted_step_seconds = -1;
	strcpy(t->deltas, "{}");
}

/* --- patterns ------------------------------------------------------------- */

static vf_status compile(struct re *r, const char *pattern, const char *what, const char *field,
			 struct vf_error *err)
{
	int rc = regcomp(&r->re, pattern, REG_EXTENDED);
	if (rc != 0) {
		char msg[256];
		regerror(rc, &r->re, msg, sizeof msg);
		return vf_error_set(err, VF_ERR, "%s: field %s: invalid regular expression '%s': %s",
				    what, field, pattern, msg);
	}
	r->ok = true;
	return VF_OK;
}

static vf_status compile_field(struct re *r, const cJSON *obj, const char *key, const char *what,
			       const char *field, bool required, struct vf_error *err)
{
	const char *s = vf_json_get_str(obj, key);
	if (!s) {
		if (!required)
			return VF_OK;
		return vf_error_set(err, VF_ERR, "%s: field %s: expected a regular expression string",
				    what, field);
	}
	return compile(r, s, what, field, err);
}

static vf_status get_group(const cJSON *groups, const char *key, int *out, const char *what,
			   const char *field, struct vf_error *err)
{
	int64_t v;
	if (!vf_json_get_i64(groups, key, &v) || v < 1 || v > 9)
		return vf_error_set(err, VF_ERR, "%s: field %s.groups.%s: expected a group number 1-9",
				    what, field, key);
	*out = (int)v;
	return VF_OK;
}

static void re_free(struct re *r)
{
	if (r->ok)
		regfree(&r->re);
	r->ok = false;
}

void vf_trial_patterns_free(struct vf_trial_patterns *p)
{
	if (!p)
		return;
	re_free(&p->rank);
	re_free(&p->location);
	re_free(&p->cont_not);
	re_free(&p->step);
	re_free(&p->progress);
	for (int i = 0; i < p->nstats; i++)
		re_free(&p->stats[i]);
	for (int i = 0; i < p->nout; i++)
		re_free(&p->out[i].re);
	cJSON_Delete(p->root);
	free(p);
}

/* logs.line: the rank prefix, location suffix and continuation lines. */
static vf_status read_line(struct vf_trial_patterns *p, const cJSON *logs, const char *what,
			   struct vf_error *err)
{
	vf_status st;
	const cJSON *line = cJSON_GetObjectItemCaseSensitive(logs, "line");
	if (line) {
		if ((st = compile_field(&p->rank, line, "rank_prefix", what, "line.rank_prefix", false, err)) ||
		    (st = compile_field(&p->location, line, "location_suffix", what,
					"line.location_suffix", false, err)) ||
		    (st = compile_field(&p->cont_not, line, "continuation_not", what,
					"line.continuation_not", false, err)))
			return st;
		int64_t v;
		if (vf_json_get_i64(line, "continuation_min_indent", &v)) {
			if (v < 1 || v > 200)
				return vf_error_set(err, VF_ERR,
						    "%s: field line.continuation_min_indent: expected 1-200", what);
			p->min_indent = (int)v;
		}
	}
	return VF_OK;
}

/* logs.step and logs.progress: the step line and its groups. */
static vf_status read_step(struct vf_trial_patterns *p, const cJSON *logs, const char *what,
			   struct vf_error *err)
{
	vf_status st;
	const cJSON *step = cJSON_GetObjectItemCaseSensitive(logs, "step");
	if (!step)
		return vf_error_set(err, VF_ERR, "%s: field step: expected an object", what);
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(step, "groups");
	if ((st = compile_field(&p->step, step, "pattern", what, "step.pattern", true, err)) ||
	    (st = get_group(g, "step", &p->g_step, what, "step", err)) ||
	    (st = get_group(g, "total", &p->g_total, what, "step", err)) ||
	    (st = get_group(g, "loss", &p->g_loss, what, "step", err)) ||
	    (st = get_group(g, "step_seconds", &p->g_secs, what, "step", err)))
		return st;
	const cJSON *prog = cJSON_GetObjectItemCaseSensitive(logs, "progress");
	if (prog) {
		g = cJSON_GetObjectItemCaseSensitive(prog, "groups");
		if ((st = compile_field(&p->progress, prog, "pattern", what, "progress.pattern", true, err)) ||
		    (st = get_group(g, "loss", &p->p_loss, what, "progress", err)) ||
		    (st = get_group(g, "step_seconds", &p->p_secs, what, "progress", err)))
			return st;
	}
	return VF_OK;
}

/* logs.stats: the lines a run's peak memory and speed are read from. */
static vf_status read_stats(struct vf_trial_patterns *p, const cJSON *logs, const char *what,
			    struct vf_error *err)
{
	vf_status st;
	const cJSON *stats = cJSON_GetObjectItemCaseSensitive(logs, "stats"), *it;
	cJSON_ArrayForEach(it, stats)
	{
		const char *field = vf_json_get_str(it, "field");
		if (p->nstats >= MAX_STATS || !field)
			return vf_error_set(err, VF_ERR, "%s: field stats: expected at most %d objects with a field",
					    what, MAX_STATS);
		if (strcmp(field, "peak_gb") == 0)
			p->stat_field[p->nstats] = STAT_PEAK_GB;
		else if (strcmp(field, "steps_per_second") == 0)
			p->stat_field[p->nstats] = STAT_STEPS_PER_SECOND;
		else
			return vf_error_set(err, VF_ERR,
					    "%s: field stats.field: '%s' is not peak_gb or steps_per_second",
					    what, field);
		if ((st = compile_field(&p->stats[p->nstats], it, "pattern", what, "stats.pattern", true, err)))
			return st;
		p->nstats++;
	}
	return VF_OK;
}

/* logs.json_key and logs.step_time: the JSON line key, the reports skipped. */
static vf_status read_step_time(struct vf_trial_patterns *p, const cJSON *logs, const char *what,
				struct vf_error *err)
{
	const char *jk = vf_json_get_str(logs, "json_key");
	if (jk)
		snprintf(p->json_key, sizeof p->json_key, "%s", jk);
	const cJSON *stt = cJSON_GetObjectItemCaseSensitive(logs, "step_time");
	int64_t skip;
	if (stt && vf_json_get_i64(stt, "skip_first_reports", &skip)) {
		if (skip < 0 || skip > 1000)
			return vf_error_set(err, VF_ERR, "%s: field step_time.skip_first_reports: expected 0-1000", what);
		p->skip_reports = (int)skip;
	}
	return VF_OK;
}

/* logs.outcomes: the patterns of each failure class. */
static vf_status read_outcomes(struct vf_trial_patterns *p, const cJSON *logs, const char *what,
			       struct vf_error *err)
{
	vf_status st;
	const cJSON *outs = cJSON_GetObjectItemCaseSensitive(logs, "outcomes"), *it;
	if (!cJSON_IsArray(outs))
		return vf_error_set(err, VF_ERR, "%s: field outcomes: expected an array", what);
	cJSON_ArrayForEach(it, outs)
	{
		enum vf_outcome cls;
		const char *name = vf_json_get_str(it, "class");
		if (!name || !vf_outcome_parse(name, &cls) ||
		    !(cls == VF_OUTCOME_OOM || cls == VF_OUTCOME_NAN || cls == VF_OUTCOME_CRASH ||
		      cls == VF_OUTCOME_CONFIG_ERROR))
			return vf_error_set(err, VF_ERR,
					    "%s: field outcomes.class: '%s' is not one of oom, nan, crash, config-error",
					    what, name ? name : "(missing)");
		const cJSON *pats = cJSON_GetObjectItemCaseSensitive(it, "patterns"), *pt;
		cJSON_ArrayForEach(pt, pats)
		{
			if (!cJSON_IsString(pt) || p->nout >= MAX_OUTCOME_PATS)
				return vf_error_set(err, VF_ERR,
						    "%s: field outcomes.patterns: expected at most %d strings",
						    what, MAX_OUTCOME_PATS);
			if ((st = compile(&p->out[p->nout].re, pt->valuestring, what, "outcomes.patterns", err)))
				return st;
			p->out[p->nout++].cls = cls;
		}
	}
	return VF_OK;
}

vf_status vf_trial_patterns_from_json(const cJSON *logs, const char *what,
				      struct vf_trial_patterns **out, struct vf_error *err)
{
	*out = NULL;
	if (!cJSON_IsObject(logs))
		return vf_error_set(err, VF_ERR, "%s: expected a JSON object", what);
	struct vf_trial_patterns *p = calloc(1, sizeof *p);
	if (!p)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	vf_status st = VF_OK;
	p->root = cJSON_Duplicate(logs, 1);
	p->min_indent = 8;
	p->skip_reports = 2;
	snprintf(p->json_key, sizeof p->json_key, "vramfit");

	if ((st = read_line(p, logs, what, err)) || (st = read_step(p, logs, what, err)) ||
	    (st = read_stats(p, logs, what, err)) || (st = read_step_time(p, logs, what, err)) ||
	    (st = read_outcomes(p, logs, what, err)))
		goto fail;
	*out = p;
	return VF_OK;
fail:
	vf_trial_patterns_free(p);
	return st;
}

vf_status vf_trial_patterns_load(const char *trainer, struct vf_trial_patterns **out,
				 struct vf_error *err)
{
	cJSON *logs = NULL;
	*out = NULL;
	vf_status st = vf_profile_part(trainer, "logs", &logs, err);
	if (st)
		return st;
	char what[128];
	snprintf(what, sizeof what, "profiles/%s/logs.json", trainer);
	st = vf_trial_patterns_from_json(logs, what, out, err);
	cJSON_Delete(logs);
	return st;
}

/* A JSON scalar as the text a YAML scalar would hold ("true", "16",
 * "adamw8bit"); "" for null. */
static void scalar_text(const cJSON *v, char *o, size_t n)
{
	if (cJSON_IsString(v))
		snprintf(o, n, "%s", v->valuestring);
	else if (cJSON_IsBool(v))
		snprintf(o, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
	else if (cJSON_IsNumber(v))
		snprintf(o, n, "%.17g", v->valuedouble);
	else
		o[0] = '\0';
}

/* One "unless" condition: true when the config already has it. */
static bool remedy_applied(const cJSON *c, const struct vf_yamldoc *cfg)
{
	const char *key = vf_json_get_str(c, "key");
	if (!key)
		return false;
	const struct vf_yaml_node *nd = vf_yamldoc_find(cfg, key);
	char have[128];
	if (nd && vf_yaml_node_kind(nd) != VF_YAML_NULL && vf_yaml_node_str(nd))
		snprintf(have, sizeof have, "%s", vf_yaml_node_str(nd));
	else
		have[0] = '\0'; /* absent or null */
	const cJSON *v;
	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(c, "in"))
	{
		char want[128];
		scalar_text(v, want, sizeof want);
		if (strcmp(want, have) == 0)
			return true;
	}
	double most, x;
	char *end;
	if (vf_json_get_double(c, "at_most", &most) && have[0]) {
		x = strtod(have, &end);
		if (!*end && x <= most)
			return true;
	}
	return false;
}

/* "text_value" with {value} and {half} replaced by v and v / 2. */
static void remedy_render(const char *t, int64_t v, char *o, size_t n)
{
	size_t k = 0;
	while (*t && k + 1 < n) {
		int w = 0;
		if (strncmp(t, "{value}", 7) == 0)
			w = snprintf(o + k, n - k, "%" PRId64, v), t += 7;
		else if (strncmp(t, "{half}", 6) == 0)
			w = snprintf(o + k, n - k, "%" PRId64, v / 2), t += 6;
		else
			o[k++] = *t++;
		if (w > 0)
			k += (size_t)w < n - k ? (size_t)w : n - k - 1;
	}
	o[k] = '\0';
}

const cJSON *vf_trial_remedy_list(const struct vf_trial_patterns *p, enum vf_outcome o)
{
	const cJSON *r = p ? cJSON_GetObjectItemCaseSensitive(p->root, "remedies") : NULL;
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(r, vf_outcome_name(o));
	return cJSON_IsArray(a) ? a : NULL;
}

bool vf_trial_remedy_in_effect(const cJSON *remedy, const struct vf_yamldoc *cfg)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(remedy, "unless"))
		if (cfg && remedy_applied(c, cfg))
			return true;
	return false;
}

cJSON *vf_trial_remedies(const struct vf_trial_patterns *p, enum vf_outcome o,
			 const struct vf_yamldoc *cfg)
{
	if (!p)
		return NULL;
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(p->root, "remedies");
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(r, vf_outcome_name(o)), *it;
	if (!cJSON_IsArray(a))
		return NULL;
	cJSON *out = cJSON_CreateArray();
	cJSON_ArrayForEach(it, a)
	{
		if (cJSON_IsString(it)) {
			cJSON_AddItemToArray(out, cJSON_CreateString(it->valuestring));
			continue;
		}
		const char *text = vf_json_get_str(it, "text");
		if (!text)
			continue;
		bool skip = false;
		const cJSON *c;
		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(it, "unless"))
			skip = skip || (cfg && remedy_applied(c, cfg));
		if (skip)
			continue;
		const char *tv = vf_json_get_str(it, "text_value"), *key = vf_json_get_str(it, "key");
		int64_t v;
		char buf[512];
		if (cfg && tv && key && vf_yamldoc_get_int(cfg, key, &v, NULL) == VF_OK) {
			remedy_render(tv, v, buf, sizeof buf);
			text = buf;
		}
		cJSON_AddItemToArray(out, cJSON_CreateString(text));
	}
	return out;
}

/* --- parsing -------------------------------------------------------------- */

void vf_trial_log_init(struct vf_trial_log *log, const struct vf_trial_patterns *pat)
{
	memset(log, 0, sizeof *log);
	log->pat = pat;
	vf_buf_init(&log->pending, VF_TRIAL_LINE_MAX);
	log->last_loss = NAN;
	log->peak_gb = -1;
	log->steps_per_second = -1;
	log->peak_bytes = -1;
}

void vf_trial_log_release(struct vf_trial_log *log)
{
	if (!log)
		return;
	vf_buf_release(&log->pending);
	free(log->reports);
	log->reports = NULL;
	log->nreports = log->areports = 0;
	free(log->losses);
	free(log->loss_steps);
	log->losses = NULL;
	log->loss_steps = NULL;
	log->nlosses = log->alosses = 0;
}

static void set_evidence(char *dst, const char *line)
{
	while (*line == ' ' || *line == '\t')
		line++;
	vf_term_safe(dst, VF_TRIAL_EVIDENCE_MAX, line); /* cut at a character, never inside one */
}

/* Evidence for a pattern that matched s at [so, eo): the whole line when
 * it fits, else an excerpt around the match ("... match ..."), so the text
 * that proves the class is what is shown, wherever it lies in a long line. */
static void set_evidence_at(char *dst, const char *s, regoff_t so, regoff_t eo)
{
	while (*s == ' ' || *s == '\t')
		s++, so--, eo--;
	size_t len = strlen(s);
	if (len < VF_TRIAL_EVIDENCE_MAX || so < 0 || eo < so || (size_t)eo > len) {
		set_evidence(dst, s);
		return;
	}
	/* about a quarter of the room before the match, the rest from it on */
	enum { ROOM = VF_TRIAL_EVIDENCE_MAX - 16, BEFORE = ROOM / 4 };
	size_t start = (size_t)so > BEFORE ? (size_t)so - BEFORE : 0;
	while (start > 0 && ((unsigned char)s[start] & 0xc0) == 0x80)
		start--; /* not inside a character */
	size_t end = start + ROOM < len ? start + ROOM : len;
	while (end < len && end > start && ((unsigned char)s[end] & 0xc0) == 0x80)
		end--;
	char buf[VF_TRIAL_EVIDENCE_MAX + 16];
	snprintf(buf, sizeof buf, "%s%.*s%s", start ? "... " : "", (int)(end - start), s + start,
		 end < len ? " ..." : "");
	set_evidence(dst, buf);
}

static void add_report(struct vf_trial_log *log, double secs)
{
	if (!(secs >= 0) || !isfinite(secs) || log->nreports >= VF_TRIAL_REPORTS_MAX)
		return;
	if (log->nreports == log->areports) {
		size_t na = log->areports ? log->areports * 2 : 64;
		double *r = realloc(log->reports, na * sizeof *r);
		if (!r)
			return;
		log->reports = r;
		log->areports = na;
	}
	log->reports[log->nreports++] = secs;
}

static double group_double(const char *s, const regmatch_t *m, bool *ok)
{
	*ok = false;
	if (m->rm_so < 0)
		return 0;
	char tmp[64];
	size_t n = (size_t)(m->rm_eo - m->rm_so);
	if (n == 0 || n >= sizeof tmp)
		return 0;
	memcpy(tmp, s + m->rm_so, n);
	tmp[n] = '\0';
	char *end;
	double v = strtod(tmp, &end);
	while (*end == ' ')
		end++;
	if (end == tmp || *end)
		return 0;
	*ok = true;
	return v;
}

/* Keep (step, loss) for the loss curve, up to VF_TRIAL_REPORTS_MAX. */
static void keep_loss(struct vf_trial_log *log, double loss)
{
	if (log->nlosses >= VF_TRIAL_REPORTS_MAX)
		return;
	if (log->nlosses == log->alosses) {
		size_t na = log->alosses ? log->alosses * 2 : 64;
		double *l = realloc(log->losses, na * sizeof *l);
		if (l)
			log->losses = l;
		int *st = l ? realloc(log->loss_steps, na * sizeof *st) : NULL;
		if (!st)
			return;
		log->loss_steps = st;
		log->alosses = na;
	}
	log->losses[log->nlosses] = isfinite(loss) ? loss : NAN;
	log->loss_steps[log->nlosses++] = log->last_step;
}

static void note_loss(struct vf_trial_log *log, double loss, const char *line)
{
	keep_loss(log, loss);
	log->last_loss = loss;
	if (!isfinite(loss)) {
		if (!log->nonfinite_loss)
			set_evidence(log->nan_line, line);
		log->nonfinite_loss = true;
	}
}

/* Python's json.dumps writes a non-finite float as NaN, Infinity or
 * -Infinity, which JSON does not have: s with each such token outside a
 * string made JSON (NaN -> null, read as a non-finite loss; Infinity ->
 * 1e999, which strtod reads as infinity). NULL when s has none (or out of
 * memory). Caller frees. */
static char *python_nonfinite(const char *s)
{
	size_t n = strlen(s);
	if (!strstr(s, "NaN") && !strstr(s, "Infinity"))
		return NULL;
	char *out = malloc(n + n / 3 + 2); /* NaN (3) -> null (4): at most 4/3 as long */
	if (!out)
		return NULL;
	size_t j = 0;
	bool in_str = false, changed = false;
	for (size_t i = 0; i < n;) {
		char c = s[i];
		bool word_start = i == 0 || !(isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_');
		if (in_str) {
			out[j++] = c;
			if (c == '\\' && i + 1 < n)
				out[j++] = s[++i];
			else if (c == '"')
				in_str = false;
			i++;
		} else if (c == '"') {
			in_str = true;
			out[j++] = s[i++];
		} else if (word_start && strncmp(s + i, "NaN", 3) == 0 && !isalnum((unsigned char)s[i + 3])) {
			memcpy(out + j, "null", 4), j += 4, i += 3, changed = true;
		} else if (word_start && strncmp(s + i, "Infinity", 8) == 0 && !isalnum((unsigned char)s[i + 8])) {
			memcpy(out + j, "1e999", 5), j += 5, i += 8, changed = true;
		} else {
			out[j++] = s[i++];
		}
	}
	out[j] = '\0';
	if (!changed) {
		free(out);
		return NULL;
	}
	return out;
}

static void parse_json_line(struct vf_trial_log *log, const char *s)
{
	const struct vf_trial_patterns *p = log->pat;
	cJSON *root = cJSON_ParseWithLength(s, strlen(s));
	char *fixed = root ? NULL : python_nonfinite(s);
	if (fixed) {
		root = cJSON_ParseWithLength(fixed, strlen(fixed));
		free(fixed);
	}
	if (!root)
		return;
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, p->json_key);
	if (cJSON_IsObject(o)) {
		int64_t i;
		double d;
		if (vf_json_get_i64(o, "step", &i) && i > log->last_step && i < 1000000000)
			log->last_step = (int)i;
		if (vf_json_get_i64(o, "total_steps", &i) && i > 0 && i < 1000000000)
			log->total_steps = (int)i;
		const cJSON *loss = cJSON_GetObjectItemCaseSensitive(o, "loss");
		if (cJSON_IsNumber(loss))
			note_loss(log, loss->valuedouble, s);
		else if (cJSON_IsString(loss) || (loss && cJSON_IsNull(loss)))
			note_loss(log, NAN, s); /* "nan"/"inf"/null: JSON has no NaN */
		if (vf_json_get_double(o, "step_seconds", &d))
			add_report(log, d);
		if (vf_json_get_i64(o, "peak_bytes", &i) && i > log->peak_bytes)
			log->peak_bytes = i;
	}
	cJSON_Delete(root);
}

/* The outcome patterns (oom, config error, nan, crash) over s: the first
 * evidence of each class, the last of a crash. */
static void scan_outcomes(struct vf_trial_log *log, const char *s)
{
	const struct vf_trial_patterns *p = log->pat;
	for (int i = 0; p && i < p->nout; i++) {
		regmatch_t m[1];
		if (regexec(&p->out[i].re.re, s, 1, m, 0) != 0)
			continue;
		if (log->scan_limit && (size_t)m[0].rm_so >= log->scan_limit)
			continue; /* the next window holds it whole */
		char *dst = NULL;
		switch (p->out[i].cls) {
		case VF_OUTCOME_OOM:
			dst = log->oom_line[0] ? NULL : log->oom_line;
			break;
		case VF_OUTCOME_CONFIG_ERROR:
			dst = log->config_line[0] ? NULL : log->config_line;
			break;
		case VF_OUTCOME_NAN:
			dst = log->nan_line[0] ? NULL : log->nan_line;
			break;
		default:
			dst = log->crash_line;
			break;
		}
		if (dst)
			set_evidence_at(dst, s, m[0].rm_so, m[0].rm_eo);
	}
}

static void process(struct vf_trial_log *log, const char *s)
{
	const struct vf_trial_patterns *p = log->pat;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return;
	log->nlines++;
	set_evidence(log->last_line, s);
	if (!p)
		return;
	regmatch_t m[10];
	bool ok;
	if (*s == '{' && strstr(s, p->json_key))
		parse_json_line(log, s);
	if (regexec(&p->step.re, s, 10, m, 0) == 0) {
		double step = group_double(s, &m[p->g_step], &ok);
		if (ok && step > log->last_step && step < 1e9)
			log->last_step = (int)step;
		double total = group_double(s, &m[p->g_total], &ok);
		if (ok && total > 0 && total < 1e9)
			log->total_steps = (int)total;
		double loss = group_double(s, &m[p->g_loss], &ok);
		note_loss(log, ok ? loss : NAN, s);
		double secs = group_double(s, &m[p->g_secs], &ok);
		if (ok)
			add_report(log, secs);
	} else if (p->progress.ok && regexec(&p->progress.re, s, 10, m, 0) == 0) {
		double loss = group_double(s, &m[p->p_loss], &ok);
		note_loss(log, ok ? loss : NAN, s);
		double secs = group_double(s, &m[p->p_secs], &ok);
		if (ok)
			add_report(log, secs);
	}
	for (int i = 0; i < p->nstats; i++) {
		if (regexec(&p->stats[i].re, s, 2, m, 0) != 0)
			continue;
		double v = group_double(s, &m[1], &ok);
		if (!ok)
			continue;
		if (p->stat_field[i] == STAT_PEAK_GB)
			log->peak_gb = v > log->peak_gb ? v : log->peak_gb;
		else
			log->steps_per_second = v;
	}
	scan_outcomes(log, s);
}

/* A line longer than VF_TRIAL_LINE_MAX is read whole in bounded memory: its
 * first VF_TRIAL_LINE_MAX bytes as a line, then windows of the rest that
 * overlap by LINE_OVERLAP bytes (a match up to that long across a window's
 * edge is still seen), each scanned for the outcome patterns only. */
#define LINE_OVERLAP (4u << 10)

static void line_one(struct vf_trial_log *log, const char *line, size_t len);

/* One window past the first of a long line: the line so far is complete
 * as far as joining goes, then the window is classified. */
static void scan_window(struct vf_trial_log *log, const char *w, size_t len, bool more)
{
	if (log->pending.len > 0) { /* the line's first window, its end read again in w */
		log->scan_limit = log->pending.len > LINE_OVERLAP ? log->pending.len - LINE_OVERLAP : 0;
		process(log, log->pending.data);
	}
	vf_buf_reset(&log->pending);
	struct vf_buf clean;
	vf_buf_init(&clean, 0);
	if (vf_term_sanitize_buf(&clean, w, len, NULL) == VF_OK && clean.data) {
		log->scan_limit = more && clean.len > LINE_OVERLAP ? clean.len - LINE_OVERLAP : 0;
		scan_outcomes(log, clean.data);
	}
	log->scan_limit = 0;
	vf_buf_release(&clean);
}

void vf_trial_log_line(struct vf_trial_log *log, const char *line, size_t len)
{
	if (len <= VF_TRIAL_LINE_MAX) {
		line_one(log, line, len);
		return;
	}
	line_one(log, line, VF_TRIAL_LINE_MAX);
	for (size_t off = VF_TRIAL_LINE_MAX - LINE_OVERLAP; off + LINE_OVERLAP < len;
	     off += VF_TRIAL_LINE_MAX - LINE_OVERLAP) {
		size_t n = len - off < VF_TRIAL_LINE_MAX ? len - off : VF_TRIAL_LINE_MAX;
		scan_window(log, line + off, n, off + n < len);
	}
}

static void line_one(struct vf_trial_log *log, const char *line, size_t len)
{
	/* The one terminal filter (term.h): what is matched, and so every
	 * evidence line shown or logged, holds no escape sequence or control. */
	struct vf_buf clean;
	vf_buf_init(&clean, 0);
	if (vf_term_sanitize_buf(&clean, line, len, NULL) != VF_OK) {
		vf_buf_release(&clean);
		return;
	}
	if (clean.len > VF_TRIAL_LINE_MAX) { /* escapes made it longer: cut at a character */
		size_t cut = VF_TRIAL_LINE_MAX;
		while (cut > 0 && ((unsigned char)clean.data[cut] & 0xc0) == 0x80)
			cut--;
		clean.data[cut] = '\0';
	}
	char *s = clean.data;
	const struct vf_trial_patterns *p = log->pat;
	char *body = s;
	regmatch_t m[1];
	if (p && p->rank.ok && regexec(&p->rank.re, body, 1, m, 0) == 0 && m[0].rm_so == 0)
		body += m[0].rm_eo;
	if (p && p->location.ok && regexec(&p->location.re, body, 1, m, 0) == 0)
		body[m[0].rm_so] = '\0';
	size_t indent = strspn(body, " ");
	bool cont = false;
	if (p && log->pending.len > 0 && indent >= (size_t)p->min_indent && body[indent]) {
		cont = !(p->cont_not.ok && regexec(&p->cont_not.re, body + indent, 0, NULL, 0) == 0);
	}
	if (cont) {
		/* Joined lines past the cap are cut; the cap bounds memory. */
		if (vf_buf_append(&log->pending, " ", 1, NULL) == VF_OK)
			vf_buf_append(&log->pending, body + indent, strlen(body + indent), NULL);
	} else {
		if (log->pending.len > 0)
			process(log, log->pending.data);
		vf_buf_reset(&log->pending);
		vf_buf_append(&log->pending, body, strlen(body), NULL);
	}
	vf_buf_release(&clean);
}

void vf_trial_log_text(struct vf_trial_log *log, const char *text, size_t len)
{
	size_t i = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && text[j] != '\n' && text[j] != '\r')
			j++;
		if (j > i)
			vf_trial_log_line(log, text + i, j - i);
		i = j + 1;
	}
}

vf_status vf_trial_log_file(struct vf_trial_log *log, const char *path, struct vf_error *err)
{
	bool is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	if (!f)
		return vf_error_set(err, VF_ERR, "%s: %s", path, strerror(errno));
	size_t cap = VF_TRIAL_LINE_MAX, len = 0;
	char *line = malloc(cap + 1), *chunk = malloc(64u << 10);
	bool overflow = false; /* past the line's first VF_TRIAL_LINE_MAX bytes */
	vf_status st = VF_OK;
	if (!line || !chunk) {
		st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	size_t n;
	while ((n = fread(chunk, 1, 64u << 10, f)) > 0) {
		for (size_t i = 0; i < n; i++) {
			char c = chunk[i];
			if (c == '\n' || c == '\r') {
				if (overflow && len > LINE_OVERLAP)
					scan_window(log, line, len, false);
				else if (!overflow && len > 0)
					line_one(log, line, len);
				len = 0;
				overflow = false;
			} else {
				line[len++] = c;
				if (len == cap) { /* a long line: on in windows, keeping an overlap */
					if (overflow)
						scan_window(log, line, len, true);
					else
						line_one(log, line, len);
					overflow = true;
					memmove(line, line + len - LINE_OVERLAP, LINE_OVERLAP);
					len = LINE_OVERLAP;
				}
			}
		}
	}
	if (ferror(f))
		st = vf_error_set(err, VF_ERR, "%s: read error: %s", path, strerror(errno));
	else if (overflow && len > LINE_OVERLAP)
		scan_window(log, line, len, false);
	else if (!overflow && len > 0)
		line_one(log, line, len);
	vf_trial_log_finish(log);
out:
	free(line);
	free(chunk);
	if (!is_stdin)
		fclose(f);
	return st;
}

void vf_trial_log_finish(struct vf_trial_log *log)
{
	if (log->pending.len > 0)
		process(log, log->pending.data);
	vf_buf_reset(&log->pending);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double vf_trial_log_step_seconds(const struct vf_trial_log *log)
{
	size_t n = log->nreports;
	if (n == 0)
		return -1;
	size_t skip = log->pat ? (size_t)log->pat->skip_reports : 2;
	if (skip > n - 1)
		skip = n - 1; /* too few reports: the last ones alone */
	size_t k = n - skip;
	double *v = malloc(k * sizeof *v);
	if (!v)
		return log->reports[n - 1];
	memcpy(v, log->reports + skip, k * sizeof *v);
	qsort(v, k, sizeof *v, cmp_double);
	double med = (k % 2) ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
	free(v);
	return med;
}

/* --- classification ------------------------------------------------------- */

static void verdict(struct vf_trial_verdict *v, enum vf_outcome o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void verdict(struct vf_trial_verdict *v, enum vf_outcome o, const char *fmt, ...)
{
	v->outcome = o;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->evidence, sizeof v->evidence, fmt, ap);
	va_end(ap);
}

void vf_trial_classify(const struct vf_trial_log *log, const struct vf_trial_exit *ex,
		       struct vf_trial_verdict *v)
{
	int status = ex->status;
	bool unknown = status < 0;
	bool failed = status > 0;
	int expect = ex->expect_steps > 0 ? ex->expect_steps : log->total_steps;
	/* The sample written at the last step proves the last step was reached
	 * even when the trainer reports only every 20 steps. */
	bool reached = (expect > 0 && log->last_step >= expect) || ex->sample == 1;
	const char *last = log->last_line[0] ? log->last_line : "(no output)";

	switch (ex->end) {
	case VF_PROC_INTERRUPTED:
		verdict(v, VF_OUTCOME_INTERRUPTED, "interrupted by the user at step %d", log->last_step);
		return;
	case VF_PROC_TIMEOUT:
		verdict(v, VF_OUTCOME_TIMEOUT, "ended at the per-trial timeout at step %d; last line: %s",
			log->last_step, last);
		return;
	case VF_PROC_STALLED:
		verdict(v, VF_OUTCOME_STALLED, "no output for the stall limit at step %d; last line: %s",
			log->last_step, last);
		return;
	case VF_PROC_EXITED:
		break;
	}
	if (log->oom_line[0] && (failed || unknown || !reached)) {
		verdict(v, VF_OUTCOME_OOM, "%s", log->oom_line);
		return;
	}
	if (log->config_line[0] && (failed || unknown)) {
		verdict(v, VF_OUTCOME_CONFIG_ERROR, "%s", log->config_line);
		return;
	}
	if (log->nonfinite_loss || log->nan_line[0]) {
		verdict(v, VF_OUTCOME_NAN, "%s", log->nan_line);
		return;
	}
	if (failed) {
		if (log->crash_line[0])
			verdict(v, VF_OUTCOME_CRASH, "exit %d: %s", status, log->crash_line);
		else if (status > 128)
			verdict(v, VF_OUTCOME_CRASH, "exit %d: killed by signal %d%s", status, status - 128,
				status == 137 ? " (SIGKILL)" : "");
		else
			verdict(v, VF_OUTCOME_CRASH, "exit %d; last line: %s", status, last);
		return;
	}
	if (unknown && log->crash_line[0]) {
		verdict(v, VF_OUTCOME_CRASH, "%s", log->crash_line);
		return;
	}
	if (ex->sample == 0) {
		verdict(v, VF_OUTCOME_INCOMPLETE, "no validation sample was written (last step reported: %d)",
			log->last_step);
		return;
	}
	if (log->last_step == 0) { /* a sample alone does not prove a step was trained */
		verdict(v, VF_OUTCOME_INCOMPLETE, "no training step was reported%s; last line: %s",
			ex->sample == 1 ? " (it exited 0 and wrote the validation sample)" : "", last);
		return;
	}
	if (!reached && expect > 0) {
		verdict(v, VF_OUTCOME_INCOMPLETE, "stopped at step %d of %d; last line: %s", log->last_step,
			expect, last);
		return;
	}
	if (ex->sample == 1)
		verdict(v, VF_OUTCOME_OK, "completed %d steps (last report: step %d) and wrote the validation sample",
			expect > 0 ? expect : log->last_step, log->last_step);
	else
		verdict(v, VF_OUTCOME_OK, "reached step %d of %d", log->last_step,
			expect > 0 ? expect : log->last_step);
}
