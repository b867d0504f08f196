#!/usr/bin/env bash
# tune-sweep.sh [VRAMFIT] - time a whole `vramfit tune` sweep of the example
# trainer on CPU (examples/ltx-mini-trainer, models/mini.json): baseline,
# quantization off, optimizer adamw, batch size 2 and 4 (--sweep-batch,
# accumulation 4). Prints the wall time of the sweep, each trial's step time
# and wall time, and vramfit's own overhead (sweep wall time minus the sum of
# the trials' wall times). A figure, not a test: run it by hand.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
VRAMFIT=${1:-$root/build/vramfit}
STEPS=${STEPS:-50}
trainer=$root/examples/ltx-mini-trainer
tmp=$(mktemp -d /tmp/vf-bench-tune.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
run=$tmp/run
mkdir -p "$run/overfit/.precomputed"
cp "$trainer/data/text.txt" "$run/overfit/.precomputed/"
cp "$trainer/configs/t2v_lora_low_vram.yaml" "$run/config.yaml"
"$VRAMFIT" config set "$run/config.yaml" "model.model_path=\"$trainer/models/mini.json\"" \
  "model.text_encoder_path=\"$trainer/models\"" \
  optimization.gradient_accumulation_steps=4 >/dev/null
export XDG_DATA_HOME=$tmp/xdg
start=$(date +%s.%N)
"$VRAMFIT" tune "$run" --trainer-dir "$trainer" --quiet --sweep-batch --steps "$STEPS" --json \
  --trainer-cmd "/usr/bin/python3 scripts/train.py {config} --disable-progress-bars" > "$tmp/out.json" || true
end=$(date +%s.%N)
python3 - "$tmp/out.json" "$start" "$end" "$STEPS" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
trials = sum(t["wall_seconds"] for t in j["trials"])
print(f"tune sweep ({len(j['trials'])} trials x {sys.argv[4]} steps, CPU, models/mini.json): {wall:.1f} s")
for t in j["trials"]:
    st = "-" if t["step_seconds"] is None else f"{t['step_seconds'] * 1000:.0f} ms"
    print(f"  trial {t['trial']} {t['change']:<18} {t['outcome']:<8} step {st:>8}  wall {t['wall_seconds']:.1f} s")
print(f"  vramfit overhead (sweep - trials): {wall - trials:.2f} s")
w = j.get("winner")
if w:
    print(f"  winner: trial {w['trial']} ({w['change']}), saves {w['saves_seconds_per_step'] * 1000:.0f} ms/step")
PY
