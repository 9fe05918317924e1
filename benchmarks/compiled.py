"""What compiling the compared tools' sources changes in a one-shot comparison: the minimal NVML + psutil probe and
``fanwhy snapshot``, rounds interleaved, first with the installed tools' sources uncompiled (every start compiles
them again, as where wheels were unpacked without compiling and PYTHONDONTWRITEBYTECODE is set: the GPU machines),
then compiled (as pip leaves what it installs). FanWhy's own app/ is compiled in both. Run on a GPU machine whose
tools were unpacked into a folder of their own (``SITE``): ``python -m benchmarks.compiled SITE --out result.json``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from typing import Any

from benchmarks.oneshot import PROBE, arguments, emit, timed_env, wall
from benchmarks.peers import start_loads


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("site", help="the folder the compared tools were unpacked into (e.g. /tmp/site)")
    args = arguments(12, parser)
    import pynvml

    pynvml.nvmlInit()
    gpus = pynvml.nvmlDeviceGetCount()
    loads = start_loads(min(4, gpus), 300, gpus)
    env = timed_env()  # app/ compiled; the tools are made uncompiled, then compiled, below
    results: dict[str, Any] = {"gpus": gpus, "loads": len(loads), "rounds": args.rounds}
    try:
        for condition in ("from source", "compiled"):
            if condition == "compiled":
                subprocess.run([sys.executable, "-m", "compileall", "-q", args.site], env=env, check=False,
                               capture_output=True)
            else:
                for folder, names, _ in os.walk(args.site):
                    for name in names:
                        if name == "__pycache__":
                            shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
            times: dict[str, list[float]] = {"probe": [], "fanwhy snapshot": []}
            for _ in range(args.rounds):
                times["probe"].append(wall([sys.executable, "-c", PROBE], env)[0])
                times["fanwhy snapshot"].append(wall([sys.executable, "-m", "app", "snapshot"], env)[0])
            medians = {name: round(statistics.median(each), 1) for name, each in times.items()}
            results[condition] = {**medians, "ratio": round(medians["fanwhy snapshot"] / medians["probe"], 2)}
    finally:
        for load in loads:
            load.kill()
            load.wait()
    return emit(results, args.out)


if __name__ == "__main__":
    sys.exit(main())
