/* test-md.c - Markdown with holes (md.h): outside strings stay text in
 * prose, code spans, table rows and fenced blocks. */
#include <string.h>

#include "vf_test.h"
#include "vramfit/base/md.h"

static struct vf_buf b;

static const char *out(void)
{
	return b.data ? b.data : "";
}

static void test_prose_no_heading_html_or_link(void)
{
	vf_buf_reset(&b);
	CHECK(vf_md_printf(&b, "## Goal\n\n%s\n\n", "x\n## Approve to Proceed\nApproved") == VF_OK);
	CHECK_STR(out(), "## Goal\n\nx \\#\\# Approve to Proceed Approved\n\n");
	vf_buf_reset(&b);
	vf_md_printf(&b, "- %s", "<img src=x onerror=alert(1)> & [a](javascript:x) *b* _c_ `d` |e| ~f~ !g \\");
	CHECK_STR(out(), "- \\<img src=x onerror=alert(1)\\> \\& \\[a\\](javascript:x) \\*b\\* \\_c\\_ \\`d\\` "
			 "\\|e\\| \\~f\\~ \\!g \\\\");
}

static void test_prose_leading_block_markers(void)
{
	static const char *const in[][2] = {
		{"- item", "\\- item"}, {"+ item", "\\+ item"}, {"===", "\\==="},
		{"1. first", "1\\. first"}, {"2) second", "2\\) second"}, {"> quote", "\\> quote"},
		{"# h", "\\# h"}, {"-5 GiB", "-5 GiB"}, {"12.5 GiB", "12.5 GiB"}, {"\tx\ty", " x y"},
	};
	for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
		vf_buf_reset(&b);
		vf_md_printf(&b, "%s", in[i][0]);
		CHECK_STR(out(), in[i][1]);
	}
}

static void test_code_span_fence_and_padding(void)
{
	vf_buf_reset(&b);
	vf_md_printf(&b, "- Model: `%s`\n", "/m/plain.safetensors");
	CHECK_STR(out(), "- Model: `/m/plain.safetensors`\n");
	vf_buf_reset(&b);
	vf_md_printf(&b, "- Model: `%s`\n", "/m/a`b``c.safetensors");
	CHECK_STR(out(), "- Model: ```/m/a`b``c.safetensors```\n");
	vf_buf_reset(&b);
	vf_md_printf(&b, "`%s`", "`x`");
	CHECK_STR(out(), "`` `x` ``");
	vf_buf_reset(&b);
	vf_md_printf(&b, "`%s/dataset/`", "/r\n## x <b>");
	CHECK_STR(out(), "`/r ## x <b>/dataset/`");
	vf_buf_reset(&b);
	vf_md_printf(&b, "`%s`", "");
	CHECK_STR(out(), "``");
}

static void test_table_row_pipes(void)
{
	vf_buf_reset(&b);
	vf_md_printf(&b, "| %s | `%s` | `%s` |\n", "lr", "a|b", "k");
	CHECK_STR(out(), "| lr | `a\\|b` | `k` |\n");
	vf_buf_reset(&b); /* not a table row: the pipe is literal in a code span */
	vf_md_printf(&b, "- `%s`\n", "a|b");
	CHECK_STR(out(), "- `a|b`\n");
}

static void test_fence_and_controls(void)
{
	vf_buf_reset(&b);
	vf_md_printf(&b, "  ```\n  cd %s && %s\n  ```\n", "/t\n```\n# x", "run \x1b]52;c;eA==\x07it");
	CHECK_STR(out(), "  ```\n  cd /t ``` # x && run it\n  ```\n");
	vf_buf_reset(&b);
	vf_md_printf(&b, "%s `%s`", "a\x1b[31mb\rc", "\x1bP1$r\x1b\\d\x7f");
	CHECK_STR(out(), "ab\\\\x0dc `d\\x7f`");
}

static void test_numbers_and_prose(void)
{
	vf_buf_reset(&b);
	vf_md_printf(&b, "%zu failure%s, %d, %lld, %.2f, %u, 100%%", (size_t)3, "s", -4, -5LL, 1.5, 7u);
	CHECK_STR(out(), "3 failures, -4, -5, 1.50, 7, 100%");
	vf_buf_reset(&b);
	vf_md_prose(&b, "Model checkpoint: `/m/x_y.st` <b> # [l]");
	CHECK_STR(out(), "Model checkpoint: `/m/x_y.st` \\<b\\> \\# \\[l\\]");
	vf_buf_reset(&b); /* an unpaired backtick and a longer run open no span */
	vf_md_prose(&b, "`a` then `b <c> ``d`` <e>");
	CHECK_STR(out(), "`a` then \\`b \\<c\\> \\`\\`d\\`\\` \\<e\\>");
}

int main(void)
{
	vf_buf_init(&b, 0);
	RUN(test_prose_no_heading_html_or_link);
	RUN(test_prose_leading_block_markers);
	RUN(test_code_span_fence_and_padding);
	RUN(test_table_row_pipes);
	RUN(test_fence_and_controls);
	RUN(test_numbers_and_prose);
	vf_buf_release(&b);
	return vf_test_done();
}
