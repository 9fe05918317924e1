"""Pick the backend: NVML, then amdsmi, then basic; each tried in isolation, and why each was skipped kept."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Mapping

from app.vendors.amd import AmdBackend
from app.vendors.base import Backend, BackendUnavailable
from app.vendors.basic import BasicBackend
from app.vendors.nvidia import NvidiaBackend
from app.vendors.simulated import SimulatedBackend

log = logging.getLogger(__name__)

AUTO_ORDER = ("nvidia", "amd", "basic")
CHOICES = ("auto", "nvidia", "amd", "basic", "simulated")


@dataclass(frozen=True)
class Selection:
    backend: Backend
    skipped: Mapping[str, str]


def default_builders(settings: object | None = None) -> dict[str, Callable[[], Backend]]:
    """Constructors for each backend, configured from settings (tests pass their own)."""
    get = (lambda name, default: getattr(settings, name, default)) if settings is not None else (
        lambda name, default: default)
    from app.vendors.nvidia_smi import NvidiaSmi
    return {
        "nvidia": lambda: NvidiaBackend(),
        "amd": lambda: AmdBackend(),
        "basic": lambda: BasicBackend(
            sys_root=get("sys_root", "/sys"),
            nvidia_smi=NvidiaSmi(get("nvidia_smi", "nvidia-smi"), get("nvidia_smi_timeout_s", 5.0))),
        "simulated": lambda: SimulatedBackend(gpus=get("sim_gpus", 2), peak=get("sim_peak", 0.5)),
    }


def select_backend(choice: str = "auto", builders: Mapping[str, Callable[[], Backend]] | None = None) -> Selection:
    """Open the chosen backend, or the first of AUTO_ORDER that opens. Never raises for auto:
    basic always opens (it may find no GPU and say why)."""
    if choice not in CHOICES:
        raise ValueError(f"unknown backend {choice!r}; choose one of {', '.join(CHOICES)}")
    builders = builders or default_builders()
    order = AUTO_ORDER if choice == "auto" else (choice,)
    skipped: dict[str, str] = {}
    for name in order:
        try:
            backend = builders[name]()
            backend.open()
        except BackendUnavailable as error:
            skipped[name] = str(error)
        except Exception as error:  # a backend must never stop the others from being tried
            log.exception("backend %s failed to open", name)
            skipped[name] = f"{type(error).__name__}: {error}"
        else:
            return Selection(backend=backend, skipped=skipped)
    raise BackendUnavailable("; ".join(f"{k}: {v}" for k, v in skipped.items()))
