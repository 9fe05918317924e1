"""The critical limit ``sensors`` prints beside a temperature: "Package id 0: +103.0°C  (high = +110.0°C, crit =
+110.0°C)", or on the line under it, "(crit = +84.8°C)" (lm-sensors' prog/sensors/chips.c prints a temperature's
limits after it, wrapping them onto a second line where they do not fit). Its driver's ``tempN_crit``
(sysfs-interface.rst: the temperature critical max value). Each is a reading of that temperature, attribute
``label_crit``, for the limit the fan wing's rules compare it with (``sensors -u`` and ``-j`` name it
``tempN_crit`` themselves); and its critical alarm, "ALARM (CRIT)" after the limits (chips.c prints the set alarms
there: tempN_crit_alarm), attribute ``label_crit_alarm``."""

from __future__ import annotations

import re

from ..facts import Reading
from ..values import parse
from .chipheader import chip_of, twins

_TEMPERATURE = re.compile(r"^([^:(]{1,60}):\s+[+-]?[\d.]+\s*°C\b")
_CRIT = re.compile(r"\bcrit\s*=\s*([+-]?[\d.]+\s*°C)")  # not "crit low =" (a lower limit) nor "crit_hyst"
_CRIT_ALARM = re.compile(r"\bALARM\s*\([^)]*\bCRIT\b")  # chips.c's alarms after the limits: "ALARM (CRIT)"


def limits(text: str) -> list[Reading]:
    found: list[Reading] = []
    owners = twins(text)
    chip: str | None = None
    label: str | None = None  # the temperature the line before was, whose limits a wrapped line goes on with
    for line in text.splitlines():
        stripped = line.strip()
        header = chip_of(stripped, owners)
        if header:
            chip, label = header, None
            continue
        temperature = _TEMPERATURE.match(stripped)
        if temperature:
            label = temperature.group(1).strip()
            if _CRIT_ALARM.search(stripped):  # the driver's critical alarm: tempN_crit_alarm 1
                found.append(Reading(chip, label, 1.0, "ALARM (CRIT)", None, "label_crit_alarm"))
        elif not stripped.startswith("("):
            label = None
        crit = _CRIT.search(stripped) if label else None
        if crit and label:
            value, unit, raw = parse(crit.group(1))
            if value is not None:
                found.append(Reading(chip, label, value, raw, unit, "label_crit"))
    return found
