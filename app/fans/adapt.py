"""The live readers' records as facts: a ``Fan`` (NVML, hwmon, the BMC, an EC, a cooler), a ``HostSensor`` and a
``GpuSample`` made into the wing's facts by their numbers and kinds alone, so a reader that already knows a format
(nvidia-smi -q, liquidctl, a ThinkPad's /proc) feeds the same rules. Where a capture's text was read into facts
directly (``app.fans.read``), those stand and the records of the same chip are not added again."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Literal

from ..core.fan import AirSensor, Fan
from ..core.model import GpuSample, HostSensor
from ..core.vocabulary import HEAT_REASONS, driver_of
from . import ectable
from .build import MAX_RPM, fans_of, invalid_celsius, judged_rpm, temperatures_of
from .chips import Chip, chip, controller_of, detected
from .facts import Controller, Curve, Decision, FanFact, GpuFact, Invalid, Level, Machine, Reading, Role, TempFact
from .gpus import gpus_of, loads_of
from .limits import with_limits
from .roles import role

# the hwmon name of an ACPI battery: its ACPI device's (BAT0, BAT1, BATT, BATC; some firmware's CMB0)
BATTERY = re.compile(r"BAT\w*|CMB\d")

_CONTROL: dict[str, Controller] = {"manual": "manual", "full-speed": "none"}


def source_key(source: str) -> tuple[str, str, str]:
    """(the temperature's key, its chip, its label) of a live fan's source: "GPU 0" is NVML's "nvidia/gpu0", "BMC
    Inlet Temp" the BMC's "bmc/Inlet Temp", "nct6798 CPUTIN" "nct6798/CPUTIN"."""
    gpu = source.removeprefix("GPU ")
    if gpu.isdigit():
        return f"nvidia/gpu{gpu}", "nvidia", source
    owner, _, label = source.partition(" ")
    owner = "bmc" if owner == "BMC" else owner
    return f"{owner}/{label}", owner, label


def fan_key(fan: Fan) -> tuple[str, str, str]:
    """(its fact's key, its chip, its label) of a live fan: "nvidia/gpu0 fan 0", "nct6798/CPU Fan", "bmc/FAN1"."""
    owner = "nvidia" if fan.gpu_index is not None and fan.chip.startswith("GPU ") else fan.chip
    label = fan.label or (f"gpu{fan.gpu_index} fan {fan.channel}" if owner == "nvidia" else f"fan{fan.channel}")
    return f"{owner}/{label}", owner, label


def fan_fact(fan: Fan) -> FanFact:
    """A live reader's fan as a fact: what it read, never what was judged of it (its state, alarm, rest), so a fan
    made into a fact again after the wing judged it is the same fact."""
    key, owner, label = fan_key(fan)
    entry = chip(owner)
    raw_rpm = fan.raw_rpm if fan.raw_rpm is not None else fan.rpm
    rpm, invalid = _speed(fan, entry, raw_rpm)
    controller = _CONTROL.get(fan.control) or controller_of(entry, None, fan.percent)
    return FanFact(key=key, chip=owner, label=label, rpm=rpm,
                   raw=f"{raw_rpm} RPM" if raw_rpm is not None else fan.read_error,
                   invalid=invalid, duty_percent=fan.percent,
                   target_rpm=float(fan.target_rpm) if fan.target_rpm is not None else None,
                   target_percent=fan.target_percent,
                   floor_percent=fan.floor_percent if fan.gpu_index is not None else None,  # NVML's minimum duty
                   min_rpm=float(fan.min_rpm) if fan.min_rpm is not None else None,
                   max_rpm=float(fan.max_rpm) if fan.max_rpm is not None else None,
                   divisor=fan.divisor,
                   fault=fan.fault, controller=controller, gpu=fan.gpu_index, status=fan.status,
                   pwm_enable=fan.pwm_enable, zero_rpm=fan.zero_rpm, off_target_s=fan.off_target_s, level=fan.level,
                   pump="pump" in label.lower(),
                   present=_present(fan, entry, label), supply_v=fan.supply_v,
                   follows=source_key(fan.source)[0] if fan.source and _how(fan) else None, follows_how=_how(fan))


def _speed(fan: Fan, entry: Chip, raw_rpm: int | None) -> tuple[float | None, Invalid | None]:
    """A live fan's speed as a fact, or None and why it is none, as a paste's would be judged."""
    rpm: float | None = float(fan.rpm) if fan.rpm is not None else None
    if raw_rpm is not None and raw_rpm in entry.no_pulses:
        return None, "no-pulses"
    if raw_rpm is not None and entry.speed_is_state:  # gpio-fan: the speed of the state it drives, not a count
        return None, "not-counted"
    if rpm is not None and (rpm > MAX_RPM or rpm < 0):
        return None, "over-range"
    if rpm is None and raw_rpm is not None:  # a value its reader would not take as a speed: why, as in a paste
        return None, judged_rpm(raw_rpm, entry.no_pulses, entry.error_values)[1]
    if fan.read_error is not None and rpm is None:
        return None, "error"
    return rpm, None


def _present(fan: Fan, entry: Chip, label: str) -> bool | None:
    """Whether a fan is on its connector as its reader says (liquidctl's initialization), else as its driver's label
    says (the chip table's), else not said."""
    return fan.detected if fan.detected is not None else detected(entry, label, fan.pwm_enable)


def _how(fan: Fan) -> Literal["declared", "learned"] | None:
    """How a live fan's source is known, where it is not a guess."""
    return "declared" if fan.source_from == "declared" else "learned" if fan.source_from == "learned" else None


def temp_fact(sensor: HostSensor) -> TempFact:
    return TempFact(key=f"{sensor.chip}/{sensor.label}", chip=sensor.chip, label=sensor.label,
                    celsius=sensor.temperature_c, raw=sensor.temperature_c, role=role(sensor.chip, sensor.label),
                    crit_c=sensor.critical_c)


def gpu_fans(gpus: Sequence[GpuSample], fans: Sequence[FanFact]) -> list[FanFact]:
    """A fan fact for each GPU whose backend gives its fan one duty and no fan record (the basic backend, rocm-smi's
    table): the same rules then judge it as any card's fan."""
    owned = {f.gpu for f in fans if f.gpu is not None}
    found = []
    for gpu in gpus:
        if gpu.fan_speed_percent is not None and gpu.index not in owned:
            owner = "nvidia" if gpu.vendor == "nvidia" else "amdgpu" if gpu.vendor == "amd" else gpu.vendor
            found.append(FanFact(key=f"{owner}/gpu{gpu.index} fan", chip=owner, label=f"gpu{gpu.index} fan",
                                 raw=f"{gpu.fan_speed_percent:.0f} %", duty_percent=gpu.fan_speed_percent,
                                 controller=chip(owner).controller, gpu=gpu.index))
    return found


def air_fact(air: AirSensor) -> TempFact:
    """A BMC's temperature (the air in, the air out, a CPU)."""
    kind: Role = air.role if air.role != "other" else role("bmc", air.label)
    return TempFact(key=f"bmc/{air.label}", chip="bmc", label=air.label, celsius=air.temperature_c,
                    raw=air.temperature_c, role=kind)


def followed(fans: Sequence[Fan]) -> list[TempFact]:
    """The temperatures live fans follow or are beside (a daemon's configured input, a learned source, one named
    like the fan), as facts: readings all, whether or not the fan follows them."""
    found = {}
    for fan in fans:
        if fan.source and fan.source_c is not None:
            key, owner, label = source_key(fan.source)
            invalid = invalid_celsius(owner, label, fan.source_c)  # a followed input at its ceiling is none
            found[key] = TempFact(key=key, chip=owner, label=label, celsius=None if invalid else fan.source_c,
                                  raw=fan.source_c, role=role(owner, label), invalid=invalid)
    return list(found.values())


def gpu_fact(gpu: GpuSample) -> GpuFact:
    """A live GPU as the fan rules see it: its name, temperature and fan, and whether it slows its clocks for heat
    (its own report that its cooling is at its limit). Its load (power, utilization) is the verdict's to weigh, not
    a fan fact, so a tick whose fans and temperatures stand still makes the same facts."""
    return GpuFact(index=gpu.index, name=gpu.name, temperature_c=gpu.temperature_c,
                   fan_percent=gpu.fan_speed_percent, fan_reported=not gpu.passively_cooled,
                   heat_slowdown=tuple(r for r in gpu.throttle_reasons or () if r in HEAT_REASONS),
                   slowdown_c=gpu.temperature_slowdown_c, reasons_read=gpu.throttle_reasons is not None)


def machine(readings: Sequence[Reading], fans: Sequence[Fan] = (), sensors: Iterable[HostSensor] = (),
            gpus: Iterable[GpuSample] = (), curves: Sequence[Curve] = (), decisions: Sequence[Decision] = (),
            levels: Sequence[Level] = (), air: Iterable[AirSensor] = ()) -> Machine:
    """One machine's facts: what its captures' text says, then what the live readers read of chips (and GPUs) the
    text did not name."""
    gpus = tuple(gpus)
    if not readings:  # a live machine: its readers' records alone
        gpu_facts = list(map(gpu_fact, gpus))
        live = list(map(fan_fact, fans))
        live = _on_inverted_outputs(live, curves)
        return Machine(tuple(live + gpu_fans(gpus, live)), tuple(_temperatures([], fans, sensors, air, gpu_facts)),
                       tuple(gpu_facts), 1, tuple(curves), tuple(decisions), tuple(levels))
    fan_facts = list(fans_of(readings))
    declared = {f"{f.chip}/fan{f.channel}" for f in fans if f.source_from == "declared" and f.control == "manual"}
    written = {d.drives for d in decisions if d.drives}  # a daemon logged writing a duty to this chip's fans
    fan_facts = [replace(f, controller="daemon") if f.key in declared or f.chip in written else f for f in fan_facts]
    # a chip the text read, and its driver where the text names two devices of it by their headers
    read_chips = {f.chip for f in fan_facts} | {driver_of(f.chip) for f in fan_facts}
    fan_facts += [f for f in map(fan_fact, fans) if f.chip not in read_chips]
    gpu_facts = list(gpus_of(readings))
    known = {g.index for g in gpu_facts}
    gpu_facts += [g for g in map(gpu_fact, gpus) if g.index not in known]
    fan_facts = _on_inverted_outputs(fan_facts, curves) + gpu_fans(gpus, fan_facts)
    temps = _temperatures(with_limits(temperatures_of(readings), readings), fans, sensors, air, gpu_facts)
    snapshots = 1 + max((r.snapshot for r in readings), default=0)
    return Machine(tuple(_with_tables(fan_facts, temps)), tuple(temps), tuple(gpu_facts), snapshots, tuple(curves),
                   tuple(decisions), tuple(levels), portable=any(BATTERY.fullmatch(r.chip or "") for r in readings),
                   loads=loads_of(readings))


def _on_inverted_outputs(fans: list[FanFact], curves: Sequence[Curve]) -> list[FanFact]:
    """Each fan a daemon's configuration drives through an inverted output (255 stops it: fancontrol's inverted mode,
    it87.rst's fix_pwm_polarity) with its duty as the fan's share of full speed, not the value its pwm holds."""
    inverted = [c for c in curves if c.inverted]
    return [replace(f, duty_percent=round(100.0 - f.duty_percent, 1))
            if f.duty_percent is not None and any(c.drives(f.key) for c in inverted) else f for f in fans]


def _with_tables(fans: list[FanFact], temps: list[TempFact]) -> list[FanFact]:
    """Each fan with what its embedded controller's fan table asks at the temperatures read, where one is read."""
    found = []
    for fan in fans:
        asked = ectable.asking(temps, fan.chip)
        found.append(replace(fan, table_percent=asked[0]) if asked is not None else fan)
    return found


def _temperatures(temps: list[TempFact], fans: Sequence[Fan], sensors: Iterable[HostSensor],
                  air: Iterable[AirSensor], gpus: Sequence[GpuFact]) -> list[TempFact]:
    """The text's temperatures, then the live readers' of chips the text did not name: the host's, the BMC's,
    those fans are known to follow, and each GPU's own (for its fan's rules)."""
    temp_chips = {t.chip for t in temps} | {driver_of(t.chip) for t in temps}
    temps += [t for t in map(temp_fact, sensors) if t.chip not in temp_chips]
    temps += [t for t in map(air_fact, air) if t.chip not in temp_chips]
    keys = {k.key for k in temps}
    temps += [t for t in followed(fans) if t.key not in keys and t.chip not in temp_chips]
    keys = {k.key for k in temps}
    for gpu in gpus:
        if gpu.temperature_c is not None and f"nvidia/gpu{gpu.index}" not in keys:
            temps.append(TempFact(key=f"nvidia/gpu{gpu.index}", chip="nvidia", label=f"GPU {gpu.index}",
                                  celsius=gpu.temperature_c, raw=gpu.temperature_c, role="gpu", history=gpu.history))
    return temps
