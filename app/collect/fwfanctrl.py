"""What fw-fanctrl, a Framework laptop's fan daemon, is configured to do (``/etc/fw-fanctrl/config.json``), read into
fancontrol's ``Declared`` records.

Its configuration names strategies, each a ``speedCurve`` of ``{temp, speed}`` points, and which one it uses: the
``defaultStrategy`` on mains power, the ``strategyOnDischarging`` on battery where one is named (``fw-fanctrl use``
overrides both until ``reset``). Its FanController: the temperature it follows is the hottest of the embedded
controller's sensors (``ectool temps all``, readings at or below 0 left out; 50 °C where none reads), taken as the
lower of that and its average over the strategy's ``movingAverageInterval`` seconds; the duty is the line between the
two points around it (the first point's below the first, the last's above the last), set on the EC's fans with
``ectool fanduty`` every ``fanSpeedUpdateFrequency`` seconds. Its own log prints ``Strategy: 'lazy'``, ``Speed: 25%``
and its temperatures.
"""

from __future__ import annotations

from ..core.jsonvalue import Json, loads, member, members
from .daemonyaml import Read
from .fancontrol import Declared

DAEMON = "fw-fanctrl"
FOLLOWS = "the hottest of the embedded controller's sensors (ectool temps all), smoothed over a moving average"


def fwfanctrl(source: str) -> Read:
    """The curve of the strategy fw-fanctrl uses on mains power (and the one on battery, where it names another)."""
    config = _loaded(source)
    if not isinstance(config, dict):
        return Read((), "not a JSON object")
    strategies = member(config, "strategies")
    mains, battery = _text(member(config, "defaultStrategy")), _text(member(config, "strategyOnDischarging"))
    declared = []
    for name, on_battery in ((mains, False), (battery if battery != mains else None, True)):
        strategy = member(strategies, name) if name else None
        points = _points(member(strategy, "speedCurve")) if isinstance(strategy, dict) else ()
        if points:
            floor, curve = _rising(points)
            declared.append(Declared(chip="cros_ec", pwm="pwm1", source_chip="cros_ec", source=None, fans=(),
                                     curve=curve, floor_percent=floor, daemon=DAEMON, follows=FOLLOWS,
                                     strategy=name, on_battery=on_battery))
    return Read(tuple(declared), None if declared else "no strategy with a speed curve is named")


def _loaded(source: str) -> Json:
    """The configuration, pasted alone or among other text (a prompt, its ``cat`` line): the outermost braces."""
    start, end = source.find("{"), source.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        return loads(source[start:end + 1])
    except ValueError:
        return None


def _text(value: Json) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _points(curve: Json) -> tuple[tuple[float, float], ...]:
    found = []
    for point in members(curve):
        temp, speed = member(point, "temp"), member(point, "speed")
        if isinstance(temp, (int, float)) and isinstance(speed, (int, float)) and not isinstance(temp, bool) and \
                not isinstance(speed, bool) and 0 <= speed <= 100:
            found.append((float(temp), float(speed)))
    return tuple(sorted(found))


def _rising(points: tuple[tuple[float, float], ...]) -> tuple[float, tuple[tuple[float, float], ...]]:
    """(the duty below the curve's rise, the curve from where it starts to rise): a flat start (``0 °C: 15 %``,
    ``50 °C: 15 %``) is the floor the fan runs at below 50 °C."""
    floor = points[0][1]
    start = 0
    while start + 1 < len(points) and points[start + 1][1] == floor:
        start += 1
    return floor, points[start:]
