"""``@record`` behaves as ``@dataclass(frozen=True)`` does: the shared comparison, hash and repr are checked against
the ones the standard library generates for the same class."""

from __future__ import annotations

import dataclasses
from dataclasses import FrozenInstanceError, field
from typing import Any

import pytest

from app.core.record import COMPILED_AFTER, holder, record


@record
class Reading:
    gpu: int
    watts: float | None
    tags: tuple[str, ...] = ()
    note: str = field(default="", compare=False)
    secret: str = field(default="", repr=False)


@dataclasses.dataclass(frozen=True)
class StdReading:
    gpu: int
    watts: float | None
    tags: tuple[str, ...] = ()
    note: str = field(default="", compare=False)
    secret: str = field(default="", repr=False)


@record
class OtherReading:
    gpu: int
    watts: float | None
    tags: tuple[str, ...] = ()
    note: str = ""
    secret: str = ""


@record
class Empty:
    pass


@record
class One:
    value: int


def test_equal_where_the_standard_dataclass_is_equal() -> None:
    """Mutant: ``_eq`` returning True for any two of a class, or comparing only the first field."""
    pairs: list[tuple[tuple[Any, ...], tuple[Any, ...]]] = [
        ((0, 1.0), (0, 1.0)), ((0, 1.0), (1, 1.0)), ((0, 1.0), (0, 2.0)), ((0, None), (0, None)),
        ((0, 1.0, ("a",)), (0, 1.0, ("b",))), ((0, 1.0, (), "x"), (0, 1.0, (), "y")),
        ((0, 1.0, (), "", "s"), (0, 1.0, (), "", "t"))]
    for left, right in pairs:
        assert (Reading(*left) == Reading(*right)) == (StdReading(*left) == StdReading(*right)), (left, right)
        assert (Reading(*left) != Reading(*right)) == (StdReading(*left) != StdReading(*right)), (left, right)


def test_a_record_equals_only_its_own_class() -> None:
    """Mutant: ``_eq`` without its class check (another record, or a tuple, of the same values would be equal)."""
    reading: object = Reading(0, 1.0)
    assert reading != OtherReading(0, 1.0)
    assert reading != (0, 1.0, (), "", "")
    assert One(3).__eq__(3) is NotImplemented
    assert Empty() == Empty()


def test_hashed_on_the_compared_fields() -> None:
    """Mutant: ``_hash`` over ``id(self)`` (equal records in two places of a set)."""
    assert hash(Reading(0, 1.0, note="a")) == hash(Reading(0, 1.0, note="b"))
    assert len({Reading(0, 1.0), Reading(0, 1.0), Reading(1, 1.0)}) == 2
    assert {One(1): "x"}[One(1)] == "x"
    assert hash(Empty()) == hash(Empty())


def test_shown_as_the_standard_dataclass_shows_it() -> None:
    """Mutant: a field with ``repr=False`` shown, or the fields out of order."""
    std = repr(StdReading(0, 1.5, ("a",), "n", "hidden"))
    assert repr(Reading(0, 1.5, ("a",), "n", "hidden")) == std.replace("StdReading", "Reading")
    assert "hidden" not in repr(Reading(0, 1.5, secret="hidden"))
    assert repr(Empty()) == "Empty()"


def test_frozen_and_replaceable() -> None:
    reading = Reading(0, 1.0)
    with pytest.raises(FrozenInstanceError):
        reading.gpu = 1  # type: ignore[misc]  # the assignment under test is one mypy refuses
    assert dataclasses.replace(reading, gpu=2) == Reading(2, 1.0)
    assert dataclasses.asdict(One(4)) == {"value": 4}
    assert [f.name for f in dataclasses.fields(Reading)] == ["gpu", "watts", "tags", "note", "secret"]


def _made(decorate: Any) -> Any:
    """One class body, made by ``decorate``: the record and the standard frozen dataclass it is checked against."""

    class Made:
        gpu: int
        names: list[str] = field(default_factory=list)
        unit: str = "W"
        seen: list[int] = field(default_factory=lambda: [1], init=False)
        shown: str = field(default="-", init=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "shown", f"{self.gpu}{self.unit}")

    return decorate(Made)


Made, StdMade = _made(record), _made(dataclasses.dataclass(frozen=True))


def _fresh(path: str) -> Any:
    """A new record class of ``_made``'s body, its ``__init__`` the general one, or (``compiled``) its own."""
    made = _made(record)
    if path == "compiled":
        for _ in range(COMPILED_AFTER + 1):
            made(0)
        assert made.__dict__["__init__"].__code__.co_varnames[:2] == ("self", "gpu")
    return made


@pytest.mark.parametrize("path", ["general", "compiled"])
def test_made_as_the_standard_dataclass_makes_it(path: str) -> None:
    """A record's ``__init__``, the general one of its first records and the compiled one after, takes the
    arguments the standard one takes and sets what it sets, and refuses what it refuses. Mutants: the factory called
    once for every instance (one list shared), an argument given for a factory's field replaced by the factory's
    value, ``__post_init__`` not called, a field with ``init=False`` taken as an argument, a keyword given by
    position too, an unknown keyword ignored."""
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((0,), {}), ((1, ["a"]), {}), ((2,), {"unit": "%"}), ((3, ["b"], "V"), {}), ((), {"gpu": 4, "names": []}),
        ((5,), {"names": ["c"], "unit": "A"})]
    for args, kwargs in calls:
        ours, std = _fresh(path)(*args, **kwargs), StdMade(*args, **kwargs)
        assert dataclasses.asdict(ours) == dataclasses.asdict(std), (path, args, kwargs)
    made = _fresh(path)
    assert made(0).names is not made(0).names and made(0).seen is not made(0).seen
    refused: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((), {}), ((0,), {"seen": [2]}), ((0,), {"shown": "x"}), ((0, [], "W", 1), {}), ((0,), {"gpu": 1}),
        ((), {"names": []}), ((0,), {"other": 1})]
    for args, kwargs in refused:
        with pytest.raises(TypeError) as std_error:
            StdMade(*args, **kwargs)
        with pytest.raises(TypeError) as error:
            _fresh(path)(*args, **kwargs)
        assert str(error.value).split("()", 1)[1] == str(std_error.value).split("()", 1)[1]  # Python's own words


def test_guarded_as_the_standard_dataclass_guards() -> None:
    """The shared guards refuse what a frozen dataclass refuses: an assignment or a deletion, of a field or not."""
    made = Made(0)
    for action in (lambda: setattr(made, "gpu", 1), lambda: setattr(made, "other", 1),
                   lambda: delattr(made, "unit")):
        with pytest.raises(FrozenInstanceError):
            action()
    assert (made.gpu, made.unit) == (0, "W") and not hasattr(made, "other")
    assert dataclasses.fields(Made)[0].name == "gpu" and Made.__dataclass_params__.frozen


def test_what_a_record_cannot_be_is_refused() -> None:
    """A keyword-only field or an InitVar would be silently dropped by the record's ``__init__``: refused."""
    with pytest.raises(TypeError, match="keyword-only"):
        @record
        class KeywordOnly:
            gpu: int = field(kw_only=True)
    with pytest.raises(TypeError, match="InitVar"):
        @record
        class WithInitVar:
            gpu: dataclasses.InitVar[int]


def test_declared_as_the_standard_dataclass_declares() -> None:
    """The fields are made here, not by ``dataclass``: each ``Field`` says what the standard one says, and the class
    keeps the attributes the standard one keeps (a default stays, a factory's field has none). Mutants: a field's
    ``compare`` or ``init`` dropped, a factory's class attribute left, the fields out of order."""
    for ours, std in ((Reading, StdReading), (Made, StdMade)):
        said = [(f.name, f.type, f.default, f.default_factory is dataclasses.MISSING, f.init, f.repr, f.compare,
                 f.hash, f.kw_only) for f in dataclasses.fields(ours)]
        assert said == [(f.name, f.type, f.default, f.default_factory is dataclasses.MISSING, f.init, f.repr,
                         f.compare, f.hash, f.kw_only) for f in dataclasses.fields(std)]
        for f in dataclasses.fields(std):
            assert hasattr(ours, f.name) == hasattr(std, f.name), f.name
            assert getattr(ours, f.name, None) == getattr(std, f.name, None), f.name
        assert ours.__match_args__ == std.__match_args__
        assert dataclasses.is_dataclass(ours) and vars(ours)["__dataclass_params__"].frozen


def test_refused_where_the_standard_dataclass_refuses() -> None:
    """What dataclass refuses is refused here too: a mutable default, an argument without a default after one with
    (a field with ``init=False`` between them is not an argument)."""
    with pytest.raises(ValueError, match="mutable default"):
        @record
        class MutableDefault:
            names: list[str] = []  # noqa: RUF012  # the mistake under test
    with pytest.raises(TypeError, match="non-default argument 'late'"):
        @record
        class Late:
            early: int = 0
            late: int  # type: ignore[misc]  # the mistake under test

    @record
    class AfterAComputedOne:
        computed: int = field(default=0, init=False)
        given: int

    assert AfterAComputedOne(3).given == 3


def test_inherited_fields_are_refused() -> None:
    """Fields collected from a base class are dataclass's general work, which a record does not do: refused, not
    silently dropped from ``__init__``."""
    with pytest.raises(TypeError, match="inherits no fields"):
        @record
        class Child(One):
            more: int = 0


@holder
class Holder:
    gpu: int
    seen: list[int] = field(default_factory=list)
    since: float | None = None


@dataclasses.dataclass(eq=False)
class StdHolder:
    gpu: int
    seen: list[int] = field(default_factory=list)
    since: float | None = None


def test_a_state_holder_is_what_dataclass_eq_false_makes() -> None:
    """``@holder``: assignable, equal only to itself, hashed by identity, shown as the standard one shows it, a
    factory's value per instance. Mutants: the record's ``_eq`` on a holder (two holders of equal values equal), the
    frozen guards on a holder."""
    left, right = Holder(0), Holder(0)
    assert left != right and left == left and len({left, right}) == 2
    left.since = 1.5
    left.seen.append(1)
    assert (left.since, left.seen, right.seen) == (1.5, [1], [])
    assert repr(Holder(2, [3], 4.0)) == repr(StdHolder(2, [3], 4.0)).replace("StdHolder", "Holder")
    assert [f.name for f in dataclasses.fields(Holder)] == ["gpu", "seen", "since"]
    assert not vars(Holder)["__dataclass_params__"].frozen and not vars(Holder)["__dataclass_params__"].eq


def test_an_init_is_compiled_after_a_few_records_and_at_once_for_a_call_it_refuses() -> None:
    """A class made only a few times in a run compiles no ``__init__`` (what a one-shot answer's start saves: 4.5 ms
    on an H200 host); the record after the first ``COMPILED_AFTER`` puts the class's own in place; a call the
    compiled one refuses compiles it at once, so that Python says what is wrong. Mutants: the general ``__init__``
    never replacing itself, or replacing itself at the first record."""

    @record
    class Lazy:
        value: int

    general = Lazy.__dict__["__init__"]
    assert general.__code__.co_varnames[:3] == ("self", "args", "kwargs")
    assert [Lazy(n).value for n in range(COMPILED_AFTER)] == list(range(COMPILED_AFTER))
    assert Lazy.__dict__["__init__"] is general
    assert Lazy(value=-1).value == -1
    own = Lazy.__dict__["__init__"]
    assert own is not general and own.__code__.co_varnames[:2] == ("self", "value")
    Lazy(2)
    assert Lazy.__dict__["__init__"] is own

    @record
    class Refusing:
        value: int

    with pytest.raises(TypeError, match=r"Refusing.__init__\(\) missing 1 required positional argument: 'value'"):
        Refusing()  # type: ignore[call-arg]  # the refused call under test
    assert Refusing.__dict__["__init__"].__code__.co_varnames[:2] == ("self", "value")
