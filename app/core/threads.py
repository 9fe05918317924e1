"""FanWhy's background threads: daemon threads whose name the OS sees too, and that never die in silence.

Python names a thread for itself only; ``top -H``, ``ps -L`` and ``/proc/PID/task/TID/comm`` show the process's
name for every thread. Each thread FanWhy starts sets its OS name (15 bytes at most, the kernel's limit), so an
operator, and ``benchmarks/server_cpu.py``, can tell the collector from the history writer.

Each is **supervised**: an exception its code did not expect (one integer too large for SQLite once ended the
history writer, and with it every later write, while health said ok) is logged once per cause with its traceback,
counted in ``FAULTS`` (``/api/health`` turns degraded, naming the thread and the reason), and the thread's body is
started again after a backoff (1 s, doubling to 60 s; back to 1 s after a minute without a fault).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from .record import record

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")
RECENT_S = 300.0  # a fault keeps health degraded this long after it happened


def os_name(name: str) -> None:
    """Name the calling thread for the OS (the first 15 bytes; the kernel's own file, so no C library is looked up:
    ``ctypes.util.find_library`` runs ``ldconfig -p``, a process of its own, in every command's start); a no-op
    where the OS has no such file."""
    with contextlib.suppress(OSError), open("/proc/thread-self/comm", "wb") as comm:
        comm.write(name.encode()[:15])


@record
class Fault:
    thread: str
    reason: str  # the exception's type and message
    count: int  # how often this thread failed since start
    last_monotonic: float

    def view(self, now: float) -> dict[str, object]:
        return {"thread": self.thread, "reason": self.reason, "count": self.count,
                "age_s": round(now - self.last_monotonic, 1)}


class Faults:
    """The unexpected exceptions of FanWhy's threads, by thread (one server is one process: one register)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._faults: dict[str, Fault] = {}
        self._logged: set[tuple[str, str]] = set()

    def record(self, thread: str, error: BaseException) -> None:
        reason = f"{type(error).__name__}: {error}"[:300]
        with self._lock:
            count = self._faults[thread].count + 1 if thread in self._faults else 1
            self._faults[thread] = Fault(thread, reason, count, self._clock())
            first = (thread, type(error).__name__) not in self._logged
            self._logged.add((thread, type(error).__name__))
        if first:  # once per thread and kind of error: a fault that repeats every tick must not fill the log
            log.error("fanwhy: thread %s failed: %s (it is started again; later faults of this kind are counted in "
                      "/api/health, not logged)", thread, reason, exc_info=error)

    def recent(self, within_s: float = RECENT_S) -> list[dict[str, object]]:
        """The threads that failed in the last ``within_s`` seconds, as /api/health shows them."""
        now = self._clock()
        with self._lock:
            return [f.view(now) for f in self._faults.values() if now - f.last_monotonic <= within_s]

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()
            self._logged.clear()


FAULTS = Faults()


def supervised(body: Callable[[], object], name: str, *, restart: bool = True, sleep: Callable[[float], object]
               = time.sleep, clock: Callable[[], float] = time.monotonic) -> None:
    """Run ``body`` until it returns; an exception is recorded in FAULTS and, with ``restart``, ``body`` runs again
    after a backoff (1 s doubling to 60 s; 1 s again once it ran a minute without failing)."""
    delay = 1.0
    while True:
        started = clock()
        try:
            body()
            return
        except Exception as error:  # the point: nothing a thread did not expect may end it unseen
            FAULTS.record(name, error)
            if not restart:
                return
        delay = 1.0 if clock() - started > 60 else delay
        sleep(delay)
        delay = min(delay * 2, 60.0)


def spawn(target: Callable[..., object], name: str, *args: object, restart: bool = True) -> threading.Thread:
    """Start a daemon thread named ``name`` (for Python and the OS) running ``target(*args)``, supervised
    (``supervised``; ``restart=False`` for a body that cannot run twice: its fault is recorded and it ends)."""

    def run() -> None:
        os_name(name)
        supervised(lambda: target(*args), name, restart=restart)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


def each_on_a_thread(work: Callable[[T], R], items: Sequence[T], name: str) -> list[R]:
    """``work(item)`` for every item, each on a thread of its own (named ``name``), the results in the items'
    order; what one raised is raised here once all have ended. One item runs on the caller's thread."""
    if len(items) <= 1:
        return [work(item) for item in items]
    results: list[tuple[R] | BaseException] = [ValueError("not run")] * len(items)

    def run(index: int) -> None:
        os_name(name)
        try:
            results[index] = (work(items[index]),)
        except BaseException as error:  # handed to the caller, raised there
            results[index] = error

    threads = [threading.Thread(target=run, args=(i,), name=name, daemon=True) for i in range(len(items))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return [result[0] for result in results if not isinstance(result, BaseException)]
