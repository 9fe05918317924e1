"""On a real NVIDIA GPU: a torch load, FanWhy served for real, compared with nvidia-smi.

Run on the GPU machine with `pytest -m gpu -ra tests/gpu`; FANWHY_GPU_REPORT_DIR names a folder for the JSON for
the figures that docs/HARDWARE.md quotes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import socketio

from app.vendors.nvml_gpu import CLOCKS_EVENT_REASONS
from tests.support.servers import free_port, start_server, stop, wait_healthy

pytestmark = pytest.mark.gpu
HERE = Path(__file__).resolve().parent
SECRET = "gpu-test-secret-123"
REPORT: dict = {}


def smi(query: str, fields: str) -> list[list[str]]:
    out = subprocess.run(["nvidia-smi", f"--query-{query}={fields}", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    return [[c.strip() for c in line.split(",")] for line in out.strip().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def load() -> Iterator[subprocess.Popen]:
    proc = subprocess.Popen([sys.executable, str(HERE / "cuda_load.py"), "--seconds", "120", "--hold-gb", "4",
                             f"--token={SECRET}"], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(3)  # let utilization and power settle
    yield proc
    proc.kill()
    proc.wait()
    proc.stdout.close()


@pytest.fixture(scope="module")
def server(load: subprocess.Popen) -> Iterator[str]:
    port = free_port()
    proc = start_server(port, FANWHY_BACKEND="nvidia", FANWHY_INTERVAL="1")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, timeout=60)
        time.sleep(2.5)  # two ticks, so per-process SM % and CPU % are measured over an interval
        yield url
    finally:
        output = stop(proc)
        assert "Traceback" not in output, output
        if os.environ.get("FANWHY_GPU_REPORT_DIR"):
            (Path(os.environ["FANWHY_GPU_REPORT_DIR"]) / "gpu-report.json").write_text(json.dumps(REPORT, indent=2))


def test_the_load_is_named_with_its_memory_and_command_line(server: str, load: subprocess.Popen) -> None:
    body = requests.get(f"{server}/api/gpu/metrics", timeout=10).json()
    assert body["backend"]["name"] == "nvidia"
    rows = [p for p in body["processes"] if p["pid"] == load.pid]
    assert rows, f"load pid {load.pid} not in {[p['pid'] for p in body['processes']]}"
    row = rows[0]
    assert "cuda_load.py" in row["command"] and SECRET not in row["command"] and "--token=****" in row["command"]
    assert row["user"] and row["name"].startswith("python") and row["visibility"] == "visible"
    apps = {int(pid): float(mib) for pid, mib in smi("compute-apps", "pid,used_memory")}
    smi_bytes = apps[load.pid] * 2**20
    assert row["gpu_memory_bytes"] == pytest.approx(smi_bytes, rel=0.05)
    REPORT["process"] = {"pid": load.pid, "command": row["command"], "sm_percent": row["sm_percent"],
                         "fanwhy_gpu_memory_mib": row["gpu_memory_bytes"] / 2**20,
                         "nvidia_smi_used_memory_mib": apps[load.pid]}


def test_utilization_power_temperature_match_nvidia_smi(server: str) -> None:
    fields = "index,name,utilization.gpu,power.draw,temperature.gpu,fan.speed"
    for _ in range(5):
        gpu = requests.get(f"{server}/api/gpu/metrics?gpu=0", timeout=10).json()["gpus"][0]
        _, name, util, power, temp, fan = smi("gpu", fields)[0]
        if gpu["utilization_percent"] and gpu["utilization_percent"] > 50:
            break
        time.sleep(1)
    assert gpu["name"] == name
    assert gpu["utilization_percent"] > 50
    assert gpu["power_w"] == pytest.approx(float(power), rel=0.15, abs=30)
    assert gpu["temperature_c"] == pytest.approx(float(temp), abs=3)
    assert gpu["throttle_reasons"] is not None
    known = {n for _, n in CLOCKS_EVENT_REASONS}
    assert all(r in known for r in gpu["throttle_reasons"])
    if fan == "[N/A]":
        assert gpu["fan_speed_percent"] is None
        assert "passively cooled" in gpu["unsupported"]["fan_speed_percent"]
    else:
        assert gpu["fan_speed_percent"] == pytest.approx(float(fan), abs=5)
    REPORT["gpu"] = {k: gpu[k] for k in ("name", "utilization_percent", "power_w", "power_limit_w", "temperature_c",
                                         "temperature_slowdown_c", "fan_speed_percent", "throttle_reasons",
                                         "clock_sm_mhz", "pstate", "energy_j")}
    REPORT["gpu"]["fan_reason"] = gpu["unsupported"].get("fan_speed_percent")
    REPORT["nvidia_smi"] = {"utilization": util, "power_w": power, "temperature_c": temp, "fan": fan}


def test_the_load_reaches_a_socket_client(server: str, load: subprocess.Popen) -> None:
    client = socketio.Client(reconnection=False)
    updates: list[dict] = []
    client.on("gpu_status_update", updates.append)
    client.connect(server, transports=["websocket"], wait_timeout=10)
    try:
        deadline = time.monotonic() + 10
        while not updates and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        client.disconnect()
    assert updates and any(p["pid"] == load.pid for p in updates[-1]["processes"])


def test_health_is_ok_and_the_collector_is_cheap(server: str) -> None:
    health = requests.get(f"{server}/api/health", timeout=10).json()
    assert health["status"] == "ok", health
    REPORT["collector_timing_ms"] = health["timing"]
