"""nfancurve's configuration: the stepped curve its script imposes on each NVIDIA fan (temp.sh: 0 % under min_t,
``fcurve[j]`` up to ``tcurve[j]``, 100 % from the last point), read from real configurations (the reference blocks,
each with its source), and what a card's manual-control range makes of its 0 %: refused, the fan held where it was."""

from __future__ import annotations

from pathlib import Path

from app.collect import nfancurve
from tests.unit.test_fan_readers import BLOCKS, explain, findings_of

ISSUE = BLOCKS["configs_fancontrol_thinkfan_fan2go-13"]  # nfancurve#55: its config, and nvidia-settings' range
EXAMPLE = BLOCKS["configs_fancontrol_thinkfan_fan2go-14"]  # the project's own example, an older syntax


def test_each_fan_gets_its_cards_steps() -> None:
    """The steps follow the script: 55 % from min_t (43 °C), each next level a degree past the point before it (a
    temperature at or under 55 °C still gets 55 %), 100 % from the last point; fan2gpu puts fans 0-1 on card 0 and
    2-3 on card 1, each card's fans numbered from 0 (fails with a level taken to start at its own point)."""
    declared = nfancurve.parse(ISSUE).declared
    assert [d.pwm for d in declared] == ["gpu0 fan 0", "gpu0 fan 1", "gpu1 fan 0", "gpu1 fan 1"]
    assert declared[0].curve == ((43.0, 55.0), (56.0, 70.0), (66.0, 85.0), (76.0, 95.0), (86.0, 99.0), (95.0, 100.0))
    assert declared[0].floor_percent == 0.0 and declared[0].stepped and declared[0].chip == "nvidia"
    assert declared[2].follows == "GPU 1's temperature"


def test_the_older_syntax_and_its_minimum_of_0() -> None:
    """``declare -a fcurve=( "20" ... )`` and ``min_temp``: 20 % up to 30 °C (from 0 °C: no 0 % below it to say),
    35 % from 31 °C, as the example's own comments describe it."""
    (fan,) = nfancurve.parse(EXAMPLE).declared
    assert fan.curve == ((0.0, 20.0), (31.0, 35.0), (41.0, 50.0), (51.0, 70.0), (66.0, 85.0), (75.0, 100.0))
    assert nfancurve.parse("fcurve=\"55 70\"\ntcurve=\"55\"\n").declared == ()  # lists of two lengths: none


def test_a_zero_the_card_refuses_is_said_with_what_follows(tmp_path: Path) -> None:
    """The script asks 0 % under min_t; a card that accepts 30-100 % under manual control (nvidia-settings' range in
    the same paste) refuses it, so the fan stays at the last duty set: the thread's fans stuck at 55 % below 43 °C
    (fails when the range is not weighed against the curve's lowest duty)."""
    code, answer = explain(ISSUE, tmp_path)
    curve = next(f for f in findings_of(answer) if f["kind"] == "daemon-curve" and f["subjects"])
    assert code == 0 and curve["facts"]["refused_below"] == 30.0 and curve["facts"]["lowest"] == 0.0
    sentence = str(answer["sentence"])
    assert sentence.startswith("nfancurve drives nvidia gpu0 fan 0 from GPU 0's temperature: 0 % below 43 °C, then "
                               "level by level, 55 % from 43 °C, 70 % from 56 °C")
    assert "the duty is refused and the fan stays at the last one set" in sentence
    code, answer = explain(EXAMPLE, tmp_path)  # no range read: the curve alone, nothing said of a refusal
    assert code == 0 and "refused" not in str(answer["sentence"]) and "below 0 °C" not in str(answer["sentence"])
    assert "level by level, 20 % from 0 °C, 35 % from 31 °C" in str(answer["sentence"])


def test_one_curve_on_a_cards_fans_is_said_once(tmp_path: Path) -> None:
    """Card 1's two fans take the same steps from the same temperature: one sentence names both."""
    _, answer = explain(ISSUE, tmp_path)
    assert "nfancurve drives nvidia gpu1 fan 0 and nvidia gpu1 fan 1 from GPU 1's temperature" in str(
        answer["sentence"])


def test_the_live_collector_reads_it_where_its_unit_keeps_it(tmp_path: Path) -> None:
    """nfancurve.service starts the script with ``-c /etc/nfancurve.conf``: the live collector's curves."""
    from app.collect.fandaemons import curves

    (tmp_path / "nfancurve.conf").write_text(EXAMPLE)
    (found,) = curves(tmp_path)
    assert (found.daemon, found.chip, found.output, found.stepped) == ("nfancurve", "nvidia", "gpu0 fan 0", True)
    assert found.drives("nvidia/gpu0 fan 0")


def test_a_refusal_is_said_only_of_a_card_whose_driver_refuses() -> None:
    """nvidia-settings refuses a GPUTargetFanSpeed out of its range and keeps the last one (its error names the valid
    range); a fan whose driver documents no refusal (an AMD card's floor under a fancontrol curve asking 0 %) is not
    said refused (fails when any fan with a floor under manual control is said so)."""
    from app.fans.answer import explained
    from app.fans.facts import Curve, FanFact, Machine

    curve = Curve("fancontrol", "amdgpu", "pwm1", "temp1_input", ((40.0, 20.0), (70.0, 100.0)), 0.0)
    amd = FanFact(key="amdgpu/fan1", chip="amdgpu", label="fan1", floor_percent=15.0, controller="manual")
    found, _, _ = explained(Machine(fans=(amd,), curves=(curve,)))
    assert "refused_below" not in next(f for f in found if f.kind == "daemon-curve").facts
    nvidia = FanFact(key="nvidia/gpu0 fan 0", chip="nvidia", label="gpu0 fan 0", floor_percent=30.0,
                     controller="manual")
    on_card = Curve("nfancurve", "nvidia", "gpu0 fan 0", None, ((43.0, 55.0), (95.0, 100.0)), 0.0, stepped=True)
    found, _, _ = explained(Machine(fans=(nvidia,), curves=(on_card,)))
    assert next(f for f in found if f.kind == "daemon-curve").facts["refused_below"] == 30.0
