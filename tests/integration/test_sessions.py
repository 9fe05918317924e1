"""Socket.IO sessions (app/web/sessions.py): nothing one connection sends can freeze the server, and no local user
can lock the page out by filling its sessions. The rules by themselves with a clock of their own; then a real
server (gunicorn, gevent) flooded by raw WebSockets while a second client, a health probe and the page go on."""

from __future__ import annotations

import json
import logging
import multiprocessing
import socket
from pathlib import Path
from typing import Any

import pytest
import requests
import socketio
import websocket

from app.web.sessions import BURST, DROPPED_BUDGET, LOG_LINES, MALFORMED_BUDGET, Sessions, address_group
from tests.support.servers import Probe, free_port, start_server, stop, wait_for, wait_healthy


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def wired(**kw: Any) -> tuple[Sessions, Clock, list[str]]:
    clock = Clock()
    sessions = Sessions(clock=clock, **kw)
    closed: list[str] = []

    def close(sid: str, cut: bool) -> None:
        closed.append(sid)
        sessions.ended(sid)

    sessions._close = close
    return sessions, clock, closed


def test_a_flooding_connection_loses_its_excess_then_is_closed_and_is_logged_once(
        caplog: pytest.LogCaptureFixture) -> None:
    sessions, clock, closed = wired()
    sessions.opened("a", "127.0.0.5")
    sessions.opened("b", "127.0.0.6")
    handled: list[str] = []
    with caplog.at_level(logging.INFO, logger="app.web.sessions"):
        for _ in range(int(BURST) + DROPPED_BUDGET + 500):  # one burst, no time passing
            sessions.receive("a", "42[\"request_gpu_update\"]", lambda sid, data: handled.append(sid))
        sessions.receive("b", "40", lambda sid, data: handled.append(sid))
    assert handled.count("a") == int(BURST) and handled.count("b") == 1  # the other connection is untouched
    assert closed == ["a"] and sessions.closed_for["flood"] == 1
    assert len(caplog.records) == 2, [r.getMessage() for r in caplog.records]  # limited once, closed once
    clock.now += 1.0
    sessions.opened("c", "127.0.0.5")
    for _ in range(15):
        sessions.receive("c", "x", lambda sid, data: handled.append(sid))
    assert handled.count("c") == 15  # a new connection starts with a full bucket


def test_malformed_packets_close_the_connection_at_the_budget_without_a_traceback(
        caplog: pytest.LogCaptureFixture) -> None:
    sessions, clock, closed = wired()
    sessions.opened("a", "10.0.0.1")

    def parse(sid: str, data: Any) -> None:
        raise ValueError("Unknown packet type.")

    with caplog.at_level(logging.INFO, logger="app.web.sessions"):
        for _ in range(MALFORMED_BUDGET + 20):
            clock.now += 1.0  # slow enough for the rate limit: only the parse fails
            sessions.receive("a", "42[", parse)
    assert closed == ["a"] and sessions.closed_for == {"flood": 0, "malformed": 1, "room": 0}
    assert len(caplog.records) == 2 and not any(r.exc_info for r in caplog.records)
    assert "malformed packet (ValueError: Unknown packet type.)" in caplog.records[0].getMessage()


def test_a_reconnecting_malformed_flood_is_logged_within_a_budget_a_minute(caplog: pytest.LogCaptureFixture) -> None:
    """Each reconnection is a new session, logged once: 1,000 of them in a minute write LOG_LINES lines, then one
    line in the next minute says how many were left out."""
    sessions, clock, _ = wired()

    def parse(sid: str, data: Any) -> None:
        raise ValueError("Unknown packet type.")

    with caplog.at_level(logging.INFO, logger="app.web.sessions"):
        for n in range(1000):
            clock.now += 0.05
            sessions.opened(f"s{n}", "127.0.0.9")
            sessions.receive(f"s{n}", "42[", parse)
            sessions.ended(f"s{n}")
        assert len(caplog.records) == LOG_LINES
        clock.now += 60
        sessions.opened("late", "127.0.0.9")
        sessions.receive("late", "42[", parse)
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == LOG_LINES + 2 and f"{1000 - LOG_LINES} more session lines" in said[LOG_LINES]
    assert said[-1].startswith("Socket.IO session late")


def test_a_network_address_at_its_cap_is_refused_and_a_loopback_one_makes_room_within_itself() -> None:
    sessions, clock, closed = wired(client_sessions=3, max_sessions=100)
    for i in range(3):
        clock.now += 1
        sessions.opened(f"n{i}", "10.0.0.1")
        sessions.opened(f"l{i}", "127.0.0.1")
    refused = sessions.admit("10.0.0.1")
    assert refused is not None and refused[:2] == (429, "too many sessions") and closed == []
    assert sessions.admit("10.0.0.2") is None and closed == []
    assert sessions.admit("127.0.0.1") is None and closed == ["l0"]  # the oldest of that address


def test_a_full_server_closes_the_oldest_of_the_fullest_address_and_loopback_counts_as_one() -> None:
    sessions, clock, closed = wired(client_sessions=16, max_sessions=10)
    clock.now += 1
    sessions.opened("net-old", "10.0.0.1")  # the oldest of all, but its address holds one session
    for i in range(9):
        clock.now += 1
        sessions.opened(f"lo{i}", f"127.0.0.{10 + i}")  # nine addresses, each holding one: one loopback
    assert address_group("127.0.0.10") == address_group("::1") == "loopback" != address_group("10.0.0.1")
    assert sessions.admit("127.0.0.1") is None and closed == ["lo0"]
    sessions.opened("newcomer", "127.0.0.1")
    assert sessions.admit("10.0.0.2") is None and closed == ["lo0", "lo1"]
    assert sessions.closed_for["room"] == 2


# -- a real server ---------------------------------------------------------------------------------------------------

def raw_socket(port: int, address: str = "127.0.0.1") -> websocket.WebSocket:
    """A WebSocket Socket.IO session made by hand (no client library's checks), from ``address``."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(address, 0))
    # skip_utf8_validation: websocket-client checks each text frame's UTF-8 in pure Python (5 ms for a 12 KB update
    # on the 2-core VM), the most of what one thread holding 1,000 sessions does (tests/system/test_sessions_load.py)
    ws = websocket.create_connection(f"ws://127.0.0.1:{port}/socket.io/?EIO=4&transport=websocket", timeout=30,
                                     socket=sock, skip_utf8_validation=True)
    assert str(ws.recv()).startswith("0{")
    ws.send("40")
    while not str(ws.recv()).startswith("40"):
        pass
    return ws


def flood(ws: websocket.WebSocket, packet: str, count: int) -> int:
    """Send ``packet`` ``count`` times as fast as the socket takes them; how many went before it was closed."""
    sent = 0
    try:
        for _ in range(count):
            ws.send(packet)
            sent += 1
    except (OSError, websocket.WebSocketException):
        pass
    return sent


def closed_by_server(ws: websocket.WebSocket, timeout: float = 60) -> bool:
    ws.settimeout(timeout)
    try:
        while True:
            frame = ws.recv()
            if frame in ("", "1") or frame is None:
                return True
    except (OSError, websocket.WebSocketException):
        return True


@pytest.fixture
def server(tmp_path: Path) -> Any:
    port = free_port()
    log = (tmp_path / "server.log").open("w")
    proc = start_server(port, output=log, FANWHY_INTERVAL="0.25")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, timeout=60)
        yield port, url, tmp_path / "server.log"
    finally:
        stop(proc)
        log.close()


def floods(port: int) -> tuple[int, int, bool, bool]:
    """One WebSocket sends 20,000 malformed packets, then another 20,000 valid ones (in a process of its own, so
    that the sender's CPU is not the probe's: how many went, and whether the server closed each)."""
    bad = raw_socket(port, "127.0.0.21")
    sent_bad = flood(bad, "42[", 20_000)
    good = raw_socket(port, "127.0.0.22")
    sent_good = flood(good, json.dumps(["request_gpu_update"]).join(["42", ""]), 20_000)
    return sent_bad, sent_good, closed_by_server(bad), closed_by_server(good)


def test_one_websocket_flooding_malformed_and_valid_packets_freezes_nothing(server: Any) -> None:
    port, url, log = server
    watcher = socketio.Client(reconnection=False)
    ticks: list[int] = []
    watcher.on("gpu_status_update", lambda view: ticks.append(view["timing"]["tick"]))
    watcher.connect(url, transports=["websocket"], wait_timeout=30)
    probe = Probe(url)
    try:
        wait_for(lambda: len(ticks) >= 2, timeout=60)
        log_before = log.stat().st_size
        probe.start()
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            sent_bad, sent_good, bad_closed, good_closed = pool.apply(floods, (port,))
        seen = len(ticks)
        wait_for(lambda: len(ticks) >= seen + 12, timeout=60)  # the push goes on after the flood
    finally:
        probe.done.set()
        probe.join(60)
        watcher.disconnect()
    grown = log.stat().st_size - log_before
    health = requests.get(f"{url}/api/health", timeout=30).json()
    assert bad_closed and good_closed
    assert health["sessions"]["closed_malformed"] == 1 and health["sessions"]["closed_flood"] == 1, health["sessions"]
    assert sent_bad >= MALFORMED_BUDGET and sent_good >= BURST, (sent_bad, sent_good)  # the floods reached the server
    assert not probe.failures and probe.p99() < 0.2, (probe.p99(), max(probe.times), len(probe.times),
                                                       probe.failures[:3])
    # every tick once, none missed: compared in order of tick, because python-socketio's client runs each message's
    # handler on a thread of its own (engine.io's run_async), so two updates a moment apart may be appended swapped
    # (seen once: [3, 4, 6, 5, 7, ...]); the server's order is not what this client can show
    assert sorted(ticks) == list(range(min(ticks), min(ticks) + len(ticks))), ("the second client missed an update",
                                                                                 ticks, max(probe.times))
    assert grown < 100_000, grown
    assert "Traceback" not in log.read_text()


def test_a_poll_over_engineios_limit_is_refused_at_once_and_one_at_it_is_taken(server: Any) -> None:
    """Engine.IO closes a session whose poll is over its max_http_buffer_size and waits for its queue: the request
    hung until the ping timeout. The body reader refuses it first (413); the session goes on."""
    from app.web.bodies import SOCKET_BODY_BYTES

    _, url, _ = server
    sid = json.loads(requests.get(f"{url}/socket.io/?EIO=4&transport=polling", timeout=30).text[1:])["sid"]
    poll = f"{url}/socket.io/?EIO=4&transport=polling&sid={sid}"
    assert requests.post(poll, data=b"40", timeout=30).text == "OK"
    at_limit = ('42["x","' + "a" * (SOCKET_BODY_BYTES - 10) + '"]').encode()
    assert len(at_limit) == SOCKET_BODY_BYTES
    assert requests.post(poll, data=at_limit, timeout=30).status_code == 200
    over = requests.post(poll, data=at_limit + b"a", timeout=30)  # hung past this timeout before
    assert over.status_code == 413 and over.json()["detail"] == f"at most {SOCKET_BODY_BYTES} bytes"
    assert requests.post(poll, data=b"3", timeout=30).text == "OK"  # the session is still open
