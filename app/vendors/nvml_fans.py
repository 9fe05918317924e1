"""A GPU's fans through NVML, each read into the one ``Fan`` shape.

``nvmlDeviceGetNumFans`` counts fan controllers (0: a passively cooled card, whose heat the chassis fans carry).
Per controller: the speed NVML calls "intended" (% of the product's maximum, may pass 100), the target the driver
aims at, the control policy (0: the driver's temperature curve, 1: manual), and, once per GPU, the range a user may
set (its low end is the card's floor: 30 % on most GeForce and workstation blowers) and what the cooler cools.
The RPM comes for the first fan only (nvidia-ml-py asks ``nvmlDeviceGetFanSpeedRPM`` for fan 0).

Three states told apart: "N/A" (no fan: NotSupported, or a count of 0), "0 %" with a target of 0 (fan-stop: the
fan rests while the GPU is cool), and a speed at the bottom of the range (the floor). A call the driver does not
have is a missing value with its reason, never an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..core.fan import MAX_RPM, Fan, FanControl, checked
from ..core.model import frozen_map
from ..core.record import record

PASSIVELY_COOLED = "not supported: passively cooled GPU (no fan of its own; the chassis fans cool it)"
# nvmlCoolerInfo_t.target bits (nvml.h: NVML_THERMAL_COOLER_TARGET_*)
_COOLER_TARGETS = ((1 << 1, "the GPU"), (1 << 2, "its memory"), (1 << 3, "its power supply"))
_POLICIES: dict[int, tuple[FanControl, str]] = {
    0: ("automatic", "the driver's temperature curve (NVML fan policy 0)"),
    1: ("manual", "set by software (NVML fan policy manual: nvidia-settings or a fan tool)"),
}


class Getter(Protocol):
    """``Calls.get``: a value, or None with the reason recorded."""

    def __call__(self, unsupported: dict[str, str], metric: str, fn_name: str, *args: object) -> object: ...


@record
class FanStatics:
    """What does not change while the driver is loaded: the settable range and what the cooler cools."""

    floor_percent: float | None
    max_percent: float | None
    cools: str | None


def cools(target: int) -> str | None:
    """The words for a cooler's target bitmask (GPU=2, memory=4, power supply=8)."""
    parts = [words for bit, words in _COOLER_TARGETS if target & bit]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def read_statics(get: Getter, handle: object) -> FanStatics:
    """The range a user may set (its low end is the idle floor) and the cooler's target."""
    scratch: dict[str, str] = {}
    limits = get(scratch, "floor", "nvmlDeviceGetMinMaxFanSpeed", handle)
    low, high = (float(limits[0]), float(limits[1])) if isinstance(limits, (list, tuple)) else (None, None)
    info = get(scratch, "cools", "nvmlDeviceGetCoolerInfo", handle)
    target = int(info[1]) if isinstance(info, (list, tuple)) and len(info) > 1 else 0
    return FanStatics(floor_percent=low if low else None, max_percent=high, cools=cools(target) or "the GPU")


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


def read_fans(get: Getter, handle: object, gpu_index: int, count: int | None, statics: FanStatics,
              u: dict[str, str]) -> tuple[Fan, ...]:
    """Each fan controller of one GPU; ``u`` gets the GPU-level reason when there are none."""
    if count == 0:
        u["fan_speed_percent"] = PASSIVELY_COOLED
        return ()
    if count is None:  # an old driver without nvmlDeviceGetNumFans: fan 0 through the old call
        speed = _number(get(u, "fan_speed_percent", "nvmlDeviceGetFanSpeed", handle))
        if speed is None:
            return ()
        u.pop("fan_speed_percent", None)
        return (_fan(gpu_index, 0, speed, None, None, None, statics, {}),)
    fans = []
    for n in range(count):
        why: dict[str, str] = {}
        speed = _number(get(why, "percent", "nvmlDeviceGetFanSpeed_v2", handle, n))
        target = _number(get(why, "target_percent", "nvmlDeviceGetTargetFanSpeed", handle, n))
        policy = get(why, "control", "nvmlDeviceGetFanControlPolicy_v2", handle, n)
        rpm = _number(get(why, "rpm", "nvmlDeviceGetFanSpeedRPM", handle)) if n == 0 else None
        if n:
            why["rpm"] = "not reported: NVML gives the RPM of the first fan only"
        fans.append(_fan(gpu_index, n, speed, target, policy if isinstance(policy, int) else None, rpm, statics,
                         why))
    if any(f.percent is not None for f in fans):
        u.pop("fan_speed_percent", None)
    elif fans:
        u["fan_speed_percent"] = fans[0].unsupported.get("percent", "not reported")
    return tuple(fans)


def _fan(gpu_index: int, n: int, speed: float | None, target: float | None, policy: int | None, rpm: float | None,
         statics: FanStatics, why: dict[str, str]) -> Fan:
    top = max(100.0, statics.max_percent or 100.0)  # NVML's intended speed may pass 100 on some products
    speed = checked(speed, 0.0, top, "NVML's fan speed", why, "percent")
    target = checked(target, 0.0, top, "NVML's target fan speed", why, "target_percent")
    rpm = checked(rpm, 0.0, MAX_RPM, "NVML's fan RPM", why, "rpm")
    control: FanControl = "unknown"
    controller: str | None = None
    if policy in _POLICIES:
        control, controller = _POLICIES[policy]
    # a card that answers 0 % with no target may be a passive card that reports a number anyway (an A10G says "0 %"):
    # whether a 0 % is fan-stop is the fan wing's to judge, with the card's temperature
    if speed == 0 and target is None:
        why.setdefault("stopped", "0 % with no target: fan-stop, or a passive card that reports 0 %")
    return Fan(id=f"nvml:{gpu_index}/fan{n}", chip=f"GPU {gpu_index}", channel=n, label=None,
               rpm=round(rpm) if rpm is not None else None, percent=speed, target_percent=target,
               floor_percent=statics.floor_percent, control=control, controller=controller,
               source="GPU", source_from="design", curve=(), gpu_index=gpu_index, cools=statics.cools,
               unsupported=frozen_map(why))



class _Asleep(Protocol):
    def asleep(self) -> bool: ...


class FanGpu(Protocol):
    """What ``fans_of`` needs of an open GPU (the NVIDIA backend's own record of it)."""

    @property
    def index(self) -> int: ...
    @property
    def handle(self) -> object: ...
    @property
    def error(self) -> str | None: ...
    @property
    def num_fans(self) -> int | None: ...
    @property
    def fan_statics(self) -> FanStatics: ...
    @property
    def power(self) -> _Asleep | None: ...


def fans_of(get: Getter, gpus: Sequence[FanGpu]) -> tuple[Fan, ...]:
    """Every open, awake GPU's fans, read apart from the GPU's sample (on their own clock: a fan call that hangs
    holds only the fans). A GPU that sleeps is not called (a call would wake it, and spin its fan); a passive one
    (no fan) makes no call; a failed one is left to the sample, which says why."""
    fans: list[Fan] = []
    for gpu in gpus:
        if gpu.handle is None or gpu.error is not None or gpu.num_fans == 0:
            continue
        if gpu.power is not None and gpu.power.asleep():
            continue
        fans.extend(read_fans(get, gpu.handle, gpu.index, gpu.num_fans, gpu.fan_statics, {}))
    return tuple(fans)
