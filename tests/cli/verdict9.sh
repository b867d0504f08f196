#!/usr/bin/env bash
# verdict9.sh - one verdict across text and JSON (verdict 9): fit --mode
# infer says approximate, and why, in its text as its JSON does; usage
# errors from --gpu read like every other usage error; fit's assumptions
# name multi-GPU mechanisms only beside a multi-GPU row; tight rows say
# the same in text and JSON; report's fit grid counts the cells it judged.
. "$(dirname "$0")/lib.sh"
export XDG_CONFIG_HOME="$TMP/config"
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI="$TMP/no-such-smi"

test_case "fit --mode infer: the options' not_modelled make the text approximate too, with the reasons"
# the JSON options carried approximate + not_modelled; the text said only
# "speeds are estimates"
run fit llama3.1-8b --mode infer --gpu rtx-4090 --json
expect_rc 0
expect_json 'j["approximate"] is True and all(o["inference"]["approximate"] for g in j["gpus"] for o in g["options"])'
expect_json 'j["not_modelled"][0].startswith("vLLM: vLLM'"'"'s host work per step") and j["not_modelled"][1].startswith("llama.cpp: ")'
run fit llama3.1-8b --mode infer --gpu rtx-4090
expect_rc 0
expect_out_re '^Serving llama3.1-8b .*\(approximate: see the note below\)$'
expect_out "Approximate: not modelled: vLLM: vLLM's host work per step from one host-bound measurement"
expect_out "Approximate: not modelled: llama.cpp: llama.cpp's CUDA context taken as PyTorch's"
run fit llama3.1-8b --mode infer --engine vllm --gpu h100-80gb:2 --json
expect_json 'len(j["not_modelled"]) == 1 and "tensor-parallel workers" in j["not_modelled"][0]'
run fit llama3.1-8b --mode infer --engine vllm --gpu h100-80gb:2
expect_out "Approximate: not modelled: vLLM: "
expect_no_out "llama.cpp: llama.cpp"

test_case "--gpu parse errors: the usage style of every other usage error (exit 2, the Try line)"
# they printed "vramfit: error: ..." with no Try line
for verb in fit plan; do
	for g in rtx-4090:0 nosuch; do
		if [ $verb = fit ]; then run fit llama3-8b --gpu $g; else run plan --gpu $g; fi
		expect_rc 2
		expect_err "vramfit $verb: --gpu $g: "
		expect_err "Try 'vramfit help $verb'."
		expect_err_lines 2
	done
done
run report fit llama3-8b --gpu nosuch
expect_rc 2
expect_err "Try 'vramfit help fit'."

test_case "fit on single GPUs: no NCCL/DDP/ZeRO/overlap lines; with a multi-GPU row they are there"
run fit llama3-8b --mode lora --gpu rtx-4090:1 --gpu h100-80gb:1 --json
expect_rc 0
expect_json 'all(r["gpus"] == 1 for r in j["rows"]) and not any(x.startswith(("multi-GPU:", "DDP:", "ZeRO-1/2:", "overlapped collectives")) for x in j["assumptions"])'
run fit llama3-8b --mode lora --gpu rtx-4090:1 --gpu h100-80gb:1
expect_no_out "DDP: ring all-reduce"
expect_no_out "multi-GPU: collectives"
run fit llama3-8b --mode lora --gpu rtx-4090:2 --json
expect_json 'any(r["gpus"] == 2 for r in j["rows"]) and sum(x.startswith(("multi-GPU:", "DDP:", "ZeRO-1/2:", "overlapped collectives")) for x in j["assumptions"]) == 4'
run fit llama3-8b --mode lora --search --gpu rtx-4090 --tokens 1e8 --json
expect_rc 0
expect_json 'all(r["gpus"] == 1 for r in j["results"]) and not any(x.startswith(("multi-GPU:", "DDP:")) for x in j["assumptions"])'

test_case "fit --mode infer --search: no zero1/zero2 rows (ZeRO shards nothing in inference)"
run fit llama3-8b --mode infer --search --gpu h100-80gb:2 --tokens 1e8 --json
expect_rc 0
expect_json 'len(j["results"]) > 0 and not any(r["setup"]["shard"] in ("zero1", "zero2") for r in j["results"])'
expect_json 'any(r["setup"]["shard"] == "zero3" for r in j["results"])'
run fit llama3-8b --mode infer --search --gpu h100-80gb:2 --tokens 1e8
expect_no_out "shard ddp -> zero1"
expect_no_out "shard ddp -> zero2"
expect_out "(searched as ddp alone)"

test_case "fit: a tight row has no run time or cost in the JSON either, and its settings in a split row's words"
# the text showed '-' for run time and cost while the JSON carried
# run.hours and run.cost_usd; the settings read "shard ddp -> none, tp 8"
# where a split row that fits reads "tp 8"
run fit llama3-70b --mode lora --steps 1000 --json
expect_rc 0
printf '%s' "$out" >"$TMP/fit70.json"
expect_json 'any(r.get("fits_memory") for r in j["rows"])'
expect_json 'all(r["run"] is None for r in j["rows"] if r.get("fits_memory"))'
expect_json 'all(r["settings"] == r["split"] for r in j["rows"] if r.get("split"))'
expect_json 'all(r["run"]["hours"] > 0 for r in j["rows"] if r["fits"])'
run fit llama3-70b --mode lora --steps 1000
expect_out_re '^a100-40gb +8 +tight +tp 8: peak .* - +- *$'

test_case "report fit: the grid counts the cells fit judged; GPU x count cells never evaluated are counted apart"
# "26 of 56 cells fit": 21 of the 56 (e.g. h100 x5) were never evaluated
run report fit llama3-70b --mode lora --steps 1000 -o "$TMP/fit70.html"
expect_rc 0
want=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["rows"]
pairs = {(x["gpu"], x["gpus"]) for x in r}
kinds, counts = {x["gpu"] for x in r}, {x["gpus"] for x in r}
fit = {(x["gpu"], x["gpus"]) for x in r if x["fits"]}
print("%d of %d cells fit (darker = larger micro-batch; ★ = chosen; %d blank: GPU x count not evaluated)" % (len(fit), len(pairs), len(kinds) * len(counts) - len(pairs)))' "$TMP/fit70.json")
check 'grep -qF "Which GPUs fit, and how: $want" "$TMP/fit70.html"'

test_case "estimate --engine vllm: the CUDA graphs not estimated, and what later vLLM does with them, named"
run estimate llama3.1-8b --mode infer --engine vllm --gpu rtx-4090 --ctx 8192 --json
expect_rc 0
expect_json 'j["memory"]["approximate"] is True and "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: fewer blocks than shown" in j["memory"]["not_counted"]'
run estimate llama3.1-8b --mode infer --engine vllm --gpu rtx-4090 --ctx 8192
expect_out "not estimated: the CUDA graphs vLLM captures after the KV cache, outside its budget (vLLM since v0.21 profiles them first and takes them from the KV cache"

finish
