#!/usr/bin/env bash
# history.sh - vramfit history on a history database made here: vramfit's
# writer makes the schema (new_history: a one-trial tune, its trial
# deleted), then python3's sqlite3 adds trials and the recoveries that
# vramfit run writes (schema 3's own table; the run flow that writes them
# for real is tests/cli/run.sh). history prints the trials, then each
# recovery per run (cause, change, step, time), in text and --json; --run
# keeps one run's; a history without recoveries prints no recoveries
# section. Readers (history, report history) open the database read-only:
# an empty file stays empty, an older schema is read as it is, and the
# file's bytes do not change. Another program's database (tables, no
# vramfit schema) is refused by readers and writers (tune, run) alike,
# with one line naming it, and left byte for byte as it was.
. "$(dirname "$0")/lib.sh"
unset VRAMFIT_HISTORY || true
DB=$TMP/history.db

test_case "an empty file: no trials, no recoveries, and the reader leaves it empty"
# a reader never creates the database nor writes to it: an existing empty
# file ($VRAMFIT_HISTORY here) is read as an empty history and stays 0 bytes
: >"$DB"
VRAMFIT_HISTORY="$DB" run history; expect_rc 0
expect_out "no trials recorded yet in $DB"
expect_no_out "recoveries"
run history --db "$DB" --json; expect_rc 0
expect_json 'j["trials"] == [] and j["recoveries"] == []'
run report history --history "$DB" -o "$TMP/h0.html"; expect_rc 0
check '[ -f "$DB" ] && [ ! -s "$DB" ]'
rm -f "$TMP/h0.html"

test_case "a writer takes an empty file as a new history (vramfit's schema, version 3)"
check 'new_history "$DB"'

python3 - "$DB" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
assert c.execute("pragma user_version").fetchone()[0] == 3
trial = ("INSERT INTO trials (config_hash, run_dir, trainer, gpu, tier, trial_index, change, deltas, outcome,"
         " evidence, exit_status, steps_done, step_seconds, peak_bytes, predicted_peak_bytes, wall_seconds,"
         " recorded_at) VALUES (?, ?, 'ltx2', 'cpu', NULL, ?, ?, '{}', ?, '', 0, 20, 1.5, ?, ?, 30,"
         " '2026-11-30T10:00:0' || ?)")
c.execute(trial, ("a1", "/runs/t2v-cats", 1, "baseline", "ok", 40 << 30, 42 << 30, 1))
c.execute(trial, ("b1", "/runs/t2v-dogs", 1, "baseline", "ok", 50 << 30, 48 << 30, 2))
rec = ("INSERT INTO recoveries (run_dir, attempt, step, cause, evidence, change, settings,"
       " predicted_peak_bytes, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
c.execute(rec, ("/runs/t2v-dogs", 1, 69, "oom", "CUDA out of memory at step 70",
                'optimization.optimizer_type: "adamw8bit"', '{"optimization.optimizer_type": "\\"adamw8bit\\""}',
                46 << 30, "2026-11-30T11:00:00Z"))
c.execute(rec, ("/runs/t2v-dogs", 2, 180, "oom", "out of memory during validation",
                "acceleration.offload_optimizer_during_validation: true",
                '{"acceleration.offload_optimizer_during_validation": "true"}', None, "2026-11-30T12:00:00Z"))
c.execute(rec, ("/runs/t2v-cats", 1, None, "oom", "", "optimization.batch_size: 1", "not json", None,
                "2026-11-30T13:00:00Z"))
c.commit()
PY

test_case "text: the trials, then the recoveries per run (run, attempt, step, cause, change, time)"
run history --db "$DB"; expect_rc 0
expect_out "estimator error on your runs: 2 trials compared"
expect_out "recoveries (vramfit run: the change applied after a failed training launch, which then resumed):"
expect_out_re 'recorded \(UTC\) +run +attempt +step +cause +change'
expect_out_re '2026-11-30T13:00:00Z +t2v-cats +1 +- +oom +optimization\.batch_size: 1$'
expect_out_re '2026-11-30T11:00:00Z +t2v-dogs +1 +69 +oom +optimization\.optimizer_type: "adamw8bit"$'
expect_out_re '2026-11-30T12:00:00Z +t2v-dogs +2 +180 +oom +acceleration\.offload_optimizer_during_validation: true$'
# per run: cats' recovery before dogs', dogs' by attempt
check '[ "$(printf "%s\n" "$out" | grep -oE "t2v-(cats|dogs) +[0-9]+ +[0-9-]+ +oom" | tr -s " " | tr "\n" ";")" = "t2v-cats 1 - oom;t2v-dogs 1 69 oom;t2v-dogs 2 180 oom;" ]'

test_case "--json: the recoveries with their settings, step and predicted peak (null when unknown)"
run history --db "$DB" --json; expect_rc 0
expect_json '[(r["run_dir"], r["attempt"], r["step"]) for r in j["recoveries"]] == [("/runs/t2v-cats", 1, None), ("/runs/t2v-dogs", 1, 69), ("/runs/t2v-dogs", 2, 180)]'
expect_json 'j["recoveries"][1]["cause"] == "oom" and j["recoveries"][1]["change"] == "optimization.optimizer_type: \"adamw8bit\""'
expect_json 'j["recoveries"][1]["settings"] == {"optimization.optimizer_type": "\"adamw8bit\""} and j["recoveries"][1]["predicted_peak_bytes"] == 46 << 30'
expect_json 'j["recoveries"][1]["evidence"] == "CUDA out of memory at step 70" and j["recoveries"][1]["recorded_at"] == "2026-11-30T11:00:00Z"'
expect_json 'j["recoveries"][2]["predicted_peak_bytes"] is None'
# settings that are not a JSON object are shown as stored, not dropped
expect_json 'j["recoveries"][0]["settings"] == "not json"'
expect_json 'len(j["trials"]) == 2'

test_case "--run: one run's trials and recoveries only"
mkdir -p "$TMP/runs/t2v-dogs"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('update recoveries set run_dir=? where run_dir=?', (sys.argv[2], '/runs/t2v-dogs')); c.execute('update trials set run_dir=? where run_dir=?', (sys.argv[2], '/runs/t2v-dogs')); c.commit()" "$DB" "$TMP/runs/t2v-dogs"
run history --db "$DB" --run "$TMP/runs/t2v-dogs" --json; expect_rc 0
expect_json '[r["attempt"] for r in j["recoveries"]] == [1, 2] and len(j["trials"]) == 1'
run history --db "$DB" --run "$TMP/runs/t2v-dogs"; expect_rc 0
expect_out_re 't2v-dogs +2 +180 +oom'
expect_no_out "t2v-cats"

test_case "a run with trials and no recoveries: no recoveries section"
mkdir -p "$TMP/runs/t2v-owls"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('update trials set run_dir=? where run_dir=?', (sys.argv[2], '/runs/t2v-cats')); c.commit()" "$DB" "$TMP/runs/t2v-owls"
run history --db "$DB" --run "$TMP/runs/t2v-owls"; expect_rc 0
expect_out "baseline"; expect_no_out "recoveries"

test_case "--run of a run with no trials: says so for that run, not that the history is empty"
mkdir -p "$TMP/runs/t2v-bats"
run history --db "$DB" --run "$TMP/runs/t2v-bats"; expect_rc 0
expect_out "no trials of $TMP/runs/t2v-bats recorded in $DB"
expect_no_out "no trials recorded yet"
test_case "--db naming no file: an error naming it, and nothing created there"
run history --db "$TMP/no-such-dir/history.db"; expect_rc 1
expect_err "$TMP/no-such-dir/history.db: no such history database"
check '[ ! -e "$TMP/no-such-dir" ]'
run report history --history "$TMP/no-such-dir/history.db" -o "$TMP/h.html"; expect_rc 1
expect_err "$TMP/no-such-dir/history.db: no such history database"
check '[ ! -e "$TMP/no-such-dir" ] && [ ! -e "$TMP/h.html" ]'
test_case "\$VRAMFIT_HISTORY naming no file: the same error as --db, nothing created"
run_env() { rc=0; env "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?; out=$(cat "$TMP/out"); err=$(cat "$TMP/err"); }
run_env VRAMFIT_HISTORY="$TMP/typo/histroy.db" "$VRAMFIT" history; expect_rc 1
expect_err "$TMP/typo/histroy.db: no such history database"
expect_err_lines 1
check '[ ! -e "$TMP/typo" ]'
run_env VRAMFIT_HISTORY="$TMP/typo/histroy.db" "$VRAMFIT" report history -o "$TMP/h.html"; expect_rc 1
expect_err "$TMP/typo/histroy.db: no such history database"
check '[ ! -e "$TMP/typo" ] && [ ! -e "$TMP/h.html" ]'

test_case "a fresh HOME: history and report history read no trials and create nothing"
mkdir -p "$TMP/fresh"
run_env -u VRAMFIT_HISTORY -u XDG_DATA_HOME HOME="$TMP/fresh" "$VRAMFIT" history; expect_rc 0
expect_out "no trials recorded yet in $TMP/fresh/.local/share/vramfit/history.db"
run_env -u VRAMFIT_HISTORY -u XDG_DATA_HOME HOME="$TMP/fresh" "$VRAMFIT" history --json; expect_rc 0
expect_json 'j["trials"] == [] and j["recoveries"] == []'
run_env -u VRAMFIT_HISTORY -u XDG_DATA_HOME HOME="$TMP/fresh" "$VRAMFIT" report history -o "$TMP/fresh-h.html"; expect_rc 0
check '[ -f "$TMP/fresh-h.html" ]'
run_env -u VRAMFIT_HISTORY XDG_DATA_HOME="$TMP/fresh/xdg" HOME="$TMP/fresh" "$VRAMFIT" history; expect_rc 0
expect_out "no trials recorded yet in $TMP/fresh/xdg/vramfit/history.db"
check '[ -z "$(ls -A "$TMP/fresh")" ]'
rm -f "$TMP/fresh-h.html"

test_case "a genuine history reads read-only: the same trials, its bytes unchanged"
cp "$DB" "$TMP/history.orig"
run history --db "$DB" --json; expect_rc 0
expect_json 'len(j["trials"]) == 2 and len(j["recoveries"]) == 3'
run report history --history "$DB" -o "$TMP/h1.html"; expect_rc 0
check '[ -s "$TMP/h1.html" ]'
check 'cmp -s "$DB" "$TMP/history.orig"'

test_case "a schema-1 history (an older vramfit's) reads as it is, unchanged; a writer migrates it"
V1=$TMP/v1.db
python3 - "$V1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.executescript("""
CREATE TABLE trials (config_hash TEXT PRIMARY KEY, run_dir TEXT NOT NULL, trainer TEXT, gpu TEXT, tier TEXT,
 trial_index INTEGER NOT NULL, change TEXT NOT NULL, deltas TEXT NOT NULL, outcome TEXT NOT NULL, evidence TEXT,
 exit_status INTEGER, steps_done INTEGER, step_seconds REAL, peak_bytes INTEGER, predicted_peak_bytes INTEGER,
 wall_seconds REAL, recorded_at TEXT NOT NULL);
CREATE INDEX trials_run ON trials(run_dir, trial_index);
INSERT INTO trials VALUES ('old', '/runs/v1', 'ltx2', 'cpu', NULL, 1, 'baseline', '{}', 'ok', '', 0, 20, 1.5,
 42949672960, 45097156608, 30, '2026-01-01T00:00:00Z');
PRAGMA user_version = 1;
""")
c.commit()
PY
cp "$V1" "$TMP/v1.orig"
run history --db "$V1" --json; expect_rc 0
expect_json '[(t["run_dir"], t["change"]) for t in j["trials"]] == [("/runs/v1", "baseline")] and j["recoveries"] == []'
run history --db "$V1"; expect_rc 0
expect_out "estimator error on your runs: 1 trial"
run report history --history "$V1" -o "$TMP/v1.html"; expect_rc 0
check 'cmp -s "$V1" "$TMP/v1.orig"'
scratch_run "$TMP/runs/v1-run"
tune_fake1 "$TMP/runs/v1-run" "$V1"; expect_rc 0
check '[ "$(python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute(\"pragma user_version\").fetchone()[0], c.execute(\"select count(*) from trials\").fetchone()[0])" "$V1")" = "3 2" ]'
rm -f "$TMP/v1.html"

# foreign DB: another program's database at $F (its copy at $F.orig)
foreign() {
  rm -f "$F" && python3 - "$F" "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
c.execute("CREATE TABLE %s (id INTEGER PRIMARY KEY, what TEXT, qty REAL)" % sys.argv[2])
c.execute("INSERT INTO users (name) VALUES ('ada')")
c.execute("INSERT INTO %s (what, qty) VALUES ('ACME', 12.5)" % sys.argv[2])
c.commit()
PY
  cp "$F" "$F.orig"
}
F=$TMP/trades.db
test_case "another program's database: history and report history refuse it, one line naming it, its bytes unchanged"
foreign trades
msg="$F: not a vramfit history (it has tables trades, users and no vramfit tables); name another history database"
run history --db "$F"; expect_rc 1
expect_err "vramfit: error: $msg"; expect_err_lines 1
run history --db "$F" --json; expect_rc 1
expect_err "$msg"; expect_err_lines 1
run_env VRAMFIT_HISTORY="$F" "$VRAMFIT" history; expect_rc 1
expect_err "$msg"; expect_err_lines 1
run report history --history "$F" -o "$TMP/f.html"; expect_rc 1
expect_err "$msg"; expect_err_lines 1
check '[ ! -e "$TMP/f.html" ]'
check 'cmp -s "$F" "$F.orig" && [ ! -e "$F-wal" ] && [ ! -e "$F-journal" ]'

test_case "another program's database: the writers (tune, run) refuse it before writing a byte"
scratch_run "$TMP/runs/foreign-run"
lsrun() { (cd "$TMP/runs/foreign-run" && find . ! -name .vramfit.lock | LC_ALL=C sort); } # the lock: every tune's
before=$(lsrun)
tune_fake1 "$TMP/runs/foreign-run" "$F"; expect_rc 1
expect_err "vramfit: error: $msg"; expect_err_lines 1
check 'cmp -s "$F" "$F.orig"'
# nothing of the sweep is made in the run either (no logs/, no trial configs)
check '[ "$(lsrun)" = "$before" ] && [ ! -e "$TMP/runs/foreign-run/logs" ]'
run_env VRAMFIT_HISTORY="$F" VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI=/nonexistent/nvidia-smi "$VRAMFIT" tune \
  "$TMP/runs/foreign-run" --no-check --trainer-dir "$VF_SOURCE_DIR" --trainer-cmd "sh tests/unit/fake-trainer.sh {config}" \
  --steps 2 --max-trials 1 --quiet; expect_rc 1
expect_err "$msg"
check 'cmp -s "$F" "$F.orig"'
# vramfit run: refused at the start, before the preprocessing (its tune and
# recoveries would write there), no run.json
mkdir -p "$TMP/models/gemma-3-12b-it" "$TMP/plans"
echo '{"model_type": "gemma3"}' >"$TMP/models/gemma-3-12b-it/config.json"
cp "$VF_SHARED_DIR/fixtures/models/lora_weights_step_00050.safetensors" "$TMP/models/ltx-2-19b-dev.safetensors"
(cd "$TMP/plans" && HOME=$TMP/home "$VRAMFIT" plan --trainer-dir "$VF_SOURCE_DIR/tests/fixtures/ltx-trainer" \
  --model "$TMP/models/ltx-2-19b-dev.safetensors" --text-encoder "$TMP/models/gemma-3-12b-it" --gpu h100-80gb \
  --dataset cats --run-name r1 >/dev/null)
P=$TMP/plans/projects/r1
check '[ -f "$P/plan.json" ]'
run_env HOME="$TMP/home" VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI=/nonexistent/nvidia-smi "$VRAMFIT" run "$P" \
  --history "$F"; expect_rc 1
expect_err "vramfit: error: $msg"; expect_err_lines 1
check 'cmp -s "$F" "$F.orig" && [ ! -e "$P/run.json" ]'

test_case "another program's table named trials is not vramfit's: refused, unchanged"
foreign trials
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('pragma user_version = 2'); c.commit()" "$F"
cp "$F" "$F.orig"
run history --db "$F"; expect_rc 1
expect_err "$F: not a vramfit history (it has tables trials, users and no vramfit schema)"; expect_err_lines 1
tune_fake1 "$TMP/runs/foreign-run" "$F"; expect_rc 1
expect_err "$F: not a vramfit history"
check 'cmp -s "$F" "$F.orig"'
finish
