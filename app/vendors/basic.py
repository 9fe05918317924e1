"""The fallback backend: Linux DRM/hwmon sysfs, plus nvidia-smi for NVIDIA cards without NVML.

Works on any machine: with no GPU at all it returns no rows, and ``no_gpu_reason`` says why.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from ..core.model import GpuProcessUsage, GpuSample, frozen_map
from .base import Backend
from .fdinfo import FdinfoReader
from .nvidia_smi import NvidiaSmi, NvidiaSmiError
from .sysfs import ASLEEP, DrmCard, asleep, chip_names, drm_cards, normalize_pci, sample_card

log = logging.getLogger(__name__)

SMI_RETRY_S = 30.0


class BasicBackend(Backend):
    name = "basic"

    def __init__(self, sys_root: Path | str = "/sys", nvidia_smi: NvidiaSmi | None = None,
                 proc_root: Path | str = "/proc", exclude_pci: frozenset[str] = frozenset(),
                 index_offset: int = 0, use_nvidia_smi: bool = True):
        """``exclude_pci``: cards another backend already reports (mixed machines); their indices start
        at ``index_offset``."""
        self.sys_root = Path(sys_root)
        self.smi = nvidia_smi or NvidiaSmi()
        self.fdinfo = FdinfoReader(proc_root)
        self.exclude_pci = frozenset(normalize_pci(p) for p in exclude_pci)
        self.index_offset = index_offset
        self.use_nvidia_smi = use_nvidia_smi
        self._pci_to_index: dict[str, int] = {}
        self._smi_reason: str | None = None
        self._smi_retry_at = 0.0
        self._smi_last_error: str | None = None
        self._uuid_to_index: dict[str, int] = {}
        self.no_gpu_reason: str | None = None

    def open(self) -> None:
        self._smi_reason = self.smi.available() if self.use_nvidia_smi else "NVIDIA cards are read through NVML"

    def close(self) -> None:
        pass

    def _chip_names(self, cards: list[DrmCard]) -> dict[str, str] | None:
        """The hwmon chips' names where two cards' chips share a driver (each card's fan keeps its own chip's name,
        ``chip_names``); None with one such card, whose chip keeps its driver's name."""
        return chip_names(self.sys_root) if sum(1 for c in cards if c.vendor != "nvidia") > 1 else None

    def sample(self) -> list[GpuSample]:
        samples: list[GpuSample] = []
        smi_error = self._smi_reason
        if smi_error is None and time.monotonic() >= self._smi_retry_at:
            try:
                samples = self.smi.gpus()
            except NvidiaSmiError as error:
                # A failing or hung nvidia-smi is tried again later, not on every tick.
                self._smi_retry_at = time.monotonic() + SMI_RETRY_S
                self._smi_last_error = str(error)
                log.warning("nvidia-smi: %s", error)
            else:
                self._smi_last_error = None
        if smi_error is None:
            smi_error = self._smi_last_error
        self._uuid_to_index = {s.uuid: s.index for s in samples if s.uuid}

        cards = [c for c in drm_cards(self.sys_root) if normalize_pci(c.pci_bus_id) not in self.exclude_pci]
        next_index = self.index_offset + len(samples)
        self._pci_to_index = {}
        names = self._chip_names(cards)
        for card in cards:
            if card.pci_bus_id:
                self._pci_to_index[normalize_pci(card.pci_bus_id)] = next_index
            if card.vendor == "nvidia":
                if samples and not smi_error:
                    continue  # already read through nvidia-smi
                samples.append(GpuSample(
                    vendor="nvidia", index=next_index, name="NVIDIA GPU", pci_bus_id=card.pci_bus_id,
                    source="sysfs", error=f"NVIDIA card without usable NVML or nvidia-smi ({smi_error})"))
            elif asleep(card.device):  # its other files would wake it
                samples.append(GpuSample(vendor=card.vendor, index=next_index, pci_bus_id=card.pci_bus_id,
                                         source="sysfs", asleep=True, unsupported=frozen_map({"asleep": ASLEEP})))
            else:
                samples.append(sample_card(card, next_index, names))
            next_index += 1

        self.no_drm_card = not cards
        if samples:
            self.no_gpu_reason = None
        else:
            self.no_gpu_reason = (
                f"no DRM card under {self.sys_root / 'class' / 'drm'}; "
                f"nvidia-smi: {smi_error or 'reported no GPU'}")
        return samples

    def processes(self) -> list[GpuProcessUsage]:
        usages: list[GpuProcessUsage] = []
        if self._uuid_to_index:
            try:
                usages.extend(self.smi.processes(self._uuid_to_index))
            except NvidiaSmiError as error:
                log.warning("nvidia-smi processes: %s", error)
        if self._pci_to_index:
            for client in self.fdinfo.usage():
                index = self._pci_to_index.get(normalize_pci(client.pdev))
                if index is None:
                    continue
                usages.append(GpuProcessUsage(pid=client.pid, gpu_index=index, memory_bytes=client.memory_bytes,
                                              sm_percent=client.busy_percent, kind="compute",
                                              name_hint=None))
        return _merge_clients(usages)


def _merge_clients(usages: list[GpuProcessUsage]) -> list[GpuProcessUsage]:
    """One row per (pid, GPU): a process with several DRM clients on one card adds them up."""
    merged: dict[tuple[int, int], GpuProcessUsage] = {}
    for usage in usages:
        key = (usage.pid, usage.gpu_index)
        if key not in merged:
            merged[key] = usage
            continue
        old = merged[key]
        memory = [m for m in (old.memory_bytes, usage.memory_bytes) if m is not None]
        busy = [b for b in (old.sm_percent, usage.sm_percent) if b is not None]
        merged[key] = GpuProcessUsage(pid=usage.pid, gpu_index=usage.gpu_index,
                                      memory_bytes=sum(memory) if memory else None,
                                      sm_percent=min(100.0, sum(busy)) if busy else None, kind=old.kind,
                                      name_hint=old.name_hint or usage.name_hint)
    return list(merged.values())
