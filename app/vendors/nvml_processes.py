"""The processes on NVIDIA GPUs: the compute and graphics lists (read again when a GPU's used memory changes, and
at least every ``list_period_s``) and per-process utilization (the one costly call: the
busy GPUs take turns for it, an idle GPU is never asked). Every call goes through ``Calls``."""

from __future__ import annotations

from typing import Callable

from ..core.model import GpuProcessUsage, UsageKind
from .nvml_calls import Calls, GpuFailed, nvml_calls
from .nvml_gpu import GpuState, UtilSample, num

# The process lists (compute and graphics) are read again when the GPU's used
# memory changed since the last list (a process that starts, ends or grows changes it) and at least this often.
LIST_PERIOD_S = 5.0


class ProcessReader:
    """Reads the processes of every GPU each tick; keeps whose turn it is for per-process utilization."""

    def __init__(self, clock: Callable[[], float], wall_clock: Callable[[], float], util_window_s: float,
                 process_util_period_s: float, process_util_spacing_s: float, lone_util_period_s: float,
                 list_period_s: float):
        self._clock = clock
        self._wall = wall_clock
        self._util_window_s = util_window_s
        self._process_util_period_s = process_util_period_s
        self._process_util_spacing_s = process_util_spacing_s
        self._lone_util_period_s = lone_util_period_s
        self._list_period_s = list_period_s
        self._util_slot_at = float("-inf")
        self._util_turn: GpuState | None = None
        self._calls = nvml_calls(None)  # the backend's, set by read

    def read(self, calls: Calls, gpus: list[GpuState]) -> tuple[list[GpuProcessUsage], bool]:
        """Every usable GPU's processes, and whether a GPU failed meanwhile (NVML is then to be re-initialised)."""
        self._calls = calls
        self._util_turn = self._next_util_turn(gpus)
        usages: list[GpuProcessUsage] = []
        failed = False
        for gpu in gpus:
            if gpu.error is not None or gpu.handle is None or gpu.asleep or gpu.cached:
                continue
            try:
                found = self._gpu_processes(gpu)
                gpu.has_processes = bool(found)
                usages.extend(found)
            except GpuFailed as error:
                gpu.error = str(error)
                failed = True
        return usages, failed

    def _gpu_processes(self, gpu: GpuState) -> list[GpuProcessUsage]:
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
                sm_percent=num(sample.smUtil) if sample is not None else idle,
                encoder_percent=num(sample.encUtil) if sample is not None else idle,
                decoder_percent=num(sample.decUtil) if sample is not None else idle,
                kind=kinds.get(pid, "utilization-only"),
            ))
        return usages

    def _listed(self, gpu: GpuState) -> tuple[dict[int, int | None], dict[int, UsageKind]]:
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

    def _next_util_turn(self, gpus: list[GpuState]) -> GpuState | None:
        """The busy GPU whose per-process utilization is refreshed on the period this tick: the one read
        longest ago among those due, and none if another was refreshed less than ``spacing`` ago."""
        now = self._clock()
        if now < self._util_slot_at:
            return None
        due = [g for g in gpus if g.error is None and g.handle is not None and not g.idle
               and now - g.util_at >= self._util_period(g)]
        if not due:
            return None
        self._util_slot_at = now + self._process_util_spacing_s
        return min(due, key=lambda g: g.util_at)

    def _util_period(self, gpu: GpuState) -> float:
        """How often a busy GPU's per-process utilization is refreshed when its processes stay: a GPU with one
        process, whose last samples named no one else, every ``lone_util_period_s`` (its share of the GPU's power
        is all of it whatever its SM % says; a second process, or one NVML shows only in its samples, changes the
        list or the samples, and is read at once or at the next turn); others every ``process_util_period_s``."""
        lone = len(gpu.util_pids) == 1 and set(gpu.util_cache[0]) <= gpu.util_pids
        return self._lone_util_period_s if lone else self._process_util_period_s

    def _process_utilization(self, gpu: GpuState, listed: frozenset[int]) -> tuple[dict[int, UtilSample], bool]:
        """The newest per-process utilization sample per PID.

        The call costs far more than any other per-tick call (``benchmarks/nvml_calls.py``). It runs at once when a
        GPU's processes change, or when it wakes from idle (at most once a period); otherwise every
        ``process_util_period_s`` per busy GPU, but never more than once per ``process_util_spacing_s`` in all: the GPUs
        take turns, the one read longest ago first. So busy GPUs whose processes stay cost at most one call a second
        however many there are; in between, the last samples stand. NVML raises NotFound when no process ran in the
        window: everyone is at 0 %, which is a value. NotSupported means nobody's share is known: None. On a GPU whose
        utilization reads 0 % the call is skipped: everyone is at 0 % (an idle GPU answers NotFound, and slowly), so
        idle GPUs cost nothing here.
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

    def _read_process_utilization(self, gpu: GpuState) -> tuple[dict[int, UtilSample], bool]:
        nvml = self._calls.lib
        # the whole window every time: NVML answers each process's newest sample after ``since``, and with two
        # processes time-slicing one GPU their newest samples differ; asking only for what came after the newest of
        # all (as this did) dropped the other one, which then read 0 %
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
