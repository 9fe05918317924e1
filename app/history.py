"""History in SQLite (WAL): full rate for the last hour, then min/mean/max per minute up to the retention.

The collector hands each snapshot to ``submit``; one writer thread commits each tick in one
transaction, so at most one interval of data is at risk. A write that fails (a full disk, a locked or
broken file) is logged and counted, and live monitoring goes on. A database that is not a database
(or fails its quick check) is moved aside with a warning and a new one is started.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from app.model import Alert, Snapshot

log = logging.getLogger(__name__)

GPU_METRICS = ("utilization_percent", "memory_used_bytes", "memory_percent", "temperature_c", "power_w",
               "fan_speed_percent", "clock_sm_mhz")
PROCESS_METRICS = ("gpu_memory_bytes", "sm_percent", "power_w", "energy_wh", "cpu_percent")
MAX_POINTS = 20_000
_COLUMN = {"gpu_memory_bytes": "mem", "sm_percent": "sm", "power_w": "power", "energy_wh": "energy_wh",
           "cpu_percent": "cpu"}

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS gpu_raw (ts REAL NOT NULL, gpu INTEGER NOT NULL,
  {", ".join(f"{m} REAL" for m in GPU_METRICS)});
CREATE INDEX IF NOT EXISTS gpu_raw_gpu_ts ON gpu_raw (gpu, ts);
CREATE TABLE IF NOT EXISTS gpu_minute (minute INTEGER NOT NULL, gpu INTEGER NOT NULL, n INTEGER NOT NULL,
  {", ".join(f"{m}_min REAL, {m}_mean REAL, {m}_max REAL" for m in GPU_METRICS)}, PRIMARY KEY (gpu, minute));
CREATE TABLE IF NOT EXISTS proc_raw (ts REAL NOT NULL, pid INTEGER NOT NULL, start REAL, name TEXT, user TEXT,
  container TEXT, container_name TEXT, mem REAL, sm REAL, power REAL, energy_wh REAL, cpu REAL);
CREATE INDEX IF NOT EXISTS proc_raw_pid_ts ON proc_raw (pid, ts);
CREATE INDEX IF NOT EXISTS proc_raw_container_ts ON proc_raw (container, ts);
CREATE TABLE IF NOT EXISTS proc_minute (minute INTEGER NOT NULL, pid INTEGER NOT NULL, start REAL, name TEXT,
  user TEXT, container TEXT, container_name TEXT, n INTEGER,
  mem_min REAL, mem_mean REAL, mem_max REAL, sm_min REAL, sm_mean REAL, sm_max REAL,
  power_min REAL, power_mean REAL, power_max REAL, energy_wh_min REAL, energy_wh_mean REAL, energy_wh_max REAL,
  cpu_min REAL, cpu_mean REAL, cpu_max REAL, PRIMARY KEY (pid, start, minute));
CREATE INDEX IF NOT EXISTS proc_minute_container ON proc_minute (container, minute);
CREATE TABLE IF NOT EXISTS events (ts REAL NOT NULL, kind TEXT NOT NULL, gpu INTEGER, rule TEXT, state TEXT,
  severity TEXT, message TEXT, data TEXT);
CREATE INDEX IF NOT EXISTS events_ts ON events (ts);
CREATE TABLE IF NOT EXISTS recordings (id TEXT PRIMARY KEY, label TEXT, gpus TEXT, interval_s REAL,
  started REAL, stopped REAL, stats TEXT);
CREATE TABLE IF NOT EXISTS recording_samples (rec TEXT NOT NULL, ts REAL NOT NULL, gpu INTEGER NOT NULL,
  utilization_percent REAL, memory_used_bytes REAL, memory_percent REAL, temperature_c REAL, power_w REAL);
CREATE INDEX IF NOT EXISTS recording_samples_rec ON recording_samples (rec, gpu);
"""


class HistoryError(ValueError):
    """A history query that cannot be answered as asked (400 with this message)."""


def default_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "fanwhy" / "history.db"


@dataclass(frozen=True)
class Window:
    since: float
    until: float
    step: float
    source: str


@dataclass
class _Recording:
    id: str
    gpus: tuple[int, ...] | None
    interval_s: float
    next_at: float = 0.0


class History:
    def __init__(self, path: str | Path, retention_hours: float = 168.0, raw_hours: float = 1.0,
                 max_bytes: int = 512 * 1024 * 1024, clock: Callable[[], float] = time.time):
        self.path = Path(path)
        self.retention_s = retention_hours * 3600.0
        self.raw_s = raw_hours * 3600.0
        self.max_bytes = max_bytes
        self._clock = clock
        self._queue: queue.Queue[Snapshot | None] = queue.Queue(maxsize=1000)
        self._local = threading.local()
        self._thread: threading.Thread | None = None
        self._write: sqlite3.Connection | None = None
        self._rolled_minute: int | None = None
        self._maintained_at = 0.0
        self._last_headline: str | None = None
        self._last_minute: int | None = None
        self._recordings: dict[str, _Recording] = {}
        self._recordings_lock = threading.Lock()
        self.error: str | None = None
        self.write_failures = 0
        self.written_ticks = 0
        self.moved_aside: Path | None = None

    # -- opening ----------------------------------------------------------------------------
    def open(self) -> History:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._write = self._connect_checked()
        except sqlite3.DatabaseError as error:
            self._move_aside(error)
            self._write = self._connect_checked()
        return self

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(str(self.path), timeout=5.0, check_same_thread=False, isolation_level=None)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        return connection

    def _connect_checked(self) -> sqlite3.Connection:
        connection = self._connect()
        try:
            verdict = connection.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {verdict}")
            connection.executescript(SCHEMA)
        except sqlite3.DatabaseError:
            connection.close()
            raise
        return connection

    def _move_aside(self, error: Exception) -> None:
        aside = self.path.with_name(f"{self.path.name}.corrupt-{int(self._clock())}")
        for suffix in ("", "-wal", "-shm"):
            source = Path(str(self.path) + suffix)
            if source.exists():
                source.rename(Path(str(aside) + suffix))
        self.moved_aside = aside
        log.warning("history database %s is unreadable (%s); moved aside to %s, starting a new one",
                    self.path, error, aside)

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="fanwhy-history", daemon=True)
            self._thread.start()

    def close(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout=10)
            self._thread = None
        if self._write is not None:
            self._write.close()
            self._write = None

    # -- writing ----------------------------------------------------------------------------
    def submit(self, snap: Snapshot) -> None:
        """Called by the collector once per tick; never blocks it."""
        try:
            self._queue.put_nowait(snap)
        except queue.Full:
            self.write_failures += 1
            self.error = "the history writer is behind; a snapshot was dropped"

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything submitted so far is committed (for tests, recordings and shutdown)."""
        done = threading.Event()
        marker = _Flush(done)
        self._queue.put(marker)  # type: ignore[arg-type]
        return done.wait(timeout)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            batch = [item]
            while True:  # take what else is waiting: one transaction for all of it
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            snaps = [s for s in batch if isinstance(s, Snapshot)]
            if snaps:
                self.write(snaps)
            for marker in batch:
                if isinstance(marker, _Flush):
                    marker.done.set()
            if any(s is None for s in batch):
                return

    def write(self, snaps: Sequence[Snapshot]) -> None:
        """Write snapshots in one transaction, then roll up and trim. Errors are logged, not raised."""
        assert self._write is not None, "open() first"
        db = self._write
        try:
            db.execute("BEGIN")
            for snap in snaps:
                self._insert(db, snap)
            db.execute("COMMIT")
            self.written_ticks += len(snaps)
            self._maintain(db, snaps[-1].timestamp)
            self.error = None
        except sqlite3.Error as error:
            self.write_failures += 1
            self.error = f"history write failed: {type(error).__name__}: {error}"
            log.warning("%s (live monitoring goes on)", self.error)
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")

    def _insert(self, db: sqlite3.Connection, snap: Snapshot) -> None:
        ts = snap.timestamp
        placeholders = ", ".join("?" * (len(GPU_METRICS) + 2))
        db.executemany(
            f"INSERT INTO gpu_raw (ts, gpu, {', '.join(GPU_METRICS)}) VALUES ({placeholders})",
            [(ts, g.index, *(getattr(g, m) for m in GPU_METRICS)) for g in snap.gpus if g.error is None])
        rows = []
        for p in snap.processes:
            if not p.gpus:
                continue
            container = p.container.id if p.container else None
            rows.append((ts, p.pid, p.start_time, p.name, p.user, container,
                         p.container.name if p.container else None, p.gpu_memory_bytes, p.sm_percent, p.power_w,
                         p.energy_wh, p.cpu_percent))
        for c in snap.containers:  # idle GPU containers and inferred memory: a row of their own
            if not c.pids:
                rows.append((ts, 0, None, None, None, c.container.id, c.container.name, c.gpu_memory_bytes,
                             c.sm_percent, c.power_w, c.energy_wh, c.cpu_percent))
        db.executemany("INSERT INTO proc_raw VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        events = [self._alert_row(a) for a in snap.alert_events]
        if snap.verdict is not None:
            top = next((c for c in snap.verdict.causes if c.summary == snap.verdict.headline), None)
            identity = f"{top.kind}:{top.gpu_index}:{top.pid}" if top else "idle"
            minute = int(ts // 60)
            # On a change of cause (not of its numbers), and once a minute so durations can be measured.
            if identity != self._last_headline or minute != self._last_minute:
                data = {"busy": snap.verdict.busy, "confidence": snap.verdict.confidence,
                        "cause": {"kind": top.kind, "gpu": top.gpu_index, "pid": top.pid,
                                  "container": top.container} if top else None}
                events.append((ts, "verdict", top.gpu_index if top else None, top.kind if top else None, None,
                               None, snap.verdict.headline, json.dumps(data)))
                self._last_headline, self._last_minute = identity, minute
        db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", events)
        self._record(db, snap)

    @staticmethod
    def _alert_row(alert: Alert) -> tuple[Any, ...]:
        return (alert.resolved_at or alert.since, "alert", alert.gpu_index, alert.rule, alert.state, alert.severity,
                alert.message, json.dumps({"id": alert.id, "value": alert.value, "threshold": alert.threshold}))

    def _maintain(self, db: sqlite3.Connection, now: float) -> None:
        """Roll complete minutes up; once a minute, trim raw rows, old minutes and the size."""
        minute = int(now // 60) * 60
        if self._rolled_minute is None:
            row = db.execute("SELECT max(minute) FROM gpu_minute").fetchone()
            self._rolled_minute = int(row[0]) + 60 if row and row[0] is not None else minute
        if minute > self._rolled_minute:
            self._roll_up(db, self._rolled_minute, minute)
            self._rolled_minute = minute
        if now - self._maintained_at >= 60:
            self._maintained_at = now
            db.execute("DELETE FROM gpu_raw WHERE ts < ?", (now - self.raw_s,))
            db.execute("DELETE FROM proc_raw WHERE ts < ?", (now - self.raw_s,))
            horizon = now - self.retention_s
            for table, column in (("gpu_minute", "minute"), ("proc_minute", "minute"), ("events", "ts"),
                                  ("recording_samples", "ts")):
                db.execute(f"DELETE FROM {table} WHERE {column} < ?", (horizon,))
            self._enforce_size(db)

    def _roll_up(self, db: sqlite3.Connection, start: float, end: float) -> None:
        stats = ", ".join(f"min({m}), avg({m}), max({m})" for m in GPU_METRICS)
        db.execute(f"INSERT OR REPLACE INTO gpu_minute SELECT CAST(ts / 60 AS INTEGER) * 60, gpu, count(*), {stats} "
                   "FROM gpu_raw WHERE ts >= ? AND ts < ? GROUP BY 1, 2", (start, end))
        proc_stats = ", ".join(f"min({c}), avg({c}), max({c})" for c in ("mem", "sm", "power", "energy_wh", "cpu"))
        db.execute("INSERT OR REPLACE INTO proc_minute SELECT CAST(ts / 60 AS INTEGER) * 60, pid, start, "
                   f"max(name), max(user), container, max(container_name), count(*), {proc_stats} "
                   "FROM proc_raw WHERE ts >= ? AND ts < ? GROUP BY 1, pid, start, container", (start, end))

    def _enforce_size(self, db: sqlite3.Connection) -> None:
        pages, size = (db.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "page_size"))
        free = db.execute("PRAGMA freelist_count").fetchone()[0]
        if (pages - free) * size <= self.max_bytes:
            return
        oldest = db.execute("SELECT min(minute), max(minute) FROM gpu_minute").fetchone()
        if oldest[0] is None:
            return
        cut = oldest[0] + max(3600, (oldest[1] - oldest[0]) // 10)  # drop the oldest tenth (at least an hour)
        log.warning("history over its %d MB cap: dropping data before %s", self.max_bytes // 2**20, cut)
        for table, column in (("gpu_minute", "minute"), ("proc_minute", "minute"), ("events", "ts")):
            db.execute(f"DELETE FROM {table} WHERE {column} < ?", (cut,))

    # -- recordings -------------------------------------------------------------------------
    def start_recording(self, rec_id: str, label: str, gpus: Sequence[int] | None, interval_s: float,
                        started: float) -> None:
        with self._recordings_lock:
            self._recordings[rec_id] = _Recording(rec_id, tuple(gpus) if gpus is not None else None, interval_s)
        with self._reader() as db:
            db.execute("INSERT INTO recordings VALUES (?, ?, ?, ?, ?, NULL, NULL)",
                       (rec_id, label, json.dumps(list(gpus) if gpus is not None else None), interval_s, started))

    def _record(self, db: sqlite3.Connection, snap: Snapshot) -> None:
        with self._recordings_lock:
            due = [r for r in self._recordings.values() if snap.timestamp >= r.next_at]
            for rec in due:
                rec.next_at = snap.timestamp + rec.interval_s - 1e-3
        rows = [(rec.id, snap.timestamp, g.index, g.utilization_percent, g.memory_used_bytes, g.memory_percent,
                 g.temperature_c, g.power_w)
                for rec in due for g in snap.gpus if g.error is None and (rec.gpus is None or g.index in rec.gpus)]
        db.executemany("INSERT INTO recording_samples VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def stop_recording(self, rec_id: str, stopped: float) -> dict[str, Any]:
        self.flush()  # what was collected before the stop belongs to the recording
        with self._recordings_lock:
            self._recordings.pop(rec_id, None)
        with self._reader() as db:
            stats = recording_stats(db, rec_id)
            db.execute("UPDATE recordings SET stopped = ?, stats = ? WHERE id = ?",
                       (stopped, json.dumps(stats), rec_id))
        found = self.recording(rec_id)
        assert found is not None
        return found

    def recording(self, rec_id: str) -> dict[str, Any] | None:
        with self._reader() as db:
            row = db.execute("SELECT id, label, gpus, interval_s, started, stopped, stats FROM recordings WHERE id = ?",
                             (rec_id,)).fetchone()
            if row is None:
                return None
            count = db.execute("SELECT count(DISTINCT ts) FROM recording_samples WHERE rec = ?",
                               (rec_id,)).fetchone()[0]
        return _recording_view(row, count)

    def recordings(self, limit: int = 100) -> list[dict[str, Any]]:
        with self._reader() as db:
            rows = db.execute("SELECT id, label, gpus, interval_s, started, stopped, stats FROM recordings "
                              "ORDER BY started DESC LIMIT ?", (limit,)).fetchall()
            counts = dict(db.execute("SELECT rec, count(DISTINCT ts) FROM recording_samples GROUP BY rec").fetchall())
        return [_recording_view(row, counts.get(row[0], 0)) for row in rows]

    # -- reading ----------------------------------------------------------------------------
    @contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection]:
        """A connection of this thread's own (SQLite connections are not shared across threads here)."""
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._connect()
            self._local.connection = connection
        yield connection

    def window(self, since: float, until: float, step: float | None, interval_s: float = 1.0) -> Window:
        """Which table answers [since, until] at ``step`` seconds, or HistoryError for a bad range."""
        now = self._clock()
        if not (math.isfinite(since) and math.isfinite(until)) or until <= since:
            raise HistoryError("'since' must be before 'until'")
        if until - since > self.retention_s + self.raw_s:
            raise HistoryError(f"the range is longer than the retention ({self.retention_s / 3600:g} h)")
        if step is None:
            step = max(interval_s, (until - since) / 2000.0)
        if step <= 0 or not math.isfinite(step):
            raise HistoryError("'step' must be a positive number of seconds")
        if (until - since) / step > MAX_POINTS:
            raise HistoryError(f"that asks for more than {MAX_POINTS} points; use step >= "
                               f"{math.ceil((until - since) / MAX_POINTS)}")
        raw_ok = since >= now - self.raw_s - 1
        if step < 60 and raw_ok:
            return Window(since, until, step, "raw")
        return Window(since, until, max(60.0, math.ceil(step / 60.0) * 60.0), "minute")

    def gpu_series(self, gpu: int, metric: str, win: Window) -> list[list[float | None]]:
        if metric not in GPU_METRICS:
            raise HistoryError(f"unknown metric {metric!r}; one of {', '.join(GPU_METRICS)}")
        with self._reader() as db:
            if win.source == "raw":
                sql = (f"SELECT CAST(ts / ? AS INTEGER) * ? AS t, avg({metric}), min({metric}), max({metric}) "
                       "FROM gpu_raw WHERE gpu = ? AND ts >= ? AND ts <= ? GROUP BY t ORDER BY t")
            else:
                sql = (f"SELECT CAST(minute / ? AS INTEGER) * ? AS t, sum({metric}_mean * n) / sum(n), "
                       f"min({metric}_min), max({metric}_max) FROM gpu_minute WHERE gpu = ? AND minute >= ? "
                       "AND minute <= ? GROUP BY t ORDER BY t")
            return [list(r) for r in db.execute(sql, (win.step, win.step, gpu, win.since, win.until))]

    def process_series(self, metric: str, win: Window, pid: int | None = None, container: str | None = None
                       ) -> list[list[float | None]]:
        if metric not in PROCESS_METRICS:
            raise HistoryError(f"unknown metric {metric!r}; one of {', '.join(PROCESS_METRICS)}")
        column = _COLUMN[metric]
        key, value = ("pid", pid) if pid is not None else ("container", container)
        with self._reader() as db:
            if container is not None:  # a container: add up its processes at each instant first
                inner = (f"SELECT ts AS t0, sum({column}) AS v FROM proc_raw WHERE (container = ? OR "
                         "container_name = ?) AND ts >= ? AND ts <= ? GROUP BY ts") if win.source == "raw" else (
                         f"SELECT minute AS t0, sum({column}_mean) AS v FROM proc_minute WHERE (container = ? OR "
                         "container_name = ?) AND minute >= ? AND minute <= ? GROUP BY minute")
                sql = (f"SELECT CAST(t0 / ? AS INTEGER) * ? AS t, avg(v), min(v), max(v) FROM ({inner}) "
                       "GROUP BY t ORDER BY t")
                args: tuple[Any, ...] = (win.step, win.step, value, value, win.since, win.until)
            elif win.source == "raw":
                sql = (f"SELECT CAST(ts / ? AS INTEGER) * ? AS t, avg({column}), min({column}), max({column}) "
                       f"FROM proc_raw WHERE {key} = ? AND ts >= ? AND ts <= ? GROUP BY t ORDER BY t")
                args = (win.step, win.step, value, win.since, win.until)
            else:
                sql = (f"SELECT CAST(minute / ? AS INTEGER) * ? AS t, sum({column}_mean * n) / sum(n), "
                       f"min({column}_min), max({column}_max) FROM proc_minute WHERE {key} = ? AND minute >= ? "
                       "AND minute <= ? GROUP BY t ORDER BY t")
                args = (win.step, win.step, value, win.since, win.until)
            return [list(r) for r in db.execute(sql, args)]

    def top_processes(self, since: float, until: float, limit: int = 5) -> list[dict[str, Any]]:
        """The processes with the most GPU energy (then SM) in a window, from the minute rollups and raw rows."""
        with self._reader() as db:
            rows = db.execute(
                "SELECT pid, max(name), max(user), max(container_name), container, max(energy_wh) - min(energy_wh),"
                " avg(sm), max(mem) FROM (SELECT pid, name, user, container_name, container, energy_wh, sm, mem "
                "FROM proc_raw WHERE ts >= ? AND ts <= ? UNION ALL SELECT pid, name, user, container_name, container,"
                " energy_wh_max, sm_mean, mem_max FROM proc_minute WHERE minute >= ? AND minute <= ?) WHERE pid > 0 "
                "GROUP BY pid, container ORDER BY 6 DESC, 7 DESC LIMIT ?",
                (max(since, self._clock() - self.raw_s), until, since, until, limit)).fetchall()
        return [{"pid": r[0], "name": r[1], "user": r[2], "container_name": r[3], "container": r[4],
                 "energy_wh": round(r[5] or 0.0, 4), "sm_percent_mean": round(r[6], 1) if r[6] is not None else None,
                 "gpu_memory_bytes_max": r[7]} for r in rows]

    def verdicts(self, since: float, until: float) -> list[tuple[float, str, dict[str, Any]]]:
        with self._reader() as db:
            rows = db.execute("SELECT ts, message, data FROM events WHERE kind = 'verdict' AND ts >= ? AND ts <= ? "
                              "ORDER BY ts", (since, until)).fetchall()
        return [(ts, message, json.loads(data or "{}")) for ts, message, data in rows]

    def alerts(self, since: float, until: float, limit: int = 200) -> list[dict[str, Any]]:
        with self._reader() as db:
            rows = db.execute("SELECT ts, gpu, rule, state, severity, message FROM events WHERE kind = 'alert' "
                              "AND ts >= ? AND ts <= ? ORDER BY ts DESC LIMIT ?", (since, until, limit)).fetchall()
        return [dict(zip(("ts", "gpu_index", "rule", "state", "severity", "message"), r, strict=True)) for r in rows]

    def integrity(self) -> str:
        with self._reader() as db:
            return str(db.execute("PRAGMA integrity_check").fetchone()[0])

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                total += os.path.getsize(str(self.path) + suffix)
        return total


@dataclass
class _Flush:
    done: threading.Event


def recording_stats(db: sqlite3.Connection, rec_id: str) -> dict[str, Any]:
    """Per-GPU min/max/mean of what a recording sampled: {"0": {"utilization_percent": {...}, ...}}."""
    metrics = ("utilization_percent", "memory_used_bytes", "memory_percent", "temperature_c", "power_w")
    select = ", ".join(f"min({m}), max({m}), avg({m})" for m in metrics)
    stats: dict[str, Any] = {}
    for row in db.execute(f"SELECT gpu, count(*), {select} FROM recording_samples WHERE rec = ? GROUP BY gpu "
                          "ORDER BY gpu", (rec_id,)):
        gpu, count, values = row[0], row[1], row[2:]
        stats[str(gpu)] = {"samples": count, **{
            m: {"min": values[3 * i], "max": values[3 * i + 1],
                "mean": round(values[3 * i + 2], 3) if values[3 * i + 2] is not None else None}
            for i, m in enumerate(metrics)}}
    return stats


def _recording_view(row: Sequence[Any], sample_count: int) -> dict[str, Any]:
    rec_id, label, gpus, interval_s, started, stopped, stats = row
    return {"id": rec_id, "label": label, "gpus": json.loads(gpus) if gpus else None, "interval_s": interval_s,
            "started_at": started, "stopped_at": stopped,
            "duration_s": round((stopped or time.time()) - started, 3), "sample_count": sample_count,
            "state": "stopped" if stopped else "recording", "gpu_stats": json.loads(stats) if stats else None}
