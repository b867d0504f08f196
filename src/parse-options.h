/* parse-options.h - the command line as data. Each verb declares one table
 * of options (name, short name, the value's kind and range or choices, a
 * help line, the field it sets or a small callback); one parser reads every
 * verb's argv with it (--opt value, --opt=value, -o value, --, repeated
 * options: the last value wins, a list keeps them all), and the verb's
 * --help option list, the man page's OPTIONS section and the shell
 * completions are printed from the same table (parse-options.c,
 * cli-docs.c). Only src/ sees argv; lib/ takes named values. */
#ifndef VF_PARSE_OPTIONS_H
#define VF_PARSE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vramfit/base/error.h"

enum vf_opt_type {
	VF_OPT_END,
	VF_OPT_GROUP,    /* a heading in the help; help = the title */
	VF_OPT_INCLUDE,  /* another table; its fields are relative to off */
	VF_OPT_BOOL,     /* bool field = true (--name=false sets false) */
	VF_OPT_STRING,   /* const char * field */
	VF_OPT_INT,      /* int64_t field, a whole number in [lo, hi] */
	VF_OPT_DOUBLE,   /* double field, a number in [lo, hi] */
	VF_OPT_CHOICE,   /* const char * field, one of choices */
	VF_OPT_LIST,     /* struct vf_opt_list field: every value, in order */
	VF_OPT_CALLBACK, /* cb(option, value, base): value NULL for a switch */
};

/* Flags of an option. */
enum {
	VF_OPTF_NONEMPTY = 1 << 0, /* the value may not be "" */
	VF_OPTF_OPTARG = 1 << 1,   /* a switch callback that also takes --name=VALUE */
	VF_OPTF_HIDDEN = 1 << 2,   /* accepted, not listed */
};

#define VF_OPT_LIST_MAX 64
struct vf_opt_list {
	const char *v[VF_OPT_LIST_MAX];
	int n;
};

struct vf_option;
/* Sets what the option means from its value (NULL for a switch); base is
 * the struct the table describes (the option's field at base + o->off). Fails
 * with VF_EUSAGE naming the option (exit 2), another code for a failure
 * (exit 1). */
typedef vf_status (*vf_opt_cb)(const struct vf_option *o, const char *value, void *base,
			       struct vf_error *err);

struct vf_option {
	enum vf_opt_type type;
	const char *name;  /* long name without the dashes */
	char short_name;   /* 0: none */
	const char *argh;  /* the value's name in the help ("N", "FILE"); NULL: a switch */
	const char *help;  /* lines separated by '\n' */
	size_t off;        /* the field in the verb's argument struct */
	double lo, hi;     /* VF_OPT_INT, VF_OPT_DOUBLE */
	const char *const *choices; /* NULL-terminated: VF_OPT_CHOICE checks; else completion */
	vf_opt_cb cb;
	const struct vf_option *sub; /* VF_OPT_INCLUDE */
	unsigned flags;
	const char *complete; /* completion of the value: "file", "dir", or NULL */
	const char *expect;   /* a bad value's error: "expected <expect>" (default from lo, hi) */
};

/* Table rows; OPT_T names the verb's argument struct (#define it before). */
#define OPT_END() {.type = VF_OPT_END}
#define OPT_GROUP(title) {.type = VF_OPT_GROUP, .help = (title)}
#define OPT_INCLUDE(table, field) \
	{.type = VF_OPT_INCLUDE, .sub = (table), .off = offsetof(OPT_T, field)}
#define OPT_BOOL(n, field, h) \
	{.type = VF_OPT_BOOL, .name = (n), .help = (h), .off = offsetof(OPT_T, field)}
#define OPT_STRING(n, a, field, h) \
	{.type = VF_OPT_STRING, .name = (n), .argh = (a), .help = (h), \
	 .off = offsetof(OPT_T, field), .flags = VF_OPTF_NONEMPTY}
/* A string that may be empty (free text, or checked by the library). */
#define OPT_TEXT(n, a, field, h) \
	{.type = VF_OPT_STRING, .name = (n), .argh = (a), .help = (h), .off = offsetof(OPT_T, field)}
#define OPT_FILE(n, a, field, h) \
	{.type = VF_OPT_STRING, .name = (n), .argh = (a), .help = (h), \
	 .off = offsetof(OPT_T, field), .flags = VF_OPTF_NONEMPTY, .complete = "file"}
#define OPT_DIR(n, a, field, h) \
	{.type = VF_OPT_STRING, .name = (n), .argh = (a), .help = (h), \
	 .off = offsetof(OPT_T, field), .flags = VF_OPTF_NONEMPTY, .complete = "dir"}
#define OPT_INT(n, a, field, l, u, h) \
	{.type = VF_OPT_INT, .name = (n), .argh = (a), .help = (h), \
	 .off = offsetof(OPT_T, field), .lo = (l), .hi = (u)}
#define OPT_DOUBLE(n, a, field, l, u, h) \
	{.type = VF_OPT_DOUBLE, .name = (n), .argh = (a), .help = (h), \
	 .off = offsetof(OPT_T, field), .lo = (l), .hi = (u)}
/* A number whose error says what it is ("a fraction from 0 to 0.99"). */
#define OPT_DOUBLE_X(n, a, field, l, u, what, h) \
	{.type = VF_OPT_DOUBLE, .name = (n), .argh = (a), .help = (h), \
	 .off = offsetof(OPT_T, field), .lo = (l), .hi = (u), .expect = (what)}
#define OPT_CHOICE(n, field, list, h) \
	{.type = VF_OPT_CHOICE, .name = (n), .help = (h), .off = offsetof(OPT_T, field), \
	 .choices = (list)}
#define OPT_LIST(n, a, field, h) \
	{.type = VF_OPT_LIST, .name = (n), .argh = (a), .help = (h), .off = offsetof(OPT_T, field)}
#define OPT_CALLBACK(n, a, f, h) {.type = VF_OPT_CALLBACK, .name = (n), .argh = (a), .help = (h), .cb = (f)}
/* A callback that sets field (at base + o->off). */
#define OPT_CALLBACK_F(n, a, field, f, h) \
	{.type = VF_OPT_CALLBACK, .name = (n), .argh = (a), .help = (h), .cb = (f), \
	 .off = offsetof(OPT_T, field)}

/* Parse flags. */
enum {
	VF_PARSE_KEEP_UNKNOWN = 1 << 0, /* unknown options are kept as arguments */
};

/* Parse argv[1..argc) with the table into base. The arguments that are not
 * options ("-" and, after "--", everything) are moved to argv[0..*nargs) in
 * order. Returns -1 when parsed, else the exit code of the usage error it
 * printed (2; 1 for a callback's failure). */
int vf_opt_parse(const char *cmd, const struct vf_option *opts, void *base, int argc,
		 char **argv, unsigned flags, int *nargs);

/* The options a parse read, each once, in the order first given (a verb's
 * table has fewer than VF_OPT_SEEN_MAX): what a verb checks when one kind
 * of input takes only some of its options, so that none is ignored unsaid. */
#define VF_OPT_SEEN_MAX 256
struct vf_opt_seen {
	const struct vf_option *o[VF_OPT_SEEN_MAX];
	int n;
};
/* vf_opt_parse that also records the options read into seen. */
int vf_opt_parse_seen(const char *cmd, const struct vf_option *opts, void *base, int argc,
		      char **argv, unsigned flags, int *nargs, struct vf_opt_seen *seen);
/* The long name of the first option in seen not among allowed (long
 * names, NULL-terminated), or NULL. */
const char *vf_opt_seen_other(const struct vf_opt_seen *seen, const char *const *allowed);

/* Edit distance (insertions, deletions, substitutions, transpositions). */
int vf_opt_distance(const char *a, const char *b);
/* The one or two names of names[0..n) nearest to word, as
 * "'x'" or "'x' or 'y'" with each name prefixed by prefix, into out; false
 * when none is near enough to suggest. */
bool vf_opt_suggest(const char *word, const char *const *names, size_t n, const char *prefix,
		    char *out, size_t outn);

/* Walks a table, entering included ones: calls fn for every option and
 * group (base offsets not applied). */
typedef void (*vf_opt_visit)(const struct vf_option *o, void *ctx);
void vf_opt_walk(const struct vf_option *opts, vf_opt_visit fn, void *ctx);

/* "VALUE" shown for an option in help, man page: argh, or the choices
 * joined with '|'; "" for a switch. */
const char *vf_opt_argh(const struct vf_option *o, char *out, size_t n);

/* The option list of a verb's help, from its table. */
void vf_opt_print_help(FILE *f, const struct vf_option *opts);

#endif
