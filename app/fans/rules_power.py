"""The rules of what a controller says of its fans' connectors: the rail its fans are powered from as it reads it,
and the fans it detects on them. Registered in ``app.fans.rules`` like the others."""

from __future__ import annotations

from collections.abc import Iterator

from .chips import chip
from .facts import FanFact, Machine
from .rules import Hit, not_turning, rule, turning
from .rules_state import stopped_by_hand

NO_RAIL = 0.5  # a rail read under half its nominal voltage powers no fan: a 12 V fan needs most of its 12 V to start


@rule("fans with no power", 93, "Documentation/hwmon/corsair-cpro.rst (a USB device; in0_input: the voltage on its "
      "SATA power connector's 12 V); liquidctl's corsair-commander-guide (the 3.3, 5 and 12 volt buses read); Intel's "
      "4-Wire PWM Controlled Fans Specification (pin 2: the fan's +12 V)")
def no_power(machine: Machine) -> Iterator[Hit]:
    for owner in _unpowered(machine):
        entry = chip(owner)
        fans = [f for f in machine.fans if f.chip == owner]
        yield Hit("no-power", tuple(f.key for f in fans if not_turning(f)), "likely",
                  {"volts": fans[0].supply_v or 0.0, "nominal": entry.fan_supply_v,
                   "detected": sum(1 for f in fans if f.present)})


@rule("a detected fan at 0 RPM", 89, "Documentation/hwmon/corsair-cpro.rst (fan[1-6]_label: the fan type as detected "
      "by the device); drivers/hwmon/corsair-cpro.c (get_fan_cnct); liquidctl's corsair-commander-guide and "
      "corsair-commander-core-guide (initialization detects the fans connected)")
def detected_still(machine: Machine) -> Iterator[Hit]:
    unpowered = _unpowered(machine)  # said by the rule above
    # a fan its device detects on its connector, at 0 and not stopped by hand (the fixed-duty rule says that one)
    still = [f for f in machine.fans if f.present and not_turning(f) and not stopped_by_hand(f) and
             f.chip not in unpowered]
    if still:
        yield Hit("detected-still", tuple(f.key for f in still), "likely", {"count": len(still)})


def _unpowered(machine: Machine) -> list[str | None]:
    """The controllers that read the rail they power their fans from under half its nominal voltage, none of their
    fans turning (a fan that turns proves power reaches them) and one at least not turning."""
    found = []
    for owner in dict.fromkeys(f.chip for f in machine.fans if _rail_low(f)):
        fans = [f for f in machine.fans if f.chip == owner]
        if any(map(not_turning, fans)) and not any(map(turning, fans)):
            found.append(owner)
    return found


def _rail_low(fan: FanFact) -> bool:
    return fan.supply_v is not None and fan.supply_v < NO_RAIL * chip(fan.chip).fan_supply_v
