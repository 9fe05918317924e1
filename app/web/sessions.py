"""Socket.IO sessions: what one connection may send, and room for a newcomer when the server is full.

Engine.IO hands every message of a connection to Socket.IO on that connection's own reader, and Socket.IO starts a
task for each event. Unchecked, one WebSocket that sends 20,000 packets in a burst starts 20,000 tasks, and each
malformed one logged two tracebacks. Here, in front of Socket.IO's message handler:

- **packets a second**: each connection has a token bucket (``RATE`` a second, ``BURST`` at once); a packet over
  it is dropped, and a connection that has had ``DROPPED_BUDGET`` packets dropped is closed;
- **malformed packets**: one that Socket.IO cannot parse or place is counted and dropped; the connection is closed
  at the ``MALFORMED_BUDGET``-th;
- each connection is logged once, one line, no traceback, when it is first limited and when it is closed, and
  all connections together at most ``LOG_LINES`` lines a minute (a client that reconnects to send one malformed
  packet each time is a new session each time): past it, one line a minute says how many were left out.

**Room for a newcomer.** When FANWHY_MAX_SESSIONS are open, a new session is let in and the oldest session of the
address that holds the most is closed; the loopback range (127.0.0.0/8, ::1) counts as one address there, since
every local user shares it and its default asks no token. At FANWHY_CLIENT_SESSIONS from one loopback address the
same is done within that address; a network address at its cap is refused (429), as its sessions are its own.
A closed session hears the server close it (Socket.IO's ``io server disconnect``): its page says so.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import math
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from socketio import Server  # python-socketio ships no type hints

log = logging.getLogger(__name__)

RATE = 10.0  # packets a second, per connection: the page sends a handful a minute
BURST = 40.0
DROPPED_BUDGET = 200
MALFORMED_BUDGET = 5
LOG_LINES = 20  # lines a minute about sessions, all of them together


@dataclass
class Session:
    address: str
    opened: float
    tokens: float = BURST
    at: float = 0.0
    dropped: int = 0
    malformed: int = 0
    noted: bool = False  # logged once already
    closing: bool = False


def address_group(address: str) -> str:
    """The address a cap counts: the whole loopback range is one."""
    try:
        return "loopback" if ipaddress.ip_address(address).is_loopback else address
    except ValueError:
        return address


class Sessions:
    """Every open Engine.IO session of this server, its address and what it has sent."""

    def __init__(self, max_sessions: int = 1000, client_sessions: int = 16,
                 clock: Callable[[], float] = time.monotonic):
        self.max_sessions, self.client_sessions, self._clock = max_sessions, client_sessions, clock
        self._open: dict[str, Session] = {}
        self._lock = threading.Lock()
        self._close: Callable[[str, bool], None] = lambda sid, cut: None
        self.closed_for = {"flood": 0, "malformed": 0, "room": 0}
        self._room_logged_at = -math.inf
        self._log_window, self._log_lines, self._log_left_out = -math.inf, 0, 0

    def _may_log(self) -> bool:
        """Within LOG_LINES this minute; the first line of a new minute says how many the last one left out."""
        now = self._clock()
        if now - self._log_window >= 60:
            if self._log_left_out:
                log.warning("Socket.IO: %d more session lines in the last minute were not logged (at most %d a "
                            "minute)", self._log_left_out, LOG_LINES)
            self._log_window, self._log_lines, self._log_left_out = now, 0, 0
        if self._log_lines >= LOG_LINES:
            self._log_left_out += 1
            return False
        self._log_lines += 1
        return True

    # -- wiring ---------------------------------------------------------------------------------------------------
    def install(self, server: Server) -> None:
        """Put the checks in front of the Engine.IO handlers that Socket.IO's ``server`` registered."""
        eio = server.eio
        handlers: dict[str, Callable[..., object]] = eio.handlers
        on_connect, on_message, on_disconnect = (handlers[name] for name in ("connect", "message", "disconnect"))

        def connect(sid: str, environ: dict[str, object], *rest: object) -> object:
            accepted = on_connect(sid, environ, *rest)
            if accepted is not False:  # a refused session never opens, and no disconnect would forget it
                self.opened(sid, str(environ.get("REMOTE_ADDR") or "?"))
            return accepted

        def message(sid: str, data: object) -> None:
            self.receive(sid, data, on_message)

        def disconnect(sid: str, *rest: object) -> object:
            self.ended(sid)
            return on_disconnect(sid, *rest)

        handlers.update(connect=connect, message=message, disconnect=disconnect)

        def close(sid: str, cut: bool) -> None:
            # Socket.IO's DISCONNECT first: a page then knows the server closed it ("io server disconnect") and
            # does not reconnect by itself; then Engine.IO's close, for a client that ignores it
            environ = server.environ.get(sid) or {}  # before the close, which forgets it
            namespace_sid = server.manager.sid_from_eio_sid(sid, "/")
            if namespace_sid is not None:
                server.disconnect(namespace_sid, namespace="/")
            connection = eio.sockets.get(sid)
            if connection is not None:
                connection.close(wait=False, reason=eio.reason.SERVER_DISCONNECT)
            raw = environ.get("gunicorn.socket")
            if cut and raw is not None and (environ.get("HTTP_UPGRADE") or "").lower() == "websocket":
                # a flood: what it sent and the kernel holds is not read (20,000 queued frames held the event
                # loop 0.2 s while they were parsed only to be dropped). Known for a session that began as a
                # WebSocket; one upgraded from polling is drained as it is read.
                with contextlib.suppress(OSError):
                    raw.shutdown(socket.SHUT_RDWR)

        self._close = close

    # -- the session's life ---------------------------------------------------------------------------------------
    def opened(self, sid: str, address: str) -> None:
        now = self._clock()
        with self._lock:
            self._open[sid] = Session(address=address, opened=now, at=now)

    def ended(self, sid: str) -> None:
        with self._lock:
            self._open.pop(sid, None)

    def get(self, sid: str) -> Session | None:
        return self._open.get(sid)

    def __len__(self) -> int:
        return len(self._open)

    # -- what a connection sends ----------------------------------------------------------------------------------
    def receive(self, sid: str, data: object, handler: Callable[[str, object], object]) -> None:
        session = self._open.get(sid)
        if session is None or session.closing:  # closed (what it had sent before is still being read): dropped
            return
        if not self._take(session):
            session.dropped += 1
            self._note(sid, session, f"over {RATE:g} packets a second: dropped")
            if session.dropped >= DROPPED_BUDGET:
                self._shut(sid, session, "flood", f"{session.dropped} packets over the limit")
            return
        try:
            handler(sid, data)
        except Exception as error:  # Socket.IO could not parse or place it: the sender's fault, not ours
            session.malformed += 1
            self._note(sid, session, f"malformed packet ({type(error).__name__}: {str(error)[:80]})")
            if session.malformed >= MALFORMED_BUDGET:
                self._shut(sid, session, "malformed", f"{session.malformed} malformed packets")

    def _take(self, session: Session) -> bool:
        now = self._clock()
        session.tokens = min(BURST, session.tokens + (now - session.at) * RATE)
        session.at = now
        if session.tokens < 1.0:
            return False
        session.tokens -= 1.0
        return True

    def _note(self, sid: str, session: Session, what: str) -> None:
        if not session.noted:
            session.noted = True
            if self._may_log():
                log.warning("Socket.IO session %s from %s: %s (logged once a session)", sid[:8], session.address,
                            what)

    def _shut(self, sid: str, session: Session, cause: str, why: str) -> None:
        session.closing = True
        self.closed_for[cause] += 1
        if cause != "room":
            if self._may_log():
                log.warning("Socket.IO session %s from %s closed: %s", sid[:8], session.address, why)
        elif self._clock() - self._room_logged_at >= 60:  # a churn of newcomers: one line a minute
            self._room_logged_at = self._clock()
            log.info("Socket.IO session %s from %s closed: room for a newcomer: %s (%d so since start; logged at "
                     "most once a minute)", sid[:8], session.address, why, self.closed_for["room"])
        self._close(sid, cause != "room")

    # -- room for a newcomer --------------------------------------------------------------------------------------
    def admit(self, address: str) -> tuple[int, str, str] | None:
        """None to let a new session from ``address`` in (closing another where the caps say so), else the
        refusal (status, error, detail)."""
        loopback = address_group(address) == "loopback"
        with self._lock:
            live = [(sid, s) for sid, s in self._open.items() if not s.closing]
        mine = [(s.opened, sid) for sid, s in live if s.address == address]
        if len(mine) >= self.client_sessions:
            if not loopback:
                return (429, "too many sessions", f"at most {self.client_sessions} open Socket.IO sessions per "
                        "client (FANWHY_CLIENT_SESSIONS)")
            self._make_room(min(mine)[1], f"{address} holds {len(mine)} sessions (FANWHY_CLIENT_SESSIONS)")
        elif len(live) >= self.max_sessions:
            groups: dict[str, list[tuple[float, str]]] = {}
            for sid, s in live:
                groups.setdefault(address_group(s.address), []).append((s.opened, sid))
            fullest = max(groups.values(), key=len)
            self._make_room(min(fullest)[1], f"{len(live)} sessions open (FANWHY_MAX_SESSIONS)")
        return None

    def _make_room(self, sid: str, why: str) -> None:
        session = self._open.get(sid)
        if session is not None:
            self._shut(sid, session, "room", f"room for a newcomer: {why}")

    def view(self) -> dict[str, int]:
        return {"open": len(self._open), **{f"closed_{k}": v for k, v in self.closed_for.items()}}
