"""More than one machine: a real Prometheus scrapes two FanWhy instances; a real Redis carries Socket.IO events."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import socketio

from tests.conftest import nvidia_selection
from tests.fakes.fake_nvml import scenario
from tests.support.servers import asking, free_port, start_server, stop, wait_healthy


def wait_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


def wait_ready(url: str, timeout: float = 30.0) -> None:
    """Prometheus listens before it serves: its API answers 503 (not JSON) until /-/ready says 200."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{url}/-/ready", timeout=asking(deadline)).status_code == 200:
                return
        except (requests.ConnectionError, requests.Timeout):
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} did not become ready")


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[Any]:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("prometheus (Debian package prometheus) is not installed")
    procs: list[subprocess.Popen] = []

    def start(targets: list[str], credentials_file: str | None = None) -> str:
        port = free_port()
        config = tmp_path / "prometheus.yml"
        auth = (f"    authorization:\n      type: Bearer\n      credentials_file: {credentials_file}\n"
                if credentials_file else "")
        config.write_text("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
                          f"  - job_name: fanwhy\n{auth}    static_configs:\n"
                          f"      - targets: [{', '.join(repr(t) for t in targets)}]\n")
        proc = subprocess.Popen([binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
                                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(proc)
        wait_port(port)
        wait_ready(f"http://127.0.0.1:{port}")
        return f"http://127.0.0.1:{port}"

    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=20)


def test_a_real_prometheus_sees_two_fanwhy_nodes_and_the_fleet_view_shows_both(
        make_app: Any, serve: Any, prometheus: Any) -> None:
    busy, idle = scenario("h200x2_load"), scenario("h100_idle")
    node_a = serve(make_app(nvidia_selection(busy)))
    node_b = serve(make_app(nvidia_selection(idle)))
    targets = [node_a.url.removeprefix("http://"), node_b.url.removeprefix("http://")]
    url = prometheus(targets)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        result = requests.get(f"{url}/api/v1/query", params={"query": "fanwhy_gpu_info"}, timeout=5).json()
        if len({r["metric"]["instance"] for r in result["data"]["result"]}) == 2:
            break
        time.sleep(0.5)
    viewer = serve(make_app(nvidia_selection(scenario("h100_idle")), prometheus_url=url))
    body = requests.get(f"{viewer.url}/api/fleet", timeout=10).json()
    nodes = {n["instance"]: n for n in body["nodes"]}
    assert set(nodes) == set(targets)
    a, b = nodes[targets[0]], nodes[targets[1]]
    assert a["up"] is True and [g["name"] for g in a["gpus"]] == ["NVIDIA H200", "NVIDIA H200"]
    assert a["gpus"][1]["utilization_percent"] == 98.0
    assert b["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3" and b["backend"] == "nvidia"
    # The same ranking as /api/gpu/available, across nodes: the busy H200 is last.
    assert body["ranking"][-1] == {"instance": targets[0], "gpu": 1, "name": "NVIDIA H200",
                                   "score": body["ranking"][-1]["score"]}
    assert body["ranking"][-1]["score"] < body["ranking"][0]["score"]
    page = requests.get(f"{viewer.url}/fleet", timeout=5)
    assert page.status_code == 200 and "fleet.js" in page.text


def test_fleet_without_prometheus_says_how(client: Any, make_app: Any, fake_nvml: Any) -> None:
    response = client.get("/api/fleet")
    assert response.status_code == 404 and "FANWHY_PROMETHEUS_URL" in response.get_json()["detail"]
    app = make_app(nvidia_selection(fake_nvml), start=False, prometheus_url=f"http://127.0.0.1:{free_port()}")
    response = app.test_client().get("/api/fleet")
    assert response.status_code == 502 and response.get_json()["error"] == "Prometheus did not answer"


@pytest.fixture
def redis_url() -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server (Debian package redis-server) is not installed")
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="fanwhy-redis-")
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", workdir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_redis_carries_events_from_the_collector_process_to_a_client_of_another(redis_url: str) -> None:
    port_a, port_b = free_port(), free_port()
    collector = start_server(port_a, FANWHY_MESSAGE_QUEUE=redis_url)
    web = start_server(port_b, FANWHY_MESSAGE_QUEUE=redis_url, FANWHY_COLLECTOR="off")
    client = socketio.Client(reconnection=False)
    updates: list[dict] = []
    client.on("gpu_status_update", updates.append)
    try:
        wait_healthy(f"http://127.0.0.1:{port_a}")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if requests.get(f"http://127.0.0.1:{port_b}/api/health",
                                timeout=asking(deadline)).status_code in (200, 503):
                    break
            except (requests.ConnectionError, requests.Timeout):
                time.sleep(0.2)
        client.connect(f"http://127.0.0.1:{port_b}", transports=["websocket"], wait_timeout=10)
        deadline = time.monotonic() + 10
        while len(updates) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(updates) >= 2, "no update reached the client of the process without a collector"
        assert updates[-1]["backend"]["name"] == "simulated"
        health_b = requests.get(f"http://127.0.0.1:{port_b}/api/health", timeout=5).json()
        assert health_b["collector_running"] is False  # the events came from the other process
    finally:
        if client.connected:
            client.disconnect()
        stop(collector)
        stop(web)


def test_a_message_queue_without_the_redis_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """redis is not in requirements.txt (importing it costs every server ~6 MiB): asking for the queue
    without it names the file to install, before anything binds (one of the checks before serving)."""
    import importlib.util

    from app.cli.preflight import check_packages
    from app.collect.config import ConfigError
    from app.collect.settings import Settings

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "redis" else real(name, *a))
    with pytest.raises(ConfigError, match=r"requirements-queue\.txt"):
        check_packages(Settings(message_queue="redis://127.0.0.1:6379/0"))
    with pytest.raises(ConfigError, match=r"must be a redis:// URL"):
        check_packages(Settings(message_queue="amqp://127.0.0.1/"))
    check_packages(Settings())  # no queue, no need for redis


def test_the_grafana_dashboard_queries_metrics_fanwhy_exports(client: Any) -> None:
    import json
    import re

    dashboard = json.loads((Path(__file__).resolve().parent.parent.parent / "deploy" / "grafana" /
                            "fanwhy-dashboard.json").read_text())
    exported = set(re.findall(r"^# TYPE (\S+)", client.get("/metrics").get_data(as_text=True), re.M))
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            names = set(re.findall(r"\b(fanwhy_[a-z_]+)", target["expr"]))
            assert names and names <= exported, (panel["title"], names - exported)
    queried = {name for panel in dashboard["panels"] for target in panel["targets"]
               for name in re.findall(r"\b(fanwhy_[a-z_]+)", target["expr"])}
    assert {"fanwhy_gpu_pstate", "fanwhy_gpu_xid_errors_total", "fanwhy_process_power_watts",
            "fanwhy_gpu_ecc_errors_uncorrected", "fanwhy_gpu_mig_mode", "fanwhy_gpu_persistence_mode",
            "fanwhy_gpu_sm_active_ratio", "fanwhy_gpu_tensor_active_ratio", "fanwhy_gpu_pipe_active_ratio",
            "fanwhy_gpu_dram_active_ratio", "fanwhy_gpu_busy_kind"} <= queried


def test_a_prometheus_scrapes_a_node_by_a_name_outside_its_allowlist_with_the_token(
        make_app: Any, serve: Any, prometheus: Any, tmp_path: Path) -> None:
    """The node allows dashboard.example and loopback's names as Host (a browser must use one: DNS rebinding);
    Prometheus reaches it as 127.0.0.2:PORT, a name outside that list, with the metrics token from a file
    (credentials_file) and gets the metrics."""
    token = "scrape-8e3b1f6a2d9c4705"
    node = serve(make_app(nvidia_selection(scenario("h100_idle")), allowed_hosts=("dashboard.example",),
                          metrics_token=token), "127.0.0.2")
    target = node.url.removeprefix("http://")
    assert requests.get(f"{node.url}/metrics", timeout=5).status_code == 400  # a browser's request by that name
    # the scrape token opens /metrics only
    assert requests.get(f"{node.url}/api/health", timeout=5,
                        headers={"Authorization": f"Bearer {token}"}).status_code == 400
    (tmp_path / "token").write_text(token)
    url = prometheus([target], credentials_file=str(tmp_path / "token"))
    deadline = time.monotonic() + 30
    found: list[Any] = []
    while time.monotonic() < deadline and not found:
        found = requests.get(f"{url}/api/v1/query", params={"query": "fanwhy_gpu_info"}, timeout=5).json()[
            "data"]["result"]
        time.sleep(0.5)
    assert found and found[0]["metric"]["instance"] == target
    up = requests.get(f"{url}/api/v1/query", params={"query": "up"}, timeout=5).json()["data"]["result"]
    assert up[0]["value"][1] == "1"


def test_the_cluster_view_groups_the_busiest_pods_by_node_and_namespace(
        make_app: Any, serve: Any, prometheus: Any, monkeypatch: Any, tmp_path: Path) -> None:
    from tests.integration.test_kubernetes import app_with_a_pod

    app = app_with_a_pod(make_app, monkeypatch, tmp_path)
    node = serve(app)
    other = serve(make_app(nvidia_selection(scenario("h100_idle"))))
    targets = [node.url.removeprefix("http://"), other.url.removeprefix("http://")]
    url = prometheus(targets)
    viewer = serve(make_app(nvidia_selection(scenario("h100_idle")), prometheus_url=url))
    deadline = time.monotonic() + 30
    pods: list[Any] = []
    # the pod's memory and its SM share are two series; a scrape may land between the first sample (memory only:
    # NVML has no utilisation window yet) and the next, so wait for the row to be whole, not merely present
    while time.monotonic() < deadline and not (pods and {"sm_percent", "gpu_memory_bytes"} <= pods[0].keys()):
        pods = requests.get(f"{viewer.url}/api/fleet", timeout=10).json()["pods"]
        time.sleep(0.5)
    assert pods == [{"instance": targets[0], "namespace": "ml", "pod": "trainer-0", "sm_percent": 70.0,
                     "gpu_memory_bytes": pods[0]["gpu_memory_bytes"]}]
    assert pods[0]["gpu_memory_bytes"] > 0


@pytest.mark.parametrize("answer", [
    b'{"status": "success", "data": {"result": [{"metric": {}}]}}',  # no value
    b'{"status": "success", "data": {"result": [{"metric": {"instance": "a"}, "value": [1, "x"]}]}}',
    b'{"status": "success", "data": {}}',
    b'["not", "an", "object"]',
])
def test_a_prometheus_answer_of_another_shape_is_a_502_with_the_reason(make_app: Any, fake_nvml: Any,
                                                                         answer: bytes) -> None:
    """A proxy or another program on the Prometheus URL: the fleet view says so (502), never a 500."""
    import http.server
    import threading

    class Odd(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: Any) -> None:
            pass

    odd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Odd)
    threading.Thread(target=odd.serve_forever, daemon=True).start()
    try:
        app = make_app(nvidia_selection(fake_nvml), start=False, prometheus_url=f"http://127.0.0.1:{odd.server_port}")
        answered = app.test_client().get("/api/fleet")
    finally:
        odd.shutdown()
        odd.server_close()
    assert answered.status_code == 502, answered.get_data(as_text=True)
    assert answered.get_json()["error"] == "Prometheus did not answer"
