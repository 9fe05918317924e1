"""A relative hwmon listing put back in its folder: a shell whose prompt (or ``cd``) is in one hwmon folder lists
the attributes alone ("pwm1:101" after ``grep -r . pwm*``); they are read as that folder's, and a platform device's
folder names its chip by its driver where the listing has no ``name`` file."""

from __future__ import annotations

import re

# a shell whose prompt (or cd) is in one hwmon folder ("/sys/devices/platform/nct6687.2592/hwmon/hwmon1# grep -r .
# pwm*"): its listing names the attributes alone ("pwm1:101"); a platform device's folder is named for its driver
# and instance (the driver model's platform_device naming: "nct6687.2592")
_FOLDER = re.compile(r"(?:^|\s|:)(/sys/\S*?/hwmon\d+)/?\s*(?:[#$]|\n)|\bcd\s+(/sys/\S*?/hwmon\d+)/?\s*$", re.MULTILINE)
# grep's "file:content", no space between: sensors' "fan1:   1200 RPM" beside such a prompt is not one
_RELATIVE = re.compile(r"^(name|(?:fan|pwm|temp|in|power)\d+(?:_\w+)?):\S+$", re.MULTILINE)
_PLATFORM = re.compile(r"/sys/devices/platform/([a-z][a-z0-9_]*)\.\d+/hwmon/hwmon\d+$")


def in_folder(text: str) -> str:
    """``text`` with a relative listing's attributes put in the hwmon folder its shell was in, and that folder's
    chip named for its platform driver where the listing has no name file; ``text`` itself elsewhere."""
    folder = _FOLDER.search(text)
    if folder is None or not _RELATIVE.search(text):
        return text
    where = folder.group(1) or folder.group(2)
    listed = _RELATIVE.sub(lambda m: f"{where}/{m.group(0)}", text)
    driver = _PLATFORM.search(where)
    if driver and not re.search(r"^name:", text, re.MULTILINE):
        listed += f"\n{where}/name:{driver.group(1)}\n"
    return listed
