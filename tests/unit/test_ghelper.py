"""G-Helper's log, read as its source writes it (AsusACPI.SetFanCurve: sixteen bytes, eight temperatures then the
eight duties asked at them, logged with the firmware's answer, "OK" for 1; ModeControl.SetPerformanceMode: "Mode =
N : OK", 0 Balanced, 1 Turbo, 2 Silent), on the lines its users paste (its maintainer's answer to one: "G-Helper is
applying fan curves ... Rest is up to your BIOS"; to another, whose fans stayed at 2000 RPM whatever curve was set:
the curves were answered 0, rejected)."""

from __future__ import annotations

from pathlib import Path

from app.fans.read.ghelper import curves
from app.fans.read.platform import settings
from tests.unit.test_fan_readers import explain, findings_of

TAKEN = ("2023-12-29 13:38:37: Mode = 1 : OK\n"
         "2023-12-29 13:38:38: FanCPU = 28-32-3C-46-50-55-5A-5F-14-14-1E-28-32-3C-46-50 : OK\n"
         "2023-12-29 13:38:38: FanGPU = 28-32-37-3C-41-46-4B-50-14-14-1E-28-32-3C-46-50 : OK\n")
REJECTED = ("4/10/2023 3:34:28 PM: FanCPU = 3B-41-40-46-46-4B-4B-62-00-0C-0B-16-15-22-21-29 : 0\n"
            "4/10/2023 3:34:28 PM: FanGPU = 3C-41-42-46-47-4B-4C-62-08-11-11-1D-1D-26-26-2D : 0\n"
            "4/10/2023 3:34:28 PM: Driver rejected fan curve, resetting mode to 2\n")


def test_each_fans_curve_is_its_eight_temperatures_then_its_eight_duties() -> None:
    cpu, gpu = curves(TAKEN)
    assert (cpu.output, cpu.points[0], cpu.points[-1], cpu.in_firmware, cpu.refused) == (
        "CPU fan", (40.0, 20.0), (95.0, 80.0), True, None)
    assert (gpu.output, gpu.points[-1]) == ("GPU fan", (80.0, 80.0))
    assert [c.refused for c in curves(REJECTED)] == ["firmware-answered-0", "firmware-answered-0"]
    assert curves("FanCPU = 28-32-3C-46-50-55-5A-5F-14-14-1E-28-32-3C-46 : OK\n") == ()  # fifteen bytes: not its


def test_a_curve_the_firmware_took_is_run_by_the_firmware_and_turbo_is_said(tmp_path: Path) -> None:
    """A log alone (it was refused: no reading in it): each curve in the firmware, known, and the mode Turbo as a
    platform biased towards speed."""
    code, answer = explain(TAKEN, tmp_path)
    found = findings_of(answer)
    kinds = [f["kind"] for f in found]
    assert code == 0 and kinds.count("daemon-curve") == 2 and "platform-profile" in kinds
    curve = next(f for f in found if f["kind"] == "daemon-curve")
    assert curve["confidence"] == "known" and curve["facts"]["in_firmware"] == "yes"
    assert "not_running" not in curve["facts"]
    assert next(f for f in found if f["kind"] == "platform-profile")["facts"] == {
        "profile": "performance", "set_by": "G-Helper mode"}
    assert "the firmware runs it" in str(answer["sentence"])


def test_a_curve_the_firmware_answered_0_is_not_in_effect(tmp_path: Path) -> None:
    code, answer = explain(REJECTED, tmp_path)
    curve = next(f for f in findings_of(answer) if f["kind"] == "daemon-curve")
    assert code == 0 and (curve["facts"]["not_running"], curve["facts"]["refused"]) == ("refused",
                                                                                        "firmware-answered-0")
    assert "did not take it (its call answered 0, not OK)" in str(answer["sentence"])


def test_only_its_mode_line_is_the_mode() -> None:
    """Its other settings' names end in Mode (StatusMode, VivoMode, ModeReset): not the performance mode."""
    assert settings("x: StatusMode = 00-02 : OK\nx: VivoMode = 1 : OK\nx: ModeReset = 1 : OK\n") == ()
    assert [s.value for s in settings("x: Mode = 2 : OK\nx: Reset Mode = 0 : OK\n")] == ["balanced"]
