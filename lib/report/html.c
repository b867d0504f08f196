/* html.c - the page around a report (html.h): inline CSS with a
 * colour-blind-safe palette (Okabe and Ito's eight colours plus two of
 * Paul Tol's) for light and dark schemes, A4 print rules, a layout that
 * puts each chart beside its table at 1280 px and under it on a phone; the
 * data as embedded JSON; a small script for legend toggles, tooltips that
 * also work on touch, and each chart's box (data-box, for the browser
 * test). Every chart is complete SVG without the script. */
#include <string.h>

#include "vramfit/report/html.h"

static const char css[] =
	":root{--bg:#fff;--fg:#1b1f24;--mu:#57606a;--gr:#e3e6ea;--ax:#6e7781;--bd:#d0d7de;--hd:#f6f8fa;"
	"--c0:#0072B2;--c1:#E69F00;--c2:#009E73;--c3:#CC79A7;--c4:#56B4E9;--c5:#D55E00;--c6:#F0E442;"
	"--c7:#8c8c8c;--c8:#882255;--c9:#44AA99;color-scheme:light dark}\n"
	"@media (prefers-color-scheme:dark){:root{--bg:#16191d;--fg:#e6edf3;--mu:#9da7b3;--gr:#2d333b;"
	"--ax:#8b949e;--bd:#373e47;--hd:#1f242a;--c0:#3d9be0;--c7:#a0a0a0;--c8:#a8326e}}\n"
	"*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);"
	"font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif}\n"
	"main{max-width:1240px;margin:0 auto;padding:16px 20px 40px}\n"
	"header h1{font-size:22px;margin:4px 0 2px;line-height:1.3}header p{margin:0;color:var(--mu)}\n"
	"section{margin:22px 0;break-inside:avoid}h2{font-size:17px;margin:0 0 8px;line-height:1.35}\n"
	".pair{display:grid;grid-template-columns:minmax(0,1.55fr) minmax(0,1fr);gap:18px;align-items:start}\n"
	".plot{min-width:0}.tbl{min-width:0;overflow-x:auto}\n"
	".gridpair{display:flex;align-items:flex-start}.gridpair svg.chart{min-width:0}"
	".gridpair svg[data-chart=grid-names]{position:sticky;left:0;z-index:1}\n"
	"svg.chart{width:100%;height:auto;display:block;font:12px system-ui,'DejaVu Sans',sans-serif}\n"
	"svg .bg{fill:var(--bg)}svg .gr{stroke:var(--gr);stroke-width:1}svg .ax{stroke:var(--ax);stroke-width:1}\n"
	"svg text{fill:var(--fg)}svg .tk{fill:var(--mu);font-size:11.5px}svg .at{font-size:12.5px;font-weight:600}\n"
	"svg .ln{fill:none;stroke-width:2.5}svg .da{stroke-dasharray:7 5}svg .cap{stroke-width:2;stroke-dasharray:3 3}\n"
	"svg .cl{font-size:11.5px;font-weight:600}svg .nt{font-size:12px;font-weight:700}\n"
	"svg .pt{stroke:var(--bg);stroke-width:1}svg .mk{stroke:var(--bg);stroke-width:1}\n"
	"svg .id{stroke:var(--ax);stroke-width:1.5;stroke-dasharray:5 4;fill:none}\n"
	"svg .cell{stroke:var(--bg);stroke-width:2}svg .ct{font-size:11px;text-anchor:middle}svg text.inv{fill:#fff}\n"
	".f0{fill:var(--c0)}.f1{fill:var(--c1)}.f2{fill:var(--c2)}.f3{fill:var(--c3)}.f4{fill:var(--c4)}"
	".f5{fill:var(--c5)}.f6{fill:var(--c6)}.f7{fill:var(--c7)}.f8{fill:var(--c8)}.f9{fill:var(--c9)}\n"
	".k0{stroke:var(--c0)}.k1{stroke:var(--c1)}.k2{stroke:var(--c2)}.k3{stroke:var(--c3)}.k4{stroke:var(--c4)}"
	".k5{stroke:var(--c5)}.k6{stroke:var(--c6)}.k7{stroke:var(--c7)}.k8{stroke:var(--c8)}.k9{stroke:var(--c9)}"
	".k10{stroke:var(--fg)}.f10{fill:var(--fg)}\n"
	"svg text.f0,svg text.f1,svg text.f2,svg text.f3,svg text.f4,svg text.f5,svg text.f7,svg text.f8,"
	"svg text.f9,svg text.f10{paint-order:stroke;stroke:var(--bg);stroke-width:3px}\n"
	".hid{display:none}\n"
	".legend{list-style:none;margin:6px 0 0;padding:0;display:flex;flex-wrap:wrap;gap:4px 12px;font-size:13px}\n"
	".legend button{font:inherit;color:inherit;background:none;border:0;padding:2px 0;display:flex;"
	"align-items:center;gap:6px;cursor:default}.js .legend button{cursor:pointer}"
	".legend button.off{opacity:.4;text-decoration:line-through}\n"
	".sw{display:inline-block;width:13px;height:13px;border-radius:2px}"
	".sw.f0{background:var(--c0)}.sw.f1{background:var(--c1)}.sw.f2{background:var(--c2)}"
	".sw.f3{background:var(--c3)}.sw.f4{background:var(--c4)}.sw.f5{background:var(--c5)}"
	".sw.f6{background:var(--c6)}.sw.f7{background:var(--c7)}.sw.f8{background:var(--c8)}"
	".sw.f9{background:var(--c9)}"
	".sw.dl{height:0;width:18px;border-top:3px dashed;border-radius:0;background:none}"
	".dl.k0{border-color:var(--c0)}.dl.k1{border-color:var(--c1)}.dl.k2{border-color:var(--c2)}"
	".dl.k3{border-color:var(--c3)}.dl.k4{border-color:var(--c4)}.dl.k5{border-color:var(--c5)}"
	".dl.k6{border-color:var(--c6)}.dl.k7{border-color:var(--c7)}.dl.k8{border-color:var(--c8)}"
	".dl.k9{border-color:var(--c9)}.dl.k10{border-color:var(--fg)}\n"
	"table{border-collapse:collapse;font-size:13px;width:100%;font-variant-numeric:tabular-nums}\n"
	"caption{text-align:left;color:var(--mu);font-size:12.5px;padding-bottom:4px}\n"
	"th,td{padding:3px 7px;border-bottom:1px solid var(--bd);vertical-align:top}"
	"th{background:var(--hd);text-align:left;font-weight:600}\n"
	"table.num td,table.num thead th+th{text-align:right}\n"
	".scroll{max-width:100%;overflow-x:auto}.nw{white-space:nowrap}"
	"tbody th[scope=row]{position:sticky;left:0;background:var(--bg);z-index:1}\n"
	".md{overflow-wrap:anywhere}code,.md pre{font:12.5px ui-monospace,'DejaVu Sans Mono',monospace;"
	"background:var(--hd);border-radius:3px}code{padding:0 3px}"
	".md pre{padding:8px;overflow-x:auto;white-space:pre;overflow-wrap:normal}.md pre code{padding:0}"
	".md h3,.md h4,.md h5,.md h6{font-size:15px;margin:12px 0 4px}.md ul,.md ol{margin:4px 0;padding-left:22px}"
	".md blockquote{margin:6px 0;padding-left:10px;border-left:3px solid var(--bd);color:var(--mu)}\n"
	"ul.plain{margin:6px 0;padding-left:20px}ul.plain li{margin:2px 0}\n"
	".note{color:var(--mu);font-size:13.5px}.ok{color:var(--c2)}.bad{color:var(--c5)}\n"
	".tip{position:fixed;pointer-events:none;background:var(--fg);color:var(--bg);padding:4px 8px;"
	"border-radius:4px;font-size:12.5px;max-width:320px;white-space:pre-line;display:none;z-index:9}\n"
	"@media (max-width:880px){.pair{grid-template-columns:1fr}main{padding:10px}"
	".plot{overflow-x:auto}svg.chart{min-width:540px}.gridpair{min-width:540px}header h1{font-size:19px}}\n"
	"@media print{@page{size:A4;margin:12mm}:root{--bg:#fff;--fg:#000;--mu:#444;--gr:#ddd;--hd:#eee}"
	"main{max-width:none;padding:0}.pair{grid-template-columns:1fr}svg.chart{max-height:9.5cm}"
	".tip{display:none}section{break-inside:avoid}}\n";

static const char script[] =
	"(function(){var d=document;d.documentElement.classList.add('js');\n"
	"function each(l,f){Array.prototype.forEach.call(l,f)}\n"
	"each(d.querySelectorAll('.legend button'),function(b){b.setAttribute('aria-pressed','true');"
	"b.addEventListener('click',function(){var id=b.parentNode.parentNode.getAttribute('data-for'),"
	"s=b.getAttribute('data-s'),off=b.classList.toggle('off');b.setAttribute('aria-pressed',off?'false':'true');"
	"each(d.querySelectorAll('svg.chart'),function(g){if(g.getAttribute('data-chart')!==id)return;"
	"each(g.querySelectorAll('[data-s]'),function(e){if(e.getAttribute('data-s')===s)"
	"e.classList.toggle('hid',off)})})})});\n"
	"var tip=d.createElement('div');tip.className='tip';tip.setAttribute('role','tooltip');d.body.appendChild(tip);\n"
	"each(d.querySelectorAll('svg.chart title'),function(t){t.parentNode.setAttribute('data-tip',t.textContent);"
	"t.parentNode.removeChild(t)});\n"
	"function show(e){var t=e.target.closest?e.target.closest('[data-tip]'):null;if(!t){tip.style.display='none';return}"
	"tip.textContent=t.getAttribute('data-tip');tip.style.display='block';"
	"var x=(e.clientX||0)+14,y=(e.clientY||0)+14;if(x+330>innerWidth)x=Math.max(4,x-350);"
	"tip.style.left=x+'px';tip.style.top=y+'px'}\n"
	"d.addEventListener('mousemove',show);d.addEventListener('touchstart',function(e){"
	"if(e.touches[0])show({target:e.target,clientX:e.touches[0].clientX,clientY:e.touches[0].clientY})},"
	"{passive:true});\n"
	"function boxes(){each(d.querySelectorAll('svg.chart'),function(g){var r=g.getBoundingClientRect();"
	"g.setAttribute('data-box',[Math.round(r.left+scrollX),Math.round(r.top+scrollY),Math.round(r.width),"
	"Math.round(r.height)].join(','))});d.body.setAttribute('data-height',"
	"Math.ceil(d.documentElement.scrollHeight));d.body.setAttribute('data-ready','1')}\n"
	"boxes();addEventListener('resize',boxes)})();\n";

void vf_html_begin(struct vf_w *w, const char *kind, const char *title, const char *subtitle)
{
	vf_w_puts(w, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		     "<meta name=\"generator\" content=\"vramfit " VF_VERSION "\">\n<title>vramfit ");
	vf_w_esc(w, kind);
	vf_w_puts(w, ": ");
	vf_w_esc(w, title);
	vf_w_puts(w, "</title>\n<style>\n");
	vf_w_puts(w, css);
	vf_w_puts(w, "</style></head>\n<body data-report=\"");
	vf_w_esc(w, kind);
	vf_w_puts(w, "\"><main>\n<header><h1 id=\"headline\">");
	vf_w_esc(w, title);
	vf_w_puts(w, "</h1>");
	if (subtitle) {
		vf_w_puts(w, "<p>");
		vf_w_esc(w, subtitle);
		vf_w_puts(w, "</p>");
	}
	vf_w_puts(w, "</header>\n");
}

void vf_html_data(struct vf_w *w, const cJSON *data)
{
	char *s = cJSON_PrintUnformatted(data);
	if (!s) {
		if (!w->st)
			w->st = vf_error_set(w->err, VF_ENOMEM, "report: out of memory");
		return;
	}
	vf_w_puts(w, "<script type=\"application/json\" id=\"vramfit-data\">");
	/* '<' as \u003c: no "</script>" or "<!--" can appear inside */
	const char *p = s;
	while (*p && !w->st) {
		const char *lt = strchr(p, '<');
		size_t n = lt ? (size_t)(lt - p) : strlen(p);
		w->st = vf_buf_append(w->b, p, n, w->err);
		if (!lt)
			break;
		vf_w_puts(w, "\\u003c");
		p = lt + 1;
	}
	vf_w_puts(w, "</script>\n");
	cJSON_free(s);
}

void vf_html_end(struct vf_w *w)
{
	vf_w_puts(w, "<p class=\"note\">Made by vramfit " VF_VERSION
		     ". The numbers behind every chart are in the tables and, machine-readable, "
		     "in the JSON object <code>#vramfit-data</code> of this page.</p>\n</main>\n<script>\n");
	vf_w_puts(w, script);
	vf_w_puts(w, "</script>\n</body></html>\n");
}

void vf_html_figure_begin(struct vf_w *w, const char *id, const char *title)
{
	vf_html_section_begin(w, id, title);
	vf_w_puts(w, "<div class=\"pair\"><div class=\"plot\">");
}

void vf_html_figure_table(struct vf_w *w)
{
	vf_w_puts(w, "</div><div class=\"tbl\">");
}

void vf_html_figure_end(struct vf_w *w)
{
	vf_w_puts(w, "</div></div>");
	vf_html_section_end(w);
}

void vf_html_section_begin(struct vf_w *w, const char *id, const char *title)
{
	vf_w_puts(w, "<section id=\"");
	vf_w_esc(w, id);
	vf_w_puts(w, "\"><h2>");
	vf_w_esc(w, title);
	vf_w_puts(w, "</h2>\n");
}

void vf_html_section_end(struct vf_w *w)
{
	vf_w_puts(w, "</section>\n");
}

void vf_html_table_begin(struct vf_w *w, const char *caption, int n, const char *const *headers,
			 bool text)
{
	vf_w_printf(w, "<div class=\"scroll\"><table class=\"%s\">", text ? "txt" : "num");
	if (caption) {
		vf_w_puts(w, "<caption>");
		vf_w_esc(w, caption);
		vf_w_puts(w, "</caption>");
	}
	vf_w_puts(w, "<thead><tr>");
	for (int i = 0; i < n; i++) {
		vf_w_puts(w, "<th scope=\"col\">");
		vf_w_esc(w, headers[i]);
		vf_w_puts(w, "</th>");
	}
	vf_w_puts(w, "</tr></thead><tbody>\n");
}

void vf_html_row(struct vf_w *w, int n, const char *const *cells)
{
	vf_w_puts(w, "<tr>");
	for (int i = 0; i < n; i++) {
		/* a value (a number with its unit, a short name) never breaks inside */
		bool nw = strlen(cells[i] ? cells[i] : "") <= 24;
		if (i == 0)
			vf_w_puts(w, nw ? "<th scope=\"row\" class=\"nw\">" : "<th scope=\"row\">");
		else
			vf_w_puts(w, nw ? "<td class=\"nw\">" : "<td>");
		vf_w_esc(w, cells[i]);
		vf_w_puts(w, i == 0 ? "</th>" : "</td>");
	}
	vf_w_puts(w, "</tr>\n");
}

void vf_html_table_end(struct vf_w *w)
{
	vf_w_puts(w, "</tbody></table></div>\n");
}

void vf_html_p(struct vf_w *w, const char *cls, const char *text)
{
	vf_w_printf(w, "<p class=\"%s\">", cls ? cls : "");
	vf_w_esc(w, text);
	vf_w_puts(w, "</p>\n");
}

void vf_html_list(struct vf_w *w, int n, const char *const *items)
{
	vf_w_puts(w, "<ul class=\"plain\">");
	for (int i = 0; i < n; i++) {
		vf_w_puts(w, "<li>");
		vf_w_esc(w, items[i]);
		vf_w_puts(w, "</li>");
	}
	vf_w_puts(w, "</ul>\n");
}
