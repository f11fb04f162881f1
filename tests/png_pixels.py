#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Count the pixels of a screenshot (headless Chromium's, see screenshot in
tests/lib.sh) with nothing but the standard library.

  png_pixels.py PNG [RRGGBB[~TOL] ...]

prints one line: the non-white pixels, the distinct colours, then per
colour given the pixels whose red, green and blue each lie within TOL
(default 0: exactly that colour) of it. 8-bit RGB or RGBA, not interlaced.
"""
import struct
import sys
import zlib


def read_png(path):
    """(bytes per pixel, rows of unfiltered pixel bytes) of the PNG at path."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and not interlace
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride = zlib.decompress(idat), w * bpp
    prev, rows, i = bytearray(stride), [], 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return bpp, rows


def main(argv):
    bpp, rows = read_png(argv[1])
    want = []
    for arg in argv[2:]:
        rgb, _, tol = arg.partition("~")
        want.append((tuple(bytes.fromhex(rgb)), int(tol or 0)))
    nonwhite, colours, count = 0, set(), [0] * len(want)
    for row in rows:
        for x in range(0, len(row), bpp):
            px = tuple(row[x:x + 3])
            colours.add(px)
            nonwhite += px != (255, 255, 255)
            for k, (rgb, tol) in enumerate(want):
                count[k] += all(abs(a - b) <= tol for a, b in zip(px, rgb))
    print(nonwhite, len(colours), *count)


if __name__ == "__main__":
    main(sys.argv)
