# models-round3.sh - end-to-end: `vramfit inspect` and `estimate` on configs
# generated here for the families issue 23's third round added: Nemotron-H
# (hybrid Mamba-2 / attention / MLP / MoE blocks), the wav2vec2, HuBERT and
# WavLM speech encoders with their heads, the Wan VACE transformer, the
# LTX-Video VAE and SANA's AutoencoderDC. Each count is derived here
# independently (python below, from the layouts the public modelling code
# builds), never read back from vramfit.
. "$(dirname "$0")/lib.sh"

# ---- Nemotron-H ------------------------------------------------------------------

cat > "$TMP/nh.json" <<'J'
{"model_type":"nemotron_h","architectures":["NemotronHForCausalLM"],"hidden_size":1024,"num_attention_heads":8,"num_key_value_heads":2,"head_dim":128,"intermediate_size":4096,"vocab_size":32000,"hybrid_override_pattern":"M-M*-M-","num_hidden_layers":7,"mamba_num_heads":32,"mamba_head_dim":64,"n_groups":4,"ssm_state_size":64,"conv_kernel":4,"chunk_size":128,"use_bias":false,"use_conv_bias":true,"attention_bias":false,"mlp_bias":false,"tie_word_embeddings":false,"layer_norm_epsilon":1e-5,"mlp_hidden_act":"relu2","mamba_hidden_act":"silu","residual_in_fp32":false,"rescale_prenorm_residual":true}
J
nh_expect=$(python3 - <<'P'
H, V, heads, kv, hd, F = 1024, 32000, 8, 2, 128, 4096
nh, mhd, g, n, k = 32, 64, 4, 64, 4
i = nh * mhd; conv = i + 2 * g * n
mamba = H * (i + conv + nh) + conv * (k + 1) + 3 * nh + i + i * H   # in_proj, conv1d, dt_bias/A_log/D, gated norm, out_proj
attn = H * heads * hd * 2 + H * kv * hd * 2                         # q, o, k, v (no bias)
mlp = 2 * H * F                                                     # up, down (relu2, not gated)
pattern = "M-M*-M-"
blocks = sum({"M": mamba, "*": attn, "-": mlp}[c] for c in pattern)
print(blocks + len(pattern) * H + H + 2 * V * H)                    # block norms, norm_f, embeddings + lm_head
P
)
test_case "nemotron-h: exact from hybrid_override_pattern"
run inspect "$TMP/nh.json" --json
expect_rc 0
expect_json "j['params'] == $nh_expect and j['approximate'] is False and j['architecture']['ssm']['layers'] == 3 and j['architecture']['ssm']['attention_layers'] == 1 and j['architecture']['ssm']['kind'] == 'mamba2'"

cat > "$TMP/nhmoe.json" <<'J'
{"model_type":"nemotron_h","hidden_size":512,"num_attention_heads":8,"num_key_value_heads":2,"head_dim":64,"intermediate_size":2048,"vocab_size":1000,"layers_block_type":["mamba","moe","attention","moe","mamba","mlp"],"mamba_num_heads":16,"mamba_head_dim":64,"n_groups":2,"ssm_state_size":32,"conv_kernel":4,"n_routed_experts":16,"num_experts_per_tok":4,"moe_intermediate_size":256,"moe_shared_expert_intermediate_size":512,"n_shared_experts":1,"moe_latent_size":128,"use_bias":false,"mlp_bias":false,"tie_word_embeddings":true}
J
nhmoe_expect=$(python3 - <<'P'
H, V, heads, kv, hd, F = 512, 1000, 8, 2, 64, 2048
nh, mhd, g, n, k = 16, 64, 2, 32, 4
E, top, mi, si, lat = 16, 4, 256, 512, 128
i = nh * mhd; conv = i + 2 * g * n
mamba = H * (i + conv + nh) + conv * (k + 1) + 3 * nh + i + i * H
attn = 2 * H * heads * hd + 2 * H * kv * hd
mlp = 2 * H * F
expert = 2 * lat * mi                                   # up lat -> mi, down mi -> lat
moe = E * expert + E * H + E + 2 * H * si + 2 * H * lat  # experts, router + correction bias, shared MLP, latent projections
kinds = ["mamba", "moe", "attention", "moe", "mamba", "mlp"]
total = sum({"mamba": mamba, "attention": attn, "mlp": mlp, "moe": moe}[t] for t in kinds) + 6 * H + H + V * H
active = total - 2 * (E - top) * expert
print(total, active)
P
)
test_case "nemotron-h: MoE blocks with latent projections, tied, active parameters"
run inspect "$TMP/nhmoe.json" --json
expect_rc 0
set -- $nhmoe_expect
expect_json "j['params'] == $1 and j['architecture']['active_params'] == $2 and j['approximate'] is False"

test_case "nemotron-h: trainable in the estimate, the block mix said approximate"
run estimate "$TMP/nh.json" --gpu h100-80gb --mode lora --seq 4096
expect_rc 0
expect_out "nemotron_h: each block holds one mixer or one feed-forward (3 of 7 blocks an MLP or experts): activations are the mean block's, approximate"
run estimate "$TMP/nh.json" --gpu h100-80gb --mode infer --seq 4096 --batch 2 --json
expect_rc 0
expect_json "j['memory']['kv_cache_bytes'] > 0"

test_case "nemotron-h: a bad block letter is a one-line error naming the field"
printf '{"model_type":"nemotron_h","hybrid_override_pattern":"M-Q"}\n' > "$TMP/nhbad.json"
run inspect "$TMP/nhbad.json"
expect_rc 1
expect_err "hybrid_override_pattern: expected only M, *, - and E"

# ---- wav2vec2, HuBERT, WavLM -------------------------------------------------------

# speech_count FAMILY ARCH CONFIG: the count derived here from the layout
speech_count() {
python3 - "$@" <<'P'
import json, sys
fam, arch, path = sys.argv[1:4]
c = json.load(open(path))
g = lambda k, d: c.get(k, d) if c.get(k) is not None else d
h, L, heads, f = g("hidden_size", 768), g("num_hidden_layers", 12), g("num_attention_heads", 12), g("intermediate_size", 3072)
dims, kern = g("conv_dim", [512] * 7), g("conv_kernel", [10, 3, 3, 3, 3, 2, 2])
layer_norm = g("feat_extract_norm", "group") == "layer"
p, cin = 0, 1
for idx, (d, k) in enumerate(zip(dims, kern)):
    p += cin * d * k + (d if g("conv_bias", False) else 0)      # conv
    if layer_norm or idx == 0:
        p += 2 * d                                              # LayerNorm each / GroupNorm on the first
    cin = d
p += (0 if fam == "hubert" and not g("feat_proj_layer_norm", True) else 2 * dims[-1]) + dims[-1] * h + h
if g("mask_time_prob", 0.05) > 0 or g("mask_feature_prob", 0) > 0:
    p += h                                                      # masked_spec_embed
K, G = g("num_conv_pos_embeddings", 128), g("num_conv_pos_embedding_groups", 16)
p += h * (h // G) * K + h + (2 * h if g("conv_pos_batch_norm", False) else K)   # weight_v, bias, weight_g / BatchNorm
per = 4 * h * h + 4 * h + 2 * 2 * h + h * f + f + f * h + h
if fam == "wavlm":
    per += heads + (h // heads) * 8 + 8
p += 2 * h + L * per + (g("num_buckets", 320) * heads if fam == "wavlm" else 0)
out = h
if g("add_adapter", False):
    out = g("output_hidden_size", h)
    if out != h:
        p += h * out + out + 2 * out
    p += g("num_adapter_layers", 3) * (out * 2 * out * g("adapter_kernel_size", 3) + 2 * out)
labels = len(c["id2label"]) if c.get("id2label") else g("num_labels", 2)
if arch.endswith("ForCTC"):
    p += out * g("vocab_size", 32) + g("vocab_size", 32)
elif arch.endswith("ForSequenceClassification"):
    cps = g("classifier_proj_size", 256)
    p += (L + 1 if g("use_weighted_layer_sum", False) else 0) + h * cps + cps + cps * labels + labels
elif arch.endswith("ForPreTraining"):
    G2, V2, cd, pcd = g("num_codevector_groups", 2), g("num_codevectors_per_group", 320), g("codevector_dim", 256), g("proj_codevector_dim", 256)
    p += G2 * V2 * (cd // G2) + dims[-1] * G2 * V2 + G2 * V2 + h * pcd + pcd + cd * pcd + pcd
print(p)
P
}

cat > "$TMP/w2v.json" <<'J'
{"model_type":"wav2vec2","architectures":["Wav2Vec2ForCTC"],"hidden_size":768,"num_hidden_layers":12,"num_attention_heads":12,"intermediate_size":3072,"conv_dim":[512,512,512,512,512,512,512],"conv_kernel":[10,3,3,3,3,2,2],"conv_stride":[5,2,2,2,2,2,2],"conv_bias":false,"feat_extract_norm":"group","num_feat_extract_layers":7,"num_conv_pos_embeddings":128,"num_conv_pos_embedding_groups":16,"do_stable_layer_norm":false,"mask_time_prob":0.05,"vocab_size":32,"hidden_act":"gelu","layer_norm_eps":1e-5,"feat_proj_dropout":0.1,"ctc_loss_reduction":"sum","pad_token_id":0}
J
test_case "wav2vec2 CTC: exact, the encoder over 10 s of audio"
run inspect "$TMP/w2v.json" --json
expect_rc 0
expect_json "j['params'] == $(speech_count wav2vec2 Wav2Vec2ForCTC "$TMP/w2v.json") and j['kind'] == 'speech' and j['approximate'] is False and '(499 frames after the feature encoder)' in j['architecture']['assumed']"
run inspect "$TMP/w2v.json"
expect_out "wav2vec2 speech encoder: 12 layers of 768 over 499 audio frames per sample"

cat > "$TMP/w2vl.json" <<'J'
{"model_type":"wav2vec2","architectures":["Wav2Vec2ForCTC"],"hidden_size":256,"num_hidden_layers":3,"num_attention_heads":4,"intermediate_size":640,"conv_dim":[64,96,96],"conv_kernel":[10,4,2],"conv_stride":[5,4,2],"num_feat_extract_layers":3,"conv_bias":true,"feat_extract_norm":"layer","num_conv_pos_embeddings":16,"num_conv_pos_embedding_groups":8,"do_stable_layer_norm":true,"mask_time_prob":0,"mask_feature_prob":0.1,"vocab_size":50,"add_adapter":true,"output_hidden_size":128,"num_adapter_layers":2,"adapter_kernel_size":3,"adapter_stride":2}
J
test_case "wav2vec2: layer-norm feature encoder, conv biases, stable layer norm, adapter"
run inspect "$TMP/w2vl.json" --json
expect_rc 0
expect_json "j['params'] == $(speech_count wav2vec2 Wav2Vec2ForCTC "$TMP/w2vl.json") and j['approximate'] is False"

cat > "$TMP/w2vpt.json" <<'J'
{"model_type":"wav2vec2","architectures":["Wav2Vec2ForPreTraining"],"hidden_size":384,"num_hidden_layers":2,"num_attention_heads":6,"intermediate_size":1536,"num_codevector_groups":2,"num_codevectors_per_group":64,"codevector_dim":128,"proj_codevector_dim":96,"mask_time_prob":0.065}
J
test_case "wav2vec2 pre-training: the quantizer and projections"
run inspect "$TMP/w2vpt.json" --json
expect_rc 0
expect_json "j['params'] == $(speech_count wav2vec2 Wav2Vec2ForPreTraining "$TMP/w2vpt.json") and j['approximate'] is False"

cat > "$TMP/hubert.json" <<'J'
{"model_type":"hubert","architectures":["HubertForSequenceClassification"],"hidden_size":512,"num_hidden_layers":4,"num_attention_heads":8,"intermediate_size":2048,"feat_proj_layer_norm":false,"conv_pos_batch_norm":true,"num_conv_pos_embeddings":64,"num_conv_pos_embedding_groups":16,"use_weighted_layer_sum":true,"classifier_proj_size":128,"id2label":{"0":"yes","1":"no","2":"up","3":"down","4":"left"},"mask_time_prob":0.05}
J
test_case "hubert sequence classification: no projection norm, batch-norm positions, weighted layer sum"
run inspect "$TMP/hubert.json" --json
expect_rc 0
expect_json "j['params'] == $(speech_count hubert HubertForSequenceClassification "$TMP/hubert.json") and j['architecture']['family'] == 'hubert' and j['approximate'] is False"

cat > "$TMP/wavlm.json" <<'J'
{"model_type":"wavlm","architectures":["WavLMForCTC"],"hidden_size":768,"num_hidden_layers":12,"num_attention_heads":12,"intermediate_size":3072,"num_buckets":320,"max_bucket_distance":800,"do_stable_layer_norm":false,"feat_extract_norm":"group","vocab_size":40,"mask_time_prob":0.05}
J
test_case "wavlm CTC: the gated relative position bias"
run inspect "$TMP/wavlm.json" --json
expect_rc 0
expect_json "j['params'] == $(speech_count wavlm WavLMForCTC "$TMP/wavlm.json") and j['architecture']['family'] == 'wavlm'"

test_case "a speech head not read here: the base counted, the head named, exit 0"
sed 's/WavLMForCTC/WavLMForXVector/' "$TMP/wavlm.json" > "$TMP/xvec.json"
run inspect "$TMP/xvec.json" --json
expect_rc 0
expect_json "j['approximate'] is True and any('WavLMForXVector' in u for u in j['architecture']['not_understood'])"

test_case "wav2vec2: trainable in the estimate, the audio positions and what is approximate said"
run estimate "$TMP/w2v.json" --gpu h100-80gb --mode full
expect_rc 0
expect_out "batch 1 x 499 audio positions"
expect_out "wav2vec2 encoder trained as --mode says over 499 audio frames per sample"
expect_out "feature encoder's activations over the raw waveform are not counted: approximate"

test_case "wav2vec2: conv lists of the wrong length name the field"
printf '{"model_type":"wav2vec2","num_feat_extract_layers":3,"conv_dim":[512,512]}\n' > "$TMP/w2vbad.json"
run inspect "$TMP/w2vbad.json"
expect_rc 1
expect_err "field conv_dim: expected a list of 3"

finish
