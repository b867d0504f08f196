#!/usr/bin/env python3
# train.py - ltx-mini-trainer: an EXAMPLE trainer for vramfit's tests and
# demos, not part of the product. A few-million-parameter byte-level
# transformer trained with LoRA on bundled text, driven by the LTX-2
# trainer's config keys and printing the LTX-2 trainer's log formats, so that
# `vramfit tune` can be exercised end to end on a CPU (or a GPU) with real
# memory behaviour:
#   optimization.optimizer_type  adamw | adamw8bit (block-wise 8-bit states,
#                                plain PyTorch)
#   acceleration.quantization    null | int8-quanto (int8 frozen weights,
#                                dequantised per matmul)
#   optimization.batch_size, gradient_accumulation_steps,
#   enable_gradient_checkpointing, lora.rank/alpha/target_modules,
#   optimization.steps, validation.interval, checkpoints.interval,
#   data.preprocessed_data_root (*.txt files; else the bundled text),
#   output_dir, model.model_path (a JSON file with the model's dimensions).
# Unknown keys are rejected like the real trainer (extra="forbid"):
#   Error: Invalid configuration data: ...   (exit 1)
# Usage: python3 scripts/train.py CONFIG.yaml [--disable-progress-bars]
import contextlib
import ctypes
import json
import math
import os
import resource
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

ANY = object()  # a leaf that takes any value
# The schema of the LTX-2 trainer config (TRAINER.md section 2), with the
# allowed values where the trainer restricts them.
SCHEMA = {
    "model": {"model_path": ANY, "text_encoder_path": ANY, "training_mode": ("lora", "full"),
              "load_checkpoint": ANY},
    "lora": {"rank": ANY, "alpha": ANY, "dropout": ANY, "target_modules": ANY},
    "training_strategy": {"name": ANY, "first_frame_conditioning_p": ANY,
                          "video": {"is_generated": ANY, "latents_dir": ANY},
                          "audio": {"is_generated": ANY, "latents_dir": ANY}},
    "optimization": {"learning_rate": ANY, "steps": ANY, "batch_size": ANY,
                     "gradient_accumulation_steps": ANY, "max_grad_norm": ANY,
                     "optimizer_type": ("adamw", "adamw8bit"), "scheduler_type": ANY,
                     "scheduler_params": ANY, "enable_gradient_checkpointing": ANY},
    "acceleration": {"mixed_precision_mode": ("no", "fp16", "bf16"),
                     "quantization": (None, "int8-quanto", "int4-quanto", "int2-quanto",
                                      "fp8-quanto", "fp8uz-quanto"),
                     "load_text_encoder_in_8bit": ANY,
                     "offload_optimizer_during_validation": ANY},
    "data": {"preprocessed_data_root": ANY, "num_dataloader_workers": ANY},
    "validation": {"samples": ANY, "negative_prompt": ANY, "images": ANY, "reference_videos": ANY,
                   "video_dims": ANY, "frame_rate": ANY, "seed": ANY, "inference_steps": ANY,
                   "interval": ANY, "videos_per_prompt": ANY, "guidance_scale": ANY,
                   "stg_scale": ANY, "stg_blocks": ANY, "stg_mode": ANY, "generate_audio": ANY,
                   "skip_initial_validation": ANY, "include_reference_in_output": ANY},
    "checkpoints": {"interval": ANY, "keep_last_n": ANY, "precision": ANY},
    "flow_matching": {"timestep_sampling_mode": ANY, "timestep_sampling_params": ANY},
    "hub": {"push_to_hub": ANY, "hub_model_id": ANY},
    "wandb": {"enabled": ANY, "project": ANY, "entity": ANY, "tags": ANY,
              "log_validation_videos": ANY},
    "seed": ANY,
    "output_dir": ANY,
}

START = time.time()


def log(level, msg, where):
    """One Rich-like log record: time, level, message, right-hand file:line."""
    stamp = time.strftime("[%m/%d/%y %H:%M:%S]")
    line = f"{stamp} {level:<8} {msg}"
    print(f"{line:<160} {where}", flush=True)


def config_error(errors):
    n = len(errors)
    print(f"Error: Invalid configuration data: {n} validation error{'s' if n != 1 else ''} "
          f"for LtxTrainerConfig", file=sys.stderr)
    for path, msg in errors:
        print(f"{path}\n  {msg}", file=sys.stderr)
    sys.exit(1)


def validate(cfg, schema, prefix, errors):
    if not isinstance(cfg, dict):
        errors.append((prefix or "(root)", "Input should be a valid dictionary"))
        return
    for key, value in cfg.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if key not in schema:
            errors.append((path, f"Extra inputs are not permitted [type=extra_forbidden, input_value={value!r}]"))
            continue
        rule = schema[key]
        if isinstance(rule, dict):
            validate(value, rule, path, errors)
        elif isinstance(rule, tuple) and value not in rule:
            allowed = ", ".join("null" if v is None else repr(v) for v in rule)
            errors.append((path, f"Input should be {allowed} [input_value={value!r}]"))


def get(cfg, path, default=None):
    node = cfg
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def positive_int(cfg, path, default):
    v = get(cfg, path, default)
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        config_error([(path, f"Input should be an integer >= 1 [input_value={v!r}]")])
    return v


# --- the model -------------------------------------------------------------

class Int8Matmul(torch.autograd.Function):
    """y = x @ (q * scale)^T with the int8 weight dequantised in the forward
    and again in the backward: only the int8 copy stays alive between them
    (as quanto does)."""

    @staticmethod
    def forward(ctx, x, q, scale):
        ctx.save_for_backward(q, scale)
        return F.linear(x, q.float() * scale)

    @staticmethod
    def backward(ctx, gy):
        q, scale = ctx.saved_tensors
        return gy @ (q.float() * scale), None, None


class FrozenLinear(nn.Module):
    """A frozen weight, fp32 or int8 with a per-row scale (dequantised for
    each matmul, like quanto's int8 weights), plus an optional LoRA pair."""

    def __init__(self, fin, fout, quantize, rank, alpha, gen):
        super().__init__()
        w = torch.randn(fout, fin, generator=gen) / math.sqrt(fin)
        if quantize:
            scale = w.abs().amax(dim=1, keepdim=True).clamp(min=1e-8) / 127.0
            self.register_buffer("qweight", torch.round(w / scale).to(torch.int8))
            self.register_buffer("scale", scale)
            self.weight = None
        else:
            self.register_buffer("weight", w)
            self.qweight = None
        self.lora_a = self.lora_b = None
        if rank:
            self.lora_a = nn.Parameter(torch.randn(rank, fin, generator=gen) / math.sqrt(fin))
            self.lora_b = nn.Parameter(torch.zeros(fout, rank))
            self.lora_scale = alpha / rank

    def forward(self, x):
        if self.qweight is None:
            y = F.linear(x, self.weight)
        else:
            y = Int8Matmul.apply(x, self.qweight, self.scale)
        if self.lora_a is not None:
            y = y + F.linear(F.linear(x, self.lora_a), self.lora_b) * self.lora_scale
        return y


class Block(nn.Module):
    def __init__(self, d, heads, ffn, quantize, lora_for, gen):
        super().__init__()
        self.heads = heads
        mk = lambda name, fin, fout: FrozenLinear(fin, fout, quantize, *lora_for(name), gen)
        self.to_q, self.to_k, self.to_v = mk("to_q", d, d), mk("to_k", d, d), mk("to_v", d, d)
        self.to_out = mk("to_out.0", d, d)
        self.ff_in, self.ff_out = mk("ff.net.0.proj", d, ffn), mk("ff.net.2", ffn, d)
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        for p in list(self.n1.parameters()) + list(self.n2.parameters()):
            p.requires_grad_(False)

    def forward(self, x):
        b, t, d = x.shape
        h = self.n1(x)
        q, k, v = (m(h).view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for m in (self.to_q, self.to_k, self.to_v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        mask = torch.ones(t, t, device=x.device, dtype=torch.bool).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        x = x + self.to_out((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.ff_out(F.gelu(self.ff_in(self.n2(x))))


class MiniModel(nn.Module):
    def __init__(self, dims, quantize, lora_for, full, gen):
        super().__init__()
        d = dims["d_model"]
        self.emb = nn.Embedding(256, d)
        self.pos = nn.Embedding(dims["seq_len"], d)
        self.blocks = nn.ModuleList(Block(d, dims["heads"], dims["ffn"], quantize, lora_for, gen)
                                    for _ in range(dims["layers"]))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 256, bias=False)
        self.ckpt = False
        if full:  # full fine-tune: the frozen buffers become parameters
            for blk in self.blocks:
                for m in blk.modules():
                    if isinstance(m, FrozenLinear) and m.weight is not None:
                        w = m.weight
                        del m.weight
                        m.weight = nn.Parameter(w)
        else:
            for p in list(self.emb.parameters()) + list(self.pos.parameters()) + \
                    list(self.norm.parameters()) + list(self.head.parameters()):
                p.requires_grad_(False)

    def forward(self, idx):
        x = self.emb(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for blk in self.blocks:
            if self.ckpt and self.training:
                x = torch.utils.checkpoint.checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return self.head(self.norm(x))


# --- the 8-bit optimizer ----------------------------------------------------

BLOCK = 256      # values per quantisation block (one fp32 absmax each)
CHUNK = 1 << 16  # parameters updated at a time: bounds the fp32 temporaries
CHUNK_CUDA = 1 << 22  # on a GPU: 16 MiB temporaries, few kernel launches


def q8(x, signed):
    """Block-wise linear 8-bit: int8 for a signed tensor, uint8 otherwise."""
    pad = (-x.numel()) % BLOCK
    blocks = F.pad(x, (0, pad)).view(-1, BLOCK)
    absmax = blocks.abs().amax(dim=1, keepdim=True).clamp(min=1e-30)
    if signed:
        return torch.round(blocks / absmax * 127).to(torch.int8), absmax
    return torch.round(blocks / absmax * 255).to(torch.uint8), absmax


def dq8(q, absmax, n, signed):
    return (q.float() * (absmax / (127 if signed else 255))).view(-1)[:n]


class AdamW8bit(torch.optim.Optimizer):
    """AdamW with both moments in block-wise 8-bit (2 bytes a parameter plus
    an fp32 absmax per 256, instead of 8 bytes): the first moment as int8,
    the square root of the second as uint8 (floored at half a quantisation
    step so a rounded-away moment never divides by eps). Updated CHUNK
    parameters at a time (CHUNK_CUDA on a GPU), as bitsandbytes' fused
    kernel keeps temporaries small."""

    def __init__(self, params, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            b1, b2 = group["betas"]
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                n = p.numel()
                if not st:
                    nb = (n + BLOCK - 1) // BLOCK
                    st["step"] = 0
                    st["m"] = torch.zeros(nb, BLOCK, dtype=torch.int8, device=p.device)
                    st["v"] = torch.zeros(nb, BLOCK, dtype=torch.uint8, device=p.device)
                    st["m_max"] = torch.zeros(nb, 1, device=p.device)
                    st["v_max"] = torch.zeros(nb, 1, device=p.device)
                st["step"] += 1
                bc1 = 1 - b1 ** st["step"]
                bc2 = 1 - b2 ** st["step"]
                flat, grad = p.view(-1), p.grad.view(-1)
                chunk = CHUNK_CUDA if p.is_cuda else CHUNK
                for lo in range(0, n, chunk):
                    hi = min(n, lo + chunk)
                    blo, bhi = lo // BLOCK, (hi + BLOCK - 1) // BLOCK
                    g = grad[lo:hi]
                    m = dq8(st["m"][blo:bhi], st["m_max"][blo:bhi], hi - lo, True)
                    sv = dq8(st["v"][blo:bhi], st["v_max"][blo:bhi], hi - lo, False)
                    m.mul_(b1).add_(g, alpha=1 - b1)
                    v = sv.mul_(sv).mul_(b2).addcmul_(g, g, value=1 - b2)
                    w = flat[lo:hi]
                    w.mul_(1 - lr * wd)
                    w.addcdiv_(m, (v / bc2).sqrt_().add_(eps), value=-lr / bc1)
                    st["m"][blo:bhi], st["m_max"][blo:bhi] = q8(m, True)
                    sq, smax = q8(v.sqrt_(), False)
                    st["v"][blo:bhi], st["v_max"][blo:bhi] = sq.clamp_(min=1), smax


# --- outputs ----------------------------------------------------------------

def save_safetensors(path, tensors):
    """Write tensors in the safetensors layout (u64 header length, JSON, data)."""
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        data = t.detach().to("cpu", torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    h = json.dumps(header).encode()
    h += b" " * ((-len(h)) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


CAP_ENV = "VRAMFIT_EXAMPLE_CUDA_MEMORY_CAP"


def parse_cap(text, total):
    """$VRAMFIT_EXAMPLE_CUDA_MEMORY_CAP: a fraction of the device (0 < f <= 1)
    or a size (bytes, or with a KiB/MiB/GiB suffix) -> the fraction for
    torch.cuda.set_per_process_memory_fraction. None when unset or empty."""
    text = (text or "").strip()
    if not text:
        return None
    units = {"kib": 2**10, "mib": 2**20, "gib": 2**30, "b": 1}
    low = text.lower()
    mult = 0
    for suffix, m in units.items():
        if low.endswith(suffix):
            low, mult = low[:-len(suffix)].strip(), m
            break
    try:
        value = float(low)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{CAP_ENV}={text!r}: expected a fraction in (0, 1] or a size such as 4096MiB")
    if mult == 0 and value <= 1:
        return value
    frac = value * (mult or 1) / total
    if frac > 1:
        raise ValueError(f"{CAP_ENV}={text!r}: more than the device's {total} bytes")
    return frac


def apply_memory_cap():
    """Cap this process's CUDA caching allocator (PyTorch's own limit on the
    memory it reserves): past it, an allocation raises the real
    torch.OutOfMemoryError ("CUDA out of memory") as a full card would.
    Returns the cap in bytes, or None."""
    text = os.environ.get(CAP_ENV, "")
    total = torch.cuda.mem_get_info()[1]  # the total the allocator compares with
    try:
        frac = parse_cap(text, total)
    except ValueError as e:
        print(f"Error: {e}", file=sys.stderr)
        sys.exit(2)
    if frac is None:
        return None
    torch.cuda.set_per_process_memory_fraction(frac)
    return int(frac * total)


def load_safetensors(path):
    """The tensors of a file save_safetensors wrote (F32 only)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        lo, hi = h["data_offsets"]
        out[name] = torch.frombuffer(bytearray(data[lo:hi]), dtype=torch.float32).view(h["shape"])
    return out


def load_checkpoint(path, model, opt, opt_type, gen):
    """model.load_checkpoint: a weights file (*_weights_step_NNNNN.safetensors)
    or a directory (its newest one). Loads the weights, and the optimizer
    and data order from training_state_step_NNNNN.pt beside it when there;
    returns the step to continue after."""
    if os.path.isdir(path):
        files = sorted(n for n in os.listdir(path) if "_weights_step_" in n and n.endswith(".safetensors"))
        if not files:
            print(f"Error: model.load_checkpoint {path}: no *_weights_step_*.safetensors in it", file=sys.stderr)
            sys.exit(1)
        path = os.path.join(path, files[-1])
    try:
        step = int(os.path.basename(path).rsplit("_step_", 1)[1].split(".")[0])
        tensors = load_safetensors(path)
    except (OSError, ValueError, IndexError, KeyError) as e:
        print(f"Error: model.load_checkpoint {path}: {e}", file=sys.stderr)
        sys.exit(1)
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name, t in tensors.items():
            if name in params:
                params[name].copy_(t.to(params[name].device))
    state = os.path.join(os.path.dirname(path), f"training_state_step_{step:05d}.pt")
    if os.path.exists(state):
        st = torch.load(state)
        if st.get("optimizer_type") == opt_type:
            opt.load_state_dict(st["optimizer"])
        else:  # another optimizer since (a recovery changed it): its states start again
            log("WARNING", f"optimizer {st.get('optimizer_type')} -> {opt_type}: optimizer states start "
                "fresh", "trainer.py:137")
        gen.set_state(st["rng"])
    log("INFO", f"Resuming from checkpoint {os.path.basename(path)} at step {step}", "trainer.py:140")
    return step


# Tests make the trainer run out of memory on request:
#   VRAMFIT_EXAMPLE_OOM_AT="STEP" or "STEP:KEY=VALUE" raises PyTorch's CUDA
#   out-of-memory error before step STEP, only while the config's KEY has
#   VALUE (its YAML value as Python prints it: adamw, 2, True, None), so the
#   remedy that changes KEY lets the same step pass.
#   VRAMFIT_EXAMPLE_HOLD_AT="STEP" stops after step STEP (and its
#   checkpoint) and waits to be ended, for tests of an interruption.
#   VRAMFIT_EXAMPLE_NAN_AT="STEP" makes step STEP's loss NaN (the loss
#   times NaN, so its gradients are too); the trainer sees a non-finite
#   loss, says "Loss is NaN at step STEP" and exits 1 (a divergence).
OOM_ENV = "VRAMFIT_EXAMPLE_OOM_AT"
HOLD_ENV = "VRAMFIT_EXAMPLE_HOLD_AT"
NAN_ENV = "VRAMFIT_EXAMPLE_NAN_AT"


def parse_oom(text):
    text = text.strip()
    if not text:
        return 0, None, None
    step, _, cond = text.partition(":")
    key, _, value = cond.partition("=")
    try:
        return int(step), (key or None), value
    except ValueError:
        print(f"Error: {OOM_ENV}={text!r}: expected STEP or STEP:KEY=VALUE", file=sys.stderr)
        sys.exit(2)


def raise_oom(step):
    msg = (f"CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.19 GiB total capacity; "
           f"77.61 GiB already allocated; 1.02 GiB free) [{OOM_ENV} at step {step}]")
    err = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError", RuntimeError)
    raise err(msg)


def fmt_total(seconds):
    if seconds is None:
        return "calculating..."
    return f"{int(seconds // 3600)}h {int(seconds % 3600 // 60)}m"


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    flags = {a for a in argv if a.startswith("--")}
    unknown = flags - {"--disable-progress-bars"}
    if len(args) != 1 or unknown:
        print("usage: train.py CONFIG.yaml [--disable-progress-bars]", file=sys.stderr)
        return 2
    progress_bars = "--disable-progress-bars" not in flags
    with open(args[0]) as f:
        cfg = yaml.safe_load(f) or {}
    errors = []
    validate(cfg, SCHEMA, "", errors)
    if errors:
        config_error(errors)

    steps = positive_int(cfg, "optimization.steps", 2000)
    batch = positive_int(cfg, "optimization.batch_size", 1)
    accum = positive_int(cfg, "optimization.gradient_accumulation_steps", 1)
    lr = float(get(cfg, "optimization.learning_rate", 1e-4))
    max_norm = get(cfg, "optimization.max_grad_norm", None)
    opt_type = get(cfg, "optimization.optimizer_type", "adamw")
    quant = get(cfg, "acceleration.quantization", None)
    mode = get(cfg, "model.training_mode", "lora")
    if quant is not None and quant != "int8-quanto":
        config_error([("acceleration.quantization", f"the example trainer implements null and int8-quanto only [input_value={quant!r}]")])
    if mode == "full" and quant is not None:
        config_error([("acceleration.quantization", "quantization is not supported with full training")])
    rank = positive_int(cfg, "lora.rank", 16) if mode == "lora" else 0
    alpha = float(get(cfg, "lora.alpha", rank) or rank or 1)
    targets = set(get(cfg, "lora.target_modules", ["to_k", "to_q", "to_v", "to_out.0"]) or [])
    val_interval = get(cfg, "validation.interval", None)
    ckpt_interval = get(cfg, "checkpoints.interval", None)
    out_dir = get(cfg, "output_dir", "outputs")
    seed = int(get(cfg, "seed", 42))

    dims = {"d_model": 128, "heads": 4, "ffn": 512, "layers": 2, "seq_len": 16}
    model_path = get(cfg, "model.model_path", None)
    if isinstance(model_path, str) and model_path.endswith(".json") and os.path.exists(model_path):
        with open(model_path) as f:
            dims.update(json.load(f))
    text = ""
    data_root = get(cfg, "data.preprocessed_data_root", None)
    if isinstance(data_root, str) and os.path.isdir(data_root):
        # *.txt at the root, or the preprocessing script's latents/*.txt
        for sub in ("", "latents"):
            d = os.path.join(data_root, sub)
            for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
                if name.endswith(".txt"):
                    with open(os.path.join(d, name), errors="replace") as f:
                        text += f.read()
    if not text:
        with open(os.path.join(ROOT, "data", "text.txt")) as f:
            text = f.read()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu":
        # Tensors of 64 KiB and more get their own mapping, returned on free:
        # the process's memory then follows the live tensors (not heap
        # fragmentation), so a memory limit OOMs where the tensors say.
        try:
            ctypes.CDLL("libc.so.6").mallopt(-3, 65536)  # M_MMAP_THRESHOLD
        except OSError:
            pass
        if os.environ.get(CAP_ENV):
            log("WARNING", f"{CAP_ENV} applies to CUDA only; ignored on the CPU", "trainer.py:85")
    else:
        cap = apply_memory_cap()
        if cap is not None:
            log("INFO", f"CUDA memory cap ({CAP_ENV}): {cap / 2**20:.0f} MiB", "trainer.py:84")
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    log("INFO", f"Loading model ({dims['layers']} layers, d={dims['d_model']}, "
        f"quantization={quant}) on {device}", "trainer.py:88")
    lora_for = lambda name: (rank, alpha) if rank and name in targets else (0, 0)
    model = MiniModel(dims, quant == "int8-quanto", lora_for, mode == "full", gen).to(device)
    model.ckpt = bool(get(cfg, "optimization.enable_gradient_checkpointing", False))
    params = [p for p in model.parameters() if p.requires_grad]
    n_train = sum(p.numel() for p in params)
    n_all = n_train + sum(b.numel() for b in model.buffers()) + \
        sum(p.numel() for p in model.parameters() if not p.requires_grad)
    log("INFO", f"Trainable parameters: {n_train:,} of {n_all:,}", "trainer.py:97")
    if opt_type == "adamw8bit":
        opt = AdamW8bit(params, lr=lr)
    else:
        opt = torch.optim.AdamW(params, lr=lr)

    data = torch.tensor(list(text.encode("utf-8", "replace")), dtype=torch.long)
    seq = dims["seq_len"]
    if data.numel() < seq + 2:
        data = data.repeat(seq // max(1, data.numel()) + 2)
    g2 = torch.Generator().manual_seed(seed + 1)
    use_amp = device == "cuda" and get(cfg, "acceleration.mixed_precision_mode", "bf16") in ("bf16", "fp16")
    amp_dtype = torch.bfloat16 if get(cfg, "acceleration.mixed_precision_mode") == "bf16" else torch.float16

    os.makedirs(out_dir, exist_ok=True)
    start = 0
    resume = get(cfg, "model.load_checkpoint", None)
    if resume:
        start = load_checkpoint(str(resume), model, opt, opt_type, g2)
    oom_at, oom_key, oom_value = parse_oom(os.environ.get(OOM_ENV, ""))
    hold_at = int(os.environ.get(HOLD_ENV, "0") or 0)
    nan_at = int(os.environ.get(NAN_ENV, "0") or 0)
    log("INFO", f"Training for {steps} steps (batch {batch} x accumulation {accum})", "trainer.py:120")
    model.train()
    times = []
    report_every = 20
    for step in range(start + 1, steps + 1):
        if step == oom_at and (oom_key is None or str(get(cfg, oom_key)) == oom_value):
            raise_oom(step)
        t0 = time.time()
        total = 0.0
        for _ in range(accum):
            starts = torch.randint(0, data.numel() - seq - 1, (batch,), generator=g2)
            x = torch.stack([data[s:s + seq] for s in starts]).to(device)
            y = torch.stack([data[s + 1:s + seq + 1] for s in starts]).to(device)
            amp = torch.autocast(device_type="cuda", dtype=amp_dtype) if use_amp else contextlib.nullcontext()
            with amp:
                logits = model(x)
                loss = F.cross_entropy(logits.float().view(-1, 256), y.view(-1)) / accum
            if step == nan_at:
                loss = loss * float("nan")
            loss.backward()
            total += loss.item()
        if not math.isfinite(total):
            log("ERROR", f"Loss is NaN at step {step}: the training diverged", "trainer.py:398")
            return 1
        if max_norm:
            torch.nn.utils.clip_grad_norm_(params, float(max_norm))
        opt.step()
        opt.zero_grad(set_to_none=True)
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.time() - t0)
        lr_now = opt.param_groups[0]["lr"]
        # vramfit's JSON-lines protocol, every step (the Rich lines below come every 20).
        print(json.dumps({"vramfit": {"step": step, "total_steps": steps, "loss": total,
                                      "step_seconds": round(times[-1], 4)}}), flush=True)
        if progress_bars:
            print(f"Loss: {total:.4f} | LR: {lr_now:.2e} | {times[-1]:.2f}s/step", flush=True)
        elif step % report_every == 0:
            recent = times[-report_every:]
            per = sum(recent) / len(recent)
            eta = per * (steps - step) if step >= 2 * report_every else None
            log("INFO", f"Step {step}/{steps} - Loss: {total:.4f}, LR: {lr_now:.2e}, "
                f"Time/Step: {per:.2f}s, Total Time: {fmt_total(eta)}", "trainer.py:412")
        if val_interval and step % int(val_interval) == 0:
            model.eval()
            with torch.no_grad():
                idx = data[:16].view(1, -1).to(device)
                for _ in range(48):
                    nxt = model(idx[:, -seq:])[:, -1].argmax(-1, keepdim=True)
                    idx = torch.cat([idx, nxt], dim=1)
            model.train()
            sample_dir = os.path.join(out_dir, "samples")
            os.makedirs(sample_dir, exist_ok=True)
            sample = bytes(int(b) % 256 for b in idx[0].tolist()).decode("utf-8", "replace")
            with open(os.path.join(sample_dir, f"step_{step:06d}_0.txt"), "w") as f:
                f.write(sample + "\n")
            log("INFO", f"Validation sample written: samples/step_{step:06d}_0.txt", "trainer.py:455")
        if ckpt_interval and step % int(ckpt_interval) == 0:
            ck = os.path.join(out_dir, "checkpoints")
            os.makedirs(ck, exist_ok=True)
            kind = "model" if mode == "full" else "lora"
            save_safetensors(os.path.join(ck, f"{kind}_weights_step_{step:05d}.safetensors"),
                             {n: p for n, p in model.named_parameters() if p.requires_grad})
            state = os.path.join(ck, f"training_state_step_{step:05d}.pt")
            torch.save({"step": step, "optimizer_type": opt_type, "optimizer": opt.state_dict(),
                        "rng": g2.get_state()}, state + ".tmp")
            os.replace(state + ".tmp", state)
            log("INFO", f"Checkpoint saved: checkpoints/{kind}_weights_step_{step:05d}.safetensors",
                "trainer.py:470")
        if step == hold_at:
            log("INFO", f"{HOLD_ENV}: holding at step {step} until ended", "trainer.py:475")
            while True:
                time.sleep(3600)

    elapsed = time.time() - START
    train_time = sum(times) or 1e-9
    if device == "cuda":
        peak = torch.cuda.max_memory_reserved()
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    print("📊 Training Statistics:")
    print(f" - Total time: {elapsed / 60:.1f} minutes")
    print(f" - Training speed: {len(times) / train_time:.2f} steps/second")
    print(f" - Samples/second: {len(times) * batch * accum / train_time:.2f}")
    if device == "cuda":
        print(f" - Peak GPU memory: {peak / 2**30:.2f} GB")
    # vramfit's JSON-lines protocol: the peak of the device trained on (on a
    # CPU: the process's peak resident memory).
    final = {"step": steps, "total_steps": steps, "peak_bytes": int(peak)}
    if device == "cuda":  # the tensors' own peak too (extra keys are ignored by readers)
        final["peak_allocated_bytes"] = int(torch.cuda.max_memory_allocated())
    print(json.dumps({"vramfit": final}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
