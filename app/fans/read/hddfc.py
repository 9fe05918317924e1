"""hddfancontrol's log (``journalctl -u hddfancontrol``): each pass logs the hottest of its drives' temperatures
("Maximum drive temperature: 30°C" in its Python releases, "Max drive temperature: 37°C" in its Rust ones) and the
speed it sets each fan to: "[Fan #1] Setting fan speed to 5%" (Python: logged before its minimum speed,
``--min-fan-speed-prct``, is applied to the pwm it writes) or "Fan /sys/class/hwmon/hwmon2/pwm1 speed set to 24.0%"
(Rust: the speed after it). A pass whose drives are all asleep logs no temperature ("All drives are in low power
state", "All drives are spun down"): its speed is not set for a reading, and is left out."""

from __future__ import annotations

import re

from ..facts import Decision, Reading

DAEMON = "hddfancontrol"
LABEL = "hottest drive"  # what its temperature line gives: the hottest of the drives it reads

_LINE = re.compile(r"(?:Maximum|Max) drive temperature: (-?\d+(?:\.\d+)?)\s*°?\s*C\b|"
                   r"(All drives are (?:in low power state|spun down))|"
                   r"\[(Fan #\d+)\] Setting fan speed to (\d+)%|"
                   r"\bFan (\S+) speed set to (\d+(?:\.\d+)?)%")


def _passes(text: str) -> list[tuple[int, float, str, float, bool]]:
    """(snapshot, temperature, fan, speed, logged before its minimum) of each speed set for a temperature read."""
    found: list[tuple[int, float, str, float, bool]] = []
    celsius: float | None = None
    snapshot = -1
    for m in _LINE.finditer(text):
        if m.group(1) is not None:
            celsius, snapshot = float(m.group(1)), snapshot + 1
        elif m.group(2) is not None:
            celsius = None
        elif celsius is not None:
            python = m.group(3) is not None
            fan, speed = (m.group(3), m.group(4)) if python else (_fan_name(m.group(5)), m.group(6))
            found.append((snapshot, celsius, fan, float(speed), python))
    return found


def _fan_name(pwm: str) -> str:
    """A Rust release's fan is its pwm file: "pwm1 (hwmon2)" for /sys/class/hwmon/hwmon2/pwm1."""
    parts = pwm.rstrip("/").split("/")
    return f"{parts[-1]} ({parts[-2]})" if len(parts) >= 2 and parts[-2].startswith("hwmon") else parts[-1]


def read(text: str) -> list[Reading]:
    """The hottest drive's temperature at each pass that set a speed for it, a snapshot each."""
    seen: dict[int, float] = {}
    for snapshot, celsius, *_ in _passes(text):
        seen.setdefault(snapshot, celsius)
    return [Reading(DAEMON, LABEL, celsius, f"{celsius:g}°C", "c", None, n)
            for n, (_, celsius) in enumerate(sorted(seen.items()))]


def decisions(text: str) -> tuple[Decision, ...]:
    """Each speed it logged setting, with the drive temperature it was set for and the fan it was set on ("before
    the minimum" where its release logs the speed before applying its minimum)."""
    return tuple(Decision(DAEMON, celsius, 0.0, None, n, percent=speed,
                          why="before-minimum" if python else "curve", what=fan)
                 for n, (_, celsius, fan, speed, python) in enumerate(_passes(text)))
