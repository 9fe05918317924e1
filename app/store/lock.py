"""One writer per history file: a FanWhy holds an exclusive ``flock(2)`` on ``<history>.lock`` while its history is
open, with its PID written in it. A second FanWhy on the same file is refused at start with one line naming the
first (two writers would interleave their pasts: "while you were away" would tell one the other's). The kernel
drops the lock when the process ends, however it ends (kill -9 included): a stale lock file holds nothing.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path


class HistoryInUse(OSError):
    """Another live FanWhy writes this history."""

    def __init__(self, path: Path, pid: int | None):
        who = f"another FanWhy (PID {pid})" if pid else "another FanWhy"
        super().__init__(f"{who} writes the history {path}: give this one its own file (FANWHY_DB=PATH), or "
                         "FANWHY_DB=none for none")
        self.pid = pid


def lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def _pid_in(fd: int) -> int | None:
    try:
        written = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(written) if written.isdigit() else None


def take(path: Path) -> int:
    """The lock of the history at ``path``, held by the file descriptor returned (closed: released); HistoryInUse
    when another process holds it."""
    fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = _pid_in(fd)
        os.close(fd)
        raise HistoryInUse(path, pid) from None
    except OSError:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def holder(path: Path) -> HistoryInUse | None:
    """Who holds the history at ``path`` now (without keeping its lock), or None: a check made before serving."""
    if not lock_path(path).exists():
        return None
    try:
        os.close(take(path))
    except HistoryInUse as error:
        return error
    except OSError:
        return None  # the lock file cannot be opened here: the open of the history itself says why
    return None


@contextmanager
def held(path: Path) -> Iterator[int]:
    """The lock of ``path`` taken for a history being opened: kept once it opened, given back (and its file removed
    when it was made here) when the open fails: a file that is not FanWhy's is left as it was, with nothing beside
    it."""
    made = not lock_path(path).exists()
    fd = take(path)
    try:
        yield fd
    except BaseException:
        release(fd)
        if made:
            with suppress(OSError):
                lock_path(path).unlink()
        raise


def release(fd: int | None) -> None:
    """The lock given back (None: none was held)."""
    if fd is not None:
        os.close(fd)
