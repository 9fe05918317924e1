"""Tables whose header names a temperature or a fan column, or a "Current" column, a row per part: auto-cpufreq's
``Core  Usage  Temperature  Frequency`` then ``CPU0  87.0%  92 °C  3400 MHz`` (cells under their header's span), and
a sensor monitor's summary copied as text, HWiNFO's ``Sensor  Current  Minimum  Maximum  Average`` with a row per
sensor (cells split at tabs or wide gaps; the Current cell is the reading, its unit written in it). Read inside the
labelled-line walk (``lines.read``), so the lines around such a table (auto-cpufreq's ``CPU fan speed: 0 RPM``) are
read with it."""

from __future__ import annotations

import re
from typing import NamedTuple

_WANTED = re.compile(r"^(temp|temperature|fan|fan speed|rpm)$", re.IGNORECASE)
_CURRENT = re.compile(r"^(current|value|reading)$", re.IGNORECASE)
_DEFAULT_UNIT = {"temp": "°C", "temperature": "°C", "fan": "RPM", "fan speed": "RPM", "rpm": "RPM"}
_CELLS = re.compile(r"\t+|\s{2,}")


Spans = list[tuple[str, int, int]]


def spans(header: str, word: str) -> Spans:
    """Each column of a space-aligned header (its words as ``word`` matches them) with the span of text it stands
    over, to where the next column starts."""
    starts = [(m.group(0), m.start()) for m in re.finditer(word, header)]
    return [(name, start, starts[i + 1][1] if i + 1 < len(starts) else 1 << 16) for i, (name, start) in
            enumerate(starts)]


def column(columns: Spans, start: int, end: int) -> str:
    """The column the text from ``start`` to ``end`` of a row stands under most."""
    return max(columns, key=lambda s: min(s[2], end) - max(s[1], start))[0]


class Table(NamedTuple):
    spans: Spans  # each column's name and the span of the header it stands under
    current: int | None  # the column of a summary's current value (its cells split, not spanned), or None


def header(line: str) -> Table | None:
    """The columns of a header line (three or more words, one a temperature, a fan or a current value), or None."""
    if ":" in line or "=" in line or "|" in line:
        return None
    names = _CELLS.split(line.strip())
    if len(names) >= 3 and any(_CURRENT.match(n) for n in names[1:]) and \
            all(re.fullmatch(r"[A-Za-z][\w ().%-]*", n) for n in names):
        return Table([(n, 0, 0) for n in names], next(i for i, n in enumerate(names) if _CURRENT.match(n)))
    found = spans(line, r"\S+(?: \S+)?")
    if len(found) < 3 or not any(_WANTED.match(name) for name, _, _ in found[1:]) or \
            not all(re.fullmatch(r"[A-Za-z][\w ()%.-]*", name) for name, _, _ in found):
        return None
    return Table(found, None)


def row(table: Table, line: str) -> list[tuple[str, str]] | None:
    """(label, value text) for each wanted cell of a row, or None for a line that is not one of the table's rows."""
    if table.current is not None:
        cells = _CELLS.split(line.strip())
        if len(cells) != len(table.spans) or not re.match(r"[+-]?\d", cells[table.current]):
            return None if len(cells) != 1 else []  # a one-cell line: a group's name (a chip, a device), kept going
        return [(cells[0], cells[table.current])]
    first = re.match(r"\s*([A-Za-z][\w#.-]*):?\s", line)
    if first is None or not re.search(r"\d", line[first.end():]):
        return None
    cells_at: dict[str, str] = {}
    for token in re.finditer(r"\S+", line[first.end():]):
        name = column(table.spans, token.start() + first.end(), token.end() + first.end())
        cells_at[name] = f"{cells_at.get(name, '')} {token.group(0)}".strip()
    wanted = [(name, text) for name, text in cells_at.items() if _WANTED.match(name)]
    several = len(wanted) > 1
    out = []
    for name, text in wanted:
        unit = "" if re.search(r"[A-Za-z°%]", text) else f" {_DEFAULT_UNIT[name.lower()]}"
        out.append((f"{first.group(1)} {name}" if several else first.group(1), text + unit))
    return out
