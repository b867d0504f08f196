#!/usr/bin/env bash
# tune.sh - vramfit tune end to end. The sweep's logic (which change wins,
# the stop rules, the winner patched with only its keys, autotune.log and the
# history) with the stand-in trainer tests/unit/fake-trainer.sh, whose step
# times are exact; the example trainer (examples/ltx-mini-trainer, Debian's
# python3-torch as /usr/bin/python3) only for what needs a real one: a trial
# that runs ok and a real CPU out-of-memory under --memory-limit, classified
# and reverted; SIGTERM/SIGINT during a trial (no trainer left, config.yaml
# untouched, resume). No case asserts which real trial is faster (tests never
# assert timings; they must pass on a busy machine). Also trainers that print
# a 10 MB line, never end, or fork a TERM-ignoring grandchild; vramfit triage
# on the real failure fixtures, and vramfit history.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
TRAINER=$VF_SOURCE_DIR/examples/ltx-mini-trainer
export XDG_DATA_HOME=$TMP/xdg
export OMP_NUM_THREADS=1
# The CPU sweeps must not see this machine's GPUs (a fake NVML below does).
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI=/nonexistent/nvidia-smi
CMD="$PY scripts/train.py {config} --disable-progress-bars"
F=$VF_SHARED_DIR/fixtures/failures

# --- triage on the real failure outputs --------------------------------------
test_case "triage python oom"
run triage "$F/oom-python.err" --exit 1 --json
expect_rc 0; expect_json 'j["outcome"] == "oom" and "CUDA out of memory" in j["evidence"] and "gradient checkpointing" in j["remedies"][0]'
test_case "triage torchrun / accelerate oom"
run triage "$F/oom-torchrun.err" --exit 1 --json; expect_json 'j["outcome"] == "oom"'
run triage "$F/oom-accelerate.err" --exit 1 --json; expect_json 'j["outcome"] == "oom"'
test_case "triage caught oom exit 3"
run triage "$F/oom-caught.err" --exit 3 --json; expect_json 'j["outcome"] == "oom" and j["exit"] == 3'
test_case "triage nan"
run triage "$F/nan-python.out" --exit 0; expect_rc 0; expect_out "outcome    nan"; expect_out "bf16"
test_case "triage sigkill"
run triage "$F/sigkill.out" --exit 137 --json; expect_json 'j["outcome"] == "crash" and "137" in j["evidence"]'
test_case "triage usage"
run triage; expect_rc 2
run triage /nonexistent.log; expect_rc 1; expect_err "vramfit: error: /nonexistent.log"
test_case "triage without --exit: an early end claims no exit status it was not given"
run triage "$F/oom-python.out" --json; expect_rc 0
expect_json 'j["outcome"] == "incomplete" and j["exit"] is None'
expect_json '"exit status not given" in j["evidence"] and not any("exited 0" in r for r in j["remedies"])'
run triage "$F/oom-python.out" --exit 0 --json
expect_json 'j["outcome"] == "incomplete" and j["exit"] == 0 and "not given" not in j["evidence"]'

# make_run NAME MODEL: a run workspace by hand, config.yaml from the
# example's low-VRAM config, model_path pointed at models/MODEL.json.
make_run() {
  local r=$TMP/$1
  mkdir -p "$r/overfit/.precomputed" "$r/dataset" "$r/outputs" "$r/logs"
  cp "$TRAINER/data/text.txt" "$r/overfit/.precomputed/sample.txt"
  cp "$TRAINER/configs/t2v_lora_low_vram.yaml" "$r/config.yaml"
  "$VRAMFIT" config set "$r/config.yaml" "model.model_path=\"$TRAINER/models/$2.json\"" \
    "model.text_encoder_path=\"$TRAINER/models\"" >/dev/null
  echo "$r"
}
# wait_for SECONDS CMD: poll a state (the bound only catches a hang)
wait_for() { local n=$(($1 * 10)); shift; until eval "$1"; do n=$((n - 1)); [ $n -gt 0 ] || return 1; sleep 0.1; done; }

# --- the sweep's logic with the stand-in trainer ------------------------------
# tests/unit/fake-trainer.sh prints exact step times (baseline 1.00 s,
# quantization off 0.80 s, adamw 0.60 s; VRAMFIT_FAKE_SAME=1: all 1.00 s) and
# fails a trial with a CUDA OOM on request, so which change wins, the stop
# rules, the patch and the diff of config.yaml are asserted here, never with a
# real trainer's measured step times (they flip on a busy machine).
FAKE="sh tests/unit/fake-trainer.sh {config}"
tune_fake() { run tune "$@" --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "$FAKE" --steps 10 --json --quiet; }

test_case "full sweep (stand-in trainer): quantization off wins, adamw runs out of memory"
R=$(make_run fake-sweep mini)
cp "$R/config.yaml" "$TMP/fake-sweep.orig.yaml"
VRAMFIT_FAKE_OOM=optimizer tune_fake "$R"
expect_rc 0
expect_json '[t["change"] for t in j["trials"]] == ["baseline", "quantization off", "optimizer adamw"]'
expect_json '[t["outcome"] for t in j["trials"]] == ["ok", "ok", "oom"]'
expect_json '[t["step_seconds"] for t in j["trials"][:2]] == [1.0, 0.8]'
expect_json '"CUDA out of memory" in j["trials"][2]["evidence"]'
expect_json 'j["winner"]["trial"] == 2 and j["winner"]["deltas"] == {"acceleration.quantization": "null"}'
expect_json 'j["patched"] is True'
test_case "winner patched: the diff is the winning key only"
d=$(diff "$TMP/fake-sweep.orig.yaml" "$R/config.yaml")
check '[ "$d" = "52c52
<   quantization: \"int8-quanto\"
---
>   quantization: null" ]'
test_case "autotune.log and trial files"
check '[ $(grep -c "  trial " "$R/autotune.log") -eq 3 ]'
check 'grep -q "strategy: sequential (local, 1 GPU per trial)  trials run: 3  wall: .* GPU time: " "$R/autotune.log"'
check 'grep -q "trial 3  change: optimizer adamw  outcome: oom" "$R/autotune.log"'
check '[ -f "$R/overfit/trial-1.yaml" ] && [ -f "$R/logs/trial-3.log" ]'
check 'grep -q "CUDA out of memory" "$R/logs/trial-3.log"'
check '[ -f "$R/overfit/trial-2/outputs/samples/step_000010_0.txt" ]'
check '[ ! -e "$R/outputs/samples" ]'
test_case "history holds every trial"
run history --run "$R" --json
expect_rc 0
expect_json '[t["outcome"] for t in j["trials"]] == ["ok", "ok", "oom"]'
run history
expect_rc 0; expect_out "quantization off"; expect_out "estimator error"

test_case "full sweep (stand-in trainer): adamw adopted on top of quantization off"
R=$(make_run fake-both mini)
cp "$R/config.yaml" "$TMP/fake-both.orig.yaml"
tune_fake "$R"
expect_rc 0
expect_json '[t["outcome"] for t in j["trials"]] == ["ok", "ok", "ok"]'
expect_json 'j["winner"]["trial"] == 3 and j["patched"] is True'
expect_json 'j["winner"]["deltas"] == {"acceleration.quantization": "null", "optimization.optimizer_type": "\"adamw\""}'
d=$(diff "$TMP/fake-both.orig.yaml" "$R/config.yaml" | grep "^[<>]")
check '[ "$d" = "<   optimizer_type: \"adamw8bit\" # adamw | adamw8bit
>   optimizer_type: \"adamw\" # adamw | adamw8bit
<   quantization: \"int8-quanto\"
>   quantization: null" ]'

test_case "stop rule: quantization off no faster (within 2 %) ends the sweep, nothing patched"
R=$(make_run fake-same mini)
cp "$R/config.yaml" "$TMP/fake-same.orig.yaml"
VRAMFIT_FAKE_SAME=1 tune_fake "$R"
expect_rc 0
expect_json '[t["change"] for t in j["trials"]] == ["baseline", "quantization off"]'
expect_json '[t["outcome"] for t in j["trials"]] == ["ok", "ok"]'
expect_json 'j["winner"]["trial"] == 1 and j["patched"] is False'
check 'cmp -s "$TMP/fake-same.orig.yaml" "$R/config.yaml"'

test_case "stop rule: quantization off out of memory ends the sweep, nothing patched"
R=$(make_run fake-qoom mini)
cp "$R/config.yaml" "$TMP/fake-qoom.orig.yaml"
VRAMFIT_FAKE_OOM=quant tune_fake "$R"
expect_rc 0
expect_json '[t["outcome"] for t in j["trials"]] == ["ok", "oom"]'
expect_json 'j["winner"]["trial"] == 1 and j["patched"] is False'
check 'cmp -s "$TMP/fake-qoom.orig.yaml" "$R/config.yaml"'

# a stand-in trainer that ends at once: it reports step 10 and writes the
# sample; a setsid'd sleep holds its output pipes, so vramfit keeps polling
# (up to 1 s) a process group that has nothing left in it
cat > "$TMP/quick.sh" <<'SH'
echo '{"vramfit": {"step": 10, "total_steps": 10, "loss": 0.5, "step_seconds": 0.1}}'
out=$(sed -n 's/^[[:space:]]*output_dir:[[:space:]]*"\{0,1\}\([^"]*\)"\{0,1\}.*/\1/p' "$1" | head -1)
mkdir -p "$out/samples" && echo sample > "$out/samples/step_000010_0.txt"
setsid sleep 3 &
exit 0
SH
test_case "no memory sample (the trainer ended before the first poll): peak unknown, not 0"
R=$(make_run fake-quick mini)
run tune "$R" --max-trials 1 --trainer-dir "$TMP" --trainer-cmd "sh quick.sh {config}" --steps 10 --json --quiet
expect_rc 0
expect_json 'j["trials"][0]["outcome"] == "ok" and j["trials"][0]["peak_bytes"] is None and j["trials"][0]["peak_source"] is None'
expect_json 'j["trials"][0]["peak_polled_bytes"] is None and j["trials"][0]["peak_trainer_bytes"] is None'
check 'grep -q "trial 1  change: baseline  outcome: ok  step time: 0.100 s  peak: -  " "$R/autotune.log"'
run history --run "$R" --json
expect_json 'j["trials"][0]["peak_bytes"] is None and j["trials"][0]["error_pct"] is None'
run tune "$R" --fresh --max-trials 1 --trainer-dir "$TMP" --trainer-cmd "sh quick.sh {config}" --steps 10 --quiet
expect_out_re '^1\* +baseline +ok +100 ms +- +- '
expect_no_out "0 MiB"

# a stand-in trainer that writes the sample and exits 0 but never reports a step
cat > "$TMP/nostep.sh" <<'SH'
echo "loading the model"
out=$(sed -n 's/^[[:space:]]*output_dir:[[:space:]]*"\{0,1\}\([^"]*\)"\{0,1\}.*/\1/p' "$1" | head -1)
mkdir -p "$out/samples" && echo sample > "$out/samples/step_000010_0.txt"
echo "done"
exit 0
SH
test_case "no step reported, exit 0, sample written: incomplete, not ok"
R=$(make_run fake-nostep mini)
run tune "$R" --max-trials 1 --trainer-dir "$TMP" --trainer-cmd "sh nostep.sh {config}" --steps 10 --json --quiet
expect_rc 1
expect_json 'j["baseline_failed"] and j["trials"][0]["outcome"] == "incomplete" and j["trials"][0]["exit"] == 0'
expect_json '"no training step was reported" in j["trials"][0]["evidence"] and j["winner"] is None and j["patched"] is False'
check 'grep -q "trial 1  change: baseline  outcome: incomplete  .*no training step was reported" "$R/autotune.log"'
run tune "$R" --fresh --max-trials 1 --trainer-dir "$TMP" --trainer-cmd "sh nostep.sh {config}" --steps 10
expect_rc 1
expect_out "The baseline failed (incomplete): no training step was reported"
expect_no_out "completed 10 steps"
expect_err "trial 1/1 (baseline): incomplete"
run history --run "$R" --json
expect_json '[t["outcome"] for t in j["trials"]] == ["incomplete"]'

# a stand-in trainer that leaves a grandchild in a session of its own
# (setsid: ending the trainer's process group does not reach it), which
# ignores SIGTERM, then reports its steps, writes the sample and exits 0
cat > "$TMP/setsid.sh" <<'SH'
setsid sh -c 'trap "" TERM; echo $$ > "$VRAMFIT_PIDFILE.tmp"; mv "$VRAMFIT_PIDFILE.tmp" "$VRAMFIT_PIDFILE"; exec sleep 1000' \
  </dev/null >/dev/null 2>&1 &
n=0; while [ ! -s "$VRAMFIT_PIDFILE" ] && [ $n -lt 100000 ]; do n=$((n + 1)); done
echo '{"vramfit": {"step": 10, "total_steps": 10, "loss": 0.5, "step_seconds": 0.1}}'
out=$(sed -n 's/^[[:space:]]*output_dir:[[:space:]]*"\{0,1\}\([^"]*\)"\{0,1\}.*/\1/p' "$1" | head -1)
mkdir -p "$out/samples" && echo sample > "$out/samples/step_000010_0.txt"
exit 0
SH
test_case "a grandchild that called setsid() does not outlive tune"
R=$(make_run fake-setsid mini)
export VRAMFIT_PIDFILE=$TMP/setsid.pid
rm -f "$VRAMFIT_PIDFILE"
run tune "$R" --max-trials 1 --grace 1 --trainer-dir "$TMP" --trainer-cmd "sh setsid.sh {config}" --steps 10 --json --quiet
expect_rc 0
expect_json 'j["trials"][0]["outcome"] == "ok"'
gp=$(cat "$VRAMFIT_PIDFILE" 2>/dev/null)
check '[ -n "$gp" ] && wait_for 30 "! kill -0 $gp 2>/dev/null"'
[ -n "$gp" ] && kill -KILL "$gp" 2>/dev/null # an old build leaves it: do not leak it

if ! have_torch "the example trainer's cases"; then
  finish; exit $?
fi

# --- the example trainer: a real CPU out-of-memory, reverted --------------------
# No assertion here depends on which trial is faster: the run's config already
# has quantization off, so trial 2 (quantization off) is a no-op and trial 3
# (optimizer adamw) runs whatever the measured step times are.
R=$(make_run sweep oom-test)
"$VRAMFIT" config set "$R/config.yaml" lora.rank=64 lora.alpha=64 acceleration.quantization=null >/dev/null
cp "$R/config.yaml" "$TMP/sweep.orig.yaml"

# Calibrate the limit: the peak data size of the baseline config (quantization
# off, adamw8bit), polled from /proc; adamw's fp32 states add 6 bytes per
# trainable parameter on top (models/oom-test.json with lora.rank 64: 8 layers
# x 4 targets x 64 x 1024 = 2.1 M parameters, 12.6 MB), so a limit 6 MiB
# above that peak lets the baseline run and the adamw trial OOM.
"$VRAMFIT" config set "$TMP/sweep.orig.yaml" optimization.steps=3 \
  validation.interval=3 checkpoints.interval=null "output_dir=\"$TMP/calib\"" \
  "data.preprocessed_data_root=\"$R/overfit/.precomputed\"" --dry-run > "$TMP/calib.yaml"
(cd "$TRAINER" && exec $PY scripts/train.py "$TMP/calib.yaml" --disable-progress-bars) >"$TMP/calib.log" 2>&1 &
pid=$! peak=0
while kill -0 $pid 2>/dev/null; do
  while read -r k v _; do
    [ "$k" = "VmData:" ] && { [ "$v" -gt "$peak" ] && peak=$v; break; }
  done < /proc/$pid/status 2>/dev/null
done
wait $pid; calib_rc=$?
test_case "calibration run"
check '[ $calib_rc -eq 0 ] && [ $peak -gt 50000 ]'
LIMIT=$(( peak / 1024 + 6 ))

test_case "example trainer: a trial runs ok, a real out-of-memory is classified and reverted"
run tune "$R" --trainer-dir "$TRAINER" --trainer-cmd "$CMD" --steps 10 --memory-limit $LIMIT --json
expect_rc 0
expect_json '[t["change"] for t in j["trials"]] == ["baseline", "quantization off", "optimizer adamw"]'
expect_json '[t["outcome"] for t in j["trials"]] == ["ok", "no-op", "oom"]'
expect_json 'j["trials"][0]["step_seconds"] > 0 and j["trials"][0]["peak_bytes"] > 0'
expect_json '"DefaultCPUAllocator: can'"'"'t allocate memory" in j["trials"][2]["evidence"]'
expect_json 'j["winner"]["trial"] == 1 and j["patched"] is False'
check 'cmp -s "$TMP/sweep.orig.yaml" "$R/config.yaml"'
check 'grep -q "trial 2  change: quantization off  outcome: no-op" "$R/autotune.log"'
check 'grep -q "trial 3  change: optimizer adamw  outcome: oom" "$R/autotune.log"'
check 'grep -q "DefaultCPUAllocator" "$R/logs/trial-3.log"'
check '[ -f "$R/overfit/trial-1/outputs/samples/step_000010_0.txt" ]'
check '[ ! -e "$R/outputs/samples" ]'
run history --run "$R" --json
expect_rc 0
expect_json '[(t["trial"], t["outcome"]) for t in j["trials"]] == [(1, "ok"), (3, "oom")]'   # a no-op is not recorded

# --- SIGTERM, then SIGINT during a trial, then resume ---------------------------
R2=$(make_run interrupt mini)
cp "$R2/config.yaml" "$TMP/int.orig.yaml"
"$VRAMFIT" tune "$R2" --trainer-dir "$TRAINER" --trainer-cmd "$CMD" --steps 200 --max-trials 2 \
  >"$TMP/term.out" 2>"$TMP/term.err" &
vf=$!
wait_for 300 'grep -q "\"step\"" "$R2/logs/trial-1.log" 2>/dev/null'
kill -TERM $vf
wait $vf; term_rc=$?
test_case "SIGTERM during trial 1: exit 1, no trainer alive, config untouched, nothing recorded"
check '[ $term_rc -eq 1 ]'
check 'grep -q "interrupted during trial 1" "$TMP/term.err"'
check 'wait_for 60 "! pgrep -f \"train.py $R2/overfit\" >/dev/null"'
check 'cmp -s "$TMP/int.orig.yaml" "$R2/config.yaml"'
run history --run "$R2" --json
expect_json 'j["trials"] == []'
"$VRAMFIT" tune "$R2" --trainer-dir "$TRAINER" --trainer-cmd "$CMD" --steps 200 --max-trials 2 \
  >"$TMP/int.out" 2>"$TMP/int.err" &
vf=$!
wait_for 300 'grep -q "\"step\"" "$R2/logs/trial-2.log" 2>/dev/null'
kill -INT $vf
wait $vf; int_rc=$?
test_case "interrupted: exit 1, no trainer alive, config untouched, trial 1 recorded"
check '[ $int_rc -eq 1 ]'
check 'grep -q "interrupted during trial 2" "$TMP/int.err"'
check 'wait_for 60 "! pgrep -f \"train.py $R2/overfit\" >/dev/null"'
check 'cmp -s "$TMP/int.orig.yaml" "$R2/config.yaml"'
run history --run "$R2" --json
expect_json '[t["trial"] for t in j["trials"]] == [1]'
test_case "the next tune resumes"
run tune "$R2" --trainer-dir "$TRAINER" --trainer-cmd "$CMD" --steps 200 --max-trials 2 --json
expect_rc 0
expect_json 'len(j["trials"]) == 2 and j["trials"][1]["outcome"] == "ok"'
expect_err "trial 1/2 (baseline): ok (from history)"
check 'grep -q "resumed from history" "$R2/autotune.log"'

# --- containment: 10 MB line, never ending, TERM-ignoring grandchild ---------
R3=$(make_run contain mini)
cat > "$TMP/bigline.sh" <<'SH'
head -c 10000000 /dev/zero | tr '\0' x; echo
echo "Step 50/50 - Loss: 0.5, LR: 1e-4, Time/Step: 0.10s, Total Time: 0h 0m"
exit 0
SH
test_case "a 10 MB line"
run tune "$R3" --trainer-dir "$TMP" --trainer-cmd "sh bigline.sh {config}" --json --quiet
expect_rc 1
expect_json 'j["baseline_failed"] and j["trials"][0]["outcome"] == "incomplete"'
check '[ $(stat -c %s "$R3/logs/trial-1.log") -lt 200000 ]'
check 'grep -q "line cut by vramfit" "$R3/logs/trial-1.log"'

cat > "$TMP/hang.sh" <<'SH'
trap '' TERM
sleep 1000 &
echo $! > "$PIDFILE"
echo "Step 1/50 - Loss: 0.5, LR: 1e-4, Time/Step: 0.10s, Total Time: calculating..."
while :; do sleep 1; done
SH
test_case "never ends: timeout, grandchild ignoring TERM is killed"
export VRAMFIT_PIDFILE=$TMP/hang.pid
sed -i 's/\$PIDFILE/$VRAMFIT_PIDFILE/' "$TMP/hang.sh"
rm -f "$TMP/hang.pid"
run tune "$R3" --fresh --trainer-dir "$TMP" --trainer-cmd "sh hang.sh {config}" --timeout 5 --grace 1 --json --quiet
expect_rc 1
expect_json 'j["trials"][0]["outcome"] == "timeout"'
check 'gp=$(cat "$TMP/hang.pid"); [ -n "$gp" ] && wait_for 60 "! kill -0 $gp 2>/dev/null"'
test_case "stalled"
rm -f "$TMP/hang.pid"
run tune "$R3" --fresh --trainer-dir "$TMP" --trainer-cmd "sh hang.sh {config}" --stall 1 --grace 1 --json --quiet
expect_json 'j["trials"][0]["outcome"] == "stalled"'
check 'gp=$(cat "$TMP/hang.pid"); [ -n "$gp" ] && wait_for 60 "! kill -0 $gp 2>/dev/null"'

test_case "predicted OOM: skipped before spending GPU time, unless --no-skip"
R4=$(make_run predict mini)
: > "$TMP/ltx-2-19b-dev.safetensors"   # the self-check wants the file to exist
"$VRAMFIT" config set "$R4/config.yaml" "model.model_path=\"$TMP/ltx-2-19b-dev.safetensors\"" >/dev/null
run tune "$R4" --gpu rtx-5090 --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "sh tests/unit/fake-trainer.sh {config}" --json --quiet
expect_rc 0
expect_json 'j["trials"][0]["outcome"] == "ok" and j["trials"][0]["predicted_peak_bytes"] > 20 * 2**30'
expect_json 'j["trials"][1]["outcome"] == "skipped" and j["trials"][1]["evidence"].startswith("predicted OOM: ")'
expect_json 'len(j["trials"]) == 2 and j["patched"] is False'
# issue 30: the prediction is nvidia-smi's memory.used, the figure the trainer's "Peak GPU memory" line shows
# (a GPU visible: the fake NVML's)
VRAMFIT_NVML_LIB=$VF_BUILD_DIR/helpers/libfakenvml.so VF_FAKE_NVML="dev=NVIDIA GeForce RTX 5090:32607" \
  VRAMFIT_FAKE_PEAK_GB=25.5 run tune "$R4" --fresh --max-trials 1 --gpu rtx-5090 --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "sh tests/unit/fake-trainer.sh {config}" --json --quiet
expect_json 'j["trials"][0]["predicted_peak_measure"] == "nvidia-smi memory.used" and j["trials"][0]["peak_trainer_bytes"] == int(25.5 * 2**30)'
expect_json 'abs(j["trials"][0]["trainer_peak_vs_predicted"] - 25.5 * 2**30 / j["trials"][0]["predicted_peak_bytes"]) < 1e-9'
expect_json 'j["host_memory"] is False and j["predicted"][0]["measured_peak_bytes"] == int(25.5 * 2**30)'
expect_json 'abs(j["predicted"][0]["peak_error_pct"] - (j["predicted"][0]["peak_bytes"] / (25.5 * 2**30) - 1) * 100) < 1e-6'
run history --run "$R4" --json
expect_json 'j["trials"][0]["gpu"] == "NVIDIA GeForce RTX 5090 x 1" and j["trials"][0]["error_pct"] is not None'

test_case "--gpu SPEC with no GPU visible: host memory measured, not compared with the GPU prediction, not recorded as that GPU"
run tune "$R4" --fresh --max-trials 1 --gpu rtx-5090 --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "sh tests/unit/fake-trainer.sh {config}" --json --quiet
expect_rc 0
expect_json 'j["host_memory"] is True and j["trials"][0]["predicted_peak_bytes"] > 20 * 2**30 and j["trials"][0]["trainer_peak_vs_predicted"] is None'
expect_json '(lambda p: p["peak_bytes"] > 20 * 2**30 and p["measured_peak_bytes"] is None and p["peak_error_pct"] is None)(j["predicted"][0])'
run history --run "$R4" --json
expect_json 'j["trials"][0]["gpu"] == "cpu (no GPU visible; --gpu rtx-5090)" and j["trials"][0]["predicted_peak_bytes"] is None'
expect_json 'j["trials"][0]["error_pct"] is None and j["estimator"]["trials_compared"] == 0'
run tune "$R4" --fresh --max-trials 1 --gpu rtx-5090 --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "sh tests/unit/fake-trainer.sh {config}" --quiet
expect_rc 0
expect_out "no GPU visible: measured host memory, not compared with the GPU prediction"
expect_out_re '^1 +baseline +fits +ok +[0-9.]+ GiB +- +- '
run tune "$R4" --fresh --no-skip --gpu rtx-5090 --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "sh tests/unit/fake-trainer.sh {config}" --json --quiet
expect_json 'j["trials"][1]["outcome"] == "ok" and j["trials"][1]["predicted_peak_bytes"] > 32 * 2**30'

test_case "GPUs from NVML: tier, label, GPU memory polling, --try-no-ckpt on the 80GB+ tier"
R5=$(make_run nvml mini)
VRAMFIT_NVML_LIB=$VF_BUILD_DIR/helpers/libfakenvml.so VF_FAKE_NVML="dev=NVIDIA H200:143771;procfile=$TMP/nvml-procs" \
  VRAMFIT_FAKE_GPU="$TMP/nvml-procs 3072" run tune "$R5" --try-no-ckpt --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "sh tests/unit/fake-trainer.sh {config}" --json --quiet
expect_rc 0
expect_json '[t["change"] for t in j["trials"]] == ["baseline", "quantization off", "optimizer adamw", "gradient checkpointing off"]'
# the trainer's worker is listed by the fake NVML with 3072 MiB (another process with 1000 MiB)
expect_json 'all(t["peak_bytes"] == 3072 * 2**20 and t["peak_source"] == "nvml-process" for t in j["trials"])'
check 'grep -q "peak: 3.00 GiB (nvml-process)" "$R5/autotune.log"'
run history --run "$R5" --json
expect_json 'j["trials"][0]["gpu"] == "NVIDIA H200 x 1"'

test_case "self-check before launch: a config error costs no trial"
R6=$(make_run selfcheck mini)
"$VRAMFIT" config set "$R6/config.yaml" 'model.text_encoder_path="/nonexistent/gemma"' >/dev/null
run tune "$R6" --trainer-dir "$TRAINER" --trainer-cmd "$CMD" --json --quiet
expect_rc 1
expect_json 'j["baseline_failed"] and j["trials"][0]["outcome"] == "config-error" and "model.text_encoder_path" in j["trials"][0]["evidence"]'
expect_json 'j["trials"][0]["exit"] is None and len(j["remedies"]) > 0'
check '[ ! -e "$R6/logs/trial-1.log" ]'

test_case "usage and errors"
run tune; expect_rc 2
run tune "$TMP/nope"; expect_rc 1; expect_err "no such run directory"
run tune "$R3" --try-no-ckpt --tier "32GB tier" --trainer-dir "$TMP" --trainer-cmd "sh hang.sh {config}"
expect_rc 2; expect_err "only allowed on the 80GB+ tier"
run tune "$R3" --fresh --trainer-dir "$TMP" --trainer-cmd "/nonexistent/train {config}"
expect_rc 1; expect_err "cannot run '/nonexistent/train'"
finish
