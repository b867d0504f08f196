#!/usr/bin/env bash
# audit-verdict.sh - one verdict across an output's parts (audit 8): plan.md's
# predicted sweep and its estimate judge the same config at the same size,
# fit's "no" rows and --search never print a peak that fits as the reason
# nothing fits.
. "$(dirname "$0")/lib.sh"
export XDG_CONFIG_HOME="$TMP/config"
unset VRAMFIT_DATA_DIR LTX_TRAININGS_DIR LTX_TRAINER_DIR LTX_MODELS_DIR || true
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI="$TMP/no-such-smi"

TD="$VF_SOURCE_DIR/tests/fixtures/ltx-trainer"
export HOME="$TMP/home"
mkdir -p "$HOME" "$TMP/models/gemma-3-12b-it" "$TMP/work"
echo '{"model_type": "gemma3"}' >"$TMP/models/gemma-3-12b-it/config.json"
cp "$VF_SHARED_DIR/fixtures/models/lora_weights_step_00050.safetensors" "$TMP/models/ltx-2-19b-dev.safetensors"
M=(--trainer-dir "$TD" --model "$TMP/models/ltx-2-19b-dev.safetensors" --text-encoder "$TMP/models/gemma-3-12b-it")

test_case "plan: the predicted sweep's trial 1 (this config) is the plan's estimate, at the training size"
# the estimate trains at the resolution bucket (960x544x49 assumed); the
# sweep judged trial 1 at validation.video_dims (960x544x89): 50.9 GiB and
# 1.63 s beside the estimate's 47.4 GiB and 1.0 s for the same config
(cd "$TMP/work" && run plan "${M[@]}" --gpu h100-80gb --run-name h100 --json && printf '%s' "$out" >"$TMP/h100.json")
out=$(cat "$TMP/h100.json")
expect_json '(lambda t, e: t["peak_bytes"] == e["peak_bytes"] and abs(t["step_seconds"] - e["step_seconds"]) < 1e-9)(j["predicted_sweep"]["trials"][0], j["estimate"])'
P="$TMP/work/projects/h100"
step=$(python3 -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["estimate"]["step_seconds"])' "$TMP/h100.json")
check "grep -qE '^\| 1 \| baseline \| fits \| [0-9.]+ GiB \| $step s \|$' '$P/plan.md'"
check "grep -qE '^Expected winner: trial 1 \(baseline\), $step s per step' '$P/plan.md'"
# a bucket given: the sweep trains at it too; the low-VRAM config's
# acceleration.offload_optimizer_during_validation: true counts in both
# (plan's own estimate ignored it: 28.88 GB against the sweep's 28.66 GB)
(cd "$TMP/work" && "$VRAMFIT" plan "${M[@]}" --gpu rtx-5090 --run-name b5090 --resolution-buckets '768x448x25' --json >"$TMP/b5090.json" 2>/dev/null)
out=$(cat "$TMP/b5090.json")
expect_json '(lambda t, e: t["peak_bytes"] == e["peak_bytes"] and abs(t["step_seconds"] - e["step_seconds"]) < 1e-9)(j["predicted_sweep"]["trials"][0], j["estimate"])'

test_case "fit: a row that fits at no setting never gives a peak within the usable memory as its reason"
# llama3-8b full on one A100 80GB: the fast estimate fits adafactor at
# 71.89 GiB of 72.00 GiB usable, the allocator simulation puts it over; the
# row said "smallest peak 71.89 GiB > 72.00 GiB usable"
run fit llama3-8b --mode full --gpu a100-80gb:1 --tokens 1e9 --forbid split
expect_rc 0
expect_out_re '^a100-80gb +1 +no '
expect_no_out '71.89 GiB > 72.00 GiB'
expect_out 'in the allocator simulation'
run fit llama3-8b --mode full --gpu a100-80gb:1 --tokens 1e9 --forbid split --json
expect_rc 0
expect_json 'all(r["peak_bytes"] > r["limit_bytes"] for r in j["rows"] if not r["fits"] and not r.get("fits_memory"))'
expect_json 'j["rows"][0]["rejected_by_allocator_simulation"] >= 1'

test_case "fit --search: settings the fast estimate fits and the allocator simulation rejects are said, not '0 shown' alone"
run fit llama3-8b --mode full --search --gpu a100-80gb --tokens 1e9 --allow optimizer,batch,grad-ckpt
expect_rc 0
expect_out 'nothing fits 1x a100-80gb:'
expect_out_re '0 shown of [0-9]+ that fit \([0-9]+ of them over in the allocator simulation\)'
expect_out 'in the allocator simulation'
run fit llama3-8b --mode full --search --gpu a100-80gb --tokens 1e9 --allow optimizer,batch,grad-ckpt --json
expect_rc 0
expect_json 'j["results"] == [] and len(j["not_fitting"]) == 1 and j["search"]["rejected_by_allocator_simulation"] >= 1'

test_case "fit of a DiT the LTX-2 trainer does not train: a clear refusal, not the trainer's tiers at a video size"
# Flux (an image DiT) got the LTX-2 trainer's tiers, t2v_lora.yaml and its
# 960x544x89 validation video: 222.68 GiB, "no" on an H100 80GB, where
# estimate gives 28 GiB for a Flux LoRA at 1024x1024
VC="$VF_SOURCE_DIR/tests/fixtures/vision"
for f in flux pixart latte; do
	run fit "$VC/$f.json" --gpu h100-80gb:1
	expect_rc 1
	expect_err "vramfit: error: $VC/$f.json: a $f diffusion transformer"
	expect_err "vramfit estimate $VC/$f.json"
	expect_err_lines 1
	expect_no_out 't2v_lora'
done
run fit ltx-2-19b --gpu h100-80gb
expect_rc 0
expect_out 't2v_lora.yaml'

test_case "fit --gpus N: the split rows keep to N GPUs, as --gpu ID:N does"
# llama3-8b full with --gpus 3 listed tp 4, tp 8 and a layer split over 5
run fit llama3-8b --gpus 3 --json
expect_rc 0
expect_json 'j["rows"] and all(r["gpus"] <= 3 for r in j["rows"])'
expect_json 'all(r["gpus"] == 3 for r in j["rows"] if not r.get("split"))'
run fit llama3-8b --gpus 3
expect_no_out 'tp 4'
expect_no_out 'tp 8'

expect_err_re_any() { printf '%s' "$err" | grep -qE -- "$1" && _ok || _bad "stderr lacks /$1/"; }
# page_text FILE: the page's text as a reader sees it (scripts and styles out)
page_text() {
  python3 - "$1" <<'PY'
import html, re, sys
t = open(sys.argv[1], encoding="utf-8").read()
t = re.sub(r"<(script|style).*?</\1>", "", t, flags=re.S)
t = re.sub(r"<(br|/p|/tr|/h[1-6]|/li|/div|/figcaption)[^>]*>", "\n", t)
t = re.sub(r"<t[dh][^>]*>", " | ", t)
try:
    print(html.unescape(re.sub(r"<[^>]+>", "", t)))
except BrokenPipeError:  # grep -q stops reading at its match
    pass
PY
}

test_case "report fit --search: the page says what the CLI says (shown of fitting, whole run, why nothing fits)"
cd "$TMP" || exit 1
run fit llama3-8b --mode lora --search --gpu rtx-4090:2 --tokens 1e8 --html s.html
expect_rc 0
shown=$(printf '%s' "$out" | sed -n 's/.*; \([0-9]*\) shown of \([0-9]*\) that fit.*/\1 shown of \2/p')
check '[ -n "$shown" ] && page_text s.html | grep -qF "llama3-8b: $shown configurations that fit"'
check '! page_text s.html | grep -qE "[0-9]+ of [0-9]+ GPU configurations fit"'
# nothing shown: the page kept "give --tokens or --steps" although --tokens was given, and no reason
run fit llama3-8b --mode full --search --gpu a100-80gb --tokens 1e9 --allow optimizer,batch,grad-ckpt --html s0.html
expect_rc 0
check 'page_text s0.html | grep -qF "Time and cost of the whole run (--tokens/--steps)."'
check '! page_text s0.html | grep -qF "give --tokens or --steps"'
check 'page_text s0.html | grep -qF "nothing fits 1x a100-80gb: smallest peak"'
check '! page_text s0.html | grep -qF "none of the 0 "'
cd - >/dev/null || exit 1

test_case "fit of a config with keys not understood: named and marked approximate, as estimate does"
# estimate says "approximate: see Assumptions" and names them; fit said nothing
mkdir -p "$TMP/weird"
cat >"$TMP/weird/config.json" <<'J'
{"model_type": "weirdlm", "architectures": ["WeirdForCausalLM"], "hidden_size": 2048, "intermediate_size": 5632,
 "num_hidden_layers": 22, "num_attention_heads": 32, "num_key_value_heads": 4, "vocab_size": 32000,
 "max_position_embeddings": 2048, "fancy_extra_size": 123}
J
# its model type has no peft default: the targets named (verdict 9)
LT="--lora-targets q_proj,v_proj"
run estimate "$TMP/weird/config.json" --mode lora $LT --gpu rtx-4090
expect_out 'approximate: see Assumptions'
for extra in "" "--search --tokens 1e8"; do
	run fit "$TMP/weird/config.json" --mode lora $LT --gpu rtx-4090:1 $extra
	expect_rc 0
	expect_out 'approximate: see Assumptions'
	expect_out_re 'not understood: .*fancy_extra_size.*approximate'
	run fit "$TMP/weird/config.json" --mode lora $LT --gpu rtx-4090:1 $extra --json
	expect_json 'j["approximate"] is True and "fancy_extra_size" in j["not_understood"]'
done
run fit llama3-8b --mode lora --gpu rtx-4090:1 --json
expect_json 'j["approximate"] is False and "not_understood" not in j'

test_case "fit --mode infer of a state-space model: a usage error as estimate gives, not 'nothing serves it' at the model's -1 tokens"
cat >"$TMP/mamba.json" <<'J'
{"model_type":"mamba","hidden_size":768,"num_hidden_layers":24,"vocab_size":50280,"state_size":16,"expand":2,"conv_kernel":4,"time_step_rank":"auto"}
J
for eng in "" "--engine transformers"; do
	run fit "$TMP/mamba.json" --mode infer --gpu rtx-4090 $eng
	expect_rc 2
	expect_no_out 'nothing serves it'
	expect_err "a state-space model's inference is vramfit estimate $TMP/mamba.json --mode infer"
done

test_case "fit --mode infer of a config with keys not understood: named and marked approximate"
run fit "$TMP/weird/config.json" --mode infer --gpu rtx-4090
expect_rc 0
expect_out 'approximate: see the note below'
expect_out_re 'Not understood: .*fancy_extra_size.*approximate'
run fit "$TMP/weird/config.json" --mode infer --gpu rtx-4090 --json
expect_json 'j["approximate"] is True and "fancy_extra_size" in j["not_understood"]'
run fit llama3.1-8b --mode infer --gpu rtx-4090 --json
# the options' own not_modelled (vLLM's host work, llama.cpp's context)
# make it approximate (verdict 9): nothing not understood
expect_json 'j["approximate"] is True and "not_understood" not in j and len(j["not_modelled"]) == 2'

test_case "plan --resolution-buckets: a bucket the trainer's rules refuse is a usage error, not a 'go' plan that preprocesses it"
# plan.md itself says "width and height multiples of 32, frames % 8 == 1";
# 961x544x50 was planned (status go) with a preprocess command at 961x544x50
i=0
for b in 961x544x49 960x540x49 '960x544x49;768x448x50'; do
	i=$((i + 1))
	(cd "$TMP/work" && run plan "${M[@]}" --gpu h100-80gb --run-name badb$i --resolution-buckets "$b" &&
	 printf '%s\n%s\n' "$rc" "$err" >"$TMP/badb.txt")
	rc=$(head -1 "$TMP/badb.txt"); err=$(tail -n +2 "$TMP/badb.txt"); out=""
	expect_rc 2
	expect_err "--resolution-buckets: bucket '"
	expect_err "(the trainer's rule: width and height multiples of 32, frames % 8 == 1)"
	check '[ ! -e "$TMP/work/projects/badb$i" ]'
done
(cd "$TMP/work" && "$VRAMFIT" plan "${M[@]}" --gpu h100-80gb --run-name goodb --resolution-buckets '960x544x49;768x448x25' >/dev/null 2>&1)
check '[ -f "$TMP/work/projects/goodb/plan.md" ]'

test_case "report fit of what has no fit page: the refusal names report fit, not only an --html the user never typed"
cd "$TMP" || exit 1
for m in "ltx-2-19b" "llama3.1-8b --mode infer"; do
	run report fit $m -o nopage.html
	expect_rc 2
	expect_err_re_any 'report fit has no page for (it|them)'
	check '[ ! -e nopage.html ]'
done
cd - >/dev/null || exit 1

test_case "fit --mode infer --search: no training lines (gradient all-reduce, ZeRO gradients) among the assumptions; what is not counted is named"
run fit llama3-8b --mode infer --search --gpu rtx-4090:2
expect_rc 0
expect_no_out 'DDP: ring all-reduce of the gradients'
expect_no_out 'ZeRO-1/2: gradients reduce-scattered'
expect_out "--mode infer: each step one forward of the batch"
expect_out "zero3's per-layer parameter gathers are not counted"
run fit llama3-8b --mode lora --search --gpu rtx-4090:2 --tokens 1e8
expect_out 'DDP: ring all-reduce of the gradients'

test_case "fit: split rows are explained, not covered by the data-parallel 'global batch x N' line"
run fit llama3-8b --mode lora --gpu rtx-4090:2 --tokens 1e8
expect_out_re '^rtx-4090 +2 +yes +layer split over 2 GPUs'
expect_out "split rows (layer split, tp, tp x pp) hold one copy of the model over their N GPUs"
run fit llama3-8b --mode lora --gpu rtx-4090:2 --tokens 1e8 --json
expect_json 'any(r.get("split") for r in j["rows"]) and any(a.startswith("split rows") for a in j["assumptions"])'
# no split row, no split line
run fit llama3-8b --mode lora --gpu h100-80gb:1 --tokens 1e8
expect_no_out "split rows"

test_case "fit of a LoRA adapter directory without its base: estimate's clear message, not 'no architecture'"
run fit "$VF_SHARED_DIR/fixtures/models/tiny-llama-lora-r8" --gpu rtx-4090:1
expect_rc 1
expect_err "a LoRA adapter without its base model's config: fit the base model"
expect_err_lines 1

test_case "fit --mode infer of a model without max_position_embeddings: no 'the model's -1' tokens"
run fit "$VF_SHARED_DIR/fixtures/models/tiny-t5-fp32" --gpu rtx-4090 --mode infer
expect_rc 0
expect_no_out "the model's -1"
expect_out "vLLM the model's max_model_len, not in its config"

test_case "fit --price: the assumption states the price used, not only the catalog's"
run fit llama3-8b --mode lora --gpu h100-80gb:1 --tokens 1e9 --price 2
expect_out 'prices: $2.00/GPU-hour for every GPU (--price)'
expect_no_out "prices: the catalog's indicative"
run fit llama3-8b --mode lora --gpu h100-80gb:1 --tokens 1e9
expect_out "prices: the catalog's indicative on-demand \$/GPU-hour unless --price"

finish
