/* plot.h - a small SVG plotting kit for the HTML reports: a sticky-error
 * text writer with HTML/SVG escaping, linear scales, "nice" ticks (1, 2, 5
 * x 10^k), axes with their units, stacked bars over categories, lines,
 * scatter points, horizontal reference lines (a GPU's capacity) and an
 * HTML legend.
 *
 * Every mark carries an SVG <title> (a native tooltip, no script needed)
 * and a data-s attribute naming its series (the page's script toggles a
 * series when its legend entry is clicked). Colours are CSS classes
 * (f0..f9 fill, k0..k9 stroke) over a colour-blind-safe palette the page
 * defines for light and dark schemes (lib/report/html.c). */
#ifndef VRAMFIT_REPORT_PLOT_H
#define VRAMFIT_REPORT_PLOT_H

#include <stdbool.h>
#include <stddef.h>

#include "vramfit/base/buf.h"
#include "vramfit/base/error.h"

/* A text writer that remembers its first failure (out of memory, the cap):
 * write freely, check w->st once at the end. */
struct vf_w {
	struct vf_buf *b;      /* Borrowed. */
	vf_status st;
	struct vf_error *err;  /* may be NULL */
};

void vf_w_init(struct vf_w *w, struct vf_buf *b, struct vf_error *err);
void vf_w_puts(struct vf_w *w, const char *s);
void vf_w_printf(struct vf_w *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s escaped for HTML text and attribute values (& < > " '); invalid UTF-8
 * bytes and control characters other than \t \n become U+FFFD. */
void vf_w_esc(struct vf_w *w, const char *s);

/* A linear map from a domain [d0, d1] onto a range [r0, r1]. */
struct vf_scale {
	double d0, d1, r0, r1;
};
double vf_scale_map(const struct vf_scale *s, double v);

/* Nice ticks covering [lo, hi] with about `target` intervals: the step is
 * 1, 2 or 5 x 10^k, *lo and *hi are widened to multiples of it. Writes at
 * most max ticks, returns their count; *step (may be NULL) the step. A
 * degenerate or non-finite range is widened around its value. */
int vf_plot_ticks(double *lo, double *hi, int target, double *ticks, int max, double *step);
/* Ticks of a log axis covering [lo, hi] (both > 0): 1, 2, 5 x 10^k over
 * up to three decades, powers of ten beyond; *lo and *hi widened to the
 * outer ticks. Returns the count (at most max). */
int vf_plot_log_ticks(double *lo, double *hi, double *ticks, int max);
/* Does [lo, hi] span about 1.5 decades or more (a ratio over 25; lo > 0), so that a linear axis
 * would crowd the small values at its origin? */
bool vf_plot_wants_log(double lo, double hi);

/* Would n values (12 or more) crowd on a linear axis: half of them within a
 * tenth of the span they cover (a few far values stretching the axis)? */
bool vf_plot_crowded(const double *v, int n);

/* A tick label: as many decimals as the step needs, no trailing noise
 * ("0.25", "1.5", "40", "1e+06" past 1e6). */
void vf_plot_fmt_tick(double v, double step, char *out, size_t n);

#define VF_CHART_MAX_TICKS 24
#define VF_CHART_MAX_BANDS 64

/* One chart: an SVG of w x h user units, the plot area inside margins. */
struct vf_chart {
	const char *id;        /* element id (data-chart), e.g. "phases" */
	const char *label;     /* aria-label: what the chart shows */
	const char *xlabel;    /* axis titles, with units: "micro-batch (samples)" */
	const char *ylabel;
	double w, h, ml, mr, mt, mb;
	struct vf_scale x, y;
	double xt[VF_CHART_MAX_TICKS], yt[VF_CHART_MAX_TICKS], xstep, ystep;
	int nxt, nyt;
	int nbands;            /* > 0: x is categorical, one band per label */
	const char *const *bands; /* Borrowed. */
	bool xint;             /* numeric x shows integer ticks only */
	bool xlog, ylog;       /* log axes (vf_chart_xlog/ylog): x and y hold
				* the domain in log10 units; map values with
				* vf_chart_px/py */
};

/* A 640 x 360 chart with room for the axis titles. */
void vf_chart_init(struct vf_chart *c, const char *id, const char *label, const char *xlabel,
		   const char *ylabel);
/* Domains: numeric x, categorical x (n bands), y. Call before drawing. */
void vf_chart_xdomain(struct vf_chart *c, double lo, double hi);
/* Log domains (lo, hi > 0): the axis title should say "log scale". */
void vf_chart_xlog(struct vf_chart *c, double lo, double hi);
void vf_chart_ylog(struct vf_chart *c, double lo, double hi);
/* A value's position on the chart's x or y axis, linear or log (a value
 * <= 0 on a log axis lies just outside it). */
double vf_chart_px(const struct vf_chart *c, double v);
double vf_chart_py(const struct vf_chart *c, double v);
void vf_chart_xbands(struct vf_chart *c, int n, const char *const *labels);
void vf_chart_ydomain(struct vf_chart *c, double lo, double hi);
/* The centre and width of band i (categorical x). */
double vf_chart_band_x(const struct vf_chart *c, int i, double *width);

/* <svg ...>, grid, ticks and tick labels, axis titles. Then marks, then
 * vf_chart_end. */
void vf_chart_begin(const struct vf_chart *c, struct vf_w *w);
void vf_chart_end(const struct vf_chart *c, struct vf_w *w);

/* One stacked bar on band i: vals[k] (y units) on top of each other in
 * series order, colour class colors[k]; tips[k] is each part's tooltip. A
 * value <= 0 draws nothing. */
void vf_chart_stack(const struct vf_chart *c, struct vf_w *w, int band, int n, const double *vals,
		    const int *colors, const char *const *series, const char *const *tips);
/* A polyline through (xs[i], ys[i]), points with a non-finite y skipped
 * (the line breaks there); markers with tips[i] (may be NULL) when
 * markers. */
void vf_chart_line(const struct vf_chart *c, struct vf_w *w, int n, const double *xs,
		   const double *ys, int color, const char *series, bool dashed, bool markers,
		   const char *const *tips);
/* Scatter points (circles), tips[i] each (may be NULL). */
void vf_chart_points(const struct vf_chart *c, struct vf_w *w, int n, const double *xs,
		     const double *ys, int color, const char *series, const char *const *tips);
/* A horizontal line across the plot at y with a label at its right end. */
void vf_chart_hline(const struct vf_chart *c, struct vf_w *w, double y, int color,
		    const char *series, const char *label);
/* The same with its label placed where no segment of the given series
 * (nser of them: xs[k], ys[k], ns[k] points, data units) crosses it: at the
 * right end, the left end or the middle, above the line, then below. */
void vf_chart_hline_clear(const struct vf_chart *c, struct vf_w *w, double y, int color, const char *series,
			  const char *label, int nser, const double *const *xs, const double *const *ys,
			  const int *ns);
/* Marker shapes of a line's points: lines drawn over each other get
 * nested shapes (a large circle, a square inside it, a dot inside that),
 * so each stays visible at every point. */
enum vf_marker { VF_MARK_NONE, VF_MARK_CIRCLE, VF_MARK_SQUARE, VF_MARK_DOT, VF_MARK_LARGE };
/* vf_chart_line with a marker shape and, for one of several lines that lie
 * on each other, its share: share k of m (m >= 2) draws dashes of 6 units
 * every 6 m, offset by 6 k, so the m colours alternate along the common
 * line and none hides another (m <= 1: solid, or dashed when dashed). */
void vf_chart_line_marked(const struct vf_chart *c, struct vf_w *w, int n, const double *xs, const double *ys,
			  int color, const char *series, bool dashed, enum vf_marker marker, int share, int shares,
			  const char *const *tips);

/* A line's markers alone (tips[i] each, may be NULL), in a group named by
 * series: drawn after every line, nested shapes stay on top of the lines. */
void vf_chart_markers(const struct vf_chart *c, struct vf_w *w, int n, const double *xs, const double *ys, int color,
		      const char *series, enum vf_marker marker, const char *const *tips);

/* The boxes (SVG user units) of the labels placed so far on a chart, so the
 * next one is placed clear of them. Zero-initialise. */
#define VF_CHART_MAX_TAKEN 48
struct vf_chart_taken {
	int n;
	double x0[VF_CHART_MAX_TAKEN], y0[VF_CHART_MAX_TAKEN], x1[VF_CHART_MAX_TAKEN], y1[VF_CHART_MAX_TAKEN];
};
/* vf_chart_hline_clear whose label also keeps clear of the labels in taken
 * (may be NULL) and is added to it. */
void vf_chart_hline_avoid(const struct vf_chart *c, struct vf_w *w, double y, int color, const char *series,
			  const char *label, int nser, const double *const *xs, const double *const *ys,
			  const int *ns, struct vf_chart_taken *taken);
/* A label for the point (x, y) placed clear of the n points, of the
 * polyline through lxs/lys (nl points, may be 0), and of the labels in taken
 * (may be NULL; the label is added). With a leader line when it moved away
 * from its point. When no spot is clear: placed anyway at the first spot
 * inside the plot if required, else not drawn. Returns whether it was drawn. */
bool vf_chart_note_avoid(const struct vf_chart *c, struct vf_w *w, double x, double y, const char *text, int n,
			 const double *xs, const double *ys, int nl, const double *lxs, const double *lys,
			 struct vf_chart_taken *taken, bool required);

/* A text note at data coordinates (e.g. "chosen"). */
void vf_chart_note(const struct vf_chart *c, struct vf_w *w, double x, double y, const char *text);
/* The same, the label placed where none of the n points (data units) lies
 * under it and inside the plot area, with a leader line when it moved away
 * from its point. */
void vf_chart_note_clear(const struct vf_chart *c, struct vf_w *w, double x, double y, const char *text, int n,
			 const double *xs, const double *ys);

/* An HTML legend: one button per series (swatch + name; data-s for the
 * script, inert text without it). dashed[k] (may be NULL) marks lines. */
void vf_plot_legend(struct vf_w *w, const char *chart_id, int n, const char *const *names,
		    const int *colors, const bool *dashed);

#endif
