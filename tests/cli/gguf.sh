# gguf.sh - end-to-end: `vramfit inspect` on GGUF files written by
# tests/helpers/mk-gguf.py: the fixture tiny llama under llama.cpp's names
# (its exact count), a Llama 3.1 8B layout in k-quants (the catalog's exact
# count; a sparse file), every ggml type's bytes, and each malformed header
# (exit 1, one line naming the file and the problem).
. "$(dirname "$0")/lib.sh"
FX=$VF_SHARED_DIR/fixtures/models
MK="python3 $VF_SOURCE_DIR/tests/helpers/mk-gguf.py"
T=$TMP

test_case "the fixture tiny llama as GGUF: its exact count, bytes as stored"
want=$($MK "$T/tiny.gguf" --from-safetensors "$FX/tiny-llama-bf16/model.safetensors" \
  --config "$FX/tiny-llama-bf16/config.json" --types Q8_0,Q4_0,Q5_1,IQ4_NL,MXFP4 --vocab-strings)
run inspect "$T/tiny.gguf" --json
expect_rc 0
expect_json 'j["format"] == "gguf" and j["files"] == 1 and j["tensors"] == 21 and j["params"] == 218944'
W="$want" expect_json 'j["bytes"] == __import__("json").loads(__import__("os").environ["W"])["bytes"]'
W="$want" expect_json '{k: [v["params"], v["bytes"]] for k, v in j["ggml_types"].items()} == __import__("json").loads(__import__("os").environ["W"])["types"]'
a='j["architecture"]'
expect_json "$a[\"family\"] == \"llama\" and $a[\"hidden\"] == 64 and $a[\"layers\"] == 2 and $a[\"heads\"] == 4 and $a[\"kv_heads\"] == 2 and $a[\"head_dim\"] == 16 and $a[\"ffn\"] == 172 and $a[\"vocab\"] == 1000 and $a[\"tied_embeddings\"] is False and $a[\"source\"] == \"gguf\""
expect_json 'j["gguf"]["version"] == 3 and j["gguf"]["architecture"] == "llama" and j["gguf"]["vocab"] == 1000'
expect_json 'j["metadata"]["general.name"] == "tiny llama" and j["metadata"]["tokenizer.ggml.tokens"] == {"type": "string", "count": 1000}'
expect_json 'sum(j["param_groups"][k] for k in ("embedding","attention","mlp","norm","experts","other")) == 218944'
run inspect "$T/tiny.gguf"
expect_rc 0
expect_out "218,944"
expect_out "ggml types"
expect_out "Q8_0"
expect_out "(from gguf)"

test_case "Llama 3.1 8B in k-quants: the catalog's exact count"
want=$($MK "$T/l8b.gguf" --llama 4096,32,32,8,14336,128256,0 --types Q4_K,Q6_K,Q4_K --vocab-strings)
run inspect "$T/l8b.gguf" --json
expect_rc 0
expect_json 'j["params"] == 8030261248 and j["tensors"] == 291'
W="$want" expect_json 'j["bytes"] == __import__("json").loads(__import__("os").environ["W"])["bytes"]'
expect_json 'j["architecture"]["kv_heads"] == 8 and j["architecture"]["vocab"] == 128256 and j["architecture"]["ffn"] == 14336'
run inspect llama3.1-8b --json
expect_json 'j["params"] == 8030261248'

test_case "every ggml type: bytes per block"
want=$($MK "$T/types.gguf" --alignment 64 --tensors "token_embd.weight:256x2,$(for x in a b c d e f g h i j k l m n o p q r s t u v w x y z aa ab ac ad ae af ag; do printf '%s.weight:256x1,' $x; done)output_norm.weight:256" \
  --types F32,F16,Q4_0,Q4_1,Q5_0,Q5_1,Q8_0,Q8_1,Q2_K,Q3_K,Q4_K,Q5_K,Q6_K,Q8_K,IQ2_XXS,IQ2_XS,IQ3_XXS,IQ1_S,IQ4_NL,IQ3_S,IQ2_S,IQ4_XS,I8,I16,I32,I64,F64,IQ1_M,BF16,TQ1_0,TQ2_0,MXFP4,NVFP4,Q1_0)
run inspect "$T/types.gguf" --json
expect_rc 0
expect_json 'len(j["ggml_types"]) == 34 and j["gguf"]["alignment"] == 64'
W="$want" expect_json '{k: [v["params"], v["bytes"]] for k, v in j["ggml_types"].items()} == __import__("json").loads(__import__("os").environ["W"])["types"]'

test_case "malformed headers: one line naming the file and the problem"
bad() {
  $MK "$T/bad-$1.gguf" --llama 32,1,2,1,64,16,0 --bad "$1" >/dev/null
  run inspect "$T/bad-$1.gguf"
  expect_rc 1
  expect_err "bad-$1.gguf: $2"
  expect_err_lines 1
}
bad offset "tensor 'blk.0.attn_q.weight': offset"
bad type "tensor 'token_embd.weight': unknown ggml type 99"
bad removed-type "tensor 'token_embd.weight': ggml type Q4_0_4_4 was removed"
bad dims "tensor 'token_embd.weight': more than 4 dims"
bad dup-name "tensor 'token_embd.weight' appears twice"
bad dup-key "key 'llama.block_count' appears twice"
bad truncate "truncated: the tensors end at byte"
bad bool "key 'general.flag': bool value is neither 0 nor 1"
bad version1 "GGUF version 1 is not read"
printf 'GGUX' >"$T/magic.gguf"
run inspect "$T/magic.gguf"
expect_rc 1
expect_err "magic.gguf: not a GGUF file"
head -c 3000 "$T/tiny.gguf" >"$T/cut.gguf"
run inspect "$T/cut.gguf"
expect_rc 1
expect_err "cut.gguf: key 'tokenizer.ggml.tokens': array count exceeds the file"
expect_err_lines 1

test_case "estimate a GGUF as llama.cpp runs it: weights as stored, KV at --ctx, -ngl"
run estimate "$T/l8b.gguf" --gpu rtx4090 --ctx 8192 --json
expect_rc 0
expect_json 'j["runtime"] == "llama.cpp" and j["mode"] == "infer" and j["params"] == 8030261248'
# every layer and the output on the GPU: all weights but the token embedding
expect_json 'j["gpu_layers"] == 32 and j["output_on_gpu"] is True'
expect_json 'j["gpu_bytes"]["weights"] + j["cpu_bytes"]["weights"] == 5120245760'
expect_json 'j["cpu_bytes"]["weights"] == 128256 * 4096 // 256 * 144'
# K and V, f16: 2 x 2 bytes x 8 kv heads x 128 x 8192 cells x 32 layers = 1 GiB
expect_json 'j["gpu_bytes"]["kv_cache"] == 2 * 2 * 8 * 128 * 8192 * 32 and j["cpu_bytes"]["kv_cache"] == 0'
expect_json 'j["gpus"][0]["id"] == "rtx-4090" and j["gpus"][0]["fits"] is True and j["approximate"] is True'
expect_json 'j["gpus"][0]["peak_bytes"] == sum(j["gpu_bytes"].values()) + j["gpus"][0]["context_bytes"]'
run estimate "$T/l8b.gguf" --gpu rtx4090 --ctx 8000 --json
expect_json 'j["kv_cells"] == 8192'
run estimate "$T/l8b.gguf" --gpu rtx-3080 --n-gpu-layers 20 --json
expect_rc 0
expect_json 'j["gpu_layers"] == 19 and j["output_on_gpu"] is True'
expect_json 'j["gpu_bytes"]["kv_cache"] == 2 * 2 * 8 * 128 * 4096 * 19 and j["cpu_bytes"]["kv_cache"] == 2 * 2 * 8 * 128 * 4096 * 13'
run estimate "$T/l8b.gguf" --gpu rtx-3090,rtx-4080
expect_rc 2
expect_err 'a GGUF file is estimated against each card alone'
run estimate "$T/l8b.gguf" --gpu rtx-3080 --n-gpu-layers 0 --json
expect_json 'j["gpu_layers"] == 0 and j["output_on_gpu"] is False and j["gpu_bytes"]["weights"] == 0'
run estimate "$T/l8b.gguf" --gpu "T4" --ctx 131072 --json
expect_json 'j["gpus"][0]["fits"] is False and j["gpus"][0]["headroom_bytes"] < 0'
run estimate "$T/l8b.gguf" --gpu rtx4090
expect_rc 0
expect_out "llama.cpp inference"
expect_out "KV cache (f16)"
expect_out "compute buffer (approx.)"
run estimate "$T/l8b.gguf" --mode lora
expect_rc 2
expect_err "a GGUF file runs in llama.cpp, for inference"
run fit "$T/l8b.gguf" --gpu rtx4090
expect_rc 1
expect_err "a GGUF file runs in llama.cpp, for inference: vramfit estimate"
expect_err_lines 1
run estimate llama3.1-8b --ctx 4096
expect_rc 2
expect_err "--engine, --ctx, --users and the vllm flags apply to --mode infer (or a GGUF file)"

test_case "estimate a GGUF: an option its llama.cpp estimate takes no account of is refused, never ignored"
# --users 8, --batch 8, --seq, --optimizer, --gpus 2, --steps and --html
# printed the same page as without them, exit 0
for flag in "--users 8" "--batch 8" "--seq 512" "--optimizer sgd" "--gpus 2" "--steps 10" "--html $TMP/g.html" "--gguf-type q8_0"; do
  # shellcheck disable=SC2086
  run estimate "$T/l8b.gguf" --gpu rtx-4090 $flag
  expect_rc 2
  expect_err "${flag%% *}: not for a GGUF file"
done
check '[ ! -e "$TMP/g.html" ]'
run estimate "$T/l8b.gguf" --gpu rtx-4090 --engine vllm
expect_rc 2
expect_err "--engine vllm: a GGUF file"
run estimate "$T/l8b.gguf" --gpu rtx-4090 --engine llama.cpp --mode infer --ctx 8192 --n-gpu-layers 20 --context-mib 500 --json
expect_rc 0
# the KV cache's types count (they were dropped: f16 whatever was given)
run estimate "$T/l8b.gguf" --gpu rtx-4090 --ctx 8192 --cache-type-k q8_0 --cache-type-v q4_0 --json
expect_rc 0
expect_json 'j["gpu_bytes"]["kv_cache"] == 8192 * 8 * 128 * 32 * (34 + 18) // 32 and j["cache_type_k"] == "q8_0" and j["cache_type_v"] == "q4_0"'
run estimate "$T/l8b.gguf" --gpu rtx-4090 --ctx 8192 --cache-type-k q8_0 --cache-type-v q8_0
expect_out "KV cache (q8_0)"

finish
