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
#include <math.h>

#include "check_internal.h"

#define MAX_WALK_DEPTH 32

struct walk {
	struct vf_check *c;
	bool report; /* false: count failures only (trying a union's members) */
	size_t fails;
	const struct vf_pybounds *fb; /* the field's own Field(...) constraints, for the value at hand */
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

/* pydantic v2's lax mode (the trainer's default), as pydantic 2.13 applies it
 * to what PyYAML produced (each rule checked against pydantic 2.13.4; see
 * its conversion table, docs.pydantic.dev concepts/conversion_table):
 *   int   an int; a bool (True is 1); a float with no fractional part (not
 *         inf or nan); a str that Python's int() reads after stripping
 *         whitespace (sign, digits, single '_' between digits), or that
 *         with a '.' and only zeros after it ("12.0"); never "1e3" or "0x10";
 *   float an int, float or bool; a str that Python's float() reads after
 *         stripping whitespace ("1e-4", "inf", "nan", "1_000.5");
 *   bool  a bool; the int 0 or 1; the float 0.0 or 1.0; a str that,
 *         lower-cased and not stripped, is one of 0 off f false n no 1 on t
 *         true y yes;
 *   str   a str only (a number or a bool is refused: no coercion to str).
 * Strict (StrictInt, strict=True): int takes an int, float an int or a
 * float, bool a bool, str a str. */
static bool py_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* s[0..n) as digits with single underscores between them. */
static bool py_digits(const char *s, size_t n)
{
	if (!n || s[0] == '_' || s[n - 1] == '_')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] >= '0' && s[i] <= '9') && !(s[i] == '_' && s[i + 1] != '_'))
			return false;
	return true;
}

/* The trimmed text of s in out (n bytes); false when it does not fit. */
static bool trimmed(const char *s, char *out, size_t n)
{
	while (py_space(*s))
		s++;
	size_t l = strlen(s);
	while (l && py_space(s[l - 1]))
		l--;
	if (l + 1 > n)
		return false;
	memcpy(out, s, l);
	out[l] = '\0';
	return true;
}

static bool lax_int_str(const char *s, double *out)
{
	char b[128];
	if (!trimmed(s, b, sizeof b))
		return false;
	const char *p = b + (b[0] == '-' || b[0] == '+');
	size_t l = strlen(p);
	const char *dot = strchr(p, '.');
	if (dot) { /* "12.0", "12.00": only zeros after the dot */
		if (!dot[1] || strspn(dot + 1, "0") != strlen(dot + 1))
			return false;
		l = (size_t)(dot - p);
	}
	if (!py_digits(p, l))
		return false;
	char d[128];
	size_t k = 0;
	for (const char *q = b; q < p + l; q++)
		if (*q != '_')
			d[k++] = *q;
	d[k] = '\0';
	*out = strtod(d, NULL);
	return true;
}

static bool lax_float_str(const char *s, double *out)
{
	char b[128];
	if (!trimmed(s, b, sizeof b))
		return false;
	const char *p = b + (b[0] == '-' || b[0] == '+');
	double sign = b[0] == '-' ? -1 : 1;
	if (strcasecmp(p, "inf") == 0 || strcasecmp(p, "infinity") == 0)
		return *out = sign * INFINITY, true;
	if (strcasecmp(p, "nan") == 0)
		return *out = NAN, true;
	/* digits [. digits] [e [sign] digits], each digit run with single '_' */
	size_t i = 0, run = 0;
	bool mant = false;
	run = strspn(p, "0123456789_");
	if (run && !py_digits(p, run))
		return false;
	mant = run > 0;
	i = run;
	if (p[i] == '.') {
		i++;
		run = strspn(p + i, "0123456789_");
		if (run && !py_digits(p + i, run))
			return false;
		mant = mant || run > 0;
		i += run;
	}
	if (!mant)
		return false;
	if (p[i] == 'e' || p[i] == 'E') {
		i++;
		if (p[i] == '-' || p[i] == '+')
			i++;
		run = strspn(p + i, "0123456789_");
		if (!run || !py_digits(p + i, run))
			return false;
		i += run;
	}
	if (p[i])
		return false;
	char d[128];
	size_t k = 0;
	for (const char *q = b; *q; q++)
		if (*q != '_')
			d[k++] = *q;
	d[k] = '\0';
	*out = strtod(d, NULL);
	return true;
}

static bool lax_bool_str(const char *s, bool *out)
{
	static const char *const t[] = {"1", "on", "t", "true", "y", "yes", NULL};
	static const char *const f[] = {"0", "off", "f", "false", "n", "no", NULL};
	for (int i = 0; t[i]; i++)
		if (strcasecmp(s, t[i]) == 0)
			return *out = true, true;
	for (int i = 0; f[i]; i++)
		if (strcasecmp(s, f[i]) == 0)
			return *out = false, true;
	return false;
}

/* Whether s reads as a number to C's strtod (1e3, 0x10, inf) though YAML
 * resolved it as a string: the hint about YAML's float syntax applies. */
static bool looks_numeric(const char *s)
{
	if (!s || !*s)
		return false;
	char *end;
	(void)strtod(s, &end);
	return end != s && *end == '\0';
}

/* Whether a YAML scalar validates as want; *num its number after coercion
 * (int, float, bool). */
static bool scalar_value(enum vf_pytype_kind want, bool strict, const struct vf_yaml_node *n, double *num)
{
	enum vf_yaml_kind k = vf_yaml_node_kind(n);
	const char *s = vf_yaml_node_str(n);
	double d = 0;
	bool b, have = vf_yaml_node_double(n, &d);
	if (k == VF_YAML_BOOL && vf_yaml_node_bool(n, &b))
		d = b, have = true;
	*num = d;
	switch (want) {
	case VF_PY_ANY: return true;
	case VF_PY_STR: return k == VF_YAML_STR;
	case VF_PY_NONE: return k == VF_YAML_NULL;
	case VF_PY_BOOL:
		if (k == VF_YAML_BOOL)
			return true;
		if (strict)
			return false;
		if ((k == VF_YAML_INT || k == VF_YAML_FLOAT) && have)
			return d == 0 || d == 1;
		return k == VF_YAML_STR && s && lax_bool_str(s, &b) && ((*num = b), true);
	case VF_PY_INT:
		if (k == VF_YAML_INT)
			return true; /* (PyYAML ints past 64 bits are still ints) */
		if (strict)
			return false;
		if (k == VF_YAML_BOOL)
			return true;
		if (k == VF_YAML_FLOAT)
			return have && isfinite(d) && d == floor(d);
		return k == VF_YAML_STR && s && lax_int_str(s, num);
	case VF_PY_FLOAT:
		if (k == VF_YAML_INT || k == VF_YAML_FLOAT)
			return true;
		if (strict)
			return false;
		if (k == VF_YAML_BOOL)
			return true;
		return k == VF_YAML_STR && s && lax_float_str(s, num);
	default: return false;
	}
}

/* Length in code points (Python's len of a str). */
static size_t utf8_len(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
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

/* The constraints of b on a value that validated as kind (num its number
 * after coercion): pydantic checks them after the type (greater_than,
 * less_than_equal, multiple_of, string_too_short, too_long ...). */
static void check_bounds(struct walk *w, const struct vf_yaml_node *n, const char *path, enum vf_pytype_kind kind,
			 double d, const struct vf_pybounds *b)
{
	const char *s = vf_yaml_node_str(n);
	char v[64];
	snprintf(v, sizeof v, "%s", vf_yaml_node_kind(n) == VF_YAML_SEQ ? "the list" : s ? s : "the value");
	if (kind == VF_PY_INT || kind == VF_PY_FLOAT) {
		if (b->finite && !isfinite(d))
			emit(w, VF_CHECK_FAIL, path, n, "%s is not a finite number (allow_inf_nan=False)", v);
		if (b->has_ge && !(d >= b->ge))
			emit(w, VF_CHECK_FAIL, path, n, "%s is below the minimum: must be >= %g", v, b->ge);
		if (b->has_gt && !(d > b->gt))
			emit(w, VF_CHECK_FAIL, path, n, "%s is below the minimum: must be > %g", v, b->gt);
		if (b->has_le && !(d <= b->le))
			emit(w, VF_CHECK_FAIL, path, n, "%s is above the maximum: must be <= %g", v, b->le);
		if (b->has_lt && !(d < b->lt))
			emit(w, VF_CHECK_FAIL, path, n, "%s is above the maximum: must be < %g", v, b->lt);
		if (b->has_multiple_of && isfinite(d) && fmod(d, b->multiple_of) != 0)
			emit(w, VF_CHECK_FAIL, path, n, "%s is not a multiple of %g", v, b->multiple_of);
	}
	double len = -1;
	if (kind == VF_PY_STR && s)
		len = (double)utf8_len(s);
	else if (kind == VF_PY_LIST || kind == VF_PY_TUPLE)
		len = (double)vf_yaml_node_count(n);
	if (len >= 0 && b->has_min_len && len < b->min_len)
		emit(w, VF_CHECK_FAIL, path, n, "%s is too short: at least %g %s", v, b->min_len,
		     kind == VF_PY_STR ? "characters" : "items");
	if (len >= 0 && b->has_max_len && len > b->max_len)
		emit(w, VF_CHECK_FAIL, path, n, "%s is too long: at most %g %s", v, b->max_len,
		     kind == VF_PY_STR ? "characters" : "items");
	if (kind == VF_PY_STR && b->pattern)
		emit(w, VF_CHECK_UNCHECKED, path, n, "not checked: the pattern %s (Python's regex dialect)", b->pattern);
	if (kind == VF_PY_STR && b->must_exist)
		emit(w, VF_CHECK_UNCHECKED, path, n, "not checked: pydantic requires %s that exists", b->must_exist);
}

/* The validators of m that apply to field f ("*" or its name). */
static void field_validators(const struct vf_pymodel *m, const struct vf_pyfield *f,
			     const struct vf_pyvalidator **first, bool *before)
{
	*first = NULL;
	*before = false;
	for (size_t i = 0; i < m->nvalidators; i++) {
		const struct vf_pyvalidator *v = &m->validators[i];
		for (size_t j = 0; j < v->nfields; j++)
			if (strcmp(v->fields[j], "*") == 0 || strcmp(v->fields[j], f->name) == 0) {
				bool b = strcmp(v->mode, "after") != 0;
				if (!*first || (b && !*before))
					*first = v;
				*before = *before || b;
			}
	}
}

static void validator_item(struct walk *w, const struct vf_yaml_node *n, const char *path,
			   const struct vf_pyvalidator *v, const char *owner)
{
	char at[300] = "";
	if (v->line)
		snprintf(at, sizeof at, " (%s:%zu)", v->file, v->line);
	else if (v->file)
		snprintf(at, sizeof at, " (%s)", v->file);
	if (strcmp(v->mode, "after") == 0)
		emit(w, VF_CHECK_UNCHECKED, *path ? path : "(config)", n,
		     "not checked: %s%s%s%s may reject this", owner ? owner : "", owner ? "." : "", v->name, at);
	else
		emit(w, VF_CHECK_UNCHECKED, *path ? path : "(config)", n,
		     "not checked: %s%s%s%s (mode=\"%s\") runs before pydantic's own check and may convert or "
		     "reject this", owner ? owner : "", owner ? "." : "", v->name, at, v->mode);
}

static void walk_field(struct walk *w, const struct vf_yaml_node *n, const char *path, const struct vf_pyfield *f,
		       int depth);

static void walk_model(struct walk *w, const struct vf_yaml_node *n, const char *path,
		       const struct vf_pymodel *m, int depth)
{
	for (size_t i = 0; i < vf_yaml_node_count(n); i++) {
		const char *k = vf_yaml_node_key(n, i);
		const struct vf_yaml_node *v = vf_yaml_node_child(n, i);
		char sub[512];
		join(sub, sizeof sub, path, k ? k : "?");
		const struct vf_pyfield *f = k ? vf_pymodel_field_for_key(m, k) : NULL;
		if (!f) {
			unknown_key(w, m, sub, k ? k : "?", v);
			continue;
		}
		if (f->alias_unknown) {
			emit(w, VF_CHECK_UNCHECKED, sub, v, "not checked: %s.%s has an alias vramfit cannot read",
			     m->name, f->name);
			continue;
		}
		const struct vf_pyvalidator *val;
		bool before;
		field_validators(m, f, &val, &before);
		if (val && before) { /* the raw value is the validator's, not the type's */
			validator_item(w, v, sub, val, m->name);
			continue;
		}
		walk_field(w, v, sub, f, depth + 1);
		if (val)
			validator_item(w, v, sub, val, m->name);
	}
	for (size_t i = 0; i < m->nvalidators; i++)
		if (!m->validators[i].nfields)
			validator_item(w, n, path, &m->validators[i], m->name);
	for (size_t i = 0; i < m->nfields; i++) {
		const struct vf_pyfield *f = &m->fields[i];
		bool present = false;
		for (size_t j = 0; j < vf_yaml_node_count(n) && !present; j++)
			present = vf_yaml_node_key(n, j) && vf_pyfield_accepts(m, f, vf_yaml_node_key(n, j));
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
	struct walk q = {w->c, false, 0, w->fb};
	walk_value(&q, n, path, a, depth);
	return q.fails;
}

static bool fits_kind(const struct vf_pytype *a, enum vf_yaml_kind k)
{
	if (k == VF_YAML_MAP)
		return a->kind == VF_PY_MODEL || a->kind == VF_PY_DICT;
	if (k == VF_YAML_SEQ)
		return a->kind == VF_PY_LIST || a->kind == VF_PY_TUPLE;
	if (a->kind == VF_PY_NONE) /* None takes null alone */
		return k == VF_YAML_NULL;
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
	if (keyed || (t->discriminator && k == VF_YAML_MAP)) {
		/* a tagged union: the tag selects a member, or pydantic fails with
		 * union_tag_invalid / union_tag_not_found, listing every tag */
		char list[384] = "";
		const char *field = t->discriminator;
		for (size_t i = 0; i < t->nargs; i++) {
			const struct vf_pymodel *am = t->args[i]->kind == VF_PY_MODEL ? t->args[i]->model : NULL;
			for (size_t f = 0; am && f < am->nfields; f++) {
				const struct vf_pyfield *fl = &am->fields[f];
				if (fl->type->kind != VF_PY_LITERAL || (field && strcmp(fl->name, field)))
					continue;
				if (!field && !t->args[i]->tag)
					continue;
				field = field ? field : fl->name;
				allowed(fl->type, list, sizeof list);
				break;
			}
		}
		const struct vf_yaml_node *tag = NULL;
		for (size_t j = 0; field && j < vf_yaml_node_count(n); j++)
			if (vf_yaml_node_key(n, j) && strcmp(vf_yaml_node_key(n, j), field) == 0)
				tag = vf_yaml_node_child(n, j);
		char sub[512];
		join(sub, sizeof sub, path, field ? field : "?");
		if (tag)
			emit(w, VF_CHECK_FAIL, sub, tag, "'%s' selects no member of the union (allowed: %s)",
			     vf_yaml_node_str(tag) ? vf_yaml_node_str(tag) : vf_yaml_kind_name(vf_yaml_node_kind(tag)),
			     list);
		else
			emit(w, VF_CHECK_FAIL, sub, n, "missing: the discriminator '%s' selects the member (allowed: %s)",
			     field ? field : "?", list);
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
	if (t->validator) {
		validator_item(w, n, path, t->validator, NULL);
		if (strcmp(t->validator->mode, "after") != 0)
			return;
	}
	switch (t->kind) {
	case VF_PY_UNKNOWN:
		emit(w, VF_CHECK_UNCHECKED, path, n, "not checked: the type %s is not understood by vramfit's reader",
		     t->text ? t->text : "?");
		return;
	case VF_PY_UNION: walk_union(w, n, path, t, depth); return;
	case VF_PY_MODEL:
		if (k != VF_YAML_MAP) {
			emit(w, VF_CHECK_FAIL, path, n, "expected a mapping (%s), found %s", t->model->name,
			     vf_yaml_kind_name(k));
		} else {
			const struct vf_pybounds *saved = w->fb;
			w->fb = NULL;
			walk_model(w, n, path, t->model, depth + 1);
			w->fb = saved;
		}
		return;
	case VF_PY_DICT:
		if (k != VF_YAML_MAP)
			emit(w, VF_CHECK_FAIL, path, n, "expected a mapping, found %s", vf_yaml_kind_name(k));
		return;
	case VF_PY_LIST:
	case VF_PY_TUPLE:
		if (k != VF_YAML_SEQ) {
			emit(w, VF_CHECK_FAIL, path, n, "expected a sequence, found %s", vf_yaml_kind_name(k));
		} else {
			const struct vf_pybounds *saved = w->fb;
			check_bounds(w, n, path, t->kind, 0, &t->bounds);
			if (saved)
				check_bounds(w, n, path, t->kind, 0, saved);
			w->fb = NULL;
			walk_seq(w, n, path, t, depth);
			w->fb = saved;
		}
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
	default: {
		double d;
		bool strict = t->bounds.strict || (w->fb && w->fb->strict);
		if (!scalar_value(t->kind, strict, n, &d)) {
			vf_pytype_text(t, tt, sizeof tt);
			if (k == VF_YAML_STR && (t->kind == VF_PY_INT || t->kind == VF_PY_FLOAT || t->kind == VF_PY_BOOL))
				emit(w, VF_CHECK_FAIL, path, n, "expected %s%s, found the string '%s' (%s)", tt,
				     strict ? " (strict)" : "", vf_yaml_node_str(n),
				     strict ? "strict mode converts nothing"
				     : looks_numeric(vf_yaml_node_str(n))
					     ? "pydantic cannot read it as one; YAML reads 1e3 without a dot as a string"
					     : "pydantic cannot read it as one");
			else
				emit(w, VF_CHECK_FAIL, path, n, "expected %s%s, found %s", tt, strict ? " (strict)" : "",
				     vf_yaml_kind_name(k));
			return;
		}
		check_bounds(w, n, path, t->kind, d, &t->bounds);
		if (w->fb)
			check_bounds(w, n, path, t->kind, d, w->fb);
	}
	}
}

static void walk_field(struct walk *w, const struct vf_yaml_node *n, const char *path, const struct vf_pyfield *f,
		       int depth)
{
	const struct vf_pybounds *saved = w->fb;
	w->fb = &f->b;
	walk_value(w, n, path, f->type, depth);
	w->fb = saved;
}

void vf__check_schema(const struct vf_yaml_node *root, const struct vf_schema *s, struct vf_check *c)
{
	struct walk w = {c, true, 0, NULL};
	walk_model(&w, root, "", vf_schema_root(s), 0);
}
