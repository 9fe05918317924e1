"""An embedded controller's own reading of the CPU, in words: no reading (``ec-cpu-unread``), or one far above the
CPU's own sensor (``ec-cpu-misread``). Its fan follows that reading, not the CPU. ``app.fans.words`` registers each
as the template of its finding kind."""

from __future__ import annotations

from collections.abc import Sequence

from .names import Names
from .wording import Facts
from .wording import num as _num


def unread(n: Names, s: Sequence[str], f: Facts) -> str:
    other = f", while {n(f['other'])} reads {_num(f['other_c'])} °C" if "other" in f else ""
    said = (f"The embedded controller's own CPU temperature ({n(s[0])}) reads {_num(f['raw_c'])} °C, which is no "
            f"reading{other}")
    if "failsafe" in f:  # system76/ec peci.c: a read that fails reports 0 and runs the fan at its failsafe duty
        return (f"{said}: the controller cannot read the CPU, and its firmware then runs the fan at "
                f"{_num(f['failsafe'])} % whatever the CPU does (it turns at {_num(f['fan_rpm'])} RPM), until it "
                "reads the CPU again.")
    if float(f.get("fan_rpm", -1)) > 0:
        return (f"{said}; its fan turns at {_num(f['fan_rpm'])} RPM all the same, so the controller runs it on "
                "something other than that reading (a fixed failsafe speed, or another sensor of its own): it does "
                "not follow the CPU's heat.")
    fan = " Its fan reads 0 RPM." if f.get("fan_rpm") == 0 else ""
    return f"{said}: a controller whose fan curve follows it never asks for cooling.{fan}"


def misread(n: Names, s: Sequence[str], f: Facts) -> str:
    fans = [n(k) for k in s[1:]]
    which = fans[0] if len(fans) == 1 else f"{', '.join(fans[:-1])} and {fans[-1]}"
    return (f"The embedded controller's own CPU temperature ({n(s[0])}) reads {_num(f['ec_c'])} °C while the CPU's own "
            f"sensor ({n(f['other'])}) reads {_num(f['other_c'])} °C: the {which} " +
            (f"at {_num(f['rpm'])} RPM" if len(fans) == 1 else f"(up to {_num(f['rpm'])} RPM)") + " " +
            ("follows the controller's reading" if f.get("documented") != "no" else
             "most likely follows the controller's reading (as an embedded controller's fan table does where its "
             "source is published; this one's is not)") +
            ", which is wrong (stuck or misread), so it runs for heat the CPU does not have, until the controller "
            "reads the CPU right again.")


def low(n: Names, s: Sequence[str], f: Facts) -> str:
    fans = [n(k) for k in s[1:]]
    which = fans[0] if len(fans) == 1 else f"{', '.join(fans[:-1])} and {fans[-1]}"
    speed = "stopped" if not float(f["rpm"]) else f"at {_num(f['rpm'])} RPM" if len(fans) == 1 else \
        f"up to {_num(f['rpm'])} RPM"
    return (f"The embedded controller's own CPU temperature ({n(s[0])}) reads {_num(f['ec_c'])} °C while the CPU's own "
            f"sensor ({n(f['other'])}) reads {_num(f['other_c'])} °C: the {which} ({speed}) "
            + ("follows" if f.get("documented") != "no" else "most likely follows (as an embedded controller's fan "
               "table does where its source is published; this one's is not)")
            + f" the controller's reading, so it is asked for the cooling of a CPU at {_num(f['ec_c'])} °C: a reading "
            "that stays this far under the CPU's (stuck or misread; one taken just before a burst of load would not "
            "stay) keeps it slower than the CPU needs: read both again.")
