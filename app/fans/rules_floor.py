"""The rules of a controller's floor: the lowest duty a card's firmware accepts from a program or a curve, and the
lowest speed a Mac's SMC keeps its fans at. A fan at its floor idles there: nothing is making it spin faster.
Registered in ``app.fans.rules`` like the others."""

from __future__ import annotations

from collections.abc import Iterator

from .chips import chip
from .facts import FanFact, Machine
from .rules import Hit, rule, there

FLOOR_BAND = 0.05  # a controller that regulates a speed holds it within a few per cent of what it asks


@rule("a firmware floor", 52, "Documentation/gpu/amdgpu/thermal.rst (fan_curve: OD_RANGE, the duty a point may ask "
      "for); NVAPI NV_GPU_CLIENT_FAN_COOLERS_STATUS (currentMinLevel); nvidia-settings(1) GPUTargetFanSpeed range; "
      "drivers/hwmon/applesmc.c (fanN_min: the SMC's minimum speed)")
def firmware_floor(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        if not fan.floor_percent or not there(fan):
            continue
        facts: dict[str, float | str] = {"floor": fan.floor_percent, "controller": fan.controller}
        if fan.target_percent is not None and fan.target_percent < fan.floor_percent - 0.5 and \
                fan.controller == "manual":  # asked by hand for less than the driver accepts under manual control
            facts.update(held="asked-below", target=fan.target_percent)
        elif fan.duty_percent is not None:
            facts["duty"] = fan.duty_percent
            facts["held"] = "below" if fan.duty_percent < fan.floor_percent - 1 else \
                "floor" if fan.duty_percent <= fan.floor_percent + 1 else "above"
        if facts.get("held") != "above":
            yield Hit("firmware-floor", (fan.key,), "known", facts)
    floored = [fan for fan in machine.fans if _at_rpm_floor(fan)]  # the SMC's minimum speed, its own control's
    if floored:
        first = floored[0]
        yield Hit("firmware-floor", tuple(f.key for f in floored), "known",
                  {"floor_rpm": first.min_rpm or 0.0, "rpm": first.rpm or 0.0, "held": "floor",
                   "controller": first.controller})


def _at_rpm_floor(fan: FanFact) -> bool:
    """A fan at the speed its controller keeps it at, at least, where its chip's fanN_min is that speed."""
    floor = fan.min_rpm
    return chip(fan.chip).min_is_floor and bool(floor) and fan.rpm is not None and fan.controller != "manual" and \
        (floor or 0.0) * (1 - FLOOR_BAND) <= fan.rpm <= (floor or 0.0) * (1 + FLOOR_BAND)
