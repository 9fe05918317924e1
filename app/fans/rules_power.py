"""The rules of what a controller says of its fans' connectors and asks of them: the rail its fans are powered from as
it reads it, the fans it detects on them, and a speed it asks (a target, an SMC's floor) of a fan that reads 0.
Registered in ``app.fans.rules`` like the others."""

from __future__ import annotations

from collections.abc import Iterator

from .chips import chip
from .facts import FanFact, Machine
from .rules import ABI, STALL_DUTY, Hit, not_turning, rule, turning
from .rules_state import stopped_by_hand
from .speeds import kept_turning

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


@rule("asked for a speed, not turning", 92, f"{ABI} (fanN_target: the desired speed; fanN_fault); applesmc.c "
      "(fanN_min: the SMC's own least speed, F<n>Mn); smcFanControl's smc -f (Target speed: the SMC's F<n>Tg)")
def target_not_met(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        if fan.fault:
            continue
        if fan.target_rpm and fan.target_rpm > 0 and fan.rpm == 0:
            yield Hit("target-not-met", (fan.key,), "known", {"target_rpm": fan.target_rpm})
        elif fan.target_percent and fan.target_percent >= STALL_DUTY and (fan.rpm == 0 or fan.duty_percent == 0):
            # NVML: the driver aims at a speed (its target) and the fan's own speed reads 0
            yield Hit("target-not-met", (fan.key,), "known", {"target_percent": fan.target_percent})
        elif fan.rpm == 0 and kept_turning(fan) and fan.controller != "manual":
            # a Mac's SMC keeps its fans at fanN_min or faster: a 0 under it is not a rest (likely: a model's floor
            # of 0 would be read as 0, so this is one of a floor above 0)
            yield Hit("target-not-met", (fan.key,), "likely", {"floor_rpm": fan.min_rpm or 0.0})
