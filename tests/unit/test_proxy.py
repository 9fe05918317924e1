"""The proxy layer (app/web/proxy.py): X-Forwarded-* believed from trusted proxies only; the path prefix."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from app.web.proxy import Forwarded

SEEN: dict[str, Any] = {}  # what the application behind the layer was given


def echo(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    start_response("200 OK", [])
    SEEN.clear()
    SEEN.update({k: environ.get(k) for k in ("REMOTE_ADDR", "HTTP_HOST", "SCRIPT_NAME", "PATH_INFO",
                                             "wsgi.url_scheme", "HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_HOST",
                                             "fanwhy.proxy")})
    return [b""]


def call(layer: Forwarded, path: str = "/api/health", peer: str = "127.0.0.1", **headers: str) -> dict[str, Any]:
    environ = {"REMOTE_ADDR": peer, "HTTP_HOST": "127.0.0.1:8090", "PATH_INFO": path, "SCRIPT_NAME": "",
               "wsgi.url_scheme": "http", "QUERY_STRING": ""}
    environ.update({"HTTP_" + k.upper(): v for k, v in headers.items()})
    answer: dict[str, Any] = {}

    def start_response(status: str, hdrs: list[tuple[str, str]], exc_info: Any = None) -> Any:
        answer.update(status=status, headers=dict(hdrs))
        return lambda _data: None

    layer(environ, start_response)
    return {**answer, **SEEN} if answer.get("status", "").startswith("200") else answer


def test_a_trusted_proxy_names_the_client_scheme_host_and_prefix() -> None:
    layer = Forwarded(echo, ["127.0.0.1"])
    seen = call(layer, x_forwarded_for="203.0.113.7", x_forwarded_proto="https",
                x_forwarded_host="gpu.example.com", x_forwarded_prefix="/fanwhy/")
    assert (seen["REMOTE_ADDR"], seen["wsgi.url_scheme"], seen["HTTP_HOST"], seen["SCRIPT_NAME"]) == \
        ("203.0.113.7", "https", "gpu.example.com", "/fanwhy")
    assert seen["fanwhy.proxy"] == "127.0.0.1" and seen["HTTP_X_FORWARDED_FOR"] is None  # read, then removed


def test_the_client_is_the_rightmost_hop_no_trusted_proxy_wrote() -> None:
    """A client may send its own X-Forwarded-For; each proxy appends the address it was reached from."""
    layer = Forwarded(echo, ["127.0.0.1", "10.0.0.0/8"])
    seen = call(layer, x_forwarded_for="6.6.6.6, 198.51.100.4, 10.1.2.3")  # spoofed, client, an inner proxy
    assert seen["REMOTE_ADDR"] == "198.51.100.4"
    assert call(layer, peer="::ffff:127.0.0.1", x_forwarded_for="198.51.100.9")["REMOTE_ADDR"] == "198.51.100.9"


@pytest.mark.parametrize("peer", ["198.51.100.4", "127.0.0.2", "not-an-address"])
def test_headers_from_anyone_else_are_ignored_and_removed(peer: str) -> None:
    layer = Forwarded(echo, ["127.0.0.1"])
    seen = call(layer, peer=peer, x_forwarded_for="1.2.3.4", x_forwarded_host="evil.example",
                x_forwarded_proto="https", x_forwarded_prefix="/x")
    assert (seen["REMOTE_ADDR"], seen["HTTP_HOST"], seen["wsgi.url_scheme"], seen["SCRIPT_NAME"]) == \
        (peer, "127.0.0.1:8090", "http", "")
    assert seen["HTTP_X_FORWARDED_FOR"] is None and seen["HTTP_X_FORWARDED_HOST"] is None
    assert call(Forwarded(echo), x_forwarded_for="1.2.3.4")["REMOTE_ADDR"] == "127.0.0.1"  # none trusted: none


@pytest.mark.parametrize("prefix", ["fanwhy", "/a b", "/../etc", "//evil.example", "/x?y"])
def test_a_prefix_that_is_not_a_plain_path_is_not_taken(prefix: str) -> None:
    assert call(Forwarded(echo, ["127.0.0.1"]), x_forwarded_prefix=prefix)["SCRIPT_NAME"] == ""


def test_the_base_path_is_served_whether_or_not_the_proxy_strips_it() -> None:
    layer = Forwarded(echo, (), "/fanwhy")
    kept = call(layer, "/fanwhy/api/health")
    assert (kept["SCRIPT_NAME"], kept["PATH_INFO"]) == ("/fanwhy", "/api/health")
    stripped = call(layer, "/api/health")  # a proxy that strips it (or a local health check)
    assert (stripped["SCRIPT_NAME"], stripped["PATH_INFO"]) == ("", "/api/health")
    bare = call(layer, "/fanwhy")  # the page's relative URLs need the slash
    assert bare["status"].startswith("308") and bare["headers"]["Location"] == "/fanwhy/"
    assert call(layer, "/fanwhyx/api")["SCRIPT_NAME"] == ""  # another path that only starts the same
    both = call(Forwarded(echo, ["127.0.0.1"], "/fanwhy"), "/fanwhy/api/health", x_forwarded_prefix="/fanwhy")
    assert (both["SCRIPT_NAME"], both["PATH_INFO"]) == ("/fanwhy", "/api/health")  # said twice, taken once


def test_the_settings_refuse_what_is_not_an_address_or_a_path() -> None:
    from app.collect.config import ConfigError, load_settings

    with pytest.raises(ConfigError, match="FANWHY_TRUSTED_PROXIES"):
        load_settings({"FANWHY_TRUSTED_PROXIES": "nginx"})
    for bad in ("fanwhy/", "/../etc", "/a//b"):
        with pytest.raises(ConfigError, match="FANWHY_BASE_PATH"):
            load_settings({"FANWHY_BASE_PATH": bad})
    assert load_settings({"FANWHY_BASE_PATH": "/tools/fan.why"}).base_path == "/tools/fan.why"
    assert load_settings({"FANWHY_TRUSTED_PROXIES": "127.0.0.1, 10.0.0.0/8"}).trusted_proxies == \
        ("127.0.0.1", "10.0.0.0/8")
