"""What every template of the fan wing's words shares: the facts' type, a number as a sentence shows it, a verb
agreeing with how many fans a finding is about, and findings alike joined to be said once."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ..core.finding import Finding

Facts = Mapping[str, float | str]


def num(value: float | str) -> str:
    """1,850 for a whole or large number, 0.5 for a small one; a value that is not finite as it was read."""
    number = float(value)
    if not math.isfinite(number):
        return str(value)
    return f"{number:,.0f}" if abs(number) >= 10 or number == int(number) else f"{number:.1f}"


def verb(subjects: Sequence[str], one: str, many: str) -> str:
    return one if len(subjects) == 1 else many


_JOINED = ("speed-not-a-reading", "stalled", "fan-fault", "at-rest", "zero-unjudged", "no-control", "zero-then-turning",
           "unlike-siblings", "fan-alarm", "below-bmc-threshold", "hot-not-cooled", "target-not-met")
# kinds whose findings alike but for what they drive are said once, naming each (a daemon's one curve on four fans)
_LISTED = {"daemon-curve": "output"}


def grouped(found: Sequence[Finding]) -> list[Finding]:
    """Findings of one kind and the same facts joined into one (four fans reading 65535: one sentence; one curve a
    daemon declares for each of a card's fans: one sentence naming them)."""
    out: list[Finding] = []
    index: dict[tuple[str, tuple[tuple[str, float | str], ...]], int] = {}
    listed: dict[int, list[str]] = {}
    for f in found:
        apart = (_LISTED[f.kind],) if f.kind in _LISTED else ("source", "source_c")
        key = (f.kind, tuple(sorted((k, v) for k, v in f.facts.items() if k not in apart)))
        if (f.kind in _JOINED or f.kind in _LISTED) and key in index:
            first = out[index[key]]
            out[index[key]] = Finding(first.kind, first.rule, tuple(dict.fromkeys((*first.subjects, *f.subjects))),
                                      first.confidence, first.priority, first.facts)
            if f.kind in _LISTED:
                listed.setdefault(index[key], [str(first.facts[_LISTED[f.kind]])]).append(str(f.facts[_LISTED[f.kind]]))
        else:
            index.setdefault(key, len(out))
            out.append(f)
    for at, names in listed.items():
        f = out[at]
        out[at] = Finding(f.kind, f.rule, f.subjects, f.confidence, f.priority,
                          {**f.facts, _LISTED[f.kind]: ", ".join(names[:-1]) + " and " + names[-1]})
    return out
