/* test-mdhtml.c - Markdown to HTML for the report pages (vf_html_md,
 * lib/report/md_html.c): headings, lists, code, tables rendered; every
 * hostile byte escaped, links and raw HTML kept as text. */
#include <string.h>

#include "vf_test.h"
#include "vramfit/report/html.h"

static struct vf_buf b;

static const char *md(const char *in)
{
	struct vf_w w;
	vf_buf_reset(&b);
	vf_w_init(&w, &b, NULL);
	vf_html_md(&w, in, strlen(in));
	CHECK(w.st == VF_OK);
	return b.data ? b.data : "";
}

static void test_blocks(void)
{
	CHECK_STR(md("# Training Plan\n\n## Launch\ntext"),
		  "<div class=\"md\"><h3>Training Plan</h3>\n<h4>Launch</h4>\n<p>text</p>\n</div>\n");
	CHECK_STR(md("a\nb\n\nc"), "<div class=\"md\"><p>a\nb</p>\n<p>c</p>\n</div>\n");
	CHECK_STR(md("---"), "<div class=\"md\"><hr>\n</div>\n");
	CHECK_STR(md("> quoted *x*"), "<div class=\"md\"><blockquote><p>quoted <em>x</em></p></blockquote>\n</div>\n");
	/* "#x" is no heading; seven hashes neither */
	CHECK_STR(md("#x\n####### y"), "<div class=\"md\"><p>#x\n####### y</p>\n</div>\n");
}

static void test_lists(void)
{
	CHECK_STR(md("- Tier: `32GB tier` (cpu)\n- Steps: **2000**\n"),
		  "<div class=\"md\"><ul><li>Tier: <code>32GB tier</code> (cpu)</li><li>Steps: "
		  "<strong>2000</strong></li></ul>\n</div>\n");
	CHECK_STR(md("1. one\n2. two\n   - sub a\n   - sub b\n3. three"),
		  "<div class=\"md\"><ol><li>one</li><li>two<ul><li>sub a</li><li>sub b</li></ul></li>"
		  "<li>three</li></ol>\n</div>\n");
	/* a list then a heading: the heading is not swallowed as an item */
	CHECK_STR(md("- a\n## H"), "<div class=\"md\"><ul><li>a</li></ul>\n<h4>H</h4>\n</div>\n");
	/* a blank line between items keeps one list */
	CHECK_STR(md("- a\n\n- b"), "<div class=\"md\"><ul><li>a</li><li>b</li></ul>\n</div>\n");
}

/* The tune report's flaw: "Launch (from ...):" followed by the command in
 * a fence must keep the command as a code block, not a bullet. */
static void test_launch_command_kept(void)
{
	const char *out = md("Launch (from the trainer dir):\n\n```bash\nuv run python scripts/train.py "
			     "'configs/a b.yaml' && echo <done>\n```\n- sweep: batch 2\n");
	CHECK(strstr(out, "<p>Launch (from the trainer dir):</p>\n<pre><code>uv run python scripts/train.py "
			  "&#39;configs/a b.yaml&#39; &amp;&amp; echo &lt;done&gt;\n</code></pre>") != NULL);
	CHECK(strstr(out, "<ul><li>sweep: batch 2</li></ul>") != NULL);
	/* an unclosed fence runs to the end, still escaped */
	CHECK_STR(md("```\n<b>"), "<div class=\"md\"><pre><code>&lt;b&gt;\n</code></pre>\n</div>\n");
}

static void test_tables(void)
{
	CHECK_STR(md("| GPU | peak |\n|---|---:|\n| `h100` | 61 GiB |\n| a \\| b |\n"),
		  "<div class=\"md\"><div class=\"scroll\"><table class=\"txt\"><thead><tr><th>GPU</th><th>peak</th>"
		  "</tr></thead><tbody><tr><td><code>h100</code></td><td>61 GiB</td></tr>"
		  "<tr><td>a | b</td><td></td></tr></tbody></table></div>\n</div>\n");
	/* a pipe line without a separator is a paragraph */
	CHECK_STR(md("| a |"), "<div class=\"md\"><p>| a |</p>\n</div>\n");
}

static void test_inline(void)
{
	CHECK_STR(md("``a ` b`` and ` x ` \\*no\\* *em* **st *in* g**"),
		  "<div class=\"md\"><p><code>a ` b</code> and <code>x</code> *no* <em>em</em> "
		  "<strong>st <em>in</em> g</strong></p>\n</div>\n");
	/* unpaired markers stay text; snake_case is not emphasis */
	CHECK_STR(md("`open and *open and snake_case_name"),
		  "<div class=\"md\"><p>`open and *open and snake_case_name</p>\n</div>\n");
}

static void test_hostile(void)
{
	const char *out = md("<script>alert(1)</script>\n# <img src=x onerror=alert(1)>\n"
			     "- [x](javascript:alert(1)) \"q\" 'a' &amp;\n`</code><script>`\n"
			     "| <b> | \" |\n|-|-|\n| <i> | & |\n```\n</pre><script>\n```\n");
	CHECK(strstr(out, "<script") == NULL && strstr(out, "<img") == NULL && strstr(out, "<b>") == NULL &&
	      strstr(out, "<i>") == NULL && strstr(out, "href") == NULL);
	CHECK(strstr(out, "&lt;script&gt;alert(1)&lt;/script&gt;") != NULL);
	CHECK(strstr(out, "<h3>&lt;img src=x onerror=alert(1)&gt;</h3>") != NULL);
	CHECK(strstr(out, "[x](javascript:alert(1)) &quot;q&quot; &#39;a&#39; &amp;amp;") != NULL);
	CHECK(strstr(out, "<code>&lt;/code&gt;&lt;script&gt;</code>") != NULL);
	CHECK(strstr(out, "<pre><code>&lt;/pre&gt;&lt;script&gt;\n</code></pre>") != NULL);
	/* NUL bytes, control characters and invalid UTF-8 become U+FFFD */
	struct vf_w w;
	vf_buf_reset(&b);
	vf_w_init(&w, &b, NULL);
	vf_html_md(&w, "a\0b\x01\xff", 5);
	CHECK_STR(b.data, "<div class=\"md\"><p>a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD</p>\n</div>\n");
	CHECK_STR(md("\r\n# h\r\n"), "<div class=\"md\"><h3>h</h3>\n</div>\n");
	CHECK_STR(md(""), "<div class=\"md\"></div>\n");
}

int main(void)
{
	vf_buf_init(&b, 0);
	RUN(test_blocks);
	RUN(test_lists);
	RUN(test_launch_command_kept);
	RUN(test_tables);
	RUN(test_inline);
	RUN(test_hostile);
	vf_buf_release(&b);
	return vf_test_done();
}
