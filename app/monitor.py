"""The collector: ONE thread per server builds an immutable Snapshot every interval.

Requests, socket events and scrapes read the latest Frame; they never call a vendor library.
``request_tick`` asks for an early collection, rate-limited so that no client can make the
collector run more often than every ``min_tick_gap_s``.
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

from app.alerts import AlertEngine
from app.attribution.attributor import Attribution, Attributor
from app.attribution.processes import ProcessInspector
from app.energy import EnergyMeter
from app.explain import explain
from app.history import History
from app.host import HostSampler
from app.model import BackendInfo, CollectorTiming, GpuSample, HostSample, Snapshot, frozen_map
from app.serialize import snapshot_view
from app.vendors.base import drain_events
from app.vendors.factory import Selection

log = logging.getLogger(__name__)


class VendorHung(Exception):
    """A vendor call has not returned within the watchdog's time."""


class VendorWorker:
    """Runs vendor calls on a thread of their own, so a hung NVML or nvidia-smi call never freezes the
    collector: the caller waits at most ``timeout_s``. A call that never returns keeps this worker
    busy; later calls fail at once until it does (no pile of stuck threads). One long-lived thread:
    starting a thread per tick would cost more than the NVML calls themselves."""

    def __init__(self, timeout_s: float):
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._busy_since: float | None = None
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], dict[str, Any], threading.Event]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def _run(self) -> None:
        while True:
            fn, box, done = self._jobs.get()
            try:
                box["value"] = fn()
            except BaseException as error:  # handed to the caller
                box["error"] = error
            finally:
                with self._lock:
                    self._busy_since = None
                done.set()

    def call(self, fn: Callable[[], Any]) -> Any:
        with self._lock:
            if self._busy_since is not None:
                raise VendorHung(f"a vendor call has been running for {time.monotonic() - self._busy_since:.0f} s")
            self._busy_since = time.monotonic()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="fanwhy-vendor-calls", daemon=True)
                self._thread.start()
        box: dict[str, Any] = {}
        done = threading.Event()
        self._jobs.put((fn, box, done))
        if not done.wait(self.timeout_s):
            raise VendorHung(f"the backend did not answer within {self.timeout_s:g} s")
        if "error" in box:
            raise box["error"]
        return box["value"]


@dataclass(frozen=True)
class Frame:
    """A published snapshot with its JSON view, made once and shared by every reader."""

    seq: int
    snapshot: Snapshot
    view: dict[str, Any]
    monotonic: float


class Monitor:
    def __init__(
        self,
        selection: Selection,
        interval_s: float = 1.0,
        alerts: AlertEngine | None = None,
        attributor: Attributor | None = None,
        host: HostSampler | None = None,
        min_tick_gap_s: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        history: History | None = None,
        watchdog_s: float = 10.0,
    ):
        self.selection = selection
        self.backend = selection.backend
        self.interval_s = interval_s
        self.alerts = alerts or AlertEngine()
        self.attributor = attributor or Attributor(ProcessInspector())
        self.host = host or HostSampler()
        self.min_tick_gap_s = min_tick_gap_s
        self._clock = clock
        self._wall = wall_clock
        self.history = history
        self.vendor = VendorWorker(watchdog_s)
        self.hung: str | None = None
        self._latest: Frame | None = None
        self._recent: deque[Frame] = deque(maxlen=64)
        self._history: deque[Snapshot] = deque(maxlen=max(10, min(600, int(300 / interval_s))))
        self.energy = EnergyMeter(max_gap_s=max(10.0, 5 * interval_s))
        self._published = threading.Condition()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._start_lock = threading.Lock()
        self._collect_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._last_request = float("-inf")
        self._tick = 0
        self.consecutive_failures = 0
        self.total_errors = 0

    # -- life cycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Start the collector thread once, however often it is called."""
        with self._start_lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._run, name="fanwhy-collector", daemon=True)
            self._thread.start()

    def stop(self, close_backend: bool = True) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=max(5.0, 3 * self.interval_s))
        if close_backend:
            self.backend.close()
        with self._published:
            self._published.notify_all()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and not self._stop.is_set()

    def _run(self) -> None:
        while not self._stop.is_set():
            started = self._clock()
            try:
                self.collect()
            except Exception:  # the collector must outlive any one bad tick
                log.exception("collection failed")
                self.consecutive_failures += 1
                self.total_errors += 1
            elapsed = self._clock() - started
            self._wake.wait(timeout=max(0.0, self.interval_s - elapsed))
            self._wake.clear()

    # -- reading ----------------------------------------------------------------------------
    def latest(self) -> Frame | None:
        return self._latest

    def wait_frames(self, after_seq: int, timeout: float) -> list[Frame]:
        """The frames newer than ``after_seq`` (oldest first; at most the last 64), waiting up to
        ``timeout`` for one. Empty after the timeout or on stop."""
        deadline = time.monotonic() + timeout
        with self._published:
            while not self._stop.is_set():
                if self._latest is not None and self._latest.seq > after_seq:
                    return [f for f in self._recent if f.seq > after_seq]
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return []
                self._published.wait(remaining)
        return []

    def request_tick(self) -> bool:
        """Ask for an early collection; False when one was asked for too recently."""
        now = self._clock()
        if now - self._last_request < self.min_tick_gap_s:
            return False
        self._last_request = now
        self._wake.set()
        return True

    # -- collecting -------------------------------------------------------------------------
    def collect(self) -> Frame | None:
        """Build, publish and return one snapshot; None when the backend is hung (the last snapshot
        stays, and turns stale). Only the collector thread (or a CLI/test without one) calls this."""
        with self._collect_lock:
            return self._collect()

    def stale(self, frame: Frame | None = None) -> bool:
        """True while the backend hangs or the latest snapshot is older than three intervals."""
        frame = frame or self._latest
        if frame is None:
            return True
        return self.hung is not None or self._clock() - frame.monotonic > max(2.0, 3 * self.interval_s)

    def _read_backend(self) -> tuple[tuple[GpuSample, ...], list[Any], list[str]]:
        errors: list[str] = []
        gpus: tuple[GpuSample, ...] = ()
        try:
            gpus = tuple(self.backend.sample())
        except Exception as error:
            log.exception("backend %s sample failed", self.backend.name)
            errors.append(f"{self.backend.name} backend: {type(error).__name__}: {error}")
        usages: list[Any] = []
        try:
            usages = list(self.backend.processes())
        except Exception as error:
            log.exception("backend %s processes failed", self.backend.name)
            errors.append(f"{self.backend.name} processes: {type(error).__name__}: {error}")
        return gpus, usages, errors

    def _collect(self) -> Frame | None:
        t0 = self._clock()
        try:
            gpus, usages, errors = self.vendor.call(self._read_backend)
        except VendorHung as error:
            if self.hung is None:
                log.error("%s; serving the last snapshot, marked stale", error)
            self.hung = str(error)
            self.consecutive_failures += 1
            return None
        self.hung = None
        t1 = self._clock()
        attribution = Attribution(processes=(), containers=(), users=(), unattributed=())
        try:
            attribution = self.attributor.attribute(gpus, usages)
        except Exception as error:
            log.exception("process attribution failed")
            errors.append(f"processes: {type(error).__name__}: {error}")
        t2 = self._clock()
        try:
            host = self.host.sample()
        except Exception as error:
            log.exception("host sample failed")
            errors.append(f"host: {type(error).__name__}: {error}")
            host = HostSample(hostname="", cpu_percent=None, cpu_count=None, load_average=None,
                              memory_used_bytes=None, memory_total_bytes=None)
        t3 = self._clock()

        now = self._wall()
        processes, containers, unattributed = self.energy.apply(
            now, gpus, attribution.processes, attribution.containers, attribution.unattributed)
        self._tick += 1
        no_gpu_reason = None
        if not gpus:
            backend_reason = getattr(self.backend, "no_gpu_reason", None)
            skipped = "; ".join(f"{name}: {why}" for name, why in self.selection.skipped.items())
            no_gpu_reason = "; ".join(filter(None, [skipped, backend_reason])) or "the backend reported no GPU"
        snapshot = Snapshot(
            timestamp=now,
            backend=BackendInfo(name=self.backend.name, skipped=frozen_map(self.selection.skipped),
                                no_gpu_reason=no_gpu_reason),
            host=host,
            gpus=gpus,
            processes=processes,
            containers=containers,
            users=attribution.users,
            unattributed=unattributed,
            timing=CollectorTiming(total_ms=_ms(t3 - t0), gpus_ms=_ms(t1 - t0), processes_ms=_ms(t2 - t1),
                                   host_ms=_ms(t3 - t2), interval_s=self.interval_s, tick=self._tick),
            errors=tuple(errors),
        )
        # The verdict and the alerts are views of the finished snapshot (and the ones before it).
        verdict = explain(snapshot, self._history)
        active, events = self.alerts.evaluate(snapshot, now, drain_events(self.backend))
        snapshot = dataclasses.replace(snapshot, verdict=verdict, alerts=active, alert_events=events)
        self._history.append(snapshot)
        if self.history is not None:
            self.history.submit(snapshot)
        if errors:
            self.consecutive_failures += 1
            self.total_errors += len(errors)
        else:
            self.consecutive_failures = 0
        return self._publish(snapshot)

    def _publish(self, snapshot: Snapshot) -> Frame:
        with self._published:
            seq = self._latest.seq + 1 if self._latest is not None else 1
            frame = Frame(seq=seq, snapshot=snapshot, view=snapshot_view(snapshot), monotonic=self._clock())
            self._latest = frame
            self._recent.append(frame)
            self._published.notify_all()
        return frame


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)
