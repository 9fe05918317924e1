"""The fan's rules at their edges: what heats a source, a fan's name and state, how loud it is against its floor, and
each clause of the chain. Written against the mutants `make mutation` left alive in app/core/fan.py and
app/verdict/fanchain.py."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from app.core.fan import AirSensor, Fan, fan_state
from app.verdict.fanchain import chassis_clause, fan_causes, gpu_fan_clause, groups, heat_of, loudness, sentence
from app.verdict.fanwing import DANGER_SCORE, account, danger_causes
from tests.support.builders import gpu, proc, snap


@pytest.mark.parametrize(("source", "heat"), [
    (None, None), ("", None),
    ("GPU 0", "gpu:0"), ("GPU 12", "gpu:12"), ("GPU x", "gpu"),
    ("BMC Inlet Temp", "inlet"), ("BMC Ambient Temp", "inlet"), ("BMC Exhaust Temp", "exhaust"),
    ("BMC CPU1 Temp", "cpu"), ("BMC System Temp", "board"),
    ("coretemp Core 0", "cpu"), ("k10temp Tctl", "cpu"), ("zenpower Tdie", "cpu"),
    ("nct6798 CPUTIN", "cpu"), ("nct6798 PECI Agent 0", "cpu"), ("it8620 Package", "cpu"), ("x tctl", "cpu"),
    ("x tdie", "cpu"), ("nct6798 SYSTIN", "board"), ("acpitz temp1", "unknown"),
    ("amdgpu edge", "gpu"), ("amdgpu mem", "gpu"), ("radeon temp1", "gpu"), ("nvme gpu-bay", "storage"),
])
def test_what_heats_a_source(source: str | None, heat: str | None) -> None:
    assert heat_of(source) == heat


def test_a_daemon_that_follows_the_hottest_of_several_is_heated_by_the_cpu_among_them() -> None:
    assert heat_of("the hottest of coretemp temp2, thinkpad temp3", ("coretemp temp2", "thinkpad temp3")) == "cpu"
    assert heat_of("the hottest of nvme x, thinkpad temp3", ("nvme Composite", "nct6798 SYSTIN")) == "storage"


@pytest.mark.parametrize(("fan", "name"), [
    (Fan("a", "nct6798", 2, None), "nct6798 fan2"),
    (Fan("a", "nct6798", 2, "CPU fan"), "CPU fan (nct6798 fan2)"),
    (Fan("a", "nct6798", 2, "nct6798 fan2"), "nct6798 fan2"),
    (Fan("a", "bmc", 3, "FAN1"), "FAN1 (BMC)"),
    (Fan("a", "bmc", 3, None), "BMC"),
    (Fan("a", "GPU 1", 0, None), "GPU 1 fan 0"),
])
def test_a_fans_name(fan: Fan, name: str) -> None:
    assert fan.name == name
    assert replace(fan, label="Other").name.startswith("Other (")  # made again on a copy


@pytest.mark.parametrize(("fan", "state"), [
    (Fan("a", "c", 1, None, percent=33.0, floor_percent=30.0), "floor"),  # the floor and 3 points above
    (Fan("a", "c", 1, None, percent=33.1, floor_percent=30.0), "running"),
    (Fan("a", "c", 1, None, percent=94.9), "running"),
    (Fan("a", "c", 1, None, percent=0.0), "unknown"),  # 0 % not judged a fan-stop: at rest or stalled, not known
    (Fan("a", "c", 1, None, percent=40.0, rpm=0), "unknown"),  # asked to turn, counts nothing, not judged stalled
    (Fan("a", "c", 1, None, rpm=1050, floor_rpm=1000), "floor"),
    (Fan("a", "c", 1, None, rpm=1051, floor_rpm=1000), "running"),
    (Fan("a", "c", 1, None, rpm=4750, max_rpm=5000), "full"),
    (Fan("a", "c", 1, None, rpm=4749, max_rpm=5000), "running"),
    (Fan("a", "c", 1, None, rpm=4749, max_rpm=0), "running"),
    (Fan("a", "c", 1, None, percent=50, alarm="full speed while x is at 30 °C", alarm_kind="no-heat"), "full"),
    (Fan("a", "c", 1, None, percent=50, alarm="off target: 400 RPM", alarm_kind="off-target"), "off-target"),
    (Fan("a", "c", 1, None, percent=50, alarm="the BMC reports it critical", alarm_kind="failed"), "failed"),
])
def test_fan_state_at_its_edges(fan: Fan, state: str) -> None:
    assert fan_state(fan) == state


def loud(percent: float, floor: float = 30.0, **changes: Any) -> Fan:
    base = Fan("nvml:0/fan0", "GPU 0", 0, None, percent=percent, floor_percent=floor, gpu_index=0, state="running",
               source="GPU 0", source_from="design", source_c=70.0, control="automatic")  # NVML's auto policy
    return replace(base, **changes)


def test_loudness_is_measured_from_the_floor() -> None:
    assert loudness(loud(65.0)) == pytest.approx(0.5)
    assert loudness(loud(100.0)) == 1.0 and loudness(loud(120.0)) == 1.0  # NVML's intended % may pass 100
    assert loudness(loud(20.0)) == 0.0
    assert loudness(loud(50.0, floor=0.0)) == pytest.approx(0.5)
    assert loudness(loud(50.0, state="floor")) == 0.0 and loudness(loud(50.0, state="full")) == 1.0
    # no floor known: judged by the duty (up to 40 % is not loud; 70 % is halfway to full)
    assert loudness(replace(loud(35.0), floor_percent=None)) == 0.0
    assert loudness(replace(loud(70.0), floor_percent=None)) == pytest.approx(0.5)
    rpm = Fan("x", "bmc", 1, "FAN1", rpm=6000, floor_rpm=3000, state="running")
    assert loudness(rpm) == pytest.approx(0.5)  # up to three times its floor, without a maximum
    assert loudness(replace(rpm, max_rpm=9000)) == pytest.approx(0.5)
    assert loudness(replace(rpm, max_rpm=2000)) == pytest.approx(0.5)  # a maximum below the floor is ignored
    assert loudness(replace(rpm, rpm=1000)) == 0.0 and loudness(replace(rpm, rpm=20000)) == 1.0
    assert loudness(replace(rpm, floor_rpm=None)) == 0.0  # no floor and no maximum: nothing to judge it by
    assert loudness(replace(rpm, floor_rpm=None, max_rpm=6000)) == 1.0  # at its maximum


def test_groups_follow_how_a_person_hears_the_fans() -> None:
    card = [loud(60.0), loud(62.0, id="nvml:0/fan1", channel=1)]
    chassis = [Fan("bmc:FAN1", "bmc", 1, "FAN1", rpm=5000, state="running"),
               Fan("bmc:FAN2", "bmc", 2, "FAN2", rpm=0, dead="no reading", state="dead")]
    board = [Fan("hwmon:nct6798/fan2", "nct6798", 2, None, percent=50, state="running", source="nct6798 CPUTIN")]
    found = groups([*card, *chassis, *board])
    assert [g.subject for g in found] == ["GPU 0's fans", "The chassis fans", "The CPU fan (nct6798 fan2)"]
    assert len(found[1].fans) == 1 and found[0].lead.id == "nvml:0/fan1"
    assert groups([card[0]])[0].subject == "GPU 0's fan"
    assert groups([replace(board[0], source="acpitz temp1")])[0].subject == "The nct6798 fan2"


def test_each_clause_of_the_chain() -> None:
    state = snap([gpu(util=90, temp=70, power=300)], [proc(1, "python train.py", sm=90.0)])
    (one,) = groups([loud(65.0, target_percent=None)])
    assert sentence(one, state) == ("GPU 0's fan runs at 65 %, 35 points above its 30 % floor, following the GPU at "
                                    "70 °C: `python train.py` (alice) draws 300 W.")
    unknown = groups([loud(65.0, target_percent=None, control="unknown")])[0]  # nothing says who sets its speed
    assert "probably following the GPU at 70 °C (by design; nothing read says what sets its speed)" in \
        sentence(unknown, state)
    rpm = Fan("hwmon:nct6798/fan1", "nct6798", 1, "Case fan", rpm=1500, target_rpm=1600, floor_rpm=900,
              state="running", source="GPU 0", source_from="learned", confidence=0.83, source_c=70.0)
    (case,) = groups([rpm])
    assert sentence(case, state) == ("The Case fan (nct6798 fan1) runs at 1,500 RPM (target 1,600 RPM), 600 above its "
                                     "idle floor, following GPU 0 at 70 °C (learned from its history, 83 % sure): "
                                     "`python train.py` (alice) draws 300 W.")
    nobody = snap([gpu(util=90, temp=70, power=300)])
    assert sentence(case, nobody).endswith(": GPU 0 draws 300 W and no process on it is known.")
    chassis = Fan("bmc:FAN1", "bmc", 1, "FAN1", rpm=9000, floor_rpm=3000, state="running")
    with_air = replace(nobody, air=(AirSensor("inlet", "Inlet Temp", 24.0),))
    (fans,) = groups([chassis])
    start = "The chassis fans run at 9,000 RPM, 6,000 above their idle floor"
    assert sentence(fans, with_air) == f"{start} (inlet 24 °C): GPU 0 draws 300 W."
    assert sentence(fans, nobody) == f"{start}: GPU 0 draws 300 W."


def test_the_gpus_own_fan_clause() -> None:
    floor = loud(30.0, state="floor")
    rest = loud(0.0, state="stopped", stopped=True)
    assert gpu_fan_clause([], 0) is None and gpu_fan_clause([floor], 1) is None
    assert gpu_fan_clause([rest], 0) == "its fan rests (fan-stop)"
    assert gpu_fan_clause([rest, replace(rest, id="b")], 0) == "its fans rest (fan-stop)"
    assert gpu_fan_clause([floor], 0) == "its fan idles at the floor (30 % is this card's minimum)"
    assert gpu_fan_clause([loud(65.0, target_percent=70.0)], 0) == "its fan runs at 65 % (target 70 %)"
    assert gpu_fan_clause([loud(65.0)], 0) == "its fan runs at 65 %"
    nobody = snap([])
    assert chassis_clause([], nobody) is None and chassis_clause([floor], nobody) is None
    chassis = [Fan("bmc:A", "bmc", 1, "A", rpm=5000, state="running"), Fan("bmc:B", "bmc", 2, "B", rpm=7000,
                                                                         state="running")]
    assert chassis_clause(chassis, nobody) == "the chassis fans run at 7,000 RPM"


def test_fan_causes_are_scored_by_loudness_and_faults_come_apart() -> None:
    state = snap([gpu(util=90, temp=70, power=300)], [proc(1, "python train.py", sm=90.0)])
    assert fan_causes(state) == []
    quiet = replace(state, fans=(loud(32.0, state="floor"),))
    assert fan_causes(quiet) == []
    barely = replace(state, fans=(loud(36.0),))  # under a tenth of its range above the floor
    assert fan_causes(barely) == []
    (cause,) = fan_causes(replace(state, fans=(loud(65.0),)))
    assert cause.kind == "fan" and cause.score == pytest.approx(0.55 + 0.44 * 0.5) and cause.gpu_index == 0
    assert cause.numbers["confidence"] == 1.0 and cause.numbers["fan"] == "nvml:0/fan0"
    learned = loud(65.0, source_from="learned", confidence=0.4)
    assert fan_causes(replace(state, fans=(learned,)))[0].numbers["confidence"] == 0.4
    failed = Fan("bmc:FAN3", "bmc", 3, "FAN3", rpm=0, fault=True, status="cr")  # the BMC's flag, as read
    dead = replace(failed, id="bmc:FAN4", label="FAN4", fault=None, dead="no reading")
    with_fault = replace(state, fans=(failed, dead))
    assert [c for c in fan_causes(with_fault) if c.kind == "fan_fault"] == []  # the loud-fan chain makes none
    found, _sentence, facts = account(with_fault)
    faults = danger_causes(found, facts)  # the fan wing's finding is the one cause of a fault
    assert [c.summary for c in faults] == ["The BMC reports the FAN3 (BMC) failed (status cr, reading 0 RPM): a "
                                           "failed or missing fan; replace or reseat it unless the slot is empty."]
    assert faults[0].score == DANGER_SCORE and faults[0].numbers["finding"] == "fan-fault"
