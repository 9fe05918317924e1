"""Each GPU as its tool printed it, made into facts: NVIDIA's ``--query-gpu`` fields and their kin (dmon, gpustat,
nvidia-smi -q -x, dcgm-exporter, read as those fields) into one ``GpuFact`` a card (its name, temperature and fan,
and the reasons it gives for slowing its clocks for heat); and each GPU's load (``GpuLoad``): NVIDIA's
utilization.gpu, power.draw and power.limit, an AMD card's share busy and power (rocm-smi's GPU%, power and PwrCap,
``rocm-smi -a``'s "GPU use (%)", amd-smi's GFX-Uti and power). The last snapshot's values, as the rest of a paste's
facts; a card's temperature in each snapshot is kept beside them."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..core.vocabulary import HEAT_REASONS, decode_clocks_event_reasons
from .build import smi_error
from .facts import GpuFact, GpuLoad, Reading

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


def gpus_of(readings: Iterable[Reading]) -> tuple[GpuFact, ...]:
    """A fact for each GPU that nvidia-smi's CSV names."""
    fields: dict[int, dict[str, Reading]] = {}
    heat: dict[int, list[float | None]] = {}  # each GPU's temperature in each snapshot
    for r in readings:
        if r.chip == "nvidia" and "gpu" in r.extra:
            fields.setdefault(int(r.extra["gpu"]), {})[r.label] = r
            heat.setdefault(int(r.extra["gpu"]), []).extend([r.value] if r.label == "temperature.gpu" else [])
    return tuple(GpuFact(index=i, name=str(next(iter(f.values())).extra.get("name") or "") or None,
                         temperature_c=_field(f, "temperature.gpu"), fan_percent=_field(f, "fan.speed"),
                         history=tuple(heat[i]) if len(heat[i]) > 1 else (),
                         fan_reported="fan.speed" not in f or f["fan.speed"].value is not None or
                         smi_error(f["fan.speed"]), fan_read="fan.speed" in f, heat_slowdown=_heat_reasons(f))
                 for i, f in sorted(fields.items()))


def _heat_reasons(fields: dict[str, Reading]) -> tuple[str, ...]:
    """The reasons for heat a row's clock event reasons hold: the mask's bits, or each reason's own "Active"."""
    mask = fields.get("reasons.active")
    active = decode_clocks_event_reasons(int(mask.value)) if mask is not None and mask.value is not None else \
        tuple(name.removeprefix("reasons.") for name, r in fields.items() if name.startswith("reasons.") and r.value)
    return tuple(r for r in active if r in HEAT_REASONS)


def _field(fields: dict[str, Reading], name: str) -> float | None:
    found = fields.get(name)
    return found.value if found is not None else None
