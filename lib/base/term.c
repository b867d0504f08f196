/* term.c - remove terminal escape sequences and show control bytes escaped
 * (see term.h). One scanner; the two outputs (a growable buffer, a fixed
 * array) are emitters it calls with each piece of safe text. */
#include "vramfit/base/term.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ESC 0x1b
#define BEL 0x07

struct emitter {
	/* Append piece p[0..n); divisible: plain ASCII that may be cut anywhere.
	 * Returns false to stop the scan. */
	bool (*emit)(void *ctx, const char *p, size_t n, bool divisible);
	void *ctx;
};

/* Length of the valid UTF-8 character at s (1-4) and its code point in *cp;
 * 0 when s does not start one (overlong, surrogate, past U+10FFFF, cut). */
static size_t utf8_char(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t v, min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if (c >= 0xc2 && c <= 0xdf) {
		len = 2, v = c & 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3, v = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4, v = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

enum intro { INTRO_NONE, INTRO_CSI, INTRO_STRING };

/* What an 8-bit C1 control (0x80-0x9f) introduces. */
static enum intro c1_intro(uint32_t c)
{
	switch (c) {
	case 0x9b:
		return INTRO_CSI;
	case 0x90: /* DCS */
	case 0x98: /* SOS */
	case 0x9d: /* OSC */
	case 0x9e: /* PM */
	case 0x9f: /* APC */
		return INTRO_STRING;
	default:
		return INTRO_NONE;
	}
}

/* What ESC followed by c introduces (the 7-bit forms of the above). */
static enum intro esc_intro(unsigned char c)
{
	switch (c) {
	case '[':
		return INTRO_CSI;
	case ']':
	case 'P':
	case 'X':
	case '^':
	case '_':
		return INTRO_STRING;
	default:
		return INTRO_NONE;
	}
}

/* End of a CSI's body at s[i]: parameter and intermediate bytes (0x20-0x3f)
 * then one final byte (0x40-0x7e), consumed. Anything else ends it
 * unconsumed (it is then read as text). */
static size_t skip_csi(const unsigned char *s, size_t n, size_t i)
{
	while (i < n && s[i] >= 0x20 && s[i] <= 0x3f)
		i++;
	if (i < n && s[i] >= 0x40 && s[i] <= 0x7e)
		i++;
	return i;
}

/* End of a control string's body at s[i] (OSC, DCS, SOS, PM, APC): through
 * BEL, ESC \ or ST (raw 0x9c or U+009C); at a newline, at another ESC (which
 * then starts what follows) or at the end of the text. */
static size_t skip_string(const unsigned char *s, size_t n, size_t i)
{
	while (i < n) {
		uint32_t cp;
		size_t len = utf8_char(s + i, n - i, &cp);
		if (s[i] == BEL)
			return i + 1;
		if (s[i] == '\n')
			return i;
		if (s[i] == ESC)
			return i + 1 < n && s[i + 1] == '\\' ? i + 2 : i;
		if ((len == 0 && s[i] == 0x9c) || (len == 2 && cp == 0x9c))
			return i + (len ? len : 1);
		i += len ? len : 1;
	}
	return n;
}

/* ESC at s[i-1]: the end of the sequence it starts, or i-1 when it starts
 * none (then shown escaped). */
static size_t skip_esc(const unsigned char *s, size_t n, size_t i)
{
	if (i >= n)
		return n; /* cut at the end of the text: dropped */
	enum intro k = esc_intro(s[i]);
	if (k == INTRO_CSI)
		return skip_csi(s, n, i + 1);
	if (k == INTRO_STRING)
		return skip_string(s, n, i + 1);
	if (s[i] >= 0x20 && s[i] <= 0x2f) { /* nF: intermediates, then a final byte */
		while (i < n && s[i] >= 0x20 && s[i] <= 0x2f)
			i++;
		if (i < n && s[i] >= 0x30 && s[i] <= 0x7e)
			i++;
		return i;
	}
	if (s[i] >= 0x30 && s[i] <= 0x7e) /* Fp, Fe, Fs: ESC and one byte */
		return i + 1;
	return i - 1;
}

static bool emit_escaped(const struct emitter *e, const char *fmt, unsigned v)
{
	char tmp[8];
	int k = snprintf(tmp, sizeof tmp, fmt, v);
	return e->emit(e->ctx, tmp, (size_t)k, false);
}

static void scan(const struct emitter *e, const char *text, size_t n)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0;
	while (i < n) {
		unsigned char c = s[i];
		if (c >= 0x20 && c < 0x7f) { /* a run of printable ASCII */
			size_t j = i + 1;
			while (j < n && s[j] >= 0x20 && s[j] < 0x7f)
				j++;
			if (!e->emit(e->ctx, text + i, j - i, true))
				return;
			i = j;
			continue;
		}
		if (c == '\n' || c == '\t') {
			if (!e->emit(e->ctx, text + i, 1, true))
				return;
			i++;
			continue;
		}
		if (c == ESC) {
			size_t end = skip_esc(s, n, i + 1);
			if (end > i) {
				i = end;
				continue;
			}
			if (!emit_escaped(e, "\\x%02x", c))
				return;
			i++;
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			if (!emit_escaped(e, "\\x%02x", c))
				return;
			i++;
			continue;
		}
		uint32_t cp;
		size_t len = utf8_char(s + i, n - i, &cp);
		if (len == 2 && cp <= 0x9f) { /* a C1 control, UTF-8 encoded */
			enum intro k = c1_intro(cp);
			if (k == INTRO_CSI) {
				i = skip_csi(s, n, i + 2);
				continue;
			}
			if (k == INTRO_STRING) {
				i = skip_string(s, n, i + 2);
				continue;
			}
			if (!emit_escaped(e, "\\u%04x", cp))
				return;
			i += 2;
			continue;
		}
		if (len == 0) { /* not UTF-8, raw C1 bytes included: shown, never obeyed */
			if (!emit_escaped(e, "\\x%02x", c))
				return;
			i++;
			continue;
		}
		if (!e->emit(e->ctx, text + i, len, false))
			return;
		i += len;
	}
}

struct buf_ctx {
	struct vf_buf *b;
	struct vf_error *err;
	vf_status st;
};

static bool emit_buf(void *ctx, const char *p, size_t n, bool divisible)
{
	struct buf_ctx *c = ctx;
	(void)divisible;
	c->st = vf_buf_append(c->b, p, n, c->err);
	return c->st == VF_OK;
}

vf_status vf_term_sanitize_buf(struct vf_buf *b, const char *s, size_t n, struct vf_error *err)
{
	struct buf_ctx c = {.b = b, .err = err, .st = VF_OK};
	struct emitter e = {.emit = emit_buf, .ctx = &c};
	if (s)
		scan(&e, s, n);
	if (c.st == VF_OK && !b->data) /* an empty result is still a string */
		c.st = vf_buf_append(b, "", 0, err);
	return c.st;
}

struct fixed_ctx {
	char *dst;
	size_t len, cap; /* cap: room for text, the NUL excluded */
};

static bool emit_fixed(void *ctx, const char *p, size_t n, bool divisible)
{
	struct fixed_ctx *c = ctx;
	size_t room = c->cap - c->len;
	if (n > room) {
		if (divisible) {
			memcpy(c->dst + c->len, p, room);
			c->len += room;
		}
		return false;
	}
	memcpy(c->dst + c->len, p, n);
	c->len += n;
	return true;
}

char *vf_term_sanitize(char *dst, size_t cap, const char *s, size_t n)
{
	if (!dst || cap == 0)
		return dst;
	struct fixed_ctx c = {.dst = dst, .len = 0, .cap = cap - 1};
	struct emitter e = {.emit = emit_fixed, .ctx = &c};
	if (s)
		scan(&e, s, n);
	dst[c.len] = '\0';
	return dst;
}

char *vf_term_safe(char *dst, size_t cap, const char *s)
{
	return vf_term_sanitize(dst, cap, s ? s : "", s ? strlen(s) : 0);
}
