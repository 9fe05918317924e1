"""Credentials never leave their origin: `fanwhy top --server` and the Python client follow a redirect within the
server's origin only (a redirect elsewhere is refused and said, and the other host gets nothing), and an address
with user:password@ in it is refused without being printed. Two loopback addresses stand for two hosts."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from app.cli.topremote import Unanswered, first_contact, get_json
from app.client import FanWhyError, _call

TOKEN = "tok-7f3a9c2e5b1d4086"
SECRET = "hunter2-3b9e1f"


class Recorder(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, str]]] = []  # each server gets its own (made by _serve)
    redirect_to: ClassVar[str | None] = None

    def do_GET(self) -> None:  # http.server's name
        type(self).seen.append({"path": self.path, "authorization": self.headers.get("Authorization", "")})
        if self.redirect_to is not None and self.path == "/api/gpu/metrics":
            self.send_response(302)
            self.send_header("Location", self.redirect_to)
            self.end_headers()
            return
        body = json.dumps({"gpus": [], "path": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def _serve(address: str, redirect_to: str | None = None) -> tuple[http.server.HTTPServer, type[Recorder]]:
    handler = type("Handler", (Recorder,), {"seen": [], "redirect_to": redirect_to})
    server = http.server.HTTPServer((address, 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, handler


@pytest.fixture
def elsewhere() -> Iterator[tuple[str, type[Recorder]]]:
    server, handler = _serve("127.0.0.2")
    yield f"http://127.0.0.2:{server.server_port}", handler
    server.shutdown()
    server.server_close()


def test_a_redirect_to_another_origin_is_refused_and_the_other_host_gets_nothing(
        elsewhere: tuple[str, type[Recorder]]) -> None:
    other, other_seen = elsewhere
    server, handler = _serve("127.0.0.1", redirect_to=f"{other}/api/gpu/metrics")
    try:
        url = f"http://127.0.0.1:{server.server_port}/api/gpu/metrics"
        with pytest.raises(Unanswered) as refused:
            get_json(url, TOKEN, 10.0)
        assert "another origin" in str(refused.value) and "127.0.0.2" in str(refused.value)
        with pytest.raises(FanWhyError) as also:
            _call(url, "GET", None, TOKEN, 10.0)
        assert "another origin" in str(also.value)
        assert other_seen.seen == [], "the other host got a request"
        assert handler.seen[0]["authorization"] == f"Bearer {TOKEN}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_redirect_within_the_origin_is_followed_with_the_token() -> None:
    server, handler = _serve("127.0.0.1")
    handler.redirect_to = f"http://127.0.0.1:{server.server_port}/api/gpu/metrics?moved=1"
    try:
        answer = get_json(f"http://127.0.0.1:{server.server_port}/api/gpu/metrics", TOKEN, 10.0)
        assert isinstance(answer, dict) and answer["path"] == "/api/gpu/metrics?moved=1"
        assert [s["authorization"] for s in handler.seen] == [f"Bearer {TOKEN}"] * 2
    finally:
        server.shutdown()
        server.server_close()


def test_an_address_with_a_password_is_refused_and_never_printed(capsys: pytest.CaptureFixture[str]) -> None:
    server, handler = _serve("127.0.0.1")
    try:
        address = f"http://admin:{SECRET}@127.0.0.1:{server.server_port}"
        token, reason = first_contact(address, {})
        assert token is None and "user:password@" in reason and SECRET not in reason
        assert f"127.0.0.1:{server.server_port}" in reason
        with pytest.raises(FanWhyError) as refused:
            _call(f"{address}/api/recordings", "GET", None, None, 10.0)
        assert SECRET not in str(refused.value)
        assert handler.seen == [], "nothing was sent"
        out = capsys.readouterr()
        assert SECRET not in out.out + out.err
    finally:
        server.shutdown()
        server.server_close()
