#!/usr/bin/env bash
# run-fuzz.sh BUILD_DIR SECONDS - run every fuzz target under ASan+UBSan for a
# bounded time, seeded with its corpus (tests/fuzz/corpus/<name>/, real files)
# and the files tests/fuzz/seeds/<name> names.
# Fails on any finding. New inputs go to a scratch copy, never the corpus.
# The mutations follow a fixed seed (FUZZ_SEED, default 1; 0 for a random
# one), so a run is the same sequence of inputs on every machine, cut where
# the time runs out: a slower machine runs a prefix of a faster one's, and a
# longer run here covers what `make test` runs anywhere.
set -euo pipefail
dir=$(cd "${1:-build-fuzz}" && pwd)  # absolute: the targets run from a scratch dir
secs=${2:-20}
seed=${FUZZ_SEED:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
shopt -s nullglob
targets=("$dir"/fuzz/fuzz-*)
if [ ${#targets[@]} -eq 0 ]; then
  echo "0 passed, 0 failed (no fuzz targets built)"
  exit 0
fi
pass=0 fail=0
for t in "${targets[@]}"; do
  name=$(basename "$t"); name=${name#fuzz-}
  work=$(mktemp -d)
  [ -d "$root/tests/fuzz/corpus/$name" ] && cp -r "$root/tests/fuzz/corpus/$name/." "$work/"
  # tests/fuzz/seeds/<name>: more real files, one path (from the repo root) a
  # line, used where they are (fixtures) instead of copies in the corpus
  if [ -f "$root/tests/fuzz/seeds/$name" ]; then
    while read -r f; do
      [ -n "$f" ] && [ -f "$root/$f" ] && cp "$root/$f" "$work/seed-$(echo "$f" | tr / _)"
    done < "$root/tests/fuzz/seeds/$name"
  fi
  log=$(mktemp)
  if (cd "$work" && "$t" -max_total_time="$secs" -max_len=65536 -timeout=10 \
        -rss_limit_mb=2048 -seed="$seed" -print_final_stats=1 -artifact_prefix="$work/" "$work" >"$log" 2>&1); then
    runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -1)
    echo "fuzz $name: ok (${runs:-?} runs in ${secs} s)"
    pass=$((pass+1))
  else
    echo "fuzz $name: FAILED (seed $seed)"; tail -40 "$log"
    ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* 2>/dev/null || true
    fail=$((fail+1))
  fi
  rm -rf "$work" "$log"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
