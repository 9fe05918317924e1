"""AMD GPUs through amdsmi (ROCm 6/7 Python bindings).

``import amdsmi`` raises KeyError('libamd_smi.so') where ROCm is absent, hence the three exceptions the
factory catches. Every call goes through the one call path (app/vendors/calls.py, the ``AMDSMI`` dialect): not
supported or no permission becomes None plus a reason; a status that means the card or the library failed (not
initialised, the driver gone) makes that card an error row for the tick, the others keep reporting. "N/A" strings,
which amdsmi returns for fields a card lacks, become None too.
Engine busy time in ns per process becomes % over the interval between two reads.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Callable

from ..core.model import GpuEvent, GpuProcessUsage, GpuSample, frozen_map
from ..core.threads import spawn
from .base import Backend, BackendUnavailable
from .calls import Calls, Dialect, GpuFailed, Library
from .sysfs import card_fans, chip_names

log = logging.getLogger(__name__)
PASSIVELY_COOLED = "not supported: no fan reported (a passively cooled card, or the fan is the chassis')"
MB = 1024 * 1024

# amdsmi's statuses by their names in amdsmi_wrapper (ROCm 6/7): those that mean the card or the library failed
AMDSMI = Dialect(
    library="amdsmi", package="amdsmi",
    errors=lambda lib: (lib.AmdSmiException,),
    code=lambda error: error.get_error_code() if hasattr(error, "get_error_code") else None,
    codes=lambda lib, names: frozenset(getattr(lib.amdsmi_wrapper, n) for n in names
                                       if hasattr(getattr(lib, "amdsmi_wrapper", None), n)),
    fatal=("AMDSMI_STATUS_NOT_INIT", "AMDSMI_STATUS_DRIVER_NOT_LOADED", "AMDSMI_STATUS_INIT_ERROR"),
    not_supported=("AMDSMI_STATUS_NOT_SUPPORTED",),
    no_permission=("AMDSMI_STATUS_NO_PERM",),
    detail=str,
)


def _clean(value: Library) -> Library:
    """amdsmi says "N/A" (or a max-value sentinel) where a field is missing."""
    if isinstance(value, str) and value.strip().upper() in ("N/A", "NA", ""):
        return None
    if isinstance(value, int) and value in (0xFFFF, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF):
        return None
    return value


def _watts(value: object) -> float | None:
    """Power in W; amdsmi 7 reports some limits in µW."""
    cleaned = _clean(value)
    if cleaned is None:
        return None
    watts = float(cleaned)
    return watts / 1e6 if watts > 100_000 else watts


@dataclass
class _Card:
    index: int
    handle: object
    name: str | None = None
    uuid: str | None = None
    bdf: str | None = None
    engine_ns: dict[int, tuple[float, dict[str, int]]] = field(default_factory=dict)


class AmdBackend(Backend):
    name = "amd"

    def __init__(self, amdsmi: ModuleType | Library | None = None, clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], float] = time.time, watch_events: bool = True, sys_root: str = "/sys"):
        self._amdsmi: Library = amdsmi  # amdsmi, or a fake
        self._devices = Path(sys_root) / "bus" / "pci" / "devices"  # where a card's hwmon chip is (FANWHY_SYS_ROOT)
        self._sys_root = sys_root
        self._chip_names: dict[str, str] | None = None  # the hwmon chips' names, where two cards share a driver
        self._clock = clock
        self._wall = wall_clock
        self._cards: list[_Card] = []
        self._watch_events = watch_events
        self._events: list[GpuEvent] = []
        self._events_lock = threading.Lock()
        self._stop = threading.Event()
        self.events_unsupported: str | None = None
        self._calls = Calls(amdsmi, AMDSMI)  # made again by open() once the library is loaded

    # -- life cycle -------------------------------------------------------------------------
    def open(self) -> None:
        if self._amdsmi is None:
            try:
                import amdsmi
            except (ImportError, KeyError, OSError) as error:
                raise BackendUnavailable(f"amdsmi not usable: {type(error).__name__}: {error}", "no-library") from error
            self._amdsmi = amdsmi
        lib = self._amdsmi
        self._calls = Calls(lib, AMDSMI)
        try:
            flags = getattr(getattr(lib, "AmdSmiInitFlags", None), "INIT_AMD_GPUS", None)
            lib.amdsmi_init(flags) if flags is not None else lib.amdsmi_init()
            handles = lib.amdsmi_get_processor_handles()
        except lib.AmdSmiException as error:
            raise BackendUnavailable(f"amdsmi_init failed: {error}") from error
        if not handles:
            self.close()
            raise BackendUnavailable("amdsmi started but reports no AMD GPU", "no-device")
        try:
            self._cards = [self._open_card(index, handle) for index, handle in enumerate(handles)]
        except GpuFailed as error:
            raise BackendUnavailable(f"amdsmi failed while naming its GPUs: {error}") from error
        if self._watch_events:
            self._start_events()

    def _open_card(self, index: int, handle: object) -> _Card:
        """A card's names (its product name, else its market name), UUID and PCI address."""
        card = _Card(index=index, handle=handle)
        scratch: dict[str, str] = {}
        asic = self._calls.get(scratch, "name", "amdsmi_get_gpu_asic_info", handle) or {}
        board = self._calls.get(scratch, "name", "amdsmi_get_gpu_board_info", handle) or {}
        card.name = _clean(board.get("product_name")) or _clean(asic.get("market_name"))
        card.uuid = _clean(self._calls.get(scratch, "uuid", "amdsmi_get_gpu_device_uuid", handle))
        card.bdf = _clean(self._calls.get(scratch, "pci", "amdsmi_get_gpu_device_bdf", handle))
        return card

    def close(self) -> None:
        self._stop.set()
        if self._amdsmi is not None:
            try:
                self._amdsmi.amdsmi_shut_down()
            except Exception as error:  # shutting down must never raise
                log.debug("amdsmi_shut_down: %s", error)

    # -- sampling ---------------------------------------------------------------------------
    def sample(self) -> list[GpuSample]:
        # two cards' hwmon chips share the name "amdgpu": each card's fan keeps its own chip's name (chip_names)
        self._chip_names = chip_names(self._sys_root) if len(self._cards) > 1 else None
        return [self._sample_or_error(card) for card in self._cards]

    def _sample_or_error(self, card: _Card) -> GpuSample:
        try:
            return self._sample(card)
        except GpuFailed as error:  # this card's row says why; the others report (it is asked again next tick)
            log.warning("AMD GPU %d failed: %s", card.index, error)
            return GpuSample(vendor="amd", index=card.index, uuid=card.uuid, name=card.name, pci_bus_id=card.bdf,
                             source="amdsmi", error=str(error))

    def _sample(self, card: _Card) -> GpuSample:
        lib, h = self._amdsmi, card.handle
        u: dict[str, str] = {"activity": "not read: FanWhy reads per-pipe activity counters through NVML GPM only"}
        activity = self._calls.get(u, "utilization_percent", "amdsmi_get_gpu_activity", h) or {}
        vram = self._calls.get(u, "memory_used_bytes", "amdsmi_get_gpu_vram_usage", h) or {}
        temperatures, thresholds = self._temperatures(h, u)
        temperature = temperatures.get("edge", temperatures.get("hotspot"))
        if temperature is None:
            u.setdefault("temperature_c", u.get("temperature_edge", "not reported by amdsmi"))
        fan, rpm, passive = self._fan(h, u)
        watts, limit = self._power(h, u)
        clk_type = getattr(lib, "AmdSmiClkType", None)
        gfx = self._calls.get(u, "clock_sm_mhz", "amdsmi_get_clock_info", h, getattr(clk_type, "GFX", 0)) or {}
        mem = self._calls.get(u, "clock_memory_mhz", "amdsmi_get_clock_info", h, getattr(clk_type, "MEM", 1)) or {}
        energy = self._calls.get(u, "energy_j", "amdsmi_get_energy_count", h) or {}
        accumulator = _clean(energy.get("energy_accumulator", energy.get("power")))
        resolution = _clean(energy.get("counter_resolution"))
        used_mb, total_mb = _clean(vram.get("vram_used")), _clean(vram.get("vram_total"))
        return GpuSample(
            vendor="amd", index=card.index, uuid=card.uuid, name=card.name, passively_cooled=passive,
            utilization_percent=_float(activity.get("gfx_activity")),
            memory_utilization_percent=_float(activity.get("umc_activity")),
            memory_used_bytes=int(used_mb * MB) if used_mb is not None else None,
            memory_total_bytes=int(total_mb * MB) if total_mb is not None else None,
            temperature_c=temperature, temperature_slowdown_c=thresholds.get("slowdown"),
            temperature_shutdown_c=thresholds.get("shutdown"), temperatures=frozen_map(temperatures),
            fans=card_fans(self._devices / card.bdf if card.bdf else None, card.index, fan,
                           int(rpm) if rpm is not None else None, f"amdsmi:{card.index}/fan0", self._chip_names),
            power_w=watts, power_limit_w=limit,
            clock_sm_mhz=_int(gfx.get("clk", gfx.get("cur_clk"))), clock_sm_max_mhz=_int(gfx.get("max_clk")),
            clock_memory_mhz=_int(mem.get("clk", mem.get("cur_clk"))),
            energy_j=accumulator * resolution / 1e6 if accumulator is not None and resolution else None,
            pci_bus_id=card.bdf, source="amdsmi", unsupported=frozen_map(u),
        )

    def _temperatures(self, h: object, u: dict[str, str]) -> tuple[dict[str, float], dict[str, float | None]]:
        """Edge, hotspot and memory temperatures, and the edge sensor's slowdown/shutdown thresholds."""
        temp_type: Library = getattr(self._amdsmi, "AmdSmiTemperatureType", None)
        temp_metric: Library = getattr(self._amdsmi, "AmdSmiTemperatureMetric", None)
        temperatures: dict[str, float] = {}
        thresholds: dict[str, float | None] = {}
        for label, sensor in (("edge", "EDGE"), ("hotspot", "HOTSPOT"), ("memory", "VRAM")):
            kind = getattr(temp_type, sensor, None)
            if kind is None:
                continue
            scratch: dict[str, str] = {}
            value = _clean(self._calls.get(scratch, "temperature_c", "amdsmi_get_temp_metric", h, kind,
                                     temp_metric.CURRENT))
            if value is not None:
                temperatures[label] = float(value)
            if label == "edge":
                for threshold, name in (("CRITICAL", "slowdown"), ("EMERGENCY", "shutdown")):
                    raw = _clean(self._calls.get(scratch, name, "amdsmi_get_temp_metric", h, kind,
                                           getattr(temp_metric, threshold)))
                    thresholds[name] = float(raw) if raw is not None else None
            if value is None and scratch:
                u.setdefault(f"temperature_{label}", next(iter(scratch.values())))
        return temperatures, thresholds

    def _fan(self, h: object, u: dict[str, str]) -> tuple[float | None, float | None, bool]:
        """Fan speed (% of its maximum), RPM, and whether the card has no fan of its own."""
        speed = _clean(self._calls.get(u, "fan_speed_percent", "amdsmi_get_gpu_fan_speed", h, 0))
        speed_max = _clean(self._calls.get({}, "fan_speed_percent", "amdsmi_get_gpu_fan_speed_max", h, 0))
        rpm = _clean(self._calls.get(u, "fan_rpm", "amdsmi_get_gpu_fan_rpms", h, 0))
        fan = round(100.0 * speed / speed_max, 1) if speed is not None and speed_max else None
        passive = fan is None and u.get("fan_speed_percent", "not supported").startswith("not supported")
        if passive:
            u["fan_speed_percent"] = PASSIVELY_COOLED
        return fan, rpm, passive

    def _power(self, h: object, u: dict[str, str]) -> tuple[float | None, float | None]:
        """Socket power and the power limit (from the power info, else the power cap)."""
        power = self._calls.get(u, "power_w", "amdsmi_get_power_info", h) or {}
        watts = next((w for w in (_watts(power.get(k)) for k in ("socket_power", "current_socket_power",
                                                                   "average_socket_power")) if w is not None), None)
        limit = _watts(power.get("power_limit"))
        if limit is None:
            cap = self._calls.get(u, "power_limit_w", "amdsmi_get_power_cap_info", h) or {}
            limit = _watts(cap.get("power_cap"))
        for metric, value in (("power_w", watts), ("power_limit_w", limit)):
            if value is None:
                u.setdefault(metric, "not reported by amdsmi")
        return watts, limit

    def processes(self) -> list[GpuProcessUsage]:
        usages = []
        now = self._clock()
        for card in self._cards:
            try:
                rows = self._calls.get({}, "processes", "amdsmi_get_gpu_process_list", card.handle) or []
            except GpuFailed:  # its row says so (sample)
                continue
            seen = {}
            for row in rows:
                if not isinstance(row, dict) or _clean(row.get("pid")) is None:
                    continue  # older bindings return handles: nothing to read without more calls
                pid = int(row["pid"])
                engines = {k: int(v) for k, v in (row.get("engine_usage") or {}).items() if _clean(v) is not None}
                memory = row.get("memory_usage") or {}
                busy = None
                previous = card.engine_ns.get(pid)
                if previous is not None and now > previous[0]:
                    wall_ns = (now - previous[0]) * 1e9
                    gfx = engines.get("gfx", 0) - previous[1].get("gfx", 0)
                    busy = round(min(100.0, max(0.0, 100.0 * gfx / wall_ns)), 1)
                seen[pid] = (now, engines)
                vram = _clean(memory.get("vram_mem"))
                usages.append(GpuProcessUsage(
                    pid=pid, gpu_index=card.index, kind="compute", name_hint=_clean(row.get("name")),
                    memory_bytes=int(vram) if vram is not None else _int(row.get("mem")),
                    sm_percent=busy, encoder_percent=None, decoder_percent=None))
            card.engine_ns = seen
        return usages

    # -- events -----------------------------------------------------------------------------
    def _start_events(self) -> None:
        lib = self._amdsmi
        reader_class = getattr(lib, "AmdSmiEventReader", None)
        kinds = getattr(lib, "AmdSmiEvtNotificationType", None)
        if reader_class is None or kinds is None:
            self.events_unsupported = "this amdsmi has no event reader"
            return
        wanted = [getattr(kinds, n) for n in ("THERMAL_THROTTLE", "VMFAULT", "GPU_PRE_RESET", "GPU_POST_RESET")
                  if hasattr(kinds, n)]
        readers = []
        for card in self._cards:
            try:
                readers.append((card.index, reader_class(card.handle, wanted)))
            except lib.AmdSmiException as error:
                log.info("amdsmi events not available on GPU %d: %s", card.index, error)
        if not readers:
            self.events_unsupported = "no GPU supports amdsmi events"
            return
        spawn(self._read_events, "fanwhy-amd-events", readers)

    def _read_events(self, readers: list[tuple[int, Library]]) -> None:
        lib = self._amdsmi
        while not self._stop.is_set():
            for index, reader in readers:
                try:
                    events = reader.read(200)
                except lib.AmdSmiException:
                    continue
                for event in events or ():
                    kind = str(event.get("event", "event")).lower()
                    with self._events_lock:
                        self._events.append(GpuEvent(gpu_index=index, kind=kind, value=0, timestamp=self._wall()))
        for _, reader in readers:
            with contextlib.suppress(lib.AmdSmiException):
                reader.stop()

    def events(self) -> list[GpuEvent]:
        with self._events_lock:
            events, self._events = self._events, []
        return events


def _float(value: object) -> float | None:
    clean = _clean(value)
    return float(clean) if clean is not None else None


def _int(value: object) -> int | None:
    clean = _clean(value)
    return int(clean) if clean is not None else None
