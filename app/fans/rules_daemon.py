"""The rules of a fan daemon's configuration and log (fancontrol, thinkfan, fan2go, liquidctl's profiles): the curve
or levels it imposes, whether the fan it drives follows them, and the level it logged choosing and why. Registered in
``app.fans.rules`` like every rule."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from itertools import pairwise

from .build import invalid_celsius
from .chips import chip
from .facts import Curve, Decision, FanFact, Machine
from .read.ipmiraw import TYPED
from .rules import ABI, Hit, rule
from .speeds import FULL_LEVELS

MAX_STEPS_SAID = 8  # a daemon's levels each said up to this many


NOT_RUNNING = ("outdated", "missing", "aborted")  # a daemon's log events after which its curve drives nothing


@rule("a fan daemon's curve", 57, "fancontrol(8) (MINTEMP to MAXTEMP drawn from MINSTOP to MAXPWM, MINPWM below; "
      "an output whose MINPWM is above its MAXPWM is inverted, lm-sensors' fancontrol inverted mode); it87.rst "
      "(fix_pwm_polarity: a chip the firmware left with its PWM values inverted); thinkfan.conf(5) (levels; \"level "
      "auto\" gives control back to the firmware); fan2go's README and example configuration (curves; a function "
      "curve combines others: average, maximum ...); i8kmon(1) (its table of fan states by temperature, num_configs) "
      "and linux/i8k.h (I8K_FAN_OFF, LOW, HIGH); zcfan(1) (max_temp, med_temp and low_temp: thinkpad_acpi levels 7, "
      "4 and 1 from each, off below; the hottest thermal zone); liquidctl(8) (a cooler's profile runs on the device "
      "against its liquid temperature; kraken2.py logs the table it sends); nfancurve's temp.sh (0 % under min_t, "
      "fcurve[j] up to tcurve[j], 100 % from the last); nvidia-settings' GPUTargetFanSpeed range and NVML "
      "nvmlDeviceGetMinMaxFanSpeed (the least a card accepts under manual control); amdgpu-fan's and amdfan's "
      "controller.py (numpy.interp over speed_matrix on the card's temp1, pwm1_enable 1; Curve refuses a matrix "
      "whose lowest speed is 3 or under, whose speeds fall or whose temperatures do not rise, and the daemon exits)")
def daemon_curve(machine: Machine) -> Iterator[Hit]:
    stopped = {e.daemon: e.event for e in machine.events if e.event in NOT_RUNNING}
    for curve in machine.curves:
        if not curve.points and not curve.combined:
            continue
        facts = _curve_facts(curve)
        idle = _not_running(curve, facts, stopped)
        if idle is not None:
            yield idle
            continue
        asks = _now(machine, curve, facts)
        fan = driven(machine, curve)
        lowest = min([p for _, p in curve.points] + ([curve.floor_percent] if curve.floor_percent is not None else []),
                     default=None)  # a combination of curves asks nothing of its own
        if fan is not None and chip(fan.chip).refuses_under_floor and fan.floor_percent and \
                fan.controller == "manual" and lowest is not None and lowest < fan.floor_percent - 0.5:
            # refused, not raised to the floor: where a driver clamps (a cooler's pump) its floor rule says so
            facts.update(refused_below=fan.floor_percent, lowest=lowest)
        if fan is not None and fan.duty_percent is not None:
            facts["duty"] = fan.duty_percent
            if asks is not None and not _follows(curve, asks, fan.duty_percent):
                yield Hit("daemon-not-followed", (fan.key,), "likely", facts)
                continue
        yield Hit("daemon-curve", (fan.key,) if fan else (), "known", facts)


def _not_running(curve: Curve, facts: dict[str, float | str], stopped: Mapping[str, str]) -> Hit | None:
    """A curve that drives nothing: its daemon's own check refuses it as it starts (likely only where that daemon's
    later versions alone check), or its log shows it did not start, or left."""
    if curve.refused:
        return Hit("daemon-curve", (), "likely" if curve.refused.endswith("-newer") else "known",
                   {**facts, "not_running": "refused", "refused": curve.refused,
                    "left_to": "card" if chip(curve.chip).kind == "gpu" else "firmware"})
    if curve.daemon in stopped:
        return Hit("daemon-curve", (), "known", {**facts, "not_running": stopped[curve.daemon]})
    return None


def _curve_facts(curve: Curve) -> dict[str, float | str]:
    """A curve as facts: its ends, its floor, each level of a stepped one, where it hands the fan to its firmware; a
    combination of curves, by how it combines them."""
    facts: dict[str, float | str] = {"daemon": curve.daemon, "output": f"{curve.chip} {curve.output}",
                                     "source": curve.source or "", "points": len(curve.points)}
    if curve.points:
        (t0, p0), (t1, p1) = curve.points[0], curve.points[-1]
        facts.update(t0=t0, p0=p0, t1=t1, p1=p1)
        flat = [t for t, p in itertools.takewhile(lambda point: point[1] == p0, curve.points)]
        if not curve.stepped and len(flat) > 1 and flat[-1] < t1:  # its first points ask the same: said as one
            facts["flat_to"] = flat[-1]
    if curve.combined:
        facts["combined"] = curve.combined
    if curve.strategy:
        facts["strategy"] = curve.strategy
    if curve.on_battery:
        facts["on_battery"] = "yes"
    if curve.inverted:
        facts["inverted"] = "yes"
    if curve.firmware_may_run:
        facts["firmware_may_run"] = "yes"
    if curve.in_firmware:
        facts["in_firmware"] = "yes"
    if curve.floor_percent is not None:
        facts["floor"] = curve.floor_percent
    if curve.firmware_c is not None:
        facts["firmware_from"] = curve.firmware_c[0]
    for i, (celsius, percent) in enumerate(curve.points[:MAX_STEPS_SAID] if curve.stepped else ()):
        facts[f"step{i}_c"], facts[f"step{i}_p"] = celsius, percent
    return facts


def driven(machine: Machine, curve: Curve) -> FanFact | None:
    """The fan ``curve`` drives: hwmon's ``fanN`` of its ``pwmN``, or the cooler's channel it names."""
    return next((f for f in machine.fans if curve.drives(f.key)), None)


def _now(machine: Machine, curve: Curve, facts: dict[str, float | str]) -> float | None:
    """What ``curve`` asks for at the temperature it follows, where that is read (put in ``facts``)."""
    wanted = f"{curve.chip}/{(curve.sensor or curve.source or '').removesuffix('_input')}"
    temp = next((t for t in machine.temperatures if t.key == wanted and t.celsius is not None), None)
    if temp is None or temp.celsius is None:
        return None
    asks = _asks(curve, temp.celsius)
    held_by_firmware = curve.firmware_c is not None and curve.firmware_c[0] <= temp.celsius <= \
        (curve.firmware_c[1] if curve.firmware_c[1] is not None else math.inf)
    if asks is not None and not held_by_firmware:  # in its firmware's range the daemon asks for nothing
        facts.update(now_c=temp.celsius, asks=asks, source_key=temp.key)
    return asks


OFF_CURVE_POINTS = 10.0  # a duty this far from what the curve asks at the temperature read is not the curve's


def _follows(curve: Curve, asks: float, duty: float) -> bool:
    """Whether ``duty`` is what ``curve`` asks (``asks``, within OFF_CURVE_POINTS); of a stepped curve, the level
    beside it too: levels have two limits each (thinkfan.conf(5); nbfc's Up and Down thresholds, i8kmon's low and
    high), so a daemon coming from a neighbouring level holds it past where the next one starts."""
    levels = [p for _, p in curve.points]
    near = [asks]
    if curve.stepped and asks in levels:
        at = levels.index(asks)
        near += levels[max(at - 1, 0):at + 2]
    return any(abs(duty - level) <= OFF_CURVE_POINTS for level in near)


def _asks(curve: Curve, celsius: float) -> float | None:
    """The duty ``curve`` asks for at ``celsius``: its floor (or first point) below, its last point above, linear
    between points (as fancontrol draws it); of a stepped curve (thinkfan's, i8kmon's, nbfc's levels), the level
    held from where it starts (a line drawn between two levels far apart asks what no level gives)."""
    points = curve.points
    if not points:
        return None  # a combination of curves over several sensors: no one temperature gives its duty
    if celsius < points[0][0]:
        return curve.floor_percent if curve.floor_percent is not None else points[0][1]
    if curve.stepped:  # the level held from where it starts
        return next(p for t, p in reversed(points) if t <= celsius)
    for (ta, pa), (tb, pb) in pairwise(points):
        if ta <= celsius <= tb:
            return pa if tb == ta else pa + (pb - pa) * (celsius - ta) / (tb - ta)
    return points[-1][1]


@rule("a daemon's bias chose the level", 62, "thinkfan(1) (-b: a bias added to a reading that rises fast); "
      "thinkfan.conf(5) (levels, each on between its two temperatures); thinkpad-acpi.rst (-128: not available)")
def bias_chose(machine: Machine) -> Iterator[Hit]:
    for n, step in enumerate(machine.decisions):
        alone = _level_at(machine, step.celsius)
        rank = _rank(step)
        if step.bias <= 0 or rank is None or (alone is not None and alone >= rank):
            continue
        facts: dict[str, float | str] = {"daemon": step.daemon, "celsius": step.celsius, "bias": step.bias,
                                         "level": _level(step)}
        if alone is not None:
            facts["alone"] = float(alone)
        before = machine.decisions[n - 1].first_c if n else None
        if before is not None and invalid_celsius("thinkpad", "", before) is not None:
            facts["before"] = before  # the rise it saw came from a value that is no reading (-128, 0)
        if n + 1 < len(machine.decisions):
            facts["next"] = _level(machine.decisions[n + 1])
        yield Hit("bias-chose-level", (), "known" if alone is not None else "likely", facts)


@rule("a daemon's logged decisions", 54, "thinkfan(1) (each line: the readings, their biases, the level set); "
      "thinkfan.conf(5) (levels); NVML-GPU-Control's README and helper_functions.py (each pass writes its curve's "
      "speed, or --default-speed where no point applies, to every fan controller); NVML API reference: "
      "nvmlDeviceSetFanSpeed_v2 (it changes the fan control policy to manual); smfc's smfc.py and ipmi.py (the BMC "
      "set to its FULL fan mode, each IPMI zone's level written and logged with the temperature that chose it); "
      "hddfancontrol's __init__.py (Fan.setSpeed: the speed logged, then the pwm written at the higher of it and "
      "its minimum) and src/fan/pwm_fan.rs (set_speed: software mode, the speed logged as set); i8kmon (-v: each "
      "pass's temperature and the state it leaves each fan in); Dell_iDRAC_fan_controller's functions.sh (the "
      "iDRAC's own control off, raw 0x30 0x30 0x01 0x00, and one duty for every fan, 0x30 0x30 0x02 0xff, while "
      "every CPU is at or below its threshold; Dell's default dynamic profile, 0x30 0x30 0x01 0x01, above it or "
      "where a CPU cannot be read; nothing set in monitoring-only mode), and the same commands typed into ipmitool "
      "(Dell's OEM commands, as that script sends them; ipmitool's issue tracker lists them for 11th-generation "
      "servers)")
def daemon_decided(machine: Machine) -> Iterator[Hit]:
    """What a fan daemon logged it set, last decision first: the level that holds the fan now, and the reading it
    chose it for (where no bias made the choice: that is said by its own rule); a daemon that writes a duty, the duty
    and what chose it."""
    steps = machine.decisions
    if steps and (steps[-1].percent is not None or steps[-1].drives == "bmc"):  # a BMC's fans: a duty, or its own
        for what in dict.fromkeys(step.what for step in steps):  # each zone a daemon writes to apart (smfc's)
            yield _duty_written(machine, tuple(step for step in steps if step.what == what))
    elif steps and not any(step.bias > 0 for step in steps):
        last = steps[-1]
        facts: dict[str, float | str] = {"daemon": last.daemon, "level": _level(last), "celsius": last.celsius,
                                         "steps": float(len(steps))}
        if len(steps) > 1:
            facts.update(before_level=_level(steps[-2]), before_c=steps[-2].celsius)
        yield Hit("daemon-decided", (), "known", facts)


def _duty_written(machine: Machine, steps: tuple[Decision, ...]) -> Hit:
    """The duty a daemon last wrote, for which reading and why, and how many of its last passes wrote the same: known
    (the log is the daemon's own account); likely where its fans, read after a pass wrote that duty, read another
    (a driver or a card that does not take it; the reading may lag the write)."""
    last = steps[-1]
    same = next((n for n, step in enumerate(reversed(steps)) if (step.percent, step.why) != (last.percent, last.why)),
                len(steps))
    facts: dict[str, float | str] = {"daemon": last.daemon, "celsius": last.celsius, "why": last.why,
                                     "passes": float(same),
                                     **({"duty": last.percent} if last.percent is not None else {}),
                                     **({"written_to": last.what} if last.what else {}),
                                     **({"asked": last.asked} if last.asked is not None else {}),
                                     **({"limit": last.limit_c} if last.limit_c is not None else {})}
    fans = [f for f in machine.fans if f.chip == last.drives and not last.what]  # a zone's fans are not named
    # read after an earlier pass wrote the same duty (a pass reads its fans before it writes)
    off = [f for f in fans if same > 1 and f.duty_percent is not None and last.percent is not None and
           abs(f.duty_percent - last.percent) > OFF_CURVE_POINTS]
    if off and off[0].duty_percent is not None:
        facts["read"] = off[0].duty_percent
    # a command typed by hand is what was asked, not what the controller did with it: likely
    return Hit("daemon-decided", tuple(f.key for f in fans), "likely" if off or last.daemon == TYPED else "known",
               facts)


@rule("a daemon's pwm changed beneath it", 59, "fan2go's README (FAQ: \"PWM of <fan> was changed by third "
      "party!\": something else, the mainboard or another fan program, changes the speed, or the fan's driver keeps "
      "a virtual pwm) and controller.go (the check compares the pwm read with the one its measured map expects); "
      "drivers/hwmon/corsair-cpro.c (a pwm kept in per cent: written as DIV_ROUND_CLOSEST(val * 100, 255)); "
      f"{ABI} (pwmN_enable 1: manual, 2 and up: the chip's automatic control)")
def daemon_overridden(machine: Machine) -> Iterator[Hit]:
    """A daemon that logged reading back another pwm than it set: the fan is not on its curve alone (known). Where
    the pwm read is the one it set, only its own expectation differs (fan2go's map of what the driver reads back):
    nothing need be writing it (known, from the numbers it logged); within one per-cent step of it, a driver that
    keeps the duty in per cent rounds it (likely: the chip is not named in the log)."""
    for event in machine.events:
        if event.event != "overridden":
            continue
        facts: dict[str, float | str] = {"daemon": event.daemon, "fan": event.fan, **dict(event.values)}
        off = abs(float(facts["read"]) - float(facts["set"]))
        facts["how"] = "expectation" if off == 0 and "expected" in facts else \
            "rounding" if off <= PERCENT_STEP_COUNTS else "changed"
        yield Hit("daemon-overridden", (), "likely" if facts["how"] == "rounding" else "known", facts)


# a driver that keeps a duty in per cent (corsair-cpro.c: DIV_ROUND_CLOSEST(val * 100, 255), read back * 255 / 100)
# gives back what was set within one per-cent step, 2.55 of 255's counts
PERCENT_STEP_COUNTS = 2.0


TOP_NUMBERED = 7  # thinkpad-acpi: levels 0 (stop) to 7 (the highest regulated speed)


def _level(step: Decision) -> float | str:
    """A decision's level as a fact: its number, or the name thinkpad-acpi gives it."""
    return float(step.level) if step.level is not None else step.named


def _rank(step: Decision) -> int | None:
    """Where a decision's level stands among the numbered ones: full-speed above level 7; auto (the EC's own
    control) nowhere."""
    if step.level is not None:
        return step.level
    return TOP_NUMBERED + 1 if step.named in FULL_LEVELS else None


def _level_at(machine: Machine, celsius: float) -> int | None:
    """The highest level whose range holds ``celsius`` (thinkfan's levels overlap; rising, it takes the upper)."""
    holding = [lv.level for lv in machine.levels if lv.low_c <= celsius < lv.high_c]
    return max(holding) if holding else None
