"""The fallback backend: Linux DRM/hwmon sysfs, plus nvidia-smi for NVIDIA cards without NVML.

Works on any machine: with no GPU at all it returns no rows, and ``no_gpu_reason`` says why.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from app.model import GpuProcessUsage, GpuSample
from app.vendors.nvidia_smi import NvidiaSmi, NvidiaSmiError
from app.vendors.sysfs import drm_cards, sample_card

log = logging.getLogger(__name__)

SMI_RETRY_S = 30.0


class BasicBackend:
    name = "basic"

    def __init__(self, sys_root: Path | str = "/sys", nvidia_smi: NvidiaSmi | None = None):
        self.sys_root = Path(sys_root)
        self.smi = nvidia_smi or NvidiaSmi()
        self._smi_reason: str | None = None
        self._smi_retry_at = 0.0
        self._smi_last_error: str | None = None
        self._uuid_to_index: dict[str, int] = {}
        self.no_gpu_reason: str | None = None

    def open(self) -> None:
        self._smi_reason = self.smi.available()

    def close(self) -> None:
        pass

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

        cards = drm_cards(self.sys_root)
        next_index = len(samples)
        for card in cards:
            if card.vendor == "nvidia":
                if samples and not smi_error:
                    continue  # already read through nvidia-smi
                samples.append(GpuSample(
                    vendor="nvidia", index=next_index, name="NVIDIA GPU", pci_bus_id=card.pci_bus_id,
                    source="sysfs", error=f"NVIDIA card without usable NVML or nvidia-smi ({smi_error})"))
            else:
                samples.append(sample_card(card, next_index))
            next_index += 1

        if samples:
            self.no_gpu_reason = None
        else:
            self.no_gpu_reason = (
                f"no DRM card under {self.sys_root / 'class' / 'drm'}; "
                f"nvidia-smi: {smi_error or 'reported no GPU'}")
        return samples

    def processes(self) -> list[GpuProcessUsage]:
        if not self._uuid_to_index:
            return []
        try:
            return self.smi.processes(self._uuid_to_index)
        except NvidiaSmiError as error:
            log.warning("nvidia-smi processes: %s", error)
            return []
