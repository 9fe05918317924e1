"""Request-level defences: reading a Host header (which names it may carry is app.web.access's policy), per-client
token buckets, the security headers. The checks themselves run in app.web.gate, before Flask and Socket.IO see the
request.
"""
from __future__ import annotations

import ipaddress
import re
import threading
import time
from collections import OrderedDict
from typing import Callable

from flask import Flask, Response, request

from ..collect.config import is_loopback

# A Host header as RFC 9110 has it: a name or an IPv4 address, or an IPv6 address in brackets, then an optional
# port of digits; nothing else (no user-info, no path, nothing after the port), as browsers and proxies parse it.
_HOST = re.compile(r"(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_.])?))(?::(?P<port>\d{1,5}))?")


def host_name(header: str) -> str | None:
    """The host part of a Host header, without port or IPv6 brackets; "" for none; None when the header is not
    a host and port (``127.0.0.1:8090@evil.com``, ``a b``, ``host/path``)."""
    header = header.strip().lower()
    if not header:
        return ""
    match = _HOST.fullmatch(header)
    if match is not None:
        return match.group("v6") or match.group("name")
    try:  # a bare IPv6 address, as some clients send it
        return str(ipaddress.IPv6Address(header))
    except ValueError:
        return None


class TokenBuckets:
    """Per-key token buckets (``rate`` per second, ``burst`` at most), bounded in the keys they keep."""

    def __init__(self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic,
                 max_keys: int = 10_000):
        self.rate, self.burst, self._clock, self.max_keys = rate, burst, clock, max_keys
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def allow(self, key: str) -> bool:
        now = self._clock()
        with self._lock:
            tokens, then = self._buckets.pop(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - then) * self.rate)
            allowed = tokens >= 1.0
            self._buckets[key] = (tokens - 1.0 if allowed else tokens, now)
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
        return allowed


def canonical_host(name: str) -> str:
    """A host name as the allowlist keeps it: lower case, an IP address in its one standard spelling."""
    name = name.strip().lower()
    try:
        return str(ipaddress.ip_address(name.strip("[]")))
    except ValueError:
        return name


SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # same-origin: FanWhy's own requests keep their origin (a form's POST says Origin: <this page>, which the gate
    # checks; no-referrer made it "null"), and nothing at all is sent to another site
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
}


def _trustworthy(host: str) -> bool:
    """Whether a browser counts plain http to ``host`` (a Host header) as a secure context: loopback only."""
    name = host_name(host)
    return name is not None and (is_loopback(name) or name.endswith(".localhost"))


def init_app(app: Flask) -> None:
    """The response headers (the Host, Origin and rate-limit checks are app.web.gate's)."""

    @app.after_request
    def security_headers(response: Response) -> Response:
        response.headers.pop("Access-Control-Allow-Origin", None)  # only app.web.gate grants an origin, after this
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        if not request.is_secure and not _trustworthy(request.host):
            # browsers ignore it on plain http from a network address, and say so as a console error on each load
            response.headers.pop("Cross-Origin-Opener-Policy", None)
        if request.is_secure:
            response.headers.setdefault("Strict-Transport-Security", "max-age=31536000")
        if request.path.startswith("/api") or request.path == "/metrics":
            response.headers.setdefault("Cache-Control", "no-store")
        return response
