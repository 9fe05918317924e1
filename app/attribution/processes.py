"""Who is behind the load: process details read from /proc, and the busiest CPU users.

Only NoSuchProcess, ZombieProcess and AccessDenied are expected: such a process keeps its row with
``status`` saying which and the unreadable fields None (CONTRIBUTING.md: None plus a reason).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable, Iterable, Sequence

from ..core.model import GpuProcessUsage, ProcessGpu, ProcessSample, ProcessStatus, Visibility
from ..core.program import program
from ..core.record import holder, record
from ..core.redact import Redactor
from .procscan import CLOCK_TICKS, busy_seconds, own_ticks, read_all_cpu
from .procstat import (
    CpuBaseline,
    Stat,
    process_name,
    read_cmdline,
    read_stat,
    read_uid,
    start_time,
    user_name,
)


@record
class _Details:
    name: str | None
    program: str | None
    user: str | None
    command: str | None
    start_time: float | None
    cpu_percent: float | None
    rss_bytes: int | None
    status: ProcessStatus
    ppid: int | None = None


@record
class Identity:
    """Who a process is: read once per process (per PID and start time)."""

    name: str
    program: str | None
    user: str | None
    command: str | None
    start_time: float | None
    denied: bool


def identify(proc_root: Path, pid: int, stat: Stat, redactor: Redactor) -> Identity:
    """A process's name, program, user and masked command line; ``denied`` when /proc refused a part."""
    argv: list[str] = []
    user = None
    denied = False
    try:
        argv = read_cmdline(proc_root, pid)
    except PermissionError:
        denied = True
    except OSError:
        pass
    try:
        uid = read_uid(proc_root, pid)
        user = user_name(uid) if uid is not None else None
    except PermissionError:
        denied = True
    except OSError:
        pass
    masked = redactor.argv(argv)  # the name and the program are made from the masked words
    name = process_name(stat.comm, masked)
    return Identity(name=name, program=program(masked, name), user=user, command=redactor.line(masked),
                    start_time=start_time(stat, proc_root), denied=denied)


# The inode of the initial PID namespace (PROC_PID_INIT_INO in the kernel, include/linux/proc_ns.h).
ROOT_PID_NAMESPACE_INODE = 0xEFFFFFFC


def in_root_pid_namespace(proc_root: Path = Path("/proc")) -> bool:
    """True when this process runs in the host's PID namespace, so host PIDs are our PIDs."""
    try:
        return os.stat(proc_root / "self" / "ns" / "pid").st_ino == ROOT_PID_NAMESPACE_INODE
    except OSError:
        return False


@holder
class _Known:
    """What is kept about a process between ticks, keyed by PID and checked against its start time."""

    start_ticks: int
    name: str | None
    program: str | None
    user: str | None
    command: str | None
    start_time: float | None
    cpu_seconds: float
    seen_at: float
    denied: bool = False
    # a process read between its fork and its exec has no command line yet: read it again on the next few ticks
    rereads: int = 3


class ProcessInspector:
    """Reads process details with one ``/proc/<pid>/stat`` read per process per tick; names, users and
    command lines are read once per process. CPU % is measured over the interval between two readings
    (the first sighting of a process has no CPU % yet: None, not 0). The busiest CPU users are found by
    a scan of every process every ``top_cpu_every_s`` seconds when the machine's CPU time since the last scan is
    not explained by the processes already read (the GPU processes, the busiest found, FanWhy itself) by more
    than ``unexplained_percent`` of one core (0: whenever due) above the background the last scan could not
    explain either (work spread over many small processes and the kernel, which a new scan would not name), and
    at least every ``scan_every_s``; between scans the ones found are re-read. (A scan reads every process's
    stat: a few ms on a host with hundreds of processes, the largest share of FanWhy's own CPU on a machine whose
    busy processes are all known.)

    ``proc_root`` other than /proc (the host's /proc mounted into FanWhy's container) is where everything
    is read: NVML's PIDs are host PIDs. A PID seen only in NVML's utilization samples is resolved only
    where our /proc is the host's (the root PID namespace, or a mounted host /proc): elsewhere that number
    may belong to another process.
    """

    def __init__(self, top_cpu: int = 5, min_cpu_percent: float = 1.0, proc_root: str | Path = "/proc",
                 resolve_foreign: bool | None = None, redactor: Redactor | None = None,
                 top_cpu_every_s: float = 5.0, clock: Callable[[], float] = time.monotonic,
                 unexplained_percent: float = 10.0, scan_every_s: float = 30.0):
        self.redactor = redactor or Redactor()
        self.top_cpu = top_cpu
        self.min_cpu_percent = min_cpu_percent
        self.top_cpu_every_s = top_cpu_every_s
        self.unexplained_percent = unexplained_percent
        self.scan_every_s = scan_every_s
        self.proc_root = Path(proc_root)
        self._clock = clock
        self.resolve_foreign = (self.proc_root != Path("/proc") or in_root_pid_namespace()
                                if resolve_foreign is None else resolve_foreign)
        self._known: dict[int, _Known] = {}
        self._scan: dict[int, tuple[int, float]] = {}  # pid -> (start ticks, cpu seconds) at the last scan
        self._scan_at: float | None = None
        # the same two as one value, for a reader on another thread (app.attribution.listing): never mutated
        self.last_scan: tuple[dict[int, tuple[int, float]], float] | None = None
        self._scan_due = False
        self._scan_machine: float | None = None  # the machine's busy CPU seconds at the last scan
        self._scan_own = 0  # FanWhy's own CPU ticks at the last scan
        self._read_machine: tuple[float | None, int] = (None, 0)  # the same, as of the last tick's reads
        # where that is read instead, when someone reads /proc/stat each tick after this inspector (the host sampler)
        self.machine_reading: Callable[[], tuple[float | None, int]] | None = None
        self._top: dict[int, float] = {}  # pid -> CPU % measured by the last scan
        self._background = 0.0  # % of a core the processes read after the last scan left unexplained over its span
        self._kernel_threads: set[int] = set()  # not read by the scans between the full ones (every scan_every_s)
        self._full_scan_at: float | None = None

    def collect(self, usages: Sequence[GpuProcessUsage]) -> tuple[ProcessSample, ...]:
        """GPU processes (merged across GPUs), then the top CPU users that are not among them."""
        by_pid: dict[int, list[GpuProcessUsage]] = {}
        for usage in usages:
            by_pid.setdefault(usage.pid, []).append(usage)
        now = self._clock()
        rows = [self._gpu_row(pid, items, now) for pid, items in by_pid.items()]
        rows.sort(key=lambda p: (-(p.gpu_memory_bytes or 0), -(p.sm_percent or 0), p.pid))
        rows.extend(self._top_cpu(set(by_pid), now))
        self._forget(set(by_pid) | set(self._top))
        return tuple(rows)

    def _gpu_row(self, pid: int, usages: list[GpuProcessUsage], now: float) -> ProcessSample:
        visible = any(u.kind != "utilization-only" for u in usages)
        if visible or self.resolve_foreign:
            details = self._details(pid, now)
        else:
            details = _Details(None, None, None, None, None, None, None, "outside-namespace")
        visibility: Visibility = "visible" if visible else "host-pid-only"
        gpus = tuple(
            ProcessGpu(gpu_index=u.gpu_index, memory_bytes=u.memory_bytes, sm_percent=u.sm_percent,
                       encoder_percent=u.encoder_percent, decoder_percent=u.decoder_percent, kind=u.kind)
            for u in sorted(usages, key=lambda u: u.gpu_index)
        )
        name = details.name or next((u.name_hint for u in usages if u.name_hint), None)
        return ProcessSample(pid=pid, name=name, program=details.program or name, user=details.user,
                             command=details.command,
                             start_time=details.start_time, cpu_percent=details.cpu_percent,
                             rss_bytes=details.rss_bytes, gpus=gpus, visibility=visibility,
                             status=details.status, ppid=details.ppid)

    def _details(self, pid: int, now: float) -> _Details:
        try:
            stat = read_stat(self.proc_root, pid)
        except (FileNotFoundError, ProcessLookupError):
            self._known.pop(pid, None)
            return _Details(None, None, None, None, None, None, None, "vanished")
        except PermissionError:
            return _Details(None, None, None, None, None, None, None, "denied")
        except (OSError, ValueError, IndexError):
            return _Details(None, None, None, None, None, None, None, "vanished")
        known = self._known.get(pid)
        cpu = None
        if known is not None and known.start_ticks == stat.start_ticks and known.command is None \
                and not known.denied and known.rereads > 0 and stat.state != "Z":
            rereads = known.rereads - 1
            known = self._identify(pid, stat, known.seen_at, known.cpu_seconds)
            known.rereads = rereads
        if known is not None and known.start_ticks == stat.start_ticks:
            cpu = _percent(stat.cpu_seconds - known.cpu_seconds, now - known.seen_at)
            known.cpu_seconds, known.seen_at = stat.cpu_seconds, now
        else:  # a new process, or a recycled PID: read who it is once (its CPU % since the last scan, if seen)
            known = self._identify(pid, stat, now)
            scanned = self._scan.get(pid)
            if scanned is not None and scanned[0] == stat.start_ticks and self._scan_at is not None:
                cpu = _percent(stat.cpu_seconds - scanned[1], now - self._scan_at)
        status: ProcessStatus = "zombie" if stat.state == "Z" else "denied" if known.denied else "ok"
        return _Details(name=known.name, program=known.program, user=known.user, command=known.command,
                        start_time=known.start_time, cpu_percent=cpu, rss_bytes=stat.rss_bytes, status=status,
                        ppid=stat.ppid or None)

    def _identify(self, pid: int, stat: Stat, now: float, cpu_seconds: float | None = None) -> _Known:
        who = identify(self.proc_root, pid, stat, self.redactor)
        known = _Known(start_ticks=stat.start_ticks, name=who.name, program=who.program, user=who.user,
                       command=who.command, start_time=who.start_time,
                       cpu_seconds=stat.cpu_seconds if cpu_seconds is None else cpu_seconds, seen_at=now,
                       denied=who.denied)
        self._known[pid] = known
        return known

    def full_command(self, pid: int) -> str | None:
        """The whole masked command line of a process this inspector knows (rows carry it bounded), read again
        from /proc; None when it is unknown, has gone, is another process now, or command lines are not shown."""
        known = self._known.get(pid)
        if known is None or known.command is None:
            return None
        try:
            if read_stat(self.proc_root, pid).start_ticks != known.start_ticks:
                return None  # the PID was reused
            return self.redactor.command(read_cmdline(self.proc_root, pid), limit=None)
        except OSError:
            return None

    def _top_cpu(self, exclude: set[int], now: float) -> list[ProcessSample]:
        """The busiest CPU users: found by a scan of every process (see the class), re-read each tick."""
        if self.top_cpu <= 0:
            return []
        if self._scan_needed(now):
            self._top = self._scan_all(now)
        rows = []
        for pid, scanned in self._top.items():
            if pid in exclude:
                continue
            details = self._details(pid, now)
            known = self._known.get(pid)
            if details.status == "vanished" or known is None or self._scan.get(pid, (None,))[0] != known.start_ticks:
                continue  # gone, or the PID is another process now: what the scan measured was not this one
            cpu = details.cpu_percent if details.cpu_percent is not None else round(scanned, 1)
            rows.append(ProcessSample(pid=pid, name=details.name, program=details.program, user=details.user,
                                      command=details.command,
                                      start_time=details.start_time, cpu_percent=cpu,
                                      rss_bytes=details.rss_bytes, status=details.status, ppid=details.ppid))
        rows.sort(key=lambda p: -(p.cpu_percent or 0))
        if self.machine_reading is None:  # the machine's CPU time as of these reads: the next tick weighs them
            self._read_machine = (busy_seconds(self.proc_root), own_ticks())
        return rows

    def prime(self, baseline: CpuBaseline) -> None:
        """Take ``baseline`` as the last scan: the next tick has the CPU % of every process since then (a one-shot
        answer reads it at its start, so its first tick needs no second one)."""
        self._scan, self._scan_at = dict(baseline.processes), baseline.at
        self.last_scan = (self._scan, baseline.at)
        self._scan_due = True  # the next tick scans every process, whenever the last scan was
        # the baseline read every PID: a full scan, whose kernel threads that next scan does not read again
        self._kernel_threads, self._full_scan_at = set(baseline.kernel_threads), baseline.at

    def _scan_needed(self, now: float) -> bool:
        """Due, and someone not yet read may be busy: the CPU time of the machine since the last scan less that of
        the processes read since (and FanWhy's own) is above ``unexplained_percent`` of one core."""
        if self._scan_due or self._scan_at is None or now - self._scan_at >= self.scan_every_s:
            return True
        if now - self._scan_at < self.top_cpu_every_s:
            return False
        if self.unexplained_percent <= 0:  # whenever due
            return True
        machine, own = self.machine_reading() if self.machine_reading is not None else self._read_machine
        if machine is None or self._scan_machine is None:
            return True
        explained = (own - self._scan_own) / CLOCK_TICKS
        for pid, known in self._known.items():
            scanned = self._scan.get(pid)
            if scanned is not None and scanned[0] == known.start_ticks:
                explained += known.cpu_seconds - scanned[1]
        unexplained = machine - self._scan_machine - explained
        return 100 * unexplained / (now - self._scan_at) >= self.unexplained_percent + self._background

    def _scan_all(self, now: float) -> dict[int, float]:
        previous, then = self._scan, self._scan_at
        machine_then, own_then = self._scan_machine, self._scan_own
        self._scan_machine, self._scan_own = busy_seconds(self.proc_root), own_ticks()
        if self._full_scan_at is None or now - self._full_scan_at >= self.scan_every_s:
            self._kernel_threads.clear()  # a full scan: a PID a kernel thread had may be a program's now
            self._full_scan_at = now
        current = read_all_cpu(self.proc_root, self._kernel_threads)
        busy: list[tuple[float, int]] = []
        for pid, (start_ticks, cpu_seconds) in current.items():
            before = previous.get(pid)
            if then is not None and before is not None and before[0] == start_ticks:
                cpu = _percent(cpu_seconds - before[1], now - then)
                if cpu is not None and cpu >= self.min_cpu_percent:
                    busy.append((cpu, pid))
        busy.sort(reverse=True)
        top = {pid: cpu for cpu, pid in busy[: self.top_cpu]}
        if then is not None and machine_then is not None and self._scan_machine is not None and now > then:
            busy_s = self._scan_machine - machine_then - (self._scan_own - own_then) / CLOCK_TICKS
            self._background = _background(busy_s, previous, current, set(top) | set(self._known), now - then)
        self._scan, self._scan_at, self._scan_due = current, now, False
        self.last_scan = (current, now)
        return top

    def _forget(self, keep: Iterable[int]) -> None:
        """Drop what is known of processes that are neither GPU users nor among the top CPU users."""
        keep = set(keep)
        if len(self._known) > 2 * len(keep) + 64:
            self._known = {pid: k for pid, k in self._known.items() if pid in keep}


def _background(busy_s: float, previous: dict[int, tuple[int, float]], current: dict[int, tuple[int, float]],
                read: set[int], elapsed: float) -> float:
    """% of a core of ``busy_s`` (the machine's CPU seconds between two scans, FanWhy's own taken out) that the
    processes read each tick after the second scan (``read``) do not explain: work no scan names. A process new
    since the first scan has no rate yet, so it is not among the busiest, but the next scan names it: its CPU is no
    background (counted as such, it would hide itself until the 30 s scan)."""
    explained = sum(current[pid][1] - previous[pid][1] for pid in read
                    if pid in current and pid in previous and current[pid][0] == previous[pid][0])
    explained += sum(cpu for pid, (start, cpu) in current.items() if pid not in previous or previous[pid][0] != start)
    return max(0.0, 100 * (busy_s - explained) / elapsed)


def _percent(cpu_seconds: float, elapsed: float) -> float | None:
    """CPU % of one core over ``elapsed`` seconds; None over no time at all."""
    return round(max(0.0, 100.0 * cpu_seconds / elapsed), 1) if elapsed > 0 else None
