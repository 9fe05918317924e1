"""The Chrome EC's thermal engine, as its source computes it (common/thermal.c, thermal_control): each sensor its
fan table uses asks for its share between its ``fan_off`` and ``fan_max`` temperatures (0 at or below fan_off, 100
above fan_max), and every fan is asked for the highest of those shares; a share of 0 turns the fans off, any other
runs them from their lowest speed up (common/fan.c, fan_percent_to_rpm). A board may replace that mapping with its
own steps (CONFIG_FAN_RPM_CUSTOM), whose first step starts at a share of up to about a third in the EC's boards."""

from __future__ import annotations

from collections.abc import Iterable

from .facts import FanFact, TempFact

CUSTOM_FIRST_STEP = 33.0  # the highest share a board's own fan steps start turning at, in the Chrome EC's boards


def share(temp: TempFact) -> float | None:
    """What a sensor asks of the fans (thermal_fan_percent), None for one the table does not use or with no reading."""
    if temp.celsius is None or temp.fan_off_c is None or temp.fan_max_c is None or temp.fan_max_c <= temp.fan_off_c:
        return None
    if temp.celsius < temp.fan_off_c:
        return 0.0
    if temp.celsius > temp.fan_max_c:
        return 100.0
    # the EC's integer arithmetic on whole kelvins; rounded first, so a reading converted to °C stays on its step
    return float(int(round(100 * (temp.celsius - temp.fan_off_c) / (temp.fan_max_c - temp.fan_off_c), 6)))


def asking(temps: Iterable[TempFact], chip_name: str | None) -> tuple[float, TempFact] | None:
    """The share the table of ``chip_name`` asks of its fans and the sensor asking it (of those asking the most, the
    one farthest past its fan_off), or None where no sensor of that chip is in a table."""
    shares = [(s, (t.celsius or 0.0) - (t.fan_off_c or 0.0), t) for t in temps
              if t.chip == chip_name and (s := share(t)) is not None]
    if not shares:
        return None
    top, _, sensor = max(shares, key=lambda x: (x[0], x[1]))  # at 0: the one nearest the temperature it starts at
    return top, sensor


def asked(fan: FanFact, least: float) -> tuple[float | None, bool]:
    """The duty a fan is asked for, at or above ``least``, and whether it is its embedded controller's table's: a
    duty read, or with none read the share its table asks (any share above 0 turns the Chrome EC's fans; a board's
    own steps may wait for up to CUSTOM_FIRST_STEP); None where nothing asks it to turn."""
    if fan.duty_percent is not None:
        return (fan.duty_percent if fan.duty_percent >= least else None), False
    if (fan.table_percent or 0.0) > 0:
        return fan.table_percent, True
    return None, False
