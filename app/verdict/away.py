""""While you were away": the verdicts of a past window, merged into one line per cause.

The history keeps a verdict row whenever the main cause changes, and once a minute. Consecutive and repeated rows of
the same cause (the same kind, GPU and process as the verdict names it, so a program restarted under a new PID is
the same cause) become one line: who, where, the total time, the peak. Busy causes first, longest first; at most a
screenful.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict

from ..core.jsonvalue import Json
from .changes import PEAK_OF

SCREENFUL = 8
Cause = Mapping[str, Json]  # a verdict row's cause as the history keeps it (JSON: kind, gpu, pid, who, peak)


class Span(TypedDict):
    """One line of "while you were away": a cause, how long it lasted in all, when first and last seen, its peak."""

    seconds: float
    first_seen: float
    last_seen: float
    peak: float | None
    unit: str
    busy: bool
    cause: Cause | None
    sentence: str
    headline: str


def _key(cause: Cause, busy: bool) -> str:
    kind = cause.get("kind")
    if kind in ("fan", "fan_fault"):  # a fan's cause is that fan's, busy or not
        return f"{kind}:{cause.get('fan')}"
    if not busy and kind != "idle_wake":
        return "idle"
    return f"{kind}:{cause.get('gpu')}:{cause.get('who') or cause.get('container') or cause.get('pid')}"


def sentence(cause: Cause, busy: bool) -> str:
    """The line's words: who kept what busy (commands in backticks, as the verdict writes them)."""
    kind, gpu, who = cause.get("kind"), cause.get("gpu"), cause.get("who")
    if kind in ("fan", "fan_fault"):  # the fan, what it follows and what heats it, as the verdict said it
        said = cause.get("said")
        if said:
            return str(said).rstrip(".")
        return "A fan ran above its floor" if kind == "fan" else "A fan had a fault"
    if not busy and kind != "idle_wake":
        return "Nothing was busy"
    if kind == "gpu_load":
        return f"GPU {gpu}: {who} kept it busy" if who else f"GPU {gpu} was busy, no process known"
    if kind == "cpu_load":
        return f"The CPU: {who} kept it busy" if who else "The CPU was busy, its load spread over many processes"
    if kind == "idle_wake":
        return f"GPU {gpu} was held awake in P0" + (f" by {who}" if who else "")
    if kind == "gpu_failed":
        return f"GPU {gpu} had failed"
    return str(kind)


def group(rows: Sequence[tuple[float, str, Mapping[str, Json]]], end: float, limit: int = SCREENFUL) -> list[Span]:
    """``rows`` (time, headline, data) in time order, the last lasting until ``end``: one entry per cause."""
    spans: dict[str, Span] = {}
    for i, (ts, headline, data) in enumerate(rows):
        until = rows[i + 1][0] if i + 1 < len(rows) else end
        found = data.get("cause")
        cause: Cause = found if isinstance(found, Mapping) else {}
        busy = bool(data.get("busy"))
        kind = cause.get("kind")
        span = spans.setdefault(_key(cause, busy), {
            "seconds": 0.0, "first_seen": ts, "last_seen": ts, "peak": None,
            "unit": PEAK_OF.get(kind if isinstance(kind, str) else "", ("", ""))[1], "busy": busy,
            "cause": cause or None, "sentence": sentence(cause, busy), "headline": headline})
        span["seconds"] += max(0.0, until - ts)
        span["last_seen"] = ts
        span["headline"] = headline  # the latest wording, with its numbers
        peak = cause.get("peak")
        if isinstance(peak, (int, float)) and not isinstance(peak, bool) and (span["peak"] is None
                                                                             or peak > span["peak"]):
            span["peak"] = float(peak)
    ranked = sorted(spans.values(), key=lambda s: (not s["busy"], -s["seconds"]))
    return ranked[:limit]
