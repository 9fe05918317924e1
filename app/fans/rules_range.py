"""The rules of a fan at an end of its range: at its controller's floor (the lowest duty a card's firmware accepts from
a program or a curve, the lowest speed a Mac's SMC keeps its fans at: it idles there, nothing making it faster), or
at full under its controller's own curve while what it cools is hot (the curve at its top: the cooling can do no
more). Registered in ``app.fans.rules`` like the others."""

from __future__ import annotations

from collections.abc import Iterator

from .chips import chip
from .facts import FanFact, Machine, TempFact
from .rules import ABI, HOT_C, Hit, rule, source_of, there, turning
from .rules_state import FULL_DUTY

FLOOR_BAND = 0.05  # a controller that regulates a speed holds it within a few per cent of what it asks


@rule("a firmware floor", 52, "Documentation/gpu/amdgpu/thermal.rst (fan_curve: OD_RANGE, the duty a point may ask "
      "for); NVAPI NV_GPU_CLIENT_FAN_COOLERS_STATUS (currentMinLevel); NVML nvmlDeviceGetMinMaxFanSpeed; "
      "nvidia-settings(1) GPUTargetFanSpeed range; "
      "drivers/hwmon/applesmc.c (fanN_min: the SMC's minimum speed); liquidctl's kraken2.py, kraken3.py and asetek.py "
      "(a cooler's pump duty clamped to its minimum)")
def firmware_floor(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        facts = _duty_floor(machine, fan)
        if facts is not None:
            yield Hit("firmware-floor", (fan.key,), "known", facts)
    # the SMC's minimum speed, its own control's; beside a hot part a fan idling at its floor is not "nothing making
    # it faster": its controller is not raising it, which the other rules say
    floored = [fan for fan in machine.fans if _at_rpm_floor(fan) and not _hot_source(machine, fan)]
    if floored:
        first = floored[0]
        yield Hit("firmware-floor", tuple(f.key for f in floored), "known",
                  {"floor_rpm": first.min_rpm or 0.0, "rpm": first.rpm or 0.0, "held": "floor",
                   "controller": first.controller})


def _duty_floor(machine: Machine, fan: FanFact) -> dict[str, float | str] | None:
    """What a fan's duty floor says of it: asked below it by hand, held at it, or under it (the card's own control);
    None above it, with no floor, or idling at it beside a hot part (its controller is not raising it)."""
    if not fan.floor_percent or not there(fan):
        return None
    facts: dict[str, float | str] = {"floor": fan.floor_percent, "controller": fan.controller}
    if fan.target_percent is not None and fan.target_percent < fan.floor_percent - 0.5 and \
            fan.controller == "manual":  # asked by hand for less than the driver accepts under manual control
        facts.update(held="asked-below", target=fan.target_percent)
        if fan.pump:  # a cooler's pump: its driver sends its floor in place of the duty asked
            facts["pump"] = "yes"
    elif fan.pump:
        return None  # a pump's floor is said only where a duty under it was asked
    elif fan.duty_percent is not None:
        facts["duty"] = fan.duty_percent
        facts["held"] = "below" if fan.duty_percent < fan.floor_percent - 1 else \
            "floor" if fan.duty_percent <= fan.floor_percent + 1 else "above"
    idle = facts.get("held") == "floor" and fan.controller in ("firmware", "bios", "ec", "bmc")
    return None if facts.get("held") == "above" or (idle and _hot_source(machine, fan)) else facts


def _hot_source(machine: Machine, fan: FanFact) -> bool:
    source = source_of(machine, fan)
    return source is not None and (source.celsius or 0.0) >= HOT_C


def _at_rpm_floor(fan: FanFact) -> bool:
    """A fan at the speed its controller keeps it at, at least, where its chip's fanN_min is that speed."""
    floor = fan.min_rpm
    return chip(fan.chip).min_is_floor and bool(floor) and fan.rpm is not None and fan.controller != "manual" and \
        (floor or 0.0) * (1 - FLOOR_BAND) <= fan.rpm <= (floor or 0.0) * (1 + FLOOR_BAND)


TOP_SHARE = 0.95  # a speed this near its maximum is the fan at its top, as FULL_DUTY is for a duty


@rule("full speed while hot", 63, f"{ABI} (pwmN 255: full; pwmN_enable 2 and up: the chip's automatic curve, which "
      "rises with its temperature to its top); nct6775.rst (Smart Fan IV); amdgpu thermal.rst and NVML's automatic "
      "fan policy (the duty rises with the GPU's temperature)")
def full_while_hot(machine: Machine) -> Iterator[Hit]:
    """Fans at their top under their controller's own curve while what they cool is past HOT_C: the curve has
    nowhere higher to go (likely: the curve itself is not read)."""
    together: dict[str, tuple[TempFact, list[FanFact]]] = {}
    for fan in machine.fans:
        if not _at_top(fan) or fan.controller in ("manual", "daemon", "none") or not there(fan) or not turning(fan):
            continue  # held there by hand, by a daemon or by no control: their own rules say why
        source = source_of(machine, fan)
        if source is not None and (source.celsius or 0.0) >= HOT_C:
            together.setdefault(source.key, (source, []))[1].append(fan)
    for source, fans in together.values():
        first = fans[0]
        facts: dict[str, float | str] = {"source": source.key, "source_c": source.celsius or 0.0}
        if first.duty_percent is not None:
            facts["duty"] = first.duty_percent
        elif first.rpm is not None:
            facts["rpm"] = first.rpm
        yield Hit("full-while-hot", tuple(f.key for f in fans), "likely", facts)


def _at_top(fan: FanFact) -> bool:
    if fan.duty_percent is not None:
        return fan.duty_percent >= FULL_DUTY
    return bool(fan.max_rpm) and fan.rpm is not None and fan.rpm >= (fan.max_rpm or 0.0) * TOP_SHARE
