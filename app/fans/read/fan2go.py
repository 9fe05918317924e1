"""``fan2go detect``: under each ``> Platform: <chip>`` (older releases ``> <chip>``; NVIDIA cards ``> Device: ...``), a
``Fans`` table (Index, PWM Channel, RPM Channel, Label, RPM, PWM, Mode; older releases Index, Label, RPM, PWM, Auto)
and a ``Sensors`` table (Index, ``Label (tempN_input)``, Value in millidegrees, as hwmon gives it). Columns are found
by their header's words (fan2go's cmd/detect.go); ``N/A`` is kept as no reading. Mode is fan2go's name for the
channel's control: Auto (the chip's own automatic mode, pwm_enable 2 and up), Manual (1), Disabled (0: full speed).
"""

from __future__ import annotations

import re

from ..facts import Decision, Reading
from ..values import parse
from . import headed

# "> Platform: nct6798-isa-0290", "> nct6798-isa-0" (a reply's quote marks may have taken the ">")
_PLATFORM = re.compile(r"^\s*(?:>\s*)?(?:(?:Platform|Device):\s*(\S+)|([a-z0-9_]+-(?:isa|pci|acpi|virtual|platform|hid|"
                       r"i2c|usb)-[0-9a-f_]+))\s*$", re.IGNORECASE)
_SENSOR_ROW = re.compile(r"^\s*(\d+)\s+(.*?)\s+(-?\d+(?:\.\d+)?|N/A)\s*$")
_HEADER = re.compile(r"^\s*(Fans|Sensors)\s{2,}Index\s{2,}")
_MODES = {"auto": 2.0, "true": 2.0, "manual": 1.0, "disabled": 0.0}


def detect(text: str) -> list[Reading]:
    found: list[Reading] = []
    chip: str | None = None
    columns: headed.Spans = []
    table = ""
    for line in text.splitlines():
        platform = _PLATFORM.match(line)
        if platform:
            name = platform.group(1) or platform.group(2)
            chip, columns = re.sub(r"-(isa|pci|acpi|virtual|platform|hid|i2c|usb)-\w+$", "", name), []
            continue
        header = _HEADER.match(line)
        if header and chip is not None:
            table = header.group(1).lower()
            columns = headed.spans(line.lower(), r"\S+(?: \S+)*")  # "PWM Channel": one column
            continue
        if not columns or not line.strip():
            continue
        if table == "sensors":
            row = _SENSOR_ROW.match(line)
            found += _sensor(chip, row.group(1), row.group(2), row.group(3)) if row else []
            columns = columns if row else []
            continue
        cells = {name: line[start:end].strip() for name, start, end in columns}
        if not cells.get("index", "").isdigit():
            columns = []
            continue
        found += _fan(chip, cells)
    return found


def _fan(chip: str | None, cells: dict[str, str]) -> list[Reading]:
    channel = cells.get("rpm channel", "")
    number = channel if channel.isdigit() else cells.get("pwm channel", "") if cells.get("pwm channel", "").isdigit() \
        else cells["index"]
    given = cells.get("label", "")
    label = given if given and not re.fullmatch(r"hwmon\d+(/\w+)?", given) else f"fan{number}"
    readings = []
    rpm, _, raw = parse(cells.get("rpm", ""))
    raw = f"{raw} RPM" if rpm is not None else raw
    if cells.get("rpm"):
        readings.append(Reading(chip, label, rpm, raw, "rpm" if rpm is not None else None, f"fan{number}_input"))
    pwm, _, raw = parse(cells.get("pwm", ""))
    if pwm is not None:
        readings.append(Reading(chip, label, pwm, raw, None, f"pwm{number}"))
    mode = _MODES.get(cells.get("mode", cells.get("auto", "")).lower())
    if mode is not None:
        readings.append(Reading(chip, label, mode, cells.get("mode", cells.get("auto", "")), None,
                                f"pwm{number}_enable"))
    return readings


def _sensor(chip: str | None, index: str, text: str, value_text: str) -> list[Reading]:
    """One row of a Sensors table: "CPUTIN (temp2_input)" and its value in millidegrees."""
    named = re.fullmatch(r"(.*?)\s*\((temp\d+)_input\)", text)
    value, _, raw = parse(value_text)
    attr = f"{named.group(2)}_input" if named else None
    label = named.group(1) if named else text or f"temp{index}"
    if re.fullmatch(r"hwmon\d+(/\w+)?", label):  # a chip with no label files: fan2go names it by its folder
        label = named.group(2) if named else f"temp{index}"
    return [Reading(chip, label, value / 1000.0 if value is not None else None, raw,
                    "c" if value is not None else None, attr)]


# fan2go's debug log of each pass (its curves' Evaluate, its controller's setPwm): the sensor's moving average and the
# pwm (0-255) the curve asks for it, then the pwm it sets after its pwm map (the fan's usable values, measured or
# configured), older releases after the closest distinct value first
_EVALUATED = re.compile(r"Evaluating curve '([^']+)'\. Sensor '([^']+)' temp '(-?\d+(?:\.\d+)?)°'\. Desired PWM: (\d+)")
_SET = re.compile(r"Setting (?:target )?PWM of (\S+) to (\d+), (?:found closest distinct PWM value at \d+, )?applying "
                  r"PWM Map yields (\d+)")
PWM_TOP = 255.0


def log_readings(text: str) -> list[Reading]:
    """Each sensor's temperature as fan2go's curves logged evaluating it, a snapshot for each pass."""
    return [Reading("fan2go", m.group(2), float(m.group(3)), f"{m.group(3)}°C", "c", None, n)
            for n, m in enumerate(_EVALUATED.finditer(text))]


def decisions(text: str) -> tuple[Decision, ...]:
    """Each pwm fan2go set, after its map, as a duty, with the temperature its curve read just before it; ``why``
    "map" and the duty the curve asked where its map sent another pwm than the curve asked. Its log names no fan on
    a curve's line: a pwm set after two or more curves were evaluated (fans run their loops side by side) is paired
    with none."""
    found: list[Decision] = []
    pending: list[tuple[float, float]] = []
    for m in re.finditer(f"{_EVALUATED.pattern}|{_SET.pattern}", text):
        if m.group(1) is not None:
            pending.append((float(m.group(3)), float(m.group(4))))
            continue
        if len(pending) == 1:
            (celsius, curve), sent = pending[0], float(m.group(7))
            found.append(Decision("fan2go", celsius, 0.0, None, len(found), percent=round(sent / PWM_TOP * 100, 1),
                                  why="map" if sent != curve else "curve", what=m.group(5),
                                  asked=round(curve / PWM_TOP * 100, 1) if sent != curve else None))
        pending = []
    return tuple(found)
