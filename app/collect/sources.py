"""A fan source's contract, and the clock that reads it: one bad source costs only itself.

A **source** is one place fans and temperatures are read from: one hwmon chip, the BMC, a laptop's embedded
controller, an AIO cooler through liquidctl, one fan daemon's configuration. It says its ``key`` (short, unique: a
thread's name), its ``name`` (for people), its ``period_s`` and its ``timeout_s``, and ``read()`` returns a
``Reading`` or raises.

A ``SourceClock`` reads one source on its own thread, every ``period_s``; the fan service (and through it the
collector's tick) only ever takes the latest reading, so a source that blocks (a driver that hangs, a FIFO where a
file was) or fails holds nothing but itself. A read that runs past ``timeout_s`` or raised makes the source
**failing**, with the reason; its last reading is then **stale**, with its age, and never served as live.
Without a thread (``threaded=False``: a replay, a test under its own clock) ``poll`` reads a due source in place.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Literal, Protocol

from ..core.fan import AirSensor, Fan
from ..core.model import HostSensor
from ..core.record import record
from ..core.threads import FAULTS, spawn
from .fancontrol import Declared

_NONE: Mapping[str, str] = MappingProxyType({})
SourceState = Literal["waiting", "ok", "failing"]


@record
class Reading:
    """What one read of a source found. ``left_out``: temperatures read but not believed ("chip label" -> why);
    ``names``: "chip tempN" -> "chip label" (how a configuration's source is named); ``problem``: read, but
    something is wrong with what was read (a configuration that does not parse)."""

    fans: tuple[Fan, ...] = ()
    temperatures: tuple[HostSensor, ...] = ()
    left_out: Mapping[str, str] = field(default_factory=lambda: _NONE)
    air: tuple[AirSensor, ...] = ()
    declared: tuple[Declared, ...] = ()
    names: Mapping[str, str] = field(default_factory=lambda: _NONE)  # an input's name as people read it
    problem: str | None = None


class Source(Protocol):
    """The contract: a key, a name, a period, a timeout and a read."""

    @property
    def key(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def period_s(self) -> float: ...
    @property
    def timeout_s(self) -> float: ...
    def read(self) -> Reading: ...


@record
class FansOf:
    """A source made of a function that reads fans: a backend's fans read apart from its sample (NVML's)."""

    key: str
    name: str
    fans: Callable[[], tuple[Fan, ...]]
    period_s: float = 1.0
    timeout_s: float = 5.0

    def read(self) -> Reading:
        return Reading(fans=self.fans())


@record
class SourceStatus:
    """Where one source stands: ``waiting`` for its first read, ``ok``, or ``failing`` (``reason``); ``age_s`` is
    the age of its last good reading (None before one)."""

    key: str
    name: str
    state: SourceState
    reason: str | None
    age_s: float | None

    def view(self) -> dict[str, object]:
        return {"key": self.key, "name": self.name, "state": self.state, "reason": self.reason,
                "age_s": None if self.age_s is None else round(self.age_s, 1)}


_PACKAGE = __name__.split(".")[0]  # "app" from the repository, "fanwhy" installed


def _expected(error: BaseException) -> bool:
    """A failure a source is expected to meet (the OS's, FanWhy's own, text that does not parse), not a bug."""
    return isinstance(error, (OSError, RecursionError, UnicodeError)) or type(error).__module__.split(".")[0] in (
        _PACKAGE, "json", "yaml")


def _reason(error: BaseException) -> str:
    """An error in one line: FanWhy's own and the OS's say it all; anything else is named by its type."""
    if isinstance(error, RecursionError):
        return "nested too deep to read"
    text = str(error).splitlines()[0] if str(error) else ""
    ours = isinstance(error, OSError) or type(error).__module__.split(".")[0] == _PACKAGE
    return (text if ours and text else f"{type(error).__name__}: {text}")[:300]


class SourceClock:
    """One source on its own clock (a thread, or ``poll`` in place)."""

    def __init__(self, source: Source, clock: Callable[[], float] = time.monotonic, threaded: bool = True):
        self.source = source
        self._clock = clock
        self.latest: Reading | None = None
        self.read_at: float | None = None
        self.error: str | None = None
        self.busy_since: float | None = None
        self._next = float("-inf")
        self._stop = threading.Event()
        self.thread_name = f"fanwhy-{source.key}"[:15]
        self._thread = spawn(self._loop, self.thread_name) if threaded else None

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._once()
            self._stop.wait(max(self.source.period_s, 0.5))  # a period of 0 (read every tick) is not a busy loop

    def _once(self) -> None:
        self.busy_since = self._clock()
        try:
            reading = self.source.read()
        except Exception as error:  # a source's failure, whatever it is, is its own reason, not the server's
            self.error = _reason(error)
            if not _expected(error):  # a bug, not a bad source: its traceback once, and /api/health's thread_faults
                FAULTS.record(self.thread_name, error)
        else:
            self.latest, self.read_at, self.error = reading, self._clock(), None
        finally:
            self.busy_since = None

    def poll(self, now: float) -> None:
        """Without a thread: read the source here when it is due."""
        if self._thread is None and now >= self._next:
            self._next = now + self.source.period_s
            self._once()

    def wait_first(self, deadline: float) -> None:
        """Until the first read ended (well or not) or ``deadline`` (a replay waits for what it captured)."""
        while self.read_at is None and self.error is None and self._clock() < deadline:
            time.sleep(0.01)

    def status(self, now: float) -> SourceStatus:
        age = None if self.read_at is None else max(0.0, now - self.read_at)
        busy = self.busy_since
        source = self.source
        if busy is not None and now - busy > source.timeout_s:
            reason: str | None = (f"no answer for {now - busy:.0f} s (its timeout is {source.timeout_s:g} s): "
                                  "the read blocks")
        else:
            reason = self.error
        if reason is None and self.latest is not None and self.latest.problem:
            return SourceStatus(source.key, source.name, "ok", self.latest.problem, age)
        state: SourceState = "failing" if reason else "ok" if self.latest is not None else "waiting"
        return SourceStatus(source.key, source.name, state, reason, age)

    def stop(self) -> None:
        """The thread ends after its current read (a read that blocks for good keeps its thread, and only it)."""
        self._stop.set()
