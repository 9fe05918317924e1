"""smfc's log: the level it wrote to each IPMI zone and the temperature that chose it, read as the daemon's own
account of what holds a Supermicro server's fans (smfc runs the BMC in its FULL mode and writes each zone's level).
The v3 lines are smfc's README's own journal sample; the later form is built from its source's log format."""

from __future__ import annotations

from pathlib import Path

from app.fans import read
from app.fans.adapt import machine
from app.fans.read import smfc
from tests.unit.test_fan_readers import explain, findings_of

JOURNAL = ("Sep 19 17:12:39 home smfc.service[1064180]: CPU zone: new level > 39.0C > [T:40.0C/L:61%]\n"
           "Sep 19 17:12:42 home smfc.service[1064180]: CPU zone: new level > 33.0C > [T:35.0C/L:48%]\n"
           "Sep 19 17:13:02 home smfc.service[1064180]: HD zone: new level > 38.0C > [T:38.0C/L:40%]\n"
           "Sep 19 17:48:14 home smfc.service[1064180]: CPU zone: new level > 38.0C > [T:40.0C/L:61%]\n")
SDR = ("FAN1             | 1700 RPM          | ok\nFAN2             | 1800 RPM          | ok\n"
       "FANA             | 900 RPM           | ok\n")


def test_each_logged_level_is_a_decision_of_its_zone() -> None:
    steps = smfc.decisions(JOURNAL)
    assert [(s.what, s.celsius, s.percent) for s in steps] == [
        ("CPU zone", 39.0, 61.0), ("CPU zone", 33.0, 48.0), ("HD zone", 38.0, 40.0), ("CPU zone", 38.0, 61.0)]
    later = smfc.decisions("CPU zone: new fan level > 35%/42.0C, requested by CPU zone\n")
    assert [(s.what, s.celsius, s.percent) for s in later] == [("CPU zone", 42.0, 35.0)]


def test_the_curves_step_is_not_a_reading() -> None:
    """"[T:40.0C/L:61%]" is the step of smfc's curve, not a sensor: only each zone's logged temperature is read."""
    temps = machine(read.read(JOURNAL)[0]).temperatures
    assert {t.label: t.celsius for t in temps} == {"CPU zone temperature": 38.0, "HD zone temperature": 38.0}


def test_each_zone_is_said_held_by_smfc_and_the_bmcs_fans_are_the_daemons(tmp_path: Path) -> None:
    code, answer = explain(SDR + JOURNAL, tmp_path)
    decided = [f for f in findings_of(answer) if f["kind"] == "daemon-decided"]
    assert code == 0 and [(f["facts"]["written_to"], f["facts"]["duty"], f["confidence"]) for f in decided] == [
        ("CPU zone", 61.0, "known"), ("HD zone", 40.0, "known")]
    assert "set by the BMC" not in str(answer["sentence"])  # the BMC runs them at the levels smfc writes
    assert str(answer["sentence"]).startswith(
        "smfc last set the CPU zone's fans to 61 %, its curve's level for 38 °C: it runs the BMC in its FULL fan "
        "mode and writes each zone's level itself, so those fans stay at that level, not at the BMC's own fan mode, "
        "until smfc reads a temperature its curve gives another level.")
