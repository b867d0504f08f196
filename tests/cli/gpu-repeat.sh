#!/usr/bin/env bash
# gpu-repeat.sh - each --gpu of estimate and fit is a row to compare: a
# kind given twice (--gpu rtx-4090 --gpu rtx-4090, or rtx-4090:4 and
# rtx-4090) is a usage error naming both values and the way to ask for N
# cards (ID:N), never a silent sum of the counts; different kinds stay rows.
. "$(dirname "$0")/lib.sh"
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI="$TMP/no-such-smi"

test_case "estimate --gpu K --gpu K: a usage error, not two GPUs"
run estimate llama3-8b --mode lora --gpu rtx-4090 --gpu rtx-4090
expect_rc 2
expect_no_out "rtx-4090 x2"
expect_err "vramfit estimate: --gpu rtx-4090: the same GPU as --gpu rtx-4090; each --gpu is a row to compare: give a kind once, as ID:N for N cards of it (here --gpu rtx-4090:2)"
expect_err_lines 2

test_case "estimate --gpu K:4 --gpu K: a usage error, not five GPUs"
run estimate llama3-8b --mode lora --gpu rtx-4090:4 --gpu rtx-4090 --json
expect_rc 2
check '[ -z "$out" ]'
expect_err "--gpu rtx-4090: the same GPU as --gpu rtx-4090:4"
expect_err "(here --gpu rtx-4090:5)"

test_case "estimate: the kind again after another kind, and in a report"
run estimate llama3-8b --mode lora --gpu rtx-4090 --gpu a100-80gb --gpu rtx-4090:2
expect_rc 2
expect_err "--gpu rtx-4090:2: the same GPU as --gpu rtx-4090;"
(cd "$TMP" && run report estimate llama3-8b --gpu h100-80gb --gpu h100-80gb -o r.html)
check '[ ! -e "$TMP/r.html" ]'

test_case "estimate: different kinds and one set are rows of their own"
run estimate llama3-8b --mode lora --gpu rtx-4090:2 --gpu a100-80gb --json
expect_rc 0
expect_json '[(g["id"], g["count"]) for g in j["gpus"]] == [("rtx-4090", 2), ("a100-80gb", 1)]'
run estimate llama3.1-8b --mode infer --engine llamacpp --gpu rtx-3090,rtx-4080 --gpu rtx-3090 --json
expect_rc 0
expect_json 'len(j["gpus"]) == 2'
# the same name with a different memory is another card
run estimate llama3-8b --mode lora --gpu mycard=24000 --gpu mycard=48000 --json
expect_rc 0
expect_json 'len(j["gpus"]) == 2 and all(g["count"] == 1 for g in j["gpus"])'

test_case "fit --gpu K --gpu K: the same usage error, not n 2"
run fit llama3-8b --mode lora --gpu rtx-4090 --gpu rtx-4090
expect_rc 2
expect_err "vramfit fit: --gpu rtx-4090: the same GPU as --gpu rtx-4090; each --gpu is a row to compare: give a kind once, as ID:N for N cards of it (here --gpu rtx-4090:2)"
run fit llama3-8b --mode lora --gpu rtx-4090:2 --gpu a100-80gb --json
expect_rc 0
finish
