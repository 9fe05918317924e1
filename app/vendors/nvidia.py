"""NVIDIA GPUs through NVML (nvidia-ml-py).

Every NVML call goes through ``Calls.get`` (app/vendors/nvml_calls.py): a value, or None plus the reason in the
GPU's ``unsupported`` map. Errors that mean the GPU (or NVML) itself failed raise ``GpuFailed``: that GPU becomes an
error row, the others keep reporting, and NVML is re-initialised with backoff. XID errors arrive on their own
thread (app/vendors/nvml_events.py).

Over 400 lines on purpose: sampling, the process lists and the per-process-utilization schedule all read and
write the same per-GPU state (``_Gpu``: handles, the slow tier's cache, the last utilization sample); split
further, that state would be passed around instead of kept in one place.
NVML is initialised once for the life of the backend; slow calls (energy ~3.6 ms of CPU, ECC, MIG
mode) run every 60 s; per-process utilization (~1.7 ms) at most once a second, never on an idle GPU.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Protocol, SupportsFloat, TypedDict

from ..core.fan import Fan
from ..core.model import GpuEvent, GpuProcessUsage, GpuSample, UsageKind, evolve, frozen_map
from ..core.threads import each_on_a_thread
from ..core.vocabulary import THROTTLE_REASONS
from . import nvml_early
from .base import Backend, BackendUnavailable
from .nvml_calls import Calls, GpuFailed, describe_init_error
from .nvml_events import XidWatcher
from .nvml_fans import PASSIVELY_COOLED, FanStatics, fans_of, read_fans, read_statics
from .sysfs import ASLEEP, RESTING, PowerState

log = logging.getLogger(__name__)


# nvmlClocksEventReason* bits (0x1 gpu_idle ... 0x100 display_clock_setting) and the names a person can read.
CLOCKS_EVENT_REASONS: tuple[tuple[int, str], ...] = tuple((1 << bit, name) for bit, name in enumerate(THROTTLE_REASONS))

# Energy costs ~3.6 ms of CPU a call on an H200, MIG mode and display ~0.1 ms (benchmarks/nvml_calls.py):
# every 60 s they cost an 8-GPU machine 0.5 ms of CPU a second; every 10 s they cost six times that. (The ledger
# integrates the power read each tick; the counter is its check, and the exported energy counter.)
SLOW_PERIOD_S = 60.0
# An idle GPU the kernel may suspend (runtime PM "auto") is read every REST_PERIOD_S once it has been idle (0 %, no
# process) for REST_AFTER_TICKS ticks: NVML calls every second would keep it awake (and its fan with it).
REST_AFTER_TICKS = 5
REST_PERIOD_S = 30.0
REINIT_BACKOFF_S = (2.0, 5.0, 15.0, 60.0, 300.0)
# The process lists (compute and graphics: about 0.3 ms of CPU a GPU on an H100) are read again when the GPU's used
# memory changed since the last list (a process that starts, ends or grows changes it) and at least this often.
LIST_PERIOD_S = 5.0


def decode_clocks_event_reasons(mask: int) -> tuple[str, ...]:
    """Names of the bits set in an nvmlClocksEventReason mask (unknown bits as hex)."""
    names = [name for bit, name in CLOCKS_EVENT_REASONS if mask & bit]
    known = 0
    for bit, _ in CLOCKS_EVENT_REASONS:
        known |= bit
    if mask & ~known:
        names.append(hex(mask & ~known))
    return tuple(names)


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
    """What NVML answers slowly (energy: about 3.6 ms of CPU a call), read every ``slow_period_s``."""

    energy_j: float | None
    ecc_errors_uncorrected: int | None
    mig_mode: bool | None
    persistence_mode: bool | None
    display_active: bool | None


@dataclass
class _Gpu:
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


class NvidiaBackend(Backend):
    """NVML backend. ``nvml`` is the pynvml module (tests pass a table-driven fake)."""

    name = "nvidia"

    def __init__(
        self,
        nvml: ModuleType | Any | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        slow_period_s: float = SLOW_PERIOD_S,
        util_window_s: float = 2.0,
        watch_xid: bool = True,
        xid_wait_ms: int = 5000,
        process_util_period_s: float = 3.0,
        process_util_spacing_s: float = 1.0,
        lone_util_period_s: float = 30.0,
        list_period_s: float = LIST_PERIOD_S,
        sys_root: str = "/sys",
    ):
        self._nvml: Any = nvml  # pynvml, or a fake: a module without type hints
        self._sys_root = sys_root  # where each GPU's runtime power state is read before any call to it
        self._clock = clock
        self._wall = wall_clock
        self._slow_period_s = slow_period_s
        self._util_window_s = util_window_s
        self._process_util_period_s = process_util_period_s
        self._process_util_spacing_s = process_util_spacing_s
        self._lone_util_period_s = lone_util_period_s
        self._list_period_s = list_period_s
        self._util_slot_at = float("-inf")
        self._util_turn: _Gpu | None = None
        self._gpus: list[_Gpu] = []
        self._fans_apart = False  # the fans are read on their own clock (fans_apart), not in the sample
        self._calls = Calls(nvml)  # made again by open() once the library is loaded
        self._initialised = False
        self._cold = False  # opened and not read since: the next sample reads each GPU on a thread
        self._reinit_at: float | None = None
        self._reinit_failures = 0
        self.driver_version: str | None = None
        self._watch_xid = watch_xid
        self._xid_wait_ms = xid_wait_ms
        self._xid: XidWatcher | None = None

    # -- life cycle -------------------------------------------------------------------------
    def open(self) -> None:
        if self._nvml is None:
            self._nvml = nvml_early.taken()  # begun by a terminal command before its imports, or None
        if self._nvml is None:
            try:
                import pynvml  # nvidia-ml-py; the deprecated 'pynvml' package is kept out
            except ImportError as error:
                raise BackendUnavailable(f"nvidia-ml-py is not installed: {error}", "no-library") from error
            self._nvml = pynvml
        self._calls = Calls(self._nvml)
        try:
            try:
                self._init()
            finally:
                nvml_early.release()  # NVML is the backend's own now (or failed again, and is said so)
        except self._nvml.NVMLError as error:
            no_driver = getattr(error, "value", None) == getattr(self._nvml, "NVML_ERROR_LIBRARY_NOT_FOUND", -1)
            raise BackendUnavailable(describe_init_error(self._nvml, error),
                                     "no-driver" if no_driver else "failed") from error
        except OSError as error:
            raise BackendUnavailable(f"NVML could not be loaded: {error}", "no-driver") from error
        if not self._gpus:
            self.close()
            raise BackendUnavailable("NVML started but reports no NVIDIA GPU", "no-device")

    def _init(self) -> None:
        nvml = self._nvml
        nvml.nvmlInit()
        self._initialised = True
        try:
            self.driver_version = _text(nvml.nvmlSystemGetDriverVersion())
        except nvml.NVMLError:
            self.driver_version = None
        count = nvml.nvmlDeviceGetCount()
        previous = {gpu.index: gpu for gpu in self._gpus}
        # A GPU's first calls take the driver ~10 ms each GPU (an H200), answered side by side for several GPUs:
        # the GPUs are opened, and read the first time after it, on a thread each (NVML is thread-safe).
        self._gpus = each_on_a_thread(lambda i: self._open_gpu(i, previous.get(i)), range(count), "fanwhy-nvml-open")
        self._cold = True
        if self._watch_xid and self._gpus:
            self._xid = XidWatcher(nvml, [(g.index, g.handle) for g in self._gpus if g.handle is not None],
                                    self._wall, self._xid_wait_ms)

    def events(self) -> list[GpuEvent]:
        """XID errors seen since the last call."""
        return self._xid.drain() if self._xid is not None else []

    def event_watch(self) -> str:
        if self._xid is None:
            return "not watching"
        return self._xid.unsupported or "watching"

    def fans_apart(self) -> Callable[[], tuple[Fan, ...]] | None:
        """The GPUs' fans as a reader of their own (the fan service reads it on its own clock), and no longer in
        the sample; None where no GPU has a fan (an H100, an H200: nothing to read)."""
        if not any(g.num_fans != 0 and g.handle is not None for g in self._gpus):
            return None
        for gpu in self._gpus:  # its power state is read before any fan call: a sleeping GPU is not woken
            if gpu.power is None:
                gpu.power = PowerState(self._sys_root, gpu.pci_bus_id)
        self._fans_apart = True
        return lambda: fans_of(self._calls.get, list(self._gpus))

    def _open_gpu(self, index: int, previous: _Gpu | None) -> _Gpu:
        gpu = _Gpu(index=index)
        if previous is not None:  # keep the names a lost GPU had, for its error row
            gpu.uuid, gpu.name = previous.uuid, previous.name
        calls = self._calls
        nvml = self._nvml
        try:
            gpu.handle = nvml.nvmlDeviceGetHandleByIndex(index)
            u = gpu.static_unsupported
            gpu.name = _text(calls.get(u, "name", "nvmlDeviceGetName", gpu.handle)) or gpu.name
            gpu.uuid = _text(calls.get(u, "uuid", "nvmlDeviceGetUUID", gpu.handle)) or gpu.uuid
            pci = calls.get(u, "pci_bus_id", "nvmlDeviceGetPciInfo", gpu.handle)
            gpu.pci_bus_id = _text(getattr(pci, "busId", None)) if pci is not None else None
            gpu.slowdown_c = _num(calls.get(
                u, "temperature_slowdown_c", "nvmlDeviceGetTemperatureThreshold",
                gpu.handle, nvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN))
            gpu.shutdown_c = _num(calls.get(
                u, "temperature_shutdown_c", "nvmlDeviceGetTemperatureThreshold",
                gpu.handle, nvml.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN))
            gpu.clock_sm_max_mhz = calls.get(u, "clock_sm_max_mhz", "nvmlDeviceGetMaxClockInfo",
                                             gpu.handle, nvml.NVML_CLOCK_SM)
            gpu.num_fans = calls.get(u, "fan_speed_percent", "nvmlDeviceGetNumFans", gpu.handle)
            if gpu.num_fans is not None:
                u.pop("fan_speed_percent", None)
            if gpu.num_fans:
                gpu.fan_statics = read_statics(calls.get, gpu.handle)
        except nvml.NVMLError as error:  # the handle itself: this GPU is unusable
            gpu.error = f"{type(error).__name__}: {error}"
        except GpuFailed as error:
            gpu.error = str(error)
        return gpu

    def close(self) -> None:
        for gpu in self._gpus:
            if gpu.power is not None:
                gpu.power.close()
                gpu.power = None
        if self._initialised and self._nvml is not None:
            self._initialised = False
            if self._xid is not None:  # NVML goes once the XID thread has left its wait, never under it
                self._xid.stop(release=self._shutdown)
            else:
                self._shutdown()
        self._xid = None

    def _shutdown(self) -> None:
        try:
            self._nvml.nvmlShutdown()
        except self._nvml.NVMLError as error:
            log.debug("nvmlShutdown: %s", error)

    def _schedule_reinit(self) -> None:
        if self._reinit_at is None:
            step = REINIT_BACKOFF_S[min(self._reinit_failures, len(REINIT_BACKOFF_S) - 1)]
            self._reinit_at = self._clock() + step

    def _maybe_reinit(self) -> None:
        if self._reinit_at is None or self._clock() < self._reinit_at:
            return
        self._reinit_at = None
        nvml = self._nvml
        log.warning("re-initialising NVML after a GPU error")
        self.close()
        try:
            self._init()
        except (nvml.NVMLError, OSError) as error:
            self._reinit_failures += 1
            reason = f"NVML re-init failed: {type(error).__name__}: {error}"
            for gpu in self._gpus:
                gpu.error, gpu.handle = reason, None
            self._schedule_reinit()
            return
        if any(gpu.error for gpu in self._gpus):
            self._reinit_failures += 1
            self._schedule_reinit()
        else:
            self._reinit_failures = 0

    # -- sampling ---------------------------------------------------------------------------
    def sample(self) -> list[GpuSample]:
        self._maybe_reinit()
        if self._cold:  # the first read after an open: a thread each GPU, as the open (see _init)
            self._cold = False
            return each_on_a_thread(self._sample_one, self._gpus, "fanwhy-nvml-open")
        return [self._sample_one(gpu) for gpu in self._gpus]

    def _sample_one(self, gpu: _Gpu) -> GpuSample:
        if gpu.power is None:
            gpu.power = PowerState(self._sys_root, gpu.pci_bus_id)
        was_asleep, gpu.asleep = gpu.asleep, gpu.power.asleep()
        if gpu.asleep:  # any NVML call would wake it (and its fan): shown asleep, read again once awake
            return GpuSample(vendor="nvidia", index=gpu.index, uuid=gpu.uuid, name=gpu.name,
                             pci_bus_id=gpu.pci_bus_id, source="nvml", asleep=True,
                             unsupported=frozen_map({"asleep": ASLEEP}))
        if was_asleep:  # something woke it: read it now
            gpu.quiet_ticks = 0
        rested = self._rested(gpu)
        if rested is not None:
            return rested
        if gpu.error is None and gpu.handle is not None:
            try:
                sample = self._sample_gpu(gpu)
                gpu.quiet_ticks = gpu.quiet_ticks + 1 if gpu.idle and not gpu.has_processes else 0
                gpu.last = sample
                return sample
            except GpuFailed as error:
                gpu.error = str(error)
                log.warning("GPU %d failed: %s", gpu.index, error)
        self._schedule_reinit()
        return GpuSample(vendor="nvidia", index=gpu.index, uuid=gpu.uuid, name=gpu.name,
                         source="nvml", error=gpu.error or "GPU handle unavailable")

    def _rested(self, gpu: _Gpu) -> GpuSample | None:
        """The last sample of an idle GPU that runtime PM may suspend, between its reads every REST_PERIOD_S; None
        when it is to be read now."""
        gpu.resting = bool(gpu.power and gpu.power.managed) and gpu.quiet_ticks >= REST_AFTER_TICKS
        now = self._clock()
        gpu.cached = gpu.resting and gpu.last is not None and now - gpu.rest_read_at < REST_PERIOD_S
        if not gpu.cached or gpu.last is None:
            gpu.rest_read_at = now
            return None
        return evolve(gpu.last, unsupported=frozen_map({**gpu.last.unsupported, "resting": RESTING}))

    def _sample_gpu(self, gpu: _Gpu) -> GpuSample:
        nvml, get, h = self._nvml, self._calls.get, gpu.handle
        u: dict[str, str] = dict(gpu.static_unsupported)

        util = get(u, "utilization_percent", "nvmlDeviceGetUtilizationRates", h)
        if util is None:
            u["memory_utilization_percent"] = u["utilization_percent"]
        gpu.idle = util is not None and util.gpu == 0
        memory = self._memory(u, h)
        temperature = get(u, "temperature_c", "nvmlDeviceGetTemperature", h, nvml.NVML_TEMPERATURE_GPU)
        fans = read_fans(get, h, gpu.index, gpu.num_fans, gpu.fan_statics, u) \
            if not self._fans_apart or gpu.num_fans == 0 else ()
        speeds = [f.percent for f in fans if f.percent is not None]
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
        if rpm is None and not (self._fans_apart and gpu.num_fans):
            u.setdefault("fan_rpm", PASSIVELY_COOLED if passive else "not reported by this GPU's driver")

        return GpuSample(
            vendor="nvidia",
            passively_cooled=passive,
            index=gpu.index,
            uuid=gpu.uuid,
            name=gpu.name,
            utilization_percent=_num(getattr(util, "gpu", None)),
            memory_utilization_percent=_num(getattr(util, "memory", None)),
            memory_used_bytes=getattr(memory, "used", None),
            memory_total_bytes=getattr(memory, "total", None),
            memory_free_bytes=getattr(memory, "free", None),
            temperature_c=_num(temperature),
            temperature_slowdown_c=gpu.slowdown_c,
            temperature_shutdown_c=gpu.shutdown_c,
            fan_speed_percent=max(speeds) if speeds else None,
            fan_speeds_percent=tuple(speeds),
            fan_rpm=rpm,
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
        nvml = self._nvml
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
        if not hasattr(self._nvml, fn):  # nvidia-ml-py < 12.535 only has the old name
            fn = "nvmlDeviceGetCurrentClocksThrottleReasons"
        mask = self._calls.get(u, "throttle_reasons", fn, handle)
        return decode_clocks_event_reasons(int(mask)) if mask is not None else None

    def _slow(self, gpu: _Gpu, handle: object) -> SlowValues:
        """Energy (about 3.6 ms of CPU a call), ECC, MIG, persistence and display, every ``slow_period_s``."""
        now = self._clock()
        if now - gpu.slow_at < self._slow_period_s:
            return gpu.slow_values
        nvml, get = self._nvml, self._calls.get
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

    # -- processes --------------------------------------------------------------------------
    def processes(self) -> list[GpuProcessUsage]:
        self._util_turn = self._next_util_turn()
        usages: list[GpuProcessUsage] = []
        for gpu in self._gpus:
            if gpu.error is not None or gpu.handle is None or gpu.asleep or gpu.cached:
                continue
            try:
                found = self._gpu_processes(gpu)
                gpu.has_processes = bool(found)
                usages.extend(found)
            except GpuFailed as error:
                gpu.error = str(error)
                self._schedule_reinit()
        return usages

    def _gpu_processes(self, gpu: _Gpu) -> list[GpuProcessUsage]:
        memory, kinds = self._listed(gpu)
        utils, util_supported = self._process_utilization(gpu, frozenset(memory))
        usages = []
        for pid in sorted(set(memory) | set(utils)):
            sample = utils.get(pid)
            idle = 0.0 if util_supported else None
            usages.append(GpuProcessUsage(
                pid=pid,
                gpu_index=gpu.index,
                memory_bytes=memory.get(pid),
                sm_percent=_num(sample.smUtil) if sample is not None else idle,
                encoder_percent=_num(sample.encUtil) if sample is not None else idle,
                decoder_percent=_num(sample.decUtil) if sample is not None else idle,
                kind=kinds.get(pid, "utilization-only"),
            ))
        return usages

    def _listed(self, gpu: _Gpu) -> tuple[dict[int, int | None], dict[int, UsageKind]]:
        """The GPU's compute and graphics processes: PID -> memory, PID -> kind. Read again when the GPU's used
        memory changed since the last list (every process holds memory: a CUDA context alone is hundreds of MiB, so
        one that starts, ends or grows changes it), when the used memory is unknown, and at least every
        ``list_period_s`` (one process ending as another of the same size starts); in between the last list stands."""
        used = gpu.last.memory_used_bytes if gpu.last is not None else None
        now = self._clock()
        if (gpu.listed is not None and used is not None and used == gpu.listed_used
                and now - gpu.listed_at < self._list_period_s):
            return gpu.listed
        get, h = self._calls.get, gpu.handle
        scratch: dict[str, str] = {}
        memory: dict[int, int | None] = {}
        kinds: dict[int, UsageKind] = {}
        lists: tuple[tuple[UsageKind, str], ...] = (("compute", "nvmlDeviceGetComputeRunningProcesses"),
                                                    ("graphics", "nvmlDeviceGetGraphicsRunningProcesses"))
        for kind, fn in lists:
            for proc in get(scratch, kind, fn, h) or ():
                used_by = getattr(proc, "usedGpuMemory", None)
                if proc.pid in memory:  # a process with a compute and a graphics context
                    known = [m for m in (memory[proc.pid], used_by) if m is not None]
                    memory[proc.pid] = max(known) if known else None
                else:
                    memory[proc.pid] = used_by
                    kinds[proc.pid] = kind
        gpu.listed, gpu.listed_used, gpu.listed_at = (memory, kinds), used, now
        return gpu.listed

    def _next_util_turn(self) -> _Gpu | None:
        """The busy GPU whose per-process utilization is refreshed on the period this tick: the one read
        longest ago among those due, and none if another was refreshed less than ``spacing`` ago."""
        now = self._clock()
        if now < self._util_slot_at:
            return None
        due = [g for g in self._gpus if g.error is None and g.handle is not None and not g.idle
               and now - g.util_at >= self._util_period(g)]
        if not due:
            return None
        self._util_slot_at = now + self._process_util_spacing_s
        return min(due, key=lambda g: g.util_at)

    def _util_period(self, gpu: _Gpu) -> float:
        """How often a busy GPU's per-process utilization is refreshed when its processes stay: a GPU with one
        process, whose last samples named no one else, every ``lone_util_period_s`` (its share of the GPU's power
        is all of it whatever its SM % says; a second process, or one NVML shows only in its samples, changes the
        list or the samples, and is read at once or at the next turn); others every ``process_util_period_s``."""
        lone = len(gpu.util_pids) == 1 and set(gpu.util_cache[0]) <= gpu.util_pids
        return self._lone_util_period_s if lone else self._process_util_period_s

    def _process_utilization(self, gpu: _Gpu, listed: frozenset[int]) -> tuple[dict[int, UtilSample], bool]:
        """The newest per-process utilization sample per PID.

        The call costs about 1.7 ms of CPU on an H200 (every other per-tick call costs microseconds).
        It runs at once when a GPU's processes change, or when it wakes from idle (at most once a
        period); otherwise every ``process_util_period_s`` per busy GPU, but never more than once per
        ``process_util_spacing_s`` in all: the GPUs take turns, the one read longest ago first. So
        busy GPUs whose processes stay cost under 2 ms of CPU a second however many there are (8 are
        each refreshed every 8 s); in between, the last samples stand. NVML raises NotFound when no
        process ran in the window: everyone is at 0 %, which is a value. NotSupported means nobody's
        share is known: None. On a GPU whose utilization reads 0 % the call is skipped: everyone is
        at 0 % (an idle H200 answered NotFound, after 3 ms), so idle GPUs cost nothing here.
        """
        if gpu.idle:
            gpu.util_woke = True
            return {}, gpu.util_cache[1]
        now = self._clock()
        woke = gpu.util_woke and now - gpu.util_at >= self._process_util_period_s  # a GPU that flaps: per period
        if listed == gpu.util_pids and not woke and gpu is not self._util_turn:
            return gpu.util_cache
        gpu.util_pids, gpu.util_at, gpu.util_woke = listed, now, False
        gpu.util_cache = self._read_process_utilization(gpu)
        return gpu.util_cache

    def _read_process_utilization(self, gpu: _Gpu) -> tuple[dict[int, UtilSample], bool]:
        nvml = self._nvml
        # the whole window every time: NVML answers each process's newest sample after ``since``, and with two
        # processes time-slicing one GPU their newest samples differ; asking only for what came after the newest of
        # all (as this did) dropped the other one, which then read 0 % (found on an H100 with two loads)
        since = int((self._wall() - self._util_window_s) * 1e6)
        fn = getattr(nvml, "nvmlDeviceGetProcessUtilization", None)
        if fn is None:
            return {}, False
        try:
            samples = fn(gpu.handle, since)
        except nvml.NVMLError as error:
            if error.value == nvml.NVML_ERROR_NOT_FOUND:
                return {}, True
            self._calls.reason(error, "nvmlDeviceGetProcessUtilization", "sm_percent")
            return {}, False
        newest: dict[int, UtilSample] = {}
        for sample in samples or ():
            if sample.pid not in newest or sample.timeStamp > newest[sample.pid].timeStamp:
                newest[sample.pid] = sample
        return newest, True


def _num(value: SupportsFloat | None) -> float | None:
    return float(value) if value is not None else None


def _text(value: object) -> str | None:
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else str(value)

