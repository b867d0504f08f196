/* html.h - the page around a report's charts: one self-contained HTML file
 * (inline CSS and script, no network), light and dark schemes, A4 print,
 * phone width; the report's data embedded as one JSON object
 * (<script type="application/json" id="vramfit-data">); figures that pair
 * a chart with the table of its numbers. */
#ifndef VRAMFIT_REPORT_HTML_H
#define VRAMFIT_REPORT_HTML_H

#include <cjson/cJSON.h>

#include "vramfit/report/plot.h"

/* <!doctype html> ... <main>, the page title (the headline finding) and a
 * subtitle line (may be NULL). kind names the report ("estimate", ...). */
void vf_html_begin(struct vf_w *w, const char *kind, const char *title, const char *subtitle);
/* The data object, as JSON that cannot end the script element early. */
void vf_html_data(struct vf_w *w, const cJSON *data);
/* The script (legend toggles, tooltips, chart boxes) and the end tags. */
void vf_html_end(struct vf_w *w);

/* A figure: <section> with a heading stating the finding, the chart
 * column, then (vf_html_figure_table) the numbers column. */
void vf_html_figure_begin(struct vf_w *w, const char *id, const char *title);
void vf_html_figure_table(struct vf_w *w);
void vf_html_figure_end(struct vf_w *w);
/* A plain section with a heading (assumptions, trials...). */
void vf_html_section_begin(struct vf_w *w, const char *id, const char *title);
void vf_html_section_end(struct vf_w *w);

/* Tables: a caption, n column headers; the first column is text, the
 * others numbers (right-aligned), or all text when text. Cells are
 * escaped. */
void vf_html_table_begin(struct vf_w *w, const char *caption, int n, const char *const *headers,
			 bool text);
void vf_html_row(struct vf_w *w, int n, const char *const *cells);
void vf_html_table_end(struct vf_w *w);
/* A paragraph / a bulleted list of escaped text. */
void vf_html_p(struct vf_w *w, const char *cls, const char *text);
void vf_html_list(struct vf_w *w, int n, const char *const *items);
/* md[0..n) rendered as Markdown (lib/report/md_html.c): headings, lists,
 * code spans and blocks, tables, quotes; every byte escaped, links and raw
 * HTML kept as text. Wrapped in <div class="md">. */
void vf_html_md(struct vf_w *w, const char *md, size_t n);
/* One line of text with inline Markdown only (code spans, emphasis), as
 * vf_html_md renders it inside a block: for list items of assumptions. */
void vf_html_md_inline(struct vf_w *w, const char *s);

#endif
