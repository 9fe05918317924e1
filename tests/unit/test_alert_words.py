"""The alerts' exact words and settings: every rule's fired and resolved message, the override grammar, event
alerts (XID, AMD events, a new process) and their expiry. Written against the mutants `make mutation` found alive:
each assertion pins a word, a boundary or a default that the behavioural tests in test_alerts.py let move."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from app.core.model import GpuEvent, GpuSample, HostSample, ProcessGpu, ProcessSample
from app.core.snapshot import Alert, BackendInfo, CollectorTiming, Snapshot
from app.verdict.alerts import DEFAULT_RULES, AlertEngine, Rule, build_rules, parse_overrides


def gpu(index: int = 0, name: str | None = "H200", **values: Any) -> GpuSample:
    return GpuSample(vendor="nvidia", index=index, uuid=f"GPU-{index}", name=name, **values)


def snap(*gpus: GpuSample, processes: tuple[ProcessSample, ...] = ()) -> Snapshot:
    host = HostSample(hostname="h", cpu_percent=1, cpu_count=1, load_average=None, memory_used_bytes=0,
                      memory_total_bytes=1)
    return Snapshot(timestamp=0, backend=BackendInfo(name="t"), host=host, gpus=gpus, processes=processes,
                    timing=CollectorTiming(0, 0, 0, 0, 1, 1))


def only(name: str, **changes: Any) -> AlertEngine:
    rules = {n: replace(r, enabled=n == name) for n, r in DEFAULT_RULES.items()}
    rules[name] = replace(rules[name], **{"hold_s": 0, "cooldown_s": 0, **changes})
    return AlertEngine(rules)


def fire_and_resolve(name: str, high: GpuSample, low: GpuSample) -> tuple[Alert, Alert]:
    engine = only(name, hold_s=2)
    engine.evaluate(snap(high), 10.0)
    _, fired = engine.evaluate(snap(high), 12.0)
    _, resolved = engine.evaluate(snap(low), 13.0)
    assert len(fired) == 1 and len(resolved) == 1, (fired, resolved)
    return fired[0], resolved[0]


@pytest.mark.parametrize(("name", "high", "low", "fired", "resolved"), [
    ("gpu_utilization", {"utilization_percent": 97.4}, {"utilization_percent": 3.2},
     "GPU 0 (H200) at 97 % utilization, above 50 % for 2 s", "GPU 0 utilization back to 3 %"),
    ("temperature", {"temperature_c": 88.6}, {"temperature_c": 61.0},
     "GPU 0 (H200) at 89 °C, above 85 °C for 2 s", "GPU 0 cooled to 61 °C"),
    ("memory", {"memory_used_bytes": 99, "memory_total_bytes": 100}, {"memory_used_bytes": 10,
                                                                        "memory_total_bytes": 100},
     "GPU 0 (H200) memory 99 % full, above 95 % for 2 s", "GPU 0 memory back to 10 %"),
    ("power", {"power_w": 693.0, "power_limit_w": 700.0}, {"power_w": 70.0, "power_limit_w": 700.0},
     "GPU 0 (H200) at 99 % of its power limit for 2 s", "GPU 0 power back to 10 % of its limit"),
    ("throttling", {"throttle_reasons": ("sw_power_cap", "hw_thermal_slowdown")}, {"throttle_reasons": ()},
     "GPU 0 (H200) is throttled (hw_thermal_slowdown) for 2 s", "GPU 0 is no longer throttled"),
])
def test_each_rule_says_what_fired_and_what_resolved(name: str, high: dict[str, Any], low: dict[str, Any],
                                                     fired: str, resolved: str) -> None:
    up, down = fire_and_resolve(name, gpu(**high), gpu(**low))
    assert up.message == fired and down.message == resolved
    assert up.rule == name and up.severity == DEFAULT_RULES[name].severity and up.state == "firing"
    assert down.state == "resolved" and down.resolved_at == 13.0 and up.since == 10.0
    assert up.id == f"{name}:0:10000" and up.threshold == DEFAULT_RULES[name].threshold


def test_an_unnamed_gpu_is_called_unnamed() -> None:
    up, _ = fire_and_resolve("gpu_utilization", gpu(name=None, utilization_percent=90.0),
                             gpu(name=None, utilization_percent=0.0))
    assert up.message.startswith("GPU 0 (unnamed) at 90 %")


def test_power_needs_both_a_reading_and_a_limit() -> None:
    engine = only("power")
    halves: list[dict[str, Any]] = [{"power_w": 700.0}, {"power_limit_w": 700.0},
                                    {"power_w": 700.0, "power_limit_w": 0.0}]
    for half in halves:
        _, fired = engine.evaluate(snap(gpu(**half)), 1.0)
        assert fired == ()
    _, fired = engine.evaluate(snap(gpu(power_w=686.0, power_limit_w=700.0)), 2.0)
    assert fired[0].value == 98.0  # 686 of 700 W is exactly the 98 % threshold


def test_throttling_is_unknown_without_reasons_and_low_without_slowdown() -> None:
    engine = only("throttling")
    assert engine.evaluate(snap(gpu(throttle_reasons=None)), 1.0)[1] == ()
    assert engine.evaluate(snap(gpu(throttle_reasons=("sw_power_cap", "gpu_idle"))), 2.0)[1] == ()
    _, fired = engine.evaluate(snap(gpu(throttle_reasons=("hw_slowdown",))), 3.0)
    assert fired[0].value == 1.0 and "(hw_slowdown)" in fired[0].message


def test_the_threshold_itself_fires_and_the_hysteresis_edge_does_not_resolve() -> None:
    engine = only("temperature", hysteresis=3.0)
    assert engine.evaluate(snap(gpu(temperature_c=84.9)), 1.0)[1] == ()
    assert engine.evaluate(snap(gpu(temperature_c=85.0)), 2.0)[1][0].state == "firing"
    assert engine.evaluate(snap(gpu(temperature_c=82.0)), 3.0)[1] == ()  # 85 - 3 is not below 85 - 3
    assert engine.evaluate(snap(gpu(temperature_c=81.9)), 4.0)[1][0].state == "resolved"


def test_a_dip_below_the_threshold_restarts_the_hold() -> None:
    engine = only("gpu_utilization", hold_s=3.0)
    values = [(0.0, 90.0), (2.0, 90.0), (2.5, 40.0), (3.0, 90.0), (5.9, 90.0), (6.0, 90.0)]
    fired = [t for t, v in values if engine.evaluate(snap(gpu(utilization_percent=v)), t)[1]]
    assert fired == [6.0]


def test_the_cooldown_keeps_a_rule_quiet_then_lets_it_fire_again() -> None:
    engine = only("gpu_utilization", cooldown_s=10.0)
    engine.evaluate(snap(gpu(utilization_percent=90.0)), 0.0)
    engine.evaluate(snap(gpu(utilization_percent=1.0)), 1.0)  # resolved at 1: quiet until 11
    assert engine.evaluate(snap(gpu(utilization_percent=90.0)), 10.9)[1] == ()
    assert engine.evaluate(snap(gpu(utilization_percent=90.0)), 11.0)[1][0].state == "firing"


def test_a_gpu_that_disappears_resolves_its_alerts_with_words() -> None:
    engine = only("gpu_utilization")
    engine.evaluate(snap(gpu(utilization_percent=90.0)), 0.0)
    active, events = engine.evaluate(snap(), 1.0)
    assert active == () and events[0].message == "GPU 0 is no longer reported" and events[0].resolved_at == 1.0
    assert engine.evaluate(snap(gpu(utilization_percent=90.0)), 2.0)[1][0].state == "firing"  # state was dropped


def test_a_failed_gpu_keeps_its_state() -> None:
    engine = only("gpu_utilization")
    engine.evaluate(snap(gpu(utilization_percent=90.0)), 0.0)
    active, events = engine.evaluate(snap(gpu(error="GPU is lost")), 1.0)
    assert events == () and len(active) == 1


def test_xid_and_amd_events_fire_at_once_and_expire_after_their_cooldown() -> None:
    engine = only("xid", cooldown_s=300.0)
    event = GpuEvent(gpu_index=0, kind="xid", value=79, timestamp=5.0)
    active, fired = engine.evaluate(snap(gpu()), 5.0, [event])
    assert fired[0].message == "GPU 0 reported XID 79: a driver-level GPU error (see NVIDIA's XID catalogue)"
    assert fired[0].id == "xid:0:5000:79" and fired[0].value == 79.0 and fired[0].severity == "critical"
    assert len(active) == 1
    assert engine.evaluate(snap(gpu()), 304.9)[1] == ()
    _, expired = engine.evaluate(snap(gpu()), 305.0)
    assert expired[0].state == "resolved" and expired[0].message == "GPU 0: no new XID error"
    amd = GpuEvent(gpu_index=1, kind="thermal_throttle", value=1, timestamp=9.0)
    _, fired = engine.evaluate(snap(gpu(), gpu(1)), 9.0, [amd])
    assert fired[0].message == "GPU 1 reported thermal throttle (amdsmi event)"
    disabled = AlertEngine({**DEFAULT_RULES, "xid": replace(DEFAULT_RULES["xid"], enabled=False)})
    assert disabled.evaluate(snap(gpu()), 1.0, [event])[1] == ()


def test_a_new_process_is_a_notice_with_its_name_owner_and_pid() -> None:
    engine = only("new_process")
    use = (ProcessGpu(gpu_index=1, memory_bytes=1, sm_percent=0, encoder_percent=0, decoder_percent=0,
                      kind="compute"),)
    old = ProcessSample(pid=10, name="a", user=None, command=None, start_time=1.0, cpu_percent=0, rss_bytes=0,
                        gpus=use)
    assert engine.evaluate(snap(gpu(1), processes=(old,)), 0.0)[1] == ()  # the first tick is the baseline
    new = replace(old, pid=11, name="train", user="ann", start_time=2.0)
    nameless = replace(old, pid=12, name=None, start_time=3.0)
    _, fired = engine.evaluate(snap(gpu(1), processes=(old, new, nameless)), 5.0)
    assert [a.message for a in fired] == ["A new process started using GPU 1: train (ann), PID 11",
                                          "A new process started using GPU 1: PID 12"]
    assert fired[0].id == "new_process:1:11:2000" and fired[0].severity == "info" and fired[0].since == 5.0


@pytest.mark.parametrize(("text", "expected"), [
    ("temperature.threshold=80", {"temperature": {"threshold": 80.0}}),
    ("power.enabled=0;memory.hold=5", {"power": {"enabled": False}, "memory": {"hold_s": 5.0}}),
    (" xid.cooldown = 60 , gpu_utilization.hysteresis=2.5", {"xid": {"cooldown_s": 60.0},
                                                           "gpu_utilization": {"hysteresis": 2.5}}),
    ("throttling.severity=warning", {"throttling": {"severity": "warning"}}),
    ("power.enabled=1,memory.enabled=true,xid.enabled=YES,gpu_utilization.enabled=On,temperature.enabled=off",
     {"power": {"enabled": True}, "memory": {"enabled": True}, "xid": {"enabled": True},
      "gpu_utilization": {"enabled": True}, "temperature": {"enabled": False}}),
    ("", {}),
    (",,", {}),
])
def test_the_override_grammar(text: str, expected: dict[str, dict[str, Any]]) -> None:
    assert parse_overrides(text) == expected


@pytest.mark.parametrize(("text", "words"), [
    ("temperature=80", "expected RULE.FIELD=VALUE with RULE in gpu_utilization, temperature, memory, power, "
                       "throttling, xid, new_process, fan and FIELD in threshold, hold, hysteresis, cooldown, enabled, "
                       "severity"),
    ("temperature.threshold", "expected RULE.FIELD=VALUE"),
    ("pump.threshold=1", "bad alert setting 'pump.threshold=1'"),
    ("temperature.colour=red", "bad alert setting"),
    ("temperature.threshold=hot", "'hot' is not a number"),
    ("a.b.threshold=1", "bad alert setting"),
])
def test_bad_overrides_say_what_is_expected(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=None) as raised:
        parse_overrides(text)
    assert words in str(raised.value)


def test_a_value_with_an_equals_sign_keeps_it() -> None:
    assert parse_overrides("throttling.severity=a=b") == {"throttling": {"severity": "a=b"}}


def test_build_rules_applies_overrides_to_the_defaults_only_where_named() -> None:
    rules = build_rules({"temperature": {"threshold": 80.0, "hold_s": 2.0}})
    assert rules["temperature"] == replace(DEFAULT_RULES["temperature"], threshold=80.0, hold_s=2.0)
    assert {n: r for n, r in rules.items() if n != "temperature"} == {
        n: r for n, r in DEFAULT_RULES.items() if n != "temperature"}
    assert isinstance(rules["xid"], Rule)
