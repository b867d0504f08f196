#!/usr/bin/env bash
# audit-10.sh - audit 10, a new user's sweep: a setup vramfit cannot run or
# does not read is refused or named, and every figure of a row counts the
# GPUs the row runs on.
. "$(dirname "$0")/lib.sh"
export XDG_CONFIG_HOME="$TMP/config"
unset VRAMFIT_DATA_DIR || true
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI="$TMP/no-such-smi"

test_case "--float8 on a card without float8 tensor cores is refused, not estimated"
# torchao's Float8Linear runs torch._scaled_mm, which CUDA runs on compute
# capability 8.9+ only (torchtitan's Float8LinearConverter refuses below);
# an A100 row said "fits" with the float8 memory saving applied
run estimate llama3-8b --float8 --stack torchtitan --gpu a100-80gb:8 --shard fsdp
expect_rc 2
expect_err "a100-80gb (compute capability 8.0) has no float8 tensor cores"
expect_err_lines 2
run estimate llama3-8b --float8 --gpu v100-32gb --json
expect_rc 2
# a card that has them is estimated as before
run estimate llama3-8b --float8 --stack torchtitan --gpu h100-80gb:8 --shard fsdp --json
expect_rc 0
expect_json 'j["setup"]["float8"] and j["gpus"][0]["fits"]'
# the common cards shown by default: those below 8.9 left out, named
run estimate llama3-8b --float8 --json
expect_rc 0
expect_json 'all(g["id"] not in ("a100-40gb", "a100-80gb", "rtx-3090") for g in j["gpus"]) and any(g["id"] == "h100-80gb" for g in j["gpus"])'
expect_json 'any("left out: a100-40gb (8.0)" in x for x in j["assumptions"])'

test_case "video DiT flags on a model that reads none of them are refused"
# --video was refused on an LLM; --audio, --no-audio and --offload-optimizer
# silently did nothing
for f in --audio --no-audio --offload-optimizer; do
  run estimate llama3-8b $f --gpu h100-80gb
  expect_rc 2
  expect_err "apply to video DiTs"
  expect_err_lines 2
done

test_case "flags the setup does not read are named, never dropped silently"
# --target-seq on a decoder-only model, --tf32 under bf16 autocast,
# --adapter-dtype in a full fine-tune: no figure moved and no line said so
run estimate llama3-8b --target-seq 512 --gpu h100-80gb --json
expect_rc 0
expect_json 'any(x.startswith("--target-seq ignored") for x in j["assumptions"])'
run estimate t5-base --target-seq 128 --gpu h100-80gb --json
expect_json 'j["setup"]["target_seq"] == 128 and not any("--target-seq ignored" in x for x in j["assumptions"])'
run estimate llama3-8b --tf32 --gpu a100-80gb --json
expect_json 'any(x.startswith("--tf32 ignored: TF32 applies to fp32 matmuls, and --precision amp runs them in bf16") for x in j["assumptions"])'
run estimate llama3-8b --mode lora --precision fp16 --no-tf32 --gpu a100-80gb
expect_out "--no-tf32 ignored: TF32 applies to fp32 matmuls, and --precision fp16 runs them in fp16"
run estimate llama3-8b --precision fp32 --tf32 --gpu a100-80gb --json
expect_json 'not any("tf32 ignored" in x for x in j["assumptions"])'
run estimate llama3-8b --adapter-dtype bf16 --gpu h100-80gb
expect_out "--adapter-dtype ignored: mode full trains no adapters"
run estimate llama3-8b --mode full --lora-rank 8 --adapter-dtype bf16 --gpu h100-80gb
expect_out "--lora-rank, --adapter-dtype ignored: mode full"

test_case "--tp/--pp on a GPU given without a count: the row counts the replica's GPUs"
# --tp 2 --gpu h100-80gb ran on 2 GPUs (setup.gpus 2, GPU-hours of 2) in a
# row labelled one h100-80gb, JSON count 1
run estimate llama3-8b --mode lora --tp 2 --gpu h100-80gb --tokens 1e9 --json
expect_rc 0
expect_json 'j["gpus"][0]["count"] == j["setup"]["gpus"] == 2'
expect_json 'abs(j["gpus"][0]["run"]["gpu_hours"] - 2 * j["gpus"][0]["run"]["hours"]) < 1e-9'
run estimate llama3-8b --mode lora --tp 2 --pp 2 --gpu h100-80gb
expect_rc 0
expect_out_re '^h100-80gb x4 '
run estimate llama3-8b --mode infer --tp 2 --gpu h100-80gb --json
expect_json 'j["gpus"][0]["count"] == 2'

test_case "--mode infer: a context one sequence of which does not fit is not a yes"
# transformers generate() of llama3-8b at --ctx 32768 on an RTX 4090: the
# inference table said max users 0 (no sequence fits), the GPU row "fits
# yes, headroom 7.49 GiB" (the --seq forward's), exit 0
run estimate llama3-8b --mode infer --ctx 32768 --users 8 --gpu rtx-4090 --gpu h100-80gb --json
expect_rc 0
expect_json '(lambda g: not g["fits"] and g["max_batch"] == 0 and g["headroom_bytes"] < 0 and not g["inference"]["fits"])(j["gpus"][0])'
# one sequence fits the H100, 8 at once do not (generate() decodes them together)
expect_json '(lambda g: not g["fits"] and g["max_batch"] >= 1 and g["inference"]["fits"] and g["max_batch"] < 8)(j["gpus"][1])'
run estimate llama3-8b --mode infer --ctx 32768 --gpu rtx-4090
expect_out_re '^rtx-4090 +23.99 GiB +no +-'
expect_out "rtx-4090: generate() does not fit: one sequence of 32768 tokens does not fit"
# the same card at a context that fits stays a yes
run estimate llama3-8b --mode infer --ctx 4096 --gpu rtx-4090 --json
expect_json 'j["gpus"][0]["fits"] and j["gpus"][0]["max_batch"] >= 1'

test_case "--shard over one replica of a model split is named: it shards nothing"
# --split layers (or --tp 2 on 2 GPUs) with --shard zero3: JSON setup.shard
# zero3, the figures those of no sharding (peak 15.68 GiB either way), no
# line said so
run estimate llama3-8b --mode lora --split layers --shard zero3 --gpu rtx-4090:2 --json
expect_rc 0
expect_json 'j["setup"]["shard"] == "zero3" and any(x.startswith("--shard zero3 over one replica shards nothing: the layer split") for x in j["assumptions"])'
run estimate llama3-8b --mode lora --tp 2 --gpus 2 --shard fsdp --gpu h100-80gb:2
expect_out "--shard fsdp over one replica shards nothing: the tp x pp split"
# data parallel over replicas: sharded, no such line
run estimate llama3-8b --mode lora --tp 2 --gpus 4 --shard zero3 --gpu h100-80gb:4 --json
expect_json 'not any("shards nothing" in x for x in j["assumptions"])'

test_case "fit's max batch is the largest batch whose own estimate fits"
# t5-base LoRA at seq 256 on an h100-80gb: the simulated search stepped at
# most 8 above the fast path's answer and said 166 where 167-169 fit (the
# estimate at --batch 167 said yes); estimate's own column said 166 too
run fit t5-base --mode lora --seq 256 --gpu h100-80gb:1 --margin 0 --json
expect_rc 0
mb=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0]["max_batch"])')
run estimate t5-base --mode lora --seq 256 --gpu h100-80gb --batch "$mb" --json
expect_json "j['gpus'][0]['fits'] and j['gpus'][0]['max_batch'] == $mb"
run estimate t5-base --mode lora --seq 256 --gpu h100-80gb --batch "$((mb + 1))" --json
expect_json "not j['gpus'][0]['fits']"

test_case "fit --float8: a card without float8 tensor cores is refused or left out, as estimate does"
# fit llama3-8b --float8 --gpu a100-80gb ran and showed the A100 rows
# (with the float8 saving) that estimate refuses
run fit llama3-8b --float8 --gpu a100-80gb
expect_rc 2
expect_err "a100-80gb (compute capability 8.0) has no float8 tensor cores"
expect_err_lines 2
run fit llama3-8b --float8 --stack torchtitan --gpu h100-80gb:8 --json
expect_rc 0
expect_json 'all(r["gpu"] == "h100-80gb" for r in j["rows"]) and j["rows"][0]["fits"]'
run fit llama3-8b --float8 --json
expect_rc 0
expect_json 'all(r["gpu"] not in ("a100-40gb", "a100-80gb", "rtx-3090") for r in j["rows"]) and any(r["gpu"] == "h100-80gb" for r in j["rows"])'
expect_json 'any("left out: a100-40gb (8.0)" in x for x in j["assumptions"])'

test_case "fit --gpu ID without a count: the 1, 2, 4, 8 rows the help promises"
# vramfit help fit: "one row per GPU ... and GPU count (1, 2, 4, 8 unless
# --gpus or a --gpu count fixes it)"; --gpu h100-80gb listed the 1-GPU row only
run fit llama3-8b --gpu h100-80gb --json
expect_rc 0
expect_json '{1, 2, 4, 8} <= {r["gpus"] for r in j["rows"] if not r.get("split")} and all(r["gpu"] == "h100-80gb" for r in j["rows"])'
run fit llama3-8b --gpu h100-80gb:2 --json
expect_json 'all(r["gpus"] == 2 for r in j["rows"])'
run fit llama3-8b --gpu h100-80gb --gpus 4 --json
expect_json 'all(r["gpus"] == 4 for r in j["rows"])'

test_case "fit's header names TF32 and the training stack, as estimate's does"
# fit said "llama3-8b, full fp32, micro-batch ..." for --precision fp32 --tf32
# --stack torchtitan; estimate's Setup line says "fp32 (TF32)" and its
# assumptions the training stack
run fit llama3-8b --precision fp32 --tf32 --stack torchtitan --gpu h100-80gb:8
expect_rc 0
expect_out_re '^llama3-8b, full fp32 \(TF32\), stack torchtitan, micro-batch 1 x 2048 tokens'
expect_out "training stack torchtitan (data/stacks/torchtitan.json"
run estimate llama3-8b --precision fp32 --tf32 --stack torchtitan --gpu h100-80gb:8
expect_out_re '^Setup  full, fp32 \(TF32\), '
expect_out "training stack torchtitan (data/stacks/torchtitan.json"
# IEEE fp32 says no TF32; the default stack is named in the assumptions
run fit llama3-8b --precision fp32 --gpu h100-80gb:8 --json
expect_json 'any(x.startswith("training stack hf (data/stacks/hf.json") for x in j["assumptions"])'
run fit llama3-8b --precision fp32 --gpu h100-80gb:8
expect_out_re '^llama3-8b, full fp32, micro-batch'

test_case "--mode infer --tp 2: max users of the split, as its verdict"
# llama2-13b over two rtx-4090 (tp 2): the row fits (9.79 GiB to spare on
# each) and said max users 0, one card's figure for the whole model
run estimate llama2-13b --mode infer --tp 2 --gpu rtx-4090 --json
expect_rc 0
expect_json '(lambda g: g["fits"] and g["max_batch"] >= 1 and g["inference"]["fits"] and g["inference"]["max_users"] == g["max_batch"])(j["gpus"][0])'
# one card that does not hold it stays a no
run estimate llama2-13b --mode infer --gpu rtx-4090 --json
expect_json '(lambda g: not g["fits"] and g["max_batch"] == 0)(j["gpus"][0])'

finish
