"""What thinkfan is configured to do, read into fancontrol's ``Declared`` records: the YAML of thinkfan.conf(5) and
the older syntax of thinkfan.conf.legacy(5) (``tp_fan /proc/acpi/ibm/fan``, ``hwmon /sys/.../temp1_input``,
``(level, low, high)`` lines), which thinkfan still reads where a file is not YAML.

What thinkfan's own documents and source say, and this reads so:
- a level's speed is, for a ThinkPad's fan (``tpacpi``), 0-7 or ``"level N"``, ``"level auto"``, ``"level
  full-speed"`` or ``"level disengaged"``; for a hwmon fan a pwm value 0-255 (thinkfan.conf(5), FAN SPEEDS). Level 7
  is the embedded controller's fastest regular level (100 % here); full-speed and disengaged run past it (100 % too);
  a number above 7 is read by thinkpad_acpi's bits (0x40 full speed, as the old ``127``; 0x80 auto: thinkpad_acpi.c
  ``fan_set_level``). ``"level auto"`` gives the fan back to its firmware for that level's range (thinkfan.conf(5):
  "gives control back to the firmware"): kept apart, as that range, never as a duty.
- a level starts at its lower bound (the highest of its lower limits in the detailed form; the first level's may be
  omitted: 0 °C) and ends at its upper bound; several fans take one speed each from a list, in their order, and a
  fan's own ``levels`` replace the global ones (thinkfan.conf(5), Fan Syntax).
- with no fan named thinkfan drives /proc/acpi/ibm/fan, with no sensor named it reads /proc/acpi/ibm/thermal
  (thinkfan's messages "Using default fan control in ..." and "Using default temperature inputs in ...").
- a configuration pasted among other text (a heading, the daemon's log) is read as app.collect.daemonyaml finds it.
A file that is neither declares nothing, and says why.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from ..core.jsonvalue import Json, member, members
from ..core.record import record
from ..core.vocabulary import pwm_percent
from ..fans.control_words import hottest_of
from .daemonyaml import Read, load_pasted, number, text_at
from .fancontrol import Declared

TPACPI_TOP_LEVEL = 7  # the embedded controller's fastest regular level
EC_FULL_SPEED_BIT, EC_AUTO_BIT = 0x40, 0x80  # thinkpad_acpi's TP_EC_FAN_FULLSPEED and TP_EC_FAN_AUTO
TPACPI_FAN = "/proc/acpi/ibm/fan"
AUTO = "auto"  # a level that hands the fan back to its firmware

_LEGACY_LEVEL = re.compile(r"^\s*[({]\s*(\"[^\"]*\"|-?\d+)\s*,?\s*(.*?)\s*[)}]\s*(?:#.*)?$")
_LEGACY_FAN = re.compile(r"^\s*(tp_fan|pwm_fan|fan)\s+(\S+)")
_LEGACY_SENSOR = re.compile(r"^\s*(hwmon|tp_thermal|sensor|nv_thermal|atasmart)\s+(\S+)")


@record
class Level:
    """One of thinkfan's levels: its speed as written (one per fan), and where it starts and ends (°C)."""

    speeds: tuple[str, ...]
    low: float
    high: float | None


def speed_percent(speed: str, ec: bool) -> float | str | None:
    """A level's speed as a duty (%), ``AUTO`` where it hands the fan to its firmware, None where it is not one."""
    word = speed.strip().strip('"').removeprefix("level").strip().lower()
    if word == "auto":
        return AUTO
    if word in ("full-speed", "disengaged"):
        return 100.0
    value = number(word)
    if value is None or not math.isfinite(value):
        return None
    if not ec:
        return pwm_percent(min(max(value, 0.0), 255.0))
    code = int(value)
    if 0 <= code <= TPACPI_TOP_LEVEL:
        return round(100.0 * code / TPACPI_TOP_LEVEL, 1)
    return 100.0 if code & EC_FULL_SPEED_BIT else AUTO if code & EC_AUTO_BIT else None


def declared(fans: Sequence[tuple[str, str]], sources: Sequence[str], levels: Sequence[Level],
             own: Mapping[int, Sequence[Level]] | None = None) -> Read:
    """One record per fan ((chip, pwm) in order): its steps as (°C, %) points, the range its firmware holds it."""
    follows = hottest_of(list(sources))
    out = []
    for index, (chip, pwm) in enumerate(fans):
        points: list[tuple[float, float]] = []
        firmware: tuple[float, float | None] | None = None
        for level in (own or {}).get(index) or levels:
            if not math.isfinite(level.low):
                continue  # no temperature: a level never reached
            speed = level.speeds[min(index, len(level.speeds) - 1)] if level.speeds else ""
            percent = speed_percent(speed, chip == "thinkpad")
            if percent == AUTO:
                firmware = firmware or (level.low, level.high)
            elif isinstance(percent, float):
                points.append((level.low, percent))
        out.append(Declared(chip=chip, pwm=pwm, source_chip=None, source=None, fans=(), curve=tuple(points),
                            floor_percent=points[0][1] if points else None, daemon="thinkfan", follows=follows,
                            follows_all=tuple(sources), firmware_c=firmware, stepped=True))
    return Read(tuple(out), None if out else "no fans declared")


def _highest(values: Json) -> float | None:
    """The highest of a limit's temperatures (one per sensor, ``_`` for one ignored), or of the one given."""
    found = [n for n in (number(v) for v in members(values) or [values]) if n is not None]
    return max(found) if found else None


def _yaml_levels(entries: Sequence[Json]) -> list[Level]:
    levels = []
    for entry in entries:
        if isinstance(entry, list) and len(entry) == 3:
            speed, low, high = entry[0], number(entry[1]), number(entry[2])
        elif isinstance(entry, dict):
            speed, low, high = member(entry, "speed"), _highest(member(entry, "lower_limit")), \
                _highest(member(entry, "upper_limit"))
        else:
            continue
        speeds = tuple(str(s) for s in members(speed)) if isinstance(speed, list) else (str(speed),)
        levels.append(Level(speeds, low if low is not None else 0.0, high))
    return levels


def _yaml_sources(sensors: Sequence[Json]) -> list[str]:
    named = []
    for sensor in sensors:
        if not isinstance(sensor, dict):
            continue
        if "nvml" in sensor:
            named.append(f"the NVIDIA GPU at {text_at(sensor, 'nvml')}")
        elif "tpacpi" in sensor:
            named.append("the embedded controller's sensors")
        else:
            name = text_at(sensor, "name") or text_at(sensor, "chip") or text_at(sensor, "hwmon") or "hwmon"
            indices = [str(i) for i in members(member(sensor, "indices") or member(sensor, "ids"))]
            named.append(f"{name} temp{','.join(indices)}" if indices else name)
    return named or ["the embedded controller's sensors"]


def _yaml_fan(fan: Json) -> tuple[str, str] | None:
    if not isinstance(fan, dict):
        return None
    if "tpacpi" in fan:  # the ThinkPad's one output drives every tachometer of the chip
        return "thinkpad", "pwm1"
    path = text_at(fan, "hwmon") or text_at(fan, "pwm") or ""
    indices = [str(i) for i in members(member(fan, "indices"))]
    pwm = f"pwm{indices[0]}" if indices else path.rsplit("/", 1)[-1] or "pwm1"
    return text_at(fan, "name") or "hwmon", pwm if pwm.startswith("pwm") else "pwm1"


def _from_yaml(text: str) -> Read:
    config, error = load_pasted(text)
    if config is None:
        return Read((), error)
    fans = [f for f in members(member(config, "fans")) if isinstance(f, dict)]
    named = [(n, f) for n, f in ((_yaml_fan(f), f) for f in fans) if n is not None]
    own = {i: _yaml_levels(members(member(f, "levels"))) for i, (_, f) in enumerate(named) if "levels" in f}
    if not named and not member(config, "levels"):
        return Read((), "no fans declared")
    return declared([n for n, _ in named] or [("thinkpad", "pwm1")],
                    _yaml_sources(members(member(config, "sensors"))),
                    _yaml_levels(members(member(config, "levels"))), own)


def _numbers(text: str) -> list[float]:
    return [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", text)]


def _legacy_level(match: re.Match[str]) -> Level | None:
    """``(level, low, high)`` or the complex ``{level (low ...) (high ...)}``: a level starts at its highest low."""
    rest = match.group(2)
    groups = re.findall(r"[({]([^(){}]*)[)}]", rest)
    if len(groups) >= 2:
        lows, highs = _numbers(groups[0]), _numbers(groups[1])
    else:
        bounds = _numbers(rest)
        lows, highs = bounds[:1], bounds[1:2]
    if not lows:
        return None
    return Level((match.group(1),), max(lows), max(highs) if highs else None)


def legacy(text: str) -> Read:
    """thinkfan.conf.legacy(5): its one fan (``tp_fan``, ``pwm_fan``), its sensors, its levels."""
    fan: tuple[str, str] | None = None
    sources, levels = [], []
    # a complex level written over several lines ({"level 1" newline (40 46) newline (55 58) newline }): one level
    text = re.sub(r"\{[^{}]*\}", lambda block: " ".join(block.group(0).split()), text)
    for line in text.split("\n"):
        if found := _LEGACY_FAN.match(line):
            path = found.group(2)
            fan = ("thinkpad", "pwm1") if found.group(1) == "tp_fan" or path.startswith("/proc/acpi/ibm") else \
                ("hwmon", path.rsplit("/", 1)[-1] if path.rsplit("/", 1)[-1].startswith("pwm") else "pwm1")
        elif found := _LEGACY_SENSOR.match(line):
            kind, path = found.groups()
            sources.append("the embedded controller's sensors" if kind == "tp_thermal" else
                           f"the NVIDIA GPU at {path}" if kind == "nv_thermal" else
                           "/".join(path.rstrip("/").split("/")[-2:]))
        elif (level := _LEGACY_LEVEL.match(line)) and (read := _legacy_level(level)):
            levels.append(read)
    if len(levels) < 2 and not (fan and levels):  # one level under a fan line: the fan held at it throughout
        return Read((), "not a thinkfan configuration: no levels")
    return declared([fan or ("thinkpad", "pwm1")], sources or ["the embedded controller's sensors"], levels)


def thinkfan(text: str) -> Read:
    """The fans a thinkfan configuration drives, each following the hottest of its sensors: YAML, else the legacy
    syntax (as thinkfan itself tries them)."""
    read = _from_yaml(text)
    if read.declared:
        return read
    old = legacy(text)
    return old if old.declared else read
