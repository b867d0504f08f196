# vision.sh - end-to-end: vision and video models from one config.json
# (issue 11): exact counts checked against published totals (CLIP ViT-L/14
# 428M, ViT-B/32 151M, SigLIP so400m 878M, LLaVA-1.5-7B 7.06B, PixArt-alpha
# 611M, Flux.1-dev 11.9B, LTX-Video 1.9B), against headers of our own
# generator (tests/helpers/gen-vision-header.py), tokens per image/clip,
# trained parts per stage, DiT estimates, and unknown size keys named.
. "$(dirname "$0")/lib.sh"
VC="$VF_SOURCE_DIR/tests/fixtures/vision"
GEN="$VF_SOURCE_DIR/tests/helpers/gen-vision-header.py"

count() { # config, expected params, expected tokens per image/sample
  run inspect "$VC/$1.json" --json
  expect_rc 0
  expect_json 'j["params"] == '"$2"' and j["architecture"]["params_from_layout"] == '"$2"' and j["architecture"]["not_understood"] == []'
  expect_json '(j["architecture"].get("image_tokens") or j["architecture"].get("tokens_per_sample")) == '"$3"
  python3 "$GEN" "$TMP/$1" "$VC/$1.json"
  run inspect "$TMP/$1" --json
  expect_rc 0
  expect_json 'j["format"] == "hf-dir" and j["params"] == '"$2"' and j["architecture"]["params_from_layout"] == '"$2"
}

test_case "ViT encoders: CLIP and SigLIP"
count clip-l14 427616513 257        # 224/14 = 16, 256 patches + class token
count clip-b32 151277313 50         # 7 x 7 + class token
count siglip-so400m 877960498 729   # 384/14 = 27, no class token

test_case "LLaVA-1.5-7B: vision + projector + language model, parts per stage"
count llava15-7b 7063427072 576     # 336/14 = 24, class token dropped
run inspect "$VC/llava15-7b.json" --json
expect_json '[(p["name"], p["trained_in_stage"]) for p in j["architecture"]["parts"]] == [("vision_tower", [False, False]), ("projector", [True, True]), ("language_model", [False, True])]'
expect_json '"text_config.hidden_size" in j["architecture"]["assumed"]'
run inspect "$VC/llava15-7b.json"
expect_out "stage 1 frozen, stage 2 trained"

test_case "diffusion transformers: PixArt, Latte, Flux, LTX-Video"
count pixart 611349152 4096         # 1024 px / 16
count latte 1057246880 16384        # 16 frames x (512 / 16)^2
count flux 11901408320 4096         # 1024 px / 16 (2x2 packed latents)
count ltxv 1923385472 4096          # (512/32)^2 x (1 + 120/8)

test_case "DiT estimates from a config.json"
run estimate "$VC/pixart.json" --gpu h100-80gb --json
expect_rc 0
expect_json 'j["model"]["kind"] == "dit" and j["model"]["params"] == 611349152 and j["model"]["video_tokens"] == 4096'
run estimate "$VC/latte.json" --video 256x256x16 --json
expect_rc 0
expect_json 'j["model"]["video_tokens"] == 16 * 16 * 16 and j["model"]["audio_tokens"] == 0'
run estimate "$VC/ltxv.json" --video 768x512x121 --json
expect_rc 0
expect_json 'j["model"]["video_tokens"] == 24 * 16 * 16'
run estimate "$TMP/flux" --mode full --json
expect_rc 0
expect_json 'j["model"]["params"] == 11901408320 and j["model"]["trainable_params"] == 11901408320'

test_case "a diffusers pipeline folder: its transformer component is the DiT estimated"
mkdir -p "$TMP/pipe"
cp -r "$TMP/pixart" "$TMP/pipe/transformer"
echo '{"_class_name": "PixArtAlphaPipeline"}' >"$TMP/pipe/model_index.json"
run inspect "$TMP/pipe" --json
expect_rc 0
expect_json 'j["format"] == "diffusers" and j["components"][0]["architecture"]["family"] == "pixart"'
run estimate "$TMP/pipe" --json
expect_rc 0
expect_json 'j["model"]["kind"] == "dit" and j["model"]["params"] == 611349152'
expect_json 'any("transformer component" in a for a in j["assumptions"])'

test_case "CLIP / SigLIP training estimates: both towers, image tokens from the resolution"
run estimate "$VC/clip-l14.json" --mode full --precision bf16 --batch 32 --gpu a100-80gb --json
expect_rc 0
expect_json 'j["model"]["kind"] == "clip" and j["model"]["params"] == 427616513 and j["model"]["trainable_params"] == 427616513 and j["model"]["image_tokens"] == 257'
expect_json 'j["memory"]["weights_bytes"] == 2 * 427616513'
p32=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["peak_bytes"])')
run estimate "$VC/clip-l14.json" --mode full --precision bf16 --batch 64 --gpu a100-80gb --json
expect_json 'j["memory"]["peak_bytes"] > '"$p32"
run estimate "$VC/clip-l14.json" --video 336x336x1 --json
expect_json 'j["model"]["image_tokens"] == 577'
run estimate "$VC/siglip-so400m.json" --json
expect_rc 0
expect_json 'j["model"]["kind"] == "clip" and j["model"]["family"] == "siglip" and j["model"]["image_tokens"] == 729'

test_case "LLaVA stage 2: language model over text + image tokens, frozen tower, trained projector"
run estimate "$VC/llava15-7b.json" --mode full --precision bf16 --seq 1024 --gpu h100-80gb --json
expect_rc 0
expect_json 'j["model"]["kind"] == "vlm" and j["model"]["params"] == 7063427072 and j["model"]["trainable_params"] == 6738939904 + 20979712 and j["model"]["image_tokens"] == 576'
expect_json 'any("stage 2" in a for a in j["assumptions"])'
run estimate "$VC/llava15-7b.json" --mode lora --grad-ckpt
expect_rc 0
expect_out "text + 576 image tokens"

test_case "a size key not understood is named and the count marked approximate"
python3 - "$VC/pixart.json" "$TMP/odd.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["num_experts"] = 8; c["norm_type"] = "ada_norm_zero"
json.dump(c, open(sys.argv[2], "w"))
PY
run inspect "$TMP/odd.json" --json
expect_rc 0
expect_json 'sorted(j["architecture"]["not_understood"]) == ["norm_type", "num_experts"] and j["architecture"]["approximate"] is True'
run estimate "$TMP/odd.json"
expect_rc 0
expect_out "not understood: norm_type, num_experts"
python3 - "$VC/clip-b32.json" "$TMP/odd2.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["vision_config"]["num_register_tokens"] = 4
json.dump(c, open(sys.argv[2], "w"))
PY
run inspect "$TMP/odd2.json" --json
expect_rc 0
expect_json 'j["architecture"]["not_understood"] == ["vision_config.num_register_tokens"] and j["architecture"]["approximate"] is True'
run inspect "$TMP/odd2.json"
expect_out "not understood: vision_config.num_register_tokens"

test_case "bad values: one line naming the file and the field"
echo '{"model_type": "clip", "vision_config": {"hidden_size": -4}}' >"$TMP/bad.json"
run inspect "$TMP/bad.json"
expect_rc 1
expect_err "bad.json: field vision_config.hidden_size"
expect_err_lines 1

test_case "a vision encoder: a flag its estimator does not model is refused, never ignored"
# clip-l14 printed the page of no flag for --seq, --head classify:2, --audio,
# --text-encoder and --validation, and a Setup line naming zero2 or every:2
# over figures that were ddp's and whole checkpointing's
for flag in "--seq 512" "--head classify:2" "--audio" "--text-encoder int8" "--validation off" \
            "--shard zero2 --gpus 2" "--grad-ckpt=every:2" "--compile" "--optimizer paged-adamw" "--attention eager"; do
  # shellcheck disable=SC2086
  run estimate "$VC/clip-l14.json" --gpu h100-80gb $flag
  expect_rc 2
  expect_err_lines 2
done
run estimate "$VC/clip-l14.json" --gpu h100-80gb --seq 512
expect_err "--seq: a language model's option, not modelled for vision and speech encoders"
run estimate "$VC/clip-l14.json" --gpu h100-80gb --shard zero2 --gpus 2
expect_err "--shard: not modelled for vision and speech encoders"
# what it models still runs
run estimate "$VC/clip-l14.json" --gpu h100-80gb --optimizer adamw8bit --grad-ckpt --batch 4 --grad-accum 2 --shard fsdp --gpus 2 --json
expect_rc 0

finish
