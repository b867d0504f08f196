#!/usr/bin/env bash
# steptime.sh - `vramfit estimate --explain` shows each GPU's step as its
# parts (issue 31): GEMMs, attention, memory-bound kernels, launches,
# dequantization, optimizer, offload, paging and the exposed
# communication over the link class NCCL would use; --json carries them.
. "$(dirname "$0")/lib.sh"
export XDG_CONFIG_HOME="$TMP/config"
unset VRAMFIT_DATA_DIR || true
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI="$TMP/no-such-smi"

test_case "--explain: four RTX 4090s with FSDP over PCIe without peer-to-peer"
run estimate tinyllama-1.1b --batch 4 --seq 1024 --grad-ckpt --gpu rtx-4090:4 --shard fsdp --explain
expect_rc 0
expect_out 'Step time on NVIDIA GeForce RTX 4090 (each GPU)'
expect_out '4 GPUs fsdp over pcie4-shm'
expect_out_re '^  GEMMs +[0-9.]+ ms +[0-9.]+%'
expect_out_re '^  communication \(exposed\) +[0-9.]+ ms'
expect_out_re "^  compute slowed by NCCL's SMs +[0-9.]+ ms"
expect_out 'hidden behind compute'
expect_out 'communication as NCCL runs it over pcie4-shm'
expect_out 'step time on rtx-4090 (ada)'
# every part the issue names, launches included when the GPU's kernels hide them
expect_out_re '^  attention +[0-9.]+ ms +[0-9.]+%'
expect_out_re '^  memory-bound kernels +[0-9.]+ ms +[0-9.]+%'
expect_out_re '^  launches \(host-bound\) +[0-9.]+ ms'
expect_out_re '^  optimizer step +[0-9.]+ ms +[0-9.]+%'
expect_out_re '^  communication in all +[0-9.]+ ms \([0-9.]+ ms hidden behind compute; [0-9.]+ GiB sent by each GPU per step\)$'

test_case "--json: the parts add up to the step"
run estimate tinyllama-1.1b --batch 4 --seq 1024 --grad-ckpt --gpu rtx-4090:4 --shard fsdp --json
expect_rc 0
expect_json 'j["gpus"][0]["step_parts"]["link"] == "pcie4-shm"'
expect_json 'abs(sum(v for k, v in j["gpus"][0]["step_parts"].items() if k not in ("compute", "comm_total", "link", "comm_exposed", "comm_interference")) - j["gpus"][0]["step_parts"]["compute"]) < 1e-9'
expect_json 'abs(j["gpus"][0]["step_parts"]["compute"] + j["gpus"][0]["step_parts"]["comm_exposed"] + j["gpus"][0]["step_parts"]["comm_interference"] - j["gpus"][0]["step_seconds"]) < 1e-9'
expect_json 'j["gpus"][0]["step_parts"]["comm_interference"] > 0'
expect_json '0 < j["gpus"][0]["step_parts"]["comm_exposed"] <= j["gpus"][0]["step_parts"]["comm_total"]'
expect_json 'j["time"]["parts"]["gemm"] > 0'

test_case "--explain: QLoRA's dequantization and a paged optimizer beyond the card"
run estimate llama2-7b --mode lora --quant nf4 --gpu a100-80gb --explain
expect_rc 0
expect_out_re '^  base dequantization +[0-9.]+ ms'
expect_no_out 'communication (exposed)'
run estimate qwen2.5-3b --optimizer paged-adamw --grad-ckpt --batch 2 --seq 1024 --gpu rtx-4090 --explain
expect_rc 0
expect_out_re '^  paged optimizer \(PCIe\) +[0-9.]+ ms'
expect_out_re '^  GEMMs +[0-9.]+ ms +[0-9.]+%'
expect_out_re '^  launches \(host-bound\) +[0-9.]+ ms'
expect_out_re '^  optimizer step +[0-9.]+ ms +[0-9.]+%'
expect_out_re '^  paged states +[0-9.]+ GiB of optimizer states beyond the card.s memory migrated over PCIe each step$'
# the bytes the paging part moves: the peak beyond the card, at most the
# states in managed memory (outside PyTorch's allocator)
P=$(printf '%s' "$out" | sed -n 's/^  paged states *\([0-9.]*\) GiB.*/\1/p')
run estimate qwen2.5-3b --optimizer paged-adamw --grad-ckpt --batch 2 --seq 1024 --gpu rtx-4090 --json
expect_json "abs(${P:-0} * 2**30 - min(j['gpus'][0]['peak_bytes'] - j['gpus'][0]['vram_bytes'], j['memory']['peaks']['outside_allocator_bytes'])) < 0.006 * 2**30"

test_case "--explain: tensor parallel's all-reduces on the critical path"
run estimate llama2-7b --mode lora --tp 2 --gpu rtx-4090:2 --explain
expect_rc 0
expect_out 'one replica over 2 GPUs (tp 2 x pp 1)'
expect_out_re '^  tensor-parallel all-reduces +[0-9.]+ ms \(on the critical path\)'

test_case "whole run: the exposed communication is counted once"
run estimate tinyllama-1.1b --batch 4 --seq 1024 --grad-ckpt --gpu rtx-4090:4 --shard fsdp --steps 10 --json
expect_rc 0
expect_json 'abs(j["gpus"][0]["run"]["step_seconds"] - j["gpus"][0]["step_seconds"]) < 1e-9'
expect_json 'j["gpus"][0]["run"]["comm_seconds"] == j["gpus"][0]["step_parts"]["comm_exposed"]'

test_case "--explain: CPU offload's copies and the host's optimizer step in the step"
run estimate qwen2.5-0.5b --mode full --batch 4 --seq 1024 --offload optimizer --gpu rtx-4090 --explain
expect_rc 0
expect_out_re '^  CPU offload copies \(exposed\) +[0-9.]+ ms'
expect_out_re '^  optimizer step on the host +[0-9.]+ ms'
expect_out "at the link's achievable rate (in the step time"
run estimate qwen2.5-0.5b --mode full --batch 4 --seq 1024 --offload params --gpu rtx-4090 --json
expect_rc 0
expect_json 'j["gpus"][0]["step_parts"]["host_optimizer"] > 0 and j["gpus"][0]["step_parts"]["cpu_offload"] >= 0'
expect_json 'abs(sum(v for k, v in j["gpus"][0]["step_parts"].items() if k not in ("compute", "comm_total", "link", "comm_exposed", "comm_interference")) - j["gpus"][0]["step_parts"]["compute"]) < 1e-9'

test_case "an unreadable steptime.json: the built-in constants, said in the assumptions"
mkdir -p "$TMP/data/estimate"
printf '{"constants": ' >"$TMP/data/estimate/steptime.json"
VRAMFIT_DATA_DIR="$TMP/data" run estimate tinyllama-1.1b --gpu h200
expect_rc 0
expect_out 'step-time constants: '
expect_out 'estimate/steptime.json: invalid JSON'
expect_out 'the built-in H200-fitted values used instead'
printf '{"constants": {}}' >"$TMP/data/estimate/steptime.json"
VRAMFIT_DATA_DIR="$TMP/data" run estimate tinyllama-1.1b --gpu h200 --json
expect_rc 0
expect_json 'any("no \"communication\" object" in a for a in j["assumptions"])'
run estimate tinyllama-1.1b --gpu h200
expect_no_out 'step-time constants'

test_case "a by_length attention curve that is not one: named, the rest stands, the estimate approximate"
python3 - "$VF_SOURCE_DIR/data/estimate/steptime.json" "$TMP/data/estimate/steptime.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["constants"]["attention_efficiency"]["hopper"]["by_length"][1]["seq"][0] = 1e9
json.dump(d, open(sys.argv[2], "w"))
PY
VRAMFIT_DATA_DIR="$TMP/data" run estimate tinyllama-1.1b --gpu h200 --explain
expect_rc 0
expect_out 'step-time constants: estimate/steptime.json: attention_efficiency.hopper.by_length[1]: a seq not a number in [1, 1e7]'
expect_out "the entry's other curves and its one share stand); approximate"
expect_out_re '^  attention +[0-9.]+ ms'
VRAMFIT_DATA_DIR="$TMP/data" run estimate tinyllama-1.1b --gpu h200 --json
expect_json 'j["gpus"][0]["step_parts"]["attention"] > 0'

test_case "a GPU without an SM count in the catalog: no compute lost to NCCL counted, and said"
mkdir -p "$TMP/gpudata"
python3 - "$VF_SOURCE_DIR/data/gpus.json" "$TMP/gpudata/gpus.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for g in j["gpus"]:
    if g["id"] == "rtx-4090":
        g["sms"] = None
json.dump(j, open(sys.argv[2], "w"))
PY
VRAMFIT_DATA_DIR="$TMP/gpudata" run estimate tinyllama-1.1b --batch 4 --seq 1024 --grad-ckpt --gpu rtx-4090:4 --shard fsdp --json
expect_rc 0
expect_json 'j["gpus"][0]["step_parts"]["comm_interference"] == 0 and j["gpus"][0]["step_parts"]["comm_total"] > 0'
expect_json 'any("no SM count for this GPU in the catalog (gpus.json sms)" in a for a in j["assumptions"])'
run estimate tinyllama-1.1b --batch 4 --seq 1024 --grad-ckpt --gpu rtx-4090:4 --shard fsdp --json
expect_json 'not any("no SM count" in a for a in j["assumptions"])'
python3 -c "import json,sys; p=sys.argv[1]; j=json.load(open(p)); j['gpus'][0]['sms']=-3; json.dump(j, open(p, 'w'))" "$TMP/gpudata/gpus.json"
VRAMFIT_DATA_DIR="$TMP/gpudata" run estimate tinyllama-1.1b --gpu h200
expect_rc 1
expect_err 'field sms: expected a positive integer'

test_case "--explain: torch.compile's saving against the same step eager; the 8-bit optimizer against AdamW"
run estimate qwen2.5-0.5b --batch 4 --seq 1024 --gpu rtx-4090 --json
expect_rc 0
eager_ms=$(printf '%s' "$out" | python3 -c "import json,sys; print(1e3 * json.load(sys.stdin)['gpus'][0]['step_seconds'])")
adamw_ms=$(printf '%s' "$out" | python3 -c "import json,sys; print(1e3 * json.load(sys.stdin)['gpus'][0]['step_parts']['optimizer'])")
run estimate qwen2.5-0.5b --batch 4 --seq 1024 --gpu rtx-4090 --compile --json
compiled_ms=$(printf '%s' "$out" | python3 -c "import json,sys; print(1e3 * json.load(sys.stdin)['gpus'][0]['step_seconds'])")
run estimate qwen2.5-0.5b --batch 4 --seq 1024 --gpu rtx-4090 --compile --explain
expect_rc 0
expect_out_re '^  torch\.compile +[0-9.]+ ms less than eager \([0-9]+ ms\)'
saved=$(printf '%s' "$out" | sed -n 's/^  torch\.compile *\([0-9.]*\) ms less than eager.*/\1/p')
check "python3 -c 'import sys; sys.exit(0 if abs($saved - ($eager_ms - $compiled_ms)) < 0.06 and $saved > 0 else 1)'"
run estimate qwen2.5-0.5b --batch 4 --seq 1024 --gpu rtx-4090 --explain
expect_no_out 'torch.compile'
expect_no_out '8-bit optimizer'
run estimate qwen2.5-0.5b --batch 4 --seq 1024 --gpu rtx-4090 --optimizer adamw8bit --explain
expect_rc 0
expect_out_re "^  8-bit optimizer +[0-9.]+ ms in the optimizer step against [0-9.]+ ms for torch's AdamW"
against=$(printf '%s' "$out" | sed -n "s/^  8-bit optimizer .* against \([0-9.]*\) ms for torch's AdamW.*/\1/p")
check "python3 -c 'import sys; sys.exit(0 if abs($against - $adamw_ms) < 0.06 else 1)'"

test_case "--explain: checkpointing's hooks on the host, in the launches when host-bound, hidden when GPU-bound; JSON agrees"
run estimate t5-base --batch 8 --seq 512 --target-seq 128 --grad-ckpt --gpu h200 --explain
expect_rc 0
expect_out_re '^  checkpoint hooks \(host\) +[0-9.]+ ms \(pack/unpack per saved tensor, RNG and autocast per block: in the launches above\)'
text_ms=$(printf '%s' "$out" | sed -n 's/^  checkpoint hooks (host) *\([0-9.]*\) ms.*/\1/p')
run estimate t5-base --batch 8 --seq 512 --target-seq 128 --grad-ckpt --gpu h200 --json
json_ms=$(printf '%s' "$out" | python3 -c "import json,sys; print(1e3 * json.load(sys.stdin)['gpus'][0]['checkpoint_host_seconds'])")
check "python3 -c 'import sys; sys.exit(0 if abs($text_ms - $json_ms) < 0.06 and $json_ms > 0 else 1)'"
run estimate t5-base --batch 8 --seq 512 --target-seq 128 --gpu h200 --json
expect_json '"checkpoint_host_seconds" not in j["gpus"][0]'
run estimate llama2-7b --mode lora --batch 4 --seq 2048 --grad-ckpt --gpu h200 --explain
expect_out_re '^  checkpoint hooks \(host\) +[0-9.]+ ms \(.*hidden behind the GPU.s kernels\)'
run estimate t5-base --batch 8 --seq 512 --target-seq 128 --grad-ckpt --compile --gpu h200 --explain
expect_no_out 'checkpoint hooks'
run estimate t5-base --batch 8 --seq 512 --target-seq 128 --grad-ckpt=reentrant --gpu h200 --json
expect_json 'j["setup"]["grad_ckpt_policy"] == "reentrant" and 0 < j["gpus"][0]["checkpoint_host_seconds"] < 0.002'

test_case "fp32 on PyTorch's defaults: SGEMM on the CUDA cores, said in the assumptions"
run estimate gpt2 --batch 8 --seq 1024 --precision fp32 --gpu h200 --explain
expect_rc 0
expect_out "fp32 matmuls in IEEE fp32 on the CUDA cores: TF32 off, PyTorch's default"
expect_out "--tf32 for a run that turns it on"
run estimate gpt2 --batch 8 --seq 1024 --precision fp32 --gpu h200 --json
fp32_gemm=$(printf '%s' "$out" | python3 -c "import json,sys; print(json.load(sys.stdin)['time']['parts']['gemm'])")
run estimate gpt2 --batch 8 --seq 1024 --gpu h200 --explain
expect_no_out 'fp32 matmuls in IEEE fp32'
run estimate gpt2 --batch 8 --seq 1024 --gpu h200 --json
amp_gemm=$(printf '%s' "$out" | python3 -c "import json,sys; print(json.load(sys.stdin)['time']['parts']['gemm'])")
# 989.5 x 0.648 against 66.9 x 0.763 TFLOP/s: the fp32 GEMMs over 10x amp's (the old 2x fp32 rate: 7.1x)
check "python3 -c 'import sys; sys.exit(0 if $fp32_gemm > 10 * $amp_gemm else 1)'"

test_case "--tf32: fp32 GEMMs at the TF32 tensor rate; the setup, the assumptions and the stack's default say so"
run estimate gpt2 --batch 8 --seq 1024 --precision fp32 --gpu h200 --tf32 --json
expect_rc 0
expect_json 'j["setup"]["tf32"] is True and j["setup"]["tf32_source"] == "option"'
tf32_gemm=$(printf '%s' "$out" | python3 -c "import json,sys; print(json.load(sys.stdin)['time']['parts']['gemm'])")
# 494.75 x 0.648 against 66.9 x 0.763 TFLOP/s: IEEE fp32 GEMMs over 5x TF32's
check "python3 -c 'import sys; sys.exit(0 if 5 * $tf32_gemm < $fp32_gemm < 6.3 * $tf32_gemm else 1)'"
expect_json 'any("TF32 on (--tf32;" in a for a in j["assumptions"])'
run estimate gpt2 --batch 8 --seq 1024 --precision fp32 --gpu h200 --stack litgpt --json
expect_json 'j["setup"]["tf32"] is True and j["setup"]["tf32_source"] == "stack"'
expect_json 'any("TF32 on (the litgpt stack" in a for a in j["assumptions"])'
run estimate gpt2 --batch 8 --seq 1024 --precision fp32 --gpu h200 --stack litgpt --no-tf32 --json
expect_json 'j["setup"]["tf32"] is False and j["setup"]["tf32_source"] == "option"'
run estimate gpt2 --batch 8 --seq 1024 --precision fp32 --gpu h200 --json
expect_json 'j["setup"]["tf32"] is False and j["setup"]["tf32_source"] == "pytorch-default"'
run estimate gpt2 --batch 8 --seq 1024 --precision fp32 --gpu h200 --tf32
expect_out "full, fp32 (TF32), adamw"
run estimate gpt2 --batch 8 --seq 1024 --precision fp32 --gpu v100-16gb --tf32
expect_rc 0
expect_out "v100-16gb has no TF32 tensor cores: TF32 on changes nothing there"
expect_no_out "bf16 matmuls run emulated"
run fit gpt2 --batch 8 --seq 1024 --precision fp32 --gpu h200 --tf32 --json
expect_rc 0
run estimate ltx2 --precision fp32 --gpu h200 --video 768x512x49 --tf32
expect_rc 0
expect_out "fp32 and TF32 matmuls are not modelled there; approximate"
expect_no_out "fp32 matmuls on the tensor cores at the TF32 rate"
run estimate gpt2 --precision fp32 --tf32=maybe
expect_rc 2
expect_err "--tf32"

test_case "--no-autocast: pure bf16; peft's fp32 adapters run fp32 GEMMs; the setup, the assumptions and torchtune's profile say so"
lora="--mode lora --lora-rank 16 --lora-targets q_proj,k_proj,v_proj,o_proj --precision bf16 --batch 4 --seq 4096 --grad-ckpt --gpu a100-80gb"
run estimate mistral-7b $lora --json
expect_rc 0
expect_json 'j["setup"]["autocast"] is True'
expect_json 'not any("no autocast" in a for a in j["assumptions"])'
ac_step=$(printf '%s' "$out" | python3 -c "import json,sys; print(json.load(sys.stdin)['gpus'][0]['step_seconds'])")
run estimate mistral-7b $lora --no-autocast --json
expect_rc 0
expect_json 'j["setup"]["autocast"] is False'
expect_json 'any("pure bf16, no autocast (--no-autocast)" in a and "GEMMs in fp32" in a for a in j["assumptions"])'
pure_step=$(printf '%s' "$out" | python3 -c "import json,sys; print(json.load(sys.stdin)['gpus'][0]['step_seconds'])")
# rank-16 fp32 products: a few percent of the step, never free
check "python3 -c 'import sys; sys.exit(0 if $ac_step < $pure_step < 1.2 * $ac_step else 1)'"
run estimate mistral-7b $lora --no-autocast
expect_out "bf16 (pure, no autocast)"
run estimate mistral-7b $lora --no-autocast --tf32 --json
expect_json 'not any("--tf32 ignored" in a for a in j["assumptions"])'
run estimate mistral-7b $lora --tf32 --json
expect_json 'any("--tf32 ignored" in a for a in j["assumptions"])'
run estimate mistral-7b $lora --stack torchtune --json
expect_json 'j["setup"]["autocast"] is False'
expect_json 'any("pure bf16, no autocast (the torchtune stack" in a for a in j["assumptions"])'
run estimate mistral-7b $lora --stack torchtune --autocast --json
expect_json 'j["setup"]["autocast"] is True'
run estimate mistral-7b --mode lora --precision amp --no-autocast --gpu a100-80gb --json
expect_rc 0
expect_json 'any("no autocast (--no-autocast) ignored: --precision amp" in a for a in j["assumptions"])'
run estimate ltx2 --precision bf16 --no-autocast --gpu h200 --video 768x512x49 --json
expect_rc 0
expect_json 'any("not modelled for video DiTs" in a and "approximate" in a for a in j["assumptions"])'
run estimate mistral-7b --precision bf16 --autocast=maybe
expect_rc 2
expect_err "--autocast"

test_case "LoRA under ZeRO-1/2: the all-gather after the step is of the updated adapters, not the frozen base (7.49 GiB sent, a 1.41 s step, where ddp sent 26 MiB in 172 ms)"
run estimate llama3-8b --mode lora --batch 1 --seq 512 --gpus 2 --shard ddp --gpu rtx-4090 --json
ddp_step=$(printf '%s' "$out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["gpus"][0]["step_seconds"])')
for sh in zero1 zero2; do
  run estimate llama3-8b --mode lora --batch 1 --seq 512 --gpus 2 --shard $sh --gpu rtx-4090 --json
  expect_json 'j["gpus"][0]["step_parts"]["comm_total"] < 0.05 and j["gpus"][0]["step_seconds"] < 1.05 * '"$ddp_step"
  run estimate llama3-8b --mode lora --batch 1 --seq 512 --gpus 2 --shard $sh --gpu rtx-4090 --explain
  expect_out "26 MiB sent by each GPU per step"
done
# full training gathers every parameter, as before
run estimate llama3-8b --mode full --batch 1 --seq 512 --gpus 8 --shard zero2 --gpu h100-80gb --explain
expect_out "26.18 GiB sent by each GPU per step"

test_case "CPU offload (--offload params) beside FSDP's collectives: the copies hidden behind the passes leave that window to neither, so a bigger batch never gives a shorter step (batch 4: 1.36 s beside batch 1's 1.49 s)"
prev=0
for b in 1 2 4 8; do
  run estimate llama3-8b --mode lora --lora-targets all-linear --offload params --shard fsdp --gpus 4 --seq 512 --batch $b --gpu l40s --json
  expect_rc 0
  expect_json 'j["gpus"][0]["step_seconds"] >= '"$prev"
  prev=$(printf '%s' "$out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["gpus"][0]["step_seconds"])')
done

test_case "off Hopper, the step's host time is said to be the typical host's (a GeForce card's desktop CPU: 0.75x the H200 server's), so a small model's step on an H100 above an RTX 4090's has its reason in the Assumptions"
run estimate qwen2.5-0.5b --mode lora --batch 1 --seq 512 --gpu rtx-4090
expect_out "host time (launches, synchronisations) at 0.75x the H200 server's, the typical host of such a card (steptime.json host_speed)"
run estimate qwen2.5-0.5b --mode lora --batch 1 --seq 512 --gpu v100-16gb
expect_out "host time (launches, synchronisations) at 1.50x the H200 server's"

finish
