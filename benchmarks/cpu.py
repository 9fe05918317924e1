"""The collector's CPU use at a 1 s interval on real NVML, with this machine's GPUs or with more of them
addressed through the real ones (device only).

    python3 -m benchmarks.cpu --seconds 60              # the GPUs this machine has, one CUDA process each
    python3 -m benchmarks.cpu --seconds 60 --gpus 8     # 8 GPUs: NVML index i is served by real GPU i % count

With ``--gpus`` above the real count every NVML call FanWhy makes for that many GPUs is made, on a real
card, so the driver's cost per call is what is measured; what is not real is that different boards
answer (each real GPU's process shows on each GPU that maps to it). The CPU is the whole collector
process's (its threads and NVML's), from /proc, over ``--seconds``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from typing import Any

from benchmarks import targets
from benchmarks.measure import collector_cpu, machine, report
from benchmarks.peers import start_loads


class Counting:
    """pynvml, counting the calls to each nvml* function (to show where the CPU goes)."""

    def __init__(self, nvml: Any):
        self._nvml = nvml
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._nvml, name)
        if not name.startswith("nvml") or not callable(value) or isinstance(value, type):
            return value

        def counted(*args: Any) -> Any:
            self.calls[name] += 1
            return value(*args)

        return counted


class Repeated:
    """pynvml with ``count`` GPUs, index i answered by real GPU i % the real count."""

    def __init__(self, nvml: Any, count: int):
        self._nvml, self._count = nvml, count
        self._real = nvml.nvmlDeviceGetCount()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._nvml, name)

    def nvmlDeviceGetCount(self) -> int:
        return self._count

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any:
        return self._nvml.nvmlDeviceGetHandleByIndex(index % self._real)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--gpus", type=int, default=0, help="GPUs to address (default: the real count)")
    parser.add_argument("--idle", action="store_true", help="start no CUDA process")
    parser.add_argument("--out", default="")
    args = parser.parse_args()

    import pynvml

    from app import build_collector
    from app.collect.settings import Settings
    from app.vendors.factory import Selection
    from app.vendors.nvidia import NvidiaBackend

    pynvml.nvmlInit()
    real = pynvml.nvmlDeviceGetCount()
    gpus = args.gpus or real
    loads = [] if args.idle else start_loads(real, 600, real)
    try:
        counting = Counting(pynvml)
        backend = NvidiaBackend(nvml=Repeated(counting, gpus) if gpus != real else counting)
        backend.open()
        collector = build_collector(Settings(backend="nvidia", db="none"), Selection(backend=backend, skipped={}))
        frame = collector.collect()
        assert frame is not None and len(frame.snapshot.gpus) == gpus
        ticks = []
        for _ in range(50):
            started = time.perf_counter()
            collector.collect()
            ticks.append((time.perf_counter() - started) * 1000)
        counting.calls.clear()
        percent, rss = collector_cpu(collector, args.seconds)
        calls_per_s = {name: round(n / args.seconds, 2) for name, n in counting.calls.most_common()}
        backend.close()
    finally:
        for proc in loads:
            proc.kill()
            proc.wait()
    result = {"card": pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(0)), "real_gpus": real,
              "gpus_addressed": gpus, "cuda_processes": len(loads), "seconds": args.seconds,
              "collector_cpu_percent_at_1s": percent, "rss_mib": rss,
              "tick_median_ms": round(statistics.median(ticks), 3), "nvml_calls_per_s": calls_per_s,
              "date": time.strftime("%Y-%m-%d"), "machine": machine()}
    code = targets.judged(result, [(targets.COLLECTOR_CPU, percent)])
    report(result, args.out)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
