"""``fanwhy top --server URL``: the snapshots of a running FanWhy, asked for on a thread of their own. Whatever the
server answers (a refusal, a redirect elsewhere, a byte a second, NaN, numbers of 400 digits, JSON nested 100,000
deep) is a reason said in the title, never a traceback: the numbers are narrowed where read (``number``), the
reading has one deadline, and the thread is started again when it is stuck or ended."""

from __future__ import annotations

import getpass
import os
import sys
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..attribution.listing import CEILING
from ..core.jsonvalue import TooDeep, loads
from ..core.origin import UserInfo, checked, open_same_origin
from .topstate import View

if TYPE_CHECKING:
    from http.client import HTTPResponse

MAX_VIEW_BYTES = 8 << 20  # a server's snapshot is a few kB a GPU: more is not a snapshot


class RemoteFeed:
    """A running FanWhy, asked for its snapshot every ``interval_s`` on a thread of its own: a slow server never
    holds the keys. Each ask has one deadline for the whole answer (``timeout_s``, headers and body): a server that
    sends a byte a second is said on screen when it passes, and the feed starts again on a fresh thread (the stuck
    one is left to its socket's timeout; what it brings back is dropped). A feed thread that ended by anything it
    met is started again, and that is said too."""

    def __init__(self, url: str, token: str | None, interval_s: float):
        self.url = url.rstrip("/") + "/api/gpu/metrics"
        self.listing_url = url.rstrip("/") + f"/api/gpu/processes?kind=all&sort=cpu&limit={CEILING}"
        self.token = token
        self.interval_s = interval_s
        self.timeout_s = max(5.0, 2 * interval_s)
        self._lock = threading.Lock()
        self._state: tuple[int, View | None, str] = (0, None, "")
        self._stop = threading.Event()
        self._asking_since: float | None = None
        self._generation = 0
        self._thread = self._start()

    def _start(self) -> threading.Thread:
        thread = threading.Thread(target=self._run, args=(self._generation,), name="fanwhy-top-feed", daemon=True)
        thread.start()
        return thread

    def latest(self) -> tuple[int, View | None, str]:
        with self._lock:
            since, alive = self._asking_since, self._thread.is_alive()
            late = since is not None and time.monotonic() - since > self.timeout_s + 1.0
            if not self._stop.is_set() and (late or not alive):
                said = (f"{self.url}: no whole answer within {self.timeout_s:g} s; asking again" if late
                        else "the feed stopped; started again")
                self._generation += 1
                self._asking_since = None
                self._state = (self._state[0], self._state[1], said)
                self._thread = self._start()
            return self._state

    def fetch(self) -> View:
        """One snapshot from the server, with every process it lists (its snapshot's own rows where it lists none:
        a server older than the listing); ValueError with the reason a person reads when there is none."""
        view = get_json(self.url, self.token, self.timeout_s)
        if not isinstance(view, dict) or "gpus" not in view:
            raise Unanswered(f"{self.url}: not a FanWhy snapshot")
        try:
            listing = get_json(self.listing_url, self.token, self.timeout_s)
        except Unanswered:
            return view
        if isinstance(listing, dict) and isinstance(listing.get("processes"), list):
            view["processes"] = listing["processes"]
        return view

    def _run(self, generation: int) -> None:
        while not self._stop.is_set() and generation == self._generation:
            with self._lock:
                self._asking_since = time.monotonic()
            try:
                view: View | None = self.fetch()
                said = ""
            except Unanswered as error:
                view, said = None, str(error)
            except Exception as error:  # anything the answer did to the reading: said, and asked again
                view, said = None, f"{self.url}: the answer could not be read ({type(error).__name__}); asking again"
            with self._lock:
                if generation != self._generation:
                    return  # given up on as late: a fresh thread asks now
                self._asking_since = None
                seq, last, _ = self._state
                self._state = (seq + 1, view, "") if view is not None else (seq, last, said)
            self._stop.wait(self.interval_s)

    def close(self) -> None:
        self._stop.set()


class Unanswered(ValueError):
    """A server gave no snapshot: why, in words a person reads; ``status`` its HTTP status when it answered."""

    def __init__(self, reason: str, status: int | None = None):
        super().__init__(reason)
        self.status = status


def get_json(url: str, token: str | None, timeout_s: float) -> object:
    """``url``'s JSON (at most MAX_VIEW_BYTES); Unanswered with the reason when there is none."""
    import urllib.error  # only here: urllib.request (with TLS and http.client) is not a local top's
    import urllib.request

    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    deadline = time.monotonic() + timeout_s
    try:
        with open_same_origin(request, timeout_s) as response:
            body = _whole(response, deadline, url)
    except urllib.error.HTTPError as error:
        reason = "the token was refused (FANWHY_TOKEN)" if error.code in (401, 403) else f"HTTP {error.code}"
        raise Unanswered(f"{url}: {reason}", error.code) from None
    except (urllib.error.URLError, OSError) as error:
        raise Unanswered(f"{url}: {getattr(error, 'reason', error)}") from None
    if len(body) > MAX_VIEW_BYTES:
        raise Unanswered(f"{url}: more than {MAX_VIEW_BYTES >> 20} MiB: not a snapshot")
    try:
        return loads(body)
    except TooDeep:
        raise Unanswered(f"{url}: JSON nested too deep: not a snapshot") from None
    except ValueError:
        raise Unanswered(f"{url}: not JSON: is this a FanWhy server?") from None


def _whole(response: HTTPResponse, deadline: float, url: str) -> bytes:
    """The answer's body, at most MAX_VIEW_BYTES + 1, all of it before ``deadline`` (each read waits at most the
    socket's timeout; a server that sends a byte a second passes the deadline, and that is said)."""
    parts: list[bytes] = []
    size = 0
    while size <= MAX_VIEW_BYTES:
        piece = response.read1(min(65536, MAX_VIEW_BYTES + 1 - size))
        if not piece:
            break
        parts.append(piece)
        size += len(piece)
        if time.monotonic() > deadline:
            raise Unanswered(f"{url}: no whole answer within the deadline")
    return b"".join(parts)


def first_contact(server: str, environ: Mapping[str, str] = os.environ) -> tuple[str | None, str]:
    """(the token, "") once the server at ``server`` answered a snapshot (or said it is still starting), the token
    asked for on the terminal (not echoed) only once the server said it wants one; (None, why) when it never
    answered: no server there, a refused token, not a FanWhy."""
    try:
        url = checked(server).rstrip("/") + "/api/gpu/metrics"
    except UserInfo as error:
        return None, str(error)
    token = environ.get("FANWHY_TOKEN", "").strip() or None
    for asked in (False, True):
        try:
            view = get_json(url, token, 10.0)
        except Unanswered as error:
            if error.status == 503:  # there, with no snapshot yet: the screen waits for it
                return token, ""
            if error.status in (401, 403) and token is None and not asked and sys.stdin.isatty():
                token = getpass.getpass(f"token for {server} (empty for none): ").strip() or None
                if token is not None:
                    continue
            reason = str(error) if token is not None or error.status not in (401, 403) else \
                f"{url}: the server wants its token (FANWHY_TOKEN, or typed when asked)"
            if error.status is None and "JSON" not in reason and "MiB" not in reason:
                reason += " (is FanWhy running there? `fanwhy serve` listens on FANWHY_HOST:FANWHY_PORT)"
            return None, reason
        if not isinstance(view, dict) or "gpus" not in view:
            return None, f"{url}: not a FanWhy snapshot"
        return token, ""
    return None, f"{url}: the token was refused (FANWHY_TOKEN)"
