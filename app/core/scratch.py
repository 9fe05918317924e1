"""Scratch folders in the temporary directory that do not outlive their maker: each is named ``<prefix><pid>-…``
and each new one first removes those of its kind whose maker is gone. A ``kill -9`` runs no cleanup and a one-shot
answer skips its exit hooks for speed, so the next start removes what they left; a folder whose pid is alive (or
taken by another process since), or that belongs to another user, is left."""

from __future__ import annotations

import os
import shutil
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


@contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A scratch folder for the block, removed after it (and, if the process is killed in it, by the next)."""
    path = make(prefix)
    try:
        yield path
    finally:
        shutil.rmtree(path, True)
