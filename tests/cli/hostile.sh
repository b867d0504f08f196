#!/usr/bin/env bash
# hostile.sh - hostile input, end to end on the built binary: every command
# given empty files, directories, binary garbage, truncated JSON/YAML, huge
# files, FIFOs, symlink loops, non-UTF-8 names, unreadable files, broken
# nvidia-smi stand-ins and data overrides, missing arguments and bad flag
# values. Each must exit 1 (2 for usage) with one clear line naming the file
# or flag and the problem: no crash, no hang, no sanitizer report, and no file
# written or changed on failure.
. "$(dirname "$0")/lib.sh"
unset VRAMFIT_DATA_DIR CUDA_VISIBLE_DEVICES VF_FAKE_NVML VF_FAKE_SMI VRAMFIT_SMI_TIMEOUT || true
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI="$TMP/no-such-smi"
export XDG_CONFIG_HOME="$TMP/xdg" HOME="$TMP/home"
TD="$VF_SOURCE_DIR/tests/fixtures/ltx-trainer"

# hrun ARGS...: run with a time limit (a hang fails, exit 124).
hrun() {
  rc=0
  timeout 30 "$VRAMFIT" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null || rc=$?
  out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
}
# fails RC WORD ARGS...: vramfit ARGS exits RC; stderr is one error line
# (usage errors: the line and the "Try 'vramfit help'" hint) that contains WORD.
fails() {
  local want=$1 word=$2
  shift 2
  test_case "$*"
  hrun "$@"
  expect_rc "$want"
  local first
  first=$(printf '%s\n' "$err" | head -n 1)
  if [ "$want" -eq 2 ]; then
    n=$(printf '%s\n' "$err" | grep -c .)
    { [ "$n" -ge 1 ] && [ "$n" -le 2 ]; } && _ok || _bad "stderr has $n lines, expected 1-2"
  else
    expect_err_lines 1
    case "$first" in "vramfit: error: "*) _ok ;; *) _bad "not an error line: $first" ;; esac
  fi
  printf '%s' "$first" | grep -qF -- "$word" && _ok || _bad "error line lacks: $word"
}
# unchanged FILE: FILE has the bytes it had when `snap FILE` was called.
snap() { cp -p "$1" "$TMP/snap"; }
unchanged() { cmp -s "$1" "$TMP/snap" && _ok || _bad "$1 changed"; }
no_stray() { # no temp file left next to FILE
  ls -A "$(dirname "$1")" | grep -q '\.tmp\.' && _bad "temp file left in $(dirname "$1")" || _ok
}

H="$TMP/h"
mkdir -p "$H/adir" "$H/cfgdir" "$TMP/xdg" "$TMP/home"
: >"$H/empty.json"
: >"$H/empty.yaml"
: >"$H/cfgdir/config.json"
# Binary garbage, the same bytes on every run (a seeded generator, never
# /dev/urandom: a random first byte of '\n' once moved an error to line 2).
garbage() {
  printf '\211GARBAGE\001'
  python3 -c 'import random, sys; r = random.Random(17); sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(4096)))'
}
garbage >"$H/garbage.bin"
printf '\x00\x01\x02binary\xff\xfe' >>"$H/garbage.bin"
printf '{"hidden_size": 64, "num_hidden_layers": [1, 2' >"$H/trunc.json"
printf 'model:\n  model_path: [1, 2\n' >"$H/trunc.yaml"
printf 'model:\n  model_path: "unterminated\n' >"$H/trunc2.yaml"
truncate -s 200M "$H/sparse.safetensors"
truncate -s 200M "$H/sparse.yaml"
python3 -c "import sys; sys.stdout.write('{\"x\": \"' + 'a' * (5 << 20) + '\"}')" >"$H/big.json"
ln -s loop1 "$H/loop2"
ln -s loop2 "$H/loop1"
BADNAME="$H/$(printf 'bad\xff\xfename.json')"
cp "$H/garbage.bin" "$BADNAME"
printf '\x08\x00\x00\x00\x00\x00\x00\x00{"a":1}' >"$H/short.safetensors"
printf '\xff\xff\xff\xff\xff\xff\xff\x7f{}' >"$H/huge-len.safetensors"

# --- model readers: inspect and estimate ------------------------------------
for cmd in inspect estimate; do
  fails 1 "empty.json" $cmd "$H/empty.json"
  fails 1 "adir" $cmd "$H/adir"
  fails 1 "cfgdir/config.json" $cmd "$H/cfgdir"
  fails 1 "garbage.bin" $cmd "$H/garbage.bin"
  fails 1 "trunc.json" $cmd "$H/trunc.json"
  fails 1 "sparse.safetensors" $cmd "$H/sparse.safetensors"
  fails 1 "big.json" $cmd "$H/big.json"
  fails 1 "loop1" $cmd "$H/loop1"
  fails 1 "name.json" $cmd "$BADNAME"
  fails 1 "short.safetensors" $cmd "$H/short.safetensors"
  fails 1 "huge-len.safetensors" $cmd "$H/huge-len.safetensors"
  fails 1 "no-such-model" $cmd "$H/no-such-model"
done
fails 2 "PATH" inspect
fails 2 "MODEL" estimate

# --- estimate's flags ---------------------------------------------------------
fails 2 "--batch" estimate llama2-7b --batch 99999999999999999999
fails 2 "--batch" estimate llama2-7b --batch 0
fails 2 "--batch" estimate llama2-7b --batch
fails 2 "--seq" estimate llama2-7b --seq -1
fails 2 "--seq" estimate llama2-7b --seq 99999999999
fails 2 "--grad-accum" estimate llama2-7b --grad-accum 0
fails 2 "--gpus" estimate llama2-7b --gpus -3
fails 2 "--lora-rank" estimate llama2-7b --lora-rank 1e30
fails 2 "--context-mib" estimate llama2-7b --context-mib 99999999999999999
fails 2 "--video" estimate ltx-2-19b --video 0x0x0
fails 2 "--mode" estimate llama2-7b --mode frob
fails 2 "--precision" estimate llama2-7b --precision fp7
fails 2 "--shard" estimate llama2-7b --shard frob
fails 2 "--params" estimate --params -5
fails 2 "--params" estimate --params 1e400
fails 2 "--params" estimate --params abc
fails 2 "nope" estimate llama2-7b --gpu nope
fails 2 "x=-1" estimate llama2-7b --gpu x=-1
fails 2 "h200:0" estimate llama2-7b --gpu h200:0
fails 2 "h200:99999999999999999999" estimate llama2-7b --gpu h200:99999999999999999999
fails 2 "--frob" estimate llama2-7b --frob
fails 1 "no-such.jsonl" estimate --check-groundtruth "$H/no-such.jsonl"
fails 1 "garbage.bin" estimate --check-groundtruth "$H/garbage.bin"

# --- probe: flags and nvidia-smi stand-ins ------------------------------------
fails 2 "empty GPU spec" probe --gpu ''
fails 2 "h200:-1" probe --gpu h200:-1
fails 2 "=5" probe --gpu =5
fails 2 "a=0" probe --gpu a=0
fails 2 "a=99999999999999999999" probe --gpu a=99999999999999999999
fails 2 "--gpu" probe --gpu
fails 2 "extra" probe --json extra
SMI="$TMP/smi"
smi() { printf '#!/bin/sh\n%s\n' "$1" >"$SMI"; chmod +x "$SMI"; }
export VRAMFIT_SMI_TIMEOUT=2
smi 'exit 0'
VRAMFIT_NVIDIA_SMI="$SMI" fails 1 "empty output" probe
smi "cat '$H/garbage.bin'"
VRAMFIT_NVIDIA_SMI="$SMI" fails 1 "nvidia-smi output line 1" probe
smi 'head -c 2000000 /dev/zero | tr "\\0" a'
VRAMFIT_NVIDIA_SMI="$SMI" fails 1 "more than 262144 bytes" probe
smi 'echo "0, GPU-abc, NVIDIA H200, 143771"'
VRAMFIT_NVIDIA_SMI="$SMI" fails 1 "expected 8 comma-separated fields" probe
smi 'echo "0, GPU-abc, NVIDIA H200, 99999999999999999999999, 0, 1, 9.0, 580.1"'
VRAMFIT_NVIDIA_SMI="$SMI" fails 1 "memory.total" probe
smi 'echo "0, GPU-abc, NVIDIA H200, -5, 0, 1, 9.0, 580.1"'
VRAMFIT_NVIDIA_SMI="$SMI" fails 1 "memory.total" probe
smi 'sleep 60'
VRAMFIT_NVIDIA_SMI="$SMI" fails 1 "killed" probe
smi 'kill -SEGV $$'
VRAMFIT_NVIDIA_SMI="$SMI" fails 1 "signal 11" probe
VRAMFIT_NVIDIA_SMI="$H/garbage.bin" fails 1 "garbage.bin" probe
VRAMFIT_NVIDIA_SMI="$H/adir" fails 1 "adir" probe
unset VRAMFIT_SMI_TIMEOUT

# --- config get/set and check on hostile YAML ---------------------------------
for f in adir garbage.bin trunc.yaml trunc2.yaml sparse.yaml loop1; do
  fails 1 "$f" config get "$H/$f" model.model_path
  fails 1 "$f" check --config "$H/$f"
  if [ -f "$H/$f" ]; then snap "$H/$f"; fi
  fails 1 "$f" config set "$H/$f" model.model_path=/x
  if [ -f "$H/$f" ]; then unchanged "$H/$f"; fi
done
no_stray "$H/x"
fails 1 "name.json" config get "$BADNAME" a
fails 1 "no-such.yaml" config get "$H/no-such.yaml" a
fails 1 "no-such.yaml" config set "$H/no-such.yaml" a=1
check "[ ! -e '$H/no-such.yaml' ]"
cp "$TD/configs/t2v_lora.yaml" "$H/c.yaml"
snap "$H/c.yaml"
fails 1 "seed.child" config set "$H/c.yaml" seed.child=1
fails 1 "c.yaml" config set "$H/c.yaml" optimization.steps=5 'lora.rank=[1,'
fails 2 "KEY=VALUE" config set "$H/c.yaml" noequals
fails 2 "FILE KEY" config get "$H/c.yaml"
fails 2 "get or set" config
fails 2 "frob" config frob
unchanged "$H/c.yaml"
no_stray "$H/c.yaml"
fails 2 "RUN_DIR" check
fails 1 "no run config" check "$H/adir"
fails 1 "no-such-run" check "$H/no-such-run"

# --- plan -----------------------------------------------------------------------
fails 2 "--steps" plan --gpu h200 --steps -1
fails 2 "--steps" plan --gpu h200 --steps 99999999999999999999
fails 2 "--frob" plan --frob
fails 1 "garbage.bin" plan --trainer-dir "$H/garbage.bin" --gpu h200 --workspace "$TMP/ws"
check "[ ! -e '$TMP/ws' ]"

# --- gpus / models: flags --------------------------------------------------------
fails 2 "--frob" gpus --frob
fails 2 "extra" models extra
fails 2 "frob" frob

# --- FIFOs and devices: refused at once, never waited on -----------------------
mkfifo "$H/fifo"
fails 1 "fifo" config get "$H/fifo" a
fails 1 "fifo" config set "$H/fifo" a=1
fails 1 "fifo" check --config "$H/fifo"
fails 1 "fifo" estimate --check-groundtruth "$H/fifo"
fails 1 "fifo" inspect "$H/fifo"
fails 1 "/dev/zero" config get /dev/zero a

# --- broken data overrides: reported with the file, never silently ignored ----
DD="$TMP/dd"
for kind in empty garbage trunc dir big loop dangling; do
  rm -rf "$DD"; mkdir -p "$DD/models"
  case $kind in
  empty) : >"$DD/gpus.json"; : >"$DD/models/llama.json" ;;
  garbage) cp "$H/garbage.bin" "$DD/gpus.json"; cp "$H/garbage.bin" "$DD/models/llama.json" ;;
  trunc) echo '{"gpus": [{"id": "x"' >"$DD/gpus.json"; echo '{"models": [' >"$DD/models/llama.json" ;;
  dir) mkdir "$DD/gpus.json" "$DD/models/llama.json" ;;
  big) cp "$H/big.json" "$DD/gpus.json"; cp "$H/big.json" "$DD/models/llama.json" ;;
  loop) ln -s gpus.json "$DD/gpus.json.l"; ln -s gpus.json.l "$DD/gpus.json"
        ln -s llama.json "$DD/models/l"; ln -s l "$DD/models/llama.json" ;;
  dangling) ln -s nowhere "$DD/gpus.json"; ln -s nowhere "$DD/models/llama.json" ;;
  esac
  VRAMFIT_DATA_DIR="$DD" fails 1 "$DD/gpus.json" gpus
  VRAMFIT_DATA_DIR="$DD" fails 1 "$DD/gpus.json" probe --gpu h200
  VRAMFIT_DATA_DIR="$DD" fails 1 "$DD/models/llama.json" models
  VRAMFIT_DATA_DIR="$DD" fails 1 "$DD/models/llama.json" estimate llama2-7b --gpu x=1000
  VRAMFIT_DATA_DIR="$DD" fails 1 "$DD/models/llama.json" inspect llama2-7b
done
# an entry whose config does not read: named where it is used and by the
# listing; an estimate of another model is not held up by it
rm -rf "$DD"; mkdir -p "$DD/models"
printf '%s' '[{"id":"bad-cfg","config":{"model_type":"llama","hidden_size":"wide"}}]' >"$DD/models/extra.json"
VRAMFIT_DATA_DIR="$DD" fails 1 "models/extra.json: model bad-cfg: config: field hidden_size" estimate bad-cfg --gpu a100-80gb
VRAMFIT_DATA_DIR="$DD" fails 1 "models/extra.json: model bad-cfg: config: field hidden_size" models
test_case "estimate llama2-7b beside a malformed catalog entry"
VRAMFIT_DATA_DIR="$DD" hrun estimate llama2-7b --gpu a100-80gb --json
expect_rc 0
rm -rf "$DD"; mkdir -p "$DD/profiles/ltx2"
cp "$H/garbage.bin" "$DD/profiles/ltx2/tiers.json"
VRAMFIT_DATA_DIR="$DD" fails 1 "tiers.json" probe --gpu h200
mkdir -p "$TMP/xdg/vramfit"; ln -s "$TMP/xdg/vramfit/gpus.json" "$TMP/xdg/vramfit/gpus.json"
fails 1 "$TMP/xdg/vramfit/gpus.json" gpus
rm -f "$TMP/xdg/vramfit/gpus.json"

# --- probe: a bad --mode or --trainer fails with or without GPUs --------------
fails 2 "invalid mode name 'fr ob'" probe --mode 'fr ob'
fails 2 "invalid mode name 'fr/ob'" probe --gpu h200 --mode fr/ob
fails 1 "trainer profile 'frob'" probe --trainer frob
fails 1 "trainer profile 'frob'" probe --trainer frob --json
fails 2 "invalid trainer profile name" probe --trainer ../etc

# --- config set through a symlink: the target changes, the link and the
# file's permissions stay ---------------------------------------------------
cp "$TD/configs/t2v_lora.yaml" "$H/real.yaml"
chmod 600 "$H/real.yaml"
ln -s real.yaml "$H/link.yaml"
# numbers on the command line: empty, fractional where whole, out of range
fails 2 "--price" estimate llama2-7b --gpu h200 --price ""
fails 2 "--price" fit llama2-7b --price ""
fails 2 "--price" refs --price ""
fails 2 "--top" fit llama2-7b --top 2.5
fails 2 "--steps" plan --steps 1e9
fails 2 "--exit" triage /dev/null --exit ""
fails 2 "--memory-limit" tune /tmp --memory-limit ""

test_case "config set via a symlink"
hrun config set "$H/link.yaml" optimization.steps=7
expect_rc 0
check "[ -L '$H/link.yaml' ]"
check "grep -q '^  steps: 7\$' '$H/real.yaml'"
check "[ \$(stat -c %a '$H/real.yaml') = 600 ]"
no_stray "$H/real.yaml"

# --- VRAMFIT_SMI_TIMEOUT that is not a number of seconds: an error, not the
# default in silence -------------------------------------------------------
smi 'exit 0'
for v in abc -1 0 99999999999999999999 1e400 5s; do
  VRAMFIT_SMI_TIMEOUT=$v VRAMFIT_NVIDIA_SMI="$SMI" fails 2 "VRAMFIT_SMI_TIMEOUT=$v" probe
done

# --- plan: a broken shipped config is named (not the run's copy, which is
# never written), and no run directory is left behind --------------------------
mkdir -p "$TMP/m/gemma"
echo '{}' >"$TMP/m/gemma/config.json"
cp "$VF_SHARED_DIR/fixtures/models/lora_weights_step_00050.safetensors" "$TMP/m/ltx-2.safetensors"
for kind in garbage trunc nul dir fifo loop dangling big empty comment; do
  rm -rf "$TMP/t"; cp -r "$TD" "$TMP/t"
  f="$TMP/t/configs/t2v_lora.yaml"; rm -f "$f"
  case $kind in
  garbage) cp "$H/garbage.bin" "$f"; want="t2v_lora.yaml:1:" ;;
  trunc) printf 'model:\n  model_path: [1,\n' >"$f"; want="t2v_lora.yaml:3:1: invalid YAML" ;;
  nul) printf 'model:\n  model_path: a\0b\n' >"$f"; want="t2v_lora.yaml:1:1: invalid YAML" ;;
  dir) mkdir "$f"; want="t2v_lora.yaml: the shipped config for the 80GB+ tier (t2v) is a directory" ;;
  fifo) mkfifo "$f"; want="t2v_lora.yaml: the shipped config for the 80GB+ tier (t2v) is not a regular file" ;;
  loop) ln -s t2v_lora.yaml "$f"; want="t2v_lora.yaml: the shipped config for the 80GB+ tier (t2v) is a symlink loop" ;;
  dangling) ln -s nowhere "$f"; want="t2v_lora.yaml: the shipped config for the 80GB+ tier (t2v) is missing" ;;
  big) truncate -s 100M "$f"; want="t2v_lora.yaml: file is 104857600 bytes, over the limit" ;;
  empty) : >"$f"; want="t2v_lora.yaml: the shipped config for the 80GB+ tier (t2v) is empty" ;;
  comment) echo '# nothing here' >"$f"; want="t2v_lora.yaml: the shipped config for the 80GB+ tier (t2v) is empty" ;;
  esac
  fails 1 "$TMP/t/configs/$want" plan --trainer-dir "$TMP/t" --gpu h200 --model "$TMP/m/ltx-2.safetensors" \
    --text-encoder "$TMP/m/gemma" --dataset cats --workspace "$TMP/ws-$kind"
  check "[ -z \"\$(ls -A '$TMP/ws-$kind' 2>/dev/null)\" ]"
done

# --- check RUN_DIR given a file: says so and points at --config ---------------
fails 1 "empty.yaml: not a directory (expected a run directory; a config file is checked with --config FILE)" check "$H/empty.yaml"
fails 1 "garbage.bin: not a directory" check "$H/garbage.bin"

# --- unreadable files and read-only directories (as root: run as nobody) ------
AS=()
if [ "$(id -u)" = 0 ]; then
  if command -v setpriv >/dev/null; then AS=(setpriv --reuid=65534 --regid=65534 --clear-groups); else AS=(skip); fi
fi
if [ "${AS[0]:-}" != skip ]; then
  chmod 755 "$TMP"
  U="$TMP/u"; mkdir -p "$U/ro" "$U/dd" "$U/model"
  cp "$TD/configs/t2v_lora.yaml" "$U/locked.yaml"; chmod 000 "$U/locked.yaml"
  cp "$TD/configs/t2v_lora.yaml" "$U/ro/c.yaml"
  cp "$VF_SHARED_DIR/fixtures/models/tiny-llama-bf16/config.json" "$U/model/config.json"
  chmod 000 "$U/model/config.json"
  echo '{}' >"$U/dd/gpus.json"; chmod 000 "$U/dd/gpus.json"
  chmod 755 "$U" "$U/dd" "$U/model"; chmod 555 "$U/ro"; chmod 644 "$U/ro/c.yaml"
  asrun() { # like fails, as the unprivileged user
    local want=$1 word=$2; shift 2
    test_case "as nobody: $*"
    rc=0
    timeout 30 "${AS[@]}" "$VRAMFIT" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null || rc=$?
    out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
    expect_rc "$want"
    expect_err_lines 1
    expect_err "$word"
  }
  asrun 1 "locked.yaml: Permission denied" config get "$U/locked.yaml" model.model_path
  asrun 1 "locked.yaml: Permission denied" config set "$U/locked.yaml" optimization.steps=5
  asrun 1 "locked.yaml: Permission denied" check --config "$U/locked.yaml"
  asrun 1 "locked.yaml" inspect "$U/locked.yaml"
  asrun 1 "model/config.json: Permission denied" estimate "$U/model/config.json" --gpu h200
  asrun 1 "model/config.json: Permission denied" inspect "$U/model"
  snap "$U/ro/c.yaml"
  asrun 1 "ro/c.yaml: cannot create temp file: Permission denied" config set "$U/ro/c.yaml" optimization.steps=5
  unchanged "$U/ro/c.yaml"
  no_stray "$U/ro/c.yaml"
  VRAMFIT_DATA_DIR="$U/dd" asrun 1 "dd/gpus.json: Permission denied" gpus
  # HOME not searchable (sudo keeping HOME=/root): no override, not an error.
  mkdir -p "$U/home/.config/vramfit"; echo '{}' >"$U/home/.config/vramfit/gpus.json"; chmod 700 "$U/home"
  test_case "as nobody: HOME not searchable"
  rc=0
  HOME="$U/home" XDG_CONFIG_HOME= timeout 30 "${AS[@]}" "$VRAMFIT" probe --gpu h200 >"$TMP/out" 2>"$TMP/err" </dev/null || rc=$?
  out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
  expect_rc 0
  expect_out "80GB+ tier"
  chmod -R u+rwX "$U"
fi

# --- --json stays valid UTF-8 JSON when a name is not UTF-8 --------------------
json_ok() { printf '%s' "$out" | python3 -c 'import json,sys; json.loads(sys.stdin.buffer.read().decode("utf-8"))' && _ok || _bad "--json output is not UTF-8 JSON"; }
test_case "probe --gpu non-UTF-8 name --json"
hrun probe --gpu "$(printf 'card\xff\xfe=65536')" --json
expect_rc 0
json_ok
BADST="$H/$(printf 'm\xff.safetensors')"
cp "$VF_SHARED_DIR/fixtures/models/tiny-llama-bf16/model.safetensors" "$BADST"
test_case "inspect non-UTF-8 file name --json"
hrun inspect "$BADST" --json
expect_rc 0
json_ok
test_case "estimate non-UTF-8 file name --json"
hrun estimate "$BADST" --gpu h200 --json
expect_rc 0
json_ok

# --- output that cannot be written is a failure, not exit 0 --------------------
if [ -w /dev/full ]; then
  for args in "gpus" "gpus --json" "models" "probe --gpu h200" "estimate llama2-7b --gpu h200" "help estimate"; do
    test_case "$args >/dev/full"
    rc=0
    # shellcheck disable=SC2086
    timeout 30 "$VRAMFIT" $args >/dev/full 2>"$TMP/err" || rc=$?
    err=$(cat "$TMP/err"); out=""
    expect_rc 1
    expect_err_lines 1
    expect_err "vramfit: error: standard output: No space left on device"
  done
fi

finish
