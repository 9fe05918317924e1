"""Scratch folders in the temporary directory that do not outlive their maker: each is named ``<prefix><pid>-…``
and each new one first removes those of its kind whose maker is gone. A ``kill -9`` runs no cleanup and a one-shot
answer skips its exit hooks for speed, so the next start removes what they left; a folder whose pid is alive (or
taken by another process since), or that belongs to another user, is left."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def sweep(prefix: str, folder: Path | None = None) -> None:
    """Remove ``prefix<pid>-*`` folders of this user whose process has ended."""
    for tree in (folder or Path(tempfile.gettempdir())).glob(f"{prefix}*-*"):
        pid = tree.name[len(prefix):].partition("-")[0]
        try:
            if not pid.isdigit() or tree.stat().st_uid != os.getuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(tree, True)
        except OSError:
            continue  # alive under another user (EPERM), or the tree went meanwhile


def make(prefix: str) -> Path:
    """A new scratch folder of this process (its kind swept first)."""
    sweep(prefix)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))


# The signals a process ends on by raising in its handler (a terminated explain's SystemExit, Ctrl-C's interrupt)
ENDING = frozenset({signal.SIGTERM, signal.SIGINT})


@contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A scratch folder for the block, removed after it (and, if the process is killed in it, by the next). A signal
    that ends the process waits while the folder is made: taken between its making and the block that removes it,
    it would leave the folder behind (seen under a loaded machine's SIGTERM)."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, ENDING)
    path: Path | None = None
    try:
        path = make(prefix)
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)  # a signal that came meanwhile is taken here
        yield path
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        if path is not None:
            shutil.rmtree(path, True)
