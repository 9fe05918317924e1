"""Builders of model objects for tests of the verdict, the history and the views: a GPU, a process, a snapshot with
the defaults a test does not care about."""

from __future__ import annotations

from typing import Any, Sequence

from app.core.fan import Fan
from app.core.model import ContainerRef, GpuSample, HostSample, ProcessGpu, ProcessSample, frozen_map
from app.core.snapshot import BackendInfo, CollectorTiming, Snapshot
from app.vendors.nvml_fans import PASSIVELY_COOLED

GIB = 1 << 30


def gpu_fans(index: int, percent: float | None, fan_id: str | None = None) -> tuple[Fan, ...]:
    """A test card's one fan at ``percent`` (none for None: a passive card), as its backend reads it; ``fan_id``
    that of the record a fan source keeps of it (an amdgpu card's hwmon chip: ``hwmon:amdgpu/fan1``)."""
    return () if percent is None else (Fan(id=fan_id or f"nvml:{index}/fan0", chip=f"GPU {index}", channel=0,
                                           label=None, percent=percent, gpu_index=index),)


def gpu(index: int = 0, util: float = 0, temp: float = 34, power: float = 30, limit: float = 350,
        fan: float | None = 30, fan_id: str | None = None, **kw: Any) -> GpuSample:
    unsupported = {} if fan is not None else {"fan_speed_percent": PASSIVELY_COOLED}
    kw.setdefault("throttle_reasons", ())
    return GpuSample(vendor="nvidia", index=index, uuid=f"GPU-{index}", name="Test GPU", utilization_percent=util,
                     temperature_c=temp, temperature_slowdown_c=87, power_w=power, power_limit_w=limit,
                     fans=gpu_fans(index, fan, fan_id), memory_used_bytes=1 * GIB, memory_total_bytes=24 * GIB,
                     pstate="P2" if util else "P8", unsupported=frozen_map(unsupported),
                     passively_cooled=fan is None, **kw)


def proc(pid: int, command: str, user: str = "alice", gpu_index: int | None = 0, sm: float | None = 0,
         memory: int | None = GIB, cpu: float = 5, container: str | None = None, **kw: Any) -> ProcessSample:
    gpus = () if gpu_index is None else (ProcessGpu(gpu_index=gpu_index, memory_bytes=memory, sm_percent=sm,
                                                    encoder_percent=0, decoder_percent=0, kind="compute"),)
    ref = ContainerRef(runtime="docker", id=(container or "x") * 8, name=container) if container else None
    return ProcessSample(pid=pid, name=command.split()[0], user=user, command=command, start_time=100.0 + pid,
                         cpu_percent=cpu, rss_bytes=GIB, gpus=gpus, container=ref, **kw)


def snap(gpus: list[GpuSample], processes: Sequence[ProcessSample] = (), cpu: float = 5, timestamp: float = 1000.0,
         **kw: Any) -> Snapshot:
    host = HostSample(hostname="box", cpu_percent=cpu, cpu_count=kw.pop("cores", 1), load_average=(1, 1, 1),
                      memory_used_bytes=GIB,
                      memory_total_bytes=16 * GIB, cpu_temperature_c=48.0)
    return Snapshot(timestamp=timestamp, backend=BackendInfo(name="t"), host=host, gpus=tuple(gpus),
                    processes=tuple(processes), timing=CollectorTiming(1, 1, 0, 0, 1.0, 1), **kw)
