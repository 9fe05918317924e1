"""The platform profile a machine's firmware runs under, as people paste it: ``/sys/firmware/acpi/platform_profile``
(cat, or grep's ``path:value``) and power-profiles-daemon's ``powerprofilesctl get`` or ``list`` (its active profile
marked ``*``), and a Dell's thermal mode as libsmbios' ``smbios-thermal-ctl -g`` prints it (``Current Thermal
Modes:`` then the mode): Balanced, Cool Bottom, Quiet or Performance, which the kernel's dell-pc driver offers as the
balanced, cool, quiet and performance profiles, and an ASUS laptop's ``fan_boost_mode`` (``cat``, or grep's
``path:value``): 0 normal, 1 overboost, 2 silent (Documentation/ABI/testing/sysfs-platform-asus-wmi), and the mode
G-Helper's log shows it set (app.fans.read.ghelper: Turbo is performance), and asusctl's active profile (the
platform profile asusd sets). Its
``throttle_thermal_policy`` is not read: on Vivobooks the same file has meant 1 silent, 2 overboost in some kernels
(asus-wmi's *_VIVO modes), so a value there does not say the mode on every machine. The kernel's
sysfs-platform_profile names the profiles: low-power,
cool, quiet, balanced, balanced-performance, performance, each a bias of the firmware's automatic power, thermal and
fan behaviour."""

from __future__ import annotations

import re

from ..facts import Setting
from . import ghelper

PROFILES = ("low-power", "cool", "quiet", "balanced", "balanced-performance", "performance", "power-saver")
_WORD = "|".join(sorted(map(re.escape, PROFILES), key=len, reverse=True))
_SYSFS = re.compile(rf"platform_profile(?::|\s*\n)\s*({_WORD})\s*$", re.MULTILINE)
_GET = re.compile(rf"powerprofilesctl(?:\s+get)?\s*\n\s*({_WORD})\s*$", re.MULTILINE)
_LISTED = re.compile(rf"^\*\s*({_WORD}):", re.MULTILINE)
_DELL = re.compile(r"Current Thermal Modes:\s*\n\s*(Balanced|Cool Bottom|Quiet|Performance)\b")
_DELL_PROFILES = {"Balanced": "balanced", "Cool Bottom": "cool", "Quiet": "quiet", "Performance": "performance"}
_ASUS = re.compile(r"fan_boost_mode(?::|\s*\n)\s*([012])\s*$", re.MULTILINE)
_ASUS_PROFILES = {"0": "balanced", "1": "performance", "2": "quiet"}
# asusctl's platform profile: "Active profile: Performance" (``asusctl profile get``; asusctl's main.rs,
# handle_throttle_profile, prints the platform profile asusd sets), "Active profile is Performance" (older ``asusctl
# profile -p``, as scripts that parse it match it)
_ASUSCTL = re.compile(r"^\s*Active profile(?::| is)\s+(Performance|Balanced|Quiet|LowPower)\s*$", re.MULTILINE)
_ASUSCTL_PROFILES = {"Performance": "performance", "Balanced": "balanced", "Quiet": "quiet", "LowPower": "low-power"}
CONTROLLER = "platform"
NAME = "platform_profile"
DELL_NAME = "thermal_mode"  # a Dell's, as smbios-thermal-ctl set it
ASUS_NAME = "fan_boost_mode"  # an ASUS laptop's
GHELPER_NAME = "G-Helper mode"  # an ASUS laptop's performance mode, as G-Helper logged setting it
ASUSCTL_NAME = "asusctl profile"  # an ASUS laptop's platform profile, as asusctl shows it


def settings(text: str) -> tuple[Setting, ...]:
    """The profile in force: the last one the paste shows."""
    found = [(m.start(), m.group(1), NAME) for pattern in (_SYSFS, _GET, _LISTED) for m in pattern.finditer(text)]
    found += [(m.start(), _DELL_PROFILES[m.group(1)], DELL_NAME) for m in _DELL.finditer(text)]
    found += [(m.start(), _ASUS_PROFILES[m.group(1)], ASUS_NAME) for m in _ASUS.finditer(text)]
    found += [(m.start(), ghelper.MODES[m.group(1)], GHELPER_NAME) for m in ghelper.MODE.finditer(text)]
    found += [(m.start(), _ASUSCTL_PROFILES[m.group(1)], ASUSCTL_NAME) for m in _ASUSCTL.finditer(text)]
    if not found:
        return ()
    _, value, name = max(found)
    return (Setting(CONTROLLER, name, value),)
