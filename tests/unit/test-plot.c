/* test-plot.c - the report's plotting kit and page pieces: nice ticks,
 * scale mapping, tick labels, escaping of text into SVG/HTML (markup,
 * quotes, invalid UTF-8, control bytes), the embedded JSON that cannot end
 * its script element, marks and legends, the samples-file parser and its
 * thinning, and a rendered estimate page. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vf_test.h"
#include "vramfit/report/html.h"
#include "vramfit/report/plot.h"
#include "vramfit/report/report.h"

static void test_ticks(void)
{
	double t[32], step, lo = 0, hi = 57.9;
	int n = vf_plot_ticks(&lo, &hi, 6, t, 32, &step);
	CHECK(step == 10);
	CHECK(lo == 0 && hi == 60);
	CHECK_INT(n, 7);
	CHECK(t[0] == 0 && t[6] == 60);
	lo = 0.013, hi = 0.87;
	n = vf_plot_ticks(&lo, &hi, 6, t, 32, &step);
	CHECK(fabs(step - 0.2) < 1e-12);
	CHECK(lo == 0 && fabs(hi - 1.0) < 1e-12);
	CHECK_INT(n, 6);
	lo = -3.2, hi = 11;
	n = vf_plot_ticks(&lo, &hi, 5, t, 32, &step);
	CHECK(step == 5 && lo == -5 && hi == 15 && n == 5);
	CHECK(t[1] == 0); /* exactly zero, not -1e-16 */
	/* degenerate and non-finite ranges still give ticks */
	lo = hi = 24;
	n = vf_plot_ticks(&lo, &hi, 5, t, 32, &step);
	CHECK(n >= 2 && lo < 24 && hi > 24);
	lo = NAN, hi = INFINITY;
	n = vf_plot_ticks(&lo, &hi, 5, t, 32, &step);
	CHECK(n >= 2 && lo == 0 && hi == 1);
	/* reversed, and the cap on the count */
	lo = 100, hi = 0;
	n = vf_plot_ticks(&lo, &hi, 10, t, 3, &step);
	CHECK_INT(n, 3);
	CHECK(lo == 0 && hi == 100);
	/* 2 x 10^k steps */
	lo = 0, hi = 9;
	vf_plot_ticks(&lo, &hi, 5, t, 32, &step);
	CHECK(step == 2 && hi == 10);
}

static void test_scale_and_labels(void)
{
	struct vf_scale s = {0, 80, 346, 14}; /* y: 0 GiB at the bottom */
	CHECK(vf_scale_map(&s, 0) == 346);
	CHECK(vf_scale_map(&s, 80) == 14);
	CHECK(fabs(vf_scale_map(&s, 40) - 180) < 1e-9);
	struct vf_scale z = {5, 5, 0, 100};
	CHECK(vf_scale_map(&z, 5) == 50); /* empty domain: the middle */
	char b[32];
	vf_plot_fmt_tick(0.25, 0.05, b, sizeof b);
	CHECK_STR(b, "0.25");
	vf_plot_fmt_tick(40, 10, b, sizeof b);
	CHECK_STR(b, "40");
	vf_plot_fmt_tick(1.5, 0.5, b, sizeof b);
	CHECK_STR(b, "1.5");
	vf_plot_fmt_tick(2e7, 5e6, b, sizeof b);
	CHECK_STR(b, "2e+07");
}

static char *esc(const char *s)
{
	struct vf_buf b;
	struct vf_w w;
	vf_buf_init(&b, 0);
	vf_w_init(&w, &b, NULL);
	vf_w_esc(&w, s);
	return vf_buf_detach(&b, NULL);
}

static void test_escaping(void)
{
	char *e = esc("<script>alert('x' & \"y\")</script>");
	CHECK_STR(e, "&lt;script&gt;alert(&#39;x&#39; &amp; &quot;y&quot;)&lt;/script&gt;");
	free(e);
	e = esc("caf\xC3\xA9 \xE2\x98\x85 ok");
	CHECK_STR(e, "caf\xC3\xA9 \xE2\x98\x85 ok"); /* valid UTF-8 kept */
	free(e);
	e = esc("a\xFF" "b\xC3");
	CHECK_STR(e, "a\xEF\xBF\xBD" "b\xEF\xBF\xBD"); /* invalid bytes -> U+FFFD */
	free(e);
	e = esc("bell\x07 tab\t nl\n \xED\xA0\x80");
	CHECK_STR(e, "bell\xEF\xBF\xBD tab\t nl\n \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); /* control, surrogate */
	free(e);
	e = esc("");
	CHECK(e == NULL || e[0] == '\0');
	free(e);
}

static void test_embedded_json(void)
{
	struct vf_buf b;
	struct vf_w w;
	vf_buf_init(&b, 0);
	vf_w_init(&w, &b, NULL);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "change", "</script><script>alert(1)</script><!--");
	vf_html_data(&w, o);
	CHECK(w.st == VF_OK);
	/* one closing tag: the element's own */
	const char *first = strstr(b.data, "</script>");
	CHECK(first && strstr(first + 1, "</script>") == NULL);
	CHECK(strstr(b.data, "<!--") == NULL);
	CHECK_CONTAINS(b.data, "\\u003c/script>");
	/* and the JSON reads back the same */
	const char *start = strchr(b.data, '>') + 1;
	char *json = strndup(start, (size_t)(first - start));
	cJSON *back = cJSON_Parse(json);
	CHECK(back && strcmp(cJSON_GetObjectItem(back, "change")->valuestring,
			     "</script><script>alert(1)</script><!--") == 0);
	cJSON_Delete(back);
	free(json);
	cJSON_Delete(o);
	vf_buf_release(&b);
}

static void test_marks(void)
{
	struct vf_buf b;
	struct vf_w w;
	vf_buf_init(&b, 0);
	vf_w_init(&w, &b, NULL);
	struct vf_chart c;
	const char *bands[] = {"forward", "loss"};
	vf_chart_init(&c, "t", "a <test>", "phase", "memory (GiB)");
	vf_chart_xbands(&c, 2, bands);
	vf_chart_ydomain(&c, 0, 10);
	vf_chart_begin(&c, &w);
	double v[] = {4, 0, 3};
	int col[] = {0, 1, 2};
	const char *names[] = {"weights", "grads", "opt"};
	const char *tips[] = {"w 4", "g", "o & 3"};
	vf_chart_stack(&c, &w, 1, 3, v, col, names, tips);
	double xs[] = {1, 2, 3}, ys[] = {1, NAN, 3};
	vf_chart_line(&c, &w, 3, xs, ys, 4, "gpu \"a\"", true, true, NULL);
	vf_chart_hline(&c, &w, 8, 5, "cap", "RTX 4090 24.0 GiB");
	vf_chart_end(&c, &w);
	vf_plot_legend(&w, "t", 3, names, col, NULL);
	CHECK(w.st == VF_OK);
	CHECK_CONTAINS(b.data, "aria-label=\"a &lt;test&gt;\"");
	CHECK_CONTAINS(b.data, ">memory (GiB)</text>");
	CHECK_CONTAINS(b.data, ">forward</text>");
	/* two parts drawn (the zero one skipped), the second on top of the first */
	CHECK_CONTAINS(b.data, "<title>w 4</title>");
	CHECK_CONTAINS(b.data, "<title>o &amp; 3</title>");
	CHECK(strstr(b.data, "<title>g</title>") == NULL);
	/* y = 4 of 0..10 over 310..14: top at 191.6, height 118.4 */
	CHECK_CONTAINS(b.data, "y=\"191.6\" width=\"");
	CHECK_CONTAINS(b.data, "height=\"118.4\"");
	/* the line breaks at the NaN: two sub-paths */
	CHECK_CONTAINS(b.data, "data-s=\"gpu &quot;a&quot;\"");
	const char *p1 = strstr(b.data, "<path class=\"ln da\"");
	CHECK(p1 && strstr(p1 + 1, "<path class=\"ln da\""));
	CHECK_CONTAINS(b.data, ">RTX 4090 24.0 GiB</text>");
	CHECK_CONTAINS(b.data, "<button type=\"button\" data-s=\"weights\"><span class=\"sw f0\"></span>weights</button>");
	vf_buf_release(&b);
}

static void test_samples(void)
{
	struct vf_samples s;
	struct vf_error err = {0};
	vf_samples_init(&s);
	const char *ok = "# vramfit memory samples v1 source=host-rss\n0.100 1000\n0.200 5000\n\n0.300 2000\n0.4";
	CHECK(vf_samples_parse(ok, strlen(ok), "t.samples", &s, &err) == VF_OK);
	CHECK_INT(s.n, 3); /* the cut last line is dropped */
	CHECK_STR(s.source, "host-rss");
	CHECK_INT(s.bytes[1], 5000);
	CHECK(fabs(s.t[2] - 0.3) < 1e-12);
	double t[2];
	int64_t by[2];
	CHECK_INT(vf_samples_thin(&s, 2, t, by), 2);
	CHECK_INT(by[0], 1000); /* buckets [0,1) and [1,3): the peak kept */
	CHECK_INT(by[1], 5000);
	const char *bad = "# vramfit memory samples v1\n0.1 12\nx 3\n";
	CHECK(vf_samples_parse(bad, strlen(bad), "t.samples", &s, &err) == VF_ERR);
	CHECK_STR(err.msg, "t.samples:3: expected \"SECONDS BYTES\"");
	CHECK_INT(s.n, 0);
	const char *neg = "# vramfit memory samples v1\n0.1 -12\n";
	CHECK(vf_samples_parse(neg, strlen(neg), "n", &s, &err) == VF_ERR);
	CHECK(vf_samples_parse("hello\n", 6, "h", &s, &err) == VF_ERR);
	CHECK_CONTAINS(err.msg, "h: not a vramfit samples file");
	CHECK(vf_samples_parse("", 0, "e", &s, &err) == VF_ERR);
	char nul[] = "# vramfit memory samples v1\n0.1 1\0\n";
	CHECK(vf_samples_parse(nul, sizeof nul - 1, "z", &s, &err) == VF_ERR);
	vf_samples_release(&s);
}

static void test_render_estimate(void)
{
	const char *j = "{\"report\":\"estimate\",\"model\":{\"id\":\"m<1>\",\"params\":8e9,\"trainable_params\":1e6},"
			"\"setup\":{\"mode\":\"lora\",\"batch\":1},\"memory\":{\"peak_bytes\":2e10,\"peak_phase\":\"loss\","
			"\"dominant_term\":\"weights\"},"
			"\"gpus\":[{\"id\":\"rtx-4090\",\"name\":\"NVIDIA GeForce RTX 4090\",\"vram_bytes\":25757220864,"
			"\"fits\":true,\"headroom_bytes\":3650722201,\"max_batch\":1,\"peak_bytes\":2e10}],"
			"\"phases\":[{\"phase\":\"forward\",\"terms\":{\"weights\":1e10,\"activations\":5e9},\"total_bytes\":1.5e10},"
			"{\"phase\":\"loss\",\"terms\":{\"weights\":1e10,\"logits\":1e10},\"total_bytes\":2e10}],"
			"\"batch_sweep\":[{\"gpu\":\"rtx-4090\",\"name\":\"NVIDIA GeForce RTX 4090\",\"vram_bytes\":25757220864,"
			"\"max_batch\":1,\"points\":[{\"batch\":1,\"peak_bytes\":2e10,\"step_seconds\":0.5,\"tokens_per_second\":4000},"
			"{\"batch\":2,\"peak_bytes\":37689223168,\"step_seconds\":0.9,\"tokens_per_second\":4400}]}],"
			"\"assumptions\":[\"LoRA rank 16 (`--lora-rank`)\"]}";
	cJSON *d = cJSON_Parse(j);
	struct vf_buf b;
	struct vf_error err = {0};
	vf_buf_init(&b, 0);
	CHECK(vf_report_render(d, &b, &err) == VF_OK);
	CHECK_CONTAINS(b.data, "fits RTX 4090 with 3.4 GiB to spare at batch 1; batch 2 needs 35.1 GiB");
	CHECK_CONTAINS(b.data, "m&lt;1&gt;");
	CHECK_CONTAINS(b.data, "LoRA rank 16 (<code>--lora-rank</code>)");
	CHECK_CONTAINS(b.data, "data-chart=\"phases\"");
	CHECK_CONTAINS(b.data, "data-chart=\"batch\"");
	/* one batch fits: its step time is a figure in the text, not a one-dot chart */
	CHECK(strstr(b.data, "data-chart=\"steptime\"") == NULL && strstr(b.data, "data-chart=\"throughput\"") == NULL);
	CHECK_CONTAINS(b.data, "<h2>Step time: RTX 4090 0.5 s per step at batch 1</h2>");
	CHECK_CONTAINS(b.data, "id=\"vramfit-data\"");
	CHECK(strstr(b.data, "http://") == NULL || strstr(b.data, "http://www.w3.org/2000/svg"));
	CHECK(strstr(b.data, "src=") == NULL && strstr(b.data, "<link") == NULL);
	vf_buf_reset(&b);
	cJSON_ReplaceItemInObject(d, "report", cJSON_CreateString("nope"));
	CHECK(vf_report_render(d, &b, &err) == VF_EUSAGE);
	cJSON_Delete(d);
	vf_buf_release(&b);
}

/* A trial with no memory samples (the trainer exited before the first
 * poll) is a sentence, not a -1..1 axis; with a trial that has samples, the
 * chart shows that one and the sentence names the other. */
static void test_render_run_empty_samples(void)
{
	const char *j = "{\"report\":\"run\",\"trials\":[{\"index\":1,\"change\":\"baseline\",\"outcome\":\"failed\","
			"\"samples\":{\"source\":\"host-rss\",\"count\":0,\"t\":[],\"bytes\":[]}}]}";
	cJSON *d = cJSON_Parse(j);
	struct vf_buf b;
	struct vf_error err = {0};
	vf_buf_init(&b, 0);
	CHECK(vf_report_render(d, &b, &err) == VF_OK);
	CHECK(strstr(b.data, "data-chart=\"memory\"") == NULL);
	CHECK_CONTAINS(b.data, "baseline: no memory samples: the trainer exited before the first poll");
	cJSON *t2 = cJSON_Parse("{\"index\":2,\"change\":\"batch 2\",\"outcome\":\"ok\",\"samples\":{\"source\":"
				"\"host-rss\",\"count\":2,\"t\":[0,1],\"bytes\":[1e9,2e9]}}");
	cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(d, "trials"), t2);
	vf_buf_reset(&b);
	CHECK(vf_report_render(d, &b, &err) == VF_OK);
	CHECK_CONTAINS(b.data, "data-chart=\"memory\"");
	CHECK_CONTAINS(b.data, "baseline: no memory samples");
	CHECK(strstr(b.data, "data-s=\"trial 1") == NULL);
	cJSON_Delete(d);
	vf_buf_release(&b);
}

/* Labels placed clear: a capacity label moves off a line that runs
 * through its usual place (the right end); a note moves off the points
 * that crowd its usual place, with a leader line back to its point. */
static void test_labels_clear(void)
{
	struct vf_buf b;
	struct vf_w w;
	vf_buf_init(&b, 0);
	vf_w_init(&w, &b, NULL);
	struct vf_chart c;
	vf_chart_init(&c, "t", "labels", "x", "y");
	vf_chart_xdomain(&c, 0, 10);
	vf_chart_ydomain(&c, 0, 100);
	vf_chart_begin(&c, &w);
	double xs[] = {0, 10}, ys[] = {0, 100};
	const double *lx[] = {xs}, *ly[] = {ys};
	int ln[] = {2};
	/* the diagonal crosses y = 80 at x = 8: the right end (label up to x=10) is taken */
	vf_chart_hline_clear(&c, &w, 80, 1, "cap", "A100 80.0 GiB", 1, lx, ly, ln);
	const char *t = strstr(b.data, "<text class=\"cl f1\" x=\"");
	CHECK(t != NULL);
	double tx = t ? atof(t + strlen("<text class=\"cl f1\" x=\"")) : 0;
	/* the label's box (about 7 px a character) ends left of where the line crosses */
	CHECK(tx + 7.0 * 13 + 4 < vf_scale_map(&c.x, 8));
	vf_buf_reset(&b);
	double px[] = {1, 1.2, 1.4, 1.6, 1.8, 2.0}, py[] = {5, 7, 9, 11, 13, 15};
	vf_chart_note_clear(&c, &w, 1, 3, "chosen: h200 x2", 6, px, py);
	CHECK_CONTAINS(b.data, "<line class=\"ax\"");
	t = strstr(b.data, "<text class=\"nt\" x=\"");
	CHECK(t != NULL);
	if (t) { /* its box (baseline y, 14 px tall, ~7.2 px a character) holds none of the points */
		double nx = atof(t + strlen("<text class=\"nt\" x=\""));
		const char *yv = strstr(t, "y=\"");
		double ny = yv ? atof(yv + 3) : 0, nw = 7.2 * 15;
		for (int i = 0; i < 6; i++) {
			double qx = vf_scale_map(&c.x, px[i]), qy = vf_scale_map(&c.y, py[i]);
			CHECK(!(qx >= nx && qx <= nx + nw && qy >= ny - 14 && qy <= ny + 3));
		}
		CHECK(ny != vf_scale_map(&c.y, 3) - 7); /* moved from its usual place */
	}
	vf_buf_release(&b);
}

/* The x axis' tick at the origin starts there (text-anchor start), clear
 * of the y axis' lowest label beside it (the run page's memory chart drew
 * "0.0" over "0"); the others stay centred on their tick. */
static void test_origin_ticks_apart(void)
{
	struct vf_buf b;
	struct vf_w w;
	vf_buf_init(&b, 0);
	vf_w_init(&w, &b, NULL);
	struct vf_chart c;
	vf_chart_init(&c, "t", "origin", "seconds", "GiB");
	vf_chart_xdomain(&c, 0, 10);
	vf_chart_ydomain(&c, 0, 4);
	vf_chart_begin(&c, &w);
	char want[96];
	snprintf(want, sizeof want, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"start\">0</text>",
		 vf_scale_map(&c.x, 0), c.h - c.mb + 16);
	CHECK_CONTAINS(b.data, want);
	snprintf(want, sizeof want, "text-anchor=\"middle\">%s</text>", "10");
	CHECK_CONTAINS(b.data, want);
	vf_buf_release(&b);
}

/* Log axes: 1-2-5 ticks over up to three decades, powers of ten beyond,
 * the range widened to the outer ticks; values placed by their log; the
 * rule for wanting one (about 1.5 decades). */
static void test_log_axis(void)
{
	double t[32], lo = 2.78, hi = 333;
	int n = vf_plot_log_ticks(&lo, &hi, t, 32);
	CHECK(lo == 2 && hi == 500);
	CHECK_INT(n, 8); /* 2 5 10 20 50 100 200 500 */
	CHECK(t[0] == 2 && t[1] == 5 && fabs(t[7] - 500) < 1e-9);
	lo = 0.013, hi = 870;
	n = vf_plot_log_ticks(&lo, &hi, t, 32);
	CHECK(fabs(lo - 0.01) < 1e-12 && fabs(hi - 1000) < 1e-9);
	CHECK_INT(n, 6); /* five decades: 0.01 ... 1000, powers of ten only */
	lo = 0, hi = -1; /* nonsense: still ticks */
	n = vf_plot_log_ticks(&lo, &hi, t, 32);
	CHECK(n >= 2 && lo > 0 && hi > lo);
	CHECK(vf_plot_wants_log(2.78, 333) && vf_plot_wants_log(1.38, 39.7));
	CHECK(!vf_plot_wants_log(52, 111) && !vf_plot_wants_log(0, 100) && !vf_plot_wants_log(-1, 100));
	/* half of 14 values in 160..250 with two near 800: crowded; evenly spread, or too few: not */
	double skew[14] = {161, 165, 170, 172, 175, 180, 185, 190, 200, 210, 250, 320, 780, 870};
	double even[14];
	for (int i = 0; i < 14; i++)
		even[i] = 100 + 50 * i;
	CHECK(vf_plot_crowded(skew, 14));
	CHECK(!vf_plot_crowded(even, 14));
	CHECK(!vf_plot_crowded(skew, 11));

	struct vf_buf b;
	struct vf_w w;
	vf_buf_init(&b, 0);
	vf_w_init(&w, &b, NULL);
	struct vf_chart c;
	vf_chart_init(&c, "t", "log", "time (h, log scale)", "cost");
	vf_chart_xlog(&c, 2.78, 333);
	vf_chart_ydomain(&c, 0, 100);
	CHECK(c.xlog && !c.ylog);
	/* equal ratios, equal distances; 10 a decade from 1 */
	CHECK(fabs((vf_chart_px(&c, 20) - vf_chart_px(&c, 2)) - (vf_chart_px(&c, 200) - vf_chart_px(&c, 20))) < 1e-9);
	CHECK(fabs(vf_chart_px(&c, 2) - c.ml) < 1e-9 && fabs(vf_chart_px(&c, 500) - (c.w - c.mr)) < 1e-9);
	CHECK(vf_chart_px(&c, 0) < c.ml); /* no log of 0: outside the axis */
	vf_chart_begin(&c, &w);
	CHECK_CONTAINS(b.data, ">500</text>");
	CHECK_CONTAINS(b.data, ">20</text>");
	vf_chart_end(&c, &w);
	vf_chart_xdomain(&c, 0, 10); /* a linear domain again */
	CHECK(!c.xlog && vf_chart_px(&c, 5) == vf_scale_map(&c.x, 5));
	vf_buf_release(&b);
}

/* Lines on each other: interleaved dashes (share k of m), markers apart
 * from the line, nested shapes; vf_chart_line unchanged for a lone line. */
static void test_shared_lines(void)
{
	struct vf_buf b;
	struct vf_w w;
	vf_buf_init(&b, 0);
	vf_w_init(&w, &b, NULL);
	struct vf_chart c;
	vf_chart_init(&c, "t", "shares", "batch", "GiB");
	vf_chart_xdomain(&c, 1, 3);
	vf_chart_ydomain(&c, 0, 10);
	double xs[] = {1, 2, 3}, ys[] = {2, 4, 6};
	vf_chart_line_marked(&c, &w, 3, xs, ys, 0, "a", false, VF_MARK_LARGE, 0, 3, NULL);
	vf_chart_line_marked(&c, &w, 3, xs, ys, 1, "b", false, VF_MARK_SQUARE, 1, 3, NULL);
	vf_chart_line_marked(&c, &w, 3, xs, ys, 2, "c", false, VF_MARK_DOT, 2, 3, NULL);
	CHECK(w.st == VF_OK);
	CHECK_CONTAINS(b.data, "<path class=\"ln da\" style=\"stroke-dasharray:6 12;stroke-dashoffset:0\"");
	CHECK_CONTAINS(b.data, "style=\"stroke-dasharray:6 12;stroke-dashoffset:-6\"");
	CHECK_CONTAINS(b.data, "style=\"stroke-dasharray:6 12;stroke-dashoffset:-12\"");
	CHECK_CONTAINS(b.data, "r=\"5.5\"");
	CHECK_CONTAINS(b.data, "r=\"1.6\"");
	CHECK_CONTAINS(b.data, "<path class=\"mk f1\" d=\"M");
	vf_buf_reset(&b);
	vf_chart_line(&c, &w, 3, xs, ys, 4, "lone", false, true, NULL);
	CHECK_CONTAINS(b.data, "<path class=\"ln\" d=\"M");
	CHECK_CONTAINS(b.data, "r=\"3.5\"");
	CHECK(strstr(b.data, "style=") == NULL);
	vf_buf_release(&b);
}

/* Labels that avoid each other: two capacity lines 3 GiB apart get labels
 * whose boxes do not meet; note labels keep clear of a polyline and of the
 * labels placed before; one with no clear spot is left out unless required. */
static void test_labels_avoid(void)
{
	struct vf_buf b;
	struct vf_w w;
	vf_buf_init(&b, 0);
	vf_w_init(&w, &b, NULL);
	struct vf_chart c;
	vf_chart_init(&c, "t", "avoid", "x", "y");
	vf_chart_xdomain(&c, 0, 10);
	vf_chart_ydomain(&c, 0, 100);
	struct vf_chart_taken taken = {0};
	vf_chart_hline_avoid(&c, &w, 40, 0, "a", "A100 SXM4 40GB 40.0 GiB", 0, NULL, NULL, NULL, &taken);
	vf_chart_hline_avoid(&c, &w, 43, 1, "b", "L40S 44.4 GiB", 0, NULL, NULL, NULL, &taken);
	CHECK_INT(taken.n, 2);
	CHECK(!(taken.x0[0] < taken.x1[1] && taken.x0[1] < taken.x1[0] && taken.y0[0] < taken.y1[1] &&
		taken.y0[1] < taken.y1[0]));
	/* a note beside points on a line: clear of the line's segments */
	double lx[] = {1, 2, 3}, ly[] = {50, 50, 50};
	vf_buf_reset(&b);
	CHECK(vf_chart_note_avoid(&c, &w, 2, 50, "h200 x8", 3, lx, ly, 3, lx, ly, &taken, false));
	CHECK_INT(taken.n, 3);
	double y0 = taken.y0[2], y1 = taken.y1[2], ly0 = vf_chart_py(&c, 50);
	CHECK(!(y0 <= ly0 && y1 >= ly0) || taken.x0[2] > vf_chart_px(&c, 3)); /* not across the line */
	/* every spot taken: an optional label is left out, a required one drawn */
	struct vf_chart_taken full = {0};
	full.n = 1, full.x0[0] = 0, full.x1[0] = c.w, full.y0[0] = 0, full.y1[0] = c.h;
	vf_buf_reset(&b);
	CHECK(!vf_chart_note_avoid(&c, &w, 5, 50, "l40s x4", 0, NULL, NULL, 0, NULL, NULL, &full, false));
	CHECK(b.len == 0);
	CHECK(vf_chart_note_avoid(&c, &w, 5, 50, "chosen: l40s x4", 0, NULL, NULL, 0, NULL, NULL, &full, true));
	CHECK_CONTAINS(b.data, ">chosen: l40s x4</text>");
	vf_buf_release(&b);
}

int main(void)
{
	RUN(test_ticks);
	RUN(test_scale_and_labels);
	RUN(test_escaping);
	RUN(test_embedded_json);
	RUN(test_marks);
	RUN(test_samples);
	RUN(test_render_estimate);
	RUN(test_render_run_empty_samples);
	RUN(test_labels_clear);
	RUN(test_origin_ticks_apart);
	RUN(test_log_axis);
	RUN(test_shared_lines);
	RUN(test_labels_avoid);
	return vf_test_done();
}
