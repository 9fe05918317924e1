"""The platform profile a machine's firmware runs under, as people paste it: ``/sys/firmware/acpi/platform_profile``
(cat, or grep's ``path:value``) and power-profiles-daemon's ``powerprofilesctl get`` or ``list`` (its active profile
marked ``*``). The kernel's sysfs-platform_profile names the profiles: low-power, cool, quiet, balanced,
balanced-performance, performance, each a bias of the firmware's automatic power, thermal and fan behaviour."""

from __future__ import annotations

import re

from ..facts import Setting

PROFILES = ("low-power", "cool", "quiet", "balanced", "balanced-performance", "performance", "power-saver")
_WORD = "|".join(sorted(map(re.escape, PROFILES), key=len, reverse=True))
_SYSFS = re.compile(rf"platform_profile(?::|\s*\n)\s*({_WORD})\s*$", re.MULTILINE)
_GET = re.compile(rf"powerprofilesctl(?:\s+get)?\s*\n\s*({_WORD})\s*$", re.MULTILINE)
_LISTED = re.compile(rf"^\*\s*({_WORD}):", re.MULTILINE)
CONTROLLER = "platform"
NAME = "platform_profile"


def settings(text: str) -> tuple[Setting, ...]:
    """The profile in force: the last one the paste shows."""
    found = [(m.start(), m.group(1)) for pattern in (_SYSFS, _GET, _LISTED) for m in pattern.finditer(text)]
    return (Setting(CONTROLLER, NAME, max(found)[1]),) if found else ()
