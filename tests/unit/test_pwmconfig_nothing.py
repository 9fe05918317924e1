"""pwmconfig's exits before it tests anything (the lm-sensors pwmconfig script: no hwmon device, none with a pwmN
file, none with a fanN_input, none writable): one of the most pasted fan messages, read as what it found missing and
that nothing in Linux then sets the fans' speed. The banner and exit line are as the forums quote them."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.fans.read.daemonlog import events
from tests.unit.test_fan_readers import explain, findings_of

BANNER = ("# pwmconfig version 3.6.0\nThis program will search your sensors for pulse width modulation (pwm)\n"
          "controls, and test each one to see if it controls a fan on\nyour motherboard.\n\n")
SENSORS = "k10temp-pci-00c3\nAdapter: PCI adapter\ntemp1:        +25.8°C  (high = +70.0°C)\n\n"


@pytest.mark.parametrize(("line", "what"), [
    ("/usr/sbin/pwmconfig: There are no pwm-capable sensor modules installed", "no-pwm"),
    ("/usr/sbin/pwmconfig: There are no fan-capable sensor modules installed", "no-fan"),
    ("/usr/sbin/pwmconfig: No sensors found! (modprobe sensor modules?)", "no-sensors"),
    ("There are no usable PWM outputs.", "not-writable")])
def test_each_exit_is_what_it_found_missing(line: str, what: str) -> None:
    assert [(e.daemon, e.event, e.detail) for e in events(BANNER + line + "\n")] == [
        ("pwmconfig", "nothing-to-drive", what)]


def test_no_pwm_output_is_answered_not_refused(tmp_path: Path) -> None:
    """Alone it was refused as no capture; beside sensors it was read as a k10temp and nothing else."""
    for text in (BANNER + "/usr/sbin/pwmconfig: There are no pwm-capable sensor modules installed\n",
                 "$ sensors\n" + SENSORS + "$ sudo pwmconfig\n" + BANNER +
                 "/usr/sbin/pwmconfig: There are no pwm-capable sensor modules installed\n"):
        code, answer = explain(text, tmp_path)
        stopped = [f for f in findings_of(answer) if f["kind"] == "daemon-stopped"]
        assert code == 0 and [(f["facts"]["event"], f["facts"]["detail"], f["confidence"]) for f in stopped] == [
            ("nothing-to-drive", "no-pwm", "known")]
        assert "nothing in Linux sets these fans' speed" in str(answer["sentence"])


def test_thinkfan_that_cannot_drive_the_fan_leaves_it_to_the_ec(tmp_path: Path) -> None:
    """thinkfan's own messages for a fan it cannot drive (messages.h): thinkpad_acpi without fan_control=1, which
    thinkpad-acpi keeps off by default, or no permission; it exits, and the EC's automatic control runs the fan."""
    log = ("Mär 04 10:12:01 x1 thinkfan[2345]: ERROR: Module thinkpad_acpi doesn't seem to support fan_control\n"
           "Mär 04 10:12:01 x1 systemd[1]: thinkfan.service: Control process exited, code=exited, status=1/FAILURE\n")
    assert [(e.daemon, e.event, e.detail) for e in events(log)] == [("thinkfan", "no-fan-control", "fan_control")]
    assert [e.detail for e in events("ERROR: No permission to write to /proc/acpi/ibm/fan. Thinkfan needs to be run "
                                     "as root!\n")] == ["permission"]
    code, answer = explain(log, tmp_path)
    (stopped,) = [f for f in findings_of(answer) if f["kind"] == "daemon-stopped"]
    assert code == 0 and (stopped["facts"]["event"], stopped["confidence"]) == ("no-fan-control", "known")
    assert "the embedded controller's own automatic control runs the fan" in str(answer["sentence"])


def skipped(output: str, value: int, stuck: int) -> str:
    """pwmconfig's lines for one output it tried and skipped, as it prints them (its prompt answered y)."""
    return (f"   {output}           current value: {value}\n{output} is currently setup for automatic speed control.\n"
            "In general, automatic mode is preferred over manual mode, as\nit is more efficient and it reacts faster. "
            "Are you sure that\nyou want to setup this output for manual control? (n) y\n"
            f"{output}_enable stuck to {stuck}\nManual control mode not supported, skipping {output}.\n")


# an MSI board's nct6687, as its pwmconfig run was posted (Fred78290/nct6687d#138)
STUCK = "Found the following PWM controls:\n" + skipped("hwmon8/pwm1", 89, 99) + skipped("hwmon8/pwm2", 255, 99)


def test_outputs_stuck_in_their_mode_stay_under_the_chip_s_own_control(tmp_path: Path) -> None:
    """pwmconfig's pwmdisable writes 0 (full speed), then 1 (manual), to pwmN_enable and, reading neither back,
    prints "stuck to" the mode that stayed and skips the output (an MSI board's nct6687, Fred78290/nct6687d#138):
    said as the driver taking no mode from software there, the outputs in their automatic mode (99: 2 and up is
    automatic, sysfs-interface.rst), never as a write refused for permission or a file not writable."""
    (event,) = events(BANNER + STUCK)
    assert (event.event, event.detail, dict(event.values)["mode"]) == ("no-manual", "hwmon8/pwm1, hwmon8/pwm2", "99")
    code, answer = explain(BANNER + STUCK, tmp_path)
    (stopped,) = [f for f in findings_of(answer) if f["kind"] == "daemon-stopped"]
    assert code == 0 and (stopped["facts"]["event"], stopped["confidence"]) == ("no-manual", "known")
    said = str(answer["sentence"])
    assert "hwmon8/pwm1 and hwmon8/pwm2 under manual control" in said and "an automatic mode" in said
    assert "writable" not in said and "exited" not in said


def test_a_thinkpad_whose_only_output_is_stuck_leaves_nothing_configured(tmp_path: Path) -> None:
    """A ThinkPad's pwmconfig as a forum quotes it: its one output stuck at 2, then "There are no usable PWM outputs."
    That exit is the stuck output's, one event with it (not a second about files not writable); pwmN itself stuck
    (manual taken, the duty not read back) is another failure, not this one."""
    thinkpad = ("hwmon2/device/pwm1 is currently setup for automatic speed control.\n"
                "you want to setup this output for manual control? (n) y\nhwmon2/device/pwm1_enable stuck to 2\n"
                "Manual control mode not supported, skipping hwmon2/device/pwm1.\nThere are no usable PWM outputs.\n")
    (event,) = events(BANNER + thinkpad)
    assert (event.event, event.detail, dict(event.values)["usable"]) == ("no-manual", "hwmon2/device/pwm1", "none")
    said = str(explain(BANNER + thinkpad, tmp_path)[1]["sentence"])
    assert "exited without configuring anything" in said and "pwm_enable 2, an automatic mode" in said
    duty = "hwmon0/pwm1 stuck to 128\nManual control mode not supported, skipping hwmon0/pwm1.\n"
    assert [e.event for e in events(BANNER + duty)] == []
