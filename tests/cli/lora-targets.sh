#!/usr/bin/env bash
# lora-targets.sh - LoRA targets are the model's own modules (verdict 9):
# a Mamba model has in_proj / x_proj / dt_proj / out_proj, not q_proj /
# v_proj; peft has no default targets for state-space models and hybrids
# (it asks for target_modules), so neither does vramfit; the trainable
# count comes from the mixers' shapes; a hybrid's attention adapters sit
# on its attention layers only.
. "$(dirname "$0")/lib.sh"
export XDG_CONFIG_HOME="$TMP/config"
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI="$TMP/no-such-smi"

cat >"$TMP/mamba.json" <<'J'
{"model_type":"mamba","hidden_size":768,"num_hidden_layers":24,"vocab_size":50280,"state_size":16,"expand":2,"conv_kernel":4,"time_step_rank":"auto"}
J
cat >"$TMP/mamba2.json" <<'J'
{"model_type":"mamba2","hidden_size":768,"num_hidden_layers":24,"vocab_size":50288,"state_size":128,"expand":2,"conv_kernel":4,"n_groups":1,"num_heads":24,"head_dim":64,"chunk_size":256}
J
cat >"$TMP/jamba.json" <<'J'
{"model_type":"jamba","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":65536,"num_experts":16,"num_experts_per_tok":2,"attn_layer_period":8,"attn_layer_offset":4,"expert_layer_period":2,"expert_layer_offset":1,"mamba_d_state":16,"mamba_d_conv":4,"mamba_expand":2,"mamba_dt_rank":256}
J

for verb in estimate fit; do
	test_case "$verb mamba --mode lora without --lora-targets: peft has no default, said in one line"
	# it counted q_proj,v_proj adapters (1.2 M trainable) on mixers that have none
	run $verb "$TMP/mamba.json" --mode lora --gpu rtx-4090
	expect_rc 2
	expect_err "vramfit $verb: --lora-targets: peft has no default LoRA targets for model type mamba"
	expect_err "its linear modules: in_proj, x_proj, dt_proj, out_proj, lm_head"
	expect_err "Try 'vramfit help $verb'"
	expect_no_out "trainable"

	test_case "$verb mamba --lora-targets q_proj,v_proj: names it lacks are an error naming them"
	run $verb "$TMP/mamba.json" --mode lora --gpu rtx-4090 --lora-targets q_proj,v_proj
	expect_rc 2
	expect_err "mamba has no q_proj, v_proj (its linear modules: in_proj, x_proj, dt_proj, out_proj, lm_head"
	expect_err_lines 2
done

test_case "estimate mamba --lora-targets in_proj,out_proj: accepted, counted from the mixers' shapes"
# it was refused: unknown module 'in_proj'
run estimate "$TMP/mamba.json" --mode lora --gpu rtx-4090 --lora-targets in_proj,out_proj --json
expect_rc 0
# r x (in + out) per layer: in_proj 768 -> 2 x 1536, out_proj 1536 -> 768
expect_json 'j["model"]["trainable_params"] == 24 * 16 * ((768 + 3072) + (1536 + 768)) and j["setup"]["lora_targets"] == "in_proj,out_proj"'
run estimate "$TMP/mamba.json" --mode lora --gpu rtx-4090 --lora-targets in_proj,out_proj
expect_out "lora r16 alpha 16 on in_proj,out_proj"

test_case "estimate mamba all-linear: the four mixer linears, not the head"
run estimate "$TMP/mamba.json" --mode lora --gpu rtx-4090 --lora-targets all-linear --json
expect_rc 0
# dt_rank auto = ceil(768 / 16) = 48; x_proj 1536 -> 48 + 2 x 16; dt_proj 48 -> 1536
expect_json 'j["model"]["trainable_params"] == 24 * 16 * ((768 + 3072) + (1536 + 80) + (48 + 1536) + (1536 + 768)) and j["setup"]["lora_targets"] == "in_proj,x_proj,dt_proj,out_proj"'

test_case "fit mamba --lora-targets in_proj,out_proj: the same count"
run fit "$TMP/mamba.json" --mode lora --gpu rtx-4090 --lora-targets in_proj,out_proj --json
expect_rc 0
expect_json 'j["model"]["trainable_params"] == 24 * 16 * ((768 + 3072) + (1536 + 768))'

test_case "mamba2: no x_proj or dt_proj; in_proj holds x, z, B, C and dt"
run estimate "$TMP/mamba2.json" --mode lora --gpu rtx-4090 --lora-targets x_proj
expect_rc 2
expect_err "mamba2 has no x_proj (its linear modules: in_proj, out_proj, lm_head"
run estimate "$TMP/mamba2.json" --mode lora --gpu rtx-4090 --lora-targets all-linear --json
expect_rc 0
# in_proj 768 -> 2 x 1536 + 2 x 1 x 128 + 24; out_proj 1536 -> 768
expect_json 'j["model"]["trainable_params"] == 24 * 16 * ((768 + 3072 + 256 + 24) + (1536 + 768))'

test_case "jamba: attention adapters on its 4 attention layers, mixers on its 28 Mamba layers"
run estimate "$TMP/jamba.json" --mode lora --gpu h100-80gb
expect_rc 2
expect_err "peft has no default LoRA targets for model type jamba"
run estimate "$TMP/jamba.json" --mode lora --gpu h100-80gb --lora-targets q_proj,v_proj --json
expect_rc 0
# 6.8 M before: q_proj and v_proj counted on all 32 layers
expect_json 'j["model"]["trainable_params"] == 4 * 16 * ((4096 + 4096) + (4096 + 1024))'
run estimate "$TMP/jamba.json" --mode lora --gpu h100-80gb --lora-targets o_proj,out_proj --json
expect_json 'j["model"]["trainable_params"] == 4 * 16 * (4096 + 4096) + 28 * 16 * (8192 + 4096)'

test_case "a transformer: a Mamba module is one it lacks"
run estimate llama3-8b --mode lora --gpu h100-80gb --lora-targets q_proj,in_proj
expect_rc 2
expect_err "llama has no in_proj"
run estimate llama3-8b --mode lora --gpu h100-80gb --lora-targets q_proj,v_proj
expect_rc 0

test_case "no --lora-targets on a transformer: peft's default for its model type, or none where peft has none"
# peft's TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING: llama q_proj,v_proj
run estimate llama3-8b --mode lora --gpu h100-80gb --json
expect_rc 0
expect_json 'j["setup"]["lora_targets"] == "q_proj,v_proj" and j["model"]["trainable_params"] == 32 * 16 * ((4096 + 4096) + (4096 + 1024))'
# phi: q_proj, v_proj, fc1, fc2 (it counted q_proj,v_proj alone)
run estimate phi-2 --mode lora --gpu h100-80gb --json
expect_rc 0
expect_json 'j["model"]["trainable_params"] == 32 * 16 * (2 * (2560 + 2560) + 2 * (2560 + 10240))'
# phi3, qwen3_moe, gemma3 (the multimodal type): none in peft's mapping; it
# invented q_proj,v_proj adapters where peft asks for target_modules
# (phi3's attention is one qkv_proj: q_proj,v_proj are not its modules)
for m in phi3-mini:phi3:qkv_proj qwen3-30b-a3b:qwen3_moe:q_proj,v_proj gemma3-4b:gemma3:q_proj,v_proj; do
	model=${m%%:*} rest=${m#*:}
	for verb in estimate fit; do
		run $verb "$model" --mode lora --gpu h100-80gb
		expect_rc 2
		expect_err "vramfit $verb: --lora-targets: peft has no default LoRA targets for model type ${rest%%:*} (LoraConfig asks for target_modules)"
		expect_err_lines 2
	done
	run estimate "$model" --mode lora --gpu h100-80gb --lora-targets "${rest#*:}"
	expect_rc 0
done

# --- the stack's own targets (its profile's lora_targets), not peft's, where
# the stack does not use peft: litgpt's finetune/lora.py lora_query and
# lora_value, torchtune's shipped configs' q_proj,v_proj; torchtitan has no
# LoRA recipe; hf and no --stack keep peft's mapping
test_case "--stack litgpt / torchtune: the recipe's q,v on a model peft has no default for"
# it refused gemma3 under every stack: peft has no default for gemma3
for st in litgpt torchtune; do
	for verb in estimate fit; do
		run $verb gemma3-4b --mode lora --stack $st --gpu rtx-4090 --json
		expect_rc 0
	done
	run estimate gemma3-4b --mode lora --stack $st --gpu rtx-4090 --json
	expect_json 'j["setup"]["lora_targets"] == "q_proj,v_proj"'
	run estimate phi3-mini --mode lora --stack $st --gpu h100-80gb
	expect_rc 0
	# the recipe's q and v, on phi3's fused qkv_proj
	expect_out "LoRA targets qkv_proj: stack $st's default, from $st "
	expect_no_out "peft's default for model type"
done
# litgpt on phi-2: q,v (peft's phi default adds fc1,fc2)
run estimate phi-2 --mode lora --stack litgpt --gpu h100-80gb --json
expect_json 'j["model"]["trainable_params"] == 32 * 16 * ((2560 + 2560) + (2560 + 2560))'
run estimate phi-2 --mode lora --stack litgpt --gpu h100-80gb
expect_out "LoRA targets q_proj,v_proj: stack litgpt's default, from litgpt litgpt/finetune/lora.py at commit 01fe959c (--lora-targets)"

test_case "--lora-targets wins over the stack's default"
run estimate llama3-8b --mode lora --stack litgpt --gpu h100-80gb --lora-targets all-linear --json
expect_json 'j["setup"]["lora_targets"] == "all-linear"'
run estimate llama3-8b --mode lora --stack litgpt --gpu h100-80gb --lora-targets all-linear
expect_no_out "stack litgpt's default"

test_case "--stack hf and no --stack: peft's mapping"
for st in "" "--stack hf"; do
	run estimate gemma3-4b --mode lora $st --gpu rtx-4090
	expect_rc 2
	expect_err "peft has no default LoRA targets for model type gemma3"
	run estimate llama3-8b --mode lora $st --gpu rtx-4090
	expect_out "LoRA targets: peft's default for model type llama"
done

test_case "--stack torchtitan: no LoRA recipe, named in one line unless targets are given"
for verb in estimate fit; do
	run $verb llama3-8b --mode lora --stack torchtitan --gpu h100-80gb
	expect_rc 2
	expect_err "vramfit $verb: --lora-targets: stack torchtitan has no LoRA recipe (torchtitan at commit 000204a4"
	expect_err_lines 2
done
run estimate llama3-8b --mode lora --stack torchtitan --gpu h100-80gb --lora-targets q_proj,v_proj
expect_rc 0

test_case "a stack's list on a state-space model: its names are not the model's"
run estimate "$TMP/mamba.json" --mode lora --stack litgpt --gpu rtx-4090
expect_rc 2
expect_err "stack litgpt's default targets q_proj,v_proj are not modules of mamba (its linear modules: in_proj"
run estimate "$TMP/jamba.json" --mode lora --stack torchtune --gpu h100-80gb --json
expect_rc 0
expect_json 'j["model"]["trainable_params"] == 4 * 16 * ((4096 + 4096) + (4096 + 1024))'

test_case "a profile's lora_targets is checked (the file and field named)"
mkdir -p "$TMP/prof/stacks"
sed 's/"value": "q_proj,v_proj"/"value": "q_proj,bogus"/' "$VF_SOURCE_DIR/data/stacks/litgpt.json" >"$TMP/prof/stacks/litgpt.json"
VRAMFIT_DATA_DIR="$TMP/prof" run estimate llama3-8b --mode lora --stack litgpt --gpu h100-80gb
expect_rc 1
expect_err "stacks/litgpt.json: mechanisms.lora_targets.value: expected peft, none or a module list"

# --- vision and speech towers: peft has no default for vit, dinov2, clip,
# siglip, whisper or wav2vec2 (none is in its mapping); they assumed q_proj,v_proj
test_case "a vision or speech tower without --lora-targets: refused, naming its modules"
C="$VF_SOURCE_DIR/tests/fuzz/corpus/vision-config" F="$VF_SOURCE_DIR/tests/fixtures/vision"
for m in "$C/gen-vit-cls.json:vit:query, key, value, dense" "$C/gen-dinov2.json:dinov2:query, key, value" \
	"$F/siglip-so400m.json:siglip:q_proj, k_proj, v_proj, out_proj, fc1, fc2" \
	"$F/clip-b32.json:clip:q_proj, k_proj, v_proj, out_proj" \
	"$C/gen-whisper.json:whisper:q_proj, k_proj, v_proj, out_proj, fc1, fc2" \
	"$C/gen-wav2vec2-ctc.json:wav2vec2:q_proj, k_proj, v_proj, out_proj, intermediate_dense, output_dense"; do
	IFS=: read -r path type mods <<<"$m"
	run estimate "$path" --mode lora --gpu rtx-4090
	expect_rc 2
	expect_err "vramfit estimate: --lora-targets: peft has no default LoRA targets for model type $type (LoraConfig asks for target_modules)"
	expect_err "(its linear modules: $mods"
	expect_err_lines 2
	run estimate "$path" --mode lora --gpu rtx-4090 --stack hf
	expect_rc 2
	run estimate "$path" --mode lora --gpu rtx-4090 --lora-targets q_proj,v_proj
	expect_rc 0
	run estimate "$path" --mode lora --gpu rtx-4090 --stack litgpt
	expect_rc 0
	expect_out "LoRA targets q_proj,v_proj: stack litgpt's default"
	run estimate "$path" --mode full --gpu rtx-4090
	expect_rc 0
done

# --- a transformer family's own module names (transformers' modeling code):
# t5 q,k,v,o,wi(_0/_1),wo; gpt2 c_attn,c_proj,c_fc; bloom/gpt_neox/falcon
# query_key_value,dense,dense_h_to_4h,dense_4h_to_h; phi ...,dense,fc1,fc2
test_case "a name the family lacks: an error naming it and listing the model's modules"
# q_proj was taken as t5's q and gpt2's c_attn
run estimate t5-base --mode lora --gpu h100-80gb --lora-targets q_proj
expect_rc 2
expect_err "vramfit estimate: --lora-targets: t5 has no q_proj (its linear modules: q, k, v, o, wi, wo, lm_head"
expect_err_lines 2
run estimate gpt2 --mode lora --gpu h100-80gb --lora-targets q_proj,v_proj
expect_rc 2
expect_err "gpt2 has no q_proj, v_proj (its linear modules: c_attn, c_proj, c_fc, lm_head"
run estimate falcon-7b --mode lora --gpu h100-80gb --lora-targets q_proj
expect_rc 2
expect_err "falcon has no q_proj (its linear modules: query_key_value, dense, dense_h_to_4h, dense_4h_to_h"
run estimate gpt-neox-20b --mode lora --gpu h100-80gb --lora-targets lm_head
expect_rc 2
expect_err "gpt_neox has no lm_head (its linear modules: query_key_value, dense, dense_h_to_4h, dense_4h_to_h, embed_out"
run estimate llama3-8b --mode lora --gpu h100-80gb --lora-targets q,v
expect_rc 2
expect_err "llama has no q, v (its linear modules: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, lm_head"
run estimate phi-2 --mode lora --gpu h100-80gb --lora-targets q_proj,o_proj
expect_rc 2
expect_err "phi has no o_proj (its linear modules: q_proj, k_proj, v_proj, dense, fc1, fc2, lm_head"
fit_rc() { run fit "$@"; expect_rc 2; }
fit_rc t5-base --mode lora --gpu h100-80gb --lora-targets q_proj
expect_err "vramfit fit: --lora-targets: t5 has no q_proj"

test_case "the targets shown under the model's own names, counted by role"
# Setup and JSON said q_proj,v_proj for t5's q,v and gpt2's c_attn
run estimate t5-base --mode lora --gpu h100-80gb --json
expect_json 'j["setup"]["lora_targets"] == "q,v"'
run estimate t5-base --mode lora --gpu h100-80gb
expect_out "lora r16 alpha 16 on q,v,"
run estimate t5-base --mode lora --gpu h100-80gb --lora-targets q,v --json
expect_json 'j["setup"]["lora_targets"] == "q,v"'
t5qv=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["model"]["trainable_params"])')
run estimate t5-base --mode lora --gpu h100-80gb --lora-targets q_proj,v_proj --stack torchtune --json
expect_rc 2
run estimate t5-base --mode lora --gpu h100-80gb --stack torchtune --json
expect_json "j['setup']['lora_targets'] == 'q,v' and j['model']['trainable_params'] == $t5qv"
run estimate gpt2 --mode lora --gpu h100-80gb --json
expect_json 'j["setup"]["lora_targets"] == "c_attn"'
run estimate gpt2 --mode lora --gpu h100-80gb --lora-targets c_attn,c_proj,c_fc --json
expect_json 'j["setup"]["lora_targets"] == "all-linear"'
run estimate gpt2 --mode lora --gpu h100-80gb --lora-targets c_fc --json
# gpt2: 12 layers, c_fc 768 -> 3072
expect_json 'j["setup"]["lora_targets"] == "c_fc" and j["model"]["trainable_params"] == 12 * 16 * (768 + 3072)'
run estimate phi-2 --mode lora --gpu h100-80gb --json
expect_json 'j["setup"]["lora_targets"] == "q_proj,v_proj,fc1,fc2"'
run estimate bloom-560m --mode lora --gpu h100-80gb --lora-targets query_key_value,dense_4h_to_h --json
expect_rc 0
expect_json 'j["setup"]["lora_targets"] == "query_key_value,dense_4h_to_h"'
run estimate t5-base --mode lora --gpu h100-80gb --lora-targets all-linear --json
expect_json 'j["setup"]["lora_targets"] == "all-linear"'
run estimate llama3-8b --mode lora --gpu h100-80gb --lora-targets all-linear,lm_head --json
expect_json 'j["setup"]["lora_targets"] == "all-linear,lm_head"'

test_case "fit names where the targets came from"
# fit's assumptions said nothing of the targets
run fit gemma3-4b --mode lora --stack litgpt --gpu rtx-4090
expect_out "LoRA targets q_proj,v_proj: stack litgpt's default, from litgpt litgpt/finetune/lora.py"
run fit t5-base --mode lora --gpu rtx-4090 --json
expect_json 'any(a.startswith("LoRA targets q,v: peft") and "model type t5 (--lora-targets)" in a for a in j["assumptions"])'

test_case "peft's mapping is data: an override file is read, a malformed one refused in one line"
# the mapping was a C table: no file to read, none to refuse
mkdir -p "$TMP/peftdata/estimate"
python3 - "$TMP/peftdata/estimate/lora-targets.json" "$VF_SOURCE_DIR/data/estimate/lora-targets.json" <<'P'
import json, sys
d = json.load(open(sys.argv[2]))
d["mapping"]["llama"] = ["q_proj", "k_proj", "v_proj"]
json.dump(d, open(sys.argv[1], "w"))
P
VRAMFIT_DATA_DIR="$TMP/peftdata" run estimate llama3-8b --mode lora --gpu h100-80gb --json
expect_rc 0
# llama3-8b: 32 layers, h 4096, k/v 8 x 128 = 1024 wide
expect_json 'j["setup"]["lora_targets"] == "q_proj,k_proj,v_proj" and j["model"]["trainable_params"] == 32 * 16 * ((4096 + 4096) + 2 * (4096 + 1024))'
python3 - "$TMP/peftdata/estimate/lora-targets.json" "$VF_SOURCE_DIR/data/estimate/lora-targets.json" <<'P'
import json, sys
d = json.load(open(sys.argv[2]))
d["mapping"]["llama"] = ["q_proj", "lora_magic"]
json.dump(d, open(sys.argv[1], "w"))
P
VRAMFIT_DATA_DIR="$TMP/peftdata" run estimate llama3-8b --mode lora --gpu h100-80gb
expect_rc 1
expect_err "peftdata/estimate/lora-targets.json: mapping.llama: module 'lora_magic' is not one vramfit counts"
expect_err_lines 1
expect_no_out "trainable"
python3 - "$TMP/peftdata/estimate/lora-targets.json" "$VF_SOURCE_DIR/data/estimate/lora-targets.json" <<'P'
import json, sys
d = json.load(open(sys.argv[2]))
del d["source"]["commit"]
json.dump(d, open(sys.argv[1], "w"))
P
VRAMFIT_DATA_DIR="$TMP/peftdata" run estimate llama3-8b --mode lora --gpu h100-80gb
expect_rc 1
expect_err "lora-targets.json: source.commit: expected the peft commit it was read from"
expect_err_lines 1
printf '{"source": {"repo": "x",' >"$TMP/peftdata/estimate/lora-targets.json"
VRAMFIT_DATA_DIR="$TMP/peftdata" run estimate llama3-8b --mode lora --gpu h100-80gb
expect_rc 1
expect_err "peftdata/estimate/lora-targets.json"
expect_err_lines 1
# a full fine-tune does not read it
VRAMFIT_DATA_DIR="$TMP/peftdata" run estimate llama3-8b --mode full --gpu h100-80gb
expect_rc 0

test_case "MoE and fused families: their own module names, counted from the real shapes"
# these names were refused (unknown module) or counted as other modules:
# mixtral's w1/w2/w3 and its router gate, phi3's fused qkv_proj and
# gate_up_proj (gate and up counted as two h -> f matrices), qwen3_moe's
# router, deepseek_v3's latent attention; gpt_oss's experts and router
# are nn.Parameter, not modules (all-linear is its attention)
RC=$VF_SHARED_DIR/realconfigs
lt() { run estimate "$RC/$1/config.json" --mode lora --gpu h200 --lora-targets "$2" --json; expect_rc 0; }
# mixtral-8x7b: 32 layers, h 4096, 8 experts of ffn 14336, k/v 1024 wide
lt mixtral-8x7b-v0.1 w1,w2,w3
expect_json 'j["setup"]["lora_targets"] == "w1,w3,w2" and j["model"]["trainable_params"] == 32 * 8 * 16 * 3 * (4096 + 14336)'
lt mixtral-8x7b-v0.1 gate
expect_json 'j["setup"]["lora_targets"] == "gate" and j["model"]["trainable_params"] == 32 * 16 * (4096 + 8)'
lt mixtral-8x7b-v0.1 all-linear
expect_json 'j["setup"]["lora_targets"] == "all-linear" and j["model"]["trainable_params"] == 32 * 16 * ((4096 + 4096) + 2 * (4096 + 1024) + (4096 + 4096) + 8 * 3 * (4096 + 14336) + (4096 + 8))'
# phi-3-mini: 32 layers, h 3072, qkv 3 x 3072, ffn 8192 (gate_up 2 x 8192)
lt phi-3-mini-128k-instruct qkv_proj
expect_json 'j["setup"]["lora_targets"] == "qkv_proj" and j["model"]["trainable_params"] == 32 * 16 * (3072 + 3 * 3072)'
lt phi-3-mini-128k-instruct gate_up_proj
expect_json 'j["setup"]["lora_targets"] == "gate_up_proj" and j["model"]["trainable_params"] == 32 * 16 * (3072 + 2 * 8192)'
lt phi-3-mini-128k-instruct all-linear
expect_json 'j["model"]["trainable_params"] == 32 * 16 * ((3072 + 9216) + (3072 + 3072) + (3072 + 16384) + (8192 + 3072))'
run estimate "$RC/phi-3-mini-128k-instruct/config.json" --mode lora --gpu h200 --lora-targets q_proj,v_proj
expect_rc 2
expect_err "phi3 has no q_proj, v_proj (its linear modules: qkv_proj, o_proj, gate_up_proj, down_proj, lm_head"
# qwen3-30b-a3b: 48 MoE layers, h 2048, 128 experts of 768, router 2048 -> 128
lt qwen3-30b-a3b gate
expect_json 'j["model"]["trainable_params"] == 48 * 16 * (2048 + 128)'
lt qwen3-30b-a3b gate_proj,up_proj,down_proj
expect_json 'j["model"]["trainable_params"] == 48 * 128 * 16 * 3 * (2048 + 768)'
# deepseek-v3: 61 layers, h 7168, 128 heads, q rank 1536, kv rank 512,
# nope 128 + rope 64, v 128
lt deepseek-v3 q_a_proj,q_b_proj
expect_json 'j["model"]["trainable_params"] == 61 * 16 * ((7168 + 1536) + (1536 + 128 * 192))'
lt deepseek-v3 kv_a_proj_with_mqa,kv_b_proj
expect_json 'j["model"]["trainable_params"] == 61 * 16 * ((7168 + 512 + 64) + (512 + 128 * (128 + 128)))'
run estimate "$RC/deepseek-v3/config.json" --mode lora --gpu h200 --lora-targets gate
expect_rc 2
expect_err "deepseek_v3 has no gate (its linear modules: q_a_proj, q_b_proj, kv_a_proj_with_mqa, kv_b_proj, o_proj, gate_proj, up_proj, down_proj, lm_head"
# gpt-oss-20b: 24 layers, h 2880, 64 heads x 64, 8 kv heads
lt gpt-oss-20b all-linear
expect_json 'j["model"]["trainable_params"] == 24 * 16 * ((2880 + 4096) + 2 * (2880 + 512) + (4096 + 2880))'
run estimate "$RC/gpt-oss-20b/config.json" --mode lora --gpu h200 --lora-targets gate_up_proj
expect_rc 2
expect_err "gpt_oss has no gate_up_proj (its linear modules: q_proj, k_proj, v_proj, o_proj, lm_head"

test_case "nemotron_h: peft's default, the attention layers' q/k/v/o_proj"
# it said peft had no default for nemotron_h (peft's mapping has one)
cat >"$TMP/nh.json" <<'J'
{"model_type":"nemotron_h","hidden_size":1024,"num_attention_heads":8,"num_key_value_heads":2,"head_dim":128,"intermediate_size":4096,"vocab_size":32000,"hybrid_override_pattern":"M-M*-M-","num_hidden_layers":7,"mamba_num_heads":32,"mamba_head_dim":64,"n_groups":4,"ssm_state_size":64,"conv_kernel":4,"chunk_size":128,"use_bias":false,"use_conv_bias":true,"attention_bias":false,"mlp_bias":false,"tie_word_embeddings":false,"mlp_hidden_act":"relu2"}
J
run estimate "$TMP/nh.json" --mode lora --gpu h100-80gb --json
expect_rc 0
# one attention layer: q, o 1024 -> 1024; k, v 1024 -> 256
expect_json 'j["setup"]["lora_targets"] == "q_proj,k_proj,v_proj,o_proj" and j["model"]["trainable_params"] == 16 * ((1024 + 1024) + 2 * (1024 + 256) + (1024 + 1024))'
expect_json "any(\"peft's default for model type nemotron_h\" in a for a in j['assumptions'])"

test_case "the stack's targets cite its file and commit; the JSON keeps the whole source"
# the line quoted the whole source (torchtune's, 460 characters, cut at 200)
run estimate llama3-8b --mode lora --stack torchtune --gpu h100-80gb
expect_rc 0
expect_out "LoRA targets q_proj,v_proj: stack torchtune's default, from torchtune recipes/configs/*/*lora*.yaml at commit 03317787 (--lora-targets)"
expect_no_out "apply_lora_to_mlp"
run estimate llama3-8b --mode lora --stack torchtune --gpu h100-80gb --json
expect_json 'j["setup"]["lora_targets_source"].startswith("torchtune recipes/configs/*/*lora*.yaml (commit 03317787") and j["setup"]["lora_targets_source"].endswith("give --lora-targets to match one of those)")'
expect_json 'any(a.endswith("from torchtune recipes/configs/*/*lora*.yaml at commit 03317787 (--lora-targets)") for a in j["assumptions"])'
run fit llama3-8b --mode lora --stack torchtune --gpu h100-80gb
expect_out "LoRA targets q_proj,v_proj: stack torchtune's default, from torchtune recipes/configs/*/*lora*.yaml at commit 03317787 (--lora-targets)"
# peft's mapping (no --stack): no stack source in the setup
run estimate llama3-8b --mode lora --gpu h100-80gb --json
expect_json '"lora_targets_source" not in j["setup"]'
# a profile whose commit is not a string: one line naming the file
mkdir -p "$TMP/stackdata/stacks"
python3 - "$TMP/stackdata/stacks/torchtune.json" "$VF_SOURCE_DIR/data/stacks/torchtune.json" <<'P'
import json, sys
d = json.load(open(sys.argv[2]))
d["mechanisms"]["lora_targets"]["commit"] = 3317787
json.dump(d, open(sys.argv[1], "w"))
P
VRAMFIT_DATA_DIR="$TMP/stackdata" run estimate llama3-8b --mode lora --stack torchtune --gpu h100-80gb
expect_rc 1
expect_err "stackdata/stacks/torchtune.json: mechanisms.lora_targets: expected \"file\" (and \"commit\") as strings"
expect_err_lines 1

finish
