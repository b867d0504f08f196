#!/usr/bin/env bash
# demo.sh VRAMFIT - the main job on an embedded default: probe the GPUs (or,
# on a machine without one, simulate an H100 80GB) and decide the tier.
set -uo pipefail
bin=${1:-build/vramfit}
echo "\$ vramfit probe"
"$bin" probe
n=$("$bin" probe --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["gpus"]))' 2>/dev/null || echo 0)
if [ "$n" = "0" ]; then
  echo
  echo "No GPU here; simulating one:"
  echo "\$ vramfit probe --gpu h100-80gb"
  "$bin" probe --gpu h100-80gb
fi
