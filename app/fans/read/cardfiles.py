"""A graphics card's hwmon files a paste ``cat``s beside its listing: ``cat /sys/class/drm/cardN/device/hwmon/hwmonM/
FILE`` (amdgpu's documented path to its hwmon interface) and the value on the next line, such as ``pwm1`` and
``pwm1_enable``, which ``sensors`` does not print. The card's number does not say which of two GPUs it is, so the
files are the GPU's only where the listing holds one GPU driver's chip; a file read twice (a post's "under load",
then "at idle") is read by its first value, the nearest to the listing it follows."""

from __future__ import annotations

import re

from ..chips import chip
from ..facts import Reading
from .prompts import BEFORE_COMMAND

_CAT = re.compile(BEFORE_COMMAND + r"(?:sudo\s+)?cat\s+/sys/class/drm/(card\d+)/device/hwmon/(hwmon\d+)/(\w+)\s*$")
_VALUE = re.compile(r"-?\d+")


def files(text: str) -> list[tuple[str, str]]:
    """Each file of one card's hwmon folder the text ``cat``s, with the number it printed; none where it reads two
    cards' folders."""
    lines = [line.strip() for line in text.splitlines()]
    found: dict[str, str] = {}
    folders = set()
    for line, after in zip(lines, [*lines[1:], ""], strict=True):
        cat = _CAT.match(line)
        if cat and _VALUE.fullmatch(after):
            folders.add(cat.group(1, 2))
            found.setdefault(cat.group(3), after)
    return list(found.items()) if len(folders) == 1 else []


def readings(text: str, found: list[Reading]) -> list[Reading]:
    """The card's files as readings of the one GPU chip ``found`` holds; none where it holds none or several, or
    where the listing already read that attribute."""
    gpus = {r.chip for r in found if r.chip and chip(r.chip).kind == "gpu"}
    if len(gpus) != 1:
        return []
    (gpu,) = gpus
    read = {r.attr for r in found if r.chip == gpu}
    return [Reading(gpu, file, float(value), value, "rpm" if re.fullmatch(r"fan\d+_input", file) else None, file)
            for file, value in files(text) if file not in read]
