"""NoteBook FanControl's configuration read with what its sources say of it: nbfc_service.json(5) (a threshold's
UpThreshold, DownThreshold and FanSpeed; CriticalTemperature, 100 % until CriticalTemperatureOffset under it;
TargetFanSpeeds, -1 for the curve), nbfc-linux's ModelConfig defaults (CriticalTemperature 75 °C) and its
temperature_threshold_manager.c, whose two readings of the thresholds one of its pull requests named: the original
service (and ``LegacyTemperatureThresholdsBehaviour`` true) selects a threshold at its own UpThreshold; nbfc-linux
by default holds it until then and selects the next, so the first threshold's speed holds at every temperature
under its UpThreshold (the story of a real nbfc-linux report: 20 % asked at 38 °C, under a first threshold of 55)."""

from __future__ import annotations

import json
from pathlib import Path

from app.collect import fandaemons, nbfcconfig
from app.fans import read
from tests.unit.test_fan_readers import explain, findings_of
from tests.unit.test_nbfc_status import status

STEPS = [(55, 50, 20.0), (65, 55, 40.0), (75, 65, 70.0), (85, 75, 100.0)]


def model(legacy: bool | None = None, critical: float | None = 90, steps: list[tuple[int, int, float]] = STEPS,
          fans: int = 1) -> str:
    config: dict[str, object] = {"NotebookModel": "HP ZBook Fury 15 G7", "EcPollInterval": 1000}
    if legacy is not None:
        config["LegacyTemperatureThresholdsBehaviour"] = legacy
    if critical is not None:
        config["CriticalTemperature"] = critical
    config["FanConfigurations"] = [
        {"FanDisplayName": f"Fan #{n + 1}", "ReadRegister": 46, "WriteRegister": 46, "MinSpeedValue": 0,
         "MaxSpeedValue": 100,
         "TemperatureThresholds": [{"UpThreshold": u, "DownThreshold": d, "FanSpeed": s} for u, d, s in steps]}
        for n in range(fans)]
    return json.dumps(config, indent=2)


XML = """<?xml version="1.0"?>
<FanControlConfigV2 xmlns:xsd="http://www.w3.org/2001/XMLSchema">
  <NotebookModel>GL753VE</NotebookModel>
  <CriticalTemperature>92</CriticalTemperature>
  <FanConfigurations>
    <FanConfiguration>
      <FanDisplayName>CPU FAN</FanDisplayName>
      <TemperatureThresholds>
{steps}
      </TemperatureThresholds>
    </FanConfiguration>
  </FanConfigurations>
</FanControlConfigV2>
"""


def xml(steps: list[tuple[int, int, float]] = STEPS) -> str:
    return XML.format(steps="\n".join(
        f"<TemperatureThreshold><FanSpeed>{s}</FanSpeed><UpThreshold>{u}</UpThreshold>"
        f"<DownThreshold>{d}</DownThreshold></TemperatureThreshold>" for u, d, s in steps))


def curve(text: str) -> tuple[tuple[float, float], ...]:
    (declared,) = nbfcconfig.parse(text).declared
    return declared.curve


def test_each_program_reads_the_thresholds_as_its_source_does() -> None:
    """nbfc-linux's default holds each speed until its own UpThreshold (20 % under 55 °C, 40 % from 55); the original
    service's XML and nbfc-linux's legacy flag select it at its UpThreshold (40 % from 65 °C); the first threshold's
    speed holds under all of them, from 0 °C, and 100 % from the critical temperature."""
    assert curve(model()) == ((0.0, 20.0), (55.0, 40.0), (65.0, 70.0), (75.0, 100.0))
    assert curve(model(legacy=True)) == ((0.0, 20.0), (65.0, 40.0), (75.0, 70.0), (85.0, 100.0))
    assert curve(xml()) == curve(model(legacy=True))
    assert curve(model(legacy=False)) == curve(model())


def test_the_critical_temperature_runs_the_fans_at_full() -> None:
    """Above CriticalTemperature nbfc asks 100 % whatever the thresholds: a critical temperature under the last
    thresholds cuts them off; a JSON configuration without one has nbfc-linux's default, 75 °C; an XML one without
    one is not given a temperature the original service's default was never read for."""
    assert curve(model(critical=64)) == ((0.0, 20.0), (55.0, 40.0), (64.0, 100.0))
    assert curve(model(critical=None, steps=[(55, 50, 0.0), (70, 60, 50.0), (90, 80, 80.0)])) == (
        (0.0, 0.0), (55.0, 50.0), (70.0, 80.0), (75.0, 100.0))
    no_critical = xml([(0, 0, 0.0), (75, 66, 20.0), (85, 70, 60.0)]).replace(
        "<CriticalTemperature>92</CriticalTemperature>", "")
    assert curve(no_critical) == ((0.0, 0.0), (75.0, 20.0), (85.0, 60.0))


def test_a_configuration_beside_nbfc_status_says_what_it_asks_now(tmp_path: Path) -> None:
    """At 38 °C nbfc-linux's reading asks 20 % of a configuration whose first threshold is at 55 °C: the fan at
    20 % follows it (the real report's puzzle, said: the curve asks it); a fan at 70 % there does not follow, and is
    said so; a fan at a neighbouring level (40 % at 57 °C, just past where it starts) follows it (the levels'
    hysteresis)."""
    code, answer = explain(model() + "\n" + status("21.15", "20.0", temp="38.81", auto="True"), tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and lead["kind"] == "daemon-curve" and lead["subjects"] == ["nbfc/fan1"]
    assert (lead["facts"]["asks"], lead["facts"]["now_c"], lead["facts"]["step0_p"]) == (20.0, 38.81, 20.0)
    _, answer = explain(model() + "\n" + status("70.00", "70.0", temp="38.81", auto="True"), tmp_path)
    assert findings_of(answer)[0]["kind"] == "daemon-not-followed"
    _, answer = explain(model() + "\n" + status("21.00", "20.0", temp="57", auto="True"), tmp_path)
    assert "daemon-not-followed" not in [f["kind"] for f in findings_of(answer)]


def test_a_configuration_is_no_reading() -> None:
    """A model configuration's registers and speeds (MinSpeedValue 0, FanSpeedResetValue) are settings: the general
    reader finds no fan in it (the real GL702ZC configuration gave thirteen "fans", four "not cooling" at 0 %), and
    nbfc status beside it is read."""
    assert read.read(model())[0] == []
    found, _ = read.read(model() + "\n" + status("21.15", "20.0"))
    assert {r.label for r in found} == {"Fan #1", "CPU temperature"}


def test_the_service_settings_select_the_model_and_hold_fans_set_by_hand(tmp_path: Path) -> None:
    """/etc/nbfc/nbfc.json names the model configuration, read from /var/lib/nbfc/configs before
    /usr/share/nbfc/configs (nbfc_service(1)); TargetFanSpeeds holds a fan at its speed (-1: the curve)."""
    etc = tmp_path / "etc"
    (etc / "nbfc").mkdir(parents=True)
    (etc / "nbfc" / "nbfc.json").write_text(json.dumps({"SelectedConfigId": "Zbook", "TargetFanSpeeds": [-1, 45.0]}))
    for folder, critical in (("usr/share/nbfc/configs", 90), ("var/lib/nbfc/configs", 70)):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "Zbook.json").write_text(model(critical=critical, fans=2))
    curves = fandaemons.curves(etc)
    assert [(c.output, c.points) for c in curves] == [
        ("pwm1", ((0.0, 20.0), (55.0, 40.0), (65.0, 70.0), (70.0, 100.0))), ("pwm2", ((0.0, 45.0),))]
    assert nbfcconfig.parse(json.dumps({"TargetFanSpeeds": [60.0]})).declared[0].curve == ((0.0, 60.0),)
    assert not nbfcconfig.parse(json.dumps({"TargetFanSpeeds": [-1]})).declared


def test_golden_sentences_of_an_nbfc_configuration(tmp_path: Path) -> None:
    _, answer = explain(xml([(0, 0, 0.0), (75, 66, 20.0), (80, 70, 40.0)]), tmp_path)
    assert str(answer["sentence"]).startswith(
        "nbfc drives nbfc pwm1 from the temperature nbfc reads (the CPU's by default) for the fan it names CPU FAN: "
        "level by level, 0 % from 0 °C, 20 % from 75 °C, 40 % from 80 °C, 100 % from 92 °C.")


def test_the_real_configurations_posted_are_read(tmp_path: Path) -> None:
    """Two real posts, each cut short: nbfc-linux's JSON of an Asus GL702ZC with its legacy flag and a critical
    temperature of 64 °C under its thresholds at 65-100 °C (28 % until 64 °C, then 100 %: the thresholds above never
    apply), and the original's XML of an Asus GL753VE (0 % until 75 °C); no fan is read from either."""
    from tests.unit.test_fan_readers import BLOCKS
    gl702 = BLOCKS["configs_fancontrol_thinkfan_fan2go-18"]
    gl753 = BLOCKS["configs_fancontrol_thinkfan_fan2go-19"]
    assert curve(gl702) == ((0.0, 28.0), (64.0, 100.0))
    assert curve(gl753) == ((0.0, 0.0), (75.0, 20.0), (80.0, 40.0), (92.0, 100.0))
    for text in (gl702, gl753):
        code, answer = explain(text, tmp_path)
        assert code == 0 and answer["fans"] == [] and findings_of(answer)[0]["kind"] == "daemon-curve"


def test_settings_that_cannot_be_read_say_why(tmp_path: Path) -> None:
    """A damaged /etc/nbfc/nbfc.json, or one naming a model configuration that is not there, declares nothing and
    says why (the source's problem), never a curve."""
    service = nbfcconfig.Service(tmp_path)
    assert service("SelectedConfigId = Zbook").error == "not NBFC's settings: no JSON object in it"
    missing = service(json.dumps({"SelectedConfigId": "Zbook"}))
    assert not missing.declared and "'Zbook' is not under var/lib/nbfc/configs" in str(missing.error)


def test_a_speed_outside_0_to_100_is_refused_as_nbfc_linux_starts(tmp_path: Path) -> None:
    """nbfc_service.json(5): FanSpeed is 0.0 to 100.0; nbfc-linux validates its model configuration as it starts and
    exits on a value outside it: the curve is said as not in effect, the fan left to its firmware, never as what
    drives it."""
    code, answer = explain(model(steps=[(55, 50, 20.0), (65, 55, 140.0)]), tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["facts"]["not_running"], lead["facts"]["refused"]) == ("refused", "out-of-range")
    assert "it is not in effect: nbfc refuses it as it starts (a speed is outside 0-100 %)" in str(answer["sentence"])
    assert "its firmware's own control" in str(answer["sentence"])
    assert "not_running" not in findings_of(explain(model(), tmp_path)[1])[0]["facts"]


def test_a_model_configuration_changed_under_the_same_settings_is_read_again(tmp_path: Path) -> None:
    """The settings' text names the model configuration, so it cannot be the key a parse is kept by: a model edited
    while /etc/nbfc/nbfc.json stays the same is read at the next read (it was kept by the settings' text)."""
    etc = tmp_path / "etc"
    (etc / "nbfc").mkdir(parents=True)
    (etc / "nbfc" / "nbfc.json").write_text(json.dumps({"SelectedConfigId": "Zbook"}))
    folder = tmp_path / "usr/share/nbfc/configs"
    folder.mkdir(parents=True)
    (folder / "Zbook.json").write_text(model(critical=90))
    (source,) = fandaemons.config_sources(etc)
    assert source.read().declared[0].curve[-1] == (75.0, 100.0)
    (folder / "Zbook.json").write_text(model(critical=60))
    assert source.read().declared[0].curve[-1] == (60.0, 100.0)
