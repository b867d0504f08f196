# split.sh - end to end: one model across several GPUs (--split layers,
# --tp, --pp) in estimate and fit; the acceptance examples of the issue.
. "$(dirname "$0")/lib.sh"

test_case "NeoX-20B on 2 x RTX 3090, layer split: fits, half the weights on each, KV with its layers"
run estimate gpt-neox-20b --mode infer --precision bf16 --gpu rtx-3090:2
expect_rc 0
expect_out 'does not fit'
run estimate gpt-neox-20b --mode infer --precision bf16 --split layers --gpu rtx-3090:2
expect_rc 0
expect_out 'layers 0-22, embeddings'
expect_out 'layers 23-43, head'
expect_out 'GPU 0 decides the verdict'
expect_no_out 'does not fit'
run estimate gpt-neox-20b --mode infer --precision bf16 --split layers --gpu rtx-3090:2 --json
expect_rc 0
expect_json 'j["gpus"][0]["fits"] and j["gpus"][0]["split"]["kind"] == "layers"'
expect_json 'len(j["gpus"][0]["split"]["gpus"]) == 2 and j["gpus"][0]["split"]["limiting_gpu"] == 0'
# 41,109,135,360 B of bf16 weights: each card between 45% and 55%
expect_json 'all(0.45 < g["memory"]["weights_bytes"] / 41109135360 < 0.55 for g in j["gpus"][0]["split"]["gpus"])'
# KV cache 2 x 6144 x 2048 x 2 B = 50,331,648 B per layer, on the GPU of the layer
expect_json '[g["memory"]["kv_cache_bytes"] for g in j["gpus"][0]["split"]["gpus"]] == [23 * 50331648, 21 * 50331648]'
expect_json '[g["layers"] for g in j["gpus"][0]["split"]["gpus"]] == [[0, 22], [23, 43]]'
expect_json 'j["setup"]["split"] == "layers"'
# one verdict: the inference section agrees with the split's (users over
# both cards, not the whole model on one), and says what it approximates
expect_json 'j["inference"]["fits"] and j["inference"]["max_users"] >= 1 and j["inference"]["approximate"]'
expect_json 'any(x.startswith("inference approximate") and "layer split" in x for x in j["assumptions"])'
run estimate gpt-neox-20b --mode infer --precision bf16 --split layers --gpu rtx-3090:2
expect_out_re '^rtx-3090 +[0-9]+ KiB +[0-9.]+ GiB +- +[1-9]'
# the same under ZeRO-3 over 4 cards: the inference section's verdict is the rows'
run estimate gpt-neox-20b --mode infer --gpus 4 --shard zero3 --gpu rtx-3090:4 --json
expect_json 'j["gpus"][0]["fits"] and j["inference"]["fits"] and j["inference"]["max_users"] >= 1'
expect_json 'any(x.startswith("inference approximate") and "zero3" in x for x in j["assumptions"])'

test_case "--max-memory moves layers on (accelerate max_memory)"
run estimate gpt-neox-20b --mode infer --precision bf16 --split layers --max-memory 0=12 --gpu rtx-3090:3 --json
expect_rc 0
expect_json 'j["gpus"][0]["split"]["gpus"][0]["layers"] == [0, 12]'

test_case "Llama-3.1-70B inference --tp 4 on four 80 GB cards: a quarter of the weights each"
run estimate llama3.1-70b --mode infer --tp 4 --gpu h100-80gb:4 --json
expect_rc 0
expect_json 'j["gpus"][0]["fits"] and j["gpus"][0]["split"]["tp"] == 4'
# 141,107,412,992 B / 4 + 3/4 of the replicated norms (1,978,368 B)
expect_json 'all(g["memory"]["weights_bytes"] == 35278831616 for g in j["gpus"][0]["split"]["gpus"])'
expect_json 'j["gpus"][0]["split"]["tp_comm_seconds"] > 0'
run estimate llama3.1-70b --mode infer --tp 4 --gpu h100-80gb:4
expect_out '1/4 of each matrix'

test_case "training: FSDP x TP=8 over 64 GPUs fits an 80 GB card"
run estimate llama3.1-70b --mode full --tp 8 --gpus 64 --shard fsdp --seq 8192 --grad-ckpt --gpu h100-80gb --json
expect_rc 0
expect_json 'j["gpus"][0]["fits"] and j["gpus"][0]["split"]["dp"] == 8'
expect_json '20 * 2**30 < j["gpus"][0]["peak_bytes"] < 80 * 2**30'

test_case "a 4-stage pipeline: stage 0 holds 4 micro-batches, the bubble is in the step"
run estimate llama2-7b --mode full --pp 4 --micro-batches 4 --grad-ckpt --gpu a100-80gb:4 --json
expect_rc 0
expect_json '[g["micro_batches_in_flight"] for g in j["gpus"][0]["split"]["gpus"]] == [4, 3, 2, 1]'
expect_json 'j["gpus"][0]["split"]["bubble_seconds"] > 0'
run estimate llama2-7b --mode full --pp 4 --micro-batches 4 --gpu a100-80gb:4
expect_out 'stage 0: layers 0-7, embeddings, 4 micro-batches in flight'
expect_out 'pipeline bubble'

test_case "one verdict: the max batch of a pipeline is a batch the same command says fits (qwen2.5-3b, 4 stages on 40 GB cards: max batch 5, batch 5 did not fit)"
run estimate qwen2.5-3b --mode full --pp 4 --grad-ckpt --gpu a100-40gb:4 --json
expect_rc 0
mb=$(printf '%s' "$out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["gpus"][0]["max_batch"])')
check '[ "$mb" -ge 1 ]'
run estimate qwen2.5-3b --mode full --pp 4 --grad-ckpt --batch "$mb" --gpu a100-40gb:4 --json
expect_rc 0
expect_json 'j["gpus"][0]["fits"] and j["gpus"][0]["split"]["fits"] and j["gpus"][0]["max_batch"] == '"$mb"
run estimate qwen2.5-3b --mode full --pp 4 --grad-ckpt --batch "$mb" --gpu a100-40gb:4
expect_out_re '^a100-40gb x4 .* yes '

test_case "fit's split row is estimate's for the same setup (llama3.1-70b tp 8 x pp 4 on 32 H100s: fit 77.64 GiB from the fast path, estimate 77.79 GiB replayed)"
run fit llama3.1-70b --mode full --forbid grad-ckpt,shard --gpu h100-80gb:32 --json
expect_rc 0
expect_json '[r["split"] for r in j["rows"] if r.get("split")] == ["tp 8 x pp 4, 4 micro-batches"]'
fit_peak=$(printf '%s' "$out" | python3 -c 'import json, sys; print([r["peak_bytes"] for r in json.load(sys.stdin)["rows"] if r.get("split")][0])')
run estimate llama3.1-70b --mode full --tp 8 --pp 4 --grad-accum 4 --micro-batches 4 --gpu h100-80gb:32 --json
expect_rc 0
expect_json 'j["gpus"][0]["peak_bytes"] == '"$fit_peak"

test_case "bad splits are usage errors"
run estimate llama3.1-70b --mode infer --tp 3 --gpu h100-80gb:3
expect_rc 2
expect_err '64 attention heads do not split 3 ways'
run estimate llama2-7b --split layers --tp 2 --gpu h100-80gb:2
expect_rc 2
expect_err 'one or the other'
run estimate llama2-7b --tp 4 --gpus 6 --gpu h100-80gb
expect_rc 2
expect_err 'multiple of 4'
run estimate llama2-7b --split layers --max-memory 0=lots --gpu rtx-3090:2
expect_rc 2
expect_err '--max-memory'
run estimate ltx-2-19b --tp 2 --gpu h100-80gb:2
expect_rc 2
expect_err 'video DiTs'
run estimate llama2-7b --tp 2 --pp 4 --gpu a100-80gb:4
expect_rc 2
expect_err 'one replica needs 8 GPUs'
run estimate gpt-neox-20b --mode infer --split layers --gpus 3 --gpu rtx-3090:2
expect_rc 2
expect_err 'one replica needs 3 GPUs'
run fit llama2-7b --tp 2
expect_rc 2
expect_err 'fit offers the split itself'

test_case "fit --engine transformers offers generate()'s layer split where one card does not hold the model"
# gpt-neox-20b in bf16 (20.6 B parameters, 41 GB) is more than one RTX 3090 or
# A100 40GB holds: accelerate's device_map layer split over the fewest cards,
# one card working at a time, so a token reads all the weights at one card's
# bandwidth: under 936e9 / 41.1e9 = 22.8 tok/s on RTX 3090s. generate() does
# no tensor parallel (the training grid's tp 2 on NVLink A100s is not offered).
run fit gpt-neox-20b --mode infer --engine transformers --json
expect_rc 0
expect_json 'j["engine"] == "transformers"'
expect_json 'any(g["id"] == "rtx-3090" and any(o["option"] == "transformers bf16, layer split over 2 GPUs" and o["gpus"] == 2 for o in g["options"]) for g in j["gpus"])'
expect_json 'all(o["inference"]["decode_tokens_per_second_per_user"] < 22.8 for g in j["gpus"] if g["id"] == "rtx-3090" for o in g["options"] if o["gpus"] == 2)'
expect_json 'any(g["id"] == "a100-40gb" and g["options"][0]["option"] == "transformers bf16, layer split over 2 GPUs" for g in j["gpus"])'
expect_json 'any(g["id"] == "a100-80gb" and any(o["option"] == "transformers bf16" and o["gpus"] == 1 for o in g["options"]) for g in j["gpus"])'
expect_json 'all("tp" not in o["option"] and o["inference"]["engine"] == "transformers" for g in j["gpus"] for o in g["options"])'
run fit gpt-neox-20b --mode infer --engine transformers
expect_out_re '^rtx-3090 +transformers bf16, layer split over 2 GPUs +2 +one GPU works at a time '
expect_no_out 'ZeRO-'
run fit gpt-neox-20b --mode infer --engine transformers --gpu rtx-3090:2 --json
expect_rc 0
expect_json 'any(o["gpus"] == 2 and o["option"].startswith("transformers bf16, layer split over 2 GPUs") for o in j["gpus"][0]["options"])'

finish
