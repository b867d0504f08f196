#!/usr/bin/env bash
# stacks.sh - `vramfit estimate` with other stacks' mechanisms end to end
# (issue 25): each peak named by the tool that prints it, paged states
# outside PyTorch's allocator, litgpt's never-reset peak with its FSDP
# load, torchtitan's profile, CPU offload, tensor parallelism replayed per
# GPU, bad values in one line.
. "$(dirname "$0")/lib.sh"
export XDG_CONFIG_HOME="$TMP/config"
unset VRAMFIT_DATA_DIR || true
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI="$TMP/no-such-smi"

test_case "paged optimizer states: in nvidia-smi's peak, not in PyTorch's"
run estimate llama2-7b --mode full --seq 512 --optimizer paged-adamw --gpu h200 --json
expect_rc 0
expect_json 'set(j["memory"]["peaks"]["step"]) == {"torch.cuda.max_memory_allocated()", "torch.cuda.max_memory_reserved()", "nvidia-smi"}'
expect_json 'j["memory"]["peaks"]["outside_allocator_bytes"] > 20e9'
expect_json 'j["memory"]["peaks"]["step"]["nvidia-smi"] == j["memory"]["context_bytes"] + j["memory"]["peaks"]["step"]["torch.cuda.max_memory_reserved()"] + j["memory"]["peaks"]["outside_allocator_bytes"]'
expect_json 'j["memory"]["peak_allocated_bytes"] == j["memory"]["peaks"]["step"]["torch.cuda.max_memory_allocated()"]'
expect_json 'j["setup"]["optimizer_impl"] == "fused"'
run estimate llama2-7b --mode full --seq 512 --optimizer paged-adamw --gpu h200
expect_out_re '^paged states +[0-9.]+ GiB'
expect_out 'peaks by tool'
expect_out 'torch.cuda.max_memory_allocated()'

test_case "litgpt: the never-reset peak; the FSDP load gathers one unit at a time"
run estimate llama3-8b --mode lora --gpus 4 --shard fsdp --stack litgpt --gpu h100-80gb --json
expect_rc 0
expect_json 'j["setup"]["peak_scope"] == "run" and j["setup"]["load"] == "sharded"'
expect_json 'j["memory"]["peak_phase"] != "load" and j["memory"]["peaks"]["peak_at_load"] is False'
expect_json 'j["memory"]["peaks"]["stack_report"] == "torch.cuda.max_memory_allocated()"'
expect_json 'j["memory"]["peaks"]["run"]["torch.cuda.max_memory_allocated()"] == j["memory"]["peaks"]["step"]["torch.cuda.max_memory_allocated()"]'

test_case "litgpt FSDP accumulation: no_sync keeps every unit's whole gradient, named, replayed"
run estimate llama2-7b --mode lora --gpus 2 --shard fsdp --stack litgpt --grad-accum 4 --gpu a100-40gb --json
expect_rc 0
expect_json 'j["setup"]["fsdp_no_sync"] is True'
expect_json '"allocator_not_simulated" not in j["memory"]'
expect_json 'any("no_sync" in x for x in j["assumptions"])'
run estimate llama2-7b --mode lora --gpus 2 --shard fsdp --stack litgpt --grad-accum 4 --gpu a100-40gb
expect_out 'no_sync'
run estimate llama3-8b --mode lora --gpus 4 --shard fsdp --stack litgpt --peak-scope step --gpu h100-80gb --json
expect_json 'j["memory"]["peak_phase"] != "load" and j["memory"]["peaks"]["scope"] == "step"'

test_case "FSDP accumulation per stack: hf and ltx under no_sync, torchtune and torchtitan synced every micro-batch"
run estimate llama2-7b --mode lora --gpus 4 --shard fsdp --stack hf --grad-accum 4 --gpu a100-40gb --json
expect_rc 0
expect_json 'j["setup"]["fsdp_no_sync"] is True and j["setup"]["fsdp_lora_flat"] is False'
expect_json '"allocator_not_simulated" not in j["memory"]'
expect_json 'any("every adapter\x27s whole gradient" in x for x in j["assumptions"])'
run estimate llama2-7b --mode full --gpus 4 --shard fsdp --grad-accum 4 --gpu a100-80gb
expect_out "every unit's whole gradient"
run estimate llama2-7b --mode full --gpus 4 --shard zero3 --grad-accum 4 --gpu a100-80gb --json
expect_json 'not any("no_sync" in x for x in j["assumptions"])'
run estimate llama2-7b --mode lora --gpus 4 --shard fsdp --stack ltx --grad-accum 4 --gpu a100-80gb --json
expect_json 'j["setup"]["fsdp_no_sync"] is True and j["setup"]["fsdp_lora_flat"] is True'
expect_json 'any("every unit\x27s whole gradient" in x for x in j["assumptions"])'
for st in torchtune torchtitan; do
  run estimate llama2-7b --mode full --gpus 4 --shard fsdp --stack $st --grad-accum 4 --gpu a100-80gb --json
  expect_rc 0
  expect_json 'j["setup"]["fsdp_no_sync"] is False'
  expect_json 'not any("no_sync" in x for x in j["assumptions"])'
  expect_json '"fsdp_no_sync" not in (j["memory"].get("allocator_not_simulated") or "")'
done

test_case "hf FSDP accumulation replayed: no_sync's whole gradients in the allocator replay, not approximate"
run estimate llama3-8b --mode full --gpus 4 --shard fsdp --grad-accum 4 --gpu h100-80gb --json
expect_rc 0
expect_json 'j["setup"]["fsdp_no_sync"] is True and j["setup"]["fsdp_mixed_precision"] is True'
expect_json '"allocator_not_simulated" not in j["memory"]'
expect_json 'any("no_sync" in x for x in j["assumptions"])'
expect_json 'any("FSDP mixed precision" in x for x in j["assumptions"])'
run estimate llama3-8b --mode full --gpus 4 --shard fsdp --grad-accum 4 --gpu h100-80gb
expect_rc 0
expect_out "caching allocator (2.9-2.11 rules) simulated"
expect_no_out "analytic allocator reserve"
run estimate llama3-8b --mode lora --gpus 4 --shard fsdp --grad-accum 4 --gpu h100-80gb --json
expect_json 'not any("FSDP mixed precision" in x for x in j["assumptions"])'

test_case "torchtitan: FSDP2 mixed precision, fused AdamW, every second block checkpointed"
run estimate llama3-8b --mode full --gpus 8 --shard fsdp --stack torchtitan --gpu h100-80gb --json
expect_rc 0
expect_json 'j["setup"]["fsdp_mixed_precision"] is True and j["setup"]["optimizer_impl"] == "fused"'
expect_json 'j["setup"]["grad_ckpt"] is True and j["setup"]["grad_ckpt_policy"] == "every:2"'
expect_json 'j["memory"]["autocast_cache_bytes"] == 0'

test_case "CPU offload: host memory and PCIe time, the allocator not replayed"
run estimate llama3-8b --mode full --gpus 8 --shard fsdp --offload params --gpu h100-80gb --json
expect_rc 0
expect_json 'j["memory"]["offload"]["kind"] == "params" and j["memory"]["offload"]["host_bytes"] > 1e10'
expect_json 'j["memory"]["offload"]["pcie_seconds_per_step"] > 0 and j["memory"]["optimizer_bytes"] == 0'
expect_json 'j["memory"]["allocator_not_simulated"].startswith("CPU offload")'
expect_json 'any("approximate" in a for a in j["assumptions"])'

test_case "tensor parallel: the allocator replayed over each GPU's slice"
run estimate llama3-70b --mode full --gpus 64 --shard fsdp --tp 8 --gpu h100-80gb
expect_rc 0
expect_out 'simulated over the model load and two steps'
expect_out_re '^h100-80gb x64 +[0-9.]+ GiB +yes'

test_case "bad values: one line naming the flag"
run estimate llama2-7b --peak-scope forever
expect_rc 2
expect_err '--peak-scope'
run estimate llama2-7b --grad-ckpt=every:0
expect_rc 2
expect_err 'selective:op or every:N'
run estimate llama2-7b --head classify:0
expect_rc 2
expect_err '--head'
run estimate llama2-7b --offload disk
expect_rc 2
expect_err '--offload'
run estimate llama2-7b --stack nosuch
expect_rc 2
expect_err 'torchtitan'

test_case "the LTX-2 trainer's model: its tier config under the trainer's stack; another stack named estimates the user's own setup"
run estimate ltx-2-19b --gpu a100-80gb:4 --json
expect_rc 0
expect_json 'j["gpus"][0]["setup"]["stack"] == "ltx" and j["gpus"][0]["setup"]["fsdp_lora_flat"] is True'
# the top-level setup is the one its memory figures are of: the tier's
expect_json 'all(j["setup"][k] == j["gpus"][0]["setup"][k] for k in ("stack", "mode", "lora_rank", "optimizer", "batch"))'
# the row's setup names what the top level does (the DiT's modules, the context used)
expect_json 'j["setup"] == j["gpus"][0]["setup"]'
expect_json 'any(x.startswith("training stack ltx") for x in j["assumptions"])'
expect_json 'any("tier\x27s starting config" in x for x in j["assumptions"])'
run estimate ltx-2-19b --gpu a100-80gb:4 --stack ltx --json
expect_json 'any("tier\x27s starting config" in x for x in j["assumptions"])'
for fl in "--stack hf" "--stack torchtune"; do
  run estimate ltx-2-19b --gpu a100-80gb:4 $fl --json
  expect_rc 0
  expect_json 'not any("tier\x27s starting config" in x for x in j["assumptions"])'
  expect_json 'not any(x.startswith("training stack ltx") for x in j["assumptions"])'
done
# a mechanism the DiT estimate does not model is refused (it estimated the
# user's own setup without it)
run estimate ltx-2-19b --gpu a100-80gb:4 --compile --json
expect_rc 2
expect_err "--(no-)compile: not modelled for DiTs"

finish
