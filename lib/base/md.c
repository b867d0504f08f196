/* md.c - printf for Markdown whose string arguments stay text (see md.h).
 * The format is walked once: literal text is copied, backtick runs switch
 * between prose, a code span (collected, then fenced) and a fenced block,
 * and each conversion is formatted on its own. */
#include "vramfit/base/md.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "vramfit/base/term.h"

enum mode { PROSE, SPAN, FENCE };

/* Outside text made one line: the terminal filter, then \n and \t -> ' '. */
static vf_status one_line(struct vf_buf *out, const char *s)
{
	vf_buf_reset(out);
	vf_status st = vf_term_sanitize_buf(out, s ? s : "", s ? strlen(s) : 0, NULL);
	if (st)
		return st;
	for (char *p = out->data; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
	return VF_OK;
}

/* True when the line being written starts with '|' (a table row). */
static bool table_row(const struct vf_buf *b)
{
	if (!b->len)
		return false;
	const char *nl = memrchr(b->data, '\n', b->len);
	size_t start = nl ? (size_t)(nl - b->data) + 1 : 0;
	return start < b->len && b->data[start] == '|';
}

/* Append s escaped as prose (keep_ticks: leave backticks alone). */
static vf_status prose(struct vf_buf *b, const char *s, bool keep_ticks)
{
	struct vf_buf t;
	vf_buf_init(&t, 0);
	vf_status st = one_line(&t, s);
	const char *p = t.data;
	if (!st) { /* a leading block marker: "- x", "+ x", "=== ", "1. x", "2) x" */
		size_t d = strspn(p, "0123456789");
		if (((*p == '-' || *p == '+') && (p[1] == ' ' || !p[1])) || *p == '=')
			st = vf_buf_append(b, "\\", 1, NULL);
		else if (d > 0 && d < 10 && (p[d] == '.' || p[d] == ')') && (p[d + 1] == ' ' || !p[d + 1])) {
			st = vf_buf_append(b, p, d, NULL);
			if (!st)
				st = vf_buf_append(b, "\\", 1, NULL);
			p += d;
		}
	}
	/* keep_ticks: single backticks pair left to right as Markdown pairs
	 * them (text between is a code span, left as it is); longer runs and a
	 * last unpaired one are escaped, so no span is left open. */
	const char *last_single = NULL;
	size_t singles = 0;
	for (const char *q = p; keep_ticks && *q; q++)
		if (*q == '`' && q[1] != '`' && (q == t.data || q[-1] != '`')) {
			singles++;
			last_single = q;
		}
	bool in_span = false;
	for (; !st && *p; p++) {
		bool single = *p == '`' && p[1] != '`' && (p == t.data || p[-1] != '`');
		if (keep_ticks && single && !(singles % 2 && p == last_single)) {
			in_span = !in_span;
		} else if (!in_span && (strchr("\\*_[]<>&|#~!", *p) || *p == '`')) {
			st = vf_buf_append(b, "\\", 1, NULL);
		}
		if (!st)
			st = vf_buf_append(b, p, 1, NULL);
	}
	vf_buf_release(&t);
	return st;
}

vf_status vf_md_prose(struct vf_buf *b, const char *s)
{
	return prose(b, s, true);
}

/* Append a code span holding span (outside text already made one line). */
static vf_status code_span(struct vf_buf *b, const char *span, bool table)
{
	size_t longest = 0, run = 0, len = strlen(span);
	for (const char *p = span; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		longest = run > longest ? run : longest;
	}
	char fence[64];
	size_t n = longest + 1 < sizeof fence ? longest + 1 : sizeof fence - 1;
	memset(fence, '`', n);
	fence[n] = '\0';
	bool pad = len && (span[0] == '`' || span[len - 1] == '`' ||
			   (span[0] == ' ' && span[len - 1] == ' ' && strspn(span, " ") < len));
	vf_status st = vf_buf_printf(b, NULL, "%s%s", fence, pad ? " " : "");
	for (const char *p = span; !st && *p; p++) {
		if (*p == '|' && table)
			st = vf_buf_append(b, "\\", 1, NULL);
		if (!st)
			st = vf_buf_append(b, p, 1, NULL);
	}
	if (!st)
		st = vf_buf_printf(b, NULL, "%s%s", pad ? " " : "", fence);
	return st;
}

/* One conversion at *fmt (after the %): formatted into out; *fmt moved past
 * it. Returns false for a conversion this formatter does not take. */
static bool convert(const char **fmt, va_list *ap, char *out, size_t n, const char **str)
{
	const char *f = *fmt;
	char spec[32] = "%";
	size_t k = strspn(f, "-+ #0123456789.");
	const char *len = f + k;
	size_t l = strspn(len, "lz");
	char conv = len[l];
	if (!conv || k + l + 2 >= sizeof spec)
		return false;
	memcpy(spec + 1, f, k + l + 1);
	spec[k + l + 2] = '\0';
	*fmt = len + l + 1;
	*str = NULL;
	bool ll = l == 2, lo = l == 1 && len[0] == 'l', z = l == 1 && len[0] == 'z';
	switch (conv) {
	case 's':
		*str = va_arg(*ap, const char *);
		return l == 0;
	case '%':
		snprintf(out, n, "%%");
		return true;
	case 'c':
	case 'd':
	case 'i':
		if (ll)
			snprintf(out, n, spec, va_arg(*ap, long long));
		else if (lo)
			snprintf(out, n, spec, va_arg(*ap, long));
		else if (z)
			snprintf(out, n, spec, va_arg(*ap, ptrdiff_t));
		else
			snprintf(out, n, spec, va_arg(*ap, int));
		return true;
	case 'u':
	case 'x':
		if (ll)
			snprintf(out, n, spec, va_arg(*ap, unsigned long long));
		else if (lo)
			snprintf(out, n, spec, va_arg(*ap, unsigned long));
		else if (z)
			snprintf(out, n, spec, va_arg(*ap, size_t));
		else
			snprintf(out, n, spec, va_arg(*ap, unsigned));
		return true;
	case 'f':
	case 'g':
		snprintf(out, n, spec, va_arg(*ap, double));
		return true;
	default:
		return false;
	}
}

/* Where a piece of the format or an argument goes in the current mode. */
static vf_status put(struct vf_buf *b, struct vf_buf *span, enum mode m, const char *s, size_t n)
{
	return vf_buf_append(m == SPAN ? span : b, s, n, NULL);
}

vf_status vf_md_vprintf(struct vf_buf *b, const char *fmt, va_list ap0)
{
	va_list ap;
	va_copy(ap, ap0);
	struct vf_buf span, arg;
	vf_buf_init(&span, 0);
	vf_buf_init(&arg, 0);
	enum mode m = PROSE;
	bool table = false;
	vf_status st = VF_OK;
	while (!st && *fmt) {
		if (*fmt == '`') {
			size_t run = strspn(fmt, "`");
			if (m == FENCE || (run >= 3 && m == PROSE)) { /* a fence: raw */
				if (run >= 3)
					m = m == FENCE ? PROSE : FENCE;
				st = vf_buf_append(b, fmt, run, NULL);
				fmt += run;
			} else if (m == PROSE) {
				m = SPAN;
				table = table_row(b);
				vf_buf_reset(&span);
				st = vf_buf_append(&span, "", 0, NULL);
				fmt++;
			} else {
				m = PROSE;
				st = code_span(b, span.data, table);
				fmt++;
			}
			continue;
		}
		if (*fmt != '%') {
			size_t n = strcspn(fmt, "`%");
			st = put(b, &span, m, fmt, n);
			fmt += n;
			continue;
		}
		fmt++;
		char num[128];
		const char *s;
		if (!convert(&fmt, &ap, num, sizeof num, &s)) {
			st = VF_EUSAGE;
			break;
		}
		if (!s) {
			st = put(b, &span, m, num, strlen(num));
		} else if (m == PROSE) {
			st = prose(b, s, false);
		} else if (!(st = one_line(&arg, s))) {
			st = put(b, &span, m, arg.data, arg.len);
		}
	}
	if (!st && m == SPAN) /* an unclosed span in the format: close it */
		st = code_span(b, span.data, table);
	va_end(ap);
	vf_buf_release(&span);
	vf_buf_release(&arg);
	return st;
}

vf_status vf_md_printf(struct vf_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vf_status st = vf_md_vprintf(b, fmt, ap);
	va_end(ap);
	return st;
}
