# ssm-towers.sh - end-to-end: `vramfit inspect` and `estimate` on configs
# generated here for the families of lib/model/ssm.c, speech.c and vlm.c
# (state-space and hybrid models, Whisper, DINOv2, VLMs with towers):
# exact counts in text and --json, the recurrent state and the MoE active
# parameters, a valid config of an architecture not understood said with
# exit 0, and the SSM terms of the estimate (recurrent state in place of
# the KV cache).
. "$(dirname "$0")/lib.sh"

cat > "$TMP/mamba.json" <<'J'
{"model_type":"mamba","hidden_size":768,"num_hidden_layers":24,"vocab_size":50280,"state_size":16,"expand":2,"conv_kernel":4,"time_step_rank":"auto"}
J
test_case "mamba: exact, the ssm row and object"
run inspect "$TMP/mamba.json"
expect_rc 0
# 24 x (norm + in_proj + conv + x_proj + dt_proj + A_log + D + out_proj) + tied embedding + final norm
expect_out "$(python3 -c 'h,i,n,k,r=768,1536,16,4,48; print(f"{50280*h + 24*(h + h*2*i + i*k+i + i*(r+2*n) + r*i+i + i*n + i + i*h) + h:,}")')"
expect_out "Mamba: 24 of 24 layers (0 attention), inner 1536, state 16, conv 4"
expect_no_out "approximate"
run inspect "$TMP/mamba.json" --json
expect_json 'j["approximate"] is False and j["architecture"]["ssm"]["kind"] == "mamba" and j["architecture"]["ssm"]["state_elements_per_sequence"] == 24 * (1536 * 4 + 1536 * 16)'

test_case "mamba: inference holds the recurrent state, not a KV cache"
run estimate "$TMP/mamba.json" --mode infer --seq 4096 --batch 8 --gpu h100-80gb --json
expect_rc 0
expect_json 'j["memory"]["kv_cache_bytes"] == 8 * 24 * (1536 * 4 + 1536 * 16) * 2'
run estimate "$TMP/mamba.json" --mode infer --seq 4096 --batch 8 --gpu h100-80gb
expect_out "recurrent state (conv window + scan state per SSM layer"

test_case "mamba split by layers: each GPU its layers' weights and state, summing to the whole (GPU 0 held the whole layout plus the embedding)"
run estimate "$TMP/mamba.json" --mode infer --precision bf16 --gpu h100-80gb --json
expect_rc 0
whole_w=$(printf '%s' "$out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["memory"]["weights_bytes"])')
whole_kv=$(printf '%s' "$out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["memory"]["kv_cache_bytes"])')
run estimate "$TMP/mamba.json" --mode infer --precision bf16 --split layers --gpu rtx-3090:2 --json
expect_rc 0
# accelerate keeps the tied head with the embedding (one tensor): the GPUs' weights are the model's
expect_json 'sum(g["memory"]["weights_bytes"] for g in j["gpus"][0]["split"]["gpus"]) == '"$whole_w"
expect_json 'all(g["memory"]["weights_bytes"] < 0.7 * '"$whole_w"' for g in j["gpus"][0]["split"]["gpus"])'
expect_json 'sum(g["memory"]["kv_cache_bytes"] for g in j["gpus"][0]["split"]["gpus"]) == '"$whole_kv"
run estimate "$TMP/mamba.json" --mode infer --precision bf16 --pp 2 --gpu rtx-3090:2 --json
expect_rc 0
# a pipeline's last stage keeps a copy of the tied table (50280 x 768 bf16) as its head, said
expect_json 'sum(g["memory"]["weights_bytes"] for g in j["gpus"][0]["split"]["gpus"]) == '"$whole_w"' + 50280 * 768 * 2'
expect_json 'sum(g["memory"]["kv_cache_bytes"] for g in j["gpus"][0]["split"]["gpus"]) == '"$whole_kv"
expect_json 'any(x.startswith("tied embeddings held twice") and "50280 x 768" in x for x in j["assumptions"])'

test_case "--tp on a state-space model: refused naming the Mamba mixers, not attention heads"
run estimate "$TMP/mamba.json" --mode infer --tp 2 --gpu h100-80gb:2
expect_rc 2
expect_err 'mamba has state-space (Mamba) mixers on 24 of its 24 layers'
expect_err 'split it by layers (--pp, --split layers)'
if printf '%s' "$err" | grep -q 'attention heads do not split'; then _bad "stderr speaks of attention heads"; else _ok; fi

cat > "$TMP/jamba.json" <<'J'
{"model_type":"jamba","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":65536,"num_experts":16,"num_experts_per_tok":2,"attn_layer_period":8,"attn_layer_offset":4,"expert_layer_period":2,"expert_layer_offset":1,"mamba_d_state":16,"mamba_d_conv":4,"mamba_expand":2,"mamba_dt_rank":256}
J
test_case "jamba: total and active parameters"
run inspect "$TMP/jamba.json" --json
expect_rc 0
expect_json 'j["params"] == 51570323328 and j["architecture"]["active_params"] == 12110311296 and j["architecture"]["ssm"]["attention_layers"] == 4'
run inspect "$TMP/jamba.json"
expect_out "active params  12,110,311,296 (12.11 B) per token: 2 of 16 experts routed"
run estimate "$TMP/jamba.json" --gpu h100-80gb --mode infer
expect_rc 0
expect_out "51.57 B parameters, 12.11 B active per token"
run estimate "$TMP/jamba.json" --gpu h100-80gb --mode infer --json
expect_json 'j["model"]["active_params"] == 12110311296'

test_case "jamba (a hybrid) split in a pipeline: the stages' weights sum to the model's; --tp refused (each rank held all 96 GiB)"
run estimate "$TMP/jamba.json" --mode infer --gpu h100-80gb --json
jamba_w=$(printf '%s' "$out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["memory"]["weights_bytes"])')
run estimate "$TMP/jamba.json" --mode infer --pp 2 --gpu h100-80gb:2 --json
expect_rc 0
expect_json 'sum(g["memory"]["weights_bytes"] for g in j["gpus"][0]["split"]["gpus"]) == '"$jamba_w"
run estimate "$TMP/jamba.json" --mode infer --tp 2 --gpu h100-80gb:2
expect_rc 2
expect_err 'jamba has state-space (Mamba) mixers on 28 of its 32 layers'

test_case "an architecture not understood: said, exit 0, no count"
printf '{"model_type":"speecht5","d_model":64,"encoder_layers":2}\n' > "$TMP/odd.json"
run inspect "$TMP/odd.json"
expect_rc 0
expect_out "not understood: architecture speecht5 (no layer count); no count"
run inspect "$TMP/odd.json" --json
expect_rc 0
expect_json 'j["params"] is None and j["approximate"] is True and j["architecture"]["not_understood"] == ["architecture speecht5 (no layer count)"]'
run estimate "$TMP/odd.json" --gpu h100-80gb
expect_rc 1
expect_err "not understood: architecture speecht5"

test_case "a timm config: its architecture named, exit 0"
printf '{"architecture":"eva02_base_patch14_224","num_classes":0,"num_features":768}\n' > "$TMP/timm.json"
run inspect "$TMP/timm.json"
expect_rc 0
expect_out "not understood: architecture timm eva02_base_patch14_224 (no hidden size); no count"

test_case "whisper: encoder and decoder"
cat > "$TMP/whisper.json" <<'J'
{"model_type":"whisper","d_model":384,"encoder_layers":4,"decoder_layers":4,"encoder_attention_heads":6,"decoder_attention_heads":6,"encoder_ffn_dim":1536,"decoder_ffn_dim":1536,"vocab_size":51865,"num_mel_bins":80,"max_source_positions":1500,"max_target_positions":448}
J
run inspect "$TMP/whisper.json" --json
expect_rc 0
expect_json 'j["params"] == 37760640 and j["kind"] == "speech" and [p["params"] for p in j["architecture"]["parts"]] == [8208384, 29552256]'
run estimate "$TMP/whisper.json" --gpu h100-80gb
expect_rc 0
expect_out "whisper encoder-decoder trained as --mode says"

test_case "qwen2.5-vl: the vision tower and the q/k/v biases"
cat > "$TMP/qvl.json" <<'J'
{"model_type":"qwen2_5_vl","hidden_size":3584,"intermediate_size":18944,"num_hidden_layers":28,"num_attention_heads":28,"num_key_value_heads":4,"vocab_size":152064,"tie_word_embeddings":false,"use_sliding_window":false,"sliding_window":32768,"max_window_layers":28,
 "vision_config":{"depth":32,"hidden_size":1280,"intermediate_size":3420,"num_heads":16,"in_chans":3,"out_hidden_size":3584,"patch_size":14,"spatial_merge_size":2,"temporal_patch_size":2,"window_size":112,"fullatt_block_indexes":[7,15,23,31]}}
J
run inspect "$TMP/qvl.json" --json
expect_rc 0
expect_json 'j["params"] == 8292166656 and j["approximate"] is False and j["architecture"]["parts"][0]["params"] + j["architecture"]["parts"][1]["params"] == 676550144'

test_case "a VLM whose text_config.model_type is not a string: the wrapper's type, said (fuzz-vision-config found a NULL strcmp)"
python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); c["text_config"]["model_type"] = 5; json.dump(c, open(sys.argv[2], "w"))' \
  "$VF_SOURCE_DIR/tests/fuzz/corpus/vision-config/gen-gemma3mm.json" "$TMP/badmt.json"
cp "$TMP/badmt.json" "$TMP/goodmt.json"
python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); c["text_config"]["model_type"] = "gemma3_text"; json.dump(c, open(sys.argv[1], "w"))' "$TMP/goodmt.json"
run inspect "$TMP/goodmt.json" --json
expect_rc 0
good_params=$(printf '%s' "$out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["params"])')
run inspect "$TMP/badmt.json" --json
expect_rc 0
expect_json 'j["params"] == '"$good_params"
expect_out "text_config.model_type gemma3_text (not a string)"

finish
