"""fw-fanctrl's status (``fw-fanctrl print``, and each line its service logs): the strategy in use, the duty it set
on the Framework laptop's fans (``Speed: 25%``, written to the embedded controller with ``ectool fanduty``), the
hottest EC sensor (``Temp``), its moving average and the lower of the two it follows (``EffectiveTemp``), and whether
it runs (``Active``; paused, the EC's own control has the fans: ``ectool autofanctrl``). fw-fanctrl's
StatusRuntimeResult and FanController. The fans are fw-fanctrl's: chip "fw-fanctrl", a daemon driving the EC."""

from __future__ import annotations

import re

from ..facts import Reading
from ..values import parse

_STRATEGY = re.compile(r"^\s*Strategy:\s*'([^']*)'\s*$", re.MULTILINE)
_FIELD = re.compile(r"^\s*(Speed|Temp|MovingAverageTemp|EffectiveTemp|Active):\s*(\S.*?)\s*$")
CHIP = "fw-fanctrl"


def read(text: str) -> list[Reading]:
    strategy = _STRATEGY.search(text)
    if strategy is None:
        return []
    found: list[Reading] = []
    fan = f"EC fan (strategy '{strategy.group(1)}')"
    fields = [m.groups() for m in map(_FIELD.match, text.splitlines()) if m is not None]
    paused = any(key == "Active" and value.lower() != "true" for key, value in fields)
    for key, value in fields:
        number = parse(value)[0]
        if key == "Speed":  # paused, it is the last duty it set, not what the EC drives
            found += [Reading(CHIP, fan, number, value, "%", "pwm1")] if number is not None and not paused else []
        elif key == "Active":  # running: its curve drives the fans; paused: the EC's own control (auto) has them
            found.append(Reading(CHIP, fan, 2.0 if value.lower() == "true" else 3.0, value, None, "pwm1_enable"))
        elif number is not None:
            found.append(Reading(CHIP, {"Temp": "EC hottest sensor", "MovingAverageTemp": "EC moving average",
                                        "EffectiveTemp": "temperature followed"}[key], number, value, "c"))
    return found
