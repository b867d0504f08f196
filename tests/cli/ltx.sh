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

test_case "2.3-style settings: the layout count equals the header (~19.0B, not 22B)"
python3 "$GEN" "$TMP/g23.safetensors" '{"apply_gated_attention": true, "cross_attention_adaln": true, "caption_proj_before_connector": true, "ff_bias": false, "audio_ff_bias": false}'
run inspect "$TMP/g23.safetensors" --json
expect_rc 0
expect_json 'j["params"] == j["architecture"]["params_from_layout"] == 18987363584'
expect_json 'j["architecture"]["gated_attention"] and j["architecture"]["cross_attention_adaln"] and not j["architecture"]["ff_bias"]'
run estimate "$TMP/g23.safetensors" --json
expect_rc 0
expect_json 'j["model"]["params"] == 18987363584 and j["model"]["kind"] == "dit"'
run estimate ltx-2.3-22b --json
expect_rc 0
expect_json 'j["model"]["params"] == 18987363584 and j["model"]["source"] == "catalog"'

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

finish
