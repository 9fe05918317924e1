"""Real cgroups for tests: create one named like a container's and move a process into it (root only)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


def cgroup2_root() -> Path | None:
    """The writable cgroup v2 mount (unified or hybrid layout), or None."""
    with open("/proc/mounts") as mounts:
        for line in mounts:
            fields = line.split()
            if len(fields) > 2 and fields[2] == "cgroup2":
                root = Path(fields[1])
                if os.access(root, os.W_OK):
                    return root
    return None


def unavailable() -> str | None:
    if os.geteuid() != 0:
        return "needs root to create a cgroup"
    if cgroup2_root() is None:
        return "no writable cgroup v2 hierarchy"
    return None


@contextlib.contextmanager
def scope(relative: str) -> Iterator[Path]:
    """A real cgroup at <cgroup2>/<relative>, removed afterwards (its processes moved back to the root)."""
    root = cgroup2_root()
    assert root is not None
    path = root / relative
    created = []
    for part in reversed([*Path(relative).parents][:-1]):
        if not (root / part).exists():
            (root / part).mkdir()
            created.append(root / part)
    if path.exists():  # left behind by an interrupted run: empty it and start afresh
        _empty(root, path)
        path.rmdir()
    path.mkdir()
    created.append(path)
    try:
        yield path
    finally:
        for group in reversed(created):
            _empty(root, group)
            with contextlib.suppress(OSError):
                group.rmdir()


def _empty(root: Path, group: Path) -> None:
    """Move the processes of ``group`` back to the root cgroup."""
    with contextlib.suppress(OSError):
        for pid in (group / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                (root / "cgroup.procs").write_text(pid)


def move(pid: int, group: Path) -> None:
    (group / "cgroup.procs").write_text(str(pid))
