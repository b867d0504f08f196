#!/usr/bin/env bash
# gpu-proof.sh - scripts/gpu-proof.sh against the fakes: the GPU checks see
# the fake NVML (no devices) and the nvidia-smi stand-in ("No devices were
# found"), so they are skipped with the reason, whatever GPU this machine
# has; the CPU checks (probe paths on the fake NVML and the stand-in, 2
# GPUs; estimate on every ground-truth configuration; measure.py's
# self-test; a CPU sweep with a real out-of-memory) pass. Then the budget:
# too little time skips the sweep, and usage errors.
. "$(dirname "$0")/lib.sh"
# the script's time is its own (a PyTorch sweep, measure.py's self-test),
# the same in both passes; its vramfit calls (probe on the fakes, estimate)
# are the other CLI tests' too
if sanitized_skip "scripts/gpu-proof.sh's cases" "the script"; then
  finish; exit $?
fi
SCRIPT=$VF_SOURCE_DIR/scripts/gpu-proof.sh
export VRAMFIT_NVML_LIB=$VF_BUILD_DIR/helpers/libfakenvml.so VF_FAKE_NVML='gpus=0'
export VRAMFIT_NVIDIA_SMI=$VF_SOURCE_DIR/tests/helpers/fake-nvidia-smi VF_FAKE_SMI=no-devices
export VF_PROOF_FAKE_NVML=$VF_BUILD_DIR/helpers/libfakenvml.so
export XDG_DATA_HOME=$TMP/xdg OMP_NUM_THREADS=1
unset CUDA_VISIBLE_DEVICES PYTORCH_CUDA_ALLOC_CONF || true

# proof OUT_DIR ARGS...: run the script (VRAMFIT = the binary under test: no build)
proof() {
  rc=0
  bash "$SCRIPT" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
  out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
}
# jcheck FILE EXPR: python3 expression over j (the JSON in FILE)
jcheck() {
  if python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" 2>/dev/null
  then _ok; else _bad "JSON check failed on $1: $2"; fi
}
CHECKS='["build", "probe-fakes", "probe-gpu", "estimate-configs", "measure-selftest", "tune-cpu", "tune-cuda", "groundtruth", "estimate-errors", "gpu-clean"]'
TORCH=0
/usr/bin/python3 -c 'import torch, yaml' 2>/dev/null && TORCH=1

test_case "measure.py and the checker compile"
check 'python3 -m py_compile "$VF_SOURCE_DIR/bench/groundtruth/measure.py" "$VF_SOURCE_DIR/scripts/gpu-proof-check.py"'

test_case "no GPU (fakes): every check has a result, GPU ones skipped with the reason, CPU ones pass"
O=$TMP/proof
proof "$O"
expect_rc 0
expect_err "no NVIDIA GPU here"
J=$O/gpu-proof.json
jcheck "$J" "[c['check'] for c in j['checks']] == $CHECKS"
jcheck "$J" "all(c['status'] in ('passed', 'failed', 'skipped') and c['seconds'] >= 0 for c in j['checks'])"
jcheck "$J" "all(c['status'] == 'skipped' and c['reason'].startswith('no NVIDIA GPU') for c in j['checks'] if c['kind'] == 'gpu' and c['check'] != 'estimate-errors')"
jcheck "$J" "[c for c in j['checks'] if c['check'] == 'estimate-errors'][0]['status'] == 'skipped'"
if [ $TORCH = 1 ]; then
  jcheck "$J" "all(c['status'] == 'passed' for c in j['checks'] if c['kind'] == 'cpu')"
else
  jcheck "$J" "all(c['status'] == 'passed' for c in j['checks'] if c['kind'] == 'cpu' and c['check'] != 'tune-cpu')"
fi
jcheck "$J" "j['gpu'] is False and j['gpu_reason'].startswith('no NVIDIA GPU') and j['summary']['failed'] == 0"
jcheck "$J" "j['summary']['passed'] + j['summary']['skipped'] == 10 and j['measured_errors'] is None"
test_case "probe-fakes: both paths, the same 2 GPUs, CUDA_VISIBLE_DEVICES by index and UUID prefix"
jcheck "$J" "(lambda d: d['sources'] == ['nvml', 'nvidia-smi'] and len(d['gpus']) == 2 and d['driver'] == ['580.159.04'] * 2)(j['checks'][1]['detail'])"
jcheck "$J" "(lambda d: [(c['by'], c['value'], c['indices']) for c in d['cuda_visible_devices']] == [('index', 1, [1])] * 2 + [('uuid-prefix', 'GPU-00000001', [1])] * 2)(j['checks'][1]['detail'])"
jcheck "$J" "(lambda d: d['timing_ms']['runs'] == 3 and d['timing_ms']['nvml'] > 0 and d['timing_ms']['smi'] > 0)(j['checks'][1]['detail'])"
jcheck "$J" "j['checks'][1]['detail']['mig']['reported'] is None and 'mig.mode.current' in j['checks'][1]['detail']['mig']['not_reported']"
test_case "estimate-configs: every configuration estimated, the OOM one predicted not to fit"
jcheck "$J" "(lambda p: len(p) >= 15 and all(x['peak_gib'] > 0 for x in p) and [x['fits_h200'] for x in p if x['id'].endswith('-oom')] == [False])(j['checks'][3]['detail']['predicted'])"
test_case "measure-selftest"
jcheck "$J" "j['checks'][4]['detail']['passed'] > 50 and j['checks'][4]['detail']['failed'] == 0"
jcheck "$J" "any('transformers' in s for s in j['checks'][4]['detail']['skipped']) or j['checks'][4]['detail']['skipped'] == []"
if [ $TORCH = 1 ]; then
  test_case "tune-cpu: ok, no-op, a real CPU out-of-memory reverted; history, autotune.log"
  jcheck "$J" "[t['outcome'] for t in j['checks'][5]['detail']['trials']] == ['ok', 'no-op', 'oom']"
  jcheck "$J" "'DefaultCPUAllocator' in j['checks'][5]['detail']['trials'][2]['evidence']"
  jcheck "$J" "j['checks'][5]['detail']['history'] == ['ok', 'oom'] and len([l for l in j['checks'][5]['detail']['autotune_log'] if '  strategy: ' not in l]) == 3"
fi
test_case "the readable report and the files the device machine sends back"
check '[ -s "$O/gpu-proof.md" ] && [ -s "$O/gpu-proof.log" ] && [ -s "$O/artifacts.tar.gz" ]'
check 'grep -q "^| probe-gpu | gpu | skipped | " "$O/gpu-proof.md"'
check 'grep -q "^| probe-fakes | cpu | passed | " "$O/gpu-proof.md"'
check '[ $(ls "$O" | wc -l) -le 8 ]'
check 'tar -tzf "$O/artifacts.tar.gz" | grep -q "results.jsonl"'
test_case "the work directory is removed"
W=$(sed -n 's/^gpu-proof: work directory \([^ ]*\) .*/\1/p' "$O/gpu-proof.log")
check '[ -n "$W" ] && [ ! -e "$W" ]'

test_case "a budget too small for the sweep: it is not started, and says why"
O2=$TMP/proof-small
proof "$O2" --budget 30
expect_rc 0
jcheck "$O2/gpu-proof.json" "[c for c in j['checks'] if c['check'] == 'tune-cpu'][0]['status'] == 'skipped'"
if [ $TORCH = 1 ]; then
  jcheck "$O2/gpu-proof.json" "[c for c in j['checks'] if c['check'] == 'tune-cpu'][0]['reason'].startswith('budget: ')"
fi
jcheck "$O2/gpu-proof.json" "j['budget_s'] == 30 and len(j['checks']) == 10"

# --- the GPU checks on a simulated GPU: the fake NVML (2 H200s, processes from a
# procfile), the nvidia-smi stand-in on PATH too, and tests/helpers/fake-cuda-python
# as "python with PyTorch on CUDA" (its trainer obeys the memory cap, lists
# itself in the procfile; its measure.py run writes two records)
test_case "simulated GPU: every GPU check runs and passes, tune-cpu gives way to tune-cuda"
mkdir -p "$TMP/bin"; ln -sf "$VF_SOURCE_DIR/tests/helpers/fake-nvidia-smi" "$TMP/bin/nvidia-smi"
: >"$TMP/procs"
O3=$TMP/proof-sim
PATH=$TMP/bin:$PATH PYTHON=$VF_SOURCE_DIR/tests/helpers/fake-cuda-python VRAMFIT_FAKE_CUDA_PROCFILE=$TMP/procs \
  VF_FAKE_NVML="gpus=2;procfile=$TMP/procs" VF_FAKE_SMI="csv:$VF_SHARED_DIR/fixtures/nvidia-smi/h200-02.txt:2" \
  proof "$O3"
expect_rc 0
J3=$O3/gpu-proof.json
jcheck "$J3" "[(c['check'], c['status']) for c in j['checks']] == [('build', 'passed'), ('probe-fakes', 'passed'), ('probe-gpu', 'passed'), ('estimate-configs', 'passed'), ('measure-selftest', 'passed'), ('tune-cpu', 'skipped'), ('tune-cuda', 'passed'), ('groundtruth', 'passed'), ('estimate-errors', 'passed'), ('gpu-clean', 'passed')]"
jcheck "$J3" "j['gpu'] is True and 'NVIDIA H200' in j['gpu_summary'] and j['summary'] == {'passed': 9, 'failed': 0, 'skipped': 1}"
test_case "simulated GPU: the cap lies between the baseline's reserved and adamw's allocated peak; the OOM is the trainer's"
jcheck "$J3" "(lambda c: c['baseline_reserved_bytes'] < c['cap_bytes'] < c['adamw_allocated_bytes'] and c['context_bytes'] == 532 * 2**20)([c for c in j['checks'] if c['check'] == 'tune-cuda'][0]['detail']['calibration'])"
jcheck "$J3" "(lambda d: [t['outcome'] for t in d['trials']] == ['ok', 'no-op', 'oom'] and 'CUDA out of memory' in d['trials'][2]['evidence'] and abs(d['nvml_vs_trainer'][0]['diff_mib']) < 1 and d['nvml_vs_trainer'][0]['source'] == 'nvml-process')([c for c in j['checks'] if c['check'] == 'tune-cuda'][0]['detail'])"
test_case "simulated GPU: groundtruth.jsonl comes back, the error table joins it with the estimates"
check '[ -s "$O3/groundtruth.jsonl" ] && [ $(ls "$O3" | wc -l) -le 8 ]'
jcheck "$J3" "j['measured_errors']['oom'] == {'n': 1, 'predicted': 1} and j['measured_errors']['peak']['n'] == 1 and j['measured_errors']['peak']['max_abs'] < 0.05"
check 'grep -q "^## Estimator vs measured" "$O3/gpu-proof.md"'

# --- the judging of the GPU checks, on outputs shaped like a real run's ------------
CHK="python3 $VF_SOURCE_DIR/scripts/gpu-proof-check.py"
# cuda_run DIR POLLED_EXTRA_MIB OUTCOME3: a tune-cuda directory as a run on an
# H200 leaves it (trainer reserved 5 GiB, context 500 MiB, NVML polled
# reserved + context + POLLED_EXTRA_MIB)
cuda_run() {
  mkdir -p "$1"
  python3 - "$@" <<'PY'
import json, sys
d, extra, out3 = sys.argv[1], int(sys.argv[2]), sys.argv[3]
G, M = 2**30, 2**20
oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of 139.81 GiB"
t = [{"trial": 1, "change": "baseline", "outcome": "ok", "evidence": "completed 100 steps", "step_seconds": 0.02,
      "peak_bytes": 5 * G + 500 * M + extra * M, "peak_source": "nvml-process", "peak_trainer_bytes": 5 * G,
      "peak_polled_bytes": 5 * G + 500 * M + extra * M, "wall_seconds": 9.0},
     {"trial": 2, "change": "quantization off", "outcome": "no-op", "evidence": "already in effect",
      "step_seconds": None, "peak_bytes": None, "peak_source": None, "peak_trainer_bytes": None,
      "peak_polled_bytes": None, "wall_seconds": 0},
     {"trial": 3, "change": "optimizer adamw", "outcome": out3, "evidence": oom if out3 == "oom" else "completed",
      "step_seconds": None, "peak_bytes": 6 * G, "peak_source": "nvml-process", "peak_trainer_bytes": None,
      "peak_polled_bytes": 6 * G, "wall_seconds": 5.0}]
json.dump({"trials": t, "winner": {"trial": 1, "deltas": {}}, "patched": False}, open(f"{d}/tune.json", "w"))
json.dump({"trials": [{"outcome": "ok"}, {"outcome": out3}]}, open(f"{d}/history.json", "w"))
json.dump({"device": "cuda", "context_bytes": 500 * M, "cap_bytes": 5 * G + 200 * M}, open(f"{d}/calibration.json", "w"))
open(f"{d}/autotune.log", "w").write("t  trial 1  outcome: ok\nt  trial 2  outcome: no-op\nt  trial 3  outcome: " + out3 + "\n")
open(f"{d}/config.diff", "w").write("")
PY
}
test_case "judging tune-cuda: a good run passes, NVML vs reserved + context computed"
cuda_run "$TMP/c1" 40 oom
$CHK tune "$TMP/c1" cuda >"$TMP/c1.json"; c1=$?
check '[ $c1 -eq 0 ]'
jcheck "$TMP/c1.json" "j['problems'] == [] and j['nvml_vs_trainer'][0]['diff_mib'] == 40.0 and j['nvml_vs_trainer'][0]['source'] == 'nvml-process'"
test_case "judging tune-cuda: NVML 2 GiB above reserved + context fails"
cuda_run "$TMP/c2" 2048 oom
$CHK tune "$TMP/c2" cuda >"$TMP/c2.json"; c2=$?
check '[ $c2 -eq 1 ]'
jcheck "$TMP/c2.json" "any('NVML' in p for p in j['problems'])"
test_case "judging tune-cuda: no out-of-memory fails"
cuda_run "$TMP/c3" 0 ok
$CHK tune "$TMP/c3" cuda >"$TMP/c3.json"; c3=$?
check '[ $c3 -eq 1 ]'
jcheck "$TMP/c3.json" "any('expected' in p and 'oom' in p for p in j['problems']) and any('CUDA out of memory' in p for p in j['problems'])"
test_case "judging probe: a driver or UUID mismatch between the paths fails"
P=$TMP/p; mkdir -p "$P"
python3 - "$P" <<'PY'
import json, sys
d = sys.argv[1]
g = {"index": 0, "name": "NVIDIA H200", "memory_total_mib": 143771, "uuid": "GPU-a", "compute_capability": "9.0"}
json.dump({"source": "nvml", "driver_version": "580.1", "gpus": [g]}, open(f"{d}/nvml.json", "w"))
json.dump({"source": "nvidia-smi", "driver_version": "580.2", "gpus": [dict(g, uuid="GPU-b")]}, open(f"{d}/smi.json", "w"))
PY
$CHK probe "$P" >"$TMP/p.json"; pr=$?
check '[ $pr -eq 1 ]'
jcheck "$TMP/p.json" "any('driver' in p for p in j['problems']) and any('uuid' in p for p in j['problems'])"
test_case "judging the error table: no measured record fails"
echo '{"rows": [], "summary": {}}' >"$TMP/e.json"
$CHK errors "$TMP/e.json" >"$TMP/e-out.json"; er=$?
check '[ $er -eq 1 ]'

test_case "usage"
proof "$TMP/u" --budget abc; expect_rc 2; expect_err "a whole number of seconds"
proof "$TMP/u" --budget 10; expect_rc 2; expect_err "at least 30 s"
proof "$TMP/u" "$TMP/v"; expect_rc 2; expect_err "one OUT_DIR only"
proof --bogus; expect_rc 2
finish
