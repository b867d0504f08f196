#!/usr/bin/env bash
# estimate-rows.sh - an estimate over many GPU rows runs the rows on the
# cores the process may use (src/cmd-estimate.c, estimate_rows_parallel);
# its output must be the one-core output byte for byte, text and JSON,
# however the rows are scheduled (issue 21). The one-core run is the same
# binary under `taskset -c 0`, which takes the sequential path.
. "$(dirname "$0")/lib.sh"

cpus=$(nproc)
# twelve rows, one of them four GPUs (a kind is given once: a second
# --gpu a100-40gb would be refused, not added to the a100-40gb:4 row)
gpus=(--gpu a100-pcie-40gb --gpu a100-80gb --gpu h100-80gb --gpu l4 --gpu rtx-4090 --gpu t4
      --gpu a10g --gpu h200 --gpu l40s --gpu v100-16gb --gpu a100-40gb:4 --gpu rtx-3090)

same_as_one_core() { # ARGS...: stdout, stderr and exit code equal on one core and on all
  run "$@"
  local o=$out e=$err r=$rc
  rc=0
  taskset -c 0 "$VRAMFIT" "$@" >"$TMP/out1" 2>"$TMP/err1" || rc=$?
  out=$(cat "$TMP/out1"); err=$(cat "$TMP/err1")
  check '[ "$r" -eq "$rc" ] && [ "$o" = "$out" ] && [ "$e" = "$err" ]'
}

for args in "llama3-8b --mode full --batch 4 --seq 2048" \
            "llama2-7b --mode lora --batch 16 --seq 4096" \
            "llama3-70b --mode full --batch 8 --seq 4096" \
            "llama3-8b --mode infer --batch 64 --seq 8192"; do
  test_case "rows on $cpus cores = one core: $args"
  # shellcheck disable=SC2086
  same_as_one_core estimate $args "${gpus[@]}"
  expect_rc 0
  # shellcheck disable=SC2086
  same_as_one_core estimate $args "${gpus[@]}" --json
  # and the whole catalog, where no GPU is given (this machine's when it has some)
  # shellcheck disable=SC2086
  same_as_one_core estimate $args
  # the same run twice: the schedule changes nothing
  # shellcheck disable=SC2086
  run estimate $args "${gpus[@]}"
  first=$out
  # shellcheck disable=SC2086
  run estimate $args "${gpus[@]}"
  check '[ "$first" = "$out" ]'
done

# rows the analytic model says do not fit and the allocator simulation
# says fit (its reserve below the analytic one): on threads their advice
# runs first (early_advice) and must leave no trace
for args in "mistral-7b --mode full --batch 1 --seq 2048" \
            "qwen2.5-0.5b --mode lora --batch 4 --seq 2048"; do
  test_case "analytic no, simulation yes: as on one core: $args"
  # shellcheck disable=SC2086
  same_as_one_core estimate $args --gpu h200 --gpu rtx-3090 --gpu rtx-4090 --gpu a100-40gb
  expect_rc 0
  # shellcheck disable=SC2086
  same_as_one_core estimate $args --gpu h200 --gpu rtx-3090 --gpu rtx-4090 --gpu a100-40gb --json
done

test_case "a bad GPU is named, as on one core"
same_as_one_core estimate llama3-8b --mode full --gpu a100-40gb --gpu no-such-gpu --gpu h100-80gb
expect_rc 2
finish
