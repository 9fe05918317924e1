"""A Mac's System Management Controller as macOS tools print it.

smcFanControl's ``smc -f`` (smc-command/smc.c, ``SMCPrintFans``): ``Total fans in system: N``, then for each fan
``Fan #i:`` and its keys: ``Fan ID`` (its name, in newer builds), ``Actual speed`` (F<i>Ac; ``Current speed`` in
the builds for Apple silicon), ``Minimum speed``
(F<i>Mn), ``Maximum speed`` (F<i>Mx), ``Safe speed``, ``Target speed`` (F<i>Tg) and ``Mode`` (``auto``, or
``forced`` where the FS! key's bit for the fan is set: a program holds its target).

osx-cpu-temp (its smc.c): the CPU's temperature alone on a line (``61.8°C``, or °F with ``-F``), and with ``-f``
``Num fans: N`` then ``Fan i - <name> at <rpm> RPM (<p>%)``, where the share is of the fan's range above its
minimum, not a duty (it is not read).

The SMC is the Mac's embedded controller: its fans are the ``applesmc`` chip's, as Linux's driver names them."""

from __future__ import annotations

import re

from ..facts import Reading
from ..values import fahrenheit_to_celsius

CHIP = "applesmc"
_SMC_FAN = re.compile(r"^\s*Fan #(\d+):\s*$")
_SMC_KEY = re.compile(r"^\s*(Fan ID|Actual speed|Current speed|Minimum speed|Maximum speed|Target speed|Mode)\s*:\s*"
                      r"(\S.*?)\s*$")
_ATTRS = {"Actual speed": "input", "Current speed": "input", "Minimum speed": "min", "Maximum speed": "max",
          "Target speed": "target"}
_OSX_FAN = re.compile(r"^\s*Fan (\d+) - (.*?)\s+at (-?\d+(?:\.\d+)?) RPM \(-?\d+%\)\s*$")
_OSX_TEMP = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*°\s*([CF])\s*$")


def read(text: str) -> list[Reading]:
    if "Total fans in system" in text:
        return _smc(text)
    if "Num fans:" in text or "osx-cpu-temp" in text:
        return _osx_cpu_temp(text)
    return []


def _smc(text: str) -> list[Reading]:
    found: list[Reading] = []
    fan: int | None = None
    name: str | None = None
    for line in text.split("\n"):
        if (header := _SMC_FAN.match(line)) is not None:
            fan, name = int(header.group(1)) + 1, None
            continue
        key = _SMC_KEY.match(line)
        if fan is None or key is None:
            continue
        field, value = key.groups()
        label = name or f"fan{fan}"
        if field == "Fan ID":
            name = value
        elif field == "Mode":  # auto: the SMC's own control; forced: a program set its target
            mode = 2.0 if value.lower() == "auto" else 1.0
            found.append(Reading(CHIP, label, mode, value, None, f"pwm{fan}_enable"))
        elif re.fullmatch(r"-?\d+(?:\.\d+)?", value):
            found.append(Reading(CHIP, label, float(value), f"{value} RPM", "rpm", f"fan{fan}_{_ATTRS[field]}"))
    return found


def _osx_cpu_temp(text: str) -> list[Reading]:
    found = []
    for line in text.split("\n"):
        if (fan := _OSX_FAN.match(line)) is not None:
            n = int(fan.group(1)) + 1
            found.append(Reading(CHIP, fan.group(2) or f"fan{n}", float(fan.group(3)), f"{fan.group(3)} RPM", "rpm",
                                 f"fan{n}_input"))
        elif (temp := _OSX_TEMP.match(line)) is not None:
            value = float(temp.group(1))
            celsius = fahrenheit_to_celsius(value) if temp.group(2) == "F" else value
            found.append(Reading(CHIP, "CPU", celsius, line.strip(), "c"))
    return found
