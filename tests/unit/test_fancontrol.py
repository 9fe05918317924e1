"""Configured fan control: /etc/fancontrol files of real machines (tests/fixtures/fancontrol/, each with its source)
read into what each pwm output follows, the fans it drives and its curve."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.collect.fancontrol import parse, printed

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


def listing(text: str, journal: bool = False) -> str:
    """What fancontrol prints as it starts with the file ``text`` (lm-sensors' prog/pwm/fancontrol, LoadConfig: each
    output's "Settings for", "Depends on", "Controls" and its settings, MINPWM 0 and MAXPWM 255 where unset), as a
    terminal shows it or as its service's journal does."""
    values = dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))

    def setting(key: str, output: str, default: str = "") -> str:
        value = values.get(key, "").strip()
        if value and "=" not in value:
            return value  # one bare number for every output
        pairs = [item.split("=", 1) for item in value.split()]
        return "+".join(v for k, v in pairs if k == output) or default

    lines = ["Loading configuration from /etc/fancontrol ...", "", "Common settings:", "  INTERVAL=10"]
    for item in values["FCTEMPS"].split():
        output, source = item.split("=", 1)
        lines += ["", f"Settings for {output}:", f"  Depends on {source}", f"  Controls {setting('FCFANS', output)}"]
        lines += [f"  {key}={setting(key, output, default)}" for key, default in (
            ("MINTEMP", ""), ("MAXTEMP", ""), ("MINSTART", ""), ("MINSTOP", ""), ("MINPWM", "0"), ("MAXPWM", "255"))]
        lines.append("  FCSQUARE=0")
    lines += ["", "Enabling PWM on fans...", "Starting automatic fan control..."]
    prefix = "Dec 01 10:12:03 box fancontrol[812]: " if journal else ""
    return "\n".join(prefix + line for line in lines) + "\n"


@pytest.mark.parametrize("journal", [False, True])
@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.txt")))
def test_the_listing_fancontrol_prints_as_it_starts_declares_what_its_file_does(name: str, journal: bool) -> None:
    """Each output, what it follows, the fans it drives and its curve, read from fancontrol's own listing as from
    the file (the chip is the file's hwmonN: DEVNAME is not in the listing); fails when a key of the listing is not
    read, or an output's settings are taken from another's."""
    text = config(name)
    if "FCTEMPS" not in text:
        assert printed(text) is None
        return
    from_file = [(d.pwm, d.source, d.fans, d.curve, d.floor_percent) for d in parse(text)]
    shown = printed(listing(text, journal))
    assert shown is not None
    assert [(d.pwm, d.source, d.fans, d.curve, d.floor_percent) for d in parse(shown)] == from_file


def test_a_file_is_not_a_listing() -> None:
    assert all(printed(config(p.stem)) is None for p in FIXTURES.glob("*.txt"))


# A ReadyNAS 3138's fancontrol file for its IT8732F, whose firmware left the fans' PWM inverted (255 stops them, 0
# runs them at full speed), from lm-sensors' pull request that let fancontrol take it (lm-sensors/lm-sensors#435)
INVERTED = """INTERVAL=1
MINTEMP=hwmon0/pwm1=40
MAXTEMP=hwmon0/pwm1=70
MINSTART=hwmon0/pwm1=170
MINSTOP=hwmon0/pwm1=190
MINPWM=hwmon0/pwm1=255
MAXPWM=hwmon0/pwm1=0
FCTEMPS=hwmon0/pwm1=hwmon0/temp3_input
DEVPATH=hwmon0=devices/platform/it87.2608
DEVNAME=hwmon0=it8732
"""


def test_an_output_whose_minpwm_is_above_its_maxpwm_is_inverted_and_its_curve_is_the_fans_share() -> None:
    """it87.rst (fix_pwm_polarity: PWM values inverted by the firmware) and fancontrol's inverted mode: below
    MINTEMP it writes 255, which stops the fan; at MAXTEMP 0, full speed. The curve is the fan's share: it was read
    as 100 % while cool falling to 0 % when hot, a fan that slows as it heats."""
    (out,) = parse(INVERTED)
    assert out.inverted and out.floor_percent == 0.0
    assert out.curve == ((40.0, 25.5), (70.0, 100.0))
    (normal,) = parse(INVERTED.replace("MINPWM=hwmon0/pwm1=255", "MINPWM=hwmon0/pwm1=0").replace(
        "MAXPWM=hwmon0/pwm1=0", "MAXPWM=hwmon0/pwm1=255").replace("MINSTOP=hwmon0/pwm1=190", "MINSTOP=hwmon0/pwm1=65"))
    assert not normal.inverted and normal.curve == ((40.0, 25.5), (70.0, 100.0)) and normal.floor_percent == 0.0


def test_a_fan_on_an_inverted_output_reads_its_share_not_the_value_written(tmp_path: Path) -> None:
    """Below MINTEMP fancontrol writes 255 to an inverted output, which stops the fan: the fan is at 0 % of its
    speed, as its curve asks, never "driven at 100 %" and 0 RPM (a stalled fan), nor off its daemon's curve."""
    import io
    import json

    from app.cli.replay import run

    listing = tmp_path / "grep.txt"
    listing.write_text("/sys/class/hwmon/hwmon0/name:it8732\n/sys/class/hwmon/hwmon0/fan1_input:0\n"
                       "/sys/class/hwmon/hwmon0/pwm1:255\n/sys/class/hwmon/hwmon0/pwm1_enable:1\n"
                       "/sys/class/hwmon/hwmon0/temp3_input:35000\n")
    config = tmp_path / "fancontrol"
    config.write_text(INVERTED)
    out, err = io.StringIO(), io.StringIO()
    assert run([listing, config], as_json=True, out=out, err=err) == 0, err.getvalue()
    answer = json.loads(out.getvalue())
    found = {f["kind"]: f["facts"] for f in answer["findings"]}
    assert found["daemon-curve"]["inverted"] == "yes" and found["daemon-curve"]["duty"] == 0.0
    assert found["daemon-curve"]["asks"] == 0.0 and "daemon-not-followed" not in found
    assert answer["fan_facts"][0]["duty_percent"] == 0.0
    assert "duty" not in found.get("headers-read-zero", {})  # not "0 RPM while driven at 100 %"
