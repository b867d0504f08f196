# diffusers.sh - end-to-end (issue 23): diffusion pipeline components from
# their configs, exact against the published totals and against the headers
# of our own generator (tests/helpers/gen-diffusers-header.py: every tensor
# the modelling code creates); a pipeline folder inspected as a whole and
# estimated as a training run of its denoiser with its encoders and VAE as
# loaded; configs not understood named, never refused.
. "$(dirname "$0")/lib.sh"
DC="$VF_SOURCE_DIR/tests/fixtures/diffusers"
GEN="$VF_SOURCE_DIR/tests/helpers/gen-diffusers-header.py"

count() { # config, published total (the generator's count must agree)
  test_case "$1"
  run inspect "$DC/$1.json" --json
  expect_rc 0
  expect_json 'j["params"] == '"$2"' and j["approximate"] is False and j["params_approximate"] is False'
  gen=$(python3 "$GEN" "$TMP/c/$1" "$DC/$1.json")
  check "[ '$gen' = '$2' ]"
  run inspect "$TMP/c/$1" --json
  expect_rc 0
  expect_json 'j["format"] == "hf-dir" and j["params"] == '"$2"' and j["dtypes"] == {"BF16": '"$2"'}'
}

# video transformers
count wan21-t2v-1.3b 1418996800
count wan21-t2v-14b 14288491584
count wan21-i2v-14b 16394878784
count wan22-ti2v-5b 4999787712
# CogVideoX 2B (sin-cos positions, not stored), 5B (rotary), 5B I2V (the learned
# joint position table the checkpoint holds), 1.5 (patches over frames too)
count cogvideox-2b 1693783872
count cogvideox-5b 5570283072
count cogvideox-5b-i2v 5625087552
count cogvideox15-5b 5570676352
# HunyuanVideo 13B: the token refiner, 20 double- and 40 single-stream blocks
count hunyuan-video 12821012544
# Mochi 1 (asymmetric video and text streams, caption attention pool)
count mochi 10027677744
# image MMDiTs: SD3 medium (2,028,328,000 parameters + the 192^2 x 1536 position
# table the checkpoint holds), SD3.5 large (qk RMSNorm), SD3.5 medium (dual attention)
count sd3-medium 2084951104
count sd35-large 8146280768
count sd35-medium 2469663936
# SANA 1600M (linear attention, GLU-MBConv FFN), and a SANA in the forms 1.5 and
# Sprint use (q/k RMSNorm across heads, a guidance embedder)
count sana-1600m 1604462752
count sana-forms 593501216
# AuraFlow v0.3 (learned positions, SwiGLU FFNs, no biases, register tokens)
count auraflow 6858605568
# UNets: integers or lists per block, SD 1.5 / SD 2 / SDXL and the rare forms
count sd15-unet 859520964
count sd2-unet 865910724
count sdxl-unet 2567463684
count unet-forms 7928676
# Zeroscope / ModelScope UNet3DConditionModel: temporal convs and transformers
count zeroscope-unet3d 1411233860
# VAEs
count sdxl-vae 83653863
count flux-vae 83819683
count wan21-vae 126892531
count wan22-vae 704688668
count hunyuan-video-vae 246478803
count cogvideox-vae 215583907
count mochi-vae 459748611
# encoders as what they are: encoder stacks only, projections, task heads
count t5-xxl-encoder 4762310656
count umt5-xxl-encoder 5680910336
count clip-l-text 123060480
count clip-bigg-text 694659840
count xlmr-mlm 278295186
count xlmr-seqcls 278045955
count xlmr-tokcls 277459977

test_case "UNet and VAE shapes in inspect"
run inspect "$DC/sdxl-unet.json" --json
expect_json 'j["kind"] == "unet" and [l["transformer_blocks"] for l in j["architecture"]["levels"]] == [0, 2 * 2 + 3 * 2, 2 * 10 + 3 * 10 + 10]'
expect_json 'j["architecture"]["tokens_per_sample"] == 128 * 128'
run inspect "$DC/wan21-vae.json" --json
expect_json 'j["kind"] == "vae" and j["architecture"]["latent_channels"] == 16 and [p["params"] for p in j["architecture"]["parts"]] == [53596928, 73295603]'
run inspect "$DC/wan21-t2v-14b.json"
expect_rc 0
expect_out "wan diffusion transformer: 40 blocks of 5120"

test_case "a diffusers class not understood: named, not counted, exit 0"
echo '{"_class_name": "LuminaNextDiT2DModel", "num_layers": 24}' >"$TMP/lumina.json"
run inspect "$TMP/lumina.json" --json
expect_rc 0
expect_json 'j["params"] is None and j["approximate"] is True and j["architecture"]["not_understood"] == ["_class_name LuminaNextDiT2DModel"]'
run inspect "$TMP/lumina.json"
expect_rc 0
expect_out "LuminaNextDiT2DModel: a diffusers class not understood"
run estimate "$TMP/lumina.json"
expect_rc 1
expect_err "LuminaNextDiT2DModel is not understood"
expect_err_lines 1

test_case "a key not understood marks the count approximate"
python3 - "$DC/sdxl-unet.json" "$TMP/odd.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["addition_embed_type"] = "image"; c["num_experts"] = 4
json.dump(c, open(sys.argv[2], "w"))
PY
run inspect "$TMP/odd.json" --json
expect_rc 0
expect_json 'sorted(j["architecture"]["not_understood"]) == ["addition_embed_type", "num_experts"] and j["approximate"] is True'

test_case "bad values: one line naming the file and the field"
echo '{"_class_name": "UNet2DConditionModel", "attention_head_dim": [8, 8]}' >"$TMP/bad.json"
run inspect "$TMP/bad.json"
expect_rc 1
expect_err "bad.json: field attention_head_dim: expected a whole number or a list of 4"
expect_err_lines 1

# ---- pipeline folders ------------------------------------------------------
# Wan 2.1 T2V 14B: the transformer with weights (bf16), the encoder and the
# VAE from their configs alone
mkdir -p "$TMP/wan" "$TMP/wan/scheduler" "$TMP/wan/tokenizer"
echo '{"_class_name": "WanPipeline", "transformer": ["diffusers", "WanTransformer3DModel"]}' >"$TMP/wan/model_index.json"
echo '{}' >"$TMP/wan/scheduler/scheduler_config.json"
cp -r "$TMP/c/wan21-t2v-14b" "$TMP/wan/transformer"
mkdir -p "$TMP/wan/text_encoder" "$TMP/wan/vae"
cp "$DC/umt5-xxl-encoder.json" "$TMP/wan/text_encoder/config.json"
cp "$DC/wan21-vae.json" "$TMP/wan/vae/config.json"

test_case "inspect a pipeline: every component with its count and dtype"
run inspect "$TMP/wan" --json
expect_rc 0
expect_json 'j["format"] == "diffusers" and [(c["name"], c["params"]) for c in j["components"]] == [("text_encoder", 5680910336), ("transformer", 14288491584), ("vae", 126892531)]'
expect_json 'j["params"] == 5680910336 + 14288491584 + 126892531 and j["components"][1]["dtypes"] == {"BF16": 14288491584}'
run inspect "$TMP/wan"
expect_out "component      transformer"
expect_out "autoencoder-kl-wan"

test_case "estimate Wan 2.1 14B LoRA at 832x480x81: encoders and VAE as loaded"
run estimate "$TMP/wan" --mode lora --resolution 832x480 --frames 81 --gpu h200 --json
expect_rc 0
# 832/16 x 480/16 x (1 + 80/4) latent tokens
expect_json 'j["model"]["video_tokens"] == 52 * 30 * 21 and j["model"]["family"] == "wan" and j["model"]["params"] == 14288491584'
# LoRA r16 on q, k, v, out of both attentions of 40 blocks of 5120
expect_json 'j["model"]["trainable_params"] == 40 * 2 * 4 * 16 * (5120 + 5120)'
expect_json '[(c["name"], c["role"], c["resident"]) for c in j["model"]["components"]] == [("text_encoder", "encoder (frozen)", True), ("transformer", "trained", True), ("vae", "vae (frozen)", True)]'
expect_json 'sorted(p["phase"] for p in j["model"]["phases"]) == ["backward", "forward", "loading", "optimizer", "text-encoder", "validation"]'
# bf16 weights of the transformer, the encoder and the VAE, plus the fp32 adapters
expect_json 'j["memory"]["weights_bytes"] == 2 * (14288491584 + 5680910336 + 126892531) + 4 * 40 * 2 * 4 * 16 * 10240'
expect_json 'any("frozen, kept on the GPU" in a for a in j["assumptions"]) and any("encodes each sample" in a for a in j["assumptions"])'
peak=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["peak_bytes"])')
run estimate "$TMP/wan" --mode lora --resolution 832x480 --frames 81 --gpu h200
expect_rc 0
expect_out "Memory by phase"
expect_out "text_encoder   5.68 B  encoder (frozen)  yes"
expect_out "pipeline: trains the transformer component (wan, 14.29B)"

test_case "precomputed embeddings and latents: the encoders and VAE leave the step"
run estimate "$TMP/wan" --mode lora --resolution 832x480 --frames 81 --gpu h200 --precomputed-embeddings --precomputed-latents --json
expect_rc 0
expect_json 'j["memory"]["peak_bytes"] < '"$peak"' and [c["resident"] for c in j["model"]["components"]] == [False, True, False]'
expect_json 'j["memory"]["weights_bytes"] == 2 * 14288491584 + 4 * 40 * 2 * 4 * 16 * 10240'

test_case "--train names a component; a wrong name lists them"
run estimate "$TMP/wan" --train unet
expect_rc 2
expect_err "no component 'unet' to train (components: text_encoder, transformer, vae)"
run estimate "$DC/wan21-vae.json" --train transformer
expect_rc 2
run estimate "$DC/wan21-vae.json"
expect_rc 1
expect_err "a VAE (autoencoder-kl-wan"

test_case "Wan 2.2: two experts, one trained; the TI2V VAE's 16x compression"
mkdir -p "$TMP/wan22/transformer" "$TMP/wan22/transformer_2" "$TMP/wan22/vae"
echo '{"_class_name": "WanPipeline", "boundary_ratio": 0.875}' >"$TMP/wan22/model_index.json"
cp "$DC/wan21-t2v-14b.json" "$TMP/wan22/transformer/config.json"
cp "$DC/wan21-t2v-14b.json" "$TMP/wan22/transformer_2/config.json"
cp "$DC/wan21-vae.json" "$TMP/wan22/vae/config.json"
run estimate "$TMP/wan22" --train transformer_2 --resolution 1280x720 --frames 81 --json
expect_rc 0
expect_json '[(c["name"], c["role"]) for c in j["model"]["components"]] == [("transformer", "not loaded"), ("transformer_2", "trained"), ("vae", "vae (frozen)")]'
expect_json 'j["model"]["video_tokens"] == 80 * 45 * 21'
mkdir -p "$TMP/ti2v/transformer" "$TMP/ti2v/vae"
echo '{"_class_name": "WanPipeline"}' >"$TMP/ti2v/model_index.json"
cp "$DC/wan22-ti2v-5b.json" "$TMP/ti2v/transformer/config.json"
cp "$DC/wan22-vae.json" "$TMP/ti2v/vae/config.json"
run estimate "$TMP/ti2v" --resolution 1280x704 --frames 121 --json
expect_rc 0
# 16x VAE, 2x2 patch: a token per 32 px; 4x temporal
expect_json 'j["model"]["video_tokens"] == 40 * 22 * 31'

# SDXL: the UNet with two CLIP text towers and the VAE, header-only weights
mkdir -p "$TMP/sdxl"
echo '{"_class_name": "StableDiffusionXLPipeline"}' >"$TMP/sdxl/model_index.json"
cp -r "$TMP/c/sdxl-unet" "$TMP/sdxl/unet"
cp -r "$TMP/c/clip-l-text" "$TMP/sdxl/text_encoder"
cp -r "$TMP/c/clip-bigg-text" "$TMP/sdxl/text_encoder_2"
python3 "$GEN" "$TMP/sdxl/vae" "$DC/sdxl-vae.json" F32 >/dev/null

test_case "inspect SDXL: every component with its dtype"
run inspect "$TMP/sdxl" --json
expect_rc 0
expect_json '[(c["name"], c["params"], list(c["dtypes"])) for c in j["components"]] == [("text_encoder", 123060480, ["BF16"]), ("text_encoder_2", 694659840, ["BF16"]), ("unet", 2567463684, ["BF16"]), ("vae", 83653863, ["F32"])]'

test_case "estimate SDXL LoRA at 1024x1024: the UNet by level, encoders and VAE as loaded"
run estimate "$TMP/sdxl" --mode lora --resolution 1024x1024 --gpu h200 --json
expect_rc 0
expect_json 'j["model"]["kind"] == "unet" and j["model"]["video_tokens"] == 128 * 128 and j["model"]["params"] == 2567463684'
# LoRA r16 on to_q/k/v/out of both attentions of 10 blocks at 640 and 60 at 1280 (text 2048 wide)
expect_json 'j["model"]["trainable_params"] == 16 * (10 * (8 * 640 + 2 * (640 + 640) + 2 * (2048 + 640)) + 60 * (8 * 1280 + 2 * (1280 + 1280) + 2 * (2048 + 1280)))'
expect_json 'j["memory"]["weights_bytes"] == 2 * (2567463684 + 123060480 + 694659840 + 83653863) + 4 * j["model"]["trainable_params"]'
expect_json 'any("UNet activations per level" in a for a in j["assumptions"])'
a1=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["activations_bytes"])')
run estimate "$TMP/sdxl" --mode lora --resolution 512x512 --gpu h200 --json
expect_json 'j["model"]["video_tokens"] == 64 * 64 and j["memory"]["activations_bytes"] < '"$a1"
run estimate "$TMP/sdxl" --mode full --resolution 1024x1024 --gpu h200 --precomputed-embeddings
expect_rc 0
expect_out "unet             2.57 B  trained"
expect_out "--precomputed-latents to drop it"

test_case "decoder LLMs as text encoders: a bare backbone counts no head (HunyuanVideo)"
mkdir -p "$TMP/hv/transformer" "$TMP/hv/text_encoder" "$TMP/hv/text_encoder_2"
echo '{"_class_name": "HunyuanVideoPipeline"}' >"$TMP/hv/model_index.json"
cp "$DC/hunyuan-video.json" "$TMP/hv/transformer/config.json"
cp "$DC/clip-l-text.json" "$TMP/hv/text_encoder_2/config.json"
# LLaVA-Llama-3-8B's text model as diffusers loads it (LlamaModel: no lm_head)
echo '{"architectures": ["LlamaModel"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
  "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128320,
  "tie_word_embeddings": false}' >"$TMP/hv/text_encoder/config.json"
run inspect "$TMP/hv" --json
expect_rc 0
llama=$((128320 * 4096 + 32 * (4096 * 4096 * 2 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096) + 4096))
expect_json '[c["params"] for c in j["components"]] == ['"$llama"', 123060480, 12821012544] and j["approximate"] is False'
run estimate "$TMP/hv" --resolution 1280x720 --frames 129 --json
expect_rc 0
expect_json 'j["model"]["video_tokens"] == 80 * 45 * 33 and j["memory"]["weights_bytes"] == 2 * ('"$llama"' + 123060480 + 12821012544) + 4 * j["model"]["trainable_params"]'
expect_json 'any("2 encoder(s), 7.63B" in a for a in j["assumptions"])'

test_case "a pipeline whose denoiser is not understood: named"
mkdir -p "$TMP/lumina/transformer"
echo '{"_class_name": "LuminaText2ImgPipeline"}' >"$TMP/lumina/model_index.json"
cp "$TMP/lumina.json" "$TMP/lumina/transformer/config.json"
run inspect "$TMP/lumina" --json
expect_rc 0
expect_json 'j["approximate"] is True and j["components"][0]["params"] is None'
run estimate "$TMP/lumina"
expect_rc 1
expect_err "the transformer component (LuminaNextDiT2DModel) is not understood"

test_case "an SD3 pipeline config: the MMDiT estimated with its public pipeline's encoders"
run estimate "$DC/sd3-medium.json" --resolution 1024x1024 --json
expect_rc 0
expect_json 'j["model"]["video_tokens"] == 64 * 64 and j["model"]["params"] == 2084951104'
expect_json 'any("T5-XXL" in a for a in j["assumptions"])'

test_case "CogVideoX 1.5: a token per 16 px, 8 frames per latent token after the first"
run estimate "$DC/cogvideox15-5b.json" --resolution 1360x768 --frames 81 --json
expect_rc 0
expect_json 'j["model"]["video_tokens"] == 85 * 48 * 11'

test_case "a lone config of a family without pipeline figures: said"
run estimate "$DC/auraflow.json" --resolution 1024x1024
expect_rc 0
expect_out "the text encoder and VAE of the auraflow pipeline are not counted"

test_case "a UNet3D: every frame a latent frame; batches do not lengthen attention"
run estimate "$DC/zeroscope-unet3d.json" --resolution 576x320 --frames 24 --json
expect_rc 0
expect_json 'j["model"]["kind"] == "unet" and j["model"]["video_tokens"] == 72 * 40 * 24'
f1=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["time"]["flops_per_step"])')
run estimate "$DC/zeroscope-unet3d.json" --resolution 576x320 --frames 24 --batch 2 --json
expect_json 'abs(j["time"]["flops_per_step"] - 2 * '"$f1"') < 1e-6 * '"$f1"

test_case "--resolution / --frames: usage errors"
run estimate "$TMP/sdxl" --resolution 1024
expect_rc 2
expect_err "--resolution 1024: expected WxH"
run estimate "$TMP/sdxl" --resolution 1024x1024 --video 512x512x1
expect_rc 2

finish
