#!/usr/bin/env bash
# compare-estimates.sh - run the same estimates and fits with two vramfit
# binaries and compare their outputs byte for byte: for a refactoring of the
# estimator that must not change a single number.
#
#   tests/helpers/compare-estimates.sh OLD_VRAMFIT NEW_VRAMFIT [SHARED_DIR]
#
# Each case is one command line; its exit status, stdout and stderr are
# hashed for both binaries. Prints the cases that differ (with the command
# line) and "compared N outputs, D differences"; exit 0 when D is 0, 1 when
# not, 2 on a usage error. SHARED_DIR (default ../shared next to the source
# tree, or $VF_SHARED_DIR) adds the real configs and the ground-truth check.
# Writes only into a mktemp directory, removed at exit.
set -u
if [ $# -lt 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
	echo "usage: compare-estimates.sh OLD_VRAMFIT NEW_VRAMFIT [SHARED_DIR]" >&2
	exit 2
fi
old=$1
new=$2
here=$(cd "$(dirname "$0")/../.." && pwd)
shared=${3:-${VF_SHARED_DIR:-$here/../shared}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cases=$tmp/cases

# Most cases name their GPUs (--gpu); the few without see this machine's,
# the same for both binaries.
add() { printf '%s\n' "$*" >>"$cases"; }

# the table's rows: id, kind, family, params (the footer line is not one)
models=$("$old" models | awk 'NR > 1 && $2 ~ /^[a-z]+$/ && $4 ~ /^[0-9.]+$/ { print $1 }')
[ -n "$models" ] || { echo "compare-estimates: $old models listed nothing" >&2; exit 1; }
for m in $models; do
	for mode in "--mode full" "--mode lora" "--mode lora --quant nf4" "--mode infer"; do
		for ck in "" "--grad-ckpt"; do
			add estimate "$m" $mode $ck --gpu h100-80gb --json
		done
	done
	add estimate "$m" --gpu a100-80gb:4 --shard fsdp --json
	add estimate "$m" --gpu h100-80gb:8 --shard zero2 --grad-ckpt --json
	add estimate "$m" --gpu h100-80gb:2 --shard zero3 --grad-accum 4 --json
	add estimate "$m" --gpu rtx-4090 --mode lora --optimizer adamw8bit --batch 4 --seq 512 --json
	add estimate "$m" --gpu a10g --mode lora --quant int4 --lora-targets all-linear --lora-rank 64 --json
	add estimate "$m" --json
	add estimate "$m"
done

# optimizers, implementations, precisions, attention, stacks, losses on a few models
for m in llama3-8b gpt2 t5-base gemma2-2b mixtral-8x7b qwen3-30b-a3b bloom-560m phi3-mini; do
	for opt in adamw adamw8bit adafactor sgd lion paged-adamw paged-adamw8bit; do
		for impl in foreach fused for; do
			add estimate "$m" --gpu h100-80gb --optimizer $opt --optimizer-impl $impl --json
		done
		add estimate "$m" --gpu h100-80gb:4 --gpus 4 --shard ddp --optimizer $opt --mode lora --grad-accum 2 --json
	done
	for prec in amp bf16 fp16 fp32; do
		add estimate "$m" --gpu a100-40gb --precision $prec --grad-ckpt --json
		add estimate "$m" --gpu a100-40gb --precision $prec --mode lora --json
	done
	for att in sdpa eager flash; do
		add estimate "$m" --gpu h100-80gb --attention $att --seq 4096 --batch 2 --json
	done
	for stack in hf torchtune litgpt; do
		add estimate "$m" --gpu h100-80gb --stack $stack --mode lora --json
		add estimate "$m" --gpu h100-80gb --stack $stack --json
	done
	for loss in full chunked:8 chunked:16 fused-linear; do
		add estimate "$m" --gpu h100-80gb --loss $loss --grad-ckpt --json
	done
	add estimate "$m" --gpu h100-80gb --activation-offload --grad-ckpt --json
	add estimate "$m" --gpu h100-80gb --activation-offload --json
	add estimate "$m" --gpu h100-80gb --optimizer-in-backward --json
	add estimate "$m" --gpu h100-80gb --optimizer-in-backward --mode lora --json
	add estimate "$m" --gpu h100-80gb --compile --adapter-dtype bf16 --mode lora --json
	add estimate "$m" --gpu h100-80gb --tp 2 --gpus 2 --json
	add estimate "$m" --gpu h100-80gb:4 --pp 2 --micro-batches 4 --gpus 4 --json
	add estimate "$m" --gpu h100-80gb:2 --split layers --gpus 2 --mode infer --json
	add estimate "$m" --gpu h100-80gb --allocator expandable --json
	add estimate "$m" --gpu h100-80gb --explain
	add estimate "$m" --gpu h100-80gb --tokens 1e9 --price 2.5 --json
	for bs in "1 128" "2 1024" "8 2048" "16 8192" "3 333"; do
		set -- $bs
		add estimate "$m" --gpu h200 --batch "$1" --seq "$2" --json
		add estimate "$m" --gpu h200 --batch "$1" --seq "$2" --mode infer --json
		add estimate "$m" --gpu h200 --batch "$1" --seq "$2" --target-seq 64 --grad-ckpt --json
	done
	for q in int8 int4 nf4 fp8; do
		add estimate "$m" --gpu l4 --mode lora --quant $q --json
	done
	add estimate "$m" --gpu custom=20000 --context-mib 300 --json
	# a task head (the segment rounding follows the head's matrix); GeForce
	# and Ada datacenter cards over PCIe (generation, GeForce column, link)
	add estimate "$m" --gpu h100-80gb --head classify:3 --json
	add estimate "$m" --gpu a100-40gb --head classify:7 --mode lora --json
	add estimate "$m" --gpu rtx-4090:4 --gpus 4 --shard ddp --json
	add estimate "$m" --gpu l40s:4 --gpus 4 --shard ddp --mode lora --json
done

# generic models by parameter count
for p in 125M 1B 7B 70B 400B; do
	add estimate --params "$p" --gpu h100-80gb --json
	add estimate --params "$p" --gpu h100-80gb:8 --shard fsdp --mode lora --json
done

# inference engines: llama.cpp's layer placement over one card and a set
# (-ngl, --tensor-split, a refusal naming the fullest card), vLLM, transformers
for g in rtx-4090 rtx-3080:2 rtx-3090,rtx-4080 rtx-4090,rtx-3090:2,rtx-4080; do
	add estimate llama3.1-8b --mode infer --engine llamacpp --gpu "$g" --ctx 131072 --users 4 --json
	add estimate llama3-70b --mode infer --engine llamacpp --gpu "$g"
	add estimate llama3-70b --mode infer --engine llamacpp --gpu "$g" --n-gpu-layers 30 --json
done
add estimate llama3.1-8b --mode infer --engine llamacpp --gpu rtx-3090,rtx-4080 --ctx 8192 --tensor-split 1,1 --json
add estimate mixtral-8x7b --mode infer --engine llamacpp --gpu rtx-4090:2 --json
add estimate llama3-70b --mode infer --engine vllm --gpu h100-80gb:4
add estimate llama3.1-8b --mode infer --engine vllm --gpu a100-40gb --users 64 --json
add estimate llama3.1-8b --mode infer --engine transformers --gpu a100-40gb --json

# fits
for m in llama3-8b gpt2 t5-base mixtral-8x7b qwen2.5-0.5b gemma2-9b; do
	add fit "$m" --tokens 1e9 --json
	add fit "$m" --mode lora --tokens 1e8 --json
	add fit "$m" --gpu h100-80gb:8 --search --json
	add fit "$m" --gpu rtx-4090 --search --mode lora --top 5 --json
done
add fit llama3-70b --all-gpus --tokens 1e9 --json
add fit llama3-8b --gpu a100-40gb:4 --search --exhaustive --json

# real configs and fixture models
if [ -d "$shared/realconfigs" ]; then
	for c in "$shared"/realconfigs/*/config.json; do
		add estimate "$c" --gpu h100-80gb --json
		add estimate "$c" --gpu h100-80gb:8 --shard fsdp --mode lora --grad-ckpt --json
		add estimate "$c" --gpu h100-80gb --mode infer --json
	done
fi
if [ -d "$shared/fixtures/models" ]; then
	for d in "$shared"/fixtures/models/*/; do
		add estimate "$d" --gpu h100-80gb --json
	done
fi
if [ -f "$shared/groundtruth/calibration.jsonl" ]; then
	add estimate --check-groundtruth "$shared/groundtruth/calibration.jsonl" --json
	add estimate --check-groundtruth "$shared/groundtruth/calibration.jsonl"
fi

# run one case with a binary: exit status, stdout, stderr, then the same
# case under expandable segments
run_case() {
	local bin=$1
	shift
	local o=$tmp/o e=$tmp/e rc
	"$bin" "$@" >"$o" 2>"$e"
	rc=$?
	printf 'rc=%s\n' "$rc"
	cat "$o"
	printf -- '--stderr--\n'
	cat "$e"
	PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "$bin" "$@" >"$o" 2>"$e"
	rc=$?
	printf 'expandable rc=%s\n' "$rc"
	cat "$o"
	printf -- '--stderr--\n'
	cat "$e"
}

# The search's own wall-clock time (fit --search: search.seconds) is the
# one figure that differs from run to run; it is masked. COMPARE_IGNORE, a
# grep -E pattern, drops the lines it matches from both outputs (new keys a
# change adds, e.g. COMPARE_IGNORE='"(kbit_head|graph_held)":').
mask() {
	sed 's/^\(\t*"seconds":\t\).*/\1(masked)/' |
		if [ -n "${COMPARE_IGNORE:-}" ]; then grep -Ev -- "$COMPARE_IGNORE" || true; else cat; fi
}

n=0
diffs=0
failed=0
while IFS= read -r line; do
	# shellcheck disable=SC2086 # the case line is the argument list
	run_case "$old" $line | mask >"$tmp/a"
	# shellcheck disable=SC2086
	run_case "$new" $line | mask >"$tmp/b"
	n=$((n + 2))
	head -n 1 "$tmp/a" | grep -qx 'rc=0' || failed=$((failed + 1))
	if [ "$(md5sum <"$tmp/a")" != "$(md5sum <"$tmp/b")" ]; then
		diffs=$((diffs + 1))
		echo "differs: vramfit $line"
	fi
done <"$cases"
echo "compared $n outputs ($(wc -l <"$cases") command lines, $failed of them failing with the old binary), $diffs differences"
[ "$diffs" -eq 0 ]
