"""The rules that describe what was read: a driver's fan alarm (what the driver flags, said as it is), the fan
heard (the fastest), no fault anywhere, a BMC's warning, empty slots, the temperatures left out, the hottest reading,
no fan read at all, and a fan a driver lists whether or not one is fitted. Registered in ``app.fans.rules`` after
the rules of state (``app.fans.rules_state``), mostly at the lowest priorities: they describe, they do not answer."""

from __future__ import annotations

import re
from collections.abc import Iterator

from .chips import chip
from .facts import FanFact, Machine
from .roles import generic_input, role
from .rules import (
    ABI,
    HOT_C,
    STALL_DUTY,
    Hit,
    below_threshold,
    flagged_in_a_reading,
    hot_and_unturned,
    hottest_of,
    rest_facts,
    rule,
    source_of,
    temp_facts,
    there,
    turning,
)


@rule("the fastest fan", 30, f"{ABI} (fanN_input, pwmN, fanN_max)")
def fastest(machine: Machine) -> Iterator[Hit]:
    moving = [f for f in machine.fans if (turning(f) or (f.rpm is None and not f.invalid and f.duty_percent))
              and not _doubtful(f)]
    if moving:
        lead = max(moving, key=_share)
        facts: dict[str, float | str] = {"controller": lead.controller}
        if lead.rpm is not None:
            facts["rpm"] = lead.rpm
        if lead.duty_percent is not None:
            facts["duty"] = lead.duty_percent
        if lead.max_rpm:
            facts["max_rpm"] = lead.max_rpm
        source = source_of(machine, lead)
        if source is not None:
            facts.update(source=source.key, source_c=source.celsius or 0.0)
            if source.key == lead.follows and lead.follows_how:
                facts["follows"] = lead.follows_how
        yield Hit("turning", (lead.key, *(f.key for f in moving if f is not lead)), "known", facts)


def _share(fan: FanFact) -> float:
    """How hard a fan runs, for picking the one heard: its duty, its share of its maximum, else its speed."""
    if fan.duty_percent is not None:
        return fan.duty_percent * 1000
    if fan.max_rpm:
        return 100_000.0 * (fan.rpm or 0.0) / fan.max_rpm
    return fan.rpm or 0.0


@rule("no fault anywhere", 25, f"{ABI} (fanN_fault, fanN_alarm); the BMC's status column (ipmitool(1))")
def no_fault(machine: Machine) -> Iterator[Hit]:
    present = [f for f in machine.fans if there(f) and f.rpm != 0]
    if len(present) >= 2 and all(turning(f) for f in present) and not any(_doubtful(f) for f in machine.fans):
        yield Hit("no-fault", tuple(f.key for f in present), "known", {"count": len(present)})


def _doubtful(fan: FanFact) -> bool:
    """A fan nothing read vouches for: flagged, unreadable, FAULT in any reading, at or under its BMC's lower-critical
    threshold (the BMC counts it failing), or at 0 RPM where its chip's 0 is neither an empty header nor a rest, or
    where its device detects a fan on its connector."""
    if not there(fan):
        return False
    return bool(fan.fault or fan.alarm or fan.invalid or flagged_in_a_reading(fan) or below_threshold(fan)) or \
        (fan.rpm == 0 and (bool(fan.present) or chip(fan.chip).zero not in ("empty", "rest", "rest-or-unreported")))


# a fan the management controller itself judges as needing attention, short of failed: Redfish's Status.Health
# "Warning" (DMTF's Resource schema: "a condition requires attention"), HPE iLO's "Degraded" (its Fans page)
HEALTH_WARNING = frozenset({"warning", "degraded"})


@rule("a BMC fan past its warning threshold", 45, "IPMI v2.0 (a reading at or below the lower non-critical "
      "threshold asserts a non-critical event, the lower-critical one below it a critical one; at or above the upper "
      "non-critical threshold, a going-high non-critical event); ipmitool(1) "
      "(status nc); DMTF Redfish Resource schema (Status.Health Warning: a condition requires attention; Critical); "
      "HPE iLO user guide (the Fans page: a fan's status OK, Degraded or Failed)")
def bmc_warning(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        if fan.chip == "bmc" and there(fan) and not fan.fault and (fan.status or "") in HEALTH_WARNING:
            yield _flagged(fan)
            continue  # the controller's own word, whatever the thresholds
        if fan.chip != "bmc" or not turning(fan) or below_threshold(fan):
            continue  # at or under the lower-critical threshold: the failing fan's rule says it
        facts = _past_warning(fan)
        if facts is not None:
            yield Hit("bmc-warning", (fan.key,), "known", facts)


def _past_warning(fan: FanFact) -> dict[str, float | str] | None:
    """What puts a turning BMC fan past a warning threshold: at or above its upper non-critical one (too fast, a
    going-high event), or at or under its lower non-critical one; None where neither."""
    lnc, unc = fan.lower_noncritical_rpm, fan.upper_noncritical_rpm
    facts: dict[str, float | str] = {"rpm": fan.rpm or 0.0, "status": fan.status or ""}
    if fan.status == "ok":  # its status read as ok: the BMC flags nothing, whatever the thresholds say
        return None
    if unc is not None and (fan.rpm or 0.0) >= unc:
        return {**facts, "unc": unc, "side": "upper"}
    # its threshold read: judged by it; else only its status (ipmitool's nc, ipmiutil's and a sensor get's names
    # for the lower non-critical)
    warned = (fan.rpm or 0.0) <= lnc if lnc is not None else (fan.status or "") in ("nc", "lnc", "lower non-critical")
    if not warned:
        return None
    return {**facts, **{k: v for k, v in (("lnc", lnc), ("lcr", fan.lower_critical_rpm)) if v is not None}}


def _flagged(fan: FanFact) -> Hit:
    """The BMC's own health word for a fan, with what it turns or runs at."""
    facts: dict[str, float | str] = {"status": fan.status or "", "health": "yes"}
    if fan.rpm is not None:
        facts["rpm"] = fan.rpm
    elif fan.duty_percent is not None:
        facts["percent"] = fan.duty_percent
    return Hit("bmc-warning", (fan.key,), "known", facts)


@rule("empty slots", 12, "ipmitool(1) (na, ns: no reading); ipmiutil(8) (Absent); liquidctl's lianli-uni-guide and "
      "corsair-platinum-pro-xt-guide (a duty kept, or 100 % by default, on a channel with no fan); boards' manuals "
      "(the CPU cooler's fan on CPU_FAN, CPU_OPT an optional second)")
def empty_slots(machine: Machine) -> Iterator[Hit]:
    empty = [f for f in machine.fans if _maybe_empty(machine, f)]
    # beside a fan that turns, or one its controller runs at a share of its maximum with no speed read (hpasmcli's,
    # iLO's "% of max"): a fan there answers, so the others' empty slots are the controller's slots, not a silence
    if not empty or not any(turning(f) or _bmc_share(f) for f in machine.fans):
        return
    asked, named, rest = _kinds_of_empty(empty)
    for kind, headers in (("pump", [f for f in named if f.pump]), ("cpu", [f for f in named if not f.pump])):
        if headers:
            yield Hit("empty-slots", _keys(headers), "possible",
                      {"count": len(headers), "zero": len(headers), "named": kind})
    if rest:
        yield _rest_empty(machine, rest)
    if asked:
        yield Hit("empty-slots", _keys(asked), "possible",
                  {"count": len(asked), "zero": len(asked), "duty": max(f.duty_percent or 0.0 for f in asked)})


def _bmc_share(fan: FanFact) -> bool:
    """A server fan its management controller reports at a share of its maximum, no speed read: one that turns."""
    return chip(fan.chip).kind == "bmc" and fan.rpm is None and (fan.duty_percent or 0.0) > 0


def _rest_empty(machine: Machine, rest: list[FanFact]) -> Hit:
    """Slots at 0 that are most likely empty; where a divisor is read, a slow fan reads 0 too (under_divisor), and
    where every fan a driver reads through its board's register map reads 0 beside its others counting, the map may
    not fit the board (``Chip.mapped_fans``): no more than possible."""
    divided = any(_divided(f) for f in rest)
    unmapped = _unmapped(machine, rest)
    return Hit("empty-slots", _keys(rest), "possible" if divided or unmapped else "likely",
               {"count": len(rest), "zero": sum(1 for f in rest if f.present is not False),
                **({"divisor": "yes"} if divided else {}),
                **({"map": unmapped, "setting": chip(unmapped).map_setting} if unmapped else {})})


def _unmapped(machine: Machine, rest: list[FanFact]) -> str:
    """The driver whose board-mapped fans all read 0 while its other fans turn, where those are among ``rest``."""
    for name in dict.fromkeys(f.chip for f in rest):
        prefix = chip(name).mapped_fans
        mapped = [f for f in machine.fans if f.chip == name and prefix and f.label.startswith(prefix)]
        others = [f for f in machine.fans if f.chip == name and f not in mapped]
        if mapped and all(f.rpm == 0 for f in mapped) and any(turning(f) for f in others):
            return name or ""
    return ""


def _kinds_of_empty(empty: list[FanFact]) -> tuple[list[FanFact], list[FanFact], list[FanFact]]:
    """(those asked for a duty, the CPU's header, the rest) of the slots that may be empty. Read at 0, not said
    absent by their controller: a fan that has stopped reads the same (a guess, said so); one its controller drives
    at a duty is as likely a fan whose speed it does not count, and the CPU's header as likely a stopped fan."""
    asked = [f for f in empty if f.present is not False and (f.duty_percent or 0.0) >= STALL_DUTY]
    named = [f for f in empty if f not in asked and _cpu_header(f)]
    return asked, named, [f for f in empty if f not in asked and f not in named]


def _keys(fans: list[FanFact]) -> tuple[str, ...]:
    return tuple(f.key for f in fans)


def _cpu_header(fan: FanFact) -> bool:
    """A header the board names for the CPU's cooler ("CPU Fan", "CPU_FAN"; not CPU_OPT, the optional second one) or
    for a pump ("SYS_FAN5_PUMP", "W_PUMP"): it is there for that cooler's fan or pump, so its 0 is as likely a
    stopped one as an empty header."""
    return fan.present is not False and (fan.pump or role(None, fan.label) == "cpu") and \
        re.search(r"opt", fan.label, re.IGNORECASE) is None


def _maybe_empty(machine: Machine, fan: FanFact) -> bool:
    """A slot its controller says is empty, or a channel at 0 on a chip whose 0 is an empty header (never one beside
    a hot part it should cool)."""
    return fan.present is False or (fan.present is None and chip(fan.chip).zero == "empty" and fan.rpm == 0 and
                                    hot_and_unturned(machine, fan) is None)


CONTROL_OFFSET_C = 5.0  # AMD's documented Tctl offsets are 10, 20 and 27 °C; a smaller gap is two sensors' noise


@rule("a CPU's control temperature above its die's", 28, "Documentation/hwmon/k10temp.rst (Tdie is the real "
      "measured temperature, Tctl is used for fan control; on some AMD CPUs they differ)")
def control_offset(machine: Machine) -> Iterator[Hit]:
    by_label = {(t.chip, t.label.strip().lower()): t for t in machine.temperatures if t.celsius is not None}
    for (owner, label), tctl in by_label.items():
        tdie = by_label.get((owner, "tdie"))
        if label == "tctl" and tdie is not None and (tctl.celsius or 0.0) - (tdie.celsius or 0.0) >= CONTROL_OFFSET_C:
            yield Hit("control-offset", (tctl.key, tdie.key), "known",
                      {"tctl": tctl.celsius or 0.0, "tdie": tdie.celsius or 0.0,
                       "offset": round((tctl.celsius or 0.0) - (tdie.celsius or 0.0))})


@rule("readings left out", 15, f"{ABI} (tempN_input, tempN_fault); Documentation/hwmon/nct6775.rst (open inputs); "
      "k10temp.rst (before family 17h, temp1 is Tctl: a non-physical temperature on an arbitrary scale)")
def left_out(machine: Machine) -> Iterator[Hit]:
    bad = [t for t in machine.temperatures if t.invalid and t.invalid != "relative"]
    if bad and any(t.celsius is not None for t in machine.temperatures):
        yield Hit("temperatures-left-out", tuple(t.key for t in bad), "known", {"count": len(bad)})
    relative = [t for t in machine.temperatures if t.invalid == "relative"]  # said whatever else is read
    if relative:
        yield Hit("temperatures-left-out", tuple(t.key for t in relative), "known",
                  {"count": len(relative), "relative": "yes"})


@rule("the hottest reading", 10, f"{ABI} (tempN_input)")
def hottest(machine: Machine) -> Iterator[Hit]:
    valid = [t for t in machine.temperatures if t.celsius is not None]
    if valid:
        top = max(valid, key=lambda t: t.celsius or 0.0)
        facts: dict[str, float | str] = {"celsius": top.celsius or 0.0, "role": top.role}
        if generic_input(top.chip, top.label):  # the board decides what, if anything, this input measures
            facts["wiring"] = "board"
        yield Hit("hottest", (top.key,), "known", facts)


@rule("no fan read", 5, f"{ABI}")
def no_fan(machine: Machine) -> Iterator[Hit]:
    read = [f for f in machine.fans if there(f) and (f.rpm is not None or f.duty_percent is not None or f.invalid or
                                                      f.fault or f.status or f.floor_percent is not None)]
    # a channel with nothing read of it (no speed, duty, flag or limit) is unseen, not a fan read
    if not read and not (machine.gpus or machine.curves or machine.decisions or machine.calibrations or
                         machine.settings or machine.events or machine.probes):
        yield Hit("no-fan-read", (), "known", {})


@rule("a board's fan chip its firmware claims", 50, "drivers/acpi/osl.c (acpi_check_resource_conflict: a native "
      "driver's ports that an ACPI OpRegion declares are refused, -EBUSY, under acpi_enforce_resources=strict, the "
      "default; let in with a warning under lax); Documentation/admin-guide/kernel-parameters.txt "
      "(acpi_enforce_resources)")
def chip_claimed(machine: Machine) -> Iterator[Hit]:
    if any(chip(f.chip).kind in ("superio", "wmi") for f in machine.fans):
        return  # the board's fans are read (by its chip's driver, or through its firmware: asus_ec_sensors ...)
    for claim in machine.claims:
        if claim.taken is not True:  # refused, as its failed probe shows (known) or as strict does by default
            yield Hit("chip-claimed", (), "known" if claim.taken is False else "likely",
                      {"driver": claim.driver, "chip": claim.chip, "address": claim.address, "region": claim.region,
                       "probe": "busy" if claim.taken is False else "not shown"})


@rule("sensor chips probed, none read", 49, "lm-sensors' sensors-detect (its summary: each driver with the chips it "
      "found; \"to-be-written\" for a chip no driver reads yet; \"Sorry, no sensors were detected. This is "
      "relatively common on laptops, where thermal management is handled by ACPI rather than the OS.\"); sensors(1) "
      "(\"No sensors found!\": no chip's driver loaded)")
def chips_probed(machine: Machine) -> Iterator[Hit]:
    """A probe's answer where no fan is read: the chips it found, by what the chip table says each is (a board's fan
    chip, an embedded controller, a CPU's sensor), or that it found none: what could read the fans, and that this
    paste holds no reading of them (known: the probe's own answer)."""
    if any(there(f) for f in machine.fans):
        return
    for probe in machine.probes:
        fan_chips = [d for d, _ in probe.found if chip(d).kind in ("superio", "ec", "wmi", "bmc")]
        yield Hit("chips-probed", (), "known",
                  {"tool": probe.tool, "found": "; ".join(f"{name} ({d})" for d, name in probe.found),
                   "fan_chips": ", ".join(dict.fromkeys(fan_chips)),
                   "unwritten": "; ".join(name for d, name in probe.found if d == "to-be-written")})


COUNTER_CLOCK = 1_350_000  # an 8-bit fan counter's clock (lm78 family): RPM = 1,350,000 / (count x divisor)
COUNTER_TOP = 254  # the largest count that is a speed (255 is the counter run over: no pulse in time)


@rule("a speed under what the divisor counts", 20, "lm-sensors' doc/fan-divisors (an 8-bit counter with a divisor "
      "counts down to 1,350,000 / (254 x divisor) RPM: 5,314 at 1, 2,657 at 2, 1,328 at 4, 664 at 8; a slower fan "
      "reads 0; a larger divisor counts it); sensors(1) (div = N beside the reading)")
def under_divisor(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        if _divided(fan) and fan.rpm == 0 and there(fan) and not fan.fault and not fan.alarm:  # an alarm says it
            yield Hit("under-divisor", (fan.key,), "possible", _countable(fan))


def _divided(fan: FanFact) -> bool:
    """A divisor read that a slow fan may be under: not on a chip whose driver raises the divisor itself when a
    reading is invalid (there a 0 is not a fan too slow for the divisor)."""
    return bool(fan.divisor) and not chip(fan.chip).divisor_auto


def _countable(fan: FanFact) -> dict[str, float | str]:
    """The slowest speed an 8-bit counter counts at the fan's divisor (none where no divisor a slow fan is under)."""
    if not fan.divisor or not _divided(fan):
        return {}
    return {"divisor": float(fan.divisor), "slowest": float(COUNTER_CLOCK // (COUNTER_TOP * fan.divisor))}


@rule("a driver's fan alarm", 72, f"{ABI} (fanN_alarm: the driver's alarm, raised for a speed under fanN_min); "
      "sensors(1) (ALARM beside the reading); Documentation/hwmon/nct6775.rst (a reading the counter cannot make is "
      "invalid: the driver raises the divisor, up to its largest)")
def fan_alarm(machine: Machine) -> Iterator[Hit]:
    above: dict[float, list[FanFact]] = {}  # flagged while turning above their minimum, by that minimum: one finding
    for fan in machine.fans:
        if fan.alarm and there(fan) and not fan.fault:
            if fan.rpm and fan.min_rpm is not None and fan.rpm > fan.min_rpm:  # not what this reading shows
                above.setdefault(fan.min_rpm, []).append(fan)
                continue
            facts: dict[str, float | str] = {"raw": fan.raw or ""}
            if fan.min_rpm:
                facts["min"] = fan.min_rpm
            if fan.rpm == 0 and fan.min_rpm is not None:  # at 0 the counter saw no pulses at all, whatever the minimum
                facts.update(uncounted="yes", **_countable(fan))  # (or, with a divisor, none in time: a slow fan)
            yield Hit("fan-alarm", (fan.key,), "known", facts)
    for minimum, fans in above.items():  # under a minimum of 0 no speed can be: the flag is not about the speed
        yield Hit("fan-alarm", tuple(f.key for f in fans), "known",
                  {"min": minimum, "above": "yes", **({"unbacked": "yes"} if minimum == 0 else {}),
                   **({"raw": fans[0].raw or ""} if len(fans) == 1 else {})})


def _unnamed(fans: list[FanFact]) -> dict[str, float | str]:
    """Fans named only as hwmon names them (``fan1``) with no chip header: which chip reads them is not seen, so a
    board whose BMC reads and drives its fans (its Super-I/O's inputs then unwired) is not ruled out."""
    bare = all(f.chip in (None, "-") and re.fullmatch(r"fan\d+", f.label) for f in fans)
    return {"unnamed": "yes"} if bare else {}


def _duty_on_any_header(fan: FanFact) -> bool:
    """A duty listed on a chip whose outputs drive their headers whether or not a fan is on them (a board's pwmN, a
    hub that keeps a channel's duty): it says nothing of a fan being there, so the 0 stays this rule's (on a chip
    that lists a duty only where a fan is, the duty is the stall rule's)."""
    entry = chip(fan.chip)
    return entry.zero == "empty" and not entry.duty_means_fan


@rule("a fan its firmware lists, fitted or not", 51, "drivers/platform/x86/asus-wmi.c (asus_wmi_has_agfn_fan, "
      "asus_wmi_has_fan: whether a fan is there is guessed from the firmware's answer); asus-nb-wmi.c (the "
      "wmi_ignore_fan quirk: a model whose ACPI tables describe a fan it does not have); nct6775.rst, it87.rst (a "
      "desktop board's fans are counted by its Super-I/O chip)")
def listed_unfitted(machine: Machine) -> Iterator[Hit]:
    """A 0 from a driver that lists the fan its firmware describes, fitted or not: a rest, a count not filled in, or
    no fan; on a desktop board the fans are counted by its Super-I/O chip, said where neither it nor a board
    firmware's reading of it (asus_wmi_sensors, asus_ec_sensors, gigabyte_wmi) is read, and no battery says the
    machine is a portable one (whose fans are its embedded controller's: this driver's reading is the one there is)."""
    chips = {f.chip for f in machine.fans} | {t.chip for t in machine.temperatures}
    board = any(chip(c).kind in ("superio", "wmi") for c in chips)  # its fan chip, or the firmware reading it
    for fan in machine.fans:
        if chip(fan.chip).lists_unfitted and fan.rpm == 0 and there(fan) and not fan.fault and \
                not flagged_in_a_reading(fan) and not fan.duty_percent:
            facts: dict[str, float | str] = {**temp_facts(source_of(machine, fan)), **rest_facts(fan),
                                             "board_chip": "portable" if machine.portable else "read" if board
                                             else "unread"}
            yield Hit("listed-unfitted", (fan.key,), "possible", facts)


@rule("every header at 0 RPM", 65, f"{ABI}; Documentation/hwmon/nct6775.rst (a header with no fan reads 0)")
def headers_read_zero(machine: Machine) -> Iterator[Hit]:
    boards = [f for f in machine.fans if chip(f.chip).zero in ("empty", "unknown") and not f.target_rpm and
              f.chip != "bmc" and f.present is None and (not f.duty_percent or _duty_on_any_header(f))]
    if boards and all(f.rpm == 0 for f in boards) and not any(turning(f) for f in machine.fans):
        yield Hit("headers-read-zero", tuple(f.key for f in boards), "possible", _zero_facts(machine, boards))


def _zero_facts(machine: Machine, boards: list[FanFact]) -> dict[str, float | str]:
    board = all(chip(f.chip).kind in ("superio", "wmi") for f in boards)
    cpu = hottest_of([t for t in machine.temperatures if t.role == "cpu"])
    facts: dict[str, float | str] = {"count": len(boards), "board": "yes" if board else "no", **temp_facts(cpu),
                                     **_unnamed(boards)}
    if cpu is not None and (cpu.celsius or 0.0) >= HOT_C:  # no fan seen turning beside a part that needs cooling
        facts["hot"] = "yes"
    driven = [f.duty_percent or 0.0 for f in boards if (f.duty_percent or 0.0) >= STALL_DUTY]
    if driven:  # a duty that spins any fan there: a stalled fan, or a speed not counted, is as likely as none
        facts.update(duty=max(driven), driven=len(driven))
    if not board and all(f.duty_percent == 0 and f.pwm_enable != 0 for f in boards):  # pwmN 0: off, where
        # pwmN_enable is not 0 (0: no control, the fan at full whatever pwmN says: sysfs-interface.rst)
        facts.update(asked="off", controller=chip(boards[0].chip).controller)
    return facts
