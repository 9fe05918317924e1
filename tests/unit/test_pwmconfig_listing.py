"""pwmconfig's own listing, read as lm-sensors' prog/pwm/pwmconfig prints it: the devices' names, the outputs (with
their value and automatic mode where it prints them) and the fan inputs' speeds. Its pwmdisable sets each output it
tests to full speed before it reads the fans ("Giving the fans some time to reach full speed...") and is what it
restores them with, so a paste past that line holds fans at full and is answered with that."""

from __future__ import annotations

from pathlib import Path

from app.fans import read
from app.fans.adapt import machine
from tests.unit.test_fan_readers import explain, findings_of

HEAD = ("# pwmconfig version 3.6.0+git\nFound the following devices:\n   hwmon0 is acpitz\n   hwmon3 is dell_smm\n\n"
        "Found the following PWM controls:\n   hwmon3/pwm1           current value: 128\n"
        "hwmon3/pwm1 is currently setup for automatic speed control.\n")
FANS = ("\nGiving the fans some time to reach full speed...\nFound the following fan sensors:\n"
        "   hwmon3/fan1_input     current speed: 4356 RPM\n   hwmon3/fan2_input     current speed: 0 ... skipping!\n")


def kinds(answer: dict[str, object]) -> list[str]:
    return [f["kind"] for f in findings_of(answer)]


def test_the_listing_names_each_input_by_its_device() -> None:
    """Before the full-speed line the outputs are as the machine had them: pwm1 at 128 under automatic control, read
    as dell_smm's (not as a label "hwmon3/fan1_input current speed"; it was)."""
    facts = machine(read.read(HEAD)[0])
    assert [(f.key, f.duty_percent, f.pwm_enable) for f in facts.fans] == [("dell_smm/fan1", 50.2, 2)]


def test_past_full_speed_the_fans_are_at_full_and_stay_there(tmp_path: Path) -> None:
    """Past "Giving the fans some time to reach full speed..." the speeds are the fans at full and the values
    printed before are gone: no duty is read, and pwmconfig leaving its outputs at full leads (likely: something
    may have set them back since). Fails when the pre-test 50 % is read as the duty beside the full speed, or when
    the event is not read."""
    code, answer = explain(HEAD + FANS, tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["confidence"]) == ("daemon-stopped", "likely")
    assert lead["facts"]["event"] == "left-full"
    facts = machine(read.read(HEAD + FANS)[0])
    assert {(f.key, f.rpm, f.duty_percent) for f in facts.fans} == {("dell_smm/fan1", 4356.0, None),
                                                                    ("dell_smm/fan2", None, None)}
    # "0 ... skipping!" is a 0 or the driver's -1, read with the fans at full: its speed is not known, never a rest
    about_fan2 = {f["kind"] for f in findings_of(answer) if "dell_smm/fan2" in f["subjects"]}
    assert not about_fan2 & {"at-rest", "zero-unjudged", "turning", "no-fault"}, about_fan2
    code, answer = explain(HEAD, tmp_path)
    assert code == 0 and "daemon-stopped" not in kinds(answer)


def test_golden_sentence_of_pwmconfig_left_at_full(tmp_path: Path) -> None:
    _, answer = explain(HEAD + FANS, tmp_path)
    assert str(answer["sentence"]).startswith(
        "pwmconfig set the pwm outputs it tests to full speed (pwm_enable 0, or manual at 255), and that is how it "
        "leaves them when it ends: until fancontrol runs or their automatic mode is set back (pwmN_enable 2 or more, "
        "or a reboot), those fans most likely stay at full; the speeds it printed are the fans at full, not as they "
        "usually run.")


def test_its_no_correlation_verdict_is_read_with_trailing_spaces(tmp_path: Path) -> None:
    """A paste that kept the terminal's trailing spaces ("no correlation   ") is read as the bare one."""
    test = ("Testing pwm control hwmon3/pwm1 ...\n  hwmon3/fan1_input ... speed was 4356 now 4350\n"
            "    no correlation   \n")
    _, answer = explain(HEAD + FANS + test, tmp_path)
    assert "daemon-no-range" in [f["kind"] for f in findings_of(answer)]
