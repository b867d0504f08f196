#!/usr/bin/env bash
# report.sh - vramfit report end to end: every report kind (estimate, fit,
# a tune run directory after a real CPU sweep with an out-of-memory trial,
# history, plan.html) is one self-contained page under 2 MB whose embedded
# JSON reads back; then, in a real browser (Debian's chromium headless
# shell, installed by scripts/install-deps.sh --test), each page renders
# without console errors, the DOM after its script holds the titles, axis
# labels, series and numbers, and a 1280-wide screenshot has ink inside
# every chart's box, with JavaScript on and off. With VF_DOCS_DIR set
# (make docs) the 1280x800 screenshots are written there.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
export XDG_DATA_HOME=$TMP/xdg OMP_NUM_THREADS=1
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI=/nonexistent/nvidia-smi
HERE=$(cd "$(dirname "$0")" && pwd)

# page_json FILE EXPR: the page's embedded data object satisfies a python expression over j
page_json() {
  $PY - "$1" "$2" <<'EOF'
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script type="application/json" id="vramfit-data">(.*?)</script>', html, re.S)
j = json.loads(m.group(1))
sys.exit(0 if eval(sys.argv[2]) else 1)
EOF
}
# self_contained FILE: no network reference of any kind, under 2 MB
self_contained() {
  local f=$1
  [ -s "$f" ] && [ "$(stat -c %s "$f")" -lt 2000000 ] &&
    ! grep -qiE '(src|href)="(https?:)?//|@import|url\(|<link ' "$f"
}

# --- estimate ------------------------------------------------------------------
cd "$TMP" || exit 1
test_case "report estimate: the acceptance command"
run report estimate llama3-8b --mode lora --gpu rtx-4090 --gpu a100-80gb -o r.html
expect_rc 0; expect_out "wrote r.html"
check 'self_contained r.html'
check 'grep -q "data-chart=\"phases\"" r.html && grep -q "data-chart=\"batch\"" r.html'
check 'grep -q ">forward</text>" r.html && grep -q ">backward</text>" r.html && grep -q ">optimizer</text>" r.html'
check 'grep -q "RTX 4090 capacity" r.html && grep -q "A100 SXM4 80GB capacity" r.html'
check 'grep -q "<h2>Assumptions</h2>" r.html && grep -q "LoRA rank 16 (--lora-rank)" r.html'
check 'grep -q "does not fit RTX 4090: needs" r.html'
test_case "report estimate: the embedded JSON is the estimate --json object plus the charts' data"
"$VRAMFIT" estimate llama3-8b --mode lora --gpu rtx-4090 --gpu a100-80gb --json > est.json
check 'page_json r.html "j[\"report\"] == \"estimate\" and j[\"memory\"] == json.load(open(\"est.json\"))[\"memory\"]"'
check 'page_json r.html "[p[\"phase\"] for p in j[\"phases\"]] == [\"forward\", \"loss\", \"backward\", \"optimizer\"]"'
check 'page_json r.html "sum(j[\"phases\"][1][\"terms\"].values()) == j[\"memory\"][\"peak_bytes\"]"'
check 'page_json r.html "[g[\"gpu\"] for g in j[\"batch_sweep\"]] == [\"rtx-4090\", \"a100-80gb\"] and all(len(g[\"points\"]) >= 2 for g in j[\"batch_sweep\"])"'
check 'page_json r.html "j[\"batch_sweep\"][1][\"points\"][-1][\"batch\"] == j[\"gpus\"][1][\"max_batch\"] + 1 and not j[\"batch_sweep\"][1][\"points\"][-1][\"fits\"]"'
test_case "report --open without a display says where the page is"
DISPLAY= WAYLAND_DISPLAY= run report estimate llama3-8b --mode lora --gpu rtx-4090 -o o.html --open
expect_rc 0; expect_err "no display: open o.html in a browser"
test_case "estimate --html writes the same page; the text output is unchanged"
run estimate llama3-8b --mode lora --gpu rtx-4090 --gpu a100-80gb --html e.html
expect_rc 0; expect_out "Memory at the peak"
check 'cmp -s e.html r.html'
test_case "report estimate: default name, a model that fits with room, a video DiT"
run report estimate qwen2.5-1.5b --mode lora --gpu rtx-5090
expect_rc 0; check '[ -f qwen2.5-1.5b.html ]'
check 'grep -q "fits RTX 5090 with [0-9.]* GiB to spare at batch 1, up to batch [0-9]* (batch [0-9]* needs" qwen2.5-1.5b.html'
run report estimate ltx-2-19b --gpu h100-80gb -o dit.html
expect_rc 0; check 'self_contained dit.html && page_json dit.html "j[\"model\"][\"kind\"] == \"dit\""'
test_case "report estimate --mode infer: KV cache and users against the context (issue 27)"
run report estimate llama3.1-8b --mode infer --engine vllm --gpu rtx-4090 --gpu a100-80gb --ctx 8192 -o infer.html
expect_rc 0
check 'self_contained infer.html && grep -q "data-chart=\"infer-kv\"" infer.html && grep -q "data-chart=\"infer-users\"" infer.html'
check 'page_json infer.html "j[\"inference_sweep\"][\"engine\"] == \"vllm\" and [g[\"gpu\"] for g in j[\"inference_sweep\"][\"gpus\"]] == [\"rtx-4090\", \"a100-80gb\"]"'
check 'page_json infer.html "8192 in j[\"inference_sweep\"][\"gpus\"][0][\"contexts\"] and j[\"inference_sweep\"][\"gpus\"][0][\"max_users\"][j[\"inference_sweep\"][\"gpus\"][0][\"contexts\"].index(8192)] == 5"'
check 'grep -q "<h2>Users that fit vs context: at 8192 tokens RTX 4090 5;" infer.html'
run report estimate llama3.1-70b --mode infer --engine llamacpp --gpu rtx-3090:2 --ctx 4096 -o infer-cpp.html
expect_rc 0
check 'page_json infer-cpp.html "j[\"inference_sweep\"][\"gpus\"][0][\"kv_budget_bytes\"] > 0"'
test_case "report estimate --engine: one verdict, the engine's (headline, memory as it lays it out; no training phases, no batch sweep)"
"$VRAMFIT" estimate llama3.1-70b --mode infer --engine llamacpp --gpu rtx-3090:2 --ctx 4096 --json > infer-cpp.json
check 'page_json infer-cpp.html "j[\"memory\"] == json.load(open(\"infer-cpp.json\"))[\"memory\"] and j[\"memory\"][\"engine\"] == \"llamacpp\""'
check 'page_json infer-cpp.html "\"phases\" not in j and \"batch_sweep\" not in j"'
check 'grep -q "<h1 id=\"headline\">llama3.1-70b served by llama.cpp: fits RTX 3090 x2 with 3.1 GiB to spare (20.9 GiB on the device), 5 users at 4096 tokens</h1>" infer-cpp.html'
check 'grep -q "<h2>Memory as llama.cpp lays it out on RTX 3090 x2 (GPU 1, the fullest): it holds 20.9 GiB of 24.0 GiB</h2>" infer-cpp.html'
check 'grep -qE "<th scope=\"row\"[^>]*>on device</th><td class=\"nw\">20.9 GiB</td>" infer-cpp.html && grep -qE "<th scope=\"row\"[^>]*>weights \(39 layers \+ output\)</th>" infer-cpp.html'
for f in infer.html infer-cpp.html; do
  check '! grep -qE "data-chart=\"(phases|batch|steptime|throughput)\"|micro-batch|logits phase|training step</|use_cache|optimizer states created" '"$f"
done
check 'grep -q "<h1 id=\"headline\">llama3.1-8b served by vLLM: fits RTX 4090, holding 21.6 GiB (its budget), 5 users at 8192 tokens; fits A100 SXM4 80GB" infer.html'
check 'grep -q "<h2>KV cache of one sequence vs context (llama.cpp): " infer-cpp.html && grep -q "<h2>KV cache of one sequence vs context (vLLM): " infer.html'
check 'grep -q "Not estimated: the CUDA graphs vLLM captures" infer.html && grep -q ">TTFT</th>" infer.html && grep -q ">decode tok/s</th>" infer.html'
run report estimate llama3.1-8b --mode infer --engine vllm --gpu rtx-4090 -o refused.html
expect_rc 0
check 'grep -q "<h1 id=\"headline\">llama3.1-8b served by vLLM: does not fit RTX 4090: the model&#39;s max seq len (131072) is larger than the maximum number of tokens that can be stored in KV cache (47376); --ctx 47376 or less fits</h1>" refused.html'
test_case "report estimate: GPUs of identical peaks: every line drawn (interleaved dashes, nested markers), one capacity line each for equal capacities, every legend entry a drawn series"
run report estimate llama3-8b --mode lora --gpu a100-80gb --gpu h100-80gb -o same.html
expect_rc 0
check 'grep -q "stroke-dasharray:6 6;stroke-dashoffset:0" same.html && grep -q "stroke-dasharray:6 6;stroke-dashoffset:-6" same.html'
check 'grep -q ">A100 SXM4 80GB 80.0 GiB, H100 80GB HBM3 79.6 GiB</text>" same.html && grep -q ">A100 SXM4 80GB, H100 80GB HBM3 capacity</button>" same.html'
run report estimate llama3-8b --mode lora --gpu rtx-4090 --gpu rtx-3090 --gpu a100-80gb --gpu h100-80gb -o four.html
expect_rc 0
check 'grep -q ">RTX 4090, RTX 3090 24.0 GiB</text>" four.html && grep -q "Not drawn: RTX 4090, RTX 3090 (no micro-batch fits)." four.html'
test_case "report estimate: capacity labels clear of the other capacity lines (L4 22.5 GiB under the 24 GiB line)"
run report estimate qwen2.5-1.5b --mode full --gpu rtx-4090 --gpu rtx-3090 --gpu l4 -o caps.html
expect_rc 0
test_case "report estimate: a term too thin to draw is named, not a legend entry of its own"
check 'grep -qE "Too thin to draw at this scale: [^<]*autocast copies \([0-9]+ MiB\)" r.html && ! grep -q ">autocast copies</button>" r.html'
test_case "report estimate: the title keeps the model id as written"
check 'grep -q "<h1 id=\"headline\">ltx-2-19b lora: " dit.html'
test_case "report estimate: one fitting batch is a figure in the text, said once, not a one-dot chart"
run report estimate ltx-2-19b --gpu h100-80gb --video 1280x720x121 -o one.html
expect_rc 0
check '! grep -q "data-chart=\"steptime\"" one.html && ! grep -q "data-chart=\"throughput\"" one.html'
check 'grep -qE "<h2>Step time: H100 80GB HBM3 [0-9.]+ s per step at batch 1</h2>" one.html && grep -q "Only one micro-batch fits" one.html'

# --- fit -------------------------------------------------------------------------
test_case "report fit: the grid and the Pareto front"
run report fit llama3-8b --mode lora --tokens 1e9 -o fit.html
expect_rc 0
check 'self_contained fit.html && grep -q "data-chart=\"grid\"" fit.html && grep -q "data-chart=\"front\"" fit.html'
check 'grep -q ">1 GPU</text>" fit.html && grep -q ">8 GPUs</text>" fit.html && grep -q "chosen: " fit.html'
test_case "report fit: the Pareto chart on a log axis over decades, the front's points labelled"
check 'grep -qF ">time of the whole run (h, log scale)</text>" fit.html && grep -qF ">cost of the whole run (\$)</text>" fit.html'
check '[ "$(grep -o "<text class=\"nt\"[^>]*>[a-z0-9-]* x[0-9]*</text>" fit.html | wc -l)" -ge 4 ]'
test_case "report fit: the grid's shading has a key (a swatch per largest micro-batch shown)"
check 'grep -qE "Shading, by the largest micro-batch that fits: <span class=\"nw\"><span class=\"sw f0\" style=\"opacity:0\.[0-9]+\"></span> &#8804; 1</span>.* &#8804; 8</span></p>" fit.html'
test_case "report fit: the grid's legend names only the kinds of cell it shows"
check 'grep -q ">fits</button>" fit.html && ! grep -q ">does not fit</button>" fit.html'
check 'page_json fit.html "j[\"report\"] == \"fit\" and j[\"mode\"] == \"table\" and sorted(set(r[\"gpus\"] for r in j[\"rows\"] if not r.get(\"split\"))) == [1, 2, 4, 8]"'
test_case "report fit: one verdict with the CLI: every row's words (yes / tight / no), a tight row with no time or cost"
run report fit llama3-70b --mode lora --steps 1000 -o fit70.html
expect_rc 0
"$VRAMFIT" fit llama3-70b --mode lora --steps 1000 > fit70.txt
check 'grep -q " tight " fit70.txt'
# the CLI's rows (GPU, n, word, cost is -) against the page's table (GPU, count, fits, time and cost are -)
check '$PY "$HERE/page_check.py" rows fit70.txt fit70.html'
check 'grep -q "<text class=\"ct\" [^>]*>tight</text>" fit70.html && grep -q ">tight</button>" fit70.html'
test_case "report fit: costs to the cent below \$100, as fit prints them"
check 'grep -qE "<td class=\"nw\">\\\$[0-9]+\.[0-9]{2}</td>" fit70.html'
# shard forbidden: under LoRA, ZeRO-1/2 gather only the adapters, so they tie
# ddp's time at a lower cost and the front has two points
run fit llama3-8b --mode lora --gpu a100-80gb:4 --search --tokens 1e9 --forbid shard --html fits.html
expect_rc 0; check 'self_contained fits.html && page_json fits.html "j[\"mode\"] == \"search\" and len(j[\"results\"]) >= 1"'
test_case "report fit: a front of one point is the chosen point, no 'Pareto front' series or entry"
check '! grep -q ">Pareto front</button>" fits.html && grep -q ">chosen</button>" fits.html'
test_case "report fit: costs bunched under a few far ones go on a log axis"
run report fit llama2-13b --mode full --tokens 1e9 -o fit-skew.html
expect_rc 0; check 'grep -qF ">cost of the whole run (\$, log scale)</text>" fit-skew.html'

# --- plan writes plan.html beside plan.md (the plan tests' trainer fixture) --------
test_case "plan writes plan.html: decisions, the estimate's phases against the GPU"
TD="$VF_SOURCE_DIR/tests/fixtures/ltx-trainer"
mkdir -p "$TMP/models/gemma-3-12b-it" "$TMP/work"
echo '{"model_type": "gemma3"}' >"$TMP/models/gemma-3-12b-it/config.json"
cp "$VF_SHARED_DIR/fixtures/models/lora_weights_step_00050.safetensors" "$TMP/models/ltx-2-19b-dev.safetensors"
(cd "$TMP/work" && LTX_TRAININGS_DIR= LTX_TRAINER_DIR= LTX_MODELS_DIR= HOME="$TMP/home" "$VRAMFIT" plan \
  --trainer-dir "$TD" --model "$TMP/models/ltx-2-19b-dev.safetensors" \
  --text-encoder "$TMP/models/gemma-3-12b-it" --gpu h100-80gb --dataset cats >/dev/null 2>&1)
P=$(ls -d "$TMP"/work/projects/t2v-cats-*/ 2>/dev/null | head -1)
check '[ -n "$P" ] && [ -f "$P/plan.md" ] && self_contained "$P/plan.html"'
check 'page_json "$P/plan.html" "j[\"report\"] == \"plan\" and j[\"tier\"][\"name\"] and len(j[\"phases\"]) >= 3"'
check 'grep -q "data-chart=\"phases\"" "$P/plan.html" && grep -q "<h2>The plan&#39;s decisions</h2>" "$P/plan.html"'
test_case "plan.html: Markdown in the assumptions rendered (code spans, no literal backticks)"
check '$PY -c "import re,sys; t=re.sub(r\"<script.*?</script>\", \"\", open(sys.argv[1], encoding=\"utf-8\").read(), flags=re.S); sys.exit(0 if chr(96) not in t and \"<code>\" in t else 1)" "$P/plan.html"'
test_case "report RUN_DIR before tune: the plan's page, not a dead end"
run report "$P"
expect_rc 0; expect_out "no trials recorded yet (vramfit tune adds the run's page); the plan's page: $P/plan.html"
run report "$P" -o "$TMP/plan-copy.html"
expect_rc 0; check 'cmp -s "$TMP/plan-copy.html" "$P/plan.html"'
cd "$TMP" || exit 1

# --- usage and errors ------------------------------------------------------------
test_case "report usage"
run report; expect_rc 2
run report nowhere; expect_rc 2; expect_err "nowhere: no such directory (report takes estimate, fit, history or a run directory)"
run report estimate --params 7B; expect_rc 2; expect_err "give MODEL first, or -o FILE"
run report estimate nosuchmodel -o x.html; expect_rc 1; check '[ ! -e x.html ]'
test_case "report DIR that is not a run workspace: one line naming the directory and what it expected"
mkdir -p empty-run
run report empty-run; expect_rc 1; expect_err_lines 1
expect_err "vramfit: error: empty-run: not a run workspace: expected config.yaml or plan.md (vramfit plan writes them) or trials recorded by vramfit tune"
test_case "report RUN_DIR of a workspace before plan.html and tune: no trials recorded"
mkdir -p bare-run && echo 'steps: 1' >bare-run/config.yaml
run report bare-run; expect_rc 1; expect_err "no trials recorded for this run"
run report history -o h0.html; expect_rc 0
check 'grep -q "0 trials recorded" h0.html'

# --- a tune run: the CPU sweep of tests/cli/tune.sh ----------------------------------
TRAINER=$VF_SOURCE_DIR/examples/ltx-mini-trainer
CMD="$PY scripts/train.py {config} --disable-progress-bars"
pages="r.html fit.html"
if have_torch "the tune sweep's report cases"; then
  R=$TMP/sweep
  mkdir -p "$R/overfit/.precomputed" "$R/dataset" "$R/outputs" "$R/logs"
  cp "$TRAINER/data/text.txt" "$R/overfit/.precomputed/sample.txt"
  cp "$TRAINER/configs/t2v_lora_low_vram.yaml" "$R/config.yaml"
  "$VRAMFIT" config set "$R/config.yaml" "model.model_path=\"$TRAINER/models/oom-test.json\"" \
    "model.text_encoder_path=\"$TRAINER/models\"" lora.rank=64 lora.alpha=64 >/dev/null
  # quantization already off in the run's config: trial 2 ("quantization off")
  # is a no-op and trial 3 (adamw) always runs, whatever a busy machine does to
  # the measured step times (no decision of this test depends on them)
  "$VRAMFIT" config set "$R/config.yaml" acceleration.quantization=null >/dev/null
  # the limit: trial 2's peak data size + 6 MiB (tune.sh explains the margin)
  "$VRAMFIT" config set "$R/config.yaml" acceleration.quantization=null optimization.steps=3 \
    validation.interval=3 checkpoints.interval=null "output_dir=\"$TMP/calib\"" \
    "data.preprocessed_data_root=\"$R/overfit/.precomputed\"" --dry-run > "$TMP/calib.yaml"
  (cd "$TRAINER" && exec $PY scripts/train.py "$TMP/calib.yaml" --disable-progress-bars) >"$TMP/calib.log" 2>&1 &
  pid=$! peak=0
  while kill -0 $pid 2>/dev/null; do
    while read -r k v _; do
      [ "$k" = "VmData:" ] && { [ "$v" -gt "$peak" ] && peak=$v; break; }
    done < /proc/$pid/status 2>/dev/null
  done
  wait $pid
  test_case "tune writes RUN_DIR/report.html with every trial, the reverted OOM one included"
  run tune "$R" --trainer-dir "$TRAINER" --trainer-cmd "$CMD" --steps 10 --memory-limit $(( peak / 1024 + 6 )) --json
  expect_rc 0
  expect_json '[t["outcome"] for t in j["trials"]] == ["ok", "no-op", "oom"]'
  check 'self_contained "$R/report.html"'
  check '[ "$(head -n 1 "$R/logs/trial-3.samples")" = "# vramfit memory samples v1 source=host-rss" ]'
  check 'page_json "$R/report.html" "[(t[\"index\"], t[\"outcome\"]) for t in j[\"trials\"]] == [(1, \"ok\"), (3, \"oom\")]"'
  check 'page_json "$R/report.html" "all(t[\"samples\"] and len(t[\"samples\"][\"t\"]) >= 2 for t in j[\"trials\"])"'
  check 'page_json "$R/report.html" "len(j[\"trials\"][0][\"step_times\"]) == 10 and j[\"winner\"][\"trial\"] == 1"'
  check 'page_json "$R/report.html" "j[\"planned_steps\"] > 0"'
  check 'grep -q "The planned config is the fastest stable one" "$R/report.html"'
  check 'grep -q "trial 3: optimizer adamw (out of memory)" "$R/report.html"'
  check 'grep -q "ran out of memory at" "$R/report.html"'
  test_case "report RUN_DIR replays the winner rule and agrees with tune; plan.md's decisions listed"
  printf '# Training Plan\n\n- Tier: `32GB tier` (cpu)\n- Steps: 2000 (as shipped)\nnot a bullet\n' > "$R/plan.md"
  run report "$R" -o run2.html
  expect_rc 0
  check 'page_json run2.html "j[\"winner\"][\"trial\"] == 1 and len(j[\"trials\"]) == 2"'
  check 'page_json run2.html "j[\"plan\"][\"decisions\"] == [\"Tier: 32GB tier (cpu)\", \"Steps: 2000 (as shipped)\"]"'
  check 'grep -q "<li>Tier: <code>32GB tier</code> (cpu)</li>" run2.html && grep -q "<h3>Training Plan</h3>" run2.html'
  check 'page_json run2.html "j[\"plan\"][\"markdown\"].startswith(\"# Training Plan\")"'
  test_case "report history over the recorded trials"
  run report history -o hist.html
  expect_rc 0; check 'self_contained hist.html && page_json hist.html "len(j[\"trials\"]) == 2"'
  pages="$pages $R/report.html hist.html"
fi

# --- history: records with both a prediction and a measurement -------------------
# (a fixture database: the schema made by vramfit itself, six trials of two
# runs inserted with sqlite3; peak errors +5, -3, +10 and +2, -1, -8 percent)
test_case "report history: predicted vs measured, error by run and by change"
H=$TMP/hist.db
new_history "$H" # the schema by vramfit's writer (a reader writes none)
ins() { # run index change measured_GiB predicted_GiB step_s
  sqlite3 "$H" "INSERT INTO trials (config_hash, run_dir, trainer, gpu, tier, trial_index, change, deltas,
    outcome, evidence, exit_status, steps_done, step_seconds, peak_bytes, predicted_peak_bytes, wall_seconds,
    recorded_at) VALUES ('h$1$2', '/runs/$1', 'ltx2', 'NVIDIA H100 80GB HBM3 x 1', '80GB+', $2, '$3', '{}', 'ok',
    '', 0, 50, $6, CAST($4 * 1073741824 AS INTEGER), CAST($5 * 1073741824 AS INTEGER), 60, '2026-11-0${2}T10:00:00Z')"
}
ins llama-lora 1 baseline 40 42 0.9; ins llama-lora 2 "quantization off" 50 48.5 0.7; ins llama-lora 3 "batch size 2" 60 66 1.3
ins ltx-lora 1 baseline 70 71.4 2.1; ins ltx-lora 2 "quantization off" 72 71.28 1.8; ins ltx-lora 3 "optimizer adamw" 75 69 1.9
run report history --history "$H" -o hist-fix.html
expect_rc 0
check 'grep -q "Over 6 trials with both figures the peak estimate was off by 4.0% (median), 10.0% at most; it over-predicted 3 of 6" hist-fix.html'
check 'grep -q "data-chart=\"peaks\"" hist-fix.html && grep -q "data-chart=\"byrun\"" hist-fix.html && grep -q "data-chart=\"bychange\"" hist-fix.html'
check 'page_json hist-fix.html "len(j[\"trials\"]) == 6 and sorted(round(t[\"peak_error_pct\"], 6) for t in j[\"trials\"]) == [-8, -3, -1, 2, 5, 10]"'
pages="$pages hist-fix.html"

# --- in a real browser -------------------------------------------------------------
BROWSER=""
for b in /usr/lib/chromium/chromium-headless-shell /usr/bin/chromium-headless-shell /usr/lib/chromium/chromium /usr/bin/chromium; do
  [ -x "$b" ] && { BROWSER=$b; break; }
done
if [ -z "${VF_DOCS_DIR:-}" ] && sanitized_skip "the browser's checks" Chromium; then
  finish; exit $?
fi
if [ -z "$BROWSER" ]; then
  echo "note: browser checks skipped: no chromium (scripts/install-deps.sh --test installs chromium-headless-shell)" >&2
  finish; exit $?
fi
HEADLESS=""
case "$BROWSER" in *headless-shell) ;; *) HEADLESS=--headless ;; esac
n_prof=0
# browse OUT ARGS...: run the browser on a page (fresh profile, no network), stdout to OUT, stderr to OUT.err
browse() {
  local o=$1; shift
  n_prof=$((n_prof + 1))
  timeout 120 "$BROWSER" $HEADLESS --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
    --user-data-dir="$TMP/prof$n_prof" "$@" >"$o" 2>"$o.err"
}
# boxes DOM: the data-box of every chart, one per argument
boxes() { grep -o 'data-box="[0-9,]*"' "$1" | sed 's/data-box="\(.*\)"/\1/'; }

check_page() {
  local page=$1 name=$2 first=$3; shift 2
  local url="file://$(realpath "$page")"
  test_case "browser: $name renders without console errors, DOM holds the content"
  browse "$TMP/$name.dom" --enable-logging=stderr --v=0 --virtual-time-budget=2000 --window-size=1280,800 --dump-dom "$url"
  check '[ -s "$TMP/$name.dom" ] && grep -q "data-ready=\"1\"" "$TMP/$name.dom"'
  check '! grep -qE "Uncaught|Page load failed|ERR_FILE_NOT_FOUND|:CONSOLE.*(rror|arning)" "$TMP/$name.dom.err"'
  for want in "$@"; do check 'grep -qF -- "$want" "$TMP/$name.dom"'; done
  local height nb
  height=$(grep -o 'data-height="[0-9]*"' "$TMP/$name.dom" | grep -o '[0-9]*')
  nb=$(grep -c . <(boxes "$TMP/$name.dom"))
  check '[ "${height:-0}" -gt 400 ] && [ "$nb" -ge 1 ]'
  test_case "browser: $name, every chart has ink in its box (1280 wide, JavaScript on)"
  browse "$TMP/$name.out" --window-size=1280,"$height" --screenshot="$TMP/$name.png" "$url"
  check '$PY "$HERE/png_boxes.py" "$TMP/$name.png" $(boxes "$TMP/$name.dom") >"$TMP/$name.px"'
  # JavaScript off: the headless shell needs scripting for --dump-dom and
  # --screenshot, so the page's own scripts are refused by a Content-Security-Policy
  # (script-src 'none') in a copy; data-ready absent proves they did not run
  test_case "browser: $name with JavaScript disabled still shows every chart"
  sed '0,/<head>/s//<head><meta http-equiv="Content-Security-Policy" content="script-src '"'none'"'">/' "$page" > "$TMP/$name-nojs.html"
  browse "$TMP/$name.nojs" --window-size=1280,"$height" --dump-dom "file://$TMP/$name-nojs.html"
  check 'grep -q "script-src" "$TMP/$name.nojs" && ! grep -q "data-ready=\"1\"" "$TMP/$name.nojs"'
  check '[ "$(grep -o "<svg class=\"chart\"" "$TMP/$name.nojs" | wc -l)" -eq "$nb" ] && grep -qF -- "$first" "$TMP/$name.nojs"'
  browse "$TMP/$name.out2" --window-size=1280,"$height" --screenshot="$TMP/$name-nojs.png" "file://$TMP/$name-nojs.html"
  check '$PY "$HERE/png_boxes.py" "$TMP/$name-nojs.png" $(boxes "$TMP/$name.dom") >"$TMP/$name-nojs.px"'
  if [ -n "${VF_DOCS_DIR:-}" ]; then
    browse "$TMP/$name.out3" --window-size=1280,800 --screenshot="$VF_DOCS_DIR/report-$name.png" "$url"
  fi
}

# the peak the page must show: the estimate's own (GiB, 2 decimals), not a copy of today's figure
PEAK_GIB=$($PY -c 'import json,re,sys; h=open(sys.argv[1],encoding="utf-8").read(); j=json.loads(re.search(r"<script type=\"application/json\" id=\"vramfit-data\">(.*?)</script>",h,re.S).group(1)); print("%.2f" % (j["memory"]["peak_bytes"]/2**30))' "$TMP/r.html")
check_page r.html estimate "does not fit RTX 4090" "memory per GPU (GiB)" "micro-batch (samples per GPU)" \
  ">weights</button>" ">RTX 4090</button>" ">A100 SXM4 80GB</button>" "Assumptions" "${PEAK_GIB:-no peak in the page data}"
check_page infer.html estimate-infer "KV cache of one sequence vs context" "context per sequence (tokens)" \
  "users (sequences at once)" "A100 SXM4 80GB KV memory" "Memory as vLLM lays it out on RTX 4090" "prefill tok/s"
test_case "browser: the estimate page prints on A4 (@page size)"
browse "$TMP/pdf.out" --no-pdf-header-footer --print-to-pdf="$TMP/r.pdf" "file://$TMP/r.html"
check 'grep -a -q "MediaBox \[0 0 594.9" "$TMP/r.pdf" && ! grep -a "MediaBox" "$TMP/r.pdf" | grep -vq "594.9"'
check_page fit.html fit "GPU configurations fit" "time of the whole run (h, log scale)" "cost of the whole run ($)" "Pareto front"
if [ -n "${R:-}" ]; then
  check_page "$R/report.html" run "The planned config is the fastest stable one" "time since the trial started (s)" \
    "trial 3: optimizer adamw (out of memory)" "step time (s)" "DefaultCPUAllocator"
fi
[ -n "${P:-}" ] && check_page "$P/plan.html" plan "Plan for" "phase of the training step" "memory per GPU (GiB)"
check_page hist-fix.html history "off by 4.0% (median)" "predicted peak (GiB)" "measured peak (GiB)" "peak error (%)" \
  "llama-lora" "quantization off" "+10.0%"

# --- layout, measured in the page by the test's own script (tests/cli/layout.js) ---
# lay PAGE W H [ARGS]: PAGE with layout.js appended, in the browser at W x H;
# prints what the script wrote: one flaw a line, then "checked ..."
lay() {
  local page=$1 w=$2 h=$3; shift 3
  local copy
  copy="$TMP/lay-$(basename "${page%.html}")-$w.html"
  $PY "$HERE/page_check.py" inject "$page" "$copy" "$HERE/layout.js"
  browse "$TMP/lay.dom" --window-size="$w,$h" "$@" --virtual-time-budget=2000 --dump-dom "file://$copy"
  $PY "$HERE/page_check.py" result "$TMP/lay.dom"
}
# layout PAGE NAME: at 1400 x 900 and 375 x 800, light and dark: nothing wider
# than the viewport outside a scroll box, the page never scrolls sideways, no
# two chart labels overlap, no line crosses a label, no label over a marker,
# no label is cut, no line hides under another, no chart of one point, no
# point cloud crowded at an axis' end, every legend entry a series visible in
# its chart (the browser's hit test), headings shown as written
layout() {
  local page=$1 name=$2 w h scheme res
  for v in "1400 900 light" "375 800 light" "375 800 dark" "1400 900 dark"; do
    read -r w h scheme <<<"$v"
    test_case "browser layout: $name at $w x $h ($scheme)"
    if [ "$scheme" = dark ]; then res=$(lay "$page" "$w" "$h" --blink-settings=preferredColorScheme=0)
    else res=$(lay "$page" "$w" "$h"); fi
    if grep -qE "^checked [0-9]+ elements, [0-9]+ labels, [0-9]+ charts, width $w, $scheme\$" <<<"$res" &&
       [ "$(grep -vc "^checked" <<<"$res")" -eq 0 ]; then _ok
    else _bad "the page's layout check: $(head -20 <<<"$res" | tr '\n' '|')"; fi
  done
}
layout r.html estimate
layout same.html estimate-same-peaks
layout four.html estimate-four-gpus
layout caps.html estimate-close-capacities
layout dit.html estimate-dit
layout one.html estimate-one-batch
layout infer.html estimate-infer
layout infer-cpp.html estimate-infer-llamacpp
layout fit.html fit
layout fit70.html fit-tight
layout fits.html fit-search
layout fit-skew.html fit-skewed-costs
[ -n "${P:-}" ] && layout "$P/plan.html" plan
[ -n "${R:-}" ] && layout "$R/report.html" run && layout run2.html run-plan
layout hist-fix.html history
test_case "report estimate --mode infer (transformers): the users-vs-context table and the headline are the row's (replayed) max users at --ctx, not the analytic reserve's or the prompt batch's"
# gemma3-4b on a V100 16GB at 2048 tokens: the table said 2 beside the row's
# 6; phi3-mini, 8 users at 8192 tokens: "up to batch 15 (batch 16 needs 27.9 GiB)"
"$VRAMFIT" estimate gemma3-4b --mode infer --gpu v100-16gb --json > g3.json
run report estimate gemma3-4b --mode infer --gpu v100-16gb -o g3.html
expect_rc 0
check 'page_json g3.html "(lambda s, r: s[\"max_users\"][s[\"contexts\"].index(2048)] == r)(j[\"inference_sweep\"][\"gpus\"][0], json.load(open(\"g3.json\"))[\"gpus\"][0][\"max_batch\"])"'
run report estimate phi3-mini --mode infer --users 8 --ctx 8192 --gpu a100-pcie-80gb -o p3.html
expect_rc 0
check 'grep -q "<h1 id=\"headline\">phi3-mini infer: fits A100 PCIe 80GB with [0-9.]* GiB to spare, 8 users at 8192 tokens of context (up to 15) (approximate: see Assumptions)</h1>" p3.html'
check '! grep -q "needs 27.9 GiB" p3.html'

finish
