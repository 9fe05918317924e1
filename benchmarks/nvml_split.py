"""Do one GPU's first NVML calls answer side by side when split across threads?

Different GPUs do (``benchmarks/nvml_open.py`` measures it). This asks the same of one GPU: a fresh process makes the
calls FanWhy's opening and first sample make (the static facts, then each field of the first sample, the process list)
on the first GPU, either one after another or dealt round-robin to 2, 3 or 6 threads, and times them from the first to
the last; the ways take turns, each in a fresh process, so each call is a first call. With a CUDA load on the GPU. Run
on a GPU machine: ``python -m benchmarks.nvml_split --rounds 15 --out split.json``.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from typing import Any

from benchmarks.oneshot import arguments, emit
from benchmarks.peers import start_loads

CHILD = r"""
import json, sys, threading, time
import pynvml as n
n.nvmlInit()
h = n.nvmlDeviceGetHandleByIndex(0)
CALLS = [
    ("name", lambda: n.nvmlDeviceGetName(h)), ("uuid", lambda: n.nvmlDeviceGetUUID(h)),
    ("pci", lambda: n.nvmlDeviceGetPciInfo(h)),
    ("slowdown", lambda: n.nvmlDeviceGetTemperatureThreshold(h, n.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)),
    ("shutdown", lambda: n.nvmlDeviceGetTemperatureThreshold(h, n.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN)),
    ("max clock", lambda: n.nvmlDeviceGetMaxClockInfo(h, n.NVML_CLOCK_SM)),
    ("fans", lambda: n.nvmlDeviceGetNumFans(h)), ("utilization", lambda: n.nvmlDeviceGetUtilizationRates(h)),
    ("memory", lambda: n.nvmlDeviceGetMemoryInfo(h, n.nvmlMemory_v2)),
    ("temperature", lambda: n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU)),
    ("power", lambda: n.nvmlDeviceGetPowerUsage(h)), ("limit", lambda: n.nvmlDeviceGetEnforcedPowerLimit(h)),
    ("SM clock", lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM)),
    ("memory clock", lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM)),
    ("pstate", lambda: n.nvmlDeviceGetPerformanceState(h)),
    ("clock reasons", lambda: n.nvmlDeviceGetCurrentClocksEventReasons(h)),
    ("energy", lambda: n.nvmlDeviceGetTotalEnergyConsumption(h)),
    ("ECC", lambda: n.nvmlDeviceGetTotalEccErrors(h, n.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, n.NVML_VOLATILE_ECC)),
    ("MIG", lambda: n.nvmlDeviceGetMigMode(h)), ("persistence", lambda: n.nvmlDeviceGetPersistenceMode(h)),
    ("display", lambda: n.nvmlDeviceGetDisplayActive(h)),
    ("processes", lambda: n.nvmlDeviceGetComputeRunningProcesses(h)),
]
each = {}
def run(calls):
    for name, call in calls:
        started = time.perf_counter()
        try:
            call()
        except n.NVMLError:
            pass
        each[name] = (time.perf_counter() - started) * 1000
threads = int(sys.argv[1])
started = time.perf_counter()
others = [threading.Thread(target=run, args=(CALLS[i::threads],)) for i in range(1, threads)]
for thread in others:
    thread.start()
run(CALLS[0::threads])
for thread in others:
    thread.join()
print(json.dumps({"total_ms": (time.perf_counter() - started) * 1000, "each_ms": each}))
"""

WAYS = {"one after another": 1, "2 threads": 2, "3 threads": 3, "6 threads": 6}


def main() -> int:
    args = arguments(15)
    loads = start_loads(1, 600, 1)
    totals: dict[str, list[float]] = {way: [] for way in WAYS}
    each: dict[str, list[float]] = {}
    results: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "loads": len(loads)}
    try:
        for _ in range(args.rounds):
            for way, threads in WAYS.items():
                done = subprocess.run([sys.executable, "-c", CHILD, str(threads)], capture_output=True, text=True,
                                      check=True)
                answer = json.loads(done.stdout)
                totals[way].append(answer["total_ms"])
                if threads == 1:
                    for name, ms in answer["each_ms"].items():
                        each.setdefault(name, []).append(ms)
    finally:
        for load in loads:
            load.kill()
            load.wait()
    for way, taken in totals.items():
        results[way] = {"median_ms": round(statistics.median(taken), 2), "min_ms": round(min(taken), 2),
                        "max_ms": round(max(taken), 2), "rounds": len(taken)}
    results["each call, one after another (median ms)"] = {name: round(statistics.median(v), 2)
                                                          for name, v in each.items()}
    emit(results, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
