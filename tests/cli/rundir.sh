#!/usr/bin/env bash
# rundir.sh - nothing outside the run directory, and commands that paste
# as they are (issue 19, items 2 and 3):
#   - plan --reuse into a run directory whose config.yaml, plan.md, plan.json or logs/
#     is a symbolic link: refused with a line naming the link, the targets
#     untouched; a run directory that is itself a link (or a dangling one):
#     refused, nothing created at its target; tune on a linked RUN refused;
#   - a workspace path holding a space, ', $(...) and a backtick: the launch
#     command on the terminal, in plan.md and in launch.sbatch are single
#     shell words per path (read back with Python's shlex), the #SBATCH
#     lines read back (sbatch's own rules: tests/cli/slurm.sh runs the real
#     sbatch --test-only) to the run's logs folder, and `check RUN` passes;
#   - a --trainer-dir holding a line break: one command still; a value an
#     #SBATCH line cannot carry (a line break, a backslash in --output):
#     plan --slurm refuses, naming the character.
. "$(dirname "$0")/lib.sh"

TD="$VF_SOURCE_DIR/tests/fixtures/ltx-trainer"
unset LTX_TRAININGS_DIR LTX_TRAINER_DIR LTX_MODELS_DIR
export HOME="$TMP/home"
mkdir -p "$HOME" "$TMP/models/gemma-3-12b-it" "$TMP/work" "$TMP/elsewhere"
echo '{"model_type": "gemma3"}' >"$TMP/models/gemma-3-12b-it/config.json"
cp "$VF_SHARED_DIR/fixtures/models/lora_weights_step_00050.safetensors" "$TMP/models/ltx-2-19b-dev.safetensors"
M=(--trainer-dir "$TD" --model "$TMP/models/ltx-2-19b-dev.safetensors" --text-encoder "$TMP/models/gemma-3-12b-it")
cd "$TMP/work"
E=$TMP/elsewhere

test_case "plan --reuse: a symlinked config.yaml is refused, its target untouched"
run plan "${M[@]}" --gpu h100-80gb --dataset cats --run-name r1
expect_rc 0
echo keep-config >"$E/config-target"
rm projects/r1/config.yaml
ln -s ../../../elsewhere/config-target projects/r1/config.yaml
run plan "${M[@]}" --gpu h100-80gb --dataset cats --run-name r1 --reuse
expect_rc 1
expect_err "projects/r1/config.yaml: is a symbolic link"
expect_err_lines 1
check '[ "$(cat "$E/config-target")" = keep-config ]'
check '[ -L projects/r1/config.yaml ]'

test_case "plan --reuse: a symlinked plan.md is refused, its target untouched"
rm projects/r1/config.yaml
echo keep-plan >"$E/plan-target"
rm projects/r1/plan.md
ln -s "$E/plan-target" projects/r1/plan.md
run plan "${M[@]}" --gpu h100-80gb --dataset cats --run-name r1 --reuse
expect_rc 1
expect_err "projects/r1/plan.md: is a symbolic link to $E/plan-target"
check '[ "$(cat "$E/plan-target")" = keep-plan ]'
check '[ -z "$(ls -A "$E" | grep -v -e config-target -e plan-target)" ]'

test_case "plan --reuse: a symlinked logs/ folder is refused, nothing written in its target"
rm projects/r1/plan.md
rmdir projects/r1/logs
mkdir "$E/logs-target"
ln -s "$E/logs-target" projects/r1/logs
run plan "${M[@]}" --gpu h100-80gb --dataset cats --run-name r1 --reuse
expect_rc 1
expect_err "projects/r1/logs: is a symbolic link"
check '[ -z "$(ls -A "$E/logs-target")" ]'

test_case "plan --reuse: a symlinked plan.json (written last) is refused before config.yaml or plan.md is touched"
run plan "${M[@]}" --gpu h100-80gb --dataset cats --run-name r2
expect_rc 0
echo my-notes >projects/r2/plan.md
cp projects/r2/config.yaml "$TMP/r2-config-before"
rm projects/r2/plan.json
ln -s "$E/json-target" projects/r2/plan.json
run plan "${M[@]}" --gpu h100-80gb --dataset cats --run-name r2 --reuse --steps 10
expect_rc 1
expect_err "projects/r2/plan.json: is a symbolic link to $E/json-target"
check 'cmp -s projects/r2/config.yaml "$TMP/r2-config-before"'
check '[ "$(cat projects/r2/plan.md)" = my-notes ]'
check '[ ! -e "$E/json-target" ]'

test_case "a run directory that is a symbolic link: refused, nothing created at its target"
mkdir "$E/run-target"
ln -s "$E/run-target" projects/linked
run plan "${M[@]}" --gpu h100-80gb --dataset cats --run-name linked --reuse
expect_rc 1
expect_err "projects/linked: the run directory is a symbolic link"
expect_err_lines 1
check '[ -z "$(ls -A "$E/run-target")" ]'
run plan "${M[@]}" --gpu h100-80gb --dataset cats --run-name linked
expect_rc 1
check '[ -z "$(ls -A "$E/run-target")" ]'
ln -s "$E/not-there" projects/dangling
run plan "${M[@]}" --gpu h100-80gb --dataset cats --run-name dangling
expect_rc 1
expect_err "projects/dangling: the run directory is a symbolic link"
check '[ ! -e "$E/not-there" ]'

test_case "tune on a run directory that is a symbolic link: refused, nothing written at its target"
run plan "${M[@]}" --gpu h100-80gb --dataset cats --run-name real
expect_rc 0
mkdir -p projects/real/dataset/.precomputed
ln -s "$TMP/work/projects/real" "$TMP/run-link"
before=$(cd projects/real && find . | LC_ALL=C sort)
run tune "$TMP/run-link" --no-check --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "sh tests/unit/fake-trainer.sh {config}" --history "$TMP/h.db"
expect_rc 1
expect_err "run-link: the run directory is a symbolic link"
check '[ "$(cd projects/real && find . | LC_ALL=C sort)" = "$before" ]'

# --- quoting ---------------------------------------------------------------
# word N (0-based) of line L as sh reads it
shword() { python3 -c 'import shlex,sys; print(shlex.split(sys.argv[1])[int(sys.argv[2])], end="")' "$1" "$2"; }
# an #SBATCH line's argument read by sbatch's rules (src/sbatch/opt.c
# _get_argument: \ takes the next byte, '' or "" group, unquoted # ends it)
sbatch_arg() {
  python3 - "$1" <<'PY'
import sys
s, out, q, esc = sys.argv[1].split(" ", 1)[1].lstrip(), "", None, False
for c in s:
    if esc: esc = False
    elif c == "\\": esc = True; continue
    elif q:
        if c == q: q = None; continue
    elif c in "\"'": q = c; continue
    elif c == "#" or c.isspace(): break
    out += c
if q: sys.exit("unmatched quote")
print(out, end="")
PY
}

test_case "a workspace path with a space, ', \$(...) and a backtick: every command pastes as one word per path"
WS="$TMP/ws a'b\$(touch PWNED)c\`touch PWNED2\`d"
mkdir -p "$WS"
run plan "${M[@]}" --gpu h100-80gb:2 --dataset cats --workspace "$WS" --run-name q --slurm
expect_rc 0
R="$WS/q"
launch=$(printf '%s\n' "$out" | sed -n 's/^  launch *//p')
check '[ "$(shword "$launch" 1)" = "$TD" ] && [ "$(shword "$launch" 2)" = "&&" ]'
check 'shlex_words=$(python3 -c "import shlex,sys; print(\"\n\".join(shlex.split(sys.argv[1])))" "$launch") && printf "%s\n" "$shlex_words" | grep -qxF "$R/config.yaml"'
md=$(grep -E '^  cd ' "$R/plan.md")
check 'python3 -c "import shlex,sys; w=shlex.split(sys.argv[1]); sys.exit(0 if sys.argv[2] in w and sys.argv[3] in w else 1)" "$md" "$R/config.yaml" "$R/logs/train.log"'
sub=$(grep '^# .*Submit: sbatch ' "$R/launch.sbatch" | sed 's/.*Submit: //')
check '[ "$(shword "$sub" 1)" = "$R/launch.sbatch" ]'
out_line=$(grep '^#SBATCH --output=' "$R/launch.sbatch")
check '[ "$(sbatch_arg "$out_line")" = "--output=$R/logs/slurm-%j.out" ]'
check 'bash -n "$R/launch.sbatch"'
# the script's own assignments read back (bash, nothing run)
check '[ "$(bash -c "$(grep -E "^(RUN_DIR|TRAINER_DIR)=" "$R/launch.sbatch"); printf %s \"\$RUN_DIR\"")" = "$R" ]'
check '[ ! -e PWNED ] && [ ! -e PWNED2 ] && [ ! -e "$WS/PWNED" ]'
run check "$R"
expect_rc 0
expect_no_out "RUN_DIR is not this run"
expect_no_out "--output is not under"

test_case "a % in the run directory is %% on the #SBATCH --output line"
mkdir -p "$TMP/p%ct"
run plan "${M[@]}" --gpu h100-80gb --dataset cats --workspace "$TMP/p%ct" --run-name q --slurm
expect_rc 0
check '[ "$(sbatch_arg "$(grep "^#SBATCH --output=" "$TMP/p%ct/q/launch.sbatch")")" = "--output=$TMP/p%%ct/q/logs/slurm-%j.out" ]'
run check "$TMP/p%ct/q"
expect_rc 0

test_case "a --trainer-dir holding a line break: the printed command stays one command"
TDN="$TMP/trainer
rm -rf x"
cp -r "$TD" "$TDN"
run plan --trainer-dir "$TDN" --model "$TMP/models/ltx-2-19b-dev.safetensors" --text-encoder "$TMP/models/gemma-3-12b-it" \
  --gpu h100-80gb --dataset cats --run-name nl --json
expect_rc 0
expect_json 'j["launch"]["line"].startswith("cd \x27" + j["trainer_dir"] + "\x27 && ")'
printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["launch"]["line"], end="")' >"$TMP/line"
check 'python3 -c "import shlex,sys; w=shlex.split(open(sys.argv[1]).read()); sys.exit(0 if w[1] == sys.argv[2] and w[2] == \"&&\" else 1)" "$TMP/line" "$TDN"'

test_case "#SBATCH values sbatch cannot take: a line break in --partition, a backslash in the run directory"
run plan "${M[@]}" --gpu h100-80gb --dataset cats --run-name nlp --slurm --partition "gpu
#SBATCH --wrap=x"
expect_rc 1
expect_err "--partition gpu"
expect_err "holds a line break, which an #SBATCH --partition line cannot carry"
check '[ ! -e projects/nlp/launch.sbatch ]'
mkdir -p "$TMP/back\\slash"
run plan "${M[@]}" --gpu h100-80gb --dataset cats --workspace "$TMP/back\\slash" --run-name q --slurm
expect_rc 1
expect_err "holds a backslash, which #SBATCH --output cannot take"
check '[ ! -e "$TMP/back\\slash/q/launch.sbatch" ]'

finish
