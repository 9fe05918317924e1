"""Behind a reverse proxy: the real client, scheme, host and path prefix, believed only from trusted proxies.

The outermost WSGI layer, before the gate. For a request from an address in FANWHY_TRUSTED_PROXIES:
- ``X-Forwarded-For``: the client is the rightmost address that is not itself a trusted proxy (each proxy appends
  the address it was reached from; anything left of that was written by the client and proves nothing);
- ``X-Forwarded-Proto`` (http or https) is the scheme, ``X-Forwarded-Host`` the Host;
- ``X-Forwarded-Prefix`` is the path FanWhy is served under (``/fanwhy``).
From anyone else these headers are removed, so that nothing after this layer can read a spoofed one. The gate then
checks the Host allowlist and the Origin against the forwarded host and scheme, counts the rate limit and the
sessions per real client, and the access log names the real client (the environment is changed in place).

FANWHY_BASE_PATH serves FanWhy under a prefix whether or not the proxy strips it: a path under the prefix has it
moved to ``SCRIPT_NAME``; the prefix itself (no slash) is redirected to the prefix with one, so that the page's
relative URLs resolve under it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..collect.config import BASE_PATH

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

FORWARDED = ("HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_PROTO", "HTTP_X_FORWARDED_HOST", "HTTP_X_FORWARDED_PREFIX",
             "HTTP_FORWARDED", "HTTP_X_REAL_IP")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def networks(items: Iterable[str]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(item, strict=False) for item in items)


def trusted(address: str | None, proxies: Sequence[Network]) -> bool:
    """Whether ``address`` is one of ``proxies`` (an IPv4 address mapped into IPv6 counts as the IPv4 one)."""
    if not address or not proxies:
        return False
    try:
        ip = ipaddress.ip_address(address.strip().strip("[]"))
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip.version == net.version and ip in net for net in proxies)


def _prefix(value: str) -> str | None:
    """A clean path prefix (``/fanwhy``) from a header, or None when it is not one."""
    value = value.split(",")[0].strip().rstrip("/")
    if not value:
        return ""
    return value if BASE_PATH.fullmatch(value) else None  # the rule FANWHY_BASE_PATH is checked by


class Forwarded:
    def __init__(self, app: WSGIApplication, proxies: Iterable[str] = (), base_path: str = ""):
        self.app = app
        self.proxies = networks(proxies)
        self.base_path = base_path.rstrip("/")

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        peer = environ.get("REMOTE_ADDR")
        headers = {key: environ.pop(key) for key in FORWARDED if key in environ}
        if trusted(peer, self.proxies):
            self._believe(environ, headers)
        path = environ.get("PATH_INFO") or "/"
        if self.base_path and (path == self.base_path or path.startswith(self.base_path + "/")):
            script = environ.get("SCRIPT_NAME") or ""  # a proxy may have said the same prefix (X-Forwarded-Prefix)
            environ["SCRIPT_NAME"] = script if script.endswith(self.base_path) else script + self.base_path
            path = path[len(self.base_path):]
            environ["PATH_INFO"] = path
        if path == "" and environ.get("SCRIPT_NAME"):  # /fanwhy: the page's relative URLs need /fanwhy/
            query = environ.get("QUERY_STRING")
            start_response("308 Permanent Redirect", [("Location", environ["SCRIPT_NAME"] + "/" + (
                f"?{query}" if query else "")), ("Content-Length", "0")])
            return [b""]
        return self.app(environ, start_response)

    def _believe(self, environ: WSGIEnvironment, headers: dict[str, str]) -> None:
        environ["fanwhy.proxy"] = environ.get("REMOTE_ADDR")
        hops = [h.strip() for h in headers.get("HTTP_X_FORWARDED_FOR", "").split(",") if h.strip()]
        for hop in reversed(hops):  # the rightmost hop no trusted proxy wrote is the client
            if not trusted(hop, self.proxies):
                environ["REMOTE_ADDR"] = hop.strip("[]")
                break
        proto = headers.get("HTTP_X_FORWARDED_PROTO", "").split(",")[0].strip().lower()
        if proto in ("http", "https"):
            environ["wsgi.url_scheme"] = proto
        host = headers.get("HTTP_X_FORWARDED_HOST", "").split(",")[0].strip()
        if host:
            environ["HTTP_HOST"] = host
        prefix = _prefix(headers.get("HTTP_X_FORWARDED_PREFIX", ""))
        if prefix:
            environ["SCRIPT_NAME"] = prefix
