/* term.h - the one filter for text from outside (a trainer's log, a file
 * name, a config value) before it reaches a terminal, a log of ours
 * (autotune.log) or plan.md.
 *
 * What a terminal would act on is removed or shown escaped; what it would
 * only display passes intact:
 *   - escape sequences are removed whole: CSI (colour SGR and cursor
 *     movement: ESC [ ... final), OSC (ESC ], e.g. OSC 52 clipboard writes
 *     and OSC 8 hyperlinks), DCS (ESC P), SOS (ESC X), PM (ESC ^) and APC
 *     (ESC _) up to their terminator (BEL, ESC \ or the 8-bit ST), the end
 *     of the line or the end of the text, and the short ESC forms (ESC c,
 *     ESC ( B ...). The 8-bit introducers encoded as UTF-8 (CSI U+009B,
 *     OSC U+009D, DCS U+0090, SOS U+0098, PM U+009E, APC U+009F) likewise.
 *   - other C0 controls except \n and \t, DEL, and an ESC that starts no
 *     sequence are shown as \xNN, other UTF-8 encoded C1 controls as \u00NN;
 *     bytes that are not valid UTF-8 as \xNN: raw C1 bytes (0x80-0x9f, the
 *     8-bit CSI 0x9b included) are such bytes, shown and never obeyed, so
 *     what follows them reads as text.
 *   - valid UTF-8 text passes unchanged.
 * The output never holds ESC, a C0 control other than \n and \t, DEL, or a
 * C1 control in either form. It is stateless: a sequence split across two
 * calls loses its introducer in the first and shows its tail as text in the
 * second. Applying the filter twice gives the same text as once. */
#ifndef VRAMFIT_TERM_H
#define VRAMFIT_TERM_H

#include <stddef.h>

#include "vramfit/base/buf.h"
#include "vramfit/base/error.h"

/* Append the safe form of s[0..n) to b. Errors: b's cap, out of memory. */
vf_status vf_term_sanitize_buf(struct vf_buf *b, const char *s, size_t n, struct vf_error *err);

/* The safe form of s[0..n) into dst (cap > 0 bytes, NUL-terminated; what
 * does not fit is cut at a character or escape boundary). Returns dst. */
char *vf_term_sanitize(char *dst, size_t cap, const char *s, size_t n);

/* vf_term_sanitize of a NUL-terminated string (NULL reads as ""). */
char *vf_term_safe(char *dst, size_t cap, const char *s);

#endif
