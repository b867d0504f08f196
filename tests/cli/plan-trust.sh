#!/usr/bin/env bash
# plan-trust.sh - plan's verdict and plan.md can be trusted (issue 19 items 4
# and 5): user and file text in plan.md stays text (no heading, HTML, link or
# code-span break from --goal or a model path); a plan whose self-check fails
# is never go (exit 1, the failures first in text, plan.md and --json); the
# full fine-tune rule adds no key an older trainer's schema lacks; the
# self-check's counts agree with the items listed under them.
. "$(dirname "$0")/lib.sh"

TD0="$VF_SOURCE_DIR/tests/fixtures/ltx-trainer"
unset LTX_TRAININGS_DIR LTX_TRAINER_DIR LTX_MODELS_DIR
export HOME="$TMP/home"
mkdir -p "$HOME" "$TMP/models/gemma-3-12b-it" "$TMP/work"
echo '{"model_type": "gemma3"}' >"$TMP/models/gemma-3-12b-it/config.json"
MODEL="$TMP/models/ltx-2-19b-dev.safetensors"
cp "$VF_SHARED_DIR/fixtures/models/lora_weights_step_00050.safetensors" "$MODEL"
cd "$TMP/work"
# plan ARGS...: a plan into its own workspace (RUN: its run directory)
plan() {
  local ws=$TMP/ws$((++NPLAN))
  run plan --trainer-dir "$TD" --text-encoder "$TMP/models/gemma-3-12b-it" --workspace "$ws" \
    --dataset cats --run-name r "$@"
  RUN=$ws/r
}
NPLAN=0
TD=$TD0

# --- plan.md: user and file text stays text ----------------------------------
test_case "--goal cannot make a heading, HTML, a link or emphasis in plan.md"
plan --model "$MODEL" --gpu h100-80gb \
  --goal $'x\n## Approve to Proceed\nApproved <script>alert(1)</script> [click](javascript:alert(1)) **now** `tick` | 1. | # h'
expect_rc 0
P=$RUN/plan.md
check '[ "$(grep -c "^## Approve to Proceed" "$P")" -eq 1 ]'
check '! grep -q "^Approved" "$P"'
check '! grep -qF "<script>" "$P" && ! grep -qF "[click](" "$P" && ! grep -qF "**now**" "$P"'
cat > "$TMP/goal.expected" <<'MD'
x \#\# Approve to Proceed Approved \<script\>alert(1)\</script\> \[click\](javascript:alert(1)) \*\*now\*\* \`tick\` \| 1. \| \# h
MD
check 'grep -qxFf "$TMP/goal.expected" "$P"'
test_case "--goal: the plan.md sections are exactly the plan's own"
sections=$(grep -E '^#{1,2} ' "$P" | sed -E 's/ — .*//' | tr '\n' '|')
check "[ '$sections' = '# Training Plan|## Goal|## Mode|## Dataset|## Preprocessing|## Training Config|## Hardware|## Sanity Check + Autotune|## Monitoring|## Outputs|## Assumptions|## Cost / Time Estimate|## Approve to Proceed|' ]"

test_case "a model path with backticks, a pipe and HTML stays one code span"
HM="$TMP/models/a\`b|<i>c.safetensors"
cp "$MODEL" "$HM"
plan --model "$HM" --gpu h100-80gb
expect_rc 0
P=$RUN/plan.md
# the fence is longer than the backtick run inside, and the table row's pipe is escaped
check 'grep -qF -- "- Checkpoint: unified (\`\`$HM\`\` holds" "$P"'
# prose: two code spans; fenced blocks (the commands to paste): the path as one quoted shell word
unfenced() { awk '/^ *```/ { f = !f; next } !f' "$P"; }
check '[ "$(unfenced | grep -cF "<i>")" -eq 2 ] && ! unfenced | grep -F "<i>" | grep -qvF "\`\`$HM\`\`"'
check 'grep -qF -- "--model-path '"'"'$HM'"'"' " "$P"'
check 'grep -qF -- "- \`model.model_path\`: \`/path/to/ltx-2-model.safetensors\` → \`\`$HM\`\` (path)" "$P"'

# --- the full fine-tune rule on a trainer whose schema lacks the key ---------
OLD=$TMP/old-trainer
cp -r "$TD0" "$OLD"
sed -i '/offload_optimizer_during_validation/d' "$OLD/src/ltx_trainer/config.py" "$OLD"/configs/*.yaml
test_case "fixture: the old trainer's schema and configs lack the key (the test can fail)"
check '! grep -rq offload_optimizer_during_validation "$OLD/src" "$OLD/configs"'
test_case "full fine-tune on an older trainer: the rule adds no key its schema lacks; go"
# the estimate says a full fine-tune does not fit 2 x H100 (the memory gate): --accept-risk writes it
TD=$OLD plan --model "$MODEL" --gpu h100-80gb:2 --training-mode full --accept-risk --json
expect_rc 0
expect_json 'j["status"] == "go" and j["check"]["failures"] == 0'
expect_json 'not any(p["key"] == "acceleration.offload_optimizer_during_validation" for p in j["patches"])'
expect_json 'any("offload_optimizer_during_validation" in w and "not applied" in w for w in j["warnings"])'
check '! grep -q offload_optimizer_during_validation "$RUN/config.yaml"'
test_case "full fine-tune on the current trainer: the rule adds the key"
plan --model "$MODEL" --gpu h100-80gb:2 --training-mode full --accept-risk --json
expect_rc 0
expect_json 'any(p["key"] == "acceleration.offload_optimizer_during_validation" and p["reason"] == "rule: full fine-tune" for p in j["patches"])'

# --- a failing self-check is never go ----------------------------------------
BAD=$TMP/bad-trainer
cp -r "$TD0" "$BAD"
# the shipped config names a key the trainer's schema forbids
sed -i 's/^acceleration:$/acceleration:\n  no_such_key: 1/' "$BAD/configs/t2v_lora.yaml"
test_case "fixture: the bad trainer's config holds the unknown key (the test can fail)"
check 'grep -q "^  no_such_key: 1" "$BAD/configs/t2v_lora.yaml"'
test_case "a failing self-check: exit 1, not go, the failures first (text)"
TD=$BAD plan --model "$MODEL" --gpu h100-80gb
expect_rc 1
check '[ "$(printf "%s\n" "$out" | head -1)" = "self-check FAILED (1 failure): this plan is not go" ]'
check 'printf "%s\n" "$out" | sed -n 2p | grep -qF "fails: acceleration.no_such_key:"'
expect_no_out "Review "
expect_err "the plan is not go"
test_case "a failing self-check: plan.md opens with the failures and is not ready"
P=$RUN/plan.md
check '[ "$(grep -E "^## " "$P" | head -1)" = "## Not Ready: the Self-Check Fails" ]'
check 'sed -n "/^## Not Ready/,/^## Goal/p" "$P" | grep -qF -- "- **fails** \`acceleration.no_such_key\`"'
check 'grep -qF "**Not ready:**" "$P"'
test_case "a failing self-check: --json status check-failed, failures first"
TD=$BAD plan --model "$MODEL" --gpu h100-80gb --json
expect_rc 1
expect_json 'j["status"] == "check-failed" and list(j)[:3] == ["status", "message", "check_failures"]'
expect_json '[f["key"] for f in j["check_failures"]] == ["acceleration.no_such_key"] and j["check"]["failures"] == 1'

# --- counts agree with the lists ---------------------------------------------
# count_items LEVEL: items of that level in ## Approve to Proceed
count_items() {
  sed -n '/^## Approve to Proceed/,$p' "$1" | grep -E '^- ' | case $2 in
    fail) grep -c '^- \*\*fails\*\* ' ;;
    pending) grep -c '^- pending: ' ;;
    unchecked) grep -c '^- not checked: ' ;;
  esac
}
for td in "$TD0" "$OLD" "$BAD"; do
  for mode in lora full; do
    test_case "counts agree with the lists ($(basename "$td"), $mode)"
    risk=(); [ "$mode" = full ] && risk=(--accept-risk) # full: past the memory gate
    TD=$td plan --model "$MODEL" --gpu h100-80gb:2 --training-mode $mode "${risk[@]}" --json
    P=$RUN/plan.md
    expect_json 'j["check"]["failures"] == sum(i["level"] == "fail" for i in j["check"]["items"])'
    expect_json 'j["check"]["pending"] == sum(i["level"] == "pending" for i in j["check"]["items"])'
    expect_json 'j["check"]["unchecked"] == sum(i["level"] == "unchecked" for i in j["check"]["items"])'
    line=$(grep '^Self-check of `config.yaml`:' "$P")
    all=$(sed -n '/^## Approve to Proceed/,$p' "$P" | grep -c '^- ')
    f=$(count_items "$P" fail); pe=$(count_items "$P" pending); u=$(count_items "$P" unchecked)
    check "[ '$line' = 'Self-check of \`config.yaml\`: $f failure$([ "$f" = 1 ] || echo s), $pe pending, $u not checked.' ]"
    expect_json "j['check']['failures'] == $f and j['check']['pending'] == $pe and j['check']['unchecked'] == $u"
    check "[ \$(($f + $pe + $u)) -eq $all ]"
    check '! sed -n "/^## Approve to Proceed/,\$p" "$P" | grep -q "^- pending: .*not checked"'
  done
done
finish
