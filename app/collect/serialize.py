"""JSON views of a Snapshot. Built once per tick by the collector; REST, Socket.IO and the page share it."""

from __future__ import annotations

import collections.abc
import dataclasses
import types
import typing
from typing import Callable

from ..core.fan import Fan
from ..core.jsonvalue import Json, JsonObject
from ..core.model import GpuSample, ProcessSample
from ..core.snapshot import Snapshot

# Derived values worth sending, per type: their properties' names (the JSON Schema reads each one's return type).
EXTRAS: dict[type, tuple[str, ...]] = {
    GpuSample: ("memory_percent", "fan_speed_percent", "fan_speeds_percent", "fan_rpm"),  # the fans' figures
    ProcessSample: ("gpu_memory_bytes", "sm_percent"),
}
_PLAIN = (str, int, float, bool, type(None))
_PLAIN_TYPES = frozenset(_PLAIN)
_CONVERTERS: dict[type, Callable[[object], JsonObject]] = {}


def _is_plain(hint: object) -> bool:
    """True for a type whose values are already JSON: int, str, float | None, a Literal of strings..."""
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return all(isinstance(v, _PLAIN) for v in typing.get_args(hint))
    if origin in (typing.Union, types.UnionType):
        return all(_is_plain(arg) for arg in typing.get_args(hint))
    return hint in _PLAIN_TYPES


def _field_expression(name: str, hint: object) -> str:
    """Python source that turns field ``name`` of ``v`` into JSON, as ``to_json`` would, but without
    recursing where the annotation says the value is plain (most fields of most model types)."""
    if _is_plain(hint):
        return f"v.{name}"
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    plain_tuple = (typing.get_origin(hint) is tuple and args and all(_is_plain(a) for a in args if a is not ...))
    if plain_tuple:
        return f"list(v.{name})"
    if typing.get_origin(hint) is collections.abc.Mapping and all(_is_plain(a) for a in args):
        return f"dict(v.{name})"
    return f"to_json(v.{name})"


def _converter(kind: type) -> Callable[[object], JsonObject]:
    """A function made once per model type that builds its JSON dict field by field (field names and
    plainness are read from the dataclass's annotations). On the collector's path once per tick.

    Generated code rather than a loop over the fields: kept on a device measurement (the codebase review, see
    ``app.core.model.evolve`` and docs/PERFORMANCE.md)."""
    hints = typing.get_type_hints(kind)
    items = [f"{f.name!r}: {_field_expression(f.name, hints[f.name])}" for f in dataclasses.fields(kind)]
    extras = "".join(f"    out[{name!r}] = _rounded(v.{name})\n" for name in EXTRAS.get(kind, ()))
    source = f"def convert(v):\n    out = {{{', '.join(items)}}}\n{extras}    return out\n"
    scope: dict[str, object] = {"to_json": to_json, "_rounded": _rounded}
    exec(compile(source, f"<to_json {kind.__name__}>", "exec"), scope)
    convert = scope["convert"]
    assert callable(convert)
    return convert  # made by exec above: its signature is this function's


def _rounded(value: object) -> Json:
    if isinstance(value, tuple):
        return [_rounded(v) for v in value]
    return round(value, 2) if isinstance(value, float) else value  # type: ignore[return-value]  # plain values only


def to_json(value: object) -> Json:
    """Plain JSON types from model objects (dataclasses, tuples, read-only mappings)."""
    if isinstance(value, _PLAIN):
        return value
    convert = _CONVERTERS.get(type(value))  # the common case first: a model type met before
    if convert is not None:
        return convert(value)
    if isinstance(value, (list, tuple)):  # before the dataclass check: tuples are common, and is_dataclass is not free
        return [to_json(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _object(value)
    if isinstance(value, collections.abc.Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    raise TypeError(f"{type(value).__name__} has no JSON form (model fields are plain values, dataclasses, "
                    "tuples, mappings)")


def snapshot_view(snapshot: Snapshot) -> JsonObject:
    """The full snapshot (``/api/gpu/metrics``, ``gpu_status``, ``gpu_status_update``)."""
    view = _object(snapshot)
    view.pop("alert_events", None)  # events travel as their own Socket.IO events
    return view


# The numbers a summary shows per GPU (its memory % and the reasons for those it lacks follow them).
GPU_HEADLINE = ("index", "name", "vendor", "uuid", "utilization_percent", "memory_used_bytes", "memory_total_bytes",
                "temperature_c", "fan_speed_percent", "power_w", "power_limit_w", "throttle_reasons", "error")


def gpu_headline(gpu: GpuSample) -> JsonObject:
    """The numbers a summary shows per GPU: GPU_HEADLINE, ``memory_percent`` and ``unsupported``."""
    out = {k: to_json(getattr(gpu, k)) for k in GPU_HEADLINE}
    out["memory_percent"] = round(gpu.memory_percent, 2) if gpu.memory_percent is not None else None
    out["unsupported"] = {k: v for k, v in gpu.unsupported.items() if k in GPU_HEADLINE}
    return out


FAN_SUMMARY = ("id", "name", "chip", "label", "rpm", "percent", "target_percent", "floor_percent", "state", "source",
               "source_c", "source_from", "confidence", "gpu_index", "alarm", "alarm_kind", "stale_s")


def fan_view(fan: Fan) -> JsonObject:
    """A fan in a summary: its speed, floor, state and source (``/api/fans`` has the rest)."""
    return {k: v for k, v in _object(fan).items() if k in FAN_SUMMARY}


def process_view(process: ProcessSample) -> JsonObject:
    return _object(process)


def _object(value: object) -> JsonObject:
    """A model object's (a dataclass's) JSON, by its type's converter, made on first use."""
    kind = type(value)
    convert = _CONVERTERS.get(kind)
    if convert is None:
        convert = _CONVERTERS[kind] = _converter(kind)
    return convert(value)
