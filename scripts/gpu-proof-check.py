#!/usr/bin/env python3
# gpu-proof-check.py - the judging half of scripts/gpu-proof.sh (Python
# standard library only): record a check's result, compare the two probe
# paths, judge a tune sweep, collect `vramfit estimate` outputs, and write
# gpu-proof.json and gpu-proof.md. The shell script runs the programs; this
# file reads what they wrote and says passed or failed, and why.
#   record RESULTS NAME KIND STATUS SECONDS REASON [DETAIL.json]
#   probe DIR                 DIR/{nvml,smi,cvd-*}.json -> detail; exit 1 on a mismatch
#   tune DIR DEVICE           DIR/{tune,history}.json, autotune.log, config diff -> detail
#   estimates DIR             DIR/<id>.estimate.json -> DIR/estimates.json + detail
#   errors TABLE.json         the error table's summary as a check detail
#   report RESULTS META OUT   OUT/gpu-proof.json, OUT/gpu-proof.md
import json
import os
import sys

MIB = 1 << 20


def load(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def cmd_record(results, name, kind, status, seconds, reason, detail_path=None):
    detail = load(detail_path, {}) if detail_path else {}
    if status not in ("passed", "failed", "skipped"):
        raise SystemExit(f"record: status {status!r}")
    with open(results, "a") as f:
        f.write(json.dumps({"check": name, "kind": kind, "status": status,
                            "seconds": round(float(seconds), 2), "reason": reason,
                            "detail": detail}) + "\n")
    return 0


# --- probe: NVML vs nvidia-smi ------------------------------------------------------

FIELDS = ("index", "name", "memory_total_mib", "uuid", "compute_capability")


def cmd_probe(d):
    """Both paths list the same GPUs (index, name, memory MiB, UUID, compute
    capability) and driver; CUDA_VISIBLE_DEVICES by index and by UUID
    prefix selects the same single GPU on both."""
    nv, smi = load(f"{d}/nvml.json"), load(f"{d}/smi.json")
    det = {"problems": [], "timing_ms": load(f"{d}/timing.json", {}), "mig": load(f"{d}/mig.json", {})}
    if not nv or not smi:
        det["problems"].append("a probe printed no JSON (see the log)")
        print(json.dumps(det))
        return 1
    det["sources"] = [nv.get("source"), smi.get("source")]
    if nv.get("source") != "nvml":
        det["problems"].append(f"NVML path: source {nv.get('source')!r}, expected 'nvml'")
    if smi.get("source") != "nvidia-smi":
        det["problems"].append(f"nvidia-smi path: source {smi.get('source')!r}, expected 'nvidia-smi'")
    g1, g2 = nv.get("gpus") or [], smi.get("gpus") or []
    det["gpus"] = [{k: g.get(k) for k in FIELDS} for g in g1]
    det["driver"] = [nv.get("driver_version"), smi.get("driver_version")]
    if not g1:
        det["problems"].append("no GPU listed")
    if len(g1) != len(g2):
        det["problems"].append(f"{len(g1)} GPUs through NVML, {len(g2)} through nvidia-smi")
    for a, b in zip(g1, g2):
        for k in FIELDS:
            if a.get(k) != b.get(k):
                det["problems"].append(f"GPU {a.get('index')}: {k} {a.get(k)!r} (NVML) vs {b.get(k)!r} (nvidia-smi)")
    if nv.get("driver_version") != smi.get("driver_version"):
        det["problems"].append(f"driver {nv.get('driver_version')!r} (NVML) vs {smi.get('driver_version')!r} (nvidia-smi)")
    sel = load(f"{d}/select.json", {})
    det["cuda_visible_devices"] = []
    for label in ("index", "uuid-prefix"):
        want = sel.get("index")
        for path in ("nvml", "smi"):
            j = load(f"{d}/cvd-{label}-{path}.json")
            got = [g.get("index") for g in (j or {}).get("gpus") or []]
            uuids = [g.get("uuid") for g in (j or {}).get("gpus") or []]
            ok = got == [want] and uuids == [sel.get("uuid")]
            det["cuda_visible_devices"].append({"by": label, "value": sel.get(label), "path": path,
                                                "indices": got, "ok": ok})
            if not ok:
                det["problems"].append(f"CUDA_VISIBLE_DEVICES={sel.get(label)} ({label}) through {path}: "
                                       f"GPUs {got}, expected [{want}]")
    print(json.dumps(det))
    return 1 if det["problems"] else 0


# --- tune sweep -----------------------------------------------------------------------


def cmd_tune(d, device):
    """The sweep from a baseline with quantization already off: ok, no-op,
    oom (the device's own out-of-memory), the OOM reverted (the baseline
    stays the winner, config.yaml byte for byte as it was), autotune.log and
    the history hold the three trials; on CUDA the baseline's NVML
    per-process peak against the trainer's max_memory_reserved + the CUDA
    context."""
    tj, hist = load(f"{d}/tune.json"), load(f"{d}/history.json")
    cal = load(f"{d}/calibration.json", {})
    det = {"problems": [], "calibration": cal}
    if not tj:
        det["problems"].append("vramfit tune printed no JSON (see the log)")
        print(json.dumps(det))
        return 1
    trials = tj.get("trials", [])
    det["trials"] = [{k: t.get(k) for k in ("trial", "change", "outcome", "step_seconds", "peak_bytes",
                                            "peak_source", "peak_trainer_bytes", "peak_polled_bytes",
                                            "wall_seconds", "evidence")} for t in trials]
    outcomes = [t.get("outcome") for t in trials]
    if outcomes != ["ok", "no-op", "oom"]:
        det["problems"].append(f"outcomes {outcomes}, expected ['ok', 'no-op', 'oom']")
    oom_text = "CUDA out of memory" if device == "cuda" else "DefaultCPUAllocator: can't allocate memory"
    if len(trials) >= 3 and oom_text not in (trials[2].get("evidence") or ""):
        det["problems"].append(f"trial 3 evidence lacks {oom_text!r}: {trials[2].get('evidence')!r}")
    w = tj.get("winner") or {}
    if w.get("trial") != 1 or tj.get("patched"):
        det["problems"].append(f"winner trial {w.get('trial')}, patched {tj.get('patched')}: expected the "
                               "baseline, config.yaml not patched")
    try:
        diff = open(f"{d}/config.diff").read()
    except OSError:
        diff = "(no diff)"
    det["config_diff"] = diff.splitlines()
    if diff:
        det["problems"].append("config.yaml changed: the OOM trial was not reverted")
    try:
        alog = open(f"{d}/autotune.log").read().splitlines()
    except OSError:
        alog = []
    det["autotune_log"] = alog
    tl = [l for l in alog if "  strategy: " not in l]   # the sweep's closing strategy line is not a trial
    if len(tl) != 3 or "outcome: oom" not in (tl[2] if len(tl) == 3 else ""):
        det["problems"].append(f"autotune.log: {len(tl)} trial lines, expected 3 with trial 3 'outcome: oom'")
    h = [t.get("outcome") for t in (hist or {}).get("trials", [])]
    det["history"] = h
    ran = [o for o in outcomes if o != "no-op"]   # a no-op runs nothing and is not recorded
    if h != ran:
        det["problems"].append(f"history outcomes {h}, the sweep ran {ran}")
    if device == "cuda":
        nvml_check(trials[:1], cal, det)
    print(json.dumps(det))
    return 1 if det["problems"] else 0


def nvml_check(trials, cal, det):
    """Polled NVML per-process peak vs max_memory_reserved + the context
    measured in a separate process; within max(10 %, 256 MiB)."""
    ctx = cal.get("context_bytes")
    det["nvml_vs_trainer"] = []
    for t in trials:
        polled, own = t.get("peak_polled_bytes"), t.get("peak_trainer_bytes")
        row = {"trial": t.get("trial"), "source": t.get("peak_source"), "polled_bytes": polled,
               "trainer_reserved_bytes": own, "context_bytes": ctx}
        if polled is None or own is None or ctx is None:
            det["problems"].append(f"trial {t.get('trial')}: polled {polled}, trainer {own}, context {ctx}: "
                                   "cannot compare")
        else:
            expect = own + ctx
            row["diff_mib"] = round((polled - expect) / MIB, 1)
            row["rel"] = round(polled / expect - 1, 4)
            if abs(polled - expect) > max(0.10 * expect, 256 * MIB):
                det["problems"].append(f"trial {t.get('trial')}: NVML {polled / MIB:.0f} MiB vs reserved + context "
                                       f"{expect / MIB:.0f} MiB")
        if t.get("peak_source") not in ("nvml-process", "trainer"):
            det["problems"].append(f"trial {t.get('trial')}: peak from {t.get('peak_source')}, not NVML per process")
        det["nvml_vs_trainer"].append(row)


# --- estimates -----------------------------------------------------------------------


def cmd_estimates(d):
    """Every configuration estimated; the one meant to OOM predicted not to
    fit an H200, the others predicted to fit."""
    confs = load(f"{d}/configs.json", [])
    out, det = {}, {"problems": [], "predicted": []}
    for c in confs:
        e = load(f"{d}/{c['id']}.estimate.json")
        if not e:
            det["problems"].append(f"{c['id']}: vramfit estimate failed (see the log)")
            continue
        mem, gpu = e.get("memory", {}), (e.get("gpus") or [{}])[0]
        out[c["id"]] = {"peak_allocated_bytes": mem.get("peak_allocated_bytes"), "peak_bytes": mem.get("peak_bytes"),
                        "step_seconds": gpu.get("step_seconds"), "fits": gpu.get("fits"),
                        "dominant": mem.get("dominant_term")}
        det["predicted"].append({"id": c["id"], "peak_gib": round((mem.get("peak_bytes") or 0) / 2**30, 2),
                                 "fits_h200": gpu.get("fits"), "step_s": gpu.get("step_seconds")})
        want = c.get("expect") != "oom"
        if gpu.get("fits") is not want:
            det["problems"].append(f"{c['id']}: estimate says fits={gpu.get('fits')}, the configuration is "
                                   f"{'meant to fit' if want else 'meant to run out of memory'}")
    if not confs:
        det["problems"].append("no configurations (measure.py configs)")
    write_json(f"{d}/estimates.json", out)
    print(json.dumps(det))
    return 1 if det["problems"] else 0


def cmd_errors(table_path):
    tab = load(table_path)
    det = {"problems": []}
    if not tab or not tab.get("rows"):
        det["problems"].append("no measured record matched an estimate")
    else:
        det.update(tab)
    print(json.dumps(det))
    return 1 if det["problems"] else 0


# --- report --------------------------------------------------------------------------


def pct(x):
    return "-" if x is None else f"{x * 100:+.1f}%"


def gib(x):
    return "-" if x is None else f"{x / 2**30:.2f}"


def md_errors(lines, det):
    lines += ["", "## Estimator vs measured (H200)", "",
              "| record | status | peak alloc GiB | est. | err | device peak GiB | est. | err | step s | est. | err |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in det.get("rows", []):
        if r["status"] == "ok":
            lines.append(f"| {r['id']} | ok | {gib(r['peak_alloc'])} | {gib(r['pred_alloc'])} | {pct(r.get('err_alloc'))} "
                         f"| {gib(r['peak_device'])} | {gib(r['pred_peak'])} | {pct(r.get('err_peak'))} "
                         f"| {r['step_s'] or 0:.3f} | {r['pred_step_s'] or 0:.3f} | {pct(r.get('err_step'))} |")
        else:
            lines.append(f"| {r['id']} | {r['status']} | {gib(r['peak_alloc'])} | {gib(r['pred_alloc'])} | "
                         f"| | {gib(r['pred_peak'])} | predicted OOM: {'yes' if r.get('oom_predicted') else 'no'} | | | |")
    s = det.get("summary", {})
    lines.append("")
    for k, label in (("alloc", "peak allocated"), ("peak", "peak on the device"), ("step", "step time")):
        v = s.get(k) or {}
        if v.get("n"):
            lines.append(f"- {label}: median |error| {v['median_abs'] * 100:.1f}%, max {v['max_abs'] * 100:.1f}% "
                         f"over {v['n']} records")
    if s.get("oom"):
        lines.append(f"- out of memory: {s['oom']['predicted']} of {s['oom']['n']} predicted")


def cmd_report(results, meta_path, out):
    checks = []
    with open(results) as f:
        for line in f:
            if line.strip():
                checks.append(json.loads(line))
    meta = load(meta_path, {})
    counts = {s: sum(1 for c in checks if c["status"] == s) for s in ("passed", "failed", "skipped")}
    errors = next((c["detail"].get("summary") for c in checks if c["check"] == "estimate-errors"
                   and c["status"] != "skipped"), None)
    doc = dict(meta, checks=checks, summary=counts, measured_errors=errors)
    write_json(os.path.join(out, "gpu-proof.json"), doc)
    lines = ["# vramfit GPU proof", "",
             f"Machine: {meta.get('machine')}; GPU: {meta.get('gpu_summary')}",
             f"Budget {meta.get('budget_s')} s, elapsed {meta.get('elapsed_s')} s; "
             f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped.", ""]
    if meta.get("gpu_reason"):
        lines += [f"No GPU steps: {meta['gpu_reason']}", ""]
    lines += ["| check | kind | result | seconds | why / what |", "|---|---|---|---:|---|"]
    for c in checks:
        why = c["reason"] or "; ".join(c["detail"].get("problems", [])[:3])
        lines.append(f"| {c['check']} | {c['kind']} | {c['status']} | {c['seconds']:.1f} | {why} |")
    for c in checks:
        probs = c["detail"].get("problems") or []
        if probs:
            lines += ["", f"## {c['check']}: problems", ""] + [f"- {p}" for p in probs]
        if c["check"].startswith("tune-") and c["detail"].get("trials"):
            lines += ["", f"## {c['check']}: trials", "", "| # | change | outcome | step s | peak GiB | source | trainer GiB | polled GiB |",
                      "|---:|---|---|---:|---:|---|---:|---:|"]
            for t in c["detail"]["trials"]:
                lines.append(f"| {t['trial']} | {t['change']} | {t['outcome']} | {t['step_seconds'] or 0:.3f} | "
                             f"{gib(t['peak_bytes'])} | {t['peak_source'] or '-'} | {gib(t['peak_trainer_bytes'])} | "
                             f"{gib(t['peak_polled_bytes'])} |")
            for r in c["detail"].get("nvml_vs_trainer", []):
                lines.append(f"- trial {r['trial']}: NVML per process minus (reserved + context) = "
                             f"{r.get('diff_mib')} MiB ({pct(r.get('rel'))})")
        if c["check"].startswith("probe") and c["detail"].get("timing_ms"):
            t = c["detail"]["timing_ms"]
            lines += ["", f"{c['check']}: NVML path {t.get('nvml')} ms, nvidia-smi path {t.get('smi')} ms "
                      f"(median of {t.get('runs')}); MIG: {c['detail'].get('mig')}"]
        if c["check"] == "estimate-errors" and c["status"] != "skipped":
            md_errors(lines, c["detail"])
        if c["check"] == "groundtruth" and c["detail"]:
            d = c["detail"]
            lines += ["", "## groundtruth", ""]
            for m in d.get("measured", []):
                lines.append(f"- {m['id']}: {m['status']} (expected {m['expected']}), {m['wall_s']} s (planned {m['planned_s']} s)")
            for key in ("skipped", "failed", "not_started"):
                for m in d.get(key, []):
                    lines.append(f"- {m['id']}: {key.replace('_', ' ')}: {m['reason']}")
    with open(os.path.join(out, "gpu-proof.md.tmp"), "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(os.path.join(out, "gpu-proof.md.tmp"), os.path.join(out, "gpu-proof.md"))
    print("\n".join(lines))
    return 0


def main(argv):
    if not argv:
        print("usage: gpu-proof-check.py record|probe|tune|estimates|errors|report ...", file=sys.stderr)
        return 2
    cmd, args = argv[0], argv[1:]
    fn = {"record": cmd_record, "probe": cmd_probe, "tune": cmd_tune, "estimates": cmd_estimates,
          "errors": cmd_errors, "report": cmd_report}.get(cmd)
    if not fn:
        print(f"gpu-proof-check.py: unknown command {cmd!r}", file=sys.stderr)
        return 2
    return fn(*args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
