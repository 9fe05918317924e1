"""What holds a fan where it is, in words: a fan daemon's curve, a controller's floor, a BMC's or an EC's setting,
a kernel thermal zone's active trip, no control (``app.fans.words`` registers each as the template
of its finding kind; what a daemon logged it did is ``app.fans.words_daemon``)."""

from __future__ import annotations

from collections.abc import Sequence

from .facts import LIQUID
from .names import Names
from .wording import Facts
from .wording import num as _num
from .wording import verb as _verb
from .words_daemon import refused_curve


def _trip_on(n: Names, s: Sequence[str], f: Facts) -> str:
    zone = f"{n(s[1])} at {_num(f['zone_c'])} °C"
    if f.get("held") == "yes":
        return (f"The {n(s[0])} is on ({f['state']}) while {zone} is below {_num(f['off_below'])} °C, where the "
                "kernel's thermal zone turns it off: something other than the zone's trip holds it (a program "
                "writing its cur_state).")
    where = f"under its active trip at {_num(f['trip'])} °C but not yet below {_num(f['off_below'])} °C, where the " \
        "kernel turns it off again" if f.get("band") == "yes" else \
        f"past its active trip at {_num(f['trip'])} °C; the kernel keeps it on until the zone is below " \
        f"{_num(f['off_below'])} °C"
    return f"The {n(s[0])} is on ({f['state']}) because the kernel's thermal zone {zone} is {where}."


def _trip_not_followed(n: Names, s: Sequence[str], f: Facts) -> str:
    said = (f"The kernel's thermal zone {n(s[1])} is at {_num(f['zone_c'])} °C, past its active trip at "
            f"{_num(f['trip'])} °C, yet the {n(s[0])} is off ({f['state']})")
    if f.get("mode") == "disabled":
        return f"{said}: the zone is disabled (mode: disabled), so the kernel does not act on its trips."
    return (f"{said}: the kernel is not turning it on: the fan is most likely not bound to this trip (no cooling "
            "map for it), or a program holds its state; check that it spins.")


HIGH_FLOOR_SHARE = 0.5  # a floor at half its top speed or more may be one a program wrote: said so (or no top read)


def _floor(n: Names, s: Sequence[str], f: Facts) -> str:
    if "floor_rpm" in f:
        high = "max_rpm" not in f or float(f["floor_rpm"]) >= HIGH_FLOOR_SHARE * float(f["max_rpm"])
        written = ("; that floor is the minimum as last written (a Mac's fanN_min, which macfanctld and fan "
                   "scripts rewrite to set the speed: a floor far above the one after a boot is a speed one of them "
                   "asked for)") if high else ""
        if len(s) > 1:
            return (f"The {n.some(s)} run at the minimum speeds their controller keeps them at (the first at "
                    f"{_num(f['rpm'])} RPM, its floor {_num(f['floor_rpm'])} RPM): they idle at their floor, and "
                    f"nothing is making them spin faster{written}.")
        return (f"The {n(s[0])} runs at {_num(f['rpm'])} RPM, the minimum speed its controller keeps it at "
                f"({_num(f['floor_rpm'])} RPM): it idles at its floor, and nothing is making it spin faster{written}.")
    floor = _num(f["floor"])
    if f.get("held") == "floor" and f.get("controller") in ("firmware", "bios", "ec", "bmc"):
        return (f"The {n(s[0])} is at {_num(f['duty'])} %, the lowest duty its controller runs it at ({floor} %): it "
                "idles at its floor, and nothing is making it spin faster.")
    if f.get("held") == "floor":
        return (f"The {n(s[0])} is held at {_num(f['duty'])} %, the lowest duty its controller accepts ({floor} %): "
                "a program or a curve holding the fan cannot take it lower; only the card's own automatic control "
                "stops it.")
    if f.get("held") == "asked-below" and f.get("pump") == "yes":
        return (f"The {n(s[0])} was set to {_num(f['target'])} %, below the {floor} % liquidctl's driver sends this "
                f"cooler's pump at least (it raises a lower duty to it): the pump runs at {floor} %, not at the "
                f"{_num(f['target'])} % asked, as slowly as liquidctl can run it.")
    if f.get("held") == "asked-below" and f.get("floor_read") == "no":
        return (f"The {n(s[0])} is set by hand to {_num(f['target'])} % and runs at {floor} %: most likely the least "
                "speed its card keeps a fan at under manual control (set by its firmware, not read here): it keeps "
                "turning; only handing it back to the card's automatic policy lets it stop.")
    if f.get("held") == "asked-below":
        return (f"The {n(s[0])} is set by hand and asked for {_num(f['target'])} %, below the {floor} % its driver "
                "accepts under manual control: it keeps turning; only handing it back to the card's automatic "
                "policy lets it stop.")
    if f.get("held") == "below":
        return (f"The {n(s[0])} is at {_num(f['duty'])} %, below the {floor} % a program or a curve can set: it is "
                "under the card's own control (the only one that stops it).")
    return (f"The {n(s[0])} accepts {floor}-100 % from a fan curve or a program: a point below {floor} % is refused, "
            "and only the card's own zero-RPM mode stops the fan.")


def _curve(n: Names, s: Sequence[str], f: Facts) -> str:
    source = f" from {n(f['source_key'])}" if "source_key" in f else f" from {f['source']}" if f.get("source") else ""
    if f.get("firmware_may_run") == "yes":  # a card that may run the curve itself (LACT on RDNA3 and newer)
        source += " (on an RDNA3 or newer card, its firmware runs the curve on its own hotspot reading)"
    if "step0_c" not in f and "t0" not in f:  # a combination of other curves (fan2go's function curve)
        over = f" over {f['source']}" if f.get("source") else ""
        return f"{f['daemon']} drives {f['output']} by the {f.get('combined', 'combination')} of its curves{over}."
    shape = _shape(f)
    now = f"; at {_num(f['now_c'])} °C now it asks for about {_num(f['asks'])} %" if "asks" in f else ""
    if "duty" in f:
        now += f"; the fan is at {_num(f['duty'])} % now"
    strategy = f" (strategy '{f['strategy']}')" if f.get("strategy") else ""
    battery = ", on battery," if f.get("on_battery") else ""
    liquid = (": the cooler reads no other temperature (its profile runs on the device), so this follows the liquid, "
              "which moves far less than the CPU, not the CPU itself" if f.get("source") == LIQUID else "")
    if f.get("in_firmware") == "yes":  # handed to the firmware, which runs it (or did not take it)
        answer = str(f.get("refused", "")).removeprefix("firmware-answered-")
        return (f"{f['daemon']} gave the firmware a curve for the {f['output']}{source}: {shape}; "
                + (f"the firmware did not take it (its call answered {answer}, not OK), so the fan runs on the mode's "
                   "own curve in the firmware." if f.get("not_running") == "refused" else
                   f"the firmware runs it (how closely the fan follows is the firmware's){now}."))
    if f.get("not_running") == "refused":  # its own check refuses it: the daemon exits as it starts
        return refused_curve(f, f"{f['daemon']}'s configuration would drive {f['output']}{source}: {shape}")
    if f.get("not_running"):  # its log shows it never started, or left: the configuration, not what drives the fan
        return (f"{f['daemon']}'s configuration would drive {f['output']}{source}: {shape}; it is not in effect, "
                f"since {f['daemon']} {'aborted' if f['not_running'] == 'aborted' else 'did not start'}.")
    refused = (f"; the card accepts no less than {_num(f['refused_below'])} % under manual control, so where it asks "
               f"for {_num(f['lowest'])} % the duty is refused and the fan stays at the last one set"
               if "refused_below" in f else "")
    return f"{f['daemon']}{strategy}{battery} drives {f['output']}{source}: {shape}{now}{refused}{liquid}."


def _shape(f: Facts) -> str:
    """A curve's shape in words: a daemon's levels, each from where it starts (the one that gives the fan back to its
    firmware among them), or its points from the first to the last."""
    firmware = "its firmware's own control (level auto)"
    if "step0_c" in f:
        steps = [(float(f[f"step{i}_c"]), f"{_num(f[f'step{i}_p'])} %") for i in range(len(f)) if f"step{i}_c" in f]
        if "firmware_from" in f:
            steps.append((float(f["firmware_from"]), firmware))
        first_c, first_p = float(f["step0_c"]), f["step0_p"]
        if len(steps) == 1 and first_c <= 0:  # one level from below freezing on (thinkfan's "(5, -32767, 32767)")
            return f"held at {steps[0][1]} whatever the temperature (one level)"
        below = f"{_num(f['floor'])} % below {_num(first_c)} °C, then " if "floor" in f and first_c > 0 and \
            f["floor"] != first_p else ""
        return below + "level by level, " + ", ".join(f"{said} from {_num(c)} °C" for c, said in sorted(steps))
    below = f"{_num(f['floor'])} % below {_num(f['t0'])} °C, then " if "floor" in f and float(f["t0"]) > 0 \
        and f["floor"] != f["p0"] else ""
    through = f" through {_num(f['points'])} points" if float(f["points"]) > 2 and "flat_to" not in f else ""
    start = f"{_num(f['p0'])} % up to {_num(f['flat_to'])} °C, then" if "flat_to" in f else \
        f"{_num(f['p0'])} % at {_num(f['t0'])} °C"
    shape = f"{below}{start} rising{through} to {_num(f['p1'])} % at {_num(f['t1'])} °C"
    inverted = (" (of the fan's full speed: the output is inverted, its MINPWM above its MAXPWM, so a higher value "
                "written runs the fan slower and 255 stops it, as on a chip whose firmware set its PWM polarity low)"
                if f.get("inverted") == "yes" else "")
    return shape + inverted + (f", and {firmware} from {_num(f['firmware_from'])} °C" if "firmware_from" in f else "")


def _not_followed(n: Names, s: Sequence[str], f: Facts) -> str:
    curve = _curve(n, s, {k: v for k, v in f.items() if k != "duty"})
    return (curve[:-1] + f", and the fan reads {_num(f['duty'])} %: it is not following {f['daemon']} "
            f"(is {f['daemon']} running, and does it own the output?).")


def _bmc_logged(n: Names, s: Sequence[str], f: Facts) -> str:
    reading = f" (last read at {_num(f['rpm'])} RPM against {_num(f['lcr'])})" if "lcr" in f else ""
    if f.get("recovered") == "yes" and float(f["falls"]) > 1:
        return (f"The BMC's event log shows {f['sensor']} falling under its {f['threshold']} threshold "
                f"{_num(f['falls'])} times and rising back above it between{reading}: a BMC that answers a fan under "
                "that threshold with every fan at full speed (Supermicro's does) raises them until the fan reads "
                "above again, then slows them: the fans cycle. A fan that comes back when the fans are raised turns: "
                "most likely it is healthy and slower at a low duty than the threshold set for it (a quiet fan): "
                f"lower the threshold to fit it (ipmitool sensor thresh {f['sensor']} lower ...).")
    where = "ends with it under" if f.get("ends_below") == "yes" else "shows it falling under"
    return (f"The BMC's event log {where} its {f['threshold']} threshold{reading}: the BMC counts {f['sensor']} as "
            "failing (and may run every fan at full speed for it): a failing fan, or a quiet one slower than its "
            "threshold; ipmitool sensor shows its speed and threshold now.")


def _level_heat(n: Names, s: Sequence[str], f: Facts) -> str:
    hot_level, hot_c = (f["level_before"], f["before_c"]) if float(f["before_c"]) > float(f["after_c"]) else \
        (f["level_after"], f["after_c"])
    return (f"{f['card']}'s performance level went from {f['level_before']} to {f['level_after']} and its "
            f"temperature from {_num(f['before_c'])} °C to {_num(f['after_c'])} °C: most likely the heat came with "
            f"the clocks that level lets the card hold (amdgpu's power_dpm_force_performance_level; a load that "
            f"changed between the readings would too): at {hot_level} it was at {_num(hot_c)} °C.")


def _read_back_off(n: Names, s: Sequence[str], f: Facts) -> str:
    if f.get("by") == "gpu":
        return (f"The {n(s[0])} is set to {_num(f['asked'])} % and runs at {_num(f['reads'])} %: the fan is not at the "
                "speed set: still changing, or the card's driver or firmware keeps it elsewhere (what was set is not "
                "what drives it now); read it again, and listen.")
    return (f"The {n(s[0])} is asked for {_num(f['asked'])} % and its controller reads back {_num(f['reads'])} %: the "
            "fan is not at the speed asked: still changing, or the register written does not drive this fan (a "
            "configuration written for another model); read it again, and listen.")


def _passive_cards(n: Names, s: Sequence[str], f: Facts) -> str:
    gpus, fans = int(float(f["gpus"])), int(float(f["fans"]))
    cards, chassis = s[:gpus], s[gpus:gpus + fans]
    what = f"a card with no fan of its own, at {_num(f['gpu_c'])} °C): the card's" if gpus == 1 else \
        f"cards with no fan of their own, the hottest at {_num(f['gpu_c'])} °C): the cards'"
    why = f" heat is most likely what the fans run for, since the BMC's own readings are cool (the hottest, {n(s[-1])}"
    if "held" in f:  # one duty held (from the CPUs alone, or typed by hand): the cards' heat does not move them
        chosen = "set by hand" if f["daemon"] == "ipmitool" else "chosen from the CPUs alone"
        why = (f" heat does not move them: {f['daemon']} holds them at {_num(f['held'])} %, {chosen}, so "
               f"{'the card gets' if gpus == 1 else 'the cards get'} no more air as "
               f"{'it heats' if gpus == 1 else 'they heat'} (the hottest of the BMC's own, {n(s[-1])}")
    return (f"The BMC's fans ({n.some(chassis)}, about {_num(f['rpm'])} RPM) are the only cooling of {n.some(cards)}"
            f" ({what}{why}, at {_num(f['bmc_c'])} °C).")


def _cpu_slowed(n: Names, s: Sequence[str], f: Facts) -> str:
    events = int(float(f["events"]))
    cpus = str(f["cpus"]).split(", ")
    who = cpus[0] if len(cpus) == 1 else f"{', '.join(cpus[:-1])} and {cpus[-1]}"
    after = "it logged them back to normal after" if f.get("ended") == "yes" else "the log does not show all of " \
        "them back to normal"
    return (f"The kernel logged {who} slowing {'its clock' if len(cpus) == 1 else 'their clocks'} for heat "
            f"({f['levels']} temperature above threshold, up to {events} event{'s' if events != 1 else ''}; {after}): "
            "the CPU reached its thermal limit, so its cooling did not keep up at that moment (a fan too slow or "
            "clogged, dried-out paste on its heatsink, or more load than the cooler was made for).")


_THRESHOLD_DOES = {
    "fanboost": "so the driver set the card's fan to full speed (100 %)",
    "downclock": "so the driver lowered the card's clocks",
    "critical": "so the driver paused the card",
    "shutdown": "so the driver powered the machine off",
}


def _gpu_threshold(n: Names, s: Sequence[str], f: Facts) -> str:
    boost = f"; it had set the fan to full at its 'fanboost' threshold ({_num(f['fanboost_c'])} °C)" \
        if "fanboost_c" in f and f["threshold"] != "fanboost" else ""
    after = "; the log shows it back below that threshold after" if f.get("ended") == "yes" else \
        "; the log does not show it back below"
    return (f"The nouveau driver logged the card at {f['device']} reaching its '{f['threshold']}' heat threshold at "
            f"{_num(f['celsius'])} °C, {_THRESHOLD_DOES.get(str(f['threshold']), 'as its driver does there')}{boost}"
            f"{after}.")


def _ec_setting(n: Names, s: Sequence[str], f: Facts) -> str:
    said = f"The {f['controller']}'s {f['setting']} is {f['value']}"
    return said + {
        "boost": ": it runs the fans at full for more airflow, whatever the temperatures (Cooler Boost); off hands "
                 "them back to its fan mode.",
        "off": ": in that mode the embedded controller keeps its fans off, whatever the temperatures; auto lets it "
               "run them for the heat.",
        "fixed": ": in that mode the embedded controller holds its fans at the one speed set for it, not at what "
                 "the temperatures ask; auto lets it follow them.",
        "levels": ": in that mode the embedded controller runs its fans at the six levels set for it by hand, not "
                  "at its own automatic curve; auto hands them back to it.",
        "full": ": the embedded controller runs its fans at their maximum speed, whatever the temperatures; 0 hands "
                "them back to its fan curve.",
        "locked": ": the embedded controller's fan control is locked, so the fans stay at the speed they had when it "
                  "was set, whatever the temperatures; 0 unlocks it.",
    }[str(f["effect"])]


def _platform_profile(n: Names, s: Sequence[str], f: Facts) -> str:
    fix, said = {
        "thermal_mode": ("smbios-thermal-ctl --set-thermal-mode=balanced", "The Dell's thermal mode is performance"),
        "fan_boost_mode": ("its fan_boost_mode back to 0, or the desktop's power mode",
                           "The ASUS fan boost mode is overboost (1)"),
        "G-Helper mode": ("G-Helper's Balanced or Silent mode", "G-Helper set the ASUS performance mode to Turbo"),
        "asusctl profile": ("asusctl profile set Balanced", "asusctl's active profile is Performance"),
    }.get(str(f.get("set_by")), ("powerprofilesctl set balanced, or the desktop's power mode",
                                 f"The platform profile is {f['profile']}"))
    return (f"{said}: the firmware is biased towards speed, with more power and heat, so its fans most likely run "
            f"faster for the same work than under balanced or quiet ({fix}).")


def _ec_table(n: Names, s: Sequence[str], f: Facts) -> str:
    sensor = f"{n(s[0])} at {_num(f['sensor_c'])} °C"
    span = f"the table runs the fans from off at {_num(f['fan_off_c'])} °C to full speed at " \
        f"{_num(f['fan_max_c'])} °C"
    if float(f["percent"]) == 0:
        return (f"The embedded controller's fan table asks for no cooling: every sensor it uses is at or below the "
                f"temperature it turns the fans off at (the nearest, {sensor}: {span}), so by its table its fans are "
                "off.")
    ask = "full speed" if float(f["percent"]) >= 100 else f"{_num(f['percent'])} %"
    most = f", the most of the {_num(f['sensors'])} sensors it uses" if float(f["sensors"]) > 1 else ""
    return (f"The embedded controller's fan table asks for {ask}, for {sensor}{most} ({span}): that sensor is what "
            "the fans answer to.")


def _duty_not_driving(n: Names, s: Sequence[str], f: Facts) -> str:
    return (f"The {n(s[0])} is asked for {_num(f['duty_a'])} % and the {n(s[1])} for {_num(f['duty_b'])} %, yet they "
            f"turn at the same speed ({_num(f['rpm_a'])} and {_num(f['rpm_b'])} RPM): the duties read are not what "
            "turns them (their controller does not apply them, or the fans run from one signal or at full)"
            + ("." if f.get("one_set") == "yes" else ", unless they are two models whose speeds happen to meet."))


def _crossed(n: Names, s: Sequence[str], f: Facts) -> str:
    return (f"The {n(s[0])} turns at {_num(f['rpm'])} RPM though its output asks 0 %, and the {n(s[1])} reads 0 RPM "
            f"though its output asks {_num(f['duty'])} %: a board's fan chip pairs an output and a fan by their "
            f"numbers only (pwmconfig tests which fan each output drives), so the {n(s[1])}'s output may be what "
            f"turns the {n(s[0])}; pwmconfig would tell.")


def _no_control(n: Names, s: Sequence[str], f: Facts) -> str:
    if "level" not in f and f.get("or_by_hand") == "yes":  # pwm_enable 0 on a driver that reads 0 for both
        return (f"The {n.some(s)} {_verb(s, 'reads', 'read')} pwm_enable 0: {_verb(s, 'it runs', 'they run')} at full "
                "speed, with no speed control or set by hand to full (255; this driver reads 0 for both): either way "
                "the chip's curve is off, and pwm_enable 2 or more hands the fan back to it.")
    if "level" not in f:  # pwm_enable 0
        return (f"The {n.some(s)} {_verb(s, 'has', 'have')} no speed control (pwm_enable 0): "
                f"{_verb(s, 'it runs', 'they run')} at full speed.")
    stale = (f"; its speed reading ({f['raw']}) is no speed yet: the tachometer may go stale as the fan ramps up, "
             "for up to two minutes (a reading that stays so after that is a fan that does not turn, or a speed not "
             "counted: listen)" if f.get("raw") else "")
    return (f"The {n(s[0])} is at level {f['level']}: its embedded controller drives it as fast as it can go, with no "
            f"regulation (thinkpad_acpi's full-speed level, which may pass the fan's rated speed){stale}: level auto "
            "hands it back to the embedded controller.")


def _not_a_reading(n: Names, s: Sequence[str], f: Facts, raw: str) -> str:
    card = f.get("card") == "yes"  # a card's tool's N/A: a card with no fan of its own gives one too
    hot = (f", while {n(f['source'])} is at {_num(f['source_c'])} °C, hot enough to need cooling: check "
           + ("what cools it (its fan, or the airflow past it)" if card else "that it spins")) \
        if f.get("hot") == "yes" else ""
    return (f"The {n.some(s)} {_verb(s, 'reads', 'read')} {raw}: how fast {_verb(s, 'it turns', 'they turn')} is not "
            "known" + (" (a card with no fan of its own, as data-center cards are, gives no value either)" if card
                       else "") + hot + ".")


def _empty(n: Names, s: Sequence[str], f: Facts) -> str:
    if "duty" in f:
        return (f"({n.some(s)} {_verb(s, 'is', 'are')} driven at {_num(f['duty'])} % and {_verb(s, 'reads', 'read')} "
                f"0 RPM beside fans that turn: no fan on {_verb(s, 'it', 'them')}, or {_verb(s, 'a fan', 'fans')} "
                f"whose speed {_verb(s, 'its', 'their')} controller does not count; look or listen.)")
    if f.get("named") == "pump":
        return (f"({n.some(s)} {_verb(s, 'reads', 'read')} 0 RPM beside fans that turn: no pump on "
                f"{_verb(s, 'it', 'them')}, or a stopped one (a stopped pump leaves the CPU's heat in its cold plate); "
                "look or listen.)")
    if f.get("named") == "cpu":
        return (f"({n.some(s)} {_verb(s, 'reads', 'read')} 0 RPM beside fans that turn: no fan on "
                f"{_verb(s, 'it', 'them')}, or a stopped one: a header named for the CPU usually carries its cooler's "
                "fan (a liquid cooler's pump may sit on another); look or listen.)")
    if "map" in f:  # every fan the driver reads through the board's register map at 0: the map may not fit
        return (f"({n.some(s)} may have no fan on {_verb(s, 'it', 'them')}, or fans that {f['map']} does not count: "
                f"every one of its fans read through the board's register map reads 0 while its others count, as "
                f"with a map that does not fit the board ({f['setting']}); a fan seen turning there is not counted, "
                "not stopped.)")
    if f.get("divisor") == "yes":  # a slow fan reads 0 under its divisor's counter (under-divisor says how slow)
        return (f"({n.some(s)} may have no fan on {_verb(s, 'it', 'them')}: 0 RPM beside fans that turn, as a stopped "
                "fan, or a slow one its divisor cannot count, would read.)")
    return (f"({n.some(s)} {_verb(s, 'has', 'have')} no fan on {_verb(s, 'it', 'them')}"
            + (", most likely: 0 RPM beside fans that turn, as a stopped fan would read" if f.get("zero") else "")
            + ".)")


def _follows_no_reading(n: Names, s: Sequence[str], f: Facts) -> str:
    value = f"{_num(f['raw_c'])} °C" if "raw_c" in f else "nothing"
    what = {"unconnected": "an input with no sensor on it, at its ceiling", "over-range": "past any real reading",
            "not-available": "its driver's value for no reading", "fault": "an input its driver flags as faulty"}.get(
        str(f.get("why")), "no reading")
    duty = f" at {_num(f['duty'])} %" if "duty" in f else ""
    if f.get("full") == "yes":
        return (f"The {n(s[0])} runs{duty} because its chip's own curve follows {n(s[1])} (its temperature source, "
                f"pwm_temp_sel), which reads {value}: {what}, which the curve takes for heat; point the curve at the "
                "CPU's input (the BIOS's fan source setting, or pwm_temp_sel).")
    return (f"The {n(s[0])} runs{duty} on its chip's own curve, which follows {n(s[1])} (its temperature source, "
            f"pwm_temp_sel), reading {value}: {what}; what the curve asks is not the board's heat.")


def headers_zero(f: Facts) -> str:
    """Every header at 0 RPM (no source clause): what a 0 is on that chip; where a duty that spins any fan is listed,
    a fan that does not turn (or is not counted) is as likely as none."""
    if "asked" in f:
        return _asked_off(f)
    one, duty = float(f["count"]) == 1, f"{_num(f['duty'])} %" if "duty" in f else ""
    driven = "" if not duty else f" while driven at {duty}" if one else \
        f" ({_num(f['driven'])} of them driven at up to {duty})" if f["driven"] != f["count"] else \
        f" while driven at up to {duty}"
    if f.get("board") == "yes":
        stalled = "a fan that does not turn (stalled) or whose speed the chip does not count, " if duty else "or "
        return (("The only fan header read here is" if one else "Every fan header read here is")
                + f" at 0 RPM{driven}: nothing is plugged in, {stalled}" + ("it is" if one else "the fans are")
                + " read and driven by something else (a server board's BMC: ipmitool sensor), or the driver does not "
                "read this board's fan registers")
    return (("The only fan read here is" if one else "Every fan read here is") + f" at 0 RPM{driven}: "
            + ("stalled, not connected, or not counted" if duty else "stopped by its controller, not connected, or "
               "not counted")
            + (" (or read and driven by something else, as a server board's BMC does: ipmitool sensor)"
               if "unnamed" in f else "") + "; nothing read tells which")


def _asked_off(f: Facts) -> str:
    """Every fan at 0 RPM with its duty read as 0: asked to stop by whatever sets that duty."""
    by = "the kernel's thermal zone (at its first cooling state: below its first trip, or no trip bound to the fan)" \
        if f.get("controller") == "kernel" else "whatever sets its duty"
    if float(f["count"]) == 1:
        return f"The only fan read here is at 0 RPM with its duty at 0 %: it is asked to stop, by {by}"
    return f"Every fan read here is at 0 RPM with its duty at 0 %: they are asked to stop, by {by}"


def _under_divisor(n: Names, s: Sequence[str], f: Facts) -> str:
    return (f"({n.some(s)} reads 0 RPM at fan divisor {_num(f['divisor'])}: its counter cannot count a fan slower than "
            f"about {_num(f['slowest'])} RPM, which reads 0, so it may be turning slowly; a larger divisor (fanN_div) "
            "counts it.)")
