"""``@record``: a frozen dataclass whose comparison, hash and repr are written once, here.

``dataclass`` writes each method it generates as source text and compiles it when the class is created: six
methods for a frozen class, one ``exec`` each on Python 3.11 and 3.12. A one-shot answer creates some sixty frozen
classes before it prints, and compiling their methods was the largest part of its start (docs/PERFORMANCE.md,
"Where a one-shot's start goes"). ``__eq__``, ``__hash__`` and ``__repr__`` mean the same for every record (the
class, then the compared fields in order), so they are written once below and shared; ``dataclass`` still writes
each record's ``__init__`` and its frozen guards, which are particular to its fields.

A record behaves as ``@dataclass(frozen=True)`` does: equal to another of exactly its class with equal compared
fields, hashed on those fields, shown as ``Name(field=value, ...)``; ``replace``, ``fields`` and ``asdict`` work.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any, Callable, TypeVar, dataclass_transform

T = TypeVar("T")


def _nothing(_: object) -> tuple[()]:
    return ()


def _getter(names: tuple[str, ...]) -> Callable[[object], Any]:
    """The compared values of a record: a tuple, or the one value where there is one field (equal and hashed alike)."""
    return attrgetter(*names) if names else _nothing


def _eq(self: Any, other: Any) -> object:
    if other.__class__ is not self.__class__:
        return NotImplemented
    key = self._record_key
    return key(self) == key(other)


def _hash(self: Any) -> int:
    return hash(self._record_key(self))


def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._record_shown)
    return f"{self.__class__.__qualname__}({shown})"


@dataclass_transform(frozen_default=True)
def record(cls: type[T]) -> type[T]:
    """``cls`` as a frozen dataclass with the shared comparison, hash and repr."""
    made: Any = dataclass(frozen=True, eq=False, repr=False)(cls)
    declared = fields(made)
    made._record_key = staticmethod(_getter(tuple(f.name for f in declared if f.compare)))
    made._record_shown = tuple(f.name for f in declared if f.repr)
    made.__eq__, made.__hash__, made.__repr__ = _eq, _hash, _repr
    return cls
