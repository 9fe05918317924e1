"""Every fan of the machine, once per tick, each with what it follows and how it is doing.

Sources, each on its own clock (``app.collect.sources``) so no tick waits and one bad source costs only itself: the
GPUs' fans come with the GPU samples (each card's row fails alone); each hwmon chip under ``sys_root`` (the board's,
the laptop's, amdgpu's fans and every temperature) every ``every_s``; the chassis fans and the inlet/exhaust air
from the BMC (``ipmitool sdr elist``) every ``bmc_every_s``; each fan daemon's configuration under ``etc_root``
(fancontrol, thinkfan, fan2go) once a minute; and the sources registered in ``extra`` (``app.collect.registry``).
Chips and configuration files are looked for again every ``DISCOVER_EVERY_S``: a chip that vanished stops its clock.

What a fan follows, in order of trust: what its controller declares (a daemon's configuration, ``pwm_temp_sel``),
what the hardware is built for (a graphics card's fan cools that GPU), else what its history shows
(``app.collect.fanlearn``, refitted once a minute, one fan per tick). How each fan is doing (at rest, stalled,
failed, off its target past its spin-up, at full speed for no heat) is the fan wing's judgement over the tick's
facts (``app.fans.judged``): the same rules the verdict words, never a second copy here; a fan's ``alarm`` is what
the ``fan`` alert rule holds and notifies like any other.
"""

from __future__ import annotations

import logging
import re
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace

from ..core.fan import CONFIDENCE_FLOOR, AirSensor, Fan
from ..core.model import GpuSample, HostSample, HostSensor, frozen_map
from ..core.vocabulary import driver_of
from ..fans import adapt
from ..fans.answer import judged
from ..fans.control_words import declared_said
from ..fans.judged import judge
from ..fans.rules import far_from_target
from ..vendors.sysfs import chip_names
from .bmc import BmcRun, BmcSource
from .fancontrol import Declared
from .fandaemons import ConfigSource, config_sources
from .fanlearn import Fit, learn, resample
from .hwmon import ChipSource, apart
from .hwmon import chips as hwmon_chips
from .sources import Reading, Source, SourceClock, SourceStatus

log = logging.getLogger(__name__)

LEARN_EVERY_S = 60.0
LEARN_WINDOW_S = 600.0
DISCOVER_EVERY_S = 30.0  # how often chips and configuration files that come and go are looked for


class FanService:
    """Reads, explains and keeps the history of every fan; ``read`` is called once per tick by the collector and
    never waits for a source: each is read on its own clock (``app.collect.sources``)."""

    def __init__(self, sys_root: str = "/sys", etc_root: str = "/etc", bmc_run: BmcRun | str | None = None,
                 bmc_every_s: float = 10.0, every_s: float = 5.0, clock: Callable[[], float] = time.monotonic,
                 threaded: bool = False, extra: Sequence[Source] = (), bmc_timeout_s: float = 10.0,
                 etc_said: str | None = None):
        self.sys_root, self.etc_root, self.every_s, self._clock = sys_root, etc_root, every_s, clock
        self.etc_said = etc_said or f"under {etc_root}"  # where a daemon's configuration is, in words
        self.threaded = threaded
        self.bmc_reason = bmc_run if isinstance(bmc_run, str) else None
        fixed: list[Source] = [*extra]
        if callable(bmc_run):
            fixed.append(BmcSource(bmc_run, period_s=bmc_every_s, timeout_s=bmc_timeout_s + 2))
        self._clocks: dict[str, SourceClock] = {}
        for source in fixed:
            self._start(source)
        self._fixed = frozenset(self._clocks)
        self._discovered_at = float("-inf")
        self._speeds: dict[str, deque[tuple[float, float]]] = {}
        self._temps: dict[str, deque[tuple[float, float]]] = {}
        self._fits: dict[str, Fit] = {}
        self._learned_at: dict[str, float] = {}
        self._off_since: dict[str, float] = {}
        self._names: dict[str, str] = {}
        if threaded:  # the sources start reading now, beside the backend's start
            self._discover(clock())

    def _start(self, source: Source) -> None:
        self._clocks[source.key] = SourceClock(source, self._clock, threaded=self.threaded)

    def wait_first(self, timeout_s: float) -> None:
        """Until every source read once, or ``timeout_s`` (the collector's first tick, once, so that the first answer
        has its fans; a replay reads its captures this way)."""
        self._discover(self._clock())
        deadline = self._clock() + timeout_s
        for source_clock in list(self._clocks.values()):
            source_clock.poll(self._clock())
            source_clock.wait_first(deadline)

    def close(self) -> None:
        for source_clock in self._clocks.values():
            source_clock.stop()

    @property
    def statuses(self) -> tuple[SourceStatus, ...]:
        """Where each source stands now."""
        now = self._clock()
        return tuple(source_clock.status(now) for source_clock in list(self._clocks.values()))

    @property
    def bmc(self) -> tuple[bool, str | None]:
        """Whether the BMC is read now, and why not: never asked (its reason at the start), or its source waiting
        for a first answer or failing (``/api/fans``' ``bmc``)."""
        if self.bmc_reason is not None:
            return False, self.bmc_reason
        clock = self._clocks.get("bmc")
        if clock is None:
            return False, "no BMC source"
        status = clock.status(self._clock())
        if status.state == "ok":
            return True, None
        return False, status.reason or "waiting for the BMC's first answer"

    @property
    def config_errors(self) -> dict[str, str]:
        """Why a fan daemon's configuration declares nothing: its path -> the reason."""
        now = self._clock()
        return {c.source.name: reason for c in list(self._clocks.values()) if isinstance(c.source, ConfigSource)
                and (reason := c.status(now).reason)}

    def problems(self) -> list[str]:
        """The sources failing at the last read, and the fan daemons' configurations refused (what such a daemon
        does to its fans is then not known), each one line (for /api/health)."""
        failing = [f"fan source {s.name}: {s.reason}" + (f"; its last reading is {s.age_s:.0f} s old" if s.age_s
                                                           is not None else "")
                   for s in self.statuses if s.state == "failing"]
        return failing + [f"fan daemon configuration {path}: {why}" for path, why in self.config_errors.items()
                          if not any(path in line for line in failing)]

    def read(self, gpus: Sequence[GpuSample], host: HostSample) -> tuple[tuple[Fan, ...], tuple[AirSensor, ...]]:
        now = self._clock()
        self._discover(now)
        found = self._gather(now)
        if not found.fans and not any(g.fans for g in gpus):
            return (), ()  # a machine with no fan to read (a passive datacenter card, no BMC): done
        self._names = dict(found.names)
        read_here = {f.id for f in found.fans}  # a card's fan a source reads too (its hwmon chip) is that record
        fans = [*(f for g in gpus for f in g.fans if f.id not in read_here), *found.fans]
        temps = self._temperatures(gpus, host, found.air, found.temperatures)
        declared = found.declared
        explained = tuple(self._explain(fan, temps, now, declared) for fan in fans)
        self._record(explained, temps, now)
        self._learn_one(now)
        facts = adapt.machine((), explained, host.temperatures, gpus, air=found.air)
        return judge(explained, facts, judged(facts)[0]), found.air

    def temperatures(self) -> tuple[tuple[HostSensor, ...], dict[str, str]]:
        """The machine's temperatures from its sources' latest readings (the host sample's, when the sources are
        read on their own clocks): a failing source's are left out with the reason."""
        now = self._clock()
        self._discover(now)
        found: list[HostSensor] = []
        left_out: dict[str, str] = {}
        for source_clock in list(self._clocks.values()):
            status, reading = source_clock.status(now), source_clock.latest
            if status.state == "failing":
                left_out[source_clock.source.name] = f"not read: {status.reason}"
            elif reading is not None:
                found.extend(reading.temperatures)
                left_out.update(reading.left_out)
        return apart(found, left_out), left_out

    # -- reading ----------------------------------------------------------------------------
    def _discover(self, now: float) -> None:
        """Start a clock for each hwmon chip and configuration file that appeared; stop those whose chip or file is
        gone (a hot-unplugged device), and restart one whose name changed (a second device of its driver came or
        went). A listing of folders and the chips' name files, nothing read from a driver."""
        if now - self._discovered_at < min(DISCOVER_EVERY_S, self.every_s or DISCOVER_EVERY_S):
            return
        self._discovered_at = now
        wanted: dict[str, Source] = {}
        named = chip_names(self.sys_root)  # two devices of one driver: each by its address, as lm-sensors names it
        for chip_dir in hwmon_chips(self.sys_root):
            wanted[chip_dir.name] = ChipSource(chip_dir, period_s=self.every_s, as_name=named.get(chip_dir.name))
        for config in config_sources(self.etc_root):
            wanted[config.key] = config
        for key in [k for k in self._clocks if k not in wanted and k not in self._fixed]:
            self._clocks.pop(key).stop()
        for key, source in wanted.items():
            if isinstance(source, ChipSource) and key in self._clocks and self._clocks[key].source != source:
                # renamed: a second device of its driver came or went
                self._clocks.pop(key).stop()
            if key not in self._clocks:
                self._start(source)

    def _gather(self, now: float) -> Reading:
        """Every source's latest reading, merged: a failing source's fans are marked stale with their age, its
        temperatures left out."""
        fans: list[Fan] = []
        temps: list[HostSensor] = []
        air: list[AirSensor] = []
        declared: list[Declared] = []
        names: dict[str, str] = {}
        for source_clock in list(self._clocks.values()):
            source_clock.poll(now)
            status, reading = source_clock.status(now), source_clock.latest
            if reading is None:
                continue
            if status.state == "failing":
                age = round(status.age_s or 0.0, 1)
                fans.extend(replace(f, stale_s=age) for f in reading.fans)
                continue
            fans.extend(reading.fans)
            if not isinstance(source_clock.source, ChipSource):  # the chips' are the host sample's, judged whole
                temps.extend(reading.temperatures)
            air.extend(reading.air)
            declared.extend(reading.declared)
            names.update(reading.names)
        return Reading(fans=tuple(fans), temperatures=tuple(temps), air=tuple(air), declared=tuple(declared),
                       names=names)

    @staticmethod
    def _temperatures(gpus: Sequence[GpuSample], host: HostSample, air: Sequence[AirSensor],
                      sources: Sequence[HostSensor] = ()) -> dict[str, float]:
        """Every temperature a fan could follow, by the name a person reads ("k10temp Tctl", "GPU 0", "BMC Inlet
        Temp"): its chip, a space, its label (``heat_of`` reads what heats it from the two)."""
        temps = {f"GPU {g.index}": g.temperature_c for g in gpus if g.temperature_c is not None}
        for s in (*sources, *host.temperatures):  # the host's last: what it judged (a junk input left out) wins
            temps[f"{s.chip} {s.label}"] = s.temperature_c
        for a in air:
            temps[f"BMC {a.label}"] = a.temperature_c
        return temps

    # -- explaining ---------------------------------------------------------------------------
    @staticmethod
    def _declared_for(fan: Fan, declared: Sequence[Declared]) -> Declared | None:
        for d in declared:
            if d.chip == fan.chip and (f"fan{fan.channel}_input" in d.fans or (not d.fans and (
                    d.pwm == f"pwm{fan.channel}" or d.chip == "thinkpad"))):
                return d
        return None

    def _sensor_name(self, chip: str | None, source: str | None) -> str | None:
        """A declared source's name as the temperatures are named ("k10temp Tctl" for k10temp's temp1_input)."""
        if chip is None or source is None:
            return None
        index = source.removesuffix("_input")
        return self._names.get(f"{chip} {index}", f"{chip} {index}")

    def _explain(self, fan: Fan, temps: dict[str, float], now: float, declarations: Sequence[Declared]) -> Fan:
        """A fan with what it follows and how long it has been off its target: the facts the fan wing judges."""
        if fan.dead:
            return fan
        fan = self._sourced(fan, temps, declarations)
        if fan.source in temps:
            fan = replace(fan, source_c=temps[fan.source])
        if not far_from_target(fan.rpm, fan.target_rpm):
            self._off_since.pop(fan.id, None)
            return fan
        return replace(fan, off_target_s=round(now - self._off_since.setdefault(fan.id, now), 1))

    def _sourced(self, fan: Fan, temps: dict[str, float], declarations: Sequence[Declared]) -> Fan:
        """A fan with what it follows, the surest way known first: a daemon's configuration or the chip's own
        declaration, the design (a card's fan), a confident fit of its history, and last its name alone."""
        declared = self._declared_for(fan, declarations)
        if declared is not None:
            fan = self._as_declared(fan, declared, temps)
        elif fan.source and fan.source_from is None:  # the chip's own declaration (pwm_temp_sel)
            fan = replace(fan, source=f"{fan.chip} {fan.source}", source_from="declared")
        elif fan.gpu_index is not None:
            fan = replace(fan, source=f"GPU {fan.gpu_index}")
        elif driver_of(fan.chip) in ("amdgpu", "radeon"):  # none of the card's temperatures read: no source named
            hottest = _hottest_of_card(fan.chip, temps)
            fan = replace(fan, source=hottest, source_from="design" if hottest else None, cools="the GPU")
        fit = self._fits.get(fan.id)
        if fan.source_from is None and fit is not None and fit.confidence >= CONFIDENCE_FLOOR:
            learned_rpm = round(fit.floor) if fit.floor is not None and fan.percent is None else None
            fan = replace(fan, source=fit.source, source_from="learned", confidence=fit.confidence,
                          curve=fit.curve, hysteresis_c=fit.hysteresis_c, floor_rpm=learned_rpm or fan.floor_rpm,
                          floor_percent=fan.floor_percent or (fit.floor if fan.percent is not None else None))
        if fan.source is None and fan.source_from is None and (named := _named_source(fan, temps)) is not None:
            fan = replace(fan, source=named, source_from="named")
        return fan

    def _as_declared(self, fan: Fan, declared: Declared, temps: dict[str, float]) -> Fan:
        """A fan as a daemon's configuration declares it: its source, curve, floor and the daemon as controller."""
        name = self._sensor_name(declared.source_chip, declared.source)
        controller = declared_said(declared.daemon, self.etc_said)
        if fan.level == "auto":  # an embedded controller's own level: the daemon gave the fan back to it
            controller = fan.controller or controller
        elif fan.level:
            controller = f"{controller}, at level {fan.level}"
        return replace(fan, source=declared.follows or name, source_from="declared", sources=declared.follows_all,
                       curve=declared.curve or fan.curve, floor_percent=declared.floor_percent or fan.floor_percent,
                       controller=controller, source_c=temps.get(name) if name else None)

    # -- learning ----------------------------------------------------------------------------
    def _record(self, fans: Sequence[Fan], temps: dict[str, float], now: float) -> None:
        """The speeds of the fans whose source is learned (or not known yet), and every temperature while there is
        one: a machine whose fans are all declared (or that has none) keeps no history here."""
        keep = int(LEARN_WINDOW_S) + 60
        learning = False
        for fan in fans:
            speed = fan.percent if fan.percent is not None else fan.rpm
            if speed is None or fan.dead or fan.source_from not in (None, "learned", "named"):
                continue  # declared or built in: nothing to learn
            self._speeds.setdefault(fan.id, deque(maxlen=keep)).append((now, float(speed)))
            learning = True
        if learning:
            for name, celsius in temps.items():
                self._temps.setdefault(name, deque(maxlen=keep)).append((now, celsius))
        self._prune({fan.id for fan in fans}, now - LEARN_WINDOW_S)

    def _prune(self, present: set[str], horizon: float) -> None:
        """Forget the fans and temperatures gone for a learning window (a BMC that once listed thousands of fans
        must not cost memory and time for ever)."""
        gone = [fid for fid, points in self._speeds.items() if fid not in present and points[-1][0] < horizon]
        for fid in gone:
            for state in (self._speeds, self._fits, self._learned_at):
                state.pop(fid, None)
        for fid in [fid for fid in self._off_since if fid not in present]:
            del self._off_since[fid]
        for name in [name for name, points in self._temps.items() if points[-1][0] < horizon]:
            del self._temps[name]

    def _learn_one(self, now: float) -> None:
        """Refit the fan whose fit is oldest, at most one a tick and each at most once a minute."""
        due = [fid for fid in self._speeds if now - self._learned_at.get(fid, float("-inf")) >= LEARN_EVERY_S]
        if not due:
            return
        fid = min(due, key=lambda f: self._learned_at.get(f, float("-inf")))
        self._learned_at[fid] = now
        points = list(self._speeds[fid])
        start = max(points[0][0], now - LEARN_WINDOW_S)
        candidates = {name: resample(list(series), start, now) for name, series in self._temps.items()
                      if series and series[0][0] <= start}
        fit = learn(resample(points, start, now), candidates)
        if fit is not None:
            self._fits[fid] = fit


def _hottest_of_card(chip: str, temps: dict[str, float]) -> str | None:
    """An AMD card's fan source, which the card does not say: the hottest of its edge, junction and memory sensors
    (memory at 60 °C wakes an idle card's fans while its edge reads 37 °C). A guess, and worded as one."""
    named = [(temps[f"{chip} {s}"], f"{chip} {s}") for s in ("edge", "junction", "mem") if f"{chip} {s}" in temps]
    return max(named)[1] if named else None


_NOT_A_PLACE = frozenset({"fan", "sys", "system", "chassis", "case", "aux", "opt", "pump"})


def _named_source(fan: Fan, temps: dict[str, float]) -> str | None:
    """A board fan's source by its name alone, when nothing else says it: the temperature of its own chip whose
    label starts with the same place ("VRM HS" and "VRM", "CPU Fan" and "CPU"); None when no label names a place."""
    words = re.findall(r"[a-z]+", (fan.label or "").lower())
    if not words or words[0] in _NOT_A_PLACE:
        return None
    for name in temps:
        chip, _, label = name.partition(" ")
        first = re.findall(r"[a-z]+", label.lower())
        if chip == fan.chip and first and first[0] == words[0]:
            return name
    return None


def with_fans(gpu: GpuSample, fans: Sequence[Fan]) -> GpuSample:
    """One fan list: a card's ``fans`` are its fans as explained (state, source), not the backend's raw copy, also
    when they were read on their own clock (not in the sample); where none of them is explained here (a card whose
    fan a hwmon chip reads), the backend's. Its fan speed, speeds and RPM are read from that list."""
    ids = {f.id for f in gpu.fans}  # the card's fan a source reads as its own (its hwmon chip) is the card's too
    own = tuple(f for f in fans if f.gpu_index == gpu.index or f.id in ids)
    if not own:
        return gpu
    speeds = any(f.percent is not None for f in own)
    unsupported = {k: v for k, v in gpu.unsupported.items() if not (speeds and k == "fan_speed_percent")}
    return replace(gpu, fans=own, unsupported=frozen_map(unsupported))
