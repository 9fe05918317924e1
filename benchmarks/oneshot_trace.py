"""Where the time of a one-shot answer goes: ``fanwhy snapshot --json`` in a fresh process, with marks at each step.

The child runs what ``app.__main__.run`` runs (``app.cli.early.begin``, then ``app.cli.main.main``) and wraps each
step (the CPU baseline, the backend's opening on its thread, the collector's assembly, the tick and its parts) as the
command itself imports its module, so the order is the command's own; it prints the marks as milliseconds since
the parent started it.
Beside it: a bare interpreter, and a fresh process that only calls nvmlInit and reads the buffered per-process SM %
(the floor the issue measured). Run on a GPU machine with a load: ``python -m benchmarks.oneshot_trace --rounds 7``.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.oneshot import arguments, emit, timed_env, wall
from benchmarks.peers import start_loads

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import importlib.abc, importlib.machinery, json, sys, time
T0 = float(sys.argv[1]); marks = []
def mark(name):
    marks.append((name, round((time.time() - T0) * 1000, 1)))
mark("interpreter ready")
def wrap(owner, attr, label):
    inner = getattr(owner, attr)
    def wrapper(*a, **k):
        mark(label + " start")
        try:
            return inner(*a, **k)
        finally:
            mark(label + " end")
    setattr(owner, attr, wrapper)
WRAPS = {  # module -> (attribute path, label), wrapped as soon as the command itself imports the module
    "app.attribution.procscan": [("scan", "CPU baseline (scan)")],
    "app.vendors.factory": [("select_backend", "(thread) select_backend")],
    "app.vendors.nvidia": [("NvidiaBackend.open", "(thread)   nvidia open"), ("NvidiaBackend.sample", "  gpus"),
                           ("NvidiaBackend.processes", "  gpu processes")],
    "app.collect.assemble": [("build_collector", "build_collector")],
    "app.collect.collector": [("Collector._collect", "tick"), ("Collector._publish", "  publish"),
                    ("Collector.start", "collector.start"), ("Collector.prime", "prime (the CPU window's wait after)")],
    "app.collect.fans": [("FanService.wait_first", "  fans' first readings")],
    "app.vendors.nvml_early": [("_open", "(early thread) import pynvml, nvmlInit")],
    "app.attribution.attributor": [("Attributor.attribute", "  attribute")],
    "app.collect.host": [("HostSampler.sample", "  host")],
}
class AfterImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in WRAPS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        execute = spec.loader.exec_module
        def exec_module(module):
            execute(module)
            mark(name + " imported")
            for dotted, label in WRAPS[name]:
                *owner, attr = dotted.split(".")
                wrap(getattr(module, owner[0]) if owner else module, attr, label)
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, AfterImport())
from app.cli import early  # as app.__main__.run: the CPU baseline first, then the commands' imports
early.begin(["snapshot", "--json"])
mark("early baseline read")
import app.cli.main as m
mark("app.cli.main imported")
code = m.main(["snapshot", "--json"])
mark("main returned")
sys.stderr.write(json.dumps(marks) + "\n")
sys.stderr.flush()
import os
os._exit(code)  # as run() ends a one-shot answer
"""


def main() -> int:
    args = arguments(7)
    (load,) = start_loads(1, 300, 1)
    env = timed_env()
    floor = ("import pynvml; pynvml.nvmlInit(); h = pynvml.nvmlDeviceGetHandleByIndex(0); "
             "print([(s.pid, s.smUtil) for s in pynvml.nvmlDeviceGetProcessUtilization(h, 0)])")
    plain = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -S -c pass": [sys.executable, "-S", "-c", "pass"],
        "nvmlInit + process utilization": [sys.executable, "-c", floor],
        "import app.collect.assemble": [sys.executable, "-c", "import app.collect.assemble"],
        "import psutil": [sys.executable, "-c", "import psutil"],
        "fanwhy snapshot --json": [sys.executable, "-m", "app", "snapshot", "--json"],
    }
    results: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "load_pid": load.pid}
    times: dict[str, list[float]] = {name: [] for name in [*plain, "traced"]}
    traces: list[Any] = []
    try:
        for _ in range(args.rounds):
            for name, argv in plain.items():
                times[name].append(wall(argv, env)[0])
            ms, result = wall([sys.executable, "-c", CHILD, repr(time.time())], env)
            times["traced"].append(ms)
            lines = result.stderr.strip().splitlines()
            traces.append({"wall_ms": round(ms, 1), "marks": json.loads(lines[-1]) if lines else result.stderr})
    finally:
        load.kill()
        load.wait()
    results["medians_ms"] = {name: round(statistics.median(taken), 1) for name, taken in times.items()}
    results["traces"] = traces
    return emit(results, args.out)


if __name__ == "__main__":
    sys.exit(main())
