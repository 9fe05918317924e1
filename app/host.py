"""The CPU side of the machine, through psutil: the fan may be the CPU's."""

from __future__ import annotations

import socket
import time
from typing import Any

import psutil

from app.model import HostFan, HostSample, HostSensor, frozen_map

# Chips whose readings are the CPU package temperature, in order of preference.
_CPU_CHIPS = ("coretemp", "k10temp", "zenpower", "cpu_thermal", "cpu-thermal", "acpitz")
_CPU_LABELS = ("package id 0", "tctl", "tdie", "")


class HostSampler:
    """Reads CPU %, load, memory, temperatures and fans once per tick."""

    def __init__(self, sensors_every_s: float = 5.0) -> None:
        self.hostname = socket.gethostname()
        self.sensors_every_s = sensors_every_s
        self._sensors_at = float("-inf")
        self._sensors: tuple[dict[str, Any], dict[str, Any], dict[str, str]] = ({}, {}, {})
        psutil.cpu_percent(None)  # prime: the next call measures since now

    def sample(self) -> HostSample:
        unsupported: dict[str, str] = {}
        try:
            load: tuple[float, float, float] | None = psutil.getloadavg()
        except (AttributeError, OSError) as error:
            load, unsupported["load_average"] = None, f"not available: {error}"
        memory = psutil.virtual_memory()
        now = time.monotonic()
        if now - self._sensors_at >= self.sensors_every_s:  # hwmon reads: every few seconds is enough
            reasons: dict[str, str] = {}
            self._sensors = (_read(psutil, "sensors_temperatures", reasons, "temperatures"),
                             _read(psutil, "sensors_fans", reasons, "fans"), reasons)
            self._sensors_at = now
        temperatures, fans, reasons = self._sensors
        unsupported.update(reasons)
        sensors = tuple(
            HostSensor(chip=chip, label=t.label or chip, temperature_c=float(t.current),
                       high_c=_positive(t.high), critical_c=_positive(t.critical))
            for chip, entries in sorted(temperatures.items()) for t in entries if t.current is not None
        )
        fan_rows = tuple(
            HostFan(chip=chip, label=f.label or f"{chip} fan", rpm=int(f.current))
            for chip, entries in sorted(fans.items()) for f in entries
        )
        if not fan_rows:
            unsupported.setdefault("fans", "no fan sensor exposed by the kernel (hwmon)")
        cpu_temp = cpu_temperature(sensors)
        if cpu_temp is None:
            unsupported["cpu_temperature_c"] = "no CPU temperature sensor exposed by the kernel (hwmon)"
        return HostSample(
            hostname=self.hostname,
            cpu_percent=psutil.cpu_percent(None),
            cpu_count=psutil.cpu_count(),
            load_average=tuple(load) if load else None,  # type: ignore[arg-type]
            memory_used_bytes=memory.total - memory.available,
            memory_total_bytes=memory.total,
            cpu_temperature_c=cpu_temp,
            temperatures=sensors,
            fans=fan_rows,
            unsupported=frozen_map(unsupported),
        )


def cpu_temperature(sensors: tuple[HostSensor, ...]) -> float | None:
    """The CPU package temperature when a known chip reports it, else None."""
    for chip in _CPU_CHIPS:
        readings = [s for s in sensors if s.chip == chip]
        for label in _CPU_LABELS:
            for sensor in readings:
                if not label or sensor.label.lower() == label:
                    return sensor.temperature_c
    return None


def _read(module: Any, name: str, unsupported: dict[str, str], field: str) -> dict[str, list[Any]]:
    reader = getattr(module, name, None)
    if reader is None:
        unsupported[field] = f"not available on this platform (psutil has no {name})"
        return {}
    try:
        return reader() or {}
    except (OSError, RuntimeError) as error:
        unsupported[field] = f"not readable: {error}"
        return {}


def _positive(value: float | None) -> float | None:
    return float(value) if value else None
