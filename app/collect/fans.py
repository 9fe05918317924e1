"""Every fan of the machine, once per tick, each with what it follows and how it is doing.

Sources, each on its own clock so no tick waits: the GPUs' fans come with the GPU samples; the board's, the laptop's
and amdgpu's from hwmon under ``sys_root`` every ``every_s``; the chassis fans and the inlet/exhaust air from the
BMC (``ipmitool sdr elist``) on a thread of their own every ``bmc_every_s`` with a timeout, so a slow BMC never
holds a tick; the fan daemons' configurations under ``etc_root`` (fancontrol, thinkfan, fan2go) once a minute.

What a fan follows, in order of trust: what its controller declares (a daemon's configuration, ``pwm_temp_sel``),
what the hardware is built for (a graphics card's fan cools that GPU), else what its history shows
(``app.collect.fanlearn``, refitted once a minute, one fan per tick). Health: a fan far from its target for longer
than its spin-up (``SPIN_UP_S``: blocked or failing), a fan at full speed while what it follows is cool (a manual
override or lost control), a fan the BMC reports critical; each is the fan's ``alarm``, which the ``fan`` alert rule
holds and notifies like any other.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from ..core.fan import CONFIDENCE_FLOOR, FULL_PERCENT, AirSensor, Fan, fan_state
from ..core.model import GpuSample, HostSample
from ..core.threads import spawn
from ..vendors.nvidia_smi import NvidiaSmiError, run_bounded
from ..vendors.sysfs import read_text
from . import bmc, fancontrol, fandaemons
from .fancontrol import Declared
from .fanlearn import Fit, learn, resample
from .hwmon import chips as hwmon_chips
from .hwmon import read_fans

log = logging.getLogger(__name__)

SPIN_UP_S = 10.0  # a fan reaches a new target within this; farther from it for longer is a fault
OFF_TARGET_RPM = 300  # and off by more than this many RPM (or OFF_TARGET_SHARE of the target)
OFF_TARGET_SHARE = 0.3
COOL_C = 50.0  # a source below this (or below its curve's first point) does not need full speed
LEARN_EVERY_S = 60.0
LEARN_WINDOW_S = 600.0
BmcRun = Callable[[], str]


class BmcError(Exception):
    """ipmitool answered, but with a failure (its exit code and first words)."""


class BmcPoller:
    """``ipmitool sdr elist`` every ``every_s`` on a thread of its own; ``latest`` is the last good listing."""

    def __init__(self, run: BmcRun, every_s: float) -> None:
        self._run, self.every_s = run, every_s
        self.latest: list[bmc.Reading] = []
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread = spawn(self._loop, "fanwhy-bmc")

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.latest, self.error = bmc.parse(self._run()), None
            except (BmcError, NvidiaSmiError, OSError, ValueError) as error:  # run_bounded: NvidiaSmiError = timed out
                self.error = f"BMC not read: {error}"
            self._stop.wait(self.every_s)

    def stop(self) -> None:
        self._stop.set()


def ipmitool(timeout_s: float) -> BmcRun | str:
    """A runner of ``ipmitool sdr elist``, or why there is none (no tool, no IPMI device)."""
    binary = shutil.which("ipmitool")
    if binary is None:
        return "no BMC read: ipmitool is not installed"
    if not any(os.path.exists(p) for p in ("/dev/ipmi0", "/dev/ipmi/0", "/dev/ipmidev/0")):
        return "no BMC read: no IPMI device (/dev/ipmi0): not a server with a BMC, or the ipmi_si module is not loaded"

    def run() -> str:
        result = run_bounded([binary, "sdr", "elist"], timeout_s)
        if result.returncode != 0:
            raise BmcError(f"ipmitool exited {result.returncode}: {result.stdout.strip()[:200]}")
        return result.stdout
    return run


class FanService:
    """Reads, explains and keeps the history of every fan; ``read`` is called once per tick by the collector."""

    def __init__(self, sys_root: str = "/sys", etc_root: str = "/etc", bmc_run: BmcRun | str | None = None,
                 bmc_every_s: float = 10.0, every_s: float = 5.0, clock: Callable[[], float] = time.monotonic):
        self.sys_root, self.etc_root, self.every_s, self._clock = sys_root, etc_root, every_s, clock
        self.bmc_reason = bmc_run if isinstance(bmc_run, str) else None
        self._bmc = BmcPoller(bmc_run, bmc_every_s) if callable(bmc_run) else None
        self._hwmon: tuple[Fan, ...] = ()
        self._hwmon_at = float("-inf")
        self._declared: tuple[Declared, ...] = ()
        self._declared_at = float("-inf")
        self.config_errors: dict[str, str] = {}
        self._speeds: dict[str, deque[tuple[float, float]]] = {}
        self._temps: dict[str, deque[tuple[float, float]]] = {}
        self._fits: dict[str, Fit] = {}
        self._learned_at: dict[str, float] = {}
        self._off_since: dict[str, float] = {}

    def wait_for_bmc(self, timeout_s: float) -> bool:
        """True once the BMC's first listing is in (a replay reads its captured listing this way)."""
        deadline = self._clock() + timeout_s
        while self._bmc is not None and not self._bmc.latest and self._bmc.error is None and self._clock() < deadline:
            time.sleep(0.01)
        return self._bmc is not None and bool(self._bmc.latest)

    def close(self) -> None:
        if self._bmc is not None:
            self._bmc.stop()

    def read(self, gpus: Sequence[GpuSample], host: HostSample) -> tuple[tuple[Fan, ...], tuple[AirSensor, ...]]:
        now = self._clock()
        if now - self._hwmon_at >= self.every_s:
            self._hwmon, self._hwmon_at = self._read_hwmon(), now
        if now - self._declared_at >= LEARN_EVERY_S:
            self._declared, self._declared_at = self._read_configs(), now
        readings = self._bmc.latest if self._bmc is not None else []
        if not readings and not self._hwmon and not any(g.fans for g in gpus):
            return (), ()  # a machine with no fan to read (a passive datacenter card, no BMC): done
        fans = [*(f for g in gpus for f in g.fans), *self._hwmon, *bmc.fans(readings)]
        air = tuple(AirSensor(role, r.name, r.value) for role, r in bmc.temperatures(readings) if r.value is not None)
        temps = self._temperatures(gpus, host, air)
        explained = tuple(self._explain(fan, temps, now) for fan in fans)
        self._record(explained, temps, now)
        self._learn_one(now)
        return explained, air

    # -- reading ----------------------------------------------------------------------------
    def _read_hwmon(self) -> tuple[Fan, ...]:
        try:
            return read_fans(self.sys_root)
        except OSError as error:
            log.warning("hwmon fans not read: %s", error)
            return ()

    def _read_configs(self) -> tuple[Declared, ...]:
        root = Path(self.etc_root)
        readers = ((root / "fancontrol", lambda t: fandaemons.Read(fancontrol.parse(t))),
                   (root / "thinkfan.yaml", fandaemons.thinkfan), (root / "thinkfan.conf", fandaemons.thinkfan),
                   (root / "fan2go" / "fan2go.yaml", fandaemons.fan2go))
        found: list[Declared] = []
        self.config_errors = {}
        for path, reader in readers:
            try:
                text = path.read_text(errors="replace")
            except OSError:
                continue
            read = reader(text)
            found.extend(read.declared)
            if read.error:
                self.config_errors[str(path)] = read.error
        return tuple(found)

    @staticmethod
    def _temperatures(gpus: Sequence[GpuSample], host: HostSample, air: Sequence[AirSensor]
                      ) -> dict[str, float]:
        """Every temperature a fan could follow, by the name a person reads ("k10temp Tctl", "GPU 0", "BMC Inlet
        Temp"): its chip, a space, its label (``heat_of`` reads what heats it from the two)."""
        temps = {f"GPU {g.index}": g.temperature_c for g in gpus if g.temperature_c is not None}
        for s in host.temperatures:
            temps[f"{s.chip} {s.label}"] = s.temperature_c
        for a in air:
            temps[f"BMC {a.label}"] = a.temperature_c
        return temps

    # -- explaining ---------------------------------------------------------------------------
    def _declared_for(self, fan: Fan) -> Declared | None:
        for d in self._declared:
            if d.chip == fan.chip and (f"fan{fan.channel}_input" in d.fans or (not d.fans and (
                    d.pwm == f"pwm{fan.channel}" or d.chip == "thinkpad"))):
                return d
        return None

    def _sensor_name(self, chip: str | None, source: str | None) -> str | None:
        """A declared source's name as the temperatures are named ("k10temp Tctl" for k10temp's temp1_input)."""
        if chip is None or source is None:
            return None
        index = source.removesuffix("_input")
        for chip_dir in hwmon_chips(self.sys_root):
            if read_text(chip_dir / "name") == chip:
                return f"{chip} {read_text(chip_dir / f'{index}_label') or index}"
        return f"{chip} {index}"

    def _explain(self, fan: Fan, temps: dict[str, float], now: float) -> Fan:
        if fan.dead:
            return replace(fan, state="dead")
        declared = self._declared_for(fan)
        if declared is not None:
            name = self._sensor_name(declared.source_chip, declared.source)
            fan = replace(fan, source=declared.follows or name, source_from="declared",
                          curve=declared.curve or fan.curve, floor_percent=declared.floor_percent or fan.floor_percent,
                          controller=f"{declared.daemon} (its configuration under {self.etc_root})",
                          source_c=temps.get(name) if name else None)
        elif fan.source and fan.source_from is None:  # the chip's own declaration (pwm_temp_sel)
            fan = replace(fan, source=f"{fan.chip} {fan.source}", source_from="declared")
        elif fan.gpu_index is not None:
            fan = replace(fan, source=f"GPU {fan.gpu_index}")
        elif fan.chip in ("amdgpu", "radeon"):
            fan = replace(fan, source=_hottest_of_card(fan.chip, temps), source_from="design", cools="the GPU")
        fit = self._fits.get(fan.id)
        if fan.source_from is None and fit is not None and fit.confidence >= CONFIDENCE_FLOOR:
            fan = replace(fan, source=fit.source, source_from="learned", confidence=fit.confidence,
                          curve=fit.curve, hysteresis_c=fit.hysteresis_c,
                          floor_rpm=round(fit.floor) if fit.floor is not None and fan.percent is None else None,
                          floor_percent=fan.floor_percent or (fit.floor if fan.percent is not None else None))
        if fan.source in temps:
            fan = replace(fan, source_c=temps[fan.source])
        fan = replace(fan, alarm=fan.alarm or self._health(fan, now))
        return replace(fan, state=fan_state(fan))

    def _health(self, fan: Fan, now: float) -> str | None:
        """Far from its target longer than a spin-up, or at full speed while its source is cool."""
        off = None
        if fan.target_rpm and fan.rpm is not None and not fan.stopped:
            gap = abs(fan.rpm - fan.target_rpm)
            if gap > max(OFF_TARGET_RPM, OFF_TARGET_SHARE * fan.target_rpm):
                off = f"off target: {fan.rpm:,} RPM against a target of {fan.target_rpm:,} RPM"
        if off is None:
            self._off_since.pop(fan.id, None)
        else:
            since = self._off_since.setdefault(fan.id, now)
            if now - since >= SPIN_UP_S:
                return f"{off} for {now - since:.0f} s (blocked, or failing)"
        cool = fan.curve[0][0] if fan.curve else COOL_C
        full = (fan.percent is not None and fan.percent >= FULL_PERCENT) or fan.control == "full-speed"
        if full and fan.source_c is not None and fan.source_c < cool:
            how = "no control (pwm_enable 0)" if fan.control == "full-speed" else "a manual override or lost control"
            return f"full speed while {fan.source} is at {fan.source_c:.0f} °C: {how}"
        return None

    # -- learning ----------------------------------------------------------------------------
    def _record(self, fans: Sequence[Fan], temps: dict[str, float], now: float) -> None:
        """The speeds of the fans whose source is learned (or not known yet), and every temperature while there is
        one: a machine whose fans are all declared (or that has none) keeps no history here."""
        keep = int(LEARN_WINDOW_S) + 60
        learning = False
        for fan in fans:
            speed = fan.percent if fan.percent is not None else fan.rpm
            if speed is None or fan.dead or fan.source_from not in (None, "learned"):
                continue  # declared or built in: nothing to learn
            self._speeds.setdefault(fan.id, deque(maxlen=keep)).append((now, float(speed)))
            learning = True
        if learning:
            for name, celsius in temps.items():
                self._temps.setdefault(name, deque(maxlen=keep)).append((now, celsius))

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


def _hottest_of_card(chip: str, temps: dict[str, float]) -> str:
    """An AMD card's fan source, which the card does not say: the hottest of its edge, junction and memory sensors
    (memory at 60 °C wakes an idle card's fans while its edge reads 37 °C). A guess, and worded as one."""
    named = [(temps[f"{chip} {s}"], f"{chip} {s}") for s in ("edge", "junction", "mem") if f"{chip} {s}" in temps]
    return max(named)[1] if named else f"{chip} edge"
