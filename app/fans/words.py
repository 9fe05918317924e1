"""Findings in English: one template per finding kind, the one place the fan wing's sentences are written. Nothing
reads these sentences back; tests assert findings, and a few golden sentences guard the templates."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ..core.finding import Finding, FindingKind
from ..core.vocabulary import SMI_READ_ERRORS
from .facts import Machine
from .live_words import loud
from .names import Names
from .values import parse
from .wording import Facts, grouped
from .wording import num as _num
from .wording import verb as _verb
from .words_bmc import _bmc, _bmc_warning, _failing_at_times
from .words_bmc import bmc_setting as _bmc_setting
from .words_chips import chip_claimed as _chip_claimed
from .words_chips import chips_probed as _chips_probed
from .words_daemon import _bias, _daemon_critical, _daemon_stopped, _decided, _no_range, _overridden
from .words_ec import low as ec_low
from .words_ec import misread as ec_misread
from .words_ec import unread as ec_unread
from .words_gpu import no_gpu_fan as _no_gpu_fan
from .words_gpu import slowing_for_heat as _slowing_for_heat
from .words_heat import at_critical, crit_since, zone_critical
from .words_held import (
    _bmc_logged,
    _cpu_slowed,
    _crossed,
    _curve,
    _duty_not_driving,
    _ec_setting,
    _ec_table,
    _empty,
    _floor,
    _follows_no_reading,
    _gpu_threshold,
    _level_heat,
    _no_control,
    _not_a_reading,
    _not_followed,
    _passive_cards,
    _platform_profile,
    _read_back_off,
    _trip_not_followed,
    _trip_on,
    _under_divisor,
)
from .words_held import headers_zero as _headers_zero
from .words_power import detected_still, no_power
from .words_turn import cycles, swings
from .words_zero import at_rest, listed_unfitted, warm, zero_unjudged
from .words_zero import hot_not_cooled as _hot


def _raw(facts: Facts) -> str:
    raw = str(facts.get("raw", ""))
    return {"no-pulses": f"{raw} (no pulses counted: a stopped fan, or none)", "negative": f"{raw} (a negative speed)",
            "error": "an error: its driver could not read it" if raw == "an error" else
            f"{raw} (its driver gave no value)" if raw.upper() == "N/A" else
            f"{raw} (nvidia-smi could not read it)" if raw in SMI_READ_ERRORS else f"{raw} (the driver's error value)",
            "too-slow": f"{raw}, slower than any fan turns (a fan stopping or starting, or a counter's noise)",
            "over-range": f"{raw}, past any fan's speed (a counter's maximum or a driver's error value)",
            "off-scale": f"{raw}, outside 0-100 %: the register read back does not fit the range it is scaled "
                         "against (a configuration written for another model)",
            "not-counted": f"{raw}, the speed its driver gives the state it drives the fan in, not a count of the "
                           "fan's turns (gpio-fan counts nothing)"}.get(
        str(facts.get("why", "")), raw)


def _source(n: Names, facts: Facts, lead: str = ", with") -> str:
    return f"{lead} {n(facts['source'])} at {_num(facts['source_c'])} °C" if "source" in facts else ""


def _stalled(n: Names, s: Sequence[str], f: Facts) -> str:
    tail = ("or its controller does not report the speed: judge it by ear or by its temperatures" if
            f.get("tach_may_not_report") == "yes" else "or its tachometer does not report")
    how = f"asked for {_num(f.get('duty', 0))} % by its embedded controller's fan table" \
        if str(f.get("by", "")).startswith("table") else f"driven at {_num(f.get('duty', 0))} %"
    if "counts_from" in f:  # its driver reads a slow fan as 0 (emc2305)
        tail = f"or turning at {_num(f['counts_from'])} RPM or slower, which its driver reports as 0"
    if f.get("by") == "table-low":  # a board's own fan steps may start above this share (Chrome EC common/fan.c)
        tail = f"or held off by the board's own first fan step, which may start above {_num(f.get('duty', 0))} %"
    asked = f"{_verb(s, 'is', 'are')} {how} and" if "duty" in f else \
        f"{_verb(s, 'has', 'have')} zero-RPM off (its controller does not stop {_verb(s, 'it', 'them')}) and"
    return f"The {n.some(s)} {asked} {_verb(s, 'reads', 'read')} {f.get('raw') or '0 RPM'}: stalled, {tail}."


_CONTROLLERS = {"firmware": "the device's own firmware", "bios": "the board's fan chip as the BIOS set it up",
                "ec": "the embedded controller", "bmc": "the BMC", "daemon": "a fan daemon",
                "manual": "hand (a fixed duty)", "none": "nothing (no control: full speed)",
                "kernel": "the kernel's thermal zone"}


def _turning(n: Names, s: Sequence[str], f: Facts) -> str:
    if "rpm" not in f:
        by = f", set by {_CONTROLLERS[str(f['controller'])]}" if str(f.get("controller")) in _CONTROLLERS else ""
        return f"The {n(s[0])} is at {_num(f['duty'])} % duty (its speed is not read){by}{_source(n, f)}."
    duty = f" ({_num(f['duty'])} % duty)" if "duty" in f else ""
    share = f", {100 * float(f['rpm']) / float(f['max_rpm']):.0f} % of its {_num(f['max_rpm'])} RPM maximum" \
        if "max_rpm" in f and "duty" not in f else ""
    by = f", set by {_CONTROLLERS[str(f['controller'])]}" if str(f.get("controller")) in _CONTROLLERS else ""
    return f"The {n(s[0])} runs at {_num(f['rpm'])} RPM{duty}{share}{by}{_follows(n, f)}."


def _follows(n: Names, f: Facts) -> str:
    """", following nct6798/CPUTIN at 62 °C" where its controller declares the source (or its history shows it),
    ", with … at …" where the source is only the reading nearest what it cools."""
    how = {"declared": ", following", "learned": ", following (as its history shows)"}.get(str(f.get("follows")))
    return _source(n, f, how) if how else _source(n, f)


def _then_turning(n: Names, s: Sequence[str], f: Facts) -> str:
    if f.get("rested") == "yes":
        return (f"The {n.some(s)} read 0 RPM while {n(f['source'])} was at {_num(f['then_c'])} °C and "
                f"{_verb(s, 'turns', 'turn')} now that it is at {_num(f['source_c'])} °C: its controller stops the "
                "fan while cool and started it as it warmed (by design), not a missing or dead fan.")
    return (f"The {n.some(s)} read 0 RPM in an earlier reading and {_verb(s, 'turns', 'turn')} in a later one"
            + (f", with {n(f['source'])} at {_num(f['source_c'])} °C the hottest of what it cools" if "source" in f
               else "")
            + ": the 0 was not a missing or dead fan (a driver setting, a register map, or the fan starting).")


def _slow_hot(n: Names, s: Sequence[str], f: Facts) -> str:
    who = {"manual": "set by hand", "daemon": "set by a fan daemon"}.get(str(f.get("controller")), "")
    held = f" ({who})" if who else ""
    if "min" in f:  # at the least speed its controller keeps it at (no duty read)
        first = f" (the first at {_num(f['rpm'])} RPM)" if len(s) > 1 else f", {_num(f['rpm'])} RPM"
        return (f"The {n.some(s)} {_verb(s, 'is', 'are')} at {_verb(s, 'its', 'their')} controller's least speed"
                f"{first}, its {_num(f['min'])} RPM minimum, while {n(f['source'])} is at {_num(f['source_c'])} °C: "
                f"an automatic control runs fans far faster there. Something holds {_verb(s, 'it', 'them')} at the "
                "minimum (a fan program that writes it, a controller that does not see that heat), or the fans "
                "cannot go faster.")
    level = f"only {_num(f['duty'])} %"
    return (f"The {n(s[0])} is at {level}{held} while {n(f['source'])} is at {_num(f['source_c'])} "
            "°C: an automatic curve runs a fan far faster there. Something holds it low (a fan tool, a manual "
            "setting, a curve tuned for silence), or it cannot go faster; raising it, or handing it back to the "
            "automatic curve, cools that part.")


def _full_cool(n: Names, s: Sequence[str], f: Facts) -> str:
    speed = f"{_num(f['rpm'])} RPM, at {_verb(s, 'its', 'their')} {_num(f['max'])} RPM top" if "at_top" in f else \
        f"{_num(f['duty'])} %"
    said = (f"The {n.some(s)} {_verb(s, 'runs', 'run')} at full speed ({speed}) while {n(f['source'])} "
            f"is at {_num(f['source_c'])} °C, below where any fan curve asks for full: ")
    lost = [str(f[f"lost{i}"]) for i in range(len(f)) if f"lost{i}" in f]
    if lost and "held" not in f:  # its controller reads nothing from some of its sensors
        return said + (f"{_verb(s, 'its', 'their')} controller reads nothing from {n.some(lost)} (0 or no "
                       "value). A slot a model does not use reads so too, but a controller that loses a sensor it "
                       "uses runs its fans at full as a failsafe: if the fans stay at full, check "
                       f"{_verb(lost, 'that sensor and its cable', 'those sensors and their cables')} (or a setting, "
                       "a program or a fault).")
    if "held" in f:  # its control read as manual: what holds it is known
        how = "pwm_enable 1: manual" if f["held"] == "pwm_enable 1" else \
            f"{_verb(s, 'its', 'their')} control set to manual"
        return said + (f"{_verb(s, 'it is', 'they are')} held there by hand or by a program ({how}), not by a "
                       "temperature.")
    return said + (f"something other than that temperature holds {_verb(s, 'it', 'them')} there: a setting or a "
                   "program (manual control, a fan tool), a controller that lost its sensor or its driver (controllers "
                   "run their fans at full as a failsafe), or a fault.")


def _alarm(n: Names, s: Sequence[str], f: Facts) -> str:
    if f.get("uncounted") == "yes":
        limit = f"under its {_num(f['min'])} RPM minimum" if "min" in f else "with no minimum set (0)"
        slow = f", a fan slower than about {_num(f['slowest'])} RPM (the slowest its counter counts at divisor " \
            f"{_num(f['divisor'])}: a larger fanN_div counts it)" if "slowest" in f else ""
        return (f"The driver raises the alarm of the {n.some(s)} at 0 RPM {limit}: "
                f"{_verb(s, 'its', 'their')} speed counter sees no pulses at all: no fan on the header, a stopped "
                f"fan{slow}, or a fan whose speed wire this chip does not read (check that it spins).")
    if f.get("above") == "yes":  # the flag and the values shown disagree: neither is taken for the other
        at = f" at {f['raw']}" if "raw" in f else ""
        return (f"The driver raises the alarm of the {n.some(s)} though {_verb(s, 'it turns', 'they turn')}{at} "
                f"above {_verb(s, 'its', 'their')} {_num(f['min'])} RPM minimum: the alarm is not what this reading "
                "shows (one raised earlier and not yet cleared, or a limit in the chip other than the one shown); the "
                "speed itself is read.")
    under = f" under its {_num(f['min'])} RPM minimum" if "min" in f else ""
    return (f"The driver raises the alarm of the {n.some(s)} ({f['raw'] or 'no speed read'}{under}): "
            f"{_verb(s, 'the fan is', 'the fans are')} slowing or failing, or {_verb(s, 'its', 'their')} minimum is "
            f"set above the speed {_verb(s, 'it runs', 'they run')} at; check that {_verb(s, 'it spins', 'they spin')}"
            " at the speed expected.")


def _fault(n: Names, s: Sequence[str], f: Facts) -> str:
    status = f"status {f['status']}, " if f.get("status") else ""
    who = "The BMC reports" if all(k.startswith("bmc/") for k in s) else "Its driver reports"
    others = (f" The others turn at about {_num(f['others_rpm'])} RPM: a BMC that counts a fan failed may run the "
              "rest faster for it (Supermicro's runs every fan at full), so they stay loud until "
              f"{_verb(s, 'it is', 'they are')} replaced."
              if "others_rpm" in f else "")
    number, unit, _ = parse(str(f["raw"] or ""))  # "0.000 RPM" as ipmitool prints it: 0 RPM; "na RPM": nothing
    read = f"{_num(number)} RPM" if number is not None and unit == "rpm" else \
        "nothing" if not f["raw"] or str(f["raw"]).lower().startswith("na") else f["raw"]
    return (f"{who} the {n.some(s)} failed ({status}reading {read}): "
            f"{_verb(s, 'a failed or missing fan', 'failed or missing fans')}; replace or reseat "
            f"{_verb(s, 'it unless the slot is', 'them unless the slots are')} empty.{others}")


def _no_fault(n: Names, s: Sequence[str], f: Facts) -> str:
    count = int(float(f["count"]))
    return "Neither fan read here reports a fault." if count == 2 else \
        f"None of the {count} fans read here reports a fault."


def _pump(n: Names, s: Sequence[str], f: Facts) -> str:
    liquid = f" ({n(f['source'])} is at {_num(f['source_c'])} °C)" if "source" in f else ""
    if "cpu" in f:  # the CPU is hot: what a stopped pump leaves, where the cooler is the CPU's
        return (f"The {n(s[0])} reads {f['raw']} while {n(f['cpu'])} is at {_num(f['cpu_c'])} °C{liquid}: a cooler's "
                "pump runs whenever it is powered, and a stopped one leaves the part it cools hot while the liquid "
                "stays cool, so where the cooler is on the CPU it has most likely stopped: check that it turns.")
    return (f"The {n(s[0])} reads {f['raw']}: a cooler's pump runs whenever it is powered, so either its speed is not "
            f"reported or it has stopped{liquid}: check that the pump turns (by ear, or by the CPU's temperature "
            "under load).")


TEMPLATES: Mapping[FindingKind, Callable[[Names, Sequence[str], Facts], str]] = {
    "hot-not-cooled": _hot,
    "pump-stopped": _pump,
    "fan-fault": _fault,
    "fault-then-reading": lambda n, s, f: (f"The {n(s[0])} read FAULT in {_num(f['faults'])} of {_num(f['readings'])}"
                                           f" readings and {f['values']} in the others: its driver flags a fault, so"
                                           " the numbers it gives cannot be trusted as its speed."),
    "target-not-met": lambda n, s, f: (f"The {n.some(s)} {_verb(s, 'is', 'are')} "
                                       + (f"kept by {_verb(s, 'its', 'their')} controller at "
                                          f"{_num(f['floor_rpm'])} RPM or faster (the minimum)" if "floor_rpm" in f
                                          else "asked for "
                                          + (f"{_num(f['target_rpm'])} RPM" if "target_rpm" in f else
                                             f"{_num(f['target_percent'])} %"))
                                       + f" and {_verb(s, 'reads', 'read')} 0 with no fault flagged: "
                                       f"{_verb(s, 'its', 'their')} controller asks and "
                                       f"{_verb(s, 'the fan does', 'the fans do')} not turn (stalled, unpowered, or "
                                       "not driven by that controller's output)."),
    "stalled": _stalled,
    "no-power": no_power,
    "detected-still": detected_still,
    "off-target": lambda n, s, f: (f"The {n(s[0])} turns at {_num(f['rpm'])} RPM against the {_num(f['target_rpm'])}"
                                   f" RPM its controller aims at, for {_num(f['seconds'])} s, longer than any fan "
                                   "takes to spin up: blocked, worn, or failing."),
    "fan-disabled": lambda n, s, f: (f"The {n(s[0])} is disabled by its driver ({f['chip']} reports status: "
                                     "disabled): nothing controls it; enable the fan control again."),
    "zero-unknown": lambda n, s, f: (f"The {n.some(s)} {_verb(s, 'reads', 'read')} 0 RPM at 0 % duty: what controls "
                                     f"{_verb(s, 'it', 'them')} asks for no speed (a fan-stop while cool, a curve's "
                                     "lowest point, or a setting); that controller is not named in the capture."
                                     if "asked" in f else
                                     f"The {n.some(s)} {_verb(s, 'reads', 'read')} 0 RPM beside fans that turn: "
                                     "stopped, not connected, or not counted; nothing read says which (what controls "
                                     f"{_verb(s, 'it', 'them')} is not named in the capture)."),
    "bmc-zero-ok": lambda n, s, f: (f"The {n.some(s)} {_verb(s, 'reads', 'read')} 0 RPM with the BMC's status "
                                    f"{f['status']}: a slot with nothing in it, or a stopped fan the BMC has no "
                                    "threshold for; which one, only the chassis tells (look, or listen)."),
    "warm-not-turning": warm,
    "firmware-floor": _floor,
    "daemon-curve": _curve,
    "bias-chose-level": _bias,
    "daemon-not-followed": _not_followed,
    "channels-crossed": _crossed,
    "follows-no-reading": _follows_no_reading,
    "turns-at-zero": lambda n, s, f: (f"The {n(s[0])} is asked for 0 % by hand and still turns at {_num(f['rpm'])} "
                                      + ("RPM: a PWM fan keeps its lowest speed at 0 % (most do; some stop), and a "
                                         "3-pin fan on a header in PWM mode gets full voltage whatever the duty (it "
                                         "has no PWM input; DC mode would slow it): it is one or the other." if
                                         f.get("mode") == "pwm" else
                                         "RPM: that is its lowest speed (it has no fan-stop: the fan or its firmware "
                                         "keeps it turning), so nothing is making it spin faster.")),
    "unlike-siblings": lambda n, s, f: (f"The {n.some(s)} {_verb(s, 'reads', 'read')} {_num(f['rpm'])} RPM while "
                                        f"{_num(f['siblings'])} fans beside {_verb(s, 'it', 'them')} turn at about "
                                        f"{_num(f['median_rpm'])} RPM: fans of one chassis are driven together, so "
                                        + ("a failed fan, or a reading the controller gets wrong" if float(f["rpm"])
                                           == 0 else "most likely a reading the controller gets wrong") + "."),
    "zero-then-turning": _then_turning,
    "stops-and-starts": cycles, "swings-with-source": swings,
    "fan-alarm": _alarm,
    "full-while-cool": _full_cool,
    "full-while-hot": lambda n, s, f: (
        f"The {n.some(s)} {_verb(s, 'is', 'are')} at full ("
        + (f"{_num(f['duty'])} %" if "duty" in f else f"{_num(f['rpm'])} RPM, its top")
        + f") because {n(f['source'])} is at {_num(f['source_c'])} °C: {_verb(s, 'its', 'their')} controller's curve "
        "is at its top and the cooling can do no more (a part this hot may be slowing itself for heat)."),
    "slow-while-hot": _slow_hot,
    "daemon-no-range": _no_range,
    "fan-loud": lambda n, s, f: loud(f),
    "daemon-decided": _decided,
    "below-bmc-threshold": _bmc,
    "bmc-warning": _bmc_warning,
    "bmc-failing-at-times": _failing_at_times,
    "ec-cpu-unread": ec_unread, "ec-cpu-misread": ec_misread, "ec-cpu-low": ec_low,
    "speed-not-a-reading": lambda n, s, f: _not_a_reading(n, s, f, _raw(f)),
    "drivers-disagree": lambda n, s, f: (f"Two drivers read this board's one fan chip ({f['more']} and {f['fewer']})"
                                         f" and disagree: {f['more']} sees {_num(f['more_n'])} fans turning, "
                                         f"{f['fewer']} {_num(f['fewer_n'])}: the zeros of {f['fewer']} are most "
                                         "likely its register map not fitting this board, not stopped fans."),
    "headers-read-zero": lambda n, s, f: _headers_zero(f) + _source(n, f, "; meanwhile")
    + (", hot enough to need cooling: check that its fan spins" if f.get("hot") == "yes" else "") + ".",
    "no-temperature": lambda n, s, f: (f"None of the {_num(f['count'])} temperatures read here is a reading (they "
                                       "read as not available): a controller or fan daemon that follows them never "
                                       "sees heat, so it never asks for cooling."),
    "no-control": _no_control,
    "fixed-duty": lambda n, s, f: (f"The {n.some(s)} {_verb(s, 'is', 'are')} held at {_num(f['duty'])} % by hand or "
                                   "by a program (" + ("pwm_enable 1: manual" if "pwm_enable" in f else
                                                       f"{_verb(s, 'its', 'their')} control set to manual") +
                                   f"): {_verb(s, 'it does', 'they do')} not follow a temperature" +
                                   (f"; stopped by that setting (not resting by design), {_verb(s, 'it', 'they')} "
                                    f"will not start as what {_verb(s, 'it cools', 'they cool')} heats up unless "
                                    "the program that set it raises it, or it is handed back to automatic control."
                                    if not float(f["duty"]) else ".")),
    "trip-on": _trip_on,
    "bmc-setting": _bmc_setting,
    "bmc-fan-logged": _bmc_logged,
    "level-and-heat": _level_heat,
    "daemon-critical": _daemon_critical,
    "read-back-off-target": _read_back_off,
    "passive-cards": _passive_cards,
    "slowing-for-heat": _slowing_for_heat,
    "cpu-slowed": _cpu_slowed,
    "at-critical": at_critical, "crit-since-boot": crit_since,
    "gpu-threshold": _gpu_threshold,
    "zone-critical": zone_critical,
    "ec-setting": _ec_setting,
    "ec-table": _ec_table,
    "duty-not-driving": _duty_not_driving,
    "platform-profile": _platform_profile,
    "daemon-stopped": _daemon_stopped,
    "daemon-overridden": _overridden,
    "trip-not-followed": _trip_not_followed,
    "gpu-fan-unreported": _no_gpu_fan,
    "at-rest": at_rest,
    "listed-unfitted": listed_unfitted,
    "zero-unjudged": zero_unjudged,
    "turning": _turning,
    "no-fault": _no_fault,
    "empty-slots": _empty,
    "under-divisor": _under_divisor,
    "control-offset": lambda n, s, f: (f"{n(s[0])} at {_num(f['tctl'])} °C is the temperature this AMD CPU gives "
                                       f"fan control, {_num(f['offset'])} °C above its die's own ({n(s[1])}, "
                                       f"{_num(f['tdie'])} °C): a fan curve that follows it runs as for a CPU "
                                       f"{_num(f['offset'])} °C hotter."),
    "temperatures-left-out": lambda n, s, f: (f"Left out as no reading: {n.some(s)}." if "relative" not in f else
                                              f"Left out as no temperature: {n.some(s)}, an AMD CPU's Tctl as "
                                              "k10temp gives it unlabelled, a relative value on an arbitrary scale "
                                              "that its cooling is set by, not degrees of the chip."),
    "hottest": lambda n, s, f: f"The hottest temperature read is {n(s[0])} at {_num(f['celsius'])} °C" + (
        ", an input the board wires as it chooses (it may have nothing attached, or measure something else than its "
        "name says)." if f.get("wiring") == "board" else "."),
    "no-fan-read": lambda n, s, f: "No fan is read here, so what the fans do cannot be seen.",
    "chip-claimed": _chip_claimed,
    "chips-probed": _chips_probed,
}


def said(finding: Finding, names: Names) -> str:
    return TEMPLATES[finding.kind](names, finding.subjects, finding.facts)


def _one_cause_a_fan(ordered: Sequence[Finding], fan_keys: set[str]) -> list[Finding]:
    """The causes to say, the strongest first: one a fan (the others' facts stay in the findings); a finding's
    subjects that are not fans are the temperatures it rests on."""
    causes: list[Finding] = []
    for f in (f for f in ordered if f.cause):
        fans = [s for s in f.subjects if s in fan_keys]
        if not causes or len(fans) != 1 or all(fans[0] not in c.subjects or c.kind == _WHY_OF.get(f.kind)
                                               for c in causes):
            causes.append(f)
    return causes


# a cause that says why another one holds of the same fan is said beside it (its controller reads no CPU: so it does
# not cool the CPU)
_WHY_OF = {"ec-cpu-unread": "hot-not-cooled", "ec-cpu-low": "hot-not-cooled"}


def answer(found: Sequence[Finding], machine: Machine, causes_in_sentence: int = 3) -> tuple[str, list[str]]:
    """The sentence (the leading causes, then what describes the fans) and the further causes."""
    names = Names(machine)
    ordered = grouped(found)
    causes = _one_cause_a_fan(ordered, {fan.key for fan in machine.fans})
    told = {s for c in causes for s in c.subjects}  # a fan a cause is said of is not described again
    described = [f for f in ordered if not f.cause and not (causes and f.kind == "turning") and
                 not (f.subjects and set(f.subjects) <= told)]
    sentence = " ".join(said(f, names) for f in [*causes[:causes_in_sentence], *described])
    return sentence, [said(f, names) for f in causes[causes_in_sentence:]]
