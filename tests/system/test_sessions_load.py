"""A thousand Socket.IO sessions held open from 63 loopback addresses (system tier: many connections for many
seconds): the page and a polling client still get in and get their updates, and the oldest sessions of the
addresses holding the most are the ones closed."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests
import socketio
import websocket

from tests.integration.test_sessions import raw_socket
from tests.support.servers import free_port, start_server, stop, wait_for, wait_healthy


@pytest.mark.load
def test_a_thousand_loopback_sessions_do_not_lock_the_page_out(tmp_path: Path) -> None:
    port = free_port()
    log = (tmp_path / "server.log").open("w")
    proc = start_server(port, output=log, FANWHY_INTERVAL="0.5")
    url = f"http://127.0.0.1:{port}"
    held: list[websocket.WebSocket] = []
    try:
        wait_healthy(url, timeout=60)
        for i in range(1000):  # 63 loopback addresses, 16 each at most (FANWHY_CLIENT_SESSIONS): 1,000 in all
            held.append(raw_socket(port, f"127.0.0.{2 + i % 63}"))
        assert requests.get(f"{url}/api/health", timeout=30).json()["sessions"]["open"] == 1000
        page = socketio.Client(reconnection=False)
        updates: list[int] = []
        page.on("gpu_status_update", lambda view: updates.append(view["timing"]["tick"]))
        page.connect(url, transports=["websocket"], wait_timeout=30)
        other = socketio.Client(reconnection=False)
        other.connect(url, transports=["polling"], wait_timeout=30)
        try:
            wait_for(lambda: len(updates) >= 3, timeout=60)
            assert page.connected and other.connected
        finally:
            page.disconnect()
            other.disconnect()
        health = requests.get(f"{url}/api/health", timeout=30).json()
        assert health["sessions"]["closed_room"] >= 2 and health["sessions"]["open"] <= 1000
    finally:
        for ws in held:
            ws.close()
        stop(proc)
        log.close()
