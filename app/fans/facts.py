"""What was read of a machine's fans and temperatures, with no words: readings as a paste or a reader gives them,
and the facts built from them (a fan's speed, duty, target, limits, fault flag, the BMC's thresholds and status, its
controller as a kind; a temperature with its validity). Raw values are kept beside what was judged of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Literal

from ..core.record import record

# Who sets a fan's speed, as a kind: the device's own firmware (a graphics card, an AIO cooler), the board's BIOS
# through its Super-I/O's automatic modes, a laptop's embedded controller, a server's BMC, a fan daemon, a person or
# a program by hand (manual), nothing (full speed, no control), the kernel's thermal framework (a thermal zone's
# active trip points turning a cooling device on and off), or not known.
Controller = Literal["firmware", "bios", "ec", "bmc", "daemon", "manual", "none", "kernel", "unknown"]
# Why a raw value is not a reading: a counter that saw no pulses (65535), a negative speed or a driver's error value,
# past what the hardware can produce, a value a driver documents as "not available", an input with nothing on it,
# a fault the driver flags, a share read back outside 0-100 % (a value scaled against a range that does not fit it),
# a value on an arbitrary scale (an older AMD CPU's Tctl: degrees relative to where it needs full cooling), a speed
# its driver states for the state it set rather than counts (gpio-fan's: kept as the fan's target).
Invalid = Literal["no-pulses", "negative", "error", "over-range", "too-slow", "not-available", "unconnected", "fault",
                  "off-scale", "relative", "not-counted"]
Role = Literal["cpu", "gpu", "memory", "liquid", "inlet", "exhaust", "board", "chipset", "vrm", "storage", "unknown"]
Unit = Literal["rpm", "c", "%", "w", "v", "a", "mhz"]

_NO_EXTRA: Mapping[str, float | str] = MappingProxyType({})



LIQUID = "Liquid temperature"  # what a liquid cooler's own profile follows: the only temperature it reads

@record
class Reading:
    """One value as a capture shows it. ``attr`` is the sysfs attribute where the capture names one (``fan1_input``,
    ``pwm1_enable``), ``label`` what the capture calls it; ``value`` is None where the text is not a number (``FAULT``,
    ``N/A``, ``na``), ``raw`` keeps the text. ``snapshot`` counts the readings of one machine a paste holds in turn;
    ``extra`` holds what a listing says beside the value (a BMC's status and thresholds)."""

    chip: str | None
    label: str
    value: float | None
    raw: str
    unit: Unit | None = None
    attr: str | None = None
    snapshot: int = 0
    extra: Mapping[str, float | str] = field(default_factory=lambda: _NO_EXTRA)


@record
class FanFact:
    """One fan channel. ``rpm`` is a valid tachometer reading or None (``invalid`` says why, ``raw`` keeps what was
    read); ``duty_percent`` what its controller asks for; ``present`` False for a slot the reader says is empty (a
    BMC's "na", "Absent") and None where nothing says. ``speeds`` is the raw speed in each snapshot a paste holds,
    in order."""

    key: str  # "nct6775/fan1", "bmc/FAN3": stable within one machine
    chip: str | None
    label: str
    rpm: float | None = None
    raw: str | None = None
    invalid: Invalid | None = None
    duty_percent: float | None = None
    target_rpm: float | None = None
    target_percent: float | None = None
    floor_percent: float | None = None  # the lowest duty its controller accepts while it turns (a firmware floor)
    min_rpm: float | None = None
    max_rpm: float | None = None
    divisor: int | None = None  # an old chip's fan divisor (fanN_div; sensors' "div = 8"): its slowest countable speed
    supply_v: float | None = None  # the rail its controller powers it from, as its controller reads it (fan_supply)
    fault: bool | None = None
    alarm: bool | None = None  # its driver's alarm (hwmon fanN_alarm; sensors' "ALARM"): speed under its minimum
    status: str | None = None  # a BMC's status as read, lower case: "ok", "cr", "nc", "lower critical", "belowcrit"
    present: bool | None = None
    lower_critical_rpm: float | None = None
    lower_nonrecoverable_rpm: float | None = None
    lower_noncritical_rpm: float | None = None  # a BMC's warning threshold, above the lower-critical one
    upper_noncritical_rpm: float | None = None  # a BMC's warning threshold for a fan too fast (a going-high event)
    pwm_enable: int | None = None
    pwm_mode: int | None = None  # its output's kind (sysfs-interface.rst pwmN_mode): 0 DC (a voltage), 1 PWM (a signal)
    level: str | None = None  # an embedded controller's fan level as read (thinkpad_acpi: 0-7, auto, full-speed)
    controller: Controller = "unknown"
    gpu: int | None = None  # the GPU it belongs to (a graphics card's own fan)
    pump: bool = False  # a liquid cooler's pump
    zero_rpm: bool | None = None  # the controller's zero-RPM (fan-stop) setting, where a capture shows it
    rest_below_c: float | None = None  # the controller's own stop temperature, where a capture shows it
    starts_at_c: float | None = None  # where its controller turns it on (a thermal zone's active trip), if read
    hysteresis_c: float | None = None  # how far below that its controller turns it off again
    zone_mode: str | None = None  # that zone's mode as read ("enabled", "disabled")
    speeds: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()  # a BMC's status beside each of those speeds, in order ("" where none)
    duties: tuple[float | None, ...] = ()  # where no speed is read, its duty in each snapshot (a card's in a loop)
    off_target_s: float | None = None  # how long it has been far from its target, where a live clock measured it
    follows: str | None = None  # the key of the temperature it follows, where its controller declares it or its
    follows_how: Literal["declared", "learned"] | None = None  # history shows it ("learned"), never a guess
    table_percent: float | None = None  # what its embedded controller's fan table asks (app.fans.ectable)


@record
class TempFact:
    """One temperature: ``celsius`` when it is a reading, None with ``invalid`` when it is not (``raw`` kept);
    ``role`` what it measures (app.fans.roles)."""

    key: str
    chip: str | None
    label: str
    celsius: float | None
    raw: float | None
    role: Role
    invalid: Invalid | None = None
    history: tuple[float | None, ...] = ()  # its reading in each snapshot a paste holds, in turn (None: no reading)
    # where an embedded controller's fan table uses it (the Chrome EC's): the fans are off at or below fan_off and
    # at full speed from fan_max, as ectool temps all lists them
    fan_off_c: float | None = None
    fan_max_c: float | None = None
    # its driver's critical limit (tempN_crit: a CPU's TjMax, a GPU's or a drive's own limit), where one is read
    crit_c: float | None = None
    crit_alarm: bool = False  # its driver's critical alarm (tempN_crit_alarm, sensors' "ALARM (CRIT)") is set


@record
class GpuFact:
    """A GPU as its vendor's tool reports it: ``fan_reported`` False where the tool says the card has no fan reading
    ("[N/A]", NotSupported); ``heat_slowdown`` the reasons it reports for slowing its clocks for heat
    (``sw_thermal_slowdown``, ``hw_thermal_slowdown``, ``hw_slowdown``), whether those reasons were read at all, and
    the temperature it slows at."""

    index: int
    name: str | None = None
    temperature_c: float | None = None
    fan_percent: float | None = None
    history: tuple[float | None, ...] = ()  # its temperature in each snapshot a paste holds, where more than one
    fan_reported: bool = True
    fan_read: bool = True  # its tool gave a fan field at all (a query or an exporter without one: False)
    heat_slowdown: tuple[str, ...] = ()
    slowdown_c: float | None = None
    reasons_read: bool = False  # its tool listed why it slows its clocks (all "Not Active" is a reading too)


@record
class GpuLoad:
    """How busy a GPU was when a paste was taken, as its tool printed it: the share of its last sample period it ran
    work (nvidia-smi's utilization.gpu and dmon's sm: one or more kernels executing; amdgpu's gpu_busy_percent, which
    rocm-smi shows as GPU% and amd-smi as GFX-Uti) and the power it drew, with its limit where read. Not a fan fact:
    no rule rests on it; ``explain`` says it beside the fans, where the processes behind it would be."""

    index: int
    vendor: str  # "nvidia", "amd": whose tool reported it
    busy_percent: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = None


@record
class Curve:
    """What a fan daemon's configuration declares for one output: the temperature it follows and the duty it asks
    at each temperature ((°C, %) points, linear between them as the daemons draw them), its duty below the first."""

    daemon: str  # "fancontrol", "thinkfan", "fan2go"
    chip: str
    output: str  # "pwm1"
    source: str | None  # "temp1_input", or the source in words where it is not one input
    points: tuple[tuple[float, float], ...]
    floor_percent: float | None = None
    firmware_c: tuple[float, float | None] | None = None  # (from, to) °C where it gives the fan back to its firmware
    stepped: bool = False  # levels, each held from where it starts (thinkfan's), not a line drawn between points
    combined: str | None = None  # how it combines other curves (fan2go's function: "average", "maximum" ...)
    strategy: str | None = None  # the named curve it uses (fw-fanctrl's strategies)
    on_battery: bool = False  # a curve it uses on battery only (fw-fanctrl's strategyOnDischarging)
    inverted: bool = False  # an output on which 255 stops the fan: its points are the fan's share, not the pwm
    refused: str | None = None  # why its daemon refuses the configuration as it starts (a code): then in no effect
    sensor: str | None = None  # the input it follows on its chip ("edge"), where ``source`` names it in words
    firmware_may_run: bool = False  # on some cards its daemon hands it to the card's firmware, which reads its own
    in_firmware: bool = False  # its program hands it to the firmware, which runs it (G-Helper's curves on ASUS)

    def drives(self, fan_key: str) -> bool:
        """Whether this curve's output drives the fan of ``fan_key``: hwmon's ``fanN`` of its ``pwmN``, or the
        cooler's channel it names."""
        return fan_key.lower() in (f"{self.chip}/fan{self.output.removeprefix('pwm')}".lower(),
                                   f"{self.chip}/{self.output}".lower())


@record
class Decision:
    """One decision a fan daemon logged: the reading it acted on (the hottest once its bias is added), that bias,
    the level it chose; ``first_c`` the first sensor's reading (the one a placeholder shows on). ``level`` is None
    for a level thinkpad-acpi names rather than numbers (``named``: auto, the EC's own control; full-speed or its
    older name disengaged, the fan unregulated at its top speed). A daemon that writes a duty rather than a level:
    ``percent`` the duty written, ``why`` what chose it ("curve": a point of its curve; "same": the duty the fan
    already had, nothing written; "default": no point of its curve applied, its default written), ``drives`` the
    chip whose fans it writes to."""

    daemon: str
    celsius: float
    bias: float
    level: int | None
    step: int
    first_c: float | None = None
    named: str = ""
    percent: float | None = None
    why: str = ""
    drives: str = ""
    what: str = ""  # what the daemon wrote it to, as it names it (smfc's "CPU zone"): its fans are not named
    asked: float | None = None  # the duty its curve asked, where a map or a limit made it write another (fan2go's)
    limit_c: float | None = None  # past this reading it gives the fans back to their controller (a threshold)


@record
class Level:
    """A level of a daemon's configuration: on from ``low_c`` up to ``high_c``."""

    level: int
    low_c: float
    high_c: float


@record
class Calibration:
    """What a fan daemon measured of a fan when it set it up (fan2go's initialization): the pwm it stops at, the one
    it starts at, and the one past which it turns no faster; or, for pwmconfig, that no fan followed the output."""

    daemon: str
    fan: str  # the daemon's name for the fan
    min_pwm: float
    start_pwm: float
    max_pwm: float
    # pwmconfig's test instead: it set the output to 0 and no fan it reads slowed ("no correlation"); each fan's
    # speed before and after, as it printed them
    uncorrelated: tuple[tuple[str, float, float], ...] = ()


@record
class Setting:
    """A fan control setting a controller reports of itself: its name as the controller says it and its value as
    read (Dell's iDRAC: ``ThirdPartyPCIFanResponse``, ``Enabled``; a Supermicro BMC's fan mode: ``fan mode``,
    ``Full``)."""

    controller: str  # "iDRAC", "Supermicro BMC", "GPU 1"
    name: str
    value: str
    typed: bool = False  # set by a command typed in the paste (ipmitool raw), not read back from the controller


PERF_LEVEL = "power_dpm_force_performance_level"  # an amdgpu card's performance level, as a Setting of the card
MAX_OPERATING = "GPU Max Operating Temp"  # an NVIDIA card's own limit (°C), as a Setting of the card
ONE_DUTY = "fixed"  # a Decision's why: one duty a tool set for every fan, their controller's own control off


@record
class DaemonEvent:
    """What a fan daemon's log says it did as a whole: fancontrol aborted after an error and set its fans to full speed
    as it left ("aborted", the error it printed), or refused to start on a configuration that no longer matches the
    hwmon devices ("outdated") or names files that are not there ("missing"); pwmconfig set the outputs it tests to full
    speed, where it leaves them when it ends ("left-full"), or found nothing to test and exited ("nothing-to-drive":
    ``detail`` no-sensors, no-pwm, no-fan or not-writable); thinkfan could not drive its fan and exited
    ("no-fan-control": ``detail`` fan_control or permission); pwmconfig could put outputs neither at full speed nor
    under manual control ("no-manual": ``detail`` the outputs, ``values`` the mode they stayed in); a Jetson's fan
    service (nvfancontrol) is not running while a fan's pwm is at full, as jetson_clocks --fan leaves it
    ("not-running", the state shown; ``fan`` the fan's key). Of
    one fan (``fan``, the daemon's name for it): fan2go read 0 RPM even at the top of its range and stopped regulating
    it ("stalled-at-max"), or read back another pwm than it set ("overridden"); ``values`` holds the numbers the log
    gives (the pwm set, expected and read; the speed; how many times it was logged; the fans logged alike)."""

    daemon: str
    event: Literal["aborted", "outdated", "missing", "left-full", "not-running", "stalled-at-max", "overridden",
                   "nothing-to-drive", "no-fan-control", "no-manual"]
    detail: str = ""
    fan: str = ""
    values: tuple[tuple[str, float | str], ...] = ()


@record
class BmcEvent:
    """One record of a BMC's event log (the SEL, as ``ipmitool sel list`` or ``sel elist`` prints it) about a sensor
    crossing a threshold: the sensor's type and name as logged, which threshold ("lower critical", "upper
    non-recoverable"), whether the event was asserted or deasserted, and the reading and threshold where the log
    gives them (``Reading 200 < Threshold 300 RPM``)."""

    sensor_type: str
    sensor: str
    threshold: str
    asserted: bool
    reading: float | None = None
    limit: float | None = None


@record
class HeatEvent:
    """A part the kernel logged acting for heat: a CPU slowing its clock (x86's therm_throt: "CPU2: Core temperature
    above threshold, cpu clock throttled (total events = 1)"; ``level`` "Core" or "Package") or a GPU's driver at one
    of its thresholds (nouveau's therm: "temperature (102 C) hit the 'fanboost' threshold"; ``level`` the threshold,
    ``celsius`` what it read). ``part`` is the CPU ("CPU2") or the GPU's device ("0000:01:00.0"), ``count`` the
    events so far, ``ended`` whether the log later says it passed ("temperature/speed normal", "went below")."""

    part: str
    level: str
    count: int
    ended: bool
    source: str = "therm_throt"  # what logged it: "therm_throt" (the CPU), "nouveau", or "thermal" (a thermal zone
    # at its critical trip: ``part`` the zone, ``level`` its type where the kernel names it)
    celsius: float | None = None


@record
class ChipClaim:
    """A board's sensor chip its driver found (``nct6775: Found NCT6798D or compatible chip at 0x2e:0x290``) at an I/O
    range the firmware's ACPI also claims (drivers/acpi/osl.c, acpi_check_resource_conflict: "ACPI Warning: SystemIO
    range ... conflicts with OpRegion ... (\\_GPE.HWM)"). ``taken``: True where the log shows the driver let in
    (acpi_enforce_resources=lax: "System may be unstable or behave erratically"), False where its probe failed
    busy (error -16), None where the log shows neither."""

    driver: str
    chip: str
    address: str
    region: str
    taken: bool | None = None


@record
class ChipProbe:
    """What a probe for sensor chips answered: sensors-detect's summary (each driver it names with the chip it found,
    "Driver `nct6775': ... Chip `Nuvoton NCT6798D Super IO Sensors' (confidence: 9)", or "Sorry, no sensors were
    detected"), or sensors' own "No sensors found!" (no chip's driver loaded). ``found`` holds (driver, chip)."""

    tool: str  # "sensors-detect", "sensors"
    found: tuple[tuple[str, str], ...] = ()


@record
class Machine:
    """Everything read of one machine: its fans, temperatures and GPUs, the kinds of what was read, and what a
    capture shows was done to the control (``app.core.fan.Note`` kinds, with their facts)."""

    fans: tuple[FanFact, ...] = ()
    temperatures: tuple[TempFact, ...] = ()
    gpus: tuple[GpuFact, ...] = ()
    snapshots: int = 1
    curves: tuple[Curve, ...] = ()
    decisions: tuple[Decision, ...] = ()
    levels: tuple[Level, ...] = ()
    calibrations: tuple[Calibration, ...] = ()
    settings: tuple[Setting, ...] = ()
    events: tuple[DaemonEvent, ...] = ()
    bmc_events: tuple[BmcEvent, ...] = ()  # a BMC's event log, in the order it was logged
    heat_events: tuple[HeatEvent, ...] = ()  # a kernel's log of parts acting for heat
    claims: tuple[ChipClaim, ...] = ()  # a kernel's log of a board's sensor chip its firmware's ACPI claims
    probes: tuple[ChipProbe, ...] = ()  # sensors-detect's summary, or sensors finding no chip
    # an ACPI battery read (drivers/acpi/battery.c registers a power supply, which power_supply_hwmon.c shows as hwmon
    # named after it: BAT0, BATT): a portable machine, whose fans are its embedded controller's, not a board chip's
    portable: bool = False
    loads: tuple[GpuLoad, ...] = ()  # each GPU's load where a paste's tool printed it (said beside the fans)
