"""How often the server pings its Socket.IO clients, and what that lets a client live through (system tier: real
servers, one stopped and resumed, about 30 s).

A polling client answers each ping with a POST on a connection idle since its previous answer. At a ping interval
equal to the keep-alive (10 s and 10 s), that POST and the server's closing of the idle connection came at the same
moment; a server busy then read the POST only after it had closed the connection, and python-socketio's client ended
its session ("transport error", once in a CI run among 1,000 sessions). So the server pings within half the
keep-alive. And python-socketio's client ends its session when it has sent nothing for max(announced interval, ping
timeout) + 5 s: at a 5 s ping and a 10 s timeout, a server stopped 10 s keeps it."""

from __future__ import annotations

import json
import logging
import os
import signal
import time

import requests
import socketio

from tests.support.servers import engineio_log, free_port, served, start_server, stop, wait_for, wait_healthy


def announced(url: str) -> dict[str, object]:
    """The Engine.IO handshake's open packet (``0{...}``) of a new polling session."""
    answer = requests.get(f"{url}/socket.io/?EIO=4&transport=polling", timeout=30)
    assert answer.status_code == 200 and answer.text.startswith("0"), answer.text[:200]
    opened: dict[str, object] = json.loads(answer.text[1:])
    return opened


def test_the_server_pings_within_half_its_keep_alive() -> None:
    """Mutant: ``ping_interval=10`` (the keep-alive's 10 s) in app/web/realtime.py."""
    for header_timeout, expected_ms in (("10", 5000), ("4", 2000), ("60", 5000)):
        with served(FANWHY_HEADER_TIMEOUT=header_timeout) as url:
            opened = announced(url)
        assert opened["pingInterval"] == expected_ms, (header_timeout, opened)
        assert opened["pingTimeout"] == 10000


class Pings(logging.Handler):
    """The times at which the client's Engine.IO layer received a ping (its INFO log says so)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.at: list[float] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("Received packet PING"):
            self.at.append(time.monotonic())


def test_a_python_client_outlasts_a_server_stopped_for_ten_seconds() -> None:
    """Mutant: ``ping_timeout=5`` (the client then gives up 10 s after its last answer, while the server is still
    stopped)."""
    port = free_port()
    proc = start_server(port, FANWHY_INTERVAL="1")
    url = f"http://127.0.0.1:{port}"
    pings = Pings()
    clients_log = engineio_log("pings", pings)
    client = socketio.Client(reconnection=False, engineio_logger=clients_log)
    ticks: list[float] = []
    gone: list[str] = []
    client.on("gpu_status_update", lambda view: ticks.append(time.monotonic()))
    client.on("disconnect", lambda reason=None: gone.append(str(reason)))
    try:
        wait_healthy(url, timeout=60)
        client.connect(url, transports=["polling"], wait_timeout=30)
        wait_for(lambda: bool(pings.at), timeout=30)  # answered: the next ping is due 5 s after this one
        first = pings.at[0]
        time.sleep(max(0.0, first + 1 - time.monotonic()))
        os.killpg(proc.pid, signal.SIGSTOP)  # the whole server (a worker under its master) stops, as a busy one
        try:
            time.sleep(max(0.0, first + 11 - time.monotonic()))
        finally:
            os.killpg(proc.pid, signal.SIGCONT)
        resumed = time.monotonic()
        wait_for(lambda: any(t > resumed for t in ticks) or bool(gone), timeout=60)
        time.sleep(max(0.0, first + 18 - time.monotonic()))  # past the client's limit had it not answered
        assert client.connected and not gone, f"the client left: {gone}"
        assert any(t > resumed for t in ticks), "no update after the server resumed"
        assert any(first + 10 < t for t in pings.at), "no ping after the stop"
    finally:
        client.disconnect()
        clients_log.removeHandler(pings)
        stop(proc)
