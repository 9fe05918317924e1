"""A fan's alarm in words: the one place they are written. Readers give a kind (``Fan.alarm_kind``) and the facts
behind it (``Fan.alarm_facts``: the reading, the duty or level, the status, the source); the fan service puts them
in words here before a snapshot is made, so the verdict, the page, the alerts and /api/fans say the same."""

from __future__ import annotations

from collections.abc import Mapping

from ..core.fan import Fan

CHECK = "(check it by ear or by its temperatures)"


def alarm_words(fan: Fan) -> str | None:
    """The words of ``fan``'s alarm, or None when it has none."""
    facts, kind = fan.alarm_facts, fan.alarm_kind
    if kind == "stalled":
        return _stalled(facts)
    if kind == "failed":
        return "the BMC reports it critical (a failed or missing fan)"
    if kind == "warning":
        return "the BMC reports it past a warning threshold"
    if kind == "disabled":
        return f"{facts.get('driver', 'its driver')} reports the fan disabled (status: disabled)"
    if kind == "off-target":
        return (f"off target: {_int(facts.get('rpm')):,} RPM against a target of {_int(facts.get('target_rpm')):,} RPM "
                f"for {_num(facts.get('seconds')):.0f} s (blocked, or failing)")
    if kind == "no-heat":
        how = "no control (pwm_enable 0)" if facts.get("control") == "full-speed" else \
            "a manual override or lost control"
        return f"full speed while {facts.get('source')} is at {_num(facts.get('source_c')):.0f} °C: {how}"
    return None


def _stalled(facts: Mapping[str, float | str]) -> str:
    get = facts.get
    reading = get("reading", "0 RPM")
    if get("pump"):
        return (f"reads {reading}: a pump does not stop while the cooler runs; liquidctl cannot read this pump's "
                "speed, or the pump failed (is the liquid cooling?)")
    if get("level") is not None:
        return (f"reads {reading} at level {get('level')}: stalled, or this model's embedded controller does not "
                f"report the speed {CHECK}")
    return f"reads {reading} at {_num(get('duty')):.0f} % duty: stalled, or its tachometer does not report {CHECK}"


def _num(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) else 0.0


def _int(value: object) -> int:
    return int(value) if isinstance(value, (int, float)) else 0
