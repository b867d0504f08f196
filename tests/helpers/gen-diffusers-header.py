#!/usr/bin/env python3
# gen-diffusers-header.py - write a component directory (config.json + a
# sparse safetensors file) for a diffusers or transformers component of a
# diffusion pipeline: every tensor name and shape the public diffusers /
# transformers modelling code creates for the config, enumerated module by
# module as the constructors build them (read, not copied), independently
# of vramfit's closed-form counts (lib/model/diffusers.c, arch.c,
# vision.c). Tests compare the two.
#
#   gen-diffusers-header.py OUTDIR CONFIG.json [BF16|F32|F16]
import json
import math
import os
import struct
import sys


def g(c, k, d):
    v = c.get(k)
    return d if v is None else v


class T:
    """The tensors of one model, in creation order."""

    def __init__(self):
        self.t = []

    def add(self, name, shape):
        self.t.append((name, list(shape)))

    def linear(self, n, i, o, bias=True):
        self.add(n + ".weight", [o, i])
        if bias:
            self.add(n + ".bias", [o])

    def conv(self, n, i, o, k, bias=True):
        self.add(n + ".weight", [o, i] + list(k))
        if bias:
            self.add(n + ".bias", [o])

    def norm(self, n, d, bias=True):
        self.add(n + ".weight", [d])
        if bias:
            self.add(n + ".bias", [d])


# ---- Wan transformer --------------------------------------------------------


def wan_attention(t, n, dim, heads, dim_head, added=None):
    inner = heads * dim_head
    t.linear(n + ".to_q", dim, inner)
    t.linear(n + ".to_k", dim, inner)
    t.linear(n + ".to_v", dim, inner)
    t.linear(n + ".to_out.0", inner, dim)
    t.norm(n + ".norm_q", inner, bias=False)
    t.norm(n + ".norm_k", inner, bias=False)
    if added:
        t.linear(n + ".add_k_proj", added, inner)
        t.linear(n + ".add_v_proj", added, inner)
        t.norm(n + ".norm_added_k", inner, bias=False)


def wan(t, c):
    p = g(c, "patch_size", [1, 2, 2])
    heads, hd = g(c, "num_attention_heads", 40), g(c, "attention_head_dim", 128)
    D = heads * hd
    cin = g(c, "in_channels", 16)
    cout = g(c, "out_channels", 16) or cin
    F, L = g(c, "ffn_dim", 13824), g(c, "num_layers", 40)
    freq, text = g(c, "freq_dim", 256), g(c, "text_dim", 4096)
    image, added = c.get("image_dim"), c.get("added_kv_proj_dim")
    t.conv("patch_embedding", cin, D, p)
    ce = "condition_embedder"
    t.linear(ce + ".time_embedder.linear_1", freq, D)
    t.linear(ce + ".time_embedder.linear_2", D, D)
    t.linear(ce + ".time_proj", D, 6 * D)
    t.linear(ce + ".text_embedder.linear_1", text, D)
    t.linear(ce + ".text_embedder.linear_2", D, D)
    if image is not None:
        t.norm(ce + ".image_embedder.norm1", image)
        t.linear(ce + ".image_embedder.ff.net.0.proj", image, image)
        t.linear(ce + ".image_embedder.ff.net.2", image, D)
        t.norm(ce + ".image_embedder.norm2", D)
        if c.get("pos_embed_seq_len") is not None:
            t.add(ce + ".image_embedder.pos_embed", [1, c["pos_embed_seq_len"], image])
    for i in range(L):
        b = "blocks.%d." % i
        wan_attention(t, b + "attn1", D, heads, D // heads)
        wan_attention(t, b + "attn2", D, heads, D // heads, added)
        if g(c, "cross_attn_norm", True):
            t.norm(b + "norm2", D)
        t.linear(b + "ffn.net.0.proj", D, F)
        t.linear(b + "ffn.net.2", F, D)
        t.add(b + "scale_shift_table", [1, 6, D])
    t.linear("proj_out", D, cout * p[0] * p[1] * p[2])
    t.add("scale_shift_table", [1, 2, D])


# ---- SD3 / SD3.5 ------------------------------------------------------------


def ff_gelu(t, n, d, mult=4):
    t.linear(n + ".net.0.proj", d, mult * d)
    t.linear(n + ".net.2", mult * d, d)


def sd3(t, c):
    heads, hd = g(c, "num_attention_heads", 18), g(c, "attention_head_dim", 64)
    D, p, L = heads * hd, g(c, "patch_size", 2), g(c, "num_layers", 18)
    cin = g(c, "in_channels", 16)
    cout = g(c, "out_channels", cin)
    pos = g(c, "pos_embed_max_size", 96)
    qk = c.get("qk_norm") == "rms_norm"
    dual = set(g(c, "dual_attention_layers", []))
    t.conv("pos_embed.proj", cin, D, (p, p))
    t.add("pos_embed.pos_embed", [1, pos * pos, D])  # a persistent buffer
    t.linear("time_text_embed.timestep_embedder.linear_1", 256, D)
    t.linear("time_text_embed.timestep_embedder.linear_2", D, D)
    t.linear("time_text_embed.text_embedder.linear_1", g(c, "pooled_projection_dim", 2048), D)
    t.linear("time_text_embed.text_embedder.linear_2", D, D)
    t.linear("context_embedder", g(c, "joint_attention_dim", 4096), g(c, "caption_projection_dim", 1152))
    for i in range(L):
        b = "transformer_blocks.%d." % i
        last = i == L - 1
        t.linear(b + "norm1.linear", D, (9 if i in dual else 6) * D)
        t.linear(b + "norm1_context.linear", D, (2 if last else 6) * D)
        for q in ("to_q", "to_k", "to_v", "add_k_proj", "add_v_proj", "add_q_proj", "to_out.0"):
            t.linear(b + "attn." + q, D, D)
        if not last:
            t.linear(b + "attn.to_add_out", D, D)
        if qk:
            for q in ("norm_q", "norm_k", "norm_added_q", "norm_added_k"):
                t.norm(b + "attn." + q, hd, bias=False)
        if i in dual:
            for q in ("to_q", "to_k", "to_v", "to_out.0"):
                t.linear(b + "attn2." + q, D, D)
            if qk:
                t.norm(b + "attn2.norm_q", hd, bias=False)
                t.norm(b + "attn2.norm_k", hd, bias=False)
        ff_gelu(t, b + "ff", D)
        if not last:
            ff_gelu(t, b + "ff_context", D)
    t.linear("norm_out.linear", D, 2 * D)
    t.linear("proj_out", D, p * p * cout)


# ---- CogVideoX ---------------------------------------------------------------


def cogvideox(t, c):
    heads, hd = g(c, "num_attention_heads", 30), g(c, "attention_head_dim", 64)
    D, T, L = heads * hd, g(c, "time_embed_dim", 512), g(c, "num_layers", 30)
    p, pt, cin = g(c, "patch_size", 2), c.get("patch_size_t"), g(c, "in_channels", 16)
    affine, qb = g(c, "norm_elementwise_affine", True), g(c, "attention_bias", True)
    if pt is None:
        t.conv("patch_embed.proj", cin, D, (p, p), bias=g(c, "patch_bias", True))
    else:
        t.linear("patch_embed.proj", cin * p * p * pt, D)
    t.linear("patch_embed.text_proj", g(c, "text_embed_dim", 4096), D)
    if g(c, "use_learned_positional_embeddings", False) and not g(c, "use_rotary_positional_embeddings", False):
        n = (g(c, "sample_height", 60) // p) * (g(c, "sample_width", 90) // p) * \
            ((g(c, "sample_frames", 49) - 1) // g(c, "temporal_compression_ratio", 4) + 1)
        t.add("patch_embed.pos_embedding", [1, g(c, "max_text_seq_length", 226) + n, D])
    t.linear("time_embedding.linear_1", D, T)
    t.linear("time_embedding.linear_2", T, T)
    if c.get("ofs_embed_dim"):
        o = c["ofs_embed_dim"]
        t.linear("ofs_embedding.linear_1", o, o)
        t.linear("ofs_embedding.linear_2", o, o)
    for i in range(L):
        b = "transformer_blocks.%d." % i
        for nn in ("norm1", "norm2"):
            t.linear(b + nn + ".linear", T, 6 * D)
            if affine:
                t.norm(b + nn + ".norm", D)
        for q in ("to_q", "to_k", "to_v"):
            t.linear(b + "attn1." + q, D, D, bias=qb)
        t.norm(b + "attn1.norm_q", hd)
        t.norm(b + "attn1.norm_k", hd)
        t.linear(b + "attn1.to_out.0", D, D)
        ff_gelu(t, b + "ff", D)
    if affine:
        t.norm("norm_final", D)
    t.linear("norm_out.linear", T, 2 * D)
    if affine:
        t.norm("norm_out.norm", D)
    t.linear("proj_out", D, p * p * (pt or 1) * g(c, "out_channels", 16))


# ---- HunyuanVideo ------------------------------------------------------------


def temb_mods(t, n, i, d):
    t.linear(n + ".linear_1", i, d)
    t.linear(n + ".linear_2", d, d)


def hunyuan_video(t, c):
    heads, hd = g(c, "num_attention_heads", 24), g(c, "attention_head_dim", 128)
    D = heads * hd
    M = int(D * g(c, "mlp_ratio", 4.0))
    p, pt, cin = g(c, "patch_size", 2), g(c, "patch_size_t", 1), g(c, "in_channels", 16)
    cout = g(c, "out_channels", cin)
    text = g(c, "text_embed_dim", 4096)
    t.conv("x_embedder.proj", cin, D, (pt, p, p))
    ce = "context_embedder"
    temb_mods(t, ce + ".time_text_embed.timestep_embedder", 256, D)
    t.linear(ce + ".time_text_embed.text_embedder.linear_1", text, D)
    t.linear(ce + ".time_text_embed.text_embedder.linear_2", D, D)
    t.linear(ce + ".proj_in", text, D)
    for i in range(g(c, "num_refiner_layers", 2)):
        b = ce + ".token_refiner.refiner_blocks.%d." % i
        t.norm(b + "norm1", D)
        for q in ("to_q", "to_k", "to_v", "to_out.0"):
            t.linear(b + "attn." + q, D, D)
        t.norm(b + "norm2", D)
        t.linear(b + "ff.net.0.proj", D, M)
        t.linear(b + "ff.net.2", M, D)
        t.linear(b + "norm_out.linear", D, 2 * D)
    temb_mods(t, "time_text_embed.timestep_embedder", 256, D)
    t.linear("time_text_embed.text_embedder.linear_1", g(c, "pooled_projection_dim", 768), D)
    t.linear("time_text_embed.text_embedder.linear_2", D, D)
    if g(c, "guidance_embeds", True):
        temb_mods(t, "time_text_embed.guidance_embedder", 256, D)
    for i in range(g(c, "num_layers", 20)):
        b = "transformer_blocks.%d." % i
        t.linear(b + "norm1.linear", D, 6 * D)
        t.linear(b + "norm1_context.linear", D, 6 * D)
        for q in ("to_q", "to_k", "to_v", "add_k_proj", "add_v_proj", "add_q_proj", "to_out.0", "to_add_out"):
            t.linear(b + "attn." + q, D, D)
        for q in ("norm_q", "norm_k", "norm_added_q", "norm_added_k"):
            t.norm(b + "attn." + q, hd, bias=False)
        for f in ("ff", "ff_context"):
            t.linear(b + f + ".net.0.proj", D, M)
            t.linear(b + f + ".net.2", M, D)
    for i in range(g(c, "num_single_layers", 40)):
        b = "single_transformer_blocks.%d." % i
        for q in ("to_q", "to_k", "to_v"):
            t.linear(b + "attn." + q, D, D)
        t.norm(b + "attn.norm_q", hd, bias=False)
        t.norm(b + "attn.norm_k", hd, bias=False)
        t.linear(b + "norm.linear", D, 3 * D)
        t.linear(b + "proj_mlp", D, M)
        t.linear(b + "proj_out", D + M, D)
    t.linear("norm_out.linear", D, 2 * D)
    t.linear("proj_out", D, pt * p * p * cout)


# ---- SANA ----------------------------------------------------------------------


def sana(t, c):
    heads, hd = g(c, "num_attention_heads", 70), g(c, "attention_head_dim", 32)
    ch, chd = g(c, "num_cross_attention_heads", 20), g(c, "cross_attention_head_dim", 112)
    D, I2 = heads * hd, ch * chd
    cross, p = g(c, "cross_attention_dim", 2240), g(c, "patch_size", 1)
    cin = g(c, "in_channels", 32)
    cout = g(c, "out_channels", cin)
    qb, qk = g(c, "attention_bias", False), c.get("qk_norm")
    h = int(g(c, "mlp_ratio", 2.5) * D)
    t.conv("patch_embed.proj", cin, D, (p, p))
    temb_mods(t, "time_embed.emb.timestep_embedder" if not g(c, "guidance_embeds", False)
              else "time_embed.timestep_embedder", 256, D)
    if g(c, "guidance_embeds", False):
        temb_mods(t, "time_embed.guidance_embedder", 256, D)
    t.linear("time_embed.linear", D, 6 * D)
    t.linear("caption_projection.linear_1", g(c, "caption_channels", 2304), D)
    t.linear("caption_projection.linear_2", D, D)
    t.norm("caption_norm", D, bias=False)

    def qkn(n, inner, hdim):
        if qk == "rms_norm_across_heads":
            t.norm(n + ".norm_q", inner, bias=False)
            t.norm(n + ".norm_k", inner, bias=False)
        elif qk == "rms_norm":
            t.norm(n + ".norm_q", hdim, bias=False)
            t.norm(n + ".norm_k", hdim, bias=False)

    for i in range(g(c, "num_layers", 20)):
        b = "transformer_blocks.%d." % i
        for q in ("to_q", "to_k", "to_v"):
            t.linear(b + "attn1." + q, D, D, bias=qb)
        t.linear(b + "attn1.to_out.0", D, D)
        qkn(b + "attn1", D, hd)
        if g(c, "norm_elementwise_affine", False):
            t.norm(b + "norm2", D)
        t.linear(b + "attn2.to_q", D, I2)
        t.linear(b + "attn2.to_k", cross, I2)
        t.linear(b + "attn2.to_v", cross, I2)
        t.linear(b + "attn2.to_out.0", I2, D)
        qkn(b + "attn2", I2, chd)
        t.conv(b + "ff.conv_inverted", D, 2 * h, (1, 1))
        t.conv(b + "ff.conv_depth", 1, 2 * h, (3, 3))
        t.conv(b + "ff.conv_point", h, D, (1, 1), bias=False)
        t.add(b + "scale_shift_table", [6, D])
    t.add("scale_shift_table", [2, D])
    t.linear("proj_out", D, p * p * cout)


# ---- AuraFlow ----------------------------------------------------------------


def auraflow(t, c):
    heads, hd = g(c, "num_attention_heads", 12), g(c, "attention_head_dim", 256)
    D, p = heads * hd, g(c, "patch_size", 2)
    f = int(2 * (4 * D) / 3)
    if f % 256:
        f = f + 256 - f % 256

    def ff(n):
        t.linear(n + ".linear_1", D, f, bias=False)
        t.linear(n + ".linear_2", D, f, bias=False)
        t.linear(n + ".out_projection", f, D, bias=False)

    t.linear("pos_embed.proj", p * p * g(c, "in_channels", 4), D)
    t.add("pos_embed.pos_embed", [1, g(c, "pos_embed_max_size", 1024), D])
    t.linear("context_embedder", g(c, "joint_attention_dim", 2048), g(c, "caption_projection_dim", 3072), bias=False)
    temb_mods(t, "time_step_proj", 256, D)
    for i in range(g(c, "num_mmdit_layers", 4)):
        b = "joint_transformer_blocks.%d." % i
        t.linear(b + "norm1.linear", D, 6 * D, bias=False)
        t.linear(b + "norm1_context.linear", D, 6 * D, bias=False)
        for q in ("to_q", "to_k", "to_v", "add_k_proj", "add_v_proj", "add_q_proj", "to_out.0", "to_add_out"):
            t.linear(b + "attn." + q, D, D, bias=False)
        ff(b + "ff")
        ff(b + "ff_context")
    for i in range(g(c, "num_single_dit_layers", 32)):
        b = "single_transformer_blocks.%d." % i
        t.linear(b + "norm1.linear", D, 6 * D, bias=False)
        for q in ("to_q", "to_k", "to_v", "to_out.0"):
            t.linear(b + "attn." + q, D, D, bias=False)
        ff(b + "ff")
    t.linear("norm_out.linear", D, 2 * D, bias=False)
    t.linear("proj_out", D, p * p * g(c, "out_channels", 4), bias=False)
    t.add("register_tokens", [1, 8, D])


# ---- Mochi ---------------------------------------------------------------------


def mochi(t, c):
    heads, hd = g(c, "num_attention_heads", 24), g(c, "attention_head_dim", 128)
    D, L, p = heads * hd, g(c, "num_layers", 48), g(c, "patch_size", 2)
    P, text = g(c, "pooled_projection_dim", 1536), g(c, "text_embed_dim", 4096)
    cin = g(c, "in_channels", 12)
    F, Fc = (4 * D * 2) // 3, (4 * P * 2) // 3
    t.conv("patch_embed.proj", cin, D, (p, p))
    temb_mods(t, "time_embed.timestep_embedder", g(c, "time_embed_dim", 256), D)
    t.linear("time_embed.pooler.to_kv", text, 2 * text)
    t.linear("time_embed.pooler.to_q", text, text)
    t.linear("time_embed.pooler.to_out", text, D)
    t.linear("time_embed.caption_proj", text, P)
    t.add("pos_frequencies", [3, heads, hd // 2])
    for i in range(L):
        b = "transformer_blocks.%d." % i
        last = i == L - 1
        t.linear(b + "norm1.linear", D, 4 * D)
        if last:
            t.linear(b + "norm1_context.linear_1", D, P)
        else:
            t.linear(b + "norm1_context.linear", D, 4 * P)
        for q in ("norm_q", "norm_k", "norm_added_q", "norm_added_k"):
            t.norm(b + "attn1." + q, hd, bias=False)
        for q in ("to_q", "to_k", "to_v"):
            t.linear(b + "attn1." + q, D, D, bias=False)
        for q in ("add_k_proj", "add_v_proj", "add_q_proj"):
            t.linear(b + "attn1." + q, P, D, bias=False)
        t.linear(b + "attn1.to_out.0", D, D)
        if not last:
            t.linear(b + "attn1.to_add_out", D, P)
        t.linear(b + "ff.net.0.proj", D, 2 * F, bias=False)
        t.linear(b + "ff.net.2", F, D, bias=False)
        if not last:
            t.linear(b + "ff_context.net.0.proj", P, 2 * Fc, bias=False)
            t.linear(b + "ff_context.net.2", Fc, P, bias=False)
    t.linear("norm_out.linear", D, 2 * D)
    t.linear("proj_out", D, p * p * g(c, "out_channels", cin))


# ---- UNet2DConditionModel ---------------------------------------------------


def resnet(t, n, cin, cout, temb, scale_shift=False):
    t.norm(n + ".norm1", cin)
    t.conv(n + ".conv1", cin, cout, (3, 3))
    if temb:
        t.linear(n + ".time_emb_proj", temb, 2 * cout if scale_shift else cout)
    t.norm(n + ".norm2", cout)
    t.conv(n + ".conv2", cout, cout, (3, 3))
    if cin != cout:
        t.conv(n + ".conv_shortcut", cin, cout, (1, 1))


def transformer2d(t, n, heads, head_dim, cin, layers, cross, linear, only_cross):
    inner = heads * head_dim
    t.norm(n + ".norm", cin)
    if linear:
        t.linear(n + ".proj_in", cin, inner)
    else:
        t.conv(n + ".proj_in", cin, inner, (1, 1))
    for k in range(layers):
        b = n + ".transformer_blocks.%d." % k
        t.norm(b + "norm1", inner)
        t.linear(b + "attn1.to_q", inner, inner, bias=False)
        t.linear(b + "attn1.to_k", cross if only_cross else inner, inner, bias=False)
        t.linear(b + "attn1.to_v", cross if only_cross else inner, inner, bias=False)
        t.linear(b + "attn1.to_out.0", inner, inner)
        t.norm(b + "norm2", inner)
        t.linear(b + "attn2.to_q", inner, inner, bias=False)
        t.linear(b + "attn2.to_k", cross, inner, bias=False)
        t.linear(b + "attn2.to_v", cross, inner, bias=False)
        t.linear(b + "attn2.to_out.0", inner, inner)
        t.norm(b + "norm3", inner)
        t.linear(b + "ff.net.0.proj", inner, 8 * inner)
        t.linear(b + "ff.net.2", 4 * inner, inner)
    if linear:
        t.linear(n + ".proj_out", inner, cin)
    else:
        t.conv(n + ".proj_out", inner, cin, (1, 1))


def per_block(v, n):
    return list(v) if isinstance(v, list) else [v] * n


def unet(t, c):
    down = g(c, "down_block_types", ["CrossAttnDownBlock2D"] * 3 + ["DownBlock2D"])
    up = g(c, "up_block_types", ["UpBlock2D"] + ["CrossAttnUpBlock2D"] * 3)
    n = len(down)
    ch = g(c, "block_out_channels", [320, 640, 1280, 1280])
    lpb = per_block(g(c, "layers_per_block", 2), n)
    heads = per_block(g(c, "attention_head_dim", 8), n)  # diffusers reads it as the head count
    cross = per_block(g(c, "cross_attention_dim", 1280), n)
    tl = per_block(g(c, "transformer_layers_per_block", 1), n)
    only = per_block(g(c, "only_cross_attention", False), n)
    linear = g(c, "use_linear_projection", False)
    ss = g(c, "resnet_time_scale_shift", "default") == "scale_shift"
    cin, cout = g(c, "in_channels", 4), g(c, "out_channels", 4)
    kin, kout = g(c, "conv_in_kernel", 3), g(c, "conv_out_kernel", 3)
    temb = g(c, "time_embedding_dim", None) or 4 * ch[0]
    t.conv("conv_in", cin, ch[0], (kin, kin))
    t.linear("time_embedding.linear_1", ch[0], temb)
    t.linear("time_embedding.linear_2", temb, temb)
    if c.get("time_cond_proj_dim"):
        t.linear("time_embedding.cond_proj", c["time_cond_proj_dim"], ch[0], bias=False)
    if c.get("encoder_hid_dim"):
        t.linear("encoder_hid_proj", c["encoder_hid_dim"], cross[0])
    pin = c.get("projection_class_embeddings_input_dim")
    cet = c.get("class_embed_type")
    if cet is None and c.get("num_class_embeds"):
        t.add("class_embedding.weight", [c["num_class_embeds"], temb])
    elif cet == "timestep":
        t.linear("class_embedding.linear_1", ch[0], temb)
        t.linear("class_embedding.linear_2", temb, temb)
    elif cet == "projection":
        t.linear("class_embedding.linear_1", pin, temb)
        t.linear("class_embedding.linear_2", temb, temb)
    elif cet == "simple_projection":
        t.linear("class_embedding", pin, temb)
    if c.get("addition_embed_type") == "text_time":
        t.linear("add_embedding.linear_1", pin, temb)
        t.linear("add_embedding.linear_2", temb, temb)
    bt = 2 * temb if c.get("class_embeddings_concat") else temb
    out = ch[0]
    for i, kind in enumerate(down):
        inp, out = out, ch[i]
        layers = tl[i] if isinstance(tl[i], list) else [tl[i]] * lpb[i]
        for j in range(lpb[i]):
            resnet(t, "down_blocks.%d.resnets.%d" % (i, j), inp if j == 0 else out, out, bt, ss)
            if kind == "CrossAttnDownBlock2D":
                transformer2d(t, "down_blocks.%d.attentions.%d" % (i, j), heads[i], out // heads[i],
                              out, layers[j], cross[i], linear, only[i])
        if i != n - 1:
            t.conv("down_blocks.%d.downsamplers.0.conv" % i, out, out, (3, 3))
    mid = c.get("mid_block_type", "UNetMidBlock2DCrossAttn")
    if mid == "UNetMidBlock2DCrossAttn":
        last = ch[-1]
        resnet(t, "mid_block.resnets.0", last, last, bt, ss)
        ml = tl[-1][0] if isinstance(tl[-1], list) else tl[-1]
        mo = c.get("mid_block_only_cross_attention")
        mo = g(c, "only_cross_attention", False) if mo is None else mo
        transformer2d(t, "mid_block.attentions.0", heads[-1], last // heads[-1], last, ml, cross[-1],
                      linear, mo is True)
        resnet(t, "mid_block.resnets.1", last, last, bt, ss)
    rch, rl, rh, rc = ch[::-1], lpb[::-1], heads[::-1], cross[::-1]
    rtl = c.get("reverse_transformer_layers_per_block") or tl[::-1]
    ronly = only[::-1]
    out = rch[0]
    for i, kind in enumerate(up):
        prev, out = out, rch[i]
        inp = rch[min(i + 1, n - 1)]
        nl = rl[i] + 1
        layers = rtl[i] if isinstance(rtl[i], list) else [rtl[i]] * nl
        for j in range(nl):
            skip = inp if j == nl - 1 else out
            rin = prev if j == 0 else out
            resnet(t, "up_blocks.%d.resnets.%d" % (i, j), rin + skip, out, bt, ss)
            if kind == "CrossAttnUpBlock2D":
                transformer2d(t, "up_blocks.%d.attentions.%d" % (i, j), rh[i], out // rh[i], out,
                              layers[j], rc[i], linear, ronly[i])
        if i != n - 1:
            t.conv("up_blocks.%d.upsamplers.0.conv" % i, out, out, (3, 3))
    t.norm("conv_norm_out", ch[0])
    t.conv("conv_out", ch[0], cout, (kout, kout))


# ---- UNet3DConditionModel ---------------------------------------------------


def temporal_transformer(t, n, heads, head_dim, cin):
    inner = heads * head_dim
    t.norm(n + ".norm", cin)
    t.linear(n + ".proj_in", cin, inner)
    b = n + ".transformer_blocks.0."
    for a in ("attn1", "attn2"):  # double_self_attention: both attend the frames
        t.linear(b + a + ".to_q", inner, inner, bias=False)
        t.linear(b + a + ".to_k", inner, inner, bias=False)
        t.linear(b + a + ".to_v", inner, inner, bias=False)
        t.linear(b + a + ".to_out.0", inner, inner)
    for k in ("norm1", "norm2", "norm3"):
        t.norm(b + k, inner)
    t.linear(b + "ff.net.0.proj", inner, 8 * inner)
    t.linear(b + "ff.net.2", 4 * inner, inner)
    t.linear(n + ".proj_out", inner, cin)


def temporal_conv(t, n, d):
    for k in range(1, 5):
        t.norm(n + ".conv%d.0" % k, d)
        t.conv(n + ".conv%d.%d" % (k, 2 if k == 1 else 3), d, d, (3, 1, 1))


def unet3d(t, c):
    down = g(c, "down_block_types", ["CrossAttnDownBlock3D"] * 3 + ["DownBlock3D"])
    up = g(c, "up_block_types", ["UpBlock3D"] + ["CrossAttnUpBlock3D"] * 3)
    n, ch = len(down), g(c, "block_out_channels", [320, 640, 1280, 1280])
    lpb, cross = g(c, "layers_per_block", 2), g(c, "cross_attention_dim", 1024)
    heads = per_block(g(c, "attention_head_dim", 64), n)
    temb = 4 * ch[0]
    kin, kout = g(c, "conv_in_kernel", 3), g(c, "conv_out_kernel", 3)
    t.conv("conv_in", g(c, "in_channels", 4), ch[0], (kin, kin))
    t.linear("time_embedding.linear_1", ch[0], temb)
    t.linear("time_embedding.linear_2", temb, temb)
    if c.get("time_cond_proj_dim"):
        t.linear("time_embedding.cond_proj", c["time_cond_proj_dim"], ch[0], bias=False)
    temporal_transformer(t, "transformer_in", 8, heads[0], ch[0])
    out = ch[0]
    for i, kind in enumerate(down):
        inp, out = out, ch[i]
        for j in range(lpb):
            b = "down_blocks.%d." % i
            resnet(t, b + "resnets.%d" % j, inp if j == 0 else out, out, temb)
            temporal_conv(t, b + "temp_convs.%d" % j, out)
            if kind == "CrossAttnDownBlock3D":
                transformer2d(t, b + "attentions.%d" % j, out // heads[i], heads[i], out, 1, cross, False, False)
                temporal_transformer(t, b + "temp_attentions.%d" % j, out // heads[i], heads[i], out)
        if i != n - 1:
            t.conv("down_blocks.%d.downsamplers.0.conv" % i, out, out, (3, 3))
    last = ch[-1]
    resnet(t, "mid_block.resnets.0", last, last, temb)
    temporal_conv(t, "mid_block.temp_convs.0", last)
    transformer2d(t, "mid_block.attentions.0", last // heads[-1], heads[-1], last, 1, cross, True, False)
    temporal_transformer(t, "mid_block.temp_attentions.0", last // heads[-1], heads[-1], last)
    resnet(t, "mid_block.resnets.1", last, last, temb)
    temporal_conv(t, "mid_block.temp_convs.1", last)
    rch, rh = ch[::-1], heads[::-1]
    out = rch[0]
    for i, kind in enumerate(up):
        prev, out = out, rch[i]
        inp = rch[min(i + 1, n - 1)]
        b = "up_blocks.%d." % i
        for j in range(lpb + 1):
            skip = inp if j == lpb else out
            resnet(t, b + "resnets.%d" % j, (prev if j == 0 else out) + skip, out, temb)
            temporal_conv(t, b + "temp_convs.%d" % j, out)
            if kind == "CrossAttnUpBlock3D":
                transformer2d(t, b + "attentions.%d" % j, out // rh[i], rh[i], out, 1, cross, False, False)
                temporal_transformer(t, b + "temp_attentions.%d" % j, out // rh[i], rh[i], out)
        if i != n - 1:
            t.conv(b + "upsamplers.0.conv", out, out, (3, 3))
    t.norm("conv_norm_out", ch[0])
    t.conv("conv_out", ch[0], g(c, "out_channels", 4), (kout, kout))


# ---- AutoencoderKL ----------------------------------------------------------


def vae_attention(t, n, d):
    t.norm(n + ".group_norm", d)
    for p in ("to_q", "to_k", "to_v", "to_out.0"):
        t.linear(n + "." + p, d, d)


def vae_kl(t, c):
    ch = g(c, "block_out_channels", [64])
    n, lpb, z = len(ch), g(c, "layers_per_block", 1), g(c, "latent_channels", 4)
    attn = g(c, "mid_block_add_attention", True)
    t.conv("encoder.conv_in", g(c, "in_channels", 3), ch[0], (3, 3))
    out = ch[0]
    for i in range(n):
        inp, out = out, ch[i]
        for j in range(lpb):
            resnet(t, "encoder.down_blocks.%d.resnets.%d" % (i, j), inp if j == 0 else out, out, None)
        if i != n - 1:
            t.conv("encoder.down_blocks.%d.downsamplers.0.conv" % i, out, out, (3, 3))
    for m in ("encoder", "decoder"):
        last = ch[-1]
        if m == "decoder":
            t.conv("decoder.conv_in", z, last, (3, 3))
        resnet(t, m + ".mid_block.resnets.0", last, last, None)
        if attn:
            vae_attention(t, m + ".mid_block.attentions.0", last)
        resnet(t, m + ".mid_block.resnets.1", last, last, None)
        if m == "encoder":
            t.norm("encoder.conv_norm_out", last)
            t.conv("encoder.conv_out", last, 2 * z, (3, 3))
    rch = ch[::-1]
    out = rch[0]
    for i in range(n):
        prev, out = out, rch[i]
        for j in range(lpb + 1):
            resnet(t, "decoder.up_blocks.%d.resnets.%d" % (i, j), prev if j == 0 else out, out, None)
        if i != n - 1:
            t.conv("decoder.up_blocks.%d.upsamplers.0.conv" % i, out, out, (3, 3))
    t.norm("decoder.conv_norm_out", ch[0])
    t.conv("decoder.conv_out", ch[0], g(c, "out_channels", 3), (3, 3))
    if g(c, "use_quant_conv", True):
        t.conv("quant_conv", 2 * z, 2 * z, (1, 1))
    if g(c, "use_post_quant_conv", True):
        t.conv("post_quant_conv", z, z, (1, 1))


# ---- AutoencoderKLHunyuanVideo ----------------------------------------------


def hres(t, n, i, o):
    t.norm(n + ".norm1", i)
    t.conv(n + ".conv1.conv", i, o, (3, 3, 3))
    t.norm(n + ".norm2", o)
    t.conv(n + ".conv2.conv", o, o, (3, 3, 3))
    if i != o:
        t.conv(n + ".conv_shortcut.conv", i, o, (1, 1, 1))


def vae_hunyuan(t, c):
    ch = g(c, "block_out_channels", [128, 256, 512, 512])
    n, lpb, z = len(ch), g(c, "layers_per_block", 2), g(c, "latent_channels", 16)
    sc, tc = g(c, "spatial_compression_ratio", 8), g(c, "temporal_compression_ratio", 4)
    ns, nt = int(math.log2(sc)), int(math.log2(tc))
    t.conv("encoder.conv_in.conv", g(c, "in_channels", 3), ch[0], (3, 3, 3))
    out = ch[0]
    for i in range(n):
        inp, out = out, ch[i]
        final = i == n - 1
        space = i < ns
        time = (i >= n - 1 - nt and not final) if tc == 4 else i < nt
        for j in range(lpb):
            hres(t, "encoder.down_blocks.%d.resnets.%d" % (i, j), inp if j == 0 else out, out)
        if space or time:
            t.conv("encoder.down_blocks.%d.downsamplers.0.conv.conv" % i, out, out, (3, 3, 3))
    for m in ("encoder", "decoder"):
        last = ch[-1]
        if m == "decoder":
            t.conv("decoder.conv_in.conv", z, last, (3, 3, 3))
        hres(t, m + ".mid_block.resnets.0", last, last)
        if g(c, "mid_block_add_attention", True):
            vae_attention(t, m + ".mid_block.attentions.0", last)
        hres(t, m + ".mid_block.resnets.1", last, last)
        if m == "encoder":
            t.norm("encoder.conv_norm_out", last)
            t.conv("encoder.conv_out.conv", last, 2 * z, (3, 3, 3))
    rch = ch[::-1]
    out = rch[0]
    for i in range(n):
        prev, out = out, rch[i]
        final = i == n - 1
        space = i < ns
        time = i >= n - 1 - nt and not final
        for j in range(lpb + 1):
            hres(t, "decoder.up_blocks.%d.resnets.%d" % (i, j), prev if j == 0 else out, out)
        if space or time:
            t.conv("decoder.up_blocks.%d.upsamplers.0.conv.conv" % i, out, out, (3, 3, 3))
    t.norm("decoder.conv_norm_out", ch[0])
    t.conv("decoder.conv_out.conv", ch[0], g(c, "out_channels", 3), (3, 3, 3))
    t.conv("quant_conv", 2 * z, 2 * z, (1, 1, 1))
    t.conv("post_quant_conv", z, z, (1, 1, 1))


# ---- AutoencoderKLCogVideoX -------------------------------------------------


def cres(t, n, i, o, zq=None):
    for nn, d in (("norm1", i), ("norm2", o)):
        if zq:
            t.norm(n + "." + nn + ".norm_layer", d)
            t.conv(n + "." + nn + ".conv_y.conv", zq, d, (1, 1, 1))
            t.conv(n + "." + nn + ".conv_b.conv", zq, d, (1, 1, 1))
        else:
            t.norm(n + "." + nn, d)
    t.conv(n + ".conv1.conv", i, o, (3, 3, 3))
    t.conv(n + ".conv2.conv", o, o, (3, 3, 3))
    if i != o:
        t.conv(n + ".conv_shortcut", i, o, (1, 1, 1))


def vae_cogvideox(t, c):
    ch = g(c, "block_out_channels", [128, 256, 256, 512])
    n, lpb, z = len(ch), g(c, "layers_per_block", 3), g(c, "latent_channels", 16)
    out_c = g(c, "out_channels", 3)
    t.conv("encoder.conv_in.conv", g(c, "in_channels", 3), ch[0], (3, 3, 3))
    out = ch[0]
    for i in range(n):
        inp, out = out, ch[i]
        for j in range(lpb):
            cres(t, "encoder.down_blocks.%d.resnets.%d" % (i, j), inp if j == 0 else out, out)
        if i != n - 1:
            t.conv("encoder.down_blocks.%d.downsamplers.0.conv" % i, out, out, (3, 3))
    for j in range(2):
        cres(t, "encoder.mid_block.resnets.%d" % j, ch[-1], ch[-1])
    t.norm("encoder.norm_out", ch[-1])
    t.conv("encoder.conv_out.conv", ch[-1], 2 * z, (3, 3, 3))
    rch = ch[::-1]
    t.conv("decoder.conv_in.conv", z, rch[0], (3, 3, 3))
    for j in range(2):
        cres(t, "decoder.mid_block.resnets.%d" % j, rch[0], rch[0], zq=z)
    out = rch[0]
    for i in range(n):
        prev, out = out, rch[i]
        for j in range(lpb + 1):
            cres(t, "decoder.up_blocks.%d.resnets.%d" % (i, j), prev if j == 0 else out, out, zq=z)
        if i != n - 1:
            t.conv("decoder.up_blocks.%d.upsamplers.0.conv" % i, out, out, (3, 3))
    t.norm("decoder.norm_out.norm_layer", rch[-1])
    t.conv("decoder.norm_out.conv_y.conv", z, rch[-1], (1, 1, 1))
    t.conv("decoder.norm_out.conv_b.conv", z, rch[-1], (1, 1, 1))
    t.conv("decoder.conv_out.conv", rch[-1], out_c, (3, 3, 3))
    if g(c, "use_quant_conv", False):
        t.conv("quant_conv", 2 * out_c, 2 * out_c, (1, 1, 1))
    if g(c, "use_post_quant_conv", False):
        t.conv("post_quant_conv", out_c, out_c, (1, 1, 1))


# ---- AutoencoderKLMochi -----------------------------------------------------


def mres(t, n, d):
    t.norm(n + ".norm1.norm_layer", d)
    t.conv(n + ".conv1.conv", d, d, (3, 3, 3))
    t.norm(n + ".norm2.norm_layer", d)
    t.conv(n + ".conv2.conv", d, d, (3, 3, 3))


def mblock(t, n, d, layers, attn):
    for j in range(layers):
        mres(t, n + ".resnets.%d" % j, d)
        if attn:
            t.norm(n + ".norms.%d.norm_layer" % j, d)
            for q in ("to_q", "to_k", "to_v"):
                t.linear(n + ".attentions.%d.%s" % (j, q), d, d, bias=False)
            t.linear(n + ".attentions.%d.to_out.0" % j, d, d)


def vae_mochi(t, c):
    ec = g(c, "encoder_block_out_channels", [64, 128, 256, 384])
    dc = g(c, "decoder_block_out_channels", [128, 256, 512, 768])
    lpb = g(c, "layers_per_block", [3, 3, 4, 6, 3])
    te, se = g(c, "temporal_expansions", [1, 2, 3]), g(c, "spatial_expansions", [2, 2, 2])
    attn = g(c, "add_attention_block", [False, True, True, True, True])
    z = g(c, "latent_channels", 12)
    t.linear("encoder.proj_in", g(c, "in_channels", 15), ec[0])
    mblock(t, "encoder.block_in", ec[0], lpb[0], attn[0])
    for i in range(len(ec) - 1):
        t.conv("encoder.down_blocks.%d.conv_in.conv" % i, ec[i], ec[i + 1], (te[i], se[i], se[i]))
        mblock(t, "encoder.down_blocks.%d" % i, ec[i + 1], lpb[i + 1], attn[i + 1])
    mblock(t, "encoder.block_out", ec[-1], lpb[-1], attn[-1])
    t.norm("encoder.norm_out.norm_layer", ec[-1])
    t.linear("encoder.proj_out", ec[-1], 2 * z, bias=False)
    t.conv("decoder.conv_in", z, dc[-1], (1, 1, 1))
    mblock(t, "decoder.block_in", dc[-1], lpb[-1], False)
    for i in range(len(dc) - 1):
        ci, co = dc[-i - 1], dc[-i - 2]
        mblock(t, "decoder.up_blocks.%d" % i, ci, lpb[-i - 2], False)
        t.linear("decoder.up_blocks.%d.proj" % i, ci, co * te[-i - 1] * se[-i - 1] ** 2)
    mblock(t, "decoder.block_out", dc[0], lpb[0], False)
    t.linear("decoder.proj_out", dc[0], g(c, "out_channels", 3))


# ---- AutoencoderKLWan -------------------------------------------------------


def wres(t, n, i, o):
    t.add(n + ".norm1.gamma", [i, 1, 1, 1])
    t.conv(n + ".conv1", i, o, (3, 3, 3))
    t.add(n + ".norm2.gamma", [o, 1, 1, 1])
    t.conv(n + ".conv2", o, o, (3, 3, 3))
    if i != o:
        t.conv(n + ".conv_shortcut", i, o, (1, 1, 1))


def wattn(t, n, d):
    t.add(n + ".norm.gamma", [d, 1, 1])
    t.conv(n + ".to_qkv", d, 3 * d, (1, 1))
    t.conv(n + ".proj", d, d, (1, 1))


def wresample(t, n, d, mode, up_out=None):
    if mode.startswith("up"):
        t.conv(n + ".resample.1", d, up_out if up_out is not None else d // 2, (3, 3))
        if mode == "upsample3d":
            t.conv(n + ".time_conv", d, 2 * d, (3, 1, 1))
    else:
        t.conv(n + ".resample.1", d, d, (3, 3))
        if mode == "downsample3d":
            t.conv(n + ".time_conv", d, d, (3, 1, 1))


def wmid(t, n, d):
    wres(t, n + ".resnets.0", d, d)
    wattn(t, n + ".attentions.0", d)
    wres(t, n + ".resnets.1", d, d)


def vae_wan(t, c):
    base, z = g(c, "base_dim", 96), g(c, "z_dim", 16)
    dbase = g(c, "decoder_base_dim", base)
    mult, nrb = g(c, "dim_mult", [1, 2, 4, 4]), g(c, "num_res_blocks", 2)
    td, res = g(c, "temperal_downsample", [False, True, True]), g(c, "is_residual", False)
    dims = [base * u for u in [1] + mult]
    t.conv("encoder.conv_in", g(c, "in_channels", 3), dims[0], (3, 3, 3))
    k = 0
    for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
        if res:
            for j in range(nrb):
                wres(t, "encoder.down_blocks.%d.resnets.%d" % (i, j), a if j == 0 else b, b)
            if i != len(mult) - 1:
                wresample(t, "encoder.down_blocks.%d.downsampler" % i, b,
                          "downsample3d" if td[i] else "downsample2d")
        else:
            for _ in range(nrb):
                wres(t, "encoder.down_blocks.%d" % k, a, b)
                a, k = b, k + 1
            if i != len(mult) - 1:
                wresample(t, "encoder.down_blocks.%d" % k, b, "downsample3d" if td[i] else "downsample2d")
                k += 1
    wmid(t, "encoder.mid_block", dims[-1])
    t.add("encoder.norm_out.gamma", [dims[-1], 1, 1, 1])
    t.conv("encoder.conv_out", dims[-1], 2 * z, (3, 3, 3))
    t.conv("quant_conv", 2 * z, 2 * z, (1, 1, 1))
    t.conv("post_quant_conv", z, z, (1, 1, 1))
    tu = td[::-1]
    ddims = [dbase * u for u in [mult[-1]] + mult[::-1]]
    t.conv("decoder.conv_in", z, ddims[0], (3, 3, 3))
    wmid(t, "decoder.mid_block", ddims[0])
    for i, (a, b) in enumerate(zip(ddims[:-1], ddims[1:])):
        if i > 0 and not res:
            a = a // 2
        upf = i != len(mult) - 1
        mode = ("upsample3d" if tu[i] else "upsample2d") if upf else None
        for j in range(nrb + 1):
            wres(t, "decoder.up_blocks.%d.resnets.%d" % (i, j), a if j == 0 else b, b)
        if mode:
            if res:
                wresample(t, "decoder.up_blocks.%d.upsampler" % i, b, mode, up_out=b)
            else:
                wresample(t, "decoder.up_blocks.%d.upsamplers.0" % i, b, mode)
    t.add("decoder.norm_out.gamma", [ddims[-1], 1, 1, 1])
    t.conv("decoder.conv_out", ddims[-1], g(c, "out_channels", 3), (3, 3, 3))


# ---- transformers encoders --------------------------------------------------


def t5_encoder(t, c):
    V, d, kv, h = c["vocab_size"], c["d_model"], c["d_kv"], c["num_heads"]
    ff, L, gated = c["d_ff"], c["num_layers"], c.get("feed_forward_proj", "relu").startswith("gated")
    every = c.get("model_type") == "umt5"
    t.add("shared.weight", [V, d])
    for i in range(L):
        b = "encoder.block.%d.layer." % i
        for p in ("q", "k", "v"):
            t.linear(b + "0.SelfAttention." + p, d, h * kv, bias=False)
        t.linear(b + "0.SelfAttention.o", h * kv, d, bias=False)
        if every or i == 0:
            t.add(b + "0.SelfAttention.relative_attention_bias.weight",
                  [g(c, "relative_attention_num_buckets", 32), h])
        t.norm(b + "0.layer_norm", d, bias=False)
        if gated:
            t.linear(b + "1.DenseReluDense.wi_0", d, ff, bias=False)
            t.linear(b + "1.DenseReluDense.wi_1", d, ff, bias=False)
        else:
            t.linear(b + "1.DenseReluDense.wi", d, ff, bias=False)
        t.linear(b + "1.DenseReluDense.wo", ff, d, bias=False)
        t.norm(b + "1.layer_norm", d, bias=False)
    t.norm("encoder.final_layer_norm", d, bias=False)


def clip_text(t, c):
    V, h, f = g(c, "vocab_size", 49408), g(c, "hidden_size", 512), g(c, "intermediate_size", 2048)
    L, P = g(c, "num_hidden_layers", 12), g(c, "max_position_embeddings", 77)
    pre = "text_model"
    t.add(pre + ".embeddings.token_embedding.weight", [V, h])
    t.add(pre + ".embeddings.position_embedding.weight", [P, h])
    for i in range(L):
        b = "%s.encoder.layers.%d." % (pre, i)
        for p in ("q_proj", "k_proj", "v_proj", "out_proj"):
            t.linear(b + "self_attn." + p, h, h)
        t.norm(b + "layer_norm1", h)
        t.norm(b + "layer_norm2", h)
        t.linear(b + "mlp.fc1", h, f)
        t.linear(b + "mlp.fc2", f, h)
    t.norm(pre + ".final_layer_norm", h)
    if "WithProjection" in c.get("architectures", [""])[0]:
        t.linear("text_projection", h, g(c, "projection_dim", 512), bias=False)


def roberta(t, c):
    V, h, f = c["vocab_size"], c["hidden_size"], c["intermediate_size"]
    L, P, tv = c["num_hidden_layers"], c["max_position_embeddings"], g(c, "type_vocab_size", 2)
    cls = c["architectures"][0]
    pre = "roberta"
    t.add(pre + ".embeddings.word_embeddings.weight", [V, h])
    t.add(pre + ".embeddings.position_embeddings.weight", [P, h])
    t.add(pre + ".embeddings.token_type_embeddings.weight", [tv, h])
    t.norm(pre + ".embeddings.LayerNorm", h)
    for i in range(L):
        b = "%s.encoder.layer.%d." % (pre, i)
        for p in ("self.query", "self.key", "self.value", "output.dense"):
            t.linear(b + "attention." + p, h, h)
        t.norm(b + "attention.output.LayerNorm", h)
        t.linear(b + "intermediate.dense", h, f)
        t.linear(b + "output.dense", f, h)
        t.norm(b + "output.LayerNorm", h)
    n = len(c.get("id2label", {})) or g(c, "num_labels", 2)
    if cls.endswith("ForMaskedLM"):  # decoder weight tied to the word embeddings
        t.linear("lm_head.dense", h, h)
        t.norm("lm_head.layer_norm", h)
        t.add("lm_head.bias", [V])
    elif cls.endswith("ForSequenceClassification"):
        t.linear("classifier.dense", h, h)
        t.linear("classifier.out_proj", h, n)
    elif cls.endswith("ForTokenClassification"):
        t.linear("classifier", h, n)
    else:
        t.linear(pre + ".pooler.dense", h, h)


def main(argv):
    out, cfg_path = argv[1], argv[2]
    dtype = argv[3] if len(argv) > 3 else "BF16"
    c = json.load(open(cfg_path))
    t = T()
    cls, mt = c.get("_class_name", ""), c.get("model_type", "")
    fname = "diffusion_pytorch_model.safetensors"
    if cls == "WanTransformer3DModel":
        wan(t, c)
    elif cls == "UNet2DConditionModel":
        unet(t, c)
    elif cls == "UNet3DConditionModel":
        unet3d(t, c)
    elif cls == "SD3Transformer2DModel":
        sd3(t, c)
    elif cls == "CogVideoXTransformer3DModel":
        cogvideox(t, c)
    elif cls == "HunyuanVideoTransformer3DModel":
        hunyuan_video(t, c)
    elif cls == "SanaTransformer2DModel":
        sana(t, c)
    elif cls == "AuraFlowTransformer2DModel":
        auraflow(t, c)
    elif cls == "MochiTransformer3DModel":
        mochi(t, c)
    elif cls == "AutoencoderKL":
        vae_kl(t, c)
    elif cls == "AutoencoderKLWan":
        vae_wan(t, c)
    elif cls == "AutoencoderKLHunyuanVideo":
        vae_hunyuan(t, c)
    elif cls == "AutoencoderKLCogVideoX":
        vae_cogvideox(t, c)
    elif cls == "AutoencoderKLMochi":
        vae_mochi(t, c)
    elif mt in ("t5", "umt5"):
        t5_encoder(t, c)
        fname = "model.safetensors"
    elif mt == "clip_text_model":
        clip_text(t, c)
        fname = "model.safetensors"
    elif mt == "xlm-roberta":
        roberta(t, c)
        fname = "model.safetensors"
    else:
        sys.exit("unknown config")
    os.makedirs(out, exist_ok=True)
    json.dump(c, open(os.path.join(out, "config.json"), "w"))
    width = {"BF16": 2, "F16": 2, "F32": 4}[dtype]
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for n, s in t.t:
        if n in header:
            sys.exit("duplicate tensor " + n)
        numel = 1
        for d in s:
            numel *= d
        header[n] = {"dtype": dtype, "shape": s, "data_offsets": [off, off + width * numel]}
        off += width * numel
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(os.path.join(out, fname), "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        f.truncate(8 + len(h) + off)
    print(off // width)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
