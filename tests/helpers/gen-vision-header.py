#!/usr/bin/env python3
# gen-vision-header.py - write a model directory (config.json + a sparse
# model.safetensors) for a vision or video model: every tensor name and
# shape the public transformers / diffusers modelling code creates for the
# config, enumerated module by module (read, not copied), independently
# of vramfit's closed-form counts (lib/model/vision.c). Tests compare them.
#
#   gen-vision-header.py OUTDIR CONFIG.json
import json
import os
import struct
import sys


def lin(t, n, i, o, bias=True):
    t.append((n + ".weight", [o, i]))
    if bias:
        t.append((n + ".bias", [o]))


def ln(t, n, h):
    t.append((n + ".weight", [h]))
    t.append((n + ".bias", [h]))


def vit_layers(t, pre, L, h, f):
    for i in range(L):
        b = "%s.encoder.layers.%d." % (pre, i)
        for p in ("q_proj", "k_proj", "v_proj", "out_proj"):
            lin(t, b + "self_attn." + p, h, h)
        ln(t, b + "layer_norm1", h)
        ln(t, b + "layer_norm2", h)
        lin(t, b + "mlp.fc1", h, f)
        lin(t, b + "mlp.fc2", f, h)


def g(c, k, d):
    v = c.get(k)
    return d if v is None else v


def vision(t, pre, c, siglip):
    h, f = g(c, "hidden_size", 768), g(c, "intermediate_size", 3072)
    L, img = g(c, "num_hidden_layers", 12), g(c, "image_size", 224)
    p, ch = g(c, "patch_size", 16 if siglip else 32), g(c, "num_channels", 3)
    n = (img // p) ** 2
    t.append((pre + ".embeddings.patch_embedding.weight", [h, ch, p, p]))
    if siglip:
        t.append((pre + ".embeddings.patch_embedding.bias", [h]))
        t.append((pre + ".embeddings.position_embedding.weight", [n, h]))
    else:
        t.append((pre + ".embeddings.class_embedding", [h]))
        t.append((pre + ".embeddings.position_embedding.weight", [n + 1, h]))
        ln(t, pre + ".pre_layrnorm", h)
    vit_layers(t, pre, L, h, f)
    ln(t, pre + ".post_layernorm", h)
    if siglip and g(c, "vision_use_head", True):
        t.append((pre + ".head.probe", [1, 1, h]))
        t.append((pre + ".head.attention.in_proj_weight", [3 * h, h]))
        t.append((pre + ".head.attention.in_proj_bias", [3 * h]))
        lin(t, pre + ".head.attention.out_proj", h, h)
        ln(t, pre + ".head.layernorm", h)
        lin(t, pre + ".head.mlp.fc1", h, f)
        lin(t, pre + ".head.mlp.fc2", f, h)
    return h


def text(t, pre, c, siglip):
    V, h = g(c, "vocab_size", 32000 if siglip else 49408), g(c, "hidden_size", 768 if siglip else 512)
    f, L = g(c, "intermediate_size", 3072 if siglip else 2048), g(c, "num_hidden_layers", 12)
    P = g(c, "max_position_embeddings", 64 if siglip else 77)
    t.append((pre + ".embeddings.token_embedding.weight", [V, h]))
    t.append((pre + ".embeddings.position_embedding.weight", [P, h]))
    vit_layers(t, pre, L, h, f)
    ln(t, pre + ".final_layer_norm", h)
    if siglip:
        lin(t, pre + ".head", h, g(c, "projection_size", h))
    return h


def clip(t, c, siglip):
    vh = vision(t, "vision_model", c.get("vision_config", {}), siglip)
    th = text(t, "text_model", c.get("text_config", {}), siglip)
    if siglip:
        t.append(("logit_bias", [1]))
    else:
        d = g(c, "projection_dim", 512)
        lin(t, "visual_projection", vh, d, False)
        lin(t, "text_projection", th, d, False)
    t.append(("logit_scale", []))


def llama(t, c):
    V, h = g(c, "vocab_size", 32000), g(c, "hidden_size", 4096)
    f, L = g(c, "intermediate_size", 11008), g(c, "num_hidden_layers", 32)
    H = g(c, "num_attention_heads", 32)
    kv = g(c, "num_key_value_heads", H) * (h // H)
    t.append(("language_model.model.embed_tokens.weight", [V, h]))
    for i in range(L):
        b = "language_model.model.layers.%d." % i
        lin(t, b + "self_attn.q_proj", h, h, False)
        lin(t, b + "self_attn.k_proj", h, kv, False)
        lin(t, b + "self_attn.v_proj", h, kv, False)
        lin(t, b + "self_attn.o_proj", h, h, False)
        lin(t, b + "mlp.gate_proj", h, f, False)
        lin(t, b + "mlp.up_proj", h, f, False)
        lin(t, b + "mlp.down_proj", f, h, False)
        t.append((b + "input_layernorm.weight", [h]))
        t.append((b + "post_attention_layernorm.weight", [h]))
    t.append(("language_model.model.norm.weight", [h]))
    t.append(("language_model.lm_head.weight", [V, h]))
    return h


def llava(t, c):
    vc = c.get("vision_config", {})
    vh = vision(t, "vision_tower.vision_model", vc, vc.get("model_type", "").startswith("siglip"))
    th = llama(t, c.get("text_config", {}))
    lin(t, "multi_modal_projector.linear_1", vh, th)
    lin(t, "multi_modal_projector.linear_2", th, th)


def attn(t, n, q, ctx, inner, qkb=True, ob=True, qk=None):
    lin(t, n + ".to_q", q, inner, qkb)
    lin(t, n + ".to_k", ctx, inner, qkb)
    lin(t, n + ".to_v", ctx, inner, qkb)
    lin(t, n + ".to_out.0", inner, q, ob)
    if qk:
        t.append((n + ".norm_q.weight", [qk]))
        t.append((n + ".norm_k.weight", [qk]))


def ff(t, n, D):
    lin(t, n + ".net.0.proj", D, 4 * D)
    lin(t, n + ".net.2", 4 * D, D)


def temb(t, n, i, d):
    lin(t, n + ".linear_1", i, d)
    lin(t, n + ".linear_2", d, d)


def pixart(t, c, latte):
    H, hd = g(c, "num_attention_heads", 16), g(c, "attention_head_dim", 88)
    D = H * hd
    cin = g(c, "in_channels", 4)
    out, L, p = g(c, "out_channels", cin), g(c, "num_layers", 28), g(c, "patch_size", 2)
    cross, cc = g(c, "cross_attention_dim", D), g(c, "caption_channels", 4096)
    qb = g(c, "attention_bias", True)
    extra = not latte and g(c, "use_additional_conditions", g(c, "sample_size", 64) == 128)
    t.append(("pos_embed.proj.weight", [D, cin, p, p]))
    t.append(("pos_embed.proj.bias", [D]))
    kinds = [("transformer_blocks", cross)] + ([("temporal_transformer_blocks", 0)] if latte else [])
    for name, x in kinds:
        for i in range(L):
            b = "%s.%d." % (name, i)
            attn(t, b + "attn1", D, D, D, qb)
            if x:
                attn(t, b + "attn2", D, x, D, qb)
            ff(t, b + "ff", D)
            t.append((b + "scale_shift_table", [6, D]))
    temb(t, "adaln_single.emb.timestep_embedder", 256, D)
    if extra:
        temb(t, "adaln_single.emb.resolution_embedder", 256, D // 3)
        temb(t, "adaln_single.emb.aspect_ratio_embedder", 256, D // 3)
    lin(t, "adaln_single.linear", D, 6 * D)
    temb(t, "caption_projection", cc, D)
    t.append(("scale_shift_table", [2, D]))
    lin(t, "proj_out", D, p * p * out)


def flux(t, c):
    H, hd = g(c, "num_attention_heads", 24), g(c, "attention_head_dim", 128)
    D = H * hd
    cin = g(c, "in_channels", 64)
    out, p = g(c, "out_channels", cin), g(c, "patch_size", 1)
    lin(t, "x_embedder", cin, D)
    lin(t, "context_embedder", g(c, "joint_attention_dim", 4096), D)
    temb(t, "time_text_embed.timestep_embedder", 256, D)
    if g(c, "guidance_embeds", False):
        temb(t, "time_text_embed.guidance_embedder", 256, D)
    temb(t, "time_text_embed.text_embedder", g(c, "pooled_projection_dim", 768), D)
    for i in range(g(c, "num_layers", 19)):
        b = "transformer_blocks.%d." % i
        lin(t, b + "norm1.linear", D, 6 * D)
        lin(t, b + "norm1_context.linear", D, 6 * D)
        attn(t, b + "attn", D, D, D, qk=hd)
        for q in ("add_q_proj", "add_k_proj", "add_v_proj", "to_add_out"):
            lin(t, b + "attn." + q, D, D)
        t.append((b + "attn.norm_added_q.weight", [hd]))
        t.append((b + "attn.norm_added_k.weight", [hd]))
        ff(t, b + "ff", D)
        ff(t, b + "ff_context", D)
    for i in range(g(c, "num_single_layers", 38)):
        b = "single_transformer_blocks.%d." % i
        lin(t, b + "norm.linear", D, 3 * D)
        lin(t, b + "proj_mlp", D, 4 * D)
        lin(t, b + "proj_out", 5 * D, D)
        for q in ("to_q", "to_k", "to_v"):
            lin(t, b + "attn." + q, D, D)
        t.append((b + "attn.norm_q.weight", [hd]))
        t.append((b + "attn.norm_k.weight", [hd]))
    lin(t, "norm_out.linear", D, 2 * D)
    lin(t, "proj_out", D, p * p * out)


def ltx_video(t, c):
    H, hd = g(c, "num_attention_heads", 32), g(c, "attention_head_dim", 64)
    D = H * hd
    cross, L = g(c, "cross_attention_dim", 2048), g(c, "num_layers", 28)
    qb, ob = g(c, "attention_bias", True), g(c, "attention_out_bias", True)
    lin(t, "proj_in", g(c, "in_channels", 128), D)
    t.append(("scale_shift_table", [2, D]))
    temb(t, "time_embed.emb.timestep_embedder", 256, D)
    lin(t, "time_embed.linear", D, 6 * D)
    temb(t, "caption_projection", g(c, "caption_channels", 4096), D)
    for i in range(L):
        b = "transformer_blocks.%d." % i
        attn(t, b + "attn1", D, D, D, qb, ob, qk=D)
        attn(t, b + "attn2", D, cross, D, qb, ob, qk=D)
        ff(t, b + "ff", D)
        t.append((b + "scale_shift_table", [6, D]))
    lin(t, "proj_out", D, g(c, "out_channels", 128))


def main(argv):
    out, cfg_path = argv[1], argv[2]
    c = json.load(open(cfg_path))
    t = []
    mt, cls = c.get("model_type", ""), c.get("_class_name", "")
    if mt in ("clip", "siglip"):
        clip(t, c, mt == "siglip")
    elif mt == "llava":
        llava(t, c)
    elif cls in ("PixArtTransformer2DModel", "LatteTransformer3DModel"):
        pixart(t, c, cls.startswith("Latte"))
    elif cls == "FluxTransformer2DModel":
        flux(t, c)
    elif cls == "LTXVideoTransformer3DModel":
        ltx_video(t, c)
    else:
        sys.exit("unknown config")
    os.makedirs(out, exist_ok=True)
    json.dump(c, open(os.path.join(out, "config.json"), "w"))
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for n, s in t:
        numel = 1
        for d in s:
            numel *= d
        header[n] = {"dtype": "BF16", "shape": s, "data_offsets": [off, off + 2 * numel]}
        off += 2 * numel
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        f.truncate(8 + len(h) + off)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
