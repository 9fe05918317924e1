"""NVIDIA GPUs through NVML (nvidia-ml-py).

Every NVML call goes through ``Calls.get`` (app/vendors/nvml_calls.py): a value, or None plus the reason in the
GPU's ``unsupported`` map. Errors that mean the GPU (or NVML) itself failed raise ``GpuFailed``: that GPU becomes an
error row, the others keep reporting, and NVML is re-initialised with backoff. XID errors arrive on their own
thread (app/vendors/nvml_events.py).

This module is the backend's life cycle (open, close, re-initialise with backoff), runtime power (a GPU the kernel
may suspend is not woken) and the order of each tick; one GPU's read is ``nvml_gpu.GpuReader``, the processes
``nvml_processes.ProcessReader``, the fans ``nvml_fans``; all of them share the per-GPU state ``GpuState``.
NVML is initialised once for the life of the backend; slow calls (energy, ECC, MIG
mode) run every 60 s; per-process utilization, the costliest per-tick call, at most once a second, never on an idle
GPU (``benchmarks/nvml_calls.py`` measures each call).
"""

from __future__ import annotations

import logging
import time
from types import ModuleType
from typing import Callable

from ..core.fan import Fan
from ..core.model import GpuEvent, GpuProcessUsage, GpuSample, evolve, frozen_map
from ..core.threads import each_on_a_thread
from . import nvml_early
from .base import Backend, BackendUnavailable
from .calls import Library
from .nvml_calls import GpuFailed, describe_init_error, nvml_calls
from .nvml_events import XidWatcher
from .nvml_fans import fans_of, read_statics
from .nvml_gpm import FIRST_WINDOW, MIN_WINDOW_S, GpmWatcher, Reading, Target, support
from .nvml_gpu import REST_AFTER_TICKS, REST_PERIOD_S, SLOW_PERIOD_S, GpuReader, GpuState, num, text
from .nvml_processes import LIST_PERIOD_S, ProcessReader
from .sysfs import ASLEEP, RESTING, PowerState

log = logging.getLogger(__name__)


REINIT_BACKOFF_S = (2.0, 5.0, 15.0, 60.0, 300.0)
LATE = "late: the activity counters' thread has not read the last window"
RESTING_GPM = "not read while the GPU rests (so that it can suspend)"
KICK_SPACING_S = MIN_WINDOW_S + 0.01  # the GPM thread is woken at most this often (NVML's 100 ms, and a margin)


class NvidiaBackend(Backend):
    """NVML backend. ``nvml`` is the pynvml module (tests pass a table-driven fake)."""

    name = "nvidia"

    def __init__(
        self,
        nvml: ModuleType | Library | None = None,
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
        self._nvml: Library = nvml  # pynvml, or a fake
        self._sys_root = sys_root  # where each GPU's runtime power state is read before any call to it
        self._clock = clock
        self._wall = wall_clock
        self._slow_period_s = slow_period_s
        self._process_reader = ProcessReader(clock, wall_clock, util_window_s, process_util_period_s,
                                             process_util_spacing_s, lone_util_period_s, list_period_s)
        self._gpus: list[GpuState] = []
        self._fans_apart = False  # the fans are read on their own clock (fans_apart), not in the sample
        self._calls = nvml_calls(nvml)  # made again by open() once the library is loaded
        self._reader = GpuReader(self._calls, clock, slow_period_s)  # made again by open() too
        self._initialised = False
        self._cold = False  # opened and not read since: the next sample reads each GPU on a thread
        self._reinit_at: float | None = None
        self._reinit_failures = 0
        self.driver_version: str | None = None
        self._watch_xid = watch_xid
        self._xid_wait_ms = xid_wait_ms
        self._xid: XidWatcher | None = None
        self._gpm: GpmWatcher | None = None  # the activity counters' thread, where a GPU answers GPM
        self._kicked_at = float("-inf")  # when the GPM thread was last asked to read

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
        self._calls = nvml_calls(self._nvml)
        self._reader = GpuReader(self._calls, self._clock, self._slow_period_s)
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
            self.driver_version = text(nvml.nvmlSystemGetDriverVersion())
        except nvml.NVMLError:
            self.driver_version = None
        count = nvml.nvmlDeviceGetCount()
        previous = {gpu.index: gpu for gpu in self._gpus}
        # A GPU's first calls are slow in the driver and answered side by side for several GPUs:
        # the GPUs are opened, and read the first time after it, on a thread each (NVML is thread-safe).
        self._gpus = each_on_a_thread(lambda i: self._open_gpu(i, previous.get(i)), range(count), "fanwhy-nvml-open")
        self._cold = True
        if any(g.gpm for g in self._gpus):
            self._gpm = GpmWatcher(self._calls, self._clock)
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

    @property
    def gpm(self) -> GpmWatcher | None:
        """The activity counters' thread (None where no GPU answers GPM): its reads and CPU time are counted."""
        return self._gpm

    def fans_apart(self) -> Callable[[], tuple[Fan, ...]] | None:
        """The GPUs' fans as a reader of their own (the fan service reads it on its own clock), and no longer in
        the sample; None where no GPU has a fan (a passive card: nothing to read)."""
        if not any(g.num_fans != 0 and g.handle is not None for g in self._gpus):
            return None
        for gpu in self._gpus:  # its power state is read before any fan call: a sleeping GPU is not woken
            if gpu.power is None:
                gpu.power = PowerState(self._sys_root, gpu.pci_bus_id)
        self._fans_apart = True
        return lambda: fans_of(self._calls.get, list(self._gpus))

    def _open_gpu(self, index: int, previous: GpuState | None) -> GpuState:
        gpu = GpuState(index=index)
        if previous is not None:  # keep the names a lost GPU had, for its error row
            gpu.uuid, gpu.name = previous.uuid, previous.name
        calls = self._calls
        nvml = self._nvml
        try:
            gpu.handle = nvml.nvmlDeviceGetHandleByIndex(index)
            u = gpu.static_unsupported
            gpu.name = text(calls.get(u, "name", "nvmlDeviceGetName", gpu.handle)) or gpu.name
            gpu.uuid = text(calls.get(u, "uuid", "nvmlDeviceGetUUID", gpu.handle)) or gpu.uuid
            pci = calls.get(u, "pci_bus_id", "nvmlDeviceGetPciInfo", gpu.handle)
            gpu.pci_bus_id = text(getattr(pci, "busId", None)) if pci is not None else None
            gpu.slowdown_c = num(calls.get(
                u, "temperature_slowdown_c", "nvmlDeviceGetTemperatureThreshold",
                gpu.handle, nvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN))
            gpu.shutdown_c = num(calls.get(
                u, "temperature_shutdown_c", "nvmlDeviceGetTemperatureThreshold",
                gpu.handle, nvml.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN))
            gpu.clock_sm_max_mhz = calls.get(u, "clock_sm_max_mhz", "nvmlDeviceGetMaxClockInfo",
                                             gpu.handle, nvml.NVML_CLOCK_SM)
            gpu.num_fans = calls.get(u, "fan_speed_percent", "nvmlDeviceGetNumFans", gpu.handle)
            if gpu.num_fans is not None:
                u.pop("fan_speed_percent", None)
            if gpu.num_fans:
                gpu.fan_statics = read_statics(calls.get, gpu.handle)
            why_not = support(calls, gpu.handle)
            gpu.gpm = why_not is None
            if why_not is not None:
                u["activity"] = why_not
        except nvml.NVMLError as error:  # the handle itself: this GPU is unusable
            gpu.error = f"{type(error).__name__}: {error}"
        except GpuFailed as error:
            gpu.error = str(error)
        return gpu

    def close(self) -> None:
        if self._gpm is not None:  # its buffers are freed before NVML goes
            self._gpm.stop()
            self._gpm = None
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
            samples = each_on_a_thread(self._sample_one, self._gpus, "fanwhy-nvml-open")
        else:
            samples = [self._sample_one(gpu) for gpu in self._gpus]
        return self._counted(samples) if self._gpm is not None else samples

    def _counted(self, samples: list[GpuSample]) -> list[GpuSample]:
        """Each GPM GPU's sample with its latest window of activity (app/vendors/nvml_gpm.py), and the thread asked
        to read the next one; a GPU left unread this tick (asleep, resting, failed) is not read by GPM either."""
        gpm = self._gpm
        assert gpm is not None
        fresh_after = self._kicked_at - 2 * KICK_SPACING_S  # read since the last kick (or kept: read < 100 ms before)
        targets, out = [], []
        for gpu, sample in zip(self._gpus, samples, strict=True):
            if not gpu.gpm or sample.error is not None or gpu.asleep or gpu.handle is None:
                out.append(sample)
                continue
            if gpu.cached:  # resting: no call to it, GPM's neither (its last window would only grow old)
                out.append(evolve(sample, unsupported=frozen_map({**sample.unsupported, "activity": RESTING_GPM})))
                continue
            targets.append(Target(gpu.index, gpu.handle, bool(gpu.slow_values.get("mig_mode"))))
            out.append(_with_activity(sample, gpm.latest(gpu.index), fresh_after))
        now = self._clock()
        if now - self._kicked_at >= KICK_SPACING_S:  # sooner, the thread would find no window due: it is not woken
            self._kicked_at = now
            gpm.kick(targets)
        return out

    def _sample_one(self, gpu: GpuState) -> GpuSample:
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
                sample = self._reader.read(gpu, self._fans_apart)
                gpu.quiet_ticks = gpu.quiet_ticks + 1 if gpu.idle and not gpu.has_processes else 0
                gpu.last = sample
                return sample
            except GpuFailed as error:
                gpu.error = str(error)
                log.warning("GPU %d failed: %s", gpu.index, error)
        self._schedule_reinit()
        return GpuSample(vendor="nvidia", index=gpu.index, uuid=gpu.uuid, name=gpu.name,
                         source="nvml", error=gpu.error or "GPU handle unavailable")

    def _rested(self, gpu: GpuState) -> GpuSample | None:
        """The last sample of an idle GPU that runtime PM may suspend, between its reads every REST_PERIOD_S; None
        when it is to be read now."""
        gpu.resting = bool(gpu.power and gpu.power.managed) and gpu.quiet_ticks >= REST_AFTER_TICKS
        now = self._clock()
        gpu.cached = gpu.resting and gpu.last is not None and now - gpu.rest_read_at < REST_PERIOD_S
        if not gpu.cached or gpu.last is None:
            gpu.rest_read_at = now
            return None
        return evolve(gpu.last, unsupported=frozen_map({**gpu.last.unsupported, "resting": RESTING}))

    # -- processes --------------------------------------------------------------------------
    def processes(self) -> list[GpuProcessUsage]:
        usages, failed = self._process_reader.read(self._calls, self._gpus)
        if failed:
            self._schedule_reinit()
        return usages


def _with_activity(sample: GpuSample, reading: Reading | None, fresh_after: float) -> GpuSample:
    """``sample`` with the GPU's latest window of activity, or with why there is none (never zeros)."""
    late = reading is not None and reading.at < fresh_after
    why = FIRST_WINDOW if reading is None else LATE if late else reading.reason
    activity = None if late or reading is None else reading.activity
    instances = () if late or reading is None else reading.instances
    if why is None:
        return evolve(sample, activity=activity, activity_instances=instances)
    return evolve(sample, activity=activity, activity_instances=instances,
                  unsupported=frozen_map({**sample.unsupported, "activity": why}))
