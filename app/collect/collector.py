"""The collector: ONE thread per server builds an immutable Snapshot every interval.

Requests, socket events and scrapes read the latest Frame; they never call a vendor library.
``request_tick`` asks for an early collection, rate-limited so that no client can make the
collector run more often than every ``min_tick_gap_s``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..attribution.attributor import Attribution, Attributor
from ..attribution.processes import ProcessInspector
from ..attribution.procstat import CpuBaseline
from ..core.fan import AirSensor, Fan
from ..core.model import GpuProcessUsage, GpuSample, HostSample, evolve, frozen_map
from ..core.snapshot import Alert, BackendInfo, CollectorTiming, Snapshot
from ..core.threads import spawn
from ..vendors.factory import Selection, no_gpu_sentence
from ..verdict.alerts import AlertEngine
from ..verdict.explain import Remembered
from .energy import EnergyMeter
from .fans import FanService, with_fans
from .frames import Counters, Frame, Frames, GpuEventKey
from .host import HostSampler

if TYPE_CHECKING:  # a terminal answer writes no history: sqlite3 stays unloaded
    from ..store.history import History

log = logging.getLogger(__name__)
FIRST_FANS_S = 1.0  # the first tick waits this long at most for the fan sources' first readings


class Collector:
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
        fans: FanService | None = None,
    ):
        self.selection = selection
        self.backend = selection.backend
        self.interval_s = interval_s
        self.alerts = alerts or AlertEngine()
        self.attributor = attributor or Attributor(ProcessInspector())
        self.host = host or HostSampler()
        inspector = self.attributor.inspector
        if inspector.proc_root == Path(self.host.proc_root):  # the host reads /proc/stat after the processes
            inspector.machine_reading = lambda: self.host.busy_at_read
        self.fans = fans or FanService(sys_root=self.host.sys_root)
        if self.fans.threaded:  # the chips are read on their own clocks: the host sample takes their latest
            self.host.sensors = self.fans.temperatures
        self.min_tick_gap_s = min_tick_gap_s
        self._clock = clock
        self._wall = wall_clock
        self.history = history
        self.watchdog_s = watchdog_s
        self._vendor_since: float | None = None  # when the collector entered the vendor calls now running
        self.frames = Frames()  # what is published, and how readers wait for it
        self._remembered = Remembered()  # since when each GPU is busy, whom the CPU cause named: causes hold
        # (GPU index, kind, code) -> how many such events since start (XID errors by code, for /metrics)
        self._gpu_event_counts: Counter[GpuEventKey] = Counter()
        self.energy = EnergyMeter(max_gap_s=max(10.0, 5 * interval_s))
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
            self._thread = spawn(self._run, "fanwhy-collector")

    def stop(self, close_backend: bool = True, join_s: float | None = None) -> None:
        """Stop the collector thread. The backend is closed only once no vendor call is running: a
        thread stuck in NVML keeps it (the process is ending anyway)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=max(5.0, 3 * self.interval_s) if join_s is None else join_s)
        if close_backend and self._vendor_since is None:
            self.backend.close()
        if self._thread is None or not self._thread.is_alive():
            self.host.close()  # its kept /proc descriptors (reopened if this collector collects again)
            self.fans.close()
        self.frames.close()

    def prime(self, baseline: CpuBaseline) -> None:
        """The first tick's CPU % (the machine's and each process's) is measured since ``baseline``: one tick
        then answers in full, where otherwise a second one is needed."""
        self.host.prime(baseline)
        self.attributor.inspector.prime(baseline)

    def counters(self) -> Counters:
        """The counters as of now (a frame carries them as of its own moment: read those with the frame)."""
        return Counters(total_errors=self.total_errors, consecutive_failures=self.consecutive_failures,
                        gpu_events=tuple(sorted(self._gpu_event_counts.items(), key=str)),
                        recent_alerts=self.alerts.recent)

    def _recount(self) -> None:
        """A tick that raised publishes no snapshot, but its error counts: the latest frame is replaced by one with
        the same snapshot, sequence and age and the counters of now (readers are not woken: no new data)."""
        self.frames.recount(self.counters())

    def set_interval(self, seconds: float) -> None:
        """Collect every ``seconds`` from the next tick on (``--watch N``)."""
        self.interval_s = seconds

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
                self._recount()
            elapsed = self._clock() - started
            self._wake.wait(timeout=max(0.0, self.interval_s - elapsed))
            self._wake.clear()

    # -- reading ----------------------------------------------------------------------------
    def latest(self) -> Frame | None:
        return self.frames.latest()

    def wait_frame(self, after_seq: int, timeout: float) -> Frame | None:
        """The latest frame once it is newer than ``after_seq``, waiting up to ``timeout``; None after
        the timeout or on stop."""
        return self.frames.wait(after_seq, timeout)

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` after each new frame (app.collect.frames); returns the function that unsubscribes it."""
        return self.frames.subscribe(listener)

    def alert_events(self, after_seq: int, upto_seq: int) -> list[Alert]:
        """The alert events of the frames after ``after_seq`` up to ``upto_seq``, oldest first."""
        return self.frames.alert_events(after_seq, upto_seq)

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
        """Build, publish and return one snapshot; None when the backend answered later than the watchdog
        (the last snapshot stays, and turns stale). Only the collector thread (or a test) calls this: a
        hung vendor call blocks its caller, so anything that must answer in time reads ``latest()``."""
        with self._collect_lock:
            return self._collect()

    @property
    def hung(self) -> str | None:
        """Why the backend counts as hung: a vendor call has run longer than the watchdog; else None.

        The collector calls the vendor on its own thread (handing each tick to another thread cost more
        than the NVML calls themselves), so a call that never returns stops new snapshots; from
        ``watchdog_s`` on, every reader sees this and the last snapshot marked stale."""
        since = self._vendor_since
        if since is None:
            return None
        running = self._clock() - since
        if running < self.watchdog_s:
            return None
        return f"a vendor call has been running for {running:.0f} s (watchdog {self.watchdog_s:g} s)"

    def stale(self, frame: Frame | None = None) -> bool:
        """True while the backend hangs or the latest snapshot is older than three intervals."""
        frame = frame or self.frames.latest()
        if frame is None:
            return True
        return self.hung is not None or self._clock() - frame.monotonic > max(2.0, 3 * self.interval_s)

    def _read_backend(self) -> tuple[tuple[GpuSample, ...], list[GpuProcessUsage], list[str]]:
        errors: list[str] = []
        gpus: tuple[GpuSample, ...] = ()
        try:
            gpus = tuple(self.backend.sample())
        except Exception as error:
            log.exception("backend %s sample failed", self.backend.name)
            errors.append(f"{self.backend.name} backend: {type(error).__name__}: {error}")
        usages: list[GpuProcessUsage] = []
        try:
            usages = list(self.backend.processes())
        except Exception as error:
            log.exception("backend %s processes failed", self.backend.name)
            errors.append(f"{self.backend.name} processes: {type(error).__name__}: {error}")
        return gpus, usages, errors

    def _collect(self) -> Frame | None:
        t0 = self._vendor_since = self._clock()
        try:
            gpus, usages, errors = self._read_backend()
        finally:
            self._vendor_since = None
        t1 = self._clock()
        if t1 - t0 >= self.watchdog_s:  # readings that span this long are not one instant: read again
            log.error("the backend took %.1f s (watchdog %g s); its readings are dropped", t1 - t0, self.watchdog_s)
            self.consecutive_failures += 1
            return None
        attribution = Attribution(processes=(), containers=(), users=(), unattributed=())
        try:
            attribution = self.attributor.attribute(gpus, usages)
        except Exception as error:
            log.exception("process attribution failed")
            errors.append(f"processes: {type(error).__name__}: {error}")
        t2 = self._clock()
        if self._tick == 0:  # once, at start: the first answer has its fans and temperatures (a source slower
            self.fans.wait_first(FIRST_FANS_S)  # than this is "waiting" in /api/fans)
        try:
            host = self.host.sample()
            errors.extend(self.host.errors)
        except Exception as error:
            log.exception("host sample failed")
            errors.append(f"host: {type(error).__name__}: {error}")
            host = HostSample(hostname="", cpu_percent=None, cpu_count=None, load_average=None,
                              memory_used_bytes=None, memory_total_bytes=None)
        fans: tuple[Fan, ...] = ()
        air: tuple[AirSensor, ...] = ()
        try:
            fans, air = self.fans.read(gpus, host)
            errors.extend(self.fans.problems())
            gpus = tuple(with_fans(g, fans) for g in gpus)
        except Exception as error:  # a fan source that fails costs the fans, never the snapshot
            log.exception("fans failed")
            errors.append(f"fans: {type(error).__name__}: {error}")
        t3 = self._clock()

        now = self._wall()
        processes, containers, unattributed, ledger = self.energy.apply(
            now, gpus, attribution.processes, attribution.containers, attribution.unattributed)
        self._tick += 1
        snapshot = Snapshot(
            timestamp=now,
            backend=self._backend_info(bool(gpus)),
            host=host,
            gpus=gpus,
            processes=processes,
            containers=containers,
            users=attribution.users,
            unattributed=unattributed,
            fans=fans,
            air=air,
            ledger=ledger,
            timing=CollectorTiming(total_ms=_ms(t3 - t0), gpus_ms=_ms(t1 - t0), processes_ms=_ms(t2 - t1),
                                   host_ms=_ms(t3 - t2), interval_s=self.interval_s, tick=self._tick),
            errors=tuple(errors),
        )
        # The verdict and the alerts are views of the finished snapshot (and of the ones before it).
        verdict = self._remembered.explain(snapshot)
        gpu_events = self.backend.events()
        for event in gpu_events:
            self._gpu_event_counts[(event.gpu_index, event.kind, event.value)] += 1
        snapshot = evolve(snapshot, verdict=verdict)
        active, events = self.alerts.evaluate(snapshot, now, gpu_events)  # an alert's message says why: the verdict
        snapshot = evolve(snapshot, alerts=active, alert_events=events)
        if self.history is not None:
            self.history.submit(snapshot)
        if errors:
            self.consecutive_failures += 1
            self.total_errors += len(errors)
        else:
            self.consecutive_failures = 0
        return self.frames.publish(snapshot, self._clock(), self.counters())

    def _backend_info(self, has_gpus: bool) -> BackendInfo:
        """Which backend answered; without a GPU, why (the technical reasons and a sentence)."""
        if has_gpus:
            return BackendInfo(name=self.backend.name, skipped=frozen_map(self.selection.skipped))
        backend_reason = self.backend.no_gpu_reason
        skipped = "; ".join(f"{name}: {why}" for name, why in self.selection.skipped.items())
        return BackendInfo(name=self.backend.name, skipped=frozen_map(self.selection.skipped),
                           no_gpu_reason="; ".join(filter(None, [skipped, backend_reason]))
                           or "the backend reported no GPU",
                           no_gpu_summary=no_gpu_sentence(self.selection))

def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)

