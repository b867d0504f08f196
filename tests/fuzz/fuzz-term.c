/* fuzz-term.c - libFuzzer target: any bytes through the terminal filter
 * (term.h), into a growable buffer and into small fixed arrays. Aborts when
 * the output holds ESC, a C0 control other than \n and \t, DEL, a C1
 * control (raw or UTF-8 encoded) or invalid UTF-8; when filtering the
 * output again changes it; or when a cut output is not a prefix of the
 * whole one. Corpus: tests/fuzz/corpus/term/. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/base/term.h"

/* Valid UTF-8 without ESC, C0 (but \n \t), DEL or U+0080-U+009F. */
static bool safe(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned char c = s[i];
		if (c < 0x80) {
			if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
				return false;
			i++;
			continue;
		}
		size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
		if (len == 0 || c > 0xf4 || i + len > n)
			return false;
		uint32_t v = c & (0x7f >> len);
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			v = (v << 6) | (s[i + k] & 0x3f);
		}
		static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
		if (v < min[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) || v <= 0x9f)
			return false;
		i += len;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vf_buf once, twice;
	vf_buf_init(&once, 0);
	vf_buf_init(&twice, 0);
	if (vf_term_sanitize_buf(&once, (const char *)data, size, NULL) != VF_OK)
		abort();
	if (!safe((const unsigned char *)once.data, once.len) || strlen(once.data) != once.len)
		abort();
	if (vf_term_sanitize_buf(&twice, once.data, once.len, NULL) != VF_OK)
		abort();
	if (twice.len != once.len || memcmp(twice.data, once.data, once.len) != 0)
		abort();
	static const size_t caps[] = {1, 2, 5, 17, 512};
	for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++) {
		char dst[512];
		vf_term_sanitize(dst, caps[k], (const char *)data, size);
		size_t n = strlen(dst);
		if (n >= caps[k] || n > once.len || memcmp(dst, once.data, n) != 0 ||
		    !safe((const unsigned char *)dst, n))
			abort();
	}
	vf_buf_release(&once);
	vf_buf_release(&twice);
	return 0;
}
