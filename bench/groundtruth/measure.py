#!/usr/bin/env python3
# measure.py - measure the GPU memory and step time of transformers models
# built from a config (random weights, no checkpoint) on one CUDA GPU, in the
# record format of ../shared/groundtruth/calibration.jsonl (its README says
# how each field is measured), plus the CUDA context of each run
# (nvidia-smi's per-process figure minus torch.cuda.memory_reserved()).
#
# The configurations below cover what the calibration file lacks: MoE and
# Gemma-2/3 models, fp16 autocast with a GradScaler, 8-bit AdamW and QLoRA
# (only when bitsandbytes imports), LoRA at long sequence, inference with the
# KV cache, eager vs SDPA attention, PYTORCH_CUDA_ALLOC_CONF=
# expandable_segments:True, one deliberate out-of-memory, and one repeat of a
# calibration record (does the calibration reproduce on this machine?).
#
# Every configuration runs in a child process of its own (a fresh CUDA
# context and allocator; the allocator configuration must be set before CUDA
# starts; an OOM cannot poison the next), in its own process group, killed
# on timeout, on SIGINT/SIGTERM and at exit.
#
# Commands (python3 measure.py CMD ...; only `one` and `run` need CUDA):
#   list [--caps FILE]                   the configurations, which would run, why not
#   plan --budget S [--caps FILE]        which fit S seconds, in the order they run
#   configs DIR                          DIR/<id>.config.json + DIR/<id>.args (the
#                                        `vramfit estimate` flags) for each
#   caps                                 what this python can do (JSON)
#   context                              (CUDA) the context of a PyTorch process
#   run --out F.jsonl --budget S [--ids a,b] [--log FILE] [--summary F.json]
#                                        measure, env line first, one record each
#   one SPEC_JSON                        (child) measure one configuration
#   errors MEASURED.jsonl ESTIMATES.json the error table (JSON on stdout)
#   self-test                            checks of the pure-python parts; with
#                                        transformers, a tiny model on the CPU too
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RECORD_TAG = "VRAMFIT_GT_RECORD "
CONTEXT_DEFAULT = 552402944   # calibration.jsonl env.context_used_bytes (H200, torch 2.11)

# --- the configurations -------------------------------------------------------
# Architectures: public config values (the model_type says which class).
ARCHS = {
    "tinyllama-1.1b": {"model_type": "llama", "hidden_size": 2048, "intermediate_size": 5632,
                       "num_hidden_layers": 22, "num_attention_heads": 32,
                       "num_key_value_heads": 4, "vocab_size": 32000,
                       "max_position_embeddings": 2048},
    "llama2-7b": {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
                  "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
                  "vocab_size": 32000, "max_position_embeddings": 4096},
    "llama3.2-1b": {"model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192,
                    "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8,
                    "head_dim": 64, "vocab_size": 128256, "max_position_embeddings": 131072,
                    "rope_theta": 500000.0, "tie_word_embeddings": True},
    "llama3.1-8b": {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
                    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                    "vocab_size": 128256, "max_position_embeddings": 131072,
                    "rope_theta": 500000.0},
    "qwen2.5-0.5b-like": {"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864,
                          "num_hidden_layers": 24, "num_attention_heads": 14,
                          "num_key_value_heads": 2, "vocab_size": 151936,
                          "max_position_embeddings": 4096, "tie_word_embeddings": True},
    # A Mixtral-style MoE scaled down (8 experts, top-2, GQA) so a full
    # fine-tune step takes well under a second.
    "mixtral-mini-8x": {"model_type": "mixtral", "hidden_size": 1024, "intermediate_size": 3584,
                        "num_hidden_layers": 8, "num_attention_heads": 16,
                        "num_key_value_heads": 4, "num_local_experts": 8,
                        "num_experts_per_tok": 2, "vocab_size": 32000,
                        "max_position_embeddings": 4096},
    "gemma-2-2b": {"model_type": "gemma2", "hidden_size": 2304, "intermediate_size": 9216,
                   "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
                   "head_dim": 256, "vocab_size": 256000, "max_position_embeddings": 8192,
                   "sliding_window": 4096, "attn_logit_softcapping": 50.0,
                   "final_logit_softcapping": 30.0, "query_pre_attn_scalar": 256},
    "gemma-3-1b": {"model_type": "gemma3_text", "hidden_size": 1152, "intermediate_size": 6912,
                   "num_hidden_layers": 26, "num_attention_heads": 4, "num_key_value_heads": 1,
                   "head_dim": 256, "vocab_size": 262144, "max_position_embeddings": 32768,
                   "sliding_window": 512, "query_pre_attn_scalar": 256},
}

QV = ["q_proj", "v_proj"]
ALL_LINEAR = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def cfg(id, arch, mode, precision, optimizer, batch, seq, info, covers, grad_ckpt=False,
        lora_r=0, lora_targets=None, attention="sdpa", alloc_conf=None, quant=None,
        needs=(), expect=None, steps=None):
    """One configuration. info: how much it tells (3 = a gap nothing else
    covers, 1 = a variant); covers: the gap, in words; expect: 'oom' when
    the run is meant to fail."""
    return {"id": id, "arch": arch, "mode": mode, "precision": precision,
            "optimizer": optimizer, "batch": batch, "seq": seq, "grad_ckpt": grad_ckpt,
            "lora_r": lora_r, "lora_targets": lora_targets, "attention": attention,
            "alloc_conf": alloc_conf, "quant": quant, "needs": list(needs), "info": info,
            "covers": covers, "expect": expect, "steps": steps}


CONFIGS = [
    cfg("tl-full-amp-b4s2048-gc", "tinyllama-1.1b", "full", "amp", "adamw", 4, 2048, 3,
        "repeat of a calibration record: does the calibration reproduce here?", grad_ckpt=True),
    cfg("tl-full-amp-b4s2048-gc-expseg", "tinyllama-1.1b", "full", "amp", "adamw", 4, 2048, 3,
        "expandable_segments: reserved vs the same run without", grad_ckpt=True,
        alloc_conf="expandable_segments:True"),
    cfg("tl-full-fp16amp-b4s2048-gc", "tinyllama-1.1b", "full", "fp16amp", "adamw", 4, 2048, 3,
        "fp16 autocast with a GradScaler", grad_ckpt=True),
    cfg("mx-full-amp-b4s1024", "mixtral-mini-8x", "full", "amp", "adamw", 4, 1024, 3,
        "MoE (Mixtral-style, 8 experts, top-2): all experts' states, routed activations"),
    cfg("mx-lora16qv-b8s2048", "mixtral-mini-8x", "lora", "bf16", "adamw", 8, 2048, 2,
        "MoE with LoRA on attention", lora_r=16, lora_targets=QV),
    cfg("g3-1b-full-amp-b4s1024", "gemma-3-1b", "full", "amp", "adamw", 4, 1024, 3,
        "Gemma-3: 262k vocabulary logits, sliding-window layers, qk-norm"),
    cfg("g3-1b-full-amp-b4s1024-eager", "gemma-3-1b", "full", "amp", "adamw", 4, 1024, 2,
        "eager vs SDPA on Gemma-3 (s x s score matrices)", attention="eager"),
    cfg("g2-2b-lora16all-b2s2048-gc", "gemma-2-2b", "lora", "bf16", "adamw", 2, 2048, 3,
        "Gemma-2: softcapping, 256k vocabulary, LoRA on all linear layers", grad_ckpt=True,
        lora_r=16, lora_targets=ALL_LINEAR),
    cfg("q05-full-amp-b4s2048", "qwen2.5-0.5b-like", "full", "amp", "adamw", 4, 2048, 2,
        "SDPA half of an eager/SDPA pair"),
    cfg("q05-full-amp-b4s2048-eager", "qwen2.5-0.5b-like", "full", "amp", "adamw", 4, 2048, 3,
        "eager attention: s x s scores per layer, kept for backward"),
    cfg("l32-1b-lora16qv-b1s16384-gc", "llama3.2-1b", "lora", "bf16", "adamw", 1, 16384, 3,
        "LoRA at long sequence (16k): logits and checkpointed activations", grad_ckpt=True,
        lora_r=16, lora_targets=QV),
    cfg("l32-1b-lora16qv-b1s32768-gc", "llama3.2-1b", "lora", "bf16", "adamw", 1, 32768, 2,
        "LoRA at long sequence (32k)", grad_ckpt=True, lora_r=16, lora_targets=QV),
    cfg("l31-8b-infer-b4s8192", "llama3.1-8b", "infer", "bf16", "none", 4, 8192, 3,
        "inference with the KV cache, GQA, 128k vocabulary"),
    cfg("g2-2b-infer-b8s4096", "gemma-2-2b", "infer", "bf16", "none", 8, 4096, 2,
        "inference with Gemma-2's hybrid (sliding-window) cache"),
    cfg("tl-full-amp-b4s2048-gc-adamw8bit", "tinyllama-1.1b", "full", "amp", "adamw8bit", 4, 2048,
        3, "8-bit AdamW (bitsandbytes)", grad_ckpt=True, needs=["bitsandbytes"]),
    cfg("l7-qlora16qv-b4s2048-gc", "llama2-7b", "lora", "bf16", "adamw", 4, 2048, 3,
        "QLoRA: NF4 base (bitsandbytes), LoRA r16 on q,v", grad_ckpt=True, lora_r=16,
        lora_targets=QV, quant="nf4", needs=["bitsandbytes"]),
    cfg("l7-full-amp-b4s4096-oom", "llama2-7b", "full", "amp", "adamw", 4, 4096, 2,
        "a real out-of-memory: 16 bytes/param of states alone exceed the card", expect="oom",
        steps=2),
]

# --- pure-python parts: sizes, costs, selection, plan ----------------------------


def arch_of(c):
    return ARCHS[c["arch"]]


def param_count(a):
    """Parameters of a decoder-only transformer from its config (embeddings
    tied or not; norms and biases left out: under 0.1 %)."""
    h, layers, v = a["hidden_size"], a["num_hidden_layers"], a["vocab_size"]
    heads = a["num_attention_heads"]
    hd = a.get("head_dim") or h // heads
    kv = a.get("num_key_value_heads", heads)
    attn = h * heads * hd * 2 + h * kv * hd * 2
    experts = a.get("num_local_experts", 0) or 1
    mlp = 3 * h * a["intermediate_size"] * experts
    embed = v * h * (1 if a.get("tie_word_embeddings") else 2)
    return layers * (attn + mlp) + embed


def active_params(a):
    """Parameters one token passes through (MoE: top-k experts)."""
    experts = a.get("num_local_experts", 0)
    if not experts:
        return param_count(a)
    per_expert = 3 * a["hidden_size"] * a["intermediate_size"]
    return param_count(a) - a["num_hidden_layers"] * per_expert * (experts - a["num_experts_per_tok"])


def default_steps(c):
    """The calibration's rule: 6 steps for models over 0.5 B parameters, 10
    otherwise; an inference 'step' is one forward."""
    if c.get("steps"):
        return c["steps"]
    return 6 if param_count(arch_of(c)) > 5e8 else 10


EFFECTIVE_FLOPS = 2.5e14   # planning rate: about a third of the H200's measured bf16 rate
STEP_OVERHEAD_S = 0.05     # launches, optimizer, Python per step
STARTUP_S = 12.0           # python + torch + transformers import, CUDA start (first guess)


def flops_per_step(c):
    """(dense, attention) FLOPs of one step."""
    a = arch_of(c)
    tokens = c["batch"] * c["seq"]
    n = active_params(a)
    heads = a["num_attention_heads"]
    width = heads * (a.get("head_dim") or a["hidden_size"] // heads)
    attn = 4 * a["num_hidden_layers"] * tokens * c["seq"] * width / 2   # causal: half
    if c["mode"] == "infer":
        return 2 * n * tokens, attn
    mult = 6 if c["mode"] == "full" else 4          # LoRA: no weight gradients
    if c["grad_ckpt"]:
        mult += 2                                   # the forward again
    return mult * n * tokens, (mult / 2) * attn


def estimate_seconds(c, startup=STARTUP_S):
    """Planning cost of one configuration: start-up, building the model on
    the GPU (about 1 s per billion parameters), its steps, and an
    out-of-memory ends at step 1."""
    steps = 1 if c.get("expect") == "oom" else default_steps(c)
    dense, attn = flops_per_step(c)
    attn_rate = EFFECTIVE_FLOPS / (4 if c["attention"] == "eager" else 1)  # eager: unfused
    step = dense / EFFECTIVE_FLOPS + attn / attn_rate + STEP_OVERHEAD_S
    if c.get("quant") == "nf4":
        step *= 2                                   # dequantisation in every matmul
    return startup + param_count(arch_of(c)) / 1e9 + steps * step


def select(configs, caps):
    """(runnable, skipped): skipped as (config, reason) for what this
    machine lacks."""
    run, skip = [], []
    for c in configs:
        missing = [n for n in c["needs"] if not caps.get(n)]
        if missing:
            why = "; ".join(f"{n} does not import ({caps.get(n + '_error') or 'not installed'})"
                            for n in missing)
            skip.append((c, why))
        elif not caps.get("transformers"):
            skip.append((c, f"transformers does not import ({caps.get('transformers_error') or 'not installed'})"))
        elif c["mode"] == "lora" and not caps.get("peft"):
            skip.append((c, f"peft does not import ({caps.get('peft_error') or 'not installed'})"))
        else:
            run.append(c)
    return run, skip


def order(configs, startup=STARTUP_S):
    """Most information per second first; ties: the cheaper first."""
    return sorted(configs, key=lambda c: (-c["info"] / estimate_seconds(c, startup),
                                          estimate_seconds(c, startup), c["id"]))


SAFETY = 1.3   # a configuration starts only when remaining >= SAFETY x its cost


def plan(configs, budget, startup=STARTUP_S, scale=1.0):
    """The configurations that fit the budget, in running order, each with
    its planned cost; and those left out. A configuration is taken when the
    time left covers SAFETY x its cost; a dearer one left out does not stop
    a cheaper one after it."""
    left, taken, dropped = float(budget), [], []
    for c in order(configs, startup):
        cost = estimate_seconds(c, startup) * scale
        if cost * SAFETY <= left:
            taken.append((c, cost))
            left -= cost
        else:
            dropped.append((c, cost))
    return taken, dropped


def hf_config_dict(c):
    """The config.json of the configuration (what `vramfit estimate` reads
    and what transformers builds)."""
    a = dict(arch_of(c))
    a["architectures"] = [{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM",
                           "mixtral": "MixtralForCausalLM", "gemma2": "Gemma2ForCausalLM",
                           "gemma3_text": "Gemma3ForCausalLM"}[a["model_type"]]]
    return a


def estimate_args(c):
    """`vramfit estimate` flags for the configuration."""
    prec = {"amp": "amp", "bf16": "bf16", "fp16amp": "fp16", "fp32": "fp32"}[c["precision"]]
    args = ["--mode", c["mode"], "--precision", prec, "--batch", str(c["batch"]),
            "--seq", str(c["seq"]), "--attention", c["attention"]]
    if c["mode"] != "infer":
        args += ["--optimizer", c["optimizer"]]
        args += ["--grad-ckpt"] if c["grad_ckpt"] else ["--no-grad-ckpt"]
    if c["mode"] == "lora":
        args += ["--lora-rank", str(c["lora_r"]), "--lora-targets", ",".join(c["lora_targets"])]
    if c.get("quant"):
        args += ["--quant", c["quant"]]
    return args


def record_base(c):
    """The descriptive fields of a record, as calibration.jsonl names them."""
    a = {k: v for k, v in arch_of(c).items() if k != "model_type"}
    a["model_type"] = arch_of(c)["model_type"]
    r = {"id": c["id"], "status": None, "arch": c["arch"], "arch_cfg": a,
         "attention": c["attention"], "mode": c["mode"], "precision": c["precision"],
         "optimizer": c["optimizer"], "batch": c["batch"], "seq": c["seq"],
         "grad_ckpt": c["grad_ckpt"], "lora_r": c["lora_r"], "lora_targets": c["lora_targets"]}
    if c.get("quant"):
        r["quant"] = c["quant"]
    if c.get("alloc_conf"):
        r["alloc_conf"] = c["alloc_conf"]
    return r


def parse_smi_apps(text):
    """nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits
    -> {pid: MiB}; rows it cannot read ([N/A], junk) are left out."""
    out = {}
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 2:
            continue
        try:
            out[int(parts[0])] = int(parts[1])
        except ValueError:
            continue
    return out


def rel_err(pred, meas):
    if pred is None or meas is None or meas <= 0:
        return None
    return pred / meas - 1


def error_table(records, estimates):
    """Measured records x `vramfit estimate` output -> rows and a summary.
    estimates: {id: {"peak_allocated_bytes", "peak_bytes", "step_seconds",
    "fits"}}. The peak on the device is the record's own context (else the
    calibration's) plus peak_reserved."""
    rows, errs = [], {"alloc": [], "peak": [], "step": []}
    for r in records:
        e = estimates.get(r["id"])
        if e is None:
            continue
        ctx = r.get("context_bytes") or CONTEXT_DEFAULT
        meas_peak = ctx + r["peak_reserved"] if r.get("peak_reserved") is not None else None
        row = {"id": r["id"], "status": r["status"], "covers": r.get("covers"),
               "peak_alloc": r.get("peak_alloc"), "pred_alloc": e.get("peak_allocated_bytes"),
               "peak_device": meas_peak, "pred_peak": e.get("peak_bytes"),
               "step_s": r.get("step_median_s"), "pred_step_s": e.get("step_seconds"),
               "pred_fits": e.get("fits")}
        if r["status"] == "ok":
            row["err_alloc"] = rel_err(row["pred_alloc"], row["peak_alloc"])
            row["err_peak"] = rel_err(row["pred_peak"], meas_peak)
            row["err_step"] = rel_err(row["pred_step_s"], row["step_s"])
            for k in ("alloc", "peak", "step"):
                if row["err_" + k] is not None:
                    errs[k].append(abs(row["err_" + k]))
        else:   # an OOM: right when the estimate says it does not fit
            row["oom_predicted"] = e.get("fits") is False
        rows.append(row)
    summary = {}
    for k, v in errs.items():
        summary[k] = {"n": len(v), "median_abs": statistics.median(v) if v else None,
                      "max_abs": max(v) if v else None}
    ooms = [w for w in rows if w["status"] == "oom"]
    summary["oom"] = {"n": len(ooms), "predicted": sum(1 for w in ooms if w["oom_predicted"])}
    return {"rows": rows, "summary": summary}


# --- capabilities (a child, so the parent never touches CUDA) ----------------------

CAPS_CODE = r"""
import json, sys
caps = {"python": sys.version.split()[0], "executable": sys.executable}
def probe(name):
    try:
        m = __import__(name)
        caps[name] = getattr(m, "__version__", "yes")
    except Exception as e:
        caps[name] = None
        caps[name + "_error"] = f"{type(e).__name__}: {e}"[:200]
for n in ("torch", "transformers", "peft", "bitsandbytes"):
    probe(n)
if caps["torch"]:
    import torch
    caps["cuda"] = torch.cuda.is_available()
    caps["cuda_version"] = torch.version.cuda
    if caps["cuda"]:
        caps["gpu"] = torch.cuda.get_device_name(0)
print(json.dumps(caps))
"""


def caps_here(python=sys.executable, timeout=120):
    p = subprocess.run([python, "-c", CAPS_CODE], capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"capability probe failed: {p.stderr.strip()[-300:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


# --- the child: one configuration on the GPU -------------------------------------


def smi_used_by_pid(pid):
    """MiB nvidia-smi lists for pid, or None (no nvidia-smi, or another PID
    namespace)."""
    try:
        p = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                            "--format=csv,noheader,nounits"], capture_output=True, text=True,
                           timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_smi_apps(p.stdout).get(pid) if p.returncode == 0 else None


def build_model(c, torch, transformers, device="cuda"):
    """The model on the device with random weights (no checkpoint), in the
    record's parameter dtype and attention implementation."""
    a = dict(c.get("arch_cfg") or arch_of(c))
    mt = a.pop("model_type")
    hf = transformers.AutoConfig.for_model(mt, **a)
    hf.use_cache = c["mode"] == "infer"
    dtype = torch.float32 if c["precision"] in ("amp", "fp16amp", "fp32") else torch.bfloat16
    if c["mode"] != "full":
        dtype = torch.bfloat16   # LoRA and inference: a bf16 base
    if device != "cuda":
        dtype = torch.float32    # the CPU self-test
    cls = transformers.AutoModelForCausalLM
    with torch.device(device):
        try:
            model = cls.from_config(hf, dtype=dtype, attn_implementation=c["attention"])
        except TypeError:   # transformers before 4.56 names it torch_dtype
            model = cls.from_config(hf, torch_dtype=dtype, attn_implementation=c["attention"])
    where = {p.device.type for p in model.parameters()}
    if where == {"meta"} or "meta" in where:
        raise RuntimeError("transformers built the model on the meta device: no weights to measure")
    if where != {device}:
        model.to(device)
    model.to(dtype)
    if c.get("quant") == "nf4":
        quantize_nf4(model, torch)
    if c["grad_ckpt"]:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if c["mode"] == "lora":
        import peft
        lc = peft.LoraConfig(r=c["lora_r"], lora_alpha=c["lora_r"], lora_dropout=0.0,
                             target_modules=c["lora_targets"], bias="none", task_type="CAUSAL_LM")
        model = peft.get_peft_model(model, lc)
    if c["mode"] == "infer":
        model.eval()
    else:
        model.train()
    return model


def quantize_nf4(model, torch):
    """QLoRA's base: every linear layer of the decoder (not the LM head) as a
    bitsandbytes NF4 Linear4bit with bf16 compute, one layer at a time."""
    import bitsandbytes as bnb
    for name, mod in list(model.named_modules()):
        for child_name, child in list(mod.named_children()):
            if not isinstance(child, torch.nn.Linear) or child_name == "lm_head":
                continue
            q = bnb.nn.Linear4bit(child.in_features, child.out_features, bias=child.bias is not None,
                                  compute_dtype=torch.bfloat16, quant_type="nf4")
            # moving a Params4bit to CUDA quantizes it (the bf16 copy is freed)
            q.weight = bnb.nn.Params4bit(child.weight.data, requires_grad=False, quant_type="nf4")
            if child.bias is not None:
                q.bias = torch.nn.Parameter(child.bias.data, requires_grad=False)
            setattr(mod, child_name, q.to("cuda"))
            del child
    torch.cuda.empty_cache()


def make_optimizer(c, params, torch):
    o = c["optimizer"]
    if o == "adamw":
        return torch.optim.AdamW(params, lr=1e-4)
    if o == "adamw-fused":
        return torch.optim.AdamW(params, lr=1e-4, fused=True)
    if o == "adamw-for":
        return torch.optim.AdamW(params, lr=1e-4, foreach=False)
    if o == "adamw8bit":
        import bitsandbytes as bnb
        return bnb.optim.AdamW8bit(params, lr=1e-4)
    if o == "sgd":
        return torch.optim.SGD(params, lr=1e-4, momentum=0.9)
    raise ValueError(f"optimizer {o!r}: not one this script runs")


def sync(torch, device):
    if device == "cuda":
        torch.cuda.synchronize()


def grad_scaler(torch):
    """fp16 autocast's loss scaler (torch.amp since 2.3, torch.cuda.amp before)."""
    amp = getattr(torch, "amp", None)
    if amp is not None and hasattr(amp, "GradScaler"):
        return amp.GradScaler("cuda")
    return torch.cuda.amp.GradScaler()


def train_steps(c, model, torch, x, steps, times, device="cuda"):
    """forward, backward, optimizer step, zero_grad(set_to_none) x steps,
    each timed between synchronisations; returns the optimizer. Autocast
    and the GradScaler on CUDA only (the CPU self-test runs fp32)."""
    params = [p for p in model.parameters() if p.requires_grad]
    opt = make_optimizer(c, params, torch)
    amp_dtype = {"amp": torch.bfloat16, "bf16": torch.bfloat16, "fp16amp": torch.float16}.get(c["precision"])
    if device != "cuda":
        amp_dtype = None
    scaler = grad_scaler(torch) if c["precision"] == "fp16amp" and device == "cuda" else None
    for _ in range(steps):
        sync(torch, device)
        t0 = time.perf_counter()
        if amp_dtype is not None:
            with torch.autocast(device, dtype=amp_dtype):
                loss = model(input_ids=x, labels=x).loss
        else:
            loss = model(input_ids=x, labels=x).loss
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        opt.zero_grad(set_to_none=True)
        del loss
        sync(torch, device)
        times.append(time.perf_counter() - t0)
    return opt


def infer_steps(model, torch, x, steps, times, device="cuda"):
    """One forward over the whole sequence with the KV cache, x steps."""
    with torch.no_grad():
        for _ in range(steps):
            sync(torch, device)
            t0 = time.perf_counter()
            if device == "cuda":
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    out = model(input_ids=x, use_cache=True)
            else:
                out = model(input_ids=x, use_cache=True)
            del out
            sync(torch, device)
            times.append(time.perf_counter() - t0)


def is_oom(torch, e):
    """A CUDA out-of-memory, whichever way PyTorch raised it."""
    kinds = tuple(k for k in (getattr(torch, "OutOfMemoryError", None),
                              getattr(torch.cuda, "OutOfMemoryError", None)) if k)
    return isinstance(e, kinds) or (isinstance(e, RuntimeError) and "out of memory" in str(e))


def measure_one(c):
    """Measure one configuration on cuda:0; the record (status ok or oom)."""
    t_start = time.time()
    import torch
    import transformers
    torch.manual_seed(0)
    torch.cuda.init()
    r = record_base(c)
    r["covers"] = c["covers"]
    phase, times, model, opt = "build", [], None, None
    steps = default_steps(c)
    try:
        model = build_model(c, torch, transformers)
        torch.cuda.synchronize()
        r["n_params"] = sum(p.numel() for p in model.parameters())
        trainable = [p for p in model.parameters() if p.requires_grad]
        r["trainable_params"] = sum(p.numel() for p in trainable) if c["mode"] != "infer" else 0
        r["trainable_dtypes"] = sorted({str(p.dtype) for p in trainable}) if c["mode"] != "infer" else []
        r["weights_bytes"] = torch.cuda.memory_allocated()
        r["build_s"] = round(time.time() - t_start, 2)
        vocab = arch_of(c)["vocab_size"]
        x = torch.randint(0, vocab, (c["batch"], c["seq"]), device="cuda")
        torch.cuda.reset_peak_memory_stats()
        phase = "steps"
        if c["mode"] == "infer":
            infer_steps(model, torch, x, steps, times)
        else:
            opt = train_steps(c, model, torch, x, steps, times)
        r["status"] = "ok"
    except RuntimeError as e:   # torch's OutOfMemoryError is a RuntimeError
        if not is_oom(torch, e):
            raise
        r["status"] = "oom"
        r["oom_phase"] = f"{phase} (after {len(times)} of {steps} steps)" if phase == "steps" else phase
        r["oom_message"] = str(e).splitlines()[0][:300]
    r["peak_alloc"] = torch.cuda.max_memory_allocated()
    r["peak_reserved"] = torch.cuda.max_memory_reserved()
    r["alloc_after_steps"] = torch.cuda.memory_allocated()
    used = smi_used_by_pid(os.getpid())
    if used is not None:
        r["smi_used_bytes"] = used << 20
        r["context_bytes"] = (used << 20) - torch.cuda.memory_reserved()
    r["steps"] = len(times)
    r["step_times_s"] = [round(t, 5) for t in times]
    if r["status"] == "ok":
        timed = times[1:] if len(times) > 1 else times   # step 1 is the warm-up
        r["step_median_s"] = statistics.median(timed)
        r["tokens_per_s"] = c["batch"] * c["seq"] / r["step_median_s"]
    if opt is not None:
        d = opt.defaults
        r["opt_defaults"] = {"foreach": str(d.get("foreach")), "fused": str(d.get("fused"))}
    r["wall_s"] = round(time.time() - t_start, 2)
    del model, opt
    return r


def measure_context():
    """The CUDA context of a PyTorch process: nvidia-smi's figure for this
    process holding one small tensor, minus what the caching allocator
    reserved."""
    import torch
    torch.cuda.init()
    x = torch.ones(1, device="cuda")
    torch.cuda.synchronize()
    used = smi_used_by_pid(os.getpid())
    out = {"reserved_bytes": torch.cuda.memory_reserved(), "torch": torch.__version__}
    if used is not None:
        out["smi_used_bytes"] = used << 20
        out["context_bytes"] = (used << 20) - out["reserved_bytes"]
    free, total = torch.cuda.mem_get_info()
    out["device_used_bytes"] = total - free
    del x
    return out


# --- the parent: plan, run children, write records --------------------------------

_current = {"proc": None}


def kill_group(proc, grace=5.0):
    """SIGTERM to the child's whole process group, SIGKILL after grace."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def on_signal(sig, _frame):
    kill_group(_current["proc"], grace=2.0)
    sys.exit(128 + sig)


def die_with_parent():
    """(child) SIGKILL when the parent dies, even by SIGKILL: a run never
    outlives the measurement that started it, holding the GPU."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:   # the parent was already gone
        os._exit(1)


def run_child(c, timeout, log):
    """Run `one` for c in its own process group; (record or None, note, wall)."""
    env = dict(os.environ)
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    if c.get("alloc_conf"):
        env["PYTORCH_CUDA_ALLOC_CONF"] = c["alloc_conf"]
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    t0 = time.time()
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "one", json.dumps(c)],
                            stdout=subprocess.PIPE, stderr=log, text=True, env=env,
                            start_new_session=True)
    _current["proc"] = proc
    try:
        out, _ = proc.communicate(timeout=timeout)
        note = None if proc.returncode == 0 else f"exit {proc.returncode}"
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, _ = proc.communicate()
        note = f"killed after {timeout:.0f} s (timeout)"
    finally:
        kill_group(proc)   # whatever it left in its group
        _current["proc"] = None
    rec = None
    for line in (out or "").splitlines():
        if line.startswith(RECORD_TAG):
            rec = json.loads(line[len(RECORD_TAG):])
    return rec, note, time.time() - t0


def env_record(caps):
    """The first line: GPU, driver, versions, the calibration's context for
    reference."""
    e = {"gpu": caps.get("gpu"), "torch": caps.get("torch"), "transformers": caps.get("transformers"),
         "peft": caps.get("peft"), "bitsandbytes": caps.get("bitsandbytes"),
         "cuda": caps.get("cuda_version"), "python": caps.get("python"),
         "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
         "script": "bench/groundtruth/measure.py"}
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,mig.mode.current",
                            "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=15)
        if p.returncode == 0 and p.stdout.strip():
            name, drv, total, mig = [s.strip() for s in p.stdout.splitlines()[0].split(",")][:4]
            e.update({"nvml_name": name, "driver": drv, "nvml_total_mib": int(total), "mig": mig})
    except (OSError, subprocess.TimeoutExpired, ValueError):
        pass
    return {"env": e}


def cmd_run(args):
    out_path, budget = args["out"], float(args["budget"])
    deadline = time.time() + budget
    caps = caps_here()
    summary = {"budget_s": budget, "measured": [], "failed": [], "skipped": [], "not_started": []}
    if not caps.get("cuda"):
        raise SystemExit(f"measure.py run: no CUDA device ({caps.get('torch_error') or 'torch.cuda.is_available() is False'})")
    configs = CONFIGS
    if args.get("ids"):
        want = set(args["ids"].split(","))
        configs = [c for c in CONFIGS if c["id"] in want]
    runnable, skipped = select(configs, caps)
    summary["skipped"] = [{"id": c["id"], "reason": why} for c, why in skipped]
    startup, ratios = STARTUP_S, []
    log = open(args.get("log") or os.devnull, "a")
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        f.write(json.dumps(env_record(caps)) + "\n")
        pending = order(runnable, startup)
        while pending:
            left = deadline - time.time()
            scale = max(1.0, statistics.median(ratios)) if ratios else 1.0
            fits = [c for c in pending if estimate_seconds(c, startup) * scale * SAFETY <= left]
            if not fits:
                break
            c = order(fits, startup)[0]
            pending.remove(c)
            est = estimate_seconds(c, startup) * scale
            log.write(f"== {c['id']}: planned {est:.0f} s, {left:.0f} s left\n")
            log.flush()
            rec, note, wall = run_child(c, min(left, max(60.0, 3 * est)), log)
            ratios.append(wall / estimate_seconds(c, startup))
            if rec is not None and rec.get("build_s"):
                startup = max(3.0, rec["build_s"] - param_count(arch_of(c)) / 1e9)
            if rec is None:
                summary["failed"].append({"id": c["id"], "reason": note or "no record printed",
                                          "wall_s": round(wall, 1)})
                continue
            rec["planned_s"] = round(est, 1)
            f.write(json.dumps(rec) + "\n")
            f.flush()
            summary["measured"].append({"id": c["id"], "status": rec["status"],
                                        "expected": c.get("expect") or "ok",
                                        "wall_s": round(wall, 1), "planned_s": round(est, 1)})
        summary["not_started"] = [{"id": c["id"], "planned_s": round(estimate_seconds(c, startup), 1),
                                   "reason": "the time left would not cover it"} for c in pending]
    os.replace(tmp, out_path)
    summary["env"] = env_record(caps)["env"]
    if args.get("summary"):
        with open(args["summary"] + ".tmp", "w") as s:
            json.dump(summary, s, indent=1)
        os.replace(args["summary"] + ".tmp", args["summary"])
    print(json.dumps(summary))


# --- self-test (CPU) -------------------------------------------------------------


class Checks:
    def __init__(self):
        self.passed, self.failed, self.skipped = 0, [], []

    def ok(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failed.append(what)

    def skip(self, what, why):
        self.skipped.append(f"{what}: {why}")


def test_sizes(t, calibration):
    """param_count against the n_params measured in calibration.jsonl (the
    llama/qwen records: same formula, norms left out, so within 0.5 %)."""
    ids = {c["id"] for c in CONFIGS}
    t.ok(len(ids) == len(CONFIGS), "configuration ids are unique")
    t.ok(all(c["arch"] in ARCHS for c in CONFIGS), "every configuration names a known architecture")
    n = 0
    for rec in calibration:
        a = rec.get("arch_cfg") or {}
        if "hidden_size" not in a or rec.get("arch", "").startswith(("gpt", "gemma", "t5")):
            continue
        a = dict(a)
        a.setdefault("num_key_value_heads", a["num_attention_heads"])
        err = abs(param_count(a) / rec["n_params"] - 1)
        t.ok(err < 0.005, f"param_count {rec['id']}: {param_count(a)} vs measured {rec['n_params']}")
        n += 1
    if calibration:
        t.ok(n >= 5, f"param_count compared with {n} calibration records")
    else:
        t.skip("param_count vs calibration.jsonl", "file not found (VF_SHARED_DIR)")
    mx = ARCHS["mixtral-mini-8x"]
    t.ok(active_params(mx) < param_count(mx) / 2, "MoE: top-2 of 8 experts is under half the weights")
    t.ok(active_params(ARCHS["tinyllama-1.1b"]) == param_count(ARCHS["tinyllama-1.1b"]), "dense: active = all")


def test_selection_and_plan(t):
    full = {"torch": "2.11", "transformers": "5.17", "peft": "0.21", "bitsandbytes": "0.45", "cuda": True}
    run, skip = select(CONFIGS, full)
    t.ok(len(run) == len(CONFIGS) and not skip, "everything runs when everything imports")
    nobnb = dict(full, bitsandbytes=None, bitsandbytes_error="ModuleNotFoundError: No module named 'bitsandbytes'")
    run, skip = select(CONFIGS, nobnb)
    t.ok(sorted(c["id"] for c, _ in skip) == sorted(c["id"] for c in CONFIGS if "bitsandbytes" in c["needs"]),
         "without bitsandbytes exactly the 8-bit AdamW and QLoRA runs are skipped")
    t.ok(all("bitsandbytes does not import (ModuleNotFoundError" in why for _, why in skip),
         "the skip reason names bitsandbytes and the import error")
    run, skip = select(CONFIGS, dict(full, peft=None))
    t.ok(all(c["mode"] == "lora" for c, _ in skip) and not any(c["mode"] == "lora" for c in run),
         "without peft the LoRA runs are skipped")
    run, skip = select(CONFIGS, {"transformers": None, "transformers_error": "ModuleNotFoundError"})
    t.ok(not run and len(skip) == len(CONFIGS), "without transformers nothing runs")
    run, _ = select(CONFIGS, nobnb)
    for budget in (0, 30, 120, 300, 420, 10000):
        taken, dropped = plan(run, budget)
        total = sum(cost for _, cost in taken)
        t.ok(total <= budget, f"plan({budget}): planned {total:.0f} s within the budget")
        t.ok(len(taken) + len(dropped) == len(run), f"plan({budget}): every configuration accounted for")
        t.ok(all(cost * SAFETY > budget - sum(c2 for _, c2 in taken) for _, cost in dropped)
             or not dropped, f"plan({budget}): nothing left out that would still fit")
    taken, _ = plan(run, 0)
    t.ok(taken == [], "plan(0) starts nothing")
    taken, _ = plan(run, 10000)
    t.ok(len(taken) == len(run), "a large budget takes everything")
    o = order(run)
    ratios = [c["info"] / estimate_seconds(c) for c in o]
    t.ok(ratios == sorted(ratios, reverse=True), "order: most information per second first")
    t.ok(all(estimate_seconds(c) < 120 for c in run), "every configuration plans under 2 minutes on an H200")
    oom = next(c for c in CONFIGS if c.get("expect") == "oom")
    t.ok(estimate_seconds(oom) < estimate_seconds(dict(oom, expect=None)), "an expected OOM plans one step")
    t.ok(plan(run, 100, scale=2.0)[0] != plan(run, 100)[0] or len(plan(run, 100)[0]) == 0,
         "a slower machine (scale 2) plans fewer runs")


def test_records_and_errors(t):
    fields = {"id", "status", "arch", "arch_cfg", "mode", "precision", "optimizer", "batch", "seq",
              "grad_ckpt", "lora_r", "lora_targets", "attention"}
    for c in CONFIGS:
        r = record_base(c)
        t.ok(fields <= set(r), f"{c['id']}: record has the calibration fields")
        t.ok(r["arch_cfg"]["model_type"] == arch_of(c)["model_type"], f"{c['id']}: model_type kept")
        a = estimate_args(c)
        t.ok(a[a.index("--mode") + 1] == c["mode"] and ("--optimizer" in a) == (c["mode"] != "infer"),
             f"{c['id']}: estimate flags")
        h = hf_config_dict(c)
        t.ok(h["model_type"] and h["architectures"][0].endswith("ForCausalLM"), f"{c['id']}: config.json")
    t.ok(estimate_args(next(c for c in CONFIGS if c["precision"] == "fp16amp"))[3] == "fp16",
         "fp16amp is --precision fp16")
    apps = parse_smi_apps("1234, 4096\n77, [N/A]\njunk\n\n5, 10\n")
    t.ok(apps == {1234: 4096, 5: 10}, "nvidia-smi compute-apps rows, [N/A] left out")
    recs = [{"id": "a", "status": "ok", "peak_alloc": 100, "peak_reserved": 200, "context_bytes": 50,
             "step_median_s": 2.0},
            {"id": "b", "status": "oom", "peak_alloc": 900, "peak_reserved": 950},
            {"id": "c", "status": "ok", "peak_alloc": 100, "peak_reserved": 100}]
    est = {"a": {"peak_allocated_bytes": 110, "peak_bytes": 225, "step_seconds": 1.0, "fits": True},
           "b": {"peak_allocated_bytes": 2000, "peak_bytes": 3000, "step_seconds": 1.0, "fits": False}}
    tab = error_table(recs, est)
    row = tab["rows"][0]
    t.ok(abs(row["err_alloc"] - 0.1) < 1e-9 and abs(row["err_peak"] + 0.1) < 1e-9 and
         abs(row["err_step"] + 0.5) < 1e-9, "error table: signed relative errors, own context")
    t.ok(len(tab["rows"]) == 2, "error table: records without an estimate are left out")
    t.ok(tab["summary"]["oom"] == {"n": 1, "predicted": 1}, "error table: an OOM the estimate predicts")
    t.ok(tab["summary"]["peak"]["n"] == 1 and abs(tab["summary"]["peak"]["max_abs"] - 0.1) < 1e-9,
         "error table: summary of |errors|")


class TinyLM:
    """A stand-in with the transformers call signature (input_ids, labels ->
    .loss), for the training loop's own test without transformers."""

    @staticmethod
    def make(torch):
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = torch.nn.Embedding(64, 16)
                self.out = torch.nn.Linear(16, 64)

            def forward(self, input_ids, labels=None, use_cache=None):
                logits = self.out(self.emb(input_ids))
                loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 64),
                                                         labels[:, 1:].reshape(-1)) if labels is not None else None
                return type("Out", (), {"loss": loss, "logits": logits})()
        return M()


def test_torch_loop(t):
    try:
        import torch
    except ImportError as e:
        t.skip("training loop on the CPU", f"torch does not import ({e})")
        return
    torch.manual_seed(0)
    m = TinyLM.make(torch)
    before = m.out.weight.detach().clone()
    x = torch.randint(0, 64, (2, 8))
    times = []
    c = dict(CONFIGS[0], precision="fp32", optimizer="adamw")
    opt = train_steps(c, m, torch, x, 3, times, device="cpu")
    t.ok(len(times) == 3 and all(s > 0 for s in times), "training loop: 3 timed steps")
    t.ok(not torch.equal(before, m.out.weight), "training loop: the optimizer updated the weights")
    t.ok(all(p.grad is None for p in m.parameters()), "training loop: gradients set to None after each step")
    t.ok(type(opt).__name__ == "AdamW", "training loop: torch.optim.AdamW")
    times = []
    infer_steps(m, torch, x, 2, times, device="cpu")
    t.ok(len(times) == 2, "inference loop: 2 timed forwards")
    t.ok(is_oom(torch, RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")) and
         not is_oom(torch, RuntimeError("shape mismatch")), "OOM recognised by type or message")


def test_transformers_tiny(t):
    """A tiny llama through build_model and the loop on the CPU (full and,
    with peft, LoRA): the code the GPU runs, minus CUDA."""
    try:
        import torch
        import transformers
    except ImportError as e:
        t.skip("tiny transformers model on the CPU", f"transformers does not import ({e})")
        return
    tiny = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 256,
            "max_position_embeddings": 64}
    modes = [("full", "fp32", 0, None)]
    try:
        import peft  # noqa: F401
        modes.append(("lora", "bf16", 4, QV))
    except ImportError as e:
        t.skip("tiny LoRA on the CPU", f"peft does not import ({e})")
    for mode, prec, r, targets in modes:
        c = dict(CONFIGS[0], arch_cfg=tiny, mode=mode, precision=prec, lora_r=r, lora_targets=targets,
                 grad_ckpt=True, batch=2, seq=16)
        model = build_model(c, torch, transformers, device="cpu")
        x = torch.randint(0, 256, (2, 16))
        times = []
        train_steps(c, model, torch, x, 2, times, device="cpu")
        t.ok(len(times) == 2, f"tiny llama {mode}: 2 training steps on the CPU")
        n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)
        t.ok((n_train < sum(p.numel() for p in model.parameters())) == (mode == "lora"),
             f"tiny llama {mode}: trainable parameters")


def self_test(opts):
    t = Checks()
    cal_path = opts.get("calibration") or os.path.join(
        os.environ.get("VF_SHARED_DIR", os.path.join(HERE, "..", "..", "..", "shared")),
        "groundtruth", "calibration.jsonl")
    calibration = []
    if os.path.exists(cal_path):
        with open(cal_path) as f:
            calibration = [json.loads(line) for line in f if line.strip() and '"env"' not in line[:8]]
    test_sizes(t, calibration)
    test_selection_and_plan(t)
    test_records_and_errors(t)
    test_torch_loop(t)
    test_transformers_tiny(t)
    for f in t.failed:
        print(f"FAIL {f}", file=sys.stderr)
    for s in t.skipped:
        print(f"skipped: {s}", file=sys.stderr)
    print(json.dumps({"passed": t.passed, "failed": len(t.failed), "skipped": t.skipped,
                      "failures": t.failed}))
    return 1 if t.failed else 0


# --- commands ------------------------------------------------------------------------


def parse_opts(argv):
    opts, rest = {}, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("--") and i + 1 < len(argv):
            opts[a[2:]] = argv[i + 1]
            i += 2
        else:
            rest.append(a)
            i += 1
    return opts, rest


def load_caps(opts):
    if opts.get("caps"):
        with open(opts["caps"]) as f:
            return json.load(f)
    return caps_here()


def cmd_configs(d):
    os.makedirs(d, exist_ok=True)
    for c in CONFIGS:
        with open(os.path.join(d, c["id"] + ".config.json"), "w") as f:
            json.dump(hf_config_dict(c), f, indent=1)
        with open(os.path.join(d, c["id"] + ".args"), "w") as f:
            f.write(" ".join(estimate_args(c)) + "\n")
    with open(os.path.join(d, "configs.json"), "w") as f:
        json.dump([{k: c[k] for k in ("id", "covers", "info", "needs", "expect")} for c in CONFIGS], f, indent=1)


def main(argv):
    if not argv:
        print(__doc__ or "usage: measure.py list|plan|configs|caps|run|one|errors|self-test", file=sys.stderr)
        return 2
    cmd, opts_rest = argv[0], parse_opts(argv[1:])
    opts, rest = opts_rest
    if cmd == "one":
        die_with_parent()
        c = json.loads(rest[0])
        rec = measure_one(c)
        print(RECORD_TAG + json.dumps(rec), flush=True)
        return 0
    if cmd == "context":
        print(json.dumps(measure_context()))
        return 0
    if cmd == "caps":
        print(json.dumps(caps_here()))
        return 0
    if cmd == "list":
        runnable, skipped = select(CONFIGS, load_caps(opts))
        for c in runnable:
            print(f"{c['id']:<34} runs     {c['covers']}")
        for c, why in skipped:
            print(f"{c['id']:<34} skipped  {why}")
        return 0
    if cmd == "plan":
        runnable, _ = select(CONFIGS, load_caps(opts))
        taken, dropped = plan(runnable, float(opts.get("budget", 300)))
        print(json.dumps({"run": [{"id": c["id"], "planned_s": round(s, 1)} for c, s in taken],
                          "left_out": [{"id": c["id"], "planned_s": round(s, 1)} for c, s in dropped]}))
        return 0
    if cmd == "configs":
        cmd_configs(rest[0])
        return 0
    if cmd == "run":
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        cmd_run(opts)
        return 0
    if cmd == "errors":
        with open(rest[0]) as f:
            recs = [json.loads(line) for line in f if line.strip()]
        with open(rest[1]) as f:
            est = json.load(f)
        print(json.dumps(error_table([r for r in recs if "env" not in r], est)))
        return 0
    if cmd == "self-test":
        return self_test(opts)
    print(f"measure.py: unknown command {cmd!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
