"""Readings made into facts: each fan channel and temperature once, with the values of its last snapshot and the
raw speed of every snapshot in turn, each raw value judged against what its chip can produce (``app.fans.chips``):
a counter with no pulses, a driver's error value, a negative speed, an input with nothing on it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from ..core.vocabulary import SMI_READ_ERRORS
from .chips import SUPERIO, UNKNOWN, Chip, chip, controller_of, detected, fan_duty, not_a_fan
from .facts import FanFact, Invalid, Reading, TempFact
from .passes import nth_of_name
from .roles import may_be_unconnected, pin_named, role

MAX_RPM = 30_000.0  # no fan a tachometer counts turns faster: a reading above is a garbled or saturated counter
MIN_RPM = 100.0  # no fan turns this slowly while it turns: below it a counter sees a fan stopping, starting, or noise
HOTTEST_REAL_C = 127.0  # the top of a signed 8-bit sensor register: above it no reading is real
_FAN_WORDS = re.compile(r"fan|pump|blower|cooler|rotor|tach|\bduty\b", re.IGNORECASE)
_ABSENT_STATUS = ("na", "ns", "absent", "not present", "no reading", "disabled", "not available", "absent ")
_CALM_STATUS = {"nominal": "ok"}  # FreeIPMI's State "Nominal" (ipmi_exporter's 0) is ipmitool's ok: nothing crossed


def fans_of(readings: Iterable[Reading]) -> tuple[FanFact, ...]:
    """A fact for each fan channel the readings name."""
    channels: dict[str, list[Reading]] = {}
    supplies: dict[str | None, float] = {}
    for reading in readings:
        channel = _fan_channel(reading)
        if channel is not None:
            channels.setdefault(f"{reading.chip or '-'}/{channel}", []).append(reading)
        elif reading.unit == "v" and reading.value is not None and reading.label == chip(reading.chip).fan_supply:
            supplies[reading.chip] = reading.value  # the rail the chip powers its fans from (the last snapshot's)
    fans = (_fan(key, found) for key, found in channels.items())
    return tuple(replace(f, supply_v=supplies[f.chip]) if f.chip in supplies else f for f in fans)


def _fan_channel(r: Reading) -> str | None:
    """The channel a reading belongs to ("fan1" for fan1_input and pwm1, the label otherwise), None for one that is
    not a fan's."""
    if not_a_fan(r.label):  # a flow, a pressure or a water quality its driver reports through a fan channel
        return None
    if r.attr == "cur_state":  # a kernel cooling device that is a fan: its state is its duty
        return "fan"
    if r.attr:
        if r.attr.startswith("label_"):  # a labelled fan's limit or flag (app.fans.read.lines): that fan's
            return r.label if r.unit != "c" and r.attr != "label_crit_alarm" else None  # a temperature's is no fan's
        number = re.fullmatch(r"(?:fan|pwm)(\d+)(?:_\w+)?", r.attr)
        if number:
            return f"fan{number.group(1)}"
        if r.attr.startswith("fan_"):  # OpenBMC's fan_tach/NAME
            return r.attr[4:]
        return None
    if r.chip == "nvidia":
        return _smi_channel(r)
    if r.unit == "rpm" or (r.unit == "%" and _FAN_WORDS.search(r.label)):
        return r.label
    return _unitless_channel(r) if r.unit is None else None


def _unitless_channel(r: Reading) -> str | None:
    """The channel of a reading with no unit: a fan's by its label's words and what stands in its value."""
    named = _FAN_WORDS.search(r.label) is not None
    if named and r.value is None and r.raw.strip().upper() in ("FAULT", "N/A"):  # sensors(1): fanN_fault, no input
        return r.label
    if named and r.chip == "bmc" and (r.value is None or "na" in r.raw.lower().split()):  # a BMC's empty slot: "na"
        return r.label
    if re.search(r"rpm|level", r.label, re.IGNORECASE) and _ITEM.match(r.label):
        return _ITEM.match(r.label).group(1)  # type: ignore[union-attr]  # matched on the line above
    if re.search(r"\brpm\b", r.label, re.IGNORECASE):
        return r.label
    return None


def _smi_channel(r: Reading) -> str | None:
    """nvidia-smi's fan.speed is the card's fan; "[N/A]" is none (the GPU's fact says it reports none), "[Unknown
    Error]" a fan unread."""
    if r.label not in ("fan.speed", "fan.target") or (r.value is None and not smi_error(r)):
        return None
    fan = r.extra.get("fan")  # one of the card's fan controllers, where a tool names them (NVML's fan index)
    return f"gpu{int(r.extra.get('gpu', 0))} fan" + (f" {int(fan)}" if isinstance(fan, float) else "")


# a cooler's fields in a dump (NVAPI's "Items[0].CurrentRpm", "Items[0].CurrentLevel"): the item is the channel
_ITEM = re.compile(r"^(.*?\[\d+\])\.(\w+)$")


def _kind(r: Reading) -> str:
    """What a reading of a fan channel is: its speed ("input"), a duty ("pwm", "percent"), "pwm_enable", a target,
    a limit, a fault flag; NVAPI's cooler fields by their names."""
    if smi_error(r):  # a fan whose speed nvidia-smi failed to read: its speed, unread
        return "input"
    if r.label == "fan.target":  # the duty asked of a card's fan (app.fans.read.nvsettings)
        return "target"
    attr = r.attr or ""
    if attr == "cur_state":
        return "percent"
    suffix = attr.partition("_")[2] if attr and not attr.startswith("fan_") else ""
    if attr.startswith("pwm"):
        return "pwm_enable" if suffix == "enable" else suffix or "pwm"
    item = _ITEM.match(r.label)
    if item and not attr:  # NVAPI's cooler fields: the speed, the level asked, the lowest level allowed
        field_name = item.group(2).lower()
        return "input" if "rpm" in field_name else "floor" if "min" in field_name else \
            "max_level" if "max" in field_name else "percent"
    if suffix == "minimum_pwm":  # amdgpu's gpu_od fan_minimum_pwm: the lowest duty while it turns, in %
        return "floor"
    return suffix or ("percent" if r.unit == "%" or (r.chip == "nvidia" and r.unit != "rpm") else "input")


def _pwm_mode(by_attr: dict[str, Reading]) -> int | None:
    """pwmN_mode as sysfs-interface.rst has it: 0 DC, 1 PWM; None where not read or another value."""
    mode = by_attr.get("mode")
    return int(mode.value) if mode is not None and mode.value in (0, 1) else None


def _divisor(by_attr: dict[str, Reading]) -> int | None:
    """An old chip's fan divisor (fanN_div; sensors' "div = 4"): a positive whole number, else None."""
    value = _value(by_attr, "div")
    return int(value) if value and value > 0 else None


def _fan(key: str, found: list[Reading]) -> FanFact:
    by_attr: dict[str, Reading] = {}
    for r in found:
        by_attr[_kind(r)] = r  # the last snapshot's value is the current one
    speeds, statuses = _in_turn(found)
    first = found[0]
    owner = chip(first.chip)
    speed = by_attr.get("input")
    rpm, invalid, stated = _counted(owner, *_speed(speed, owner.no_pulses, owner.error_values))
    share = _share_off_scale(by_attr) if speed is None else None
    if share is not None:  # a speed read back as a share of a range, outside it: not a reading; a fan's own share
        # below 0 (not a daemon's scaled read-back) is a negative speed
        invalid = "negative" if share is not by_attr.get("pwm") else "off-scale"
    extra = speed.extra if speed is not None else first.extra
    status = str(extra.get("status", ""))  # a BMC's status beside its speed, or beside the share it reports instead
    status = _CALM_STATUS.get(status, status)
    enable = by_attr.get("pwm_enable")
    pwm_enable = int(enable.value) if enable is not None and enable.value is not None else None
    target = by_attr.get("target")
    label = _label(key, found)
    duty = fan_duty(owner, pwm_enable, _duty(by_attr))
    return FanFact(
        key=key, chip=first.chip, label=label, rpm=rpm, invalid=invalid,
        raw=_raw_of(speed, share, first),
        duty_percent=duty, target_rpm=stated if stated is not None else None if owner.target_echoes or target is None
        or target.unit == "%" else target.value, target_percent=_percent(target),
        floor_percent=_value(by_attr, "floor") if "floor" in by_attr else _value(by_attr, "curve_min"),
        min_rpm=_limit(owner, by_attr, "min"), max_rpm=_limit(owner, by_attr, "max"),
        fault=_fault(by_attr, speed, status), divisor=_divisor(by_attr),
        alarm=None if "alarm" not in by_attr else _value(by_attr, "alarm") == 1,
        status=status or None, present=_present(speed, status, detected(owner, label, pwm_enable)),
        lower_critical_rpm=_number(extra.get("lcr")), lower_nonrecoverable_rpm=_number(extra.get("lnr")),
        lower_noncritical_rpm=_number(extra.get("lnc")), upper_noncritical_rpm=_number(extra.get("unc")),
        pwm_enable=pwm_enable, pwm_mode=_pwm_mode(by_attr),
        controller=controller_of(owner, pwm_enable, duty, _said(found, "controller")),
        gpu=_gpu(first), pump="pump" in label.lower(), speeds=speeds, statuses=statuses,
        duties=_duties(found, speeds),
        zero_rpm=None if "zero_rpm_enable" not in by_attr else _value(by_attr, "zero_rpm_enable") == 1,
        rest_below_c=_value(by_attr, "zero_rpm_stop") or _number(first.extra.get("trip")),  # off until its trip
        starts_at_c=_number(first.extra.get("trip")), hysteresis_c=_number(first.extra.get("hysteresis")),
        zone_mode=_said(found, "mode"), follows=(follows := _follows(by_attr, first)),
        follows_how="declared" if follows else None)


def _in_turn(found: list[Reading]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A fan's speed as read in each snapshot, and a BMC's status beside each (none where no status was read)."""
    inputs = [r for r in found if _kind(r) == "input"]
    statuses = tuple(str(r.extra.get("status", "")) for r in inputs)
    return tuple(r.raw for r in inputs), statuses if any(statuses) else ()


def _duties(found: list[Reading], speeds: tuple[str, ...]) -> tuple[float | None, ...]:
    """Where no speed is read, the fan's duty in each snapshot (a card's fan.speed in nvidia-smi's loop)."""
    return () if speeds else tuple(r.value for r in found if _kind(r) == "percent")


def _follows(by_attr: dict[str, Reading], first: Reading) -> str | None:
    """What a fan follows where its reader or its chip declares it (never a guess): a thermal zone's cooling
    device's zone, or a Super-I/O output's selected source."""
    return _said([first], "follows") or _selected(by_attr, first)


def _selected(by_attr: dict[str, Reading], first: Reading) -> str | None:
    """The temperature a Super-I/O output's automatic mode follows, as its chip declares it (nct6775.rst:
    pwmN_temp_sel, the index of a tempN), as that temperature's key."""
    chosen = by_attr.get("temp_sel")
    return f"{first.chip or '-'}/temp{int(chosen.value)}" if chosen is not None and chosen.value else None


def _said(found: list[Reading], name: str) -> str | None:
    """What a reader says of a fan beside its values (its controller, its zone's mode), as its last reading says it."""
    return next((str(r.extra[name]) for r in reversed(found) if r.extra.get(name)), None)


def _label(key: str, found: list[Reading]) -> str:
    """The name the capture gives the fan ("CPU Fan", "FAN3"), else its channel ("fan1")."""
    if found[0].chip == "nvidia":  # nvidia-smi's field names are not the fan's: "gpu0 fan"
        return key.partition("/")[2]
    label = next((r.label for r in found if not re.fullmatch(r"(fan|pwm)\d+(_\w+)?", r.label)), key.partition("/")[2])
    item = _ITEM.match(label)
    return item.group(1) if item else label


def _present(speed: Reading | None, status: str, found: bool | None) -> bool | None:
    """False for a slot its reader or controller says is empty, True for one its device detects a fan on."""
    if status in _ABSENT_STATUS or (speed is not None and speed.raw.lower() in ("na", "absent")):
        return False
    return found


def _gpu(first: Reading) -> int | None:
    gpu = first.extra.get("gpu") if first.chip == "nvidia" else None
    return int(gpu) if isinstance(gpu, (int, float)) else None


def smi_error(r: Reading) -> bool:
    """nvidia-smi's answer for a field it failed to read ("[Unknown Error]", "ERR!"), unlike "[N/A]" and "[Not
    Supported]", which say the board has no such reading (nvidia-smi(1))."""
    return r.chip == "nvidia" and r.value is None and r.raw.strip() in SMI_READ_ERRORS


def _speed(speed: Reading | None, no_pulses: tuple[int, ...], errors: tuple[int, ...]) -> tuple[float | None,
                                                                                                  Invalid | None]:
    if speed is not None and (speed.raw == "an error" or smi_error(speed)):
        return None, "error"
    if speed is None or speed.value is None or speed.unit == "%" or (speed.chip == "nvidia" and speed.unit != "rpm"):
        return None, ("fault" if speed is not None and speed.raw.strip().upper() == "FAULT" else
                      "error" if speed is not None and _no_value(speed) else None)
    return judged_rpm(speed.value, no_pulses, errors)


def _counted(owner: Chip, rpm: float | None, invalid: Invalid | None) -> tuple[float | None, Invalid | None,
                                                                               float | None]:
    """A speed, why it is none, and the speed its chip states for the state it drives where it counts nothing
    (gpio-fan: what it asks, kept as the fan's target, never a speed)."""
    if owner.speed_is_state and rpm is not None:
        return None, "not-counted", rpm
    return rpm, invalid, None


def judged_rpm(value: float, no_pulses: tuple[int, ...], errors: tuple[int, ...]) -> tuple[float | None,
                                                                                          Invalid | None]:
    """A tachometer's raw value as a speed, or None and why it is none: the chip's no-pulse placeholder (65535 on
    amdgpu), its driver's error value (-1 on dell_smm), a negative count, one faster than any fan, one too slow to
    be a turning fan. The one place a raw speed is judged, for pastes and live readers alike."""
    if value in no_pulses:
        return None, "no-pulses"
    if value in errors:
        return None, "error"
    if value < 0:
        return None, "negative"
    if value > MAX_RPM:
        return None, "over-range"
    if 0 < value < MIN_RPM:
        return None, "too-slow"  # a saturated or garbled counter; "no pulses" only where the chip documents it
    return value, None


def _no_value(speed: Reading) -> bool:
    """A fan's speed that its driver gave no value for: sensors prints N/A where reading fanN_input fails
    (sensors(1); the hwmon ABI lets a read return an error such as -ENODATA). A BMC's "na" is an empty slot instead,
    and nvidia-smi's [N/A] a card without the reading (their own readers say so)."""
    return speed.chip not in ("bmc", "nvidia") and speed.value is None and speed.raw.strip().upper() == "N/A" and \
        not speed.extra.get("status")


def _fault(by_attr: dict[str, Reading], speed: Reading | None, status: str) -> bool | None:
    flag = by_attr.get("fault")
    if flag is not None and flag.value is not None:
        return flag.value == 1
    if speed is not None and speed.raw.strip().upper() == "FAULT":
        return True
    if status in ("cr", "nr", "lower critical", "lower non-recoverable", "belowcrit", "critical", "failed"):
        return True
    return None


def _duty(by_attr: dict[str, Reading]) -> float | None:
    pwm = by_attr.get("pwm")
    if pwm is not None and pwm.unit == "%":
        return _percent(pwm)
    if pwm is not None and pwm.value is not None and 0 <= pwm.value <= 255:
        return round(100.0 * pwm.value / 255.0, 1)
    percent = by_attr.get("percent")
    if percent is not None and percent.unit is None and percent.chip != "nvidia" and not _ITEM.match(percent.label):
        return None
    top = NVIDIA_TOP_PERCENT if percent is not None and percent.chip == "nvidia" else 100.0
    return percent.value if percent is not None and percent.value is not None and 0 <= percent.value <= top else None


def _percent(r: Reading | None) -> float | None:
    """A share in %, None where it is not one (none read, or outside 0-100 %)."""
    return r.value if r is not None and r.unit == "%" and r.value is not None and 0 <= r.value <= 100 else None


def _raw_of(speed: Reading | None, share: Reading | None, first: Reading) -> str | None:
    """What a fan's reading showed: its speed's text, a share off its scale in %, or a cooling device's state."""
    if speed is not None:
        return speed.raw
    if share is not None:
        return f"{share.raw.removesuffix('%').strip()} %"
    return first.raw if first.attr == "cur_state" else None


def _share_off_scale(by_attr: dict[str, Reading]) -> Reading | None:
    """A duty read back in % that is outside 0-100 %: a value scaled against a range that does not fit it (nbfc's
    current speed: the EC's register scaled between its configuration's minimum and maximum, nbfc-linux's
    src/fan.c), not a duty."""
    pwm = by_attr.get("pwm")
    if pwm is not None and pwm.unit == "%" and pwm.value is not None and _percent(pwm) is None:
        return pwm
    share = by_attr.get("percent")  # a fan's share below 0 (an iLO's -3000 %) is no share on any chip
    return share if share is not None and share.unit == "%" and share.value is not None and share.value < 0 else None


# nvidia-smi(1): fan.speed "may exceed 100% in certain cases" (the share of the product's maximum noise-tolerance
# speed); no limit is documented, so twice that maximum is a cautious bound past which a reading is garbled
NVIDIA_TOP_PERCENT = 200.0


def _limit(owner: Chip, by_attr: dict[str, Reading], attr: str) -> float | None:
    """A fan's fanN_min or fanN_max, none where its driver shows there the lowest or highest speed it has read."""
    return None if owner.extremes_seen else _value(by_attr, attr)


def _value(by_attr: dict[str, Reading], kind: str) -> float | None:
    found = by_attr.get(kind)
    return found.value if found is not None else None


def _number(value: float | str | None) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


def temperatures_of(readings: Iterable[Reading]) -> tuple[TempFact, ...]:
    """A fact for each temperature the readings name (the last snapshot's value); a second sensor of one name in a
    listing (``app.fans.passes``) is its own, "Temp #2"."""
    found: dict[str, tuple[Reading, int]] = {}
    seen: dict[str, list[float | None]] = {}
    rows = list(readings)
    faults, disabled = _turned_off(rows)
    for r, nth in zip(rows, nth_of_name(rows), strict=True):
        if r.chip == "nvidia" and "gpu" in r.extra:
            continue  # a GPU's own temperature, from its GPU fact (app.fans.adapt)
        if r.unit == "c" and (r.attr is None or re.fullmatch(r"temp(\d+(_input)?|_\w+)", r.attr)):
            name = r.attr[:-6] if r.attr and r.attr.endswith("_input") else r.label
            key = f"{r.chip or '-'}/{name}" + (f" #{nth}" if nth > 1 else "")
            found[key] = r, nth
            seen.setdefault(key, []).append(None if invalid_celsius(r.chip, r.label, r.value) else r.value)
    return tuple(_temperature(key, r, key in faults, tuple(seen[key]) if len(seen[key]) > 1 else (), key in disabled,
                              nth) for key, (r, nth) in found.items())


def _turned_off(readings: Iterable[Reading]) -> tuple[set[str], set[str]]:
    """The temperatures whose driver flags a fault (tempN_fault 1) and those whose input is disabled (tempN_type 0)."""
    faults: set[str] = set()
    disabled: set[str] = set()
    for r in readings:
        if r.attr and re.fullmatch(r"temp\d+_fault", r.attr) and r.value == 1:
            faults.add(f"{r.chip or '-'}/{r.attr[:-6]}")
        elif r.attr and r.attr.endswith("_type") and r.value == 0:
            disabled.add(f"{r.chip or '-'}/{r.attr[:-5]}")
    return faults, disabled


def invalid_celsius(chip_name: str | None, label: str, value: float | None) -> Invalid | None:
    """Why a temperature read from ``chip_name`` is not a reading, or None: no value, "not available", at or below
    freezing, past a signed 8-bit register, on an arbitrary scale (relative labels), an open board input."""
    owner = chip(chip_name)
    if value is None or value in owner.not_available_c or value <= 0:
        return "not-available"
    if value > HOTTEST_REAL_C:
        return "over-range"
    if label.strip() in owner.relative_labels:
        return "relative"
    # an input named for a board fan chip's pin is that chip's, its header cut by a grep or not
    ceiling = SUPERIO.unconnected_from_c if owner is UNKNOWN and pin_named(label) else owner.unconnected_from_c
    if ceiling is not None and value >= ceiling and may_be_unconnected(chip_name, label):
        return "unconnected"
    return None


def _temperature(key: str, r: Reading, fault: bool, history: tuple[float | None, ...] = (),
                 disabled: bool = False, nth: int = 1) -> TempFact:
    value = r.value
    status = str(r.extra.get("status", "")) if r.extra else ""
    invalid: Invalid | None = "fault" if fault else "not-available" if status in _ABSENT_STATUS or disabled else \
        invalid_celsius(r.chip, r.label, value)
    label = r.label[:-6] if r.attr and r.label == r.attr and r.label.endswith("_input") else r.label
    label += f" #{nth}" if nth > 1 else ""
    return TempFact(key=key, chip=r.chip, label=label, celsius=None if invalid else value, raw=value,
                    role=role(r.chip, r.label), invalid=invalid, history=history,
                    fan_off_c=_number(r.extra.get("fan_off")), fan_max_c=_number(r.extra.get("fan_max")))

