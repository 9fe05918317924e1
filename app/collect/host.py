"""The CPU side of the machine: the fan may be the CPU's.

CPU time and memory are read every tick straight from ``/proc/stat`` and ``/proc/meminfo`` through file
descriptors kept open (one ``pread`` each, cheaper than psutil's parsing of both files); temperatures (hwmon, under
``sys_root``) every few seconds. The fans are read by ``app.collect.fans``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from ..attribution.procscan import CLOCK_TICKS, cpu_times, own_ticks
from ..attribution.procstat import CpuBaseline
from ..core.model import HostSample, HostSensor, frozen_map
from .hwmon import judged_temperatures

# Chips whose readings are the CPU package temperature, in order of preference.
_CPU_CHIPS = ("coretemp", "k10temp", "zenpower", "cpu_thermal", "cpu-thermal", "acpitz")
_CPU_LABELS = ("package id 0", "tctl", "tdie", "")


class ProcFile:
    """A /proc file read whole from offset 0 on each call, through a descriptor kept open (procfs builds
    the text afresh on every read from 0)."""

    def __init__(self, path: str, size: int = 8192):
        self.path, self.size = path, size
        self._fd: int | None = None

    def read(self) -> bytes:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        return os.pread(self._fd, self.size, 0)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def memory_used_total(meminfo: bytes) -> tuple[int, int] | None:
    """(used, total) bytes, with used = MemTotal - MemAvailable as psutil and free(1) count it; None when
    this kernel has no MemAvailable."""
    values = {}
    for key in (b"MemTotal:", b"MemAvailable:"):
        at = meminfo.find(key)
        if at < 0:
            return None
        values[key] = int(meminfo[at + len(key): meminfo.index(b"\n", at)].split()[0]) * 1024
    total = values[b"MemTotal:"]
    return total - values[b"MemAvailable:"], total


class HostSampler:
    """Reads CPU %, load and memory once per tick; temperatures every ``sensors_every_s``."""

    def __init__(self, sensors_every_s: float = 5.0, proc_root: str = "/proc", sys_root: str = "/sys") -> None:
        self.hostname = os.uname().nodename  # what socket.gethostname() answers on Linux, without importing socket
        self.sensors_every_s = sensors_every_s
        self.cpu_count = os.cpu_count()  # what psutil.cpu_count() answers, without importing psutil
        # FANWHY_HOST_PROC: the host's /proc, when FanWhy runs in a container with it mounted
        self._stat, self._meminfo = ProcFile(f"{proc_root}/stat"), ProcFile(f"{proc_root}/meminfo")
        self._cpu: tuple[int, int] | None = None
        self.proc_root = proc_root
        # the machine's busy CPU seconds and this process's CPU ticks at the last read of /proc/stat (the process
        # inspector weighs them against the processes it read just before, to know whether to scan them all)
        self.busy_at_read: tuple[float | None, int] = (None, 0)
        self._own_since: int | None = None  # see prime()
        self.sys_root = sys_root  # FANWHY_HOST_SYS: the host's /sys, for a container or a test tree
        self._sensors_at = float("-inf")
        self._sensors: tuple[tuple[HostSensor, ...], dict[str, str]] = ((), {})
        # where temperatures come from: read here, or (set by the collector) the fan service's sources, each chip
        # on its own clock, so a chip that blocks holds no tick
        self.sensors: Callable[[], tuple[tuple[HostSensor, ...], dict[str, str]]] = lambda: judged_temperatures(
            self.sys_root)
        self.errors: tuple[str, ...] = ()  # what the last sample could not read, naming the file
        self.own_pids = own_pids()
        self._own_cpu = (time.monotonic(), own_ticks())
        self._statm = ProcFile("/proc/self/statm", 256)
        self._cpu_or_none({})  # prime: the next call measures since now (a broken /proc/stat is reported then)

    def close(self) -> None:
        self._statm.close()
        self._stat.close()
        self._meminfo.close()

    def prime(self, baseline: CpuBaseline) -> None:
        """The next CPU % is measured since ``baseline`` (read earlier than this sampler was made)."""
        if baseline.machine is not None:
            self._cpu, self._own_since = baseline.machine, baseline.own_ticks

    def cpu_percent(self) -> float | None:
        """CPU use of the whole machine since the last call, in %; None on the first call."""
        busy, total = cpu_times(self._stat.read())
        previous, self._cpu = self._cpu, (busy, total)
        self.busy_at_read = (busy / CLOCK_TICKS, own_ticks())
        if previous is None or total <= previous[1]:
            return None if previous is None else 0.0
        spent = busy - previous[0]
        if self._own_since is not None:  # once, after prime(): this process's own start-up is not the machine's load
            spent -= own_ticks() - self._own_since
            self._own_since = None
        return round(100.0 * max(0, spent) / (total - previous[1]), 1)

    def memory(self) -> tuple[int, int]:
        found = memory_used_total(self._meminfo.read())
        if found is None:  # kernels before 3.14: psutil estimates what is available
            import psutil

            memory = psutil.virtual_memory()
            return memory.total - memory.available, memory.total
        return found

    def _read_sensors(self) -> tuple[tuple[HostSensor, ...], dict[str, str]]:
        reasons: dict[str, str] = {}
        try:
            sensors, left_out = self.sensors()
            reasons.update({f"temperature {name}": why for name, why in left_out.items()})
        except OSError as error:
            sensors, reasons["temperatures"] = (), f"not readable: {_why(error)}"
        if cpu_temperature(sensors) is None:
            reasons["cpu_temperature_c"] = "no CPU temperature sensor exposed by the kernel (hwmon)"
        return sensors, reasons

    def _cpu_or_none(self, unsupported: dict[str, str]) -> float | None:
        try:
            return self.cpu_percent()
        except (OSError, ValueError, IndexError) as error:  # empty, truncated or unreadable
            self._cpu = None
            unsupported["cpu_percent"] = f"{self._stat.path} unreadable: {_why(error)}"
            return None

    def _memory_or_none(self, unsupported: dict[str, str]) -> tuple[int | None, int | None]:
        try:
            return self.memory()
        except (OSError, ValueError, IndexError) as error:
            unsupported["memory_used_bytes"] = f"{self._meminfo.path} unreadable: {_why(error)}"
            return None, None

    def sample(self) -> HostSample:
        """One reading; a /proc file that cannot be read leaves its fields None with the reason, named in
        ``errors`` too (so /api/health says which file), and the other fields are read as usual."""
        unsupported: dict[str, str] = {}
        try:
            load: tuple[float, float, float] | None = os.getloadavg()
        except (AttributeError, OSError) as error:
            load, unsupported["load_average"] = None, f"not available: {error}"
        used, total = self._memory_or_none(unsupported)
        cpu = self._cpu_or_none(unsupported)
        self.errors = tuple(f"host: {unsupported[k]}" for k in ("cpu_percent", "memory_used_bytes")
                            if k in unsupported)
        now = time.monotonic()
        if now - self._sensors_at >= self.sensors_every_s:  # hwmon reads: every few seconds is enough
            self._sensors, self._sensors_at = self._read_sensors(), now
        sensors, reasons = self._sensors
        unsupported.update(reasons)
        own_cpu, own_rss = self._own()
        return HostSample(
            hostname=self.hostname,
            cpu_percent=cpu,
            cpu_count=self.cpu_count,
            load_average=load,
            memory_used_bytes=used,
            memory_total_bytes=total,
            cpu_temperature_c=cpu_temperature(sensors),
            temperatures=sensors,
            own_cpu_percent=own_cpu,
            own_rss_bytes=own_rss,
            own_pids=self.own_pids,
            unsupported=frozen_map(unsupported),
        )

    def _own(self) -> tuple[float | None, int | None]:
        """FanWhy's own CPU since the last sample (% of one core) and its resident memory: what it costs to watch."""
        now, ticks = time.monotonic(), own_ticks()
        then, before = self._own_cpu
        self._own_cpu = (now, ticks)
        cpu = round(100.0 * (ticks - before) / CLOCK_TICKS / (now - then), 2) if now > then else None
        try:
            rss = int(self._statm.read().split()[1]) * PAGE_BYTES
        except (OSError, ValueError, IndexError):
            rss = None
        return cpu, rss


PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


def own_pids() -> tuple[int, ...]:
    """This process, and its parent when that is FanWhy too (gunicorn's master of this worker): the processes the
    verdict never blames, so that FanWhy is never the cause it reports."""
    pids = [os.getpid()]
    try:
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as handle:
            words = handle.read().split(b"\0")
    except OSError:
        return tuple(pids)
    if b"app" in words or any(w.endswith(b"fanwhy") for w in words):  # python -m app, or the fanwhy script
        pids.append(os.getppid())
    return tuple(pids)


def cpu_temperature(sensors: tuple[HostSensor, ...]) -> float | None:
    """The CPU package temperature when a known chip reports it, else None."""
    for chip in _CPU_CHIPS:
        readings = [s for s in sensors if s.chip == chip]
        for label in _CPU_LABELS:
            for sensor in readings:
                if not label or sensor.label.lower() == label:
                    return sensor.temperature_c
    return None


def _why(error: Exception) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else "empty"
