"""The platform profile (Documentation/ABI/testing/sysfs-platform_profile: a bias of the firmware's automatic power,
thermal and fan behaviour) as people paste it: the sysfs file, and power-profiles-daemon's powerprofilesctl."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.fans.read.platform import settings
from tests.unit.test_fan_readers import explain, findings_of

LIST = ("$ powerprofilesctl list\n{a} performance:\n    CpuDriver:\tamd_pstate\n    PlatformDriver:\tplatform_profile\n"
        "    Degraded:   no\n\n{b} balanced:\n    CpuDriver:\tamd_pstate\n    PlatformDriver:\tplatform_profile\n")


@pytest.mark.parametrize(("text", "profile"), [
    ("$ cat /sys/firmware/acpi/platform_profile\nperformance\n", "performance"),
    ("/sys/firmware/acpi/platform_profile:balanced-performance\n", "balanced-performance"),
    ("$ powerprofilesctl get\nbalanced\n", "balanced"),
    (LIST.format(a="*", b=" "), "performance"),
    (LIST.format(a=" ", b="*"), "balanced"),
])
def test_the_profile_in_force_is_read(text: str, profile: str) -> None:
    assert [s.value for s in settings(text)] == [profile]


def test_a_profile_biased_to_performance_is_said_and_balanced_is_not(tmp_path: Path) -> None:
    code, answer = explain(LIST.format(a="*", b=" "), tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["confidence"], lead["facts"]["profile"]) == (
        "platform-profile", "likely", "performance")
    code, answer = explain(LIST.format(a=" ", b="*"), tmp_path)
    assert code != 0 or "platform-profile" not in [f["kind"] for f in findings_of(answer)]
