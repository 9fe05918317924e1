"""hddfancontrol's log: the hottest drive's temperature of each pass and the speed it set each fan to. Its Python
releases log the speed before their minimum (``--min-fan-speed-prct``) is applied to the pwm they write (their
Fan.setSpeed; the project's maintainer called that line misleading when a user's log showed 0 % and 5 % under a 10 %
minimum: the capture below is that user's journal); its Rust releases log the speed as set ("Fan <pwm> speed set to
40.0%", src/fan/pwm_fan.rs: the second capture is built from those format strings, not pasted from a machine)."""

from __future__ import annotations

from pathlib import Path

from app.fans import read
from app.fans.adapt import machine
from app.fans.answer import explained
from app.fans.read import hddfc
from tests.support.fan_checks import assert_nothing_dangerous
from tests.unit.test_fan_readers import explain

PYTHON = """Jan 13 16:04:19 nasty hddfancontrol[31549]: INFO [Main] Maximum drive temperature: 30 C
Jan 13 16:04:19 nasty hddfancontrol[31549]: INFO [Fan #1] Setting fan speed to 0%
Jan 13 16:04:39 nasty hddfancontrol[31549]: INFO [Main] Maximum drive temperature: 31 C
Jan 13 16:04:39 nasty hddfancontrol[31549]: INFO [Fan #1] Setting fan speed to 5%
"""
RUST = """2024-11-02T10:00:02.331Z INFO  [hddfancontrol] Max drive temperature: 38°C
2024-11-02T10:00:02.332Z INFO  [hddfancontrol] Fan /sys/class/hwmon/hwmon2/pwm2 speed set to 40.0%
2024-11-02T10:01:02.501Z INFO  [hddfancontrol] Max drive temperature: 41°C
2024-11-02T10:01:02.502Z INFO  [hddfancontrol] Fan /sys/class/hwmon/hwmon2/pwm2 speed set to 55.0%
2024-11-02T10:02:02.700Z INFO  [hddfancontrol] All drives are spun down
2024-11-02T10:02:02.701Z INFO  [hddfancontrol] Fan /sys/class/hwmon/hwmon2/pwm2 speed set to 20.0%
"""


def test_each_pass_is_the_hottest_drive_and_the_speed_set_for_it() -> None:
    readings, kind = read.read(PYTHON)
    assert kind is not None and kind.startswith("hddfancontrol's log")
    assert [(r.value, r.unit, r.snapshot) for r in readings] == [(30.0, "c", 0), (31.0, "c", 1)]
    assert [(d.celsius, d.percent, d.why, d.what) for d in hddfc.decisions(PYTHON)] == [
        (30.0, 0.0, "before-minimum", "Fan #1"), (31.0, 5.0, "before-minimum", "Fan #1")]
    # a speed set while every drive sleeps was set for no temperature read: left out, not given the last one
    assert [(d.celsius, d.percent, d.why, d.what) for d in hddfc.decisions(RUST)] == [
        (38.0, 40.0, "curve", "pwm2 (hwmon2)"), (41.0, 55.0, "curve", "pwm2 (hwmon2)")]


def test_the_last_speed_set_is_what_holds_the_fan(tmp_path: Path) -> None:
    code, answer = explain(RUST, tmp_path)
    assert code == 0
    found = answer["findings"]
    assert isinstance(found, list)
    (decided,) = [f for f in found if f["kind"] == "daemon-decided"]
    assert decided["confidence"] == "known"
    assert {k: decided["facts"][k] for k in ("daemon", "duty", "celsius", "why", "written_to")} == {
        "daemon": "hddfancontrol", "duty": 55.0, "celsius": 41.0, "why": "curve", "written_to": "pwm2 (hwmon2)"}
    assert_nothing_dangerous(RUST, answer)
    found = explained(machine(read.read(RUST)[0], decisions=hddfc.decisions(RUST)))[0]
    assert found[0].kind == "daemon-decided"


def test_golden_sentences_of_a_speed_logged_before_and_after_its_minimum(tmp_path: Path) -> None:
    _, answer = explain(PYTHON, tmp_path)
    assert str(answer["sentence"]).startswith(
        "hddfancontrol last set Fan #1 to 5 % for its hottest drive at 31 °C, as this release logs a speed before its "
        "minimum (--min-fan-speed-prct, 20 % unless set) is applied: the fan runs at that minimum or the speed "
        "logged, whichever is higher, written by hddfancontrol itself (pwm_enable 1) from the drives' temperature, "
        "not by the board, until its next pass.")
    _, answer = explain(RUST, tmp_path)
    assert str(answer["sentence"]).startswith(
        "hddfancontrol last set pwm2 (hwmon2) to 55 % for its hottest drive at 41 °C: it sets the pwm itself "
        "(pwm_enable 1) from its drives' hottest temperature (and any other sensor it was given, --hwmons), not "
        "from the board's curve, and the fan holds that speed until its next pass.")
