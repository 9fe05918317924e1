"""Recordings: a labelled stretch of GPU statistics (``POST /api/recordings``, ``app.client.record``).

Kept in the history's database and sampled by the history's writer inside each tick's transaction (its
``tick_hooks``), so a recording sees exactly what the history saw. Bounded: MAX_LIVE_RECORDINGS running at once,
MAX_RECORDING_SAMPLES sampling ticks each (then it stops itself, with its statistics), the MAX_RECORDINGS_KEPT
newest finished ones kept (the history's once-a-minute trim); the history's size cap counts their samples too.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
import time
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence, TypedDict

from ..core.cells import shown
from ..core.jsonvalue import JsonObject
from ..core.snapshot import Snapshot
from .history import History
from .rows import immediate

MAX_LIVE_RECORDINGS = 16
MAX_RECORDING_SAMPLES = 86_400  # sampling ticks; a recording stops by itself there (a day at 1 s)
MAX_RECORDINGS_KEPT = 1_000

HOST_ROW = -1  # the row of a recording made without a GPU: the host's CPU %, memory and CPU temperature


class RecordingsFull(RuntimeError):
    """MAX_LIVE_RECORDINGS are running (429 with this message)."""


@dataclass
class _Recording:
    id: str
    gpus: tuple[int, ...] | None
    interval_s: float
    next_at: float = 0.0
    samples: int = 0


class Meter(Protocol):
    """A recording's receipt as it is fed each tick (app.verdict.receipt.ReceiptMeter)."""

    def add(self, snap: Snapshot) -> None: ...

    def result(self) -> JsonObject: ...


class Recorder:
    """Starts, samples, stops and lists recordings in ``history``'s database. ``meter``: a recording's receipt for
    its GPUs (None: all), handed in (the verdict measures it; this package only keeps it)."""

    def __init__(self, history: History, meter: Callable[[tuple[int, ...] | None], Meter]):
        self._history = history
        self._meter = meter
        self._live: dict[str, _Recording] = {}
        self._meters: dict[str, Meter] = {}  # each live recording's receipt, fed every tick
        self._lock = threading.Lock()
        history.tick_hooks.append(self._sample)
        history.trim_hooks.append(_trim)
        self._close_interrupted()

    def _close_interrupted(self) -> None:
        """A recording still open in the file when its server starts was cut by a crash (or a kill): nothing
        samples it any more. It is closed "interrupted", at its last sample, with the statistics of the samples it
        kept (no receipt: the meter died with the process); closed, it counts against the kept cap, not the live one.
        """
        try:
            with self._history.reader() as db, immediate(db):
                open_ids = [row[0] for row in db.execute("SELECT id FROM recordings WHERE stopped IS NULL")]
                for rec_id in open_ids:
                    last = db.execute("SELECT coalesce(max(ts), (SELECT started FROM recordings WHERE id = ?)) "
                                      "FROM recording_samples WHERE rec = ?", (rec_id, rec_id)).fetchone()[0]
                    _finish(db, rec_id, last, None, interrupted=True)
        except sqlite3.Error:
            pass  # the history's own health check says what is wrong with its file; recordings start closed next time

    def start(self, rec_id: str, label: str, gpus: Sequence[int] | None, interval_s: float, started: float) -> None:
        """Its row first, then its sampling: a recording that could not be stored never samples.
        RecordingsFull at MAX_LIVE_RECORDINGS running at once. The label is kept as ``shown`` writes it: every
        place that shows it (a terminal, a receipt) gets text that cannot act on it."""
        label = shown(label)
        with self._lock:  # never held across a database call: the writer takes it inside its own
            if len(self._live) >= MAX_LIVE_RECORDINGS:
                raise RecordingsFull(f"{MAX_LIVE_RECORDINGS} recordings are running; stop one first")
            pending = _Recording(rec_id, tuple(gpus) if gpus is not None else None, interval_s, next_at=math.inf)
            self._live[rec_id] = pending  # holds its place, not sampled until stored
            self._meters[rec_id] = self._meter(pending.gpus)
        try:
            with self._history.reader() as db, immediate(db):
                db.execute("INSERT INTO recordings VALUES (?, ?, ?, ?, ?, NULL, NULL)",
                           (rec_id, label, json.dumps(list(gpus) if gpus is not None else None), interval_s,
                            started))
        except BaseException:
            with self._lock:
                self._live.pop(rec_id, None)
                self._meters.pop(rec_id, None)
            raise
        with self._lock:
            pending.next_at = 0.0

    def _sample(self, db: sqlite3.Connection, snap: Snapshot) -> None:
        """In the writer's transaction: a sample for each recording that is due; one at its cap stops."""
        with self._lock:
            for rec_id, meter in self._meters.items():
                if self._live.get(rec_id) is not None and self._live[rec_id].next_at != math.inf:
                    meter.add(snap)
            due = [r for r in self._live.values() if snap.timestamp >= r.next_at]
            for rec in due:
                rec.next_at = snap.timestamp + rec.interval_s - 1e-3
                rec.samples += 1
            full = [r for r in due if r.samples >= MAX_RECORDING_SAMPLES]
            receipts = {r.id: self._meters.pop(r.id).result() for r in full if r.id in self._meters}
            for rec in full:
                del self._live[rec.id]
        rows = [(rec.id, snap.timestamp, g.index, g.utilization_percent, g.memory_used_bytes, g.memory_percent,
                 g.temperature_c, g.power_w)
                for rec in due for g in snap.gpus if g.error is None and (rec.gpus is None or g.index in rec.gpus)]
        if not snap.gpus:  # no GPU: the host is what is recorded (CPU %, memory, CPU temperature), as row HOST_ROW
            host = snap.host
            rows += [(rec.id, snap.timestamp, HOST_ROW, host.cpu_percent, host.memory_used_bytes,
                      host.memory_percent, host.cpu_temperature_c, None) for rec in due]
        db.executemany("INSERT INTO recording_samples VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        for rec in full:  # at its sample cap: stopped, with its statistics, in this same transaction
            _finish(db, rec.id, snap.timestamp, receipts.get(rec.id))

    def stop(self, rec_id: str, stopped: float) -> RecordingView:
        self._history.flush()  # what was collected before the stop belongs to the recording
        with self._lock:
            self._live.pop(rec_id, None)
            meter = self._meters.pop(rec_id, None)
        with self._history.reader() as db, immediate(db):
            _finish(db, rec_id, stopped, meter.result() if meter is not None else None)
        found = self.get(rec_id)
        assert found is not None
        return found

    def get(self, rec_id: str) -> RecordingView | None:
        with self._history.reader() as db:
            row = db.execute("SELECT id, label, gpus, interval_s, started, stopped, stats FROM recordings WHERE id = ?",
                             (rec_id,)).fetchone()
            if row is None:
                return None
            count = db.execute("SELECT count(DISTINCT ts) FROM recording_samples WHERE rec = ?",
                               (rec_id,)).fetchone()[0]
        return _recording_view(row, count)

    def newest(self, limit: int = 100) -> list[RecordingView]:
        with self._history.reader() as db:
            rows = db.execute("SELECT id, label, gpus, interval_s, started, stopped, stats FROM recordings "
                              "ORDER BY started DESC LIMIT ?", (limit,)).fetchall()
            counts = dict(db.execute("SELECT rec, count(DISTINCT ts) FROM recording_samples GROUP BY rec").fetchall())
        return [_recording_view(row, counts.get(row[0], 0)) for row in rows]


def _trim(db: sqlite3.Connection) -> None:
    old = "SELECT id FROM recordings WHERE stopped IS NOT NULL ORDER BY started DESC LIMIT -1 OFFSET ?"
    db.execute(f"DELETE FROM recording_samples WHERE rec IN ({old})", (MAX_RECORDINGS_KEPT,))
    db.execute(f"DELETE FROM recordings WHERE id IN ({old})", (MAX_RECORDINGS_KEPT,))


def _finish(db: sqlite3.Connection, rec_id: str, stopped: float, receipt: JsonObject | None,
            interrupted: bool = False) -> None:
    """Stopped: its per-GPU statistics and its receipt (energy with idle apart, power, heat, throttling, XIDs, fans),
    kept together; a recording stopped before receipts were kept has the statistics alone."""
    stats: dict[str, object] = {"gpu_stats": recording_stats(db, rec_id), "receipt": receipt}
    if interrupted:
        stats["interrupted"] = True
    db.execute("UPDATE recordings SET stopped = ?, stats = ? WHERE id = ?", (stopped, json.dumps(stats), rec_id))


class Stat(TypedDict):
    min: float | None
    max: float | None
    mean: float | None


class GpuStats(TypedDict):
    """What a recording sampled of one GPU: how many samples, and min/max/mean of each metric."""

    samples: int
    utilization_percent: Stat
    memory_used_bytes: Stat
    memory_percent: Stat
    temperature_c: Stat
    power_w: Stat


class RecordingView(TypedDict):
    """A recording as the API answers it."""

    id: str
    label: str
    gpus: list[int] | None
    interval_s: float
    started_at: float
    stopped_at: float | None
    duration_s: float
    sample_count: int
    state: str
    gpu_stats: dict[str, GpuStats] | None
    receipt: JsonObject | None


_METRICS = ("utilization_percent", "memory_used_bytes", "memory_percent", "temperature_c", "power_w")


def _stat(values: Sequence[float | None], i: int) -> Stat:
    mean = values[3 * i + 2]
    return {"min": values[3 * i], "max": values[3 * i + 1], "mean": round(mean, 3) if mean is not None else None}


def recording_stats(db: sqlite3.Connection, rec_id: str) -> dict[str, GpuStats]:
    """Per-GPU min/max/mean of what a recording sampled: {"0": {"utilization_percent": {...}, ...}}."""
    select = ", ".join(f"min({m}), max({m}), avg({m})" for m in _METRICS)
    stats: dict[str, GpuStats] = {}
    for row in db.execute(f"SELECT gpu, count(*), {select} FROM recording_samples WHERE rec = ? GROUP BY gpu "
                          "ORDER BY gpu", (rec_id,)):
        values: Sequence[float | None] = row[2:]
        stats[str(row[0])] = GpuStats(samples=row[1], utilization_percent=_stat(values, 0),
                                      memory_used_bytes=_stat(values, 1), memory_percent=_stat(values, 2),
                                      temperature_c=_stat(values, 3), power_w=_stat(values, 4))
    return stats


def _recording_view(row: tuple[str, str, str | None, float, float, float | None, str | None],
                    sample_count: int) -> RecordingView:
    rec_id, label, gpus, interval_s, started, stopped, stats = row
    kept = json.loads(stats) if stats else None
    receipt, interrupted = None, False
    if isinstance(kept, dict) and "gpu_stats" in kept:  # the statistics and the receipt
        kept, receipt, interrupted = kept["gpu_stats"], kept.get("receipt"), kept.get("interrupted") is True
    return {"id": rec_id, "label": label, "gpus": json.loads(gpus) if gpus else None, "interval_s": interval_s,
            "started_at": started, "stopped_at": stopped,
            "duration_s": round((stopped or time.time()) - started, 3), "sample_count": sample_count,
            "state": "interrupted" if interrupted else "stopped" if stopped else "recording", "gpu_stats": kept,
            "receipt": receipt}
