"""The words of a graphics card that reports no fan of its own (the rule "a GPU with no fan reading"): what such a card
is, by its line (a data-center card, a laptop's GPU, or a card whose name does not say), and what its heat asks to
read; and of a card slowing its clocks for heat (by the reasons its tool reports, or at its own Max Operating
Temp)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from .names import Names
from .wording import Facts
from .wording import num as _num


def no_gpu_fan(n: Names, s: Sequence[str], f: Facts) -> str:
    said = {"n/a": "reports no fan speed ([N/A])", "none": "is a data-center card (its tool reads no fan for it)"}.get(
        str(f.get("reads")), "reads 0 %, as data-center cards do for a fan they do not have")
    lead, tail = _NO_GPU_FAN.get(str(f.get("line")), _NO_GPU_FAN[""])
    who = n(s[0]) if len(s) == 1 else f"Each of {n.some(s)}"  # cards alike, said once: the words are each card's
    if "celsius" not in f:
        return f"{who} {said}: {lead}"
    hot = f"The hottest, {n(str(f['hottest']))}," if "hottest" in f else "It"
    return f"{who} {said}: {lead} {hot} is at {_num(f['celsius'])} °C{tail}"


# what a card that reports no fan of its own is, by its line, and what its heat asks to read
_NO_GPU_FAN = {
    "datacenter": ("a data-center card has no fan of its own; the chassis fans cool it (a server's BMC lists them: "
                   "ipmitool sdr).", ", so the airflow that cools it matters now: it has nothing of its own to raise "
                   "(in a server, the BMC's fans; in a desktop case, a passive card needs a fan or duct of its own)."),
    "laptop": ("a laptop's GPU has no fan the card drives; the laptop's embedded controller drives the fans that cool "
               "it (sensors lists them).", ": the laptop's fans, and what keeps them from cooling it, are the ones "
               "to read."),
    # GeForce and workstation cards are sold with fans of their own; nvidia-smi(1) gives a part that relies on the
    # enclosure's fans as the reason for no reading, so which it is cannot be told from the reading
    "consumer": ("nvidia-smi reads no fan for a card the enclosure's fans cool (nvidia-smi(1)), but a GeForce card "
                 "usually has fans of its own: whether this one has a fan its driver does not report cannot be told "
                 "here.", ": whatever cools it, its own fan or the airflow past it, is the one to check."),
    "workstation": ("nvidia-smi reads no fan for a card the enclosure's fans cool (nvidia-smi(1)), but a workstation "
                    "card usually has a blower of its own: whether this one has a fan its driver does not report "
                    "cannot be told here.", ": whatever cools it, its own fan or the airflow past it, is the one to "
                    "check."),
    "": ("it has no fan of its own (passively cooled by the chassis fans, or a laptop GPU whose fans the laptop's "
         "embedded controller drives: read those instead).", ": the fans that cool it (the laptop's, or the "
         "chassis') are the ones to read."),
}


def slowing_for_heat(n: Names, s: Sequence[str], f: Facts) -> str:
    if "cards" in f:  # cards alike, said once: the hottest's readings, each card's words
        cards = sorted((k for k in s if re.fullmatch(r"nvidia/gpu\d+", k)), key=lambda k: int(k[10:]))
        head = f"Each of {n.some(cards)} (the hottest, {n(s[0])}, at {_num(f['celsius'])} °C)" if "celsius" in f \
            else f"Each of {n.some(cards)}"
        return _slowing_words(lambda _: head, s, {k: v for k, v in f.items() if k != "celsius"})
    return _slowing_words(n, s, f)


def _slowing_words(n: Callable[[str], str], s: Sequence[str], f: Facts) -> str:
    at = f" at {_num(f['celsius'])} °C" if "celsius" in f else ""
    limit = f", its slowdown temperature {_num(f['slowdown_c'])} °C" if "slowdown_c" in f else ""
    if "max_operating_c" in f:  # no reason read: the card at its own limit, where the driver holds it
        gap = float(f["slowdown_c"]) - float(f["max_operating_c"]) if "slowdown_c" in f else 0.0
        under = f" ({_num(gap)} °C under its slowdown temperature, {_num(f['slowdown_c'])} °C)" if gap > 0 else ""
        said = (f"{n(s[0])} is{at}, at its Max Operating Temp of {_num(f['max_operating_c'])} °C{under}, where "
                "NVIDIA's driver lowers its clocks to keep it under (a software thermal slowdown): most likely it "
                "runs as hot as that limit lets it")
        if "duty" not in f and f.get("passive") != "yes":
            return f"{said}; its clocks are what hold it there (its fan is not read here)."
    else:
        reasons = ", ".join(" ".join(w.upper() if w in ("sw", "hw") else w.capitalize() for w in r.split("_"))
                            for r in str(f["reasons"]).split(", "))
        brake = "; HW Slowdown is also the power brake, which NVML does not tell apart" \
            if str(f["reasons"]) == "hw_slowdown" else ""
        said = (f"{n(s[0])} reports its clocks slowed for heat ({reasons}{brake}){at}{limit}: it runs as hot as it "
                "is let")
    if f.get("full") == "yes":
        return (f"{said}, and its fan is at full ({_num(f['duty'])} %) for it: what cools the card is at its limit "
                "(the airflow around it, dust in its heatsink, or a fan that turns slower than asked).")
    if "duty" in f:
        return (f"{said}, while its fan is at only {_num(f['duty'])} %: the fan has room to go faster; if a tool or "
                "a manual setting holds it there, raising it cools the card (the card's own automatic curve may "
                "also trade clocks for less noise).")
    if f.get("passive") == "yes":
        return (f"{said}, and it has no fan of its own: the airflow around it (a server's fans, or a fan ducted to "
                "it) is not enough.")
    return f"{said}: what cools it is at its limit."
