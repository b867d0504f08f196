#!/usr/bin/env python3
"""png_boxes.py - is a screenshot blank inside each chart's box?

usage: png_boxes.py SHOT.png X,Y,W,H [X,Y,W,H ...]

Decodes the PNG with the standard library only (zlib; 8-bit RGB or RGBA,
non-interlaced, the five row filters), then for each box counts the pixels
that differ from the box's most common colour (the background). Prints one
line per box and exits 1 when a box has fewer than 2% such pixels or lies
outside the image. Used by tests/cli/report.sh."""
import struct
import sys
import zlib
from collections import Counter


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, w = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError(f"{path}: unsupported PNG (depth {depth}, colour type {ctype})")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def main():
    w, h, bpp, rows = decode(sys.argv[1])
    bad = 0
    for spec in sys.argv[2:]:
        x, y, bw, bh = (int(v) for v in spec.split(","))
        if bw <= 0 or bh <= 0 or x < 0 or y < 0 or x + bw > w or y + bh > h:
            print(f"box {spec}: outside the {w}x{h} image")
            bad += 1
            continue
        px = Counter()
        for yy in range(y, y + bh, 2):
            r = rows[yy]
            for xx in range(x, x + bw, 2):
                px[r[xx * bpp:xx * bpp + 3]] += 1
        total = sum(px.values())
        bg, nbg = px.most_common(1)[0]
        ink = (total - nbg) / total
        print(f"box {spec}: {100 * ink:.1f}% non-background pixels, {len(px)} colours")
        if ink < 0.02:
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
