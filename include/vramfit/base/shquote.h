/* shquote.h - POSIX shell quoting, both ways. Every command vramfit prints
 * (terminal, plan.md, launch.sbatch) quotes each path it puts in with
 * vf_shell_quote, so a path holding $(...), a backtick, a quote or a
 * newline is one inert word when pasted; vf_shell_word reads such a word
 * back (the check of launch.sbatch). */
#ifndef VRAMFIT_SHQUOTE_H
#define VRAMFIT_SHQUOTE_H

#include <stdbool.h>
#include <stddef.h>

#include "vramfit/base/buf.h"

/* Append s as one shell word: as it is when every byte is one the shell
 * never treats specially (letters, digits, _ - . / : = @ % + ,), else in
 * single quotes with each ' written '\''. "" for an empty s. */
vf_status vf_shell_quote(struct vf_buf *b, const char *s, struct vf_error *err);

/* The same into out[n] (truncated, always NUL-terminated); returns the
 * length the whole quoted word needs, so >= n means it did not fit. */
size_t vf_shell_quote_to(char *out, size_t n, const char *s);

/* Read one shell word at s[0..len) the way sh does (unquoted text,
 * '...', "..." with \ before $ ` " \ newline, \ outside quotes), stopping
 * at unquoted whitespace, ';', '&', '|' or the end; its value is appended
 * to out and *used (when not NULL) is the bytes consumed. false when a
 * quote is not closed or the word holds an unquoted $ or ` (a word whose
 * value the shell would compute, not read). */
bool vf_shell_word(const char *s, size_t len, struct vf_buf *out, size_t *used);

#endif
