"""How long NVML's opening takes in a fresh process, step by step: ``import pynvml``, ``nvmlInit``, a second
``nvmlInit`` (what the backend pays when a terminal command opened NVML early), and each GPU's static facts (the
calls ``NvidiaBackend`` makes per GPU when it opens), read one GPU after another and then on a thread per GPU.
Run on a GPU machine: ``python -m benchmarks.nvml_open --rounds 5 --out result.json``."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

from benchmarks.oneshot import arguments, emit

CHILD = r"""
import json, sys, threading, time
t0 = time.perf_counter()
ms = lambda: round((time.perf_counter() - t0) * 1000, 2)
import pynvml as n
out = {"import": ms()}
n.nvmlInit(); out["init"] = ms()
n.nvmlInit(); out["second init"] = ms()
n.nvmlShutdown()
count = n.nvmlDeviceGetCount()
def statics(i):
    h = n.nvmlDeviceGetHandleByIndex(i)
    n.nvmlDeviceGetName(h); n.nvmlDeviceGetUUID(h); n.nvmlDeviceGetPciInfo(h)
    n.nvmlDeviceGetTemperatureThreshold(h, n.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)
    n.nvmlDeviceGetTemperatureThreshold(h, n.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN)
    n.nvmlDeviceGetMaxClockInfo(h, n.NVML_CLOCK_SM)
    try:
        n.nvmlDeviceGetNumFans(h)
    except n.NVMLError:
        pass
start = ms()
if sys.argv[1] == "threads":
    threads = [threading.Thread(target=statics, args=(i,)) for i in range(count)]
    [t.start() for t in threads]; [t.join() for t in threads]
else:
    for i in range(count):
        statics(i)
out["statics"] = round(ms() - start, 2); out["gpus"] = count
print(json.dumps(out))
"""


def main() -> int:
    args = arguments(5)
    runs: dict[str, list[dict[str, float]]] = {"serial": [], "threads": []}
    for _ in range(args.rounds):
        for mode, rows in runs.items():
            done = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, check=True)
            rows.append(json.loads(done.stdout))
    medians = {mode: {key: statistics.median(row[key] for row in rows) for key in rows[0]}
               for mode, rows in runs.items()}
    return emit({"medians_ms": medians, "runs": runs}, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
