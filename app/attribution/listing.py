"""Every process, on demand: the rows a page of ``/api/gpu/processes`` or ``fanwhy top``'s screen asks for beyond
the snapshot's GPU users and busiest CPU users.

The snapshot keeps few CPU rows (``FANWHY_TOP_CPU``, 5) because it is pushed to every browser each tick and its
rows are re-read each tick. A listing reads every process's CPU time once (the scan's read: one ``stat`` per
process, kernel threads left out, as the collector's scan leaves them out), measures each CPU % against the
newest earlier reading at least ``MIN_SPAN_S`` old (the collector's last scan, or this listing's last call), sorts
and pages on those numbers, and only then reads who the rows of the page are (command line and user, cached per
PID and start time). The snapshot's own rows win for the PIDs they hold: they were measured over the last tick,
with their GPUs and containers. A listed row's container is its cgroup's, named as the snapshot names it.

A listing never feeds the verdict: the answer is made from the snapshot alone.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..core.model import ContainerRef, ProcessSample, evolve
from ..core.snapshot import Snapshot
from ..core.vocabulary import PROCESS_KINDS, PROCESS_PAGE_CEILING, PROCESS_SORTS
from .cgroups import read_cgroup, read_nspid
from .procscan import PF_KTHREAD, read_all_cpu, read_cpu
from .procstat import read_cmdline, read_stat

if TYPE_CHECKING:
    from .processes import Identity, ProcessInspector

CEILING = PROCESS_PAGE_CEILING  # the most rows one page holds (the API's ``limit``)
MIN_SPAN_S = 1.0  # a CPU % over less than this is mostly the clock's tick (1/100 s) and the scheduler's noise
KEEP_NAMES = 4096  # identities cached; the cache starts again past this

Readings = dict[int, tuple[int, float]]  # pid -> (start ticks, CPU seconds)
SORT_KEYS: dict[str, Callable[[ProcessSample], tuple[float, ...]]] = {
    "gpu_memory": lambda p: (-(p.gpu_memory_bytes or 0), -(p.cpu_percent or 0), p.pid),
    "sm": lambda p: (-(p.sm_percent or 0), -(p.gpu_memory_bytes or 0), -(p.cpu_percent or 0), p.pid),
    "cpu": lambda p: (-(p.cpu_percent or 0), -(p.gpu_memory_bytes or 0), p.pid),
    "pid": lambda p: (p.pid,),
}
KINDS = PROCESS_KINDS
assert tuple(SORT_KEYS) == PROCESS_SORTS


class ProcessListing:
    """Lists every process of ``inspector``'s /proc; safe to call from several threads at once."""

    def __init__(self, inspector: ProcessInspector, clock: Callable[[], float] = time.monotonic):
        self.inspector = inspector
        self._clock = clock
        self._lock = threading.Lock()
        self._previous: tuple[Readings, float] | None = None
        self._names: dict[tuple[int, int], Identity] = {}

    def page(self, snapshot: Snapshot, kind: str = "all", sort: str = "gpu_memory", offset: int = 0,
             limit: int = 100, gpu: int | None = None) -> tuple[int, list[ProcessSample]]:
        """(how many rows match, the rows from ``offset``, at most ``limit``). ``kind`` all, gpu or cpu; ``gpu``
        keeps the users of one GPU (only the snapshot has those)."""
        rows = list(snapshot.processes)
        if gpu is not None:
            rows = [p for p in rows if any(g.gpu_index == gpu for g in p.gpus)]
        if kind == "gpu":
            rows = [p for p in rows if p.gpus]
        elif kind == "cpu":
            rows = [p for p in rows if not p.gpus]
        if gpu is None and kind != "gpu":
            listed, pending = self._measured({p.pid for p in snapshot.processes})
            rows.extend(listed)
        else:
            pending = {}
        rows.sort(key=SORT_KEYS[sort])
        shown = rows[offset:offset + min(limit, CEILING)]
        names = {c.container.id: c.container for c in snapshot.containers}
        return len(rows), [self._who(row, pending[row.pid], names) if row.pid in pending else row for row in shown]

    def one(self, snapshot: Snapshot, pid: int) -> tuple[ProcessSample, str | None] | None:
        """One process and its whole masked command line: the snapshot's row if it holds one, else read now (its
        CPU % since the last reading); None when there is no such process (or it is a kernel thread)."""
        row = next((p for p in snapshot.processes if p.pid == pid), None)
        if row is not None:
            return row, self.inspector.full_command(pid)
        listed, pending = self._measured(set(), only=pid)
        if not listed:
            return None
        found = self._who(listed[0], pending[pid], {c.container.id: c.container for c in snapshot.containers})
        if found.status == "vanished":
            return None
        try:
            if read_stat(self.inspector.proc_root, pid).start_ticks != pending[pid]:
                return None
            argv = read_cmdline(Path(self.inspector.proc_root), pid)
        except (OSError, ValueError, IndexError):
            return found, None
        return found, self.inspector.redactor.command(argv, limit=None)

    def _measured(self, held: set[int], only: int | None = None) -> tuple[list[ProcessSample], dict[int, int]]:
        """A bare row (PID and CPU %) for every process not in ``held`` (or for PID ``only``), and the start ticks
        each was read with (who it is is read only for the rows shown)."""
        proc_root = self.inspector.proc_root
        now = self._clock()
        now_readings = read_all_cpu(proc_root) if only is None else _one_reading(proc_root, only)
        with self._lock:
            bases = [b for b in (self.inspector.last_scan, self._previous) if b is not None]
            if only is None:
                self._previous = (now_readings, now)
        old_enough = [b for b in bases if now - b[1] >= MIN_SPAN_S]
        base = max(old_enough, key=lambda b: b[1]) if old_enough else min(bases, key=lambda b: b[1], default=None)
        rows, pending = [], {}
        for pid, (start, cpu_seconds) in now_readings.items():
            if pid in held:
                continue
            cpu = None
            if base is not None and base[1] < now:
                before = base[0].get(pid)
                if before is not None and before[0] == start:
                    cpu = round(max(0.0, 100.0 * (cpu_seconds - before[1]) / (now - base[1])), 1)
            rows.append(ProcessSample(pid=pid, name=None, user=None, command=None, start_time=None,
                                      cpu_percent=cpu, rss_bytes=None))
            pending[pid] = start
        return rows, pending

    def _who(self, row: ProcessSample, start_ticks: int, containers: dict[str, ContainerRef]) -> ProcessSample:
        """``row`` read whole: its stat, who it is, its cgroup; ``vanished`` when it ended since it was measured."""
        from .attributor import container_ref
        from .processes import identify

        proc_root = self.inspector.proc_root
        try:
            stat = read_stat(proc_root, row.pid)
        except PermissionError:
            return evolve(row, status="denied")
        except (OSError, ValueError, IndexError):
            return evolve(row, status="vanished")
        if stat.start_ticks != start_ticks:
            return evolve(row, cpu_percent=None, status="vanished")  # the PID is another process's now
        key = (row.pid, stat.start_ticks)
        with self._lock:
            who = self._names.get(key)
        if who is None:
            who = identify(Path(proc_root), row.pid, stat, self.inspector.redactor)
            with self._lock:
                if len(self._names) >= KEEP_NAMES:
                    self._names.clear()
                self._names[key] = who
        match = read_cgroup(Path(proc_root), row.pid)
        container = container_ref(match, {}) if match is not None else None
        if container is not None:
            container = containers.get(container.id, container)
        nspid = read_nspid(Path(proc_root), row.pid)
        return evolve(row, name=who.name, program=who.program, user=who.user, command=who.command,
                      start_time=who.start_time, rss_bytes=stat.rss_bytes, ppid=stat.ppid or None,
                      status="zombie" if stat.state == "Z" else "denied" if who.denied else "ok",
                      container=container, unit=match.unit if match is not None else None,
                      namespace_pid=nspid[-1] if len(nspid) > 1 else None,
                      host_pid=row.pid if Path(proc_root) != Path("/proc") else None)


def _one_reading(proc_root: str | Path, pid: int) -> Readings:
    """The reading of one process (none for a kernel thread or one that is not there)."""
    try:
        start, cpu_seconds, flags = read_cpu(str(proc_root), pid)
    except (OSError, ValueError, IndexError):
        return {}
    return {} if flags & PF_KTHREAD else {pid: (start, cpu_seconds)}
