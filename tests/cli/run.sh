#!/usr/bin/env bash
# run.sh - vramfit run end to end on a CPU: plan -> run -> preprocess (the
# example trainer's scripts/process_dataset.py through the plan's own
# command) -> tune -> train -> an out-of-memory the example trainer raises at
# step 70 while the optimizer is adamw (VRAMFIT_EXAMPLE_OOM_AT) -> recovery
# (adamw8bit, the cheapest remedy not set that the estimate says fits the
# plan's H100) -> resume from the step-60 checkpoint, not step 0 -> finish ->
# report. Then an interruption during training (SIGHUP, as SIGINT, once the trainer
# waits at step 60: VRAMFIT_EXAMPLE_HOLD_AT; the test waits on states, never
# on sleeps), a crash that stops with the triage and changes nothing, the
# resume, and bad input. The trainer directory is the test trainer checkout
# (tests/fixtures/ltx-trainer: schema and configs) with the example
# trainer's scripts; `uv run python` is a stand-in that runs /usr/bin/python3
# (Debian's python3-torch).
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
export XDG_DATA_HOME=$TMP/xdg OMP_NUM_THREADS=1
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI=/nonexistent/nvidia-smi
unset LTX_TRAININGS_DIR LTX_TRAINER_DIR LTX_MODELS_DIR VRAMFIT_EXAMPLE_OOM_AT VRAMFIT_EXAMPLE_HOLD_AT
export HOME=$TMP/home
mkdir -p "$HOME" "$TMP/bin" "$TMP/work" "$TMP/models/gemma-3-12b-it"

# --- bad input ----------------------------------------------------------------
test_case "usage: no RUN_DIR, two RUN_DIRs"
run run; expect_rc 2; expect_err "missing RUN_DIR"
run run "$TMP/a" "$TMP/b"; expect_rc 2
test_case "a RUN_DIR that is missing, a file, not a plan workspace"
run run "$TMP/nonexistent"; expect_rc 1; expect_err "$TMP/nonexistent"; expect_err_lines 1
echo x >"$TMP/afile"
run run "$TMP/afile"; expect_rc 1; expect_err "$TMP/afile"
mkdir -p "$TMP/notplan"
run run "$TMP/notplan"; expect_rc 1; expect_err "not a plan workspace: no plan.json"; expect_err_lines 1
run run --status "$TMP/notplan"; expect_rc 1
check '[ -z "$(ls -A "$TMP/notplan")" ]'
test_case "a plan.json or run.json that is not what it should be"
echo '{' >"$TMP/notplan/plan.json"
run run "$TMP/notplan"; expect_rc 1; expect_err "plan.json: not valid JSON"
echo '{"trainer_dir": "/"}' >"$TMP/notplan/plan.json"
echo '{"version": 1, "stage": "baking", "attempts": [], "recoveries": []}' >"$TMP/notplan/run.json"
run run --status "$TMP/notplan"; expect_rc 1; expect_err "run.json: field stage: expected preprocess, tune, train or done"
test_case "--status of a plan nothing has run yet: not started, not stopped"
rm "$TMP/notplan/run.json"
run run --status "$TMP/notplan"; expect_rc 0
expect_out_re 'stage +preprocess \(not started\)'
check '[ ! -e "$TMP/notplan/run.json" ]'
rm -rf "$TMP/notplan"

if ! have_torch "the run flow cases"; then
  finish; exit $?
fi

# --- a plan on the test trainer checkout, with the example trainer's scripts
TD=$TMP/trainer
cp -r "$VF_SOURCE_DIR/tests/fixtures/ltx-trainer" "$TD"
cp "$VF_SOURCE_DIR"/examples/ltx-mini-trainer/scripts/*.py "$TD/scripts/"
cp -r "$VF_SOURCE_DIR/examples/ltx-mini-trainer/data" "$TD/data"
cat >"$TMP/bin/uv" <<EOF
#!/bin/sh
# uv stand-in: \`uv run python ARGS\` runs $PY ARGS; \`uv run accelerate
# launch [--config_file F] [--num_processes N] SCRIPT ARGS\` is written to
# accelerate.log and runs SCRIPT ARGS in one process (a CPU has no ranks)
[ "\$1" = run ] && shift
if [ "\$1" = accelerate ] && [ "\$2" = launch ]; then
  shift 2; echo "accelerate launch \$*" >>"$TMP/accelerate.log"
  while [ \$# -gt 1 ]; do case "\$1" in --num_processes|--config_file) shift 2;; *) break;; esac; done
  exec $PY "\$@"
fi
[ "\$1" = python ] && shift && exec $PY "\$@"
echo "uv stand-in: not supported: \$*" >&2; exit 2
EOF
chmod +x "$TMP/bin/uv"
export PATH="$TMP/bin:$PATH"
echo '{"model_type": "gemma3"}' >"$TMP/models/gemma-3-12b-it/config.json"
cp "$VF_SHARED_DIR/fixtures/models/lora_weights_step_00050.safetensors" "$TMP/models/ltx-2-19b-dev.safetensors"

# make_plan NAME [GPU]: plan a run for GPU (default one H100; dataset NAME), its dataset file
# with three clips, checkpoints every 20 steps; prints the run directory.
make_plan() {
  (cd "$TMP/work" && "$VRAMFIT" plan --trainer-dir "$TD" --model "$TMP/models/ltx-2-19b-dev.safetensors" \
    --text-encoder "$TMP/models/gemma-3-12b-it" --gpu "${2:-h100-80gb}" --dataset "$1" >/dev/null) || return 1
  local r
  r=$(ls -d "$TMP/work/projects/t2v-$1-"*)
  mkdir -p "$r/dataset/clips"
  for i in 1 2 3; do echo "clip $i of $1: a grey cat walks along a sunlit windowsill." >"$r/dataset/clips/c$i.txt"; done
  echo '[{"caption": "a cat", "video": "clips/c1.txt"}, {"caption": "a cat sits", "video": "clips/c2.txt"},
{"caption": "a cat jumps", "video": "clips/c3.txt"}]' >"$r/dataset/dataset.json"
  "$VRAMFIT" config set "$r/config.yaml" checkpoints.interval=20 validation.interval=50 >/dev/null || return 1
  echo "$r"
}
# state EXPR: a python3 expression over j = run.json of $R
state() { python3 -c "import json,sys; j=json.load(open('$R/run.json')); sys.exit(0 if ($1) else 1)" 2>/dev/null; }
# wait_for SECONDS CMD: poll a state (the bound only catches a hang)
wait_for() { local n=$(($1 * 10)); shift; until eval "$1"; do n=$((n - 1)); [ $n -gt 0 ] || return 1; sleep 0.1; done; }

test_case "plan says vramfit run does the steps, and writes plan.json"
R=$(make_plan cats)
check '[ -d "$R" ] && [ -f "$R/plan.json" ]'
check 'grep -qF "\`vramfit run $R\` does all three in order" "$R/plan.md"'
check 'grep -qF "\`vramfit run $R\` runs the same steps, supervised and resumable" "$R/plan.md"'
check 'python3 -c "import json; j=json.load(open(\"$R/plan.json\")); assert j[\"preprocess\"][\"command\"].startswith(\"uv run python scripts/process_dataset.py\")"'
test_case "plan.json: the cost plan.md prints (step time x steps x GPUs x the catalog's price)"
cost=$(python3 -c "import json; e=json.load(open('$R/plan.json'))['estimate']; assert e['price_usd_per_gpu_hour'] > 0 and e['gpu_count'] == 1; print('%.2f' % e['cost_usd'])")
check '[ -n "$cost" ] && grep -qF "| cost | \$$cost (1 GPU x \$" "$R/plan.md"'
check 'python3 -c "import json; e=json.load(open(\"$R/plan.json\"))[\"estimate\"]; assert abs(e[\"cost_usd\"] - e[\"total_seconds\"] / 3600 * e[\"price_usd_per_gpu_hour\"]) < 1e-9"'

# --- the whole flow, with an out-of-memory at step 70 -----------------------------
test_case "run: preprocess, tune, train, out of memory at step 70, recovery, resume, finish"
VRAMFIT_EXAMPLE_OOM_AT="70:optimization.optimizer_type=adamw" run run "$R" --steps 100 --trial-steps 20 --quiet
expect_rc 0
check 'state "j[\"stage\"] == \"done\" and j[\"status\"] == \"done\""'
check 'state "[a[\"outcome\"] for a in j[\"attempts\"]] == [\"oom\", \"ok\"]"'
check 'state "j[\"attempts\"][0][\"resumed_from\"] is None and j[\"attempts\"][0][\"steps_done\"] == 69"'
check 'state "j[\"attempts\"][1][\"resumed_from\"].endswith(\"/outputs/checkpoints/lora_weights_step_00060.safetensors\")"'
check 'state "len(j[\"recoveries\"]) == 1 and j[\"recoveries\"][0][\"cause\"] == \"oom\" and j[\"recoveries\"][0][\"step\"] == 69"'
check 'state "j[\"recoveries\"][0][\"set\"] == {\"optimization.optimizer_type\": \"\\\"adamw8bit\\\"\"}"'
check 'state "j[\"recoveries\"][0][\"estimate\"] == \"fits\" and 0 < j[\"recoveries\"][0][\"predicted_peak_bytes\"] < 80e9"'
test_case "the recovery is in the trial history, a row of its own kind"
check 'python3 -c "import sqlite3,json,sys; c=sqlite3.connect(\"$TMP/xdg/vramfit/history.db\"); r=c.execute(\"select attempt, step, cause, settings from recoveries where run_dir=?\", (\"$R\",)).fetchall(); sys.exit(0 if len(r) == 1 and r[0][:3] == (1, 69, \"oom\") and json.loads(r[0][3])[\"optimization.optimizer_type\"].strip(chr(34)) == \"adamw8bit\" else 1)"'
check 'python3 -c "import sqlite3,sys; c=sqlite3.connect(\"$TMP/xdg/vramfit/history.db\"); sys.exit(0 if c.execute(\"select count(*) from trials where run_dir=?\", (\"$R\",)).fetchone()[0] >= 1 else 1)"'
run history --run "$R"; expect_rc 0
expect_out_re "${R##*/} +1 +69 +oom +optimization\.optimizer_type: adamw8bit\$"
run history --run "$R" --json; expect_rc 0
expect_json '[(r["attempt"], r["step"], r["cause"]) for r in j["recoveries"]] == [(1, 69, "oom")] and j["recoveries"][0]["settings"] == {"optimization.optimizer_type": "\"adamw8bit\""}'
test_case "preprocess: the plan's command, its outputs, the sanity sample"
check '[ -f "$R/dataset/.precomputed/latents/c2.txt" ] && [ -f "$R/dataset/.precomputed/conditions/c3.txt" ]'
check '[ -f "$R/overfit/.precomputed/latents/c1.txt" ] && [ -f "$R/overfit/.precomputed/conditions/c1.txt" ]'
check '[ ! -e "$R/overfit/.precomputed/latents/c2.txt" ]'
check 'grep -q "^Processing 3/3: c3.txt" "$R/logs/preprocess.log"'
check 'state "j[\"preprocess\"] == {\"done\": True, \"files\": 6}"'
test_case "tune ran on the sanity sample"
check 'grep -q "trial 1  change: baseline  outcome: ok" "$R/autotune.log"'
test_case "the recovery resumed from the last checkpoint, not step 0"
check 'grep -q "CUDA out of memory" "$R/logs/train-1.log"'
check 'grep -q "Resuming from checkpoint lora_weights_step_00060.safetensors at step 60" "$R/logs/train-2.log"'
first=$(grep -o '"step": [0-9]*' "$R/logs/train-2.log" | head -1)
check '[ "$first" = "\"step\": 61" ]'
check '! grep -q "\"step\": 1," "$R/logs/train-2.log"'
check '[ -f "$R/outputs/checkpoints/lora_weights_step_00100.safetensors" ]'
check 'grep -q "^  optimizer_type: \"adamw8bit\"" "$R/config.yaml"'
check 'grep -qF "load_checkpoint: \"$R/outputs/checkpoints/lora_weights_step_00060.safetensors\"" "$R/config.yaml"'
check 'grep -q "^  steps: 100" "$R/config.yaml"'
test_case "plan.md's Run Log records the recovery"
check 'grep -q "^## Run Log" "$R/plan.md"'
check 'grep -q "^- recovery 1: oom at step 69 of attempt 1 .*applied \`optimization.optimizer_type: \"adamw8bit\"\` to config.yaml, the cheapest remedy not already set that the estimate says fits" "$R/plan.md"'
check 'grep -q "^- train: finished, 100 steps (attempt 2)" "$R/plan.md"'
test_case "report page: the training section with its charts"
check '[ -f "$R/report.html" ]'
# page_data: the JSON the page embeds (#vramfit-data), as python3 expression j
page_data() { python3 -c "import json,re,sys; h=open('$R/report.html').read(); m=re.search(r'id=\"vramfit-data\">(.*?)</script>', h, re.S); j=json.loads(m.group(1)); sys.exit(0 if ($1) else 1)"; }
check 'page_data "[a[\"outcome\"] for a in j[\"training\"][\"attempts\"]] == [\"oom\", \"ok\"]"'
check 'page_data "j[\"training\"][\"attempts\"][1][\"losses\"][\"step\"][0] == 61 and j[\"training\"][\"attempts\"][0][\"losses\"][\"step\"][-1] == 69"'
check 'page_data "j[\"training\"][\"recoveries\"][0][\"change\"] == \"optimization.optimizer_type: adamw8bit\""'
check 'page_data "j[\"training\"][\"validation_samples\"] == [\"step_000050_0.txt\", \"step_000100_0.txt\"]"'
check 'grep -q "data-chart=\"train-loss\"" "$R/report.html" && grep -q "data-chart=\"train-steps\"" "$R/report.html"'
check 'grep -q "Recoveries: the cheapest remedy not set yet that the estimate says fits" "$R/report.html"'
check 'grep -q "of training over all launches, against the plan" "$R/report.html"'
check 'grep -qE "Cost: [$][0-9]+[.][0-9]{2} [(].* x 1 GPU x [$][0-9.]+/GPU-hour, the catalog[^ ]* indicative price[)], against the plan[^ ]* estimate of [$]$cost[.]" "$R/report.html"'
test_case "--status from the state file"
run run --status "$R"; expect_rc 0
expect_out "stage       done (done)"
expect_out "recovery    oom at step 69 -> optimization.optimizer_type: \"adamw8bit\""
expect_out "attempt     2: ok at step 100/100, resumed from $R/outputs/checkpoints/lora_weights_step_00060.safetensors"
expect_out_re "training    step 100/100 \| loss [0-9.]+ \|"
run run --status --json "$R"; expect_rc 0
expect_json 'j["state"]["stage"] == "done" and j["progress"]["step"] == 100 and j["progress"]["total_steps"] == 100 and j["progress"]["samples"] == 2'
run run --json "$R"; expect_rc 2; expect_err "--json goes with --status"
test_case "run again: nothing left to do, nothing run"
run run "$R" --quiet; expect_rc 0
check '[ ! -e "$R/logs/train-3.log" ]'
run run "$R" --quiet --steps 300; expect_rc 0
expect_err "--steps, --trial-steps and --max-recoveries not applied: the run is done"
check '[ ! -e "$R/logs/train-3.log" ]'

# --- interrupted during training, a crash, then resumed ----------------------------
test_case "Ctrl-C during preprocessing: stopped, no process left, run again continues"
R=$(make_plan dogs)
VRAMFIT_EXAMPLE_PREPROCESS_DELAY=600 "$VRAMFIT" run "$R" --quiet >"$TMP/bg.out" 2>"$TMP/bg.err" &
pid=$!
check 'wait_for 120 "grep -q \"^Processing 1/3\" \"$R/logs/preprocess.log\" 2>/dev/null"'
check 'state "j[\"stage\"] == \"preprocess\" and j[\"status\"] == \"running\""'
kill -INT $pid
rc=0; wait $pid || rc=$?
expect_rc 1
check 'grep -q "interrupted during preprocessing (no process left); run again to continue" "$TMP/bg.err"'
check 'state "j[\"stage\"] == \"preprocess\" and j[\"status\"] == \"stopped\""'
check '! pgrep -f "$R/dataset/dataset.json" >/dev/null'
check '[ ! -e "$R/overfit/.precomputed/latents" ]'
test_case "Ctrl-C during tune: stopped (not failed), no process left"
VRAMFIT_EXAMPLE_HOLD_AT=10 "$VRAMFIT" run "$R" --steps 100 --trial-steps 20 --quiet >"$TMP/bg.out" 2>"$TMP/bg.err" &
pid=$!
check 'wait_for 120 "grep -rqs \"holding at step 10\" \"$R/logs\""'
check 'state "j[\"stage\"] == \"tune\" and j[\"status\"] == \"running\""'
kill -INT $pid
rc=0; wait $pid || rc=$?
expect_rc 1
check 'grep -q "interrupted during tune (no process left); run again to resume the sweep" "$TMP/bg.err"'
check 'state "j[\"stage\"] == \"tune\" and j[\"status\"] == \"stopped\""'
check '! pgrep -f "$R/" >/dev/null'
test_case "a hang-up (SIGHUP: the ssh session gone) while the trainer waits at step 60: as Ctrl-C, stopped, no process left"
VRAMFIT_EXAMPLE_HOLD_AT=60 "$VRAMFIT" run "$R" --steps 100 --trial-steps 20 --quiet >"$TMP/bg.out" 2>"$TMP/bg.err" &
pid=$!
check 'wait_for 120 "grep -q \"holding at step 60\" \"$R/logs/train-1.log\" 2>/dev/null"'
check 'state "j[\"stage\"] == \"train\" and j[\"status\"] == \"running\""'
# meanwhile a second run or tune of the same run directory is refused (its lock), --status still reads
run run "$R" --quiet; expect_rc 1
expect_err "another vramfit (pid $pid, vramfit run) is working in this run directory"
run tune "$R" --quiet; expect_rc 1
expect_err "another vramfit (pid $pid, vramfit run) is working in this run directory"
run run --status "$R"; expect_rc 0
kill -HUP $pid
rc=0; wait $pid || rc=$?
expect_rc 1
check 'grep -q "interrupted at step 60 (no process left); run again to resume" "$TMP/bg.err"'
check 'state "j[\"status\"] == \"stopped\" and j[\"attempts\"][0][\"outcome\"] == \"interrupted\""'
check '! pgrep -f "$R/config.yaml" >/dev/null'
test_case "a crash stops with the triage and changes nothing"
cp "$R/config.yaml" "$TMP/dogs.yaml"
run run "$R" --trainer-cmd "$PY -c raise(SystemExit(3)) {config}" --quiet; expect_rc 1
expect_err "outcome crash"; expect_err "no automatic change"
check 'state "j[\"stage\"] == \"train\" and j[\"status\"] == \"failed\" and j[\"recoveries\"] == []"'
check 'diff <(grep -v load_checkpoint "$TMP/dogs.yaml") <(grep -v load_checkpoint "$R/config.yaml") >/dev/null'
test_case "a NaN loss at step 70 stops with the triage, exit 1, config.yaml unchanged"
cp "$R/config.yaml" "$TMP/dogs.yaml"
VRAMFIT_EXAMPLE_NAN_AT=70 run run "$R" --quiet; expect_rc 1
expect_err "outcome nan at step 69"; expect_err "evidence: "; expect_err "Loss is NaN at step 70"
expect_err "no automatic change"
check 'cmp -s "$TMP/dogs.yaml" "$R/config.yaml"'
check 'state "j[\"stage\"] == \"train\" and j[\"status\"] == \"failed\" and j[\"recoveries\"] == [] and j[\"attempts\"][-1][\"outcome\"] == \"nan\""'
check 'grep -q "Resuming from checkpoint lora_weights_step_00060.safetensors at step 60" "$R/logs/train-3.log"'
test_case "run again: preprocess and tune are not redone, training resumes at step 60"
before=$(stat -c %Y "$R/logs/preprocess.log")
run run "$R" --quiet; expect_rc 0
check 'grep -q "Resuming from checkpoint lora_weights_step_00060.safetensors at step 60" "$R/logs/train-4.log"'
check '[ "$(stat -c %Y "$R/logs/preprocess.log")" = "$before" ]'
check 'state "[a[\"outcome\"] for a in j[\"attempts\"]] == [\"interrupted\", \"crash\", \"nan\", \"ok\"]"'
test_case "--from train after the end: resumes from the last checkpoint (step 100), nothing left to train"
run run "$R" --from train --max-recoveries 0 --steps 50 --quiet; expect_rc 0
expect_err "--steps 50 not applied: optimization.steps was set to 100 before the first launch"
check 'state "j[\"stage\"] == \"done\" and j[\"attempts\"][-1][\"resumed_from\"].endswith(\"lora_weights_step_00100.safetensors\")"'
test_case "a trainer checkout whose schema has no model.load_checkpoint (the profile's resume key): named, not written"
TD2=$TMP/trainer-renamed
cp -r "$TD" "$TD2"
sed -i 's/^    load_checkpoint:/    resume_from:/' "$TD2/src/ltx_trainer/config.py"
check 'grep -q "^    resume_from:" "$TD2/src/ltx_trainer/config.py"'
"$VRAMFIT" config set "$R/config.yaml" model.load_checkpoint=null >/dev/null
cp "$R/config.yaml" "$TMP/dogs.yaml"
run run "$R" --from train --trainer-dir "$TD2" --quiet; expect_rc 1; expect_err_lines 1
expect_err "cannot resume from $R/outputs/checkpoints/lora_weights_step_00100.safetensors: $TD2/src/ltx_trainer/config.py: LtxTrainerConfig has no field model.load_checkpoint"
expect_err "configs.json checkpoints.resume_key"
check 'cmp -s "$TMP/dogs.yaml" "$R/config.yaml"'
check 'state "j[\"stage\"] == \"train\" and j[\"status\"] == \"failed\""'

test_case "--dataset-dir: a dataset whose row names a missing file stops at preprocessing, naming it"
R=$(make_plan birds)
D=$TMP/birds-data
mkdir -p "$D/media"
for i in 1 2; do echo "bird $i: a sparrow hops along a fence." >"$D/media/b$i.txt"; done
printf '%s\n' '{"caption": "a sparrow", "media_path": "media/b1.txt"}' '{"caption": "a sparrow hops", "media_path": "media/b3.txt"}' >"$D/birds.jsonl"
cp "$R/config.yaml" "$TMP/birds.yaml"
run run "$R" --dataset-dir "$D" --steps 20 --trial-steps 20 --quiet; expect_rc 1
expect_err "$D/birds.jsonl: row 2: field media_path: media/b3.txt: no such file"
check 'state "j[\"stage\"] == \"preprocess\" and j[\"status\"] == \"failed\" and j[\"dataset_dir\"] == \"$D\""'
check '[ ! -e "$R/logs/preprocess.log" ] && [ ! -e "$D/.precomputed" ]'
check 'cmp -s "$R/config.yaml" "$TMP/birds.yaml"'
test_case "--dataset-dir: run again without it uses the same, outputs in the run's data root"
echo "bird 3: a sparrow takes off." >"$D/media/b3.txt"
run run "$R" --steps 20 --trial-steps 20 --max-trials 1 --quiet; expect_rc 0
check 'grep -q "^Processing 2/2: b3.txt" "$R/logs/preprocess.log"'
check 'grep -q "bird 3: a sparrow takes off" "$R/dataset/.precomputed/latents/b3.txt"'
check '[ ! -e "$R/dataset/.precomputed/latents/c1.txt" ] && [ ! -e "$D/.precomputed" ]'
check 'state "j[\"stage\"] == \"done\" and j[\"dataset_dir\"] == \"$D\" and j[\"preprocess\"][\"files\"] == 4"'
test_case "--dataset-dir: another one after preprocessing needs --from preprocess"
mkdir -p "$TMP/other"
run run "$R" --dataset-dir "$TMP/other" --quiet; expect_rc 1
expect_err "the dataset was preprocessed from $D; to use --dataset-dir $TMP/other, run again with --from preprocess"
run run "$R" --dataset-dir "$TMP/other" --from preprocess --quiet; expect_rc 1
expect_err "$TMP/other: no dataset file"

test_case "two GPUs: preprocessing and training through accelerate launch, as plan.md prints them"
R=$(make_plan pair h100-80gb:2)
run run "$R" --steps 40 --trial-steps 20 --quiet; expect_rc 0
check 'grep -qxF "accelerate launch --num_processes 2 scripts/process_dataset.py $R/dataset/dataset.json --resolution-buckets 960x544x49 --model-path $TMP/models/ltx-2-19b-dev.safetensors --text-encoder-path $TMP/models/gemma-3-12b-it" "$TMP/accelerate.log"'
check 'grep -qxF "accelerate launch --num_processes 2 scripts/train.py $R/config.yaml --disable-progress-bars" "$TMP/accelerate.log"'
check 'grep -qF "uv run accelerate launch --num_processes 2 scripts/train.py $R/config.yaml --disable-progress-bars" "$R/plan.md"'
check 'state "j[\"stage\"] == \"done\" and [a[\"outcome\"] for a in j[\"attempts\"]] == [\"ok\"]"'

test_case "the sanity sample goes where the profile's trials read it (sweep.json trial_config.data_root), not a fixed overfit/.precomputed"
R=$(make_plan owls)
mkdir -p "$TMP/data-dir/profiles/ltx2"
python3 - "$VF_SOURCE_DIR/data/profiles/ltx2/sweep.json" "$TMP/data-dir/profiles/ltx2/sweep.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["trial_config"]["data_root"] = "{run}/sanity/one-sample"
j["trial_config"]["set"]["data.preprocessed_data_root"] = "{run}/sanity/one-sample"
json.dump(j, open(sys.argv[2], "w"))
PY
VRAMFIT_DATA_DIR=$TMP/data-dir run run "$R" --steps 20 --trial-steps 20 --max-trials 1 --quiet; expect_rc 0
check '[ -f "$R/sanity/one-sample/latents/c1.txt" ] && [ -f "$R/sanity/one-sample/conditions/c1.txt" ]'
check '[ ! -e "$R/sanity/one-sample/latents/c2.txt" ] && [ ! -e "$R/overfit/.precomputed" ]'
check 'grep -q "trial 1  change: baseline  outcome: ok" "$R/autotune.log"'
check 'grep -q "^- preprocess: 6 files in .*; the sanity sample (2 files) copied into sanity/one-sample" "$R/plan.md"'
check 'state "j[\"stage\"] == \"done\""'
test_case "plan.md names the sample folder the profile's trials read, not a fixed overfit/.precomputed"
P=$(VRAMFIT_DATA_DIR=$TMP/data-dir make_plan voles)
check 'grep -qF "data root \`$P/sanity/one-sample\`" "$P/plan.md" && grep -qF "into \`$P/sanity/one-sample\`" "$P/plan.md"'
check 'grep -qF "copy one row of the dataset file into \`$P/sanity/\`" "$P/plan.md" && ! grep -q "overfit/.precomputed" "$P/plan.md"'
test_case "a sweep.json whose trial data root is outside the run: refused, naming the field"
R=$(make_plan moles)
python3 -c "import json,sys; p=sys.argv[1]; j=json.load(open(p)); j['trial_config']['data_root']='{run}/../elsewhere'; json.dump(j, open(p, 'w'))" "$TMP/data-dir/profiles/ltx2/sweep.json"
VRAMFIT_DATA_DIR=$TMP/data-dir run run "$R" --steps 20 --trial-steps 20 --quiet; expect_rc 1; expect_err_lines 1
expect_err "sweep.json: trial_config.data_root: expected a folder below {run}/ (where the sanity run's one sample is copied), got '{run}/../elsewhere'"
check '[ ! -e "$TMP/work/projects/elsewhere" ] && state "j[\"stage\"] == \"preprocess\" and j[\"status\"] == \"failed\""'

finish
