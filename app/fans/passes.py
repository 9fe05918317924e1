"""Which readings of a paste are one sensor: a name a chip gives twice is two sensors where one listing shows it
twice (a Dell BMC's ``ipmitool sdr`` names each CPU's temperature "Temp"), and one sensor read again where the
listing starts over (``ipmitool sdr`` then ``ipmitool sensor``, a ``watch`` pasted). A chip's rows start over where
its first two names come again in turn, or where every row is the row p before it (a listing of one name read over
and over)."""

from __future__ import annotations

from collections.abc import Sequence

from .facts import Reading

Name = tuple[str, str | None, str | None]  # a row's label, sysfs attribute and unit (a fan and a temperature may
# share a label: asus-ec-sensors' "Chipset" fan and "Chipset" temperature are two sensors, each the first of its kind)


def nth_of_name(rows: Sequence[Reading]) -> list[int]:
    """For each row, which of its chip's rows of that name within one listing it is: 1 for the first (and for a
    name read again in a later listing), 2 for a second sensor of the same name, and so on."""
    by_chip: dict[tuple[str | None, int], list[int]] = {}
    for index, r in enumerate(rows):
        by_chip.setdefault((r.chip, r.snapshot), []).append(index)
    nth = [1] * len(rows)
    for indexes in by_chip.values():
        names = [(rows[i].label, rows[i].attr, rows[i].unit) for i in indexes]
        times: dict[tuple[int, Name], int] = {}
        for i, listing, name in zip(indexes, _listings(names), names, strict=True):
            nth[i] = times[(listing, name)] = times.get((listing, name), 0) + 1
    return nth


def _listings(names: Sequence[Name]) -> list[int]:
    """Which listing each row belongs to, counting from 0."""
    for p in range(1, len(names) // 2 + 1):
        if all(names[i] == names[i + p] for i in range(len(names) - p)):
            return [i // p for i in range(len(names))]
    listing, found = 0, []
    for i in range(len(names)):
        if i and len(names) > 2 and tuple(names[i:i + 2]) == tuple(names[:2]):
            listing += 1
        found.append(listing)
    return found
