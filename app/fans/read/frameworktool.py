"""Framework's ``framework_tool --thermal``: what a Framework laptop's embedded controller (a Chrome EC) keeps in its
memory map, as the tool prints it (framework-system's framework_lib/src/power.rs, ``print_thermal``): each sensor
"F75303_CPU:   41 C" (on an Intel board also Battery, PECI, F57397_VCCGT; on an AMD board APU; on a Framework 16
its GPU module's dGPU sensors; "Temp N" for one the tool has no name for), or the EC's word for one with no reading
(NotPresent, Error, NotPowered, NotCalibrated); then a line for each fan the EC has, in its order ("Fan Speed:  2165
RPM"; newer releases name it, "APU Fan:"; older ones "Fan L Speed" and "Fan R Speed" on a Framework 16; "65534 RPM
(Stalled)": the EC's mark of a stalled fan). The fans are the EC's: chip "cros_ec". A paste of several runs (a
setting, then ``--thermal`` again) is read as a sequence: a sensor met again starts the next run."""

from __future__ import annotations

import re

from ..facts import Reading
from .ectool import CHIP

# the sensors the tool names on Framework's boards (power.rs print_thermal): one of them tells its output apart
_FRAMEWORK_SENSORS = re.compile(r"^\s*(?:F75303_\w+|F57397_VCCGT):", re.MULTILINE)
_SENSOR = re.compile(r"^\s*([A-Za-z][\w ]*?):?\s+(?:(-?\d+) C|(NotPresent|Error|NotPowered|NotCalibrated))\s*$")
_FAN = re.compile(r"^\s*([\w ]*?Fan( [LR])?(?: Speed)?):\s+(\d+) RPM( \(Stalled\))?\s*$")


def read(text: str) -> list[Reading]:
    """The readings of each run of the tool in ``text``: from the line that names it (or one of its sensors) to the
    first line that is none of its (another command's output is not its)."""
    found: list[Reading] = []
    snapshot, fans, inside = 0, 0, False
    seen: set[str] = set()
    for line in text.splitlines():
        sensor, fan = _SENSOR.match(line), _FAN.match(line)
        if "framework_tool" in line or _FRAMEWORK_SENSORS.match(line):
            inside = True
        elif not (sensor or fan or not line.strip() or line.lstrip().startswith("#")):
            inside = False
        if not inside:
            continue
        if sensor:
            label = sensor.group(1)
            if label in seen:  # the tool run again: its next reading
                snapshot, seen, fans = snapshot + 1, set(), 0
            seen.add(label)
            value = sensor.group(2)
            found.append(Reading(CHIP, label, None if value is None else float(value),
                                 f"{value} C" if value is not None else sensor.group(3), "c", None, snapshot))
        elif fan:
            side = (fan.group(2) or "").strip()
            fans = {"L": 1, "R": 2}.get(side, fans + 1)
            name = fan.group(1) if not fan.group(1).startswith("Fan") else f"Fan {side or fans}"
            found.append(Reading(CHIP, name, float(fan.group(3)), f"{fan.group(3)} RPM{fan.group(4) or ''}", "rpm",
                                 f"fan{fans}_input", snapshot))
    return found if any(r.unit == "rpm" for r in found) else []
