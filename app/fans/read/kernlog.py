"""What the kernel logs of a CPU slowing for heat (arch/x86/kernel/cpu/mce/therm_throt.c): "CPU%d: %s temperature
above threshold, cpu clock throttled (total events = %lu)" when the CPU's thermal sensor asserts (Core or Package
level), and "CPU%d: %s temperature/speed normal" when it clears; as dmesg or journalctl prints them, with or without
their timestamps and the "mce:" prefix."""

from __future__ import annotations

import re

from ..facts import HeatEvent

_LINE = re.compile(r"\b(CPU\d+): (Core|Package) temperature(?: above threshold, cpu clock throttled(?: \(total events "
                   r"= (\d+)\))?|/speed normal)")


def events(text: str) -> tuple[HeatEvent, ...]:
    """Each CPU and level the log shows slowed for heat, with its last count and whether it came back to normal."""
    found: dict[tuple[str, str], HeatEvent] = {}
    for line in _LINE.finditer(text):
        key = (line.group(1), line.group(2))
        if line.group(0).endswith("normal"):
            if key in found:
                found[key] = HeatEvent(key[0], key[1], found[key].count, True)
        else:
            count = int(line.group(3)) if line.group(3) else (found[key].count + 1 if key in found else 1)
            found[key] = HeatEvent(key[0], key[1], count, False)
    return tuple(found.values())
