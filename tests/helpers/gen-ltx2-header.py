#!/usr/bin/env python3
# gen-ltx2-header.py - write a sparse .safetensors file holding an LTX-2
# transformer header: every tensor (name and shape) the public ltx-core
# model code creates for a transformer config, enumerated module by module
# from what that code builds (read, not copied), independently of
# vramfit's closed-form count (lib/model/ltx.c). Tests compare the two.
#
#   gen-ltx2-header.py OUT.safetensors [CONFIG_JSON] [--video-only] [--no-metadata]
#                      [--prefix P] [--connectors] [--unified]
# CONFIG_JSON: the "transformer" config as a JSON string (keys left out
# take the code's defaults); the file carries it in __metadata__["config"]
# unless --no-metadata. --list prints "name shape" lines instead.
# --connectors adds the video and audio embedding connectors (under the
# prefix, as published single files hold them); --unified also adds a text
# projection, video VAE encoder/decoder, audio VAE and vocoder with small
# made-up shapes under their own prefixes (what inspect must split off).
import json
import struct
import sys

DEFAULTS = {
    "num_layers": 48, "num_attention_heads": 32, "attention_head_dim": 128,
    "in_channels": 128, "out_channels": 128, "cross_attention_dim": 4096,
    "caption_channels": 3840, "audio_num_attention_heads": 32,
    "audio_attention_head_dim": 64, "audio_in_channels": 128, "audio_out_channels": 128,
    "audio_cross_attention_dim": 2048, "apply_gated_attention": False,
    "cross_attention_adaln": False, "use_prompt_adaln_single": True, "ff_bias": True,
    "audio_ff_bias": True, "caption_proj_before_connector": False,
    "use_keyframes_abs_pos_embedding": False,
    "connector_num_layers": 2, "connector_num_attention_heads": 30,
    "connector_attention_head_dim": 128, "connector_apply_gated_attention": False,
    "connector_ff_bias": True,
}


def connectors(c, audio=True):
    # Embeddings1DConnector: blocks of attn1 + ff over heads x head dim,
    # 128 learnable registers; the audio one falls back to the video keys
    out = []
    conns = [("video_embeddings_connector", "")]
    if audio:
        conns.append(("audio_embeddings_connector", "audio_"))
    for name, p in conns:
        layers = c.get(p + "connector_num_layers", c["connector_num_layers"])
        heads = c.get(p + "connector_num_attention_heads", c["connector_num_attention_heads"])
        dh = c.get(p + "connector_attention_head_dim", c["connector_attention_head_dim"])
        d = heads * dh
        for i in range(layers):
            b = "%s.transformer_1d_blocks.%d." % (name, i)
            attention(out, b + "attn1", d, d, heads, dh, c["connector_apply_gated_attention"])
            feed_forward(out, b + "ff", d, c["connector_ff_bias"])
        out.append((name + ".learnable_registers", [128, d]))
    return out


def unified_parts():
    # made-up small shapes: only the prefixes matter to the split
    return [("text_embedding_projection.aggregate_embed.weight", [3840, 7680]),
            ("vae.decoder.conv_in.conv.weight", [1024, 128, 3, 3, 3]),
            ("vae.per_channel_statistics.mean-of-means", [128]),
            ("vae.encoder.conv_in.conv.weight", [128, 48, 3, 3, 3]),
            ("audio_vae.decoder.conv_in.weight", [512, 8, 3, 3]),
            ("vocoder.conv_pre.weight", [1536, 64, 7])]


def linear(out, name, fin, fout, bias=True):
    out.append((name + ".weight", [fout, fin]))
    if bias:
        out.append((name + ".bias", [fout]))


def attention(out, name, q, ctx, heads, dhead, gated):
    inner = heads * dhead
    out.append((name + ".q_norm.weight", [inner]))
    out.append((name + ".k_norm.weight", [inner]))
    linear(out, name + ".to_q", q, inner)
    linear(out, name + ".to_k", ctx, inner)
    linear(out, name + ".to_v", ctx, inner)
    if gated:
        linear(out, name + ".to_gate_logits", q, heads)
    linear(out, name + ".to_out.0", inner, q)


def feed_forward(out, name, dim, bias):
    linear(out, name + ".net.0.proj", dim, 4 * dim, bias)
    linear(out, name + ".net.2", 4 * dim, dim, bias)


def adaln_single(out, name, dim, coeff):
    linear(out, name + ".emb.timestep_embedder.linear_1", 256, dim)
    linear(out, name + ".emb.timestep_embedder.linear_2", dim, dim)
    linear(out, name + ".linear", dim, coeff * dim)


def tensors(c, audio=True):
    out = []
    dv = c["num_attention_heads"] * c["attention_head_dim"]
    da = c["audio_num_attention_heads"] * c["audio_attention_head_dim"]
    xa = c["cross_attention_adaln"]
    coeff = 9 if xa else 6
    g = c["apply_gated_attention"]
    streams = [("", dv, c["in_channels"], c["out_channels"])]
    if audio:
        streams.append(("audio_", da, c["audio_in_channels"], c["audio_out_channels"]))
    for p, d, cin, cout in streams:
        linear(out, p + "patchify_proj", cin, d)
        if not c["caption_proj_before_connector"]:
            linear(out, p + "caption_projection.linear_1", c["caption_channels"], d)
            linear(out, p + "caption_projection.linear_2", d, d)
        adaln_single(out, p + "adaln_single", d, coeff)
        if xa and c["use_prompt_adaln_single"]:
            adaln_single(out, p + "prompt_adaln_single", d, 2)
        out.append((p + "scale_shift_table", [2, d]))
        linear(out, p + "proj_out", d, cout)
    if c["use_keyframes_abs_pos_embedding"]:
        out.append(("keyframes_abs_pos_embedding", [1, dv]))
    if audio:
        adaln_single(out, "av_ca_video_scale_shift_adaln_single", dv, 4)
        adaln_single(out, "av_ca_audio_scale_shift_adaln_single", da, 4)
        adaln_single(out, "av_ca_a2v_gate_adaln_single", dv, 1)
        adaln_single(out, "av_ca_v2a_gate_adaln_single", da, 1)
    hv, dh = c["num_attention_heads"], c["attention_head_dim"]
    ha, dha = c["audio_num_attention_heads"], c["audio_attention_head_dim"]
    for i in range(c["num_layers"]):
        b = "transformer_blocks.%d." % i
        attention(out, b + "attn1", dv, dv, hv, dh, g)
        attention(out, b + "attn2", dv, c["cross_attention_dim"], hv, dh, g)
        feed_forward(out, b + "ff", dv, c["ff_bias"])
        out.append((b + "scale_shift_table", [coeff, dv]))
        if xa:
            out.append((b + "prompt_scale_shift_table", [2, dv]))
        if audio:
            attention(out, b + "audio_attn1", da, da, ha, dha, g)
            attention(out, b + "audio_attn2", da, c["audio_cross_attention_dim"], ha, dha, g)
            feed_forward(out, b + "audio_ff", da, c["audio_ff_bias"])
            out.append((b + "audio_scale_shift_table", [coeff, da]))
            if xa:
                out.append((b + "audio_prompt_scale_shift_table", [2, da]))
            attention(out, b + "audio_to_video_attn", dv, da, ha, dha, g)
            attention(out, b + "video_to_audio_attn", da, dv, ha, dha, g)
            out.append((b + "scale_shift_table_a2v_ca_audio", [5, da]))
            out.append((b + "scale_shift_table_a2v_ca_video", [5, dv]))
    return out


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    flags = [a for a in argv[1:] if a.startswith("--")]
    prefix = "model.diffusion_model."
    for f in flags:
        if f.startswith("--prefix="):
            prefix = f[len("--prefix="):]
    given = json.loads(args[1]) if len(args) > 1 else {}
    c = dict(DEFAULTS)
    c.update(given)
    ts = [(prefix + n, s) for n, s in tensors(c, audio="--video-only" not in flags)]
    if "--connectors" in flags or "--unified" in flags:
        ts += [(prefix + n, s) for n, s in connectors(c, audio="--video-only" not in flags)]
    if "--unified" in flags:
        ts += unified_parts()
    if "--list" in flags:
        for n, s in ts:
            print(n, s)
        return 0
    header = {}
    if "--no-metadata" not in flags:
        cfg = dict(given)
        cfg.setdefault("_class_name", "AVTransformer3DModel")
        header["__metadata__"] = {"config": json.dumps({"transformer": cfg}), "format": "pt"}
    off = 0
    for n, s in ts:
        numel = 1
        for d in s:
            numel *= d
        header[n] = {"dtype": "BF16", "shape": s, "data_offsets": [off, off + 2 * numel]}
        off += 2 * numel
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(args[0], "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        f.truncate(8 + len(h) + off)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
