"""Space-aligned tables whose header names a temperature or a fan column, a row per part: auto-cpufreq's
``Core  Usage  Temperature  Frequency`` then ``CPU0  87.0%  92 °C  3400 MHz``, and tables like it. A cell is the
text under its header's span; the row's first cell names the part. Read inside the labelled-line walk
(``lines.read``), so the lines around such a table (auto-cpufreq's ``CPU fan speed: 0 RPM``) are read with it."""

from __future__ import annotations

import re

_WANTED = re.compile(r"^(temp|temperature|fan|fan speed|rpm)$", re.IGNORECASE)
_DEFAULT_UNIT = {"temp": "°C", "temperature": "°C", "fan": "RPM", "fan speed": "RPM", "rpm": "RPM"}
Spans = list[tuple[str, int, int]]


def header(line: str) -> Spans | None:
    """The columns of a header line (three or more words, one a temperature or a fan), or None."""
    if ":" in line or "=" in line or "|" in line:
        return None
    starts = [(m.group(0), m.start()) for m in re.finditer(r"\S+(?: \S+)?", line)]
    if len(starts) < 3 or not any(_WANTED.match(name) for name, _ in starts[1:]) or \
            not all(re.fullmatch(r"[A-Za-z][\w ()%.-]*", name) for name, _ in starts):
        return None
    return [(name, start, starts[i + 1][1] if i + 1 < len(starts) else 1 << 16)
            for i, (name, start) in enumerate(starts)]


def row(spans: Spans, line: str) -> list[tuple[str, str]] | None:
    """(label, value text) for each wanted cell of a row, or None for a line that is not one of the table's rows."""
    first = re.match(r"\s*([A-Za-z][\w#.-]*):?\s", line)
    if first is None or not re.search(r"\d", line[first.end():]):
        return None
    cells: dict[str, str] = {}
    for token in re.finditer(r"\S+", line[first.end():]):
        start, end = token.start() + first.end(), token.end() + first.end()
        column = max(spans, key=lambda s: min(s[2], end) - max(s[1], start))
        cells[column[0]] = f"{cells.get(column[0], '')} {token.group(0)}".strip()
    wanted = [(name, text) for name, text in cells.items() if _WANTED.match(name)]
    several = len(wanted) > 1
    out = []
    for name, text in wanted:
        unit = "" if re.search(r"[A-Za-z°%]", text) else f" {_DEFAULT_UNIT[name.lower()]}"
        out.append((f"{first.group(1)} {name}" if several else first.group(1), text + unit))
    return out
