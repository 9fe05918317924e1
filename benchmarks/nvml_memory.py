"""Which NVML call costs memory: RSS after each call FanWhy makes, and whether libcuda got mapped (device only).

    python3 benchmarks/nvml_memory.py
"""

from __future__ import annotations

import time

import psutil
import pynvml as nvml


def state() -> str:
    with open("/proc/self/maps") as handle:
        cuda = any("libcuda.so" in line for line in handle)
    return f"RSS {psutil.Process().memory_info().rss / 2**20:6.1f} MiB{'  libcuda mapped' if cuda else ''}"


def main() -> None:
    print(f"{'start':40s} {state()}")
    nvml.nvmlInit()
    print(f"{'nvmlInit':40s} {state()}")
    h = nvml.nvmlDeviceGetHandleByIndex(0)
    steps = [
        ("handle, name, uuid, pci", lambda: (nvml.nvmlDeviceGetName(h), nvml.nvmlDeviceGetUUID(h),
                                             nvml.nvmlDeviceGetPciInfo(h))),
        ("utilization", lambda: nvml.nvmlDeviceGetUtilizationRates(h)),
        ("memory v2", lambda: nvml.nvmlDeviceGetMemoryInfo(h, nvml.nvmlMemory_v2)),
        ("temperature, power, clocks, pstate", lambda: (
            nvml.nvmlDeviceGetTemperature(h, 0), nvml.nvmlDeviceGetPowerUsage(h),
            nvml.nvmlDeviceGetEnforcedPowerLimit(h), nvml.nvmlDeviceGetClockInfo(h, 0),
            nvml.nvmlDeviceGetPerformanceState(h), nvml.nvmlDeviceGetCurrentClocksEventReasons(h))),
        ("compute + graphics processes", lambda: (nvml.nvmlDeviceGetComputeRunningProcesses(h),
                                                  nvml.nvmlDeviceGetGraphicsRunningProcesses(h))),
        ("process utilization", lambda: nvml.nvmlDeviceGetProcessUtilization(h, 0)),
        ("energy, ECC, MIG, persistence, display", lambda: (
            nvml.nvmlDeviceGetTotalEnergyConsumption(h), nvml.nvmlDeviceGetMigMode(h),
            nvml.nvmlDeviceGetPersistenceMode(h), nvml.nvmlDeviceGetDisplayActive(h),
            nvml.nvmlDeviceGetTotalEccErrors(h, nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_VOLATILE_ECC))),
        ("event set for XID", lambda: nvml.nvmlDeviceRegisterEvents(h, nvml.nvmlEventTypeXidCriticalError,
                                                                    nvml.nvmlEventSetCreate())),
    ]
    for name, step in steps:
        try:
            step()
        except nvml.NVMLError as error:
            name = f"{name} ({type(error).__name__})"
        print(f"{name:40s} {state()}")
    time.sleep(1)
    print(f"{'a second later':40s} {state()}")


if __name__ == "__main__":
    main()
