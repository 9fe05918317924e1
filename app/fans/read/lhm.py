"""Windows hardware monitors' text reports. LibreHardwareMonitor's (and Open Hardware Monitor's) report, the text
FanControl and those tools save on Windows: under "Sensors", a tree of hardware and its sensors, each "+- Name : value
min max (/hardware/index/type/n)". The identifier names the sensor's kind (fan: RPM, control: a duty in %,
temperature: °C) and its hardware (lpc/nct6798d is the board's Super-I/O, gpu-nvidia an NVIDIA card, amdcpu and
intelcpu the CPU). A fan and the control of the same number on one chip are one channel. CPUID HWMonitor's saved
report: under "Hardware monitor<TAB><chip>", each sensor "<TAB><Kind> <n><TAB><value> <unit> [0x..] (<name>)", its
units degC (°C in CPU-Z's report of the same monitors), RPM and pc (a percentage); "Fan n" and "Fan PWM n" are one
channel."""

from __future__ import annotations

import re

from ..facts import Reading, Unit

_SENSOR = re.compile(r"\+-\s+(.+?)\s+:\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+\((/[^)]+)/(fan|control|temperature)/"
                     r"(\d+)\)")
# the hardware's identifier as the chip table names it
# (an NVIDIA card keeps its own name: "nvidia" is nvidia-smi's fields, which its readers read by name)
_CHIPS = (("gpu-nvidia", "gpu-nvidia"), ("gpu-amd", "amdgpu"), ("amdcpu", "k10temp"), ("intelcpu", "coretemp"))
_UNITS: dict[str, Unit] = {"fan": "rpm", "control": "%", "temperature": "c"}


def read(text: str) -> list[Reading]:
    found: list[Reading] = []
    for match in _SENSOR.finditer(text):
        label, value, _low, _high, hardware, kind, number = match.groups()
        chip = _chip(hardware)
        attr = {"fan": f"fan{int(number) + 1}_input", "control": f"pwm{int(number) + 1}"}.get(kind)
        found.append(Reading(chip, label, float(value), f"{value} {_UNITS[kind]}", _UNITS[kind], attr))
    return found


def _chip(hardware: str) -> str:
    parts = [p for p in hardware.split("/") if p and not p.isdigit()]
    head = parts[-1] if parts[0] == "lpc" and len(parts) > 1 else parts[0]
    return next((name for prefix, name in _CHIPS if head.startswith(prefix)), head)


_MONITOR = re.compile(r"^Hardware monitor\t+(.+?)\s*$")
_HW_SENSOR = re.compile(r"^\t(Temperature|Fan PWM|Fan|Pump)\s+(\d+)\t+(-?[\d.]+)\s*(degC|°C|RPM|pc)(?![\w])"
                        r"(?:.*\(([^)]*)\)\s*$)?")  # its name: the last parentheses (not the °F one)
_HW_UNITS: dict[str, Unit] = {"degC": "c", "°C": "c", "RPM": "rpm", "pc": "%"}


def hwmonitor(text: str) -> list[Reading]:
    found: list[Reading] = []
    chip: str | None = None
    for line in text.splitlines():
        monitor = _MONITOR.match(line)
        if monitor:  # "ITE IT8686", "Nuvoton NCT6798D": the chip table's name is the part number
            part = re.search(r"\b(nct\d+\w*|it\d{4}\w*|w83\w+|f71\w+)\b", monitor.group(1), re.IGNORECASE)
            chip = part.group(1).lower() if part else monitor.group(1)
            continue
        sensor = _HW_SENSOR.match(line)
        if sensor is None:
            continue
        kind, number, value, unit, name = sensor.groups()
        attr = {"Fan": f"fan{int(number) + 1}_input", "Pump": f"fan{int(number) + 1}_input",
                "Fan PWM": f"pwm{int(number) + 1}"}.get(kind)
        label = name or f"{kind} {number}"
        if kind == "Pump" and "pump" not in label.lower():
            label += " pump"
        found.append(Reading(chip, label, float(value), f"{value} {unit}", _HW_UNITS[unit], attr))
    return found
