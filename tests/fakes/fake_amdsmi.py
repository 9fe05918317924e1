"""A table-driven fake of the amdsmi 7.x Python surface FanWhy uses.

Shapes follow amdsmi_interface.py of ROCm 6.x/7.x: dicts with "N/A" where a card lacks a field, power in
W (socket_power, ROCm 7's unified field) with limits in µW, VRAM in MB, per-process engine time in ns.
A cell may be an exception (raised) or a callable. Tested on fakes only: no AMD GPU was available.
"""

from __future__ import annotations

import copy
import enum
from typing import Any


class AmdSmiException(Exception):
    pass


class AmdSmiLibraryException(AmdSmiException):
    def __init__(self, code: int):
        super().__init__(f"amdsmi status {code}")
        self.err_code = code

    def get_error_code(self) -> int:
        return self.err_code


class amdsmi_wrapper:  # amdsmi_status_t's values (ROCm 6/7)
    AMDSMI_STATUS_NOT_SUPPORTED = 2
    AMDSMI_STATUS_NO_PERM = 10
    AMDSMI_STATUS_INIT_ERROR = 18
    AMDSMI_STATUS_NOT_INIT = 32
    AMDSMI_STATUS_DRIVER_NOT_LOADED = 34


class AmdSmiInitFlags(enum.IntEnum):
    INIT_AMD_GPUS = 2


class AmdSmiTemperatureType(enum.IntEnum):
    EDGE = 0
    HOTSPOT = 1
    VRAM = 2


class AmdSmiTemperatureMetric(enum.IntEnum):
    CURRENT = 0
    CRITICAL = 2
    EMERGENCY = 4


class AmdSmiClkType(enum.IntEnum):
    SYS = 0
    GFX = 0
    MEM = 4


NOT_SUPPORTED = AmdSmiLibraryException(amdsmi_wrapper.AMDSMI_STATUS_NOT_SUPPORTED)
NO_PERMISSION = AmdSmiLibraryException(amdsmi_wrapper.AMDSMI_STATUS_NO_PERM)


# A card's table: field name, or (call, sensor, metric) for the calls that take arguments -> what amdsmi answered.
Card = dict[str | tuple[str, int] | tuple[str, int, int], Any]


def mi300x() -> Card:
    """A datacenter card: no fan, ROCm 7 power fields."""
    return {
        "asic": {"market_name": "AMD Instinct MI300X", "vendor_id": "0x1002"},
        "board": {"product_name": "AMD Instinct MI300X OAM"},
        "uuid": "4eff74a0-0000-1000-80e9-a1b2c3d4e5f6", "bdf": "0000:0c:00.0",
        "activity": {"gfx_activity": 87, "umc_activity": 41, "mm_activity": "N/A"},
        "vram": {"vram_total": 196592, "vram_used": 65536},
        ("temp", 0, 0): NOT_SUPPORTED, ("temp", 1, 0): 71, ("temp", 2, 0): 63,
        ("temp", 0, 2): NOT_SUPPORTED, ("temp", 0, 4): NOT_SUPPORTED,
        "fan_speed": NOT_SUPPORTED, "fan_speed_max": NOT_SUPPORTED, "fan_rpm": NOT_SUPPORTED,
        "power": {"socket_power": 612, "current_socket_power": 612, "average_socket_power": "N/A",
                  "gfx_voltage": "N/A", "soc_voltage": "N/A", "mem_voltage": "N/A", "power_limit": 750000000},
        ("clock", 0): {"clk": 2100, "min_clk": 500, "max_clk": 2100, "clk_locked": False, "clk_deep_sleep": False},
        ("clock", 4): {"clk": 1300, "min_clk": 900, "max_clk": 1300},
        "energy": {"energy_accumulator": 1_000_000_000, "counter_resolution": 15.3, "timestamp": 1},
        "processes": [{"name": "python3", "pid": 4242, "mem": 60 * 2**30,
                       "engine_usage": {"gfx": 10_000_000_000, "enc": 0},
                       "memory_usage": {"gtt_mem": 2**20, "cpu_mem": 2**22, "vram_mem": 60 * 2**30},
                       "cu_occupancy": "N/A"}],
    }


def radeon() -> Card:
    """A desktop card with a fan; older power fields; a user without permission for the process list."""
    return {
        "asic": {"market_name": "Radeon RX 7900 XTX", "vendor_id": "0x1002"},
        "board": {"product_name": "N/A"},
        "uuid": "2dff744c-0000-1000-80ab-000000000001", "bdf": "0000:03:00.0",
        "activity": {"gfx_activity": 12, "umc_activity": 3, "mm_activity": 0},
        "vram": {"vram_total": 24560, "vram_used": 1800},
        ("temp", 0, 0): 54, ("temp", 1, 0): 61, ("temp", 2, 0): 58, ("temp", 0, 2): 100, ("temp", 0, 4): 105,
        "fan_speed": 88, "fan_speed_max": 255, "fan_rpm": 1180,
        "power": {"current_socket_power": "N/A", "average_socket_power": 61, "power_limit": 303},
        ("clock", 0): {"clk": 1200, "min_clk": 500, "max_clk": 2500}, ("clock", 4): {"clk": 96, "max_clk": 1250},
        "energy": NOT_SUPPORTED,
        "processes": NO_PERMISSION,
    }


class FakeAmdSmi:
    AmdSmiException = AmdSmiException
    AmdSmiLibraryException = AmdSmiLibraryException
    amdsmi_wrapper = amdsmi_wrapper
    AmdSmiInitFlags = AmdSmiInitFlags
    AmdSmiTemperatureType = AmdSmiTemperatureType
    AmdSmiTemperatureMetric = AmdSmiTemperatureMetric
    AmdSmiClkType = AmdSmiClkType

    def __init__(self, cards: list[Card], init_error: Exception | None = None):
        self.cards = [copy.deepcopy(c) for c in cards]
        self.init_error = init_error
        self.initialised = False

    def set(self, index: int, key: Any, value: Any) -> None:
        self.cards[index][key] = value

    def _cell(self, handle: int, key: Any) -> Any:
        if not self.initialised:
            raise AmdSmiLibraryException(32)
        cell = self.cards[handle].get(key, NOT_SUPPORTED)
        if isinstance(cell, BaseException):
            raise cell
        return copy.deepcopy(cell(handle) if callable(cell) else cell)

    def amdsmi_init(self, flags: int = 0) -> None:
        if self.init_error is not None:
            raise self.init_error
        self.initialised = True

    def amdsmi_shut_down(self) -> None:
        self.initialised = False

    def amdsmi_get_processor_handles(self) -> list[int]:
        return list(range(len(self.cards)))

    def amdsmi_get_gpu_asic_info(self, h: int) -> dict[str, Any]:
        return self._cell(h, "asic")

    def amdsmi_get_gpu_board_info(self, h: int) -> dict[str, Any]:
        return self._cell(h, "board")

    def amdsmi_get_gpu_device_uuid(self, h: int) -> str:
        return self._cell(h, "uuid")

    def amdsmi_get_gpu_device_bdf(self, h: int) -> str:
        return self._cell(h, "bdf")

    def amdsmi_get_gpu_activity(self, h: int) -> dict[str, Any]:
        return self._cell(h, "activity")

    def amdsmi_get_gpu_vram_usage(self, h: int) -> dict[str, Any]:
        return self._cell(h, "vram")

    def amdsmi_get_temp_metric(self, h: int, sensor: int, metric: int) -> int:
        return self._cell(h, ("temp", int(sensor), int(metric)))

    def amdsmi_get_gpu_fan_speed(self, h: int, fan: int) -> int:
        return self._cell(h, "fan_speed")

    def amdsmi_get_gpu_fan_speed_max(self, h: int, fan: int) -> int:
        return self._cell(h, "fan_speed_max")

    def amdsmi_get_gpu_fan_rpms(self, h: int, fan: int) -> int:
        return self._cell(h, "fan_rpm")

    def amdsmi_get_power_info(self, h: int) -> dict[str, Any]:
        return self._cell(h, "power")

    def amdsmi_get_clock_info(self, h: int, kind: int) -> dict[str, Any]:
        return self._cell(h, ("clock", int(kind)))

    def amdsmi_get_energy_count(self, h: int) -> dict[str, Any]:
        return self._cell(h, "energy")

    def amdsmi_get_gpu_process_list(self, h: int) -> list[dict[str, Any]]:
        return self._cell(h, "processes")
