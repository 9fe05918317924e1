"""An NVIDIA Jetson's ``tegrastats`` lines and its fan's files.

tegrastats prints one line a sample: memory, each core's load, then each thermal sensor as ``<name>@<temp>C`` (the
SoC's CPU, GPU, PLL, AO, Tboard, Tdiode, tj ... as NVIDIA's Jetson Linux Developer Guide lists them under "Reported
Statistics") and the power rails. Each line is one snapshot. Two values are no readings: the PMIC sensor of the
Nano and Xavier reports 100 °C whatever its temperature (its thermal zone is a fixed value, as NVIDIA's forum answers
it), and a GPU that is powered off reads -256 °C on Orin (tegrastats' own placeholder): both are kept as raw text.

The fan of the older L4T releases is the pwm-fan device's ``/sys/devices/pwm-fan/target_pwm`` (what is asked, 0-255),
``cur_pwm`` (what it is driven at) and ``rpm_measured`` (its tachometer), as ``cat`` shows them in a shell session
(a path on its prompt line, its value on the next). Where no ``cur_pwm`` is shown, ``target_pwm`` is the fan's duty as
well: the driver ramps the duty it drives to it (as a hwmon ``pwmN`` is the duty written, not one measured).

``jetson_clocks --show`` prints the fan too (NVIDIA's jetson_clocks script, its ``do_fan``): the older script
``Fan: PWM=`` (or ``Fan: speed=``) with ``target_pwm``'s value; the newer one ``FAN Dynamic Speed control=<state>
hwmonN_pwmM=<pwm>`` for each pwm of the fan's hwmon device, ``<state>`` what ``systemctl is-active nvfancontrol``
answers (releases after it print ``nvfancontrol``, ``kernel`` or ``disabled`` there). Its ``--fan`` stops
nvfancontrol, NVIDIA's fan service, and writes 255 to each fan's pwm, which most likely stays there until
nvfancontrol runs again: a fan at full with nvfancontrol not running is said as that event (``events``). The older
line is read only beside the script's other lines (``EMC MinFreq=``, ``NV Power Mode``): "Fan: PWM=" alone could be
any tool's."""

from __future__ import annotations

import itertools
import re

from ..facts import DaemonEvent, Reading
from ..speeds import FULL_DUTY

_LINE = re.compile(r"\bRAM \d+/\d+MB\b")
_TEMP = re.compile(r"(?<![\w@])([A-Za-z][\w-]{0,20})@(-?\d+(?:\.\d+)?)C\b")
_FAN_FILE = re.compile(r"(?:^|\s)/sys/devices/(?:platform/)?pwm-fan/(target_pwm|cur_pwm|rpm_measured)\s*$")
CHIP = "tegra"
FAN_CHIP = "pwm-fan"
FIXED_PMIC_C = 100.0  # the PMIC's zone reads this whatever its temperature
GPU_OFF_C = -256.0  # a powered-off GPU's reading in tegrastats
_ATTRS = {"cur_pwm": "pwm1", "target_pwm": "fan1_target", "rpm_measured": "fan1_input"}
# target_pwm, as the older script shows it
_OLD_SHOW = re.compile(r"^\s*Fan: (?:PWM|speed)=(\d{1,3})\s*$", re.MULTILINE)
_SHOWN_BESIDE = re.compile(r"^\s*(?:EMC MinFreq=|NV Power Mode:)", re.MULTILINE)  # the script's own lines
_SHOW = re.compile(r"^\s*FAN Dynamic Speed [Cc]ontrol=(\S+) (hwmon\d+)_pwm(\d)=(\d{1,3})\s*$", re.MULTILINE)
_RUNNING = ("active", "nvfancontrol", "kernel")  # a state in which something follows the temperatures
# who sets the fan in each of those states: nvfancontrol (a daemon's curve), or the kernel's thermal governor
_CONTROLLER = {"active": "daemon", "nvfancontrol": "daemon", "kernel": "kernel"}
SERVICE = "nvfancontrol"


def read(text: str) -> list[Reading]:
    lines = [line for line in text.split("\n") if _LINE.search(line) and len(_TEMP.findall(line)) >= 2]
    found = [r for snapshot, line in enumerate(lines) for r in _sample(line, snapshot)]
    return found + _fan(text) + _shown(text)


def _sample(line: str, snapshot: int) -> list[Reading]:
    found = []
    for name, value in _TEMP.findall(line):
        celsius = float(value)
        placeholder = (name.upper() == "PMIC" and celsius == FIXED_PMIC_C) or celsius == GPU_OFF_C
        found.append(Reading(CHIP, name, None if placeholder else celsius, f"{value}C", "c", snapshot=snapshot))
    return found


def _fan(text: str) -> list[Reading]:
    """The pwm-fan's files, each value the line after the ``cat`` that names it."""
    files: list[tuple[str, str]] = []
    for line, after in itertools.pairwise(text.split("\n")):
        match = _FAN_FILE.search(line)
        value = after.strip()
        if match is not None and re.fullmatch(r"\d{1,6}", value):
            files.append((_ATTRS[match.group(1)], value))
    driven = any(attr == "pwm1" for attr, _ in files)
    found = []
    for attr, value in files:
        if attr == "fan1_target":
            found += _asked(value, driven)
        else:
            found.append(Reading(FAN_CHIP, "fan1", float(value), value, "rpm" if attr == "fan1_input" else None,
                                 attr))
    return found


def _asked(value: str, driven: bool) -> list[Reading]:
    """target_pwm (0-255) as the share asked; the fan's duty too where its driven duty (cur_pwm) is not read."""
    share = round(100.0 * int(value) / 255, 1)
    asked = Reading(FAN_CHIP, "fan1", share, value, "%", "fan1_target")
    return [asked] if driven else [asked, Reading(FAN_CHIP, "fan1", float(value), value, None, "pwm1")]


def _shown(text: str) -> list[Reading]:
    """The fan's lines of jetson_clocks --show: target_pwm (the older script) or each pwm of its hwmon device."""
    found = [r for m in _OLD_SHOW.finditer(text) for r in _asked(m.group(1), False)] \
        if _SHOWN_BESIDE.search(text) else []
    return found + [Reading(_chip(text, m.group(2)), f"fan{m.group(3)}", float(m.group(4)), m.group(4), None,
                            f"pwm{m.group(3)}", extra={"controller": _CONTROLLER.get(m.group(1).lower(), "unknown")})
                    for m in _SHOW.finditer(text)]


def _chip(text: str, hwmon: str) -> str:
    """The pwm-fan, or, where jetson_clocks shows pwms of several hwmon devices (a fan controller beside it),
    each device by its hwmon name."""
    return FAN_CHIP if len({m.group(2) for m in _SHOW.finditer(text)}) == 1 else f"{FAN_CHIP} {hwmon}"


def events(text: str) -> tuple[DaemonEvent, ...]:
    """A fan jetson_clocks --show lists at full while nvfancontrol is not running: as its --fan leaves it."""
    found = []
    for m in _SHOW.finditer(text):
        state, pwm = m.group(1), int(m.group(4))
        if state.lower() not in _RUNNING and 100.0 * pwm / 255 >= FULL_DUTY:
            found.append(DaemonEvent(SERVICE, "not-running", state, f"{_chip(text, m.group(2))}/fan{m.group(3)}",
                                     (("pwm", float(pwm)),)))
    return tuple(found)
