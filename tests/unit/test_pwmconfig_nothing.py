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
