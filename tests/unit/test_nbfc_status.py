"""NoteBook FanControl's ``nbfc status`` read with what nbfc-linux's src/fan.c says of its fields: the current speed
is the embedded controller's read register scaled between the configuration's minimum and maximum speed values (a
share outside 0-100 % means those do not fit the machine), the target is what nbfc writes each cycle, and critical
mode asks 100 % until the temperature is 15 °C under the critical one. Each status is written in the shape
``nbfc status -a`` prints (its README; the field names of src/client/cmd_status.c)."""

from __future__ import annotations

from pathlib import Path

from app.fans import read
from app.fans.adapt import machine
from tests.unit.test_fan_readers import explain, findings_of

STATUS = ("$ nbfc status -a\nRead-only               : False\nSelected config name    : HP ProBook 4520s\n"
          "Temperature             : {temp}\n\nFan display name        : Fan #1\n"
          "Auto control enabled    : {auto}\nCritical mode enabled   : {critical}\n"
          "Current fan speed       : {current}\nTarget fan speed        : {target}\nFan speed steps         : 40\n")


def status(current: str, target: str, temp: str = "45.00", auto: str = "False", critical: str = "False") -> str:
    return STATUS.format(current=current, target=target, temp=temp, auto=auto, critical=critical)


def kinds(answer: dict[str, object]) -> list[str]:
    return [f["kind"] for f in findings_of(answer)]


def test_a_current_speed_outside_0_to_100_percent_is_not_a_reading(tmp_path: Path) -> None:
    """182.50 % read back while 100 % is asked (a configuration for another model): not a duty, never "held at
    182 % by hand"; the speed is not known. A negative share beside 81 °C is said with the heat (fails when the
    share is taken as the fan's duty, as it was)."""
    facts = machine(read.read(status("182.50", "100.00"))[0])
    assert [(f.duty_percent, f.target_percent, f.invalid, f.raw) for f in facts.fans] == [
        (None, 100.0, "off-scale", "182.50 %")]
    code, answer = explain(status("182.50", "100.00"), tmp_path)
    assert code == 0 and kinds(answer)[0] == "speed-not-a-reading" and "fixed-duty" not in kinds(answer)
    code, answer = explain(status("-64.29", "20.00", temp="81", auto="True"), tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and lead["kind"] == "speed-not-a-reading" and lead["facts"]["hot"] == "yes"
    assert lead["facts"]["why"] == "off-scale" and "at-rest" not in kinds(answer)


def test_a_speed_asked_that_the_controller_does_not_read_back_is_said(tmp_path: Path) -> None:
    """0 % asked by hand and 14.29 % read back (one of 7 steps): the fan is not at the speed asked (possible: it
    may still be changing); 20 % asked and 21.15 % read back is the speed asked, and nothing is flagged."""
    code, answer = explain(status("14.29", "0.00"), tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and lead["kind"] == "read-back-off-target" and lead["confidence"] == "possible"
    assert (lead["facts"]["asked"], lead["facts"]["reads"]) == (0.0, 14.29)
    code, answer = explain(status("21.15", "20.0", auto="True"), tmp_path)
    assert code == 0 and "read-back-off-target" not in kinds(answer)
    code, answer = explain(status("91.00", "100.00"), tmp_path)
    assert "read-back-off-target" not in kinds(answer)  # 9 points: within a controller's steps


def test_critical_mode_is_why_the_fan_is_at_full(tmp_path: Path) -> None:
    """Critical mode enabled: True: nbfc asks 100 % whatever its curve, until 15 °C under the critical temperature;
    that leads, about the fan nbfc names. With critical mode off at the same speeds it is not found."""
    code, answer = explain(status("100.00", "100.00", temp="91.00", auto="True", critical="True"), tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and lead["kind"] == "daemon-critical" and lead["subjects"] == ["nbfc/fan1"]
    assert lead["facts"]["offset_c"] == 15.0
    code, answer = explain(status("100.00", "100.00", temp="91.00", auto="True"), tmp_path)
    assert code == 0 and "daemon-critical" not in kinds(answer)


def test_a_quoted_status_is_read() -> None:
    """A status pasted as a quote ("> " before each line) is read like the bare one (it was: no fan read)."""
    quoted = "".join(f"> {line}\n" for line in status("45.00", "45.00").splitlines())
    assert [(f.label, f.duty_percent) for f in machine(read.read(quoted)[0]).fans] == [("Fan #1", 45.0)]


def test_a_status_printed_twice_is_two_snapshots_of_one_fan() -> None:
    """nbfc status run twice in one paste (a speed set by hand, then auto): one fan and one temperature, read in two
    snapshots, the last one current (each was doubled, the second temperature "CPU temperature #2"); with -f (fans
    only, no header) the fan's name met again starts the next snapshot too, while two fans of one status stay one."""
    twice = status("-64.29", "100.00", temp="75") + "\n" + status("-64.29", "20.00", temp="81", auto="True")
    facts = machine(read.read(twice)[0])
    assert facts.snapshots == 2 and [(f.label, f.target_percent) for f in facts.fans] == [("Fan #1", 20.0)]
    assert [(t.label, t.celsius) for t in facts.temperatures] == [("CPU temperature", 81.0)]
    fans_only = "\n".join(status("30.00", "30.00").split("\n\n")[1] for _ in range(2))
    assert machine(read.read(fans_only)[0]).snapshots == 2
    two_fans = status("30.00", "30.00") + "\n" + status("40.00", "40.00").split("\n\n")[1].replace("#1", "#2")
    assert [f.label for f in machine(read.read(two_fans)[0]).fans] == ["Fan #1", "Fan #2"]


def test_golden_sentences_of_nbfc(tmp_path: Path) -> None:
    _, answer = explain(status("182.50", "100.00"), tmp_path)
    assert str(answer["sentence"]).startswith(
        "The Fan #1 (nbfc) reads 182.50 %, outside 0-100 %: the register read back does not fit the range it is "
        "scaled against (a configuration written for another model): how fast it turns is not known.")
    _, answer = explain(status("14.29", "0.00"), tmp_path)
    assert str(answer["sentence"]).startswith(
        "The Fan #1 (nbfc) is asked for 0 % and its controller reads back 14 %: the fan is not at the speed asked: "
        "still changing, or the register written does not drive this fan (a configuration written for another "
        "model); read it again, and listen.")
    _, answer = explain(status("100.00", "100.00", temp="91.00", auto="True", critical="True"), tmp_path)
    assert str(answer["sentence"]).startswith(
        "The Fan #1 (nbfc) is in nbfc's critical mode: the temperature passed its configuration's critical "
        "temperature, so nbfc asks 100 % whatever its curve or a speed set by hand, until the temperature is 15 °C "
        "under that critical temperature.")
