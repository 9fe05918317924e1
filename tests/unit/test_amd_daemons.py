"""The AMD cards' fan daemons: amdgpu-fan and its fork amdfan (``speed_matrix``: numpy.interp on the card's edge
temperature; their ``Curve`` refuses a matrix whose lowest speed is 3 or under, whose speeds fall or whose temperatures
do not rise, and the daemon exits) and LACT (``/etc/lact/config.yaml``: a static speed, or a curve of 0-1 speeds on the
sensor ``temperature_key`` names, linear between points). Read from real configurations (the reference blocks, each
with its source) and from LACT's documented example."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.collect import amdfan, lact
from tests.unit.test_fan_readers import BLOCKS, explain, findings_of

STARTED = BLOCKS["configs_fancontrol_thinkfan_fan2go-15"]  # amdgpu-fan#15: 0 % up to 60 °C, and "starting amdgpu-fan"
AMDFAN = BLOCKS["configs_fancontrol_thinkfan_fan2go-16"]  # amdfan#18: its monitor's table and /etc/amdfan.yml
LACT = BLOCKS["configs_fancontrol_thinkfan_fan2go-17"]  # LACT#870: a curve on edge, an RX 7900 XTX

CARD = """
amdgpu-pci-0b00
Adapter: PCI adapter
fan1:        1400 RPM  (min =    0 RPM, max = 3500 RPM)
edge:         +70.0°C  (crit = +100.0°C, hyst = -273.1°C)
junction:     +92.0°C  (crit = +110.0°C, hyst = -273.1°C)
"""


def _curve_found(text: str, tmp_path: Path) -> dict[str, Any]:
    code, answer = explain(text, tmp_path)
    assert code == 0, answer
    return next(f for f in findings_of(answer) if f["kind"] == "daemon-curve")


def test_a_speed_matrix_is_the_cards_curve_its_first_speed_below_it() -> None:
    """numpy.interp holds the first point's speed below the first temperature; ``cards`` names the cards it drives
    (fails with the floor taken as 0, the daemon's own minimum, rather than the first speed)."""
    (card,) = amdfan.parse(STARTED).declared
    assert card.curve[0] == (0.0, 0.0) and card.curve[-1] == (80.0, 100.0) and len(card.curve) == 9
    assert (card.chip, card.pwm, card.source, card.daemon) == ("amdgpu", "pwm1", "edge", "amdgpu-fan")
    assert card.follows == "card0's edge temperature"
    (fork,) = amdfan.parse(AMDFAN).declared
    assert fork.daemon == "amdfan" and fork.floor_percent == 4.0 and fork.refused is None
    assert fork.follows == "the card's edge temperature"  # no cards listed: every amdgpu card it finds


def test_a_matrix_its_check_refuses_is_said_not_in_effect(tmp_path: Path) -> None:
    """amdfan's Curve refuses a lowest speed of 3 or under (and falling speeds, temperatures that do not rise): the
    daemon exits as it starts, so the curve drives nothing (fails with the check dropped: the curve said to drive)."""
    refused = AMDFAN.replace("[50, 4]", "[50, 3]")
    assert amdfan.parse(refused).declared[0].refused == "lowest-under-4"
    assert amdfan.parse(AMDFAN.replace("[50, 4]", "[50, 3.5]")).declared[0].refused is None  # np.min <= 3 only
    assert amdfan.parse(AMDFAN.replace("[65, 75]", "[65, 60]")).declared[0].refused == "speeds-fall"
    assert amdfan.parse(AMDFAN.replace("[65, 75]", "[60, 75]")).declared[0].refused == "temperatures-not-rising"
    found = _curve_found(refused, tmp_path)
    assert found["facts"]["not_running"] == "refused" and found["confidence"] == "known" and not found["subjects"]
    _, answer = explain(refused, tmp_path)
    said = "it is not in effect: amdfan refuses it as it starts (its lowest speed is 3 % or under"
    assert said in str(answer["sentence"])


def test_amdgpu_fans_first_versions_ran_such_a_matrix_and_its_start_line_says_it_took_it(tmp_path: Path) -> None:
    """amdgpu-fan's first versions had no lowest-speed check (their own default began at 0 %): a refusal is only
    likely; the thread's own log (``starting amdgpu-fan``, printed once the curve is built) says it took this one."""
    assert amdfan.parse(STARTED).declared[0].refused is None
    unlogged = STARTED.replace("starting amdgpu-fan", "")
    assert amdfan.parse(unlogged).declared[0].refused == "lowest-under-4-newer"
    assert _curve_found(unlogged, tmp_path)["confidence"] == "likely"
    _, answer = explain(STARTED, tmp_path)
    assert str(answer["sentence"]).startswith("amdgpu-fan drives amdgpu pwm1 from card0's edge temperature: 0 % up to "
                                         "60 °C, then rising to 100 % at 80 °C")


def test_the_live_collector_reads_both_files(tmp_path: Path) -> None:
    from app.collect.fandaemons import curves

    (tmp_path / "amdgpu-fan.yml").write_text(STARTED.split("```")[1])
    (tmp_path / "amdfan.yml").write_text(AMDFAN[AMDFAN.index("#Fan"):])
    daemons = sorted((c.daemon, c.chip, c.output) for c in curves(tmp_path))
    assert daemons == [("amdfan", "amdgpu", "pwm1"), ("amdgpu-fan", "amdgpu", "pwm1")]


def test_lacts_curve_is_in_per_cent_on_the_sensor_it_names(tmp_path: Path) -> None:
    """LACT's speeds are 0-1; ``temperature_key`` names the sensor; what it asks now is read off the card's reading
    of that sensor (fails with junction and edge swapped: 70 °C asks 75 %, 92 °C asks 100 %)."""
    (card,) = lact.parse(LACT).declared
    assert card.curve == ((40.0, 20.0), (50.0, 35.0), (60.0, 50.0), (70.0, 75.0), (80.0, 100.0))
    assert (card.daemon, card.chip, card.source, card.floor_percent) == ("LACT", "amdgpu", "edge", 20.0)
    assert "0000:03:00.0" in (card.follows or "") and card.firmware_may_run  # a fact; the words say the RDNA3 case
    _, answer = explain(LACT, tmp_path)
    assert "(on an RDNA3 or newer card, its firmware runs the curve on its own hotspot reading)" in str(
        answer["sentence"])
    found = _curve_found(LACT + CARD, tmp_path)
    assert found["subjects"] == ["amdgpu/fan1"] and found["facts"]["asks"] == 75.0
    on_junction = LACT.replace("temperature_key: edge", "temperature_key: junction")
    assert _curve_found(on_junction + CARD, tmp_path)["facts"]["asks"] == 100.0


def test_lacts_static_speed_profiles_and_the_cards_it_leaves_alone() -> None:
    """``mode: static`` holds the fan whatever the temperature; ``fan_control_enabled: false`` leaves it to the card;
    ``current_profile`` picks a profile's settings unless profiles switch automatically; a non-AMD card is not read."""
    static = LACT.replace("mode: curve", "mode: static")
    (card,) = lact.parse(static).declared
    assert card.curve == ((0.0, 50.0),) and card.stepped and card.source is None
    assert lact.parse(LACT.replace("fan_control_enabled: true", "fan_control_enabled: false")).declared == ()
    profiled = LACT.replace("```\n", "", 1).replace("```", "") + (
        "profiles:\n  quiet:\n    gpus:\n      1002:744C-1DA2:471E-0000:03:00.0:\n        fan_control_enabled: true\n"
        "        fan_control_settings:\n          mode: static\n          static_speed: 0.3\n"
        "current_profile: quiet\n")
    assert lact.parse(profiled).declared[0].curve == ((0.0, 30.0),)
    automatic = profiled + "auto_switch_profiles: true\n"
    assert lact.parse(automatic).declared[0].curve[0] == (40.0, 20.0)  # top-level while no rule matches
    assert lact.parse(LACT.replace("1002:744C", "10DE:2684")).declared == ()


def test_a_static_speed_is_said_held_whatever_the_temperature(tmp_path: Path) -> None:
    _, answer = explain(LACT.replace("mode: curve", "mode: static") + CARD, tmp_path)
    assert "LACT drives amdgpu pwm1: held at 50 % whatever the temperature" in str(answer["sentence"])
