"""A history under a test's clock: the clock, a snapshot of one GPU, its host and a process at a time, and ``feed``
that writes a run of them through the real write path."""

from __future__ import annotations

from typing import Any

from app.core.fan import Fan
from app.core.model import GpuSample, HostSample, ProcessGpu, ProcessSample
from app.core.snapshot import BackendInfo, CollectorTiming, Snapshot
from app.store.history import History

GIB = 1 << 30
T0 = 1_800_000_000.0  # a minute boundary


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def snap(ts: float, util: float, index: int = 0, pid: int | None = None, sm: float = 0.0,
         temp: float = 50.0, gpus: bool = True) -> Snapshot:
    gpu = GpuSample(vendor="nvidia", index=index, uuid=f"GPU-{index}", name="T", utilization_percent=util,
                    memory_used_bytes=GIB, memory_total_bytes=4 * GIB, temperature_c=temp, power_w=100 + util,
                    power_limit_w=300)
    procs: tuple[ProcessSample, ...] = ()
    if pid is not None:
        use = ProcessGpu(gpu_index=index, memory_bytes=GIB, sm_percent=sm, encoder_percent=0, decoder_percent=0,
                         kind="compute")
        procs = (ProcessSample(pid=pid, name="python", program="python train.py", user="alice",
                               command="/usr/bin/python /home/alice/train.py", start_time=1.0,
                               cpu_percent=10, rss_bytes=1, gpus=(use,), power_w=sm, energy_wh=ts - T0),)
    host = HostSample(hostname="h", cpu_percent=util / 2, cpu_count=1, load_average=(util / 50, 0, 0),
                      memory_used_bytes=GIB, memory_total_bytes=4 * GIB, cpu_temperature_c=40 + util / 10)
    fan = Fan(id="hwmon:it8720/fan1", chip="it8720", channel=1, label="cpu_fan", rpm=int(1000 + 10 * util),
              source="it8720 CPU", source_c=40 + util / 10, state="running")
    return Snapshot(timestamp=ts, backend=BackendInfo(name="t"), host=host, gpus=(gpu,) if gpus else (),
                    processes=procs, fans=(fan,),
                    timing=CollectorTiming(0, 0, 0, 0, 1, 1))


def feed(history: History, clock: Clock, seconds: int, util: Any = lambda t: t % 100, start: float = T0,
         every: int = 1, **kw: Any) -> None:
    for t in range(0, seconds, every):
        clock.now = start + t
        history.write([snap(clock.now, util(t), **kw)])
