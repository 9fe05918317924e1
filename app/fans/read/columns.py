"""Space-aligned tables whose header names a GPU column and its temperature, power and fan columns: ``rocm-smi``'s
concise table (``GPU  Temp  AvgPwr  SCLK  MCLK  Fan  Perf ...``, newer ``Device ... Temp (DieEdge) Power ...``).
A cell is the text under its header's span; ``N/A`` is kept as no reading. The card's chip is "amdgpu". Also
``rocm-smi -a``'s per-card lines (``GPU[0] : Temperature (Sensor edge) (C): 69.0``, ``GPU[0] : Fan Level: 124
(48.63)%``, ``Fan RPM: 1200``), the same readings by the same names. A card's share busy (the concise table's GPU%,
``GPU use (%)``: amdgpu's gpu_busy_percent) is read as "GPU N busy"."""

from __future__ import annotations

import re

from ..facts import PERF_LEVEL, Reading, Setting, Unit
from ..values import parse
from . import headed

_HEADER = re.compile(r"^\s*(GPU|Device)\s+.*\bTemp\b.*\bFan\b", re.IGNORECASE)
_ROW = re.compile(r"^\s*(\d+)\s+\S")
_WANTED: dict[str, tuple[str, Unit]] = {"temp": ("edge", "c"), "fan": ("fan", "%"), "avgpwr": ("power", "w"),
                                        "power": ("power", "w"), "gpu%": ("busy", "%"),
                                        "pwrcap": ("power cap", "w")}


def read(text: str) -> list[Reading]:
    found: list[Reading] = []
    spans: headed.Spans | None = None
    snapshot = -1
    for line in text.splitlines():
        if _HEADER.match(line):
            spans = _spans(line)
            snapshot += 1
            continue
        row = _ROW.match(line)
        if spans is None or row is None:
            continue
        for token, column in _cells(spans, line):
            wanted = _WANTED.get(column.split(" ")[0])
            if wanted is None or token.start() == row.start(1):
                continue
            value, unit, raw = parse(token.group(0))
            found.append(Reading("amdgpu", f"GPU {row.group(1)} {wanted[0]}", value, raw,
                                 unit if unit is not None or value is None else wanted[1], None, snapshot))
    return found


def _spans(header: str) -> headed.Spans:
    """Each column of a concise table's header ("Temp (DieEdge)" one column), lower case, with its span."""
    return [(name.lower(), start, end) for name, start, end in headed.spans(header, r"\S+(?: \(\w+\))?")]


def _cells(columns: headed.Spans, line: str) -> list[tuple[re.Match[str], str]]:
    """Each word of a row with the column it stands under most."""
    return [(token, headed.column(columns, token.start(), token.end())) for token in re.finditer(r"\S+", line)]


_LEVEL = re.compile(r"^\s*GPU\[(\d+)\]\s*:\s*Performance Level:\s*(\w+)\s*$", re.IGNORECASE)


def perf_levels(text: str) -> tuple[Setting, ...]:
    """Each card's performance level as rocm-smi shows it, in the order read: the concise table's Perf column, or
    ``GPU[0] : Performance Level: auto`` (``--showperflevel``, ``-a``): amdgpu's power_dpm_force_performance_level
    (Documentation/gpu/amdgpu/thermal.rst)."""
    found: list[Setting] = []
    spans: headed.Spans | None = None
    for line in text.splitlines():
        level = _LEVEL.match(line)
        if level:
            found.append(Setting(f"GPU {level.group(1)}", PERF_LEVEL, level.group(2).lower()))
        elif _HEADER.match(line):
            spans = _spans(line)
        elif spans is not None and (row := _ROW.match(line)):
            found += [Setting(f"GPU {row.group(1)}", PERF_LEVEL, token.group(0).lower())
                      for token, column in _cells(spans, line) if column == "perf" and token.group(0) != "N/A"]
    return tuple(found)


_DETAIL = re.compile(r"^\s*GPU\[(\d+)\]\s*:\s*(.+?)\s*:\s*(.+?)\s*$")
_SENSOR = re.compile(r"temperature(?:\s*\(sensor (\w+)\))?", re.IGNORECASE)
_SHARE = re.compile(r"\(?([\d.]+)\s*\)?\s*%\)?\s*$")  # "124 (48.63)%", "51 (20%)", "20"


def detail(text: str) -> list[Reading]:
    """``rocm-smi -a``'s ``GPU[N] : name: value`` lines: each card's temperatures, its fan's duty and speed, its
    power; a name met again for the same card starts the next snapshot."""
    found: list[Reading] = []
    seen: set[tuple[str, str]] = set()
    snapshot = 0
    for line in text.splitlines():
        match = _DETAIL.match(line)
        if match is None:
            continue
        card, name, value = match.groups()
        reading = _detail_reading(f"GPU {card}", name, value)
        if reading is None:
            continue
        if (card, reading.label + str(reading.unit)) in seen:
            snapshot, seen = snapshot + 1, set()
        seen.add((card, reading.label + str(reading.unit)))
        found.append(Reading(reading.chip, reading.label, reading.value, reading.raw, reading.unit, None, snapshot))
    return found


def _detail_reading(card: str, name: str, value: str) -> Reading | None:
    lowered = name.lower()
    sensor = _SENSOR.fullmatch(name.split(" (c)")[0].split(" (C)")[0].strip())
    if sensor:
        number = parse(value.rstrip("cC"))[0]
        where = {"edge": "edge", "junction": "junction", "memory": "mem", "mem": "mem"}.get(
            (sensor.group(1) or "edge").lower(), (sensor.group(1) or "edge").lower())
        return Reading("amdgpu", f"{card} {where}", number, value, "c" if number is not None else None)
    if lowered in ("fan level", "fan speed (%)", "fan speed"):
        share = _SHARE.search(value)
        number = float(share.group(1)) if share else None
        return Reading("amdgpu", f"{card} fan", number, value, "%" if number is not None else None)
    if lowered == "gpu use (%)":
        number = parse(value)[0]
        return Reading("amdgpu", f"{card} busy", number, value, "%" if number is not None else None)
    if lowered == "fan rpm":
        number = parse(value)[0]
        return Reading("amdgpu", f"{card} fan", number, value, "rpm" if number is not None else None)
    if "power" in lowered and "(w)" in lowered:
        number = parse(value)[0]
        return Reading("amdgpu", f"{card} power", number, value, "w" if number is not None else None)
    return None


_HPASM_FAN = re.compile(r"^#(\d+)\s+(\S+)\s+(Yes|No)\s+(\S+)\s+(\d+%|N/A|-)\s", re.IGNORECASE)
_HPASM_TEMP = re.compile(r"^#(\d+)\s+(\S+)\s+(-|\d+C/\d+F)\s+(-|\d+C/\d+F)")


def hpasmcli(text: str) -> list[Reading]:
    """HP's ``hpasmcli -s "show fans"`` and ``"show temp"`` (hpasmcli(8)): each fan's slot, whether a fan is present
    there and its share of its maximum speed, as the server's management controller reports them; each zone's
    temperature and threshold. Read as the BMC's (chip "bmc")."""
    if not re.search(r"^\s*(Fan\s+Location\s+Present|Sensor\s+Location\s+Temp)", text, re.MULTILINE):
        return []
    found: list[Reading] = []
    for line in text.splitlines():
        fan = _HPASM_FAN.match(line.strip())
        if fan:
            number, where, present, _speed, share = fan.groups()
            value, _, raw = parse(share)
            found.append(Reading("bmc", f"Fan {number} {where}", value if present.lower() == "yes" else None, raw,
                                 "%" if value is not None else None, None, 0,
                                 {"status": "ok" if present.lower() == "yes" else "absent"}))
        temp = _HPASM_TEMP.match(line.strip())
        if temp and temp.group(3) != "-":
            found.append(Reading("bmc", f"{temp.group(2)} (sensor {temp.group(1)})", float(temp.group(3).split("C")[0]),
                                 temp.group(3), "c"))
    return found


# HPE iLO's Fans page (iLO 4 and 5 user guides: each fan's name, location, redundancy, status and speed in % of
# its maximum), copied from the browser as text: with its header or only the rows, cells split at tabs or spaces
_ILO_ROW = re.compile(r"^\s*(Fan(?: Block)? \d+)\s+([A-Za-z][\w /-]*?)\s+(?:(Yes|No)\s+)?"
                      r"(OK|Degraded|Failed|Not Installed|Absent)\s+(\d+(?:\.\d+)?\s*%|N/A)?\s*$", re.IGNORECASE)
_ILO_STATUS = {"not installed": "absent"}  # OK, Degraded, Failed kept as the BMC's own words


def ilo(text: str) -> list[Reading]:
    """HPE iLO's Fans page as text (``Fan 1  System  Yes  OK  11%``): the share of its maximum each fan runs at
    and the status iLO gives it (OK, Degraded, Failed; Not Installed: an empty bay). Read as the BMC's (chip
    "bmc")."""
    found: list[Reading] = []
    for line in text.splitlines():
        row = _ILO_ROW.match(line)
        if row is None:
            continue
        name, where, _redundant, status, share = row.groups()
        status = status.lower()
        value, _, raw = parse(share or "N/A")
        found.append(Reading("bmc", f"{name} {where}", value, raw, "%" if value is not None else None, None, 0,
                             {"status": _ILO_STATUS.get(status, status)}))
    return found


# amd-smi's default view (its CLI with no subcommand): a box of two rows per GPU under a two-row header, "BDF
# GPU-Name | Mem-Uti Temp UEC Power-Usage" over "GPU HIP-ID OAM-ID Partition-Mode | GFX-Uti Fan Mem-Usage"
_AMDSMI_HEADER = re.compile(r"^\|\s*BDF\s+GPU-Name\s*\|\s*Mem-Uti\s+Temp\b", re.IGNORECASE)
_AMDSMI_FIRST = re.compile(r"^\|\s*[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.\d\s.*?\|(.*)\|$", re.IGNORECASE)
_AMDSMI_SECOND = re.compile(r"^\|\s*(\d+)\s[^|]*\|(.*)\|$")


def amdsmi_table(text: str) -> list[Reading]:
    """amd-smi's default table: each GPU's temperature and power (its first row's right half), its share busy and
    its fan's share (its second row's: GFX-Uti, Fan, Mem-Usage; ``N/A`` where the card reports no fan). Read as the
    card's (chip "amdgpu"), by the GPU index its second row starts with."""
    if not any(_AMDSMI_HEADER.match(line.strip()) for line in text.splitlines()):
        return []
    found: list[Reading] = []
    first: str | None = None  # the right half of a GPU's first row, until its second
    for line in (line.strip() for line in text.splitlines()):
        row = _AMDSMI_FIRST.match(line)
        if row:
            first = row.group(1)
            continue
        second = _AMDSMI_SECOND.match(line)
        if second is None or first is None:
            continue
        card = f"GPU {second.group(1)}"
        temp, power = re.search(r"(-?\d+(?:\.\d+)?)\s*°C", first), re.search(r"(\d+(?:\.\d+)?)\s*W\b", first)
        if temp:
            found.append(Reading("amdgpu", f"{card} temperature", float(temp.group(1)), temp.group(0), "c"))
        if power:
            found.append(Reading("amdgpu", f"{card} power", float(power.group(1)), power.group(0), "w"))
        cells = re.split(r"\s{2,}", second.group(2).strip())
        if len(cells) >= 3:
            value, unit, raw = parse(cells[1])
            found.append(Reading("amdgpu", f"{card} fan", value, raw, "%" if value is not None else unit))
            busy, _, raw = parse(cells[0])
            if busy is not None:
                found.append(Reading("amdgpu", f"{card} busy", busy, raw, "%"))
        first = None
    return found


def racadm(text: str) -> list[Reading]:
    """Dell's ``racadm getsensorinfo``: under each ``<Sensor Name>  <Status>  <Reading>  <lc> ...`` header, rows whose
    cells stand under the header's columns (a name has spaces); a fan's status (Ok, Critical), reading, lower
    critical threshold and presence (PST: Present, Absent), a temperature's reading (Dell's iDRAC RACADM CLI guide).
    Read as the BMC's (chip "bmc")."""
    found: list[Reading] = []
    spans: list[tuple[str, int]] = []
    for line in text.splitlines():
        if line.lstrip().startswith("<"):
            spans = [(m.group(1).lower(), m.start()) for m in re.finditer(r"<([^>]+)>", line)]
            continue
        if not spans or not line.strip() or ":" in line.split("  ")[0]:
            spans = [] if not line.strip() else spans
            continue
        cells = {name: line[start:spans[i + 1][1] if i + 1 < len(spans) else None].strip()
                 for i, (name, start) in enumerate(spans)}
        reading = _racadm_row(cells)
        if reading is not None:
            found.append(reading)
    return found


def _racadm_row(cells: dict[str, str]) -> Reading | None:
    name, value_text = cells.get("sensor name", ""), cells.get("reading", "")
    if not name or not value_text:
        return None
    value, unit, raw = parse(value_text)
    extra: dict[str, float | str] = {"status": "absent" if cells.get("pst", "").lower() == "absent" else
                                     cells.get("status", "").lower()}
    low = parse(cells.get("lc", ""))[0]
    if low is not None and unit == "rpm":
        extra["lcr"] = low
    return Reading("bmc", name, value, raw, unit, None, 0, extra)


_DMON_FIELDS: dict[str, tuple[str, Unit]] = {"pwr": ("power.draw", "w"), "gtemp": ("temperature.gpu", "c"),
                                             "sm": ("utilization.gpu", "%")}


def dmon(text: str) -> list[Reading]:
    """``nvidia-smi dmon``: under its ``# gpu pwr gtemp mtemp sm ...`` header (``-o DT`` puts a date and a time
    first), a row per GPU each second, ``-`` where the card reports nothing (nvidia-smi(1), dmon). Read as the
    ``--query-gpu`` fields they are (power.draw, temperature.gpu, utilization.gpu), each row of a GPU a snapshot in
    turn; dmon has no fan column."""
    found: list[Reading] = []
    header: list[str] | None = None
    rows: dict[int, int] = {}
    for line in text.splitlines():
        words = line.lstrip("#").split()
        if line.lstrip().startswith("#"):
            lowered = [w.lower() for w in words]
            if "gpu" in lowered and ("gtemp" in lowered or "pwr" in lowered):
                header = lowered
            continue
        if header is None or len(words) != len(header) or not words[header.index("gpu")].isdigit():
            continue
        index = int(words[header.index("gpu")])
        snapshot = rows[index] = rows.get(index, -1) + 1
        for name, cell in zip(header, words, strict=True):
            if name in _DMON_FIELDS:
                field, unit = _DMON_FIELDS[name]
                value, _, raw = parse(cell)
                found.append(Reading("nvidia", field, value, raw, unit if value is not None else None, None, snapshot,
                                     {"gpu": float(index), "name": ""}))
    return found
