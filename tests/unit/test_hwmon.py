"""Fans through hwmon, read from real captures (tests/fixtures/hwmon/, each with its source): a board's SmartFan IV
curve, its empty headers, two ThinkPads, an amdgpu card at rest with zero-RPM and one spinning."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.collect.hwmon import read_fans
from app.core.vocabulary import dead_temperature
from app.fans import read
from app.fans.build import fans_of
from app.fans.control_words import pwm_control
from tests.support.hwmon import hwmon_tree, judged_fans


def test_a_board_curve_its_source_and_its_floor(tmp_path: Path) -> None:
    (fan,) = read_fans(hwmon_tree(tmp_path, "nct-ab350-smartfan4"))
    assert fan.channel == 2 and fan.percent == 64.7  # 165 of 255: the curve's first point, the source below 40 °C
    assert fan.curve == ((40.0, 64.7), (50.0, 69.8), (60.0, 80.0), (65.0, 89.8), (70.0, 100.0))
    assert fan.floor_percent == 64.7 and fan.source == "temp2"  # pwm2_temp_sel 2; its temperature file was cut
    assert fan.control == "automatic" and fan.controller == "the chip's own control (pwm_enable 5)"  # no chip name
    assert fan.rpm is None and "tachometer" in fan.unsupported["rpm"] and fan.dead is None


@pytest.mark.parametrize(("chip", "enable", "control", "words"), [
    ("nct6798", 5, "automatic", "SmartFan IV"), ("nct6775", 2, "automatic", "Thermal Cruise"),
    ("nct6687", 99, "automatic", "pwm_enable 99"),  # the out-of-tree driver's non-standard value
    ("thinkpad", 2, "automatic", "embedded controller"), ("amdgpu", 2, "automatic", "firmware"),
    ("it8792", 0, "full-speed", "full speed"), ("nct6798", 1, "manual", "software"), ("dell_smm", None, "unknown", ""),
    # oxp-sensors.rst: 0 lets the EC control the fan (not the ABI's full speed), 1 is manual
    ("oxpec", 0, "automatic", "embedded controller"), ("oxpec", 1, "manual", "software"),
])
def test_each_driver_names_its_own_modes(chip: str, enable: int | None, control: str, words: str) -> None:
    got_control, said = pwm_control(chip, enable)
    assert got_control == control and words in (said or "")


def test_empty_board_headers_are_left_out_with_the_reason(tmp_path: Path) -> None:
    fans = read_fans(hwmon_tree(tmp_path, "nct6798-b550f-headers"))
    alive = {f.channel: f.rpm for f in fans if f.dead is None}
    assert alive == {2: 2119, 3: 1039, 4: 1042}
    dead = {f.channel: f.dead for f in fans if f.dead is not None}
    assert sorted(dead) == [1, 5, 6, 7] and all("0 RPM: no fan on this header" in why for why in dead.values())


def test_a_board_firmwares_empty_header_names_no_bmc(tmp_path: Path) -> None:
    """asus_wmi_sensors reads a desktop board's headers through its firmware (asus_wmi_sensors.rst): a 0 there is a
    header with nothing on it, and no BMC is behind it; a Super-I/O's 0 may be a server board's header its BMC reads."""
    for name in ("asus_wmi_sensors", "nct6776"):
        chip_dir = tmp_path / name / "class" / "hwmon" / "hwmon3"
        chip_dir.mkdir(parents=True)
        for attribute, value in (("name", name), ("fan1_input", "965"), ("fan2_input", "0")):
            (chip_dir / attribute).write_text(value + "\n")
    wmi = {f.channel: f.dead for f in read_fans(tmp_path / "asus_wmi_sensors")}
    superio = {f.channel: f.dead for f in read_fans(tmp_path / "nct6776")}
    assert wmi == {1: None, 2: "0 RPM: no fan on this header"}
    assert superio == {1: None, 2: "0 RPM: no fan on this header (or one the BMC drives)"}


def test_a_thinkpad_fan_is_driven_by_the_embedded_controller(tmp_path: Path) -> None:
    """Under the EC (pwm1_enable 2) thinkpad_acpi's pwm1 shows the level it keeps for manual control (7, 255, until
    one is set: thinkpad_acpi.c, fan_pwm1_show), not the fan's: no duty is read, and the reason is kept."""
    (fan,) = read_fans(hwmon_tree(tmp_path, "thinkpad-t420"))  # acpitz and coretemp have no fans
    assert (fan.id, fan.rpm, fan.percent) == ("hwmon:thinkpad/fan1", 3855, None)
    assert "only under manual control" in fan.unsupported["percent"]
    assert fan.controller == "the embedded controller (EC auto, pwm_enable 2)" and fan.dead is None


def test_a_thinkpad_fan_set_by_hand_reads_its_level(tmp_path: Path) -> None:
    root = hwmon_tree(tmp_path, "thinkpad-t420")
    (root / "class" / "hwmon" / "hwmon1" / "pwm1_enable").write_text("1\n")
    (root / "class" / "hwmon" / "hwmon1" / "pwm1").write_text("109\n")  # level 3: 3 * 255 / 7
    (fan,) = read_fans(root)
    assert fan.percent == 42.7 and "percent" not in fan.unsupported


def test_two_tachometers_share_one_pwm(tmp_path: Path) -> None:
    root = hwmon_tree(tmp_path, "thinkpad-p1-dual-fan")
    assert [(f.channel, f.rpm, f.percent) for f in read_fans(root)] == [(1, 3486, None), (2, 3238, None)]  # no mode
    (root / "class" / "hwmon" / "hwmon4" / "pwm1_enable").write_text("1\n")  # by hand: pwm1 is both fans' level
    assert [(f.channel, f.rpm, f.percent) for f in read_fans(root)] == [(1, 3486, 50.2), (2, 3238, 50.2)]


@pytest.mark.parametrize("name", ["it8686", "nct6798", "dell_smm", "someone_elses_chip"])
def test_a_lone_pwm_drives_only_its_own_channel(tmp_path: Path, name: str) -> None:
    """A board's pwmN drives fan output N (nct6775.rst, it87.rst; dell-smm-hwmon.rst: one pwm per fan): where a
    listing holds pwm1 alone beside fan1 and fan2 (a paste that cut the rest), fan2's duty and control are not
    pwm1's. Only a chip known to set one level for all its fans (the ThinkPad, test above) shares it. A channel's
    fanN_div is its own too."""
    chip = tmp_path / "class" / "hwmon" / "hwmon0"
    chip.mkdir(parents=True)
    for attribute, value in (("name", name), ("fan1_input", "0"), ("fan2_input", "1230"), ("pwm1", "255"),
                             ("pwm1_enable", "1")):
        (chip / attribute).write_text(value + "\n")
    (chip / "fan2_div").write_text("8\n")  # an old chip's divisor (lm-sensors' doc/fan-divisors), read as it is
    fans = {f.channel: f for f in read_fans(tmp_path)}
    assert (fans[1].percent, fans[1].pwm_enable, fans[1].divisor, fans[2].divisor) == (100.0, 1, None, 8)
    assert (fans[2].rpm, fans[2].percent, fans[2].pwm_enable, fans[2].control) == (1230, None, None, "unknown")


def test_an_amdgpu_card_at_rest_is_stopped_not_dead(tmp_path: Path) -> None:
    (fan,) = judged_fans(hwmon_tree(tmp_path, "amdgpu-rx7900xtx"))
    assert fan.rpm == 0 and fan.target_rpm is None and fan.percent == 0.0  # fan1_target repeats fan1_input
    assert fan.stopped and fan.state == "stopped" and fan.dead is None  # zero-RPM idle at 53 °C (duty 0): a state
    assert fan.floor_percent == 15.0 and fan.max_rpm == 3200  # its minimum duty while it runs, from gpu_od
    assert fan.controller == "the GPU's firmware (pwm_enable 2)"


def test_an_amdgpu_card_spinning_without_a_pwm_enable_file(tmp_path: Path) -> None:
    (fan,) = read_fans(hwmon_tree(tmp_path, "amdgpu-rx9070xt"))
    assert (fan.rpm, fan.target_rpm, fan.percent, fan.floor_percent) == (896, None, 31.8, 30.0)
    assert not fan.stopped and fan.dead is None and fan.control == "unknown"  # the card has no pwm1_enable


def test_chips_are_read_in_the_kernels_order(tmp_path: Path) -> None:
    ids = [f.id for f in read_fans(hwmon_tree(tmp_path, "amdgpu-rx9070xt", "thinkpad-p1-dual-fan",
                                              "nct6798-b550f-headers"))]
    assert ids[:3] == ["hwmon:thinkpad/fan1", "hwmon:thinkpad/fan2", "hwmon:amdgpu/fan1"]  # hwmon4, then hwmon5


def test_no_hwmon_at_all_is_no_fan(tmp_path: Path) -> None:
    assert read_fans(tmp_path) == ()


@pytest.mark.parametrize(("celsius", "dead"), [(-70.0, True), (-40.0, True), (-39.5, False), (0.0, True),
                                               (127.0, True), (126.5, False), (123.5, False), (37.0, False),
                                               (-10.0, False)])
def test_open_thermistors_are_not_heat(celsius: float, dead: bool) -> None:
    assert (dead_temperature(celsius) is not None) is dead


def test_a_fan_its_driver_flags_faulted_is_a_failed_fan_not_a_channel_left_out(tmp_path: Path) -> None:
    """``fanN_fault`` 1 is the driver's fault flag (the kernel's hwmon sysfs ABI): the fan is there and failed, so it
    is shown failed with an alarm, never hidden as an empty channel."""
    chip = tmp_path / "class" / "hwmon" / "hwmon0"
    chip.mkdir(parents=True)
    for name, value in (("name", "max31785"), ("fan1_input", "1200"), ("fan1_fault", "1"), ("fan2_input", "4100"),
                        ("fan2_fault", "0")):
        (chip / name).write_text(value + "\n")
    read = {f.channel: f for f in read_fans(tmp_path)}
    assert read[1].dead is None and read[1].fault is True and read[2].fault is None
    judged = {f.channel: f for f in judged_fans(tmp_path)}
    assert judged[1].state == "failed" and judged[1].alarm_kind == "failed"
    assert "its driver reports a fault" in (judged[1].alarm or "")
    assert judged[2].state == "running" and judged[2].alarm is None


def test_two_fans_of_one_label_are_two_fans(tmp_path: Path) -> None:
    """dell_smm labels a fan by its type (dell-smm-hwmon.rst), so a Dell with two CPU fans has fan1_label and
    fan2_label both "Processor Fan" (a real `sensors` listing, lm-sensors' pull request 383): two fans, each with its
    own state. With one key for both, the stopped fan's finding landed on the turning one or on neither (fails
    without the numbering)."""
    chip = tmp_path / "class" / "hwmon" / "hwmon0"
    chip.mkdir(parents=True)
    core = tmp_path / "class" / "hwmon" / "hwmon1"
    core.mkdir(parents=True)
    for folder, files in ((chip, (("name", "dell_smm"), ("fan1_label", "Processor Fan"), ("fan1_input", "0"),
                                  ("fan2_label", "Processor Fan"), ("fan2_input", "4200"),
                                  ("fan3_label", "Motherboard Fan"), ("fan3_input", "1388"))),
                          (core, (("name", "coretemp"), ("temp1_label", "Package id 0"), ("temp1_input", "91000"),
                                  ("temp1_crit", "100000")))):
        for name, value in files:
            (folder / name).write_text(value + "\n")
    assert [f.label for f in read_fans(tmp_path)] == ["Processor Fan", "Processor Fan #2", "Motherboard Fan"]
    judged = {f.channel: f for f in judged_fans(tmp_path)}
    assert judged[1].alarm_kind is not None and judged[1].state != "running"  # the stopped one, the CPU at 91 °C
    assert judged[2].state == "running" and judged[2].alarm is None


HUGE = "9" * 309  # past a 64-bit number: no kernel wrote it (a sysfs number is printed from a long or a u64)


@pytest.mark.parametrize("attribute", ["fan2_input", "pwm2", "pwm2_enable", "fan2_min", "fan2_target", "temp1_input"])
def test_one_unreadable_number_costs_only_its_own_reading(tmp_path: Path, attribute: str) -> None:
    root = hwmon_tree(tmp_path, "nct6798-b550f-headers")
    chip = root / "class" / "hwmon" / "hwmon6"
    (chip / "pwm2").write_text("128\n")
    (chip / "temp1_input").write_text("41000\n")
    (chip / attribute).write_text(HUGE + "\n")
    fans = {f.channel: f for f in judged_fans(root)}
    assert {n: f.rpm for n, f in fans.items() if f.dead is None and n != 2} == {3: 1039, 4: 1042}  # the others kept
    assert 2 in fans  # the fan itself stays, without the value
    if attribute == "fan2_input":
        assert fans[2].rpm is None and "not a reading" in fans[2].unsupported["rpm"]
    else:
        assert fans[2].rpm == 2119


def test_an_unreadable_number_in_a_pasted_tree_costs_one_reading(tmp_path: Path) -> None:
    import json
    from io import StringIO

    from app.cli.replay import run

    capture = tmp_path / "grep.txt"
    lines = (Path(__file__).parent.parent / "fixtures" / "hwmon" / "nct6798-b550f-headers.txt").read_text()
    pasted = "\n".join(f"/sys/class/hwmon/{line}" for line in lines.splitlines() if line.startswith("hwmon6/"))
    capture.write_text(pasted.replace("hwmon6/fan3_input:1039", f"hwmon6/fan3_input:{HUGE}") + "\n")
    out, err = StringIO(), StringIO()
    assert run([capture], as_json=True, out=out, err=err) == 0, err.getvalue()
    fans = {f["id"]: f["rpm"] for f in json.loads(out.getvalue())["fans"]}
    assert (fans["hwmon:nct6798/fan2"], fans["hwmon:nct6798/fan3"], fans["hwmon:nct6798/fan4"]) == (2119, None, 1042)


@pytest.mark.parametrize(("name", "limits"), [("nct6687", False), ("dell_smm", True)])
def test_a_drivers_lowest_and_highest_seen_are_not_the_fans_limits(tmp_path: Path, name: str, limits: bool) -> None:
    """The out-of-tree nct6687 driver shows, as fanN_min and fanN_max, the lowest and highest speeds it has read since
    it loaded (nct6687.c, nct6687_update_fans): a fan at its highest-seen speed is not at its top, and the page does
    not call it full. dell-smm-hwmon.rst documents fanN_max as the fan's maximal speed: there it is one. (Values from
    a real MSI X870 board's ``sensors``: CPU Fan 1581 RPM, min 987, max 1587.)"""
    chip_dir = tmp_path / "class" / "hwmon" / "hwmon3"
    chip_dir.mkdir(parents=True)
    for attribute, value in (("name", name), ("fan1_input", "1581"), ("fan1_min", "987"), ("fan1_max", "1587"),
                             ("temp1_input", "45000")):
        (chip_dir / attribute).write_text(value + "\n")
    (fan,) = judged_fans(tmp_path)
    assert (fan.max_rpm, fan.min_rpm) == ((1587, 987) if limits else (None, None))
    assert (fan.state == "full") is limits
    pasted = f"{name}-isa-0a20\nCPU Fan:       1581 RPM  (min =  987 RPM, max = 1587 RPM)\n"
    (fact,) = fans_of(read.read(pasted)[0])
    assert (fact.max_rpm, fact.min_rpm) == ((1587.0, 987.0) if limits else (None, None))


def test_a_fan_its_device_detects_at_0_is_shown_not_left_out(tmp_path: Path) -> None:
    """The Corsair Commander Pro's driver lists only the connectors its device detects a fan on, labelled by the kind
    found (corsair-cpro.rst: fan[1-6]_label; corsair-cpro.c, get_fan_cnct): a 0 there is a fan that does not turn,
    shown with its alarm, never left out as "no fan on this header". A channel with no such label stays left out."""
    chip_dir = tmp_path / "class" / "hwmon" / "hwmon5"
    chip_dir.mkdir(parents=True)
    for attribute, value in (("name", "corsaircpro"), ("fan1_input", "1190"), ("fan1_label", "fan1 4pin"),
                             ("fan2_input", "0"), ("fan2_label", "fan2 3pin"), ("fan3_input", "0"),
                             ("temp1_input", "31500")):
        (chip_dir / attribute).write_text(value + "\n")
    read = {f.channel: f for f in read_fans(tmp_path)}
    assert read[2].dead is None and read[3].dead is not None
    judged = {f.channel: f for f in judged_fans(tmp_path)}
    assert judged[2].alarm_kind == "stalled" and "detects a fan on its connector" in (judged[2].alarm or "")
    assert judged[1].state == "running" and judged[1].alarm is None


def _gpio_fan(root: Path, rpm: str) -> Path:
    """A gpio-fan as a Buffalo LS-QL's shows it (Debian_on_Buffalo#91: "fan1: 5000 RPM (min = 0 RPM, max = 5000
    RPM)", then 1500 once fan1_target was written with pwm1_enable 1)."""
    chip_dir = root / "class" / "hwmon" / "hwmon0"
    chip_dir.mkdir(parents=True)
    for name, value in (("name", "gpio_fan"), ("fan1_input", rpm), ("fan1_target", rpm), ("fan1_min", "0"),
                        ("fan1_max", "5000"), ("pwm1_enable", "1")):
        (chip_dir / name).write_text(value + "\n")
    return root


def test_a_gpio_fans_speed_is_the_state_it_drives_not_a_count(tmp_path: Path) -> None:
    """gpio-fan.c (fan1_input_show): the speed map's RPM of the state set; nothing counts the fan's turns, so a fan
    that does not turn reads the same. It is the fan's target, never its speed (it was "runs at 5,000 RPM, full")."""
    (fan,) = read_fans(_gpio_fan(tmp_path, "1500"))
    assert (fan.rpm, fan.target_rpm, fan.raw_rpm) == (None, 1500, 1500) and "counts nothing" in fan.unsupported["rpm"]
    (judged,) = judged_fans(tmp_path)
    assert judged.state != "full" and judged.rpm is None
    text = "gpio_fan-isa-0000\nAdapter: ISA adapter\nfan1:        5000 RPM  (min =    0 RPM, max = 5000 RPM)\n"
    (pasted,) = fans_of(read.read(text)[0])
    assert (pasted.rpm, pasted.target_rpm, pasted.invalid) == (None, 5000.0, "not-counted")


def _smart2(root: Path) -> Path:
    """An NZXT Smart Device V2 as its kernel driver lists it (nzxt-smart2.c): FAN 1 detected and at 0 RPM, FAN 2
    with nothing detected (pwm_enable 0), FAN 3 detected and turning; every channel keeps the 40 % last set."""
    chip_dir = root / "class" / "hwmon" / "hwmon5"
    chip_dir.mkdir(parents=True)
    (chip_dir / "name").write_text("nzxtsmart2\n")
    for n, rpm, enable in ((1, 0, 1), (2, 0, 0), (3, 1104, 1)):
        for name, value in ((f"fan{n}_input", rpm), (f"fan{n}_label", f"FAN {n}"), (f"pwm{n}", 102),
                            (f"pwm{n}_enable", enable)):
            (chip_dir / name).write_text(f"{value}\n")
    return root


def test_an_nzxt_smart2s_pwm_enable_is_whether_a_fan_was_detected(tmp_path: Path) -> None:
    """nzxt-smart2.c: pwmN_enable reads fan_type != FAN_TYPE_NONE (read-only, not a mode), the speed of a channel
    with no fan is 0 and its duty is kept: 0 is "no fan detected", never "no control: full speed"; a detected fan
    at 0 RPM is a fan that does not turn, never an empty header left out."""
    fans = {f.channel: f for f in read_fans(_smart2(tmp_path))}
    assert (fans[1].detected, fans[2].detected, fans[3].detected) == (True, False, True)
    assert fans[1].dead is None and fans[2].dead is not None and fans[3].dead is None
    assert "no fan detected" in (fans[2].controller or "") and "full speed" not in (fans[2].controller or "")
    assert fans[3].control == "manual"


def test_a_flow_a_pressure_or_a_water_quality_in_a_fan_channel_is_no_fan(tmp_path: Path) -> None:
    """aquacomputer_d5next.c reports an Octo's or Quadro's flow ("Flow speed [dL/h]"), a High Flow Next's water
    quality ("Water quality [%]") and an Aquastream Ultimate's pressure ("Pressure [mbar]") as fanN_input: the unit in
    the label says it is that quantity, never a fan at that many RPM (live and pasted)."""
    chip_dir = tmp_path / "class" / "hwmon" / "hwmon7"
    chip_dir.mkdir(parents=True)
    for name, value in (("name", "quadro"), ("fan1_input", "740"), ("fan1_label", "Fan 1 speed"),
                        ("fan5_input", "412"), ("fan5_label", "Flow speed [dL/h]"), ("fan6_input", "98"),
                        ("fan6_label", "Water quality [%]"), ("fan7_input", "1020"), ("fan7_label", "Fan [RPM]")):
        (chip_dir / name).write_text(value + "\n")
    assert [f.channel for f in read_fans(tmp_path)] == [1, 7]  # a label whose unit is RPM stays a fan
    text = ("quadro-hid-3-c\nAdapter: HID adapter\nFan 1 speed:          740 RPM\n"
            "Flow speed [dL/h]:    412 RPM\nPressure [mbar]:     1020 RPM\n")
    assert [f.label for f in fans_of(read.read(text)[0])] == ["Fan 1"]  # its section named for the fan
    # a name in brackets is no unit: a tool's "fan2_input [Pump Fan]: 0 RPM" (an MSI B650 owner's listing) stays a fan
    named = "fan1_input [CPU Fan]: 558 RPM\nfan2_input [Pump Fan]: 0 RPM\n"
    assert len(fans_of(read.read(named)[0])) == 2


def test_two_temperatures_of_one_label_are_two_sensors(tmp_path: Path) -> None:
    """dell_smm labels a temperature by its sensor's type (dell-smm-hwmon.rst: CPU, GPU, SODIMM, Other, Ambient), so
    a Dell with two sensors of type "Other" lists "Other" twice: two sensors, the second "Other #2", each its own
    key (with one key the second overwrote the first; fails without the numbering)."""
    from app.collect.hwmon import read_temperatures

    chip = tmp_path / "class" / "hwmon" / "hwmon0"
    chip.mkdir(parents=True)
    for name, value in (("name", "dell_smm"), ("temp1_label", "CPU"), ("temp1_input", "52000"),
                        ("temp2_label", "Other"), ("temp2_input", "44000"), ("temp3_label", "Other"),
                        ("temp3_input", "61000"), ("fan1_label", "Processor Fan"), ("fan1_input", "2900")):
        (chip / name).write_text(value + "\n")
    found = {s.label: s.temperature_c for s in read_temperatures(tmp_path)}
    assert found == {"CPU": 52.0, "Other": 44.0, "Other #2": 61.0}
