"""The rules of a paste's readings in turn (a loop of ``sensors``, ``watch``, several captures of one machine): a fan
at 0 in one reading and turning in another, one that stops and starts again, one whose speed rises and falls with
the temperature it follows. Registered in ``app.fans.rules`` like the others; each reads ``FanFact.speeds`` and
``TempFact.history``, one value a snapshot."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise

from .chips import chip
from .facts import FanFact, Machine, TempFact
from .rules import ABI, Hit, rest_below, rule, source_of, there, turning
from .values import parse

NEAR_REST_C = 10.0  # within this of where its controller stops a fan, a fan that cycles is at that threshold
SWING_RPM = 200.0  # a move of a fan's speed between two readings past this, and past SWING_SHARE of its fastest,
SWING_SHARE = 0.2  # is the fan changing speed, not a tachometer's jitter
SWING_POINTS = 15.0  # a duty (where no speed is read) moving this many points between two readings changes speed
SWING_C = 5.0  # a temperature moving this much between two readings moved with it


@rule("a fan at 0 in one reading, turning in another", 58, f"{ABI} (fanN_input); the paste's own readings in turn; "
      "for a controller that stops its fans while cool: amdgpu thermal.rst (zero-RPM), dell-smm-hwmon.rst")
def zero_then_turning(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        values = [v for s in fan.speeds if (v := parse(s)[0]) is not None]
        if len(values) >= 2 and values[0] == 0 and turning(fan) and there(fan):
            source = source_of(machine, fan)
            facts: dict[str, float | str] = {"source": source.key, "source_c": source.celsius or 0.0} if source \
                else {}
            then = source.history[0] if source is not None and source.history else None
            now = source.celsius if source is not None else None
            if then is not None and now is not None and chip(fan.chip).zero in ("rest", "rest-or-unreported") and \
                    then < rest_below(fan) and now > then:  # rested while cool, started as it warmed
                facts.update(rested="yes", then_c=then)
            yield Hit("zero-then-turning", (fan.key,), "known", facts)


@rule("a fan that stops and starts again", 59, f"{ABI} (fanN_input); the paste's own readings in turn; "
      "Documentation/gpu/amdgpu/thermal.rst (zero-RPM: the fan stops below a temperature and starts above it); NVML "
      "fan-stop; dell-smm-hwmon.rst")
def stops_and_starts(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        values = [v for s in fan.speeds if (v := parse(s)[0]) is not None]
        changes = sum(1 for a, b in pairwise(values) if (a == 0) != (b == 0))
        if changes < 3 or not there(fan):  # at least 0, turning, 0, turning (or the other way round)
            continue
        source = source_of(machine, fan)
        facts: dict[str, float | str] = {"changes": float(changes), "readings": float(len(values)),
                                         "top_rpm": max(values), "below_c": rest_below(fan)}
        if source is not None:
            facts.update(source=source.key, source_c=source.celsius or 0.0)
        rests = chip(fan.chip).zero in ("rest", "rest-or-unreported")
        near = source is not None and abs((source.celsius or 0.0) - rest_below(fan)) <= NEAR_REST_C
        facts["design"] = "rest" if rests else "other"
        yield Hit("stops-and-starts", (fan.key,), "likely" if rests and near else "possible", facts)


@rule("a fan that rises and falls with what it follows", 57, f"{ABI} (pwmN_auto_pointM_temp and _pwm: a curve's "
      "duty is a function of the temperature it follows; pwmN_auto_channels_temp); Documentation/hwmon/nct7802.rst "
      "and nct6775.c (step_up_time, step_down_time: the interval between successive duty increases or decreases, "
      "which slows how fast a curve follows); fancontrol(8) (the duty computed from the temperature each INTERVAL); "
      "system76/ec issue 480 (a CPU reports rapid jumps in temperature as a load starts, and a fan table following "
      "them runs the fans higher than the load needs); the link between the fan and the temperature is read from "
      "the paste's readings in turn")
def swings_with_source(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        if len(fan.speeds or fan.duties) < 3:
            continue  # a live fan, or a paste of one or two readings: no swing to see
        source = source_of(machine, fan)
        series = _series(fan, source) if source is not None else None
        moves = _moves(*series) if series is not None else None
        if moves is None or series is None or source is None:
            continue
        values, temps, unit = series
        declared = fan.follows is not None and fan.follows == source.key
        yield Hit("swings-with-source", (fan.key, source.key), "known" if declared else "likely",
                  {"low": min(values), "high": max(values), "unit": unit, "low_c": min(temps), "high_c": max(temps),
                   "moves": float(moves), "readings": float(len(values)), "source": source.key,
                   **({"card": "yes"} if chip(fan.chip).kind == "gpu" else {}),
                   **({"declared": "yes"} if declared else {})})


def _moves(speeds: list[float], temps: list[float], unit: str) -> int | None:
    """How many times the fan's speed moved between readings (past SWING_RPM and SWING_SHARE of its fastest; a
    duty, SWING_POINTS), where it both rose and fell and its source moved with it each time (the same way, by SWING_C
    or more); None where not."""
    least = max(SWING_RPM, SWING_SHARE * max(speeds)) if unit == "RPM" else SWING_POINTS
    steps = [(b - a, t2 - t1) for (a, b), (t1, t2) in zip(pairwise(speeds), pairwise(temps), strict=True)
             if abs(b - a) >= least]
    rose, fell = any(rpm > 0 for rpm, _ in steps), any(rpm < 0 for rpm, _ in steps)
    with_source = all(rpm * celsius > 0 and abs(celsius) >= SWING_C for rpm, celsius in steps)
    return len(steps) if rose and fell and with_source else None


def _series(fan: FanFact, source: TempFact) -> tuple[list[float], list[float], str] | None:
    """The fan's speed (its duty where no speed is read) and its source's temperature in each snapshot, three or
    more, both read in every one and the fan turning (asked to) in each, with the unit; None where not."""
    speeds = [parse(s)[0] for s in fan.speeds] if fan.speeds else list(fan.duties)
    temps = list(source.history)
    if len(speeds) < 3 or len(temps) != len(speeds) or not there(fan):
        return None
    turning_in_each = [v for v in speeds if v is not None and v > 0]
    read_in_each = [t for t in temps if t is not None]
    if len(turning_in_each) != len(speeds) or len(read_in_each) != len(temps):
        return None
    return turning_in_each, read_in_each, "RPM" if fan.speeds else "%"
