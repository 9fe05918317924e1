"""FanWhy's collector against nvitop, gpustat, nvidia-smi and the raw NVML + psutil floor, on the same card.

Run on the GPU machine (with the peers installed: nvitop==1.7.2 gpustat==1.1.1; CONTRIBUTING.md says how):

    python3 -m benchmarks.peers --loads 1 --out results.json
    python3 -m benchmarks.peers --loads 4 --cpu-seconds 60 --push --out results.json

One full snapshot = every GPU plus its processes with name, user and command line. Each tool is timed
over ``--rounds`` snapshots after warm-up (median and p99). ``--cpu-seconds`` runs FanWhy's collector at a
1 s interval and reports its CPU use; ``--push`` measures the time from a CUDA process starting to the
first Socket.IO update that names it, on a real `python -m app`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import psutil

from benchmarks import targets
from benchmarks.measure import collector_cpu, machine, report, running_server

ROOT = Path(__file__).resolve().parent.parent
LOAD = ROOT / "tests" / "gpu" / "cuda_load.py"


def summary(samples: list[float]) -> dict[str, float]:
    samples = sorted(samples)

    def at(q: float) -> float:
        return round(samples[int(q * (len(samples) - 1))], 3)

    return {"median_ms": round(statistics.median(samples), 3), "p99_ms": at(0.99), "min_ms": round(samples[0], 3),
            "p10_ms": at(0.1), "p90_ms": at(0.9), "rounds": len(samples)}


def timed(fn: Callable[[], Any], rounds: int, warm: int = 3) -> dict[str, float]:
    for _ in range(warm):
        fn()
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return summary(samples)


def timed_side_by_side(fns: dict[str, Callable[[], Any]], rounds: int, warm: int = 3) -> dict[str, dict[str, float]]:
    """Each round times every function once, in turn (the order rotating), so that whatever else the
    machine does at a moment weighs on all of them alike: their ratio is then fair even on a noisy host."""
    names = list(fns)
    for _ in range(warm):
        for fn in fns.values():
            fn()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for i in range(rounds):
        for name in names[i % len(names):] + names[: i % len(names)]:
            started = time.perf_counter()
            fns[name]()
            samples[name].append((time.perf_counter() - started) * 1000)
    return {name: summary(values) for name, values in samples.items()}


def floor(nvml: Any) -> Callable[[], Any]:
    def snapshot() -> list[Any]:
        out = []
        for i in range(nvml.nvmlDeviceGetCount()):
            h = nvml.nvmlDeviceGetHandleByIndex(i)
            util, memory = nvml.nvmlDeviceGetUtilizationRates(h), nvml.nvmlDeviceGetMemoryInfo(h)
            temp, power = nvml.nvmlDeviceGetTemperature(h, 0), nvml.nvmlDeviceGetPowerUsage(h)
            procs = []
            for p in nvml.nvmlDeviceGetComputeRunningProcesses(h) + nvml.nvmlDeviceGetGraphicsRunningProcesses(h):
                try:
                    proc = psutil.Process(p.pid)
                    with proc.oneshot():
                        procs.append((p.pid, p.usedGpuMemory, proc.name(), proc.username(), proc.cmdline()))
                except psutil.Error:
                    pass
            out.append((util.gpu, memory.used, temp, power, procs))
        return out
    return snapshot


def profile(fn: Callable[[], Any], rounds: int) -> list[str]:
    """Where a tick's time goes: the 30 functions with the most time of their own, per tick."""
    import cProfile
    import io
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(rounds):
        fn()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(30)
    return out.getvalue().splitlines()


def start_loads(count: int, seconds: float, devices: int) -> list[subprocess.Popen]:
    loads = []
    for i in range(count):
        proc = subprocess.Popen([sys.executable, str(LOAD), "--seconds", str(seconds), "--hold-gb", "1",
                                 "--device", str(i % devices)], stdout=subprocess.PIPE, text=True)
        loads.append(proc)
    for proc in loads:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    time.sleep(3)
    return loads


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--loads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--cpu-seconds", type=float, default=0)
    parser.add_argument("--push", action="store_true")
    parser.add_argument("--push-runs", type=int, default=20)
    parser.add_argument("--profile", type=int, default=0, help="then profile this many collector ticks (cProfile)")
    parser.add_argument("--out", default="")
    args = parser.parse_args()

    import pynvml

    pynvml.nvmlInit()
    devices = pynvml.nvmlDeviceGetCount()
    card = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(0))
    loads = start_loads(args.loads, 600, devices)
    results: dict[str, Any] = {"card": card, "gpus": devices, "loads": args.loads,
                               "driver": pynvml.nvmlSystemGetDriverVersion(),
                               "host_processes": len(psutil.pids()), "date": time.strftime("%Y-%m-%d")}
    try:
        from app import build_collector
        from app.collect.settings import Settings

        collector = build_collector(Settings(backend="nvidia", db="none"))
        frame = collector.collect()
        stages: dict[str, list[float]] = {"gpus": [], "processes": [], "host": [], "after_stages": []}

        def fanwhy_tick() -> None:
            started = time.perf_counter()
            frame = collector.collect()
            assert frame is not None
            timing = frame.snapshot.timing
            stages["gpus"].append(timing.gpus_ms)
            stages["processes"].append(timing.processes_ms)
            stages["host"].append(timing.host_ms)
            stages["after_stages"].append((time.perf_counter() - started) * 1000 - timing.total_ms)

        from app.vendors.factory import Selection
        from app.vendors.nvidia import NvidiaBackend

        quiet = NvidiaBackend(watch_xid=False)  # the same collector without the XID event thread, for comparison
        quiet.open()
        without_xid = build_collector(Settings(backend="nvidia", db="none"), Selection(backend=quiet, skipped={}))
        both = timed_side_by_side({"floor": floor(pynvml), "fanwhy": fanwhy_tick,
                                   "fanwhy_without_xid_thread": without_xid.collect}, args.rounds)
        results["floor"], results["fanwhy"] = both["floor"], both["fanwhy"]
        results["fanwhy_without_xid_thread"] = both["fanwhy_without_xid_thread"]
        without_xid.stop(close_backend=False)
        results["fanwhy"]["stage_medians_ms"] = {k: round(statistics.median(v), 3) for k, v in stages.items()}
        gpm = getattr(collector.backend, "gpm", None)  # the activity counters' thread: its own CPU, apart from the tick
        if gpm is not None and gpm.reads:
            results["fanwhy"]["gpm_thread"] = {"reads": gpm.reads,
                                               "cpu_ms_per_read": round(1000 * gpm.cpu_s / gpm.reads, 3)}
        frame = collector.collect()
        assert frame is not None
        seen = {p.pid for p in frame.snapshot.processes if p.gpus}
        results["fanwhy"]["processes_seen"] = len(seen & {p.pid for p in loads})
        results["payload_bytes_per_tick"] = len(json.dumps(frame.view, separators=(",", ":")))
        if args.profile:
            results["fanwhy"]["profile"] = profile(collector.collect, args.profile)
        try:
            import gpustat

            results["gpustat"] = timed(gpustat.new_query, min(args.rounds, 100))
        except ImportError as error:
            results["gpustat"] = {"skipped": str(error)}
        try:
            from nvitop import Device, GpuProcess

            all_devices = Device.all()

            def nvitop_snapshot() -> list[Any]:
                return [(d.as_snapshot(), GpuProcess.take_snapshots(d.processes().values(), failsafe=True))
                        for d in all_devices]

            results["nvitop"] = timed(nvitop_snapshot, min(args.rounds, 200))
        except ImportError as error:
            results["nvitop"] = {"skipped": str(error)}
        results["nvidia_smi_q_x"] = timed(lambda: subprocess.run(["nvidia-smi", "-q", "-x"], capture_output=True),
                                          10, warm=1)
        floor_ms = results["floor"]["median_ms"]
        ours = results["fanwhy"]["median_ms"]
        results["fanwhy_vs_floor"] = round(ours / floor_ms, 2)
        if "median_ms" in results.get("nvitop", {}):
            results["nvitop_vs_fanwhy"] = round(results["nvitop"]["median_ms"] / ours, 1)

        if args.cpu_seconds:
            results["collector_cpu_percent_at_1s"], results["rss_mib"] = collector_cpu(collector, args.cpu_seconds)
        collector.backend.close()
        if args.push:
            results["push"] = push_latency(devices, args.push_runs)
    finally:
        for proc in loads:
            proc.kill()
            proc.wait()
    results["machine"] = machine()
    measured: list[tuple[targets.Target, float | None]] = []
    if args.loads in (1, 4):
        measured.append((targets.FLOOR_ONE if args.loads == 1 else targets.FLOOR_FOUR, results["fanwhy_vs_floor"]))
    if "nvitop_vs_fanwhy" in results:
        measured.append((targets.NVITOP, results["nvitop_vs_fanwhy"]))
    if args.cpu_seconds:
        measured.append((targets.COLLECTOR_CPU, results["collector_cpu_percent_at_1s"]))
    if args.push:
        p99 = results["push"]["p99_s"]
        measured.append((targets.PUSH, None if p99 is None else p99 * 1000))
    code = targets.judged(results, measured)
    report(results, args.out)
    return code


def push_latency(devices: int, rounds: int) -> dict[str, Any]:
    """From a CUDA process's start to the first Socket.IO update that names it (interval 1 s)."""
    import pynvml
    import socketio

    with running_server({"FANWHY_BACKEND": "nvidia", "FANWHY_INTERVAL": "1"}) as (_server, url):
        runs = []
        for _ in range(rounds):
            seen: dict[str, float] = {}
            client = socketio.Client(reconnection=False)
            target: dict[str, int] = {}

            def on_update(snap: dict, seen: dict = seen, target: dict = target) -> None:
                pid = target.get("pid")
                if pid and "at" not in seen and any(p["pid"] == pid for p in snap["processes"] if p["gpus"]):
                    seen["at"] = time.monotonic()

            client.on("gpu_status_update", on_update)
            client.connect(url, transports=["websocket"], wait_timeout=10)
            load = subprocess.Popen([sys.executable, str(LOAD), "--seconds", "20", "--hold-gb", "1"],
                                    stdout=subprocess.DEVNULL)
            target["pid"] = load.pid
            on_gpu = None  # when NVML first lists the process: the ground truth, polled every 5 ms
            started = time.monotonic()
            while "at" not in seen and time.monotonic() - started < 60:
                if on_gpu is None:
                    for i in range(devices):
                        handle = pynvml.nvmlDeviceGetHandleByIndex(i)
                        if any(p.pid == load.pid for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle)):
                            on_gpu = time.monotonic()
                time.sleep(0.005)
            client.disconnect()
            load.kill()
            load.wait()
            if "at" in seen and on_gpu is not None:
                runs.append(seen["at"] - on_gpu)
            time.sleep(1)
        ordered = sorted(runs)
        return {"nvml_lists_it_to_event_s": [round(r, 3) for r in runs], "runs": len(runs),
                "median_s": round(statistics.median(runs), 3) if runs else None,
                "p99_s": round(ordered[int(0.99 * (len(ordered) - 1))], 3) if runs else None,
                "max_s": round(max(runs), 3) if runs else None, "interval_s": 1.0}


if __name__ == "__main__":
    raise SystemExit(main())
