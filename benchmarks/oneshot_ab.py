"""A/B of one-shot answers: versions of ``app/`` side by side on one host, interleaved round by round, with one CUDA
load running and the gpustat CLI beside them. Hosts differ by tens of milliseconds, so versions are compared only
within one run.

    git archive <commit> app | tar -x -C /tmp/before      # one folder per version, each holding app/
    python -m benchmarks.oneshot_ab --variant before=/tmp/before --variant now=. --rounds 25 --out ab.json

Each round runs every version's ``python -m app snapshot --json`` (from its folder, sources compiled first) and
checks that it names the load with its SM %.
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


def summary(times: list[float]) -> dict[str, Any]:
    ordered = sorted(times)
    return {"median_ms": round(statistics.median(ordered), 1), "p90_ms": round(ordered[int(0.9 * len(ordered))], 1),
            "max_ms": round(ordered[-1], 1), "over_300_ms": sum(1 for t in ordered if t > 300), "rounds": len(ordered)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", action="append", required=True, help="NAME=FOLDER (a folder holding app/)")
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    variants = {name: str(Path(folder).resolve()) for name, folder in (v.split("=", 1) for v in args.variant)}
    env = {**os.environ, "FANWHY_DB": "none"}
    for folder in variants.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", "app"], cwd=folder, env=env, check=False)
    (load,) = start_loads(1, 600, 1)
    times: dict[str, list[float]] = {name: [] for name in [*variants, "gpustat"]}
    try:
        for _ in range(args.rounds):
            for name, folder in variants.items():
                started = time.perf_counter()
                result = subprocess.run([sys.executable, "-m", "app", "snapshot", "--json"], cwd=folder,
                                        env={**env, "PYTHONPATH": os.pathsep.join([folder, env.get("PYTHONPATH", "")])},
                                        capture_output=True, text=True, timeout=60)
                times[name].append((time.perf_counter() - started) * 1000)
                named = [p for p in json.loads(result.stdout or "{}").get("processes", []) if p["pid"] == load.pid]
                assert result.returncode == 0 and named and named[0]["sm_percent"], (name, result.stderr[-300:])
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "gpustat"], capture_output=True, timeout=60)
            times["gpustat"].append((time.perf_counter() - started) * 1000)
    finally:
        load.kill()
        load.wait()
    results = {"date": time.strftime("%Y-%m-%d"), **{name: summary(taken) for name, taken in times.items()}}
    text = json.dumps(results, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
