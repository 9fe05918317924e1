"""tuxedo-rs' ``tailor_hwcaps``: what a TUXEDO (Clevo or Uniwill) laptop's embedded controller answers through the
tuxedo_io interface (tuxedo-rs' tailor_hwcaps/src/main.rs and tuxedo_ioctl's hal): "[OK]    Fan temperatures [°C]:
[79, 59]" (the temperature the EC gives each fan: Clevo's fan info, Uniwill's fan temperature register; a fan whose
reading is 0 or 1 is one the EC does not have, and the whole line is "[ERR] ... DevNotAvailable"), "[OK]    Fan speeds
[%]: [46, 45]" (each fan's speed register as a share of its top: the duty it runs at) and "[OK]    Fan min speed [%]:
20" (the least the EC runs its fans at while they turn). Each fan is the ``tuxedo`` chip's, an embedded controller."""

from __future__ import annotations

import re

from ..facts import Reading

CHIP = "tuxedo"
_LIST = re.compile(r"^\[OK\]\s+Fan (temperatures \[°C\]|speeds \[%\]): \[([\d,\s]*)\]\s*$", re.MULTILINE)
_MIN = re.compile(r"^\[OK\]\s+Fan min speed \[%\]: (\d+)\s*$", re.MULTILINE)


def read(text: str) -> list[Reading]:
    found: list[Reading] = []
    fans = 0
    for m in _LIST.finditer(text):
        values = [float(v) for v in re.findall(r"\d+", m.group(2))]
        fans = max(fans, len(values))
        if m.group(1).startswith("temperatures"):
            found += [Reading(CHIP, f"fan{n} temperature", v, f"{v:g} °C", "c") for n, v in enumerate(values, 1)]
        else:
            found += [Reading(CHIP, f"fan{n}", v, f"{v:g} %", "%", f"pwm{n}") for n, v in enumerate(values, 1)]
    least = _MIN.search(text)
    if least is not None and found:
        found += [Reading(CHIP, f"fan{n}", float(least.group(1)), f"{least.group(1)} %", "%", f"pwm{n}_floor")
                  for n in range(1, fans + 1)]
    return found
