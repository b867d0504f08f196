#!/usr/bin/env bash
# trainer.sh - end-to-end tests of vramfit following the trainer checkout it is
# given (issue 10): the schema read from its config.py (a field added is
# accepted, a key it lacks is named unknown with its class, drift of the
# profile's keys), its config families as modes (--list-modes, a new family
# with no code change, the trainer's own low-VRAM deltas), checkpoints as they
# ship (unified, split pack, a VAE refused as the model), and the version read
# from git HEAD or pyproject.toml. Trainer directories are copies of the test
# fixture (tests/fixtures/ltx-trainer), never the real trainer.
. "$(dirname "$0")/lib.sh"

TD="$VF_SOURCE_DIR/tests/fixtures/ltx-trainer"
MK="python3 $VF_SOURCE_DIR/tests/helpers/mk-safetensors.py"
unset LTX_TRAININGS_DIR LTX_TRAINER_DIR LTX_MODELS_DIR
export HOME="$TMP/home"
mkdir -p "$HOME" "$TMP/m/gemma" "$TMP/split" "$TMP/uni"
echo '{"model_type": "gemma3"}' >"$TMP/m/gemma/config.json"
$MK "$TMP/uni/ltx-2-19b-dev.safetensors" --meta '{"config": "{\"transformer\": {}, \"vae\": {}, \"audio_vae\": {}}", "model_version": "2.0.0"}' \
  model.diffusion_model.b. vae.decoder. audio_vae.decoder. vocoder.y.
$MK "$TMP/split/transformer.safetensors" --meta '{"config": "{\"transformer\": {\"_class_name\": \"X\"}}", "model_version": "2.3.1"}' \
  model.diffusion_model.blocks.0. model.diffusion_model.blocks.1.
$MK "$TMP/split/video-vae.safetensors" vae.decoder. vae.encoder.
$MK "$TMP/split/audio-vae.safetensors" audio_vae.decoder. vocoder.x.
$MK "$TMP/split/text-encoder.safetensors" language_model.layers.0.
U=(--model "$TMP/uni/ltx-2-19b-dev.safetensors" --text-encoder "$TMP/m/gemma" --workspace "$TMP/ws")

# a copy of the fixture trainer, optionally with config.py edited by a sed script
trainer_copy() { rm -rf "$1"; cp -r "$TD" "$1"; [ -z "${2:-}" ] || sed -i "$2" "$1/src/ltx_trainer/config.py"; }

test_case "every configs/<mode>_lora.yaml is a mode; a new family needs no code change"
trainer_copy "$TMP/t1"
sed -e 's/^# LTX-2 text-to-video LoRA.*/# Our own IC-LoRA family for tests: video from a reference video./' \
    -e 's/^    latents_dir: "latents"$/    latents_dir: "latents"\n    conditions:\n      - type: reference\n        latents_dir: "ref_latents"/' \
    "$TD/configs/t2v_lora.yaml" >"$TMP/t1/configs/v2v_ic_lora.yaml"
run plan --list-modes --trainer-dir "$TMP/t1"
expect_rc 0
expect_out "3 modes in"
expect_out_re "v2v_ic +v2v_ic_lora.yaml +\(low-VRAM: trainer's deltas\) Our own IC-LoRA family"
expect_out "flexible: video generated from reference, audio generated"
run plan --list-modes --trainer-dir "$TMP/t1" --json
expect_json '[m["mode"] for m in j["modes"]] == ["i2v", "t2v", "v2v_ic"] and j["modes"][2]["low_vram"] == ""'

test_case "a mode without its low-VRAM file on a 32GB card: the trainer's own deltas, listed"
run plan --trainer-dir "$TMP/t1" "${U[@]}" --mode v2v_ic --gpu rtx-5090 --run-name ic --json
expect_rc 0
expect_json 'j["shipped_config"].endswith("/v2v_ic_lora.yaml") and j["check"]["failures"] == 0'
expect_json '{d["key"]: d["value"] for d in j["low_vram_deltas"]} == {"lora.rank": "16", "lora.alpha": "16", "optimization.optimizer_type": "adamw8bit", "acceleration.quantization": "int8-quanto", "acceleration.load_text_encoder_in_8bit": "true", "acceleration.offload_optimizer_during_validation": "true", "validation.video_dims": "[576,576,49]"}'
expect_json 'all(d["applied"] and d["from"] == "t2v_lora.yaml -> t2v_lora_low_vram.yaml" for d in j["low_vram_deltas"])'
expect_json '"ref_latents" in j["data_dirs"] and "conditions" in j["data_dirs"]'
# issue 22: the JSON names the files used: the shipped v2v_ic_lora.yaml (not a
# v2v_ic_lora_low_vram.yaml that does not exist), RUN/config.yaml as checked
expect_json 'j["tier"]["config"].endswith("/v2v_ic_lora.yaml") and j["tier"]["wanted"] == "v2v_ic_lora_low_vram.yaml"'
expect_json 'j["tier"]["low_vram_from"] == "t2v_lora.yaml -> t2v_lora_low_vram.yaml"'
expect_json 'j["check"]["config"] == j["config"] and j["config"].endswith("/ic/config.yaml")'
check "grep -q '^  rank: 16' '$TMP/ws/ic/config.yaml' && grep -q 'applied the trainer.s low-VRAM choices' '$TMP/ws/ic/plan.md'"
check "grep -qF -- '- \`ref_latents/\` (\`training_strategy.video.conditions.0.latents_dir\`)' '$TMP/ws/ic/plan.md'"
run plan --trainer-dir "$TMP/t1" "${U[@]}" --mode nope --gpu h100-80gb --run-name nope
expect_rc 2
expect_err "--mode nope: the trainer checkout ships no such config family"
expect_err "(its modes: i2v, t2v, v2v_ic)"

test_case "no t2v pair: the deltas come from the first pair the checkout ships (av before i2v), named"
trainer_copy "$TMP/t1b"
rm "$TMP/t1b/configs/t2v_lora_low_vram.yaml"
sed 's/^# LTX-2 image-to-video.*/# Our own audio-video family for tests./' "$TD/configs/i2v_lora.yaml" >"$TMP/t1b/configs/av_lora.yaml"
sed -e 's/^# LTX-2 image-to-video.*/# Our own audio-video family for tests (low VRAM)./' -e 's/^  rank: 16/  rank: 8/' \
  "$TD/configs/i2v_lora_low_vram.yaml" >"$TMP/t1b/configs/av_lora_low_vram.yaml"
run plan --trainer-dir "$TMP/t1b" "${U[@]}" --mode t2v --gpu rtx-5090 --run-name avpair --json
expect_rc 0
expect_json 'j["tier"]["low_vram_from"] == "av_lora.yaml -> av_lora_low_vram.yaml"'
expect_json 'all(d["from"] == "av_lora.yaml -> av_lora_low_vram.yaml" for d in j["low_vram_deltas"])'
expect_json '{d["key"]: d["value"] for d in j["low_vram_deltas"]}["lora.rank"] == "8"'
expect_json 'j["tier"]["config"].endswith("/t2v_lora.yaml")'
check "grep -q '^  rank: 8' '$TMP/ws/avpair/config.yaml' && grep -qF '(the pair \`av_lora.yaml -> av_lora_low_vram.yaml\` in this checkout)' '$TMP/ws/avpair/plan.md'"
rm "$TMP/t1b/configs/av_lora_low_vram.yaml"
run plan --trainer-dir "$TMP/t1b" "${U[@]}" --mode t2v --gpu rtx-5090 --run-name i2vpair --json
expect_rc 0
expect_json 'j["tier"]["low_vram_from"] == "i2v_lora.yaml -> i2v_lora_low_vram.yaml"'
rm "$TMP/t1b/configs/i2v_lora_low_vram.yaml"
run plan --trainer-dir "$TMP/t1b" "${U[@]}" --mode t2v --gpu rtx-5090 --run-name nopair
expect_rc 1
expect_err "no {mode}_lora.yaml -> {mode}_lora_low_vram.yaml pair in any mode"

test_case "know the trainer, or say no: an LTX-Video-Trainer-like schema (model_source, extra forbidden) is refused"
trainer_copy "$TMP/ltxv" 's/^    model_path: str | Path = Field(.*/    model_source: str = "LTXV_13B_097_DEV"/; /^    text_encoder_path:/d; /^    training_strategy: Strategy/d; /@field_validator("model_path")/,/return v/d'
sed -i 's/^name = .*/name = "ltxv-trainer-like"/' "$TMP/ltxv/pyproject.toml"
check "grep -q 'model_source' '$TMP/ltxv/src/ltx_trainer/config.py' && ! grep -q 'model_path' '$TMP/ltxv/src/ltx_trainer/config.py'"
run plan --trainer-dir "$TMP/ltxv" "${U[@]}" --gpu h100-80gb --run-name ltxv
expect_rc 1
expect_err "not the trainer this profile knows: its schema (src/ltx_trainer/config.py, LtxTrainerConfig) has no model.model_path, model.text_encoder_path, training_strategy (found ltxv-trainer-like, pyproject 0.9.1)"
expect_err_lines 1
check "[ ! -e '$TMP/ws/ltxv' ]"
test_case "know the trainer: another trainer's package (src/ltxv_trainer/config.py) is refused, naming it"
mv "$TMP/ltxv/src/ltx_trainer" "$TMP/ltxv/src/ltxv_trainer"
run plan --trainer-dir "$TMP/ltxv" "${U[@]}" --gpu h100-80gb --run-name ltxv
expect_rc 1
expect_err "not the trainer this profile knows: no src/ltx_trainer/config.py, but src/ltxv_trainer/config.py (found ltxv-trainer-like, pyproject 0.9.1)"
expect_err_lines 1
test_case "know the trainer: its schema file without the profile's class is refused"
trainer_copy "$TMP/ltxv2" 's/^class LtxTrainerConfig(Base):/class LtxvTrainerConfig(Base):/'
run plan --trainer-dir "$TMP/ltxv2" "${U[@]}" --gpu h100-80gb --run-name ltxv2
expect_rc 1
expect_err "not the trainer this profile knows: src/ltx_trainer/config.py: no class LtxTrainerConfig"

test_case "schema from the checkout: a field added to the validation model is accepted"
trainer_copy "$TMP/t2" 's/^    skip_initial_validation: bool = False$/&\n    sharpness_scale: float = Field(default=1.0, ge=0.5)/'
cp "$TD/configs/t2v_lora.yaml" "$TMP/c.yaml"
run config set "$TMP/c.yaml" validation.sharpness_scale=2.0
run check --config "$TMP/c.yaml" --trainer-dir "$TD" --json
expect_json '[i["rule"] for i in j["items"] if i["key"] == "validation.sharpness_scale"] == ["unknown key: ValidationSection (src/ltx_trainer/config.py:121) has no field '"'"'sharpness_scale'"'"' and the trainer'"'"'s schema forbids extra keys"]'
run check --config "$TMP/c.yaml" --trainer-dir "$TMP/t2" --json
expect_json 'not [i for i in j["items"] if i["key"] == "validation.sharpness_scale"]'
run config set "$TMP/c.yaml" validation.sharpness_scale=0.1
run check --config "$TMP/c.yaml" --trainer-dir "$TMP/t2"
expect_out "validation.sharpness_scale: 0.1 is below the minimum: must be >= 0.5"

test_case "drift: a profile key the trainer's schema no longer has is reported, not used silently"
trainer_copy "$TMP/t3" '/^    load_text_encoder_in_8bit: bool/d'
cp "$TD/configs/t2v_lora.yaml" "$TMP/d.yaml"
run check --config "$TMP/d.yaml" --trainer-dir "$TMP/t3"
expect_out "acceleration.load_text_encoder_in_8bit: unknown key: AccelSection"
expect_out "acceleration.load_text_encoder_in_8bit: not checked: the trainer profile (configs.json keys) names this key, but the trainer's schema has no such field"
test_case "drift: a checkout without the profile's resume key (model.load_checkpoint) is told vramfit run cannot resume it"
trainer_copy "$TMP/t5" 's/^    load_checkpoint:/    resume_from:/'
run check --config "$TMP/d.yaml" --trainer-dir "$TMP/t5"
expect_out "model.load_checkpoint: not checked: the trainer profile (configs.json checkpoints.resume_key) names this key as the trainer's resume key, but the trainer's schema has no such field: vramfit run cannot resume this trainer from a checkpoint"
run check --config "$TMP/d.yaml" --trainer-dir "$TD"
expect_no_out "checkpoints.resume_key"

test_case "the trainer version: git HEAD (branch, packed-refs, detached), else pyproject"
trainer_copy "$TMP/t4"
mkdir -p "$TMP/t4/.git/refs/heads"
echo "ref: refs/heads/main" >"$TMP/t4/.git/HEAD"
echo "400fd31aaaabbbbccccddddeeeeffff00001111" >"$TMP/t4/.git/refs/heads/main"
run check --config "$TMP/d.yaml" --trainer-dir "$TMP/t4" --json
expect_json 'j["trainer"]["version"] == "git 400fd31aaaab (branch main)"'
rm "$TMP/t4/.git/refs/heads/main"
printf '# pack-refs with: peeled\n1234567890abcdef1234567890abcdef12345678 refs/heads/main\n' >"$TMP/t4/.git/packed-refs"
run check --config "$TMP/d.yaml" --trainer-dir "$TMP/t4" --json
expect_json 'j["trainer"]["version"] == "git 1234567890ab (branch main)"'
echo "feedfacefeedfacefeedfacefeedfacefeedface" >"$TMP/t4/.git/HEAD"
run check --config "$TMP/d.yaml" --trainer-dir "$TMP/t4" --json
expect_json 'j["trainer"]["version"] == "git feedfacefeed (detached)"'
trainer_copy "$TMP/t5"
run check --config "$TMP/d.yaml" --trainer-dir "$TMP/t5" --json
expect_json 'j["trainer"]["version"] == "pyproject 0.9.1"'
run plan --trainer-dir "$TMP/t4" "${U[@]}" --gpu h100-80gb --run-name ver
check "grep -qF 'feedfacefeed (detached); read from it this time' '$TMP/ws/ver/plan.md'"

test_case "checkpoints: a unified file plans with one path"
run plan --trainer-dir "$TD" "${U[@]}" --gpu h100-80gb --run-name uni --json
expect_rc 0
expect_json 'j["model_files"]["layout"] == "unified" and j["model_files"]["version"] == "LTX-2 2.0.0" and j["model_files"]["version_from"] == "__metadata__ model_version"'
expect_json 'sorted(p["key"] for p in j["patches"]) == ["data.preprocessed_data_root", "model.model_path", "model.text_encoder_path", "output_dir"]'

test_case "checkpoints: a split pack plans with all four model paths"
run plan --trainer-dir "$TD" --model "$TMP/split/transformer.safetensors" --text-encoder "$TMP/split/text-encoder.safetensors" \
  --workspace "$TMP/ws" --gpu h100-80gb --run-name split --json
expect_rc 0
expect_json '{p["key"]: p["after"] for p in j["patches"] if p["key"].startswith("model.")} == {"model.model_path": "'"$TMP"'/split/transformer.safetensors", "model.text_encoder_path": "'"$TMP"'/split/text-encoder.safetensors", "model.video_vae_path": "'"$TMP"'/split/video-vae.safetensors", "model.audio_vae_path": "'"$TMP"'/split/audio-vae.safetensors"}'
expect_json 'j["model_files"]["layout"] == "split" and j["model_files"]["version"] == "LTX-2.3 2.3.1" and j["check"]["failures"] == 0'
check "grep -qF 'Model: LTX-2.3 2.3.1 (\\_\\_metadata\\_\\_ model\\_version)' '$TMP/ws/split/plan.md'"
run check "$TMP/ws/split" --trainer-dir "$TD"
expect_rc 0

test_case "checkpoints: a split pack's packed text encoder is found beside the transformer"
run plan --trainer-dir "$TD" --model "$TMP/split/transformer.safetensors" --workspace "$TMP/ws" --gpu h100-80gb --run-name split2 --json
expect_rc 0
expect_json 'j["model_files"]["text_encoder"] == "'"$TMP"'/split/text-encoder.safetensors" and j["check"]["failures"] == 0'

test_case "checkpoints: a VAE file offered as the model is refused"
run plan --trainer-dir "$TD" --model "$TMP/split/video-vae.safetensors" --text-encoder "$TMP/m/gemma" \
  --workspace "$TMP/ws" --gpu h100-80gb --run-name vae
expect_rc 1
expect_err "holds only the video VAE (no transformer tensors)"
check "[ ! -e '$TMP/ws/vae' ]"
mkdir -p "$TMP/lonely" && cp "$TMP/split/transformer.safetensors" "$TMP/lonely/"
run plan --trainer-dir "$TD" --model "$TMP/lonely/transformer.safetensors" --text-encoder "$TMP/m/gemma" \
  --workspace "$TMP/ws" --gpu h100-80gb --run-name lonely
expect_rc 1
expect_err "holds only the transformer (a split pack) and no video VAE file in $TMP/lonely; pass --video-vae PATH"

test_case "the real trainer's shape: every fixture family checks with 0 failures"
for f in "$TD"/configs/*.yaml; do
  run plan --trainer-dir "$TD" "${U[@]}" --gpu h100-80gb --mode "$(basename "$f" | sed 's/_lora.*//')" \
    --run-name "fam-$(basename "$f" .yaml)" --json --dry-run
  expect_json 'j["check"]["failures"] == 0'
done

test_case "--trainer-validate: no environment in the checkout is 'not checked', never a failure"
cp "$TD/configs/t2v_lora.yaml" "$TMP/v.yaml"
run config set "$TMP/v.yaml" model.model_path="$TMP/uni/ltx-2-19b-dev.safetensors" model.text_encoder_path="$TMP/m/gemma"
run check --config "$TMP/v.yaml" --trainer-dir "$TD" --trainer-validate --json
expect_rc 0
expect_json 'j["trainer"]["validated"] is False and "no trainer environment" in j["trainer"]["validate_note"] and j["failures"] == 0'

test_case "--trainer-validate: the trainer's errors, supervised and mapped to keys (a stand-in environment)"
trainer_copy "$TMP/t6"
mkdir -p "$TMP/t6/.venv/bin"
cat >"$TMP/t6/.venv/bin/python" <<'PY'
#!/bin/sh
# stand-in for the trainer's environment: checks how it is called, answers like the script
[ "$1" = -c ] && [ "$4" = ltx_trainer.config ] && [ "$5" = LtxTrainerConfig ] || { echo "bad call: $*" >&2; exit 9; }
case $(cat "$3") in
*broken*) printf 'VF-ERR\ttraining_strategy.flexible.video.latents_dir\tField required\n'
          printf 'VF-ERR\tdata.preprocessed_data_root\tValue error, Dataset path does not exist: /nowhere/pre\n'; exit 3 ;;
*noimport*) echo "ModuleNotFoundError: No module named 'ltx_trainer'" >&2; exit 1 ;;
*) echo VF-OK ;;
esac
PY
chmod +x "$TMP/t6/.venv/bin/python"
run check --config "$TMP/v.yaml" --trainer-dir "$TMP/t6" --trainer-validate --json
expect_json 'j["trainer"]["validated"] is True and j["failures"] == 0'
run config set "$TMP/v.yaml" seed=broken data.preprocessed_data_root=/nowhere/pre
run check --config "$TMP/v.yaml" --trainer-dir "$TMP/t6" --trainer-validate
expect_out "training_strategy.video.latents_dir: the trainer's own validation: Field required"
expect_out "pending: data.preprocessed_data_root: the trainer's own validation: Value error, Dataset path does not exist"
run config set "$TMP/v.yaml" seed=noimport
run check --config "$TMP/v.yaml" --trainer-dir "$TMP/t6" --trainer-validate
expect_out "not checked: the trainer's own validation did not run"
expect_out "No module named 'ltx_trainer'"

test_case "--trainer-validate with a real pydantic 2 on the fixture's config.py (skipped without one)"
if python3 -c 'import sys, pydantic, yaml; sys.exit(not pydantic.VERSION.startswith("2"))' 2>/dev/null; then
  trainer_copy "$TMP/t7"
  mkdir -p "$TMP/t7/.venv/bin"
  printf '#!/bin/sh\nPYTHONPATH="%s/src" exec python3 "$@"\n' "$TMP/t7" >"$TMP/t7/.venv/bin/python"
  chmod +x "$TMP/t7/.venv/bin/python"
  cp "$TD/configs/t2v_lora.yaml" "$TMP/r.yaml"
  run config set "$TMP/r.yaml" lora.rank=0 optimization.optimizer_type=sgd
  run check --config "$TMP/r.yaml" --trainer-dir "$TMP/t7" --trainer-validate
  expect_out "lora.rank: the trainer's own validation: Input should be greater than or equal to 1"
  expect_out "optimization.optimizer_type: the trainer's own validation: Input should be 'adamw' or 'adamw8bit'"
  expect_no_out "validation.guidance_scale: the trainer's own validation"
else
  echo "skipped: no pydantic 2 with PyYAML in python3 (the stand-in environment above still ran)" >&2
fi


test_case "check: a config without model.training_mode says the lora default applies, not that the file sets it"
printf 'model:\n  model_path: /nonexistent/m.safetensors\n' >"$TMP/nomode.yaml"
run check --config "$TMP/nomode.yaml"; expect_rc 1
expect_out 'model.training_mode is not set (the trainer'"'"'s default: "lora") but the lora block'
expect_no_out 'model.training_mode is "lora"'
test_case "check: relative model paths are read from the trainer directory, where the trainer runs, not from the caller's"
trainer_copy "$TMP/trel"
mkdir -p "$TMP/trel/models/gemma" "$TMP/cwdrel/models/gemma"
echo '{}' >"$TMP/trel/models/gemma/config.json"; echo '{}' >"$TMP/cwdrel/models/gemma/config.json"
cp "$TMP/uni/ltx-2-19b-dev.safetensors" "$TMP/trel/models/m.safetensors"
cp "$TMP/uni/ltx-2-19b-dev.safetensors" "$TMP/cwdrel/models/m.safetensors"
sed -e 's|^  model_path: .*|  model_path: "models/m.safetensors"|' -e 's|^  text_encoder_path: .*|  text_encoder_path: "models/gemma"|' \
  "$TD/configs/t2v_lora.yaml" >"$TMP/rel.yaml"
check "grep -q '^  model_path: \"models/m.safetensors\"' '$TMP/rel.yaml'"
# the same verdict from any directory: found under the trainer directory
for d in "$TMP/cwdrel" /; do
  (cd "$d" && "$VRAMFIT" check --config "$TMP/rel.yaml" --trainer-dir "$TMP/trel" --json >"$TMP/out" 2>"$TMP/err"); rc=$?
  out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
  expect_json 'not any(i["key"] in ("model.model_path", "model.text_encoder_path") and i["level"] == "fail" for i in j["items"])'
done
# only beside the caller (the trainer would not find them): failed, saying where they are read
(cd "$TMP/cwdrel" && "$VRAMFIT" check --config "$TMP/rel.yaml" --trainer-dir "$TD" >"$TMP/out" 2>"$TMP/err"); rc=$?
out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
expect_rc 1
expect_out "model.model_path: models/m.safetensors does not exist (a relative path: the trainer reads it from its directory $TD, where it runs)"

test_case "check (static): ints past 64 bits compare by their value (PyYAML and pydantic have no 64-bit limit)"
sed -e 's|^  dropout: .*|  dropout: -99999999999999999999|' -e 's|^  rank: .*|  rank: 9223372036854775808|' \
  "$TD/configs/t2v_lora.yaml" >"$TMP/wide.yaml"
check "grep -q '^  dropout: -99999999999999999999' '$TMP/wide.yaml' && grep -q '^  rank: 9223372036854775808' '$TMP/wide.yaml'"
VRAMFIT_NO_PYTHON=1 run check --config "$TMP/wide.yaml" --trainer-dir "$TD"
expect_out "lora.dropout: -99999999999999999999 is below the minimum: must be >= 0"
expect_no_out "lora.rank: 9223372036854775808"

test_case "check: a module of the trainer's package that config.py imports is missing: the trainer cannot start (failed, with and without python3)"
trainer_copy "$TMP/tnomod"
rm "$TMP/tnomod/src/ltx_trainer/strategies.py"
for np in 1 0; do
  VRAMFIT_NO_PYTHON=$np run check --config "$TD/configs/t2v_lora.yaml" --trainer-dir "$TMP/tnomod"
  expect_rc 1
  expect_out "imports ltx_trainer.strategies, which is not in the checkout (no src/ltx_trainer/strategies.py): Python stops importing there (ModuleNotFoundError): the trainer cannot start"
done
# a package folder in its place (even without __init__.py: a namespace package) imports
mkdir "$TMP/tnomod/src/ltx_trainer/strategies"
cp "$TD/src/ltx_trainer/strategies.py" "$TMP/tnomod/src/ltx_trainer/strategies/__init__.py"
VRAMFIT_NO_PYTHON=1 run check --config "$TD/configs/t2v_lora.yaml" --trainer-dir "$TMP/tnomod"
expect_no_out "ModuleNotFoundError"

test_case "check (static): an int | None field with gt=0 names its bound; the YAML-float hint only for strings that look like numbers"
cp "$TD/configs/t2v_lora.yaml" "$TMP/msg.yaml"
run config set "$TMP/msg.yaml" validation.interval=0 hub.push_to_hub=maybe lora.rank=1e3
expect_rc 0
VRAMFIT_NO_PYTHON=1 run check --config "$TMP/msg.yaml" --trainer-dir "$TD"
expect_out "validation.interval: 0 is below the minimum: must be > 0"
expect_out "hub.push_to_hub: expected bool, found the string 'maybe' (pydantic cannot read it as one)"
expect_no_out "'maybe' (pydantic cannot read it as one; YAML reads"
expect_out "lora.rank: expected int, found the string '1e3' (pydantic cannot read it as one; YAML reads 1e3 without a dot as a string)"
finish
