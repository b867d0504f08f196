#!/usr/bin/env bash
# docs.sh - every command of `vramfit --help` has its help text (`vramfit
# help CMD` and `CMD --help`, the same, naming the command), a README
# section and an entry in the man page, and the man page names every option
# of its help; docs/vramfit.1 renders without warnings and has no TODO.
. "$(dirname "$0")/lib.sh"
MAN="$VF_SOURCE_DIR/docs/vramfit.1"
README="$VF_SOURCE_DIR/README.md"

run --help
expect_rc 0
cmds=$(printf '%s\n' "$out" | sed -n '/^Commands:/,/^$/p' | awk 'NF && $1 != "Commands:" {print $1}')
check '[ -n "$cmds" ]'
for c in $cmds; do
  test_case "docs of $c"
  run help "$c"
  expect_rc 0
  expect_out "usage: vramfit $c"
  expect_out "Exit status"
  help=$out
  run "$c" --help
  expect_rc 0
  check '[ "$out" = "$help" ]'
  check "grep -q '^### vramfit $c\$' '$README'"
  check "grep -q '^\\.B vramfit $c\\b' '$MAN'"
done
test_case "help of an unknown command"
run help frob
expect_rc 2
expect_err "unknown command 'frob'"

test_case "man page renders"
if command -v groff >/dev/null; then
  check "[ -z \"\$(groff -man -ww -z '$MAN' 2>&1)\" ]"
  check "groff -man -Tutf8 -P -cbou '$MAN' 2>/dev/null | grep -q 'EXIT STATUS'"
fi
for v in NO_COLOR VRAMFIT_NVML_LIB VRAMFIT_NVIDIA_SMI VRAMFIT_SMI_TIMEOUT VRAMFIT_DATA_DIR \
  XDG_CONFIG_HOME LTX_TRAINER_DIR LTX_TRAININGS_DIR LTX_MODELS_DIR CUDA_VISIBLE_DEVICES \
  XDG_DATA_HOME VRAMFIT_HISTORY COLUMNS PYTHONUNBUFFERED CUDA_DEVICE_ORDER; do
  check "grep -q '^\\.B $v\$' '$MAN'"
done
test_case "man page: no TODO, every option of every help text"
check "! grep -q 'TODO' '$MAN'"
for c in $cmds; do
  run help "$c"
  for o in $(printf '%s\n' "$out" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
    check "sed 's/\\\\-/-/g' '$MAN' | grep -q -- '$o\\b'"
  done
done
finish
