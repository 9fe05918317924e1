"""The lean per-tick path into /proc: one read of ``/proc/<pid>/stat`` gives a process's start time (to
tell a recycled PID), its CPU time, its RSS and whether it is a zombie. Names, users and command lines
change rarely and are read once per process (cached by the caller by (pid, start time)). ``/proc/stat`` gives
the machine's CPU time; ``cpu_baseline`` reads both for every process at once.

psutil is imported only where /proc/stat has no boot time: a one-shot answer reads its baseline before that import.
"""

from __future__ import annotations

import os
import pwd
import time
from functools import lru_cache
from pathlib import Path
from typing import Callable

from ..core.record import record
from . import procscan
from .procscan import CLOCK_TICKS

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


@record
class Stat:
    start_ticks: int
    cpu_seconds: float
    rss_bytes: int
    state: str
    comm: str
    ppid: int = 0  # its parent (0: none, as for PID 1)


def read_stat(proc_root: Path | str, pid: int) -> Stat:
    """Raises FileNotFoundError/ProcessLookupError for a vanished process, PermissionError when denied."""
    data = procscan.stat_bytes(str(proc_root), pid)
    close = data.rindex(b")")  # the command name may itself contain ") "
    comm = data[data.index(b"(") + 1:close].decode(errors="replace")
    fields = data[close + 2:].split()
    # fields[0] is field 3 (state) of proc(5): ppid 4, utime 14, stime 15, starttime 22, rss 24
    return Stat(start_ticks=int(fields[19]), cpu_seconds=(int(fields[11]) + int(fields[12])) / CLOCK_TICKS,
                rss_bytes=int(fields[21]) * PAGE_SIZE, state=fields[0].decode(), comm=comm, ppid=int(fields[1]))


@record
class CpuBaseline:
    """The CPU time of the machine and of every process at one moment (``at``, on the collector's clock). A
    one-shot answer reads it first thing, so that its CPU % spans its own start-up (imports, opening NVML)
    instead of a wait after it."""

    at: float
    machine: tuple[int, int] | None  # (busy, total) ticks of /proc/stat; None when it could not be read
    processes: dict[int, tuple[int, float]]  # pid -> (start ticks, CPU seconds), this process left out
    own_ticks: int  # this process's CPU time (own_ticks()): its start-up is taken out of the machine's CPU %
    kernel_threads: frozenset[int] = frozenset()  # the PIDs it found to be kernel threads (a full scan's finding)


def cpu_baseline(proc_root: str = "/proc", clock: Callable[[], float] = time.monotonic) -> CpuBaseline:
    return CpuBaseline(*procscan.scan(proc_root, clock))


@lru_cache(maxsize=8)
def _boot_time(proc_root: str) -> float:
    try:
        with open(f"{proc_root}/stat", "rb") as handle:
            for line in handle:
                if line.startswith(b"btime "):
                    return float(line.split()[1])
    except OSError:
        pass
    import psutil

    return float(psutil.boot_time())


def boot_time(proc_root: str) -> float | None:
    """When the machine whose /proc this is booted (``btime`` of its /proc/stat), in seconds since the epoch;
    None while no /proc/stat says (a broken one: start times are then unknown, the processes still listed)."""
    try:
        return _boot_time(proc_root)  # a success is cached; a failure is tried again next time
    except (RuntimeError, OSError, ValueError):
        return None


def start_time(stat: Stat, proc_root: Path | str = "/proc") -> float | None:
    """Seconds since the epoch, as psutil's create_time(); None when the boot time is unknown."""
    booted = boot_time(str(proc_root))
    return None if booted is None else round(booted + stat.start_ticks / CLOCK_TICKS, 2)


def read_cmdline(proc_root: Path, pid: int) -> list[str]:
    with open(proc_root / str(pid) / "cmdline", "rb") as handle:
        data = handle.read()
    return [part.decode(errors="replace") for part in data.rstrip(b"\0").split(b"\0")] if data else []


def read_uid(proc_root: Path, pid: int) -> int | None:
    with open(proc_root / str(pid) / "status", "rb") as handle:
        for line in handle:
            if line.startswith(b"Uid:"):
                return int(line.split()[1])
    return None


@lru_cache(maxsize=1024)
def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def process_name(comm: str, argv: list[str]) -> str:
    """psutil's rule: the kernel truncates comm to 15 bytes; then argv[0]'s base name, when it starts the same."""
    if len(comm) >= 15 and argv:
        base = os.path.basename(argv[0])
        if base.startswith(comm):
            return base
    return comm
