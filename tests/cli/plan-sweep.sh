#!/usr/bin/env bash
# plan-sweep.sh - plan.md and plan --json show the predicted autotune sweep
# (issue 29 item 4): which trials are expected to run out of memory, the
# expected winner, its step time and the run's time and cost.
. "$(dirname "$0")/lib.sh"

TD="$VF_SOURCE_DIR/tests/fixtures/ltx-trainer"
unset LTX_TRAININGS_DIR LTX_TRAINER_DIR LTX_MODELS_DIR
export HOME="$TMP/home"
mkdir -p "$HOME" "$TMP/models/gemma-3-12b-it" "$TMP/work"
echo '{"model_type": "gemma3"}' >"$TMP/models/gemma-3-12b-it/config.json"
cp "$VF_SHARED_DIR/fixtures/models/lora_weights_step_00050.safetensors" "$TMP/models/ltx-2-19b-dev.safetensors"
M=(--trainer-dir "$TD" --model "$TMP/models/ltx-2-19b-dev.safetensors" --text-encoder "$TMP/models/gemma-3-12b-it")
cd "$TMP/work"
sweep() { sed -n '/^\*\*Predicted sweep/,/^## Monitoring/p' "projects/$1/plan.md"; }

test_case "plan.md of an RTX 5090 run: the predicted sweep, quantization off out of memory"
run plan "${M[@]}" --gpu rtx-5090 --run-name r5090
expect_rc 0
check "sweep r5090 | grep -qE '^\| 1 \| baseline \| fits \| [0-9.]+ GiB \| [0-9.]+ s \|$'"
check "sweep r5090 | grep -qE '^\| 2 \| quantization off \| out of memory \| [0-9.]+ GiB \|'"
check "sweep r5090 | grep -qE '^Expected winner: trial 1 \(baseline\), [0-9.]+ s per step: [0-9.]+ h for 2000 steps, about \\\$[0-9.]+ at'"
check "sweep r5090 | grep -qF 'gradient checkpointing off (only on the 80GB+ tier)'"

test_case "plan --json on an H100: the standard config, checkpointing off predicted out of memory"
run plan "${M[@]}" --gpu h100-80gb --run-name rh100 --json
expect_rc 0
expect_json 'j["predicted_sweep"]["available"] and j["predicted_sweep"]["winner"] == 1'
expect_json '(lambda t: t["change"] == "gradient checkpointing off" and t["fits"] is False and t["peak_bytes"] > 80e9)([t for t in j["predicted_sweep"]["trials"] if t["trial"] == 4][0])'
expect_json '[t["outcome"] for t in j["predicted_sweep"]["trials"]][:3] == ["fits", "no change", "no change"]'

finish
