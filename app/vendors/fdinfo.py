"""Per-process GPU use from DRM fdinfo (the kernel's drm-usage-stats): amdgpu, i915, xe and others.

Each open DRM file of a process has ``/proc/<pid>/fdinfo/<fd>`` with ``drm-driver``, ``drm-pdev``,
``drm-client-id``, ``drm-engine-<engine>: <ns> ns`` (busy time), or for xe ``drm-cycles-<engine>`` and
``drm-total-cycles-<engine>``, and ``drm-memory-<region>`` / ``drm-resident-<region>`` sizes. One client
may be open through several fds (dup, fork): clients are de-duplicated by (pdev, client id). Busy % is
the change of busy time over the change of wall time between two reads. The /proc root is an argument.
"""

from __future__ import annotations

import os
import time
from dataclasses import field
from pathlib import Path
from typing import Callable

from ..core.record import holder, record

_UNITS = {"": 1, "B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}
# Engines whose busy time is "compute": the SM-like share of a client.
COMPUTE_ENGINES = ("gfx", "compute", "render", "rcs", "ccs", "ccs0", "ccs1")


@holder  # filled in as its file is read
class DrmClient:
    """One DRM client (a process's open GPU context), as parsed from one fdinfo file."""

    driver: str
    pdev: str | None
    client_id: str
    engine_ns: dict[str, int] = field(default_factory=dict)
    cycles: dict[str, tuple[int, int]] = field(default_factory=dict)  # engine -> (cycles, total cycles)
    capacity: dict[str, int] = field(default_factory=dict)
    memory_bytes: dict[str, int] = field(default_factory=dict)  # region -> resident (or total) bytes


def _size(value: str) -> int | None:
    parts = value.split()
    if not parts:
        return None
    try:
        number = int(parts[0])
    except ValueError:
        return None
    unit = parts[1] if len(parts) > 1 else ""
    return number * _UNITS[unit] if unit in _UNITS and number >= 0 else None


def parse_fdinfo(text: str) -> DrmClient | None:
    """The DRM client an fdinfo file describes, or None when it is not a DRM file (or is malformed).
    Malformed lines are skipped, never fatal."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.startswith("drm-"):
            fields[key.strip()] = value.strip()
    driver, client = fields.get("drm-driver"), fields.get("drm-client-id")
    if not driver or not client:
        return None
    result = DrmClient(driver=driver, pdev=fields.get("drm-pdev") or None, client_id=client)
    totals: dict[str, int] = {}
    for key, value in fields.items():
        _read_field(result, totals, key[4:], value)
    result.cycles = {e: (c, totals[e]) for e, (c, _) in result.cycles.items() if e in totals}
    return result


def _leading_int(value: str) -> int | None:
    """``123`` from ``123 ns`` or ``123``; None when the first word is not a number."""
    words = value.split()
    # isdecimal, not isdigit: "²" is a digit to Python but not a number int() reads (found by the fuzz test)
    return int(words[0]) if words and words[0].isascii() and words[0].isdecimal() else None


def _read_field(result: DrmClient, totals: dict[str, int], name: str, value: str) -> None:
    """One ``drm-<name>: <value>`` line into ``result`` (``total-cycles-*`` into ``totals``); a malformed
    value is skipped."""
    number = _leading_int(value)
    if name.startswith("engine-capacity-"):
        if number is not None:
            result.capacity[name[len("engine-capacity-"):]] = max(1, number)
    elif name.startswith("engine-"):
        parts = value.split()
        if len(parts) == 2 and parts[1] == "ns" and number is not None:
            result.engine_ns[name[len("engine-"):]] = number
    elif name.startswith("total-cycles-"):
        if number is not None:
            totals[name[len("total-cycles-"):]] = number
    elif name.startswith("cycles-"):
        if number is not None:
            result.cycles[name[len("cycles-"):]] = (number, -1)
    elif name.startswith(("resident-", "memory-", "total-")):
        region = name.split("-", 1)[1]
        size = _size(value)
        # resident is what occupies the GPU now; memory- (amdgpu) and total- are fallbacks
        if size is not None and (name.startswith("resident-") or region not in result.memory_bytes):
            result.memory_bytes[region] = size


@record
class ClientUsage:
    pid: int
    driver: str
    pdev: str | None
    busy_percent: float | None
    memory_bytes: int | None
    engines: dict[str, float]


class FdinfoReader:
    """Reads every process's DRM clients and turns busy-time deltas into percentages."""

    def __init__(self, proc_root: Path | str = "/proc", clock: Callable[[], float] = time.monotonic):
        self.proc_root = Path(proc_root)
        self._clock = clock
        self._last: dict[tuple[str | None, str], tuple[float, DrmClient]] = {}

    def clients(self) -> dict[tuple[str | None, str], tuple[int, DrmClient]]:
        """(pdev, client id) -> (pid, client). The lowest PID holding a client owns it."""
        found: dict[tuple[str | None, str], tuple[int, DrmClient]] = {}
        try:
            pids = sorted(int(p) for p in os.listdir(self.proc_root) if p.isdigit())
        except OSError:
            return found
        for pid in pids:
            directory = self.proc_root / str(pid) / "fdinfo"
            try:
                fds = os.listdir(directory)
            except OSError:
                continue  # gone, or not ours to read
            for fd in fds:
                try:
                    text = (directory / fd).read_text(errors="replace")
                except OSError:
                    continue
                client = parse_fdinfo(text)
                if client is not None:
                    found.setdefault((client.pdev, client.client_id), (pid, client))
        return found

    def usage(self) -> list[ClientUsage]:
        now = self._clock()
        current = self.clients()
        usages = []
        for key, (pid, client) in current.items():
            previous = self._last.get(key)
            engines: dict[str, float] = {}
            if previous is not None:
                then, before = previous
                wall_ns = (now - then) * 1e9
                for engine, ns in client.engine_ns.items():
                    if engine in before.engine_ns and wall_ns > 0:
                        share = (ns - before.engine_ns[engine]) / wall_ns / client.capacity.get(engine, 1)
                        engines[engine] = round(min(100.0, max(0.0, 100.0 * share)), 1)
                for engine, (cycles, total) in client.cycles.items():
                    if engine in before.cycles and total > before.cycles[engine][1]:
                        share = (cycles - before.cycles[engine][0]) / (total - before.cycles[engine][1])
                        engines[engine] = round(min(100.0, max(0.0, 100.0 * share)), 1)
            compute = [v for e, v in engines.items() if e in COMPUTE_ENGINES]
            busy = max(compute) if compute else (max(engines.values()) if engines else None)
            vram = [v for r, v in client.memory_bytes.items() if r.startswith(("vram", "local", "stolen"))]
            memory = sum(vram) if vram else (sum(client.memory_bytes.values()) if client.memory_bytes else None)
            usages.append(ClientUsage(pid=pid, driver=client.driver, pdev=client.pdev, busy_percent=busy,
                                      memory_bytes=memory, engines=engines))
        self._last = {key: (now, client) for key, (_, client) in current.items()}
        return usages
