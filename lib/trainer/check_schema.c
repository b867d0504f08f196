/* check_schema.c - check a config's keys and values against the schema read
 * from the trainer's own source (schema.c): each mapping against its model
 * (unknown keys where the model forbids extras, required fields), each value
 * against its field's type (Literal values, None, lists, tuples, ge/gt/le/lt
 * bounds), unions by their discriminator. What the reader did not understand
 * is "not checked", never a failure. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check_internal.h"

#define MAX_WALK_DEPTH 32

struct walk {
	struct vf_check *c;
	bool report; /* false: count failures only (trying a union's members) */
	size_t fails;
};

static void emit(struct walk *w, enum vf_check_level level, const char *key, const struct vf_yaml_node *n,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void emit(struct walk *w, enum vf_check_level level, const char *key, const struct vf_yaml_node *n,
		 const char *fmt, ...)
{
	if (level == VF_CHECK_FAIL)
		w->fails++;
	if (!w->report)
		return;
	char msg[384];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	vf__check_add(w->c, level, key, n, "%s", msg);
}

static void walk_value(struct walk *w, const struct vf_yaml_node *n, const char *path,
		       const struct vf_pytype *t, int depth);

/* ---- scalars --------------------------------------------------------------- */

static bool numeric_str(const struct vf_yaml_node *n, bool want_int)
{
	const char *s = vf_yaml_node_str(n);
	if (!s || !*s)
		return false;
	char *end;
	if (want_int) {
		(void)strtoll(s, &end, 10);
	} else {
		(void)strtod(s, &end);
	}
	while (*end == ' ')
		end++;
	return *end == '\0';
}

/* pydantic's lax mode: what a YAML scalar of kind k may become. */
static bool scalar_ok(enum vf_pytype_kind want, const struct vf_yaml_node *n)
{
	enum vf_yaml_kind k = vf_yaml_node_kind(n);
	double d;
	switch (want) {
	case VF_PY_ANY: return true;
	case VF_PY_STR: return k == VF_YAML_STR;
	case VF_PY_NONE: return k == VF_YAML_NULL;
	case VF_PY_BOOL:
		return k == VF_YAML_BOOL || (k == VF_YAML_INT && vf_yaml_node_double(n, &d) && (d == 0 || d == 1));
	case VF_PY_INT:
		return k == VF_YAML_INT || k == VF_YAML_BOOL ||
		       (k == VF_YAML_FLOAT && vf_yaml_node_double(n, &d) && d == (double)(long long)d) ||
		       (k == VF_YAML_STR && numeric_str(n, true));
	case VF_PY_FLOAT:
		return k == VF_YAML_INT || k == VF_YAML_FLOAT || k == VF_YAML_BOOL ||
		       (k == VF_YAML_STR && numeric_str(n, false));
	default: return false;
	}
}

static bool literal_ok(const struct vf_pytype *t, const struct vf_yaml_node *n)
{
	enum vf_yaml_kind k = vf_yaml_node_kind(n);
	const char *s = vf_yaml_node_str(n);
	for (size_t i = 0; i < t->nliterals; i++) {
		const struct vf_pyliteral *l = &t->literals[i];
		double a, b;
		bool v;
		if (l->kind == VF_PY_STR && k == VF_YAML_STR && s && strcmp(s, l->text) == 0)
			return true;
		if (l->kind == VF_PY_NONE && k == VF_YAML_NULL)
			return true;
		if (l->kind == VF_PY_BOOL && k == VF_YAML_BOOL && vf_yaml_node_bool(n, &v) &&
		    v == (strcmp(l->text, "True") == 0))
			return true;
		if ((l->kind == VF_PY_INT || l->kind == VF_PY_FLOAT) && (k == VF_YAML_INT || k == VF_YAML_FLOAT) &&
		    vf_yaml_node_double(n, &a) && sscanf(l->text, "%lf", &b) == 1 && a == b)
			return true;
	}
	return false;
}

/* The allowed values of a Literal, or of a union of Literals and None, as
 * the config spells them: adamw, adamw8bit; null. */
static void allowed(const struct vf_pytype *t, char *out, size_t n)
{
	size_t l = strlen(out);
	if (t->kind == VF_PY_NONE) {
		snprintf(out + l, n - l, "%snull", l ? ", " : "");
	} else if (t->kind == VF_PY_LITERAL) {
		for (size_t i = 0; i < t->nliterals && l < n; i++, l = strlen(out))
			snprintf(out + l, n - l, "%s%s", l ? ", " : "",
				 t->literals[i].kind == VF_PY_NONE ? "null" : t->literals[i].text);
	} else if (t->kind == VF_PY_UNION) {
		for (size_t i = 0; i < t->nargs; i++)
			allowed(t->args[i], out, n);
	}
}

/* ---- models -------------------------------------------------------------------- */

static void join(char *out, size_t n, const char *prefix, const char *key)
{
	snprintf(out, n, "%s%s%s", prefix, *prefix ? "." : "", key);
}

static void unknown_key(struct walk *w, const struct vf_pymodel *m, const char *path, const char *key,
			const struct vf_yaml_node *v)
{
	if (vf_pymodel_consumes(m, key))
		emit(w, VF_CHECK_UNCHECKED, path, v,
		     "not checked: not a field of %s, but its before-validator (%s) may take it (a deprecated form?)",
		     m->name, m->file);
	else if (m->open)
		emit(w, VF_CHECK_UNCHECKED, path, v, "not checked: %s accepts keys it does not list (%s)",
		     m->name, m->open_why ? m->open_why : "open");
	else if (m->forbid)
		emit(w, VF_CHECK_FAIL, path, v,
		     "unknown key: %s (%s:%zu) has no field '%s' and the trainer's schema forbids extra keys",
		     m->name, m->file, m->line, key);
	else
		emit(w, VF_CHECK_UNCHECKED, path, v,
		     "not checked: %s has no field '%s'; it does not forbid extra keys, so the trainer ignores it",
		     m->name, key);
}

static void field_bounds(struct walk *w, const struct vf_yaml_node *n, const char *path, const struct vf_pyfield *f)
{
	enum vf_yaml_kind k = vf_yaml_node_kind(n);
	double d;
	if ((k != VF_YAML_INT && k != VF_YAML_FLOAT) || !vf_yaml_node_double(n, &d))
		return;
	const char *s = vf_yaml_node_str(n);
	if (f->has_ge && !(d >= f->ge))
		emit(w, VF_CHECK_FAIL, path, n, "%s is below the minimum: must be >= %g", s, f->ge);
	if (f->has_gt && !(d > f->gt))
		emit(w, VF_CHECK_FAIL, path, n, "%s is below the minimum: must be > %g", s, f->gt);
	if (f->has_le && !(d <= f->le))
		emit(w, VF_CHECK_FAIL, path, n, "%s is above the maximum: must be <= %g", s, f->le);
	if (f->has_lt && !(d < f->lt))
		emit(w, VF_CHECK_FAIL, path, n, "%s is above the maximum: must be < %g", s, f->lt);
}

static void walk_model(struct walk *w, const struct vf_yaml_node *n, const char *path,
		       const struct vf_pymodel *m, int depth)
{
	for (size_t i = 0; i < vf_yaml_node_count(n); i++) {
		const char *k = vf_yaml_node_key(n, i);
		const struct vf_yaml_node *v = vf_yaml_node_child(n, i);
		char sub[512];
		join(sub, sizeof sub, path, k ? k : "?");
		const struct vf_pyfield *f = k ? vf_pymodel_field(m, k) : NULL;
		if (!f) {
			unknown_key(w, m, sub, k ? k : "?", v);
			continue;
		}
		walk_value(w, v, sub, f->type, depth + 1);
		field_bounds(w, v, sub, f);
	}
	for (size_t i = 0; i < m->nfields; i++) {
		const struct vf_pyfield *f = &m->fields[i];
		bool present = false;
		for (size_t j = 0; j < vf_yaml_node_count(n) && !present; j++)
			present = vf_yaml_node_key(n, j) && strcmp(vf_yaml_node_key(n, j), f->name) == 0;
		if (!f->required || present)
			continue;
		char sub[512];
		join(sub, sizeof sub, path, f->name);
		if (m->nconsumed)
			emit(w, VF_CHECK_UNCHECKED, sub, n,
			     "not checked: required by %s, which a before-validator may fill in", m->name);
		else
			emit(w, VF_CHECK_FAIL, sub, n, "missing: %s (%s:%zu) requires it", m->name, f->file,
			     f->line);
	}
}

/* ---- unions ------------------------------------------------------------------------ */

/* The union member a mapping selects through a Literal field (the named
 * discriminator, or any single-literal tag field). NULL when none does. */
static const struct vf_pymodel *discriminate(const struct vf_pytype *t, const struct vf_yaml_node *n,
					     bool *keyed)
{
	*keyed = false;
	for (size_t i = 0; i < t->nargs; i++) {
		const struct vf_pytype *a = t->args[i];
		if (a->kind != VF_PY_MODEL)
			continue;
		for (size_t f = 0; f < a->model->nfields; f++) {
			const struct vf_pyfield *fl = &a->model->fields[f];
			if (fl->type->kind != VF_PY_LITERAL || (t->discriminator && strcmp(fl->name, t->discriminator)))
				continue;
			if (!t->discriminator && !a->tag)
				continue;
			for (size_t j = 0; j < vf_yaml_node_count(n); j++) {
				const char *k = vf_yaml_node_key(n, j);
				if (!k || strcmp(k, fl->name) != 0)
					continue;
				*keyed = true;
				if (literal_ok(fl->type, vf_yaml_node_child(n, j)))
					return a->model;
			}
		}
	}
	return NULL;
}

static size_t try_member(struct walk *w, const struct vf_yaml_node *n, const char *path,
			 const struct vf_pytype *a, int depth)
{
	struct walk q = {w->c, false, 0};
	walk_value(&q, n, path, a, depth);
	return q.fails;
}

static bool fits_kind(const struct vf_pytype *a, enum vf_yaml_kind k)
{
	if (k == VF_YAML_MAP)
		return a->kind == VF_PY_MODEL || a->kind == VF_PY_DICT;
	if (k == VF_YAML_SEQ)
		return a->kind == VF_PY_LIST || a->kind == VF_PY_TUPLE;
	return a->kind != VF_PY_MODEL && a->kind != VF_PY_DICT && a->kind != VF_PY_LIST && a->kind != VF_PY_TUPLE;
}

static void walk_union(struct walk *w, const struct vf_yaml_node *n, const char *path,
		       const struct vf_pytype *t, int depth)
{
	enum vf_yaml_kind k = vf_yaml_node_kind(n);
	bool keyed = false;
	const struct vf_pymodel *sel = k == VF_YAML_MAP ? discriminate(t, n, &keyed) : NULL;
	if (sel) {
		walk_model(w, n, path, sel, depth + 1);
		return;
	}
	const struct vf_pytype *best = NULL, *unk = NULL;
	size_t best_fails = (size_t)-1, fitting = 0;
	for (size_t i = 0; i < t->nargs; i++) {
		const struct vf_pytype *a = t->args[i];
		if (a->kind == VF_PY_UNKNOWN) {
			unk = a;
			continue;
		}
		size_t f = try_member(w, n, path, a, depth);
		if (f == 0)
			return;
		if (fits_kind(a, k)) {
			fitting++;
			if (f < best_fails)
				best = a, best_fails = f;
		}
	}
	char tt[256];
	vf_pytype_text(t, tt, sizeof tt);
	bool literals = true;
	for (size_t i = 0; i < t->nargs; i++)
		literals = literals && (t->args[i]->kind == VF_PY_LITERAL || t->args[i]->kind == VF_PY_NONE);
	if (unk)
		emit(w, VF_CHECK_UNCHECKED, path, n, "not checked: the type %s is not understood by vramfit's reader",
		     tt);
	else if (literals && k != VF_YAML_MAP && k != VF_YAML_SEQ) {
		char list[256] = "";
		allowed(t, list, sizeof list);
		emit(w, VF_CHECK_FAIL, path, n, "'%s' is not an allowed value (allowed: %s)",
		     vf_yaml_node_str(n) ? vf_yaml_node_str(n) : "null", list);
	}
	else if (fitting == 1 || (keyed && best))
		walk_value(w, n, path, best, depth + 1);
	else
		emit(w, VF_CHECK_FAIL, path, n, "expected %s, found %s", tt, vf_yaml_kind_name(k));
}

/* ---- values ---------------------------------------------------------------------------- */

static void walk_seq(struct walk *w, const struct vf_yaml_node *n, const char *path, const struct vf_pytype *t,
		     int depth)
{
	size_t count = vf_yaml_node_count(n);
	if (t->kind == VF_PY_TUPLE && !t->variadic && count != t->nargs) {
		emit(w, VF_CHECK_FAIL, path, n, "expected %zu elements, found %zu", t->nargs, count);
		return;
	}
	for (size_t i = 0; i < count; i++) {
		const struct vf_pytype *it = t->nargs == 0 ? NULL : t->variadic ? t->args[0]
					       : t->kind == VF_PY_LIST ? t->args[0] : t->args[i];
		if (!it)
			return;
		char sub[512];
		char idx[24];
		snprintf(idx, sizeof idx, "%zu", i);
		join(sub, sizeof sub, path, idx);
		walk_value(w, vf_yaml_node_child(n, i), sub, it, depth + 1);
	}
}

static void walk_value(struct walk *w, const struct vf_yaml_node *n, const char *path,
		       const struct vf_pytype *t, int depth)
{
	if (!t || depth > MAX_WALK_DEPTH)
		return;
	enum vf_yaml_kind k = vf_yaml_node_kind(n);
	char tt[256];
	switch (t->kind) {
	case VF_PY_UNKNOWN:
		emit(w, VF_CHECK_UNCHECKED, path, n, "not checked: the type %s is not understood by vramfit's reader",
		     t->text ? t->text : "?");
		return;
	case VF_PY_UNION: walk_union(w, n, path, t, depth); return;
	case VF_PY_MODEL:
		if (k != VF_YAML_MAP)
			emit(w, VF_CHECK_FAIL, path, n, "expected a mapping (%s), found %s", t->model->name,
			     vf_yaml_kind_name(k));
		else
			walk_model(w, n, path, t->model, depth + 1);
		return;
	case VF_PY_DICT:
		if (k != VF_YAML_MAP)
			emit(w, VF_CHECK_FAIL, path, n, "expected a mapping, found %s", vf_yaml_kind_name(k));
		return;
	case VF_PY_LIST:
	case VF_PY_TUPLE:
		if (k != VF_YAML_SEQ)
			emit(w, VF_CHECK_FAIL, path, n, "expected a sequence, found %s", vf_yaml_kind_name(k));
		else
			walk_seq(w, n, path, t, depth);
		return;
	case VF_PY_LITERAL:
		if (!literal_ok(t, n)) {
			tt[0] = '\0';
			allowed(t, tt, sizeof tt);
			emit(w, VF_CHECK_FAIL, path, n, "'%s' is not an allowed value (allowed: %s)",
			     k == VF_YAML_NULL ? "null" : vf_yaml_node_str(n) ? vf_yaml_node_str(n) : vf_yaml_kind_name(k),
			     tt);
		}
		return;
	default:
		if (!scalar_ok(t->kind, n)) {
			vf_pytype_text(t, tt, sizeof tt);
			emit(w, VF_CHECK_FAIL, path, n, "expected %s, found %s", tt, vf_yaml_kind_name(k));
		}
	}
}

void vf__check_schema(const struct vf_yaml_node *root, const struct vf_schema *s, struct vf_check *c)
{
	struct walk w = {c, true, 0};
	walk_model(&w, root, "", vf_schema_root(s), 0);
}
