"""A process with a megabyte of arguments: its command line is bounded in every list and every update, whole for
that one PID on request, and 20 WebSocket clients keep getting every update on time."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from typing import Any

import requests
import socketio

from app.core.redact import MAX_COMMAND_CHARS
from tests.support.servers import free_port, start_server, stop, wait_healthy

CLIENTS = 20
UPDATES = 25


def _spinner_with_a_megabyte_of_arguments() -> subprocess.Popen[bytes]:
    """A busy process (so it is among the top CPU users FanWhy lists) whose argv is 1 MB, a secret in it. It ends
    by itself after 10 minutes: a test run killed before its clean-up left one spinning on a core for good."""
    args = [f"--shard=/data/part-{n:06d}-{'x' * 90}" for n in range(10_000)]
    spin = "import time\nend = time.monotonic() + 600\nwhile time.monotonic() < end: pass"
    return subprocess.Popen([sys.executable, "-c", spin, "--api-token=Zq-megabyte-secret", *args])


def test_a_megabyte_command_line_is_bounded_and_every_client_keeps_up() -> None:
    spinner = _spinner_with_a_megabyte_of_arguments()
    port = free_port()
    proc = start_server(port, FANWHY_INTERVAL="1", FANWHY_TOP_CPU="5", FANWHY_CLIENT_SESSIONS="32")
    url = f"http://127.0.0.1:{port}"
    clients: list[socketio.Client] = []
    try:
        wait_healthy(url)
        deadline = time.monotonic() + 20
        row: dict[str, Any] | None = None
        while row is None and time.monotonic() < deadline:
            listed = requests.get(f"{url}/api/gpu/processes?kind=cpu", timeout=5)
            row = next((p for p in listed.json()["processes"] if p["pid"] == spinner.pid), None)
            time.sleep(0.5)
        assert row is not None, "the busy process is listed"
        assert len(listed.content) < 64 * 1024, "the list carries the command line bounded"
        assert len(row["command"]) < MAX_COMMAND_CHARS + 40 and row["command"].endswith("more characters)")
        assert "--api-token=****" in row["command"]
        one = requests.get(f"{url}/api/gpu/processes/{spinner.pid}", timeout=5).json()
        assert len(one["command_full"]) > 1_000_000 and "--api-token=****" in one["command_full"]
        assert "Zq-megabyte-secret" not in one["command_full"] + listed.text

        seen: list[dict[float, float]] = [{} for _ in range(CLIENTS)]  # per client: snapshot time -> latency

        def on_update(n: int) -> Any:
            def record(view: dict[str, Any]) -> None:
                seen[n][view["timestamp"]] = time.time() - view["timestamp"]
            return record

        for n in range(CLIENTS):
            client = socketio.Client(reconnection=False)
            client.on("gpu_status_update", on_update(n))
            clients.append(client)
        threads = [threading.Thread(target=c.connect, args=(url,), kwargs={"transports": ["websocket"],
                                                                            "wait_timeout": 10}) for c in clients]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        connected = time.time()
        assert all(c.connected for c in clients)
        time.sleep(UPDATES + 1.5)
        ended = time.time()
        # every update sent once all were connected, and at least the 1 s latency bound (asserted below) before the
        # count: a frame made in the last second may be on its way to some clients and not yet to others
        sent = {t for s in seen for t in s if connected < t <= ended - 1.0}
        assert len(sent) >= UPDATES - 1, len(sent)
        counts = [len(sent & set(s)) for s in seen]
        assert min(counts) >= 0.99 * len(sent), (counts, len(sent))
        every = sorted(v for s in seen for t, v in s.items() if t > connected)
        p99 = every[int(len(every) * 0.99) - 1]
        assert p99 < 1.0, p99
    finally:
        for client in clients:
            client.disconnect()
        output = stop(proc)
        spinner.kill()
        spinner.wait()
    assert "ConcurrentObjectUseError" not in output and "Traceback" not in output, output[-3000:]
