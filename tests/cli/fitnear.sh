#!/usr/bin/env bash
# fitnear.sh - the allocator near the card's limit: fit's searches let the
# allocator simulation decide setups the fast estimate puts just over the
# card, and a device peak the card's capacity shaped says so.
. "$(dirname "$0")/lib.sh"
export XDG_CONFIG_HOME="$TMP/config"
unset VRAMFIT_DATA_DIR || true
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI="$TMP/no-such-smi"

test_case "fit's fewest changes: a near miss of the fast estimate that the simulation fits"
# mixtral QLoRA on two RTX 4090s: ZeRO-3 and checkpointing keep the nf4 base
# at 21.52 GiB simulated (vramfit estimate) under 21.59 GiB usable, 21.90 GiB
# on the fast path; the search dropped it unseen and the row changed the
# quantization (nf4 -> int4), a numerics change, as well
run estimate mixtral-8x7b --mode lora --quant nf4 --gpu rtx-4090:2 --shard zero3 --grad-ckpt --json
pk=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["gpus"][0]["peak_bytes"])')
run fit mixtral-8x7b --mode lora --quant nf4 --gpu rtx-4090:2 --json
expect_rc 0
expect_json "(lambda r: r['fits'] and r['peak_bytes'] == $pk and r['setup']['quant'] == 'nf4' and r['setup']['shard'] == 'zero3' and r['setup']['grad_ckpt'])(j['rows'][0])"
run fit mixtral-8x7b --mode lora --quant nf4 --gpu rtx-4090:2
expect_out_re '^rtx-4090 +2 +yes +grad-ckpt on, shard ddp -> zero3 +1 '

test_case "fit --search: the near misses the simulation fits are shown, counted, with their simulated peak"
run fit mixtral-8x7b --mode lora --quant nf4 --gpu rtx-4090:2 --search --forbid quant --json
expect_rc 0
expect_json "j['search']['near_misses_fit_by_allocator_simulation'] >= 1"
expect_json "any(r['setup']['shard'] == 'zero3' and r['setup']['optimizer'] == 'adamw' and r['peak_bytes'] == $pk for r in j['results'])"
expect_json "all(r['fits'] and r['peak_bytes'] <= r['limit_bytes'] for r in j['results'])"
expect_json "len(j['results']) == j['search']['fitting']"
run fit mixtral-8x7b --mode lora --quant nf4 --gpu rtx-4090:2 --search --forbid quant
expect_out_re 'rtx-4090 2x zero3, b1x1, ckpt on, adamw, nf4 +21\.52 GiB'
expect_out_re 'of them over on the fast estimate by less than its allocator reserve, under in the allocator simulation'

test_case "estimate: a device peak the card's limit shaped says so, in the row's text and JSON"
# llama3-8b full FSDP x 2 with checkpointing, batch 4 (hf: bf16 gathers): unbounded, the replay reserves
# more than an H100 80GB holds; PyTorch's allocator frees its cache and
# retries the cudaMalloc there, so the peak (75.83 GiB) is the card's
run estimate llama3-8b --shard fsdp --gpus 2 --grad-ckpt --batch 4 --gpu h100-80gb --gpu h200 --json
expect_rc 0
expect_json "(lambda g: g['allocator_retries'] >= 1 and 'at the card' in g['device_peak_note'])(j['gpus'][0])"
expect_json "'allocator_retries' not in j['gpus'][1] and j['gpus'][1]['peak_bytes'] > j['gpus'][0]['peak_bytes']"
run estimate llama3-8b --shard fsdp --gpus 2 --grad-ckpt --batch 4 --gpu h100-80gb --gpu h200
expect_out_re "^h100-80gb: device peak with the allocator at the card's limit: cache freed and the cudaMalloc retried [0-9]+ times? "
expect_no_out "h200: device peak with the allocator"

test_case "fit: a row whose simulated peak met the card's limit says so"
run fit llama3-8b --shard fsdp --gpus 2 --grad-ckpt --batch 4 --gpu h100-80gb:2 --margin 0 --forbid batch,grad-ckpt,optimizer,quant,shard,gpus,split --json
expect_rc 0
expect_json "(lambda r: r['fits'] and r['allocator_retries'] >= 1 and 'at the card' in r['device_peak_note'])(j['rows'][0])"
run fit llama3-8b --shard fsdp --gpus 2 --grad-ckpt --batch 4 --gpu h100-80gb:2 --margin 0 --forbid batch,grad-ckpt,optimizer,quant,shard,gpus,split
expect_out_re "^h100-80gb x2: device peak with the allocator at the card's limit"

test_case "fit's max batch is the simulation's against the row's limit: it agrees with the per-batch rows"
# llama3-8b full FSDP x 2 with checkpointing on h100-80gb, --margin 0: the
# row at batch 1 said max batch 1 (the fast path's) while the rows at
# batches 2 and 5 fit by the simulation that decides each row
f="llama3-8b --shard fsdp --gpus 2 --grad-ckpt --gpu h100-80gb:2 --margin 0 --forbid batch,grad-ckpt,optimizer,quant,shard,gpus,split --json"
run fit $f
expect_rc 0
mb=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0]["max_batch"])')
check "[ $mb -ge 2 ]"
for b in $(seq 2 "$mb"); do
  run fit $f --batch "$b"
  expect_json "j['rows'][0]['fits'] and j['rows'][0]['max_batch'] == $mb"
done
run fit $f --batch $((mb + 1))
expect_json "not j['rows'][0]['fits']"

finish
