"""The GPUs' activity counters (NVML GPM) as Prometheus ratios (0-1), named after what they measure, with the DCGM
profiling field each stands for (dcgm-exporter's ``DCGM_FI_PROF_*``: same counters, same meaning), and the kind of
busy the verdict judged. A GPU whose counters are not read has no sample (never 0); with MIG on, each GPU instance
is a series of its own (``gpu_instance``; "" for the whole GPU)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

from ..core.activity import Activity
from ..core.snapshot import Snapshot

LABELS = ["gpu", "uuid", "name", "gpu_instance"]

# (metric, help, Activity's field, extra label and its value, the DCGM field it stands for)
ACTIVITY_GAUGES: tuple[tuple[str, str, str, tuple[str, str] | None, str], ...] = (
    ("fanwhy_gpu_sm_active_ratio", "Share of the window the SMs had a warp resident, averaged over the SMs",
     "sm_active_percent", None, "DCGM_FI_PROF_SM_ACTIVE"),
    ("fanwhy_gpu_sm_occupancy_ratio", "Resident warps against the SMs' maximum, averaged over the window",
     "sm_occupancy_percent", None, "DCGM_FI_PROF_SM_OCCUPANCY"),
    ("fanwhy_gpu_tensor_active_ratio", "Share of the window the tensor cores were issuing any tensor instruction",
     "tensor_percent", None, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"),
    ("fanwhy_gpu_tensor_kind_active_ratio", "Share of the window the tensor cores ran this kind of matrix instruction",
     "tensor_hmma_percent", ("kind", "hmma"), "DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE"),
    ("fanwhy_gpu_tensor_kind_active_ratio", "", "tensor_imma_percent", ("kind", "imma"),
     "DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE"),
    ("fanwhy_gpu_tensor_kind_active_ratio", "", "tensor_dfma_percent", ("kind", "dfma"),
     "DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE"),
    ("fanwhy_gpu_pipe_active_ratio", "Share of the window this non-tensor pipe was active",
     "fp64_percent", ("pipe", "fp64"), "DCGM_FI_PROF_PIPE_FP64_ACTIVE"),
    ("fanwhy_gpu_pipe_active_ratio", "", "fp32_percent", ("pipe", "fp32"), "DCGM_FI_PROF_PIPE_FP32_ACTIVE"),
    ("fanwhy_gpu_pipe_active_ratio", "", "fp16_percent", ("pipe", "fp16"), "DCGM_FI_PROF_PIPE_FP16_ACTIVE"),
    ("fanwhy_gpu_dram_active_ratio", "DRAM bandwidth used against its theoretical maximum over the window",
     "dram_percent", None, "DCGM_FI_PROF_DRAM_ACTIVE"),
)


def activity_families(snap: Snapshot) -> Iterator[Metric]:
    """One family per metric name, a series per GPU (or GPU instance) and extra label."""
    families: dict[str, GaugeMetricFamily] = {}
    for name, doc, _, extra, _ in ACTIVITY_GAUGES:
        if name not in families:
            families[name] = GaugeMetricFamily(name, doc, labels=[*LABELS, *([extra[0]] if extra else [])])
    kind = GaugeMetricFamily("fanwhy_gpu_busy_kind", "1 for what kind of busy the GPU is (tensor, fp32, fp64, fp16, "
                             "memory, not_computing, waiting, computing), judged from its activity counters",
                             labels=[*LABELS, "kind"])
    for gpu in snap.gpus:
        if gpu.error is not None:
            continue
        windows: tuple[Activity, ...] = (gpu.activity,) if gpu.activity is not None else gpu.activity_instances
        for window in windows:
            labels = [str(gpu.index), gpu.uuid or "", gpu.name or "",
                      "" if window.gpu_instance is None else str(window.gpu_instance)]
            for name, _, field, extra, _ in ACTIVITY_GAUGES:
                value = getattr(window, field)
                if value is not None:
                    families[name].add_metric([*labels, *([extra[1]] if extra else [])], value / 100.0)
    for judged in snap.verdict.busy_kinds if snap.verdict is not None else ():
        owner = snap.gpu(judged.gpu_index)
        if owner is not None:
            instance = "" if judged.gpu_instance is None else str(judged.gpu_instance)
            kind.add_metric([str(owner.index), owner.uuid or "", owner.name or "", instance, judged.kind], 1.0)
    yield from families.values()
    yield kind
