"""Power and energy by SM share (app/collect/energy.py) at its edges: the time step, the SM total, rounding, a GPU
without a power reading or in error, processes on several GPUs, containers and what nobody's share covers. Written
against the mutants `make mutation` found alive."""

from __future__ import annotations

import pytest

from app.collect.energy import EnergyMeter, power_shares
from app.core.model import ContainerRef, ContainerSample, GpuSample, ProcessGpu, ProcessSample, Unattributed


def gpu(index: int, power: float | None = 300.0, error: str | None = None) -> GpuSample:
    return GpuSample(vendor="nvidia", index=index, power_w=power, error=error)


def proc(pid: int, *uses: tuple[int, float | None]) -> ProcessSample:
    gpus = tuple(ProcessGpu(gpu_index=i, memory_bytes=1, sm_percent=sm, encoder_percent=0, decoder_percent=0,
                            kind="compute") for i, sm in uses)
    return ProcessSample(pid=pid, name="p", user="u", command=None, start_time=float(pid), cpu_percent=1.0,
                         rss_bytes=1, gpus=gpus)


def box(cid: str, *pids: int) -> ContainerSample:
    return ContainerSample(container=ContainerRef(runtime="docker", id=cid * 64, name=cid), gpu_access=True,
                           pids=pids, gpu_indices=(0,), gpu_memory_bytes=1, memory_method="reported",
                           sm_percent=None, cpu_percent=None)


def test_shares_follow_sm_and_are_scaled_down_only_past_100_percent() -> None:
    assert power_shares({0: 100.0}, [proc(1, (0, 60.0)), proc(2, (0, 40.0))]) == {0: {1: 0.6, 2: 0.4}}
    over = power_shares({0: 100.0}, [proc(1, (0, 90.0)), proc(2, (0, 60.0))])
    assert over[0][1] == pytest.approx(0.6) and over[0][2] == pytest.approx(0.4)
    assert power_shares({0: 100.0}, [proc(1, (0, None)), proc(2, (1, 50.0))]) == {}  # unknown SM; another GPU


def test_power_energy_and_rounding_over_ticks() -> None:
    meter = EnergyMeter(max_gap_s=10.0)
    gpus = [gpu(0, 333.333), gpu(1, 100.0)]
    both = proc(1, (0, 50.0), (1, 100.0))
    first, _, _ = meter.apply(1000.0, gpus, [both], [], [])
    assert first[0].power_w == round(333.333 * 0.5 + 100.0, 2) and first[0].energy_wh == 0.0  # no step yet
    second, _, _ = meter.apply(1003.6, gpus, [both], [], [])
    watts = 333.333 * 0.5 + 100.0
    assert second[0].energy_wh == round(watts * 3.6 / 3600.0, 4)
    gap, _, _ = meter.apply(1013.6, gpus, [both], [], [])  # exactly max_gap_s: still counted
    assert gap[0].energy_wh == round(watts * 13.6 / 3600.0, 4)
    stalled, _, _ = meter.apply(1023.7, gpus, [both], [], [])  # a longer gap invents no energy
    assert stalled[0].energy_wh == gap[0].energy_wh


def test_a_gpu_without_power_or_in_error_gives_no_share() -> None:
    meter = EnergyMeter()
    rows, _, rest = meter.apply(1.0, [gpu(0, None), gpu(1, 200.0, error="lost")], [proc(1, (0, 50.0), (1, 50.0))],
                                [], [Unattributed(gpu_index=0, memory_bytes=1, sm_percent=None, reason="x")])
    assert rows[0].power_w is None and rows[0].energy_wh is None and rest[0].power_w is None


def test_containers_add_their_processes_and_keep_their_own_energy() -> None:
    meter = EnergyMeter()
    procs = [proc(1, (0, 30.0)), proc(2, (0, 20.0)), proc(3, (0, None))]
    containers = [box("a", 1, 2), box("b", 3), box("c")]
    meter.apply(0.0, [gpu(0, 100.0)], procs, containers, [])
    _, rows, _ = meter.apply(3.6, [gpu(0, 100.0)], procs, containers, [])
    assert rows[0].power_w == 50.0 and rows[0].energy_wh == round(50.0 * 3.6 / 3600, 4)
    assert rows[1].power_w is None and rows[2].power_w is None  # unknown SM; no process
    _, again, _ = meter.apply(7.2, [gpu(0, 100.0)], procs[:2], containers[:1], [])
    assert again[0].energy_wh == round(2 * 50.0 * 3.6 / 3600, 4)  # accumulates, keyed by the container id


def test_what_no_share_covers_is_the_gpus_idle_and_unattributed_power() -> None:
    meter = EnergyMeter()
    hidden = Unattributed(gpu_index=0, memory_bytes=1, sm_percent=None, reason="x")
    _, _, rest = meter.apply(0.0, [gpu(0, 333.333)], [proc(1, (0, 40.0))], [], [hidden])
    assert rest[0].power_w == round(333.333 * 0.6, 2)
    _, _, none_left = meter.apply(1.0, [gpu(0, 100.0)], [proc(1, (0, 80.0)), proc(2, (0, 80.0))], [], [hidden])
    assert none_left[0].power_w == 0.0


def test_a_process_without_gpu_is_passed_through_in_order() -> None:
    meter = EnergyMeter()
    cpu_only = proc(9)
    rows, _, _ = meter.apply(0.0, [gpu(0)], [cpu_only, proc(1, (0, 10.0)), cpu_only], [], [])
    assert rows[0] is cpu_only and rows[2] is cpu_only and rows[1].power_w == 30.0
