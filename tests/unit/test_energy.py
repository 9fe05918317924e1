"""The power ledger (app/collect/energy.py): board = idle baseline + processes + unattributed, each tick and over
time. The H100's measured figures (idle 73 W, a half-duty load at 435 W) are the cases the old split got wrong: it
gave the process its SM share of the whole board (223 W of the 362 W above idle)."""

from __future__ import annotations

import pytest

from app.collect.energy import STEADY_TICKS, EnergyMeter, IdleBaseline, split
from app.core.model import ContainerRef, ContainerSample, GpuSample, ProcessGpu, ProcessSample, Unattributed

GIB = 1 << 30


def gpu(index: int = 0, power: float | None = 300.0, util: float = 50.0, pstate: str = "P0",
        error: str | None = None, energy_j: float | None = None) -> GpuSample:
    return GpuSample(vendor="nvidia", index=index, uuid=f"GPU-{index}", power_w=power, utilization_percent=util,
                     pstate=pstate, error=error, energy_j=energy_j)


def proc(pid: int, *uses: tuple[int, float | None]) -> ProcessSample:
    gpus = tuple(ProcessGpu(gpu_index=i, memory_bytes=1, sm_percent=sm, encoder_percent=0, decoder_percent=0,
                            kind="compute") for i, sm in uses)
    return ProcessSample(pid=pid, name="p", user="u", command=None, start_time=float(pid), cpu_percent=1.0,
                         rss_bytes=1, gpus=gpus)


def box(cid: str, *pids: int) -> ContainerSample:
    return ContainerSample(container=ContainerRef(runtime="docker", id=cid * 64, name=cid), gpu_access=True,
                           pids=pids, gpu_indices=(0,), gpu_memory_bytes=1, memory_method="reported",
                           sm_percent=None, cpu_percent=None)


def idled(meter: EnergyMeter, watts: float = 73.0, pstate: str = "P0", start: float = 0.0) -> float:
    """Feed ``STEADY_TICKS`` quiet ticks (no process, 0 %) at ``watts``; the time after them."""
    for t in range(STEADY_TICKS):
        meter.apply(start + t, [gpu(power=watts, util=0.0, pstate=pstate)], [], [], [])
    return start + STEADY_TICKS


def test_a_load_alone_at_half_duty_gets_the_board_minus_idle() -> None:
    meter = EnergyMeter()
    t = idled(meter)
    rows, _, _, (ledger,) = meter.apply(t, [gpu(power=435.0, util=51.0)], [proc(1, (0, 51.0))], [], [])
    assert rows[0].power_w == 362.0  # the old split: 435 x 0.51 = 222 W
    assert (ledger.board_w, ledger.idle_w, ledger.processes_w, ledger.unattributed_w) == (435.0, 73.0, 362.0, 0.0)
    assert ledger.idle_from == "measured" and ledger.why_unattributed is None


def test_two_loads_split_the_dynamic_power_by_their_share() -> None:
    meter = EnergyMeter()
    t = idled(meter)
    rows, _, _, (ledger,) = meter.apply(t, [gpu(power=672.0, util=100.0)], [proc(1, (0, 70.0)), proc(2, (0, 30.0))],
                                        [], [])
    assert [r.power_w for r in rows] == [round(599 * 0.7, 2), round(599 * 0.3, 2)]
    assert ledger.idle_w + ledger.processes_w + ledger.unattributed_w == pytest.approx(ledger.board_w)


def test_the_ledger_adds_up_every_tick_and_over_time() -> None:
    """Three parts that sum to the board, none negative: a board read below the idle baseline (a dip under load) is
    all idle, not a process drawing negative watts. Fails on ``idle = baseline`` (the parts still add up)."""
    meter = EnergyMeter()
    t = idled(meter, 60.0, "P8")
    cases = [
        ([proc(1, (0, 40.0))], [], 250.0),  # alone
        ([proc(1, (0, 40.0)), proc(2, (0, 0.0))], [], 300.0),  # beside a context holder
        ([proc(1, (0, 30.0))], [Unattributed(gpu_index=0, memory_bytes=8 * GIB, sm_percent=50.0, reason="x")], 400.0),
        ([], [], 120.0),  # nobody
        ([proc(1, (0, None))], [], 200.0),  # SM % unknown
        ([proc(1, (0, 40.0))], [], 50.0),  # below the 60 W baseline
    ]
    ledger = None
    for step, (procs, hidden, watts) in enumerate(cases * 3):
        rows, _, rest, (ledger,) = meter.apply(t + step, [gpu(power=watts)], procs, [], hidden)
        assert ledger.idle_w + ledger.processes_w + ledger.unattributed_w == pytest.approx(watts, abs=0.02)
        assert min(ledger.idle_w, ledger.processes_w, ledger.unattributed_w, *(r.power_w or 0.0 for r in rows)) >= 0
        assert sum(r.power_w or 0.0 for r in rows) == pytest.approx(ledger.processes_w, abs=0.02)
        if rest:
            assert rest[0].power_w == ledger.unattributed_w
    assert ledger is not None
    parts = ledger.idle_wh + ledger.processes_wh + ledger.unattributed_wh
    assert parts == pytest.approx(ledger.board_wh, abs=0.0005) and ledger.board_wh > 0


def test_hidden_work_is_unattributed_and_shares_the_dynamic_power() -> None:
    meter = EnergyMeter()
    t = idled(meter)
    hidden = Unattributed(gpu_index=0, memory_bytes=8 * GIB, sm_percent=60.0, reason="x")
    rows, _, rest, (ledger,) = meter.apply(t, [gpu(power=473.0, util=100.0)], [proc(1, (0, 40.0))], [], [hidden])
    assert rows[0].power_w == 160.0 and rest[0].power_w == 240.0 and ledger.unattributed_w == 240.0
    assert "another PID namespace" in (ledger.why_unattributed or "")
    noise = Unattributed(gpu_index=0, memory_bytes=1 << 20, sm_percent=10.0, reason="x")  # no memory: no hidden work
    rows, _, rest, _ = meter.apply(t + 1, [gpu(power=473.0, util=100.0)], [proc(1, (0, 90.0))], [], [noise])
    assert rows[0].power_w == 400.0 and rest[0].power_w == 0.0


def test_context_holders_share_power_nobody_computes_with() -> None:
    meter = EnergyMeter()
    t = idled(meter, 20.0, "P8")
    rows, _, _, (ledger,) = meter.apply(t, [gpu(power=70.0, util=0.0, pstate="P0")],
                                        [proc(1, (0, 0.0)), proc(2, (0, 0.0))], [], [])
    assert [r.power_w for r in rows] == [25.0, 25.0]  # the P0 uplift, charged to the contexts that hold it
    assert ledger.idle_from == "other-pstate" and ledger.idle_w == 20.0


def test_no_process_or_an_unknown_split_is_unattributed_with_the_reason() -> None:
    assert split(100.0, [], 0.0) == ({}, 100.0, "no process on it (a display, another host's work, or the driver)")
    assert split(100.0, [(1, None)], 0.0) == ({}, 100.0, "per-process SM % is not reported for this GPU")
    assert split(100.0, [(1, None), (2, 50.0)], 0.0) == ({2: 100.0}, 0.0, None)
    assert split(0.0, [(1, 50.0)], 0.0) == ({1: 0.0}, 0.0, None)


def test_the_idle_baseline_is_steady_per_pstate_and_falls_back() -> None:
    idle = IdleBaseline()
    for _ in range(STEADY_TICKS - 1):
        idle.observe("g", "P0", 70.0, quiet=True)
    assert idle.baseline("g", "P0") == (0.0, "unknown")  # not steady yet
    idle.observe("g", "P0", 74.0, quiet=True)
    assert idle.baseline("g", "P0") == (74.0, "measured")  # the stretch's highest: steady means all of it
    idle.observe("g", "P0", 71.0, quiet=True)  # the last three: 70, 74, 71
    idle.observe("g", "P0", 71.0, quiet=True)  # 74, 71, 71
    idle.observe("g", "P0", 70.5, quiet=True)  # 71, 71, 70.5
    assert idle.baseline("g", "P0") == (71.0, "measured")
    idle.observe("g", "P0", 300.0, quiet=False)
    idle.observe("g", "P0", 60.0, quiet=True)  # one quiet tick after work: a transient, not steady
    assert idle.baseline("g", "P0") == (71.0, "measured")
    assert idle.baseline("g", "P2") == (71.0, "other-pstate")
    idle.observe("g", "P8", 21.0, quiet=True)
    idle.observe("g", "P0", 21.0, quiet=True)  # a change of P-state starts the stretch again
    assert idle.baseline("g", "P8") == (71.0, "other-pstate")
    for _ in range(STEADY_TICKS):
        idle.observe("g", "P8", 21.0, quiet=True)
    assert idle.baseline("g", "P0") == (71.0, "measured") and idle.baseline("g", "P2") == (21.0, "other-pstate")


def test_a_busy_start_charges_the_whole_board_until_idle_is_seen() -> None:
    meter = EnergyMeter()
    rows, _, _, (ledger,) = meter.apply(0.0, [gpu(power=435.0)], [proc(1, (0, 51.0))], [], [])
    assert rows[0].power_w == 435.0 and ledger.idle_from == "unknown" and ledger.idle_w == 0.0


def test_energy_integrates_each_part_and_a_gap_is_not_invented() -> None:
    meter = EnergyMeter(max_gap_s=10.0)
    t = idled(meter, 100.0)
    both = proc(1, (0, 50.0), (1, 100.0))
    gpus = [gpu(0, 300.0), gpu(1, 200.0)]
    first, _, _, _ = meter.apply(t, gpus, [both], [], [])
    assert first[0].power_w == 200.0 + 200.0  # GPU 0: 300 - 100 idle; GPU 1: no idle measured, all of it
    assert first[0].energy_wh == round(400.0 * 1.0 / 3600.0, 4)  # one second since the last idle tick
    second, _, _, ledgers = meter.apply(t + 4, gpus, [both], [], [])
    assert second[0].energy_wh == round(400.0 * 5 / 3600.0, 4)
    # idle is charged from the tick it is measured on (the last of the quiet stretch), then each second after
    assert ledgers[0].idle_wh == pytest.approx(100.0 * (1 + 1 + 4) / 3600, abs=1e-4)
    gap, _, _, _ = meter.apply(t + 14, gpus, [both], [], [])  # exactly max_gap_s: counted
    stalled, _, _, _ = meter.apply(t + 24.5, gpus, [both], [], [])  # longer: nothing invented
    assert stalled[0].energy_wh == gap[0].energy_wh == round(400.0 * 15 / 3600.0, 4)


def test_a_gpu_without_power_or_in_error_has_no_ledger_and_gives_no_share() -> None:
    rows, _, rest, ledgers = EnergyMeter().apply(
        1.0, [gpu(0, None), gpu(1, 200.0, error="lost")], [proc(1, (0, 50.0), (1, 50.0))], [],
        [Unattributed(gpu_index=0, memory_bytes=1, sm_percent=None, reason="x")])
    assert rows[0].power_w is None and rows[0].energy_wh is None and rest[0].power_w is None and ledgers == ()


def test_containers_add_their_processes_and_keep_their_own_energy() -> None:
    meter = EnergyMeter()
    procs = [proc(1, (0, 30.0)), proc(2, (0, 20.0)), proc(3, (0, None))]
    containers = [box("a", 1, 2), box("b", 3), box("c")]
    meter.apply(0.0, [gpu(0, 100.0)], procs, containers, [])
    _, rows, _, _ = meter.apply(3.6, [gpu(0, 100.0)], procs, containers, [])
    assert rows[0].power_w == 100.0 and rows[0].energy_wh == round(100.0 * 3.6 / 3600, 4)
    assert rows[1].power_w is None and rows[2].power_w is None  # unknown SM; no process
    _, again, _, _ = meter.apply(7.2, [gpu(0, 100.0)], procs[:2], containers[:1], [])
    assert again[0].energy_wh == round(2 * 100.0 * 3.6 / 3600, 4)  # accumulates, keyed by the container id


def test_the_energy_counter_is_kept_beside_the_sum() -> None:
    meter = EnergyMeter()
    meter.apply(0.0, [gpu(energy_j=1000.0)], [], [], [])
    _, _, _, (ledger,) = meter.apply(1.0, [gpu(energy_j=1000.0 + 3600.0)], [], [], [])
    assert ledger.counter_wh == 1.0
    _, _, _, (none,) = EnergyMeter().apply(0.0, [gpu()], [], [], [])
    assert none.counter_wh is None


def test_a_process_without_gpu_is_passed_through_in_order() -> None:
    meter = EnergyMeter()
    cpu_only = proc(9)
    rows, _, _, _ = meter.apply(0.0, [gpu(0)], [cpu_only, proc(1, (0, 10.0)), cpu_only], [], [])
    assert rows[0] is cpu_only and rows[2] is cpu_only and rows[1].power_w == 300.0


def test_shares_past_100_percent_are_normalised() -> None:
    rows, _, _, _ = EnergyMeter().apply(0.0, [gpu(power=300.0)], [proc(1, (0, 90.0)), proc(2, (0, 60.0))], [], [])
    assert [r.power_w for r in rows] == [180.0, 120.0]


def test_one_process_credited_with_all_the_activity_beside_others_is_a_doubt_said_aloud() -> None:
    """Two time-slicing processes came back from NVML on an H100 as one at the GPU's whole SM % and one at 0 %
    (benchmarks/nvml_process_util.py, on an H100): the ledger says the split may be wrong."""
    meter = EnergyMeter()
    *_, (ledger,) = meter.apply(0.0, [gpu(power=600.0, util=92.0)], [proc(11, (0, 64.0)), proc(12, (0, 0.0))], [], [])
    assert ledger.split_doubt is not None and "PID 11" in ledger.split_doubt and "1 other" in ledger.split_doubt
    *_, (both,) = meter.apply(1.0, [gpu(power=600.0, util=92.0)], [proc(11, (0, 40.0)), proc(12, (0, 20.0))], [], [])
    *_, (alone,) = meter.apply(2.0, [gpu(power=600.0, util=92.0)], [proc(11, (0, 64.0))], [], [])
    *_, (unknown,) = meter.apply(3.0, [gpu(power=600.0, util=92.0)], [proc(11, (0, None)), proc(12, (0, None))],
                                 [], [])
    assert (both.split_doubt, alone.split_doubt, unknown.split_doubt) == (None, None, None)
