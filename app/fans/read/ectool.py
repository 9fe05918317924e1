"""The Chrome EC's ``ectool`` (Chromebooks, Framework laptops): ``ectool temps all`` and ``ectool pwmgetfanrpm``, as
the tool's source (util/ectool.cc) prints them. Each sensor of ``temps all`` is "name  321 K (= 48 C)" followed by
where its reading stands in the EC's fan table, "6% (320 K and 335 K)": the share between the sensor's ``fan_off``
and ``fan_max`` temperatures, or "N/A (fan_off=0 K, fan_max=0 K)" for a sensor the table does not use. Each fan is
"Fan 0 RPM: 1843", or "Fan 0 stalled (RPM: 65534)" where the EC marks it stalled (ec_commands.h:
EC_FAN_SPEED_STALLED_DEPRECATED, 0xfffe; the EC's own console logs "Fan 0 stalled!"). Read where the paste is
ectool's: its table's header, a stalled fan, or the tool named beside its fan lines."""

from __future__ import annotations

import re

from ..facts import Reading
from .oneline import kelvin

CHIP = "cros_ec"
KELVIN = 273.15
STALLED_RAW = 65534  # ec_commands.h: EC_FAN_SPEED_STALLED_DEPRECATED (0xfffe); newer ECs report a stalled fan as 0
_HEADER = re.compile(r"--sensor name -+ temperature -+ ratio")
_SENSOR = re.compile(r"^\s*(\S+)\s+(\d+)\s*K\s*\(=\s*-?\d+\s*C\)\s*"
                     r"(?:(\d+)%\s*\((\d+)\s*K and (\d+)\s*K\)|N/A\s*\(fan_off=\d+ K, fan_max=\d+ K\))?", re.MULTILINE)
_FAN = re.compile(r"^\s*\[?[\d.\s]*\]?\s*Fan (\d+) (?:RPM:\s*(-?\d+)|stalled(?: \(RPM: (\d+)\)|!))", re.MULTILINE)


def read(text: str) -> list[Reading]:
    if not (_HEADER.search(text) or re.search(r"Fan \d+ stalled", text) or
            ("ectool" in text.lower() and _FAN.search(text))):
        return []
    found: list[Reading] = []
    if _HEADER.search(text):
        found += [_sensor(m) for m in _SENSOR.finditer(text) if 200 <= int(m.group(2)) <= 500]
    for line in text.splitlines():  # older builds' "0: 352 K", a sensor by its number with no table
        old = kelvin(line.strip()) if not _SENSOR.match(line) else None
        if old is not None:
            found.append(Reading(CHIP, old.label, float(old.text.split()[0]), line.strip(), "c"))
    for m in _FAN.finditer(text):
        n = int(m.group(1)) + 1  # ectool counts fans from 0; the kernel's cros_ec_hwmon names them fan1, fan2
        if m.group(2) is not None:
            found.append(Reading(CHIP, f"Fan {m.group(1)}", float(m.group(2)), f"{m.group(2)} RPM", "rpm",
                                 f"fan{n}_input"))
            continue
        raw = int(m.group(3)) if m.group(3) else STALLED_RAW
        found.append(Reading(CHIP, f"Fan {m.group(1)}", float(raw), f"{raw} RPM", "rpm", f"fan{n}_input"))
        found.append(Reading(CHIP, f"Fan {m.group(1)}", 1.0, "stalled", None, f"fan{n}_fault"))
    return found


def _sensor(m: re.Match[str]) -> Reading:
    """A sensor's reading, with its place in the EC's fan table (fan_off, fan_max in °C) where the table uses it."""
    kelvin = int(m.group(2))
    table = {"fan_off": round(int(m.group(4)) - KELVIN, 2), "fan_max": round(int(m.group(5)) - KELVIN, 2)} \
        if m.group(3) else {}
    return Reading(CHIP, m.group(1), round(kelvin - KELVIN, 2), f"{kelvin} K", "c", extra=table)
