/* fuzz-mdhtml.c - libFuzzer target: any bytes as Markdown for a report page
 * (plan.md, notes; vf_html_md, lib/report/md_html.c). The output never
 * holds a tag or an attribute the renderer does not write itself (every
 * '<' opens one of its own tags, every '"' is in one of its own class
 * attributes), its block tags are balanced, and it is valid UTF-8.
 * Corpus: tests/fuzz/corpus/mdhtml/ (plan.md files written by vramfit plan,
 * hostile Markdown). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vramfit/base/json.h"
#include "vramfit/report/html.h"

static const char *const tags[] = {
	"<div class=\"md\">", "<div class=\"scroll\">", "</div>", "<table class=\"txt\">", "</table>",
	"<thead>", "</thead>", "<tbody>", "</tbody>", "<tr>", "</tr>", "<th>", "</th>", "<td>", "</td>",
	"<p>", "</p>", "<ul>", "</ul>", "<ol>", "</ol>", "<li>", "</li>", "<pre>", "</pre>", "<code>",
	"</code>", "<strong>", "</strong>", "<em>", "</em>", "<blockquote>", "</blockquote>", "<hr>",
	"<h3>", "</h3>", "<h4>", "</h4>", "<h5>", "</h5>", "<h6>", "</h6>", NULL};

static size_t count(const char *s, const char *t)
{
	size_t n = 0, k = strlen(t);
	for (const char *p = s; (p = strstr(p, t)); p += k)
		n++;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vf_buf b;
	struct vf_w w;
	vf_buf_init(&b, 0);
	vf_w_init(&w, &b, NULL);
	vf_html_md(&w, (const char *)data, size);
	if (w.st != VF_OK || !b.data)
		abort();
	const char *s = b.data;
	if (vf_utf8_check((const unsigned char *)s, b.len) != b.len)
		abort();
	for (const char *p = s; *p;) {
		if (*p == '"')
			abort(); /* a quote outside one of the renderer's own tags */
		if (*p != '<') {
			p++;
			continue;
		}
		size_t k = 0;
		for (int i = 0; tags[i]; i++)
			if (strncmp(p, tags[i], strlen(tags[i])) == 0)
				k = strlen(tags[i]);
		if (!k)
			abort(); /* a tag the input made */
		p += k;
	}
	static const char *const pairs[][2] = {{"<div", "</div>"}, {"<table", "</table>"}, {"<ul>", "</ul>"},
					       {"<ol>", "</ol>"}, {"<li>", "</li>"}, {"<pre>", "</pre>"},
					       {"<p>", "</p>"}, {"<code>", "</code>"}, {"<tr>", "</tr>"}};
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
		if (count(s, pairs[i][0]) != count(s, pairs[i][1]))
			abort();
	vf_buf_release(&b);
	return 0;
}
