# fit-dit.sh - end to end: vramfit fit for the trainer's own model
# (ltx-2-19b, issue 29): per GPU the tier, its starting config, the
# predicted autotune sweep, the run's time and cost; --mode full only FSDP
# on 80 GB-class cards; the gate below 32 GB; --trainer-dir; --search.
. "$(dirname "$0")/lib.sh"

row() { printf '[r for r in j["rows"] if r["gpu"] == "%s" and r["gpus"] == %s][0]' "$1" "${2:-1}"; }
trial() { printf '[t for t in %s["sweep"] if t["id"] == "%s"][0]' "$(row "$1" "${3:-1}")" "$2"; }

test_case "fit ltx-2-19b --mode lora: the 32GB tier's low-VRAM config fits, quantization off predicted OOM"
run fit ltx-2-19b --mode lora --json
expect_rc 0
expect_json '(lambda r: r["tier"] == "32GB tier" and r["config"] == "t2v_lora_low_vram.yaml" and r["fits"])('"$(row rtx-5090)"')'
expect_json '(lambda t: t["change"] == "quantization off" and t["fits"] is False and t["peak_bytes"] > 32e9)('"$(trial rtx-5090 quantization-off)"')'
expect_json '(lambda r: r["winner"]["trial"] == 1 and r["sweep"][0]["fits"] and r["sweep"][0]["peak_bytes"] < r["vram_bytes"])('"$(row rtx-5090)"')'
# every fitting row: step time, time and cost of the 2,000 steps of the shipped config
expect_json 'j["steps"] == 2000 and all(r["run"]["steps"] == 2000 and r["run"]["hours"] > 0 and r["run"]["cost_usd"] > 0 and r["winner"]["step_seconds"] > 0 for r in j["rows"] if r["fits"])'
expect_json 'all(set(("gpu", "gpus", "tier", "fits", "sweep", "winner", "run")) <= set(r) for r in j["rows"])'
expect_json 'all(set(("change", "fits", "peak_bytes", "step_seconds")) <= set(t) for r in j["rows"] for t in r["sweep"])'
# sorted by cost: fitting rows first, cost ascending
expect_json '(lambda c: c == sorted(c))([r["run"]["cost_usd"] for r in j["rows"] if r["fits"]])'

test_case "fit ltx-2-19b: the 40–60GB tier starts from the low-VRAM config; on a 48 GB card the relaxation is predicted to fit"
run fit ltx-2-19b --json
expect_rc 0
expect_json 'j["mode"] == "lora"'
expect_json '(lambda r: r["tier"] == "40–60GB tier" and r["config"] == "t2v_lora_low_vram.yaml" and r["fits"])('"$(row l40s)"')'
run fit ltx-2-19b --gpu rtx-a6000 --gpu l40s --json
expect_rc 0
expect_json '(lambda r: r["tier"] == "40–60GB tier" and r["fits"] and r["winner"]["deltas"] == {"acceleration.quantization": "null"})('"$(row rtx-a6000)"')'
expect_json '(lambda t: t["fits"] and t["adopted"] and t["step_seconds"] < '"$(row rtx-a6000)"'["sweep"][0]["step_seconds"])('"$(trial rtx-a6000 quantization-off)"')'
# the L40S (48 GB as well) the same, with the connectors and validation of issue 30 counted
expect_json '(lambda r: r["fits"] and r["winner"]["deltas"] == {"acceleration.quantization": "null"})('"$(row l40s)"')'
expect_json '(lambda t: t["fits"] and t["adopted"])('"$(trial l40s quantization-off)"')'

test_case "fit ltx-2-19b: H100 / A100 80 GB and H200 on the standard config, checkpointing off predicted OOM"
run fit ltx-2-19b --json
expect_rc 0
for g in h100-80gb a100-80gb h200; do
	expect_json '(lambda r: r["tier"] == "80GB+ tier" and r["config"] == "t2v_lora.yaml" and r["fits"] and r["run"]["cost_usd"] > 0)('"$(row $g)"')'
	expect_json '(lambda t: t["fits"] is False and t["needs_flag"] == "--try-no-ckpt")('"$(trial $g grad-ckpt-off)"')'
done
# the standard config already has quantization off and adamw: no-op trials, as tune reports them
expect_json '(lambda t: t["outcome"] == "no change" and t["fits"] is None)('"$(trial h100-80gb quantization-off)"')'
run fit ltx-2-19b
expect_rc 0
expect_out_re 'rtx-5090 +1 +32GB tier +t2v_lora_low_vram.yaml +yes'
expect_out_re 'h100-80gb +1 +80GB\+ tier +t2v_lora.yaml +yes'
expect_out_re 'trial 2 +quantization off +out of memory'
expect_out_re 'trial 4 +gradient checkpointing off +out of memory'
expect_out "predicted winner: trial 1 (baseline)"
expect_out_re '\$[0-9]+'

test_case "fit ltx-2-19b: cards under 32 GB are gated unless --accept-risk"
run fit ltx-2-19b --json
expect_rc 0
expect_json '(lambda r: r["gated"] and r["tier"] == "(gate)" and r["fits"] is False and r["sweep"] == [] and "--accept-risk" in r["gate"])('"$(row rtx-4090)"')'
expect_json '[r["fits"] for r in j["rows"]] == sorted([r["fits"] for r in j["rows"]], reverse=True)'
run fit ltx-2-19b
expect_out "--accept-risk"
run fit ltx-2-19b --gpu rtx-4090 --accept-risk --json
expect_rc 0
expect_json '(lambda r: r["gated"] and len(r["sweep"]) >= 1 and r["config"] == "t2v_lora_low_vram.yaml")('"$(row rtx-4090)"')'

test_case "fit ltx-2-19b --mode full: only multi-GPU FSDP on 80 GB-class cards"
run fit ltx-2-19b --mode full --json
expect_rc 0
expect_json 'len(j["rows"]) > 0 and all(r["gpus"] >= 2 and r["strategy"] == "FSDP" and r["vram_bytes"] >= 75 * 1024**3 for r in j["rows"])'
expect_json 'any(r["fits"] for r in j["rows"])'
expect_json 'all(r["winner"]["deltas"].get("acceleration.quantization", "null") == "null" for r in j["rows"] if r["fits"])'
expect_json 'any(n["gpu"] == "rtx-5090" and "80 GB" in n["reason"] for n in j["not_proposed"])'
expect_json 'not any(r["gpu"] in ("rtx-5090", "l40s", "a100-40gb") for r in j["rows"])'
run fit ltx-2-19b --mode full --gpu h100-80gb:1 --json
expect_rc 0
expect_json 'j["rows"] == [] and "at least 2" in j["not_proposed"][0]["reason"]'

test_case "fit ltx-2-19b --sort time, --steps, --video"
run fit ltx-2-19b --sort time --steps 500 --json
expect_rc 0
expect_json 'j["sort"] == "time" and all(r["run"]["steps"] == 500 for r in j["rows"] if r["fits"])'
expect_json '(lambda h: h == sorted(h))([r["run"]["hours"] for r in j["rows"] if r["fits"]])'
run fit ltx-2-19b --gpu h100-80gb --video 512x512x49 --json
expect_rc 0
expect_json '(lambda r: "--video" in r["config_from"] and r["sweep"][0]["peak_bytes"] < 60 * 1024**3)('"$(row h100-80gb)"')'

test_case "fit ltx-2-19b --trainer-dir: the checkout's shipped files are the starting configs"
d=$(mktemp -d)
mkdir -p "$d/configs"
cat >"$d/configs/t2v_lora_low_vram.yaml" <<'YAML'
model:
  training_mode: "lora"
lora:
  rank: 8
  alpha: 8
optimization:
  steps: 1200
  optimizer_type: "adamw8bit"
  batch_size: 1
  gradient_accumulation_steps: 1
  enable_gradient_checkpointing: true
acceleration:
  mixed_precision_mode: "bf16"
  quantization: "int8-quanto"
  load_text_encoder_in_8bit: true
  offload_optimizer_during_validation: true
validation:
  video_dims: [512, 512, 33]
YAML
run fit ltx-2-19b --trainer-dir "$d" --gpu rtx-5090 --json
expect_rc 0
expect_json '(lambda r: "checkout" in r["config_from"] and r["run"]["steps"] == 1200 and r["fits"])('"$(row rtx-5090)"')'
run fit ltx-2-19b --gpu rtx-5090 --json
p_profile=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0]["sweep"][0]["peak_bytes"])')
run fit ltx-2-19b --trainer-dir "$d" --gpu rtx-5090 --json
expect_json 'j["rows"][0]["sweep"][0]["peak_bytes"] < '"$p_profile"
# a tier whose file this checkout lacks: said on its row, not a silent answer
run fit ltx-2-19b --trainer-dir "$d" --gpu h100-80gb --json
expect_rc 0
expect_json '(lambda r: r["fits"] is False and "t2v_lora.yaml" in r["error"])('"$(row h100-80gb)"')'
rm -rf "$d"

test_case "fit ltx-2-19b --search: the trainer's knobs on one GPU, fits only"
run fit ltx-2-19b --search --gpu rtx-5090 --top 5 --json
expect_rc 0
expect_json '(lambda r: 0 < len(r["search"]) <= 5 and r["search_fitting"] >= len(r["search"]) and all(s["peak_bytes"] <= r["vram_bytes"] for s in r["search"]))('"$(row rtx-5090)"')'
expect_json '(lambda s: [x["training_changes"] for x in s] == sorted(x["training_changes"] for x in s))('"$(row rtx-5090)"'["search"])'
run fit ltx-2-19b --search --gpu rtx-5090 --top 3
expect_rc 0
expect_out "--search:"

test_case "fit of a video DiT: bad input in one line"
run fit ltx-2-19b --mode infer
expect_rc 2
expect_err "lora or full"
run fit ltx-2-19b --tokens 1e9
expect_rc 2
expect_err "--steps"
for bad in "--html $TMP/x.html" --exhaustive "--sort vram" "--forbid quant" "--margin 0.2"; do
	run fit ltx-2-19b $bad
	expect_rc 2
	expect_err "not used for a video DiT"
done
run fit llama2-7b --trainer-dir /tmp
expect_rc 2
expect_err "--trainer-dir"
run fit ltx-2-19b --trainer-dir /nonexistent-dir-xyz
check '[ "$rc" -ne 0 ]'
expect_err_lines 1

test_case "a DiT's attention scales with the batch, not its square: FLOPs 4x at batch 4, time at most 4x (the utilisation rises with the tokens)"
for b in 1 4; do
  run estimate ltx-2-19b --gpu h200 --batch $b --json
  expect_rc 0
  printf '%s' "$out" >"$TMP/dit-b$b.json"
done
check 'python3 -c "
import json
a = json.load(open(\"$TMP/dit-b1.json\")); b = json.load(open(\"$TMP/dit-b4.json\"))
ra = b[\"gpus\"][0][\"step_parts\"][\"attention\"] / a[\"gpus\"][0][\"step_parts\"][\"attention\"]
rf = b[\"time\"][\"flops_per_step\"] / a[\"time\"][\"flops_per_step\"]
raise SystemExit(0 if 3 < ra <= 4.05 and abs(rf - 4) < 0.05 else 1)"'

test_case "ZeRO-1/2 on a video DiT: refused (not modelled), not a peak counted whole under a sharded label"
for c in estimate fit; do
  for z in zero1 zero2; do
    run $c ltx-2-19b --mode full --gpu h100-80gb:8 --gpus 8 --shard $z
    expect_rc 2
    expect_err "--shard $z: not modelled for video DiTs"
  done
done
run estimate ltx-2-19b --mode full --gpu h100-80gb:8 --gpus 8 --shard fsdp
expect_rc 0

test_case "LoRA targets on a video DiT beyond its attention projections: refused, not an empty or silently narrowed target list"
for t in gate_proj,up_proj all-linear to_q,down_proj; do
  for c in estimate fit; do
    run $c ltx-2-19b --gpu h100-80gb --lora-targets $t
    expect_rc 2
    expect_err "the video DiT estimate models adapters on the attention projections only (to_q, to_k, to_v, to_out.0"
  done
done
run estimate ltx-2-19b --gpu h100-80gb --lora-targets to_q,to_v
expect_rc 0
expect_out "lora r32 alpha 32 on to_q to_v, bf16" # the 80GB+ tier config's rank, your targets

finish
