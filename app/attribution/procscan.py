"""The CPU time of the machine and of every process, read from /proc with the standard library alone (``os``,
``time``): a one-shot answer reads it before anything else of FanWhy is imported (``app.cli.early``), so that
the span its CPU % is measured over starts with the process. app.attribution.procstat builds on it."""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # no typing: a one-shot reads its baseline before typing is imported
if TYPE_CHECKING:
    from typing import Callable

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PF_KTHREAD = 0x00200000  # proc(5) field 9, ``flags``: a kernel thread

# (at, machine, processes, own ticks, kernel threads): the fields of app.attribution.procstat.CpuBaseline, in order
Scan = tuple[float, tuple[int, int] | None, dict[int, tuple[int, float]], int, frozenset[int]]


def _head(path: str) -> bytes:
    """The first 4 KiB of a /proc file through os-level calls (no buffered file object: this runs per process per
    tick)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


def stat_bytes(proc_root: str, pid: int) -> bytes:
    """/proc/<pid>/stat."""
    return _head(f"{proc_root}/{pid}/stat")


def pids(proc_root: str | os.PathLike[str]) -> list[int]:
    try:
        return [int(p) for p in os.listdir(proc_root) if p.isdigit()]
    except OSError:
        return []


def read_cpu(proc_root: str, pid: int) -> tuple[int, float, int]:
    """(start ticks, CPU seconds, flags) of a process: the scan of every process needs no more than this."""
    data = stat_bytes(proc_root, pid)
    fields = data[data.rindex(b")") + 2:].split(None, 20)
    return int(fields[19]), (int(fields[11]) + int(fields[12])) / CLOCK_TICKS, int(fields[6])


def read_all_cpu(proc_root: str | os.PathLike[str],
                 kernel_threads: set[int] | None = None) -> dict[int, tuple[int, float]]:
    """(start ticks, CPU seconds) of every process that can be read now, kernel threads left out: the scan for the
    busiest CPU users (a kernel thread is not a program anyone runs; its work is the kernel's, in the machine's CPU
    %). ``kernel_threads``: PIDs known to be kernel threads, not read again, and where those found are added (on a
    64-core host they are most of the processes: per-CPU workers, softirq and migration threads)."""
    root = os.fspath(proc_root)
    found: dict[int, tuple[int, float]] = {}
    listed = pids(root)
    if kernel_threads is not None:
        kernel_threads.intersection_update(listed)  # those that ended
    skip = kernel_threads or ()
    for pid in listed:
        if pid in skip:
            continue
        try:
            start, cpu, flags = read_cpu(root, pid)
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


def _machine_stat(proc_root: str | os.PathLike[str]) -> bytes:
    return _head(f"{os.fspath(proc_root)}/stat")


def busy_seconds(proc_root: str | os.PathLike[str]) -> float | None:
    """The machine's busy CPU time (all CPUs, seconds) from /proc/stat; None when it cannot be read."""
    try:
        return cpu_times(_machine_stat(proc_root))[0] / CLOCK_TICKS
    except (OSError, ValueError):
        return None


def own_ticks() -> int:
    """The CPU time of this process (all its threads) in clock ticks, the unit of /proc/stat."""
    spent = os.times()
    return round((spent.user + spent.system) * CLOCK_TICKS)


def scan(proc_root: str = "/proc", clock: Callable[[], float] = time.monotonic) -> Scan:
    """The machine's and every process's CPU time now (a baseline: procstat.cpu_baseline), this process left out."""
    at = clock()
    machine: tuple[int, int] | None
    try:
        machine = cpu_times(_machine_stat(proc_root))
    except (OSError, ValueError):  # the sampler says why at its first tick
        machine = None
    kernel_threads: set[int] = set()
    processes = read_all_cpu(proc_root, kernel_threads)
    try:  # this process as that /proc numbers it (a mounted host /proc has its own numbers)
        processes.pop(int(os.readlink(f"{proc_root}/self")), None)
    except (OSError, ValueError):
        processes.pop(os.getpid(), None)
    return at, machine, processes, own_ticks(), frozenset(kernel_threads)
