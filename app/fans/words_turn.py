"""A fan's readings in turn, in words: one that stops and starts (``stops-and-starts``), one that rises and falls with
the temperature it follows (``swings-with-source``). ``app.fans.words`` registers each as the template of its
finding kind."""

from __future__ import annotations

from collections.abc import Sequence

from .names import Names
from .wording import Facts
from .wording import num as _num


def cycles(n: Names, s: Sequence[str], f: Facts) -> str:
    changes = f"between 0 and {_num(f['top_rpm'])} RPM {_num(f['changes'])} times in {_num(f['readings'])} readings"
    if f.get("design") == "rest" and "source" in f:
        return (f"The {n(s[0])} went {changes} with {n(f['source'])} at {_num(f['source_c'])} °C, "
                f"near where its controller stops the fan (about {_num(f['below_c'])} °C): fan-stop starts it when "
                "warm and stops it once cooled, so at this temperature it cycles; that is the design, not a fault.")
    return (f"The {n(s[0])} went {changes}: a fan its controller stops and starts, or a tachometer that drops out; "
            "what is read does not say which.")


def swings(n: Names, s: Sequence[str], f: Facts) -> str:
    how = "as its controller declares" if f.get("declared") == "yes" else \
        "or one that moves with it: its readings show it"
    unit = " %" if f.get("unit") == "%" else " RPM"
    calm = ("A card's own curve runs on its temperature, which rises and falls with the work on the card: the load "
            "is what moves it." if f.get("card") == "yes" else
            "A temperature that jumps with short bursts of load swings it with every burst; a curve with a flat "
            "start, or the chip's step-up and step-down times where it has them, smooths it.")
    return (f"The {n(s[0])} rose and fell between {_num(f['low'])} and {_num(f['high'])}{unit} with "
            f"{n(f['source'])}, which went between {_num(f['low_c'])} and {_num(f['high_c'])} °C in the same "
            f"{_num(f['readings'])} readings: it follows that temperature ({how}), so it is loud when that is "
            f"high and quiet when it falls, and it swings as often as the temperature does. {calm}")
