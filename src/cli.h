/* cli.h - what every subcommand shares: the command record, printing of
 * errors in the one style, colour policy, JSON output and aligned tables.
 * Only src/ prints; lib/ returns values. */
#ifndef VF_CLI_H
#define VF_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"

/* Exit codes (README, --help). */
enum { VF_EXIT_OK = 0, VF_EXIT_FAIL = 1, VF_EXIT_USAGE = 2 };

struct vf_option;
struct vf_cli_command {
	const char *name;
	const char *summary; /* one line for `vramfit --help` */
	const char *usage;   /* synopsis and prose of `vramfit help <name>` */
	const struct vf_option *options; /* the option table (parse-options.h) */
	const char *tail;    /* after the option list: the exit status */
	int (*run)(int argc, char **argv); /* argv[0] = the command name */
};

/* Before a command allocates: the heap's first megabytes on transparent
 * huge pages where the kernel allows it (src/heap.c; VRAMFIT_HEAP=plain:
 * glibc's defaults). */
void vf_cli_heap_setup(void);

/* `vramfit help <name>`: usage, the option list from the table, tail. */
void vf_cli_print_help(FILE *f, const struct vf_cli_command *c);

/* "vramfit: error: <msg>" on stderr; returns VF_EXIT_FAIL. */
int vf_cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print an error value; returns VF_EXIT_FAIL (VF_EXIT_USAGE for VF_EUSAGE). */
int vf_cli_fail_err(const struct vf_error *err);
/* "vramfit <cmd>: <msg>" + a hint to the help; returns VF_EXIT_USAGE. */
int vf_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "vramfit: note: <msg>" / "vramfit: warning: <msg>" on stderr. */
void vf_cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vf_cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* s through the terminal filter (term.h), for printing a name read from
 * outside (a path, a key). Borrowed: one of 8 static buffers, reused in turn;
 * long text is cut. */
const char *vf_cli_safe(const char *s);

/* Colour only on a terminal, never with NO_COLOR or TERM=dumb. */
bool vf_cli_color(FILE *f);
/* ANSI sequences or "" when colour is off. */
const char *vf_cli_sgr(FILE *f, const char *code);

/* Print JSON (cJSON's formatted style, tab-indented) and a newline to stdout; frees nothing. */
void vf_cli_print_json(const cJSON *root);

/* Human units: "12.34 GiB", "512 MiB", "1.2 s", "$12.30". out >= 32 bytes. */
const char *vf_fmt_bytes(char *out, size_t n, double bytes);
const char *vf_fmt_seconds(char *out, size_t n, double s);
/* A parameter count in words: "6.74 B", "124.4 M", "218.9 K", "512"; "?"
 * when negative (unknown). */
const char *vf_fmt_params(char *out, size_t n, int64_t v);
/* Dollars: "$0.16", "$54", "-" when negative (unknown). */
const char *vf_fmt_usd(char *out, size_t n, double usd);

/* Aligned tables: add rows of strings, print with column widths. */
#define VF_TABLE_MAXCOL 16
struct vf_table {
	int ncol;
	int nrow;
	int alloc;
	char ***cells;           /* [row][col], row 0 = header */
	bool right[VF_TABLE_MAXCOL];
};
void vf_table_init(struct vf_table *t, int ncol, const char *const *headers);
void vf_table_set_right(struct vf_table *t, int col, bool right);
void vf_table_add(struct vf_table *t, const char *const *cells);
void vf_table_addf(struct vf_table *t, const char *fmt0, ...); /* ncol strings as varargs */
void vf_table_print(const struct vf_table *t, FILE *f);
void vf_table_release(struct vf_table *t);

/* A whole number text (strtod syntax, nothing trailing, not empty) within
 * [lo, hi]; `integer` also requires no fraction. The one number parser of
 * the command-line flags. */
bool vf_cli_number(const char *s, double lo, double hi, bool integer, double *out);

/* True when argv has -h or --help before any "--" (main.c asks it). */
bool vf_cli_wants_help(int argc, char **argv);

/* Whether the last sweep of the tune verb (cmd-tune.c) was ended by
 * SIGINT or SIGTERM: vramfit run records its tune stage as stopped. */
bool vf_cli_tune_interrupted(void);

/* --gpu ID:N and --gpu ID --gpus N are one setup, decided here for every
 * verb: counts[i] is how many GPUs of kind ids[i] were listed (0: none
 * named, the verb picks). With --gpus M each listed kind runs M (a kind
 * listed with a count above 1 must have at least M); without, kinds that
 * all give the same count N > 1 set --gpus N. Call before
 * vf_setup_finish(). Returns -1, else the exit code of the usage error
 * printed. */
struct vf_setup;
/* The usage error of a GPU kind given twice (--gpu a, then --gpu b of the
 * same kind), in the words of every verb, into msg (n bytes): each --gpu
 * is a row, so the cards of one kind are written once with their count,
 * named concretely (rtx-4090 twice: rtx-4090:2). */
void vf_cli_gpu_twice(char *msg, size_t n, const char *a, const char *b);
int vf_cli_gpu_counts(const char *cmd, const char *const *ids, int *counts, int n,
		      struct vf_setup *s);

/* --float8 (the flag or the stack's) trains the linears through torchao's
 * Float8Linear, whose matmul is torch._scaled_mm: CUDA runs it on compute
 * capability 8.9 or later only (PyTorch aten/src/ATen/native/cuda/Blas.cpp,
 * _scaled_mm_out_cuda's capability check), and torchtitan refuses the swap
 * below it (torchtitan/components/quantization/float8.py, Float8LinearConverter:
 * "float8 is only supported on SM89 or later" unless float8.emulate).
 * Every verb that trains decides with these, card by card:
 * vf_cli_float8_keep is true for a card that can run the setup; a card
 * given or probed (common false) that cannot sets rc to the usage error,
 * printed; one of the common cards shown by default is left out and named
 * in `dropped`. vf_cli_float8_done: rc, or the error when none was kept,
 * or -1. vf_cli_float8_words: the assumption naming the cards left out. */
#define VF_CLI_FLOAT8_WHY "torchao's float8 matmul (torch._scaled_mm) needs compute capability 8.9 or later " \
			  "(Ada, Hopper, Blackwell)"
struct vf_gpu_spec;
struct vf_cli_float8 {
	const char *cmd;
	bool common;        /* the common cards shown by default, not cards given */
	int rc;             /* -1, or the exit code of a refusal */
	char dropped[256];  /* the common cards left out, named ("" none) */
};
bool vf_cli_float8_keep(struct vf_cli_float8 *f, const struct vf_setup *s, const struct vf_gpu_spec *g);
int vf_cli_float8_done(struct vf_cli_float8 *f, int kept, int total);
char *vf_cli_float8_words(const struct vf_cli_float8 *f, char *o, size_t n);

/* --mode infer: the sequences decoding at once are one number, named by
 * --users N or by --batch N (the prompts of one forward): --batch given
 * alone sets *users; both given must agree (else a usage error of cmd).
 * Returns -1 or the exit code. */
int vf_cli_infer_users(const char *cmd, const struct vf_setup *s, int64_t *users);

/* The setup facts every verb's header shows alike: the precision with
 * "(TF32)" where fp32 matmuls run on the TF32 cores ("fp32 (TF32)"), and
 * the training stack with what its profile sets ("training stack hf
 * (data/stacks/hf.json: adapters fp32, loss full; ...)"). Return o. */
char *vf_cli_precision_words(const struct vf_setup *s, char *o, size_t n);
char *vf_cli_stack_words(const struct vf_setup *s, char *o, size_t n);

#endif
