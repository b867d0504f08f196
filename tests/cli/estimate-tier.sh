# estimate-tier.sh - vramfit estimate of the trainer's own model (issue 29
# items 2 and 3): each GPU under its tier's starting config unless knob
# flags set (those knobs of the config alone), said in the assumptions; the advice of a
# DiT searches the trainer's knobs and never suggests one it tried.
. "$(dirname "$0")/lib.sh"

gpu() { printf '[g for g in j["gpus"] if g["id"] == "%s"][0]' "$1"; }

test_case "estimate ltx-2-19b --mode lora: each card under its own tier config"
run estimate ltx-2-19b --mode lora --json
expect_rc 0
expect_json '(lambda g: g["fits"] and "32GB tier: t2v_lora_low_vram.yaml" in g["tier_config"] and g["setup"]["quant"] == "int8" and g["setup"]["optimizer"] == "adamw8bit")('"$(gpu rtx-5090)"')'
expect_json '(lambda g: g["fits"] and "80GB+ tier: t2v_lora.yaml" in g["tier_config"] and g["setup"]["quant"] == "none" and g["setup"]["lora_rank"] == 32)('"$(gpu h100-80gb)"')'
expect_json '(lambda g: "40–60GB tier" in g["tier_config"] and g["fits"])('"$(gpu l40s)"')'
expect_json 'any("tier" in a and "starting config" in a for a in j["assumptions"])'
run estimate ltx-2-19b --mode lora --gpu rtx-5090
expect_rc 0
expect_out_re 'rtx-5090 +31.84 GiB +yes'
expect_out "each GPU under its tier's config"
expect_out "576x576x49"
expect_out "rtx-5090 32GB tier: t2v_lora_low_vram.yaml (int8-quanto, adamw8bit, rank 16, 576x576x49"
# one verdict: the flags' defaults (adamw, no quantization, 960x544x89) are
# not what the tier config runs, so no assumption line claims them
expect_no_out "optimizer adamw (--optimizer)"
expect_no_out "base weights not quantized (--quant)"
expect_no_out "(--video WxHxF)"
expect_no_out "LoRA targets q_proj"
run estimate ltx-2-19b --gpu l40s --json
expect_rc 0
# the tier config's text encoder ("text encoder in 8-bit") embeds the
# shipped config's validation prompts: loaded, a phase of its own
expect_json '"text encoder in 8-bit" in j["gpus"][0]["tier_config"] and j["gpus"][0]["setup"]["text_encoder"] == "int8" and "text-encoder" in [p["phase"] for p in j["memory"]["phases"]]'
run estimate ltx-2-19b --gpu h100-80gb --json
expect_rc 0
expect_json '"text encoder in bf16" in j["gpus"][0]["tier_config"] and j["gpus"][0]["setup"]["text_encoder"] == "bf16"'
run estimate ltx-2-19b --gpu l40s --json
expect_rc 0
expect_json 'not any("(--optimizer)" in a or "(--quant)" in a or "(--video" in a or "(--validation" in a for a in j["assumptions"])'

test_case "estimate ltx-2-19b: a knob flag changes that knob of the tier config alone"
run estimate ltx-2-19b --video 960x544x89 --lora-rank 32 --optimizer adamw --grad-ckpt --gpu rtx-5090 --json
expect_rc 0
expect_json '(lambda g: "32GB tier: t2v_lora_low_vram.yaml" in g["tier_config"] and g["tier_flags"] == ["--optimizer", "--grad-ckpt", "--lora-rank", "--video"])(j["gpus"][0])'
# the flags' knobs are the user's, the others the tier config's (int8, optimizer offloaded)
expect_json '(lambda s: s["lora_rank"] == 32 and s["optimizer"] == "adamw" and s["video"] == "960x544x89" and s["quant"] == "int8" and s["offload_optimizer"] is True)(j["gpus"][0]["setup"])'
expect_json 'j["setup"]["quant"] == "int8" and j["setup"]["lora_rank"] == 32'
expect_json 'any("starting config" in a and "changes that knob of the config alone" in a for a in j["assumptions"])'
run estimate ltx-2-19b --video 960x544x89 --gpu rtx-5090
expect_rc 0
expect_out "each GPU under its tier's config with your --video (Assumptions); rtx-5090: lora r16"
expect_out "int8 base, adamw8bit"
expect_out "; with your --video"
# the advice's change, given as its flag, is the estimate the advice showed
run estimate ltx-2-19b --gpu rtx-4090 --json
expect_rc 0
adv=$(printf '%s' "$out" | python3 -c 'import json,sys; a=json.load(sys.stdin)["gpus"][0]["advice"][0]; print(a["settings"], a["peak_bytes"])')
check '[ "${adv% *}" = "quant int8 -> int4" ]'
run estimate ltx-2-19b --gpu rtx-4090 --quant int4 --json
expect_rc 0
expect_json 'j["gpus"][0]["fits"] is True and j["gpus"][0]["peak_bytes"] == '"${adv##* }"
expect_json 'j["gpus"][0]["tier_flags"] == ["--quant"] and j["gpus"][0]["setup"]["optimizer"] == "adamw8bit"'
# --validation off is honoured under the tier config, not dropped
run estimate ltx-2-19b --gpu rtx-5090 --validation off --json
expect_rc 0
expect_json '"validation" not in [p["phase"] for p in j["memory"]["phases"]] and j["gpus"][0]["setup"]["validation"] == "off"'
run estimate ltx-2-19b --mode infer --gpu rtx-5090 --json
expect_rc 0
expect_json '"tier_config" not in j["gpus"][0]'

test_case "DiT advice: the trainer's knobs searched, never a change it says it tried"
run estimate ltx-2-19b --video 960x544x89 --lora-rank 32 --optimizer adamw --grad-ckpt --quant none --gpu rtx-5090
expect_rc 0
expect_no_out "try --quant"
expect_out "the cheapest change that fits: quant none -> "
# at 1920x1088x121 no knob of the trainer is enough: the advice says what is left
run estimate ltx-2-19b --video 1920x1088x121 --lora-rank 32 --optimizer adamw --grad-ckpt --gpu rtx-5090
expect_rc 0
expect_no_out "try --quant"
expect_out "no change of quantization (int8, fp8, int4), optimizer, text encoder, optimizer offload, checkpointing, batch split or LoRA rank fits it"
run estimate ltx-2-19b --mode lora --gpu rtx-4090 --json
expect_rc 0
expect_json '(lambda g: not g["fits"] and len(g["advice"]) >= 1 and all(a["settings"] and a["peak_bytes"] < g["vram_bytes"] for a in g["advice"]))('"$(gpu rtx-4090)"')'
expect_json '(lambda g: all(c["from"] != c["to"] for a in g["advice"] for c in a["changes"]))('"$(gpu rtx-4090)"')'
expect_json '"quant int8 -> int4" in '"$(gpu rtx-4090)"'["advice"][0]["settings"]'
run estimate ltx-2-19b --mode lora --gpu rtx-4090
expect_out "the cheapest change that fits: quant int8 -> int4"
expect_no_out "try --quant"

test_case "LTX advice: its JSON changes name every knob its settings do; fit and estimate judge a change alike"
# the JSON's changes left the text encoder and the optimizer offload out:
# following them kept a bf16 text encoder (27.9 GB, out of memory)
run estimate ltx-2-19b --gpu rtx-4090 --text-encoder bf16 --json
expect_rc 0
expect_json 'all(("text-encoder" in a["settings"]) == any(c["knob"] == "text_encoder" for c in a["changes"]) and ("offload-optimizer" in a["settings"]) == any(c["knob"] == "offload_optimizer" for c in a["changes"]) for a in j["gpus"][0]["advice"])'
expect_json '{"knob": "text_encoder", "from": "bf16", "to": "int8"} in j["gpus"][0]["advice"][0]["changes"]'
p0=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["gpus"][0]["advice"][0]["peak_bytes"])')
run estimate ltx-2-19b --gpu rtx-4090 --text-encoder int8 --quant int4 --json
expect_json 'j["gpus"][0]["fits"] and j["gpus"][0]["peak_bytes"] == '"$p0"
run estimate ltx-2-19b --gpu rtx-4090 --no-offload-optimizer --json
expect_json 'any(c["knob"] == "offload_optimizer" and c["to"] == "true" for a in j["gpus"][0]["advice"] for c in a["changes"])'
# fit --search counted no text encoder: int4 with a bf16 text encoder
# "fit" at int4's own peak; estimate says 25.96 GiB of 23.99
run fit ltx-2-19b --accept-risk --search --gpu rtx-4090 --json
expect_rc 0
expect_json 'not any(r["changes"].get("acceleration.load_text_encoder_in_8bit") == "false" for r in j["rows"][0]["search"])'
# --video: validation at the training size unless --validation (fit's video_dims)
run fit ltx-2.3-22b --video 512x512x49 --accept-risk --search --gpu rtx-5090 --json
pf=$(printf '%s' "$out" | python3 -c 'import json,sys; print([r["peak_bytes"] for r in json.load(sys.stdin)["rows"][0]["search"] if r["changes"] == {"acceleration.offload_optimizer_during_validation": "false"}][0])')
run estimate ltx-2.3-22b --video 512x512x49 --no-offload-optimizer --gpu rtx-5090 --json
expect_json 'j["gpus"][0]["peak_bytes"] == '"$pf"' and j["gpus"][0]["setup"]["validation"] == "512x512x49"'

finish
