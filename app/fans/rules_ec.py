"""The rule of an embedded controller's own fan table, where a capture shows it (the Chrome EC's, through ``ectool
temps all``): which sensor the fans answer to and what it asks. Registered in ``app.fans.rules`` like the others."""

from __future__ import annotations

from collections.abc import Iterator

from . import ectable
from .facts import Machine
from .rules import Hit, rule

_SOURCE = ("Chrome EC common/thermal.c (thermal_control: every fan is asked for the highest of each sensor's "
           "thermal_fan_percent between its fan_off and fan_max), common/fan.c (fan_percent_to_rpm: 0 turns the fans "
           "off, 1-100 runs them from their lowest speed up; a board's own steps, CONFIG_FAN_RPM_CUSTOM), ectool's "
           "temps all (the ratio it prints is that share)")


@rule("an embedded controller's fan table", 63, _SOURCE)
def ec_table(machine: Machine) -> Iterator[Hit]:
    for owner in dict.fromkeys(t.chip for t in machine.temperatures if t.fan_max_c is not None):
        asked = ectable.asking(machine.temperatures, owner)
        if asked is None:
            continue
        percent, sensor = asked
        in_table = [t for t in machine.temperatures if t.chip == owner and ectable.share(t) is not None]
        facts: dict[str, float | str] = {"percent": percent, "sensor_c": sensor.celsius or 0.0,
                                         "fan_off_c": sensor.fan_off_c or 0.0, "fan_max_c": sensor.fan_max_c or 0.0,
                                         "sensors": len(in_table)}
        # the stock engine's share is the EC's own arithmetic on what it reads: likely, since a board may map it to
        # its own steps or replace the engine (CONFIG_CUSTOM_FAN_CONTROL), which a capture does not show
        yield Hit("ec-table", (sensor.key,), "likely", facts)
