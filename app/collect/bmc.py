"""Server chassis fans and temperatures from the BMC, as ``ipmitool`` prints them.

Three listings share the ``|`` columns: ``sdr`` (name | reading | status), ``sdr elist`` and ``sdr type``
(name | sensor id | status | entity | reading) and ``sensor`` (name | value | unit | status | six thresholds). Status:
``ok``, ``ns`` (no sensor: an empty fan slot, a disabled probe), ``cr`` and ``nc`` (critical, non-critical: a
failed or straining fan). Fans read in RPM (Supermicro, Dell, OpenBMC) or in percent (HPE iLO, Lenovo XCC). An empty
slot is kept with the reason (``Fan.dead``); a critical one carries ``Fan.alarm``.

Temperatures are sorted by what a fan decision reads: the air coming in (Inlet, Ambient), the air going out
(Exhaust), the CPUs (by name, or Dell's bare "Temp" on entity 3, the processor), and the rest.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Callable, Sequence
from typing import Literal

from ..core.bounded import runner
from ..core.fan import MAX_RPM, AirSensor, Fan, checked
from ..core.jsonvalue import finite
from ..core.model import frozen_map
from ..core.record import record
from ..core.vocabulary import dead_temperature
from .sources import Reading as SourceReading

Role = Literal["inlet", "exhaust", "cpu", "other"]
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


@record
class Reading:
    """One line of a listing: its sensor, value and unit (None when there is no reading), status and entity."""

    name: str
    value: float | None
    unit: str | None
    status: str
    entity: str | None = None
    raw: str = ""  # the reading as printed ("0x08" for a discrete sensor)


def _value(text: str) -> tuple[float | None, str | None]:
    """``3400 RPM`` -> (3400.0, "RPM"); ``43.51 percent``; ``24 degrees C``; ``no reading``, ``Disabled``, ``0x08``
    (a discrete sensor) -> (None, None)."""
    words = text.split(None, 1)
    if not words or not _NUMBER.match(words[0]) or finite(float(words[0])) is None:
        return None, None
    return float(words[0]), words[1].strip() if len(words) > 1 else None


def parse(text: str) -> list[Reading]:
    """Every sensor line of an ``ipmitool sdr``, ``sdr elist``/``sdr type`` or ``sensor`` listing."""
    readings = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) < 3 or not cells[0] or line.startswith("#"):
            continue
        if len(cells) >= 10:  # sensor: name | value | unit | status | thresholds
            value = finite(float(cells[1])) if _NUMBER.match(cells[1]) else None
            readings.append(Reading(cells[0], value, cells[2] or None if value is not None else None,
                                    cells[3].lower(), raw=cells[1]))
        elif len(cells) == 5:  # elist: name | id | status | entity | reading
            value, unit = _value(cells[4])
            readings.append(Reading(cells[0], value, unit, cells[2].lower(), cells[3], raw=cells[4]))
        else:  # sdr: name | reading | status
            value, unit = _value(cells[1])
            readings.append(Reading(cells[0], value, unit, cells[2].lower(), raw=cells[1]))
    return readings


# what ipmitool prints in place of a reading for a sensor it cannot read (an empty slot, a disabled probe); a
# discrete sensor prints its state instead ("0x00", "Fully Redundant", "State Deasserted"): that is no fan
_NO_READING = frozenset({"", "no reading", "disabled", "na", "n/a", "not available", "unavailable"})


def _is_fan(reading: Reading) -> bool:
    return reading.unit in ("RPM", "percent") or (reading.value is None and reading.raw.strip().lower() in _NO_READING
                                                   and bool(re.search(r"fan", reading.name, re.IGNORECASE)))


def fans(readings: Sequence[Reading]) -> tuple[Fan, ...]:
    """The chassis fans of a listing (a fan sensor of another kind, "Fans | 0x00", is a status, not a fan); a name
    listed again (a loop or ``watch`` of the command) is one fan, as its last reading shows it; two sensors of one
    name under two entities (elist's entity column) stay two fans."""
    latest = {(r.name, r.entity): r for r in readings if _is_fan(r) and not r.name.lower().rstrip().endswith("fans")}
    found = []
    for n, r in enumerate(latest.values()):
        unsupported: dict[str, str] = {}
        raw = round(r.value) if r.unit == "RPM" and r.value is not None else None
        rpm = checked(raw, 0, MAX_RPM, "the BMC's fan speed", unsupported, "rpm")
        percent = checked(r.value if r.unit == "percent" else None, 0.0, 100.0, "the BMC's fan duty", unsupported,
                          "percent")
        dead = "no reading: no fan in this slot (or the BMC disabled it)" if r.value is None else None
        # the BMC's own status is a fact read: cr (critical) and nr (non-recoverable) are its fault flags (IPMI v2.0,
        # threshold sensors); what a status means for the fan is the fan wing's to say
        found.append(Fan(id=f"bmc:{r.name}", chip="bmc", channel=n + 1, label=r.name, rpm=rpm, percent=percent,
                         raw_rpm=raw if rpm is None else None,  # a value that is no speed: kept, for the wing
                         control="automatic", controller="the BMC", status=r.status or None,
                         fault=True if r.status in ("cr", "nr") and dead is None else None,
                         dead=dead, unsupported=frozen_map(unsupported)))
    return tuple(found)


def role(reading: Reading) -> Role:
    name = reading.name.lower()
    if "inlet" in name or "ambient" in name:
        return "inlet"
    if "exhaust" in name:
        return "exhaust"
    if "cpu" in name or (name.strip() == "temp" and (reading.entity or "").startswith("3.")):
        return "cpu"
    return "other"


def temperatures(readings: Sequence[Reading]) -> list[tuple[Role, Reading]]:
    """The temperatures that read (°C), each with its role; Dell's two bare "Temp" CPUs are told apart by entity. A
    probe that reads 0 °C or its ceiling is no reading (``dead_temperature``)."""
    return [(role(r), r) for r in readings
            if r.unit == "degrees C" and r.value is not None and dead_temperature(r.value) is None]


def left_out(readings: Sequence[Reading]) -> dict[str, str]:
    """The temperatures a listing has but that are no reading, with why: a probe at 0 °C or its ceiling, a CPU
    temperature reported only as a discrete state ("CPU Temp | 0x08": Supermicro X9) ("BMC name" -> why)."""
    out = {}
    for r in readings:
        if r.unit == "degrees C" and r.value is not None and (why := dead_temperature(r.value)) is not None:
            out[f"BMC {r.name}"] = why
        elif r.value is None and re.search(r"\btemp", r.name, re.IGNORECASE) and r.raw.lower().startswith("0x"):
            out[f"BMC {r.name}"] = f"reported only as a state ({r.raw}), not in degrees"
    return out


MAX_FANS = 256  # more fan lines than any chassis has is a listing gone wrong: the rest are not read
BmcRun = Callable[[], str]


@record
class BmcSource:
    """The BMC as a fan source (``app.collect.sources``): ``run`` answers a listing (``ipmitool sdr elist``, or a
    capture), read every ``period_s``; its chassis fans and its air temperatures."""

    run: BmcRun
    period_s: float = 10.0
    timeout_s: float = 12.0
    key: str = "bmc"
    name: str = "the BMC (ipmitool sdr elist)"

    def read(self) -> SourceReading:
        readings = parse(self.run())
        found = fans(readings)
        problem = None
        if len(found) > MAX_FANS:
            found, problem = found[:MAX_FANS], f"{len(found):,} fan lines: only the first {MAX_FANS} are read"
        air = tuple(AirSensor(r_role, r.name, r.value) for r_role, r in temperatures(readings) if r.value is not None)
        return SourceReading(fans=found, air=air, left_out=frozen_map(left_out(readings)), problem=problem)


def ipmitool(timeout_s: float, command: str = "") -> BmcRun | str:
    """A runner of ``ipmitool sdr elist``, or of ``command`` (FANWHY_BMC_COMMAND: ``ipmitool -I lanplus -H …``),
    bounded in time and output; or why there is none (no tool, no IPMI device)."""
    if command:
        argv = shlex.split(command)
        if not argv or shutil.which(argv[0]) is None:
            return f"no BMC read: {argv[0] if argv else 'FANWHY_BMC_COMMAND'} is not installed (FANWHY_BMC_COMMAND)"
    else:
        binary = shutil.which("ipmitool")
        if binary is None:
            return "no BMC read: ipmitool is not installed"
        if not any(os.path.exists(p) for p in ("/dev/ipmi0", "/dev/ipmi/0", "/dev/ipmidev/0")):
            return ("no BMC read: no IPMI device (/dev/ipmi0): not a server with a BMC, or the ipmi_si module is not "
                    "loaded")
        argv = [binary, "sdr", "elist"]
    return runner(argv, timeout_s)
