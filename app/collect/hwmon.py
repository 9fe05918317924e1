"""Fans through the kernel's hwmon interface (``/sys/class/hwmon/hwmon*``): board headers (nct67xx, it87), laptops
(thinkpad, dell_smm) and GPUs (amdgpu), each read with its driver's meaning.

Per channel N: ``fanN_input`` (RPM), ``fanN_target``, ``fanN_min``/``fanN_max``, ``fanN_label``; the duty ``pwmN``
(0-255; a dual-fan ThinkPad's one pwm1 drives both of its fans, ``Chip.shared_pwm``); who controls it,
``pwmN_enable`` (0 full speed, 1 manual, 2 and up automatic, with the driver's own name for each mode); what it
follows, ``pwmN_temp_sel`` (nct6775 family) or ``pwmN_auto_channels_temp`` (a bitfield); and its curve,
``pwmN_auto_pointM_temp``/``_pwm``. amdgpu adds ``device/gpu_od/fan_ctrl``: the minimum duty and zero-RPM.

A channel that cannot be a fan is kept with the reason (``Fan.dead``) instead of counted: a board header at 0 RPM
(nothing plugged in, or a fan the BMC drives), 65535 RPM (a counter with no pulses), a disabled or faulted channel.
Temperatures follow the same rule (``app.core.vocabulary.dead_temperature``): an open thermistor reads -70, 0 or
127 °C.
Units as the kernel documents them: millidegrees Celsius, RPM, pwm 0-255.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Sequence
from pathlib import Path

from ..core.fan import MAX_RPM, Fan, checked
from ..core.model import HostSensor, frozen_map
from ..core.record import record
from ..core.vocabulary import dead_temperature, pwm_percent
from ..fans.chips import chip, detected, fan_duty, not_a_fan
from ..fans.control_words import pwm_control, zero_rpm_said
from ..fans.limits import own_limit
from ..fans.roles import ec_own_cpu
from ..vendors.sysfs import asleep, chip_names, read_int, read_text
from .sources import Reading

NO_PULSES_RPM = 65535  # a 16-bit counter that saw no pulses (the hwmon drivers' placeholder)


def _may_stop(chip_name: str) -> bool:
    """A chip whose 0 RPM can be a fan at rest (a card's zero-RPM, a laptop's EC), not an empty header: the chip
    table's (``app.fans.chips``)."""
    return chip(chip_name).zero in ("rest", "rest-or-unreported")


def temp_labels(chip_dir: Path) -> dict[int, str]:
    """Each temperature input's label (``tempN`` where it has none), numbered from the second where inputs share one
    (dell_smm labels its sensors by type: "Other" twice is two sensors, "Other" and "Other #2")."""
    labels = _numbered({n: read_text(chip_dir / f"temp{n}_label") for n in _numbers(chip_dir, r"temp(\d+)_input")})
    return {n: label or f"temp{n}" for n, label in labels.items()}


def _temperature(chip_dir: Path, index: int, labels: dict[int, str]) -> tuple[str, float | None]:
    milli = read_int(chip_dir / f"temp{index}_input")
    return labels.get(index, f"temp{index}"), milli / 1000.0 if milli is not None else None


def _source(chip_dir: Path, pwm: str, labels: dict[int, str]) -> tuple[str | None, float | None]:
    """The temperature a pwm declares it follows: ``temp_sel`` (an index), else the lowest bit of
    ``auto_channels_temp`` (bit 0 is temp1)."""
    index = read_int(chip_dir / f"{pwm}_temp_sel")
    if index is None:
        channels = read_int(chip_dir / f"{pwm}_auto_channels_temp")
        index = (channels & -channels).bit_length() if channels else None
    if not index:
        return None, None
    return _temperature(chip_dir, index, labels)


def _curve(chip_dir: Path, pwm: str) -> tuple[tuple[float, float], ...]:
    points = []
    for point in range(1, 11):
        name = f"{pwm}_auto_point{point}"
        temp, duty = read_int(chip_dir / f"{name}_temp"), read_int(chip_dir / f"{name}_pwm")
        if temp is None or duty is None:
            break
        points.append((temp / 1000.0, pwm_percent(duty)))
    return tuple(points)


def _gpu_od(chip_dir: Path, name: str) -> int | None:
    """A value of amdgpu's ``device/gpu_od/fan_ctrl/<name>``: a header line, the value, then its range."""
    text = read_text(chip_dir / "device" / "gpu_od" / "fan_ctrl" / name)
    if text is None:
        return None
    for line in text.splitlines()[1:]:
        word = line.strip().split(" ")[0]
        if word.lstrip("-").isdigit():
            return int(word)
    return None


def _numbers(chip_dir: Path, pattern: str) -> list[int]:
    """The channel numbers of the files whose whole name matches ``pattern`` (one group: the number)."""
    return sorted(int(m.group(1)) for p in chip_dir.iterdir() if (m := re.fullmatch(pattern, p.name)))


def read_chip(chip_dir: Path, name: str | None = None, temps: dict[int, str] | None = None) -> tuple[Fan, ...]:
    """The fans of one hwmon chip directory, named ``name`` (``chip_names``: its driver's, or with its device's
    address where a driver has two devices) or by its ``name`` file; ``temps`` its temperatures' labels
    (``temp_labels``), read here where not given."""
    temps = temp_labels(chip_dir) if temps is None else temps
    named = name or read_text(chip_dir / "name") or chip_dir.name
    inputs = _numbers(chip_dir, r"fan(\d+)_input")
    pwms = _numbers(chip_dir, r"pwm(\d+)")
    labels = _numbered({n: read_text(chip_dir / f"fan{n}_label") for n in {*inputs, *pwms}})  # read once a tick
    channels = [n for n in inputs if not not_a_fan(labels[n])]  # a flow or pressure in a fan channel is no fan
    shared = len(pwms) == 1 and chip(named).shared_pwm  # pwmN drives fanN's header, but a ThinkPad's one level
    fans = []
    for n in sorted({*channels, *pwms}):  # a pwm output with no tachometer is a fan whose speed is not counted
        pwm = f"pwm{n}" if n in pwms else (f"pwm{pwms[0]}" if shared else None)
        fans.append(_fan(chip_dir, named, n, pwm, labels[n], temps))
    return tuple(fans)


def _numbered(labels: dict[int, str | None]) -> dict[int, str | None]:
    """Each channel's label, where channels share one numbered from the second ("Processor Fan #2"): dell_smm labels
    a fan by its type (dell-smm-hwmon.rst), so a Dell with two CPU fans labels both "Processor Fan", and each fan is
    its own (its fact, its state, its finding)."""
    times: dict[str, int] = {}
    numbered: dict[int, str | None] = {}
    for n in sorted(labels):
        label = labels[n]
        if label:
            times[label] = times.get(label, 0) + 1
            label = label if times[label] == 1 else f"{label} #{times[label]}"
        numbered[n] = label
    return numbered


def _fan(chip_dir: Path, name: str, n: int, pwm: str | None, label: str | None, temps: dict[int, str]) -> Fan:
    """Channel ``n`` as read: its values and what its chip's driver documents them to mean (a 65535 of a chip that
    stops its fans is a counter at 0; a target that echoes the input is no target). What the fan is doing (at rest,
    stalled, failed) is the fan wing's to judge (``app.fans.judged``), from these facts."""
    unsupported: dict[str, str] = {}
    entry = chip(name)
    raw_rpm = read_int(chip_dir / f"fan{n}_input")
    rpm = _rpm(name, raw_rpm, unsupported)
    enable = read_int(chip_dir / f"{pwm}_enable") if pwm else None
    duty = _pwm(chip_dir, name, pwm, enable, unsupported)
    percent = pwm_percent(duty) if duty is not None else None
    if raw_rpm is None:
        unsupported["rpm"] = _no_tachometer(chip_dir, n)
    control, controller = pwm_control(name, enable)
    source, source_c = _source(chip_dir, pwm, temps) if pwm else (None, None)
    curve = _curve(chip_dir, pwm) if pwm else ()
    target = read_int(chip_dir / f"fan{n}_target")
    if entry.target_echoes and target is not None:  # amdgpu fills it from the same reading as fan1_input
        target, unsupported["target_rpm"] = None, f"{name}'s fan{n}_target repeats fan{n}_input: it is not a target"
    floor = curve[0][1] if curve else None
    zero_rpm = None
    if (chip_dir / "device" / "gpu_od" / "fan_ctrl").is_dir():
        floor, zero_rpm = _overdrive(chip_dir, floor)
        controller = zero_rpm_said(controller) if zero_rpm else controller
    lowest = _lowest(rpm, duty, control)
    if lowest is not None:
        floor = 0.0
    low, high = _limits(chip_dir, name, n, unsupported)
    present = detected(entry, label or "", enable)
    return Fan(id=f"hwmon:{name}/fan{n}", chip=name, channel=n, label=label, rpm=rpm,
               percent=percent, target_rpm=target, min_rpm=low, floor_rpm=lowest,
               max_rpm=high, divisor=read_int(chip_dir / f"fan{n}_div"),
               floor_percent=floor, control=control, controller=controller,
               source=source, source_c=source_c, curve=curve, pwm_enable=enable, zero_rpm=zero_rpm,
               fault=True if read_int(chip_dir / f"fan{n}_fault") == 1 else None,
               raw_rpm=raw_rpm, dead=_dead(chip_dir, name, n, rpm, present), detected=present,
               unsupported=frozen_map(unsupported))


def _rpm(name: str, raw_rpm: int | None, unsupported: dict[str, str]) -> int | None:
    """A tachometer's value as a speed: on a fan that may stop, a counter with no pulses is a fan at 0 (elsewhere a
    dead channel, kept raw); none where its chip states the speed of the state it drives rather than counting it
    (gpio-fan), or where it is not a speed, with why in ``unsupported``."""
    entry = chip(name)
    if raw_rpm is not None and raw_rpm in (*entry.no_pulses, NO_PULSES_RPM) and _may_stop(name):
        return 0
    if raw_rpm == NO_PULSES_RPM:
        return raw_rpm
    if raw_rpm is not None and entry.speed_is_state:
        unsupported["rpm"] = f"{name} states the speed of the state it drives the fan in ({raw_rpm} RPM): it counts " \
            "nothing"
        return None
    return checked(raw_rpm, 0, MAX_RPM, "the tachometer", unsupported, "rpm")


def _pwm(chip_dir: Path, name: str, pwm: str | None, enable: int | None, unsupported: dict[str, str]) -> int | None:
    """The raw duty (0-255) of a fan's pwm output, None where it has none or where in its mode its chip's pwm is not
    the fan's level (a ThinkPad's pwm1 under its EC: the level kept for manual control), with why in ``unsupported``."""
    if pwm is None:
        unsupported["percent"] = "no pwm output for this fan (the chip only counts its speed)"
        return None
    duty = checked(read_int(chip_dir / pwm), 0, 255, pwm, unsupported, "percent")
    if duty is not None and fan_duty(chip(name), enable, float(duty)) is None:
        unsupported["percent"] = f"{name}'s {pwm} is the fan's level only under manual control (pwm_enable 1)"
        return None
    return duty


def _no_tachometer(chip_dir: Path, n: int) -> str:
    if (chip_dir / f"fan{n}_input").exists():
        return f"fan{n}_input holds no number the kernel writes: not a reading"
    return "no tachometer read for this output"


def _limits(chip_dir: Path, name: str, n: int, unsupported: dict[str, str]) -> tuple[int | None, int | None]:
    """fanN_min and fanN_max, unless its driver shows there the lowest and highest speeds it has read (no limits)."""
    low, high = read_int(chip_dir / f"fan{n}_min"), read_int(chip_dir / f"fan{n}_max")
    if chip(name).extremes_seen and (low, high) != (None, None):
        unsupported["max_rpm"] = f"{name}'s fan{n}_min and fan{n}_max are the speeds read since it loaded: not limits"
        return None, None
    return low, high


def _lowest(rpm: int | None, duty: int | None, control: str) -> int | None:
    """A fan asked by hand for 0 % that still turns: that speed is its lowest (a blower with no fan-stop)."""
    return rpm if duty == 0 and control == "manual" and rpm and rpm != NO_PULSES_RPM else None


def _overdrive(chip_dir: Path, floor: float | None) -> tuple[float | None, bool | None]:
    """amdgpu's overdrive fan settings (``device/gpu_od/fan_ctrl``): the minimum duty while the fan runs (its floor),
    and whether zero-RPM is on (None where the card has no such file)."""
    minimum_pwm = _gpu_od(chip_dir, "fan_minimum_pwm")
    zero = _gpu_od(chip_dir, "fan_zero_rpm_enable")
    return (float(minimum_pwm) if minimum_pwm is not None else floor), (zero == 1 if zero is not None else None)


def _dead(chip_dir: Path, name: str, n: int, rpm: int | None, present: bool | None) -> str | None:
    """Why channel ``n`` cannot be a fan, or None. A fault the driver flags is a fan that failed, and a 0 on a
    connector its device detects a fan on (its label says so) a fan that does not turn: neither is a channel to
    leave out (the fan wing says them)."""
    if read_int(chip_dir / f"fan{n}_enable") == 0 and chip(name).kind != "gpu":  # amdgpu's fan1_enable is not this
        return "disabled (fan_enable 0)"
    if read_int(chip_dir / f"fan{n}_fault") == 1:
        return None
    if rpm == NO_PULSES_RPM:
        return "65535 RPM: the counter saw no pulses (a stopped fan, or none)"
    if rpm == 0 and not _may_stop(name) and not present:
        # a server board's Super-I/O may read headers its BMC wires elsewhere; a board firmware's own reading (WMI)
        # and any other kind of chip has no BMC behind it to name
        return "0 RPM: no fan on this header" + (" (or one the BMC drives)" if chip(name).kind == "superio" else "")
    return None


def chips(sys_root: str | Path = "/sys") -> list[Path]:
    """The hwmon chip entries under ``sys_root``, in the kernel's order (hwmon2 before hwmon10; a name that is not
    ``hwmon`` and digits last). What each is, a folder or not, is for its reader to find out."""
    base = Path(sys_root) / "class" / "hwmon"
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    found = [base / n for n in names if n.startswith("hwmon")]
    return sorted(found, key=lambda p: int(p.name[5:]) if re.fullmatch(r"[0-9]+", p.name[5:]) else 1 << 30)


def awake(chip_dir: Path) -> bool:
    """False for the chip of a runtime-suspended device (a laptop's sleeping amdgpu): reading its sensors would wake
    it, and its fan with it."""
    return not asleep(chip_dir / "device")


@record
class ChipSource:
    """One hwmon chip as a fan source (``app.collect.sources``): its fans and temperatures, every ``period_s``. A
    chip that vanished, loops or blocks fails alone."""

    chip_dir: Path
    period_s: float = 5.0
    timeout_s: float = 3.0
    as_name: str | None = None  # its name where its driver has two devices (``chip_names``); else its name file's

    @property
    def key(self) -> str:
        return self.chip_dir.name

    @property
    def name(self) -> str:
        return f"hwmon chip {self.chip_dir.name}"

    def read(self) -> Reading:
        if not self.chip_dir.is_dir():
            raise OSError(f"{self.chip_dir} is not a chip folder (gone, a loop, or not a folder)")
        if not awake(self.chip_dir):
            return Reading()
        temps = temp_labels(self.chip_dir)  # read once a tick, for its temperatures and the ones its fans follow
        found, left_out, names = chip_temperatures(self.chip_dir, self.as_name, temps)
        return Reading(fans=read_chip(self.chip_dir, self.as_name, temps), temperatures=found, left_out=left_out,
                       names=names)


def read_fans(sys_root: str | Path = "/sys") -> tuple[Fan, ...]:
    """Every fan under ``sys_root``/class/hwmon, chip by chip in the kernel's order (a sleeping device's are not
    read; a chip that cannot be read is skipped)."""
    fans: list[Fan] = []
    named = chip_names(sys_root)
    for chip_dir in chips(sys_root):
        with contextlib.suppress(OSError):
            fans.extend(ChipSource(chip_dir, as_name=named.get(chip_dir.name)).read().fans)
    return tuple(fans)


def read_temperatures(sys_root: str | Path = "/sys") -> tuple[HostSensor, ...]:
    """Every temperature under ``sys_root``/class/hwmon that reads a real value (``judged_temperatures``)."""
    return judged_temperatures(sys_root)[0]


def judged_temperatures(sys_root: str | Path = "/sys") -> tuple[tuple[HostSensor, ...], dict[str, str]]:
    """The temperatures under ``sys_root``/class/hwmon that read real values, and those left out ("chip label" ->
    why; ``chip_temperatures``), chip by chip; a chip that cannot be read is one reason, not the end of the rest."""
    found: list[HostSensor] = []
    left_out: dict[str, str] = {}
    named = chip_names(sys_root)
    for chip_dir in chips(sys_root):
        try:
            reading = ChipSource(chip_dir, as_name=named.get(chip_dir.name)).read()
        except OSError as error:
            left_out[chip_dir.name] = f"not read: {error}"
            continue
        found.extend(reading.temperatures)
        left_out.update(reading.left_out)
    return apart(found, left_out), left_out


def chip_temperatures(chip_dir: Path, name: str | None = None, temps: dict[int, str] | None = None
                      ) -> tuple[tuple[HostSensor, ...], dict[str, str], dict[str, str]]:
    """The temperatures of one chip that read real values, with their label, warning (``_max``) and critical
    limits; those left out, "chip label" -> why: an open thermistor's -70, 0 or 127 °C and up, or a placeholder's
    -1 (``dead_temperature``), a reading at or above its own critical limit of 100 °C or more, an input the driver
    marks faulted (``tempN_fault``); and each input's name, "chip tempN" -> "chip label"."""
    found: list[HostSensor] = []
    left_out: dict[str, str] = {}
    names: dict[str, str] = {}
    chip = name or read_text(chip_dir / "name") or chip_dir.name
    labels = temp_labels(chip_dir) if temps is None else temps
    for n in sorted(labels):
        label, value = _temperature(chip_dir, n, labels)
        names[f"{chip} temp{n}"] = f"{chip} {label}"
        if value is None:
            continue
        high, critical = read_int(chip_dir / f"temp{n}_max"), read_int(chip_dir / f"temp{n}_crit")
        sensor = HostSensor(chip=chip, label=label, temperature_c=value,
                            high_c=high / 1000.0 if high and high > 0 else None,
                            critical_c=critical / 1000.0 if critical and critical > 0 else None)
        why = dead_temperature(value) or _past_critical(sensor)
        if why is None and read_int(chip_dir / f"temp{n}_fault") == 1:
            why = "the driver reports a fault on this input"
        if why is not None:
            left_out[f"{chip} {label}"] = why
        else:
            found.append(sensor)
    return tuple(found), left_out, names


def _past_critical(sensor: HostSensor) -> str | None:
    """A reading at or above its own critical limit (of 100 °C or more) while the machine still runs; not of a part
    whose limit is its own protective one (a CPU at its TjMax is real: ``app.fans.limits``)."""
    if sensor.critical_c and sensor.critical_c >= 100 and sensor.temperature_c >= sensor.critical_c and \
            not own_limit(sensor.chip):
        return (f"{sensor.temperature_c:g} °C, at or above its own critical limit ({sensor.critical_c:g} °C), "
                "with the machine still running: not a real reading")
    return None


def apart(found: Sequence[HostSensor], left_out: dict[str, str]) -> tuple[HostSensor, ...]:
    """Leave out readings of 100 °C or more that nothing else of the machine backs: every other sensor under 60 °C
    (judged against the hottest reading under 100 °C, so two such inputs cannot vouch for each other), or, outside
    a GPU, 40 °C or more above the CPU's own sensor (an EC's unused slots at 111 °C beside a CPU at 49 °C). Inputs
    with nothing attached read 108-127 °C; they are not heat. A part's own sensor (``app.fans.limits.own_limit``)
    is never one: a GPU's junction and a CPU at its TjMax reach 100-110 °C for real; nor is an embedded controller's
    own CPU reading, which its fan follows even where it is wrong (``app.fans.roles.ec_own_cpu``)."""
    real = [s.temperature_c for s in found if s.temperature_c < 100]
    cpu = max((s.temperature_c for s in found if chip(s.chip).kind == "cpu"), default=None)
    kept = []
    for sensor in found:
        why = None
        hot = sensor.temperature_c >= 100 and not own_limit(sensor.chip) and \
            not ec_own_cpu(sensor.chip, sensor.label)  # a part's own sensor, or what an EC's curve follows: never open
        if hot and real and max(real) < 60:
            why = (f"{sensor.temperature_c:g} °C while every other sensor reads under 60 °C: an input with nothing "
                   "attached")
        elif hot and cpu is not None and sensor.temperature_c - cpu >= 40:
            why = f"{sensor.temperature_c:g} °C while the CPU reads {cpu:g} °C: an input with nothing attached"
        if why:
            left_out[f"{sensor.chip} {sensor.label}"] = why
        else:
            kept.append(sensor)
    return tuple(kept)
