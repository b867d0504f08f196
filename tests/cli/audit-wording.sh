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

finish
