"""A fan a driver lists whether or not one is fitted: asus-wmi (hwmon ``asus``, sensors' ``asus-isa-0000``) lists the
CPU fan the firmware's WMI describes and only guesses from its answer whether one is there
(``drivers/platform/x86/asus-wmi.c``: ``asus_wmi_has_agfn_fan``, "We need to find a better way";
``asus_wmi_has_fan``, "ad hoc solution"); the kernel ignores the fan of a model whose ACPI tables describe one it
does not have (``asus-nb-wmi.c``, quirk ``wmi_ignore_fan``, the VivoBook E410MA). Its 0 is a rest, a count not
filled in, or no fan: never "at rest by design", never "stopped while warm" alone, and on a desktop board the fans
are counted by its Super-I/O chip (nct6775.rst, it87.rst)."""

from __future__ import annotations

from pathlib import Path

from tests.support.fan_checks import assert_nothing_dangerous
from tests.unit.test_fan_readers import BLOCKS, explain, findings_of

# lm-sensors/lm-sensors#134: an ASUS ROG STRIX X470-I (a desktop board) whose asus-isa-0000 cpu_fan reads 0 RPM; the
# maintainer's answer: the board's ITE Super-I/O chip counts the fans, and its driver (it87) was not loaded
X470I = BLOCKS["sensors_laptops_thinkpad_dell_asus-16"]
# lm-sensors/lm-sensors#236: a ZenBook UX431DA whose cpu_fan reads 0 RPM while the fan is heard
UX431 = BLOCKS["sensors_laptops_thinkpad_dell_asus-12"]
IT87 = "\n\nit8665-isa-0290\nAdapter: ISA adapter\nCPU Fan:     1510 RPM  (min =    0 RPM)\n"


def _about(answer: dict[str, object], fan: str) -> list[dict[str, object]]:
    return [f for f in findings_of(answer) if fan in f["subjects"]]


def test_an_asus_wmi_fan_at_0_on_a_desktop_is_said_as_unseen_with_the_board_chip_to_load(tmp_path: Path) -> None:
    code, answer = explain(X470I, tmp_path)
    assert code == 0
    lead = findings_of(answer)[0]
    assert (lead["kind"], lead["subjects"], lead["confidence"]) == ("listed-unfitted", ["asus/cpu_fan"], "possible")
    assert lead["facts"]["board_chip"] == "unread" and lead["facts"]["source"] == "k10temp/Tctl"
    kinds = {f["kind"] for f in _about(answer, "asus/cpu_fan")}
    assert not {"at-rest", "turning", "no-fault"} & kinds  # a 0 nothing vouches for is never a rest or fine
    assert "Super-I/O" in str(answer["sentence"])
    assert_nothing_dangerous(X470I, answer)


def test_with_the_board_chip_read_beside_it_the_desktop_hint_is_not_given(tmp_path: Path) -> None:
    _, answer = explain(X470I + IT87, tmp_path)
    (listed,) = [f for f in findings_of(answer) if f["kind"] == "listed-unfitted"]
    assert listed["facts"]["board_chip"] == "read"
    assert "Super-I/O" not in str(answer["sentence"])


def test_a_laptops_asus_wmi_fan_at_0_while_cool_is_a_rest_a_count_not_filled_or_no_fan(tmp_path: Path) -> None:
    _, answer = explain(UX431, tmp_path)
    about = _about(answer, "asus/cpu_fan")
    assert about[0]["kind"] == "listed-unfitted" and about[0]["confidence"] == "possible"
    fans = answer["fans"]
    assert isinstance(fans, list) and len(fans) == 1
    fan = fans[0]
    assert (fan["state"], fan["stopped"]) == ("unknown", False)  # not "at rest": one of three, none chosen
    assert "at rest by" not in str(answer["sentence"])


def test_a_laptop_read_with_its_battery_is_not_told_of_a_desktop_boards_super_io(tmp_path: Path) -> None:
    """ACPI batteries (drivers/acpi/battery.c) are shown as hwmon named after the supply (power_supply_hwmon.c:
    ``BATT-acpi-0``, ``BAT0-acpi-0``): a portable machine, whose fans are its embedded controller's; the desktop
    board's Super-I/O hint is not given there, and is beside the same listing without the battery."""
    battery = "\nBATT-acpi-0\nAdapter: ACPI interface\nin0:           7.85 V  \ncurr1:         0.00 A  \n"
    for text, chip_said in ((UX431 + battery, "portable"), (UX431, "unread")):
        _, answer = explain(text, tmp_path)
        (listed,) = [f for f in findings_of(answer) if f["kind"] == "listed-unfitted"]
        assert listed["facts"]["board_chip"] == chip_said, listed
        assert ("Super-I/O" in str(answer["sentence"])) == (chip_said == "unread"), answer["sentence"]


def test_a_hot_cpu_beside_an_asus_wmi_fan_at_0_keeps_its_warning(tmp_path: Path) -> None:
    hot = X470I.replace("+77.2°C", "+93.0°C").replace("+67.2°C", "+83.0°C")
    _, answer = explain(hot, tmp_path)
    assert _about(answer, "asus/cpu_fan")[0]["kind"] == "hot-not-cooled"
    assert_nothing_dangerous(hot, answer)


def test_a_fan_that_turns_or_reads_an_error_is_not_this_rule(tmp_path: Path) -> None:
    for speed in ("2400 RPM", "-1 RPM"):
        _, answer = explain(X470I.replace("cpu_fan:        0 RPM", f"cpu_fan:        {speed}"), tmp_path)
        assert "listed-unfitted" not in {f["kind"] for f in findings_of(answer)}


def test_golden_sentences_of_a_fan_listed_whether_or_not_fitted(tmp_path: Path) -> None:
    _, answer = explain(X470I, tmp_path)
    assert str(answer["sentence"]).startswith(
        "The cpu_fan (asus) reads 0 RPM with Tctl (k10temp) at 77 °C, warmer than FanWhy takes such a controller to "
        "rest a fan (a cautious 70 °C; its own figure is not read): not turning, not counted, or no fan at all: its "
        "driver lists the fan the firmware describes "
        "and only guesses whether one is fitted. On a desktop board the fans are counted by its Super-I/O chip, which "
        "is not read here (sensors-detect names its driver).")
    _, answer = explain(UX431, tmp_path)
    assert str(answer["sentence"]).startswith(
        "The cpu_fan (asus) reads 0 RPM with Tdie (k10temp) at 56 °C: at rest, not counted, or no fan at all: its "
        "driver lists the fan the firmware describes and only guesses whether one is fitted.")


def test_an_asus_wmi_fan_at_minus_1_is_its_drivers_error(tmp_path: Path) -> None:
    """asus-wmi's fan1_input_show prints -1 for a value the firmware gave as an error (``value < 0 ? -1 : value *
    100``): the driver's error value, like dell-smm's, not a negative count."""
    _, answer = explain(X470I.replace("cpu_fan:        0 RPM", "cpu_fan:       -1 RPM"), tmp_path)
    lead = findings_of(answer)[0]
    assert (lead["kind"], lead["facts"]["why"]) == ("speed-not-a-reading", "error")


def test_a_board_firmwares_reading_of_its_fan_chip_counts_as_the_board_chip_read(tmp_path: Path) -> None:
    """asus_wmi_sensors reads the board's own fan headers through its firmware (asus_wmi_sensors.rst): beside it the
    board's fans are seen, and the desktop hint is not given."""
    board = "\n\nasuswmisensors-isa-0000\nAdapter: ISA adapter\nCPU Fan:     1180 RPM\n"
    _, answer = explain(X470I + board, tmp_path)
    (listed,) = [f for f in findings_of(answer) if f["kind"] == "listed-unfitted"]
    assert listed["facts"]["board_chip"] == "read"
