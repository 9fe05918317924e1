"""Power and energy per process and container: each GPU's power split by SM share.

A process that keeps s % of a GPU's SMs busy is given s % of that GPU's power; the rest is the GPU's
idle and unattributed share. Energy integrates that power over the collector's ticks (watt-hours
since FanWhy started; a gap longer than ``max_gap_s`` is not integrated, so a stalled collector does
not invent energy). Where per-process SM % is unknown, so is the split: None.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Mapping, Sequence

from ..core.model import ContainerSample, GpuSample, ProcessSample, Unattributed, evolve

Shares = Mapping[int, Mapping[int, float]]  # GPU index -> PID -> share of that GPU's power


def power_shares(power: Mapping[int, float], processes: Sequence[ProcessSample]) -> Shares:
    """Each process's share of each powered GPU: its SM % (scaled down where SM samples add up past 100 %)."""
    shares: dict[int, dict[int, float]] = defaultdict(dict)
    for gpu_index in power:
        known = [(p.pid, u.sm_percent) for p in processes for u in p.gpus
                 if u.gpu_index == gpu_index and u.sm_percent is not None]
        total = sum(sm for _, sm in known) / 100.0
        scale = 1.0 / total if total > 1.0 else 1.0
        for pid, sm in known:
            shares[gpu_index][pid] = sm / 100.0 * scale
    return shares


class EnergyMeter:
    def __init__(self, max_gap_s: float = 10.0):
        self.max_gap_s = max_gap_s
        self._last: float | None = None
        self._process_wh: dict[tuple[int, float | None], float] = defaultdict(float)
        self._container_wh: dict[str, float] = defaultdict(float)

    def apply(self, now: float, gpus: Sequence[GpuSample], processes: Sequence[ProcessSample],
              containers: Sequence[ContainerSample], unattributed: Sequence[Unattributed]
              ) -> tuple[tuple[ProcessSample, ...], tuple[ContainerSample, ...], tuple[Unattributed, ...]]:
        """The rows with their power and energy; ``now`` is the tick's time (seconds)."""
        dt = 0.0 if self._last is None else now - self._last
        self._last = now
        hours = dt / 3600.0 if 0 < dt <= self.max_gap_s else 0.0
        power = {g.index: g.power_w for g in gpus if g.power_w is not None and g.error is None}
        shares = power_shares(power, processes)
        new_processes, watts_by_pid = self._processes(processes, power, shares, hours)
        new_containers = tuple(self._container(c, watts_by_pid, hours) for c in containers)
        new_unattributed = tuple(_unattributed(item, power, shares) for item in unattributed)
        live = {(p.pid, p.start_time) for p in processes}
        for key in [k for k in self._process_wh if k not in live]:
            del self._process_wh[key]  # totals of exited processes live on in their container's
        return new_processes, new_containers, new_unattributed

    def _processes(self, processes: Sequence[ProcessSample], power: Mapping[int, float], shares: Shares,
                   hours: float) -> tuple[tuple[ProcessSample, ...], dict[int, float]]:
        rows = []
        watts_by_pid: dict[int, float] = {}
        for proc in processes:
            parts = [power[u.gpu_index] * shares[u.gpu_index][proc.pid] for u in proc.gpus
                     if u.gpu_index in power and proc.pid in shares.get(u.gpu_index, {})]
            if not parts:
                rows.append(proc)
                continue
            watts = sum(parts)
            key = (proc.pid, proc.start_time)
            self._process_wh[key] += watts * hours
            watts_by_pid[proc.pid] = watts
            rows.append(evolve(proc, power_w=round(watts, 2), energy_wh=round(self._process_wh[key], 4)))
        return tuple(rows), watts_by_pid

    def _container(self, container: ContainerSample, watts_by_pid: Mapping[int, float],
                   hours: float) -> ContainerSample:
        parts = [watts_by_pid[pid] for pid in container.pids if pid in watts_by_pid]
        if not parts:
            return container
        watts = sum(parts)
        key = container.container.id
        self._container_wh[key] += watts * hours
        return evolve(container, power_w=round(watts, 2), energy_wh=round(self._container_wh[key], 4))


def _unattributed(item: Unattributed, power: Mapping[int, float], shares: Shares) -> Unattributed:
    """What no process's SM share covers is the GPU's idle and unattributed power."""
    if item.gpu_index not in power:
        return item
    rest = max(0.0, 1.0 - sum(shares.get(item.gpu_index, {}).values()))
    return evolve(item, power_w=round(power[item.gpu_index] * rest, 2))
