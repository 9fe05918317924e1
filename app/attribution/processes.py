"""Who is behind the load: process details from psutil, and the busiest CPU users.

Only NoSuchProcess, ZombieProcess and AccessDenied are expected: such a process keeps its row with
``status`` saying which and the unreadable fields None (STYLE.md #11).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import psutil

from app.model import GpuProcessUsage, ProcessGpu, ProcessSample, ProcessStatus, Visibility
from app.redact import Redactor


@dataclass(frozen=True)
class _Details:
    name: str | None
    user: str | None
    command: str | None
    start_time: float | None
    cpu_percent: float | None
    rss_bytes: int | None
    status: ProcessStatus


# The inode of the initial PID namespace (PROC_PID_INIT_INO in the kernel, include/linux/proc_ns.h).
ROOT_PID_NAMESPACE_INODE = 0xEFFFFFFC


def in_root_pid_namespace(proc_root: Path = Path("/proc")) -> bool:
    """True when this process runs in the host's PID namespace, so host PIDs are our PIDs."""
    try:
        return os.stat(proc_root / "self" / "ns" / "pid").st_ino == ROOT_PID_NAMESPACE_INODE
    except OSError:
        return False


class ProcessInspector:
    """Reads process details, keeping psutil.Process objects between ticks so CPU % is measured
    over the interval (the first sighting of a process has no CPU % yet: None, not 0).

    ``proc_root`` other than /proc (the host's /proc mounted into FanWhy's container) points psutil
    there for the whole process: NVML's PIDs are host PIDs, and so is every PID read. A PID seen only
    in NVML's utilization samples is resolved only where our /proc is the host's (the root PID
    namespace, or a mounted host /proc): elsewhere that number may belong to another process.
    """

    def __init__(self, top_cpu: int = 5, min_cpu_percent: float = 1.0, proc_root: str | Path = "/proc",
                 resolve_foreign: bool | None = None, redactor: Redactor | None = None):
        self.redactor = redactor or Redactor()
        self.top_cpu = top_cpu
        self.min_cpu_percent = min_cpu_percent
        self.proc_root = Path(proc_root)
        if self.proc_root != Path("/proc"):
            psutil.PROCFS_PATH = str(self.proc_root)
        self.resolve_foreign = (self.proc_root != Path("/proc") or in_root_pid_namespace()
                                if resolve_foreign is None else resolve_foreign)
        self._known: dict[int, tuple[psutil.Process, float]] = {}

    def collect(self, usages: Sequence[GpuProcessUsage]) -> tuple[ProcessSample, ...]:
        """GPU processes (merged across GPUs), then the top CPU users that are not among them."""
        by_pid: dict[int, list[GpuProcessUsage]] = {}
        for usage in usages:
            by_pid.setdefault(usage.pid, []).append(usage)
        rows = [self._gpu_row(pid, items) for pid, items in by_pid.items()]
        rows.sort(key=lambda p: (-(p.gpu_memory_bytes or 0), -(p.sm_percent or 0), p.pid))
        rows.extend(self._top_cpu(exclude=set(by_pid)))
        self._forget(set(by_pid))
        return tuple(rows)

    def _gpu_row(self, pid: int, usages: list[GpuProcessUsage]) -> ProcessSample:
        visible = any(u.kind != "utilization-only" for u in usages)
        if visible or self.resolve_foreign:
            details = self._details(pid)
        else:
            details = _Details(None, None, None, None, None, None, "outside-namespace")
        visibility: Visibility = "visible" if visible else "host-pid-only"
        gpus = tuple(
            ProcessGpu(gpu_index=u.gpu_index, memory_bytes=u.memory_bytes, sm_percent=u.sm_percent,
                       encoder_percent=u.encoder_percent, decoder_percent=u.decoder_percent, kind=u.kind)
            for u in sorted(usages, key=lambda u: u.gpu_index)
        )
        name = details.name or next((u.name_hint for u in usages if u.name_hint), None)
        return ProcessSample(pid=pid, name=name, user=details.user, command=details.command,
                             start_time=details.start_time, cpu_percent=details.cpu_percent,
                             rss_bytes=details.rss_bytes, gpus=gpus, visibility=visibility,
                             status=details.status)

    def _process(self, pid: int) -> tuple[psutil.Process, bool]:
        """The cached Process for ``pid`` (new when the PID was recycled), and whether it is new."""
        current = psutil.Process(pid)
        known = self._known.get(pid)
        if known is not None and known[1] == current.create_time():
            return known[0], False
        self._known[pid] = (current, current.create_time())
        return current, True

    def _details(self, pid: int) -> _Details:
        try:
            proc, new = self._process(pid)
        except psutil.NoSuchProcess:
            return _Details(None, None, None, None, None, None, "vanished")
        except psutil.AccessDenied:
            return _Details(None, None, None, None, None, None, "denied")
        values: dict[str, object] = {}
        status: ProcessStatus = "ok"
        with proc.oneshot():
            for key, read in (("name", proc.name), ("user", proc.username), ("cmdline", proc.cmdline),
                              ("start_time", proc.create_time), ("cpu", lambda: proc.cpu_percent(None)),
                              ("rss", lambda: proc.memory_info().rss)):
                try:
                    values[key] = read()
                except psutil.ZombieProcess:
                    status = "zombie"
                except psutil.NoSuchProcess:
                    status = "vanished"
                    break
                except psutil.AccessDenied:
                    status = "denied" if status == "ok" else status
        argv = values.get("cmdline")
        command = self.redactor.command(argv) if isinstance(argv, list) else None
        cpu = values.get("cpu")
        return _Details(
            name=values.get("name"),  # type: ignore[arg-type]
            user=values.get("user"),  # type: ignore[arg-type]
            command=command,
            start_time=values.get("start_time"),  # type: ignore[arg-type]
            cpu_percent=None if new or cpu is None else float(cpu),  # type: ignore[arg-type]
            rss_bytes=values.get("rss"),  # type: ignore[arg-type]
            status=status,
        )

    def _top_cpu(self, exclude: set[int]) -> list[ProcessSample]:
        """The busiest CPU users since the last tick (psutil.process_iter keeps their state)."""
        if self.top_cpu <= 0:
            return []
        busy: list[tuple[float, int]] = []
        for proc in psutil.process_iter(["cpu_percent"]):
            cpu = proc.info.get("cpu_percent")
            if proc.pid not in exclude and cpu is not None and cpu >= self.min_cpu_percent:
                busy.append((cpu, proc.pid))
        busy.sort(reverse=True)
        rows = []
        for cpu, pid in busy[: self.top_cpu]:
            details = self._details(pid)
            rows.append(ProcessSample(pid=pid, name=details.name, user=details.user,
                                      command=details.command, start_time=details.start_time,
                                      cpu_percent=cpu, rss_bytes=details.rss_bytes, status=details.status))
        return rows

    def _forget(self, keep: Iterable[int]) -> None:
        """Drop cached processes that are neither GPU users nor among the top CPU users."""
        keep = set(keep)
        if len(self._known) > 4 * (len(keep) + self.top_cpu) + 64:
            self._known = {pid: p for pid, p in self._known.items() if pid in keep}
