"""NoteBook FanControl's ``nbfc status``: its temperature (the source its configuration names, the CPU's by
default) and, for each fan, its name, whether nbfc's own curve drives it (``Auto control enabled``) or a speed set
by hand holds it, and its current speed in percent (nbfc's README, ``nbfc status``). The fans are nbfc's: chip
"nbfc", a daemon writing the embedded controller's registers."""

from __future__ import annotations

import re

from ..facts import Reading
from ..values import parse

_LINE = re.compile(r"^\s*([A-Za-z][\w ]*?)\s*:\s*(.*?)\s*$")


def read(text: str) -> list[Reading]:
    if not re.search(r"^\s*Fan display name\s*:", text, re.MULTILINE):
        return []
    found: list[Reading] = []
    fan = 0
    name = ""
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        key, value = match.group(1).lower(), match.group(2)
        number = parse(value)[0]
        if key == "temperature" and number is not None:
            found.append(Reading("nbfc", "CPU temperature", number, value, "c"))
        elif key == "fan display name":
            fan, name = fan + 1, value
        elif key == "auto control enabled" and fan:
            auto = value.lower() == "true"  # nbfc's curve (its configuration's thresholds), else a speed set by hand
            found.append(Reading("nbfc", name, 2.0 if auto else 1.0, value, None, f"pwm{fan}_enable"))
        elif key == "current fan speed" and fan and number is not None:
            found.append(Reading("nbfc", name, number, value, "%", f"pwm{fan}"))
    return found
