#!/usr/bin/env bash
# demo.sh VRAMFIT - the main job on an embedded default: probe the GPUs (or,
# on a machine without one, simulate an H100 80GB), decide the tier, then
# plan an LTX-2 LoRA run with the bundled test trainer configs
# (tests/fixtures/ltx-trainer) and generated stand-in model files, all in a
# temporary directory, and show the plan.md a person would approve.
set -uo pipefail
bin=${1:-build/vramfit}
root=$(cd "$(dirname "$0")/.." && pwd)
echo "\$ vramfit probe"
"$bin" probe
n=$("$bin" probe --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["gpus"]))' 2>/dev/null || echo 0)
gpu=()
if [ "$n" = "0" ]; then
  echo
  echo "No GPU here; simulating one:"
  echo "\$ vramfit probe --gpu h100-80gb"
  "$bin" probe --gpu h100-80gb
  gpu=(--gpu h100-80gb)
fi

# Stand-in models: a valid (tiny) safetensors file under the checkpoint's
# name and a Gemma directory with a config.json. Nothing outside $demo.
demo=$(mktemp -d /tmp/vramfit-demo.XXXXXX)
mkdir -p "$demo/models/gemma-3-12b-it"
echo '{"model_type": "gemma3"}' >"$demo/models/gemma-3-12b-it/config.json"
h='{"w":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}}'
l=${#h}
{ printf "$(printf '\\x%02x' $((l & 255)) $(((l >> 8) & 255)) 0 0 0 0 0 0)"; printf '%s' "$h"; printf '\0\0\0\0\0\0\0\0'; } \
  >"$demo/models/ltx-2-19b-dev.safetensors"

args=(--trainer-dir "$root/tests/fixtures/ltx-trainer" --workspace "$demo/workspace"
      --model "$demo/models/ltx-2-19b-dev.safetensors" --text-encoder "$demo/models/gemma-3-12b-it"
      --dataset demo --run-name t2v-demo)
echo
echo "\$ vramfit plan --trainer-dir tests/fixtures/ltx-trainer --workspace $demo/workspace \\"
echo "    --model ... --text-encoder ... --dataset demo --run-name t2v-demo ${gpu[*]}"
if ! "$bin" plan "${args[@]}" "${gpu[@]}"; then
  echo
  echo "(stopped on this machine's GPUs; planning for a simulated H100 80GB instead)"
  "$bin" plan "${args[@]}" --gpu h100-80gb || exit 1
fi
run="$demo/workspace/t2v-demo"
echo
echo "\$ vramfit check $run"
"$bin" check "$run"
echo
echo "\$ cat $run/plan.md"
cat "$run/plan.md"
echo
echo "(demo files are in $demo; remove them with: rm -r $demo)"
