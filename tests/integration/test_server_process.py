"""`python -m app` for real: gunicorn, one worker, the URL printed, WebSocket push, refusal to bind unsafely."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
import requests
import socketio

from tests.support.servers import ROOT, free_port, start_server, stop, wait_healthy


@pytest.fixture
def server() -> Iterator[tuple[str, subprocess.Popen]]:
    port = free_port()
    proc = start_server(port)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url)
        yield url, proc
    finally:
        output = stop(proc)
        assert "Traceback" not in output, output


def test_served_by_gunicorn_with_live_push_over_websocket(server: tuple[str, subprocess.Popen]) -> None:
    url, _ = server
    client = socketio.Client(reconnection=False)
    updates: list[dict] = []
    client.on("gpu_status_update", updates.append)
    client.connect(url, transports=["websocket"], wait_timeout=5)
    try:
        deadline = time.monotonic() + 10
        while len(updates) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(updates) >= 2
        assert client.transport() == "websocket"
    finally:
        client.disconnect()
    gpu_procs = [p for p in updates[-1]["processes"] if p["gpus"]]
    assert gpu_procs and "--job" in gpu_procs[0]["command"] and gpu_procs[0]["program"] == "python train.py"
    assert "demo-secret-not-real" not in json.dumps(updates[-1])  # masked before it leaves the server
    assert "--api-key=****" in gpu_procs[0]["command"]


def test_the_url_is_printed(server: tuple[str, subprocess.Popen]) -> None:
    url, proc = server
    assert proc.stdout is not None
    line = proc.stdout.readline()
    while line and "FanWhy is serving" not in line:
        line = proc.stdout.readline()
    assert f"FanWhy is serving {url}/" in line


def test_a_stop_does_not_wait_out_an_idle_kept_alive_connection() -> None:
    """SIGTERM with a browser's kept-alive connection open between requests: the worker closes it and exits at its
    next check (about a second), instead of waiting the 5 s graceful timeout for a request that is not coming."""
    port = free_port()
    proc = start_server(port)
    url = f"http://127.0.0.1:{port}"
    with requests.Session() as kept:
        wait_healthy(url)
        assert kept.get(f"{url}/api/gpu/summary", timeout=5).status_code == 200  # its connection stays open
        began = time.monotonic()
        output = stop(proc)
        took = time.monotonic() - began
    assert took < 4.0, took
    assert "Traceback" not in output and "ERROR" not in output, output


def test_refuses_a_non_loopback_bind_without_a_token() -> None:
    result = subprocess.run([sys.executable, "-m", "app", "--host", "0.0.0.0"], cwd=ROOT, capture_output=True,
                            text=True, timeout=30, env=dict(os.environ, FANWHY_TOKEN=""))
    assert result.returncode == 2
    assert "refusing to bind 0.0.0.0" in result.stderr and "FANWHY_TOKEN" in result.stderr


def test_an_explicit_backend_that_cannot_start_says_why() -> None:
    result = subprocess.run([sys.executable, "-m", "app", "snapshot", "--json", "--backend", "amd"], cwd=ROOT,
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 4 and "amdsmi" in result.stderr


def test_snapshot_json_prints_one_snapshot_and_exits() -> None:
    result = subprocess.run([sys.executable, "-m", "app", "snapshot", "--json"], cwd=ROOT, capture_output=True,
                            text=True, timeout=60, env=dict(os.environ, FANWHY_BACKEND="simulated",
                                                            FANWHY_SIM_GPUS="1", FANWHY_SIM_PEAK="0.2"))
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["backend"]["name"] == "simulated" and len(body["gpus"]) == 1
    assert body["timing"]["tick"] == 1  # one collection: the CPU times were read as the command started
