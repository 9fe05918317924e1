"""The kernel's thermal framework as a listing shows it (``grep . /sys/class/thermal/*/*``): each thermal zone's
type, temperature, mode and trip points, each cooling device's type and state (kernel
Documentation/driver-api/thermal/sysfs-api.rst). A zone's temperature is a reading; a cooling device whose type
names a fan is a fan whose duty is its state (``cur_state`` of ``max_state``), with the zone whose active trip
turns it on: the one zone with active trips (a listing does not show which cooling map binds which device)."""

from __future__ import annotations

import re

from ..facts import Reading

_FOLDER = re.compile(r"(?:^|/)(thermal_zone\d+|cooling_device\d+)$")
_NUMBER = re.compile(r"-?\d+")
_FAN_TYPE = re.compile(r"fan|cooling.?fan|emc23\d\d", re.IGNORECASE)  # "Fan" (ACPI), pwm-fan, gpio-fan, emc2305


class Zones:
    """What a listing's lines say of the thermal zones and cooling devices, gathered: a folder's files come in any
    order (grep lists ``temp`` before ``type``)."""

    def __init__(self) -> None:
        self.files: dict[str, dict[str, str]] = {}

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
