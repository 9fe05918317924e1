"""A server that stops for a few seconds (a busy or paused machine) keeps its Python Socket.IO clients (system tier:
a server process stopped and resumed, about 30 s).

python-socketio's client ends its session when it has sent nothing for the ping interval the server announced plus
5 s; it sends only its answers to the server's pings. FanWhy pings every 10 s and announces 15 (a 5 s grace), so a
ping up to 10 s late keeps the client. Mutant: ``ping_interval=10`` (no grace) in app/web/realtime.py; the polling
client then gives up 15 s after connecting, its first ping still held by the stopped server."""

from __future__ import annotations

import os
import signal
import time

import socketio

from tests.support.servers import free_port, start_server, stop, wait_for, wait_healthy


def test_a_python_client_outlasts_a_server_stopped_past_its_first_ping() -> None:
    port = free_port()
    proc = start_server(port, FANWHY_INTERVAL="1")
    url = f"http://127.0.0.1:{port}"
    client = socketio.Client(reconnection=False)
    ticks: list[float] = []
    gone: list[str] = []
    client.on("gpu_status_update", lambda view: ticks.append(time.monotonic()))
    client.on("disconnect", lambda reason=None: gone.append(str(reason)))
    try:
        wait_healthy(url, timeout=60)
        client.connect(url, transports=["polling"], wait_timeout=30)
        connected = time.monotonic()
        # the server's first ping is due 10 s after the handshake; stopped from 6 s to 16.5 s it goes out at 16.5 s,
        # past the 15 s an ungraced client waits and within the 20 s a graced one does
        time.sleep(max(0.0, connected + 6 - time.monotonic()))
        os.killpg(proc.pid, signal.SIGSTOP)
        try:
            time.sleep(max(0.0, connected + 16.5 - time.monotonic()))
        finally:
            os.killpg(proc.pid, signal.SIGCONT)
        resumed = time.monotonic()
        wait_for(lambda: any(t > resumed for t in ticks) or bool(gone), timeout=60)
        time.sleep(max(0.0, connected + 24 - time.monotonic()))  # past both clients' limits
        assert client.connected and not gone, f"the client left: {gone}"
        assert any(t > resumed for t in ticks), "no update after the server resumed"
    finally:
        client.disconnect()
        stop(proc)
