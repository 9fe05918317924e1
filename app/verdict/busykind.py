"""What kind of busy a GPU is, from its own activity counters (``Activity``, NVML GPM): the rules, then the words.

NVML's utilization says a kernel was resident during its sample, not how much of the GPU it used. The thresholds
below rest on NVIDIA's reading of the same counters (DCGM User Guide, Feature Overview, "Profiling Metrics"): an SM
activity of 0.8 or more is necessary but not sufficient for effective use, and under 0.5 likely marks ineffective
use; a high occupancy does not by itself mean better use, so occupancy alone is never flagged; DRAM activity
peaks near 0.8 in practice; a tensor activity of 1.0 is a tensor instruction every other cycle, the pipe's peak.
docs/HOW-IT-WORKS.md gives each threshold with its reason.

GPM counts the GPU (or a MIG GPU instance), not a process: a kind is said of a process only when it is the one
process computing on that GPU; beside several it is said of the GPU.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType

from ..core.activity import Activity, ActivityKind, BusyKind
from ..core.model import GpuSample, ProcessSample

SM_EFFECTIVE = 80.0  # DCGM: necessary (not sufficient) for effective use
SM_INEFFECTIVE = 50.0  # DCGM: under 0.5, likely ineffective use
RESIDENT = 10.0  # NVML utilization from which the GPU is judged at all (kernels resident a tenth of the time)
PIPE_LEADS = 30.0  # a pipe busy this share of the window is the work's own (a third of a pipe's peak, about)
TENSOR_IDLE = 5.0  # the tensor cores counted idle under this
DRAM_BOUND = 50.0  # more than half of the theoretical bandwidth: with its practical peak near 80 %, memory leads
CORE_FULL = 90.0  # a process keeping this much of one CPU core busy feeds its GPU as fast as it can

WORDS: dict[ActivityKind, str] = {
    "tensor": "matrix math on the tensor cores (tensor {tensor:.0f} %, SMs {sm:.0f} % active)",
    "fp32": ("FP32 math on the CUDA cores with the tensor cores idle (FP32 pipe {fp32:.0f} %, tensor {tensor:.0f} %):"
             " a matmul in TF32 or bf16 would run on the tensor cores"),
    "fp64": "FP64 math on the CUDA cores (FP64 pipe {fp64:.0f} %, tensor {tensor:.0f} %)",
    "fp16": ("FP16 math on the CUDA cores with the tensor cores idle (FP16 pipe {fp16:.0f} %, tensor {tensor:.0f} %):"
             " a matmul in fp16 or bf16 would run on the tensor cores"),
    "memory": ("bound by memory bandwidth (DRAM {dram:.0f} % busy, near its practical peak of about 80 %; "
               "the busiest compute pipe {pipe:.0f} %)"),
    "not_computing": ("busy but not computing: kernels resident {util:.0f} % of the time keep {sm:.1f} % of the SMs "
                      "active (small kernels back to back, or the GPU waiting on its host)"),
    "waiting": ("the GPU waits on its host: {who} keeps {cpu:.0f} % of a CPU core busy while {sm:.1f} % of the "
                "SMs are active"),
    "computing": "computing on {sm:.0f} % of the SMs with no one pipe leading (tensor {tensor:.0f} %, FP32 "
                 "{fp32:.0f} %, DRAM {dram:.0f} %)",
}

# The kind in two or three words, where a line has no room for the clause (the terminal's GPU rows).
SHORT: dict[str, str] = {"tensor": "tensor cores", "fp32": "FP32, tensor idle", "fp64": "FP64 pipe",
                         "fp16": "FP16, tensor idle", "memory": "memory-bound", "not_computing": "not computing",
                         "waiting": "waits on its CPU", "computing": "computing"}


def _v(value: float | None) -> float:
    return value or 0.0


def classify(activity: Activity, util: float, feeder_cpu: float | None) -> ActivityKind | None:
    """The kind of busy of one window; ``util``: NVML's utilization; ``feeder_cpu``: the CPU (% of a core) of the
    one process computing on the GPU, None when there is not exactly one. None: not busy enough to judge."""
    sm, tensor, dram = _v(activity.sm_active_percent), _v(activity.tensor_percent), _v(activity.dram_percent)
    pipes = {"fp32": _v(activity.fp32_percent), "fp64": _v(activity.fp64_percent), "fp16": _v(activity.fp16_percent)}
    if util < RESIDENT and sm < RESIDENT:
        return None
    if sm < SM_INEFFECTIVE and feeder_cpu is not None and feeder_cpu >= CORE_FULL:
        return "waiting"
    if sm < SM_INEFFECTIVE and sm < util / 2:
        return "not_computing"
    if dram >= DRAM_BOUND and dram >= max(tensor, *pipes.values()):
        return "memory"
    if tensor >= PIPE_LEADS and tensor >= max(pipes.values()):
        return "tensor"
    leading = max(pipes, key=lambda p: pipes[p])
    if pipes[leading] >= PIPE_LEADS and tensor < TENSOR_IDLE:
        return "fp32" if leading == "fp32" else "fp64" if leading == "fp64" else "fp16"
    return "computing" if sm >= RESIDENT else None


def _computing(gpu: GpuSample, processes: Sequence[ProcessSample]) -> list[ProcessSample]:
    return [p for p in processes for u in p.gpus if u.gpu_index == gpu.index and (u.sm_percent or 0) > 0]


# The figures a kind rests on, as a cause's numbers name them.
NUMBER_NAMES = {"sm": "sm_active_percent", "occupancy": "sm_occupancy_percent", "tensor": "tensor_percent",
                "fp32": "fp32_percent", "fp64": "fp64_percent", "fp16": "fp16_percent", "dram": "dram_percent",
                "pipe": "busiest_pipe_percent", "util": "utilization_percent", "cpu": "feeder_cpu_percent"}


def _judged(gpu: GpuSample, activity: Activity, util: float, sole: ProcessSample | None,
            name: Callable[[ProcessSample], str]) -> BusyKind | None:
    kind = classify(activity, util, sole.cpu_percent if sole is not None else None)
    if kind is None:
        return None
    figures = {"sm": _v(activity.sm_active_percent), "occupancy": _v(activity.sm_occupancy_percent),
               "tensor": _v(activity.tensor_percent), "fp32": _v(activity.fp32_percent),
               "fp64": _v(activity.fp64_percent), "fp16": _v(activity.fp16_percent),
               "dram": _v(activity.dram_percent), "util": util,
               "cpu": _v(sole.cpu_percent) if sole is not None else 0.0}
    figures["pipe"] = max(figures["tensor"], figures["fp32"], figures["fp64"], figures["fp16"])
    who = name(sole) if kind == "waiting" and sole is not None else "its process"  # only "waiting" names it
    numbers: dict[str, float | str | None] = {NUMBER_NAMES[k]: v for k, v in figures.items()}
    numbers["activity_kind"] = kind
    return BusyKind(gpu_index=gpu.index, kind=kind, words=WORDS[kind].format(who=who, **figures),
                    pid=sole.pid if sole is not None else None, gpu_instance=activity.gpu_instance,
                    numbers=MappingProxyType(numbers))


def busy_kinds(gpu: GpuSample, processes: Sequence[ProcessSample],
               name: Callable[[ProcessSample], str] = lambda p: f"PID {p.pid}") -> list[BusyKind]:
    """The kind of busy of ``gpu`` (or, with MIG on, of each GPU instance), with the one process computing on it
    where there is exactly one (``name`` says it in the words); empty without a window, or where nothing is busy
    enough to judge. A GPU instance is judged on its SM activity alone (NVML has no utilization under MIG) and
    without a process: the per-process samples do not say which instance a process computes on."""
    if gpu.error is not None:
        return []
    if gpu.activity is not None:
        computing = _computing(gpu, processes)
        sole = computing[0] if len(computing) == 1 else None
        judged = _judged(gpu, gpu.activity, _v(gpu.utilization_percent), sole, name)
        return [judged] if judged is not None else []
    kinds = (_judged(gpu, a, _v(a.sm_active_percent), None, name) for a in gpu.activity_instances)
    return [k for k in kinds if k is not None]
