# lib.sh - sourced by tests/cli/*.sh: run the built binary, check its output,
# count results, print the closing "N passed, N failed" line.
#   . "$(dirname "$0")/lib.sh"
#   run probe --gpu h200 --json        # sets $out, $err, $rc
#   expect_rc 0; expect_out '"80GB+ tier"'; expect_err 'error'
#   finish
set -u
VRAMFIT=${VRAMFIT:?VRAMFIT must name the built binary}
VF_SHARED_DIR=${VF_SHARED_DIR:-$(cd "$(dirname "$0")/../../../shared" && pwd)}
VF_SOURCE_DIR=${VF_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
VF_BUILD_DIR=${VF_BUILD_DIR:-$(dirname "$VRAMFIT")}
export NO_COLOR=1
# check's python3 runner (the trainer's config class as judge) is off unless a
# test turns it on (unset VRAMFIT_NO_PYTHON), so answers do not depend on
# whether this machine's python3 has pydantic
export VRAMFIT_NO_PYTHON=${VRAMFIT_NO_PYTHON-1}
T_PASS=0 T_FAIL=0 T_NAME=""
TMP=$(mktemp -d /tmp/vf-cli.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
# python3 the interpreter it names, not a version manager's shim: pyenv's
# shim is a shell script that runs pyenv on every call (on the 2-core VM
# 0.27 s a call idle, 0.7-0.9 s under the suite's load; the interpreter it
# names 0.06 s), and the cases call python3 hundreds of times. The same
# interpreter, linked first on this test's PATH (its children's too);
# nothing changes where python3 is no shim.
if py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$py" ] &&
   [ "$(command -v python3)" != "$py" ]; then
  mkdir -p "$TMP/python-bin" && ln -s "$py" "$TMP/python-bin/python3" && PATH="$TMP/python-bin:$PATH"
fi
unset py

# The ASan+UBSan pass (VF_SANITIZED_PASS=1: build-asan's tests) reruns every
# case that drives vramfit and leaves out the cases whose time is another
# program's, the same in both passes, which the release pass ran: the example
# trainer's (real PyTorch on the CPU; the stand-in trainer's cases drive the
# same supervisor code), the browser's checks of the pages (Chromium
# reads the same bytes) and scripts/gpu-proof.sh's (its own sweep). sanitized_skip WHAT WHOSE: true, with a note, there.
sanitized_skip() {
  [ "${VF_SANITIZED_PASS:-0}" = 1 ] || return 1
  echo "note: $1 not rerun in the ASan+UBSan pass: their time is $2's, and the release pass ran them" >&2
}
# have_torch WHAT: /usr/bin/python3 has torch and yaml for the example
# trainer's cases (WHAT names them in the note when they do not run)
have_torch() {
  sanitized_skip "$1" PyTorch && return 1
  /usr/bin/python3 -c 'import torch, yaml' 2>/dev/null && return 0
  echo "note: /usr/bin/python3 has no torch (make test installs python3-torch); $1 not run" >&2
  return 1
}
out="" err="" rc=0

# test NAME: start a named case (used in failure messages)
test_case() { T_NAME="$1"; }

# run ARGS...: run vramfit, capture stdout/stderr/exit code
run() {
  rc=0
  "$VRAMFIT" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
  out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
}

_ok() { T_PASS=$((T_PASS + 1)); }
_bad() {
  T_FAIL=$((T_FAIL + 1))
  echo "FAIL [$T_NAME] $*" >&2
  echo "  rc=$rc" >&2
  echo "  stdout: $(printf '%s' "$out" | head -c 1500)" >&2
  echo "  stderr: $(printf '%s' "$err" | head -c 1500)" >&2
}
expect_rc() { [ "$rc" -eq "$1" ] && _ok || _bad "exit code $rc, expected $1"; }
expect_out() { printf '%s' "$out" | grep -qF -- "$1" && _ok || _bad "stdout lacks: $1"; }
expect_out_re() { printf '%s' "$out" | grep -qE -- "$1" && _ok || _bad "stdout lacks /$1/"; }
expect_no_out() { printf '%s' "$out" | grep -qF -- "$1" && _bad "stdout has: $1" || _ok; }
expect_err() { printf '%s' "$err" | grep -qF -- "$1" && _ok || _bad "stderr lacks: $1"; }
expect_err_lines() { n=$(printf '%s\n' "$err" | grep -c .); [ "$n" -eq "$1" ] && _ok || _bad "stderr has $n lines, expected $1"; }
# jq-free JSON check: python3 expression over `j` (the parsed stdout)
expect_json() {
  if printf '%s' "$out" | python3 -c "import json,sys; j=json.load(sys.stdin); sys.exit(0 if ($1) else 1)" 2>/dev/null
  then _ok; else _bad "JSON check failed: $1"; fi
}
check() { if eval "$1"; then _ok; else _bad "check failed: $1"; fi; }

# scratch_run DIR: a run directory tune takes (the example trainer's
# low-VRAM config on its mini model, one trial sample); prints nothing
scratch_run() {
  local r=$1 ex=$VF_SOURCE_DIR/examples/ltx-mini-trainer
  rm -rf "$r" && mkdir -p "$r/overfit/.precomputed" "$r/dataset" "$r/outputs"
  cp "$ex/data/text.txt" "$r/overfit/.precomputed/sample.txt"
  cp "$ex/configs/t2v_lora_low_vram.yaml" "$r/config.yaml"
  "$VRAMFIT" config set "$r/config.yaml" "model.model_path=\"$ex/models/mini.json\"" \
    "model.text_encoder_path=\"$ex/models\"" >/dev/null
}
# tune_fake1 RUN DB: one trial of the stand-in trainer tests/unit/fake-trainer.sh
# on RUN, recorded in the history DB (vramfit's writer); sets $out, $err, $rc
tune_fake1() {
  VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI=/nonexistent/nvidia-smi run tune "$1" --no-check \
    --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "sh tests/unit/fake-trainer.sh {config}" --steps 2 \
    --max-trials 1 --history "$2" --quiet
}
# new_history DB: a history at DB whose schema vramfit's writer made
# (tune_fake1 on a scratch run), its trial deleted: the trials and
# recoveries a case wants are inserted with sqlite3. (A reader, history or
# report history, writes nothing, not even the schema of an empty file.)
new_history() {
  scratch_run "$TMP/new-history-run" && tune_fake1 "$TMP/new-history-run" "$1" && [ "$rc" -eq 0 ] &&
  python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('delete from trials'); c.commit()" "$1" &&
  rm -rf "$TMP/new-history-run"
}

finish() {
  echo "$T_PASS passed, $T_FAIL failed"
  [ "$T_FAIL" -eq 0 ]
}
