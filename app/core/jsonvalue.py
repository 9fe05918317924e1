"""JSON as a type: what the API sends and what it reads from outside (request bodies, other programs' answers),
so mypy checks it instead of taking ``Any``. A value read from outside is narrowed (``isinstance``) where used."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias, Union

# Sequence and Mapping, not list and dict: they are covariant, so a list[str] or a dict[str, int] is Json too.
Json: TypeAlias = Union[bool, int, float, str, Sequence["Json"], Mapping[str, "Json"], None]
JsonObject: TypeAlias = dict[str, Json]
