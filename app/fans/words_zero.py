"""The words of a fan that reads 0 with nothing to say it has failed (``app.fans.rules``, ``rules_state``,
``rules_read``): stopped while warmer than its controller rests a fan, at 0 with nothing read to judge it, and at 0
on a driver that lists a fan whether or not one is fitted. A rest by design is ``app.fans.words_held``'s."""

from __future__ import annotations

from collections.abc import Sequence

from .names import Names
from .wording import Facts, num, verb


def warm(n: Names, s: Sequence[str], f: Facts) -> str:
    if f.get("by_hand") == "yes":
        why = ("with its controller's own control turned off (set by hand, pwm_enable 1): held as it was set, nothing "
               "of its controller's starts it as the heat rises; a program that sets it (i8kmon, fancontrol) must, or "
               "the automatic control handed back.")
    else:
        why = f"{_warmer(f)}: about to start, or not cooling; watch that it starts as the heat rises."
    return f"The {n(s[0])} reads {f['reading']} while {n(f['source'])} is at {num(f['source_c'])} °C, {why}"


def _warmer(f: Facts) -> str:
    """Warmer than the fan's rest: its controller's own stop temperature where read, else a cautious bound, said as
    one (no embedded controller documents the temperature it starts its fans at)."""
    if f.get("below_known") == "yes":
        return f"warmer than its controller's own stop temperature ({num(f['below_c'])} °C)"
    return (f"warmer than FanWhy takes such a controller to rest a fan (a cautious {num(f['below_c'])} °C; its own "
            "figure is not read)")


def zero_unjudged(n: Names, s: Sequence[str], f: Facts) -> str:
    return (f"The {n.some(s)} {verb(s, 'reads', 'read')} {f.get('reading', '0 RPM')}: at rest, or a tachometer that "
            "does not report; no temperature of what it cools is read that would tell them apart.")


def listed_unfitted(n: Names, s: Sequence[str], f: Facts) -> str:
    where = f" with {n(f['source'])} at {num(f['source_c'])} °C" if "source" in f else ""
    above_rest = "source_c" in f and float(f["source_c"]) >= float(f["below_c"])
    what = f", {_warmer(f)}: not turning" if above_rest else ": at rest"
    board = (" On a desktop board the fans are counted by its Super-I/O chip, which is not read here (sensors-detect "
             "names its driver).") if f.get("board_chip") == "unread" else ""
    return (f"The {n(s[0])} reads 0 RPM{where}{what}, not counted, or no fan at all: its driver lists the fan the "
            f"firmware describes and only guesses whether one is fitted.{board}")
