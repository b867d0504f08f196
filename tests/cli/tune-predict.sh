#!/usr/bin/env bash
# tune-predict.sh - vramfit tune prints, after the sweep, the prediction
# against the measurement for every trial (issue 29 item 4): the estimate of
# each trial's config (fits / out of memory, peak, step time) beside the
# outcome, peak and step time measured; --json "predicted". With the
# stand-in trainer (exact step times) and the example trainer's config.
. "$(dirname "$0")/lib.sh"
TRAINER=$VF_SOURCE_DIR/examples/ltx-mini-trainer
export XDG_DATA_HOME=$TMP/xdg
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI=/nonexistent/nvidia-smi
make_run() {
  local r=$TMP/$1
  mkdir -p "$r/overfit/.precomputed" "$r/dataset" "$r/outputs" "$r/logs"
  cp "$TRAINER/data/text.txt" "$r/overfit/.precomputed/sample.txt"
  cp "$TRAINER/configs/t2v_lora_low_vram.yaml" "$r/config.yaml"
  "$VRAMFIT" config set "$r/config.yaml" "model.model_path=\"$2\"" "model.text_encoder_path=\"$TRAINER/models\"" >/dev/null
  echo "$r"
}
FAKE="sh tests/unit/fake-trainer.sh {config}"

test_case "tune on an H100 run of ltx-2-19b: predicted against measured per trial"
: > "$TMP/ltx-2-19b-dev.safetensors"   # the self-check wants the file to exist
R=$(make_run h100 "$TMP/ltx-2-19b-dev.safetensors")
run tune "$R" --gpu h100-80gb --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "$FAKE" --steps 10 --json --quiet
expect_rc 0
expect_json 'j["trials"][0]["predicted_step_seconds"] > 0 and j["trials"][0]["predicted_step_seconds"] == j["predicted"][0]["step_seconds"]'
expect_json 'len(j["predicted"]) == len(j["trials"]) >= 2'
expect_json 'all(p["trial"] == t["trial"] and p["measured_outcome"] == t["outcome"] for p, t in zip(j["predicted"], j["trials"]))'
expect_json '(lambda p: p["fits"] and p["peak_bytes"] > 20 * 2**30 and p["step_seconds"] > 0 and p["measured_step_seconds"] == 1.0)(j["predicted"][0])'
expect_json '(lambda p: p["fits"] and p["peak_bytes"] > j["predicted"][0]["peak_bytes"])(j["predicted"][1])'
# the history keeps the predicted step time beside the measured one
run history --run "$R" --json
expect_rc 0
expect_json 'j["trials"][0]["predicted_step_seconds"] > 0 and j["trials"][0]["step_seconds"] == 1.0'
expect_json '(lambda t: abs(t["step_error_pct"] - (t["predicted_step_seconds"] - 1.0) * 100) < 1e-6)(j["trials"][0])'
expect_json 'j["estimator"]["step_trials_compared"] >= 2 and j["estimator"]["step_mean_abs_error_pct"] >= 0'
run history --run "$R"
expect_out_re '^step time: [0-9]+ trials compared, mean \|error\| [0-9.]+ %'
R1=$(make_run h100-text "$TMP/ltx-2-19b-dev.safetensors")
run tune "$R1" --gpu h100-80gb --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "$FAKE" --steps 10 --quiet
expect_rc 0
expect_out "predicted against measured"
expect_out_re '^1 +baseline +fits +ok +[0-9.]+ GiB'
expect_out_re '^2 +quantization off +fits +ok +[0-9.]+ GiB'

test_case "tune predicts the baseline as the plan did: the plan's training size (plan.json), not the validation dims"
# plan.md's predicted sweep said 47.4 GiB / 1.00 s for the baseline on an H100 and tune 50.93 GiB /
# 1.63 s for the same trial: tune sized the sample at the config's validation video_dims
mkdir -p "$TMP/pl/models/gemma-3-12b-it" "$TMP/pl/work"
echo '{"model_type": "gemma3"}' >"$TMP/pl/models/gemma-3-12b-it/config.json"
cp "$VF_SHARED_DIR/fixtures/models/lora_weights_step_00050.safetensors" "$TMP/pl/models/ltx-2-19b-dev.safetensors"
(cd "$TMP/pl/work" && HOME="$TMP/pl" "$VRAMFIT" plan --trainer-dir "$VF_SOURCE_DIR/tests/fixtures/ltx-trainer" \
  --model "$TMP/pl/models/ltx-2-19b-dev.safetensors" --text-encoder "$TMP/pl/models/gemma-3-12b-it" \
  --gpu h100-80gb --dataset cats --run-name p >/dev/null 2>&1)
RP=$TMP/pl/work/projects/p
check "[ -f '$RP/plan.json' ]"
mkdir -p "$RP/overfit/.precomputed" && echo x >"$RP/overfit/.precomputed/sample.txt"
run tune "$RP" --gpu h100-80gb --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "$FAKE" --steps 5 --no-check --json --quiet
expect_rc 0
P="$RP/plan.json" expect_json '(lambda e, p: p["peak_bytes"] == e["peak_bytes"] and abs(p["step_seconds"] - e["step_seconds"]) < 1e-9)(__import__("json").load(open(__import__("os").environ["P"]))["estimate"], j["predicted"][0])'
# --resolution-buckets still chooses
run tune "$RP" --gpu h100-80gb --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "$FAKE" --steps 5 --no-check --json --quiet --resolution-buckets 1920x1088x121
expect_rc 0
P="$RP/plan.json" expect_json 'j["predicted"][0]["peak_bytes"] > __import__("json").load(open(__import__("os").environ["P"]))["estimate"]["peak_bytes"]'

test_case "tune with the example trainer's own model: no estimate, said per trial"
R2=$(make_run mini "$TRAINER/models/mini.json")
run tune "$R2" --gpu h100-80gb --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "$FAKE" --steps 10 --json --quiet
expect_rc 0
expect_json 'all(p["fits"] is None and p["peak_bytes"] is None and p["measured_step_seconds"] for p in j["predicted"] if p["measured_outcome"] == "ok")'

test_case "tune orders the changes by predicted gain (predicted out of memory first, as the profile orders them)"
R3=$(make_run order "$TMP/ltx-2-19b-dev.safetensors")
run tune "$R3" --gpu h200 --try-no-ckpt --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "$FAKE" --steps 10 --json --quiet
expect_rc 0
# on an H200 the low-VRAM config without checkpointing is predicted to fit and to gain more than
# quantization off: it runs first (the profile's order has it third)
expect_json '[t["change"] for t in j["trials"]][:3] == ["baseline", "gradient checkpointing off", "quantization off"]'
check "grep -qF 'order by predicted gain: gradient checkpointing off, quantization off' '$R3/autotune.log'"
# a predicted OOM keeps its place first: on a 32 GB card quantization off is skipped and stops the sweep
R4=$(make_run order32 "$TMP/ltx-2-19b-dev.safetensors")
run tune "$R4" --gpu rtx-5090 --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "$FAKE" --steps 10 --json --quiet
expect_rc 0
expect_json '[t["change"] for t in j["trials"]] == ["baseline", "quantization off"] and j["trials"][1]["outcome"] == "skipped"'
# no prediction for a change (the example trainer's own model): the profile's order
R5=$(make_run order-mini "$TRAINER/models/mini.json")
run tune "$R5" --gpu h100-80gb --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "$FAKE" --steps 10 --json --quiet
expect_json '[t["change"] for t in j["trials"]][:2] == ["baseline", "quantization off"]'
check "! grep -qF 'order by predicted gain' '$R5/autotune.log'"

finish
