#!/bin/sh
# fake-trainer.sh CONFIG - a stand-in trainer for test-tune.c: reads the
# LTX-2 keys from the trial config with grep, prints the trainer's step
# lines with a step time that depends on them, writes the validation
# sample. Behaviour switches (environment, VRAMFIT_ prefix passes vramfit's
# clean environment): VRAMFIT_FAKE_OOM=<optimizer|quant|batch2> fails that
# trial with a CUDA OOM; VRAMFIT_FAKE_HANG=<same> hangs it;
# VRAMFIT_FAKE_SAME=1 makes every config equally fast;
# VRAMFIT_FAKE_COUNT=FILE gets one line per run;
# VRAMFIT_FAKE_GPU="FILE MiB|na" starts a worker (a grandchild in the
# trainer's process group), lists it in FILE (the fake NVML's procfile) as
# using MiB on GPU 0, with another process (pid 4100000, not ours) using
# 1000 MiB; the worker lives until the fake NVML has read FILE 8 more
# times (FILE.seen: at least two polling ticks saw it; bounded at 60 s)
# ("FILE MiB foreign": listed under a PID that is not the worker's); VRAMFIT_FAKE_PEAK_GB=G prints the
# trainer's own "Peak GPU memory: G GB"; VRAMFIT_FAKE_KILLJOB=<kind> kills
# its parent (the Slurm job script) with SIGKILL, as when the script dies
# before it writes the exit status.
cfg=$1
val() { grep -E "^[[:space:]]*$1:" "$cfg" | head -1 | sed -e "s/^[^:]*:[[:space:]]*//" -e 's/[[:space:]]*#.*//' -e 's/"//g' -e "s/'//g"; }
q=$(val quantization); opt=$(val optimizer_type); bs=$(val batch_size); steps=$(val steps)
out=$(val output_dir)
[ -n "$VRAMFIT_FAKE_COUNT" ] && echo "$q $opt $bs" >> "$VRAMFIT_FAKE_COUNT"
kind=base
[ "$q" = null ] && kind=quant
[ "$opt" = adamw ] && kind=optimizer
[ "$bs" = 2 ] && kind=batch2
t=1.00
[ "$q" = null ] && t=0.80
[ "$opt" = adamw ] && t=0.60
[ "$bs" = 2 ] && t=0.50
[ -n "$VRAMFIT_FAKE_SAME" ] && t=1.00
echo "[11/29/26 21:00:01] INFO     Loading model...                              trainer.py:101"
if [ "$VRAMFIT_FAKE_OOM" = "$kind" ]; then
  echo "Traceback (most recent call last):" >&2
  echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB." >&2
  exit 1
fi
if [ "$VRAMFIT_FAKE_KILLJOB" = "$kind" ]; then
  kill -KILL "$PPID"
  exit 1
fi
if [ "$VRAMFIT_FAKE_HANG" = "$kind" ]; then
  echo "Step 1/$steps - Loss: 0.5000, LR: 1.00e-04, Time/Step: ${t}s, Total Time: calculating..."
  sleep 1000 &
  echo $! > "${VRAMFIT_FAKE_COUNT:-/dev/null}.pid"
  wait
  exit 0
fi
if [ -n "$VRAMFIT_FAKE_GPU" ]; then
  set -- $VRAMFIT_FAKE_GPU
  seen0=$(cat "$1.seen" 2>/dev/null | wc -l)
  sh -c 'n=0; while [ $(cat "$1.seen" 2>/dev/null | wc -l) -lt $(($2 + 8)) ] && [ $n -lt 1200 ]; do
           sleep 0.05; n=$((n + 1)); done' worker "$1" "$seen0" &
  pid=$!
  [ "$3" = foreign ] && pid=4100001 # as NVML shows it from outside a PID namespace
  echo "0 $pid $2" >> "$1"
  echo "0 4100000 1000" >> "$1"
  wait $!
fi
i=1
while [ $i -le 3 ]; do
  echo "{\"vramfit\": {\"step\": $i, \"total_steps\": $steps, \"loss\": 0.5, \"step_seconds\": $t}}"
  i=$((i + 1))
done
echo "[11/29/26 21:00:09] INFO     Step $steps/$steps - Loss: 0.5000, LR: 1.00e-04, Time/Step: ${t}s, Total Time: 0h 0m  trainer.py:412"
[ -n "$VRAMFIT_FAKE_PEAK_GB" ] && echo " - Peak GPU memory: $VRAMFIT_FAKE_PEAK_GB GB"
mkdir -p "$out/samples" && echo sample > "$out/samples/step_$(printf %06d "$steps")_0.txt"
exit 0
