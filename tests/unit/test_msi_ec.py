"""The msi-ec driver's files, read as its README documents them: temperatures and fan speeds (in %) of the CPU and
the GPU, and the embedded controller's cooler_boost and fan_mode settings, from `grep -r .` or `cat` sessions."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.fans import read
from app.fans.adapt import machine
from tests.unit.test_fan_readers import explain, findings_of

GREP = ("$ grep -r . /sys/devices/platform/msi-ec/\n/sys/devices/platform/msi-ec/cooler_boost:{boost}\n"
        "/sys/devices/platform/msi-ec/fan_mode:{mode}\n/sys/devices/platform/msi-ec/cpu/realtime_temperature:{cpu}\n"
        "/sys/devices/platform/msi-ec/cpu/realtime_fan_speed:{fan}\n"
        "/sys/devices/platform/msi-ec/gpu/realtime_temperature:0\n/sys/devices/platform/msi-ec/gpu/realtime_fan_speed:0\n")


def grep(boost: str = "off", mode: str = "auto", cpu: int = 52, fan: int = 40) -> str:
    return GREP.format(boost=boost, mode=mode, cpu=cpu, fan=fan)


def test_the_files_are_read_as_the_ecs_fans_and_temperatures() -> None:
    """The GPU's 0 °C (a discrete GPU that is off) is no reading; the CPU fan's 40 % is its duty."""
    facts = machine(read.read(grep())[0])
    assert [(f.label, f.duty_percent, f.controller) for f in facts.fans] == [("CPU fan", 40.0, "ec"),
                                                                            ("GPU fan", 0.0, "ec")]
    assert {t.label: (t.celsius, t.invalid) for t in facts.temperatures} == {"CPU": (52.0, None),
                                                                           "GPU": (None, "not-available")}


@pytest.mark.parametrize(("text", "effect"), [(grep(boost="on", fan=100), "boost"),
                                               (grep(mode="silent", fan=0), "off"),
                                               (grep(mode="basic"), "fixed"),
                                               (grep(mode="advanced"), "levels")])
def test_a_setting_that_holds_the_fans_is_said(text: str, effect: str, tmp_path: Path) -> None:
    code, answer = explain(text, tmp_path)
    found = [f for f in findings_of(answer) if f["kind"] == "ec-setting"]
    assert code == 0 and [f["facts"]["effect"] for f in found] == [effect]


def test_silent_mode_beside_a_hot_cpu_is_not_cooling(tmp_path: Path) -> None:
    """Silent disables the fan: at 91 °C the hot part without cooling leads, and the mode is said as its cause;
    auto at a cool CPU says no setting."""
    code, answer = explain(grep(mode="silent", cpu=91, fan=0), tmp_path)
    kinds = [f["kind"] for f in findings_of(answer)]
    assert code == 0 and kinds[0] == "hot-not-cooled" and "ec-setting" in kinds and "at-rest" not in kinds
    _, answer = explain(grep(), tmp_path)
    assert "ec-setting" not in [f["kind"] for f in findings_of(answer)]


def test_a_cat_session_is_read() -> None:
    text = ("$ cat /sys/devices/platform/msi-ec/cpu/realtime_temperature\n88\n"
            "$ cat /sys/devices/platform/msi-ec/cpu/realtime_fan_speed\n100\n")
    facts = machine(read.read(text)[0])
    assert [(f.label, f.duty_percent) for f in facts.fans] == [("CPU fan", 100.0)]
    assert [t.celsius for t in facts.temperatures] == [88.0]
