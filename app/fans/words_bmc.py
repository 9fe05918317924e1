"""A server BMC's fan thresholds in words: a fan at or under its lower-critical threshold (failing to the BMC, and the
quiet-fan cycle where the BMC answers it with every fan at full) and one under its lower non-critical threshold (the
BMC's warning); a BMC's own fan setting (an iDRAC's, a Supermicro BMC's fan mode). ``app.fans.words`` registers each
as the template of its finding kind."""

from __future__ import annotations

from collections.abc import Sequence

from .names import Names
from .wording import Facts, verb
from .wording import num as _num


def _bmc(n: Names, s: Sequence[str], f: Facts) -> str:
    """Fans alike (one speed, one threshold or status: ``app.fans.words.grouped``) are said once."""
    labels = n(s[0]).removesuffix(" (BMC)") if len(s) == 1 else "NAME"
    threshold = f"of {_num(f['lcr'])} RPM" if "lcr" in f else \
        f"({verb(s, 'its', 'their')} status reads {f.get('status', 'critical')})"
    said = (f"The {n.some(s)} {verb(s, 'turns', 'turn')} at {_num(f['rpm'])} RPM, at or below the BMC's lower-critical "
            f"threshold {threshold}: the BMC counts {verb(s, 'it', 'them')} as failing")
    it, fan = verb(s, "it", "them"), verb(s, "a quiet fan", "quiet fans")
    if f.get("near") != "yes":  # far under its threshold, or no threshold read: both readings stand
        return (f"{said}: {verb(s, 'a failing fan', 'failing fans')} (a worn bearing, a blocked or half-seated fan: "
                f"replace {it}), or {verb(s, 'a quiet one', 'quiet ones')} slower than the threshold set for {it} "
                "(ipmitool sensor lists the threshold); if the latter, a BMC that answers a failing fan with every fan "
                "at full speed makes the fans cycle.")
    return (f"{said}, and a BMC that answers a failing fan with every fan at full speed (Supermicro's does) ramps "
            f"them up until it reads above again, then down: the fans cycle. {verb(s, 'The fan is', 'The fans are')} "
            f"most likely healthy and just slow ({fan}): lower the threshold to fit {it} (ipmitool sensor thresh "
            f"{labels} lower ...{verb(s, '', ', for each')}).")


def _bmc_warning(n: Names, s: Sequence[str], f: Facts) -> str:
    if f.get("health") == "yes":  # the controller's own judgement, not a threshold read here
        at = ""
        if "rpm" in f:
            at = f" while it turns at {_num(f['rpm'])} RPM" if float(f["rpm"]) else " while it reads 0 RPM"
        elif "percent" in f:
            at = f" while it runs at {_num(f['percent'])} %"
        said = "with a warning (its health: Warning)" if f["status"] == "warning" else f"as {f['status']}"
        return (f"The BMC flags the {n(s[0])} {said}{at}: short of failed, but needing attention (a fan "
                "wearing out or slower than it should be, a fault in its reading, a lost redundancy); the "
                "controller's event log says which (ipmitool sel list, or its own log page).")
    if f.get("side") == "upper":
        return (f"The {n(s[0])} turns at {_num(f['rpm'])} RPM, at or above its upper non-critical threshold of "
                f"{_num(f['unc'])} RPM: the BMC flags it with a warning for turning faster than its thresholds allow "
                "(a faster fan than the one they were set for, or a reading pinned at its top), not a failure; the "
                "fan itself turns.")
    threshold = f"its lower non-critical threshold of {_num(f['lnc'])} RPM" if "lnc" in f else \
        f"its lower non-critical threshold (its status reads {f.get('status', 'nc')})"
    critical = f" of {_num(f['lcr'])} RPM" if "lcr" in f else ""
    return (f"The {n(s[0])} turns at {_num(f['rpm'])} RPM, under {threshold}: the BMC flags it with a warning, not a "
            "failure (a fan slower than the thresholds were set for, or one wearing out); should it fall to its "
            f"lower-critical threshold{critical}, the BMC counts it as failing, and a BMC that answers that with "
            "every fan at full speed (Supermicro's does) makes the fans cycle.")


def _failing_at_times(n: Names, s: Sequence[str], f: Facts) -> str:
    label = n(s[0]).removesuffix(" (BMC)")
    said = (f"The BMC counted the {n(s[0])} failing (status {f['status']}) in {_num(f['failing'])} of "
            f"{_num(f['readings'])} readings and read it turning in the others ({_num(f['slowest'])}-"
            f"{_num(f['fastest'])} RPM)")
    other = "the other fan" if f.get("others") == 1 else "the other fans"
    raised = (f"; {other} went from {_num(f['raised_from'])} to {_num(f['raised_to'])} RPM after it" if
              "raised_from" in f else "")
    if f.get("quiet") == "yes":
        return (f"{said}{raised}: it turns so slowly that the BMC at times reads no speed, counts it failed, and a BMC "
                "that answers a failing fan with every fan at full speed (Supermicro's does) ramps them up until it "
                "reads a speed again, then down: the fans cycle. The fan is most likely healthy and slow: raise its "
                f"lowest duty, or set its thresholds to fit (ipmitool sensor thresh {label} lower ...).")
    return (f"{said}{raised}: a fan or connector that fails at times (check it is seated, and its bearing), or a "
            "reading the BMC loses at times.")


def bmc_setting(n: Names, s: Sequence[str], f: Facts) -> str:
    said = f"The {f['controller']}'s {f['setting']} is {f['value']}"
    if f.get("typed") == "yes":  # set by a command typed in the paste: what was asked, not read back
        said = f"The {f['controller']}'s {f['setting']} is set to {f['value']} by the ipmitool command typed here"
    return said + {
        "pcie-card": ": with a PCIe card Dell did not qualify, the iDRAC runs every fan faster to cool that card, "
                     "whatever the temperatures read; if the card is cooled enough, disabling the response (racadm set "
                     "System.ThermalSettings.ThirdPartyPCIFanResponse 0) lets the fans slow.",
        "offset": ": the iDRAC adds that offset to every fan's speed, above what the temperatures ask.",
        "floor": f": the iDRAC keeps every fan at {f['value']} % or faster, whatever the temperatures.",
        "performance": ": the iDRAC runs the fans faster for the same temperatures than its default profile.",
        "full-mode": ": in that mode the BMC runs every fan at full speed, whatever the temperatures, unless a duty "
                     "was written for its zone (as fan tools do), which it then keeps; Standard or Optimal lets the "
                     "fans follow the temperatures (IPMICFG -fan 2 sets Optimal, or the BMC's web page).",
        "heavy-io": ": in that mode the BMC runs the peripheral zone's fans (FANA, FANB, ...) at a higher duty than "
                    "Standard or Optimal would, for add-in cards, whatever they need.",
    }[str(f["effect"])]
