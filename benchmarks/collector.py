"""Collector cost on the CPU with the fake NVML (no GPU needed): median and p99 of one full tick.

    .venv/bin/python -m benchmarks.collector [--gpus 8] [--rounds 200]

Reports the machine it ran on; on the GPU machine, run with FANWHY_BACKEND=nvidia for the real card.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import psutil

from app import build_collector
from app.collect.settings import Settings
from app.vendors.factory import Selection
from app.vendors.nvidia import NvidiaBackend
from benchmarks.measure import collector_cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--cpu-seconds", type=float, default=0,
                        help="then run the collector thread at a 1 s interval this long and report its CPU use")
    args = parser.parse_args()
    if os.environ.get("FANWHY_BACKEND") == "nvidia":
        collector = build_collector(Settings(backend="nvidia", db="none"))
        source = "real NVML"
    else:
        from tests.fakes.fake_nvml import FakeNvml, load_dump

        tables = [load_dump("h200x2-load")[1] for _ in range(args.gpus)]
        backend = NvidiaBackend(nvml=FakeNvml(tables))
        backend.open()
        collector = build_collector(Settings(db="none"), Selection(backend=backend, skipped={}))
        source = f"fake NVML, {args.gpus} GPUs"
    collector.collect()
    times = []
    for _ in range(args.rounds):
        started = time.perf_counter()
        collector.collect()
        times.append((time.perf_counter() - started) * 1000)
    cpu_line = ""
    if args.cpu_seconds:
        percent, rss = collector_cpu(collector, args.cpu_seconds)
        cpu_line = (f"collector thread at a 1 s interval for {args.cpu_seconds:g} s: {percent:.2f} % of one core, "
                    f"RSS {rss:.0f} MiB")
    collector.stop()
    times.sort()
    print(f"collector tick ({source}): median {statistics.median(times):.2f} ms, "
          f"p99 {times[int(0.99 * (len(times) - 1))]:.2f} ms over {args.rounds} rounds")
    if cpu_line:
        print(cpu_line)
    print(f"machine: {platform.node()} {platform.machine()}, {psutil.cpu_count()} CPUs, "
          f"{len(psutil.pids())} host processes, Python {platform.python_version()}")


if __name__ == "__main__":
    main()
