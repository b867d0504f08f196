#!/usr/bin/env bash
# verdict.sh - one verdict (issue 19, item 5): the two spellings of a GPU
# count (--gpu ID:N, --gpu ID --gpus N) give the same setup, text, JSON and
# cost; advice keeps fit's margin; remedies and hints never suggest what is
# already set; labels and counts agree with what they count.
. "$(dirname "$0")/lib.sh"
export XDG_CONFIG_HOME="$TMP/config"
unset VRAMFIT_DATA_DIR || true
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI="$TMP/no-such-smi"

# same OUTFILE CMD...: run vramfit, keep stdout in OUTFILE
keep() { f=$1; shift; run "$@"; printf '%s\n' "$out" >"$TMP/$f"; }

test_case "estimate: --gpu ID:N and --gpus N are one run (text, JSON, cost)"
keep a.json estimate qwen2.5-0.5b --gpu rtx-4090:8 --tokens 100M --json
expect_rc 0
keep b.json estimate qwen2.5-0.5b --gpu rtx-4090 --gpus 8 --tokens 100M --json
expect_rc 0
check 'cmp -s "$TMP/a.json" "$TMP/b.json"'
expect_json 'j["setup"]["gpus"] == 8 and j["gpus"][0]["count"] == 8'
# the run's cost is 8 GPUs' worth: GPU-hours = 8 x hours
expect_json 'abs(j["gpus"][0]["run"]["gpu_hours"] - 8 * j["gpus"][0]["run"]["hours"]) < 1e-9'
keep a.txt estimate qwen2.5-0.5b --gpu rtx-4090:8 --tokens 100M
keep b.txt estimate qwen2.5-0.5b --gpu rtx-4090 --gpus 8 --tokens 100M
check 'cmp -s "$TMP/a.txt" "$TMP/b.txt"'
expect_out 'Whole run (1e+08 tokens, 8 GPUs ddp)'
expect_out '8 GPUs ddp'
run estimate qwen2.5-0.5b --gpu rtx-4090:4 --gpus 8
expect_rc 2
expect_err '--gpus 8: only 4 rtx-4090 given'

test_case "fit: --gpu ID:N and --gpus N are one run"
keep a.json fit qwen2.5-0.5b --gpu rtx-4090:8 --tokens 100M --json
expect_rc 0
keep b.json fit qwen2.5-0.5b --gpu rtx-4090 --gpus 8 --tokens 100M --json
expect_rc 0
check 'cmp -s "$TMP/a.json" "$TMP/b.json"'
keep a.json fit qwen2.5-0.5b --gpu rtx-4090:8 --tokens 100M --search --json
keep b.json fit qwen2.5-0.5b --gpu rtx-4090 --gpus 8 --tokens 100M --search --json
expect_rc 0
expect_json 'j["start"][0]["gpus"] == 8 and j["results"]'
# the same search but for how long it took
check 'python3 -c "import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); [x[\"search\"].pop(\"seconds\") for x in (a,b)]; sys.exit(a!=b)" "$TMP/a.json" "$TMP/b.json"'

test_case "advice keeps fit's margin (default 10 %, --margin)"
# on an 80 GB card: without a margin batch 2x2 fits with 1.8 GiB to spare
run estimate llama2-7b --gpu h100-80gb --batch 4 --json
expect_rc 0
expect_json 'j["gpus"][0]["advice"] and all(a["peak_bytes"] <= 0.9 * j["gpus"][0]["vram_bytes"] for a in j["gpus"][0]["advice"])'
run estimate llama2-7b --gpu h100-80gb --batch 4 --margin 0.3 --json
expect_json 'j["gpus"][0]["advice"] and all(a["peak_bytes"] <= 0.7 * j["gpus"][0]["vram_bytes"] for a in j["gpus"][0]["advice"])'
run estimate llama2-7b --gpu h100-80gb --batch 4 --margin 0 --json
expect_json 'any(a["peak_bytes"] > 0.9 * j["gpus"][0]["vram_bytes"] for a in j["gpus"][0]["advice"])'
run estimate llama2-7b --gpu h100-80gb --batch 4
expect_out '10% of the GPU kept free, --margin'
run estimate llama2-7b --gpu h100-80gb --margin 1.5
expect_rc 2
expect_err '--margin 1.5: expected a fraction'

test_case "estimate's hints never suggest what is set; inference hints the split that fits"
run estimate llama2-70b --mode infer --quant nf4 --gpu rtx-4090
expect_rc 0
expect_out 'rtx-4090: does not fit'
expect_no_out '--quant nf4'
expect_no_out 'int8 or nf4'
expect_out '--gpu rtx-4090:2 --split layers'
expect_out '--gpu rtx-4090:2 --tp 2'
# the hinted splits fit when run
run estimate llama2-70b --mode infer --quant nf4 --gpu rtx-4090:2 --split layers --json
expect_json 'all(g["fits"] for g in j["gpus"])'
run estimate llama2-70b --mode infer --quant nf4 --gpu rtx-4090:2 --tp 2 --json
expect_json 'all(g["fits"] for g in j["gpus"])'
run estimate llama2-70b --mode infer --quant int8 --gpu rtx-4090
expect_out 'try --quant nf4,'
expect_no_out 'int8 or nf4'
run estimate llama2-7b --mode full --optimizer adamw8bit --gpu rtx-4090
expect_out 'rtx-4090: does not fit'
expect_no_out '--optimizer adamw8bit'

test_case "an inference estimate names its phases (no loss phase)"
run estimate qwen2.5-0.5b --mode infer --gpu h100-80gb
expect_out 'Memory at the peak (logits phase'
expect_no_out 'loss phase'
run estimate qwen2.5-0.5b --mode infer --gpu h100-80gb --json
expect_json 'j["memory"]["peak_phase"] == "logits"'
run estimate qwen2.5-0.5b --gpu h100-80gb --json
expect_json 'j["memory"]["peak_phase"] != "logits"'

test_case "help texts print no printf escapes (help plan said '25 %% + 20 min')"
for c in $("$VRAMFIT" --help | awk '/^  [a-z]/{print $1}'); do
  run help "$c"
  expect_no_out '%%'
done
run help plan
expect_out '25 % + 20 min'

test_case "a safetensors file without architecture: the estimate is of its header's count"
python3 "$VF_SOURCE_DIR/tests/helpers/mk-safetensors.py" "$TMP/four.safetensors" a. b.
run estimate "$TMP/four.safetensors" --gpu h100-80gb
expect_rc 1
expect_err 'four.safetensors: 4 parameters and no architecture: smaller than the smallest generic transformer'
expect_no_out '17.2 M'
python3 - "$TMP/fifty.safetensors" <<'PY'
import json, struct, sys
h = json.dumps({"w": {"dtype": "BF16", "shape": [5000, 10000], "data_offsets": [0, 100000000]}}).encode()
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(h))); f.write(h); f.truncate(8 + len(h) + 100000000)
PY
run estimate "$TMP/fifty.safetensors" --gpu h100-80gb --json
expect_rc 0
expect_json 'abs(j["model"]["params"] - 50000000) < 0.01 * 50000000'
expect_json 'any("transformer of 50000000 parameters" in a for a in j["assumptions"])'
run estimate --params 1e5
expect_rc 2
expect_err 'smaller than the smallest generic transformer'
run estimate --params 10M --json
expect_json 'abs(j["model"]["params"] - 1e7) < 0.01 * 1e7'

test_case "the fit page counts the cells its grid shows"
run fit llama2-7b --html "$TMP/fit.html"
expect_rc 0
check 'python3 - "$TMP/fit.html" <<'"'"'PY'"'"'
import re, sys
t = open(sys.argv[1], encoding="utf-8").read()
svg = re.search(r"<svg[^>]*data-chart=\"grid\".*?</svg>", t, re.S).group(0)
fit = len(re.findall(r"class=\"cell f0\"", svg))
cells = len(re.findall(r"class=\"cell[ \"]", svg))
# a GPU x count fit did not evaluate is a blank cell, counted apart (verdict 9)
blank = len(re.findall(r"class=\"cell\" [^>]*fill=\"none\"", svg))
m = re.search(r"(\d+) of (\d+) cells fit", t)
b = re.search(r"; (\d+) blank: GPU x count not evaluated", t)
ok = m and int(m.group(1)) == fit and int(m.group(2)) == cells - blank
sys.exit(not (ok and (int(b.group(1)) == blank if b else blank == 0)))
PY'

test_case "triage: an OOM past 64 KiB on one line is found, the evidence shows it"
python3 -c "import sys; sys.stdout.write('x' * 65536 + ' torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\n')" >"$TMP/long.log"
run triage "$TMP/long.log" --exit 1 --json; expect_rc 0
expect_json 'j["outcome"] == "oom" and "CUDA out of memory. Tried to allocate 2 GiB" in j["evidence"] and len(j["evidence"]) < 512'
# the match straddles the first 64 KiB's end; read from standard input too
python3 -c "import sys; sys.stdout.write('y' * 65500 + ' torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\nlast\n')" >"$TMP/edge.log"
rc=0; "$VRAMFIT" triage - --exit 1 --json <"$TMP/edge.log" >"$TMP/out" 2>"$TMP/err" || rc=$?; out=$(cat "$TMP/out")
expect_rc 0
expect_json 'j["outcome"] == "oom" and j["evidence"].endswith("Tried to allocate 2 GiB")'
# several windows in: 300 KB before the match, 200 KB after it, on one line
python3 -c "import sys; sys.stdout.write('y' * 300000 + ' CUDA out of memory. Tried to allocate 3 GiB ' + 'z' * 200000 + '\n')" >"$TMP/far.log"
run triage "$TMP/far.log" --exit 1 --json; expect_rc 0
expect_json 'j["outcome"] == "oom" and "Tried to allocate 3 GiB" in j["evidence"] and j["evidence"].startswith("... ")'
run triage "$TMP/far.log" --exit 1; expect_out "Tried to allocate 3 GiB"
rm -f "$TMP/long.log" "$TMP/edge.log" "$TMP/far.log"

test_case "triage: remedies never suggest what the config already has"
F=$VF_SHARED_DIR/fixtures/failures
cat >"$TMP/set.yaml" <<'YAML'
model:
  training_mode: "lora"
lora:
  rank: 8
optimization:
  batch_size: 1
  optimizer_type: "adamw8bit"
  enable_gradient_checkpointing: true
acceleration:
  quantization: "int8-quanto"
YAML
run triage "$F/oom-python.err" --exit 1 --config "$TMP/set.yaml" --json
expect_rc 0
expect_json 'j["outcome"] == "oom" and len(j["remedies"]) >= 1'
expect_json 'not any(w in r for r in j["remedies"] for w in ["checkpointing", "adamw8bit", "int8-quanto", "LoRA rank", "batch_size: 1"])'
sed -e 's/rank: 8/rank: 32/' -e 's/true/false/' -e 's/"adamw8bit"/"adamw"/' -e 's/"int8-quanto"/null/' -e 's/batch_size: 1/batch_size: 2/' \
  "$TMP/set.yaml" >"$TMP/std.yaml"
run triage "$F/oom-python.err" --exit 1 --config "$TMP/std.yaml" --json
expect_json 'sum(w in r for r in j["remedies"] for w in ["checkpointing", "adamw8bit", "int8-quanto", "batch_size: 1"]) == 4'
expect_json 'any("LoRA rank 32 -> 16 " in r for r in j["remedies"])'
run triage "$F/oom-python.err" --exit 1 --config "$TMP/missing.yaml"
expect_rc 1
expect_err 'missing.yaml'

test_case "tune: a failed baseline's remedies leave out what its config.yaml has"
TRAINER=$VF_SOURCE_DIR/examples/ltx-mini-trainer
R=$TMP/run-oom
mkdir -p "$R/overfit/.precomputed" "$R/dataset" "$R/outputs" "$R/logs"
cp "$TRAINER/data/text.txt" "$R/overfit/.precomputed/sample.txt"
cp "$TRAINER/configs/t2v_lora_low_vram.yaml" "$R/config.yaml"
"$VRAMFIT" config set "$R/config.yaml" "model.model_path=\"$TRAINER/models/mini.json\"" \
  "model.text_encoder_path=\"$TRAINER/models\"" >/dev/null
VRAMFIT_FAKE_OOM=base XDG_DATA_HOME=$TMP/xdg run tune "$R" --trainer-dir "$VF_SOURCE_DIR" \
  --trainer-cmd "sh tests/unit/fake-trainer.sh {config}" --json --quiet
expect_rc 1
expect_json 'j["baseline_failed"] and j["trials"][0]["outcome"] == "oom"'
# the low-VRAM config has checkpointing, batch 1, adamw8bit, int8-quanto, rank 16
expect_json 'not any(w in r for r in j["remedies"] for w in ["checkpointing", "adamw8bit", "int8-quanto", "batch_size: 1"])'
expect_json 'any("LoRA rank 16 -> 8 " in r for r in j["remedies"])'

test_case "triage: Python's json.dumps spellings of a non-finite loss (NaN, Infinity, -Infinity) are a nan outcome, not a dropped line"
for v in NaN Infinity -Infinity; do
  python3 -c "
import sys
for i in range(1, 11):
    loss = '$v' if i >= 3 else '0.5'
    print('{\"vramfit\": {\"step\": %d, \"total_steps\": 10, \"loss\": %s, \"step_seconds\": 0.5, \"note\": \"NaN in a string stays\"}}' % (i, loss))
" >"$TMP/nonfinite.log"
  run triage "$TMP/nonfinite.log" --exit 0 --json
  expect_json 'j["outcome"] == "nan" and j["last_step"] == 10'
done

finish
