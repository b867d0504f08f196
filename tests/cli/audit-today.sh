#!/usr/bin/env bash
# audit-today.sh - audit 9 of the day's merges (fp32's SGEMM, FSDP/ZeRO-3 in
# the allocator replay, k-bit LoRA): what the output says about a setup is
# true of that setup.
. "$(dirname "$0")/lib.sh"
export XDG_CONFIG_HOME="$TMP/config"
unset VRAMFIT_DATA_DIR || true
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI="$TMP/no-such-smi"

test_case "estimate --precision fp32 on a V100: no bf16 matmul, so no line about bf16 emulated"
# fp32 runs SGEMM on the CUDA cores (no bf16 anywhere); the line "v100-32gb
# has no bf16 tensor cores: bf16 matmuls run emulated" was printed anyway
run estimate gpt2 --gpu v100-32gb --precision fp32 --json
expect_rc 0
expect_json 'not any("bf16 tensor cores" in x for x in j["assumptions"])'
expect_json 'any("IEEE fp32" in x for x in j["assumptions"])'
run estimate gpt2 --gpu t4 --precision fp32
expect_no_out "bf16 matmuls run emulated"
# amp (bf16 autocast) on the same card keeps it
run estimate gpt2 --gpu v100-32gb --json
expect_json 'any("bf16 tensor cores" in x for x in j["assumptions"])'

test_case "fit's header names the quantized base and the sharding it fitted"
# the header said "llama3-8b, lora bf16, ..." for --quant nf4 and "full amp"
# for --shard zero3: the rows' settings are changes from a setup it hid
run fit llama3-8b --mode lora --quant nf4 --gpu rtx-4090
expect_rc 0
expect_out_re '^llama3-8b, lora bf16, nf4 base, micro-batch 1 x 2048 tokens'
run fit llama3-8b --shard zero3 --gpu a100-40gb:4
expect_out_re '^llama3-8b, full amp, zero3, micro-batch 1 x 2048 tokens'
run fit llama3-8b --gpu a100-40gb
expect_out_re '^llama3-8b, full amp, micro-batch 1 x 2048 tokens'

test_case "fit --search's start is the setup estimate gives: the same peak"
# the start line ranked on the fast path: QLoRA llama3-8b batch 4 on an RTX
# 4090 "peak 76.77 GiB" where estimate says 74.42 GiB; DDP on 4 A100s
# 192.16 beside 195.85 GiB
for s in "--mode lora --quant nf4 --gpu rtx-4090 --batch 4" "--gpu a100-40gb:4" \
	 "--shard fsdp --gpu h100-80gb:8 --grad-ckpt"; do
  run estimate llama3-8b $s --json
  pk=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["gpus"][0]["peak_bytes"])')
  run fit llama3-8b --search $s --top 1 --json
  expect_json "j['start'][0]['peak_bytes'] == $pk"
  expect_json "j['start'][0]['fits'] == (j['start'][0]['peak_bytes'] <= j['start'][0]['limit_bytes'])"
done

test_case "fit: a row whose simulated peak fits is not a no because the fast path's is over"
# mixtral QLoRA on two RTX 4090s without changing the quantization: ZeRO-3
# and checkpointing are 21.90 GiB on the search's fast path, 21.52 GiB by the
# allocator simulation (vramfit estimate) under 21.59 GiB usable; the row
# said "no: smallest peak 21.90 GiB > 21.59 GiB usable"
run estimate mixtral-8x7b --mode lora --quant nf4 --gpu rtx-4090:2 --shard zero3 --grad-ckpt --json
pk=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["gpus"][0]["peak_bytes"])')
run fit mixtral-8x7b --mode lora --quant nf4 --gpu rtx-4090:2 --forbid quant --json
expect_rc 0
expect_json "(lambda r: r['fits'] and r['peak_bytes'] == $pk and r['peak_bytes'] <= r['limit_bytes'] and r['max_batch'] >= r['setup']['batch'] and r['setup']['shard'] == 'zero3')(j['rows'][0])"
run fit mixtral-8x7b --mode lora --quant nf4 --gpu rtx-4090:2 --forbid quant
expect_out_re '^rtx-4090 +2 +yes +grad-ckpt on, shard ddp -> zero3 +1 '
# the header names a --shard given, not the one that follows the count
expect_out_re '^mixtral-8x7b, lora bf16, nf4 base, micro-batch'

test_case "k-bit LoRA on the hf stack: the checkpointing line says peft's preparation turns it on"
# the replay counts prepare_model_for_kbit_training's fp32 norms, embedding
# and head; the same function enables gradient checkpointing by default, and
# the line said only "gradient checkpointing off (--grad-ckpt)"
run estimate llama3-8b --mode lora --quant nf4 --gpu rtx-4090 --json
expect_json 'any(x.startswith("gradient checkpointing off (--grad-ckpt): peft\x27s prepare_model_for_kbit_training") for x in j["assumptions"])'
# not where that function is not used: torchtune's QLoRA, a bf16 base, --grad-ckpt given
# (the quantized base's own line names it where it applies)
for s in "--quant nf4 --stack torchtune" "" "--quant nf4 --grad-ckpt"; do
  run estimate llama3-8b --mode lora $s --gpu rtx-4090 --json
  expect_json 'not any(x.startswith("gradient checkpointing") and "prepare_model_for_kbit_training" in x for x in j["assumptions"])'
done

test_case "estimate: the adapters' dtype line follows the stack and --adapter-dtype"
# litgpt and torchtune keep their adapters in bf16 (their profiles'
# adapter_dtype); the line said "kept in fp32 (peft's default)" for every stack
run estimate llama3-8b --mode lora --stack litgpt --gpu h100-80gb --json
expect_json '"LoRA adapters in bf16 (the stack\x27s default, --adapter-dtype)" in j["assumptions"]'
expect_json 'not any("kept in fp32" in x for x in j["assumptions"])'
run estimate llama3-8b --mode lora --gpu h100-80gb --json
expect_json '"LoRA adapters kept in fp32 (peft\x27s default, --adapter-dtype)" in j["assumptions"]'
run estimate llama3-8b --mode lora --stack torchtune --adapter-dtype fp32 --gpu h100-80gb --json
expect_json '"LoRA adapters kept in fp32 (--adapter-dtype)" in j["assumptions"]'

test_case "estimate: --shard zero3/fsdp on one GPU says it shards nothing"
# the estimate was one GPU's whole model with no word that the shard given
# changed nothing
run estimate llama3-8b --shard zero3 --gpu h100-80gb --json
expect_rc 0
expect_json 'any(x.startswith("--shard zero3 on one GPU shards nothing") for x in j["assumptions"])'
for s in "--shard fsdp --gpu h100-80gb:2" "--shard fsdp --gpus 4 --gpu h100-80gb" "--shard ddp --gpu h100-80gb"; do
  run estimate llama3-8b $s --json
  expect_json 'not any("shards nothing" in x for x in j["assumptions"])'
done

finish
