"""A ``sensors`` chip header (``nct6798-isa-0290``, ``amdgpu-pci-0b00``, ``corsaircpro-hid-3-5``): the driver's name,
its bus and its address. A chip is named by its driver, as the chip table knows it; where one paste heads one driver
at two addresses or more (two graphics cards, a dual-socket server's two ``coretemp``), each is its own device, named
by its whole header, so that its readings are not taken for another reading of the first (the same header met again
is: the next snapshot)."""

from __future__ import annotations

import re

from ...core.vocabulary import apart

_CHIP = re.compile(r"^([a-z0-9_]+)-(?:isa|pci|acpi|virtual|i2c|platform|hid|usb|spi|mdio|sdio|scsi|nvme|\w+)-"
                   r"[0-9a-f_]+(?:-[0-9a-f_]+)*$", re.IGNORECASE)  # "corsaircpro-hid-3-5": a HID bus and address


def twins(text: str) -> frozenset[str]:
    """The chip names that ``sensors`` heads at more than one address in ``text`` (two cards' ``amdgpu-pci-0300`` and
    ``amdgpu-pci-0b00``, a dual-socket server's ``coretemp-isa-0000`` and ``-0001``): each is its own device, named
    by its whole header, so that its readings are not taken for another reading of the first (the same header met
    again is: the next snapshot)."""
    headers: dict[str, set[str]] = {}
    for line in text.splitlines():
        header = _CHIP.match(line.strip())
        if header:
            headers.setdefault(header.group(1).lower(), set()).add(line.strip().lower())
    return frozenset(name for name, seen in headers.items() if len(seen) > 1)


def header_driver(header: str) -> str | None:
    """The driver that heads a ``sensors`` chip header (``nzxtsmart2`` of ``nzxtsmart2-hid-3-2``), or None for a line
    that is no header (unlike ``core.vocabulary.driver_of``, which names any chip's driver and returns other names as
    they are)."""
    match = _CHIP.match(header.strip())
    return match.group(1) if match else None


def chip_of(line: str, twins: frozenset[str]) -> str | None:
    """The chip a header line starts, or None for a line that is no header."""
    header = _CHIP.match(line)
    if header is None:
        return None
    return line.lower() if header.group(1).lower() in twins else header.group(1)


def apart_names(names: dict[str, str]) -> dict[str, str]:
    """A listing's hwmon entries by their name files (``hwmon3`` -> ``amdgpu``), two entries of one name each with
    its entry after it (``amdgpu-hwmon3``, ``amdgpu-hwmon5``), as the live reader names a device it cannot address."""
    return apart(names, lambda entry, name: f"{name}-{entry}")


def within_chips(text: str, most: int) -> str:
    """``text`` up to the header of its (most + 1)-th distinct chip: what is read of a listing of more chips than
    are judged (the same header met again, the next snapshot of a chip already in, is no new chip)."""
    heads: set[str] = set()
    at = 0
    for line in text.splitlines(keepends=True):
        if _CHIP.match(line.strip()):
            heads.add(line.strip().lower())
            if len(heads) > most:
                return text[:at]
        at += len(line)
    return text

