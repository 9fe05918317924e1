"""What pwmconfig(8) printed of the machine before its tests (lm-sensors' prog/pwm/pwmconfig): each hwmon device's
name (``hwmon3 is dell_smm``), each pwm output (``hwmon3/pwm1  current value: 255`` in newer versions; ``hwmon0/pwm1
is currently setup for automatic speed control`` where its ``pwmN_enable`` is above 1) and each fan input's speed
(``hwmon3/fan1_input  current speed: 4356 RPM``; ``0 ... skipping!`` for an input that read 0 or -1: not a speed,
as it may be the driver's error and is read with the fans at full, so never a rest). The speeds are
read after pwmconfig set every output it tests to full speed (its pwmdisable: ``pwmN_enable`` 0, or 1 with ``pwmN``
255; "Giving the fans some time to reach full speed..."), so they are the fans at full, not as they usually run; once
that line is printed the outputs' values and modes listed before it are no longer theirs, and are not read."""

from __future__ import annotations

import re

from ..facts import Reading

_DEVICE = re.compile(r"^\s*(hwmon\d+)(?:/device)?\s+is\s+(\S+)\s*$", re.MULTILINE)
_ITEM = re.compile(r"^\s*(hwmon\d+)(?:/device)?/(pwm\d+|fan\d+_input)\s+current (?:value|speed):\s*(-?\d+)"
                   r"(?:\s*RPM|\s*(\.\.\. skipping!))?\s*$", re.MULTILINE)
_AUTO = re.compile(r"^\s*(hwmon\d+)(?:/device)?/(pwm\d+) is currently setup for automatic speed control\.",
                   re.MULTILINE)
# printed once the outputs it tests are set to full speed (pwmdisable), before it reads the fan inputs
FULL_SPEED = re.compile(r"Giving the fans some time to reach full speed")
AUTO_ENABLE = 2.0  # pwmconfig prints "automatic" for any pwmN_enable above 1; 2 is the ABI's first automatic mode


def read(text: str) -> list[Reading]:
    items = list(_ITEM.finditer(text))
    if not items:
        return []
    names = dict(_DEVICE.findall(text))
    if FULL_SPEED.search(text):  # the outputs' values and modes it printed are gone: it set them to full since
        return [_reading(names, i) for i in items if i.group(2).startswith("fan")]
    modes = [Reading(names.get(device, device), f"{pwm}_enable", AUTO_ENABLE, "automatic speed control", None,
                     f"{pwm}_enable") for device, pwm in _AUTO.findall(text)]
    return modes + [_reading(names, i) for i in items]


def _reading(names: dict[str, str], item: re.Match[str]) -> Reading:
    device, attr = item.group(1), item.group(2)
    fan = attr.startswith("fan")
    if item.group(4):  # "0 ... skipping!": the input read 0 or -1 (an error), and at the full speed pwmconfig set
        return Reading(names.get(device, device), attr.removesuffix("_input"), None, "0 or -1 (skipped)", "rpm", attr)
    return Reading(names.get(device, device), attr.removesuffix("_input"), float(item.group(3)),
                   f"{item.group(3)} RPM" if fan else item.group(3), "rpm" if fan else None, attr)
