"""inxi's Sensors lines (inxi -Fxz, the listing forums ask for): "System Temperatures: cpu: 84.0 C mobo: N/A gpu:
amdgpu temp: 41.0 C" and "Fan Speeds (rpm): cpu: 0 fan-2: 1045 gpu: amdgpu fan: 0", and the line inxi wraps a long
fan list onto ("    fan-6: 0 fan-7: 0 gpu: nvidia fan: 0%"). Each reading is a "name: value" pair, a fan's unit in
its heading or after its value (an NVIDIA card's fan is a duty, "gpu: nvidia fan: 29%"), and a word value names the
driver of the reading after it (gpu: amdgpu), whose chip it is; an NVIDIA card's fan and temperature are named as
nvidia-smi's fields, so they are the card's. The labelled-line walk (``lines.read``) calls these on each line."""

from __future__ import annotations

import re
from typing import Protocol

from ..values import NUMBER

_HEADING = re.compile(r"\b(Fan Speeds \((rpm|%)\)|System Temperatures):\s*(.+)$", re.IGNORECASE)
_PAIR = re.compile(r"([A-Za-z][\w.-]*):\s+(\S+)(?:\s+([CF])\b)?")
_WRAPPED = re.compile(r"(?:[A-Za-z][\w.-]*:\s+\S+\s*)+")


class Walk(Protocol):
    inxi_fans: str | None  # the unit of the fan line in force, for the line inxi wraps it onto

    def add(self, label: str, text: str, column: int = 0, attr: str | None = None, chip: str | None = None,
            extra: dict[str, float | str] | None = None) -> None: ...


def heading(walk: Walk, stripped: str) -> bool:
    """Read a Sensors line of inxi's; False for any other line."""
    found = _HEADING.search(stripped)
    if found is None:
        return False
    walk.inxi_fans = found.group(2)
    _pairs(walk, found.group(3), found.group(2))
    return True


def wrapped(walk: Walk, stripped: str) -> bool:
    """Read the line a fan line was wrapped onto, where one is in force; any other line ends it."""
    if walk.inxi_fans is not None and _WRAPPED.fullmatch(stripped):
        _pairs(walk, stripped, walk.inxi_fans)
        return True
    walk.inxi_fans = None
    return False


def _pairs(walk: Walk, text: str, fans: str | None) -> None:
    driver = ""
    for label, value, scale in _PAIR.findall(text):
        percent = value.endswith("%") and re.fullmatch(NUMBER, value[:-1]) is not None
        if not percent and not re.fullmatch(NUMBER, value):
            driver = "" if value.upper() == "N/A" else value  # "gpu: amdgpu": the reading after it is that chip's
            continue
        card: dict[str, float | str] | None = {"gpu": 0.0} if driver == "nvidia" else None
        if fans:
            text_of = f"{value[:-1]} %" if percent else f"{value} {'RPM' if fans.lower() == 'rpm' else '%'}"
            name = "fan.speed" if card else label if re.search(r"fan|pump", label, re.IGNORECASE) else f"{label} fan"
            walk.add(name, text_of, chip=driver or None, extra=card)
        else:
            walk.add("temperature.gpu" if card else label, f"{value} °{scale or 'C'}", chip=driver or None,
                     extra=card)
        driver = ""
