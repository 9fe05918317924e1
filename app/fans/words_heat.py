"""A part at or past its own critical limit, in words: at it now (``at-critical``), its driver's critical alarm set
though it reads under it now (``crit-since-boot``), or a thermal zone the kernel logged at its critical trip
(``zone-critical``). ``app.fans.words`` registers each as the template of its finding kind."""

from __future__ import annotations

from collections.abc import Sequence

from .names import Names
from .wording import Facts
from .wording import num as _num


def at_critical(n: Names, s: Sequence[str], f: Facts) -> str:
    more = int(float(f.get("count", 1))) - 1
    others = f" (and {more} more of its sensors)" if more else ""
    at = f"{n(s[0])} is at {_num(f['celsius'])} °C{others}, " + \
        ("at" if f["celsius"] == f["crit_c"] else "past") + \
        f" its own critical limit ({_num(f['crit_c'])} °C, as its driver reports it)"
    if f.get("role") == "cpu":  # coretemp.rst: at TjMax its protection forcibly cools the processor
        return (f"{at}: there the CPU protects itself, slowing down to stay at it, so its cooling is not carrying its "
                "load (a fan too slow or clogged, dried-out paste on its heatsink, or more load than the cooler was "
                "made for).")
    part = "the GPU" if f.get("role") == "gpu" else "the drive" if f.get("role") == "storage" else "the part"
    return (f"{at}: {part} is as hot as it is rated to run, so its cooling is not carrying its load (too little "
            "airflow over it, a fan too slow or clogged, or more load than its cooling was made for).")


def crit_since(n: Names, s: Sequence[str], f: Facts) -> str:
    more = int(float(f.get("count", 1))) - 1
    others = f" (and {more} more of its sensors)" if more else ""
    since = ("coretemp's flag never clears, so at some point since the machine started" if f.get("never_clears") ==
             "yes" else "the flag sticks until it is cleared, so at some point since then")
    limit = f" ({_num(f['crit_c'])} °C)" if "crit_c" in f else ""
    cpu = (": there the CPU forcibly cools itself, slowing down, and correct operation is no longer guaranteed"
           if f.get("role") == "cpu" else "")
    return (f"{n(s[0])} reads {_num(f['celsius'])} °C now{others}, but its driver's critical alarm is set (ALARM "
            f"(CRIT)): it has reached its critical limit{limit} since the flag was last cleared; "
            f"{since}{cpu}. Its cooling did not carry its load at its busiest (a fan too slow or clogged, dried-out "
            "paste, or more load than the cooler was made for).")


def zone_critical(n: Names, s: Sequence[str], f: Facts) -> str:
    """The kernel shut the machine down for a thermal zone at its critical trip."""
    zone = f"{f['zone']} ({f['type']})" if "type" in f else str(f["zone"])
    at = f" at {_num(f['celsius'])} °C" if "celsius" in f else ""
    times = f" ({_num(f['times'])} times in this log)" if float(f["times"]) > 1 else ""
    return (f"The kernel shut the machine down because {zone} reached its critical trip{at}{times}: what that zone "
            "measures was not cooled enough at that moment (a stopped, slow or clogged fan, or more heat than its "
            "cooling was made for); the trip itself is the platform's (ACPI's _CRT, or a device tree's), and the fans "
            "that cool that part are the ones to check.")
