"""Refusals on record: every request FanWhy turns away is counted by cause, and logged with the peer and the reason.

An operator whose browser, proxy or Prometheus is refused needs to see why in the log; an attacker must not be able
to fill it. So each cause gets at most one line every ``every_s`` seconds; the refusals in between are counted and
the next line says how many there were. The reason never holds a credential: the callers' reasons name hosts,
origins, limits and sizes, never a token. ``/api/health`` shows the counts by cause.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

CAUSES = ("host", "origin", "token", "body", "session", "rate")
log = logging.getLogger("fanwhy.refusals")


class Refusals:
    def __init__(self, every_s: float = 10.0, clock: Callable[[], float] = time.monotonic,
                 logger: logging.Logger = log):
        self.every_s = every_s
        self._clock = clock
        self._log = logger
        self._lock = threading.Lock()
        self._counts = dict.fromkeys(CAUSES, 0)
        self._last_line: dict[str, float] = {}
        self._unlogged = dict.fromkeys(CAUSES, 0)

    def record(self, cause: str, peer: str | None, status: int, reason: str) -> None:
        """Count one refusal of ``cause`` (one of CAUSES) and log it, unless its cause was logged lately."""
        now = self._clock()
        with self._lock:
            self._counts[cause] += 1
            last = self._last_line.get(cause)
            if last is not None and now - last < self.every_s:
                self._unlogged[cause] += 1
                return
            self._last_line[cause] = now
            quiet, self._unlogged[cause] = self._unlogged[cause], 0
        more = f" ({quiet} more {cause} refusals not logged in the last {self.every_s:g} s)" if quiet else ""
        self._log.warning("fanwhy: refused (%s, %d) a request from %s: %s%s", cause, status, peer or "?",
                          reason[:300], more)

    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)
