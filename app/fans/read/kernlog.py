"""What the kernel logs of a part acting for heat, as dmesg or journalctl print it (with or without timestamps and
the "mce:" prefix):
- a CPU slowing for heat (arch/x86/kernel/cpu/mce/therm_throt.c): "CPU%d: %s temperature above threshold, cpu clock
  throttled (total events = %lu)" when its thermal sensor asserts (Core or Package level), "CPU%d: %s
  temperature/speed normal" when it clears;
- an NVIDIA card under nouveau at one of its thresholds (drivers/gpu/drm/nouveau/nvkm/subdev/therm/temp.c,
  nvkm_therm_sensor_event): "nouveau 0000:01:00.0: therm: temperature (%i C) hit the '%s' threshold" rising,
  "... went below the '%s' threshold" falling; the thresholds are fanboost (the driver sets the fan to 100 %),
  downclock, critical (it pauses the card) and shutdown (it powers the machine off)."""

from __future__ import annotations

import re

from ..facts import HeatEvent

_LINE = re.compile(r"\b(CPU\d+): (Core|Package) temperature(?: above threshold, cpu clock throttled(?: \(total events "
                   r"= (\d+)\))?|/speed normal)")
_NOUVEAU = re.compile(r"\bnouveau (\S+?):? therm: temperature \((-?\d+) C\) (hit|went below) the '(fanboost|downclock|"
                      r"critical|shutdown)' threshold")


def events(text: str) -> tuple[HeatEvent, ...]:
    """Each part and level the log shows acting for heat, with its last count and whether it passed."""
    found: dict[tuple[str, str], HeatEvent] = {}
    for line in _LINE.finditer(text):
        key = (line.group(1), line.group(2))
        if line.group(0).endswith("normal"):
            if key in found:
                found[key] = HeatEvent(key[0], key[1], found[key].count, True)
        else:
            count = int(line.group(3)) if line.group(3) else (found[key].count + 1 if key in found else 1)
            found[key] = HeatEvent(key[0], key[1], count, False)
    for line in _NOUVEAU.finditer(text):
        key = (line.group(1), line.group(4))
        celsius = float(line.group(2))
        if line.group(3) == "went below":
            if key in found:
                found[key] = HeatEvent(key[0], key[1], found[key].count, True, "nouveau", celsius)
        else:
            found[key] = HeatEvent(key[0], key[1], found[key].count + 1 if key in found else 1, False, "nouveau",
                                   celsius)
    return tuple(found.values())
