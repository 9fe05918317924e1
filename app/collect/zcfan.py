"""What zcfan (a ThinkPad fan daemon) is configured to do (``/etc/zcfan.conf``), read into fancontrol's ``Declared``
records: its three trip temperatures, each a ThinkPad fan level from that temperature up.

zcfan(1): ``max_temp``, ``med_temp`` and ``low_temp`` lines, each a trip temperature (°C; by default 90, 80 and 70),
for thinkpad_acpi's fan levels 7, 4 and 1 (the manual's table; earlier READMEs give 2 for the low level); below the
lowest trip the fan is off. It follows the hottest of the kernel's thermal zones (zcfan.c:
``/sys/class/thermal/thermal_zone*/temp``) and lowers a level only once that is ``temp_hysteresis`` (default 10 °C)
under its trip. A file with no trip line declares nothing; a trip it does not name keeps its default.
"""

from __future__ import annotations

import re

from .daemonyaml import Read
from .fancontrol import Declared
from .thinkfan import speed_percent

DEFAULTS = {"low_temp": 70.0, "med_temp": 80.0, "max_temp": 90.0}  # zcfan(1)'s defaults, °C
LEVELS = {"low_temp": 1, "med_temp": 4, "max_temp": 7}  # the thinkpad_acpi level each trip sets (zcfan(1))
FOLLOWS = "the hottest thermal zone"
_TRIP = re.compile(r"^\s*(max_temp|med_temp|low_temp)\s+(\d{1,3})\s*$", re.MULTILINE)


def parse(text: str) -> Read:
    """The ThinkPad fan's steps from a zcfan configuration; nothing from a text with fewer than two trip lines (one
    such line alone could be anything's)."""
    written = {m.group(1): float(m.group(2)) for m in _TRIP.finditer(text)}
    if len(written) < 2:
        return Read(())
    trips = {**DEFAULTS, **written}
    points = [(0.0, 0.0)]
    for name in ("low_temp", "med_temp", "max_temp"):
        percent = speed_percent(str(LEVELS[name]), ec=True)
        if isinstance(percent, float):
            points.append((trips[name], percent))
    points.sort()
    return Read((Declared(chip="thinkpad", pwm="pwm1", source_chip=None, source=None, fans=(), curve=tuple(points),
                          floor_percent=0.0, daemon="zcfan", follows=FOLLOWS, stepped=True),))
