"""A ThinkPad's fan through thinkpad_acpi's ``/proc/acpi/ibm/fan`` (and its ``thermal``): a fan source.

``fan`` says ``status`` (enabled), ``speed`` (RPM, as the embedded controller reports it: on some models, the
E series among them, it stays 0 whatever the fan does) and ``level``: ``auto`` (the embedded controller decides),
``0``-``7`` (set by software: thinkfan, or a person), ``full-speed`` or ``disengaged`` (the fastest, without
regulation). ``thermal`` lists up to 16 temperatures in °C; -128 and 0 are slots with no sensor.

Where the kernel also gives the ``thinkpad`` hwmon chip (under ``sys_root``), its fans and temperatures are the
same ones, read there with the pwm and its mode: this source then reads nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..core.bounded import read_text_file
from ..core.fan import MAX_RPM, Fan, FanControl, checked
from ..core.model import HostSensor, frozen_map
from ..core.record import record
from ..core.vocabulary import dead_temperature
from ..vendors.sysfs import read_text
from .hwmon import chips as hwmon_chips
from .sources import Reading

LEVELS = 7  # the embedded controller's levels 0-7
CHIP = "thinkpad"


def parse_fan(text: str) -> Fan | None:
    """The fan of a ``/proc/acpi/ibm/fan`` text, or None when it names none."""
    fields = dict(re.findall(r"^(status|speed|level):\s*(\S+)", text, re.MULTILINE))
    if "speed" not in fields and "level" not in fields:
        return None
    unsupported: dict[str, str] = {}
    speed = int(fields["speed"]) if fields.get("speed", "").isdigit() else None
    rpm = checked(speed, 0, MAX_RPM, "/proc/acpi/ibm/fan's speed", unsupported, "rpm")
    level = fields.get("level", "")
    if speed is None:
        unsupported["rpm"] = "no speed in /proc/acpi/ibm/fan"
    control, controller, percent = _level(level)
    return Fan(id="acpi:thinkpad/fan1", chip=CHIP, channel=1, label=None, rpm=rpm, percent=percent, control=control,
               raw_rpm=speed if rpm is None else None,  # a value that is no speed: kept, for the wing to say why
               controller=controller, status=fields.get("status"), level=level or None, cools="the machine",
               unsupported=frozen_map(unsupported))


def _level(level: str) -> tuple[FanControl, str, float | None]:
    if level == "auto":
        return "automatic", "the embedded controller (level auto)", None
    if level.isdigit():
        return ("manual", f"set by software (level {level} of {LEVELS}: thinkfan, or a person)",
                round(100.0 * min(int(level), LEVELS) / LEVELS, 1))
    if level in ("full-speed", "disengaged"):
        return "full-speed", f"no regulation: level {level}", 100.0
    return "unknown", f"the embedded controller (level {level or 'not said'})", None


def parse_thermal(text: str) -> tuple[HostSensor, ...]:
    """The temperatures of a ``/proc/acpi/ibm/thermal`` text (slots with no sensor, -128 or 0, left out)."""
    match = re.search(r"^temperatures:\s*(.*)$", text, re.MULTILINE)
    if match is None:
        return ()
    found = []
    for n, word in enumerate(match.group(1).split(), start=1):
        if re.fullmatch(r"-?\d+", word) and (value := float(word)) > 0 and dead_temperature(value) is None:
            found.append(HostSensor(chip="thinkpad_acpi", label=f"temp{n}", temperature_c=value))
    return tuple(found)


@record
class ThinkPadSource:
    """``/proc/acpi/ibm/fan`` and ``thermal`` under ``proc_root`` as a fan source (``app.collect.sources``); nothing
    when the ``thinkpad`` hwmon chip under ``sys_root`` gives the same fan."""

    proc_root: Path
    sys_root: Path = Path("/sys")
    period_s: float = 5.0
    timeout_s: float = 3.0
    key: str = "thinkpad-acpi"
    name: str = "the ThinkPad's embedded controller (/proc/acpi/ibm/fan)"

    def read(self) -> Reading:
        if any(read_text(chip / "name") == CHIP for chip in hwmon_chips(self.sys_root)):
            return Reading()
        base = self.proc_root / "acpi" / "ibm"
        fan = parse_fan(read_text_file(base / "fan", 65536))
        try:
            temperatures = parse_thermal(read_text_file(base / "thermal", 65536))
        except OSError:
            temperatures = ()
        return Reading(fans=(fan,) if fan else (), temperatures=temperatures)
