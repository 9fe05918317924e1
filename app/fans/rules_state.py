"""The rules of what holds a fan where it is when nothing is wrong with it: a daemon's curve or decisions, a hand
(a fixed duty, no control), a firmware floor, its controller's rest (what a paste's readings in turn show is
``app.fans.rules_turn``).
Registered in ``app.fans.rules`` like the fault rules, at lower priorities; what describes the fans read (the
fastest, no fault, empty slots, what was left out) is ``app.fans.rules_read``."""

from __future__ import annotations

from collections.abc import Iterator

from ..core.finding import Confidence
from .chips import chip
from .facts import FanFact, Machine, TempFact
from .gpulines import gpu_line
from .rules import (
    ABI,
    STALL_DUTY,
    Hit,
    flagged_in_a_reading,
    rest_below,
    rest_facts,
    rule,
    source_of,
    there,
    turning,
)
from .rules_daemon import driven
from .rules_gpu import turning_twin
from .speeds import COOL_C, at_full_level, at_top, held_at_floor, kept_turning


@rule("no temperature to follow", 60, f"{ABI} (tempN_input); Documentation/admin-guide/laptops/thinkpad-acpi.rst "
      "(-128: not available)")
def no_temperature(machine: Machine) -> Iterator[Hit]:
    ec_cpu = [t for t in machine.temperatures if chip(t.chip).kind == "ec" and t.role == "cpu"]
    if machine.temperatures and all(t.celsius is None and t.invalid != "relative" for t in machine.temperatures) and \
            len(ec_cpu) < len(machine.temperatures):  # an EC's own CPU reading alone: said by its own rule
        yield Hit("no-temperature", tuple(t.key for t in machine.temperatures), "known",
                  {"count": len(machine.temperatures)})


@rule("a daemon that measured no range", 63, "pwmconfig(8) (each output set to 0, every fan input watched); "
      "fan2go's README (fan initialization: the pwm a fan starts at, stops "
      "at and turns no faster past, measured by watching its RPM; minPwm, startPwm, maxPwm)")
def no_range(machine: Machine) -> Iterator[Hit]:
    for found in machine.calibrations:
        if found.uncorrelated:  # pwmconfig: the output at 0, and no fan slowed
            turning = [(fan, was) for fan, was, _now in found.uncorrelated if was > 0]
            facts: dict[str, float | str] = {"daemon": found.daemon, "fan": found.fan, "how": "no-correlation",
                                             "fans": float(len(found.uncorrelated))}
            if turning:
                facts.update(turning=turning[0][0], was=turning[0][1],
                             now=next(now for fan, _was, now in found.uncorrelated if fan == turning[0][0]))
            yield Hit("daemon-no-range", (), "known", facts)
        elif found.max_pwm <= found.min_pwm:  # nothing between where it stops and where it tops out: no curve to map
            yield Hit("daemon-no-range", (), "known", {"daemon": found.daemon, "fan": found.fan,
                                                       "min": found.min_pwm, "start": found.start_pwm,
                                                       "max": found.max_pwm})


@rule("full speed while cool", 66, f"{ABI} (pwmN_enable 0: full speed, no control; pwmN); NVML "
      "nvmlDeviceGetFanControlPolicy_v2 (manual); thinkpad-acpi.rst (disengaged, full-speed); controllers run their "
      "fans at full as a failsafe when they lose their sensor (nct6775.rst, the BMC's full mode in ipmitool(1) raw); "
      "fanN_max, a fan's top speed where no duty is read (applesmc.c: the SMC's F<n>Mx); Apple's service manuals' "
      "symptom charts (fans running fast: suspect a fan or sensor error)")
def full_while_cool(machine: Machine) -> Iterator[Hit]:
    together: dict[tuple[float, str, str], list[FanFact]] = {}
    celsius: dict[str, float] = {}
    for fan in machine.fans:
        source = _cool_source_of_full(machine, fan)
        if source is not None:
            held = "" if fan.controller != "manual" else "pwm_enable 1" if fan.pwm_enable == 1 else "manual"
            together.setdefault((fan.duty_percent or 0.0, source.key, held), []).append(fan)
            celsius[source.key] = source.celsius or 0.0
    for (duty, source_key, held), fans in together.items():  # fans at one duty beside one cool source: one finding
        # read as held by hand: what holds them is known, not guessed
        facts: dict[str, float | str] = {"duty": duty, "source": source_key, "source_c": celsius[source_key],
                                         **({"held": held} if held else {})}
        yield Hit("full-while-cool", tuple(f.key for f in fans), "known" if held else "likely",
                  {**facts, **_top_and_lost(machine, fans)})


MAX_LOST_SAID = 6  # the sensors its controller reads nothing from, each named up to this many


def _top_and_lost(machine: Machine, fans: list[FanFact]) -> dict[str, float | str]:
    """Fans at full with no duty read, said by their speed against their top; and, of an embedded controller's or a
    Mac SMC's fans, the sensors of their own chip that read nothing (a controller that loses a sensor runs its fans
    at full; a board fan chip's open inputs read nothing whatever drives its fans)."""
    facts: dict[str, float | str] = {}
    if all(f.duty_percent is None for f in fans):
        facts.update(at_top="yes", rpm=max(f.rpm or 0.0 for f in fans), max=max(f.max_rpm or 0.0 for f in fans))
    own = {f.chip for f in fans if chip(f.chip).kind == "ec"}  # an EC's or SMC's own sensors (a board chip's open
    lost = [t.key for t in machine.temperatures if t.invalid and t.chip in own]  # inputs read nothing by design)
    facts.update({f"lost{i}": key for i, key in enumerate(lost[:MAX_LOST_SAID])})
    return facts


def _cool_source_of_full(machine: Machine, fan: FanFact) -> TempFact | None:
    """The cool temperature a fan at full speed cools, where the fan's own control leaves it to this rule."""
    if not at_top(fan) or fan.controller in ("daemon", "none") \
            or not there(fan) or chip(fan.chip).kind == "aio" or fan.rpm == 0:
        return None  # by a daemon's curve or with no control: said by their own rules; a cooler's duty in its
        # status is the one last set by software (liquidctl), not one its firmware chose; a fan read at 0 RPM
        # does not run at full (an empty header, a stall or an uncounted speed: their own rules)
    if fan.follows_how == "declared" and any(t.key == fan.follows and t.invalid for t in machine.temperatures):
        return None  # its chip's curve follows an input that is no reading: that rule says why it is at full
    source = source_of(machine, fan)
    return source if source is not None and source.celsius is not None and source.celsius < COOL_C else None


@rule("an embedded controller's full-speed level", 86, "Documentation/admin-guide/laptops/thinkpad-acpi.rst (the "
      "\"full-speed\" level, also known as \"disengaged\": the EC disables the speed-locked closed-loop fan control "
      "and drives the fan as fast as it can go; it may take up to two minutes to ramp up, and the tachometer readings "
      "may go stale meanwhile)")
def full_level(machine: Machine) -> Iterator[Hit]:
    by_daemon = {f.key for c in machine.curves if (f := driven(machine, c)) is not None}  # its curve's rule says it
    for fan in machine.fans:
        if at_full_level(fan) and there(fan) and fan.key not in by_daemon:  # a 0 may be its tachometer gone stale
            yield Hit("no-control", (fan.key,), "known",
                      {"level": fan.level or "", **({"raw": fan.raw or "0 RPM"} if not fan.rpm else {})})


@rule("a fan with no control", 55, f"{ABI} (pwmN_enable 0: no fan speed control, full speed)")
def no_control(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        if fan.pwm_enable == 0 and chip(fan.chip).pwm_enable.get(0) == "none" and there(fan):
            by_hand = chip(fan.chip).enable_0_if_full  # its driver reads 0 also for a duty set by hand to 255
            yield Hit("no-control", (fan.key,), "known", {"or_by_hand": "yes"} if by_hand else {})


@rule("a fan held at a fixed duty", 55, f"{ABI} (pwmN_enable 1: manual, the duty written is kept)")
def fixed_duty(machine: Machine) -> Iterator[Hit]:
    held: dict[tuple[float, bool], list[str]] = {}
    by_daemon = {f.key for c in machine.curves if (f := driven(machine, c)) is not None}  # its curve's rule says it
    for fan in machine.fans:  # at full while cool, or not at the duty set: those rules say it held
        if fan.key in by_daemon:
            continue
        if (fan.controller == "manual" and fan.duty_percent and turning(fan) and
                _cool_source_of_full(machine, fan) is None and not off_asked(fan)) or stopped_by_hand(fan):
            held.setdefault((fan.duty_percent or 0.0, fan.pwm_enable == 1), []).append(fan.key)
    for (duty, by_pwm_enable), fans in held.items():  # the fans held at one duty: one finding
        yield Hit("fixed-duty", tuple(fans), "known", {"duty": duty, **({"pwm_enable": 1.0} if by_pwm_enable else {})})


def stopped_by_hand(fan: FanFact) -> bool:
    """A fan set by hand to 0 % that does not turn: its controller's automatic control is off (pwm_enable 1 keeps
    the duty written), so its stop is the setting, not a rest by design, and nothing starts it as its source heats."""
    return fan.controller == "manual" and fan.duty_percent == 0 and fan.rpm in (0, None) and fan.invalid is None and \
        there(fan) and not fan.fault


OFF_ASKED_POINTS = 10.0  # a read-back this far from the speed asked is not a rounding of the controller's steps


def off_asked(fan: FanFact) -> bool:
    """A fan whose controller reads back a duty OFF_ASKED_POINTS or more from the one set for it: a speed set by a
    person or a program (a GPU's own automatic target is the firmware's, and the fan follows it in its own time)."""
    return chip(fan.chip).reads_back_duty and fan.controller != "firmware" and fan.target_percent is not None and \
        fan.duty_percent is not None and abs(fan.target_percent - fan.duty_percent) >= OFF_ASKED_POINTS and \
        held_at_floor(fan) is None  # asked under its card's least speed, it runs at that least (rules_range)


DUTY_APART_POINTS = 50.0  # two fans of one controller asked this far apart ...
SAME_SPEED_SHARE = 0.05  # ... that turn within this share of each other: the duties are not what turns them


@rule("duties that do not set the speed", 57, "Intel's 4-Wire PWM Controlled Fans Specification (a fan's speed "
      "follows the duty cycle of its PWM input); sysfs-interface.rst (pwmN, fanN_input); liquidctl's guides (a "
      "cooler's fans are one model, sold as a set)")
def duty_not_driving(machine: Machine) -> Iterator[Hit]:
    """Two fans of one controller asked for duties far apart that turn at the same speed: what is read as their duty
    does not turn them (the controller does not apply it, or both fans run from one signal or at full). Likely for a
    cooler's fans, one model; possible for a board's, which may be two models whose speeds happen to meet."""
    by_chip: dict[str | None, list[FanFact]] = {}
    for fan in machine.fans:
        if not fan.pump and fan.duty_percent is not None and turning(fan) and there(fan):
            by_chip.setdefault(fan.chip, []).append(fan)
    for chip_name, fans in by_chip.items():
        one_set = chip(chip_name).kind == "aio"
        for a, b in _same_speed_far_duties(fans):
            yield Hit("duty-not-driving", (a.key, b.key), "likely" if one_set else "possible",
                      {"duty_a": a.duty_percent or 0.0, "rpm_a": a.rpm or 0.0, "duty_b": b.duty_percent or 0.0,
                       "rpm_b": b.rpm or 0.0, "one_set": "yes" if one_set else "no"})


def _same_speed_far_duties(fans: list[FanFact]) -> Iterator[tuple[FanFact, FanFact]]:
    """Each pair of ``fans`` (each fan in one pair at most, the pair in key order) within SAME_SPEED_SHARE of each
    other's speed and DUTY_APART_POINTS apart in duty; by speed, so only a fan's next few neighbours are compared."""
    said: set[str] = set()
    ordered = sorted(fans, key=lambda f: f.rpm or 0.0)
    for n, a in enumerate(ordered):
        for b in ordered[n + 1:]:
            if (b.rpm or 0.0) - (a.rpm or 0.0) > SAME_SPEED_SHARE * (b.rpm or 0.0):
                break
            apart = abs((a.duty_percent or 0.0) - (b.duty_percent or 0.0)) >= DUTY_APART_POINTS
            if apart and not {a.key, b.key} & said:
                said |= {a.key, b.key}
                first, second = sorted((a, b), key=lambda f: f.key)
                yield first, second


@rule("outputs and fans crossed", 54, "pwmconfig(8) (it tests each PWM output against every fan: which fan an output "
      "drives is found, not given by its number); sysfs-interface.rst (pwmN, fanN_input)")
def channels_crossed(machine: Machine) -> Iterator[Hit]:
    """On a board's fan chip, a fan that turns while its output is set to 0 % by hand beside one that reads 0 RPM
    while its output asks for a speed: an output and a tachometer are paired by their numbers only, so the asking
    output may drive the turning fan (the board wired them so, or the fans sit on other headers than their numbers
    say)."""
    by_chip: dict[str | None, list[FanFact]] = {}
    for fan in machine.fans:
        if chip(fan.chip).kind == "superio" and there(fan) and not fan.fault and fan.duty_percent is not None:
            by_chip.setdefault(fan.chip, []).append(fan)
    for fans in by_chip.values():
        unasked = [f for f in fans if f.duty_percent == 0 and f.controller == "manual" and turning(f)]
        idle = [f for f in fans if (f.duty_percent or 0.0) >= STALL_DUTY and f.rpm == 0]
        if len(unasked) == 1 and len(idle) == 1:  # one of each: several would pair by guess (an empty header too)
            yield Hit("channels-crossed", (unasked[0].key, idle[0].key), "possible",
                      {"rpm": unasked[0].rpm or 0.0, "duty": idle[0].duty_percent or 0.0})


@rule("turning at a duty of 0", 53, f"{ABI} (pwmN 0 under pwmN_enable 1: the output asks for nothing; pwmN_mode; "
      "fanN_input); Intel's 4-Wire PWM Controlled Fans Specification (3.4: at 0 % a fan stays at its minimum speed, "
      "type A, or stops, type B; a 3-wire fan has no PWM input)")
def turns_at_zero(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        if fan.duty_percent == 0 and fan.controller == "manual" and turning(fan):
            yield Hit("turns-at-zero", (fan.key,), "known", {"rpm": fan.rpm or 0.0, **(
                {"mode": "pwm" if fan.pwm_mode else "dc"} if fan.pwm_mode is not None else {})})


@rule("at rest by design", 40, "Documentation/gpu/amdgpu/thermal.rst (zero-RPM; pwm1_enable 2: the card's firmware "
      "sets the fan from its temperature); NVML fan-stop; liquidctl's "
      "corsair-hxi-rmi-psu-guide (a supply's own fan control); "
      "Documentation/hwmon/dell-smm-hwmon.rst (the EC stops its fans while cool); Chrome EC include/ec_commands.h "
      "(EC_FAN_SPEED_STALLED_DEPRECATED: a stalled fan read as 0 on newer ECs)")
def at_rest(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        design = chip(fan.chip).zero
        source = source_of(machine, fan)
        if not _may_rest(fan) or source is None or (source.celsius or 0.0) >= rest_below(fan):
            continue  # nothing read says it is cool, or it is warmer than its controller rests at: never "at rest"
        passive = _maybe_passive(machine, fan)
        if passive is None:
            continue  # a card with no fan of its own: its "0 %" is not a fan at rest ("a GPU with no fan reading")
        stall = chip(fan.chip).stall_reads_zero and fan.rpm == 0  # a stall reads the same 0: rest is not likely
        twin = turning_twin(machine, fan, source.celsius or 0.0)
        confidence: Confidence = "likely" if design == "rest" and not passive and not stall else "possible"
        trip = {"trip": fan.starts_at_c} if fan.starts_at_c is not None else {}  # where its zone turns it on
        yield Hit("at-rest", (fan.key,), confidence, {**trip, "design": "rest-or-passive" if passive else design,
                                                      **rest_facts(fan), "source": source.key,
                                                      "source_c": source.celsius or 0.0,
                                                      "reading": _rest_reading(fan),
                                                      **({"stall_reads_zero": "yes"} if stall else {}),
                                                      **(twin or {})})


def _maybe_passive(machine: Machine, fan: FanFact) -> bool | None:
    """Whether a GPU fan's 0 may be a passive card's, which reports a duty for a fan it lacks: NVML with no target
    read on a card that does not say it is a GeForce, or another card's 0 % with no speed read (rocm-smi's table);
    None for a data-center card, which has no fan of its own."""
    line = gpu_line(next((g.name for g in machine.gpus if g.index == fan.gpu), None)) if fan.chip == "nvidia" \
        else None
    if line == "datacenter":
        return None
    return (fan.chip == "nvidia" and fan.target_percent is None and line != "consumer") or \
        (fan.chip != "nvidia" and chip(fan.chip).kind == "gpu" and fan.rpm is None and fan.invalid is None)


@rule("a fan at 0 with nothing read to judge it", 40, f"{ABI} (fanN_input: 0; tempN_input); "
      "Documentation/hwmon/dell-smm-hwmon.rst and thinkpad-acpi.rst (an embedded controller stops its fans while "
      "cool, and may leave the tachometer unfilled)")
def zero_unjudged(machine: Machine) -> Iterator[Hit]:
    """A fan its controller may rest, at 0, with no temperature of what it cools read: a rest and a tachometer that
    does not report stay two explanations, and neither is chosen."""
    for fan in machine.fans:
        if _may_rest(fan) and source_of(machine, fan) is None:
            yield Hit("zero-unjudged", (fan.key,), "possible", {"reading": _rest_reading(fan)})


def _may_rest(fan: FanFact) -> bool:
    """A fan whose controller stops it by design, that is there, not flagged, not set to keep turning, and whose
    duty asks for nothing while its tachometer counts nothing."""
    asked = fan.duty_percent if fan.duty_percent is not None else fan.table_percent  # its EC's table asks, if read
    if chip(fan.chip).zero not in ("rest", "rest-or-unreported") or not there(fan) or fan.fault or \
            fan.zero_rpm is False or flagged_in_a_reading(fan) or stopped_by_hand(fan) or fan.controller == "manual":
        return False  # (a fan set by hand is held as set: its controller's own rest is not in effect)
    # beside a duty of 0: no speed read at all, a counter's noise, or the chip's documented count of no pulses (a
    # stopped counter: amdgpu's 65535); a driver's error value or a negative count is no sign of rest (a stopped fan
    # and a failed one read alike): the rule for readings that are no speed says it
    counts_nothing = fan.rpm == 0 or (fan.rpm is None and asked == 0 and
                                      fan.invalid in (None, "too-slow", "no-pulses"))
    return counts_nothing and not (asked is not None and asked > 0) and not kept_turning(fan)


def _rest_reading(fan: FanFact) -> str:
    if fan.rpm == 0:
        return "0 RPM"
    if fan.invalid == "too-slow":
        return f"{fan.raw} at 0 % duty (a counter's noise, not a turning fan)"
    return "0 %"


KERNEL_THERMAL = ("Documentation/driver-api/thermal/sysfs-api.rst (trip_point_*_temp, _type active, _hyst; "
                  "cooling_device cur_state, max_state; a zone's mode); Documentation/devicetree/bindings/thermal/"
                  "thermal-zones.yaml (trips, hysteresis, cooling-maps)")


def _zone_facts(machine: Machine, fan: FanFact) -> dict[str, float | str] | None:
    """A kernel cooling device's zone and trip as facts: its zone's temperature, the active trip that turns the fan
    on, where the kernel turns it off again (the trip less its hysteresis), the zone's mode; None where unread."""
    source = source_of(machine, fan) if fan.starts_at_c is not None and fan.controller == "kernel" else None
    if source is None or source.celsius is None:
        return None
    return {"zone": source.key, "zone_c": source.celsius, "trip": fan.starts_at_c or 0.0,
            "off_below": (fan.starts_at_c or 0.0) - (fan.hysteresis_c or 0.0),
            "state": fan.raw or f"{fan.duty_percent or 0.0:.0f} %", "mode": fan.zone_mode or ""}


@rule("a thermal zone's trip not acted on", 80, KERNEL_THERMAL)
def trip_not_followed(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        facts = _zone_facts(machine, fan)
        if facts is not None and not fan.duty_percent and float(facts["zone_c"]) >= float(facts["trip"]):
            # a zone whose mode is disabled does not act on its trips (known); else the fan is most likely not bound
            # to this trip (no cooling map), or something else holds its state
            yield Hit("trip-not-followed", (fan.key, str(facts["zone"])),
                      "known" if facts["mode"] == "disabled" else "likely", facts)


@rule("a thermal zone's active trip", 57, KERNEL_THERMAL)
def trip_on(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        facts = _zone_facts(machine, fan)
        if facts is None or not fan.duty_percent:
            continue
        celsius = float(facts["zone_c"])
        if celsius < float(facts["off_below"]):  # below where the kernel turns it off: held by something else
            yield Hit("trip-on", (fan.key, str(facts["zone"])), "possible", {**facts, "held": "yes"})
        else:  # likely: a listing shows no cooling map, so the zone is taken as the fan's, not read as it
            yield Hit("trip-on", (fan.key, str(facts["zone"])), "likely",
                      {**facts, "band": "yes" if celsius < float(facts["trip"]) else "no"})
