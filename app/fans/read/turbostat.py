"""turbostat's table (turbostat(8)): a header of column names, then a summary row (``-`` in its Core and CPU
columns) and a row per CPU, again each interval. ``CoreTmp`` is a core's temperature from its Digital Thermal Sensor,
``PkgTmp`` the package's (turbostat(8), "CoreTmp" and "PkgTmp"), in °C; they are the CPU's own sensors, as Linux's
coretemp reads them. Each interval (a header again) is one snapshot; a core's hyperthread rows leave its
temperature out."""

from __future__ import annotations

import re

from ..facts import Reading

CHIP = "coretemp"
_TEMPS = ("CoreTmp", "PkgTmp")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def read(text: str) -> list[Reading]:
    found: list[Reading] = []
    columns: list[str] | None = None
    snapshot = -1
    for line in text.split("\n"):
        cells = line.split()
        if any(name in cells for name in _TEMPS) and ("CPU" in cells or "Core" in cells):
            columns, snapshot = cells, snapshot + 1
            continue
        if columns is None or not cells:
            columns = None if not cells else columns
            continue
        found += _row(dict(zip(columns, cells, strict=False)), snapshot)
    return found


def _row(row: dict[str, str], snapshot: int) -> list[Reading]:
    found = []
    core, package = row.get("Core", ""), row.get("Package", "0")
    summary = core == "-" or row.get("CPU") == "-"
    for name in _TEMPS:
        value = row.get(name, "")
        if not _NUMBER.fullmatch(value):
            continue
        if name == "PkgTmp" and (summary or "Package" in row):
            label = f"Package id {package if package != '-' else 0}"
        elif name == "CoreTmp" and not summary and core.isdigit():
            label = f"Core {core}"
        else:
            continue
        found.append(Reading(CHIP, label, float(value), f"{value} °C", "c", snapshot=snapshot))
    return found
