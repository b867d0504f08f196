/* shquote.c - POSIX shell quoting and reading one word back (see shquote.h). */
#include "vramfit/base/shquote.h"

#include <stdio.h>
#include <string.h>

static bool plain(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("_-./:=@%+,", *s)))
			return false;
	return true;
}

vf_status vf_shell_quote(struct vf_buf *b, const char *s, struct vf_error *err)
{
	if (plain(s))
		return vf_buf_puts(b, s, err);
	vf_status st = vf_buf_puts(b, "'", err);
	for (const char *q; st == VF_OK && (q = strchr(s, '\'')); s = q + 1)
		if ((st = vf_buf_append(b, s, (size_t)(q - s), err)) == VF_OK)
			st = vf_buf_puts(b, "'\\''", err);
	if (st == VF_OK)
		st = vf_buf_puts(b, s, err);
	return st ? st : vf_buf_puts(b, "'", err);
}

size_t vf_shell_quote_to(char *out, size_t n, const char *s)
{
	struct vf_buf b;
	vf_buf_init(&b, 0);
	size_t need = vf_shell_quote(&b, s, NULL) == VF_OK ? b.len : (size_t)-1;
	if (n)
		snprintf(out, n, "%s", b.data ? b.data : "");
	vf_buf_release(&b);
	return need;
}

bool vf_shell_word(const char *s, size_t len, struct vf_buf *out, size_t *used)
{
	size_t i = 0;
	bool ok = true;
	while (i < len && ok) {
		char c = s[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|')
			break;
		if (c == '$' || c == '`') {
			ok = false;
		} else if (c == '\\') {
			if (i + 1 >= len)
				ok = false;
			else if (s[i + 1] != '\n') /* \newline: a continuation, no byte */
				vf_buf_append(out, s + i + 1, 1, NULL);
			i += 2;
		} else if (c == '\'') {
			const char *q = memchr(s + i + 1, '\'', len - i - 1);
			if (!q)
				ok = false;
			else {
				vf_buf_append(out, s + i + 1, (size_t)(q - s - i - 1), NULL);
				i = (size_t)(q - s) + 1;
			}
		} else if (c == '"') {
			for (i++; i < len && s[i] != '"' && ok; i++) {
				if (s[i] == '$' || s[i] == '`')
					ok = false;
				else if (s[i] == '\\' && i + 1 < len && strchr("$`\"\\\n", s[i + 1])) {
					if (s[i + 1] != '\n')
						vf_buf_append(out, s + i + 1, 1, NULL);
					i++;
				} else
					vf_buf_append(out, s + i, 1, NULL);
			}
			if (i >= len)
				ok = false;
			i++;
		} else {
			vf_buf_append(out, s + i++, 1, NULL);
		}
	}
	if (used)
		*used = i;
	if (ok && !out->data)
		vf_buf_puts(out, "", NULL);
	return ok;
}
