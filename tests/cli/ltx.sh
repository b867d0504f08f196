# ltx.sh - end-to-end: an LTX-2 transformer file is inspected and estimated
# as the LTX DiT from its own header (issue 11): the fixture header
# (../shared/fixtures/ltx2, 18,876,174,592 parameters), headers written by
# our own generator from the public model code's module list
# (tests/helpers/gen-ltx2-header.py) for other configs, and the catalog.
. "$(dirname "$0")/lib.sh"
GEN="$VF_SOURCE_DIR/tests/helpers/gen-ltx2-header.py"
FXH="$VF_SHARED_DIR/fixtures/ltx2/ltx-2-19b-transformer.header.json"

test_case "the fixture header as a file: inspect and estimate agree, a DiT estimate"
python3 - "$FXH" "$TMP/model.safetensors" <<'PY'
import json, struct, sys
h = open(sys.argv[1], "rb").read()
end = max(v["data_offsets"][1] for k, v in json.loads(h).items() if k != "__metadata__")
h += b" " * ((8 - len(h) % 8) % 8)
with open(sys.argv[2], "wb") as f:
    f.write(struct.pack("<Q", len(h))); f.write(h); f.truncate(8 + len(h) + end)
PY
run inspect "$TMP/model.safetensors" --json
expect_rc 0
expect_json 'j["params"] == 18876174592 and j["kind"] == "dit"'
expect_json 'j["architecture"]["params_from_layout"] == 18876174592 and j["architecture"]["layers"] == 48 and j["architecture"]["source"] == "metadata"'
run estimate "$TMP/model.safetensors" --video 960x544x89 --lora-rank 32 --gpu h100-80gb --json
expect_rc 0
expect_json 'j["model"]["params"] == 18876174592 and j["model"]["kind"] == "dit" and j["model"]["source"] == "file"'
expect_json 'j["model"]["video_tokens"] == 30 * 17 * 12 and j["model"]["audio_tokens"] > 0'
expect_json 'not any("vocabulary" in a for a in j["assumptions"])'
run estimate "$TMP/model.safetensors" --video 960x544x89
expect_rc 0
expect_out "18.88 B parameters"
expect_out "6120 video"
expect_no_out "vocabulary"

test_case "our generator reproduces the fixture's tensor list"
python3 "$GEN" "$TMP/gen.safetensors" '{}' --list >"$TMP/gen.list"
python3 - "$FXH" "$TMP/gen.list" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
a = sorted("%s %s" % (k, v["shape"]) for k, v in h.items() if k != "__metadata__")
b = sorted(l.strip() for l in open(sys.argv[2]))
sys.exit(0 if a == b else 1)
PY
check '[ $? -eq 0 ]'

test_case "2.3-style settings without FFN bias: the layout count equals the header"
python3 "$GEN" "$TMP/g23.safetensors" '{"apply_gated_attention": true, "cross_attention_adaln": true, "caption_proj_before_connector": true, "ff_bias": false, "audio_ff_bias": false}'
run inspect "$TMP/g23.safetensors" --json
expect_rc 0
expect_json 'j["params"] == j["architecture"]["params_from_layout"] == 18987363584'
expect_json 'j["architecture"]["gated_attention"] and j["architecture"]["cross_attention_adaln"] and not j["architecture"]["ff_bias"]'
run estimate "$TMP/g23.safetensors" --json
expect_rc 0
expect_json 'j["model"]["params"] == 18987363584 and j["model"]["kind"] == "dit"'

test_case "issue 30: a published-style 2.3 checkpoint: inspect splits transformer, connectors, text projection, VAEs, vocoder"
# the 2.3 transformer config keys (gated attention, cross-attention AdaLN, caption projection before
# the connector, 8-block gated connectors of 32 x 128 and 32 x 64), written by our generator
C23='{"apply_gated_attention": true, "cross_attention_adaln": true, "caption_proj_before_connector": true, "connector_num_layers": 8, "connector_num_attention_heads": 32, "connector_attention_head_dim": 128, "connector_apply_gated_attention": true, "audio_connector_num_attention_heads": 32, "audio_connector_attention_head_dim": 64, "caption_projection_first_linear": false, "caption_projection_second_linear": false, "caption_proj_input_norm": false, "use_embeddings_connector": true, "connector_norm_output": true, "text_encoder_norm_type": "PER_TOKEN_RMS"}'
python3 "$GEN" "$TMP/u23.safetensors" "$C23" --unified
# by hand: one connector = layers x (attention + FFN 4x) + 128 registers of its width d; an
# attention = q/k norms 2d + q,k,v,out (d^2 + d) + a gate (d x heads + heads); the transformer =
# the 2.3-style count without FFN bias + the FFN biases of 48 blocks
read -r VC AC TRX <<HAND
$(python3 -c '
def attn(d, h): return 2 * d + 4 * (d * d + d) + d * h + h
def ff(d): return d * 4 * d + 4 * d + 4 * d * d + d
def conn(d, h, l): return l * (attn(d, h) + ff(d)) + 128 * d
print(conn(4096, 32, 8), conn(2048, 32, 8), 18987363584 + 48 * (4 * 4096 + 4096 + 4 * 2048 + 2048))')
HAND
check "[ $VC -eq 1612546304 ] && [ $AC -eq 403620096 ] && [ $TRX -eq 18988838144 ]"
run inspect "$TMP/u23.safetensors" --json
expect_rc 0
expect_json 'j["components"]["transformer"] == '"$TRX"' == j["architecture"]["params_from_layout"]'
expect_json 'j["components"]["video_connector"] == '"$VC"' and j["components"]["audio_connector"] == '"$AC"
expect_json 'j["architecture"]["connectors"]["params_from_layout"] == '"$VC + $AC"' and j["architecture"]["connectors"]["layers"] == 8'
expect_json 'j["components"]["text_projection"] == 3840 * 7680 and j["components"]["vae_decoder"] == 1024 * 128 * 27 + 128'
expect_json 'j["components"]["vae_encoder"] == 128 * 48 * 27 and j["components"]["audio_vae"] == 512 * 8 * 9 and j["components"]["vocoder"] == 1536 * 64 * 7 and j["components"]["other"] == 0'
expect_json 'j["params"] == sum(j["components"].values()) and j["architecture"]["not_understood"] == []'
run inspect "$TMP/u23.safetensors"
expect_rc 0
expect_out "transformer 18,988,838,144, video connector 1,612,546,304, audio connector 403,620,096"
expect_out "(equals the tensors)"
run estimate "$TMP/u23.safetensors" --gpu rtx-5090 --json
expect_rc 0
# the transformer alone trains; the connectors (from the header) stay on the GPU in bf16
expect_json 'j["model"]["params"] == '"$TRX"' and j["memory"]["connector_bytes"] == 2 * '"($VC + $AC)"
expect_json 'j["memory"]["peak_nvidia_smi_bytes"] == j["memory"]["peak_bytes"] == j["memory"]["peak_pytorch_bytes"] + j["memory"]["context_bytes"]'
expect_json 'any("from the header" in a for a in j["assumptions"])'
run estimate ltx-2.3-22b --json
expect_rc 0
expect_json 'j["model"]["params"] == '"$TRX"' and j["model"]["source"] == "catalog" and j["memory"]["connector_bytes"] == 2 * '"($VC + $AC)"

test_case "issue 30: validation as its own phase at its own size; --validation off"
run estimate ltx-2-19b --gpu rtx-5090 --video 960x544x49 --validation 576x576x49:30:4 --text-encoder bf16 --json
expect_rc 0
expect_json 'j["setup"]["video"] == "960x544x49" and j["setup"]["validation"] == "576x576x49" and j["setup"]["validation_passes"] == 4'
expect_json '[p["phase"] for p in j["memory"]["phases"]] == ["forward", "backward", "optimizer", "validation", "text-encoder", "loading"]'
expect_json 'j["model"]["video_tokens"] == 30 * 17 * 7'
v1=$(printf '%s' "$out" | python3 -c 'import json,sys; print([p["bytes"] for p in json.load(sys.stdin)["memory"]["phases"] if p["phase"] == "validation"][0])')
run estimate ltx-2-19b --gpu rtx-5090 --video 960x544x49 --validation 1280x704x121 --json
expect_rc 0
expect_json '[p["bytes"] for p in j["memory"]["phases"] if p["phase"] == "validation"][0] > '"$v1"
run estimate ltx-2-19b --gpu rtx-5090 --video 960x544x49 --validation off --json
expect_rc 0
expect_json '"validation" not in [p["phase"] for p in j["memory"]["phases"]] and j["setup"]["validation"] == "off"'
run estimate ltx-2-19b --validation 575x576x4x
expect_rc 2
expect_err "--validation: expected off or WIDTHxHEIGHTxFRAMES"
run estimate llama2-7b --validation off
expect_rc 2
expect_err "apply to video DiTs"

test_case "small configs, with and without metadata, video only"
for cfg in '{"num_layers": 2}' '{"num_layers": 3, "num_attention_heads": 8, "attention_head_dim": 64, "audio_num_attention_heads": 8, "audio_attention_head_dim": 32, "cross_attention_dim": 512, "audio_cross_attention_dim": 256, "caption_channels": 384}' '{"num_layers": 2, "apply_gated_attention": true, "use_keyframes_abs_pos_embedding": true}'; do
  for fl in "" "--no-metadata" "--video-only"; do
    python3 "$GEN" "$TMP/s.safetensors" "$cfg" $fl --prefix=
    run inspect "$TMP/s.safetensors" --json
    expect_rc 0
    expect_json 'j["kind"] == "dit" and j["params"] == j["architecture"]["params_from_layout"]'
    p=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["params"])')
    run estimate "$TMP/s.safetensors" --json
    expect_rc 0
    expect_json 'j["model"]["kind"] == "dit" and j["model"]["params"] == '"$p"
  done
done

test_case "a config key the count does not know is named, not ignored"
python3 "$GEN" "$TMP/u.safetensors" '{"num_layers": 2, "share_ff": true, "moe_experts": 8}' --prefix=
run inspect "$TMP/u.safetensors" --json
expect_rc 0
expect_json '"share_ff" in j["architecture"]["not_understood"] and "moe_experts" in j["architecture"]["not_understood"]'
run estimate "$TMP/u.safetensors"
expect_rc 0
expect_out "not understood: share_ff, moe_experts"
expect_out "trainable (approximate: see Assumptions)"
# one verdict: the JSON says approximate where the text does (it said false)
run estimate "$TMP/u.safetensors" --json
expect_json 'j["model"]["approximate"] is True and "share_ff" in j["model"]["not_understood"]'

test_case "metadata that differs from the tensors: approximate in the text and the JSON alike"
python3 "$GEN" "$TMP/mm.safetensors" '{"num_layers": 2}' --prefix=
python3 - "$TMP/mm.safetensors" <<'PY'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
h["__metadata__"]["config"] = json.dumps({"transformer": {"num_layers": 3, "_class_name": "AVTransformer3DModel"}})
t = json.dumps(h).encode()
t += b" " * (-len(t) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(t)) + t + b[8 + n:])
PY
run inspect "$TMP/mm.safetensors"
expect_rc 0
expect_out "differs from the tensors: approximate layout"
run inspect "$TMP/mm.safetensors" --json
expect_json 'j["approximate"] is True and j["params_approximate"] is False and j["architecture"]["params_from_layout"] != j["params"]'
run estimate "$TMP/mm.safetensors"
expect_out "activations and LoRA are approximate"
expect_out "trainable (approximate: see Assumptions)"
run estimate "$TMP/mm.safetensors" --json
expect_json 'j["model"]["approximate"] is True and any("parameter count" in x for x in j["model"]["not_understood"])'
python3 "$GEN" "$TMP/ok.safetensors" '{"num_layers": 2}' --prefix=
run estimate "$TMP/ok.safetensors" --json
expect_json 'j["model"]["approximate"] is False and j["model"]["not_understood"] == []'

test_case "plan: an LTX checkpoint under any name is estimated from its own header"
TD="$VF_SOURCE_DIR/tests/fixtures/ltx-trainer"
unset LTX_TRAININGS_DIR LTX_TRAINER_DIR LTX_MODELS_DIR
export HOME="$TMP/home"
mkdir -p "$HOME" "$TMP/te/gemma-3-12b-it" "$TMP/work" "$TMP/ck"
echo '{"model_type": "gemma3"}' >"$TMP/te/gemma-3-12b-it/config.json"
python3 "$GEN" "$TMP/ck/my-finetune.safetensors" '{"apply_gated_attention": true, "cross_attention_adaln": true, "caption_proj_before_connector": true, "ff_bias": false, "audio_ff_bias": false}'
# a transformer-only file ships as a split pack: its VAEs beside it
python3 "$VF_SOURCE_DIR/tests/helpers/mk-safetensors.py" "$TMP/ck/video-vae.safetensors" vae.decoder. vae.encoder.
python3 "$VF_SOURCE_DIR/tests/helpers/mk-safetensors.py" "$TMP/ck/audio-vae.safetensors" audio_vae.decoder. vocoder.x.
cd "$TMP/work"
run plan --trainer-dir "$TD" --model "$TMP/ck/my-finetune.safetensors" --text-encoder "$TMP/te/gemma-3-12b-it" --gpu h100-80gb --json
expect_rc 0
expect_out "checkpoint's own config and header"
cd - >/dev/null

test_case "--mode infer of a video DiT: a no_grad forward, not the training step's saved activations; named approximate"
run estimate ltx-2-19b --mode infer --gpu h100-80gb --json; expect_rc 0
# 48 blocks' saved tensors (about 99 GiB) are a training figure: under
# no_grad one block's tensors are live at a time
expect_json 'j["memory"]["activations_bytes"] < 8 * 2**30 and j["gpus"][0]["fits"]'
expect_json 'any("denoising forward" in x and "approximate" in x for x in j["assumptions"])'
expect_json 'not any("use_cache" in x for x in j["assumptions"])'
run estimate llama2-7b --mode infer --gpu h100-80gb
expect_out "use_cache=True"

test_case "a DiT: a language model's option or a mechanism its estimator does not model is refused, never ignored"
# ltx-2-19b printed the page of no flag for --seq, --attention eager,
# --head, --target-seq, --modules-to-save and --offload optimizer; the
# tier said "with your --grad-clip" (or --zero-grad, --grad-ckpt=every:2)
# over unchanged figures; --compile, --loss and --lora-dropout left the
# tier for figures without them
for flag in "--seq 512" "--attention eager" "--head classify:2" "--target-seq 100" "--modules-to-save lm_head" \
            "--offload optimizer" "--grad-clip for" "--zero-grad zeros" "--grad-ckpt=every:2" "--compile" \
            "--loss chunked" "--lora-dropout" "--float8" "--optimizer paged-adamw8bit"; do
  # shellcheck disable=SC2086
  run estimate ltx-2-19b --gpu h100-80gb $flag
  expect_rc 2
  # shellcheck disable=SC2086
  run fit ltx-2-19b --gpu h100-80gb $flag
  expect_rc 2
done
run estimate ltx-2-19b --gpu h100-80gb --grad-clip for
expect_err "--grad-clip: not modelled for DiTs: their estimate would be the same without it"
run estimate ltx-2-19b --gpu h100-80gb --seq 512
expect_err "--seq: a language model's option, not modelled for DiTs"
# an image DiT has no audio stream to generate
run estimate "$VF_SOURCE_DIR/tests/fixtures/vision/pixart.json" --gpu h100-80gb --audio
expect_rc 2
expect_err "has no audio stream"
run estimate ltx-2-19b --gpu h100-80gb --optimizer adamw8bit --grad-clip none --zero-grad none --json
expect_rc 0

finish
