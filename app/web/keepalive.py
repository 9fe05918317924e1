"""How long an idle connection is kept, and how often Socket.IO pings: standard library only, so that the gunicorn
master, which reads ``keepalive_s`` for its configuration, imports no Socket.IO (and through it no ssl user such as
requests or redis) before the gevent worker patches ssl."""

from __future__ import annotations

PING_EVERY_S = 5.0  # at most: a short interval also bounds how long engine.io's ping task of a gone client lingers


def keepalive_s(header_timeout_s: float) -> int:
    """How long the server keeps an idle HTTP connection for its next request (gunicorn's ``keepalive``; under
    gevent also the deadline for a request's headers): FANWHY_HEADER_TIMEOUT in whole seconds."""
    return max(1, round(header_timeout_s))


def ping_interval_s(header_timeout_s: float) -> float:
    """How often the server pings each Socket.IO client: within half the keep-alive, and every ``PING_EVERY_S`` at
    most. A polling client answers each ping with a POST on a connection idle since its last answer; at a ping
    interval equal to the keep-alive, that POST meets the server's closing of the idle connection, and a server busy
    at that moment reads the POST only after it has closed the connection (python-socketio's client then ends its
    session: "transport error")."""
    return min(PING_EVERY_S, keepalive_s(header_timeout_s) / 2)
