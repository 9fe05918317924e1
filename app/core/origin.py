"""A FanWhy server's address as the clients use it (``fanwhy top --server``, ``app.client``): credentials never leave
the server's origin, and an address is never printed with a password in it.

urllib follows a redirect with every header the request was given, so a server (or anything that answers in its
place) saying ``302 Location: http://elsewhere/`` would receive the bearer token there. ``open_same_origin``
follows a redirect only within the origin (scheme, host and port) it was asked for; any other is refused with
``OtherOrigin``. ``user:password@`` in an address is refused (``UserInfo``): the token is FANWHY_TOKEN, and an
address with a password in it ends up in shell histories and on screens; ``shown`` is the address without it.
"""

from __future__ import annotations

import urllib.parse
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import urllib.request
    from http.client import HTTPMessage, HTTPResponse


class OtherOrigin(OSError):
    """A redirect to another origin: refused, so the token stays where it was sent."""


class UserInfo(ValueError):
    """An address with ``user:password@`` in it."""


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of ``url``, the port filled in for http and https."""
    parts = urllib.parse.urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def shown(url: str) -> str:
    """``url`` without any ``user:password@``: what may be printed."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def checked(server: str) -> str:
    """``server`` as given, or UserInfo when it carries credentials (said without them)."""
    if "@" in urllib.parse.urlsplit(server).netloc:
        raise UserInfo(f"{shown(server)}: an address with user:password@ in it is not used (it would sit in your shell "
                       "history and on screen): give the token in FANWHY_TOKEN, or type it when asked")
    return server


def open_same_origin(request: urllib.request.Request, timeout: float) -> HTTPResponse:
    """``urlopen`` that follows redirects within the request's origin only; OtherOrigin for any other."""
    import urllib.request

    class SameOrigin(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,
                             headers: HTTPMessage, newurl: str) -> urllib.request.Request | None:
            target = urllib.parse.urljoin(req.full_url, newurl)
            if origin(target) != origin(req.full_url):
                fp.close()  # the redirect's own answer: read no further
                raise OtherOrigin(f"redirected to another origin ({shown(target)}): not followed, so the token is "
                                  "not sent there")
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    answer: HTTPResponse = urllib.request.build_opener(SameOrigin).open(request, timeout=timeout)
    return answer
