"""A fan read in several snapshots of one paste (a loop of ``sensors``, ``watch``): one whose speed rises and falls
with the temperature it follows is said as following it (a curve's duty is a function of its temperature: hwmon's
pwmN_auto_point; fancontrol computes the duty each interval), never where the fan jitters, where the temperature
stands still, where they move apart, or where the fan only ramps one way."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.fans import read
from app.fans.adapt import machine
from app.fans.answer import explained
from app.fans.rules_turn import swings_with_source
from tests.unit.test_fan_readers import explain, findings_of

SNAPSHOT = ("nct6798-isa-0290\nAdapter: ISA adapter\nCPUTIN:         +{board:.1f}°C  (high = +80.0°C, hyst = +75.0°C)\n"
            "fan2:          {rpm} RPM  (min =    0 RPM)\n\nk10temp-pci-00c3\nAdapter: PCI adapter\n"
            "Tctl:         +{cpu:.1f}°C\n\n")


def paste(rows: list[tuple[float, float]]) -> str:
    """One `sensors` snapshot a row of (fan RPM, CPU °C), the board's sensor steady at 35 °C."""
    return "".join(SNAPSHOT.format(rpm=int(rpm), cpu=cpu, board=35.0) for rpm, cpu in rows)


def test_a_fan_rising_and_falling_with_the_cpu_is_said_as_following_it(tmp_path: Path) -> None:
    code, answer = explain(paste([(780, 48), (1650, 74), (790, 49), (1640, 73)]), tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and lead["kind"] == "swings-with-source" and lead["confidence"] == "likely"
    assert lead["subjects"] == ["nct6798/fan2", "k10temp/Tctl"]
    assert (lead["facts"]["low"], lead["facts"]["high"], lead["facts"]["unit"], lead["facts"]["low_c"],
            lead["facts"]["high_c"], lead["facts"]["moves"]) == (780.0, 1650.0, "RPM", 48.0, 74.0, 3.0)
    assert "rose and fell between 780 and 1,650 RPM with Tctl (k10temp)" in str(answer["sentence"])


@pytest.mark.parametrize("rows", [
    [(780, 48), (800, 74), (790, 49), (795, 73)],  # the fan jitters by a few RPM: not a swing
    [(780, 60), (1650, 61), (790, 60), (1640, 62)],  # the fan swings, the temperature stands: not what it follows
    [(1650, 48), (780, 74), (1640, 49), (790, 73)],  # they move apart
    [(780, 48), (1200, 60), (1650, 74)],  # it only ramps up as the CPU warms
    [(780, 48), (1650, 74)],  # two readings are one move, not a swing
])
def test_no_swing_is_said_where_the_readings_do_not_show_one(rows: list[tuple[float, float]]) -> None:
    facts = machine(read.read(paste(rows))[0])
    assert list(swings_with_source(facts)) == []
    assert "swings-with-source" not in {f.kind for f in explained(facts)[0]}


def test_a_fan_at_0_in_a_reading_is_left_to_the_stopping_rules() -> None:
    """0 RPM between readings is a fan stopped (its controller's rest, or a dropout), which the rules of a fan that
    stops and starts say; a swing is of a fan turning in every reading."""
    facts = machine(read.read(paste([(780, 48), (1650, 74), (0, 40), (1640, 73)]))[0])
    assert list(swings_with_source(facts)) == []


CSV_LOOP = "index, name, temperature.gpu, fan.speed [%], utilization.gpu [%]\n" + "".join(
    f"{i}, NVIDIA GeForce RTX 3090, {t}, {duty} %, {busy} %\n" for t, duty, busy in
    ((55, 35, 5), (79, 78, 100), (58, 38, 3), (80, 80, 100)) for i in (0, 1))


def test_a_cards_fan_duty_in_nvidia_smis_loop_swings_with_the_card(tmp_path: Path) -> None:
    """nvidia-smi --query-gpu ... -l prints a row of each GPU each interval: a GPU's rows in turn are its snapshots,
    two GPUs' rows interleaved each their own. Where no speed is read the fan's duty swings (15 points or more a
    move) with the card's temperature: said in %, the card's load named as what moves it."""
    facts = machine(read.read(CSV_LOOP)[0])
    assert facts.snapshots == 4 and [f.duties for f in facts.fans] == [(35.0, 78.0, 38.0, 80.0)] * 2
    assert [t.history for t in facts.temperatures if t.chip == "nvidia"] == [(55.0, 79.0, 58.0, 80.0)] * 2
    code, answer = explain(CSV_LOOP, tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and lead["kind"] == "swings-with-source"
    assert (lead["subjects"], lead["facts"]["unit"], lead["facts"]["low"], lead["facts"]["high"]) == \
        (["nvidia/gpu0 fan", "nvidia/gpu0"], "%", 35.0, 80.0)
    assert "between 35 and 80 % with GPU 0" in str(answer["sentence"])
    steady = CSV_LOOP.replace(" 78 %", " 40 %").replace(" 80 %", " 41 %")  # a duty moving 2-6 points: no swing
    assert "swings-with-source" not in {f["kind"] for f in findings_of(explain(steady, tmp_path)[1])}


def test_a_swing_with_the_source_its_controller_declares_is_known() -> None:
    """Where the fan's controller declares what it follows (hwmon's pwmN_temp_sel or auto_channels_temp, a daemon's
    configuration: ``FanFact.follows``) and that is the temperature that swung with it, the link is known, and the
    words say it is declared; read from the readings alone it is likely."""
    facts = machine(read.read(paste([(780, 48), (1650, 74), (790, 49), (1640, 73)]))[0])
    declared = replace(facts, fans=tuple(replace(f, follows="k10temp/Tctl") for f in facts.fans))
    (hit,) = swings_with_source(declared)
    assert (hit.confidence, hit.facts.get("declared")) == ("known", "yes")
    (read_only,) = swings_with_source(facts)
    assert (read_only.confidence, read_only.facts.get("declared")) == ("likely", None)
    assert "as its controller declares" in explained(declared)[1]
