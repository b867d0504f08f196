#!/usr/bin/env bash
# infer.sh - `vramfit estimate --mode infer --engine ...` end to end
# (issue 27): vLLM's KV blocks and concurrent 8k sequences for llama3.1-8b
# on an RTX 4090 (derived by hand in tests/unit/test-infer.c), its refusal
# at the model's default 131072-token max_model_len, the inference table
# and JSON object, one verdict, and the flags' errors.
. "$(dirname "$0")/lib.sh"
export XDG_CONFIG_HOME="$TMP/config"
unset VRAMFIT_DATA_DIR || true
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI="$TMP/no-such-smi"

test_case "vllm: llama3.1-8b on an RTX 4090 at 8k context"
run estimate llama3.1-8b --mode infer --engine vllm --gpu rtx-4090 --ctx 8192
expect_rc 0
expect_out 'Memory as vLLM lays it out'
expect_out 'KV cache (2961 blocks of 16 tokens)'
expect_out_re '^Inference \(vllm: context 8192 tokens'
expect_out_re '^rtx-4090 +128 KiB +5\.78 GiB +2961 +5 \(5\.78x\)'
expect_out_re '^rtx-4090 +[0-9.]+ GiB +yes'
expect_no_out 'logits phase'
run estimate llama3.1-8b --mode infer --engine vllm --gpu rtx-4090 --ctx 8192 --users 4 --json
expect_rc 0
expect_json 'j["inference"]["engine"] == "vllm" and j["inference"]["kv_blocks"] == 2961 and j["inference"]["max_users"] == 5'
expect_json 'j["inference"]["kv_bytes_per_token"] == 131072 and j["inference"]["ctx"] == 8192 and j["inference"]["users"] == 4'
expect_json 'j["inference"]["ttft_seconds"] > 0 and j["inference"]["decode_tokens_per_second_per_user"] > 0'
expect_json 'abs(j["inference"]["decode_tokens_per_second_total"] - 4 * j["inference"]["decode_tokens_per_second_per_user"]) < 1e-6'
expect_json 'j["gpus"][0]["inference"]["kv_blocks"] == 2961 and j["gpus"][0]["fits"] is True'

test_case "one figure for the users at --ctx: the GPUs table says max users as the inference table, every engine"
for eng in vllm transformers llamacpp; do
  run estimate llama3.1-8b --mode infer --engine $eng --gpu rtx-4090 --ctx 8192 --users 2 --json
  expect_json 'j["gpus"][0]["max_batch"] == j["gpus"][0]["inference"]["max_users"] == j["inference"]["max_users"]'
done
run estimate llama3.1-8b --mode infer --engine vllm --gpu rtx-4090 --ctx 8192
expect_out_re '^GPU +VRAM +fits +headroom +max users +TTFT +prefill tok/s +decode tok/s'
expect_out_re '^rtx-4090 +23\.99 GiB +yes +[0-9.]+ GiB +5 '

test_case "one verdict for an engine: the JSON memory is the engine's layout, as the text table (llamacpp)"
# text: the table's "on device" sum and the GPUs row; JSON: the same bytes
run estimate llama3.1-8b --mode infer --engine llamacpp --gpu rtx-4090 --ctx 8192
expect_rc 0
ondev=$(printf '%s\n' "$out" | awk '/^on device /{print $3, $4}')
expect_out_re '^GPU +VRAM +fits +headroom +max users +TTFT +prefill tok/s +decode tok/s$'
expect_out_re '^rtx-4090 +23\.99 GiB +yes +17\.89 GiB +18 +254 ms +[0-9]+ +119$'
expect_out 'Setup  infer with llama.cpp: q4_k_m GGUF, 32 layers and the output on the GPU'
for training in 'use_cache' 'optimizer states created' 'precision bf16' 'base weights not quantized' 'micro-batch 1 per GPU' 'MFU' 'batch 1 x 2048'; do
  expect_no_out "$training"
done
run estimate llama3.1-8b --mode infer --engine llamacpp --gpu rtx-4090 --ctx 8192 --json
expect_rc 0
expect_json 'j["memory"]["engine"] == "llamacpp" and j["memory"]["peak_bytes"] == j["gpus"][0]["peak_bytes"]'
expect_json 'j["memory"]["peak_bytes"] == j["memory"]["weights_bytes"] + j["memory"]["kv_cache_bytes"] + j["memory"]["compute_buffer_bytes"] + j["memory"]["context_bytes"] == j["memory"]["total_bytes"]'
expect_json 'j["memory"]["weights_bytes"] == j["inference"]["weights_bytes"] and j["memory"]["kv_cache_bytes"] == j["inference"]["kv_cache_bytes"] == 2**30'
expect_json 'j["memory"]["host_bytes"] == j["inference"]["host_bytes"] and [t["bytes"] for t in j["memory"]["terms"]] == [j["memory"][t["term"] + "_bytes"] for t in j["memory"]["terms"]]'
expect_json 'j["gpus"][0]["headroom_bytes"] == j["memory"]["card_bytes"] - j["memory"]["peak_bytes"] and j["memory"]["card_bytes"] == j["gpus"][0]["vram_bytes"]'
expect_json '"%.2f GiB" % (j["memory"]["peak_bytes"] / 2**30) == "'"$ondev"'"'
expect_json 'j["gpus"][0]["step_seconds"] is None and j["gpus"][0]["tokens_per_second"] is None and "step_parts" not in j["gpus"][0]'
expect_json 'j["gpus"][0]["ttft_seconds"] == j["inference"]["ttft_seconds"] == j["time"]["ttft_seconds"] and j["gpus"][0]["decode_tokens_per_second"] == j["inference"]["decode_tokens_per_second_total"]'
expect_json 'abs(j["gpus"][0]["prefill_tokens_per_second"] * j["gpus"][0]["ttft_seconds"] - j["inference"]["prompt_tokens"]) < 1e-6 and "mfu" not in j["time"]'
expect_json 'not any("use_cache" in a or "optimizer states created" in a or a.startswith("precision ") or "base weights not quantized" in a or a.startswith("micro-batch") or "data-parallel" in a for a in j["assumptions"])'
expect_json '"breaking_term" not in j["gpus"][0] and "peak_phase" not in j["memory"]'

test_case "one verdict for an engine: vLLM's budget is what it holds; its layout in the JSON as in the table"
run estimate llama3.1-8b --mode infer --engine vllm --gpu rtx-4090 --ctx 8192
expect_rc 0
expect_out_re '^outside the budget \(CUDA graphs, free\) +2\.40 GiB +10\.0%'
expect_out 'vLLM holds 21.59 GiB on the device (its budget); not estimated: the CUDA graphs'
for training in 'use_cache' 'optimizer states created' 'precision bf16 (--precision)' 'base weights not quantized' 'micro-batch 1 per GPU' 'MFU'; do
  expect_no_out "$training"
done
run estimate llama3.1-8b --mode infer --engine vllm --gpu rtx-4090 --ctx 8192 --json
expect_json 'j["memory"]["engine"] == "vllm" and j["memory"]["kv_cache_bytes"] == j["inference"]["kv_cache_bytes"] and j["memory"]["kv_blocks"] == 2961'
expect_json 'j["memory"]["peak_bytes"] == j["gpus"][0]["peak_bytes"] == j["memory"]["budget_bytes"] == j["inference"]["budget_bytes"] and abs(j["memory"]["budget_bytes"] - 0.9 * j["memory"]["card_bytes"]) < 1'
expect_json 'sum(t["bytes"] for t in j["memory"]["terms"]) == j["memory"]["card_bytes"] == j["memory"]["total_bytes"] and j["memory"]["approximate"] is True and "CUDA graphs" in j["memory"]["not_counted"]'
expect_json 'j["gpus"][0]["step_seconds"] is None and j["gpus"][0]["decode_tokens_per_second"] == j["inference"]["decode_tokens_per_second_total"] == j["time"]["decode_tokens_per_second_total"]'
expect_json 'not any("use_cache" in a or "optimizer states created" in a or a.startswith("precision ") or a.startswith("micro-batch") for a in j["assumptions"])'
# a refusal: the peak is what it needed before the KV cache, never below its budget
run estimate llama3.1-70b --mode infer --engine vllm --gpu rtx-4090 --ctx 8192 --json
expect_json 'j["gpus"][0]["fits"] is False and j["memory"]["peak_bytes"] == j["gpus"][0]["peak_bytes"] > j["memory"]["card_bytes"]'
run estimate llama3.1-70b --mode infer --engine vllm --gpu rtx-4090 --ctx 8192
expect_out_re '^vLLM needs [0-9.]+ GiB before any KV cache \(the weights, the profiled forward and the CUDA context\): more than its budget, 21\.59 GiB$'
# over two cards: each row's peak is its own fullest device's sum
run estimate llama3.1-70b --mode infer --engine llamacpp --gpu rtx-3090:2 --ctx 4096 --json
expect_json 'j["memory"]["device"] == 1 and j["memory"]["peak_bytes"] == j["gpus"][0]["peak_bytes"] == j["inference"]["devices"][1]["bytes"]'
# vLLM over tensor parallel: its table is one GPU's; no training split's peaks or step beside it
run estimate llama3.1-70b --mode infer --engine vllm --gpu rtx-3090:2 --tp 2 --quant int4 --kv-cache-dtype fp8 --ctx 5648
expect_rc 0
expect_out 'Setup  infer with vLLM: int4 weights, KV cache fp8, tensor parallel 2'
expect_out 'one GPU of the split'
expect_no_out 'Megatron-style'
expect_no_out 'pipeline bubble'
run estimate llama3.1-70b --mode infer --engine vllm --gpu rtx-3090:2 --tp 2 --quant int4 --kv-cache-dtype fp8 --ctx 5648 --json
expect_json '"split" not in j["gpus"][0] and j["gpus"][0]["peak_bytes"] == j["memory"]["budget_bytes"]'
# its page: the engine's table, which a split does not stop
run estimate llama3.1-70b --mode infer --engine vllm --gpu rtx-3090:2 --tp 2 --quant int4 --kv-cache-dtype fp8 --ctx 5648 --html "$TMP/tp.html"
expect_rc 0
check 'grep -q "served by vLLM: fits RTX 3090 x2, holding 21.6 GiB (its budget), 1 user at 5648 tokens" "$TMP/tp.html"'
run estimate llama3.1-70b --mode infer --gpu rtx-3090:2 --tp 2 --html "$TMP/tp2.html"
expect_rc 2
expect_err 'does not draw a model split'
check '[ ! -e "$TMP/tp2.html" ]'
# transformers keeps the replay of its forward
run estimate llama3.1-8b --mode infer --gpu rtx-4090 --ctx 8192 --json
expect_json '"engine" not in j["memory"] and j["memory"]["peak_phase"] == "logits" and j["gpus"][0]["step_seconds"] > 0'

test_case "an engine has no training step: --tokens/--steps (a whole training run) are refused, not priced"
for eng in vllm llamacpp; do
  run estimate llama3.1-8b --mode infer --engine $eng --gpu rtx-4090 --ctx 8192 --tokens 1e9
  expect_rc 2
  expect_err "--tokens/--steps: the whole run of a training step; --engine $eng has none"
  expect_no_out 'Whole run'
done

test_case "--engine llama.cpp: the project's own spelling of llamacpp"
run estimate llama3.1-8b --mode infer --engine llama.cpp --gpu rtx-4090 --ctx 8192 --json
expect_rc 0
expect_json 'j["inference"]["engine"] == "llamacpp" and j["memory"]["engine"] == "llamacpp"'
run estimate llama3.1-8b --mode infer --engine llama.cpp --gguf-type q8_0 --gpu rtx-4090
expect_rc 0
expect_out 'Memory as llama.cpp lays it out'
run fit llama3.1-8b --mode infer --engine llama.cpp --gpu rtx-4090 --ctx 4096 --json
expect_rc 0
expect_json 'all(o["inference"]["engine"] == "llamacpp" for o in j["gpus"][0]["options"])'

test_case "vllm: the decode step as GPU time + the engine's host time (async and sync scheduling)"
run estimate llama3.1-8b --mode infer --engine vllm --gpu h200 --ctx 8192 --users 8 --json
expect_rc 0
expect_json 'j["inference"]["scheduling"] == "async" and j["inference"]["decode_host_seconds"] == 0'
expect_json 'abs(j["inference"]["decode_host_work_seconds"] - 1.40791e-3) < 1e-9'
expect_json 'abs(j["inference"]["decode_step_seconds"] - j["inference"]["decode_device_seconds"]) < 1e-12'
run estimate llama3.1-8b --mode infer --engine vllm --gpu h200 --ctx 8192 --users 8 --no-async-scheduling --json
expect_rc 0
expect_json 'j["inference"]["scheduling"] == "sync" and abs(j["inference"]["decode_host_seconds"] - 1.40791e-3) < 1e-9'
expect_json 'abs(j["inference"]["decode_step_seconds"] - j["inference"]["decode_device_seconds"] - j["inference"]["decode_host_seconds"]) < 1e-12'
run estimate llama3.1-8b --mode infer --engine vllm --gpu h200 --ctx 8192 --users 8 --no-async-scheduling --explain
expect_rc 0
expect_out_re "^\(decode step [0-9.]+ ms = GPU [0-9.]+ ms \+ vLLM's host 1\.41 ms"
expect_out_re '^  h200 +[0-9.]+ ms = GPU [0-9.]+ ms \+ host 1\.408 ms \(host work 1\.408 ms, sync scheduling\)'
run estimate llama3.1-8b --mode infer --engine llamacpp --gpu h200 --no-async-scheduling
expect_rc 2
expect_err 'apply to --engine vllm'

test_case "vllm refuses the model's default max_model_len on a 24 GB card"
run estimate llama3.1-8b --mode infer --engine vllm --gpu rtx-4090
expect_rc 0
expect_out_re '^rtx-4090 +[0-9.]+ GiB +no'
expect_out 'rtx-4090: vLLM refuses to start: the model'"'"'s max seq len (131072) is larger than the maximum number of tokens that can be stored in KV cache (47376); try --ctx 47376 or less'
run estimate llama3.1-8b --mode infer --engine vllm --gpu rtx-4090 --json
expect_json 'j["gpus"][0]["fits"] is False and j["inference"]["fits"] is False and j["inference"]["max_users"] == 0'
expect_json '"47376" in j["inference"]["refusal"] and j["inference"]["max_ctx"] == 47376'
expect_json 'j["inference"]["ttft_seconds"] is None and j["inference"]["decode_tokens_per_second_per_user"] is None'

test_case "fp8 KV cache doubles the blocks; transformers has none"
run estimate llama3.1-8b --mode infer --engine vllm --kv-cache-dtype fp8 --gpu rtx-4090 --ctx 8192 --json
expect_json 'j["inference"]["kv_blocks"] == 5923 and j["inference"]["kv_bytes_per_token"] == 65536'
run estimate llama3.1-8b --mode infer --gpu rtx-4090 --ctx 8192 --users 2 --json
expect_rc 0
expect_json 'j["inference"]["engine"] == "transformers" and j["inference"]["kv_blocks"] is None and j["inference"]["max_users"] >= 1'
run estimate llama3.1-8b --mode infer --gpu rtx-4090 --ctx 8192
expect_out_re '^Inference \(transformers: context 8192 tokens'

test_case "llamacpp: llama3.1-8b Q4_K_M (4.58 GiB, 4.89 bits per weight) and a 70B offload"
run estimate llama3.1-8b --mode infer --engine llamacpp --gpu rtx-4090 --json
expect_rc 0
expect_json 'j["inference"]["engine"] == "llamacpp" and j["inference"]["gpu_layers"] == 32 and j["inference"]["output_on_gpu"] is True'
expect_json 'j["inference"]["weights_bytes"] + j["inference"]["host_bytes"] == 4912898048 and abs(j["inference"]["bits_per_weight"] - 4.894) < 0.001'
expect_json 'j["inference"]["ctx"] == 4096 and j["gpus"][0]["fits"] is True'
run estimate llama3.1-70b --mode infer --engine llamacpp --gpu rtx-4090 --json
expect_json 'j["gpus"][0]["fits"] is False and j["inference"]["fits"] is False'
run estimate llama3.1-70b --mode infer --engine llamacpp --gpu rtx-4090
expect_out 'rtx-4090: llama.cpp does not fit: 80 layers and the output'
# -ngl 40 counts the output layer as llama.cpp does: layers 41-79 and the output
run estimate llama3.1-70b --mode infer --engine llamacpp --n-gpu-layers 40 --host-bandwidth 80 --gpu rtx-4090 --json
expect_json 'j["inference"]["gpu_layers"] == 39 and j["inference"]["output_on_gpu"] is True and j["inference"]["host_bytes"] > 20e9 and j["gpus"][0]["fits"] is True'
run estimate llama3.1-70b --mode infer --engine llamacpp --n-gpu-layers 40 --gpu rtx-4090
expect_out 'Memory as llama.cpp lays it out'
expect_out 'weights (39 layers + output)'

test_case "llamacpp over two GPUs: layer split (default), row split, --tensor-split"
run estimate llama3.1-70b --mode infer --engine llamacpp --gpu rtx-3090:2 --ctx 4096
expect_rc 0
expect_out 'GPU 1, the fullest of 2 (layer split)'
expect_out '  GPU 0: layers 0-40,'
expect_out '  GPU 1: layers 41-79 + output,'
run estimate llama3.1-70b --mode infer --engine llamacpp --gpu rtx-3090:2 --ctx 4096 --json
expect_json 'j["inference"]["split_mode"] == "layer" and [d["layers"] for d in j["inference"]["devices"]] == [41, 39] and j["gpus"][0]["fits"] is True'
run estimate llama3.1-70b --mode infer --engine llamacpp --gpu rtx-3090:2 --ctx 4096 --split-mode row --json
expect_json 'j["inference"]["split_mode"] == "row" and j["inference"]["fits"] is True'
run estimate llama3.1-70b --mode infer --engine llamacpp --gpu rtx-3090:2 --ctx 4096 --split-mode none --json
expect_json 'j["inference"]["split_mode"] == "none" and j["inference"]["fits"] is False'
run estimate llama3.1-70b --mode infer --engine llamacpp --gpu rtx-3090:2 --ctx 4096 --tensor-split 3,1
expect_out 'llama.cpp does not fit: 61 layers'
expect_out 'on GPU 0 of 2'
run estimate llama3.1-70b --mode infer --engine llamacpp --gpu rtx-3090:2 --tensor-split 3,x
expect_rc 2
expect_err "--tensor-split: '3,x': ratio 2 is not a number"
run estimate llama3.1-70b --mode infer --engine vllm --gpu rtx-3090:2 --split-mode row
expect_rc 2

test_case "fit --mode infer --engine: the ways to serve llama3.1-70b on two RTX 3090"
run fit llama3.1-70b --mode infer --engine any --gpu rtx-3090:2 --ctx 4096
expect_rc 0
expect_out 'Serving llama3.1-70b'
expect_out_re '^rtx-3090 x2 +vllm tp 2, int4 weights, fp8 KV +2 '
expect_out 'layers in host memory'
expect_out_re 'llamacpp q4_k_m, layer split over 2 GPUs +2 '
run fit llama3.1-70b --mode infer --engine vllm --gpu rtx-3090:2 --ctx 4096 --json
expect_rc 0
expect_json 'j["gpus"][0]["id"] == "rtx-3090" and j["gpus"][0]["options"][0]["inference"]["kv_blocks"] == 353'
expect_json 'all(o["inference"]["engine"] == "vllm" and o["inference"]["fits"] for o in j["gpus"][0]["options"])'
run fit llama3.1-70b --engine vllm --gpu rtx-3090:2
expect_rc 2
expect_err 'with --mode infer'

test_case "fit --mode infer without --engine: the ways to serve (issue 27's question), not a training grid"
run fit llama3.1-70b --mode infer --gpu rtx-3090:2 --ctx 4096
expect_rc 0
expect_out 'Serving llama3.1-70b'
expect_out_re '^rtx-3090 x2 +vllm tp 2, int4 weights, fp8 KV +2 '
expect_out_re 'llamacpp q4_k_m, layer split over 2 GPUs +2 '
run fit llama3.1-70b --mode infer --gpu rtx-3090:2 --json
expect_rc 0
expect_json 'j["engine"] == "any" and j["gpus"][0]["count"] == 2'

test_case "fit --mode infer without --ctx (issue 27's acceptance line): vLLM at the max_model_len that fits, as settings needed"
# llama3.1-70b's 131072-token max_model_len does not fit one sequence on two
# RTX 3090 at any vLLM option; tp 2 int4 + fp8 KV has 353 blocks of 16 tokens
# = 5648 tokens (bf16 KV: 176 blocks = 2816), so the fit offers those lengths
run fit llama3.1-70b --mode infer --gpu rtx-3090:2
expect_rc 0
expect_out_re '^rtx-3090 x2 +vllm tp 2, int4 weights, fp8 KV, max_model_len 5648 +2 +4-bit weights; fp8 KV cache; context 5648 of 131072 tokens +1 '
expect_out_re '^ +vllm tp 2, int4 weights, max_model_len 2816 +2 '
expect_out_re 'llamacpp q4_k_m, layer split over 2 GPUs +2 '
expect_out "Settings needed: vLLM refuses the model's max_model_len of 131072 tokens"
expect_out 'vllm serve --max-model-len N (vramfit estimate --ctx N)'
expect_out '(the longest here: vllm serve --max-model-len 5648, vramfit estimate --ctx 5648)'
expect_out 'or the max_model_len marked'
run fit llama3.1-70b --mode infer --gpu rtx-3090:2 --json
expect_rc 0
expect_json 'j["gpus"][0]["options"][0]["settings_needed"] == {"max_model_len": 5648} and j["gpus"][0]["options"][0]["inference"]["ctx"] == 5648'
expect_json 'j["gpus"][0]["options"][0]["inference"]["kv_blocks"] == 353 and j["gpus"][0]["options"][0]["inference"]["fits"] is True and j["gpus"][0]["options"][0]["inference"]["max_users"] == 1'
expect_json 'all(o["settings_needed"] == {} for o in j["gpus"][0]["options"] if o["inference"]["engine"] == "llamacpp")'
# the same option through estimate: the same blocks, users and speed
run estimate llama3.1-70b --mode infer --engine vllm --gpu rtx-3090:2 --tp 2 --quant int4 --kv-cache-dtype fp8 --ctx 5648 --json
expect_rc 0
expect_json 'j["inference"]["kv_blocks"] == 353 and j["inference"]["max_users"] == 1 and j["inference"]["fits"] is True'
run estimate llama3.1-70b --mode infer --engine vllm --gpu rtx-3090:2 --tp 2 --quant int4 --kv-cache-dtype fp8 --ctx 5664 --json
expect_rc 0
expect_json 'j["inference"]["fits"] is False'
# --ctx given: never shortened
run fit llama3.1-70b --mode infer --gpu rtx-3090:2 --ctx 8192 --json
expect_rc 0
expect_json 'all(o["inference"]["engine"] == "llamacpp" for o in j["gpus"][0]["options"])'
for bad in "--html $TMP/serve.html" "--sort cost" "--tokens 1e9" --exhaustive "--price 2" "--margin 0.2" "--forbid quant"; do
  run fit llama3.1-70b --mode infer --gpu rtx-3090:2 $bad
  expect_rc 2
  expect_err "${bad%% *}: not for the ways to serve"
done
check '[ ! -e "$TMP/serve.html" ]'
run fit llama3.1-8b --mode infer --search --gpu rtx-4090 --ctx 4096
expect_rc 2
expect_err 'without --search'

test_case "fit --engine transformers (issue 27): generate()'s ways to serve, inference figures and assumptions only"
run fit llama3.1-8b --mode infer --engine transformers --gpu rtx-4090:8
expect_rc 0
expect_out 'Serving llama3.1-8b (--mode infer: 1 user at 2048 (the prompt, --seq) tokens of context'
expect_out_re '^rtx-4090 x8 +transformers bf16 +1 +- '
expect_out_re 'transformers nf4 \(bitsandbytes\) +1 +4-bit weights '
expect_out 'tok/s per user'
expect_out 'generate() does no tensor parallel and no ZeRO/FSDP sharding'
for training in 'ZeRO-1' 'ZeRO-3/FSDP' 'DDP' '$/Mtok' 'all-reduce' 'gradient' ', layer split over'; do
  expect_no_out "$training"
done
run fit llama3.1-8b --mode infer --engine transformers --gpu rtx-4090:8 --ctx 4096 --users 2 --json
expect_rc 0
expect_json 'j["engine"] == "transformers" and "scheduling" not in j'
expect_json 'all(o["gpus"] == 1 and o["inference"]["engine"] == "transformers" and o["inference"]["max_users"] >= 2 and o["inference"]["ctx"] == 4096 for o in j["gpus"][0]["options"])'
expect_json 'all(o["inference"]["ttft_seconds"] > 0 and o["inference"]["decode_tokens_per_second_per_user"] > 0 and o["inference"]["kv_bytes_per_token"] == 131072 for o in j["gpus"][0]["options"])'
cp "$TMP/out" "$TMP/fit-generate.json"
# the same option through estimate: the same users and speeds
run estimate llama3.1-8b --mode infer --engine transformers --gpu rtx-4090 --ctx 4096 --users 2 --json
expect_rc 0
expect_json '[(o["inference"]["max_users"], o["inference"]["decode_tokens_per_second_per_user"], o["inference"]["ttft_seconds"]) for o in json.load(open("'"$TMP"'/fit-generate.json"))["gpus"][0]["options"] if o["option"] == "transformers bf16"] == [(j["inference"]["max_users"], j["inference"]["decode_tokens_per_second_per_user"], j["inference"]["ttft_seconds"])]'
run fit llama3.1-8b --mode infer --engine transformers --gpu rtx-4090,rtx-3090
expect_rc 2
expect_err 'transformers over unequal cards'
run fit llama3.1-8b --mode infer --engine transformers --gpu rtx-4090 --no-async-scheduling
expect_rc 2

test_case "the inference flags' errors"
run estimate llama3.1-8b --engine vllm --gpu rtx-4090
expect_rc 2
expect_err 'apply to --mode infer'
run estimate llama3.1-8b --mode infer --kv-cache-dtype fp8 --gpu rtx-4090
expect_rc 2
expect_err 'apply to --engine vllm'
run estimate llama3.1-8b --mode infer --engine tgi --gpu rtx-4090
expect_rc 2
run estimate llama3.1-8b --mode infer --engine vllm --kv-cache static --gpu rtx-4090 --ctx 8192
expect_rc 2
expect_err 'applies to --engine transformers'
run estimate llama3.1-8b --mode infer --kv-cache dynamic --gpu rtx-4090 --ctx 8192 --json
expect_rc 0
expect_json 'j["inference"]["kv_cache"] == "dynamic" and j["inference"]["kv_growth_bytes"] == 16777216'
run estimate llama3.1-8b --mode infer --kv-cache static --gpu rtx-4090 --ctx 8192 --json
expect_rc 0
expect_json 'j["inference"]["kv_cache"] == "static" and j["inference"]["kv_growth_bytes"] == 0'
run estimate ltx-2-19b --mode infer --engine vllm --gpu h100-80gb
expect_rc 2
expect_err 'apply to language models'
run estimate llama3.1-8b --mode infer --engine vllm --gguf-type q8_0 --gpu rtx-4090
expect_rc 2
expect_err 'apply to --engine llamacpp'
run estimate llama3.1-8b --mode infer --engine llamacpp --quant int4 --gpu rtx-4090
expect_rc 2
expect_err 'not --quant'
run estimate llama3.1-8b --mode infer --engine vllm --ctx 1024 --seq 2048 --gpu rtx-4090
expect_rc 2
expect_err 'longer than --ctx'

test_case "transformers, --ctx longer than the prompt: fits and headroom are one sequence of --ctx's, the peak they judge is given (vram - headroom)"
for c in 8192 32768; do
  run estimate llama3.1-8b --mode infer --gpu rtx-4090 --ctx $c --json
  expect_rc 0 # an answer either way: does not fit is not a failure of the command
  expect_json '[g["vram_bytes"] - g["headroom_bytes"] == g["ctx_peak_bytes"] > g["peak_bytes"] for g in j["gpus"]] == [True]'
  expect_json '[g["fits"] == (g["headroom_bytes"] >= 0) == (g["max_batch"] >= 1) for g in j["gpus"]] == [True]'
done
run estimate llama3.1-8b --mode infer --gpu rtx-4090 --ctx 8192
expect_out_re 'rtx-4090: fits and headroom are one sequence of 8192 tokens \(--ctx\), peak [0-9.]+ GiB with its KV cache; the memory table is the 2048-token prompt'
run estimate llama3.1-8b --mode infer --gpu rtx-4090 --ctx 32768
expect_out_re 'generate\(\) does not fit: .* \(needs [0-9.]+ GiB of 23.99 GiB; the memory table is the 2048-token prompt'
# --ctx equal to the prompt: the memory table's forward is the verdict
run estimate llama3.1-8b --mode infer --gpu rtx-4090 --ctx 2048 --json
expect_json '"ctx_peak_bytes" not in j["gpus"][0]'

test_case "--ctx shorter than the default prompt: refused, not a prompt shortened in one table only"
run estimate llama3.1-8b --mode infer --gpu rtx-4090 --ctx 512
expect_rc 2
expect_err '--seq 2048 (the prompt, by default) is longer than --ctx 512: give --seq 512 or less'
expect_no_out 'Setup'
run estimate llama3.1-8b --mode infer --gpu rtx-4090 --ctx 512 --json
expect_rc 2
run estimate llama3.1-8b --mode infer --gpu rtx-4090 --ctx 512 --seq 512 --json
expect_rc 0
expect_json 'j["inference"]["ctx"] == 512 and j["setup"]["seq"] == 512'
run fit llama3.1-8b --mode infer --gpu rtx-4090 --ctx 512
expect_rc 2
expect_err '--seq 2048 (the prompt, by default) is longer than --ctx 512'
run fit llama3.1-8b --mode infer --gpu rtx-4090 --ctx 1024 --seq 2048
expect_rc 2
expect_err '--seq 2048 (the prompt) is longer than --ctx 1024'
run fit llama3.1-8b --mode infer --gpu rtx-4090 --ctx 512 --seq 512
expect_rc 0

test_case "transformers: --users N sequences decode together (no queue): the row's verdict and headroom are theirs"
# llama3-8b on an RTX 4090 at --ctx 8192: max users 1; 64 users said "fits
# yes, headroom 686 MiB" beside "64 users do not all fit ... the engine
# queues the rest", though generate() holds every sequence's KV cache
run estimate llama3-8b --mode infer --users 64 --ctx 8192 --gpu rtx-4090 --json
expect_rc 0
expect_json '(lambda g: not g["fits"] and g["headroom_bytes"] < 0 and g["users_peak_bytes"] > g["vram_bytes"] and g["inference"]["fits"] and 1 <= g["max_batch"] < 64 and ("at most %d do" % g["max_batch"]) in g["inference"]["refusal"])(j["gpus"][0])'
mu4=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["gpus"][0]["max_batch"])')
run estimate llama3-8b --mode infer --users 64 --ctx 8192 --gpu rtx-4090
expect_out_re '^rtx-4090 +23.99 GiB +no +-'
expect_out "rtx-4090: generate() does not fit: 64 sequences of 8192 tokens at once do not fit"
expect_out "try --users $mu4 and the rest in turns"
expect_no_out "the engine queues the rest"
# at the max users they fit, the headroom theirs (not one sequence's)
mu=$("$VRAMFIT" estimate llama3-8b --mode infer --users 2 --ctx 4096 --gpu a100-80gb --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["gpus"][0]["max_batch"])')
run estimate llama3-8b --mode infer --users "$mu" --ctx 4096 --gpu a100-80gb --json
expect_json '(lambda g: g["fits"] and g["headroom_bytes"] == g["vram_bytes"] - g["users_peak_bytes"] and g["headroom_bytes"] >= 0 and g["inference"]["users"] == '"$mu"')(j["gpus"][0])'
run estimate llama3-8b --mode infer --users "$mu" --ctx 4096 --gpu a100-80gb
expect_out "fits and headroom are $mu sequences of 4096 tokens at once (--users, --ctx)"
run estimate llama3-8b --mode infer --users $((mu + 1)) --ctx 4096 --gpu a100-80gb --json
expect_json '(lambda g: not g["fits"] and g["headroom_bytes"] < 0)(j["gpus"][0])'
# vLLM queues what its blocks do not hold: still a yes, and says so
run estimate llama3-8b --mode infer --engine vllm --users 512 --ctx 8192 --gpu a100-80gb
expect_rc 0
expect_out "the engine queues the rest"
expect_out_re '^a100-80gb +80.00 GiB +yes'

test_case "transformers: the users at --ctx judged by the allocator replay the row's own peak runs"
# gemma3-12b at 8192 tokens on an L4: the row (replayed: 18.86 GiB with
# nf4) fit while one sequence of --ctx was judged analytically (27.36
# GiB): the advice "quant int8 -> nf4 (peak 18.86 GiB)", followed, said no
run estimate gemma3-12b --mode infer --seq 8192 --quant int8 --gpu l4 --json
expect_rc 0
adv=$(printf '%s' "$out" | python3 -c 'import json,sys; a=json.load(sys.stdin)["gpus"][0]["advice"][0]; print(a["changes"][0]["knob"], a["changes"][0]["to"], a["peak_bytes"])')
check '[ "${adv% *}" = "quant nf4" ]'
run estimate gemma3-12b --mode infer --seq 8192 --quant nf4 --gpu l4 --json
expect_json '(lambda g: g["fits"] and g["peak_bytes"] == '"${adv##* }"' and g["max_batch"] >= 1)(j["gpus"][0])'
# the same figure where --ctx is longer than the prompt: one sequence of it
# is the row's replayed forward at --ctx with the cache's growth
run estimate llama3.1-8b --mode infer --gpu rtx-4090 --ctx 16384 --json
expect_json '(lambda g: g["fits"] == (g["max_batch"] >= 1) == (g["headroom_bytes"] >= 0))(j["gpus"][0])'

test_case "transformers: the advice of a row judged as the row is, --users sequences of --ctx at once"
# llama2-13b, 4 users at 4096 tokens on an RTX 3090: the advice offered
# --quant int8 / nf4, whose prompt forward fits; followed, at most 2 / 3
# users fit, a no
run estimate llama2-13b --mode infer --seq 4096 --users 4 --gpu rtx-3090 --json
expect_rc 0
expect_json '(lambda g: not g["fits"] and g["advice"] == [] and "at most 3 do (--users 3" in g["advice_note"])(j["gpus"][0])'
run estimate llama2-13b --mode infer --seq 4096 --users 4 --gpu rtx-3090
expect_out "no change fits 4 sequences of 4096 tokens at once: with quant none -> nf4 at most 3 do (--users 3, the rest in turns)"
expect_no_out "try --quant int8 or nf4"
run estimate llama2-13b --mode infer --seq 4096 --users 3 --quant nf4 --gpu rtx-3090 --json
expect_json 'j["gpus"][0]["fits"] and j["gpus"][0]["max_batch"] == 3'
# an advice kept is the users' figure: followed, it fits at that peak
run estimate llama2-13b --mode infer --users 2 --ctx 4096 --gpu rtx-3090 --json
expect_rc 0
expect_json 'len(j["gpus"][0]["advice"]) >= 1'
printf '%s' "$out" | python3 -c '
import json, sys
g = json.load(sys.stdin)["gpus"][0]
for a in g.get("advice", []):
    print(" ".join("--%s %s" % (c["knob"].replace("_", "-"), c["to"]) for c in a["changes"]), a["peak_bytes"])
' > "$TMP/adv.txt"
while read -r line; do
  flags=${line% *}; peak=${line##* }
  run estimate llama2-13b --mode infer --users 2 --ctx 4096 --gpu rtx-3090 $flags --json
  expect_json 'j["gpus"][0]["fits"] and j["gpus"][0].get("users_peak_bytes", j["gpus"][0]["peak_bytes"]) == '"$peak"
done < "$TMP/adv.txt"

test_case "--mode infer: --batch N is N sequences decoding at once, as --users N (it showed 1 user decoding)"
# llama3-8b at 4096 tokens on an RTX 4090: --batch 8 was judged as one
# user while the memory table was 8 prompts; vLLM dropped it unsaid
run estimate llama3-8b --mode infer --batch 8 --ctx 4096 --gpu rtx-4090 --json
expect_rc 0
expect_json 'j["inference"]["users"] == 8 and not j["gpus"][0]["fits"]'
batch_json=$out
run estimate llama3-8b --mode infer --users 8 --ctx 4096 --gpu rtx-4090 --json
check '[ "$(printf "%s" "$batch_json" | python3 -c "import json,sys; g=json.load(sys.stdin)[\"gpus\"][0]; print(g[\"users_peak_bytes\"], g[\"fits\"])")" = "$(printf "%s" "$out" | python3 -c "import json,sys; g=json.load(sys.stdin)[\"gpus\"][0]; print(g[\"users_peak_bytes\"], g[\"fits\"])")" ]'
# the hint names the flag given, so following it is not a conflict
run estimate llama3-8b --mode infer --batch 8 --ctx 4096 --gpu rtx-4090
expect_out "8 users decoding"
expect_out "try --batch 5 and the rest in turns"
run estimate llama3-8b --mode infer --batch 5 --ctx 4096 --gpu rtx-4090 --json
expect_json 'j["gpus"][0]["fits"]'
run estimate llama3.1-8b --mode infer --engine vllm --batch 4 --ctx 8192 --gpu rtx-4090 --json
expect_json 'j["inference"]["users"] == 4'
# both given: one number, so they must agree
run estimate llama3-8b --mode infer --batch 8 --users 4 --gpu a100-80gb
expect_rc 2
expect_err "--batch 8 and --users 4 both name the sequences decoding at once"
run estimate llama3-8b --mode infer --batch 4 --users 4 --gpu a100-80gb --json
expect_rc 0
run fit llama3.1-8b --mode infer --batch 4 --ctx 8192 --gpu rtx-4090 --json
expect_rc 0
expect_json 'j["users"] == 4'
run fit llama3.1-8b --mode infer --batch 4 --users 2 --ctx 8192 --gpu rtx-4090
expect_rc 2

test_case "--mode infer: training flags it has no use for are named ignored (they were dropped unsaid)"
run estimate llama3-8b --mode infer --gpu a100-80gb --loss chunked --offload optimizer --grad-clip foreach --modules-to-save lm_head --json
expect_rc 0
expect_json 'any(a.startswith("--grad-clip, --loss, --offload, --modules-to-save ignored: inference runs no loss") for a in j["assumptions"])'
run estimate llama3-8b --mode infer --gpu a100-80gb --json
expect_json 'not any("ignored: inference runs no loss" in a for a in j["assumptions"])'

test_case "fit --mode infer: a setup flag the ways to serve do not take is refused (--grad-ckpt, --lora-rank, --loss were dropped; --quant nf4 and --precision fp16 moved llama.cpp's TTFT alone)"
for flag in "--grad-ckpt" "--lora-rank 64" "--grad-accum 4" "--precision fp16" "--shard zero3" "--quant nf4" "--loss chunked" "--stack litgpt" "--head classify:2"; do
  # shellcheck disable=SC2086
  run fit llama3.1-8b --mode infer --gpu rtx-4090 $flag
  expect_rc 2
  expect_err "${flag%% *}: not for the ways to serve (--mode infer)"
done
run fit llama3.1-8b --mode infer --gpu rtx-4090 --seq 1024 --context-mib 900 --batch 2 --json
expect_rc 0

test_case "estimate --engine vllm|llamacpp: a setup flag the engine's own kernels do not take is refused (--compile, --stack, --shard, --price were dropped; --precision fp16, --attention eager and --compile moved llama.cpp's TTFT)"
for eng in vllm llamacpp; do
  for flag in "--attention eager" "--compile" "--grad-accum 4" "--stack litgpt" "--shard zero3" "--no-autocast" "--price 3" "--head classify:2"; do
    # shellcheck disable=SC2086
    run estimate llama3.1-8b --mode infer --engine $eng --gpu rtx-4090 $flag
    expect_rc 2
    expect_err "not for --engine $eng, which runs its own kernels"
  done
  run estimate llama3.1-8b --mode infer --engine $eng --gpu rtx-4090 --seq 1024 --batch 2 --context-mib 900 --json
  expect_rc 0
done
run estimate llama3.1-8b --mode infer --engine llamacpp --gpu rtx-4090 --precision fp16
expect_rc 2
expect_err "--precision: not for --engine llamacpp"
run estimate llama3.1-8b --mode infer --engine vllm --gpu rtx-4090 --precision fp16 --quant int4 --json
expect_rc 0
run estimate llama3.1-8b --mode infer --engine vllm --gpu rtx-4090 --no-autocast
expect_err "--(no-)autocast: not for --engine vllm"

test_case "vLLM that cannot start: the headroom is the budget's shortfall, not minus one sequence's cache on every card"
# llama2-70b, 16 users at 4096 tokens: -1.25 GiB on a T4 and on an H100 alike
run estimate llama2-70b --mode infer --engine vllm --users 16 --ctx 4096 --gpu t4 --gpu h100-80gb --json
expect_rc 0
expect_json 'all(not g["fits"] and g["headroom_bytes"] == g["inference"]["kv_room_bytes"] - g["inference"]["kv_bytes_per_token"] * 4096 for g in j["gpus"])'
expect_json 'j["gpus"][0]["headroom_bytes"] < j["gpus"][1]["headroom_bytes"] < -60 * 2**30'

test_case "estimate --mode infer --tokens: refused as fit refuses it (the whole run was prompt forwards priced as the tokens generated: 9.5 h for 1e9 tokens at 29k tokens/s beside decode's 40)"
run estimate llama2-7b --mode infer --gpu h100-80gb --tokens 1e9
expect_rc 2
expect_err "--tokens/--steps: the whole run of a training step; --mode infer has none"
run estimate llama2-7b --mode infer --gpu h100-80gb --steps 100
expect_rc 2

finish
