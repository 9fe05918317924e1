"""The words of a graphics card that reports no fan of its own (the rule "a GPU with no fan reading"): what such a card
is, by its line (a data-center card, a laptop's GPU, or a card whose name does not say), and what its heat asks to
read."""

from __future__ import annotations

from collections.abc import Sequence

from .names import Names
from .wording import Facts
from .wording import num as _num


def no_gpu_fan(n: Names, s: Sequence[str], f: Facts) -> str:
    said = "reports no fan speed ([N/A])" if f.get("reads") == "n/a" else \
        "reads 0 %, as data-center cards do for a fan they do not have"
    lead, tail = _NO_GPU_FAN.get(str(f.get("line")), _NO_GPU_FAN[""])
    return f"{n(s[0])} {said}: {lead}" + (f" It is at {_num(f['celsius'])} °C{tail}" if "celsius" in f else "")


# what a card that reports no fan of its own is, by its line, and what its heat asks to read
_NO_GPU_FAN = {
    "datacenter": ("a data-center card has no fan of its own; the chassis fans cool it (a server's BMC lists them: "
                   "ipmitool sdr).", ", so the airflow that cools it matters now: it has nothing of its own to raise "
                   "(in a server, the BMC's fans; in a desktop case, a passive card needs a fan or duct of its own)."),
    "laptop": ("a laptop's GPU has no fan the card drives; the laptop's embedded controller drives the fans that cool "
               "it (sensors lists them).", ": the laptop's fans, and what keeps them from cooling it, are the ones "
               "to read."),
    "": ("it has no fan of its own (passively cooled by the chassis fans, or a laptop GPU whose fans the laptop's "
         "embedded controller drives: read those instead).", ": the fans that cool it (the laptop's, or the "
         "chassis') are the ones to read."),
}
