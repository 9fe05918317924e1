"""An NVIDIA Jetson's ``tegrastats`` lines and its fan's files.

tegrastats prints one line a sample: memory, each core's load, then each thermal sensor as ``<name>@<temp>C`` (the
SoC's CPU, GPU, PLL, AO, Tboard, Tdiode, tj ... as NVIDIA's Jetson Linux Developer Guide lists them under "Reported
Statistics") and the power rails. Each line is one snapshot. Two values are no readings: the PMIC sensor of the
Nano and Xavier reports 100 °C whatever its temperature (its thermal zone is a fixed value, as NVIDIA's forum answers
it), and a GPU that is powered off reads -256 °C on Orin (tegrastats' own placeholder): both are kept as raw text.

The fan of the older L4T releases is the pwm-fan device's ``/sys/devices/pwm-fan/target_pwm`` (what is asked, 0-255),
``cur_pwm`` (what it is driven at) and ``rpm_measured`` (its tachometer), as ``cat`` shows them in a shell session
(a path on its prompt line, its value on the next)."""

from __future__ import annotations

import itertools
import re

from ..facts import Reading

_LINE = re.compile(r"\bRAM \d+/\d+MB\b")
_TEMP = re.compile(r"(?<![\w@])([A-Za-z][\w-]{0,20})@(-?\d+(?:\.\d+)?)C\b")
_FAN_FILE = re.compile(r"(?:^|\s)/sys/devices/(?:platform/)?pwm-fan/(target_pwm|cur_pwm|rpm_measured)\s*$")
CHIP = "tegra"
FAN_CHIP = "pwm-fan"
FIXED_PMIC_C = 100.0  # the PMIC's zone reads this whatever its temperature
GPU_OFF_C = -256.0  # a powered-off GPU's reading in tegrastats
_ATTRS = {"cur_pwm": "pwm1", "target_pwm": "fan1_target", "rpm_measured": "fan1_input"}


def read(text: str) -> list[Reading]:
    lines = [line for line in text.split("\n") if _LINE.search(line) and len(_TEMP.findall(line)) >= 2]
    found = [r for snapshot, line in enumerate(lines) for r in _sample(line, snapshot)]
    return found + _fan(text) if found or "tegrastats" in text.lower() else []


def _sample(line: str, snapshot: int) -> list[Reading]:
    found = []
    for name, value in _TEMP.findall(line):
        celsius = float(value)
        placeholder = (name.upper() == "PMIC" and celsius == FIXED_PMIC_C) or celsius == GPU_OFF_C
        found.append(Reading(CHIP, name, None if placeholder else celsius, f"{value}C", "c", snapshot=snapshot))
    return found


def _fan(text: str) -> list[Reading]:
    """The pwm-fan's files, each value the line after the ``cat`` that names it."""
    found = []
    lines = text.split("\n")
    for line, after in itertools.pairwise(lines):
        match = _FAN_FILE.search(line)
        value = after.strip()
        if match is None or not re.fullmatch(r"\d{1,6}", value):
            continue
        attr = _ATTRS[match.group(1)]
        if attr == "fan1_target":  # the duty asked, 0-255, as a share
            found.append(Reading(FAN_CHIP, "fan1", round(100.0 * int(value) / 255, 1), value, "%", attr))
        else:
            found.append(Reading(FAN_CHIP, "fan1", float(value), value, "rpm" if attr == "fan1_input" else None,
                                 attr))
    return found
