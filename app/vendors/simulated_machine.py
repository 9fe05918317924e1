"""The demo's machine around its simulated GPUs: a hwmon tree and a BMC, so ``make demo`` shows every step of the
chain from a fan to a process.

A directory shaped like ``/sys/class/hwmon`` (the files and units of real chips, tests/fixtures/hwmon/): a
``k10temp`` whose Tctl follows the CPU the demo's workers really burn (their measured share of the machine's CPU)
through a thermal lag; an ``nct6798`` with the CPU fan on SmartFan IV following CPUTIN (the CPU) through its auto
points, a case fan that software drives after GPU 0's heat (nothing declares it: FanWhy learns it), and an empty
header at 0 RPM. The BMC answers ``ipmitool sdr elist`` lines: inlet and exhaust air, four chassis fans that its
curve drives from the exhaust air (the GPUs' heat; nothing declares it: FanWhy learns it), an empty slot. Updated by
the simulated backend at each of its samples.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import threading
from pathlib import Path

from ..core import scratch

_CPU_CURVE = ((40.0, 77), (55.0, 128), (65.0, 191), (75.0, 255))  # (°C, pwm) SmartFan IV auto points
_INLET_C = 24.0


def _pwm(celsius: float, curve: tuple[tuple[float, int], ...]) -> int:
    if celsius <= curve[0][0]:
        return curve[0][1]
    for (t0, p0), (t1, p1) in itertools.pairwise(curve):
        if celsius <= t1:
            return round(p0 + (p1 - p0) * (celsius - t0) / (t1 - t0))
    return curve[-1][1]


_PREFIX = "fanwhy-demo-"


def _remove_if_mine(root: Path, creator: int) -> None:
    """At exit, the tree goes with the process that made it: a forked child (gunicorn's worker, restarted under
    load) inherits the exit hook but not the tree, and removing it there pulled it from under the next worker."""
    if os.getpid() == creator:
        shutil.rmtree(root, True)


class SimulatedMachine:
    """One per process: the tree lives in a temporary directory removed at exit."""

    _shared: SimulatedMachine | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.root = scratch.make(_PREFIX)
        self.sys_root, self.etc_root = self.root / "sys", self.root / "etc"
        self.etc_root.mkdir()
        self.cpu_c, self.case_pwm = 38.0, 90.0
        self._gpu_c: list[tuple[float, float]] = []  # (°C, W) per GPU
        self._lag: list[float] = []  # GPU 0's temperature, a few seconds back: the case fan reacts late
        self._files: dict[str, str] = {}
        self._closed = False
        self._write_static()
        self.step([], 0.0)
        atexit.register(self._close, os.getpid())

    def _close(self, creator: int) -> None:
        self._closed = True  # the collector's thread may still step the machine while the process exits
        _remove_if_mine(self.root, creator)

    @classmethod
    def shared(cls) -> SimulatedMachine:
        with cls._lock:
            if cls._shared is None:
                cls._shared = SimulatedMachine()
            return cls._shared

    def _write(self, path: str, value: object) -> None:
        file = self.sys_root / "class" / "hwmon" / path
        if self._closed:  # made again after the exit hook removed it, the tree would be left behind
            return
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            # whole or not at all, as a sysfs attribute reads: a file truncated and then written could be read empty
            # in between (seen as a tick with no fan duty, on a busy machine)
            part = file.with_name(f".{file.name}.{os.getpid()}.{threading.get_ident()}")
            part.write_text(f"{value}\n")
            os.replace(part, file)
        except FileNotFoundError:
            if not self._closed:
                raise  # the tree went while the process lives: a real fault

    def _write_static(self) -> None:
        self._write("hwmon0/name", "k10temp")
        self._write("hwmon0/temp1_label", "Tctl")
        self._write("hwmon1/name", "nct6798")
        for n, label in ((1, "SYSTIN"), (2, "CPUTIN")):
            self._write(f"hwmon1/temp{n}_label", label)
        self._write("hwmon1/fan1_label", "Case fan")
        self._write("hwmon1/fan2_label", "CPU fan")
        self._write("hwmon1/pwm1_enable", 1)  # software drives it
        self._write("hwmon1/pwm2_enable", 5)  # SmartFan IV
        self._write("hwmon1/pwm2_temp_sel", 2)
        for k, (celsius, duty) in enumerate(_CPU_CURVE, start=1):
            self._write(f"hwmon1/pwm2_auto_point{k}_temp", int(celsius * 1000))
            self._write(f"hwmon1/pwm2_auto_point{k}_pwm", duty)
        self._write("hwmon1/fan3_input", 0)  # an empty header
        self._write("hwmon1/fan3_min", 0)

    def step(self, gpus: list[tuple[float, float]], dt: float, cpu: float = 0.0) -> None:
        """Move the machine on by ``dt`` seconds: ``gpus`` are each simulated GPU's (°C, W), ``cpu`` the share of the
        machine's CPU its workers burn (%)."""
        self.cpu_c += (38.0 + 0.45 * cpu - self.cpu_c) * min(1.0, dt / 10.0)
        self._gpu_c = list(gpus)
        gpu0 = gpus[0][0] if gpus else 35.0
        self._lag = ([*self._lag, gpu0])[-6:]
        # the case fan: software following GPU 0 five samples late, 35 % below 40 °C, full above 80 °C
        case = max(35.0, min(100.0, 35.0 + (self._lag[0] - 40.0) * 65.0 / 40.0))
        self.case_pwm = round(case * 2.55)
        cpu_pwm = _pwm(self.cpu_c, _CPU_CURVE)
        self._write("hwmon0/temp1_input", int(self.cpu_c * 1000))
        self._write("hwmon1/temp1_input", int((30.0 + 0.1 * cpu) * 1000))
        self._write("hwmon1/temp2_input", int(self.cpu_c * 1000))
        self._write("hwmon1/pwm1", self.case_pwm)
        self._write("hwmon1/fan1_input", round(300 + 1200 * self.case_pwm / 255))
        self._write("hwmon1/pwm2", cpu_pwm)
        self._write("hwmon1/fan2_input", round(500 + 1700 * cpu_pwm / 255))

    def bmc_listing(self) -> str:
        """What ``ipmitool sdr elist`` would print on this machine now."""
        watts = sum(w for _, w in self._gpu_c)
        exhaust = _INLET_C + watts / 60.0  # the cards' heat, carried out by the chassis fans
        rpm = round(3000 + 250 * max(0.0, exhaust - 28.0), -1)  # the BMC's curve: exhaust above 28 °C
        lines = [f"Inlet Temp       | 04h | ok  |  7.1 | {_INLET_C:.0f} degrees C",
                 f"Exhaust Temp     | 01h | ok  |  7.1 | {exhaust:.0f} degrees C"]
        lines += [f"FAN{n}             | 3{n}h | ok  | 29.{n} | {rpm + 60 * n:.0f} RPM" for n in range(1, 5)]
        lines.append("FAN5             | 35h | ns  | 29.5 | No Reading")
        return "\n".join(lines) + "\n"
