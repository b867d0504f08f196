#!/usr/bin/env python3
# process_dataset.py - ltx-mini-trainer's preprocessing (an EXAMPLE for
# vramfit's tests and demos): the LTX-2 trainer's command line,
#   process_dataset.py DATASET --resolution-buckets WxHxF[;...]
#       --model-path M --text-encoder-path T
#       [--video-vae-path V --audio-vae-path A] [--lora-trigger WORD]
#       [--output-dir DIR]
# DATASET is a CSV, JSON (a list of objects) or JSONL file with `caption`
# and `media_path` (or `video`) columns, media paths relative to the file.
# For each row it writes into DIR (default: .precomputed beside the
# dataset file) latents/<stem>.txt (the
# "latent": here the media file's text, which train.py trains on) and
# conditions/<stem>.txt (the caption, with the trigger word in
# front when one is given), each through a temp file and a rename, and
# prints `Processing N/T: NAME` as it goes. A missing media file or column
# is an error naming the row (exit 1).
import csv
import json
import os
import sys
import time


def usage():
    print("usage: process_dataset.py DATASET --resolution-buckets WxHxF[;...] --model-path M "
          "--text-encoder-path T [--video-vae-path V] [--audio-vae-path A] [--lora-trigger W] "
          "[--output-dir DIR]",
          file=sys.stderr)
    return 2


def parse_args(argv):
    takes = {"--resolution-buckets", "--model-path", "--text-encoder-path", "--video-vae-path",
             "--audio-vae-path", "--lora-trigger", "--output-dir"}
    pos, opts, i = [], {}, 0
    while i < len(argv):
        a = argv[i]
        if a in takes and i + 1 < len(argv):
            opts[a] = argv[i + 1]
            i += 2
        elif a.startswith("--"):
            return None, None
        else:
            pos.append(a)
            i += 1
    if len(pos) != 1 or "--resolution-buckets" not in opts or "--model-path" not in opts:
        return None, None
    return pos[0], opts


def read_rows(path):
    with open(path, newline="") as f:
        text = f.read()
    if path.endswith(".csv"):
        return list(csv.DictReader(text.splitlines()))
    if path.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    rows = json.loads(text)
    if not isinstance(rows, list):
        raise ValueError("expected a list of objects")
    return rows


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv):
    dataset, opts = parse_args(argv)
    if dataset is None:
        return usage()
    for b in opts["--resolution-buckets"].split(";"):
        parts = b.split("x")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            print(f"Error: --resolution-buckets {b!r}: expected WxHxF", file=sys.stderr)
            return 1
    try:
        rows = read_rows(dataset)
    except (OSError, ValueError) as e:
        print(f"Error: {dataset}: {e}", file=sys.stderr)
        return 1
    base = os.path.dirname(os.path.abspath(dataset))
    out = opts.get("--output-dir") or os.path.join(base, ".precomputed")
    for sub in ("latents", "conditions"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    trigger = opts.get("--lora-trigger")
    delay = float(os.environ.get("VRAMFIT_EXAMPLE_PREPROCESS_DELAY", "0") or 0)
    t0 = time.time()
    for n, row in enumerate(rows, 1):
        media, caption = row.get("media_path", row.get("video")), row.get("caption")
        if not isinstance(media, str) or not isinstance(caption, str):
            print(f"Error: {dataset}: row {n}: expected `caption` and `media_path` (or `video`) columns",
                  file=sys.stderr)
            return 1
        src = media if os.path.isabs(media) else os.path.join(base, media)
        try:
            with open(src, errors="replace") as f:
                content = f.read()
        except OSError as e:
            print(f"Error: {dataset}: row {n}: {e}", file=sys.stderr)
            return 1
        stem = os.path.splitext(os.path.basename(media))[0]
        write_atomic(os.path.join(out, "latents", stem + ".txt"), content)
        write_atomic(os.path.join(out, "conditions", stem + ".txt"),
                     (trigger + " " if trigger else "") + caption + "\n")
        print(f"Processing {n}/{len(rows)}: {os.path.basename(media)} "
              f"({n / max(time.time() - t0, 1e-6):.1f} files/s)", flush=True)
        if delay:
            time.sleep(delay)
    print(f"Done: {len(rows)} files written to {out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
