"""A drive's temperature as smartctl prints it (smartmontools' smartctl(8)): an ATA drive's attribute table (194
``Temperature_Celsius`` and 190 ``Airflow_Temperature_Cel``, whose raw value leads with the temperature in °C, then
its minimum and maximum: ``44 (Min/Max 22/56)``), an NVMe drive's health log (``Temperature: 71 Celsius``,
``Temperature Sensor N: 84 Celsius``) and a SCSI drive's ``Current Drive Temperature: 35 C``. Each is the
temperature of the drive the command names (``smartctl -A /dev/sda``, or the ``/dev/...`` its output names); a
paste of several drives keeps each apart. The thresholds beside them (``Warning Comp. Temperature Threshold``) are
limits, not readings."""

from __future__ import annotations

import re

from ..facts import Reading

CHIP = "drivetemp"  # a drive's own sensor, as the kernel's drivetemp driver reads the same attribute
_DEVICE = re.compile(r"(/dev/[\w/-]+)")
_ATTRIBUTE = re.compile(r"^\s*(194|190)\s+(\w*Temp\w*)\s+0x[0-9a-f]{4}\s+\d+\s+\d+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\d+)",
                        re.IGNORECASE)
_NVME = re.compile(r"^(Temperature(?: Sensor \d+)?):\s+(-?\d+) Celsius\s*$")
_SCSI = re.compile(r"^(Current Drive Temperature):\s+(-?\d+) C\s*$")


def read(text: str) -> list[Reading]:
    if "smart" not in text.lower():
        return []  # these labels alone are any tool's: read where smartctl's output names itself
    found: list[Reading] = []
    device = "drive"
    for line in text.split("\n"):
        if line.lstrip().startswith(("$", "#", "===")) or "smartctl" in line:
            named = _DEVICE.search(line)
            device = named.group(1) if named else device
        attribute = _ATTRIBUTE.match(line)
        if attribute is not None:
            celsius = int(attribute.group(3))
            found.append(Reading(CHIP, f"{device} {attribute.group(2)}", float(celsius), f"{celsius} °C", "c"))
            continue
        labelled = _NVME.match(line.strip()) or _SCSI.match(line.strip())
        if labelled is not None:
            found.append(Reading(CHIP, f"{device} {labelled.group(1)}", float(labelled.group(2)),
                                 f"{labelled.group(2)} °C", "c"))
    return found
