#!/usr/bin/env bash
# fn-length.sh - fail on any C function longer than a screen (DESIGN.md
# convention 10): every function in the given files or folders (default
# src/) of more than MAX lines (default 80), counted from the first line of
# its signature to its closing brace, is listed as FILE:LINE: NAME: N lines.
#   scripts/fn-length.sh [--max N] [PATH...]
# A function is what the code style makes of one: a signature starting in
# column 0 and a body from a "{" to a "}" both in column 0.
set -eu
max=80
if [ "${1:-}" = "--max" ]; then max=$2; shift 2; fi
[ $# -gt 0 ] || set -- "$(cd "$(dirname "$0")/.." && pwd)/src"
files=$(for p in "$@"; do if [ -d "$p" ]; then find "$p" -name '*.c' | sort; else echo "$p"; fi; done)
[ -n "$files" ] || { echo "fn-length.sh: no C files in $*" >&2; exit 2; }
# shellcheck disable=SC2086
awk -v max="$max" '
FNR == 1 { sig = 0; infn = 0 }
/^[A-Za-z_].*\(/ && !/;[ \t]*$/ && !infn { sig = FNR; name = $0 }
/^\{/ && !infn { start = sig ? sig : FNR; infn = 1; next }
/^\}/ && infn {
	n = FNR - start + 1
	fn = name; sub(/\(.*/, "", fn); k = split(fn, w, /[ *]+/)
	if (n > max) { printf "%s:%d: %s: %d lines (more than %d)\n", FILENAME, start, w[k], n, max; bad++ }
	infn = 0; sig = 0
}
END { exit bad ? 1 : 0 }' $files
