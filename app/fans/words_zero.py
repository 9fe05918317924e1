"""The words of a fan that reads 0 (``app.fans.rules``, ``rules_state``, ``rules_read``): with nothing to say it has
failed, stopped while warmer than its controller rests a fan, at 0 with nothing read to judge it, and at 0 on a driver
that lists a fan whether or not one is fitted; at 0 beside a part too hot for any rest; and at rest by its
controller's design (with another card turning no warmer said beside it)."""

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


def hot_not_cooled(n: Names, subjects: Sequence[str], f: Facts) -> str:
    s = [k for k in subjects if k != f["source"]]  # the fans (their source is a subject too)
    fans, reads = n.some(s), verb(s, "reads", "read")
    if "duty" in f:
        return (f"The {fans} {verb(s, 'is', 'are')} driven at {num(f['duty'])} % and {reads} {f['raw'] or '0 RPM'} "
                f"while {n(f['source'])} is at {num(f['source_c'])} °C: either {verb(s, 'its', 'their')} speed is "
                f"not counted (the fan turns) or it has stalled and nothing cools that part: check that "
                f"{verb(s, 'it spins', 'they spin')}.")
    if not f["raw"] and f.get("reading") == "0 %":  # a duty of 0 and no speed read: nothing asks it to turn
        return (f"The {fans} {verb(s, 'is', 'are')} asked for 0 % ({verb(s, 'its', 'their')} speed is not read) "
                f"while {n(f['source'])} is at {num(f['source_c'])} °C, hotter than any controller lets a fan rest: "
                "nothing is driving it to cool that part (a controller without its sensor, a setting, or no fan "
                f"there): check that {verb(s, 'it spins', 'they spin')}.")
    return (f"The {fans} {reads} {f['raw'] or f.get('reading') or '0 RPM'} (not turning, as far as "
            f"{verb(s, 'it counts', 'they count')}) while {n(f['source'])} "
            f"is at {num(f['source_c'])} °C, hotter than any controller lets a fan rest: that part may be running "
            "without working cooling (a stopped or failed fan, or one whose speed is not counted): check that "
            f"{verb(s, 'it spins', 'they spin')}.")


def _rest(n: Names, s: Sequence[str], f: Facts) -> str:
    where = f" with {n(f['source'])} at {num(f['source_c'])} °C" if "source" in f else ""
    if f.get("design") == "rest-or-passive":
        return (f"The {n.some(s)} {verb(s, 'reads', 'read')} 0 %{where}: at rest (fan-stop), or a passively cooled "
                "card that reports 0 % for a fan it does not have; no target or speed is read to tell them apart.")
    if "trip" in f:
        return (f"The {n.some(s)} {verb(s, 'reads', 'read')} {f.get('reading', '0 RPM')}{where}: at rest: the "
                f"kernel's thermal zone turns {verb(s, 'it', 'them')} on at its active trip, {num(f['trip'])} °C.")
    if f.get("design") == "rest":
        when = f"below {num(f['below_c'])} °C, its own stop temperature" if f.get("below_known") != "no" else \
            "cool; the temperature it starts it at is not read here"
        stall = ("; or stalled: this controller reads a stalled fan as 0 too, and its own table, which tells them "
                 "apart, is not read") if f.get("stall_reads_zero") == "yes" else ""
        return (f"The {n.some(s)} {verb(s, 'reads', 'read')} {f.get('reading', '0 RPM')}{where}: at rest by its "
                f"controller's design (it stops the fan while {when}){stall}.")
    return (f"The {n.some(s)} {verb(s, 'reads', 'read')} {f.get('reading', '0 RPM')}{where}: at rest (its embedded "
            "controller stops the fans while the machine is cool), or its tachometer does not report (some "
            "controllers never fill it); which one cannot be told from here.")


def at_rest(n: Names, s: Sequence[str], f: Facts) -> str:
    """A rest by design, and beside it another card's fan turning no warmer where one was read."""
    return _rest(n, s, f) + (" " + _twin(n, s, f) if "twin" in f else "")


def _twin(n: Names, s: Sequence[str], f: Facts) -> str:
    """Another card's fan of the same driver under its firmware, turning no warmer: cards of one model differ so only
    inside their fan-stop band (one started when warmer and not yet stopped), so a 0 that stays as the card warms
    past its twin's is worth a look."""
    asked = f"{num(f['twin_duty'])} %" if "twin_duty" in f else f"{num(f['twin_rpm'])} RPM"
    return (f"The {n(f['twin'])} is at {asked} with its card at {num(f['twin_c'])} °C, no warmer: cards of one model "
            "on their firmware's curve differ so only inside their fan-stop band (one started when warmer and not "
            f"yet stopped); if {verb(s, 'this one stays', 'these stay')} at 0 as "
            f"{verb(s, 'its card warms', 'their cards warm')}, "
            f"check that {verb(s, 'it spins', 'they spin')} (a stopped fan, or a duty the tool fails to read, shows "
            "the same 0).")
