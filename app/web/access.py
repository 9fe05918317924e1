"""The access policy: who may pass, with which credential, from which Host. One place asked by the REST routes
(app.web.auth), Socket.IO and the Host check (app.web.gate) and the body pools (app.web.bodies).

- **The credential** is FANWHY_TOKEN, offered as ``Authorization: Bearer <token>`` or the ``fanwhy_token`` cookie
  (set by the sign-in form, or by opening ``/?token=<token>`` once); Socket.IO also takes ``?token=`` on its URL.
  FANWHY_METRICS_TOKEN opens ``/metrics`` only. Compared in constant time.
- **The routes**: with a token set, every route but the sign-in page and what it is drawn with needs it; a browser
  that opens ``/`` without it is sent to the sign-in page, anything else is a 401. Socket.IO is decided before a
  session exists (the gate), a body before it is read (the body pools).
- **The Host** must be one of this FanWhy's names (DNS rebinding), unless the request carries its token in an
  ``Authorization`` header, which a page that rebinds a name cannot add (a Prometheus scrapes by whatever name it
  resolves). Bound to loopback: loopback's names and FANWHY_ALLOWED_HOSTS; bound to the network (which needs the
  token): any name unless FANWHY_ALLOWED_HOSTS narrows it.
"""

from __future__ import annotations

import hmac
from enum import Enum
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from werkzeug.http import parse_cookie

from ..collect.config import is_loopback, is_wildcard
from ..collect.settings import Settings
from ..core.record import record
from .security import canonical_host, host_name

if TYPE_CHECKING:  # the standard's types (PEP 3333), from typeshed
    from _typeshed.wsgi import WSGIEnvironment

COOKIE = "fanwhy_token"
UNAUTHORIZED = ("this FanWhy needs its token: Authorization: Bearer <token>, or open /?token=<token> once in the "
                "browser")
# served before the token: the sign-in page and what it shows with (its stylesheet and the icon hold no data)
PUBLIC_PATHS = frozenset({"/login", "/favicon.ico", "/static/app.css"})
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def token_matches(expected: str | None, offered: str | None) -> bool:
    """True when no token is expected, or ``offered`` is it (in constant time)."""
    if not expected:
        return True
    if not offered:
        return False
    return hmac.compare_digest(expected.encode(), offered.encode())


def credential(environ: WSGIEnvironment, query: bool = True) -> str | None:
    """The token a request offers: ``Authorization: Bearer``, the sign-in cookie, or (``query``) ``?token=``."""
    header = environ.get("HTTP_AUTHORIZATION") or ""
    if header[:7].lower() == "bearer ":
        return header[7:].strip()
    cookie = parse_cookie(environ.get("HTTP_COOKIE") or "").get(COOKIE)
    if cookie:
        return cookie
    if query:
        values = parse_qs(environ.get("QUERY_STRING") or "").get("token")
        return values[-1] if values else None
    return None


def default_allowed_hosts(bind: str) -> set[str]:
    """Loopback's names, and the bind address itself when it is a name or address of its own."""
    names = set(LOOPBACK_NAMES)
    if not is_wildcard(bind) and not is_loopback(bind):
        names.add(bind.lower())
    return names


def allowed_hosts(settings: Settings) -> set[str]:
    """The names a request's Host may carry (a trusted proxy's X-Forwarded-Host stands for it: app.web.proxy).
    ``*`` (in FANWHY_ALLOWED_HOSTS, or bound to the network with no list) accepts any name; docs/SECURITY.md."""
    names = default_allowed_hosts(settings.host)
    if settings.allowed_hosts:
        return names | {canonical_host(n) for n in settings.allowed_hosts if n.strip()}
    if settings.token and not is_loopback(settings.host):
        return {"*"}
    return names


class Rest(Enum):
    """What a REST request (a page, the API, /metrics) meets."""

    PASS = "pass"
    SIGN_IN = "sign in"  # ``/?token=`` with the right token: the cookie is set and the page opens
    TO_SIGN_IN_PAGE = "to the sign-in page"  # a browser opening the page without the token
    REFUSE = "refuse"  # 401


@record
class AccessPolicy:
    token: str | None
    metrics_token: str | None
    hosts: frozenset[str]  # the names a Host may carry; "*" any

    @classmethod
    def of(cls, settings: Settings) -> AccessPolicy:
        return cls(settings.token, settings.metrics_token, frozenset(allowed_hosts(settings)))

    def host_admits(self, environ: WSGIEnvironment) -> bool:
        """The request's Host is one of this FanWhy's names, or it carries its token in a header."""
        name = host_name(environ.get("HTTP_HOST") or "")
        return ("*" in self.hosts or (name is not None and canonical_host(name) in self.hosts)
                or self._bearer_admits(environ))

    def _bearer_admits(self, environ: WSGIEnvironment) -> bool:
        """A token in the Authorization header (never a cookie or a query parameter, which a browser adds by itself
        or a link carries): FANWHY_TOKEN anywhere, FANWHY_METRICS_TOKEN for /metrics only."""
        header = environ.get("HTTP_AUTHORIZATION") or ""
        if not header.startswith("Bearer "):
            return False
        given = header[len("Bearer "):].strip()
        if self.token and token_matches(self.token, given):
            return True
        return bool(self.metrics_token) and environ.get("PATH_INFO") == "/metrics" \
            and token_matches(self.metrics_token, given)

    def socket_admits(self, environ: WSGIEnvironment) -> bool:
        """A request that would open a Socket.IO session offers the token (header, cookie or ``?token=``)."""
        return token_matches(self.token, credential(environ))

    def body_pool(self, environ: WSGIEnvironment) -> str | None:
        """Which pool a request's body counts in: ``socket`` for Engine.IO's polls (decided by the gate),
        ``main`` for one that offers the token (or when there is none), ``login`` for the sign-in form's; None:
        a 401, the body left unread."""
        path = environ.get("PATH_INFO") or ""
        if path.startswith("/socket.io"):
            return "socket"
        if token_matches(self.token, credential(environ, query=False)):
            return "main"
        return "login" if path == "/login" else None

    def signs_in(self, offered: str) -> bool:
        """The sign-in form's token is this FanWhy's."""
        return bool(self.token) and token_matches(self.token, offered)

    def rest(self, environ: WSGIEnvironment, page_token: str | None = None) -> Rest:
        """What a REST request meets; ``page_token``: the ``?token=`` of a request for ``/``."""
        path, method = environ.get("PATH_INFO") or "", environ.get("REQUEST_METHOD") or "GET"
        if path.startswith("/socket.io") or path in PUBLIC_PATHS:
            return Rest.PASS  # Socket.IO: decided by the gate, before a session or upgrade
        offered = credential(environ, query=False)
        if not self.token:
            if path != "/metrics" or token_matches(self.metrics_token, offered):
                return Rest.PASS
        elif path == "/" and page_token and token_matches(self.token, page_token):
            return Rest.SIGN_IN
        elif token_matches(self.token, offered):
            return Rest.PASS
        if path == "/metrics" and self.metrics_token and token_matches(self.metrics_token, offered):
            return Rest.PASS
        return Rest.TO_SIGN_IN_PAGE if path == "/" and method == "GET" else Rest.REFUSE
