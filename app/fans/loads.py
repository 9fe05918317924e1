"""Each GPU's load as a paste's tool printed it, made into one fact a card: NVIDIA's ``--query-gpu`` fields
(utilization.gpu, power.draw, power.limit; dmon's sm and pwr read as those) and an AMD card's share busy and power
(rocm-smi's GPU%, power and PwrCap, ``rocm-smi -a``'s "GPU use (%)", amd-smi's GFX-Uti and power). The last snapshot's
values, as the rest of a paste's facts."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .facts import GpuLoad, Reading

_AMD_LABEL = re.compile(r"GPU (\d+) (busy|power|power cap)")
_AMD_FIELDS = {"busy": "utilization.gpu", "power": "power.draw", "power cap": "power.limit"}


def loads_of(readings: Iterable[Reading]) -> tuple[GpuLoad, ...]:
    """A load for each GPU whose tool printed how busy it was or what it drew, by its vendor and index."""
    fields: dict[tuple[str, int], dict[str, float | None]] = {}
    for r in readings:
        if r.chip == "nvidia" and "gpu" in r.extra and r.label in ("utilization.gpu", "power.draw", "power.limit"):
            fields.setdefault(("nvidia", int(r.extra["gpu"])), {})[r.label] = r.value
        elif r.chip == "amdgpu" and (label := _AMD_LABEL.fullmatch(r.label)) and r.unit in ("%", "w"):
            fields.setdefault(("amd", int(label.group(1))), {})[_AMD_FIELDS[label.group(2)]] = r.value
    loads = (GpuLoad(index, vendor, busy_percent=f.get("utilization.gpu"), power_w=f.get("power.draw"),
                     power_limit_w=f.get("power.limit")) for (vendor, index), f in sorted(fields.items()))
    return tuple(load for load in loads if load.busy_percent is not None or load.power_w is not None)
