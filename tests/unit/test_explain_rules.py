"""The verdict's rules at their edges: when a GPU counts as busy, how a cause is scored, which numbers it carries,
how sure FanWhy is, and the exact wording of each branch. Written against the mutants `make mutation` found alive in
app/verdict/explain.py: each test pins a boundary or a value the scenario tests in test_explain.py let move."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from app.core.model import ContainerRef, Unattributed
from app.core.snapshot import Cause, Verdict
from app.core.vocabulary import GIB
from app.verdict.explain import (
    BUSY_POWER_FRACTION,
    BUSY_UTIL_PERCENT,
    COOL_C,
    BusyClock,
    explain,
)
from app.verdict.words import label, short_command, who
from tests.support.builders import gpu, proc, snap


def load(verdict: Verdict) -> Cause:
    return next(c for c in verdict.causes if c.kind == "gpu_load")


@pytest.mark.parametrize(("changes", "busy"), [
    ({"util": BUSY_UTIL_PERCENT}, True), ({"util": BUSY_UTIL_PERCENT - 0.1}, False),
    ({"power": BUSY_POWER_FRACTION * 350}, True), ({"power": BUSY_POWER_FRACTION * 350 - 0.1}, False),
    ({"temp": 80.0}, True), ({"temp": 79.9}, False),  # 40 / 47 of the way to 87 °C is 0.851, 39.9 / 47 is 0.849
])
def test_what_counts_as_busy_at_its_edges(changes: dict[str, Any], busy: bool) -> None:
    assert explain(snap([gpu(**changes)])).busy is busy


def test_the_score_follows_the_strongest_of_utilization_power_and_heat() -> None:
    cases: list[tuple[dict[str, Any], float]] = [
        ({"util": 60}, 0.6), ({"util": 30, "power": 280}, 0.8),
        ({"util": 30, "temp": COOL_C + 0.9 * (87 - COOL_C)}, 0.9), ({"util": 100, "power": 700}, 1.0)]
    for changes, weight in cases:
        cause = load(explain(snap([gpu(**changes)])))
        assert cause.score == pytest.approx(0.5 + 0.45 * weight), changes


def test_the_load_cause_carries_its_numbers_and_the_process() -> None:
    trainer = proc(7, "python3 train.py", sm=80, memory=3 * GIB, container="trainer", power_w=200.0)
    cause = load(explain(snap([gpu(util=80, temp=70, power=250)], [trainer])))
    assert cause.pid == 7 and cause.container == "trainer" * 8
    assert dict(cause.numbers) == {
        "utilization_percent": 80, "power_w": 250, "power_limit_w": 350, "temperature_c": 70,
        "temperature_slowdown_c": 87, "fan_speed_percent": 30, "sm_percent": 80, "process_power_w": 200.0,
        "process_gpu_memory_bytes": 3 * GIB}


def test_confidence_by_what_is_known_of_the_load() -> None:
    busy = gpu(util=90)
    seen = proc(1, "python3 a.py", sm=90)
    assert explain(snap([busy], [seen])).confidence == 0.9
    assert explain(snap([busy], [replace(seen, visibility="host-pid-only")])).confidence == 0.6
    assert explain(snap([busy], [replace(seen, status="vanished")])).confidence == 0.6
    hidden = Unattributed(gpu_index=0, memory_bytes=8 * GIB, sm_percent=90.0, reason="x")
    assert explain(snap([busy], unattributed=(hidden,))).confidence == 0.5
    assert explain(snap([busy], [proc(2, "python3 b.py", sm=None)])).confidence == 0.4
    assert explain(snap([busy])).confidence == 0.3
    assert explain(snap([gpu()])).confidence == 0.9  # nothing busy: sure of it


def test_the_wording_of_each_load_branch() -> None:
    busy = gpu(util=90, temp=70, power=250)
    hidden = Unattributed(gpu_index=0, memory_bytes=8 * GIB, sm_percent=90.0, reason="x")
    assert explain(snap([busy], unattributed=(hidden,))).headline == (
        "GPU 0 is at 70 °C and 250 W because of work FanWhy cannot see: processes in another PID namespace hold "
        "8.0 GiB (run FanWhy with --pid=host to name them); its fan runs at 30 %.")
    small = Unattributed(gpu_index=0, memory_bytes=1 << 20, sm_percent=5.0, reason="x")
    assert "no process on it is known" in explain(snap([busy], unattributed=(small,))).headline
    two = [proc(2, "python3 b.py", sm=None, memory=GIB), proc(3, "python3 c.py", sm=None, memory=2 * GIB)]
    assert explain(snap([busy], two)).headline == (
        "GPU 0 is at 70 °C and 250 W; `python3 c.py` (alice) is the process on it (per-process SM % is not reported "
        "here); its fan runs at 30 %.")
    assert explain(snap([busy])).headline == (
        "GPU 0 is at 70 °C and 250 W, and no process on it is known; its fan runs at 30 %.")
    bare = replace(gpu(util=90), temperature_c=None, power_w=None, fans=())
    assert explain(snap([bare])).headline == "GPU 0 is at 90 % utilization, and no process on it is known."


def test_a_second_process_is_named_from_20_percent() -> None:
    busy = gpu(util=95)
    first = proc(1, "python3 a.py", sm=70)
    assert "with `python3 b.py` (alice) at 20 %" in explain(snap([busy], [first, proc(2, "python3 b.py", sm=20)])
                                                         ).headline
    assert "with" not in explain(snap([busy], [first, proc(2, "python3 b.py", sm=19.9)])).headline
    assert "keeps 1 % of its SMs" in explain(snap([busy], [proc(1, "python3 a.py", sm=0.6)])).headline


def test_busy_for_minutes_from_two_minutes_on() -> None:
    busy = gpu(util=90)
    assert "(busy for 2 min)" in explain(snap([busy], timestamp=1120.0), {0: 1000.0}).headline
    assert "busy for" not in explain(snap([busy], timestamp=1119.9), {0: 1000.0}).headline


def test_the_busy_clock_keeps_the_start_of_a_stretch_and_forgets_a_break() -> None:
    clock = BusyClock()
    assert clock.update(snap([gpu(util=BUSY_UTIL_PERCENT)], timestamp=1.0)) == {0: 1.0}
    assert clock.update(snap([gpu(util=90)], timestamp=2.0)) == {0: 1.0}
    assert clock.update(snap([gpu(util=BUSY_UTIL_PERCENT - 0.1)], timestamp=3.0)) == {}
    assert clock.update(snap([replace(gpu(util=90), error="lost")], timestamp=4.0)) == {}
    assert clock.update(snap([replace(gpu(), utilization_percent=None)], timestamp=5.0)) == {}


def test_throttle_and_power_cap_causes() -> None:
    hot = gpu(util=90, temp=86, power=300, throttle_reasons=("hw_thermal_slowdown", "sw_power_cap"))
    causes = {c.kind: c for c in explain(snap([hot])).causes}
    base = causes["gpu_load"].score
    assert causes["thermal_throttle"].score == pytest.approx(min(1.0, base + 0.05))
    assert causes["thermal_throttle"].summary == ("GPU 0 is throttled for heat at 86 °C and 300 W (slowdown at 87 °C):"
                                                  " the cooling is at its limit.")
    assert causes["power_cap"].score == pytest.approx(base * 0.8)
    assert causes["power_cap"].summary == ("GPU 0 is held at its power limit (350 W): it would draw more if allowed.")
    assert dict(causes["power_cap"].numbers)["power_limit_w"] == 350
    no_limit = replace(hot, power_limit_w=None, temperature_slowdown_c=None)
    kinds = [c.kind for c in explain(snap([no_limit])).causes]
    assert "power_cap" not in kinds and "thermal_throttle" in kinds
    assert "(slowdown at" not in next(c.summary for c in explain(snap([no_limit])).causes
                                      if c.kind == "thermal_throttle")


def test_a_memory_holder_is_named_only_from_1_gib_at_a_measured_0_percent() -> None:
    busy = gpu(util=90)
    worker = proc(1, "python3 a.py", sm=90)
    holder = proc(2, "python3 hold.py", sm=0, memory=GIB)
    causes = explain(snap([busy], [worker, holder])).causes
    held = next(c for c in causes if c.kind == "memory_holder")
    assert held.pid == 2 and held.score == 0.1 and dict(held.numbers) == {"gpu_memory_bytes": GIB, "sm_percent": 0.0}
    assert held.summary == ("`python3 hold.py` (alice), PID 2, holds 1.0 GiB on GPU 0 but computes nothing: it is not "
                            "what heats the GPU.")
    smaller = proc(2, "python3 hold.py", sm=0, memory=GIB - 1)
    unknown = proc(2, "python3 hold.py", sm=None, memory=8 * GIB)
    for other in (smaller, unknown):
        assert "memory_holder" not in [c.kind for c in explain(snap([busy], [worker, other])).causes]


def test_an_idle_gpu_kept_awake_names_the_likely_reason() -> None:
    awake = replace(gpu(util=1, power=120), pstate="P0")
    holder = proc(5, "python3 hold.py", sm=0)
    cause = next(c for c in explain(snap([awake], [holder])).causes if c.kind == "idle_wake")
    assert cause.summary == "GPU 0 is idle but stays in P0 at 120 W: `python3 hold.py` (alice) holds a context on it " \
                            "at 0 % SM."
    assert cause.score == 0.2 and dict(cause.numbers) == {"pstate": "P0", "power_w": 120}
    display = next(c for c in explain(snap([replace(awake, display_active=True)])).causes if c.kind == "idle_wake")
    assert display.summary.endswith("a display is attached to it.")
    off = next(c for c in explain(snap([replace(awake, persistence_mode=False)])).causes if c.kind == "idle_wake")
    assert off.summary.endswith("persistence mode is off, so each poll of the GPU wakes it.")
    assert not [c for c in explain(snap([awake])).causes if c.kind == "idle_wake"]  # no likely reason: no cause
    assert not [c for c in explain(snap([replace(awake, pstate="P8")], [holder])).causes if c.kind == "idle_wake"]
    assert not [c for c in explain(snap([replace(gpu(util=5), pstate="P0")], [holder])).causes
                if c.kind == "idle_wake"]
    unknown_watts = next(c for c in explain(snap([replace(awake, power_w=None)], [holder])).causes
                         if c.kind == "idle_wake")
    assert "stays in P0: " in unknown_watts.summary


def test_a_failed_gpu_is_a_cause_in_words() -> None:
    verdict = explain(snap([replace(gpu(), error="GPU is lost")]))
    assert verdict.headline == ("GPU 0 has failed (GPU is lost); a lost GPU can leave its fan at full speed until it "
                                "is reset.")
    assert verdict.causes[0].score == 0.75 and verdict.busy and verdict.confidence == 0.8


def test_labels_and_short_commands() -> None:
    assert short_command(proc(1, "/usr/bin/python3 -m vllm.entrypoints serve")) == "python3 -m vllm.entrypoints"
    assert short_command(proc(1, "python3 -c 'import x'")) == "python3 -c"
    assert short_command(proc(1, "bash -x /opt/run.sh")) == "bash run.sh"
    assert short_command(proc(1, "/opt/bin/trainer --fast")) == "trainer"
    assert short_command(proc(1, "python3 --version")) == "python3"
    assert short_command(proc(1, "python3 'unclosed")) == "python3 'unclosed"
    container = replace(proc(1, "x"), container=ContainerRef(runtime="docker", id="f" * 64, name=None))
    assert who(container) == "alice, container ffffffffffff"
    assert who(replace(proc(1, "x", user=""), unit="ollama.service")) == "service ollama.service"
    assert who(replace(proc(1, "x"), status="outside-namespace")) == "alice, in another PID namespace"
    assert label(replace(proc(9, "x", user=""), command=None, name=None)) == "PID 9"
    assert label(replace(proc(9, "x", user=""), command=None)) == "`x`"


def test_the_cpu_cause_at_its_edges_and_with_its_numbers() -> None:
    assert [c for c in explain(snap([], cpu=50.0)).causes if c.kind == "cpu_load"]  # 50 % counts
    assert [c for c in explain(snap([], cpu=49.9)).causes if c.kind == "cpu_load"] == []
    owner = proc(7, "python3 burn.py", gpu_index=None, cpu=100.0)  # exactly half of two busy cores
    verdict = explain(snap([], [owner], cpu=100.0, cores=2))
    cause = verdict.causes[0]
    assert cause.pid == 7 and "because of `python3 burn.py` (alice) at 100 % of a core" in verdict.headline
    assert dict(cause.numbers) == {"cpu_percent": 100.0, "cpu_temperature_c": 48.0, "process_cpu_percent": 100.0,
                                   "busy_cores": 2.0, "blame": "pid:7"}
    assert cause.score == pytest.approx(0.4 + 0.5 * 100.0 / 100.0)
    assert explain(snap([], [replace(owner, cpu_percent=99.0)], cpu=100.0, cores=2)).causes[0].pid is None
    unknown = replace(snap([], [owner], cpu=100.0, cores=2), host=replace(snap([], cpu=100.0, cores=2).host,
                                                                           cpu_temperature_c=None))
    headline = explain(unknown).headline
    assert headline.endswith("at 100 % of a core.") and "°C" not in headline
    assert "(48 °C)" in explain(snap([], [owner], cpu=60.0, cores=1)).headline


def test_the_spread_groups_by_service_then_container_then_user_and_needs_two_members() -> None:
    def worker(pid: int, **changes: Any) -> Any:
        return replace(proc(pid, f"prog{pid} --x", user=f"u{pid}", gpu_index=None, cpu=30.0), **changes)

    by_unit = [worker(i, unit="ollama.service", command=None, name=None) for i in range(1, 4)]
    assert "spread over 3 processes of service ollama.service: together 90 % of a core" in \
        explain(snap([], by_unit, cpu=60.0, cores=2)).headline
    box = ContainerRef(runtime="docker", id="c" * 64, name=None)
    by_container = [worker(i, container=box) for i in range(1, 4)]
    assert "spread over 3 processes of container cccccccccccc: together 90 % of a core" in \
        explain(snap([], by_container, cpu=60.0, cores=2)).headline
    lone = [worker(1, cpu_percent=80.0), worker(2, cpu_percent=5.0), worker(3, cpu_percent=0.0)]
    verdict = explain(snap([], lone, cpu=95.0, cores=2))
    assert "spread over many processes" in verdict.headline  # one member is not a group, whatever its share
    idle = [worker(1, cpu_percent=0.0), worker(2, cpu_percent=None)]
    assert explain(snap([], idle, cpu=90.0, cores=1)).headline.startswith("The CPU is at 90 % (48 °C), spread over")


def test_fanwhy_is_never_named_as_the_cause() -> None:
    ours = proc(4242, "/usr/bin/python3 -m app", user="fanwhy", gpu_index=None, cpu=95.0)
    theirs = proc(7, "python3 burn.py", gpu_index=None, cpu=40.0)
    state = snap([], [ours, theirs], cpu=70.0, cores=1)
    assert "python3 -m app" in explain(state).headline  # without knowing it is FanWhy, it would be blamed
    mine = replace(state, host=replace(state.host, own_pids=(4242,)))
    headline = explain(mine).headline
    assert "python3 -m app" not in headline and "fanwhy" not in headline
