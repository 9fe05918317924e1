"""A table-driven fake of the pynvml surface FanWhy uses, shaped from real dumps.

Each GPU is a table ``{getter: value}`` keyed like the dumps in ``tests/fixtures/nvml/`` (made
on an H100 and two H200s by a probe script, kept in ``tests/fixtures/nvml/``). A cell may be an exception
instance (raised, as NVML would) or a callable (called with the call's arguments). Exceptions and
constants are the real ones from nvidia-ml-py, so ``except pynvml.NVMLError_NotSupported`` means
the same here as on a GPU.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import pynvml

from tests.fakes.fake_gpm import GpmFake

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "nvml"

# A captured machine's PIDs are not this machine's. Read as they were, they name whatever process holds PID 657 here
# (on a fresh CI container, a Chromium of the page tests did), so a dump's PIDs are moved above PID_MAX_LIMIT (2**22
# on 64-bit Linux), where no process can be: /proc never has them, and a fake GPU's process stays unnamed.
ABSENT_PID_BASE = 5_000_000


def absent_pid(pid: int) -> int:
    """A PID no process of the machine running the tests can hold: ``pid`` moved above PID_MAX_LIMIT."""
    return ABSENT_PID_BASE + pid


H100_LOAD_PID = absent_pid(423)  # the matmul in h100-load.json
H200_LOAD_PID = absent_pid(657)  # the matmul on GPU 1 in h200x2-load.json


def _moved(value: Any) -> Any:
    if isinstance(value, list) and all(isinstance(row, dict) and "pid" in row for row in value):
        return [{**row, "pid": absent_pid(row["pid"])} for row in value]
    return value


def load_dump(name: str) -> list[dict[str, Any]]:
    """GPU tables from a real dump: each getter's value, or its NVML exception; the PIDs moved (``absent_pid``)."""
    dump = json.loads((FIXTURES / f"{name}.json").read_text())
    tables = []
    for gpu in dump["gpus"]:
        table: dict[str, Any] = {}
        for key, cell in gpu.items():
            if cell.get("error"):
                table[key] = getattr(pynvml, cell["error"])()
            else:
                table[key] = _moved(cell["value"])
        tables.append(table)
    return tables


def desktop_card(index: int = 0, fans: int = 2) -> dict[str, Any]:
    """A consumer card with fans, built on the H100 dump with the values such cards report."""
    table = load_dump("h100-load")[0]
    table.update({
        "name": "NVIDIA GeForce RTX 4090",
        "uuid": f"GPU-desk0000-0000-0000-0000-00000000000{index}",
        "num_fans": fans,
        "fan": 47,
        "memory_v2": {"total": 25757220864, "used": 6039797760, "free": 19717423104, "reserved": 0},
        "memory": {"total": 25757220864, "used": 6039797760, "free": 19717423104},
        "power": 312_000,
        "power_enforced": 450_000,
        "temp_slowdown": 87,
        "temp_shutdown": 92,
        "temperature": 71,
        "mig_mode": pynvml.NVMLError_NotSupported(),
        "ecc_uncorrected_volatile": pynvml.NVMLError_NotSupported(),
    })
    for fan in range(fans):
        table[f"fan_v2_{fan}"] = 45 + 4 * fan
    return table


def captured_card(key: str, fans: int = 1) -> dict[str, Any]:
    """A card from ``tests/fixtures/gpu-fans/cards.txt`` (what nvidia-smi said of a real card's fan), on the H100 dump
    for everything else. "N/A" is a card with no fan (NVML counts 0); a number is the intended speed of each fan, with
    the target equal to it, the driver's curve as the policy, the documented 30-100 % range and the GPU as the
    cooler's target. A GeForce at 0 % is a fan-stop card (its range still starts at 30 %)."""
    rows = [line.split("|") for line in (FIXTURES.parent / "gpu-fans" / "cards.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    name, speed, temp, power = next([c.strip() for c in row[1:]] for row in rows if row[0].strip() == key)
    table = load_dump("h100-load")[0]
    table.update({"name": name, "temperature": int(temp), "power": round(float(power) * 1000),
                  "mig_mode": pynvml.NVMLError_NotSupported()})
    if speed == "N/A":
        table["num_fans"] = 0
        return table
    table.update({"num_fans": fans, "fan_min_max": [30, 100], "cooler": [2, 2], "fan": int(speed.rstrip(" %"))})
    for fan in range(fans):
        table.update({f"fan_v2_{fan}": int(speed.rstrip(" %")), f"fan_target_{fan}": int(speed.rstrip(" %")),
                      f"fan_policy_{fan}": 0})
    return table


class FakeNvml(GpmFake):
    """Stands in for the ``pynvml`` module. Thread-safe enough for a collector and a test."""

    def __init__(self, gpus: list[dict[str, Any]], init_error: Exception | None = None,
                 driver: str = "580.159.04"):
        self.tables = [copy.deepcopy(g) for g in gpus]
        self.init_error = init_error
        self.driver = driver
        self.calls: Counter[str] = Counter()
        self.initialised = 0
        self._lock = threading.Lock()
        self._event_ready = threading.Condition()
        self._pending: list[tuple[int, int]] = []
        self.registered: set[int] = set()
        self.asleep: set[int] = set()  # handles no call may touch (a runtime-suspended GPU)

    # Constants and exception classes are the real ones.
    def __getattr__(self, name: str) -> Any:
        if name.startswith(("NVML", "nvmlMemory_v2", "NVMLError", "nvmlEventType", "nvmlClocksEventReason")):
            return getattr(pynvml, name)
        raise AttributeError(name)

    def set(self, index: int, key: str, value: Any) -> None:
        with self._lock:
            self.tables[index][key] = value

    def run_on(self, index: int, pid: int, memory_bytes: int = 2**30, sm_percent: int | None = 90) -> None:
        """Make ``pid`` (usually a real process of the test) GPU ``index``'s only process."""
        self.set(index, "compute_processes", [{"pid": pid, "usedGpuMemory": memory_bytes,
                                                "gpuInstanceId": 0, "computeInstanceId": 0}])
        samples = [] if sm_percent is None else [{"pid": pid, "timeStamp": 0, "smUtil": sm_percent, "memUtil": 1,
                                                  "encUtil": 0, "decUtil": 0}]
        self.set(index, "process_utilization", samples)

    def start_process(self, index: int, pid: int, memory_bytes: int = 2**30, kind: str = "compute") -> None:
        """A process starts on GPU ``index`` holding ``memory_bytes``: it joins the list and, as on a real GPU,
        the used memory grows by what it holds (``set`` changes a list alone, as NVML does for a process it hides)."""
        key = f"{kind}_processes"
        entry = {"pid": pid, "usedGpuMemory": memory_bytes, "gpuInstanceId": 0, "computeInstanceId": 0}
        with self._lock:
            self.tables[index][key] = [*self.tables[index].get(key, []), entry]
        self._move_memory(index, memory_bytes)

    def end_process(self, index: int, pid: int) -> None:
        """A process on GPU ``index`` ends: it leaves the lists (and its utilization samples), and the used memory
        drops by what it held."""
        freed = 0
        with self._lock:
            samples = self.tables[index].get("process_utilization")
            if isinstance(samples, list):
                self.tables[index]["process_utilization"] = [u for u in samples if u["pid"] != pid]
            for key in ("compute_processes", "graphics_processes"):
                listed = self.tables[index].get(key)
                if isinstance(listed, list):
                    freed += sum(p.get("usedGpuMemory") or 0 for p in listed if p["pid"] == pid)
                    self.tables[index][key] = [p for p in listed if p["pid"] != pid]
        self._move_memory(index, -freed)

    def _move_memory(self, index: int, moved: int) -> None:
        with self._lock:
            for key in ("memory", "memory_v2"):
                info = self.tables[index].get(key)
                if isinstance(info, dict):
                    self.tables[index][key] = dict(info, used=info["used"] + moved, free=info["free"] - moved)

    def _cell(self, handle: int, key: str, *args: Any) -> Any:
        if handle in self.asleep:  # a real GPU would wake: a test that sets this fails when it is touched
            raise AssertionError(f"{key} called on GPU {handle}, which is asleep")
        self.calls[key] += 1
        with self._lock:
            if self.initialised <= 0:
                raise pynvml.NVMLError_Uninitialized()
            if key not in self.tables[handle]:
                raise pynvml.NVMLError_NotSupported()
            cell = self.tables[handle][key]
        if isinstance(cell, BaseException):
            raise cell
        if callable(cell):
            return cell(*args)
        return copy.deepcopy(cell)

    # -- library -----------------------------------------------------------------------------
    def nvmlInit(self) -> None:
        self.calls["init"] += 1
        if self.init_error is not None:
            raise self.init_error
        self.initialised += 1

    def nvmlShutdown(self) -> None:
        self.calls["shutdown"] += 1
        if self.initialised <= 0:
            raise pynvml.NVMLError_Uninitialized()
        self.initialised -= 1

    def nvmlSystemGetDriverVersion(self) -> str:
        return self.driver

    def nvmlDeviceGetCount(self) -> int:
        if self.initialised <= 0:
            raise pynvml.NVMLError_Uninitialized()
        return len(self.tables)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        if not 0 <= index < len(self.tables):
            raise pynvml.NVMLError_InvalidArgument()
        handle_error = self.tables[index].get("handle")
        if isinstance(handle_error, BaseException):
            raise handle_error
        return index

    # -- device getters ------------------------------------------------------------------------
    def nvmlDeviceGetName(self, h: int) -> str:
        return self._cell(h, "name")

    def nvmlDeviceGetUUID(self, h: int) -> str:
        return self._cell(h, "uuid")

    def nvmlDeviceGetPciInfo(self, h: int) -> SimpleNamespace:
        return SimpleNamespace(**self._cell(h, "pci"))

    def nvmlDeviceGetUtilizationRates(self, h: int) -> SimpleNamespace:
        return SimpleNamespace(**self._cell(h, "utilization"))

    def nvmlDeviceGetMemoryInfo(self, h: int, version: int | None = None) -> SimpleNamespace:
        return SimpleNamespace(**self._cell(h, "memory_v2" if version else "memory"))

    def nvmlDeviceGetTemperature(self, h: int, sensor: int) -> int:
        return self._cell(h, "temperature")

    def nvmlDeviceGetTemperatureThreshold(self, h: int, kind: int) -> int:
        key = "temp_slowdown" if kind == pynvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN else "temp_shutdown"
        return self._cell(h, key)

    def nvmlDeviceGetNumFans(self, h: int) -> int:
        return self._cell(h, "num_fans")

    def nvmlDeviceGetFanSpeed(self, h: int) -> int:
        return self._cell(h, "fan")

    def nvmlDeviceGetFanSpeed_v2(self, h: int, fan: int) -> int:
        return self._cell(h, f"fan_v2_{fan}")

    def nvmlDeviceGetTargetFanSpeed(self, h: int, fan: int) -> int:
        return self._cell(h, f"fan_target_{fan}")

    def nvmlDeviceGetFanControlPolicy_v2(self, h: int, fan: int) -> int:
        return self._cell(h, f"fan_policy_{fan}")

    def nvmlDeviceGetFanSpeedRPM(self, h: int) -> int:
        return self._cell(h, "fan_rpm")

    def nvmlDeviceGetMinMaxFanSpeed(self, h: int) -> list[int]:
        return self._cell(h, "fan_min_max")

    def nvmlDeviceGetCoolerInfo(self, h: int) -> list[int]:
        return self._cell(h, "cooler")

    def nvmlDeviceGetPowerUsage(self, h: int) -> int:
        return self._cell(h, "power")

    def nvmlDeviceGetEnforcedPowerLimit(self, h: int) -> int:
        return self._cell(h, "power_enforced")

    def nvmlDeviceGetClockInfo(self, h: int, clock: int) -> int:
        return self._cell(h, "clk_sm" if clock == pynvml.NVML_CLOCK_SM else "clk_mem")

    def nvmlDeviceGetMaxClockInfo(self, h: int, clock: int) -> int:
        return self._cell(h, "max_clk_sm" if clock == pynvml.NVML_CLOCK_SM else "max_clk_mem")

    def nvmlDeviceGetPerformanceState(self, h: int) -> int:
        return self._cell(h, "pstate")

    def nvmlDeviceGetCurrentClocksEventReasons(self, h: int) -> int:
        return self._cell(h, "clocks_event_reasons")

    def nvmlDeviceGetTotalEnergyConsumption(self, h: int) -> int:
        return self._cell(h, "energy_mj")

    def nvmlDeviceGetTotalEccErrors(self, h: int, error_type: int, counter: int) -> int:
        return self._cell(h, "ecc_uncorrected_volatile")

    def nvmlDeviceGetMigMode(self, h: int) -> list[int]:
        return self._cell(h, "mig_mode")

    def nvmlDeviceGetPersistenceMode(self, h: int) -> int:
        return self._cell(h, "persistence")

    def nvmlDeviceGetDisplayActive(self, h: int) -> int:
        return self._cell(h, "display_active")

    def nvmlDeviceGetIndex(self, h: int) -> int:
        return h

    # -- events (XID) ----------------------------------------------------------------------------
    def nvmlEventSetCreate(self) -> object:
        self.calls["event_set_create"] += 1
        return object()

    def nvmlDeviceRegisterEvents(self, h: int, types: int, event_set: object) -> None:
        """A GPU whose table has ``xid_events`` set to an exception refuses (as NotSupported cards do)."""
        cell = self.tables[h].get("xid_events")
        if isinstance(cell, BaseException):
            raise cell
        self.registered.add(h)

    def nvmlEventSetWait_v2(self, event_set: object, timeout_ms: int) -> SimpleNamespace:
        with self._event_ready:
            if not self._pending and not self._event_ready.wait_for(lambda: bool(self._pending), timeout_ms / 1000):
                raise pynvml.NVMLError_Timeout()
            index, xid = self._pending.pop(0)
        return SimpleNamespace(device=index, eventType=pynvml.nvmlEventTypeXidCriticalError, eventData=xid,
                               gpuInstanceId=0, computeInstanceId=0)

    def nvmlEventSetFree(self, event_set: object) -> None:
        self.calls["event_set_free"] += 1

    def inject_xid(self, index: int, xid: int) -> None:
        """What the driver does on an XID error: the waiting thread wakes with it."""
        with self._event_ready:
            if index in self.registered:
                self._pending.append((index, xid))
                self._event_ready.notify_all()

    def nvmlDeviceGetComputeRunningProcesses(self, h: int) -> list[SimpleNamespace]:
        return [SimpleNamespace(**p) for p in self._cell(h, "compute_processes")]

    def nvmlDeviceGetGraphicsRunningProcesses(self, h: int) -> list[SimpleNamespace]:
        return [SimpleNamespace(**p) for p in self._cell(h, "graphics_processes")]

    def nvmlDeviceGetProcessUtilization(self, h: int, since_us: int) -> list[SimpleNamespace]:
        """Samples newer than ``since_us``, stamped now; NotFound when there are none (as NVML)."""
        now_us = int(time.time() * 1e6)
        samples = [dict(s, timeStamp=now_us) for s in self._cell(h, "process_utilization", since_us)]
        fresh = [SimpleNamespace(**s) for s in samples if s["timeStamp"] > since_us]
        if not fresh:
            raise pynvml.NVMLError_NotFound()
        return fresh


def scenario(name: str) -> FakeNvml:
    """Named scenarios (CONTRIBUTING.md): the tables real GPUs gave, and the failures seen in the field."""
    builders: dict[str, Callable[[], FakeNvml]] = {
        "h100_load": lambda: FakeNvml(load_dump("h100-load")),
        "h100_idle": lambda: FakeNvml(load_dump("h100-idle")),
        "h200x2_load": lambda: FakeNvml(load_dump("h200x2-load")),
        "desktop_fan": lambda: FakeNvml([desktop_card()]),
        "eight_gpus": lambda: FakeNvml(_eight()),
        "library_not_found": lambda: FakeNvml([], init_error=pynvml.NVMLError_LibraryNotFound()),
        "driver_mismatch": lambda: FakeNvml([], init_error=pynvml.NVMLError_LibRmVersionMismatch()),
    }
    return builders[name]()


def _eight() -> list[dict[str, Any]]:
    base = load_dump("h200x2-load")[1]
    tables = []
    for i in range(8):
        table = copy.deepcopy(base)
        table["uuid"] = f"GPU-8888{i:04d}-0000-0000-0000-000000000000"
        table["utilization"] = {"gpu": 10 * i, "memory": 5 * i}
        pid = absent_pid(1000 + i)
        table["compute_processes"] = [{"pid": pid, "usedGpuMemory": (i + 1) * 2**30,
                                       "gpuInstanceId": 4294967295, "computeInstanceId": 4294967295}]
        table["process_utilization"] = [{"pid": pid, "timeStamp": 0, "smUtil": 10 * i, "memUtil": i,
                                         "encUtil": 0, "decUtil": 0}]
        tables.append(table)
    return tables


def gpm_card(load: str = "bf16_matmul", **cells: Any) -> dict[str, Any]:
    """The H200 of h200x2-load.json (its matmul process included) answering GPM with what one H200 counted under
    ``load`` (tests/fixtures/nvml/h200-gpm.json)."""
    from tests.fakes.fake_gpm import h200_load

    table = load_dump("h200x2-load")[1]
    table.update({"gpm_support": True, "gpm": h200_load(load), **cells})
    return table
