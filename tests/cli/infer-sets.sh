#!/usr/bin/env bash
# infer-sets.sh - one machine's unequal cards for --mode infer (issue 27):
# `--gpu rtx-3090,rtx-4080` as one row that llama.cpp splits by each card's
# free memory, the probe's devices as one set for --engine llamacpp (with
# their free memory), what vLLM and transformers do instead (refused, with
# the reason), and fit --mode infer over a set and --no-async-scheduling.
# The splits are derived by hand below (tests/unit/test-infer.c has the
# library's side).
. "$(dirname "$0")/lib.sh"
export XDG_CONFIG_HOME="$TMP/config"
unset VRAMFIT_DATA_DIR CUDA_VISIBLE_DEVICES VF_FAKE_SMI || true
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI="$TMP/no-such-smi"
SMI="$VF_SOURCE_DIR/tests/helpers/fake-nvidia-smi"

test_case "--gpu rtx-3090,rtx-4080: one row, llama.cpp's split by free memory"
# free = card - 480 MiB CUDA context: 24576 - 480 = 24096 and 16376 - 480
# = 15896 MiB; GPU 0's share 24096 / 39992 = 0.60252; llama3.1-8b's 33
# placements (32 layers + output): GPU 0 while il / 33 < 0.60252 -> il 0-19
# (20 layers), GPU 1 layers 20-31 and the output (equal cards: 17 / 15)
run estimate llama3.1-8b --mode infer --engine llamacpp --gpu rtx-3090,rtx-4080 --ctx 8192
expect_rc 0
expect_out_re '^rtx-3090\+rtx-4080 +24\.00 GiB \+ 15\.99 GiB +yes'
expect_out '  GPU 0 (rtx-3090): layers 0-19'
expect_out '  GPU 1 (rtx-4080): layers 20-31 + output'
expect_out 'GPU 1 (rtx-4080), the fullest of 2 (layer split)'
expect_out "rtx-3090+rtx-4080: 2 cards serving together (--gpu A,B); llama.cpp's layer shares 0.60/0.40"
run estimate llama3.1-8b --mode infer --engine llamacpp --gpu rtx-3090,rtx-4080 --ctx 8192 --json
expect_rc 0
expect_json 'j["gpus"][0]["id"] == "rtx-3090+rtx-4080" and j["gpus"][0]["count"] == 2'
expect_json '[d["id"] for d in j["gpus"][0]["set"]] == ["rtx-3090", "rtx-4080"] and j["gpus"][0]["set"][1]["probed_free_bytes"] is None'
expect_json '[d["layers"] for d in j["inference"]["devices"]] == [20, 12] and j["inference"]["devices"][1]["output"] is True'
expect_json 'abs(j["inference"]["devices"][0]["split"] - 24096 / 39992) < 1e-9'
# --tensor-split wins: equal shares, 17 layers on GPU 0
run estimate llama3.1-8b --mode infer --engine llamacpp --gpu rtx-3090,rtx-4080 --ctx 8192 --tensor-split 1,1 --json
expect_rc 0
expect_json '[d["layers"] for d in j["inference"]["devices"]] == [17, 15]'
# the report's users against context are the set's: at --ctx the row's 33
run estimate llama3.1-8b --mode infer --engine llamacpp --gpu rtx-3090,rtx-4080 --ctx 8192 --html "$TMP/set.html"
expect_rc 0
sweep=$(python3 -c '
import json, re, sys
t = open(sys.argv[1]).read()
i = t.index("\"inference_sweep\":") + len("\"inference_sweep\":")
o, _ = json.JSONDecoder().raw_decode(t[i:])
g = o["gpus"][0]
print(g["gpu"], g["max_users"][g["contexts"].index(8192)])' "$TMP/set.html")
[ "$sweep" = "rtx-3090+rtx-4080 33" ] && _ok || _bad "inference sweep at 8192: '$sweep', expected 'rtx-3090+rtx-4080 33'"
# the same cards as two rows of a kind each compare, they do not serve together
run estimate llama3.1-8b --mode infer --engine llamacpp --gpu rtx-3090 --gpu rtx-4080 --ctx 8192 --json
expect_rc 0
expect_json '[g["id"] for g in j["gpus"]] == ["rtx-3090", "rtx-4080"] and "set" not in j["gpus"][0]'

test_case "sets keep the command line's order; a set of one kind is ID:N"
run estimate llama3.1-8b --mode infer --engine llamacpp --gpu rtx-4090 --gpu rtx-3090:2,rtx-4080 --ctx 8192 --json
expect_rc 0
expect_json '[g["id"] for g in j["gpus"]] == ["rtx-4090", "rtx-3090x2+rtx-4080"] and j["gpus"][1]["count"] == 3'
expect_json '[d["id"] for d in j["gpus"][1]["set"]] == ["rtx-3090", "rtx-3090", "rtx-4080"]'
run estimate llama3.1-8b --mode infer --engine vllm --gpu rtx-4090,rtx-4090 --ctx 8192 --json
expect_rc 0
same_set=$out
run estimate llama3.1-8b --mode infer --engine vllm --gpu rtx-4090:2 --ctx 8192 --json
expect_rc 0
[ "$same_set" = "$out" ] && _ok || _bad "--gpu rtx-4090,rtx-4090 differs from --gpu rtx-4090:2"

test_case "unequal cards where the engine cannot use them: refused, saying what it does"
run estimate llama3.1-8b --mode infer --engine vllm --gpu rtx-3090,rtx-4080 --ctx 8192
expect_rc 2
expect_err 'vLLM over unequal cards cuts the model into equal tensor-parallel shards'
expect_err 'get_kv_cache_configs'
run estimate llama3.1-8b --mode infer --gpu rtx-3090,rtx-4080
expect_rc 2
expect_err 'transformers over unequal cards'
run estimate llama3.1-8b --gpu rtx-3090,rtx-4080
expect_rc 2
expect_err 'to train, give each kind as --gpu ID:N'
run estimate llama3.1-8b --mode infer --engine llamacpp --gpu rtx-3090,rtx-4080 --split layers
expect_rc 2
expect_err 'llama.cpp splits a set by itself'
run estimate llama3.1-8b --mode infer --engine llamacpp --gpu rtx-3090,,rtx-4080
expect_rc 2
expect_err '--gpu rtx-3090,,rtx-4080: GPU 2 of the set is empty'
run estimate llama3.1-8b --mode infer --engine llamacpp --gpu rtx-3090,rtx-9999
expect_rc 2
expect_err "unknown GPU id 'rtx-9999'"
run estimate llama3.1-8b --mode infer --engine llamacpp --gpu "rtx-3090:9,rtx-4080:8"
expect_rc 2
expect_err 'at most 16 serve together'

test_case "the probe's devices: one set for llama.cpp, with their free memory"
# two_cards FILE USED FREE: nvidia-smi's listing of an RTX 3090 with USED of
# its 24576 MiB held by another process (FREE free) and an idle RTX 4080
two_cards() {
  printf '%s\n' \
    "0, GPU-00000000-0000-0000-0000-000000003090, NVIDIA GeForce RTX 3090, 24576, $2, $3, 8.6, 580.159.04" \
    '1, GPU-00000001-0000-0000-0000-000000004080, NVIDIA GeForce RTX 4080, 16376, 0, 16376, 8.9, 580.159.04' \
    >"$TMP/$1"
}
# probed FILE ARGS...: run vramfit ARGS on the machine nvidia-smi lists in FILE
probed() { local f=$1; shift; VRAMFIT_NVIDIA_SMI="$SMI" VF_FAKE_SMI="raw:$TMP/$f" run "$@"; }
# 4 GiB held on the 3090 (20480 MiB free): shares (20480 - 480) / (20000 +
# 15896) = 0.55716 -> GPU 0 while il / 33 < 0.55716 -> il 0-18 (19 layers)
two_cards smi-mixed.txt 4096 20480
probed smi-mixed.txt estimate llama3.1-8b --mode infer --engine llamacpp --ctx 8192 --json
expect_rc 0
expect_json 'len(j["gpus"]) == 1 and j["gpus"][0]["id"] == "rtx-3090+rtx-4080"'
expect_json 'j["gpus"][0]["set"][0]["probed_free_bytes"] == 20480 * 2**20'
expect_json 'abs(j["inference"]["devices"][0]["split"] - 20000 / 35896) < 1e-9'
expect_json '[d["layers"] for d in j["inference"]["devices"]] == [19, 13]'
probed smi-mixed.txt estimate llama3.1-8b --mode infer --engine llamacpp --ctx 8192
expect_rc 0
expect_out 'GPUs (this machine)'
expect_out "2 cards serving together (the probed devices); llama.cpp's layer shares 0.56/0.44, from each card's free memory as probed less the CUDA context"
# 2048 MiB free on the 3090: (2048 - 480) / (1568 + 15896) = 0.08978 -> 3
# layers, and GPU 0 holds no more than its free memory: the fullest
two_cards smi-busy.txt 22528 2048
probed smi-busy.txt estimate llama3.1-8b --mode infer --engine llamacpp --ctx 8192 --json
expect_rc 0
expect_json '[d["layers"] for d in j["inference"]["devices"]] == [3, 29]'
expect_json 'j["gpus"][0]["headroom_bytes"] < 2048 * 2**20 and j["gpus"][0]["fits"] is True'
# vLLM: the probed kinds stay rows of their own
probed smi-mixed.txt estimate llama3.1-8b --mode infer --engine vllm --ctx 8192 --json
expect_rc 0
expect_json '[g["id"] for g in j["gpus"]] == ["rtx-3090", "rtx-4080"]'

test_case "fit --mode infer over a set: llama.cpp's options on those cards"
run fit llama3.1-70b --mode infer --gpu rtx-3090,rtx-4080 --ctx 4096 --json
expect_rc 0
expect_json 'j["gpus"][0]["id"] == "rtx-3090+rtx-4080" and j["gpus"][0]["set"] == ["rtx-3090", "rtx-4080"] and j["gpus"][0]["engines"] == "llamacpp"'
expect_json 'len(j["gpus"][0]["options"]) > 0 and all(o["inference"]["engine"] == "llamacpp" for o in j["gpus"][0]["options"])'
# the layer split follows each card's free memory: 24096 / 39992 on GPU 0
expect_json 'any(o["gpus"] == 2 and abs(o["inference"]["devices"][0]["split"] - 24096 / 39992) < 1e-9 for o in j["gpus"][0]["options"])'
run fit llama3.1-70b --mode infer --gpu rtx-3090,rtx-4080 --ctx 4096
expect_rc 0
expect_out_re '^rtx-3090\+rtx-4080 +llamacpp .*layer split over 2 GPUs'
expect_out "(the set's GPU 0, rtx-3090)"
expect_out 'A set of unequal cards (--gpu A,B): llama.cpp alone'
run fit llama3.1-70b --mode infer --engine vllm --gpu rtx-3090,rtx-4080
expect_rc 2
expect_err 'vLLM over unequal cards cuts the model into equal tensor-parallel shards'
run fit llama3.1-70b --gpu rtx-3090,rtx-4080
expect_rc 2
expect_err 'a set of unequal cards is for --mode infer'
run fit llama3.1-70b --mode infer --gpu rtx-3090,nosuch
expect_rc 2
expect_err "unknown GPU id 'nosuch'"

test_case "fit --mode infer --no-async-scheduling: vLLM's host work adds to each step"
# 8 users on an H200: host work 1.4e-3 + 7 x 1.13e-6 = 1.40791e-3 s per
# step (tests/unit/test-infer.c), hidden behind the GPU step by default
run fit llama3.1-8b --mode infer --engine vllm --gpu h200 --ctx 8192 --users 8 --json
expect_rc 0
expect_json 'j["scheduling"] == "async" and all(o["inference"]["scheduling"] == "async" and o["inference"]["decode_host_seconds"] == 0 for o in j["gpus"][0]["options"])'
async_out=$out
run fit llama3.1-8b --mode infer --engine vllm --gpu h200 --ctx 8192 --users 8 --no-async-scheduling --json
expect_rc 0
expect_json 'j["scheduling"] == "sync" and all(o["inference"]["scheduling"] == "sync" for o in j["gpus"][0]["options"])'
expect_json 'all(abs(o["inference"]["decode_host_seconds"] - 1.40791e-3) < 1e-9 for o in j["gpus"][0]["options"] if o["gpus"] == 1)'
expect_json 'all(abs(o["inference"]["decode_step_seconds"] - o["inference"]["decode_device_seconds"] - o["inference"]["decode_host_seconds"]) < 1e-12 for o in j["gpus"][0]["options"])'
# each option: sync is the async step's device time plus the host's
printf '%s' "$async_out" >"$TMP/async.json"
expect_json 'all(abs(s["inference"]["decode_device_seconds"] - a["inference"]["decode_device_seconds"]) < 1e-12 and s["option"] == a["option"] for s, a in zip(sorted(j["gpus"][0]["options"], key=lambda o: o["option"]), sorted(json.load(open("'"$TMP"'/async.json"))["gpus"][0]["options"], key=lambda o: o["option"])))'
run fit llama3.1-8b --mode infer --engine vllm --gpu h200 --ctx 8192 --no-async-scheduling
expect_rc 0
expect_out 'synchronous scheduling (--no-async-scheduling)'
run fit llama3.1-8b --mode infer --engine llamacpp --gpu h200 --no-async-scheduling
expect_rc 2
expect_err '--no-async-scheduling applies to vLLM'
run fit llama3.1-8b --gpu h200 --no-async-scheduling
expect_rc 2
expect_err 'with --mode infer'

finish
