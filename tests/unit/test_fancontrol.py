"""Configured fan control: /etc/fancontrol files of real machines (tests/fixtures/fancontrol/, each with its source)
read into what each pwm output follows, the fans it drives and its curve."""

from __future__ import annotations

from pathlib import Path

from app.collect.fancontrol import parse

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "fancontrol"


def config(name: str) -> str:
    return (FIXTURES / f"{name}.txt").read_text()


def test_a_case_fan_that_follows_the_gpu() -> None:
    cpu, case = parse(config("nct6799-amdgpu-k10temp"))
    assert (cpu.chip, cpu.pwm, cpu.source_chip, cpu.source, cpu.fans) == ("nct6799", "pwm5", "k10temp",
                                                                           "temp1_input", ("fan5_input",))
    assert (case.chip, case.pwm, case.source_chip) == ("nct6799", "pwm6", "amdgpu")  # by DEVNAME, not hwmon0
    assert cpu.curve == ((50.0, 9.4), (90.0, 75.3)) and case.curve == ((40.0, 9.4), (80.0, 75.3))  # 24, 192 of 255
    assert cpu.floor_percent == 9.4  # MINPWM 24: it never stops


def test_bare_minpwm_and_maxpwm_apply_to_every_output() -> None:
    (fan,) = parse(config("nct6793-bare-minpwm"))
    assert fan.fans == ("fan2_input",)  # after "FCFANS= " with its stray space
    assert fan.curve == ((50.0, 19.6), (80.0, 94.1)) and fan.floor_percent == 19.6  # MINSTOP 50, MAXPWM 240, MINPWM 50


def test_one_pwm_drives_eight_fans_and_may_stop_them() -> None:
    (fan,) = parse(config("mlxsw-one-pwm-eight-fans"))
    assert fan.fans == tuple(f"fan{n}_input" for n in range(8, 0, -1))
    assert fan.curve == ((40.0, 0.0), (60.0, 100.0)) and fan.floor_percent == 0.0  # MINSTOP 0; MAXPWM by default


def test_an_output_without_a_tachometer() -> None:
    outputs = {d.pwm: d for d in parse(config("it8665-no-tach"))}
    assert set(outputs) == {"pwm1", "pwm2", "pwm3"} and outputs["pwm1"].fans == ()
    assert outputs["pwm3"].fans == ("fan2_input",) and outputs["pwm2"].fans == ("fan1_input",)
    assert {d.source for d in outputs.values()} == {"temp1_input"}


def test_not_a_fancontrol_file_declares_nothing() -> None:
    assert parse("") == () and parse("# a comment\nINTERVAL=10\nFCTEMPS=\n") == ()


def test_a_setting_that_is_not_a_number_leaves_that_point_out() -> None:
    """A damaged line ("MAXTEMP=hwmon4/pwm5=90<br", a number with an editor's or a page's debris on it) drops that
    point of the curve, not the whole file: before, it raised ValueError in the reader's thread."""
    text = config("nct6799-amdgpu-k10temp").replace("hwmon4/pwm5=90", "hwmon4/pwm5=90<br")
    cpu, case = parse(text)
    assert "90<br" in text and cpu.curve == ((50.0, 9.4),) and case.curve == ((40.0, 9.4), (80.0, 75.3))
