"""Which verdicts are worth keeping: an event on a change of cause (not of its numbers), once a minute while the
cause holds (so durations can be measured), and when the cause reaches a new peak (so "while you were away" knows
it). The history writes what this says; "while you were away" reads it back."""

from __future__ import annotations

import json

from ..core.jsonvalue import EventRow
from ..core.snapshot import Cause, Snapshot

# The number that says how strong a cause was, per kind (the verdict's numbers), and its unit.
PEAK_OF = {"gpu_load": ("utilization_percent", "%"), "cpu_load": ("cpu_percent", "%"), "idle_wake": ("power_w", "W"),
           "thermal_throttle": ("temperature_c", "°C")}


class VerdictChanges:
    """Remembers the last verdict kept; ``row`` gives the events row for a snapshot's verdict, or None."""

    def __init__(self) -> None:
        self._identity: str | None = None
        self._minute: int | None = None
        self._peak: float | None = None

    def row(self, snap: Snapshot) -> EventRow | None:
        if snap.verdict is None:
            return None
        ts = snap.timestamp
        top = next((c for c in snap.verdict.causes if c.summary == snap.verdict.headline), None)
        fan = top.numbers.get("fan") if top else None  # a fan cause is that fan's: two fans are two causes
        identity = f"{top.kind}:{top.gpu_index}:{top.pid}:{fan}" if top else "idle"
        minute = int(ts // 60)
        peak = peak_of(top) if top else None
        same = identity == self._identity
        higher = same and peak is not None and (self._peak is None or peak > self._peak)
        if same and minute == self._minute and not higher:
            return None
        self._identity, self._minute = identity, minute
        self._peak = max(peak, self._peak or peak) if same and peak is not None else peak
        data = {"busy": snap.verdict.busy, "confidence": snap.verdict.confidence,
                "cause": {"kind": top.kind, "gpu": top.gpu_index, "pid": top.pid, "container": top.container,
                          "who": _who(snap, top.pid), "peak": peak,
                          **({"fan": fan, "said": top.summary} if fan else {})} if top else None}
        return (ts, "verdict", top.gpu_index if top else None, top.kind if top else None, None, None,
                snap.verdict.headline, json.dumps(data))


def _who(snap: Snapshot, pid: int | None) -> str | None:
    r"""The process a cause names, as the verdict names it (``\`python3 train.py\` (alice)``)."""
    from .words import label

    proc = next((p for p in snap.processes if p.pid == pid), None) if pid is not None else None
    return label(proc) if proc is not None else None


def peak_of(cause: Cause) -> float | None:
    key = PEAK_OF.get(cause.kind, ("", ""))[0]
    value = cause.numbers.get(key)
    return float(value) if isinstance(value, (int, float)) else None
