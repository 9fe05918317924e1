"""AMD GPUs through amdsmi (ROCm). The full backend is issue #7; until then auto skips it cleanly.

``import amdsmi`` raises KeyError('libamd_smi.so') where ROCm is absent, hence the three exceptions.
"""

from __future__ import annotations

from app.model import GpuProcessUsage, GpuSample
from app.vendors.base import BackendUnavailable


class AmdBackend:
    name = "amd"

    def open(self) -> None:
        try:
            import amdsmi  # noqa: F401
        except (ImportError, KeyError, OSError) as error:
            raise BackendUnavailable(f"amdsmi not usable: {type(error).__name__}: {error}") from error
        raise BackendUnavailable("amdsmi is installed, but FanWhy's amdsmi backend is not built yet "
                                 "(AMD cards are read through sysfs by the basic backend)")

    def sample(self) -> list[GpuSample]:
        return []

    def processes(self) -> list[GpuProcessUsage]:
        return []

    def close(self) -> None:
        pass
