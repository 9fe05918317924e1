"""Power and energy per process and container: each GPU's power split by SM share.

A process that keeps s % of a GPU's SMs busy is given s % of that GPU's power; the rest is the GPU's
idle and unattributed share. Energy integrates that power over the collector's ticks (watt-hours
since FanWhy started; a gap longer than ``max_gap_s`` is not integrated, so a stalled collector does
not invent energy). Where per-process SM % is unknown, so is the split: None.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from app.model import ContainerSample, GpuSample, ProcessSample, Unattributed, evolve


class EnergyMeter:
    def __init__(self, max_gap_s: float = 10.0):
        self.max_gap_s = max_gap_s
        self._last: float | None = None
        self._process_wh: dict[tuple[int, float | None], float] = defaultdict(float)
        self._container_wh: dict[str, float] = defaultdict(float)

    def apply(self, now: float, gpus: Sequence[GpuSample], processes: Sequence[ProcessSample],
              containers: Sequence[ContainerSample], unattributed: Sequence[Unattributed]
              ) -> tuple[tuple[ProcessSample, ...], tuple[ContainerSample, ...], tuple[Unattributed, ...]]:
        dt = 0.0 if self._last is None else now - self._last
        self._last = now
        hours = dt / 3600.0 if 0 < dt <= self.max_gap_s else 0.0

        power = {g.index: g.power_w for g in gpus if g.power_w is not None and g.error is None}
        shares: dict[int, dict[int, float]] = defaultdict(dict)  # gpu -> pid -> share of its power
        for gpu_index in power:
            users = [(p.pid, u.sm_percent) for p in processes for u in p.gpus if u.gpu_index == gpu_index]
            known = [(pid, sm) for pid, sm in users if sm is not None]
            total = sum(sm for _, sm in known) / 100.0
            scale = 1.0 / total if total > 1.0 else 1.0  # SM samples can add up past 100 %
            for pid, sm in known:
                shares[gpu_index][pid] = sm / 100.0 * scale

        new_processes = []
        watts_by_pid: dict[int, float | None] = {}
        for proc in processes:
            parts = [power[u.gpu_index] * shares[u.gpu_index][proc.pid] for u in proc.gpus
                     if u.gpu_index in power and proc.pid in shares[u.gpu_index]]
            if not proc.gpus or not parts:
                watts_by_pid[proc.pid] = None
                new_processes.append(proc)
                continue
            watts = sum(parts)
            key = (proc.pid, proc.start_time)
            self._process_wh[key] += watts * hours
            watts_by_pid[proc.pid] = watts
            new_processes.append(evolve(proc, power_w=round(watts, 2),
                                                     energy_wh=round(self._process_wh[key], 4)))

        new_containers = []
        for container in containers:
            parts = [w for pid in container.pids if (w := watts_by_pid.get(pid)) is not None]
            if not parts:
                new_containers.append(container)
                continue
            watts = sum(parts)
            self._container_wh[container.container.id] += watts * hours
            new_containers.append(evolve(container, power_w=round(watts, 2),
                                                      energy_wh=round(self._container_wh[container.container.id], 4)))

        new_unattributed = []
        for item in unattributed:
            if item.gpu_index in power:
                rest = max(0.0, 1.0 - sum(shares[item.gpu_index].values()))
                item = evolve(item, power_w=round(power[item.gpu_index] * rest, 2))
            new_unattributed.append(item)

        live = {(p.pid, p.start_time) for p in processes}
        for key in [k for k in self._process_wh if k not in live]:
            del self._process_wh[key]  # totals of exited processes live on in their container's
        return tuple(new_processes), tuple(new_containers), tuple(new_unattributed)
