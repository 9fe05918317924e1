"""The server under load (system tier): many Socket.IO sessions opened and closed leave no thread or memory
behind, and a client that never reads delays no one else."""

from __future__ import annotations

import itertools
import socket
import time

import psutil
import pytest
import socketio

from tests.support.servers import free_port, start_server, stop, wait_healthy


@pytest.mark.load
def test_500_connect_disconnect_cycles_leak_no_threads_or_memory() -> None:
    """Measured on the server process (gunicorn's worker), which is what must not grow."""
    port = free_port()
    proc = start_server(port, FANWHY_RATE_LIMIT="0")  # one client opening 550 sessions fast
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url)
        worker = psutil.Process(proc.pid).children()[0]

        def cycle(n: int) -> None:
            for _ in range(n):
                client = socketio.Client(reconnection=False)
                client.connect(url, transports=["polling"], wait_timeout=5)
                client.disconnect()

        cycle(50)  # warm up: imports, caches, the thread pool
        time.sleep(1.0)
        threads, rss = worker.num_threads(), worker.memory_info().rss
        cycle(500)
        # Each client's engine.io ping thread ends at its next ping (10 s): then all must be gone.
        deadline = time.monotonic() + 25
        while worker.num_threads() > threads + 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert worker.num_threads() <= threads + 2
        assert worker.memory_info().rss - rss < 30 * 2**20
    finally:
        stop(proc)


@pytest.mark.load
def test_a_client_that_never_reads_does_not_delay_the_others() -> None:
    port = free_port()
    proc = start_server(port, FANWHY_INTERVAL="0.2", FANWHY_SIM_GPUS="8", FANWHY_SIM_PEAK="0.05")
    url = f"http://127.0.0.1:{port}"
    silent = []
    try:
        wait_healthy(url)
        for _ in range(3):  # WebSocket clients that complete the handshake, then never read
            raw = socket.create_connection(("127.0.0.1", port))
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            raw.sendall(b"GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                        b"Sec-WebSocket-Version: 13\r\n\r\n")
            raw.sendall(bytes([0x81, 0x82, 0, 0, 0, 0]) + b"40")  # the Socket.IO connect, masked with zeros
            silent.append(raw)
        arrivals: list[float] = []
        client = socketio.Client(reconnection=False)
        client.on("gpu_status_update", lambda _: arrivals.append(time.monotonic()))
        client.connect(url, transports=["websocket"], wait_timeout=5)
        time.sleep(6)
        client.disconnect()
        gaps = [b - a for a, b in itertools.pairwise(arrivals)]
        assert len(arrivals) >= 20 and max(gaps) < 1.0, gaps
    finally:
        for raw in silent:
            raw.close()
        stop(proc)
