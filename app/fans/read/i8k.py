"""``/proc/i8k`` and ``i8kctl`` with no arguments (i8kutils, over the dell-smm-hwmon driver): one line of ten fields,
as i8kctl(1) lists them: the format's version, the BIOS version, the service tag, the CPU's temperature (°C), the
left and the right fan's state (0 off, 1 low, 2 high), their speeds (RPM), the AC power and the Fn keys' status
("1.0 A17 B5W123K 52 2 1 8040 6420 1 2"). -1 stands where the SMM call failed (the driver's error value). Read only
where the paste names i8k: ten numbers alone on a line could be anything."""

from __future__ import annotations

import re

from ..facts import Reading

_LINE = re.compile(r"^\s*\d+\.\d+\s+\S+\s+\S+\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)\s+-?\d+\s+-?\d+\s*$",
                   re.MULTILINE)
CHIP = "dell_smm"
MAX_STATE = 2  # i8kctl(1): 0 off, 1 low, 2 high; the driver's pwm is the state scaled to 0-255
_FANS = (("Left fan", 1), ("Right fan", 2))


def read(text: str) -> list[Reading]:
    if "i8k" not in text.lower():
        return []
    found: list[Reading] = []
    for snapshot, match in enumerate(_LINE.finditer(text)):
        cpu, *fans = (int(g) for g in match.groups())
        if 0 < cpu < 128:  # -1: the SMM call failed; the driver's temperatures are 8-bit
            found.append(Reading(CHIP, "CPU", float(cpu), f"{cpu} °C", "c", "temp1_input", snapshot))
        for (label, n), state, speed in zip(_FANS, fans[:2], fans[2:], strict=True):
            found.append(Reading(CHIP, label, float(speed), f"{speed} RPM", "rpm", f"fan{n}_input", snapshot))
            if 0 <= state <= MAX_STATE:
                pwm = round(state * 255 / MAX_STATE)
                found.append(Reading(CHIP, label, float(pwm), f"state {state}", None, f"pwm{n}", snapshot))
    return found
