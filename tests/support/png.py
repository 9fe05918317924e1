"""Just enough of PNG to read what Chromium's screenshots hold (8-bit RGB or RGBA, not interlaced): their size, and
the colours of a small one, so a test can check what was drawn rather than that a file was written."""

from __future__ import annotations

import struct
import zlib
from collections import Counter

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:8] == SIGNATURE, "not a PNG"
    found, at = [], 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        found.append((data[at + 4:at + 8], data[at + 8:at + 8 + length]))
        at += 12 + length
    return found


def size(data: bytes) -> tuple[int, int]:
    """(width, height) from the header."""
    kind, header = _chunks(data)[0]
    assert kind == b"IHDR"
    width, height = struct.unpack(">II", header[:8])
    return width, height


def colours(data: bytes) -> Counter[tuple[int, int, int]]:
    """How many pixels of each RGB colour (alpha ignored)."""
    chunks = _chunks(data)
    width, height = size(data)
    depth, kind, interlace = chunks[0][1][8], chunks[0][1][9], chunks[0][1][12]
    assert depth == 8 and kind in (2, 6) and interlace == 0, "only 8-bit RGB(A), not interlaced"
    step = 3 if kind == 2 else 4
    raw = zlib.decompress(b"".join(body for name, body in chunks if name == b"IDAT"))
    stride = width * step
    previous = bytearray(stride)
    counted: Counter[tuple[int, int, int]] = Counter()
    for y in range(height):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        row = bytearray(line[1:])
        _unfilter(line[0], row, previous, step)
        counted.update(zip(row[0::step], row[1::step], row[2::step], strict=True))
        previous = row
    return counted


def _unfilter(kind: int, row: bytearray, above: bytearray, step: int) -> None:
    for i in range(len(row)):
        left = row[i - step] if i >= step else 0
        up = above[i]
        if kind == 1:
            row[i] = (row[i] + left) & 0xFF
        elif kind == 2:
            row[i] = (row[i] + up) & 0xFF
        elif kind == 3:
            row[i] = (row[i] + ((left + up) >> 1)) & 0xFF
        elif kind == 4:
            corner = above[i - step] if i >= step else 0
            guess = left + up - corner
            near = min((abs(guess - left), 0, left), (abs(guess - up), 1, up), (abs(guess - corner), 2, corner))
            row[i] = (row[i] + near[2]) & 0xFF
