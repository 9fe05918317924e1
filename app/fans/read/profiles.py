"""The speed profiles a cooler was given on its command line: liquidctl's ``set <channel> speed <temperature>
<duty> ...`` (pairs of °C and %, on the cooler's liquid temperature; liquidctl(8), "Speed profiles"), each as the
curve it imposes on that channel. The cooler is named by the listing beside it: the one whose channels are read. A
single ``set <channel> speed <duty>`` is a fixed duty (``fixed``): the channel held there by the command, not by the
cooler's own profile."""

from __future__ import annotations

import re

from ..facts import Curve

# a command's flags after its numbers are liquidctl's own (-v, --verbose, --debug, --direct-access)
_SET = re.compile(r"liquidctl(?:\.exe)?\b[^\n]*?\bset\s+(\w+)\s+speed((?:\s+\d+)+)\s*(?:-{1,2}[A-Za-z][\w-]*\s*)*$",
                  re.MULTILINE)
_ERROR = re.compile(r"^ERROR:", re.MULTILINE)  # liquidctl's failure: what it was asked to set is not in effect
LIQUID = "Liquid temperature"  # what a cooler's profile follows (liquidctl's drivers: the liquid it reads)


def profiles(text: str, cooler: str | None) -> tuple[Curve, ...]:
    """The curves liquidctl's ``set ... speed`` commands in ``text`` impose on ``cooler``'s channels; a fixed duty
    None without a cooler read to put them on, where liquidctl reported an error, or for a list of numbers that
    is not pairs."""
    if cooler is None or _ERROR.search(text):
        return ()
    found: dict[str, Curve] = {}
    for match in _SET.finditer(text):
        channel, numbers = match.group(1).lower(), [float(n) for n in match.group(2).split()]
        if len(numbers) >= 4 and len(numbers) % 2 == 0:
            points = tuple(zip(numbers[::2], numbers[1::2], strict=True))
            found[channel] = Curve("liquidctl", cooler, channel, LIQUID, points)  # the last set of a channel holds
    return tuple(found.values())


def fixed(text: str, cooler: str | None) -> tuple[tuple[str, float], ...]:
    """Each channel ``text`` sets to one fixed duty on ``cooler`` (the last set of a channel holds); none without a
    cooler, or where liquidctl reported an error."""
    if cooler is None or _ERROR.search(text):
        return ()
    found: dict[str, float] = {}
    for match in _SET.finditer(text):
        numbers = match.group(2).split()
        if len(numbers) == 1:
            found[match.group(1).lower()] = float(numbers[0])
        else:
            found.pop(match.group(1).lower(), None)  # a profile set after it holds instead
    return tuple(found.items())
