"""What every backend implements: open(), sample(), processes(), close()."""

from __future__ import annotations

from typing import Protocol, Sequence

from app.model import GpuEvent, GpuProcessUsage, GpuSample


class BackendUnavailable(Exception):
    """The backend cannot run on this machine; the message says why (shown in /api/health)."""


class Backend(Protocol):
    name: str

    def open(self) -> None:
        """Initialise the vendor library once. Raises BackendUnavailable with the reason."""

    def sample(self) -> Sequence[GpuSample]:
        """One sample per GPU. A failing GPU is an error row, never an exception."""

    def processes(self) -> Sequence[GpuProcessUsage]:
        """Raw per-process GPU usage of the GPUs sampled last."""

    def close(self) -> None:
        """Release the vendor library and any helper processes."""


def drain_events(backend: object) -> list[GpuEvent]:
    """Events a backend collected since the last call (XID errors); backends without events have none."""
    events = getattr(backend, "events", None)
    return list(events()) if callable(events) else []
