"""The out-of-tree legion-laptop driver's debug dump (LenovoLegionLinux: ``cat /sys/kernel/debug/legion/fancurve``),
as its ``debugfs_fancurve_show`` prints it: each value as "NAME error: E" then "NAME: V", first as the driver reads
it for its hwmon files (through the model's access method), then as each other method reads it ("CPU temperature
EC", "1 fanspeed WMI3": tries for a new model, not readings). Read: the CPU's and the GPU's temperatures (°C) and
each fan's speed (RPM) the driver uses, where their error is 0; and two settings of the embedded controller it shows
and LenovoLegionLinux's documentation names: fan_fullspeed ("maximum fan speed", the dump's "fanfullspeed") and
lockfancontroller ("lock fans at current speed"), from the dump or from the driver's files
(``/sys/bus/platform/drivers/legion/.../fan_fullspeed``)."""

from __future__ import annotations

import re

from ..facts import Reading, Setting

CHIP = "legion_hwmon"  # the driver's hwmon name (LEGION_HWMON_NAME)
CONTROLLER = "Lenovo Legion embedded controller"
_VALUE = re.compile(r"^\s*(CPU temperature|GPU temperature|(\d) fanspeed)( error)?:\s*(-?\d+)\s*$", re.MULTILINE)
_MARK = re.compile(r"^\s*(legion_laptop features|fan speed access method|temperature access method):", re.MULTILINE)
_DUMPED = re.compile(r"^\s*(fanfullspeed|EC lockfancontroller):\s*(\S+)\s*$", re.MULTILINE)
_FILE = re.compile(r"/legion/(?:[\w:.-]+/)*(fan_fullspeed|lockfancontroller)\s*[:=]\s*(\S+)\s*$", re.MULTILINE)
_NAMES = {"fanfullspeed": "fan_fullspeed", "EC lockfancontroller": "lockfancontroller"}


def read(text: str) -> list[Reading]:
    if not _MARK.search(text):
        return []
    failed: set[str] = set()
    found: list[Reading] = []
    for m in _VALUE.finditer(text):
        name, fan, error, value = m.group(1), m.group(2), m.group(3), int(m.group(4))
        if error:
            (failed.add if value else failed.discard)(name)
            continue
        if name in failed:
            continue
        if fan:
            found.append(Reading(CHIP, f"Fan {fan}", float(value), f"{value} RPM", "rpm", f"fan{fan}_input"))
        else:
            found.append(Reading(CHIP, name, float(value), f"{value} °C", "c"))
    return found


def settings(text: str) -> tuple[Setting, ...]:
    """fan_fullspeed and lockfancontroller as the paste shows them (the dump's "true"/"false" as 1/0)."""
    found = {_NAMES[m.group(1)]: m.group(2) for m in _DUMPED.finditer(text)} if _MARK.search(text) else {}
    found.update({m.group(1): m.group(2) for m in _FILE.finditer(text)})
    values = {"true": "1", "false": "0"}
    return tuple(Setting(CONTROLLER, name, values.get(value.lower(), value)) for name, value in found.items()
                 if values.get(value.lower(), value) in ("0", "1"))
