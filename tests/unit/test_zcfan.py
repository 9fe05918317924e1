"""zcfan's configuration (``/etc/zcfan.conf``): its trip temperatures as the ThinkPad fan's levels from each, as
zcfan(1) documents them (max_temp level 7, med_temp level 4, low_temp level 1; off below the lowest; defaults 90, 80,
70 °C), on the hottest thermal zone (zcfan.c). Before, a pasted zcfan.conf was refused."""

from __future__ import annotations

from pathlib import Path

from app.collect.fandaemons import curves
from app.collect.zcfan import parse
from tests.unit.test_fan_readers import explain, findings_of

MANUAL_EXAMPLE = "max_temp 85\nmed_temp 70\nlow_temp 55\n"  # zcfan(1)'s own example of /etc/zcfan.conf


def test_each_trip_is_a_level_from_that_temperature_and_the_fan_is_off_below_the_lowest() -> None:
    (fan,) = parse(MANUAL_EXAMPLE).declared
    assert (fan.daemon, fan.chip, fan.pwm, fan.stepped, fan.follows) == \
        ("zcfan", "thinkpad", "pwm1", True, "the hottest thermal zone")
    assert fan.curve == ((0.0, 0.0), (55.0, 14.3), (70.0, 57.1), (85.0, 100.0)) and fan.floor_percent == 0.0


def test_a_trip_the_file_leaves_out_keeps_its_default() -> None:
    (fan,) = parse("max_temp 85\nlow_temp 55\n").declared
    assert fan.curve == ((0.0, 0.0), (55.0, 14.3), (80.0, 57.1), (85.0, 100.0))


def test_a_lone_trip_line_or_none_declares_nothing() -> None:
    """One "max_temp 85" line could be anything's setting; a file with no trip line is no zcfan configuration."""
    assert parse("max_temp 85\n").declared == ()
    assert parse("watchdog_secs 10\n").declared == ()
    assert parse("max_temp: 85\nmed_temp: 70\n").declared == ()  # another program's YAML, not zcfan's lines


def test_a_pasted_configuration_is_the_curve_the_fan_runs_on(tmp_path: Path) -> None:
    """The file beside the ThinkPad's /proc/acpi/ibm/fan at level 4: the daemon's steps, the fan's duty now (level
    4 of 7); before, the configuration was refused and only the fan was read."""
    paste = f"$ cat /etc/zcfan.conf\n{MANUAL_EXAMPLE}$ cat /proc/acpi/ibm/fan\nstatus:\t\tenabled\nspeed:\t\t3900\n" \
            "level:\t\t4\n"
    code, answer = explain(paste, tmp_path)
    assert code == 0, answer
    (curve,) = [f for f in findings_of(answer) if f["kind"] == "daemon-curve"]
    assert (curve["facts"]["daemon"], curve["facts"]["step1_c"], curve["facts"]["step3_c"]) == ("zcfan", 55.0, 85.0)
    assert curve["subjects"] == ["thinkpad/fan1"] and curve["facts"]["duty"] == 57.1


def test_the_live_collector_reads_it_where_zcfan_keeps_it(tmp_path: Path) -> None:
    (tmp_path / "zcfan.conf").write_text(MANUAL_EXAMPLE)
    (curve,) = curves(tmp_path)
    assert (curve.daemon, curve.chip, curve.output, curve.stepped) == ("zcfan", "thinkpad", "pwm1", True)
