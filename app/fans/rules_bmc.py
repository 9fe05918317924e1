"""The rule of a server BMC's fan over several readings of one paste (a ``watch`` or a loop of ``ipmitool sensor``):
a fan the BMC counts failing in some readings and reads turning in others. Registered in ``app.fans.rules`` like
the others."""

from __future__ import annotations

from collections.abc import Iterator

from .facts import FanFact, Machine
from .rules import FAILING_STATUS, Hit, rule, there
from .values import parse

# under this a fan turns slower than the lowest lower-critical threshold a Supermicro BMC sets by default (its
# listings show 300, 500 and 700 RPM for the lower non-recoverable, critical and non-critical thresholds)
QUIET_RPM = 500.0
RAMPED = 2.0  # the others turning at least this many times their slowest reading after it: they were raised


@rule("a BMC fan failing in some readings", 89, "IPMI v2.0 specification, sensor thresholds (a reading at or below a "
      "lower threshold asserts its event; back above, deasserts); ipmitool(1) sensor (the status column: ok, cr, nr, "
      "lcr, lnr); Supermicro's BMC runs every fan at full speed while one is failing")
def failing_at_times(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        if fan.chip != "bmc" or not there(fan) or len(fan.statuses) < 2:
            continue
        speeds = [parse(s)[0] for s in fan.speeds]
        failing = [n for n, s in enumerate(fan.statuses) if s in FAILING_STATUS]
        turning = [v for n, v in enumerate(speeds) if n not in failing and v]
        if not failing or not turning:
            continue
        slowest = min(turning)
        facts: dict[str, float | str] = {"failing": len(failing), "readings": len(fan.statuses), "slowest": slowest,
                                         "fastest": max(turning), "status": fan.statuses[failing[0]]}
        raised = _others_raised(machine, fan, failing[0])
        if raised:
            facts.update(raised_from=raised[0], raised_to=raised[1],
                         others=sum(1 for f in machine.fans if f.chip == "bmc" and f is not fan))
        if slowest < QUIET_RPM:
            facts["quiet"] = "yes"
        yield Hit("bmc-failing-at-times", (fan.key,), "likely" if slowest < QUIET_RPM else "possible", facts)


def _others_raised(machine: Machine, fan: FanFact, first: int) -> tuple[float, float] | None:
    """(the slowest, the fastest) the BMC's other fans read from the first failing reading on, where the fastest is
    RAMPED times the slowest or more: the others ran faster after the fan was counted failing."""
    others = [v for f in machine.fans if f.chip == "bmc" and f is not fan
              for v in (parse(s)[0] for s in f.speeds[first:]) if v]
    if others and max(others) >= RAMPED * min(others):
        return min(others), max(others)
    return None
