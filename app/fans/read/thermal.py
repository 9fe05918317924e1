"""The kernel's thermal framework as a listing shows it (``grep . /sys/class/thermal/*/*``): each thermal zone's
type, temperature, mode and trip points, each cooling device's type and state (kernel
Documentation/driver-api/thermal/sysfs-api.rst). A zone's temperature is a reading; a cooling device whose type
names a fan is a fan whose duty is its state (``cur_state`` of ``max_state``), with the zone whose active trip
turns it on: the one zone with active trips (a listing does not show which cooling map binds which device). A shell
session of ``cat /sys/class/thermal/thermal_zone0/temp`` with the value under it is that listing's line."""

from __future__ import annotations

import re

from ..facts import Reading
from .prompts import ANY_PROMPT, BEFORE_COMMAND

_FOLDER = re.compile(r"(?:^|/)(thermal_zone\d+|cooling_device\d+)$")
_NUMBER = re.compile(r"-?\d+")
_FAN_TYPE = re.compile(r"fan|cooling.?fan|emc23\d\d", re.IGNORECASE)  # "Fan" (ACPI), pwm-fan, gpio-fan, emc2305


# "$ cat /sys/class/thermal/thermal_zone0/temp" (a prompt before it, or none); a glob is left out: which zone each of
# its lines is cannot be told (the shell sorts thermal_zone10 before thermal_zone2)
_CAT = re.compile(BEFORE_COMMAND + r"(?:sudo\s+)?cat\s+(/sys/(?:class|devices/virtual)/thermal/"
                  r"(?:thermal_zone|cooling_device)\d+/\w+)\s*$")


# "cat /sys/class/thermal/thermal_zone*/type" and ".../temp": the shell expands both globs in one order, so the
# n-th type names the n-th temperature (as paste(1) of the two pairs them); which zone number each is stays unknown
_GLOBBED = re.compile(BEFORE_COMMAND + r"(?:sudo\s+)?cat\s+/sys/class/thermal/thermal_zone\*/(type|temp)\s*$")
_COMMAND = re.compile(r"^(?:" + ANY_PROMPT + r"\s|(?:sudo\s+)?cat\s)")
_PASTED_ZONE = re.compile(r"^([A-Za-z][\w .-]{0,40}?)\t+(-?\d{1,6})$")


def _globbed_pairs(lines: list[str]) -> tuple[list[str], list[str]]:
    """The zones of a session that cats every zone's type and every zone's temp, as listing lines in the order the
    shell gave them (numbered in that order, as the paste(1) reading numbers them), and the session's other lines;
    no zones unless both are there with as many lines each."""
    outputs: dict[str, list[str]] = {}
    rest: list[str] = []
    current: list[str] | None = None
    for line in lines:
        command = _GLOBBED.match(line.strip())
        if command:
            current = outputs.setdefault(command.group(1), [])
        elif _COMMAND.match(line.strip()) or not line.strip():
            current = None
        if current is None:
            rest.append(line)
        elif not command:
            current.append(line.strip())
    types, temps = outputs.get("type", []), outputs.get("temp", [])
    if not types or len(types) != len(temps):
        return [], lines
    zones = enumerate(zip(types, temps, strict=True))
    return [f"/sys/class/thermal/thermal_zone{n}/{name}:{value}" for n, (kind, degrees) in zones
            for name, value in (("type", kind), ("temp", degrees))], rest


def catted(text: str) -> str:
    """``text`` with each ``cat`` of one thermal zone's or cooling device's file and the line under it written as
    the listing's ``path:value``, and the zones of a globbed type and temp paired; ``text`` itself where it has
    none."""
    lines = text.splitlines()
    paired, rest = _globbed_pairs(lines)
    if paired:
        return "\n".join([*rest, *paired])
    if not any(_CAT.match(line.strip()) for line in lines):
        return text
    out: list[str] = []
    n = 0
    while n < len(lines):
        command = _CAT.match(lines[n].strip())
        after = lines[n + 1].strip() if n + 1 < len(lines) else ""
        if command and after and not _COMMAND.match(after):
            out.append(f"{command.group(1)}:{after}")  # the command and the value it printed, as one line
            n += 2
            continue
        out.append(lines[n])
        n += 1
    return "\n".join(out)


class Zones:
    """What a listing's lines say of the thermal zones and cooling devices, gathered: a folder's files come in any
    order (grep lists ``temp`` before ``type``)."""

    def __init__(self) -> None:
        self.files: dict[str, dict[str, str]] = {}
        self.pasted = -1  # zones of ``paste <(cat .../thermal_zone*/type) <(cat .../temp)`` met so far

    def pasted_line(self, line: str) -> bool:
        """A zone's type and its temperature in millidegrees, a tab between, in the order paste(1) gave them."""
        match = _PASTED_ZONE.match(line.strip(" "))
        if self.pasted < 0 or match is None:
            return False
        zone = f"thermal_zone{self.pasted}"
        self.take(zone, "type", match.group(1))
        self.take(zone, "temp", match.group(2))
        self.pasted += 1
        return True

    def take(self, folder: str, name: str, value: str) -> bool:
        """Keep ``name: value`` of a thermal zone's or a cooling device's folder; False for any other folder."""
        found = _FOLDER.search(folder)
        if found is None:
            return False
        self.files.setdefault(found.group(1), {})[name] = value.strip()
        return True

    def readings(self) -> list[Reading]:
        zones = {k: v for k, v in self.files.items() if k.startswith("thermal_zone")}
        found = [r for zone, files in zones.items() for r in _zone(zone, files)]
        active = {zone: trips for zone in zones if (trips := _active_trips(zones[zone]))}
        bound = next(iter(active.items())) if len(active) == 1 else None
        for device, files in self.files.items():
            if device.startswith("cooling_device"):
                found += _device(device, files, bound, zones)
        return found


def _celsius(text: str | None) -> float | None:
    return int(text) / 1000.0 if text is not None and _NUMBER.fullmatch(text) else None


def _zone(zone: str, files: dict[str, str]) -> list[Reading]:
    celsius = _celsius(files.get("temp"))
    if celsius is None:
        return []
    return [Reading(zone, files.get("type") or zone, celsius, f"{files['temp']} m°C", "c")]


def _active_trips(files: dict[str, str]) -> list[tuple[float, float]]:
    """A zone's active trip points as (the temperature it turns its fans on at, its hysteresis), lowest first."""
    trips = []
    for name, kind in files.items():
        numbered = re.fullmatch(r"trip_point_(\d+)_type", name)
        if numbered and kind.startswith("active"):
            temp = _celsius(files.get(f"trip_point_{numbered.group(1)}_temp"))
            if temp is not None and temp > 0:
                trips.append((temp, _celsius(files.get(f"trip_point_{numbered.group(1)}_hyst")) or 0.0))
    return sorted(trips)


def _device(device: str, files: dict[str, str], bound: tuple[str, list[tuple[float, float]]] | None,
            zones: dict[str, dict[str, str]]) -> list[Reading]:
    kind, state, most = files.get("type", ""), files.get("cur_state", ""), files.get("max_state", "")
    if not _FAN_TYPE.search(kind) or not (_NUMBER.fullmatch(state) and _NUMBER.fullmatch(most)) or int(most) <= 0:
        return []
    extra: dict[str, float | str] = {"max_state": float(most)}
    if bound is not None:
        zone, trips = bound
        trip, hyst = trips[0]
        extra.update(trip=trip, hysteresis=hyst, mode=zones[zone].get("mode", ""),
                     follows=f"{zone}/{zones[zone].get('type') or zone}")
    return [Reading(device, kind, round(100.0 * int(state) / int(most), 1), f"state {state} of {most}", "%",
                    "cur_state", 0, extra)]
