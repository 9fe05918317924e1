"""The BSDs' sensors as ``sysctl`` prints them.

OpenBSD and NetBSD (``sysctl hw.sensors``): one sensor a line, ``hw.sensors.<device>.<type><n>=<value> <unit>``,
then `` (<description>)`` where the driver names it and ``, <status>`` where it judges it (OpenBSD's sysctl(8) and
sensor_attach(9): temp in degC, fan in RPM, read here; ``invalid`` for a reading the driver marks so). The device
is the driver with its unit number (``it0``, ``acpithinkpad0``, ``ipmi0``), the chip here.

FreeBSD: ``dev.cpu.N.temperature: 73.0C`` (coretemp(4), amdtemp(4)), ``hw.acpi.thermal.tzN.temperature: 51.1C``
(acpi_thermal(4)), a ThinkPad's ``dev.acpi_ibm.0.fan_speed`` (RPM), ``fan`` (1: the embedded controller's automatic
mode, 0: manual), ``fan_level`` (0-7, the level in manual mode) and ``thermal`` (its sensors, -1 or less for none)
(acpi_ibm(4)), and an Apple SMC's ``dev.asmc.0.fan.N.speed`` / ``targetspeed`` / ``minspeed`` / ``maxspeed`` and
``dev.asmc.0.temp.<key>`` (asmc(4)). Read only where a line names these trees: a bare ``name: value`` is the general
reader's."""

from __future__ import annotations

import re

from ..facts import Reading, Unit

_OPENBSD = re.compile(r"^\s*(?:hw\.sensors\.)?([a-z]+\d+)\.(temp|fan)(\d+)=(\S+)(?:\s+(degC|RPM))?"
                      r"(?:\s+\(([^)]*)\))?(?:,\s*(\w+))?")
_FREEBSD = re.compile(r"^\s*(dev\.cpu\.(\d+)\.temperature|hw\.acpi\.thermal\.(tz\d+)\.temperature|"
                      r"dev\.(?:amdtemp|coretemp|pchtherm)\.\d+\.[\w.]+|"
                      r"dev\.acpi_ibm\.\d+\.(fan_speed|fan_level|fan|thermal)|"
                      r"dev\.asmc\.\d+\.(fan\.(\d+)\.(speed|targetspeed|minspeed|maxspeed)|temp\.(\w+)))"
                      r"\s*[:=]\s*(.+?)\s*$")
_CELSIUS = re.compile(r"^(-?\d+(?:\.\d+)?)\s*C?$")
EC_LEVELS = 7  # acpi_ibm(4): fan_level 0 (off) to 7 (max), as thinkpad_acpi's levels


def read(text: str) -> list[Reading]:
    found = _openbsd(text)
    return found or _freebsd(text)


def _openbsd(text: str) -> list[Reading]:
    found = []
    for line in text.split("\n"):
        match = _OPENBSD.match(line)
        if match is None:
            continue
        device, kind, index, value, _unit, desc, status = match.groups()
        unit: Unit = "c" if kind == "temp" else "rpm"
        number = _number(value)
        attr = f"{kind}{index}_input"
        extra = {"status": status.lower()} if status else {}
        found.append(Reading(device, desc or f"{kind}{index}", number, value if number is None else
                             f"{value} {_unit or ''}".strip(), unit, attr, extra=extra))
    return found


def _number(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None  # "invalid": the driver's own "no reading"


def _freebsd(text: str) -> list[Reading]:
    found: list[Reading] = []
    ibm: dict[str, str] = {}
    for line in text.split("\n"):
        match = _FREEBSD.match(line)
        if match is None:
            continue
        name, cpu, zone, ibm_key, _asmc, fan, fan_key, smc_temp, value = match.groups()
        if ibm_key:
            ibm[ibm_key] = value
        elif fan:
            unit_attr = {"speed": "input", "targetspeed": "target", "minspeed": "min", "maxspeed": "max"}[fan_key]
            found.append(Reading("applesmc", f"fan{int(fan) + 1}", _number(value), f"{value} RPM", "rpm",
                                 f"fan{int(fan) + 1}_{unit_attr}"))
        elif (celsius := _CELSIUS.match(value)) is not None:
            chip = "applesmc" if smc_temp else "cpu" if cpu is not None else "acpitz" if zone else name.split(".")[1]
            label = smc_temp or (f"CPU {cpu}" if cpu is not None else zone or name.split(".", 3)[-1])
            found.append(Reading(chip, label, float(celsius.group(1)), value, "c"))
    return found + _thinkpad(ibm)


def _thinkpad(ibm: dict[str, str]) -> list[Reading]:
    """acpi_ibm(4)'s fan and sensors, as the ``thinkpad`` chip Linux's thinkpad_acpi gives the same EC."""
    found = []
    if (speed := ibm.get("fan_speed", "")).isdigit():
        found.append(Reading("thinkpad", "fan1", float(speed), f"{speed} RPM", "rpm", "fan1_input"))
    automatic = ibm.get("fan")
    if automatic in ("0", "1"):
        found.append(Reading("thinkpad", "fan1", 2.0 if automatic == "1" else 1.0, f"fan: {automatic}", None,
                             "pwm1_enable"))
    level = ibm.get("fan_level", "")
    if automatic == "0" and level.isdigit():  # the level is the fan's only in manual mode
        pwm = round(min(int(level), EC_LEVELS) * 255 / EC_LEVELS)
        found.append(Reading("thinkpad", "fan1", float(pwm), f"level {level}", None, "pwm1"))
    for n, word in enumerate(ibm.get("thermal", "").split(), start=1):
        if re.fullmatch(r"-?\d+", word) and int(word) > 0:  # -1 or less, 0: no sensor in that slot
            found.append(Reading("thinkpad", f"temp{n}", float(word), f"{word} °C", "c", f"temp{n}_input"))
    return found
