"""The live snapshot's fans through the fan wing (``app.fans``): its fans, temperatures and GPUs made into facts, every
rule run over them, and the findings worded by the wing's words. The verdict carries these findings; where nothing
is busy their sentence is what the fans do, and a fan the wing finds failing, stalled or not cooling is a cause of
its own beside the load."""

from __future__ import annotations

from functools import lru_cache

from ..core.finding import Finding
from ..core.model import Cause, Snapshot, frozen_map
from ..fans import adapt
from ..fans.answer import explained
from ..fans.facts import Machine
from ..fans.names import Names
from ..fans.words import said

# The findings that are news whatever else the machine does: a fan that may not cool what it should. A GPU's load
# does not explain them away, so they stand among the causes beside it.
DANGER = frozenset({"hot-not-cooled", "pump-stopped", "fan-fault", "fan-alarm", "stalled", "target-not-met",
                    "below-bmc-threshold", "fault-then-reading", "ec-cpu-unread"})
DANGER_SCORE = 0.96  # below a fan at full speed for no heat (0.97), above any load


def machine_of(snap: Snapshot) -> Machine:
    """The snapshot's facts: its fans, the host's temperatures and the GPUs."""
    return adapt.machine((), snap.fans, snap.host.temperatures, snap.gpus, air=snap.air)


def account(snap: Snapshot) -> tuple[tuple[Finding, ...], str, Machine]:
    """(the findings, the strongest first, their sentence, and the facts they were found in) for the fans of
    ``snap``."""
    facts = machine_of(snap)
    found, sentence = _explained(facts)
    return found, sentence, facts


@lru_cache(maxsize=4)
def _explained(facts: Machine) -> tuple[tuple[Finding, ...], str]:
    """The rules and the words, once per distinct set of facts: a machine whose fans and temperatures stand still
    from one tick to the next is not ruled on again (the facts are frozen records, equal when their values are)."""
    found, sentence, _also = explained(facts)
    return tuple(found), sentence


def danger_causes(found: tuple[Finding, ...], facts: Machine) -> list[Cause]:
    """A cause for each finding of ``DANGER``, worded alone, with the fans and temperatures it is about."""
    danger = [finding for finding in found if finding.kind in DANGER]
    if not danger:
        return []
    names = Names(facts)
    return [Cause(kind="fan_fault", score=DANGER_SCORE, summary=said(finding, names),
                  numbers=frozen_map({"finding": finding.kind, "confidence": finding.confidence,
                                      "fan": ", ".join(finding.subjects)}))
            for finding in danger]
