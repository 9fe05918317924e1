"""Space-aligned tables whose header names a GPU column and its temperature, power and fan columns: ``rocm-smi``'s
concise table (``GPU  Temp  AvgPwr  SCLK  MCLK  Fan  Perf ...``, newer ``Device ... Temp (DieEdge) Power ...``).
A cell is the text under its header's span; ``N/A`` is kept as no reading. The card's chip is "amdgpu"."""

from __future__ import annotations

import re

from ..facts import Reading, Unit
from ..values import parse

_HEADER = re.compile(r"^\s*(GPU|Device)\s+.*\bTemp\b.*\bFan\b", re.IGNORECASE)
_ROW = re.compile(r"^\s*(\d+)\s+\S")
_WANTED: dict[str, tuple[str, Unit]] = {"temp": ("edge", "c"), "fan": ("fan", "%"), "avgpwr": ("power", "w"),
                                        "power": ("power", "w")}


def read(text: str) -> list[Reading]:
    found: list[Reading] = []
    spans: list[tuple[str, int, int]] | None = None
    snapshot = -1
    for line in text.splitlines():
        if _HEADER.match(line):
            starts = [(m.group(0).lower(), m.start()) for m in re.finditer(r"\S+(?: \(\w+\))?", line)]
            spans = [(name, start, starts[i + 1][1] if i + 1 < len(starts) else 1 << 16)
                     for i, (name, start) in enumerate(starts)]
            snapshot += 1
            continue
        row = _ROW.match(line)
        if spans is None or row is None:
            continue
        for token in re.finditer(r"\S+", line):
            column = max(spans, key=lambda s: min(s[2], token.end()) - max(s[1], token.start()))
            wanted = _WANTED.get(column[0].split(" ")[0])
            if wanted is None or token.start() == row.start(1):
                continue
            value, unit, raw = parse(token.group(0))
            found.append(Reading("amdgpu", f"GPU {row.group(1)} {wanted[0]}", value, raw,
                                 unit if unit is not None or value is None else wanted[1], None, snapshot))
    return found
