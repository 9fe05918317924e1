"""NVIDIA GPUs through ``nvidia-smi --query-*`` CSV, for machines where NVML is not usable from Python.

Every run has a timeout and a cap on its output (``app.core.bounded``), so a hung or flooding nvidia-smi never
freezes the collector or leaves a zombie. ``[N/A]`` and ``[Not Supported]`` become None.
"""

from __future__ import annotations

import csv
import os
import shutil

from ..core.bounded import CommandError, run_bounded
from ..core.fan import Fan
from ..core.model import GpuProcessUsage, GpuSample, frozen_map
from ..core.vocabulary import SMI_NOT_THERE, SMI_READ_ERRORS, decode_clocks_event_reasons

GPU_FIELDS = (
    "index", "uuid", "name", "utilization.gpu", "utilization.memory", "memory.total", "memory.used",
    "memory.free", "temperature.gpu", "fan.speed", "power.draw", "power.limit", "clocks.sm", "clocks.mem",
    "pstate", "clocks_event_reasons.active",
)
APP_FIELDS = ("gpu_uuid", "pid", "process_name", "used_memory")
_MISSING = SMI_NOT_THERE | SMI_READ_ERRORS  # no number; a fan's read error is kept apart (its speed is unknown)
MIB = 1024 * 1024



def smi_fans(index: int, percent: float | None, error: str | None = None) -> tuple[Fan, ...]:
    """The card's fan as nvidia-smi reports it: one duty ("fan.speed"), which the driver's curve sets from the GPU's
    temperature; a fan with its read error where it answers one ("ERR!"); none where it says [N/A] (a passively
    cooled card). Live and in a capture alike."""
    if percent is None and error is not None:
        return (Fan(id=f"nvidia-smi:{index}/fan0", chip=f"GPU {index}", channel=0, label=None, gpu_index=index,
                    read_error=error, cools="the GPU"),)
    if percent is None:
        return ()
    stopped = {"stopped": "0 % with no target: fan-stop, or a card that reports 0 %"} if percent == 0 else {}
    return (Fan(id=f"nvidia-smi:{index}/fan0", chip=f"GPU {index}", channel=0, label=None, percent=percent,
                gpu_index=index, source="GPU", source_from="design", cools="the GPU", unsupported=stopped),)


class NvidiaSmiError(Exception):
    """nvidia-smi is missing, failed, or timed out."""


def _value(cell: str) -> str | None:
    cell = cell.strip()
    return None if cell in _MISSING else cell


class NvidiaSmi:
    """Reads GPUs and compute processes from nvidia-smi's CSV query output."""

    def __init__(self, binary: str = "nvidia-smi", timeout_s: float = 5.0):
        self.binary = binary
        self.timeout_s = timeout_s
        self._reasons_field = "clocks_event_reasons.active"

    def available(self) -> str | None:
        """None when nvidia-smi can be run, else why not."""
        if os.sep in self.binary:
            return None if os.access(self.binary, os.X_OK) else f"{self.binary} is not executable"
        return None if shutil.which(self.binary) else "nvidia-smi not found on PATH"

    def _query(self, kind: str, fields: tuple[str, ...]) -> list[list[str]]:
        argv = [self.binary, f"--query-{kind}={','.join(fields)}", "--format=csv,noheader,nounits"]
        try:
            result = run_bounded(argv, self.timeout_s)
        except CommandError as error:
            raise NvidiaSmiError(str(error)) from None
        if result.returncode != 0:
            first = (result.stdout.strip().splitlines() or ["no output"])[0]
            raise NvidiaSmiError(f"nvidia-smi exited with {result.returncode}: {first[:200]}")
        rows = []
        for row in csv.reader(result.stdout.splitlines(), skipinitialspace=True):
            if row:
                rows.append([c.strip() for c in row])
        return rows

    def gpus(self) -> list[GpuSample]:
        fields = (*GPU_FIELDS[:-1], self._reasons_field)
        try:
            rows = self._query("gpu", fields)
        except NvidiaSmiError as error:
            if "clocks_event_reasons" not in str(error):
                raise
            self._reasons_field = "clocks_throttle_reasons.active"  # drivers before 535
            rows = self._query("gpu", (*GPU_FIELDS[:-1], self._reasons_field))
        return [self._gpu(row) for row in rows if len(row) == len(GPU_FIELDS)]

    def _gpu(self, row: list[str]) -> GpuSample:
        fan_cell = row[GPU_FIELDS.index("fan.speed")]
        fan_error = fan_cell if fan_cell in SMI_READ_ERRORS else None
        v = dict(zip(GPU_FIELDS, (_value(c) for c in row), strict=True))
        unsupported = {"activity": "not read through nvidia-smi: the activity counters need NVML (nvidia-ml-py)"}
        names = {
            "utilization.gpu": "utilization_percent", "utilization.memory": "memory_utilization_percent",
            "memory.used": "memory_used_bytes", "memory.total": "memory_total_bytes",
            "temperature.gpu": "temperature_c", "fan.speed": "fan_speed_percent", "power.draw": "power_w",
            "power.limit": "power_limit_w", "clocks.sm": "clock_sm_mhz", "clocks.mem": "clock_memory_mhz",
            "pstate": "pstate", "clocks_event_reasons.active": "throttle_reasons",
        }
        for column, metric in names.items():
            if v.get(column) is None:
                unsupported[metric] = "not reported by nvidia-smi ([N/A])"
        if fan_error is not None:
            unsupported["fan_speed_percent"] = f"nvidia-smi could not read the fan ({fan_error})"
        elif v.get("fan.speed") is None:
            unsupported["fan_speed_percent"] = (
                "not supported: no fan reported by nvidia-smi (a passively cooled GPU has none)")
        reasons = v.get("clocks_event_reasons.active")
        index = _int(v["index"])
        return GpuSample(
            vendor="nvidia",
            passively_cooled=v.get("fan.speed") is None and fan_error is None,
            index=index if index is not None else 0,
            uuid=v["uuid"],
            name=v["name"],
            utilization_percent=_float(v["utilization.gpu"]),
            memory_utilization_percent=_float(v["utilization.memory"]),
            memory_used_bytes=_mib(v["memory.used"]),
            memory_total_bytes=_mib(v["memory.total"]),
            memory_free_bytes=_mib(v["memory.free"]),
            temperature_c=_float(v["temperature.gpu"]),
            fans=smi_fans(index if index is not None else 0, _float(v["fan.speed"]), fan_error),
            power_w=_float(v["power.draw"]),
            power_limit_w=_float(v["power.limit"]),
            clock_sm_mhz=_int(v["clocks.sm"]),
            clock_memory_mhz=_int(v["clocks.mem"]),
            pstate=v["pstate"],
            throttle_reasons=decode_clocks_event_reasons(int(reasons, 16)) if reasons else None,
            source="nvidia-smi",
            unsupported=frozen_map(unsupported),
        )

    def processes(self, uuid_to_index: dict[str, int]) -> list[GpuProcessUsage]:
        usages = []
        for cells in self._query("compute-apps", APP_FIELDS):
            row = [_value(c) for c in cells]
            if len(row) != len(APP_FIELDS) or row[1] is None:
                continue
            uuid, pid, name, used = row
            pid_value = _int(pid)
            if pid_value is None or uuid not in uuid_to_index:
                continue
            usages.append(GpuProcessUsage(pid=pid_value, gpu_index=uuid_to_index[uuid],
                                          memory_bytes=_mib(used), name_hint=name))
        return usages


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _int(value: str | None) -> int | None:
    number = _float(value)
    return int(number) if number is not None else None


def _mib(value: str | None) -> int | None:
    number = _float(value)
    return int(number * MIB) if number is not None else None
