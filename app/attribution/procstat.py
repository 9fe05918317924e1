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

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


@record
class Stat:
    start_ticks: int
    cpu_seconds: float
    rss_bytes: int
    state: str
    comm: str
    ppid: int = 0  # its parent (0: none, as for PID 1)


def _stat_bytes(proc_root: Path | str, pid: int) -> bytes:
    """/proc/<pid>/stat through os-level calls (no buffered file object: this runs per process per tick)."""
    fd = os.open(f"{proc_root}/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


def read_stat(proc_root: Path | str, pid: int) -> Stat:
    """Raises FileNotFoundError/ProcessLookupError for a vanished process, PermissionError when denied."""
    data = _stat_bytes(proc_root, pid)
    close = data.rindex(b")")  # the command name may itself contain ") "
    comm = data[data.index(b"(") + 1:close].decode(errors="replace")
    fields = data[close + 2:].split()
    # fields[0] is field 3 (state) of proc(5): ppid 4, utime 14, stime 15, starttime 22, rss 24
    return Stat(start_ticks=int(fields[19]), cpu_seconds=(int(fields[11]) + int(fields[12])) / CLOCK_TICKS,
                rss_bytes=int(fields[21]) * PAGE_SIZE, state=fields[0].decode(), comm=comm, ppid=int(fields[1]))


PF_KTHREAD = 0x00200000  # proc(5) field 9, ``flags``: a kernel thread


def _read_cpu(proc_root: Path | str, pid: int) -> tuple[int, float, int]:
    """(start ticks, CPU seconds, flags) of a process: the scan of every process needs no more than this."""
    data = _stat_bytes(proc_root, pid)
    fields = data[data.rindex(b")") + 2:].split(None, 20)
    return int(fields[19]), (int(fields[11]) + int(fields[12])) / CLOCK_TICKS, int(fields[6])


def read_all_cpu(proc_root: Path | str, kernel_threads: set[int] | None = None) -> dict[int, tuple[int, float]]:
    """(start ticks, CPU seconds) of every process that can be read now, kernel threads left out: the scan for the
    busiest CPU users (a kernel thread is not a program anyone runs; its work is the kernel's, in the machine's CPU
    %). ``kernel_threads``: PIDs known to be kernel threads, not read again, and where those found are added (on a
    64-core host they are most of the processes: per-CPU workers, softirq and migration threads)."""
    root = str(proc_root)
    found: dict[int, tuple[int, float]] = {}
    listed = pids(Path(proc_root))
    if kernel_threads is not None:
        kernel_threads.intersection_update(listed)  # those that ended
    skip = kernel_threads or ()
    for pid in listed:
        if pid in skip:
            continue
        try:
            start, cpu, flags = _read_cpu(root, pid)
        except (OSError, ValueError, IndexError):  # gone, or denied, since the listing
            continue
        if flags & PF_KTHREAD:
            if kernel_threads is not None:
                kernel_threads.add(pid)
            continue
        found[pid] = (start, cpu)
    return found


def cpu_times(stat: bytes) -> tuple[int, int]:
    """(busy, total) clock ticks from /proc/stat's first line. Idle is idle + iowait; guest time is already
    inside user and nice, so it is not added again (psutil's rule)."""
    fields = [int(v) for v in stat[: stat.index(b"\n")].split()[1:9]]
    total = sum(fields)
    return total - fields[3] - fields[4], total


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


def busy_seconds(proc_root: Path | str) -> float | None:
    """The machine's busy CPU time (all CPUs, seconds) from /proc/stat; None when it cannot be read."""
    try:
        fd = os.open(f"{proc_root}/stat", os.O_RDONLY | os.O_CLOEXEC)
        try:
            head = os.read(fd, 4096)
        finally:
            os.close(fd)
        return cpu_times(head)[0] / CLOCK_TICKS
    except (OSError, ValueError):
        return None


def own_ticks() -> int:
    """The CPU time of this process (all its threads) in clock ticks, the unit of /proc/stat."""
    spent = os.times()
    return round((spent.user + spent.system) * CLOCK_TICKS)


def cpu_baseline(proc_root: str = "/proc", clock: Callable[[], float] = time.monotonic) -> CpuBaseline:
    at = clock()
    machine = None
    try:
        with open(f"{proc_root}/stat", "rb") as handle:
            machine = cpu_times(handle.read())
    except (OSError, ValueError):  # the sampler says why at its first tick
        pass
    kernel_threads: set[int] = set()
    processes = read_all_cpu(proc_root, kernel_threads)
    try:  # this process as that /proc numbers it (a mounted host /proc has its own numbers)
        processes.pop(int(os.readlink(f"{proc_root}/self")), None)
    except (OSError, ValueError):
        processes.pop(os.getpid(), None)
    return CpuBaseline(at=at, machine=machine, processes=processes, own_ticks=own_ticks(),
                       kernel_threads=frozenset(kernel_threads))


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


def pids(proc_root: Path) -> list[int]:
    try:
        return [int(p) for p in os.listdir(proc_root) if p.isdigit()]
    except OSError:
        return []
