# quantized.sh - end-to-end: quantized checkpoints written by
# tests/helpers/mk-quantized.py from the sharded fixture (GPTQ, AWQ,
# bitsandbytes 4- and 8-bit, fp8): inspect gives the unquantized model's
# exact count (packed weights unpacked, scales, zeros and states left out)
# and the bytes per weight as stored; estimate loads the base as the
# checkpoint holds it (QLoRA by default); an unknown method is named and the
# answer marked approximate.
. "$(dirname "$0")/lib.sh"
FX=$VF_SHARED_DIR/fixtures/models/small-llama-bf16-sharded
MK="python3 $VF_SOURCE_DIR/tests/helpers/mk-quantized.py"

for m in gptq awq bnb4 bnb8 fp8; do
  test_case "$m: the exact count and the bytes per weight as stored"
  want=$($MK "$FX" "$TMP/$m" $m)
  run inspect "$TMP/$m" --json
  expect_rc 0
  expect_json 'j["params"] == 1840256 and sum(v for k, v in j["param_groups"].items() if k != "source") == 1840256'
  W="$want" expect_json 'j["quantization"]["quantized_params"] == __import__("json").loads(__import__("os").environ["W"])["quantized"]'
  W="$want" expect_json 'j["quantization"]["quantized_bytes"] == __import__("json").loads(__import__("os").environ["W"])["quantized_bytes"]'
  expect_json 'j["quantization"]["understood"] is True and j["approximate"] is False'
  expect_json 'abs(j["quantization"]["bytes_per_weight"] - j["quantization"]["quantized_bytes"] / j["quantization"]["quantized_params"]) < 1e-9'
done

test_case "what each method loads as"
for pair in gptq:int4 awq:int4 bnb4:nf4 bnb8:int8 fp8:fp8; do
  m=${pair%%:*} q=${pair#*:}
  run inspect "$TMP/$m" --json
  Q=$q expect_json 'j["quantization"]["loads_as"] == __import__("os").environ["Q"]'
  run estimate "$TMP/$m" --gpu rtx4090 --json
  expect_rc 0
  Q=$q expect_json 'j["setup"]["quant"] == __import__("os").environ["Q"] and j["setup"]["mode"] == "lora"'
done
run estimate "$TMP/gptq" --gpu rtx4090
expect_out "quantization_config (gptq 4-bit"
expect_no_out "base weights not quantized"
run estimate "$TMP/gptq" --gpu rtx4090 --mode infer --json
expect_rc 0
expect_json 'j["setup"]["quant"] == "int4" and j["setup"]["mode"] == "infer"'
run estimate "$TMP/gptq" --gpu rtx4090 --quant int8 --json
expect_json 'j["setup"]["quant"] == "int8"'

test_case "fit names a quantized checkpoint's storage instead of searching it as bf16"
run fit "$TMP/gptq" --gpu rtx4090
expect_rc 2
expect_err "a gptq 4-bit checkpoint: give --quant int4 and --mode lora or infer"
run fit "$TMP/gptq" --gpu rtx4090 --quant int4 --mode lora --json
expect_rc 0

test_case "an unknown quant_method: named, approximate"
$MK "$FX" "$TMP/hqq" hqq >/dev/null
run inspect "$TMP/hqq" --json
expect_rc 0
expect_json 'j["quantization"]["method"] == "hqq" and j["quantization"]["understood"] is False'
expect_json 'j["approximate"] is True and any("quant_method hqq" in x for x in j["architecture"]["not_understood"])'
run inspect "$TMP/hqq"
expect_out "hqq: not understood"

finish
