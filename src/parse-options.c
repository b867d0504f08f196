/* parse-options.c - the one command-line parser (parse-options.h): every
 * verb's argv read with its option table, the same way for every verb;
 * "did you mean" by edit distance over the table; the help's option list
 * printed from the table. */
#include "parse-options.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct found {
	const struct vf_option *o;
	size_t off; /* of the table the option belongs to (included tables) */
};

/* The option called name[0..len) (or short name c when len == 0). */
static bool find(const struct vf_option *opts, const char *name, size_t len, char c, size_t off,
		 struct found *out)
{
	for (const struct vf_option *o = opts; o->type != VF_OPT_END; o++) {
		if (o->type == VF_OPT_INCLUDE) {
			if (find(o->sub, name, len, c, off + o->off, out))
				return true;
			continue;
		}
		if (!o->name)
			continue;
		bool hit = len ? strlen(o->name) == len && strncmp(o->name, name, len) == 0
			       : c && o->short_name == c;
		if (hit) {
			out->o = o;
			out->off = off;
			return true;
		}
	}
	return false;
}

/* ---- did you mean ---- */

#define DIST_MAX 64

int vf_opt_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	if (n >= DIST_MAX || m >= DIST_MAX)
		return (int)(n > m ? n : m);
	int d[DIST_MAX + 1][DIST_MAX + 1];
	for (size_t i = 0; i <= n; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			int cost = a[i - 1] != b[j - 1];
			int v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1; /* a transposition */
			d[i][j] = v;
		}
	return d[n][m];
}

/* How far word is from name for a suggestion: the edit distance, or 1 when
 * word begins name (an abbreviation of 3 characters or more). */
static int score(const char *word, const char *name)
{
	size_t l = strlen(word);
	if (l >= 3 && strncmp(name, word, l) == 0)
		return 1;
	return vf_opt_distance(word, name);
}

bool vf_opt_suggest(const char *word, const char *const *names, size_t n, const char *prefix,
		    char *out, size_t outn)
{
	int limit = (int)strlen(word) / 3;
	if (limit < 1)
		limit = 1;
	if (limit > 3)
		limit = 3;
	int best = limit + 1;
	size_t pick[2] = {0, 0};
	int npick = 0;
	for (size_t i = 0; i < n; i++) {
		int s = score(word, names[i]);
		if (s < best) {
			best = s;
			pick[0] = i;
			npick = 1;
		} else if (s == best && npick == 1 && strcmp(names[pick[0]], names[i]) != 0) {
			pick[npick++] = i;
		}
	}
	if (npick == 0)
		return false;
	if (npick == 1)
		snprintf(out, outn, "'%s%s'", prefix, names[pick[0]]);
	else
		snprintf(out, outn, "'%s%s' or '%s%s'", prefix, names[pick[0]], prefix,
			 names[pick[1]]);
	return true;
}

struct names {
	const char *v[256];
	size_t n;
};

static void collect_name(const struct vf_option *o, void *ctx)
{
	struct names *ns = ctx;
	if (o->name && !(o->flags & VF_OPTF_HIDDEN) && ns->n < 256)
		ns->v[ns->n++] = o->name;
}

static int unknown(const char *cmd, const struct vf_option *opts, const char *arg)
{
	struct names ns = {.n = 0};
	vf_opt_walk(opts, collect_name, &ns);
	char word[DIST_MAX], hint[200];
	const char *w = arg[1] == '-' ? arg + 2 : arg + 1;
	snprintf(word, sizeof word, "%.*s", (int)strcspn(w, "="), w);
	if (vf_opt_suggest(word, ns.v, ns.n, "--", hint, sizeof hint))
		return vf_cli_usage(cmd, "unknown option '%s'; did you mean %s?", arg, hint);
	return vf_cli_usage(cmd, "unknown option '%s'", arg);
}

/* ---- values ---- */

static bool parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = {"true", "1", "yes", "on"}, *const no[] = {"false", "0", "no", "off"};
	for (size_t i = 0; i < 4; i++) {
		if (strcmp(v, yes[i]) == 0 || strcmp(v, no[i]) == 0) {
			*out = strcmp(v, yes[i]) == 0;
			return true;
		}
	}
	return false;
}

static void join_choices(const char *const *c, char *out, size_t n, const char *sep,
			 const char *last)
{
	size_t k = 0;
	out[0] = 0;
	for (size_t i = 0; c[i]; i++) {
		const char *s = i == 0 ? "" : c[i + 1] ? sep : last;
		int w = snprintf(out + k, n - k, "%s%s", s, c[i]);
		if (w < 0 || (size_t)w >= n - k)
			break;
		k += (size_t)w;
	}
}

static int set_choice(const char *cmd, const struct vf_option *o, const char *v, void *field)
{
	for (size_t i = 0; o->choices[i]; i++)
		if (strcmp(v, o->choices[i]) == 0) {
			*(const char **)field = o->choices[i];
			return -1;
		}
	char list[300];
	join_choices(o->choices, list, sizeof list, ", ", " or ");
	return vf_cli_usage(cmd, "--%s %s: expected %s", o->name, v, list);
}

static int set_number(const char *cmd, const struct vf_option *o, const char *v, void *field)
{
	double x;
	bool whole = o->type == VF_OPT_INT;
	if (!vf_cli_number(v, o->lo, o->hi, whole, &x) && o->expect)
		return vf_cli_usage(cmd, "--%s %s: expected %s", o->name, v, o->expect);
	if (!vf_cli_number(v, o->lo, o->hi, whole, &x))
		return vf_cli_usage(cmd, "--%s %s: expected a %s from %.15g to %.15g", o->name, v,
				    whole ? "whole number" : "number", o->lo, o->hi);
	if (whole)
		*(int64_t *)field = (int64_t)x;
	else
		*(double *)field = x;
	return -1;
}

/* Gives the option its value (NULL: a switch). Returns -1 or an exit code. */
static int set(const char *cmd, const struct found *f, const char *v, void *base)
{
	const struct vf_option *o = f->o;
	char *field = (char *)base + f->off + o->off;
	if (v && !*v && (o->flags & VF_OPTF_NONEMPTY))
		return vf_cli_usage(cmd, "--%s: expected %s, got an empty value", o->name,
				    o->argh ? o->argh : "a value");
	switch (o->type) {
	case VF_OPT_BOOL:
		if (v && !parse_bool(v, (bool *)field))
			return vf_cli_usage(cmd, "--%s: expected true or false, got '%s'", o->name, v);
		if (!v)
			*(bool *)field = true;
		return -1;
	case VF_OPT_STRING:
		*(const char **)field = v;
		return -1;
	case VF_OPT_INT:
	case VF_OPT_DOUBLE:
		return set_number(cmd, o, v, field);
	case VF_OPT_CHOICE:
		return set_choice(cmd, o, v, field);
	case VF_OPT_LIST: {
		struct vf_opt_list *l = (struct vf_opt_list *)field;
		if (l->n >= VF_OPT_LIST_MAX)
			return vf_cli_usage(cmd, "--%s: at most %d", o->name, VF_OPT_LIST_MAX);
		l->v[l->n++] = v;
		return -1;
	}
	case VF_OPT_CALLBACK: {
		struct vf_error err = {0};
		if (o->cb(o, v, (char *)base + f->off, &err) == VF_OK) /* its field: base + o->off */
			return -1;
		return err.code == VF_EUSAGE ? vf_cli_usage(cmd, "%s", err.msg) : vf_cli_fail_err(&err);
	}
	default:
		return -1;
	}
}

static bool takes_value(const struct vf_option *o)
{
	return o->type == VF_OPT_CALLBACK ? o->argh != NULL : o->type != VF_OPT_BOOL;
}

/* One option at argv[*i] (long or short); advances *i past its value and
 * records it in seen (when not NULL). */
static int one_option(const char *cmd, const struct vf_option *opts, void *base, int argc,
		      char **argv, int *i, bool *unknown_out, struct vf_opt_seen *seen)
{
	const char *a = argv[*i], *v = NULL;
	struct found f;
	bool lng = a[1] == '-', attached = false;
	const char *eq = lng ? strchr(a + 2, '=') : NULL;
	if (lng ? !find(opts, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2), 0, 0, &f)
		: !find(opts, NULL, 0, a[1], 0, &f)) {
		*unknown_out = true;
		return -1;
	}
	if (eq) {
		v = eq + 1;
		attached = true;
	} else if (!lng && a[2]) {
		v = a + 2;
		attached = true;
	}
	if (takes_value(f.o) && !attached) {
		if (*i + 1 >= argc)
			return vf_cli_usage(cmd, "--%s: expected a value%s%s", f.o->name,
					    f.o->argh ? " " : "", f.o->argh ? f.o->argh : "");
		v = argv[++*i];
	} else if (!takes_value(f.o) && attached && f.o->type == VF_OPT_CALLBACK &&
		   !(f.o->flags & VF_OPTF_OPTARG)) {
		return vf_cli_usage(cmd, "--%s takes no value", f.o->name);
	}
	int k = 0;
	while (seen && k < seen->n && seen->o[k] != f.o)
		k++;
	if (seen && k == seen->n && seen->n < VF_OPT_SEEN_MAX)
		seen->o[seen->n++] = f.o;
	return set(cmd, &f, v, base);
}

int vf_opt_parse(const char *cmd, const struct vf_option *opts, void *base, int argc,
		 char **argv, unsigned flags, int *nargs)
{
	return vf_opt_parse_seen(cmd, opts, base, argc, argv, flags, nargs, NULL);
}

const char *vf_opt_seen_other(const struct vf_opt_seen *seen, const char *const *allowed)
{
	for (int i = 0; seen && i < seen->n; i++) {
		const char *const *p = allowed;
		while (*p && strcmp(*p, seen->o[i]->name) != 0)
			p++;
		if (!*p)
			return seen->o[i]->name;
	}
	return NULL;
}

int vf_opt_parse_seen(const char *cmd, const struct vf_option *opts, void *base, int argc,
		      char **argv, unsigned flags, int *nargs, struct vf_opt_seen *seen)
{
	int n = 0;
	bool only_args = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool is_opt = !only_args && a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9');
		if (is_opt && strcmp(a, "--") == 0) {
			only_args = true;
			continue;
		}
		if (!is_opt) {
			argv[n++] = argv[i];
			continue;
		}
		bool unk = false;
		int rc = one_option(cmd, opts, base, argc, argv, &i, &unk, seen);
		if (rc >= 0)
			return rc;
		if (unk && (flags & VF_PARSE_KEEP_UNKNOWN))
			argv[n++] = argv[i];
		else if (unk)
			return unknown(cmd, opts, a);
	}
	*nargs = n;
	return -1;
}

void vf_opt_walk(const struct vf_option *opts, vf_opt_visit fn, void *ctx)
{
	for (const struct vf_option *o = opts; o->type != VF_OPT_END; o++) {
		if (o->type == VF_OPT_INCLUDE)
			vf_opt_walk(o->sub, fn, ctx);
		else
			fn(o, ctx);
	}
}

const char *vf_opt_argh(const struct vf_option *o, char *out, size_t n)
{
	out[0] = 0;
	if (o->type == VF_OPT_CHOICE && !o->argh)
		join_choices(o->choices, out, n, "|", "|");
	else if (o->argh)
		snprintf(out, n, "%s", o->argh);
	return out;
}

/* ---- the help's option list ---- */

#define HELP_COL 30

struct help_ctx {
	FILE *f;
	bool started;
};

static void help_row(const struct vf_option *o, void *ctx)
{
	struct help_ctx *h = ctx;
	if (o->type == VF_OPT_GROUP) {
		fprintf(h->f, "%s%s\n", h->started ? "\n" : "", o->help);
		h->started = true;
		return;
	}
	if (o->flags & VF_OPTF_HIDDEN)
		return;
	if (!h->started) {
		fputs("Options:\n", h->f);
		h->started = true;
	}
	char left[200], arg[200];
	vf_opt_argh(o, arg, sizeof arg);
	if (o->short_name)
		snprintf(left, sizeof left, "  -%c, --%s%s%s", o->short_name, o->name, *arg ? " " : "", arg);
	else
		snprintf(left, sizeof left, "  --%s%s%s", o->name, *arg ? " " : "", arg);
	int w = (int)strlen(left);
	fputs(left, h->f);
	const char *p = o->help ? o->help : "";
	if (w > HELP_COL - 2) {
		fputc('\n', h->f);
		w = 0;
	}
	if (!*p)
		fputc('\n', h->f);
	for (bool first = true; *p; first = false) {
		size_t l = strcspn(p, "\n");
		fprintf(h->f, "%*s%.*s\n", first ? HELP_COL - w : HELP_COL, "", (int)l, p);
		p += l + (p[l] == '\n');
	}
}

void vf_opt_print_help(FILE *f, const struct vf_option *opts)
{
	struct help_ctx h = {.f = f, .started = false};
	vf_opt_walk(opts, help_row, &h);
}
