"""Scratch folders in the temporary directory that do not outlive their maker: each is named ``<prefix><pid>-…``
and each new one first removes those of its kind whose maker is gone. A ``kill -9`` runs no cleanup and a one-shot
answer skips its exit hooks for speed, so the next start removes what they left; a folder whose pid is alive (or
taken by another process since), or that belongs to another user, is left."""

from __future__ import annotations

import os
import secrets
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
    """A new scratch folder of this process (its kind swept first) that its caller removes."""
    sweep(prefix)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))


def _candidate(prefix: str) -> Path:
    return Path(tempfile.gettempdir()) / f"{prefix}{os.getpid()}-{secrets.token_hex(4)}"


def _create(path: Path) -> None:
    path.mkdir(mode=0o700)  # as mkdtemp makes its folders: this user's alone


@contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A new scratch folder of this process (its kind swept first) for the block, removed after it (and, if the
    process is killed in it, by the next). It is named before it is made and made inside the block that removes
    it: a signal whose handler ends the process (explain's SIGTERM) may come at any point, the moment after the
    folder is made included (a loaded machine's SIGTERM once came there and left it behind)."""
    sweep(prefix)
    path = _candidate(prefix)
    try:
        while True:
            try:
                _create(path)
                break
            except FileExistsError:
                path = _candidate(prefix)
        yield path
    finally:
        shutil.rmtree(path, True)
