"""What the collector publishes and how readers get it: each snapshot as a ``Frame`` (with its JSON view, made when
first read, and the collector's counters as of that frame), the latest one for any reader, a wait for the next one,
the listeners told of each (the broadcaster's wake), and the alert events of recent frames for a reader that
missed some. Readers never call the collector's vendor: they read here."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import replace
from functools import cached_property
from typing import Callable

from ..core.jsonvalue import JsonObject
from ..core.record import record
from ..core.snapshot import Alert, Snapshot
from .serialize import snapshot_view

log = logging.getLogger(__name__)

GpuEventKey = tuple["int | None", str, int]  # (GPU index, kind, code)


@record
class Counters:
    """What the collector has counted since it started, as of one frame. Views read these with the frame, never
    off the live collector, so a page, a scrape and a health answer of the same frame agree."""

    total_errors: int = 0
    consecutive_failures: int = 0
    gpu_events: tuple[tuple[GpuEventKey, int], ...] = ()  # XID errors by code (and other events), sorted
    recent_alerts: tuple[Alert, ...] = ()  # fired and resolved, oldest first (the alert engine's history)


@record
class Frame:
    """A published snapshot with its JSON view and the collector's counters, shared by every reader: everything a
    view shows comes from here. The view is made when first read (a text answer reads none), then kept."""

    seq: int
    snapshot: Snapshot
    monotonic: float
    counters: Counters = Counters()

    @cached_property
    def view(self) -> JsonObject:  # two first readers at once make two equal views; one is kept
        return snapshot_view(self.snapshot)


class Frames:
    """The published frames: the latest, a wait for a newer one, listeners, and recent frames' alert events."""

    def __init__(self) -> None:
        self._published = threading.Condition()
        self._latest: Frame | None = None
        # Alert events of recent frames, (seq, events), for a reader that missed frames: only these are
        # kept, not the frames with their snapshots and views.
        self._events: deque[tuple[int, tuple[Alert, ...]]] = deque(maxlen=64)
        self._listeners: list[Callable[[], None]] = []  # told of each new frame (the broadcaster's wake)
        self._closed = False

    def latest(self) -> Frame | None:
        return self._latest

    def publish(self, snapshot: Snapshot, monotonic: float, counters: Counters) -> Frame:
        """``snapshot`` as the next frame; waiting readers woken, then each listener told (a listener's failure
        is its own: the frame is published)."""
        with self._published:
            seq = self._latest.seq + 1 if self._latest is not None else 1
            frame = Frame(seq=seq, snapshot=snapshot, monotonic=monotonic, counters=counters)
            self._latest = frame
            if snapshot.alert_events:
                self._events.append((seq, snapshot.alert_events))
            self._published.notify_all()
            listeners = tuple(self._listeners)
        for listener in listeners:
            try:
                listener()
            except Exception:
                log.exception("a frame listener failed")
        return frame

    def recount(self, counters: Counters) -> None:
        """The latest frame with the counters of now (a tick that raised published no snapshot, but its error
        counts); readers are not woken: no new data."""
        with self._published:
            if self._latest is not None:
                self._latest = replace(self._latest, counters=counters)

    def wait(self, after_seq: int, timeout: float) -> Frame | None:
        """The latest frame once it is newer than ``after_seq``, waiting up to ``timeout``; None after the timeout
        or once closed."""
        deadline = time.monotonic() + timeout
        with self._published:
            while not self._closed:
                if self._latest is not None and self._latest.seq > after_seq:
                    return self._latest
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._published.wait(remaining)
        return None

    def close(self) -> None:
        """Every waiting reader answered (None): the collector stopped."""
        with self._published:
            self._closed = True
            self._published.notify_all()

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` (on the collector's thread: it must only signal) after each new frame; returns the
        function that unsubscribes it."""
        with self._published:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._published:
                if listener in self._listeners:
                    self._listeners.remove(listener)
        return unsubscribe

    def alert_events(self, after_seq: int, upto_seq: int) -> list[Alert]:
        """The alert events of the frames after ``after_seq`` up to ``upto_seq``, oldest first (those of the last
        64 frames that had any): a reader too slow for some frames still sends every event."""
        with self._published:
            return [alert for seq, events in self._events if after_seq < seq <= upto_seq for alert in events]
