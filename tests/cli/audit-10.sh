#!/usr/bin/env bash
# audit-10.sh - audit 10, a new user's sweep: a setup vramfit cannot run or
# does not read is refused or named, and every figure of a row counts the
# GPUs the row runs on.
. "$(dirname "$0")/lib.sh"
export XDG_CONFIG_HOME="$TMP/config"
unset VRAMFIT_DATA_DIR || true
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI="$TMP/no-such-smi"

test_case "--float8 on a card without float8 tensor cores is refused, not estimated"
# torchao's Float8Linear runs torch._scaled_mm, which CUDA runs on compute
# capability 8.9+ only (torchtitan's Float8LinearConverter refuses below);
# an A100 row said "fits" with the float8 memory saving applied
run estimate llama3-8b --float8 --stack torchtitan --gpu a100-80gb:8 --shard fsdp
expect_rc 2
expect_err "a100-80gb (compute capability 8.0) has no float8 tensor cores"
expect_err_lines 2
run estimate llama3-8b --float8 --gpu v100-32gb --json
expect_rc 2
# a card that has them is estimated as before
run estimate llama3-8b --float8 --stack torchtitan --gpu h100-80gb:8 --shard fsdp --json
expect_rc 0
expect_json 'j["setup"]["float8"] and j["gpus"][0]["fits"]'
# the common cards shown by default: those below 8.9 left out, named
run estimate llama3-8b --float8 --json
expect_rc 0
expect_json 'all(g["id"] not in ("a100-40gb", "a100-80gb", "rtx-3090") for g in j["gpus"]) and any(g["id"] == "h100-80gb" for g in j["gpus"])'
expect_json 'any("left out: a100-40gb (8.0)" in x for x in j["assumptions"])'

test_case "video DiT flags on a model that reads none of them are refused"
# --video was refused on an LLM; --audio, --no-audio and --offload-optimizer
# silently did nothing
for f in --audio --no-audio --offload-optimizer; do
  run estimate llama3-8b $f --gpu h100-80gb
  expect_rc 2
  expect_err "apply to video DiTs"
  expect_err_lines 2
done

finish
