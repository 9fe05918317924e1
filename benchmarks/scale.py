"""CPU-only scale: the fake NVML with 8 GPUs and 500 GPU processes, a synthetic /proc with 5,000 host processes.

    .venv/bin/python -m benchmarks.scale [--gpus 8] [--gpu-processes 500] [--host-processes 5000]

Reports the collector's tick (median, p99) with the top-CPU scan at its normal 5 s rate and on every tick
(the worst case), the payload per tick, the memory the collector holds, and REST /api/gpu/summary throughput
from 8 concurrent callers against the app served on 127.0.0.1. The synthetic /proc is a folder of the
files FanWhy reads (stat, cmdline, status), with CPU times that advance between ticks.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import threading
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import requests
from werkzeug.serving import make_server

from app import build_collector, create_app
from app.attribution.attributor import Attributor
from app.attribution.processes import ProcessInspector
from app.collect.settings import Settings
from app.vendors.factory import Selection
from app.vendors.nvidia import NvidiaBackend
from tests.fakes.fake_nvml import FakeNvml, load_dump

STAT = ("{pid} (worker{pid}) S 1 {pid} {pid} 0 -1 4194304 100 0 0 0 {utime} {stime} 0 0 20 0 1 0 {start} "
        "1000000 2500 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n")


def synthetic_proc(root: Path, count: int, tick: int) -> None:
    for pid in range(1000, 1000 + count):
        directory = root / str(pid)
        if tick == 0:
            directory.mkdir(parents=True, exist_ok=True)
            (directory / "cmdline").write_bytes(f"/usr/bin/worker\0--id\0{pid}\0--token\0secret\0".encode())
            (directory / "status").write_text(f"Name:\tworker{pid}\nUid:\t0\t0\t0\t0\nNSpid:\t{pid}\n")
            (directory / "cgroup").write_text("0::/system.slice/worker.service\n")
        busy = (pid % 50) * tick
        (directory / "stat").write_text(STAT.format(pid=pid, utime=busy, stime=tick, start=100 + pid))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--gpu-processes", type=int, default=500)
    parser.add_argument("--host-processes", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    proc_root = Path(tempfile.mkdtemp(prefix="fanwhy-proc-"))
    synthetic_proc(proc_root, args.host_processes, 0)

    base = load_dump("h200x2-load")[1]
    tables = []
    per_gpu = args.gpu_processes // args.gpus
    for i in range(args.gpus):
        table = dict(base)
        table["uuid"] = f"GPU-scale-{i:04d}"
        pids = range(1000 + i * per_gpu, 1000 + (i + 1) * per_gpu)
        table["compute_processes"] = [{"pid": p, "usedGpuMemory": 2**28, "gpuInstanceId": 0, "computeInstanceId": 0}
                                      for p in pids]
        table["process_utilization"] = [{"pid": p, "timeStamp": 0, "smUtil": p % 7, "memUtil": 0, "encUtil": 0,
                                         "decUtil": 0} for p in pids]
        tables.append(table)
    backend = NvidiaBackend(nvml=FakeNvml(tables), watch_xid=False)
    backend.open()
    selection = Selection(backend=backend, skipped={})

    def monitor_with(every: float):
        collector = build_collector(Settings(db="none", top_cpu_processes=5), selection)
        inspector = ProcessInspector(top_cpu=5, proc_root=proc_root, resolve_foreign=True, top_cpu_every_s=every)
        collector.attributor = Attributor(inspector, None, proc_root=proc_root)
        return collector

    results = {}
    for label, every in (("top-CPU scan every 5 s", 5.0), ("top-CPU scan every tick", 0.0)):
        collector = monitor_with(every)
        times = []
        for tick in range(1, args.rounds + 1):
            synthetic_proc(proc_root, args.host_processes, tick)
            started = time.perf_counter()
            frame = collector.collect()
            times.append((time.perf_counter() - started) * 1000)
        tracemalloc.start()  # memory in a pass of its own: tracing slows every allocation
        for tick in range(args.rounds + 1, args.rounds + 6):
            synthetic_proc(proc_root, args.host_processes, tick)
            collector.collect()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        times.sort()
        assert frame is not None
        results[label] = {"median_ms": round(statistics.median(times[1:]), 2),
                          "p99_ms": round(times[int(0.99 * (len(times) - 1))], 2),
                          "peak_traced_mib": round(peak / 2**20, 1),
                          "processes_in_snapshot": len(frame.snapshot.processes)}
    payload = len(json.dumps(frame.view, separators=(",", ":")))

    app = create_app({"SETTINGS": Settings(db="none", rate_limit_per_s=0.0), "SELECTION": selection,
                      "START": False})
    app.extensions["fanwhy"].collector = collector
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/api/gpu/summary"
    durations: list[float] = []

    def call(_: int) -> None:
        started = time.perf_counter()
        requests.get(url, timeout=10).raise_for_status()
        durations.append(time.perf_counter() - started)

    began = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        while time.monotonic() - began < 5:
            list(pool.map(call, range(64)))
    elapsed = time.monotonic() - began
    server.shutdown()
    durations.sort()
    print(f"{args.gpus} GPUs (fake NVML), {args.gpu_processes} GPU processes, {args.host_processes} host processes"
          " (synthetic /proc)")
    for label, values in results.items():
        print(f"collector tick, {label}: median {values['median_ms']} ms, p99 {values['p99_ms']} ms, "
              f"peak traced memory {values['peak_traced_mib']} MiB, {values['processes_in_snapshot']} rows")
    print(f"payload per tick: {payload:,} bytes")
    print(f"REST /api/gpu/summary, 8 callers: {len(durations) / elapsed:.0f} requests/s, "
          f"p99 {durations[int(0.99 * (len(durations) - 1))] * 1000:.1f} ms (Werkzeug's threaded server)")
    print(f"machine: {platform.node()} {platform.machine()}, {psutil.cpu_count()} CPUs, "
          f"Python {platform.python_version()}")


if __name__ == "__main__":
    main()
