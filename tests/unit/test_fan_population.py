"""The dangerous answers, looked for on machines nobody pasted: every chip family FanWhy knows (a laptop's embedded
controller, a board's Super-I/O, a GPU, a BMC, a cooler) with a fan in each state a driver can report (turning, 0,
the no-pulse placeholder 65535, -1, a negative count, FAULT, with and without a duty) beside each temperature from cool
to throttling. On every one of them ``fanwhy explain`` answers or refuses, and nothing it finds is dangerous
(tests/support/fan_checks.py): a fan flagged, unreadable or stopped never at rest, fine or turning; a hot part
whose fan does not turn is said."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path

import pytest

from app.cli.replay import run
from app.fans import read
from app.fans.adapt import machine
from tests.support.fan_checks import assert_nothing_dangerous, nvidia_smi_table

CORE = "coretemp-isa-0000\nAdapter: ISA adapter\nPackage id 0:  +{c}.0°C  (high = +100.0°C, crit = +100.0°C)\n"

# Each a chip as ``sensors`` (or its tool) prints it: {speed} is the fan's reading, {c} the part it cools
MACHINES = {
    "thinkpad": "thinkpad-isa-0000\nAdapter: ISA adapter\nfan1:        {speed}\nCPU:          +{c}.0°C\n\n" + CORE,
    "dell_smm": "dell_smm-isa-0000\nAdapter: ISA adapter\nProcessor Fan: {speed}\nCPU:            +{c}.0°C\n\n" + CORE,
    "asus-laptop": "asus-isa-0000\nAdapter: ISA adapter\ncpu_fan:        {speed}\n\n" + CORE,
    "hp-laptop": "hp-isa-0000\nAdapter: ISA adapter\nfan1:        {speed}\nfan2:        {speed}\n\n" + CORE,
    "nct6798": "nct6798-isa-0290\nAdapter: ISA adapter\nfan1:        {speed}  (min =    0 RPM)\n"
               "fan2:        {speed}  (min =    0 RPM)\nSYSTIN:        +31.0°C\n\n" + CORE,
    "it8686": "it8686-isa-0a40\nAdapter: ISA adapter\nCPU Fan:     {speed}  (min =    0 RPM)\n"
              "CPU:           +{c}.0°C  (low  = +0.0°C, high = +90.0°C)  sensor = thermistor\n",
    "amdgpu": "amdgpu-pci-0300\nAdapter: PCI adapter\nfan1:        {speed}  (min =    0 RPM, max = 3300 RPM)\n"
              "edge:         +{c}.0°C  (crit = +100.0°C, hyst = -273.1°C)\n"
              "junction:     +{c}.0°C  (crit = +110.0°C, hyst = -273.1°C)\n",
    "nouveau": "nouveau-pci-0100\nAdapter: PCI adapter\nfan1:        {speed}\ntemp1:        +{c}.0°C  "
               "(high = +95.0°C, hyst =  +3.0°C)\n",
    "bmc": "CPU Temp         | {c}.000     | degrees C  | ok    | 0.000     | 0.000     | 0.000     | 90.000    | "
           "95.000    | 95.000\nFAN1             | {bmc}  | RPM        | {status}    | 300.000   | 500.000   | "
           "700.000   | 25300.000 | 25400.000 | 25500.000\n",
    "cooler": "Corsair Hydro H100i Pro XT\n├── Liquid temperature    33.6  °C\n├── Fan 1 speed           {rpm}  rpm\n"
              "├── Pump speed            {rpm}  rpm\n└── Firmware version     1.1.15\n\n" + CORE,
}

SPEEDS = {"turning": "1240 RPM", "zero": "0 RPM", "placeholder": "65535 RPM", "error": "-1 RPM",
          "negative": "-3200 RPM", "fault": "FAULT", "unread": "N/A"}  # sensors(1): FAULT for fanN_fault, N/A unread
CELSIUS = (35, 55, 75, 88, 97)


def capture(family: str, state: str, celsius: int) -> str:
    speed = SPEEDS[state]
    rpm = speed.split()[0] if state not in ("fault",) else "0"
    rpm = "0" if state == "unread" else rpm
    bmc = "na" if state in ("fault", "unread") else f"{rpm}.000"
    status = "nr" if state in ("fault", "zero") else "ns" if state == "unread" else "ok"
    return MACHINES[family].format(speed=speed, c=celsius, rpm=rpm, bmc=bmc, status=status)


def explain(text: str, folder: Path) -> tuple[int, dict[str, object]]:
    path = folder / "capture.txt"
    path.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    code = run([path], as_json=True, out=out, err=err)
    assert code in (0, 2), err.getvalue()
    return code, json.loads(out.getvalue()) if code == 0 else {}


@pytest.mark.parametrize("family", sorted(MACHINES))
def test_no_fan_state_beside_any_temperature_gives_a_dangerous_answer(family: str, tmp_path: Path) -> None:
    for state, celsius in itertools.product(SPEEDS, CELSIUS):
        text = capture(family, state, celsius)
        code, answer = explain(text, tmp_path)
        assert code == 0, (family, state, celsius)  # every one has readings in it: no refusal
        assert_nothing_dangerous(text, answer)
        # a reading that is no speed is said (a BMC's "na | ns" is a slot with no sensor: ipmitool(1))
        if state in ("placeholder", "error", "negative", "fault", "unread") and (family, state) != ("bmc", "unread"):
            found = answer["findings"]
            assert isinstance(found, list)
            kinds = {f["kind"] for f in found}
            assert kinds & {"speed-not-a-reading", "hot-not-cooled", "fan-fault", "pump-stopped"}, (family, state)
        if family != "cooler":  # every fan line is a fan (a cooler's tree is read with the live liquidctl reader)
            fans = machine(read.read(text)[0]).fans
            assert len(fans) == MACHINES[family].count("{speed}") + MACHINES[family].count("{bmc}"), (family, state)


@pytest.mark.parametrize(("duty", "celsius"), list(itertools.product(("0%", "30%", "100%", "ERR!"), CELSIUS)))
def test_no_geforce_fan_reading_beside_any_temperature_gives_a_dangerous_answer(duty: str, celsius: int,
                                                                                tmp_path: Path) -> None:
    text = nvidia_smi_table(f"| {duty:>4}  {celsius}C    P2   250W / 350W |   9000MiB / 24576MiB |     99%      "
                            "Default |")
    code, answer = explain(text, tmp_path)
    assert code == 0
    assert_nothing_dangerous(text, answer)


def test_a_live_fan_whose_driver_gives_its_error_value_is_not_a_speed(tmp_path: Path) -> None:
    """dell_smm's fan1_input reads -1 where the SMM call fails (Documentation/hwmon/dell-smm-hwmon.rst); the live
    reader keeps it as the raw value, and the wing says it is no speed, as it does of the same line pasted (fails
    when the live path drops the raw value: the fan is then only 'speed unknown', with no finding)."""
    from app.fans.answer import explained
    from tests.support.hwmon import judged_fans

    chip = tmp_path / "class" / "hwmon" / "hwmon3"
    chip.mkdir(parents=True)
    for name, value in (("name", "dell_smm"), ("fan1_input", "-1"), ("fan1_label", "Processor Fan"),
                        ("temp1_input", "52000")):
        (chip / name).write_text(value + "\n")
    found, _, _ = explained(machine([], fans=judged_fans(tmp_path)))
    lead = found[0]
    assert lead.kind == "speed-not-a-reading" and lead.facts["why"] == "error", found


def test_a_pump_at_0_beside_a_hot_cpu_is_most_likely_stopped(tmp_path: Path) -> None:
    """A cooler's pump carries the CPU's heat to the radiator: at 0 rpm beside a CPU at 97 °C (the liquid still
    cool) it has most likely stopped, and the CPU is named; beside a cool CPU it stays possible (its speed may just
    not be reported). Fails when the rule weighs the liquid alone."""
    for celsius, confidence in ((97, "likely"), (35, "possible")):
        _, answer = explain(capture("cooler", "zero", celsius), tmp_path)
        found = answer["findings"]
        assert isinstance(found, list)
        pump = next(f for f in found if f["kind"] == "pump-stopped")
        assert pump["confidence"] == confidence and ("cpu" in pump["facts"]) is (celsius == 97), pump


SYSFS_CHIPS = ("thinkpad", "dell_smm", "nct6798", "it8686", "amdgpu", "nouveau", "asus")
SYSFS_SPEEDS = ("1240", "0", "65535", "-1")
DUTIES = ((None, None), (0, 1), (102, 1), (255, 1), (102, 2), (0, 2))  # (pwm1, pwm1_enable): none, manual, auto


def sysfs(chip: str, speed: str, duty: tuple[int | None, int | None], celsius: int) -> str:
    """``grep . /sys/class/hwmon/hwmon3/*`` of one chip: its name, fan1_input, pwm1 and pwm1_enable where given, and
    its temperature (millidegrees, as sysfs gives them)."""
    root = "/sys/class/hwmon/hwmon3"
    lines = [f"{root}/name:{chip}", f"{root}/fan1_input:{speed}", f"{root}/temp1_input:{celsius * 1000}"]
    pwm, enable = duty
    if pwm is not None:
        lines += [f"{root}/pwm1:{pwm}", f"{root}/pwm1_enable:{enable}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("chip", SYSFS_CHIPS)
def test_no_sysfs_fan_with_any_duty_beside_any_temperature_gives_a_dangerous_answer(chip: str, tmp_path: Path) -> None:
    for speed, duty, celsius in itertools.product(SYSFS_SPEEDS, DUTIES, CELSIUS):
        text = sysfs(chip, speed, duty, celsius)
        code, answer = explain(text, tmp_path)
        assert code == 0, (chip, speed, duty, celsius)
        assert_nothing_dangerous(text, answer)
        found = answer["findings"]
        assert isinstance(found, list)
        kinds = {f["kind"] for f in found}
        if speed in ("65535", "-1") and chip != "nct6798":  # no speed: said (a Super-I/O's 65535 may be no fan)
            assert kinds & {"speed-not-a-reading", "hot-not-cooled", "stalled"}, (chip, speed, duty, celsius, kinds)
        if speed == "0" and duty[0] == 255 and chip in ("amdgpu", "nouveau"):  # full duty, no turn: a card's fan
            assert kinds & {"stalled", "hot-not-cooled"}, (chip, duty, celsius, kinds)


CARDS = ("NVIDIA GeForce RTX 3090", "NVIDIA RTX A6000", "NVIDIA A100-SXM4-80GB", "Tesla T4")
SMI_FANS = ("0 %", "30 %", "100 %", "[N/A]", "[Unknown Error]")


@pytest.mark.parametrize("card", CARDS)
def test_no_nvidia_smi_fan_reading_of_any_card_beside_any_temperature_gives_a_dangerous_answer(card: str,
                                                                                               tmp_path: Path) -> None:
    """nvidia-smi --query-gpu's CSV for a GeForce, a workstation card with a blower, and data-center cards (which
    have no fan of their own: [N/A])."""
    for fan, celsius in itertools.product(SMI_FANS, CELSIUS):
        text = (f"index, name, fan.speed [%], temperature.gpu, power.draw [W]\n"
                f"0, {card}, {fan}, {celsius}, 250.00 W\n")
        code, answer = explain(text, tmp_path)
        assert code == 0, (card, fan, celsius)
        assert_nothing_dangerous(text, answer)
        found = answer["findings"]
        assert isinstance(found, list)
        kinds = {f["kind"] for f in found}
        if fan == "[Unknown Error]":  # a fan nvidia-smi failed to read: never none, never fine
            assert "speed-not-a-reading" in kinds and not {"turning", "at-rest", "no-fault"} & kinds, (card, kinds)
        if fan == "0 %" and celsius >= 75 and "GeForce" in card:  # fan-stop ends well below this
            assert "at-rest" not in kinds, (card, celsius, kinds)


# ipmitool sensor's status column: ok, or the threshold crossed (lnc, lcr, lnr; ipmi_sdr_get_thresh_status); sdr's
# ok, nc, cr, nr, and ns where the sensor gives no reading
BMC_STATES = (("1240.000", "ok"), ("400.000", "cr"), ("0.000", "nr"), ("na", "na"), ("na", "ns"), ("600.000", "ok"),
              ("450.000", "lcr"))


@pytest.mark.parametrize(("speed", "status"), BMC_STATES)
def test_no_bmc_fan_state_beside_any_temperature_gives_a_dangerous_answer(speed: str, status: str,
                                                                          tmp_path: Path) -> None:
    """ipmitool sensor's rows for four fans (one in the state given, three turning) under thresholds of 300, 500
    and 700 RPM, beside a CPU from cool to throttling."""
    for celsius in CELSIUS:
        rows = [f"CPU Temp         | {celsius}.000     | degrees C  | ok    | 0.000     | 0.000     | 0.000     | "
                "90.000    | 95.000    | 95.000"]
        for n, (value, state) in enumerate([(speed, status)] + [("1240.000", "ok")] * 3, start=1):
            rows.append(f"FAN{n}             | {value:<10}| RPM        | {state:<6}| 300.000   | 500.000   | "
                        "700.000   | 25300.000 | 25400.000 | 25500.000")
        text = "\n".join(rows) + "\n"
        code, answer = explain(text, tmp_path)
        assert code == 0, (speed, status, celsius)
        assert_nothing_dangerous(text, answer)
        found = answer["findings"]
        assert isinstance(found, list)
        about = {f["kind"] for f in found if "bmc/FAN1" in f["subjects"]}
        if status in ("cr", "nr", "lcr"):  # the BMC counts it failing: said, never fine
            assert about & {"fan-fault", "below-bmc-threshold", "hot-not-cooled"}, (speed, status, celsius, about)
            assert not about & {"turning", "at-rest"}, (speed, status, celsius, about)
            # nor "none of the fans reports a fault" beside it (found: a fan at 400 RPM under the BMC's
            # lower-critical 500 was the quiet-fan cycle and "none of the 4 fans read here reports a fault")
            assert "no-fault" not in {f["kind"] for f in found}, (speed, status, celsius)


@pytest.mark.parametrize("family", sorted(set(MACHINES) - {"bmc", "cooler"}))
def test_no_two_readings_of_one_machine_in_turn_give_a_dangerous_answer(family: str, tmp_path: Path) -> None:
    """Two ``sensors`` outputs of one machine in one paste, the fan in one state and then another: a fan flagged
    FAULT in either is never at rest or fine for the other's 0 or its speed (found: FAULT then 0 was 'at rest')."""
    for first, then, celsius in itertools.product(("turning", "zero", "fault", "placeholder", "error"),
                                                  ("turning", "zero", "fault", "placeholder", "error"), (35, 97)):
        if first == then:
            continue
        text = capture(family, first, celsius) + "\n" + capture(family, then, celsius)
        code, answer = explain(text, tmp_path)
        assert code == 0, (family, first, then, celsius)
        assert_nothing_dangerous(text, answer)


@pytest.mark.parametrize("chip", SYSFS_CHIPS)
def test_no_live_hwmon_fan_in_any_state_gives_a_dangerous_answer(chip: str, tmp_path: Path) -> None:
    """The same chips, speeds, duties and temperatures as sysfs files read by the live fan reader (the page's,
    top's and the alerts' path), judged by the same wing: nothing dangerous found, and a raw speed that is no speed
    said as it is of a paste (the live reader keeps it as the raw value; fails when the wing drops it)."""
    from app.fans.answer import explained
    from tests.support.fan_checks import assert_nothing_dangerous_in
    from tests.support.hwmon import judged_fans

    for n, (speed, duty, celsius) in enumerate(itertools.product(SYSFS_SPEEDS, DUTIES, CELSIUS)):
        root = tmp_path / str(n)
        folder = root / "class" / "hwmon" / "hwmon3"
        folder.mkdir(parents=True)
        files = {"name": chip, "fan1_input": speed, "temp1_input": str(celsius * 1000)}
        if duty[0] is not None:
            files.update(pwm1=str(duty[0]), pwm1_enable=str(duty[1]))
        for name, value in files.items():
            (folder / name).write_text(value + "\n")
        facts = machine([], fans=judged_fans(root))
        found = [{"kind": f.kind, "subjects": list(f.subjects), "facts": dict(f.facts)} for f in explained(facts)[0]]
        assert_nothing_dangerous_in(facts, found)
        kinds = {f["kind"] for f in found}
        if speed == "-1" and chip in ("dell_smm", "thinkpad", "asus"):  # a driver's error value: no speed, said
            assert kinds & {"speed-not-a-reading", "hot-not-cooled", "stalled"}, (chip, speed, duty, celsius, kinds)


@pytest.mark.parametrize("level", ["auto", "0", "3", "7", "disengaged", "full-speed"])
def test_no_thinkpad_fan_file_at_any_level_gives_a_dangerous_answer(level: str, tmp_path: Path) -> None:
    """``/proc/acpi/ibm/fan`` at each level thinkpad_acpi reports (auto, 0-7, full-speed, disengaged) with a speed of
    0, a turning one and 65535, beside the CPU from cool to throttling: nothing dangerous, and 65535 said as no
    speed (found: it was dropped, and the fan at disengaged was 'at 100 % duty' with nothing said of its reading)."""
    for speed, celsius in itertools.product(("0", "2900", "65535"), CELSIUS):
        text = (f"$ cat /proc/acpi/ibm/fan\nstatus:\t\tenabled\nspeed:\t\t{speed}\nlevel:\t\t{level}\n$ sensors\n"
                + CORE.format(c=celsius))
        code, answer = explain(text, tmp_path)
        assert code == 0, (level, speed, celsius)
        assert_nothing_dangerous(text, answer)
        found = answer["findings"]
        assert isinstance(found, list)
        if speed == "65535":
            assert {"speed-not-a-reading", "hot-not-cooled"} & {f["kind"] for f in found}, (level, celsius, found)


@pytest.mark.parametrize("fan", ["Fan 0 RPM: 0", "Fan 0 RPM: 2400", "Fan 0 stalled (RPM: 65534)", "Fan 0 RPM: 65535"])
def test_no_chrome_ec_fan_beside_any_place_in_its_table_gives_a_dangerous_answer(fan: str, tmp_path: Path) -> None:
    """``ectool temps all`` with the EC's fan table (a CPU sensor from 20 °C below its fan_off to past its fan_max)
    and ``pwmgetfanrpm`` with the fan at 0, turning, marked stalled, or at a count no speed is: nothing dangerous; a
    fan at 0 while the table asks for cooling never at rest (the Chrome EC runs its fans at any share above 0)."""
    header = "--sensor name -------- temperature -------- ratio (fan_off and fan_max) --\n"
    for kelvin in range(318, 385, 6):
        ratio = 0 if kelvin < 338 else 100 if kelvin > 370 else 100 * (kelvin - 338) // 32
        text = (f"$ ectool temps all\n{header}cpu@4c                {kelvin} K (= {kelvin - 273} C)  {ratio:>10}% "
                f"(338 K and 370 K)\n$ ectool pwmgetfanrpm\n{fan}\n")
        code, answer = explain(text, tmp_path)
        assert code == 0, (fan, kelvin)
        assert_nothing_dangerous(text, answer)
        found = answer["findings"]
        assert isinstance(found, list)
        assert any(f["kind"] == "ec-table" and f["facts"]["percent"] == ratio for f in found), (fan, kelvin)
