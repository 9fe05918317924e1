"""JSON Schemas of the API's answers, generated from the model's dataclasses (no hand-kept copy to drift).

``component_schemas()`` gives one schema per model type a snapshot holds, read from the dataclass annotations the
JSON view is built from (app.collect.serialize): the same fields, the same derived extras, the same types.
Endpoint answers are composed of them in app/web/openapi.py.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import types
import typing

from ..collect.serialize import EXTRAS
from ..core.jsonvalue import JsonObject
from ..core.snapshot import Snapshot

_PLAIN = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def _ref(kind: type) -> JsonObject:
    return {"$ref": f"#/components/schemas/{kind.__name__}"}


def schema_of(hint: object, found: dict[str, JsonObject]) -> JsonObject:
    """The JSON Schema of a value annotated ``hint``; dataclasses go into ``found`` and are referenced."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint in _PLAIN:
        return {"type": _PLAIN[hint]}
    if hint is typing.Any or hint is object:
        return {}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [schema_of(a, found) for a in args]}
    if origin is tuple:
        if len(args) == 2 and args[1] is ...:
            return {"type": "array", "items": schema_of(args[0], found)}
        items = [schema_of(a, found) for a in args]  # a fixed tuple: as plain items, read by every validator
        one = items[0] if all(i == items[0] for i in items) else {"anyOf": items}
        return {"type": "array", "items": one, "minItems": len(args), "maxItems": len(args)}
    if origin in (collections.abc.Mapping, dict):
        return {"type": "object", "additionalProperties": schema_of(args[1], found) if args else {}}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if hint.__name__ not in found:
            found[hint.__name__] = {}  # placeholder: a recursive type refers to itself
            found[hint.__name__] = _dataclass_schema(hint, found)
        return _ref(hint)
    raise TypeError(f"no JSON Schema for {hint!r}")


def _dataclass_schema(kind: type, found: dict[str, JsonObject]) -> JsonObject:
    hints = typing.get_type_hints(kind)
    names = [f.name for f in dataclasses.fields(kind)]
    properties = {name: schema_of(hints[name], found) for name in names}
    for extra in EXTRAS.get(kind, ()):  # a derived value: the type its property returns
        properties[extra] = schema_of(typing.get_type_hints(getattr(kind, extra).fget)["return"], found)
    doc = (kind.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
    return {"type": "object", "description": doc, "required": [*names, *EXTRAS.get(kind, ())],
            "properties": properties}


def component_schemas() -> dict[str, JsonObject]:
    """Every model type of a snapshot, by name."""
    found: dict[str, JsonObject] = {}
    schema_of(Snapshot, found)
    return found
