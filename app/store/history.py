"""The history's writer and readers: one writer thread, fault recovery, and readers that never outlive the file.

The collector hands each snapshot to ``submit``; one writer thread commits each tick in one transaction (at most one
interval at risk). A failed write (a full disk, a locked or read-only file) is logged and counted, live monitoring goes
on, and the writer reconnects every few seconds until writes succeed again. A database that is not a database (or fails
its quick check), at start or while running, is moved aside with a warning and a new one is started (app.store.schema
says whose file it is; app.store.lock keeps a second FanWhy off it); a file put in place of ours (another inode) is
kept if it is a history and left alone if it is another program's; a deleted folder is made again; a reader never
answers from a deleted or replaced file. /api/health reports each as ``degraded`` with its reason.

Rollback journal (TRUNCATE), not WAL: WAL maps a ``-shm`` file into memory, and a fault in that file (made immutable
while running, measured) kills the process with SIGBUS; a rollback journal maps nothing. The rows, what is kept and the
queries: app.store.rows, .retention, .queries; recordings hook in (``tick_hooks``, ``trim_hooks``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..core.jsonvalue import EventRow, Json
from ..core.snapshot import Snapshot
from ..core.threads import spawn
from . import lock, queries, retention, rows
from .historyfile import HistoryFile
from .queries import Window

log = logging.getLogger(__name__)

RECONNECT_S = 5.0
_CORRUPT = ("SQLITE_NOTADB", "SQLITE_CORRUPT")


class History:
    def __init__(self, path: str | Path, retention_hours: float = 168.0, raw_hours: float = 1.0,
                 max_bytes: int = 512 * 1024 * 1024, clock: Callable[[], float] = time.time,
                 keep: Callable[[Snapshot], EventRow | None] = lambda snap: None):
        self.path = Path(path)
        self.retention_s = retention_hours * 3600.0
        self.raw_s = raw_hours * 3600.0
        self.max_bytes = max_bytes
        self._clock = clock
        self._queue: queue.Queue[Snapshot | _Flush | None] = queue.Queue(maxsize=1000)
        self._local = threading.local()
        self._thread: threading.Thread | None = None
        self._write: sqlite3.Connection | None = None
        self._lock: int | None = None  # the file's lock (app.store.lock): one FanWhy writes it
        self._rolled_minute: int | None = None
        self._maintained_at = 0.0
        self.keep = keep  # which verdicts are kept as events (handed in: app.verdict.changes decides; none by default)
        # run by the writer: inside each tick's transaction, and with the once-a-minute trim (app.store.recordings)
        self.tick_hooks: list[Callable[[sqlite3.Connection, Snapshot], None]] = []
        self.trim_hooks: list[Callable[[sqlite3.Connection], None]] = []
        self.error: str | None = None
        self.write_failures = 0
        self.written_ticks = 0
        self.moved_aside: Path | None = None
        self._generation = 0  # bumped on every reconnect: readers open a new connection
        self._reconnect_at = 0.0
        self.file = HistoryFile(self.path, clock)  # its checks, its identity, its faults

    # -- opening ----------------------------------------------------------------------------
    def open(self) -> History:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with lock.held(self.path) as self._lock:  # HistoryInUse when another FanWhy writes this file
            try:
                self._write = self.file.connect_checked()
            except sqlite3.DatabaseError as error:
                if isinstance(error, sqlite3.OperationalError):
                    raise  # unreadable or unwritable, not broken: nothing to move aside
                self.moved_aside = self.file.move_aside(error)
                self._write = self.file.connect_checked()
        self._opened()
        return self

    def _opened(self) -> None:
        self._generation += 1
        self.file.opened()

    @property
    def faults(self) -> list[tuple[float, str]]:
        return self.file.faults

    def recent_faults(self) -> list[str]:
        """What went wrong and was dealt with lately (for /api/health)."""
        return self.file.recent_faults()

    def note_read_error(self, error: sqlite3.Error) -> None:
        """A reader failed: the writer looks at the file before its next write."""
        self.error = f"history read failed: {type(error).__name__}: {error}"
        self.file.fault_seen.set()

    # -- faults while running -------------------------------------------------------------
    def _reopen(self, why: str) -> None:
        """A new write connection to whatever is at our path now: a usable history is kept, a broken file is
        moved aside and a new history started."""
        if self._write is not None:
            with contextlib.suppress(sqlite3.Error):
                self._write.close()
            self._write = None
        self.file.recreate_folder()
        aside = None
        try:
            self._write = self.file.connect_checked()
            self.file.fault(f"{why}; reopened")
        except sqlite3.OperationalError:
            raise  # not writable now: write() keeps trying every RECONNECT_S
        except sqlite3.DatabaseError as error:
            aside = self.file.move_aside(error, why)
            self._write = self.file.connect_checked()
        self._rolled_minute = None
        self._opened()
        self.moved_aside = aside or self.moved_aside

    def start(self) -> None:
        if self._thread is None:
            self._thread = spawn(self._run, "fanwhy-history")

    def close(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout=10)
            self._thread = None
        if self._write is not None:
            self._write.close()
            self._write = None
        lock.release(self._lock)
        self._lock = None

    # -- writing ----------------------------------------------------------------------------
    def submit(self, snap: Snapshot) -> None:
        """Called by the collector once per tick; never blocks it."""
        try:
            self._queue.put_nowait(snap)
        except queue.Full:
            self.write_failures += 1
            self.error = "the history writer is behind; a snapshot was dropped"

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until all submitted is committed (tests, recordings, shutdown); with no writer thread, commit here."""
        if self._thread is None:
            self._write_batch(self._waiting())
            return True
        marker = _Flush(threading.Event())
        self._queue.put(marker)
        return marker.done.wait(timeout)

    def _waiting(self) -> list[Snapshot | _Flush | None]:
        """Everything queued now, without waiting."""
        batch: list[Snapshot | _Flush | None] = []
        with contextlib.suppress(queue.Empty):
            while True:
                batch.append(self._queue.get_nowait())
        return batch

    def _write_batch(self, batch: Sequence[Snapshot | _Flush | None]) -> None:
        if snaps := [s for s in batch if isinstance(s, Snapshot)]:
            self.write(snaps)

    def _run(self) -> None:
        while True:
            batch = [self._queue.get(), *self._waiting()]  # what else is waiting: one transaction for all of it
            self._write_batch(batch)
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
            if (changed := self.file.changed()) is not None:  # replaced, deleted, broken
                self._reopen(changed)
            db = self._write
            assert db is not None
            db.execute("BEGIN")
            for snap in snaps:
                self._insert(db, snap)
            db.execute("COMMIT")
            self.written_ticks += len(snaps)
            db.execute("BEGIN IMMEDIATE")  # roll-up and trims: one sync; IMMEDIATE, or read-then-write can deadlock
            self._maintain(db, snaps[-1].timestamp)
            db.execute("COMMIT")
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
        except Exception:
            self.write_failures += 1
            if self._write is not None:  # the next batch must not start inside this one's transaction
                with contextlib.suppress(sqlite3.Error):
                    self._write.execute("ROLLBACK")
            raise  # the thread's supervisor records it and starts the writer again (app.core.threads)

    def _recover_corrupt(self, error: sqlite3.Error) -> None:
        try:
            if self._write is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._write.close()
                self._write = None
            aside = self.file.move_aside(error)
            self._write = self.file.connect_checked()
            self._rolled_minute = None
            self._opened()
            self.moved_aside = aside
        except (OSError, sqlite3.Error) as again:
            self.error = f"history broken and not recovered: {again}"
            self._reconnect_at = self._clock() + RECONNECT_S

    def _insert(self, db: sqlite3.Connection, snap: Snapshot) -> None:
        rows.insert(db, snap, self.keep(snap))
        for hook in self.tick_hooks:
            hook(db, snap)

    def _maintain(self, db: sqlite3.Connection, now: float) -> None:
        """Roll complete minutes up; once a minute, trim raw rows, old minutes and the size."""
        minute = int(now // 60) * 60
        if self._rolled_minute is None:
            row = db.execute("SELECT max(minute) FROM gpu_minute").fetchone()
            self._rolled_minute = int(row[0]) + 60 if row and row[0] is not None else minute
        if minute > self._rolled_minute:
            retention.roll_up(db, self._rolled_minute, minute)
            self._rolled_minute = minute
        if now - self._maintained_at >= 60:
            self._maintained_at = now
            retention.trim(db, now, self.raw_s, self.retention_s)
            for hook in self.trim_hooks:
                hook(db)
            for cut in retention.enforce_size(db, self.max_bytes):
                self.file.fault(cut)

    # -- reading ----------------------------------------------------------------------------
    @contextmanager
    def reader(self) -> Iterator[sqlite3.Connection]:
        """A connection of this thread's own (SQLite connections are not shared across threads here), opened
        anew after the writer reopened the file. A failure is noted for the writer, then raised."""
        if self.file.gone():  # deleted or replaced: never an answer from the old file
            self.file.fault_seen.set()
            raise sqlite3.OperationalError(f"history file {self.path} was deleted or replaced; the writer is "
                                           "starting a new one")
        connection = getattr(self._local, "connection", None)
        if connection is None or getattr(self._local, "generation", None) != self._generation:
            if connection is not None:
                with contextlib.suppress(sqlite3.Error):
                    connection.close()
            connection = self.file.connect()
            self._local.connection, self._local.generation = connection, self._generation
        try:
            yield connection
        except sqlite3.DatabaseError as error:
            if not isinstance(error, sqlite3.OperationalError) or "readonly" in str(error):
                self.note_read_error(error)
            raise

    def window(self, since: float, until: float, step: float | None, interval_s: float = 1.0) -> Window:
        """Which table answers [since, until] at ``step`` seconds, or HistoryError for a bad range."""
        return queries.plan(since, until, step, now=self._clock(), raw_s=self.raw_s, retention_s=self.retention_s,
                            interval_s=interval_s)

    def gpu_series(self, gpu: int, metric: str, win: Window) -> list[list[float | None]]:
        with self.reader() as db:
            return queries.series(db, "gpu", gpu, metric, win)

    def host_series(self, metric: str, win: Window) -> list[list[float | None]]:
        with self.reader() as db:
            return queries.series(db, "host", 0, metric, win)

    def fan_series(self, fan: str, metric: str, win: Window) -> list[list[float | None]]:
        with self.reader() as db:
            return queries.series(db, "fan", fan, metric, win)

    def process_series(self, metric: str, win: Window, pid: int | None = None, container: str | None = None
                       ) -> list[list[float | None]]:
        with self.reader() as db:
            return queries.process_series(db, metric, win, pid, container)

    def top_processes(self, since: float, until: float, limit: int = 5) -> list[dict[str, object]]:
        """The processes with the most GPU energy (then SM) in a window."""
        with self.reader() as db:
            return queries.top_processes(db, since, until, self._clock() - self.raw_s, limit)

    def verdicts(self, since: float, until: float) -> list[tuple[float, str, dict[str, Json]]]:
        with self.reader() as db:
            return queries.verdicts(db, since, until)

    def alerts(self, since: float, until: float, limit: int = 200) -> list[dict[str, object]]:
        with self.reader() as db:
            return queries.alerts(db, since, until, limit)

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
