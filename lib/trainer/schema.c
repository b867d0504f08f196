/* schema.c - read pydantic models from Python source, statically (see
 * schema.h). Three layers: logical lines (brackets, strings, comments and
 * continuations joined, indentation kept), tokens of one line, and the
 * resolution of names to classes, aliases and imports, done lazily from the
 * root class so that only what the schema reaches is built. Every allocation
 * lives in the schema's list and is freed with it. */
#include "vramfit/trainer/schema.h"
#include "vramfit/trainer/checkout.h" /* vf__fopen_regular */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_LINE (256u << 10)
#define MAX_TOKENS 8192

struct lline {
	size_t indent, line;
	char *text;
};

struct import {
	const char *local, *module, *name;
};

struct pymod {
	const char *name; /* dotted module name */
	const char *file; /* relative path, for messages */
	bool loaded;      /* false: not found or not readable */
	struct lline *lines;
	size_t nlines;
	struct import *imports;
	size_t nimports;
};

struct built {
	const struct pymod *mod;
	const char *name;
	struct vf_pymodel *model;
};

/* A name resolved in a module (aliases are parsed once: no blow-up). */
struct named {
	const struct pymod *mod;
	const char *name;
	struct vf_pytype *type; /* NULL: unknown, or being resolved (a cycle) */
};

struct vf_schema {
	void **allocs;
	size_t nallocs, aallocs;
	char dir[1024];
	const char *pkg_root; /* "src" or "" */
	struct pymod mods[VF_SCHEMA_MAX_MODULES];
	size_t nmods;
	struct built *built;
	size_t nbuilt, abuilt;
	struct named *names;
	size_t nnames, anames;
	struct vf_pymodel *root;
	bool oom;
	char syntax[512]; /* the first file that does not parse: "file:line: why" */
};

/* ---- memory --------------------------------------------------------------- */

static void *anew(struct vf_schema *s, size_t n)
{
	if (s->nallocs == s->aallocs) {
		size_t na = s->aallocs ? s->aallocs * 2 : 64;
		void **np = realloc(s->allocs, na * sizeof *np);
		if (!np) {
			s->oom = true;
			return NULL;
		}
		s->allocs = np;
		s->aallocs = na;
	}
	void *p = calloc(1, n ? n : 1);
	if (!p) {
		s->oom = true;
		return NULL;
	}
	s->allocs[s->nallocs++] = p;
	return p;
}

static char *adup(struct vf_schema *s, const char *p, size_t n)
{
	char *d = anew(s, n + 1);
	if (d)
		memcpy(d, p, n);
	return d;
}

/* Grow *arr (owned by s) to hold one more element of size sz. */
static void *agrow(struct vf_schema *s, void *arr, size_t *alloc, size_t n, size_t sz)
{
	if (n < *alloc)
		return arr;
	size_t na = *alloc ? *alloc * 2 : 8;
	void *np = anew(s, na * sz);
	if (!np)
		return NULL;
	if (arr)
		memcpy(np, arr, n * sz);
	*alloc = na;
	return np;
}

void vf_schema_free(struct vf_schema *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nallocs; i++)
		free(s->allocs[i]);
	free(s->allocs);
	free(s);
}

/* ---- logical lines --------------------------------------------------------- */

/* Copy a string literal starting at t[*i] into out; advance *i past it. */
static void copy_string(const char *t, size_t len, size_t *i, char *out, size_t *o)
{
	char q = t[*i];
	bool triple = *i + 2 < len && t[*i + 1] == q && t[*i + 2] == q;
	size_t qn = triple ? 3 : 1;
	for (size_t k = 0; k < qn; k++)
		out[(*o)++] = t[(*i)++];
	while (*i < len && *o < MAX_LINE - 8) {
		char ch = t[*i];
		if (ch == '\\' && *i + 1 < len) {
			out[(*o)++] = ch;
			out[(*o)++] = t[*i + 1] == '\n' ? ' ' : t[*i + 1];
			*i += 2;
			continue;
		}
		if (ch == q && (!triple || (*i + 2 < len && t[*i + 1] == q && t[*i + 2] == q))) {
			for (size_t k = 0; k < qn; k++)
				out[(*o)++] = t[(*i)++];
			return;
		}
		if (ch == '\n' && !triple)
			return; /* unterminated: the line ends here */
		out[(*o)++] = ch == '\n' ? ' ' : ch;
		(*i)++;
	}
}

/* One logical line from t[*i] (at the first non-blank of a physical line). */
static size_t read_logical(const char *t, size_t len, size_t *i, char *out)
{
	size_t o = 0;
	int depth = 0;
	while (*i < len && o < MAX_LINE - 8) {
		char ch = t[*i];
		if (ch == '"' || ch == '\'') {
			copy_string(t, len, i, out, &o);
		} else if (ch == '#') {
			while (*i < len && t[*i] != '\n')
				(*i)++;
		} else if (ch == '\\' && *i + 1 < len && t[*i + 1] == '\n') {
			out[o++] = ' ';
			*i += 2;
		} else if (ch == '\n') {
			(*i)++;
			if (depth <= 0)
				break;
			out[o++] = ' ';
		} else {
			if (ch == '(' || ch == '[' || ch == '{')
				depth++;
			else if ((ch == ')' || ch == ']' || ch == '}') && depth > 0)
				depth--;
			out[o++] = ch == '\t' || ch == '\r' ? ' ' : ch;
			(*i)++;
		}
	}
	while (o && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
	return o;
}

static size_t line_at(const char *t, size_t upto)
{
	size_t n = 1;
	for (size_t k = 0; k < upto; k++)
		n += t[k] == '\n';
	return n;
}

/* ---- syntax ------------------------------------------------------------------ */

/* The first error Python's own parser would stop at, for the mistakes an
 * edit makes: an unclosed or mismatched bracket, an unterminated string, a
 * block opener (a line ending in ':') with no indented body, an unexpected
 * indent, an unindent to no enclosing level. Line numbers and wording follow
 * CPython 3.11's SyntaxError / IndentationError. False with msg set. */
struct pysyn {
	size_t indents[VF_SCHEMA_MAX_DEPTH * 4];
	size_t nind;
	bool opener;        /* the last logical line ended with ':' */
	size_t opener_line;
};

static bool syn_line(struct pysyn *p, size_t indent, size_t line, char *msg, size_t n)
{
	if (p->opener) {
		if (indent <= p->indents[p->nind - 1]) {
			snprintf(msg, n, "%zu: expected an indented block after line %zu", line, p->opener_line);
			return false;
		}
		if (p->nind == sizeof p->indents / sizeof p->indents[0]) {
			snprintf(msg, n, "%zu: too many levels of indentation", line);
			return false;
		}
		p->indents[p->nind++] = indent;
		return true;
	}
	if (indent > p->indents[p->nind - 1]) {
		snprintf(msg, n, "%zu: unexpected indent", line);
		return false;
	}
	while (p->nind > 1 && indent < p->indents[p->nind - 1])
		p->nind--;
	if (indent != p->indents[p->nind - 1]) {
		snprintf(msg, n, "%zu: unindent does not match any outer indentation level", line);
		return false;
	}
	return true;
}

/* py_syntax: the string literal opening at t[*i] (quote c, triple or
 * not), *i and *line moved past it; false with msg when unterminated. */
static bool skip_string(const char *t, size_t len, char c, size_t *i, size_t *line, char *msg, size_t n)
{
	size_t k = *i, ln = *line;
	bool triple = k + 2 < len && t[k + 1] == c && t[k + 2] == c;
	k += triple ? 3 : 1;
	for (;;) {
		if (k >= len || (!triple && t[k] == '\n')) {
			snprintf(msg, n, "%zu: unterminated %sstring literal", *line, triple ? "triple-quoted " : "");
			return false;
		}
		if (t[k] == '\\' && k + 1 < len) {
			ln += t[k + 1] == '\n';
			k += 2;
			continue;
		}
		if (t[k] == c && (!triple || (k + 2 < len && t[k + 1] == c && t[k + 2] == c))) {
			k += triple ? 3 : 1;
			break;
		}
		ln += t[k] == '\n';
		k++;
	}
	*i = k;
	*line = ln;
	return true;
}

#define PY_MAX_NEST 256

/* py_syntax: an opening bracket pushed (up to PY_MAX_NEST deep), a closing one
 * matched against the last; false with msg when they do not pair. */
static bool pair_bracket(char c, char *br, size_t *brline, size_t *depth, size_t line, char *msg, size_t n)
{
	if (c == '(' || c == '[' || c == '{') {
		if (*depth == PY_MAX_NEST) {
			snprintf(msg, n, "%zu: too many nested parentheses", line);
			return false;
		}
		br[*depth] = c;
		brline[(*depth)++] = line;
	} else if (c == ')' || c == ']' || c == '}') {
		char want = c == ')' ? '(' : c == ']' ? '[' : '{';
		if (!*depth) {
			snprintf(msg, n, "%zu: unmatched '%c'", line, c);
			return false;
		}
		if (br[*depth - 1] != want) {
			snprintf(msg, n, "%zu: closing parenthesis '%c' does not match opening parenthesis '%c'%s",
				 line, c, br[*depth - 1], brline[*depth - 1] != line ? " on an earlier line" : "");
			return false;
		}
		(*depth)--;
	}
	return true;
}

static bool py_syntax(const char *t, size_t len, char *msg, size_t n)
{
	struct pysyn p = {.nind = 1};
	char br[PY_MAX_NEST];
	size_t brline[PY_MAX_NEST], depth = 0, line = 1, i = 0;
	bool at_start = true; /* at the start of a logical line */
	char last = 0;        /* last significant character of the logical line */
	while (i < len) {
		char c = t[i];
		if (at_start) {
			size_t indent = 0;
			while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\f'))
				indent = t[i++] == '\t' ? (indent / 8 + 1) * 8 : indent + 1;
			if (i < len && (t[i] == '\n' || t[i] == '\r' || t[i] == '#'))
				goto rest; /* blank or comment-only: no indentation rule */
			if (i >= len)
				break;
			if (!syn_line(&p, indent, line, msg, n))
				return false;
			p.opener = false;
			at_start = false;
			last = 0;
			continue;
		}
	rest:
		c = i < len ? t[i] : 0;
		if (c == '#') {
			while (i < len && t[i] != '\n')
				i++;
		} else if (c == '"' || c == '\'') {
			if (!skip_string(t, len, c, &i, &line, msg, n))
				return false;
			last = c;
		} else if (c == '\\' && i + 1 < len && t[i + 1] == '\n') {
			i += 2;
			line++;
		} else if (c == '\n') {
			i++;
			line++;
			if (depth == 0 && !at_start) {
				p.opener = last == ':';
				if (p.opener)
					p.opener_line = line - 1;
				at_start = true;
			} else if (at_start) {
				/* a blank line: stays at the start */
			}
		} else {
			if (!pair_bracket(c, br, brline, &depth, line, msg, n))
				return false;
			if (c != ' ' && c != '\t' && c != '\r' && c != '\f')
				last = c;
			i++;
		}
	}
	if (depth) {
		snprintf(msg, n, "%zu: '%c' was never closed", brline[depth - 1], br[depth - 1]);
		return false;
	}
	if ((p.opener || (!at_start && last == ':'))) {
		snprintf(msg, n, "%zu: expected an indented block after line %zu", line + (at_start ? 0 : 1),
			 p.opener ? p.opener_line : line);
		return false;
	}
	return true;
}

static vf_status split_lines(struct vf_schema *s, struct pymod *m, const char *t, size_t len)
{
	char why[400];
	if (!s->syntax[0] && !py_syntax(t, len, why, sizeof why))
		snprintf(s->syntax, sizeof s->syntax, "%s:%s (" VF_SCHEMA_SYNTAX_MARK ")", m->file ? m->file : "?", why);
	char *buf = malloc(MAX_LINE);
	if (!buf)
		return VF_ENOMEM;
	size_t i = 0, alloc = 0, line = 1, counted = 0;
	while (i < len) {
		size_t indent = 0;
		while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\f'))
			indent = t[i++] == '\t' ? (indent / 8 + 1) * 8 : indent + 1;
		if (i < len && (t[i] == '\n' || t[i] == '\r' || t[i] == '#')) {
			while (i < len && t[i] != '\n')
				i++;
			i++;
			continue;
		}
		line += line_at(t + counted, i - counted) - 1;
		counted = i;
		size_t n = read_logical(t, len, &i, buf);
		if (!n)
			continue;
		struct lline *nl = agrow(s, m->lines, &alloc, m->nlines, sizeof *nl);
		char *txt = adup(s, buf, n);
		if (!nl || !txt) {
			free(buf);
			return VF_ENOMEM;
		}
		m->lines = nl;
		m->lines[m->nlines++] = (struct lline){indent, line, txt};
	}
	free(buf);
	return VF_OK;
}

/* ---- tokens ---------------------------------------------------------------- */

enum tk { T_END, T_NAME, T_STR, T_NUM, T_OP, T_ELLIPSIS };

struct tok {
	enum tk k;
	const char *s;
	size_t n;
};

struct toks {
	struct tok *v;
	size_t n, i;
};

static size_t scan_string(const char *p)
{
	char q = *p;
	bool triple = p[1] == q && p[2] == q;
	size_t k = triple ? 3 : 1;
	while (p[k]) {
		if (p[k] == '\\' && p[k + 1]) {
			k += 2;
			continue;
		}
		if (p[k] == q && (!triple || (p[k + 1] == q && p[k + 2] == q)))
			return k + (triple ? 3 : 1);
		k++;
	}
	return k;
}

static bool tokenize(const char *p, struct toks *ts)
{
	ts->n = ts->i = 0;
	size_t cap = strlen(p) + 2; /* a token takes at least one byte */
	if (cap > MAX_TOKENS)
		cap = MAX_TOKENS;
	ts->v = malloc(cap * sizeof *ts->v);
	if (!ts->v)
		return false;
	while (*p && ts->n < cap - 1) {
		if (*p == ' ') {
			p++;
			continue;
		}
		struct tok t = {T_OP, p, 1};
		size_t pre = 0;
		while (pre < 2 && strchr("rRbBuUfF", p[pre]) && isalpha((unsigned char)p[pre]))
			pre++;
		if ((p[pre] == '"' || p[pre] == '\'') && (pre == 0 || !isalnum((unsigned char)p[pre]))) {
			t = (struct tok){T_STR, p, pre + scan_string(p + pre)};
		} else if (isalpha((unsigned char)*p) || *p == '_') {
			size_t k = 0;
			while (isalnum((unsigned char)p[k]) || p[k] == '_' ||
			       (p[k] == '.' && (isalpha((unsigned char)p[k + 1]) || p[k + 1] == '_')))
				k++;
			t = (struct tok){T_NAME, p, k};
		} else if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
			size_t k = 0;
			while (isalnum((unsigned char)p[k]) || p[k] == '.' || p[k] == '_' ||
			       ((p[k] == '-' || p[k] == '+') && k && (p[k - 1] == 'e' || p[k - 1] == 'E')))
				k++;
			t = (struct tok){T_NUM, p, k};
		} else if (p[0] == '.' && p[1] == '.' && p[2] == '.') {
			t = (struct tok){T_ELLIPSIS, p, 3};
		}
		ts->v[ts->n++] = t;
		p += t.n;
	}
	ts->v[ts->n] = (struct tok){T_END, p, 0};
	return true;
}

static const struct tok *peek(const struct toks *ts)
{
	return &ts->v[ts->i < ts->n ? ts->i : ts->n];
}

static bool is_op(const struct tok *t, char c)
{
	return t->k == T_OP && t->s[0] == c;
}

static bool is_name(const struct tok *t, const char *name)
{
	return t->k == T_NAME && t->n == strlen(name) && memcmp(t->s, name, t->n) == 0;
}

/* The last dotted component of a NAME token ("typing.Literal" -> "Literal"). */
static bool name_is(const struct tok *t, const char *name)
{
	if (t->k != T_NAME)
		return false;
	size_t l = strlen(name);
	return t->n >= l && memcmp(t->s + t->n - l, name, l) == 0 &&
	       (t->n == l || t->s[t->n - l - 1] == '.');
}

/* Skip one expression up to a ',' or closing bracket at depth 0. */
static void skip_expr(struct toks *ts)
{
	int depth = 0;
	for (const struct tok *t = peek(ts); t->k != T_END; t = peek(ts)) {
		if (depth == 0 && (is_op(t, ',') || is_op(t, ']') || is_op(t, ')') || is_op(t, '}')))
			return;
		if (is_op(t, '(') || is_op(t, '[') || is_op(t, '{'))
			depth++;
		else if (is_op(t, ')') || is_op(t, ']') || is_op(t, '}'))
			depth--;
		ts->i++;
	}
}

/* The unquoted text of a string token. */
static char *str_value(struct vf_schema *s, const struct tok *t)
{
	const char *p = t->s;
	while (*p != '"' && *p != '\'')
		p++;
	char q = *p;
	size_t qn = (p[1] == q && p[2] == q && t->n - (size_t)(p - t->s) >= 6) ? 3 : 1;
	size_t body = t->n - (size_t)(p - t->s);
	body = body >= 2 * qn ? body - 2 * qn : 0;
	return adup(s, p + qn, body);
}

static bool parse_number(const struct toks *ts, size_t at, double *out)
{
	bool neg = false;
	const struct tok *t = &ts->v[at];
	if (t->k == T_OP && (t->s[0] == '-' || t->s[0] == '+')) {
		neg = t->s[0] == '-';
		t = &ts->v[at + 1];
	}
	if (t->k != T_NUM)
		return false;
	char buf[64];
	if (t->n >= sizeof buf)
		return false;
	size_t k = 0;
	for (size_t j = 0; j < t->n; j++)
		if (t->s[j] != '_')
			buf[k++] = t->s[j];
	buf[k] = '\0';
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (*end || errno)
		return false;
	*out = neg ? -v : v;
	return true;
}

/* ---- modules and imports ----------------------------------------------------- */

static vf_status read_file(const char *path, char **out, size_t *len, struct vf_error *err)
{
	FILE *f = vf__fopen_regular(path);
	if (!f)
		return vf_error_set(err, errno == ENOENT ? VF_ENOTFOUND : VF_ERR, "%s: %s", path,
				    errno ? strerror(errno) : "not a regular file");
	char *buf = malloc(VF_SCHEMA_MAX_BYTES + 1);
	if (!buf) {
		fclose(f);
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	}
	size_t n = fread(buf, 1, VF_SCHEMA_MAX_BYTES + 1, f);
	bool bad = ferror(f);
	fclose(f);
	if (bad || n > VF_SCHEMA_MAX_BYTES) {
		free(buf);
		return vf_error_set(err, VF_ERR, "%s: %s", path,
				    bad ? "read error" : "larger than the 2 MiB limit for a Python source");
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return VF_OK;
}

/* `from M import a, b as c` (parenthesised or not); relative M resolved
 * against the module's package. */
static void add_imports(struct vf_schema *s, struct pymod *m, const char *text, size_t *alloc)
{
	struct toks ts;
	if (!tokenize(text, &ts))
		return;
	ts.i = 1;
	char modname[512] = "";
	size_t dots = 0;
	while (is_op(peek(&ts), '.') || peek(&ts)->k == T_ELLIPSIS)
		dots += peek(&ts)->n, ts.i++;
	if (peek(&ts)->k == T_NAME && !is_name(peek(&ts), "import"))
		snprintf(modname, sizeof modname, "%.*s", (int)peek(&ts)->n, peek(&ts)->s), ts.i++;
	if (dots) { /* relative: strip dots-1 trailing components of the package */
		char base[512];
		snprintf(base, sizeof base, "%s", m->name);
		for (size_t d = 0; d < dots; d++) {
			char *dot = strrchr(base, '.');
			if (dot)
				*dot = '\0';
			else
				base[0] = '\0';
		}
		char full[1100];
		snprintf(full, sizeof full, "%s%s%s", base, *base && *modname ? "." : "", modname);
		snprintf(modname, sizeof modname, "%s", full);
	}
	if (!is_name(peek(&ts), "import"))
		goto out;
	ts.i++;
	for (const struct tok *t = peek(&ts); t->k != T_END; t = peek(&ts)) {
		if (t->k != T_NAME) {
			ts.i++;
			continue;
		}
		const struct tok *name = t, *local = t;
		ts.i++;
		if (is_name(peek(&ts), "as") && ts.v[ts.i + 1].k == T_NAME) {
			local = &ts.v[ts.i + 1];
			ts.i += 2;
		}
		struct import *ni = agrow(s, m->imports, alloc, m->nimports, sizeof *ni);
		if (!ni)
			break;
		m->imports = ni;
		m->imports[m->nimports++] = (struct import){adup(s, local->s, local->n), adup(s, modname, strlen(modname)),
							     adup(s, name->s, name->n)};
	}
out:
	free(ts.v);
}

/* Whether the module `name` of the checkout is there: name.py, or a
 * folder (a package, or a namespace package without __init__.py). */
static bool module_there(const struct vf_schema *s, const char *name)
{
	char rel[600], path[1700];
	snprintf(rel, sizeof rel, "%s%s", s->pkg_root, name);
	for (char *p = rel + strlen(s->pkg_root); *p; p++)
		if (*p == '.')
			*p = '/';
	struct stat st;
	snprintf(path, sizeof path, "%s/%s.py", s->dir, rel);
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		return true;
	snprintf(path, sizeof path, "%s/%s", s->dir, rel);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A top-level `from PKG.X import ...` of m's own package whose module is
 * not in the checkout: importing m stops there (ModuleNotFoundError), as
 * a syntax error does; recorded like one (s->syntax, the first only). */
static void check_own_import(struct vf_schema *s, const struct pymod *m, const struct import *im, size_t line)
{
	const char *dot = strchr(m->name, '.');
	size_t pl = dot ? (size_t)(dot - m->name) : strlen(m->name);
	if (s->syntax[0] || !s->dir[0] || strncmp(im->module, m->name, pl) != 0 || im->module[pl] != '.' ||
	    module_there(s, im->module))
		return;
	char rel[600];
	snprintf(rel, sizeof rel, "%s%s", s->pkg_root, im->module);
	for (char *p = rel + strlen(s->pkg_root); *p; p++)
		if (*p == '.')
			*p = '/';
	snprintf(s->syntax, sizeof s->syntax,
		 "%s:%zu: imports %s, which is not in the checkout (no %s.py): Python stops importing there "
		 "(" VF_SCHEMA_IMPORT_MARK ")",
		 m->file ? m->file : "?", line, im->module, rel);
}

static void index_imports(struct vf_schema *s, struct pymod *m)
{
	size_t alloc = 0;
	for (size_t i = 0; i < m->nlines; i++)
		if (m->lines[i].indent == 0 && strncmp(m->lines[i].text, "from ", 5) == 0) {
			size_t from = m->nimports;
			add_imports(s, m, m->lines[i].text, &alloc);
			if (m->nimports > from)
				check_own_import(s, m, &m->imports[from], m->lines[i].line);
		}
}

/* The module named `name`, loaded on first use; NULL past the limit or
 * outside the trainer's own package (its file is not there). */
static struct pymod *module(struct vf_schema *s, const char *name)
{
	for (size_t i = 0; i < s->nmods; i++)
		if (strcmp(s->mods[i].name, name) == 0)
			return s->mods[i].loaded ? &s->mods[i] : NULL;
	if (s->nmods == VF_SCHEMA_MAX_MODULES || !s->dir[0] || strstr(name, ".."))
		return NULL;
	struct pymod *m = &s->mods[s->nmods++];
	m->name = adup(s, name, strlen(name));
	char rel[600], path[1700];
	snprintf(rel, sizeof rel, "%s%s", s->pkg_root, name);
	for (char *p = rel + strlen(s->pkg_root); *p; p++)
		if (*p == '.')
			*p = '/';
	const char *tails[] = {".py", "/__init__.py"};
	for (int k = 0; k < 2 && !m->loaded; k++) {
		snprintf(path, sizeof path, "%s/%s%s", s->dir, rel, tails[k]);
		char *text = NULL;
		size_t len = 0;
		struct vf_error e = {0};
		if (read_file(path, &text, &len, &e) != VF_OK)
			continue;
		char relf[700];
		snprintf(relf, sizeof relf, "%s%s", rel, tails[k]);
		m->file = adup(s, relf, strlen(relf));
		m->loaded = split_lines(s, m, text, len) == VF_OK;
		free(text);
		if (m->loaded)
			index_imports(s, m);
	}
	return m->loaded ? m : NULL;
}

/* ---- names ------------------------------------------------------------------- */

static struct vf_pymodel *build_class(struct vf_schema *s, const struct pymod *m, size_t at, int depth);
static bool add_literal(struct vf_schema *s, struct vf_pytype *t, struct toks *ts, size_t *alloc);
static struct vf_pytype *parse_type(struct vf_schema *s, const struct pymod *m, struct toks *ts, int depth);

/* The line index of `class name` or `name = ...` at the top of m. */
static bool find_def(const struct pymod *m, const char *name, size_t *at, bool *is_class)
{
	size_t l = strlen(name);
	for (size_t i = m->nlines; i-- > 0;) {
		const char *t = m->lines[i].text;
		if (m->lines[i].indent)
			continue;
		if (strncmp(t, "class ", 6) == 0 && strncmp(t + 6, name, l) == 0 &&
		    (t[6 + l] == '(' || t[6 + l] == ':')) {
			*at = i;
			*is_class = true;
			return true;
		}
		if (strncmp(t, name, l) == 0) {
			const char *r = t + l;
			while (*r == ' ')
				r++;
			if ((*r == '=' && r[1] != '=') || (*r == ':' && strchr(r, '='))) {
				*at = i;
				*is_class = false;
				return true;
			}
		}
	}
	return false;
}

static struct vf_pytype *mktype(struct vf_schema *s, enum vf_pytype_kind k)
{
	struct vf_pytype *t = anew(s, sizeof *t);
	if (t)
		t->kind = k;
	return t;
}

static struct vf_pytype *unknown(struct vf_schema *s, const char *text, size_t n)
{
	struct vf_pytype *t = mktype(s, VF_PY_UNKNOWN);
	if (t)
		t->text = adup(s, text, n > 200 ? 200 : n);
	return t;
}

/* The type an alias line defines (`Name = <type>` or `Name: TypeAlias = <type>`). */
static struct vf_pytype *alias_type(struct vf_schema *s, const struct pymod *m, size_t at, int depth)
{
	const char *eq = strchr(m->lines[at].text, '=');
	struct toks ts;
	if (!eq || !tokenize(eq + 1, &ts))
		return NULL;
	struct vf_pytype *t = parse_type(s, m, &ts, depth + 1);
	if (t && peek(&ts)->k != T_END)
		t = unknown(s, eq + 1, strlen(eq + 1)); /* not a type expression (a value) */
	free(ts.v);
	return t;
}

static struct vf_pytype *resolve_uncached(struct vf_schema *s, const struct pymod *m, const char *name,
					  int depth);

/* Resolve a (possibly dotted) name in module m to a type, once per module
 * and name. NULL when unknown. */
static struct vf_pytype *resolve(struct vf_schema *s, const struct pymod *m, const char *name, int depth)
{
	if (depth > VF_SCHEMA_MAX_DEPTH || !m)
		return NULL;
	for (size_t i = 0; i < s->nnames; i++)
		if (s->names[i].mod == m && strcmp(s->names[i].name, name) == 0)
			return s->names[i].type;
	struct named *nn = agrow(s, s->names, &s->anames, s->nnames, sizeof *nn);
	const char *copy = adup(s, name, strlen(name));
	if (!nn || !copy)
		return NULL;
	s->names = nn;
	size_t at = s->nnames++;
	s->names[at] = (struct named){m, copy, NULL};
	struct vf_pytype *t = resolve_uncached(s, m, name, depth);
	s->names[at].type = t;
	return t;
}

/* `class Q(str, Enum):` (Enum, StrEnum, IntEnum, enum.Enum as a base). */
static bool is_enum_class(const char *hdr)
{
	const char *open = strchr(hdr, '('), *close = open ? strchr(open, ')') : NULL;
	struct toks ts;
	if (!open || !close || !tokenize(open + 1, &ts))
		return false;
	bool e = false;
	for (size_t i = 0; i < ts.n && !is_op(&ts.v[i], ')'); i++)
		e = e || name_is(&ts.v[i], "Enum") || name_is(&ts.v[i], "StrEnum") || name_is(&ts.v[i], "IntEnum");
	free(ts.v);
	return e;
}

/* An Enum field takes a member's value (pydantic v2 validates an Enum by
 * value: Q("a"), never by the member's name): a Literal of the values,
 * carrying the class name. A member whose value is not a literal (auto(),
 * an expression) makes the type unknown. */
static struct vf_pytype *enum_type(struct vf_schema *s, const struct pymod *m, size_t at)
{
	const char *hdr = m->lines[at].text + 6;
	size_t nl = strcspn(hdr, "(:");
	struct vf_pytype *t = mktype(s, VF_PY_LITERAL);
	if (!t)
		return NULL;
	t->text = adup(s, hdr, nl);
	size_t alloc = 0;
	for (size_t i = at + 1; i < m->nlines && m->lines[i].indent > m->lines[at].indent; i++) {
		struct toks ts;
		if (!tokenize(m->lines[i].text, &ts))
			return NULL;
		bool member = ts.n >= 3 && ts.v[0].k == T_NAME && is_op(&ts.v[1], '=') && ts.v[0].s[0] != '_' &&
			      !(ts.v[1].n > 1);
		if (member) {
			ts.i = 2;
			if (!add_literal(s, t, &ts, &alloc) || peek(&ts)->k != T_END) {
				free(ts.v);
				char why[300];
				snprintf(why, sizeof why, "%s (an Enum whose values are not all literals)", t->text);
				return unknown(s, why, strlen(why));
			}
		}
		free(ts.v);
	}
	return t;
}

static struct vf_pytype *resolve_uncached(struct vf_schema *s, const struct pymod *m, const char *name,
					  int depth)
{
	size_t at;
	bool is_class;
	if (!strchr(name, '.') && find_def(m, name, &at, &is_class)) {
		if (!is_class)
			return alias_type(s, m, at, depth);
		if (is_enum_class(m->lines[at].text))
			return enum_type(s, m, at);
		struct vf_pytype *t = mktype(s, VF_PY_MODEL);
		if (t && !(t->model = build_class(s, m, at, depth + 1)))
			return NULL;
		return t;
	}
	for (size_t i = 0; i < m->nimports; i++) {
		const struct import *im = &m->imports[i];
		size_t l = strlen(im->local);
		if (strcmp(im->local, name) == 0)
			return resolve(s, module(s, im->module), im->name, depth + 1);
		if (strncmp(name, im->local, l) == 0 && name[l] == '.') {
			char sub[600];
			snprintf(sub, sizeof sub, "%s.%s", im->module, im->name);
			return resolve(s, module(s, sub), name + l + 1, depth + 1);
		}
	}
	return NULL;
}

/* ---- type expressions ---------------------------------------------------------- */

static bool add_arg(struct vf_schema *s, struct vf_pytype *t, struct vf_pytype *a, size_t *alloc)
{
	if (!a)
		return false;
	struct vf_pytype **na = agrow(s, t->args, alloc, t->nargs, sizeof *na);
	if (!na)
		return false;
	t->args = na;
	t->args[t->nargs++] = a;
	return true;
}

static bool add_literal(struct vf_schema *s, struct vf_pytype *t, struct toks *ts, size_t *alloc)
{
	const struct tok *v = peek(ts);
	struct vf_pyliteral lit = {VF_PY_NONE, NULL};
	double d;
	if (v->k == T_STR) {
		lit = (struct vf_pyliteral){VF_PY_STR, str_value(s, v)};
		ts->i++;
	} else if (is_name(v, "True") || is_name(v, "False") || is_name(v, "None")) {
		lit = (struct vf_pyliteral){v->s[0] == 'N' ? VF_PY_NONE : VF_PY_BOOL, adup(s, v->s, v->n)};
		ts->i++;
	} else if (parse_number(ts, ts->i, &d)) {
		size_t start = ts->i;
		ts->i += ts->v[start].k == T_OP ? 2 : 1;
		const struct tok *last = &ts->v[ts->i - 1];
		bool is_float = memchr(last->s, '.', last->n) || memchr(last->s, 'e', last->n);
		lit = (struct vf_pyliteral){is_float ? VF_PY_FLOAT : VF_PY_INT,
					    adup(s, v->s, (size_t)(last->s + last->n - v->s))};
	} else {
		return false;
	}
	struct vf_pyliteral *nl = agrow(s, t->literals, alloc, t->nliterals, sizeof *nl);
	if (!nl || !lit.text)
		return false;
	t->literals = nl;
	t->literals[t->nliterals++] = lit;
	return true;
}

/* One constraint keyword (name=value at ts->v[v]) into b; false when name
 * is not a constraint. pydantic v2 applies these after lax-mode coercion:
 * ge/gt/le/lt and multiple_of to the number, min_length/max_length to a
 * string's or a collection's length, strict=True turns coercion off,
 * allow_inf_nan=False refuses inf and nan. min_items/max_items are the v1
 * spellings of the lengths. */
static bool bounds_kw(struct vf_schema *s, struct vf_pybounds *b, const struct tok *a, struct toks *ts,
		      size_t v)
{
	double d;
	bool num = parse_number(ts, v, &d);
	if (is_name(a, "ge") && num)
		b->has_ge = true, b->ge = d;
	else if (is_name(a, "gt") && num)
		b->has_gt = true, b->gt = d;
	else if (is_name(a, "le") && num)
		b->has_le = true, b->le = d;
	else if (is_name(a, "lt") && num)
		b->has_lt = true, b->lt = d;
	else if (is_name(a, "multiple_of") && num && d != 0)
		b->has_multiple_of = true, b->multiple_of = d;
	else if ((is_name(a, "min_length") || is_name(a, "min_items") || is_name(a, "min_len")) && num)
		b->has_min_len = true, b->min_len = d;
	else if ((is_name(a, "max_length") || is_name(a, "max_items") || is_name(a, "max_len")) && num)
		b->has_max_len = true, b->max_len = d;
	else if (is_name(a, "strict"))
		b->strict = is_name(&ts->v[v], "True");
	else if (is_name(a, "allow_inf_nan"))
		b->finite = is_name(&ts->v[v], "False");
	else if ((is_name(a, "pattern") || is_name(a, "regex")) && ts->v[v].k == T_STR)
		b->pattern = str_value(s, &ts->v[v]);
	else
		return false;
	return true;
}

/* The keyword arguments of a call, ts just past its '(' (left past ')'):
 * constraints into b, positional arguments counted in *npos (the first
 * positional number in *first when given). */
static void call_kwargs(struct vf_schema *s, struct vf_pybounds *b, struct toks *ts, double *first, bool *has_first)
{
	int n = 0;
	while (peek(ts)->k != T_END && !is_op(peek(ts), ')')) {
		const struct tok *a = peek(ts);
		double d;
		if (a->k == T_NAME && is_op(&ts->v[ts->i + 1], '=')) {
			bounds_kw(s, b, a, ts, ts->i + 2);
			ts->i += 2;
		} else if (n == 0 && first && parse_number(ts, ts->i, &d)) {
			*first = d;
			*has_first = true;
		}
		n++;
		skip_expr(ts);
		if (!is_op(peek(ts), ','))
			break;
		ts->i++;
	}
	if (is_op(peek(ts), ')'))
		ts->i++;
}

/* An Annotated validator (BeforeValidator(f) ...), recorded on the type. */
static const struct vf_pyvalidator *annotated_validator(struct vf_schema *s, const struct pymod *m,
							const struct tok *h, struct toks *ts)
{
	static const char *const kinds[] = {"BeforeValidator", "before", "AfterValidator", "after",
					    "PlainValidator", "plain", "WrapValidator", "wrap", NULL};
	for (int i = 0; kinds[i]; i += 2) {
		if (!name_is(h, kinds[i]))
			continue;
		struct vf_pyvalidator *v = anew(s, sizeof *v);
		if (!v)
			return NULL;
		const struct tok *f = &ts->v[ts->i + 2];
		v->name = f->k == T_NAME ? adup(s, f->s, f->n) : adup(s, kinds[i], strlen(kinds[i]));
		v->mode = kinds[i + 1];
		v->file = m->file;
		v->line = 0;
		return v;
	}
	return NULL;
}

/* annotated_meta: Field(...) - a discriminator and the bounds among its
 * keyword arguments. */
static void meta_field(struct vf_schema *s, struct vf_pytype *t, struct vf_pybounds *b, struct toks *ts)
{
	ts->i += 2;
	while (peek(ts)->k != T_END && !is_op(peek(ts), ')')) {
		const struct tok *a = peek(ts);
		if (a->k == T_NAME && is_op(&ts->v[ts->i + 1], '=')) {
			if (is_name(a, "discriminator") && ts->v[ts->i + 2].k == T_STR)
				t->discriminator = str_value(s, &ts->v[ts->i + 2]);
			else
				bounds_kw(s, b, a, ts, ts->i + 2);
			ts->i += 2;
		}
		skip_expr(ts);
		if (!is_op(peek(ts), ','))
			break; /* a ']' or '}' out of place: stop here */
		ts->i++;
	}
	if (is_op(peek(ts), ')'))
		ts->i++;
}

/* annotated_meta: Len(min, max) or Len(min_length=..., max_length=...). */
static void meta_len(struct vf_schema *s, struct vf_pybounds *b, struct toks *ts)
{
	double lo = 0;
	bool has = false;
	ts->i += 2;
	size_t at = ts->i;
	call_kwargs(s, b, ts, &lo, &has);
	if (has)
		b->has_min_len = true, b->min_len = lo;
	/* Len(a, b): the second positional is the maximum */
	struct toks sub = *ts;
	sub.i = at;
	skip_expr(&sub);
	double hi;
	if (is_op(peek(&sub), ',') && parse_number(&sub, sub.i + 1, &hi))
		b->has_max_len = true, b->max_len = hi;
}

/* Annotated's metadata: Field(discriminator=, constraints), Tag("x"),
 * annotated_types markers (Gt(0), Ge, Lt, Le, MultipleOf, MinLen, MaxLen,
 * Len(a, b), Interval(...)), pydantic's Strict() and AllowInfNan(False),
 * StringConstraints(...), and Before/After/Plain/WrapValidator(f); the rest
 * is skipped. */
static void annotated_meta(struct vf_schema *s, const struct pymod *m, struct vf_pytype *t, struct toks *ts)
{
	const struct tok *h = peek(ts);
	struct vf_pybounds *b = &t->bounds;
	bool call = is_op(&ts->v[ts->i + 1], '(');
	const struct vf_pyvalidator *val = call ? annotated_validator(s, m, h, ts) : NULL;
	if (val) {
		t->validator = val;
	} else if (call && name_is(h, "Tag")) {
		if (ts->v[ts->i + 2].k == T_STR)
			t->tag = str_value(s, &ts->v[ts->i + 2]);
	} else if (call && name_is(h, "Field")) {
		meta_field(s, t, b, ts);
		return;
	} else if (call) {
		static const char *const one[] = {"Gt", "gt", "Ge", "ge", "Lt", "lt", "Le", "le", "MultipleOf",
						  "multiple_of", "MinLen", "min_length", "MaxLen", "max_length", NULL};
		for (int i = 0; one[i]; i += 2)
			if (name_is(h, one[i])) {
				struct tok kw = {T_NAME, one[i + 1], strlen(one[i + 1])};
				ts->i += 2;
				if (parse_number(ts, ts->i, &(double){0}))
					bounds_kw(s, b, &kw, ts, ts->i);
				skip_expr(ts);
				if (is_op(peek(ts), ')'))
					ts->i++;
				return;
			}
		if (name_is(h, "Len")) {
			meta_len(s, b, ts);
			return;
		}
		if (name_is(h, "Interval") || name_is(h, "StringConstraints") || name_is(h, "Strict") ||
		    name_is(h, "AllowInfNan")) {
			bool strict = name_is(h, "Strict"), inf = name_is(h, "AllowInfNan");
			ts->i += 2;
			if ((strict || inf) && is_op(peek(ts), ')')) {
				b->strict = b->strict || strict; /* Strict() is Strict(True) */
				ts->i++;
				return;
			}
			if (strict || inf) {
				bool v = is_name(peek(ts), "True");
				if (strict)
					b->strict = v;
				else
					b->finite = !v;
			}
			call_kwargs(s, b, ts, NULL, NULL);
			return;
		}
	}
	skip_expr(ts);
}

/* The kind a subscripted generic makes, by its last dotted name. */
static enum vf_pytype_kind generic_kind(const struct tok *h)
{
	static const char *const lists[] = {"list", "List", "Sequence", "set", "Set", "frozenset",
					    "FrozenSet", "Iterable", "MutableSequence", NULL};
	static const char *const dicts[] = {"dict", "Dict", "Mapping", "MutableMapping", NULL};
	for (int i = 0; lists[i]; i++)
		if (name_is(h, lists[i]))
			return VF_PY_LIST;
	for (int i = 0; dicts[i]; i++)
		if (name_is(h, dicts[i]))
			return VF_PY_DICT;
	if (name_is(h, "tuple") || name_is(h, "Tuple"))
		return VF_PY_TUPLE;
	if (name_is(h, "Literal"))
		return VF_PY_LITERAL;
	if (name_is(h, "Union") || name_is(h, "Optional"))
		return VF_PY_UNION;
	return VF_PY_UNKNOWN;
}

/* head[ args ] with ts at the first argument; leaves ts past the ']'. */
static struct vf_pytype *subscript(struct vf_schema *s, const struct pymod *m, const struct tok *h,
				   struct toks *ts, int depth)
{
	enum vf_pytype_kind k = generic_kind(h);
	bool annotated = name_is(h, "Annotated");
	struct vf_pytype *t = mktype(s, k), *first = NULL;
	size_t alloc = 0, lalloc = 0;
	bool ok = t != NULL;
	for (int n = 0; ok && peek(ts)->k != T_END && !is_op(peek(ts), ']'); n++) {
		if (n && !is_op(peek(ts), ','))
			ok = false;
		else if (n)
			ts->i++;
		if (!ok || is_op(peek(ts), ']'))
			break;
		if (k == VF_PY_LITERAL) {
			ok = add_literal(s, t, ts, &lalloc);
		} else if (annotated && n > 0) {
			annotated_meta(s, m, first, ts);
		} else if (k == VF_PY_TUPLE && peek(ts)->k == T_ELLIPSIS) {
			t->variadic = true;
			ts->i++;
		} else {
			struct vf_pytype *a = parse_type(s, m, ts, depth + 1);
			if (annotated && a && (first = mktype(s, a->kind)))
				*first = *a; /* a copy: a cached alias is shared, its tag is not */
			if (annotated)
				ok = first != NULL;
			else if (k != VF_PY_DICT && k != VF_PY_UNKNOWN)
				ok = add_arg(s, t, a, &alloc);
		}
	}
	if (!ok || !is_op(peek(ts), ']'))
		return NULL;
	ts->i++;
	if (annotated)
		return first;
	if (k == VF_PY_UNKNOWN)
		return unknown(s, h->s, (size_t)(peek(ts)->s - h->s));
	if (name_is(h, "Optional"))
		ok = add_arg(s, t, mktype(s, VF_PY_NONE), &alloc);
	return ok ? t : NULL;
}

/* A bare name: a builtin, or a class or alias resolved through m. */
static struct vf_pytype *named(struct vf_schema *s, const struct pymod *m, const struct tok *h, int depth)
{
	static const struct {
		const char *name;
		enum vf_pytype_kind kind;
	} builtins[] = {
		{"str", VF_PY_STR},     {"Path", VF_PY_STR},     {"PurePath", VF_PY_STR},
		{"PathLike", VF_PY_STR}, {"int", VF_PY_INT},      {"float", VF_PY_FLOAT},
		{"bool", VF_PY_BOOL},   {"None", VF_PY_NONE},    {"Any", VF_PY_ANY},
		{"object", VF_PY_ANY},  {"dict", VF_PY_DICT},    {"Dict", VF_PY_DICT},
		{"list", VF_PY_LIST},   {"List", VF_PY_LIST},    {"tuple", VF_PY_TUPLE},
		{"Tuple", VF_PY_TUPLE},
	};
	for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
		if (name_is(h, builtins[i].name)) {
			struct vf_pytype *t = mktype(s, builtins[i].kind);
			if (t && t->kind == VF_PY_TUPLE)
				t->variadic = true;
			return t;
		}
	/* pydantic.types: PositiveInt is conint(gt=0) and so on; Strict* turn
	 * coercion off; FilePath / DirectoryPath must exist (not checked) */
	static const struct {
		const char *name;
		enum vf_pytype_kind kind;
		char op; /* '>' gt 0, 'g' ge 0, '<' lt 0, 'l' le 0, 's' strict, 'f' finite, 'e' exists */
	} typed[] = {
		{"PositiveInt", VF_PY_INT, '>'},     {"NegativeInt", VF_PY_INT, '<'},
		{"NonNegativeInt", VF_PY_INT, 'g'},  {"NonPositiveInt", VF_PY_INT, 'l'},
		{"PositiveFloat", VF_PY_FLOAT, '>'}, {"NegativeFloat", VF_PY_FLOAT, '<'},
		{"NonNegativeFloat", VF_PY_FLOAT, 'g'}, {"NonPositiveFloat", VF_PY_FLOAT, 'l'},
		{"FiniteFloat", VF_PY_FLOAT, 'f'},   {"StrictInt", VF_PY_INT, 's'},
		{"StrictFloat", VF_PY_FLOAT, 's'},   {"StrictStr", VF_PY_STR, 's'},
		{"StrictBool", VF_PY_BOOL, 's'},     {"FilePath", VF_PY_STR, 'e'},
		{"DirectoryPath", VF_PY_STR, 'e'},   {"NewPath", VF_PY_STR, 0},
		{"SocketPath", VF_PY_STR, 0},
	};
	for (size_t i = 0; i < sizeof typed / sizeof typed[0]; i++) {
		if (!name_is(h, typed[i].name))
			continue;
		struct vf_pytype *t = mktype(s, typed[i].kind);
		if (!t)
			return NULL;
		struct vf_pybounds *b = &t->bounds;
		switch (typed[i].op) {
		case '>': b->has_gt = true; break;
		case '<': b->has_lt = true; break;
		case 'g': b->has_ge = true; break;
		case 'l': b->has_le = true; break;
		case 's': b->strict = true; break;
		case 'f': b->finite = true; break;
		case 'e': b->must_exist = typed[i].name[0] == 'F' ? "a file (FilePath)" : "a directory (DirectoryPath)"; break;
		}
		return t;
	}
	char name[256];
	snprintf(name, sizeof name, "%.*s", (int)(h->n < 255 ? h->n : 255), h->s);
	struct vf_pytype *t = resolve(s, m, name, depth + 1);
	return t ? t : unknown(s, h->s, h->n);
}

/* conint(...), confloat(...), constr(...), conlist(item, ...), conset(...):
 * pydantic's constrained-type functions, as the type they constrain. NULL
 * (ts unchanged) for any other call. */
static struct vf_pytype *constrained_call(struct vf_schema *s, const struct pymod *m, struct toks *ts, int depth)
{
	static const struct {
		const char *name;
		enum vf_pytype_kind kind;
	} cons[] = {{"conint", VF_PY_INT},   {"confloat", VF_PY_FLOAT}, {"constr", VF_PY_STR},
		    {"conlist", VF_PY_LIST}, {"conset", VF_PY_LIST},    {"confrozenset", VF_PY_LIST},
		    {"condecimal", VF_PY_FLOAT}};
	const struct tok *h = peek(ts);
	for (size_t i = 0; i < sizeof cons / sizeof cons[0]; i++) {
		if (!name_is(h, cons[i].name))
			continue;
		struct vf_pytype *t = mktype(s, cons[i].kind);
		if (!t)
			return NULL;
		ts->i += 2;
		if (t->kind == VF_PY_LIST && !is_op(peek(ts), ')') &&
		    !(peek(ts)->k == T_NAME && is_op(&ts->v[ts->i + 1], '='))) {
			size_t alloc = 0;
			if (!add_arg(s, t, parse_type(s, m, ts, depth + 1), &alloc))
				return NULL;
			if (is_op(peek(ts), ','))
				ts->i++;
		}
		call_kwargs(s, &t->bounds, ts, NULL, NULL);
		return t;
	}
	return NULL;
}

static struct vf_pytype *primary(struct vf_schema *s, const struct pymod *m, struct toks *ts, int depth)
{
	const struct tok *h = peek(ts);
	if (h->k == T_STR) { /* a forward reference: the type in quotes */
		ts->i++;
		char *inner = str_value(s, h);
		struct toks it;
		if (!inner || !tokenize(inner, &it))
			return NULL;
		struct vf_pytype *t = parse_type(s, m, &it, depth + 1);
		if (t && peek(&it)->k != T_END)
			t = unknown(s, inner, strlen(inner));
		free(it.v);
		return t;
	}
	if (is_op(h, '(')) { /* a parenthesised (often multi-line) annotation */
		ts->i++;
		struct vf_pytype *t = parse_type(s, m, ts, depth + 1);
		if (!t || !is_op(peek(ts), ')'))
			return NULL;
		ts->i++;
		return t;
	}
	if (h->k == T_NAME && is_op(&ts->v[ts->i + 1], '(')) {
		struct vf_pytype *t = constrained_call(s, m, ts, depth);
		if (t)
			return t;
	}
	if (h->k != T_NAME) {
		size_t start = ts->i;
		skip_expr(ts);
		if (ts->i == start)
			ts->i++;
		return unknown(s, h->s, h->n ? h->n : 1);
	}
	ts->i++;
	if (is_op(peek(ts), '[')) {
		ts->i++;
		return subscript(s, m, h, ts, depth);
	}
	return named(s, m, h, depth);
}

static struct vf_pytype *parse_type(struct vf_schema *s, const struct pymod *m, struct toks *ts, int depth)
{
	if (depth > VF_SCHEMA_MAX_DEPTH) {
		const struct tok *h = peek(ts);
		skip_expr(ts);
		return unknown(s, h->s, (size_t)(peek(ts)->s - h->s) + 1);
	}
	struct vf_pytype *t = primary(s, m, ts, depth);
	if (!t || !is_op(peek(ts), '|'))
		return t;
	struct vf_pytype *u = mktype(s, VF_PY_UNION);
	size_t alloc = 0;
	if (!u || !add_arg(s, u, t, &alloc))
		return NULL;
	while (is_op(peek(ts), '|')) {
		ts->i++;
		if (!add_arg(s, u, primary(s, m, ts, depth), &alloc))
			return NULL;
	}
	return u;
}

/* ---- classes ----------------------------------------------------------------------- */

static struct vf_pyfield *add_field(struct vf_schema *s, struct vf_pymodel *md, const char *name)
{
	for (size_t i = 0; i < md->nfields; i++)
		if (strcmp(md->fields[i].name, name) == 0) /* a subclass redefines it */
			return memset(&md->fields[i], 0, sizeof md->fields[i]);
	struct vf_pyfield *nf = agrow(s, md->fields, &md->alloc, md->nfields, sizeof *nf);
	if (!nf)
		return NULL;
	md->fields = nf;
	return &md->fields[md->nfields++];
}

static void add_consumed(struct vf_schema *s, struct vf_pymodel *md, const char *key)
{
	for (size_t i = 0; i < md->nconsumed; i++)
		if (strcmp(md->consumed[i], key) == 0)
			return;
	const char **nc = agrow(s, md->consumed, &md->calloc_, md->nconsumed, sizeof *nc);
	if (!nc)
		return;
	md->consumed = nc;
	md->consumed[md->nconsumed++] = key;
}

static void add_validator(struct vf_schema *s, struct vf_pymodel *md, const struct vf_pyvalidator *v)
{
	for (size_t i = 0; i < md->nvalidators; i++)
		if (strcmp(md->validators[i].name, v->name) == 0) { /* a subclass redefines it */
			md->validators[i] = *v;
			return;
		}
	struct vf_pyvalidator *nv = agrow(s, md->validators, &md->valloc_, md->nvalidators, sizeof *nv);
	if (!nv)
		return;
	md->validators = nv;
	md->validators[md->nvalidators++] = *v;
}

/* A decorator line: @field_validator("a", "b", mode="before"),
 * @model_validator(mode="after"), v1 @validator("a", pre=True) and
 * @root_validator(pre=True). pydantic's defaults: field_validator and
 * validator run after the type check, model_validator needs its mode,
 * root_validator runs after unless pre=True. False when not a validator. */
static bool decorator(struct vf_schema *s, const char *text, struct vf_pyvalidator *v)
{
	struct toks ts;
	if (!tokenize(text + 1, &ts))
		return false;
	const struct tok *h = &ts.v[0];
	bool field = name_is(h, "field_validator") || name_is(h, "validator");
	bool model = name_is(h, "model_validator") || name_is(h, "root_validator");
	if (!field && !model) {
		free(ts.v);
		return false;
	}
	memset(v, 0, sizeof *v);
	v->mode = "after";
	size_t alloc = 0;
	for (size_t i = 1; i < ts.n; i++) {
		const struct tok *t = &ts.v[i];
		if (t->k == T_NAME && is_op(&ts.v[i + 1], '=') && ts.v[i + 2].k != T_END) {
			const struct tok *val = &ts.v[i + 2];
			if (is_name(t, "mode") && val->k == T_STR)
				v->mode = str_value(s, val);
			else if (is_name(t, "pre") && is_name(val, "True"))
				v->mode = "before";
			i += 2;
		} else if (field && t->k == T_STR) {
			const char **nf = agrow(s, v->fields, &alloc, v->nfields, sizeof *nf);
			char *name = str_value(s, t);
			if (nf && name) {
				v->fields = nf;
				v->fields[v->nfields++] = name;
			}
		}
	}
	free(ts.v);
	if (!v->mode)
		v->mode = "after";
	if (field && !v->nfields) { /* @validator without names: cannot tell which */
		static const char *all[] = {"*"};
		v->fields = all;
		v->nfields = 1;
	}
	return true;
}

static void inherit(struct vf_schema *s, struct vf_pymodel *md, const struct vf_pymodel *base)
{
	for (size_t i = 0; i < base->nfields; i++) {
		struct vf_pyfield *f = add_field(s, md, base->fields[i].name);
		if (f)
			*f = base->fields[i];
	}
	for (size_t i = 0; i < base->nconsumed; i++)
		add_consumed(s, md, base->consumed[i]);
	for (size_t i = 0; i < base->nvalidators; i++)
		add_validator(s, md, &base->validators[i]);
	md->by_name = md->by_name || base->by_name;
	md->forbid = md->forbid || base->forbid;
	if (base->open) {
		md->open = true;
		md->open_why = base->open_why;
	}
}

/* `class Name(A, B, metaclass=M):` -> inherit from each base. False when
 * the class is not a pydantic model at all. */
static bool bases(struct vf_schema *s, const struct pymod *m, struct vf_pymodel *md, const char *hdr, int depth)
{
	const char *open = strchr(hdr, '(');
	struct toks ts;
	if (!open || !tokenize(open + 1, &ts))
		return false;
	bool model = false;
	while (peek(&ts)->k != T_END && !is_op(peek(&ts), ')')) {
		const struct tok *b = peek(&ts);
		if (b->k == T_NAME && !is_op(&ts.v[ts.i + 1], '=') && !is_op(&ts.v[ts.i + 1], '[')) {
			char name[256];
			snprintf(name, sizeof name, "%.*s", (int)(b->n < 255 ? b->n : 255), b->s);
			if (name_is(b, "BaseModel")) {
				model = true;
			} else if (!name_is(b, "ABC") && !name_is(b, "object")) {
				struct vf_pytype *t = resolve(s, m, name, depth + 1);
				if (t && t->kind == VF_PY_MODEL) {
					inherit(s, md, t->model);
					model = true;
				} else {
					md->open = true;
					md->open_why = adup(s, name, strlen(name));
				}
			}
		}
		skip_expr(&ts);
		if (!is_op(peek(&ts), ','))
			break;
		ts.i++;
	}
	free(ts.v);
	return model || md->open;
}

static void add_alias(struct vf_schema *s, struct vf_pyfield *f, const struct tok *t, size_t *alloc)
{
	const char **na = agrow(s, f->aliases, alloc, f->naliases, sizeof *na);
	char *v = str_value(s, t);
	if (!na || !v)
		return;
	f->aliases = na;
	f->aliases[f->naliases++] = v;
}

/* alias="k" / validation_alias="k" | AliasChoices("a", "b"): the keys a
 * config may use for the field (pydantic v2: with an alias the field's own
 * name is accepted only under populate_by_name / validate_by_name). An
 * AliasPath or anything else is not understood. */
static void alias_arg(struct vf_schema *s, struct vf_pyfield *f, struct toks *ts, size_t v, bool validation,
		      size_t *alloc)
{
	const struct tok *t = &ts->v[v];
	if (validation && f->naliases)
		f->naliases = 0; /* validation_alias wins over alias for input */
	if (t->k == T_STR) {
		add_alias(s, f, t, alloc);
	} else if (name_is(t, "AliasChoices") && is_op(&ts->v[v + 1], '(')) {
		for (size_t k = v + 2; ts->v[k].k != T_END && !is_op(&ts->v[k], ')'); k++) {
			if (ts->v[k].k == T_STR)
				add_alias(s, f, &ts->v[k], alloc);
			else if (!is_op(&ts->v[k], ','))
				f->alias_unknown = true; /* an AliasPath among the choices */
		}
	} else if (!is_name(t, "None")) {
		f->alias_unknown = true;
	}
}

/* Field(...) arguments: required or not, constraints, aliases, discriminator. */
static void field_args(struct vf_schema *s, struct vf_pyfield *f, struct toks *ts)
{
	f->required = true;
	size_t alloc = 0;
	bool has_validation_alias = false;
	for (int n = 0; peek(ts)->k != T_END && !is_op(peek(ts), ')'); n++) {
		const struct tok *a = peek(ts);
		const struct tok *nx = &ts->v[ts->i + 1];
		if (a->k == T_NAME && is_op(nx, '=')) {
			size_t v = ts->i + 2;
			if (is_name(a, "default") || is_name(a, "default_factory"))
				f->required = is_name(a, "default") && ts->v[v].k == T_ELLIPSIS;
			else if (is_name(a, "discriminator") && ts->v[v].k == T_STR && f->type)
				f->type->discriminator = str_value(s, &ts->v[v]);
			else if (is_name(a, "validation_alias"))
				alias_arg(s, f, ts, v, true, &alloc), has_validation_alias = true;
			else if (is_name(a, "alias") && !has_validation_alias)
				alias_arg(s, f, ts, v, false, &alloc);
			else
				bounds_kw(s, &f->b, a, ts, v);
			ts->i = v;
		} else if (n == 0) {
			f->required = a->k == T_ELLIPSIS;
		}
		skip_expr(ts);
		if (!is_op(peek(ts), ','))
			break;
		ts->i++;
	}
}

/* `name: type [= default]` at the class body's level. */
static void field_line(struct vf_schema *s, const struct pymod *m, struct vf_pymodel *md,
		       const struct lline *l, int depth)
{
	struct toks ts;
	if (!tokenize(l->text, &ts))
		return;
	const struct tok *n = peek(&ts);
	if (n->k != T_NAME || memchr(n->s, '.', n->n) || !is_op(&ts.v[1], ':') || n->s[0] == '_' ||
	    name_is(&ts.v[2], "ClassVar")) {
		free(ts.v);
		return;
	}
	char name[128];
	snprintf(name, sizeof name, "%.*s", (int)(n->n < 127 ? n->n : 127), n->s);
	ts.i = 2;
	struct vf_pytype *t = parse_type(s, m, &ts, depth + 1);
	struct vf_pyfield *f = add_field(s, md, name);
	if (!f) {
		free(ts.v);
		return;
	}
	f->name = adup(s, name, strlen(name));
	f->type = t ? t : unknown(s, ts.v[2].s, strlen(ts.v[2].s));
	f->file = m->file;
	f->line = l->line;
	f->required = true;
	if (is_op(peek(&ts), '=')) {
		ts.i++;
		const struct tok *d = peek(&ts);
		f->required = false;
		if (name_is(d, "Field") && is_op(&ts.v[ts.i + 1], '(')) {
			ts.i += 2;
			field_args(s, f, &ts);
		}
	}
	free(ts.v);
}

/* model_config = ConfigDict(extra="...") or class Config: extra = "..." */
static void extra_setting(struct vf_schema *s, struct vf_pymodel *md, const char *text)
{
	/* populate_by_name=True (validate_by_name=True since pydantic 2.11;
	 * allow_population_by_field_name in v1): a field is found by its name
	 * as well as by its alias */
	const char *const by_name[] = {"populate_by_name", "validate_by_name", "allow_population_by_field_name", NULL};
	for (int i = 0; by_name[i]; i++) {
		const char *p = strstr(text, by_name[i]);
		if (p && strstr(p, "True") && (!strchr(p, ',') || strstr(p, "True") < strchr(p, ',')))
			md->by_name = true;
	}
	if (strstr(text, "alias_generator") && !strstr(text, "alias_generator=None") &&
	    !strstr(text, "alias_generator = None")) {
		md->open = true;
		md->open_why = adup(s, "alias_generator: keys are renamed by code", 39);
	}
	const char *e = strstr(text, "extra");
	if (!e)
		return;
	if (strstr(e, "forbid")) {
		md->forbid = true;
	} else if (strstr(e, "allow")) {
		md->forbid = false;
		md->open = true;
		md->open_why = adup(s, "extra=\"allow\"", 13);
	} else if (strstr(e, "ignore")) {
		md->forbid = false;
	}
}

/* The string constants of a before-validator's body: keys it may consume. */
static void before_validator(struct vf_schema *s, const struct pymod *m, struct vf_pymodel *md, size_t def,
			     size_t end)
{
	for (size_t i = def + 1; i < end && m->lines[i].indent > m->lines[def].indent; i++) {
		struct toks ts;
		if (!tokenize(m->lines[i].text, &ts))
			return;
		for (size_t k = 0; k < ts.n; k++) {
			if (ts.v[k].k != T_STR)
				continue;
			char *v = str_value(s, &ts.v[k]);
			bool ident = v && *v && (isalpha((unsigned char)*v) || *v == '_');
			for (const char *p = v; ident && *p; p++)
				ident = isalnum((unsigned char)*p) || *p == '_';
			if (ident)
				add_consumed(s, md, v);
		}
		free(ts.v);
	}
}

static void class_body(struct vf_schema *s, const struct pymod *m, struct vf_pymodel *md, size_t at, int depth)
{
	size_t end = at + 1;
	while (end < m->nlines && m->lines[end].indent > m->lines[at].indent)
		end++;
	if (end == at + 1)
		return;
	size_t body = m->lines[at + 1].indent;
	bool before = false, pending = false;
	struct vf_pyvalidator v;
	for (size_t i = at + 1; i < end; i++) {
		const struct lline *l = &m->lines[i];
		if (l->indent != body)
			continue;
		if (l->text[0] == '@') {
			struct vf_pyvalidator d;
			if (decorator(s, l->text, &d)) {
				v = d;
				pending = true;
				before = before || (!d.nfields && strcmp(d.mode, "after") != 0);
			}
		} else if (strncmp(l->text, "def ", 4) == 0 || strncmp(l->text, "async def ", 10) == 0) {
			if (before)
				before_validator(s, m, md, i, end);
			if (pending) {
				const char *nm = l->text + (l->text[0] == 'a' ? 10 : 4);
				v.name = adup(s, nm, strcspn(nm, "( :"));
				v.file = m->file;
				v.line = l->line;
				add_validator(s, md, &v);
			}
			before = pending = false;
		} else if (strncmp(l->text, "model_config", 12) == 0) {
			extra_setting(s, md, l->text);
		} else if (strncmp(l->text, "class Config", 12) == 0) {
			for (size_t k = i + 1; k < end && m->lines[k].indent > body; k++)
				extra_setting(s, md, m->lines[k].text);
		} else {
			field_line(s, m, md, l, depth);
		}
	}
}

static struct vf_pymodel *build_class(struct vf_schema *s, const struct pymod *m, size_t at, int depth)
{
	const char *hdr = m->lines[at].text + 6;
	size_t nl = strcspn(hdr, "(:");
	for (size_t i = 0; i < s->nbuilt; i++)
		if (s->built[i].mod == m && strlen(s->built[i].name) == nl &&
		    strncmp(s->built[i].name, hdr, nl) == 0)
			return s->built[i].model;
	struct built *nb = agrow(s, s->built, &s->abuilt, s->nbuilt, sizeof *nb);
	struct vf_pymodel *md = anew(s, sizeof *md);
	if (!nb || !md || depth > VF_SCHEMA_MAX_DEPTH)
		return NULL;
	s->built = nb;
	md->name = adup(s, hdr, nl);
	md->file = m->file;
	md->line = m->lines[at].line;
	md->building = true;
	s->built[s->nbuilt++] = (struct built){m, md->name, md};
	if (!bases(s, m, md, hdr, depth)) {
		s->built[s->nbuilt - 1].model = NULL; /* not a pydantic model */
		return NULL;
	}
	class_body(s, m, md, at, depth);
	md->building = false;
	return md;
}

/* ---- public ------------------------------------------------------------------------ */

static vf_status build_root(struct vf_schema *s, struct pymod *m, const char *root_class, struct vf_error *err)
{
	size_t at;
	bool is_class;
	if (s->syntax[0])
		return vf_error_set(err, VF_ERR, "%s", s->syntax);
	if (!find_def(m, root_class, &at, &is_class) || !is_class)
		return vf_error_set(err, VF_ERR, "%s: no class %s (expected the trainer's config model)", m->file,
				    root_class);
	s->root = build_class(s, m, at, 0);
	if (s->oom)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	if (s->syntax[0]) /* Python would stop importing here: so does the trainer */
		return vf_error_set(err, VF_ERR, "%s", s->syntax);
	if (!s->root)
		return vf_error_set(err, VF_ERR, "%s: class %s is not a pydantic model (no BaseModel base)",
				    m->file, root_class);
	return VF_OK;
}

/* "src/ltx_trainer/config.py" -> package root "src/", module "ltx_trainer.config". */
static void module_name(const char *file, char *root, size_t rn, char *name, size_t nn)
{
	const char *rel = file;
	root[0] = '\0';
	if (strncmp(file, "src/", 4) == 0) {
		snprintf(root, rn, "src/");
		rel = file + 4;
	}
	snprintf(name, nn, "%s", rel);
	char *dot = strrchr(name, '.');
	if (dot && strcmp(dot, ".py") == 0)
		*dot = '\0';
	for (char *p = name; *p; p++)
		if (*p == '/')
			*p = '.';
	size_t l = strlen(name);
	if (l > 9 && strcmp(name + l - 9, ".__init__") == 0)
		name[l - 9] = '\0';
}

vf_status vf_schema_load(const char *dir, const char *file, const char *root_class, struct vf_schema **out,
			 struct vf_error *err)
{
	*out = NULL;
	struct vf_schema *s = calloc(1, sizeof *s);
	if (!s)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	snprintf(s->dir, sizeof s->dir, "%s", dir);
	char root[8], name[512], path[2048];
	module_name(file, root, sizeof root, name, sizeof name);
	s->pkg_root = root[0] ? "src/" : "";
	snprintf(path, sizeof path, "%s/%s", dir, file);
	char *text = NULL;
	size_t len = 0;
	vf_status st = read_file(path, &text, &len, err);
	if (st != VF_OK) {
		vf_schema_free(s);
		return st;
	}
	free(text);
	struct pymod *m = module(s, name);
	st = m ? build_root(s, m, root_class, err) : vf_error_set(err, VF_ENOMEM, "out of memory");
	if (st != VF_OK) {
		vf_schema_free(s);
		return st;
	}
	*out = s;
	return VF_OK;
}

vf_status vf_schema_parse_mem(const char *text, size_t len, const char *name, const char *root_class,
			      struct vf_schema **out, struct vf_error *err)
{
	*out = NULL;
	if (len > VF_SCHEMA_MAX_BYTES)
		return vf_error_set(err, VF_ERR, "%s: larger than the 2 MiB limit for a Python source", name);
	struct vf_schema *s = calloc(1, sizeof *s);
	if (!s)
		return vf_error_set(err, VF_ENOMEM, "out of memory");
	s->pkg_root = "";
	struct pymod *m = &s->mods[s->nmods++];
	m->name = "__main__";
	m->file = adup(s, name, strlen(name));
	char *copy = malloc(len + 1);
	vf_status st = copy ? VF_OK : VF_ENOMEM;
	if (copy) {
		memcpy(copy, text, len);
		copy[len] = '\0';
		st = split_lines(s, m, copy, len);
		free(copy);
	}
	m->loaded = st == VF_OK;
	if (st == VF_OK) {
		index_imports(s, m);
		st = build_root(s, m, root_class, err);
	} else {
		vf_error_set(err, st, "out of memory");
	}
	if (st != VF_OK) {
		vf_schema_free(s);
		return st;
	}
	*out = s;
	return VF_OK;
}

const struct vf_pymodel *vf_schema_root(const struct vf_schema *s)
{
	return s ? s->root : NULL;
}

const struct vf_pymodel *vf_schema_model(const struct vf_schema *s, const char *name)
{
	for (size_t i = 0; s && i < s->nbuilt; i++)
		if (s->built[i].model && strcmp(s->built[i].name, name) == 0)
			return s->built[i].model;
	return NULL;
}

const struct vf_pyfield *vf_pymodel_field(const struct vf_pymodel *m, const char *name)
{
	for (size_t i = 0; m && i < m->nfields; i++)
		if (strcmp(m->fields[i].name, name) == 0)
			return &m->fields[i];
	return NULL;
}

bool vf_pyfield_accepts(const struct vf_pymodel *m, const struct vf_pyfield *f, const char *key)
{
	for (size_t i = 0; i < f->naliases; i++)
		if (strcmp(f->aliases[i], key) == 0)
			return true;
	return (!f->naliases || (m && m->by_name)) && strcmp(f->name, key) == 0;
}

const struct vf_pyfield *vf_pymodel_field_for_key(const struct vf_pymodel *m, const char *key)
{
	for (size_t i = 0; m && i < m->nfields; i++)
		if (vf_pyfield_accepts(m, &m->fields[i], key))
			return &m->fields[i];
	return NULL;
}

bool vf_pymodel_consumes(const struct vf_pymodel *m, const char *key)
{
	for (size_t i = 0; m && i < m->nconsumed; i++)
		if (strcmp(m->consumed[i], key) == 0)
			return true;
	return false;
}

void vf_schema_stats(const struct vf_schema *s, size_t *models, size_t *fields, size_t *files)
{
	*models = *fields = *files = 0;
	for (size_t i = 0; s && i < s->nbuilt; i++)
		if (s->built[i].model) {
			(*models)++;
			*fields += s->built[i].model->nfields;
		}
	for (size_t i = 0; s && i < s->nmods; i++)
		*files += s->mods[i].loaded;
}

static void append(char *out, size_t n, const char *fmt, const char *a)
{
	size_t l = strlen(out);
	if (l < n)
		snprintf(out + l, n - l, fmt, a);
}

void vf_pytype_text(const struct vf_pytype *t, char *out, size_t n)
{
	static const char *const names[] = {"Any", "str", "int", "float", "bool", "None", "Literal",
					    "list", "tuple", "dict", "model", "union", "unknown"};
	if (!n)
		return;
	out[0] = '\0';
	if (!t)
		return;
	if (t->kind == VF_PY_MODEL) {
		append(out, n, "%s", t->model ? t->model->name : "?");
	} else if (t->kind == VF_PY_UNKNOWN) {
		append(out, n, "%s", t->text ? t->text : "?");
	} else if (t->kind == VF_PY_LITERAL) {
		for (size_t i = 0; i < t->nliterals; i++) {
			append(out, n, i ? ", " : "", NULL);
			append(out, n, t->literals[i].kind == VF_PY_STR ? "'%s'" : "%s", t->literals[i].text);
		}
	} else if (t->kind == VF_PY_UNION) {
		for (size_t i = 0; i < t->nargs; i++) {
			char sub[256];
			vf_pytype_text(t->args[i], sub, sizeof sub);
			append(out, n, i ? " | %s" : "%s", sub);
		}
	} else {
		append(out, n, "%s", names[t->kind]);
	}
}

static bool type_has_path(const struct vf_pytype *t, const char *path, int depth);

static bool model_has_path(const struct vf_pymodel *m, const char *path, int depth)
{
	if (!m || depth > VF_SCHEMA_MAX_DEPTH)
		return false;
	if (m->open)
		return true;
	size_t l = strcspn(path, ".");
	char key[256];
	snprintf(key, sizeof key, "%.*s", (int)(l < sizeof key ? l : sizeof key - 1), path);
	const struct vf_pyfield *f = vf_pymodel_field_for_key(m, key);
	return f && (!path[l] || type_has_path(f->type, path + l + 1, depth + 1));
}

static bool type_has_path(const struct vf_pytype *t, const char *path, int depth)
{
	if (!t || depth > VF_SCHEMA_MAX_DEPTH)
		return false;
	switch (t->kind) {
	case VF_PY_MODEL: return model_has_path(t->model, path, depth + 1);
	case VF_PY_ANY:
	case VF_PY_DICT:
	case VF_PY_UNKNOWN: return true;
	case VF_PY_UNION:
		for (size_t i = 0; i < t->nargs; i++)
			if (type_has_path(t->args[i], path, depth + 1))
				return true;
		return false;
	case VF_PY_LIST:
	case VF_PY_TUPLE: {
		size_t l = strspn(path, "0123456789");
		if (!l || (path[l] && path[l] != '.'))
			return false;
		return !path[l] || (t->nargs && type_has_path(t->args[0], path + l + 1, depth + 1));
	}
	default: return false;
	}
}

bool vf_schema_has_path(const struct vf_schema *s, const char *path)
{
	return s && s->root && *path && model_has_path(s->root, path, 0);
}
