"""GPUs as the Linux kernel shows them: /sys/class/drm/card*/device and its hwmon.

amdgpu exposes busy %, VRAM, temperatures, fan and power there; i915/xe expose less; the NVIDIA
driver exposes almost nothing (use NVML or nvidia-smi). The sysfs root is an argument, so tests
point it at fixture trees.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..core.bounded import read_file
from ..core.fan import Fan
from ..core.model import GpuSample, frozen_map
from ..core.record import record
from ..core.vocabulary import apart, pwm_percent

SYSFS_LIMIT = 65536  # a sysfs attribute is at most a page; 64 KiB leaves room for any architecture's page
VENDORS = {0x1002: "amd", 0x8086: "intel", 0x10DE: "nvidia"}
_CARD = re.compile(r"^card(\d+)$")


@record
class DrmCard:
    number: int
    device: Path
    vendor: str
    vendor_id: int | None
    device_id: int | None
    pci_bus_id: str | None


ASLEEP = "asleep (runtime suspended): not woken to read it"
RESTING = "resting: idle with runtime power management, read every 30 s so that it can suspend"


def normalize_pci(bus_id: str | None) -> str:
    """``0000:03:00.0`` from NVML's ``00000000:03:00.0`` or sysfs's ``0000:03:00.0``, lower case."""
    if not bus_id:
        return ""
    return bus_id.strip().lower()[-12:]


def asleep(device: Path) -> bool:
    """Whether a PCI device is runtime-suspended (``power/runtime_status``): reading this file does not wake it, but
    a vendor call or a read of its other files would (a laptop's discrete GPU, and the fan that would spin up)."""
    return read_text(device / "power" / "runtime_status") == "suspended"


class PowerState:
    """A PCI device's ``power/runtime_status``, read through a descriptor kept open (one ``pread`` a tick: sysfs
    makes the text afresh at offset 0), so checking before every vendor call costs microseconds. A device without
    runtime power management (no such file) is never asleep."""

    def __init__(self, sys_root: Path | str, bus_id: str | None):
        power = Path(sys_root) / "bus" / "pci" / "devices" / normalize_pci(bus_id) / "power"
        self.path = power / "runtime_status"
        # "auto": the kernel may suspend it when idle (a laptop's discrete GPU); "on": never (most servers)
        self.managed = bool(bus_id) and read_text(power / "control") == "auto"
        self._fd: int | None = None
        if bus_id:
            try:
                self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                self._fd = None

    def asleep(self) -> bool:
        if self._fd is None:
            return False
        try:
            return os.pread(self._fd, 32, 0).strip() == b"suspended"
        except OSError:
            return False

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def read_text(path: Path) -> str | None:
    """A sysfs file's value without its line break, or None when it cannot be read (a FIFO or anything but a
    regular file in its place is not waited on, and at most 64 KiB is read: ``app.core.bounded``)."""
    try:
        return read_file(path, SYSFS_LIMIT).decode().strip()
    except (OSError, UnicodeDecodeError):
        return None


SYSFS_INT_LIMIT = 1 << 64  # the kernel prints a sysfs number from a 64-bit long or u64 (hwmon sysfs ABI: integers)


def read_int(path: Path, base: int = 10) -> int | None:
    """A sysfs file's integer, or None when it holds no number the kernel could have written: unreadable, not an
    integer, or past 64 bits (one such value costs its own reading, never its neighbours')."""
    text = read_text(path)
    if text is None or len(text) > 24:
        return None
    try:
        value = int(text, base)
    except ValueError:
        return None
    return value if -SYSFS_INT_LIMIT < value < SYSFS_INT_LIMIT else None


def drm_cards(sys_root: Path) -> list[DrmCard]:
    """The DRM cards (not their connectors) under ``sys_root``/class/drm, in card order."""
    drm = sys_root / "class" / "drm"
    cards = []
    try:
        entries = list(drm.iterdir())
    except OSError:
        return []
    for entry in entries:
        match = _CARD.match(entry.name)
        if not match:
            continue
        device = entry / "device"
        vendor_id = read_int(device / "vendor", 16)
        try:
            bus_id = device.resolve().name if device.exists() else None
        except OSError:
            bus_id = None
        cards.append(DrmCard(
            number=int(match.group(1)), device=device,
            vendor=VENDORS.get(vendor_id, "unknown") if vendor_id is not None else "unknown",
            vendor_id=vendor_id, device_id=read_int(device / "device", 16), pci_bus_id=bus_id,
        ))
    return sorted(cards, key=lambda c: c.number)


def _hwmon(device: Path) -> Path | None:
    try:
        found = sorted((device / "hwmon").glob("hwmon*"))
    except OSError:
        return None
    return found[0] if found else None


def chip_names(sys_root: str | Path) -> dict[str, str]:
    """Each hwmon chip under ``sys_root`` (``hwmon5``) by its name: its driver's (``amdgpu``), or, where one driver
    has two devices or more (two AMD cards, a dual-socket server's two ``coretemp``), the name lm-sensors gives each
    (``amdgpu-pci-0b00``, ``coretemp-isa-0001``), so that one card's fan and temperatures are not the other's. A
    listing and the ``name`` files, nothing read from a driver."""
    base = Path(sys_root) / "class" / "hwmon"
    try:
        entries = [e for e in sorted(os.listdir(base)) if e.startswith("hwmon")]
    except OSError:
        return {}
    return apart({e: read_text(base / e / "name") or e for e in entries}, lambda e, n: addressed(base / e, n))


def addressed(chip_dir: Path, name: str) -> str:
    """``name`` with its device's bus and address as libsensors prints a chip's name (lib/sysfs.c): a PCI device's
    ``(domain << 16) | (bus << 8) | (slot << 3) | function`` in hex, a platform device's number after its dot, an I2C
    client's bus and address; for any other device, or none, the hwmon entry's own name (``amdgpu-hwmon5``)."""
    try:
        device = os.path.basename(os.path.realpath(chip_dir / "device"))
    except OSError:
        device = ""
    pci = re.fullmatch(r"([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])", device)
    if pci:
        domain, bus, slot, function = (int(g, 16) for g in pci.groups())
        return f"{name}-pci-{(domain << 16) | (bus << 8) | (slot << 3) | function:04x}"
    i2c = re.fullmatch(r"(\d+)-([0-9a-f]{4})", device)
    if i2c:
        return f"{name}-i2c-{int(i2c.group(1))}-{int(i2c.group(2), 16):02x}"
    platform = re.fullmatch(r"[a-z0-9_-]+\.(\d+)", device, re.IGNORECASE)
    if platform:
        return f"{name}-isa-{int(platform.group(1)):04x}"
    return f"{name}-{chip_dir.name}"


def card_fans(device: Path | None, index: int, percent: float | None, rpm: int | None, fallback_id: str,
              names: dict[str, str] | None = None) -> tuple[Fan, ...]:
    """A card's fan as its driver's one duty and tachometer show it, as a GPU's own fan. Where the card has a hwmon
    chip, the fan keeps that chip's id (``hwmon:NAME/fan1``, NAME as ``chip_names`` gives it in ``names``): the fan
    service reads the same fan there, richer, and one fan is one record (``fallback_id`` otherwise)."""
    if percent is None and rpm is None:
        return ()
    hwmon = _hwmon(device) if device is not None else None
    chip = ((names or {}).get(hwmon.name) or read_text(hwmon / "name") or hwmon.name) if hwmon is not None else None
    return (Fan(id=f"hwmon:{chip}/fan1" if chip else fallback_id, chip=chip or f"GPU {index}", channel=1, label=None,
                rpm=rpm, percent=percent, gpu_index=index),)


def _temperatures(hwmon: Path) -> dict[str, tuple[float, float | None, float | None]]:
    """label -> (current, critical, emergency) in °C, from temp*_input (millidegrees)."""
    found = {}
    for path in sorted(hwmon.glob("temp*_input")):
        stem = path.name[: -len("_input")]
        milli = read_int(path)
        if milli is None:
            continue
        label = read_text(hwmon / f"{stem}_label") or stem
        crit = read_int(hwmon / f"{stem}_crit")
        emergency = read_int(hwmon / f"{stem}_emergency")
        found[label.lower()] = (milli / 1000.0, crit / 1000.0 if crit else None,
                                emergency / 1000.0 if emergency else None)
    return found


def _card_fan(hwmon: Path, unsupported: dict[str, str]) -> tuple[float | None, int | None, bool]:
    """A card's own fan as its hwmon shows it: (duty %, RPM, no fan at all). A reading out of range (65535 RPM: no
    pulses; a pwm above 255) is left out with the reason (app.collect.hwmon says what it means)."""
    rpm = read_int(hwmon / "fan1_input")
    pwm = read_int(hwmon / "pwm1")
    percent = pwm_percent(pwm) if pwm is not None and 0 <= pwm <= 255 else None
    if rpm is None and pwm is None:
        no_fan = "no fan in hwmon (passively cooled, or the fan is managed elsewhere)"
        unsupported["fan_speed_percent"] = unsupported["fan_rpm"] = no_fan
        return None, None, True
    if rpm is not None and not 0 <= rpm <= 30_000:
        unsupported["fan_rpm"], rpm = f"fan1_input read {rpm}: not a speed", None
    if pwm is not None and percent is None:
        unsupported["fan_speed_percent"] = f"pwm1 read {pwm}: outside 0-255, not a reading"
    return percent, rpm, False


def sample_card(card: DrmCard, index: int, names: dict[str, str] | None = None) -> GpuSample:
    """Whatever the kernel reports for one card; the rest is None with the reason (its fan named by its hwmon chip
    as ``names`` gives it, ``chip_names``)."""
    device = card.device
    unsupported: dict[str, str] = {"activity": "not read from sysfs: the activity counters need the vendor's library"}
    missing = f"not exposed by the {card.vendor} kernel driver in sysfs"

    busy = read_int(device / "gpu_busy_percent")
    used = read_int(device / "mem_info_vram_used")
    total = read_int(device / "mem_info_vram_total")
    name = read_text(device / "product_name") or (
        f"{card.vendor.upper() if card.vendor != 'unknown' else 'Unknown'} GPU"
        f" [{card.vendor_id or 0:04x}:{card.device_id or 0:04x}]")

    temperature = slowdown = shutdown = power = power_cap = fan_pct = None
    sensors: dict[str, float] = {}
    fan_rpm = None
    passive = False
    hwmon = _hwmon(device)
    if hwmon is not None:
        temps = _temperatures(hwmon)
        sensors = {label: values[0] for label, values in temps.items()}
        chosen = temps.get("edge") or next(iter(temps.values()), None)
        if chosen:
            temperature, slowdown, shutdown = chosen
        microwatts = read_int(hwmon / "power1_average")
        if microwatts is None:
            microwatts = read_int(hwmon / "power1_input")
        power = microwatts / 1e6 if microwatts is not None else None
        cap = read_int(hwmon / "power1_cap")
        power_cap = cap / 1e6 if cap else None
        fan_pct, fan_rpm, passive = _card_fan(hwmon, unsupported)
    else:
        unsupported.update({m: f"no hwmon for this card ({missing})" for m in (
            "temperature_c", "power_w", "power_limit_w", "fan_speed_percent", "fan_rpm")})

    values = {"utilization_percent": busy, "memory_used_bytes": used, "memory_total_bytes": total,
              "temperature_c": temperature, "power_w": power, "power_limit_w": power_cap,
              "fan_speed_percent": fan_pct, "fan_rpm": fan_rpm}
    for metric, value in values.items():
        if value is None:
            unsupported.setdefault(metric, missing)
    for metric in ("memory_utilization_percent", "clock_sm_mhz", "clock_memory_mhz", "pstate",
                   "throttle_reasons", "energy_j"):
        unsupported.setdefault(metric, missing)

    return GpuSample(
        vendor=card.vendor, index=index, uuid=None, name=name,
        utilization_percent=float(busy) if busy is not None else None,
        memory_used_bytes=used, memory_total_bytes=total,
        temperature_c=temperature, temperature_slowdown_c=slowdown, temperature_shutdown_c=shutdown,
        temperatures=frozen_map(sensors),
        fans=card_fans(device, index, fan_pct, fan_rpm, f"drm:{card.pci_bus_id}/fan1", names),
        passively_cooled=passive,
        power_w=power, power_limit_w=power_cap,
        pci_bus_id=card.pci_bus_id, source="sysfs", unsupported=frozen_map(unsupported),
    )
