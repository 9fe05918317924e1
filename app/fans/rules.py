"""The rules: each a small function over a machine's facts and the chip knowledge, yielding findings, registered
once with its priority and the document its behaviour rests on (docs/FAN-RULES.md lists them). Several findings
can stand; ``findings`` orders them, the strongest first."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from types import MappingProxyType

from ..core.finding import Confidence, Finding, FindingKind
from ..core.record import record
from . import ectable
from .chips import Chip, chip, fitted
from .ectable import CUSTOM_FIRST_STEP
from .facts import FanFact, Machine, TempFact
from .roles import role
from .speeds import at_full_level, kept_turning

ABI = "kernel Documentation/hwmon/sysfs-interface.rst"
IPMI = "IPMI v2.0 specification (threshold sensors, event assertion); ipmitool(1) sensor"
STALL_DUTY = 20.0  # a duty at or above this spins any fan that is there (the lowest start duty fan makers give)
HOT_C = 80.0  # a source this hot needs cooling whatever its controller's curve (above the default stop temperatures)
REST_UNKNOWN_C = 50.0  # with no rest temperature known for the chip, a rest is believed only below this
SIBLING_FAR = 1.8  # a fan reading past this many times its siblings' median is not driven like them
NEAR_THRESHOLD = 0.5  # a fan at half its lower-critical threshold or more idles just under it; below, it is failing
SPIN_UP_S = 10.0  # a fan reaches a new target within this (a few seconds); farther from it for longer is a fault
OFF_TARGET_RPM = 300  # far from its target: off by more than this many RPM and OFF_TARGET_SHARE of the target
OFF_TARGET_SHARE = 0.3
LIQUID_HOT_C = 45.0  # an AIO's liquid past this is not being cooled (coolers rate their loops to about 40-45 °C)


@record
class Hit:
    kind: FindingKind
    subjects: tuple[str, ...]
    confidence: Confidence
    facts: dict[str, float | str]


@record
class Rule:
    name: str
    priority: int
    source: str
    find: Callable[[Machine], Iterable[Hit]]


RULES: list[Rule] = []


def rule(name: str, priority: int, source: str) -> Callable[[Callable[[Machine], Iterable[Hit]]],
                                                            Callable[[Machine], Iterable[Hit]]]:
    def register(find: Callable[[Machine], Iterable[Hit]]) -> Callable[[Machine], Iterable[Hit]]:
        RULES.append(Rule(name, priority, source, find))
        return find
    return register


def findings(machine: Machine) -> list[Finding]:
    """Every finding of every rule on ``machine``, the strongest first (by priority, then confidence)."""
    found = [Finding(h.kind, r.name, h.subjects, h.confidence, r.priority, MappingProxyType(h.facts))
             for r in RULES for h in r.find(machine)]
    order = {"known": 0, "likely": 1, "possible": 2}
    return sorted(found, key=lambda f: (-f.priority, order[f.confidence]))


# --- what the rules share -------------------------------------------------------------------------------------

def there(fan: FanFact) -> bool:
    """A fan that may be on its channel: not a slot the reader says is empty."""
    return fan.present is not False


def not_turning(fan: FanFact) -> bool:
    """A fan that is there and does not turn as far as what is read says: 0 RPM, a counter with no pulses, a speed
    slower than any fan turns, or, with no speed read, a duty of 0 (NVML's intended speed: the fan is not asked to
    turn)."""
    return there(fan) and (fan.rpm == 0 or fan.invalid in ("no-pulses", "too-slow") or
                           (fan.rpm is None and fan.invalid is None and fan.duty_percent == 0))


def flagged_in_a_reading(fan: FanFact) -> bool:
    """Whether any of a paste's readings of the fan is FAULT (sensors(1) prints it for fanN_fault) or has a BMC status
    that counts it failing (cr, nr, a lower-critical one)."""
    return "FAULT" in (s.strip().upper() for s in fan.speeds) or any(s in FAILING_STATUS for s in fan.statuses)


def turning(fan: FanFact) -> bool:
    return fan.rpm is not None and fan.rpm > 0


def source_of(machine: Machine, fan: FanFact) -> TempFact | None:
    """The hottest valid temperature of what the fan cools: its own device's (a card's, a cooler's; one card's own
    readings where one listing holds several), else what its name says it cools, else the CPU's, else any; first of
    all the one its controller declares it follows, or its history shows it does."""
    declared = hottest_of([t for t in machine.temperatures if t.key == fan.follows]) if fan.follows else None
    if declared is not None:
        return declared
    kind = chip(fan.chip).kind
    if kind == "gpu" or re.match(r"GPU \d+\b", fan.label):
        return hottest_of(_own(machine, fan))
    own = hottest_of(_own(machine, fan)) if kind in ("aio", "psu") else None  # a cooler's or a supply's own
    named = role(None, fan.label)  # a fan named for what it cools ("GPU Fan", "VRM HS", "Chipset fan")
    by_name = hottest_of([t for t in machine.temperatures if t.role == named]) \
        if named not in ("unknown", "board") else None
    # a server's chassis fans cool every part the BMC reads (its GPUs' included): the hottest of them, not the CPU's
    chassis = hottest_of([t for t in machine.temperatures if t.chip == "bmc"]) if kind == "bmc" else None
    return own or by_name or chassis or hottest_of([t for t in machine.temperatures if t.role == "cpu"]) or \
        hottest_of(list(machine.temperatures))


def _own(machine: Machine, fan: FanFact) -> list[TempFact]:
    """The readings of the fan's own device: one card's of a listing of several, a GPU's by its index, its chip's."""
    device = re.match(r"GPU \d+\b", fan.label)
    if device:
        return [t for t in machine.temperatures if t.chip == fan.chip and t.label.startswith(device.group(0))]
    if fan.gpu is not None and chip(fan.chip).kind == "gpu":
        return [t for t in machine.temperatures if t.key == f"nvidia/gpu{fan.gpu}"]
    return [t for t in machine.temperatures if t.chip == fan.chip]


def hottest_of(temps: list[TempFact]) -> TempFact | None:
    valid = [t for t in temps if t.celsius is not None]
    return max(valid, key=lambda t: t.celsius or 0.0) if valid else None


def hot_and_unturned(machine: Machine, fan: FanFact) -> TempFact | None:
    """What a fan that does not turn should be cooling, where that is hot: the fan's source at or above 80 °C and
    above its controller's rest. A board header reads 0 with nothing on it, so one counts only where its board
    names it for what it cools ("CPU Fan")."""
    source = source_of(machine, fan)
    named = role(None, fan.label) not in ("unknown", "board")
    if not_turning(fan) and (chip(fan.chip).zero != "empty" or named) and source is not None and \
            (source.celsius or 0.0) >= max(HOT_C, rest_below(fan)):
        return source
    return None


def rest_below(fan: FanFact) -> float:
    """Below what temperature a rest is the fan's controller's design: its own stop temperature where read, else
    its chip's cautious bound, else a cautious default."""
    return fan.rest_below_c or chip(fan.chip).rest_below_c or REST_UNKNOWN_C


def rest_facts(fan: FanFact) -> dict[str, float | str]:
    """``rest_below`` as facts, with whether it is the controller's own figure, read ("yes"), or a cautious bound
    (docs/FAN-RULES.md, Thresholds), which decides but is never said as the controller's."""
    return {"below_c": rest_below(fan), "below_known": "yes" if fan.rest_below_c else "no"}


def temp_facts(temp: TempFact | None) -> dict[str, float | str]:
    return {"source": temp.key, "source_c": temp.celsius or 0.0} if temp is not None else {}


# --- the rules ------------------------------------------------------------------------------------------------

@rule("no cooling while hot", 100, f"{ABI} (fanN_input: 0 or no pulses); Documentation/gpu/amdgpu/thermal.rst "
      "(zero-RPM stops only below its stop temperature)")
def hot_not_cooled(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        source = hot_and_unturned(machine, fan)
        if source is not None:
            facts: dict[str, float | str] = {"raw": fan.raw or "", **temp_facts(source)}
            if fan.rpm is None and fan.duty_percent == 0:
                facts["reading"] = "0 %"
            if fan.duty_percent:
                facts["duty"] = fan.duty_percent
            yield Hit("hot-not-cooled", (fan.key, source.key),
                      "likely" if chip(fan.chip).zero != "empty" else "possible", facts)


@rule("stopped while warmer than a rest", 50, "Documentation/gpu/amdgpu/thermal.rst (zero-RPM stops only below its "
      "stop temperature); NVML fan-stop; Documentation/hwmon/dell-smm-hwmon.rst")
def warm_not_turning(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        source = source_of(machine, fan)
        by_hand = fan.controller == "manual" and fan.duty_percent is None  # its own control off, the duty unread
        if not_turning(fan) and chip(fan.chip).zero in ("rest", "rest-or-unreported") and source is not None and \
                (by_hand or rest_below(fan) <= (source.celsius or 0.0)) and not kept_turning(fan) and \
                (source.celsius or 0.0) < max(HOT_C, rest_below(fan)) and fan.starts_at_c is None:  # a trip's: its own
            facts: dict[str, float | str] = {**rest_facts(fan), **temp_facts(source)}
            facts["reading"] = "0 %" if fan.rpm is None and fan.duty_percent == 0 else fan.raw or "0 RPM"
            if by_hand:  # pwm_enable 1 (a Dell's BIOS control turned off): nothing of its controller's starts it
                facts["by_hand"] = "yes"
            yield Hit("warm-not-turning", (fan.key, source.key), "possible", facts)


@rule("a pump that stops", 96, "liquidctl documentation (a cooler's pump runs while powered; its firmware keeps a "
      "minimum duty; the pump moves the CPU's heat from the cold plate to the radiator, so a stopped one leaves the "
      "CPU hot while the loop's liquid stays cool)")
def pump_stopped(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        if fan.pump and chip(fan.chip).kind == "aio" and not_turning(fan):
            liquid = source_of(machine, fan)
            cpu = hottest_of([t for t in machine.temperatures if t.role == "cpu"])
            cpu_hot = cpu is not None and (cpu.celsius or 0.0) >= HOT_C
            hot = cpu_hot or (liquid is not None and (liquid.celsius or 0.0) >= LIQUID_HOT_C)
            facts: dict[str, float | str] = {"raw": fan.raw or "", **temp_facts(liquid)}
            if cpu is not None and cpu_hot:
                facts.update(cpu=cpu.key, cpu_c=cpu.celsius or 0.0)
            yield Hit("pump-stopped", (fan.key,), "likely" if hot else "possible", facts)


@rule("a fault flagged", 95, f"{ABI} (fanN_fault; lm-sensors prints FAULT); {IPMI} (status cr, nr); a BMC that "
      "counts a fan failed may raise the others (Supermicro's runs every fan at full)")
def fan_fault(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        if fan.fault and there(fan) and not below_threshold(fan):
            share = f"{fan.duty_percent:g} %" if fan.duty_percent is not None else ""  # a BMC that reports a share
            facts: dict[str, float | str] = {"raw": fan.raw or share, "status": fan.status or ""}
            others = sorted(f.rpm or 0.0 for f in machine.fans if f.chip == "bmc" and not f.fault and turning(f)) \
                if fan.chip == "bmc" else []
            if others:  # what the rest turn at while the BMC counts this one failed
                facts["others_rpm"] = others[len(others) // 2]
            yield Hit("fan-fault", (fan.key,), "known", facts)


@rule("a fault between readings", 95, f"{ABI} (fanN_fault, fanN_input)")
def fault_then_reading(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        numbers = [s for s in fan.speeds if s.strip().upper() != "FAULT"]
        if "FAULT" in (s.strip().upper() for s in fan.speeds) and numbers and not fan.fault:
            yield Hit("fault-then-reading", (fan.key,), "known",
                      {"readings": len(fan.speeds), "faults": len(fan.speeds) - len(numbers),
                       "values": ", ".join(dict.fromkeys(numbers))})


@rule("a duty with no speed", 90, f"{ABI} (pwmN: the duty asked; fanN_input: the speed counted); emc2305.c "
      "(emc2305_show_fan: 960 RPM or slower reads 0)")
def stalled(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        duty, table = ectable.asked(fan, STALL_DUTY)
        entry = chip(fan.chip)
        if at_full_level(fan):  # its 0 may be a stale tachometer: the full-speed level's rule says both
            continue
        if (duty is not None or fan.zero_rpm is False) and not_turning(fan) and not fan.target_rpm and \
                (entry.zero != "empty" or (duty is not None and not table and entry.duty_means_fan)):
            facts = _stall_facts(fan, entry, duty, table)
            sure = facts["tach_may_not_report"] == "no" and not entry.zero_below_rpm and \
                (not table or (duty or 0.0) >= CUSTOM_FIRST_STEP)
            yield Hit("stalled", (fan.key,), "likely" if sure else "possible", facts)


def _stall_facts(fan: FanFact, entry: Chip, duty: float | None, table: bool) -> dict[str, float | str]:
    """What a duty with no speed rests on: the duty (or zero-RPM off), whether the chip may never fill its
    tachometer, whether an EC's fan table asks it, and the speed below which its driver reads a turning fan as 0."""
    unreported = entry.zero in ("unreported", "rest-or-unreported")
    facts: dict[str, float | str] = {"tach_may_not_report": "yes" if unreported else "no", "raw": fan.raw or "0 RPM"}
    if duty is not None:
        facts["duty"] = duty
    else:
        facts["zero_rpm"] = "off"  # its controller does not stop it: 0 is not a rest
    if table:  # below a board's first step the fan may be held off by the board's own steps
        facts["by"] = "table" if (duty or 0.0) >= CUSTOM_FIRST_STEP else "table-low"
    if entry.zero_below_rpm:  # a fan slower than its driver counts reads 0 as well
        facts["counts_from"] = entry.zero_below_rpm
    return facts


def far_from_target(rpm: float | None, target_rpm: float | None) -> bool:
    """A turning fan off its target by more than OFF_TARGET_RPM and OFF_TARGET_SHARE of it (the fan service clocks
    how long; "off its target past its spin-up" judges that)."""
    return bool(target_rpm) and rpm is not None and rpm > 0 and \
        abs(rpm - (target_rpm or 0.0)) > max(OFF_TARGET_RPM, OFF_TARGET_SHARE * (target_rpm or 0.0))


@rule("off its target past its spin-up", 91, f"{ABI} (fanN_target: the desired speed the chip regulates the fan "
      "to; fanN_input); a fan reaches a new target within seconds")
def off_target(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        if fan.off_target_s is not None and fan.off_target_s >= SPIN_UP_S and far_from_target(fan.rpm,
                                                                                             fan.target_rpm):
            yield Hit("off-target", (fan.key,), "likely", {"rpm": fan.rpm or 0.0, "target_rpm": fan.target_rpm or 0.0,
                                                            "seconds": fan.off_target_s})


@rule("a fan its driver disables", 94, "Documentation/admin-guide/laptops/thinkpad-acpi.rst (/proc/acpi/ibm/fan "
      "status: disabled, the EC's fan control off)")
def fan_disabled(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        if fan.status == "disabled" and there(fan):
            yield Hit("fan-disabled", (fan.key,), "known", {"chip": fan.chip or ""})


_LOWER_STATUS = ("lower critical", "lower non-recoverable", "belowcrit", "lcr", "lnr", "crit-lo", "lo-crit",
                 "nonrec-lo", "lo-nonrec")  # ipmitool's and ipmiutil's names for a reading under a lower threshold
FAILING_STATUS = frozenset({*_LOWER_STATUS, "cr", "nr", "critical", "non-recoverable"})  # IPMI's critical events


def below_threshold(fan: FanFact) -> bool:
    """A BMC fan that turns and is at or under its lower-critical threshold: by the threshold read, or by a status
    that names a lower threshold (or a critical status on a turning fan, with no threshold read)."""
    if fan.chip != "bmc" or not turning(fan):
        return False
    if fan.lower_critical_rpm is not None:
        return (fan.rpm or 0.0) <= fan.lower_critical_rpm
    return (fan.status or "") in (*_LOWER_STATUS, "cr", "critical")


@rule("a BMC fan at its lower-critical threshold", 88, f"{IPMI}: a reading at or below the lower-critical "
      "threshold asserts a critical event; Supermicro's BMC then runs every fan at full speed")
def below_bmc_threshold(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        if below_threshold(fan):
            facts: dict[str, float | str] = {"rpm": fan.rpm or 0.0, "status": fan.status or ""}
            if fan.lower_critical_rpm is not None:
                facts["lcr"] = fan.lower_critical_rpm
            if fan.lower_critical_rpm is not None and (fan.rpm or 0.0) >= NEAR_THRESHOLD * fan.lower_critical_rpm:
                facts["near"] = "yes"  # just under the line: a quiet fan the threshold was not set for
            yield Hit("below-bmc-threshold", (fan.key,), "likely" if "near" in facts else "possible", facts)


@rule("a speed that is not a reading", 85, f"{ABI} (fanN_input in RPM, never negative); the driver's own error "
      "values (Documentation/hwmon/dell-smm-hwmon.rst, max31785.rst); gpio-fan.c (fan1_input: the speed map's RPM of "
      "the state set, nothing counted); nbfc-linux src/fan.c (the current speed: the "
      "EC's register scaled between the configuration's minimum and maximum; out of range, those are wrong); a BMC's "
      "fan share below 0 is no share (python-hpilo's get_embedded_health, an iLO's -3000 %)")
def not_a_reading(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        if fan.invalid in ("no-pulses", "negative", "error", "over-range", "off-scale", "not-counted") and \
                not fan.fault and \
                there(fan):
            facts: dict[str, float | str] = {"raw": fan.raw or "", "why": fan.invalid}
            owner = chip(fan.chip)
            if owner.kind == "gpu" and not fitted(owner, fan.label) and (fan.raw or "").upper() == "N/A":
                facts["card"] = "yes"  # a card's tool gives no fan value for a card with no fan of its own too
            source = source_of(machine, fan)
            if source is not None and (source.celsius or 0.0) >= HOT_C:  # unknown cooling of a hot part: said
                facts.update(temp_facts(source), hot="yes")
            yield Hit("speed-not-a-reading", (fan.key,), "known", facts)


@rule("a server fan unlike its siblings", 70, "openbmc phosphor-fan-presence (fan monitor: a rotor that deviates "
      "from its zone's target past an allowed percentage is nonfunctional); a server's fans of one zone are driven "
      "at one duty (IPMI v2.0, fan sensors)")
def unlike_siblings(machine: Machine) -> Iterator[Hit]:
    for name in sorted({f.chip for f in machine.fans if f.chip and chip(f.chip).kind == "bmc"}):
        fans = [f for f in machine.fans if f.chip == name and there(f) and not f.fault]
        speeds = sorted(f.rpm for f in fans if f.rpm)
        if len(speeds) < 3:
            continue
        median = speeds[len(speeds) // 2]
        for fan in fans:
            if fan.rpm == 0 or (fan.rpm or 0.0) > SIBLING_FAR * median:
                yield Hit("unlike-siblings", (fan.key,), "possible",
                          {"rpm": fan.rpm or 0.0, "median_rpm": median, "siblings": len(speeds)})


@rule("a fan at 0 whose controller is not known", 56, f"{ABI} (fanN_input: 0; pwmN 0: the output asks for no "
      "speed); what a 0 means is the controller's, and nothing read names it")
def zero_unknown(machine: Machine) -> Iterator[Hit]:
    zeros = [f for f in machine.fans if chip(f.chip).zero == "unknown" and f.chip != "bmc" and f.rpm == 0 and
             there(f) and f.duty_percent in (None, 0) and not f.target_rpm and hot_and_unturned(machine, f) is None]
    if not any(turning(f) for f in machine.fans):
        return  # every fan at 0: "every header at 0 RPM" says it (each asked 0 %: "asked to stop")
    unasked = [f for f in zeros if f.duty_percent is None]
    if unasked:
        yield Hit("zero-unknown", tuple(f.key for f in unasked), "possible", {"count": len(unasked)})
    # its controller asks for 0 and it reads 0: as asked (beside a duty floor read, "a firmware floor" says it)
    asked = [f for f in zeros if f.duty_percent == 0 and not f.floor_percent]
    if asked:
        yield Hit("zero-unknown", tuple(f.key for f in asked), "possible", {"count": len(asked), "asked": 0.0})


@rule("a BMC fan at 0 it calls fine", 60, f"{IPMI}: a status of ok means no threshold was crossed; an empty slot "
      "reads no reading (ns, na) on most BMCs")
def bmc_zero_ok(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        if fan.chip == "bmc" and fan.rpm == 0 and there(fan) and not fan.fault and (fan.status or "ok") == "ok":
            yield Hit("bmc-zero-ok", (fan.key,), "possible", {"status": fan.status or "not given"})


@rule("two drivers of one chip", 75, "Documentation/hwmon/nct6683.rst; the out-of-tree nct6687d README")
def drivers_disagree(machine: Machine) -> Iterator[Hit]:
    chips = {f.chip for f in machine.fans if f.chip}
    for name in sorted(chips):
        for other in chip(name).same_chip_as:
            if other in chips and name < other:
                counts = {c: sum(1 for f in machine.fans if f.chip == c and turning(f)) for c in (name, other)}
                if counts[name] != counts[other]:
                    more, fewer = sorted(counts, key=lambda c: -counts[c])
                    yield Hit("drivers-disagree", (more, fewer), "likely",
                              {"more": more, "fewer": fewer, "more_n": counts[more], "fewer_n": counts[fewer]})
