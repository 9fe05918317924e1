"""The gate: the outermost WSGI layer. Every request passes it before Flask, Engine.IO or a WebSocket upgrade.

In order, for every route (``/socket.io`` and ``/static`` included):
1. **Host** must be one of this FanWhy's names (DNS rebinding: a foreign site whose name resolves to 127.0.0.1
   sends its own name as Host). 400. Except for a request that carries the token in an ``Authorization: Bearer``
   header (FANWHY_TOKEN; FANWHY_METRICS_TOKEN for /metrics): a Prometheus scrapes a node by whatever name it
   resolves, and a page that rebinds a name cannot add a header with a token it does not know.
2. **Origin**, when a browser sends one, must be this page's own (its host:port equals Host) or listed in
   FANWHY_ALLOWED_ORIGINS; ``null`` is refused. 403. A listed origin gets ``Access-Control-Allow-Origin`` with
   its own value; no other response carries that header.
3. **The rate limit** (FANWHY_RATE_LIMIT requests a second per client address, twice that in a burst) for every
   request but static files and the polls of an open Socket.IO session. 429.
4. For ``/socket.io``: **the token** (FANWHY_TOKEN) from ``Authorization: Bearer``, the login cookie or a
   ``token`` query parameter, 401; then the **session limits** (app.web.sessions): open sessions per client
   address and in all; at a cap, room is made by closing the oldest session of the fullest address, or 429.
   Both for a request that would open a session (no ``sid``): a session's own polls and its upgrade carry the
   unguessable sid that only a request past these checks was given.

A refusal is one short JSON answer: no Engine.IO session, no upgrade, no thread or greenlet kept.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import parse_qs, urlsplit

from .access import AccessPolicy
from .refusals import Refusals
from .security import SECURITY_HEADERS, TokenBuckets, host_name
from .sessions import Sessions

if TYPE_CHECKING:  # the standard's types (PEP 3333), from typeshed
    from _typeshed import OptExcInfo
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment


class Refusal(NamedTuple):
    status: int
    error: str
    detail: str
    cause: str  # one of app.web.refusals.CAUSES


class Gate:
    def __init__(self, app: WSGIApplication, *, policy: AccessPolicy, allowed_origins: Iterable[str] = (),
                 sessions: Sessions | None = None, rate_limit_per_s: float = 0.0,
                 refusals: Refusals | None = None):
        self.app = app
        self.refusals = refusals
        self.policy = policy  # who may pass, with which credential, from which Host
        self.allowed_origins = {o.rstrip("/").lower() for o in allowed_origins}
        self.sessions = sessions
        self.rate_limit_per_s = rate_limit_per_s
        self.limiter = TokenBuckets(rate_limit_per_s, 2 * rate_limit_per_s) if rate_limit_per_s > 0 else None

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        refusal = self.check(environ)
        if refusal is not None:
            if self.refusals is not None:
                self.refusals.record(refusal.cause, environ.get("REMOTE_ADDR"), refusal.status,
                                     f"{refusal.error}: {refusal.detail}")
            return refuse(start_response, refusal.status, refusal.error, refusal.detail)
        origin = environ.get("HTTP_ORIGIN")
        if origin and origin.rstrip("/").lower() in self.allowed_origins:
            def with_cors(status: str, headers: list[tuple[str, str]], exc_info: OptExcInfo | None = None
                          ) -> Callable[[bytes], object]:
                headers = [(k, v) for k, v in headers if k.lower() != "access-control-allow-origin"]
                headers += [("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Credentials", "true"),
                            ("Vary", "Origin")]
                return start_response(status, headers, exc_info)
            return self.app(environ, with_cors)
        return self.app(environ, start_response)

    def check(self, environ: WSGIEnvironment) -> Refusal | None:
        """None to let the request through, else why not."""
        host = environ.get("HTTP_HOST") or ""
        name = host_name(host)
        if name is None:
            return Refusal(400, "bad Host", f"{host[:80]!r} is not a host name and port", "host")
        if not self.policy.host_admits(environ):
            return Refusal(400, "unknown Host", f"{name[:80]!r} is not one of this FanWhy's names; add it to "
                           "FANWHY_ALLOWED_HOSTS (a comma-separated list, added to localhost, 127.0.0.1 and ::1)",
                           "host")
        origin = environ.get("HTTP_ORIGIN")
        if origin is not None and not self._origin_allowed(origin, host):
            if origin.strip().lower() == "null":
                return Refusal(403, "foreign Origin", "the browser hid where this request comes from (Origin: null: "
                               "a sandboxed or local page, or a no-referrer policy); send it from FanWhy's own page",
                               "origin")
            return Refusal(403, "foreign Origin", f"{origin[:80]!r} is not this page's origin; "
                           "set FANWHY_ALLOWED_ORIGINS to allow another site", "origin")
        path = environ.get("PATH_INFO") or ""
        socket_io = path.startswith("/socket.io")
        in_session = socket_io and "sid" in parse_qs(environ.get("QUERY_STRING") or "")
        client = environ.get("REMOTE_ADDR") or "?"
        if self.limiter is not None and not in_session and not path.startswith("/static/") \
                and not self.limiter.allow(client):
            return Refusal(429, "too many requests", f"at most {self.rate_limit_per_s:g} requests per second per "
                           "client; retry shortly", "rate")
        if not socket_io or in_session:
            return None  # a session's own requests: its unguessable sid was given only after these checks
        if not self.policy.socket_admits(environ):
            return Refusal(401, "unauthorized", "Socket.IO needs the token: Authorization: Bearer <token>, the login "
                           "cookie, or ?token=<token>", "token")
        return self._session_limits(client)

    def _origin_allowed(self, origin: str, host: str) -> bool:
        origin = origin.rstrip("/").lower()
        if origin in self.allowed_origins or "*" in self.allowed_origins:
            return True
        if origin == "null":
            return False
        try:
            netloc = urlsplit(origin).netloc
        except ValueError:
            return False
        return bool(netloc) and netloc == host.strip().lower()

    def _session_limits(self, client: str) -> Refusal | None:
        refused = self.sessions.admit(client) if self.sessions is not None else None
        return Refusal(*refused, "session") if refused is not None else None


_REASONS = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 408: "Request Timeout",
            413: "Payload Too Large", 429: "Too Many Requests", 503: "Service Unavailable"}


def refuse(start_response: StartResponse, status: int, error: str, detail: str) -> list[bytes]:
    """One short JSON answer that closes the connection (the WSGI layers' refusals, before Flask).

    gunicorn drops an application's ``Connection: close`` (a hop-by-hop header) and keeps the connection alive,
    reading the rest of the refused request's body first: a body promised and never sent then held its greenlet
    for the keep-alive time (10 s), and 2,000 of them filled the worker's pool so that nobody else was accepted
    (measured). Its Response, whose bound ``start_response`` this is, closes the connection when told to."""
    response = getattr(start_response, "__self__", None)
    force_close = getattr(response, "force_close", None)
    if callable(force_close):
        force_close()
    body = json.dumps({"error": error, "detail": detail}).encode()
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
               ("Cache-Control", "no-store"), ("Connection", "close"), *SECURITY_HEADERS.items()]
    if status in (429, 503):
        headers.append(("Retry-After", "1"))
    start_response(f"{status} {_REASONS[status]}", headers)
    return [body]
