"""What a fan daemon did, in words: the decisions it logged (a level, a duty it wrote), the bias that chose one,
the range it measured, a critical mode, its exit and a fan it gave up on, a pwm it set that something changed
(``app.fans.words`` registers each as the template of its finding kind), and a configuration its own check refuses."""

from __future__ import annotations

from collections.abc import Sequence

from .names import Names
from .wording import Facts
from .wording import num as _num


def _level(value: float | str) -> str:
    """A daemon's level: numbered, or one thinkpad-acpi names."""
    if isinstance(value, float):
        return f"level {_num(value)}"
    if value == "auto":
        return "level auto (the embedded controller's own control)"
    return f"level {value} (unregulated: as fast as the fan goes)"


def _decided(n: Names, s: Sequence[str], f: Facts) -> str:
    if f.get("daemon") == IDRAC:
        return _idrac(n, s, f)
    if f.get("daemon") == "ipmitool":
        return _typed(n, s, f)
    if "duty" in f:
        return _duty_written(n, s, f)
    before = f" (before it, {_level(f['before_level'])} at {_num(f['before_c'])} °C)" if "before_level" in f \
        else ""
    return (f"{f['daemon']} last logged setting the fan to {_level(f['level'])}, for a reading of "
            f"{_num(f['celsius'])} °C{before}: the level holds until its next decision.")


def _duty_written(n: Names, s: Sequence[str], f: Facts) -> str:
    if "written_to" in f:
        return {"hddfancontrol": _drives_written, "i8kmon": _state_written,
                "fan2go": _pwm_written}.get(str(f["daemon"]), _zone_written)(f)
    fans, duty, at = (f"the {n.some(s)}" if s else "the card's fans"), _num(f["duty"]), f"{_num(f['celsius'])} °C"
    again = f" at each of its last {_num(f['passes'])} passes" if float(f["passes"]) > 1 else ""
    said = {"default": f"{f['daemon']} found no point of its curve at or below the card's {at} and wrote its default "
                       f"speed, {duty} %, to {fans}{again}",
            "same": f"{f['daemon']} found {fans} at {duty} %, its curve's speed for the card's {at}, and left "
                    f"{'it' if len(s) == 1 else 'them'} there{again}"}.get(
        str(f["why"]), f"{f['daemon']} last wrote {duty} % to {fans}, its curve's speed for the card's {at}{again}")
    if "read" in f:
        return (f"{said}, yet the fans read {_num(f['read'])} % after it: the card or its driver is not taking that "
                "duty (or not yet).")
    return (f"{said}: {'they are' if len(s) != 1 else 'it is'} held at {duty} % by the tool (NVML's manual fan "
            "policy, which its writes set), not by the card's own curve, until a pass reads a temperature that "
            "another point of its curve applies to.")


IDRAC = "Dell_iDRAC_fan_controller"


def _idrac(n: Names, s: Sequence[str], f: Facts) -> str:
    """What Dell_iDRAC_fan_controller left a PowerEdge's fans at: one duty it set for every fan (the iDRAC's own
    control off) while the CPUs are at or below its threshold, or the iDRAC's own control above it (or with a CPU
    it cannot read, or in monitoring-only mode)."""
    fans = f"the {n.some(s)}" if s else "every fan"
    limit = f"{_num(f['limit'])} °C" if "limit" in f else "its threshold"
    cpu = f"{_num(f['celsius'])} °C"
    if f["why"] == "fixed":
        again = f" (the same at its last {_num(f['passes'])} passes)" if float(f["passes"]) > 1 else ""
        blind = float(f["celsius"]) <= 0  # no CPU of a running server reads this: a sensor that did not read
        seen = f"its CPU reading {cpu}, which is no temperature (a sensor that did not read)" if blind else \
            f"the CPUs reading {cpu}"
        return (f"{IDRAC} last set {fans} to {_num(f['duty'])} %{again}, {seen}: it turns the iDRAC's own fan "
                "control off and holds one duty for every fan, chosen from the CPUs' temperatures alone, so a GPU "
                f"or the disks get no more air as they heat; the iDRAC takes the fans back when a CPU reads above "
                f"{limit}{' (which that reading never will)' if blind else ' (or cannot be read)'}.")
    if f["why"] == "refused":
        return (f"{IDRAC} asked for {_num(f['duty'])} % on {fans}, but this log shows the iDRAC refusing its fan "
                "commands (ipmitool's \"Unable to send RAW command\" or the script's \"Failed to\"): where it "
                "refused to give up its own control, that control still chooses the fans' speed, not the duty asked.")
    back = f"; it sets {_num(f['asked'])} % again once every CPU reads at or below {limit}" if "asked" in f else ""
    if f["why"] == "watching":
        return (f"{IDRAC} runs in monitoring-only mode (the CPUs at {cpu}): it sets nothing, so the iDRAC's own "
                "control chooses the fans' speed, from all its sensors.")
    why = (f"as a CPU read {cpu}, above {limit}" if "limit" not in f or float(f["celsius"]) > float(f["limit"])
           else f"the CPUs reading {cpu}, not above {limit}: it does so too where a CPU cannot be read")
    return (f"{IDRAC} last gave the fans back to the iDRAC's own control (Dell's default dynamic profile), {why}: "
            f"the iDRAC chooses their speed from all its sensors, and may run them far faster than the script "
            f"would{back}.")


def _typed(n: Names, s: Sequence[str], f: Facts) -> str:
    """Dell's OEM fan commands typed into ipmitool: one duty for every fan with the iDRAC's own control off, or the
    fans given back to the iDRAC; what the iDRAC did with them is not in the paste unless its refusal is."""
    fans = f"the {n.some(s)}" if s else "every fan"
    if f["why"] == "firmware":
        return ("The last ipmitool command typed here, raw 0x30 0x30 0x01 0x01, gives the fans back to the iDRAC's own "
                "control (Dell's OEM command, as Dell_iDRAC_fan_controller sends it): the iDRAC chooses their speed, "
                "from all its sensors.")
    duty = _num(f["duty"])
    if f["why"] == "refused":
        return (f"ipmitool was asked to set {fans} to {duty} % (raw 0x30 0x30 0x02 0xff), but this paste shows the "
                "iDRAC refusing its fan commands (\"Unable to send RAW command\"): its own control still chooses the "
                "fans' speed, not the duty asked.")
    return (f"The ipmitool commands typed here turn the iDRAC's own fan control off and set {fans} to {duty} % (raw "
            "0x30 0x30 0x01 0x00, then 0x30 0x30 0x02 0xff: Dell's OEM commands, as Dell_iDRAC_fan_controller sends "
            f"them): where the iDRAC took them, the fans stay at {duty} % whatever the temperatures, so a GPU or the "
            "disks get no more air as they heat, until raw 0x30 0x30 0x01 0x01 gives them back (or the iDRAC "
            "resets); an iDRAC that refuses them answers \"Unable to send RAW command\", and its own control then "
            "still runs the fans.")


def _pwm_written(f: Facts) -> str:
    """A pwm fan2go set after its pwm map (the pwm values it found the fan to take, measured as it set the fan up or
    set in its configuration): where the map sent another pwm than its curve asked, the fan runs at that one."""
    again = f" (the same at its last {_num(f['passes'])} passes)" if float(f["passes"]) > 1 else ""
    said = (f"fan2go last set {f['written_to']} to {_num(f['duty'])} % for a reading of {_num(f['celsius'])} °C"
            f"{again}")
    if "asked" in f:
        said += (f": its curve asked for {_num(f['asked'])} %, and its pwm map sent {_num(f['duty'])} % in its place "
                 "(the map of the pwm values fan2go found this fan to take, measured as it set the fan up or set as "
                 "pwmMap), so the fan runs there, not where the curve asks")
    return (f"{said}; fan2go sets the pwm itself (pwm_enable 1), not the board's curve, and the fan holds it until "
            "its next pass.")


def _zone_written(f: Facts) -> str:
    """A level a daemon wrote to a BMC's fan zone (smfc): the BMC in its FULL mode keeps the zone's fans at it."""
    again = f" (the same at its last {_num(f['passes'])} changes)" if float(f["passes"]) > 1 else ""
    return (f"{f['daemon']} last set the {f['written_to']}'s fans to {_num(f['duty'])} %, its curve's level for "
            f"{_num(f['celsius'])} °C{again}: it runs the BMC in its FULL fan mode and writes each zone's level "
            "itself, so those fans stay at that level, not at the BMC's own fan mode, until smfc reads a temperature "
            "its curve gives another level.")


def _state_written(f: Facts) -> str:
    """A state i8kmon left one of a Dell's fans in: it sets the state itself (i8kfan) from the CPU's temperature and
    its table, each pass; the BIOS may still override it where its own control is on."""
    again = f" (the same at its last {_num(f['passes'])} passes)" if float(f["passes"]) > 1 else ""
    return (f"i8kmon last left the {f['written_to']} at {_num(f['duty'])} % (its state {_num(float(f['duty']) / 50)} "
            f"of 0-2) for the CPU at {_num(f['celsius'])} °C{again}: it sets each fan's state itself from its table, "
            "until a pass reads a temperature past that state's bounds (where the BIOS's own fan control is on, the "
            "BIOS may change it meanwhile).")


def _drives_written(f: Facts) -> str:
    """A speed hddfancontrol set for its drives: it takes the pwm (pwmN_enable 1) and holds the fan there until its
    next pass; its Python releases log the speed before their minimum is applied to the pwm."""
    again = f" (the same at its last {_num(f['passes'])} passes)" if float(f["passes"]) > 1 else ""
    said = (f"hddfancontrol last set {f['written_to']} to {_num(f['duty'])} % for its hottest drive at "
            f"{_num(f['celsius'])} °C{again}")
    if f["why"] == "before-minimum":
        return (f"{said}, as this release logs a speed before its minimum (--min-fan-speed-prct, 20 % unless set) is "
                "applied: the fan runs at that minimum or the speed logged, whichever is higher, written by "
                "hddfancontrol itself (pwm_enable 1) from the drives' temperature, not by the board, until its next "
                "pass.")
    return (f"{said}: it sets the pwm itself (pwm_enable 1) from its drives' hottest temperature (and any other "
            "sensor it was given, --hwmons), not from the board's curve, and the fan holds that speed until its next "
            "pass.")


def _no_range(n: Names, s: Sequence[str], f: Facts) -> str:
    if f.get("how") == "no-correlation":
        seen = (f" ({f['turning']} read {_num(f['was'])} RPM before and {_num(f['now'])} after)" if "turning" in f
                else "")
        which = "the one fan it reads did not slow" if float(f["fans"]) == 1 else \
            f"none of the {_num(f['fans'])} fans it reads slowed"
        return (f"pwmconfig set {f['fan']} to 0 and {which}{seen}: that "
                "output drives no fan read here (the board's own controller overriding its pwm register, as BIOS fan "
                "control does, an output not wired to a fan header, or a fan whose speed is read elsewhere), so "
                "fancontrol cannot regulate a fan through it: the fans run at whatever their controller does.")
    return (f"{f['daemon']} measured no range for fan '{f['fan']}' (Min {_num(f['min'])}, Start {_num(f['start'])}, "
            f"Max {_num(f['max'])}): it saw no speed change across the pwm it wrote (a tachometer that does not "
            "report, a controller that ignores the pwm, or a fan too slow to stop while it watched), so its curve has "
            "nothing to map onto and it does not regulate the fan: the fan runs at whatever its controller does.")


def _bias(n: Names, s: Sequence[str], f: Facts) -> str:
    rise = f" from {_num(f['before'])} (a sensor's no-reading value)" if "before" in f else ""
    alone = f"; at {_num(f['celsius'])} °C alone its levels give level {_num(f['alone'])}" if "alone" in f else ""
    back = f"; the next cycle it chose {_level(f['next'])}" if "next" in f else ""
    return (f"{f['daemon']} chose {_level(f['level'])} because it added a bias of {_num(f['bias'])} for a fast "
            f"rise{rise} to {_num(f['celsius'])} °C{alone}: the rate of change, not the heat, raised the fan{back}.")


def _daemon_stopped(n: Names, s: Sequence[str], f: Facts) -> str:
    if f.get("event") == "outdated":
        return (f"{f['daemon']} refused to start: its configuration no longer matches the hwmon devices (their "
                "numbering or paths changed), so nothing drives the fans it was set up for: they run as their "
                "chip's own control leaves them; run pwmconfig again.")
    if f.get("event") == "missing":
        more = float(f.get("count", 0)) - len(str(f["detail"]).split(", "))
        named = f"{f['detail']}" + (f" and {_num(more)} more" if more > 0 else "")
        return (f"{f['daemon']} refused to start: files its configuration names are not there ({named}): a kernel "
                "module that provides them is not loaded (or its driver has no such control), or the hwmon "
                "numbering changed; so nothing drives the fans it was set up for: they run as their chip's own "
                "control leaves them.")
    if f.get("event") == "left-full":
        return ("pwmconfig set the pwm outputs it tests to full speed (pwm_enable 0, or manual at 255), and that is "
                "how it leaves them when it ends: until fancontrol runs or their automatic mode is set back "
                "(pwmN_enable 2 or more, or a reboot), those fans most likely stay at full; the speeds it printed "
                "are the fans at full, not as they usually run.")
    if f.get("event") == "nothing-to-drive":
        return _nothing_to_drive(str(f["detail"]))
    if f.get("event") == "no-manual":
        return _no_manual(f)
    if f.get("event") == "no-fan-control":
        why = ("it has no permission to write the fan's control (it must run as root)" if f["detail"] == "permission"
               else "thinkpad_acpi is loaded without fan_control=1, and the driver keeps fan control off unless "
               "asked (options thinkpad_acpi fan_control=1 turns it on)")
        return (f"thinkfan could not drive the fan and exited: {why}; so the embedded controller's own automatic "
                "control runs the fan, not thinkfan's levels.")
    if f.get("event") == "not-running":
        return (f"{f['daemon']}, the Jetson's fan service, is not running (jetson_clocks --show: {f['detail']}) and "
                f"the {n(s[0]) if s else 'fan'}'s pwm is {_num(f['pwm'])} of 255: that is how jetson_clocks --fan "
                "leaves it (it stops nvfancontrol and writes 255 to each fan), so it most likely stays at full, "
                "whatever the temperatures, until nvfancontrol runs again (sudo systemctl start nvfancontrol, or a "
                "reboot)" + (f"; with a part at {_num(f['hot_c'])} °C the kernel's thermal governor may hold it at "
                             "full as well." if "hot_c" in f else "."))
    if f.get("event") == "stalled-at-max":
        return (f"{f['daemon']} read {_num(f['rpm'])} RPM from its fan '{f['fan']}' even at PWM {_num(f['pwm'])}, the "
                "top of its range, and stopped regulating it (it hands the fan back to the mode it found it in, or "
                "full speed): the fan is stalled or not connected, or its speed is not counted; check that it "
                "spins.")
    after = f" after \"{f['detail']}\"" if f.get("detail") else ""
    return (f"{f['daemon']} aborted{after} and, as it does when it stops, set the fans it drives back to full "
            "speed: they stay there until it runs again (the error names what its configuration points at).")



def _no_manual(f: Facts) -> str:
    """pwmconfig's outputs stuck in their mode: the driver takes neither full speed nor manual control from software
    (sysfs-interface.rst: pwmN_enable 0 full speed, 1 manual, 2 and up automatic)."""
    named = str(f["detail"]).split(", ")
    more = float(f.get("count", 1)) - len(named)
    outputs = ", ".join(named) + f" and {_num(more)} more" if more > 0 else \
        " and ".join([", ".join(named[:-1]), named[-1]] if len(named) > 1 else named)
    mode = str(f.get("mode", ""))
    kept = (f"pwm_enable {mode}, an automatic mode: the chip's own control"
            if mode.isdigit() and int(mode) >= 2 else f"pwm_enable {mode}" if mode != "unreadable" else
            "a mode it could not read")
    none = f.get("usable") == "none"
    return (f"pwmconfig could not put {outputs} under manual control: it wrote 0 (full speed) and then 1 (manual) to "
            f"pwm_enable and read neither back, so the driver takes no mode from software there and they stay as they "
            f"were ({kept}); no fancontrol curve can drive them with this driver as it stands (thinkpad_acpi, for one, "
            "takes a mode only when loaded with fan_control=1)" + (
                ", and it found no other output it could drive, so it exited without configuring anything: nothing in "
                "Linux sets these fans' speed." if none else "."))


def _nothing_to_drive(what: str) -> str:
    """pwmconfig's exit before any test: what it found missing, and that nothing in Linux then sets the fans'
    speed: they run as their own controller drives them."""
    found = {"no-sensors": "no hardware-monitoring driver loaded at all (no hwmon device): no fan chip's driver is "
                           "loaded (sensors-detect names the one a board needs)",
             "no-fan": "pwm outputs but no fan speed input (fanN_input) to watch, so it cannot tell which fan an "
                       "output drives",
             "not-writable": "pwm outputs, none of them writable"}.get(
        what, "no pwm output (a pwmN file) in any hardware-monitoring driver loaded: no driver offers Linux a duty "
              "to set for these fans (a board's fan chip whose driver is not loaded gives none, nor one whose ports "
              "the firmware claims: the kernel then logs an ACPI resource conflict; a laptop's embedded controller "
              "may offer only a mode, pwmN_enable)")
    return (f"pwmconfig found {found}, and exited without configuring anything: nothing in Linux sets these fans' "
            "speed, so they run as their own controller drives them (the BIOS's or embedded controller's curve, a "
            "BMC, or a fan wired to run at full).")


def _daemon_critical(n: Names, s: Sequence[str], f: Facts) -> str:
    fan = f"The {n(s[0])}" if s else f"nbfc's {f['fan']}"
    return (f"{fan} is in nbfc's critical mode: the temperature passed its configuration's critical temperature, so "
            f"nbfc asks 100 % whatever its curve or a speed set by hand, until the temperature is "
            f"{_num(f['offset_c'])} °C under that critical temperature.")


def _overridden(n: Names, s: Sequence[str], f: Facts) -> str:
    fans = str(f["fans"]).split(", ")
    others = f" (and of {', '.join(fans[1:])})" if len(fans) > 1 else ""
    times = f"{_num(f['times'])} times" if float(f["times"]) > 1 else "once"
    said = f"{f['daemon']} logged {times} that the pwm of its fan '{f['fan']}'{others} was changed by a third party"
    if f.get("how") == "expectation":
        return (f"{said}, yet the pwm it read, {_num(f['read'])}, is the one it set: only its own expectation "
                f"({_num(f['expected'])}, from the map of what the driver reads back that it measured at setup) "
                "differs, so nothing need be writing the fan; measuring that map again (or a pwmMap in its "
                "configuration) quiets it.")
    if f.get("how") == "rounding":
        return (f"{said} (it set {_num(f['set'])}, read {_num(f['read'])}): the two are less than one per cent of the "
                "0-255 range apart, as a driver that keeps the duty in per cent reads it back rounded (corsair-cpro "
                "does), so most likely nothing else writes the fan; the warning is the rounding.")
    expected = f", expected {_num(f['expected'])}" if "expected" in f else ""
    manual = (f"; it could not put {f['no_manual']} under manual control (pwm_enable 1), so the chip's own "
              "automatic control most likely writes it" if "no_manual" in f else "")
    return (f"{said} (it set {_num(f['set'])}{expected}, read {_num(f['read'])}): something other than "
            f"{f['daemon']} sets that output (the board's own automatic fan control, the BIOS or another fan "
            f"program), or its driver holds a value of its own (a fan that takes only a few levels){manual}; the "
            f"fan is not on {f['daemon']}'s curve alone.")


REFUSALS = {  # why a daemon's own check refuses its configuration (app.collect.amdfan's and nbfcconfig's codes)
    "lowest-under-4": "its lowest speed is 3 % or under, which its curve check refuses for a driver bug",
    "speeds-fall": "its speeds fall as the temperature rises",
    "temperatures-not-rising": "its temperatures do not rise from point to point",
    "out-of-range": "a speed is outside 0-100 %",
}


def refused_curve(f: Facts, would: str) -> str:
    """A configuration its daemon's own check refuses as it starts (``would``: what it would have driven): not in
    effect; where only the daemon's later versions check (a code ending ``-newer``), said of those versions."""
    code, daemon = str(f["refused"]), f["daemon"]
    owner = "the card's" if f.get("left_to") == "card" else "its firmware's"
    newer = code.endswith("-newer")
    which = f" where {daemon} checks it: its versions with the check refuse it as they start" if newer else \
        f": {daemon} refuses it as it starts"
    return (f"{would}; it is not in effect{which} ({REFUSALS.get(code.removesuffix('-newer'), code)}) and "
            f"exit{'' if newer else 's'}, leaving the fan to whatever drives it without {daemon} ({owner} own "
            f"control, after a boot){f'; an older {daemon} runs it' if newer else ''}.")
