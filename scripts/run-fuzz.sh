#!/usr/bin/env bash
# run-fuzz.sh BUILD_DIR SECONDS - run every fuzz target under ASan+UBSan for a
# bounded time, seeded with its corpus (tests/fuzz/corpus/<name>/, real files)
# and the files tests/fuzz/seeds/<name> names.
# Fails on any finding. New inputs go to a scratch copy, never the corpus.
# JOBS targets run side by side (default 2; make test passes its JOBS).
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
# fuzz_one TARGET OUT: run one target; OUT gets its report line(s), and
# OUT.failed when it found something
fuzz_one() {
  local t=$1 out=$2 name work log runs
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
    echo "fuzz $name: ok (${runs:-?} runs in ${secs} s)" >"$out"
  else
    { echo "fuzz $name: FAILED (seed $seed)"; tail -40 "$log"
      for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-*; do echo "kept: $f"; done; } >"$out"
    : >"$out.failed"
    rm -f "$log"
    return 0 # the failing input stays in $work
  fi
  rm -rf "$work" "$log"
}

# JOBS targets at a time (each is one process, one core); the reports in
# the targets' order once all have run
jobs_max=${JOBS:-2}
res=$(mktemp -d)
trap 'rm -rf "$res"' EXIT
i=0
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  fuzz_one "$t" "$res/$i" &
  i=$((i + 1))
done
wait
pass=0 fail=0
for ((k = 0; k < i; k++)); do
  cat "$res/$k"
  if [ -e "$res/$k.failed" ]; then fail=$((fail + 1)); else pass=$((pass + 1)); fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
