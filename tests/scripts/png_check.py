#!/usr/bin/env python3
"""png_check.py FILE.png MIN_COLOURS MIN_INK - a screenshot is not blank.

A small PNG decoder (zlib from the standard library; 8-bit RGB or RGBA, non-interlaced, which is
what Chromium writes): undoes the row filters, then counts distinct colours and the share of
pixels that are not white.  Exit 0 when there are at least MIN_COLOURS colours and at least
MIN_INK (a fraction, e.g. 0.02) of the pixels are not white; else 1 with the numbers.
"""
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {ctype}, interlace {interlace}")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        cur = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                cur[i] = (cur[i] + cur[i - bpp]) & 255
        elif f == 2:
            cur = bytearray((a + b) & 255 for a, b in zip(cur, prev))
        elif f == 3:
            for i in range(stride):
                left = cur[i - bpp] if i >= bpp else 0
                cur[i] = (cur[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = cur[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(cur))
        prev = cur
    return w, h, bpp, rows


def main():
    path, min_colours, min_ink = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    w, h, bpp, rows = decode(path)
    colours, ink = set(), 0
    for r in rows:
        px = [r[i:i + 3] for i in range(0, len(r), bpp)]
        colours.update(px)
        ink += len(px) - px.count(b"\xff\xff\xff")
    share = ink / (w * h)
    print(f"{path}: {w}x{h}, {len(colours)} colours, {100 * share:.1f}% not white")
    return 0 if len(colours) >= min_colours and share >= min_ink else 1


if __name__ == "__main__":
    sys.exit(main())
