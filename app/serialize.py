"""JSON views of a Snapshot. Built once per tick by the collector; REST, Socket.IO and the page share it."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from app.model import GpuSample, ProcessSample, Snapshot

# Derived values worth sending, per type: (name, property).
_EXTRAS: dict[type, tuple[str, ...]] = {
    GpuSample: ("memory_percent",),
    ProcessSample: ("gpu_memory_bytes", "sm_percent"),
}


_FIELDS: dict[type, tuple[str, ...]] = {}
_PLAIN = (str, int, float, bool, type(None))


def _fields(kind: type) -> tuple[str, ...]:
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind))
    return names


def to_json(value: Any) -> Any:
    """Plain JSON types from model objects (dataclasses, tuples, read-only mappings). On the collector's
    path once per tick: field names are looked up once per type."""
    if isinstance(value, _PLAIN):
        return value
    kind = type(value)
    if kind in _FIELDS or (dataclasses.is_dataclass(value) and not isinstance(value, type)):
        out = {name: to_json(getattr(value, name)) for name in _fields(kind)}
        for name in _EXTRAS.get(kind, ()):
            extra = getattr(value, name)
            out[name] = round(extra, 2) if isinstance(extra, float) else extra
        return out
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    return value


def snapshot_view(snapshot: Snapshot) -> dict[str, Any]:
    """The full snapshot (``/api/gpu/metrics``, ``gpu_status``, ``gpu_status_update``)."""
    view = to_json(snapshot)
    view.pop("alert_events", None)  # events travel as their own Socket.IO events
    return view


def gpu_headline(gpu: GpuSample) -> dict[str, Any]:
    """The numbers a summary shows per GPU."""
    keys = ("index", "name", "vendor", "uuid", "utilization_percent", "memory_used_bytes", "memory_total_bytes",
            "temperature_c", "fan_speed_percent", "power_w", "power_limit_w", "throttle_reasons", "error")
    out = {k: to_json(getattr(gpu, k)) for k in keys}
    out["memory_percent"] = round(gpu.memory_percent, 2) if gpu.memory_percent is not None else None
    out["unsupported"] = {k: v for k, v in gpu.unsupported.items() if k in keys}
    return out


def process_view(process: ProcessSample) -> dict[str, Any]:
    return to_json(process)
