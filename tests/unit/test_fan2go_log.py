"""fan2go's debug log, as its source writes it (the linear curve's Evaluate: "Evaluating curve '%s'. Sensor '%s'
temp '%.0f°'. Desired PWM: %d"; the controller's setPwm: "Setting target PWM of %s to %d, applying PWM Map yields
%d, expected reported pwm is %d", older releases "Setting PWM of %s to %d, found closest distinct PWM value at %d,
applying PWM Map yields %d"), on the lines of a public report (fan2go's issue 430: a Dell laptop's fan that "does not
go to max": its curve asks 255 at 95 °C, the map yields 210)."""

from __future__ import annotations

from pathlib import Path

from app.fans.read.fan2go import decisions, log_readings
from tests.unit.test_fan_readers import explain, findings_of

LOG = ("  DEBUG   Fan cpu_fan does not support PWM sensor reading, cannot check for third party changes to the PWM "
       "value\n"
       "  DEBUG   Evaluating curve 'cpu_curve'. Sensor 'cpu_sensor' temp '95°'. Desired PWM: 255\n"
       "  DEBUG   PidControlLoop: target(curve): 255, measured(lastPidOutput): 254.9999, result(float): 254.9999\n"
       "  DEBUG   Setting target PWM of cpu_fan to {target}, applying PWM Map yields {sent}, expected reported pwm is "
       "{sent}\n  DEBUG   Setting Fan PWM of 'cpu_fan' to {sent} ...\n")
OLDER = ("DEBUG: Evaluating curve 'cpu_curve'. Sensor 'cpu_sensor' temp '61°'. Desired PWM: 140\n"
         "DEBUG: Setting PWM of cpu_fan to 140, found closest distinct PWM value at 140, applying PWM Map yields 140\n")


def test_each_pass_is_the_sensor_read_and_the_pwm_set_after_the_map() -> None:
    (step,) = decisions(LOG.format(target=255, sent=210))
    assert (step.daemon, step.celsius, step.percent, step.why, step.what, step.asked) == (
        "fan2go", 95.0, 82.4, "map", "cpu_fan", 100.0)
    (older,) = decisions(OLDER)
    assert (older.celsius, older.percent, older.why, older.asked) == (61.0, 54.9, "curve", None)
    assert [(r.label, r.value) for r in log_readings(LOG.format(target=255, sent=210))] == [("cpu_sensor", 95.0)]
    # two fans' loops side by side: two curves evaluated before a pwm is set, which curve was that fan's is not said
    two = OLDER.replace("DEBUG: Setting", "DEBUG: Evaluating curve 'case_curve'. Sensor 'sys' temp '40°'. Desired "
                        "PWM: 60\nDEBUG: Setting")
    assert decisions(two) == ()


def test_a_fan_its_map_keeps_below_the_curve_is_said_so(tmp_path: Path) -> None:
    """The log alone was refused though it reads a temperature; the pwm the map sent leads, known (fan2go's own
    account), with what the curve asked; where the map sends what the curve asks, no such gap is said."""
    code, answer = explain(LOG.format(target=255, sent=210), tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["confidence"]) == ("daemon-decided", "known")
    assert (lead["facts"]["duty"], lead["facts"]["asked"], lead["facts"]["written_to"]) == (82.4, 100.0, "cpu_fan")
    assert "its pwm map sent 82 %" in str(answer["sentence"])
    code, answer = explain(LOG.format(target=255, sent=255), tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and lead["kind"] == "daemon-decided" and "asked" not in lead["facts"]
