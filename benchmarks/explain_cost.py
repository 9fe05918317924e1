"""What the largest paste ``fanwhy explain`` takes costs: a capture at its 4 MiB limit, read in a fresh process, timed
from start to exit, with the process's peak memory. Three shapes: ``chips``, ``sensors`` text of tens of thousands of
chips (as a hostile or mistaken paste may be); ``writes``, one refused pwm write and the shell's error for it,
repeated (a fan daemon's log of the write it fails at every pass); ``watch``, one machine's ``sensors`` listing run
again and again (a ``watch`` of it logged for hours). Targets: ``benchmarks/targets.py`` (EXPLAIN_S,
EXPLAIN_MB; exit 1 when missed). Run anywhere:
``python -m benchmarks.explain_cost [--shape chips|writes|watch] [--rounds 3] [--out result.json]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import targets
from benchmarks.measure import save

ROOT = Path(__file__).resolve().parent.parent
LIMIT_BYTES = 4 << 20  # app.collect.captures.MAX_BYTES


def paste(path: Path) -> int:
    """A sensors listing of as many chips as fit under the limit; how many."""
    parts, size, n = [], 0, 0
    while True:
        chip = f"nct{n}-isa-0290\nAdapter: ISA adapter\nfan1: {900 + n % 700} RPM\ntemp1: +{30 + n % 40}.0°C\n\n"
        if size + len(chip.encode()) >= LIMIT_BYTES:
            break
        parts.append(chip)
        size += len(chip.encode())
        n += 1
    path.write_text("".join(parts))
    return n


WRITE = "echo 1 > /sys/class/hwmon/hwmon3/pwm1\nbash: echo: write error: Invalid argument\n"


def writes(path: Path) -> int:
    """A refused write and its error, as many times as fit under the limit; how many."""
    n = (LIMIT_BYTES - 1) // len(WRITE.encode())
    path.write_text(WRITE * n)
    return n


LISTING = ("nct6798-isa-0290\nAdapter: ISA adapter\nfan1: 1210 RPM\nfan2: 860 RPM\nCPUTIN: +40.0°C\n"
           "SYSTIN: +31.0°C\n\nk10temp-pci-00c3\nAdapter: PCI adapter\nTctl: +55.0°C\n\n"
           "amdgpu-pci-0b00\nAdapter: PCI adapter\nfan1: 0 RPM\nedge: +50.0°C\njunction: +52.0°C\n\n")


def watch(path: Path) -> int:
    """One listing, as many times as fit under the limit; how many."""
    n = (LIMIT_BYTES - 1) // len(LISTING.encode())
    path.write_text(LISTING * n)
    return n


def once(path: Path) -> tuple[float, float]:
    """(seconds, peak MB) of one ``fanwhy explain`` of ``path`` in a process of its own."""
    script = ("import resource, subprocess, sys, time\n"
              "t = time.perf_counter()\n"
              "done = subprocess.run([sys.executable, '-m', 'app', 'explain', sys.argv[1]], capture_output=True)\n"
              "s = time.perf_counter() - t\n"
              "print(done.returncode, s, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", script, str(path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=600, check=True).stdout.split()
    if out[0] != "0":
        raise SystemExit(f"explain exited {out[0]}")
    return float(out[1]), int(out[2]) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=("chips", "writes", "watch"), default="chips")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "paste.txt"
        count = {"chips": paste, "writes": writes, "watch": watch}[args.shape](path)
        size = path.stat().st_size
        runs = [once(path) for _ in range(args.rounds)]
    seconds = statistics.median(s for s, _ in runs)
    peak = max(mb for _, mb in runs)
    counted = {"chips": "chips", "writes": "writes", "watch": "listings"}[args.shape]
    result = {"shape": args.shape, "bytes": size, counted: count, "runs": runs,
              "median_s": round(seconds, 2), "peak_mb": round(peak, 1), "when": time.strftime("%Y-%m-%d"),
              "python": sys.version.split()[0]}
    missed = targets.judged(result, [(targets.EXPLAIN_S, seconds), (targets.EXPLAIN_MB, peak)])
    print(json.dumps(result, indent=2))
    save(json.dumps(result, indent=2), args.out)
    return missed


if __name__ == "__main__":
    sys.exit(main())
