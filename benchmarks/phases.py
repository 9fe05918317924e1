"""Where ``fanwhy top``'s first frame waits: the start-up's steps on one clock, as a person's start meets them.

``fanwhy top`` runs in a pseudo-terminal (120 x 40, as ``benchmarks/top.py``) through a small bootstrap that wraps a
few of its functions as their modules load (an import hook: nothing is imported earlier or in another order than
the program imports it) and records when each began and ended, on which thread, on the system's monotonic clock;
the first frame is when the GPU table's last column title reached the terminal. Each step is printed as
milliseconds after the program was started (``benchmarks/oneshot_trace.py`` does the same for a one-shot answer).
With ``--variant``, other versions' app/ start in turn with this one, for an A/B of the first frame. Run on a GPU
machine:
``python -m benchmarks.phases --starts 10 [--variant before=DIR] --out phases.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.oneshot import emit, timed_env
from benchmarks.peers import start_loads
from benchmarks.top import ROOT, Pty

# module -> the functions (or Class.method) whose span is recorded
WATCHED = {
    "app.vendors.nvml_early": ["_open", "taken"],
    "app.cli.start": ["started"],
    "app.vendors.factory": ["select_in_background"],
    "app.vendors.nvidia": ["NvidiaBackend.__init__", "NvidiaBackend.sample", "NvidiaBackend.processes"],
    "app.collect.assemble": ["build_collector"],
    "app.collect.collector": ["Collector.prime", "Collector.start", "Collector._collect", "Collector._read_backend"],
    "app.collect.fans": ["FanService.wait_first", "FanService.read"],
    "app.attribution.attributor": ["Attributor.attribute"],
    "app.verdict.explain": ["explain"],
    "app.cli.top": ["run_screen", "LocalFeed.latest"],
    "app.attribution.listing": ["ProcessListing.page"],
    "app.collect.serialize": ["snapshot_view"],
    "app.cli.topview": ["frame"],
}

CHILD = r"""
import time
_T0 = time.monotonic()
import atexit, functools, importlib.machinery, json, os, sys, threading
_MARKS = [("interpreter's first line", "MainThread", _T0, _T0)]
_WATCHED = json.loads(os.environ["PHASES_WATCHED"])

def _wrapped(name, fn):
    @functools.wraps(fn)
    def call(*a, **k):
        began = time.monotonic()
        try:
            return fn(*a, **k)
        finally:
            _MARKS.append((name, threading.current_thread().name, began, time.monotonic()))
    return call

class _Finder:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name not in _WATCHED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            for dotted in _WATCHED[name]:
                owner, _, attr = dotted.rpartition(".")
                holder = getattr(module, owner) if owner else module
                setattr(holder, attr, _wrapped(f"{name.rsplit('.', 1)[1]}.{dotted}", getattr(holder, attr)))
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _Finder)

@atexit.register
def _write():
    with open(os.environ["PHASES_OUT"], "w") as out:
        json.dump(_MARKS, out)

sys.argv = ["fanwhy", "top"]
from app.__main__ import run
run()
"""


def one_start(env: dict[str, str], importtime: str = "", source: Path = ROOT) -> dict[str, Any]:
    """One start of ``fanwhy top``, its steps; with ``importtime`` (a file), Python's ``-X importtime`` report of
    that start is written there (the report's own cost slows that start)."""
    with tempfile.TemporaryDirectory() as folder:
        out, child = Path(folder) / "marks.json", Path(folder) / "child.py"
        child.write_text(CHILD)
        argv = [sys.executable, str(child)]
        if importtime:
            argv = ["sh", "-c", f"exec {sys.executable} -X importtime {child} 2>{importtime}"]
        started = time.monotonic()
        program = Pty(argv, {**env, "PHASES_OUT": str(out), "PHASES_WATCHED": json.dumps(WATCHED),
                             "PYTHONPATH": os.pathsep.join(filter(None, [str(source), env.get("PYTHONPATH")]))})
        first = program.read_until(b"HISTORY", 60)
        os.write(program.fd, b"q")
        deadline = time.monotonic() + 10
        while not out.exists() and time.monotonic() < deadline:
            program.drain(0.1)
        program.stop()
        marks = json.loads(out.read_text()) if out.exists() else []
    steps = [{"step": name, "thread": thread, "from_ms": round((began - started) * 1000, 1),
              "to_ms": round((ended - started) * 1000, 1)} for name, thread, began, ended in marks]
    steps.sort(key=lambda s: s["from_ms"])
    result: dict[str, Any] = {"first_frame_ms": round(first, 1) if first is not None else None, "steps": steps}
    if first is None:
        result["output_tail"] = program.output[-2000:].decode(errors="replace")
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--loads", type=int, default=0, help="CUDA loads (default: one per GPU, up to 4)")
    parser.add_argument("--out", default="")
    parser.add_argument("--importtime", default="", help="also one start with -X importtime, its report to this file")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=DIR",
                        help="also start the app/ of DIR (e.g. `git archive REV app | tar -x -C DIR`), each start of "
                             "each in turn; the first frames of each compared")
    args = parser.parse_args()
    variants = {"this": ROOT, **{name: Path(folder) for name, _, folder in (v.partition("=") for v in args.variant)}}
    import pynvml

    pynvml.nvmlInit()
    gpus = pynvml.nvmlDeviceGetCount()
    loads = start_loads(args.loads or min(4, gpus), 600, gpus)
    env = {**timed_env(), "FANWHY_INTERVAL": "1"}
    for source in variants.values():
        timed_env(source)  # each version's app/ compiled, as an install has it
    try:
        by_variant: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
        for number in range(args.starts):
            order = list(variants.items())
            for name, source in order[number % len(order):] + order[:number % len(order)]:  # each place in turn
                by_variant[name].append(one_start(env, source=source))
        starts = by_variant["this"]
        if args.importtime:
            one_start(env, args.importtime)
    finally:
        for load in loads:
            load.kill()
            load.wait()
    firsts = [s["first_frame_ms"] for s in starts if s["first_frame_ms"] is not None]
    results = {"gpus": gpus, "loads": len(loads), "date": time.strftime("%Y-%m-%d"),
               "first_frame_ms_median": round(statistics.median(firsts), 1) if firsts else None, "starts": starts}
    for name, runs in by_variant.items():
        each = [r["first_frame_ms"] for r in runs]
        valid = [f for f in each if f is not None]
        results.setdefault("variants", {})[name] = {"first_frame_ms_each": each,
                                                     "median": round(statistics.median(valid), 1) if valid else None}
        print(f"{name}: first frame median {results['variants'][name]['median']} ms of {each}", file=sys.stderr)
    for number, start in enumerate(starts):
        print(f"start {number}: first frame {start['first_frame_ms']} ms {start.get('output_tail', '')}",
              file=sys.stderr)
        for step in start["steps"]:
            print(f"  {step['from_ms']:7.1f} -> {step['to_ms']:7.1f} ms  {step['thread'][:18]:18}  {step['step']}",
                  file=sys.stderr)
    emit(results, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
