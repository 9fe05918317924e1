"""Pick the backend: NVML, then amdsmi, then basic; each tried in isolation, and why each was skipped kept."""

from __future__ import annotations

import logging
from dataclasses import field
from typing import TYPE_CHECKING, Callable, Mapping

from ..core.model import GpuEvent, GpuProcessUsage, GpuSample
from ..core.record import record
from ..core.threads import spawn
from ..core.vocabulary import BACKENDS
from .base import Backend, BackendUnavailable, SkipKind
from .nvidia import NvidiaBackend
from .options import VendorOptions
from .sysfs import drm_cards, normalize_pci

if TYPE_CHECKING:  # imported by its builder, as amd is: a machine loads only the backends it tries
    from .basic import BasicBackend

log = logging.getLogger(__name__)

AUTO_ORDER = ("nvidia", "amd", "basic")
CHOICES = BACKENDS


@record
class Selection:
    backend: Backend
    skipped: Mapping[str, str]  # why each backend tried before it did not open, in words
    kinds: Mapping[str, SkipKind] = field(default_factory=dict)  # the same as kinds


class CombinedBackend(Backend):
    """A vendor backend plus the basic backend for the other cards of a mixed machine (an Intel iGPU
    beside an NVIDIA card): each GPU shows exactly once, the vendor's first."""

    def __init__(self, primary: Backend, extra: BasicBackend):
        self.primary, self.extra = primary, extra
        self.name = f"{primary.name}+basic"

    def open(self) -> None:  # both are opened by select_backend
        pass

    def sample(self) -> list[GpuSample]:
        return [*self.primary.sample(), *self.extra.sample()]

    def processes(self) -> list[GpuProcessUsage]:
        return [*self.primary.processes(), *self.extra.processes()]

    @property
    def no_gpu_reason(self) -> str | None:  # type: ignore[override]  # a read-only view of the primary's
        return self.primary.no_gpu_reason

    def events(self) -> list[GpuEvent]:
        return self.primary.events()

    def event_watch(self) -> str:
        return self.primary.event_watch()

    def close(self) -> None:
        self.primary.close()
        self.extra.close()


def with_other_cards(primary: Backend, builders: Mapping[str, Callable[[], Backend]]) -> Backend:
    """The primary backend, combined with basic when sysfs shows cards the primary does not report."""
    samples = primary.sample()
    covered = frozenset(normalize_pci(s.pci_bus_id) for s in samples if s.pci_bus_id)
    basic = builders["basic"]()
    from .basic import BasicBackend

    if not isinstance(basic, BasicBackend):
        return primary
    extra = BasicBackend(sys_root=basic.sys_root, proc_root=basic.fdinfo.proc_root, exclude_pci=covered,
                         index_offset=len(samples), use_nvidia_smi=False)
    extra.open()
    if not [c for c in drm_cards(extra.sys_root) if normalize_pci(c.pci_bus_id) not in covered
            and c.vendor != primary.name]:
        return primary
    return CombinedBackend(primary, extra)


def select_in_background(choice: str, builders: Mapping[str, Callable[[], Backend]]) -> Callable[[float], Selection]:
    """``select_backend`` on a thread of its own, for ``fanwhy snapshot``: a driver that never answers (nvmlInit
    stuck) ends the command after a deadline instead of hanging it, and the opening overlaps with the caller's
    imports where the driver lets go of the GIL. The function returned waits up to ``timeout`` seconds for the selection
    and returns it, re-raises what select_backend raised, or raises TimeoutError while a driver call has not
    returned."""
    outcome: list[Selection | Exception] = []

    def run() -> None:
        try:
            outcome.append(select_backend(choice, builders))
        except Exception as error:  # handed to the caller, raised there
            outcome.append(error)

    thread = spawn(run, "fanwhy-open-backend", restart=False)  # once: its outcome is the caller's

    def result(timeout: float) -> Selection:
        thread.join(timeout)
        if not outcome:
            raise TimeoutError(f"opening the {choice} backend has not finished in {timeout:g} s")
        if isinstance(outcome[0], Exception):
            raise outcome[0]
        return outcome[0]

    return result


# Backends whose readings must never mix with a real machine's history keep a file of their own, beside the default
# one (the demo's simulated GPUs); decided by the choice, before any backend is opened.
OWN_HISTORY: Mapping[str, str] = {"simulated": "demo-history.db"}


def default_builders(options: VendorOptions | None = None,
                     watch_events: bool = True) -> dict[str, Callable[[], Backend]]:
    """Constructors for each backend, built with ``options`` (tests pass their own builders). ``watch_events=False``:
    no thread waiting for NVML's XID events (a backend opened only to check that it opens)."""
    o = options or VendorOptions()
    return {
        "nvidia": lambda: NvidiaBackend(sys_root=o.sys_root, watch_xid=watch_events),
        "amd": lambda: _amd(o.sys_root),
        "basic": lambda: _basic(o),
        "simulated": lambda: _simulated(o.sim_gpus, o.sim_peak),
    }


def _amd(sys_root: str) -> Backend:
    from .amd import AmdBackend

    return AmdBackend(sys_root=sys_root)


def _basic(o: VendorOptions) -> Backend:
    from .basic import BasicBackend
    from .nvidia_smi import NvidiaSmi

    return BasicBackend(sys_root=o.sys_root, nvidia_smi=NvidiaSmi(o.nvidia_smi, o.nvidia_smi_timeout_s))


def _simulated(gpus: int, peak: float) -> Backend:
    """The demo's backend, imported when chosen: a real machine's one-shot answer never loads it."""
    from .simulated import SimulatedBackend

    return SimulatedBackend(gpus=gpus, peak=peak)


def no_gpu_sentence(selection: Selection) -> str:
    """``No GPU found: no NVIDIA driver, no AMD or Intel card`` from the kinds of the reasons (the words, which the
    page and the terminal keep folded away, are only quoted)."""
    found = []
    kind, nvidia = selection.kinds.get("nvidia"), selection.skipped.get("nvidia", "")
    if kind in ("no-driver", "no-library"):
        found.append("no NVIDIA driver")
    elif kind == "no-device":
        found.append("the NVIDIA driver sees no GPU")
    elif nvidia:
        found.append("the NVIDIA driver did not start (" + nvidia.split(": ", 1)[-1] + ")")
    if selection.backend.no_drm_card:
        found.append("no AMD or Intel card")
    return "No GPU found: " + ", ".join(found) + "." if found else "No GPU found."


def select_backend(choice: str = "auto", builders: Mapping[str, Callable[[], Backend]] | None = None) -> Selection:
    """Open the chosen backend, or the first of AUTO_ORDER that opens. Never raises for auto:
    basic always opens (it may find no GPU and say why)."""
    if choice not in CHOICES:
        raise ValueError(f"unknown backend {choice!r}; choose one of {', '.join(CHOICES)}")
    builders = builders or default_builders()
    order = AUTO_ORDER if choice == "auto" else (choice,)
    skipped: dict[str, str] = {}
    kinds: dict[str, SkipKind] = {}
    for name in order:
        try:
            backend = builders[name]()
            backend.open()
        except BackendUnavailable as error:
            skipped[name], kinds[name] = str(error), error.kind
        except Exception as error:  # a backend must never stop the others from being tried
            log.exception("backend %s failed to open", name)
            skipped[name], kinds[name] = f"{type(error).__name__}: {error}", "failed"
        else:
            if choice == "auto" and name in ("nvidia", "amd"):
                backend = with_other_cards(backend, builders)
            return Selection(backend=backend, skipped=skipped, kinds=kinds)
    raise BackendUnavailable("; ".join(f"{k}: {v}" for k, v in skipped.items()))
