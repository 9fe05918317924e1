"""The gate (app/web/gate.py): DNS rebinding and cross-site requests are refused on every route and both Socket.IO
transports, before a session exists; no response grants an origin outside the allowlist."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
import requests
import socketio

from tests.conftest import nvidia_selection

# (Host, Origin) as a rebinding or cross-site page sends them; the server listens on 127.0.0.1.
FOREIGN = [
    ("evil.example:{port}", "http://evil.example:{port}"),  # DNS rebinding: the attacker's name resolves to us
    ("evil.example", None),
    ("127.0.0.1:{port}", "http://evil.example"),  # cross-site fetch or socket from another page
    ("127.0.0.1:{port}", "null"),  # sandboxed frame, file://
    ("localhost:{port}", "http://127.0.0.1:{port}"),  # same machine, another origin
    ("127.0.0.1:{port}", "http://127.0.0.1:{port}.evil.example"),
    ("127.0.0.2:{port}", "http://127.0.0.2:{port}"),  # loopback, but not one of our names
]


def routes(app: Any) -> list[str]:
    paths = set()
    for rule in app.url_map.iter_rules():
        if "GET" in rule.methods:
            paths.add(rule.rule.replace("<int:recording_id>", "1").replace("<path:filename>", "app.js"))
    return [*sorted(paths), "/socket.io/?EIO=4&transport=polling", "/socket.io/?EIO=4&transport=websocket"]


@pytest.mark.parametrize("host,origin", FOREIGN)
def test_every_route_refuses_foreign_host_and_origin_pairs(live_server: Any, host: str, origin: str | None) -> None:
    port = live_server.url.rsplit(":", 1)[1]
    headers = {"Host": host.format(port=port)}
    if origin is not None:
        headers["Origin"] = origin.format(port=port)
    for path in routes(live_server.app):
        answer = requests.get(live_server.url + path, headers=headers, timeout=5, allow_redirects=False)
        assert answer.status_code in (400, 403), (path, headers, answer.status_code)
        assert answer.json()["error"] in ("unknown Host", "foreign Origin")
        assert "Access-Control-Allow-Origin" not in answer.headers, path
        assert "sid" not in answer.text  # no Engine.IO session was opened


def test_no_session_is_opened_for_a_refused_handshake(live_server: Any) -> None:
    sessions = live_server.app.extensions["fanwhy"].socketio.server.environ
    before = len(sessions)
    port = live_server.url.rsplit(":", 1)[1]
    for _ in range(20):
        requests.get(f"{live_server.url}/socket.io/?EIO=4&transport=polling",
                     headers={"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}, timeout=5)
    assert len(sessions) == before


def test_the_page_itself_still_connects_same_origin(live_server: Any) -> None:
    port = live_server.url.rsplit(":", 1)[1]
    for origin in (f"http://127.0.0.1:{port}", f"https://127.0.0.1:{port}"):
        answer = requests.get(f"{live_server.url}/socket.io/?EIO=4&transport=polling", headers={"Origin": origin},
                              timeout=5)
        assert answer.status_code == 200 and '"sid"' in answer.text
        assert "Access-Control-Allow-Origin" not in answer.headers  # same-origin needs no grant
    client = socketio.Client(reconnection=False)
    client.connect(live_server.url, headers={"Origin": f"http://127.0.0.1:{port}"}, transports=["polling"],
                   wait_timeout=5)
    client.disconnect()


def raw_upgrade(port: int, host: str, origin: str) -> bytes:
    """A WebSocket upgrade to /socket.io as a browser sends it; the server's first bytes."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(f"GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\n"
                     "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                     "Sec-WebSocket-Version: 13\r\n\r\n".encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        return data


def test_websocket_upgrades_from_a_rebinding_page_are_refused_by_the_real_server() -> None:
    from tests.support.servers import free_port, start_server, stop, wait_healthy

    port = free_port()
    proc = start_server(port)
    try:
        wait_healthy(f"http://127.0.0.1:{port}")
        for host, origin in FOREIGN:
            if origin is None:
                continue
            first = raw_upgrade(port, host.format(port=port), origin.format(port=port))
            assert first.split(b"\r\n", 1)[0] in (b"HTTP/1.1 400 Bad Request", b"HTTP/1.1 403 Forbidden"), first
            assert b"access-control-allow-origin" not in first.lower()
        same = raw_upgrade(port, f"127.0.0.1:{port}", f"http://127.0.0.1:{port}")
        assert same.startswith(b"HTTP/1.1 101"), same
    finally:
        stop(proc)


def test_a_listed_origin_is_granted_that_origin_only(make_app: Any, serve: Any, fake_nvml: Any) -> None:
    server = serve(make_app(nvidia_selection(fake_nvml), allowed_origins=("https://dash.example",)))
    for path in ("/api/gpu/summary", "/socket.io/?EIO=4&transport=polling"):
        ok = requests.get(server.url + path, headers={"Origin": "https://dash.example"}, timeout=5)
        assert ok.status_code == 200 and ok.headers["Access-Control-Allow-Origin"] == "https://dash.example"
        assert ok.headers["Vary"] == "Origin"
        other = requests.get(server.url + path, headers={"Origin": "https://dash.example.evil"}, timeout=5)
        assert other.status_code == 403 and "Access-Control-Allow-Origin" not in other.headers


def test_socket_sessions_are_limited_per_client_and_in_all(make_app: Any, serve: Any, fake_nvml: Any) -> None:
    server = serve(make_app(nvidia_selection(fake_nvml), client_sessions=3, max_sessions=5, rate_limit_per_s=0.0))
    handshake = f"{server.url}/socket.io/?EIO=4&transport=polling"
    sessions = server.app.extensions["fanwhy"].sessions
    mine = [requests.get(handshake, timeout=5) for _ in range(4)]
    assert [a.status_code for a in mine] == [200] * 4  # loopback at its cap: its oldest made room
    assert sessions.closed_for["room"] == 1 and len(sessions) == 3
    first = json.loads(mine[0].text[1:])["sid"]
    gone = requests.get(f"{handshake}&sid={first}", timeout=5)
    assert gone.status_code == 400 or gone.text.endswith("1"), gone.text  # closed (or told so in its last poll)
    gate = server.app.wsgi_app.app  # inside the proxy layer (app/web/proxy.py)
    for i in range(3):
        sessions.opened(f"net{i}", "10.0.0.1")
    other = {"REMOTE_ADDR": "10.0.0.1", "HTTP_HOST": "127.0.0.1", "PATH_INFO": "/socket.io/", "QUERY_STRING": "EIO=4"}
    assert gate.check(other)[:2] == (429, "too many sessions")  # a network address at its cap: refused
    answered: list[str] = []
    gate(other, lambda status, headers, exc_info=None: answered.append(status))
    assert answered == ["429 Too Many Requests"] and gate.refusals.counts()["session"] == 1  # counted
    assert gate.check({**other, "REMOTE_ADDR": "10.0.0.9"}) is None  # full (6 of 5): the fullest address makes room
    assert sessions.closed_for["room"] == 2


def test_handshakes_share_the_per_client_rate_limit(make_app: Any, serve: Any, fake_nvml: Any) -> None:
    server = serve(make_app(nvidia_selection(fake_nvml), rate_limit_per_s=2.0, client_sessions=100))
    codes = [requests.get(f"{server.url}/socket.io/?EIO=4&transport=polling", timeout=5).status_code
             for _ in range(8)]
    assert codes[:4] == [200] * 4 and codes[-1] == 429


def test_a_handshake_without_the_token_opens_no_session(make_app: Any, serve: Any, fake_nvml: Any) -> None:
    server = serve(make_app(nvidia_selection(fake_nvml), token="a-long-enough-token-0123"))
    sessions = server.app.extensions["fanwhy"].socketio.server.environ
    for _ in range(20):
        answer = requests.get(f"{server.url}/socket.io/?EIO=4&transport=polling", timeout=5)
        assert answer.status_code == 401
    assert len(sessions) == 0
    ok = requests.get(f"{server.url}/socket.io/?EIO=4&transport=polling&token=a-long-enough-token-0123", timeout=5)
    assert ok.status_code == 200 and len(sessions) == 1


def test_connections_per_address_are_capped_and_slow_headers_cut_off_by_the_real_server() -> None:
    import time

    from tests.support.servers import free_port, start_server, stop, wait_healthy

    port = free_port()
    proc = start_server(port, FANWHY_CLIENT_CONNECTIONS="5", FANWHY_HEADER_TIMEOUT="2")
    held: list[socket.socket] = []
    try:
        wait_healthy(f"http://127.0.0.1:{port}")
        for _ in range(8):  # from 127.0.0.7: the first five are kept, the others closed at once
            sock = socket.socket()
            sock.bind(("127.0.0.7", 0))
            sock.connect(("127.0.0.1", port))
            sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # headers never finished
            held.append(sock)
        closed = []
        for n, sock in enumerate(held):
            sock.settimeout(0.3 if n < 5 else 10)  # a kept one stays silent; a refused one's close is awaited
            try:
                closed.append(sock.recv(1) == b"")
            except TimeoutError:
                closed.append(False)
            except ConnectionResetError:
                closed.append(True)
        assert closed == [False] * 5 + [True] * 3, closed
        assert requests.get(f"http://127.0.0.1:{port}/api/health", timeout=5).status_code == 200  # others served
        started = time.monotonic()
        held[0].settimeout(10)
        assert held[0].recv(1) == b""  # the header deadline closes the slow sender
        assert time.monotonic() - started < 3
    finally:
        for sock in held:
            sock.close()
        assert "Traceback" not in stop(proc)
