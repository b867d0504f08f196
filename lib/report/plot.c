/* plot.c - the SVG plotting kit of the HTML reports (plot.h): escaping,
 * scales, nice ticks, axes, stacked bars, lines, points, reference lines,
 * legends. Output is plain text into a vf_buf; numbers are written with
 * one decimal (SVG user units), which keeps a page small. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/report/plot.h"

/* ---- the writer ------------------------------------------------------------ */

void vf_w_init(struct vf_w *w, struct vf_buf *b, struct vf_error *err)
{
	w->b = b;
	w->st = VF_OK;
	w->err = err;
}

void vf_w_puts(struct vf_w *w, const char *s)
{
	if (!w->st)
		w->st = vf_buf_puts(w->b, s, w->err);
}

void vf_w_printf(struct vf_w *w, const char *fmt, ...)
{
	if (w->st)
		return;
	va_list ap;
	va_start(ap, fmt);
	w->st = vf_buf_vprintf(w->b, w->err, fmt, ap);
	va_end(ap);
}

/* Length of the valid UTF-8 sequence at s (1..4), 0 when invalid. */
static int utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	int n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
	if (n == 0 || (n == 2 && c < 0xC2) || (n == 4 && c > 0xF4))
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	if (n == 3 && ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0)))
		return 0; /* overlong, surrogates */
	if (n == 4 && ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90)))
		return 0;
	return n;
}

void vf_w_esc(struct vf_w *w, const char *s)
{
	if (!s)
		return;
	const unsigned char *p = (const unsigned char *)s;
	while (*p && !w->st) {
		const unsigned char *run = p;
		while (*p && *p >= 0x20 && *p < 0x80 && !strchr("&<>\"'", *p))
			p++;
		if (p > run)
			w->st = vf_buf_append(w->b, run, (size_t)(p - run), w->err);
		if (!*p || w->st)
			break;
		const char *rep = NULL;
		switch (*p) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		case '\t': rep = "\t"; break;
		case '\n': rep = "\n"; break;
		default: break;
		}
		int n = rep ? 1 : *p >= 0x80 ? utf8_len(p) : 0;
		if (rep)
			vf_w_puts(w, rep);
		else if (n > 0)
			w->st = vf_buf_append(w->b, p, (size_t)n, w->err);
		else
			vf_w_puts(w, "\xEF\xBF\xBD"); /* U+FFFD */
		p += n > 0 ? n : 1;
	}
}

/* ---- scales and ticks ------------------------------------------------------ */

double vf_scale_map(const struct vf_scale *s, double v)
{
	double span = s->d1 - s->d0;
	if (span == 0 || !isfinite(span))
		return (s->r0 + s->r1) / 2;
	return s->r0 + (v - s->d0) / span * (s->r1 - s->r0);
}

/* A value on a log axis (domain in log10 units): no log of 0 or less, it
 * lies a little outside the axis. */
static double logv(const struct vf_scale *s, double v)
{
	return v > 0 ? log10(v) : s->d0 - 0.05 * (s->d1 - s->d0);
}

double vf_chart_px(const struct vf_chart *c, double v)
{
	return vf_scale_map(&c->x, c->xlog ? logv(&c->x, v) : v);
}

double vf_chart_py(const struct vf_chart *c, double v)
{
	return vf_scale_map(&c->y, c->ylog ? logv(&c->y, v) : v);
}

bool vf_plot_wants_log(double lo, double hi)
{
	return lo > 0 && isfinite(lo) && isfinite(hi) && hi / lo > 25; /* about 1.5 decades (10^1.4) */
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

bool vf_plot_crowded(const double *v, int n)
{
	if (n < 12)
		return false;
	double *s = malloc((size_t)n * sizeof *s);
	if (!s)
		return false;
	int m = 0;
	for (int i = 0; i < n; i++)
		if (isfinite(v[i]))
			s[m++] = v[i];
	bool crowded = false;
	if (m >= 12) {
		qsort(s, (size_t)m, sizeof *s, cmp_double);
		double span = s[m - 1] - s[0], win = INFINITY;
		int half = (m + 1) / 2;
		for (int i = 0; i + half - 1 < m; i++)
			win = fmin(win, s[i + half - 1] - s[i]);
		crowded = span > 0 && win < span / 10;
	}
	free(s);
	return crowded;
}

int vf_plot_log_ticks(double *lo, double *hi, double *ticks, int max)
{
	static const double m[3] = {1, 2, 5};
	double a = *lo, b = *hi;
	if (!(a > 0) || !isfinite(a))
		a = 1;
	if (!(b > a) || !isfinite(b))
		b = a * 10;
	int ka = (int)floor(log10(a) + 1e-9), kb = (int)floor(log10(b) + 1e-9);
	/* the outer ticks: the largest 1-2-5 value <= a, the smallest >= b */
	double l = pow(10, ka), h = pow(10, kb + 1);
	for (int i = 0; i < 3; i++)
		if (m[i] * pow(10, ka) <= a * (1 + 1e-9))
			l = m[i] * pow(10, ka);
	for (int i = 2; i >= 0; i--)
		if (m[i] * pow(10, kb) >= b * (1 - 1e-9))
			h = m[i] * pow(10, kb);
	bool fine = log10(h / l) <= 3.01;
	if (!fine) /* powers of ten only */
		l = pow(10, ka), h = pow(10, (int)ceil(log10(b) - 1e-9));
	int n = 0;
	for (int k = ka; k <= kb + 1 && n < max; k++)
		for (int i = 0; i < 3 && n < max; i++) {
			double v = m[i] * pow(10, k);
			if ((!fine && i) || v < l * (1 - 1e-9) || v > h * (1 + 1e-9))
				continue;
			ticks[n++] = v;
		}
	*lo = l, *hi = h;
	return n;
}

static double nice_step(double span, int target)
{
	double raw = span / (target > 0 ? target : 1);
	double mag = pow(10, floor(log10(raw)));
	double f = raw / mag;
	double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
	return nice * mag;
}

int vf_plot_ticks(double *lo, double *hi, int target, double *ticks, int max, double *step)
{
	double a = *lo, b = *hi;
	if (!isfinite(a) || !isfinite(b))
		a = 0, b = 1;
	if (a > b) {
		double t = a;
		a = b, b = t;
	}
	if (b - a < 1e-12 * (fabs(a) + fabs(b)) || b == a) {
		double d = a == 0 ? 1 : fabs(a) * 0.1;
		a -= d, b += d;
	}
	double st = nice_step(b - a, target);
	a = floor(a / st + 1e-9) * st;
	b = ceil(b / st - 1e-9) * st;
	int n = 0;
	for (int k = 0; n < max; k++) {
		double v = a + k * st;
		if (v > b + st * 1e-9)
			break;
		ticks[n++] = fabs(v) < st * 1e-9 ? 0 : v;
	}
	*lo = a, *hi = b;
	if (step)
		*step = st;
	return n;
}

void vf_plot_fmt_tick(double v, double step, char *out, size_t n)
{
	if (fabs(v) >= 1e6 || (v != 0 && fabs(v) < 1e-4)) {
		snprintf(out, n, "%.3g", v);
		return;
	}
	int dec = 0;
	if (step > 0 && step < 1)
		dec = (int)ceil(-log10(step) - 1e-9);
	if (dec > 6)
		dec = 6;
	snprintf(out, n, "%.*f", dec, v);
}

/* ---- charts ---------------------------------------------------------------- */

void vf_chart_init(struct vf_chart *c, const char *id, const char *label, const char *xlabel,
		   const char *ylabel)
{
	memset(c, 0, sizeof *c);
	c->id = id;
	c->label = label;
	c->xlabel = xlabel;
	c->ylabel = ylabel;
	c->w = 640, c->h = 360;
	c->ml = 64, c->mr = 16, c->mt = 14, c->mb = 50;
	vf_chart_xdomain(c, 0, 1);
	vf_chart_ydomain(c, 0, 1);
}

void vf_chart_xdomain(struct vf_chart *c, double lo, double hi)
{
	c->nbands = 0;
	c->xlog = false;
	c->nxt = vf_plot_ticks(&lo, &hi, 8, c->xt, VF_CHART_MAX_TICKS, &c->xstep);
	if (c->xint && c->xstep < 1) { /* whole numbers only: 1, 2, 3 ... */
		lo = floor(lo), hi = ceil(hi);
		c->xstep = 1;
		c->nxt = 0;
		for (double v = lo; v <= hi && c->nxt < VF_CHART_MAX_TICKS; v++)
			c->xt[c->nxt++] = v;
	}
	c->x = (struct vf_scale){lo, hi, c->ml, c->w - c->mr};
}

void vf_chart_xlog(struct vf_chart *c, double lo, double hi)
{
	c->nbands = 0;
	c->nxt = vf_plot_log_ticks(&lo, &hi, c->xt, VF_CHART_MAX_TICKS);
	c->xstep = 0;
	c->xlog = true;
	c->x = (struct vf_scale){log10(lo), log10(hi), c->ml, c->w - c->mr};
}

void vf_chart_ylog(struct vf_chart *c, double lo, double hi)
{
	c->nyt = vf_plot_log_ticks(&lo, &hi, c->yt, VF_CHART_MAX_TICKS);
	c->ystep = 0;
	c->ylog = true;
	c->y = (struct vf_scale){log10(lo), log10(hi), c->h - c->mb, c->mt};
}

/* A tick's label on a linear or a log axis. */
static void tick_label(bool log, double v, double step, char *out, size_t n)
{
	if (log)
		snprintf(out, n, "%g", v);
	else
		vf_plot_fmt_tick(v, step, out, n);
}

void vf_chart_xbands(struct vf_chart *c, int n, const char *const *labels)
{
	c->nbands = n > VF_CHART_MAX_BANDS ? VF_CHART_MAX_BANDS : n;
	c->bands = labels;
	c->nxt = 0;
	c->x = (struct vf_scale){0, c->nbands > 0 ? c->nbands : 1, c->ml, c->w - c->mr};
}

void vf_chart_ydomain(struct vf_chart *c, double lo, double hi)
{
	c->ylog = false;
	c->nyt = vf_plot_ticks(&lo, &hi, 6, c->yt, VF_CHART_MAX_TICKS, &c->ystep);
	c->y = (struct vf_scale){lo, hi, c->h - c->mb, c->mt};
}

double vf_chart_band_x(const struct vf_chart *c, int i, double *width)
{
	double bw = vf_scale_map(&c->x, 1) - vf_scale_map(&c->x, 0);
	if (width)
		*width = bw * 0.62;
	return vf_scale_map(&c->x, i + 0.5);
}

static void axis_x(const struct vf_chart *c, struct vf_w *w)
{
	double y0 = c->h - c->mb;
	char t[48];
	if (c->nbands) {
		for (int i = 0; i < c->nbands; i++) {
			double x = vf_chart_band_x(c, i, NULL);
			vf_w_printf(w, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, y0 + 16);
			vf_w_esc(w, c->bands[i]);
			vf_w_puts(w, "</text>");
		}
	}
	for (int i = 0; i < c->nxt; i++) {
		if (c->xint && c->xt[i] != floor(c->xt[i]))
			continue;
		double x = vf_chart_px(c, c->xt[i]);
		tick_label(c->xlog, c->xt[i], c->xstep, t, sizeof t);
		vf_w_printf(w, "<line class=\"gr\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", x, x, c->mt, y0);
		/* a tick at the left edge starts there, clear of the y axis'
		 * lowest label right beside the origin */
		vf_w_printf(w, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>", x,
			    y0 + 16, x - c->ml < 2 ? "start" : "middle", t);
	}
	vf_w_printf(w, "<line class=\"ax\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", c->ml,
		    c->w - c->mr, y0, y0);
	vf_w_printf(w, "<text class=\"at\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
		    (c->ml + c->w - c->mr) / 2, c->h - 10);
	vf_w_esc(w, c->xlabel);
	vf_w_puts(w, "</text>");
}

static void axis_y(const struct vf_chart *c, struct vf_w *w)
{
	char t[48];
	for (int i = 0; i < c->nyt; i++) {
		double y = vf_chart_py(c, c->yt[i]);
		tick_label(c->ylog, c->yt[i], c->ystep, t, sizeof t);
		vf_w_printf(w, "<line class=\"gr\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", c->ml,
			    c->w - c->mr, y, y);
		vf_w_printf(w, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>", c->ml - 6,
			    y + 4, t);
	}
	vf_w_printf(w, "<line class=\"ax\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", c->ml, c->ml,
		    c->mt, c->h - c->mb);
	double cy = (c->mt + c->h - c->mb) / 2;
	vf_w_printf(w, "<text class=\"at\" transform=\"translate(14 %.1f) rotate(-90)\" text-anchor=\"middle\">", cy);
	vf_w_esc(w, c->ylabel);
	vf_w_puts(w, "</text>");
}

void vf_chart_begin(const struct vf_chart *c, struct vf_w *w)
{
	vf_w_printf(w, "<svg class=\"chart\" data-chart=\"");
	vf_w_esc(w, c->id);
	vf_w_printf(w, "\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"", c->w, c->h);
	vf_w_esc(w, c->label);
	vf_w_puts(w, "\" xmlns=\"http://www.w3.org/2000/svg\">");
	vf_w_printf(w, "<rect class=\"bg\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\"/>", c->w, c->h);
	axis_y(c, w);
	axis_x(c, w);
}

void vf_chart_end(const struct vf_chart *c, struct vf_w *w)
{
	(void)c;
	vf_w_puts(w, "</svg>");
}

static void open_mark(struct vf_w *w, const char *tag, const char *series)
{
	vf_w_printf(w, "<%s data-s=\"", tag);
	vf_w_esc(w, series ? series : "");
	vf_w_puts(w, "\" ");
}

static void tip(struct vf_w *w, const char *t)
{
	if (!t || !*t)
		return;
	vf_w_puts(w, "<title>");
	vf_w_esc(w, t);
	vf_w_puts(w, "</title>");
}

void vf_chart_stack(const struct vf_chart *c, struct vf_w *w, int band, int n, const double *vals,
		    const int *colors, const char *const *series, const char *const *tips)
{
	double bw, x = vf_chart_band_x(c, band, &bw);
	double base = 0;
	for (int k = 0; k < n; k++) {
		if (!(vals[k] > 0))
			continue;
		double y0 = vf_chart_py(c, base), y1 = vf_chart_py(c, base + vals[k]);
		base += vals[k];
		open_mark(w, "rect", series ? series[k] : NULL);
		vf_w_printf(w, "class=\"f%d\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">", colors[k] % 11,
			    x - bw / 2, y1, bw, y0 - y1 > 0 ? y0 - y1 : 0);
		tip(w, tips ? tips[k] : NULL);
		vf_w_puts(w, "</rect>");
	}
}

void vf_chart_line(const struct vf_chart *c, struct vf_w *w, int n, const double *xs,
		   const double *ys, int color, const char *series, bool dashed, bool markers,
		   const char *const *tips)
{
	vf_chart_line_marked(c, w, n, xs, ys, color, series, dashed, markers ? VF_MARK_CIRCLE : VF_MARK_NONE, 0, 1, tips);
}

void vf_chart_line_marked(const struct vf_chart *c, struct vf_w *w, int n, const double *xs, const double *ys,
			  int color, const char *series, bool dashed, enum vf_marker marker, int share, int shares,
			  const char *const *tips)
{
	char style[96] = "";
	if (shares > 1) { /* interleaved dashes (inline: over the class's pattern) */
		snprintf(style, sizeof style, " style=\"stroke-dasharray:6 %d;stroke-dashoffset:%d\"", 6 * (shares - 1),
			 -6 * share);
		dashed = true;
	}
	vf_w_puts(w, "<g ");
	vf_w_printf(w, "data-s=\"");
	vf_w_esc(w, series ? series : "");
	vf_w_printf(w, "\" class=\"k%d\">", color % 11);
	bool open = false;
	for (int i = 0; i < n; i++) {
		if (!isfinite(ys[i]) || !isfinite(xs[i])) {
			if (open)
				vf_w_puts(w, "\"/>");
			open = false;
			continue;
		}
		double x = vf_chart_px(c, xs[i]), y = vf_chart_py(c, ys[i]);
		if (!open)
			vf_w_printf(w, "<path class=\"ln%s\"%s d=\"M%.1f %.1f", dashed ? " da" : "", style, x, y);
		else
			vf_w_printf(w, "L%.1f %.1f", x, y);
		open = true;
	}
	if (open)
		vf_w_puts(w, "\"/>");
	vf_w_puts(w, "</g>");
	vf_chart_markers(c, w, n, xs, ys, color, series, marker, tips);
}

void vf_chart_markers(const struct vf_chart *c, struct vf_w *w, int n, const double *xs, const double *ys, int color,
		      const char *series, enum vf_marker marker, const char *const *tips)
{
	if (marker == VF_MARK_NONE)
		return;
	open_mark(w, "g", series);
	vf_w_puts(w, ">");
	for (int i = 0; i < n; i++) {
		if (!isfinite(ys[i]) || !isfinite(xs[i]))
			continue;
		double x = vf_chart_px(c, xs[i]), y = vf_chart_py(c, ys[i]);
		if (marker == VF_MARK_SQUARE) {
			/* inside a large circle: over one, both show */
			double h = 3.0;
			vf_w_printf(w, "<path class=\"mk f%d\" d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ\">", color % 11,
				    x - h, y - h, x + h, y - h, x + h, y + h, x - h, y + h);
			tip(w, tips ? tips[i] : NULL);
			vf_w_puts(w, "</path>");
			continue;
		}
		vf_w_printf(w, "<circle class=\"mk f%d\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\">", color % 11, x, y,
			    marker == VF_MARK_DOT ? "1.6" : marker == VF_MARK_LARGE ? "5.5" : "3.5");
		tip(w, tips ? tips[i] : NULL);
		vf_w_puts(w, "</circle>");
	}
	vf_w_puts(w, "</g>");
}

void vf_chart_points(const struct vf_chart *c, struct vf_w *w, int n, const double *xs,
		     const double *ys, int color, const char *series, const char *const *tips)
{
	for (int i = 0; i < n; i++) {
		if (!isfinite(ys[i]) || !isfinite(xs[i]))
			continue;
		open_mark(w, "circle", series);
		vf_w_printf(w, "class=\"pt f%d\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\">", color % 11,
			    vf_chart_px(c, xs[i]), vf_chart_py(c, ys[i]));
		tip(w, tips ? tips[i] : NULL);
		vf_w_puts(w, "</circle>");
	}
}

void vf_chart_hline(const struct vf_chart *c, struct vf_w *w, double y, int color,
		    const char *series, const char *label)
{
	double py = vf_chart_py(c, y);
	open_mark(w, "g", series);
	vf_w_printf(w, "class=\"k%d\"><line class=\"cap\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\">",
		    color % 11, c->ml, c->w - c->mr, py, py);
	tip(w, label);
	vf_w_printf(w, "</line><text class=\"cl f%d\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", color % 11,
		    c->w - c->mr - 4, py - 5);
	vf_w_esc(w, label);
	vf_w_puts(w, "</text></g>");
}

/* Does the segment (ax,ay)-(bx,by) cross the box [x0,x1] x [y0,y1]? (Liang-Barsky) */
static bool seg_hits(double ax, double ay, double bx, double by, double x0, double x1, double y0, double y1)
{
	double t0 = 0, t1 = 1, dx = bx - ax, dy = by - ay;
	double P[4] = {-dx, dx, -dy, dy}, Q[4] = {ax - x0, x1 - ax, ay - y0, y1 - ay};
	for (int i = 0; i < 4; i++) {
		if (P[i] == 0) {
			if (Q[i] < 0)
				return false;
			continue;
		}
		double t = Q[i] / P[i];
		if (P[i] < 0) {
			if (t > t1)
				return false;
			if (t > t0)
				t0 = t;
		} else {
			if (t < t0)
				return false;
			if (t < t1)
				t1 = t;
		}
	}
	return true;
}

void vf_chart_hline_clear(const struct vf_chart *c, struct vf_w *w, double y, int color, const char *series,
			  const char *label, int nser, const double *const *xs, const double *const *ys,
			  const int *ns)
{
	vf_chart_hline_avoid(c, w, y, color, series, label, nser, xs, ys, ns, NULL);
}

/* Does the box overlap a label already placed (2 units apart at least)? */
static bool taken_hits(const struct vf_chart_taken *t, double x0, double x1, double y0, double y1)
{
	for (int i = 0; t && i < t->n; i++)
		if (x0 < t->x1[i] + 2 && x1 > t->x0[i] - 2 && y0 < t->y1[i] + 2 && y1 > t->y0[i] - 2)
			return true;
	return false;
}

static void taken_add(struct vf_chart_taken *t, double x0, double x1, double y0, double y1)
{
	if (!t || t->n >= VF_CHART_MAX_TAKEN)
		return;
	t->x0[t->n] = x0, t->x1[t->n] = x1, t->y0[t->n] = y0, t->y1[t->n] = y1;
	t->n++;
}

void vf_chart_hline_avoid(const struct vf_chart *c, struct vf_w *w, double y, int color, const char *series,
			  const char *label, int nser, const double *const *xs, const double *const *ys,
			  const int *ns, struct vf_chart_taken *taken)
{
	double py = vf_chart_py(c, y), x0 = c->ml, x1 = c->w - c->mr;
	double tw = 7.6 * (double)strlen(label ? label : "") + 4; /* 11.5 px bold: up to ~7.6 px a character (digits, capitals) */
	/* right, left, middle; above the line, then below */
	const double lx[3] = {x1 - 4 - tw, x0 + 4, (x0 + x1 - tw) / 2};
	const double base[2] = {py - 5, py + 15};
	double bx = lx[0], by = base[0];
	bool found = false;
	for (int v = 0; v < 2 && !found; v++)
		for (int h = 0; h < 3 && !found; h++) {
			double bt = base[v] - 12, bb = base[v] + 3;
			if (bt < c->mt - 2 || bb > c->h - c->mb + 2)
				continue;
			bool clear = !taken_hits(taken, lx[h], lx[h] + tw, bt, bb);
			for (int sI = 0; sI < nser && clear; sI++)
				for (int k = 0; k + 1 < ns[sI] && clear; k++) {
					if (!isfinite(xs[sI][k]) || !isfinite(ys[sI][k]) || !isfinite(xs[sI][k + 1]) ||
					    !isfinite(ys[sI][k + 1]))
						continue;
					clear = !seg_hits(vf_chart_px(c, xs[sI][k]), vf_chart_py(c, ys[sI][k]),
							  vf_chart_px(c, xs[sI][k + 1]), vf_chart_py(c, ys[sI][k + 1]),
							  lx[h], lx[h] + tw, bt, bb);
				}
			if (clear)
				bx = lx[h], by = base[v], found = true;
		}
	taken_add(taken, bx, bx + tw, by - 12, by + 3);
	open_mark(w, "g", series);
	vf_w_printf(w, "class=\"k%d\"><line class=\"cap\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\">",
		    color % 11, x0, x1, py, py);
	tip(w, label);
	vf_w_printf(w, "</line><text class=\"cl f%d\" x=\"%.1f\" y=\"%.1f\">", color % 11, bx + 2, by);
	vf_w_esc(w, label);
	vf_w_puts(w, "</text></g>");
}

void vf_chart_note_clear(const struct vf_chart *c, struct vf_w *w, double x, double y, const char *text, int n,
			 const double *xs, const double *ys)
{
	double px = vf_chart_px(c, x), py = vf_chart_py(c, y);
	double tw = 7.2 * (double)strlen(text ? text : "") + 4, th = 14;
	/* the label's left/baseline offsets from the point: up-right, down-right,
	 * up-left, down-left, then further up-right */
	const double ox[] = {7, 7, -7 - tw, -7 - tw, 7, 7, 7, 7, 7, 40, 80, 120, 80, 160, 200, 240};
	const double oy[] = {-7, 18, -7, 18, -24, -42, -60, -90, -120, -7, -7, -7, -40, -40, -70, -70};
	int best = 0;
	for (int k = 0; k < (int)(sizeof ox / sizeof ox[0]); k++) {
		double x0 = px + ox[k], x1 = x0 + tw, y1 = py + oy[k] + 3, y0 = y1 - th;
		if (x0 < c->ml + 2 || x1 > c->w - c->mr || y0 < c->mt || y1 > c->h - c->mb - 2)
			continue; /* inside the plot area, clear of the axes */
		bool clear = true;
		for (int i = 0; i < n && clear; i++) {
			if (!isfinite(xs[i]) || !isfinite(ys[i]))
				continue;
			double qx = vf_chart_px(c, xs[i]), qy = vf_chart_py(c, ys[i]);
			clear = !(qx > x0 - 5 && qx < x1 + 5 && qy > y0 - 5 && qy < y1 + 5);
		}
		if (clear) {
			best = k;
			break;
		}
	}
	if (oy[best] != -7 || ox[best] != 7) /* away from its point: a leader line to it */
		vf_w_printf(w, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", px, py,
			    px + ox[best] + (ox[best] < 0 ? tw : 0), py + oy[best] + (oy[best] > 0 ? -th + 3 : 3));
	vf_w_printf(w, "<text class=\"nt\" x=\"%.1f\" y=\"%.1f\">", px + ox[best], py + oy[best]);
	vf_w_esc(w, text);
	vf_w_puts(w, "</text>");
}

bool vf_chart_note_avoid(const struct vf_chart *c, struct vf_w *w, double x, double y, const char *text, int n,
			 const double *xs, const double *ys, int nl, const double *lxs, const double *lys,
			 struct vf_chart_taken *taken, bool required)
{
	double px = vf_chart_px(c, x), py = vf_chart_py(c, y);
	double tw = 7.2 * (double)strlen(text ? text : "") + 4, th = 14;
	/* the label's left/baseline offsets from the point: beside it first
	 * (up-right, down-right, up-left, down-left), then further away */
	const double ox[] = {7, 7, -7 - tw, -7 - tw, 7, -7 - tw, 7, -7 - tw, 7, 7, 7, 7, 40, 80, 120, 40, 80, 160, 200, 240,
			     -40 - tw, -80 - tw, -40 - tw, -80 - tw, 40, 80};
	const double oy[] = {-7, 18, -7, 18, -24, -24, 35, 35, -42, -60, -90, -120, -7, -7, -7, -40, -40, -40, -70, -70,
			     -7, -7, -40, -40, 35, 35};
	int best = -1, first = -1;
	for (int k = 0; k < (int)(sizeof ox / sizeof ox[0]) && best < 0; k++) {
		double x0 = px + ox[k], x1 = x0 + tw, y1 = py + oy[k] + 3, y0 = y1 - th;
		if (x0 < c->ml + 2 || x1 > c->w - c->mr || y0 < c->mt || y1 > c->h - c->mb - 2)
			continue; /* inside the plot area, clear of the axes */
		if (first < 0)
			first = k;
		bool clear = !taken_hits(taken, x0, x1, y0, y1);
		for (int i = 0; i < n && clear; i++) {
			if (!isfinite(xs[i]) || !isfinite(ys[i]))
				continue;
			double qx = vf_chart_px(c, xs[i]), qy = vf_chart_py(c, ys[i]);
			clear = !(qx > x0 - 5 && qx < x1 + 5 && qy > y0 - 5 && qy < y1 + 5);
		}
		for (int i = 0; i + 1 < nl && clear; i++) {
			if (!isfinite(lxs[i]) || !isfinite(lys[i]) || !isfinite(lxs[i + 1]) || !isfinite(lys[i + 1]))
				continue;
			clear = !seg_hits(vf_chart_px(c, lxs[i]), vf_chart_py(c, lys[i]),
					  vf_chart_px(c, lxs[i + 1]), vf_chart_py(c, lys[i + 1]), x0 - 2, x1 + 2,
					  y0 - 2, y1 + 2);
		}
		if (clear)
			best = k;
	}
	if (best < 0) {
		if (!required || first < 0)
			return false;
		best = first;
	}
	double x0 = px + ox[best], y1 = py + oy[best] + 3;
	taken_add(taken, x0, x0 + tw, y1 - th, y1);
	if (oy[best] != -7 || ox[best] != 7) { /* away from its point: a leader line to its nearest corner */
		double lx = ox[best] < 0 ? x0 + tw : x0, ly = oy[best] > 0 ? y1 - th : y1;
		vf_w_printf(w, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", px, py, lx, ly);
	}
	vf_w_printf(w, "<text class=\"nt\" x=\"%.1f\" y=\"%.1f\">", px + ox[best], py + oy[best]);
	vf_w_esc(w, text);
	vf_w_puts(w, "</text>");
	return true;
}

void vf_chart_note(const struct vf_chart *c, struct vf_w *w, double x, double y, const char *text)
{
	vf_w_printf(w, "<text class=\"nt\" x=\"%.1f\" y=\"%.1f\">", vf_chart_px(c, x) + 7,
		    vf_chart_py(c, y) - 7);
	vf_w_esc(w, text);
	vf_w_puts(w, "</text>");
}

void vf_plot_legend(struct vf_w *w, const char *chart_id, int n, const char *const *names,
		    const int *colors, const bool *dashed)
{
	vf_w_puts(w, "<ul class=\"legend\" data-for=\"");
	vf_w_esc(w, chart_id);
	vf_w_puts(w, "\">");
	for (int k = 0; k < n; k++) {
		vf_w_puts(w, "<li><button type=\"button\" data-s=\"");
		vf_w_esc(w, names[k]);
		vf_w_printf(w, "\"><span class=\"sw %s%d\"></span>", dashed && dashed[k] ? "dl k" : "f",
			    colors[k] % 11);
		vf_w_esc(w, names[k]);
		vf_w_puts(w, "</button></li>");
	}
	vf_w_puts(w, "</ul>");
}
