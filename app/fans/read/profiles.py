"""The speed profiles a cooler was given on its command line: liquidctl's ``set <channel> speed <temperature>
<duty> ...`` (pairs of °C and %, on the cooler's liquid temperature; liquidctl(8), "Speed profiles"), each as the
curve it imposes on that channel. The cooler is named by the listing beside it: the one whose channels are read. A
single ``set <channel> speed <duty>`` is a fixed duty (``fixed``): the channel held there by the command, not by the
cooler's own profile."""

from __future__ import annotations

import re

from ..facts import LIQUID, Curve

# a command's flags after its numbers are liquidctl's own (-v, --verbose, --debug, --direct-access); a shell's
# redirection or pipe after them ("2>&1 | grep INFO") is not part of it
SET_COMMAND = re.compile(r"liquidctl(?:\.exe)?\b[^\n]*?\bset\s+(\w+)\s+speed((?:\s+\d+\b(?!>))+)\s*"
                         r"(?:-{1,2}[A-Za-z][\w-]*\s*)*(?:(?:\d?>&?\d*|\|)[^\n]*)?$", re.MULTILINE)
# liquidctl's own account of a profile it sends (its drivers' INFO lines, -v or --debug): the duty for each liquid
# temperature, the device's table after liquidctl interpolated the points it was given
_SENT = re.compile(r"^(?:\[INFO\] liquidctl\.driver\.(\w+):|INFO:)\s*setting (\w+) PWM duty to (\d+)% for liquid "
                   r"temperature >= (\d+)°?C", re.MULTILINE)
_MATCH = re.compile(r"liquidctl(?:\.exe)?\b[^\n]*?(?:--match[= ]|-m\s+)['\"]?([^'\"\s]+)")
_ERROR = re.compile(r"^ERROR:", re.MULTILINE)  # liquidctl's failure: what it was asked to set is not in effect


def profiles(text: str, cooler: str | None) -> tuple[Curve, ...]:
    """The curves liquidctl's ``set ... speed`` commands in ``text`` impose on ``cooler``'s channels; a fixed duty
    None without a cooler read to put them on, where liquidctl reported an error, or for a list of numbers that
    is not pairs."""
    if cooler is None or _ERROR.search(text):
        return ()
    found: dict[str, Curve] = {}
    for match in SET_COMMAND.finditer(text):
        channel, numbers = match.group(1).lower(), [float(n) for n in match.group(2).split()]
        if len(numbers) >= 4 and len(numbers) % 2 == 0:
            points = tuple(zip(numbers[::2], numbers[1::2], strict=True))
            found[channel] = Curve("liquidctl", cooler, channel, LIQUID, points)  # the last set of a channel holds
    commanded = {m.group(1).lower() for m in SET_COMMAND.finditer(text)}
    for channel, table in _sent(text).items():
        if channel not in commanded and len({p for _, p in table}) > 1:  # one duty throughout: ``fixed``'s
            found[channel] = Curve("liquidctl", cooler, channel, LIQUID, _breakpoints(table))
    return tuple(found.values())


def named(text: str) -> str | None:
    """The cooler a liquidctl command or log in ``text`` names, where no listing names it: its driver in the log
    (``kraken2``), else what the command matched (``--match kraken``)."""
    driver = next((m.group(1) for m in _SENT.finditer(text) if m.group(1)), None)
    match = _MATCH.search(text)
    if driver or match:
        return driver or (match.group(1) if match else None)
    return "cooler" if _SENT.search(text) or SET_COMMAND.search(text) else None


def _sent(text: str) -> dict[str, list[tuple[float, float]]]:
    """Each channel's table as liquidctl logged sending it, the last run of it standing (a run starts again where
    the temperature does not rise). Read for a channel no command in the text sets: a command's points are the
    profile, its log a sample of the table drawn from them (a paste often cuts it: "[...]")."""
    found: dict[str, list[tuple[float, float]]] = {}
    for m in _SENT.finditer(text):
        channel, point = m.group(2).lower(), (float(m.group(4)), float(m.group(3)))
        run = found.setdefault(channel, [])
        if run and point[0] <= run[-1][0]:
            run.clear()
        run.append(point)
    return found


def _breakpoints(points: list[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
    """A table of one duty per degree as the few points it was drawn through (split where a duty is furthest from
    the line between the ends, until every duty is within ROUNDING of its line), its flat start and end cut to where
    they meet the slope."""
    kept = _split(points)
    while len(kept) > 2 and kept[0][1] == kept[1][1]:
        kept.pop(0)
    while len(kept) > 2 and kept[-1][1] == kept[-2][1]:
        kept.pop()
    return tuple(kept)


def _split(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    (t0, p0), (t1, p1) = points[0], points[-1]
    off = [abs(p0 + (p1 - p0) * (t - t0) / (t1 - t0) - p) if t1 != t0 else 0.0 for t, p in points]
    worst = max(range(len(points)), key=off.__getitem__)
    if off[worst] <= ROUNDING:
        return [points[0], points[-1]]
    return _split(points[:worst + 1])[:-1] + _split(points[worst:])


ROUNDING = 1.0  # per cent: each duty liquidctl logs is rounded to a whole per cent, so two ends and a point between
# them may each be half a per cent off the curve


def fixed(text: str, cooler: str | None) -> tuple[tuple[str, float], ...]:
    """Each channel ``text`` sets to one fixed duty on ``cooler`` (the last set of a channel holds); none without a
    cooler, or where liquidctl reported an error."""
    if cooler is None or _ERROR.search(text):
        return ()
    found: dict[str, float] = {}
    for match in SET_COMMAND.finditer(text):
        numbers = match.group(2).split()
        if len(numbers) == 1:
            found[match.group(1).lower()] = float(numbers[0])
        else:
            found.pop(match.group(1).lower(), None)  # a profile set after it holds instead
    commanded = {m.group(1).lower() for m in SET_COMMAND.finditer(text)}
    for channel, table in _sent(text).items():  # liquidctl's log of what it sent: one duty throughout is fixed
        duties = {p for _, p in table}
        if channel not in commanded and len(duties) == 1 and table[-1][0] - table[0][0] >= WHOLE_TABLE_C:
            found[channel] = duties.pop()
    return tuple(found.items())


# liquidctl's Kraken tables run from 20 to 59 °C of liquid temperature (kraken2.py, kraken3.py): a log of one duty
# over less than half of that is a log cut short, which may not hold the profile's rise
WHOLE_TABLE_C = 20.0
