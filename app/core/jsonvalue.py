"""JSON (and SQLite rows) as types: what the API sends and what it reads from outside (request bodies, other
programs' answers), so mypy checks it instead of taking an untyped value. A value read from outside is narrowed
(``isinstance``) where used."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias, Union

# Sequence and Mapping, not list and dict: they are covariant, so a list[str] or a dict[str, int] is Json too.
Json: TypeAlias = Union[bool, int, float, str, Sequence["Json"], Mapping[str, "Json"], None]
JsonObject: TypeAlias = dict[str, Json]

# What SQLite stores: the history's rows are tuples of these.
SqlValue: TypeAlias = Union[int, float, str, bytes, None]
# One row of the history's events table: time, "verdict" or "alert", GPU, kind or rule, state, severity, the
# sentence, and the rest as JSON.
EventRow: TypeAlias = tuple[float, str, Union[int, None], Union[str, None], Union[str, None], Union[str, None], str,
                            str]


def member(value: Json, key: str) -> Json:
    """``value[key]`` when ``value`` is an object holding it, else None: another program's JSON, walked without
    trusting its shape."""
    return value.get(key) if isinstance(value, Mapping) else None


def members(value: Json) -> Sequence[Json]:
    """The items of a JSON array, or none when ``value`` is not one (a string is not a list of letters here)."""
    return value if isinstance(value, Sequence) and not isinstance(value, str) else ()


def text(value: Json) -> str | None:
    return value if isinstance(value, str) else None


NUMBER_LIMIT = float(1 << 63)  # no number FanWhy reads from another program is past a 64-bit integer


def number(value: Json) -> float | None:
    """A JSON number as a float; None for anything else (a boolean is not a number here), and for what no counter
    or reading can be: NaN, an infinity, or a magnitude past NUMBER_LIMIT (an integer of 400 digits included)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    if isinstance(value, int) and not -NUMBER_LIMIT <= value <= NUMBER_LIMIT:  # before float(): no OverflowError
        return None
    found = float(value)
    return found if -NUMBER_LIMIT <= found <= NUMBER_LIMIT else None  # NaN fails both comparisons


def finite(value: float) -> float | None:
    """``value`` when a reading can be it (``number``'s rule), else None: the check for a number parsed from text."""
    return number(value)


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


class TooDeep(ValueError):
    """JSON nested deeper than the parser goes: bad JSON, said as such."""


def loads(text: str | bytes) -> Json:
    """Another program's JSON, strictly: NaN and the infinities are not JSON, a number past a reading's range
    (``number``) is read as null, and a nesting too deep for the parser is ``TooDeep``, a ValueError like any other
    bad JSON."""
    import json

    try:
        found: Json = json.loads(text, parse_constant=_no_constant, parse_float=lambda t: number(float(t)),
                                 parse_int=lambda t: int(t) if len(t) <= 19 else None)
    except RecursionError:
        raise TooDeep("JSON nested too deep") from None
    return found


def objects(value: Json) -> list[Mapping[str, Json]]:
    """The objects of a JSON array (anything else in it is skipped)."""
    return [v for v in members(value) if isinstance(v, Mapping)]
