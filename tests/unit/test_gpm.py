"""The GPU's activity counters (NVML GPM) in the NVIDIA backend, on the fake NVML shaped from one H200
(tests/fixtures/nvml/h200-gpm.json; fakes only: the real card is read by tests/gpu/test_gpm_card.py)."""

from __future__ import annotations

import threading
from typing import Any

import pynvml
import pytest

from app.core.model import GpuSample
from app.vendors.nvidia import LATE, NvidiaBackend
from app.vendors.nvml_calls import nvml_calls
from app.vendors.nvml_gpm import FIRST_WINDOW, MIG_ON, NOT_HOPPER, GpmReader
from tests.fakes.fake_gpm import h200_load
from tests.fakes.fake_nvml import FakeNvml, load_dump

DEADLINE_S = 30.0  # a loaded 2-core machine


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def h200(load: str = "bf16_matmul", **cells: Any) -> dict[str, Any]:
    table = load_dump("h200x2-load")[1]
    table.update({"gpm_support": True, "gpm": h200_load(load), **cells})
    return table


def ticks(backend: NvidiaBackend, clock: Clock, n: int) -> list[GpuSample]:
    """``n`` ticks 1 s apart, each after the GPM thread read what the one before asked."""
    samples: list[GpuSample] = []
    for _ in range(n):
        gpm = backend.gpm
        done = gpm.reads if gpm is not None else 0
        samples = backend.sample()
        if gpm is not None:
            assert gpm.settled(done + 1, DEADLINE_S)
        clock.now += 1.0
    return samples


def opened(*tables: dict[str, Any]) -> tuple[NvidiaBackend, FakeNvml, Clock]:
    fake, clock = FakeNvml(list(tables)), Clock()
    backend = NvidiaBackend(nvml=fake, clock=clock, watch_xid=False)
    backend.open()
    return backend, fake, clock


def test_a_window_between_two_samples_gives_the_card_s_figures() -> None:
    backend, fake, clock = opened(h200("bf16_matmul"))
    first = ticks(backend, clock, 1)[0]
    assert first.activity is None and first.unsupported["activity"] == FIRST_WINDOW
    gpu = ticks(backend, clock, 2)[0]
    assert gpu.activity is not None and "activity" not in gpu.unsupported
    assert gpu.activity.tensor_percent == pytest.approx(89.57)
    assert gpu.activity.tensor_hmma_percent == pytest.approx(89.57)
    assert gpu.activity.sm_active_percent == pytest.approx(92.29)
    assert gpu.activity.sm_occupancy_percent == pytest.approx(13.64)
    assert gpu.activity.dram_percent == pytest.approx(15.73)
    assert gpu.activity.fp32_percent == 0.0 and gpu.activity.window_s == pytest.approx(1.0)
    backend.close()
    assert fake.gpm_live == 0, "every GPM sample buffer is freed before NVML goes"


def test_the_load_changing_shows_in_the_next_window() -> None:
    backend, fake, clock = opened(h200("fp32_matmul"))
    gpu = ticks(backend, clock, 3)[0]
    assert gpu.activity is not None and gpu.activity.fp32_percent == pytest.approx(75.66)
    fake.set(0, "gpm", h200_load("d2d_copy"))
    gpu = ticks(backend, clock, 2)[0]
    assert gpu.activity is not None and gpu.activity.dram_percent == pytest.approx(84.93)
    assert gpu.activity.fp32_percent == 0.0
    backend.close()


@pytest.mark.parametrize(("cell", "reason"), [
    (False, NOT_HOPPER),  # an Ampere card answers "not a supported device"
    (pynvml.NVMLError_NotSupported(), NOT_HOPPER),
    (pynvml.NVMLError_NoPermission(), "no permission"),
])
def test_a_gpu_without_gpm_says_why_and_no_thread_starts(cell: Any, reason: str) -> None:
    backend, fake, clock = opened(h200(gpm_support=cell))
    gpu = ticks(backend, clock, 3)[0]
    assert gpu.activity is None and gpu.unsupported["activity"] == reason
    assert backend.gpm is None
    assert fake.calls["gpm_metrics"] == 0
    backend.close()


def test_a_driver_that_refuses_the_sample_gives_its_reason_not_zeros() -> None:
    backend, fake, clock = opened(h200(gpm=pynvml.NVMLError_NoPermission()))
    gpu = ticks(backend, clock, 3)[0]
    assert gpu.activity is None and gpu.unsupported["activity"] == "no permission"
    assert gpu.utilization_percent is not None, "the rest of the GPU's row stands"
    backend.close()
    assert fake.gpm_live == 0


def test_one_metric_the_card_does_not_count_is_none_with_its_reason() -> None:
    load = h200_load("bf16_matmul")
    del load["FP64_UTIL"]
    backend, _, clock = opened(h200(gpm=load))
    gpu = ticks(backend, clock, 3)[0]
    assert gpu.activity is not None and gpu.activity.fp64_percent is None
    assert "fp64_percent" in gpu.activity.unsupported and gpu.activity.tensor_percent == pytest.approx(89.57)
    backend.close()


def test_two_samples_are_never_closer_than_100_ms() -> None:
    fake, clock = FakeNvml([h200()]), Clock()
    fake.nvmlInit()
    reader = GpmReader(nvml_calls(fake), clock)
    assert reader.read(0, 0) == (None, FIRST_WINDOW)
    clock.now += 0.05
    assert reader.read(0, 0) == (None, None), "50 ms after the last sample: no window, no sample taken"
    assert fake.calls["gpm"] == 1
    clock.now += 0.06
    activity, reason = reader.read(0, 0)
    assert reason is None and activity is not None and activity.window_s == pytest.approx(0.11)
    reader.free()
    assert fake.gpm_live == 0


def test_with_mig_on_each_gpu_instance_is_counted() -> None:
    load = h200_load("bf16_matmul")
    backend, fake, clock = opened(h200(mig_mode=[1, 1], mig_instances=[1, 2], gpm=pynvml.NVMLError_NotSupported(),
                                       gpm_mig_1=load, gpm_mig_2=h200_load("idle")))
    gpu = ticks(backend, clock, 3)[0]
    assert gpu.mig_mode is True and gpu.activity is None and gpu.unsupported["activity"] == MIG_ON
    assert [a.gpu_instance for a in gpu.activity_instances] == [1, 2]
    assert gpu.activity_instances[0].tensor_percent == pytest.approx(89.57)
    assert gpu.activity_instances[1].sm_active_percent == 0.0
    backend.close()
    assert fake.gpm_live == 0


def test_the_tick_never_waits_for_a_gpm_call() -> None:
    """A sample call that hangs holds the GPM thread, not the collector: ticks go on, and say the window is late."""
    release, entered = threading.Event(), threading.Event()
    load = h200_load("bf16_matmul")

    def hanging() -> dict[str, float]:
        entered.set()
        release.wait(DEADLINE_S)
        return load

    backend, fake, clock = opened(h200())
    ticks(backend, clock, 3)
    fake.set(0, "gpm", hanging)
    backend.sample()  # kicks the thread into the hanging call
    assert entered.wait(DEADLINE_S)
    clock.now += 1.0
    backend.sample()  # returns while the GPM thread is stuck: it never waited for it
    clock.now += 1.0
    late = backend.sample()[0]
    assert late.activity is None and late.unsupported["activity"] == LATE
    assert late.utilization_percent is not None
    release.set()
    backend.close()


def test_a_resting_gpu_is_not_read_by_gpm_either_and_says_so(tmp_path: Any) -> None:
    """An idle GPU under runtime PM "auto" rests (read every 30 s so that it can suspend): GPM takes no sample of it
    between its reads, and its row says why there is no window, not that the thread is late."""
    from app.vendors.nvidia import RESTING_GPM
    from app.vendors.nvml_gpu import REST_AFTER_TICKS
    from tests.unit.test_asleep import power_state

    table = h200("idle", utilization={"gpu": 0, "memory": 0}, compute_processes=[], graphics_processes=[],
                 process_utilization=[])
    bus = table["pci"]["busIdLegacy"]  # as sysfs names it
    power_state(tmp_path, bus, "active")
    (tmp_path / "bus" / "pci" / "devices" / bus / "power" / "control").write_text("auto\n")
    fake, clock = FakeNvml([table]), Clock()
    backend = NvidiaBackend(nvml=fake, clock=clock, watch_xid=False, sys_root=str(tmp_path))
    backend.open()
    for _ in range(REST_AFTER_TICKS + 2):
        gpu = ticks(backend, clock, 1)[0]
        backend.processes()
    samples = fake.calls["gpm"]
    gpu = backend.sample()[0]
    assert gpu.unsupported.get("resting") and gpu.unsupported["activity"] == RESTING_GPM
    clock.now += 1.0
    backend.sample()
    assert fake.calls["gpm"] == samples, "no GPM sample of a resting GPU"
    backend.close()
