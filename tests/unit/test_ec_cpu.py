"""An embedded controller's own reading of the CPU, which its fan follows (system76/ec: the fan's duty is
fan_duty(peci_temp), and system76_acpi's "CPU temp" is that peci_temp, EC RAM 0x07). Shaped on real `sensors`
captures of System76 laptops posted with their stories: after a resume, one EC read the CPU at 100 °C beside
coretemp's 32 °C with its fan at full; another read 0 °C (a failed read) with its fan turning all the time."""

from __future__ import annotations

from pathlib import Path

from app.collect.hwmon import read_temperatures
from tests.support.explained import explained
from tests.support.fan_checks import assert_nothing_dangerous
from tests.support.hwmon import judged_fans

CORETEMP = ("coretemp-isa-0000\nAdapter: ISA adapter\nPackage id 0:  +{cpu}°C  (high = +100.0°C, crit = +100.0°C)\n"
            "Core 0:        +31.0°C  (high = +100.0°C, crit = +100.0°C)\n\n")
EC = "system76_acpi-acpi-0\nAdapter: ACPI interface\nCPU fan:     {rpm} RPM\nCPU temp:    +{ec}°C\n"


def paste(cpu: str, ec: str, rpm: int) -> str:
    return CORETEMP.format(cpu=cpu) + EC.format(ec=ec, rpm=rpm)


def test_an_ec_reading_the_cpu_far_hotter_than_it_is_leads_as_the_cause(tmp_path: Path) -> None:
    text = paste("32.0", "100.0", 7309)
    answer = explained(tmp_path, text)
    lead = answer["findings"][0]
    assert (lead["kind"], lead["confidence"]) == ("ec-cpu-misread", "likely"), answer["findings"]
    assert lead["subjects"] == ["system76_acpi/CPU temp", "system76_acpi/CPU fan"]
    assert (lead["facts"]["ec_c"], lead["facts"]["other_c"]) == (100.0, 32.0)
    assert_nothing_dangerous(text, answer)
    # the EC's reading is what its fan follows: never left out as an input with nothing attached
    assert not any("CPU temp" in line for line in answer.get("left_out", []))
    # a gap a burst can make is not a wrong reading; nor is a stopped fan one that runs for it
    for cpu, ec, rpm in (("75.0", "100.0", 7309), ("32.0", "100.0", 0)):
        kinds = {f["kind"] for f in explained(tmp_path, paste(cpu, ec, rpm))["findings"]}
        assert "ec-cpu-misread" not in kinds, (cpu, ec, rpm, kinds)


def test_an_ec_whose_fan_table_is_not_published_is_only_possibly_misreading(tmp_path: Path) -> None:
    """System76's source shows its fan follows its own CPU reading (likely); a ThinkPad's EC publishes no table, so
    the same gap is only a possible cause, said as a guess."""
    thinkpad = "thinkpad-isa-0000\nAdapter: ISA adapter\nfan1:        4900 RPM\nCPU:         +100.0°C\n"
    answer = explained(tmp_path, CORETEMP.format(cpu="32.0") + thinkpad)
    misread = next(f for f in answer["findings"] if f["kind"] == "ec-cpu-misread")
    assert (misread["confidence"], misread["facts"]["documented"]) == ("possible", "no")
    assert "most likely follows" in answer["sentence"], answer["sentence"]


def test_the_live_reader_keeps_an_ecs_cpu_reading_and_still_drops_an_open_slot(tmp_path: Path) -> None:
    for rel, value in (("hwmon1/name", "coretemp"), ("hwmon1/temp1_label", "Package id 0"),
                       ("hwmon1/temp1_input", "32000"), ("hwmon2/name", "system76_acpi"),
                       ("hwmon2/temp1_label", "CPU temp"), ("hwmon2/temp1_input", "100000"),
                       ("hwmon2/fan1_label", "CPU fan"), ("hwmon2/fan1_input", "7309"),
                       ("hwmon3/name", "thinkpad"), ("hwmon3/temp5_input", "111000")):
        path = tmp_path / "class" / "hwmon" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")
    kept = {(t.chip, t.label) for t in read_temperatures(tmp_path)}
    assert ("system76_acpi", "CPU temp") in kept and ("thinkpad", "temp5") not in kept, kept
    (fan,) = judged_fans(tmp_path)
    assert fan.alarm_kind == "warning" and "32 °C" in (fan.alarm or ""), (fan.state, fan.alarm)


def test_an_ec_that_cannot_read_the_cpu_yet_turns_its_fan_is_not_said_never_to_ask(tmp_path: Path) -> None:
    """peci.c: a failed read reports 0 and runs the fan at 50 %; out of S0 it reports 0 with the fan off. A fan
    that turns beside a 0 °C reading is that failsafe, not a curve that never asks."""
    answer = explained(tmp_path, paste("66.0", "0.0", 5012))
    unread = next(f for f in answer["findings"] if f["kind"] == "ec-cpu-unread")
    assert unread["facts"]["failsafe"] == 50.0 and unread["facts"]["fan_rpm"] == 5012.0
    assert "never asks" not in answer["sentence"] and "50 %" in answer["sentence"]
    stopped = next(f for f in explained(tmp_path, paste("66.0", "0.0", 0))["findings"] if f["kind"] == "ec-cpu-unread")
    assert "failsafe" not in stopped["facts"]
    # an EC whose failsafe no document gives: turning, it follows something other than the CPU; no duty is invented
    thinkpad = "thinkpad-isa-0000\nAdapter: ISA adapter\nfan1:        3100 RPM\nCPU:           +0.0°C\n"
    other = explained(tmp_path, CORETEMP.format(cpu="66.0") + thinkpad)
    unread = next(f for f in other["findings"] if f["kind"] == "ec-cpu-unread")
    assert "failsafe" not in unread["facts"] and "never asks" not in other["sentence"], other["sentence"]


def test_an_ec_reading_a_hot_cpu_far_cooler_than_it_is_is_why_its_fan_is_slow(tmp_path: Path) -> None:
    """The mirror of a reading far hotter: the EC reads 45 °C beside coretemp's 96 °C, so the fan that follows the
    EC's reading (system76/ec's fan_duty(peci_temp)) is asked for a CPU at 45 °C: the cause of its 1,800 RPM, said
    likely; with the fan stopped, the hot CPU without cooling leads and this is said beside it. A CPU that is not
    hot (a reading under HOT_C), or a gap a burst can make, is no such reading."""
    text = paste("96.0", "45.0", 1800)
    answer = explained(tmp_path, text)
    lead = answer["findings"][0]
    assert (lead["kind"], lead["confidence"]) == ("ec-cpu-low", "likely"), answer["findings"]
    assert lead["subjects"] == ["system76_acpi/CPU temp", "system76_acpi/CPU fan"]
    assert (lead["facts"]["ec_c"], lead["facts"]["other_c"], lead["facts"]["rpm"]) == (45.0, 96.0, 1800.0)
    assert_nothing_dangerous(text, answer)
    stopped = explained(tmp_path, paste("96.0", "45.0", 0))
    assert [f["kind"] for f in stopped["findings"][:2]] == ["hot-not-cooled", "ec-cpu-low"]
    assert "slower than the CPU needs" in stopped["sentence"]
    for cpu, ec in (("75.0", "40.0"), ("96.0", "70.0")):
        kinds = {f["kind"] for f in explained(tmp_path, paste(cpu, ec, 1800))["findings"]}
        assert "ec-cpu-low" not in kinds, (cpu, ec, kinds)
