#!/usr/bin/env bash
# gpu-proof.sh [OUT_DIR] [--budget SECONDS] - prove vramfit's GPU paths on
# real hardware in one call, and measure new ground truth; on a machine
# without an NVIDIA GPU, say so and run the CPU-only parts.
#
# Checks, each timed, each with a result (passed | failed | skipped + why):
#   build             vramfit (Release) in build-release/ if needed, or $VRAMFIT
#   probe-fakes       CPU: NVML vs nvidia-smi paths on the fake NVML and the
#                     nvidia-smi stand-in (tests/helpers), 2 GPUs
#   estimate-configs  CPU: `vramfit estimate` on every ground-truth configuration
#   measure-selftest  CPU: bench/groundtruth/measure.py compiles, its self-test
#   tune-cpu          CPU: a sweep of examples/ltx-mini-trainer with a real
#                     CPU out-of-memory (RLIMIT_DATA); only where no CUDA device
#   probe-gpu         GPU: the same comparison on the real NVML and nvidia-smi,
#                     CUDA_VISIBLE_DEVICES by index and UUID prefix, MIG state
#   tune-cuda         GPU: the sweep on CUDA with a real CUDA out-of-memory
#                     (VRAMFIT_EXAMPLE_CUDA_MEMORY_CAP), NVML per-process peak
#                     vs the trainer's max_memory_reserved + the CUDA context
#   groundtruth       GPU: measure.py over the configurations that fit the time left
#   estimate-errors   GPU: the estimate against each measured record
#   gpu-clean         GPU: no process of this run left on the GPU
# Writes OUT_DIR/gpu-proof.json, gpu-proof.md, gpu-proof.log,
# groundtruth.jsonl (when measured) and artifacts.tar.gz (trial logs,
# configs, estimates): five files, what the device machine sends back.
# Exit 0 when no check failed (skipped ones are not failures), 1 otherwise,
# 2 on a usage error.
#
# On a lent GPU machine: build here (make gpu-proof), carry build-release/,
# run `scripts/gpu-proof.sh "$OUT"`: a carried build is used as it is (its
# cJSON/libyaml/SQLite libraries in build-release/lib/), OUT_DIR holds the
# five files to bring back, and the default budget keeps the call under 8
# minutes of wall time.
#
# Environment: VRAMFIT (a built binary: no build), PYTHON (the python with
# PyTorch; default the first of python3, /usr/bin/python3 that imports torch
# and yaml), VRAMFIT_NVML_LIB / VRAMFIT_NVIDIA_SMI (the GPU checks' NVML and
# nvidia-smi, as vramfit reads them), VF_PROOF_FAKE_NVML / VF_PROOF_FAKE_SMI
# (the fakes probe-fakes uses; default the built helper and tests/helpers).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
usage() { sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//' >&2; }
OUT="" BUDGET=420
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) [ $# -ge 2 ] || { usage; exit 2; }; BUDGET=$2; shift 2 ;;
    --budget=*) BUDGET=${1#*=}; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "gpu-proof.sh: unknown option '$1'" >&2; usage; exit 2 ;;
    *) [ -z "$OUT" ] || { echo "gpu-proof.sh: one OUT_DIR only" >&2; exit 2; }; OUT=$1; shift ;;
  esac
done
case "$BUDGET" in ''|*[!0-9]*) echo "gpu-proof.sh: --budget '$BUDGET': a whole number of seconds" >&2; exit 2 ;; esac
[ "$BUDGET" -ge 30 ] || { echo "gpu-proof.sh: --budget $BUDGET: at least 30 s" >&2; exit 2; }
OUT=${OUT:-$ROOT/build-release/gpu-proof}
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
PY3=${PYTHON3:-python3}          # the standard library is enough here
CHECK="$PY3 $ROOT/scripts/gpu-proof-check.py"
MEASURE=$ROOT/bench/groundtruth/measure.py
EX=$ROOT/examples/ltx-mini-trainer
WORK=$(mktemp -d /tmp/vf-gpu-proof.XXXXXX)
LOG=$OUT/gpu-proof.log RESULTS=$WORK/results.jsonl
: >"$LOG"; : >"$RESULTS"
rm -f "$OUT/gpu-proof.json" "$OUT/gpu-proof.md" "$OUT/groundtruth.jsonl" "$OUT/artifacts.tar.gz"
T0=$(date +%s.%N)
CUR=""          # the running step (a `timeout` whose process group holds it)
RESERVE=25      # seconds kept for estimate-errors, gpu-clean and the report

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
left() { awk -v t="$T0" -v n="$(now)" -v b="$BUDGET" 'BEGIN { printf "%d", b - (n - t) }'; }
say() { echo "gpu-proof: $*" | tee -a "$LOG" >&2; }

# run_to FILE SECONDS CMD...: stdout to FILE, stderr to the log, killed with
# its whole process group after SECONDS (SIGTERM, SIGKILL 30 s later: time
# for vramfit and measure.py to end their own children's groups) or when
# this script ends.
run_to() {
  local out=$1 t=$2; shift 2
  [ "$t" -ge 1 ] 2>/dev/null || t=1
  echo "\$ $*" >>"$LOG"
  timeout -k 30 "$t" "$@" >"$out" 2>>"$LOG" &
  CUR=$!
  wait "$CUR"; local rc=$?
  CUR=""
  return $rc
}

# Every process whose command line names this run's work directory (a
# trainer on a trial config, a measurement), by pid: the last safety net.
kill_leftovers() {
  local p
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = "$$" ] && continue
    { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qF "$WORK" && kill -KILL "${p#/proc/}" 2>/dev/null
  done
}

finish() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$CUR" ]; then kill -TERM "$CUR" 2>/dev/null; wait "$CUR" 2>/dev/null; fi
  kill_leftovers
  tar -czf "$OUT/artifacts.tar.gz" -C "$WORK" --exclude='*.safetensors' . 2>>"$LOG"
  rm -rf "$WORK"
  exit $rc
}
trap finish EXIT
trap 'say "interrupted"; exit 130' INT TERM

# record NAME KIND STATUS START REASON [DETAIL.json]
record() {
  local name=$1 kind=$2 status=$3 start=$4 reason=$5 detail=${6:-}
  $CHECK record "$RESULTS" "$name" "$kind" "$status" "$(since "$start")" "$reason" $detail
  say "$name ($kind): $status${reason:+ - $reason}"
}
# judge NAME KIND START DETAIL.json: passed when the judging command (run by
# the caller, exit status in $?) said so.
judge() {
  local rc=$1 name=$2 kind=$3 start=$4 detail=$5
  if [ "$rc" -eq 0 ]; then record "$name" "$kind" passed "$start" "" "$detail"
  else record "$name" "$kind" failed "$start" "" "$detail"; fi
}
# cap SECONDS: SECONDS, or less when the budget (minus the reserve for the
# last checks) ends sooner; at least 1.
cap() { local l=$(( $(left) - RESERVE )); [ "$l" -lt "$1" ] && echo $(( l > 1 ? l : 1 )) || echo "$1"; }
# budget_ok SECONDS: is there time for a step of about SECONDS (+30 %)?
budget_ok() { [ "$(left)" -ge $(( $1 * 13 / 10 )) ]; }
no_budget() { echo "budget: $(left) s left of $BUDGET, the step needs about $1 s"; }

# --- build -------------------------------------------------------------------
BUILD=$ROOT/build-release
build_vramfit() {
  local t=$(now)
  if [ -n "${VRAMFIT:-}" ]; then
    if "$VRAMFIT" --version >/dev/null 2>>"$LOG"; then
      record build cpu passed "$t" "given binary $VRAMFIT ($("$VRAMFIT" --version)), not rebuilt"
      BUILD=$(dirname "$VRAMFIT")
      return 0
    fi
    record build cpu failed "$t" "VRAMFIT=$VRAMFIT does not run"
    return 1
  fi
  local note="" home=""
  [ -f "$BUILD/CMakeCache.txt" ] && home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD/CMakeCache.txt")
  if [ -x "$BUILD/vramfit" ] && { [ "$home" != "$ROOT" ] || ! command -v cmake >/dev/null || ! command -v cc >/dev/null; }; then
    note="carried build (configured in ${home:-elsewhere}), used as it is"
  else
    local jobs; jobs=$(nproc 2>/dev/null || echo 2)
    if ! run_to "$WORK/build.out" 600 cmake -S "$ROOT" -B "$BUILD" -Wno-dev -DCMAKE_BUILD_TYPE=Release ||
       ! run_to "$WORK/build.out" 600 cmake --build "$BUILD" -j"$jobs" --target vramfit fakenvml; then
      record build cpu failed "$t" "cmake failed (see gpu-proof.log)"
      return 1
    fi
    # the shared libraries a bare GPU machine may lack travel with the build
    mkdir -p "$BUILD/lib"
    ldd "$BUILD/vramfit" | awk '/libcjson|libyaml|libsqlite3/ && $3 ~ /^\// { print $3 }' |
      while read -r l; do cp -L "$l" "$BUILD/lib/"; done
    note="Release build in $BUILD"
  fi
  VRAMFIT=$BUILD/vramfit
  if ! "$VRAMFIT" --version >/dev/null 2>&1; then
    export LD_LIBRARY_PATH="$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    note="$note; its libraries from $BUILD/lib"
  fi
  if "$VRAMFIT" --version >/dev/null 2>>"$LOG"; then
    record build cpu passed "$t" "$note ($("$VRAMFIT" --version))"
  else
    record build cpu failed "$t" "$VRAMFIT does not run ($note)"
    return 1
  fi
}

# --- probe: the NVML path against the nvidia-smi path -------------------------
# probe_paths DIR NVML_LIB SMI: NVML_LIB/SMI empty = vramfit's defaults (the
# real libnvidia-ml.so.1, nvidia-smi on PATH). Writes DIR/*.json.
probe_paths() {
  local d=$1 lib=$2 smi=$3 runs=3 s e
  mkdir -p "$d"
  # env takes its -u options before any NAME=VALUE
  local nvml_env=(env) smi_env=(env)
  [ -n "$lib" ] && nvml_env+=(VRAMFIT_NVML_LIB="$lib") || nvml_env+=(-u VRAMFIT_NVML_LIB)
  [ -n "$smi" ] && smi_env+=(VRAMFIT_NVIDIA_SMI="$smi") || smi_env+=(-u VRAMFIT_NVIDIA_SMI)
  nvml_env+=(VRAMFIT_NVIDIA_SMI=/nonexistent/nvidia-smi)   # NVML alone, no fallback
  smi_env+=(VRAMFIT_NVML_LIB=off)
  local tn=() ts=()
  for _ in $(seq 1 $runs); do
    s=$(date +%s%N); run_to "$d/nvml.json" 30 "${nvml_env[@]}" "$VRAMFIT" probe --json; e=$(date +%s%N)
    tn+=($(( (e - s) / 1000000 )))
    s=$(date +%s%N); run_to "$d/smi.json" 30 "${smi_env[@]}" "$VRAMFIT" probe --json; e=$(date +%s%N)
    ts+=($(( (e - s) / 1000000 )))
  done
  $PY3 - "$d" "${tn[*]}" "${ts[*]}" <<'PY'
import json, statistics, sys
d, tn, ts = sys.argv[1], [int(x) for x in sys.argv[2].split()], [int(x) for x in sys.argv[3].split()]
json.dump({"nvml": statistics.median(tn), "smi": statistics.median(ts), "runs": len(tn),
           "nvml_all": tn, "smi_all": ts}, open(f"{d}/timing.json", "w"))
try:
    g = json.load(open(f"{d}/nvml.json"))["gpus"][-1]
    json.dump({"index": g["index"], "uuid": g["uuid"], "uuid-prefix": (g["uuid"] or "")[:12]},
              open(f"{d}/select.json", "w"))
except (OSError, ValueError, KeyError, IndexError, TypeError):
    pass
PY
  local sel_index sel_prefix
  sel_index=$($PY3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["index"])' "$d/select.json" 2>/dev/null)
  sel_prefix=$($PY3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["uuid-prefix"])' "$d/select.json" 2>/dev/null)
  if [ -n "$sel_index" ]; then
    run_to "$d/cvd-index-nvml.json" 30 "${nvml_env[@]}" CUDA_VISIBLE_DEVICES="$sel_index" "$VRAMFIT" probe --json
    run_to "$d/cvd-index-smi.json" 30 "${smi_env[@]}" CUDA_VISIBLE_DEVICES="$sel_index" "$VRAMFIT" probe --json
    run_to "$d/cvd-uuid-prefix-nvml.json" 30 "${nvml_env[@]}" CUDA_VISIBLE_DEVICES="$sel_prefix" "$VRAMFIT" probe --json
    run_to "$d/cvd-uuid-prefix-smi.json" 30 "${smi_env[@]}" CUDA_VISIBLE_DEVICES="$sel_prefix" "$VRAMFIT" probe --json
  fi
  # MIG as the driver reports it (vramfit itself does not look at MIG)
  local smibin=${smi:-nvidia-smi} mig rc=0
  mig=$(timeout 20 "$smibin" --query-gpu=index,mig.mode.current,mig.mode.pending --format=csv,noheader 2>&1) || rc=$?
  $PY3 - "$d/mig.json" "$rc" "$mig" <<'PY'
import json, sys
path, rc, text = sys.argv[1], int(sys.argv[2]), sys.argv[3].strip()
out = {"reported": [l.strip() for l in text.splitlines()] if rc == 0 else None}
if rc:
    out["not_reported"] = f"nvidia-smi exit {rc}: {text[:200]}"
json.dump(out, open(path, "w"))
PY
}

check_probe_fakes() {
  local t=$(now) d=$WORK/probe-fakes
  budget_ok 5 || { record probe-fakes cpu skipped "$t" "$(no_budget 5)"; return; }
  local lib=${VF_PROOF_FAKE_NVML:-$BUILD/helpers/libfakenvml.so}
  local smi=${VF_PROOF_FAKE_SMI:-$ROOT/tests/helpers/fake-nvidia-smi}
  if [ ! -f "$lib" ] || [ ! -x "$smi" ]; then
    record probe-fakes cpu failed "$t" "fake NVML $lib or nvidia-smi stand-in $smi missing (build target fakenvml)"
    return
  fi
  mkdir -p "$d"
  # the stand-in answers from a real `nvidia-smi --format=csv` capture (H200)
  printf '%s\n' 'index, uuid, name, memory.total [MiB], memory.used [MiB], memory.free [MiB], memory.reserved [MiB], compute_cap, driver_version, pci.bus_id' \
    '0, GPU-a7c75cc4-551d-aa3d-7f71-5c1970c087af, NVIDIA H200, 143771 MiB, 0 MiB, 143156 MiB, 616 MiB, 9.0, 580.159.04, 00000000:00:06.0' >"$d/h200.csv"
  VF_FAKE_NVML='gpus=2' VF_FAKE_SMI="csv:$d/h200.csv:2" probe_paths "$d" "$lib" "$smi"
  $CHECK probe "$d" >"$d/detail.json"
  judge $? probe-fakes cpu "$t" "$d/detail.json"
}

check_probe_gpu() {
  local t=$(now) d=$WORK/probe-gpu
  if [ "$GPU_N" -eq 0 ]; then record probe-gpu gpu skipped "$t" "$GPU_REASON"; return; fi
  budget_ok 10 || { record probe-gpu gpu skipped "$t" "$(no_budget 10)"; return; }
  probe_paths "$d" "${VRAMFIT_NVML_LIB:-}" "${VRAMFIT_NVIDIA_SMI:-}"
  $CHECK probe "$d" >"$d/detail.json"
  judge $? probe-gpu gpu "$t" "$d/detail.json"
}

# --- estimate on every ground-truth configuration --------------------------------
check_estimates() {
  local t=$(now) d=$WORK/estimates id
  budget_ok 10 || { record estimate-configs cpu skipped "$t" "$(no_budget 10)"; return; }
  if ! $PY3 "$MEASURE" configs "$d" 2>>"$LOG"; then
    record estimate-configs cpu failed "$t" "measure.py configs failed"; return
  fi
  for f in "$d"/*.args; do
    id=$(basename "$f" .args)
    # shellcheck disable=SC2046
    run_to "$d/$id.estimate.json" 30 "$VRAMFIT" estimate "$d/$id.config.json" $(cat "$f") --gpu h200 --json ||
      rm -f "$d/$id.estimate.json"
  done
  $CHECK estimates "$d" >"$d/detail.json"
  judge $? estimate-configs cpu "$t" "$d/detail.json"
}

# --- measure.py: compiles, self-test ------------------------------------------------
check_selftest() {
  local t=$(now) py=${PYTORCH:-$PY3}
  budget_ok 15 || { record measure-selftest cpu skipped "$t" "$(no_budget 15)"; return; }
  if ! $PY3 -m py_compile "$MEASURE" "$ROOT/scripts/gpu-proof-check.py" 2>>"$LOG"; then
    record measure-selftest cpu failed "$t" "py_compile failed (see gpu-proof.log)"; return
  fi
  run_to "$WORK/selftest.json" 300 "$py" "$MEASURE" self-test
  local rc=$?
  if [ $rc -eq 0 ]; then
    record measure-selftest cpu passed "$t" "" "$WORK/selftest.json"
  else
    record measure-selftest cpu failed "$t" "measure.py self-test exit $rc" "$WORK/selftest.json"
  fi
}

# --- tune: a sweep of the example trainer with a real out-of-memory -----------------
# make_run DIR MODEL RANK: a run workspace, config.yaml from the example's
# low-VRAM config pointed at models/MODEL.json, with quantization already
# off: the sweep is then baseline, "quantization off" (a no-op, whatever the
# timings) and "optimizer adamw" - the trial that runs out of memory. No
# decision of the sweep hangs on step times, so a busy machine cannot change
# which trials run.
make_run() {
  local r=$1
  mkdir -p "$r/overfit/.precomputed" "$r/logs" "$r/outputs"
  cp "$EX/data/text.txt" "$r/overfit/.precomputed/sample.txt"
  cp "$EX/configs/t2v_lora_low_vram.yaml" "$r/config.yaml"
  "$VRAMFIT" config set "$r/config.yaml" "model.model_path=\"$EX/models/$2.json\"" \
    "model.text_encoder_path=\"$EX/models\"" "lora.rank=$3" "lora.alpha=$3" \
    acceleration.quantization=null >/dev/null 2>>"$LOG"
}

# cal_config RUN STEPS OUT NAME [KEY=VALUE...]: the baseline config as a
# stand-alone trainer config writing under the work dir.
cal_config() {
  local r=$1 steps=$2 out=$3 name=$4; shift 4
  "$VRAMFIT" config set "$r/config.orig.yaml" "optimization.steps=$steps" \
    "validation.interval=$steps" checkpoints.interval=null "output_dir=\"$WORK/$name-out\"" \
    "data.preprocessed_data_root=\"$r/overfit/.precomputed\"" "$@" --dry-run >"$out" 2>>"$LOG"
}

# The CPU limit, as tests/cli/tune.sh sizes it: the peak data size (VmData,
# what RLIMIT_DATA limits) of the baseline config, plus 6 MiB; adamw's fp32
# states need 12.6 MB more than adamw8bit's (models/oom-test.json, rank 64).
calibrate_cpu() {
  local r=$1 peak=0 pid k v s
  cal_config "$r" 6 "$WORK/cal-cpu.yaml" cal-cpu
  s=$(now)
  "$PYTORCH" "$EX/scripts/train.py" "$WORK/cal-cpu.yaml" --disable-progress-bars >>"$LOG" 2>&1 &
  pid=$! CUR=$!
  while kill -0 "$pid" 2>/dev/null; do
    while read -r k v _; do
      [ "$k" = "VmData:" ] && { [ "$v" -gt "$peak" ] && peak=$v; break; }
    done </proc/$pid/status 2>/dev/null
    sleep 0.01   # sample every ~10 ms without taking a core from the trainer
  done
  wait "$pid"; local rc=$?
  CUR=""
  [ $rc -eq 0 ] && [ "$peak" -gt 50000 ] || return 1
  TUNE_FLAGS=(--memory-limit $(( peak / 1024 + 6 )))
  printf '{"device": "cpu", "vmdata_peak_kib": %d, "memory_limit_mib": %d, "run_seconds": [%s]}\n' \
    "$peak" $(( peak / 1024 + 6 )) "$(since "$s")" >"$r/calibration.json"
}

# The CUDA cap: the baseline and the adamw configs run uncapped once; the cap
# lies halfway between the baseline's reserved peak and adamw's allocated
# peak, so the baseline fits for sure and adamw cannot (its tensors alone
# exceed the cap). models/cuda-proof.json at LoRA rank 1024: 134 M trainable
# parameters, adamw's fp32 states 1 GiB against adamw8bit's 0.13 GiB, so the
# gap is about 0.7 GiB; under 64 MiB the check fails and says so.
calibrate_cuda() {
  local r=$1 steps=$2
  cal_config "$r" "$steps" "$WORK/cal-base.yaml" cal-base
  cal_config "$r" "$steps" "$WORK/cal-adamw.yaml" cal-adamw 'optimization.optimizer_type="adamw"'
  local s=$(now)
  run_to "$WORK/cal-base.out" "$(cap 180)" "$PYTORCH" "$EX/scripts/train.py" "$WORK/cal-base.yaml" --disable-progress-bars || return 1
  local w2; w2=$(since "$s"); s=$(now)
  run_to "$WORK/cal-adamw.out" "$(cap 180)" "$PYTORCH" "$EX/scripts/train.py" "$WORK/cal-adamw.yaml" --disable-progress-bars || return 1
  local w3; w3=$(since "$s")
  run_to "$WORK/context.json" "$(cap 120)" "$PYTORCH" "$MEASURE" context || return 1
  $PY3 - "$WORK" "$r/calibration.json" "$w2" "$w3" <<'PY' || return 1
import json, sys
work, out, w2, w3 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
def final(path):
    last = {}
    for line in open(path):
        if line.startswith('{"vramfit"'):
            last.update(json.loads(line)["vramfit"])
    return last
base, adamw = final(f"{work}/cal-base.out"), final(f"{work}/cal-adamw.out")
ctx = json.load(open(f"{work}/context.json"))
r2, a3 = base["peak_bytes"], adamw["peak_allocated_bytes"]
cal = {"device": "cuda", "baseline_reserved_bytes": r2, "baseline_allocated_bytes": base.get("peak_allocated_bytes"),
       "adamw_reserved_bytes": adamw["peak_bytes"], "adamw_allocated_bytes": a3,
       "context_bytes": ctx.get("context_bytes"), "context_probe": ctx,
       "run_seconds": [w2, w3]}
gap = a3 - r2
if gap < 64 << 20:
    cal["problem"] = (f"adamw's tensors ({a3 >> 20} MiB) exceed the baseline's reserved peak ({r2 >> 20} MiB) "
                      "by under 64 MiB: no cap separates them")
else:
    cal["cap_bytes"] = r2 + gap // 2
json.dump(cal, open(out, "w"), indent=1)
sys.exit(0 if "cap_bytes" in cal else 1)
PY
}

check_tune() {
  local dev=$1 t=$(now) r=$WORK/tune-$1 model rank steps est
  local name=tune-$dev kind=cpu
  [ "$dev" = cuda ] && kind=gpu
  if [ "$dev" = cpu ] && [ "$CUDA_OK" = 1 ]; then
    record "$name" cpu skipped "$t" "a CUDA device is present: tune-cuda runs the sweep on it"; return
  fi
  if [ "$dev" = cuda ] && [ "$CUDA_OK" != 1 ]; then record "$name" gpu skipped "$t" "$CUDA_REASON"; return; fi
  if [ -z "$PYTORCH" ]; then record "$name" "$kind" skipped "$t" "$TORCH_REASON"; return; fi
  if [ "$dev" = cpu ]; then model=oom-test rank=64 steps=6 est=60; else model=cuda-proof rank=1024 steps=100 est=90; fi
  budget_ok $est || { record "$name" "$kind" skipped "$t" "$(no_budget $est)"; return; }
  make_run "$r" "$model" "$rank"
  cp "$r/config.yaml" "$r/config.orig.yaml"
  TUNE_FLAGS=()
  local capenv=()
  if [ "$dev" = cpu ]; then
    if ! OMP_NUM_THREADS=1 calibrate_cpu "$r"; then
      record "$name" cpu failed "$t" "calibration run failed (see gpu-proof.log)"; return
    fi
  else
    if ! calibrate_cuda "$r" "$steps"; then
      cp "$r/calibration.json" "$WORK/tune-cuda-cal.json" 2>/dev/null
      record "$name" gpu failed "$t" "calibration failed (see gpu-proof.log)" "$WORK/tune-cuda-cal.json"; return
    fi
    capenv=(VRAMFIT_EXAMPLE_CUDA_MEMORY_CAP="$($PY3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cap_bytes"])' "$r/calibration.json")")
  fi
  # the sweep: two trainer runs of about a calibration run's time each (the
  # no-op runs nothing); not started unless the time left covers them; a
  # trial gets twice a calibration run's time (+30 s) before it is killed
  local run_s
  run_s=$($PY3 -c 'import json,sys; print(int(max(json.load(open(sys.argv[1])).get("run_seconds", [20])) + 1))' "$r/calibration.json" 2>/dev/null || echo 20)
  est=$(( 2 * run_s + 15 ))
  budget_ok "$est" || { record "$name" "$kind" skipped "$t" "$(no_budget "$est") (after calibration)"; return; }
  local envs=(env XDG_DATA_HOME="$WORK/xdg-$dev" "${capenv[@]}")
  [ "$dev" = cpu ] && envs+=(OMP_NUM_THREADS=1 VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI=/nonexistent/nvidia-smi)
  run_to "$r/tune.json" "$(cap $(( est * 2 + 30 )))" "${envs[@]}" "$VRAMFIT" tune "$r" --trainer-dir "$EX" \
    --trainer-cmd "$PYTORCH scripts/train.py {config} --disable-progress-bars" --steps "$steps" \
    --timeout $(( 2 * run_s + 30 )) --grace 5 --json --quiet "${TUNE_FLAGS[@]}"
  run_to "$r/history.json" 30 "${envs[@]}" "$VRAMFIT" history --run "$r" --json
  diff "$r/config.orig.yaml" "$r/config.yaml" >"$r/config.diff"
  $CHECK tune "$r" "$dev" >"$r/detail.json"
  judge $? "$name" "$kind" "$t" "$r/detail.json"
}

# --- ground truth ---------------------------------------------------------------
check_groundtruth() {
  local t=$(now) gt_budget
  if [ "$CUDA_OK" != 1 ]; then record groundtruth gpu skipped "$t" "$CUDA_REASON"; return; fi
  if [ "$TRANSFORMERS_OK" != 1 ]; then record groundtruth gpu skipped "$t" "$TRANSFORMERS_REASON"; return; fi
  gt_budget=$(( $(left) - RESERVE ))
  if [ "$gt_budget" -lt 30 ]; then record groundtruth gpu skipped "$t" "$(no_budget 30)"; return; fi
  say "groundtruth: measuring for up to $gt_budget s"
  run_to "$WORK/gt-run.json" $(( gt_budget + 20 )) "$PYTORCH" "$MEASURE" run --out "$WORK/groundtruth.jsonl" \
    --budget "$gt_budget" --log "$WORK/measure.log" --summary "$WORK/gt-summary.json"
  local rc=$?
  [ -f "$WORK/groundtruth.jsonl" ] && cp "$WORK/groundtruth.jsonl" "$OUT/groundtruth.jsonl"
  $PY3 - "$WORK/gt-summary.json" "$rc" >"$WORK/gt-detail.json" <<'PY'
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    s = {"measured": [], "failed": [], "skipped": [], "not_started": []}
p = [f"measure.py run exit {sys.argv[2]}"] if sys.argv[2] != "0" else []
p += [f"{m['id']}: {m['status']}, expected {m['expected']}" for m in s["measured"] if m["status"] != m["expected"]]
p += [f"{m['id']}: {m['reason']}" for m in s["failed"]]
if not s["measured"]:
    p.append("nothing measured")
s["problems"] = p
print(json.dumps(s))
PY
  $PY3 -c 'import json,sys; sys.exit(1 if json.load(open(sys.argv[1]))["problems"] else 0)' "$WORK/gt-detail.json"
  judge $? groundtruth gpu "$t" "$WORK/gt-detail.json"
}

check_errors() {
  local t=$(now)
  if [ ! -s "$WORK/groundtruth.jsonl" ]; then
    record estimate-errors gpu skipped "$t" "no measured records (${CUDA_REASON:-groundtruth measured nothing})"; return
  fi
  if ! $PY3 "$MEASURE" errors "$WORK/groundtruth.jsonl" "$WORK/estimates/estimates.json" >"$WORK/errors.json" 2>>"$LOG"; then
    record estimate-errors gpu failed "$t" "measure.py errors failed (see gpu-proof.log)"; return
  fi
  $CHECK errors "$WORK/errors.json" >"$WORK/errors-detail.json"
  judge $? estimate-errors gpu "$t" "$WORK/errors-detail.json"
}

# No process of this run on the GPU: every compute process nvidia-smi lists
# whose command line names this run's files is killed and reported.
check_clean() {
  local t=$(now) apps pid ours=()
  if [ "$GPU_N" -eq 0 ]; then record gpu-clean gpu skipped "$t" "$GPU_REASON"; return; fi
  apps=$(timeout 20 nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>>"$LOG") || {
    record gpu-clean gpu failed "$t" "nvidia-smi --query-compute-apps failed"; return; }
  while IFS=', ' read -r pid _; do
    [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || continue
    if tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qE "$WORK|$ROOT|measure\.py|train\.py"; then
      ours+=("$pid"); kill -KILL "$pid" 2>/dev/null
    fi
  done <<<"$apps"
  if [ ${#ours[@]} -eq 0 ]; then
    record gpu-clean gpu passed "$t" "no process of this run on the GPU (nvidia-smi lists $(grep -c . <<<"$apps") compute processes)"
  else
    record gpu-clean gpu failed "$t" "left on the GPU and killed: ${ours[*]}"
  fi
}

# --- what this machine has -------------------------------------------------------------
find_python() {
  local p
  for p in ${PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null && "$p" -c 'import torch, yaml' 2>/dev/null; then
      command -v "$p"; return 0
    fi
  done
  return 1
}

detect() {
  GPU_N=0 GPU_REASON="" CUDA_OK=0 CUDA_REASON="" TRANSFORMERS_OK=0 TRANSFORMERS_REASON=""
  TORCH_REASON="" GPU_SUMMARY="none"
  run_to "$WORK/probe-env.json" 60 "$VRAMFIT" probe --json
  GPU_N=$($PY3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["gpus"]))' "$WORK/probe-env.json" 2>/dev/null || echo 0)
  if [ "$GPU_N" -eq 0 ]; then
    GPU_REASON="no NVIDIA GPU: vramfit probe found none ($($PY3 -c '
import json,sys
try: j=json.load(open(sys.argv[1])); print("; ".join(j.get("notes") or []) or "source " + str(j.get("source")))
except Exception as e: print("probe failed")' "$WORK/probe-env.json"))"
  else
    GPU_SUMMARY=$($PY3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(", ".join(g["name"] + " " + str(g["memory_total_mib"]) + " MiB" for g in j["gpus"]) + "; driver " + str(j.get("driver_version")))' "$WORK/probe-env.json")
  fi
  PYTORCH=$(find_python) || PYTORCH=""
  if [ -z "$PYTORCH" ]; then
    TORCH_REASON="no python with PyTorch and PyYAML (tried: ${PYTHON:-} python3 /usr/bin/python3; scripts/install-deps.sh --test installs python3-torch)"
    CUDA_REASON=${GPU_REASON:-$TORCH_REASON} TRANSFORMERS_REASON=$TORCH_REASON
    echo '{}' >"$WORK/caps.json"
    return
  fi
  run_to "$WORK/caps.json" 120 "$PYTORCH" "$MEASURE" caps || echo '{}' >"$WORK/caps.json"
  local v
  v=$($PY3 -c 'import json,sys; c=json.load(open(sys.argv[1])); print(1 if c.get("cuda") else 0, 1 if c.get("transformers") else 0, c.get("torch"), sep="\t")' "$WORK/caps.json" 2>/dev/null)
  CUDA_OK=$(cut -f1 <<<"$v") TRANSFORMERS_OK=$(cut -f2 <<<"$v")
  if [ "$GPU_N" -eq 0 ]; then CUDA_OK=0 CUDA_REASON=$GPU_REASON
  elif [ "$CUDA_OK" != 1 ]; then CUDA_REASON="PyTorch $(cut -f3 <<<"$v") ($PYTORCH) sees no CUDA device"
  fi
  [ "$TRANSFORMERS_OK" = 1 ] || TRANSFORMERS_REASON="transformers does not import in $PYTORCH"
}

write_meta() {
  M_GPU_SUMMARY=$GPU_SUMMARY M_GPU_N=$GPU_N M_GPU_REASON=$GPU_REASON M_CUDA_REASON=$CUDA_REASON \
  M_PYTORCH=$PYTORCH M_VRAMFIT="$("${VRAMFIT:-false}" --version 2>/dev/null)" M_BUDGET=$BUDGET \
  M_ELAPSED=$(since "$T0") M_OUT=$OUT M_CAPS=$WORK/caps.json $PY3 - "$WORK/meta.json" <<'PY'
import json, os, platform, sys
e = os.environ
try:
    caps = json.load(open(e["M_CAPS"]))
except (OSError, ValueError):
    caps = {}
json.dump({"machine": f"{platform.node()} {platform.system()} {platform.release()} {platform.machine()}, "
                      f"{os.cpu_count()} CPUs",
           "gpu_summary": e["M_GPU_SUMMARY"], "gpu": int(e["M_GPU_N"]) > 0,
           "gpu_reason": e["M_GPU_REASON"] or None, "cuda_reason": e["M_CUDA_REASON"] or None,
           "python_torch": e["M_PYTORCH"] or None, "caps": caps, "vramfit": e["M_VRAMFIT"],
           "budget_s": int(e["M_BUDGET"]), "elapsed_s": round(float(e["M_ELAPSED"]), 1),
           "out_dir": e["M_OUT"]}, open(sys.argv[1], "w"), indent=1)
PY
}

# --- the run ---------------------------------------------------------------------------
say "budget $BUDGET s; results in $OUT"
echo "gpu-proof: work directory $WORK (removed at the end, packed into artifacts.tar.gz)" >>"$LOG"
GPU_N=0 GPU_REASON="vramfit did not build" CUDA_OK=0 CUDA_REASON="vramfit did not build"
PYTORCH="" TORCH_REASON="vramfit did not build" TRANSFORMERS_OK=0 GPU_SUMMARY="unknown"
if build_vramfit; then
  detect
  if [ "$GPU_N" -eq 0 ]; then
    say "no NVIDIA GPU here ($GPU_REASON): the GPU checks are skipped, the CPU checks run"
  else
    say "GPU: $GPU_SUMMARY; CUDA from PyTorch: ${CUDA_REASON:-yes}"
  fi
  check_probe_fakes
  check_probe_gpu
  check_estimates
  check_selftest
  check_tune cpu
  check_tune cuda
  check_groundtruth
  check_errors
  check_clean
else
  t=$(now)
  for c in probe-fakes:cpu probe-gpu:gpu estimate-configs:cpu measure-selftest:cpu tune-cpu:cpu \
           tune-cuda:gpu groundtruth:gpu estimate-errors:gpu gpu-clean:gpu; do
    record "${c%%:*}" "${c##*:}" skipped "$t" "no vramfit binary (the build failed)"
  done
fi
write_meta
$CHECK report "$RESULTS" "$WORK/meta.json" "$OUT"
failed=$(grep -c '"status": "failed"' "$RESULTS")
say "done in $(since "$T0") s: $(grep -c '"status": "passed"' "$RESULTS") passed, $failed failed, $(grep -c '"status": "skipped"' "$RESULTS") skipped; $OUT/gpu-proof.md"
[ "$failed" -eq 0 ]
