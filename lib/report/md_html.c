/* md_html.c - Markdown as a person reads it, for the report pages: plan.md
 * and notes rendered as HTML (vf_html_md, html.h).
 *
 * A small subset, the one vramfit's own files use: ATX headings (shifted
 * below the page's h1/h2), paragraphs, nested "-", "*", "+" and "1." lists,
 * fenced code blocks, pipe tables, block quotes, rules; inline code spans,
 * **strong**, *emphasis* and backslash escapes. Links and raw HTML are not
 * markup here: they stay text. Every byte of the input reaches the page
 * through vf_w_esc, so no input makes a tag or an attribute; the only
 * tags in the output are the ones this file writes. */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/report/html.h"

#define MAX_DEPTH 8

/* text[0..n) escaped; text[n] must be a writable byte (the copy's). */
static void esc_n(struct vf_w *w, char *p, size_t n)
{
	char c = p[n];
	p[n] = '\0';
	vf_w_esc(w, p);
	p[n] = c;
}

/* The end of the closing run of exactly `ticks` backticks at or after j, or 0. */
static size_t code_close(const char *p, size_t j, size_t n, size_t ticks, size_t *at)
{
	while (j < n) {
		if (p[j] != '`') {
			j++;
			continue;
		}
		size_t m = j;
		while (m < n && p[m] == '`')
			m++;
		if (m - j == ticks) {
			*at = j;
			return m;
		}
		j = m;
	}
	return 0;
}

/* The start of the next `delim` (1 or 2 '*') that closes an emphasis
 * opened before i, or 0: not preceded by a space, content non-empty. */
static size_t emph_close(const char *p, size_t i, size_t n, size_t len)
{
	for (size_t j = i + 1; j + len <= n; j++) {
		if (p[j] == '`')
			return 0; /* a code span inside: left as it is */
		if (p[j] == '*' && (len == 1 || p[j + 1] == '*') && p[j - 1] != ' ' && j > i) {
			if (len == 1 && j + 1 < n && p[j + 1] == '*')
				return 0;
			return j;
		}
	}
	return 0;
}

static void inline_md(struct vf_w *w, char *p, size_t n, int depth)
{
	size_t i = 0, run = 0;
	while (i < n && !w->st) {
		char c = p[i];
		if (c == '\\' && i + 1 < n && ispunct((unsigned char)p[i + 1])) {
			esc_n(w, p + run, i - run);
			esc_n(w, p + i + 1, 1);
			i += 2, run = i;
			continue;
		}
		if (c == '`') {
			size_t k = i, at = 0;
			while (k < n && p[k] == '`')
				k++;
			size_t end = code_close(p, k, n, k - i, &at);
			if (!end) {
				i = k;
				continue;
			}
			esc_n(w, p + run, i - run);
			size_t a = k, b = at;
			if (b - a >= 2 && p[a] == ' ' && p[b - 1] == ' ')
				a++, b--;
			vf_w_puts(w, "<code>");
			esc_n(w, p + a, b - a);
			vf_w_puts(w, "</code>");
			i = end, run = i;
			continue;
		}
		if (c == '*' && depth < 2) {
			size_t len = i + 1 < n && p[i + 1] == '*' ? 2 : 1;
			size_t s = i + len;
			size_t j = s < n && p[s] != ' ' ? emph_close(p, s, n, len) : 0;
			if (j > s) {
				esc_n(w, p + run, i - run);
				vf_w_puts(w, len == 2 ? "<strong>" : "<em>");
				inline_md(w, p + s, j - s, depth + 1);
				vf_w_puts(w, len == 2 ? "</strong>" : "</em>");
				i = j + len, run = i;
				continue;
			}
			i += len;
			continue;
		}
		i++;
	}
	esc_n(w, p + run, n - run);
}

struct line {
	char *p;
	size_t n;   /* without the newline (and a trailing \r) */
	int indent; /* columns of leading white space (a tab is 4) */
	size_t lead; /* bytes of it */
};

static bool blank(const struct line *l)
{
	return l->lead == l->n;
}

/* A fence line: 3+ backticks or tildes; *ch and *len set. */
static bool fence(const struct line *l, char *ch, size_t *len)
{
	if (l->indent > 3 || l->n - l->lead < 3)
		return false;
	const char *s = l->p + l->lead;
	char c = s[0];
	if (c != '`' && c != '~')
		return false;
	size_t k = 0;
	while (l->lead + k < l->n && s[k] == c)
		k++;
	if (k < 3)
		return false;
	*ch = c, *len = k;
	return true;
}

/* A heading: its level (1-6) and text, or 0. */
static int heading(const struct line *l, char **text, size_t *tn)
{
	if (l->indent > 3)
		return 0;
	char *s = l->p + l->lead;
	size_t n = l->n - l->lead, k = 0;
	while (k < n && k < 7 && s[k] == '#')
		k++;
	if (k == 0 || k > 6 || (k < n && s[k] != ' ' && s[k] != '\t'))
		return 0;
	size_t a = k, b = n;
	while (a < b && (s[a] == ' ' || s[a] == '\t'))
		a++;
	while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t'))
		b--;
	size_t c = b; /* a closing run of '#' after a space */
	while (c > a && s[c - 1] == '#')
		c--;
	if (c < b && (c == a || s[c - 1] == ' ')) {
		b = c;
		while (b > a && s[b - 1] == ' ')
			b--;
	}
	*text = s + a, *tn = b - a;
	return (int)k;
}

/* A list item: its content start (bytes into the line) and kind, or 0. */
static size_t item(const struct line *l, bool *ordered)
{
	const char *s = l->p + l->lead;
	size_t n = l->n - l->lead, k = 0;
	if (n >= 1 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && (n == 1 || s[1] == ' ' || s[1] == '\t')) {
		*ordered = false;
		k = 1;
	} else {
		while (k < n && k < 9 && isdigit((unsigned char)s[k]))
			k++;
		if (k == 0 || k >= n || (s[k] != '.' && s[k] != ')') || (k + 1 < n && s[k + 1] != ' ' && s[k + 1] != '\t'))
			return 0;
		*ordered = true;
		k++;
	}
	while (k < n && (s[k] == ' ' || s[k] == '\t'))
		k++;
	return l->lead + k;
}

static bool rule(const struct line *l)
{
	const char *s = l->p + l->lead;
	size_t n = l->n - l->lead, k = 0;
	if (n < 3 || (s[0] != '-' && s[0] != '*' && s[0] != '_'))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == s[0])
			k++;
		else if (s[i] != ' ')
			return false;
	}
	return k >= 3;
}

static bool table_row(const struct line *l)
{
	return l->n > l->lead && l->p[l->lead] == '|';
}

static bool table_sep(const struct line *l)
{
	if (!table_row(l))
		return false;
	bool dash = false;
	for (size_t i = l->lead; i < l->n; i++) {
		char c = l->p[i];
		if (c == '-')
			dash = true;
		else if (c != '|' && c != ':' && c != ' ' && c != '\t')
			return false;
	}
	return dash;
}

/* The cells of a pipe-table row, each rendered inline in a th or td. */
static void cells(struct vf_w *w, const struct line *l, const char *tag, int ncol)
{
	char *s = l->p + l->lead + 1, *end = l->p + l->n;
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (end > s && end[-1] == '|' && (end - 1 == s || end[-2] != '\\'))
		end--;
	int k = 0;
	vf_w_puts(w, "<tr>");
	while (s <= end && (ncol < 0 || k < ncol)) {
		char *e = s;
		while (e < end && !(*e == '|' && (e == s || e[-1] != '\\')))
			e++;
		char *a = s, *b = e;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		vf_w_printf(w, "<%s>", tag);
		inline_md(w, a, (size_t)(b - a), 0);
		vf_w_printf(w, "</%s>", tag);
		k++;
		if (e >= end)
			break;
		s = e + 1;
	}
	for (; ncol > 0 && k < ncol; k++)
		vf_w_printf(w, "<%s></%s>", tag, tag);
	vf_w_puts(w, "</tr>");
}

static int count_cells(const struct line *l)
{
	size_t n = l->n;
	while (n > l->lead && (l->p[n - 1] == ' ' || l->p[n - 1] == '\t'))
		n--;
	int k = 1;
	for (size_t i = l->lead + 1; i < n; i++)
		k += l->p[i] == '|' && l->p[i - 1] != '\\' && i + 1 < n;
	return k;
}

/* Does a line start a block of another kind (ends a paragraph)? */
static bool starts_block(const struct line *l)
{
	char ch;
	size_t fl, tn;
	char *t;
	bool o;
	return fence(l, &ch, &fl) || heading(l, &t, &tn) || item(l, &o) || rule(l) ||
	       (l->n > l->lead && l->p[l->lead] == '>') || table_row(l);
}

/* vf_html_md: s (n bytes) as lines, each with its indent (a tab is 4)
 * and the length of its leading white space; returns how many. */
static size_t md_lines(char *s, size_t n, struct line *L, size_t nl)
{
	size_t m = 0;
	for (char *p = s, *e = s + n; p <= e && m < nl;) {
		char *q = memchr(p, '\n', (size_t)(e - p));
		if (!q)
			q = e;
		struct line *l = &L[m++];
		l->p = p, l->n = (size_t)(q - p);
		if (l->n && p[l->n - 1] == '\r')
			l->n--;
		l->indent = 0, l->lead = 0;
		while (l->lead < l->n && (p[l->lead] == ' ' || p[l->lead] == '\t'))
			l->indent += p[l->lead++] == '\t' ? 4 : 1;
		if (q == e)
			break;
		p = q + 1;
	}
	return m;
}

/* vf_html_md: a fenced code block from L[i] (its opening fence: ch,
 * fl long) to the closing one; returns the line after it. */
static size_t md_fence(struct vf_w *w, const struct line *L, size_t m, size_t i, char ch, size_t fl)
{
	vf_w_puts(w, "<pre><code>");
	for (i++; i < m; i++) {
		char c2;
		size_t f2;
		if (fence(&L[i], &c2, &f2) && c2 == ch && f2 >= fl && L[i].lead + f2 == L[i].n)
			break;
		esc_n(w, L[i].p, L[i].n);
		vf_w_puts(w, "\n");
	}
	i++;
	vf_w_puts(w, "</code></pre>\n");
	return i;
}

/* vf_html_md: a list from L[i], nested by indent (up to MAX_DEPTH),
 * its items' continuation lines and blank lines between items; returns
 * the line after it. */
static size_t md_list(struct vf_w *w, const struct line *L, size_t m, size_t i)
{
	bool ord;
	int ind[MAX_DEPTH], d = 0;
	bool kind[MAX_DEPTH];
	while (i < m && !w->st) {
		const struct line *x = &L[i];
		size_t at;
		if (blank(x)) { /* a blank line inside a list: it goes on if an item follows */
			size_t k = i;
			while (k < m && blank(&L[k]))
				k++;
			if (k < m && item(&L[k], &ord) && L[k].indent >= ind[0]) {
				i = k;
				continue;
			}
			break;
		}
		if ((at = item(x, &ord)) > 0) {
			if (d == 0 || (x->indent >= ind[d - 1] + 2 && d < MAX_DEPTH)) {
				vf_w_puts(w, ord ? "<ol>" : "<ul>");
				ind[d] = x->indent, kind[d] = ord, d++;
			} else {
				while (d > 1 && x->indent < ind[d - 1]) {
					d--;
					vf_w_puts(w, kind[d] ? "</li></ol>" : "</li></ul>");
				}
				vf_w_puts(w, "</li>");
			}
			vf_w_puts(w, "<li>");
			inline_md(w, x->p + at, x->n - at, 0);
		} else if (!starts_block(x) || (x->indent >= 2 && !item(x, &ord))) {
			vf_w_puts(w, "\n"); /* a continuation line of the item */
			inline_md(w, x->p + x->lead, x->n - x->lead, 0);
		} else {
			break;
		}
		i++;
	}
	while (d > 0) {
		d--;
		vf_w_puts(w, kind[d] ? "</li></ol>" : "</li></ul>");
	}
	vf_w_puts(w, "\n");
	return i;
}

void vf_html_md(struct vf_w *w, const char *md, size_t n)
{
	if (!md || w->st)
		return;
	char *s = malloc(n + 1);
	size_t nl = 1;
	for (size_t i = 0; i < n; i++)
		nl += md[i] == '\n';
	struct line *L = s ? malloc(nl * sizeof *L) : NULL;
	if (!s || !L) {
		free(s);
		w->st = vf_error_set(w->err, VF_ENOMEM, "report: out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++) /* a NUL byte is text, shown as U+FFFD */
		s[i] = md[i] ? md[i] : '\x01';
	s[n] = '\0';
	size_t m = md_lines(s, n, L, nl);
	vf_w_puts(w, "<div class=\"md\">");
	for (size_t i = 0; i < m && !w->st;) {
		struct line *l = &L[i];
		char ch, *t;
		size_t fl, tn;
		bool ord;
		int h;
		if (blank(l)) {
			i++;
		} else if (fence(l, &ch, &fl)) {
			i = md_fence(w, L, m, i, ch, fl);
		} else if ((h = heading(l, &t, &tn)) > 0) {
			int lv = h + 2 > 6 ? 6 : h + 2; /* below the page's h1 and h2 */
			vf_w_printf(w, "<h%d>", lv);
			inline_md(w, t, tn, 0);
			vf_w_printf(w, "</h%d>\n", lv);
			i++;
		} else if (table_row(l) && i + 1 < m && table_sep(&L[i + 1])) {
			int nc = count_cells(l);
			vf_w_puts(w, "<div class=\"scroll\"><table class=\"txt\"><thead>");
			cells(w, l, "th", nc);
			vf_w_puts(w, "</thead><tbody>");
			for (i += 2; i < m && table_row(&L[i]); i++)
				cells(w, &L[i], "td", nc);
			vf_w_puts(w, "</tbody></table></div>\n");
		} else if (rule(l) && !item(l, &ord)) {
			vf_w_puts(w, "<hr>\n");
			i++;
		} else if (l->p[l->lead] == '>') {
			vf_w_puts(w, "<blockquote><p>");
			for (bool first = true; i < m && !blank(&L[i]) && L[i].p[L[i].lead] == '>'; i++, first = false) {
				size_t a = L[i].lead + 1;
				if (a < L[i].n && L[i].p[a] == ' ')
					a++;
				if (!first)
					vf_w_puts(w, "\n");
				inline_md(w, L[i].p + a, L[i].n - a, 0);
			}
			vf_w_puts(w, "</p></blockquote>\n");
		} else if (item(l, &ord)) {
			i = md_list(w, L, m, i);
		} else {
			vf_w_puts(w, "<p>");
			for (bool first = true; i < m && !blank(&L[i]) && (first || !starts_block(&L[i]));
			     i++, first = false) {
				if (!first)
					vf_w_puts(w, "\n");
				inline_md(w, L[i].p + L[i].lead, L[i].n - L[i].lead, 0);
			}
			vf_w_puts(w, "</p>\n");
		}
	}
	vf_w_puts(w, "</div>\n");
	free(L);
	free(s);
}

void vf_html_md_inline(struct vf_w *w, const char *s)
{
	if (!s || w->st)
		return;
	size_t n = strlen(s);
	char *c = malloc(n + 1);
	if (!c) {
		w->st = vf_error_set(w->err, VF_ENOMEM, "report: out of memory");
		return;
	}
	memcpy(c, s, n + 1);
	inline_md(w, c, n, 0);
	free(c);
}
