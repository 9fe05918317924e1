"""``nvidia-smi --query-gpu=... --format=csv`` with or without its header and units: one row a GPU, ``[N/A]`` where
the card reports nothing (a card or laptop GPU with no fan of its own). The fields come from the header, or from
the command line pasted above the rows. A GPU's rows in turn (``-l``/``--loop`` prints a row of each GPU each
interval) are its snapshots in turn."""

from __future__ import annotations

import re

from ..facts import Reading
from ..values import parse

_QUERY = re.compile(r"--query-gpu[= ]([\w.,]+)")
# what nvidia-smi writes in a numeric field: a number with or without its unit, a [bracketed] answer ([N/A],
# [Unknown Error], [Not Supported]), N/A or ERR!
_CELL = re.compile(r"^(?:[-+]?\d+(?:\.\d+)?\s*(?:%|W|C|°C|RPM|MiB|MHz)?|\[[\w /]+\]|N/A|ERR!)$", re.IGNORECASE)
FIELDS = ("index", "name", "fan.speed", "temperature.gpu", "power.draw", "utilization.gpu", "power.limit")
# the clock event reasons (nvidia-smi --help-query-gpu): ``clocks_event_reasons.active`` (``clocks_throttle_reasons``
# before driver 535) is NVML's mask in hex; each reason of its own (``clocks_event_reasons.sw_thermal_slowdown``) is
# "Active" or "Not Active"
_REASON = re.compile(r"^clocks_(?:event|throttle)_reasons\.(\w+)$")
_REASON_CELL = re.compile(r"^(?:0x[0-9a-f]{1,16}|active|not active|\[[\w /]+\]|N/A)$", re.IGNORECASE)


def read(text: str) -> list[Reading]:
    """A reading per known field of each row (chip "nvidia", ``extra`` the GPU's index and the field)."""
    found: list[Reading] = []
    fields: list[str] | None = None
    row = 0
    seen: dict[int, int] = {}  # rows read of each GPU: a GPU's next row is its next snapshot (``-l``'s loop)
    for line in text.splitlines():
        stripped = line.strip()
        query = _QUERY.search(stripped)
        if query:
            fields, row = query.group(1).split(","), 0
            continue
        cells = [c.strip() for c in stripped.split(",")]
        # a header row: "fan.speed [%], temperature.gpu [C]"
        if any(c.split(" ")[0] in FIELDS or _REASON.match(c) for c in cells):
            fields, row = [c.split(" ")[0] for c in cells], 0
            continue
        if fields is None or len(cells) != len(fields) or not stripped:
            continue
        named = dict(zip(fields, cells, strict=True))
        if not all((_REASON_CELL if _REASON.match(name) else _CELL).match(cell) for name, cell in named.items()
                   if name in FIELDS[2:] or _REASON.match(name)):
            continue  # a line of prose around the rows, not a row: nvidia-smi writes numbers or [bracketed] words
        index = int(named["index"]) if named.get("index", "").isdigit() else row
        extra: dict[str, float | str] = {"gpu": float(index), "name": named.get("name", "")}
        snapshot = seen[index] = seen.get(index, -1) + 1
        for name, cell in named.items():
            if name in FIELDS[2:]:
                value, unit, raw = parse(cell)
                found.append(Reading("nvidia", name, value, raw, unit, None, snapshot, extra))
            elif reason := _REASON.match(name):
                found.append(Reading("nvidia", f"reasons.{reason.group(1)}", _reasons(cell), cell, None, None,
                                     snapshot, extra))
        row += 1
    return found


def _reasons(cell: str) -> float | None:
    """A reasons cell as a number: the mask (0x...), 1 for "Active", 0 for "Not Active", None for no answer."""
    text = cell.strip().lower()
    if text.startswith("0x"):
        return float(int(text, 16))
    return 1.0 if text == "active" else 0.0 if text == "not active" else None


_UNIT_IN_HEADER = re.compile(r"^(.*?)\s*[\[(](RPM|rpm|°C|C|%|W)[\])]\s*$")


def logged(text: str) -> list[Reading]:
    """A sensor logger's CSV (HWiNFO, FanControl, a script): a header whose columns carry their units in brackets
    (``CPU Fan [RPM]``, ``GPU Temperature [°C]``) and a row per moment; each row is a snapshot in turn."""
    found: list[Reading] = []
    columns: list[tuple[str, str] | None] | None = None
    snapshot = 0
    for line in text.splitlines():
        separator = ";" if line.count(";") > line.count(",") else ","
        cells = [c.strip().strip('"') for c in line.split(separator)]
        if columns is None:
            named = [_UNIT_IN_HEADER.match(c) for c in cells]
            if len(cells) >= 2 and sum(1 for m in named if m) >= 1:
                # GPU-Z writes one fan twice, "Fan Speed (%) [%]" and "Fan Speed (RPM) [RPM]": one fan, by its name
                columns = [(re.sub(r"\s*\((%|rpm)\)$", "", m.group(1), flags=re.IGNORECASE), m.group(2)) if m
                           else None for m in named]
            continue
        if len(cells) != len(columns):
            continue
        for column, cell in zip(columns, cells, strict=True):
            if column is not None and cell:
                value, unit, raw = parse(f"{cell} {column[1]}")
                if value is not None:
                    found.append(Reading(None, column[0], value, raw, unit, None, snapshot))
        snapshot += 1
    return found
