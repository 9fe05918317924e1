"""One NVIDIA GPU as NVML answers it: what the backend keeps per GPU between ticks (``GpuState``) and one read of
it (``GpuReader``): utilization, memory, temperature, fans (unless read on their own clock), power, clocks, the
clocks-event reasons and, every ``slow_period_s``, the slow values (energy, ECC, MIG, persistence, display).
Every call goes through ``Calls.get`` (app/vendors/nvml_calls.py)."""

from __future__ import annotations

from dataclasses import field
from typing import Callable, Protocol, SupportsFloat, TypedDict

from ..core.model import GpuSample, UsageKind, frozen_map
from ..core.record import holder
from ..core.vocabulary import THROTTLE_REASONS, decode_clocks_event_reasons
from .nvml_calls import Calls
from .nvml_fans import PASSIVELY_COOLED, FanStatics, read_fans
from .sysfs import PowerState

# nvmlClocksEventReason* bits (0x1 gpu_idle ... 0x100 display_clock_setting) and the names a person can read.
CLOCKS_EVENT_REASONS: tuple[tuple[int, str], ...] = tuple((1 << bit, name) for bit, name in enumerate(THROTTLE_REASONS))

# Energy, MIG mode and display are NVML's slow answers (benchmarks/nvml_calls.py measures them): once a minute
# they cost a many-GPU machine little; every few seconds they would be most of the collector. (The ledger
# integrates the power read each tick; the counter is its check, and the exported energy counter.)
SLOW_PERIOD_S = 60.0
# An idle GPU the kernel may suspend (runtime PM "auto") is read every REST_PERIOD_S once it has been idle (0 %, no
# process) for REST_AFTER_TICKS ticks: NVML calls every second would keep it awake (and its fan with it).
REST_AFTER_TICKS = 5
REST_PERIOD_S = 30.0


class MemoryInfo(Protocol):
    """What nvmlDeviceGetMemoryInfo answers (v1 or v2), as read here."""

    used: int
    total: int


class UtilSample(Protocol):
    """One of nvmlDeviceGetProcessUtilization's samples, as read here."""

    pid: int
    timeStamp: int  # NVML's names
    smUtil: int
    encUtil: int
    decUtil: int


class SlowValues(TypedDict):
    """What NVML answers slowly (energy above all), read every ``slow_period_s``."""

    energy_j: float | None
    ecc_errors_uncorrected: int | None
    mig_mode: bool | None
    persistence_mode: bool | None
    display_active: bool | None


@holder
class GpuState:
    """What the backend keeps per GPU between ticks."""

    index: int
    handle: object = None
    uuid: str | None = None
    name: str | None = None
    pci_bus_id: str | None = None
    slowdown_c: float | None = None
    shutdown_c: float | None = None
    clock_sm_max_mhz: int | None = None
    num_fans: int | None = None
    gpm: bool = False  # it answers NVML GPM (its activity counters); where not, static_unsupported["activity"] says why
    fan_statics: FanStatics = field(default_factory=lambda: FanStatics(None, None, None))
    static_unsupported: dict[str, str] = field(default_factory=dict)
    slow_values: SlowValues = field(default_factory=lambda: SlowValues(
        energy_j=None, ecc_errors_uncorrected=None, mig_mode=None, persistence_mode=None, display_active=None))
    slow_unsupported: dict[str, str] = field(default_factory=dict)
    slow_at: float = float("-inf")
    util_at: float = float("-inf")
    util_pids: frozenset[int] = frozenset()
    util_cache: tuple[dict[int, UtilSample], bool] = field(default_factory=lambda: ({}, True))
    idle: bool = False  # the last utilization read 0 %
    util_woke: bool = True  # idle when its processes' utilization was last asked for: read at once when busy
    error: str | None = None
    asleep: bool = False  # runtime-suspended at the last sample: no NVML call until it wakes
    power: PowerState | None = None  # its runtime power state in sysfs, read before any call
    quiet_ticks: int = 0  # ticks in a row at 0 % with no process
    has_processes: bool = False
    resting: bool = False  # idle under runtime PM: read every REST_PERIOD_S so that it can suspend
    cached: bool = False  # this tick's sample is the last one read (resting): no call to it this tick
    rest_read_at: float = float("-inf")
    last: GpuSample | None = None
    listed: tuple[dict[int, int | None], dict[int, UsageKind]] | None = None  # PID -> memory, PID -> kind
    listed_used: int | None = None  # the GPU's used memory when the process lists were last read
    listed_at: float = float("-inf")


class GpuReader:
    """Reads one GPU each tick, through the NVML module and call path the backend opened."""

    def __init__(self, calls: Calls, clock: Callable[[], float], slow_period_s: float):
        self._calls = calls  # its ``lib``: pynvml, or a fake
        self._clock = clock
        self._slow_period_s = slow_period_s

    def read(self, gpu: GpuState, fans_apart: bool) -> GpuSample:
        """One sample of ``gpu``; ``fans_apart``: its fans are read on their own clock, not here."""
        nvml, get, h = self._calls.lib, self._calls.get, gpu.handle
        u: dict[str, str] = dict(gpu.static_unsupported)

        util = get(u, "utilization_percent", "nvmlDeviceGetUtilizationRates", h)
        if util is None:
            u["memory_utilization_percent"] = u["utilization_percent"]
        gpu.idle = util is not None and util.gpu == 0
        memory = self._memory(u, h)
        temperature = get(u, "temperature_c", "nvmlDeviceGetTemperature", h, nvml.NVML_TEMPERATURE_GPU)
        fans = read_fans(get, h, gpu.index, gpu.num_fans, gpu.fan_statics, u) \
            if not fans_apart or gpu.num_fans == 0 else ()
        power_mw = get(u, "power_w", "nvmlDeviceGetPowerUsage", h)
        limit_mw = get(u, "power_limit_w", "nvmlDeviceGetEnforcedPowerLimit", h)
        clock_sm = get(u, "clock_sm_mhz", "nvmlDeviceGetClockInfo", h, nvml.NVML_CLOCK_SM)
        clock_mem = get(u, "clock_memory_mhz", "nvmlDeviceGetClockInfo", h, nvml.NVML_CLOCK_MEM)
        pstate = get(u, "pstate", "nvmlDeviceGetPerformanceState", h)
        reasons = self._clocks_event_reasons(u, h)
        slow = self._slow(gpu, h)
        u.update(gpu.slow_unsupported)
        passive = not fans and gpu.num_fans == 0
        rpm = fans[0].rpm if fans else None
        if rpm is None and not (fans_apart and gpu.num_fans):
            u.setdefault("fan_rpm", PASSIVELY_COOLED if passive else "not reported by this GPU's driver")

        return GpuSample(
            vendor="nvidia",
            passively_cooled=passive,
            index=gpu.index,
            uuid=gpu.uuid,
            name=gpu.name,
            utilization_percent=num(getattr(util, "gpu", None)),
            memory_utilization_percent=num(getattr(util, "memory", None)),
            memory_used_bytes=getattr(memory, "used", None),
            memory_total_bytes=getattr(memory, "total", None),
            memory_free_bytes=getattr(memory, "free", None),
            temperature_c=num(temperature),
            temperature_slowdown_c=gpu.slowdown_c,
            temperature_shutdown_c=gpu.shutdown_c,
            fans=fans,
            power_w=power_mw / 1000.0 if power_mw is not None else None,
            power_limit_w=limit_mw / 1000.0 if limit_mw is not None else None,
            clock_sm_mhz=clock_sm,
            clock_memory_mhz=clock_mem,
            clock_sm_max_mhz=gpu.clock_sm_max_mhz,
            pstate=f"P{pstate}" if pstate is not None and pstate != 32 else None,
            throttle_reasons=reasons,
            energy_j=slow.get("energy_j"),
            ecc_errors_uncorrected=slow.get("ecc_errors_uncorrected"),
            mig_mode=slow.get("mig_mode"),
            persistence_mode=slow.get("persistence_mode"),
            display_active=slow.get("display_active"),
            pci_bus_id=gpu.pci_bus_id,
            source="nvml",
            unsupported=frozen_map(u),
        )

    def _memory(self, u: dict[str, str], handle: object) -> MemoryInfo | None:
        """v2 memory info when the driver has it: its 'used' excludes the driver's reserve, as nvidia-smi."""
        nvml = self._calls.lib
        version = getattr(nvml, "nvmlMemory_v2", None)
        memory: MemoryInfo | None
        if version is not None:
            scratch: dict[str, str] = {}
            memory = self._calls.get(scratch, "memory_used_bytes", "nvmlDeviceGetMemoryInfo", handle, version)
            if memory is not None:
                return memory
        memory = self._calls.get(u, "memory_used_bytes", "nvmlDeviceGetMemoryInfo", handle)
        if memory is None:
            u["memory_total_bytes"] = u["memory_used_bytes"]
        return memory

    def _clocks_event_reasons(self, u: dict[str, str], handle: object) -> tuple[str, ...] | None:
        fn = "nvmlDeviceGetCurrentClocksEventReasons"
        if not hasattr(self._calls.lib, fn):  # nvidia-ml-py < 12.535 only has the old name
            fn = "nvmlDeviceGetCurrentClocksThrottleReasons"
        mask = self._calls.get(u, "throttle_reasons", fn, handle)
        return decode_clocks_event_reasons(int(mask)) if mask is not None else None

    def _slow(self, gpu: GpuState, handle: object) -> SlowValues:
        """Energy, ECC, MIG, persistence and display, every ``slow_period_s``."""
        now = self._clock()
        if now - gpu.slow_at < self._slow_period_s:
            return gpu.slow_values
        nvml, get = self._calls.lib, self._calls.get
        u: dict[str, str] = {}
        energy_mj = get(u, "energy_j", "nvmlDeviceGetTotalEnergyConsumption", handle)
        ecc = get(u, "ecc_errors_uncorrected", "nvmlDeviceGetTotalEccErrors", handle,
                  nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_VOLATILE_ECC)
        mig = get(u, "mig_mode", "nvmlDeviceGetMigMode", handle)
        persistence = get(u, "persistence_mode", "nvmlDeviceGetPersistenceMode", handle)
        display = get(u, "display_active", "nvmlDeviceGetDisplayActive", handle)
        gpu.slow_values = {
            "persistence_mode": bool(persistence) if persistence is not None else None,
            "display_active": bool(display) if display is not None else None,
            "energy_j": energy_mj / 1000.0 if energy_mj is not None else None,
            "ecc_errors_uncorrected": int(ecc) if ecc is not None else None,
            "mig_mode": bool(mig[0]) if mig is not None else None,
        }
        gpu.slow_unsupported, gpu.slow_at = u, now
        return gpu.slow_values


def num(value: SupportsFloat | None) -> float | None:
    return float(value) if value is not None else None


def text(value: object) -> str | None:
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else str(value)

