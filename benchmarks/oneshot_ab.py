"""A/B of one-shot answers: versions of ``app/`` side by side on one host, interleaved round by round, with one CUDA
load running and the gpustat CLI beside them. Hosts differ by tens of milliseconds, so versions are compared only
within one run, and each takes each place in a round in turn.

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
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.oneshot import arguments, emit, not_installed, timed_env, wall
from benchmarks.peers import start_loads


def summary(times: list[float]) -> dict[str, Any]:
    ordered = sorted(times)
    return {"median_ms": round(statistics.median(ordered), 1), "p90_ms": round(ordered[int(0.9 * len(ordered))], 1),
            "max_ms": round(ordered[-1], 1), "over_300_ms": sum(1 for t in ordered if t > 300), "rounds": len(ordered)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", action="append", required=True, help="NAME=FOLDER (a folder holding app/)")
    args = arguments(25, parser)
    variants = {name: str(Path(folder).resolve()) for name, folder in (v.split("=", 1) for v in args.variant)}
    env = {name: timed_env(folder) for name, folder in variants.items()}
    (load,) = start_loads(1, 600, 1)
    missing = not_installed(("gpustat",))  # gpustat beside them where it is installed
    peers = [name for name in ("gpustat",) if name not in missing]
    times: dict[str, list[float]] = {name: [] for name in [*variants, *peers]}
    by_place: dict[int, list[float]] = {}  # every version's times by its place in the round
    try:
        order = list(variants.items())
        for round_ in range(args.rounds):
            turn = round_ % len(order)  # each version takes each place in the round in turn
            for place, (name, folder) in enumerate(order[turn:] + order[:turn]):
                path = os.pathsep.join([folder, env[name].get("PYTHONPATH", "")])
                ms, result = wall([sys.executable, "-m", "app", "snapshot", "--json"],
                                  {**env[name], "PYTHONPATH": path}, cwd=folder)
                times[name].append(ms)
                by_place.setdefault(place, []).append(ms)
                named = [p for p in json.loads(result.stdout or "{}").get("processes", []) if p["pid"] == load.pid]
                assert result.returncode == 0 and named and named[0]["sm_percent"], (name, result.stderr[-300:])
            for peer in peers:
                ms, result = wall([sys.executable, "-m", peer], os.environ.copy())
                assert result.returncode == 0, (peer, result.stderr[-300:])
                times[peer].append(ms)
    finally:
        load.kill()
        load.wait()
    skipped = {"skipped": missing} if missing else {}
    return emit({"date": time.strftime("%Y-%m-%d"), **skipped,
                 **{name: summary(taken) for name, taken in times.items()},
                 "by_place_in_round": {place + 1: summary(taken) for place, taken in sorted(by_place.items())}},
                args.out)


if __name__ == "__main__":
    sys.exit(main())
