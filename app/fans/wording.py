"""What every template of the fan wing's words shares: the facts' type, a number as a sentence shows it, and a
verb agreeing with how many fans a finding is about."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

Facts = Mapping[str, float | str]


def num(value: float | str) -> str:
    """1,850 for a whole or large number, 0.5 for a small one; a value that is not finite as it was read."""
    number = float(value)
    if not math.isfinite(number):
        return str(value)
    return f"{number:,.0f}" if abs(number) >= 10 or number == int(number) else f"{number:.1f}"


def verb(subjects: Sequence[str], one: str, many: str) -> str:
    return one if len(subjects) == 1 else many
