"""Tools that print one reading a line in a shape of their own, each read here into a label, a value's text, and
where given its chip and attribute: tlp-stat's ``CPU temp = 88 [°C]``, ectool's kelvin, ``acpi -t`` and ``-c``,
vcgencmd's ``temp=81.3'C``, Windows' ACPI zone in tenths of a kelvin, hddtemp's drives (tried before a path's
reading), and a label with its value two spaces on (glances' SENSORS section). The labelled-line walk
(``lines.read``) tries them in turn."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from ..facts import Reading


class Found(NamedTuple):
    label: str
    text: str
    chip: str | None = None
    attr: str | None = None


Reader = Callable[[str], Found | None]

# "CPU temp = 88 [°C]", "Fan speed = 4620 [/min]": a value and its unit in brackets (tlp-stat -t, tlp-stat -s)
_BRACKETED = re.compile(r"^([A-Za-z][\w .()/-]{0,40}?)\s+=\s+([+-]?\d+(?:\.\d+)?)\s*\[([^\]]{1,8})\]\s*$")
_BRACKET_UNITS = {"°c": "°C", "c": "°C", "/min": "RPM", "rpm": "RPM", "%": "%", "w": "W", "mw": "mW"}


def bracketed(line: str) -> Found | None:
    match = _BRACKETED.match(line)
    if match is None or match.group(3).lower() not in _BRACKET_UNITS:
        return None
    label = re.sub(r"\s+speed$", "", match.group(1).strip(), flags=re.IGNORECASE)  # tlp-stat's "Fan speed": a fan
    return Found(label, f"{match.group(2)} {_BRACKET_UNITS[match.group(3).lower()]}")


# "0: 352 K" (ectool temps: an embedded controller's sensors in kelvin; "(= 79 C)" after it on newer builds)
_KELVIN = re.compile(r"^(\d+|[A-Za-z][\w -]{0,30}?):\s+(\d+)\s*K\b")


def kelvin(line: str) -> Found | None:
    match = _KELVIN.match(line)
    if match is None or not 200 <= int(match.group(2)) <= 500:
        return None
    label = f"temp{match.group(1)}" if match.group(1).isdigit() else match.group(1).strip()
    return Found(label, f"{int(match.group(2)) - 273.15:.1f} C")


# acpi -t (acpi(1)): "Thermal 0: ok, 45.0 degrees C", the firmware's thermal zones
_ACPI = re.compile(r"^(Thermal \d+):\s*[\w ]+,\s*([+-]?\d+(?:\.\d+)?) degrees C\b")


def acpi(line: str) -> Found | None:
    match = _ACPI.match(line)
    return Found(match.group(1), f"{match.group(2)} C", "acpitz") if match else None


# acpi -c (acpi(1), in -V too): "Cooling 0: Fan 0 of 1", a kernel cooling device, its type, state and highest
# state; a fan's is its duty (as /sys/class/thermal's cooling_deviceN, app.fans.read.thermal); other types (Processor,
# LCD, intel_powerclamp) are no fan
_ACPI_COOLING = re.compile(r"^Cooling (\d+):\s*(\S*fan\S*)\s+(\d+) of (\d+)\s*$", re.IGNORECASE)


def acpi_cooling(line: str) -> Found | None:
    match = _ACPI_COOLING.match(line)
    if match is None or int(match.group(4)) <= 0:
        return None
    share = round(100.0 * int(match.group(3)) / int(match.group(4)), 1)
    return Found(match.group(2), f"{share} %", f"cooling_device{match.group(1)}", "cur_state")


# vcgencmd measure_temp (the Raspberry Pi firmware's tool): "temp=81.3'C", the SoC's own sensor, which the kernel's
# thermal zone "cpu_thermal" reads too
_SOC = re.compile(r"^temp=([+-]?\d+(?:\.\d+)?)'C$")


def soc(line: str) -> Found | None:
    match = _SOC.match(line)
    return Found("temp1", f"{match.group(1)} C", "cpu_thermal", "temp1_input") if match else None


# "Package id 0          93C", "cpu_fan           0RPM" (glances' SENSORS section): a label, two or more spaces (or a
# tab, as a table copied from a page gives its cells, or one "|" between two cells), and a value whose unit is
# written with it or up to two spaces after it (liquidctl's "Fan speed   576  rpm", its tree's glyphs cut by a
# grep). Tried only where no "label: value" pair was found on the line. Glances 4 writes a fan's speed as a whole
# number and "R" (its sensors plugin: SENSOR_FAN_UNIT = 'R', printed '{:.0f}{}'). Everest's and AIDA64's report
# ("Motherboard   38 °C  (100 °F)") writes a temperature in Celsius with the same in Fahrenheit after it: the
# Celsius value is read; its labels may start with the item's number ("1. CPU / 1. Kern").
_SPACED = re.compile(r"^((?:\d+\.\s)?[A-Za-z][\w .#()/-]{0,40}?)(?:\s*\|\s*|\s{2,}|\t)"
                     r"([+-]?\d+(?:\.\d+)?\s{0,2}(?:°C|°F|C|F|RPM|rpm)|[+-]?\d+R)"
                     r"(?:(?<=°C)\s+\([+-]?\d+(?:\.\d+)?\s?°F\))?$")


def spaced(line: str) -> Found | None:
    match = _SPACED.match(line)
    if match is None:
        return None
    label, value = match.group(1), match.group(2)
    if label.lower().endswith(" speed") and value.lower().endswith(("rpm", "r")):
        label = label[:-6]  # "Fan speed   576  rpm" (liquidctl's rows with their tree cut by a grep): the fan is "Fan"
    return Found(label, value[:-1] + " RPM" if value.endswith("R") else value)


# Windows' MSAcpi_ThermalZoneTemperature (PowerShell's Get-CimInstance): "CurrentTemperature : 3132", an ACPI
# thermal zone's temperature in tenths of a kelvin (Microsoft's documentation of the class)
_TENTHS_KELVIN = re.compile(r"^CurrentTemperature\s*:\s*(\d{4})\s*$")


def acpi_zone_tenths_kelvin(line: str) -> Found | None:
    match = _TENTHS_KELVIN.match(line)
    if match is None or not 2000 <= int(match.group(1)) <= 5000:
        return None
    return Found("ACPI thermal zone", f"{int(match.group(1)) / 10.0 - 273.15:.1f} C", "acpitz")


# the same class as PowerShell's table shows it ("| Select CurrentTemperature"): the property's name, a rule of dashes,
# then one value a zone; wmic's ("wmic /namespace:\\root\wmi PATH MSAcpi_ThermalZoneTemperature get
# CurrentTemperature") the same without the rule
_ZONE_TABLE = re.compile(r"^[ \t]*CurrentTemperature[ \t]*\r?\n(?:[ \t]*-{5,}[ \t]*\n)?"
                         r"((?:[ \t]*\d{4}[ \t]*(?:\n|$))+)", re.MULTILINE)


def acpi_zone_table(text: str) -> list[Reading]:
    """Each ACPI thermal zone of PowerShell's table of MSAcpi_ThermalZoneTemperature, in tenths of a kelvin."""
    values = [int(v) for m in _ZONE_TABLE.finditer(text) for v in m.group(1).split() if 2000 <= int(v) <= 5000]
    return [Reading("acpitz", "ACPI thermal zone" + (f" {n}" if len(values) > 1 else ""),
                    round(v / 10.0 - 273.15, 1), f"{v} (tenths of a kelvin)", "c")
            for n, v in enumerate(values)]


# hddtemp(8): "/dev/sda: WDC WD40EFRX-68N32N0: 52°C", a drive's temperature with its model between ("/dev/sdb: ST4000:
# drive is sleeping" and "S.M.A.R.T. not available" give none)
_HDDTEMP = re.compile(r"^(/dev/[\w/-]+):\s+.+?:\s+([+-]?\d+(?:\.\d+)?)\s*°?\s*([CF])$")


def hddtemp(line: str) -> Found | None:
    match = _HDDTEMP.match(line)
    return Found(match.group(1), f"{match.group(2)} °{match.group(3)}", "drivetemp") if match else None


# (hddtemp is not among them: the path reader tries it first, before a path's value)
LINES: tuple[Reader, ...] = (bracketed, kelvin, acpi, acpi_cooling, soc, acpi_zone_tenths_kelvin)
