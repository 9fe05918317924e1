"""How soon a one-shot terminal answer comes, beside nvidia-smi and the gpustat CLI, with a CUDA load running.

Each command is a fresh process, timed from its start to its exit (wall), as a person at a shell meets it. FanWhy's
answer must name the load's process with its SM % (it is taken from the samples NVML already buffers). Run on a GPU
machine: ``python -m benchmarks.oneshot --rounds 7 --out result.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.peers import start_loads

ROOT = Path(__file__).resolve().parent.parent


def wall(argv: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    return (time.perf_counter() - started) * 1000, result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    (load,) = start_loads(1, 300, 1)
    # Compiled first, as an installed package is: where PYTHONDONTWRITEBYTECODE is set (the GPU machines set it),
    # every run would otherwise compile the sources again, ~0.18 s on an H100 host, which no installed FanWhy pays.
    # Compile the site-packages of the other tools the same way before comparing (see docs/PERFORMANCE.md).
    env = {**os.environ, "FANWHY_DB": "none"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", "app"], cwd=ROOT, env=env, check=False)
    commands = {
        "fanwhy snapshot --json": [sys.executable, "-m", "app", "snapshot", "--json"],
        "fanwhy snapshot": [sys.executable, "-m", "app", "snapshot"],
        "nvidia-smi": ["nvidia-smi"],
        "gpustat": [sys.executable, "-m", "gpustat"],
    }
    results: dict[str, Any] = {"load_pid": load.pid, "date": time.strftime("%Y-%m-%d")}
    times: dict[str, list[float]] = {name: [] for name in commands}
    seen: list[float | None] = []
    try:
        for _ in range(args.rounds):  # the commands take turns, so a drift of the machine weighs on all alike
            for name, argv in commands.items():
                ms, result = wall(argv, env)
                times[name].append(ms)
                if name == "fanwhy snapshot --json" and result.returncode == 0:
                    view = json.loads(result.stdout)
                    mine = [p for p in view["processes"] if p["pid"] == load.pid]
                    seen.append(mine[0]["sm_percent"] if mine else None)
                    results["card"] = view["gpus"][0]["name"] if view["gpus"] else None
                    results["headline"] = view["verdict"]["headline"]
                elif result.returncode != 0:
                    results.setdefault("errors", {})[name] = result.stderr[-500:]
        for name, taken in times.items():
            results[name] = {"median_ms": round(statistics.median(taken), 1), "min_ms": round(min(taken), 1),
                             "max_ms": round(max(taken), 1), "rounds": len(taken)}
        results["fanwhy snapshot --json"]["load_sm_percent_each_round"] = seen
        results["text_answer"] = wall(commands["fanwhy snapshot"], env)[1].stdout
    finally:
        load.kill()
        load.wait()
    text = json.dumps(results, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
