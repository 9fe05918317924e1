"""History in SQLite: full rate for the last hour, then min/mean/max per minute up to the retention.

Over 400 lines on purpose: the writer, its fault recovery and the readers share one file's identity and the
connection generation that tells readers to reconnect; split apart, each would need the others' internals.

The collector hands each snapshot to ``submit``; one writer thread commits each tick in one
transaction, so at most one interval of data is at risk. A write that fails (a full disk, a locked or
read-only file) is logged and counted, live monitoring goes on, and the writer reconnects every few seconds
until writes succeed again. A database that is not a database (or fails its quick check), at start or while
running, is moved aside with a warning and a new one is started; FanWhy knows the file as its own by its SQLite
application id or, when garbage overwrote the header too, by the marker beside it (``.history.db.fanwhy``, the
device and inode of the file FanWhy made). A file put in place of ours (another inode) is kept if it is a history
and left alone if it is another program's. A deleted folder is made again; a reader never answers from a deleted
or replaced file. /api/health reports each of these as ``degraded`` with its reason.

Rollback journal (TRUNCATE), not WAL: WAL maps a ``-shm`` file into memory, and a fault in that file (made
immutable while running, measured) kills the process with SIGBUS; a rollback journal maps nothing. The size
cap (FANWHY_DB_MAX_MB) counts everything, recordings included: over it, the oldest tenth of every table goes.
Recordings live in app/store/recordings.py and hook into the writer (``tick_hooks``, ``trim_hooks``).

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

from ..core.model import Alert, Snapshot

log = logging.getLogger(__name__)

GPU_METRICS = ("utilization_percent", "memory_used_bytes", "memory_percent", "temperature_c", "power_w",
               "fan_speed_percent", "clock_sm_mhz")
# The host side, so a machine without a GPU (or whose fan is the CPU's) has charts too; kept like a GPU's series
# (raw for an hour, then per minute) in tables of the same shape, with one row key (host = 0).
HOST_METRICS = ("cpu_percent", "load1", "memory_percent", "memory_used_bytes", "cpu_temperature_c", "fan_rpm")
SERIES = {"gpu": GPU_METRICS, "host": HOST_METRICS}  # table prefix (and key column) -> metrics
PROCESS_METRICS = ("gpu_memory_bytes", "sm_percent", "power_w", "energy_wh", "cpu_percent")
MAX_POINTS = 20_000
RECONNECT_S = 5.0
FAULT_SHOWN_S = 600.0  # a recovered fault or a trim to the size cap stays in /api/health this long
_CORRUPT = ("SQLITE_NOTADB", "SQLITE_CORRUPT")
_COLUMN = {"gpu_memory_bytes": "mem", "sm_percent": "sm", "power_w": "power", "energy_wh": "energy_wh",
           "cpu_percent": "cpu"}

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS gpu_raw (ts REAL NOT NULL, gpu INTEGER NOT NULL,
  {", ".join(f"{m} REAL" for m in GPU_METRICS)});
CREATE INDEX IF NOT EXISTS gpu_raw_gpu_ts ON gpu_raw (gpu, ts);
CREATE TABLE IF NOT EXISTS gpu_minute (minute INTEGER NOT NULL, gpu INTEGER NOT NULL, n INTEGER NOT NULL,
  {", ".join(f"{m}_min REAL, {m}_mean REAL, {m}_max REAL" for m in GPU_METRICS)}, PRIMARY KEY (gpu, minute));
CREATE TABLE IF NOT EXISTS host_raw (ts REAL NOT NULL, host INTEGER NOT NULL,
  {", ".join(f"{m} REAL" for m in HOST_METRICS)});
CREATE INDEX IF NOT EXISTS host_raw_host_ts ON host_raw (host, ts);
CREATE TABLE IF NOT EXISTS host_minute (minute INTEGER NOT NULL, host INTEGER NOT NULL, n INTEGER NOT NULL,
  {", ".join(f"{m}_min REAL, {m}_mean REAL, {m}_max REAL" for m in HOST_METRICS)}, PRIMARY KEY (host, minute));
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


class ForeignFile(sqlite3.OperationalError):
    """The file at the history's path is not a FanWhy history: it is never moved aside or written."""


class HistoryError(ValueError):
    """A history query that cannot be answered as asked (400 with this message)."""


APPLICATION_ID = 0x46576879  # "FWhy": PRAGMA application_id of every history FanWhy creates
SQLITE_MAGIC = b"SQLite format 3\x00"


def marker_path(path: Path) -> Path:
    """The small file beside a history that names the file (device and inode) FanWhy made there: a history
    overwritten with garbage, header and all, is still known as FanWhy's by it."""
    return path.with_name(f".{path.name}.fanwhy")


def _identity_of(path: Path) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _marked(path: Path) -> tuple[int, int] | None:
    """The identity the marker beside ``path`` names, if any."""
    try:
        device, _, inode = marker_path(path).read_text(encoding="ascii").strip().partition(":")
        return int(device), int(inode)
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def ownership(path: Path) -> str:
    """``ours`` for a file FanWhy made (SQLite with its application id), ``legacy`` for a SQLite file with no
    application id (a history made before ids were set, or an empty new database), ``other`` for anything else.
    Read from the file's 100-byte header, so a broken history is still recognised; a file whose header is gone
    too (overwritten with garbage) is ``ours`` when the marker beside it names it."""
    identity = _identity_of(path)
    if identity is not None and identity == _marked(path):
        return "ours"
    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
    except OSError:
        return "other"
    if not header:
        return "legacy"  # an empty file: SQLite makes a database of it
    if len(header) < 72 or not header.startswith(SQLITE_MAGIC):
        return "other"
    app_id = int.from_bytes(header[68:72], "big")
    return "ours" if app_id == APPLICATION_ID else "legacy" if app_id == 0 else "other"


def default_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "fanwhy" / "history.db"


@dataclass(frozen=True)
class Window:
    since: float
    until: float
    step: float
    source: str


class History:
    def __init__(self, path: str | Path, retention_hours: float = 168.0, raw_hours: float = 1.0,
                 max_bytes: int = 512 * 1024 * 1024, clock: Callable[[], float] = time.time):
        self.path = Path(path)
        self.retention_s = retention_hours * 3600.0
        self.raw_s = raw_hours * 3600.0
        self.max_bytes = max_bytes
        self._clock = clock
        self._queue: queue.Queue[Snapshot | _Flush | None] = queue.Queue(maxsize=1000)
        self._local = threading.local()
        self._thread: threading.Thread | None = None
        self._write: sqlite3.Connection | None = None
        self._rolled_minute: int | None = None
        self._maintained_at = 0.0
        self._last_headline: str | None = None
        self._last_minute: int | None = None
        self._last_peak: float | None = None
        # run by the writer: inside each tick's transaction, and with the once-a-minute trim (app.store.recordings)
        self.tick_hooks: list[Callable[[sqlite3.Connection, Snapshot], None]] = []
        self.trim_hooks: list[Callable[[sqlite3.Connection], None]] = []
        self.error: str | None = None
        self.write_failures = 0
        self.written_ticks = 0
        self.moved_aside: Path | None = None
        self.faults: list[tuple[float, str]] = []  # (when, what): recovered faults and trims to the cap
        self._generation = 0  # bumped on every reconnect: readers open a new connection
        self._identity: tuple[int, int] | None = None
        self._reconnect_at = 0.0
        self._fault_seen = threading.Event()  # a reader saw the file broken: the writer checks it

    # -- opening ----------------------------------------------------------------------------
    def open(self) -> History:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._write = self._connect_checked()
        except sqlite3.DatabaseError as error:
            if isinstance(error, sqlite3.OperationalError):
                raise  # unreadable or unwritable, not broken: nothing to move aside
            aside = self._move_aside(error)
            self._write = self._connect_checked()
            self.moved_aside = aside
        self._opened()
        return self

    def _opened(self) -> None:
        self._generation += 1
        identity = _identity_of(self.path)
        if identity is not None:
            self._identity = identity
            if _marked(self.path) != identity:
                with contextlib.suppress(OSError):
                    marker_path(self.path).write_text(f"{identity[0]}:{identity[1]}\n", encoding="ascii")

    def _ours(self) -> bool:
        """Is the file at our path the one this History opened (its header may be gone)?"""
        identity = _identity_of(self.path)
        return identity is not None and identity == self._identity

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(str(self.path), timeout=5.0, check_same_thread=False, isolation_level=None)
        connection.execute("PRAGMA journal_mode=TRUNCATE")
        connection.execute("PRAGMA synchronous=NORMAL")
        return connection

    def _connect_checked(self) -> sqlite3.Connection:
        connection = self._connect()
        try:
            verdict = connection.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {verdict}")
            connection.executescript(SCHEMA)
            if connection.execute("PRAGMA application_id").fetchone()[0] == 0:
                connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # marks the file as FanWhy's
        except sqlite3.DatabaseError:
            connection.close()
            raise
        return connection

    def _move_aside(self, error: Exception, why: str = "") -> Path:
        """Rename a broken history (and its journal) out of the way; only a file FanWhy recognises as its own."""
        if self.path.exists() and ownership(self.path) == "other" and not self._ours():
            raise ForeignFile(f"{why + ': ' if why else ''}{self.path} is not a FanWhy history ({error}); it is "
                              f"left alone and no history is written until it is removed or FANWHY_DB names "
                              f"another file")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{int(self._clock())}")
        for suffix in ("", "-journal", "-wal", "-shm"):
            source = Path(str(self.path) + suffix)
            if source.exists():
                source.rename(Path(str(aside) + suffix))
        self._fault(f"{why + ': ' if why else ''}history file {self.path} was not a usable database ({error}); "
                    f"moved aside to {aside}, a new one was started")
        return aside

    def _fault(self, what: str) -> None:
        log.warning("%s", what)
        self.faults = [*self.faults[-9:], (self._clock(), what)]

    def recent_faults(self) -> list[str]:
        """What went wrong and was dealt with lately (for /api/health)."""
        now = self._clock()
        return [what for when, what in self.faults if now - when < FAULT_SHOWN_S]

    def note_read_error(self, error: sqlite3.Error) -> None:
        """A reader failed: the writer looks at the file before its next write."""
        self.error = f"history read failed: {type(error).__name__}: {error}"
        self._fault_seen.set()

    # -- faults while running -------------------------------------------------------------
    def _check_file(self) -> None:
        """Before a write: is the file at our path still the one we opened? (Replaced, deleted, broken.)"""
        try:
            stat = os.stat(self.path)
            identity: tuple[int, int] | None = (stat.st_dev, stat.st_ino)
        except OSError:
            identity = None
        if identity == self._identity and not self._fault_seen.is_set():
            return
        self._fault_seen.clear()
        what = "was deleted" if identity is None else "was replaced" if identity != self._identity else "read failed"
        self._reopen(f"history file {self.path} {what}")

    def _reopen(self, why: str) -> None:
        """A new write connection to whatever is at our path now: a usable history is kept, a broken file is
        moved aside and a new history started."""
        if self._write is not None:
            with contextlib.suppress(sqlite3.Error):
                self._write.close()
            self._write = None
        self._recreate_folder()
        aside = None
        try:
            self._write = self._connect_checked()
            self._fault(f"{why}; reopened")
        except sqlite3.OperationalError:
            raise  # not writable now: write() keeps trying every RECONNECT_S
        except sqlite3.DatabaseError as error:
            aside = self._move_aside(error, why)
            self._write = self._connect_checked()
        self._rolled_minute = None
        self._opened()
        self.moved_aside = aside or self.moved_aside

    def _recreate_folder(self) -> None:
        """The history's folder, made again if it was deleted; an OperationalError saying why when it cannot be."""
        if self.path.parent.is_dir():
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise sqlite3.OperationalError(f"the history's folder {self.path.parent} was deleted and cannot be "
                                           f"made again: {error.strerror}") from None
        self._fault(f"the history's folder {self.path.parent} was deleted; it was made again")

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
        self._queue.put(marker)
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
        """Write snapshots in one transaction, then roll up and trim. Errors are logged, not raised: a broken
        file is moved aside and replaced at once, an unwritable one is reconnected every RECONNECT_S."""
        if self._write is None and self._clock() < self._reconnect_at:
            self.write_failures += 1  # still failing: the next reconnect is due at _reconnect_at
            return
        try:
            if self._write is None:
                self._reopen("history was not writable")
            self._check_file()
            db = self._write
            assert db is not None
            db.execute("BEGIN")
            for snap in snaps:
                self._insert(db, snap)
            db.execute("COMMIT")
            self.written_ticks += len(snaps)
            self._maintain(db, snaps[-1].timestamp)
            self.error = None
        except sqlite3.Error as error:
            self.write_failures += 1
            failed = f"history write failed: {type(error).__name__}: {error}"
            if failed != self.error:
                log.warning("%s (live monitoring goes on)", failed)
            self.error = failed
            if self._write is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._write.execute("ROLLBACK")
            if getattr(error, "sqlite_errorname", "") in _CORRUPT:
                self._recover_corrupt(error)
            elif self._clock() >= self._reconnect_at:  # read-only, full, I/O: a fresh connection in a while
                if self._write is not None:
                    with contextlib.suppress(sqlite3.Error):
                        self._write.close()
                self._write = None
                self._reconnect_at = self._clock() + RECONNECT_S

    def _recover_corrupt(self, error: sqlite3.Error) -> None:
        try:
            if self._write is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._write.close()
                self._write = None
            aside = self._move_aside(error)
            self._write = self._connect_checked()
            self._rolled_minute = None
            self._opened()
            self.moved_aside = aside
        except (OSError, sqlite3.Error) as again:
            self.error = f"history broken and not recovered: {again}"
            self._reconnect_at = self._clock() + RECONNECT_S

    def _insert(self, db: sqlite3.Connection, snap: Snapshot) -> None:
        ts = snap.timestamp
        placeholders = ", ".join("?" * (len(GPU_METRICS) + 2))
        db.executemany(
            f"INSERT INTO gpu_raw (ts, gpu, {', '.join(GPU_METRICS)}) VALUES ({placeholders})",
            [(ts, g.index, *(getattr(g, m) for m in GPU_METRICS)) for g in snap.gpus if g.error is None])
        db.execute(f"INSERT INTO host_raw (ts, host, {', '.join(HOST_METRICS)}) VALUES "
                   f"({', '.join('?' * (len(HOST_METRICS) + 2))})", (ts, 0, *_host_values(snap)))
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
        verdict = self._verdict_row(snap)
        if verdict is not None:
            events.append(verdict)
        db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", events)
        for hook in self.tick_hooks:
            hook(db, snap)

    def _verdict_row(self, snap: Snapshot) -> tuple[Any, ...] | None:
        """An events row for the verdict on a change of cause (not of its numbers), once a minute so durations
        can be measured, and when the cause reaches a new peak (so "while you were away" knows it); None otherwise."""
        if snap.verdict is None:
            return None
        ts = snap.timestamp
        top = next((c for c in snap.verdict.causes if c.summary == snap.verdict.headline), None)
        identity = f"{top.kind}:{top.gpu_index}:{top.pid}" if top else "idle"
        minute = int(ts // 60)
        peak = _peak(top) if top else None
        same = identity == self._last_headline
        higher = same and peak is not None and (self._last_peak is None or peak > self._last_peak)
        if same and minute == self._last_minute and not higher:
            return None
        self._last_headline, self._last_minute = identity, minute
        self._last_peak = max(peak, self._last_peak or peak) if same and peak is not None else peak
        data = {"busy": snap.verdict.busy, "confidence": snap.verdict.confidence,
                "cause": {"kind": top.kind, "gpu": top.gpu_index, "pid": top.pid, "container": top.container,
                          "who": _who(snap, top.pid), "peak": peak} if top else None}
        return (ts, "verdict", top.gpu_index if top else None, top.kind if top else None, None, None,
                snap.verdict.headline, json.dumps(data))

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
            for table in ("gpu_raw", "host_raw", "proc_raw"):
                db.execute(f"DELETE FROM {table} WHERE ts < ?", (now - self.raw_s,))
            horizon = now - self.retention_s
            for table, column in (("gpu_minute", "minute"), ("host_minute", "minute"), ("proc_minute", "minute"),
                                  ("events", "ts"), ("recording_samples", "ts")):
                db.execute(f"DELETE FROM {table} WHERE {column} < ?", (horizon,))
            for hook in self.trim_hooks:
                hook(db)
            self._enforce_size(db)

    def _roll_up(self, db: sqlite3.Connection, start: float, end: float) -> None:
        for kind, metrics in SERIES.items():
            stats = ", ".join(f"min({m}), avg({m}), max({m})" for m in metrics)
            db.execute(f"INSERT OR REPLACE INTO {kind}_minute SELECT CAST(ts / 60 AS INTEGER) * 60, {kind}, count(*), "
                       f"{stats} FROM {kind}_raw WHERE ts >= ? AND ts < ? GROUP BY 1, 2", (start, end))
        proc_stats = ", ".join(f"min({c}), avg({c}), max({c})" for c in ("mem", "sm", "power", "energy_wh", "cpu"))
        db.execute("INSERT OR REPLACE INTO proc_minute SELECT CAST(ts / 60 AS INTEGER) * 60, pid, start, "
                   f"max(name), max(user), container, max(container_name), count(*), {proc_stats} "
                   "FROM proc_raw WHERE ts >= ? AND ts < ? GROUP BY 1, pid, start, container", (start, end))

    def _used_bytes(self, db: sqlite3.Connection) -> int:
        pages, size, free = (db.execute(f"PRAGMA {p}").fetchone()[0]
                             for p in ("page_count", "page_size", "freelist_count"))
        return int((pages - free) * size)

    def _enforce_size(self, db: sqlite3.Connection) -> None:
        """Over the cap: drop the oldest tenth of the time covered, from every table, until under it."""
        for _ in range(10):
            if self._used_bytes(db) <= self.max_bytes:
                return
            spans = [db.execute(f"SELECT min({c}), max({c}) FROM {t}").fetchone() for t, c in _TIMED]
            oldest = min((lo for lo, _ in spans if lo is not None), default=None)
            newest = max((hi for _, hi in spans if hi is not None), default=None)
            if oldest is None or newest is None:
                return
            cut = oldest + max(1.0, (newest - oldest) / 10)
            for table, column in _TIMED:
                db.execute(f"DELETE FROM {table} WHERE {column} < ?", (cut,))
            self._fault(f"history reached its {self.max_bytes / 2**20:g} MB cap (FANWHY_DB_MAX_MB): "
                        f"data before {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(cut))} was dropped")

    # -- reading ----------------------------------------------------------------------------
    @contextmanager
    def reader(self) -> Iterator[sqlite3.Connection]:
        """A connection of this thread's own (SQLite connections are not shared across threads here), opened
        anew after the writer reopened the file. A failure is noted for the writer, then raised."""
        if _identity_of(self.path) != self._identity:  # deleted or replaced: never an answer from the old file
            self._fault_seen.set()
            raise sqlite3.OperationalError(f"history file {self.path} was deleted or replaced; the writer is "
                                           "starting a new one")
        connection = getattr(self._local, "connection", None)
        if connection is None or getattr(self._local, "generation", None) != self._generation:
            if connection is not None:
                with contextlib.suppress(sqlite3.Error):
                    connection.close()
            connection = self._connect()
            self._local.connection, self._local.generation = connection, self._generation
        try:
            yield connection
        except sqlite3.DatabaseError as error:
            if not isinstance(error, sqlite3.OperationalError) or "readonly" in str(error):
                self.note_read_error(error)
            raise

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
        return self._series("gpu", gpu, metric, win)

    def host_series(self, metric: str, win: Window) -> list[list[float | None]]:
        return self._series("host", 0, metric, win)

    def _series(self, kind: str, key: int, metric: str, win: Window) -> list[list[float | None]]:
        if metric not in SERIES[kind]:
            raise HistoryError(f"unknown metric {metric!r}; one of {', '.join(SERIES[kind])}")
        with self.reader() as db:
            if win.source == "raw":
                sql = (f"SELECT CAST(ts / ? AS INTEGER) * ? AS t, avg({metric}), min({metric}), max({metric}) "
                       f"FROM {kind}_raw WHERE {kind} = ? AND ts >= ? AND ts <= ? GROUP BY t ORDER BY t")
            else:
                sql = (f"SELECT CAST(minute / ? AS INTEGER) * ? AS t, sum({metric}_mean * n) / sum(n), "
                       f"min({metric}_min), max({metric}_max) FROM {kind}_minute WHERE {kind} = ? AND minute >= ? "
                       "AND minute <= ? GROUP BY t ORDER BY t")
            return [list(r) for r in db.execute(sql, (win.step, win.step, key, win.since, win.until))]

    def process_series(self, metric: str, win: Window, pid: int | None = None, container: str | None = None
                       ) -> list[list[float | None]]:
        if metric not in PROCESS_METRICS:
            raise HistoryError(f"unknown metric {metric!r}; one of {', '.join(PROCESS_METRICS)}")
        column = _COLUMN[metric]
        key, value = ("pid", pid) if pid is not None else ("container", container)
        with self.reader() as db:
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
        with self.reader() as db:
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
        with self.reader() as db:
            rows = db.execute("SELECT ts, message, data FROM events WHERE kind = 'verdict' AND ts >= ? AND ts <= ? "
                              "ORDER BY ts", (since, until)).fetchall()
        return [(ts, message, json.loads(data or "{}")) for ts, message, data in rows]

    def alerts(self, since: float, until: float, limit: int = 200) -> list[dict[str, Any]]:
        with self.reader() as db:
            rows = db.execute("SELECT ts, gpu, rule, state, severity, message FROM events WHERE kind = 'alert' "
                              "AND ts >= ? AND ts <= ? ORDER BY ts DESC LIMIT ?", (since, until, limit)).fetchall()
        return [dict(zip(("ts", "gpu_index", "rule", "state", "severity", "message"), r, strict=True)) for r in rows]

    def integrity(self) -> str:
        with self.reader() as db:
            return str(db.execute("PRAGMA integrity_check").fetchone()[0])

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-journal"):
            with contextlib.suppress(OSError):
                total += os.path.getsize(str(self.path) + suffix)
        return total


@dataclass
class _Flush:
    done: threading.Event


_TIMED = (("gpu_raw", "ts"), ("host_raw", "ts"), ("proc_raw", "ts"), ("gpu_minute", "minute"),
          ("host_minute", "minute"), ("proc_minute", "minute"),
          ("events", "ts"), ("recording_samples", "ts"))


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


def _host_values(snap: Snapshot) -> tuple[float | int | None, ...]:
    """One host_raw row's values, in HOST_METRICS order."""
    host = snap.host
    load1 = host.load_average[0] if host.load_average else None
    fan = max((f.rpm for f in host.fans if f.rpm is not None), default=None)
    return (host.cpu_percent, load1, host.memory_percent, host.memory_used_bytes, host.cpu_temperature_c, fan)


# The number that says how strong a cause was, per kind (the verdict's numbers), for "while you were away".
PEAK_OF = {"gpu_load": ("utilization_percent", "%"), "cpu_load": ("cpu_percent", "%"), "idle_wake": ("power_w", "W"),
           "thermal_throttle": ("temperature_c", "°C")}


def _who(snap: Snapshot, pid: int | None) -> str | None:
    r"""The process a cause names, as the verdict names it (``\`python3 train.py\` (alice)``)."""
    from ..verdict.explain import label

    proc = next((p for p in snap.processes if p.pid == pid), None) if pid is not None else None
    return label(proc) if proc is not None else None


def _peak(cause: Any) -> float | None:
    key = PEAK_OF.get(cause.kind, ("", ""))[0]
    value = cause.numbers.get(key)
    return float(value) if isinstance(value, (int, float)) else None
