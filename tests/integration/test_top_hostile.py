"""``fanwhy top --server`` survives any answer: a server on loopback answers NaN, infinities, a timestamp of 1e308
or 2^70, integers of 309 digits, JSON nested 100,000 deep, a byte a second; the feed says why on screen, never
dies with a traceback, keeps asking, and every answer it takes is drawn."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import pytest

from app.cli.topremote import RemoteFeed, Unanswered
from app.cli.topstate import History, TopState, follow_selection
from app.cli.topview import UNICODE, frame
from tests.support.servers import wait_for

GOOD = {"timestamp": 1_700_000_000, "host": {"hostname": "box"}, "backend": {"name": "t"}, "processes": [],
        "gpus": [{"index": 0, "name": "H200", "utilization_percent": 50, "memory_used_bytes": 1 << 30,
                  "memory_total_bytes": 80 << 30, "temperature_c": 50, "power_w": 300, "power_limit_w": 700}],
        "fans": [], "alerts": [], "verdict": {"headline": "GPU 0 is busy.", "busy": True, "causes": []}}


def _with(path: tuple[Any, ...], value: str) -> bytes:
    """GOOD as JSON with the value at ``path`` written as ``value`` (raw JSON text: NaN, 1e308, 400 digits)."""
    marker = "\"@@\""
    view = json.loads(json.dumps(GOOD))
    place = view
    for key in path[:-1]:
        place = place[key]
    place[path[-1]] = "@@"
    return json.dumps(view).replace(marker, value).encode()


class Answers(http.server.BaseHTTPRequestHandler):
    answer: ClassVar[Callable[[Any], None]]
    asked: ClassVar[list[float]]
    url: ClassVar[str]

    def do_GET(self) -> None:  # http.server's name
        type(self).asked.append(time.monotonic())
        if not self.path.startswith("/api/gpu/metrics"):
            self.send_response(404)
            self.end_headers()
            return
        type(self).answer(self)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[type[Answers]]:
    handler: type[Answers] = type("Handler", (Answers,), {"asked": [], "answer": staticmethod(lambda h: None)})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    handler.url = f"http://127.0.0.1:{httpd.server_port}"
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield handler
    httpd.shutdown()
    httpd.server_close()


def _body(body: bytes) -> Callable[[Any], None]:
    def answer(handler: Any) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
    return answer


def _trickled(body: bytes, pause_s: float) -> Callable[[Any], None]:
    """An answer sent a byte every ``pause_s`` (until the reader gives up)."""
    def answer(handler: Any) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        try:
            for byte in body:
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                time.sleep(pause_s)
        except OSError:
            pass  # the reader gave up: what these tests want
    return answer


def _drawn(view: Any) -> None:
    history = History()
    history.remember(view)
    state = TopState()
    follow_selection(state, view, history)
    for shown in (state, TopState(detail=True), TopState(help=True)):
        assert frame(view, shown, history, 120, 40, UNICODE)


HOSTILE_NUMBERS = [
    (("timestamp",), "1e308"), (("timestamp",), str(2 ** 70)), (("timestamp",), "9" * 309),
    (("timestamp",), "-" + "9" * 309), (("gpus", 0, "utilization_percent"), "1e308"),
    (("gpus", 0, "index"), "9" * 309), (("gpus", 0, "power_w"), str(2 ** 70)),
    (("gpus", 0, "memory_total_bytes"), "1e308"), (("gpus", 0, "temperature_c"), "-1e308"),
]


@pytest.mark.parametrize(("path", "value"), HOSTILE_NUMBERS)
def test_a_number_no_reading_can_be_is_drawn_without_it(server: Any, path: tuple[Any, ...], value: str) -> None:
    server.answer = staticmethod(_body(_with(path, value)))
    feed = RemoteFeed(server.url, None, 30.0)
    try:
        _drawn(feed.fetch())
    finally:
        feed.close()


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinities_are_not_json_and_said(server: Any, value: str) -> None:
    server.answer = staticmethod(_body(_with(("timestamp",), value)))
    feed = RemoteFeed(server.url, None, 30.0)
    try:
        with pytest.raises(Unanswered, match="not JSON"):
            feed.fetch()
    finally:
        feed.close()


def test_json_nested_100000_deep_is_said_and_the_feed_keeps_asking(server: Any) -> None:
    server.answer = staticmethod(_body(b"[" * 100_000 + b"]" * 100_000))
    feed = RemoteFeed(server.url, None, 0.2)
    try:
        wait_for(lambda: "nested too deep" in feed.latest()[2], timeout=60)
        asked = len(server.asked)
        server.answer = staticmethod(_body(json.dumps(GOOD).encode()))
        wait_for(lambda: feed.latest()[1] is not None, timeout=60)
        assert len(server.asked) > asked and feed.latest()[2] == ""
    finally:
        feed.close()


def test_a_byte_a_second_passes_the_one_deadline_and_is_said(server: Any) -> None:
    body = json.dumps(GOOD).encode()
    server.answer = staticmethod(_trickled(body, 0.5))
    feed = RemoteFeed(server.url, None, 1.0)  # its deadline: 5 s for the whole answer
    try:
        wait_for(lambda: "no whole answer within" in feed.latest()[2], timeout=60)
        assert feed.latest()[1] is None
        server.answer = staticmethod(_body(body))
        wait_for(lambda: feed.latest()[1] is not None, timeout=60)  # asked again, answered
    finally:
        feed.close()


def test_a_feed_that_ended_is_started_again_and_said(server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    server.answer = staticmethod(_body(json.dumps(GOOD).encode()))
    real = RemoteFeed._run
    runs: list[int] = []

    def ends_at_once(self: RemoteFeed, generation: int) -> None:
        runs.append(generation)
        if len(runs) > 1:
            real(self, generation)  # the first thread ends before asking (as if anything had killed it)

    monkeypatch.setattr(RemoteFeed, "_run", ends_at_once)
    feed = RemoteFeed(server.url, None, 0.2)
    try:
        wait_for(lambda: not feed._thread.is_alive(), timeout=30)
        assert feed.latest()[2] == "the feed stopped; started again"
        wait_for(lambda: feed.latest()[1] is not None, timeout=30)
        assert runs[:2] == [0, 1] and feed.latest()[2] == ""
    finally:
        feed.close()


def test_one_read_has_one_deadline_for_the_whole_answer(server: Any) -> None:
    from app.cli.topremote import get_json

    body = json.dumps(GOOD).encode()
    server.answer = staticmethod(_trickled(body, 0.2))  # each byte within the socket's timeout: only the deadline
    with pytest.raises(Unanswered, match="no whole answer within the deadline"):
        get_json(server.url + "/api/gpu/metrics", None, 2.0)
