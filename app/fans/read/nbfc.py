"""NoteBook FanControl's ``nbfc status``: its temperature (the source its configuration names, the CPU's by
default) and, for each fan, its name, whether nbfc's own curve drives it (``Auto control enabled``) or a speed set
by hand holds it, the speed it asks for (``Target fan speed``, in %) and the speed it reads back (``Current fan
speed``: the value of the embedded controller's read register scaled between the configuration's minimum and maximum
speed values, so a share outside 0-100 % means those values or that register do not fit this machine: nbfc-linux's
src/fan.c, Fan_FanSpeedToPercentage and Fan_UpdateCurrentSpeed). The fans are nbfc's: chip "nbfc", a daemon writing
the embedded controller's registers. ``Critical mode enabled: True`` is a state nbfc reports of itself: it asks
100 % until the temperature is back 15 °C under its configuration's critical temperature (src/fan.c,
Fan_SetTemperature, Fan_GetTargetSpeed). A status printed again (its header's lines, or a fan's name, met a second
time) is the machine's next snapshot."""

from __future__ import annotations

import re

from ..facts import Reading, Setting
from ..values import parse

_LINE = re.compile(r"^[\s>]*([A-Za-z][\w ]*?)\s*:\s*(.*?)\s*$")  # a quoted paste keeps its "> " marks
_STATUS = re.compile(r"^[\s>]*Fan display name\s*:", re.MULTILINE)
_HEAD = frozenset({"service enabled", "read-only", "selected config name", "temperature"})  # once a status
CRITICAL = "Critical mode"  # the Setting's name for nbfc's critical mode


def read(text: str) -> list[Reading]:
    if not _STATUS.search(text):
        return []
    found: list[Reading] = []
    fan, name, snapshot, seen = 0, "", 0, set[str]()
    for key, value in _fields(text):
        number = parse(value)[0]
        mark = f"fan {value}" if key == "fan display name" else key
        if (key in _HEAD or key == "fan display name") and mark in seen:
            fan, snapshot, seen = 0, snapshot + 1, set()  # the status printed again: the machine's next snapshot
        seen.add(mark)
        if key == "temperature" and number is not None:
            found.append(Reading("nbfc", "CPU temperature", number, value, "c", None, snapshot))
        elif key == "fan display name":
            fan, name = fan + 1, value
        elif key == "auto control enabled" and fan:
            auto = value.lower() == "true"  # nbfc's curve (its configuration's thresholds), else a speed set by hand
            found.append(Reading("nbfc", name, 2.0 if auto else 1.0, value, None, f"pwm{fan}_enable", snapshot))
        elif key == "current fan speed" and fan and number is not None:
            found.append(Reading("nbfc", name, number, value, "%", f"pwm{fan}", snapshot))
        elif key == "target fan speed" and fan and number is not None:
            found.append(Reading("nbfc", name, number, value, "%", f"fan{fan}_target", snapshot))
    return found


def settings(text: str) -> tuple[Setting, ...]:
    """The fans nbfc reports in critical mode, each a Setting of nbfc (its name for the fan, "Critical mode")."""
    if not _STATUS.search(text):
        return ()
    found: list[Setting] = []
    name = ""
    for key, value in _fields(text):
        if key == "fan display name":
            name = value
        elif key == "critical mode enabled" and name and value.lower() == "true":
            found.append(Setting("nbfc", CRITICAL, name))
    return tuple(found)


def _fields(text: str) -> list[tuple[str, str]]:
    return [(m.group(1).lower(), m.group(2)) for m in map(_LINE.match, text.splitlines()) if m is not None]
