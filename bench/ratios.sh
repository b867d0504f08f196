#!/usr/bin/env bash
# ratios.sh [VRAMFIT [OLD_VRAMFIT]] - whole-process wall time of a few vramfit commands as
# ratios to a yardstick every machine has (`python3 -c pass`), measured in
# the same run: each round times the yardstick and then each command back to
# back, and the figure is the median over rounds of command / yardstick, so
# it means the same on a busy and an idle machine. Milliseconds are printed
# too. With LLM_ANALYSIS_DIR pointing at a checkout of llm-analysis, its CLI
# answers a comparable question (`train` of its NousResearch_Llama-2-7b-hf
# config on an a100-sxm-40gb, batch 4 per GPU, sequence 2048;
# LLM_ANALYSIS_ARGS overrides the arguments; it needs its `fire` package) in
# the same rounds, and each vramfit command is also given as a ratio to it;
# without LLM_ANALYSIS_DIR that row is skipped with a note.
# OLD_VRAMFIT (second argument, or $OLD_VRAMFIT): another build (say of the
# main branch) timed in the same rounds, each command's row printed for both
# and the paired ratio new / old: a before/after figure from one run.
# Each row also gives the command's page faults: the median of the minor
# faults of the process (its rusage from wait4, ru_minflt; no major ones
# once the page cache is warm), since on a VM where a fault costs about
# 10 us (issue 21) they, not instructions, set a short command's time.
# The fit --search row also prints configurations/s: the size of its
# searched space (from its --json) over the median wall time of the whole
# process (start, catalogs, search, the allocator simulation confirming the
# results shown, output).
#   ROUNDS=9 (paired rounds; a command slower than 1 s gets 3, slower than
#   10 s one)
# A figure, not a test: `make bench` runs it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
VRAMFIT=${1:-$root/build/vramfit}
OLD=${2:-${OLD_VRAMFIT:-}}
ROUNDS=${ROUNDS:-9}
tmp=$(mktemp -d /tmp/vf-bench-ratios.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export XDG_DATA_HOME=$tmp/xdg XDG_CACHE_HOME=$tmp/cache HOME=$tmp
python3 - "$VRAMFIT" "$ROUNDS" "${LLM_ANALYSIS_DIR:-}" "${LLM_ANALYSIS_ARGS:-}" "$OLD" <<'PY'
import json, os, shlex, statistics, subprocess, sys, time

vramfit, rounds, lla_dir, lla_args = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
old = sys.argv[5]
yard = ["python3", "-c", "pass"]
WIDE = ["fit", "llama2-7b", "--mode", "lora", "--search", "--gpu", "a100-80gb:8", "--batch", "8",
        "--allow", "batch,grad-ckpt,optimizer,quant,shard,gpus,lora-rank,precision"]
questions = [
    ("--version (the process start alone: loader, libraries)", ["--version"]),
    ("estimate llama3-8b full b4 s2048 (whole catalog)",
     ["estimate", "llama3-8b", "--mode", "full", "--batch", "4", "--seq", "2048"]),
    ("estimate llama3-8b full b4 s2048 --gpu a100-40gb",
     ["estimate", "llama3-8b", "--mode", "full", "--batch", "4", "--seq", "2048",
      "--gpu", "a100-40gb"]),
    ("estimate deepseek-v3 full --gpu h100-80gb:8",
     ["estimate", "deepseek-v3", "--mode", "full", "--gpu", "h100-80gb:8"]),
    ("fit llama2-7b lora --search, wide space, 8x a100-80gb", WIDE),
]
cmds = []
for name, args in questions:
    cmds.append((name, [vramfit] + args, None))
    if old:
        cmds.append((name + " [old]", [old] + args, None))
space = {}
for exe in [vramfit] + ([old] if old else []):
    r = subprocess.run([exe] + WIDE + ["--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        space[exe] = json.loads(r.stdout)["search"]["space"]
    except (ValueError, KeyError, TypeError):
        pass
note = None
if lla_dir:
    args = shlex.split(lla_args) if lla_args else [
        "train", "--model_name", "NousResearch_Llama-2-7b-hf", "--gpu_name", "a100-sxm-40gb",
        "--batch_size_per_gpu", "4", "--seq_len", "2048", "--total_num_tokens", "1e9"]
    env = dict(os.environ, PYTHONPATH=lla_dir + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmds.append(("llm-analysis train (its CLI, comparable question)",
                 ["python3", "-m", "llm_analysis.analysis"] + args, (lla_dir, env)))
else:
    note = "llm-analysis: skipped (set LLM_ANALYSIS_DIR to a checkout of llm-analysis to compare)"

faults = {}

def run(argv, where=None):
    """Wall ms, exit status, stderr lines, and the child's minor page faults."""
    cwd, env = where if where else (None, None)
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd, env=env)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    dt = (time.perf_counter() - t) * 1e3
    p.returncode = os.waitstatus_to_exitcode(status)
    p.stderr.close()
    return dt, p.returncode, err.decode(errors="replace").strip().splitlines(), ru.ru_minflt

# the first call of each warms the page cache and says how many rounds it
# gets: all under 1 s, 3 under 10 s, else that first call is the figure
# (paired with a yardstick run right after it)
plan, times, ratios = [], {}, {}
for name, argv, where in cmds:
    dt, rc, err, nf = run(argv, where)
    if rc != 0:
        print(f"  {name}: failed (exit {rc}): {err[-1] if err else ''}")
        continue
    n = rounds if dt < 1000 else min(rounds, 3) if dt < 10000 else 0
    plan.append((name, argv, where, n))
    times[name], ratios[name], faults[name] = [], [], []
    if n == 0:
        y = run(yard)[0]
        times[name].append(dt)
        ratios[name].append(dt / y)
        faults[name].append(nf)
run(yard)
yard_ms, yard_faults = [], []
for r in range(rounds):
    y, _, _, yf = run(yard)
    yard_ms.append(y)
    yard_faults.append(yf)
    # a new build and its old twin swap places every other round: the run
    # right after the yardstick's python is slower (about 15 % on equal code)
    order = list(plan)
    if r % 2:
        for i in range(len(order) - 1):
            if order[i + 1][0] == order[i][0] + " [old]":
                order[i], order[i + 1] = order[i + 1], order[i]
    for name, argv, where, n in order:
        if r >= n:
            continue
        dt, _, _, nf = run(argv, where)
        times[name].append(dt)
        ratios[name].append(dt / y)
        faults[name].append(nf)
med = statistics.median
print(f"yardstick `python3 -c pass`: median {med(yard_ms):.1f} ms over {rounds} rounds "
      f"(min {min(yard_ms):.1f}, max {max(yard_ms):.1f}), {med(yard_faults):.0f} page faults")
print(f"  {'command':<60} {'x yardstick':>11} {'median ms':>10} {'min ms':>8} {'faults':>7} "
      f"{'rounds':>6}")
for name, argv, where, n in plan:
    print(f"  {name:<60} {med(ratios[name]):>11.3f} {med(times[name]):>10.1f} "
          f"{min(times[name]):>8.1f} {med(faults[name]):>7.0f} {len(times[name]):>6}")
for name, argv, where, n in plan:
    if name.startswith("fit ") and argv[0] in space:
        print(f"  {name}: {space[argv[0]]} configurations, "
              f"{space[argv[0]] / med(times[name]) / 1e3:.2f} M configurations/s (whole process)")
if old:
    for name, argv, where, n in plan:
        if name + " [old]" in times:
            pairs = [a / b for a, b in zip(times[name], times[name + " [old]"])]
            print(f"  {name}: new / old {med(pairs):.3f} (paired, median), page faults "
                  f"{med(faults[name]):.0f} / {med(faults[name + ' [old]']):.0f}")
vf = [p[0] for p in plan if not p[0].startswith("llm-analysis") and not p[0].endswith("[old]")]
lla = [p[0] for p in plan if p[0].startswith("llm-analysis")]
if lla and vf:
    for name in vf:
        pairs = [a / b for a, b in zip(times[name], times[lla[0]])]
        how = "paired, median" if len(pairs) > 1 else "one run, against round 1's"
        print(f"  {name} / llm-analysis: {med(pairs):.3f} ({how})")
if note:
    print("  " + note)
PY
