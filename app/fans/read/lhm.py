"""LibreHardwareMonitor's (and Open Hardware Monitor's) report, the text FanControl and those tools save on Windows:
under "Sensors", a tree of hardware and its sensors, each "+- Name : value min max (/hardware/index/type/n)". The
identifier names the sensor's kind (fan: RPM, control: a duty in %, temperature: °C) and its hardware (lpc/nct6798d
is the board's Super-I/O, gpu-nvidia an NVIDIA card, amdcpu and intelcpu the CPU). A fan and the control of the same
number on one chip are one channel."""

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
