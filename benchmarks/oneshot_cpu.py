"""The CPU a one-shot answer spends from its first import to its answer, on a machine without a GPU: versions of
``app/`` side by side, interleaved round by round, each on the fake NVML of the tests (two H200s as a real pair
answered, a load on one). Wall time there is set by the answer's CPU window, not by its work; its CPU time
(every thread's, from ``time.process_time``) is what the imports, the opening and the tick cost.

    git archive <commit> app | tar -x -C /tmp/before
    python -m benchmarks.oneshot_cpu --variant before=/tmp/before --variant now=. --rounds 25

With ``--importtime``, also each version's own imports (``python -X importtime``, the median of the rounds, app/'s
modules and the others apart). A figure for a GPU host comes from ``benchmarks/oneshot_ab.py`` there.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.oneshot import emit

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import contextlib, io, os, sys, time
folder = sys.argv[1]
sys.path[:0] = [folder, sys.argv[2]]  # the version's app/, then this checkout's tests.fakes
import pynvml
from tests.fakes.fake_nvml import FakeNvml, load_dump
fake = FakeNvml(load_dump("h200x2-load"))
for name in dir(FakeNvml):
    if name.startswith("nvml"):
        setattr(pynvml, name, getattr(fake, name))
os.environ.update(FANWHY_DB="none", FANWHY_BACKEND="nvidia")
started = time.process_time()
try:  # a version that reads its CPU baseline before its commands are imported, as its entry point does
    from app.cli import early
    early.begin(["snapshot"])
    import app.cli.main as fanwhy
except ImportError:  # an older one: the commands were app.__main__'s
    import app.__main__ as fanwhy
assert fanwhy.__file__.startswith(folder), fanwhy.__file__
with contextlib.redirect_stdout(io.StringIO()) as out:
    fanwhy.main(["snapshot"])
spent = (time.process_time() - started) * 1000
assert "PID" in out.getvalue(), out.getvalue()
print(f"{spent:.3f}")
os._exit(0)
"""
IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)")


def one(folder: str, importtime: bool) -> tuple[float, dict[str, float]]:
    """One answer's CPU milliseconds, and with ``importtime`` each module's own import time after the fakes'."""
    argv = [sys.executable, *(["-X", "importtime"] if importtime else []), "-c", CHILD, folder, str(ROOT)]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)
    own: dict[str, float] = {}
    after_fakes = False
    for line in result.stderr.splitlines():
        match = IMPORT_LINE.match(line)
        if match and after_fakes:
            own[match.group(2)] = int(match.group(1)) / 1000
        after_fakes = after_fakes or bool(match and match.group(2) == "tests.fakes.fake_nvml")
    return float(result.stdout.split()[-1]), own


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", action="append", required=True, help="NAME=FOLDER (a folder holding app/)")
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--importtime", action="store_true", help="also the imports' own times (-X importtime)")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    variants = {name: str(Path(folder).resolve()) for name, folder in (v.split("=", 1) for v in args.variant)}
    for folder in variants.values():  # compiled, as an install has it
        subprocess.run([sys.executable, "-m", "compileall", "-q", f"{folder}/app"], check=False)
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    imports: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
    for _ in range(args.rounds):
        for name, folder in variants.items():
            spent, own = one(folder, args.importtime)
            cpu[name].append(spent)
            imports[name].append(own)
    results: dict[str, Any] = {"rounds": args.rounds, "python": sys.version.split()[0]}
    for name, taken in cpu.items():
        taken.sort()
        results[name] = {"cpu_median_ms": round(statistics.median(taken), 1),
                         "cpu_p10_ms": round(taken[len(taken) // 10], 1),
                         "cpu_p90_ms": round(taken[len(taken) * 9 // 10], 1)}
        if args.importtime:
            modules = set().union(*imports[name])
            median = {m: statistics.median(run.get(m, 0.0) for run in imports[name]) for m in modules}
            results[name]["imports_app_ms"] = round(sum(v for m, v in median.items() if m.startswith("app")), 1)
            results[name]["imports_other_ms"] = round(sum(v for m, v in median.items() if not m.startswith("app")), 1)
            results[name]["app_modules"] = sum(1 for m in median if m.startswith("app"))
    return emit(results, args.out)


if __name__ == "__main__":
    sys.exit(main())
