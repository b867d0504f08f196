/* yamldoc.c - a YAML document as source bytes plus a node tree built from
 * libyaml's events, each node knowing its byte span in the source; dotted-path
 * lookup and byte-exact patching by splicing over those spans (see yamldoc.h).
 *
 * libyaml 0.2.x counts marks in characters (a CRLF is two), not bytes; the
 * tree builder maps them to byte offsets with a moving UTF-8 cursor. */
#include "vramfit/base/yamldoc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "vramfit/base/buf.h"

enum { N_SCALAR, N_SEQ, N_MAP, N_ALIAS };

struct vf_yaml_node {
	int type;
	enum vf_yaml_kind kind;      /* scalars: resolved type */
	int style;                   /* scalars: yaml_scalar_style_t */
	bool flow;                   /* collections: flow style */
	bool anchored;
	char *anchor;                /* its anchor's name, or NULL */
	size_t start, end;           /* byte span in the source */
	size_t line;                 /* 1-based */
	size_t col;                  /* 0-based character column of start */
	char *value;                 /* scalars: NUL-terminated */
	size_t vlen;
	struct vf_yaml_node **items; /* seq: elements; map: key, value, key, value... */
	size_t n, alloc;
	struct vf_yaml_node *target; /* alias: the anchored node */
	/* map with merge keys (<<): the entries PyYAML's safe_load sees, as
	 * key, value pairs (borrowed nodes); NULL when the map has none */
	struct vf_yaml_node **eff;
	size_t neff;
	int merge_state;             /* 0 not flattened, 1 in progress, 2 done */
};

struct tree {
	struct vf_yaml_node **nodes; /* every node, owned */
	size_t nnodes, anodes;
	struct vf_yaml_node *root;   /* NULL for an empty stream */
	int step;                    /* indentation step of nested block mappings */
};

struct vf_yamldoc {
	char *text;
	size_t len;
	char *name;
	bool crlf;
	struct tree t;
};

/* ---- scalars ------------------------------------------------------------ */

static bool is_one_of(const char *s, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
static const char *const trues[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", NULL};
static const char *const falses[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", NULL};

/* Plain scalars resolve the way PyYAML's safe_load resolves them (its
 * Resolver's YAML 1.1 implicit patterns, checked against PyYAML 6.0):
 *   bool  yes/Yes/YES, no, true, false, on, off in those three casings only
 *         (`y`, `n`, `tRue` stay strings);
 *   int   [-+]?0b[01_]+ | [-+]?0[0-7_]+ (octal) | [-+]?(0|[1-9][0-9_]*) |
 *         [-+]?0x[0-9a-fA-F_]+ | [-+]?[1-9][0-9_]*(:[0-5]?[0-9])+ (base 60);
 *         `0o17` and `09` are strings;
 *   float [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)? | \.[0-9][0-9_]*(...)? |
 *         [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]* | [-+]?\.inf | \.nan:
 *         a float needs a dot and an exponent needs a sign, so `1e3`,
 *         `1e-4` and `1.0e5` are strings (pydantic then parses the string).
 * Timestamps (2024-01-01) are not resolved: they read as strings here. */
static bool digits_of(const char **p, const char *set, bool first_required)
{
	const char *s = *p;
	if (first_required && !(**p && strchr(set, **p) && **p != '_'))
		return false;
	while (**p && strchr(set, **p))
		(*p)++;
	return *p > s;
}

/* (:[0-5]?[0-9])+ */
static bool sexagesimal_tail(const char **p)
{
	bool any = false;
	while (**p == ':') {
		const char *q = *p + 1;
		if (*q >= '0' && *q <= '5' && q[1] >= '0' && q[1] <= '9')
			q += 2;
		else if (*q >= '0' && *q <= '9')
			q += 1;
		else
			return false;
		*p = q;
		any = true;
	}
	return any;
}

static bool match_int(const char *s)
{
	const char *p = s;
	if (*p == '-' || *p == '+')
		p++;
	if (p[0] == '0' && p[1] == 'b')
		return p += 2, digits_of(&p, "01_", false) && !*p;
	if (p[0] == '0' && p[1] == 'x')
		return p += 2, digits_of(&p, "0123456789abcdefABCDEF_", false) && !*p;
	if (p[0] == '0')
		return p++, !*p || (digits_of(&p, "01234567_", false) && !*p);
	if (!(*p >= '1' && *p <= '9'))
		return false;
	digits_of(&p, "0123456789_", false);
	return !*p || (sexagesimal_tail(&p) && !*p);
}

static bool exponent(const char **p)
{
	if (**p != 'e' && **p != 'E')
		return true;
	(*p)++;
	if (**p != '-' && **p != '+')
		return false;
	(*p)++;
	return digits_of(p, "0123456789", false);
}

static bool match_float(const char *s)
{
	const char *p = s;
	if (strcmp(s, ".nan") == 0 || strcmp(s, ".NaN") == 0 || strcmp(s, ".NAN") == 0)
		return true;
	if (*p == '.' && p[1] >= '0' && p[1] <= '9') {
		p++;
		digits_of(&p, "0123456789_", false);
		return exponent(&p) && !*p;
	}
	if (*p == '-' || *p == '+')
		p++;
	if (strcmp(p, ".inf") == 0 || strcmp(p, ".Inf") == 0 || strcmp(p, ".INF") == 0)
		return true;
	if (!(*p >= '0' && *p <= '9'))
		return false;
	digits_of(&p, "0123456789_", false);
	if (*p == ':') {
		if (!sexagesimal_tail(&p) || *p != '.')
			return false;
		p++;
		digits_of(&p, "0123456789_", false);
		return !*p;
	}
	if (*p != '.')
		return false;
	p++;
	digits_of(&p, "0123456789_", false);
	return exponent(&p) && !*p;
}

static enum vf_yaml_kind resolve_plain(const char *s)
{
	if (is_one_of(s, nulls))
		return VF_YAML_NULL;
	if (is_one_of(s, trues) || is_one_of(s, falses))
		return VF_YAML_BOOL;
	if (match_int(s))
		return VF_YAML_INT;
	if (match_float(s))
		return VF_YAML_FLOAT;
	return VF_YAML_STR;
}

/* s without its underscores into buf (PyYAML drops them from numbers);
 * false when it does not fit. */
static bool drop_underscores(const char *s, char *buf, size_t size)
{
	size_t j = 0;
	for (; *s && j + 1 < size; s++)
		if (*s != '_')
			buf[j++] = *s;
	buf[j] = '\0';
	return *s == '\0';
}

/* The value of a resolved int, as PyYAML's constructor computes it:
 * underscores dropped, then 0b binary, 0x hex, a leading 0 octal, colons
 * base 60. False when, like `0b_`, it has no digits (PyYAML itself fails
 * on those). *wide: its value as a double (rounded past 2^53, and past 64
 * bits too: Python's ints have no limit); *fits: it fits in 64 bits, and
 * then *out is its exact value. */
static bool int_parse(const char *s, int64_t *out, double *wide, bool *fits)
{
	const char *p = s;
	while (*p == '_')
		p++;
	int sign = 1;
	if (*p == '-' || *p == '+')
		sign = *p++ == '-' ? -1 : 1;
	while (*p == '_')
		p++;
	int base = 10;
	if (p[0] == '0' && (p[1] == 'b' || p[1] == 'x'))
		base = p[1] == 'b' ? 2 : 16, p += 2;
	else if (p[0] == '0' && p[1])
		base = 8, p++;
	uint64_t v = 0;
	long double w = 0; /* 64-bit mantissa on x86-64: exact to 2^64 */
	bool ok = true, digits = false;
	for (; *p; p++) {
		uint64_t d;
		if (*p == '_')
			continue;
		if (*p == ':') {
			/* base 60: every colon-separated part is one digit */
			uint64_t part = 0;
			long double wpart = 0;
			const char *q = p + 1;
			for (; (*q >= '0' && *q <= '9') || *q == '_'; q++)
				if (*q != '_') {
					ok = ok && part <= (UINT64_MAX - 9) / 10;
					part = part * 10 + (uint64_t)(*q - '0');
					wpart = wpart * 10 + (*q - '0');
				}
			ok = ok && v <= (UINT64_MAX - part) / 60;
			v = v * 60 + part;
			w = w * 60 + wpart;
			p = q - 1;
			continue;
		}
		if (*p >= '0' && *p <= '9')
			d = (uint64_t)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			d = (uint64_t)(*p - 'a' + 10);
		else if (*p >= 'A' && *p <= 'F')
			d = (uint64_t)(*p - 'A' + 10);
		else
			return false;
		if (d >= (uint64_t)base)
			return false;
		digits = true;
		ok = ok && v <= (UINT64_MAX - d) / (uint64_t)base;
		v = v * (uint64_t)base + d;
		w = w * base + (long double)d;
	}
	if (!digits && base != 8)
		return false;
	*wide = (double)(sign * w);
	*fits = ok && v <= (uint64_t)INT64_MAX + (sign < 0);
	if (*fits)
		*out = sign < 0 ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

/* The exact value of a resolved int; false when it does not fit in 64 bits. */
static bool int_value(const char *s, int64_t *out)
{
	double w;
	bool fits;
	return int_parse(s, out, &w, &fits) && fits;
}

/* The value of a resolved float: underscores dropped, .inf/.nan, base 60
 * before the dot (1:30.5 = 90.5). */
static bool float_value(const char *s, double *out)
{
	char buf[128];
	if (!drop_underscores(s, buf, sizeof buf))
		return false;
	const char *p = buf;
	double sign = 1;
	if (*p == '-' || *p == '+')
		sign = *p++ == '-' ? -1 : 1;
	if (strcasecmp(p, ".inf") == 0)
		return *out = sign * INFINITY, true;
	if (strcasecmp(p, ".nan") == 0)
		return *out = NAN, true;
	if (strchr(p, ':')) {
		double v = 0;
		while (strchr(p, ':')) {
			char *end;
			v = v * 60 + (double)strtoull(p, &end, 10);
			p = end + 1;
		}
		char *end;
		double last = strtod(p, &end);
		if (*end)
			return false;
		return *out = sign * (v * 60 + last), true;
	}
	char *end;
	double v = strtod(p, &end);
	if (*end)
		return false;
	*out = sign * v;
	return true;
}


/* ---- tree --------------------------------------------------------------- */

static void tree_release(struct tree *t)
{
	for (size_t i = 0; i < t->nnodes; i++) {
		free(t->nodes[i]->value);
		free(t->nodes[i]->anchor);
		free(t->nodes[i]->items);
		free(t->nodes[i]->eff);
		free(t->nodes[i]);
	}
	free(t->nodes);
	memset(t, 0, sizeof *t);
}

static struct vf_yaml_node *tree_new(struct tree *t)
{
	if (t->nnodes == t->anodes) {
		size_t na = t->anodes ? t->anodes * 2 : 64;
		struct vf_yaml_node **nn = realloc(t->nodes, na * sizeof *nn);
		if (!nn)
			return NULL;
		t->nodes = nn;
		t->anodes = na;
	}
	struct vf_yaml_node *n = calloc(1, sizeof *n);
	if (!n)
		return NULL;
	t->nodes[t->nnodes++] = n;
	return n;
}

static bool node_push(struct vf_yaml_node *parent, struct vf_yaml_node *child)
{
	if (parent->n == parent->alloc) {
		size_t na = parent->alloc ? parent->alloc * 2 : 8;
		struct vf_yaml_node **ni = realloc(parent->items, na * sizeof *ni);
		if (!ni)
			return false;
		parent->items = ni;
		parent->alloc = na;
	}
	parent->items[parent->n++] = child;
	return true;
}

/* Character index -> byte offset, with a cursor that moves either way. */
struct cursor {
	const unsigned char *s;
	size_t len;
	size_t ci, bi;
};

static size_t utf8_width(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if ((c & 0xE0) == 0xC0)
		return 2;
	if ((c & 0xF0) == 0xE0)
		return 3;
	if ((c & 0xF8) == 0xF0)
		return 4;
	return 1;
}

static size_t cursor_to(struct cursor *c, size_t ci)
{
	while (c->ci < ci && c->bi < c->len) {
		c->bi += utf8_width(c->s[c->bi]);
		if (c->bi > c->len)
			c->bi = c->len;
		c->ci++;
	}
	while (c->ci > ci && c->bi > 0) {
		c->bi--;
		while (c->bi > 0 && (c->s[c->bi] & 0xC0) == 0x80)
			c->bi--;
		c->ci--;
	}
	return c->bi;
}

struct anchor {
	char *name;
	struct vf_yaml_node *node;
};

static vf_status parser_error(const yaml_parser_t *p, const char *name, struct vf_error *err)
{
	if (p->error == YAML_MEMORY_ERROR)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory parsing YAML", name);
	if (p->context)
		return vf_error_set(err, VF_ERR, "%s:%zu:%zu: invalid YAML: %s %s", name,
				    p->problem_mark.line + 1, p->problem_mark.column + 1,
				    p->problem ? p->problem : "error", p->context);
	return vf_error_set(err, VF_ERR, "%s:%zu:%zu: invalid YAML: %s", name,
			    p->problem_mark.line + 1, p->problem_mark.column + 1,
			    p->problem ? p->problem : "error");
}

static size_t node_end(const struct vf_yaml_node *n)
{
	return n->end;
}

/* ---- merge keys ---------------------------------------------------------- */

/* PyYAML's safe_load merges `<<: *base` (a plain `<<` key whose value is a
 * mapping, or a sequence of mappings) into the mapping that holds it
 * (SafeConstructor.flatten_mapping): the merged entries come first, the
 * mapping's own entries after them, and the last occurrence of a key wins,
 * so an explicit key overrides a merged one, a later `<<` overrides an
 * earlier one, and in `<<: [*a, *b]` the first mapping (a) wins (the list
 * is merged in reverse). Checked against PyYAML 6.0. eff holds the result
 * with each key once, at its last position. */
static bool is_merge_key(const struct vf_yaml_node *k)
{
	return k->type == N_SCALAR && k->style == YAML_PLAIN_SCALAR_STYLE && strcmp(k->value, "<<") == 0;
}

/* A key node compared as PyYAML's constructor would tell keys apart: a
 * scalar by its text, any other node by identity (aliases followed). */
struct keyref {
	const struct vf_yaml_node *k;
	size_t i;
};

static const struct vf_yaml_node *key_of(const struct vf_yaml_node *k)
{
	return k->type == N_ALIAS ? k->target : k;
}

static int key_cmp(const struct vf_yaml_node *p, const struct vf_yaml_node *q)
{
	bool ps = p->type == N_SCALAR, qs = q->type == N_SCALAR;
	if (ps != qs)
		return ps ? -1 : 1;
	if (ps)
		return strcmp(p->value, q->value);
	return p == q ? 0 : (uintptr_t)p < (uintptr_t)q ? -1 : 1;
}

static int keyref_cmp(const void *a, const void *b)
{
	const struct keyref *x = a, *y = b;
	int c = key_cmp(key_of(x->k), key_of(y->k));
	return c ? c : x->i < y->i ? -1 : x->i > y->i;
}

/* Sorted references to the keys of the pairs in v[0..n) (key, value,
 * key, value...). Caller frees; NULL when out of memory. */
static struct keyref *sorted_keys(struct vf_yaml_node *const *v, size_t n)
{
	struct keyref *r = malloc((n / 2 + 1) * sizeof *r);
	if (!r)
		return NULL;
	for (size_t i = 0; i + 1 < n; i += 2)
		r[i / 2] = (struct keyref){v[i], i / 2};
	qsort(r, n / 2, sizeof *r, keyref_cmp);
	return r;
}

/* True when mapping m names a key (other than <<) twice among its own
 * entries; *oom when that could not be told. */
static bool has_dup_keys(const struct vf_yaml_node *m, bool *oom)
{
	struct keyref *r = sorted_keys(m->items, m->n);
	if (!r)
		return *oom = true, false;
	bool dup = false;
	for (size_t i = 1; i < m->n / 2 && !dup; i++)
		dup = key_cmp(key_of(r[i - 1].k), key_of(r[i].k)) == 0 && !is_merge_key(r[i].k);
	free(r);
	return dup;
}

struct pairs {
	struct vf_yaml_node **v;
	size_t n, alloc;
};

static bool pairs_push(struct pairs *p, struct vf_yaml_node *k, struct vf_yaml_node *v)
{
	if (p->n + 2 > p->alloc) {
		size_t na = p->alloc ? p->alloc * 2 : 16;
		struct vf_yaml_node **nv = realloc(p->v, na * sizeof *nv);
		if (!nv)
			return false;
		p->v = nv;
		p->alloc = na;
	}
	p->v[p->n++] = k;
	p->v[p->n++] = v;
	return true;
}

static vf_status flatten(struct vf_yaml_node *m, const char *name, size_t *budget, int depth,
			 struct vf_error *err);

/* Append the entries of merge source src (a mapping) to p. */
static vf_status merge_from(struct pairs *p, struct vf_yaml_node *src, const char *name, size_t *budget,
			    int depth, struct vf_error *err)
{
	src = src && src->type == N_ALIAS ? src->target : src;
	if (!src || src->type != N_MAP)
		return vf_error_set(err, VF_ERR, "%s:%zu: a merge key (<<) takes a mapping or a list of mappings",
				    name, src ? src->line : 0);
	vf_status st = flatten(src, name, budget, depth + 1, err);
	if (st != VF_OK)
		return st;
	struct vf_yaml_node **it = src->eff ? src->eff : src->items;
	size_t n = src->eff ? src->neff : src->n;
	if (n / 2 > *budget)
		return vf_error_set(err, VF_ERR, "%s:%zu: merge keys expand past %d entries", name, src->line,
				    VF_YAMLDOC_MAX_NODES);
	*budget -= n / 2;
	for (size_t i = 0; i + 1 < n; i += 2)
		if (!pairs_push(p, it[i], it[i + 1]))
			return vf_error_set(err, VF_ENOMEM, "%s: out of memory", name);
	return VF_OK;
}

static vf_status flatten(struct vf_yaml_node *m, const char *name, size_t *budget, int depth,
			 struct vf_error *err)
{
	if (m->merge_state == 2)
		return VF_OK;
	if (m->merge_state == 1 || depth > VF_YAMLDOC_MAX_DEPTH)
		return vf_error_set(err, VF_ERR, "%s:%zu: a merge key (<<) includes its own mapping", name, m->line);
	/* a merge key, or a key set twice (PyYAML keeps its last value) */
	bool any = false, nomem = false;
	for (size_t i = 0; i + 1 < m->n && !any; i += 2)
		any = is_merge_key(m->items[i]);
	if (!any)
		any = has_dup_keys(m, &nomem);
	if (nomem)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", name);
	if (!any) {
		m->merge_state = 2;
		return VF_OK;
	}
	m->merge_state = 1;
	struct pairs p = {0};
	vf_status st = VF_OK;
	for (size_t i = 0; i + 1 < m->n && st == VF_OK; i += 2) {
		if (!is_merge_key(m->items[i]))
			continue;
		struct vf_yaml_node *v = m->items[i + 1]->type == N_ALIAS ? m->items[i + 1]->target : m->items[i + 1];
		if (v->type == N_SEQ)
			for (size_t j = v->n; j-- > 0 && st == VF_OK;) /* reversed: the first wins */
				st = merge_from(&p, v->items[j], name, budget, depth, err);
		else
			st = merge_from(&p, v, name, budget, depth, err);
	}
	for (size_t i = 0; i + 1 < m->n && st == VF_OK; i += 2)
		if (!is_merge_key(m->items[i]) && !pairs_push(&p, m->items[i], m->items[i + 1]))
			st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", name);
	if (st != VF_OK) {
		free(p.v);
		return st;
	}
	/* keep each key's last occurrence only (sorted: n log n, not n^2) */
	struct keyref *r = sorted_keys(p.v, p.n);
	if (!r) {
		free(p.v);
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", name);
	}
	for (size_t i = 0; i + 1 < p.n / 2; i++)
		if (key_cmp(key_of(r[i].k), key_of(r[i + 1].k)) == 0)
			p.v[2 * r[i].i] = NULL; /* a later entry has this key */
	free(r);
	size_t o = 0;
	for (size_t i = 0; i + 1 < p.n; i += 2)
		if (p.v[i]) {
			p.v[o++] = p.v[i];
			p.v[o++] = p.v[i + 1];
		}
	m->eff = p.v;
	m->neff = o;
	m->merge_state = 2;
	return VF_OK;
}

static vf_status flatten_all(struct tree *t, const char *name, struct vf_error *err)
{
	size_t budget = VF_YAMLDOC_MAX_NODES;
	for (size_t i = 0; i < t->nnodes; i++) {
		vf_status st = t->nodes[i]->type == N_MAP ? flatten(t->nodes[i], name, &budget, 0, err) : VF_OK;
		if (st != VF_OK)
			return st;
	}
	return VF_OK;
}

/* The state of one build: the tree, the open collections, the anchors. */
struct builder {
	struct tree *t;
	const char *text, *name;
	size_t base; /* bytes of a UTF-8 byte order mark */
	struct cursor cur;
	struct vf_yaml_node *stack[VF_YAMLDOC_MAX_DEPTH];
	int sp;
	struct anchor *anchors;
	size_t nanchors, aanchors, naliases;
	int ndocs;
	struct vf_error *err;
};

static vf_status oom(const struct builder *b)
{
	return vf_error_set(b->err, VF_ENOMEM, "%s: out of memory", b->name);
}

/* A scalar event into n; *anchor its anchor, if any. */
static vf_status build_scalar(struct builder *b, const yaml_event_t *e, struct vf_yaml_node *n,
			      const char **anchor)
{
	const char *text = b->text;
	n->type = N_SCALAR;
	n->style = e->data.scalar.style;
	n->vlen = e->data.scalar.length;
	n->value = malloc(n->vlen + 1);
	if (!n->value)
		return oom(b);
	memcpy(n->value, e->data.scalar.value, n->vlen);
	n->value[n->vlen] = '\0';
	bool str_tag = e->data.scalar.tag && strcmp((const char *)e->data.scalar.tag, YAML_STR_TAG) == 0;
	/* A block scalar's end mark lies past its trailing line
	 * breaks (on the next line): end it at its last content
	 * byte so a splice keeps the following lines intact. */
	if (n->style == YAML_LITERAL_SCALAR_STYLE || n->style == YAML_FOLDED_SCALAR_STYLE)
		while (n->end > n->start && (text[n->end - 1] == '\n' || text[n->end - 1] == '\r' ||
					     text[n->end - 1] == ' ' || text[n->end - 1] == '\t'))
			n->end--;
	n->kind = (n->style == YAML_PLAIN_SCALAR_STYLE && !str_tag) ? resolve_plain(n->value) : VF_YAML_STR;
	*anchor = (const char *)e->data.scalar.anchor;
	return VF_OK;
}

/* An alias event into n: its target, the latest anchor of its name. */
static vf_status build_alias(struct builder *b, const yaml_event_t *e, struct vf_yaml_node *n)
{
	n->type = N_ALIAS;
	if (++b->naliases > VF_YAMLDOC_MAX_ALIASES)
		return vf_error_set(b->err, VF_ERR, "%s:%zu: more than %d YAML aliases (refusing a possible alias bomb)",
				    b->name, n->line, VF_YAMLDOC_MAX_ALIASES);
	const char *a = (const char *)e->data.alias.anchor;
	for (size_t i = b->nanchors; i-- > 0;)
		if (strcmp(b->anchors[i].name, a) == 0) {
			n->target = b->anchors[i].node;
			break;
		}
	if (!n->target)
		return vf_error_set(b->err, VF_ERR, "%s:%zu: unknown alias *%s", b->name, n->line, a);
	return VF_OK;
}

/* A sequence or mapping start event into n; *anchor its anchor, if any. */
static void build_collection(const yaml_event_t *e, struct vf_yaml_node *n, const char **anchor)
{
	bool seq = e->type == YAML_SEQUENCE_START_EVENT;
	n->type = seq ? N_SEQ : N_MAP;
	n->kind = seq ? VF_YAML_SEQ : VF_YAML_MAP;
	n->flow = seq ? e->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE
		      : e->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE;
	*anchor = seq ? (const char *)e->data.sequence_start.anchor : (const char *)e->data.mapping_start.anchor;
}

/* Remember node n under anchor name. */
static vf_status build_anchor(struct builder *b, const char *anchor, struct vf_yaml_node *n)
{
	n->anchored = true;
	free(n->anchor);
	n->anchor = strdup(anchor);
	if (!n->anchor)
		return oom(b);
	if (b->nanchors == b->aanchors) {
		size_t na = b->aanchors ? b->aanchors * 2 : 8;
		struct anchor *an = realloc(b->anchors, na * sizeof *an);
		if (!an)
			return oom(b);
		b->anchors = an;
		b->aanchors = na;
	}
	b->anchors[b->nanchors].name = strdup(anchor);
	b->anchors[b->nanchors].node = n;
	if (!b->anchors[b->nanchors].name)
		return oom(b);
	b->nanchors++;
	return VF_OK;
}

/* Node n into the open collection (or as the root); a collection opens. */
static vf_status build_attach(struct builder *b, struct vf_yaml_node *n)
{
	if (b->sp > 0) {
		if (!node_push(b->stack[b->sp - 1], n))
			return oom(b);
	} else {
		b->t->root = n;
	}
	if (n->type == N_SEQ || n->type == N_MAP) {
		if (b->sp >= VF_YAMLDOC_MAX_DEPTH)
			return vf_error_set(b->err, VF_ERR, "%s:%zu: nesting deeper than %d levels", b->name, n->line,
					    VF_YAMLDOC_MAX_DEPTH);
		b->stack[b->sp++] = n;
	}
	return VF_OK;
}

/* A node event (scalar, alias, sequence or mapping start). */
static vf_status build_node(struct builder *b, const yaml_event_t *e)
{
	if (b->t->nnodes >= VF_YAMLDOC_MAX_NODES)
		return vf_error_set(b->err, VF_ERR, "%s:%zu: more than %d YAML nodes", b->name,
				    e->start_mark.line + 1, VF_YAMLDOC_MAX_NODES);
	struct vf_yaml_node *n = tree_new(b->t);
	if (!n)
		return oom(b);
	n->start = b->base + cursor_to(&b->cur, e->start_mark.index);
	n->end = b->base + cursor_to(&b->cur, e->end_mark.index);
	n->line = e->start_mark.line + 1;
	n->col = e->start_mark.column;
	const char *anchor = NULL;
	vf_status st = VF_OK;
	if (e->type == YAML_SCALAR_EVENT)
		st = build_scalar(b, e, n, &anchor);
	else if (e->type == YAML_ALIAS_EVENT)
		st = build_alias(b, e, n);
	else
		build_collection(e, n, &anchor);
	if (st == VF_OK && anchor)
		st = build_anchor(b, anchor, n);
	return st == VF_OK ? build_attach(b, n) : st;
}

/* A sequence or mapping end event: the collection's extent. */
static void build_close(struct builder *b, const yaml_event_t *e)
{
	if (b->sp <= 0)
		return;
	struct vf_yaml_node *n = b->stack[--b->sp];
	if (n->flow)
		n->end = b->base + cursor_to(&b->cur, e->end_mark.index);
	else
		n->end = n->n ? node_end(n->items[n->n - 1]) : n->start;
	if (!n->flow && n->type == N_MAP && n->n >= 1) {
		n->start = n->start < n->items[0]->start ? n->start : n->items[0]->start;
	}
}

/* One parser event; *done at the end of the stream. */
static vf_status build_event(struct builder *b, const yaml_event_t *e, bool *done)
{
	switch (e->type) {
	case YAML_STREAM_END_EVENT:
		*done = true;
		return VF_OK;
	case YAML_DOCUMENT_START_EVENT:
		if (++b->ndocs > 1)
			return vf_error_set(b->err, VF_ERR, "%s:%zu: more than one YAML document (expected one)",
					    b->name, e->start_mark.line + 1);
		return VF_OK;
	case YAML_SCALAR_EVENT:
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
	case YAML_ALIAS_EVENT:
		return build_node(b, e);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		build_close(b, e);
		return VF_OK;
	default:
		return VF_OK;
	}
}

/* Indentation step: the first block mapping nested in a block mapping
 * (2 when there is none). */
static int indent_step(const struct tree *t)
{
	for (size_t i = 0; i < t->nnodes; i++) {
		const struct vf_yaml_node *m = t->nodes[i];
		if (m->type != N_MAP || m->flow || m->n < 2)
			continue;
		for (size_t k = 1; k < m->n; k += 2) {
			const struct vf_yaml_node *v = m->items[k];
			if (v->type == N_MAP && !v->flow && v->n >= 2 && v->items[0]->col > m->items[0]->col) {
				int step = (int)(v->items[0]->col - m->items[0]->col);
				if (step)
					return step;
				break;
			}
		}
	}
	return 2;
}

/* The bytes of a UTF-8 byte order mark at the start of text into *base;
 * a document over the size limit or in UTF-16 is an error. */
static vf_status build_check(const char *text, size_t len, const char *name, size_t *base, struct vf_error *err)
{
	*base = 0;
	if (len > VF_YAMLDOC_MAX_BYTES)
		return vf_error_set(err, VF_ERR, "%s: document is %zu bytes, over the limit of %u bytes", name, len,
				    VF_YAMLDOC_MAX_BYTES);
	if (len >= 2 && (((unsigned char)text[0] == 0xFE && (unsigned char)text[1] == 0xFF) ||
			 ((unsigned char)text[0] == 0xFF && (unsigned char)text[1] == 0xFE)))
		return vf_error_set(err, VF_ERR, "%s: UTF-16 YAML is not supported (expected UTF-8)", name);
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		*base = 3;
	return VF_OK;
}

/* Build the tree of text. On failure t is released. */
static vf_status build(const char *text, size_t len, const char *name, struct tree *t,
		       struct vf_error *err)
{
	memset(t, 0, sizeof *t);
	t->step = 0;
	size_t base;
	vf_status st = build_check(text, len, name, &base, err);
	if (st != VF_OK)
		return st;

	yaml_parser_t p;
	if (!yaml_parser_initialize(&p))
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", name);
	yaml_parser_set_input_string(&p, (const unsigned char *)text + base, len - base);
	yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);

	struct builder b = {.t = t, .text = text, .name = name, .base = base, .err = err};
	b.cur = (struct cursor){(const unsigned char *)text + base, len - base, 0, 0};
	bool done = false;
	while (!done && st == VF_OK) {
		yaml_event_t e;
		if (!yaml_parser_parse(&p, &e)) {
			st = parser_error(&p, name, err);
			break;
		}
		st = build_event(&b, &e, &done);
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&p);
	for (size_t i = 0; i < b.nanchors; i++)
		free(b.anchors[i].name);
	free(b.anchors);
	if (st == VF_OK)
		st = flatten_all(t, name, err);
	if (st != VF_OK) {
		tree_release(t);
		return st;
	}
	t->step = indent_step(t);
	return VF_OK;
}

/* ---- documents ---------------------------------------------------------- */

static bool detect_crlf(const char *text, size_t len)
{
	const char *nl = memchr(text, '\n', len);
	return nl && nl > text && nl[-1] == '\r';
}

vf_status vf_yamldoc_load_mem(const char *text, size_t len, const char *name,
			      struct vf_yamldoc **out, struct vf_error *err)
{
	*out = NULL;
	if (!name)
		name = "<yaml>";
	if (len > VF_YAMLDOC_MAX_BYTES)
		return vf_error_set(err, VF_ERR, "%s: document is %zu bytes, over the limit of %u bytes",
				    name, len, VF_YAMLDOC_MAX_BYTES);
	struct vf_yamldoc *d = calloc(1, sizeof *d);
	if (!d)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", name);
	d->text = malloc(len + 1);
	d->name = strdup(name);
	if (!d->text || !d->name) {
		vf_yamldoc_free(d);
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", name);
	}
	memcpy(d->text, text, len);
	d->text[len] = '\0';
	d->len = len;
	d->crlf = detect_crlf(text, len);
	vf_status st = build(d->text, d->len, d->name, &d->t, err);
	if (st != VF_OK) {
		vf_yamldoc_free(d);
		return st;
	}
	*out = d;
	return VF_OK;
}

vf_status vf_yamldoc_load_file(const char *path, struct vf_yamldoc **out, struct vf_error *err)
{
	*out = NULL;
	struct vf_buf b;
	vf_buf_init(&b, VF_YAMLDOC_MAX_BYTES);
	vf_status st = vf_buf_read_file(&b, path, VF_YAMLDOC_MAX_BYTES, err);
	if (st == VF_OK)
		st = vf_yamldoc_load_mem(b.data ? b.data : "", b.len, path, out, err);
	vf_buf_release(&b);
	return st;
}

void vf_yamldoc_free(struct vf_yamldoc *doc)
{
	if (!doc)
		return;
	tree_release(&doc->t);
	free(doc->text);
	free(doc->name);
	free(doc);
}

const char *vf_yamldoc_text(const struct vf_yamldoc *doc, size_t *len)
{
	if (len)
		*len = doc->len;
	return doc->text;
}

const char *vf_yamldoc_name(const struct vf_yamldoc *doc)
{
	return doc->name;
}

bool vf_yamldoc_crlf(const struct vf_yamldoc *doc)
{
	return doc->crlf;
}

vf_status vf_yamldoc_save(const struct vf_yamldoc *doc, const char *path, struct vf_error *err)
{
	return vf_write_file_atomic(path, doc->text, doc->len, err);
}

/* ---- lookup ------------------------------------------------------------- */

static const struct vf_yaml_node *deref(const struct vf_yaml_node *n)
{
	return n && n->type == N_ALIAS ? n->target : n;
}

/* The child slot of n named by seg (seg_len bytes), or NULL. Slots are
 * unresolved (an alias stays an alias). */
static struct vf_yaml_node *child_slot(const struct vf_yaml_node *n, const char *seg, size_t seg_len)
{
	n = deref(n);
	if (!n)
		return NULL;
	if (n->type == N_MAP) {
		struct vf_yaml_node *const *it = n->eff ? n->eff : n->items;
		size_t cnt = n->eff ? n->neff : n->n;
		for (size_t i = 0; i + 1 < cnt; i += 2) {
			const struct vf_yaml_node *k = deref(it[i]);
			if (k->type == N_SCALAR && k->vlen == seg_len && memcmp(k->value, seg, seg_len) == 0)
				return it[i + 1];
		}
		return NULL;
	}
	if (n->type == N_SEQ) {
		if (seg_len == 0 || seg_len > 9)
			return NULL;
		size_t idx = 0;
		for (size_t i = 0; i < seg_len; i++) {
			if (seg[i] < '0' || seg[i] > '9')
				return NULL;
			idx = idx * 10 + (size_t)(seg[i] - '0');
		}
		return idx < n->n ? n->items[idx] : NULL;
	}
	return NULL;
}

struct walk {
	struct vf_yaml_node *slot;   /* deepest slot found (unresolved); NULL = root absent */
	struct vf_yaml_node *parent; /* mapping holding slot (resolved), or NULL for the root */
	size_t found;                /* segments found */
	bool merged;                 /* a segment was found through a merge key */
	size_t dup_seg;              /* first segment whose key its mapping sets twice, or SIZE_MAX */
	size_t dup_count;            /* how many times */
	size_t dup_lines[4];         /* the first lines of them; dup_last the last */
	size_t dup_last;
	size_t alias_seg;            /* first segment whose value is an alias walked into, or SIZE_MAX */
	struct vf_yaml_node *alias;  /* that alias */
	size_t nseg;
	const char *seg[64];
	size_t seglen[64];
};

static bool split_path(const char *path, struct walk *w)
{
	w->nseg = 0;
	if (!*path)
		return true;
	const char *p = path;
	for (;;) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		if (l == 0 || w->nseg >= 64)
			return false;
		w->seg[w->nseg] = p;
		w->seglen[w->nseg] = l;
		w->nseg++;
		if (!dot)
			return true;
		p = dot + 1;
	}
}

/* Segment i was found in mapping m: note it when m's own entries set that
 * key more than once. */
static void note_dup(struct walk *w, size_t i, const struct vf_yaml_node *m)
{
	if (w->dup_seg != SIZE_MAX || m->type != N_MAP)
		return;
	size_t count = 0, last = 0;
	for (size_t k = 0; k + 1 < m->n; k += 2) {
		const struct vf_yaml_node *key = deref(m->items[k]);
		if (key->type != N_SCALAR || key->vlen != w->seglen[i] || memcmp(key->value, w->seg[i], key->vlen))
			continue;
		if (count < 4)
			w->dup_lines[count] = m->items[k]->line;
		count++;
		last = m->items[k]->line;
	}
	if (count > 1) {
		w->dup_seg = i;
		w->dup_count = count;
		w->dup_last = last;
	}
}

static void walk_tree(const struct tree *t, struct walk *w)
{
	w->slot = t->root;
	w->parent = NULL;
	w->found = 0;
	w->merged = false;
	w->dup_seg = w->alias_seg = SIZE_MAX;
	w->dup_count = 0;
	w->alias = NULL;
	if (!t->root)
		return;
	for (size_t i = 0; i < w->nseg; i++) {
		if (i > 0 && w->slot->type == N_ALIAS && w->alias_seg == SIZE_MAX) {
			w->alias_seg = i - 1; /* descending into (or adding to) an alias */
			w->alias = w->slot;
		}
		struct vf_yaml_node *c = child_slot(w->slot, w->seg[i], w->seglen[i]);
		if (!c)
			return;
		w->parent = (struct vf_yaml_node *)deref(w->slot);
		note_dup(w, i, w->parent);
		bool own = false;
		for (size_t k = 1; k < w->parent->n && !own && w->parent->eff; k += 2)
			own = w->parent->items[k] == c;
		if (w->parent->eff && !own)
			w->merged = true;
		w->slot = c;
		w->found++;
	}
}

static const struct vf_yaml_node *find_in(const struct tree *t, const char *path)
{
	struct walk w;
	if (!split_path(path, &w))
		return NULL;
	walk_tree(t, &w);
	if (!t->root || w.found != w.nseg)
		return NULL;
	return deref(w.slot);
}

const struct vf_yaml_node *vf_yamldoc_find(const struct vf_yamldoc *doc, const char *path)
{
	return find_in(&doc->t, path);
}

const struct vf_yaml_node *vf_yamldoc_root(const struct vf_yamldoc *doc)
{
	return doc->t.root;
}

enum vf_yaml_kind vf_yaml_node_kind(const struct vf_yaml_node *n)
{
	n = deref(n);
	return n ? n->kind : VF_YAML_NULL;
}

const char *vf_yaml_kind_name(enum vf_yaml_kind k)
{
	switch (k) {
	case VF_YAML_NULL: return "null";
	case VF_YAML_BOOL: return "boolean";
	case VF_YAML_INT: return "integer";
	case VF_YAML_FLOAT: return "number";
	case VF_YAML_STR: return "string";
	case VF_YAML_SEQ: return "sequence";
	case VF_YAML_MAP: return "mapping";
	}
	return "?";
}

const char *vf_yaml_node_str(const struct vf_yaml_node *n)
{
	n = deref(n);
	return n && n->type == N_SCALAR ? n->value : NULL;
}

bool vf_yaml_node_bool(const struct vf_yaml_node *n, bool *out)
{
	n = deref(n);
	if (!n || n->kind != VF_YAML_BOOL)
		return false;
	*out = is_one_of(n->value, trues);
	return true;
}

bool vf_yaml_node_int(const struct vf_yaml_node *n, int64_t *out)
{
	n = deref(n);
	return n && n->kind == VF_YAML_INT && int_value(n->value, out);
}

bool vf_yaml_node_double(const struct vf_yaml_node *n, double *out)
{
	n = deref(n);
	if (!n)
		return false;
	int64_t i;
	double w;
	bool fits;
	if (n->kind == VF_YAML_INT && int_parse(n->value, &i, &w, &fits))
		return *out = fits ? (double)i : w, true;
	return n->kind == VF_YAML_FLOAT && float_value(n->value, out);
}

size_t vf_yaml_node_count(const struct vf_yaml_node *n)
{
	n = deref(n);
	if (!n)
		return 0;
	return n->type == N_MAP ? (n->eff ? n->neff : n->n) / 2 : n->type == N_SEQ ? n->n : 0;
}

const char *vf_yaml_node_key(const struct vf_yaml_node *n, size_t i)
{
	n = deref(n);
	if (!n || n->type != N_MAP || 2 * i + 1 >= (n->eff ? n->neff : n->n))
		return NULL;
	return vf_yaml_node_str((n->eff ? n->eff : n->items)[2 * i]);
}

const struct vf_yaml_node *vf_yaml_node_child(const struct vf_yaml_node *n, size_t i)
{
	n = deref(n);
	if (!n)
		return NULL;
	if (n->type == N_MAP)
		return 2 * i + 1 < (n->eff ? n->neff : n->n) ? deref((n->eff ? n->eff : n->items)[2 * i + 1]) : NULL;
	if (n->type == N_SEQ)
		return i < n->n ? deref(n->items[i]) : NULL;
	return NULL;
}

size_t vf_yaml_node_line(const struct vf_yaml_node *n)
{
	return n ? n->line : 0;
}

static cJSON *to_json(const struct vf_yaml_node *n, size_t *budget, int depth)
{
	n = deref(n);
	if (!n || *budget == 0 || depth > 2 * VF_YAMLDOC_MAX_DEPTH)
		return NULL;
	(*budget)--;
	switch (n->kind) {
	case VF_YAML_NULL:
		return cJSON_CreateNull();
	case VF_YAML_BOOL:
		return cJSON_CreateBool(is_one_of(n->value, trues));
	case VF_YAML_INT:
	case VF_YAML_FLOAT: {
		double d;
		if (vf_yaml_node_double(n, &d) && isfinite(d))
			return cJSON_CreateNumber(d);
		return cJSON_CreateString(n->value);
	}
	case VF_YAML_STR:
		return cJSON_CreateString(n->value);
	case VF_YAML_SEQ: {
		cJSON *a = cJSON_CreateArray();
		for (size_t i = 0; a && i < n->n; i++) {
			cJSON *c = to_json(n->items[i], budget, depth + 1);
			if (!c) {
				cJSON_Delete(a);
				return NULL;
			}
			cJSON_AddItemToArray(a, c);
		}
		return a;
	}
	case VF_YAML_MAP: {
		cJSON *o = cJSON_CreateObject();
		struct vf_yaml_node *const *it = n->eff ? n->eff : n->items;
		size_t cnt = n->eff ? n->neff : n->n;
		for (size_t i = 0; o && i + 1 < cnt; i += 2) {
			const char *k = vf_yaml_node_str(it[i]);
			cJSON *c = to_json(it[i + 1], budget, depth + 1);
			if (!c) {
				cJSON_Delete(o);
				return NULL;
			}
			cJSON_AddItemToObject(o, k ? k : "?", c);
		}
		return o;
	}
	}
	return NULL;
}

cJSON *vf_yaml_node_to_json(const struct vf_yaml_node *n)
{
	size_t budget = VF_YAMLDOC_MAX_NODES;
	return to_json(n, &budget, 0);
}

static vf_status get_node(const struct vf_yamldoc *doc, const char *path,
			  const struct vf_yaml_node **n, struct vf_error *err)
{
	*n = vf_yamldoc_find(doc, path);
	if (!*n)
		return vf_error_set(err, VF_ENOTFOUND, "%s: key %s: not found", doc->name, path);
	return VF_OK;
}

vf_status vf_yamldoc_get_str(const struct vf_yamldoc *doc, const char *path, const char **out,
			     struct vf_error *err)
{
	const struct vf_yaml_node *n;
	vf_status st = get_node(doc, path, &n, err);
	if (st)
		return st;
	if (n->kind != VF_YAML_STR)
		return vf_error_set(err, VF_ERR, "%s:%zu: key %s: expected a string, found %s",
				    doc->name, n->line, path, vf_yaml_kind_name(n->kind));
	*out = n->value;
	return VF_OK;
}

vf_status vf_yamldoc_get_int(const struct vf_yamldoc *doc, const char *path, int64_t *out,
			     struct vf_error *err)
{
	const struct vf_yaml_node *n;
	vf_status st = get_node(doc, path, &n, err);
	if (st)
		return st;
	if (!vf_yaml_node_int(n, out))
		return vf_error_set(err, VF_ERR, "%s:%zu: key %s: expected an integer, found %s",
				    doc->name, n->line, path, vf_yaml_kind_name(n->kind));
	return VF_OK;
}

vf_status vf_yamldoc_get_bool(const struct vf_yamldoc *doc, const char *path, bool *out,
			      struct vf_error *err)
{
	const struct vf_yaml_node *n;
	vf_status st = get_node(doc, path, &n, err);
	if (st)
		return st;
	if (!vf_yaml_node_bool(n, out))
		return vf_error_set(err, VF_ERR, "%s:%zu: key %s: expected true or false, found %s",
				    doc->name, n->line, path, vf_yaml_kind_name(n->kind));
	return VF_OK;
}

/* ---- patching ----------------------------------------------------------- */

/* Quote s in YAML double-quoted style ('"') or single-quoted ('\''). */
static vf_status quote(struct vf_buf *b, const char *s, char q, struct vf_error *err)
{
	vf_status st = vf_buf_append(b, &q, 1, err);
	for (; *s && st == VF_OK; s++) {
		unsigned char c = (unsigned char)*s;
		if (q == '\'') {
			st = c == '\'' ? vf_buf_puts(b, "''", err) : vf_buf_append(b, s, 1, err);
		} else if (c == '"' || c == '\\') {
			char esc[2] = {'\\', (char)c};
			st = vf_buf_append(b, esc, 2, err);
		} else if (c < 0x20) {
			st = vf_buf_printf(b, err, "\\x%02x", c);
		} else {
			st = vf_buf_append(b, s, 1, err);
		}
	}
	if (st == VF_OK)
		st = vf_buf_append(b, &q, 1, err);
	return st;
}

/* Start of the line after the one holding byte pos (pos itself when it
 * already starts a line), or the end of the text. */
static size_t after_line(const char *text, size_t len, size_t pos)
{
	if (pos > 0 && pos <= len && text[pos - 1] == '\n')
		return pos;
	const char *nl = memchr(text + pos, '\n', len - pos);
	return nl ? (size_t)(nl - text) + 1 : len;
}

/* Replace [start, end) of doc's text with ins, re-parse, and check that path
 * reads back as expect. On success the document takes the new text. */
static vf_status try_commit(struct vf_yamldoc *doc, size_t start, size_t end, const char *ins,
			    size_t ins_len, const char *path, const cJSON *expect,
			    struct vf_error *err)
{
	size_t nlen = doc->len - (end - start) + ins_len;
	if (nlen > VF_YAMLDOC_MAX_BYTES)
		return vf_error_set(err, VF_ERR, "%s: document would exceed %u bytes", doc->name,
				    VF_YAMLDOC_MAX_BYTES);
	char *nt = malloc(nlen + 1);
	if (!nt)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", doc->name);
	memcpy(nt, doc->text, start);
	memcpy(nt + start, ins, ins_len);
	memcpy(nt + start + ins_len, doc->text + end, doc->len - end);
	nt[nlen] = '\0';
	struct tree t;
	vf_status st = build(nt, nlen, doc->name, &t, err);
	if (st != VF_OK) {
		free(nt);
		return vf_error_prefix(err, "setting it would make the document invalid");
	}
	const struct vf_yaml_node *n = find_in(&t, path);
	cJSON *got = n ? vf_yaml_node_to_json(n) : NULL;
	bool same = got && cJSON_Compare(got, expect, true);
	cJSON_Delete(got);
	if (!same) {
		tree_release(&t);
		free(nt);
		return vf_error_set(err, VF_ERR, "%s: key %s: the new value does not read back as written",
				    doc->name, path);
	}
	tree_release(&doc->t);
	free(doc->text);
	doc->t = t;
	doc->text = nt;
	doc->len = nlen;
	return VF_OK;
}

static bool is_quoted(const struct vf_yaml_node *n)
{
	return n->type == N_SCALAR &&
	       (n->style == YAML_SINGLE_QUOTED_SCALAR_STYLE || n->style == YAML_DOUBLE_QUOTED_SCALAR_STYLE);
}

/* The text to insert for segments [k, nseg) under a block mapping whose keys
 * sit at column col (value = v). */
static vf_status block_insert_text(struct vf_buf *b, const struct walk *w, size_t k, size_t col,
				   int step, const char *v, const char *eol, struct vf_error *err)
{
	vf_status st = VF_OK;
	for (size_t i = k; i < w->nseg && st == VF_OK; i++) {
		size_t ind = col + (i - k) * (size_t)step;
		for (size_t s = 0; s < ind && st == VF_OK; s++)
			st = vf_buf_append(b, " ", 1, err);
		if (st == VF_OK)
			st = vf_buf_append(b, w->seg[i], w->seglen[i], err);
		if (st == VF_OK)
			st = vf_buf_puts(b, ":", err);
		if (st == VF_OK && i + 1 == w->nseg)
			st = vf_buf_printf(b, err, " %s", v);
		if (st == VF_OK)
			st = vf_buf_puts(b, eol, err);
	}
	return st;
}

static vf_status flow_insert_text(struct vf_buf *b, const struct walk *w, size_t k, const char *v,
				  struct vf_error *err)
{
	vf_status st = VF_OK;
	for (size_t i = k; i < w->nseg && st == VF_OK; i++) {
		if (i > k)
			st = vf_buf_puts(b, "{", err);
		if (st == VF_OK)
			st = vf_buf_append(b, w->seg[i], w->seglen[i], err);
		if (st == VF_OK)
			st = vf_buf_puts(b, ": ", err);
	}
	if (st == VF_OK)
		st = vf_buf_puts(b, v, err);
	for (size_t i = k + 1; i < w->nseg && st == VF_OK; i++)
		st = vf_buf_puts(b, "}", err);
	return st;
}

/* ---- keys that share a value -------------------------------------------- */

/* Append to b the dotted path from `from` down to target over the nodes'
 * own entries (aliases not followed); when target is merged by a merge key
 * (<<: *a, <<: [*a, ...]) the path ends at the mapping that merges it. */
static bool path_to(const struct vf_yaml_node *from, const struct vf_yaml_node *target, struct vf_buf *b,
		    int depth)
{
	if (from == target)
		return true;
	if (!from || depth > VF_YAMLDOC_MAX_DEPTH || (from->type != N_MAP && from->type != N_SEQ))
		return false;
	size_t mark = b->len;
	bool map = from->type == N_MAP;
	for (size_t i = map ? 1 : 0; i < from->n; i += map ? 2 : 1) {
		const struct vf_yaml_node *v = from->items[i];
		if (map && is_merge_key(from->items[i - 1])) {
			bool in = v == target;
			for (size_t j = 0; v->type == N_SEQ && j < v->n && !in; j++)
				in = v->items[j] == target;
			if (in)
				return true;
			continue;
		}
		const char *k = map ? vf_yaml_node_str(from->items[i - 1]) : NULL;
		vf_status st = mark ? vf_buf_puts(b, ".", NULL) : VF_OK;
		if (st == VF_OK)
			st = map ? vf_buf_puts(b, k ? k : "?", NULL) : vf_buf_printf(b, NULL, "%zu", i);
		if (st == VF_OK && path_to(v, target, b, depth + 1))
			return true;
		b->len = mark;
		if (b->data)
			b->data[mark] = '\0';
	}
	return false;
}

/* Segments [from, to) of the walk's path, dotted, after a dot when b is
 * not empty. */
static void put_segs(struct vf_buf *b, const struct walk *w, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		if (b->len)
			vf_buf_puts(b, ".", NULL);
		vf_buf_append(b, w->seg[i], w->seglen[i], NULL);
	}
}

/* Into out, comma-separated: the keys other than the walk's own that reach
 * the anchored node a - its own place and each alias of it - followed by the
 * walk's segments after segment `after`, where that key reads the same node
 * `changed` the walk's found segments read (at most 6). */
static void anchor_users(const struct tree *t, const struct vf_yaml_node *a, const struct walk *w,
			 size_t after, const struct vf_yaml_node *changed, struct vf_buf *out)
{
	struct vf_buf own, p, shown;
	vf_buf_init(&own, 0);
	vf_buf_init(&p, 0);
	vf_buf_init(&shown, 0);
	put_segs(&own, w, 0, w->nseg);
	size_t n = 0;
	for (size_t i = 0; i <= t->nnodes && n < 6; i++) {
		/* the anchor's own place first, then its aliases in order */
		const struct vf_yaml_node *c = i == 0 ? a : t->nodes[i - 1];
		if (i > 0 && (c->type != N_ALIAS || c->target != a))
			continue;
		vf_buf_reset(&p);
		if (!path_to(t->root, c, &p, 0))
			continue;
		put_segs(&p, w, after, w->found);
		if (find_in(t, p.data ? p.data : "") != changed)
			continue;
		put_segs(&p, w, w->found, w->nseg);
		const char *ps = p.data ? p.data : "";
		if (strcmp(ps, own.data ? own.data : "") == 0)
			continue;
		/* already listed? (out as ", a, b, " holds ", ps, ") */
		vf_buf_reset(&shown);
		vf_buf_printf(&shown, NULL, ", %s, ", out->data ? out->data : "");
		size_t pl = strlen(ps);
		bool listed = false;
		for (const char *q = shown.data; q && !listed && (q = strstr(q, ps)); q++)
			listed = q >= shown.data + 2 && q[-2] == ',' && q[-1] == ' ' && strncmp(q + pl, ", ", 2) == 0;
		if (listed)
			continue;
		vf_buf_printf(out, NULL, "%s%s", out->len ? ", " : "", ps);
		n++;
	}
	vf_buf_release(&own);
	vf_buf_release(&p);
	vf_buf_release(&shown);
}

/* A key on the walk's path is set twice in its mapping. */
static vf_status dup_error(const char *name, const struct walk *w, struct vf_error *err)
{
	struct vf_buf k, lines;
	vf_buf_init(&k, 0);
	vf_buf_init(&lines, 0);
	put_segs(&k, w, 0, w->dup_seg + 1);
	size_t shown = w->dup_count < 4 ? w->dup_count : 3;
	for (size_t i = 0; i + 1 < shown; i++)
		vf_buf_printf(&lines, NULL, "%s%zu", i ? ", " : "", w->dup_lines[i]);
	vf_buf_printf(&lines, NULL, "%s%s%zu", w->dup_count > shown + 1 ? ", ..." : "", " and ", w->dup_last);
	char times[32];
	if (w->dup_count == 2)
		snprintf(times, sizeof times, "twice");
	else
		snprintf(times, sizeof times, "%zu times", w->dup_count);
	vf_status st = vf_error_set(err, VF_ERR, "%s:%zu: %s is set %s (lines %s); PyYAML keeps the last; remove one",
				    name, w->dup_last, k.data ? k.data : "", times, lines.data ? lines.data : "");
	vf_buf_release(&k);
	vf_buf_release(&lines);
	return st;
}

vf_status vf_yamldoc_check_path(const struct vf_yamldoc *doc, const char *path, struct vf_error *err)
{
	struct walk w;
	if (!split_path(path, &w))
		return VF_OK;
	walk_tree(&doc->t, &w);
	return w.dup_seg != SIZE_MAX ? dup_error(doc->name, &w, err) : VF_OK;
}

/* The walk goes through an alias: a set there would edit the anchored node
 * every other alias of it reads too. */
static vf_status alias_error(const struct vf_yamldoc *doc, const char *path, const struct walk *w,
			     struct vf_error *err)
{
	const struct vf_yaml_node *a = w->alias->target;
	struct vf_buf users;
	vf_buf_init(&users, 0);
	anchor_users(&doc->t, a, w, w->alias_seg + 1, deref(w->slot), &users);
	vf_status st;
	if (users.len)
		st = vf_error_set(err, VF_ERR,
				  "%s:%zu: key %s goes through the alias *%s: setting it would also change %s "
				  "(anchor &%s, line %zu); edit it by hand",
				  doc->name, w->alias->line, path, a->anchor ? a->anchor : "?", users.data,
				  a->anchor ? a->anchor : "?", a->line);
	else
		st = vf_error_set(err, VF_ERR,
				  "%s:%zu: key %s goes through the alias *%s: setting it would edit the node "
				  "anchored &%s at line %zu; edit it by hand",
				  doc->name, w->alias->line, path, a->anchor ? a->anchor : "?",
				  a->anchor ? a->anchor : "?", a->line);
	vf_buf_release(&users);
	return st;
}

/* The value itself carries an anchor: other keys may read it. */
static vf_status anchored_error(const struct vf_yamldoc *doc, const char *path, const struct walk *w,
				struct vf_error *err)
{
	const struct vf_yaml_node *a = w->slot;
	struct vf_buf users;
	vf_buf_init(&users, 0);
	anchor_users(&doc->t, a, w, w->nseg, a, &users);
	vf_status st;
	if (users.len)
		st = vf_error_set(err, VF_ERR, "%s:%zu: key %s carries an anchor (&%s) that %s also read%s; edit it by hand",
				  doc->name, a->line, path, a->anchor ? a->anchor : "?", users.data,
				  strchr(users.data, ',') ? "" : "s");
	else
		st = vf_error_set(err, VF_ERR, "%s:%zu: key %s carries an anchor (&%s); edit it by hand", doc->name,
				  a->line, path, a->anchor ? a->anchor : "?");
	vf_buf_release(&users);
	return st;
}

/* Try one rendering v of the value at the place the walk found. */
/* Why a set along w may not edit the text: the key is set twice (the
 * trainer reads the other copy), the path goes through an alias or a merge
 * key, or the value is anchored (each would change other keys too). */
static vf_status set_refused(const struct vf_yamldoc *doc, const char *path, const struct walk *w,
			     struct vf_error *err)
{
	if (!doc->t.root)
		return VF_OK;
	if (w->dup_seg != SIZE_MAX)
		return dup_error(doc->name, w, err);
	if (w->alias)
		return alias_error(doc, path, w, err);
	if (w->merged)
		return vf_error_set(err, VF_ERR,
				    "%s: key %s comes from a merge key (<<: *anchor); set it in its own mapping by hand",
				    doc->name, path);
	if (w->found == w->nseg && w->slot->anchored)
		return anchored_error(doc, path, w, err);
	return VF_OK;
}

static vf_status set_with(struct vf_yamldoc *doc, const char *path, struct walk *w, const char *v,
			  const cJSON *expect, struct vf_error *err)
{
	vf_status st = set_refused(doc, path, w, err);
	if (st != VF_OK)
		return st;
	struct vf_buf b;
	vf_buf_init(&b, VF_YAMLDOC_MAX_BYTES);
	const char *eol = doc->crlf ? "\r\n" : "\n";
	size_t start, end;

	if (doc->t.root && w->found == w->nseg) {
		struct vf_yaml_node *slot = w->slot;
		start = slot->start;
		end = slot->end;
		if (start == end && start > 0 && doc->text[start - 1] != ' ' && doc->text[start - 1] != '\t')
			st = vf_buf_puts(&b, " ", err);
		if (st == VF_OK)
			st = vf_buf_puts(&b, v, err);
	} else if (!doc->t.root) {
		start = end = doc->len;
		if (doc->len > 0 && doc->text[doc->len - 1] != '\n')
			st = vf_buf_puts(&b, eol, err);
		if (st == VF_OK)
			st = block_insert_text(&b, w, 0, 0, doc->t.step, v, eol, err);
	} else {
		const struct vf_yaml_node *m = deref(w->slot);
		size_t k = w->found;
		if (m->type == N_MAP && m->flow) {
			start = end = m->end - 1;
			if (m->end == 0 || doc->text[start] != '}') {
				vf_buf_release(&b);
				return vf_error_set(err, VF_ERR, "%s:%zu: cannot add key %s to this mapping",
						    doc->name, m->line, path);
			}
			if (m->n > 0)
				st = vf_buf_puts(&b, ", ", err);
			if (st == VF_OK)
				st = flow_insert_text(&b, w, k, v, err);
		} else if (m->type == N_MAP && m->n >= 2) {
			start = end = after_line(doc->text, doc->len, m->end);
			if (start == doc->len && doc->len > 0 && doc->text[doc->len - 1] != '\n')
				st = vf_buf_puts(&b, eol, err);
			if (st == VF_OK)
				st = block_insert_text(&b, w, k, m->items[0]->col, doc->t.step, v, eol, err);
		} else if (m->type == N_SCALAR && m->kind == VF_YAML_NULL && m->start == m->end &&
			   w->parent && w->parent->type == N_MAP && !w->parent->flow && k > 0) {
			/* "parent:" with nothing after it: the new mapping goes below */
			start = end = after_line(doc->text, doc->len, m->start);
			if (start == doc->len && doc->len > 0 && doc->text[doc->len - 1] != '\n')
				st = vf_buf_puts(&b, eol, err);
			if (st == VF_OK)
				st = block_insert_text(&b, w, k, w->parent->items[0]->col + (size_t)doc->t.step,
						       doc->t.step, v, eol, err);
		} else {
			char where[256];
			size_t wl = k ? (size_t)(w->seg[k - 1] + w->seglen[k - 1] - w->seg[0]) : 0;
			snprintf(where, sizeof where, "%.*s", (int)wl, w->seg[0]);
			vf_buf_release(&b);
			return vf_error_set(err, VF_ERR, "%s:%zu: cannot add key %s: %s is not a mapping (found %s)",
					    doc->name, m->line, path, k ? where : "the document",
					    vf_yaml_kind_name(m->kind));
		}
	}
	if (st == VF_OK)
		st = try_commit(doc, start, end, b.data ? b.data : "", b.len, path, expect, err);
	vf_buf_release(&b);
	return st;
}

/* vf_yamldoc_set: the value on its own (*value, *vl: its white space
 * trimmed) - not empty, one line. */
static vf_status value_line(const struct vf_yamldoc *doc, const char *path, const char **value, size_t *vl,
			    struct vf_error *err)
{
	while (**value == ' ' || **value == '\t')
		(*value)++;
	size_t n = strlen(*value);
	while (n && ((*value)[n - 1] == ' ' || (*value)[n - 1] == '\t'))
		n--;
	if (n == 0)
		return vf_error_set(err, VF_EUSAGE, "%s: key %s: empty value (write null for none)",
				    doc->name, path);
	if (memchr(*value, '\n', n) || memchr(*value, '\r', n))
		return vf_error_set(err, VF_EUSAGE, "%s: key %s: the value must be one line", doc->name, path);
	*vl = n;
	return VF_OK;
}

vf_status vf_yamldoc_set(struct vf_yamldoc *doc, const char *path, const char *value,
			 struct vf_error *err)
{
	struct walk w;
	if (!split_path(path, &w) || w.nseg == 0)
		return vf_error_set(err, VF_EUSAGE, "%s: invalid key '%s' (expected a.b.c)", doc->name, path);
	/* The value on its own: one line, a scalar or a flow collection. */
	size_t vl = 0;
	vf_status st = value_line(doc, path, &value, &vl, err);
	if (st)
		return st;
	char *v = strndup(value, vl);
	if (!v)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	struct tree vt;
	st = build(v, vl, "value", &vt, err);
	if (st != VF_OK) {
		free(v);
		return vf_error_prefix(err, doc->name);
	}
	const struct vf_yaml_node *vr = vt.root;
	if (!vr || vr->type == N_ALIAS || vr->anchored ||
	    ((vr->type == N_MAP || vr->type == N_SEQ) && !vr->flow) ||
	    (vr->type == N_SCALAR && vr->style != YAML_PLAIN_SCALAR_STYLE &&
	     vr->style != YAML_SINGLE_QUOTED_SCALAR_STYLE && vr->style != YAML_DOUBLE_QUOTED_SCALAR_STYLE) ||
	    vr->end - vr->start != vl) {
		tree_release(&vt);
		free(v);
		return vf_error_set(err, VF_EUSAGE,
				    "%s: key %s: '%s' is not a YAML scalar or flow collection "
				    "(quote strings that contain ': ' or ' #')",
				    doc->name, path, value);
	}
	cJSON *expect = vf_yaml_node_to_json(vr);
	bool plain_str = vr->type == N_SCALAR && vr->style == YAML_PLAIN_SCALAR_STYLE &&
			 vr->kind == VF_YAML_STR;
	char *plain = plain_str ? strdup(vr->value) : NULL;
	tree_release(&vt);
	if (!expect || (plain_str && !plain)) {
		cJSON_Delete(expect);
		free(plain);
		free(v);
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	}

	walk_tree(&doc->t, &w);
	struct vf_buf q;
	vf_buf_init(&q, 0);
	const char *first = v;
	/* A quoted original keeps its quote style for a string. */
	if (plain_str && doc->t.root && w.found == w.nseg && is_quoted(w.slot)) {
		char qc = w.slot->style == YAML_SINGLE_QUOTED_SCALAR_STYLE ? '\'' : '"';
		st = quote(&q, plain, qc, err);
		first = q.data;
	}
	if (st == VF_OK)
		st = set_with(doc, path, &w, first, expect, err);
	if (st != VF_OK && st != VF_ENOMEM && plain_str && first == v) {
		/* A plain string that does not read back in place: double-quote it. */
		struct vf_error e2;
		vf_buf_reset(&q);
		if (quote(&q, plain, '"', &e2) == VF_OK) {
			walk_tree(&doc->t, &w);
			if (set_with(doc, path, &w, q.data, expect, &e2) == VF_OK) {
				vf_error_clear(err);
				st = VF_OK;
			}
		}
	}
	vf_buf_release(&q);
	cJSON_Delete(expect);
	free(plain);
	free(v);
	return st;
}

vf_status vf_yamldoc_set_all(struct vf_yamldoc *doc, const cJSON *set, struct vf_error *err)
{
	const cJSON *kv;
	cJSON_ArrayForEach(kv, set)
	{
		char *json = cJSON_IsString(kv) ? NULL : cJSON_PrintUnformatted(kv);
		const char *text = cJSON_IsString(kv) ? kv->valuestring : json;
		struct vf_error e = {0};
		vf_status st = text ? vf_yamldoc_set(doc, kv->string, text, &e)
				    : vf_error_set(&e, VF_ENOMEM, "out of memory");
		cJSON_free(json);
		if (st)
			return vf_error_set(err, st, "%s: %s", kv->string, e.msg);
	}
	return VF_OK;
}

vf_status vf_yamldoc_set_str(struct vf_yamldoc *doc, const char *path, const char *s,
			     struct vf_error *err)
{
	struct walk w;
	if (!split_path(path, &w) || w.nseg == 0)
		return vf_error_set(err, VF_EUSAGE, "%s: invalid key '%s' (expected a.b.c)", doc->name, path);
	if (strchr(s, '\n') || strchr(s, '\r'))
		return vf_error_set(err, VF_EUSAGE, "%s: key %s: the value must be one line", doc->name, path);
	cJSON *expect = cJSON_CreateString(s);
	if (!expect)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	walk_tree(&doc->t, &w);
	struct vf_buf q;
	vf_buf_init(&q, 0);
	vf_status st = VF_OK;
	bool quoted = doc->t.root && w.found == w.nseg && is_quoted(w.slot);
	if (quoted) {
		char qc = w.slot->style == YAML_SINGLE_QUOTED_SCALAR_STYLE ? '\'' : '"';
		st = quote(&q, s, qc, err);
		if (st == VF_OK)
			st = set_with(doc, path, &w, q.data, expect, err);
	} else {
		st = *s ? set_with(doc, path, &w, s, expect, err) : VF_ERR;
		if (st != VF_OK && st != VF_ENOMEM) {
			vf_buf_reset(&q);
			st = quote(&q, s, '"', err);
			walk_tree(&doc->t, &w);
			if (st == VF_OK)
				st = set_with(doc, path, &w, q.data, expect, err);
		}
	}
	vf_buf_release(&q);
	cJSON_Delete(expect);
	return st;
}
