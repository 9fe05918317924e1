"""The backend contract: what every backend implements, and the optional capabilities with their defaults.

Every backend subclasses ``Backend`` and so gets the defaults; nothing asks a backend with ``getattr`` whether it
has a capability, and mypy checks each backend against this class.
"""

from __future__ import annotations

from typing import Callable, Literal, Protocol, Sequence

from ..core.fan import Fan
from ..core.model import GpuEvent, GpuProcessUsage, GpuSample
from ..core.record import record

# Why a backend did not open, as a kind the sentence switches on (the message keeps the details): its library is
# not installed, the vendor's driver is not there, it started and found no GPU, or it failed otherwise.
SkipKind = Literal["no-library", "no-driver", "no-device", "failed"]


@record
class Surroundings:
    """The machine around the GPUs, where a backend brings one of its own (the demo's): the hwmon tree and the fan
    daemons' configurations to read instead of the real ones, and what prints its BMC's ``ipmitool sdr`` listing."""

    sys_root: str
    etc_root: str
    bmc_run: Callable[[], str]
    bmc_every_s: float


class BackendUnavailable(Exception):
    """The backend cannot run on this machine; the message says why (shown in /api/health), ``kind`` as a kind."""

    def __init__(self, message: str, kind: SkipKind = "failed") -> None:
        super().__init__(message)
        self.kind: SkipKind = kind


class Backend(Protocol):
    name: str
    # Why this backend sees no GPU, when it sees none (basic: "no DRM card, nvidia-smi ..."); None otherwise.
    no_gpu_reason: str | None = None
    no_drm_card: bool = False  # it looked for DRM cards (AMD, Intel, any GPU with a kernel driver) and found none

    # -- required -----------------------------------------------------------------------------
    def open(self) -> None:
        """Initialise the vendor library once. Raises BackendUnavailable with the reason."""
        raise NotImplementedError

    def sample(self) -> Sequence[GpuSample]:
        """One sample per GPU. A failing GPU is an error row, never an exception."""
        raise NotImplementedError

    def processes(self) -> Sequence[GpuProcessUsage]:
        """Raw per-process GPU usage of the GPUs sampled last."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the vendor library and any helper processes."""
        raise NotImplementedError

    # -- optional, with defaults -------------------------------------------------------------
    def events(self) -> list[GpuEvent]:
        """Device events (XID errors, thermal events) seen since the last call; none by default."""
        return []

    def event_watch(self) -> str:
        """How XID errors are watched, for /api/health: "watching", or why not."""
        return "not an NVML backend"

    def fans_apart(self) -> Callable[[], tuple[Fan, ...]] | None:
        """The GPUs' fans as a reader the fan service runs on its own clock (and then not in ``sample``); None
        by default: the fans, if any, come with the sample."""
        return None

    def surroundings(self) -> Surroundings | None:
        """The machine around the GPUs when the backend brings its own (the demo); None by default: the real one,
        where the settings say (FANWHY_SYS_ROOT, FANWHY_ETC_ROOT, the BMC)."""
        return None
