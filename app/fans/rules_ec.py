"""The rules of an embedded controller's own fan control: its fan table, where a capture shows it (the Chrome EC's,
through ``ectool temps all``): which sensor the fans answer to and what it asks; and its own reading of the CPU, which
its fan follows, far above the CPU's, or far below a hot one. Registered in ``app.fans.rules`` like the others."""

from __future__ import annotations

from collections.abc import Iterator

from ..core.finding import FindingKind
from . import ectable
from .chips import chip
from .facts import FanFact, Machine, TempFact
from .roles import ec_own_cpu
from .rules import HOT_C, Hit, hottest_of, rule, there, turning

# An EC reads the CPU's own die sensors (PECI, SB-TSI), as coretemp and k10temp do: two reads of one part apart by
# this much are not one moment of a burst (a package moves 10-20 °C within a second): one of them is wrong
MISREAD_C = 30.0

_SOURCE = ("Chrome EC common/thermal.c (thermal_control: every fan is asked for the highest of each sensor's "
           "thermal_fan_percent between its fan_off and fan_max), common/fan.c (fan_percent_to_rpm: 0 turns the fans "
           "off, 1-100 runs them from their lowest speed up; a board's own steps, CONFIG_FAN_RPM_CUSTOM), ectool's "
           "temps all (the ratio it prints is that share)")


@rule("an embedded controller's fan table", 63, _SOURCE)
def ec_table(machine: Machine) -> Iterator[Hit]:
    for owner in dict.fromkeys(t.chip for t in machine.temperatures if t.fan_max_c is not None):
        asked = ectable.asking(machine.temperatures, owner)
        if asked is None:
            continue
        percent, sensor = asked
        in_table = [t for t in machine.temperatures if t.chip == owner and ectable.share(t) is not None]
        facts: dict[str, float | str] = {"percent": percent, "sensor_c": sensor.celsius or 0.0,
                                         "fan_off_c": sensor.fan_off_c or 0.0, "fan_max_c": sensor.fan_max_c or 0.0,
                                         "sensors": len(in_table)}
        # the stock engine's share is the EC's own arithmetic on what it reads: likely, since a board may map it to
        # its own steps or replace the engine (CONFIG_CUSTOM_FAN_CONTROL), which a capture does not show
        yield Hit("ec-table", (sensor.key,), "likely", facts)


@rule("an embedded controller whose CPU reads nothing", 87, "thinkpad-acpi.rst; the EC's fan table is indexed by "
      "its own CPU reading (system76/ec src/board/system76/common/fan.c); where the EC reads another CPU sensor of "
      "its own, which one its curve follows is not known, and nothing is said; a fan that turns all the same does not "
      "follow the CPU: system76/ec's peci.c runs it at 50 % when its read fails")
def ec_cpu_unread(machine: Machine) -> Iterator[Hit]:
    read = {t.chip for t in machine.temperatures if t.role == "cpu" and t.celsius is not None}  # read elsewhere
    for temp in (t for t in machine.temperatures if t.chip not in read):
        if chip(temp.chip).kind == "ec" and temp.role == "cpu" and temp.invalid and temp.raw is not None:
            fans = [f.key for f in machine.fans if f.chip == temp.chip]
            yield Hit("ec-cpu-unread", (temp.key, *fans), "likely", _unread_facts(machine, temp))


def _unread_facts(machine: Machine, temp: TempFact) -> dict[str, float | str]:
    """The EC's no-reading, the CPU's own hottest reading, its fan's speed, and the duty its firmware runs the fan at
    for a CPU it cannot read, where the table knows it and the fan turns."""
    hot = hottest_of([t for t in machine.temperatures if t.role == "cpu"])
    rpm = next((f.rpm for f in machine.fans if f.chip == temp.chip and f.rpm is not None), -1.0)
    facts: dict[str, float | str] = {"raw_c": temp.raw or 0.0, "fan_rpm": rpm,
                                     **({"other": hot.key, "other_c": hot.celsius or 0.0} if hot else {})}
    failsafe = chip(temp.chip).unread_cpu_duty
    if rpm > 0 and failsafe is not None:
        facts["failsafe"] = failsafe
    return facts


_OWN_CURVE = ("system76/ec src/board/system76/common/peci.c (the fan's duty is fan_duty(peci_temp): the EC's own CPU "
              "reading) and acpi.c (EC RAM 0x07: peci_temp, which system76_acpi reads as CPU temp); thinkpad-acpi.rst "
              "(the EC's CPU sensor); Documentation/hwmon/coretemp.rst and k10temp.rst (the CPU's own sensors)")


def _apart(machine: Machine, below: bool) -> Iterator[tuple[TempFact, TempFact, list[FanFact]]]:
    """Each EC's own CPU reading MISREAD_C or more above (or below) the hottest of the CPU's own sensors, with that
    reading and the EC's fans that turn (above: they run for it) or that are there (below: slow or stopped)."""
    own = hottest_of([t for t in machine.temperatures if chip(t.chip).kind == "cpu" and t.celsius is not None])
    if own is None or own.celsius is None or (below and own.celsius < HOT_C):
        return
    for temp in machine.temperatures:
        gap = (own.celsius - temp.celsius if below else temp.celsius - own.celsius) if temp.celsius is not None else 0.0
        if ec_own_cpu(temp.chip, temp.label) and gap >= MISREAD_C:
            fans = [f for f in machine.fans if f.chip == temp.chip and (there(f) if below else turning(f))]
            if fans:
                yield temp, own, fans


def _gap_hit(kind: FindingKind, temp: TempFact, own: TempFact, fans: list[FanFact]) -> Hit:
    """Likely where the EC's own source shows its fan follows that reading; elsewhere an EC's table is not
    published: possible."""
    documented = chip(temp.chip).own_cpu_curve
    return Hit(kind, (temp.key, *(f.key for f in fans)), "likely" if documented else "possible",
               {"ec_c": temp.celsius or 0.0, "other": own.key, "other_c": own.celsius or 0.0,
                "rpm": max(f.rpm or 0.0 for f in fans), "documented": "yes" if documented else "no"})


@rule("an embedded controller's CPU reading far below a hot CPU's", 86, _OWN_CURVE)
def ec_cpu_low(machine: Machine) -> Iterator[Hit]:
    """The EC's own CPU reading far under a CPU past HOT_C: a fan that follows the EC's reading is asked for the
    cooling of a cooler CPU, whatever its speed now."""
    for temp, own, fans in _apart(machine, below=True):
        yield _gap_hit("ec-cpu-low", temp, own, fans)


@rule("an embedded controller's CPU reading far above the CPU's", 84, _OWN_CURVE)
def ec_cpu_misread(machine: Machine) -> Iterator[Hit]:
    for temp, own, fans in _apart(machine, below=False):  # its fan turns for heat the CPU does not have
        yield _gap_hit("ec-cpu-misread", temp, own, fans)
