#!/usr/bin/env python3
"""page_check.py - helpers of tests/cli/report.sh for the report pages.

usage:
  page_check.py rows FIT.txt PAGE.html
      fit's text table and the fit page's "Every GPU and count" table hold
      the same rows with the same verdict words (yes / tight / no), and a
      row that is not "yes" has no time and no cost on the page; exit 1 and
      the differences otherwise
  page_check.py inject PAGE.html COPY.html SCRIPT.js
      COPY = PAGE with SCRIPT appended before </body>
  page_check.py result DOM.html
      prints what tests/cli/layout.js wrote into the dumped DOM"""
import html
import re
import sys


def cells(row):
    return [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.split(r"</t[hd]><t[hd][^>]*>", row)]


def rows(txt, page):
    cli = []
    for line in open(txt, encoding="utf-8"):
        f = line.split()
        if len(f) > 3 and f[1].isdigit() and f[2] in ("yes", "tight", "no"):
            cli.append((f[0], f[1], f[2]))
    t = open(page, encoding="utf-8").read()
    sec = t[t.index('<section id="rows">'):]
    sec = sec[:sec.index("</section>")]
    got, bad = [], []
    for r in re.findall(r'<tr><th scope="row"[^>]*>(.*?)</t[hd]></tr>', sec):
        c = cells(r)
        got.append((c[0], c[1], c[2]))
        if c[2] != "yes" and (c[-1] != "-" or c[-2] != "-"):
            bad.append(f"{c[0]} x{c[1]} {c[2]}: time {c[-2]}, cost {c[-1]}")
    if sorted(cli) != sorted(got):
        bad.append(f"CLI rows {sorted(set(cli) - set(got))} vs page rows {sorted(set(got) - set(cli))}")
    if not any(g[2] == "tight" for g in got):
        bad.append("no tight row on the page")
    for b in bad:
        print(b, file=sys.stderr)
    return 1 if bad else 0


def main():
    cmd = sys.argv[1]
    if cmd == "rows":
        return rows(sys.argv[2], sys.argv[3])
    if cmd == "inject":
        t = open(sys.argv[2], encoding="utf-8").read()
        i = t.rindex("</body>")
        js = open(sys.argv[4], encoding="utf-8").read()
        open(sys.argv[3], "w", encoding="utf-8").write(t[:i] + "<script>\n" + js + "\n</script>" + t[i:])
        return 0
    if cmd == "result":
        m = re.search(r'<pre id="vf-layout">(.*?)</pre>', open(sys.argv[2], encoding="utf-8").read(), re.S)
        print(html.unescape(m.group(1)) if m else "no result from layout.js", end="")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
