"""Time each NVML call FanWhy makes per tick, on a real GPU under a load (device only).

    python3 benchmarks/nvml_calls.py

It shows which calls are costly (per-process utilization above all, energy next; every other per-tick call costs
microseconds), which is why FanWhy reads those in turns or on a slow clock.
"""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

import pynvml as nvml


def timed(name: str, fn: Callable[[], Any], rounds: int = 30) -> None:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        with contextlib.suppress(nvml.NVMLError):
            fn()
        samples.append((time.perf_counter() - started) * 1e6)
    print(f"{name:32s} median {statistics.median(samples):8.1f} us  max {max(samples):8.1f} us")


def main() -> None:
    nvml.nvmlInit()
    h = nvml.nvmlDeviceGetHandleByIndex(0)
    load = subprocess.Popen([sys.executable, "tests/gpu/cuda_load.py", "--seconds", "60", "--hold-gb", "1"],
                            stdout=subprocess.PIPE, text=True)
    assert load.stdout is not None
    load.stdout.readline()
    time.sleep(2)
    try:
        timed("utilization", lambda: nvml.nvmlDeviceGetUtilizationRates(h))
        timed("memory v2", lambda: nvml.nvmlDeviceGetMemoryInfo(h, nvml.nvmlMemory_v2))
        timed("temperature", lambda: nvml.nvmlDeviceGetTemperature(h, 0))
        timed("power", lambda: nvml.nvmlDeviceGetPowerUsage(h))
        timed("enforced power limit", lambda: nvml.nvmlDeviceGetEnforcedPowerLimit(h))
        timed("SM clock", lambda: nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM))
        timed("memory clock", lambda: nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_MEM))
        timed("P-state", lambda: nvml.nvmlDeviceGetPerformanceState(h))
        timed("clocks-event reasons", lambda: nvml.nvmlDeviceGetCurrentClocksEventReasons(h))
        timed("compute processes", lambda: nvml.nvmlDeviceGetComputeRunningProcesses(h))
        timed("graphics processes", lambda: nvml.nvmlDeviceGetGraphicsRunningProcesses(h))
        timed("process utilization, since 0", lambda: nvml.nvmlDeviceGetProcessUtilization(h, 0))
        timed("process utilization, since -2 s",
              lambda: nvml.nvmlDeviceGetProcessUtilization(h, int((time.time() - 2) * 1e6)))
        timed("total energy", lambda: nvml.nvmlDeviceGetTotalEnergyConsumption(h), rounds=5)
        timed("volatile uncorrected ECC", lambda: nvml.nvmlDeviceGetTotalEccErrors(
            h, nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_VOLATILE_ECC), rounds=5)
        timed("MIG mode", lambda: nvml.nvmlDeviceGetMigMode(h), rounds=5)
        timed("persistence mode", lambda: nvml.nvmlDeviceGetPersistenceMode(h), rounds=5)
        timed("display active", lambda: nvml.nvmlDeviceGetDisplayActive(h), rounds=5)
        cpu_before = time.process_time()
        for _ in range(20):
            nvml.nvmlDeviceGetProcessUtilization(h, 0)
        print(f"process utilization: {(time.process_time() - cpu_before) / 20 * 1e6:.1f} us of CPU a call")
        cpu_before = time.process_time()
        for _ in range(5):
            nvml.nvmlDeviceGetTotalEnergyConsumption(h)
        print(f"total energy: {(time.process_time() - cpu_before) / 5 * 1e6:.1f} us of CPU a call")
    finally:
        load.kill()
        load.wait()


if __name__ == "__main__":
    main()
