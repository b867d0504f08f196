/* cli.c - shared CLI printing: errors, colour, JSON, units and tables. */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse-options.h"
#include "vramfit/base/json.h"
#include "vramfit/estimate/setup.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/base/term.h"

/* "<prefix><message>\n" on stderr, the message through the terminal filter
 * (term.h): it may quote a file name, a key or a trainer's line. */
static void vprint_safe(const char *prefix, const char *fmt, va_list ap)
{
	char msg[VF_ERROR_MAX + 512], clean[4 * sizeof msg];
	vsnprintf(msg, sizeof msg, fmt, ap);
	fprintf(stderr, "%s%s\n", prefix, vf_term_safe(clean, sizeof clean, msg));
}

const char *vf_cli_safe(const char *s)
{
	static char ring[8][4 * 4096];
	static unsigned next;
	char *out = ring[next++ % 8];
	return vf_term_safe(out, sizeof ring[0], s);
}

int vf_cli_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprint_safe("vramfit: error: ", fmt, ap);
	va_end(ap);
	return VF_EXIT_FAIL;
}

int vf_cli_fail_err(const struct vf_error *err)
{
	char clean[4 * VF_ERROR_MAX];
	fprintf(stderr, "vramfit: error: %s\n",
		err->msg[0] ? vf_term_safe(clean, sizeof clean, err->msg) : "unknown failure");
	return err->code == VF_EUSAGE ? VF_EXIT_USAGE : VF_EXIT_FAIL;
}

int vf_cli_usage(const char *cmd, const char *fmt, ...)
{
	char prefix[64];
	snprintf(prefix, sizeof prefix, "vramfit %s: ", cmd);
	va_list ap;
	va_start(ap, fmt);
	vprint_safe(prefix, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try 'vramfit help %s'.\n", cmd);
	return VF_EXIT_USAGE;
}

void vf_cli_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprint_safe("vramfit: note: ", fmt, ap);
	va_end(ap);
}

void vf_cli_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprint_safe("vramfit: warning: ", fmt, ap);
	va_end(ap);
}

bool vf_cli_color(FILE *f)
{
	const char *nc = getenv("NO_COLOR");
	if (nc && *nc)
		return false;
	const char *term = getenv("TERM");
	if (term && strcmp(term, "dumb") == 0)
		return false;
	return isatty(fileno(f));
}

const char *vf_cli_sgr(FILE *f, const char *code)
{
	if (!vf_cli_color(f))
		return "";
	if (strcmp(code, "reset") == 0)
		return "\033[0m";
	if (strcmp(code, "bold") == 0)
		return "\033[1m";
	if (strcmp(code, "red") == 0)
		return "\033[31m";
	if (strcmp(code, "green") == 0)
		return "\033[32m";
	if (strcmp(code, "yellow") == 0)
		return "\033[33m";
	if (strcmp(code, "dim") == 0)
		return "\033[2m";
	return "";
}

void vf_cli_print_json(const cJSON *root)
{
	char *s = vf_json_print(root);
	if (s) {
		fputs(s, stdout);
		fputc('\n', stdout);
		free(s);
	}
}

const char *vf_fmt_bytes(char *out, size_t n, double bytes)
{
	double gib = bytes / (1024.0 * 1024 * 1024);
	if (gib >= 1.0 || gib <= -1.0)
		snprintf(out, n, "%.2f GiB", gib);
	else
		snprintf(out, n, "%.0f MiB", bytes / (1024.0 * 1024));
	return out;
}

const char *vf_fmt_params(char *out, size_t n, int64_t v)
{
	if (v < 0)
		snprintf(out, n, "?");
	else if (v >= 1000000000)
		snprintf(out, n, "%.2f B", (double)v / 1e9);
	else if (v >= 1000000)
		snprintf(out, n, "%.1f M", (double)v / 1e6);
	else if (v >= 1000)
		snprintf(out, n, "%.1f K", (double)v / 1e3);
	else
		snprintf(out, n, "%lld", (long long)v);
	return out;
}

const char *vf_fmt_seconds(char *out, size_t n, double s)
{
	if (s < 0)
		snprintf(out, n, "-");
	else if (s < 1.0)
		snprintf(out, n, "%.0f ms", s * 1000);
	else if (s < 120)
		snprintf(out, n, "%.2f s", s);
	else if (s < 7200)
		snprintf(out, n, "%.1f min", s / 60);
	else if (s < 3 * 86400)
		snprintf(out, n, "%.1f h", s / 3600);
	else
		snprintf(out, n, "%.1f days", s / 86400);
	return out;
}

const char *vf_fmt_usd(char *out, size_t n, double usd)
{
	if (usd < 0)
		snprintf(out, n, "-");
	else if (usd < 100)
		snprintf(out, n, "$%.2f", usd);
	else
		snprintf(out, n, "$%.0f", usd);
	return out;
}

void vf_table_init(struct vf_table *t, int ncol, const char *const *headers)
{
	memset(t, 0, sizeof *t);
	t->ncol = ncol > VF_TABLE_MAXCOL ? VF_TABLE_MAXCOL : ncol;
	vf_table_add(t, headers);
}

void vf_table_set_right(struct vf_table *t, int col, bool right)
{
	if (col >= 0 && col < t->ncol)
		t->right[col] = right;
}

void vf_table_add(struct vf_table *t, const char *const *cells)
{
	if (t->nrow == t->alloc) {
		int n = t->alloc ? t->alloc * 2 : 16;
		char ***p = realloc(t->cells, (size_t)n * sizeof *p);
		if (!p)
			abort();
		t->cells = p;
		t->alloc = n;
	}
	char **row = calloc((size_t)t->ncol, sizeof *row);
	if (!row)
		abort();
	for (int c = 0; c < t->ncol; c++) { /* cells may quote names from files */
		struct vf_buf b;
		vf_buf_init(&b, 0);
		const char *v = cells[c] ? cells[c] : "";
		if (vf_term_sanitize_buf(&b, v, strlen(v), NULL) != VF_OK)
			abort();
		row[c] = vf_buf_detach(&b, NULL);
	}
	t->cells[t->nrow++] = row;
}

void vf_table_addf(struct vf_table *t, const char *fmt0, ...)
{
	const char *cells[VF_TABLE_MAXCOL];
	va_list ap;
	va_start(ap, fmt0);
	cells[0] = fmt0;
	for (int c = 1; c < t->ncol; c++)
		cells[c] = va_arg(ap, const char *);
	va_end(ap);
	vf_table_add(t, cells);
}

/* Display width of UTF-8 text: count code points, not bytes. */
static int utf8_width(const char *s)
{
	int w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

void vf_table_print(const struct vf_table *t, FILE *f)
{
	int width[VF_TABLE_MAXCOL] = {0};
	for (int r = 0; r < t->nrow; r++)
		for (int c = 0; c < t->ncol; c++) {
			int w = utf8_width(t->cells[r][c]);
			if (w > width[c])
				width[c] = w;
		}
	const char *bold = vf_cli_sgr(f, "bold"), *reset = vf_cli_sgr(f, "reset");
	for (int r = 0; r < t->nrow; r++) {
		if (r == 0)
			fputs(bold, f);
		for (int c = 0; c < t->ncol; c++) {
			const char *s = t->cells[r][c];
			int pad = width[c] - utf8_width(s);
			if (c)
				fputs("  ", f);
			if (t->right[c])
				fprintf(f, "%*s%s", pad, "", s);
			else if (c == t->ncol - 1)
				fputs(s, f);
			else
				fprintf(f, "%s%*s", s, pad, "");
		}
		if (r == 0)
			fputs(reset, f);
		fputc('\n', f);
	}
}

void vf_table_release(struct vf_table *t)
{
	for (int r = 0; r < t->nrow; r++) {
		for (int c = 0; c < t->ncol; c++)
			free(t->cells[r][c]);
		free(t->cells[r]);
	}
	free(t->cells);
	memset(t, 0, sizeof *t);
}

bool vf_cli_number(const char *s, double lo, double hi, bool integer, double *out)
{
	if (!s || !*s)
		return false;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi) || (integer && v != floor(v)))
		return false;
	*out = v;
	return true;
}

bool vf_cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return true;
	}
	return false;
}

void vf_cli_gpu_twice(char *msg, size_t n, const char *a, const char *b)
{
	const char *ca = strchr(a, ':'), *cb = strchr(b, ':');
	long na = ca ? strtol(ca + 1, NULL, 10) : 1, nb = cb ? strtol(cb + 1, NULL, 10) : 1;
	int len = ca ? (int)(ca - a) : (int)strlen(a);
	int k = snprintf(msg, n, "--gpu %s: the same GPU as --gpu %s; each --gpu is a row to compare: "
				 "give a kind once, as ID:N for N cards of it",
			 b, a);
	if (k < 0 || (size_t)k >= n || strchr(a, '=') || strchr(a, ',') || na < 1 || nb < 1 ||
	    na + nb > 4096)
		return;
	snprintf(msg + k, n - (size_t)k, " (here --gpu %.*s:%ld)", len, a, na + nb);
}

int vf_cli_gpu_counts(const char *cmd, const char *const *ids, int *counts, int n,
		      struct vf_setup *s)
{
	if (s->given & VF_SETUP_G_GPUS) {
		for (int i = 0; i < n; i++) {
			if (counts[i] > 1 && counts[i] < s->gpus)
				return vf_cli_usage(cmd, "--gpus %d: only %d %s given", s->gpus, counts[i],
						    ids[i]);
			/* more given than the run's: two counts, one of them dropped unsaid */
			if (counts[i] > s->gpus)
				return vf_cli_usage(cmd, "--gpus %d and --gpu %s:%d give two GPU counts; give one",
						    s->gpus, ids[i], counts[i]);
			if (counts[i] > 0)
				counts[i] = s->gpus;
		}
		return -1;
	}
	int same = n > 0 ? counts[0] : 0;
	for (int i = 1; i < n; i++)
		if (counts[i] != same)
			same = 0;
	if (same > 1) {
		s->gpus = same;
		s->given |= VF_SETUP_G_GPUS;
	}
	return -1;
}

void vf_cli_print_help(FILE *f, const struct vf_cli_command *c)
{
	fputs(c->usage, f);
	if (c->options) {
		fputc('\n', f);
		vf_opt_print_help(f, c->options);
	}
	if (c->tail) {
		fputc('\n', f);
		fputs(c->tail, f);
	}
}

/* The compute capability "8.9" as 89; 0 when the catalog has none. */
static int cc_of(const struct vf_gpu_spec *g)
{
	int major = 0, minor = 0;
	return sscanf(g->cc, "%d.%d", &major, &minor) == 2 ? 10 * major + minor : 0;
}

/* The setup trains float8 linears and card g cannot (a card without a
 * compute capability in the catalog is not judged). */
static bool float8_lacks(const struct vf_setup *s, const struct vf_gpu_spec *g)
{
	if (!s->float8 || s->mode == VF_MODE_INFER)
		return false;
	int cc = cc_of(g);
	return cc != 0 && cc < 89;
}

bool vf_cli_float8_keep(struct vf_cli_float8 *f, const struct vf_setup *s, const struct vf_gpu_spec *g)
{
	if (!float8_lacks(s, g))
		return true;
	if (!f->common) {
		f->rc = vf_cli_usage(f->cmd, "--float8: %s (compute capability %s) has no float8 tensor cores: "
					     VF_CLI_FLOAT8_WHY "; --no-float8 or another --gpu",
				     g->id, g->cc);
		return false;
	}
	size_t n = strlen(f->dropped);
	snprintf(f->dropped + n, sizeof f->dropped - n, "%s%s (%s)", n ? ", " : "", g->id, g->cc);
	return false;
}

int vf_cli_float8_done(struct vf_cli_float8 *f, int kept, int total)
{
	if (f->rc >= 0)
		return f->rc;
	if (kept == 0 && total > 0)
		return vf_cli_usage(f->cmd, "--float8: none of the common cards has float8 tensor cores "
					    "(compute capability 8.9 or later): give --gpu");
	return -1;
}

char *vf_cli_float8_words(const struct vf_cli_float8 *f, char *o, size_t n)
{
	snprintf(o, n, "--float8: common cards without float8 tensor cores left out: %s; " VF_CLI_FLOAT8_WHY,
		 f->dropped);
	return o;
}

int vf_cli_infer_users(const char *cmd, const struct vf_setup *s, int64_t *users)
{
	if (s->mode != VF_MODE_INFER || !(s->given & VF_SETUP_G_BATCH))
		return -1;
	if (*users > 0 && *users != s->batch)
		return vf_cli_usage(cmd, "--mode infer: --batch %" PRId64 " and --users %" PRId64 " both name the "
					 "sequences decoding at once; give one", s->batch, *users);
	*users = s->batch;
	return -1;
}

char *vf_cli_precision_words(const struct vf_setup *s, char *o, size_t n)
{
	snprintf(o, n, "%s%s", vf_precision_name(s->precision),
		 s->precision == VF_PREC_FP32 && s->tf32 ? " (TF32)"
		 : s->precision == VF_PREC_BF16 && !s->autocast ? " (pure, no autocast)" : "");
	return o;
}

char *vf_cli_stack_words(const struct vf_setup *s, char *o, size_t n)
{
	snprintf(o, n, "training stack %s (data/stacks/%s.json: adapters %s, loss %s%s; --stack and its override "
		       "flags)",
		 s->stack, s->stack, s->adapter_bf16 ? "bf16" : "fp32", vf_loss_name(s->loss),
		 s->loss == VF_LOSS_CHUNKED ? " in chunks" : "");
	return o;
}
