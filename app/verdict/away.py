""""While you were away": the verdicts of a past window, merged into one line per cause.

The history keeps a verdict row whenever the main cause changes, and once a minute. Consecutive and repeated rows of
the same cause (the same kind, GPU and process as the verdict names it, so a program restarted under a new PID is
the same cause) become one line: who, where, the total time, the peak. Busy causes first, longest first; at most a
screenful.
"""

from __future__ import annotations

from typing import Any, Sequence

from .changes import PEAK_OF

SCREENFUL = 8


def _key(cause: dict[str, Any], busy: bool) -> str:
    kind = cause.get("kind")
    if not busy and kind != "idle_wake":
        return "idle"
    return f"{kind}:{cause.get('gpu')}:{cause.get('who') or cause.get('container') or cause.get('pid')}"


def sentence(cause: dict[str, Any], busy: bool) -> str:
    """The line's words: who kept what busy (commands in backticks, as the verdict writes them)."""
    kind, gpu, who = cause.get("kind"), cause.get("gpu"), cause.get("who")
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


def group(rows: Sequence[tuple[float, str, dict[str, Any]]], end: float, limit: int = SCREENFUL
          ) -> list[dict[str, Any]]:
    """``rows`` (time, headline, data) in time order, the last lasting until ``end``: one entry per cause."""
    spans: dict[str, dict[str, Any]] = {}
    for i, (ts, headline, data) in enumerate(rows):
        until = rows[i + 1][0] if i + 1 < len(rows) else end
        cause = data.get("cause") or {}
        busy = bool(data.get("busy"))
        span = spans.setdefault(_key(cause, busy), {
            "seconds": 0.0, "first_seen": ts, "peak": None, "unit": PEAK_OF.get(cause.get("kind") or "", ("", ""))[1],
            "busy": busy, "cause": cause or None, "sentence": sentence(cause, busy)})
        span["seconds"] += max(0.0, until - ts)
        span["last_seen"] = ts
        span["headline"] = headline  # the latest wording, with its numbers
        peak = cause.get("peak")
        if isinstance(peak, (int, float)) and (span["peak"] is None or peak > span["peak"]):
            span["peak"] = peak
    ranked = sorted(spans.values(), key=lambda s: (not s["busy"], -s["seconds"]))
    return ranked[:limit]
