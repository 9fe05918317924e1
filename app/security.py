"""Request-level defences: a Host allowlist (DNS rebinding), a per-client rate limit, security headers.

Binding to loopback, only ``localhost``, ``127.0.0.1`` and ``[::1]`` are accepted as Host: a page on
another site whose name resolves to 127.0.0.1 is refused. Binding elsewhere, the machine's names and
addresses are accepted too; ``FANWHY_ALLOWED_HOSTS`` replaces the list (``*`` accepts any, not advised).
No response ever carries ``Access-Control-Allow-Origin``.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
import time
from collections import OrderedDict
from typing import Callable, Iterable

import psutil
from flask import Flask, Response, jsonify, request

from app.config import Settings, is_loopback

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def default_allowed_hosts(bind: str) -> set[str]:
    names = set(LOOPBACK_NAMES)
    if not is_loopback(bind):
        names.update({socket.gethostname().lower(), socket.getfqdn().lower()})
        for addresses in psutil.net_if_addrs().values():
            for address in addresses:
                if address.family in (socket.AF_INET, socket.AF_INET6):
                    names.add(address.address.split("%")[0].lower())
        if bind not in ("0.0.0.0", "::"):
            names.add(bind.lower())
    return names


def host_name(header: str) -> str:
    """The host part of a Host header, without port or IPv6 brackets."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    if header.count(":") > 1:  # a bare IPv6 address
        return header
    return header.rsplit(":", 1)[0] if ":" in header else header


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


def _valid_names(values: Iterable[str]) -> set[str]:
    names = set()
    for value in values:
        value = value.strip().lower()
        if value:
            try:
                names.add(str(ipaddress.ip_address(value.strip("[]"))))
            except ValueError:
                names.add(value)
    return names


def init_app(app: Flask, settings: Settings) -> None:
    allowed = (_valid_names(settings.allowed_hosts.split(",")) if settings.allowed_hosts
               else default_allowed_hosts(settings.host))
    limiter = TokenBuckets(settings.rate_limit_per_s, settings.rate_limit_per_s * 2) \
        if settings.rate_limit_per_s > 0 else None
    app.extensions["fanwhy_allowed_hosts"] = allowed

    @app.before_request
    def check_host_and_rate() -> Response | tuple[Response, int] | None:
        if "*" not in allowed:
            name = host_name(request.host or "")
            with contextlib.suppress(ValueError):
                name = str(ipaddress.ip_address(name))
            if name not in allowed:
                return jsonify(error="unknown Host", detail=f"{name!r} is not one of this FanWhy's names; "
                               "set FANWHY_ALLOWED_HOSTS to add it"), 400
        limited = limiter is not None and not request.path.startswith(("/socket.io", "/static"))
        if limited and not limiter.allow(request.remote_addr or "?"):  # type: ignore[union-attr]
            response = jsonify(error="too many requests", detail=f"at most {settings.rate_limit_per_s:g} "
                               "requests per second per client; retry shortly")
            response.headers["Retry-After"] = "1"
            return response, 429
        return None

    @app.after_request
    def security_headers(response: Response) -> Response:
        response.headers.pop("Access-Control-Allow-Origin", None)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault("Cross-Origin-Opener-Policy", "same-origin")
        response.headers.setdefault("Cross-Origin-Resource-Policy", "same-origin")
        response.headers.setdefault("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
        if request.is_secure:
            response.headers.setdefault("Strict-Transport-Security", "max-age=31536000")
        if request.path.startswith("/api") or request.path == "/metrics":
            response.headers.setdefault("Cache-Control", "no-store")
        return response
