"""What a fan2go configuration (``/etc/fan2go/fan2go.yaml``) declares, read into fancontrol's ``Declared`` records.

Two schemas, as fan2go's own example configuration shows them over its history:
- the first: each fan names its ``platform`` and ``fan`` channel and the sensor ids it follows (``temps``); a
  sensor's ``min`` and ``max`` are where its curve starts and reaches full speed;
- the current: each fan names its controller (``hwmon: {platform, rpmChannel, pwmChannel}``, the pwm channel the
  rpm one where none is given) and a ``curve`` id; a sensor names its ``hwmon: {platform, index}``; a curve is
  ``linear`` over one sensor, by ``steps`` (``- 40: 0%``: the speed from that temperature on, 0 % stopped, 1 % the
  fan's minimum; a bare number a speed value of 0-255, 255 being 100 %) or from ``min`` (0 %) to ``max``
  (100 %), or a ``function`` (average, maximum ...) of other curves.
A fan that must never stop (``neverStop``, first ``never_stop``) turns at its minimum where its curve asks for 0 %:
fan2go replaces any value under MinPwm with MinPwm, which its curves write as 1 %; its 0 % points are read so.
A ``platform`` is a pattern of ``fan2go detect``'s controller names (``nct6798-isa-0``, ``corsaircpro-.*``): the
chip is its leading name, as hwmon names it.
"""

from __future__ import annotations

import re

from ..core.jsonvalue import Json, JsonObject, member, members
from .daemonyaml import Read, load_pasted, number, text_at
from .fancontrol import Declared

_CHIP = re.compile(r"[a-z0-9_]+", re.IGNORECASE)
Points = tuple[tuple[float, float], ...]


def fan2go(source: str) -> Read:
    """The fans a fan2go configuration drives, each with the sensors it follows and its curve."""
    config, error = load_pasted(source)
    if config is None:
        return Read((), error)
    fans = [f for f in members(member(config, "fans")) if isinstance(f, dict)]
    declared = [_current(config, f) if "hwmon" in f else _first(config, f) for f in fans]
    found = tuple(d for d in declared if d is not None)
    return Read(found, None if found else "no fans declared")


def _never_stops(fan: JsonObject) -> bool:
    return str(member(fan, "neverStop") or member(fan, "never_stop") or "").lower() in ("true", "yes")


def _kept_turning(points: Points, fan: JsonObject) -> Points:
    """``points`` with 0 % read as the fan's minimum (1 % on fan2go's scale) for a fan that never stops."""
    return tuple((c, max(p, 1.0)) for c, p in points) if _never_stops(fan) else points


def _chip(platform: str | None) -> str:
    found = _CHIP.match(platform or "")
    return found.group(0) if found else "hwmon"


def _first(config: JsonObject, fan: JsonObject) -> Declared:
    sensors = {text_at(s, "id"): s for s in members(member(config, "sensors")) if isinstance(s, dict)}
    channel = member(fan, "fan")
    followed = [sensors[str(t)] for t in members(member(fan, "temps")) if str(t) in sensors]
    first = followed[0] if followed else None
    curve: Points = ()
    if first is not None:
        low, high = number(member(first, "min")), number(member(first, "max"))
        if low is not None and high is not None:
            curve = _kept_turning(((low, 0.0), (high, 100.0)), fan)
    named = tuple(f"{text_at(s, 'platform')} {text_at(s, 'sensor')}" for s in followed)
    return Declared(chip=_chip(text_at(fan, "platform")), pwm=f"pwm{channel}",
                    source_chip=text_at(first, "platform") if first else None,
                    source=text_at(first, "sensor") if first else None, fans=(f"fan{channel}_input",), curve=curve,
                    floor_percent=None, daemon="fan2go", follows=", ".join(named) or None, follows_all=named)


def _current(config: JsonObject, fan: JsonObject) -> Declared | None:
    hwmon = member(fan, "hwmon")
    rpm = number(member(hwmon, "rpmChannel"))
    pwm = number(member(hwmon, "pwmChannel")) or rpm
    if pwm is None:
        return None
    sensors = {text_at(s, "id"): member(s, "hwmon") for s in members(member(config, "sensors")) if isinstance(s, dict)}
    curves = {text_at(c, "id"): c for c in members(member(config, "curves")) if isinstance(c, dict)}
    points, followed = _curve(curves, sensors, text_at(fan, "curve"), depth=0)
    points = _kept_turning(points, fan)
    function = member(curves.get(text_at(fan, "curve")), "function")
    return Declared(chip=_chip(text_at(hwmon, "platform")), pwm=f"pwm{int(pwm)}", source_chip=None, source=None,
                    fans=(f"fan{int(rpm or pwm)}_input",), curve=points,
                    floor_percent=points[0][1] if points else None, daemon="fan2go",
                    follows=", ".join(followed) or None, follows_all=tuple(followed),
                    combined=(text_at(function, "type") or "function") if isinstance(function, dict) else None)


def _share(speed: str) -> float | None:
    """A step's speed as a share: ``20%`` as written; a bare number is fan2go's speed value, 0-255 (its README: 0 and
    0 %, 1 and 1 % are the same, stopped and the fan's minimum; 255 is 100 %)."""
    value = number(speed.rstrip("%").strip())
    if value is None or speed.strip().endswith("%") or value <= 1:
        return value
    return round(100.0 * value / 255.0, 1)


MAX_NESTING = 8  # a function of curves of functions: real ones are one deep


def _curve(curves: dict[str | None, JsonObject], sensors: dict[str | None, Json], key: str | None,
           depth: int) -> tuple[Points, list[str]]:
    """A curve's (°C, %) points where it is linear over one sensor, and the sensors it follows."""
    curve = curves.get(key)
    if curve is None or depth > MAX_NESTING:
        return (), []
    linear = member(curve, "linear")
    if isinstance(linear, dict):
        sensor = sensors.get(text_at(linear, "sensor"))
        named = [f"{_chip(text_at(sensor, 'platform'))} temp{text_at(sensor, 'index') or ''}"] if sensor else []
        return _steps(linear), named
    function = member(curve, "function")
    followed: list[str] = []
    for inner in members(member(function, "curves")):
        followed += [s for s in _curve(curves, sensors, str(inner), depth + 1)[1] if s not in followed]
    return (), followed


def _steps(linear: JsonObject) -> Points:
    steps = members(member(linear, "steps"))
    if steps:
        points = []
        for step in steps:
            for celsius, speed in (step.items() if isinstance(step, dict) else ()):
                low, share = number(celsius), _share(str(speed))
                if low is not None and share is not None:
                    points.append((low, share))
        return tuple(sorted(points))
    low, high = number(member(linear, "min")), number(member(linear, "max"))
    return ((low, 0.0), (high, 100.0)) if low is not None and high is not None else ()
