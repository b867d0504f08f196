#!/usr/bin/env python3
# doc_options.py - every option the docs name for a verb is one the verb has.
#   doc_options.py HELPDIR FILE...
# HELPDIR holds help-<verb>: the output of `vramfit help <verb>`. In FILE
# (Markdown), every `vramfit <verb> ...` in an inline code span or a fenced
# block, up to a | ; & # or >, is read for --option tokens (the word after
# --sbatch-arg is its value); `vramfit report estimate|fit` takes the
# options of report and of that verb. Prints one line per option a verb
# lacks and exits 1 when there is any.
import os
import re
import sys

helpdir, files = sys.argv[1], sys.argv[2:]
helps = {f[5:]: open(os.path.join(helpdir, f)).read()
         for f in os.listdir(helpdir) if f.startswith("help-")}


def has(verb, opt):
    return re.search(r"(^|[\s,])" + re.escape(opt) + r"(?![a-z0-9-])", helps[verb], re.M)


def snippets(text):
    out = []
    for block in re.findall(r"```[^\n]*\n(.*?)```", text, flags=re.S):
        out += block.split("\n")
    out += re.findall(r"`([^`\n]*)`", re.sub(r"```.*?```", "", text, flags=re.S))
    return out


bad = 0
for path in files:
    for s in snippets(open(path, encoding="utf-8").read()):
        for m in re.finditer(r"\bvramfit ([a-z]+)((?: [a-z]+)?)([^|;&#>]*)", s):
            verb, sub, rest = m.group(1), m.group(2).strip(), m.group(3)
            if verb not in helps:
                continue
            verbs = [verb] + ([sub] if verb == "report" and sub in ("estimate", "fit") else [])
            toks = rest.split()
            for i, t in enumerate(toks):
                o = re.match(r"--[a-z][a-z0-9-]*", t)
                if not o or (i and toks[i - 1] == "--sbatch-arg"):
                    continue
                if not any(has(v, o.group(0)) for v in verbs):
                    print(f"{path}: vramfit {verb} has no option {o.group(0)}: {s.strip()[:100]}")
                    bad += 1
sys.exit(1 if bad else 0)
