"""The legion-laptop driver's debug dump (LenovoLegionLinux's ``/sys/kernel/debug/legion/fancurve``), read as its
``debugfs_fancurve_show`` prints it: the values the driver uses (each after its "error" line), not the other access
methods' tries, and the embedded controller's fan_fullspeed and lockfancontroller settings. The dump below is a
real Legion's, pasted in LenovoLegionLinux's issue tracker: its EC method read 18,039 and 14,083 RPM and 80 and
87 °C, the driver's own 1,600 and 1,700 RPM, 52 °C and a sleeping GPU's 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.fans import read
from app.fans.adapt import machine
from app.fans.read import legion
from tests.unit.test_fan_readers import explain, findings_of

DUMP = """EC Chip ID: 5507
EC Chip Version: 2a4
legion_laptop features: fancurve powermode platformprofile platformprofilenotify minifancurve
legion_laptop ec_readonly: 0
temperature access method: 5
CPU temperature error: 0
CPU temperature: {cpu}
CPU temperature EC error: 0
CPU temperature EC: 80
CPU temperature ACPI error: 0
CPU temperature ACPI: 52
GPU temperature error: 0
GPU temperature: 0
GPU temperature EC error: 0
GPU temperature EC: 87
fan speed access method: 5
1 fanspeed error: 0
1 fanspeed: 1600
1 fanspeed EC error: 0
1 fanspeed EC: 18039
2 fanspeed error: {fan2_error}
2 fanspeed: 1700
2 fanspeed EC error: 0
2 fanspeed EC: 14083
fanfullspeed error: 0
fanfullspeed: {full}
EC lockfancontroller error: 0
EC lockfancontroller: {locked}
"""


def dump(cpu: int = 52, fan2_error: int = 0, full: int = 0, locked: str = "false") -> str:
    return DUMP.format(cpu=cpu, fan2_error=fan2_error, full=full, locked=locked)


def test_the_driver_s_own_values_are_read_and_the_other_methods_tries_are_not() -> None:
    facts = machine(read.read(dump())[0])
    assert [(f.label, f.rpm, f.controller) for f in facts.fans] == [("Fan 1", 1600.0, "ec"), ("Fan 2", 1700.0, "ec")]
    assert {t.label: (t.celsius, t.invalid) for t in facts.temperatures} == {
        "CPU temperature": (52.0, None), "GPU temperature": (None, "not-available")}  # a sleeping GPU reads 0
    assert read.read(dump())[1] is not None and "legion" in str(read.read(dump())[1])


def test_a_value_whose_read_failed_is_no_reading() -> None:
    facts = machine(read.read(dump(fan2_error=-5))[0])  # "2 fanspeed error: -5": its 1700 is not what was read
    assert [f.label for f in facts.fans] == ["Fan 1"]


@pytest.mark.parametrize(("full", "locked", "effects"), [(1, "false", ["full"]), (0, "true", ["locked"]),
                                                         (0, "false", [])])
def test_the_ecs_full_speed_and_lock_are_said_as_what_holds_the_fans(full: int, locked: str, effects: list[str],
                                                                       tmp_path: Path) -> None:
    code, answer = explain(dump(full=full, locked=locked), tmp_path)
    found = [f for f in findings_of(answer) if f["kind"] == "ec-setting"]
    assert code == 0 and [f["facts"]["effect"] for f in found] == effects
    assert all(f["confidence"] == "known" for f in found)


def test_the_drivers_files_say_the_same_settings() -> None:
    text = ("$ grep -r . /sys/bus/platform/drivers/legion/PNP0C09:00/\n"
            "/sys/bus/platform/drivers/legion/PNP0C09:00/fan_fullspeed:1\n"
            "/sys/bus/platform/drivers/legion/PNP0C09:00/lockfancontroller:0\n")
    assert [(s.name, s.value) for s in legion.settings(text)] == [("fan_fullspeed", "1"), ("lockfancontroller", "0")]
    assert legion.settings("fanfullspeed: 1\n") == ()  # a line alone, with no dump around it, is not the driver's


def test_golden_sentence_of_full_speed(tmp_path: Path) -> None:
    _, answer = explain(dump(full=1), tmp_path)
    assert str(answer["sentence"]).startswith(
        "The Lenovo Legion embedded controller's fan_fullspeed is 1: the embedded controller runs its fans at their "
        "maximum speed, whatever the temperatures; 0 hands them back to its fan curve.")
