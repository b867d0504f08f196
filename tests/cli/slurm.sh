#!/usr/bin/env bash
# slurm.sh - vramfit on a real Slurm: a private single-node cluster
# (tests/helpers/slurm-cluster.sh: own config, state, spool and ports under a
# temp dir, localhost, two fake h200 GPUs, jobcomp/filetxt) started here and
# stopped by PID on exit. Cases: probe --slurm; a --slurm sweep of the
# stand-in trainer with 2 slots (same winner as the local sweep, every trial
# recorded), an out-of-memory trial, a task killed by Slurm's time limit, an
# interrupt (scancel: no job left in squeue) and the resume; a --slurm sweep
# of the example trainer (CPU PyTorch) against the local sweep; run --slurm
# with the example trainer: a job Slurm requeues (scontrol requeue, as after
# a preemption) resumes from the newest checkpoint; plan --slurm
# and its launch.sbatch run by sbatch --wait with a stand-in launcher, also
# for a run path holding a space, ', $(...), a backtick and # (sbatch
# --test-only and --wait accept it, its logs land in RUN/logs).
# Without root or the Slurm packages it says why and skips (CI has both).
. "$(dirname "$0")/lib.sh"
CLUSTER=$VF_SOURCE_DIR/tests/helpers/slurm-cluster.sh
if ! why=$("$CLUSTER" why-not); then
  echo "skip: slurm tests: $why"
  finish; exit $?
fi
CL=$(mktemp -d /tmp/vf-slurm.XXXXXX)
trap '"$CLUSTER" stop "$CL"; rm -rf "$CL" "$TMP"' EXIT
if ! "$CLUSTER" start "$CL" >"$TMP/cluster.log" 2>&1; then
  cat "$TMP/cluster.log" >&2
  echo "FAIL: the private Slurm cluster did not start" >&2
  exit 1
fi
export SLURM_CONF=$CL/etc/slurm.conf
export XDG_DATA_HOME=$TMP/xdg VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI=/nonexistent/nvidia-smi
unset SBATCH_PARTITION SBATCH_ACCOUNT SBATCH_QOS SBATCH_TIMELIMIT
# no job of ours left in the queue (pending, running or completing)
queue_empty() { [ -z "$(squeue -h -n vramfit-tune 2>/dev/null)" ]; }
# wait_for SECONDS CMD: poll a state (the bound only catches a hang)
wait_for() { local n=$(($1 * 10)); shift; until eval "$1"; do n=$((n - 1)); [ $n -gt 0 ] || return 1; sleep 0.1; done; }

test_case "probe --slurm: the partition, its fake GPUs and their tier"
run probe --slurm
expect_rc 0
expect_out_re 'debug +1 +2 h200 +140 GiB'
expect_out "80GB+ tier"
run probe --slurm --json
expect_json 'j["source"] == "slurm" and j["partitions"][0]["name"] == "debug" and j["partitions"][0]["gpus_per_node"] == 2'
expect_json 'j["partitions"][0]["gpu_type"] == "h200" and j["partitions"][0]["tier"] == "80GB+ tier"'

# --- the stand-in trainer (tests/unit/fake-trainer.sh) -----------------------
FAKE="sh tests/unit/fake-trainer.sh {config}"
fake_run() {
  local r=$TMP/$1
  mkdir -p "$r/overfit/.precomputed"
  cat > "$r/config.yaml" <<'YAML'
# a run config (test)
optimization:
  steps: 2000
  batch_size: 1
  gradient_accumulation_steps: 1
  optimizer_type: "adamw8bit" # adamw | adamw8bit
  enable_gradient_checkpointing: true
acceleration:
  quantization: "int8-quanto"
data:
  preprocessed_data_root: '/somewhere'
output_dir: "outputs"
YAML
  echo "$r"
}
tune_fake() { run tune "$@" --no-check --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "$FAKE" --json; }

test_case "--slurm sweep, 2 slots: round 1 at once, round 2 the combination; same winner as the local sweep"
RL=$(fake_run local); RS=$(fake_run slurm)
tune_fake "$RL"
expect_rc 0
export WANT_DELTAS; WANT_DELTAS=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["winner"]["deltas"], sort_keys=True))')
tune_fake "$RS" --slurm --max-parallel 2
expect_rc 0
expect_json '[t["change"] for t in j["trials"]] == ["baseline", "quantization off", "optimizer adamw", "combination: quantization off + optimizer adamw"]'
expect_json 'all(t["outcome"] == "ok" for t in j["trials"]) and j["patched"]'
expect_json 'json.dumps(j["winner"]["deltas"], sort_keys=True) == __import__("os").environ["WANT_DELTAS"]'
check 'grep -q "strategy: parallel (slurm, 2 slots, 1 GPU per trial)  trials run: 4" "$RS/autotune.log"'
check '[ $(grep -c "  trial " "$RS/autotune.log") -eq 4 ]'
check 'grep -q "slurm: job [0-9]*_1 on node1: COMPLETED, exit status 0" "$RS/logs/trial-2.log"'
check 'scontrol -o show job | grep "JobName=vramfit-tune" | grep -q "TresPerNode=gres:gpu:1"'
check 'grep -q "ArrayTaskId=2" "$CL/log/jobcomp.txt"'
check 'cmp -s <(sed -n "/^optimization/,\$p" "$RL/config.yaml") <(sed -n "/^optimization/,\$p" "$RS/config.yaml")'
run history --run "$RS" --json
expect_json 'len(j["trials"]) == 4'

test_case "--slurm: an out-of-memory trial stops the sweep by its rule"
R=$(fake_run oom)
VRAMFIT_FAKE_OOM=quant tune_fake "$R" --slurm --max-parallel 2
expect_rc 0
expect_json 'j["trials"][1]["outcome"] == "oom" and "CUDA out of memory" in j["trials"][1]["evidence"]'
expect_json 'j["winner"]["trial"] == 1 and not j["patched"]'
check 'grep -q "changes after trial 2 (quantization off) are not adopted" "$R/autotune.log"'

test_case "--slurm: a task killed by Slurm's time limit is a timeout"
R=$(fake_run timelimit)
VRAMFIT_FAKE_HANG=quant tune_fake "$R" --slurm --max-parallel 2 --time-per-trial 1
expect_rc 0
expect_json 'j["trials"][1]["outcome"] == "timeout"'
expect_json 'j["trials"][0]["outcome"] == "ok" and j["trials"][2]["outcome"] == "ok"'
check 'grep -q "TIMEOUT" "$R/logs/trial-2.log"'
check 'queue_empty'

test_case "--slurm: a job script that dies before its exit status is a failed trial that names Slurm's output"
R=$(fake_run killjob)
VRAMFIT_FAKE_KILLJOB=quant tune_fake "$R" --slurm --max-parallel 2
expect_rc 0
expect_json 'j["trials"][1]["outcome"] != "ok" and "left no exit status" in j["trials"][1]["evidence"]'
check 'f=$(printf "%s" "$out" | python3 -c "import json,re,sys; print(re.search(r\"logs/slurm-[0-9_]+[.]out\", json.load(sys.stdin)[\"trials\"][1][\"evidence\"]).group(0))") && [ -f "$R/$f" ]'
check 'queue_empty'

test_case "--slurm: SIGINT cancels the array (no job left in squeue), config untouched; the re-run resumes"
R=$(fake_run interrupt)
cp "$R/config.yaml" "$TMP/int.orig.yaml"
VRAMFIT_FAKE_HANG=optimizer VRAMFIT_FAKE_COUNT=$R/count "$VRAMFIT" tune "$R" --slurm --max-parallel 3 --no-check \
  --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "$FAKE" >"$TMP/int.out" 2>"$TMP/int.err" &
vf=$!
# the state the interrupt needs: the hanging trial runs and the other two are recorded
wait_for 300 '[ -s "$R/count.pid" ] && [ $(grep -c "  trial " "$R/autotune.log" 2>/dev/null || echo 0) -ge 2 ]'
kill -INT $vf
wait $vf; int_rc=$?
check '[ $int_rc -eq 1 ]'
check 'grep -q "interrupted during trial 3" "$TMP/int.err"'
check 'queue_empty'
check 'cmp -s "$TMP/int.orig.yaml" "$R/config.yaml"'
check 'p=$(cat "$R/count.pid"); wait_for 60 "! kill -0 $p 2>/dev/null"'
run history --run "$R" --json
# sorted: a round's trials are recorded as they end, in either order
expect_json 'sorted(t["trial"] for t in j["trials"]) == [1, 2]'
tune_fake "$R" --slurm --max-parallel 2
expect_rc 0
expect_err "trial 1/5 (baseline): ok (from history)"
expect_json 'len(j["trials"]) == 4 and j["patched"]'
check 'grep -q "resumed from history" "$R/autotune.log"'

test_case "usage"
run tune "$R" --partition debug; expect_rc 2; expect_err "go with --slurm"
run tune "$R" --slurm --parallel 2; expect_rc 2
run tune "$R" --slurm --max-parallel 0; expect_rc 2
run tune "$R" --slurm --timeout 5; expect_rc 2; expect_err "--time-per-trial"

# --- plan --slurm: launch.sbatch through sbatch --wait ------------------------
test_case "plan --slurm writes a launch.sbatch that sbatch --wait runs with a stand-in launcher"
TD="$VF_SOURCE_DIR/tests/fixtures/ltx-trainer"
mkdir -p "$TMP/models/gemma-3-12b-it"
echo '{"model_type": "gemma3"}' >"$TMP/models/gemma-3-12b-it/config.json"
cp "$VF_SHARED_DIR/fixtures/models/lora_weights_step_00050.safetensors" "$TMP/models/ltx-2-19b-dev.safetensors"
HOME=$TMP run plan --trainer-dir "$TD" --model "$TMP/models/ltx-2-19b-dev.safetensors" \
  --text-encoder "$TMP/models/gemma-3-12b-it" --gpu h200:2 --workspace "$TMP/ws" --run-name sb --slurm --partition debug --json
expect_rc 0
expect_json 'j["slurm"]["nodes"] == 1 and j["slurm"]["gpus_per_node"] == 2 and j["slurm"]["time_limit_s"] > 0'
S=$TMP/ws/sb/launch.sbatch
check 'grep -q "^#SBATCH --gres=gpu:2$" "$S" && grep -q "^#SBATCH --time=" "$S" && grep -q "^#SBATCH --partition=debug$" "$S"'
run check "$TMP/ws/sb"
expect_rc 0
cat > "$TMP/standin.sh" <<'SH'
#!/bin/sh
# stand-in for "uv run accelerate launch": check the arguments, say what it got
while [ $# -gt 0 ]; do
  case "$1" in
    --num_machines) nm=$2; shift;; --machine_rank) rank=$2; shift;; --main_process_ip) ip=$2; shift;;
    --num_processes) np=$2; shift;; *.yaml) cfg=$1;;
  esac; shift
done
[ -f "$cfg" ] && [ -n "$ip" ] && [ "$rank" = "$SLURM_NODEID" ] || { echo "standin: bad arguments"; exit 3; }
echo "standin: machines=$nm rank=$rank ip=$ip processes=$np gpus=$CUDA_VISIBLE_DEVICES config=$cfg"
SH
VRAMFIT_LAUNCH="sh $TMP/standin.sh" sbatch --wait "$S" >"$TMP/sb.out" 2>&1; sb_rc=$?
check '[ $sb_rc -eq 0 ]'
check 'grep -q "standin: machines=1 rank=0 ip=node1 processes=2 gpus=0,1 config=$TMP/ws/sb/config.yaml" "$TMP"/ws/sb/logs/train-*-node0.log'
check 'ls "$TMP"/ws/sb/logs/slurm-*.out >/dev/null'
test_case "a run path with a space, ', \$(...), a backtick and #: sbatch --test-only accepts launch.sbatch, its log lands in RUN/logs"
WQ="$TMP/ws a'b\$(touch PWNED)c\`touch PWNED2\`d #e"
mkdir -p "$WQ"
HOME=$TMP run plan --trainer-dir "$TD" --model "$TMP/models/ltx-2-19b-dev.safetensors" \
  --text-encoder "$TMP/models/gemma-3-12b-it" --gpu h200:2 --workspace "$WQ" --run-name sb --slurm --partition debug
expect_rc 0
SQ=$WQ/sb/launch.sbatch
sbatch --test-only "$SQ" >"$TMP/sbq.out" 2>&1; sbq_rc=$?
check '[ $sbq_rc -eq 0 ] && ! grep -qi "error" "$TMP/sbq.out"'
run check "$WQ/sb"
expect_rc 0
VRAMFIT_LAUNCH="sh $TMP/standin.sh" sbatch --wait "$SQ" >"$TMP/sbq.out" 2>&1; sbq_rc=$?
check '[ $sbq_rc -eq 0 ]'
check 'ls "$WQ"/sb/logs/slurm-*.out >/dev/null && grep -q "config=$WQ/sb/config.yaml" "$WQ"/sb/logs/train-*-node0.log'
check '[ ! -e PWNED ] && [ ! -e PWNED2 ] && [ ! -e "$TMP/ws/sb/PWNED" ]'
test_case "check: a launch.sbatch without GPUs fails"
sed -i '/^#SBATCH --gres/d' "$S"
run check "$TMP/ws/sb"
expect_rc 1
expect_out "launch.sbatch: sbatch: #SBATCH --gres=gpu:N (N >= 1) missing"

# --- vramfit run --slurm: the training as Slurm jobs ----------------------------
test_case "run --slurm: each launch a Slurm job of the plan's 2 GPUs; an OOM recovered (adamw8bit), then finished"
R=$TMP/ws/sb
VRAMFIT_FAKE_OOM=optimizer run run "$R" --from train --slurm --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "$FAKE" \
  --steps 5 --quiet
expect_rc 0
check 'python3 -c "import json,sys; j=json.load(open(\"$R/run.json\")); sys.exit(0 if [a[\"outcome\"] for a in j[\"attempts\"]] == [\"oom\", \"ok\"] and j[\"recoveries\"][0][\"set\"] == {\"optimization.optimizer_type\": \"\\\"adamw8bit\\\"\"} and j[\"stage\"] == \"done\" else 1)"'
check 'grep -q "CUDA out of memory" "$R/logs/train-1.log" && grep -q "Step 5/5" "$R/logs/train-2.log"'
check 'grep -q "^  optimizer_type: \"adamw8bit\"" "$R/config.yaml"'
check 'queue_empty'

# --- the example trainer: local sweep vs --slurm with 2 slots -------------------
PY=/usr/bin/python3
if ! have_torch "the example trainer's cases"; then
  finish; exit $?
fi
TRAINER=$VF_SOURCE_DIR/examples/ltx-mini-trainer
export OMP_NUM_THREADS=1
ex_run() {
  local r=$TMP/$1
  mkdir -p "$r/overfit/.precomputed"
  cp "$TRAINER/data/text.txt" "$r/overfit/.precomputed/sample.txt"
  cp "$TRAINER/configs/t2v_lora_low_vram.yaml" "$r/config.yaml"
  "$VRAMFIT" config set "$r/config.yaml" "model.model_path=\"$TRAINER/models/mini.json\"" \
    "model.text_encoder_path=\"$TRAINER/models\"" >/dev/null
  echo "$r"
}
# The real trainer's step times are measured on a shared CPU: which trial is
# faster can flip with the machine's load (the sequential sweep's trials run
# at different times, a round's at the same time), so the two winners and the
# strategies' cost are printed as measurements; the fake trainer's cases
# above assert the same winner where step times are exact.
# Slurm's own requeue (as after a preemption or a node failure) reruns the
# job script: with --slurm, model.load_checkpoint names the checkpoints
# directory, so the rerun takes the newest checkpoint (60, written while the
# job ran) and not the one the launch began from (20).
test_case "run --slurm: a job Slurm requeues (scontrol requeue) resumes from the newest checkpoint written meanwhile"
CMD="$PY scripts/train.py {config} --disable-progress-bars"
RQ=$(ex_run requeue)
echo "{\"trainer_dir\": \"$TRAINER\", \"gpus\": {\"count\": 1}}" >"$RQ/plan.json"
"$VRAMFIT" config set "$RQ/config.yaml" "output_dir=\"$RQ/outputs\"" checkpoints.interval=20 validation.interval=null \
  'optimization.optimizer_type="adamw"' >/dev/null
VRAMFIT_EXAMPLE_OOM_AT="30:optimization.optimizer_type=adamw" VRAMFIT_EXAMPLE_HOLD_AT=60 "$VRAMFIT" run "$RQ" \
  --from train --slurm --trainer-dir "$TRAINER" --trainer-cmd "$CMD" --steps 100 --quiet >"$TMP/rq.out" 2>"$TMP/rq.err" &
pid=$!
# Two Slurm jobs start PyTorch before the hold (attempt 1 to its OOM at 30,
# attempt 2 from 20 to 60), so how long it takes is the machine's load. A
# requeue before the hold would let the rerun hold at 60 for good and the
# run would never end: the bound only catches a hang (it was 120 s), and
# without the hold the run is stopped (Ctrl-C: scancel), not requeued.
t0=$SECONDS
held=0; wait_for 600 "grep -qs \"holding at step 60\" \"$RQ/logs/train-2.log\"" && held=1
echo "  measured: the hold at step 60 came $((SECONDS - t0)) s after the launch"
check '[ $held = 1 ]'
check 'grep -qF "load_checkpoint: \"$RQ/outputs/checkpoints\"" "$RQ/config.yaml"'
job=$(squeue -h -n vramfit-tune -t RUNNING -o %i | head -1)
if [ $held = 1 ]; then
  check '[ -n "$job" ] && scontrol requeue "$job"'
  # A requeued job waits for its begin time (about 2 minutes): one second
  # from now instead. Not "now": the requeue's kill revokes the job's
  # launch credentials issued up to that second (slurmd compares whole
  # seconds), so a rerun dispatched within the same second is refused
  # ("already killed, do not launch batch job") and ends FAILED, as it did
  # on a loaded machine.
  scontrol update JobId="$job" StartTime=now+1 >/dev/null 2>&1 || true
else
  kill -INT $pid
fi
rc=0; wait $pid || rc=$?
expect_rc 0
if [ $rc != 0 ]; then # what the run said, what the job wrote, what Slurm recorded
  { echo "--- run --slurm's stderr"; cat "$TMP/rq.err"; echo "--- logs/train-2.log, last lines"
    tail -n 15 "$RQ/logs/train-2.log"; echo "--- the job-completion records"
    sed -E 's/.*(JobId=[0-9]+).*(JobState=[A-Z_]+).*(StartTime=[^ ]+ EndTime=[^ ]+).*(ExitCode=[^ ]+).*/\1 \2 \3 \4/' \
      "$CL/log/jobcomp.txt"; echo "--- slurmd's errors"; grep "error" "$CL/log/slurmd.log" | grep -v "pmix\|MPI"
    for f in "$RQ"/logs/slurm-*.out; do echo "--- $f"; tail -n 5 "$f"; done; } >&2
fi
check 'grep -q "Resuming from checkpoint lora_weights_step_00060.safetensors at step 60" "$RQ/logs/train-2.log"'
check 'python3 -c "import json,sys; j=json.load(open(\"$RQ/run.json\")); a=j[\"attempts\"]; sys.exit(0 if [x[\"outcome\"] for x in a] == [\"oom\", \"ok\"] and a[1][\"resumed_from\"].endswith(\"lora_weights_step_00020.safetensors\") and j[\"stage\"] == \"done\" else 1)"'
check '[ -f "$RQ/outputs/checkpoints/lora_weights_step_00100.safetensors" ]'
check 'queue_empty'

test_case "example trainer: a --slurm sweep with 2 slots runs every trial through Slurm and records it"
EL=$(ex_run ex-local); ES=$(ex_run ex-slurm)
CMD="$PY scripts/train.py {config} --disable-progress-bars"
run tune "$EL" --trainer-dir "$TRAINER" --trainer-cmd "$CMD" --steps 30 --json --quiet
expect_rc 0
WANT_DELTAS=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["winner"]["deltas"], sort_keys=True))')
run tune "$ES" --slurm --max-parallel 2 --trainer-dir "$TRAINER" --trainer-cmd "$CMD" --steps 30 --json --quiet
expect_rc 0
expect_json 'all(t["outcome"] in ("ok", "no-op") for t in j["trials"]) and len(j["trials"]) >= 3'
SLURM_DELTAS=$(printf '%s' "$out" | python3 -c 'import json,sys; w=json.load(sys.stdin)["winner"]; print(json.dumps(w["deltas"] if w else None, sort_keys=True))')
echo "  measured: winner of the local sweep: $WANT_DELTAS; of the --slurm sweep: $SLURM_DELTAS ($([ "$WANT_DELTAS" = "$SLURM_DELTAS" ] && echo same || echo different))"
run history --run "$ES" --json
expect_json 'len(j["trials"]) == len([l for l in open("'"$ES"'/autotune.log") if "  trial " in l])'
# figures, not assertions (tests never assert timings): the strategies' cost
grep -h "strategy:" "$EL/autotune.log" "$ES/autotune.log" | sed 's/^/  measured: /'
finish
