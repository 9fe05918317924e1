"""What kind of busy a GPU is: what its own performance monitor counted (``Activity``, NVML GPM, read by
app/vendors/nvml_gpm.py) and what the verdict makes of it (``BusyKind``, app/verdict/busykind.py).

NVML's utilization says only that a kernel was resident during its sample; GPM counts, over a window between two
samples, the share of SMs busy, how full they were with warps, and how much of the time each pipe (tensor cores,
FP64, FP32, FP16) and DRAM were working. Values are percent (0-100) of the window, as NVML gives them; Prometheus
exports them as ratios."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Literal

from .record import record

_NONE: Mapping[str, str] = MappingProxyType({})
_NO_NUMBERS: Mapping[str, float | str | None] = MappingProxyType({})

# The pipes and counters read, in the order the page, the terminal and the metrics show them.
ACTIVITY_FIELDS = ("sm_active_percent", "sm_occupancy_percent", "tensor_percent", "fp64_percent", "fp32_percent",
                   "fp16_percent", "dram_percent")
TENSOR_KINDS = ("tensor_hmma_percent", "tensor_imma_percent", "tensor_dfma_percent")

# tensor: the tensor cores do most of the work; fp32/fp64/fp16: the CUDA cores' pipe of that precision with the tensor
# cores idle; memory: DRAM bandwidth is the busiest part; not_computing: kernels resident but few SMs busy; computing:
# busy SMs and none of the above leads; waiting: its one process keeps a CPU core busy while the SMs idle.
ActivityKind = Literal["tensor", "fp32", "fp64", "fp16", "memory", "not_computing", "computing", "waiting"]


@record
class Activity:
    """One window of a GPU's (or a MIG GPU instance's) activity counters: the share of ``window_s`` each was
    active, in percent; None where that counter was not read (``unsupported`` says why)."""

    window_s: float
    sm_active_percent: float | None = None  # SMs with at least one warp resident (NVML_GPM_METRIC_SM_UTIL)
    sm_occupancy_percent: float | None = None  # resident warps against the SMs' maximum
    tensor_percent: float | None = None  # any tensor-core instruction
    tensor_hmma_percent: float | None = None  # half/bf16/TF32 matrix (HMMA)
    tensor_imma_percent: float | None = None  # integer matrix (IMMA)
    tensor_dfma_percent: float | None = None  # FP64 matrix (DFMA)
    fp64_percent: float | None = None  # the non-tensor FP64 pipe
    fp32_percent: float | None = None  # the non-tensor FP32 pipe
    fp16_percent: float | None = None  # the non-tensor FP16 pipe
    dram_percent: float | None = None  # DRAM bandwidth used against its theoretical maximum
    gpu_instance: int | None = None  # the MIG GPU instance it counts; None: the whole GPU
    unsupported: Mapping[str, str] = field(default_factory=lambda: _NONE)


@record
class BusyKind:
    """What kind of busy one GPU (or MIG GPU instance) is, judged from its ``Activity`` (app/verdict/busykind.py):
    the kind, the clause that says it, the one process it is about when only one computes on the GPU (GPM counts
    the GPU, not a process), and the figures it rests on."""

    gpu_index: int
    kind: ActivityKind
    words: str
    pid: int | None = None
    gpu_instance: int | None = None
    numbers: Mapping[str, float | str | None] = field(default_factory=lambda: _NO_NUMBERS)
