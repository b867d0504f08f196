/* md.h - Markdown with holes: plan.md's lines are trusted Markdown written
 * here; every string put into them (a goal, a path, a model name, a config
 * key or value, a check message) is outside text that must stay text.
 *
 * vf_md_printf formats like printf, except that each %s argument passes the
 * terminal filter (term.h), has its line breaks and tabs turned into spaces,
 * and is escaped for where the format puts it:
 *   - inside a `code span` of the format: the span's fence gets one backtick
 *     more than the longest run in its content (padded with a space where
 *     the content starts or ends with a backtick), and `|` is escaped on a
 *     table row (a line starting with `|`);
 *   - inside a fenced block (``` in the format): left as it is;
 *   - elsewhere, prose: Markdown's specials backslash-escaped (\ ` * _ [ ]
 *     < > & | # ~ !), and a leading "- ", "+ ", = or "N. " / "N) " too, so no argument
 *     makes a heading, a list, a quote, a link, emphasis or raw HTML.
 * %-conversions other than %s are printf's (d i u x f g c with l, ll, z). */
#ifndef VRAMFIT_MD_H
#define VRAMFIT_MD_H

#include <stdarg.h>

#include "vramfit/base/buf.h"

vf_status vf_md_printf(struct vf_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
vf_status vf_md_vprintf(struct vf_buf *b, const char *fmt, va_list ap);

/* Append s as prose, escaped as a %s outside code spans (above), except that
 * its backticks are kept: text we composed that quotes outside values in
 * code spans (warnings, assumptions, check messages). An outside backtick
 * can pair differently but makes nothing but a code span. */
vf_status vf_md_prose(struct vf_buf *b, const char *s);

#endif
