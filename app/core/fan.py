"""A fan, as every source reads it (NVML, hwmon, the BMC): one shape, so the verdict, the page and the metrics need
not know where a fan was read.

``state`` says in a word where the fan stands (the terminal's FAN column, the page's badge); ``fan_state`` is the
one rule that sets it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Literal, TypeVar

from .record import record
from .vocabulary import driver_of

FanControl = Literal["full-speed", "manual", "automatic", "unknown"]
# Where the source came from: the controller's own configuration (pwm_temp_sel, /etc/fancontrol, thinkfan, fan2go),
# the hardware's design (a GPU's fan cools that GPU), a fit of its history (app.collect.fanlearn), or its name alone
# (a board's "VRM HS" fan beside its "VRM" temperature: a guess, said as one).
SourceFrom = Literal["declared", "design", "learned", "named"]
FanState = Literal["dead", "failed", "stalled", "off-target", "stopped", "floor", "full", "running", "unknown"]
# What is wrong with a fan that is there, as a kind the state and the verdict switch on (``alarm`` has the words):
# failed (a BMC's critical status, a pump that reads 0), stalled (a tachometer at 0 while its duty asks for speed:
# stalled, or a tachometer that does not report), off-target (far from its target past its spin-up), no-heat (full
# speed while what it follows is cool), warning (a BMC's non-critical status), disabled (its driver says so).
AlarmKind = Literal["failed", "stalled", "off-target", "no-heat", "warning", "disabled"]
_STATE_OF_ALARM: Mapping[str, FanState] = MappingProxyType({
    "stalled": "stalled", "off-target": "off-target", "no-heat": "full"})
_NONE: Mapping[str, str] = MappingProxyType({})
_NO_FACTS: Mapping[str, float | str] = MappingProxyType({})
FULL_PERCENT = 95.0  # at or above this duty a fan is at full speed
FLOOR_MARGIN = 3.0  # within this many points of its floor a fan is at its floor
MAX_RPM = 30_000  # above this a tachometer reading is not a fan's (a garbled register, a placeholder)
CONFIDENCE_FLOOR = 0.5  # a source learned less surely than this is not named (a guess that often names a distractor)


Number = TypeVar("Number", int, float)


def checked(value: Number | None, low: float, high: float, what: str, unsupported: dict[str, str],
            key: str) -> Number | None:
    """``value`` when it is within ``low``-``high``; else None, with the raw reading kept as the reason (a pwm of
    300, a fan at -1 RPM, a duty of 391 %: raw values are not facts). Every fan reader checks its values here."""
    if value is not None and not low <= value <= high:
        unsupported[key] = f"{what} read {value:g}: outside {low:g}-{high:,g}, not a reading"
        return None
    return value


@record
class Fan:
    """One fan as the machine exposes it.

    ``percent`` is the duty the controller asks for (pwm/255, or NVML's intended %); ``rpm`` what the tachometer
    counts. ``controller`` says who sets the speed in words (``control`` the kind), ``source`` the temperature it
    follows (``source_from`` how that is known, ``confidence`` how well a learned source explains the speed) and
    ``curve`` its curve, (°C, %) points. ``dead`` says why a channel is left out (nothing on the header, no
    reading); ``alarm`` what is wrong with a fan that is there; ``unsupported`` why a value is missing."""

    id: str  # stable within a machine: "hwmon:nct6798/fan2", "nvml:0/fan1", "bmc:FAN1"
    chip: str
    channel: int
    label: str | None
    rpm: int | None = None
    percent: float | None = None
    target_rpm: int | None = None
    target_percent: float | None = None
    min_rpm: int | None = None
    max_rpm: int | None = None
    divisor: int | None = None  # fanN_div: an 8-bit counter's divisor, which sets the slowest speed it can count
    floor_percent: float | None = None  # the lowest duty the controller runs it at while it runs (its idle floor)
    floor_rpm: int | None = None  # the same in RPM, when learned from its history
    control: FanControl = "unknown"
    controller: str | None = None
    source: str | None = None
    source_c: float | None = None
    source_from: SourceFrom | None = None
    confidence: float | None = None
    hysteresis_c: float | None = None
    curve: tuple[tuple[float, float], ...] = ()
    sources: tuple[str, ...] = ()  # the temperatures it follows where a daemon takes the hottest of several
    gpu_index: int | None = None  # the GPU it belongs to (a graphics card's own fan)
    cools: str | None = None  # what it cools, in words ("the GPU", "the chassis")
    # What the fan wing judged of it (app.fans.judged), set by the fan service: never by a reader
    stopped: bool = False  # at rest on purpose (zero-RPM idle, fan-stop), not failed
    alarm: str | None = None  # what is wrong, in words (a BMC's critical status, a fan far from its target)
    alarm_kind: AlarmKind | None = None  # the same as a kind (``AlarmKind``): what the state and the verdict read
    alarm_facts: Mapping[str, float | str] = field(default_factory=lambda: _NO_FACTS)  # what its words are made of
    dead: str | None = None
    # What its reader read, as facts for the fan wing (app.fans), which judges state, stopped and alarm from them:
    fault: bool | None = None  # its driver or BMC flags a fault (hwmon fanN_fault, a BMC's critical status)
    status: str | None = None  # its device's own status word, lower case (a BMC's "ok", "cr", "nc"; "disabled")
    zero_rpm: bool | None = None  # its controller's zero-RPM (fan-stop) setting, where the device says it
    pwm_enable: int | None = None  # hwmon's pwmN_enable as read
    raw_rpm: int | None = None  # the tachometer's raw value where it is not the speed (65535: no pulses)
    detected: bool | None = None  # its controller says a fan is (True) or is not (False) on its connector
    supply_v: float | None = None  # the rail its controller powers it from, as that controller reads it
    read_error: str | None = None  # what its reader answered in place of a reading ("ERR!", "[Unknown Error]")
    level: str | None = None  # an embedded controller's fan level as read (thinkpad_acpi: 0-7, auto, full-speed)
    off_target_s: float | None = None  # how long it has been far from its target (the fan service's clock)
    state: FanState = "unknown"
    stale_s: float | None = None  # its source is failing: this reading is that many seconds old, not live
    unsupported: Mapping[str, str] = field(default_factory=lambda: _NONE)
    name: str = field(init=False, default="")  # how a person names it, made from its label and chip

    def __post_init__(self) -> None:
        where = ("BMC" if self.chip == "bmc" else f"{self.chip} fan {self.channel}" if self.chip.startswith("GPU ")
                 else self.chip if self.id.startswith("liquidctl:")  # a cooler names its own channels
                 else f"{self.chip} fan{self.channel}")  # "GPU 0 fan 0": NVML counts fans from 0
        object.__setattr__(self, "name", f"{self.label} ({where})" if self.label and self.label != where else where)

    @property
    def speed(self) -> str:
        """Its speed in words: "1,850 RPM", "65 %", "65 % (1,400 RPM)"."""
        if self.rpm is not None and self.percent is not None:
            return f"{self.percent:.0f} % ({self.rpm:,} RPM)"
        if self.rpm is not None:
            return f"{self.rpm:,} RPM"
        return f"{self.percent:.0f} %" if self.percent is not None else "speed unknown"


def source_guessed(fan: Fan) -> bool:
    """True when a fan's source is FanWhy's guess, not what its controller says: an AMD card's (the hottest of its
    sensors) and a card's own fan whose controller nothing read names. The verdict and the terminal say "probably"."""
    if fan.source_from == "named":
        return True
    return fan.source_from == "design" and (driver_of(fan.chip) in ("amdgpu", "radeon") or fan.control == "unknown")


def fan_state(fan: Fan) -> FanState:
    """Where a fan stands, in a word: dead (not a fan), failed, stalled or off-target (``alarm_kind``), stopped,
    at its floor, at full speed, running; unknown without a speed."""
    if fan.dead:
        return "dead"
    if fan.alarm_kind is not None and fan.alarm_kind != "warning":  # a warning leaves the fan's state to its speed
        return _STATE_OF_ALARM.get(fan.alarm_kind, "failed")
    if fan.stopped:
        return "stopped"
    if fan.rpm == 0 or (fan.rpm is None and fan.percent == 0):
        return "unknown"  # not turning, and not judged at rest: a rest, a stall or a silent tachometer, not known
    if fan.percent is not None:
        if fan.percent >= FULL_PERCENT:
            return "full"
        if fan.floor_percent is not None and fan.percent <= fan.floor_percent + FLOOR_MARGIN:
            return "floor"
        return "running"
    if fan.rpm is not None:
        if fan.floor_rpm is not None and fan.rpm <= fan.floor_rpm * 1.05:
            return "floor"
        if fan.max_rpm and fan.rpm >= fan.max_rpm * FULL_PERCENT / 100:
            return "full"
        return "running"
    return "unknown"


AirRole = Literal["inlet", "exhaust", "cpu", "other"]


@record
class AirSensor:
    """A temperature a server's BMC reads (the air coming in, going out, the CPUs): what its chassis fans follow."""

    role: AirRole
    label: str
    temperature_c: float


# What a capture shows was done to a fan's control, beside its readings (app.collect.control_captures reads them,
# app.verdict.notes says them): a curve the driver refused or whose range is empty, a set command that failed, a
# profile that runs on a cooler against its liquid, a duty set that the speed did not follow, a fan daemon's
# decision or the setting it logged, a tool that cannot reach the fan, an embedded controller that lost its CPU
# temperature, a board whose firmware keeps its fans, manual settings then the controller's own.
NoteKind = Literal["curve-refused", "curve-locked", "set-failed", "asked-duty", "duty-ignored",
                   "daemon-not-obeyed", "tool-cannot-reach", "ec-lost-cpu", "board-keeps-fans",
                   "manual-then-auto", "control-refused", "write-refused"]


@record
class Note:
    """One fact of control read from a capture: its kind and what its words are made of."""

    kind: NoteKind
    facts: Mapping[str, float | str] = field(default_factory=lambda: _NO_FACTS)
