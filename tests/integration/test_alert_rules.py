"""The shipped Prometheus alerting rules: valid (`promtool check rules`) and right (`promtool test rules`: each rule
fires on the series that should fire it, after its `for`, with its words, and not on the others)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
pytestmark = pytest.mark.skipif(
    shutil.which("promtool") is None,
    reason="promtool (Debian package prometheus) not installed; make test installs it as root")


def test_the_rules_are_valid() -> None:
    result = subprocess.run(["promtool", "check", "rules", str(ROOT / "deploy" / "prometheus" / "alerts.yml")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "SUCCESS: 8 rules found" in result.stdout, result.stdout + result.stderr


def test_the_rules_fire_when_they_should() -> None:
    result = subprocess.run(["promtool", "test", "rules", "alerts_test.yml"], cwd=ROOT / "tests" / "prometheus",
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
