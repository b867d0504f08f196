# models-round3.sh - end-to-end: `vramfit inspect` and `estimate` on configs
# generated here for the families issue 23's third round added: Nemotron-H
# (hybrid Mamba-2 / attention / MLP / MoE blocks), the wav2vec2, HuBERT and
# WavLM speech encoders with their heads, SpeechT5 text-to-speech, the Wan
# VACE transformer, the LTX-Video VAE, the LTX-2 video and audio VAEs and
# SANA's AutoencoderDC.
# Each count is derived here independently (python below, from the layouts
# the public modelling code builds), never read back from vramfit.
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
# peft has no default targets for nemotron_h (verdict 9): its mixers' own
run estimate "$TMP/nh.json" --gpu h100-80gb --mode lora --seq 4096 --lora-targets in_proj,out_proj
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
p += h * (h // G) * K + h + (4 * h + 1 if g("conv_pos_batch_norm", False) else K)   # weight_v, bias, weight_g / BatchNorm weight, bias, running mean, var, counter
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

# ---- Wan VACE -------------------------------------------------------------------

cat > "$TMP/vace.json" <<'J'
{"_class_name":"WanVACETransformer3DModel","_diffusers_version":"0.34.0","patch_size":[1,2,2],"num_attention_heads":12,"attention_head_dim":128,"in_channels":16,"out_channels":16,"text_dim":4096,"freq_dim":256,"ffn_dim":8960,"num_layers":30,"cross_attn_norm":true,"qk_norm":"rms_norm_across_heads","eps":1e-6,"image_dim":null,"added_kv_proj_dim":null,"rope_max_seq_len":1024,"pos_embed_seq_len":null,"vace_layers":[0,2,4,6,8,10,12,14,16,18,20,22,24,26,28],"vace_in_channels":96}
J
vace_expect=$(python3 - <<'P'
D, F, L, text, freq, cin, cout, pp, vin, nv = 12 * 128, 8960, 30, 4096, 256, 16, 16, 4, 96, 15
lin = lambda i, o: i * o + o
attn = 4 * lin(D, D) + 2 * D                               # q, k, v, out; RMSNorm q, k across heads
block = 2 * attn + 2 * D + lin(D, F) + lin(F, D) + 6 * D   # self, cross, affine norm2, GELU FFN, table
base = cin * pp * D + D + lin(freq, D) + lin(D, D) + lin(D, 6 * D) + lin(text, D) + lin(D, D) \
       + L * block + lin(D, cout * pp) + 2 * D
vace = vin * pp * D + D + nv * (block + lin(D, D)) + lin(D, D)   # control patch conv, blocks + proj_out, block 0's proj_in
print(base + vace)
P
)
test_case "wan vace: the base transformer, the control patch conv and the VACE blocks"
run inspect "$TMP/vace.json" --json
expect_rc 0
expect_json "j['params'] == $vace_expect and j['approximate'] is False and j['architecture']['family'] == 'wan-vace'"
run inspect "$TMP/vace.json"
expect_out "wan-vace diffusion transformer: 45 blocks of 1536"

test_case "wan vace: trainable as a DiT (LoRA), the control tokens through the VACE blocks said"
run estimate "$TMP/vace.json" --gpu h100-80gb --mode lora --video 832x480x81
expect_rc 0
expect_out "15 VACE blocks over as many control tokens"
expect_out "wan-vace diffusion transformer from its config.json: 45 blocks of 1536"

test_case "wan vace: vace_layers must include layer 0 (diffusers refuses otherwise)"
sed 's/"vace_layers":\[0,/"vace_layers":[1,/' "$TMP/vace.json" > "$TMP/vacebad.json"
run inspect "$TMP/vacebad.json"
expect_rc 1
expect_err "field vace_layers: expected a list that includes layer 0"

# ---- LTX-Video VAE ---------------------------------------------------------------

# ltx_vae_count CONFIG: the AutoencoderKLLTXVideo count derived here
ltx_vae_count() {
python3 - "$1" <<'P'
import json, sys
c = json.load(open(sys.argv[1]))
g = lambda k, d: c[k] if c.get(k) is not None else d
conv = lambda i, o, k: i * o * k ** 3 + o                     # causal 3-D conv with bias
def res(i, o, noise=False, ts=False):                        # RMSNorms without weight
    p = conv(i, o, 3) + conv(o, o, 3)
    if i != o:
        p += 2 * i + conv(i, o, 1)                           # LayerNorm + 1x1x1 shortcut
    return p + (2 * i if noise else 0) + (4 * i if ts else 0)
temb = lambda e: 256 * e + e + e * e + e
cin, cout, lat, p = g("in_channels", 3), g("out_channels", 3), g("latent_channels", 128), g("patch_size", 4)
ts = g("timestep_conditioning", False)
boc, lpb = g("block_out_channels", [128, 256, 512, 512]), g("layers_per_block", [4, 3, 3, 3, 4])
dtypes = g("down_block_types", ["LTXVideoDownBlock3D"] * 4)
v095 = dtypes[-1] == "LTXVideo095DownBlock3D"
nb = len(boc) - (1 if v095 else 0)
sts = g("spatio_temporal_scaling", [True, True, True, False])
down = g("downsample_type", ["conv"] * nb)
enc = conv(cin * p * p, boc[0], 3)
o = boc[0]
for i in range(nb):
    ci = o
    o = boc[i + 1] if (v095 or i + 1 < nb) else boc[i]
    enc += lpb[i] * res(ci, ci)
    if dtypes[i] == "LTXVideoDownBlock3D":
        enc += (conv(ci, ci, 3) if sts[i] else 0) + (res(ci, o) if ci != o else 0)
    elif sts[i]:
        enc += conv(ci, ci, 3) if down[i] == "conv" else conv(ci, o // {"spatial": 4, "temporal": 2}.get(down[i], 8), 3)
enc += lpb[nb] * res(o, o) + conv(o, lat + 1, 3) + 2 * lat   # mid, conv_out, latents mean / std
dboc = list(reversed(g("decoder_block_out_channels", [128, 256, 512, 512])))
dl = list(reversed(g("decoder_layers_per_block", [4, 3, 3, 3, 4])))
dsts = list(reversed(g("decoder_spatio_temporal_scaling", [True, True, True, False])))
noise = list(reversed(g("decoder_inject_noise", [False] * (len(dboc) + 1))))
uf = list(reversed(g("upsample_factor", [1] * len(dboc))))
o = dboc[0]
dec = conv(lat, o, 3) + (temb(4 * o) if ts else 0) + dl[0] * res(o, o, noise[0], ts)
for i in range(len(dboc)):
    ci = o // uf[i]
    o = dboc[i] // uf[i]
    dec += temb(4 * ci) if ts else 0
    dec += res(ci, o, noise[i + 1], ts) if ci != o else 0
    dec += conv(o * uf[i], o * uf[i] * 8 // uf[i], 3) if dsts[i] else 0
    dec += dl[i + 1] * res(o, o, noise[i + 1], ts)
dec += conv(o, cout * p * p, 3) + ((1 + temb(2 * o) + 2 * o) if ts else 0)
print(enc + dec)
P
}

cat > "$TMP/ltxvae.json" <<'J'
{"_class_name":"AutoencoderKLLTXVideo","_diffusers_version":"0.32.0","block_out_channels":[128,256,512,512],"decoder_causal":false,"encoder_causal":true,"in_channels":3,"latent_channels":128,"layers_per_block":[4,3,3,3,4],"out_channels":3,"patch_size":4,"patch_size_t":1,"resnet_norm_eps":1e-06,"scaling_factor":1.0,"spatio_temporal_scaling":[true,true,true,false],"decoder_block_out_channels":[128,256,512,512],"decoder_layers_per_block":[4,3,3,3,4],"decoder_spatio_temporal_scaling":[true,true,true,false],"decoder_inject_noise":[false,false,false,false,false],"upsample_residual":[false,false,false,false],"upsample_factor":[1,1,1,1],"timestep_conditioning":false}
J
cat > "$TMP/ltxvae095.json" <<'J'
{"_class_name":"AutoencoderKLLTXVideo","_diffusers_version":"0.33.0","block_out_channels":[128,256,512,1024,2048],"decoder_block_out_channels":[256,512,1024],"decoder_causal":false,"decoder_inject_noise":[false,false,false,true],"decoder_layers_per_block":[5,5,5,5],"decoder_spatio_temporal_scaling":[true,true,true],"down_block_types":["LTXVideo095DownBlock3D","LTXVideo095DownBlock3D","LTXVideo095DownBlock3D","LTXVideo095DownBlock3D"],"downsample_type":["spatial","temporal","spatiotemporal","spatiotemporal"],"encoder_causal":true,"in_channels":3,"latent_channels":128,"layers_per_block":[4,6,6,2,2],"out_channels":3,"patch_size":4,"patch_size_t":1,"resnet_norm_eps":1e-06,"scaling_factor":1.0,"spatial_compression_ratio":32,"spatio_temporal_scaling":[true,true,true,true],"temporal_compression_ratio":8,"timestep_conditioning":true,"upsample_factor":[2,2,2],"upsample_residual":[true,true,true]}
J
test_case "ltx-video vae 0.9.0 layout: exact, 32x spatial and 8x temporal"
run inspect "$TMP/ltxvae.json" --json
expect_rc 0
expect_json "j['params'] == $(ltx_vae_count "$TMP/ltxvae.json") and j['approximate'] is False and j['kind'] == 'vae'"
run inspect "$TMP/ltxvae.json"
expect_out "autoencoder-kl-ltx: 128 latent channels, 32 px per latent pixel"

test_case "ltx-video vae 0.9.5 layout: space-to-channel downsamplers, timestep conditioning, noise, residual upsamplers"
run inspect "$TMP/ltxvae095.json" --json
expect_rc 0
expect_json "j['params'] == $(ltx_vae_count "$TMP/ltxvae095.json") and j['approximate'] is False"

test_case "a VAE alone: counted exactly; not trainable in the estimate (the pipeline trains its denoiser), said"
run estimate "$TMP/ltxvae.json" --gpu h100-80gb
expect_rc 1
expect_err "a VAE (autoencoder-kl-ltx"
expect_err "estimate the pipeline folder that trains its denoiser"

test_case "ltx-video vae: a list of the wrong length names the field"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["layers_per_block"]=[4,3]; json.dump(c,open(sys.argv[2],"w"))' "$TMP/ltxvae.json" "$TMP/ltxbad.json"
run inspect "$TMP/ltxbad.json"
expect_rc 1
expect_err "field layers_per_block: expected a list of 5"

# ---- SANA's AutoencoderDC ------------------------------------------------------------

# dc_count CONFIG: the AutoencoderDC count derived here
dc_count() {
python3 - "$1" <<'P'
import json, sys
c = json.load(open(sys.argv[1]))
g = lambda k, d: c[k] if c.get(k) is not None else d
conv = lambda i, o, k, b=True: i * o * k * k + (o if b else 0)
norm = lambda C, bn: 4 * C + 1 if bn else 2 * C           # BatchNorm with running stats / RMSNorm with bias
hd = g("attention_head_dim", 32)
def block(C, vit, bn, ks):
    if not vit:
        return conv(C, C, 3) + conv(C, C, 3, False) + norm(C, bn)
    inner = (C // hd) * hd
    a = 3 * C * inner + sum(3 * inner * k * k + 3 * inner * hd for k in ks) + inner * (1 + len(ks)) * C + norm(C, bn)
    return a + conv(C, 8 * C, 1) + 8 * C * 9 + 8 * C + conv(4 * C, C, 1, False) + 2 * C
lst = lambda v, n: [v] * n if isinstance(v, str) else v
cin, lat = g("in_channels", 3), g("latent_channels", 32)
eb, db = g("encoder_block_out_channels", [128, 256, 512, 512, 1024, 1024]), g("decoder_block_out_channels", [128, 256, 512, 512, 1024, 1024])
el, dl = g("encoder_layers_per_block", [2, 2, 2, 3, 3, 3]), g("decoder_layers_per_block", [3] * 6)
et, dt = lst(g("encoder_block_types", "ResBlock"), len(eb)), lst(g("decoder_block_types", "ResBlock"), len(db))
dn = lst(g("decoder_norm_types", "rms_norm"), len(db))
eq, dq = g("encoder_qkv_multiscales", [[], [], [], [5], [5], [5]]), g("decoder_qkv_multiscales", [[], [], [], [5], [5], [5]])
unshuffle = g("downsample_block_type", "pixel_unshuffle") == "pixel_unshuffle"
shuffle = g("upsample_block_type", "pixel_shuffle") == "pixel_shuffle"
enc = conv(cin, eb[0], 3) if el[0] > 0 else conv(cin, eb[1] // 4 if unshuffle else eb[1], 3)
for i, C in enumerate(eb):
    enc += el[i] * block(C, et[i] == "EfficientViTBlock", False, eq[i])
    if i < len(eb) - 1 and el[i] > 0:
        enc += conv(C, eb[i + 1] // 4 if unshuffle else eb[i + 1], 3)
enc += conv(eb[-1], lat, 3)
dec = conv(lat, db[-1], 3)
for i in reversed(range(len(db))):
    if i < len(db) - 1 and dl[i] > 0:
        dec += conv(db[i + 1], db[i] * 4 if shuffle else db[i], 3)
    dec += dl[i] * block(db[i], dt[i] == "EfficientViTBlock", dn[i] == "batch_norm", dq[i])
ch = db[0] if dl[0] > 0 else db[1]
dec += 2 * ch + (conv(ch, cin, 3) if dl[0] > 0 else conv(ch, cin * 4 if shuffle else cin, 3))
print(enc + dec)
P
}

cat > "$TMP/dcae.json" <<'J'
{"_class_name":"AutoencoderDC","_diffusers_version":"0.32.0","attention_head_dim":32,"decoder_act_fns":["relu","relu","relu","silu","silu","silu"],"decoder_block_out_channels":[128,256,512,512,1024,1024],"decoder_block_types":["ResBlock","ResBlock","ResBlock","EfficientViTBlock","EfficientViTBlock","EfficientViTBlock"],"decoder_layers_per_block":[3,3,3,3,3,3],"decoder_norm_types":["batch_norm","batch_norm","batch_norm","rms_norm","rms_norm","rms_norm"],"decoder_qkv_multiscales":[[],[],[],[5],[5],[5]],"downsample_block_type":"Conv","encoder_block_out_channels":[128,256,512,512,1024,1024],"encoder_block_types":["ResBlock","ResBlock","ResBlock","EfficientViTBlock","EfficientViTBlock","EfficientViTBlock"],"encoder_layers_per_block":[2,2,2,3,3,3],"encoder_qkv_multiscales":[[],[],[],[5],[5],[5]],"in_channels":3,"latent_channels":32,"scaling_factor":0.41407,"upsample_block_type":"interpolate"}
J
cat > "$TMP/dcae2.json" <<'J'
{"_class_name":"AutoencoderDC","attention_head_dim":16,"encoder_block_types":"EfficientViTBlock","decoder_block_types":"ResBlock","encoder_block_out_channels":[64,128,256],"decoder_block_out_channels":[64,128,256],"encoder_layers_per_block":[0,2,2],"decoder_layers_per_block":[0,1,2],"encoder_qkv_multiscales":[[3],[3,5],[5]],"decoder_qkv_multiscales":[[],[],[]],"latent_channels":16}
J
test_case "autoencoder-dc (SANA f32c32): exact"
run inspect "$TMP/dcae.json" --json
expect_rc 0
expect_json "j['params'] == $(dc_count "$TMP/dcae.json") and j['approximate'] is False and j['kind'] == 'vae'"
run inspect "$TMP/dcae.json"
expect_out "autoencoder-dc: 32 latent channels, 32 px per latent pixel"

test_case "autoencoder-dc: pixel (un)shuffle, empty first stages, several kernels, one type for all"
run inspect "$TMP/dcae2.json" --json
expect_rc 0
expect_json "j['params'] == $(dc_count "$TMP/dcae2.json") and j['approximate'] is False"

test_case "autoencoder-dc: an unknown block type is named, exit 0"
sed 's/"decoder_block_types":"ResBlock"/"decoder_block_types":"MysteryBlock"/' "$TMP/dcae2.json" > "$TMP/dcodd.json"
run inspect "$TMP/dcodd.json" --json
expect_rc 0
expect_json "j['approximate'] is True and any('MysteryBlock' in u for u in j['architecture']['not_understood'])"

# ---- LTX-2 video and audio VAEs ---------------------------------------------------------

cat > "$TMP/ltx2vae.json" <<'J'
{"_class_name":"AutoencoderKLLTX2Video","_diffusers_version":"0.37.0","block_out_channels":[256,512,1024,1024],"decoder_block_out_channels":[256,512,1024],"decoder_causal":false,"decoder_inject_noise":[false,false,false,false],"decoder_layers_per_block":[5,5,5,5],"decoder_spatial_padding_mode":"reflect","decoder_spatio_temporal_scaling":[true,true,true],"down_block_types":["LTX2VideoDownBlock3D","LTX2VideoDownBlock3D","LTX2VideoDownBlock3D","LTX2VideoDownBlock3D"],"downsample_type":["spatial","temporal","spatiotemporal","spatiotemporal"],"encoder_causal":true,"encoder_spatial_padding_mode":"zeros","in_channels":3,"latent_channels":128,"layers_per_block":[4,6,6,2,2],"out_channels":3,"patch_size":4,"patch_size_t":1,"resnet_norm_eps":1e-06,"scaling_factor":1.0,"spatio_temporal_scaling":[true,true,true,true],"timestep_conditioning":false,"upsample_factor":[2,2,2],"upsample_residual":[true,true,true],"upsample_type":["spatiotemporal","spatiotemporal","spatiotemporal"]}
J
cat > "$TMP/ltx2vae-ts.json" <<'J'
{"_class_name":"AutoencoderKLLTX2Video","block_out_channels":[64,128,256],"decoder_block_out_channels":[64,128,256],"layers_per_block":[1,2,1,1],"decoder_layers_per_block":[1,1,2,1],"spatio_temporal_scaling":true,"decoder_spatio_temporal_scaling":[true,false,true],"downsample_type":["spatial","conv","temporal"],"upsample_type":["temporal","spatial","spatiotemporal"],"decoder_inject_noise":true,"timestep_conditioning":true,"upsample_factor":[1,2,2],"upsample_residual":false,"latent_channels":32}
J
ltx2_count() {
python3 - "$1" <<'P'
import json, sys
c = json.load(open(sys.argv[1]))
g = lambda k, d: c[k] if c.get(k) is not None else d
conv = lambda i, o, k: i * o * k ** 3 + o
def res(i, o, noise=False, ts=False):                  # PerChannelRMSNorm has no weights
    return conv(i, o, 3) + conv(o, o, 3) + ((2 * i + i * o + o) if i != o else 0) + (2 * i if noise else 0) + (4 * i if ts else 0)
temb = lambda e: 256 * e + e + e * e + e
fold = {"spatial": 4, "temporal": 2, "spatiotemporal": 8}
cin, cout, lat, p = g("in_channels", 3), g("out_channels", 3), g("latent_channels", 128), g("patch_size", 4)
ts = g("timestep_conditioning", False)
boc, lpb = g("block_out_channels", [256, 512, 1024, 2048]), g("layers_per_block", [4, 6, 6, 2, 2])
sts = g("spatio_temporal_scaling", True)
sts = [sts] * len(boc) if isinstance(sts, bool) else sts
down = g("downsample_type", ["spatial", "temporal", "spatiotemporal", "spatiotemporal"])
enc, o = conv(cin * p * p, lat, 3), lat
for i in range(len(boc)):
    ci, o = o, boc[i]
    enc += lpb[i] * res(ci, ci)
    if sts[i]:
        enc += conv(ci, ci, 3) if down[i] == "conv" else conv(ci, o // fold[down[i]], 3)
enc += lpb[-1] * res(o, o) + conv(o, lat + 1, 3) + 2 * lat
dboc = g("decoder_block_out_channels", [256, 512, 1024])
n = len(dboc)
bl = lambda k, d, m: [c[k]] * m if isinstance(c.get(k), bool) else g(k, d)
dl = list(reversed(g("decoder_layers_per_block", [5] * (n + 1))))
dsts = list(reversed(bl("decoder_spatio_temporal_scaling", [True] * n, n)))
noise = list(reversed(bl("decoder_inject_noise", [False] * (n + 1), n + 1)))
uf = list(reversed(g("upsample_factor", [2] * n)))
ut = list(reversed(g("upsample_type", ["spatiotemporal"] * n)))
dboc = list(reversed(dboc))
o = dboc[0]
dec = conv(lat, o, 3) + (temb(4 * o) if ts else 0) + dl[0] * res(o, o, noise[0], ts)
for i in range(n):
    ci, o = o // uf[i], dboc[i] // uf[i]
    dec += (temb(4 * ci) if ts else 0) + (res(ci, o, noise[i + 1], ts) if ci != o else 0)
    dec += conv(o * uf[i], o * uf[i] * fold[ut[i]] // uf[i], 3) if dsts[i] else 0
    dec += dl[i + 1] * res(o, o, noise[i + 1], ts)
dec += conv(o, cout * p * p, 3) + ((1 + temb(2 * o) + 2 * o) if ts else 0)
print(enc + dec)
P
}
test_case "ltx-2 video vae: exact, 32x spatial and 8x temporal from its samplers"
run inspect "$TMP/ltx2vae.json" --json
expect_rc 0
expect_json "j['params'] == $(ltx2_count "$TMP/ltx2vae.json") and j['approximate'] is False and j['architecture']['family'] == 'autoencoder-kl-ltx2'"
run inspect "$TMP/ltx2vae.json"
expect_out "autoencoder-kl-ltx2: 128 latent channels, 32 px per latent pixel"

test_case "ltx-2 video vae: one boolean for all blocks, timestep conditioning, noise, mixed sampler types"
run inspect "$TMP/ltx2vae-ts.json" --json
expect_rc 0
expect_json "j['params'] == $(ltx2_count "$TMP/ltx2vae-ts.json") and j['approximate'] is False"

cat > "$TMP/ltx2a.json" <<'J'
{"_class_name":"AutoencoderKLLTX2Audio","_diffusers_version":"0.37.0","attn_resolutions":null,"base_channels":128,"causality_axis":"height","ch_mult":[1,2,4],"double_z":true,"dropout":0.0,"in_channels":2,"is_causal":true,"latent_channels":8,"mel_bins":64,"mel_hop_length":160,"mid_block_add_attention":false,"norm_type":"pixel","num_res_blocks":2,"output_channels":2,"resolution":256,"sample_rate":16000}
J
cat > "$TMP/ltx2a-attn.json" <<'J'
{"_class_name":"AutoencoderKLLTX2Audio","attn_resolutions":[64,32],"base_channels":64,"ch_mult":[1,2,2,4],"double_z":false,"in_channels":1,"latent_channels":16,"mid_block_add_attention":true,"norm_type":"group","causality_axis":"none","num_res_blocks":1,"output_channels":1,"resolution":128}
J
ltx2a_count() {
python3 - "$1" <<'P'
import json, sys
c = json.load(open(sys.argv[1]))
g = lambda k, d: c[k] if c.get(k) is not None else d
conv = lambda i, o, k: i * o * k * k + o
grp = g("norm_type", "pixel") == "group"
res = lambda i, o: (2 * i + 2 * o if grp else 0) + conv(i, o, 3) + conv(o, o, 3) + (conv(i, o, 1) if i != o else 0)
attn = lambda C: (2 * C if grp else 0) + 4 * conv(C, C, 1)
base, mult, nrb, r0 = g("base_channels", 128), g("ch_mult", [1, 2, 4]), g("num_res_blocks", 2), g("resolution", 256)
ar, lat = set(g("attn_resolutions", []) or []), g("latent_channels", 8)
C, r, enc = base, r0, conv(g("in_channels", 2), base, 3)
for l, m in enumerate(mult):
    for _ in range(nrb):
        enc += res(C, base * m); C = base * m
        enc += attn(C) if r in ar else 0
    if l != len(mult) - 1:
        enc += conv(C, C, 3); r //= 2
mid = 2 * res(C, C) + (attn(C) if g("mid_block_add_attention", False) else 0)
enc += mid + (2 * C if grp else 0) + conv(C, 2 * lat if g("double_z", True) else lat, 3) + 2 * base
C, r = base * mult[-1], r0 // 2 ** (len(mult) - 1)
dec = conv(lat, C, 3) + mid
for l in reversed(range(len(mult))):
    for _ in range(nrb + 1):
        dec += res(C, base * mult[l]); C = base * mult[l]
        dec += attn(C) if r in ar else 0
    if l != 0:
        dec += conv(C, C, 3); r *= 2
dec += (2 * C if grp else 0) + conv(C, g("output_channels", 2), 3)
print(enc + dec)
P
}
test_case "ltx-2 audio vae: exact"
run inspect "$TMP/ltx2a.json" --json
expect_rc 0
expect_json "j['params'] == $(ltx2a_count "$TMP/ltx2a.json") and j['approximate'] is False and j['kind'] == 'vae'"
run inspect "$TMP/ltx2a.json"
expect_out "autoencoder-ltx2-audio: 8 latent channels, 4x in time and 4x in mel bins"

test_case "ltx-2 audio vae: group norms, attention at resolutions, mid attention, single z"
run inspect "$TMP/ltx2a-attn.json" --json
expect_rc 0
expect_json "j['params'] == $(ltx2a_count "$TMP/ltx2a-attn.json") and j['approximate'] is False"

# ---- pipeline folders with the new components -------------------------------------------

DC="$VF_SOURCE_DIR/tests/fixtures/diffusers"
mkdir -p "$TMP/vp/transformer" "$TMP/vp/text_encoder" "$TMP/vp/vae"
echo '{"_class_name": "WanVACEPipeline"}' >"$TMP/vp/model_index.json"
cp "$TMP/vace.json" "$TMP/vp/transformer/config.json"
cp "$DC/umt5-xxl-encoder.json" "$TMP/vp/text_encoder/config.json"
cp "$DC/wan21-vae.json" "$TMP/vp/vae/config.json"
test_case "a Wan VACE pipeline: LoRA of its transformer with the encoder and VAE as loaded"
run estimate "$TMP/vp" --mode lora --resolution 832x480 --frames 81 --gpu h200 --json
expect_rc 0
expect_json "j['model']['family'] == 'wan-vace' and j['model']['params'] == $vace_expect and j['model']['video_tokens'] == 52 * 30 * 21"
expect_json "[(c['name'], c['role']) for c in j['model']['components']] == [('text_encoder', 'encoder (frozen)'), ('transformer', 'trained'), ('vae', 'vae (frozen)')]"

mkdir -p "$TMP/sp/transformer" "$TMP/sp/vae"
echo '{"_class_name": "SanaPipeline"}' >"$TMP/sp/model_index.json"
cp "$DC/sana-1600m.json" "$TMP/sp/transformer/config.json"
cp "$TMP/dcae.json" "$TMP/sp/vae/config.json"
test_case "a SANA pipeline: the DC-AE counted as a component and loaded as the VAE"
run inspect "$TMP/sp" --json
expect_rc 0
expect_json "[(c['name'], c['params']) for c in j['components']] == [('transformer', 1604462752), ('vae', $(dc_count "$TMP/dcae.json"))]"
run estimate "$TMP/sp" --mode lora --resolution 1024x1024 --gpu h200
expect_rc 0
expect_out "pipeline: vae autoencoder-dc, 312.3M: frozen"
expect_out "a latent token per 32 px"

# ---- SpeechT5 text-to-speech -------------------------------------------------------------

cat > "$TMP/st5.json" <<'J'
{"model_type":"speecht5","architectures":["SpeechT5ForTextToSpeech"],"vocab_size":81,"hidden_size":768,"encoder_layers":12,"encoder_attention_heads":12,"encoder_ffn_dim":3072,"decoder_layers":6,"decoder_attention_heads":12,"decoder_ffn_dim":3072,"num_mel_bins":80,"speech_decoder_prenet_layers":2,"speech_decoder_prenet_units":256,"speech_decoder_postnet_layers":5,"speech_decoder_postnet_units":256,"speech_decoder_postnet_kernel":5,"speaker_embedding_dim":512,"reduction_factor":2,"encoder_max_relative_position":160,"max_text_positions":450,"max_speech_positions":4000,"is_encoder_decoder":true,"hidden_act":"gelu","layer_norm_eps":1e-5,"use_guided_attention_loss":true}
J
cat > "$TMP/st5b.json" <<'J'
{"model_type":"speecht5","architectures":["SpeechT5ForTextToSpeech"],"vocab_size":120,"hidden_size":512,"encoder_layers":4,"encoder_attention_heads":8,"encoder_ffn_dim":2048,"decoder_layers":3,"decoder_attention_heads":8,"decoder_ffn_dim":1536,"num_mel_bins":64,"speech_decoder_prenet_layers":3,"speech_decoder_prenet_units":192,"speech_decoder_postnet_layers":3,"speech_decoder_postnet_units":320,"speech_decoder_postnet_kernel":7,"speaker_embedding_dim":256,"reduction_factor":3,"encoder_max_relative_position":100}
J
st5_count() {
python3 - "$1" <<'P'
import json, sys
c = json.load(open(sys.argv[1]))
g = lambda k, d: c.get(k, d)
h, V, mel = g("hidden_size", 768), g("vocab_size", 81), g("num_mel_bins", 80)
lin = lambda i, o: i * o + o
ffn = lambda f: lin(h, f) + lin(f, h)
attn = 4 * lin(h, h)
enc = V * h + 1 + 2 * h + g("encoder_layers", 12) * (attn + 2 * 2 * h + ffn(g("encoder_ffn_dim", 3072)))
enc += 2 * g("encoder_max_relative_position", 160) * (h // g("encoder_attention_heads", 12))
u, pl = g("speech_decoder_prenet_units", 256), g("speech_decoder_prenet_layers", 2)
pre = sum(lin(mel if i == 0 else u, u) for i in range(pl)) + lin(u, h) + 1 + lin(g("speaker_embedding_dim", 512) + h, h)
dec = pre + g("decoder_layers", 6) * (2 * attn + 3 * 2 * h + ffn(g("decoder_ffn_dim", 3072)))
r, q, ql, qk = g("reduction_factor", 2), g("speech_decoder_postnet_units", 256), g("speech_decoder_postnet_layers", 5), g("speech_decoder_postnet_kernel", 5)
post = lin(h, mel * r) + lin(h, r)
for i in range(ql):
    cin, cout = (mel if i == 0 else q), (mel if i == ql - 1 else q)
    post += cin * cout * qk + 2 * cout + 2 * cout + 1      # conv (no bias); BatchNorm weight, bias, running mean, var, counter
print(enc + dec + post)
P
}
test_case "speecht5 text-to-speech: exact, its text encoder and speech decoder"
run inspect "$TMP/st5.json" --json
expect_rc 0
expect_json "j['params'] == $(st5_count "$TMP/st5.json") and j['kind'] == 'speech' and j['approximate'] is False and [p['name'] for p in j['architecture']['parts']] == ['text_encoder', 'speech_decoder']"
run inspect "$TMP/st5b.json" --json
expect_rc 0
expect_json "j['params'] == $(st5_count "$TMP/st5b.json") and j['approximate'] is False"
run inspect "$TMP/st5.json"
expect_out "speecht5-tts text-to-speech: encoder 12 layers over 200 text tokens, decoder 6 layers over 313 mel steps"

test_case "speecht5: trainable in the estimate, what is approximate said"
run estimate "$TMP/st5.json" --gpu h100-80gb --mode full
expect_rc 0
expect_out "batch 1 x 200 text tokens + speech"
expect_out "the prenets' and postnet's activations are not counted: approximate"

test_case "speecht5 speech-to-text (another head): not understood, said, exit 0"
sed 's/SpeechT5ForTextToSpeech/SpeechT5ForSpeechToText/' "$TMP/st5.json" > "$TMP/st5asr.json"
run inspect "$TMP/st5asr.json"
expect_rc 0
expect_out "not understood: architecture speecht5"

# ---- every key the config classes write: none named ------------------------------------

cat > "$TMP/w2vfull.json" <<'J'
{"activation_dropout":0.1,"adapter_attn_dim":null,"adapter_kernel_size":3,"adapter_stride":2,"add_adapter":false,"apply_spec_augment":true,"architectures":["Wav2Vec2ForCTC"],"attention_dropout":0.1,"bos_token_id":1,"classifier_proj_size":256,"codevector_dim":256,"contrastive_logits_temperature":0.1,"conv_bias":false,"conv_dim":[512,512,512,512,512,512,512],"conv_kernel":[10,3,3,3,3,2,2],"conv_stride":[5,2,2,2,2,2,2],"ctc_loss_reduction":"sum","ctc_zero_infinity":false,"diversity_loss_weight":0.1,"do_stable_layer_norm":false,"eos_token_id":2,"feat_extract_activation":"gelu","feat_extract_dropout":0.0,"feat_extract_norm":"group","feat_proj_dropout":0.1,"feat_quantizer_dropout":0.0,"final_dropout":0.1,"gradient_checkpointing":false,"hidden_act":"gelu","hidden_dropout":0.1,"hidden_dropout_prob":0.1,"hidden_size":768,"initializer_range":0.02,"intermediate_size":3072,"layer_norm_eps":1e-05,"layerdrop":0.1,"mask_feature_length":10,"mask_feature_min_masks":0,"mask_feature_prob":0.0,"mask_time_length":10,"mask_time_min_masks":2,"mask_time_prob":0.05,"model_type":"wav2vec2","num_adapter_layers":3,"num_attention_heads":12,"num_codevector_groups":2,"num_codevectors_per_group":320,"num_conv_pos_embedding_groups":16,"num_conv_pos_embeddings":128,"num_feat_extract_layers":7,"num_hidden_layers":12,"num_negatives":100,"output_hidden_size":768,"pad_token_id":0,"proj_codevector_dim":256,"tdnn_dilation":[1,2,3,1,1],"tdnn_dim":[512,512,512,512,1500],"tdnn_kernel":[5,3,3,1,1],"torch_dtype":"float32","transformers_version":"4.30.0","use_weighted_layer_sum":false,"vocab_size":32,"xvector_output_dim":512}
J
cat > "$TMP/st5full.json" <<'J'
{"activation_dropout":0.1,"apply_spec_augment":true,"architectures":["SpeechT5ForTextToSpeech"],"attention_dropout":0.1,"bos_token_id":0,"conv_bias":false,"conv_dim":[512,512,512,512,512,512,512],"conv_kernel":[10,3,3,3,3,2,2],"conv_stride":[5,2,2,2,2,2,2],"decoder_attention_heads":12,"decoder_ffn_dim":3072,"decoder_layerdrop":0.1,"decoder_layers":6,"decoder_start_token_id":2,"encoder_attention_heads":12,"encoder_ffn_dim":3072,"encoder_layerdrop":0.1,"encoder_layers":12,"encoder_max_relative_position":160,"eos_token_id":2,"feat_extract_activation":"gelu","feat_extract_norm":"group","feat_proj_dropout":0.0,"guided_attention_loss_num_heads":2,"guided_attention_loss_scale":10.0,"guided_attention_loss_sigma":0.4,"hidden_act":"gelu","hidden_dropout":0.1,"hidden_size":768,"initializer_range":0.02,"is_encoder_decoder":true,"layer_norm_eps":1e-05,"mask_feature_length":10,"mask_feature_min_masks":0,"mask_feature_prob":0.0,"mask_time_length":10,"mask_time_min_masks":2,"mask_time_prob":0.05,"max_length":1876,"max_speech_positions":1876,"max_text_positions":600,"model_type":"speecht5","num_conv_pos_embedding_groups":16,"num_conv_pos_embeddings":128,"num_feat_extract_layers":7,"num_mel_bins":80,"pad_token_id":1,"positional_dropout":0.1,"reduction_factor":2,"scale_embedding":false,"speaker_embedding_dim":512,"speech_decoder_postnet_dropout":0.5,"speech_decoder_postnet_kernel":5,"speech_decoder_postnet_layers":5,"speech_decoder_postnet_units":256,"speech_decoder_prenet_dropout":0.5,"speech_decoder_prenet_layers":2,"speech_decoder_prenet_units":256,"torch_dtype":"float32","transformers_version":"4.28.0.dev0","use_cache":true,"use_guided_attention_loss":true,"vocab_size":81}
J
test_case "the keys a saved Wav2Vec2Config / SpeechT5Config holds: all judged, the count exact"
run inspect "$TMP/w2vfull.json" --json
expect_rc 0
expect_json "j['approximate'] is False and j['architecture']['not_understood'] == [] and j['params'] == $(speech_count wav2vec2 Wav2Vec2ForCTC "$TMP/w2vfull.json")"
run inspect "$TMP/st5full.json" --json
expect_rc 0
expect_json "j['approximate'] is False and j['architecture']['not_understood'] == [] and j['params'] == $(st5_count "$TMP/st5full.json")"

test_case "nemotron-h: the remote-code key names (attention_head_dim, mamba_* legacy names) read"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["attention_head_dim"]=c.pop("head_dim"); c["mamba_n_groups"]=c.pop("n_groups"); c["mamba_d_conv"]=c.pop("conv_kernel"); c["time_step_rank"]=256; c["use_mamba_kernels"]=True; json.dump(c,open(sys.argv[2],"w"))' "$TMP/nh.json" "$TMP/nhlegacy.json"
run inspect "$TMP/nhlegacy.json" --json
expect_rc 0
expect_json "j['params'] == $nh_expect and j['approximate'] is False"

finish
