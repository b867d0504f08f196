#!/usr/bin/env bash
# audit-wording.sh - what a new user reads agrees with what vramfit did
# (audit 7): a remedy offered after the advice search found nothing never
# names, as an alternative on its own, a change that search already tried.
. "$(dirname "$0")/lib.sh"
export XDG_CONFIG_HOME="$TMP/config"
unset VRAMFIT_DATA_DIR || true
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI="$TMP/no-such-smi"

test_case "estimate: no tried change fits -> the remedy does not offer --grad-ckpt alone"
# llama3-8b full fine-tuning, batch 4 x 2048: 188 GiB; the advice search
# (batch split, checkpointing, optimizer, quantization, precision) finds
# nothing within an A100 40GB, checkpointing on included
run estimate llama3-8b --mode full --batch 4 --seq 2048 --gpu a100-40gb
expect_rc 0
expect_out 'a100-40gb: does not fit'
expect_out 'no change of batch split, checkpointing, optimizer, quantization or precision fits it'
expect_no_out 'fits it: try --grad-ckpt,'
expect_out 'try a smaller --batch or --seq together with --grad-ckpt'
# already on: not offered again
run estimate llama3-8b --mode full --batch 16 --seq 4096 --grad-ckpt --gpu a100-40gb
expect_rc 0
expect_out 'a100-40gb: does not fit'
expect_no_out '--grad-ckpt,'
expect_no_out 'together with --grad-ckpt'

test_case "estimate: the device peak is not called simulated when the replay fell short"
# the allocator replay of torchtune's QLoRA recipe on a small model (its
# chunked loss) allocates less than the step's analytic peak; that analytic
# peak stands (no reserve), and the assumptions, --explain and the JSON say
# so instead of 'simulated' (FSDP's steps, the case here before, now replay
# their gathers: tests/unit/test-fsdp.c)
short=(qwen2.5-0.5b --stack torchtune --mode lora --lora-targets q_proj,v_proj --quant nf4 --batch 4 --seq 2048 --gpu rtx-4090)
run estimate "${short[@]}" --explain
expect_rc 0
expect_no_out "device peak: PyTorch's caching allocator (2.9-2.11 rules) simulated"
expect_out "device peak: the step's analytic allocated peak (16.39 GiB) with no allocator reserve"
expect_out 'the peak is approximate'
expect_out "below the step's analytic allocated peak (16.39 GiB), which the estimate keeps"
run estimate "${short[@]}" --json
expect_rc 0
expect_json 'j["memory"]["allocator_replay_allocated_bytes"] < j["memory"]["peak_allocated_bytes"]'
expect_json 'j["memory"]["allocator_bytes"] == 0'
expect_json 'any("the peak is approximate" in a for a in j["assumptions"])'
# one GPU: the replay covers the step, its reserve stands and nothing changes
run estimate tinyllama-1.1b --batch 4 --seq 1024 --grad-ckpt --gpu rtx-4090 --json
expect_rc 0
expect_json '"allocator_replay_allocated_bytes" not in j["memory"] and j["memory"]["allocator_bytes"] > 0'
expect_json 'any("simulated over the model load" in a for a in j["assumptions"])'

test_case "report: a path that is missing or not a directory is named as such"
run report "$TMP/no-such-run"
expect_rc 2
expect_err "$TMP/no-such-run: no such directory (report takes estimate, fit, history or a run directory)"
printf 'x\n' >"$TMP/a.txt"
run report "$TMP/a.txt"
expect_rc 2
expect_err "$TMP/a.txt: not a directory (report takes estimate, fit, history or a run directory)"

finish
