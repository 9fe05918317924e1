"""A Mac's SMC through applesmc: fanN_min is the SMC's own least speed (F<n>Mn), which its control keeps the fan at
or above and which macfanctld and fan scripts rewrite to set the speed; fanN_max its top (F<n>Mx). Real listings (the
reference blocks, each with its source); the full-speed case is the real listing of a MacBook Pro with its values set
to another thread's story (mbpfan's issue 178: both fans at full since a cleaning, TC0F, TG0F and TB3T reading 0)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.unit.test_fan_readers import BLOCKS, explain, findings_of

HOT_NOT_RUNNING = BLOCKS["sensors_laptops_thinkpad_dell_asus-20"]  # MacBookPro8,2: fans at the floor, cores 64-76 °C
FANS_100 = BLOCKS["sensors_laptops_thinkpad_dell_asus-21"]  # "the fans go to 100%": 4,957 RPM, fanN_min 4,964


def _found(text: str, tmp_path: Path, kind: str) -> dict[str, Any] | None:
    code, answer = explain(text, tmp_path)
    assert code == 0, answer
    return next((f for f in findings_of(answer) if f["kind"] == kind), None)


def test_an_old_listings_floor_is_read_and_said_as_a_floor_a_program_may_have_raised(tmp_path: Path) -> None:
    """Old lm-sensors wrote ``Left side  :4957 RPM  (min = 4964 RPM)``, no space after the colon: the minimum is
    read, so both fans are at the floor last written (fails with the limit read only after a space)."""
    floor = _found(FANS_100, tmp_path, "firmware-floor")
    assert floor is not None and floor["facts"]["floor_rpm"] == 4964.0
    assert floor["subjects"] == ["applesmc/Left side", "applesmc/Right side"]
    _, answer = explain(FANS_100, tmp_path)
    assert "macfanctld and fan scripts rewrite to set the speed" in str(answer["sentence"])


def test_a_fan_at_the_smcs_floor_beside_a_hot_cpu_is_slow_while_hot(tmp_path: Path) -> None:
    """At 76 °C the SMC may keep its floor (the thread's own capture: nothing beyond the floor said); past HOT_C
    a fan its controller leaves at its least speed is said slow for that heat (fails with the floor not counted as
    slow when no duty is read)."""
    assert _found(HOT_NOT_RUNNING, tmp_path, "slow-while-hot") is None
    # TCFC at 0 and TCTD at 255.8 are two of the SMC's many CPU keys: with TC2C and the others read, its control has
    # its CPU; "never asks for cooling" is an EC's whose one CPU reading is gone (fails with that condition dropped)
    assert _found(HOT_NOT_RUNNING, tmp_path, "ec-cpu-unread") is None
    assert _found(HOT_NOT_RUNNING, tmp_path, "firmware-floor") is not None
    hotter = HOT_NOT_RUNNING.replace("TC2C:         +76.0°C", "TC2C:         +94.0°C")
    slow = _found(hotter, tmp_path, "slow-while-hot")
    assert slow is not None and slow["facts"]["min"] == 2000.0 and "duty" not in slow["facts"]
    _, answer = explain(hotter, tmp_path)
    assert slow["subjects"] == ["applesmc/Left side", "applesmc/Right side"]  # alike: said once
    assert "are at their controller's least speed (the first at 1,996 RPM), its 2,000 RPM minimum, while TC2C" in \
        str(answer["sentence"])


def test_fans_at_their_top_while_cool_beside_sensors_that_read_nothing(tmp_path: Path) -> None:
    """No duty is read of a Mac's fans: at 95 % of fanN_max they run at full; with CPU cores at 48 °C that is not
    a curve's doing, and the SMC's own sensors that read 0 are named (a controller that loses a sensor runs its fans
    at full). Fails with full speed judged by a duty alone."""
    fans = {"Left side  ": "6156 RPM  (min = 2000 RPM, max = 6200 RPM)",
            "Right side ": "6201 RPM  (min = 2000 RPM, max = 6200 RPM)"}
    lines = []
    for line in FANS_100.splitlines():
        name = line.split(":")[0]
        if name in fans:
            line = f"{name}:{fans[name]}"
        elif name in ("TB3T", "TC0F", "TG0F"):
            line = f"{name}:         +0.0°C"
        elif name.startswith("T") and name not in ("TB0T", "TB1T", "TB2T"):
            line = f"{name}:        +45.0°C"  # a cool machine: every CPU and GPU reading under 50 °C
        lines.append(line)
    story = "\n".join(lines)
    full = _found(story, tmp_path, "full-while-cool")
    assert full is not None and full["facts"]["at_top"] == "yes" and full["facts"]["max"] == 6200.0
    assert {full["facts"][f"lost{i}"] for i in range(3)} == {"applesmc/TB3T", "applesmc/TC0F", "applesmc/TG0F"}
    _, answer = explain(story, tmp_path)
    assert "their controller reads nothing from" in str(answer["sentence"])


def test_a_fan_at_0_under_the_smcs_floor_is_asked_and_not_turning(tmp_path: Path) -> None:
    """The SMC keeps its fans at fanN_min or faster: both fans at 0 under a 2,000 RPM floor are not at rest, however
    cool the machine (fails with the floor not read as an asked speed: "about to start"); alike, said once, and past
    80 °C the hot part leads."""
    stopped = HOT_NOT_RUNNING.replace("Left side  : 1996 RPM", "Left side  :    0 RPM").replace(
        "Right side : 1999 RPM", "Right side :    0 RPM")
    found = _found(stopped, tmp_path, "target-not-met")
    assert found is not None and found["facts"]["floor_rpm"] == 2000.0 and found["confidence"] == "likely"
    assert _found(stopped, tmp_path, "at-rest") is None
    from app.fans.answer import explained
    from app.fans.facts import FanFact, Machine, TempFact

    cool = Machine(fans=(FanFact(key="applesmc/Exhaust", chip="applesmc", label="Exhaust", rpm=0.0, min_rpm=2000.0,
                                 controller="ec"),),
                   temperatures=(TempFact(key="coretemp/Core 0", chip="coretemp", label="Core 0", celsius=45.0,
                                          raw=45.0, role="cpu"),))
    kinds = [f.kind for f in explained(cool)[0]]  # however cool: never at rest (fails with the floor not weighed)
    assert "target-not-met" in kinds and "at-rest" not in kinds
    _, answer = explain(stopped, tmp_path)
    sentence = str(answer["sentence"])
    assert sentence.startswith("The Left side (applesmc) and Right side (applesmc) are kept by their controller at "
                               "2,000 RPM or faster (the minimum) and read 0 with no fault flagged")
    assert "about to start" not in sentence and "at rest" not in sentence
    hot = stopped.replace("TC2C:         +76.0°C", "TC2C:         +95.0°C")
    _, answer = explain(hot, tmp_path)
    assert str(answer["sentence"]).startswith("The Left side (applesmc) and Right side (applesmc) read 0 RPM (not "
                                              "turning, as far as they count) while TC2C (applesmc) is at 95 °C")


IMAC = BLOCKS["sensors_laptops_thinkpad_dell_asus-22"]  # one fan at 1,197 RPM, fanN_min 1,200, fanN_max 3,178


def test_a_floor_well_under_the_top_is_not_said_written_by_a_program(tmp_path: Path) -> None:
    """A floor under half the fan's top speed is the SMC's own as far as a listing shows; one at half or more (or
    with no top read) may be a speed a program wrote through fanN_min (fails with the clause said of every floor)."""
    floor = _found(IMAC, tmp_path, "firmware-floor")
    assert floor is not None and floor["facts"]["max_rpm"] == 3178.0
    _, answer = explain(IMAC, tmp_path)
    assert "it idles at its floor, and nothing is making it spin faster." in str(answer["sentence"])
    assert "macfanctld" not in str(answer["sentence"])
    raised = IMAC.replace("(min = 1200 RPM, max = 3178 RPM)", "(min = 2900 RPM, max = 3178 RPM)").replace(
        "Main :       1197 RPM", "Main :       2895 RPM")
    _, answer = explain(raised, tmp_path)
    assert "macfanctld and fan scripts rewrite to set the speed" in str(answer["sentence"])


def test_a_board_chips_open_inputs_are_not_named_as_lost_sensors() -> None:
    """A Super-I/O's inputs with nothing attached read nothing by design (nct6775.rst: open inputs): beside its fans
    at full while cool they are not "sensors its controller lost"; an SMC's own are (fails with every chip's
    unreadable inputs named)."""
    from app.fans.answer import explained
    from app.fans.facts import FanFact, Machine, TempFact

    cpu = TempFact(key="k10temp/Tctl", chip="k10temp", label="Tctl", celsius=41.0, raw=41.0, role="cpu")
    board = Machine(fans=(FanFact(key="nct6798/fan2", chip="nct6798", label="fan2", rpm=1850.0, duty_percent=100.0,
                                  controller="bios", follows="k10temp/Tctl"),),
                    temperatures=(cpu, TempFact(key="nct6798/AUXTIN0", chip="nct6798", label="AUXTIN0", celsius=None,
                                                raw=-62.0, role="unknown", invalid="unconnected")))
    full = next(f for f in explained(board)[0] if f.kind == "full-while-cool")
    assert not any(k.startswith("lost") for k in full.facts)
    mac = Machine(fans=(FanFact(key="applesmc/Exhaust", chip="applesmc", label="Exhaust", rpm=6150.0, max_rpm=6200.0,
                                min_rpm=2000.0, controller="ec", follows="k10temp/Tctl"),),
                  temperatures=(cpu, TempFact(key="applesmc/TC0F", chip="applesmc", label="TC0F", celsius=None, raw=0.0,
                                              role="cpu", invalid="not-available")))
    full = next(f for f in explained(mac)[0] if f.kind == "full-while-cool")
    assert full.facts["lost0"] == "applesmc/TC0F"


def test_a_fan_under_the_smcs_floor_is_not_said_about_to_start(tmp_path: Path) -> None:
    """Warm and at 0 under a 2,000 RPM floor: not "stopped while warmer than a rest" (about to start), since its
    controller keeps it turning (fails with that rule blind to the floor)."""
    stopped = HOT_NOT_RUNNING.replace("Left side  : 1996 RPM", "Left side  :    0 RPM").replace(
        "Right side : 1999 RPM", "Right side :    0 RPM")
    assert _found(stopped, tmp_path, "warm-not-turning") is None
