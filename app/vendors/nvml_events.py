"""XID errors from NVML's event API, on a thread of their own (the collector never waits for them)."""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Callable

from ..core.model import GpuEvent
from ..core.threads import spawn
from .calls import Library

log = logging.getLogger(__name__)


class XidWatcher:
    """One thread blocked in nvmlEventSetWait_v2 for critical XID errors on every GPU that supports them.

    NVML is thread-safe; the wait times out every ``wait_ms`` so the thread notices when it is stopped. A wait costs the
    same CPU however long it is, so it is long. NVML must not be shut down under the waiting thread: ``stop`` takes what
    shuts it down and the thread runs it once it has left its wait and freed its set. (A second NVML initialisation for
    the thread instead hung nvmlEventSetCreate in gunicorn's gevent worker.)
    """

    def __init__(self, nvml: Library, handles: list[tuple[int, object]], wall_clock: Callable[[], float],
                 wait_ms: int = 5000):
        self.nvml = nvml
        self.wait_ms = wait_ms
        self._wall = wall_clock
        self._events: list[GpuEvent] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.unsupported: str | None = None
        self._set = None
        self._thread: threading.Thread | None = None
        self._release: Callable[[], None] | None = None  # the owner's NVML shutdown, run by the thread as it leaves
        self._waiting = False  # the thread is in its loop (under _lock: stop and the thread's exit agree on it)
        xid = getattr(nvml, "nvmlEventTypeXidCriticalError", None)
        if xid is None or not hasattr(nvml, "nvmlEventSetWait_v2"):
            self.unsupported = "this nvidia-ml-py has no event API"
            return
        try:
            self._set = nvml.nvmlEventSetCreate()
        except nvml.NVMLError as error:
            self.unsupported = f"nvmlEventSetCreate: {type(error).__name__}"
            return
        registered = 0
        for _, handle in handles:
            try:
                nvml.nvmlDeviceRegisterEvents(handle, xid, self._set)
                registered += 1
            except nvml.NVMLError as error:
                log.info("XID events not available on a GPU: %s", type(error).__name__)
        if not registered:
            self.unsupported = "no GPU supports XID events"
            self._free_set()
            return
        self._waiting = True
        # not started again: its set is freed as it ends (a fault is recorded; XID events are then not read)
        self._thread = spawn(self._run, "fanwhy-xid", restart=False)

    def _run(self) -> None:
        try:
            self._wait_loop()
        except Exception as error:  # recorded by its supervisor; health says the events are no longer read
            self.unsupported = f"stopped after a fault ({type(error).__name__}: {str(error)[:120]})"
            raise
        finally:  # the set is freed by the thread that waits on it, never under its feet; then NVML may go
            self._free_set()
            with self._lock:
                release, self._release, self._waiting = self._release, None, False
            if release is not None:
                release()

    def _free_set(self) -> None:
        if self._set is not None:
            with contextlib.suppress(self.nvml.NVMLError):
                self.nvml.nvmlEventSetFree(self._set)
            self._set = None

    def _wait_loop(self) -> None:
        nvml = self.nvml
        while not self._stop.is_set():
            try:
                data = nvml.nvmlEventSetWait_v2(self._set, self.wait_ms)
            except nvml.NVMLError as error:
                if getattr(error, "value", None) != nvml.NVML_ERROR_TIMEOUT:
                    log.warning("XID event wait: %s", type(error).__name__)
                    self._stop.wait(1.0)
                continue
            try:
                index: int | None = nvml.nvmlDeviceGetIndex(data.device)
            except nvml.NVMLError:
                index = None
            with self._lock:
                self._events.append(GpuEvent(gpu_index=index, kind="xid", value=int(data.eventData),
                                             timestamp=self._wall()))

    def drain(self) -> list[GpuEvent]:
        with self._lock:
            events, self._events = self._events, []
        return events

    def stop(self, release: Callable[[], None]) -> None:
        """Ask the thread to end; it leaves within ``wait_ms``, frees the event set, then calls ``release`` (the
        owner's NVML shutdown). Without a running thread, ``release`` is called now."""
        with self._lock:
            running = self._waiting
            if running:
                self._release = release
        self._stop.set()
        if not running:
            release()

    def join(self, timeout: float) -> bool:
        """Wait for the thread to have left (tests); True when it has, or never ran."""
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True
