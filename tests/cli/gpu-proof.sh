#!/usr/bin/env bash
# gpu-proof.sh - scripts/gpu-proof.sh against the fakes: the GPU checks see
# the fake NVML (no devices) and the nvidia-smi stand-in ("No devices were
# found"), so they are skipped with the reason, whatever GPU this machine
# has; the CPU checks (probe paths on the fake NVML and the stand-in, 2
# GPUs; estimate on every ground-truth configuration; measure.py's
# self-test; a CPU sweep with a real out-of-memory) pass. Then the budget:
# too little time skips the sweep, and usage errors.
. "$(dirname "$0")/lib.sh"
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
  jcheck "$J" "j['checks'][5]['detail']['history'] == ['ok', 'oom'] and len(j['checks'][5]['detail']['autotune_log']) == 3"
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

test_case "usage"
proof "$TMP/u" --budget abc; expect_rc 2; expect_err "a whole number of seconds"
proof "$TMP/u" --budget 10; expect_rc 2; expect_err "at least 30 s"
proof "$TMP/u" "$TMP/v"; expect_rc 2; expect_err "one OUT_DIR only"
proof --bogus; expect_rc 2
finish
