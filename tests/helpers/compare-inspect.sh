#!/usr/bin/env bash
# compare-inspect.sh - run `inspect` (text and --json) with two vramfit
# binaries on the same inputs and compare them byte for byte: for a change
# to the safetensors reader or the name inference that must not change an
# answer or a message.
#
#   tests/helpers/compare-inspect.sh OLD_VRAMFIT NEW_VRAMFIT [COUNT] [SEED] [SHARED_DIR]
#
# Inputs: COUNT (default 300) checkpoints from gen-inspect-cases.py (many
# families, odd names, 1-8 shards, broken indexes), the fixture models and
# the safetensors fuzz corpus. Each run's exit status, stdout and stderr are
# compared. Prints the inputs that differ and "compared N outputs, D
# differences"; exit 0 when D is 0, 1 when not, 2 on a usage error. Writes
# only into a mktemp directory, removed at exit.
set -u
if [ $# -lt 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
	echo "usage: compare-inspect.sh OLD_VRAMFIT NEW_VRAMFIT [COUNT] [SEED] [SHARED_DIR]" >&2
	exit 2
fi
old=$1
new=$2
count=${3:-300}
seed=${4:-1}
here=$(cd "$(dirname "$0")/../.." && pwd)
shared=${5:-${VF_SHARED_DIR:-$here/../shared}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/tests/helpers/gen-inspect-cases.py" "$tmp/gen" "$count" "$seed" || exit 1
inputs=$tmp/inputs
ls -d "$tmp"/gen/case-* >"$inputs"
for d in "$tmp"/gen/case-*; do
	for f in "$d"/*; do echo "$f"; done
done >>"$inputs"
if [ -d "$shared/fixtures/models" ]; then
	find "$shared/fixtures/models" -mindepth 1 -maxdepth 2 | sort >>"$inputs"
fi
find "$here/tests/fuzz/corpus/safetensors" -type f 2>/dev/null | sort >>"$inputs"
n=0
d=0
while IFS= read -r in; do
	for fmt in "" "--json"; do
		"$old" inspect "$in" $fmt >"$tmp/o.out" 2>"$tmp/o.err"
		orc=$?
		"$new" inspect "$in" $fmt >"$tmp/n.out" 2>"$tmp/n.err"
		nrc=$?
		n=$((n + 1))
		if [ $orc != $nrc ] || ! cmp -s "$tmp/o.out" "$tmp/n.out" ||
			! cmp -s "$tmp/o.err" "$tmp/n.err"; then
			d=$((d + 1))
			echo "differs: inspect $in $fmt (exit $orc / $nrc)"
		fi
	done
done <"$inputs"
echo "compared $n outputs, $d differences"
[ $d = 0 ]
