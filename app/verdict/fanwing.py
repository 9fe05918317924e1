"""The live snapshot's fans through the fan wing (``app.fans``): its fans, temperatures and GPUs made into facts, every
rule run over them, and the findings worded by the wing's words. The verdict carries these findings; where nothing
is busy their sentence is what the fans do, and a fan the wing finds failing, stalled or not cooling is a cause of
its own beside the load."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.fan import Fan
from ..core.finding import Finding
from ..core.model import frozen_map
from ..core.snapshot import Cause, Snapshot
from ..fans import adapt
from ..fans.answer import judged
from ..fans.facts import Machine
from ..fans.names import Names
from ..fans.words import said

# The findings that are news whatever else the machine does: a fan that may not cool what it should. A GPU's load
# does not explain them away, so they stand among the causes beside it.
DANGER = frozenset({"hot-not-cooled", "pump-stopped", "fan-fault", "fan-alarm", "stalled", "target-not-met",
                    "below-bmc-threshold", "fault-then-reading", "ec-cpu-unread", "off-target", "fan-disabled",
                    "bmc-failing-at-times", "no-power", "detected-still", "ec-cpu-low"})
# A fan at full speed for no heat: a fault that is itself the noise, so it answers the question ahead of any load
NO_HEAT = frozenset({"full-while-cool", "no-control", "ec-cpu-misread"})
DANGER_SCORE = 0.96  # below a fan at full speed for no heat, above any load
NO_HEAT_SCORE = 0.97


def machine_of(snap: Snapshot) -> Machine:
    """The snapshot's facts: its fans, the host's temperatures and the GPUs."""
    return adapt.machine((), snap.fans, snap.host.temperatures, snap.gpus, air=snap.air)


def account(snap: Snapshot) -> tuple[tuple[Finding, ...], str, Machine]:
    """(the findings, the strongest first, their sentence, and the facts they were found in) for the fans of
    ``snap``."""
    facts = machine_of(snap)
    found, sentence = judged(facts)  # the fan service judged the same facts this tick: the rules ran once
    return found, sentence, facts


def danger_causes(found: tuple[Finding, ...], facts: Machine, fans: Sequence[Fan] = ()) -> list[Cause]:
    """A cause for each finding of ``DANGER`` and ``NO_HEAT``, worded alone, with the fans it is about (by the live
    fans' ids where ``fans`` are given, as /api/fans names them; else by their facts' keys)."""
    danger = [finding for finding in found if (finding.kind in DANGER or finding.kind in NO_HEAT) and
              finding.facts.get("unbacked") != "yes"]  # a driver's alarm no speed could raise (a minimum of 0)
    if not danger:
        return []
    names = Names(facts)
    ids = {adapt.fan_key(fan)[0]: fan.id for fan in fans}
    return [Cause(kind="fan_fault", score=NO_HEAT_SCORE if finding.kind in NO_HEAT else DANGER_SCORE,
                  gpu_index=_gpu_of(finding, facts), summary=said(finding, names),
                  numbers=frozen_map({"finding": finding.kind, "confidence": finding.confidence,
                                      "fan": ", ".join(ids.get(s, s) for s in finding.subjects)}))
            for finding in danger]


def _gpu_of(finding: Finding, facts: Machine) -> int | None:
    """The GPU whose fan a finding is about, if it is about one."""
    return next((f.gpu for f in facts.fans if f.key in finding.subjects and f.gpu is not None), None)


def no_heat(cause: Cause) -> bool:
    """A fan at full speed while what it follows is cool (or with no control): a fault that is the answer itself."""
    return cause.kind == "fan_fault" and cause.numbers.get("finding") in NO_HEAT
