"""smfc's log (the Supermicro fan controller: ``journalctl -u smfc``, or smfc run in a terminal). smfc puts the BMC
in its FULL fan mode (ipmitool raw 0x30 0x45 0x01 0x01: the BMC no longer chooses the speed) and writes each IPMI
zone's level itself (0x30 0x70 0x66 0x01 zone level), logging each new level with the temperature that chose it:
"CPU zone: new level > 39.0C > [T:40.0C/L:61%]" (v3: the reading, then the step of its curve and that step's level),
"CPU zone: new fan level > 61%/39.0C" (later versions: the level, then the reading)."""

from __future__ import annotations

import re

from ..facts import Decision, Reading

DAEMON = "smfc"
_V3 = re.compile(r"(\b[A-Za-z][\w ]*?zone): new level > (-?\d+(?:\.\d+)?)C > \[T:-?[\d.]+C/L:(\d+(?:\.\d+)?)%\]")
_V4 = re.compile(r"(\b[A-Za-z][\w ]*?): new fan level > (\d+(?:\.\d+)?)%/(-?\d+(?:\.\d+)?)C")


def _logged(text: str) -> list[tuple[str, float, float]]:
    """(zone, temperature, level) of each new level logged, in the log's order."""
    found = [(m.start(), m.group(1).strip(), float(m.group(2)), float(m.group(3))) for m in _V3.finditer(text)]
    found += [(m.start(), m.group(1).strip(), float(m.group(3)), float(m.group(2))) for m in _V4.finditer(text)]
    return [(zone, celsius, percent) for _, zone, celsius, percent in sorted(found)]


def read(text: str) -> list[Reading]:
    """The temperature each zone's line logged, a reading of that zone in turn (its own curve's "T:" step is not a
    reading)."""
    return [Reading(DAEMON, f"{zone} temperature", celsius, f"{celsius}C", "c", None, n)
            for n, (zone, celsius, _) in enumerate(_logged(text))]


def decisions(text: str) -> tuple[Decision, ...]:
    """Each level smfc logged writing, in the log's order, with the zone it wrote it to."""
    return tuple(Decision(DAEMON, celsius, 0.0, None, n, percent=percent, why="curve", drives="bmc", what=zone)
                 for n, (zone, celsius, percent) in enumerate(_logged(text)))
