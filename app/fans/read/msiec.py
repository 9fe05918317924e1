"""The msi-ec driver's files as people paste them (``grep -r . /sys/devices/platform/msi-ec/`` or a session of
``cat``), read as its README documents them: ``cpu/realtime_temperature`` and ``gpu/realtime_temperature`` (°C),
``cpu/realtime_fan_speed`` and ``gpu/realtime_fan_speed`` (the fan's speed in %, 0-100), and two settings of the
embedded controller: ``cooler_boost`` (on: "powerful cooling capability by boosting the airflow") and ``fan_mode``
(auto: the EC adjusts the speed; silent: the fan is disabled; basic: one fixed speed; advanced: six fixed levels)."""

from __future__ import annotations

import re

from ..facts import Reading, Setting

_ROOT = r"/sys/devices/platform/msi-ec/"
_GREP = re.compile(rf"{_ROOT}([\w/]+):\s*(\S+)\s*$", re.MULTILINE)
_CAT = re.compile(rf"cat\s+{_ROOT}([\w/]+)\s*\n\s*(\S+)\s*$", re.MULTILINE)
CONTROLLER = "MSI embedded controller"  # the controller the settings are of
SETTINGS = ("cooler_boost", "fan_mode")
_FANS = {"cpu": ("CPU fan", "pwm1"), "gpu": ("GPU fan", "pwm2")}


def files(text: str) -> dict[str, str]:
    """Each msi-ec file the paste shows, by its path under the device, and its value (the last one shown)."""
    return {m.group(1): m.group(2) for pattern in (_GREP, _CAT) for m in pattern.finditer(text)}


def read(text: str) -> list[Reading]:
    found: list[Reading] = []
    for path, raw in files(text).items():
        part, _, name = path.partition("/")
        if part not in _FANS or not re.fullmatch(r"-?\d+", raw):
            continue
        if name == "realtime_temperature":
            found.append(Reading("msi_ec", part.upper(), float(raw), raw, "c"))
        elif name == "realtime_fan_speed":
            label, attr = _FANS[part]
            found.append(Reading("msi_ec", label, float(raw), f"{raw} %", "%", attr))
    return found


def settings(text: str) -> tuple[Setting, ...]:
    return tuple(Setting(CONTROLLER, name, raw) for name, raw in files(text).items() if name in SETTINGS)
