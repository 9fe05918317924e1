"""The words and numbers that more than one module (or the page) needs, each defined once (CONTRIBUTING.md).

The page gets what it needs inside the snapshot (``GpuSample.passively_cooled``); the one constant it still keeps
a copy of, ``UNATTRIBUTED_FLOOR_BYTES`` in static/app.js, is compared with this one by tests/unit/test_vocabulary.py.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping

BACKENDS = ("auto", "nvidia", "amd", "basic", "simulated")  # FANWHY_BACKEND

MIB = 1 << 20
GIB = 1 << 30

# Clock-event (throttle) reason names, in the order of NVML's nvmlClocksEventReason* bits (bit i is 2**i): the
# NVML backend decodes with this, /metrics labels with it, the page shows these words.
THROTTLE_REASONS = ("gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "sync_boost",
                    "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "display_clock_setting")



def decode_clocks_event_reasons(mask: int) -> tuple[str, ...]:
    """Names of the bits set in an nvmlClocksEventReason mask (nvml.h: bit i is THROTTLE_REASONS[i]; unknown bits
    as hex). NVML's answer and nvidia-smi's ``clocks_event_reasons.active`` (``clocks_throttle_reasons.active``
    before driver 535) are this mask."""
    known = (1 << len(THROTTLE_REASONS)) - 1
    names = [name for bit, name in enumerate(THROTTLE_REASONS) if mask & (1 << bit)]
    if mask & ~known:
        names.append(hex(mask & ~known))
    return tuple(names)


# Of those, "for heat": the verdict calls these a thermal
# throttle ("the cooling is at its limit"). hw_slowdown is NVML's thermal-or-power-brake slowdown, counted here.
HEAT_REASONS = frozenset({"sw_thermal_slowdown", "hw_thermal_slowdown", "hw_slowdown"})
# Every hardware or thermal slowdown, the power brake included: what the throttling alert watches. The software
# power cap (sw_power_cap) is normal under load and is in neither.
SLOWDOWN_REASONS = HEAT_REASONS | {"hw_power_brake_slowdown"}

# nvidia-smi's answers in place of a value (nvidia-smi(1)): "[N/A]" and "[Not Supported]" say the board has no
# such reading; the others that it failed to read one it has (a fan that answers "ERR!" has a fan of unknown speed)
SMI_NOT_THERE = frozenset({"[N/A]", "[Not Supported]", "N/A", ""})
SMI_READ_ERRORS = frozenset({"[Unknown Error]", "[Insufficient Permissions]", "ERR!", "[GPU is lost]",
                             "[GPU requires reset]"})

# Below this, used GPU memory that no process accounts for is driver and context overhead, not a workload.
UNATTRIBUTED_FLOOR_BYTES = 64 * MIB


# a page of processes (/api/gpu/processes, app.attribution.listing): which, in what order, and at most how many
PROCESS_KINDS = ("all", "gpu", "cpu")
PROCESS_SORTS = ("gpu_memory", "sm", "cpu", "pid")
PROCESS_PAGE_CEILING = 1000

def gpu_score(free_fraction: float, utilization_percent: float) -> float:
    """How good a GPU is to place new work on (the GPU Resource Tracking seed's formula): 0.6 x its free share
    of memory + 0.4 x its idle share. 1.0 is an empty, idle GPU."""
    return 0.6 * free_fraction + 0.4 * (100.0 - utilization_percent) / 100.0


def dead_temperature(celsius: float) -> str | None:
    """Why a temperature reading cannot be a real one, or None: an open or shorted thermistor reads -70 to 0, or
    108-127 °C on boards whose other sensors are cool (the caller decides with the others); this rule is the
    absolute one."""
    if celsius <= -40 or celsius == 0:
        return f"{celsius:g} °C: no sensor on this input"
    if celsius == -1:
        return "-1 °C: a placeholder for no reading (i8kutils, some ECs)"
    if celsius >= 127:
        return f"{celsius:g} °C: the input's ceiling (no sensor, or a short)"
    return None


def pwm_percent(pwm: float) -> float:
    """A hwmon duty (``pwmN``, 0-255, 255 is full speed) as a percentage, to one decimal."""
    return round(100.0 * pwm / 255.0, 1)


# a chip named with its bus and address after the driver's name, as libsensors names a chip ("amdgpu-pci-0b00",
# "w83795g-i2c-0-2f", "coretemp-isa-0001") and as FanWhy names one of two devices of one driver ("amdgpu-hwmon5")
_ADDRESSED = re.compile(r"(.+?)[-_](?:(?:isa|pci|acpi|virtual|platform|hid|i2c|usb|spi|mdio|sdio|scsi|nvme)"
                        r"(?:[-_][0-9a-f]+)+|hwmon\d+)", re.IGNORECASE)


def driver_of(name: str | None) -> str | None:
    """The driver's name of a chip named with its bus and address ("amdgpu-pci-0b00": "amdgpu"); any other name as
    it is."""
    device = _ADDRESSED.fullmatch(name.strip()) if name else None
    return device.group(1) if device else name


def apart(names: Mapping[str, str], qualified: Callable[[str, str], str]) -> dict[str, str]:
    """Each entry's name (``hwmon5`` -> ``amdgpu``), or, where two entries or more share one, the ``qualified`` name
    of each (``qualified(entry, name)``): two devices of one driver are two devices."""
    shared = Counter(names.values())
    return {entry: qualified(entry, name) if shared[name] > 1 else name for entry, name in names.items()}
