"""Alert rules with a fake clock: hold time, hysteresis, cooldown, per GPU; XID and new-process events."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from app.collect.assemble import alert_rules
from app.collect.config import ConfigError, load_settings
from app.core.model import GpuEvent, GpuSample, HostSample, ProcessGpu, ProcessSample
from app.core.snapshot import BackendInfo, CollectorTiming, Snapshot
from app.verdict.alerts import AlertEngine, build_rules, parse_overrides


def gpu(util: float | None = 0, index: int = 0, error: str | None = None, **kw: Any) -> GpuSample:
    return GpuSample(vendor="nvidia", index=index, uuid=f"GPU-{index}", name="Test", utilization_percent=util,
                     error=error, **kw)


def snap(*gpus: GpuSample, processes: tuple[ProcessSample, ...] = ()) -> Snapshot:
    host = HostSample(hostname="h", cpu_percent=0, cpu_count=1, load_average=None, memory_used_bytes=0,
                      memory_total_bytes=1)
    return Snapshot(timestamp=0, backend=BackendInfo(name="t"), host=host, gpus=tuple(gpus), processes=processes,
                    timing=CollectorTiming(0, 0, 0, 0, 1, 1))


def only(rule: str, **changes: Any) -> AlertEngine:
    overrides = {name: {"enabled": False} for name in build_rules() if name != rule}
    overrides[rule] = changes
    return AlertEngine(build_rules(overrides))


def run(engine: AlertEngine, values: list[float | None], field: str = "utilization_percent",
        start: float = 0.0) -> list[tuple[float, str]]:
    events: list[tuple[float, str]] = []
    for step, value in enumerate(values):
        _, fired = engine.evaluate(snap(replace(gpu(), **dict[str, Any]({field: value}))), start + step)
        events.extend((start + step, e.state) for e in fired)
    return events


def test_fires_only_after_the_hold_time() -> None:
    engine = only("gpu_utilization", threshold=50, hold_s=3, hysteresis=5)
    assert run(engine, [60, 60, 60, 60, 60]) == [(3.0, "firing")]
    active, _ = engine.evaluate(snap(gpu(60)), 5)
    assert len(active) == 1 and active[0].rule == "gpu_utilization" and active[0].since == 0.0


def test_a_short_spike_does_not_fire() -> None:
    engine = only("gpu_utilization", threshold=50, hold_s=3, hysteresis=5)
    assert run(engine, [60, 60, 40, 60, 60, 40]) == []


def test_hovering_at_the_threshold_fires_once_and_resolves_once() -> None:
    engine = only("gpu_utilization", threshold=50, hold_s=2, hysteresis=5)
    assert run(engine, [55, 55, 55, 48, 52, 47, 51, 49, 44, 30]) == [(2.0, "firing"), (8.0, "resolved")]


def test_cooldown_keeps_a_flapping_value_quiet() -> None:
    engine = only("gpu_utilization", threshold=50, hold_s=0, hysteresis=5, cooldown_s=5)
    events = run(engine, [90, 10, 90, 10, 90, 90, 90, 90])
    assert events == [(0.0, "firing"), (1.0, "resolved"), (6.0, "firing")]


def test_unknown_values_keep_the_state() -> None:
    engine = only("gpu_utilization", threshold=50, hold_s=1, hysteresis=5)
    assert run(engine, [90, 90, None, None, 90]) == [(1.0, "firing")]


def test_per_gpu_and_a_vanished_gpu_resolves() -> None:
    engine = only("gpu_utilization", threshold=50, hold_s=0, hysteresis=5)
    active, events = engine.evaluate(snap(gpu(90, 0), gpu(10, 1)), 0)
    assert [a.gpu_index for a in active] == [0] and len(events) == 1
    assert "GPU 0" in events[0].message and events[0].value == 90
    active, events = engine.evaluate(snap(gpu(10, 1)), 1)
    assert active == () and [(e.gpu_index, e.state) for e in events] == [(0, "resolved")]


@pytest.mark.parametrize(
    ("rule", "field", "values", "expected"),
    [
        ("temperature", "temperature_c", [80, 86, 86, 86, 84, 81], [(2.0, "firing"), (5.0, "resolved")]),
        ("power", "power_w", [600, 695, 695, 695, 640], [(2.0, "firing"), (4.0, "resolved")]),
        ("memory", "memory_used_bytes", [50, 97, 97, 97, 80], [(2.0, "firing"), (4.0, "resolved")]),
    ],
)
def test_temperature_power_and_memory_rules(rule: str, field: str, values: list[float],
                                            expected: list[tuple[float, str]]) -> None:
    engine = only(rule, hold_s=1)
    bases: dict[str, dict[str, Any]] = {"power": {"power_limit_w": 700.0}, "memory": {"memory_total_bytes": 100}}
    base = bases.get(rule, {})
    events: list[tuple[float, str]] = []
    for step, value in enumerate(values):
        _, fired = engine.evaluate(snap(gpu(**base, **dict[str, Any]({field: value}))), step)
        events.extend((float(step), e.state) for e in fired)
    assert events == expected


def test_thermal_throttling_fires_but_a_power_cap_does_not() -> None:
    engine = only("throttling", hold_s=1)
    values = [("sw_power_cap",), ("sw_power_cap",), ("hw_thermal_slowdown",), ("hw_thermal_slowdown",), ()]
    events: list[tuple[int, str, str]] = []
    for step, reasons in enumerate(values):
        _, fired = engine.evaluate(snap(gpu(throttle_reasons=reasons)), step)
        events.extend((step, e.state, e.severity) for e in fired)
    assert events == [(3, "firing", "critical"), (4, "resolved", "critical")]


def test_an_xid_event_fires_at_once_and_resolves_after_its_cooldown() -> None:
    engine = only("xid", cooldown_s=10)
    active, fired = engine.evaluate(snap(gpu()), 0, [GpuEvent(gpu_index=0, kind="xid", value=79, timestamp=0.0)])
    assert [(a.rule, a.value) for a in fired] == [("xid", 79.0)] and "XID 79" in fired[0].message
    assert len(active) == 1
    assert engine.evaluate(snap(gpu()), 5)[1] == ()
    active, fired = engine.evaluate(snap(gpu()), 10)
    assert active == () and [a.state for a in fired] == ["resolved"]


def test_a_new_process_on_a_gpu_is_announced_but_not_those_running_at_start() -> None:
    def proc(pid: int, index: int = 0) -> ProcessSample:
        use = ProcessGpu(gpu_index=index, memory_bytes=1, sm_percent=0, encoder_percent=0, decoder_percent=0,
                         kind="compute")
        return ProcessSample(pid=pid, name=f"p{pid}", user="bob", command=None, start_time=float(pid),
                             cpu_percent=None, rss_bytes=None, gpus=(use,))

    engine = only("new_process")
    assert engine.evaluate(snap(gpu(), processes=(proc(1),)), 0)[1] == ()
    active, fired = engine.evaluate(snap(gpu(), gpu(index=1), processes=(proc(1), proc(2, 1))), 1)
    assert [(a.gpu_index, a.message) for a in fired] == [
        (1, "A new process started using GPU 1: p2 (bob), PID 2")]
    assert active == ()
    assert engine.evaluate(snap(gpu(), gpu(index=1), processes=(proc(1), proc(2, 1))), 2)[1] == ()


def test_overrides_from_text_and_settings() -> None:
    assert parse_overrides("temperature.threshold=80, power.enabled=0,xid.cooldown=5") == {
        "temperature": {"threshold": 80.0}, "power": {"enabled": False}, "xid": {"cooldown_s": 5.0}}
    rules = alert_rules(load_settings({"FANWHY_ALERT_GPU_UTIL": "70", "FANWHY_ALERTS": "temperature.hold=30"}))
    assert rules["gpu_utilization"].threshold == 70 and rules["temperature"].hold_s == 30
    for bad in ("pump.threshold=1", "temperature.colour=red", "temperature.threshold=hot", "temperature"):
        with pytest.raises(ConfigError, match="FANWHY_ALERTS"):
            alert_rules(load_settings({"FANWHY_ALERTS": bad}))


def test_a_fan_alarm_fires_after_its_hold_and_resolves_when_the_fan_recovers() -> None:
    from app.core.fan import Fan

    engine = only("fan", hold_s=3)
    blocked = Fan("hwmon:nct6798/fan2", "nct6798", 2, "CPU fan", rpm=400, target_rpm=1800, state="off-target",
                  alarm="off target: 400 RPM against a target of 1,800 RPM for 12 s (blocked, or failing)")
    fine = replace(blocked, rpm=1790, alarm=None, state="running")
    fired: list[tuple[float, str, str]] = []
    for t, fan in enumerate([blocked, blocked, blocked, blocked, blocked, fine]):
        _, events = engine.evaluate(replace(snap(), fans=(fan,)), float(t))
        fired.extend((float(t), e.state, e.message) for e in events)
    assert [(t, s) for t, s, _ in fired] == [(3.0, "firing"), (5.0, "resolved")]
    assert fired[0][2] == ("CPU fan (nct6798 fan2): off target: 400 RPM against a target of 1,800 RPM for 12 s "
                           "(blocked, or failing) (for 3 s)")
    assert fired[1][2] == "CPU fan (nct6798 fan2) is back to normal (1,790 RPM, running)"
    engine.evaluate(replace(snap(), fans=(blocked,)), 10.0)
    _, events = engine.evaluate(replace(snap(), fans=(blocked,)), 20.0)
    assert events == ()  # the cooldown after a resolution keeps it quiet


def test_a_fan_with_an_alarm_that_vanishes_resolves_and_dead_channels_never_fire() -> None:
    from app.core.fan import Fan

    engine = only("fan", hold_s=0)
    failed = Fan("bmc:Fan3B", "bmc", 6, "Fan3B", rpm=0, alarm="the BMC reports it critical", state="failed")
    active, events = engine.evaluate(replace(snap(), fans=(failed,)), 0.0)
    assert [a.rule for a in active] == ["fan"] and events[0].id.startswith("fan:bmc:Fan3B:")
    _, events = engine.evaluate(snap(), 1.0)
    assert [(e.state, e.message) for e in events] == [("resolved", "bmc:Fan3B is no longer reported")]
    dead = Fan("hwmon:nct6798/fan5", "nct6798", 5, None, rpm=0, dead="0 RPM: no fan", alarm=None, state="dead")
    assert engine.evaluate(replace(snap(), fans=(dead,)), 2.0) == ((), ())


def test_a_fired_alert_says_why_from_the_verdict_at_that_moment() -> None:
    from app.core.snapshot import Cause, Verdict

    engine = only("gpu_utilization", threshold=50, hold_s=0)
    cause = Cause(kind="gpu_load", gpu_index=0, pid=42, score=0.9,
                  summary="GPU 0 is at 70 °C and 400 W because `python train.py` (alice, container trainer) keeps "
                          "98 % of its SMs busy")
    holder = Cause(kind="memory_holder", gpu_index=1, pid=7, score=0.1, summary="`x` holds 20 GiB on GPU 1")
    verdict = Verdict(headline=cause.summary, causes=(cause, holder), confidence=0.9, busy=True)
    _, events = engine.evaluate(replace(snap(gpu(98, 0), gpu(98, 1)), verdict=verdict), 0.0)
    by_gpu = {e.gpu_index: e.message for e in events}
    assert by_gpu[0].endswith(". Why: GPU 0 is at 70 °C and 400 W because `python train.py` (alice, container "
                              "trainer) keeps 98 % of its SMs busy")
    assert "Why" not in by_gpu[1]  # a memory holder heats nothing: it is not the why
    _, resolved = engine.evaluate(snap(gpu(10, 0), gpu(10, 1)), 1.0)
    assert all("Why" not in e.message for e in resolved)


def test_each_alert_says_the_cause_that_answers_it_when_a_busy_card_is_also_throttled_for_heat() -> None:
    """A real H100 under a CUDA load (tests/gpu, 2026-12-06) was throttled for heat, and the verdict led with that:
    the utilization alert said only the heat, not the program keeping the card busy. Utilization is answered by
    what keeps the card busy, throttling by the heat (fails when every rule takes the verdict's leading cause)."""
    from app.core.snapshot import Cause, Verdict

    heat = Cause(kind="thermal_throttle", gpu_index=0, score=0.95,
                 summary="GPU 0 is throttled for heat at 76 °C and 652 W (slowdown at 89 °C): the cooling is at its "
                         "limit")
    load = Cause(kind="gpu_load", gpu_index=0, pid=42, score=0.9,
                 summary="GPU 0 is at 76 °C and 652 W because `cuda_load.py` (root) keeps 100 % of its SMs busy")
    verdict = Verdict(headline=heat.summary, causes=(heat, load), confidence=0.9, busy=True)
    busy = only("gpu_utilization", threshold=50, hold_s=0)
    _, events = busy.evaluate(replace(snap(gpu(100, 0)), verdict=verdict), 0.0)
    assert [e.message.split(". Why: ")[1] for e in events] == [load.summary]
    hot = only("throttling", hold_s=0)
    throttled = replace(gpu(100, 0), throttle_reasons=("hw_thermal_slowdown",))
    _, events = hot.evaluate(replace(snap(throttled), verdict=verdict), 0.0)
    assert [e.message.split(". Why: ")[1] for e in events] == [heat.summary]


def test_the_why_names_the_program_a_person_knows_not_its_interpreter() -> None:
    """From a real-shaped command line to the message a person reads: `vllm serve`, not `python3`."""
    from app.verdict.explain import explain
    from tests.support import builders

    engine = only("gpu_utilization", threshold=50, hold_s=0)
    job = builders.proc(42, "/usr/bin/python3 /usr/local/bin/vllm serve meta-llama/Llama-3-8B", sm=97)
    now = builders.snap([builders.gpu(util=97, temp=70, power=400)], [job])
    _, events = engine.evaluate(replace(now, verdict=explain(now)), 0.0)
    (fired,) = events
    assert "`vllm serve` (alice)" in fired.message and "python3" not in fired.message
