"""``@record``: a frozen dataclass whose comparison, hash, repr and frozen guards are written once, here; and
``@holder``: a mutable holder of state (``@dataclass(eq=False)``) made the same way.

``dataclass`` writes each method it generates as source text and compiles it when the class is created: six
methods for a frozen class, one ``exec`` each on Python 3.11 and 3.12, after reading each annotation for a ClassVar
or an InitVar. A one-shot answer defines some sixty such classes before it prints.

Why not the standard ``dataclass``, which every maintainer knows: it was measured, and the difference is the user's
wait. ``benchmarks/oneshot_cpu.py`` with a variant whose ``record`` is ``dataclass(frozen=True)`` and whose ``holder``
is ``dataclass(eq=False)`` finds a one-shot answer spending about twice the CPU before it prints (the figure is in
docs/PERFORMANCE.md); ``fanwhy top``'s first frame pays the same. So the one unusual module stays, held to behave
exactly as ``dataclass`` does (tests/unit/test_record.py compares them). ``__eq__``, ``__hash__`` and ``__repr__`` mean
the same for every record (the class, then the compared fields in order), and so do the guards that refuse an assignment
or a deletion: they are written once below and shared. The fields are declared here (``dataclasses.Field`` objects, as
dataclass makes them, so ``fields``, ``replace`` and ``asdict`` work), and a record refuses what would need dataclass's
general work: inherited fields, ClassVar, InitVar, keyword-only fields. Only ``__init__`` is particular to a class's
fields; it is written as ``dataclass`` writes a frozen class's (each field set through ``object.__setattr__``, defaults
and default factories, ``__post_init__``) and compiled once a few records of the class were made (until then a general
``__init__`` sets the same fields in the same order): a class made only a few times in a run, or never, compiles none.

A record behaves as ``@dataclass(frozen=True)`` does: equal to another of exactly its class with equal compared
fields, hashed on those fields, shown as ``Name(field=value, ...)``. A state holder behaves as
``@dataclass(eq=False)`` does: assignable, equal only to itself. Until its own ``__init__`` is compiled,
``inspect.signature`` of the class reads ``(*args, **kwargs)``.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, field
from operator import attrgetter
from typing import Any, Callable, TypeVar, cast, dataclass_transform

T = TypeVar("T")
AnyField = Field[Any]  # a dataclass field of any type


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


def _init(cls: type, declared: tuple[AnyField, ...]) -> Callable[..., None]:
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


@dataclass(init=False, repr=False, eq=False)  # nothing generated: only its __dataclass_params__ is used
class _Params:
    """The source of dataclass's own description of a class, which every record and every state holder shares."""


_FIELD = dataclasses._FIELD  # type: ignore[attr-defined]  # dataclass's mark of a field (not a ClassVar, an InitVar)
# annotations that make a dataclass attribute something other than a field (written as text, as in these modules)
_NOT_FIELDS = ("ClassVar", "typing.ClassVar", "InitVar", "dataclasses.InitVar", "KW_ONLY", "dataclasses.KW_ONLY")


def _declared(cls: type) -> tuple[AnyField, ...]:
    """The fields of ``cls``, declared as ``dataclass`` declares them (each ``Field`` with its name, type and the
    class attribute dataclass leaves: the default, or none for a factory's field), without its work for what a
    record refuses: inherited fields, ClassVar, InitVar and keyword-only fields raise TypeError; a mutable default,
    or a field without a default after one with, raises as dataclass raises."""
    if any("__dataclass_fields__" in vars(base) for base in cls.__mro__[1:]):
        raise TypeError(f"{cls.__qualname__}: a record inherits no fields")
    declared: list[AnyField] = []
    defaulted = ""  # the first argument of __init__ with a default
    for name, kind in inspect.get_annotations(cls).items():  # its own, as text (not evaluated)
        if not isinstance(kind, str) or kind.startswith(_NOT_FIELDS):
            raise TypeError(f"{cls.__qualname__}.{name}: a record takes no keyword-only field, ClassVar or InitVar "
                            "(and its annotations are text: from __future__ import annotations)")
        default = cls.__dict__.get(name, MISSING)
        made = default if isinstance(default, Field) else cast(AnyField, field(default=default))
        if made.kw_only is True:
            raise TypeError(f"{cls.__qualname__}.{name}: a record takes no keyword-only field, ClassVar or InitVar")
        if made.default is not MISSING and made.default.__class__.__hash__ is None:
            raise ValueError(f"mutable default {type(made.default)} for field {name} is not allowed: use "
                             "default_factory")
        if made.init and _required(made) and defaulted:
            raise TypeError(f"non-default argument {name!r} follows default argument {defaulted!r}")
        defaulted = defaulted or (name if made.init and not _required(made) else "")
        made.name, made.type, made.kw_only = name, kind, False
        object.__setattr__(made, "_field_type", _FIELD)  # dataclasses' own mark of a field (a slot without hints)
        if made.default is not MISSING:
            setattr(cls, name, made.default)
        elif name in cls.__dict__:  # a factory's field: no class attribute, as dataclass leaves it
            delattr(cls, name)
        declared.append(made)
    return tuple(declared)


COMPILED_AFTER = 8  # records of a class made by the general __init__ before its own is compiled

_REQUIRED, _DEFAULT, _FACTORY_ARGUMENT, _FACTORY_ONLY = range(4)  # how the general __init__ fills a field
# (field name, how, its default or factory) in the order of the fields; each argument's position; whether
# __post_init__ follows
_Plan = tuple[tuple[tuple[str, int, Any], ...], dict[str, int], bool]


def _plan(cls: type, declared: tuple[AnyField, ...]) -> _Plan:
    """What ``_init``'s source says, as data for ``_bound``."""
    steps: list[tuple[str, int, Any]] = []
    for f in declared:
        if f.default_factory is not MISSING:
            steps.append((f.name, _FACTORY_ARGUMENT if f.init else _FACTORY_ONLY, f.default_factory))
        elif f.init:
            steps.append((f.name, _REQUIRED, None) if f.default is MISSING else (f.name, _DEFAULT, f.default))
    arguments = [name for name, how, _ in steps if how != _FACTORY_ONLY]
    return tuple(steps), {name: at for at, name in enumerate(arguments)}, hasattr(cls, "__post_init__")


def _bound(plan: _Plan, args: tuple[object, ...], kwargs: dict[str, object]) -> list[tuple[str, object]] | None:
    """Each field's value as the compiled ``__init__`` would set it, in its order; None where the call is one that
    ``__init__`` refuses (too many arguments, an unknown or repeated keyword, a required one missing): the compiled
    one is then called, to raise what Python raises."""
    steps, position, _ = plan
    if len(args) > len(position):
        return None
    for key in kwargs:
        if position.get(key, -1) < len(args):  # unknown, or given by position too
            return None
    for at, (name, how, _) in enumerate(s for s in steps if s[1] != _FACTORY_ONLY):
        if how == _REQUIRED and at >= len(args) and name not in kwargs:
            return None
    values: list[tuple[str, object]] = []
    at = 0
    for name, how, given in steps:
        if how == _FACTORY_ONLY:
            values.append((name, given()))
            continue
        if at < len(args):
            value = args[at]
        elif name in kwargs:
            value = kwargs[name]
        else:
            value = given() if how == _FACTORY_ARGUMENT else given
        values.append((name, value))
        at += 1
    return values


def _first_init(cls: type, declared: tuple[AnyField, ...]) -> Callable[..., None]:
    """An ``__init__`` that sets the fields through ``_bound`` for the first ``COMPILED_AFTER`` records of ``cls``,
    then writes and compiles the record's own (``_init``) and puts it in its place. Compiling an ``__init__`` is the
    costly part of making a class, and a one-shot answer makes records of a few dozen classes, most of them a few times;
    half the classes it defines are never made in it (a fan source the machine lacks, an alert that does not fire). The
    collector, making the same records every tick, runs the compiled ones from its ninth. A call the compiled
    ``__init__`` would refuse is given to it at once, so that the error is Python's own. Two threads compiling at once
    write two equal ``__init__``s; either stays."""
    made = 0
    plan: _Plan | None = None

    def compiled(self: object, *args: object, **kwargs: object) -> None:
        init = _init(cls, declared)
        type.__setattr__(cls, "__init__", init)
        init(self, *args, **kwargs)

    def __init__(self: object, *args: object, **kwargs: object) -> None:
        nonlocal made, plan
        made += 1
        if made > COMPILED_AFTER:
            return compiled(self, *args, **kwargs)
        plan = plan or _plan(cls, declared)
        values = _bound(plan, args, kwargs)
        if values is None:
            return compiled(self, *args, **kwargs)
        for name, value in values:
            object.__setattr__(self, name, value)
        if plan[2]:
            self.__post_init__()  # type: ignore[attr-defined]  # checked by _plan
        return None

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _required(f: AnyField) -> bool:
    return f.default is MISSING and f.default_factory is MISSING


def _fielded(cls: Any, params: object) -> tuple[AnyField, ...]:
    """What a record and a state holder share: ``cls`` given its fields and ``params`` as dataclass gives them, the
    shared repr, and an ``__init__`` written when the first is made."""
    declared = _declared(cls)
    cls.__dataclass_fields__ = {f.name: f for f in declared}
    cls.__dataclass_params__ = params
    type.__setattr__(cls, "__match_args__", tuple(f.name for f in declared if f.init))
    if not cls.__doc__:
        cls.__doc__ = f"{cls.__name__}({', '.join(f.name for f in declared)})"
    cls.__init__ = _first_init(cls, declared)
    cls._record_shown = tuple(f.name for f in declared if f.repr)
    cls.__repr__ = _repr
    return declared


_FROZEN = copy.copy(_Params.__dataclass_params__)  # type: ignore[attr-defined]  # as dataclass(frozen=True) says
_FROZEN.init = _FROZEN.repr = _FROZEN.eq = _FROZEN.frozen = True
_MUTABLE = copy.copy(_FROZEN)  # as dataclass(eq=False) would say
_MUTABLE.frozen = _MUTABLE.eq = False


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def record(cls: type[T]) -> type[T]:
    """``cls`` as a frozen dataclass with the shared comparison, hash, repr and guards, and its own ``__init__``."""
    made: Any = cls
    declared = _fielded(made, _FROZEN)
    made._record_key = staticmethod(_getter(tuple(f.name for f in declared if f.compare)))
    made.__eq__, made.__hash__ = _eq, _hash
    made.__setattr__, made.__delattr__ = _setattr, _delattr
    return cls


@dataclass_transform(eq_default=False, field_specifiers=(field, Field))
def holder(cls: type[T]) -> type[T]:
    """``cls`` as ``@dataclass(eq=False)`` makes it: a mutable holder of state, compared and hashed by identity (the
    same one, not an equal one), with the shared repr and its own ``__init__``."""
    _fielded(cls, _MUTABLE)
    return cls
