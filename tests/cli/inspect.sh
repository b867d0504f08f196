# inspect.sh - end-to-end: `vramfit inspect` on the fixture models (the
# counts of ../shared/fixtures/models/EXPECTED.json), catalog ids, config
# removed, every malformed file (exit 1, one line naming the file), symlink
# loops, usage errors; `vramfit models`.
. "$(dirname "$0")/lib.sh"
FX=$VF_SHARED_DIR/fixtures/models

test_case "hf dir, json contract"
run inspect "$FX/tiny-llama-bf16" --json
expect_rc 0
expect_json 'j["format"] == "hf-dir" and j["files"] == 1 and j["tensors"] == 21'
expect_json 'j["params"] == 218944 and j["dtypes"] == {"BF16": 218944} and j["bytes"] == 437888'
expect_json 'j["metadata"] == {"format": "pt"}'
a='j["architecture"]'
expect_json "$a[\"family\"] == \"llama\" and $a[\"hidden\"] == 64 and $a[\"layers\"] == 2 and $a[\"heads\"] == 4 and $a[\"kv_heads\"] == 2 and $a[\"head_dim\"] == 16 and $a[\"ffn\"] == 172 and $a[\"vocab\"] == 1000 and $a[\"tied_embeddings\"] is False and $a[\"source\"] == \"config.json\""
expect_json 'sum(j["param_groups"][k] for k in ("embedding","attention","mlp","norm","experts","other")) == 218944'
expect_json '"adapter" not in j and "components" not in j'

test_case "sharded directory"
run inspect "$FX/small-llama-bf16-sharded" --json
expect_rc 0
expect_json 'j["format"] == "sharded" and j["files"] == 4 and j["tensors"] == 39 and j["params"] == 1840256 and j["bytes"] == 3680512'
expect_json 'j["architecture"]["hidden"] == 128 and j["architecture"]["ffn"] == 344 and j["architecture"]["vocab"] == 4096'

test_case "index file"
run inspect "$FX/small-llama-bf16-sharded/model.safetensors.index.json" --json
expect_rc 0
expect_json 'j["format"] == "sharded" and j["params"] == 1840256 and j["architecture"]["source"] == "config.json"'

test_case "gpt2 tied"
run inspect "$FX/tiny-gpt2-fp32" --json
expect_rc 0
expect_json 'j["params"] == 172288 and j["dtypes"] == {"F32": 172288} and j["architecture"]["tied_embeddings"] is True'

test_case "t5"
run inspect "$FX/tiny-t5-fp32" --json
expect_rc 0
expect_json 'j["params"] == 196864 and j["architecture"]["family"] == "t5" and j["architecture"]["decoder_layers"] == 2'

test_case "dtypes.safetensors"
run inspect "$FX/dtypes.safetensors" --json
expect_rc 0
expect_json 'j["format"] == "safetensors" and j["tensors"] == 13 and j["params"] == 117'
expect_json 'j["dtypes"] == {"BF16": 16, "BOOL": 3, "F16": 16, "F32": 16, "F64": 2, "F8_E4M3": 16, "F8_E5M2": 16, "I32": 6, "I64": 3, "I8": 16, "U8": 7}'
expect_json 'j["metadata"] == {"note": "fixture", "format": "pt"}'

test_case "peft adapter"
run inspect "$FX/tiny-llama-lora-r8" --json
expect_rc 0
expect_json 'j["format"] == "peft-adapter" and j["adapter"] == {"rank": 8, "alpha": 16, "targets": ["q_proj", "v_proj"], "params": 3584}'

test_case "human output"
run inspect "$FX/tiny-llama-bf16"
expect_rc 0
expect_out "218,944"
expect_out "BF16"
expect_out "427.6 KiB"
expect_out "(from config.json)"

test_case "catalog id"
run inspect mixtral-8x7b --json
expect_rc 0
expect_json 'j["format"] == "catalog" and j["params"] == 46702792704 and j["architecture"]["experts"] == 8 and j["architecture"]["experts_per_token"] == 2'

test_case "config removed: inferred and marked"
mkdir -p "$TMP/noconfig"
cp "$FX/tiny-llama-bf16/model.safetensors" "$TMP/noconfig/"
run inspect "$TMP/noconfig" --json
expect_rc 0
expect_json 'j["architecture"]["source"] == "tensors" and j["architecture"]["hidden"] == 64 and j["architecture"]["layers"] == 2 and j["architecture"]["vocab"] == 1000 and j["architecture"]["ffn"] == 172'
expect_json 'set(["hidden","layers","vocab","ffn","tied_embeddings","family"]) <= set(j["architecture"]["inferred"]) and j["architecture"]["heads"] is None'
run inspect "$TMP/noconfig"
expect_out "hidden 64*"
expect_out "inferred"

# --- malformed files: exit 1, exactly one line naming the file ----------
mk() { # mk NAME HEADER_TEXT DATA_LEN [LENGTH_OVERRIDE]
  python3 - "$TMP/$1" "$2" "$3" "${4:-}" <<'PY'
import struct, sys
path, hdr, dlen, ovr = sys.argv[1], sys.argv[2].encode('latin-1'), int(sys.argv[3]), sys.argv[4]
n = int(ovr) if ovr else len(hdr)
open(path, 'wb').write(struct.pack('<Q', n) + hdr + b'\0' * dlen)
PY
}
bad() { # bad FILE NEEDLE
  test_case "malformed $1"
  run inspect "$TMP/$1"
  expect_rc 1
  expect_err_lines 1
  expect_err "vramfit: error: $TMP/$1"
  expect_err "$2"
  expect_no_out "params"
}
T='"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}'
printf '\x10\x00' > "$TMP/trunc.safetensors"
bad trunc.safetensors "truncated"
mk big.safetensors "{$T}" 8 4096;             bad big.safetensors "exceeds the file size"
mk huge.safetensors "{$T}" 8 9223372036854775808; bad huge.safetensors "exceeds the limit of 100000000 bytes"
printf 'a text file, not a model: its first 8 bytes are no header length\n' > "$TMP/text.safetensors"
bad text.safetensors "not a safetensors file: it starts with text \"a text file, not\""
mk notjson.safetensors '{nope' 0;              bad notjson.safetensors "not valid JSON"
mk array.safetensors '[1,2]' 0;               bad array.safetensors "not a JSON object"
mk nodtype.safetensors '{"a":{"shape":[2],"data_offsets":[0,8]}}' 8; bad nodtype.safetensors "missing field dtype"
mk shapetype.safetensors '{"a":{"dtype":"F32","shape":"x","data_offsets":[0,8]}}' 8; bad shapetype.safetensors "field shape"
mk neg.safetensors '{"a":{"dtype":"F32","shape":[2],"data_offsets":[-1,7]}}' 8; bad neg.safetensors "integers >= 0"
mk rev.safetensors '{"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}' 8; bad rev.safetensors "reversed"
mk overlap.safetensors "{$T,\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}" 12; bad overlap.safetensors "overlap"
mk gap.safetensors "{$T,\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[16,24]}}" 24; bad gap.safetensors "gap"
mk size.safetensors '{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}' 8; bad size.safetensors "needs 12"
mk ovf.safetensors '{"a":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,8]}}' 8; bad ovf.safetensors "overflows"
mk dtype.safetensors '{"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}}' 8; bad dtype.safetensors "unknown dtype 'Q4'"
mk dup.safetensors "{$T,$T}" 8;               bad dup.safetensors "appears twice"
mk tail.safetensors "{$T}" 12;                bad tail.safetensors "need exactly"

test_case "config.json with a NUL byte or data after the top value is refused, naming file and byte"
mkdir -p "$TMP/nul" "$TMP/trail"
printf '{"model_type":"llama"\0}' >"$TMP/nul/config.json"
run inspect "$TMP/nul/config.json"; expect_rc 1; expect_err_lines 1
expect_err "$TMP/nul/config.json: invalid JSON: a NUL byte at byte 21"
run inspect "$TMP/nul"; expect_rc 1
expect_err "invalid JSON: a NUL byte at byte 21"
printf '{"model_type":"llama"} {"x":1}' >"$TMP/trail/config.json"
run inspect "$TMP/trail/config.json"; expect_rc 1; expect_err_lines 1
expect_err "$TMP/trail/config.json: invalid JSON: data after the top value at byte 23"
printf '{"model_type":"llama"}  \n\t\r\n' >"$TMP/trail/ws.json"
run inspect "$TMP/trail/ws.json"; check '! printf "%s" "$err" | grep -q "invalid JSON"'
rm -rf "$TMP/nul" "$TMP/trail"

test_case "index naming a missing shard"
mkdir -p "$TMP/shards"
cp "$FX/small-llama-bf16-sharded/"* "$TMP/shards/"
chmod u+w "$TMP/shards/"*
rm "$TMP/shards/model-00003-of-00004.safetensors"
run inspect "$TMP/shards"
expect_rc 1
expect_err_lines 1
expect_err "model.safetensors.index.json: names shard model-00003-of-00004.safetensors, which does not exist"

test_case "symlink loop"
mkdir -p "$TMP/loop"
cp "$FX/tiny-llama-bf16/model.safetensors" "$TMP/loop/"
ln -s b "$TMP/loop/a"; ln -s a "$TMP/loop/b"
run inspect "$TMP/loop"
expect_rc 1
expect_err_lines 1
expect_err "symlink loop"
run inspect "$TMP/loop/a"
expect_rc 1
expect_err "$TMP/loop/a: symlink loop"

test_case "not found, usage"
run inspect no-such-model
expect_rc 1
expect_err "no-such-model: no such file, directory or catalog model"
run inspect
expect_rc 2
run inspect a b
expect_rc 2
run inspect --bogus x
expect_rc 2
run inspect --help
expect_rc 0
expect_out "usage: vramfit inspect PATH"

test_case "real configs: exact or approximate, never silent (issue 11)"
RC=$VF_SHARED_DIR/realconfigs
run inspect "$RC/qwen3-30b-a3b/config.json" --json
expect_rc 0
expect_json 'j["params"] == 30532122624 and j["approximate"] is False and j["params_approximate"] is False'
expect_json 'j["architecture"]["moe"]["expert_ffn"] == 768 and j["architecture"]["not_understood"] == []'
run inspect "$RC/deepseek-v3/config.json"
expect_rc 0
expect_out "671,026,419,200"
expect_out "MTP module(s), 13,463,426,304 parameters"
run inspect "$RC/bloom-176b/config.json" --json
expect_json 'j["params"] == 176247271424 and j["architecture"]["family"] == "bloom"'
run inspect "$RC/phi-2-mixformer-legacy/config.json" --json
expect_json 'j["params"] == 2779683840 and j["architecture"]["family"] == "phi"'
T=$(mktemp -d)
printf '%s' '{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100,"kv_lora_rank":16,"n_routed_experts":8}' > "$T/config.json"
run inspect "$T/config.json" --json
expect_rc 0
expect_json 'j["approximate"] is True and j["params_approximate"] is True and j["architecture"]["not_understood"] == ["kv_lora_rank", "n_routed_experts"]'
run inspect "$T/config.json"
expect_out "not understood: kv_lora_rank, n_routed_experts; count is approximate"
run estimate "$T/config.json" --gpu h100-80gb --json
expect_rc 0
expect_json 'j["model"]["approximate"] is True and j["model"]["not_understood"] == ["kv_lora_rank", "n_routed_experts"]'
run estimate "$T/config.json" --gpu h100-80gb
expect_out "(approximate: see Assumptions)"
expect_out "not understood: kv_lora_rank, n_routed_experts"
rm -rf "$T"

test_case "inspect and estimate agree on a model's files"
run inspect "$FX/tiny-llama-bf16" --json
p1=$(printf '%s' "$out" | python3 -c 'import sys,json; print(json.load(sys.stdin)["params"])')
run estimate "$FX/tiny-llama-bf16" --gpu h100-80gb --json
expect_rc 0
expect_json "j['model']['params'] == $p1"

test_case "no intermediate_size: inspect and estimate name the class default, approximate"
T=$(mktemp -d)
python3 -c "
import json, sys
d = json.load(open('$RC/llama-3.1-8b/config.json'))
del d['intermediate_size']
json.dump(d, open('$T/config.json', 'w'))"
run inspect "$T/config.json" --json
expect_rc 0
expect_json 'j["architecture"]["ffn"] == 11008 and j["approximate"] is True and j["params"] == 6721638400'
expect_json 'j["architecture"]["not_understood"] == ["intermediate_size (absent: LlamaConfig'"'"'s default 11008 assumed)"]'
run inspect "$T/config.json"
expect_out "ffn 11008"
expect_out "not understood: intermediate_size (absent: LlamaConfig's default 11008 assumed)"
run estimate "$T/config.json" --gpu h100-80gb --json
expect_rc 0
expect_json 'j["model"]["params"] == 6721638400 and j["model"]["approximate"] is True'
expect_json 'any("intermediate_size" in x and "11008" in x for x in j["model"]["not_understood"])'
run estimate "$T/config.json" --gpu h100-80gb
expect_out "(approximate: see Assumptions)"
expect_out "intermediate_size (absent: LlamaConfig's default 11008 assumed)"
# a family with no config class default: inspect counts nothing, estimate names its rule
python3 -c "
import json
d = json.load(open('$T/config.json'))
d['model_type'] = 'foollm'; d['architectures'] = ['FooForCausalLM']
json.dump(d, open('$T/config.json', 'w'))"
run inspect "$T/config.json" --json
expect_json 'j["params"] is None and j["architecture"]["ffn"] is None and j["approximate"] is True'
run estimate "$T/config.json" --gpu h100-80gb --json
expect_rc 0
expect_json 'j["model"]["approximate"] is True and "intermediate_size (absent: 8/3 x hidden assumed)" in j["model"]["not_understood"]'
run estimate "$T/config.json" --gpu h100-80gb
expect_out "MLP width 10922 (intermediate_size not in the model files and no config class default known: 8/3 x hidden assumed)"
rm -rf "$T"

test_case "models"
run models --json
expect_rc 0
expect_json 'len(j["models"]) >= 39'
expect_json '[m for m in j["models"] if m["id"] == "gpt2-xl"][0]["params"] == 1557611200'
expect_json '[m for m in j["models"] if m["id"] == "stories42m"][0]["architecture"]["hidden"] == 512'
expect_json 'all(m["id"] == m["id"].lower() for m in j["models"])'
run models
expect_rc 0
expect_out "tinyllama-1.1b"
expect_out "6738415616"
run models --bogus
expect_rc 2

test_case "one shard of a sharded checkpoint: inspect says it is shard 2 of 4; estimate and fit refuse it (not the whole model), naming the folder"
SH="$VF_SHARED_DIR/fixtures/models/small-llama-bf16-sharded"
run inspect "$SH/model-00002-of-00004.safetensors"
expect_rc 0
expect_out "1 (shard 2 of 4: this file's tensors only; its folder or index inspects the whole model)"
run inspect "$SH/model-00002-of-00004.safetensors" --json
expect_json 'j["shard"] == {"index": 2, "of": 4}'
run inspect "$SH" --json
expect_json '"shard" not in j'
for c in estimate fit; do
  run $c "$SH/model-00002-of-00004.safetensors" --gpu h100-80gb
  expect_rc 1
  expect_err "model-00002-of-00004.safetensors: shard 2 of 4 of a sharded checkpoint, not the whole model: give its folder ($SH) or its *.safetensors.index.json"
  expect_err_lines 1
done
run estimate "$SH" --gpu h100-80gb
expect_rc 0

test_case "a config key the reader does not know, or a value it does not, is named and the count approximate (it was silent unless its name looked like a size)"
for kv in '"zz_frobnicate_factor": 3|zz_frobnicate_factor' '"d_frob": 7|d_frob' '"multiple_of": 256|multiple_of' \
          '"hidden_act": "zzact"|hidden_act zzact' '"torch_dtype": "zzfloat"|torch_dtype zzfloat' \
          '"rope_scaling": {"rope_type": "zzrope", "factor": 8.0}|rope_scaling.rope_type zzrope'; do
  python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); j.update(json.loads("{" + sys.argv[2] + "}")); json.dump(j, open(sys.argv[3], "w"))' \
    "$VF_SHARED_DIR/realconfigs/llama-3.1-8b/config.json" "${kv%%|*}" "$TMP/mut.json"
  run inspect "$TMP/mut.json" --json
  expect_rc 0
  expect_json 'j["approximate"] is True'
  run inspect "$TMP/mut.json"
  expect_out "not understood: ${kv##*|}"
  run estimate "$TMP/mut.json" --gpu h100-80gb --json
  expect_json 'j["model"]["approximate"] is True and "'"${kv##*|}"'" in j["model"]["not_understood"]'
done
# fit's JSON says it where estimate's does, and its page's headline too
run fit "$TMP/mut.json" --gpu h100-80gb --tokens 1e9 --json --html "$TMP/mut-fit.html"
expect_json 'j["approximate"] is True and j["model"]["approximate"] is True and j["model"]["not_understood"] == ["rope_scaling.rope_type zzrope"]'
check 'grep -q "(approximate: see Assumptions)</h1>" "$TMP/mut-fit.html"'
run fit llama3-8b --gpu h100-80gb --tokens 1e9 --json
expect_json 'j["model"]["approximate"] is False and j["model"]["not_understood"] == []'

# the keys of real configs that change nothing counted stay quiet
for d in llama-3.1-8b t5-small qwen3-8b mixtral-8x7b-v0.1 deepseek-v3; do
  run inspect "$VF_SHARED_DIR/realconfigs/$d/config.json" --json
  expect_json 'j["approximate"] is False'
done

test_case "a config with an empty key: named, no hang (the key check looped on strstr's empty match)"
printf '{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100,"":1}' > "$TMP/empty-key.json"
run inspect "$TMP/empty-key.json"
expect_rc 0
expect_out 'not understood: ""'

finish
