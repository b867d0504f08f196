#!/usr/bin/env bash
# plan.sh - end-to-end tests of `vramfit plan` on the test trainer directory
# (tests/fixtures/ltx-trainer) with simulated GPUs: the acceptance of issue 6
# (tiers, gate, full fine-tune rules, byte-exact config, never overwrite,
# URL refusal, nothing written outside the workspace) and model discovery.
. "$(dirname "$0")/lib.sh"

TD="$VF_SOURCE_DIR/tests/fixtures/ltx-trainer"
unset LTX_TRAININGS_DIR LTX_TRAINER_DIR LTX_MODELS_DIR
export HOME="$TMP/home"
mkdir -p "$HOME" "$TMP/models/gemma-3-12b-it" "$TMP/work"
echo '{"model_type": "gemma3"}' >"$TMP/models/gemma-3-12b-it/config.json"
# a small valid safetensors file under the checkpoint's name
cp "$VF_SHARED_DIR/fixtures/models/lora_weights_step_00050.safetensors" "$TMP/models/ltx-2-19b-dev.safetensors"
M=(--trainer-dir "$TD" --model "$TMP/models/ltx-2-19b-dev.safetensors" --text-encoder "$TMP/models/gemma-3-12b-it")
cd "$TMP/work"
# everything under $TMP but the workspace and lib.sh's own out/err, and the trainer dir's bytes
snapshot() { (cd "$TMP" && find . -path ./work/projects -prune -o -print | grep -vxe ./out -e ./err | LC_ALL=C sort; cd "$TD" && find . -type f -exec md5sum {} + | LC_ALL=C sort); }
before=$(snapshot)

# lines of a that differ from b (changed lines only)
difflines() { diff "$1" "$2" | grep -c '^>' || true; }

test_case "h100-80gb: 80GB+ tier, standard config, only the four paths differ"
run plan "${M[@]}" --gpu h100-80gb --dataset cats
expect_rc 0
expect_out "80GB+ tier"
run_dir=$(ls -d projects/t2v-cats-2*-[0-9][0-9][0-9][0-9] 2>/dev/null | head -1)
check '[ -n "$run_dir" ]'
check '[[ "$run_dir" =~ ^projects/t2v-cats-[0-9]{8}-[0-9]{4}$ ]]'
for d in dataset outputs logs overfit; do check "[ -d '$run_dir/$d' ]"; done
check "[ -f '$run_dir/plan.md' ] && [ -f '$run_dir/config.yaml' ]"
check "[ \$(difflines '$TD/configs/t2v_lora.yaml' '$run_dir/config.yaml') -eq 4 ]"
d=$(diff "$TD/configs/t2v_lora.yaml" "$run_dir/config.yaml" | grep '^>' | sed 's/:.*//' | tr -d '> ' | LC_ALL=C sort | tr '\n' ' ')
check "[ '$d' = 'model_path output_dir preprocessed_data_root text_encoder_path ' ]"
abs=$(cd "$run_dir" && pwd)
check "grep -qF 'output_dir: \"$abs/outputs\"' '$run_dir/config.yaml'"
check "grep -qF 'preprocessed_data_root: \"$abs/dataset/.precomputed\"' '$run_dir/config.yaml'"
check "grep -qF 'text_encoder_path: $TMP/models/gemma-3-12b-it' '$run_dir/config.yaml'"
# plan.md: every section of TRAINER.md section 7, in order
sections=$(grep -E '^#{1,2} ' "$run_dir/plan.md" | sed -E 's/ — .*//' | tr '\n' '|')
check "[ '$sections' = '# Training Plan|## Goal|## Mode|## Dataset|## Preprocessing|## Training Config|## Hardware|## Sanity Check + Autotune|## Monitoring|## Outputs|## Assumptions|## Cost / Time Estimate|## Approve to Proceed|' ]"
check "grep -qF '# Training Plan — $(basename "$run_dir")' '$run_dir/plan.md'"
check "grep -qF -- '- GPUs: NVIDIA H100 80GB HBM3' '$run_dir/plan.md' && grep -qE 'x 1, 80GB' '$run_dir/plan.md'"
check "grep -qF '80GB+ tier' '$run_dir/plan.md'"
check "grep -qF -- '- Mode: \`t2v\` (text-to-video)' '$run_dir/plan.md'"
check "grep -qF 'uv run python scripts/train.py $abs/config.yaml --disable-progress-bars' '$run_dir/plan.md'"
check "grep -qF '| optimizer | \`adamw\` |' '$run_dir/plan.md'"
check "grep -qF '| LoRA rank | \`32\` |' '$run_dir/plan.md'"
check "sed -n '/^## Sanity/,/^## Monitoring/p' '$run_dir/plan.md' | grep -qxF -- '- gradient checkpointing off: only with \`--try-no-ckpt\`'"
cost=$(sed -n '/^## Cost/,/^## Approve/p' "$run_dir/plan.md")
check "printf '%s' \"\$cost\" | grep -qF '**Estimate** from vramfit'"
check "printf '%s' \"\$cost\" | grep -qF 'replaced by the measured step time after the sanity check'"
check "printf '%s' \"\$cost\" | grep -qE '^\| peak VRAM per GPU \([a-z-]+ phase, as nvidia-smi counts it\) \| [0-9.]+ GiB of [0-9.]+ GiB \(fits\) \|'"
# issue 30: training at the dataset's size (here assumed: no --resolution-buckets), validation at its own
check "printf '%s' \"\$cost\" | grep -qE '^\| training phase \(step at 960x544x49, assumed\) \| [0-9.]+ GiB'"
check "printf '%s' \"\$cost\" | grep -qE '^\| validation phase \(sampling at 960x544x89, tiled decode\) \| [0-9.]+ GiB'"
check "sed -n '/^## Assumptions/,/^## Cost/p' '$run_dir/plan.md' | grep -q 'Training resolution: 960x544x49, the trainer quick-start'"
# the fixture's flexible strategy has an audio modality
check "grep -q 'training at 960x544x49 (assumed) with the audio stream' '$run_dir/plan.md'"
check "printf '%s' \"\$cost\" | grep -qE '^\| step time \| [0-9.]+ s \|'"
check "printf '%s' \"\$cost\" | grep -qE '^\| training time for 2000 steps \|'"
check "printf '%s' \"\$cost\" | grep -qE '^\| cost \| \\\$[0-9.]+ '"
check "sed -n '/^## Assumptions/,/^## Cost/p' '$run_dir/plan.md' | grep -q 'Mode: \`t2v\`'"
check "sed -n '/^## Assumptions/,/^## Cost/p' '$run_dir/plan.md' | grep -q 'Steps: 2000'"
# the run's config passes the self-check (data root pending)
run check "$run_dir"
expect_rc 0
expect_out "pending"

test_case "running twice never overwrites"
run plan "${M[@]}" --gpu h100-80gb --dataset cats --run-name again
expect_rc 0
echo keep >projects/again/plan.md
mkdir -p projects/again/outputs/checkpoints
: >projects/again/outputs/checkpoints/lora_weights_step_00250.safetensors
run plan "${M[@]}" --gpu h100-80gb --dataset cats --run-name again
expect_rc 1
expect_err "already exists"
expect_err "never overwritten"
expect_err "lora_weights_step_00250.safetensors"
check "[ \"\$(cat projects/again/plan.md)\" = keep ]"
run plan "${M[@]}" --gpu h100-80gb --run-name again --json
expect_rc 1
expect_json 'j["status"] == "exists" and j["resume_candidates"][0].endswith("lora_weights_step_00250.safetensors")'
run plan "${M[@]}" --gpu h100-80gb --dataset cats --run-name again --reuse
expect_rc 0
check "grep -q 'Resume candidates' projects/again/plan.md"
check "[ -f projects/again/outputs/checkpoints/lora_weights_step_00250.safetensors ]"

test_case "rtx-5090: 32GB tier, low-VRAM config"
run plan "${M[@]}" --gpu rtx-5090 --run-name r5090
expect_rc 0
expect_out "32GB tier"
check "[ \$(difflines '$TD/configs/t2v_lora_low_vram.yaml' projects/r5090/config.yaml) -eq 4 ]"
check "grep -qF \"quantization: \\\"int8-quanto\\\"\" projects/r5090/config.yaml"
# the autotune list comes from sweep.json: checkpointing off is not tried on this tier
check "sed -n '/^## Sanity/,/^## Monitoring/p' projects/r5090/plan.md | grep -qxF -- '- gradient checkpointing off: not on the 32GB tier'"
check "sed -n '/^## Sanity/,/^## Monitoring/p' projects/r5090/plan.md | grep -qxF -- '- quantization off'"

test_case "rtx-4090: the gate stops; --accept-risk proceeds and says so"
run plan "${M[@]}" --gpu rtx-4090 --run-name r4090
expect_rc 1
expect_err "24 GB"
expect_err "minimum of 32 GB"
expect_err "(a) abort"
check "[ ! -e projects/r4090 ]"
run plan "${M[@]}" --gpu rtx-4090 --run-name r4090 --accept-risk
expect_rc 0
check "[ \$(difflines '$TD/configs/t2v_lora_low_vram.yaml' projects/r4090/config.yaml) -eq 4 ]"
check "sed -n '/^## Assumptions/,/^## Cost/p' projects/r4090/plan.md | grep -q 'own risk (--accept-risk)'"

test_case "memory gate: the estimate says a full fine-tune does not fit one H100: gated, exit 1, nothing written"
run plan "${M[@]}" --gpu h100-80gb --training-mode full --run-name full1
expect_rc 1
expect_err "the estimate puts the full training's peak at"
expect_err "GiB per GPU against the 79.6 GiB of each NVIDIA H100"
expect_err "where the largest term, "
expect_err "it runs out first in the"
expect_err "train a LoRA instead (--training-mode lora)"
expect_err "plan for more or larger GPUs (--gpu)"
expect_err "pass --accept-risk to write the plan anyway"
check "[ \$(printf '%s' \"\$err\" | wc -l) -le 1 ]"
check "[ ! -e projects/full1 ]"
run plan "${M[@]}" --gpu h100-80gb --training-mode full --run-name full1 --json
expect_rc 1
expect_json 'j["status"] == "gated" and j["gate"] == "memory" and "--accept-risk" in j["message"]'
expect_json 'j["estimate"]["available"] and j["estimate"]["fits"] is False and j["estimate"]["peak_bytes"] > 80e9'
expect_json '"config" not in j and "plan" not in j'
check "[ ! -e projects/full1 ]"
run plan "${M[@]}" --gpu h100-80gb:4 --training-mode full --run-name full4
expect_rc 1
expect_err "--accept-risk"
check "[ ! -e projects/full4 ]"
# the tier gate says which gate it is
run plan "${M[@]}" --gpu rtx-4090 --run-name r4090g --json
expect_rc 1
expect_json 'j["status"] == "gated" and j["gate"] == "tier"'
check "[ ! -e projects/r4090g ]"

test_case "h100-80gb:4 full --accept-risk: FSDP launch, offload true, quantization null"
run plan "${M[@]}" --gpu h100-80gb:4 --training-mode full --run-name full4 --accept-risk --json
expect_rc 0
expect_json 'j["status"] == "go" and "gate" not in j'
expect_json 'any("does not fit" in a and "--accept-risk" in a for a in j["assumptions"])'
check "sed -n '/^## Assumptions/,/^## Cost/p' projects/full4/plan.md | grep -q 'The estimate says the training does not fit.*own risk (--accept-risk)'"
expect_json '"--config_file configs/accelerate/fsdp.yaml --num_processes 4" in j["launch"]["command"]'
expect_json 'j["launch"]["command"].startswith("uv run accelerate launch")'
# issue 30: the trainer keeps a full fine-tune's transformer in fp32 (AdamW states fp32, sharded 4
# ways): field reports of the official trainer run out of memory on 4 H100s, and so does the estimate
expect_json 'len(j["warnings"]) == 1 and "would first run out in the" in j["warnings"][0]'
expect_json 'j["estimate"]["available"] and j["estimate"]["is_estimate"] and j["estimate"]["step_seconds"] > 0'
check "grep -q '^  offload_optimizer_during_validation: true' projects/full4/config.yaml"
check "grep -q '^  quantization: null' projects/full4/config.yaml"
check "grep -q '^  training_mode: \"full\"' projects/full4/config.yaml"
check "grep -qF 'x 4, 80GB' projects/full4/plan.md"

test_case "a full fine-tune the estimate fits (4 x H200) stays go, without the gate's assumption"
run plan "${M[@]}" --gpu h200:4 --training-mode full --run-name fullh200 --json
expect_rc 0
expect_json 'j["status"] == "go" and "gate" not in j and j["estimate"]["fits"] is True'
expect_json 'not any("does not fit" in a for a in j["assumptions"])'
expect_json 'not any("would first run out" in w for w in j["warnings"])'
check "[ -f projects/fullh200/plan.md ]"

test_case "h100-80gb:2 LoRA: plain accelerate launch"
run plan "${M[@]}" --gpu h100-80gb:2 --run-name lora2 --json
expect_rc 0
expect_json 'j["launch"]["command"].startswith("uv run accelerate launch --num_processes 2 scripts/train.py")'
expect_json '"fsdp" not in j["launch"]["command"]'
expect_json 'j["effective_batch"] == 2'

test_case "issue 30: the training size from the resolution buckets, validation from its own keys"
run plan "${M[@]}" --gpu rtx-5090 --run-name buckets --resolution-buckets "960x544x1;768x448x89" --json
expect_rc 0
cost=$(sed -n '/^## Cost/,/^## Approve/p' projects/buckets/plan.md)
# the largest bucket by latent volume (768/32 x 448/32 x 12 > 960/32 x 544/32 x 1), never video_dims
check "printf '%s' \"\$cost\" | grep -qE '^\| training phase \(step at 768x448x89\) \| [0-9.]+ GiB'"
check "printf '%s' \"\$cost\" | grep -qE '^\| validation phase \(sampling at 576x576x49, tiled decode\) \| [0-9.]+ GiB'"
check "! grep -q 'Training resolution:' projects/buckets/plan.md"
check "grep -q 'training at 768x448x89 (the largest resolution bucket) with the audio stream' projects/buckets/plan.md"
mkdir -p "$TMP/noval/configs"
# validation off, and the flexible strategy without its audio modality
for f in "$TD"/configs/*.yaml; do sed -e 's/^  interval: 100 .*/  interval: null/' -e '/^  audio:$/,+2d' "$f" >"$TMP/noval/configs/$(basename "$f")"; done
cp -r "$TD/src" "$TD/pyproject.toml" "$TMP/noval/" 2>/dev/null
run plan --trainer-dir "$TMP/noval" --gpu h100-80gb --model "$TMP/models/ltx-2-19b-dev.safetensors" --text-encoder "$TMP/models/gemma-3-12b-it" --run-name noval --json
expect_rc 0
check "grep -qF '| validation phase | none (validation.interval: null) |' projects/noval/plan.md"
check "grep -q 'training at 960x544x49 (assumed) without an audio stream' projects/noval/plan.md"
check "grep -qF '| text-encoder phase (validation prompts, before training) |' projects/noval/plan.md"
mkdir -p "$TMP/noprompt/configs"
for f in "$TD"/configs/*.yaml; do sed -e 's/^  samples:$/  samples: []/' -e '/^    - prompt:/,/^  negative_prompt:/{/^  negative_prompt:/!d}' "$f" >"$TMP/noprompt/configs/$(basename "$f")"; done
run plan --trainer-dir "$TMP/noprompt" --gpu h100-80gb --model "$TMP/models/ltx-2-19b-dev.safetensors" --text-encoder "$TMP/models/gemma-3-12b-it" --run-name noprompt --json
expect_rc 0
check "[ -f projects/noprompt/plan.md ] && ! grep -qF '| text-encoder phase' projects/noprompt/plan.md"
rm -rf "$TMP/noprompt"
rm -rf "$TMP/noval"
run plan "${M[@]}" --gpu rtx-5090 --run-name badb --resolution-buckets "960x544x49;big"
expect_rc 2
expect_err "--resolution-buckets: bucket 'big': expected WIDTHxHEIGHTxFRAMES"

test_case "multi-GPU keeps the planned effective batch by reducing accumulation"
mkdir -p "$TMP/acc/configs"
sed 's/gradient_accumulation_steps: 1/gradient_accumulation_steps: 8/' "$TD/configs/t2v_lora.yaml" >"$TMP/acc/configs/t2v_lora.yaml"
run plan --trainer-dir "$TMP/acc" --gpu h100-80gb:4 --model "$TMP/models/ltx-2-19b-dev.safetensors" --text-encoder "$TMP/models/gemma-3-12b-it" --run-name acc --json
expect_rc 0
expect_json 'j["effective_batch"] == 8'
expect_json 'any(p["key"] == "optimization.gradient_accumulation_steps" and p["after"] == "2" for p in j["patches"])'
check "grep -q '^  gradient_accumulation_steps: 2\$' projects/acc/config.yaml"
rm -rf "$TMP/acc"

test_case "rtx-a6000 full: gated; with --accept-risk the warning and LoRA alternative"
run plan "${M[@]}" --gpu rtx-a6000 --training-mode full --run-name a6k
expect_rc 1
expect_err "--training-mode lora"
check "[ ! -e projects/a6k ]"
run plan "${M[@]}" --gpu rtx-a6000 --training-mode full --run-name a6k --accept-risk
expect_rc 0
expect_out "40–60GB tier"
expect_err "unlikely to fit"
expect_err "LoRA alternative"
check "grep -q 'LoRA alternative' projects/a6k/plan.md"
check "grep -q '^  quantization: null' projects/a6k/config.yaml"

test_case "--steps and i2v"
run plan "${M[@]}" --gpu h200 --mode i2v --steps 500 --run-name i2v --dataset dogs
expect_rc 0
check "[ \$(difflines '$TD/configs/i2v_lora.yaml' projects/i2v/config.yaml) -eq 5 ]"
check "grep -q '^  steps: 500' projects/i2v/config.yaml"
check "! sed -n '/^## Assumptions/,/^## Cost/p' projects/i2v/plan.md | grep -q 'Steps:'"

test_case "a CRLF trainer directory: CRLF kept, only the four path lines differ"
mkdir -p "$TMP/crlf/configs"
sed 's/$/\r/' "$TD/configs/t2v_lora.yaml" >"$TMP/crlf/configs/t2v_lora.yaml"
run plan --trainer-dir "$TMP/crlf" --gpu h100-80gb --model "$TMP/models/ltx-2-19b-dev.safetensors" --text-encoder "$TMP/models/gemma-3-12b-it" --run-name crlf
expect_rc 0
check "[ \$(difflines '$TMP/crlf/configs/t2v_lora.yaml' projects/crlf/config.yaml) -eq 4 ]"
check "[ \$(grep -c \$'\\r\$' projects/crlf/config.yaml) -eq \$(wc -l <projects/crlf/config.yaml) ]"
run check projects/crlf
expect_rc 0
rm -rf "$TMP/crlf"

test_case "URLs are refused"
run plan --trainer-dir "$TD" --gpu h100-80gb --model https://huggingface.co/Lightricks/LTX-2/ltx-2-19b-dev.safetensors --text-encoder "$TMP/models/gemma-3-12b-it"
expect_rc 1
expect_err "URLs are refused"
run plan --trainer-dir "$TD" --gpu h100-80gb --model "$TMP/models/ltx-2-19b-dev.safetensors" --text-encoder hf://google/gemma-3
expect_rc 1
expect_err "URLs are refused"

test_case "an invalid checkpoint is refused"
printf 'not a safetensors file' >"$TMP/models/broken-ltx-2.safetensors"
run plan --trainer-dir "$TD" --gpu h100-80gb --model "$TMP/models/broken-ltx-2.safetensors" --text-encoder "$TMP/models/gemma-3-12b-it" --run-name broken
expect_rc 1
expect_err "broken-ltx-2.safetensors"
check "[ ! -e projects/broken ]"
rm -f "$TMP/models/broken-ltx-2.safetensors"

test_case "dry run creates nothing"
run plan "${M[@]}" --gpu h100-80gb --run-name dry --dry-run
expect_rc 0
expect_out "would create"
expect_out "## Approve to Proceed"
check "[ ! -e projects/dry ]"

test_case "model discovery in \$LTX_MODELS_DIR"
mkdir -p "$TMP/disc/ltx" "$TMP/disc/text"
cp "$TMP/models/ltx-2-19b-dev.safetensors" "$TMP/disc/ltx/"
cp "$TMP/models/ltx-2-19b-dev.safetensors" "$TMP/disc/ltx/ltx-2-19b-video-vae.safetensors"
mkdir -p "$TMP/disc/text/gemma-3-12b"; echo '{}' >"$TMP/disc/text/gemma-3-12b/config.json"
LTX_MODELS_DIR="$TMP/disc" run plan --trainer-dir "$TD" --gpu h100-80gb --run-name disc --json
expect_rc 0
expect_json 'j["model"].endswith("/disc/ltx/ltx-2-19b-dev.safetensors") and j["text_encoder"].endswith("/disc/text/gemma-3-12b")'
expect_json 'any("Model checkpoint" in a for a in j["assumptions"])'
cp "$TMP/models/ltx-2-19b-dev.safetensors" "$TMP/disc/ltx/ltx-2.3-22b-dev.safetensors"
LTX_MODELS_DIR="$TMP/disc" run plan --trainer-dir "$TD" --gpu h100-80gb --run-name disc2
expect_rc 1
expect_err "several"
expect_err "ltx-2.3-22b-dev.safetensors"
expect_err "--model"
LTX_MODELS_DIR="$TMP/nowhere" run plan --trainer-dir "$TD" --gpu h100-80gb --run-name disc3
expect_rc 1
expect_err "pass --model"

test_case "workspace from \$LTX_TRAININGS_DIR and the trainer from \$LTX_TRAINER_DIR"
mkdir -p "$TMP/work/trainings"
LTX_TRAININGS_DIR="$TMP/work/trainings" LTX_TRAINER_DIR="$TD" run plan --gpu h100-80gb --model "$TMP/models/ltx-2-19b-dev.safetensors" --text-encoder "$TMP/models/gemma-3-12b-it" --run-name envws
expect_rc 0
check "[ -f '$TMP/work/trainings/envws/config.yaml' ]"
run plan --gpu h100-80gb --model "$TMP/models/ltx-2-19b-dev.safetensors" --text-encoder "$TMP/models/gemma-3-12b-it" --run-name notrainer
expect_rc 1
expect_err "--trainer-dir"

test_case "usage"
run plan --bogus
expect_rc 2
run plan "${M[@]}" --gpu h100-80gb --training-mode half
expect_rc 2
run plan "${M[@]}" --gpu h100-80gb --run-name ../escape
expect_rc 2
check "[ ! -e '$TMP/escape' ]"

test_case "nothing appears outside the workspace"
mv "$TMP/work/trainings" "$TMP/work/projects/"  # created by this test, not by vramfit
rm -rf "$TMP/disc"
after=$(snapshot)
check '[ "$before" = "$after" ]'
[ "$before" = "$after" ] || diff <(echo "$before") <(echo "$after") >&2

test_case "plan.md runs by hand: the preprocessing command with the plan's buckets, tune, the launch (issue 26)"
mkdir -p "$TMP/hand/bin" "$TMP/hand/it's \$(x)"
cp "$TMP/models/ltx-2-19b-dev.safetensors" "$TMP/hand/it's \$(x)/ltx-2-19b-dev.safetensors"
cat >"$TMP/hand/bin/uv" <<'SH'
#!/bin/sh
for a in "$@"; do printf '%s\n' "$a"; done >"$UV_ARGS"
SH
chmod +x "$TMP/hand/bin/uv"
HM=(--trainer-dir "$TD" --model "$TMP/hand/it's \$(x)/ltx-2-19b-dev.safetensors" --text-encoder "$TMP/models/gemma-3-12b-it")
run plan "${HM[@]}" --gpu h100-80gb:4 --resolution-buckets '960x544x49;512x512x97' --trigger 'cat`s' --run-name hand4 --json
expect_rc 0
expect_json 'j["preprocess"]["resolution_buckets"] == "960x544x49;512x512x97" and j["preprocess"]["dataset"].endswith("/hand4/dataset/dataset.json")'
expect_json '"accelerate launch --num_processes 4 scripts/process_dataset.py" in j["preprocess"]["command"]'
line=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["preprocess"]["line"])')
rd=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_dir"])')
check "grep -qxF '### Run by Hand' '$rd/plan.md'"
check "grep -qF 'The whole flow can be run by hand' '$rd/plan.md'"
check "grep -qF -- \"\$line\" '$rd/plan.md'"
check "grep -qF 'Train on 4 GPUs of one node: a LoRA runs data-parallel (DDP)' '$rd/plan.md'"
check "grep -qF \"sbatch \$(printf %s \"$rd/launch.sbatch\")\" '$rd/plan.md'"
check "grep -qF 'vramfit tune ' '$rd/plan.md'"
# pasted into a shell, every value arrives as one word, unchanged
export UV_ARGS="$TMP/hand/args"
(PATH="$TMP/hand/bin:$PATH"; eval "$line")
want=$(printf '%s\n' run accelerate launch --num_processes 4 scripts/process_dataset.py "$rd/dataset/dataset.json" \
  --resolution-buckets '960x544x49;512x512x97' --model-path "$TMP/hand/it's \$(x)/ltx-2-19b-dev.safetensors" \
  --text-encoder-path "$TMP/models/gemma-3-12b-it" --lora-trigger 'cat`s')
check '[ "$(cat "$UV_ARGS")" = "$want" ]' || diff <(cat "$UV_ARGS") <(echo "$want") >&2
unset UV_ARGS
run plan "${M[@]}" --gpu h100-80gb:4 --training-mode full --run-name handfull --accept-risk --json
rd=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_dir"])')
check "grep -qF 'full fine-tune shards the model with FSDP through \`accelerate launch\` and the checkout'\''s \`configs/accelerate/fsdp.yaml\`' '$rd/plan.md'"
check "grep -qF -- '--config_file configs/accelerate/fsdp.yaml --num_processes 4 scripts/train.py' '$rd/plan.md'"
run plan "${M[@]}" --gpu h100-80gb --run-name hand1 --json
expect_json 'j["preprocess"]["resolution_buckets"] == "960x544x49" and j["preprocess"]["command"].startswith("uv run python scripts/process_dataset.py ")'
rd=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_dir"])')
check "grep -qF 'Train on one GPU:' '$rd/plan.md'"
check "grep -qF 'uv run python scripts/process_dataset.py ' '$rd/plan.md'"
rm -rf "$TMP/hand"

test_case "a config key set twice is refused, not patched where the trainer ignores it"
rm -rf "$TMP/td-dup" "$TMP/dupwork"; cp -r "$TD" "$TMP/td-dup"; mkdir -p "$TMP/dupwork"
printf 'output_dir: second\n' >>"$TMP/td-dup/configs/t2v_lora.yaml"
n=$(wc -l <"$TMP/td-dup/configs/t2v_lora.yaml")
first=$(grep -n '^output_dir:' "$TMP/td-dup/configs/t2v_lora.yaml" | head -1 | cut -d: -f1)
(cd "$TMP/dupwork" && "$VRAMFIT" plan --trainer-dir "$TMP/td-dup" --model "$TMP/models/ltx-2-19b-dev.safetensors" \
  --text-encoder "$TMP/models/gemma-3-12b-it" --gpu h100-80gb --dataset cats >"$TMP/out" 2>"$TMP/err"); rc=$?
out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
expect_rc 1
expect_err "t2v_lora.yaml:$n: output_dir is set twice (lines $first and $n); PyYAML keeps the last; remove one"
check '[ ! -e "$TMP/dupwork/projects" ]'
rm -rf "$TMP/td-dup" "$TMP/dupwork"

finish
