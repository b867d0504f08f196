#!/usr/bin/env bash
# estimate.sh - `vramfit estimate` end to end: the acceptance setups of
# issue 4 (7B LoRA fits an RTX 4090 and an A100; 7B full AdamW amp b4x2048
# does not fit an H200, naming the term), the JSON contract, --params,
# the ground-truth check, LTX-2's two shipped configs, errors.
. "$(dirname "$0")/lib.sh"
export XDG_CONFIG_HOME="$TMP/config"
unset VRAMFIT_DATA_DIR || true
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI="$TMP/no-such-smi"

test_case "7B LoRA fits an RTX 4090 and an A100 80GB"
run estimate llama2-7b --mode lora --lora-rank 16 --lora-targets q_proj,v_proj --batch 4 --seq 2048 --grad-ckpt --precision bf16 --gpu rtx-4090 --gpu a100-80gb
expect_rc 0
expect_out 'peak allocated'
expect_out 'peak on device'
expect_out_re '^rtx-4090 +[0-9.]+ GiB +yes'
expect_out_re '^a100-80gb +[0-9.]+ GiB +yes'
expect_out 'Assumptions'
expect_out 'optimizer adamw (--optimizer)'
run estimate llama2-7b --mode lora --lora-rank 16 --lora-targets q_proj,v_proj --batch 4 --seq 2048 --grad-ckpt --precision bf16 --gpu rtx-4090 --gpu a100-80gb --json
expect_rc 0
expect_json 'set(j) == {"model", "setup", "memory", "gpus", "time", "assumptions"}'
expect_json 'j["model"]["id"] == "llama2-7b" and j["model"]["params"] == 6738415616 and j["model"]["trainable_params"] == 8388608'
expect_json 'all(k in j["memory"] for k in ["weights_bytes","gradients_bytes","optimizer_bytes","optimizer_temp_bytes","autocast_cache_bytes","activations_bytes","logits_bytes","kv_cache_bytes","context_bytes","allocator_bytes","peak_allocated_bytes","peak_bytes"])'
expect_json 'j["memory"]["peak_bytes"] == j["memory"]["context_bytes"] + j["memory"]["peak_allocated_bytes"] + j["memory"]["allocator_bytes"]'
expect_json 'sum(j["memory"][k] for k in ["weights_bytes","gradients_bytes","optimizer_bytes","optimizer_temp_bytes","autocast_cache_bytes","activations_bytes","logits_bytes","kv_cache_bytes"]) == j["memory"]["peak_allocated_bytes"]'
expect_json '[g["id"] for g in j["gpus"]] == ["rtx-4090", "a100-80gb"] and all(g["fits"] for g in j["gpus"])'
expect_json 'all(g["headroom_bytes"] > 0 and g["max_batch"] >= 4 and g["vram_bytes"] > 0 for g in j["gpus"])'
expect_json 'j["setup"]["mode"] == "lora" and j["setup"]["lora_rank"] == 16 and j["setup"]["lora_targets"] == "q_proj,v_proj" and j["setup"]["grad_ckpt"] is True and j["setup"]["precision"] == "bf16" and j["setup"]["optimizer_impl"] == "foreach"'
expect_json 'j["time"]["flops_per_step"] > 0 and j["time"]["step_seconds"] > 0 and 0 < j["time"]["mfu"] < 1'
expect_json 'isinstance(j["assumptions"], list) and len(j["assumptions"]) > 3'

test_case "T5's attention is eager whatever --attention says, and the Assumptions say so"
run estimate t5-base --gpu h200
expect_rc 0
expect_out "  - attention eager: t5's modeling code computes the s x s score matrices explicitly (--attention sdpa not applied to this family)"
expect_no_out "no s x s score matrices"
run estimate t5-base --gpu h200 --attention sdpa --json
expect_rc 0
expect_json 'any(a.startswith("attention eager: t5") for a in j["assumptions"]) and not any("no s x s" in a for a in j["assumptions"])'
run estimate llama2-7b --mode lora --gpu h200
expect_out "  - attention sdpa: no s x s score matrices (--attention)"
expect_no_out "attention eager"

test_case "Assumptions name the loop's defaults around the optimizer step: no clipping, gradients freed"
run estimate llama2-7b --mode lora --gpu h200
expect_rc 0
expect_out "  - gradient clipping none: no clip_grad_norm_ before the optimizer step (the HF Trainer's max_grad_norm 1.0 is --grad-clip foreach)"
expect_out "  - zero_grad none: gradients freed after each optimizer step, PyTorch 2.x's default (--zero-grad)"
run estimate llama2-7b --mode lora --gpu h200 --json
expect_json 'sum(a.startswith("gradient clipping none") or a.startswith("zero_grad none") for a in j["assumptions"]) == 2'
# given, a setting is no assumption; inference and the DiT path have no such loop
run estimate llama2-7b --mode lora --grad-clip foreach --zero-grad zeros --gpu h200
expect_rc 0; expect_no_out 'gradient clipping'; expect_no_out 'zero_grad'
run estimate llama2-7b --mode infer --gpu h200
expect_rc 0; expect_no_out 'gradient clipping'; expect_no_out 'zero_grad'
run estimate ltx-2-19b --gpu h100-80gb
expect_rc 0; expect_no_out 'gradient clipping'; expect_no_out 'zero_grad'

test_case "7B full AdamW amp b4x2048 does not fit an H200"
run estimate llama2-7b --mode full --optimizer adamw --precision amp --batch 4 --seq 2048 --no-grad-ckpt --gpu h200
expect_rc 0
expect_out_re '^h200 +[0-9.]+ GiB +no'
expect_out 'h200: does not fit'
expect_out 'activations'
# advice keeps fit's 10% margin (batch 1x4 would leave 54 MiB of 140 GiB);
# of the equally invasive changes the faster first: bitsandbytes' 8-bit
# AdamW kernels are slower than the bf16 AdamW step (issue 31)
expect_out 'the cheapest change that fits: precision amp -> bf16'
expect_out 'next cheapest change that fits: optimizer adamw -> adamw8bit'
expect_out '10% of the GPU kept free, --margin'
run estimate llama2-7b --mode full --optimizer adamw --precision amp --batch 4 --seq 2048 --no-grad-ckpt --gpu h200 --margin 0
expect_out 'the cheapest change that fits: batch 4x1 -> 1x4'
expect_out 'grad-ckpt on'

test_case "LoRA loads the base in bf16 (hf stack); advice is the cheapest change that fits, from the search"
run estimate llama3-8b --mode lora --gpu rtx-4090
expect_rc 0
expect_out 'Setup  lora r16 alpha 16 on q_proj,v_proj, bf16'
expect_out 'rtx-4090: does not fit'
expect_out 'the cheapest change that fits: grad-ckpt on'
run estimate llama3-8b --mode lora --gpu rtx-4090 --json
expect_json 'j["setup"]["precision"] == "bf16" and j["gpus"][0]["advice"][0]["changes"] == [{"knob": "grad_ckpt", "from": "false", "to": "true"}] and j["gpus"][0]["advice"][0]["headroom_bytes"] > 0'
run estimate llama3-8b --mode lora --precision amp --gpu rtx-4090 --json
expect_json 'any(c["knob"] == "precision" for a in j["gpus"][0]["advice"] for c in a["changes"])'

test_case "the allocator simulation: --explain, --allocator expandable, PYTORCH_CUDA_ALLOC_CONF"
run estimate llama2-7b --mode lora --batch 4 --seq 2048 --gpu h200 --explain
expect_rc 0
expect_out 'Caching allocator at the reserved peak (cudaMalloc segments'
expect_out 'small pool:'
expect_out 'large pool:'
run estimate llama2-7b --mode lora --batch 4 --seq 2048 --gpu h200 --explain --allocator expandable
expect_out 'expandable_segments:True'
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
run estimate llama2-7b --mode lora --batch 4 --seq 2048 --gpu h200 --explain
expect_out 'expandable_segments:True'
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:maybe
run estimate llama2-7b --gpu h200
expect_rc 2
expect_err 'PYTORCH_CUDA_ALLOC_CONF: expandable_segments'
unset PYTORCH_CUDA_ALLOC_CONF
run estimate llama2-7b --allocator sometimes
expect_rc 2
run estimate llama2-7b --batch 4 --seq 2048 --gpu h200 --json
expect_json 'j["gpus"][0]["fits"] is False and j["gpus"][0]["headroom_bytes"] < 0 and j["gpus"][0]["breaking_term"] == "activations"'

test_case "--params alone and the common cards"
run estimate --params 7B --mode lora --json
expect_rc 0
expect_json '6e9 < j["model"]["params"] < 8e9 and len(j["gpus"]) >= 3 and any("generic" in a for a in j["assumptions"])'

test_case "a config.json"
printf '{"model_type": "llama", "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 22, "num_attention_heads": 32, "num_key_value_heads": 4, "vocab_size": 32000}' > "$TMP/config.json"
run estimate "$TMP/config.json" --gpu h100-80gb --json
expect_rc 0
expect_json 'j["model"]["params"] == 1100048384'

test_case "model directories and files (../shared/fixtures/models)"
M="$VF_SHARED_DIR/fixtures/models"
run estimate "$M/tiny-llama-bf16" --gpu h100-80gb --json
expect_rc 0
expect_json 'j["model"]["params"] == 218944'
run estimate "$M/tiny-t5-fp32" --gpu h100-80gb --seq 64 --json
expect_rc 0
expect_json 'j["model"]["params"] == 196864 and j["setup"]["target_seq"] == 64'
run estimate "$M/tiny-llama-lora-r8"
expect_rc 1
expect_err 'without its base model'

test_case "inference has a KV cache"
run estimate gpt-neox-20b --mode infer --seq 2048 --gpu h200 --json
expect_rc 0
expect_json 'j["memory"]["kv_cache_bytes"] > 0 and j["setup"]["optimizer"] == "none" and 43e9 < j["memory"]["peak_bytes"] < 47e9'

test_case "ground truth check"
run estimate --check-groundtruth "$VF_SHARED_DIR/groundtruth/calibration.jsonl"
expect_rc 0
expect_out 'l7-full-amp-b1s2048-gc'
expect_out 'within the accuracy bounds'
run estimate --check-groundtruth "$VF_SHARED_DIR/groundtruth/calibration.jsonl" --json
expect_json 'len(j["records"]) == 27 and j["summary"]["within_bounds"] is True and j["summary"]["peak_median_abs_error"] <= 0.05'

test_case "LTX-2: the low-VRAM config fits a 32 GB card, the standard one needs 80 GB"
run estimate ltx-2-19b --video 576x576x49 --lora-rank 16 --optimizer adamw8bit --quant int8 --text-encoder int8 --offload-optimizer --grad-ckpt --gpu rtx-5090 --json
expect_rc 0
expect_json 'j["model"]["kind"] == "dit" and j["gpus"][0]["fits"] is True'
run estimate ltx-2-19b --video 960x544x89 --lora-rank 32 --optimizer adamw --grad-ckpt --quant none --text-encoder bf16 --no-offload-optimizer --gpu rtx-5090 --gpu rtx-6000-ada --gpu a100-80gb --json
expect_rc 0
expect_json '[g["fits"] for g in j["gpus"]] == [False, False, True]'
run estimate ltx-2-19b --video 960x544x89 --gpu a100-80gb
expect_out 'to_q to_k to_v to_out.0'
expect_out 'validation'

test_case "errors"
run estimate
expect_rc 2
expect_err 'expected a MODEL'
run estimate llama2-7b --batch 0
expect_rc 2
expect_err '--batch'
run estimate llama2-7b --mode qlora --gpu rtx-4090
expect_rc 2
expect_err "got 'qlora' (QLoRA is --mode lora --quant nf4"
expect_err_lines 2
run fit llama2-7b --mode QLoRA --gpu rtx-4090
expect_rc 2
expect_err "got 'QLoRA' (QLoRA is --mode lora --quant nf4"
run estimate llama2-7b --frobnicate
expect_rc 2
expect_err "unknown option '--frobnicate'"
run estimate no-such-model-anywhere
expect_rc 1
expect_err 'vramfit: error:'
run estimate llama2-7b --gpu no-such-gpu
expect_rc 2
run estimate llama2-7b --video 960x544x89
expect_rc 2
expect_err 'video DiTs'
run estimate --check-groundtruth "$TMP/missing.jsonl"
expect_rc 1
expect_err 'missing.jsonl'
run help estimate
expect_rc 0
expect_out '--lora-targets'

test_case "LoRA flags outside --mode lora, --grad-ckpt under --mode infer: named as ignored, not dropped silently"
run estimate llama2-7b --gpu h100-80gb --lora-rank 64 --lora-targets all-linear; expect_rc 0
expect_out "--lora-rank, --lora-targets ignored: mode full trains no adapters (--mode lora)"
run estimate llama2-7b --gpu h100-80gb --lora-rank 64 --json; expect_rc 0
expect_json 'any("--lora-rank ignored" in x for x in j["assumptions"]) and j["setup"]["lora_rank"] is None'
run estimate llama2-7b --gpu h100-80gb --mode infer --grad-ckpt; expect_rc 0
expect_out "--grad-ckpt ignored: inference has no backward pass to checkpoint"
run estimate llama2-7b --gpu h100-80gb --mode lora --lora-rank 64; expect_rc 0
expect_no_out "ignored"

test_case "--seq against the model's positions: learned ones refuse, rotary/relative ones are approximate"
run estimate gpt2 --seq 8192 --gpu h100-80gb
expect_rc 2
expect_err '--seq 8192: gpt2 has learned absolute positions for 1024 tokens (max_positions) and cannot run longer; give --seq 1024 or less'
run estimate gpt2 --seq 1024 --gpu h100-80gb --json
expect_rc 0
expect_json 'j["model"]["approximate"] is False and j["setup"]["seq"] == 1024'
run estimate gpt2 --gpu h100-80gb --json
expect_rc 0
expect_json 'j["setup"]["seq"] == 1024 and any("the default 2048 shortened to the model'"'"'s 1024 learned absolute positions" in x for x in j["assumptions"])'
run estimate gpt2 --mode infer --ctx 2048 --seq 512 --gpu h100-80gb
expect_rc 2
expect_err 'give --ctx 1024 or less'
run estimate llama2-7b --seq 100000 --gpu h100-80gb --json
expect_rc 0
expect_json 'j["model"]["approximate"] is True and "--seq 100000 beyond max_positions 4096" in j["model"]["not_understood"]'
run estimate llama2-7b --seq 100000 --gpu h100-80gb
expect_out '(approximate: see Assumptions)'
expect_out '--seq 100000 tokens beyond the 4096 positions the model was trained on (max_positions; rotary positions'
run estimate t5-small --seq 100000 --gpu h100-80gb
expect_rc 0
expect_out 'relative positions: it runs, but past its trained context'
run estimate llama2-7b --seq 4096 --gpu h100-80gb --json
expect_json 'j["model"]["approximate"] is False'
run estimate llama2-7b --mode infer --ctx 100000 --gpu h100-80gb --json
expect_rc 0
expect_json 'j["model"]["approximate"] is True and "--ctx 100000 beyond max_positions 4096" in j["model"]["not_understood"]'

test_case "--shard none over data-parallel GPUs is DDP, as fit reads it, and says so"
# estimate kept 'none' (no gradient buckets) where fit's start read ddp:
# phi-2 full on 8 H100s, 65176141824 B against fit's 76741935104 B
run estimate phi-2 --mode full --shard none --gpu h100-80gb:8 --json
expect_rc 0
expect_json 'j["setup"]["shard"] == "ddp" and any("--shard none over several GPUs" in a for a in j["assumptions"])'
pe=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["gpus"][0]["peak_bytes"])')
run fit phi-2 --mode full --shard none --search --gpu h100-80gb:8 --json
expect_json 'j["start"][0]["setup"]["shard"] == "ddp" and j["start"][0]["peak_bytes"] == '"$pe"
# with a tp/pp split over replicas too: ddp, as fit's results and the advice read it
run estimate mistral-7b --mode full --batch 1 --grad-accum 16 --seq 1024 --grad-ckpt --optimizer adamw --precision bf16 --shard none --pp 2 --micro-batches 16 --gpu h100-80gb:8 --json
expect_json 'j["setup"]["shard"] == "ddp"'
pn=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["gpus"][0]["peak_bytes"])')
run estimate mistral-7b --mode full --batch 1 --grad-accum 16 --seq 1024 --grad-ckpt --optimizer adamw --precision bf16 --shard ddp --pp 2 --micro-batches 16 --gpu h100-80gb:8 --json
expect_json 'j["gpus"][0]["peak_bytes"] == '"$pn"
# a model split's GPUs alone are not replicas: none stays none there
run estimate llama2-13b --mode infer --shard none --tp 2 --gpu rtx-4090:2 --json
expect_rc 0
expect_json 'not any("--shard none over several GPUs" in a for a in j["assumptions"])'

finish
