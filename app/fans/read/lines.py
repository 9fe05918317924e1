"""Labelled readings, one or more a line, as most pastes are: ``sensors`` text with or without its chip header
(``asuswmisensors-isa-0000``), ``sensors -u`` (a feature's label, then its ``fan1_input: 740.000`` subfeatures),
``label: value unit`` and ``name_input:value`` lists, ``key : value`` dumps (``nvidia-smi -q``), ``path:value``
lines (``grep -r . /sys/class/hwmon/*``, OpenBMC's D-Bus sensors), a ThinkPad's ``/proc/acpi/ibm/fan`` and
``thermal``, and side-by-side columns (a "before" and an "after" on one line). A label met again in one chip starts
the next snapshot: several readings of one machine in one paste are kept as a sequence."""

from __future__ import annotations

import re

from ..facts import Reading
from .values import NUMBER, parse, word

_CHIP = re.compile(r"^([a-z0-9_]+)-(?:isa|pci|acpi|virtual|i2c|platform|hid|usb|spi|mdio|sdio|scsi|nvme|\w+)-"
                   r"[0-9a-f_]+$", re.IGNORECASE)
_PATH = re.compile(r"^(/(?:sys|xyz|proc|run)\S*?)/([\w.-]+):\s*(\S.*)$")
_PAIR = re.compile(rf"([A-Za-z][\w#+./()\[\] -]{{0,60}}?)\s*:\s*((?:{NUMBER})\s*(?:\(\+/-\s*[\d.]+\)\s*)?"
                   r"(?:°\s*C|degrees\s*C|C\b|RPM|rpm|%|mW|W|mV|V|A|MHz)?|FAULT|N/A|\[N/A\]|\[Not Supported\])",
                   re.IGNORECASE)
# "node: label: value" (xCAT's rvitals, pdsh and clush prefix each line with the host that answered): the host is
# the chip, so each machine's fans stay its own
_HOST = re.compile(r"^([A-Za-z0-9][\w.-]{0,62}):\s+(?=[A-Za-z][^:]{0,60}:\s*[+-]?\d)")
_SUBFEATURE = re.compile(rf"^\s+((?:fan|temp|pwm)\d+(?:_[a-z_]+)?):\s+({NUMBER})\s*$")
_FEATURE = re.compile(r"^([^:]{1,60}):\s*$")
_THERMAL = re.compile(r"^temperatures:\s+((?:-?\d+\s*)+)$")
# amdgpu's overdrive tables (OD_RANGE, FAN_CURVE, FAN_ZERO_RPM_...): settings and their ranges, not readings
_SETTING = re.compile(r"(OD_|FAN_CURVE|FAN_ZERO|FAN_MINIMUM|FAN_TARGET|ACOUSTIC|SCLK|MCLK|VDDC)|"
                      r"(?i:.*\b(shutdown|slowdown|threshold|limit|max operating|target)\b.*temp|.*temp.*\b(limit|"
                      r"threshold)\b)")  # and a tool's temperature limits (nvidia-smi -q's T.Limit, Slowdown Temp)
_SKIP = re.compile(r"^(adapter|sensor id|entity id|sensor type|assertion|deassertion|positive|negative|locating)",
                   re.IGNORECASE)


class _Walk:
    """The state of one pass over the lines: the chip and feature in force, the snapshot, what it holds."""

    def __init__(self) -> None:
        self.chip: str | None = None
        self.feature: str | None = None
        self.snapshot = 0
        self.seen: set[tuple[str | None, str, int]] = set()
        self.found: list[Reading] = []
        self.hwmon_names: dict[str, str] = {}

    def add(self, label: str, text: str, column: int = 0, attr: str | None = None, chip: str | None = None) -> None:
        owner = chip if chip is not None else self.chip
        key = (owner, attr or label, column)
        if key in self.seen:  # the same label again: the next reading of this machine
            self.snapshot += 1 + max((k[2] for k in self.seen), default=0)
            self.seen = set()
        self.seen.add(key)
        value, unit, raw = parse(text)
        if value is None and word(text) is None:
            return
        self.found.append(Reading(owner, label.strip(), value, raw, unit, attr, self.snapshot + column))


def read(text: str) -> list[Reading]:
    """Every labelled reading in ``text`` (an empty list when there is none)."""
    walk = _Walk()
    for line in text.splitlines():
        _line(walk, line.rstrip())
    if walk.hwmon_names:  # grep -r . /sys/class/hwmon/hwmonN/: the chip is its name file, not hwmonN
        walk.found = [r if r.chip not in walk.hwmon_names else
                      Reading(walk.hwmon_names[r.chip], r.label, r.value, r.raw, r.unit, r.attr, r.snapshot, r.extra)
                      for r in walk.found]
    return walk.found


def _line(walk: _Walk, line: str) -> None:
    stripped = line.strip()
    if not stripped or stripped.startswith(("$", "#", "//")) or _SKIP.match(stripped):
        return
    if _CHIP.match(stripped):
        walk.chip, walk.feature = _CHIP.match(stripped).group(1), None  # type: ignore[union-attr]  # matched above
        return
    if _path(walk, stripped) or _subfeature(walk, line) or _thermal(walk, stripped):
        return
    feature = _FEATURE.match(stripped)
    if feature:
        walk.feature = feature.group(1).strip()
        return
    host = _HOST.match(stripped)
    if host:
        stripped = stripped[host.end():]
    for column, match in enumerate(_PAIR.finditer(stripped)):
        label = match.group(1).strip()
        if _SETTING.match(label):
            continue
        walk.add(label, match.group(2), column, attr=_attr(label), chip=host.group(1) if host else None)


def _attr(label: str) -> str | None:
    found = re.fullmatch(r"(?:fan|temp|pwm)\d+(?:_[a-z_]+)?", label.strip().lower())
    return found.group(0) if found else None


def _path(walk: _Walk, line: str) -> bool:
    match = _PATH.match(line)
    if not match:
        return False
    folder, name, value = match.groups()
    hwmon = re.search(r"/(hwmon\d+)(?:/device)?$", folder)
    if hwmon and name == "name":
        walk.hwmon_names[hwmon.group(1)] = value.strip()
        return True
    chip = hwmon.group(1) if hwmon else ("bmc" if folder.startswith("/xyz/openbmc_project") else folder)
    kind = folder.rsplit("/", 1)[-1]  # OpenBMC: .../sensors/fan_tach/fan0, .../sensors/temperature/cpu0
    unit = " RPM" if kind == "fan_tach" or re.fullmatch(r"fan\d+_(input|target|min|max)", name) else ""
    millidegrees = hwmon is not None and re.fullmatch(r"temp\d+_(input|max|crit|min|emergency)", name)
    if (kind == "temperature" or millidegrees) and re.fullmatch(NUMBER, value.strip()):
        value = f"{float(value) / 1000.0 if millidegrees or abs(float(value)) >= 1000 else float(value)} C"
    walk.add(name, value.strip() + unit if re.fullmatch(NUMBER, value.strip()) else value, attr=_attr(name) or
             (f"{'fan' if kind == 'fan_tach' else 'temp'}_{name}" if kind in ("fan_tach", "temperature") else None),
             chip=chip)
    return True


def _subfeature(walk: _Walk, line: str) -> bool:
    match = _SUBFEATURE.match(line)
    if not match:
        return False
    attr, value = match.groups()
    walk.add(walk.feature or attr, value, attr=attr)
    return True


def _thermal(walk: _Walk, line: str) -> bool:
    """/proc/acpi/ibm/thermal: eight or sixteen temperatures on one line, -128 where a sensor is not there."""
    match = _THERMAL.match(line)
    if not match:
        return False
    for n, value in enumerate(match.group(1).split(), start=1):
        walk.add(f"temp{n}", f"{value} C", attr=f"temp{n}_input", chip="thinkpad")
    return True
