"""``@record``: a frozen dataclass whose comparison, hash, repr and frozen guards are written once, here.

``dataclass`` writes each method it generates as source text and compiles it when the class is created: six
methods for a frozen class, one ``exec`` each on Python 3.11 and 3.12. A one-shot answer creates some sixty frozen
classes before it prints, and compiling their methods was the largest part of its start (docs/PERFORMANCE.md,
"Where a one-shot's start goes"). ``__eq__``, ``__hash__`` and ``__repr__`` mean the same for every record (the
class, then the compared fields in order), and so do the guards that refuse an assignment or a deletion: they are
written once below and shared. Only ``__init__`` is particular to a record's fields; it is written here, as
``dataclass`` writes a frozen class's (each field set through ``object.__setattr__``, defaults and default
factories, ``__post_init__``), and compiled once per class: one ``exec`` where ``dataclass`` took three.

A record behaves as ``@dataclass(frozen=True)`` does: equal to another of exactly its class with equal compared
fields, hashed on those fields, shown as ``Name(field=value, ...)``; ``replace``, ``fields`` and ``asdict`` work.
"""

from __future__ import annotations

from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, fields
from operator import attrgetter
from typing import Any, Callable, TypeVar, cast, dataclass_transform

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


def _setattr(self: Any, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


class _Factory:
    """The default of a field made by a factory: the factory is called when the argument is still this."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _init(cls: type, declared: tuple[Field[Any], ...]) -> Callable[..., None]:
    """``cls.__init__`` as ``dataclass(frozen=True)`` writes it: each field in order, a default where there is one,
    a factory's value where the argument was left out, then ``__post_init__``."""
    namespace: dict[str, object] = {"__set": object.__setattr__, "__factory": _FACTORY}
    parameters, lines = ["self"], []
    for f in declared:
        name = f.name
        if f.default_factory is not MISSING:
            namespace[f"__make_{name}"] = f.default_factory
            value = f"__make_{name}() if {name} is __factory else {name}" if f.init else f"__make_{name}()"
            parameters += [f"{name}=__factory"] if f.init else []
        elif not f.init:
            continue  # not an argument: its default is the class's attribute, as dataclass leaves it
        elif f.default is not MISSING:
            namespace[f"__default_{name}"] = f.default
            value = name
            parameters.append(f"{name}=__default_{name}")
        else:
            value = name
            parameters.append(name)
        lines.append(f"    __set(self, {name!r}, {value})")
    if hasattr(cls, "__post_init__"):
        lines.append("    self.__post_init__()")
    source = f"def __init__({', '.join(parameters)}):\n" + ("\n".join(lines) or "    pass") + "\n"
    exec(source, namespace)  # the source is built above from the class's own field names
    init = cast("Callable[..., None]", namespace["__init__"])
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


@dataclass_transform(frozen_default=True)
def record(cls: type[T]) -> type[T]:
    """``cls`` as a frozen dataclass with the shared comparison, hash, repr and guards, and its own ``__init__``."""
    made: Any = dataclass(init=False, eq=False, repr=False)(cls)
    declared = fields(made)
    if any(f.kw_only for f in declared) or len(made.__dataclass_fields__) != len(declared):
        raise TypeError(f"{cls.__qualname__}: a record takes no keyword-only field, ClassVar or InitVar")
    made.__init__ = _init(made, declared)
    made._record_key = staticmethod(_getter(tuple(f.name for f in declared if f.compare)))
    made._record_shown = tuple(f.name for f in declared if f.repr)
    made.__eq__, made.__hash__, made.__repr__ = _eq, _hash, _repr
    made.__setattr__, made.__delattr__ = _setattr, _delattr
    made.__dataclass_params__.init = made.__dataclass_params__.frozen = True  # what it is, as dataclass would say
    return cls
