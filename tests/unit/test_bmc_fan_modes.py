"""A Supermicro BMC's fan mode, as Supermicro's SMCIPMITool and IPMICFG print it and as superfans decodes it: Full runs
every fan at full speed whatever the temperatures (known), Heavy IO raises the peripheral zone (likely), Standard
and Optimal follow the temperatures and are no cause."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.fans.read.bmcsettings import FAN_MODE, settings
from tests.unit.test_fan_readers import explain, findings_of

SMC = ("Current Fan Speed Mode is [ {mode} ]\n\nSupported Fan modes:\n0: Standard Speed\n1: Full Speed\n"
       "2: Optimal Speed\n4: Heavy IO Speed\n")
SUPERFANS = ("$ sudo superfans status\nPreset: {mode}\nCurrent fan speed (CPU Zone): 100%\n"
             "Current fan speed (Peripheral zone): 100%\n")


@pytest.mark.parametrize(("text", "mode", "effect", "confidence"), [
    (SMC.format(mode="Full Speed"), "Full Speed", "full-mode", "known"),
    (SUPERFANS.format(mode="Full (All fans at 100%)"), "Full", "full-mode", "known"),
    (SMC.format(mode="Heavy IO Speed"), "Heavy IO Speed", "heavy-io", "likely"),
])
def test_a_mode_that_holds_the_fans_is_the_cause(text: str, mode: str, effect: str, confidence: str,
                                                  tmp_path: Path) -> None:
    """The mode in force is the one printed as current, never one of the supported modes listed under it."""
    assert [(s.controller, s.name, s.value) for s in settings(text)] == [("Supermicro BMC", FAN_MODE, mode)]
    code, answer = explain(text, tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and lead["kind"] == "bmc-setting"
    assert (lead["facts"]["effect"], lead["confidence"]) == (effect, confidence)


@pytest.mark.parametrize("text", [SMC.format(mode="Optimal Speed"),
                                  SUPERFANS.format(mode="Optimal (Temp controlled, target 30%)")])
def test_a_mode_that_follows_the_temperatures_is_no_cause(text: str, tmp_path: Path) -> None:
    _, answer = explain(text, tmp_path)
    assert "bmc-setting" not in [f["kind"] for f in findings_of(answer)]
