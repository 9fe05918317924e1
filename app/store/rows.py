"""What one snapshot writes: its GPU, host and process rows, its alert events, and a verdict event when
``app.verdict.changes`` says the cause changed."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ..core.jsonvalue import EventRow, SqlValue
from ..core.ledger import PowerLedger
from ..core.model import GpuSample
from ..core.snapshot import Alert, Snapshot
from .schema import ACTIVITY_METRICS, FAN_METRICS, GPU_METRICS, HOST_METRICS, LEDGER_METRICS

INT64 = (-(2**63), 2**63 - 1)  # what an SQLite INTEGER holds


def fit(row: Sequence[SqlValue]) -> tuple[SqlValue, ...]:
    """A row SQLite can store: an integer outside 64 bits (a sensor that read 2^64 - 1) becomes NULL, as a value the
    hardware did not report, instead of an OverflowError that loses the whole tick."""
    return tuple(None if isinstance(v, int) and not INT64[0] <= v <= INT64[1] else v for v in row)


def insert(db: sqlite3.Connection, snap: Snapshot, verdict_row: EventRow | None) -> None:
    ts = snap.timestamp
    placeholders = ", ".join("?" * (len(GPU_METRICS) + 2))
    ledgers = {ledger.gpu_index: ledger for ledger in snap.ledger}
    db.executemany(
        f"INSERT INTO gpu_raw (ts, gpu, {', '.join(GPU_METRICS)}) VALUES ({placeholders})",
        [fit((ts, g.index, *(_gpu_value(g, ledgers.get(g.index), m) for m in GPU_METRICS)))
         for g in snap.gpus if g.error is None])
    db.execute(f"INSERT INTO host_raw (ts, host, {', '.join(HOST_METRICS)}) VALUES "
               f"({', '.join('?' * (len(HOST_METRICS) + 2))})", fit((ts, 0, *host_values(snap))))
    db.executemany("INSERT INTO proc_raw VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [fit(row) for row in process_rows(snap)])
    db.executemany(f"INSERT INTO fan_raw (ts, fan, {', '.join(FAN_METRICS)}) VALUES (?, ?, ?, ?, ?)",
                   [fit((ts, f.id, f.rpm, f.percent, f.source_c)) for f in snap.fans if f.state != "dead"])
    events = [alert_row(a) for a in snap.alert_events]
    if verdict_row is not None:
        events.append(verdict_row)
    db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [fit(row) for row in events])


def _gpu_value(gpu: GpuSample, ledger: PowerLedger | None, metric: str) -> SqlValue:
    if metric in LEDGER_METRICS:
        return getattr(ledger, LEDGER_METRICS[metric]) if ledger is not None else None
    if metric in ACTIVITY_METRICS:  # the whole GPU's window; with MIG on (per GPU instance only) none is kept
        activity: SqlValue = getattr(gpu.activity, metric) if gpu.activity is not None else None
        return activity
    value: SqlValue = getattr(gpu, metric)
    return value


def process_rows(snap: Snapshot) -> list[tuple[SqlValue, ...]]:
    """A row per GPU process, and one per idle GPU container (no PIDs: inferred memory)."""
    ts = snap.timestamp
    rows: list[tuple[SqlValue, ...]] = []
    for p in snap.processes:
        if not p.gpus:
            continue
        container = p.container.id if p.container else None
        # the history's name of a process is the one a person knows it by (`python3 train.py`, not `python3`)
        rows.append((ts, p.pid, p.start_time, p.program or p.name, p.user, container,
                     p.container.name if p.container else None, p.gpu_memory_bytes, p.sm_percent, p.power_w,
                     p.energy_wh, p.cpu_percent))
    for c in snap.containers:
        if not c.pids:
            rows.append((ts, 0, None, None, None, c.container.id, c.container.name, c.gpu_memory_bytes,
                         c.sm_percent, c.power_w, c.energy_wh, c.cpu_percent))
    return rows


def alert_row(alert: Alert) -> EventRow:
    return (alert.resolved_at or alert.since, "alert", alert.gpu_index, alert.rule, alert.state, alert.severity,
            alert.message, json.dumps({"id": alert.id, "value": alert.value, "threshold": alert.threshold}))


def host_values(snap: Snapshot) -> tuple[float | int | None, ...]:
    """One host_raw row's values, in HOST_METRICS order."""
    host = snap.host
    load1 = host.load_average[0] if host.load_average else None
    fan = max((f.rpm for f in snap.fans if f.rpm is not None and f.state != "dead" and f.gpu_index is None
               and f.chip != "bmc"), default=None)  # the loudest fan of the board (a laptop's, a desktop's)
    return (host.cpu_percent, load1, host.memory_percent, host.memory_used_bytes, host.cpu_temperature_c, fan)


@contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[None]:
    """A write from a reader's connection: BEGIN IMMEDIATE takes the write lock first, so it waits for the
    writer thread (busy timeout) instead of failing at once on a read lock it would have to upgrade."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
