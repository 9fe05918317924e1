"""The file under the history: how it is opened and checked, whether the file at its path is still the one opened,
and what is done when it is not (a broken history moved aside, a deleted folder made again), each fault kept for
/api/health. app.store.history's writer asks it before each write; its readers ask it before each answer."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from .schema import APPLICATION_ID, ForeignFile, identity_of, mark, migrate, ownership

log = logging.getLogger(__name__)

FAULT_SHOWN_S = 600.0  # a recovered fault or a trim to the size cap stays in /api/health this long


class HistoryFile:
    def __init__(self, path: Path, clock: Callable[[], float]):
        self.path = path
        self._clock = clock
        self.identity: tuple[int, int] | None = None  # the file this history opened (device, inode)
        self.faults: list[tuple[float, str]] = []  # (when, what): recovered faults and trims to the cap
        self.fault_seen = threading.Event()  # a reader saw the file broken: the writer checks it

    def connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(str(self.path), timeout=5.0, check_same_thread=False, isolation_level=None)
        connection.execute("PRAGMA journal_mode=TRUNCATE")
        connection.execute("PRAGMA synchronous=NORMAL")
        return connection

    def connect_checked(self) -> sqlite3.Connection:
        """A connection to a history that passes its quick check, migrated to this version and marked as FanWhy's."""
        connection = self.connect()
        try:
            verdict = connection.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {verdict}")
            migrate(connection, self.path)
            if connection.execute("PRAGMA application_id").fetchone()[0] == 0:
                connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # marks the file as FanWhy's
        except sqlite3.DatabaseError:
            connection.close()
            raise
        return connection

    def opened(self) -> None:
        """The file at the path is now the one this history writes."""
        identity = identity_of(self.path)
        if identity is not None:
            self.identity = identity
            mark(self.path, identity)

    def ours(self) -> bool:
        """Is the file at our path the one this history opened (its header may be gone)?"""
        return (identity := identity_of(self.path)) is not None and identity == self.identity

    def gone(self) -> bool:
        """The file opened was deleted or replaced: no answer may come from it."""
        return identity_of(self.path) != self.identity

    def changed(self) -> str | None:
        """Before a write: what happened to the file since it was opened (deleted, replaced, a reader's failure), or
        None while it is the same and sound."""
        identity = identity_of(self.path)
        if identity == self.identity and not self.fault_seen.is_set():
            return None
        self.fault_seen.clear()
        what = "was deleted" if identity is None else "was replaced" if identity != self.identity else "read failed"
        return f"history file {self.path} {what}"

    def move_aside(self, error: Exception, why: str = "") -> Path:
        """Rename a broken history (and its journal) out of the way; only a file FanWhy recognises as its own."""
        if self.path.exists() and ownership(self.path) == "other" and not self.ours():
            raise ForeignFile(f"{why + ': ' if why else ''}{self.path} is not a FanWhy history ({error}); it is "
                              f"left alone and no history is written until it is removed or FANWHY_DB names "
                              f"another file")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{int(self._clock())}")
        for suffix in ("", "-journal", "-wal", "-shm"):
            source = Path(str(self.path) + suffix)
            if source.exists():
                source.rename(Path(str(aside) + suffix))
        self.fault(f"{why + ': ' if why else ''}history file {self.path} was not a usable database ({error}); "
                   f"moved aside to {aside}, a new one was started")
        return aside

    def recreate_folder(self) -> None:
        """The history's folder, made again if it was deleted; an OperationalError saying why when it cannot be."""
        if self.path.parent.is_dir():
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise sqlite3.OperationalError(f"the history's folder {self.path.parent} was deleted and cannot be "
                                           f"made again: {error.strerror}") from None
        self.fault(f"the history's folder {self.path.parent} was deleted; it was made again")

    def fault(self, what: str) -> None:
        log.warning("%s", what)
        self.faults = [*self.faults[-9:], (self._clock(), what)]

    def recent_faults(self) -> list[str]:
        """What went wrong and was dealt with lately (for /api/health)."""
        now = self._clock()
        return [what for when, what in self.faults if now - when < FAULT_SHOWN_S]
