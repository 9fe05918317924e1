"""What kind of busy, in the verdict: each load one H200 ran, as its counters read it
(tests/fixtures/nvml/h200-gpm.json; the card itself is read by tests/gpu/test_gpm_card.py), classified as NVIDIA's
reading of those counters says."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.activity import Activity
from app.core.model import GpuSample
from app.verdict.busykind import busy_kinds, classify
from app.verdict.explain import explain
from tests.fakes.fake_gpm import h200_card
from tests.support.builders import gpu, proc, snap

FIELDS = {"sm_active_percent": "SM_UTIL", "sm_occupancy_percent": "SM_OCCUPANCY", "tensor_percent": "ANY_TENSOR_UTIL",
          "tensor_hmma_percent": "HMMA_TENSOR_UTIL", "tensor_imma_percent": "IMMA_TENSOR_UTIL",
          "tensor_dfma_percent": "DFMA_TENSOR_UTIL", "fp64_percent": "FP64_UTIL", "fp32_percent": "FP32_UTIL",
          "fp16_percent": "FP16_UTIL", "dram_percent": "DRAM_BW_UTIL"}


def activity(values: dict[str, float], **changes: float) -> Activity:
    read: dict[str, Any] = {name: values[metric] for name, metric in FIELDS.items() if metric in values}
    return Activity(window_s=1.0, **{**read, **changes})


def h200_under(load: str, **kw: Any) -> GpuSample:
    card = h200_card(load)
    return gpu(util=card["utilization_gpu"], temp=45, power=card["power_w"], limit=700, fan=None,
               activity=activity(card["gpm"]), **kw)


def one_job(load: str, cpu: float = 20.0) -> tuple[GpuSample, Any]:
    card = h200_card(load)
    return h200_under(load), proc(4242, f"python3 {load}.py", sm=card.get("process_sm_percent", 0), cpu=cpu)


@pytest.mark.parametrize(("load", "kind"), [
    ("fp32_matmul", "fp32"), ("tf32_matmul", "tensor"), ("bf16_matmul", "tensor"), ("d2d_copy", "memory"),
    ("tiny_kernels", "not_computing"),
])
def test_each_load_the_card_ran_is_its_kind(load: str, kind: str) -> None:
    card, job = one_job(load)
    (judged,) = busy_kinds(card, [job])
    assert judged.kind == kind and judged.pid == 4242


def test_an_idle_card_is_not_judged() -> None:
    card, _ = one_job("idle")
    assert busy_kinds(card, []) == []


def test_an_fp32_matmul_is_told_of_tf32_and_bf16() -> None:
    card, job = one_job("fp32_matmul")
    verdict = explain(snap([card], [job]))
    assert verdict.causes[0].kind == "gpu_load" and verdict.causes[0].numbers["activity_kind"] == "fp32"
    assert "because `python3 fp32_matmul.py` (alice) keeps 95 % of its SMs busy: FP32 math on the CUDA cores with " \
           "the tensor cores idle (FP32 pipe 76 %, tensor 0 %): a matmul in TF32 or bf16 would run on the tensor " \
           "cores" in verdict.headline
    assert verdict.busy_kinds[0].kind == "fp32"


def test_a_bf16_matmul_is_tensor_work_and_gets_no_advice() -> None:
    card, job = one_job("bf16_matmul")
    verdict = explain(snap([card], [job]))
    assert "matrix math on the tensor cores (tensor 90 %, SMs 92 % active)" in verdict.headline
    assert "TF32" not in verdict.headline


def test_a_copy_is_memory_bound() -> None:
    card, job = one_job("d2d_copy")
    verdict = explain(snap([card], [job]))
    assert "bound by memory bandwidth (DRAM 85 % busy" in verdict.headline


def test_a_job_that_keeps_its_core_full_while_the_gpu_idles_is_cpu_bound() -> None:
    card, job = one_job("tiny_kernels", cpu=h200_card("tiny_kernels")["process_cpu_percent"])
    (judged,) = busy_kinds(card, [job])
    assert judged.kind == "waiting"
    verdict = explain(snap([card], [job], cores=16))
    cpu = next(c for c in verdict.causes if c.kind == "cpu_load")
    assert cpu.pid == 4242 and "GPU 0 waits on it (0.0 % of its SMs active)" in cpu.summary
    assert verdict.headline.startswith("No GPU is busy: ") and "waits on it" in verdict.headline


def test_several_processes_share_the_gpu_s_kind_not_one_of_them() -> None:
    card = h200_under("fp32_matmul")
    jobs = [proc(1, "python3 a.py", sm=60), proc(2, "python3 b.py", user="bob", sm=35)]
    (judged,) = busy_kinds(card, jobs)
    assert judged.pid is None
    headline = explain(snap([card], jobs)).headline
    assert "; the GPU as a whole (its counters do not split by process): FP32 math" in headline


@pytest.mark.parametrize("occupancy", [0.5, 3.0, 12.0])
def test_low_occupancy_alone_is_never_flagged(occupancy: float) -> None:
    """DCGM: a high occupancy does not by itself mean better use; the bf16 matmul runs at 14 %."""
    values = h200_card("bf16_matmul")["gpm"]
    assert classify(activity(values, sm_occupancy_percent=occupancy), 97, None) == "tensor"


@pytest.mark.parametrize(("sm", "util", "kind"), [
    (49.0, 99.0, "not_computing"),  # DCGM: under 0.5 likely ineffective
    (51.0, 99.0, "computing"),
    (45.0, 50.0, "computing"),  # the SMs keep up with the time kernels are resident: a part-time job, not idle SMs
])
def test_sm_activity_against_the_time_kernels_are_resident(sm: float, util: float, kind: str) -> None:
    assert classify(Activity(window_s=1.0, sm_active_percent=sm, sm_occupancy_percent=20.0, tensor_percent=0.0,
                             fp32_percent=10.0, dram_percent=5.0), util, None) == kind


def test_without_counters_the_verdict_says_what_it_said_before() -> None:
    card, job = one_job("fp32_matmul")
    bare = GpuSample(**{**card.__dict__, "activity": None})
    verdict = explain(snap([bare], [job]))
    assert verdict.busy_kinds == () and "FP32" not in verdict.headline
