"""What the kernel logs of a part acting for heat, as dmesg or journalctl print it (with or without timestamps and
the "mce:" prefix):
- a CPU slowing for heat (arch/x86/kernel/cpu/mce/therm_throt.c): "CPU%d: %s temperature above threshold, cpu clock
  throttled (total events = %lu)" when its thermal sensor asserts (Core or Package level), "CPU%d: %s
  temperature/speed normal" when it clears;
- an NVIDIA card under nouveau at one of its thresholds (drivers/gpu/drm/nouveau/nvkm/subdev/therm/temp.c,
  nvkm_therm_sensor_event): "nouveau 0000:01:00.0: therm: temperature (%i C) hit the '%s' threshold" rising,
  "... went below the '%s' threshold" falling; the thresholds are fanboost (the driver sets the fan to 100 %),
  downclock, critical (it pauses the card) and shutdown (it powers the machine off);
- a thermal zone at its critical trip (drivers/thermal/thermal_core.c): "thermal thermal_zone2: critical temperature
  reached (105 C), shutting down", or in newer kernels "thermal thermal_zone2: acpitz: critical temperature reached";
- a board's sensor chip its driver found at I/O ports the firmware's ACPI claims (drivers/acpi/osl.c,
  acpi_check_resource_conflict; the "ACPI Warning" is ACPICA's utaddress.c, in its newer and its older wording)."""

from __future__ import annotations

import re

from ..facts import ChipClaim, HeatEvent

_LINE = re.compile(r"\b(CPU\d+): (Core|Package) temperature(?: above threshold, cpu clock throttled(?: \(total events "
                   r"= (\d+)\))?|/speed normal)")
_NOUVEAU = re.compile(r"\bnouveau (\S+?):? therm: temperature \((-?\d+) C\) (hit|went below) the '(fanboost|downclock|"
                      r"critical|shutdown)' threshold")


# a thermal zone at its critical trip (drivers/thermal/thermal_core.c, handle_critical_trips): the kernel logs it and
# shuts the machine down; older kernels "critical temperature reached (105 C), shutting down", newer ones name the
# zone's type ("acpitz: critical temperature reached") before hw_protection_shutdown("Temperature too high")
_ZONE_CRITICAL = re.compile(r"\bthermal (thermal_zone\d+): (?:(\S+): )?critical temperature reached(?: \((-?\d+) C\))?")


def events(text: str) -> tuple[HeatEvent, ...]:
    """Each part and level the log shows acting for heat, with its last count and whether it passed."""
    found: dict[tuple[str, str], HeatEvent] = {}
    for line in _ZONE_CRITICAL.finditer(text):
        key = (line.group(1), line.group(2) or "critical")  # the zone, with its type where the kernel names it
        found[key] = HeatEvent(key[0], key[1], found[key].count + 1 if key in found else 1, False, "thermal",
                               float(line.group(3)) if line.group(3) else None)
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


# a Super-I/O driver's probe: "nct6775: Found NCT6798D or compatible chip at 0x2e:0x290", "it87: Found IT8688E chip
# at 0xa40, revision 1", "w83627ehf: Found W83627DHG chip at 0x290"
_FOUND = re.compile(r"\b([a-z][a-z0-9_]*): Found (\S+?)(?: or compatible)? chip at (?:0x[0-9a-f]+:)?(0x[0-9a-f]+)",
                    re.IGNORECASE)
_CONFLICT = re.compile(r"ACPI Warning: (?:SystemIO range )?(0x[0-9a-f]+)-0x[0-9a-f]+ (?:SystemIO )?conflicts with "
                       r"(?:OpRegion (?:0x[0-9a-f]+-0x[0-9a-f]+ )?\(([^)]+)\)|Region (\S+))", re.IGNORECASE)
# acpi_enforce_resources=lax lets the driver in with a notice (osl.c; before Linux 3.x: "This conflict may cause
# random problems and system instability"); under strict (the default) it is refused busy, its probe failing -16
_LAX = re.compile(r"System may be unstable or behave erratically|This conflict may cause random problems")
_BUSY = re.compile(r"\b([a-z][a-z0-9_]*): probe of \S+ failed with error -16", re.IGNORECASE)
HWM_SPAN = 0x20  # a Super-I/O's hardware-monitor ports: its base and the index/data pair a few ports above it


def claims(text: str) -> tuple[ChipClaim, ...]:
    """Each chip a driver found whose ports an ACPI warning of the same log names, and whether it was let in."""
    conflicts = [(int(m.group(1), 16), m.group(2) or m.group(3)) for m in _CONFLICT.finditer(text)]
    lax = _LAX.search(text) is not None
    busy = {m.group(1).lower() for m in _BUSY.finditer(text)}
    found: dict[str, ChipClaim] = {}
    for m in _FOUND.finditer(text):
        base = int(m.group(3), 16)
        region = next((name for port, name in conflicts if base <= port < base + HWM_SPAN), None)
        if region is not None:
            driver = m.group(1).lower()
            found[driver] = ChipClaim(driver, m.group(2), m.group(3).lower(), region,
                                      False if driver in busy else True if lax else None)
    return tuple(found.values())
