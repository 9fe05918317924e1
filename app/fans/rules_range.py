"""The rules of a fan at an end of its range: at its controller's floor (the lowest duty a card's firmware accepts from
a program or a curve, the lowest speed a Mac's SMC keeps its fans at: it idles there, nothing making it faster), or
at full under its controller's own curve while what it cools is hot (the curve at its top: the cooling can do no
more), or slow (a low duty, its controller's least speed) while what it cools is hot. Registered in
``app.fans.rules`` like the others."""

from __future__ import annotations

from collections.abc import Iterator

from .chips import chip
from .facts import FanFact, Machine, TempFact
from .rules import ABI, HOT_C, Hit, rule, source_of, there, turning
from .speeds import SLOW_DUTY, at_rpm_floor, at_top, held_at_floor


@rule("a firmware floor", 52, "Documentation/gpu/amdgpu/thermal.rst (fan_curve: OD_RANGE, the duty a point may ask "
      "for); NVAPI NV_GPU_CLIENT_FAN_COOLERS_STATUS (currentMinLevel); NVML nvmlDeviceGetMinMaxFanSpeed; "
      "nvidia-settings(1) GPUTargetFanSpeed range; "
      "drivers/hwmon/applesmc.c (fanN_min: the SMC's minimum speed, writable; macfanctld's control.c sets the speed "
      "by writing it, fanN_manual 0); liquidctl's kraken2.py, kraken3.py and asetek.py "
      "(a cooler's pump duty clamped to its minimum)")
def firmware_floor(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        facts = _duty_floor(machine, fan)
        if facts is not None:
            yield Hit("firmware-floor", (fan.key,), "known", facts)
        elif (held := held_at_floor(fan)) is not None:
            yield Hit("firmware-floor", (fan.key,), "likely", held)
    # the SMC's minimum speed, its own control's; beside a hot part a fan idling at its floor is not "nothing making
    # it faster": its controller is not raising it, which the other rules say
    floored = [fan for fan in machine.fans if at_rpm_floor(fan) and not _hot_source(machine, fan)]
    if floored:
        first = floored[0]
        yield Hit("firmware-floor", tuple(f.key for f in floored), "known",
                  {"floor_rpm": first.min_rpm or 0.0, "rpm": first.rpm or 0.0, "held": "floor",
                   "controller": first.controller, **({"max_rpm": first.max_rpm} if first.max_rpm else {})})


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


@rule("full speed while hot", 63, f"{ABI} (pwmN 255: full; pwmN_enable 2 and up: the chip's automatic curve, which "
      "rises with its temperature to its top); nct6775.rst (Smart Fan IV); amdgpu thermal.rst and NVML's automatic "
      "fan policy (the duty rises with the GPU's temperature)")
def full_while_hot(machine: Machine) -> Iterator[Hit]:
    """Fans at their top under their controller's own curve while what they cool is past HOT_C: the curve has
    nowhere higher to go (likely: the curve itself is not read)."""
    together: dict[str, tuple[TempFact, list[FanFact]]] = {}
    for fan in machine.fans:
        if not at_top(fan) or fan.controller in ("manual", "daemon", "none") or not there(fan) or not turning(fan):
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


@rule("a slow fan on a hot part", 64, f"{ABI} (pwmN, pwmN_enable 2: the chip's automatic curve); NVML "
      "nvmlDeviceGetTemperatureThreshold (the GPU's target temperature, which its automatic fan policy holds); "
      "amdgpu thermal.rst (fan_target_temperature); applesmc.c (fanN_min: the SMC's own least speed, F<n>Mn)")
def slow_while_hot(machine: Machine) -> Iterator[Hit]:
    floored: dict[str, tuple[TempFact, list[FanFact]]] = {}  # fans at their floor beside one hot part: one finding
    for fan in machine.fans:
        at_floor = fan.duty_percent is None and at_rpm_floor(fan)
        if (not at_floor and (fan.duty_percent is None or fan.duty_percent > SLOW_DUTY)) or \
                not turning_or_driven(fan) or chip(fan.chip).kind == "aio":
            continue
        source = _hot_part(machine, fan)
        if source is None:
            continue
        if at_floor:
            floored.setdefault(source.key, (source, []))[1].append(fan)
        else:
            yield Hit("slow-while-hot", (fan.key,), "possible",
                      {"duty": fan.duty_percent or 0.0, "source": source.key, "source_c": source.celsius or 0.0,
                       "controller": fan.controller})
    for source, fans in floored.values():
        yield Hit("slow-while-hot", tuple(f.key for f in fans), "possible",
                  {"rpm": fans[0].rpm or 0.0, "min": fans[0].min_rpm or 0.0, "source": source.key,
                   "source_c": source.celsius or 0.0, "controller": fans[0].controller})


def _hot_part(machine: Machine, fan: FanFact) -> TempFact | None:
    """What ``fan`` cools where it is a CPU's or a GPU's part at HOT_C or more (a GPU's fan: its card)."""
    source = source_of(machine, fan)
    if source is None or source.celsius is None or source.celsius < HOT_C:
        return None
    return source if fan.gpu is not None or chip(fan.chip).kind == "gpu" or source.role in ("cpu", "gpu") else None


def turning_or_driven(fan: FanFact) -> bool:
    """A fan that turns, or one whose speed is not read but whose duty is (NVML's, rocm-smi's): not a stopped one
    (that is "no cooling while hot", its own rule)."""
    return turning(fan) or (fan.rpm is None and fan.invalid is None and bool(fan.duty_percent))
