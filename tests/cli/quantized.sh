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

# A config.json without weights reads its quantization_config as a
# checkpoint's does (it was estimated as unquantized fp32 weights, full
# fine-tuning, and not marked approximate: a silent wrong answer).
qcfg() { # DIR QUANTIZATION_CONFIG_JSON: the fixture's config with it
  mkdir -p "$1"
  python3 - "$FX/config.json" "$1/config.json" "$2" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["quantization_config"] = json.loads(sys.argv[3])
json.dump(c, open(sys.argv[2], "w"))
PY
}
test_case "a bare config.json with a quantization_config: loads as it says"
qcfg "$TMP/cfg-gptq" '{"quant_method": "gptq", "bits": 4, "group_size": 128}'
run estimate "$TMP/cfg-gptq/config.json" --gpu rtx4090 --json
expect_rc 0
expect_json 'j["setup"]["quant"] == "int4" and j["setup"]["mode"] == "lora" and j["model"]["params"] == 1840256'
run estimate "$TMP/cfg-gptq/config.json" --gpu rtx4090
expect_out "quant int4: the config's quantization_config (gptq 4-bit) (--quant)"
expect_no_out "0.000 bytes"
run inspect "$TMP/cfg-gptq/config.json"
expect_out "gptq 4-bit (config.json; no weights to count); loads as int4"
run inspect "$TMP/cfg-gptq/config.json" --json
expect_json 'j["quantization"]["loads_as"] == "int4" and j["approximate"] is False'
run fit "$TMP/cfg-gptq/config.json" --gpu rtx4090
expect_rc 2
expect_err "a gptq 4-bit model (its config's quantization_config): give --quant int4"
qcfg "$TMP/cfg-bnb" '{"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "nf4"}'
run estimate "$TMP/cfg-bnb/config.json" --gpu rtx4090 --mode infer --json
expect_json 'j["setup"]["quant"] == "nf4" and j["setup"]["mode"] == "infer"'

test_case "a bare config.json with an unknown quant_method: approximate, the count the config's"
qcfg "$TMP/cfg-hqq" '{"quant_method": "hqq", "nbits": 4}'
run estimate "$TMP/cfg-hqq/config.json" --gpu rtx4090 --json
expect_rc 0
expect_json 'j["model"]["approximate"] is True and j["model"]["params"] == 1840256'
run estimate "$TMP/cfg-hqq/config.json" --gpu rtx4090
expect_out "quantization_config (quant_method hqq); the count is the config's, the weights' bytes as stored unknown: memory terms approximate"
run inspect "$TMP/cfg-hqq/config.json"
expect_out "hqq: not understood; the weights' bytes as stored are not known (approximate)"
expect_out "the count is the config's, the weights' bytes as stored unknown"
expect_no_out "count is approximate"
run inspect "$TMP/cfg-hqq/config.json" --json
expect_json 'j["approximate"] is True and j["params_approximate"] is False and j["params"] == 1840256 and j["quantization"]["understood"] is False'

test_case "real configs' quantization_config: deepseek-v3 fp8 exact, gpt-oss-20b mxfp4 approximate bytes, exact count"
RC=$VF_SHARED_DIR/realconfigs
run inspect "$RC/deepseek-v3/config.json" --json
expect_rc 0
expect_json 'j["params"] == 671026419200 and j["approximate"] is False and j["params_approximate"] is False and j["quantization"]["loads_as"] == "fp8"'
run inspect "$RC/gpt-oss-20b/config.json" --json
expect_rc 0
expect_json 'j["params"] == 20914757184 and j["approximate"] is True and j["params_approximate"] is False and j["quantization"]["method"] == "mxfp4"'
run estimate "$RC/gpt-oss-20b/config.json" --gpu h200 --mode infer --json
expect_rc 0
expect_json 'j["model"]["approximate"] is True and j["model"]["not_understood"] == ["quantization_config (quant_method mxfp4)"]'

finish
