"""NVML GPM for the fake NVML (tests/fakes/fake_nvml.py), shaped from what one H200 answered
(tests/fixtures/nvml/h200-gpm.json: the card, driver and date are in the file).

A GPU's table says what GPM does there: ``gpm_support`` (True, False, or an NVML exception) and ``gpm`` (the load
running now: NVML metric name -> percent, e.g. ``{"SM_UTIL": 95.8, ...}``, or an exception that every sample call
raises). A sample records the load at the time it is taken; ``nvmlGpmMetricsGet`` answers the second sample's load
for each metric asked (NotSupported for a metric the load leaves out), as a steady load over the window would.
With MIG on, ``mig_instances`` lists the GPU instance IDs and ``gpm_mig_<id>`` each instance's load."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pynvml

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "nvml" / "h200-gpm.json"


def h200_load(name: str) -> dict[str, float]:
    """The GPM metrics one H200 gave for ``name`` (idle, fp32_matmul, bf16_matmul, tiny_kernels, d2d_copy, ...)."""
    return dict(json.loads(FIXTURE.read_text())["loads"][name]["gpm"])


def h200_card(name: str) -> dict[str, Any]:
    """Everything recorded of the H200 under load ``name``: utilization, power, a process's SM share, GPM."""
    return dict(json.loads(FIXTURE.read_text())["loads"][name])


class MetricsGet:
    """Stands in for ``c_nvmlGpmMetricsGet_t``: the request and, after the call, each metric's answer."""

    def __init__(self) -> None:
        self.version = 0
        self.numMetrics = 0
        self.sample1: Any = None
        self.sample2: Any = None
        self.metrics = [SimpleNamespace(metricId=0, nvmlReturn=0, value=0.0) for _ in range(pynvml.NVML_GPM_METRIC_MAX)]


_NAMES = {getattr(pynvml, n): n.removeprefix("NVML_GPM_METRIC_") for n in dir(pynvml)
          if n.startswith("NVML_GPM_METRIC_") and n != "NVML_GPM_METRIC_MAX"}


class GpmFake:
    """The GPM calls; mixed into FakeNvml (which gives ``_cell``, ``tables`` and ``calls``)."""

    tables: list[dict[str, Any]]
    calls: Any
    gpm_live = 0  # sample buffers allocated and not freed

    def _cell(self, handle: int, key: str, *args: Any) -> Any:
        raise NotImplementedError

    c_nvmlGpmMetricsGet_t = MetricsGet

    def nvmlGpmQueryDeviceSupport(self, h: int) -> SimpleNamespace:
        return SimpleNamespace(version=1, isSupportedDevice=int(bool(self._cell(h, "gpm_support"))))

    def nvmlGpmSampleAlloc(self) -> SimpleNamespace:
        self.gpm_live += 1
        return SimpleNamespace(load=None, freed=False)

    def nvmlGpmSampleFree(self, sample: SimpleNamespace) -> None:
        assert not sample.freed, "a GPM sample freed twice"
        sample.freed = True
        self.gpm_live -= 1

    def nvmlGpmSampleGet(self, h: int, sample: SimpleNamespace) -> SimpleNamespace:
        assert not sample.freed, "a freed GPM sample was filled"
        sample.load = copy.deepcopy(self._cell(h, "gpm"))
        return sample

    def nvmlGpmMigSampleGet(self, h: int, gpu_instance: int, sample: SimpleNamespace) -> SimpleNamespace:
        assert not sample.freed, "a freed GPM sample was filled"
        sample.load = copy.deepcopy(self._cell(h, f"gpm_mig_{gpu_instance}"))
        return sample

    def nvmlGpmMetricsGet(self, ask: MetricsGet) -> MetricsGet:
        self.calls["gpm_metrics"] += 1
        if ask.version != pynvml.NVML_GPM_METRICS_GET_VERSION:
            raise pynvml.NVMLError_InvalidArgument()
        assert ask.sample1 is not ask.sample2 and ask.sample1.load is not None and ask.sample2.load is not None
        for metric in ask.metrics[:ask.numMetrics]:
            value = ask.sample2.load.get(_NAMES.get(metric.metricId, ""))
            metric.nvmlReturn, metric.value = (pynvml.NVML_ERROR_NOT_SUPPORTED, 0.0) if value is None else (0, value)
        return ask

    def nvmlDeviceGetMaxMigDeviceCount(self, h: int) -> int:
        return len(self._cell(h, "mig_instances"))

    def nvmlDeviceGetMigDeviceHandleByIndex(self, h: int, i: int) -> tuple[int, int]:
        return (h, self._cell(h, "mig_instances")[i])

    def nvmlDeviceGetGpuInstanceId(self, mig: tuple[int, int]) -> int:
        return mig[1]
