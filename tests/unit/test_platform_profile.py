"""The platform profile (Documentation/ABI/testing/sysfs-platform_profile: a bias of the firmware's automatic power,
thermal and fan behaviour) as people paste it: the sysfs file, power-profiles-daemon's powerprofilesctl, and a Dell's
thermal mode as libsmbios' smbios-thermal-ctl -g prints it (the kernel's dell-pc driver offers the same modes as the
profiles)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.fans.read.platform import settings
from tests.unit.test_fan_readers import explain, findings_of

LIST = ("$ powerprofilesctl list\n{a} performance:\n    CpuDriver:\tamd_pstate\n    PlatformDriver:\tplatform_profile\n"
        "    Degraded:   no\n\n{b} balanced:\n    CpuDriver:\tamd_pstate\n    PlatformDriver:\tplatform_profile\n")

DELL = ("$ sudo smbios-thermal-ctl -g\nHelper function to Get current Thermal Mode settings\n\n Print Current Status "
        "of Thermal Information:\n------------\n\nCurrent Thermal Modes: \n\t {mode}\n\nCurrent Active Acoustic "
        "Controller (AAC) Mode: \n\t AAC mode Disabled\n")


@pytest.mark.parametrize(("text", "profile"), [
    ("$ cat /sys/firmware/acpi/platform_profile\nperformance\n", "performance"),
    ("/sys/firmware/acpi/platform_profile:balanced-performance\n", "balanced-performance"),
    ("$ powerprofilesctl get\nbalanced\n", "balanced"),
    (LIST.format(a="*", b=" "), "performance"),
    (LIST.format(a=" ", b="*"), "balanced"),
    (DELL.format(mode="Cool Bottom"), "cool"),
    (DELL.format(mode="Performance"), "performance"),
    ("$ cat /sys/devices/platform/asus-nb-wmi/fan_boost_mode\n1\n", "performance"),
    ("/sys/devices/platform/asus-nb-wmi/fan_boost_mode:2\n", "quiet"),
    ("$ asusctl profile get\nActive profile: Performance\n\nAC profile Performance\nBattery profile Quiet\n",
     "performance"),
    ("$ asusctl profile -p\nStarting version 6.0.12\nActive profile is Quiet\n", "quiet"),
    ("Active profile is LowPower\n", "low-power"),
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


def test_a_dells_performance_thermal_mode_is_said_with_its_own_tool(tmp_path: Path) -> None:
    text = DELL.format(mode="Performance") + "$ sensors\ndell_smm-isa-0000\nAdapter: ISA adapter\n" \
        "Processor Fan: 4850 RPM  (min =    0 RPM, max = 4900 RPM)\nCPU:            +52.0°C\n"
    code, answer = explain(text, tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["facts"]["set_by"]) == ("platform-profile", "thermal_mode")
    assert "smbios-thermal-ctl --set-thermal-mode=balanced" in str(answer["sentence"])


def test_an_asus_throttle_thermal_policy_is_not_read_as_a_mode() -> None:
    """asus-wmi's throttle_thermal_policy has meant 1 silent on Vivobooks in some kernels (its *_VIVO modes) and 1
    overboost elsewhere: its value alone does not say the mode, so it is not read as a profile."""
    assert settings("$ cat /sys/devices/platform/asus-nb-wmi/throttle_thermal_policy\n1\n") == ()


def test_asusctls_performance_profile_is_said_with_asusctl(tmp_path: Path) -> None:
    """asusctl shows the platform profile asusd sets ("Active profile: Performance", asusctl's main.rs; "Active
    profile is Performance" from older versions, as the scripts that parse it match it): Performance biases an ASUS
    laptop's firmware to speed and its fans with it, said with asusctl's own way back; the AC and battery profiles
    it lists after are what it would set, not the profile in force. Was not read."""
    text = ("$ asusctl profile get\nActive profile: Performance\n\nAC profile Performance\nBattery profile Quiet\n"
            "$ sensors\nasus-isa-0000\nAdapter: ISA adapter\ncpu_fan:     4800 RPM\n\nk10temp-pci-00c3\n"
            "Adapter: PCI adapter\nTctl:         +52.0°C\n")
    code, answer = explain(text, tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["facts"]["set_by"]) == ("platform-profile", "asusctl profile")
    assert "asusctl profile set Balanced" in str(answer["sentence"])
    _, answer = explain(text.replace("Active profile: Performance", "Active profile: Balanced"), tmp_path)
    assert "platform-profile" not in [f["kind"] for f in findings_of(answer)]
