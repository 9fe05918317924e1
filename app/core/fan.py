"""A fan, as every source reads it (hwmon now; NVML and the BMC to follow): one shape, so the verdict, the page and
the metrics need not know where a fan was read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from .model import EMPTY

FanControl = Literal["full-speed", "manual", "automatic", "unknown"]


@dataclass(frozen=True)
class Fan:
    """One fan as the machine exposes it (hwmon today; NVML and the BMC are read into the same shape).

    ``percent`` is the duty the controller asks for (pwm/255, or NVML's intended %); ``rpm`` what the tachometer
    counts. ``controller`` says who sets the speed in words (``control`` the kind), ``source`` the temperature the
    controller declares it follows and ``curve`` its declared curve, (°C, %) points. ``dead`` says why a channel is
    left out (nothing on the header, no reading); ``unsupported`` why a value is missing."""

    id: str  # stable within a machine: "hwmon:nct6798/fan2"
    chip: str
    channel: int
    label: str | None
    rpm: int | None = None
    percent: float | None = None
    target_rpm: int | None = None
    min_rpm: int | None = None
    max_rpm: int | None = None
    floor_percent: float | None = None  # the lowest duty the controller runs it at while it runs (its idle floor)
    control: FanControl = "unknown"
    controller: str | None = None
    source: str | None = None
    source_c: float | None = None
    curve: tuple[tuple[float, float], ...] = ()
    stopped: bool = False  # at rest on purpose (zero-RPM idle, fan-stop), not failed
    alarm: str | None = None  # what its controller flags (a BMC's critical status: a failed fan)
    dead: str | None = None
    unsupported: Mapping[str, str] = field(default_factory=lambda: EMPTY)
