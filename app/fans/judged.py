"""Each live fan as the fan wing judges it: from the findings about it, strongest first, its state in a word
(``Fan.state``), whether it is at rest (``Fan.stopped``) and its alarm (``Fan.alarm_kind``, its facts and its
clause). The fan service applies this to every fan of a tick, so the page, ``fanwhy top``, the alerts, the metrics
and /api/fans say what the verdict's findings say; no reader decides any of it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..core.fan import AlarmKind, Fan, FanState, fan_state
from ..core.finding import Finding, FindingKind
from ..core.model import frozen_map
from .adapt import fan_key
from .alarm_words import alarm_clause
from .facts import Machine
from .names import Names

# What a finding makes of the fan it is about: (its state, or None where its speed says it; its alarm, or None).
# A fan that does not turn and is not judged at rest is "unknown": a rest, a stall and a silent tachometer are
# not told apart by a word.
_OF: Mapping[FindingKind, tuple[FanState | None, AlarmKind | None]] = {
    "fan-fault": ("failed", "failed"), "fault-then-reading": ("failed", "failed"),
    "fan-disabled": ("failed", "disabled"), "pump-stopped": ("stalled", "stalled"),
    "hot-not-cooled": ("stalled", "stalled"), "stalled": ("stalled", "stalled"),
    "target-not-met": ("stalled", "stalled"), "no-power": ("stalled", "stalled"),
    "detected-still": ("stalled", "stalled"), "off-target": ("off-target", "off-target"),
    "fan-alarm": (None, "warning"), "ec-cpu-unread": (None, "warning"), "bmc-failing-at-times": (None, "warning"),
    "ec-cpu-low": (None, "warning"),
    "full-while-cool": ("full", "no-heat"), "no-control": ("full", "no-heat"), "ec-cpu-misread": (None, "warning"),
    "at-rest": ("stopped", None), "warm-not-turning": ("unknown", None), "zero-unjudged": ("unknown", None),
    "listed-unfitted": ("unknown", None),
}


def _of(finding: Finding) -> tuple[FanState | None, AlarmKind | None]:
    if finding.kind == "at-rest" and finding.confidence == "possible":  # a rest or a silent tachometer: not told
        return "unknown", None
    if finding.kind == "fan-alarm" and finding.facts.get("unbacked") == "yes":  # under a minimum of 0: no speed is
        return None, None
    if finding.kind == "no-control" and "level" in finding.facts:  # a level set (a person, a daemon): no fault
        return "full", None
    if finding.kind == "daemon-stopped" and finding.facts.get("event") == "not-running":  # held at full by a setting
        return "full", None
    if finding.kind == "below-bmc-threshold":  # just under it: a quiet fan, warned of; far under: failing
        return (None, "warning") if finding.facts.get("near") == "yes" else ("failed", "failed")
    return _OF.get(finding.kind, (None, None))


def judge(fans: Sequence[Fan], machine: Machine, found: Sequence[Finding]) -> tuple[Fan, ...]:
    """``fans`` with their state, rest and alarm from ``found`` (the findings on ``machine``, strongest first)."""
    about: dict[str, list[Finding]] = {}
    for finding in found:
        for subject in finding.subjects:
            about.setdefault(subject, []).append(finding)
    names = Names(machine)
    judged = []
    for fan in fans:
        if fan.dead:
            judged.append(replace(fan, state="dead", stopped=False, alarm=None, alarm_kind=None))
            continue
        state: FanState | None = None
        alarm: tuple[AlarmKind, Finding] | None = None
        for finding in about.get(fan_key(fan)[0], ()):
            its_state, its_alarm = _of(finding)
            state = state or its_state
            alarm = alarm or ((its_alarm, finding) if its_alarm else None)
        fan = replace(fan, stopped=state == "stopped", alarm_kind=alarm[0] if alarm else None,
                      alarm_facts=frozen_map(dict(alarm[1].facts)) if alarm else frozen_map({}),
                      alarm=alarm_clause(alarm[1], names) if alarm else None)
        judged.append(replace(fan, state=state or fan_state(fan)))
    return tuple(judged)
