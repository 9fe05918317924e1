"""History at scale: N days of 8 GPUs at 1 s (synthetic) written through History.write, then chart queries.

    .venv/bin/python -m benchmarks.history [--days 7] [--gpus 8] [--db /tmp/fanwhy-bench.db]

Writes go through the real path (raw rows, minute rollups, trimming of raw rows older than an hour),
in batches of 300 ticks (what the writer thread does when it falls behind). Reports the write rate,
the database size, the time of a 24 h chart query (per-minute mean/min/max) and a 15 min raw query,
and the machine.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import psutil

from app.core.model import GpuSample, HostSample
from app.core.snapshot import BackendInfo, CollectorTiming, Snapshot
from app.store.history import History

HOST = HostSample(hostname="bench", cpu_percent=0, cpu_count=1, load_average=None, memory_used_bytes=0,
                  memory_total_bytes=1)
TIMING = CollectorTiming(0, 0, 0, 0, 1.0, 0)


def snapshot(ts: float, gpus: int) -> Snapshot:
    wave = 50 + 45 * math.sin(ts / 600.0)
    return Snapshot(timestamp=ts, backend=BackendInfo(name="bench"), host=HOST, processes=(), timing=TIMING,
                    gpus=tuple(GpuSample(vendor="nvidia", index=i, utilization_percent=wave, memory_used_bytes=2**34,
                                         memory_total_bytes=2**37, temperature_c=40 + wave / 2, power_w=100 + 5 * wave,
                                         clock_sm_mhz=1500) for i in range(gpus)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=float, default=7)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--db", default=os.path.join(tempfile.mkdtemp(prefix="fanwhy-bench-"), "history.db"))
    args = parser.parse_args()
    seconds = int(args.days * 86400)
    end = time.time() // 60 * 60
    start = end - seconds
    clock = [start]
    history = History(Path(args.db), retention_hours=max(args.days * 24, 168) + 1, clock=lambda: clock[0]).open()

    began = time.perf_counter()
    batch = []
    for t in range(seconds):
        batch.append(snapshot(start + t, args.gpus))
        if len(batch) == 300:
            clock[0] = start + t
            history.write(batch)
            batch = []
    if batch:
        history.write(batch)
    written = time.perf_counter() - began
    clock[0] = end

    def timed(since: float, until: float, step: float | None) -> tuple[float, int, str]:
        runs = []
        for _ in range(5):
            t0 = time.perf_counter()
            win = history.window(since, until, step)
            points = history.gpu_series(0, "utilization_percent", win)
            runs.append(time.perf_counter() - t0)
        return statistics.median(runs) * 1000, len(points), win.source

    day_ms, day_points, day_source = timed(end - 86400, end, None)
    week_ms, week_points, _ = timed(end - 7 * 86400, end, None)
    raw_ms, raw_points, raw_source = timed(end - 900, end, 1)
    size = history.size_bytes()
    assert history.error is None, history.error
    history.close()

    rows = seconds * args.gpus
    print(f"wrote {args.days:g} days x {args.gpus} GPUs at 1 s = {rows:,} GPU samples in {written:.1f} s "
          f"({rows / written:,.0f} samples/s)")
    print(f"database: {size / 2**20:.1f} MiB ({args.db})")
    print(f"24 h chart query: {day_ms:.1f} ms median of 5, {day_points} points from {day_source}")
    print(f"7 d chart query: {week_ms:.1f} ms, {week_points} points; 15 min raw query: {raw_ms:.1f} ms, "
          f"{raw_points} points from {raw_source}")
    print(f"machine: {platform.node()} {platform.machine()}, {psutil.cpu_count()} CPUs, "
          f"{psutil.virtual_memory().total / 2**30:.0f} GiB, Python {platform.python_version()}")


if __name__ == "__main__":
    main()
