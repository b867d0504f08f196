#!/usr/bin/env bash
# options.sh - the command line as data (src/parse-options.c): one parser
# for every verb (--opt value, --opt=value, --, repeated options, range and
# choice checks that print the usage line and exit 2), "did you mean" for
# unknown commands and options, and what is printed from the option tables:
# each verb's --help list, the man page's OPTIONS section (docs/vramfit.1 is
# current), the bash and zsh completions; no option named in README.md or
# docs/ that its verb lacks; no function in src/ over 80 lines.
. "$(dirname "$0")/lib.sh"
README="$VF_SOURCE_DIR/README.md"
MAN="$VF_SOURCE_DIR/docs/vramfit.1"

test_case "did you mean: commands"
run estimat llama2-7b
expect_rc 2
expect_err "unknown command 'estimat'; did you mean 'estimate'?"
run fitt
expect_rc 2
expect_err "did you mean 'fit'?"
run frobnicate
expect_rc 2
expect_err "unknown command 'frobnicate'"
check '! printf "%s" "$err" | grep -q "did you mean"'

test_case "did you mean: options"
run estimate llama2-7b --grad-chkpt
expect_rc 2
expect_err "unknown option '--grad-chkpt'; did you mean '--grad-ckpt'?"
expect_err "Try 'vramfit help estimate'."
run fit llama2-7b --serch
expect_rc 2
expect_err "did you mean '--search'?"
run plan --dry-rn
expect_rc 2
expect_err "did you mean '--dry-run'?"

test_case "--opt=value is --opt value, for every verb's valued options"
run estimate llama2-7b --batch 4 --gpu h100-80gb --json
expect_rc 0
sep=$out
run estimate llama2-7b --batch=4 --gpu=h100-80gb --json
expect_rc 0
check '[ "$out" = "$sep" ]'
run fit llama2-7b --top=3 --sort=time --margin=0.2 --json
expect_rc 0
run triage - --exit=137 --steps=10 --json </dev/null
expect_rc 0
expect_out '"exit":	137'
run tune "$TMP/no-run" --steps=x
expect_rc 2
expect_err "--steps x: expected a whole number"

test_case "repeated options: the last value counts; --gpu keeps every one"
run estimate llama2-7b --batch 2 --batch 4 --gpu h100-80gb --json
check '[ "$out" = "$sep" ]'
run estimate llama2-7b --gpu h100-80gb --gpu l4 --json
expect_rc 0
expect_out '"l4"'
expect_out '"h100-80gb"'

test_case "-- ends the options"
run inspect --json -- llama2-7b
expect_rc 0
run inspect -- --json
expect_rc 1

test_case "range and choice checks: the usage line, exit 2"
run fit llama2-7b --margin=5
expect_rc 2
expect_err "--margin 5: expected a fraction from 0 to 0.99"
expect_err "Try 'vramfit help fit'."
run fit llama2-7b --sort fastest
expect_rc 2
expect_err "--sort fastest: expected time, cost or vram"
run triage "$TMP/none.log" --exit 300
expect_rc 2
expect_err "--exit 300: expected a whole number from 0 to 255"
run estimate llama2-7b --batch
expect_rc 2
expect_err "--batch: expected a value N"
run estimate llama2-7b --json=maybe
expect_rc 2
expect_err "--json: expected true or false"
run estimate llama2-7b --no-grad-ckpt=1
expect_rc 2
expect_err "--no-grad-ckpt takes no value"

test_case "every verb's help lists its options; the completions name them"
"$VRAMFIT" completion bash >"$TMP/c.bash"
check "bash -n '$TMP/c.bash'"
"$VRAMFIT" completion zsh >"$TMP/c.zsh"
if command -v zsh >/dev/null; then check "zsh -n '$TMP/c.zsh'"; fi
run completion fish
expect_rc 2
cmds=$("$VRAMFIT" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF && $1 != "Commands:" {print $1}')
for c in $cmds; do
  run help "$c"
  opts=$(printf '%s\n' "$out" | grep -oE '^  (-[a-z], )?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
  check '[ -n "$opts" ]'
  for o in $opts; do
    check "grep -q -- ' $o\\b' '$TMP/c.bash'"
    check "grep -qE -- \"'[*]?$o[=[]\" '$TMP/c.zsh'"
  done
done

test_case "bash completion completes options and their values"
comp() { # comp WORD...: the completions of the last word
  bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _vramfit; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$TMP/c.bash" vramfit "$@"
}
check "comp estimat | grep -qx estimate"
check "comp estimate llama2-7b --grad-c | grep -qx -- --grad-ckpt"
check "comp estimate --mode '' | sort | tr '\n' ' ' | grep -qx 'full infer lora '"
check "comp fit --sort t | grep -qx time"

test_case "the man page's OPTIONS section is what the tables print"
check "bash '$VF_SOURCE_DIR/scripts/man-options.sh' --check '$VRAMFIT' '$MAN'"
run help --man
expect_rc 0
expect_out ".SS vramfit estimate"
check "printf '%s' \"\$out\" | grep -q 'grad\\\\-ckpt'"

test_case "README and docs name no option their verb lacks"
for c in $cmds; do "$VRAMFIT" help "$c" >"$TMP/help-$c"; done
DOCOPT="$VF_SOURCE_DIR/tests/cli/doc_options.py"
check "python3 '$DOCOPT' '$TMP' '$README' \$(ls '$VF_SOURCE_DIR'/docs/*.md 2>/dev/null)"
# the check fails on a mention of an option a verb lacks
printf 'Run `vramfit estimate llama2-7b --grad-chkpt`.\n```\nvramfit fit MODEL --serch\n```\n' >"$TMP/bad.md"
check "[ \"\$(python3 '$DOCOPT' '$TMP' '$TMP/bad.md' | wc -l)\" -eq 2 ]"
check "! python3 '$DOCOPT' '$TMP' '$TMP/bad.md' >/dev/null"

test_case "no function in src/ over 80 lines"
check "bash '$VF_SOURCE_DIR/scripts/fn-length.sh' '$VF_SOURCE_DIR/src'"
{ echo 'static int long_one(void)'; echo '{'; for i in $(seq 1 80); do echo "	x++;"; done; echo '}'; } >"$TMP/long.c"
check "! bash '$VF_SOURCE_DIR/scripts/fn-length.sh' '$TMP/long.c' >/dev/null"
finish
