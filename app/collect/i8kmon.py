"""What i8kutils' ``i8kmon`` is configured to do on a Dell machine (``/etc/i8kmon.conf``, or the table ``i8kmon -v``
echoes as it starts): its fan states by temperature, a stepped curve for each of its two fans.

i8kmon(1): a table of ``set config(N) {{left right} low_ac high_ac low_batt high_batt}``; it moves to the next entry
when the CPU's temperature rises past the current entry's high and back when it falls under its low, and sets each
fan to the state the entry names; ``config(num_configs)`` says how many entries it uses (the rest are not read). The
states are i8k's (``linux/i8k.h``: I8K_FAN_OFF 0, LOW 1, HIGH 2, TURBO 3; left is fan 1 of the SMM interface, right
fan 0), and the dell-smm-hwmon driver scales a state to a duty against its highest (2 on most machines): 0, 50 and
100 %. Steps are on mains power, as the low_ac column gives them; the battery columns apply on battery.
"""

from __future__ import annotations

import re

from ..fans.read.i8k import state_percent
from .daemonyaml import Read
from .fancontrol import Declared

# "set config(2) {{1 1} 60 80 65 85}" in the file; "config(2) = {1 1} 60 80 65 85" as i8kmon -v echoes it
_ENTRY = re.compile(r"^\s*(?:set\s+)?config\((\d+)\)\s*=?\s*\{\s*\{?\s*(\d)\s+(\d)\s*\}?\s+(-?\d+)\s+(-?\d+)"
                    r"\s+(-?\d+)\s+(-?\d+)\s*\}?", re.MULTILINE)
_COUNT = re.compile(r"^\s*(?:set\s+)?config\(num_configs\)\s*=?\s*(\d+)", re.MULTILINE)
FANS = (("left fan", 0), ("right fan", 1))  # the order of each entry's fan states


def parse(text: str) -> Read:
    """Each fan's steps from an i8kmon configuration or its echo; nothing from a text with no entry."""
    entries = {int(m.group(1)): m for m in _ENTRY.finditer(text)}
    count = _COUNT.search(text)
    used = sorted(n for n in entries if count is None or n < int(count.group(1)))
    if not used:
        return Read(())
    declared = []
    for name, index in FANS:
        steps = [(float(entries[n].group(4)), state_percent(int(entries[n].group(2 + index)))) for n in used]
        points = tuple(step for i, step in enumerate(steps) if i == 0 or step[1] != steps[i - 1][1])  # a change
        declared.append(Declared(chip="i8k", pwm=name, source_chip=None, source=None, fans=(), curve=points,
                                 floor_percent=points[0][1], daemon="i8kmon", follows="the CPU's temperature",
                                 stepped=True))
    return Read(tuple(declared))
