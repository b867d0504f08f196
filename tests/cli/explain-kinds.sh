#!/usr/bin/env bash
# explain-kinds.sh - estimate --explain says what it shows for each kind of
# model: a language model's allocator segments and step parts; a DiT's or a
# UNet's step parts (dit.c) and a line saying its peak is the memory terms with an
# estimated allocator reserve; for a vision encoder (neither) a line saying
# so; never the same output as without --explain.
. "$(dirname "$0")/lib.sh"
export VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI="$TMP/no-such-smi"
VC="$VF_SOURCE_DIR/tests/fixtures/vision"

# explain_page MODEL: the page without --explain (in $plain), then with it
# (in $out); no allocator segments either way
explain_page() {
  run estimate "$1" --gpu h100-80gb
  expect_rc 0
  plain=$out
  run estimate "$1" --gpu h100-80gb --explain
  expect_rc 0
  expect_no_out "Caching allocator at the reserved peak"
}

# explain_note MODEL KIND: --explain adds exactly the note naming KIND
explain_note() {
  explain_page "$1"
  expect_out "--explain: the allocator's segments and the step's parts are worked out for language models; for this $2"
  expect_out "its peak is the memory terms above with an estimated allocator reserve (not simulated), its step time one figure without parts"
  check '[ "$(printf "%s" "$out" | head -n -2)" = "$plain" ]'
}

# dit_parts MODEL [KIND]: --explain adds the step's parts and the allocator note
dit_parts() {
  explain_page "$1"
  expect_out "Step time on NVIDIA H100 80GB HBM3: "
  expect_out "  GEMMs  "
  expect_out "  attention  "
  expect_out "  optimizer step  "
  expect_out "--explain: the allocator's segments are worked out for language models; for this ${2:-DiT} its peak is the memory terms above with an estimated allocator reserve (not simulated), its step time the parts above"
  expect_no_out "one figure without parts"
  # the page without --explain, then the parts and the note
  check '[ "$(printf "%s" "$out" | head -n "$(printf "%s\n" "$plain" | wc -l)")" = "$plain" ]'
}

test_case "--explain on the trainer's video DiT: its step's parts and a note"
dit_parts ltx-2-19b

test_case "--explain on a DiT from a config.json: its step's parts and a note"
dit_parts "$VC/pixart.json"

test_case "--explain on a UNet from a config.json: its step's parts and a note"
dit_parts "$VF_SOURCE_DIR/tests/fixtures/diffusers/sdxl-unet.json" UNet

test_case "--explain on a vision encoder"
explain_note "$VC/clip-l14.json" "vision encoder"

test_case "--explain on a language model: segments and step parts, no note"
run estimate llama2-7b --mode lora --gpu h100-80gb --explain
expect_rc 0
expect_out "Caching allocator at the reserved peak"
expect_out "Step time on NVIDIA H100 80GB HBM3"
expect_no_out "worked out for language models"

test_case "--explain on a VLM: its language model's step parts, no note"
run estimate "$VC/llava15-7b.json" --gpu h100-80gb --explain
expect_rc 0
expect_out "Step time on NVIDIA H100 80GB HBM3"
expect_no_out "worked out for language models"

test_case "--explain --json: the JSON alone"
run estimate ltx-2-19b --gpu h100-80gb --explain --json
expect_rc 0
expect_json 'j["model"]["kind"] == "dit"'
finish
