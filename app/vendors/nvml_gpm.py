"""A GPU's own activity counters (NVML GPM: Hopper and newer), read on a thread of their own.

GPM gives a metric only between two samples taken at least ``MIN_WINDOW_S`` apart (the NVML API reference,
``nvmlGpmMetricsGet``). Each GPU (or, with MIG on, each GPU instance: ``nvmlGpmMigSampleGet``) keeps two sample
buffers: each read fills the spare one, the metrics are those of the window from the last read to this one, and
the two swap. The collector's tick only ``kick``s the thread and takes the latest window (``latest``): a sample
waits on the driver for a fraction of a millisecond, and the tick never waits for it.

Where GPM cannot be read, one reason stands in the GPU's ``unsupported["activity"]`` (not this GPU, not this
driver or nvidia-ml-py, no permission, a failing call, the first window not yet closed): never zeros.
The PCIe metrics are left out: with them one ``nvmlGpmMetricsGet`` costs a hundred times as much.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

from ..core.activity import Activity
from ..core.model import frozen_map
from ..core.threads import spawn
from .calls import Library
from .nvml_calls import Calls, GpuFailed

log = logging.getLogger(__name__)

# Activity's field -> the NVML metric (nvmlGpmMetricId_t) that counts it.
METRICS: tuple[tuple[str, str], ...] = (
    ("sm_active_percent", "NVML_GPM_METRIC_SM_UTIL"),
    ("sm_occupancy_percent", "NVML_GPM_METRIC_SM_OCCUPANCY"),
    ("tensor_percent", "NVML_GPM_METRIC_ANY_TENSOR_UTIL"),
    ("tensor_hmma_percent", "NVML_GPM_METRIC_HMMA_TENSOR_UTIL"),
    ("tensor_imma_percent", "NVML_GPM_METRIC_IMMA_TENSOR_UTIL"),
    ("tensor_dfma_percent", "NVML_GPM_METRIC_DFMA_TENSOR_UTIL"),
    ("fp64_percent", "NVML_GPM_METRIC_FP64_UTIL"),
    ("fp32_percent", "NVML_GPM_METRIC_FP32_UTIL"),
    ("fp16_percent", "NVML_GPM_METRIC_FP16_UTIL"),
    ("dram_percent", "NVML_GPM_METRIC_DRAM_BW_UTIL"),
)
MIN_WINDOW_S = 0.1
FIRST_WINDOW = "counting: the first window closes at the next reading"
NOT_HOPPER = "not supported by this GPU (NVML GPM counts on Hopper and newer)"
MIG_ON = "MIG is on: counted per GPU instance"
NO_INSTANCE = "MIG is on and no GPU instance is made"
INSTANCES_PERIOD_S = 60.0  # how often a MIG GPU's instances are listed again


class Target(NamedTuple):
    """A GPU to read: its index, its handle, and whether MIG is on (then each GPU instance is read)."""

    gpu_index: int
    handle: object
    mig: bool = False


class Reading(NamedTuple):
    """The latest window of one GPU: the whole GPU's, each GPU instance's, and why the whole GPU's is missing."""

    activity: Activity | None
    instances: tuple[Activity, ...]
    reason: str | None
    at: float  # when it was read (the watcher's clock)


def support(calls: Calls, handle: object) -> str | None:
    """None where this GPU answers GPM; else why it does not (in the words a GPU's ``unsupported`` keeps)."""
    nvml = calls.lib
    if not hasattr(nvml, "nvmlGpmSampleGet") or not hasattr(nvml, "NVML_GPM_METRICS_GET_VERSION"):
        return "not available: this nvidia-ml-py has no GPM (12.535 or newer has it)"
    unsupported: dict[str, str] = {}
    answer = calls.get(unsupported, "activity", "nvmlGpmQueryDeviceSupport", handle)
    if answer is None:
        reason = unsupported["activity"]
        return NOT_HOPPER if reason == "not supported by this GPU" else reason
    return None if getattr(answer, "isSupportedDevice", 0) else NOT_HOPPER


class _Pair:
    """Two sample buffers of one GPU or GPU instance: the one last filled (and when) and a spare."""

    def __init__(self, nvml: Library):
        self.spare = nvml.nvmlGpmSampleAlloc()
        self.last: object | None = None
        self.last_at = float("-inf")

    def free(self, nvml: Library) -> None:
        for sample in (self.spare, self.last):
            if sample is not None:
                with contextlib.suppress(nvml.NVMLError):
                    nvml.nvmlGpmSampleFree(sample)
        self.last = None


class GpmReader:
    """Takes one sample of a GPU (or GPU instance) and gives the window since its previous one."""

    def __init__(self, calls: Calls, clock: Callable[[], float] = time.monotonic):
        self._calls = calls
        self._clock = clock
        self._pairs: dict[tuple[int, int | None], _Pair] = {}
        nvml = calls.lib
        self._ids = [(name, getattr(nvml, metric)) for name, metric in METRICS if hasattr(nvml, metric)]
        self._missing = {name: f"not available: {metric} is not in this nvidia-ml-py"
                         for name, metric in METRICS if not hasattr(nvml, metric)}

    def read(self, index: int, handle: object, instance: int | None = None) -> tuple[Activity | None, str | None]:
        """Sample now; the window since the last sample of the same GPU (instance), or None and why not."""
        nvml, key = self._calls.lib, (index, instance)
        pair = self._pairs.get(key)
        if pair is None:
            pair = self._pairs[key] = _Pair(nvml)
        if pair.last is not None and self._clock() - pair.last_at < MIN_WINDOW_S:
            return None, None  # too soon after the last sample: that window goes on
        u: dict[str, str] = {}
        if instance is None:
            taken = self._calls.get(u, "activity", "nvmlGpmSampleGet", handle, pair.spare)
        else:
            taken = self._calls.get(u, "activity", "nvmlGpmMigSampleGet", handle, instance, pair.spare)
        now = self._clock()
        if taken is None:  # the next window starts afresh
            if pair.last is not None:
                with contextlib.suppress(nvml.NVMLError):
                    nvml.nvmlGpmSampleFree(pair.last)
            pair.last, pair.last_at = None, float("-inf")
            return None, u["activity"]
        window_s = now - pair.last_at
        previous = pair.last
        pair.spare, pair.last, pair.last_at = previous if previous is not None else nvml.nvmlGpmSampleAlloc(), \
            pair.spare, now
        if previous is None:
            return None, FIRST_WINDOW
        return self._metrics(previous, pair.last, window_s, instance)

    def _metrics(self, first: object, second: object, window_s: float,
                 instance: int | None) -> tuple[Activity | None, str | None]:
        nvml = self._calls.lib
        ask = nvml.c_nvmlGpmMetricsGet_t()
        ask.version = nvml.NVML_GPM_METRICS_GET_VERSION
        ask.numMetrics = len(self._ids)
        ask.sample1, ask.sample2 = first, second
        for i, (_, metric_id) in enumerate(self._ids):
            ask.metrics[i].metricId = metric_id
        u: dict[str, str] = {}
        if self._calls.get(u, "activity", "nvmlGpmMetricsGet", ask) is None:
            return None, u["activity"]
        values: dict[str, float] = {}
        failed = dict(self._missing)
        for i, (name, _) in enumerate(self._ids):
            metric = ask.metrics[i]
            if metric.nvmlReturn:
                failed[name] = f"NVML error {metric.nvmlReturn}"
            else:
                values[name] = max(0.0, min(100.0, float(metric.value)))  # NVML's range: 0.0 - 100.0
        return Activity(window_s=round(window_s, 3), gpu_instance=instance, unsupported=frozen_map(failed),
                        **values), None

    def instances(self, handle: object) -> tuple[int, ...]:
        """The GPU instance IDs of a GPU with MIG on (those of its MIG devices: compute instances share one)."""
        ids: set[int] = set()
        u: dict[str, str] = {}
        for i in range(self._calls.get(u, "activity", "nvmlDeviceGetMaxMigDeviceCount", handle) or 0):
            mig = self._calls.get(u, "activity", "nvmlDeviceGetMigDeviceHandleByIndex", handle, i)
            gi = self._calls.get(u, "activity", "nvmlDeviceGetGpuInstanceId", mig) if mig is not None else None
            if gi is not None:
                ids.add(int(gi))
        return tuple(sorted(ids))

    def forget(self, keep: set[tuple[int, int | None]]) -> None:
        """Free the buffers of the GPUs and GPU instances no longer read."""
        for key in [k for k in self._pairs if k not in keep]:
            self._pairs.pop(key).free(self._calls.lib)

    def free(self) -> None:
        self.forget(set())


class GpmWatcher:
    """The thread that reads GPM for the collector: ``kick`` (each tick; never waits) names the GPUs to read now,
    ``latest`` gives each GPU's last window. Its CPU time is counted (``cpu_s``, ``reads``) for the benchmarks."""

    def __init__(self, calls: Calls, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._reader = GpmReader(calls, clock)
        self._targets: Sequence[Target] = ()
        self._latest: dict[int, Reading] = {}
        self._instances: dict[int, tuple[float, tuple[int, ...]]] = {}  # GPU index -> (listed at, GPU instance IDs)
        self._lock = threading.Lock()
        self._kicked = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.cpu_s = 0.0
        self.reads = 0

    def kick(self, targets: Sequence[Target]) -> None:
        """Read ``targets`` on the thread now (started on the first kick)."""
        self._targets = tuple(targets)
        if self._thread is None:
            self._thread = spawn(self._loop, "fanwhy-gpm")
        self._kicked.set()

    def settled(self, reads: int, timeout_s: float) -> bool:
        """Wait until the thread has done ``reads`` reads in all (tests, benchmarks); False at the deadline."""
        deadline = time.monotonic() + timeout_s
        while self.reads < reads:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        return True

    def latest(self, index: int) -> Reading | None:
        with self._lock:
            return self._latest.get(index)

    def read_now(self, targets: Sequence[Target]) -> None:
        """One read of ``targets`` on the calling thread (what the thread does on each kick)."""
        started = time.thread_time()
        for target in targets:
            reading = self._read(target)
            if reading is not None:
                with self._lock:
                    self._latest[target.gpu_index] = reading
        self._reader.forget({(t.gpu_index, i) for t in targets for i in self._keys(t)})
        self.cpu_s += time.thread_time() - started
        self.reads += 1

    def _read(self, target: Target) -> Reading | None:
        at = self._clock()
        try:
            keys = self._keys(target)
            windows = [self._reader.read(target.gpu_index, target.handle, gi) for gi in keys]
        except GpuFailed as error:  # the tick's own reads say the GPU failed; here the window is lost
            return Reading(None, (), f"GPM read failed: {error}", at)
        if not target.mig:
            return Reading(windows[0][0], (), windows[0][1], at) if windows[0] != (None, None) else None
        if not keys:
            return Reading(None, (), NO_INSTANCE, at)
        if all(a is None and r is None for a, r in windows):
            return None  # too soon after the last read: the last window stands
        counted = tuple(a for a, _ in windows if a is not None)
        return Reading(None, counted, MIG_ON if counted else next(r for _, r in windows if r), at)

    def _keys(self, target: Target) -> tuple[int | None, ...]:
        """What is read of ``target``: the whole GPU (None), or with MIG on each GPU instance (listed every
        ``INSTANCES_PERIOD_S``)."""
        if not target.mig:
            return (None,)
        listed = self._instances.get(target.gpu_index)
        if listed is None or self._clock() - listed[0] >= INSTANCES_PERIOD_S:
            listed = self._instances[target.gpu_index] = (self._clock(), self._reader.instances(target.handle))
        return listed[1]

    def _loop(self) -> None:
        while not self._stopping.is_set():
            self._kicked.wait()
            self._kicked.clear()
            if self._stopping.is_set():
                break
            self.read_now(self._targets)

    def stop(self, timeout_s: float = 2.0) -> None:
        """End the thread (its reads take milliseconds) and free every buffer; NVML may then be shut down."""
        self._stopping.set()
        self._kicked.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            if self._thread.is_alive():
                log.warning("the GPM thread did not end within %.0f s", timeout_s)
                return
        self._reader.free()
