"""/proc/i8k's fans as the dell-smm-hwmon driver has them: the left fan is the SMM interface's fan 1 and the right
its fan 0 (linux/i8k.h: I8K_FAN_LEFT 1, I8K_FAN_RIGHT 0), hwmon's fan2 and fan1; a fan whose state and speed both fail
is one the driver does not show (dell_smm_init_hwmon exposes a fan only where the SMM answers for its state or
type); beside the driver's sensors listing each fan is the listed fan of its place."""

from __future__ import annotations

from pathlib import Path

from app.fans import read
from app.fans.adapt import machine
from tests.unit.test_fan_readers import explain, findings_of

LISTING = ("$ sensors\ndell_smm-isa-0000\nAdapter: ISA adapter\n"
           "Processor Fan: 3480 RPM  (min = 0 RPM, max = 4900 RPM)\nCPU:            +52.0°C\nAmbient:        +41.0°C\n")


def test_the_left_fan_is_hwmons_fan2_and_the_right_fan1() -> None:
    """i8kctl(1)'s own example: the left fan high at 8040 RPM, the right low at 6420; each with its own state; and
    i8kfan's left state joins the left fan (i8kfan takes the left fan first)."""
    example = machine(read.read("$ i8kctl\n1.0 A17 B5W123K 52 2 1 8040 6420 1 2\n")[0])
    assert sorted((f.key, f.label, f.rpm, f.duty_percent) for f in example.fans) == [
        ("dell_smm/fan1", "Right fan", 6420.0, 50.2), ("dell_smm/fan2", "Left fan", 8040.0, 100.0)]
    typed = machine(read.read("$ i8kfan 2 0\n2 0\n$ cat /proc/i8k\n1.0 A17 B5W123K 52 2 0 8040 0 1 2\n")[0])
    assert {f.key: (f.label, f.duty_percent) for f in typed.fans} == {"dell_smm/fan1": ("Right fan", 0.0),
                                                                      "dell_smm/fan2": ("Left fan", 100.0)}


def test_a_fan_the_smm_does_not_answer_for_beside_one_it_does_is_not_there(tmp_path: Path) -> None:
    """A laptop with one fan: its left fan's state and speed -1, the right at 3480 RPM: one fan running and the
    left a slot said as most likely empty (never dropped unsaid), not as a speed not known; with neither answering
    both stay, their -1 said."""
    code, answer = explain("$ cat /proc/i8k\n1.0 A22 ABCD123 52 -1 1 -1 3480 -1 -1\n", tmp_path)
    fans = machine(read.read("$ cat /proc/i8k\n1.0 A22 ABCD123 52 -1 1 -1 3480 -1 -1\n")[0]).fans
    assert sorted((f.key, f.rpm, f.present) for f in fans) == [("dell_smm/fan1", 3480.0, None),
                                                               ("dell_smm/fan2", None, False)]
    found = findings_of(answer)
    assert code == 0 and "speed-not-a-reading" not in [f["kind"] for f in found]
    assert any(f["kind"] == "empty-slots" and f["subjects"] == ["dell_smm/fan2"] for f in found)
    both = machine(read.read("$ i8kctl\n1.0 A05 XYZ 61 -1 -1 -1 -1 1 -1\n")[0]).fans
    assert sorted(f.key for f in both) == ["dell_smm/fan1", "dell_smm/fan2"]


def test_beside_the_drivers_listing_each_fan_is_the_listed_fan_of_its_place() -> None:
    """One fan there (the right, fan1), one listed ("Processor Fan"): one fan, with i8k's state as its duty (the
    left, most likely empty, stays i8k's); a listing that names another count of fans is not matched by place."""
    text = "$ cat /proc/i8k\n1.0 A22 ABCD123 52 -1 1 -1 3480 -1 -1\n" + LISTING
    fan, empty = sorted(machine(read.read(text)[0]).fans, key=lambda f: f.present is False)
    assert (empty.label, empty.present) == ("Left fan", False)
    assert (fan.key, fan.label, fan.rpm, fan.duty_percent) == ("dell_smm/Processor Fan", "Processor Fan", 3480.0, 50.2)
    two = "$ cat /proc/i8k\n1.0 A22 ABCD123 52 1 1 2900 3480 -1 -1\n" + LISTING
    assert sorted(f.label for f in machine(read.read(two)[0]).fans) == ["Left fan", "Processor Fan", "Right fan"]
    more = text.replace("CPU:", "Video Fan: 2100 RPM\nCPU:")  # two listed, one there: not matched by place
    assert sorted(f.label for f in machine(read.read(more)[0]).fans) == ["Left fan", "Processor Fan", "Right fan",
                                                                         "Video Fan"]
