"""The words of what a controller says of its fans' connectors (``app.fans.rules_power``): a rail that powers no
fan, a fan it detects that does not turn."""

from __future__ import annotations

from collections.abc import Sequence

from .names import Names
from .wording import Facts, num, verb


def no_power(n: Names, s: Sequence[str], f: Facts) -> str:
    volts = f"{num(f['nominal'])} V"
    return (f"The {n.some(s)} {verb(s, 'reads', 'read')} 0 RPM while the {volts} rail {verb(s, 'its', 'their')} "
            f"controller powers {verb(s, 'it', 'them')} from reads {float(f['volts']):.2f} V: with no "
            f"{volts} a fan has no power, so most likely the controller's power lead (a SATA power cable from the "
            "supply) is unplugged or dead; the controller itself runs from USB, and so still reads its temperatures.")


def detected_still(n: Names, s: Sequence[str], f: Facts) -> str:
    return (f"The {n.some(s)} {verb(s, 'reads', 'read')} 0 RPM though {verb(s, 'its', 'their')} controller detects a "
            f"fan on {verb(s, 'its connector', 'each connector')}: {verb(s, 'it is', 'they are')} there and not "
            "turning (stopped by a speed set to 0, stalled, or without power); listen, or look.")
